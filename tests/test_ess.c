/* test_ess.c — the event-selected integrator (mbs/ess.h; Anderson & Revzen 2024, sec. 3 and 4):
 * dopri5's order, the O(ε²) order of the projection on the affine system of table 4.1, the
 * hopper against its closed form (every crossing logged once, none missed), the plate's event
 * log invariant to the order of its springs, Solo dropped onto the ground, bad input, and no
 * allocation after mbs_ess_new (this program is linked with -Wl,--wrap for the allocator; the
 * counting test's ALLOC_GUARD fails without it). */
#include <math.h>
#include <stdlib.h>
#include <string.h>

#include "check.h"
#include "ess_systems.h"
#include "testmodels.h"
#include "../src/ess/dopri5.h"

#include "alloc_count.h"

/* least-squares slope of log(y) against log(x) */
static double loglog_slope(const double *x, const double *y, int n)
{
    double sx = 0, sy = 0, sxx = 0, sxy = 0;
    for (int i = 0; i < n; i++) {
        double a = log(x[i]), b = log(y[i]);
        sx += a; sy += b; sxx += a * a; sxy += a * b;
    }
    return (n * sxy - sx * sy) / (n * sxx - sx * sx);
}

/* ---------------------------------------------------------------- dopri5 alone */

static int osc(void *ctx, const double *x, double *xd)
{
    (void)ctx;
    xd[0] = x[1];
    xd[1] = -x[0];
    return 0;
}

/* Fixed steps on ẍ = -x over [0, 2]: the global error falls as h^5. */
static void test_dopri5_order(void)
{
    double hs[5], errs[5], k[7][2], *kp[7], xn[2], yt[2];
    for (int i = 0; i < 7; i++) kp[i] = k[i];
    for (int r = 0; r < 5; r++) {
        int nst = 8 << r;
        double h = 2.0 / nst, x[2] = {1, 0}, e;
        osc(NULL, x, kp[0]);
        for (int s = 0; s < nst; s++) {
            mbsi_dopri5_step(2, osc, NULL, x, h, kp, xn, yt, 1e-6, 1e-6, &e);
            x[0] = xn[0]; x[1] = xn[1];
            memcpy(kp[0], kp[6], sizeof k[0]);
        }
        hs[r] = h;
        errs[r] = hypot(x[0] - cos(2.0), x[1] + sin(2.0));
    }
    double p = loglog_slope(hs, errs, 5);
    CHECK(p > 4.7 && p < 5.5, "dopri5 global order %.3f, expected 5", p);

    /* the dense output is a 4th-order continuous extension: its error at mid-step falls as h^5 locally */
    double dens[4], hh[4], rc[10];
    for (int r = 0; r < 4; r++) {
        double h = 0.4 / (1 << r), x[2] = {1, 0}, e, out[2];
        osc(NULL, x, kp[0]);
        mbsi_dopri5_step(2, osc, NULL, x, h, kp, xn, yt, 1e-6, 1e-6, &e);
        mbsi_dopri5_dense_prepare(2, x, xn, kp, h, rc);
        mbsi_dopri5_dense_eval(2, rc, 0.37, out);
        dens[r] = hypot(out[0] - cos(0.37 * h), out[1] + sin(0.37 * h));
        hh[r] = h;
        double end[2];
        mbsi_dopri5_dense_eval(2, rc, 1.0, end);
        CHECK(fabs(end[0] - xn[0]) < 1e-15 && fabs(end[1] - xn[1]) < 1e-15, "dense output at θ = 1 is not the step's end");
    }
    double pd = loglog_slope(hh, dens, 4);
    CHECK(pd > 4.5, "dense output local order %.3f, expected >= 5", pd);
}

/* ---------------------------------------------------------------- affine system, order in ε */

#define AFF_NOUT 501

static double affine_rms(mbs_ess *w, const affine_exact *ex, double eps, int rearm, int *nev)
{
    static const double x0[3] = {-0.4, -0.15, 0.3};
    mbs_ess_system sys = {3, 3, affine_f, affine_h, affine_dh, NULL};
    mbs_ess_options o;
    mbs_ess_default_options(&o);
    o.eps = eps;
    o.rtol = o.atol = 1e-12;
    o.rearm = rearm;
    double t_out[AFF_NOUT], x_out[3 * AFF_NOUT];
    for (int i = 0; i < AFF_NOUT; i++) t_out[i] = 0.5 * i / (AFF_NOUT - 1);
    mbs_error err;
    if (mbs_ess_init(w, &sys, &o, 0, x0, &err) || mbs_ess_integrate(w, 0.5, t_out, AFF_NOUT, x_out, 3, &err)) {
        CHECK(0, "affine run failed: %s", err.msg);
        return NAN;
    }
    double s = 0;
    for (int i = 0; i < AFF_NOUT; i++) {
        double xe[3];
        affine_eval(ex, t_out[i], xe);
        for (int c = 0; c < 3; c++) s += (x_out[3 * i + c] - xe[c]) * (x_out[3 * i + c] - xe[c]);
    }
    mbs_ess_events(w, NULL, nev);
    return sqrt(s / (3.0 * AFF_NOUT));
}

static void test_affine_order(void)
{
    static const double x0[3] = {-0.4, -0.15, 0.3};
    affine_exact ex;
    affine_solve(x0, 0.5, &ex);
    CHECK(ex.nseg == 4, "the exact trajectory crosses %d guards, the paper's crosses all 3", ex.nseg - 1);
    mbs_error err;
    mbs_ess *w = mbs_ess_new(3, 3, 16, &err);
    CHECK(w != NULL, "mbs_ess_new: %s", err.msg);
    if (!w) return;
    /* the middle of the range: above the dopri5 tolerance floor, below ε ~ 0.1 where the
     * projections overlap */
    enum { NE = 9 };
    double eps[NE], rms[NE];
    for (int i = 0; i < NE; i++) {
        eps[i] = 1e-3 * pow(10, 1.5 * i / (NE - 1));   /* 1e-3 .. 3e-2 */
        int nev = 0;
        rms[i] = affine_rms(w, &ex, eps[i], MBS_ESS_REARM_LEFT_BAND, &nev);
        CHECK(nev == 3, "ε = %g: %d events, expected 3", eps[i], nev);
        int ns, nt;
        const mbs_ess_event *ev = mbs_ess_events(w, &ns, &nt);
        for (int e = 0; e < ns && e < 3; e++) {
            CHECK(ev[e].guard == ex.guard[e], "ε = %g: event %d is guard %d, exact %d", eps[i], e, ev[e].guard, ex.guard[e]);
            CHECK(fabs(ev[e].t - ex.t[e + 1]) < 10 * eps[i] * eps[i] + 1e-9, "ε = %g: event %d at %.12g, exact %.12g",
                  eps[i], e, ev[e].t, ex.t[e + 1]);
        }
    }
    double p = loglog_slope(eps, rms, NE);
    CHECK(p >= 2.0, "RMS error vs ε: fitted order %.3f < 2 (paper: 2.1)", p);
    CHECK(rms[0] < 1e-5, "RMS error at ε = 1e-3 is %.3e", rms[0]);
    mbs_ess_free(w);
}

/* ---------------------------------------------------------------- hopper */

static int run_hopper(mbs_ess *w, const hopper_par *p, double z0, double v0, double T, double eps, int rearm,
                      int nout, const double *t_out, double *x_out, mbs_error *err)
{
    mbs_ess_system sys = {2, 2, hopper_f, hopper_h, hopper_dh, (void *)p};
    mbs_ess_options o;
    mbs_ess_default_options(&o);
    o.eps = eps;
    o.rtol = o.atol = 1e-11;
    o.rearm = rearm;
    double x0[2] = {z0, v0};
    int rc = mbs_ess_init(w, &sys, &o, 0, x0, err);
    if (!rc) rc = mbs_ess_integrate(w, T, t_out, nout, x_out, 2, err);
    return rc;
}

static void test_hopper_closed_form(void)
{
    hopper_par p = {1, 1000, 1, 9.81};
    enum { NO = 401 };
    double t_out[NO], x_out[2 * NO];
    for (int i = 0; i < NO; i++) t_out[i] = 2.0 * i / (NO - 1);
    mbs_error err;
    mbs_ess *w = mbs_ess_new(2, 2, 64, &err);
    if (!w) { CHECK(0, "mbs_ess_new: %s", err.msg); return; }
    for (int rearm = 0; rearm < 2; rearm++) {
        int rc = run_hopper(w, &p, 2, 0, 2, 1e-5, rearm, NO, t_out, x_out, &err);
        CHECK(rc == MBS_OK, "hopper: %s", err.msg);
        double worst = 0, ev_t[16];
        int ev_g[16], nex = 0;
        for (int i = 0; i < NO; i++) {
            double z, v;
            nex = hopper_exact(&p, 2, 0, t_out[i], &z, &v, ev_t, ev_g, 16);
            worst = check_worst(worst, fabs(x_out[2 * i] - z));
        }
        /* the lift-off projection's error is ½ (k ż / m) (ε / ż)²: 1e-8 here */
        CHECK(worst < 1e-7, "rearm %d: hopper height error %.3e against the closed form", rearm, worst);
        int ns, nt;
        const mbs_ess_event *ev = mbs_ess_events(w, &ns, &nt);
        CHECK(nt == nex && nex == 4, "rearm %d: %d events logged, the closed form has %d", rearm, nt, nex);
        for (int e = 0; e < ns && e < nex; e++) {
            CHECK(ev[e].guard == ev_g[e] && ev[e].kind == MBS_ESS_PROJECTED,
                  "rearm %d: event %d is guard %d kind %d, expected guard %d projected", rearm, e, ev[e].guard,
                  ev[e].kind, ev_g[e]);
            CHECK(fabs(ev[e].t - ev_t[e]) < 1e-6, "rearm %d: event %d at %.10f, exact %.10f", rearm, e, ev[e].t, ev_t[e]);
        }
    }
    mbs_ess_free(w);
}

/* Random starts: every crossing of the closed form appears once, in order, none missed. */
static void test_hopper_random(void)
{
    hopper_par p = {1, 1000, 1, 9.81};
    unsigned long long seed = 11;
    mbs_error err;
    mbs_ess *w = mbs_ess_new(2, 2, 64, &err);
    if (!w) { CHECK(0, "mbs_ess_new: %s", err.msg); return; }
    int bad = 0;
    for (int trial = 0; trial < 60; trial++) {
        double z0 = tm_uniform(&seed, 1.2, 3), v0 = tm_uniform(&seed, -3, 3), T = 3, eps = 1e-4;
        int rc = run_hopper(w, &p, z0, v0, T, eps, MBS_ESS_REARM_LEFT_BAND, 0, NULL, NULL, &err);
        CHECK(rc == MBS_OK, "trial %d: %s", trial, err.msg);
        double z, v, ev_t[64];
        int ev_g[64];
        int nex = hopper_exact(&p, z0, v0, T, &z, &v, ev_t, ev_g, 64);
        int ns, nt;
        const mbs_ess_event *ev = mbs_ess_events(w, &ns, &nt);
        int ok = nt == nex;
        for (int e = 0; ok && e < nex; e++)
            ok = ev[e].guard == ev_g[e] && ev[e].kind == MBS_ESS_PROJECTED && fabs(ev[e].t - ev_t[e]) < 1e-4;
        if (!ok && bad++ < 3)
            CHECK(0, "trial %d (z0 %.4f v0 %.4f): %d events, exact %d (first %.6f vs %.6f)", trial, z0, v0, nt, nex,
                  nt ? ev[0].t : -1, nex ? ev_t[0] : -1);
        const double *x = mbs_ess_state(w);
        CHECK(fabs(x[0] - z) < 1e-3, "trial %d: final height %.6f, exact %.6f", trial, x[0], z);
    }
    CHECK(bad == 0, "%d of 60 random hopper runs disagree with the closed form", bad);
    mbs_ess_free(w);
}

/* ---------------------------------------------------------------- plate */

static int run_plate(mbs_ess *w, plate_sys *p, double z0, double th0, double T, double eps, int analytic_dh,
                     mbs_error *err)
{
    mbs_ess_system sys = {6, 2 * p->ns, plate_f, plate_h, analytic_dh ? plate_dh : NULL, p};
    mbs_ess_options o;
    mbs_ess_default_options(&o);
    o.eps = eps;
    o.rtol = 1e-10;
    o.atol = 1e-12;
    o.h_max = 2e-3;
    o.liveness_c = 1e-3;
    o.liveness_policy = MBS_ESS_LIVENESS_LOCATE;
    double x0[6] = {0, z0, th0, 0, 0, 0};
    int rc = mbs_ess_init(w, &sys, &o, 0, x0, err);
    if (!rc) rc = mbs_ess_integrate(w, T, NULL, 0, NULL, 6, err);
    return rc;
}

/* Reversing and shuffling the springs relabels the guards and changes nothing else. */
static void test_plate_order_invariance(void)
{
    enum { NS = 12 };
    plate_sys a, b;
    plate_setup(&a, NS, 1000, 4);
    plate_setup(&b, NS, 1000, 4);
    int perm[NS];
    unsigned long long seed = 5;
    for (int i = 0; i < NS; i++) perm[i] = i;
    for (int i = NS - 1; i > 0; i--) {
        int j = (int)tm_uniform(&seed, 0, i + 1);
        int t = perm[i]; perm[i] = perm[j]; perm[j] = t;
    }
    for (int i = 0; i < NS; i++) b.xs[i] = a.xs[perm[i]];   /* spring i of b is spring perm[i] of a */
    mbs_error err;
    mbs_ess *wa = mbs_ess_new(6, 2 * NS, 4096, &err), *wb = mbs_ess_new(6, 2 * NS, 4096, &err);
    if (!wa || !wb) { CHECK(0, "mbs_ess_new: %s", err.msg); mbs_ess_free(wa); mbs_ess_free(wb); return; }
    for (int trial = 0; trial < 4; trial++) {
        double z0 = tm_uniform(&seed, 2, 3), th0 = tm_uniform(&seed, -0.1, 0.1);
        int ra = run_plate(wa, &a, z0, th0, 2, 0.01, 1, &err);
        CHECK(ra == MBS_OK, "plate: %s", err.msg);
        int rb = run_plate(wb, &b, z0, th0, 2, 0.01, 1, &err);
        CHECK(rb == MBS_OK, "permuted plate: %s", err.msg);
        int na, nb, ta, tb;
        const mbs_ess_event *ea = mbs_ess_events(wa, &na, &ta), *eb = mbs_ess_events(wb, &nb, &tb);
        CHECK(ta == tb && ta > NS, "trial %d: %d events in order, %d permuted", trial, ta, tb);
        int first_bad = -1;
        for (int e = 0; e < na && e < nb && first_bad < 0; e++) {
            int ga = ea[e].guard, gb = 2 * perm[eb[e].guard / 2] + eb[e].guard % 2;
            if (ga != gb || ea[e].kind != eb[e].kind || fabs(ea[e].t - eb[e].t) > 1e-9) first_bad = e;
        }
        CHECK(first_bad < 0, "trial %d: event %d differs after permuting the springs", trial, first_bad);
        const double *xa = mbs_ess_state(wa), *xb = mbs_ess_state(wb);
        CHECK_CLOSE(xb, xa, 6, 1e-9, "final plate state, permuted springs");
        /* the plate lands on all its springs: every touch-down guard was crossed at least once */
        int touched = 0;
        for (int i = 0; i < NS; i++) {
            int hit = 0;
            for (int e = 0; e < na; e++) hit |= ea[e].guard == 2 * i;
            touched += hit;
        }
        CHECK(touched == NS, "trial %d: %d of %d springs touched", trial, touched, NS);
    }
    /* central differences of h give the same events as the analytic Dh·w */
    double z0 = 2.5, th0 = 0.05;
    run_plate(wa, &a, z0, th0, 1.5, 0.01, 1, &err);
    run_plate(wb, &a, z0, th0, 1.5, 0.01, 0, &err);
    int na, nb, ta, tb;
    const mbs_ess_event *ea = mbs_ess_events(wa, &na, &ta), *eb = mbs_ess_events(wb, &nb, &tb);
    int same = ta == tb;
    for (int e = 0; same && e < na; e++) same = ea[e].guard == eb[e].guard && fabs(ea[e].t - eb[e].t) < 1e-6;
    CHECK(same, "finite-difference Dh·w changes the event log (%d vs %d events)", ta, tb);
    mbs_ess_free(wa);
    mbs_ess_free(wb);
}

/* A plate resting on its springs sags by Mg/K (K the bed's total stiffness). */
static void test_plate_sag(void)
{
    plate_sys p;
    plate_setup(&p, 7, 1000, 40);
    mbs_error err;
    mbs_ess *w = mbs_ess_new(6, 14, 256, &err);
    if (!w) { CHECK(0, "mbs_ess_new: %s", err.msg); return; }
    int rc = run_plate(w, &p, 1.05, 0.02, 6, 1e-3, 1, &err);
    CHECK(rc == MBS_OK, "plate: %s", err.msg);
    const double *x = mbs_ess_state(w);
    double sag = p.L0 - x[1], expect = p.mass * p.g / (p.K * p.ns);
    CHECK(fabs(sag - expect) < 1e-6 * expect + 1e-9, "sag %.9f, Mg/K = %.9f", sag, expect);
    CHECK(fabs(x[2]) < 1e-6, "resting plate tilted by %.3e", x[2]);
    mbs_ess_free(w);
}

/* ---------------------------------------------------------------- Solo */

static void test_solo_drop(void)
{
    ALLOC_GUARD();
    solo_sys s;
    double x0[64];
    mbs_error err;
    if (solo_setup(&s, tm_path("urdf/solo12.urdf"), 0.30, 0.04, 0.03, x0, &err)) {
        CHECK(0, "solo setup: %s", err.msg);
        return;
    }
    int n = s.nq + s.nv;
    mbs_ess *w = mbs_ess_new(n, 8, 256, &err);
    if (!w) { CHECK(0, "mbs_ess_new: %s", err.msg); solo_free(&s); return; }
    mbs_ess_system sys = {n, 8, solo_f, solo_h, solo_dh, &s};
    mbs_ess_options o;
    mbs_ess_default_options(&o);
    o.eps = 5e-4;
    o.rtol = 1e-6;
    o.atol = 1e-8;
    o.liveness_c = 1e-3;
    o.liveness_policy = MBS_ESS_LIVENESS_LOCATE;
    int rc = mbs_ess_init(w, &sys, &o, 0, x0, &err);
    CHECK(rc == MBS_OK, "solo init: %s", err.msg);
    long before = allocations;
    if (!rc) rc = mbs_ess_integrate(w, 0.8, NULL, 0, NULL, n, &err);
    CHECK(allocations == before, "%ld allocations while integrating Solo", allocations - before);
    CHECK(rc == MBS_OK, "solo drop: %s", err.msg);
    int ns, nt, first[4] = {0, 0, 0, 0};
    const mbs_ess_event *ev = mbs_ess_events(w, &ns, &nt);
    for (int e = 0; e < ns; e++)
        if (ev[e].guard % 2 == 0 && ev[e].kind == MBS_ESS_PROJECTED) first[ev[e].guard / 2]++;
    for (int i = 0; i < 4; i++) CHECK(first[i] >= 1, "foot %d never touched down by a projection", i);
    CHECK(ns > 0 && ev[0].t > 0.05 && ev[0].t < 0.2, "first touch-down at %.4f s", ns ? ev[0].t : -1);
    const double *x = mbs_ess_state(w);
    double qn = sqrt(x[3] * x[3] + x[4] * x[4] + x[5] * x[5] + x[6] * x[6]);
    CHECK(fabs(qn - 1) < 1e-6, "base quaternion norm drifted to %.9f", qn);
    CHECK(x[2] > 0.15 && x[2] < 0.26, "base height %.4f after the drop", x[2]);
    double vmax = 0;
    for (int i = 0; i < 6; i++) vmax = fmax(vmax, fabs(x[s.nq + i]));
    CHECK(vmax < 0.2, "base still moving at %.3f after 0.8 s", vmax);
    const signed char *sg = mbs_ess_sigma(w);
    for (int i = 0; i < 4; i++) CHECK(sg[2 * i] > 0 && sg[2 * i + 1] < 0, "foot %d not in contact at the end", i);
    mbs_ess_free(w);
    solo_free(&s);
}

/* ---------------------------------------------------------------- bad input */

static int nan_f(void *u, const double *x, const signed char *s, double *xd)
{
    (void)u; (void)s;
    xd[0] = x[0] > 0.5 ? NAN : 1;
    return 0;
}
static int away_f(void *u, const double *x, const signed char *s, double *xd)
{
    (void)u; (void)x; (void)s;
    xd[0] = -1;   /* moving away from the guard h = x */
    return 0;
}
static int fail_f(void *u, const double *x, const signed char *s, double *xd)
{
    (void)u; (void)s;
    xd[0] = 1;
    return x[0] > 0.3 ? 7 : 0;
}
static int line_h(void *u, const double *x, double *h) { (void)u; h[0] = x[0]; return 0; }
static int line_dh(void *u, const double *x, const double *w, double *o) { (void)u; (void)x; o[0] = w[0]; return 0; }
static int graze_f(void *u, const double *x, const signed char *s, double *xd)
{
    (void)u; (void)s;
    xd[0] = x[1];
    xd[1] = -1;   /* a ballistic arc whose apex grazes the guard x = 0 */
    return 0;
}

static void test_bad_input(void)
{
    mbs_error err;
    CHECK(mbs_ess_new(0, 1, 1, &err) == NULL && err.code == MBS_ERR_ARG, "n = 0 accepted");
    CHECK(mbs_ess_new(1, -1, 1, &err) == NULL && err.code == MBS_ERR_ARG, "m = -1 accepted");
    mbs_ess *w = mbs_ess_new(1, 1, 8, &err);
    if (!w) { CHECK(0, "mbs_ess_new: %s", err.msg); return; }
    mbs_ess_system sys = {1, 1, away_f, line_h, line_dh, NULL};
    mbs_ess_options o;
    mbs_ess_default_options(&o);
    double x0 = -0.5;
    int rc;

    o.eps = 0;
    CHECK(mbs_ess_init(w, &sys, &o, 0, &x0, &err) == MBS_ERR_ARG && strstr(err.msg, "eps"), "eps = 0: %s", err.msg);
    o.eps = -1;
    CHECK(mbs_ess_init(w, &sys, &o, 0, &x0, &err) == MBS_ERR_ARG, "eps < 0 accepted");
    o.eps = NAN;
    CHECK(mbs_ess_init(w, &sys, &o, 0, &x0, &err) == MBS_ERR_ARG, "eps = NaN accepted");
    CHECK(mbs_ess_integrate(w, 1, NULL, 0, NULL, 1, &err) == MBS_ERR_ARG, "integrate after a failed init");
    mbs_ess_default_options(&o);
    o.rtol = o.atol = 0;
    CHECK(mbs_ess_init(w, &sys, &o, 0, &x0, &err) == MBS_ERR_ARG, "zero tolerances accepted");
    mbs_ess_default_options(&o);
    mbs_ess_system bad = sys;
    bad.n = 2;
    CHECK(mbs_ess_init(w, &bad, &o, 0, &x0, &err) == MBS_ERR_ARG, "n mismatch accepted");
    bad = sys;
    bad.f = NULL;
    CHECK(mbs_ess_init(w, &bad, &o, 0, &x0, &err) == MBS_ERR_ARG, "NULL f accepted");
    double xnan = NAN;
    CHECK(mbs_ess_init(w, &sys, &o, 0, &xnan, &err) == MBS_ERR_ARG, "NaN initial state accepted");

    /* liveness: inside the band and moving away from the guard */
    o.eps = 0.1;
    x0 = -0.05;
    rc = mbs_ess_init(w, &sys, &o, 0, &x0, &err);
    CHECK(rc == MBS_OK, "init: %s", err.msg);
    rc = mbs_ess_integrate(w, 1, NULL, 0, NULL, 1, &err);
    CHECK(rc == MBS_ERR_MODEL && mbs_ess_last_status(w) == MBS_ESS_ERR_LIVENESS && strstr(err.msg, "liveness"),
          "liveness violation: rc %d status %d: %s", rc, mbs_ess_last_status(w), err.msg);

    /* output times out of order, final time in the past */
    x0 = -0.5;
    mbs_ess_init(w, &sys, &o, 0, &x0, &err);
    double to[3] = {0.1, 0.3, 0.2}, xo[3];
    CHECK(mbs_ess_integrate(w, 1, to, 3, xo, 1, &err) == MBS_ERR_ARG, "unsorted output times accepted");
    CHECK(mbs_ess_integrate(w, -1, NULL, 0, NULL, 1, &err) == MBS_ERR_ARG, "final time before t accepted");

    /* NaN from f: a clear error, no hang */
    sys.f = nan_f;
    x0 = 0;
    mbs_ess_init(w, &sys, &o, 0, &x0, &err);
    rc = mbs_ess_integrate(w, 2, NULL, 0, NULL, 1, &err);
    CHECK(rc == MBS_ERR_MODEL && mbs_ess_last_status(w) == MBS_ESS_ERR_NOT_FINITE, "NaN field: rc %d status %d: %s", rc,
          mbs_ess_last_status(w), err.msg);

    /* a callback that fails */
    sys.f = fail_f;
    x0 = -1;
    mbs_ess_init(w, &sys, &o, 0, &x0, &err);
    rc = mbs_ess_integrate(w, 2, NULL, 0, NULL, 1, &err);
    CHECK(rc == MBS_ERR_MODEL && mbs_ess_last_status(w) == MBS_ESS_ERR_CALLBACK, "failing f: rc %d status %d", rc,
          mbs_ess_last_status(w));

    /* the step budget */
    sys.f = away_f;
    o.max_steps = 3;
    o.h_max = 1e-3;
    x0 = -1;
    mbs_ess_init(w, &sys, &o, 0, &x0, &err);
    rc = mbs_ess_integrate(w, 10, NULL, 0, NULL, 1, &err);
    CHECK(rc == MBS_ERR_MODEL && mbs_ess_last_status(w) == MBS_ESS_ERR_STEP_LIMIT, "step budget: rc %d status %d", rc,
          mbs_ess_last_status(w));
    mbs_ess_free(w);

    /* a grazing arc: an error by default, a located crossing when asked */
    w = mbs_ess_new(2, 1, 8, &err);
    if (!w) return;
    mbs_ess_system gs = {2, 1, graze_f, line_h, NULL, NULL};
    mbs_ess_default_options(&o);
    o.eps = 0.01;
    o.liveness_c = 0.2;   /* the arc enters the band at 0.14 */
    o.h_max = 0.01;       /* dopri5 is exact on a parabola: unbounded steps would jump the whole arc */
    double xg[2] = {-0.5, sqrt(2 * 0.5) * 1.0001};   /* apex just past x = 0 */
    mbs_ess_init(w, &gs, &o, 0, xg, &err);
    rc = mbs_ess_integrate(w, 3, NULL, 0, NULL, 2, &err);
    CHECK(rc == MBS_ERR_MODEL && mbs_ess_last_status(w) == MBS_ESS_ERR_LIVENESS, "graze: rc %d status %d", rc,
          mbs_ess_last_status(w));
    o.liveness_policy = MBS_ESS_LIVENESS_LOCATE;
    mbs_ess_init(w, &gs, &o, 0, xg, &err);
    rc = mbs_ess_integrate(w, 3, NULL, 0, NULL, 2, &err);
    CHECK(rc == MBS_OK, "graze with LOCATE: %s", err.msg);
    int ns, nt;
    const mbs_ess_event *ev = mbs_ess_events(w, &ns, &nt);
    double tc = sqrt(2 * 0.5) * 1.0001 - sqrt(2 * 0.5 * 1.0001 * 1.0001 - 2 * 0.5);   /* x(t) = 0 first */
    CHECK(nt == 2 && ev[0].kind == MBS_ESS_LOCATED && fabs(ev[0].t - tc) < 1e-7 && ev[1].kind == MBS_ESS_REVERSED,
          "graze: %d events, first kind %d at %.9f (exact %.9f)", nt, nt ? ev[0].kind : -1, nt ? ev[0].t : -1, tc);
    mbs_ess_free(w);
}

/* ---------------------------------------------------------------- dense output and restarts */

static void test_dense_and_restart(void)
{
    ALLOC_GUARD();
    hopper_par p = {1, 1000, 1, 9.81};
    mbs_error err;
    mbs_ess *w = mbs_ess_new(2, 2, 64, &err);
    if (!w) return;
    enum { NO = 101 };
    double t_out[NO], x1[2 * NO], x2[2 * NO];
    for (int i = 0; i < NO; i++) t_out[i] = 1.5 * i / (NO - 1);
    run_hopper(w, &p, 2, 0, 1.5, 1e-3, 0, NO, t_out, x1, &err);
    /* the same run in three calls, with the outputs of each */
    mbs_ess_system sys = {2, 2, hopper_f, hopper_h, hopper_dh, &p};
    mbs_ess_options o;
    mbs_ess_default_options(&o);
    o.eps = 1e-3;
    o.rtol = o.atol = 1e-11;
    double x0[2] = {2, 0};
    mbs_ess_init(w, &sys, &o, 0, x0, &err);
    long before = allocations;
    int rc = mbs_ess_integrate(w, 0.5, t_out, 34, x2, 2, &err);
    rc |= mbs_ess_integrate(w, 1.0, t_out + 34, 33, x2 + 68, 2, &err);
    rc |= mbs_ess_integrate(w, 1.5, t_out + 67, 34, x2 + 134, 2, &err);
    CHECK(allocations == before, "%ld allocations while integrating", allocations - before);
    CHECK(rc == MBS_OK, "restarted run: %s", err.msg);
    /* restarts change the step sequence, hence where inside its 1e-6 ε tolerance each band
     * entry is found; the stance amplifies the resulting event-time differences */
    CHECK_CLOSE(x2, x1, 2 * NO, 1e-6, "three calls against one");
    double z, v, et[8];
    int eg[8];
    hopper_exact(&p, 2, 0, 1.5, &z, &v, et, eg, 8);
    CHECK(fabs(mbs_ess_state(w)[0] - z) < 1e-4 && fabs(x2[2 * (NO - 1)] - z) < 1e-4, "final height %.9f, exact %.9f",
          mbs_ess_state(w)[0], z);
    /* the listing-1 termination (project from the step's end) still logs every crossing */
    o.entry = MBS_ESS_ENTRY_STEP_END;
    o.h_max = 2e-3;
    mbs_ess_init(w, &sys, &o, 0, x0, &err);
    rc = mbs_ess_integrate(w, 2, NULL, 0, NULL, 2, &err);
    int ns, nt;
    mbs_ess_events(w, &ns, &nt);
    CHECK(rc == MBS_OK && nt == 4, "step-end entries: %d events: %s", nt, err.msg);
    const mbs_ess_stats *st = mbs_ess_get_stats(w);
    CHECK(st->nsteps >= 1000 && st->nprojections == 4 && st->nfev > 6 * st->nsteps, "stats: %ld steps %ld projections %ld f",
          st->nsteps, st->nprojections, st->nfev);
    mbs_ess_free(w);
}

int main(void)
{
    RUN(test_dopri5_order);
    RUN(test_affine_order);
    RUN(test_hopper_closed_form);
    RUN(test_hopper_random);
    RUN(test_plate_order_invariance);
    RUN(test_plate_sag);
    RUN(test_solo_drop);
    RUN(test_bad_input);
    RUN(test_dense_and_restart);
    return check_summary("test_ess");
}
