/* ltdl.c — the tree-sparse factorisation M = Lᵀ D L (Featherstone, RBDA §6.3, tables 6.3–6.4).
 * L(k, j) is non-zero only when dof j is an ancestor of dof k, so factorising and solving
 * cost O(n d²) and O(n d) instead of O(n³) and O(n²). */
#include "../internal.h"
#include "ltdl.h"

int mbs_ltdl(const mbs_model *m, mbs_data *d, const double *M)
{
    int n = m->nv;
    const int *lam = m->dof_parent;
    double *H = d->L;
    memcpy(H, M, (size_t)n * n * sizeof(double));
    for (int k = n - 1; k >= 0; k--) {
        double Hkk = H[k + (size_t)n * k];
        if (!(Hkk > 0)) return MBS_ERR_MODEL;
        for (int i = lam[k]; i >= 0; i = lam[i]) {
            double a = H[k + (size_t)n * i] / Hkk;
            for (int j = i; j >= 0; j = lam[j]) H[i + (size_t)n * j] -= a * H[k + (size_t)n * j];
            H[k + (size_t)n * i] = a;
        }
    }
    for (int k = 0; k < n; k++) {
        d->D[k] = H[k + (size_t)n * k];
        d->Dinv[k] = 1.0 / d->D[k];
    }
    return MBS_OK;
}

void mbs_ltdl_solve(const mbs_model *m, const mbs_data *d, double *b, int nrhs, int ldb)
{
    int n = m->nv;
    const int *lam = m->dof_parent;
    const double *L = d->L;
    for (int c = 0; c < nrhs; c++) {
        double *x = b + (size_t)ldb * c;
        /* x ← L⁻ᵀ x: each dof, leaves first, pushes its value to its ancestors. */
        for (int i = n - 1; i >= 0; i--)
            for (int j = lam[i]; j >= 0; j = lam[j]) x[j] -= L[i + (size_t)n * j] * x[i];
        for (int i = 0; i < n; i++) x[i] *= d->Dinv[i];
        /* x ← L⁻¹ x: each dof, root first, pulls from its ancestors. */
        for (int i = 0; i < n; i++)
            for (int j = lam[i]; j >= 0; j = lam[j]) x[i] -= L[i + (size_t)n * j] * x[j];
    }
}

void mbs_ltdl_solve_rows(const mbs_model *m, const mbs_data *d, double *X, int ncols)
{
    int n = m->nv;
    const int *lam = m->dof_parent;
    const double *L = d->L;
    for (int i = n - 1; i >= 0; i--) {
        const double *xi = X + (size_t)ncols * i;
        for (int j = lam[i]; j >= 0; j = lam[j]) {
            double l = L[i + (size_t)n * j], *xj = X + (size_t)ncols * j;
            for (int c = 0; c < ncols; c++) xj[c] -= l * xi[c];
        }
    }
    for (int i = 0; i < n; i++) {
        double s = d->Dinv[i], *xi = X + (size_t)ncols * i;
        for (int c = 0; c < ncols; c++) xi[c] *= s;
    }
    for (int i = 0; i < n; i++) {
        double *xi = X + (size_t)ncols * i;
        for (int j = lam[i]; j >= 0; j = lam[j]) {
            double l = L[i + (size_t)n * j];
            const double *xj = X + (size_t)ncols * j;
            for (int c = 0; c < ncols; c++) xi[c] -= l * xj[c];
        }
    }
}
