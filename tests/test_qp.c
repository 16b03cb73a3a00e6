/* test_qp.c — the QP solver (src/qp/qp.c) against what a QP's solution must satisfy and against
 * solutions found without it: the KKT conditions on random instances of assorted sizes and
 * scalings, a closed form, brute-force enumeration of the active sets of small instances,
 * warm starts on sequences of perturbed problems, the reported failures (infeasible, H not
 * positive definite, dependent equalities, bad sizes), and no allocation in a solve. And the small
 * dense solve beside it (mbsi_spd_solve) on definite, semi-definite and indefinite systems. */
#include <stdlib.h>
#include <string.h>

#include "../src/base/base.h"
#include "alloc_count.h"
#include "check.h"
#include "testmodels.h"

#define NMAX 40
#define MEQMAX 20
#define MINMAX 80

typedef struct problem {
    int n, meq, min;
    double H[NMAX * NMAX], g[NMAX];
    double Aeq[MEQMAX * NMAX], beq[MEQMAX];
    double Ain[MINMAX * NMAX], bin[MINMAX];
} problem;

static unsigned long long seed = 12345;

static double uni(double lo, double hi) { return tm_uniform(&seed, lo, hi); }
static int randint(int lo, int hi) { return lo + (int)uni(0, hi - lo + 1 - 1e-9); }

/* H = s (BᵀB / n + δ I): random SPD, conditioning set by δ, size by s. */
static void random_spd(int n, double *H, double delta, double s)
{
    double B[NMAX * NMAX];
    for (int i = 0; i < n * n; i++) B[i] = uni(-1, 1);
    for (int j = 0; j < n; j++)
        for (int i = 0; i < n; i++) {
            double t = 0;
            for (int k = 0; k < n; k++) t += B[k + n * i] * B[k + n * j];
            H[i + n * j] = s * (t / n + (i == j ? delta : 0));
        }
}

/* A random problem, feasible by construction: a point x0 meets the equalities and the
 * inequalities with slack drawn so that about half of them bind at the solution. Rows are
 * scaled by up to 10^±rowscale, H by 10^±hscale. */
static void random_problem(problem *P, int n, int meq, int min, double rowscale, double hscale)
{
    P->n = n; P->meq = meq; P->min = min;
    double hs = pow(10, uni(-hscale, hscale));
    random_spd(n, P->H, uni(1e-3, 1), hs);
    double x0[NMAX];
    for (int j = 0; j < n; j++) { x0[j] = uni(-1, 1); P->g[j] = hs * uni(-3, 3); }
    for (int i = 0; i < meq; i++) {
        double sc = pow(10, uni(-rowscale, rowscale)), b = 0;
        for (int j = 0; j < n; j++) { P->Aeq[i + meq * j] = sc * uni(-1, 1); b += P->Aeq[i + meq * j] * x0[j]; }
        P->beq[i] = b;
    }
    for (int i = 0; i < min; i++) {
        double sc = pow(10, uni(-rowscale, rowscale)), b = 0;
        for (int j = 0; j < n; j++) { P->Ain[i + min * j] = sc * uni(-1, 1); b += P->Ain[i + min * j] * x0[j]; }
        P->bin[i] = b - sc * uni(0, 1);
    }
}

static int solve(mbs_qp *qp, const problem *P, int warm, double *x, mbs_error *err)
{
    return mbs_qp_solve(qp, P->n, P->H, P->g, P->meq, P->meq ? P->Aeq : NULL, P->meq ? P->beq : NULL, P->min,
                        P->min ? P->Ain : NULL, P->min ? P->bin : NULL, warm, x, err);
}

/* aᵀx − b of row i and what round-off in it is relative to: |b| + Σ_j |a_j| ‖x‖∞. Not the size
 * of the row's own terms Σ_j |a_j x_j|: a bound x_k >= 0 met by x_k = 3e-17 (the solution's other
 * entries of order 1) would be off by 100 % of its only term, where its error is 1e-17 of the
 * solution's size; which of 0 and 3e-17 comes out is rounding (it differs between compilers
 * that do and do not fuse a·b + c into one multiply-add). */
static double slack(const double *A, int rows, int n, int i, const double *x, double b, double *scale)
{
    double s = -b, xmax = 0, amax = 0;
    for (int j = 0; j < n; j++) {
        s += A[i + rows * j] * x[j];
        xmax = fmax(xmax, fabs(x[j]));
        amax += fabs(A[i + rows * j]);
    }
    *scale = fabs(b) + amax * xmax;
    return s;
}

/* The KKT conditions of the last solve, each to `tol` relative to the size of its terms:
 * stationarity Hx + g = Aeqᵀλeq + Ainᵀλin, primal feasibility, λin >= 0, complementarity
 * (λ > 0 only on rows met with equality, and those are the listed active rows), and the
 * objective. Returns the number of active inequalities. */
static int check_kkt(const mbs_qp *qp, const problem *P, const double *x, double tol, const char *what)
{
    int n = P->n, meq = P->meq, min = P->min;
    double le[MEQMAX], li[MINMAX];
    mbs_qp_multipliers(qp, le, li);
    double worst = 0;
    for (int i = 0; i < n; i++) {
        double r = P->g[i], sc = fabs(P->g[i]);
        for (int j = 0; j < n; j++) { r += P->H[i + n * j] * x[j]; sc += fabs(P->H[i + n * j] * x[j]); }
        for (int k = 0; k < meq; k++) { r -= P->Aeq[k + meq * i] * le[k]; sc += fabs(P->Aeq[k + meq * i] * le[k]); }
        for (int k = 0; k < min; k++) { r -= P->Ain[k + min * i] * li[k]; sc += fabs(P->Ain[k + min * i] * li[k]); }
        worst = check_worst(worst, fabs(r) / fmax(sc, 1e-300));
    }
    CHECK(worst <= tol, "%s: stationarity residual %.2e > %.0e", what, worst, tol);
    worst = 0;
    for (int k = 0; k < meq; k++) {
        double sc, s = slack(P->Aeq, meq, n, k, x, P->beq[k], &sc);
        worst = check_worst(worst, fabs(s) / fmax(sc, 1e-300));
    }
    CHECK(worst <= tol, "%s: equality residual %.2e > %.0e", what, worst, tol);
    const mbs_qp_info *info = mbs_qp_last_info(qp);
    const int *act = mbs_qp_active(qp);
    char listed[MINMAX] = {0};
    for (int j = 0; j < info->nactive; j++) {
        CHECK(act[j] >= 0 && act[j] < min, "%s: active index %d out of range", what, act[j]);
        if (act[j] >= 0 && act[j] < min) {
            CHECK(!listed[act[j]], "%s: row %d listed twice", what, act[j]);
            listed[act[j]] = 1;
        }
    }
    double viol = 0, comp = 0;
    for (int k = 0; k < min; k++) {
        double sc, s = slack(P->Ain, min, n, k, x, P->bin[k], &sc);
        viol = fmax(viol, -s / fmax(sc, 1e-300));
        CHECK(li[k] >= 0, "%s: lambda_in[%d] = %g < 0", what, k, li[k]);
        CHECK(listed[k] || li[k] == 0, "%s: row %d is not listed active but has lambda %g", what, k, li[k]);
        if (listed[k]) comp = fmax(comp, fabs(s) / fmax(sc, 1e-300));
    }
    CHECK(viol <= tol, "%s: inequality violated by %.2e (relative) > %.0e", what, viol, tol);
    CHECK(comp <= tol, "%s: an active row is off its bound by %.2e (relative) > %.0e", what, comp, tol);
    double f = 0, fs = 0;
    for (int j = 0; j < n; j++) {
        double hx = 0;
        for (int i = 0; i < n; i++) hx += P->H[i + n * j] * x[i];
        f += x[j] * (0.5 * hx + P->g[j]);
        fs += fabs(x[j] * (0.5 * hx + P->g[j]));
    }
    CHECK(fabs(f - info->objective) <= 1e-12 * fmax(fs, 1e-300), "%s: objective %.15g, expected %.15g", what,
          info->objective, f);
    return info->nactive;
}

/* min ½‖x − c‖² s.t. x >= 0 has x = max(c, 0) and λ = max(−c, 0). */
static void test_closed_form(void)
{
    enum { n = 7 };
    problem P = {.n = n, .meq = 0, .min = n};
    double c[n] = {1.5, -2, 0.25, -1e-3, 3, -7, 0.5};
    for (int i = 0; i < n; i++) {
        P.H[i + n * i] = 1;
        P.g[i] = -c[i];
        P.Ain[i + n * i] = 1;
    }
    mbs_error err = {0};
    mbs_qp *qp = mbs_qp_new(n, 0, n, &err);
    CHECK(qp, "new: %s", err.msg);
    if (!qp) return;
    double x[n], li[n], expect_x[n], expect_l[n];
    CHECK(solve(qp, &P, 0, x, &err) == MBS_OK, "solve: %s", err.msg);
    mbs_qp_multipliers(qp, NULL, li);
    for (int i = 0; i < n; i++) { expect_x[i] = fmax(c[i], 0); expect_l[i] = fmax(-c[i], 0); }
    CHECK_CLOSE(x, expect_x, n, 1e-15, "x");
    CHECK_CLOSE(li, expect_l, n, 1e-15, "lambda");
    CHECK(mbs_qp_last_info(qp)->nactive == 3, "nactive %d, expected 3", mbs_qp_last_info(qp)->nactive);
    /* an equality on top: x0 + x1 = 1 moves x0 to 1 with λeq = 0.5 ... checked by KKT */
    mbs_qp_free(qp);
    qp = mbs_qp_new(n, 1, n, &err);
    P.meq = 1;
    P.Aeq[0] = 1; P.Aeq[1] = 1; P.beq[0] = 1;
    CHECK(solve(qp, &P, 0, x, &err) == MBS_OK, "solve with equality: %s", err.msg);
    check_kkt(qp, &P, x, 1e-13, "closed form + equality");
    double le;
    mbs_qp_multipliers(qp, &le, NULL);
    /* x0 = 1, x1 = 0 (min of ½(x0−1.5)² + ½(x1+2)² on x0 + x1 = 1, x1 >= 0): λeq = x0 − 1.5 */
    CHECK(fabs(x[0] - 1) < 1e-14 && fabs(x[1]) < 1e-14 && fabs(le + 0.5) < 1e-14,
          "x0 %g x1 %g lambda_eq %g, expected 1, 0, -0.5", x[0], x[1], le);
    mbs_qp_free(qp);
}

/* Hundreds of random instances, n up to 40, with equalities and inequalities, rows and H of
 * assorted scales, all through one solver sized for the largest. */
static void test_kkt_random(void)
{
    mbs_error err = {0};
    mbs_qp *qp = mbs_qp_new(NMAX, MEQMAX, MINMAX, &err);
    CHECK(qp, "new: %s", err.msg);
    if (!qp) return;
    static problem P;
    double x[NMAX];
    int mixed = 0, active_total = 0, inactive_total = 0, count = 0;
    for (int t = 0; t < 400; t++) {
        int n = t < 100 ? randint(1, 8) : randint(1, NMAX);
        int meq = randint(0, n / 2 < MEQMAX ? n / 2 : MEQMAX);
        int min = randint(0, 2 * n < MINMAX ? 2 * n : MINMAX);
        random_problem(&P, n, meq, min, t % 3 == 0 ? 3 : 0, t % 4 == 0 ? 3 : 0);
        char what[64];
        snprintf(what, sizeof what, "instance %d (n %d, meq %d, min %d)", t, n, meq, min);
        int rc = solve(qp, &P, t % 2, x, &err);
        CHECK(rc == MBS_OK, "%s: %s", what, err.msg);
        if (rc != MBS_OK) continue;
        int na = check_kkt(qp, &P, x, 1e-10, what);
        active_total += na;
        inactive_total += min - na;
        mixed += na > 0 && na < min;
        count++;
    }
    CHECK(count == 400, "%d of 400 instances solved", count);
    CHECK(mixed > 200, "only %d instances with both active and inactive inequalities", mixed);
    CHECK(active_total > 1000 && inactive_total > 1000, "active %d, inactive %d", active_total, inactive_total);
    mbs_qp_free(qp);
}

/* A solver sized exactly and one sized larger give the same answer. */
static void test_sizes_smaller_than_capacity(void)
{
    static problem P;
    random_problem(&P, 12, 3, 20, 0, 0);
    mbs_qp *big = mbs_qp_new(NMAX, MEQMAX, MINMAX, NULL), *exact = mbs_qp_new(12, 3, 20, NULL);
    CHECK(big && exact, "new");
    if (!big || !exact) { mbs_qp_free(big); mbs_qp_free(exact); return; }
    double x1[12], x2[12];
    CHECK(solve(big, &P, 0, x1, NULL) == MBS_OK && solve(exact, &P, 0, x2, NULL) == MBS_OK, "solve");
    CHECK_CLOSE(x1, x2, 12, 1e-14, "x, large vs exact solver");
    CHECK(mbs_qp_last_info(big)->nactive == mbs_qp_last_info(exact)->nactive, "nactive differs");
    mbs_qp_free(big);
    mbs_qp_free(exact);
}

/* Solves [H −Aᵀ; A 0][x; λ] = [−g; b] by Gaussian elimination with partial pivoting;
 * returns 0 when the system is singular (dependent active rows). */
static int kkt_solve(int m, double *K, double *rhs)
{
    double big = 0;
    for (int i = 0; i < m * m; i++) big = fmax(big, fabs(K[i]));
    for (int c = 0; c < m; c++) {
        int p = c;
        for (int i = c + 1; i < m; i++)
            if (fabs(K[i + m * c]) > fabs(K[p + m * c])) p = i;
        if (fabs(K[p + m * c]) <= 1e-11 * big) return 0;
        for (int j = 0; j < m; j++) { double t = K[c + m * j]; K[c + m * j] = K[p + m * j]; K[p + m * j] = t; }
        double t = rhs[c]; rhs[c] = rhs[p]; rhs[p] = t;
        for (int i = c + 1; i < m; i++) {
            double f = K[i + m * c] / K[c + m * c];
            for (int j = c; j < m; j++) K[i + m * j] -= f * K[c + m * j];
            rhs[i] -= f * rhs[c];
        }
    }
    for (int i = m - 1; i >= 0; i--) {
        double s = rhs[i];
        for (int j = i + 1; j < m; j++) s -= K[i + m * j] * rhs[j];
        rhs[i] = s / K[i + m * i];
    }
    return 1;
}

/* Small instances, some of them infeasible: every subset of the inequalities is tried as the
 * active set (the KKT system of the equality-constrained QP), and the one whose x is feasible
 * with multipliers >= 0 is the optimum; the solver must find the same x, or report
 * infeasibility exactly when no subset qualifies. */
static void test_brute_force(void)
{
    mbs_qp *qp = mbs_qp_new(5, 2, 6, NULL);
    CHECK(qp, "new");
    if (!qp) return;
    static problem P;
    int solved = 0, infeasible = 0, agree = 0;
    for (int t = 0; t < 400; t++) {
        int n = randint(1, 5), meq = randint(0, n < 2 ? n - 1 : 2), min = randint(1, 6);
        random_problem(&P, n, meq, min, 0, 0);
        if (t % 2)      /* not feasible by construction: free right-hand sides */
            for (int i = 0; i < min; i++) P.bin[i] = uni(-1, 1.5);
        int found = 0;
        double best[5] = {0};
        for (int mask = 0; mask < 1 << min; mask++) {
            int rows[8], m = 0;
            for (int i = 0; i < min; i++)
                if (mask >> i & 1) rows[m++] = i;
            int k = n + meq + m;
            double K[13 * 13] = {0}, rhs[13];
            for (int j = 0; j < n; j++) {
                rhs[j] = -P.g[j];
                for (int i = 0; i < n; i++) K[i + k * j] = P.H[i + n * j];
            }
            for (int c = 0; c < meq + m; c++) {
                const double *A = c < meq ? P.Aeq : P.Ain;
                int ld = c < meq ? meq : min, row = c < meq ? c : rows[c - meq];
                for (int j = 0; j < n; j++) {
                    K[n + c + k * j] = A[row + ld * j];
                    K[j + k * (n + c)] = -A[row + ld * j];
                }
                rhs[n + c] = c < meq ? P.beq[c] : P.bin[row];
            }
            if (!kkt_solve(k, K, rhs)) continue;
            int ok = 1;
            for (int c = meq; c < meq + m; c++) ok &= rhs[n + c] >= -1e-10;
            for (int i = 0; i < min; i++) {
                double sc, s = slack(P.Ain, min, n, i, rhs, P.bin[i], &sc);
                ok &= s >= -1e-10 * fmax(sc, 1);
            }
            if (!ok) continue;
            if (found) {
                double d = 0;
                for (int j = 0; j < n; j++) d = fmax(d, fabs(best[j] - rhs[j]));
                CHECK(d < 1e-8, "instance %d: two qualifying active sets disagree by %g", t, d);
            }
            found = 1;
            memcpy(best, rhs, (size_t)n * sizeof(double));
        }
        double x[5];
        mbs_error err = {0};
        int rc = solve(qp, &P, 0, x, &err);
        if (found) {
            solved++;
            CHECK(rc == MBS_OK, "instance %d (n %d meq %d min %d): feasible by enumeration, solver: %s", t, n, meq,
                  min, err.msg);
            if (rc == MBS_OK) {
                double d = 0;
                for (int j = 0; j < n; j++) d = fmax(d, fabs(best[j] - x[j]) / fmax(1, fabs(best[j])));
                CHECK(d < 1e-9, "instance %d: x differs from enumeration by %.2e", t, d);
                agree += d < 1e-9;
            }
        } else {
            infeasible++;
            CHECK(rc == MBS_ERR_INFEASIBLE, "instance %d (n %d meq %d min %d): no active set qualifies, solver "
                  "returned %d (%s)", t, n, meq, min, rc, err.msg);
        }
    }
    CHECK(solved > 200 && infeasible > 10, "solved %d, infeasible %d: the mix does not test both", solved, infeasible);
    CHECK(agree == solved, "%d of %d agree", agree, solved);
    mbs_qp_free(qp);
}

/* A sequence of slightly perturbed problems (a controller's consecutive periods): warm starts
 * give the cold solution with at most as many active-set changes, and in total fewer; a warm
 * start from an unrelated problem's active set still gives the right answer. */
static void test_warm_start(void)
{
    mbs_qp *cold = mbs_qp_new(NMAX, MEQMAX, MINMAX, NULL), *warm = mbs_qp_new(NMAX, MEQMAX, MINMAX, NULL);
    CHECK(cold && warm, "new");
    if (!cold || !warm) { mbs_qp_free(cold); mbs_qp_free(warm); return; }
    static problem P, base;
    int sum_cold = 0, sum_warm = 0, moved = 0;
    for (int seq = 0; seq < 4; seq++) {
        int n = 10 + 8 * seq;
        random_problem(&base, n, n / 5, 2 * n, 0, 0);
        double dg[NMAX], db[MINMAX];
        for (int j = 0; j < n; j++) dg[j] = uni(-1, 1);
        for (int i = 0; i < 2 * n; i++) db[i] = uni(-1, 1);
        int prev_na = -1;
        for (int k = 0; k < 40; k++) {
            P = base;
            double s = 0.02 * k;    /* a drift that moves some rows in and out of the active set */
            for (int j = 0; j < n; j++) P.g[j] += s * dg[j];
            for (int i = 0; i < P.min; i++) P.bin[i] += 0.3 * s * db[i];
            double xc[NMAX], xw[NMAX];
            mbs_error err = {0};
            int rc = solve(cold, &P, 0, xc, &err);
            CHECK(rc == MBS_OK, "cold %d.%d: %s", seq, k, err.msg);
            rc = solve(warm, &P, 1, xw, &err);
            CHECK(rc == MBS_OK, "warm %d.%d: %s", seq, k, err.msg);
            CHECK_CLOSE(xw, xc, n, 1e-10, "warm vs cold x");
            check_kkt(warm, &P, xw, 1e-10, "warm");
            int ic = mbs_qp_last_info(cold)->iterations, iw = mbs_qp_last_info(warm)->iterations;
            CHECK(iw <= ic, "sequence %d problem %d: warm took %d changes, cold %d", seq, k, iw, ic);
            sum_cold += ic;
            sum_warm += iw;
            int na = mbs_qp_last_info(warm)->nactive;
            moved += k > 0 && (iw > 0 || na != prev_na);
            prev_na = na;
        }
    }
    CHECK(sum_warm < sum_cold / 2, "warm starts took %d changes in all, cold %d", sum_warm, sum_cold);
    CHECK(moved >= 10, "the active set changed along the sequences only %d times: the test does not test", moved);

    /* a warm start from another problem's active set: its rows are re-added and those that do not
     * belong dropped */
    for (int t = 0; t < 30; t++) {
        random_problem(&P, 15, 3, 30, 0, 0);
        double x[NMAX], xc[NMAX];
        CHECK(solve(warm, &P, 1, x, NULL) == MBS_OK, "unrelated warm start %d", t);
        CHECK(solve(cold, &P, 0, xc, NULL) == MBS_OK, "cold %d", t);
        CHECK_CLOSE(x, xc, 15, 1e-10, "unrelated warm vs cold x");
        check_kkt(warm, &P, x, 1e-10, "unrelated warm");
    }
    /* warm with other sizes starts cold, without complaint */
    random_problem(&P, 9, 2, 11, 0, 0);
    double x[NMAX];
    CHECK(solve(warm, &P, 1, x, NULL) == MBS_OK, "warm with other sizes");
    check_kkt(warm, &P, x, 1e-10, "warm, other sizes");
    mbs_qp_free(cold);
    mbs_qp_free(warm);
}

/* Degenerate but solvable: duplicated rows and a row implied by two others, all binding at a
 * vertex; the solver must not mistake them for infeasibility. */
static void test_degenerate_inequalities(void)
{
    enum { n = 3, min = 6 };
    problem P = {.n = n, .meq = 0, .min = min};
    for (int i = 0; i < n; i++) { P.H[i + n * i] = 1; P.g[i] = 5; }   /* the minimum pushes to −5 */
    /* x0 >= 1, x1 >= 1, x0 >= 1 again, x0 + x1 >= 2 (implied, binding), x2 >= 0, 2 x2 >= 0 */
    double rows[min][n] = {{1, 0, 0}, {0, 1, 0}, {1, 0, 0}, {1, 1, 0}, {0, 0, 1}, {0, 0, 2}};
    double b[min] = {1, 1, 1, 2, 0, 0};
    for (int i = 0; i < min; i++) {
        for (int j = 0; j < n; j++) P.Ain[i + min * j] = rows[i][j];
        P.bin[i] = b[i];
    }
    mbs_qp *qp = mbs_qp_new(n, 0, min, NULL);
    double x[n];
    mbs_error err = {0};
    CHECK(solve(qp, &P, 0, x, &err) == MBS_OK, "degenerate: %s", err.msg);
    double expect[n] = {1, 1, 0};
    CHECK_CLOSE(x, expect, n, 1e-14, "degenerate x");
    check_kkt(qp, &P, x, 1e-13, "degenerate");
    CHECK(solve(qp, &P, 1, x, &err) == MBS_OK, "degenerate, warm: %s", err.msg);
    CHECK_CLOSE(x, expect, n, 1e-14, "degenerate x, warm");
    mbs_qp_free(qp);
}

/* x >= 1 and x <= 0 (and other contradictions) are MBS_ERR_INFEASIBLE with a message naming
 * the row; a solve after a failure works again. */
static void test_infeasible(void)
{
    mbs_qp *qp = mbs_qp_new(3, 2, 4, NULL);
    CHECK(qp, "new");
    if (!qp) return;
    double H[1] = {1}, g[1] = {0}, Ain[2] = {1, -1}, bin[2] = {1, 0}, x[3] = {0};
    mbs_error err = {0};
    int rc = mbs_qp_solve(qp, 1, H, g, 0, NULL, NULL, 2, Ain, bin, 0, x, &err);
    CHECK(rc == MBS_ERR_INFEASIBLE && err.code == MBS_ERR_INFEASIBLE, "x >= 1, x <= 0: rc %d", rc);
    CHECK(strstr(err.msg, "no x") && strstr(err.msg, "inequality"), "message: %s", err.msg);
    CHECK(mbs_qp_last_info(qp)->nactive == 0, "nactive after failure");
    /* warm after a failure starts cold and solves */
    bin[1] = -2;    /* x >= 1, x <= 2 */
    mbs_error_clear(&err);
    rc = mbs_qp_solve(qp, 1, H, g, 0, NULL, NULL, 2, Ain, bin, 1, x, &err);
    CHECK(rc == MBS_OK && fabs(x[0] - 1) < 1e-15, "x >= 1, x <= 2: rc %d x %g (%s)", rc, x[0], err.msg);

    /* an equality and an inequality that contradict it: x0 + x1 + x2 = 1, x >= 0, x0 + x1 + x2 >= 2 */
    double H3[9] = {1, 0, 0, 0, 1, 0, 0, 0, 1}, g3[3] = {1, -2, 0.5}, Aeq[3] = {1, 1, 1}, beq[1] = {1};
    double A4[12] = {1, 0, 0, 1, 0, 1, 0, 1, 0, 0, 1, 1}, b4[4] = {0, 0, 0, 2};
    mbs_error_clear(&err);
    rc = mbs_qp_solve(qp, 3, H3, g3, 1, Aeq, beq, 4, A4, b4, 0, x, &err);
    CHECK(rc == MBS_ERR_INFEASIBLE, "equality vs inequality: rc %d (%s)", rc, err.msg);
    CHECK(strstr(err.msg, "row 3"), "the row at fault is 3: %s", err.msg);
    /* a zero row that asks 0 >= 1 */
    double Az[3] = {0, 0, 0}, bz[1] = {1};
    mbs_error_clear(&err);
    rc = mbs_qp_solve(qp, 3, H3, g3, 0, NULL, NULL, 1, Az, bz, 0, x, &err);
    CHECK(rc == MBS_ERR_INFEASIBLE && strstr(err.msg, "row 0"), "0 >= 1: rc %d (%s)", rc, err.msg);
    /* three halfplanes of the plane with an empty intersection: x >= 0, y >= 0, x + y <= -1 */
    double A3[6] = {1, 0, -1, 0, 1, -1}, b3[3] = {0, 0, 1}, H2[4] = {2, 0.5, 0.5, 1}, g2[2] = {1, 1};
    mbs_error_clear(&err);
    rc = mbs_qp_solve(qp, 2, H2, g2, 0, NULL, NULL, 3, A3, b3, 0, x, &err);
    CHECK(rc == MBS_ERR_INFEASIBLE && err.msg[0], "empty triangle: rc %d (%s)", rc, err.msg);
    mbs_qp_free(qp);
}

/* H not positive definite (indefinite, zero, semi-definite, not finite) is MBS_ERR_NUMERIC. */
static void test_not_positive_definite(void)
{
    mbs_qp *qp = mbs_qp_new(2, 1, 1, NULL);
    CHECK(qp, "new");
    if (!qp) return;
    double g[2] = {1, -1}, x[2];
    const double Hs[4][4] = {{1, 0, 0, -1}, {0, 0, 0, 0}, {1, 1, 1, 1}, {1, 0, 0, NAN}};
    const char *names[4] = {"indefinite", "zero", "semi-definite", "NaN"};
    for (int k = 0; k < 4; k++) {
        mbs_error err = {0};
        int rc = mbs_qp_solve(qp, 2, Hs[k], g, 0, NULL, NULL, 0, NULL, NULL, 0, x, &err);
        CHECK(rc == MBS_ERR_NUMERIC && err.code == MBS_ERR_NUMERIC, "%s H: rc %d", names[k], rc);
        CHECK(k == 3 ? strstr(err.msg, "not finite") != NULL : strstr(err.msg, "positive definite") != NULL,
              "%s H: message %s", names[k], err.msg);
    }
    /* a positive definite H still solves afterwards */
    double H[4] = {2, 0, 0, 1};
    CHECK(mbs_qp_solve(qp, 2, H, g, 0, NULL, NULL, 0, NULL, NULL, 1, x, NULL) == MBS_OK
              && fabs(x[0] + 0.5) < 1e-15 && fabs(x[1] - 1) < 1e-15, "definite H: x %g %g", x[0], x[1]);
    mbs_qp_free(qp);
}

/* Linearly dependent equalities (consistent or not, a zero row, more rows than variables) are
 * MBS_ERR_NUMERIC naming the row; dependent inequalities are not an error. */
static void test_dependent_equalities(void)
{
    mbs_qp *qp = mbs_qp_new(3, 4, 2, NULL);
    CHECK(qp, "new");
    if (!qp) return;
    double H[9] = {2, 0.3, 0, 0.3, 1, 0.1, 0, 0.1, 1.5}, g[3] = {1, 2, 3}, x[3];
    /* rows: (1 0 1), (0 1 1), (1 1 2) = row 0 + row 1 */
    double Aeq[9] = {1, 0, 1, 0, 1, 1, 1, 1, 2};
    double consistent[3] = {1, 2, 3}, inconsistent[3] = {1, 2, 4};
    const double *beqs[2] = {consistent, inconsistent};
    for (int k = 0; k < 2; k++) {
        mbs_error err = {0};
        int rc = mbs_qp_solve(qp, 3, H, g, 3, Aeq, beqs[k], 0, NULL, NULL, 0, x, &err);
        CHECK(rc == MBS_ERR_NUMERIC, "dependent equalities (%s): rc %d", k ? "inconsistent" : "consistent", rc);
        CHECK(strstr(err.msg, "equality 2") && strstr(err.msg, "dependent"), "message: %s", err.msg);
    }
    double Az[6] = {1, 0, 0, 0, 1, 0}, bz[2] = {1, 0};     /* row 1 is zero */
    mbs_error err = {0};
    int rc = mbs_qp_solve(qp, 3, H, g, 2, Az, bz, 0, NULL, NULL, 0, x, &err);
    CHECK(rc == MBS_ERR_NUMERIC && strstr(err.msg, "equality 1"), "zero equality row: rc %d (%s)", rc, err.msg);
    /* four equalities on three variables */
    double A4[12] = {1, 0, 0, 1, 0, 1, 0, 1, 0, 0, 1, 1}, b4[4] = {1, 1, 1, 2};
    rc = mbs_qp_solve(qp, 3, H, g, 4, A4, b4, 0, NULL, NULL, 0, x, &err);
    CHECK(rc == MBS_ERR_NUMERIC && strstr(err.msg, "equality 3"), "4 equalities, 3 variables: rc %d (%s)", rc,
          err.msg);
    /* the same three independent rows as equalities solve; the dependent one as an inequality
     * (implied, binding) is no error */
    problem P = {.n = 3, .meq = 2, .min = 2};
    memcpy(P.H, H, sizeof H);
    memcpy(P.g, g, sizeof g);
    double Ae2[6] = {1, 0, 0, 1, 1, 1};  /* rows (1 0 1), (0 1 1) */
    memcpy(P.Aeq, Ae2, sizeof Ae2);
    P.beq[0] = 1; P.beq[1] = 2;
    double Ai2[6] = {1, 1, 1, 1, 2, 2};  /* rows (1 1 2) >= 3 (implied: it equals 3), (1 1 2) >= 3 */
    memcpy(P.Ain, Ai2, sizeof Ai2);
    P.bin[0] = 3; P.bin[1] = 3;
    rc = solve(qp, &P, 0, x, &err);
    CHECK(rc == MBS_OK, "implied inequalities: %s", err.msg);
    if (rc == MBS_OK) check_kkt(qp, &P, x, 1e-12, "implied inequalities");
    mbs_qp_free(qp);
}

/* Bad sizes and missing arrays are MBS_ERR_ARG, at creation and at each solve. */
static void test_bad_arguments(void)
{
    mbs_error err = {0};
    CHECK(!mbs_qp_new(0, 0, 0, &err) && err.code == MBS_ERR_ARG && strstr(err.msg, "n = 0"), "n = 0: %s", err.msg);
    mbs_error_clear(&err);
    CHECK(!mbs_qp_new(3, -1, 0, &err) && err.code == MBS_ERR_ARG, "meq = -1: %s", err.msg);
    mbs_error_clear(&err);
    CHECK(!mbs_qp_new(3, 0, -2, &err) && err.code == MBS_ERR_ARG, "min = -2: %s", err.msg);
    mbs_qp_free(NULL);
    mbs_qp *qp = mbs_qp_new(3, 1, 2, &err);
    CHECK(qp, "new: %s", err.msg);
    if (!qp) return;
    double H[16] = {1, 0, 0, 0, 1, 0, 0, 0, 1}, g[4] = {0}, A[8] = {0}, b[2] = {0}, x[4];
    struct { int n, meq, min; } bad[] = {{0, 0, 0}, {4, 0, 0}, {-1, 0, 0}, {3, 2, 0}, {3, -1, 0}, {3, 0, 3}, {3, 0, -1}};
    for (size_t k = 0; k < sizeof bad / sizeof bad[0]; k++) {
        mbs_error_clear(&err);
        int rc = mbs_qp_solve(qp, bad[k].n, H, g, bad[k].meq, A, b, bad[k].min, A, b, 0, x, &err);
        CHECK(rc == MBS_ERR_ARG && err.code == MBS_ERR_ARG && err.msg[0], "sizes %d %d %d: rc %d", bad[k].n,
              bad[k].meq, bad[k].min, rc);
    }
    mbs_error_clear(&err);
    CHECK(mbs_qp_solve(qp, 3, NULL, g, 0, NULL, NULL, 0, NULL, NULL, 0, x, &err) == MBS_ERR_ARG
              && strstr(err.msg, "H"), "H NULL: %s", err.msg);
    CHECK(mbs_qp_solve(qp, 3, H, g, 1, NULL, b, 0, NULL, NULL, 0, x, &err) == MBS_ERR_ARG
              && strstr(err.msg, "Aeq"), "Aeq NULL: %s", err.msg);
    CHECK(mbs_qp_solve(qp, 3, H, g, 0, NULL, NULL, 2, A, NULL, 0, x, &err) == MBS_ERR_ARG
              && strstr(err.msg, "bin"), "bin NULL: %s", err.msg);
    CHECK(mbs_qp_solve(NULL, 3, H, g, 0, NULL, NULL, 0, NULL, NULL, 0, x, NULL) == MBS_ERR_ARG, "no solver");
    /* the largest sizes are fine, and NULL constraint arrays with zero counts */
    CHECK(mbs_qp_solve(qp, 3, H, g, 0, NULL, NULL, 0, NULL, NULL, 0, x, &err) == MBS_OK, "unconstrained: %s",
          err.msg);
    mbs_qp_free(qp);
}

/* A solve allocates nothing: cold, warm, infeasible and failing ones, after mbs_qp_new. */
static void test_no_allocation(void)
{
    ALLOC_GUARD();
    static problem P;
    long before = allocations;
    mbs_qp *qp = mbs_qp_new(NMAX, MEQMAX, MINMAX, NULL);
    CHECK(allocations == before + 1, "mbs_qp_new made %ld allocations, expected one block", allocations - before);
    if (!qp) return;
    random_problem(&P, 30, 6, 60, 1, 1);
    double x[NMAX];
    before = allocations;
    for (int k = 0; k < 20; k++) {
        P.g[k % 30] += 0.01;
        CHECK(solve(qp, &P, k % 3 != 0, x, NULL) == MBS_OK, "solve %d", k);
    }
    double H[1] = {1}, g[1] = {0}, Ain[2] = {1, -1}, bin[2] = {1, 0}, Hbad[1] = {-1};
    mbs_error err;
    CHECK(mbs_qp_solve(qp, 1, H, g, 0, NULL, NULL, 2, Ain, bin, 0, x, &err) == MBS_ERR_INFEASIBLE, "infeasible");
    CHECK(mbs_qp_solve(qp, 1, Hbad, g, 0, NULL, NULL, 0, NULL, NULL, 0, x, &err) == MBS_ERR_NUMERIC, "not definite");
    CHECK(mbs_qp_solve(qp, NMAX + 1, H, g, 0, NULL, NULL, 0, NULL, NULL, 0, x, &err) == MBS_ERR_ARG, "too large");
    double le[MEQMAX], li[MINMAX];
    mbs_qp_multipliers(qp, le, li);
    (void)mbs_qp_active(qp);
    CHECK(allocations == before, "solves made %ld allocations", allocations - before);
    mbs_qp_free(qp);
}

/* mbsi_spd_solve, the small dense solve the controllers share (the 6 x 6 base-wrench system of the
 * gait controllers, the task-space normal equations of the walk): A x = b on random positive
 * definite systems of 1-40 rows; on a semi-definite one (dependent rows, two feet's contact rows)
 * a solution for b in its range; b = 0 for an indefinite one. */
static void test_spd_solve(void)
{
    enum { N = 40 };
    static double A[N * N], A0[N * N], G[N * N], x[N], b[N];
    srand(7);
    double worst = 0;
    for (int n = 1; n <= N; n += 3) {
        for (int rank = n; rank >= n - 2 && rank >= 1; rank -= 2) {
            /* A = G Gᵀ with G n x rank: rank < n is semi-definite */
            for (int i = 0; i < n * rank; i++) G[i] = 2.0 * rand() / RAND_MAX - 1;
            for (int i = 0; i < n; i++)
                for (int j = 0; j < n; j++) {
                    double s = 0;
                    for (int k = 0; k < rank; k++) s += G[i + n * k] * G[j + n * k];
                    A0[i + n * j] = s;
                }
            /* b = A x0: in A's range */
            for (int i = 0; i < n; i++) x[i] = 2.0 * rand() / RAND_MAX - 1;
            double bmax = 0;
            for (int i = 0; i < n; i++) {
                b[i] = 0;
                for (int j = 0; j < n; j++) b[i] += A0[i + n * j] * x[j];
                bmax = fmax(bmax, fabs(b[i]));
            }
            memcpy(A, A0, sizeof(double) * n * n);
            double rhs[N];
            memcpy(rhs, b, sizeof(double) * n);
            mbsi_spd_solve(A, n, rhs);
            double res = 0;
            for (int i = 0; i < n; i++) {
                double r = -b[i];
                for (int j = 0; j < n; j++) r += A0[i + n * j] * rhs[j];
                res = fmax(res, fabs(r));
            }
            double tol = rank == n ? 1e-8 : 1e-6;
            CHECK(res <= tol * bmax, "n = %d, rank %d: residual %.3g of |b| %.3g", n, rank, res, bmax);
            if (rank == n) worst = check_worst(worst, res / bmax);
        }
    }
    /* indefinite: diag(1, -1) */
    double D[4] = {1, 0, 0, -1}, y[2] = {1, 1};
    mbsi_spd_solve(D, 2, y);
    CHECK(y[0] == 0 && y[1] == 0, "indefinite: x = (%g, %g), not 0", y[0], y[1]);
    printf("spd_solve: worst relative residual %.2e on positive definite systems of 1-%d rows\n", worst, N);
}

/* mbsi_lu_factor and mbsi_lu_solve, the dense LU the steppers share (expm's Padé denominator, nmdp's
 * ∇G, the limb IK's KKT system): A X = B on random general systems of 1-70 rows, whose first
 * pivot is made small so that the row exchanges are used, for 1, 3 and 9 right-hand sides; the
 * solve on rows (scratch given, four columns or more) gives the columns' X bitwise; the factors
 * reproduce P A = L U; an exactly singular column is reported by its number. */
static void test_lu(void)
{
    enum { N = 70, K = 9 };
    static double A[N * N], A0[N * N], B[N * K], X1[N * K], X2[N * K], W[N * K];
    static int piv[N];
    srand(11);
    double worst = 0;
    for (int n = 1; n <= N; n += 3) {
        for (int i = 0; i < n * n; i++) A0[i] = 2.0 * rand() / RAND_MAX - 1;
        A0[0] = 1e-3;
        memcpy(A, A0, sizeof(double) * n * n);
        CHECK(mbsi_lu_factor(n, A, piv) == 0, "n = %d: a regular matrix reported singular", n);
        /* P A = L U, row by row: the exchanges applied to a copy of A0 in order */
        static double PA[N * N];
        memcpy(PA, A0, sizeof(double) * n * n);
        for (int k = 0; k < n; k++)
            if (piv[k] != k)
                for (int j = 0; j < n; j++) {
                    double t = PA[k + n * j];
                    PA[k + n * j] = PA[piv[k] + n * j];
                    PA[piv[k] + n * j] = t;
                }
        double err = 0, amax = 0;
        for (int i = 0; i < n; i++)
            for (int j = 0; j < n; j++) {
                double s = 0;
                for (int k = 0; k <= (i < j ? i : j); k++) s += (k == i ? 1 : A[i + n * k]) * A[k + n * j];
                err = fmax(err, fabs(s - PA[i + n * j]));
                amax = fmax(amax, fabs(PA[i + n * j]));
            }
        CHECK(err <= 1e-12 * n * amax, "n = %d: |P A - L U| %.3g", n, err);
        for (int k = 1; k <= K; k += k < 3 ? 2 : 6) {
            for (int i = 0; i < n * k; i++) B[i] = X1[i] = X2[i] = 2.0 * rand() / RAND_MAX - 1;
            mbsi_lu_solve(n, A, piv, X1, k, NULL);
            mbsi_lu_solve(n, A, piv, X2, k, W);
            CHECK(memcmp(X1, X2, sizeof(double) * n * k) == 0, "n = %d, %d columns: the solve on rows differs", n, k);
            double res = 0, bmax = 0;
            for (int c = 0; c < k; c++)
                for (int i = 0; i < n; i++) {
                    double r = -B[i + n * c];
                    for (int j = 0; j < n; j++) r += A0[i + n * j] * X1[j + n * c];
                    res = fmax(res, fabs(r));
                    bmax = fmax(bmax, fabs(B[i + n * c]));
                }
            CHECK(res <= 1e-10 * bmax, "n = %d, %d columns: residual %.3g", n, k, res);
            worst = check_worst(worst, res / bmax);
        }
    }
    /* a zero third column (of 6): its pivot is exactly zero (a dependent column's would be rounding) */
    int n = 6;
    for (int i = 0; i < n * n; i++) A[i] = 2.0 * rand() / RAND_MAX - 1;
    for (int i = 0; i < n; i++) A[i + n * 2] = 0;
    int rc = mbsi_lu_factor(n, A, piv);
    CHECK(rc == 3, "a matrix whose third column is zero: mbsi_lu_factor returned %d, not 3", rc);
    printf("lu: worst relative residual %.2e on general systems of 1-%d rows\n", worst, N);
}

int main(void)
{
    RUN(test_closed_form);
    RUN(test_kkt_random);
    RUN(test_sizes_smaller_than_capacity);
    RUN(test_brute_force);
    RUN(test_warm_start);
    RUN(test_degenerate_inequalities);
    RUN(test_infeasible);
    RUN(test_not_positive_definite);
    RUN(test_dependent_equalities);
    RUN(test_bad_arguments);
    RUN(test_no_allocation);
    RUN(test_spd_solve);
    RUN(test_lu);
    return check_summary("test_qp");
}
