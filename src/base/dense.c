/* dense.c — the small dense numerics several layers share. */
#include <math.h>
#include <string.h>

#include "base.h"

double mbsi_smooth_step(double x)
{
    return x <= 0 ? 0 : x >= 1 ? 1 : 0.5 - 0.5 * cos(MBS_PI * x);
}

void mbsi_spd_solve(double *A, int n, double *b)
{
    double dmax = 0;
    for (int i = 0; i < n; i++) dmax = fmax(dmax, A[i * (n + 1)]);
    for (int i = 0; i < n; i++) A[i * (n + 1)] += 1e-12 * dmax + 1e-300;
    /* by hand rather than LAPACK's dposv: the callers' systems are 6 x 6 to a few tens, where
     * dposv's blocking, copies and buffer lookups cost more than the arithmetic */
    if (mbsi_cholesky(A, n, n, 0) >= 0) {
        for (int i = 0; i < n; i++) b[i] = 0;
        return;
    }
    for (int i = 0; i < n; i++) {   /* L y = b */
        double s = b[i];
        for (int k = 0; k < i; k++) s -= A[i + (size_t)n * k] * b[k];
        b[i] = s / A[i + (size_t)n * i];
    }
    for (int i = n - 1; i >= 0; i--) {   /* Lᵀ x = y */
        const double *li = A + (size_t)n * i;
        double s = b[i];
        for (int k = i + 1; k < n; k++) s -= li[k] * b[k];
        b[i] = s / li[i];
    }
}

int mbsi_cholesky(double *A, int n, int lda, double floor)
{
    for (int j = 0; j < n; j++) {
        double *aj = A + (size_t)lda * j, p = aj[j];
        for (int k = 0; k < j; k++) p -= A[j + (size_t)lda * k] * A[j + (size_t)lda * k];
        if (!(p > floor) || !isfinite(p)) return j;
        double l = sqrt(p);
        aj[j] = l;
        for (int i = j + 1; i < n; i++) {
            double s = aj[i];
            for (int k = 0; k < j; k++) s -= A[i + (size_t)lda * k] * A[j + (size_t)lda * k];
            aj[i] = s / l;
        }
    }
    return -1;
}

/* Each row update an axpy along a whole row, across the right-hand sides: at a few dozen columns
 * cheaper than a BLAS call's set-up, and than a column at a time, whose sums are one long
 * dependency chain. */
void mbsi_cholesky_solve_rows(const double *L, int nf, double *Y, int ncol)
{
    for (int i = 0; i < nf; i++) {
        double *restrict yi = Y + (size_t)ncol * i;
        for (int k = 0; k < i; k++) {
            const double l = L[i + (size_t)nf * k], *restrict yk = Y + (size_t)ncol * k;
            for (int c = 0; c < ncol; c++) yi[c] -= l * yk[c];
        }
        const double r = 1 / L[i + (size_t)nf * i];
        for (int c = 0; c < ncol; c++) yi[c] *= r;
    }
    for (int i = nf - 1; i >= 0; i--) {
        double *restrict yi = Y + (size_t)ncol * i;
        for (int k = i + 1; k < nf; k++) {
            const double l = L[k + (size_t)nf * i], *restrict yk = Y + (size_t)ncol * k;
            for (int c = 0; c < ncol; c++) yi[c] -= l * yk[c];
        }
        const double r = 1 / L[i + (size_t)nf * i];
        for (int c = 0; c < ncol; c++) yi[c] *= r;
    }
}

void mbsi_add_task(double *H, int ldH, double *g, const double *J, int ldJ, int r0, int nr, int ncols, const double *e,
                   double weight)
{
    for (int a = 0; a < ncols; a++) {
        const double *ja = J + (size_t)ldJ * a + r0;
        int zero = 1;
        for (int r = 0; r < nr && zero; r++) zero = ja[r] == 0;
        if (zero) continue;   /* a coordinate that does not move this task */
        double ga = 0;
        for (int r = 0; r < nr; r++) ga += ja[r] * e[r];
        g[a] += weight * ga;
        for (int b = 0; b <= a; b++) {
            const double *jb = J + (size_t)ldJ * b + r0;
            double h = 0;
            for (int r = 0; r < nr; r++) h += ja[r] * jb[r];
            H[a + (size_t)ldH * b] += weight * h;
        }
    }
}

int mbsi_lu_factor(int n, double *restrict a, int *restrict piv)
{
    enum { NB = 4 };
    for (int k0 = 0; k0 < n; k0 += NB) {
        int kb = n - k0 < NB ? n - k0 : NB, k1 = k0 + kb;
        /* the panel, columns k0 .. k1 − 1, factorised right-looking within itself (each pivot's
         * row exchange over the whole matrix) */
        for (int k = k0; k < k1; k++) {
            double *ck = a + (size_t)n * k, best = fabs(ck[k]);
            int p = k;
            for (int i = k + 1; i < n; i++)
                if (fabs(ck[i]) > best) { best = fabs(ck[i]); p = i; }
            piv[k] = p;
            if (!(best > 0)) return k + 1;
            if (p != k)
                for (int j = 0; j < n; j++) {
                    double *cj = a + (size_t)n * j, t = cj[k];
                    cj[k] = cj[p]; cj[p] = t;
                }
            double inv = 1.0 / ck[k];
            for (int i = k + 1; i < n; i++) ck[i] *= inv;
            for (int j = k + 1; j < k1; j++) {
                double *restrict cj = a + (size_t)n * j, f = cj[k];
                for (int i = k + 1; i < n; i++) cj[i] -= ck[i] * f;
            }
        }
        /* each column right of the panel takes its kb updates in one pass, an entry held in a
         * register through them: the trailing matrix is read and written once per panel rather
         * than once per column (the row exchanges commute with the updates of earlier columns,
         * and every entry sees the same operations in the same order: the same factors,
         * bitwise; tests/test_qp.c checks them) */
        const double *l0 = a + (size_t)n * k0, *l1 = l0 + n, *l2 = l1 + n, *l3 = l2 + n;
        for (int j = k1; j < n; j++) {
            double *restrict cj = a + (size_t)n * j;
            if (kb < NB) {
                for (int k = k0; k < k1; k++) {
                    const double *ck = a + (size_t)n * k;
                    double f = cj[k];
                    for (int i = k + 1; i < n; i++) cj[i] -= ck[i] * f;
                }
                continue;
            }
            double f0 = cj[k0];
            cj[k0 + 1] -= l0[k0 + 1] * f0; cj[k0 + 2] -= l0[k0 + 2] * f0; cj[k0 + 3] -= l0[k0 + 3] * f0;
            double f1 = cj[k0 + 1];
            cj[k0 + 2] -= l1[k0 + 2] * f1; cj[k0 + 3] -= l1[k0 + 3] * f1;
            double f2 = cj[k0 + 2];
            cj[k0 + 3] -= l2[k0 + 3] * f2;
            double f3 = cj[k0 + 3];
            for (int i = k1; i < n; i++) {
                double x = cj[i];
                x -= l0[i] * f0;
                x -= l1[i] * f1;
                x -= l2[i] * f2;
                x -= l3[i] * f3;
                cj[i] = x;
            }
        }
    }
    return 0;
}

/* k >= 4 columns with scratch: B transposed into T (n rows of k contiguous values), each row's
 * update then one contiguous multiply-subtract over the k values, and back */
static void lu_solve_rows(int n, const double *restrict a, const int *restrict piv, double *restrict B, int k,
                          double *restrict T)
{
    for (int c = 0; c < k; c++)
        for (int i = 0; i < n; i++) T[(size_t)k * i + c] = B[(size_t)n * c + i];
    for (int i = 0; i < n; i++)
        if (piv[i] != i) {
            double *x = T + (size_t)k * i, *y = T + (size_t)k * piv[i];
            for (int c = 0; c < k; c++) { double t = x[c]; x[c] = y[c]; y[c] = t; }
        }
    for (int j = 0; j < n; j++) {
        const double *restrict lj = a + (size_t)n * j, *restrict xj = T + (size_t)k * j;
        for (int i = j + 1; i < n; i++) {
            double l = lj[i], *restrict xi = T + (size_t)k * i;
            for (int c = 0; c < k; c++) xi[c] -= l * xj[c];
        }
    }
    for (int j = n - 1; j >= 0; j--) {
        const double *restrict uj = a + (size_t)n * j;
        double *restrict xj = T + (size_t)k * j;
        for (int c = 0; c < k; c++) xj[c] /= uj[j];
        for (int i = 0; i < j; i++) {
            double u = uj[i], *restrict xi = T + (size_t)k * i;
            for (int c = 0; c < k; c++) xi[c] -= u * xj[c];
        }
    }
    for (int c = 0; c < k; c++)
        for (int i = 0; i < n; i++) B[(size_t)n * c + i] = T[(size_t)k * i + c];
}

void mbsi_lu_solve(int n, const double *restrict a, const int *restrict piv, double *restrict B, int k,
                   double *restrict work)
{
    if (work && k >= 4) {
        lu_solve_rows(n, a, piv, B, k, work);
        return;
    }
    /* two columns at a time, so that each pass over a column of L or U serves both */
    for (int i = 0; i < n; i++)
        if (piv[i] != i)
            for (int c = 0; c < k; c++) {
                double *b = B + (size_t)n * c, t = b[i];
                b[i] = b[piv[i]];
                b[piv[i]] = t;
            }
    int c = 0;
    for (; c + 2 <= k; c += 2) {
        double *restrict b0 = B + (size_t)n * c, *restrict b1 = b0 + n;
        for (int j = 0; j < n; j++) {
            const double *restrict lj = a + (size_t)n * j;
            double x0 = b0[j], x1 = b1[j];
            for (int i = j + 1; i < n; i++) {
                b0[i] -= lj[i] * x0;
                b1[i] -= lj[i] * x1;
            }
        }
        for (int j = n - 1; j >= 0; j--) {
            const double *restrict uj = a + (size_t)n * j;
            double x0 = b0[j] /= uj[j], x1 = b1[j] /= uj[j];
            for (int i = 0; i < j; i++) {
                b0[i] -= uj[i] * x0;
                b1[i] -= uj[i] * x1;
            }
        }
    }
    for (; c < k; c++) {
        double *restrict b = B + (size_t)n * c;
        for (int j = 0; j < n; j++) {
            const double *restrict lj = a + (size_t)n * j;
            double x = b[j];
            for (int i = j + 1; i < n; i++) b[i] -= lj[i] * x;
        }
        for (int j = n - 1; j >= 0; j--) {
            const double *restrict uj = a + (size_t)n * j;
            double x = b[j] /= uj[j];
            for (int i = 0; i < j; i++) b[i] -= uj[i] * x;
        }
    }
}
