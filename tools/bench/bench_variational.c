/* bench_variational.c — the evaluation of Lee, Liu, Park, Srinivasa, "A linear-time variational
 * integrator for multibody systems" (WAFR 2016), section 4, on this engine:
 *   fig. 2  energy of the 10-link pendulum under gravity over 10⁵ steps of 1 ms, the variational
 *           integrator (DRNEA + RIQN) against semi-implicit Euler;
 *   fig. 3  time per step against DOF (2 … 100) of DRNEA + RIQN, DRNEA + Newton (exact Jacobian,
 *           Algorithm 4) and DRNEA + Broyden, on the N-link roll pendulum without gravity from
 *           random q, q̇ in ±π/2 (the paper's code: 1.5 m links, 1000 steps of 1 ms, tol 1e-9·N,
 *           at most 20 iterations), with the growth exponent fitted from 10 to 100 DOF;
 *           The paper's text says it timed 10k frames, its code 1000 steps (numSteps = 1e+3, "10 sec"
 *           in its comment): fig. 3 runs 1000; the paper's 10k frames are run at 10 and 100 DOF
 *           (one state each) beside it;
 *   fig. 3, SVI  the paper's other residual: Johnson and Murphey's scalable variational integrator
 *           (tools/bench/svi.c: midpoint Ld in generalized coordinates, O(n²) residual, O(n³) exact
 *           Jacobian) with Newton and with RIQN's update, against DRNEA with the same two, at 10, 20,
 *           50 and 100 DOF on fig. 3's states, tolerance and steps, and the cost of one residual and
 *           one exact Jacobian of each;
 *   fig. 4  residual per iteration in one step from the zero configuration, and iterations per
 *           step over 1000 steps, on 50 links under gravity (tol 1e-8, IG3).
 * A full run (not --quick) also writes the tables of docs/benchmarks.md into <data>/tables.md
 * (tools/bench/bench_doc.h), which tools/bench/bench_doc.py puts into the document (make bench-variational).
 * Writes the data under build/ and, when gnuplot is installed, the plots into docs/images/
 * (tools/bench/plot_variational.gp); ends with `key: value` lines.
 *   bench_variational [--quick] [--data DIR] [--images DIR]
 * Timings: the median over repeated runs of the same 1000 steps (the machine is shared). */
#include <errno.h>
#include <math.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/stat.h>
#include <time.h>

#include "mbs.h"
/* a benchmark reads the system's contact state and sets its state directly, as the tests do */
#include "../../src/contact/contact_internal.h"
#include "bench_tool.h"
#include "bench_doc.h"
#include "svi.h"

#ifndef MBS_SOURCE_DIR
#define MBS_SOURCE_DIR "."
#endif
#define PI 3.14159265358979323846

static double uniform(unsigned long long *s, double lo, double hi)   /* splitmix64 */
{
    unsigned long long z = (*s += 0x9e3779b97f4a7c15ULL);
    z = (z ^ (z >> 30)) * 0xbf58476d1ce4e5b9ULL;
    z = (z ^ (z >> 27)) * 0x94d049bb133111ebULL;
    z ^= z >> 31;
    return lo + (hi - lo) * (double)(z >> 11) * (1.0 / 9007199254740992.0);
}

/* The paper's N-link roll pendulum, as its code builds it with DART's defaults: links of 1 kg
 * with a rotational inertia of 1 kg m² about their centre, 0.75 m along the link, joints 1.5 m
 * apart, every joint rolling about x (the same model as urdf/chain10.urdf). */
static mbs_model *pendulum(int n, int gravity)
{
    static const double I[9] = {1, 0, 0, 0, 1, 0, 0, 0, 1};
    const mbs_chain_options opt = {1.5, 1.0, 0, 0, I, 1, 1, 0};   /* the paper's chain: 1.5 m, 1 kg, about x */
    mbs_model *m = mbs_model_chain(n, &opt, NULL);
    if (m && !gravity) {
        const double g0[3] = {0, 0, 0};
        mbs_model_set_gravity(m, g0);
    }
    return m;
}

static void random_state(int n, unsigned long long seed, double *q, double *v)
{
    for (int k = 0; k < n; k++) {
        q[k] = uniform(&seed, -PI / 2, PI / 2);
        v[k] = uniform(&seed, -PI / 2, PI / 2);
    }
}

/* Least-squares line y = a + b x. */
static void fit(const double *x, const double *y, int n, double *a, double *b)
{
    double sx = 0, sy = 0, sxx = 0, sxy = 0;
    for (int k = 0; k < n; k++) { sx += x[k]; sy += y[k]; sxx += x[k] * x[k]; sxy += x[k] * y[k]; }
    *b = (n * sxy - sx * sy) / (n * sxx - sx * sx);
    *a = (sy - *b * sx) / n;
}

/* mkdir -p */
/* ---------------------------------------------------------------- fig. 2: energy */

typedef struct energy_result {
    double drift, spread, drift_end, spread_end, mean_iter;
    int nonconverged;
} energy_result;

/* Runs a stepper on the 10-link pendulum and returns the energy trend over the run (fitted
 * line, J per nsteps) and the largest deviation from that line, for the energy taken at the
 * middle of each step — where the velocity that moved q lives — and at its end. */
static energy_result energy_run(const char *stepper, int nsteps, double *E_mid, double *E_end)
{
    energy_result r = {0, 0, 0, 0, 0, 0};
    mbs_model *m = pendulum(10, 1);
    mbs_system *s = mbs_system_new(m, 0, NULL);
    random_state(10, 2016, s->q, s->v);
    mbs_system_finalize(s, NULL);
    mbs_stepper *st = mbs_stepper_new(stepper, s, NULL, 0, NULL);
    double qprev[10], qmid[10];
    long iters = 0;
    for (int k = 0; k < nsteps; k++) {
        mbs_step_stats stats;
        memcpy(qprev, s->q, sizeof qprev);
        mbs_stepper_step(st, 1e-3, &stats);
        iters += stats.iterations;
        r.nonconverged += stats.nonconverged;
        mbs_interpolate(m, qprev, s->q, 0.5, qmid);
        E_mid[k] = mbs_kinetic_energy(m, s->data, qmid, s->v) + mbs_potential_energy(m, s->data, qmid);
        E_end[k] = mbs_kinetic_energy(m, s->data, s->q, s->v) + mbs_potential_energy(m, s->data, s->q);
    }
    double *x = malloc(sizeof(double) * (size_t)nsteps), a, b;
    for (int k = 0; k < nsteps; k++) x[k] = k;
    for (int pass = 0; pass < 2; pass++) {
        const double *E = pass ? E_end : E_mid;
        fit(x, E, nsteps, &a, &b);
        double w = 0;
        for (int k = 0; k < nsteps; k++) w = fmax(w, fabs(E[k] - a - b * k));
        if (pass) { r.drift_end = b * nsteps; r.spread_end = w; }
        else { r.drift = b * nsteps; r.spread = w; }
    }
    r.mean_iter = (double)iters / nsteps;
    free(x);
    mbs_stepper_free(st);
    mbs_system_free(s);
    mbs_model_free(m);
    return r;
}

/* ---------------------------------------------------------------- fig. 3: time per step */

typedef struct run_result {
    double us_per_step, mean_iter;
    int nonconverged;
} run_result;

/* q is still a state: every coordinate finite */
static int finite_state(const double *q, int n)
{
    for (int k = 0; k < n; k++)
        if (!isfinite(q[k])) return 0;
    return 1;
}

/* One step of a variational integrator into qc, from qb with the velocity v0 (first) or from
 * (qa, qb): MBS_OK or the solver's error, with its iterations, convergence and final residual. */
typedef int (*vi_step)(void *ctx, int first, double dt, const double *qa, const double *qb, const double *v0,
                       double *qc, int *iterations, int *converged, double *residual);

/* nsteps steps of an integrator from (q0, v0) (begin, solve, shift, as the stepper does them), up to
 * the first step whose solve fails or leaves q not finite: the chain has whipped beyond what a 1 ms
 * step resolves (at 80 and 100 links some of fig. 3's states do, after a few hundred steps, with
 * every solver and both residuals), and the steps after it would time NaN arithmetic. Returns the
 * wall time; adds the steps done to *done, their iterations to *iters, the ones that did not
 * converge to *nonconverged and, unless at_floor is NULL, the ones that ended at the residual's
 * rounding floor above tol to *at_floor. */
static double run_chain(vi_step step, void *ctx, int nq, double tol, double dt, const double *q0, const double *v0,
                        int nsteps, long *iters, int *nonconverged, long *done, long *at_floor)
{
    double *qa = malloc(sizeof(double) * (size_t)nq), *qb = malloc(sizeof(double) * (size_t)nq);
    double *qc = malloc(sizeof(double) * (size_t)nq);
    double t0 = tool_now();
    memcpy(qb, q0, sizeof(double) * (size_t)nq);
    for (int k = 0; k < nsteps; k++) {
        int it = 0, conv = 0;
        double residual = 0;
        if (step(ctx, k == 0, dt, qa, qb, v0, qc, &it, &conv, &residual) != MBS_OK || !finite_state(qc, nq)) break;
        *iters += it;
        *nonconverged += !conv;
        if (at_floor) *at_floor += conv && residual > tol;
        ++*done;
        double *tmp = qa;
        qa = qb; qb = qc; qc = tmp;
    }
    double t = tool_now() - t0;
    free(qa); free(qb); free(qc);
    return t;
}

/* the engine's step: DRNEA (Algorithm 2) with the solver of opt */
typedef struct engine_ctx { const mbs_model *m; mbs_data *d; mbs_vi *w; const mbs_vi_options *opt; } engine_ctx;
static int engine_step(void *ctx, int first, double dt, const double *qa, const double *qb, const double *v0,
                       double *qc, int *iterations, int *converged, double *residual)
{
    engine_ctx *c = ctx;
    mbs_vi_result res = {0};
    if (first) mbs_vi_begin_velocity(c->m, c->w, dt, qb, v0, NULL, NULL);
    else mbs_vi_begin(c->m, c->w, dt, dt, qa, qb, NULL, NULL);
    int rc = mbs_vi_solve(c->m, c->d, c->w, c->opt, qc, &res);
    *iterations = res.iterations;
    *converged = res.converged;
    *residual = res.residual;
    return rc;
}

/* nsteps steps of the engine's integrator (run_chain) */
static double run_steps(const mbs_model *m, mbs_data *d, mbs_vi *w, const mbs_vi_options *opt, double dt,
                        const double *q0, const double *v0, int nsteps, long *iters, int *nonconverged, long *done)
{
    engine_ctx c = {m, d, w, opt};
    return run_chain(engine_step, &c, mbs_model_nq(m), opt->tol, dt, q0, v0, nsteps, iters, nonconverged, done, NULL);
}

/* A solver's time per step (µs) and iterations per step over the states no solver diverged on
 * (bad[k] = 0), from the per-state times, iterations and steps done of one repetition; over every
 * state, each up to its divergence, when all diverged. */
static void over_states(const double *ts, const long *its, const long *dns, const int *bad, int nseed, double *us,
                        double *mean_it)
{
    int nok = 0;
    for (int k = 0; k < nseed; k++) nok += !bad[k];
    double t = 0;
    long it = 0, dn = 0;
    for (int k = 0; k < nseed; k++)
        if (!nok || !bad[k]) { t += ts[k]; it += its[k]; dn += dns[k]; }
    *us = t / (double)dn * 1e6;
    if (mean_it) *mean_it = (double)it / (double)dn;
}

/* One RIQN iteration alone — DRNEA (Algorithm 2) and the ABI solve — at a fixed state: the
 * median over batches, in µs. Its growth with n is the algorithms' own, free of how many
 * iterations the dynamics of the chain need. */
static double time_iteration(const mbs_model *m, mbs_data *d, mbs_vi *w, const double *q0, const double *v0)
{
    int n = mbs_model_nv(m);
    double *q1 = malloc(sizeof(double) * (size_t)n), *e = malloc(sizeof(double) * (size_t)n), t[15];
    mbs_vi_options opt;
    mbs_vi_default_options(&opt);
    mbs_vi_result r;
    mbs_vi_begin_velocity(m, w, 1e-3, q0, v0, NULL, NULL);
    mbs_vi_solve(m, d, w, &opt, q1, &r);   /* leaves the ABI factor at q^k */
    int reps = 20000 / n + 10;
    for (int b = 0; b < 15; b++) {
        double t0 = tool_now();
        for (int k = 0; k < reps; k++) {
            mbs_vi_residual(m, w, q1, e);
            mbs_abi_solve(m, d, e, 1, n);
        }
        t[b] = (tool_now() - t0) / reps * 1e6;
    }
    free(q1); free(e);
    return tool_median(t, 15);
}

/* Algorithm 4 alone (one exact Jacobian, with the residual): the median over batches, in µs. */
static double time_jacobian(const mbs_model *m, mbs_data *d, mbs_vi *w, const double *q0, const double *v0)
{
    int n = mbs_model_nv(m);
    double *q1 = malloc(sizeof(double) * (size_t)n), *e = malloc(sizeof(double) * (size_t)n);
    double *J = malloc(sizeof(double) * (size_t)n * (size_t)n), t[9];
    mbs_vi_result r;
    mbs_vi_begin_velocity(m, w, 1e-3, q0, v0, NULL, NULL);
    mbs_vi_solve(m, d, w, NULL, q1, &r);
    int reps = 2000 / n + 5;
    for (int b = 0; b < 9; b++) {
        double t0 = tool_now();
        for (int k = 0; k < reps; k++) mbs_vi_jacobian(m, w, q1, e, J, n);
        t[b] = (tool_now() - t0) / reps * 1e6;
    }
    free(q1); free(e); free(J);
    return tool_median(t, 9);
}

/* ---------------------------------------------------------------- fig. 3 against SVI */

/* the SVI baseline's step (tools/bench/svi.c) */
typedef struct svi_ctx { svi *sv; mbs_data *d; const svi_options *opt; } svi_ctx;
static int svi_step(void *ctx, int first, double dt, const double *qa, const double *qb, const double *v0, double *qc,
                    int *iterations, int *converged, double *residual)
{
    svi_ctx *c = ctx;
    svi_result res = {0};
    if (first) svi_begin_velocity(c->sv, dt, qb, v0);
    else svi_begin(c->sv, dt, qa, qb);
    int rc = svi_solve(c->sv, c->d, c->opt, qc, &res);
    *iterations = res.iterations;
    *converged = res.converged;
    *residual = res.residual;
    return rc;
}

/* nsteps SVI steps (run_chain), the steps that ended at the residual's rounding floor above tol
 * added to *at_floor */
static double run_svi(svi *sv, mbs_data *d, const svi_options *opt, double dt, const double *q0, const double *v0,
                      int n, int nsteps, long *iters, int *nonconverged, long *done, long *at_floor)
{
    svi_ctx c = {sv, d, opt};
    return run_chain(svi_step, &c, n, opt->tol, dt, q0, v0, nsteps, iters, nonconverged, done, at_floor);
}

/* Case c of the comparison with SVI — 0 DRNEA+RIQN, 1 DRNEA+Newton, 2 SVI+RIQN, 3 SVI+Newton —, each
 * to tol 1e-9 n with at most 20 iterations: nsteps steps at 1 ms from (q0, v0) (run_chain). */
static double run_svi_case(int c, const mbs_model *m, mbs_data *d, mbs_vi *w, svi *sv, int n, const double *q0,
                           const double *v0, int nsteps, long *iters, int *nonconverged, long *done, long *at_floor)
{
    if (c < 2) {
        mbs_vi_options opt;
        mbs_vi_default_options(&opt);
        opt.solver = c ? MBS_VI_NEWTON : MBS_VI_RIQN;
        opt.tol = 1e-9 * n;
        opt.max_iter = 20;
        return run_steps(m, d, w, &opt, 1e-3, q0, v0, nsteps, iters, nonconverged, done);
    }
    svi_options opt;
    svi_default_options(&opt);
    opt.solver = c == 3 ? SVI_NEWTON : SVI_RIQN;
    opt.tol = 1e-9 * n;
    opt.max_iter = 20;
    return run_svi(sv, d, &opt, 1e-3, q0, v0, n, nsteps, iters, nonconverged, done, at_floor);
}

/* One residual and one exact Jacobian (with its residual) of each formulation at the root of a first
 * step from (q0, v0): the medians over batches, in µs: [0] DRNEA (Algorithm 2), [1] SVI residual,
 * [2] Algorithm 4, [3] SVI's Jacobian. */
static void time_evaluations(const mbs_model *m, mbs_data *d, mbs_vi *w, svi *sv, const double *q0, const double *v0,
                             double out[4])
{
    int n = mbs_model_nv(m);
    double *q1 = malloc(sizeof(double) * (size_t)n), *e = malloc(sizeof(double) * (size_t)n);
    double *J = malloc(sizeof(double) * (size_t)n * (size_t)n), t[4][7];
    mbs_vi_result r;
    mbs_vi_begin_velocity(m, w, 1e-3, q0, v0, NULL, NULL);
    mbs_vi_solve(m, d, w, NULL, q1, &r);
    svi_begin_velocity(sv, 1e-3, q0, v0);
    const int reps[4] = {20000 / n + 10, 20000 / (n * n) + 10, 2000 / n + 5, 200000 / (n * n * n) + 3};
    for (int b = 0; b < 7; b++)
        for (int c = 0; c < 4; c++) {
            double t0 = tool_now();
            for (int k = 0; k < reps[c]; k++) switch (c) {
                case 0: mbs_vi_residual(m, w, q1, e); break;
                case 1: svi_residual(sv, q1, e); break;
                case 2: mbs_vi_jacobian(m, w, q1, e, J, n); break;
                default: svi_jacobian(sv, q1, e, J, n); break;
                }
            t[c][b] = (tool_now() - t0) / reps[c] * 1e6;
        }
    for (int c = 0; c < 4; c++) out[c] = tool_median(t[c], 7);
    free(q1); free(e); free(J);
}

/* ---------------------------------------------------------------- main */

int main(int argc, char **argv)
{
    tool_single_thread_blas(argv);
    tool_args args;
    int status = tool_parse_args(argc, argv, "bench_variational", MBS_SOURCE_DIR, NULL, &args);
    if (status) return status;
    int quick = args.quick;
    const char *data = args.data, *images = args.images;
    bench_doc doc;
    bench_doc_open(&doc, data, "make bench-variational", !quick);
    double t_start = tool_now();
    printf("# bench_variational: Lee et al. 2016, section 4; run %s; %s\n", doc.stamp, doc.machine);

    /* fig. 2 */
    const int nE = quick ? 20000 : 100000;
    double *Ev = malloc(sizeof(double) * (size_t)nE), *Ev_end = malloc(sizeof(double) * (size_t)nE);
    double *Es = malloc(sizeof(double) * (size_t)nE), *Es_end = malloc(sizeof(double) * (size_t)nE);
    energy_result ev = energy_run("variational", nE, Ev, Ev_end);
    energy_result es = energy_run("symplectic_euler", nE, Es, Es_end);
    FILE *f = tool_open_data("bench_variational", data, "energy.dat");
    if (f) {
        fprintf(f, "# frame  E_variational(mid)  E_variational(end)  E_symplectic_euler(mid)  E_symplectic_euler(end)  [J]\n");
        for (int k = 0; k < nE; k += 10) fprintf(f, "%d %.6f %.6f %.6f %.6f\n", k + 1, Ev[k], Ev_end[k], Es[k], Es_end[k]);
        fclose(f);
    }
    const double scale = 1e5 / nE;
    printf("# fig. 2: 10-link pendulum (1.5 m, 1 kg links) under gravity, %d steps of 1 ms, energy at mid-step\n", nE);
    printf("#   variational:      E0 %.3f J, trend %+.3e J per 1e5 steps, oscillation +-%.3f J, %.2f iterations/step, "
           "%d nonconverged\n", Ev[0], ev.drift * scale, ev.spread, ev.mean_iter, ev.nonconverged);
    printf("#   symplectic_euler: E0 %.3f J, trend %+.3e J per 1e5 steps, oscillation +-%.3f J\n", Es[0],
           es.drift * scale, es.spread);
    printf("#   energy at the step's end instead: variational trend %+.3e, oscillation +-%.3f; symplectic_euler trend "
           "%+.3e, oscillation +-%.3f\n", ev.drift_end * scale, ev.spread_end, es.drift_end * scale, es.spread_end);
    fflush(stdout);

    /* fig. 3 */
    static const int dofs_full[] = {2, 3, 4, 5, 6, 7, 8, 9, 10, 20, 30, 40, 50, 60, 70, 80, 90, 100};
    static const int dofs_quick[] = {2, 5, 10, 20, 50, 100};
    const int *dofs = quick ? dofs_quick : dofs_full;
    const int ndofs = quick ? 6 : (int)(sizeof dofs_full / sizeof *dofs_full);
    const int nsteps = quick ? 200 : 1000;
    enum { NSOLVER = 4, NSEED = 3 };
    static const char *solver_names[NSOLVER] = {"riqn", "newton", "broyden", "tree_newton"};
    run_result tr[32][NSOLVER];
    double titer[32], tjac[32];
    char diverged[64][80];
    int ndiverged = 0, nbad[32] = {0};
    printf("# fig. 3: N-link roll pendulum without gravity, %d random states x %d steps of 1 ms, tol 1e-9 x DOF, at most 20 "
           "iterations, IG3;\n#   median us per step over repetitions (mean iterations), and us per RIQN iteration alone\n"
           "#  DOF %18s %18s %18s %18s %10s\n", NSEED, nsteps, "DRNEA+RIQN", "DRNEA+Newton", "DRNEA+Broyden",
           "tree Newton", "iteration");
    for (int i = 0; i < ndofs; i++) {
        int n = dofs[i];
        mbs_model *m = pendulum(n, 0);
        mbs_data *d = mbs_data_new(m);
        mbs_vi *w = mbs_vi_new(m, NULL);
        double *q0 = malloc(sizeof(double) * (size_t)n * NSEED), *v0 = malloc(sizeof(double) * (size_t)n * NSEED);
        for (int k = 0; k < NSEED; k++)
            random_state(n, 1000 + 100 * (unsigned long long)k + (unsigned long long)n, q0 + n * k, v0 + n * k);
        printf("  %4d", n);
        titer[i] = time_iteration(m, d, w, q0, v0);
        tjac[i] = n == 10 || n == 100 ? time_jacobian(m, d, w, q0, v0) : 0;
        /* the solvers take turns within each repetition, so that a burst of load on the shared
         * machine hits all of them; the median over repetitions. A state on which a solver diverges
         * (the same state for all of them: the chain's dynamics at 1 ms, not the solver) is reported
         * and left out of every solver's figures, and not run again. */
        const int reps = 3;
        double t[NSOLVER][8], ts[NSOLVER][NSEED], mean_it[NSOLVER];
        long its[NSOLVER][NSEED], dns[NSOLVER][NSEED];
        int ncs[NSOLVER][NSEED], bad[NSEED] = {0};
        for (int rep = 0; rep < reps; rep++) {
            for (int s = 0; s < NSOLVER; s++) {
                mbs_vi_options opt;
                mbs_vi_default_options(&opt);
                opt.solver = (mbs_vi_solver)s;
                opt.tol = 1e-9 * n;
                opt.max_iter = 20;
                for (int k = 0; k < NSEED; k++) {
                    if (rep > 0 && bad[k]) continue;
                    long it = 0, dn = 0;
                    int nc = 0;
                    ts[s][k] = run_steps(m, d, w, &opt, 1e-3, q0 + n * k, v0 + n * k, nsteps, &it, &nc, &dn);
                    if (rep > 0) continue;
                    its[s][k] = it; dns[s][k] = dn; ncs[s][k] = nc;
                    if (dn < nsteps) {
                        bad[k] = 1;
                        if (ndiverged < 64)
                            snprintf(diverged[ndiverged], sizeof diverged[0], "%d DOF state %d %s at step %ld", n, k,
                                     solver_names[s], dn + 1);
                        ndiverged++;
                    }
                }
            }
            for (int s = 0; s < NSOLVER; s++)
                over_states(ts[s], its[s], dns[s], bad, NSEED, &t[s][rep], rep == 0 ? &mean_it[s] : NULL);
        }
        for (int k = 0; k < NSEED; k++) nbad[i] += bad[k];
        for (int s = 0; s < NSOLVER; s++) {
            tr[i][s].us_per_step = tool_median(t[s], reps);
            tr[i][s].mean_iter = mean_it[s];
            tr[i][s].nonconverged = 0;
            for (int k = 0; k < NSEED; k++) tr[i][s].nonconverged += bad[k] ? 0 : ncs[s][k];
            printf(" %10.2f (%4.2f)", tr[i][s].us_per_step, tr[i][s].mean_iter);
        }
        printf(" %10.3f\n", titer[i]);
        fflush(stdout);
        free(q0); free(v0);
        mbs_vi_free(w);
        mbs_data_free(d);
        mbs_model_free(m);
    }
    printf("#   runs that diverged (a solve failed or q stopped being finite; their states are left out at that DOF): %d%s",
           ndiverged, ndiverged ? ":" : "\n");
    for (int k = 0; k < ndiverged && k < 64; k++) printf(" %s%s", diverged[k], k + 1 < ndiverged && k < 63 ? "," : "\n");
    f = tool_open_data("bench_variational", data, "performance.dat");
    if (f) {
        fprintf(f, "# DOF  us/step: RIQN Newton Broyden tree-Newton   mean iterations: RIQN Newton Broyden tree-Newton"
                   "   us/RIQN iteration\n");
        for (int i = 0; i < ndofs; i++)
            fprintf(f, "%d %.4f %.4f %.4f %.4f %.3f %.3f %.3f %.3f %.4f\n", dofs[i], tr[i][0].us_per_step,
                    tr[i][1].us_per_step, tr[i][2].us_per_step, tr[i][3].us_per_step, tr[i][0].mean_iter,
                    tr[i][1].mean_iter, tr[i][2].mean_iter, tr[i][3].mean_iter, titer[i]);
        fclose(f);
    }
    /* growth exponents: log-log slope from 10 to 100 DOF */
    double expo[NSOLVER], lx[32], ly[32];
    int i10 = -1, i100 = -1;
    for (int s = 0; s < NSOLVER; s++) {
        int np = 0;
        for (int i = 0; i < ndofs; i++)
            if (dofs[i] >= 10) { lx[np] = log(dofs[i]); ly[np] = log(tr[i][s].us_per_step); np++; }
        double a;
        fit(lx, ly, np, &a, &expo[s]);
    }
    double iter_expo;
    {
        int np = 0;
        for (int i = 0; i < ndofs; i++)
            if (dofs[i] >= 10) { lx[np] = log(dofs[i]); ly[np] = log(titer[i]); np++; }
        double a;
        fit(lx, ly, np, &a, &iter_expo);
    }
    for (int i = 0; i < ndofs; i++) {
        if (dofs[i] == 10) i10 = i;
        if (dofs[i] == 100) i100 = i;
    }

    /* fig. 3 against SVI (the paper's "SVI" curves): the same chains, states, tolerance and steps, the
     * two residuals under the same two root updates, taking turns within each repetition. SVI + Newton
     * costs ~10 ms a step at 100 DOF, so 100 DOF runs once (3000 steps, ~30 s), 50 thrice, 10 and 20
     * five times (they are short, and the machine's load shows most on short runs). */
    static const int svi_dofs[] = {10, 20, 50, 100};
    enum { NSVI = 4, NSVIS = 4 };
    static const char *svi_names[NSVIS] = {"DRNEA+RIQN", "DRNEA+Newton", "SVI+RIQN", "SVI+Newton"};
    double svi_us[NSVI][NSVIS], svi_it[NSVI][NSVIS], svi_eval[NSVI][4];
    int svi_nc[NSVI][NSVIS];
    long svi_done[NSVI][NSVIS], svi_floor[NSVI][NSVIS];
    char svi_diverged[16][80];
    int nsvi_diverged = 0;
    printf("# fig. 3 against SVI (Johnson & Murphey 2009, tools/bench/svi.c): %d random states x %d steps of 1 ms, tol 1e-9 x DOF, at "
           "most 20 iterations, IG3;\n#   us per step (mean iterations; median of the repetitions), then us per evaluation: "
           "residual DRNEA / SVI, exact Jacobian Algorithm 4 / SVI\n#  DOF", NSEED, nsteps);
    for (int k = 0; k < NSVIS; k++) printf(" %18s", svi_names[k]);
    printf(" %10s %10s %11s %11s\n", "res DRNEA", "res SVI", "jac Alg. 4", "jac SVI");
    for (int i = 0; i < NSVI; i++) {
        int n = svi_dofs[i];
        mbs_model *m = pendulum(n, 0);
        mbs_data *d = mbs_data_new(m);
        mbs_vi *w = mbs_vi_new(m, NULL);
        svi *sv = svi_new(m, NULL);
        double *q0 = malloc(sizeof(double) * (size_t)n * NSEED), *v0 = malloc(sizeof(double) * (size_t)n * NSEED);
        for (int k = 0; k < NSEED; k++)   /* fig. 3's states */
            random_state(n, 1000 + 100 * (unsigned long long)k + (unsigned long long)n, q0 + n * k, v0 + n * k);
        printf("  %4d", n);
        fflush(stdout);
        time_evaluations(m, d, w, sv, q0, v0, svi_eval[i]);
        /* a short untimed run of each first: the first timed run after a new model otherwise reads high */
        for (int c = 0; c < NSVIS; c++) {
            long it = 0, dn = 0, fl = 0;
            int nc = 0;
            run_svi_case(c, m, d, w, sv, n, q0, v0, 20, &it, &nc, &dn, &fl);
        }
        const int reps = quick || n > 50 ? 1 : n > 20 ? 3 : 5;
        double t[NSVIS][5], ts[NSVIS][NSEED];
        long its[NSVIS][NSEED], dns[NSVIS][NSEED], fls[NSVIS][NSEED];
        int ncs[NSVIS][NSEED], bad[NSEED] = {0};
        for (int rep = 0; rep < reps; rep++) {
            for (int c = 0; c < NSVIS; c++)
                for (int k = 0; k < NSEED; k++) {
                    if (rep > 0 && bad[k]) continue;   /* as in fig. 3: a diverging state is left out */
                    long it = 0, dn = 0, fl = 0;
                    int nc = 0;
                    ts[c][k] = run_svi_case(c, m, d, w, sv, n, q0 + n * k, v0 + n * k, nsteps, &it, &nc, &dn, &fl);
                    if (rep > 0) continue;
                    its[c][k] = it; dns[c][k] = dn; fls[c][k] = fl; ncs[c][k] = nc;
                    if (dn < nsteps) {
                        bad[k] = 1;
                        if (nsvi_diverged < 16)
                            snprintf(svi_diverged[nsvi_diverged], sizeof svi_diverged[0], "%d DOF state %d %s at step %ld", n,
                                     k, svi_names[c], dn + 1);
                        nsvi_diverged++;
                    }
                }
            for (int c = 0; c < NSVIS; c++)
                over_states(ts[c], its[c], dns[c], bad, NSEED, &t[c][rep], rep == 0 ? &svi_it[i][c] : NULL);
        }
        for (int c = 0; c < NSVIS; c++) {
            svi_nc[i][c] = 0;
            svi_done[i][c] = svi_floor[i][c] = 0;
            for (int k = 0; k < NSEED; k++)
                if (!bad[k]) { svi_nc[i][c] += ncs[c][k]; svi_done[i][c] += dns[c][k]; svi_floor[i][c] += fls[c][k]; }
        }
        for (int c = 0; c < NSVIS; c++) {
            svi_us[i][c] = tool_median(t[c], reps);
            printf(" %10.2f (%4.2f)", svi_us[i][c], svi_it[i][c]);
        }
        printf(" %10.2f %10.2f %11.1f %11.1f\n", svi_eval[i][0], svi_eval[i][1], svi_eval[i][2], svi_eval[i][3]);
        fflush(stdout);
        free(q0); free(v0);
        svi_free(sv);
        mbs_vi_free(w);
        mbs_data_free(d);
        mbs_model_free(m);
    }
    printf("#   runs that diverged (their states left out at that DOF): %d%s", nsvi_diverged, nsvi_diverged ? ":" : "\n");
    for (int k = 0; k < nsvi_diverged && k < 16; k++)
        printf(" %s%s", svi_diverged[k], k + 1 < nsvi_diverged && k < 15 ? "," : "\n");
    printf("#   per DOF, over the states kept: steps timed, steps that stopped above tolerance, and (SVI) steps that ended at "
           "its residual's rounding floor above tolerance\n");
    for (int i = 0; i < NSVI; i++) {
        printf("#   %4d:", svi_dofs[i]);
        for (int c = 0; c < NSVIS; c++) {
            printf(" %s %ld, %d", svi_names[c], svi_done[i][c], svi_nc[i][c]);
            if (c >= 2) printf(", %ld", svi_floor[i][c]);
            printf("%s", c + 1 < NSVIS ? ";" : "\n");
        }
    }
    f = tool_open_data("bench_variational", data, "svi.dat");
    if (f) {
        fprintf(f, "# DOF  us/step: SVI+Newton SVI+RIQN DRNEA+Newton DRNEA+RIQN   mean iterations: the same four\n");
        for (int i = 0; i < NSVI; i++)
            fprintf(f, "%d %.4f %.4f %.4f %.4f %.3f %.3f %.3f %.3f\n", svi_dofs[i], svi_us[i][3], svi_us[i][2], svi_us[i][1],
                    svi_us[i][0], svi_it[i][3], svi_it[i][2], svi_it[i][1], svi_it[i][0]);
        fclose(f);
    }

    /* fig. 3 at the paper's length: its text times 10k frames (its code 1000 steps); at 10 and 100 DOF,
     * the first of the three states, RIQN, Newton and tree Newton, one run each */
    const int nlong = quick ? 2000 : 10000;
    static const int long_dofs[2] = {10, 100};
    double long_us[2][3], long_it[2][3];
    printf("# fig. 3 at the paper's length: %d steps of 1 ms from the first state, tol 1e-9 x DOF, at most 20 iterations\n"
           "#  DOF %18s %18s %18s\n", nlong, "DRNEA+RIQN", "DRNEA+Newton", "tree Newton");
    for (int i = 0; i < 2; i++) {
        int n = long_dofs[i];
        mbs_model *m = pendulum(n, 0);
        mbs_data *d = mbs_data_new(m);
        mbs_vi *w = mbs_vi_new(m, NULL);
        double *q0 = malloc(sizeof(double) * (size_t)n), *v0 = malloc(sizeof(double) * (size_t)n);
        random_state(n, 1000 + (unsigned long long)n, q0, v0);
        printf("  %4d", n);
        static const mbs_vi_solver SOLV[3] = {MBS_VI_RIQN, MBS_VI_NEWTON, MBS_VI_TREE_NEWTON};
        for (int k = 0; k < 3; k++) {
            mbs_vi_options opt;
            mbs_vi_default_options(&opt);
            opt.solver = SOLV[k];
            opt.tol = 1e-9 * n;
            opt.max_iter = 20;
            long it = 0, dn = 0;
            int nc = 0;
            double t = run_steps(m, d, w, &opt, 1e-3, q0, v0, nlong, &it, &nc, &dn);
            long_us[i][k] = t / (double)dn * 1e6;
            long_it[i][k] = (double)it / (double)dn;
            printf(" %10.2f (%4.2f)%s", long_us[i][k], long_it[i][k], dn < nlong ? " diverged" : "");
        }
        printf("\n");
        fflush(stdout);
        free(q0); free(v0);
        mbs_vi_free(w);
        mbs_data_free(d);
        mbs_model_free(m);
    }

    /* fig. 4 */
    enum { NHIST = 64 };
    double hist[2][NHIST];
    int nh[2], zero_it[2];
    int nsteps4 = quick ? 200 : 1000;
    double it_mean[2], it_std[2];
    {
        mbs_model *m = pendulum(50, 1);
        mbs_data *d = mbs_data_new(m);
        mbs_vi *w = mbs_vi_new(m, NULL);
        double q0[50], v0[50], qa[50], qb[50], qc[50];
        random_state(50, 4, q0, v0);
        /* (a) one step from a poor guess, for a visible convergence. The paper's text says the zero
         * configuration, its code (experiments/convergence) the current one, IG1: IG1 is plotted,
         * the literal zero configuration is tried as well */
        for (int s = 0; s < 4; s++) {
            mbs_vi_options opt;
            mbs_vi_default_options(&opt);
            opt.solver = s % 2 ? MBS_VI_NEWTON : MBS_VI_RIQN;
            opt.guess = s < 2 ? MBS_VI_IG1 : MBS_VI_GUESS_GIVEN;
            opt.tol = 1e-8;
            opt.max_iter = NHIST - 1;
            opt.history = s < 2 ? hist[s] : NULL;
            opt.history_cap = s < 2 ? NHIST : 0;
            mbs_vi_result r;
            mbs_neutral(m, qc);
            mbs_vi_begin_velocity(m, w, 1e-3, q0, v0, NULL, NULL);
            mbs_vi_solve(m, d, w, &opt, qc, &r);
            if (s < 2) nh[s] = r.iterations + 1;
            else zero_it[s - 2] = r.converged ? r.iterations : -1;
        }
        /* (b) iterations per step over the run, IG3 */
        f = tool_open_data("bench_variational", data, "iterations.dat");
        if (f) fprintf(f, "# step  iterations: RIQN Newton\n");
        int *its[2];
        for (int s = 0; s < 2; s++) {
            its[s] = malloc(sizeof(int) * (size_t)nsteps4);
            mbs_vi_options opt;
            mbs_vi_default_options(&opt);
            opt.solver = s ? MBS_VI_NEWTON : MBS_VI_RIQN;
            opt.tol = 1e-8;
            opt.max_iter = 30;
            memcpy(qb, q0, sizeof qb);
            double sum = 0, sum2 = 0;
            for (int k = 0; k < nsteps4; k++) {
                mbs_vi_result r;
                if (k == 0) mbs_vi_begin_velocity(m, w, 1e-3, qb, v0, NULL, NULL);
                else mbs_vi_begin(m, w, 1e-3, 1e-3, qa, qb, NULL, NULL);
                mbs_vi_solve(m, d, w, &opt, qc, &r);
                its[s][k] = r.iterations;
                sum += r.iterations;
                sum2 += (double)r.iterations * r.iterations;
                memcpy(qa, qb, sizeof qa);
                memcpy(qb, qc, sizeof qb);
            }
            it_mean[s] = sum / nsteps4;
            it_std[s] = sqrt(fmax(0, sum2 / nsteps4 - it_mean[s] * it_mean[s]));
        }
        if (f) {
            for (int k = 0; k < nsteps4; k++) fprintf(f, "%d %d %d\n", k + 1, its[0][k], its[1][k]);
            fclose(f);
        }
        free(its[0]); free(its[1]);
        mbs_vi_free(w);
        mbs_data_free(d);
        mbs_model_free(m);
    }
    f = tool_open_data("bench_variational", data, "convergence.dat");
    if (f) {
        fprintf(f, "# iteration  |f| (N m s): RIQN Newton (one step from IG1, 50 links under gravity)\n");
        for (int l = 0; l < nh[0] || l < nh[1]; l++) {
            fprintf(f, "%d", l);
            for (int s = 0; s < 2; s++)
                if (l < nh[s]) fprintf(f, " %.6e", hist[s][l]); else fprintf(f, " NaN");
            fprintf(f, "\n");
        }
        fclose(f);
    }
    printf("# fig. 4: 50 links under gravity, tol 1e-8 N m s. (a) one step from IG1: RIQN %d iterations, Newton %d; "
           "from the zero configuration: RIQN %d, Newton %d (-1: did not converge in %d)\n",
           nh[0] - 1, nh[1] - 1, zero_it[0], zero_it[1], NHIST - 1);
    printf("#   (b) iterations per step over %d steps (IG3): RIQN %.2f +- %.2f, Newton %.2f +- %.2f\n", nsteps4, it_mean[0],
           it_std[0], it_mean[1], it_std[1]);

    /* beyond the paper: longer steps on the 10-link pendulum under gravity (2 s from the fig. 3
     * state), where RIQN's M⁻¹(q^k) leaves out more of the Jacobian (the ad terms grow with Δt V) */
    static const double big_dts[] = {1e-3, 2e-3, 5e-3, 1e-2, 2e-2};
    enum { NBIG = (int)(sizeof big_dts / sizeof *big_dts) };
    double big_it[NBIG][2], big_us[NBIG][2];
    printf("# longer steps: 10-link pendulum under gravity, 2 s, tol 1e-8, at most 50 iterations, IG3\n"
           "#   dt (ms)   RIQN: us/step iterations nonconverged   tree Newton: us/step iterations nonconverged\n");
    {
        mbs_model *m = pendulum(10, 1);
        mbs_data *d = mbs_data_new(m);
        mbs_vi *w = mbs_vi_new(m, NULL);
        double q0[10], v0[10];
        random_state(10, 1010, q0, v0);
        for (int i = 0; i < NBIG; i++) {
            int n = (int)lround(2.0 / big_dts[i]);
            printf("  %8.0f", big_dts[i] * 1e3);
            for (int s = 0; s < 2; s++) {
                mbs_vi_options opt;
                mbs_vi_default_options(&opt);
                opt.solver = s ? MBS_VI_TREE_NEWTON : MBS_VI_RIQN;
                opt.tol = 1e-8;
                opt.max_iter = 50;
                long it = 0, dn = 0;
                int nc = 0;
                double t = run_steps(m, d, w, &opt, big_dts[i], q0, v0, n, &it, &nc, &dn);
                big_us[i][s] = t / (double)dn * 1e6;
                big_it[i][s] = (double)it / (double)dn;
                nc += (int)(n - dn);   /* a diverged run's remaining steps count as not converged */
                printf("   %10.2f %10.2f %12d", big_us[i][s], big_it[i][s], nc);
            }
            printf("\n");
        }
        mbs_vi_free(w);
        mbs_data_free(d);
        mbs_model_free(m);
    }

    /* plots */
    tool_plot(MBS_SOURCE_DIR, "plot_variational.gp", data, images, "",
              "variational_{energy,performance,convergence}.png");

    /* the key lines, kept for the block of docs/benchmarks.md too */
    static bench_keys keys;
#define key(...) bench_key(&keys, __VA_ARGS__)
    key("chain10_energy_drift_per_1e5_steps: %.3e\n", ev.drift * scale);
    key("chain10_energy_oscillation: %.3e\n", ev.spread);
    key("chain10_symplectic_euler_drift_per_1e5_steps: %.3e\n", es.drift * scale);
    for (int s = 0; s < NSOLVER; s++) key("%s_growth_exponent: %.3f\n", solver_names[s], expo[s]);
    key("riqn_iteration_growth_exponent: %.3f\n", iter_expo);
    if (i10 >= 0) {
        key("riqn_us_per_step_10dof: %.2f\n", tr[i10][0].us_per_step);
        key("newton_us_per_step_10dof: %.2f\n", tr[i10][1].us_per_step);
        key("riqn_over_newton_10dof: %.2f\n", tr[i10][1].us_per_step / tr[i10][0].us_per_step);
        key("riqn_iteration_us_10dof: %.3f\n", titer[i10]);
        key("newton_jacobian_us_10dof: %.3f\n", tjac[i10]);
        key("riqn_over_broyden_10dof: %.2f\n", tr[i10][2].us_per_step / tr[i10][0].us_per_step);
    }
    if (i100 >= 0) {
        key("riqn_us_per_step_100dof: %.2f\n", tr[i100][0].us_per_step);
        key("newton_us_per_step_100dof: %.2f\n", tr[i100][1].us_per_step);
        key("broyden_us_per_step_100dof: %.2f\n", tr[i100][2].us_per_step);
        key("riqn_over_newton_100dof: %.2f\n", tr[i100][1].us_per_step / tr[i100][0].us_per_step);
        key("riqn_iteration_us_100dof: %.3f\n", titer[i100]);
        key("newton_jacobian_us_100dof: %.3f\n", tjac[i100]);
        key("riqn_over_broyden_100dof: %.2f\n", tr[i100][2].us_per_step / tr[i100][0].us_per_step);
        key("tree_newton_us_per_step_100dof: %.2f\n", tr[i100][3].us_per_step);
        key("newton_over_tree_newton_100dof: %.2f\n", tr[i100][1].us_per_step / tr[i100][3].us_per_step);
        key("riqn_over_tree_newton_100dof: %.2f\n", tr[i100][3].us_per_step / tr[i100][0].us_per_step);
    }
    for (int i = 0; i < NSVI; i++)
        if (svi_dofs[i] == 10 || svi_dofs[i] == 100) {
            int n = svi_dofs[i];
            key("svi_newton_us_per_step_%ddof: %.2f\n", n, svi_us[i][3]);
            key("svi_riqn_us_per_step_%ddof: %.2f\n", n, svi_us[i][2]);
            key("svi_newton_over_drnea_newton_%ddof: %.2f\n", n, svi_us[i][3] / svi_us[i][1]);
            key("svi_riqn_over_drnea_riqn_%ddof: %.2f\n", n, svi_us[i][2] / svi_us[i][0]);
            key("svi_newton_over_drnea_riqn_%ddof: %.2f\n", n, svi_us[i][3] / svi_us[i][0]);
            key("svi_residual_over_drnea_%ddof: %.2f\n", n, svi_eval[i][1] / svi_eval[i][0]);
            key("svi_jacobian_over_algorithm4_%ddof: %.2f\n", n, svi_eval[i][3] / svi_eval[i][2]);
        }
    for (int i = 0; i < NBIG; i++)
        if (big_dts[i] == 1e-2) {
            key("chain10_10ms_riqn_iterations: %.2f\n", big_it[i][0]);
            key("chain10_10ms_tree_newton_iterations: %.2f\n", big_it[i][1]);
            key("chain10_10ms_riqn_over_tree_newton_time: %.2f\n", big_us[i][0] / big_us[i][1]);
        }
    key("riqn_mean_iterations: %.2f\n", it_mean[0]);
    key("riqn_std_iterations: %.2f\n", it_std[0]);
    key("newton_mean_iterations: %.2f\n", it_mean[1]);
#undef key
    printf("# total %.0f s\n\n%s", tool_now() - t_start, keys.text);

    /* the tables of docs/benchmarks.md */
    bench_doc_keys(&doc, "variational", keys.text);
    bench_doc_output(&doc, "variational");
    if (i10 >= 0 && i100 >= 0) {
        bench_doc_begin(&doc, "variational-fig3");
        bench_doc_printf(&doc, "| | ours, %d steps (fig. 3 below) | ours, %d steps (one state) | paper |\n|---|---|---|---|\n", nsteps, nlong);
        bench_doc_printf(&doc, "| RIQN / Newton at 10 DOF | %.1f× | %.1f× | 3.8× |\n", tr[i10][1].us_per_step / tr[i10][0].us_per_step,
                         long_us[0][1] / long_us[0][0]);
        bench_doc_printf(&doc, "| RIQN / Newton at 100 DOF | %.1f× | %.1f× | 53× |\n", tr[i100][1].us_per_step / tr[i100][0].us_per_step,
                         long_us[1][1] / long_us[1][0]);
        bench_doc_printf(&doc, "| RIQN iterations per step at 10 / 100 DOF | %.2f / %.2f | %.2f / %.2f | — |\n", tr[i10][0].mean_iter,
                         tr[i100][0].mean_iter, long_it[0][0], long_it[1][0]);
        bench_doc_printf(&doc, "| growth exponent of DRNEA + RIQN, 10 → 100 DOF | %.2f | %.2f (two points) | ~1 (fig. 3, no fit given) |\n",
                         expo[0], log(long_us[1][0] / long_us[0][0]) / log(10.0));
        bench_doc_printf(&doc, "| growth exponent of one RIQN iteration (DRNEA + ABI solve) | %.2f | — | — |\n", iter_expo);
        {
            char left[256] = "none";
            size_t ll = 0;
            for (int i = 0; i < ndofs; i++)
                if (nbad[i] && ll < sizeof left - 40)
                    ll += (size_t)snprintf(left + ll, sizeof left - ll, "%s%d of %d at %d DOF", ll ? ", " : "", nbad[i], NSEED,
                                           dofs[i]);
            bench_doc_printf(&doc, "| states left out (every solver diverged on them after a few hundred steps) | %s | — | — |\n",
                             left);
        }
        bench_doc_printf(&doc, "| growth exponent of DRNEA + tree Newton (ours, below), 10 → 100 DOF | %.2f | %.2f (two points) | — |\n",
                         expo[3], log(long_us[1][2] / long_us[0][2]) / log(10.0));
        bench_doc_printf(&doc, "| µs per step at 10 DOF: RIQN / Newton / tree Newton | %.1f / %.1f / %.1f | %.1f / %.1f / %.1f | — |\n",
                         tr[i10][0].us_per_step, tr[i10][1].us_per_step, tr[i10][3].us_per_step, long_us[0][0], long_us[0][1],
                         long_us[0][2]);
        bench_doc_printf(&doc, "| µs per step at 100 DOF: RIQN / Newton / tree Newton | %.0f / %.0f / %.0f | %.0f / %.0f / %.0f | — |\n",
                         tr[i100][0].us_per_step, tr[i100][1].us_per_step, tr[i100][3].us_per_step, long_us[1][0], long_us[1][1],
                         long_us[1][2]);
        bench_doc_end(&doc, "variational-fig3");
    }
    bench_doc_begin(&doc, "variational-svi");
    bench_doc_printf(&doc, "| DOF | SVI + Newton | SVI + RIQN | DRNEA + Newton | DRNEA + RIQN | SVI / DRNEA, Newton | SVI / DRNEA, RIQN "
                           "| SVI + Newton / DRNEA + RIQN | paper, same root update |\n|---|---|---|---|---|---|---|---|---|\n");
    for (int i = 0; i < NSVI; i++) {
        int n = svi_dofs[i];
        bench_doc_printf(&doc, "| %d | %.1f (%.2f) | %.1f (%.2f) | %.1f (%.2f) | %.1f (%.2f) | %.1f× | %.1f× | %.1f× | %s |\n", n,
                         svi_us[i][3], svi_it[i][3], svi_us[i][2], svi_it[i][2], svi_us[i][1], svi_it[i][1], svi_us[i][0],
                         svi_it[i][0], svi_us[i][3] / svi_us[i][1], svi_us[i][2] / svi_us[i][0], svi_us[i][3] / svi_us[i][0],
                         n == 10 ? "15×" : n == 100 ? "32×" : "—");
    }
    bench_doc_printf(&doc, "\nµs per step (mean iterations per step); 3 states × %d steps, the median of 5 repetitions at 10 and 20 "
                           "DOF, 3 at 50, one run at 100; %d run(s) diverged, their states left out for all four (the output names "
                           "them). One evaluation at a first step's root, µs (median of 7 batches):\n\n"
                           "| DOF | residual: DRNEA (Alg. 2) | residual: SVI | SVI / DRNEA | exact Jacobian: Alg. 4 | exact Jacobian: SVI "
                           "| SVI / Alg. 4 |\n|---|---|---|---|---|---|---|\n", nsteps, nsvi_diverged);
    for (int i = 0; i < NSVI; i++)
        bench_doc_printf(&doc, "| %d | %.2f | %.2f | %.1f× | %.1f | %.1f | %.1f× |\n", svi_dofs[i], svi_eval[i][0], svi_eval[i][1],
                         svi_eval[i][1] / svi_eval[i][0], svi_eval[i][2], svi_eval[i][3], svi_eval[i][3] / svi_eval[i][2]);
    bench_doc_end(&doc, "variational-svi");
    bench_doc_begin(&doc, "variational-steps");
    bench_doc_printf(&doc, "| Δt | RIQN iterations/step | tree Newton iterations/step | RIQN µs/step | tree Newton µs/step |\n"
                           "|---|---|---|---|---|\n");
    for (int i = 0; i < NBIG; i++)
        bench_doc_printf(&doc, "| %g ms | %.2f | %.2f | %.1f | %.1f |\n", big_dts[i] * 1e3, big_it[i][0], big_it[i][1], big_us[i][0],
                         big_us[i][1]);
    bench_doc_end(&doc, "variational-steps");
    bench_doc_close(&doc);
    free(Ev); free(Ev_end); free(Es); free(Es_end);
    return 0;
}
