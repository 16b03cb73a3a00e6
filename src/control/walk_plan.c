/* walk_plan.c — the walk controller's references for a biped: a quasi-static plan and a whole-body
 * inverse kinematics.
 *
 * Plan. After `settle`, each of the `steps` steps is a double-support phase (`double_support`
 * seconds: the centre of mass moves over the centre of the stance foot's contact points) and
 * a single-support phase (`step_time`: the other foot swings forward, lifted by
 * `step_height`); a last double-support phase brings the COM back between the feet. The first
 * and the last step move the swing foot by `step_length`, the ones between by twice that
 * (passing the stance foot), so that the feet start and end side by side. Keeping the COM over
 * the stance foot makes the plan statically stable: slow phases keep its ZMP near the COM (a
 * weight shift must be slow enough that decelerating the COM keeps the ZMP inside the foot). The
 * plan also gives each foot's share of the weight (foot_loads), which the controller uses for the
 * feed-forward contact forces and to ramp the leg gains.
 *
 * IK. Each target configuration solves, by a few damped least-squares (Levenberg) iterations on
 * the full floating-base q warm-started from the last solution, the weighted tasks: both feet
 * 6-D (planned position, initial orientation), the COM (planned xy, initial height), the base
 * orientation (the initial one, upright) and a light posture task towards the initial joint
 * angles, which fixes the directions the other tasks leave free (arms, head, trunk). */
#include <stdlib.h>

#include "../liegroup/liegroup_internal.h"
#include "../spatial/spatial.h"
#include "control_internal.h"

/* Task weights (positions in m, angles in rad) and the Levenberg damping: the feet and the COM
 * dominate; the posture only decides what they leave free. */
#define W_FOOT 100.0
#define W_COM 10.0
#define W_BASE 0.3
#define W_POSTURE 1e-3
#define DAMPING 1e-6
#define IK_ITERATIONS 3

/* ---- the plan ---- */

/* World position of foot f's contact centre when its frame is at p (orientation R0[f]). */
static void foot_centre(const mbs_walk *w, int f, const double p[3], double c[3])
{
    m3_mulv(w->R0[f], w->centre[f], c);
    for (int k = 0; k < 3; k++) c[k] += p[k];
}

/* The share of the weight each foot carries when the COM is at com: its position along the line
 * between the feet' contact centres, so that a foot unloads gradually as the COM moves over the
 * other one. */
static void foot_loads(const mbs_walk *w, const double feet[2][3], const double com[3], double load[2])
{
    double c0[3], c1[3], d[2], dd, u;
    foot_centre(w, 0, feet[0], c0);
    foot_centre(w, 1, feet[1], c1);
    d[0] = c1[0] - c0[0];
    d[1] = c1[1] - c0[1];
    dd = d[0] * d[0] + d[1] * d[1];
    u = dd > 0 ? ((com[0] - c0[0]) * d[0] + (com[1] - c0[1]) * d[1]) / dd : 0.5;
    u = u < 0 ? 0 : u > 1 ? 1 : u;
    load[0] = 1 - u;
    load[1] = u;
}

/* The plan at time t: feet frame positions, COM target, which foot swings (-1: none) and the
 * share of the weight on each foot. */
static void plan(const mbs_walk *w, double t, double feet[2][3], double com[3], int *swing, double load[2])
{
    double tm = t - w->settle, period = w->t_ds + w->t_ss;
    int k = tm <= 0 ? 0 : (int)floor(tm / period);
    if (k > w->nsteps) k = w->nsteps;
    double s = tm <= 0 ? 0 : tm - k * period;   /* time into step k */
    memcpy(feet, w->steps[k], sizeof(double[2][3]));
    *swing = -1;
    /* the COM moves from where the previous phase left it to over the stance foot (or, after the
     * last step, to between the feet) */
    double from[3], to[3];
    int stance = k < w->nsteps ? 1 - (k % 2) : -1;   /* foot 0 swings first */
    if (k == 0) memcpy(from, w->com0, sizeof from);
    else foot_centre(w, (k - 1) % 2 == 0 ? 1 : 0, w->steps[k - 1][(k - 1) % 2 == 0 ? 1 : 0], from);
    if (stance >= 0) foot_centre(w, stance, w->steps[k][stance], to);
    else memcpy(to, w->com_final, sizeof to);
    double a = tm <= 0 ? 0 : mbsi_smooth_step(s / w->t_ds);
    for (int i = 0; i < 2; i++) com[i] = from[i] + (to[i] - from[i]) * a;
    com[2] = w->com0[2];
    foot_loads(w, feet, com, load);
    if (stance < 0 || s <= w->t_ds) return;
    /* single support: the swing foot goes from steps[k] to steps[k + 1], lifted */
    int sw = 1 - stance;
    double u = (s - w->t_ds) / w->t_ss, b = mbsi_smooth_step(u);
    for (int i = 0; i < 3; i++) feet[sw][i] = w->steps[k][sw][i] + (w->steps[k + 1][sw][i] - w->steps[k][sw][i]) * b;
    feet[sw][2] += w->height * 0.5 * (1 - cos(2 * MBS_PI * u));
    *swing = sw;
    load[sw] = 0;
    load[1 - sw] = 1;
}

/* ---- the IK ---- */

/* The COM task towards target at the placements in w->d: J_com = Σ m_b J_b(c_b) / M, with
 * J_b(c_b) the linear rows of the Jacobian at body b's centre of mass. */
static void com_task(mbs_walk *w, const double target[3])
{
    const mbs_model *m = w->m;
    size_t n6 = 6 * (size_t)w->nv;
    double com[3] = {0, 0, 0};
    memset(w->J, 0, n6 * sizeof(double));
    for (int b = 0; b < w->nbodies; b++) {
        const mbs_body *bd = &m->bodies[b];
        if (bd->mass <= 0) continue;
        double c[3] = {bd->h[0] / bd->mass, bd->h[1] / bd->mass, bd->h[2] / bd->mass}, R[9], p[3], cw[3];
        mbs_body_placement(m, w->d, b, R, p);
        m3_mulv(R, c, cw);
        for (int k = 0; k < 3; k++) com[k] += bd->mass * (p[k] + cw[k]);
        mbs_frame_jacobian(m, w->d, w->body_frame[b], c, MBS_LOCAL_WORLD_ALIGNED, w->Jb, 6);
        for (size_t i = 0; i < n6; i++) w->J[i] += bd->mass * w->Jb[i];
    }
    double e[6] = {0};
    for (int k = 0; k < 3; k++) e[k] = target[k] - com[k] / w->mass;
    for (size_t i = 0; i < n6; i++) w->J[i] /= w->mass;
    mbsi_add_task(w->H, w->nv, w->g, w->J, 6, 0, 3, w->nv, e, W_COM);
}

/* The COM of configuration q (placements into w->d). */
static void com_of(mbs_walk *w, const double *q, double com[3])
{
    mbs_center_of_mass(w->m, w->d, q, NULL, com, NULL);
}

/* One damped least-squares step of every task at q towards the plan's targets. */
static void ik_step(mbs_walk *w, double *q, double feet[2][3], const double com[3])
{
    const mbs_model *m = w->m;
    int nv = w->nv;
    memset(w->H, 0, (size_t)nv * (size_t)nv * sizeof(double));
    memset(w->g, 0, (size_t)nv * sizeof(double));
    mbs_compute_joint_jacobians(m, w->d, q);
    for (int f = 0; f < 2; f++) {
        double R[9], p[3], e[6];
        mbs_frame_placement(m, w->d, w->foot[f], R, p);
        for (int k = 0; k < 3; k++) e[k] = feet[f][k] - p[k];
        mbsi_so3_error(w->R0[f], R, 1, e + 3);   /* R0 Rᵀ: world axes, as the Jacobian's angular rows */
        mbs_frame_jacobian(m, w->d, w->foot[f], NULL, MBS_LOCAL_WORLD_ALIGNED, w->J, 6);
        mbsi_add_task(w->H, w->nv, w->g, w->J, 6, 0, 6, w->nv, e, W_FOOT);
    }
    com_task(w, com);
    /* the base's angular velocity is v[3..5] in base axes: its error Rᵀ R_target there */
    double Rb[9], Rt[9], eb[3];
    m3_from_quat(q + 3, Rb);
    m3_from_quat(w->qb0, Rt);
    mbsi_so3_error(Rb, Rt, 0, eb);
    for (int k = 0; k < 3; k++) {
        w->H[(3 + k) * (nv + 1)] += W_BASE;
        w->g[3 + k] += W_BASE * eb[k];
    }
    for (int j = 1; j < mbs_model_njoints(m); j++) {
        if (mbs_joint_nv(m, j) != 1 || mbs_joint_nq(m, j) != 1) continue;
        int iv = mbs_joint_idx_v(m, j), iq = mbs_joint_idx_q(m, j);
        w->H[iv * (nv + 1)] += W_POSTURE;
        w->g[iv] += W_POSTURE * (w->q0[iq] - q[iq]);
    }
    for (int i = 0; i < nv; i++) w->H[i * (nv + 1)] += DAMPING;
    mbsi_spd_solve(w->H, nv, w->g);
    mbs_integrate(m, q, w->g, w->qw);
    memcpy(q, w->qw, (size_t)w->nq * sizeof(double));
}

/* q (warm start in, solution out) for the plan at time t; *swing and load as plan(). */
static void ik(mbs_walk *w, double t, double *q, int *swing, double load[2])
{
    double feet[2][3], com[3];
    plan(w, t, feet, com, swing, load);
    for (int it = 0; it < IK_ITERATIONS; it++) ik_step(w, q, feet, com);
}

/* ---- init ---- */

#define carve mbsi_carve_doubles

static void layout(mbs_carver *c, mbs_walk *w, int nsteps)
{
    size_t nq = (size_t)w->nq + 1, nv = (size_t)w->nv + 1;
    w->steps = mbsi_carve(c, ((size_t)nsteps + 1) * sizeof *w->steps);
    w->q0 = carve(c, nq); w->qc = carve(c, nq); w->qn = carve(c, nq); w->qw = carve(c, nq);
    w->vprev = carve(c, nv);
    w->H = carve(c, nv * nv); w->g = carve(c, nv);
    w->J = carve(c, 6 * nv); w->Jb = carve(c, 6 * nv);
    w->body_frame = mbsi_carve_ints(c, (size_t)w->nbodies + 1);
    w->leg_of = mbsi_carve_ints(c, nv);
}

static int alloc_buffers(mbs_walk *w, int nsteps)
{
    mbs_carver c = {NULL, 0};
    layout(&c, w, nsteps);
    w->block = mbsi_carver_alloc(&c);
    w->d = mbs_data_new(w->m);
    if (!w->block || !w->d) return 1;
    layout(&c, w, nsteps);
    return 0;
}

int mbsi_walk_init(mbs_walk *w, const mbs_system *sys, const double *q0, const mbs_walk_plan_options *o, mbs_error *err)
{
    memset(w, 0, sizeof *w);
    const mbs_model *m = sys->model;
    w->m = m;
    w->nq = mbs_model_nq(m);
    w->nv = mbs_model_nv(m);
    w->nbodies = mbs_model_njoints(m);
    w->nsteps = o->steps;
    w->foot[0] = o->foot[0];
    w->foot[1] = o->foot[1];
    if (alloc_buffers(w, w->nsteps)) {
        mbsi_walk_fini(w);
        return mbsi_fail(err, MBS_ERR_NOMEM, "out of memory");
    }
    w->settle = o->settle;
    w->t_ds = o->double_support;
    w->t_ss = o->step_time;
    w->height = o->step_height;
    w->gain_cap = o->gain_cap;
    w->mass = 0;
    for (int b = 0; b < w->nbodies; b++) {
        w->mass += m->bodies[b].mass;
        w->body_frame[b] = -1;
    }
    /* a frame at each body's origin: the link's own */
    for (int f = mbs_model_nframes(m) - 1; f >= 0; f--)
        if (mbs_frame_type_of(m, f) == MBS_FRAME_BODY && mbs_frame_body(m, f) >= 0) w->body_frame[mbs_frame_body(m, f)] = f;
    for (int b = 0; b < w->nbodies; b++)
        if (w->body_frame[b] < 0 && m->bodies[b].mass > 0) {
            mbsi_walk_fini(w);
            return mbsi_fail(err, MBS_ERR_MODEL, "walk: body %d has no frame", b);
        }
    memcpy(w->q0, q0, (size_t)w->nq * sizeof(double));
    memcpy(w->qc, q0, (size_t)w->nq * sizeof(double));
    memcpy(w->qb0, q0 + 3, sizeof w->qb0);
    mbsi_feet_centres(m, w->d, sys, q0, w->foot, w->centre, w->foot_of);
    mbsi_footsteps(m, w->d, q0, w->foot, w->nsteps, o->step_length, w->R0, w->steps);
    com_of(w, q0, w->com0);
    /* the final COM keeps its initial offset from the middle of the feet' contact centres */
    double a[3], b[3], a0[3], b0[3];
    foot_centre(w, 0, w->steps[w->nsteps][0], a);
    foot_centre(w, 1, w->steps[w->nsteps][1], b);
    foot_centre(w, 0, w->steps[0][0], a0);
    foot_centre(w, 1, w->steps[0][1], b0);
    for (int k = 0; k < 3; k++) w->com_final[k] = w->com0[k] + 0.5 * (a[k] + b[k]) - 0.5 * (a0[k] + b0[k]);
    w->tn = NAN;
    w->swing = -1;
    w->load[0] = w->load[1] = 0.5;
    return MBS_OK;
}

void mbsi_walk_fini(mbs_walk *w)
{
    mbs_data_free(w->d);
    free(w->block);
    memset(w, 0, sizeof *w);
}

/* ---- gains ---- */

/* scale[j] = 1 / (M_c⁻¹)_jj at the configuration of w->d: the inertia joint j faces when the
 * feet in `fixed` (bit f for foot f) are held by the ground, with
 * M_c⁻¹ = M⁻¹ − M⁻¹Jᵀ (J M⁻¹ Jᵀ)⁻¹ J M⁻¹ the inverse inertia under those constraints (J: the
 * held feet's 6-D Jacobians). A stance ankle then faces the whole body above it, a swing ankle
 * only its foot. Minv is M⁻¹ (nv x nv); Jr (12 x nv, row r at Jr + r nv) and B (nv x 12) are
 * scratch. */
static void constrained_scales(mbs_walk *w, const double *Minv, double *Jr, double *B, int fixed, double *scale)
{
    int nv = w->nv, nc = 0;
    double A[144], Ac[144], y[12];
    for (int f = 0; f < 2; f++) {
        if (!(fixed & (1 << f))) continue;
        mbs_frame_jacobian(w->m, w->d, w->foot[f], NULL, MBS_LOCAL, w->J, 6);
        for (int r = 0; r < 6; r++, nc++)
            for (int k = 0; k < nv; k++) Jr[nc * nv + k] = w->J[r + 6 * k];
    }
    for (int a = 0; a < nc; a++)   /* B = M⁻¹ Jᵀ */
        for (int i = 0; i < nv; i++) {
            double x = 0;
            for (int k = 0; k < nv; k++) x += Minv[i + nv * k] * Jr[a * nv + k];
            B[i + nv * a] = x;
        }
    for (int a = 0; a < nc; a++)   /* A = J M⁻¹ Jᵀ */
        for (int b = 0; b < nc; b++) {
            double x = 0;
            for (int k = 0; k < nv; k++) x += Jr[a * nv + k] * B[k + nv * b];
            A[a + nc * b] = x;
        }
    for (int j = 0; j < nv; j++) {
        for (int a = 0; a < nc; a++) y[a] = B[j + nv * a];
        memcpy(Ac, A, sizeof(double) * (size_t)(nc * nc));
        if (nc) mbsi_spd_solve(Ac, nc, y);
        double dj = Minv[j * (nv + 1)];
        for (int a = 0; a < nc; a++) dj -= B[j + nv * a] * y[a];
        /* at most CAP times the free gain: a stance foot is not held rigidly but by the contact
         * springs, and a stiff sampled PD at its ankle rocks it on them */
        double lo = Minv[j * (nv + 1)] / w->gain_cap;
        scale[j] = 1 / (dj > lo ? dj : lo);
    }
}

/* leg_of[j] = the foot whose 6-D Jacobian joint j moves (the joints of its leg), -1 for the base
 * and the joints of neither leg; w->d holds the joint Jacobians. */
static void legs(mbs_walk *w)
{
    for (int j = 0; j < w->nv; j++) w->leg_of[j] = -1;
    for (int f = 0; f < 2; f++) {
        mbs_frame_jacobian(w->m, w->d, w->foot[f], NULL, MBS_LOCAL, w->J, 6);
        for (int j = 6; j < w->nv; j++)
            for (int r = 0; r < 6; r++)
                if (w->J[r + 6 * j] != 0) w->leg_of[j] = f;
    }
}

int mbsi_walk_gain_scales(mbs_walk *w, const double *q0, const double *Minv, double *scale)
{
    size_t nv = (size_t)w->nv;
    double *Jr = malloc(sizeof(double) * (12 * nv + 1)), *B = malloc(sizeof(double) * (12 * nv + 1));
    int rc = !Jr || !B ? MBS_ERR_NOMEM : MBS_OK;
    if (!rc) {
        mbs_compute_joint_jacobians(w->m, w->d, q0);
        constrained_scales(w, Minv, Jr, B, 3, scale);   /* both feet held */
        legs(w);
    }
    free(Jr); free(B);
    return rc;
}

/* ---- the references ---- */

void mbsi_walk_reference(mbs_walk *w, double t, double dt, double *q, double *v, double *a, double *weight, int ncontacts)
{
    int swing, swing_next;
    double load_next[2];
    /* the solution for t was computed one period ago as the look-ahead: reuse it */
    if (isfinite(w->tn) && fabs(w->tn - t) < 1e-9 * (1 + fabs(t))) memcpy(w->qc, w->qn, (size_t)w->nq * sizeof(double));
    ik(w, t, w->qc, &swing, w->load);
    memcpy(w->qn, w->qc, (size_t)w->nq * sizeof(double));
    ik(w, t + dt, w->qn, &swing_next, load_next);
    w->tn = t + dt;
    memcpy(q, w->qc, (size_t)w->nq * sizeof(double));
    mbs_difference(w->m, w->qc, w->qn, v);
    for (int i = 0; i < w->nv; i++) {
        v[i] /= dt;
        a[i] = (v[i] - w->vprev[i]) / dt;
        w->vprev[i] = v[i];
    }
    w->swing = swing;
    for (int i = 0; i < ncontacts; i++) weight[i] = w->foot_of[i] < 0 ? 1 : w->load[w->foot_of[i]];
}

void mbsi_walk_state(mbs_walk *w, mbsi_state *s)
{
    const size_t nq = (size_t)w->nq, nv = (size_t)w->nv;
    mbsi_state_doubles(s, "walk.qc", w->qc, nq);
    mbsi_state_doubles(s, "walk.qn", w->qn, nq);
    mbsi_state_doubles(s, "walk.qw", w->qw, nq);
    mbsi_state_doubles(s, "walk.vprev", w->vprev, nv);
    mbsi_state_doubles(s, "walk.tn", &w->tn, 1);
    mbsi_state_ints(s, "walk.swing", &w->swing, 1);
    mbsi_state_doubles(s, "walk.load", w->load, 2);
}
