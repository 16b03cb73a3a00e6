/* mpc.c — receding-horizon model-predictive control through the simulator: each controller
 * period, an iLQR (mbs/ilqr.h) plans the joint torques over the next `horizon` seconds on a copy
 * of the world (the system's clone: same model, scene and state, contacts' anchors included),
 * stepped by its own stepper at plan_dt (expo by default: the large steps it stays stable at
 * with stiff contacts are what makes the horizon affordable), warm-started from the last
 * period's plan moved one knot on, and the first knot's torques are applied. The cost holds the
 * initial posture: the base's pose and the joints' angles, zero velocities, small torques;
 * the terminal state weighs `terminal` times the running one. Torque limits are the joints'
 * efforts from the URDF where it gives them (box-DDP).
 *
 * The controller period should divide plan_dt's multiple: the plan's knots are plan_dt apart,
 * and the warm start moves by one knot per period (a period shorter than plan_dt replans from a
 * plan shifted a bit too far, which the iterations correct). */
#include <math.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "control_internal.h"
#include "mbs/ilqr.h"
#include "mbs/step.h"

typedef struct mpc_options {
    double horizon, plan_dt;
    int iterations, first_iterations;
    double w_base, w_posture, w_base_velocity, w_joint_velocity, w_torque, terminal;
    char stepper[MBS_OPTION_TEXT_LEN];
    int derivatives;
} mpc_options;

static const mbs_option_spec spec[] = {
    {"horizon", MBS_OPT_REAL, "s", 0, 10, MBS_OPT_OPEN_LO, "0.3", NULL, offsetof(mpc_options, horizon),
     "how far ahead each period plans"},
    {"plan_dt", MBS_OPT_REAL, "s", 0, 1, MBS_OPT_OPEN_LO, "0.01", NULL, offsetof(mpc_options, plan_dt),
     "the planner's step (its stepper's dt): horizon / plan_dt knots; best the controller's period (solo_mpc_stand "
     "catches a 1 N·s push at 10 ms and diverges after 1.25 N·s; at 20 ms it catches the file's 0.75 N·s pushes)"},
    {"iterations", MBS_OPT_INT, "", 1, 100, 0, "1", NULL, offsetof(mpc_options, iterations),
     "iLQR iterations per controller period, from the shifted last plan"},
    {"first_iterations", MBS_OPT_INT, "", 1, 1000, 0, "20", NULL, offsetof(mpc_options, first_iterations),
     "iLQR iterations of the first period, from the torques that hold the posture"},
    {"w_base", MBS_OPT_REAL, "", 0, 1e9, 0, "100", NULL, offsetof(mpc_options, w_base),
     "weight on the base's position and orientation error (per m², rad²)"},
    {"w_posture", MBS_OPT_REAL, "", 0, 1e9, 0, "10", NULL, offsetof(mpc_options, w_posture),
     "weight on the joints' angle error (per rad²)"},
    {"w_base_velocity", MBS_OPT_REAL, "", 0, 1e9, 0, "1", NULL, offsetof(mpc_options, w_base_velocity),
     "weight on the base's velocity (per (m/s)², (rad/s)²)"},
    {"w_joint_velocity", MBS_OPT_REAL, "", 0, 1e9, 0, "0.1", NULL, offsetof(mpc_options, w_joint_velocity),
     "weight on the joints' velocities (per (rad/s)²)"},
    {"w_torque", MBS_OPT_REAL, "", 0, 1e9, MBS_OPT_OPEN_LO, "0.01", NULL, offsetof(mpc_options, w_torque),
     "weight on the joint torques' departure from those that hold the posture (per (N m)²)"},
    {"terminal", MBS_OPT_REAL, "", 0, 1e6, 0, "10", NULL, offsetof(mpc_options, terminal),
     "the terminal state's weights over the running ones"},
    {"stepper", MBS_OPT_TEXT, "", 0, 0, 0, "expo", NULL, offsetof(mpc_options, stepper),
     "the planner's stepper (its default options), any registered scheme"},
    {"derivatives", MBS_OPT_ENUM, "", 0, 0, 0, "analytical", "analytical forward central", offsetof(mpc_options, derivatives),
     "the step Jacobians of the plan: the stepper's analytical ones (forward differences where it has none or its chain "
     "rule does not reach), or forward or central differences (as MuJoCo's mjd_transitionFD), for comparison"},
};

typedef struct mpc {
    mbs_system *plan;       /* the planner's copy of the world */
    mbs_stepper *st;
    mbs_ilqr *ilqr;
    int nu, first, N, failed;
    double *uhold;          /* nu: the torques that hold the posture */
    int *ctl;               /* nu: the joints' velocity coordinates */
    double *zero;           /* nv */
    unsigned char *pbuf;    /* the planner's stepper state, for checkpoints */
    size_t psize;
    /* for the summary: solves, iterations, failed solves and the time spent solving */
    long solves, iterations, failures;
    double solve_s;
} mpc;

static void fini(mbs_controller *c)
{
    mpc *w = c->impl;
    if (!w) return;
    mbs_ilqr_free(w->ilqr);
    mbs_stepper_free(w->st);
    mbs_system_free(w->plan);
    free(w->ctl);
    free(w->zero);
    free(w->pbuf);
    free(w->uhold);
    free(w);
    c->impl = NULL;
}

static int init(mbs_controller *c, mbs_error *err)
{
    const mpc_options *o = c->opts;
    const mbs_model *m = c->m;
    const int nv = mbs_model_nv(m);
    mpc *w = calloc(1, sizeof *w);
    if (!w) return mbsi_fail(err, MBS_ERR_NOMEM, "out of memory");
    c->impl = w;
    w->first = 1;
    w->ctl = malloc(sizeof(int) * (size_t)nv);
    w->zero = calloc((size_t)nv, sizeof(double));
    double *Q = calloc(2 * (size_t)nv, sizeof(double)), *Qf = calloc(2 * (size_t)nv, sizeof(double));
    double *R = calloc(2 * (size_t)nv, sizeof(double)), *lo = calloc((size_t)nv, sizeof(double)), *hi = calloc((size_t)nv, sizeof(double));
    int rc = MBS_OK;
    if (!w->ctl || !w->zero || !Q || !Qf || !R || !lo || !hi) { rc = mbsi_fail(err, MBS_ERR_NOMEM, "out of memory"); goto out; }
    /* the controls: every one-coordinate joint; the weights per coordinate */
    for (int j = 0; j < mbs_model_njoints(m); j++) {
        int iv = mbs_joint_idx_v(m, j), n = mbs_joint_nv(m, j);
        for (int k = iv; k < iv + n; k++) {
            int joint = n == 1;
            Q[k] = joint ? o->w_posture : o->w_base;
            Q[nv + k] = joint ? o->w_joint_velocity : o->w_base_velocity;
        }
        if (n != 1) continue;
        double effort = m->bodies[m->dof_body[iv]].effort[0];
        lo[w->nu] = effort > 0 && isfinite(effort) ? -effort : -INFINITY;
        hi[w->nu] = -lo[w->nu];
        R[w->nu] = o->w_torque;
        w->ctl[w->nu++] = iv;
    }
    if (w->nu == 0) { rc = mbsi_fail(err, MBS_ERR_ARG, "mpc: the model has no one-coordinate joint to drive"); goto out; }
    for (int k = 0; k < 2 * nv; k++) Qf[k] = o->terminal * Q[k];
    w->plan = mbs_system_clone(c->sys, err);
    if (!w->plan) { rc = err ? err->code : MBS_ERR_NOMEM; goto out; }
    w->st = mbs_stepper_new(o->stepper, w->plan, NULL, 0, err);
    if (!w->st) { rc = err ? err->code : MBS_ERR_ARG; goto out; }
    int N = (int)ceil(o->horizon / o->plan_dt - 1e-9);
    if (N < 1) N = 1;
    w->N = N;
    w->ilqr = mbs_ilqr_new(w->st, N, o->plan_dt, w->ctl, w->nu, err);
    if (!w->ilqr) { rc = err ? err->code : MBS_ERR_NOMEM; goto out; }
    static const mbs_derivatives_method method[3] = {MBS_DERIVATIVES_AUTO, MBS_DERIVATIVES_FORWARD, MBS_DERIVATIVES_CENTRAL};
    mbs_ilqr_set_derivatives(w->ilqr, method[o->derivatives]);
    /* the torques that hold the posture, the stance feet carrying the base (the PD law's
     * feed-forward at q0): the torques' reference and the first plan's warm start, without which
     * the first rollout is a collapse the linearisation cannot climb out of */
    {
        double *ff = calloc((size_t)nv, sizeof(double));
        if (!ff) { rc = mbsi_fail(err, MBS_ERR_NOMEM, "out of memory"); goto out; }
        if ((rc = mbsi_pd_law_holding_torques(c, ff, err)) != MBS_OK) { free(ff); goto out; }
        for (int j = 0; j < w->nu; j++) R[nv + j] = ff[w->ctl[j]];   /* u_ref after R's nu entries */
        w->uhold = malloc(sizeof(double) * (size_t)w->nu);
        if (w->uhold)
            for (int j = 0; j < w->nu; j++) w->uhold[j] = fmin(fmax(R[nv + j], lo[j]), hi[j]);
        free(ff);
    }
    if ((rc = mbs_ilqr_set_cost(w->ilqr, Q, R, Qf, c->q0, NULL, R + nv)) != MBS_OK ||
        (rc = mbs_ilqr_set_limits(w->ilqr, lo, hi)) != MBS_OK) {
        mbsi_fail(err, rc, "mpc: %s", mbs_ilqr_last_error(w->ilqr)->msg);
        goto out;
    }
    {
        double *u = mbs_ilqr_controls(w->ilqr);
        for (int k = 0; k < N; k++)
            for (int j = 0; j < w->nu; j++) u[(size_t)k * w->nu + j] = fmin(fmax(R[nv + j], lo[j]), hi[j]);
    }
    w->psize = mbs_stepper_state_size(w->st);
    w->pbuf = malloc(w->psize ? w->psize : 1);
    if (!w->pbuf) rc = mbsi_fail(err, MBS_ERR_NOMEM, "out of memory");
out:
    free(Q); free(Qf); free(R); free(lo); free(hi);
    if (rc != MBS_OK) fini(c);
    return rc;
}

static void compute(mbs_controller *c, double t, const double *q, const double *v, double *tau)
{
    (void)t;
    const mpc_options *o = c->opts;
    mpc *w = c->impl;
    mbs_system *p = w->plan;
    /* the world as it is (the contacts' anchors from the system), at the measured state */
    mbs_system_copy_state(p, c->sys);
    memcpy(p->q, q, sizeof(double) * (size_t)p->nq);
    memcpy(p->v, v, sizeof(double) * (size_t)p->nv);
    mbs_system_set_tau(p, w->zero);
    if (!w->first) mbs_ilqr_shift(w->ilqr);
    /* a plan whose rollout no longer runs (torques that made a stepper diverge) starts again from
     * the holding torques, with the gains of the last plan that ran about its states */
    if (w->failed) {
        double *u = mbs_ilqr_controls(w->ilqr);
        for (int k = 0; k < w->N; k++) memcpy(u + (size_t)k * w->nu, w->uhold, sizeof(double) * (size_t)w->nu);
    }
    mbs_ilqr_stats ss;
    double t0 = mbsi_wall_seconds();
    int rc = mbs_ilqr_solve(w->ilqr, w->first ? o->first_iterations : o->iterations, 0, &ss);
    w->solve_s += mbsi_wall_seconds() - t0;
    w->solves++;
    w->iterations += ss.iterations;
    w->failed = rc != MBS_OK || !isfinite(ss.cost);
    w->failures += w->failed;
    w->first = 0;
    const double *u = mbs_ilqr_controls(w->ilqr);
    memset(tau, 0, sizeof(double) * (size_t)p->nv);
    for (int j = 0; j < w->nu; j++) tau[w->ctl[j]] = u[j];
}

/* Checkpoints: the plan (the next period's warm start: controls, gains, nominal states), the
 * regularisation the next solve starts from and the planner's stepper state (expo's eigenvector warm start), so that a resumed run
 * plans as the uninterrupted one. */
static void state(mbs_controller *c, mbsi_state *s)
{
    mpc *w = c->impl;
    mbsi_state_ints(s, "mpc.first", &w->first, 1);
    mbsi_state_ints(s, "mpc.failed", &w->failed, 1);
    mbsi_state_bytes(s, "mpc.solves", &w->solves, sizeof w->solves);
    mbsi_state_bytes(s, "mpc.iterations", &w->iterations, sizeof w->iterations);
    mbsi_state_bytes(s, "mpc.failures", &w->failures, sizeof w->failures);
    mbsi_state_doubles(s, "mpc.solve_s", &w->solve_s, 1);
    /* the plan, its gains and nominal states (the next period's warm start) and the
     * regularisation the next solve starts from */
    mbsi_ilqr_state(w->ilqr, s);
    if (!s->load) mbs_stepper_save(w->st, w->pbuf, w->psize, NULL);
    mbsi_state_bytes(s, "mpc.planner", w->pbuf, w->psize);
    if (s->load && !s->failed) mbs_stepper_restore(w->st, w->pbuf, w->psize, NULL);
}

/* The summary's lines: the solves, their iterations and the time they took (wall clock: a
 * resumed run counts from its start's checkpoint on). */
static int report(const mbs_controller *c, char *buf, size_t n)
{
    const mpc *w = c->impl;
    return snprintf(buf, n,
                    "plan_solves: %ld\nplan_iterations: %ld\nplan_failures: %ld\nplan_wall_time_s: %.4g\n"
                    "plan_iterations_per_s: %.4g\n",
                    w->solves, w->iterations, w->failures, w->solve_s, w->solve_s > 0 ? (double)w->iterations / w->solve_s : 0.0);
}

const mbs_controller_type mbsi_controller_mpc = {
    {"mpc", "receding-horizon iLQR through the simulator (expo at plan_dt by default), holding the initial posture",
     &(const mbs_option_table){"mpc", spec, (int)(sizeof spec / sizeof *spec), NULL, 0, sizeof(mpc_options)}},
    init, compute, fini, NULL, state, report,
};
