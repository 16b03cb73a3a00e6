/* walk_pattern.c — the walking pattern of the task-space controller, and the footsteps and
 * foot contact centres both walk controllers plan with.
 *
 * Timeline: `settle` standing, then per step a double support (the ZMP moves to the centre of
 * the stance foot's contact points on a raised cosine) and a single support (the swing foot
 * travels to its next place), a last double support bringing the ZMP back between the feet,
 * and `rest`. Foot 0 steps first; with two steps each foot moves once by `step_length`.
 *
 * Centre of mass: the linear inverted pendulum c̈ = ω² (c − p) at the initial COM height, ω² = g/z.
 * Its divergent component ξ = c + ċ/ω obeys ξ̇ = ω (ξ − p), stable backward in time: ξ is
 * computed from the end of the plan (where it rests on the ZMP) backward, then c forward from
 * ċ = ω (ξ − c), which is stable forward. The ZMP is then exactly the reference, inside the
 * support polygon by construction, and c, ċ, c̈ are continuous. Both recursions are the exact
 * solutions over a sample of 1 ms with p (resp. ξ) held, so the pattern is accurate to O(ω dt)
 * of a slow ZMP ramp. */
#include <stdlib.h>

#include "../spatial/spatial.h"
#include "control_internal.h"

#define PATTERN_DT 1e-3   /* s: the sample of the COM trajectory, interpolated linearly */
#define PATTERN_MAX_S 3600.0 /* s: the longest walk planned (3.6 10^6 samples, 0.3 GB) */

void mbsi_feet_centres(const mbs_model *m, mbs_data *d, const mbs_system *sys, const double *q0, const int foot[2],
                       double centre[2][3], int *foot_of)
{
    double R[2][9], p[2][3];
    int count[2] = {0, 0};
    memset(centre, 0, 2 * sizeof *centre);
    mbs_forward_kinematics(m, d, q0, NULL, NULL);
    for (int f = 0; f < 2; f++) mbs_frame_placement(m, d, foot[f], R[f], p[f]);
    for (int i = 0; i < sys->nfeet; i++) {
        int fr = sys->contacts[i].frame, b = mbs_frame_body(m, fr);
        int f = b == mbs_frame_body(m, foot[0]) ? 0 : b == mbs_frame_body(m, foot[1]) ? 1 : -1;
        if (foot_of) foot_of[i] = f;
        if (f < 0) continue;
        double Rc[9], pc[3], off[3], dd[3], local[3];
        mbs_frame_placement(m, d, fr, Rc, pc);
        m3_mulv(Rc, sys->contacts[i].offset, off);
        for (int k = 0; k < 3; k++) dd[k] = pc[k] + off[k] - p[f][k];
        m3t_mulv(R[f], dd, local);
        for (int k = 0; k < 3; k++) centre[f][k] += local[k];
        count[f]++;
    }
    for (int f = 0; f < 2; f++)
        for (int k = 0; k < 3; k++) centre[f][k] /= count[f] ? count[f] : 1;
}

void mbsi_footsteps(const mbs_model *m, mbs_data *d, const double *q0, const int foot[2], int steps, double length,
                    double R0[2][9], double (*place)[2][3])
{
    double Rb[9];
    m3_from_quat(q0 + 3, Rb);
    double hx = Rb[0], hy = Rb[1], hn = hypot(hx, hy);
    hx = hn > 0 ? hx / hn : 1;
    hy = hn > 0 ? hy / hn : 0;
    mbs_forward_kinematics(m, d, q0, NULL, NULL);
    for (int f = 0; f < 2; f++) mbs_frame_placement(m, d, foot[f], R0[f], place[0][f]);
    for (int k = 0; k < steps; k++) {
        int sw = k % 2;
        double adv = (k == 0 || k == steps - 1) ? length : 2 * length;
        memcpy(place[k + 1], place[k], sizeof place[k]);
        place[k + 1][sw][0] += adv * hx;
        place[k + 1][sw][1] += adv * hy;
    }
}

double mbsi_walk_pattern_duration(const mbs_walk_pattern *w)
{
    const mbs_walk_pattern_options *o = &w->o;
    return o->settle + o->steps * (o->double_support + o->single_support) + o->double_support + o->rest;
}

/* The world position of foot f's contact centre when its frame is at p. */
static void centre_at(const mbs_walk_pattern *w, int f, const double p[3], double out[3])
{
    double t[3];
    m3_mulv(w->R0[f], w->centre[f], t);
    for (int k = 0; k < 3; k++) out[k] = p[k] + t[k];
}

/* The ZMP target of each phase j (x y): the stance foot's centre during step j, and after the
 * last step the feet' middle at the initial COM's offset from it. Computed once, so that the
 * reference at any instant costs the same however long the walk (it was a walk over the phases
 * per sample: a 48-step plan took seconds to build). */
static void zmp_targets(mbs_walk_pattern *w)
{
    const mbs_walk_pattern_options *o = &w->o;
    double mid0[2], a[3], b[3];
    centre_at(w, 0, w->place[0][0], a);
    centre_at(w, 1, w->place[0][1], b);
    for (int k = 0; k < 2; k++) mid0[k] = w->com0[k] - 0.5 * (a[k] + b[k]);
    for (int j = 0; j < o->steps; j++) {
        int stance = 1 - j % 2;
        centre_at(w, stance, w->place[j][stance], a);
        w->target[j][0] = a[0];
        w->target[j][1] = a[1];
    }
    centre_at(w, 0, w->place[o->steps][0], a);
    centre_at(w, 1, w->place[o->steps][1], b);
    for (int c = 0; c < 2; c++) w->target[o->steps][c] = 0.5 * (a[c] + b[c]) + mid0[c];
}

/* Where the ZMP reference is at time t (x y): under the initial COM while settling, then in each
 * phase a smooth shift over the double support from the previous phase's target to this one's. */
static void zmp_at(const mbs_walk_pattern *w, double t, double out[2])
{
    const mbs_walk_pattern_options *o = &w->o;
    double s = t - o->settle, period = o->double_support + o->single_support;
    if (s <= 0) { out[0] = w->com0[0]; out[1] = w->com0[1]; return; }
    int k = (int)floor(s / period);
    if (k > o->steps) k = o->steps;
    const double *from = k > 0 ? w->target[k - 1] : w->com0, *to = w->target[k];
    double h = mbsi_smooth_step((s - k * period) / o->double_support);
    for (int c = 0; c < 2; c++) out[c] = from[c] + h * (to[c] - from[c]);
}

#define carve mbsi_carve_doubles

static void layout(mbs_carver *cv, mbs_walk_pattern *w)
{
    w->place = mbsi_carve(cv, ((size_t)w->o.steps + 1) * sizeof *w->place);
    w->target = mbsi_carve(cv, ((size_t)w->o.steps + 1) * sizeof *w->target);
    size_t n = (size_t)w->n;
    w->c = carve(cv, 3 * n); w->cd = carve(cv, 3 * n); w->cdd = carve(cv, 3 * n);
    w->zmp = carve(cv, 2 * n);
}

int mbsi_walk_pattern_init(mbs_walk_pattern *w, const mbs_system *sys, const double *q0,
                           const mbs_walk_pattern_options *o, mbs_error *err)
{
    memset(w, 0, sizeof *w);
    w->o = *o;
    const mbs_model *m = sys->model;
    double T = mbsi_walk_pattern_duration(w);
    /* the COM plan is sampled over the whole timeline: bound it (a settle of 10^5 s asked for 9 GB) */
    if (!(T <= PATTERN_MAX_S))
        return mbsi_fail(err, MBS_ERR_ARG,
                         "settle + steps x (double_support + single_support) + double_support + rest = %g s: at most %g s "
                         "(the COM plan is sampled every %g s)", T, PATTERN_MAX_S, PATTERN_DT);
    w->dt = PATTERN_DT;
    w->n = (int)ceil(T / w->dt) + 2;
    mbs_carver cv = {NULL, 0};
    layout(&cv, w);
    mbs_data *d = mbs_data_new(m);
    if (!d || !mbsi_carver_alloc(&cv)) {
        mbs_data_free(d);
        free(cv.base);
        return mbsi_fail(err, MBS_ERR_NOMEM, "out of memory");
    }
    w->block = cv.base;
    layout(&cv, w);
    mbsi_feet_centres(m, d, sys, q0, o->foot, w->centre, NULL);
    mbsi_footsteps(m, d, q0, o->foot, o->steps, o->step_length, w->R0, w->place);
    mbs_center_of_mass(m, d, q0, NULL, w->com0, NULL);
    mbs_data_free(d);
    const double *g = mbs_model_gravity(m);
    double gz = sqrt(g[0] * g[0] + g[1] * g[1] + g[2] * g[2]);
    if (!(w->com0[2] > 0) || !(gz > 0))
        return mbsi_fail(err, MBS_ERR_MODEL, "walk pattern: the centre of mass must be above the ground under gravity");
    w->omega = sqrt(gz / w->com0[2]);
    int n = w->n;
    zmp_targets(w);
    for (int i = 0; i < n; i++) zmp_at(w, i * w->dt, w->zmp + 2 * i);
    /* ξ backward from rest on the last ZMP, then c forward from the initial COM */
    double e = exp(-w->omega * w->dt), *xi = w->cdd;   /* ξ kept in cdd until c̈ is written */
    for (int c = 0; c < 2; c++) {
        xi[3 * (n - 1) + c] = w->zmp[2 * (n - 1) + c];
        for (int i = n - 2; i >= 0; i--) {
            double p = w->zmp[2 * i + c];
            xi[3 * i + c] = p + (xi[3 * (i + 1) + c] - p) * e;
        }
        w->c[c] = w->com0[c];
        for (int i = 0; i + 1 < n; i++) {
            double x = 0.5 * (xi[3 * i + c] + xi[3 * (i + 1) + c]);
            w->c[3 * (i + 1) + c] = x + (w->c[3 * i + c] - x) * e;
        }
        for (int i = 0; i < n; i++) {
            w->cd[3 * i + c] = w->omega * (xi[3 * i + c] - w->c[3 * i + c]);
            w->cdd[3 * i + c] = w->omega * w->omega * (w->c[3 * i + c] - w->zmp[2 * i + c]);
        }
    }
    for (int i = 0; i < n; i++) {
        w->c[3 * i + 2] = w->com0[2];
        w->cd[3 * i + 2] = w->cdd[3 * i + 2] = 0;
    }
    return MBS_OK;
}

void mbsi_walk_pattern_fini(mbs_walk_pattern *w)
{
    free(w->block);
    memset(w, 0, sizeof *w);
}

/* A swing from a to b over u in [0, 1] of duration T: x by a quintic s(u) with zero velocity
 * and acceleration at both ends, z lifted by h·64 u³(1−u)³ (peak h at u = ½) and lowered by
 * h/5 · s(u), so that the foot reaches the ground before the swing ends, still moving down
 * gently, even when the body rides a little high: a foot that hovers at the end of a swing
 * carries no weight when the plan shifts it there. */
static void swing(const double a[3], const double b[3], double h, double u, double T, double p[3], double v[3],
                  double acc[3])
{
    double s = ((6 * u - 15) * u + 10) * u * u * u, ds = 30 * u * u * (u - 1) * (u - 1),
           dds = 60 * u * (2 * u - 1) * (u - 1);
    for (int k = 0; k < 3; k++) {
        p[k] = a[k] + s * (b[k] - a[k]);
        v[k] = ds * (b[k] - a[k]) / T;
        acc[k] = dds * (b[k] - a[k]) / (T * T);
    }
    double w = u * (1 - u), z = 64 * h * w * w * w, dw = 1 - 2 * u, sink = 0.2 * h;
    double dz = 192 * h * w * w * dw, ddz = 192 * h * (2 * w * dw * dw - 2 * w * w);
    z -= sink * s;
    dz -= sink * ds;
    ddz -= sink * dds;
    p[2] += z;
    v[2] += dz / T;
    acc[2] += ddz / (T * T);
}

void mbsi_walk_pattern_sample(const mbs_walk_pattern *w, double t, mbs_walk_sample *out)
{
    const mbs_walk_pattern_options *o = &w->o;
    double x = t / w->dt;
    int i = x <= 0 ? 0 : x >= w->n - 1 ? w->n - 2 : (int)x;
    double f = x <= 0 ? 0 : x >= w->n - 1 ? 1 : x - i;
    for (int k = 0; k < 3; k++) {
        out->com[k] = w->c[3 * i + k] + f * (w->c[3 * (i + 1) + k] - w->c[3 * i + k]);
        out->com_v[k] = w->cd[3 * i + k] + f * (w->cd[3 * (i + 1) + k] - w->cd[3 * i + k]);
        out->com_a[k] = w->cdd[3 * i + k] + f * (w->cdd[3 * (i + 1) + k] - w->cdd[3 * i + k]);
    }
    for (int k = 0; k < 2; k++) out->zmp[k] = w->zmp[2 * i + k] + f * (w->zmp[2 * (i + 1) + k] - w->zmp[2 * i + k]);
    double s = t - o->settle, period = o->double_support + o->single_support;
    int k = s <= 0 ? 0 : (int)floor(s / period);
    int done = k >= o->steps;
    if (done) k = o->steps;
    /* the shares of the weight: where the ZMP lies on the segment between the feet' centres */
    double a[3], b[3], ab2 = 0, ap = 0;
    centre_at(w, 0, w->place[k][0], a);
    centre_at(w, 1, w->place[k][1], b);
    for (int c = 0; c < 2; c++) {
        ab2 += (b[c] - a[c]) * (b[c] - a[c]);
        ap += (out->zmp[c] - a[c]) * (b[c] - a[c]);
    }
    double share = ab2 > 0 ? ap / ab2 : 0.5;
    share = share < 0 ? 0 : share > 1 ? 1 : share;
    out->load[0] = 1 - share;
    out->load[1] = share;
    for (int ft = 0; ft < 2; ft++) {
        out->stance[ft] = 1;
        memcpy(out->p[ft], w->place[k][ft], sizeof out->p[ft]);
        memset(out->v[ft], 0, sizeof out->v[ft]);
        memset(out->a[ft], 0, sizeof out->a[ft]);
    }
    if (s <= 0 || done) return;
    double u = (s - k * period - o->double_support) / o->single_support;
    if (u <= 0 || u >= 1) {
        if (u >= 1) memcpy(out->p[k % 2], w->place[k + 1][k % 2], sizeof out->p[0]);
        return;
    }
    int sw = k % 2;
    out->stance[sw] = 0;
    swing(w->place[k][sw], w->place[k + 1][sw], o->step_height, u, o->single_support, out->p[sw], out->v[sw], out->a[sw]);
}
