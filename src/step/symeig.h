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

/* The same decomposition of A (n x n, both triangles, not changed) from a basis that nearly
 * diagonalises it: on entry V holds orthonormal columns, the eigenvectors of a nearby matrix
 * (the previous step's); B = Vᵀ A V is then diagonalised by cyclic Jacobi rotations (Golub & Van
 * Loan, sec. 8.5), each applied to V as well. Off-diagonal entries of B of the order of its
 * rounding (n units of the largest diagonal entry) are left, as the QL sweeps leave theirs.
 * B and Vt are n x n and t n doubles of scratch. Returns 0, or -1 when B still had larger
 * off-diagonal entries after six sweeps (the start was not near; V is then spoilt) or
 * is not finite. Each call multiplies V by rotations: rounding accumulates in its
 * orthogonality over a chain of calls, which the caller bounds (expo_modal.c restarts from
 * mbsi_symeig every WARM_CHAIN calls). */
int mbsi_symeig_warm(int n, const double *A, double *V, double *w, double *B, double *Vt, double *t);

#endif
