/* ltdl.c — the tree-sparse factorisation M = Lᵀ D L (Featherstone, RBDA §6.3, tables 6.3–6.4).
 * L(k, j) is non-zero only when dof j is an ancestor of dof k, so factorising and solving
 * cost O(n d²) and O(n d) instead of O(n³) and O(n²). */
#include "../model/model_internal.h"
#include "mbs/dynamics.h"
#include "mbs/liegroup.h"
#include "dynamics_internal.h"

int mbs_ltdl(const mbs_model *m, mbs_data *d, const double *M)
{
    memcpy(d->L, M, (size_t)m->nv * (size_t)m->nv * sizeof(double));
    return mbsi_ltdl_in_place(m, d);
}

int mbsi_ltdl_in_place(const mbs_model *m, mbs_data *d)
{
    int n = m->nv;
    const int *lam = m->dof_parent;
    double *H = d->L;
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

/* x = s x − (l0 y0 + l1 y1 + l2 y2 + l3 y3) over n entries: four rows per pass over x, so that x
 * is loaded and stored once for four products (s scales by D⁻¹ in the same pass, else is 1) */
static inline void row_sub4(double *x, double s, const double *l, const double *y0, const double *y1,
                            const double *y2, const double *y3, int n)
{
    double l0 = l[0], l1 = l[1], l2 = l[2], l3 = l[3];
    for (int c = 0; c < n; c++) x[c] = s * x[c] - ((l0 * y0[c] + l1 * y1[c]) + (l2 * y2[c] + l3 * y3[c]));
}
static inline void row_sub1(double *x, double s, double l, const double *y, int n)
{
    for (int c = 0; c < n; c++) x[c] = s * x[c] - l * y[c];
}

/* x -= Σ_k l[k] y_k over columns [c0, c1), the rows y_k = Y + k·ld (k < count) being consecutive */
static void rows_pull(double *x, const double *l, const double *Y, size_t ld, int count, int c0, int c1)
{
    int k = 0;
    for (; k + 4 <= count; k += 4) {
        const double *y = Y + ld * k + c0;
        row_sub4(x + c0, 1.0, l + k, y, y + ld, y + 2 * ld, y + 3 * ld, c1 - c0);
    }
    for (; k < count; k++) row_sub1(x + c0, 1.0, l[k], Y + ld * k + c0, c1 - c0);
}

void mbsi_ltdl_solve_rows(const mbs_model *m, const mbs_data *d, double *X, int ncols, int nid)
{
    int n = m->nv;
    const int *lam = m->dof_parent;
    const double *L = d->L;
    const size_t ld = (size_t)ncols;
    for (int i = 0; i < n; i++) {
        double *xi = X + ld * i;
        memset(xi, 0, (size_t)nid * sizeof(double));
        if (nid) xi[i] = 1.0;
    }
    /* x ← L⁻ᵀ x, leaves first: row j pulls from the dofs of its subtree (j, end), the consecutive
     * rows below it, with the coefficients L(i, j) of column j of L. In the identity block those
     * rows are non-zero only on columns of j's subtree. */
    for (int j = n - 1; j >= 0; j--) {
        const mbs_body *b = &m->bodies[m->dof_body[j]];
        int end = b->idx_v + b->nv_subtree, count = end - j - 1;
        if (count <= 0) continue;
        double *xj = X + ld * j;
        const double *l = L + (size_t)n * j + j + 1, *Y = xj + ld;
        if (nid) rows_pull(xj, l, Y, ld, count, j + 1, end);
        rows_pull(xj, l, Y, ld, count, nid, ncols);
    }
    /* x ← L⁻¹ D⁻¹ x, root first: row i is scaled by D⁻¹ in its first pass and pulls from its
     * ancestors, four at a time. M⁻¹ being symmetric, only its upper triangle is formed: row i
     * from column i on, which needs the rows of its ancestors j < i from column i on only. */
    for (int i = 0; i < n; i++) {
        int c0 = nid ? i : 0, w = ncols - c0;
        double s = d->Dinv[i], *xi = X + ld * i + c0;
        const double *Xc = X + c0;
        int j = lam[i];
        if (j < 0)
            for (int c = 0; c < w; c++) xi[c] *= s;
        while (j >= 0) {
            int j1 = lam[j], j2 = j1 >= 0 ? lam[j1] : -1, j3 = j2 >= 0 ? lam[j2] : -1;
            if (j3 < 0) { row_sub1(xi, s, L[i + (size_t)n * j], Xc + ld * j, w); s = 1.0; j = j1; continue; }
            double l4[4] = {L[i + (size_t)n * j], L[i + (size_t)n * j1], L[i + (size_t)n * j2], L[i + (size_t)n * j3]};
            row_sub4(xi, s, l4, Xc + ld * j, Xc + ld * j1, Xc + ld * j2, Xc + ld * j3, w);
            s = 1.0;
            j = lam[j3];
        }
    }
}
