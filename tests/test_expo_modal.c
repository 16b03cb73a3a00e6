/* test_expo_modal.c — the exponential integrator's closed form for B = βK (src/step/expo_modal.c):
 * each mode's divided differences against values worked out to 80 digits, in every damping
 * regime and at the boundaries between the formulas; the contact-space averages λ̄, λ̄₂ against
 * the Padé exponential of the augmented matrix (eqs. 29–30) on random Delassus matrices; the
 * symmetric eigensolver; a whole Solo step by both paths; the option `method`. */
#include <stdlib.h>

#include "../src/step/expm.h"
#include "../src/step/expo_modal.h"
#include "../src/step/symeig.h"
#include "check.h"
#include "testmodels.h"
/* white-box: reads and sets the system's and contacts' fields directly */
#include "../src/contact/contact_internal.h"

/* Q_k = φ_k[x₁, x₂] at the eigenvalues of h [[−βλ, 1], [−λ, 0]], computed with mpmath at 80
 * digits from (φ_k(x₁) − φ_k(x₂))/(x₁ − x₂) (φ_k' at a double root), the inputs taken as the
 * doubles written here. The cases sit in each of the three forms of
 * mbsi_modal_divided_differences and on the boundaries between them (r = max|x| = 2, d² = ±a²/4,
 * critical damping d = 0 and a hair off it). */
static const struct {
    double lam, beta, h, Q[4];
    const char *what;
} dd_cases[] = {
    {0.0, 0.003, 0.002, {1.0, 5.0e-1, 1.6666666666666667e-1, 4.1666666666666667e-2}, "lambda = 0: x1 = x2 = 0"},
    {1e-09, 0.003, 0.002, {9.9999999999999633e-1, 4.9999999999999883e-1, 1.6666666666666638e-1, 4.1666666666666611e-2}, "lambda ~ 0"},
    {1000.0, 0.003, 0.002, {9.9634145367027592e-1, 4.9883525309939884e-1, 1.663837027819222e-1, 4.1611170977405944e-2}, "small: Taylor"},
    {200000.0, 0.003, 0.002, {5.0944164622484975e-1, 3.2737409801572829e-1, 1.2213679519534535e-1, 3.25771846873216e-2}, "under-damped, r = 1.8: Taylor"},
    {444444.44444444444, 0.003, 0.002, {2.6359713811572676e-1, 2.1652875622310861e-1, 8.9433475475240769e-2, 2.5302361411640249e-2}, "critical at r = 1.33 (the paper's material): Taylor"},
    {1000000.0, 0.0, 0.002, {4.5464871341284083e-1, 3.5403670913678559e-1, 1.3633782164678979e-1, 3.6490822715803601e-2}, "undamped, r = 2: Taylor"},
    {1000000.0000010001, 0.0, 0.002, {4.5464871341240538e-1, 3.5403670913665886e-1, 1.363378216467623e-1, 3.6490822715798787e-2}, "undamped, r just above 2: eigenvalue form"},
    {4000000.0, 0.0, 0.002, {-1.8920062382698207e-1, 1.0335272630397574e-1, 7.4325038989186376e-2, 2.4790454606001515e-2}, "undamped, r = 4"},
    {4000000.0, 0.001, 0.002, {1.8315638888734179e-2, 5.6776362847270566e-2, 3.2967091145818828e-2, 1.1217931749136174e-2}, "critical, a = 4"},
    {4000000.0000040005, 0.001, 0.002, {1.8315638888709755e-2, 5.677636284721073e-2, 3.296709114578891e-2, 1.1217931749127168e-2}, "critical + 1e-12, a = 4"},
    {3999999.6, 0.001, 0.002, {1.8315641330819755e-2, 5.677636883016812e-2, 3.2967094137267556e-2, 1.1217932649628684e-2}, "critical - 1e-7, a = 4"},
    {400000000.0, 0.0001, 0.002, {4.2483542552916859e-18, 6.2499999999999987e-4, 5.9374999999999998e-4, 2.8242187499999999e-4}, "critical, a = 40"},
    {5000000.0, 0.001, 0.002, {1.3935903371698331e-2, 4.4921935903802522e-2, 2.684223687951382e-2, 9.3327847650529627e-3}, "over-damped, near-critical band"},
    {3500000.0, 0.001, 0.002, {2.2129132909573075e-2, 6.536699549962507e-2, 3.7164421328075099e-2, 1.2463003943132087e-2}, "under-damped, near-critical band"},
    {5333333.333333333, 0.001, 0.002, {1.2965247861543567e-2, 4.1997307241238233e-2, 2.526860038587103e-2, 8.8345760301314434e-3}, "over-damped, band edge d^2 = a^2/4"},
    {3200000.0, 0.001, 0.002, {2.5465514436605182e-2, 7.1851608647420262e-2, 4.0209702360930086e-2, 1.3344241893955248e-2}, "under-damped, band edge d^2 = -a^2/4"},
    {8000000.0, 0.001, 0.002, {8.4873955966523184e-3, 2.7627740732613829e-2, 1.7170898521297699e-2, 6.1761838414569676e-3}, "over-damped: eigenvalue form"},
    {2000000.0, 0.001, 0.002, {6.1530012402888363e-2, 1.1665741564829389e-1, 5.8980040625492006e-2, 1.8427802731217259e-2}, "under-damped: eigenvalue form"},
    {100000000.0, 0.003, 0.002, {8.5696666441133973e-4, 1.2159798716687522e-3, 6.7388777583584328e-4, 2.3612838656706315e-4}, "stiff over-damped"},
    {1000000000.0, 10.0, 0.002, {4.9990001000933036e-8, 4.9994997834316516e-8, 2.4998330917163408e-8, 8.3329154334995568e-9}, "very stiff over-damped, a = 1e7"},
    {30000000.0, 1e-05, 0.002, {-6.7583322240147523e-2, 8.7814344466459314e-3, 8.8526205131013327e-3, 4.0492249437124437e-3}, "lightly damped, many periods per step"},
    {100000.0, 0.0001, 0.04, {5.2480032177715938e-3, 1.1432159596403571e-3, 6.2143419399898264e-3, 3.1023190454022731e-3}, "a 40 ms step"},
};

static void test_divided_differences(void)
{
    for (size_t c = 0; c < sizeof dd_cases / sizeof *dd_cases; c++) {
        double Q[4];
        mbsi_modal_divided_differences(dd_cases[c].lam, dd_cases[c].beta, dd_cases[c].h, Q);
        for (int k = 0; k < 4; k++) {
            double ref = dd_cases[c].Q[k], err = fabs(Q[k] - ref);
            /* relative, but a Q₀ of e^{-40} is compared with the other Q_k's size */
            CHECK(err <= 1e-13 * fabs(ref) + 1e-17, "%s (lambda %g, beta %g, h %g): Q%d = %.17g, exact %.17g (error %.2e)",
                  dd_cases[c].what, dd_cases[c].lam, dd_cases[c].beta, dd_cases[c].h, k, Q[k], ref, err / fabs(ref));
        }
    }
    /* smoothness across the boundaries: λ walked through critical damping (a = 4) and through
     * r = 2 in steps of 1e-9 relative; a switch of formula that lost accuracy would show as a
     * second difference far above the ~1e-18 of a smooth function */
    const double starts[2][2] = {{4e6, 1e-3}, {1e6, 0.0}};
    for (int b = 0; b < 2; b++) {
        double Q[101][4], worst = 0;
        for (int i = 0; i <= 100; i++) mbsi_modal_divided_differences(starts[b][0] * (1 + 1e-9 * (i - 50)), starts[b][1], 0.002, Q[i]);
        for (int i = 1; i < 100; i++)
            for (int k = 0; k < 4; k++) worst = check_worst(worst, fabs(Q[i][k] - 0.5 * (Q[i - 1][k] + Q[i + 1][k])) / fabs(Q[i][k]));
        CHECK(worst < 1e-14, "boundary %d: second difference %.2e between neighbours 1e-9 apart", b, worst);
    }
}

/* (Q_k(λ) − 1/(k+1)!)/λ against the same 80-digit values (where the table's 17 digits leave
 * enough of the difference: the bound grows as the difference shrinks), at λ = 0 against the
 * derivative −hβ/(k+2)! − h²/(k+3)!, at λ = 1e-9 against it too (the next term is 1e-9 of it),
 * and smooth through r = 2 (the switch from its series to the difference) and down to λ = 0. */
static void test_divided_differences_excess(void)
{
    static const double inv_fact1[4] = {1.0, 0.5, 1.0 / 6, 1.0 / 24};
    for (size_t c = 0; c < sizeof dd_cases / sizeof *dd_cases; c++) {
        double lam = dd_cases[c].lam, beta = dd_cases[c].beta, h = dd_cases[c].h, Qt[4];
        mbsi_modal_divided_differences_excess(lam, beta, h, Qt);
        for (int k = 0; k < 4; k++) {
            double fk2 = 1.0 / (k == 0 ? 2 : k == 1 ? 6 : k == 2 ? 24 : 120), fk3 = 1.0 / (k == 0 ? 6 : k == 1 ? 24 : k == 2 ? 120 : 720);
            double deriv = -h * beta * fk2 - h * h * fk3, ref, tol;
            if (lam < 1) {
                ref = deriv;
                tol = 1e-14 + 1e-8 * (lam > 0);
            } else {
                double diff = dd_cases[c].Q[k] - inv_fact1[k];
                ref = diff / lam;
                tol = 1e-13 + 3e-17 * inv_fact1[k] / fabs(diff);
            }
            double err = fabs(Qt[k] - ref) / fabs(ref);
            CHECK(err <= tol, "%s (lambda %g): excess %d = %.17g, exact %.17g (relative error %.2e, bound %.1e)",
                  dd_cases[c].what, lam, k, Qt[k], ref, err, tol);
        }
    }
    /* the second difference of neighbours 1e-9 apart, through r = 2 (undamped, λ = 1e6 at 2 ms),
     * and on a grid from λ = 0 to the critical damping of the paper's material, step 1e3 */
    double worst = 0, Q[101][4];
    for (int i = 0; i <= 100; i++) mbsi_modal_divided_differences_excess(1e6 * (1 + 1e-9 * (i - 50)), 0.0, 0.002, Q[i]);
    for (int i = 1; i < 100; i++)
        for (int k = 0; k < 4; k++) worst = check_worst(worst, fabs(Q[i][k] - 0.5 * (Q[i - 1][k] + Q[i + 1][k])) / fabs(Q[i][k]));
    CHECK(worst < 1e-14, "excess through r = 2: second difference %.2e between neighbours 1e-9 apart", worst);
    worst = 0;
    for (int i = 0; i <= 100; i++) mbsi_modal_divided_differences_excess(1e3 * i, 0.003, 0.002, Q[i]);
    for (int i = 1; i < 100; i++)
        for (int k = 0; k < 4; k++)
            worst = check_worst(worst, fabs(Q[i][k] - 0.5 * (Q[i - 1][k] + Q[i + 1][k])) / fabs(Q[i][k]));
    CHECK(worst < 1e-4, "excess from lambda = 0: second difference %.2e on a grid of 1e3 (smooth: ~1e-5)", worst);
}

/* How far V diag(w) Vᵀ is from A: the largest |A v_j − w_j v_j| over n max(floor, max |A|), and
 * the largest entry of |VᵀV − I|. */
static void decomposition_error(int n, const double *A, const double *V, const double *w, double floor, double *res,
                                double *orth)
{
    double scale = floor;
    for (int i = 0; i < n * n; i++) scale = fmax(scale, fabs(A[i]));
    *res = *orth = 0;
    for (int j = 0; j < n; j++)
        for (int i = 0; i < n; i++) {
            double av = 0, vv = 0;
            for (int k = 0; k < n; k++) {
                av += A[i + n * k] * V[k + n * j];
                vv += V[k + n * i] * V[k + n * j];
            }
            *res = fmax(*res, fabs(av - w[j] * V[i + n * j]) / (n * scale));
            *orth = fmax(*orth, fabs(vv - (i == j)));
        }
}

/* A random symmetric matrix's eigendecomposition: V orthonormal, A V = V diag(w), to rounding;
 * with a repeated eigenvalue, with a zero matrix, scaled by 1e-140 and 1e140 (|u|² of a
 * reflection would underflow or overflow: those rows take the rescaled path), graded (from 1 to
 * 1e-264 down the diagonal, and from 1e-138 up to 1), with its first rows zero, and (kind 8) a
 * rank-n/2 C Cᵀ with every third row zero scaled by 1e-145, whose QL sweeps once lost V's
 * orthogonality (1e-4 to 1e-1) in squares that left the range of doubles (at 1e-150 they did not
 * converge): the sweeps now run on the tridiagonal matrix scaled to norm ~1. */
static void test_symeig(void)
{
    unsigned long long seed = 3;
    static const int sizes[5] = {1, 2, 6, 12, 24};
    for (int t = 0; t < 5; t++)
        for (int kind = 0; kind < 9; kind++) {
            int n = sizes[t];
            double *A = calloc((size_t)n * n, sizeof(double)), *V = calloc((size_t)n * n, sizeof(double));
            double *w = calloc((size_t)n, sizeof(double)), *e = calloc((size_t)n, sizeof(double));
            for (int j = 0; j < n; j++)
                for (int i = 0; i <= j; i++) {
                    static const double size[9] = {1e5, 1e5, 0, 1e-140, 1e140, 1, 1, 1e6, 0};
                    double x = tm_uniform(&seed, -1, 1) * size[kind];
                    /* graded: row and column k scaled by 1e-12k (kind 5) or 1e-3(n-1-k) (kind 6),
                     * a QL sweep's rotations spanning hundreds of orders of magnitude (the sweep's
                     * P and rho leave [2^-64, 2^64] and are rescaled); kind 7: the
                     * first third of the rows and columns zero, as a separated contact's in the
                     * closed form's second pass (the zero block ahead of the sweep's large entries
                     * once made a rescaled variant of the sweep underflow) */
                    if (kind == 5) x *= pow(1e-12, i + j);
                    if (kind == 6) x *= pow(1e-3, 2 * (n - 1) - i - j);
                    if (kind == 7 && 3 * i < n) x = 0;
                    A[i + n * j] = A[j + n * i] = x;
                }
            if (kind == 8) {
                int r = n / 2;
                double *C = calloc((size_t)n * (size_t)(r > 0 ? r : 1), sizeof(double));
                for (int k = 0; k < r; k++)
                    for (int i = 0; i < n; i++) C[i + n * k] = i % 3 == 0 ? 0 : tm_uniform(&seed, -1, 1);
                for (int j = 0; j < n; j++)
                    for (int i = 0; i < n; i++) {
                        double x = 0;
                        for (int k = 0; k < r; k++) x += C[i + n * k] * C[j + n * k];
                        A[i + n * j] = 1e-145 * x;
                    }
                free(C);
            }
            if (kind == 1) /* a repeated eigenvalue: A = 2e5 I + a rank-one term */
                for (int j = 0; j < n; j++)
                    for (int i = 0; i < n; i++) A[i + n * j] = (i == j ? 2e5 : 0) + 1e4 * (i + 1) * (j + 1) / (double)(n * n);
            memcpy(V, A, (size_t)n * n * sizeof(double));
            CHECK(mbsi_symeig(n, V, w, e) == 0, "n %d kind %d: no convergence", n, kind);
            double res, orth;
            decomposition_error(n, A, V, w, kind >= 3 && kind != 5 && kind != 6 ? 0 : 1, &res, &orth);
            CHECK(res < 1e-14 && orth < 1e-13, "n %d kind %d: residual %.2e, orthogonality %.2e", n, kind, res, orth);
            free(A);
            free(V);
            free(w);
            free(e);
        }
    double bad[4] = {1, NAN, NAN, 1}, V[4], w[2], e[2];
    memcpy(V, bad, sizeof V);
    CHECK(mbsi_symeig(2, V, w, e) != 0, "a NaN matrix decomposed");
}

static int by_value(const void *a, const void *b)
{
    double x = *(const double *)a, y = *(const double *)b;
    return (x > y) - (x < y);
}

/* mbsi_symeig_warm from the eigenvectors of a nearby matrix: A1 = A0 + δ |A0| E (E random
 * symmetric, δ from 0 to 1e-4) for a random matrix, one with an eigenvalue repeated n − 1 times
 * (which may refuse at δ = 1e-4, see below) and one with its first rows zero, decomposed to the
 * cold decomposition's accuracy with the same eigenvalues; 16 such steps of δ = 1e-9 in a row (expo_modal.c's chain before it restarts
 * cold; rounding accumulates in V along it) keep V orthonormal to 1e-13; from a basis that is not
 * near (the identity for a random matrix) it either refuses or is as accurate. */
static void test_symeig_warm(void)
{
    unsigned long long seed = 11;
    static const int sizes[4] = {2, 6, 12, 24};
    static const double deltas[4] = {0, 1e-12, 1e-8, 1e-4};
    for (int t = 0; t < 4; t++)
        for (int kind = 0; kind < 3; kind++) {
            int n = sizes[t];
            size_t nn = (size_t)n * n;
            double *A0 = calloc(nn, sizeof(double)), *A1 = calloc(nn, sizeof(double)), *V0 = calloc(nn, sizeof(double));
            double *V = calloc(nn, sizeof(double)), *C = calloc(nn, sizeof(double)), *B = calloc(nn, sizeof(double));
            double *w = calloc((size_t)n, sizeof(double)), *wc = calloc((size_t)n, sizeof(double));
            double *e = calloc((size_t)n, sizeof(double)), amax = 0;
            for (int j = 0; j < n; j++)
                for (int i = 0; i <= j; i++) {
                    double x = tm_uniform(&seed, -1, 1) * 1e6;
                    if (kind == 1) x = (i == j ? 3e6 : 0) + 1e5 * (i + 1) * (j + 1) / (double)(n * n);
                    if (kind == 2 && 3 * i < n) x = 0;
                    A0[i + n * j] = A0[j + n * i] = x;
                    amax = fmax(amax, fabs(x));
                }
            memcpy(V0, A0, nn * sizeof(double));
            CHECK(mbsi_symeig(n, V0, w, e) == 0, "n %d kind %d: no cold decomposition", n, kind);
            for (int d = 0; d < 4; d++) {
                for (int j = 0; j < n; j++)
                    for (int i = 0; i <= j; i++) {
                        double x = A0[i + n * j] + (kind == 2 && 3 * i < n ? 0 : deltas[d] * amax * tm_uniform(&seed, -1, 1));
                        A1[i + n * j] = A1[j + n * i] = x;
                    }
                memcpy(V, V0, nn * sizeof(double));
                int rc = mbsi_symeig_warm(n, A1, V, w, B, C, e);
                /* kind 1's n − 1 equal eigenvalues have no nearby eigenvectors once δ is large:
                 * δ = 1e-4 turns them anywhere in their subspace, a start that is not near, from
                 * which n = 24 takes 6 or 7 sweeps, as rounding goes (gcc's -std=c11 and clang's
                 * default, which fuses a·b + c, differ): there a refusal is the contract */
                if (rc != 0 && kind == 1 && deltas[d] > 1e-8) continue;
                CHECK(rc == 0, "n %d kind %d delta %g: warm start refused", n, kind, deltas[d]);
                double res, orth;
                decomposition_error(n, A1, V, w, 0, &res, &orth);
                CHECK(res < 1e-14 && orth < 1e-13, "n %d kind %d delta %g: residual %.2e, orthogonality %.2e", n, kind,
                      deltas[d], res, orth);
                /* the same eigenvalues as the cold decomposition (both sorted) */
                memcpy(C, A1, nn * sizeof(double));
                mbsi_symeig(n, C, wc, e);
                qsort(w, (size_t)n, sizeof *w, by_value);
                qsort(wc, (size_t)n, sizeof *wc, by_value);
                double gap = 0;
                for (int i = 0; i < n; i++) gap = fmax(gap, fabs(w[i] - wc[i]) / amax);
                CHECK(gap < 1e-13 * n, "n %d kind %d delta %g: eigenvalues %.2e from the cold ones", n, kind, deltas[d], gap);
            }
            /* a chain of 16 small steps, each from the last one's eigenvectors */
            memcpy(V, V0, nn * sizeof(double));
            memcpy(A1, A0, nn * sizeof(double));
            int refused = 0;
            for (int step = 0; step < 16; step++) {
                for (int j = 0; j < n; j++)
                    for (int i = 0; i <= j; i++) {
                        if (kind == 2 && 3 * i < n) continue;
                        A1[i + n * j] += 1e-9 * amax * tm_uniform(&seed, -1, 1);
                        A1[j + n * i] = A1[i + n * j];
                    }
                refused += mbsi_symeig_warm(n, A1, V, w, B, C, e) != 0;
            }
            double res, orth;
            decomposition_error(n, A1, V, w, 0, &res, &orth);
            CHECK(!refused && res < 1e-13 && orth < 1e-13, "n %d kind %d: after 16 warm steps residual %.2e, orthogonality %.2e",
                  n, kind, res, orth);
            /* a NaN off the diagonal is refused */
            if (kind == 0 && n > 2) {
                memcpy(A1, A0, nn * sizeof(double));
                A1[1] = A1[n] = NAN;
                memcpy(V, V0, nn * sizeof(double));
                CHECK(mbsi_symeig_warm(n, A1, V, w, B, C, e) != 0, "n %d: a NaN matrix decomposed warm", n);
            }
            /* not near: the identity as the start for a random matrix */
            if (kind == 0) {
                for (int i = 0; i < n * n; i++) V[i] = i % (n + 1) == 0;
                if (mbsi_symeig_warm(n, A0, V, w, B, C, e) == 0) {
                    decomposition_error(n, A0, V, w, 0, &res, &orth);
                    CHECK(res < 1e-14 && orth < 1e-13, "n %d: from the identity residual %.2e, orthogonality %.2e", n, res, orth);
                }
            }
            free(A0);
            free(A1);
            free(V0);
            free(V);
            free(C);
            free(B);
            free(w);
            free(wc);
            free(e);
        }
}

/* out = k_n n nᵀ + k_t (1 − n nᵀ) */
static void gain(const double n[3], double kn, double kt, double out[9])
{
    for (int j = 0; j < 3; j++)
        for (int i = 0; i < 3; i++) out[i + 3 * j] = (kn - kt) * n[i] * n[j] + (i == j ? kt : 0);
}

/* λ̄ and λ̄₂ through the Padé exponential of the augmented matrix (eqs. 29–30), as expo.c does:
 * A = [[0, I], [−ΥK, −βΥK]], b = [ṗ0; p̈_free], x(0) = [Δp; Δṗ]. */
static void pade_averages(int na, const double *ups, const double *Kb, double beta, const double *dp, const double *dv,
                          const double *v0, const double *acc, double h, double *lb, double *lb2)
{
    int nc = 3 * na, n = 6 * na, N = n + 3;
    double *Ab = calloc((size_t)N * N, sizeof(double)), *V2 = calloc(2 * (size_t)N, sizeof(double));
    double *X2 = calloc(2 * (size_t)N, sizeof(double)), *UK = calloc((size_t)nc * nc, sizeof(double));
    for (int j = 0; j < nc; j++) /* ΥK, K block diagonal */
        for (int i = 0; i < nc; i++) {
            int b = j / 3, l0 = 3 * b;
            double s = 0;
            for (int l = 0; l < 3; l++) s += ups[i + nc * (l0 + l)] * Kb[9 * b + l + 3 * (j - l0)];
            UK[i + nc * j] = s;
        }
    for (int k = 0; k < nc; k++) Ab[k + N * (nc + k)] = h;
    for (int j = 0; j < nc; j++)
        for (int i = 0; i < nc; i++) {
            Ab[nc + i + N * j] = -h * UK[i + nc * j];
            Ab[nc + i + N * (nc + j)] = -h * beta * UK[i + nc * j];
        }
    for (int r = 0; r < nc; r++) {
        Ab[r + N * n] = h * v0[r];
        Ab[nc + r + N * n] = h * acc[r];
        Ab[r + N * (n + 1)] = h * dp[r];
        Ab[nc + r + N * (n + 1)] = h * dv[r];
    }
    Ab[n + N * (n + 1)] = h;
    Ab[n + 1 + N * (n + 2)] = h;
    V2[n + 1] = 1;
    V2[N + n + 2] = 1;
    mbs_expm_ws *ws = mbsi_expm_ws_new(N);
    CHECK(mbsi_expm_apply(ws, N, Ab, N, 2, V2, N, X2, N, MBS_EXPM_FULL, 1, NULL) == 0, "expm failed");
    for (int a = 0; a < na; a++)
        for (int i = 0; i < 3; i++) {
            double s1 = 0, s2 = 0;
            for (int k = 0; k < 3; k++) {
                double K = Kb[9 * a + i + 3 * k];
                s1 += K * (X2[3 * a + k] + beta * X2[nc + 3 * a + k]);
                s2 += K * (X2[N + 3 * a + k] + beta * X2[N + nc + 3 * a + k]);
            }
            lb[3 * a + i] = -s1 / h;
            lb2[3 * a + i] = -2 * s2 / (h * h);
        }
    mbsi_expm_ws_free(ws);
    free(Ab);
    free(V2);
    free(X2);
    free(UK);
}

/* max |a − b| / max |b| */
/* A random Delassus matrix Υ = G Gᵀ (nc x nc) from a random G of nc x rank: 1/mass of 0.1 to
 * 10 kg along each coordinate, singular when rank < nc. */
static void random_delassus(unsigned long long *seed, int nc, int rank, double *G, double *ups)
{
    for (int i = 0; i < nc * rank; i++) G[i] = tm_uniform(seed, -1, 1) * sqrt(3.0 / rank);
    for (int j = 0; j < nc; j++)
        for (int i = 0; i < nc; i++) {
            double s = 0;
            for (int k = 0; k < rank; k++) s += G[i + nc * k] * G[j + nc * k];
            ups[i + nc * j] = s;
        }
}

/* A random unit normal within about 17° of +z. */
static void random_normal(unsigned long long *seed, double n[3])
{
    double m = 0;
    n[0] = tm_uniform(seed, -0.3, 0.3);
    n[1] = tm_uniform(seed, -0.3, 0.3);
    n[2] = 1;
    for (int k = 0; k < 3; k++) m += n[k] * n[k];
    for (int k = 0; k < 3; k++) n[k] /= sqrt(m);
}

static double rel_err(const double *a, const double *b, int n)
{
    double e = 0, s = 0;
    for (int i = 0; i < n; i++) {
        e = fmax(e, fabs(a[i] - b[i]));
        s = fmax(s, fabs(b[i]));
    }
    return e / s;
}

/* The closed form against the Padé path on random Delassus matrices Υ = G Gᵀ (1 to 8 contacts;
 * G with fewer columns than rows for a singular Υ: modes with λ = 0 up to rounding), isotropic
 * and anisotropic stiffness, and β of no damping, light damping, the paper's 3 ms, critical
 * damping of the stiffest and of the softest mode and a hair on either side, and heavy
 * damping; steps of 2 and 10 ms. */
static void test_against_pade(void)
{
    unsigned long long seed = 11;
    mbsi_modal w;
    int worst_case = -1;
    double worst = 0;
    for (int c = 0; c < 48; c++) {
        int na = 1 + c % 8, nc = 3 * na, rank = c % 3 == 2 ? (nc > 3 ? nc - 3 : 1) : nc + 6;
        double h = c % 5 == 4 ? 1e-2 : 2e-3, kn = c % 2 ? 1e5 : 2e5, kt = c % 4 < 2 ? kn : 0.5 * kn;
        mbs_carver cv = {NULL, 0};
        mbsi_modal_layout(&cv, &w, nc);
        void *blk = mbsi_carver_alloc(&cv);
        mbsi_modal_layout(&cv, &w, nc);
        double *G = calloc((size_t)nc * rank, sizeof(double)), *ups = calloc((size_t)nc * nc, sizeof(double));
        double *Kb = calloc(9 * (size_t)na, sizeof(double)), *Rb = calloc(9 * (size_t)na, sizeof(double));
        double *S = calloc((size_t)nc * nc, sizeof(double)), *ev = calloc((size_t)nc, sizeof(double));
        double *sc = calloc((size_t)nc, sizeof(double)), *x[4], *l1 = calloc(4 * (size_t)nc, sizeof(double));
        for (int k = 0; k < 4; k++) x[k] = calloc((size_t)nc, sizeof(double));
        random_delassus(&seed, nc, rank, G, ups);
        for (int a = 0; a < na; a++) {
            double n[3];
            random_normal(&seed, n);
            gain(n, kn, kt, Kb + 9 * a);
            gain(n, sqrt(kn), sqrt(kt), Rb + 9 * a);
        }
        /* S = R Υ R and its extreme eigenvalues, to place β at critical damping */
        for (int j = 0; j < nc; j++)
            for (int i = 0; i < nc; i++) {
                double s = 0;
                for (int k = 0; k < nc; k++)
                    for (int l = 0; l < nc; l++) {
                        double ri = k / 3 == i / 3 ? Rb[9 * (i / 3) + i % 3 + 3 * (k % 3)] : 0;
                        double rj = l / 3 == j / 3 ? Rb[9 * (j / 3) + l % 3 + 3 * (j % 3)] : 0;
                        if (ri != 0 && rj != 0) s += ri * ups[k + nc * l] * rj;
                    }
                S[i + nc * j] = s;
            }
        CHECK(mbsi_symeig(nc, S, ev, sc) == 0, "case %d: eigendecomposition", c);
        double lmax = 0, lmin = INFINITY;
        for (int i = 0; i < nc; i++) lmax = fmax(lmax, ev[i]);
        for (int i = 0; i < nc; i++) lmin = ev[i] > 1e-6 * lmax ? fmin(lmin, ev[i]) : lmin;
        const double betas[9] = {0, 1e-5, 3e-3, 2 / sqrt(lmax), 2 / sqrt(lmax) * (1 + 1e-9), 2 / sqrt(lmax) * (1 - 1e-9),
                                 2 / sqrt(lmin), 0.2, 2 / sqrt(lmin) * (1 - 1e-6)};
        for (int k = 0; k < 4; k++)
            for (int i = 0; i < nc; i++) x[k][i] = tm_uniform(&seed, -1, 1) * (k == 0 ? 1e-3 : k == 3 ? 10 : 0.1);
        for (int b = 0; b < 9; b++) {
            double *lb = l1, *lb2 = l1 + nc, *pb = l1 + 2 * nc, *pb2 = l1 + 3 * nc;
            int rc = mbsi_modal_averages(&w, 0, nc, ups, Rb, betas[b], x[0], x[1], x[2], x[3], h, lb, lb2);
            CHECK(rc == 0, "case %d beta %g: modal failed", c, betas[b]);
            pade_averages(na, ups, Kb, betas[b], x[0], x[1], x[2], x[3], h, pb, pb2);
            double e1 = rel_err(lb, pb, nc), e2 = rel_err(lb2, pb2, nc);
            if (fmax(e1, e2) > worst) {
                worst = fmax(e1, e2);
                worst_case = 9 * c + b;
            }
            CHECK(e1 < 1e-10 && e2 < 1e-10, "case %d (%d contacts, rank %d, h %g, beta %g): lambda bar off by %.2e, lambda bar 2 by %.2e",
                  c, na, rank < nc ? rank : nc, h, betas[b], e1, e2);
        }
        for (int k = 0; k < 4; k++) free(x[k]);
        free(G);
        free(ups);
        free(Kb);
        free(Rb);
        free(S);
        free(ev);
        free(sc);
        free(l1);
        free(blk);
    }
    printf("modal against Pade: largest relative difference %.2e (case %d)\n", worst, worst_case);
}

/* The factored form against the full one on Υ = B Bᵀ: random B of n = 3 to 24 rows and 1 to n
 * columns (Romeo's two soles: 24 x 12), some contacts separated (their R block zero, as expo
 * passes them), at the betas of test_against_pade; both on the same random state. */
static void test_factored(void)
{
    unsigned long long seed = 5;
    mbsi_modal w;
    double worst = 0;
    for (int c = 0; c < 40; c++) {
        int na = 1 + c % 8, nc = 3 * na, m = c % 4 == 0 ? nc : c % 4 == 1 ? (nc + 1) / 2 : 1 + (int)tm_uniform(&seed, 0, nc - 1);
        if (c == 39) { na = 8; nc = 24; m = 12; }
        double h = c % 5 == 4 ? 1e-2 : 2e-3, kn = c % 2 ? 1e5 : 2e5, kt = c % 4 < 2 ? kn : 0.5 * kn;
        mbs_carver cv = {NULL, 0};
        mbsi_modal_layout(&cv, &w, nc);
        void *blk = mbsi_carver_alloc(&cv);
        mbsi_modal_layout(&cv, &w, nc);
        double *Gf = calloc((size_t)nc * m, sizeof(double));
        double *ups = calloc((size_t)nc * nc, sizeof(double)), *Rb = calloc(9 * (size_t)na, sizeof(double));
        double *x[4], *out = calloc(4 * (size_t)nc, sizeof(double));
        for (int k = 0; k < 4; k++) x[k] = calloc((size_t)nc, sizeof(double));
        random_delassus(&seed, nc, m, Gf, ups);
        for (int a = 0; a < na; a++) {
            double n[3];
            random_normal(&seed, n);
            if (!(na > 2 && a == 1)) gain(n, sqrt(kn), sqrt(kt), Rb + 9 * a);   /* contact 1 separated */
        }
        for (int k = 0; k < 4; k++)
            for (int i = 0; i < nc; i++) x[k][i] = tm_uniform(&seed, -1, 1) * (k == 0 ? 1e-3 : k == 3 ? 10 : 0.1);
        const double betas[6] = {0, 1e-5, 3e-3, 1e-3, 0.2, 0.02};
        for (int b = 0; b < 6; b++) {
            double *lb = out, *lb2 = out + nc, *fb = out + 2 * nc, *fb2 = out + 3 * nc;
            int r1 = mbsi_modal_averages(&w, 0, nc, ups, Rb, betas[b], x[0], x[1], x[2], x[3], h, lb, lb2);
            int r2 = mbsi_modal_averages_factored(&w, 0, nc, m, Gf, nc, Rb, betas[b], x[0], x[1], x[2], x[3], h, fb, fb2);
            CHECK(r1 == 0 && r2 == 0, "case %d beta %g: failed", c, betas[b]);
            double e1 = rel_err(fb, lb, nc), e2 = rel_err(fb2, lb2, nc);
            worst = check_worst(worst, fmax(e1, e2));
            CHECK(e1 < 1e-11 && e2 < 1e-11, "case %d (%d x %d, h %g, beta %g): factored off by %.2e, %.2e", c, nc, m, h,
                  betas[b], e1, e2);
        }
        for (int k = 0; k < 4; k++) free(x[k]);
        free(Gf);
        free(ups);
        free(Rb);
        free(out);
        free(blk);
    }
    printf("factored against full: largest relative difference %.2e\n", worst);
}

/* Warm starts (warm = 1): a Delassus matrix that drifts by 1e-9 of its size per call, 40 calls,
 * full and factored (8 contacts, rank 12): the averages equal those of cold calls (warm = 0) to
 * 1e-12, the warm start was taken (the workspace counts its chain down) and restarted cold
 * after 16; a jump of 1e-3 in the matrix is decomposed cold. */
static void test_warm_start(void)
{
    unsigned long long seed = 13;
    for (int factored = 0; factored < 2; factored++) {
        int na = factored ? 8 : 4, nc = 3 * na, m = factored ? 12 : nc;
        mbsi_modal ww, wc;
        mbs_carver cv = {NULL, 0}, cc = {NULL, 0};
        mbsi_modal_layout(&cv, &ww, nc);
        mbsi_modal_layout(&cc, &wc, nc);
        void *bw = mbsi_carver_alloc(&cv), *bc = mbsi_carver_alloc(&cc);
        mbsi_modal_layout(&cv, &ww, nc);
        mbsi_modal_layout(&cc, &wc, nc);
        double *G = calloc((size_t)nc * m, sizeof(double)), *G0 = calloc((size_t)nc * m, sizeof(double));
        double *ups = calloc((size_t)nc * nc, sizeof(double)), *Rb = calloc(9 * (size_t)na, sizeof(double));
        double *x[4], *out = calloc(4 * (size_t)nc, sizeof(double)), worst = 0;
        for (int k = 0; k < 4; k++) x[k] = calloc((size_t)nc, sizeof(double));
        random_delassus(&seed, nc, m, G0, ups);
        for (int a = 0; a < na; a++) {
            double n[3];
            random_normal(&seed, n);
            gain(n, sqrt(1e5), sqrt(1e5), Rb + 9 * a);
        }
        for (int k = 0; k < 4; k++)
            for (int i = 0; i < nc; i++) x[k][i] = tm_uniform(&seed, -1, 1) * (k == 0 ? 1e-3 : k == 3 ? 10 : 0.1);
        int warm_calls = 0, restarts = 0;
        for (int call = 0; call < 40; call++) {
            double drift = call == 30 ? 1e-3 : 1e-9;
            for (int i = 0; i < nc * m; i++) G[i] = (G0[i] += drift * tm_uniform(&seed, -1, 1));
            for (int j = 0; j < nc; j++)
                for (int i = 0; i < nc; i++) {
                    double u = 0;
                    for (int k = 0; k < m; k++) u += G[i + nc * k] * G[j + nc * k];
                    ups[i + nc * j] = u;
                }
            double *lw = out, *lw2 = out + nc, *lc = out + 2 * nc, *lc2 = out + 3 * nc;
            int before = ww.warm_left, r1, r2;
            if (factored) {
                r1 = mbsi_modal_averages_factored(&ww, 1, nc, m, G, nc, Rb, 3e-3, x[0], x[1], x[2], x[3], 2e-3, lw, lw2);
                r2 = mbsi_modal_averages_factored(&wc, 0, nc, m, G, nc, Rb, 3e-3, x[0], x[1], x[2], x[3], 2e-3, lc, lc2);
            } else {
                r1 = mbsi_modal_averages(&ww, 1, nc, ups, Rb, 3e-3, x[0], x[1], x[2], x[3], 2e-3, lw, lw2);
                r2 = mbsi_modal_averages(&wc, 0, nc, ups, Rb, 3e-3, x[0], x[1], x[2], x[3], 2e-3, lc, lc2);
            }
            CHECK(r1 == 0 && r2 == 0, "factored %d call %d: failed", factored, call);
            warm_calls += ww.warm_left == before - 1;
            restarts += ww.warm_left == 16 && call > 0;
            if (call == 30) CHECK(ww.warm_left == 16, "factored %d: a jump of 1e-3 started warm", factored);
            worst = check_worst(worst, fmax(rel_err(lw, lc, nc), rel_err(lw2, lc2, nc)));
        }
        CHECK(worst < 1e-12, "factored %d: warm against cold %.2e", factored, worst);
        /* call 0 cold, 1-16 warm, 17 cold (the chain's end), 18-29 warm, 30 cold (the jump), 31-39 warm */
        CHECK(warm_calls == 37 && restarts == 2, "factored %d: %d warm calls, %d restarts (want 37 and 2)", factored,
              warm_calls, restarts);
        printf("warm starts (%s): %d of 40 calls warm, against cold %.2e\n", factored ? "factored" : "full", warm_calls,
               worst);
        for (int k = 0; k < 4; k++) free(x[k]);
        free(G);
        free(G0);
        free(ups);
        free(Rb);
        free(out);
        free(bw);
        free(bc);
    }
}

/* τ = −kp (q − q_ref) − kd v on the 12 joints (Solo's free-flyer: q has 7 base coordinates, v 6) */
static void hold_joints(mbs_system *s, const double *qref)
{
    for (int k = 6; k < s->nv; k++) s->tau[k] = -20 * (s->q[k + 1] - qref[k + 1]) - 0.3 * s->v[k];
}

/* warm_start = 0: a stepper that has run for a while, set back to a state, steps from it to the
 * same bits as a fresh one (no memory of its earlier decompositions); with warm_start = 1 the
 * standing robot's steps start warm and end within rounding of that (1e-12), not on it. */
static void test_warm_start_option(void)
{
    mbs_error err;
    mbs_model *m = mbs_model_from_urdf(tm_path("urdf/solo12.urdf"), NULL, &err);
    if (!m) { CHECK(0, "solo12: %s", err.msg); return; }
    for (int warm = 0; warm < 2; warm++) {
        mbs_system *a = tm_solo_standing(m, 0.0, 1e5, 300, 0.6), *b = tm_solo_standing(m, 0.0, 1e5, 300, 0.6);
        mbs_option o[1] = {tm_opt("warm_start", warm ? "1" : "0")};
        mbs_system_finalize(a, NULL);
        mbs_system_finalize(b, NULL);
        mbs_stepper *sa = mbs_stepper_new("expo", a, o, 1, &err), *sb = mbs_stepper_new("expo", b, o, 1, &err);
        CHECK(sa && sb, "expo: %s", err.msg);
        if (!sa || !sb) return;
        double *q0 = malloc(sizeof(double) * (size_t)a->nq), *v0 = malloc(sizeof(double) * (size_t)a->nv);
        mbs_contact *c0 = malloc(sizeof(mbs_contact) * (size_t)a->ncontacts);
        /* settle for 1 s on joint PD about the start (tau from the state, so that a and b, at
         * the same state, get the same torques), then run a from there twice: after more steps,
         * and as b does fresh */
        double *qref = malloc(sizeof(double) * (size_t)a->nq);
        memcpy(qref, a->q, sizeof(double) * (size_t)a->nq);
        for (int i = 0; i < 500; i++) {
            hold_joints(a, qref);
            mbs_stepper_step(sa, 2e-3, NULL);
        }
        memcpy(q0, a->q, sizeof(double) * (size_t)a->nq);
        memcpy(v0, a->v, sizeof(double) * (size_t)a->nv);
        memcpy(c0, a->contacts, sizeof(mbs_contact) * (size_t)a->ncontacts);
        for (int i = 0; i < 37; i++) {
            hold_joints(a, qref);
            mbs_stepper_step(sa, 2e-3, NULL);
        }
        memcpy(a->q, q0, sizeof(double) * (size_t)a->nq);
        memcpy(a->v, v0, sizeof(double) * (size_t)a->nv);
        memcpy(a->contacts, c0, sizeof(mbs_contact) * (size_t)a->ncontacts);
        memcpy(b->q, q0, sizeof(double) * (size_t)a->nq);
        memcpy(b->v, v0, sizeof(double) * (size_t)a->nv);
        memcpy(b->contacts, c0, sizeof(mbs_contact) * (size_t)a->ncontacts);
        for (int i = 0; i < 50; i++) {
            hold_joints(a, qref);
            hold_joints(b, qref);
            mbs_stepper_step(sa, 2e-3, NULL);
            mbs_stepper_step(sb, 2e-3, NULL);
        }
        int same = memcmp(a->q, b->q, sizeof(double) * (size_t)a->nq) == 0 &&
                   memcmp(a->v, b->v, sizeof(double) * (size_t)a->nv) == 0;
        double worst = 0;
        for (int k = 0; k < a->nq; k++) worst = check_worst(worst, fabs(a->q[k] - b->q[k]));
        for (int k = 0; k < a->nv; k++) worst = check_worst(worst, fabs(a->v[k] - b->v[k]));
        if (!warm) CHECK(same, "warm_start 0: the reused stepper differs from a fresh one by %.2e", worst);
        /* standing still (|v| ~ 1e-8 after the settling), the reused stepper started warm: it
         * differs from the fresh one, by rounding (6e-14 when written) */
        else CHECK(!same && worst < 1e-12, "warm_start 1: the reused stepper %s a fresh one (%.2e): the test lost its point",
                   same ? "equals" : "is far from", worst);
        free(q0);
        free(v0);
        free(c0);
        free(qref);
        mbs_stepper_free(sa);
        mbs_stepper_free(sb);
        mbs_system_free(a);
        mbs_system_free(b);
    }
    mbs_model_free(m);
}

/* Solo dropped from 2 cm with a sideways and a spinning velocity, its joints driven: at every
 * step expo with the closed form and with the Padé exponential (both full accuracy) start from
 * the same state and end within 1e-9 of each other (relative to the largest coordinate) — one
 * to four feet down, sticking, slipping (its second pass is Padé in both), releasing. */
static void test_solo_steps(void)
{
    mbs_error err;
    mbs_model *m = mbs_model_from_urdf(tm_path("urdf/solo12.urdf"), NULL, &err);
    if (!m) { CHECK(0, "solo12: %s", err.msg); return; }
    mbs_system *a = tm_solo_standing(m, 0.02, 1e5, 300, 0.6), *b = tm_solo_standing(m, 0.02, 1e5, 300, 0.6);
    mbs_option om[2] = {MBS_OPTION_WORD("max_mat_mult", "full"), MBS_OPTION_WORD("method", "modal")}, op[2] = {MBS_OPTION_WORD("max_mat_mult", "full"), MBS_OPTION_WORD("method", "pade")};
    mbs_system_finalize(a, NULL);
    mbs_system_finalize(b, NULL);
    mbs_stepper *sa = mbs_stepper_new("expo", a, om, 2, &err), *sb = mbs_stepper_new("expo", b, op, 2, &err);
    CHECK(sa && sb, "expo: %s", err.msg);
    if (!sa || !sb) return;
    a->v[1] = 0.5;
    a->v[5] = 2.0;
    double worst = 0;
    int most = 0, steps_with_contact = 0;
    for (int i = 0; i < 300; i++) {
        for (int k = 6; k < a->nv; k++) a->tau[k] = 0.3 * sin(0.05 * i + k);
        memcpy(b->q, a->q, sizeof(double) * (size_t)a->nq);
        memcpy(b->v, a->v, sizeof(double) * (size_t)a->nv);
        memcpy(b->tau, a->tau, sizeof(double) * (size_t)a->nv);
        memcpy(b->contacts, a->contacts, sizeof(mbs_contact) * (size_t)a->ncontacts);
        b->t = a->t;
        CHECK(mbs_stepper_step(sa, 2e-3, NULL) == MBS_OK && mbs_stepper_step(sb, 2e-3, NULL) == MBS_OK, "step %d failed", i);
        int n = 0;
        for (int c = 0; c < 4; c++) n += a->contacts[c].active;
        most = n > most ? n : most;
        steps_with_contact += n > 0;
        double vs = 1, qs = 1;
        for (int k = 0; k < a->nv; k++) vs = fmax(vs, fabs(b->v[k]));
        for (int k = 0; k < a->nq; k++) qs = fmax(qs, fabs(b->q[k]));
        for (int k = 0; k < a->nv; k++) worst = check_worst(worst, fabs(a->v[k] - b->v[k]) / vs);
        for (int k = 0; k < a->nq; k++) worst = check_worst(worst, fabs(a->q[k] - b->q[k]) / qs);
    }
    CHECK(worst < 1e-9, "closed form and Pade differ by %.2e after one step", worst);
    CHECK(most == 4 && steps_with_contact > 150, "the test lost its point: %d feet at most, %d steps with contact", most,
          steps_with_contact);
    printf("Solo steps, modal against Pade: largest relative difference %.2e\n", worst);
    mbs_stepper_free(sa);
    mbs_stepper_free(sb);
    mbs_system_free(a);
    mbs_system_free(b);
    mbs_model_free(m);
}

/* One step of st[0] on its system and of st[1] on the other, started from st[0]'s state: the same
 * q, v, τ, time and contact states, each contact keeping its own frame and offset (its points, of
 * radius 0, are under themselves: local = offset). Adds a's active and slipping contacts after the
 * step to *active and *slipping; returns the largest difference of q and of v between the two,
 * each relative to the largest |coordinate| (at least 1). */
static double step_both(mbs_stepper *const st[2], mbs_system *a, mbs_system *b, double dt, int *active, int *slipping)
{
    memcpy(b->q, a->q, sizeof(double) * (size_t)a->nq);
    memcpy(b->v, a->v, sizeof(double) * (size_t)a->nv);
    memcpy(b->tau, a->tau, sizeof(double) * (size_t)a->nv);
    for (int c = 0; c < a->ncontacts; c++) {
        mbs_contact keep = b->contacts[c];
        b->contacts[c] = a->contacts[c];
        b->contacts[c].frame = keep.frame;
        memcpy(b->contacts[c].offset, keep.offset, sizeof keep.offset);
        memcpy(b->contacts[c].local, keep.offset, sizeof keep.offset);
    }
    b->t = a->t;
    CHECK(mbs_stepper_step(st[0], dt, NULL) == MBS_OK && mbs_stepper_step(st[1], dt, NULL) == MBS_OK, "a step failed");
    for (int c = 0; c < a->ncontacts; c++) {
        *active += a->contacts[c].active;
        *slipping += a->contacts[c].slipping;
    }
    double vs = 1, qs = 1, worst = 0;
    for (int k = 0; k < a->nv; k++) vs = fmax(vs, fabs(b->v[k]));
    for (int k = 0; k < a->nq; k++) qs = fmax(qs, fabs(b->q[k]));
    for (int k = 0; k < a->nv; k++) worst = check_worst(worst, fabs(a->v[k] - b->v[k]) / vs);
    for (int k = 0; k < a->nq; k++) worst = check_worst(worst, fabs(a->q[k] - b->q[k]) / qs);
    return worst;
}

/* The verdict of a run of step_both: every step within 1e-9, and the run had all its `want`
 * points down at once and some slipping; then the steppers and systems freed. */
static void finish_pair(const char *what, double worst, int most, int want, int slid, mbs_stepper *st[2],
                        mbs_system *sys[2])
{
    CHECK(worst < 1e-9, "%s: frame rows and point rows differ by %.2e after one step", what, worst);
    CHECK(most == want && slid > 0, "%s: the test lost its point: %d points down at most, %d slipping point-steps", what,
          most, slid);
    printf("%s, frame rows against point rows: largest relative difference %.2e (%d slipping point-steps)\n", what,
           worst, slid);
    for (int k = 0; k < 2; k++) {
        mbs_stepper_free(st[k]);
        mbs_system_free(sys[k]);
    }
}

/* Romeo's soles: four corners on one frame are integrated through that frame's six rows (Υ of
 * rank 12 for 24 rows, the factored closed form, the full Υ expanded for the Padé pass of a
 * sliding corner); the same corners put two on l_sole and two on l_ankle (the same body, 6.84 cm
 * above) keep three rows each. From the same state every step of the two ends within 1e-9 of
 * each other, relative to the largest coordinate: Romeo dropped from 5 mm with a sideways and a
 * spinning velocity, its joints limp (it folds down onto its soles over 0.5 s), both soles landing,
 * rocking, sliding, letting go. */
static void test_sole_rows(void)
{
    mbs_error err;
    mbs_scenario *sc = mbs_scenario_load(tm_path("scenarios/romeo_walk.ini"), NULL, 0, &err);
    if (!sc) { CHECK(0, "romeo_walk.ini: %s", err.msg); return; }
    mbs_error_free(&err);
    const mbs_model *m = mbs_scenario_model(sc);
    const double corners[4][2] = {{0.10, 0.05}, {0.10, -0.05}, {-0.05, 0.05}, {-0.05, -0.05}}, up[3] = {0, 0, 1};
    const char *frames[2][2] = {{"l_sole", "l_ankle"}, {"r_sole", "r_ankle"}};
    mbs_system *sys[2];
    mbs_stepper *st[2];
    for (int k = 0; k < 2; k++) {
        sys[k] = mbs_system_new(m, 8, &err);
        CHECK(sys[k] != NULL, "system: %s", err.msg);
        if (!sys[k]) return;
        for (int f = 0; f < 2; f++)
            for (int c = 0; c < 4; c++) {
                /* k = 1: the back corners on the ankle's frame, 6.84 cm above the sole's */
                int ankle = k == 1 && c >= 2;
                double off[3] = {corners[c][0], corners[c][1], ankle ? -0.0684 : 0};
                CHECK(mbs_system_add_contact(sys[k], frames[f][ankle], off, 0, &err) >= 0, "contact: %s", err.msg);
            }
        CHECK(mbs_system_add_plane(sys[k], up, 0, mbs_scenario_material(sc), &err) >= 0, "plane: %s", err.msg);
        mbs_option o = MBS_OPTION_WORD("max_mat_mult", "full");
        mbs_system_finalize(sys[k], NULL);
        st[k] = mbs_stepper_new("expo", sys[k], &o, 1, &err);
        CHECK(st[k] != NULL, "expo: %s", err.msg);
        if (!st[k]) return;
    }
    mbs_system *a = sys[0], *b = sys[1];
    const double *q0 = mbs_scenario_q0(sc);
    memcpy(a->q, q0, sizeof(double) * (size_t)a->nq);
    a->q[2] += 0.005;
    a->v[1] = 0.3;
    a->v[5] = 1.0;
    double worst = 0;
    int most = 0, slid = 0;
    for (int i = 0; i < 100; i++) {
        int n = 0;
        worst = check_worst(worst, step_both(st, a, b, 5e-3, &n, &slid));
        most = n > most ? n : most;
    }
    finish_pair("Romeo's soles", worst, most, 8, slid, st, sys);
    mbs_scenario_free(sc);
}

/* Three points on the last link of a two-joint arm fixed at its base: the link's six rows span
 * only two velocities, so Υ_r = J_r M⁻¹J_rᵀ (6 x 6) is singular and expo takes the full Υ (its
 * fallback); against the same points with one of them given on the link's other frame (three
 * rows each, on a frame added at the link's joint), every step from the same state within 1e-9. The points are pressed 2 to 5 mm into
 * a plane, the arm swings under gravity and torques, the points stick, slide and leave. */
static void test_singular_frame_rows(void)
{
    mbs_error err;
    mbs_model *m = mbs_model_chain(2, NULL, &err);
    if (!m) { CHECK(0, "chain: %s", err.msg); return; }
    /* a second frame on the last link (body 1): at its joint, turned by 0.5 rad about z */
    const double Rz[9] = {cos(0.5), sin(0.5), 0, -sin(0.5), cos(0.5), 0, 0, 0, 1}, pz[3] = {0, 0, 0};
    int tip = mbs_frame_id(m, "tip"), l2 = mbs_model_add_frame(m, "link2", 1, Rz, pz, MBS_FRAME_OP, &err);
    CHECK(tip >= 0 && l2 >= 0, "frames tip and link2: %s", l2 < 0 ? err.msg : "");
    if (tip < 0 || l2 < 0) { mbs_model_free(m); return; }
    mbs_data *d = mbs_data_new(m);
    double q0[2] = {0.3, 0.2}, Rt[9], pt[3], Rl[9], pl[3], zmax = -1e9;
    mbs_forward_kinematics(m, d, q0, NULL, NULL);
    mbs_frame_placement(m, d, tip, Rt, pt);
    mbs_frame_placement(m, d, l2, Rl, pl);
    const double pts[3][3] = {{0.02, 0, 0}, {-0.01, 0.017, 0}, {-0.01, -0.017, 0}};
    double world[3][3], onl2[3];
    for (int i = 0; i < 3; i++)
        for (int r = 0; r < 3; r++) {
            world[i][r] = pt[r];
            for (int k = 0; k < 3; k++) world[i][r] += Rt[r + 3 * k] * pts[i][k];
        }
    for (int i = 0; i < 3; i++) zmax = fmax(zmax, world[i][2]);
    /* point 2 in link2's coordinates */
    for (int r = 0; r < 3; r++) {
        onl2[r] = 0;
        for (int k = 0; k < 3; k++) onl2[r] += Rl[k + 3 * r] * (world[2][k] - pl[k]);
    }
    const double up[3] = {0, 0, 1};
    mbs_material mat = {1e4, 1e4, 30, 30, 0.3};
    mbs_system *sys[2];
    mbs_stepper *st[2];
    for (int k = 0; k < 2; k++) {
        sys[k] = mbs_system_new(m, 3, &err);
        for (int i = 0; i < 3; i++) {
            int other = k == 1 && i == 2;
            CHECK(mbs_system_add_contact(sys[k], other ? "link2" : "tip", other ? onl2 : pts[i], 0, &err) >= 0, "contact: %s",
                  err.msg);
        }
        CHECK(mbs_system_add_plane(sys[k], up, zmax + 0.002, &mat, &err) >= 0, "plane: %s", err.msg);
        mbs_option o = MBS_OPTION_WORD("max_mat_mult", "full");
        mbs_system_finalize(sys[k], NULL);
        st[k] = mbs_stepper_new("expo", sys[k], &o, 1, &err);
        CHECK(st[k] != NULL, "expo: %s", st[k] ? "" : err.msg);
        if (!st[k]) return;
    }
    mbs_system *a = sys[0], *b = sys[1];
    memcpy(a->q, q0, sizeof q0);
    double worst = 0;
    int most = 0, slid = 0;
    for (int i = 0; i < 300; i++) {
        a->tau[0] = 2 * sin(0.05 * i);
        a->tau[1] = 1.5 * cos(0.07 * i);
        int n = 0;
        worst = check_worst(worst, step_both(st, a, b, 2e-3, &n, &slid));
        most = n > most ? n : most;
    }
    finish_pair("arm's link (singular frame rows)", worst, most, 3, slid, st, sys);
    mbs_data_free(d);
    mbs_model_free(m);
}

/* method: auto takes the closed form with the full exponential and proportional damping (the
 * same bits as method = modal), Padé otherwise (the same bits as method = pade); modal is refused
 * when the damping is not proportional; a bad word is refused, naming it. */
static void test_method_option(void)
{
    mbs_error err;
    mbs_model *m = mbs_model_from_urdf(tm_path("urdf/solo12.urdf"), NULL, &err);
    if (!m) { CHECK(0, "solo12: %s", err.msg); return; }
    static const char *methods[3] = {"auto", "modal", "pade"};
    for (int prop = 0; prop <= 1; prop++) {
        double q[3][64], v[3][64];
        int made[3] = {0, 0, 0};
        for (int k = 0; k < 3; k++) {
            mbs_system *s = tm_solo_standing(m, -1e-4, 1e5, 300, 0.8);
            if (!prop) /* tangential damping of the ground not 3 ms times its stiffness */
                s->env.planes[0].material.b_tangent = 100;
            mbs_option o[2] = {tm_opt("method", methods[k]), MBS_OPTION_WORD("max_mat_mult", "full")};
            mbs_system_finalize(s, NULL);
            mbs_stepper *st = mbs_stepper_new("expo", s, o, 2, &err);
            if (!prop && k == 1) {
                CHECK(st == NULL && strstr(err.msg, "modal"), "modal accepted with non-proportional damping");
            } else {
                CHECK(st != NULL, "method %s: %s", methods[k], st ? "" : err.msg);
            }
            if (st) {
                for (int i = 0; i < 50; i++) {
                    tm_solo_hold(m, s, 5, 0.1);
                    mbs_stepper_step(st, 2e-3, NULL);
                }
                memcpy(q[k], s->q, sizeof(double) * (size_t)s->nq);
                memcpy(v[k], s->v, sizeof(double) * (size_t)s->nv);
                made[k] = 1;
            }
            mbs_stepper_free(st);
            mbs_system_free(s);
        }
        int same = prop ? 1 : 2, nq = 19, nv = 18;
        CHECK(made[0] && made[same], "missing runs");
        if (made[0] && made[same])
            CHECK(!memcmp(q[0], q[same], sizeof(double) * nq) && !memcmp(v[0], v[same], sizeof(double) * nv),
                  "auto is not %s with %s damping", methods[same], prop ? "proportional" : "other");
        if (prop && made[2])
            CHECK(memcmp(v[0], v[2], sizeof(double) * nv) != 0, "auto took Pade's path with proportional damping");
    }
    mbs_system *s = tm_solo_standing(m, 0, 1e5, 300, 0.8);
    mbs_option o = MBS_OPTION_WORD("method", "exact");
    mbs_system_finalize(s, NULL);
    mbs_stepper *st = mbs_stepper_new("expo", s, &o, 1, &err);
    CHECK(st == NULL && strstr(err.msg, "method") && strstr(err.msg, "exact"), "method = exact accepted: %s", err.msg);
    mbs_stepper_free(st);
    mbs_system_free(s);
    mbs_model_free(m);
}

int main(void)
{
    RUN(test_divided_differences);
    RUN(test_divided_differences_excess);
    RUN(test_symeig);
    RUN(test_symeig_warm);
    RUN(test_warm_start);
    RUN(test_warm_start_option);
    RUN(test_against_pade);
    RUN(test_factored);
    RUN(test_solo_steps);
    RUN(test_sole_rows);
    RUN(test_singular_frame_rows);
    RUN(test_method_option);
    return check_summary("test_expo_modal");
}
