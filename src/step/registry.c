/* registry.c — the one table of steppers: adding a scheme is one file and one line here. */
#include <stdlib.h>
#include <string.h>

#include "../base/base.h"
#include "mbs/step.h"
#include "steppers.h"

static const mbs_stepper_type *const table[] = {
    &mbs_stepper_euler,
    &mbs_stepper_symplectic_euler,
    &mbs_stepper_rk4,
    &mbs_stepper_expo,
    &mbs_stepper_implicit_euler,
    &mbs_stepper_variational,
};

int mbs_stepper_count(void) { return (int)(sizeof table / sizeof *table); }

const mbs_stepper_type *mbs_stepper_at(int i) { return i >= 0 && i < mbs_stepper_count() ? table[i] : NULL; }

const mbs_stepper_type *mbs_stepper_find(const char *name)
{
    for (int i = 0; name && i < mbs_stepper_count(); i++)
        if (strcmp(table[i]->name, name) == 0) return table[i];
    return NULL;
}

mbs_stepper *mbs_stepper_new(const char *name, mbs_system *sys, const mbs_option *opts, int nopts,
                             mbs_error *err)
{
    const mbs_stepper_type *t = mbs_stepper_find(name);
    if (!t) {
        char known[256] = "";
        for (int i = 0; i < mbs_stepper_count(); i++) {
            strncat(known, i ? ", " : "", sizeof known - strlen(known) - 1);
            strncat(known, table[i]->name, sizeof known - strlen(known) - 1);
        }
        mbs_fail(err, MBS_ERR_ARG, "unknown stepper '%s' (known: %s)", name ? name : "(null)", known);
        return NULL;
    }
    if (!sys) { mbs_fail(err, MBS_ERR_ARG, "stepper '%s': no system", name); return NULL; }
    mbs_stepper *st = calloc(1, sizeof *st);
    if (!st) { mbs_fail(err, MBS_ERR_NOMEM, "out of memory"); return NULL; }
    st->type = t;
    st->sys = sys;
    if (t->init(st, err) != MBS_OK) { free(st); return NULL; }
    for (int i = 0; i < nopts; i++) {
        if (!t->option || t->option(st, opts[i].key, opts[i].value, err) != MBS_OK) {
            if (!t->option) mbs_fail(err, MBS_ERR_ARG, "stepper '%s' has no option '%s'", name, opts[i].key);
            mbs_stepper_free(st);
            return NULL;
        }
    }
    return st;
}

int mbs_stepper_step(mbs_stepper *st, double dt, mbs_step_stats *stats)
{
    mbs_step_stats local;
    mbs_step_stats *s = stats ? stats : &local;
    memset(s, 0, sizeof *s);
    return st->type->step(st, dt, s);
}

void mbs_stepper_free(mbs_stepper *st)
{
    if (!st) return;
    if (st->type->fini) st->type->fini(st);
    free(st);
}

int mbs_step_buffers_init(mbs_stepper *st, int nbuf, size_t n, mbs_error *err)
{
    double **b = calloc((size_t)nbuf + 1, sizeof *b);
    if (!b) return mbs_fail(err, MBS_ERR_NOMEM, "out of memory");
    for (int i = 0; i < nbuf; i++) {
        b[i] = calloc(n ? n : 1, sizeof(double));
        if (!b[i]) {
            while (i-- > 0) free(b[i]);
            free(b);
            return mbs_fail(err, MBS_ERR_NOMEM, "out of memory");
        }
    }
    st->impl = b;
    return MBS_OK;
}

void mbs_step_buffers_fini(mbs_stepper *st)
{
    double **b = st->impl;
    if (!b) return;
    for (int i = 0; b[i]; i++) free(b[i]);
    free(b);
    st->impl = NULL;
}
