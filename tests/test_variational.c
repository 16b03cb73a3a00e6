/* test_variational.c — the linear-time variational integrator (Lee, Liu, Park, Srinivasa, WAFR
 * 2016): the SE(3) building blocks against the Bernoulli series of eqs. 12–13, DRNEA against the
 * continuous RNEA as Δt → 0 and against its own trajectories, Algorithm 4 against finite
 * differences, RIQN / Newton / Broyden / tree Newton on the same root, tree Newton's update
 * and chord step against dense solves, energy without secular drift on the
 * 10-link pendulum where semi-implicit Euler drifts, exact momentum of a free-floating chain,
 * second order, the stepper's options, restarts and contacts, and urdf/chain10.urdf with its
 * scenario. */
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include <lapacke.h>

#include "../src/dynamics/dynamics_internal.h"
#include "../src/liegroup/liegroup_internal.h"
#include "check.h"
#include "mbs.h"
#include "testmodels.h"
/* white-box: reads and sets the system's and contacts' fields directly */
#include "../src/contact/contact_internal.h"

#define PI 3.14159265358979323846

/* ------------------------------------------------------------------ helpers */

/* 6x6 column-major products and the ad matrix of a twist ξ = (ρ, ω): ad_ξ η = ξ ×m η. */
static void m6_mul(const double *A, const double *B, double *C)
{
    double T[36];
    for (int j = 0; j < 6; j++)
        for (int i = 0; i < 6; i++) {
            double s = 0;
            for (int k = 0; k < 6; k++) s += A[i + 6 * k] * B[k + 6 * j];
            T[i + 6 * j] = s;
        }
    memcpy(C, T, sizeof T);
}

static void skew3(const double w[3], double *M, int ld, int r, int c)
{
    M[(r + 0) + ld * (c + 0)] = 0;     M[(r + 0) + ld * (c + 1)] = -w[2]; M[(r + 0) + ld * (c + 2)] = w[1];
    M[(r + 1) + ld * (c + 0)] = w[2];  M[(r + 1) + ld * (c + 1)] = 0;     M[(r + 1) + ld * (c + 2)] = -w[0];
    M[(r + 2) + ld * (c + 0)] = -w[1]; M[(r + 2) + ld * (c + 1)] = w[0];  M[(r + 2) + ld * (c + 2)] = 0;
}

static void ad_matrix(const double xi[6], double ad[36])
{
    memset(ad, 0, 36 * sizeof(double));
    skew3(xi + 3, ad, 6, 0, 0);
    skew3(xi, ad, 6, 0, 3);
    skew3(xi + 3, ad, 6, 3, 3);
}

/* Σ_j c_j ad^j for j = 0..n-1 */
static void ad_series(const double xi[6], const double *c, int n, double out[36])
{
    double ad[36], P[36];
    ad_matrix(xi, ad);
    memset(P, 0, sizeof P);
    for (int k = 0; k < 6; k++) P[7 * k] = 1;
    memset(out, 0, 36 * sizeof(double));
    for (int j = 0; j < n; j++) {
        for (int k = 0; k < 36; k++) out[k] += c[j] * P[k];
        m6_mul(ad, P, P);
    }
}

#define NSERIES 80
/* b_j = B_j / j! from x/(eˣ-1) = Σ b_j x^j: Σ_{k<=m} b_k/(m+1-k)! = 0 for m >= 1 (B_1 = -1/2). */
static void bernoulli_over_factorial(double *b, int n)
{
    double inv_fact[NSERIES + 2];
    inv_fact[0] = 1;
    for (int k = 1; k < NSERIES + 2; k++) inv_fact[k] = inv_fact[k - 1] / k;
    b[0] = 1;
    for (int m = 1; m < n; m++) {
        double s = 0;
        for (int k = 0; k < m; k++) s += b[k] * inv_fact[m + 1 - k];
        b[m] = -s;   /* the k = m term has weight 1/1! */
    }
}

static void random_twist(unsigned long long *s, double angle, double xi[6])
{
    double n = 0;
    for (int k = 0; k < 6; k++) xi[k] = tm_uniform(s, -1, 1);
    for (int k = 3; k < 6; k++) n += xi[k] * xi[k];
    n = sqrt(n);
    for (int k = 3; k < 6; k++) xi[k] *= angle / n;
}

static double max_abs_diff(const double *a, const double *b, int n)
{
    double e = 0;
    for (int k = 0; k < n; k++) e = fmax(e, fabs(a[k] - b[k]));
    return e;
}

static double norm2(const double *x, int n)
{
    double s = 0;
    for (int k = 0; k < n; k++) s += x[k] * x[k];
    return sqrt(s);
}

/* The paper's N-link roll pendulum (sec. 4; its code builds it with DART's defaults): links of
 * 1 kg with a rotational inertia of 1 kg m² about their centre, 0.75 m along the link, joints 1.5 m
 * apart, every joint rolling about x; q and q̇ uniform in ±π/2. */
/* The paper's N-link pendulum: 1.5 m links of 1 kg with unit inertia, joints about x. */
static mbs_model *pendulum(int n)
{
    static const double unit[9] = {1, 0, 0, 0, 1, 0, 0, 0, 1};
    const mbs_chain_options opt = {1.5, 1.0, 0, 0, unit, 1, 1, 0};
    return mbs_model_chain(n, &opt, NULL);
}

static void random_state(const mbs_model *m, unsigned long long seed, double *q, double *v)
{
    mbs_neutral(m, q);
    unsigned long long s = seed;
    for (int j = 0; j < mbs_model_njoints(m); j++) {
        int iq = mbs_joint_idx_q(m, j), iv = mbs_joint_idx_v(m, j);
        if (mbs_joint_type_of(m, j) == MBS_JOINT_REVOLUTE) q[iq] = tm_uniform(&s, -PI / 2, PI / 2);
        for (int k = 0; k < mbs_joint_nv(m, j); k++) v[iv + k] = tm_uniform(&s, -PI / 2, PI / 2);
    }
}

static double energy(const mbs_model *m, mbs_data *d, const double *q, const double *v)
{
    return mbs_kinetic_energy(m, d, q, v) + mbs_potential_energy(m, d, q);
}

/* Least-squares line through (k, y_k): slope per sample, and the largest residual from it. */
static void fit_line(const double *y, int n, double *slope, double *spread)
{
    double sx = 0, sy = 0, sxx = 0, sxy = 0;
    for (int k = 0; k < n; k++) { sx += k; sy += y[k]; sxx += (double)k * k; sxy += k * y[k]; }
    double b = (n * sxy - sx * sy) / (n * sxx - sx * sx), a = (sy - b * sx) / n, w = 0;
    for (int k = 0; k < n; k++) w = fmax(w, fabs(y[k] - a - b * k));
    *slope = b;
    *spread = w;
}

/* ------------------------------------------------------------------ SE(3) building blocks */

/* dlog (eq. 12–13) and dexp against their series; Ad = exp(ad); log∘exp = id; the transposed
 * dlog of DRNEA and its derivative. */
static void test_dlog_dexp_series(void)
{
    double b[NSERIES], cexp[NSERIES];
    bernoulli_over_factorial(b, NSERIES);
    CHECK(fabs(b[1] + 0.5) < 1e-16 && fabs(b[2] - 1.0 / 12) < 1e-16 && fabs(b[4] + 1.0 / 720) < 1e-17,
          "Bernoulli numbers: b1 %g b2 %g b4 %g", b[1], b[2], b[4]);
    cexp[0] = 1;
    for (int j = 1; j < NSERIES; j++) cexp[j] = cexp[j - 1] / (j + 1);   /* 1/(j+1)! */
    unsigned long long s = 7;
    const double angles[] = {0, 1e-9, 1e-4, 0.01, 0.3, 0.99, 1.0, 1.01, 2.0, 2.9};
    for (unsigned a = 0; a < sizeof angles / sizeof *angles; a++) {
        double xi[6], mxi[6], S[36], L[36], Sexp[36], E[36], Ad[36], g[7], back[6];
        random_twist(&s, angles[a], xi);
        for (int k = 0; k < 6; k++) mxi[k] = -xi[k];
        /* the series converge for θ < 2π; 80 terms reach double precision up to 2.9 rad */
        ad_series(xi, b, NSERIES, S);
        mbsi_se3_jlog(mxi, L, 6);                    /* Jr⁻¹(-ξ) = Jl⁻¹(ξ) = the paper's dlog_ξ */
        CHECK(max_abs_diff(S, L, 36) < 1e-13, "dlog at %g rad: closed form vs eq. 13 series, %.2e", angles[a],
              max_abs_diff(S, L, 36));
        ad_series(xi, cexp, NSERIES, Sexp);
        mbsi_se3_jexp(mxi, E, 6);                    /* Jl(ξ) = dexp_ξ */
        CHECK(max_abs_diff(Sexp, E, 36) < 1e-13, "dexp at %g rad: closed form vs series, %.2e", angles[a],
              max_abs_diff(Sexp, E, 36));
        m6_mul(S, Sexp, E);
        for (int k = 0; k < 6; k++) E[7 * k] -= 1;
        CHECK(max_abs_diff(E, (double[36]){0}, 36) < 1e-12, "dlog dexp != 1 at %g rad", angles[a]);
        /* Ad_{exp ξ} = exp(ad_ξ) (eq. 15) */
        double cfe[NSERIES];
        cfe[0] = 1;
        for (int j = 1; j < NSERIES; j++) cfe[j] = cfe[j - 1] / j;
        ad_series(xi, cfe, NSERIES, E);
        mbsi_se3_exp(xi, g);
        mbsi_se3_adjoint(g, Ad, 6);
        CHECK(max_abs_diff(E, Ad, 36) < 1e-12, "Ad(exp ξ) != exp(ad ξ) at %g rad", angles[a]);
        /* log ∘ exp = id (below π) */
        mbsi_se3_log(g, back);
        CHECK(max_abs_diff(back, xi, 6) < 1e-14, "log(exp ξ) != ξ at %g rad: %.2e", angles[a],
              max_abs_diff(back, xi, 6));
        /* Jl = Ad_{exp ξ} Jr */
        double Jr[36];
        mbsi_se3_jexp(xi, Jr, 6);
        m6_mul(Ad, Jr, E);
        mbsi_se3_jexp(mxi, L, 6);
        CHECK(max_abs_diff(E, L, 36) < 1e-13, "Jl != Ad Jr at %g rad", angles[a]);
        /* the transposed dlog DRNEA uses, and its derivative (forward mode) against central differences */
        double y[6], dx[6], out[6], ref[6], dd[6], fp[6], fm[6], xp[6], xm[6];
        for (int k = 0; k < 6; k++) { y[k] = tm_uniform(&s, -2, 2); dx[k] = tm_uniform(&s, -1, 1); }
        mbs_vi_dlog_transpose(xi, y, out);
        for (int i = 0; i < 6; i++) {
            ref[i] = 0;
            for (int k = 0; k < 6; k++) ref[i] += S[k + 6 * i] * y[k];
        }
        CHECK(max_abs_diff(out, ref, 6) < 1e-13 * 4, "dlogᵀ y at %g rad: %.2e", angles[a], max_abs_diff(out, ref, 6));
        mbs_vi_dlog_transpose_derivative(xi, dx, y, dd);
        double h = 1e-5;
        for (int k = 0; k < 6; k++) { xp[k] = xi[k] + h * dx[k]; xm[k] = xi[k] - h * dx[k]; }
        mbs_vi_dlog_transpose(xp, y, fp);
        mbs_vi_dlog_transpose(xm, y, fm);
        for (int k = 0; k < 6; k++) ref[k] = (fp[k] - fm[k]) / (2 * h);
        CHECK(max_abs_diff(dd, ref, 6) < 1e-8, "d(dlogᵀ y) at %g rad: %.2e", angles[a], max_abs_diff(dd, ref, 6));
    }
}

/* ------------------------------------------------------------------ DRNEA */

/* q(t) = q0 ⊕ (t v + t²/2 a) has velocity v and acceleration a at t = 0 on every joint group
 * (ad_v v = 0), so DRNEA(q(-h), q(0), q(h))/h must tend to the RNEA torque, at second order. */
static void test_drnea_vs_rnea(void)
{
    for (int floating = 0; floating <= 1; floating++) {
        mbs_model *m = tm_random_tree(9, floating, 21 + floating);
        int nq = mbs_model_nq(m), nv = mbs_model_nv(m), nb = mbs_model_nbodies(m);
        mbs_data *d = mbs_data_new(m);
        mbs_vi *w = mbs_vi_new(m, NULL);
        double *q0 = calloc((size_t)nq, 8), *qm = calloc((size_t)nq, 8), *qp = calloc((size_t)nq, 8);
        double *v = calloc((size_t)nv, 8), *a = calloc((size_t)nv, 8), *tau = calloc((size_t)nv, 8);
        double *th = calloc((size_t)nv, 8), *res = calloc((size_t)nv, 8), *ref = calloc((size_t)nv, 8);
        double *fext = calloc(6 * (size_t)nb, 8);
        unsigned long long seed = 5;
        tm_random_state(m, &seed, q0, v, a, tau);
        for (int k = 0; k < 6 * nb; k++) fext[k] = tm_uniform(&seed, -1, 1);
        mbs_rnea_fext(m, d, q0, v, a, fext, ref);
        for (int k = 0; k < nv; k++) ref[k] -= tau[k];
        double err[3];
        const double hs[3] = {4e-3, 2e-3, 1e-3};
        for (int r = 0; r < 3; r++) {
            double h = hs[r];
            for (int k = 0; k < nv; k++) th[k] = -h * v[k] + 0.5 * h * h * a[k];
            mbs_integrate(m, q0, th, qm);
            for (int k = 0; k < nv; k++) th[k] = h * v[k] + 0.5 * h * h * a[k];
            mbs_integrate(m, q0, th, qp);
            CHECK(mbs_drnea(m, w, h, qm, q0, qp, tau, fext, res) == MBS_OK, "mbs_drnea failed");
            double e = 0;
            for (int k = 0; k < nv; k++) e = fmax(e, fabs(res[k] / h - ref[k]) / fmax(1, fabs(ref[k])));
            err[r] = e;
        }
        CHECK(err[2] < 1e-4, "floating %d: DRNEA/Δt vs RNEA: %.3e at Δt = 1 ms", floating, err[2]);
        double p1 = log2(err[0] / err[1]), p2 = log2(err[1] / err[2]);
        CHECK(p1 > 1.8 && p2 > 1.8, "floating %d: DRNEA/Δt → RNEA at order %.2f, %.2f (errors %.2e %.2e %.2e), expected 2",
              floating, p1, p2, err[0], err[1], err[2]);
        free(q0); free(qm); free(qp); free(v); free(a); free(tau); free(th); free(res); free(ref); free(fext);
        mbs_vi_free(w);
        mbs_data_free(d);
        mbs_model_free(m);
    }
}

/* Algorithm 4 against central differences in the tangent space at q^{k+1}. */
static void test_jacobian_fd(void)
{
    for (int floating = 0; floating <= 1; floating++) {
        mbs_model *m = tm_random_tree(8, floating, 31 + floating);
        int nq = mbs_model_nq(m), nv = mbs_model_nv(m), nb = mbs_model_nbodies(m);
        mbs_vi *w = mbs_vi_new(m, NULL);
        double *q0 = calloc((size_t)nq, 8), *q1 = calloc((size_t)nq, 8), *q2 = calloc((size_t)nq, 8);
        double *qe = calloc((size_t)nq, 8), *v = calloc((size_t)nv, 8), *th = calloc((size_t)nv, 8);
        double *r0 = calloc((size_t)nv, 8), *rp = calloc((size_t)nv, 8), *rm = calloc((size_t)nv, 8);
        double *J = calloc((size_t)nv * nv, 8), *tau = calloc((size_t)nv, 8), *fext = calloc(6 * (size_t)nb, 8);
        unsigned long long seed = 9;
        const double dt = 0.01;
        tm_random_state(m, &seed, q1, v, tau, NULL);
        for (int k = 0; k < 6 * nb; k++) fext[k] = tm_uniform(&seed, -1, 1);
        /* steps large enough to exercise the nonlinear parts of dlog */
        for (int k = 0; k < nv; k++) th[k] = -dt * 20 * v[k];
        mbs_integrate(m, q1, th, q0);
        for (int k = 0; k < nv; k++) th[k] = dt * 20 * (v[k] + tm_uniform(&seed, -0.5, 0.5));
        mbs_integrate(m, q1, th, q2);
        mbs_vi_begin(m, w, dt, dt, q0, q1, tau, fext);
        mbs_vi_jacobian(m, w, q2, r0, J, nv);
        double worst = 0, scale = 0;
        const double h = 1e-6;
        for (int j = 0; j < nv; j++) {
            memset(th, 0, sizeof(double) * (size_t)nv);
            th[j] = h;
            mbs_integrate(m, q2, th, qe);
            mbs_vi_residual(m, w, qe, rp);
            th[j] = -h;
            mbs_integrate(m, q2, th, qe);
            mbs_vi_residual(m, w, qe, rm);
            for (int i = 0; i < nv; i++) {
                double fd = (rp[i] - rm[i]) / (2 * h);
                worst = check_worst(worst, fabs(fd - J[i + (size_t)nv * j]));
                scale = fmax(scale, fabs(fd));
            }
        }
        CHECK(worst < 1e-6 * scale, "floating %d: Algorithm 4 vs finite differences: %.3e (scale %.3e)", floating, worst,
              scale);
        free(q0); free(q1); free(q2); free(qe); free(v); free(th); free(r0); free(rp); free(rm); free(J); free(tau);
        free(fext);
        mbs_vi_free(w);
        mbs_model_free(m);
    }
}

/* RIQN, Newton, Broyden and tree Newton find the same q^{k+1}, which is a root; on a 3-D chain
 * and a random tree with a free-flyer, planar and prismatic joints. */
static void test_solvers_same_root(void)
{
    for (int c = 0; c < 2; c++) {
        mbs_model *m = c == 0 ? mbs_model_chain(10, NULL, NULL) : tm_random_tree(10, 1, 41);
        int nq = mbs_model_nq(m), nv = mbs_model_nv(m);
        mbs_data *d = mbs_data_new(m);
        mbs_vi *w = mbs_vi_new(m, NULL);
        double *q = calloc((size_t)nq, 8), *v = calloc((size_t)nv, 8), *res = calloc((size_t)nv, 8);
        double *sol[4];
        unsigned long long seed = 13;
        tm_random_state(m, &seed, q, v, NULL, NULL);
        for (int k = 0; k < nv; k++) v[k] *= 3;
        const mbs_vi_solver solvers[4] = {MBS_VI_RIQN, MBS_VI_NEWTON, MBS_VI_BROYDEN, MBS_VI_TREE_NEWTON};
        const char *names[4] = {"RIQN", "Newton", "Broyden", "tree Newton"};
        int iters[4];
        for (int s = 0; s < 4; s++) {
            sol[s] = calloc((size_t)nq, 8);
            mbs_vi_options o;
            mbs_vi_default_options(&o);
            o.solver = solvers[s];
            o.tol = 1e-12;
            o.max_iter = 50;
            mbs_vi_result r;
            CHECK(mbs_vi_begin_velocity(m, w, 2e-3, q, v, NULL, NULL) == MBS_OK, "begin failed");
            CHECK(mbs_vi_solve(m, d, w, &o, sol[s], &r) == MBS_OK, "%s failed", names[s]);
            CHECK(r.converged && r.residual <= 1e-11, "model %d: %s did not converge: %.3e after %d", c, names[s],
                  r.residual, r.iterations);
            mbs_vi_residual(m, w, sol[s], res);
            CHECK(norm2(res, nv) == r.residual, "model %d: %s: residual %.3e at its root, %.3e reported", c, names[s],
                  norm2(res, nv), r.residual);
            iters[s] = r.iterations;
        }
        double dq[64];
        for (int s = 1; s < 4; s++) {
            mbs_difference(m, sol[0], sol[s], dq);
            CHECK(norm2(dq, nv) < 1e-12, "model %d: RIQN and %s roots differ by %.3e", c, names[s], norm2(dq, nv));
        }
        CHECK(iters[1] <= iters[0], "model %d: Newton took more iterations (%d) than RIQN (%d)", c, iters[1], iters[0]);
        CHECK(iters[3] <= iters[0], "model %d: tree Newton took %d iterations, RIQN %d", c, iters[3], iters[0]);
        for (int s = 0; s < 4; s++) free(sol[s]);
        free(q); free(v); free(res);
        mbs_vi_free(w);
        mbs_data_free(d);
        mbs_model_free(m);
    }
}

/* A step of 10 ms begun (mbs_vi_begin_velocity) from a random state with v scaled by vscale,
 * and q0 = q ⊕ (0.01 v + noise uniform in ±amp): a guess off the root, for tests of single
 * updates. The options: that guess given, tol 0, max_iter updates. */
static void off_root_guess(const mbs_model *m, mbs_vi *w, unsigned long long seed, double vscale, double amp,
                           int max_iter, double *q0, mbs_vi_options *o)
{
    int nq = mbs_model_nq(m), nv = mbs_model_nv(m);
    double *q = calloc((size_t)nq, 8), *v = calloc((size_t)nv, 8), *dq = calloc((size_t)nv, 8);
    tm_random_state(m, &seed, q, v, NULL, NULL);
    for (int k = 0; k < nv; k++) v[k] *= vscale;
    CHECK(mbs_vi_begin_velocity(m, w, 0.01, q, v, NULL, NULL) == MBS_OK, "begin failed");
    for (int k = 0; k < nv; k++) dq[k] = 0.01 * v[k] + tm_uniform(&seed, -amp, amp);
    mbs_integrate(m, q, dq, q0);
    mbs_vi_default_options(o);
    o->guess = MBS_VI_GUESS_GIVEN;
    o->max_iter = max_iter;
    o->tol = 0;
    free(q); free(v); free(dq);
}

/* One tree-Newton update is the dense Newton update: the O(n) elimination of del_tree.c solves
 * with the very Jacobian of Algorithm 4 (checked against finite differences above), on trees
 * with every joint type, fixed and floating, from a guess far enough to make B_i asymmetric. */
static void test_tree_newton_step(void)
{
    for (int c = 0; c < 3; c++) {
        mbs_model *m = c == 2 ? mbs_model_chain(30, NULL, NULL) : tm_random_tree(12, c, 57 + c);
        int nq = mbs_model_nq(m), nv = mbs_model_nv(m);
        mbs_data *d = mbs_data_new(m);
        mbs_vi *w = mbs_vi_new(m, NULL);
        double *q0 = calloc((size_t)nq, 8), *a = calloc((size_t)nq, 8), *b = calloc((size_t)nq, 8);
        double *dq = calloc((size_t)nv, 8), *step = calloc((size_t)nv, 8);
        mbs_vi_options o;
        off_root_guess(m, w, 71 + (unsigned long long)c, 10, 0.05, 1, q0, &o);
        memcpy(a, q0, sizeof(double) * (size_t)nq);
        memcpy(b, q0, sizeof(double) * (size_t)nq);
        o.solver = MBS_VI_NEWTON;
        CHECK(mbs_vi_solve(m, d, w, &o, a, NULL) == MBS_OK, "model %d: Newton failed", c);
        o.solver = MBS_VI_TREE_NEWTON;
        mbs_vi_result r;
        CHECK(mbs_vi_solve(m, d, w, &o, b, &r) == MBS_OK, "model %d: tree Newton failed", c);
        CHECK(r.iterations == 1 && r.jacobians == 1, "model %d: %d iterations, %d factorisations (expected 1, 1)", c,
              r.iterations, r.jacobians);
        mbs_difference(m, q0, a, step);
        mbs_difference(m, a, b, dq);
        CHECK(norm2(dq, nv) < 1e-11 * norm2(step, nv), "model %d (nv %d): tree and dense Newton steps differ by %.3e of %.3e",
              c, nv, norm2(dq, nv), norm2(step, nv));
        free(q0); free(a); free(b); free(dq); free(step);
        mbs_vi_free(w);
        mbs_data_free(d);
        mbs_model_free(m);
    }
}

/* The chord step: after an update that contracts the residual 4x, tree Newton keeps its factors,
 * so its second update is -A(q0)⁻¹ f(q1) with the Jacobian of the first iterate q0 (a full
 * Newton step would use A(q1), which differs here by about 1 % of the step). Reference: the
 * dense Jacobian of Algorithm 4 at q0 and LAPACK. */
static void test_tree_newton_chord(void)
{
    mbs_model *m = tm_random_tree(10, 1, 58);
    int nq = mbs_model_nq(m), nv = mbs_model_nv(m);
    mbs_data *d = mbs_data_new(m);
    mbs_vi *w = mbs_vi_new(m, NULL);
    double *q0 = calloc((size_t)nq, 8), *q1 = calloc((size_t)nq, 8), *q2 = calloc((size_t)nq, 8);
    double *ref = calloc((size_t)nq, 8), *dq = calloc((size_t)nv, 8), *e = calloc((size_t)nv, 8);
    double *J = calloc((size_t)nv * nv, 8);
    int *ipiv = calloc((size_t)nv, sizeof(int));
    mbs_vi_options o;
    off_root_guess(m, w, 91, 1, 0.01, 1, q0, &o);
    o.solver = MBS_VI_TREE_NEWTON;
    mbs_vi_result r;
    memcpy(q1, q0, sizeof(double) * (size_t)nq);
    CHECK(mbs_vi_solve(m, d, w, &o, q1, &r) == MBS_OK, "one tree-Newton update failed");
    memcpy(q2, q0, sizeof(double) * (size_t)nq);
    o.max_iter = 2;
    CHECK(mbs_vi_solve(m, d, w, &o, q2, &r) == MBS_OK, "two tree-Newton updates failed");
    CHECK(r.iterations == 2 && r.jacobians == 1, "%d iterations, %d factorisations: the chord was not taken",
          r.iterations, r.jacobians);
    mbs_vi_jacobian(m, w, q0, e, J, nv);
    mbs_vi_residual(m, w, q1, e);
    for (int k = 0; k < nv; k++) dq[k] = -e[k];
    CHECK(LAPACKE_dgesv(LAPACK_COL_MAJOR, nv, 1, J, nv, ipiv, dq, nv) == 0, "dense solve failed");
    mbs_integrate(m, q1, dq, ref);
    double *gap = e;
    mbs_difference(m, ref, q2, gap);
    CHECK(norm2(gap, nv) < 1e-6 * norm2(dq, nv), "chord step differs from -A(q0)⁻¹ f(q1) by %.3e of %.3e",
          norm2(gap, nv), norm2(dq, nv));
    free(q0); free(q1); free(q2); free(ref); free(dq); free(e); free(J); free(ipiv);
    mbs_vi_free(w);
    mbs_data_free(d);
    mbs_model_free(m);
}

/* A pivot block at round-off is reported, not inverted into noise: B = 0 makes every D_i zero,
 * while B = 1e-300 · 1 (tiny but regular) factors — the test is relative to D's own scale. */
static void test_tree_singular_block(void)
{
    mbs_model *m = tm_random_tree(6, 1, 57);
    int nb = mbs_model_nbodies(m), nv = mbs_model_nv(m);
    double *B = calloc(36 * (size_t)nb, 8), *R = calloc(9 * (size_t)nb, 8), *p = calloc(3 * (size_t)nb, 8);
    for (int i = 0; i < nb; i++) R[9 * i] = R[9 * i + 4] = R[9 * i + 8] = 1;
    mbs_del_tree t = {calloc(36 * (size_t)nb, 8), calloc(36 * (size_t)nb, 8), calloc(6 * (size_t)nv, 8),
                  calloc(6 * (size_t)nv, 8), calloc(6 * (size_t)nb, 8), calloc((size_t)nv, 8)};
    CHECK(mbsi_del_tree_factor(m, &t, B, R, p, R, p, NULL) == 1, "a zero B factored");
    for (int i = 0; i < nb; i++)
        for (int k = 0; k < 6; k++) B[36 * i + 7 * k] = 1e-300;
    CHECK(mbsi_del_tree_factor(m, &t, B, R, p, R, p, NULL) == 0, "B = 1e-300 · 1 was called singular");
    free(t.IA); free(t.Dinv); free(t.U); free(t.W); free(t.p); free(t.u);
    free(B); free(R); free(p);
    mbs_model_free(m);
}

/* ------------------------------------------------------------------ the stepper */

typedef struct run {
    mbs_model *m;
    mbs_system *s;
    mbs_stepper *st;
} run;

static int run_open(run *r, mbs_model *m, const char *stepper, const mbs_option *opts, int nopts, unsigned long long seed)
{
    mbs_error err;
    r->m = m;
    r->s = mbs_system_new(m, 0, &err);
    random_state(m, seed, r->s->q, r->s->v);
    mbs_system_finalize(r->s, NULL);
    r->st = mbs_stepper_new(stepper, r->s, opts, nopts, &err);
    CHECK(r->st != NULL, "%s: %s", stepper, err.msg);
    return r->st != NULL;
}

static void run_close(run *r)
{
    mbs_stepper_free(r->st);
    mbs_system_free(r->s);
}

/* The trajectory the stepper produced is a root of DRNEA at every step (the first step's
 * root is that of the velocity start). */
static void test_residual_zero_on_trajectory(void)
{
    mbs_model *m = tm_random_tree(7, 1, 51);
    int nq = mbs_model_nq(m), nv = mbs_model_nv(m);
    const mbs_option opts[] = {MBS_OPTION("tol", 1e-12), MBS_OPTION("max_iter", 50)};
    run r;
    if (!run_open(&r, m, "variational", opts, 2, 3)) { mbs_model_free(m); return; }
    for (int k = 0; k < nv; k++) r.s->tau[k] = 0.1 * (k % 3) - 0.1;
    enum { N = 40 };
    double *traj = calloc((size_t)nq * (N + 1), 8), *res = calloc((size_t)nv, 8);
    mbs_vi *w = mbs_vi_new(m, NULL);
    memcpy(traj, r.s->q, sizeof(double) * (size_t)nq);
    int nonconverged = 0;
    for (int k = 0; k < N; k++) {
        mbs_step_stats st;
        CHECK(mbs_stepper_step(r.st, 1e-3, &st) == MBS_OK, "step failed");
        nonconverged += st.nonconverged;
        memcpy(traj + (size_t)nq * (k + 1), r.s->q, sizeof(double) * (size_t)nq);
    }
    CHECK(nonconverged == 0, "%d steps did not converge", nonconverged);
    double worst = 0;
    for (int k = 1; k < N; k++) {
        mbs_drnea(m, w, 1e-3, traj + (size_t)nq * (k - 1), traj + (size_t)nq * k, traj + (size_t)nq * (k + 1),
                  r.s->tau, NULL, res);
        worst = check_worst(worst, norm2(res, nv));
    }
    CHECK(worst < 2e-12, "DRNEA residual on the stepper's trajectory: %.3e", worst);
    /* and a perturbed trajectory is not a root */
    traj[(size_t)nq * 20 + nq - 1] += 1e-6;
    mbs_drnea(m, w, 1e-3, traj + (size_t)nq * 19, traj + (size_t)nq * 20, traj + (size_t)nq * 21, r.s->tau, NULL, res);
    CHECK(norm2(res, nv) > 1e-6, "a perturbed trajectory still has a zero residual (%.3e)", norm2(res, nv));
    free(traj); free(res);
    mbs_vi_free(w);
    run_close(&r);
    mbs_model_free(m);
}

/* Energy on the 10-link pendulum (fig. 2): the variational integrator's energy oscillates about a
 * constant — the fitted trend over the run is far below its oscillation of a few hundredths of a
 * joule — while semi-implicit Euler's wanders by joules with a trend of more than 50 times that
 * oscillation. 2·10⁴ steps of 1 ms (the bench runs 10⁵).
 * Both schemes move q by Δt times the velocity they output, so that velocity lives at the middle
 * of the step: the energy is taken there, at (q^{k+½}, v). At (q^{k+1}, v) it would carry an O(Δt)
 * oscillation (±14 J here, in the whip-like moments of the chain) that hides the trend. */
static void test_energy_chain10(void)
{
    enum { N = 20000 };
    double *E = malloc(sizeof(double) * N), qprev[10], qmid[10];
    double slope[2], spread[2], drift[2];
    const char *names[2] = {"variational", "symplectic_euler"};
    for (int s = 0; s < 2; s++) {
        mbs_model *m = pendulum(10);
        run r;
        if (!run_open(&r, m, names[s], NULL, 0, 2016)) { mbs_model_free(m); free(E); return; }
        int nonconverged = 0;
        for (int k = 0; k < N; k++) {
            mbs_step_stats st;
            memcpy(qprev, r.s->q, sizeof qprev);
            mbs_stepper_step(r.st, 1e-3, &st);
            nonconverged += st.nonconverged;
            mbs_interpolate(m, qprev, r.s->q, 0.5, qmid);
            E[k] = energy(m, r.s->data, qmid, r.s->v);
        }
        CHECK(nonconverged == 0, "%s: %d steps did not converge", names[s], nonconverged);
        fit_line(E, N, &slope[s], &spread[s]);
        drift[s] = fabs(slope[s]) * N;
        run_close(&r);
        mbs_model_free(m);
    }
    CHECK(drift[0] < 0.05 * spread[0] && spread[0] < 0.5,
          "variational: energy trend %.3e J over the run, oscillation %.3e J", drift[0], spread[0]);
    CHECK(drift[1] > 50 * spread[0] && drift[1] > 1000 * drift[0],
          "symplectic_euler: energy trend %.3e J (oscillation %.3e J) against the variational integrator's trend %.3e J "
          "and oscillation %.3e J", drift[1], spread[1], drift[0], spread[0]);
    free(E);
}

/* urdf/chain10.urdf (what scenarios/chain10.ini runs) is the pendulum the bench builds in code —
 * same inverse dynamics at a random state — and the scenario runs. */
static void test_chain10_urdf(void)
{
    mbs_error err;
    mbs_model *a = mbs_model_from_urdf(tm_path("urdf/chain10.urdf"), &(mbs_urdf_options){.floating_base = 0}, &err), *b = pendulum(10);
    CHECK(a != NULL, "chain10.urdf: %s", err.msg);
    if (!a) { mbs_model_free(b); return; }
    CHECK(mbs_model_nv(a) == 10 && mbs_model_nq(a) == 10, "chain10.urdf has nv = %d", mbs_model_nv(a));
    mbs_data *da = mbs_data_new(a), *db = mbs_data_new(b);
    double q[10], v[10], acc[10], ta[10], tb[10];
    random_state(b, 3, q, v);
    for (int k = 0; k < 10; k++) acc[k] = sin(k + 1.0);
    mbs_rnea(a, da, q, v, acc, ta);
    mbs_rnea(b, db, q, v, acc, tb);
    CHECK_CLOSE(ta, tb, 10, 1e-12, "rnea of chain10.urdf vs the bench's pendulum");
    mbs_data_free(da);
    mbs_data_free(db);
    mbs_model_free(a);
    mbs_model_free(b);
    /* and the scenario runs: 2 s of it */
    const char *over[] = {"run.duration=2"};
    mbs_scenario *sc = mbs_scenario_load(tm_path("scenarios/chain10.ini"), over, 1, &err);
    CHECK(sc != NULL, "chain10.ini: %s", err.msg);
    mbs_sim *sim = sc ? mbs_sim_new(sc, &err) : NULL;
    CHECK(!sc || sim != NULL, "chain10.ini: %s", err.msg);
    if (sim) {
        mbs_sim_run_options ro = {.csv = ""};
        mbs_sim_summary sum;
        CHECK(mbs_sim_run(sim, &ro, &sum, &err) == MBS_OK, "chain10.ini: %s", err.msg);
        CHECK(!sum.diverged && sum.nonconverged == 0 && sum.steps == 2000 && strcmp(sum.stepper, "variational") == 0,
              "chain10.ini: %s after %ld steps, %ld nonconverged", sum.diverged ? sum.reason : "stable", sum.steps,
              sum.nonconverged);
    }
    mbs_sim_free(sim);
    mbs_scenario_free(sc);
}

/* A free-floating chain without gravity keeps its discrete momentum (discrete Noether) at every
 * step of the stepper's trajectory, to the rounding of q. */
static void test_momentum_free_chain(void)
{
    mbs_chain_options o = {0.3, 1.0, 1, 1, NULL, 0, 0, 0};
    mbs_model *m = mbs_model_chain(6, &o, NULL);
    double g0[3] = {0, 0, 0};
    mbs_model_set_gravity(m, g0);
    int nq = mbs_model_nq(m), nv = mbs_model_nv(m);
    /* solved to the rounding floor: a tolerance's residual would add up step after step */
    const mbs_option opts[] = {MBS_OPTION("tol", 1e-300), MBS_OPTION("max_iter", 50)};
    run r;
    if (!run_open(&r, m, "variational", opts, 2, 77)) { mbs_model_free(m); return; }
    /* spinning in place: the centre of mass at rest (the base is at the identity, so its linear
     * velocity shifts every body's), so that positions stay small and so does their rounding */
    double com[3], vcom[3];
    mbs_neutral(m, r.s->q);
    for (int k = 0; k < nv; k++) r.s->v[k] *= 2;
    mbs_center_of_mass(m, r.s->data, r.s->q, r.s->v, com, vcom);
    for (int k = 0; k < 3; k++) r.s->v[k] -= vcom[k];
    mbs_vi *w = mbs_vi_new(m, NULL);
    double *qa = calloc((size_t)nq, 8), *qb = calloc((size_t)nq, 8), p0[6], p[6], worst = 0, size = 0;
    enum { N = 2000 };
    memcpy(qa, r.s->q, sizeof(double) * (size_t)nq);
    mbs_stepper_step(r.st, 1e-3, NULL);
    memcpy(qb, r.s->q, sizeof(double) * (size_t)nq);
    for (int k = 1; k < N; k++) {
        mbs_stepper_step(r.st, 1e-3, NULL);
        /* the momentum over [t_k, t_k+1] from (q^{k-1}, q^k, q^{k+1}) */
        mbs_vi_begin(m, w, 1e-3, 1e-3, qa, qb, NULL, NULL);
        mbs_vi_momentum(m, w, r.s->q, k == 1 ? p0 : p);
        if (k > 1) worst = check_worst(worst, max_abs_diff(p, p0, 6));
        memcpy(qa, qb, sizeof(double) * (size_t)nq);
        memcpy(qb, r.s->q, sizeof(double) * (size_t)nq);
    }
    for (int k = 0; k < 6; k++) size = fmax(size, fabs(p0[k]));
    CHECK(size > 0.1, "the chain does not move (momentum %.3e)", size);
    /* exact up to rounding: q^{k+1} is only known to its last bit, so each step leaves a residual
     * of ~ M ε |q| / Δt (~1e-13 N·s here) in the base's momentum balance */
    CHECK(worst < 2e-9 * size, "discrete momentum changed by %.3e (size %.3e) over %d steps", worst, size, N);
    CHECK(max_abs_diff(p0, (double[3]){0, 0, 0}, 3) < 1e-12 * size, "the linear momentum %.3e %.3e %.3e is not zero",
          p0[0], p0[1], p0[2]);
    free(qa); free(qb);
    mbs_vi_free(w);
    run_close(&r);
    mbs_model_free(m);
}

/* Second order in q against a fine rk4 solution on a 3-D chain under gravity. */
static void test_second_order(void)
{
    mbs_model *m = mbs_model_chain(4, NULL, NULL);
    int nq = mbs_model_nq(m), nv = mbs_model_nv(m);
    double *qr = calloc((size_t)nq, 8), err[2], dq[16];
    const double T = 0.2;
    run r;
    if (!run_open(&r, m, "rk4", NULL, 0, 4)) { mbs_model_free(m); return; }
    for (int k = 0; k < 20000; k++) mbs_stepper_step(r.st, T / 20000, NULL);
    memcpy(qr, r.s->q, sizeof(double) * (size_t)nq);
    run_close(&r);
    const mbs_option opts[] = {MBS_OPTION("tol", 1e-13)};
    for (int h = 0; h < 2; h++) {
        int n = h ? 200 : 100;
        if (!run_open(&r, m, "variational", opts, 1, 4)) break;
        for (int k = 0; k < n; k++) mbs_stepper_step(r.st, T / n, NULL);
        mbs_difference(m, qr, r.s->q, dq);
        err[h] = norm2(dq, nv);
        run_close(&r);
    }
    double p = log2(err[0] / err[1]);
    CHECK(fabs(p - 2) < 0.3, "variational: observed order %.2f in q (errors %.3e, %.3e), expected 2", p, err[0], err[1]);
    free(qr);
    mbs_model_free(m);
}

/* Options, statistics, restarts and bad input. */
static void test_stepper_interface(void)
{
    mbs_model *m = pendulum(5);
    mbs_error err;
    mbs_system *s = mbs_system_new(m, 0, &err);
    const mbs_option bad[][1] = {{MBS_OPTION_WORD("solver", "gauss")}, {MBS_OPTION_WORD("guess", "ig4")}, {MBS_OPTION("tol", -1)}, {MBS_OPTION("max_iter", 0)},
                                 {MBS_OPTION("tolerance", 1)}};
    for (unsigned k = 0; k < sizeof bad / sizeof *bad; k++) {
        mbs_system_finalize(s, NULL);
        mbs_stepper *st = mbs_stepper_new("variational", s, bad[k], 1, &err);
        CHECK(st == NULL, "option %s = %g accepted", bad[k][0].key, bad[k][0].value);
        CHECK(st != NULL || (strstr(err.msg, bad[k][0].key) && strstr(err.msg, "variational")),
              "error does not name the option: %s", err.msg);
        mbs_stepper_free(st);
    }
    const char *solvers[3] = {"riqn", "newton", "broyden"}, *guesses[3] = {"ig1", "ig2", "ig3"};
    double qref[5] = {0};
    for (int a = 0; a < 3; a++)
        for (int g = 0; g < 3; g++) {
            random_state(m, 1, s->q, s->v);
            const mbs_option o[] = {tm_opt("solver", solvers[a]), tm_opt("guess", guesses[g]), MBS_OPTION("tol", 1e-12), MBS_OPTION("max_iter", 40)};
            mbs_system_finalize(s, NULL);
            mbs_stepper *st = mbs_stepper_new("variational", s, o, 4, &err);
            CHECK(st != NULL, "%s/%s: %s", solvers[a], guesses[g], err.msg);
            if (!st) continue;
            mbs_step_stats stats;
            for (int k = 0; k < 50; k++) {
                CHECK(mbs_stepper_step(st, 1e-3, &stats) == MBS_OK, "step failed");
                CHECK(!stats.nonconverged && stats.iterations >= 1 && stats.residual <= 1e-10,
                      "%s/%s: stats %d iterations, residual %.3e", solvers[a], guesses[g], stats.iterations,
                      stats.residual);
            }
            if (a == 0 && g == 0) memcpy(qref, s->q, sizeof qref);
            CHECK(max_abs_diff(qref, s->q, 5) < 1e-10, "%s/%s ends elsewhere", solvers[a], guesses[g]);
            mbs_stepper_free(st);
        }
    /* non-convergence is reported, not hidden */
    {
        const mbs_option o[] = {MBS_OPTION("tol", 1e-14), MBS_OPTION("max_iter", 1)};
        random_state(m, 1, s->q, s->v);
        mbs_system_finalize(s, NULL);
        mbs_stepper *st = mbs_stepper_new("variational", s, o, 2, &err);
        mbs_step_stats stats;
        mbs_stepper_step(st, 1e-3, &stats);
        CHECK(stats.nonconverged == 1 && stats.iterations == 1, "nonconvergence not reported (%d, %d iterations)",
              stats.nonconverged, stats.iterations);
        CHECK(mbs_stepper_step(st, -1e-3, &stats) != MBS_OK, "a negative step was accepted");
        mbs_stepper_free(st);
    }
    /* the velocity is the average over the last step, and a caller's change of (q, v) restarts
     * from the new state exactly as a fresh stepper would */
    {
        random_state(m, 1, s->q, s->v);
        mbs_system_finalize(s, NULL);
        mbs_stepper *st = mbs_stepper_new("variational", s, NULL, 0, &err);
        double q0[5], v[5], q1[5], q2[5];
        memcpy(q0, s->q, sizeof q0);
        mbs_stepper_step(st, 1e-3, NULL);
        mbs_difference(m, q0, s->q, v);
        for (int k = 0; k < 5; k++) v[k] /= 1e-3;
        CHECK(max_abs_diff(v, s->v, 5) < 1e-12, "v is not (q1 ⊖ q0)/Δt");
        const double half[5] = {0.5, 0.5, 0.5, 0.5, 0.5};
        memcpy(q1, s->q, sizeof q1);
        mbs_system_set_state(s, q1, half, s->t);
        mbs_stepper_step(st, 1e-3, NULL);
        memcpy(q2, s->q, sizeof q2);
        mbs_system_finalize(s, NULL);
        mbs_stepper *fresh = mbs_stepper_new("variational", s, NULL, 0, &err);
        mbs_system_set_state(s, q1, half, s->t);
        mbs_stepper_step(fresh, 1e-3, NULL);
        CHECK(max_abs_diff(q2, s->q, 5) < 1e-14, "a restart differs from a fresh start");
        /* a change of step is a variable-step DEL step, not a restart: still close to the fixed step */
        mbs_stepper_step(fresh, 5e-4, NULL);
        mbs_stepper_step(fresh, 5e-4, NULL);
        CHECK(isfinite(s->q[0]) && isfinite(s->v[0]), "variable steps diverge");
        mbs_stepper_free(fresh);
        mbs_stepper_free(st);
    }
    /* bad input to the workspace */
    mbs_vi *w = mbs_vi_new(m, NULL);
    double q[5] = {0}, v[5] = {0};
    CHECK(mbs_vi_begin_velocity(m, w, 0, q, v, NULL, NULL) == MBS_ERR_ARG, "Δt = 0 accepted");
    CHECK(mbs_vi_begin(m, w, -1, 1e-3, q, q, NULL, NULL) == MBS_ERR_ARG, "Δt_prev < 0 accepted");
    /* the velocity estimate IG2 and IG3 start from */
    double qp[5] = {0.1, -0.2, 0.3, 0.05, 0}, vk[5];
    mbs_vi_begin(m, w, 2e-3, 1e-3, qp, q, NULL, NULL);
    mbs_difference(m, qp, q, vk);
    for (int k = 0; k < 5; k++) vk[k] /= 2e-3;
    CHECK(max_abs_diff(mbs_vi_velocity(w), vk, 5) < 1e-15, "mbs_vi_velocity is not (q ⊖ q_prev)/Δt_prev");
    mbs_vi_options o;
    mbs_vi_default_options(&o);
    o.max_iter = -1;
    mbs_vi_begin_velocity(m, w, 1e-3, q, v, NULL, NULL);
    CHECK(mbs_vi_solve(m, s->data, w, &o, q, NULL) == MBS_ERR_ARG, "max_iter < 0 accepted");
    CHECK(mbs_vi_new(NULL, &err) == NULL && err.code == MBS_ERR_ARG, "mbs_vi_new(NULL) accepted");
    mbs_vi_free(w);
    mbs_system_free(s);
    mbs_model_free(m);
}

/* Beyond the paper's chains: Solo dropped 5 cm onto the ground on the contact module's
 * spring-dampers (forces as external impulses, eq. 17) comes to rest standing. The contact
 * forces are explicit, so the step is the 0.1 ms that explicit schemes need with these
 * contacts (at 1 ms symplectic_euler and this stepper both bounce away). */
static void test_solo_drop(void)
{
    mbs_model *m = mbs_model_from_urdf(tm_path("urdf/solo12.urdf"), NULL, NULL);
    CHECK(m != NULL, "cannot load solo12");
    if (!m) return;
    mbs_error err;
    mbs_system *s = tm_solo_standing(m, 0.05, 1e5, 300, 1);
    /* joints held by PD torques about the posture, as a controller would */
    mbs_system_finalize(s, NULL);
    mbs_stepper *st = mbs_stepper_new("variational", s, NULL, 0, &err);
    CHECK(st != NULL, "%s", err.msg);
    int nonconverged = 0, touched = 0;
    double zmin = 1;
    for (int k = 0; k < 15000 && st; k++) {
        tm_solo_hold(m, s, 5.0, 0.1);
        mbs_step_stats stats;
        if (mbs_stepper_step(st, 1e-4, &stats) != MBS_OK) { CHECK(0, "step %d failed", k); break; }
        nonconverged += stats.nonconverged;
        for (int c = 0; c < 4; c++) touched |= s->contacts[c].active;
        zmin = fmin(zmin, s->q[2]);
    }
    CHECK(nonconverged == 0, "%d steps did not converge", nonconverged);
    CHECK(touched, "the feet never touched the ground");
    double speed = norm2(s->v, 18);
    CHECK(speed < 0.01, "Solo is still moving after 1.5 s: |v| = %.3g", speed);
    CHECK(s->q[2] > 0.15 && s->q[2] < 0.235 && zmin > 0.1, "base height %.3f (lowest %.3f): not standing", s->q[2],
          zmin);
    mbs_stepper_free(st);
    mbs_system_free(s);
    mbs_model_free(m);
}

int main(void)
{
    RUN(test_dlog_dexp_series);
    RUN(test_drnea_vs_rnea);
    RUN(test_jacobian_fd);
    RUN(test_solvers_same_root);
    RUN(test_tree_newton_step);
    RUN(test_tree_newton_chord);
    RUN(test_tree_singular_block);
    RUN(test_residual_zero_on_trajectory);
    RUN(test_energy_chain10);
    RUN(test_chain10_urdf);
    RUN(test_momentum_free_chain);
    RUN(test_second_order);
    RUN(test_stepper_interface);
    RUN(test_solo_drop);
    return check_summary("test_variational");
}
