/* variational.c — the linear-time variational integrator (Lee, Liu, Park, Srinivasa, WAFR 2016)
 * as a stepper: each step solves the forced DEL equations (eq. 17) for q^{k+1}, evaluated by
 * DRNEA (Algorithm 2, src/dynamics/drnea.c) and solved by RIQN (Algorithm 3), by tree Newton
 * (the exact Jacobian eliminated along the tree, src/dynamics/del_tree.c) or, for comparison, by
 * Newton / Broyden — in variational_solve.c.
 *
 * State. A variational integrator advances (q^{k-1}, q^k), not (q, v). The stepper keeps both
 * and writes q^{k+1} and the average velocity v = (q^{k+1} ⊖ q^k)/Δt (eq. 10 in generalised
 * coordinates) into the system for output and controllers; note that v lags q by Δt/2.
 *
 * First step, and restarts. Without a q^{k-1} the step starts from the continuous (q, v): the
 * momentum that each body carries into the step is its continuous G_i V_i and the forcing acts
 * over the half-step after t_k (discrete Legendre transform, mbs_vi_begin_velocity), which is the
 * consistent second-order start, not q^{k-1} = q ⊖ Δt v. The same happens whenever a caller set
 * the state (mbs_system_set_state) since the last step. A change of Δt
 * between steps keeps the state: the DEL equation with the two step lengths is solved.
 *
 * Forcing (Lagrange–d'Alembert, eq. 17). The joint torques s->tau and the contact wrenches of
 * mbs_contact_forces at (q^k, v) — v being the latest velocity, and the anchors advanced once
 * per step (update = 1) — act as impulses at t_k; they are explicit, so stiff contacts keep the
 * step below ~2/ω of the contact like the other explicit schemes.
 *
 * Options (scenario section [variational]): solver = riqn | newton | broyden | tree_newton, guess = ig1 | ig2
 * | ig3 (sec. 3.3), tol (on the Euclidean norm of the residual impulse, default 1e-9), max_iter
 * (default 20). A step that stops at max_iter above tol is reported through
 * mbs_step_stats.nonconverged; one whose next update would be below the rounding of q counts as
 * converged (the residual's floor, see mbs_vi_options.tol). */
#include <stdlib.h>

#include "../base/base.h"
#include "mbs/variational.h"
#include "step_internal.h"

typedef struct variational {
    mbs_vi *w;
    mbs_vi_options opt;
    int started;
    unsigned long resets;          /* the system's reset count at the last step */
    double dt_last;
    double *q_prev, *q_cur, *q_next, *v_out;
} variational;

typedef struct variational_options {
    int solver, guess;
    double tol;
    int max_iter;
} variational_options;

static const mbs_option_spec spec[] = {
    {"solver", MBS_OPT_ENUM, "", 0, 0, 0, "riqn", "riqn newton broyden tree_newton", offsetof(variational_options, solver),
     "root finder of the DEL equations: RIQN (Algorithm 3, O(n)), Newton or Broyden with the exact Jacobian (Algorithm 4), "
     "or tree Newton (that Jacobian eliminated along the tree, O(n))"},
    {"guess", MBS_OPT_ENUM, "", 0, 0, 0, "ig3", "ig1 ig2 ig3", offsetof(variational_options, guess),
     "initial guess (sec. 3.3): q^k, explicit Euler, or semi-implicit Euler with the ABA's acceleration"},
    {"tol", MBS_OPT_REAL, "N·s", 0, 1e300, MBS_OPT_OPEN_LO, "1e-9", NULL, offsetof(variational_options, tol),
     "stop when the Euclidean norm of the residual impulse is below it (or at the rounding floor of q)"},
    {"max_iter", MBS_OPT_INT, "", 1, 100000, 0, "20", NULL, offsetof(variational_options, max_iter),
     "updates of q^{k+1} at most per step (a step that stops above tol counts as non-converged)"},
};

_Static_assert(MBS_VI_RIQN == 0 && MBS_VI_NEWTON == 1 && MBS_VI_BROYDEN == 2 && MBS_VI_TREE_NEWTON == 3 &&
               MBS_VI_IG2 == MBS_VI_IG1 + 1 && MBS_VI_IG3 == MBS_VI_IG1 + 2, "the option words follow the enums");

#define carve mbsi_carve_doubles

static void layout(mbs_carver *c, variational *v, size_t nq, size_t nv)
{
    v->q_prev = carve(c, nq); v->q_cur = carve(c, nq); v->q_next = carve(c, nq);
    v->v_out = carve(c, nv);
}

static void fini(mbs_stepper *st)
{
    variational *v = st->impl;
    if (!v) return;
    mbs_vi_free(v->w);
    free(v);   /* one block: the struct and its vectors */
    st->impl = NULL;
}

static int init(mbs_stepper *st, mbs_error *err)
{
    const mbs_system *s = st->sys;
    const variational_options *o = st->opts;
    size_t nq = (size_t)s->nq + 1, nv = (size_t)s->nv + 1;
    variational head = {0};
    mbs_carver c = {NULL, 0};
    mbsi_carve(&c, sizeof head);
    layout(&c, &head, nq, nv);
    variational *v = mbsi_carver_alloc(&c);
    if (!v) return mbsi_fail(err, MBS_ERR_NOMEM, "out of memory");
    mbsi_carve(&c, sizeof head);
    layout(&c, v, nq, nv);
    st->impl = v;
    mbs_vi_default_options(&v->opt);
    v->opt.solver = (mbs_vi_solver)o->solver;          /* the words are in the enum's order */
    v->opt.guess = (mbs_vi_guess)(MBS_VI_IG1 + o->guess);
    v->opt.tol = o->tol;
    v->opt.max_iter = o->max_iter;
    v->w = mbs_vi_new(s->model, err);
    if (!v->w) { fini(st); return err ? err->code : MBS_ERR_NOMEM; }
    return MBS_OK;
}

static int step(mbs_stepper *st, double dt, mbs_step_stats *stats)
{
    variational *v = st->impl;
    mbs_system *s = st->sys;
    const mbs_model *m = s->model;
    const size_t qb = sizeof(double) * (size_t)s->nq, vb = sizeof(double) * (size_t)s->nv;
    /* continue from (q^{k-1}, q^k) unless the state was set from outside since the last step */
    int cont = v->started && s->resets == v->resets;
    const double *fext = NULL;
    if (s->ncontacts > 0) {
        mbs_contact_forces(s, s->q, s->v, 1);
        fext = s->fext;
    }
    int rc = cont ? mbs_vi_begin(m, v->w, v->dt_last, dt, v->q_prev, s->q, s->tau, fext)
                  : mbs_vi_begin_velocity(m, v->w, dt, s->q, s->v, s->tau, fext);
    mbs_vi_result r = {0, 0, 0, 0, 0};
    if (rc == MBS_OK) rc = mbs_vi_solve(m, s->data, v->w, &v->opt, v->q_next, &r);
    stats->iterations = r.iterations;
    stats->residual = r.residual;
    stats->nonconverged = !r.converged;
    if (rc != MBS_OK)
        return mbsi_fail(&st->err, rc, "variational: the DEL equations at t = %g s %s", s->t,
                        rc == MBS_ERR_NUMERIC ? "stopped being finite" : "could not be set up");
    memcpy(v->q_prev, s->q, qb);
    memcpy(v->q_cur, v->q_next, qb);
    mbs_difference(m, v->q_prev, v->q_cur, v->v_out);
    for (int k = 0; k < s->nv; k++) v->v_out[k] /= dt;
    memcpy(s->q, v->q_cur, qb);
    memcpy(s->v, v->v_out, vb);
    v->dt_last = dt;
    v->started = 1;
    v->resets = s->resets;
    return MBS_OK;
}

/* Checkpoints: the two-step scheme's memory — whether it started, the reset count it saw, the last
 * step and the configurations it steps from. */
static void state(mbs_stepper *st, mbsi_state *s)
{
    variational *v = st->impl;
    const size_t nq = (size_t)st->sys->nq, nv = (size_t)st->sys->nv;
    mbsi_state_ints(s, "variational.started", &v->started, 1);
    mbsi_state_bytes(s, "variational.resets", &v->resets, sizeof v->resets);
    mbsi_state_doubles(s, "variational.dt_last", &v->dt_last, 1);
    mbsi_state_doubles(s, "variational.q_prev", v->q_prev, nq);
    mbsi_state_doubles(s, "variational.q_cur", v->q_cur, nq);
    mbsi_state_doubles(s, "variational.q_next", v->q_next, nq);
    mbsi_state_doubles(s, "variational.v_out", v->v_out, nv);
}

const mbs_stepper_type mbsi_stepper_variational = {
    {"variational",
     "linear-time variational integrator (Lee et al. 2016): DRNEA + RIQN, O(n) per step; long runs without energy drift",
     &(const mbs_option_table){"variational", spec, (int)(sizeof spec / sizeof *spec), NULL, 0,
                               sizeof(variational_options)}},
    init, step, fini, 0, 0, state, NULL,
};
