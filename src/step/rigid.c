/* rigid.c — rigid contact by time stepping with conservative advancement: Algorithm 1 of Zapolsky
 * and Drumwright 2015 around their first-order step (eqs. 1–2),
 *   q_{i+1} = q_i ⊕ h v_i,   v_{i+1} = k(v_i + h f(q_{i+1}, v_i)),
 * f the contact-free dynamics M⁻¹ (τ − C v − g) and k the inelastic impact model of maximal
 * dissipation (src/contact/impact.c). Each call advances dt in sub-steps: with `advance` on, a
 * sub-step goes no further than the first time a contact geometry can touch the environment
 * (eq. 3: its gap over a bound on its closing speed), never below h_min, so that a fast point
 * neither tunnels nor lands deep; with it off this is the common fixed-step scheme of their ref. [4]. */
#include <math.h>
#include <stdlib.h>

#include "step_internal.h"

typedef struct rigid_options {
    mbs_impact_options impact;
    int advance;
    double h_min;
    int dynamics_at;               /* 0: f(q_{i+1}, v_i), eq. 2; 1: f(q_i, v_i) */
} rigid_options;

static const mbs_option_spec spec[] = {
    {"advance", MBS_OPT_BOOL, "", 0, 1, 0, "1", NULL, offsetof(rigid_options, advance),
     "1: conservative advancement (Algorithm 1, eq. 3) sub-steps to the first time of impact; 0: fixed steps of dt"},
    {"h_min", MBS_OPT_REAL, "s", 0, 1, MBS_OPT_OPEN_LO, "1e-5", NULL, offsetof(rigid_options, h_min),
     "the shortest sub-step conservative advancement takes"},
    {"dynamics_at", MBS_OPT_ENUM, "", 0, 0, 0, "new", "new old", offsetof(rigid_options, dynamics_at),
     "new: f(q_{i+1}, v_i), eq. 2, the paper's semi-implicit Euler; old: f(q_i, v_i), explicit Euler (sec. IV-C)"},
};
static const mbs_option_table table = {"rigid", spec, (int)(sizeof spec / sizeof *spec), &mbsi_impact_option_table,
                                       offsetof(rigid_options, impact), sizeof(rigid_options)};

typedef struct rigid {
    mbs_impact impact;
    double *ddq, *dq;
} rigid;

static int init(mbs_stepper *st, mbs_error *err)
{
    rigid *r = calloc(1, sizeof *r);
    if (!r) return mbsi_fail(err, MBS_ERR_NOMEM, "out of memory");
    const rigid_options *o = st->opts;
    r->ddq = calloc(2 * (size_t)st->sys->nv + 1, sizeof(double));
    r->dq = r->ddq + st->sys->nv;
    if (!r->ddq || mbsi_impact_init(&r->impact, st->sys, &o->impact, err) != MBS_OK) {
        free(r->ddq);
        free(r);
        return err && err->code ? err->code : MBS_ERR_NOMEM;
    }
    st->impl = r;
    return MBS_OK;
}

static void fini(mbs_stepper *st)
{
    rigid *r = st->impl;
    if (!r) return;
    mbsi_impact_fini(&r->impact);
    free(r->ddq);
    free(r);
    st->impl = NULL;
}

/* Eq. 1, q ← q ⊕ h v, with a free-flyer root moved as the paper does (a rigid body's origin at
 * its world velocity, its orientation by the rotation h ω): a straight line, which conservative
 * advancement's bound assumes, where the exponential of the twist would carry a spinning body's
 * origin on an arc (a rolling ball would sink by r ω² h² / 2 a step). */
static void advance_positions(rigid *r, mbs_system *s, double h)
{
    const mbs_model *m = s->model;
    double p[3], R[9];
    int free = mbs_model_njoints(m) > 0 && mbs_joint_type_of(m, 0) == MBS_JOINT_FREEFLYER;
    if (free) mbs_joint_local_placement(m, 0, s->q, R, p);   /* the root's world placement */
    for (int k = 0; k < s->nv; k++) r->dq[k] = h * s->v[k];
    mbs_integrate(m, s->q, r->dq, s->q);
    if (free)
        for (int k = 0; k < 3; k++) s->q[k] = p[k] + h * (R[k] * s->v[0] + R[k + 3] * s->v[1] + R[k + 6] * s->v[2]);
}

static int step(mbs_stepper *st, double dt, mbs_step_stats *stats)
{
    rigid *r = st->impl;
    const rigid_options *o = st->opts;
    mbs_system *s = st->sys;
    double left = dt;
    while (left > 0) {
        double h = left;
        if (o->advance) {
            double tc = mbsi_impact_advance_time(&r->impact, s, s->q, s->v, NULL);
            h = fmin(left, fmax(tc, o->h_min));
            /* no sliver of a sub-step at the end of dt */
            if (left - h < 1e-9 * dt) h = left;
        }
        /* eq. 1, then eq. 2 at the new configuration with the old velocity, then k */
        if (o->dynamics_at == 1) mbs_aba(s->model, s->data, s->q, s->v, s->tau, r->ddq);
        advance_positions(r, s, h);
        if (o->dynamics_at == 0) mbs_aba(s->model, s->data, s->q, s->v, s->tau, r->ddq);
        for (int k = 0; k < s->nv; k++) s->v[k] += h * r->ddq[k];
        int rc = mbsi_impact_apply(&r->impact, s, s->q, s->v, h, dt, &st->err);
        if (rc != MBS_OK) return rc;
        stats->substeps++;
        if (stats->min_dt == 0 || h < stats->min_dt) stats->min_dt = h;
        left -= h;
    }
    return MBS_OK;
}

/* Checkpoints: the impulses' QP's warm start. */
static void state(mbs_stepper *st, mbsi_state *s)
{
    rigid *r = st->impl;
    mbsi_impact_state(&r->impact, s);
}

const mbs_stepper_type mbsi_stepper_rigid = {
    {"rigid", "rigid contact: first-order time stepping (eqs. 1–2 of Zapolsky and Drumwright) with inelastic impulses "
              "of maximal dissipation and conservative advancement to impacts (Algorithm 1)", &table},
    init, step, fini, 0, 1, state, NULL,
};
