/* bench_ess.c — the event-selected integrator (mbs/ess.h) on the experiments of Anderson &
 * Revzen 2024 (arXiv 2402.00279), against MuJoCo when libmujoco-dev is installed:
 *   1. order test (sec. 4): RMS error vs ε on the affine system of table 4.1, and dopri5's own order;
 *   2. hopper calibration (sec. 5.1, table 5.1): the ε' at which our RMS error equals MuJoCo's
 *      at dt = 2 ms, and both run times at that error;
 *   3. plate on 2..100 springs (sec. 5.2, fig. 5.2): median run time per trajectory over 120
 *      random starts and the marginal cost per contact, ours and MuJoCo's in the same run,
 *      and the sag Mg/K of a resting plate in both;
 *   4. Solo dropped onto the ground, the engine's ABA as the vector field.
 * Ends with `key: value` lines. A full run (not --quick) also writes the tables of its section of
 * docs/benchmarks.md into <data>/tables.md (tools/bench/bench_doc.h), which tools/bench/bench_doc.py puts into
 * the document (make bench-ess does both).
 *   bench_ess [--quick] [--data DIR]
 * --quick: 24 plate starts instead of 120, fewer repetitions. */
#include <math.h>
#include <stdarg.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <time.h>

#include "mbs.h"
#include "bench_tool.h"
#include "bench_doc.h"
#include "../../tests/ess_systems.h"
#ifdef MBS_HAVE_MUJOCO
#include "ess_mujoco.h"
#endif

#ifndef MBS_SOURCE_DIR
#define MBS_SOURCE_DIR "."
#endif

/* The tables of docs/benchmarks.md this run writes (a full run only). */
static bench_doc doc;

/* The key: value lines, printed together at the end and written into the keys block. */
static bench_keys keys;
#define key(...) bench_key(&keys, __VA_ARGS__)

/* x with printf format fmt, or "n/a" when it was not measured (no MuJoCo). */
static const char *num(char *buf, size_t n, const char *fmt, double x)
{
    if (isnan(x)) snprintf(buf, n, "n/a");
    else snprintf(buf, n, fmt, x);
    return buf;
}

/* least-squares line y = a + b x */
static void fit_line(const double *x, const double *y, int n, double *a, double *b)
{
    double sx = 0, sy = 0, sxx = 0, sxy = 0;
    for (int i = 0; i < n; i++) { sx += x[i]; sy += y[i]; sxx += x[i] * x[i]; sxy += x[i] * y[i]; }
    *b = (n * sxy - sx * sy) / (n * sxx - sx * sx);
    *a = (sy - *b * sx) / n;
}

static double loglog_slope(const double *x, const double *y, int n)
{
    double lx[64], ly[64], a, b;
    for (int i = 0; i < n; i++) { lx[i] = log(x[i]); ly[i] = log(y[i]); }
    fit_line(lx, ly, n, &a, &b);
    return b;
}

static void die(const char *what, const mbs_error *err)
{
    fprintf(stderr, "bench_ess: %s: %s\n", what, err ? err->msg : "");
    exit(1);
}

/* ================================================================ 1. order test */

#define AFF_NOUT 501

static double affine_run(mbs_ess *w, const affine_exact *ex, double eps, double tol, int entry, double hmax)
{
    static const double x0[3] = {-0.4, -0.15, 0.3};
    static double t_out[AFF_NOUT], x_out[3 * AFF_NOUT];
    mbs_ess_system sys = {3, 3, affine_f, affine_h, affine_dh, NULL};
    mbs_ess_options o;
    mbs_ess_default_options(&o);
    o.eps = eps;
    o.rtol = o.atol = tol;
    o.entry = entry;
    o.h_max = hmax;
    for (int i = 0; i < AFF_NOUT; i++) t_out[i] = 0.5 * i / (AFF_NOUT - 1);
    mbs_error err;
    if (mbs_ess_init(w, &sys, &o, 0, x0, &err) || mbs_ess_integrate(w, 0.5, t_out, AFF_NOUT, x_out, 3, &err))
        die("affine system", &err);
    double s = 0;
    for (int i = 0; i < AFF_NOUT; i++) {
        double xe[3];
        affine_eval(ex, t_out[i], xe);
        for (int c = 0; c < 3; c++) s += (x_out[3 * i + c] - xe[c]) * (x_out[3 * i + c] - xe[c]);
    }
    return sqrt(s / (3.0 * AFF_NOUT));
}

static int osc(void *u, const double *x, const signed char *s, double *xd)
{
    (void)u; (void)s;
    xd[0] = x[1];
    xd[1] = -x[0];
    return 0;
}

/* Fixed-step dopri5 on ẍ = -x over [0, 2]: a run without guards whose steps are pinned by
 * h_init = h_max and tolerances every step meets. */
static double dopri5_order(void)
{
    double hs[5], errs[5];
    mbs_error err;
    mbs_ess *w = mbs_ess_new(2, 0, 0, &err);
    if (!w) die("mbs_ess_new", &err);
    for (int r = 0; r < 5; r++) {
        double h = 2.0 / (8 << r), x0[2] = {1, 0};
        mbs_ess_system sys = {2, 0, osc, NULL, NULL, NULL};
        mbs_ess_options o;
        mbs_ess_default_options(&o);
        o.rtol = o.atol = 1e3;
        o.h_init = o.h_max = h;
        if (mbs_ess_init(w, &sys, &o, 0, x0, &err) || mbs_ess_integrate(w, 2, NULL, 0, NULL, 2, &err))
            die("dopri5 order", &err);
        const double *x = mbs_ess_state(w);
        hs[r] = h;
        errs[r] = hypot(x[0] - cos(2.0), x[1] + sin(2.0));
    }
    mbs_ess_free(w);
    return loglog_slope(hs, errs, 5);
}

/* ================================================================ 2. hopper */

#define HOP_T 2.0
#define HOP_DT 0.002
#define HOP_N 1000

static const hopper_par hop = {1, 1000, 1, 9.81};
static double hop_t[HOP_N + 1], hop_exact[HOP_N + 1];

static void hopper_exact_grid(void)
{
    for (int k = 0; k <= HOP_N; k++) {
        double v, et[64];
        int eg[64];
        hop_t[k] = k * HOP_DT;
        hopper_exact(&hop, 2, 0, hop_t[k], &hop_exact[k], &v, et, eg, 64);
    }
}

static double rms_z(const double *z, int stride)
{
    double s = 0;
    for (int k = 0; k <= HOP_N; k++) s += (z[k * stride] - hop_exact[k]) * (z[k * stride] - hop_exact[k]);
    return sqrt(s / (HOP_N + 1));
}

/* What MuJoCo's Euler integrator does with a spring contact (ess_mujoco.h): semi-implicit
 * Euler, v += dt a(z), z += dt v, the contact pushing only. Without MuJoCo this stands in for
 * it in the calibration; with it, agreement of the two RMS errors checks the MuJoCo model. */
static double hopper_semi_implicit_rms(void)
{
    static double z[HOP_N + 1];
    double zz = 2, v = 0;
    z[0] = zz;
    for (int k = 1; k <= HOP_N; k++) {
        double a = -hop.g + fmax(0, hop.k * (hop.L0 - zz) / hop.mass);
        v += HOP_DT * a;
        zz += HOP_DT * v;
        z[k] = zz;
    }
    return rms_z(z, 1);
}

/* One hopper run with the paper's settings: dopri5 steps of at most 2 ms (MuJoCo's dt),
 * the trajectory output at MuJoCo's sample times. */
static void hopper_ours(mbs_ess *w, double eps, double *x_out)
{
    mbs_ess_system sys = {2, 2, hopper_f, hopper_h, hopper_dh, (void *)&hop};
    mbs_ess_options o;
    mbs_ess_default_options(&o);
    o.eps = eps;
    o.h_max = HOP_DT;
    double x0[2] = {2, 0};
    mbs_error err;
    if (mbs_ess_init(w, &sys, &o, 0, x0, &err) || mbs_ess_integrate(w, HOP_T, hop_t, HOP_N + 1, x_out, 2, &err))
        die("hopper", &err);
}

static double hopper_rms(mbs_ess *w, double eps)
{
    static double x_out[2 * (HOP_N + 1)];
    hopper_ours(w, eps, x_out);
    return rms_z(x_out, 2);
}

/* ε' with RMS(ε') = target: the largest grid ε below the target on a log scan, then
 * bisection in log ε against the next grid point above it. */
static double calibrate(mbs_ess *w, double target)
{
    double lo = -1, hi = -1, prev = 1e-6;
    for (int i = 0; i <= 60; i++) {
        double e = 1e-6 * pow(10, 6.0 * i / 60);   /* 1e-6 .. 1 */
        if (hopper_rms(w, e) > target) { lo = prev; hi = e; break; }
        prev = e;
    }
    if (hi < 0) return 1;
    for (int it = 0; it < 60; it++) {
        double mid = sqrt(lo * hi);
        if (hopper_rms(w, mid) > target) hi = mid;
        else lo = mid;
    }
    return sqrt(lo * hi);
}

/* ================================================================ 3. plate */

#define PLATE_IC 120
#define PLATE_T 2.0
#define PLATE_KTOT 1000.0
#define PLATE_BTOT 0.0

static double plate_ours(mbs_ess *w, plate_sys *p, double z0, double th0, double eps, double T, long *nev)
{
    mbs_ess_system sys = {6, 2 * p->ns, plate_f, plate_h, plate_dh, p};
    mbs_ess_options o;
    mbs_ess_default_options(&o);
    o.eps = eps;
    o.h_max = HOP_DT;
    o.liveness_c = 1e-2;                          /* a spring met at under 1 cm/s is grazed, */
    o.liveness_policy = MBS_ESS_LIVENESS_LOCATE;  /* and its crossing is found by root finding */
    double x0[6] = {0, z0, th0, 0, 0, 0};
    mbs_error err;
    double t0 = tool_now();
    if (mbs_ess_init(w, &sys, &o, 0, x0, &err) || mbs_ess_integrate(w, T, NULL, 0, NULL, 6, &err))
        die("plate", &err);
    double t = tool_now() - t0;
    if (nev) { int ns; mbs_ess_events(w, &ns, &ns); *nev += ns; }
    return t;
}

/* ================================================================ main */

int main(int argc, char **argv)
{
    tool_single_thread_blas(argv);
    tool_args args;
    int status = tool_parse_args(argc, argv, "bench_ess", MBS_SOURCE_DIR, NULL, &args);
    if (status) return status;
    int quick = args.quick;
    mbs_error err;
    char b1[64];
    bench_doc_open(&doc, args.data, "make bench-ess", !quick && bench_doc_with_mujoco());
    printf("# bench_ess: event-selected rapid integrator (Anderson & Revzen 2024)%s\n", quick ? " [--quick]" : "");
    printf("# run %s; %s\n", doc.stamp, doc.machine);
#ifdef MBS_HAVE_MUJOCO
    printf("# MuJoCo %s (libmujoco-dev)\n", essmj_version());
#else
    printf("# MuJoCo: not installed (apt-get install libmujoco-dev); its figures print as n/a\n");
#endif

    /* ---- 1. order test */
    static const double x0a[3] = {-0.4, -0.15, 0.3};
    affine_exact ex;
    affine_solve(x0a, 0.5, &ex);
    mbs_ess *wa = mbs_ess_new(3, 3, 16, &err);
    if (!wa) die("mbs_ess_new", &err);
    enum { NE = 25 };
    double eps[NE], rms[NE], rms_se[NE];
    printf("\n## order test: affine system of table 4.1 from (-0.4, -0.15, 0.3) over (0, 0.5), RMS over 501 samples\n");
    printf("# exact events: guard %d at %.15f, guard %d at %.15f, guard %d at %.15f\n", ex.guard[0], ex.t[1],
           ex.guard[1], ex.t[2], ex.guard[2], ex.t[3]);
    printf("%12s %14s %14s\n", "eps", "rms_located", "rms_step_end");
    for (int i = 0; i < NE; i++) {
        eps[i] = 1e-5 * pow(10, 4.5 * i / (NE - 1));   /* 1e-5 .. 0.316 */
        rms[i] = affine_run(wa, &ex, eps[i], 1e-12, MBS_ESS_ENTRY_LOCATE, 0);
        rms_se[i] = affine_run(wa, &ex, eps[i], 1e-6, MBS_ESS_ENTRY_STEP_END, 2e-3);
        printf("%12.4e %14.6e %14.6e\n", eps[i], rms[i], rms_se[i]);
    }
    /* the middle of the range: ε in [1e-3, 3e-2] (below, the 1e-12 dopri5 tolerance is near;
     * above, projections span a sizeable part of the 0.5 s run) */
    double me[NE], mr[NE], ms[NE];
    int nm = 0;
    for (int i = 0; i < NE; i++)
        if (eps[i] >= 0.99e-3 && eps[i] <= 3.2e-2) { me[nm] = eps[i]; mr[nm] = rms[i]; ms[nm] = rms_se[i]; nm++; }
    double order = loglog_slope(me, mr, nm), order_se = loglog_slope(me, ms, nm);
    double order_all = loglog_slope(eps, rms, NE);
    double p5 = dopri5_order();
    printf("# fitted order over eps in [1e-3, 3e-2]: %.3f (entry located), %.3f (listing 1: step end, rtol 1e-6, h <= 2 ms)\n",
           order, order_se);
    /* listing 1's floor: its error at the smallest eps */
    printf("# fitted order over the whole range: %.3f; listing 1's error at the smallest eps: %.3e; dopri5 alone: order %.3f\n",
           order_all, rms_se[0], p5);
    mbs_ess_free(wa);
    {
        static const int cols[] = {0, 6, 11, 16, 22};   /* ε ≈ 1e-5, 1.3e-4, 1.2e-3, 1e-2, 0.13 */
        const int nc = (int)(sizeof cols / sizeof *cols);
        bench_doc_begin(&doc, "ess-order");
        bench_doc_printf(&doc, "| ε |");
        for (int c = 0; c < nc; c++) bench_doc_printf(&doc, " %.1e |", eps[cols[c]]);
        bench_doc_printf(&doc, "\n|---|");
        for (int c = 0; c < nc; c++) bench_doc_printf(&doc, "---|");
        bench_doc_printf(&doc, "\n| RMS error, entry located (ours) |");
        for (int c = 0; c < nc; c++) bench_doc_printf(&doc, " %.1e |", rms[cols[c]]);
        bench_doc_printf(&doc, "\n| RMS error, listing 1 (step end, rtol 1e-6, steps ≤ 2 ms) |");
        for (int c = 0; c < nc; c++) bench_doc_printf(&doc, " %.1e |", rms_se[cols[c]]);
        bench_doc_printf(&doc, "\n\nFitted order over ε ∈ [1e-3, 3e-2]: **%.2f** with the entry located (%.2f over the whole "
                         "range 1e-5 … 0.3), %.2f for listing 1's step end, whose error floors at %.1e at the smallest ε. "
                         "dopri5 alone, fixed steps on ẍ = −x: order %.2f. The paper: 2.1.\n",
                         order, order_all, order_se, rms_se[0], p5);
        bench_doc_end(&doc, "ess-order");
    }

    /* ---- 2. hopper calibration */
    hopper_exact_grid();
    mbs_ess *wh = mbs_ess_new(2, 2, 64, &err);
    if (!wh) die("mbs_ess_new", &err);
    int reps = quick ? 20 : 200;
    double *tim = malloc(sizeof(double) * (size_t)(reps > PLATE_IC ? reps : PLATE_IC));
    static double hx[2 * (HOP_N + 1)];
    double rms_mj = NAN, eps_eq = NAN, mj_ms = NAN, sag_mj_hop = NAN;
#ifdef MBS_HAVE_MUJOCO
    {
        char msg[1024];
        essmj *mh = essmj_hopper_new(hop.mass, hop.k, hop.L0, HOP_DT, msg, sizeof msg);
        if (!mh) { fprintf(stderr, "bench_ess: MuJoCo hopper: %s\n", msg); return 1; }
        static double zmj[HOP_N + 1];
        double q0 = 2;
        essmj_run(mh, &q0, HOP_N, 0, zmj);
        rms_mj = rms_z(zmj, 1);
        for (int r = 0; r < reps; r++) {
            double t0 = tool_now();
            essmj_run(mh, &q0, HOP_N, 0, zmj);
            tim[r] = tool_now() - t0;
        }
        mj_ms = 1e3 * tool_median(tim, reps);
        /* sag of a resting hopper: no damping, so start it at equilibrium and average */
        double qeq = hop.L0 - hop.mass * hop.g / hop.k;
        essmj_run(mh, &qeq, 5000, 0, NULL);
        sag_mj_hop = hop.L0 - essmj_qpos(mh)[0];
        essmj_free(mh);
    }
#endif
    double rms_sie = hopper_semi_implicit_rms();
    double eps_sie = calibrate(wh, rms_sie), eps_run = eps_sie;
    if (!isnan(rms_mj)) eps_eq = eps_run = calibrate(wh, rms_mj);
    double rms_ours = hopper_rms(wh, eps_run);
    for (int r = 0; r < reps; r++) {
        double t0 = tool_now();
        hopper_ours(wh, eps_run, hx);
        tim[r] = tool_now() - t0;
    }
    double ours_ms = 1e3 * tool_median(tim, reps);
    const mbs_ess_stats hs_copy = *mbs_ess_get_stats(wh), *hs = &hs_copy;
    double rms_paper_eps = hopper_rms(wh, 0.13);   /* the paper's ε' on our hopper */
    printf("\n## hopper (sec. 5.1): m = 1 kg, k = 1000 N/m, L0 = 1 m, from rest at z = 2 over 2 s; RMS of z at 1001 samples\n");
    printf("# MuJoCo: dt = 2 ms, semi-implicit Euler; ours: dopri5 steps <= 2 ms, dense output at MuJoCo's samples\n");
    printf("# ours at eps = %.6g: RMS %.6e, %ld steps, %ld rejected, %ld f, %ld h, %ld projections\n", eps_run, rms_ours,
           hs->nsteps, hs->nrejected, hs->nfev, hs->nhev, hs->nprojections);
    printf("# MuJoCo resting hopper sag %.9f m, mg/k = %.9f m\n", sag_mj_hop, hop.mass * hop.g / hop.k);
    printf("# semi-implicit Euler at 2 ms (MuJoCo's integrator on this contact, written out): RMS %.6e, equal-RMS eps %.6g\n",
           rms_sie, eps_sie);
    printf("# ours at the paper's eps' = 0.13: RMS %.6e\n", rms_paper_eps);
    double free_rms, free_ms;
    long free_steps;
    /* our error when the steps are left to the error control (no 2 ms cap) */
    {
        mbs_ess_system sys = {2, 2, hopper_f, hopper_h, hopper_dh, (void *)&hop};
        mbs_ess_options o;
        mbs_ess_default_options(&o);
        o.eps = eps_run;
        double x0[2] = {2, 0};
        for (int r = 0; r < reps; r++) {
            double t0 = tool_now();
            if (mbs_ess_init(wh, &sys, &o, 0, x0, &err) || mbs_ess_integrate(wh, HOP_T, hop_t, HOP_N + 1, hx, 2, &err))
                die("hopper", &err);
            tim[r] = tool_now() - t0;
        }
        free_rms = rms_z(hx, 2);
        free_ms = 1e3 * tool_median(tim, reps);
        free_steps = mbs_ess_get_stats(wh)->nsteps;
        printf("# ours at the same eps without the 2 ms cap: RMS %.6e, %.4f ms, %ld steps\n", free_rms, free_ms, free_steps);
    }
    mbs_ess_free(wh);
    bench_doc_begin(&doc, "ess-hopper");
    if (!isnan(rms_mj))
        bench_doc_printf(&doc, "MuJoCo's resting sag is %.6f mm (mg/k = %.6f mm), and its RMS error (%.2e) is within %.1f %% of "
                         "the written-out semi-implicit Euler hopper's (%.2e).\n\n", 1e3 * sag_mj_hop, 1e3 * hop.mass * hop.g / hop.k,
                         rms_mj, 100 * fabs(rms_mj / rms_sie - 1), rms_sie);
    else
        bench_doc_printf(&doc, "MuJoCo was not installed for this run: ε′ is calibrated against the written-out semi-implicit "
                         "Euler hopper (RMS %.2e).\n\n", rms_sie);
    bench_doc_printf(&doc, "| | ε′ (equal RMS) | ours | MuJoCo | ours / MuJoCo |\n|---|---|---|---|---|\n"
                     "| paper (Python, NumPy; MuJoCo through its Python bindings) | 0.13 | 10.25 ms | 2.44 ms | 4.2 × slower |\n");
    if (!isnan(mj_ms))
        bench_doc_printf(&doc, "| here (C, same machine, same run) | %.2g | %.3g ms | %.3g ms | %.1f × %s |\n", eps_run, ours_ms, mj_ms,
                         mj_ms > ours_ms ? mj_ms / ours_ms : ours_ms / mj_ms, mj_ms > ours_ms ? "faster" : "slower");
    else
        bench_doc_printf(&doc, "| here (C, no MuJoCo: ε′ of the semi-implicit Euler hopper) | %.2g | %.3g ms | n/a | n/a |\n", eps_run,
                         ours_ms);
    bench_doc_printf(&doc, "\nOurs with the paper's dopri5 steps ≤ 2 ms: %ld steps, %ld field evaluations, %ld projections. Left to "
                     "its error control at the same ε: %ld steps and %.3g ms for RMS %.2e", hs->nsteps, hs->nfev, hs->nprojections,
                     free_steps, free_ms, free_rms);
    if (!isnan(mj_ms)) bench_doc_printf(&doc, ", %.0f × faster than MuJoCo", mj_ms / free_ms);
    bench_doc_printf(&doc, ". At the paper's ε′ = 0.13 ours has an RMS error of %.2g m.", rms_paper_eps);
    if (!isnan(mj_ms))
        bench_doc_printf(&doc, " Our C against the paper's Python: %.0f × faster for the integrator, %.1f × for MuJoCo (C API here, "
                         "Python bindings there).", 10.25 / ours_ms, 2.44 / mj_ms);
    bench_doc_printf(&doc, "\n");
    bench_doc_end(&doc, "ess-hopper");

    /* ---- 3. plate on springs */
    static const int nsl[] = {2, 5, 10, 20, 30, 40, 50, 60, 70, 80, 90, 100};
    int nns = (int)(sizeof nsl / sizeof nsl[0]);
    int nic = quick ? 24 : PLATE_IC;
    double z0s[PLATE_IC], th0s[PLATE_IC];
    unsigned long long seed = 2024;
    for (int i = 0; i < PLATE_IC; i++) {
        seed = seed * 6364136223846793005ULL + 1442695040888963407ULL;
        z0s[i] = 2 + (double)(seed >> 11) / 9007199254740992.0;
        seed = seed * 6364136223846793005ULL + 1442695040888963407ULL;
        th0s[i] = -0.1 + 0.2 * (double)(seed >> 11) / 9007199254740992.0;
    }
    double med_ours[16], med_mj[16], xns[16];
    long ev_ours[16];
    printf("\n## plate on springs (sec. 5.2): 1 kg, 2 m, %d starts z0 in (2, 3), theta0 in (-0.1, 0.1), at rest, %.0f s;\n",
           nic, PLATE_T);
    printf("# springs evenly on [-0.9, 0.9], bed stiffness %.0f N/m in total, undamped; ours: eps = %.6g, steps <= 2 ms\n",
           PLATE_KTOT, eps_run);
    printf("%8s %16s %16s %14s %14s\n", "springs", "ours_median_ms", "mujoco_median_ms", "ours_events", "mujoco_maxcon");
    for (int j = 0; j < nns; j++) {
        int ns = nsl[j];
        plate_sys p;
        plate_setup(&p, ns, PLATE_KTOT, PLATE_BTOT);
        mbs_ess *wp = mbs_ess_new(6, 2 * ns, 1, &err);
        if (!wp) die("mbs_ess_new", &err);
        ev_ours[j] = 0;
        for (int i = 0; i < nic; i++) tim[i] = plate_ours(wp, &p, z0s[i], th0s[i], eps_run, PLATE_T, &ev_ours[j]);
        med_ours[j] = 1e3 * tool_median(tim, nic);
        mbs_ess_free(wp);
        med_mj[j] = NAN;
        int maxcon = -1;
#ifdef MBS_HAVE_MUJOCO
        {
            char msg[1024];
            essmj *mp = essmj_plate_new(ns, p.xs, p.mass, p.inertia, p.L0, p.K, p.B, HOP_DT, msg, sizeof msg);
            if (!mp) { fprintf(stderr, "bench_ess: MuJoCo plate: %s\n", msg); return 1; }
            for (int i = 0; i < nic; i++) {
                double q0[3] = {0, z0s[i], th0s[i]};
                double t0 = tool_now();
                essmj_run(mp, q0, (int)(PLATE_T / HOP_DT + 0.5), 1, NULL);
                tim[i] = tool_now() - t0;
            }
            med_mj[j] = 1e3 * tool_median(tim, nic);
            /* how many springs MuJoCo has in contact at the bottom of the first bounce */
            double q0[3] = {0, 2.5, 0.05};
            essmj_run(mp, q0, 0, 1, NULL);
            for (int k = 0; k < 1000; k++) {
                essmj_run(mp, NULL, 1, 1, NULL);
                if (essmj_ncontacts(mp) > maxcon) maxcon = essmj_ncontacts(mp);
            }
            essmj_free(mp);
        }
#endif
        xns[j] = ns;
        printf("%8d %16.4f %16.4f %14.1f %14d\n", ns, med_ours[j], med_mj[j], (double)ev_ours[j] / nic, maxcon);
    }
    double a_o, b_o, a_m = NAN, b_m = NAN;
    fit_line(xns, med_ours, nns, &a_o, &b_o);
#ifdef MBS_HAVE_MUJOCO
    fit_line(xns, med_mj, nns, &a_m, &b_m);
#endif
    printf("# median run time = a + b * springs: ours a = %.4f ms, b = %.3f us; MuJoCo a = %.4f ms, b = %.3f us\n", a_o,
           1e3 * b_o, a_m, 1e3 * b_m);

    /* RMS of z, ours near-exact against MuJoCo, and ours' largest |theta|: 2, 10 and 100 springs */
    double agree[3] = {NAN, NAN, NAN}, tilt_max[3] = {NAN, NAN, NAN};
#ifdef MBS_HAVE_MUJOCO
    static const int nagree[3] = {2, 10, 100};
    /* do the two models describe the same plate? one start, ours near-exact (eps 1e-4, tight
     * tolerances), against MuJoCo's 2 ms steps */
    for (int ia = 0; ia < 3; ia++) {
        int ns = nagree[ia];
        plate_sys p;
        plate_setup(&p, ns, PLATE_KTOT, PLATE_BTOT);
        static double zm[HOP_N + 1], xo[6 * (HOP_N + 1)];
        char msg[1024];
        essmj *mp = essmj_plate_new(ns, p.xs, p.mass, p.inertia, p.L0, p.K, p.B, HOP_DT, msg, sizeof msg);
        mbs_ess *wp = mbs_ess_new(6, 2 * ns, 1, &err);
        if (!mp || !wp) die("plate comparison", &err);
        double q0[3] = {0, 2.5, 0.07}, x0[6] = {0, 2.5, 0.07, 0, 0, 0};
        essmj_run(mp, q0, HOP_N, 1, zm);
        mbs_ess_system sys = {6, 2 * ns, plate_f, plate_h, plate_dh, &p};
        mbs_ess_options o;
        mbs_ess_default_options(&o);
        o.eps = 1e-4;
        o.rtol = 1e-9;
        o.atol = 1e-12;
        o.liveness_c = 1e-2;
        o.liveness_policy = MBS_ESS_LIVENESS_LOCATE;
        if (mbs_ess_init(wp, &sys, &o, 0, x0, &err) || mbs_ess_integrate(wp, HOP_T, hop_t, HOP_N + 1, xo, 6, &err))
            die("plate comparison", &err);
        double sd = 0, th = 0;
        for (int k = 0; k <= HOP_N; k++) {
            sd += (xo[6 * k + 1] - zm[k]) * (xo[6 * k + 1] - zm[k]);
            th = fmax(th, fabs(xo[6 * k + 2]));
        }
        agree[ia] = sqrt(sd / (HOP_N + 1));
        tilt_max[ia] = th;
        printf("# one start (z0 2.5, theta0 0.07), %d springs: RMS of z, ours (eps 1e-4) - MuJoCo = %.3e m; ours' largest |theta| "
               "%.3f rad\n", ns, agree[ia], th);
        mbs_ess_free(wp);
        essmj_free(mp);
    }
#endif

    /* resting plate: sag against Mg/K, both engines, from the equilibrium height with damping */
    double sag_rel_ours = NAN, sag_rel_mj = NAN;
    {
        plate_sys p;
        plate_setup(&p, 10, PLATE_KTOT, 40);
        double expect = p.mass * p.g / PLATE_KTOT;
        mbs_ess *wp = mbs_ess_new(6, 20, 64, &err);
        plate_ours(wp, &p, p.L0 - 0.5 * expect, 0.01, 1e-4, 20, NULL);
        sag_rel_ours = (p.L0 - mbs_ess_state(wp)[1]) / expect - 1;
        mbs_ess_free(wp);
#ifdef MBS_HAVE_MUJOCO
        char msg[1024];
        essmj *mp = essmj_plate_new(p.ns, p.xs, p.mass, p.inertia, p.L0, p.K, p.B, HOP_DT, msg, sizeof msg);
        if (mp) {
            double q0[3] = {0, p.L0 - 0.5 * expect, 0.01};
            essmj_run(mp, q0, 10000, 1, NULL);
            sag_rel_mj = (p.L0 - essmj_qpos(mp)[1]) / expect - 1;
            essmj_free(mp);
        }
#endif
        printf("# resting plate on 10 springs (bed 1000 N/m, 40 N s/m), 20 s: sag / (Mg/K) - 1 = %.3e ours, %.3e MuJoCo\n",
               sag_rel_ours, sag_rel_mj);
    }
    bench_doc_begin(&doc, "ess-plate");
    bench_doc_printf(&doc, "| springs |");
    for (int j = 0; j < nns; j++) bench_doc_printf(&doc, " %d |", nsl[j]);
    bench_doc_printf(&doc, "\n|---|");
    for (int j = 0; j < nns; j++) bench_doc_printf(&doc, "---|");
    bench_doc_printf(&doc, "\n| ours, median ms per trajectory |");
    for (int j = 0; j < nns; j++) bench_doc_printf(&doc, " %.3f |", med_ours[j]);
    bench_doc_printf(&doc, "\n| MuJoCo, median ms per trajectory |");
    for (int j = 0; j < nns; j++) bench_doc_printf(&doc, " %s |", num(b1, sizeof b1, "%.3f", med_mj[j]));
    bench_doc_printf(&doc, "\n| ours, events per trajectory |");
    for (int j = 0; j < nns; j++) bench_doc_printf(&doc, " %.1f |", (double)ev_ours[j] / nic);
    bench_doc_printf(&doc, "\n\nLeast-squares slope of the median against the number of springs (all %d counts), the marginal cost per "
                     "contact: **%.1f µs ours, %s µs MuJoCo** per 2 s trajectory", nns, 1e3 * b_o, num(b1, sizeof b1, "%.1f", 1e3 * b_m));
    if (!isnan(b_m))
        bench_doc_printf(&doc, " (1000 MuJoCo steps: %.0f ns per contact per step); intercepts %.2f ms and %.2f ms; ours %.1f × lower",
                         1e3 * b_m, a_o, a_m, b_m / b_o);
    else
        bench_doc_printf(&doc, "; intercept %.2f ms", a_o);
    if (!isnan(agree[0]))
        bench_doc_printf(&doc, ". One start (z0 2.5, θ0 0.07), ours near-exact (ε = 1e-4) against MuJoCo's 2 ms steps: RMS of z "
                         "%.1e m (10 springs) and %.1e m (100 springs); with 2 springs %.1e m, the plate rocking to |θ| = %.2f rad "
                         "(%.2f and %.2f rad with 10 and 100)", agree[1], agree[2], agree[0], tilt_max[0], tilt_max[1], tilt_max[2]);
    bench_doc_printf(&doc, ". A resting plate on 10 springs sags by Mg/K to a relative %.1e (ours) and %s (MuJoCo).\n", sag_rel_ours,
                     num(b1, sizeof b1, "%.1e", sag_rel_mj));
    bench_doc_end(&doc, "ess-plate");

    /* ---- 4. Solo drop */
    double solo_ms = NAN;
    long solo_steps = 0, solo_fev = 0, solo_rej = 0, solo_proj = 0;
    double solo_z = NAN;
    int solo_ev = 0;
    {
        solo_sys s;
        double x0[64];
        if (solo_setup(&s, MBS_SOURCE_DIR "/urdf/solo12.urdf", 0.30, 0.04, 0.03, x0, &err)) die("solo", &err);
        int n = s.nq + s.nv;
        mbs_ess *ws = mbs_ess_new(n, 8, 256, &err);
        mbs_ess_system sys = {n, 8, solo_f, solo_h, solo_dh, &s};
        mbs_ess_options o;
        mbs_ess_default_options(&o);
        o.eps = 5e-4;
        o.rtol = 1e-6;
        o.atol = 1e-8;
        o.liveness_c = 1e-3;
        o.liveness_policy = MBS_ESS_LIVENESS_LOCATE;
        int sr = quick ? 3 : 11;
        for (int r = 0; r < sr; r++) {
            double t0 = tool_now();
            if (mbs_ess_init(ws, &sys, &o, 0, x0, &err) || mbs_ess_integrate(ws, 1.0, NULL, 0, NULL, n, &err))
                die("solo drop", &err);
            tim[r] = tool_now() - t0;
        }
        solo_ms = 1e3 * tool_median(tim, sr);
        const mbs_ess_stats *st = mbs_ess_get_stats(ws);
        solo_steps = st->nsteps;
        solo_fev = st->nfev;
        solo_rej = st->nrejected;
        solo_proj = st->nprojections;
        solo_z = mbs_ess_state(ws)[2];
        mbs_ess_events(ws, NULL, &solo_ev);
        printf("\n## Solo-12 dropped from 0.30 m (roll 0.04, pitch 0.03), 1 s, spring-damper feet (2000 N/m, 20 N s/m)\n");
        printf("# %ld steps, %ld rejected, %ld f (ABA) evaluations, %d events, %ld projections, base height at 1 s %.4f m, "
               "%.3f ms (median of %d)\n", st->nsteps, st->nrejected, st->nfev, solo_ev, solo_proj, solo_z, solo_ms, sr);
        mbs_ess_free(ws);
        solo_free(&s);
    }
    free(tim);
    bench_doc_begin(&doc, "ess-solo");
    bench_doc_printf(&doc, "1 s in **%.1f ms** (median of %d runs), %ld steps (%ld rejected), %ld ABA calls, %d events, %ld projections; "
                     "base height at 1 s %.4f m.\n", solo_ms, quick ? 3 : 11, solo_steps, solo_rej, solo_fev, solo_ev, solo_proj,
                     solo_z);
    bench_doc_end(&doc, "ess-solo");

    key("ess_order: %.3f\n", order);
    key("ess_order_full_range: %.3f\n", order_all);
    key("ess_order_listing1_step_end: %.3f\n", order_se);
    key("dopri5_order: %.3f\n", p5);
    key("hopper_rms_mujoco: %s\n", num(b1, sizeof b1, "%.6e", rms_mj));
    key("hopper_eps_equal_rms: %s\n", num(b1, sizeof b1, "%.6f", eps_eq));
    key("hopper_rms_semi_implicit_euler: %.6e\n", rms_sie);
    key("hopper_eps_equal_rms_semi_implicit_euler: %.6f\n", eps_sie);
    key("hopper_rms_ours: %.6e\n", rms_ours);
    key("hopper_ours_ms: %.4f\n", ours_ms);
    key("hopper_mujoco_ms: %s\n", num(b1, sizeof b1, "%.4f", mj_ms));
    key("plate_cost_per_contact_ours_us: %.3f\n", 1e3 * b_o);
    key("plate_cost_per_contact_mujoco_us: %s\n", num(b1, sizeof b1, "%.3f", 1e3 * b_m));
    key("plate_median_ms_100_ours: %.4f\n", med_ours[nns - 1]);
    key("plate_median_ms_100_mujoco: %s\n", num(b1, sizeof b1, "%.4f", med_mj[nns - 1]));
    key("plate_sag_rel_err_ours: %.3e\n", sag_rel_ours);
    key("plate_sag_rel_err_mujoco: %s\n", num(b1, sizeof b1, "%.3e", sag_rel_mj));
    key("solo_drop_ms: %.3f\n", solo_ms);
    key("solo_drop_steps: %ld\n", solo_steps);
    key("solo_drop_aba_calls: %ld\n", solo_fev);
    printf("\n");
    bench_doc_finish(&doc, "ess", &keys);
    return 0;
}
