/* expo_modal.h — the exponential integrator's contact-space step in closed form when each
 * contact's damping is proportional to its stiffness with one factor for all, B = βK
 * (Hammoud et al. 2022 use K = 1e5 N/m, B = 300 N·s/m in every direction: β = 3 ms). Then the
 * linear system (11) splits, in the eigenbasis of S = K^½ Υ K^½, into scalar damped oscillators
 * whose exponential and its integrals are closed forms: the averages λ̄ (eq. 23) and λ̄₂
 * (eq. 25) that src/step/expo.c otherwise takes from the Padé exponential of the augmented
 * matrix (29–30), exactly rather than approximately, from one small symmetric
 * eigendecomposition.
 *
 * Internal to the stepper layer (src/step/expo.c); the tests include it. The workspace's
 * buffers are carved in the stepper's one block; no call allocates. */
#ifndef MBS_STEP_EXPO_MODAL_H
#define MBS_STEP_EXPO_MODAL_H

#include "../base/base.h"

/* Scratch for contact spaces of up to nmax = 3 x contacts coordinates. */
typedef struct mbsi_modal {
    int nmax;
    double *S;      /* nmax²: S = R Υ R, then its eigenvectors */
    double *T;      /* nmax²: Υ R */
    double *w;      /* nmax: the eigenvalues of S */
    double *e;      /* nmax: scratch of the eigensolver */
    double *Y;      /* 4 nmax: the initial state and the drift, in S's eigenbasis */
    double *G;      /* 2 nmax: the two integrals of each mode's force, then back in contact space */
    double *C;      /* nmax²: C = R B (mbsi_modal_averages_factored) */
    /* the warm start (the calls with warm = 1): the last such matrix, its eigenvectors, its size
     * (0: none yet) and how many more calls may start from it before a cold decomposition */
    double *S0, *V0;   /* nmax² each */
    int n0, warm_left;
} mbsi_modal;

/* Carves w's buffers for nmax coordinates from c (run once counting, once on the block). */
void mbsi_modal_layout(mbs_carver *c, mbsi_modal *w, int nmax);

/* Saves or loads the warm start (checkpoints: a resumed run takes the same decompositions). */
void mbsi_modal_state(mbsi_modal *w, mbsi_state *s);

/* The divided differences Q_k = φ_k[x₁, x₂], k = 0..3 (φ_0 = exp, φ_k(x) = Σ_j x^j/(j+k)!), at
 * the two eigenvalues x₁, x₂ of h [[−βλ, 1], [−λ, 0]]: the scalars of one mode's integrals.
 * Any λ (>= 0 in use; a slightly negative one from rounding is fine), β >= 0, h > 0: under-,
 * critically and over-damped, and λ = 0, each to a few units of rounding. */
void mbsi_modal_divided_differences(double lam, double beta, double h, double Q[4]);

/* (Q_k(λ) − Q_k(0)) / λ, k = 0..3, with Q_k as above and Q_k(0) = 1/(k+1)!: the part of a mode's
 * integrals that its stiffness changes, per unit of its eigenvalue, to a few units of rounding
 * at any λ >= 0 (at λ = 0 the derivative, −hβ/(k+2)! − h²/(k+3)!). mbsi_modal_averages_factored
 * needs it, where a mode of small λ must not be divided by λ. */
void mbsi_modal_divided_differences_excess(double lam, double beta, double h, double Qt[4]);

/* The averages over a step h of the forces λ = −K Δp − B Δṗ, B = βK, of the contact-space
 * system (11) with the anchors' velocities ṗ0: d(Δp)/dt = Δṗ + ṗ0, d(Δṗ)/dt = −Υ(KΔp + BΔṗ) +
 * p̈_free (the form src/step/expo.c integrates). n = 3 x contacts; ups is Υ (n x n,
 * column-major, leading dimension n, symmetric positive semi-definite); R holds 9 numbers per
 * contact, the symmetric 3 x 3 square root K^½ of its stiffness (column-major; zero for a
 * contact without force); dp = Δp, dv = Δṗ, v0 = ṗ0 and acc = p̈_free are n each. Writes
 * lb = λ̄ = D x_int / h (eq. 23) and lb2 = λ̄₂ = 2 D x_int2 / h² (eq. 25), D = [−K −B]. Returns 0,
 * or -1 when the eigendecomposition failed (a matrix that is not finite).
 * warm = 1: the matrix is likely close to that of the last call with warm = 1 (the first pass of
 * consecutive steps): when it is, its eigendecomposition starts from that call's eigenvectors
 * (mbsi_symeig_warm), and this call's are kept for the next. The results agree with warm = 0 to
 * rounding, not bitwise. */
int mbsi_modal_averages(mbsi_modal *w, int warm, int n, const double *ups, const double *R, double beta, const double *dp,
                        const double *dv, const double *v0, const double *acc, double h, double *lb, double *lb2);

/* The same averages when Υ is given as B Bᵀ with B n x m (column-major, leading dimension ldb,
 * m <= the workspace's nmax): the eigenproblem is then that of CᵀC, C = R B, m x m, rather than
 * that of S = R Υ R = C Cᵀ, n x n. Several contact points on one rigid body move with its six
 * velocities: Romeo's four corners per sole give J = G J_b (G: each point's velocity from its
 * sole's twist), so Υ = G Υ_b Gᵀ has rank 12 for 24 rows, and B = G L with L Lᵀ = Υ_b
 * (src/step/expo.c). The modes of S outside C's range have λ = 0; with CᵀC = W Λ Wᵀ (S has the
 * same nonzero λ, its eigenvectors C W Λ^-½ on them), any function of S acting on y is
 *     f(S) y = f(0) y + C W diag((f(λ) − f(0)) / λ) Wᵀ Cᵀ y,
 * whose middle factor is mbsi_modal_divided_differences_excess's: nothing is divided by a small
 * λ. The same results as mbsi_modal_averages on Υ = B Bᵀ, to rounding; the other arguments and
 * the return value are its. */
int mbsi_modal_averages_factored(mbsi_modal *w, int warm, int n, int m, const double *B, int ldb, const double *R, double beta,
                                 const double *dp, const double *dv, const double *v0, const double *acc, double h,
                                 double *lb, double *lb2);

#endif
