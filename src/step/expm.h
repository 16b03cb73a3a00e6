/* expm.h — the action of the matrix exponential, X = e^A V, by scaling and squaring with
 * diagonal Padé approximants (Higham, "The scaling and squaring method for the matrix
 * exponential revisited", SIMAX 2005), with optional diagonal balancing (the scaling of
 * LAPACK's dgebal, Parlett & Reinsch 1969), and the reduced variants of Hammoud et al. 2022
 * §5.3: no scaling (s = 0) and a Padé degree j ∈ {1, 2, 3, 5, 7}, i.e. 0 to 4 matrix–matrix
 * products.
 *
 * Internal to the stepper layer (the exponential integrator, src/step/expo.c). Dense
 * matrices are column-major with an explicit leading dimension. Every buffer lives in a
 * workspace made once for the largest size; no call allocates. */
#ifndef MBS_STEP_EXPM_H
#define MBS_STEP_EXPM_H

#include "mbs/error.h"

#ifdef __cplusplus
extern "C" {
#endif

/* max_mat_mult value for the complete algorithm of Higham 2005 (double precision). */
#define MBS_EXPM_FULL (-1)

typedef struct mbs_expm_ws mbs_expm_ws;

/* What one call did, for tests and benchmarks. */
typedef struct mbs_expm_info {
    int order;        /* Padé degree m of the approximant */
    int squarings;    /* s: the approximant was taken at A / 2^s */
    int mat_mults;    /* n x n matrix–matrix products (powers, Padé, squarings) */
    int balanced;     /* 1 when the balanced matrix was used */
    double norm1;     /* 1-norm of the (balanced) matrix before scaling */
} mbs_expm_info;

/* A workspace for matrices up to nmax x nmax and up to nmax right-hand columns; NULL when
 * out of memory or nmax < 1. */
mbs_expm_ws *mbsi_expm_ws_new(int nmax);
void mbsi_expm_ws_free(mbs_expm_ws *ws);

/* X = e^A V for the n x n matrix A (leading dimension lda) and the n x k matrix V (ldv);
 * X (ldx) may be V itself. max_mat_mult: MBS_EXPM_FULL, or 0..4 for the reduced variants
 * (s = 0, degree at most 1, 2, 3, 5, 7 — a lower degree only when it already reaches double
 * precision, Higham's θ_m); balance: 1 to balance A first (kept only when it lowers ‖A‖₁).
 * Computes N(A)V and then solves D(A) X = N(A)V (Hammoud eq. 33) rather than forming e^A.
 * info may be NULL. Returns MBS_OK; MBS_ERR_ARG for bad sizes or options; MBS_ERR_NUMERIC when A
 * is not finite or the Padé denominator D(A) is singular. */
int mbsi_expm_apply(mbs_expm_ws *ws, int n, const double *A, int lda, int k, const double *V, int ldv,
                   double *X, int ldx, int max_mat_mult, int balance, mbs_expm_info *info);

/* E = e^A (n x n, lde), as mbsi_expm_apply with V = I. */
int mbsi_expm(mbs_expm_ws *ws, int n, const double *A, int lda, double *E, int lde, int max_mat_mult,
             int balance, mbs_expm_info *info);

/* The building block, exposed for tests: X = r_m(A / 2^s)^(2^s) V with the Padé degree m in
 * {1, 2, 3, 5, 7, 9, 13} and s >= 0 squarings, no balancing. Same returns as above. */
int mbsi_expm_pade_apply(mbs_expm_ws *ws, int n, const double *A, int lda, int m, int s, int k,
                        const double *V, int ldv, double *X, int ldx, mbs_expm_info *info);

#ifdef __cplusplus
}
#endif
#endif
