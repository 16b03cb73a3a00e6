/* symeig.c — A = V diag(w) Vᵀ for a small symmetric A: Householder tridiagonalisation with the
 * reflections accumulated, then implicit QL with Wilkinson shifts whose plane rotations are
 * applied to the accumulated basis (the method of EISPACK's tred2 and tql2, the reduction
 * rearranged for short columns: full symmetric blocks); and, from the eigenvectors of a nearby
 * matrix, cyclic Jacobi sweeps (mbsi_symeig_warm). Column-major: the innermost loops run down
 * columns. See symeig.h for why it is written out. */
#include <math.h>
#include <stddef.h>

#include "symeig.h"

#define AT(V, n, r, c) (V)[(r) + (size_t)(n) * (c)]

/* V ← the orthogonal Q of A = Q T Qᵀ, T tridiagonal with diagonal d and sub-diagonal e[1..n-1]
 * (e[0] = 0). Row i of the working matrix is annihilated left of its sub-diagonal by a
 * reflection H = I − u uᵀ/h, from the last row up (the order of EISPACK's tred2, which suits
 * the QL sweeps that follow), on the full symmetric leading block: its product with u and its
 * rank-two update run down whole columns. u is kept in column i above the diagonal, h below it;
 * Q = H_{n-1} ... H_2 is then multiplied out in place, leading block first. */
static void tridiagonalize(int n, double *V, double *d, double *e)
{
    for (int i = n - 1; i >= 2; i--) {
        double *u = V + (size_t)n * i;   /* row i left of the diagonal, by symmetry */
        double sigma = 0;
        for (int k = 0; k < i - 1; k++) sigma += u[k] * u[k];
        double f = u[i - 1], scale = 1;
        if (!(sigma + f * f > 0x1p-900 && sigma + f * f < 0x1p900)) {
            /* |u|² would underflow or overflow: u scaled by its 1-norm (H does not change) */
            scale = 0;
            for (int k = 0; k < i; k++) scale += fabs(u[k]);
            if (scale != 0) {
                sigma = 0;
                for (int k = 0; k < i; k++) u[k] /= scale;
                for (int k = 0; k < i - 1; k++) sigma += u[k] * u[k];
                f = u[i - 1];
            }
        }
        if (sigma == 0) {
            /* the row is zero left of its sub-diagonal already: no reflection */
            e[i] = u[i - 1] * scale;
            AT(V, n, i, i - 1) = 0;
            for (int k = 0; k < i; k++) u[k] = 0;
            continue;
        }
        double g = f > 0 ? -sqrt(sigma + f * f) : sqrt(sigma + f * f), h = sigma + f * f - f * g;
        e[i] = scale * g;
        u[i - 1] = f - g;
        AT(V, n, i, i - 1) = h;
        /* p = A u / h over the leading i x i block (in d), then q = p − (uᵀp / 2h) u */
        double *p = d, ih = 1 / h, K = 0;
        for (int r = 0; r < i; r++) p[r] = 0;
        for (int c = 0; c < i; c++) {
            const double *a = V + (size_t)n * c;
            double uc = u[c] * ih;
            for (int r = 0; r < i; r++) p[r] += a[r] * uc;
        }
        for (int r = 0; r < i; r++) K += u[r] * p[r];
        K *= 0.5 * ih;
        for (int r = 0; r < i; r++) p[r] -= K * u[r];
        /* A ← A − u qᵀ − q uᵀ */
        for (int c = 0; c < i; c++) {
            double *a = V + (size_t)n * c, uc = u[c], qc = p[c];
            for (int r = 0; r < i; r++) a[r] -= u[r] * qc + p[r] * uc;
        }
    }
    e[0] = 0;
    e[1] = n > 1 ? AT(V, n, 0, 1) : 0;
    for (int k = 0; k < n; k++) d[k] = AT(V, n, k, k);
    /* Q = H_{n-1} ... H_2, from H_2: H_i touches the leading i x i block only */
    AT(V, n, 0, 0) = 1;
    if (n > 1) {
        AT(V, n, 1, 0) = AT(V, n, 0, 1) = 0;
        AT(V, n, 1, 1) = 1;
    }
    for (int i = 2; i < n; i++) {
        double *u = V + (size_t)n * i, h = AT(V, n, i, i - 1);
        if (h != 0) {
            double ih = 1 / h;
            for (int c = 0; c < i; c++) {
                double *q = V + (size_t)n * c, g = 0;
                for (int r = 0; r < i; r++) g += u[r] * q[r];
                g *= ih;
                for (int r = 0; r < i; r++) q[r] -= g * u[r];
            }
        }
        for (int c = 0; c < i; c++) AT(V, n, i, c) = 0;
        for (int r = 0; r < i; r++) u[r] = 0;
        AT(V, n, i, i) = 1;
    }
}

/* sqrt(a² + b²): |a| when b is below 1e-100 |a| (the shift's p when e[l] is tiny, whose square
 * would overflow); the squares do not overflow for entries up to 1e150. */
static inline double norm2(double a, double b)
{
    return fabs(a) > 1e100 * fabs(b) ? fabs(a) : sqrt(a * a + b * b);
}

/* (a, b) ← (c a − s b, s a + c b): two distinct columns, so the loop vectorises without a
 * runtime overlap check. */
static inline void rotate(int n, double *restrict a, double *restrict b, double c, double s)
{
    for (int j = 0; j < n; j++) {
        double t = b[j];
        b[j] = s * a[j] + c * t;
        a[j] = c * a[j] - s * t;
    }
}

/* The tridiagonal (d, e) diagonalised by implicit QL steps with Wilkinson's shift (the
 * eigenvalue of the leading 2 x 2 block nearer d[l]); each rotation is applied to V's columns.
 * An off-diagonal entry below eps times the largest |d| + |e| seen splits the matrix.
 *
 * Why the sweep is not tql2's as written: there each rotation's p = (p d_i − c e_i²)/r waits
 * for r = √(p² + e_i²) of the one before, a square root and a division in a chain through the
 * whole sweep (about 40 cycles a rotation), while the rest of the work sits idle. With p = P/ρ
 * and ρ the product of the r's so far, the chain becomes P' = P d_i − e_i² P_prev and
 * ρ'² = P² + e_i² ρ², multiply-adds only; c = P/ρ', s = e_i ρ/ρ' and r = ρ'/ρ, which the
 * rotations and the new d and e need, no longer feed the next rotation, so their roots and
 * divisions overlap. The last rotation's outputs that the next QL step starts from (d[l],
 * d[l+1], e[l]) take s² and cs from ρ'² without its root. Same values as tql2's to rounding;
 * `./sim scenarios/solo_trot.ini` (its 6 x 6 to 12 x 12 decompositions), `us_per_step`, medians
 * of 9 runs alternating with the binary before: 7.55 against 7.19 us (2.10 GHz Zen 5). P and ρ
 * grow or
 * shrink like the product of the r's: the matrix is scaled by a power of two to norm ~1 first
 * (exact, undone on the eigenvalues), and P, P_prev, ρ are rescaled together, by a power of
 * two, should ρ² still leave [2⁻⁶⁴, 2⁶⁴] (the ratios are unchanged). */
static int ql_implicit(int n, double *V, double *d, double *e)
{
    for (int i = 1; i < n; i++) e[i - 1] = e[i];
    e[n - 1] = 0;
    double big = 0;
    for (int i = 0; i < n; i++) big = fmax(big, fabs(d[i]) + fabs(e[i]));
    if (!isfinite(big)) return -1;
    int k2 = big > 0 ? ilogb(big) : 0;
    if (k2 < -1000) k2 = -1000;   /* 2^-k2 must stay finite (subnormal entries) */
    if (k2 != 0) {
        double sc = ldexp(1.0, -k2);
        for (int i = 0; i < n; i++) {
            d[i] *= sc;
            e[i] *= sc;
        }
    }
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
                /* tql2's p = P / rho (comment above); c, s the last rotation's, c2 the cosine
                 * before it */
                double P = d[m], Pp = 1, rho2 = 1, rho = 1, irho = 1;
                double c = 1, c2 = 1, s = 0, el1 = e[l + 1], idl1 = 1 / dl1;
                for (int i = m - 1; i > l; i--) {
                    double ei = e[i], di = d[i], e2 = ei * ei;
                    double rho2n = P * P + e2 * rho2, Pn = P * di - e2 * Pp;   /* the chain */
                    double rhon = sqrt(rho2n), irhon = 1 / rhon;
                    c2 = c;
                    g = c * ei;
                    h = c * (P * irho);
                    e[i + 1] = s * (rhon * irho);
                    s = ei * rho * irhon;
                    c = P * irhon;
                    d[i + 1] = h + s * (c * g + s * di);
                    rotate(n, V + (size_t)n * i, V + (size_t)n * (i + 1), c, s);
                    Pp = P;
                    P = Pn;
                    rho2 = rho2n;
                    rho = rhon;
                    irho = irhon;
                    if (!(rho2 < 0x1p64 && rho2 > 0x1p-64)) {
                        int k = ilogb(rho2) / 2;
                        double u = ldexp(1.0, -k), iu = ldexp(1.0, k);
                        P *= u;
                        Pp *= u;
                        rho2 *= u * u;
                        rho *= u;
                        irho *= iu;
                    }
                }
                /* the last rotation, i = l: tql2's p = −s s2 c3 el1 e[l] / dl1 (s2, c3 being s
                 * and c2 here), e[l] = s p, d[l] = c p and d[l+1] = h + s (c g + s d[l]), the
                 * new s and c entering as s² and c s from 1/ρ'² */
                double el = e[l], e2 = el * el, rho2n = P * P + e2 * rho2, q = 1 / rho2n;
                g = c * el;
                h = c * (P * irho);
                double w = s * c2 * el1 * el * idl1, ss = e2 * rho2 * q, cs = P * el * rho * q;
                d[l + 1] = h + cs * g + ss * d[l];
                d[l] = -cs * w;
                double rhon = sqrt(rho2n), irhon = 1 / rhon;
                e[l + 1] = s * (rhon * irho);
                e[l] = -ss * w;
                rotate(n, V + (size_t)n * l, V + (size_t)n * (l + 1), P * irhon, el * rho * irhon);
            } while (fabs(e[l]) > eps * tst1);
        }
        d[l] += f;
        e[l] = 0;
    }
    if (k2 != 0) {
        double sc = ldexp(1.0, k2);
        for (int i = 0; i < n; i++) d[i] *= sc;
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

/* Rows from r0 on of y = M x (M n x n, column-major), w at a time while w fit: each block summed
 * in registers over the columns, each row in the order of the columns as a dot product would
 * add it. Returns the first row not done. */
static inline int matvec_rows(int n, const double *restrict M, const double *restrict x, double *restrict y, int r0,
                              int w)
{
    for (; r0 + w <= n; r0 += w) {
        double acc[8] = {0, 0, 0, 0, 0, 0, 0, 0};
        for (int k = 0; k < n; k++)
            for (int i = 0; i < w; i++) acc[i] += M[(size_t)n * k + r0 + i] * x[k];
        for (int i = 0; i < w; i++) y[r0 + i] = acc[i];
    }
    return r0;
}

/* y = M x, eight rows at a time, then four, then one: with one accumulator in memory, every
 * column's update waited for the store of the one before. */
static void matvec(int n, const double *restrict M, const double *restrict x, double *restrict y)
{
    int r0 = matvec_rows(n, M, x, y, 0, 8);
    r0 = matvec_rows(n, M, x, y, r0, 4);
    matvec_rows(n, M, x, y, r0, 1);
}

/* B = Vᵀ A V: column j is Vᵀ (A v_j), through Vᵀ stored (Vt), so that both products run down
 * columns; the lower triangle is then mirrored onto the upper one (the two differ by rounding). */
static void rotate_into_basis(int n, const double *restrict A, const double *restrict V, double *restrict B,
                              double *restrict Vt, double *restrict t)
{
    for (int j = 0; j < n; j++)
        for (int i = 0; i < n; i++) AT(Vt, n, j, i) = AT(V, n, i, j);
    for (int j = 0; j < n; j++) {
        matvec(n, A, V + (size_t)n * j, t);
        matvec(n, Vt, t, B + (size_t)n * j);
    }
    for (int j = 0; j < n; j++)
        for (int i = j + 1; i < n; i++) AT(B, n, j, i) = AT(B, n, i, j);
}

/* One Jacobi rotation of the pair (p, q): B ← Gᵀ B G, V ← V G, with G the identity but for
 * G_pp = G_qq = c, G_pq = s = −G_qp, and t = s / c the smaller root of t² + 2θt − 1 = 0,
 * θ = (b_qq − b_pp) / 2b_pq, which makes the new b_pq zero (Golub & Van Loan, sec. 8.5.2).
 * B's columns p and q are turned, its rows p and q copied from them (B stays symmetric), and the
 * 2 x 2 block set from b_pp − t b_pq, b_qq + t b_pq, 0. A pair whose b_pq is below 2⁻²⁸ of
 * |b_qq − b_pp| has t below 2⁻²⁷, so that c = 1/√(1 + t²) rounds to 1: t = b_pq / (b_qq − b_pp)
 * then, one division, the case of nearly every rotation from a nearby basis. */
static void jacobi_rotate(int n, double *restrict B, double *restrict V, int p, int q)
{
    double bpp = AT(B, n, p, p), bqq = AT(B, n, q, q), bpq = AT(B, n, p, q), diff = bqq - bpp, t, c, s;
    if (fabs(diff) > 0x1p28 * fabs(bpq)) {
        t = bpq / diff;
        c = 1;
        s = t;
    } else {
        double th = diff / (2 * bpq);
        t = (th >= 0 ? 1 : -1) / (fabs(th) + sqrt(th * th + 1));
        c = 1 / sqrt(1 + t * t);
        s = t * c;
    }
    rotate(n, B + (size_t)n * p, B + (size_t)n * q, c, s);
    rotate(n, V + (size_t)n * p, V + (size_t)n * q, c, s);
    for (int k = 0; k < n; k++) {
        AT(B, n, p, k) = AT(B, n, k, p);
        AT(B, n, q, k) = AT(B, n, k, q);
    }
    AT(B, n, p, p) = bpp - t * bpq;
    AT(B, n, q, q) = bqq + t * bpq;
    AT(B, n, p, q) = AT(B, n, q, p) = 0;
}

/* From a nearby basis the off-diagonal entries shrink quadratically, a sweep or two (a standing
 * robot's: none in most steps, one in the rest); a start that needs more was not nearby */
enum { WARM_SWEEPS = 6 };

int mbsi_symeig_warm(int n, const double *A, double *V, double *w, double *B, double *Vt, double *t)
{
    if (n <= 0) return 0;
    rotate_into_basis(n, A, V, B, Vt, t);
    double bmax = 0;
    for (int i = 0; i < n; i++) bmax = fmax(bmax, fabs(AT(B, n, i, i)));
    if (!isfinite(bmax)) return -1;
    /* B's entries carry the rounding of its two products, about n units of the largest: an
     * off-diagonal entry below that is noise, and turning it away changes nothing that matters */
    const double tol = n * 0x1p-52 * bmax;
    for (int sweep = 0; sweep <= WARM_SWEEPS; sweep++) {
        int turned = 0;
        for (int q = 1; q < n; q++)   /* column by column: the scan reads B contiguously */
            for (int p = 0; p < q; p++)
                if (!(fabs(AT(B, n, p, q)) <= tol)) {   /* a NaN is turned, and spreads to w */
                    if (sweep == WARM_SWEEPS) return -1;
                    jacobi_rotate(n, B, V, p, q);
                    turned = 1;
                }
        if (!turned) break;
    }
    for (int i = 0; i < n; i++) {
        w[i] = AT(B, n, i, i);
        if (!isfinite(w[i])) return -1;
    }
    return 0;
}
