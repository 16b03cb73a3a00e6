/* mbs/batch.h — many independent systems of one model stepped together: N systems, each with its
 * own data, environment, contact points, state and stepper, sharing one immutable model, stepped
 * by dt at once on a pool of T threads (POSIX threads, started once when the batch is created;
 * T = 1 steps on the calling thread without any). Torques go in and states and contact forces
 * come out as arrays with one column per system, the shape a vectorised controller or a learning
 * loop works with.
 *
 * Results do not depend on T nor on which thread steps which system: a system's step reads and
 * writes only its own buffers, so each system follows, bit for bit, the run it would have alone
 * under mbs_stepper_step. Every buffer is allocated by mbs_batch_new; stepping, setting torques
 * and reading results allocate nothing. A batch is driven by one thread at a time (the functions
 * below are not to be called concurrently on one batch); separate batches are independent. */
#ifndef MBS_BATCH_H
#define MBS_BATCH_H

#include "contact.h"
#include "options.h"
#include "step.h"

#ifdef __cplusplus
extern "C" {
#endif

/* what this header declares is the library's interface: exported from libmbs.so, where everything
 * else is hidden (the build compiles with -fvisibility=hidden) */
#if defined(__GNUC__)
#pragma GCC visibility push(default)
#endif

typedef struct mbs_batch mbs_batch;

/* Builds system `index` of a batch, before its stepper is created: adds its planes, boxes and
 * contact points, may set its joint impedance and its initial state (mbs_system_set_state), and
 * may make it differ from the others (its material, its start). Called by mbs_batch_new on the
 * calling thread, for index 0, 1, ... in order. Returns MBS_OK, or an error code with err filled,
 * which makes mbs_batch_new fail. */
typedef int (*mbs_batch_setup_fn)(mbs_system *sys, int index, void *user, mbs_error *err);

/* What mbs_batch_new builds. Zero-initialise it and set what differs from the defaults. */
typedef struct mbs_batch_config {
    const char *stepper;          /* the scheme every system is stepped by; NULL: MBS_STEPPER_DEFAULT */
    const mbs_option *options;    /* its options, as mbs_stepper_new takes them (may be NULL) */
    int noptions;
    int max_contacts;             /* room for contact points in each system (as mbs_system_new) */
    int nthreads;                 /* T: 1 steps on the calling thread; 0: one thread per online processor */
    mbs_batch_setup_fn setup;     /* builds each system; NULL: no environment, neutral state at rest */
    void *user;                   /* handed to setup */
    /* NULL: every system of the model given to mbs_batch_new; else n models (not owned, they must
     * outlive the batch), system i of models[i]: variants of that model with the same joints (nq,
     * nv, bodies) whose inertias differ, e.g. a payload on the base per system */
    const mbs_model *const *models;
} mbs_batch_config;

/* A batch of n (>= 1) systems of model m (not owned; it must outlive the batch), each built by
 * cfg->setup and given a stepper of cfg->stepper with cfg->options, and a pool of cfg->nthreads
 * threads. NULL with err filled on a bad argument, a failed setup or stepper (the message names the
 * system) or when memory or threads are short. */
mbs_batch *mbs_batch_new(const mbs_model *m, int n, const mbs_batch_config *cfg, mbs_error *err);
/* Stops the threads and frees the batch, its systems and steppers (NULL is fine); the model stays. */
void mbs_batch_free(mbs_batch *b);

int mbs_batch_size(const mbs_batch *b);       /* N: the systems */
int mbs_batch_nthreads(const mbs_batch *b);   /* T: the threads that step them, the caller's included */
/* C: the most contact points any system has; contact force arrays are 3 x C x N. */
int mbs_batch_ncontacts(const mbs_batch *b);
/* System i (0 <= i < N) to read (its contacts, environment, impedance); NULL when out of range. The
 * batch owns it: change its state with mbs_batch_set_state only, so that the arrays stay current. */
const mbs_system *mbs_batch_system(const mbs_batch *b, int i);

/* Sets the torque every system holds during the next steps: tau is nv x N, column-major (column i
 * is system i's τ), as mbs_system_set_tau. */
void mbs_batch_set_tau(mbs_batch *b, const double *tau);
/* Sets the joint impedance every system holds during the next steps, as mbs_system_set_impedance
 * (τ_imp = kp (q_ref − q) − kd v on the one-coordinate joints, evaluated at every step, so that a PD
 * acts at every step of a control period): kp and kd nv x N, q_ref nq x N, column-major (column i for
 * system i); kp, kd or q_ref NULL removes it from every system. Each system takes it at the start of
 * its next step, on the batch's threads. Allocates nothing. */
void mbs_batch_set_impedance(mbs_batch *b, const double *kp, const double *kd, const double *q_ref);
/* Sets the material of solid `solid` of system i, as mbs_system_set_material (a randomised friction,
 * stiffness or damping per system). MBS_ERR_ARG with err filled when i or solid is out of range. */
int mbs_batch_set_material(mbs_batch *b, int i, int solid, const mbs_material *mat, mbs_error *err);
/* Sets system i's state (q: nq, v: nv or NULL for zero) and time, as mbs_system_set_state: a new
 * start (contacts re-anchored, the stepper restarted), which also brings back a system that failed.
 * MBS_ERR_ARG when i is out of range. */
int mbs_batch_set_state(mbs_batch *b, int i, const double *q, const double *v, double t);

/* Steps every system by dt (s) with its torque held, on the batch's threads. A system whose step
 * fails (mbs_stepper_step's error: a NaN or an infinity, a scheme that cannot step) keeps the state
 * that step left, is reported by mbs_batch_status and mbs_batch_error, and is left out of the
 * following steps (its time stops) until mbs_batch_set_state gives it a new start; the other systems
 * are stepped all the same. Returns MBS_OK when no system failed in this call; otherwise the code of
 * the first (lowest index) system that did, with err naming it, quoting its error and counting the
 * others. Allocates nothing. */
int mbs_batch_step(mbs_batch *b, double dt, mbs_error *err);
/* nsteps (>= 1) steps of dt as nsteps calls of mbs_batch_step, in one call: each thread takes a
 * system through all nsteps steps at once (its buffers stay in the thread's cache), torque and
 * impedance held; a control period of a vectorised environment. A system that fails stops at the
 * failing step. The same results, bit for bit, as nsteps calls of mbs_batch_step; MBS_ERR_ARG for
 * nsteps < 1. Allocates nothing. */
int mbs_batch_step_n(mbs_batch *b, double dt, int nsteps, mbs_error *err);

/* The configurations after the last step or mbs_batch_set_state, into out: nq x N, column-major. */
void mbs_batch_q(const mbs_batch *b, double *out);
/* The velocities, into out: nv x N, column-major. */
void mbs_batch_v(const mbs_batch *b, double *out);
/* Each system's time (s), into out: N. */
void mbs_batch_time(const mbs_batch *b, double *out);
/* The world force (N) the environment applies to each contact point, into out: 3 x C x N (entries
 * 3 (c + C i) .. + 2 for contact c of system i; zero for a contact that does not touch or that
 * system i does not have). */
void mbs_batch_contact_forces(const mbs_batch *b, double *out);

/* System i's status: MBS_OK, or the code of the step that failed (then it is not stepped until
 * mbs_batch_set_state); MBS_ERR_ARG when i is out of range. */
int mbs_batch_status(const mbs_batch *b, int i);
/* Why system i failed (its stepper's mbs_stepper_last_error); NULL when i is out of range. */
const mbs_error *mbs_batch_error(const mbs_batch *b, int i);
/* Systems that failed and wait for a new start. */
int mbs_batch_nfailed(const mbs_batch *b);

#if defined(__GNUC__)
#pragma GCC visibility pop
#endif

#ifdef __cplusplus
}
#endif
#endif
