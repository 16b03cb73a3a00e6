/* mbs/variational.h — the linear-time variational integrator of Lee, Liu, Park and Srinivasa,
 * "A linear-time variational integrator for multibody systems" (WAFR 2016). Equation and
 * algorithm numbers are that paper's.
 *
 * A step of a variational integrator does not integrate an ODE: given q^{k-1} and q^k it finds
 * the q^{k+1} that makes the discrete action stationary, the root of the forced discrete
 * Euler–Lagrange (DEL) equations (eqs. 3, 17). Every body contributes its discrete
 * reduced Euler–Poincaré equation on SE(3) (eq. 16) with the trapezoidal discrete Lagrangian of
 * eq. 9, so that the residual of the whole tree is a discrete inverse-dynamics problem:
 *   DRNEA (Algorithm 2)  evaluates the residual f(q^{k+1}) in O(n),
 *   RIQN  (Algorithm 3)  updates q^{k+1} ← q^{k+1} ⊖ Δt M⁻¹(q^k) f with the O(n) articulated-body
 *                        impulse solve (mbs_abi_*), so a step is O(n) in all;
 *   Newton               uses the exact Jacobian ∂f/∂q^{k+1} of Algorithm 4 (O(n²) to build,
 *                        O(n³) to solve): the baseline of the paper's figures 3 and 4;
 *   Broyden              starts from that Jacobian and updates its inverse by rank one;
 *   tree Newton          (ours) takes Newton's steps with the same Jacobian, never formed: it
 *                        is a sum over bodies shaped like a mass matrix, so the elimination of
 *                        the articulated-body algorithm solves it in O(n) per iteration.
 *
 * Conventions are the library's (Pinocchio's): twists are [v; w], wrenches [f; n], expressed
 * in the body frame; q^{k+1} is perturbed in the tangent space, q ⊕ δ = integrate(q, δ). The
 * residual is an impulse per joint (N·s, N·m·s): with Δt → 0, f / Δt tends to the torque of
 * mbs_rnea_fext. Forcing (Lagrange–d'Alembert, eq. 17) is integrated like the Lagrangian, by the
 * trapezoidal rule: the impulse at t_k is (Δt_prev + Δt)/2 · (τ, gravity, f_ext) at t_k.
 *
 * A workspace is made once per model (the only allocation); begin, residual, jacobian, solve
 * and momentum never allocate. One workspace per thread. */
#ifndef MBS_VARIATIONAL_H
#define MBS_VARIATIONAL_H

#include "model.h"

#ifdef __cplusplus
extern "C" {
#endif

typedef struct mbs_vi mbs_vi;

typedef enum mbs_vi_solver {
    MBS_VI_RIQN = 0,      /* Algorithm 3: the O(n) recursive impulse-based quasi-Newton method */
    MBS_VI_NEWTON = 1,    /* Newton with the exact Jacobian of Algorithm 4 */
    MBS_VI_BROYDEN = 2,   /* Broyden's good method from the exact Jacobian at the initial guess */
    MBS_VI_TREE_NEWTON = 3 /* Newton with the same exact Jacobian, solved in O(n) by elimination
                            * along the tree (ours, not the paper's: src/dynamics/del_tree.h); the
                            * factors are kept while each step shrinks ‖f‖ fourfold or more */
} mbs_vi_solver;

typedef enum mbs_vi_guess {
    MBS_VI_GUESS_GIVEN = 0,   /* start from the q_next passed to mbs_vi_solve */
    MBS_VI_IG1 = 1,           /* sec. 3.3: q^k */
    MBS_VI_IG2 = 2,           /* sec. 3.3: explicit Euler, q^k ⊕ Δt v^k */
    MBS_VI_IG3 = 3            /* sec. 3.3: semi-implicit Euler with q̈^k from the ABA */
} mbs_vi_guess;

typedef struct mbs_vi_options {
    mbs_vi_solver solver;
    mbs_vi_guess guess;
    double tol;          /* stop when the Euclidean norm of the residual impulse is below tol, or
                          * when the next update would be below the rounding of q (the residual's
                          * floor, ~ ‖M‖ ε |q| / Δt) */
    int max_iter;        /* updates of q^{k+1} at most */
    double *history;     /* optional: history[l] = ‖f‖ after l updates (l = 0 is the initial guess) */
    int history_cap;     /* entries available in history */
} mbs_vi_options;

/* Defaults: RIQN, IG3, tol 1e-9, max_iter 20, no history. */
void mbs_vi_default_options(mbs_vi_options *opt);

typedef struct mbs_vi_result {
    int iterations;      /* updates applied */
    int evaluations;     /* residual evaluations (DRNEA calls) */
    int converged;       /* 1 when ‖f‖ <= tol or at the rounding floor */
    double residual;     /* final ‖f‖ */
    int jacobians;       /* exact Jacobians formed (Newton, Broyden) or factored (tree Newton) */
} mbs_vi_result;

mbs_vi *mbs_vi_new(const mbs_model *m, mbs_error *err);
void mbs_vi_free(mbs_vi *w);

/* Fixes what a step knows before it solves: the step dt from q to q_next, the previous
 * configuration q_prev from which the step dt_prev reached q, the joint torques tau (nv,
 * held over the step; NULL = 0) and external wrenches fext (6 x nbodies, body frame at the
 * body origin, as mbs_rnea_fext; NULL = none), both taken at t_k. Its O(n) pass computes the
 * discrete momentum each body brings from the previous step (the Ad* μ^{k-1} term of eq. 21a)
 * and the forcing impulses. Returns MBS_OK, or MBS_ERR_ARG when a step is not positive. */
int mbs_vi_begin(const mbs_model *m, mbs_vi *w, double dt_prev, double dt, const double *q_prev,
                 const double *q, const double *tau, const double *fext);
/* The same for a first step from a continuous state (q, v): each body's momentum at t_k is the
 * continuous G_i V_i rather than a discrete one, and the forcing acts over the half-step dt/2
 * that follows t_k (the discrete Legendre transform p_k = -D1 Ld(q^k, q^{k+1}) - F^-_k set to
 * M(q) v). */
int mbs_vi_begin_velocity(const mbs_model *m, mbs_vi *w, double dt, const double *q, const double *v,
                          const double *tau, const double *fext);

/* DRNEA (Algorithm 2): the DEL residual f(q_next) of eq. 22, nv impulses, after mbs_vi_begin. */
void mbs_vi_residual(const mbs_model *m, mbs_vi *w, const double *q_next, double *res);
/* Algorithm 4: the residual and its Jacobian ∂f/∂q_next (nv x nv, column-major, leading
 * dimension ldJ >= nv) in the tangent space at q_next. */
void mbs_vi_jacobian(const mbs_model *m, mbs_vi *w, const double *q_next, double *res, double *J, int ldJ);
/* Finds q_next with f(q_next) = 0 after mbs_vi_begin, from the initial guess of opt (q_next is
 * read only with MBS_VI_GUESS_GIVEN). d is used by the ABA / ABI (IG3 and RIQN). opt NULL:
 * the defaults. Returns MBS_OK (see result->converged), MBS_ERR_ARG for bad options, or
 * MBS_ERR_MODEL when the residual or the update stops being finite. */
int mbs_vi_solve(const mbs_model *m, mbs_data *d, mbs_vi *w, const mbs_vi_options *opt, double *q_next,
                 mbs_vi_result *result);
/* The velocity estimate at t_k that IG2 and IG3 use: (q ⊖ q_prev)/dt_prev, or v. */
const double *mbs_vi_velocity(const mbs_vi *w);

/* One-shot DRNEA: mbs_vi_begin with dt_prev = dt, then mbs_vi_residual. */
int mbs_drnea(const mbs_model *m, mbs_vi *w, double dt, const double *q_prev, const double *q,
              const double *q_next, const double *tau, const double *fext, double *res);

/* The discrete spatial momentum of the tree over [t_k, t_k+1], in the world frame at the world
 * origin ([linear; angular]): the sum of the bodies' μ_i^k (eq. 21b), each moved from body i's
 * frame at t_k to the world. For a free-floating tree without gravity or external forces it is
 * the same at every step (discrete Noether). */
void mbs_vi_momentum(const mbs_model *m, mbs_vi *w, const double *q_next, double out[6]);

/* ---- the SE(3) building blocks, exposed for tests and for users of DRNEA ----
 * dlog_ξ is the paper's (eqs. 11–13): the inverse of the right-trivialised tangent of exp,
 * Σ_j B_j/j! ad_ξ^j, which is the left Jacobian inverse Jl⁻¹(ξ). Closed forms, exact at every
 * angle below 2π (series below 1 rad, like src/liegroup/se3.c). */
/* out = [dlog_ξ]ᵀ y, the map from a body's average velocity to its discrete momentum (eq. 21b). */
void mbs_vi_dlog_transpose(const double xi[6], const double y[6], double out[6]);
/* out = d/dε [dlog_{ξ+ε dξ}]ᵀ y at ε = 0: the derivative Algorithm 4 (line 8) needs. */
void mbs_vi_dlog_transpose_derivative(const double xi[6], const double dxi[6], const double y[6], double out[6]);

#ifdef __cplusplus
}
#endif
#endif
