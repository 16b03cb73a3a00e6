/* replay.c — the replay page of a run (./sim --html): the engine's own body placements from
 * forward kinematics, contact points, forces and states, and a few series to plot, recorded at
 * the replay's frame rate into buffers allocated before the run, then written as the data of one
 * self-contained HTML page (src/sim/replay.html, which draws them with three.js and uPlot; the
 * page runs no dynamics). What a body looks like: its URDF visual boxes, cylinders and spheres;
 * a body without such shapes (meshes are not shipped, and the engine's URDFs keep none) gets
 * stand-ins: the box of its inertia (same mass and principal moments, at its centre of mass) and
 * rods from its origin to its children's joints and its contact points. */
#include <errno.h>
#include <math.h>
#include <stdio.h>
#include <stdlib.h>
#include <sys/stat.h>
#include <unistd.h>

#include "replay.h"
#include "../spatial/spatial.h"
/* after spatial.h: lapacke.h brings complex.h, whose macro I would clash with its names */
#include <lapacke.h>

enum { SERIES_BASE_Z, SERIES_BASE_X, SERIES_TILT, SERIES_KINETIC, SERIES_POTENTIAL, SERIES_TOTAL, NSERIES };

struct mbsi_replay {
    const mbs_model *m;
    mbs_data *d;
    int nb, nc, floating;
    long cap, n;           /* frames allocated, recorded */
    double *t;             /* cap */
    float *pose;           /* cap x nb x 7: p (m), quaternion x y z w */
    float *contact;        /* cap x nc x 7: point (m), force (N), state 0 free 1 sticking 2 slipping */
    double *series;        /* NSERIES x cap */
    double *normal_force;  /* cap x nc: n·f of each contact (N), 0 when free */
};

long mbsi_replay_every(double cdt, long nperiods, long max_frames)
{
    long every = (long)ceil(0.01 / cdt - 1e-9);
    if (every < 1) every = 1;
    if (max_frames < 3) max_frames = 3;
    /* the least `need` with nperiods / need + 2 <= max_frames (integer division) */
    long need = nperiods / (max_frames - 1) + 1;
    return need > every ? need : every;
}

mbsi_replay *mbsi_replay_new(const mbs_system *s, long max_frames, mbs_error *err)
{
    mbsi_replay *r = calloc(1, sizeof *r);
    if (!r) { mbsi_fail(err, MBS_ERR_NOMEM, "out of memory"); return NULL; }
    r->m = s->model;
    r->nb = mbs_model_nbodies(s->model);
    r->nc = s->ncontacts;
    r->floating = mbsi_root_kind(s->model);
    r->cap = max_frames > 0 ? max_frames : 1;
    r->d = mbs_data_new(s->model);
    r->t = malloc((size_t)r->cap * sizeof *r->t);
    r->pose = malloc((size_t)r->cap * (size_t)r->nb * 7 * sizeof *r->pose + 1);
    r->contact = malloc((size_t)r->cap * (size_t)r->nc * 7 * sizeof *r->contact + 1);
    r->series = malloc((size_t)r->cap * NSERIES * sizeof *r->series);
    r->normal_force = malloc((size_t)r->cap * (size_t)r->nc * sizeof *r->normal_force + 1);
    if (!r->d || !r->t || !r->pose || !r->contact || !r->series || !r->normal_force) {
        mbsi_replay_free(r);
        mbsi_fail(err, MBS_ERR_NOMEM, "out of memory for %ld replay frames", max_frames);
        return NULL;
    }
    return r;
}

void mbsi_replay_free(mbsi_replay *r)
{
    if (!r) return;
    mbs_data_free(r->d);
    free(r->t);
    free(r->pose);
    free(r->contact);
    free(r->series);
    free(r->normal_force);
    free(r);
}

void mbsi_replay_record(mbsi_replay *r, const mbs_system *s, double t)
{
    if (r->n >= r->cap) return;
    long k = r->n++;
    r->t[k] = t;
    mbs_forward_kinematics(r->m, r->d, s->q, NULL, NULL);
    float *pose = r->pose + (size_t)k * (size_t)r->nb * 7;
    for (int b = 0; b < r->nb; b++) {
        double R[9], p[3], qt[4];
        mbs_body_placement(r->m, r->d, b, R, p);
        m3_to_quat(R, qt);
        for (int i = 0; i < 3; i++) pose[7 * b + i] = (float)p[i];
        for (int i = 0; i < 4; i++) pose[7 * b + 3 + i] = (float)qt[i];
    }
    float *c = r->contact + (size_t)k * (size_t)r->nc * 7;
    for (int i = 0; i < r->nc; i++) {
        mbs_contact_info ci;
        mbs_system_contact(s, i, &ci);
        for (int j = 0; j < 3; j++) {
            c[7 * i + j] = (float)ci.position[j];
            c[7 * i + 3 + j] = ci.active ? (float)ci.force[j] : 0.0f;
        }
        c[7 * i + 6] = (float)(ci.active ? (ci.slipping ? 2 : 1) : 0);
        r->normal_force[(size_t)k * (size_t)r->nc + (size_t)i] =
            ci.active ? ci.force[0] * ci.normal[0] + ci.force[1] * ci.normal[1] + ci.force[2] * ci.normal[2] : 0;
    }
    double *sr = r->series;
    double p[3] = {0, 0, 0}, tilt = 0;
    if (mbsi_base_pose(r->floating, s->q, p, NULL)) tilt = mbsi_base_tilt_deg(r->floating, s->q);
    double base_z = p[2], base_x = p[0];
    sr[SERIES_BASE_Z * r->cap + k] = base_z;
    sr[SERIES_BASE_X * r->cap + k] = base_x;
    sr[SERIES_TILT * r->cap + k] = tilt;
    sr[SERIES_KINETIC * r->cap + k] = mbs_kinetic_energy(r->m, r->d, s->q, s->v);
    sr[SERIES_POTENTIAL * r->cap + k] = mbs_potential_energy(r->m, r->d, s->q);
    sr[SERIES_TOTAL * r->cap + k] = sr[SERIES_KINETIC * r->cap + k] + sr[SERIES_POTENTIAL * r->cap + k];
}

/* ---- the page's data ---- */

/* A JSON string: quotes, backslashes and control characters escaped, and '<' as \u003c so that
 * no name can close the <script> element the data sits in. */
static void json_string(FILE *f, const char *s)
{
    fputc('"', f);
    for (const unsigned char *p = (const unsigned char *)s; *p; p++) {
        if (*p == '"' || *p == '\\') fprintf(f, "\\%c", *p);
        else if (*p < 0x20 || *p == '<' || *p == '>' || *p == '&') fprintf(f, "\\u%04x", *p);
        else fputc(*p, f);
    }
    fputc('"', f);
}

static void json_numbers(FILE *f, const double *x, int n)
{
    fputc('[', f);
    for (int i = 0; i < n; i++) fprintf(f, i ? ",%.6g" : "%.6g", x[i]);
    fputc(']', f);
}

/* A shape for the page: type, size, placement in the body (p and a quaternion), colour. */
static void json_shape(FILE *f, int *first, const char *type, const double size[3], const double R[9],
                       const double p[3], const double rgba[4], int standin)
{
    double qt[4];
    m3_to_quat(R, qt);
    fprintf(f, "%s{\"type\":\"%s\",\"size\":", *first ? "" : ",", type);
    json_numbers(f, size, 3);
    fputs(",\"p\":", f);
    json_numbers(f, p, 3);
    fputs(",\"q\":", f);
    json_numbers(f, qt, 4);
    fputs(",\"rgba\":", f);
    json_numbers(f, rgba, 4);
    fprintf(f, ",\"standin\":%d}", standin);
    *first = 0;
}

/* A rod (cylinder) from a to b in the body frame, when they are apart. */
static void json_rod(FILE *f, int *first, const double a[3], const double b[3], const double rgba[4])
{
    double d[3] = {b[0] - a[0], b[1] - a[1], b[2] - a[2]};
    double len = sqrt(d[0] * d[0] + d[1] * d[1] + d[2] * d[2]);
    if (len < 1e-4) return;
    /* the cylinder's axis is its local z: a rotation taking z to d */
    double z[3] = {d[0] / len, d[1] / len, d[2] / len}, x[3], y[3];
    double ref[3] = {1, 0, 0};
    if (fabs(z[0]) > 0.9) { ref[0] = 0; ref[1] = 1; }
    v3_cross(ref, z, y);
    double ny = sqrt(y[0] * y[0] + y[1] * y[1] + y[2] * y[2]);
    for (int i = 0; i < 3; i++) y[i] /= ny;
    v3_cross(y, z, x);
    double R[9] = {x[0], x[1], x[2], y[0], y[1], y[2], z[0], z[1], z[2]};
    double p[3] = {0.5 * (a[0] + b[0]), 0.5 * (a[1] + b[1]), 0.5 * (a[2] + b[2])};
    double r = 0.06 * len;
    r = r < 0.004 ? 0.004 : r > 0.02 ? 0.02 : r;
    double size[3] = {r, len, 0};
    json_shape(f, first, "cylinder", size, R, p, rgba, 1);
}

/* The box of body b's inertia: the uniform box of the same mass and principal moments about its
 * centre of mass, sides a_i = sqrt(6 (I_j + I_k − I_i) / m). */
static void json_inertia_box(FILE *f, int *first, const mbs_model *m, int b, const double rgba[4])
{
    double mass, com[3], Ic[9], w[3];
    mbs_body_inertia(m, b, &mass, com, Ic);
    if (!(mass > 0)) return;
    if (LAPACKE_dsyev(LAPACK_COL_MAJOR, 'V', 'U', 3, Ic, 3, w) != 0) return;
    double size[3];
    for (int i = 0; i < 3; i++) {
        double s2 = 6 * (w[(i + 1) % 3] + w[(i + 2) % 3] - w[i]) / mass;
        size[i] = s2 > 1e-6 ? sqrt(s2) : 1e-3;
    }
    /* eigenvectors as columns: a rotation when its determinant is +1 */
    double det = Ic[0] * (Ic[4] * Ic[8] - Ic[5] * Ic[7]) - Ic[3] * (Ic[1] * Ic[8] - Ic[2] * Ic[7]) +
                 Ic[6] * (Ic[1] * Ic[5] - Ic[2] * Ic[4]);
    if (det < 0)
        for (int i = 0; i < 3; i++) Ic[6 + i] = -Ic[6 + i];
    json_shape(f, first, "box", size, Ic, com, rgba, 1);
}

static const char *const shape_names[] = {"box", "cylinder", "sphere", "mesh"};

/* Body b's shapes: its URDF primitives, or stand-ins when it has none (meshes only, or nothing). */
static void json_body(FILE *f, const mbs_model *m, const mbs_system *s, int b)
{
    static const double palette[][4] = {{0.30, 0.45, 0.70, 1}, {0.85, 0.55, 0.20, 1}, {0.35, 0.65, 0.40, 1},
                                        {0.65, 0.35, 0.60, 1}, {0.55, 0.55, 0.55, 1}};
    const double *rgba = palette[b == 0 ? 0 : 1 + b % 4];
    fputs("{\"name\":", f);
    json_string(f, mbs_body_name(m, b));
    fputs(",\"shapes\":[", f);
    int first = 1, primitives = 0;
    for (int i = 0; i < mbs_model_nvisuals(m); i++) {
        const mbs_visual *v = mbs_model_visual(m, i);
        if (v->body != b || v->type == MBS_SHAPE_MESH) continue;
        double size[3] = {v->size[0], v->size[1], v->size[2]};
        json_shape(f, &first, shape_names[v->type], size, v->R, v->p, v->rgba[3] > 0 ? v->rgba : rgba, 0);
        primitives++;
    }
    if (!primitives) {
        json_inertia_box(f, &first, m, b, rgba);
        static const double zero[3] = {0, 0, 0};
        for (int c = 0; c < m->nbodies; c++)
            if (m->bodies[c].parent == b) json_rod(f, &first, zero, m->bodies[c].pt, rgba);
        for (int i = 0; i < s->ncontacts; i++) {
            const mbs_contact *ct = &s->contacts[i];
            int fb = mbs_frame_body(m, ct->frame);
            if (fb != b) continue;
            double R[9], p[3], at[3];
            mbs_frame_local_placement(m, ct->frame, R, p);
            m3_mulv(R, ct->offset, at);
            for (int k = 0; k < 3; k++) at[k] += p[k];
            json_rod(f, &first, zero, at, rgba);
        }
    }
    fputs("]}", f);
}

/* One series: its name, unit, plot and values x[0], x[stride] ... (n of them). */
static void json_series(FILE *f, const char *name, const char *unit, const char *plot, const double *x, long n,
                        long stride, int first)
{
    fprintf(f, "%s{\"name\":", first ? "" : ",");
    json_string(f, name);
    fprintf(f, ",\"unit\":\"%s\",\"plot\":\"%s\",\"values\":[", unit, plot);
    for (long k = 0; k < n; k++) fprintf(f, k ? ",%.6g" : "%.6g", x[k * stride]);
    fputs("]}", f);
}

static void json_data(FILE *f, const mbsi_replay *r, const mbs_scenario *sc, const mbs_system *s, const char *summary,
                      double interval, double unthinned)
{
    const mbs_model *m = r->m;
    fputs("{\"scenario\":", f);
    json_string(f, sc->path);
    fputs(",\"model\":", f);
    json_string(f, mbs_model_name(m));
    fputs(",\"stepper\":", f);
    json_string(f, sc->stepper);
    fputs(",\"controller\":", f);
    json_string(f, sc->controller);
    fprintf(f, ",\"dt\":%.9g,\"controller_dt\":%.9g,\"duration\":%.9g,\"mass\":%.6g,\"gravity\":", sc->dt,
            sc->controller_dt, sc->duration, mbs_model_mass(m));
    json_numbers(f, mbs_model_gravity(m), 3);
    fputs(",\"summary\":", f);
    json_string(f, summary ? summary : "");
    fprintf(f, ",\"frame_interval\":%.9g", interval);
    if (interval > unthinned) {
        char note[256];
        snprintf(note, sizeof note,
                 "A long run: one frame every %.6g s of simulated time, not every %.6g s, so that the page holds "
                 "at most %d frames.", interval, unthinned, MBS_REPLAY_MAX_FRAMES);
        fputs(",\"note\":", f);
        json_string(f, note);
    }
    fputs(",\"bodies\":[", f);
    for (int b = 0; b < r->nb; b++) {
        if (b) fputc(',', f);
        json_body(f, m, s, b);
    }
    fputs("],\"planes\":[", f);
    const mbs_environment *env = mbs_system_environment(s);
    for (int i = 0; i < env->nplanes; i++) {
        fputs(i ? ",{\"n\":" : "{\"n\":", f);
        json_numbers(f, env->planes[i].normal, 3);
        fprintf(f, ",\"d\":%.9g}", env->planes[i].offset);
    }
    fputs("],\"boxes\":[", f);
    for (int i = 0; i < env->nboxes; i++) {
        double qt[4], size[3];
        m3_to_quat(env->boxes[i].R, qt);
        for (int k = 0; k < 3; k++) size[k] = 2 * env->boxes[i].half[k];
        fputs(i ? ",{\"c\":" : "{\"c\":", f);
        json_numbers(f, env->boxes[i].center, 3);
        fputs(",\"q\":", f);
        json_numbers(f, qt, 4);
        fputs(",\"size\":", f);
        json_numbers(f, size, 3);
        fputc('}', f);
    }
    /* heightfields: their grids, every stride-th point so that the page keeps at most 400 x 400 */
    fputs("],\"heightfields\":[", f);
    for (int i = 0; i < env->nheightfields; i++) {
        const mbs_heightfield *hf = &env->heightfields[i];
        int sx = (hf->nx + 399) / 400, sy = (hf->ny + 399) / 400;
        int nx = (hf->nx - 1) / sx + 1, ny = (hf->ny - 1) / sy + 1;
        fprintf(f, "%s{\"nx\":%d,\"ny\":%d,\"x0\":%.9g,\"y0\":%.9g,\"dx\":%.9g,\"dy\":%.9g,\"h\":[", i ? "," : "", nx,
                ny, hf->x0, hf->y0, hf->dx * sx, hf->dy * sy);
        for (int j = 0; j < ny; j++)
            for (int k = 0; k < nx; k++)
                fprintf(f, j || k ? ",%.5g" : "%.5g", hf->h[(size_t)k * sx + (size_t)hf->nx * j * sy]);
        fputs("]}", f);
    }
    fputs("],\"contacts\":[", f);
    for (int i = 0; i < r->nc; i++) {
        fputs(i ? ",{\"name\":" : "{\"name\":", f);
        json_string(f, s->contacts[i].name);
        fprintf(f, ",\"radius\":%.6g}", s->contacts[i].radius);
    }
    fputs("],\"t\":[", f);
    for (long k = 0; k < r->n; k++) fprintf(f, k ? ",%.9g" : "%.9g", r->t[k]);
    /* placements to 0.1 mm and 1e-5 in the quaternion: enough for the eye, and a third the size */
    fputs("],\"pose\":[", f);
    for (long k = 0; k < r->n * r->nb * 7; k++) fprintf(f, k ? ",%.5g" : "%.5g", (double)r->pose[k]);
    fputs("],\"contact\":[", f);
    for (long k = 0; k < r->n * r->nc * 7; k++) fprintf(f, k ? ",%.5g" : "%.5g", (double)r->contact[k]);
    fputs("],\"series\":[", f);
    long n = r->n;
    const double *sr = r->series;
    if (r->floating) {
        /* a plot each: the distance travelled (15 m for the walker) would flatten the height's bounce */
        json_series(f, "base height", "m", "base height (m)", sr + SERIES_BASE_Z * r->cap, n, 1, 1);
        json_series(f, "base x", "m", "base x (m)", sr + SERIES_BASE_X * r->cap, n, 1, 0);
        json_series(f, "base tilt", "deg", "tilt (deg)", sr + SERIES_TILT * r->cap, n, 1, 0);
    }
    for (int i = 0; i < r->nc; i++)
        json_series(f, s->contacts[i].name, "N", "normal force (N)", r->normal_force + i, n, r->nc, !r->floating && i == 0);
    json_series(f, "kinetic", "J", "energy (J)", sr + SERIES_KINETIC * r->cap, n, 1, !r->floating && !r->nc);
    json_series(f, "potential", "J", "energy (J)", sr + SERIES_POTENTIAL * r->cap, n, 1, 0);
    json_series(f, "total", "J", "energy (J)", sr + SERIES_TOTAL * r->cap, n, 1, 0);
    fputs("]}", f);
}

int mbsi_replay_check_path(const char *path, mbs_error *err)
{
    struct stat st;
    if (stat(path, &st) == 0) {
        if (S_ISDIR(st.st_mode)) return mbsi_fail(err, MBS_ERR_IO, "cannot write the replay '%s': it is a directory", path);
        if (access(path, W_OK) != 0) return mbsi_fail(err, MBS_ERR_IO, "cannot write the replay '%s': %s", path, strerror(errno));
        return MBS_OK;
    }
    char dir[MBS_PATH_LEN];
    snprintf(dir, sizeof dir, "%s", path);
    char *slash = strrchr(dir, '/');
    if (slash) *(slash == dir ? slash + 1 : slash) = 0;
    else snprintf(dir, sizeof dir, ".");
    if (access(dir, W_OK) != 0) return mbsi_fail(err, MBS_ERR_IO, "cannot write the replay '%s': %s", path, strerror(errno));
    return MBS_OK;
}

int mbsi_replay_write(const mbsi_replay *r, const mbs_system *s, const char *path, const mbs_scenario *sc,
                      const char *summary, double interval, double unthinned, mbs_error *err)
{
    char tmp[MBS_PATH_LEN + 8];
    if ((size_t)snprintf(tmp, sizeof tmp, "%s.tmp", path) >= sizeof tmp)
        return mbsi_fail(err, MBS_ERR_ARG, "cannot write the replay '%s': path too long", path);
    FILE *f = fopen(tmp, "w");
    if (!f) return mbsi_fail(err, MBS_ERR_IO, "cannot write the replay '%s': %s", tmp, strerror(errno));
    fputs(mbsi_replay_head, f);
    json_data(f, r, sc, s, summary, interval, unthinned);
    fputs(mbsi_replay_tail, f);
    int bad = ferror(f);
    if (fclose(f) != 0) bad = 1;
    if (bad) {
        remove(tmp);
        return mbsi_fail(err, MBS_ERR_IO, "error writing the replay '%s'", path);
    }
    if (rename(tmp, path) != 0) {
        int e = errno;
        remove(tmp);
        return mbsi_fail(err, MBS_ERR_IO, "cannot rename '%s' to '%s': %s", tmp, path, strerror(e));
    }
    return MBS_OK;
}
