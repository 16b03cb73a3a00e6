/* adaptive.c — error-controlled stepping with conservative conservative advancement (C²A):
 * Algorithm 2 of Zapolsky and Drumwright 2015 around any fixed-step scheme of the stepper set
 * (option `scheme`; by default `rigid`, the paper's first-order step with impacts).
 *
 * Each call advances dt (Δt) in sub-steps. A sub-step of h is taken twice, once whole and once
 * as two halves (lines 8–17); the kinetic energies E' and E'' of the two results estimate the
 * local error, e_E = E' − E'' (lines 18–20). The sub-step is accepted when |e_E| <= ε, ε the larger
 * of `abs_tol` and `rel_tol` · E'' (the relative form of the paper's experiments); otherwise
 * h ← 0.9 ε / |e_E| · h (line 23), never below h_min, where one plain step of h_min is taken
 * (lines 3–6). With `conservative` on, h starts from the conservative-advancement bound (eq. 3,
 * line 1), is cut when the half step's bound says the interval was not free of impacts (lines
 * 12–15), and is re-checked with the velocity error e_v = v' − v'' inflating the bound (eqs. 4–5,
 * lines 25–28). The paper tries Δt whole at every call; here a sub-step tries at most twice the
 * last accepted one (Δt at the first), which spares a refused try per call when the error allows
 * much less than Δt and changes nothing when it allows Δt. The accepted result is Richardson's extrapolation q = q'' ⊕ (q'' ⊖ q'),
 * v = 2 v'' − v' (lines 29–30, on the Lie group), second order from two first-order results. */
#include <math.h>
#include <stdlib.h>
#include <string.h>

#include "step_internal.h"

typedef struct adaptive_options {
    char scheme[MBS_OPTION_TEXT_LEN];
    double rel_tol, abs_tol, h_min;
    int conservative, richardson;
} adaptive_options;

static const mbs_option_spec spec[] = {
    {"scheme", MBS_OPT_TEXT, "", 0, 0, 0, "rigid", NULL, offsetof(adaptive_options, scheme),
     "the fixed-step scheme whose steps are controlled (any registered stepper but adaptive), with its default options"},
    {"rel_tol", MBS_OPT_REAL, "", 0, 1, 0, "0.0025", NULL, offsetof(adaptive_options, rel_tol),
     "ε relative to the kinetic energy: the local kinetic-energy error accepted per sub-step (the paper's 0.25 %)"},
    {"abs_tol", MBS_OPT_REAL, "J", 0, 1e12, 0, "1e-6", NULL, offsetof(adaptive_options, abs_tol),
     "ε in joules: the error accepted whatever the energy (a robot at rest has almost none to be relative to)"},
    {"h_min", MBS_OPT_REAL, "s", 0, 1, MBS_OPT_OPEN_LO, "5e-4", NULL, offsetof(adaptive_options, h_min),
     "the shortest sub-step: below it one plain step of h_min is taken without error control (the paper's 0.5 ms)"},
    {"conservative", MBS_OPT_BOOL, "", 0, 1, 0, "1", NULL, offsetof(adaptive_options, conservative),
     "1: sub-steps no longer than conservative advancement allows (C²A: eqs. 3–5, lines 1, 12–15, 25–28); 0: error control alone"},
    {"richardson", MBS_OPT_BOOL, "", 0, 1, 0, "1", NULL, offsetof(adaptive_options, richardson),
     "1: Richardson extrapolation of the two results (lines 29–30, second order); 0: the two half steps' result"},
};
static const mbs_option_table table = {"adaptive", spec, (int)(sizeof spec / sizeof *spec), NULL, 0,
                                       sizeof(adaptive_options)};

typedef struct adaptive {
    mbs_stepper *inner;
    mbs_impact impact;             /* the conservative-advancement bounds (its QP unused) */
    double *q0, *v0, *q1, *v1, *ev, *dq;
    mbs_contact *c0;               /* the contacts' state at the sub-step's start */
    double h_last;                 /* the last sub-step accepted; 0 before the first */
} adaptive;

static void fini(mbs_stepper *st)
{
    adaptive *a = st->impl;
    if (!a) return;
    mbs_stepper_free(a->inner);
    mbsi_impact_fini(&a->impact);
    free(a->q0);
    free(a->c0);
    free(a);
    st->impl = NULL;
}

static int init(mbs_stepper *st, mbs_error *err)
{
    const adaptive_options *o = st->opts;
    mbs_system *s = st->sys;
    if (strcmp(o->scheme, "adaptive") == 0)
        return mbsi_fail(err, MBS_ERR_ARG, "scheme: adaptive cannot control itself; name a fixed-step scheme (e.g. rigid, euler)");
    adaptive *a = calloc(1, sizeof *a);
    if (!a) return mbsi_fail(err, MBS_ERR_NOMEM, "out of memory");
    st->impl = a;
    /* conservative advancement is this scheme's job: a rigid inner scheme steps each h whole */
    mbs_option inner_opts[1] = {MBS_OPTION("advance", 0)};
    const mbs_scheme_info *info = mbs_stepper_find(o->scheme);
    int n = info && mbs_options_find(info->options, "advance", NULL) ? 1 : 0;
    mbs_error e;
    mbs_error_clear(&e);
    a->inner = mbs_stepper_new(o->scheme, s, inner_opts, n, &e);
    if (!a->inner) {
        fini(st);
        return mbsi_fail(err, e.code ? e.code : MBS_ERR_ARG, "scheme: %s", e.msg);
    }
    mbs_impact_options io;
    mbs_options_defaults(&mbsi_impact_option_table, &io, NULL);
    size_t nq = (size_t)s->nq, nv = (size_t)s->nv;
    a->q0 = calloc(2 * nq + 4 * nv + 1, sizeof(double));
    a->c0 = calloc((size_t)s->ncontacts + 1, sizeof(mbs_contact));
    if (!a->q0 || !a->c0 || mbsi_impact_init(&a->impact, s, &io, err) != MBS_OK) {
        fini(st);
        return err && err->code ? err->code : mbsi_fail(err, MBS_ERR_NOMEM, "out of memory");
    }
    a->q1 = a->q0 + nq;
    a->v0 = a->q1 + nq;
    a->v1 = a->v0 + nv;
    a->ev = a->v1 + nv;
    a->dq = a->ev + nv;
    return MBS_OK;
}

/* The state at the sub-step's start, back into the system. */
static void restore(adaptive *a, mbs_system *s)
{
    memcpy(s->q, a->q0, (size_t)s->nq * sizeof(double));
    memcpy(s->v, a->v0, (size_t)s->nv * sizeof(double));
    memcpy(s->contacts, a->c0, (size_t)s->ncontacts * sizeof(mbs_contact));
}

/* One step of h of the controlled scheme from the system's state; iterations into stats. The
 * joint impedance (a servo, part of the system) is evaluated at each sub-step's start, as the
 * registry does at each step of a fixed-step scheme: adaptive declares it handles it. */
static int inner_step(adaptive *a, double h, mbs_step_stats *stats)
{
    mbs_step_stats is;
    memset(&is, 0, sizeof is);
    int rc = mbsi_stepper_raw_step(a->inner, h, &is);
    stats->iterations += is.iterations;
    stats->nonconverged |= is.nonconverged;
    return rc;
}

/* Fails with the controlled scheme's message. */
static int inner_failed(mbs_stepper *st, adaptive *a, int rc)
{
    return mbsi_fail(&st->err, rc, "adaptive (%s): %s", a->inner->type->info.name, a->inner->err.msg);
}

static int step(mbs_stepper *st, double dt, mbs_step_stats *stats)
{
    adaptive *a = st->impl;
    const adaptive_options *o = st->opts;
    mbs_system *s = st->sys;
    const mbs_model *m = s->model;
    const int nq = s->nq, nv = s->nv;
    double left = dt;
    /* what round-off leaves of dt after the sub-steps is no sub-step */
    while (left > 1e-12 * dt) {
        memcpy(a->q0, s->q, (size_t)nq * sizeof(double));
        memcpy(a->v0, s->v, (size_t)nv * sizeof(double));
        memcpy(a->c0, s->contacts, (size_t)s->ncontacts * sizeof(mbs_contact));
        /* line 1: the conservative step */
        double tc = a->h_last > 0 ? fmin(left, 2 * a->h_last) : left;
        if (o->conservative) tc = fmin(tc, mbsi_impact_advance_time(&a->impact, s, a->q0, a->v0, NULL));
        double h = tc;
        int accepted = 0;
        while (!accepted) {
            /* no sliver of a sub-step at the end of dt: at least h_min is left, or nothing */
            if (h >= left) h = left;
            else if (left - h < o->h_min) h = left - o->h_min;
            if (h < o->h_min) {
                /* lines 3–6: one plain step of h_min (or what is left of dt, and all of it when
                 * less than h_min would be left) */
                h = left - o->h_min < o->h_min ? left : o->h_min;
                int rc = inner_step(a, h, stats);
                if (rc != MBS_OK) return inner_failed(st, a, rc);
                break;
            }
            /* lines 8–9: one step of h */
            int rc = inner_step(a, h, stats);
            if (rc != MBS_OK) return inner_failed(st, a, rc);
            memcpy(a->q1, s->q, (size_t)nq * sizeof(double));
            memcpy(a->v1, s->v, (size_t)nv * sizeof(double));
            double E1 = mbs_kinetic_energy(m, s->data, a->q1, a->v1);
            /* lines 10–11: the first half step */
            restore(a, s);
            rc = inner_step(a, 0.5 * h, stats);
            if (rc != MBS_OK) return inner_failed(st, a, rc);
            if (o->conservative) {
                /* lines 12–15: was the first half free of impacts by the half step's own bound? */
                double th = fmin(mbsi_impact_advance_time(&a->impact, s, s->q, s->v, NULL), 0.5 * h);
                if (th < 0.5 * h) {
                    /* by at least a tenth: the bound moves with the trial (gravity speeds a falling
                     * point up within it), and h ← 2 th alone can shrink by ever less, or cycle */
                    tc = fmin(2 * th, 0.9 * h);
                    h = tc;
                    stats->rejected++;
                    restore(a, s);
                    continue;
                }
            }
            /* lines 16–17: the second half step */
            rc = inner_step(a, 0.5 * h, stats);
            if (rc != MBS_OK) return inner_failed(st, a, rc);
            /* lines 18–23: the kinetic-energy error */
            double E2 = mbs_kinetic_energy(m, s->data, s->q, s->v), eE = fabs(E1 - E2);
            double eps = fmax(o->abs_tol, o->rel_tol * fabs(E2));
            if (eE > eps) {
                h *= 0.9 * eps / eE;
                stats->rejected++;
                restore(a, s);
                continue;
            }
            /* lines 25–28: the conservative step again, its bound inflated by the velocity error */
            if (o->conservative) {
                for (int k = 0; k < nv; k++) a->ev[k] = a->v1[k] - s->v[k];
                double ts = fmin(mbsi_impact_advance_time(&a->impact, s, a->q0, a->v0, a->ev), h);
                /* (against the step taken, h, which error control may have made shorter than the paper's t_c) */
                if (ts < h) {
                    tc = fmin(ts, 0.9 * h);
                    h = tc;
                    stats->rejected++;
                    restore(a, s);
                    continue;
                }
            }
            /* lines 29–30: Richardson extrapolation, q'' ⊕ (q'' ⊖ q') and 2 v'' − v' */
            if (o->richardson) {
                mbs_difference(m, a->q1, s->q, a->dq);
                mbs_integrate(m, s->q, a->dq, s->q);
                for (int k = 0; k < nv; k++) s->v[k] = 2 * s->v[k] - a->v1[k];
            }
            stats->error = fmax(stats->error, eE);
            accepted = 1;
        }
        left -= h;
        if (h < left || !(a->h_last > h)) a->h_last = h;   /* dt's short last piece says nothing of the error */
        stats->substeps++;
        if (stats->min_dt == 0 || h < stats->min_dt) stats->min_dt = h;
    }
    stats->alpha = stats->min_dt / dt;
    return MBS_OK;
}

/* Checkpoints: the last accepted sub-step (the next one's first try), the bounds' impact model,
 * and the inner scheme's own state, recursively. */
static void state(mbs_stepper *st, mbsi_state *s)
{
    adaptive *a = st->impl;
    mbsi_state_doubles(s, "adaptive.h_last", &a->h_last, 1);
    mbsi_impact_state(&a->impact, s);
    mbsi_stepper_state(a->inner, s);
}

const mbs_stepper_type mbsi_stepper_adaptive = {
    {"adaptive", "error-controlled steps by the kinetic-energy error of step doubling, with conservative advancement "
                 "and Richardson extrapolation (C²A, Algorithm 2 of Zapolsky and Drumwright) around any fixed-step scheme",
     &table},
    init, step, fini, 1, 1, state, NULL,
};
