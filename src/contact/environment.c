/* environment.c — penetration queries of points and spheres against planes and boxes. */
#include "../model/model_internal.h"
#include "mbs/dynamics.h"
#include "mbs/liegroup.h"
#include "../spatial/spatial.h"
#include "mbs/contact.h"

/* Sphere against a half-space: depth = r − signed distance of the centre. */
static int plane_query(const mbs_plane *pl, const double c[3], double r, double *depth, double n[3])
{
    double dist = v3_dot(pl->normal, c) - pl->offset;
    if (dist >= r) return 0;
    *depth = r - dist;
    memcpy(n, pl->normal, 3 * sizeof(double));
    return 1;
}

/* Sphere against a box: nearest surface point of the box; a centre inside the box leaves
 * through the face it is closest to. */
static int box_query(const mbs_box *bx, const double c[3], double r, double *depth, double n[3])
{
    double d[3] = {c[0] - bx->center[0], c[1] - bx->center[1], c[2] - bx->center[2]}, l[3];
    m3t_mulv(bx->R, d, l);
    int inside = 1;
    double cl[3];
    for (int k = 0; k < 3; k++) {
        cl[k] = fmin(fmax(l[k], -bx->half[k]), bx->half[k]);
        if (cl[k] != l[k]) inside = 0;
    }
    double nl[3] = {0, 0, 0};
    if (inside) {
        int best = 0;
        double gap = INFINITY;
        for (int k = 0; k < 3; k++) {
            double g = bx->half[k] - fabs(l[k]);
            if (g < gap) { gap = g; best = k; }
        }
        nl[best] = l[best] >= 0 ? 1 : -1;
        *depth = gap + r;
    } else {
        double e[3] = {l[0] - cl[0], l[1] - cl[1], l[2] - cl[2]};
        double dist = sqrt(v3_dot(e, e));
        if (dist >= r) return 0;
        for (int k = 0; k < 3; k++) nl[k] = e[k] / dist;
        *depth = r - dist;
    }
    m3_mulv(bx->R, nl, n);
    return 1;
}

int mbs_environment_query(const mbs_environment *env, const double center[3], double radius, double *depth,
                          double normal[3], double point[3], const mbs_material **material)
{
    int hit = 0;
    double best = 0, dd, nn[3];
    for (int i = 0; i < env->nplanes; i++)
        if (plane_query(&env->planes[i], center, radius, &dd, nn) && dd > best) {
            best = dd; hit = 1;
            memcpy(normal, nn, sizeof nn);
            if (material) *material = &env->planes[i].material;
        }
    for (int i = 0; i < env->nboxes; i++)
        if (box_query(&env->boxes[i], center, radius, &dd, nn) && dd > best) {
            best = dd; hit = 1;
            memcpy(normal, nn, sizeof nn);
            if (material) *material = &env->boxes[i].material;
        }
    if (!hit) return 0;
    *depth = best;
    for (int k = 0; k < 3; k++) point[k] = center[k] - radius * normal[k];
    return 1;
}
