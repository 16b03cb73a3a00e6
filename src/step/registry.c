/* registry.c — the one table of steppers: adding a scheme is one file and one line here.
 * Creating one parses its options with its table (mbs/options.h) into a struct it keeps. */
#include <math.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "step_internal.h"

/* The registered schemes, in the order ./sim --help lists them: scheme NAME is the
 * mbs_stepper_type mbsi_stepper_NAME its file defines. Adding one is its file and one line here. */
#define STEPPERS(X)     \
    X(euler)            \
    X(symplectic_euler) \
    X(rk4)              \
    X(expo)             \
    X(implicit_euler)   \
    X(variational)      \
    X(mdp)              \
    X(nmdp)             \
    X(rigid)            \
    X(adaptive)

#define DECLARE(name) extern const mbs_stepper_type mbsi_stepper_##name;
#define ENTRY(name) &mbsi_stepper_##name,
STEPPERS(DECLARE)
static const mbs_stepper_type *const table[] = {STEPPERS(ENTRY)};

int mbs_stepper_count(void) { return (int)(sizeof table / sizeof *table); }

const mbs_scheme_info *mbs_stepper_at(int i) { return i >= 0 && i < mbs_stepper_count() ? &table[i]->info : NULL; }

/* The scheme named `name` (its info is its type's first member), or NULL. */
static const mbs_stepper_type *type_of(const char *name)
{
    return (const mbs_stepper_type *)mbsi_scheme_find(mbs_stepper_at, mbs_stepper_count(), name);
}

const mbs_scheme_info *mbs_stepper_find(const char *name)
{
    const mbs_stepper_type *t = type_of(name);
    return t ? &t->info : NULL;
}

mbs_stepper *mbs_stepper_new(const char *name, mbs_system *sys, const mbs_option *opts, int nopts,
                             mbs_error *err)
{
    const mbs_stepper_type *t = type_of(name);
    if (!t) {
        char known[256];
        mbsi_scheme_names(mbs_stepper_at, mbs_stepper_count(), ", ", known, sizeof known);
        mbsi_fail(err, MBS_ERR_ARG, "unknown stepper '%s' (known: %s)", name ? name : "(null)", known);
        return NULL;
    }
    if (!sys) { mbsi_fail(err, MBS_ERR_ARG, "stepper '%s': no system", name); return NULL; }
    if (!t->rims && mbsi_system_has_rims(sys)) {
        mbsi_fail(err, MBS_ERR_ARG, "stepper '%s' does not step rim contacts: use a rigid-contact stepper (rigid, or adaptive "
                  "around it)", name);
        return NULL;
    }
    /* whole cache lines of its own: each step writes its error record, and a batch's threads step
     * other systems' steppers next to it */
    mbs_carver sc = {NULL, 0};
    mbsi_carve(&sc, sizeof(mbs_stepper));
    mbs_stepper *st = mbsi_carver_alloc(&sc);
    if (!st) { mbsi_fail(err, MBS_ERR_NOMEM, "out of memory"); return NULL; }
    st->type = t;
    st->sys = sys;
    st->opts = mbs_options_new(t->info.options, opts, nopts, err);
    /* a scheme sizes its buffers for the scene once: it must not change afterwards */
    if (st->opts && !sys->finalized)
        mbsi_fail(err, MBS_ERR_ARG, "stepper '%s': the system's scene is not finalized: call mbs_system_finalize after its "
                  "last add call (contacts, planes, boxes) and before creating steppers", name);
    if (!st->opts || !sys->finalized || t->init(st, err) != MBS_OK) {
        free(st->opts);
        free(st);
        return NULL;
    }
    /* room for mbs_stepper_restore's undo copy, so that restoring allocates nothing */
    st->undo_n = mbs_stepper_state_size(st);
    st->undo = malloc(st->undo_n ? st->undo_n : 1);
    if (!st->undo || mbsi_derivatives_init(st, NULL) != MBS_OK) {
        mbsi_fail(err, MBS_ERR_NOMEM, "out of memory");
        mbs_stepper_free(st);
        return NULL;
    }
    return st;
}

/* Index of the first non-finite element of x[0..n), or -1. */
static int first_nonfinite(const double *x, int n)
{
    for (int i = 0; i < n; i++)
        if (!isfinite(x[i])) return i;
    return -1;
}

/* Fills st->err with the joint and coordinate of q[k] (velocity 0) or v[k] (velocity 1), which is
 * not finite after the step from t0 by dt (before it, when `before`: the caller's state), and
 * returns MBS_ERR_NUMERIC; `why` (may be "") is the scheme's own message when it failed too. Runs
 * only on failure. */
static int nonfinite_error(mbs_stepper *st, int velocity, int k, double t0, double dt, const char *why, int before)
{
    static const char *const ffq[] = {"x", "y", "z", "qx", "qy", "qz", "qw"}, *const ffv[] = {"vx", "vy", "vz", "wx", "wy", "wz"};
    static const char *const plq[] = {"x", "y", "c", "s"}, *const plv[] = {"vx", "vy", "wz"};
    static const char *const bq[] = {"qx", "qy", "qz", "qw"}, *const bv[] = {"wx", "wy", "wz"};
    const mbs_model *m = st->sys->model;
    const double x = velocity ? st->sys->v[k] : st->sys->q[k];
    const char *var = velocity ? "v" : "q", *sep = why[0] ? "; " : "";
    char what[160];
    snprintf(what, sizeof what, "%s[%d] = %g", var, k, x);
    for (int j = 0; j < mbs_model_njoints(m); j++) {
        int first = velocity ? mbs_joint_idx_v(m, j) : mbs_joint_idx_q(m, j);
        int n = velocity ? mbs_joint_nv(m, j) : mbs_joint_nq(m, j);
        if (k < first || k >= first + n) continue;
        mbs_joint_type type = mbs_joint_type_of(m, j);
        const char *const *sfx = type == MBS_JOINT_FREEFLYER ? (velocity ? ffv : ffq)
                                 : type == MBS_JOINT_PLANAR  ? (velocity ? plv : plq)
                                 : type == MBS_JOINT_BALL    ? (velocity ? bv : bq) : NULL;
        /* a joint of several coordinates: the coordinate's index within it (and its name) */
        if (n > 1)
            snprintf(what, sizeof what, "%s of joint '%s' [%d%s%s] = %g (%s[%d])", var, mbs_joint_name(m, j), k - first,
                     sfx ? ", " : "", sfx ? sfx[k - first] : "", x, var, k);
        else
            snprintf(what, sizeof what, "%s of joint '%s' = %g (%s[%d])", var, mbs_joint_name(m, j), x, var, k);
        break;
    }
    if (before)
        return mbsi_fail(&st->err, MBS_ERR_NUMERIC, "%s: the state given to the step from t = %.9g s is not finite: %s",
                         st->type->info.name, t0, what);
    return mbsi_fail(&st->err, MBS_ERR_NUMERIC, "%s: the state is not finite in the step from t = %.9g s (dt = %g s): %s%s%s",
                     st->type->info.name, t0, dt, what, sep, why);
}

int mbsi_stepper_raw_step(mbs_stepper *st, double dt, mbs_step_stats *stats)
{
    mbs_system *sys = st->sys;
    if (!sys->imp_on || st->type->impedance) return st->type->step(st, dt, stats);
    /* a scheme that does not integrate the joint impedance holds its torque at the step's start */
    memcpy(sys->imp_tmp, sys->tau, (size_t)sys->nv * sizeof(double));
    mbsi_system_impedance_torque(sys, sys->q, sys->v, sys->tau);
    int rc = st->type->step(st, dt, stats);
    memcpy(sys->tau, sys->imp_tmp, (size_t)sys->nv * sizeof(double));
    return rc;
}

/* Every scheme's result is checked here, in one place: a state that is not finite is an error
 * (MBS_ERR_NUMERIC) naming the first such coordinate and the time — also when the scheme failed
 * on it with an error of its own, which the message then quotes — never a success; a state that
 * is not finite before the step is refused as given. O(nq + nv), no allocation. */
int mbs_stepper_step(mbs_stepper *st, double dt, mbs_step_stats *stats)
{
    mbs_step_stats local;
    mbs_step_stats *s = stats ? stats : &local;
    memset(s, 0, sizeof *s);
    s->alpha = 1;
    if (!st) return MBS_ERR_ARG;
    st->err.code = MBS_OK;
    st->err.msg[0] = '\0';
    if (!(dt > 0) || !isfinite(dt))
        return mbsi_fail(&st->err, MBS_ERR_ARG, "%s: dt = %g s is not a positive number (a step must be finite and > 0)",
                         st->type->info.name, dt);
    mbs_system *sys = st->sys;
    double t0 = sys->t;
    /* a state set non-finite by the caller is named as given: a step would spread it to every
     * coordinate, and the first of those (the base's x) would be blamed */
    int kq = first_nonfinite(sys->q, sys->nq), kv = kq < 0 ? first_nonfinite(sys->v, sys->nv) : -1;
    if (kq >= 0 || kv >= 0) return kq >= 0 ? nonfinite_error(st, 0, kq, t0, dt, "", 1) : nonfinite_error(st, 1, kv, t0, dt, "", 1);
    int rc;
    rc = mbsi_stepper_raw_step(st, dt, s);
    /* the one clock: no scheme writes t; a step of another length starts a new count from here */
    if (dt != sys->clock_dt) {
        sys->clock_t0 = t0;
        sys->clock_k = 0;
        sys->clock_dt = dt;
    }
    sys->clock_k++;
    sys->t = sys->clock_t0 + (double)sys->clock_k * dt;
    kq = first_nonfinite(sys->q, sys->nq);
    kv = kq < 0 ? first_nonfinite(sys->v, sys->nv) : -1;
    if (kq >= 0 || kv >= 0) {
        char why[MBS_ERROR_MSG_LEN];
        snprintf(why, sizeof why, "%s", rc != MBS_OK ? st->err.msg : "");
        return kq >= 0 ? nonfinite_error(st, 0, kq, t0, dt, why, 0) : nonfinite_error(st, 1, kv, t0, dt, why, 0);
    }
    if (rc != MBS_OK) {
        if (st->err.code == MBS_OK)
            mbsi_fail(&st->err, rc, "%s: the step from t = %g s failed (code %d)", st->type->info.name, t0, rc);
        return rc;
    }
    if (st->dissipation > 0)
        for (int k = 0; k < sys->nv; k++) sys->v[k] *= 1 - st->dissipation;
    if (!isfinite(sys->t))
        return mbsi_fail(&st->err, MBS_ERR_NUMERIC, "%s: the time is %g after the step from t = %.9g s (dt = %g s)",
                         st->type->info.name, sys->t, t0, dt);
    return MBS_OK;
}

int mbs_stepper_set_dissipation(mbs_stepper *st, double lambda)
{
    if (!st || !(lambda >= 0 && lambda <= 1)) return MBS_ERR_ARG;
    st->dissipation = lambda;
    return MBS_OK;
}

int mbsi_system_has_rims(const mbs_system *s)
{
    for (int i = 0; i < s->ncontacts; i++)
        if (s->contacts[i].axis[0] != 0 || s->contacts[i].axis[1] != 0 || s->contacts[i].axis[2] != 0) return 1;
    return 0;
}

void mbsi_stepper_state(mbs_stepper *st, mbsi_state *s)
{
    char name[MBS_NAME_LEN] = {0};
    snprintf(name, sizeof name, "%s", st->type->info.name);
    mbsi_state_bytes(s, "stepper.name", name, sizeof name);
    if (s->load && !s->failed && strcmp(name, st->type->info.name) != 0) {
        s->failed = 1;
        snprintf(s->msg, sizeof s->msg, "the state is of stepper '%.64s', not '%s'", name, st->type->info.name);
    }
    mbsi_state_doubles(s, "stepper.dissipation", &st->dissipation, 1);
    if (st->type->state) st->type->state(st, s);
}

/* The system's state, then the scheme's: one visitor, both directions. */
static void visit(mbs_stepper *st, mbsi_state *s)
{
    mbsi_system_state(st->sys, s);
    mbsi_stepper_state(st, s);
}

size_t mbs_stepper_state_size(mbs_stepper *st)
{
    mbsi_state s;
    mbsi_state_begin_save_fixed(&s, NULL, 0);
    visit(st, &s);
    return s.len;
}

int mbs_stepper_save(mbs_stepper *st, void *buf, size_t n, mbs_error *err)
{
    if (!st || !buf) return mbsi_fail(err, MBS_ERR_ARG, "mbs_stepper_save: no %s (NULL)", st ? "buffer" : "stepper");
    mbsi_state s;
    mbsi_state_begin_save_fixed(&s, buf, n);
    visit(st, &s);
    if (s.failed) return mbsi_fail(err, MBS_ERR_ARG, "mbs_stepper_save: %s (mbs_stepper_state_size: %zu)", s.msg,
                                   mbs_stepper_state_size(st));
    return MBS_OK;
}

int mbs_stepper_restore(mbs_stepper *st, const void *buf, size_t n, mbs_error *err)
{
    if (!st || !buf) return mbsi_fail(err, MBS_ERR_ARG, "mbs_stepper_restore: no %s (NULL)", st ? "state" : "stepper");
    /* the state replaced is kept, so that bytes that do not fit change nothing: the visitors load
     * field by field, and a field of another stepper or scene is found only when it is met */
    mbsi_state keep;
    mbsi_state_begin_save_fixed(&keep, st->undo, st->undo_n);
    visit(st, &keep);
    if (keep.failed) return mbsi_fail(err, MBS_ERR_ARG, "mbs_stepper_restore: %s", keep.msg);
    mbsi_state s;
    mbsi_state_begin_load(&s, buf, n);
    visit(st, &s);
    if (!s.failed && s.pos != s.len) {
        s.failed = 1;
        snprintf(s.msg, sizeof s.msg, "%zu bytes left over", s.len - s.pos);
    }
    if (!s.failed) return MBS_OK;
    mbsi_state back;
    mbsi_state_begin_load(&back, st->undo, keep.len);
    visit(st, &back);
    return mbsi_fail(err, MBS_ERR_ARG, "mbs_stepper_restore: the state does not fit this stepper (nothing changed): %s", s.msg);
}

int mbsi_stepper_snapshot(mbs_stepper *st, void *buf, size_t n)
{
    mbsi_state s;
    mbsi_state_begin_snapshot(&s, buf, n);
    visit(st, &s);
    return s.failed ? MBS_ERR_ARG : MBS_OK;
}

void mbsi_stepper_reload(mbs_stepper *st, const void *buf, size_t n)
{
    mbsi_state s;
    mbsi_state_begin_reload(&s, buf, n);
    visit(st, &s);
}

const mbs_error *mbs_stepper_last_error(const mbs_stepper *st) { return &st->err; }

mbs_system *mbs_stepper_system(const mbs_stepper *st) { return st ? st->sys : NULL; }

void mbs_stepper_free(mbs_stepper *st)
{
    if (!st) return;
    if (st->type->fini) st->type->fini(st);
    mbsi_derivatives_fini(st);
    free(st->undo);
    free(st->opts);
    free(st);
}

int mbsi_step_buffers_init(mbs_stepper *st, int nbuf, size_t n, mbs_error *err)
{
    mbs_carver c = {NULL, 0};
    for (int pass = 0; pass < 2; pass++) {
        double **b = mbsi_carve(&c, (size_t)nbuf * sizeof *b);
        for (int i = 0; i < nbuf; i++) {
            double *a = mbsi_carve_doubles(&c, n ? n : 1);
            if (b) b[i] = a;
        }
        if (pass == 0 && !mbsi_carver_alloc(&c)) return mbsi_fail(err, MBS_ERR_NOMEM, "out of memory");
    }
    st->impl = c.base;
    return MBS_OK;
}

void mbsi_step_buffers_fini(mbs_stepper *st)
{
    free(st->impl);
    st->impl = NULL;
}
