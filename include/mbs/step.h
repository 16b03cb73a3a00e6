/* mbs/step.h — the stepper interface: one scheme per file, registered by name in one table
 * (src/step/registry.c), its options declared once in a table (mbs/options.h). A stepper
 * advances a system's (q, v, t) by dt with the system's τ held constant, may keep internal
 * state, allocates only when it is created, and reports per-step statistics. */
#ifndef MBS_STEP_H
#define MBS_STEP_H

#include <stddef.h>

#include "contact.h"
#include "options.h"

#ifdef __cplusplus
extern "C" {
#endif

/* what this header declares is the library's interface: exported from libmbs.so, where everything
 * else is hidden (the build compiles with -fvisibility=hidden) */
#if defined(__GNUC__)
#pragma GCC visibility push(default)
#endif

typedef struct mbs_step_stats {
    int iterations;     /* solver iterations of an implicit scheme */
    int substeps;       /* internal sub-steps of an adaptive scheme */
    int nonconverged;   /* 1 when a solver stopped before reaching its tolerance */
    double residual;    /* final residual of an implicit scheme */
    double alpha;       /* the smallest fraction of dt a sub-step of the scheme took (1: dt whole) */
    double min_dt;      /* the shortest sub-step (s) of a scheme that chooses its steps (rigid's conservative
                           advancement, adaptive's error control); 0: not reported */
    int rejected;       /* sub-steps an error-controlled scheme tried and refused (adaptive) */
    double error;       /* adaptive: the largest kinetic-energy error estimate |E' − E''| (J) of the
                           sub-steps it accepted with error control; 0 otherwise */
} mbs_step_stats;

typedef struct mbs_stepper mbs_stepper;

#define MBS_STEPPER_DEFAULT "expo"   /* the scheme a scenario runs when it names none */

/* Registered steppers (the table in src/step/registry.c). */
int mbs_stepper_count(void);
/* The registered stepper i (0 <= i < count): its name, summary and option table; NULL when out of range. */
const mbs_scheme_info *mbs_stepper_at(int i);
/* The stepper named `name`, or NULL when there is none. */
const mbs_scheme_info *mbs_stepper_find(const char *name);
/* Creates a stepper of the named scheme for sys (not owned) with its options (key = value text,
 * checked against the scheme's table; an error about one option starts "key: "). */
mbs_stepper *mbs_stepper_new(const char *name, mbs_system *sys, const mbs_option *opts, int nopts,
                             mbs_error *err);
/* One step of dt (s); stats may be NULL. Returns MBS_OK, or an error code when the scheme cannot
 * step or its state is no longer finite (MBS_ERR_NUMERIC, naming the joint and the time;
 * mbs_stepper_last_error says why). Never hands back a NaN state as success. Allocates nothing. */
int mbs_stepper_step(mbs_stepper *st, double dt, mbs_step_stats *stats);
/* How mbs_stepper_derivatives differentiates a step. */
typedef enum mbs_derivatives_method {
    MBS_DERIVATIVES_AUTO = 0,      /* analytical where the scheme's chain rule reaches, forward differences
                                    * otherwise (a scheme without, a step expo's rule does not cover) */
    MBS_DERIVATIVES_ANALYTICAL,    /* the scheme's own chain rule; MBS_ERR_ARG for a scheme without */
    MBS_DERIVATIVES_FORWARD,       /* forward differences: 1 + 2nv + ncols steps (as MuJoCo's mjd_transitionFD) */
    MBS_DERIVATIVES_CENTRAL,       /* central differences: 2 (2nv + ncols) steps, error O(h²) */
    MBS_DERIVATIVES_EXTRAPOLATED,  /* central differences at h and h/2 extrapolated (Richardson), error O(h⁴),
                                    * each column checked against the same at h/8 and h shrunk while they
                                    * disagree: 8 (2nv + ncols) steps, more where the step is not smooth at
                                    * h; the reference for stiff contacts, whose third derivatives make plain
                                    * central differences off by 1e-4 */
} mbs_derivatives_method;

/* 1 when st's scheme differentiates its step analytically (euler, symplectic_euler, rk4,
 * implicit_euler, expo); 0 when mbs_stepper_derivatives takes finite differences for it. expo's
 * chain rule covers the steps its closed form takes in one piece (every contact on its spring
 * over the step, inside its cone, proportional damping, no touch-down inside the step); the call
 * takes differences of any other step of it: central ones for MBS_DERIVATIVES_ANALYTICAL, forward
 * ones (half the steps) for MBS_DERIVATIVES_AUTO. */
int mbs_stepper_has_analytical_derivatives(const mbs_stepper *st);
/* The Jacobians of one step of dt from the system's current state, x⁺ = f(x, τ), without taking
 * it: A = ∂x⁺/∂x (2nv x 2nv) and B = ∂x⁺/∂τ (2nv x ncols), column-major, leading dimension 2nv.
 * The state x is (q, v) in the tangent space: a perturbation δx = (δq, δv) means the state
 * (integrate(q, δq), v + δv), and the rows of δq⁺ are difference(q⁺, ·) at the step's result, as
 * Pinocchio and Crocoddyl define them. τ is the torque the system holds (mbs_system_set_tau),
 * held over the step; the joint impedance and the dissipation of the step are part of f. The
 * contacts' anchors, active set and modes are not state: they are held at their values at the
 * start of the step, as the step itself then updates them (a contact touching down or slipping
 * in the step is updated from the perturbed state, exactly as a step from it would be). cols
 * (ncols indices of velocity coordinates, e.g. the actuated joints') chooses B's columns; NULL:
 * all nv (ncols ignored). B may be NULL (then no torque columns are computed). The system, the
 * contacts and the stepper's own state are left exactly as they were (a step afterwards is bitwise
 * the step without the call). Allocates nothing. MBS_ERR_ARG for a bad argument or an analytical
 * request to a scheme without; a step's error (MBS_ERR_NUMERIC, ...) with mbs_stepper_last_error
 * saying why. */
int mbs_stepper_derivatives(mbs_stepper *st, double dt, mbs_derivatives_method method, const int *cols, int ncols,
                            double *A, double *B);
/* Exponential velocity dissipation (Zapolsky and Drumwright 2015, sec. IV-E), for any scheme:
 * after each step v ← (1 − λ) v. λ in [0, 1]; 0 (the default) is none, 1 stops the system each
 * step. MBS_ERR_ARG for a λ out of range. */
int mbs_stepper_set_dissipation(mbs_stepper *st, double lambda);
/* Why the last mbs_stepper_step failed (code MBS_OK after a step that did not). */
const mbs_error *mbs_stepper_last_error(const mbs_stepper *st);
/* The bytes of st's state: its system's (t and the clock's count, q, v, τ, the contact wrenches,
 * every contact's anchor, mode, point and force, the joint impedance) and what the scheme keeps
 * from one step to the next (warm starts, a previous configuration, an inner stepper's), as a
 * checkpoint holds them. */
size_t mbs_stepper_state_size(mbs_stepper *st);
/* Copies that state into buf (n bytes, at least mbs_stepper_state_size); allocates nothing, so a
 * controller may save and restore within its period (MPC rollouts, resets). MBS_ERR_ARG when n is
 * too small. */
int mbs_stepper_save(mbs_stepper *st, void *buf, size_t n, mbs_error *err);
/* Puts a state saved from st (or a stepper of the same scheme and options on the same model and
 * scene) back: the steps that follow are bitwise those that followed the save. Allocates nothing.
 * MBS_ERR_ARG, naming the first field that does not fit, for bytes of another stepper or system. */
int mbs_stepper_restore(mbs_stepper *st, const void *buf, size_t n, mbs_error *err);
/* The system st steps. */
mbs_system *mbs_stepper_system(const mbs_stepper *st);
/* Frees a stepper (NULL is fine); its system stays. */
void mbs_stepper_free(mbs_stepper *st);

#if defined(__GNUC__)
#pragma GCC visibility pop
#endif

#ifdef __cplusplus
}
#endif
#endif
