/* mbs/ess.h — the event-selected rapid integrator for hybrid systems whose guards are crossed
 * transversally (Anderson & Revzen, "Rapid integrator for a class of multi-contact systems",
 * arXiv 2402.00279; section numbers below are the paper's).
 *
 * The system (sec. 2.1) is a vector field ẋ = f(x, σ) on R^n that depends on the guard signs
 * σ ∈ {-1, +1}^m only, m guard functions h(x) ∈ R^m whose zero sets are the guards, and a
 * precision ε_k > 0 per guard. A guard is crossed from h_k < 0 to h_k >= 0, and requirement 4
 * (liveness) asks ∇h_k·f > c > 0 inside the band N^ε_k = {-ε_k <= h_k <= ε_k}.
 *
 * Outside every band of a guard not yet crossed, the trajectory is integrated by the embedded
 * Dormand–Prince 5(4) pair with step-size control and dense output; the integration stops
 * where the trajectory enters such a band (listing 1's termination condition). Inside, a
 * projection step moves along the constant field to the first-order crossing time
 * -h_k/(∇h_k·f) of the earliest guard (sec. 3.1) and marks it crossed; several guards in one
 * band give consecutive projections. Between events σ is held constant, so each smooth piece
 * is integrated with a smooth field.
 *
 * Usage: mbs_ess_new once (the only allocation), mbs_ess_init with the system, the options
 * and the initial state, then mbs_ess_integrate to each final time; the state, the guard
 * sides, the event log and the counters stay in the integrator. Nothing prints; every loop
 * is bounded, and bad input gets an error code and a message. */
#ifndef MBS_ESS_H
#define MBS_ESS_H

#include "error.h"

#ifdef __cplusplus
extern "C" {
#endif

/* what this header declares is the library's interface: exported from libmbs.so, where everything
 * else is hidden (the build compiles with -fvisibility=hidden) */
#if defined(__GNUC__)
#pragma GCC visibility push(default)
#endif

typedef struct mbs_ess mbs_ess;

/* ẋ = f(x, σ): sigma[k] = +1 on the crossed side of guard k (h_k >= 0), -1 before it. */
typedef int (*mbs_ess_field)(void *user, const double *x, const signed char *sigma, double *xdot);
/* The m guard values h(x). */
typedef int (*mbs_ess_guards)(void *user, const double *x, double *h);
/* The guard Jacobian applied to a vector: out = Dh(x)·w (m values). The paper's Dh is only
 * ever used this way (∇h_k·f in the projection step), so a product is all the integrator
 * asks for; it need not be closed-form (sec. 2.2). */
typedef int (*mbs_ess_guard_jvp)(void *user, const double *x, const double *w, double *out);
/* Every callback returns 0, or a non-zero code that stops the integration with an error. */

typedef struct mbs_ess_system {
    int n;                       /* state dimension (>= 1) */
    int m;                       /* number of guards (>= 0) */
    mbs_ess_field f;             /* required */
    mbs_ess_guards h;            /* required when m > 0 */
    mbs_ess_guard_jvp dh;        /* may be NULL: central finite differences of h along w */
    void *user;                  /* passed to every callback */
} mbs_ess_system;

/* When a crossed guard becomes a candidate again (sec. 3.1, the hopper's alternating guards). */
typedef enum mbs_ess_rearm {
    /* Default: a crossed guard is re-armed as soon as an accepted integration step ends with
     * h_k < -ε_k, i.e. once the trajectory has left its band on the negative side. On the
     * hopper this gives listing 1's events; unlike listing 1 it does not wait for every other
     * guard to be crossed, which would leave a plate's lift-off guards disarmed while one of
     * its springs has never been touched. */
    MBS_ESS_REARM_LEFT_BAND = 0,
    /* Listing 1: when no guard is armed, the integration stops where any guard enters its
     * band, and then every guard with h_k < 0 is re-armed. */
    MBS_ESS_REARM_POOL_EMPTY = 1
} mbs_ess_rearm;

/* What to do when a guard inside its band violates liveness (∇h_k·f <= c). */
typedef enum mbs_ess_liveness_policy {
    MBS_ESS_LIVENESS_FAIL = 0,   /* default: stop with MBS_ESS_ERR_LIVENESS (requirement 4 is the user's) */
    MBS_ESS_LIVENESS_LOCATE = 1  /* leave that guard to root finding on the dense output (a grazing contact) */
} mbs_ess_liveness_policy;

/* Where an integration step that enters a band ends. */
typedef enum mbs_ess_entry {
    MBS_ESS_ENTRY_LOCATE = 0,    /* default: at the entry point h_k = -ε_k, found on the dense output */
    MBS_ESS_ENTRY_STEP_END = 1   /* listing 1: at the end of the step that entered (h_k >= -ε_k anywhere) */
} mbs_ess_entry;

typedef struct mbs_ess_options {
    double eps;                  /* ε for every guard (default 1e-3) ... */
    const double *eps_k;         /* ... or m values, one per guard (copied by mbs_ess_init) */
    double rtol, atol;           /* dopri5 local error tolerances (default 1e-6, 1e-9) */
    double h_init;               /* first step; 0 (default): Hairer's estimate */
    double h_max;                /* largest integration step; 0 (default): no limit. Guards are
                                  * checked at step ends, so a band entered and left within one
                                  * step goes unseen: bound the step when guards can be grazed */
    double liveness_c;           /* c of requirement 4 (default 0: ∇h·f must be positive); a
                                  * projection then spans at most ε_k / c */
    int liveness_policy;         /* mbs_ess_liveness_policy */
    int rearm;                   /* mbs_ess_rearm */
    int entry;                   /* mbs_ess_entry */
    long max_steps;              /* bound on step attempts per mbs_ess_integrate call (default 10^7) */
} mbs_ess_options;

/* Why the last call stopped (mbs_ess_last_status). */
typedef enum mbs_ess_status {
    MBS_ESS_DONE = 0,
    MBS_ESS_ERR_INPUT = 1,         /* bad argument, option or initial state */
    MBS_ESS_ERR_CALLBACK = 2,      /* a callback returned non-zero */
    MBS_ESS_ERR_NOT_FINITE = 3,    /* a callback produced NaN or infinity */
    MBS_ESS_ERR_LIVENESS = 4,      /* requirement 4 violated inside a band */
    MBS_ESS_ERR_STEP_LIMIT = 5,    /* max_steps step attempts without reaching the final time */
    MBS_ESS_ERR_STEP_SIZE = 6      /* the step size fell to the rounding level of t */
} mbs_ess_status;

typedef enum mbs_ess_event_kind {
    MBS_ESS_PROJECTED = 0,  /* crossed (h_k: - to +) by a projection step */
    MBS_ESS_LOCATED = 1,    /* crossed (- to +) where no projection applied (not armed, or not
                             * live under MBS_ESS_LIVENESS_LOCATE); time found by root finding */
    MBS_ESS_REVERSED = 2    /* returned from + to - without a guard of its own (no live
                             * partner guard was armed); time found by root finding */
} mbs_ess_event_kind;

typedef struct mbs_ess_event {
    double t;
    int guard;
    int kind;                    /* mbs_ess_event_kind */
} mbs_ess_event;

typedef struct mbs_ess_stats {
    long nfev;                   /* evaluations of f */
    long nhev;                   /* evaluations of h */
    long ndhev;                  /* evaluations of Dh·w (finite differences count two of h) */
    long nsteps;                 /* accepted integration steps */
    long nrejected;              /* rejected integration steps */
    long nprojections;           /* projection steps */
    long nlocated;               /* LOCATED and REVERSED events */
    long nrearmed;               /* guards put back into the pool */
    long nroot_iterations;       /* root-finding iterations on the dense output */
} mbs_ess_stats;

/* Allocates an integrator for n states and m guards keeping the first max_events events of
 * each run (later ones are counted, not stored). NULL with err filled on bad sizes or no memory. */
mbs_ess *mbs_ess_new(int n, int m, int max_events, mbs_error *err);
void mbs_ess_free(mbs_ess *w);                            /* NULL is fine */
/* Fills the defaults listed in mbs_ess_options. */
void mbs_ess_default_options(mbs_ess_options *opt);

/* Starts a run at (t0, x0): checks the system and the options (copied; opt NULL: defaults),
 * evaluates h(x0), arms every guard with h_k < 0 and clears the event log and counters. */
int mbs_ess_init(mbs_ess *w, const mbs_ess_system *sys, const mbs_ess_options *opt, double t0,
                 const double *x0, mbs_error *err);
/* Integrates from the current time to tf (>= it). Dense output: for each of the nout
 * non-decreasing times t_out[i] in [t, tf], x(t_out[i]) goes to column i of x_out (n x nout,
 * column-major, leading dimension ldx >= n); inside a projection step the output follows the
 * projection line. f is evaluated afresh at the start of each call, so the user's data may
 * change between calls (a controller). Never allocates. Returns MBS_OK, MBS_ERR_ARG (bad
 * input) or MBS_ERR_MODEL (the system misbehaved); mbs_ess_last_status tells which. */
int mbs_ess_integrate(mbs_ess *w, double tf, const double *t_out, int nout, double *x_out, int ldx,
                      mbs_error *err);

double mbs_ess_time(const mbs_ess *w);                    /* the time reached (s) */
const double *mbs_ess_state(const mbs_ess *w);            /* n values */
const signed char *mbs_ess_sigma(const mbs_ess *w);       /* m current guard sides */
/* The event log of the run, in time order; *nstored <= max_events, *ntotal every event. */
const mbs_ess_event *mbs_ess_events(const mbs_ess *w, int *nstored, int *ntotal);
const mbs_ess_stats *mbs_ess_get_stats(const mbs_ess *w); /* steps, rejections, evaluations */
int mbs_ess_last_status(const mbs_ess *w);                /* mbs_ess_status */

#if defined(__GNUC__)
#pragma GCC visibility pop
#endif

#ifdef __cplusplus
}
#endif
#endif
