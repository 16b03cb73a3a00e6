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

/* Row k of the tree-sparse H is non-zero only in the columns of k and its ancestors; packed as
 * [H(k, k), H(k, λ(k)), H(k, λ²(k)), ...] (d->Lp, from dof_anc_at[k] + k), the row of an
 * ancestor i = λᵗ(k) holds exactly the columns of k's row from its t-th ancestor on, in the same
 * order (i's ancestors are the ones after it in k's list). So eliminating k updates each
 * ancestor's packed row by one contiguous multiply-subtract, where in the n x n storage each
 * entry took an index load and a column stride. Gathered from d->L, factorised, scattered back:
 * the same operations in the same order as in place, bitwise. */
int mbsi_ltdl_in_place(const mbs_model *m, mbs_data *d)
{
    const int n = m->nv, *at = m->dof_anc_at, *anc = m->dof_anc;
    double *H = d->L, *P = d->Lp;
    for (int k = 0; k < n; k++) {
        double *pk = P + at[k] + k;
        const int *ak = anc + at[k], na = at[k + 1] - at[k];
        pk[0] = H[k + (size_t)n * k];
        for (int t = 0; t < na; t++) pk[1 + t] = H[k + (size_t)n * ak[t]];
    }
    for (int k = n - 1; k >= 0; k--) {
        double *pk = P + at[k] + k;
        double Hkk = pk[0];
        if (!(Hkk > 0)) return MBS_ERR_MODEL;
        /* one division per dof, not one per (dof, ancestor) pair: the divider, not the
         * multiply-adds, bounded the factorisation of a floating base's dense 6 x 6 block */
        double inv = 1.0 / Hkk;
        d->D[k] = Hkk;
        d->Dinv[k] = inv;
        const int *ak = anc + at[k], na = at[k + 1] - at[k];
        for (int t = 0; t < na; t++) {
            int i = ak[t];
            double a = pk[1 + t] * inv, *restrict pi = P + at[i] + i;
            const double *restrict r = pk + 1 + t;
            for (int u = 0; u < na - t; u++) pi[u] -= a * r[u];
            pk[1 + t] = a;
        }
    }
    for (int k = 0; k < n; k++) {
        const double *pk = P + at[k] + k;
        const int *ak = anc + at[k], na = at[k + 1] - at[k];
        H[k + (size_t)n * k] = pk[0];
        for (int t = 0; t < na; t++) H[k + (size_t)n * ak[t]] = pk[1 + t];
    }
    return MBS_OK;
}

void mbs_ltdl_solve(const mbs_model *m, const mbs_data *d, double *b, int nrhs, int ldb)
{
    int n = m->nv;
    const int *at = m->dof_anc_at;
    const double *P = d->Lp;   /* the factor's packed rows (mbsi_ltdl_in_place) */
    for (int c = 0; c < nrhs; c++) {
        double *x = b + (size_t)ldb * c;
        /* x ← L⁻ᵀ x: each dof, leaves first, pushes its value to its ancestors. */
        for (int i = n - 1; i >= 0; i--) {
            double xi = x[i];
            const double *li = P + i + 1;   /* li[t]: row i's packed entry for dof_anc[t] */
            for (int t = at[i]; t < at[i + 1]; t++) x[m->dof_anc[t]] -= li[t] * xi;
        }
        for (int i = 0; i < n; i++) x[i] *= d->Dinv[i];
        /* x ← L⁻¹ x: each dof, root first, pulls from its ancestors. */
        for (int i = 0; i < n; i++) {
            double s = 0;
            const double *li = P + i + 1;
            for (int t = at[i]; t < at[i + 1]; t++) s += li[t] * x[m->dof_anc[t]];
            x[i] -= s;
        }
    }
}

/* x = s x − (l0 y0 + l1 y1 + l2 y2 + l3 y3) over n entries: four rows per pass over x, so that x
 * is loaded and stored once for four products (s scales by D⁻¹ in the same pass, else is 1) */
static inline void row_sub4(double *restrict x, double s, const double *l, const double *y0, const double *y1,
                            const double *y2, const double *y3, int n)
{
    double l0 = l[0], l1 = l[1], l2 = l[2], l3 = l[3];
    for (int c = 0; c < n; c++) x[c] = s * x[c] - ((l0 * y0[c] + l1 * y1[c]) + (l2 * y2[c] + l3 * y3[c]));
}
static inline void row_sub1(double *restrict x, double s, double l, const double *y, int n)
{
    for (int c = 0; c < n; c++) x[c] = s * x[c] - l * y[c];
}
static inline void row_sub8(double *restrict x, double s, const double *l, const double *const *y, int n)
{
    const double *y0 = y[0], *y1 = y[1], *y2 = y[2], *y3 = y[3], *y4 = y[4], *y5 = y[5], *y6 = y[6], *y7 = y[7];
    double l0 = l[0], l1 = l[1], l2 = l[2], l3 = l[3], l4 = l[4], l5 = l[5], l6 = l[6], l7 = l[7];
    for (int c = 0; c < n; c++)
        x[c] = s * x[c] - (((l0 * y0[c] + l1 * y1[c]) + (l2 * y2[c] + l3 * y3[c])) +
                           ((l4 * y4[c] + l5 * y5[c]) + (l6 * y6[c] + l7 * y7[c])));
}
static inline void row_sub2(double *restrict x, double s, const double *l, const double *y0, const double *y1, int n)
{
    double l0 = l[0], l1 = l[1];
    for (int c = 0; c < n; c++) x[c] = s * x[c] - (l0 * y0[c] + l1 * y1[c]);
}

/* The columns [lo, hi) of rows k .. k + g − 1 (dofs) that a pull touches: [c0, c1), or in the
 * identity block [0, c1) (end = the dofs' subtree ends), where row k of L⁻ᵀ is non-zero only on
 * k's subtree [k, end_k), the union of the g rows' subtrees, widened to whole cache lines (the
 * columns added are zeros in those rows). Consecutive dofs are a chain (nested subtrees) or a
 * leaf before a sibling, so that union holds few zeros. */
static inline void pull_span(const int *end, int k, int g, int c0, int c1, int *lo, int *hi)
{
    *lo = c0, *hi = c1;
    if (!end) return;
    int e = k + 1;
    for (int r = k; r < k + g; r++) e = end[r] > e ? end[r] : e;
    *lo = k / MBSI_LINE * MBSI_LINE;
    *hi = mbsi_line_up(e) < c1 ? mbsi_line_up(e) : c1;
}

/* x -= Σ_r l[r] y_r, the rows y_r = Y + r·ld (r < count) of dofs k0 + r being consecutive, eight,
 * four or one at a time, over the columns pull_span gives */
static void rows_pull(double *x, const double *l, const double *Y, size_t ld, int count, int k0, int c0, int c1,
                      const int *end)
{
    int r = 0, lo, hi;
    for (; r + 8 <= count; r += 8) {
        pull_span(end, k0 + r, 8, c0, c1, &lo, &hi);
        const double *y = Y + ld * r + lo, *ys[8] = {y, y + ld, y + 2 * ld, y + 3 * ld, y + 4 * ld, y + 5 * ld,
                                                     y + 6 * ld, y + 7 * ld};
        row_sub8(x + lo, 1.0, l + r, ys, hi - lo);
    }
    for (; r + 4 <= count; r += 4) {
        pull_span(end, k0 + r, 4, c0, c1, &lo, &hi);
        const double *y = Y + ld * r + lo;
        row_sub4(x + lo, 1.0, l + r, y, y + ld, y + 2 * ld, y + 3 * ld, hi - lo);
    }
    for (; r < count; r++) {
        pull_span(end, k0 + r, 1, c0, c1, &lo, &hi);
        row_sub1(x + lo, 1.0, l[r], Y + ld * r + lo, hi - lo);
    }
}

void mbsi_ltdl_solve_rows_lt(const mbs_model *m, const mbs_data *d, double *X, int ncols, int nid)
{
    int n = m->nv;
    const double *L = d->L;
    const size_t ld = (size_t)ncols;
    for (int i = 0; i < n; i++) {
        double *xi = X + ld * i;
        memset(xi, 0, (size_t)nid * sizeof(double));
        if (nid) xi[i] = 1.0;
    }
    /* x ← L⁻ᵀ x, leaves first: row j pulls from the dofs of its subtree (j, end), the consecutive
     * rows below it, with the coefficients L(i, j) of column j of L. In the identity block those
     * rows are non-zero only on columns of their own subtrees. */
    for (int j = n - 1; j >= 0; j--) {
        int count = m->dof_end[j] - j - 1;
        if (count <= 0) continue;
        double *xj = X + ld * j;
        const double *l = L + (size_t)n * j + j + 1, *Y = xj + ld;
        if (nid) rows_pull(xj, l, Y, ld, count, j + 1, 0, nid, m->dof_end);
        rows_pull(xj, l, Y, ld, count, j + 1, nid, ncols, NULL);
    }
}

void mbsi_ltdl_solve_rows_dl(const mbs_model *m, const mbs_data *d, double *X, int ncols, int nid)
{
    int n = m->nv;
    const size_t ld = (size_t)ncols;
    /* x ← L⁻¹ D⁻¹ x, root first: row i is scaled by D⁻¹ in its first pass and pulls from its
     * ancestors, eight at a time. M⁻¹ being symmetric, only its upper triangle is formed: row i
     * from column i on, which needs the rows of its ancestors j < i from column i on only. The
     * row starts at the cache line holding column i: the columns before i it computes too are
     * left of its diagonal and never read as M⁻¹'s (an entry left of a row's diagonal feeds
     * only entries left of later rows' diagonals). */
    for (int i = 0; i < n; i++) {
        int c0 = nid ? i / MBSI_LINE * MBSI_LINE : 0, w = ncols - c0;
        double s = d->Dinv[i], *xi = X + ld * i + c0;
        const double *Xc = X + c0;
        const int *anc = m->dof_anc + m->dof_anc_at[i], nanc = m->dof_anc_at[i + 1] - m->dof_anc_at[i];
        const double *Pi = d->Lp + m->dof_anc_at[i] + i + 1;   /* row i's factor entries, packed */
        if (nanc == 0)
            for (int c = 0; c < w; c++) xi[c] *= s;
        for (int t = 0; t < nanc;) {
            /* the next (up to) eight ancestors' coefficients and rows, pulled eight, four, two or
             * one at a time */
            double la[8];
            const double *ya[8];
            int na = 0, k = 0;
            for (; t < nanc && na < 8; t++, na++) {
                la[na] = Pi[t];
                ya[na] = Xc + ld * anc[t];
            }
            if (na == 8) row_sub8(xi, s, la, ya, w), k = 8, s = 1.0;
            for (; k + 4 <= na; k += 4, s = 1.0) row_sub4(xi, s, la + k, ya[k], ya[k + 1], ya[k + 2], ya[k + 3], w);
            for (; k + 2 <= na; k += 2, s = 1.0) row_sub2(xi, s, la + k, ya[k], ya[k + 1], w);
            for (; k < na; k++, s = 1.0) row_sub1(xi, s, la[k], ya[k], w);
        }
    }
}

void mbsi_ltdl_solve_rows(const mbs_model *m, const mbs_data *d, double *X, int ncols, int nid)
{
    mbsi_ltdl_solve_rows_lt(m, d, X, ncols, nid);
    mbsi_ltdl_solve_rows_dl(m, d, X, ncols, nid);
}

void mbsi_rows_to_columns(int nv, const double *X, int ncols, double *O)
{
    /* four columns at a time: each row's four entries in one load, four output columns filled
     * in step */
    int c = 0;
    for (; c + 4 <= nv; c += 4) {
        double *o0 = O + (size_t)nv * c, *o1 = o0 + nv, *o2 = o1 + nv, *o3 = o2 + nv;
        for (int i = 0; i < nv; i++) {
            const double *x = X + (size_t)ncols * i + c;
            o0[i] = x[0]; o1[i] = x[1]; o2[i] = x[2]; o3[i] = x[3];
        }
    }
    for (; c < nv; c++)
        for (int i = 0; i < nv; i++) O[i + (size_t)nv * c] = X[(size_t)ncols * i + c];
}

void mbsi_ltdl_solve_blocks(const mbs_model *m, mbs_data *d, double *Minv, double *X1, double *X2)
{
    const int nv = m->nv, nid = Minv ? mbsi_line_up(nv) : 0;
    double *blk[2] = {X1, X2};
    int at[2] = {nid, nid + (X1 ? nv : 0)};
    const int ncols = mbsi_line_up(at[1] + (X2 ? nv : 0));
    double *R = d->rows;
    /* column c of a block is column at + c of the rows; the padding after the blocks is zeroed
     * (the solve runs over it) */
    for (int i = 0; i < nv; i++) memset(R + (size_t)ncols * i + nid, 0, sizeof(double) * (size_t)(ncols - nid));
    for (int b = 0; b < 2; b++)
        if (blk[b])
            for (int c = 0; c < nv; c++)
                for (int i = 0; i < nv; i++) R[(size_t)ncols * i + at[b] + c] = blk[b][i + (size_t)nv * c];
    mbsi_ltdl_solve_rows(m, d, R, ncols, nid);
    if (Minv) mbsi_ltdl_minv_out(nv, R, ncols, Minv);
    for (int b = 0; b < 2; b++)
        if (blk[b]) mbsi_rows_to_columns(nv, R + at[b], ncols, blk[b]);
}

void mbsi_ltdl_minv_out(int nv, const double *X, int ncols, double *Minv)
{
    /* row i of the upper triangle is column i of the lower one: copied whole, then mirrored with
     * strided loads and contiguous stores (strided stores were the slower) */
    for (int i = 0; i < nv; i++)
        memcpy(Minv + (size_t)nv * i + i, X + (size_t)ncols * i + i, sizeof(double) * (size_t)(nv - i));
    for (int c = 1; c < nv; c++)
        for (int r = 0; r < c; r++) Minv[r + (size_t)nv * c] = Minv[c + (size_t)nv * r];
}
