/* minverse.c — the whole inverse of the joint-space inertia matrix, M⁻¹ (Pinocchio's
 * computeMinverse).
 *
 * Why through the tree-sparse factor rather than the articulated bodies: M = Lᵀ D L with L(k, j)
 * non-zero only where dof j is an ancestor of dof k (ltdl.c), so M⁻¹ = L⁻¹ D⁻¹ L⁻ᵀ applied to the
 * identity touches, for column j, only the rows of j's subtree in the first half (L⁻ᵀ e_j is zero
 * off them), and M⁻¹ being symmetric, only the upper triangle is formed in the second
 * (mbsi_ltdl_solve_rows with the identity block), on whole rows of the row-major block,
 * vectorised across the columns. Applying the articulated-body inverse to the identity instead
 * (mbs_abi_factor, then mbs_abi_solve's 6 x 6 sweep per column) took ten times as long: Romeo
 * (nv 37) 49 against 5.0 µs, Solo 10.4 against 1.7 µs (by hand, 2.10 GHz Zen 5, min of 30 × 2000
 * calls). Two reorderings of the solve were tried and not kept: the factorisation's updates on
 * the upper triangle as contiguous runs of consecutive dofs, and the identity block's pull
 * grouped by the rows' own subtrees (both came out slower: runs of one to seven entries). */
#include "../model/model_internal.h"
#include "mbs/dynamics.h"
#include "dynamics_internal.h"

int mbs_minverse(const mbs_model *m, mbs_data *d, const double *q, double *Minv)
{
    const int nv = m->nv;
    mbs_crba(m, d, q, d->L);   /* straight into the factor's storage, factored in place */
    if (mbsi_ltdl_in_place(m, d) != MBS_OK) return MBS_ERR_MODEL;
    double *X = d->rows;
    mbsi_ltdl_solve_rows(m, d, X, nv, nv);
    /* row i holds M⁻¹'s upper triangle from column i on: mirrored into both triangles */
    for (int i = 0; i < nv; i++) {
        const double *x = X + (size_t)nv * i;
        for (int c = i; c < nv; c++) Minv[i + (size_t)nv * c] = Minv[c + (size_t)nv * i] = x[c];
    }
    return MBS_OK;
}
