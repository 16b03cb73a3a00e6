/* test_derivatives.c — analytical RNEA and ABA derivatives against central finite
 * differences in the tangent space, on random trees with every joint type. */
#include <stdlib.h>

#include "check.h"
#include "testmodels.h"

typedef void (*eval_fn)(const mbs_model *m, mbs_data *d, const double *q, const double *v, const double *u,
                        double *out);

static void eval_rnea(const mbs_model *m, mbs_data *d, const double *q, const double *v, const double *u, double *out)
{
    mbs_rnea(m, d, q, v, u, out);
}

static void eval_aba(const mbs_model *m, mbs_data *d, const double *q, const double *v, const double *u, double *out)
{
    mbs_aba(m, d, q, v, u, out);
}

/* Central differences of f with respect to q (tangent), v and u, column by column. */
static void finite_differences(const mbs_model *m, mbs_data *d, eval_fn f, const double *q, const double *v,
                               const double *u, double *Dq, double *Dv, double *Du)
{
    int nq = mbs_model_nq(m), nv = mbs_model_nv(m);
    double h = 1e-6;
    double *dq = calloc((size_t)nv, sizeof(double)), *qp = calloc((size_t)nq, sizeof(double));
    double *qm = calloc((size_t)nq, sizeof(double)), *x = calloc((size_t)nv, sizeof(double));
    double *fp = calloc((size_t)nv, sizeof(double)), *fm = calloc((size_t)nv, sizeof(double));
    for (int k = 0; k < nv; k++) {
        memset(dq, 0, sizeof(double) * (size_t)nv);
        dq[k] = h;
        mbs_integrate(m, q, dq, qp);
        dq[k] = -h;
        mbs_integrate(m, q, dq, qm);
        f(m, d, qp, v, u, fp);
        f(m, d, qm, v, u, fm);
        for (int r = 0; r < nv; r++) Dq[r + (size_t)nv * k] = (fp[r] - fm[r]) / (2 * h);
        memcpy(x, v, sizeof(double) * (size_t)nv);
        x[k] += h; f(m, d, q, x, u, fp);
        x[k] -= 2 * h; f(m, d, q, x, u, fm);
        for (int r = 0; r < nv; r++) Dv[r + (size_t)nv * k] = (fp[r] - fm[r]) / (2 * h);
        memcpy(x, u, sizeof(double) * (size_t)nv);
        x[k] += h; f(m, d, q, v, x, fp);
        x[k] -= 2 * h; f(m, d, q, v, x, fm);
        for (int r = 0; r < nv; r++) Du[r + (size_t)nv * k] = (fp[r] - fm[r]) / (2 * h);
    }
    free(dq); free(qp); free(qm); free(x); free(fp); free(fm);
}

/* Relative error scaled by the matrix's largest entry (entries can be zero). */
static double rel_err(const double *A, const double *B, int n)
{
    double e = 0, s = 1e-300;
    for (int k = 0; k < n; k++) { e = fmax(e, fabs(A[k] - B[k])); s = fmax(s, fabs(B[k])); }
    return e / fmax(s, 1.0);
}

static void check_model(mbs_model *m, unsigned long long seed)
{
    int nq = mbs_model_nq(m), nv = mbs_model_nv(m);
    size_t n2 = (size_t)nv * nv;
    mbs_data *d = mbs_data_new(m);
    double *q = calloc((size_t)nq, sizeof(double)), *v = calloc((size_t)nv, sizeof(double));
    double *a = calloc((size_t)nv, sizeof(double)), *tau = calloc((size_t)nv, sizeof(double));
    double *A[3], *F[3], *ddq = calloc((size_t)nv, sizeof(double)), *M = calloc(n2, sizeof(double));
    for (int k = 0; k < 3; k++) { A[k] = calloc(n2, sizeof(double)); F[k] = calloc(n2, sizeof(double)); }
    tm_random_state(m, &seed, q, v, a, tau);

    mbs_rnea_derivatives(m, d, q, v, a, A[0], A[1], A[2]);
    finite_differences(m, d, eval_rnea, q, v, a, F[0], F[1], F[2]);
    CHECK(rel_err(A[0], F[0], (int)n2) < 1e-6, "dtau/dq vs FD: %.3e (nv %d)", rel_err(A[0], F[0], (int)n2), nv);
    CHECK(rel_err(A[1], F[1], (int)n2) < 1e-6, "dtau/dv vs FD: %.3e", rel_err(A[1], F[1], (int)n2));
    CHECK(rel_err(A[2], F[2], (int)n2) < 1e-6, "dtau/da vs FD: %.3e", rel_err(A[2], F[2], (int)n2));
    mbs_crba(m, d, q, M);
    CHECK(rel_err(A[2], M, (int)n2) < 1e-12, "dtau/da = M: %.3e", rel_err(A[2], M, (int)n2));

    mbs_aba_derivatives(m, d, q, v, tau, ddq, A[0], A[1], A[2]);
    finite_differences(m, d, eval_aba, q, v, tau, F[0], F[1], F[2]);
    CHECK(rel_err(A[0], F[0], (int)n2) < 1e-6, "dddq/dq vs FD: %.3e (nv %d)", rel_err(A[0], F[0], (int)n2), nv);
    CHECK(rel_err(A[1], F[1], (int)n2) < 1e-6, "dddq/dv vs FD: %.3e", rel_err(A[1], F[1], (int)n2));
    CHECK(rel_err(A[2], F[2], (int)n2) < 1e-6, "dddq/dtau vs FD: %.3e", rel_err(A[2], F[2], (int)n2));
    mbs_aba(m, d, q, v, tau, a);
    /* q̈ comes from M⁻¹(τ − b) by LTDL, not from the ABA recursion: equal up to rounding */
    CHECK_CLOSE(ddq, a, nv, 1e-12, "aba_derivatives returns aba");
    /* any subset of the three outputs (NULL for the others) lays the solve's block out anew
     * (its identity part only with ∂q̈/∂τ, each part on whole cache lines): the same values */
    for (int mask = 0; mask < 7; mask++) {
        double *B[3];
        for (int k = 0; k < 3; k++) {
            B[k] = mask >> k & 1 ? F[k] : NULL;
            if (B[k]) memset(B[k], 0, n2 * sizeof(double));
        }
        memset(a, 0, (size_t)nv * sizeof(double));
        mbs_aba_derivatives(m, d, q, v, tau, a, B[0], B[1], B[2]);
        CHECK(rel_err(a, ddq, nv) < 1e-12, "q̈ of subset %d: %.3e", mask, rel_err(a, ddq, nv));
        for (int k = 0; k < 3; k++)
            if (B[k]) CHECK(rel_err(B[k], A[k], (int)n2) < 1e-12, "output %d of subset %d: %.3e", k, mask,
                            rel_err(B[k], A[k], (int)n2));
    }

    /* ∂T/∂q with v held, against central differences of the kinetic energy */
    double *g = A[0], *qp = F[0], *qm = F[1], *dq = F[2], h = 1e-6, e = 0, sc = 1;
    mbs_kinetic_energy_dq(m, d, q, v, g);
    for (int k = 0; k < nv; k++) {
        memset(dq, 0, sizeof(double) * (size_t)nv);
        dq[k] = h;
        mbs_integrate(m, q, dq, qp);
        dq[k] = -h;
        mbs_integrate(m, q, dq, qm);
        double fd = (mbs_kinetic_energy(m, d, qp, v) - mbs_kinetic_energy(m, d, qm, v)) / (2 * h);
        e = fmax(e, fabs(fd - g[k]));
        sc = fmax(sc, fabs(fd));
    }
    CHECK(e / sc < 1e-7, "dT/dq vs FD: %.3e (nv %d)", e / sc, nv);

    for (int k = 0; k < 3; k++) { free(A[k]); free(F[k]); }
    free(q); free(v); free(a); free(tau); free(ddq); free(M);
    mbs_data_free(d);
}

static void test_random_trees(void)
{
    static const int sizes[] = {1, 2, 3, 4, 6, 9, 12, 17, 25};
    for (int k = 0; k < (int)(sizeof sizes / sizeof *sizes); k++)
        for (int floating = 0; floating < 2; floating++) {
            mbs_model *m = tm_random_tree(sizes[k], floating, 300 + (unsigned long long)(10 * k + floating));
            check_model(m, 42 + (unsigned long long)k);
            mbs_model_free(m);
        }
}

int main(void)
{
    RUN(test_random_trees);
    return check_summary("test_derivatives");
}
