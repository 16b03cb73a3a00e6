/* jump_opt.c — a jump found by trajectory optimisation through the simulator, then played back.
 *
 * When it is created, the controller copies the world in its initial state and sets up an iLQR
 * (mbs/ilqr.h) on that copy; at its first period it runs it (so that making a sim, e.g. to check a
 * scenario, stays cheap, and a run resumed from a checkpoint plans the same from the same copy),
 * over `horizon` seconds of its planner's stepper (expo by default) at plan_dt,
 * the controls being every one-coordinate joint's torque within ±torque_limit. Nothing tells it
 * how to jump: no gait, no phases, no inverse kinematics. The cost asks for
 *   - the base `height` above its start at apex_time (a residual r = z − z_apex, weight w_apex),
 *     with no vertical velocity there (r = ż, weight w_apex · plan_dt², the same scale);
 *   - the base level and over its start, the joints near the initial posture, small velocities
 *     and torques near those that hold the posture (diagonal quadratic terms), the base's height
 *     left free until the final state;
 *   - the initial posture at rest at the end (the same terms, `terminal` times, the height too).
 * Crouching, take-off, flight and landing come out of the optimiser. The solve starts from the
 * torques that hold the posture (the PD law's inverse-dynamics feed-forward at the start).
 *
 * Each controller period then plays the plan back at the simulator's own (finer) step with the
 * optimiser's feedback gains: τ = u_k + K_k δx, δx = (difference(q̄, q), v − v̄), (q̄, v̄) the plan's
 * state interpolated between its knots k and k + 1, u_k held over the knot as the plan held it.
 * From the first touch-down after a flight, and after the horizon, a joint PD (hold_kp, hold_kd)
 * with the torques that hold the posture catches the robot and keeps the initial posture: the
 * plan's landing torques, played where the real landing comes a few ms earlier or later than the
 * plan's, spin an unloaded shank past 100 rad/s (seen under another compiler's rounding), and
 * the last knot's gains are a one-step-to-go feedback, too stiff to hold.
 *
 * The summary reports the solve (iterations, cost, wall time, the plan's apex) and the tilt of
 * the base after landing, as the controller senses it (feet within 1 mm of the ground). A solve
 * that fails leaves the holding PD from the start, and the summary says why (plan_status). */
#include <math.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "control_internal.h"
#include "../spatial/spatial.h"
#include "mbs/ilqr.h"
#include "mbs/step.h"

typedef struct jump_opt_options {
    double height, apex_time, horizon, plan_dt, torque_limit, hold_kp, hold_kd;
    int iterations, feedback;
    double w_apex, w_base, w_posture, w_base_velocity, w_joint_velocity, w_torque, terminal;
    char stepper[MBS_OPTION_TEXT_LEN];
} jump_opt_options;

static const mbs_option_spec spec[] = {
    {"height", MBS_OPT_REAL, "m", 0, 2, 0, "0.1", NULL, offsetof(jump_opt_options, height),
     "how high the base should be above its start at apex_time"},
    {"apex_time", MBS_OPT_REAL, "s", 0, 10, MBS_OPT_OPEN_LO, "0.4", NULL, offsetof(jump_opt_options, apex_time),
     "when the base should reach its apex"},
    {"horizon", MBS_OPT_REAL, "s", 0, 10, MBS_OPT_OPEN_LO, "1", NULL, offsetof(jump_opt_options, horizon),
     "the optimised motion's length: take-off, flight and landing"},
    {"plan_dt", MBS_OPT_REAL, "s", 0, 1, MBS_OPT_OPEN_LO, "0.01", NULL, offsetof(jump_opt_options, plan_dt),
     "the planner's step (its stepper's dt): horizon / plan_dt knots"},
    {"torque_limit", MBS_OPT_REAL, "N m", 0, 1e6, 0, "2.7", NULL, offsetof(jump_opt_options, torque_limit),
     "every joint's torque within ±this (Solo's motors: 0.025 N m/A × 12 A × 9:1 gear ≈ 2.7 N m); 0: the URDF's efforts"},
    {"hold_kp", MBS_OPT_REAL, "N m/rad", 0, 1e6, 0, "5", NULL, offsetof(jump_opt_options, hold_kp),
     "after the horizon: the joint PD's stiffness towards the initial posture"},
    {"hold_kd", MBS_OPT_REAL, "N m s/rad", 0, 1e6, 0, "0.2", NULL, offsetof(jump_opt_options, hold_kd),
     "after the horizon: the joint PD's damping"},
    {"iterations", MBS_OPT_INT, "", 1, 10000, 0, "100", NULL, offsetof(jump_opt_options, iterations),
     "the most iLQR iterations of the solve (it stops earlier when the cost stops falling)"},
    {"feedback", MBS_OPT_INT, "", 0, 1, 0, "1", NULL, offsetof(jump_opt_options, feedback),
     "1: play back with the optimiser's gains K; 0: the torques alone (open loop)"},
    {"w_apex", MBS_OPT_REAL, "", 0, 1e12, 0, "1e5", NULL, offsetof(jump_opt_options, w_apex),
     "weight on the base's height error at apex_time (per m²)"},
    {"w_base", MBS_OPT_REAL, "", 0, 1e9, 0, "100", NULL, offsetof(jump_opt_options, w_base),
     "weight on the base's horizontal position and orientation error (per m², rad²)"},
    {"w_posture", MBS_OPT_REAL, "", 0, 1e9, 0, "1", NULL, offsetof(jump_opt_options, w_posture),
     "weight on the joints' angle error (per rad²)"},
    {"w_base_velocity", MBS_OPT_REAL, "", 0, 1e9, 0, "0.1", NULL, offsetof(jump_opt_options, w_base_velocity),
     "weight on the base's velocity (per (m/s)², (rad/s)²)"},
    {"w_joint_velocity", MBS_OPT_REAL, "", 0, 1e9, 0, "0.01", NULL, offsetof(jump_opt_options, w_joint_velocity),
     "weight on the joints' velocities (per (rad/s)²)"},
    {"w_torque", MBS_OPT_REAL, "", 0, 1e9, MBS_OPT_OPEN_LO, "0.01", NULL, offsetof(jump_opt_options, w_torque),
     "weight on the torques' departure from those that hold the posture (per (N m)²)"},
    {"terminal", MBS_OPT_REAL, "", 0, 1e6, 0, "100", NULL, offsetof(jump_opt_options, terminal),
     "the final state's weights over the running ones (the base's height included there)"},
    {"stepper", MBS_OPT_TEXT, "", 0, 0, 0, "expo", NULL, offsetof(jump_opt_options, stepper),
     "the planner's stepper (its default options), any registered scheme"},
};

typedef struct jump_opt {
    int N, nu, n, nq, nv;
    int *ctl, *qidx;        /* nu each: the joints' velocity and position coordinates */
    double *U, *K, *X;      /* the plan: N x nu torques, N blocks of nu x n gains, (N + 1) x (nq + nv) states */
    double *lo, *hi;        /* nu */
    double *uhold;          /* nu: the torques that hold the posture */
    double *qbar, *dx;      /* nq, n: scratch of the playback */
    mbs_data *d;            /* the sensing's kinematics */
    void *block;            /* the arrays above, carved from one block */
    int touching[MBS_CONTROL_MAX_CONTACTS];
    double z_apex, vz_scale, w_apex;   /* the apex residual's target (m), its velocity term's scale (s), weight */
    int k_apex;
    /* the planner, set up at creation and run at the first period */
    mbs_system *copy;
    mbs_stepper *st;
    mbs_ilqr *ilqr;
    int planned, failed;
    char why[200];
    /* the solve, for the summary */
    mbs_ilqr_stats stats;
    double wall_s, plan_apex;
    /* the playback: whether the feet left the ground, then landed, and the tilt since */
    int flown, landed;
    double landing_tilt;
} jump_opt;

static void fini(mbs_controller *c)
{
    jump_opt *w = c->impl;
    if (!w) return;
    mbs_ilqr_free(w->ilqr);
    mbs_stepper_free(w->st);
    mbs_system_free(w->copy);
    free(w->block);
    mbs_data_free(w->d);
    free(w);
    c->impl = NULL;
}

/* The apex terms (mbs_ilqr_residual_fn): at knot k_apex, the base's world height minus the target,
 * and its world vertical velocity scaled by plan_dt. A free-flyer root's q = [p, quat], v = [R ᵀṗ, ω]
 * (base frame), δq through integrate: δz = (R δp)_z, δż = (R δv)_z − (R [v_lin]× δθ)_z. */
static int apex_residuals(void *user, int k, const double *q, const double *v, double *r, double *w_, double *Jr)
{
    jump_opt *w = user;
    r[0] = r[1] = w_[0] = w_[1] = 0;
    if (k != w->k_apex) return 0;
    double R[9];
    m3_from_quat(q + 3, R);
    const double rz[3] = {R[2], R[5], R[8]};   /* row z of R (column-major) */
    r[0] = q[2] - w->z_apex;
    r[1] = w->vz_scale * (rz[0] * v[0] + rz[1] * v[1] + rz[2] * v[2]);
    w_[0] = w_[1] = w->w_apex;
    if (!Jr) return 0;
    const int nv = w->nv;
    for (int a = 0; a < 3; a++) {
        Jr[0 + 2 * (size_t)a] = rz[a];                                  /* ∂z/∂δp */
        Jr[1 + 2 * (size_t)(nv + a)] = w->vz_scale * rz[a];             /* ∂ż/∂δv_lin */
    }
    /* R ← R exp([δθ]×): ∂(R v)_z/∂δθ = rzᵀ (δθ × v) = (v × rz)·δθ */
    const double c3[3] = {v[1] * rz[2] - v[2] * rz[1], v[2] * rz[0] - v[0] * rz[2], v[0] * rz[1] - v[1] * rz[0]};
    for (int a = 0; a < 3; a++) Jr[1 + 2 * (size_t)(3 + a)] = w->vz_scale * c3[a];
    return 0;
}


/* The planner on a copy of the world in its initial state: its costs, limits and warm start. */
static int setup(mbs_controller *c, jump_opt *w, mbs_error *err)
{
    const jump_opt_options *o = c->opts;
    const int nv = w->nv, n = w->n, nu = w->nu, N = w->N;
    w->copy = mbs_system_clone(c->sys, err);
    w->st = w->copy ? mbs_stepper_new(o->stepper, w->copy, NULL, 0, err) : NULL;
    w->ilqr = w->st ? mbs_ilqr_new(w->st, N, o->plan_dt, w->ctl, nu, err) : NULL;
    mbs_ilqr *p = w->ilqr;
    double *Q = calloc(6 * (size_t)nv, sizeof(double)), *Qf = Q + 2 * nv, *R = Q + 4 * nv;   /* R: nu, then u_ref nu */
    int rc = MBS_OK;
    if (!p || !Q) { rc = err && err->code ? err->code : mbsi_fail(err, MBS_ERR_NOMEM, "out of memory"); goto out; }
    mbs_system_set_tau(w->copy, R);   /* zero: the entries not controlled */
    for (int k = 0; k < nv; k++) {
        int joint = k >= 6;
        Q[k] = joint ? o->w_posture : o->w_base;
        Q[nv + k] = joint ? o->w_joint_velocity : o->w_base_velocity;
    }
    for (int k = 0; k < n; k++) Qf[k] = o->terminal * Q[k];
    /* the height is free on the way (the apex residual sets it), held at the end; in the base
     * frame's δp, z is the third coordinate while the base is level */
    Q[2] = 0;
    Qf[2] = o->terminal * o->w_base;
    double *ff = calloc((size_t)nv, sizeof(double));
    if (!ff) { rc = mbsi_fail(err, MBS_ERR_NOMEM, "out of memory"); goto out; }
    rc = mbsi_pd_law_holding_torques(c, ff, err);
    for (int j = 0; j < nu; j++) {
        R[j] = o->w_torque;
        R[nu + j] = w->uhold[j] = fmin(fmax(ff[w->ctl[j]], w->lo[j]), w->hi[j]);
    }
    free(ff);
    if (rc != MBS_OK) goto out;
    if ((rc = mbs_ilqr_set_cost(p, Q, R, Qf, c->q0, NULL, R + nu)) != MBS_OK || (rc = mbs_ilqr_set_limits(p, w->lo, w->hi)) != MBS_OK ||
        (rc = mbs_ilqr_set_residuals(p, 2, apex_residuals, w)) != MBS_OK) {
        mbsi_fail(err, rc, "jump_opt: %s", mbs_ilqr_last_error(p)->msg);
        goto out;
    }
    double *u = mbs_ilqr_controls(p);
    for (int k = 0; k < N; k++) memcpy(u + (size_t)k * nu, R + nu, sizeof(double) * (size_t)nu);
out:
    free(Q);
    return rc;
}

/* The solve, at the first period: the plan into w->U, w->K, w->X, or w->failed and why. */
static void plan(mbs_controller *c, jump_opt *w)
{
    const jump_opt_options *o = c->opts;
    const int nv = w->nv, n = w->n, nu = w->nu, N = w->N;
    mbs_ilqr *p = w->ilqr;
    w->planned = 1;
    double t0 = mbsi_wall_seconds();
    int rc = mbs_ilqr_solve(p, o->iterations, 1e-6, &w->stats);
    w->wall_s = mbsi_wall_seconds() - t0;
    if (rc != MBS_OK) {
        w->failed = 1;
        snprintf(w->why, sizeof w->why, "failed after %d iterations: %.150s", w->stats.iterations, mbs_ilqr_last_error(p)->msg);
        return;
    }
    memcpy(w->U, mbs_ilqr_controls(p), sizeof(double) * (size_t)N * (size_t)nu);
    memcpy(w->K, mbs_ilqr_gains(p), sizeof(double) * (size_t)N * (size_t)nu * (size_t)n);
    const size_t nx = (size_t)(w->nq + nv);
    w->plan_apex = -INFINITY;
    for (int k = 0; k <= N; k++) {
        mbs_ilqr_state(p, k, w->X + k * nx, w->X + k * nx + w->nq);
        w->plan_apex = fmax(w->plan_apex, w->X[k * nx + 2]);
    }
}

/* The arrays, from the buffer carver (counting pass, then the block). */
static void layout(mbs_carver *c, jump_opt *w)
{
    const size_t N = (size_t)w->N, nv = (size_t)w->nv, n = (size_t)w->n, nx = (size_t)w->nq + nv;
    w->ctl = mbsi_carve_ints(c, nv);
    w->qidx = mbsi_carve_ints(c, nv);
    w->U = mbsi_carve_doubles(c, N * nv);
    w->K = mbsi_carve_doubles(c, N * nv * n);
    w->X = mbsi_carve_doubles(c, (N + 1) * nx);
    w->lo = mbsi_carve_doubles(c, nv);
    w->hi = mbsi_carve_doubles(c, nv);
    w->uhold = mbsi_carve_doubles(c, nv);
    w->qbar = mbsi_carve_doubles(c, nx);
    w->dx = mbsi_carve_doubles(c, n);
}

static int init(mbs_controller *c, mbs_error *err)
{
    const jump_opt_options *o = c->opts;
    const mbs_model *m = c->m;
    if (mbs_model_njoints(m) < 1 || mbs_joint_type_of(m, 0) != MBS_JOINT_FREEFLYER)
        return mbsi_fail(err, MBS_ERR_ARG, "jump_opt: the model needs a free-flyer root ([model] floating = 1)");
    if (o->apex_time >= o->horizon)
        return mbsi_fail(err, MBS_ERR_ARG, "apex_time: %g s is not before the horizon's end (%g s)", o->apex_time, o->horizon);
    jump_opt *w = calloc(1, sizeof *w);
    if (!w) return mbsi_fail(err, MBS_ERR_NOMEM, "out of memory");
    c->impl = w;
    w->nq = mbs_model_nq(m);
    w->nv = mbs_model_nv(m);
    w->n = 2 * w->nv;
    w->N = (int)ceil(o->horizon / o->plan_dt - 1e-9);
    w->k_apex = (int)floor(o->apex_time / o->plan_dt + 0.5);
    w->z_apex = c->q0[2] + o->height;
    w->vz_scale = o->plan_dt;
    w->w_apex = o->w_apex;
    mbs_carver cv = {NULL, 0};
    layout(&cv, w);
    w->block = mbsi_carver_alloc(&cv);
    w->d = mbs_data_new(m);
    if (!w->block || !w->d) { fini(c); return mbsi_fail(err, MBS_ERR_NOMEM, "out of memory"); }
    layout(&cv, w);
    for (int j = 0; j < mbs_model_njoints(m); j++) {
        int iv = mbs_joint_idx_v(m, j);
        if (mbs_joint_nv(m, j) != 1) continue;
        double effort = m->bodies[m->dof_body[iv]].effort[0];
        double lim = o->torque_limit > 0 ? o->torque_limit : effort > 0 && isfinite(effort) ? effort : INFINITY;
        w->lo[w->nu] = -lim;
        w->hi[w->nu] = lim;
        w->qidx[w->nu] = mbs_joint_idx_q(m, j);
        w->ctl[w->nu++] = iv;
    }
    if (w->nu == 0) { fini(c); return mbsi_fail(err, MBS_ERR_ARG, "jump_opt: the model has no one-coordinate joint to drive"); }
    int rc = setup(c, w, err);
    if (rc != MBS_OK) fini(c);
    return rc;
}

static void sense_landing(const mbs_controller *c, jump_opt *w, const double *q);

static void compute(mbs_controller *c, double t, const double *q, const double *v, double *tau)
{
    const jump_opt_options *o = c->opts;
    jump_opt *w = c->impl;
    const mbs_model *m = c->m;
    const int nq = w->nq, nv = w->nv, n = w->n, nu = w->nu;
    const size_t nx = (size_t)(nq + nv);
    /* the knot and where between it and the next the plan is */
    double f = t / o->plan_dt;
    int k = (int)floor(f + 1e-9);
    double s = f - k;
    if (s < 0) s = 0;
    memset(tau, 0, sizeof(double) * (size_t)nv);
    if (!w->planned) plan(c, w);
    if (k >= w->N || w->failed || w->landed) {
        /* landed, after the plan, or without one: hold the initial posture */
        for (int j = 0; j < nu; j++) {
            int iq = w->qidx[j];
            double a = w->uhold[j] + o->hold_kp * (c->q0[iq] - q[iq]) - o->hold_kd * v[w->ctl[j]];
            tau[w->ctl[j]] = fmin(fmax(a, w->lo[j]), w->hi[j]);
        }
        sense_landing(c, w, q);
        return;
    }
    const double *x0 = w->X + (size_t)k * nx, *x1 = x0 + nx;
    mbs_interpolate(m, x0, x1, s, w->qbar);
    mbs_difference(m, w->qbar, q, w->dx);
    for (int i = 0; i < nv; i++) w->dx[nv + i] = v[i] - ((1 - s) * x0[nq + i] + s * x1[nq + i]);
    const double *u = w->U + (size_t)k * nu, *K = w->K + (size_t)k * nu * n;
    for (int j = 0; j < nu; j++) {
        double a = u[j];
        if (o->feedback)
            for (int i = 0; i < n; i++) a += K[j + (size_t)nu * i] * w->dx[i];
        tau[w->ctl[j]] = fmin(fmax(a, w->lo[j]), w->hi[j]);
    }
    sense_landing(c, w, q);
}

/* The flight and the landing, as the robot senses them (a foot within 1 mm of the ground), and
 * the base's tilt since the landing. */
static void sense_landing(const mbs_controller *c, jump_opt *w, const double *q)
{
    const mbs_system *sys = c->sys;
    int nc = sys->nfeet < MBS_CONTROL_MAX_CONTACTS ? sys->nfeet : MBS_CONTROL_MAX_CONTACTS, any = 0;
    mbsi_sense_contacts(sys, w->d, q, w->touching);
    for (int i = 0; i < nc; i++) any |= w->touching[i];
    if (!any) w->flown = 1;
    else if (w->flown) w->landed = 1;
    if (w->landed) {
        double R[9];
        m3_from_quat(q + 3, R);
        double tilt = acos(fmin(1, fmax(-1, R[8]))) * (180 / MBS_PI);
        w->landing_tilt = fmax(w->landing_tilt, tilt);
    }
}

/* Checkpoints: what the playback tracks (a resumed run plans again, identically, from the copy of
 * the world its controller made at creation). */
static void state(mbs_controller *c, mbsi_state *s)
{
    jump_opt *w = c->impl;
    mbsi_state_ints(s, "jump_opt.flown", &w->flown, 1);
    mbsi_state_ints(s, "jump_opt.landed", &w->landed, 1);
    mbsi_state_doubles(s, "jump_opt.landing_tilt", &w->landing_tilt, 1);
}

/* The summary's lines: the solve and the landing. */
static int report(const mbs_controller *c, char *buf, size_t n)
{
    const jump_opt *w = c->impl;
    return snprintf(buf, n,
                    "plan_status: %s%s\nplan_iterations: %d\nplan_converged: %d\nplan_cost_start: %.6g\nplan_cost: %.6g\n"
                    "plan_wall_time_s: %.4g\nplan_apex_z_m: %.4f\nlanded: %d\nlanding_tilt_deg: %.3g\n",
                    !w->planned ? "not run" : w->failed ? "failed " : "solved", w->failed ? w->why : "", w->stats.iterations,
                    w->stats.converged, w->stats.cost_start, w->stats.cost, w->wall_s, w->plan_apex, w->landed,
                    w->landing_tilt);
}

const mbs_controller_type mbsi_controller_jump_opt = {
    {"jump_opt", "a jump found by iLQR through the simulator (expo at plan_dt by default) at the first period, played back with its gains",
     &(const mbs_option_table){"jump_opt", spec, (int)(sizeof spec / sizeof *spec), NULL, 0, sizeof(jump_opt_options)}},
    init, compute, fini, NULL, state, report,
};
