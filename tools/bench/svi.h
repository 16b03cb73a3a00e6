/* svi.h — the scalable variational integrator (SVI) of Johnson and Murphey, "Scalable variational
 * integrators for constrained mechanical systems in generalized coordinates" (IEEE T-RO 25(6),
 * 2009), as the baseline of Lee, Liu, Park, Srinivasa, "A linear-time variational integrator for
 * multibody systems" (WAFR 2016, sec. 4.3, fig. 3). A benchmark baseline, not part of libmbs: it
 * exists so that the paper's DRNEA-against-SVI comparison can be measured on this engine's models,
 * and it lives in tools/bench/ because the library's own integrator never needs it.
 *
 * What it is. The discrete Lagrangian is the midpoint rule in generalized coordinates q,
 *   Ld(q1, q2) = Δt L((q1 + q2)/2, (q2 - q1)/Δt)                          (Lee et al. eq. 1)
 * and a step finds the root q^{k+1} of the DEL residual
 *   f(q^{k+1}) = D2Ld(q^{k-1}, q^k) + D1Ld(q^k, q^{k+1})                  (Lee et al. eqs. 2, 3)
 * in Johnson and Murphey's position-momentum form: p^k = D2Ld(q^{k-1}, q^k) is computed once per
 * step (svi_begin), so the residual is f = p^k + D1Ld(q^k, q^{k+1}). L and its derivatives come from
 * J&M's tree representation: every frame caches its world transform g_i and body velocity v_i, and
 * their first (residual) and second (Jacobian) derivatives with respect to q and q̇, each from its
 * parent's caches. The residual costs O(n d) (d: depth; O(n²) on a chain), the exact Jacobian
 * O(n d²) (O(n³) on a chain), and Newton (Lee et al. Algorithm 1) solves it by dense LU (LAPACKE):
 * the complexities the paper attributes to SVI (sec. 1).
 *
 * Models: fixed-base trees of revolute and prismatic joints (J&M's generalized coordinates), read
 * from an mbs_model. Twists inside are (ω; ν) in the body frame; q is perturbed additively.
 * svi_new allocates every buffer; nothing else allocates. */
#ifndef MBS_TOOLS_SVI_H
#define MBS_TOOLS_SVI_H

#include "mbs.h"

typedef struct svi svi;

typedef enum svi_solver {
    SVI_NEWTON = 0,   /* Newton (Lee et al. Algorithm 1) with the exact Jacobian, dense LU */
    SVI_RIQN = 1      /* Lee et al.'s RIQN update (Algorithm 3) on the SVI residual: Δq = Δt M⁻¹(q^k) f by
                       * the engine's articulated-body impulse solve (the paper's "RIQN + SVI") */
} svi_solver;

typedef enum svi_guess {
    SVI_GUESS_GIVEN = 0,   /* start from the q_next passed to svi_solve */
    SVI_IG1 = 1,           /* q^k */
    SVI_IG2 = 2,           /* q^k + Δt v^k */
    SVI_IG3 = 3            /* q^k + Δt (v^k + Δt q̈^k), q̈^k from the engine's ABA: the guess mbs_vi_solve uses */
} svi_guess;

typedef struct svi_options {
    svi_solver solver;
    svi_guess guess;
    double tol;        /* stop when ‖f‖₂ <= tol (N m s), or at the residual's rounding floor: when an update is
                        * below the rounding of q (as mbs_vi_solve), or fails to shrink an ‖f‖ already
                        * within 10 tol (the generalized-coordinate sums round more coarsely than DRNEA's
                        * per-body terms: 1e-7 to 5e-7 N m s on 100 links of bench_variational) */
    int max_iter;      /* updates at most */
} svi_options;

/* Defaults: Newton, IG3, tol 1e-9, 20 iterations (those of mbs_vi_default_options). */
void svi_default_options(svi_options *opt);

typedef struct svi_result {
    int iterations;    /* updates applied */
    int evaluations;   /* residual evaluations */
    int jacobians;     /* exact Jacobians formed */
    int converged;     /* ‖f‖ <= tol, or at the rounding floor (then residual may exceed tol) */
    double residual;   /* final ‖f‖ */
} svi_result;

/* The workspace for model m; NULL with err filled (MBS_ERR_ARG for a floating base or a joint that
 * is neither revolute nor prismatic, MBS_ERR_NOMEM). Keeps a pointer to m. */
svi *svi_new(const mbs_model *m, mbs_error *err);
void svi_free(svi *s);   /* NULL is fine */

/* L(q, v) = T - V (kinetic minus gravity's potential energy). */
double svi_lagrangian(svi *s, const double *q, const double *v);
/* L and its derivatives at (q, v), from the frame caches: Lq = ∂L/∂q, Lv = ∂L/∂q̇ (n each); when Lqq
 * is not NULL also Lqq = ∂²L/∂q∂q, Lqv (j, k) = ∂²L/∂q_j∂q̇_k, Lvv = ∂²L/∂q̇∂q̇ (n x n, column-major,
 * leading dimension n). Returns L. */
double svi_lagrangian_derivatives(svi *s, const double *q, const double *v, double *Lq, double *Lv, double *Lqq,
                                  double *Lqv, double *Lvv);
/* The midpoint discrete Lagrangian Ld(q1, q2) over a step dt (Lee et al. eq. 1). */
double svi_discrete_lagrangian(svi *s, double dt, const double *q1, const double *q2);

/* Fixes a step dt from q to q_next, having come from q_prev by a step dt: p^k = D2Ld(q_prev, q),
 * and v^k = (q - q_prev)/dt for the initial guesses. MBS_OK, or MBS_ERR_ARG when dt <= 0. */
int svi_begin(svi *s, double dt, const double *q_prev, const double *q);
/* The first step from a continuous state: p^k = ∂L/∂q̇(q, v) (= M(q) v), v^k = v. */
int svi_begin_velocity(svi *s, double dt, const double *q, const double *v);
/* The DEL residual f(q_next) = p^k + D1Ld(q^k, q_next) (n impulses, N m s), after a begin. */
void svi_residual(svi *s, const double *q_next, double *f);
/* The residual and its exact Jacobian ∂f/∂q_next (n x n, column-major, leading dimension ldJ >= n). */
void svi_jacobian(svi *s, const double *q_next, double *f, double *J, int ldJ);
/* Finds q_next with f(q_next) = 0 after a begin; d (the engine's data of the same model) serves the
 * ABA of IG3 and the impulse solve of SVI_RIQN. opt NULL: the defaults. MBS_OK (see
 * result->converged), MBS_ERR_ARG for bad options, MBS_ERR_NUMERIC when the residual or the update
 * stops being finite or the LU meets a singular Jacobian. */
int svi_solve(svi *s, mbs_data *d, const svi_options *opt, double *q_next, svi_result *result);
/* p^k of the last begin (n). */
const double *svi_momentum(const svi *s);

#endif
