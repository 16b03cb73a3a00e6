/* dynamics_internal.h — what the dynamics layer shares with the layers above beyond its public
 * header: the joint Jacobians from placements already computed, the LTDL factorisation in place, and its solve for many right-hand sides stored as rows;
 * the DRNEA workspace, its exact Jacobian (Algorithm 4) at the last evaluation, and that
 * Jacobian's O(n) elimination along the tree, for the variational integrator's root finders
 * (src/step/variational_solve.c). */
#ifndef MBS_DYNAMICS_INTERNAL_H
#define MBS_DYNAMICS_INTERNAL_H

#include "../model/model_internal.h"
#include "mbs/dynamics.h"
#include "mbs/liegroup.h"

/* The world joint Jacobian columns (d->J) from the placements already in d: what
 * mbs_compute_joint_jacobians does after its own forward kinematics, for a caller that has just
 * run mbs_forward_kinematics at the same q (the exponential integrator, with velocities, for J̇v). */
void mbsi_joint_jacobians_from_placements(const mbs_model *m, mbs_data *d);

/* out (nv x nv, column-major) = sign ∂(M(q) x)/∂q (tangent), from the world placements and joint
 * Jacobian columns in d at q (as mbs_rnea_derivatives or mbs_compute_joint_jacobians leave them).
 * RNEA's derivative in q is affine in q̈, so this is ∂rnea/∂q at q̈ + x less that at q̈: a second
 * acceleration's derivative for the price of a pass without velocities or placements. Overwrites
 * d's accelerations, forces and composite inertias. */
void mbsi_mass_times_dq(const mbs_model *m, mbs_data *d, const double *x, double sign, double *out);

/* sign · y_iᵀ (∂M/∂q_k) y_j for the n columns y of Y (nv x n, column-major), i ≤ j, and every dof k
 * (q in the tangent space), packed: out[i + j (j + 1)/2 + k n (n + 1)/2], from the world placements
 * and joint Jacobian columns in d (mbs_compute_joint_jacobians at q). A perturbation of dof k moves
 * the subtree of its joint rigidly by exp(S_k δ): with M = Σ_b J_bᵀ I_b J_b in world axes, every
 * term of that subtree is invariant but for the velocity its ancestors give it, V_λ(k) (the parent
 * body's), so
 *   y_iᵀ ∂M/∂q_k y_j = −(S_k × V_λ(k)(y_i)) · H_k(y_j) − (S_k × V_λ(k)(y_j)) · H_k(y_i),
 * H_k(y) = Σ_{b in the subtree} I_b V_b(y), the subtree's momentum. O(n nb + n² nv), against n RNEA
 * derivatives (O(n nv²)) for the same numbers. work: 6 n (2 nb + 1) doubles. */
void mbsi_mass_bilinear_dq(const mbs_model *m, const mbs_data *d, const double *Y, int n, double sign, double *out,
                           double *work);

/* Position-based dynamics' inertial energy (src/dynamics/pbd.c): E = s/2 Σ_b ∫ρ ‖X_b(x, θ) −
 * (A_b x + c_b)‖² dx over every body, target 12 doubles per body (A_b column-major, then c_b),
 * from the placements and joint Jacobian columns in d (mbs_compute_joint_jacobians at θ). Returns
 * E; grad (nv, may be NULL): its gradient in the tangent space at θ; hess (nv x nv, column-major,
 * may be NULL): ∂grad_j/∂q_k at entry (j, k), along θ ⊕ ε e_k. work: mbsi_pbd_work_doubles(m). */
size_t mbsi_pbd_work_doubles(const mbs_model *m);
double mbsi_pbd_energy(const mbs_model *m, const mbs_data *d, const double *target, double s, double *grad,
                       double *hess, double *work);

/* ½ vᵀ M v from the body velocities a forward-kinematics pass at (q, v) left in d. */
double mbsi_kinetic_energy_from_kinematics(const mbs_model *m, const mbs_data *d, const double *v);
/* RNEA's second half alone, on the kinematics mbs_forward_kinematics(m, d, q, v, a) left in d
 * (placements, body velocities and accelerations): its forward pass is that kinematics' with the
 * base accelerating at −g, which is added here to d->a (changed on return). The same τ as
 * mbs_rnea_fext(q, v, a) to rounding, for a caller that needs the kinematics anyway (the
 * exponential integrator's J̇v). a: the same joint accelerations, for the rotors' torques
 * diag(armature) a (NULL: q̈ = 0). */
void mbsi_rnea_from_kinematics(const mbs_model *m, mbs_data *d, const double *a, const double *fext, double *tau);

/* mbs_crba writing only what mbsi_ltdl_in_place reads: the entries (k, j), j = k or j an
 * ancestor of k, of M's lower triangle; the rest of M is left as it was. The factorisation in
 * place then does without the zeros and the mirrored upper triangle. */
void mbsi_crba_tree_lower(const mbs_model *m, mbs_data *d, const double *q, double *M);

/* mbs_ltdl on the M already in d->L (column-major), of which only the entries (k, j), j = k or
 * j an ancestor of k (the lower triangle's tree entries), are read: the rest may hold anything. */
int mbsi_ltdl_in_place(const mbs_model *m, mbs_data *d);

/* Solves M X = B in place for B of nv rows and ncols columns stored row-major (row i at
 * X + i·ncols): every tree operation then updates a whole contiguous row, which vectorises.
 * The first nid columns (0, or nv padded with zero columns up to a multiple of MBSI_LINE) are
 * the identity, set here: they come out as the upper triangle of M⁻¹ (row i from column i on;
 * the entries left of the diagonal are not M⁻¹'s). With X on a cache line and ncols and nid
 * multiples of MBSI_LINE (mbsi_line_up), every vector load of the solve is on a cache line. */
void mbsi_ltdl_solve_rows(const mbs_model *m, const mbs_data *d, double *X, int ncols, int nid);
/* Doubles per 64-byte cache line, and n rounded up to whole lines. A vector load of a row that
 * crosses a line costs two, and the solve is bound by its loads. */
enum { MBSI_LINE = 8 };
static inline int mbsi_line_up(int n) { return (n + MBSI_LINE - 1) / MBSI_LINE * MBSI_LINE; }
/* The identity block of mbsi_ltdl_solve_rows (its first nv columns, rows of X with leading
 * dimension ncols), M⁻¹'s upper triangle, into Minv (nv x nv, column-major), both triangles. */
void mbsi_ltdl_minv_out(int nv, const double *X, int ncols, double *Minv);
/* An nv x nv block of rows (leading dimension ncols, the block's first column at X) into O,
 * column-major: O(i, c) = X[i·ncols + c]. */
void mbsi_rows_to_columns(int nv, const double *X, int ncols, double *O);
/* With the factor of M in d: X1 ← M⁻¹ X1 and X2 ← M⁻¹ X2 (nv x nv, column-major, either NULL)
 * and Minv ← M⁻¹ (NULL: not formed), all in one mbsi_ltdl_solve_rows over d->rows, vectorised
 * across the right-hand sides, where mbs_ltdl_solve takes one column at a time. */
void mbsi_ltdl_solve_blocks(const mbs_model *m, mbs_data *d, double *Minv, double *X1, double *X2);

/* Its two halves, M⁻¹ = L⁻¹ D⁻¹ L⁻ᵀ: X ← L⁻ᵀ X (with the identity block set first), then
 * X ← L⁻¹ D⁻¹ X. A product J M⁻¹ Jᵀ is Yᵀ D⁻¹ Y with Y = L⁻ᵀ Jᵀ, the first half alone. */
void mbsi_ltdl_solve_rows_lt(const mbs_model *m, const mbs_data *d, double *X, int ncols, int nid);
void mbsi_ltdl_solve_rows_dl(const mbs_model *m, const mbs_data *d, double *X, int ncols, int nid);

/* ---- the exact DEL Jacobian eliminated along the tree (del_tree.c) ----
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
typedef struct mbs_del_tree {
    double *IA;      /* 36 x nbodies: I^A_i, then I^a_i (column-major 6x6) */
    double *Dinv;    /* 36 x nbodies: D_i⁻¹ (nv_i x nv_i, leading dimension 6) */
    double *U;       /* 6 x nv: I^A_i S_i */
    double *W;       /* 6 x nv: (S_iᵀ I^A_i)ᵀ */
    double *p;       /* 6 x nbodies: scratch of a solve (impulses, then twists) */
    double *u;       /* nv: scratch of a solve */
} mbs_del_tree;

/* Factors A from B (36 x nbodies) and each body's placement in its parent's frame at q^k
 * (Rk, pk) and at q^{k+1} (R1, p1); rotor (36 x nbodies, NULL: none) adds each joint's rotor
 * block to D_i (its rows of A in its own columns: the armature's term, see mbs_vi). Returns 0, or 1 when a pivot block D_i is singular to
 * round-off (A itself may be regular: the elimination pivots only within each body's block). */
int mbsi_del_tree_factor(const mbs_model *m, mbs_del_tree *t, const double *B, const double *Rk, const double *pk,
                        const double *R1, const double *p1, const double *rotor);

/* x ← A⁻¹ x (nv entries) with the factors of mbsi_del_tree_factor. */
void mbsi_del_tree_solve(const mbs_model *m, mbs_del_tree *t, const double *Rk, const double *pk, const double *R1,
                        const double *p1, double *x);

/* ---- the DRNEA workspace (drnea.c; the public functions are in mbs/dynamics.h) ----
 * One block from mbs_vi_new holds DRNEA's arrays and the root finders' scratch, so that a step
 * of the variational integrator never allocates. */
struct mbs_vi {
    int nb, nq, nv;
    double dt, h;                /* the step, and the weight of the forcing at t_k */
    /* fixed by begin */
    double *Rk, *pk;             /* 9 x nb, 3 x nb: body in its parent at q^k */
    double *oRk, *opk;           /* 9 x nb, 3 x nb: body in the world at q^k */
    double *cst;                 /* 6 x nb: π_i + h (f_grav + f_ext) */
    double *Q;                   /* nv: h τ */
    double *qk, *vk, *tau, *fext;
    int has_fext;
    /* one evaluation at q^{k+1} */
    double *R1, *p1;             /* body in its parent at q^{k+1} (Algorithm 4), at q^{k-1} (begin) */
    double *dE, *de;             /* ΔT_i as (R - 1, p): see displacement() in drnea.c */
    double *xi, *mu, *F;         /* 6 x nb: log ΔT_i, μ_i, F_i */
    /* Algorithm 4 */
    double *B, *Psi, *dF;        /* 36 x nb, 6 x nb, 6 x nb */
    /* the rotors (armature): their discrete momentum arm (Δ/Δt − v^k) per coordinate, Δ the
     * joint's difference(q^k, q^{k+1}), adds to the residual; its Jacobian, arm/Δt · ∂Δ/∂q^{k+1},
     * is one n x n block per joint (leading dimension 6), on A's diagonal */
    double *drot, *rot;          /* nv: Δ; 36 x nb: the blocks */
    /* the root finders' scratch (src/step/variational_solve.c) */
    double *J, *H;               /* nv x nv: Newton's Jacobian, Broyden's inverse */
    mbs_del_tree tree;           /* tree Newton's factors */
    double *e, *e2, *dq, *y, *t1, *t2;
    void *ipiv;                  /* nv lapack_int: LAPACK's pivots */
    void *block;                 /* the one allocation */
};

/* What every exact Jacobian needs at q_next: the joint placements at q^{k+1} (R1, p1) and the
 * B_i. The ξ_i it reads are those of the last residual evaluation, which must have been at q_next. */
void mbsi_vi_linearise(const mbs_model *m, mbs_vi *w, const double *q_next);
/* Algorithm 4 at the configuration of the last residual evaluation, q_next: J = ∂f/∂q_next
 * (column-major, leading dimension ldJ). mbs_vi_jacobian without the residual. */
void mbsi_vi_jacobian_at(const mbs_model *m, mbs_vi *w, const double *q_next, double *J, int ldJ);

#endif
