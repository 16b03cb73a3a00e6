/* registry.c — the one table of controllers: adding a controller is one file and one line here.
 * Creating one parses its options with its table (mbs/options.h) into a struct it keeps. */
#include <stdio.h>
#include <stdlib.h>

#include "control_internal.h"

/* The registered controllers, in the order ./sim --help lists them: controller NAME is the
 * mbs_controller_type mbsi_controller_NAME its file defines. Adding one is its file and one line here. */
#define CONTROLLERS(X) \
    X(none)            \
    X(pd)              \
    X(squat)           \
    X(jump)            \
    X(trot)            \
    X(crawl)           \
    X(walk)            \
    X(tsid)            \
    X(mpc)             \
    X(jump_opt)

#define DECLARE(name) extern const mbs_controller_type mbsi_controller_##name;
#define ENTRY(name) &mbsi_controller_##name,
CONTROLLERS(DECLARE)
static const mbs_controller_type *const table[] = {CONTROLLERS(ENTRY)};

int mbs_controller_count(void) { return (int)(sizeof table / sizeof *table); }

const mbs_scheme_info *mbs_controller_at(int i) { return i >= 0 && i < mbs_controller_count() ? &table[i]->info : NULL; }

const mbs_controller_type *mbsi_controller_type_find(const char *name)
{
    /* its info is its type's first member */
    return (const mbs_controller_type *)mbsi_scheme_find(mbs_controller_at, mbs_controller_count(), name);
}

const mbs_scheme_info *mbs_controller_find(const char *name)
{
    const mbs_controller_type *t = mbsi_controller_type_find(name);
    return t ? &t->info : NULL;
}

int mbsi_controller_check(const char *name, const mbs_option *opts, int nopts, const char **key, mbs_error *err)
{
    const mbs_controller_type *t = mbsi_controller_type_find(name);
    *key = NULL;
    if (!t) return mbsi_fail(err, MBS_ERR_ARG, "unknown controller '%s'", name ? name : "(null)");
    if (!t->check) return MBS_OK;
    void *o = mbs_options_new(t->info.options, opts, nopts, err);
    if (!o) return err ? err->code : MBS_ERR_ARG;
    int rc = t->check(o, key, err);
    free(o);
    return rc;
}

mbs_controller *mbs_controller_new(const char *name, mbs_system *sys, const double *q0, double dt,
                                   const mbs_option *opts, int nopts, mbs_error *err)
{
    const mbs_controller_type *t = mbsi_controller_type_find(name);
    if (!t) {
        char known[256];
        mbsi_scheme_names(mbs_controller_at, mbs_controller_count(), ", ", known, sizeof known);
        mbsi_fail(err, MBS_ERR_ARG, "unknown controller '%s' (known: %s)", name ? name : "(null)", known);
        return NULL;
    }
    if (!sys || !q0 || !(dt > 0)) {
        mbsi_fail(err, MBS_ERR_ARG, "controller '%s': needs a system, a posture and a period > 0", name);
        return NULL;
    }
    if (!mbs_system_finalized(sys)) {
        mbsi_fail(err, MBS_ERR_ARG, "controller '%s': the system's scene is not finalized: call mbs_system_finalize after "
                  "its last add call (contacts, planes, boxes) and before creating controllers", name);
        return NULL;
    }
    mbs_controller *c = calloc(1, sizeof *c);
    size_t nq = (size_t)mbs_model_nq(sys->model);
    if (c) c->q0 = malloc((nq + 1) * sizeof(double));
    if (!c || !c->q0) {
        free(c);
        mbsi_fail(err, MBS_ERR_NOMEM, "out of memory");
        return NULL;
    }
    memcpy(c->q0, q0, nq * sizeof(double));
    c->type = t;
    c->sys = sys;
    c->m = sys->model;
    c->dt = dt;
    c->opts = mbs_options_new(t->info.options, opts, nopts, err);
    if (!c->opts || t->init(c, err) != MBS_OK) {
        free(c->opts);
        free(c->q0);
        free(c);
        return NULL;
    }
    return c;
}

void mbs_controller_compute(mbs_controller *c, double t, const double *q, const double *v, double *tau)
{
    c->type->compute(c, t, q, v, tau);
}

void mbsi_controller_state(mbs_controller *c, mbsi_state *s)
{
    char name[MBS_NAME_LEN] = {0};
    snprintf(name, sizeof name, "%s", c->type->info.name);
    mbsi_state_bytes(s, "controller.name", name, sizeof name);
    if (s->load && !s->failed && strcmp(name, c->type->info.name) != 0) {
        s->failed = 1;
        snprintf(s->msg, sizeof s->msg, "the state is of controller '%.64s', not '%s'", name, c->type->info.name);
    }
    if (c->type->state) c->type->state(c, s);
}

void mbsi_controller_report(const mbs_controller *c, char *buf, size_t n)
{
    if (!n) return;
    buf[0] = '\0';
    if (c && c->type->report && c->type->report(c, buf, n) >= (int)n) buf[n - 1] = '\0';
}

void mbs_controller_free(mbs_controller *c)
{
    if (!c) return;
    c->type->fini(c);
    free(c->opts);
    free(c->q0);
    free(c);
}
