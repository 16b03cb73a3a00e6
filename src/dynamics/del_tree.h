/* del_tree.h — solving with the exact Jacobian of the discrete Euler–Lagrange residual in
 * O(n), by Gaussian elimination along the tree (internal to the variational integrator).
 *
 * Algorithm 4 of Lee et al. (WAFR 2016) gives the Jacobian of the DRNEA residual as
 *   A = Σ_i L_iᵀ B_i R_i,
 * where B_i (6x6, not symmetric) is body i's ∂μ_i/∂ξ_i · Jr⁻¹(ξ_i), R_i maps joint rates to
 * body i's twist through the tree's motion transforms at q^{k+1}, and L_i does the same at
 * q^k (the impulses of the backward pass travel with the placements at q^k). That is the shape
 * of a mass matrix Σ Jᵢᵀ G_i J_i with a non-symmetric "inertia" and two sets of transforms, and
 * the articulated-body elimination goes through unchanged: articulated matrices
 *   I^A_i = B_i + Σ_c X^k*_c I^a_c X^{k+1}_c,   D_i = S_iᵀ I^A_i S_i,
 *   I^a_i = I^A_i - I^A_i S_i D_i⁻¹ S_iᵀ I^A_i,
 * then one backward and one forward pass per right-hand side, as the impulse form of the ABA
 * (abi.c) does for M. Exact Newton steps at O(n) per iteration — where the paper pays O(n²) to
 * form A and O(n³) to factor it. */
#ifndef MBS_DEL_TREE_H
#define MBS_DEL_TREE_H

#include "../model/model_internal.h"
#include "mbs/dynamics.h"
#include "mbs/liegroup.h"

typedef struct del_tree {
    double *IA;      /* 36 x nbodies: I^A_i, then I^a_i (column-major 6x6) */
    double *Dinv;    /* 36 x nbodies: D_i⁻¹ (nv_i x nv_i, leading dimension 6) */
    double *U;       /* 6 x nv: I^A_i S_i */
    double *W;       /* 6 x nv: (S_iᵀ I^A_i)ᵀ */
    double *p;       /* 6 x nbodies: scratch of a solve (impulses, then twists) */
    double *u;       /* nv: scratch of a solve */
} del_tree;

/* Factors A from B (36 x nbodies) and each body's placement in its parent's frame at q^k
 * (Rk, pk) and at q^{k+1} (R1, p1). Returns 0, or 1 when a pivot block D_i is singular to
 * round-off (A itself may be regular: the elimination pivots only within each body's block). */
int del_tree_factor(const mbs_model *m, del_tree *t, const double *B, const double *Rk, const double *pk,
                    const double *R1, const double *p1);

/* x ← A⁻¹ x (nv entries) with the factors of del_tree_factor. */
void del_tree_solve(const mbs_model *m, del_tree *t, const double *Rk, const double *pk, const double *R1,
                    const double *p1, double *x);

#endif
