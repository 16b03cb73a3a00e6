/* mbs/step.h — the stepper interface: one scheme per file, registered by name in one table
 * (src/step/registry.c). A stepper advances a system's (q, v, t) by dt with the system's τ
 * held constant, may keep internal state, allocates only when it is created, and reports
 * per-step statistics. */
#ifndef MBS_STEP_H
#define MBS_STEP_H

#include <stddef.h>

#include "contact.h"
#include "options.h"

#ifdef __cplusplus
extern "C" {
#endif

typedef struct mbs_step_stats {
    int iterations;     /* solver iterations of an implicit scheme */
    int substeps;       /* internal sub-steps of an adaptive scheme */
    int nonconverged;   /* 1 when a solver stopped before reaching its tolerance */
    double residual;    /* final residual of an implicit scheme */
} mbs_step_stats;

typedef struct mbs_stepper mbs_stepper;

typedef struct mbs_stepper_type {
    const char *name;
    const char *summary;                /* one line: the scheme and what it is good for */
    /* allocates the scheme's state (st->impl) and sets option defaults */
    int (*init)(mbs_stepper *st, mbs_error *err);
    /* sets one option; an unknown key or a bad value is an error naming both */
    int (*option)(mbs_stepper *st, const char *key, const char *value, mbs_error *err);
    /* advances st->sys by dt; returns MBS_OK or non-zero when it cannot */
    int (*step)(mbs_stepper *st, double dt, mbs_step_stats *stats);
    void (*fini)(mbs_stepper *st);
} mbs_stepper_type;

struct mbs_stepper {
    const mbs_stepper_type *type;
    mbs_system *sys;
    void *impl;
};

int mbs_stepper_count(void);
const mbs_stepper_type *mbs_stepper_at(int i);
const mbs_stepper_type *mbs_stepper_find(const char *name);   /* NULL when unknown */
/* Creates a stepper of the named scheme for sys (not owned) with its options. */
mbs_stepper *mbs_stepper_new(const char *name, mbs_system *sys, const mbs_option *opts, int nopts,
                             mbs_error *err);
/* One step of dt; stats may be NULL. */
int mbs_stepper_step(mbs_stepper *st, double dt, mbs_step_stats *stats);
void mbs_stepper_free(mbs_stepper *st);

#ifdef __cplusplus
}
#endif
#endif
