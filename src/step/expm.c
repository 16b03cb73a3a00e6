/* expm.c — X = e^A V by scaling and squaring with diagonal Padé approximants (Higham 2005),
 * diagonal balancing and the reduced variants of Hammoud et al. 2022 §5.3.
 *
 * r_m(A) = D_m(A)⁻¹ N_m(A) with N_m(A) = Σ b_k A^k and D_m(A) = N_m(−A), so both come from
 * the even part V and the odd part U of the numerator: N = V + U, D = V − U (Higham eqs.
 * 2.1, 2.6). e^A V = r_m(A/2^s)^(2^s) V: rather than forming e^A, N·V is formed and D is
 * solved against it (Hammoud eq. 33); with s > 0 the approximant is either applied 2^s times
 * to the few columns of V or squared s times, whichever costs fewer flops.
 *
 * Every matrix is copied into the workspace with leading dimension n. The n x n products are
 * OpenBLAS dgemm: at the sizes of the exponential integrator (n = 6·contacts + 3) it measured
 * 1.8–2.8 times faster than the best written-out loops (n = 15: 0.36 vs 0.66 µs, n = 27:
 * 1.3 vs 2.4 µs, n = 51: 6.5 vs 12.5 µs) and below n ≈ 64 it stays on the calling thread.
 * The LU factorisation with partial pivoting and its solves are written out (mbsi_lu_factor,
 * src/base/dense.c): OpenBLAS's dgetrf handed even a 27 x 27 matrix to its thread pool, whose
 * wake-ups and sched_yield spins took half of an expo step, and its unthreaded dgetf2 and dgetrs
 * (two columns) took 3.0 and 4.2 µs at n = 27 against 1.4 and 0.75 µs for the loops. Balancing
 * is written out as well: LAPACK's dgebal computes its norms with dnrm2 and cost 4 µs more per
 * Solo step (27 x 27) than the same radix-2 scaling with 1-norms, and on a NaN its xerbla
 * prints to stderr, which the library must never do. Nothing here allocates or prints. */
#include <cblas.h>
#include <math.h>
#include <stdlib.h>
#include <string.h>

#include "../base/base.h"
#include "expm.h"

struct mbs_expm_ws {
    int nmax;
    double *a;              /* the (balanced, scaled) matrix */
    double *p2, *p4, *p6, *p8; /* its even powers */
    double *u, *v, *t;      /* odd part, even part, scratch */
    double *q;              /* D(A), then its LU factors */
    double *r;              /* r_m = D⁻¹N when squaring */
    double *x, *y;          /* right-hand sides, n x nmax */
    double *scale;          /* balancing: the diagonal D */
    double *rs, *cs;        /* balancing: off-diagonal row and column 1-norms */
    int *ipiv;
};

static void layout(mbs_carver *c, mbs_expm_ws *ws, size_t nmax)
{
    size_t n2 = nmax * nmax;
    double **mats[] = {&ws->a, &ws->p2, &ws->p4, &ws->p6, &ws->p8, &ws->u, &ws->v,
                       &ws->t, &ws->q, &ws->r, &ws->x, &ws->y};
    for (size_t i = 0; i < sizeof mats / sizeof *mats; i++) *mats[i] = mbsi_carve_doubles(c, n2);
    ws->scale = mbsi_carve_doubles(c, nmax);
    ws->rs = mbsi_carve_doubles(c, nmax);
    ws->cs = mbsi_carve_doubles(c, nmax);
    ws->ipiv = mbsi_carve_ints(c, nmax);
}

mbs_expm_ws *mbsi_expm_ws_new(int nmax)
{
    if (nmax < 1 || nmax > 46340) return NULL;
    /* the workspace and its buffers: one carved block */
    mbs_expm_ws head = {0};
    mbs_carver c = {NULL, 0};
    mbsi_carve(&c, sizeof head);
    layout(&c, &head, (size_t)nmax);
    mbs_expm_ws *ws = mbsi_carver_alloc(&c);
    if (!ws) return NULL;
    mbsi_carve(&c, sizeof head);
    layout(&c, ws, (size_t)nmax);
    ws->nmax = nmax;
    return ws;
}

void mbsi_expm_ws_free(mbs_expm_ws *ws)
{
    free(ws);
}

/* Padé [m/m] numerator coefficients of e^x, b_k ∝ (2m−k)! m! / ((2m)! k! (m−k)!) (Higham
 * 2005 eq. 2.2), scaled to integers as in Higham's paper so that they are exact doubles. */
static const double pade1[] = {2, 1};
static const double pade2[] = {12, 6, 1};
static const double pade3[] = {120, 60, 12, 1};
static const double pade5[] = {30240, 15120, 3360, 420, 30, 1};
static const double pade7[] = {17297280, 8648640, 1995840, 277200, 25200, 1512, 56, 1};
static const double pade9[] = {17643225600., 8821612800., 2075673600., 302702400., 30270240.,
                               2162160., 110880., 3960., 90., 1.};
static const double pade13[] = {64764752532480000., 32382376266240000., 7771770303897600.,
                                1187353796428800., 129060195264000., 10559470521600.,
                                670442572800., 33522128640., 1323241920., 40840800., 960960.,
                                16380., 182., 1.};

/* θ_m: the largest ‖A‖₁ for which r_m(A) has a backward error below the unit roundoff
 * 2^-53 (Higham 2005, table 2.3). */
static double theta(int m)
{
    switch (m) {
    case 1: return 3.650024139523051e-08;
    case 2: return 5.317232856892575e-04;
    case 3: return 1.495585217958292e-02;
    case 5: return 2.539398330063230e-01;
    case 7: return 9.504178996162932e-01;
    case 9: return 2.097847961257068e+00;
    default: return 5.371920351148152e+00;   /* 13 */
    }
}

static const double *pade_coefficients(int m)
{
    switch (m) {
    case 1: return pade1;
    case 2: return pade2;
    case 3: return pade3;
    case 5: return pade5;
    case 7: return pade7;
    case 9: return pade9;
    case 13: return pade13;
    default: return NULL;
    }
}

/* C = A B, all n x n with leading dimension n. */
static void mm(int n, const double *A, const double *B, double *C)
{
    cblas_dgemm(CblasColMajor, CblasNoTrans, CblasNoTrans, n, n, n, 1.0, A, n, B, n, 0.0, C, n);
}

/* Y = A X for the n x n A and the n x k X (leading dimensions n). */
static void mmk(int n, int k, const double *restrict A, const double *restrict X, double *restrict Y)
{
    for (int j = 0; j < k; j++) {
        double *restrict y = Y + (size_t)n * j;
        const double *xj = X + (size_t)n * j;
        memset(y, 0, (size_t)n * sizeof(double));
        for (int p = 0; p < n; p++) {
            double b = xj[p];
            if (b == 0) continue;
            const double *restrict a = A + (size_t)n * p;
            for (int i = 0; i < n; i++) y[i] += a[i] * b;
        }
    }
}

/* out = c0 I + Σ c[i] M[i] (n x n). */
static void lincomb(int n, double *restrict out, double c0, int nt, const double *c, const double *const *M)
{
    size_t nn = (size_t)n * n;
    for (size_t e = 0; e < nn; e++) {
        double s = 0;
        for (int i = 0; i < nt; i++) s += c[i] * M[i][e];
        out[e] = s;
    }
    for (int i = 0; i < n; i++) out[i + (size_t)n * i] += c0;
}

static double norm1(int n, const double *A, int lda)
{
    double best = 0;
    for (int j = 0; j < n; j++) {
        double s = 0;
        for (int i = 0; i < n; i++) s += fabs(A[i + (size_t)lda * j]);
        if (isnan(s)) return s;   /* a NaN must reach the caller's finiteness check */
        if (s > best) best = s;
    }
    return best;
}

/* U (odd part) and V (even part) of N_m at ws->a, Higham 2005 (eqs. 2.1, 2.6 and
 * Algorithm 2.3 for m = 13); returns the number of matrix products. */
static int pade_parts(mbs_expm_ws *ws, int n, int m)
{
    const double *b = pade_coefficients(m), *A = ws->a;
    int mults = 0;
    if (m >= 2) { mm(n, A, A, ws->p2); mults++; }
    if (m >= 5) { mm(n, ws->p2, ws->p2, ws->p4); mults++; }
    if (m >= 7) { mm(n, ws->p4, ws->p2, ws->p6); mults++; }
    if (m == 9) { mm(n, ws->p4, ws->p4, ws->p8); mults++; }
    if (m <= 2) {
        /* U = b1 A: no product */
        const double *M[1] = {A};
        double c[1] = {b[1]};
        lincomb(n, ws->u, 0, 1, c, M);
        const double *P[1] = {ws->p2};
        double e[1] = {m == 2 ? b[2] : 0};
        lincomb(n, ws->v, b[0], m == 2 ? 1 : 0, e, P);
        return mults;
    }
    if (m == 13) {
        const double *P[3] = {ws->p6, ws->p4, ws->p2};
        double co[3] = {b[13], b[11], b[9]}, ce[3] = {b[12], b[10], b[8]};
        double lo[3] = {b[7], b[5], b[3]}, le[3] = {b[6], b[4], b[2]};
        /* W = A6 (b13 A6 + b11 A4 + b9 A2) + b7 A6 + b5 A4 + b3 A2 + b1 I; U = A W */
        lincomb(n, ws->t, 0, 3, co, P);
        mm(n, ws->p6, ws->t, ws->v);
        lincomb(n, ws->t, b[1], 3, lo, P);
        for (size_t e = 0; e < (size_t)n * n; e++) ws->t[e] += ws->v[e];
        mm(n, A, ws->t, ws->u);
        /* V = A6 (b12 A6 + b10 A4 + b8 A2) + b6 A6 + b4 A4 + b2 A2 + b0 I */
        lincomb(n, ws->t, 0, 3, ce, P);
        mm(n, ws->p6, ws->t, ws->v);
        lincomb(n, ws->t, b[0], 3, le, P);
        for (size_t e = 0; e < (size_t)n * n; e++) ws->v[e] += ws->t[e];
        return mults + 3;
    }
    /* m = 3, 5, 7, 9: W = Σ_odd b_k A^(k−1), U = A W, V = Σ_even b_k A^k */
    const double *P[4] = {ws->p2, ws->p4, ws->p6, ws->p8};
    int np = (m - 1) / 2;
    double co[4], ce[4];
    for (int i = 0; i < np; i++) { co[i] = b[2 * i + 3]; ce[i] = b[2 * i + 2]; }
    lincomb(n, ws->t, b[1], np, co, P);
    mm(n, A, ws->t, ws->u);
    lincomb(n, ws->v, b[0], np, ce, P);
    return mults + 1;
}

/* ws->x (n x k) := r_m(ws->a / 2^s)^(2^s) ws->x; ws->a is scaled in place. */
static int pade_core(mbs_expm_ws *ws, int n, int m, int s, int k, mbs_expm_info *info)
{
    size_t nn = (size_t)n * n;
    if (s > 0) {
        double f = ldexp(1.0, -s);   /* exact */
        for (size_t e = 0; e < nn; e++) ws->a[e] *= f;
    }
    int mults = pade_parts(ws, n, m);
    /* N = V + U (into u), D = V − U (into q) */
    for (size_t e = 0; e < nn; e++) {
        double vv = ws->v[e], uu = ws->u[e];
        ws->u[e] = vv + uu;
        ws->q[e] = vv - uu;
    }
    /* a singular Padé denominator: reported as a numerical failure (the column of the zero
     * pivot is of no use to a caller, which can only give up the step) */
    if (mbsi_lu_factor(n, ws->q, ws->ipiv) != 0) return MBS_ERR_NUMERIC;
    /* Three ways to r^(2^s) X, by flops (a solve's flops, short dependent loops, counted 3 times a
     * product's): solving D against N X, 2^s times (8 n² k each); forming r = D⁻¹N once (2 n³, its n
     * columns solved row-wise in one vectorised sweep) and applying it 2^s times (2 n² k each); or
     * squaring r s times (2 s n³). The exponential integrator's sliding pass (n ≈ 23, k = 2, s = 3-4)
     * takes the second. */
    double times = ldexp(1.0, s < 60 ? s : 60), nk = (double)n * n * k;
    double solve_each = times * 8 * nk, apply_r = 2.0 * n * n * n + times * 2 * nk, square = 2.0 * (s + 1) * n * n * n;
    if (solve_each <= apply_r && solve_each <= square) {
        for (long it = 0; it < (long)times; it++) {
            mmk(n, k, ws->u, ws->x, ws->y);
            mbsi_lu_solve(n, ws->q, ws->ipiv, ws->y, k, ws->t);
            memcpy(ws->x, ws->y, (size_t)n * k * sizeof(double));
        }
    } else {
        mbsi_lu_solve(n, ws->q, ws->ipiv, ws->u, n, ws->t);   /* r = D⁻¹N */
        double *R = ws->u, *S = ws->r;
        long apply = 1;
        if (apply_r > square) {
            for (int i = 0; i < s; i++) {
                mm(n, R, R, S);
                double *tmp = R; R = S; S = tmp;
                mults++;
            }
        } else {
            apply = (long)times;
        }
        for (long it = 0; it < apply; it++) {
            mmk(n, k, R, ws->x, ws->y);
            memcpy(ws->x, ws->y, (size_t)n * k * sizeof(double));
        }
    }
    if (info) {
        info->order = m;
        info->squarings = s;
        info->mat_mults = mults;
    }
    return 0;
}

/* Diagonal balancing (Parlett & Reinsch 1969, the scaling loop of LAPACK dgebal without its
 * permutations): A := D⁻¹ A D with D = diag(d) made of powers of 2 (exact), each row and
 * column pair rescaled until their off-diagonal 1-norms are within a factor of 2 of each
 * other, which is what lowers ‖A‖₁ — the stiff contact matrices drop by 2–3 orders of
 * magnitude. Rows or columns without off-diagonal entries are left alone. The row and column
 * norms are summed in one pass over the columns per sweep and kept up to date as rows and
 * columns are rescaled, rather than re-read along the (strided) rows for every index. */
static void balance_scale(int n, double *restrict a, double *restrict d, double *restrict rs, double *restrict cs)
{
    for (int i = 0; i < n; i++) d[i] = 1;
    for (int sweep = 0, changed = 1; changed && sweep < 64; sweep++) {
        changed = 0;
        memset(rs, 0, (size_t)n * sizeof(double));
        for (int j = 0; j < n; j++) {
            const double *cj = a + (size_t)n * j;
            double c = 0;
            for (int i = 0; i < n; i++) {
                double x = fabs(cj[i]);
                c += x;
                rs[i] += x;
            }
            cs[j] = c;
        }
        for (int i = 0; i < n; i++) {
            double x = fabs(a[i + (size_t)n * i]);
            rs[i] -= x;
            cs[i] -= x;
        }
        for (int i = 0; i < n; i++) {
            double c = cs[i], r = rs[i];
            if (!(c > 0 && r > 0)) continue;
            /* f = 2^k with c f ≈ r / f; apply it only when it lowers c + r by 5 % */
            double f = 1, s = c + r, g = r / 2;
            while (c < g && f < 0x1p500) { f *= 2; c *= 4; }
            g = r * 2;
            while (c >= g && f > 0x1p-500) { f /= 2; c /= 4; }
            if ((c + r) / f >= 0.95 * s) continue;
            changed = 1;
            d[i] *= f;
            /* row i times 1/f changes the column sums, column i times f the row sums; the
             * diagonal entry stays */
            double fi = 1 / f, *ci = a + (size_t)n * i;
            for (int j = 0; j < n; j++) {
                if (j == i) continue;
                double *x = a + i + (size_t)n * j;
                cs[j] += fabs(*x) * (fi - 1);
                *x *= fi;
            }
            for (int j = 0; j < n; j++) {
                if (j == i) continue;
                rs[j] += fabs(ci[j]) * (f - 1);
                ci[j] *= f;
            }
            rs[i] *= fi;
            cs[i] *= f;
        }
    }
}

static void load(mbs_expm_ws *ws, int n, const double *A, int lda, int k, const double *V, int ldv)
{
    for (int j = 0; j < n; j++) memcpy(ws->a + (size_t)n * j, A + (size_t)lda * j, (size_t)n * sizeof(double));
    if (V)
        for (int j = 0; j < k; j++) memcpy(ws->x + (size_t)n * j, V + (size_t)ldv * j, (size_t)n * sizeof(double));
    else {   /* identity */
        memset(ws->x, 0, (size_t)n * k * sizeof(double));
        for (int j = 0; j < k; j++) ws->x[j + (size_t)n * j] = 1;
    }
}

static void store(const mbs_expm_ws *ws, int n, int k, double *X, int ldx)
{
    for (int j = 0; j < k; j++) memcpy(X + (size_t)ldx * j, ws->x + (size_t)n * j, (size_t)n * sizeof(double));
}

static int bad_sizes(const mbs_expm_ws *ws, int n, int lda, int k, int ldv, int ldx, int has_v)
{
    return !ws || n < 1 || n > ws->nmax || k < 0 || k > ws->nmax || lda < n || ldx < n || (has_v && ldv < n);
}

int mbsi_expm_pade_apply(mbs_expm_ws *ws, int n, const double *A, int lda, int m, int s, int k,
                        const double *V, int ldv, double *X, int ldx, mbs_expm_info *info)
{
    if (!V || bad_sizes(ws, n, lda, k, ldv, ldx, 1) || !pade_coefficients(m) || s < 0 || s > 1100) return MBS_ERR_ARG;
    double nrm = norm1(n, A, lda);
    if (!isfinite(nrm)) return MBS_ERR_NUMERIC;
    load(ws, n, A, lda, k, V, ldv);
    int rc = pade_core(ws, n, m, s, k, info);
    if (rc) return rc;
    if (info) { info->balanced = 0; info->norm1 = nrm; }
    store(ws, n, k, X, ldx);
    return 0;
}

/* The degree and scaling for ‖A‖₁ = nrm: Higham 2005 Algorithm 2.3 (full), or s = 0 and the
 * lowest of the allowed degrees that reaches θ_m, else the highest allowed (§5.3 of Hammoud). */
static void choose(double nrm, int max_mat_mult, int *m, int *s)
{
    static const int full[4] = {3, 5, 7, 9}, reduced[5] = {1, 2, 3, 5, 7};
    *s = 0;
    if (max_mat_mult >= 0) {
        for (int i = 0; i <= max_mat_mult; i++) {
            *m = reduced[i];
            if (nrm <= theta(*m)) return;
        }
        return;
    }
    for (int i = 0; i < 4; i++)
        if (nrm <= theta(full[i])) { *m = full[i]; return; }
    *m = 13;
    *s = (int)ceil(log2(nrm / theta(13)));
    if (*s < 0) *s = 0;
}

static int expm_run(mbs_expm_ws *ws, int n, const double *A, int lda, int k, const double *V, int ldv,
                    double *X, int ldx, int max_mat_mult, int balance, mbs_expm_info *info)
{
    if (bad_sizes(ws, n, lda, k, ldv, ldx, V != NULL) || max_mat_mult < -1 || max_mat_mult > 4) return MBS_ERR_ARG;
    double nrm = norm1(n, A, lda);
    if (!isfinite(nrm)) return MBS_ERR_NUMERIC;
    load(ws, n, A, lda, k, V, ldv);
    int balanced = 0;
    if (balance && n > 1) {
        balance_scale(n, ws->a, ws->scale, ws->rs, ws->cs);
        double nb = norm1(n, ws->a, n);
        if (nb < nrm) {
            balanced = 1;
            nrm = nb;
        } else
            for (int j = 0; j < n; j++) memcpy(ws->a + (size_t)n * j, A + (size_t)lda * j, (size_t)n * sizeof(double));
    }
    if (balanced)   /* V' = D⁻¹ V */
        for (int i = 0; i < n; i++) {
            double f = 1.0 / ws->scale[i];
            for (int j = 0; j < k; j++) ws->x[i + (size_t)n * j] *= f;
        }
    int m, s;
    choose(nrm, max_mat_mult, &m, &s);
    int rc = pade_core(ws, n, m, s, k, info);
    if (rc) return rc;
    if (balanced)   /* X = D X' */
        for (int i = 0; i < n; i++) {
            double f = ws->scale[i];
            for (int j = 0; j < k; j++) ws->x[i + (size_t)n * j] *= f;
        }
    if (info) { info->balanced = balanced; info->norm1 = nrm; }
    store(ws, n, k, X, ldx);
    return 0;
}

int mbsi_expm_apply(mbs_expm_ws *ws, int n, const double *A, int lda, int k, const double *V, int ldv,
                   double *X, int ldx, int max_mat_mult, int balance, mbs_expm_info *info)
{
    if (!V) return MBS_ERR_ARG;
    return expm_run(ws, n, A, lda, k, V, ldv, X, ldx, max_mat_mult, balance, info);
}

int mbsi_expm(mbs_expm_ws *ws, int n, const double *A, int lda, double *E, int lde, int max_mat_mult,
             int balance, mbs_expm_info *info)
{
    return expm_run(ws, n, A, lda, n, NULL, n, E, lde, max_mat_mult, balance, info);
}
