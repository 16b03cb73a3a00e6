/* test_svi.c — the SVI baseline of bench_variational (tools/bench/svi.c: Johnson and Murphey's scalable
 * variational integrator, midpoint discrete Lagrangian in generalized coordinates, Newton with the
 * exact Jacobian): its Lagrangian and derivatives against the engine's energies, mass matrix, RNEA
 * and finite differences; (1) the residual against the finite-difference derivative of the discrete
 * action; (2) the Newton Jacobian against finite differences of the residual; (3) bounded energy
 * over a long run of the 10-link pendulum under gravity; (4) second order, against RK4 and against
 * the engine's variational integrator (DRNEA); Newton and RIQN on the same root; no allocation
 * after svi_new; bad input. On the paper's pendulum (the model of bench_variational) and on a
 * branching tree with oblique, offset and prismatic joints. */
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "alloc_count.h"
#include "check.h"
#include "mbs.h"
#include "testmodels.h"
/* white-box: reads and sets the system's and contacts' fields directly */
#include "../src/contact/contact_internal.h"
#include "../tools/bench/svi.h"

#define PI 3.14159265358979323846

/* The paper's N-link roll pendulum, as bench_variational builds it: 1 kg links with 1 kg m² about
 * their centre, 0.75 m along the link, joints 1.5 m apart, rolling about x. */
static mbs_model *pendulum(int n, int gravity)
{
    static const double In[9] = {1, 0, 0, 0, 1, 0, 0, 0, 1};
    const mbs_chain_options opt = {1.5, 1.0, 0, 0, In, 1, 1, 0};
    mbs_model *m = mbs_model_chain(n, &opt, NULL);
    if (m && !gravity) {
        const double g0[3] = {0, 0, 0};
        mbs_model_set_gravity(m, g0);
    }
    return m;
}

/* A branching tree of 1-dof joints: parents {-1, 0, 1, 0, 3, 3, 5, 2} (bodies 0 and 3 have two
 * children each), random placements and rotations, aligned and oblique revolute axes, two
 * prismatic joints, random inertias with offset centres of mass. */
static mbs_model *branching_tree(unsigned long long seed)
{
    static const int parent[8] = {-1, 0, 1, 0, 3, 3, 5, 2};
    static const int prismatic[8] = {0, 0, 1, 0, 0, 0, 1, 0};
    unsigned long long s = seed;
    mbs_model *m = mbs_model_new("svi_tree");
    for (int i = 0; i < 8; i++) {
        double R[9], p[3], axis[3], n = 0;
        tm_random_rotation(&s, R);
        for (int k = 0; k < 3; k++) { p[k] = tm_uniform(&s, -0.6, 0.6); axis[k] = tm_uniform(&s, -1, 1); n += axis[k] * axis[k]; }
        for (int k = 0; k < 3; k++) axis[k] /= sqrt(n);
        if (i % 3 == 1) { axis[0] = axis[1] = axis[2] = 0; axis[i % 3] = 1; }
        char name[32];
        snprintf(name, sizeof name, "joint%d", i);
        int b = mbs_model_add_joint(m, parent[i], prismatic[i] ? MBS_JOINT_PRISMATIC : MBS_JOINT_REVOLUTE, name, R, p,
                                    axis, NULL);
        tm_random_inertia(m, b, &s, 0.4, 0.1);
    }
    if (mbs_model_finalize(m, NULL)) { mbs_model_free(m); return NULL; }
    return m;
}

static void random_qv(int n, unsigned long long *s, double *q, double *v)
{
    for (int k = 0; k < n; k++) {
        q[k] = tm_uniform(s, -PI / 2, PI / 2);
        v[k] = tm_uniform(s, -PI / 2, PI / 2);
    }
}

static double max_abs(const double *x, int n)
{
    double a = 0;
    for (int k = 0; k < n; k++) a = fmax(a, fabs(x[k]));
    return a;
}

/* max |a - b| / max(1, max |b|): the error relative to the size of the whole vector or matrix */
static double rel_error(const double *a, const double *b, int n)
{
    double e = 0;
    for (int k = 0; k < n; k++) e = fmax(e, fabs(a[k] - b[k]));
    return e / fmax(1, max_abs(b, n));
}

/* ------------------------------------------------------------------ the Lagrangian */

/* L, ∂L/∂q̇ and ∂L/∂q against the engine's energies, CRBA, ∂T/∂q and gravity torques; then every
 * first and second derivative against central differences. */
static void lagrangian_case(mbs_model *m, unsigned long long seed, const char *what)
{
    const int n = mbs_model_nv(m);
    mbs_data *d = mbs_data_new(m);
    svi *s = svi_new(m, NULL);
    CHECK(s != NULL, "%s: svi_new", what);
    if (!s) { mbs_data_free(d); return; }
    double *q = calloc((size_t)n, sizeof(double)), *v = calloc((size_t)n, sizeof(double));
    double *Lq = calloc((size_t)n, sizeof(double)), *Lv = calloc((size_t)n, sizeof(double));
    double *ref = calloc((size_t)n, sizeof(double)), *t = calloc((size_t)n, sizeof(double));
    double *a = calloc((size_t)n, sizeof(double)), *b = calloc((size_t)n, sizeof(double));
    double *q2 = calloc((size_t)n, sizeof(double)), *v2 = calloc((size_t)n, sizeof(double));
    size_t nn = (size_t)n * n;
    double *M = calloc(nn, sizeof(double)), *Lqq = calloc(nn, sizeof(double)), *Lqv = calloc(nn, sizeof(double));
    double *Lvv = calloc(nn, sizeof(double)), *fd = calloc(nn, sizeof(double));
    unsigned long long rs = seed;
    for (int trial = 0; trial < 3; trial++) {
        random_qv(n, &rs, q, v);
        double L = svi_lagrangian_derivatives(s, q, v, Lq, Lv, Lqq, Lqv, Lvv);
        double Le = mbs_kinetic_energy(m, d, q, v) - mbs_potential_energy(m, d, q);
        CHECK(fabs(L - Le) <= 1e-12 * fmax(1, fabs(Le)), "%s: L = %.15g, engine T - V = %.15g", what, L, Le);
        /* ∂L/∂q̇ = M(q) q̇ */
        mbs_crba(m, d, q, M);
        for (int i = 0; i < n; i++) {
            ref[i] = 0;
            for (int j = 0; j < n; j++) ref[i] += M[i + (size_t)n * j] * v[j];
        }
        CHECK(rel_error(Lv, ref, n) <= 1e-12, "%s: dL/dqdot against M v: %.3e", what, rel_error(Lv, ref, n));
        CHECK(rel_error(Lvv, M, (int)nn) <= 1e-12, "%s: d2L/dqdot2 against M: %.3e", what, rel_error(Lvv, M, (int)nn));
        /* ∂L/∂q = ∂T/∂q - g(q) */
        mbs_kinetic_energy_dq(m, d, q, v, ref);
        mbs_gravity(m, d, q, t);
        for (int i = 0; i < n; i++) ref[i] -= t[i];
        CHECK(rel_error(Lq, ref, n) <= 1e-12, "%s: dL/dq against the engine's dT/dq - g: %.3e", what, rel_error(Lq, ref, n));
        /* central differences, h = 1e-6 */
        const double h = 1e-6;
        /* x = 0: perturb q (∂L/∂q and ∂Lq/∂q = Lqq); x = 1: perturb q̇ (∂L/∂q̇ and ∂Lq/∂q̇ = Lqv) */
        for (int x = 0; x < 2; x++) {
            const double *g = x ? Lv : Lq, *H = x ? Lqv : Lqq;
            const char *wrt = x ? "qdot" : "q";
            for (int j = 0; j < n; j++) {
                memcpy(q2, q, sizeof(double) * (size_t)n);
                memcpy(v2, v, sizeof(double) * (size_t)n);
                double *y = x ? v2 : q2, y0 = y[j];
                y[j] = y0 + h;
                double Lp = svi_lagrangian_derivatives(s, q2, v2, a, b, NULL, NULL, NULL);
                y[j] = y0 - h;
                double Lm = svi_lagrangian_derivatives(s, q2, v2, t, ref, NULL, NULL, NULL);
                CHECK(fabs((Lp - Lm) / (2 * h) - g[j]) <= 1e-7 * fmax(1, max_abs(g, n)), "%s: dL/d%s[%d] %.10g vs fd %.10g",
                      what, wrt, j, g[j], (Lp - Lm) / (2 * h));
                for (int i = 0; i < n; i++) fd[i + (size_t)n * j] = (a[i] - t[i]) / (2 * h);   /* ∂Lq_i/∂y_j */
            }
            CHECK(rel_error(H, fd, (int)nn) <= 1e-7, "%s: d(dL/dq)/d%s against fd: %.3e", what, wrt, rel_error(H, fd, (int)nn));
        }
    }
    free(q); free(v); free(Lq); free(Lv); free(ref); free(t); free(a); free(b); free(q2); free(v2);
    free(M); free(Lqq); free(Lqv); free(Lvv); free(fd);
    svi_free(s);
    mbs_data_free(d);
}

static void test_lagrangian(void)
{
    mbs_model *m = pendulum(10, 1);
    lagrangian_case(m, 17, "pendulum(10)");
    mbs_model_free(m);
    m = pendulum(12, 0);   /* without gravity the frames' world derivatives are skipped */
    lagrangian_case(m, 19, "pendulum(12) without gravity");
    mbs_model_free(m);
    m = branching_tree(5);
    CHECK(m != NULL, "branching tree");
    if (m) lagrangian_case(m, 29, "branching tree");
    mbs_model_free(m);
}

/* ------------------------------------------------------------------ (1) and (2) */

/* (1) f(q^{k+1}) after svi_begin(q^{k-1}, q^k) is ∂/∂q^k of Ld(q^{k-1}, q^k) + Ld(q^k, q^{k+1});
 * (2) its Jacobian is ∂f/∂q^{k+1}, both by central differences, at a 1 ms and a 50 ms step (at
 * 1 ms the Δt/4 ∂²L/∂q² term of the Jacobian is below the differences' resolution). */
static void del_case(mbs_model *m, unsigned long long seed, const char *what)
{
    const int n = mbs_model_nv(m);
    svi *s = svi_new(m, NULL);
    CHECK(s != NULL, "%s: svi_new", what);
    if (!s) return;
    double *q0 = calloc((size_t)n, sizeof(double)), *q1 = calloc((size_t)n, sizeof(double));
    double *q2 = calloc((size_t)n, sizeof(double)), *v = calloc((size_t)n, sizeof(double));
    double *f = calloc((size_t)n, sizeof(double)), *fd = calloc((size_t)n, sizeof(double));
    double *x = calloc((size_t)n, sizeof(double)), *fp = calloc((size_t)n, sizeof(double));
    double *fm = calloc((size_t)n, sizeof(double));
    double *J = calloc((size_t)n * n, sizeof(double)), *Jfd = calloc((size_t)n * n, sizeof(double));
    static const double dts[2] = {1e-3, 5e-2};
    unsigned long long rs = seed;
    for (int c = 0; c < 2; c++) {
        const double dt = dts[c];
        random_qv(n, &rs, q1, v);
        for (int k = 0; k < n; k++) {
            q0[k] = q1[k] - dt * v[k] + dt * dt * tm_uniform(&rs, -1, 1);
            q2[k] = q1[k] + dt * v[k] + dt * dt * tm_uniform(&rs, -1, 1);
        }
        CHECK(svi_begin(s, dt, q0, q1) == MBS_OK, "%s: begin", what);
        svi_residual(s, q2, f);
        /* the discrete action's derivative in q^k; h scaled so that the differences of Ld ~ Δt L resolve */
        const double h = 1e-5;
        for (int j = 0; j < n; j++) {
            memcpy(x, q1, sizeof(double) * (size_t)n);
            x[j] = q1[j] + h;
            double Sp = svi_discrete_lagrangian(s, dt, q0, x) + svi_discrete_lagrangian(s, dt, x, q2);
            x[j] = q1[j] - h;
            double Sm = svi_discrete_lagrangian(s, dt, q0, x) + svi_discrete_lagrangian(s, dt, x, q2);
            fd[j] = (Sp - Sm) / (2 * h);
        }
        double e1 = rel_error(f, fd, n);
        CHECK(e1 <= 1e-6, "%s, dt %g: residual against d/dq^k of the discrete action: %.3e (|f| %.3g)", what, dt, e1,
              max_abs(f, n));
        CHECK(max_abs(f, n) > 1e-3, "%s: a residual far from zero, so that the check means something", what);
        /* (2) the Jacobian */
        CHECK(svi_begin(s, dt, q0, q1) == MBS_OK, "%s: begin", what);
        svi_jacobian(s, q2, fp, J, n);
        CHECK(rel_error(fp, f, n) <= 1e-15, "%s: svi_jacobian's residual is svi_residual's", what);
        const double hq = 1e-7;
        for (int j = 0; j < n; j++) {
            memcpy(x, q2, sizeof(double) * (size_t)n);
            x[j] = q2[j] + hq;
            svi_residual(s, x, fp);
            x[j] = q2[j] - hq;
            svi_residual(s, x, fm);
            for (int i = 0; i < n; i++) Jfd[i + (size_t)n * j] = (fp[i] - fm[i]) / (2 * hq);
        }
        double e2 = rel_error(J, Jfd, n * n);
        CHECK(e2 <= 1e-7, "%s, dt %g: Jacobian against differences of the residual: %.3e", what, dt, e2);
        printf("  %s, dt %g: residual vs d(action)/dq %.1e, Jacobian vs fd %.1e (relative to their largest entry)\n", what, dt,
               e1, e2);
    }
    free(q0); free(q1); free(q2); free(v); free(f); free(fd); free(x); free(fp); free(fm); free(J); free(Jfd);
    svi_free(s);
}

static void test_del(void)
{
    mbs_model *m = pendulum(10, 1);
    del_case(m, 3, "pendulum(10)");
    mbs_model_free(m);
    m = pendulum(12, 0);
    del_case(m, 13, "pendulum(12) without gravity");
    mbs_model_free(m);
    m = branching_tree(11);
    if (m) del_case(m, 7, "branching tree");
    mbs_model_free(m);
}

/* ------------------------------------------------------------------ solvers */

/* Newton converges from IG3 in one or two updates and from a poor guess (IG1) quadratically; RIQN
 * on the same residual reaches the same root. tol 1e-8 N m s: the residual's rounding floor on 20
 * of these links (‖M‖ ε |q| / Δt) is a few 1e-10. */
static void test_solvers(void)
{
    mbs_model *m = pendulum(20, 1);
    mbs_data *d = mbs_data_new(m);
    svi *s = svi_new(m, NULL);
    double q0[20], v0[20], qn[20], qr[20], f[20];
    unsigned long long rs = 99;
    random_qv(20, &rs, q0, v0);
    svi_options opt;
    svi_default_options(&opt);
    opt.tol = 1e-8;
    svi_result rn, rr;
    svi_begin_velocity(s, 1e-3, q0, v0);
    CHECK(svi_solve(s, d, &opt, qn, &rn) == MBS_OK && rn.converged, "Newton: converged %d, |f| %.3e", rn.converged,
          rn.residual);
    CHECK(rn.iterations >= 1 && rn.iterations <= 2, "Newton from IG3: %d iterations", rn.iterations);
    const int newton_ig3 = rn.iterations;
    CHECK(rn.jacobians == rn.iterations, "one Jacobian per Newton update: %d, %d", rn.jacobians, rn.iterations);
    svi_residual(s, qn, f);
    CHECK(max_abs(f, 20) <= 1e-8 && max_abs(f, 20) == max_abs(f, 20), "the root's residual %.3e", max_abs(f, 20));
    opt.solver = SVI_RIQN;
    CHECK(svi_solve(s, d, &opt, qr, &rr) == MBS_OK && rr.converged, "RIQN: converged %d, |f| %.3e", rr.converged,
          rr.residual);
    CHECK(rr.jacobians == 0 && rr.iterations >= rn.iterations, "RIQN: %d Jacobians, %d iterations", rr.jacobians,
          rr.iterations);
    double e = 0;
    for (int k = 0; k < 20; k++) e = fmax(e, fabs(qr[k] - qn[k]));
    CHECK(e <= 1e-11, "RIQN and Newton roots differ by %.3e rad", e);
    /* from IG1, one update at a time: the residual's exponent roughly doubles per update */
    opt.solver = SVI_NEWTON;
    opt.guess = SVI_IG1;
    opt.max_iter = 0;
    double hist[8];
    svi_solve(s, d, &opt, qn, &rn);
    hist[0] = rn.residual;
    opt.guess = SVI_GUESS_GIVEN;
    opt.max_iter = 1;
    int nh = 1;
    while (nh < 8 && hist[nh - 1] > opt.tol) {
        svi_solve(s, d, &opt, qn, &rn);
        hist[nh++] = rn.residual;
    }
    CHECK(nh <= 4 && hist[nh - 1] <= opt.tol, "Newton from IG1: %d updates, final |f| %.3e", nh - 1, hist[nh - 1]);
    CHECK(nh >= 3 && hist[2] <= 10 * hist[1] * hist[1] / hist[0], "quadratic: |f| %.2e -> %.2e -> %.2e", hist[0], hist[1],
          hist[2]);
    printf("  Newton from IG1 on 20 links: |f| after each update:");
    for (int l = 0; l < nh; l++) printf(" %.1e", hist[l]);
    printf(" (from IG3: RIQN %d updates, Newton %d)\n", rr.iterations, newton_ig3);
    svi_free(s);
    mbs_data_free(d);
    mbs_model_free(m);
}

/* ------------------------------------------------------------------ (3) energy */

static void fit_line(const double *y, int n, double *a, double *b)
{
    double sx = 0, sy = 0, sxx = 0, sxy = 0;
    for (int k = 0; k < n; k++) { sx += k; sy += y[k]; sxx += (double)k * k; sxy += k * y[k]; }
    *b = (n * sxy - sx * sy) / (n * sxx - sx * sx);
    *a = (sy - *b * sx) / n;
}

/* The 10-link pendulum under gravity, 2·10⁴ steps of 1 ms (20 s) with Newton: the energy at the
 * midpoint of each step (the midpoint rule's own state: q^{k+½}, (q^{k+1} - q^k)/Δt) oscillates
 * without trend (fitted line below 5 % of the oscillation) and stays within 0.1 % of |E|, where
 * semi-implicit Euler from the same state loses over 100 times the variational trend. */
static void test_energy(void)
{
    enum { N = 10, STEPS = 20000 };
    const double dt = 1e-3;
    mbs_model *m = pendulum(N, 1);
    mbs_data *d = mbs_data_new(m);
    svi *s = svi_new(m, NULL);
    double qa[N], qb[N], qc[N], v0[N], mid[N], vel[N];
    unsigned long long rs = 2016;
    random_qv(N, &rs, qb, v0);
    double *E = malloc(sizeof(double) * STEPS), *Es = malloc(sizeof(double) * STEPS);
    svi_options opt;
    svi_default_options(&opt);
    int nonconv = 0, its = 0;
    for (int k = 0; k < STEPS; k++) {
        svi_result r;
        if (k == 0) svi_begin_velocity(s, dt, qb, v0);
        else svi_begin(s, dt, qa, qb);
        if (svi_solve(s, d, &opt, qc, &r) != MBS_OK) nonconv++;
        nonconv += !r.converged;
        its += r.iterations;
        for (int j = 0; j < N; j++) { mid[j] = 0.5 * (qb[j] + qc[j]); vel[j] = (qc[j] - qb[j]) / dt; }
        E[k] = mbs_kinetic_energy(m, d, mid, vel) + mbs_potential_energy(m, d, mid);
        memcpy(qa, qb, sizeof qa);
        memcpy(qb, qc, sizeof qb);
    }
    /* semi-implicit Euler from the same state */
    mbs_system *sys = mbs_system_new(m, 0, NULL);
    random_qv(N, &(unsigned long long){2016}, sys->q, sys->v);
    mbs_system_finalize(sys, NULL);
    mbs_stepper *st = mbs_stepper_new("symplectic_euler", sys, NULL, 0, NULL);
    for (int k = 0; k < STEPS; k++) {
        double qp[N];
        memcpy(qp, sys->q, sizeof qp);
        mbs_stepper_step(st, dt, NULL);
        for (int j = 0; j < N; j++) mid[j] = 0.5 * (qp[j] + sys->q[j]);
        Es[k] = mbs_kinetic_energy(m, d, mid, sys->v) + mbs_potential_energy(m, d, mid);
    }
    double a, b, as, bs, osc = 0;
    fit_line(E, STEPS, &a, &b);
    fit_line(Es, STEPS, &as, &bs);
    for (int k = 0; k < STEPS; k++) osc = fmax(osc, fabs(E[k] - a - b * k));
    double trend = b * STEPS, trend_se = bs * STEPS;
    CHECK(nonconv == 0, "%d steps did not converge", nonconv);
    CHECK(fabs(trend) <= 0.05 * osc, "SVI energy trend %.3e J over the run, oscillation +-%.3e J", trend, osc);
    CHECK(osc <= 1e-3 * fabs(E[0]), "SVI energy oscillation %.3e J of |E| %.3f J", osc, fabs(E[0]));
    CHECK(fabs(trend_se) >= 100 * fabs(trend), "semi-implicit Euler's trend %.3e J against SVI's %.3e J", trend_se, trend);
    printf("  energy, 10-link pendulum, %d steps of 1 ms: E0 %.3f J, SVI trend %+.2e J, oscillation +-%.3f J, %.2f "
           "Newton iterations/step; semi-implicit Euler trend %+.2f J\n", STEPS, E[0], trend, osc, (double)its / STEPS,
           trend_se);
    mbs_stepper_free(st);
    mbs_system_free(sys);
    free(E); free(Es);
    svi_free(s);
    mbs_data_free(d);
    mbs_model_free(m);
}

/* ------------------------------------------------------------------ (4) order */

/* q(T) after T/dt steps of SVI from (q0, v0) */
static void svi_run(mbs_model *m, mbs_data *d, svi *s, const double *q0, const double *v0, double dt, int steps,
                    double *qT)
{
    const int n = mbs_model_nv(m);
    double *qa = malloc(sizeof(double) * (size_t)n), *qb = malloc(sizeof(double) * (size_t)n);
    svi_options opt;
    svi_default_options(&opt);
    opt.tol = 1e-12;
    opt.max_iter = 50;
    memcpy(qb, q0, sizeof(double) * (size_t)n);
    for (int k = 0; k < steps; k++) {
        svi_result r;
        if (k == 0) svi_begin_velocity(s, dt, qb, v0);
        else svi_begin(s, dt, qa, qb);
        svi_solve(s, d, &opt, qT, &r);
        memcpy(qa, qb, sizeof(double) * (size_t)n);
        memcpy(qb, qT, sizeof(double) * (size_t)n);
    }
    free(qa); free(qb);
}

/* the same with the engine's variational integrator (DRNEA + Newton, trapezoidal rule on SE(3)) */
static void drnea_run(mbs_model *m, mbs_data *d, const double *q0, const double *v0, double dt, int steps, double *qT)
{
    const int n = mbs_model_nv(m);
    mbs_vi *w = mbs_vi_new(m, NULL);
    double *qa = malloc(sizeof(double) * (size_t)n), *qb = malloc(sizeof(double) * (size_t)n);
    mbs_vi_options opt;
    mbs_vi_default_options(&opt);
    opt.solver = MBS_VI_NEWTON;
    opt.tol = 1e-12;
    opt.max_iter = 50;
    memcpy(qb, q0, sizeof(double) * (size_t)n);
    for (int k = 0; k < steps; k++) {
        mbs_vi_result r;
        if (k == 0) mbs_vi_begin_velocity(m, w, dt, qb, v0, NULL, NULL);
        else mbs_vi_begin(m, w, dt, dt, qa, qb, NULL, NULL);
        mbs_vi_solve(m, d, w, &opt, qT, &r);
        memcpy(qa, qb, sizeof(double) * (size_t)n);
        memcpy(qb, qT, sizeof(double) * (size_t)n);
    }
    free(qa); free(qb);
    mbs_vi_free(w);
}

static double dist(const double *a, const double *b, int n)
{
    double e = 0;
    for (int k = 0; k < n; k++) e = fmax(e, fabs(a[k] - b[k]));
    return e;
}

/* 5-link pendulum under gravity for 0.5 s from a random state: the error of q(T) against RK4 at
 * 10 µs falls fourfold per halving of the step (second order) at 4, 2, 1 ms, and SVI and the
 * engine's DRNEA (both second order, different discrete Lagrangians) approach each other alike. */
static void test_order(void)
{
    enum { N = 5 };
    const double T = 0.5;
    mbs_model *m = pendulum(N, 1);
    mbs_data *d = mbs_data_new(m);
    svi *s = svi_new(m, NULL);
    double q0[N], v0[N], ref[N], qs[3][N], qd[3][N];
    unsigned long long rs = 77;
    random_qv(N, &rs, q0, v0);
    mbs_system *sys = mbs_system_new(m, 0, NULL);
    memcpy(sys->q, q0, sizeof q0);
    memcpy(sys->v, v0, sizeof v0);
    mbs_system_finalize(sys, NULL);
    mbs_stepper *st = mbs_stepper_new("rk4", sys, NULL, 0, NULL);
    const int nref = (int)lround(T / 1e-5);
    for (int k = 0; k < nref; k++) mbs_stepper_step(st, T / nref, NULL);
    memcpy(ref, sys->q, sizeof ref);
    static const double dts[3] = {4e-3, 2e-3, 1e-3};
    double es[3], ed[3], esd[3];
    for (int c = 0; c < 3; c++) {
        int steps = (int)lround(T / dts[c]);
        svi_run(m, d, s, q0, v0, dts[c], steps, qs[c]);
        drnea_run(m, d, q0, v0, dts[c], steps, qd[c]);
        es[c] = dist(qs[c], ref, N);
        ed[c] = dist(qd[c], ref, N);
        esd[c] = dist(qs[c], qd[c], N);
    }
    for (int c = 0; c + 1 < 3; c++) {
        double r = es[c] / es[c + 1], rd = ed[c] / ed[c + 1], rsd = esd[c] / esd[c + 1];
        CHECK(r > 3.5 && r < 4.6, "SVI error against RK4 falls by %.2f from %g to %g ms (second order: 4)", r, dts[c] * 1e3,
              dts[c + 1] * 1e3);
        CHECK(rsd > 3.5 && rsd < 4.6, "SVI - DRNEA falls by %.2f from %g to %g ms", rsd, dts[c] * 1e3, dts[c + 1] * 1e3);
        CHECK(rd > 3.0 && rd < 5.0, "DRNEA's error against RK4 falls by %.2f", rd);
    }
    CHECK(es[2] < 1e-3, "SVI at 1 ms is %.3e rad from RK4", es[2]);
    printf("  order, 5-link pendulum, 0.5 s: max |q - q_RK4| at 4 / 2 / 1 ms: SVI %.2e / %.2e / %.2e, DRNEA %.2e / %.2e / "
           "%.2e, |SVI - DRNEA| %.2e / %.2e / %.2e\n", es[0], es[1], es[2], ed[0], ed[1], ed[2], esd[0], esd[1], esd[2]);
    mbs_stepper_free(st);
    mbs_system_free(sys);
    svi_free(s);
    mbs_data_free(d);
    mbs_model_free(m);
}

/* ------------------------------------------------------------------ allocation, bad input */

static void test_noalloc(void)
{
    ALLOC_GUARD();
    mbs_model *m = branching_tree(3);
    mbs_data *d = mbs_data_new(m);
    svi *s = svi_new(m, NULL);
    const int n = mbs_model_nv(m);
    double q0[8], v0[8], q1[8], q2[8], f[8], J[64];
    unsigned long long rs = 5;
    random_qv(n, &rs, q0, v0);
    svi_options opt;
    svi_default_options(&opt);
    svi_result r;
    /* a first round outside the count: OpenBLAS sets up its buffers on its first call */
    svi_begin_velocity(s, 1e-3, q0, v0);
    svi_solve(s, d, &opt, q1, &r);
    long before = allocations;
    svi_begin_velocity(s, 1e-3, q0, v0);
    svi_solve(s, d, &opt, q1, &r);
    svi_begin(s, 1e-3, q0, q1);
    svi_solve(s, d, &opt, q2, &r);
    opt.solver = SVI_RIQN;
    svi_solve(s, d, &opt, q2, &r);
    svi_jacobian(s, q2, f, J, n);
    svi_lagrangian(s, q0, v0);
    CHECK(allocations == before, "%ld allocations while stepping", allocations - before);
    svi_free(s);
    mbs_data_free(d);
    mbs_model_free(m);
}

static void test_bad_input(void)
{
    mbs_error err;
    /* a floating base, and a planar joint: not J&M's generalized coordinates of 1-dof joints */
    const mbs_chain_options fl = {0.5, 1.0, 1, 0, NULL, 0, 0, 0};
    mbs_model *m = mbs_model_chain(3, &fl, NULL);
    svi *s = svi_new(m, &err);
    CHECK(s == NULL && err.code == MBS_ERR_ARG && strstr(err.msg, "root_joint"), "floating base: %s", err.msg);
    svi_free(s);
    mbs_model_free(m);
    m = tm_random_tree(6, 0, 1);
    s = svi_new(m, &err);
    CHECK(s == NULL && err.code == MBS_ERR_ARG && strstr(err.msg, "neither revolute nor prismatic"), "planar: %s", err.msg);
    mbs_model_free(m);
    m = pendulum(3, 1);
    s = svi_new(m, &err);
    CHECK(s != NULL && err.code == MBS_OK, "pendulum: %s", err.msg);
    double q[3] = {0, 0, 0}, q1[3];
    svi_result r;
    CHECK(svi_solve(s, NULL, NULL, q1, &r) == MBS_ERR_ARG, "solve before begin");
    CHECK(svi_begin(s, 0, q, q) == MBS_ERR_ARG && svi_begin(s, -1e-3, q, q) == MBS_ERR_ARG &&
          svi_begin_velocity(s, NAN, q, q) == MBS_ERR_ARG, "a step that is not positive");
    CHECK(svi_begin(s, 1e-3, q, q) == MBS_OK, "begin");
    CHECK(svi_solve(s, NULL, NULL, q1, &r) == MBS_ERR_ARG, "IG3 without the engine's data");
    svi_options opt;
    svi_default_options(&opt);
    opt.tol = -1;
    mbs_data *d = mbs_data_new(m);
    CHECK(svi_solve(s, d, &opt, q1, &r) == MBS_ERR_ARG, "negative tolerance");
    opt.tol = 1e-9;
    opt.solver = (svi_solver)7;
    CHECK(svi_solve(s, d, &opt, q1, &r) == MBS_ERR_ARG, "unknown solver");
    /* a NaN state is reported, not stepped */
    double qn[3] = {NAN, 0, 0};
    svi_begin(s, 1e-3, q, qn);
    svi_default_options(&opt);
    CHECK(svi_solve(s, d, &opt, q1, &r) == MBS_ERR_NUMERIC && !r.converged, "NaN state");
    mbs_data_free(d);
    svi_free(s);
    mbs_model_free(m);
}

int main(void)
{
    RUN(test_lagrangian);
    RUN(test_del);
    RUN(test_solvers);
    RUN(test_energy);
    RUN(test_order);
    RUN(test_noalloc);
    RUN(test_bad_input);
    return check_summary("svi");
}
