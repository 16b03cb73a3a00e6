/* mbs/ilqr.h — trajectory optimisation through the simulator: iterative LQR (Li & Todorov 2004;
 * the regularisation and line search of Tassa, Erez & Todorov 2012) with box limits on the
 * controls (box-DDP, Tassa, Mansard & Todorov 2014), on any stepper at its own step, with the
 * step's Jacobians of mbs_stepper_derivatives (analytical where the scheme has them).
 *
 * The problem, over a horizon of N steps of dt from the system's current state x0 = (q, v):
 *   min over u_0..u_{N-1}   Σ_k ½ δx_kᵀ Q δx_k + ½ (u_k − u_ref)ᵀ R (u_k − u_ref) + ½ δx_Nᵀ Q_f δx_N
 *                           + Σ_{k=0..N} ½ Σ_i w_{k,i} r_{k,i}(x_k)²
 *   x_{k+1} = step(x_k, τ(u_k)),   lo <= u_k <= hi,
 * δx = (difference(q_ref, q), v − v_ref) in the tangent space, Q, R, Q_f diagonal; u are the torques
 * of the chosen velocity coordinates (the actuated joints), the other entries of τ held at the
 * system's τ at the start of the solve. The residuals r_k (a user's terms: a base height at one knot,
 * a foot's height in swing, a velocity to track) come from a callback, with their Jacobians, and
 * enter the backward pass by Gauss–Newton like the quadratic terms. The state is a stepper's whole state: each knot's is saved
 * in the rollout and restored for its derivatives, so the contacts' anchors evolve as the steps
 * make them. Everything is allocated at creation; a solve allocates nothing. */
#ifndef MBS_ILQR_H
#define MBS_ILQR_H

#include "error.h"
#include "step.h"

#ifdef __cplusplus
extern "C" {
#endif

/* what this header declares is the library's interface: exported from libmbs.so, where everything
 * else is hidden (the build compiles with -fvisibility=hidden) */
#if defined(__GNUC__)
#pragma GCC visibility push(default)
#endif

typedef struct mbs_ilqr mbs_ilqr;

/* What a solve did. */
typedef struct mbs_ilqr_stats {
    int iterations;          /* backward and forward passes accepted or tried */
    double cost_start, cost; /* the cost of the warm start's rollout and of the solution */
    double regularization;   /* μ added to the controls' Hessian at the end */
    double alpha;            /* the last step of the line search accepted (0: none) */
    int converged;           /* 1: the cost's relative decrease fell below tol */
} mbs_ilqr_stats;

/* A solver for st's system (st and its system not owned) over `horizon` steps of dt (s), the
 * controls being the torques of the nu velocity coordinates controls[] (copied). Cost: zero weights
 * and the start as target until mbs_ilqr_set_cost; limits: none. NULL with err filled on a bad
 * argument or no memory. */
mbs_ilqr *mbs_ilqr_new(mbs_stepper *st, int horizon, double dt, const int *controls, int nu, mbs_error *err);
/* Frees a solver (NULL is fine); its stepper and system stay. */
void mbs_ilqr_free(mbs_ilqr *p);
/* The diagonal weights Q and Q_f (2nv each, on δq then δv) and R (nu), the target q_ref (nq), v_ref
 * (nv; NULL: zero) and u_ref (nu; NULL: zero). All are copied. MBS_ERR_ARG for a weight that is
 * negative or not finite (R must be > 0). */
int mbs_ilqr_set_cost(mbs_ilqr *p, const double *Q, const double *R, const double *Qf, const double *q_ref,
                      const double *v_ref, const double *u_ref);
/* A user's cost terms at knot k (0..horizon; horizon: the final state) of state (q, v): writes m
 * residuals r, their weights w (>= 0) and, when Jr is not NULL, their Jacobian Jr (m x 2nv,
 * column-major) over the tangent δx = (δq, δv) at (q, v), δq through mbs_integrate: a point's
 * position rows over δq are its frame Jacobian's linear rows in world axes (mbs_frame_jacobian,
 * MBS_LOCAL_WORLD_ALIGNED), the δv columns of a position zero. A term absent at a knot: w = 0. Any
 * other return than 0 fails the solve (MBS_ERR_ARG). */
typedef int (*mbs_ilqr_residual_fn)(void *user, int k, const double *q, const double *v, double *r, double *w,
                                    double *Jr);
/* Sets the user's terms: m residuals per knot from f (called with user), replacing any before;
 * f NULL or m = 0: none. Allocates their buffers here (a solve still allocates nothing). */
int mbs_ilqr_set_residuals(mbs_ilqr *p, int m, mbs_ilqr_residual_fn f, void *user);
/* A hook called in every rollout at knot k (0..horizon − 1) before that knot's step from the
 * planner's system s, after its τ is set: to change what the model sees along the horizon, e.g.
 * switch off the contact of a foot the schedule has swinging (mbs_system_set_contact_off), part
 * of the state. What it sets is saved with the knot's state, which its Jacobians start from. */
typedef void (*mbs_ilqr_knot_fn)(void *user, int k, mbs_system *s);
/* Sets the knot hook f (called with user), replacing any before; f NULL: none. A solve still
 * leaves the system as it was. */
int mbs_ilqr_set_knot_hook(mbs_ilqr *p, mbs_ilqr_knot_fn f, void *user);
/* How the solves take the step's Jacobians (mbs_stepper_derivatives): MBS_DERIVATIVES_AUTO (the
 * default: analytical where the stepper has them) or any other method, e.g. MBS_DERIVATIVES_FORWARD
 * to run the same solver on finite differences. MBS_ERR_ARG for a value out of the enum. */
int mbs_ilqr_set_derivatives(mbs_ilqr *p, mbs_derivatives_method method);
/* Box limits on the controls (nu each, lo <= hi; NULL for none), e.g. the motors' torque limits. */
int mbs_ilqr_set_limits(mbs_ilqr *p, const double *lo, const double *hi);
/* The controls, horizon x nu (knot k's nu in a row at k nu): the warm start the caller may write
 * before a solve, and the solution after it. Zero at creation. */
double *mbs_ilqr_controls(mbs_ilqr *p);
/* The feedback gains of the solution, horizon blocks of nu x 2nv (column-major): at knot k,
 * u = u_k + K_k δx with δx = (difference(q_k, q), v − v_k) from the solution's state. */
const double *mbs_ilqr_gains(const mbs_ilqr *p);
/* The solution's state at knot k (0..horizon): q (nq) and v (nv). */
void mbs_ilqr_state(const mbs_ilqr *p, int k, double *q, double *v);
/* Optimises from the system's current state (and its stepper's) for at most max_iter iterations,
 * stopping when the cost's relative decrease is below tol; the system and stepper are left as
 * they were. stats may be NULL. Returns MBS_OK (converged or not: see stats), or a step's error
 * (mbs_ilqr_last_error says which). */
int mbs_ilqr_solve(mbs_ilqr *p, int max_iter, double tol, mbs_ilqr_stats *stats);
/* The regularisation μ the next solve starts from: each solve leaves its last one, which the next
 * goes on from (read it to checkpoint a receding horizon: with the controls, it is what a solve
 * not preceded by mbs_ilqr_shift starts from; after a shift the first rollout also follows the
 * solution's gains and states, which the library's mpc controller checkpoints with its own). */
double mbs_ilqr_regularization(const mbs_ilqr *p);
/* Sets the μ the next solve starts from (to resume a receding horizon); MBS_ERR_ARG for a μ that
 * is not finite and >= 0. */
int mbs_ilqr_set_regularization(mbs_ilqr *p, double mu);
/* The warm start for the next period of a receding horizon: the controls moved one knot earlier,
 * the last repeated, and with them the solution's gains and states, so that the next solve's
 * first rollout follows the plan's policy u = u_k + K_k δx from the state it starts at (δx from
 * the shifted states) rather than the bare controls; before any solve, the controls alone. */
void mbs_ilqr_shift(mbs_ilqr *p);
/* Why the last call failed (code MBS_OK after one that did not). */
const mbs_error *mbs_ilqr_last_error(const mbs_ilqr *p);

#if defined(__GNUC__)
#pragma GCC visibility pop
#endif

#ifdef __cplusplus
}
#endif
#endif
