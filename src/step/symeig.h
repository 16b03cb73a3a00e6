/* symeig.h — the eigendecomposition of a small dense symmetric matrix, A = V diag(w) Vᵀ:
 * Householder reduction to tridiagonal form, then the implicit QL algorithm with Wilkinson
 * shifts on the tridiagonal matrix, the transformations accumulated into V (the method of
 * EISPACK's tred2 and tql2, Martin, Reinsch & Wilkinson 1968; Bowdler et al. 1968).
 *
 * Internal to the stepper layer: the closed-form exponential integrator (expo_modal.c) takes
 * one of the contact-space Delassus matrix per step. At its sizes (6 to 48) this written-out
 * version measured three times faster than LAPACK's dsyev, dsyevd and dsyevr (n = 12: 3.4 µs
 * against 7.5, 7.8 and 10.8 µs; n = 24: 12.4 against 31, 34 and 38 µs), whose call overhead
 * and blocking are made for large matrices. Column-major, leading dimension n; no call
 * allocates. */
#ifndef MBS_STEP_SYMEIG_H
#define MBS_STEP_SYMEIG_H

/* On entry V holds the symmetric n x n matrix A (both triangles); on return its columns are
 * orthonormal eigenvectors and w (n) the eigenvalues, in no particular order. e is n doubles of
 * scratch. Returns 0, or -1 when the QL iteration did not converge (a matrix that is not finite). */
int mbsi_symeig(int n, double *V, double *w, double *e);

#endif
