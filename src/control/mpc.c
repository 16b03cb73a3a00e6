/* mpc.c — receding-horizon model-predictive control through the simulator: every plan_dt, an
 * iLQR (mbs/ilqr.h) plans the joint torques over the next `horizon` seconds on a copy of the world
 * (the system's clone: same model, scene and state, contacts' anchors included), stepped by its
 * own stepper at plan_dt (expo by default: the large steps it stays stable at with stiff contacts
 * are what makes the horizon affordable), warm-started from the last plan moved one knot on. The
 * plan's first knot is applied as a policy, τ = u_0 + K_0 δx: its torques alone when the
 * controller's period is plan_dt, with the plan's feedback about its interpolated state when
 * the period is shorter (the simulator's step, say), as the jump_opt controller plays its plan.
 *
 * The cost (`gait`):
 *   - stand: the initial posture, the base's pose and the joints' angles, zero velocities, small
 *     torques; the terminal state weighs `terminal` times the running one.
 *   - trot: the trot controller's contact schedule and feet (below), the base's height and
 *     orientation held, its forward velocity tracked.
 * Torque limits are the joints' efforts from the URDF where it gives them (box-DDP).
 *
 * plan_dt should be a multiple of the controller's period: plans are made at the first period
 * from plan_dt after the last. */
#include <math.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "control_internal.h"
#include "mbs/dynamics.h"
#include "mbs/ilqr.h"
#include "mbs/step.h"

typedef struct mpc_options {
    double horizon, plan_dt;
    int iterations, first_iterations;
    double w_base, w_posture, w_base_velocity, w_joint_velocity, w_torque, terminal;
    char stepper[MBS_OPTION_TEXT_LEN];
    int derivatives;
    int gait;
    mbs_trot_schedule trot;
    double w_unload, w_stance, unload_until, w_foot, sink, off_until;
    int contacts;
} mpc_options;

static const mbs_option_spec spec[] = {
    {"horizon", MBS_OPT_REAL, "s", 0, 10, MBS_OPT_OPEN_LO, "0.3", NULL, offsetof(mpc_options, horizon),
     "how far ahead each period plans"},
    {"plan_dt", MBS_OPT_REAL, "s", 0, 1, MBS_OPT_OPEN_LO, "0.01", NULL, offsetof(mpc_options, plan_dt),
     "the planner's step (its stepper's dt): horizon / plan_dt knots, a plan every plan_dt (a multiple of the "
     "controller's period; between plans the first knot's feedback) (solo_mpc_stand "
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
    {"gait", MBS_OPT_ENUM, "", 0, 0, 0, "stand", "stand trot", offsetof(mpc_options, gait),
     "stand: hold the initial posture; trot: the trot controller's contact schedule and feet (trot.c) as costs: the "
     "joints track the angles that put the feet where the schedule has them, the feet its heights, the base the "
     "velocity; a swinging foot's contact off in the plan (contacts). The schedule's keys are the trot controller's: "
     "settle, period, velocity, step_height, ramp"},
    {"w_stance", MBS_OPT_REAL, "", 0, 1e9, 0, "10", NULL, offsetof(mpc_options, w_stance),
     "trot: weight on a stance leg's joint-angle error against the schedule's (per rad²); a swinging leg's is w_posture"},
    {"unload_until", MBS_OPT_REAL, "", 0, 1, 0, "0.3", NULL, offsetof(mpc_options, unload_until),
     "trot: the part of a swing (from its start, as a fraction) in which a foot's load is penalised (w_unload)"},
    {"sink", MBS_OPT_REAL, "", 0, 1, 0, "0", NULL, offsetof(mpc_options, sink),
     "trot: how far below the ground a swing ends, as a fraction of step_height (the trot controller's PD lands early "
     "with 0.2; with contacts = scheduled the plan lands the foot on time at 0)"},
    {"contacts", MBS_OPT_ENUM, "", 0, 0, 0, "scheduled", "implicit scheduled", offsetof(mpc_options, contacts),
     "trot: implicit: the planner's world is the simulator's, every foot meets the ground; scheduled: a foot's contact "
     "is off in the plan over the first off_until of its swing (mbs_system_set_contact_off), as a contact-scheduled "
     "planner models it"},
    {"off_until", MBS_OPT_REAL, "", 0, 1, 0, "0.9", NULL, offsetof(mpc_options, off_until),
     "trot, contacts = scheduled: the part of a swing (from its start, as a fraction) with the foot's contact off"},
    {"w_foot", MBS_OPT_REAL, "", 0, 1e12, 0, "1e4", NULL, offsetof(mpc_options, w_foot),
     "trot: weight on each foot's height error against the schedule's (per m²): its swing's arc, the ground in stance"},
    {"w_unload", MBS_OPT_REAL, "", 0, 1e12, 0, "0", NULL, offsetof(mpc_options, w_unload),
     "trot: weight on the load a foot due to swing still carries, as a fraction of the robot's weight (its contact "
     "spring's force k_normal · depth over m g), squared: with contacts = implicit the only gradient towards lifting a "
     "loaded foot; not needed with scheduled ones"},
};

typedef struct mpc {
    mbs_system *plan;       /* the planner's copy of the world */
    mbs_stepper *st;
    mbs_ilqr *ilqr;
    int nu, first, N, failed;
    double *uhold;          /* nu: the torques that hold the posture */
    int *ctl;               /* nu: the joints' velocity coordinates */
    double *zero;           /* nv */
    /* the trot's costs: the weights and targets set each period, the feet's diagonal pairs and
     * heights at rest, the kinematics of the feet-height residuals */
    double *Q, *Qf, *R, *qref, *vref;   /* 2nv, 2nv, 2nu (R then u_ref), nq, nv */
    int pair[MBS_CONTROL_MAX_CONTACTS], nfeet;
    mbs_leg leg[MBS_CONTROL_MAX_CONTACTS];
    double nom[MBS_CONTROL_MAX_CONTACTS][3];   /* the feet in the initial posture (base frame) */
    double z0[MBS_CONTROL_MAX_CONTACTS];       /* the contact points' world heights at rest (m) */
    double t_now, weight;   /* the plan's start (s), m g (N) */
    double t_plan;          /* when the plan in use was made (s) */
    double *xk, *qbar, *dx;  /* 2 (nq + nv), nq, 2nv: the policy between plans' scratch */
    double *lo, *hi;        /* nv each (nu used): the torque limits */
    mbs_data *d;
    double *J;              /* 6 x nv */
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
    free(w->Q);
    free(w->xk);
    free(w->J);
    mbs_data_free(w->d);
    free(w->pbuf);
    free(w->uhold);
    free(w);
    c->impl = NULL;
}

/* ---- the trot's contact schedule as costs (experimental: see docs/benchmarks.md) ----
 * The schedule and the feet are the trot controller's (mbsi_trot_foot): from `settle` on, the
 * diagonal pairs alternate every half cycle, a stance foot moving back under the base at its
 * speed, a swinging foot returning forward lifted by step_height. Each knot's residuals are the
 * leg joints' angles against those that put the feet there (the leg IK), the feet's heights
 * against the schedule's, and the load a foot starting its swing still carries; the base tracks
 * `velocity` forward (ramped over `ramp`), its position along x left free. The torques, how the
 * base shifts over the stance pair and where a foot really lands come out of the optimiser. */

/* The residuals (mbs_ilqr_residual_fn) at knot k of the plan that starts at t_now, five per leg
 * i: its 3 joints' (rows 3i..3i+2), then its foot's load (row 3nf + i) and height (row 4nf + i):
 *   - r = q_j − q̂_j(t_k), the IK's angles for the schedule's foot, weighted w_posture in swing
 *     and w_stance in stance; over δq a 1 at joint j;
 *   - over the first unload_until of a swing, r = k_normal · depth / (m g), the load the foot
 *     still carries as its contact spring's share of the weight. Without it a loaded leg has no
 *     gradient towards lifting: pressed on stiff ground its foot moves by the spring's compliance
 *     (1e-5 m/N), whatever the torques, while its load answers them at once (the base shifts
 *     onto the other pair). Over δq: −(k / m g) nᵀ J, n the surface's outward normal, J the
 *     point's world-aligned Jacobian (mbs_frame_jacobian, MBS_LOCAL_WORLD_ALIGNED);
 *   - r = z − (z_rest + the schedule's lift), the contact point's world height; over δq J's z row.
 * Nothing over δv. */
static int trot_residuals(void *user, int k, const double *q, const double *v, double *r, double *wr, double *Jr)
{
    (void)v;
    mbs_controller *c = user;
    const mpc_options *o = c->opts;
    mpc *w = c->impl;
    const mbs_model *m = c->m;
    const int nv = mbs_model_nv(m), nf = w->nfeet, nr = 5 * nf;
    const double t = w->t_now + k * o->plan_dt;
    if (Jr) {
        memset(Jr, 0, sizeof(double) * (size_t)nr * 2 * (size_t)nv);
        mbs_compute_joint_jacobians(m, w->d, q);
    } else {
        mbs_forward_kinematics(m, w->d, q, NULL, NULL);
    }
    for (int i = 0; i < nf; i++) {
        const mbs_leg *l = &w->leg[i];
        const mbs_contact *ct = &c->sys->contacts[i];
        int stance;
        double pf[3], ang[3];
        double sw = mbsi_trot_foot(&o->trot, w->nom[i], w->pair[i], t, o->sink * o->trot.step_height, pf, &stance);
        mbsi_leg_ik(l, pf, ang);
        for (int a = 0; a < 3; a++) {
            r[3 * i + a] = q[l->idx_q[a]] - ang[a];
            wr[3 * i + a] = stance ? o->w_stance : o->w_posture;
            if (Jr) Jr[3 * i + a + (size_t)nr * l->idx_v[a]] = 1;
        }
        double p[3], depth = 0, n[3] = {0, 0, 1}, pt[3];
        const mbs_material *mat = NULL;
        mbsi_contact_point_world(m, w->d, ct, NULL, p, NULL, NULL);
        int load = o->w_unload > 0 && sw >= 0 && sw < o->unload_until && mbs_environment_query(&c->sys->env, p, ct->radius, &depth, n, pt, &mat) && mat;
        double scale = load ? mat->k_normal / w->weight : 0;
        const int row = 3 * nf + i, hrow = 4 * nf + i;
        r[row] = scale * depth;
        wr[row] = load ? o->w_unload : 0;
        /* the foot's height against the schedule's, above its height at rest */
        r[hrow] = p[2] - (w->z0[i] + pf[2] - w->nom[i][2]);
        wr[hrow] = o->w_foot;
        if (!Jr) continue;
        mbs_frame_jacobian(m, w->d, ct->frame, ct->offset, MBS_LOCAL_WORLD_ALIGNED, w->J, 6);
        for (int a = 0; a < nv; a++) {
            const double *Ja = w->J + 6 * (size_t)a;
            if (load) Jr[row + (size_t)nr * a] = -scale * (n[0] * Ja[0] + n[1] * Ja[1] + n[2] * Ja[2]);
            Jr[hrow + (size_t)nr * a] = Ja[2];
        }
    }
    return 0;
}

/* contacts = scheduled (mbs_ilqr_knot_fn): at knot k each foot's contact off in the plan while
 * the schedule has it in the first off_until of its swing, on otherwise. */
static void trot_schedule_contacts(void *user, int k, mbs_system *s)
{
    mbs_controller *c = user;
    const mpc_options *o = c->opts;
    mpc *w = c->impl;
    const double t = w->t_now + k * o->plan_dt;
    for (int i = 0; i < w->nfeet; i++) {
        int stance;
        double pf[3], sw = mbsi_trot_foot(&o->trot, w->nom[i], w->pair[i], t, 0, pf, &stance);
        mbs_system_set_contact_off(s, i, sw >= 0 && sw < o->off_until);
    }
}

/* The trot's set-up: the feet, their pairs and rest heights, the kinematics' buffers; the base's
 * x position free in the cost (its velocity tracked instead). */
static int trot_init(mbs_controller *c, mpc *w, mbs_error *err)
{
    const mbs_model *m = c->m;
    if (!(mbs_model_njoints(m) > 0 && mbs_joint_type_of(m, 0) == MBS_JOINT_FREEFLYER))
        return mbsi_fail(err, MBS_ERR_ARG, "mpc: gait = trot needs a floating base");
    w->nfeet = c->sys->nfeet;
    if (w->nfeet < 1 || w->nfeet > MBS_CONTROL_MAX_CONTACTS)
        return mbsi_fail(err, MBS_ERR_ARG, "mpc: gait = trot needs the feet as contact points (1 to %d), got %d",
                         MBS_CONTROL_MAX_CONTACTS, w->nfeet);
    w->d = mbs_data_new(m);
    w->J = calloc(6 * (size_t)mbs_model_nv(m), sizeof(double));
    if (!w->d || !w->J) return mbsi_fail(err, MBS_ERR_NOMEM, "out of memory");
    for (int i = 0; i < w->nfeet; i++) {
        mbs_leg *l = &w->leg[i];
        if (mbsi_leg_init(l, m, mbs_frame_name(m, c->sys->contacts[i].frame), c->q0, err) != MBS_OK)
            return mbsi_fail(err, MBS_ERR_ARG, "mpc: gait = trot needs Solo-type legs (HAA, HFE, KFE to the foot): %s", err ? err->msg : "");
        double a[3] = {c->q0[l->idx_q[0]], c->q0[l->idx_q[1]], c->q0[l->idx_q[2]]};
        mbsi_leg_fk(l, a, w->nom[i]);
        /* diagonals as trot.c's: front-left with hind-right (x·y > 0 in the base frame) */
        w->pair[i] = w->nom[i][0] * w->nom[i][1] > 0 ? 0 : 1;
        /* the legs' joints are held by these residuals, not by Q */
        for (int j = 0; j < 3; j++) w->Q[l->idx_v[j]] = 0;
    }
    mbs_forward_kinematics(m, w->d, c->q0, NULL, NULL);
    for (int i = 0; i < w->nfeet; i++) {
        double p[3];
        mbsi_contact_point_world(m, w->d, &c->sys->contacts[i], NULL, p, NULL, NULL);
        w->z0[i] = p[2];
    }
    const double *g = mbs_model_gravity(m);
    w->weight = mbs_model_mass(m) * sqrt(g[0] * g[0] + g[1] * g[1] + g[2] * g[2]);
    if (!(w->weight > 0)) return mbsi_fail(err, MBS_ERR_ARG, "mpc: gait = trot needs a robot with mass under gravity");
    w->Q[0] = 0;
    return MBS_OK;
}

/* Each period: the base's x target where the base is (its x is free in the cost; this keeps the
 * SE(3) error's rotation-translation coupling small), the forward velocity the ramp asks for
 * mid-horizon (in the base frame, as the free-flyer's v), the weights and targets handed over. */
static void trot_targets(mbs_controller *c, mpc *w, double t, const double *q)
{
    const mpc_options *o = c->opts;
    w->t_now = t;
    w->qref[0] = q[0];
    const mbs_trot_schedule *ts = &o->trot;
    double tm = t + 0.5 * o->horizon - ts->settle;
    w->vref[0] = tm <= 0 ? 0 : ts->velocity * (ts->ramp > 0 ? fmin(1, tm / ts->ramp) : 1);
    mbs_ilqr_set_cost(w->ilqr, w->Q, w->R, w->Qf, w->qref, w->vref, w->R + mbs_model_nv(c->m));
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
    /* the cost's arrays, kept: the trot moves its targets each period */
    w->Q = calloc(7 * (size_t)nv + (size_t)m->nq, sizeof(double));
    double *Q = w->Q, *Qf = Q ? Q + 2 * nv : NULL, *R = Q ? Q + 4 * nv : NULL;
    /* the policy's scratch between plans and the torque limits */
    const int nq = mbs_model_nq(m);
    w->xk = calloc(3 * (size_t)nq + 6 * (size_t)nv, sizeof(double));
    int rc = MBS_OK;
    if (!w->ctl || !w->zero || !Q || !w->xk) { rc = mbsi_fail(err, MBS_ERR_NOMEM, "out of memory"); goto out; }
    w->qbar = w->xk + 2 * (nq + nv);
    w->dx = w->qbar + nq;
    double *lo = w->lo = w->dx + 2 * nv, *hi = w->hi = lo + nv;
    w->Qf = Qf;
    w->R = R;
    w->vref = Q + 6 * nv;
    w->qref = Q + 7 * nv;
    memcpy(w->qref, c->q0, sizeof(double) * (size_t)m->nq);
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
    if (o->gait == 1 && (rc = trot_init(c, w, err)) != MBS_OK) goto out;
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
        (rc = mbs_ilqr_set_limits(w->ilqr, lo, hi)) != MBS_OK ||
        (o->gait == 1 && (rc = mbs_ilqr_set_residuals(w->ilqr, 5 * w->nfeet, trot_residuals, c)) != MBS_OK) ||
        (o->gait == 1 && o->contacts == 1 && (rc = mbs_ilqr_set_knot_hook(w->ilqr, trot_schedule_contacts, c)) != MBS_OK)) {
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
    if (rc != MBS_OK) fini(c);
    return rc;
}

/* A plan, from the measured state: the warm start shifted (or, after a failed plan, the holding
 * torques), the iterations, the statistics. */
static void replan(mbs_controller *c, mpc *w, double t, const double *q, const double *v)
{
    const mpc_options *o = c->opts;
    mbs_system *p = w->plan;
    /* the world as it is (the contacts' anchors from the system), at the measured state */
    mbs_system_copy_state(p, c->sys);
    memcpy(p->q, q, sizeof(double) * (size_t)p->nq);
    memcpy(p->v, v, sizeof(double) * (size_t)p->nv);
    mbs_system_set_tau(p, w->zero);
    if (o->gait == 1) trot_targets(c, w, t, q);
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
    w->t_plan = t;
}

/* Each period: a new plan every plan_dt (the first period, then whenever plan_dt has passed since
 * the last), and between plans the plan's first knot as its policy, τ = u_0 + K_0 δx, δx from the
 * plan's state interpolated between knots 0 and 1 (zero at the plan's own start: a controller
 * period of plan_dt applies u_0 alone). */
static void compute(mbs_controller *c, double t, const double *q, const double *v, double *tau)
{
    const mpc_options *o = c->opts;
    mpc *w = c->impl;
    const mbs_model *m = c->m;
    const int nq = mbs_model_nq(m), nv = mbs_model_nv(m), nu = w->nu;
    if (w->first || t >= w->t_plan + o->plan_dt - 1e-9) replan(c, w, t, q, v);
    const double *u = mbs_ilqr_controls(w->ilqr), *K = mbs_ilqr_gains(w->ilqr);
    double s = (t - w->t_plan) / o->plan_dt;
    memset(tau, 0, sizeof(double) * (size_t)nv);
    if (s <= 1e-9 || w->failed) {
        for (int j = 0; j < nu; j++) tau[w->ctl[j]] = u[j];
        return;
    }
    double *q0 = w->xk, *v0 = q0 + nq, *q1 = v0 + nv, *v1 = q1 + nq, *dx = w->dx;
    mbs_ilqr_state(w->ilqr, 0, q0, v0);
    mbs_ilqr_state(w->ilqr, 1, q1, v1);
    mbs_interpolate(m, q0, q1, s, w->qbar);
    mbs_difference(m, w->qbar, q, dx);
    for (int i = 0; i < nv; i++) dx[nv + i] = v[i] - ((1 - s) * v0[i] + s * v1[i]);
    for (int j = 0; j < nu; j++) {
        double a = u[j];
        for (int i = 0; i < 2 * nv; i++) a += K[j + (size_t)nu * i] * dx[i];
        tau[w->ctl[j]] = fmin(fmax(a, w->lo[j]), w->hi[j]);
    }
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
    mbsi_state_doubles(s, "mpc.t_plan", &w->t_plan, 1);
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
    const mpc_options *o = c->opts;
    const mpc *w = c->impl;
    int len = snprintf(buf, n,
                       "plan_solves: %ld\nplan_iterations: %ld\nplan_failures: %ld\nplan_wall_time_s: %.4g\n"
                       "plan_iterations_per_s: %.4g\n",
                       w->solves, w->iterations, w->failures, w->solve_s,
                       w->solve_s > 0 ? (double)w->iterations / w->solve_s : 0.0);
    /* the trot's cycles begun by the last plan: a foot touches down once per cycle */
    if (o->gait == 1 && len >= 0 && (size_t)len < n) {
        double tm = w->t_now + o->plan_dt - o->trot.settle;
        len += snprintf(buf + len, n - (size_t)len, "schedule_cycles: %d\n", tm > 0 ? (int)ceil(tm / o->trot.period - 1e-9) : 0);
    }
    return len;
}

const mbs_controller_type mbsi_controller_mpc = {
    {"mpc", "receding-horizon iLQR through the simulator (expo at plan_dt by default): holding the initial posture, or "
            "following the trot's contact schedule",
     &(const mbs_option_table){"mpc", spec, (int)(sizeof spec / sizeof *spec), &mbsi_trot_schedule_option_table,
                              offsetof(mpc_options, trot), sizeof(mpc_options)}},
    init, compute, fini, NULL, state, report,
};
