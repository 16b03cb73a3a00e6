/* test_expm.c — the matrix exponential of the stepper layer (src/step/expm.c) against
 * references computed independently of it: known eigendecompositions (real and complex
 * pairs), a Taylor series on small norms, Jordan blocks in closed form, a stiff 2x2
 * spring-damper in closed form, and the Padé approximants written from their formula. */
#include <lapacke.h>
#include <stdlib.h>

#include "../src/step/expm.h"
#include "check.h"
#include "testmodels.h"

#define NMAX 40

static mbs_expm_ws *ws;

/* C = A B, n x n, leading dimension n. */
static void mul(int n, const double *A, const double *B, double *C)
{
    for (int j = 0; j < n; j++)
        for (int i = 0; i < n; i++) {
            double s = 0;
            for (int k = 0; k < n; k++) s += A[i + n * k] * B[k + n * j];
            C[i + n * j] = s;
        }
}

static double normf(int n, int k, const double *A)
{
    double s = 0;
    for (int i = 0; i < n * k; i++) s += A[i] * A[i];
    return sqrt(s);
}

/* ‖X − Y‖_F / ‖Y‖_F, scaled first so that tiny or huge entries neither underflow nor overflow */
static double relerr(int n, int k, const double *X, const double *Y)
{
    double big = 0, s = 0, y = 0;
    for (int i = 0; i < n * k; i++) big = fmax(big, fabs(Y[i]));
    if (big == 0) big = 1;
    for (int i = 0; i < n * k; i++) {
        double d = (X[i] - Y[i]) / big, t = Y[i] / big;
        s += d * d;
        y += t * t;
    }
    return sqrt(s / y);
}

static double norm1(int n, const double *A)
{
    double best = 0;
    for (int j = 0; j < n; j++) {
        double s = 0;
        for (int i = 0; i < n; i++) s += fabs(A[i + n * j]);
        if (s > best) best = s;
    }
    return best;
}

/* inverse of V by LAPACK's LU (an independent path from the code under test) */
static void inverse(int n, const double *V, double *Vi)
{
    double *W = malloc(sizeof(double) * n * n);
    lapack_int *piv = malloc(sizeof(lapack_int) * n);
    memcpy(W, V, sizeof(double) * n * n);
    memset(Vi, 0, sizeof(double) * n * n);
    for (int i = 0; i < n; i++) Vi[i + n * i] = 1;
    lapack_int info = LAPACKE_dgesv(LAPACK_COL_MAJOR, n, n, W, n, piv, Vi, n);
    CHECK(info == 0, "reference inverse failed");
    free(W);
    free(piv);
}

/* A = V Λ V⁻¹ and E = V e^Λ V⁻¹, with Λ block diagonal: real eigenvalues re[i] where im[i] = 0,
 * and 2x2 blocks [[re −im] [im re]] (the pair re ± i·im) where im[i] != 0 (then i+1 is skipped). */
static void eig_pair(int n, const double *V, const double *re, const double *im, double *A, double *E)
{
    double *L = calloc((size_t)n * n, sizeof(double)), *eL = calloc((size_t)n * n, sizeof(double));
    double *Vi = malloc(sizeof(double) * n * n), *T = malloc(sizeof(double) * n * n);
    for (int i = 0; i < n; i++) {
        if (im[i] != 0 && i + 1 < n) {
            double a = re[i], b = im[i], ea = exp(a);
            L[i + n * i] = a; L[i + n * (i + 1)] = -b; L[(i + 1) + n * i] = b; L[(i + 1) + n * (i + 1)] = a;
            eL[i + n * i] = ea * cos(b); eL[i + n * (i + 1)] = -ea * sin(b);
            eL[(i + 1) + n * i] = ea * sin(b); eL[(i + 1) + n * (i + 1)] = ea * cos(b);
            i++;
        } else {
            L[i + n * i] = re[i];
            eL[i + n * i] = exp(re[i]);
        }
    }
    inverse(n, V, Vi);
    mul(n, V, L, T);
    mul(n, T, Vi, A);
    mul(n, V, eL, T);
    mul(n, T, Vi, E);
    free(L); free(eL); free(Vi); free(T);
}

/* e^A by its Taylor series (small ‖A‖ only): 40 terms. */
static void taylor(int n, const double *A, double *E)
{
    double *T = malloc(sizeof(double) * n * n), *U = malloc(sizeof(double) * n * n);
    memset(E, 0, sizeof(double) * n * n);
    memset(T, 0, sizeof(double) * n * n);
    for (int i = 0; i < n; i++) E[i + n * i] = T[i + n * i] = 1;
    for (int k = 1; k <= 40; k++) {
        mul(n, T, A, U);
        for (int i = 0; i < n * n; i++) { T[i] = U[i] / k; E[i] += T[i]; }
    }
    free(T); free(U);
}

static void random_matrix(int n, unsigned long long *seed, double scale, double *A)
{
    for (int i = 0; i < n * n; i++) A[i] = scale * tm_uniform(seed, -1, 1);
}

/* A well-conditioned random eigenvector matrix: I + 0.3 R. */
static void random_basis(int n, unsigned long long *seed, double *V)
{
    random_matrix(n, seed, 0.3 / sqrt(n), V);
    for (int i = 0; i < n; i++) V[i + n * i] += 1;
}

static void test_workspace_and_arguments(void)
{
    CHECK(mbsi_expm_ws_new(0) == NULL, "nmax 0 accepted");
    double A[4] = {0, 1, -1, 0}, V[2] = {1, 0}, X[2];
    CHECK(mbsi_expm_apply(ws, NMAX + 1, A, NMAX + 1, 1, V, NMAX + 1, X, NMAX + 1, -1, 1, NULL) == MBS_ERR_ARG, "n > nmax accepted");
    CHECK(mbsi_expm_apply(ws, 2, A, 1, 1, V, 2, X, 2, -1, 1, NULL) == MBS_ERR_ARG, "lda < n accepted");
    CHECK(mbsi_expm_apply(ws, 2, A, 2, 1, V, 2, X, 2, 5, 1, NULL) == MBS_ERR_ARG, "max_mat_mult 5 accepted");
    CHECK(mbsi_expm_apply(ws, 2, A, 2, 1, V, 2, X, 2, -2, 1, NULL) == MBS_ERR_ARG, "max_mat_mult -2 accepted");
    CHECK(mbsi_expm_pade_apply(ws, 2, A, 2, 4, 0, 1, V, 2, X, 2, NULL) == MBS_ERR_ARG, "Padé degree 4 accepted");
    double B[4] = {0, NAN, 1, 0};
    CHECK(mbsi_expm_apply(ws, 2, B, 2, 1, V, 2, X, 2, -1, 1, NULL) == MBS_ERR_NUMERIC, "NaN not reported");
    B[1] = INFINITY;
    CHECK(mbsi_expm_apply(ws, 2, B, 2, 1, V, 2, X, 2, 0, 0, NULL) == MBS_ERR_NUMERIC, "inf not reported");
    /* a rotation: e^A V with A = [[0 −1] [1 0]] turns V by one radian */
    CHECK(mbsi_expm_apply(ws, 2, A, 2, 1, V, 2, X, 2, -1, 1, NULL) == 0, "rotation failed");
    double ref[2] = {cos(1.0), sin(1.0)};
    CHECK_CLOSE(X, ref, 2, 1e-15, "e^A V of a rotation");
}

/* Each diagonal Padé approximant equals N_m(x)/N_m(−x) with the coefficients written from
 * their formula (2m−k)! m! / ((2m)! k! (m−k)!) — checks the tables and the even/odd split. */
static void test_pade_formula(void)
{
    static const int degrees[7] = {1, 2, 3, 5, 7, 9, 13};
    const int n = 9;
    double A[81] = {0}, X[81], ref[81];
    for (int i = 0; i < n; i++) A[i + n * i] = -4 + 0.6 * i;   /* x = −4 .. 0.8, away from the poles of r_1, r_2 */
    for (int t = 0; t < 7; t++) {
        int m = degrees[t];
        double c[14];
        c[0] = 1;
        for (int k = 1; k <= m; k++) c[k] = c[k - 1] * (m - k + 1) / ((double)(2 * m - k + 1) * k);
        memset(ref, 0, sizeof ref);
        for (int i = 0; i < n; i++) {
            double x = A[i + n * i], num = 0, den = 0;
            for (int k = m; k >= 0; k--) { num = num * x + c[k]; den = den * (-x) + c[k]; }
            ref[i + n * i] = num / den;
        }
        mbs_expm_info info;
        int rc = mbsi_expm_pade_apply(ws, n, A, n, m, 0, n, NULL, n, X, n, &info);
        CHECK(rc == MBS_ERR_ARG, "V = NULL accepted by mbsi_expm_pade_apply");
        double Id[81] = {0};
        for (int i = 0; i < n; i++) Id[i + n * i] = 1;
        rc = mbsi_expm_pade_apply(ws, n, A, n, m, 0, n, Id, n, X, n, &info);
        CHECK(rc == 0 && info.order == m && info.squarings == 0, "degree %d: rc %d", m, rc);
        CHECK_CLOSE(X, ref, n * n, 1e-14, "Padé approximant against its formula");
        /* with s squarings: r_m(A/2^s)^(2^s) on the diagonal */
        for (int i = 0; i < n; i++) {
            double x = A[i + n * i] / 8, num = 0, den = 0;
            for (int k = m; k >= 0; k--) { num = num * x + c[k]; den = den * (-x) + c[k]; }
            ref[i + n * i] = pow(num / den, 8);
        }
        rc = mbsi_expm_pade_apply(ws, n, A, n, m, 3, n, Id, n, X, n, &info);
        CHECK(rc == 0 && info.squarings == 3, "degree %d, s = 3: rc %d", m, rc);
        CHECK_CLOSE(X, ref, n * n, 1e-13, "Padé approximant with 3 squarings");
    }
}

/* Full algorithm on diagonalisable matrices, real and complex spectra, norms 1e-3 .. 1e3. */
static void test_eigendecomposition(void)
{
    unsigned long long seed = 11;
    static const int sizes[4] = {2, 5, 12, 27};
    double *V = malloc(sizeof(double) * NMAX * NMAX), *A = malloc(sizeof(double) * NMAX * NMAX);
    double *E = malloc(sizeof(double) * NMAX * NMAX), *X = malloc(sizeof(double) * NMAX * NMAX);
    double worst = 0;
    for (int t = 0; t < 4; t++) {
        int n = sizes[t];
        for (int e = -3; e <= 3; e++) {
            double scale = pow(10.0, e), re[NMAX], im[NMAX];
            random_basis(n, &seed, V);
            for (int i = 0; i < n; i++) {
                /* eigenvalues in the left half plane, as a damped mechanical system's, some
                 * complex; a few positive ones too (e^A then grows) */
                re[i] = scale * tm_uniform(&seed, -1, i % 5 == 0 ? 0.3 : 0);
                im[i] = (i % 3 == 1) ? scale * tm_uniform(&seed, -1, 1) : 0;
            }
            eig_pair(n, V, re, im, A, E);
            for (int bal = 0; bal <= 1; bal++) {
                mbs_expm_info info;
                int rc = mbsi_expm(ws, n, A, n, X, n, MBS_EXPM_FULL, bal, &info);
                CHECK(rc == 0, "n %d norm %g: rc %d", n, scale, rc);
                /* the exponential's condition grows with ‖A‖: allow u ‖A‖ times a margin */
                double err = relerr(n, n, X, E), tol = 1e-13 * fmax(1.0, norm1(n, A));
                if (err / tol > worst) worst = err / tol;
                CHECK(err <= tol, "n %d, ‖A‖ %.3g, balance %d: error %.3e > %.1e (m %d, s %d)", n,
                      norm1(n, A), bal, err, tol, info.order, info.squarings);
            }
        }
    }
    free(V); free(A); free(E); free(X);
}

/* Small norms: Taylor series; every variant that reaches θ_m must give double precision. */
static void test_taylor(void)
{
    unsigned long long seed = 5;
    const int n = 8;
    double A[64], E[64], X[64];
    static const double norms[4] = {1e-9, 1e-4, 1e-2, 0.2};
    for (int t = 0; t < 4; t++) {
        random_matrix(n, &seed, 1, A);
        double f = norms[t] / norm1(n, A);
        for (int i = 0; i < 64; i++) A[i] *= f;
        taylor(n, A, E);
        mbs_expm_info info;
        CHECK(mbsi_expm(ws, n, A, n, X, n, MBS_EXPM_FULL, 1, &info) == 0, "full failed");
        CHECK(relerr(n, n, X, E) < 4e-16 * n, "full, ‖A‖ %g: error %.3e", norms[t], relerr(n, n, X, E));
        CHECK(info.squarings == 0 && info.order <= 5, "‖A‖ %g: m %d s %d for a small norm", norms[t], info.order,
              info.squarings);
        /* the reduced variants use a lower degree only when it reaches double precision */
        for (int mm = 0; mm <= 4; mm++) {
            CHECK(mbsi_expm(ws, n, A, n, X, n, mm, 1, &info) == 0, "reduced failed");
            static const int deg[5] = {1, 2, 3, 5, 7};
            static const double th[5] = {3.65e-8, 5.31e-4, 1.49e-2, 2.53e-1, 9.5e-1};
            if (norms[t] <= th[mm])
                CHECK(relerr(n, n, X, E) < 4e-16 * n, "max_mat_mult %d, ‖A‖ %g: error %.3e", mm, norms[t],
                      relerr(n, n, X, E));
            CHECK(info.order <= deg[mm] && info.squarings == 0 && info.mat_mults <= mm,
                  "max_mat_mult %d: degree %d, %d products", mm, info.order, info.mat_mults);
        }
    }
}

/* e^{tJ} of a Jordan block J = λI + N in closed form: e^{λt} t^k/k! on the k-th superdiagonal. */
static void test_jordan(void)
{
    const int n = 7;
    double J[49], E[49], X[49];
    static const double ts[3] = {0.01, 1, 30};
    for (int c = 0; c < 3; c++) {
        double lam = -0.5, t = ts[c];
        memset(J, 0, sizeof J);
        memset(E, 0, sizeof E);
        for (int i = 0; i < n; i++) {
            J[i + n * i] = lam * t;
            if (i + 1 < n) J[i + n * (i + 1)] = t;
        }
        for (int j = 0; j < n; j++) {
            double f = 1;
            for (int k = 0; k <= j; k++) {
                if (k) f *= t / k;
                E[(j - k) + n * j] = exp(lam * t) * f;
            }
        }
        for (int bal = 0; bal <= 1; bal++) {
            CHECK(mbsi_expm(ws, n, J, n, X, n, MBS_EXPM_FULL, bal, NULL) == 0, "Jordan failed");
            CHECK(relerr(n, n, X, E) < 1e-13 * fmax(1, t), "Jordan block, t = %g, balance %d: error %.3e", t, bal,
                  relerr(n, n, X, E));
        }
    }
    /* nilpotent: e^N = I + N + N²/2 + ... exactly, and every variant gets it right, because
     * N^n = 0 — the reduced ones too when the degree reaches n − 1 */
    memset(J, 0, sizeof J);
    for (int i = 0; i + 1 < n; i++) J[i + n * (i + 1)] = 1;
    memset(E, 0, sizeof E);
    for (int j = 0; j < n; j++) {
        double f = 1;
        for (int k = 0; k <= j; k++) {
            if (k) f /= k;
            E[(j - k) + n * j] = f;
        }
    }
    CHECK(mbsi_expm(ws, n, J, n, X, n, MBS_EXPM_FULL, 1, NULL) == 0, "nilpotent failed");
    CHECK(relerr(n, n, X, E) < 1e-15, "nilpotent block: error %.3e", relerr(n, n, X, E));
    CHECK(mbsi_expm(ws, n, J, n, X, n, 4, 1, NULL) == 0, "nilpotent failed");
    CHECK(relerr(n, n, X, E) < 1e-15, "nilpotent block, degree 7: error %.3e", relerr(n, n, X, E));
}

/* e^{tA} for A = [[0 1] [−k −b]] in closed form: e^{tA} = e^{μt} (c I + s (A − μ I)) with
 * μ = −b/2, ω² = k − b²/4 and c = cos ωt, s = sin(ωt)/ω (or cosh/sinh when overdamped). */
static void spring_exp(double k, double b, double t, double E[4])
{
    double mu = -b / 2, w2 = k - b * b / 4, c, s;
    if (w2 > 0) { double w = sqrt(w2); c = cos(w * t); s = sin(w * t) / w; }
    else if (w2 < 0) { double w = sqrt(-w2); c = cosh(w * t); s = sinh(w * t) / w; }
    else { c = 1; s = t; }
    double em = exp(mu * t);
    E[0] = em * (c + s * (0 - mu)); E[1] = em * s * (-k);
    E[2] = em * s * 1;             E[3] = em * (c + s * (-b - mu));
}

/* Stiff contact-like matrices: huge norms and, embedded by a diagonal similarity with
 * powers of 2 (exact), badly scaled. Balanced, the full algorithm must stay accurate; the
 * unbalanced problem is the reason balancing is on by default. */
static void test_stiff(void)
{
    static const double ks[4] = {1e3, 1e5, 1e6, 1e8}, bs[4] = {10, 300, 2000, 1e4}, ts[3] = {1e-4, 2e-3, 4e-2};
    for (int i = 0; i < 4; i++)
        for (int j = 0; j < 3; j++) {
            double A[4] = {0, -ks[i] * ts[j], ts[j], -bs[i] * ts[j]}, E[4], X[4];
            spring_exp(ks[i], bs[i], ts[j], E);
            for (int bal = 0; bal <= 1; bal++) {
                mbs_expm_info info;
                CHECK(mbsi_expm(ws, 2, A, 2, X, 2, MBS_EXPM_FULL, bal, &info) == 0, "stiff failed");
                /* relative to the largest entry: the entries span many orders of magnitude */
                double scale = fmax(fmax(fabs(E[0]), fabs(E[1])), fmax(fabs(E[2]), fabs(E[3])));
                double err = 0;
                for (int e = 0; e < 4; e++) err = fmax(err, fabs(X[e] - E[e]) / scale);
                /* unbalanced, the squarings of a very non-normal matrix lose digits */
                double tol = bal ? 1e-12 : 1e-6;
                CHECK(err < tol, "k %g b %g t %g balance %d: error %.3e (m %d s %d)", ks[i], bs[i], ts[j], bal, err,
                      info.order, info.squarings);
                if (bal && ks[i] * ts[j] > 4 * (1 + bs[i]) * ts[j])
                    CHECK(info.balanced == 1 && info.norm1 < norm1(2, A) / 4, "k %g t %g: balancing did not lower the norm",
                          ks[i], ts[j]);
            }
        }
    /* three spring-dampers, scaled by 2^(±10b): S⁻¹ blkdiag(A_b) S */
    const int n = 6;
    double A[36] = {0}, X[36];
    for (int b = 0; b < 3; b++) {
        double Ai[4] = {0, -ks[b + 1] * 2e-3, 2e-3, -bs[b + 1] * 2e-3};
        double d[2] = {ldexp(1, 10 * b), ldexp(1, -7 * b)};
        for (int c = 0; c < 2; c++)
            for (int r = 0; r < 2; r++) A[(2 * b + r) + n * (2 * b + c)] = Ai[r + 2 * c] * d[c] / d[r];
    }
    double err_full[2] = {0, 0}, norm_used[2] = {0, 0};
    for (int bal = 0; bal <= 1; bal++)
        for (int mm = -1; mm <= 4; mm++) {
            mbs_expm_info info;
            CHECK(mbsi_expm(ws, n, A, n, X, n, mm, bal, &info) == 0, "scaled stiff failed");
            /* each block, scaled back, against its closed form, relative to its largest entry */
            double err = 0;
            int stable = 1;
            for (int b = 0; b < 3; b++) {
                double d[2] = {ldexp(1, 10 * b), ldexp(1, -7 * b)}, Ei[4];
                spring_exp(ks[b + 1], bs[b + 1], 2e-3, Ei);
                double sc = fmax(fmax(fabs(Ei[0]), fabs(Ei[1])), fmax(fabs(Ei[2]), fabs(Ei[3])));
                for (int c = 0; c < 2; c++)
                    for (int r = 0; r < 2; r++) {
                        double x = X[(2 * b + r) + n * (2 * b + c)] * d[r] / d[c];
                        err = fmax(err, fabs(x - Ei[r + 2 * c]) / sc);
                    }
                /* both eigenvalues of the block inside the unit disc (Jury: |det| < 1, |tr| < 1 + det) */
                const double *Xb = X + 2 * b + n * 2 * b;
                double tr = Xb[0] + Xb[n + 1], det = Xb[0] * Xb[n + 1] - Xb[1] * Xb[n];
                if (!(fabs(det) < 1 && fabs(tr) < 1 + det)) stable = 0;
            }
            if (mm == -1) { err_full[bal] = err; norm_used[bal] = info.norm1; }
            /* the reduced variants have s = 0 and a low degree: inaccurate on these norms, but
             * the diagonal Padé approximants are A-stable: a damped block stays damped */
            if (bal && mm >= 0) CHECK(stable, "scaled stiff, max_mat_mult %d: a block's eigenvalues left the unit disc", mm);
        }
    CHECK(err_full[1] < 1e-11, "scaled stiff, full, balanced: error %.3e", err_full[1]);
    CHECK(norm_used[1] < norm_used[0] * 1e-6, "balancing lowered ‖A‖₁ only from %.3g to %.3g", norm_used[0], norm_used[1]);
    CHECK(err_full[1] < err_full[0], "balancing did not help: %.3e vs %.3e", err_full[1], err_full[0]);
}

/* Reduced variants (s = 0, degree j): e^A − r_j(A) = ±C_j A^(2j+1) + O(A^(2j+2)) with
 * C_j = (j!)² / ((2j)! (2j+1)!); halving A divides the error by about 2^(2j+1). */
static void pow_matrix(int n, const double *A, int p, double *P)
{
    double T[100];
    memcpy(P, A, sizeof(double) * n * n);
    for (int k = 1; k < p; k++) { mul(n, P, A, T); memcpy(P, T, sizeof(double) * n * n); }
}

/* e^A for ‖A‖ up to a few: (Taylor(A/8))^8 */
static void reference_exp(int n, const double *A, double *E)
{
    double S[100], T[100];
    for (int i = 0; i < n * n; i++) S[i] = A[i] / 8;
    taylor(n, S, T);
    mul(n, T, T, S); mul(n, S, S, T); mul(n, T, T, E);
}

static void test_reduced_orders(void)
{
    unsigned long long seed = 21;
    const int n = 10;
    double R[100], A[100], A2[100], E[100], X[100], P[100];
    static const int deg[5] = {1, 2, 3, 5, 7};
    static const double alpha[5] = {0.1, 0.1, 0.3, 1.0, 2.0};
    for (int trial = 0; trial < 3; trial++) {
        /* eigenvalues near −α, as a damped system's: the powers of A do not decay, so the
         * error is well above the rounding level */
        random_matrix(n, &seed, 0.3 / sqrt(n), R);
        for (int mm = 0; mm <= 4; mm++) {
            int j = deg[mm];
            for (int i = 0; i < 100; i++) A[i] = alpha[mm] * (R[i] - (i % (n + 1) == 0 ? 1 : 0));
            double fj = 1, f2j = 1;
            for (int k = 2; k <= j; k++) fj *= k;
            for (int k = 2; k <= 2 * j; k++) f2j *= k;
            double C = fj * fj / (f2j * f2j * (2 * j + 1));
            double err[2];
            for (int half = 0; half <= 1; half++) {
                for (int i = 0; i < 100; i++) A2[i] = half ? A[i] / 2 : A[i];
                reference_exp(n, A2, E);
                mbs_expm_info info;
                CHECK(mbsi_expm(ws, n, A2, n, X, n, mm, 0, &info) == 0, "reduced failed");
                CHECK(info.order == j && info.squarings == 0 && info.mat_mults == mm,
                      "max_mat_mult %d: m %d s %d products %d", mm, info.order, info.squarings, info.mat_mults);
                pow_matrix(n, A2, 2 * j + 1, P);
                double pred = C * normf(n, n, P) / normf(n, n, E);
                err[half] = relerr(n, n, X, E);
                /* the leading term dominates for the small α of degrees 1–3; at the larger α
                 * that degrees 5 and 7 need to rise above rounding, the next terms lower it */
                double lo = j <= 3 ? pred / 3 : pred / 20;
                CHECK(err[half] < 3 * pred && err[half] > lo, "degree %d, ‖A‖₁ %.2f: error %.3e, predicted %.3e", j,
                      norm1(n, A2), err[half], pred);
            }
            double ratio = err[0] / err[1], expect = pow(2, 2 * j + 1);
            CHECK(ratio > expect / 2 && ratio < expect * 2, "degree %d: halving A divides the error by %.1f, not %.0f", j,
                  ratio, expect);
            /* balancing does not change a well-scaled matrix's answer beyond the approximation */
            double Xb[100];
            CHECK(mbsi_expm(ws, n, A, n, Xb, n, mm, 1, NULL) == 0, "balanced reduced failed");
            reference_exp(n, A, E);
            CHECK(relerr(n, n, Xb, E) < 3 * err[0] + 1e-14, "degree %d balanced: error %.3e vs %.3e", j, relerr(n, n, Xb, E),
                  err[0]);
        }
    }
}

/* e^A V computed directly (eq. 33) equals e^A times V, for every variant, with and without
 * balancing, on both paths (r applied 2^s times to V, or r squared s times); X may be V. */
static void test_action(void)
{
    unsigned long long seed = 33;
    const int n = 27;
    double *A = malloc(sizeof(double) * n * n), *E = malloc(sizeof(double) * n * n);
    double V[27 * 3], X[27 * 3], EV[27 * 3];
    for (int t = 0; t < 3; t++) {
        random_matrix(n, &seed, t == 0 ? 0.05 : (t == 1 ? 0.5 : 8), A);
        for (int i = 0; i < n * 3; i++) V[i] = tm_uniform(&seed, -1, 1);
        for (int bal = 0; bal <= 1; bal++)
            for (int mm = -1; mm <= 4; mm++) {
                for (int k = 1; k <= 3; k++) {
                    mbs_expm_info i1, i2;
                    CHECK(mbsi_expm(ws, n, A, n, E, n, mm, bal, &i1) == 0, "expm failed");
                    for (int c = 0; c < k; c++)
                        for (int r = 0; r < n; r++) {
                            double s = 0;
                            for (int p = 0; p < n; p++) s += E[r + n * p] * V[p + n * c];
                            EV[r + n * c] = s;
                        }
                    CHECK(mbsi_expm_apply(ws, n, A, n, k, V, n, X, n, mm, bal, &i2) == 0, "apply failed");
                    CHECK(i1.order == i2.order && i1.squarings == i2.squarings, "different choices");
                    CHECK(relerr(n, k, X, EV) < 1e-13, "t %d balance %d max_mat_mult %d k %d: e^A V differs from (e^A) V by %.3e",
                          t, bal, mm, k, relerr(n, k, X, EV));
                }
            }
        /* in place */
        memcpy(X, V, sizeof V);
        CHECK(mbsi_expm_apply(ws, n, A, n, 2, X, n, X, n, MBS_EXPM_FULL, 1, NULL) == 0, "in place failed");
        mbsi_expm_apply(ws, n, A, n, 2, V, n, EV, n, MBS_EXPM_FULL, 1, NULL);
        CHECK(relerr(n, 2, X, EV) == 0, "in place differs");
    }
    /* leading dimensions larger than n */
    {
        const int ld = 31;
        double *Ab = calloc((size_t)ld * n, sizeof(double)), Vb[31 * 2] = {0}, Xb[31 * 2];
        random_matrix(n, &seed, 0.7, A);
        for (int j = 0; j < n; j++) memcpy(Ab + ld * j, A + n * j, sizeof(double) * n);
        for (int i = 0; i < n; i++) { Vb[i] = V[i]; Vb[ld + i] = V[n + i]; }
        mbsi_expm_apply(ws, n, A, n, 2, V, n, X, n, MBS_EXPM_FULL, 1, NULL);
        CHECK(mbsi_expm_apply(ws, n, Ab, ld, 2, Vb, ld, Xb, ld, MBS_EXPM_FULL, 1, NULL) == 0, "ld failed");
        double Xc[27 * 2];
        for (int i = 0; i < n; i++) { Xc[i] = Xb[i]; Xc[n + i] = Xb[ld + i]; }
        CHECK(relerr(n, 2, Xc, X) == 0, "leading dimension changes the result");
        free(Ab);
    }
    free(A); free(E);
}

/* Higham's choice of degree and scaling: the smallest m with ‖A‖₁ <= θ_m, else m = 13 and
 * s = ceil(log2(‖A‖₁ / θ_13)). */
static void test_choice(void)
{
    const int n = 3;
    double A[9] = {0}, X[9];
    static const double norms[7] = {1e-3, 0.1, 0.9, 2.0, 5.0, 100, 1e6};
    static const int m[7] = {3, 5, 7, 9, 13, 13, 13}, s[7] = {0, 0, 0, 0, 0, 5, 18};
    for (int t = 0; t < 7; t++) {
        A[0] = -norms[t];   /* 1-norm = norms[t]; balancing leaves a diagonal matrix alone */
        mbs_expm_info info;
        CHECK(mbsi_expm(ws, n, A, n, X, n, MBS_EXPM_FULL, 1, &info) == 0, "failed");
        CHECK(info.order == m[t] && info.squarings == s[t], "‖A‖ %g: m %d s %d, expected m %d s %d", norms[t],
              info.order, info.squarings, m[t], s[t]);
        double ref = exp(-norms[t]);
        if (ref > 1e-300) CHECK(fabs(X[0] / ref - 1) < 1e-12 * norms[t], "e^-%g = %.17g, not %.17g", norms[t], X[0], ref);
        else CHECK(fabs(X[0]) < 1e-300, "e^-%g = %.17g", norms[t], X[0]);
        static const int products[7] = {2, 3, 4, 5, 6, 6, 6};   /* powers and Padé, then the squarings */
        CHECK(info.mat_mults == products[t] + s[t], "‖A‖ %g: %d products", norms[t], info.mat_mults);
    }
}

/* The augmented matrix of Hammoud eq. 30 gives x_int and x_int2 (eq. 29): checked on a
 * scalar system x' = a x + b, where the integrals have a closed form. */
static void test_augmented_integrals(void)
{
    static const double as[3] = {-3.0, -1e4, 0.5};
    for (int t = 0; t < 3; t++) {
        double a = as[t], b = 2.0, x0 = 0.7, h = 0.01;
        double Ab[16] = {0};   /* 4x4: [[a b x0 0] [0 0 1 0] [0 0 0 1] [0 0 0 0]] times h */
        Ab[0] = a * h; Ab[0 + 4 * 1] = b * h; Ab[0 + 4 * 2] = x0 * h; Ab[1 + 4 * 2] = h; Ab[2 + 4 * 3] = h;
        double V[8] = {0}, X[8];
        V[2] = 1; V[4 + 3] = 1;
        CHECK(mbsi_expm_apply(ws, 4, Ab, 4, 2, V, 4, X, 4, MBS_EXPM_FULL, 1, NULL) == 0, "augmented failed");
        /* x(t) = e^{at} x0 + (e^{at} − 1)/a b; x_int = ∫x, x_int2 = ∫∫x */
        double e = expm1(a * h);
        double phi1 = e / a;                          /* ∫ e^{aτ} */
        double phi2 = (phi1 - h) / a;                 /* ∫∫ e^{aτ} */
        double phi3 = (phi2 - h * h / 2) / a;         /* ∫∫∫ e^{aτ} */
        double xint = phi1 * x0 + phi2 * b, xint2 = phi2 * x0 + phi3 * b;
        CHECK(fabs(X[0] - xint) < 1e-13 * fabs(xint), "a %g: x_int %.17g vs %.17g", a, X[0], xint);
        /* phi3 loses digits to cancellation for large |a|h: compare to its accuracy */
        CHECK(fabs(X[4] - xint2) < 1e-9 * fabs(xint2), "a %g: x_int2 %.17g vs %.17g", a, X[4], xint2);
    }
}

int main(void)
{
    ws = mbsi_expm_ws_new(NMAX);
    CHECK(ws != NULL, "workspace");
    RUN(test_workspace_and_arguments);
    RUN(test_pade_formula);
    RUN(test_eigendecomposition);
    RUN(test_taylor);
    RUN(test_jordan);
    RUN(test_stiff);
    RUN(test_reduced_orders);
    RUN(test_action);
    RUN(test_choice);
    RUN(test_augmented_integrals);
    mbsi_expm_ws_free(ws);
    return check_summary("test_expm");
}
