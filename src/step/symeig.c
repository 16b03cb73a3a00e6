/* symeig.c — A = V diag(w) Vᵀ for a small symmetric A: Householder tridiagonalisation with the
 * reflections accumulated, then implicit QL with Wilkinson shifts whose plane rotations are
 * applied to the accumulated basis (the algorithm of EISPACK's tred2 and tql2). Column-major:
 * the innermost loops run down columns. See symeig.h for why it is written out. */
#include <math.h>
#include <stddef.h>

#include "symeig.h"

#define AT(V, n, r, c) (V)[(r) + (size_t)(n) * (c)]

/* V ← the orthogonal Q of A = Q T Qᵀ, T tridiagonal with diagonal d and sub-diagonal e[1..n-1]
 * (e[0] = 0). Row i of the working matrix is annihilated left of its sub-diagonal by a
 * reflection, from the last row up; the reflections are then multiplied out into V. */
static void tridiagonalize(int n, double *V, double *d, double *e)
{
    for (int j = 0; j < n; j++) d[j] = AT(V, n, n - 1, j);
    for (int i = n - 1; i > 0; i--) {
        double scale = 1, h = 0;
        for (int k = 0; k < i; k++) h += d[k] * d[k];
        if (!(h > 0x1p-900 && h < 0x1p900)) {
            scale = 0;
            for (int k = 0; k < i; k++) scale += fabs(d[k]);
            if (scale != 0) {
                h = 0;
                for (int k = 0; k < i; k++) {
                    d[k] /= scale;
                    h += d[k] * d[k];
                }
            }
        }
        if (scale == 0) {
            /* the row is zero already: no reflection */
            e[i] = d[i - 1];
            for (int j = 0; j < i; j++) {
                d[j] = AT(V, n, i - 1, j);
                AT(V, n, i, j) = 0;
                AT(V, n, j, i) = 0;
            }
        } else {
            /* scaling by the row's 1-norm keeps h = |u|² from overflowing or underflowing */
            double f = d[i - 1], g = sqrt(h);
            if (f > 0) g = -g;
            e[i] = scale * g;
            h -= f * g;
            d[i - 1] = f - g;
            for (int j = 0; j < i; j++) e[j] = 0;
            /* p = A u / h, accumulated one column of the lower triangle at a time */
            for (int j = 0; j < i; j++) {
                f = d[j];
                AT(V, n, j, i) = f;
                g = e[j] + AT(V, n, j, j) * f;
                for (int k = j + 1; k < i; k++) {
                    g += AT(V, n, k, j) * d[k];
                    e[k] += AT(V, n, k, j) * f;
                }
                e[j] = g;
            }
            f = 0;
            double hi = 1 / h;
            for (int j = 0; j < i; j++) {
                e[j] *= hi;
                f += e[j] * d[j];
            }
            double hh = f / (h + h);
            for (int j = 0; j < i; j++) e[j] -= hh * d[j];
            /* A ← A − u qᵀ − q uᵀ, q = p − (uᵀp / 2h) u */
            for (int j = 0; j < i; j++) {
                f = d[j];
                g = e[j];
                for (int k = j; k < i; k++) AT(V, n, k, j) -= f * e[k] + g * d[k];
                d[j] = AT(V, n, i - 1, j);
                AT(V, n, i, j) = 0;
            }
        }
        d[i] = h;
    }
    /* the reflections, multiplied out from the first */
    for (int i = 0; i < n - 1; i++) {
        AT(V, n, n - 1, i) = AT(V, n, i, i);
        AT(V, n, i, i) = 1;
        double h = d[i + 1];
        if (h != 0) {
            double hi = 1 / h;
            for (int k = 0; k <= i; k++) d[k] = AT(V, n, k, i + 1) * hi;
            for (int j = 0; j <= i; j++) {
                double g = 0;
                for (int k = 0; k <= i; k++) g += AT(V, n, k, i + 1) * AT(V, n, k, j);
                for (int k = 0; k <= i; k++) AT(V, n, k, j) -= g * d[k];
            }
        }
        for (int k = 0; k <= i; k++) AT(V, n, k, i + 1) = 0;
    }
    for (int j = 0; j < n; j++) {
        d[j] = AT(V, n, n - 1, j);
        AT(V, n, n - 1, j) = 0;
    }
    AT(V, n, n - 1, n - 1) = 1;
    e[0] = 0;
}

/* sqrt(a² + b²): |a| when b is below 1e-100 |a| (the shift's p when e[l] is tiny, whose square
 * would overflow); the squares do not overflow for entries up to 1e150. */
static inline double norm2(double a, double b)
{
    return fabs(a) > 1e100 * fabs(b) ? fabs(a) : sqrt(a * a + b * b);
}

/* The tridiagonal (d, e) diagonalised by implicit QL steps with Wilkinson's shift (the
 * eigenvalue of the leading 2 x 2 block nearer d[l]); each rotation is applied to V's columns.
 * An off-diagonal entry below eps times the largest |d| + |e| seen splits the matrix. */
static int ql_implicit(int n, double *V, double *d, double *e)
{
    for (int i = 1; i < n; i++) e[i - 1] = e[i];
    e[n - 1] = 0;
    double f = 0, tst1 = 0;
    const double eps = 0x1p-52;
    for (int l = 0; l < n; l++) {
        tst1 = fmax(tst1, fabs(d[l]) + fabs(e[l]));
        int m = l;
        while (m < n - 1 && !(fabs(e[m]) <= eps * tst1)) m++;
        if (m > l) {
            int iter = 0;
            do {
                /* 30 sweeps per eigenvalue is far beyond the 1 to 3 of finite input */
                if (++iter > 30 || !isfinite(tst1)) return -1;
                double g = d[l], p = (d[l + 1] - g) / (2 * e[l]), r = norm2(p, 1);
                if (p < 0) r = -r;
                d[l] = e[l] / (p + r);
                d[l + 1] = e[l] * (p + r);
                double dl1 = d[l + 1], h = g - d[l];
                for (int i = l + 2; i < n; i++) d[i] -= h;
                f += h;
                /* The sweep's rotations without a square root or a division in the chain that
                 * carries one rotation to the next. With p the bulge entering rotation i,
                 * r = |(p, e[i])|, c = p / r, s = e[i] / r, the next bulge is (p d[i] − e[i]² c′)/r
                 * (c′ the last rotation's c). Scaled by W, the product of the sweep's r so far,
                 * P = p W obeys P ← d[i] P − e[i]² P′ and W² ← P² + e[i]² W² = (r W)²: two
                 * multiply-adds per rotation, where the bulge waited on a square root and a
                 * division each (the QL phase of a 12 x 12 matrix a fifth faster). c = P / √Q, s = e[i] W / √Q
                 * (Q = P² + e[i]² W²), r and p are ratios of these, computed beside the chain.
                 * The recurrence runs on d and e times k, a power of two near 1/tst1, so that P
                 * grows by a bounded factor per rotation; W² is brought back into
                 * [2^-600, 2^600] with P, P′ and W when a sweep's product of r leaves it. */
                int ex;
                frexp(tst1, &ex);
                const double k = ldexp(1, -ex), ik = ldexp(1, ex);
                double c = 1, c2 = 1, c3 = 1, el1 = e[l + 1], s = 0, s2 = 0;
                double P = k * d[m], Pn = 1, W2 = 1, W = 1, iW = 1;
                for (int i = m - 1; i >= l; i--) {
                    c3 = c2;
                    c2 = c;
                    s2 = s;
                    double ei = k * e[i], di = d[i];
                    double Q = P * P + ei * ei * W2, sq = sqrt(Q), iq = 1 / sq;
                    g = c * e[i];
                    h = c * (P * iW) * ik;       /* c′ p */
                    e[i + 1] = s * (sq * iW) * ik;   /* s′ r */
                    s = ei * W * iq;
                    c = P * iq;
                    d[i + 1] = h + s * (c * g + s * di);
                    double *a = V + (size_t)n * i, *b = V + (size_t)n * (i + 1);
                    for (int j = 0; j < n; j++) {
                        double t = b[j];
                        b[j] = s * a[j] + c * t;
                        a[j] = c * a[j] - s * t;
                    }
                    double Pm = k * di * P - ei * ei * Pn;
                    Pn = P;
                    P = Pm;
                    W2 = Q;
                    W = sq;
                    iW = iq;
                    if (!(W2 < 0x1p600 && W2 > 0x1p-600)) {
                        double sc = W2 > 1 ? 0x1p-300 : 0x1p300;
                        P *= sc;
                        Pn *= sc;
                        W *= sc;
                        iW /= sc;
                        W2 *= sc * sc;
                    }
                }
                p = -s * s2 * c3 * el1 * e[l] / dl1;
                e[l] = s * p;
                d[l] = c * p;
            } while (fabs(e[l]) > eps * tst1);
        }
        d[l] += f;
        e[l] = 0;
    }
    return 0;
}

int mbsi_symeig(int n, double *V, double *w, double *e)
{
    if (n <= 0) return 0;
    if (n == 1) {
        w[0] = V[0];
        V[0] = 1;
        return isfinite(w[0]) ? 0 : -1;
    }
    tridiagonalize(n, V, w, e);
    if (ql_implicit(n, V, w, e) != 0) return -1;
    /* a NaN compares false everywhere and can slip through the convergence tests */
    for (int i = 0; i < n; i++)
        if (!isfinite(w[i])) return -1;
    return 0;
}
