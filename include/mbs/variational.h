/* mbs/variational.h — the root finders of the linear-time variational integrator of Lee, Liu,
 * Park and Srinivasa, "A linear-time variational integrator for multibody systems" (WAFR 2016).
 * Equation and algorithm numbers are that paper's. DRNEA, the residual they find the root of,
 * its Jacobian and the workspace mbs_vi are in mbs/dynamics.h.
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
 * q^{k+1} is perturbed in the tangent space, q ⊕ δ = integrate(q, δ) (the conventions of
 * mbs/dynamics.h). mbs_vi_solve works in the workspace of mbs_vi_new and never allocates. */
#ifndef MBS_VARIATIONAL_H
#define MBS_VARIATIONAL_H

#include "dynamics.h"

#ifdef __cplusplus
extern "C" {
#endif

/* what this header declares is the library's interface: exported from libmbs.so, where everything
 * else is hidden (the build compiles with -fvisibility=hidden) */
#if defined(__GNUC__)
#pragma GCC visibility push(default)
#endif

typedef enum mbs_vi_solver {
    MBS_VI_RIQN = 0,      /* Algorithm 3: the O(n) recursive impulse-based quasi-Newton method */
    MBS_VI_NEWTON = 1,    /* Newton with the exact Jacobian of Algorithm 4 */
    MBS_VI_BROYDEN = 2,   /* Broyden's good method from the exact Jacobian at the initial guess */
    MBS_VI_TREE_NEWTON = 3 /* Newton with the same exact Jacobian, solved in O(n) by elimination
                            * along the tree (ours, not the paper's: src/dynamics/del_tree.c); the
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

/* Finds q_next with f(q_next) = 0 after mbs_vi_begin, from the initial guess of opt (q_next is
 * read only with MBS_VI_GUESS_GIVEN). d is used by the ABA / ABI (IG3 and RIQN). opt NULL:
 * the defaults. Returns MBS_OK (see result->converged), MBS_ERR_ARG for bad options, or
 * MBS_ERR_NUMERIC when the residual or the update stops being finite. */
int mbs_vi_solve(const mbs_model *m, mbs_data *d, mbs_vi *w, const mbs_vi_options *opt, double *q_next,
                 mbs_vi_result *result);

#if defined(__GNUC__)
#pragma GCC visibility pop
#endif

#ifdef __cplusplus
}
#endif
#endif
