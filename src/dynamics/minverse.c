/* minverse.c — the whole inverse of the joint-space inertia matrix, M⁻¹ (Pinocchio's
 * computeMinverse).
 *
 * Why through the tree-sparse factor rather than the articulated bodies: M = Lᵀ D L with L(k, j)
 * non-zero only where dof j is an ancestor of dof k (ltdl.c), so M⁻¹ = L⁻¹ D⁻¹ L⁻ᵀ applied to the
 * identity touches, for column j, only the rows of j's subtree in the first half (L⁻ᵀ e_j is zero
 * off them), and M⁻¹ being symmetric, only the upper triangle is formed in the second
 * (mbsi_ltdl_solve_rows with the identity block), on whole rows of the row-major block,
 * vectorised across the columns, where applying the articulated-body inverse to the identity
 * (mbs_abi_factor, then mbs_abi_solve) would take a 6 x 6 sweep of the tree per column.
 * `make bench-dynamics` times it (minverse) beside Pinocchio's computeMinverse. */
#include "../model/model_internal.h"
#include "mbs/dynamics.h"
#include "dynamics_internal.h"

int mbs_minverse(const mbs_model *m, mbs_data *d, const double *q, double *Minv)
{
    const int nv = m->nv;
    mbsi_crba_tree_lower(m, d, q, d->L);   /* straight into the factor's storage, factored in place */
    if (mbsi_ltdl_in_place(m, d) != MBS_OK) return MBS_ERR_MODEL;
    const int ld = mbsi_line_up(nv);   /* rows on whole cache lines */
    mbsi_ltdl_solve_rows(m, d, d->rows, ld, ld);
    mbsi_ltdl_minv_out(nv, d->rows, ld, Minv);
    return MBS_OK;
}
