/* step_internal.h — the step layer's internal header: the scheme descriptor every stepper file
 * defines and the registry lists, the stepper object, and the scratch helper of the simple
 * schemes. The layers above (and the tests) may include it. */
#ifndef MBS_STEP_INTERNAL_H
#define MBS_STEP_INTERNAL_H

#include "../base/base.h"
#include "../model/model_internal.h"
#include "../contact/contact_internal.h"
#include "mbs/contact.h"
#include "mbs/dynamics.h"
#include "mbs/liegroup.h"
#include "mbs/options.h"
#include "mbs/step.h"

/* One scheme: adding one is a file defining such a type and a line in registry.c. */
typedef struct mbs_stepper_type {
    mbs_scheme_info info;          /* name, summary, option table */
    /* allocates the scheme's state (st->impl) for st->sys with the options in st->opts */
    int (*init)(mbs_stepper *st, mbs_error *err);
    /* advances st->sys by dt; returns MBS_OK or non-zero when it cannot */
    int (*step)(mbs_stepper *st, double dt, mbs_step_stats *stats);
    void (*fini)(mbs_stepper *st);
    /* 1: step() applies the system's joint impedance itself (implicitly); 0: the registry adds its
     * torque at the start of each step to τ for the duration of the step */
    int impedance;
    /* 1: step() handles circular rim contacts (the rigid-contact schemes); 0: a system with rims is
     * refused when the stepper is created */
    int rims;
    /* saves or loads (one visitor, both directions) what the scheme keeps from one step to the next
     * — a previous configuration, warm starts, an inner stepper — for checkpoints; NULL: nothing
     * persists (scratch only), which tests/test_checkpoint.c proves by resuming bitwise */
    void (*state)(mbs_stepper *st, mbsi_state *s);
} mbs_stepper_type;

struct mbs_stepper {
    const mbs_stepper_type *type;
    mbs_system *sys;
    void *opts;                    /* the struct the scheme's table filled (owned) */
    void *impl;
    mbs_error err;                 /* why the last step failed: a scheme fills it with mbsi_fail */
    double dissipation;            /* λ of mbs_stepper_set_dissipation: v ← (1 − λ) v after each step */
    unsigned char *undo;           /* mbs_stepper_restore's copy of the state it replaces (undo_n bytes) */
    size_t undo_n;
};

/* One step of st's scheme as mbs_stepper_step takes it, without the checks and the dissipation:
 * the joint impedance's torque held from the step's start for a scheme that does not integrate it.
 * For a scheme that steps another (adaptive). */
int mbsi_stepper_raw_step(mbs_stepper *st, double dt, mbs_step_stats *stats);
/* Saves or loads st's persistent state (its type's state hook; nothing when NULL), after the
 * scheme's name, so that a checkpoint of another scheme fails at once. */
void mbsi_stepper_state(mbs_stepper *st, mbsi_state *s);
/* 1 when one of s's contacts is a rim. */
int mbsi_system_has_rims(const mbs_system *s);

/* Steppers that need only scratch vectors keep them as st->impl = one carved block of nbuf
 * zeroed arrays of n doubles each; these make and free it (only at init / fini). */
int mbsi_step_buffers_init(mbs_stepper *st, int nbuf, size_t n, mbs_error *err);
void mbsi_step_buffers_fini(mbs_stepper *st);
static inline double *mbsi_step_buffer(const mbs_stepper *st, int i) { return ((double **)st->impl)[i]; }

#endif
