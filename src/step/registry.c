/* registry.c — the one table of steppers: adding a scheme is one file and one line here.
 * Creating one parses its options with its table (mbs/options.h) into a struct it keeps. */
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
    X(variational)

#define DECLARE(name) extern const mbs_stepper_type mbsi_stepper_##name;
#define ENTRY(name) &mbsi_stepper_##name,
STEPPERS(DECLARE)
static const mbs_stepper_type *const table[] = {STEPPERS(ENTRY)};

int mbs_stepper_count(void) { return (int)(sizeof table / sizeof *table); }

const mbs_scheme_info *mbs_stepper_at(int i) { return i >= 0 && i < mbs_stepper_count() ? &table[i]->info : NULL; }

static const mbs_stepper_type *type_of(const char *name)
{
    for (int i = 0; name && i < mbs_stepper_count(); i++)
        if (strcmp(table[i]->info.name, name) == 0) return table[i];
    return NULL;
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
        char known[256] = "";
        for (int i = 0; i < mbs_stepper_count(); i++) {
            strncat(known, i ? ", " : "", sizeof known - strlen(known) - 1);
            strncat(known, table[i]->info.name, sizeof known - strlen(known) - 1);
        }
        mbsi_fail(err, MBS_ERR_ARG, "unknown stepper '%s' (known: %s)", name ? name : "(null)", known);
        return NULL;
    }
    if (!sys) { mbsi_fail(err, MBS_ERR_ARG, "stepper '%s': no system", name); return NULL; }
    mbs_stepper *st = calloc(1, sizeof *st);
    if (!st) { mbsi_fail(err, MBS_ERR_NOMEM, "out of memory"); return NULL; }
    st->type = t;
    st->sys = sys;
    st->opts = mbs_options_new(t->info.options, opts, nopts, err);
    if (!st->opts || t->init(st, err) != MBS_OK) {
        free(st->opts);
        free(st);
        return NULL;
    }
    return st;
}

int mbs_stepper_step(mbs_stepper *st, double dt, mbs_step_stats *stats)
{
    mbs_step_stats local;
    mbs_step_stats *s = stats ? stats : &local;
    memset(s, 0, sizeof *s);
    st->err.code = MBS_OK;
    st->err.msg[0] = '\0';
    int rc = st->type->step(st, dt, s);
    if (rc != MBS_OK && st->err.code == MBS_OK)
        mbsi_fail(&st->err, rc, "%s: the step from t = %g s failed (code %d)", st->type->info.name, st->sys->t, rc);
    return rc;
}

const mbs_error *mbs_stepper_last_error(const mbs_stepper *st) { return &st->err; }

void mbs_stepper_free(mbs_stepper *st)
{
    if (!st) return;
    if (st->type->fini) st->type->fini(st);
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
