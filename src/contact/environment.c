/* environment.c — signed distances and penetration queries of points and spheres against planes,
 * boxes and heightfields. */
#include "../model/model_internal.h"
#include "mbs/dynamics.h"
#include "mbs/liegroup.h"
#include "../spatial/spatial.h"
#include "mbs/contact.h"
#include "contact_internal.h"

/* Signed distance of a sphere from a half-space: that of its centre less the radius. */
static double plane_gap(const mbs_plane *pl, const double c[3], double r, double n[3])
{
    memcpy(n, pl->normal, 3 * sizeof(double));
    return v3_dot(pl->normal, c) - pl->offset - r;
}

/* Signed distance of a sphere from a box: from its nearest surface point; a centre inside the box
 * leaves through the face it is closest to. n == NULL: the gap alone (the normal is asked of the
 * nearest box only). */
static double box_gap(const mbs_box *bx, const double c[3], double r, double n[3])
{
    double d[3] = {c[0] - bx->center[0], c[1] - bx->center[1], c[2] - bx->center[2]}, l[3];
    m3t_mulv(bx->R, d, l);
    int inside = 1;
    double cl[3];
    for (int k = 0; k < 3; k++) {
        /* comparisons, not fmin and fmax: those are calls into libm here */
        cl[k] = l[k] < -bx->half[k] ? -bx->half[k] : l[k] > bx->half[k] ? bx->half[k] : l[k];
        if (cl[k] != l[k]) inside = 0;
    }
    double nl[3] = {0, 0, 0}, gap;
    if (inside) {
        int best = 0;
        double g = INFINITY;
        for (int k = 0; k < 3; k++) {
            double gk = bx->half[k] - fabs(l[k]);
            if (gk < g) { g = gk; best = k; }
        }
        nl[best] = l[best] >= 0 ? 1 : -1;
        gap = -g - r;
    } else {
        double e[3] = {l[0] - cl[0], l[1] - cl[1], l[2] - cl[2]};
        double dist = sqrt(v3_dot(e, e));
        gap = dist - r;
        if (!n) return gap;
        for (int k = 0; k < 3; k++) nl[k] = e[k] / dist;
    }
    if (n) m3_mulv(bx->R, nl, n);
    return gap;
}

double mbs_heightfield_height(const mbs_heightfield *f, double x, double y, double grad[2])
{
    /* the cell under (x, y), the point clamped into the grid (outside it the edge goes on level) */
    double u = (x - f->x0) / f->dx, w = (y - f->y0) / f->dy;
    int out_x = !(u >= 0 && u <= f->nx - 1), out_y = !(w >= 0 && w <= f->ny - 1);
    u = fmin(fmax(u, 0), f->nx - 1);
    w = fmin(fmax(w, 0), f->ny - 1);
    int i = (int)u, j = (int)w;
    if (i > f->nx - 2) i = f->nx - 2;
    if (j > f->ny - 2) j = f->ny - 2;
    double a = u - i, b = w - j;
    const double *h = f->h + (size_t)f->nx * j + i;
    double h00 = h[0], h10 = h[1], h01 = h[f->nx], h11 = h[f->nx + 1], ga, gb;
    /* the triangle (00, 10, 11) below the diagonal (a >= b), else (00, 01, 11) */
    if (a >= b) { ga = h10 - h00; gb = h11 - h10; }
    else { ga = h11 - h01; gb = h01 - h00; }
    if (grad) {
        grad[0] = out_x ? 0 : ga / f->dx;
        grad[1] = out_y ? 0 : gb / f->dy;
    }
    return h00 + a * ga + b * gb;
}

/* The surface's slope (∂h/∂x, ∂h/∂y) at grid point (i, j) for the normals: central differences of
 * the heights, and no slope across the rectangle's border at its points (outside, the surface goes
 * on level away from it), so that the normals meet the level outside without a jump. */
static void vertex_slope(const mbs_heightfield *f, int i, int j, double g[2])
{
    const double *h = f->h + (size_t)f->nx * j;
    g[0] = i > 0 && i < f->nx - 1 ? (h[i + 1] - h[i - 1]) / (2 * f->dx) : 0;
    g[1] = j > 0 && j < f->ny - 1 ? (h[i + f->nx] - h[i - f->nx]) / (2 * f->dy) : 0;
}

/* Signed distance of a sphere from heightfield f: (c_z − h(c_x, c_y)) n_z − r, h the exact surface
 * (two triangles per cell) under the centre and n its normal smoothed (Phong's): the slopes of the
 * triangle's three grid points interpolated at the centre. On a plane it is the plane's distance,
 * exactly; across a crease it changes continuously, where the triangle's own normal would make a
 * sphere's distance jump by r (1 − cos of the crease's angle) as its centre crossed the edge (2 mm
 * for Robosimian's 12 cm feet on ±2 cm terrain: nmdp's Newton projection failed on that jump). Near a
 * crease it errs by about the gap times the angle between the smoothed and the true normal. O(1):
 * one cell and its neighbours' heights are read. */
static double heightfield_gap(const mbs_heightfield *f, const double c[3], double r, double n[3])
{
    double u = (c[0] - f->x0) / f->dx, w = (c[1] - f->y0) / f->dy;
    u = fmin(fmax(u, 0), f->nx - 1);
    w = fmin(fmax(w, 0), f->ny - 1);
    int i = (int)u, j = (int)w;
    if (i > f->nx - 2) i = f->nx - 2;
    if (j > f->ny - 2) j = f->ny - 2;
    double a = u - i, b = w - j, g00[2], g11[2], gt[2], z = mbs_heightfield_height(f, c[0], c[1], NULL);
    vertex_slope(f, i, j, g00);
    vertex_slope(f, i + 1, j + 1, g11);
    /* barycentric weights on the triangle (00, 10, 11) below the diagonal (a >= b), else (00, 01, 11) */
    double w00 = a >= b ? 1 - a : 1 - b, wt = a >= b ? a - b : b - a, w11 = a >= b ? b : a;
    if (a >= b) vertex_slope(f, i + 1, j, gt);
    else vertex_slope(f, i, j + 1, gt);
    double sx = w00 * g00[0] + wt * gt[0] + w11 * g11[0], sy = w00 * g00[1] + wt * gt[1] + w11 * g11[1];
    double l = sqrt(1 + sx * sx + sy * sy);
    n[0] = -sx / l;
    n[1] = -sy / l;
    n[2] = 1 / l;
    return (c[2] - z) / l - r;
}

int mbsi_environment_nsolids(const mbs_environment *env) { return env->nplanes + env->nboxes + env->nheightfields; }

/* The nearest solid of env to a sphere: every solid, or with boxes_only the boxes alone (a capsule's
 * inner spheres: against a plane or a heightfield's triangle a segment's deepest point is one of its
 * ends, which its end spheres meet; only a box's edges and corners reach between them). */
static int nearest(const mbs_environment *env, const double center[3], double radius, double *gap, double normal[3],
                   int *solid, int boxes_only)
{
    double best = INFINITY, nn[3], g;
    int any = 0, which = -1, nearest_box = -1;
    for (int i = 0; i < (boxes_only ? 0 : env->nplanes); i++)
        if ((g = plane_gap(&env->planes[i], center, radius, nn)) < best) {
            best = g; any = 1; which = i;
            memcpy(normal, nn, sizeof nn);
        }
    for (int i = 0; i < env->nboxes; i++) {
        /* a box lies within |half| of its centre, so its gap is at least |c − centre| − |half| − r
         * (inside it too): a box whose bound is no nearer than the best so far cannot win and is
         * skipped for the price of a distance; the others' gaps are taken without their normals,
         * which only the nearest's needs */
        const mbs_box *bx = &env->boxes[i];
        if (best < INFINITY) {
            const double *h = bx->half;
            double d0 = center[0] - bx->center[0], d1 = center[1] - bx->center[1], d2 = center[2] - bx->center[2];
            double lim = best + radius + sqrt(h[0] * h[0] + h[1] * h[1] + h[2] * h[2]);
            if (lim <= 0 || d0 * d0 + d1 * d1 + d2 * d2 >= lim * lim) continue;
        }
        if ((g = box_gap(bx, center, radius, NULL)) < best) {
            best = g; any = 1; which = env->nplanes + i;
            nearest_box = i;
        }
    }
    if (nearest_box >= 0) box_gap(&env->boxes[nearest_box], center, radius, normal);
    for (int i = 0; i < (boxes_only ? 0 : env->nheightfields); i++)
        if ((g = heightfield_gap(&env->heightfields[i], center, radius, nn)) < best) {
            best = g; any = 1; which = env->nplanes + env->nboxes + i;
            memcpy(normal, nn, sizeof nn);
        }
    *gap = best;
    if (solid) *solid = which;
    return any;
}

int mbsi_environment_nearest(const mbs_environment *env, const double center[3], double radius, double *gap,
                             double normal[3], int *solid)
{
    return nearest(env, center, radius, gap, normal, solid, 0);
}

int mbsi_contact_nearest(const mbs_environment *env, const mbs_contact *c, const double center[3], double radius,
                         double *gap, double normal[3], int *solid)
{
    if (c->off) return 0;
    return nearest(env, center, radius, gap, normal, solid, c->boxes_only);
}

const mbs_material *mbsi_solid_material(const mbs_environment *env, int i)
{
    if (i >= 0 && i < env->nplanes) return &env->planes[i].material;
    if (i >= env->nplanes && i < env->nplanes + env->nboxes) return &env->boxes[i - env->nplanes].material;
    if (i >= env->nplanes + env->nboxes && i < mbsi_environment_nsolids(env))
        return &env->heightfields[i - env->nplanes - env->nboxes].material;
    return NULL;
}

int mbs_environment_distance(const mbs_environment *env, const double center[3], double radius, double *gap,
                             double normal[3], const mbs_material **material)
{
    int solid, any = mbsi_environment_nearest(env, center, radius, gap, normal, &solid);
    if (any && material) *material = mbsi_solid_material(env, solid);
    return any;
}

static int penetration(const mbs_environment *env, const double center[3], double radius, double *depth,
                       double normal[3], double point[3], int *solid, int boxes_only)
{
    double gap, n[3];
    int which = -1;
    if (!nearest(env, center, radius, &gap, n, &which, boxes_only) || !(gap < 0)) return 0;
    *depth = -gap;
    memcpy(normal, n, sizeof n);
    if (solid) *solid = which;
    for (int k = 0; k < 3; k++) point[k] = center[k] - radius * normal[k];
    return 1;
}

int mbsi_environment_penetration(const mbs_environment *env, const double center[3], double radius, double *depth,
                                 double normal[3], double point[3], int *solid)
{
    return penetration(env, center, radius, depth, normal, point, solid, 0);
}

int mbsi_contact_penetration(const mbs_environment *env, const mbs_contact *c, const double center[3], double *depth,
                             double normal[3], double point[3], int *solid)
{
    if (c->off) return 0;
    return penetration(env, center, c->radius, depth, normal, point, solid, c->boxes_only);
}

int mbs_environment_query(const mbs_environment *env, const double center[3], double radius, double *depth,
                          double normal[3], double point[3], const mbs_material **material)
{
    int solid, hit = mbsi_environment_penetration(env, center, radius, depth, normal, point, &solid);
    if (hit && material) *material = mbsi_solid_material(env, solid);
    return hit;
}
