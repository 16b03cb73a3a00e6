/* steppers.h — the scheme descriptors the registry lists, and small helpers they share. */
#ifndef MBS_STEPPERS_H
#define MBS_STEPPERS_H

#include "../model/model_internal.h"
#include "mbs/dynamics.h"
#include "mbs/liegroup.h"
#include "mbs/contact.h"
#include "mbs/step.h"

extern const mbs_stepper_type mbs_stepper_euler;
extern const mbs_stepper_type mbs_stepper_symplectic_euler;
extern const mbs_stepper_type mbs_stepper_rk4;
extern const mbs_stepper_type mbs_stepper_expo;
extern const mbs_stepper_type mbs_stepper_implicit_euler;
extern const mbs_stepper_type mbs_stepper_variational;

/* Steppers that need only scratch vectors keep them as st->impl = an array of nbuf
 * zeroed arrays of n doubles each; these make and free that array (only at init / fini). */
int mbs_step_buffers_init(mbs_stepper *st, int nbuf, size_t n, mbs_error *err);
void mbs_step_buffers_fini(mbs_stepper *st);
static inline double *mbs_step_buffer(const mbs_stepper *st, int i) { return ((double **)st->impl)[i]; }

#endif
