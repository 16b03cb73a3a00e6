/* bench_adaptive.c — the experiments of Zapolsky and Drumwright, "Adaptive integration for
 * controlling speed vs. accuracy in multi-rigid body simulation" (IROS 2015), section IV, on our
 * trotting quadruped (scenarios/solo_trot.ini under rigid contact) and passive walker:
 *   a (fig. 3)  steps before failure (kinetic energy above 1e7 J, or a state that is not finite)
 *               against the fixed step Δt in {1, 1.5, 1.75, 2, 3, ..., 10} ms, 5 s of trot;
 *   b (IV-B)    the largest step keeping the walker's total energy within 0.001 % over a swing
 *               phase, explicit Euler against RK4, and the speed-up per function evaluation;
 *   c (IV-C)    the mean relative local kinetic-energy error (step doubling) of explicit against
 *               semi-implicit Euler on the trot at 1 ms;
 *   d (IV-D)    the error-controlled trot (adaptive around rigid, no C²A, nominal 5 ms, h_min 0.5 ms,
 *               relative limit 0.25 %): mean accepted step standing and walking, and the relative
 *               error estimate over one gait cycle (fig. 4);
 *   e (fig. 5)  exponential dissipation λ in {0, 0.01, 0.1, ..., 1} at a fixed 5 ms: steps before
 *               failure.
 * The robot's controller runs at the step (Δt) in a, c, e, as the paper's; its joint PD is then an
 * explicit servo sampled every Δt, which is what fails at large steps. In d the PD is the system's
 * joint impedance (feedback = impedance), which the adaptive stepper evaluates at every sub-step,
 * the trot's gait (feet targets) every 5 ms; beside it, the scenario as written with the adaptive
 * stepper (2 ms, conservative advancement on), what `./sim scenarios/solo_trot.ini --set
 * stepper.name=adaptive` runs. Writes the data under build/bench_adaptive, the plots
 * into docs/images/adaptive_*.png (tools/bench/plot_adaptive.gp, when gnuplot is installed), and ends with
 * `key: value` lines. A full run (not --quick) also writes the tables of its section of
 * docs/benchmarks.md into <data>/tables.md (tools/bench/bench_doc.h), which tools/bench/bench_doc.py puts into
 * the document (make bench-adaptive does both).
 *   bench_adaptive [--quick] [--data DIR] [--images DIR]
 * --quick: 1 s horizons. Only the public API is used. */
#include <math.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "mbs.h"
#include "bench_tool.h"
#include "bench_doc.h"

#ifndef MBS_SOURCE_DIR
#define MBS_SOURCE_DIR "."
#endif

static const char *PROGRAM = "bench_adaptive";
enum { MAXOPT = 64, MAXOV = 12 };

static void die(const char *what, const mbs_error *e)
{
    fprintf(stderr, "%s: %s: %s\n", PROGRAM, what, e->msg);
    exit(1);
}

/* A trot run: scenario solo_trot.ini with the overrides, its own loop of controller and stepper. */
typedef struct trot {
    mbs_scenario *sc;
    mbs_sim *sim;
    mbs_system *s;
    mbs_stepper *st;
    mbs_controller *c;
    mbs_data *d;
    double *tau, dt, duration;
    int nv;
} trot;

static void trot_open(trot *r, const char *stepper, double dt, double duration, const char *const *extra, int nextra)
{
    char path[1024], o[4][128];
    const char *ov[MAXOV];
    snprintf(path, sizeof path, "%s/scenarios/solo_trot.ini", MBS_SOURCE_DIR);
    snprintf(o[0], sizeof o[0], "stepper.name=%s", stepper);
    snprintf(o[1], sizeof o[1], "stepper.dt=%.17g", dt);
    snprintf(o[2], sizeof o[2], "controller.dt=%.17g", dt);
    snprintf(o[3], sizeof o[3], "run.duration=%.17g", duration);
    int n = 0;
    for (int i = 0; i < 4; i++) ov[n++] = o[i];
    for (int i = 0; i < nextra && n < MAXOV; i++) ov[n++] = extra[i];
    mbs_error err;
    memset(r, 0, sizeof *r);
    r->sc = mbs_scenario_load(path, ov, n, &err);
    if (!r->sc) die(path, &err);
    r->sim = mbs_sim_new(r->sc, &err);
    if (!r->sim) die("sim", &err);
    r->s = mbs_sim_system(r->sim);
    mbs_option so[MAXOPT], co[MAXOPT];
    int ns = mbs_scenario_options(r->sc, stepper, so, MAXOPT), nc = mbs_scenario_options(r->sc, "controller", co, MAXOPT);
    mbs_system_finalize(r->s, NULL);
    r->st = mbs_stepper_new(stepper, r->s, so, ns, &err);
    if (!r->st) die(stepper, &err);
    mbs_system_finalize(r->s, NULL);
    r->c = mbs_controller_new(mbs_scenario_controller(r->sc), r->s, mbs_scenario_q0(r->sc), dt, co, nc, &err);
    if (!r->c) die("controller", &err);
    r->d = mbs_data_new(mbs_system_model(r->s));
    r->nv = mbs_model_nv(mbs_system_model(r->s));
    r->tau = calloc((size_t)r->nv, sizeof(double));
    r->dt = dt;
    r->duration = duration;
}

static void trot_close(trot *r)
{
    free(r->tau);
    mbs_data_free(r->d);
    mbs_controller_free(r->c);
    mbs_stepper_free(r->st);
    mbs_sim_free(r->sim);
    mbs_scenario_free(r->sc);
}

static double kinetic(trot *r)
{
    return mbs_kinetic_energy(mbs_system_model(r->s), r->d, mbs_system_q(r->s), mbs_system_v(r->s));
}

/* The controller's torque for step k. */
static void control(trot *r, long k)
{
    mbs_controller_compute(r->c, (double)k * r->dt, mbs_system_q(r->s), mbs_system_v(r->s), r->tau);
    mbs_system_set_tau(r->s, r->tau);
}

/* Steps of a fixed-step run before it fails (kinetic energy above 1e7 J or a stepper error); the
 * run's step count when it does not. *failed says which. */
static long steps_to_failure(const char *const *extra, int nextra, double dt, double duration, double lambda,
                             int *failed)
{
    trot r;
    trot_open(&r, "rigid", dt, duration, extra, nextra);
    mbs_stepper_set_dissipation(r.st, lambda);
    long n = (long)ceil(duration / dt - 1e-9), k;
    *failed = 0;
    for (k = 0; k < n; k++) {
        control(&r, k);
        int rc = mbs_stepper_step(r.st, dt, NULL);
        if (rc != MBS_OK || !(kinetic(&r) <= 1e7)) { *failed = 1; k++; break; }
    }
    trot_close(&r);
    return k;
}

/* ---- b: the walker's swing phase ---- */

/* The compass gait's swing phase (tests/models/compass_swing.urdf: the stance foot pinned, a
 * conservative double pendulum; Drake's parameters), the slope by gravity tilted by γ. (The 3D
 * walker's stance foot rolls: not a fixed-base tree.) */
static mbs_model *swing_model(double gam)
{
    mbs_error err;
    mbs_urdf_options uo = {.floating_base = 0};
    mbs_model *m = mbs_model_from_urdf(MBS_SOURCE_DIR "/tests/models/compass_swing.urdf", &uo, &err);
    if (!m) die("swing model", &err);
    double g[3] = {9.81 * sin(gam), 0, -9.81 * cos(gam)};
    mbs_model_set_gravity(m, g);
    return m;
}

/* Largest relative deviation of the total energy over `duration` from (q0, v0) at step h. */
static double swing_drift(mbs_model *m, const char *stepper, const double *q0, const double *v0, double h, double duration)
{
    mbs_error err;
    mbs_system *s = mbs_system_new(m, 0, &err);
    mbs_system_finalize(s, NULL);
    mbs_stepper *st = mbs_stepper_new(stepper, s, NULL, 0, &err);
    if (!s || !st) die(stepper, &err);
    mbs_data *d = mbs_data_new(m);
    mbs_system_set_state(s, q0, v0, 0);
    double E0 = mbs_kinetic_energy(m, d, q0, v0) + mbs_potential_energy(m, d, q0), worst = 0;
    long n = (long)ceil(duration / h - 1e-9);
    for (long k = 0; k < n; k++) {
        double hk = fmin(h, duration - (double)k * h);
        if (mbs_stepper_step(st, hk, NULL) != MBS_OK) { worst = INFINITY; break; }
        const double *q = mbs_system_q(s), *v = mbs_system_v(s);
        double E = mbs_kinetic_energy(m, d, q, v) + mbs_potential_energy(m, d, q);
        worst = fmax(worst, fabs(E - E0) / fabs(E0));
        if (!(worst < 1)) break;
    }
    mbs_data_free(d);
    mbs_stepper_free(st);
    mbs_system_free(s);
    return worst;
}

/* The largest step (bisection on a log scale) keeping the drift within tol. */
static double largest_step(mbs_model *m, const char *stepper, const double *q0, const double *v0, double duration,
                           double tol)
{
    double lo = 1e-6, hi = duration;
    if (swing_drift(m, stepper, q0, v0, lo, duration) > tol) return 0;
    if (swing_drift(m, stepper, q0, v0, hi, duration) <= tol) return hi;
    for (int it = 0; it < 40; it++) {
        double mid = sqrt(lo * hi);
        if (swing_drift(m, stepper, q0, v0, mid, duration) <= tol) lo = mid;
        else hi = mid;
    }
    return lo;
}

/* ---- c: step-doubling kinetic-energy error at a fixed step ---- */

/* Mean over the walking steps of |E' − E''| / E'' (one step of h against two of h/2), the trot's
 * rigid step with the dynamics at `at` ("new": semi-implicit, "old": explicit). */
static double ke_error_pct(const char *at, double h, double duration, double walk_from, double *mean_abs, double *mean_ke)
{
    char o[64];
    snprintf(o, sizeof o, "rigid.dynamics_at=%s", at);
    const char *extra[2] = {o, "rigid.advance=0"};
    trot r;
    trot_open(&r, "rigid", h, duration, extra, 2);
    const mbs_model *m = mbs_system_model(r.s);
    int nq = mbs_model_nq(m), nv = r.nv;
    double *q0 = calloc((size_t)nq, sizeof(double)), *v0 = calloc((size_t)nv, sizeof(double));
    double *q1 = calloc((size_t)nq, sizeof(double)), *v1 = calloc((size_t)nv, sizeof(double));
    long n = (long)ceil(duration / h - 1e-9), count = 0;
    double sum = 0, sabs = 0, ske = 0;
    for (long k = 0; k < n; k++) {
        control(&r, k);
        double t = (double)k * h;
        memcpy(q0, mbs_system_q(r.s), (size_t)nq * sizeof(double));
        memcpy(v0, mbs_system_v(r.s), (size_t)nv * sizeof(double));
        mbs_stepper_step(r.st, h, NULL);
        double E1 = kinetic(&r);
        memcpy(q1, mbs_system_q(r.s), (size_t)nq * sizeof(double));
        memcpy(v1, mbs_system_v(r.s), (size_t)nv * sizeof(double));
        mbs_system_set_state(r.s, q0, v0, t);
        mbs_stepper_step(r.st, h / 2, NULL);
        mbs_stepper_step(r.st, h / 2, NULL);
        double E2 = kinetic(&r);
        if (t >= walk_from && E2 > 0) {
            sum += fabs(E1 - E2) / E2;
            sabs += fabs(E1 - E2);
            ske += E2;
            count++;
        }
        (void)q1; (void)v1;
    }
    free(q0); free(v0); free(q1); free(v1);
    trot_close(&r);
    *mean_abs = count ? sabs / (double)count : NAN;
    *mean_ke = count ? ske / (double)count : NAN;
    return count ? 100 * sum / (double)count : NAN;
}

/* ---- d: the error-controlled trot ---- */

typedef struct adaptive_run {
    double mean_dt, mean_dt_stand, mean_dt_walk, us_per_s;
    long substeps, rejected;
    int stable;
} adaptive_run;

static adaptive_run adaptive_trot(const char *controller, double nominal, double duration, double settle, double walk_from,
                                  FILE *trace)
{
    char ct[64];
    snprintf(ct, sizeof ct, "controller.type=%s", controller);
    const char *extra[6] = {"adaptive.conservative=0", "adaptive.h_min=0.0005", "adaptive.rel_tol=0.0025",
                            "controller.feedback=impedance", ct, "run.max_velocity=1e6"};
    trot r;
    trot_open(&r, "adaptive", nominal, duration, extra, 6);
    adaptive_run a = {0};
    long n = (long)ceil(duration / nominal - 1e-9), sub_stand = 0, sub_walk = 0;
    double t_stand = 0, t_walk = 0, wall = 0;
    a.stable = 1;
    for (long k = 0; k < n; k++) {
        control(&r, k);
        mbs_step_stats st;
        double w0 = tool_now();
        int rc = mbs_stepper_step(r.st, nominal, &st);
        wall += tool_now() - w0;
        if (rc != MBS_OK) { a.stable = 0; break; }
        double t = (double)k * nominal, ke = kinetic(&r);
        a.substeps += st.substeps;
        a.rejected += st.rejected;
        if (t < settle) { sub_stand += st.substeps; t_stand += nominal; }
        if (t >= walk_from) { sub_walk += st.substeps; t_walk += nominal; }
        if (trace) fprintf(trace, "%.6f %.9g %.9g %d %d\n", t + nominal, ke, ke > 0 ? 100 * st.error / ke : 0, st.substeps, st.rejected);
    }
    double T = (double)n * nominal;
    a.mean_dt = a.substeps ? T / (double)a.substeps : NAN;
    a.mean_dt_stand = sub_stand ? t_stand / (double)sub_stand : NAN;
    a.mean_dt_walk = sub_walk ? t_walk / (double)sub_walk : NAN;
    a.us_per_s = 1e6 * wall / T;
    trot_close(&r);
    return a;
}

/* The scenario as written with the adaptive stepper (its defaults: conservative advancement on), the
 * nominal step and the controller period the scenario's 2 ms: the mean accepted sub-step (s). */
static double adaptive_as_written(double duration, long *substeps, int *stable)
{
    trot r;
    const double h = 2e-3;
    trot_open(&r, "adaptive", h, duration, NULL, 0);
    long n = (long)ceil(duration / h - 1e-9), sub = 0;
    *stable = 1;
    for (long k = 0; k < n; k++) {
        control(&r, k);
        mbs_step_stats st;
        if (mbs_stepper_step(r.st, h, &st) != MBS_OK) { *stable = 0; break; }
        sub += st.substeps;
    }
    trot_close(&r);
    *substeps = sub;
    return sub ? (double)n * h / (double)sub : NAN;
}

int main(int argc, char **argv)
{
    tool_single_thread_blas(argv);
    tool_args args;
    int status = tool_parse_args(argc, argv, PROGRAM, MBS_SOURCE_DIR, NULL, &args);
    if (status) return status;
    const int quick = args.quick;
    const char *data = args.data, *images = args.images;
    bench_doc doc;
    bench_doc_open(&doc, data, "make bench-adaptive", !quick);
    const double T = quick ? 1.0 : 5.0;
    char path[4096];
    double t_start = tool_now();
    printf("# bench_adaptive: Zapolsky and Drumwright 2015, section IV, on scenarios/solo_trot.ini (rigid contact) and the "
           "compass gait's swing%s\n", quick ? " (--quick: 1 s horizons)" : "");
    printf("# run %s; %s\n", doc.stamp, doc.machine);

    /* a: steps before failure against the fixed step (fig. 3) */
    static const double steps_ms[] = {1, 1.5, 1.75, 2, 3, 4, 5, 6, 7, 8, 9, 10};
    const int nsteps = (int)(sizeof steps_ms / sizeof *steps_ms);
    const char *fixed[3] = {"rigid.advance=0", "run.max_velocity=1e9", "run.box=-1e9 -1e9 -1e9 1e9 1e9 1e9"};
    long fail_steps[sizeof steps_ms / sizeof *steps_ms];
    int fail_flag[sizeof steps_ms / sizeof *steps_ms];
    snprintf(path, sizeof path, "%s/failure.dat", data);
    FILE *f = fopen(path, "w");
    printf("a. fixed step (ms)  steps before failure (5 s of trot; '-': none)\n");
    for (int i = 0; i < nsteps; i++) {
        int failed;
        long k = steps_to_failure(fixed, 3, 1e-3 * steps_ms[i], T, 0, &failed);
        fail_steps[i] = k;
        fail_flag[i] = failed;
        printf("   %6.2f            %s%ld\n", steps_ms[i], failed ? "" : ">= ", k);
        fprintf(f, "%g %ld %d\n", steps_ms[i], k, failed);
    }
    fclose(f);

    /* e: dissipation at a fixed 5 ms (fig. 5) */
    static const double lambdas[] = {0, 0.01, 0.1, 0.2, 0.3, 0.4, 0.5, 0.6, 0.7, 0.8, 0.9, 1};
    const int nl = (int)(sizeof lambdas / sizeof *lambdas);
    snprintf(path, sizeof path, "%s/dissipation.dat", data);
    f = fopen(path, "w");
    printf("e. dissipation λ   steps before failure at 5 ms ('>=': none in %g s)\n", T);
    int first_ok = -1;
    long diss_steps[sizeof lambdas / sizeof *lambdas];
    int diss_flag[sizeof lambdas / sizeof *lambdas];
    for (int i = 0; i < nl; i++) {
        int failed;
        long k = steps_to_failure(fixed, 3, 5e-3, T, lambdas[i], &failed);
        diss_steps[i] = k;
        diss_flag[i] = failed;
        printf("   %4.2f              %s%ld\n", lambdas[i], failed ? "" : ">= ", k);
        fprintf(f, "%g %ld %d\n", lambdas[i], k, failed);
        if (!failed && first_ok < 0) first_ok = i;
    }
    fclose(f);

    /* c: explicit against semi-implicit Euler, step-doubling kinetic-energy error at 1 ms */
    double abs_e, ke_e, abs_s, ke_s;
    double pe = ke_error_pct("old", 1e-3, T, 1.3 < T ? 1.3 : 0.3, &abs_e, &ke_e);
    double ps = ke_error_pct("new", 1e-3, T, 1.3 < T ? 1.3 : 0.3, &abs_s, &ke_s);
    printf("c. step-doubling kinetic-energy error at 1 ms, walking: explicit %.3g %% (%.3g J of %.3g J), "
           "semi-implicit %.3g %% (%.3g J of %.3g J)\n", pe, abs_e, ke_e, ps, abs_s, ke_s);

    /* d: the error-controlled trot and fig. 4 */
    snprintf(path, sizeof path, "%s/adaptive_trot.dat", data);
    f = fopen(path, "w");
    adaptive_run walk = adaptive_trot("trot", 5e-3, T, 0.3, 1.3 < T ? 1.3 : 0.3, f);
    fclose(f);
    adaptive_run stand = adaptive_trot("pd", 5e-3, T, T, T, NULL);
    printf("d. error-controlled trot (nominal 5 ms, h_min 0.5 ms, 0.25 %%): mean step %.3g ms (walking %.3g ms), "
           "standing (pd) %.3g ms; %ld sub-steps, %ld refused; %s\n", 1e3 * walk.mean_dt, 1e3 * walk.mean_dt_walk,
           1e3 * stand.mean_dt, walk.substeps, walk.rejected, walk.stable && stand.stable ? "stable" : "FAILED");
    long aw_sub;
    int aw_stable;
    double aw_dt = adaptive_as_written(T, &aw_sub, &aw_stable);
    printf("d. the scenario as written with stepper.name=adaptive (2 ms, conservative advancement on): mean sub-step %.3g ms; "
           "%ld sub-steps; %s\n", 1e3 * aw_dt, aw_sub, aw_stable ? "stable" : "FAILED");

    /* b: the walker's swing phase, Euler against RK4 */
    mbs_model *sm = swing_model(0.0525);
    /* the compass gait's state just after a heel strike on its limit cycle (docs/compass_gait.md):
     * the stance leg 0.271275 rad ahead of the slope's normal, the swing leg as far behind (the hip
     * joint at twice that), the legs' rates 1.092867 and 0.376135 rad/s; a swing lasts a step,
     * 0.734461 s, after which the swing foot is back on the slope (checked below) */
    const double th = 0.271275;
    double foot_z = NAN, foot_x = NAN;
    double q0[2] = {-th, 2 * th}, v0[2] = {1.092867, 0.376135 - 1.092867};
    double swing_T = 0.734461;
    {
        mbs_error err;
        mbs_system *s = mbs_system_new(sm, 0, &err);
        mbs_system_finalize(s, NULL);
        mbs_stepper *st = mbs_stepper_new("rk4", s, NULL, 0, &err);
        mbs_system_set_state(s, q0, v0, 0);
        for (int k = 0; k < 7345; k++) mbs_stepper_step(st, swing_T / 7345, NULL);
        const double *q = mbs_system_q(s);
        /* the swing foot: hip (sin θ1, cos θ1), then 1 m down the swing leg at θ1 + θ2 */
        double zf = cos(q[0]) - cos(q[0] + q[1]), xf = sin(q[0]) - sin(q[0] + q[1]);
        foot_z = zf;
        foot_x = xf;
        printf("b. the swing foot after the cycle's step time: %.2g m above the slope, %.4f m ahead of the stance foot "
               "(the cycle's step: 0.5359 m)\n", zf, xf);
        mbs_stepper_free(st);
        mbs_system_free(s);
    }
    double he = largest_step(sm, "euler", q0, v0, swing_T, 1e-5), hr = largest_step(sm, "rk4", q0, v0, swing_T, 1e-5);
    double hs = largest_step(sm, "symplectic_euler", q0, v0, swing_T, 1e-5);
    /* in seconds, as the paper gives its steps (sec. IV-B: 3.5e-3 and 2.8e-1 s), though on another
     * system: the paper's walker is Coleman's seven-DOF 3D walker, ours the compass gait's swing */
    printf("b. walker swing phase (%.3f s), energy within 0.001 %%: largest step euler %.3g ms, symplectic_euler %.3g ms, "
           "rk4 %.3g ms; per function evaluation rk4 is %.3g x faster than euler, %.3g x than symplectic_euler; "
           "the paper's 3D walker: euler 3.5 ms (%.3g x ours), rk4 280 ms (%.3g x ours)\n", swing_T, 1e3 * he, 1e3 * hs,
           1e3 * hr, he > 0 ? hr / (4 * he) : NAN, hs > 0 ? hr / (4 * hs) : NAN, 3.5e-3 / he, 0.28 / hr);
    mbs_model_free(sm);

    snprintf(path, sizeof path, "gnuplot -e \"data='%s'; images='%s'\" %s/tools/bench/plot_adaptive.gp 2>/dev/null", data, images,
             MBS_SOURCE_DIR);
    if (!quick && system("command -v gnuplot >/dev/null 2>&1") == 0 && system(path) == 0)
        printf("plots: %s/adaptive_*.png\n", images);

    printf("# total %.0f s\n", tool_now() - t_start);
    printf("walker_max_energy_step_euler_ms: %.4g\n", 1e3 * he);
    printf("walker_max_energy_step_rk4_ms: %.4g\n", 1e3 * hr);
    printf("walker_max_energy_step_symplectic_ms: %.4g\n", 1e3 * hs);
    printf("adaptive_trot_mean_dt_ms: %.4g\n", 1e3 * walk.mean_dt);
    printf("adaptive_trot_walking_mean_dt_ms: %.4g\n", 1e3 * walk.mean_dt_walk);
    printf("adaptive_stand_mean_dt_ms: %.4g\n", 1e3 * stand.mean_dt);
    printf("ke_error_euler_pct: %.4g\n", pe);
    printf("ke_error_symplectic_pct: %.4g\n", ps);
    printf("adaptive_trot_as_written_mean_dt_ms: %.4g\n", 1e3 * aw_dt);
    printf("dissipation_first_stable_lambda: %g\n", first_ok >= 0 ? lambdas[first_ok] : NAN);

    /* the section's table: ours beside the paper's */
    bench_doc_begin(&doc, "adaptive-paper");
    bench_doc_printf(&doc, "| | paper (their robot, their machine) | ours (`make bench-adaptive`) |\n|---|---|---|\n");
    /* a: no failure up to the step before the first failing one, then the steps of the rest */
    int first_fail = -1;
    for (int i = 0; i < nsteps && first_fail < 0; i++)
        if (fail_flag[i]) first_fail = i;
    bench_doc_printf(&doc, "| a. steps before failure, fixed step 1–10 ms (fig. 3) | failure from 1.75 ms, fewer steps as the step "
                     "grows | ");
    if (first_fail < 0) bench_doc_printf(&doc, "no failure in %g s at any step of the set", T);
    else {
        if (first_fail > 0) bench_doc_printf(&doc, "no failure in %g s up to %g ms; ", T, steps_ms[first_fail - 1]);
        bench_doc_printf(&doc, "from %g ms", steps_ms[first_fail]);
        for (int i = first_fail; i < nsteps; i++)
            bench_doc_printf(&doc, "%s%s%ld", i == first_fail ? " " : ", ", fail_flag[i] ? "" : "≥ ", fail_steps[i]);
        bench_doc_printf(&doc, " steps");
    }
    bench_doc_printf(&doc, " |\n");
    bench_doc_printf(&doc, "| b. largest step keeping a passive walker's energy within 0.001 %% over a swing phase, Euler / RK4 "
                     "(another system here) | 3.5e-3 s / 0.28 s on their seven-DOF 3D walker: 20× per function evaluation | "
                     "%.3g ms / %.3g ms on the compass gait's swing (2 DOF, the stance foot pinned; "
                     "`walker_max_energy_step_euler_ms`, `_rk4_ms`), the paper's steps %.3g× and %.3g× ours: %.0f× per "
                     "evaluation; semi-implicit Euler %.3g ms |\n", 1e3 * he, 1e3 * hr, 3.5e-3 / he, 0.28 / hr,
                     he > 0 ? hr / (4 * he) : NAN, 1e3 * hs);
    bench_doc_printf(&doc, "| c. mean relative local kinetic-energy error at 1 ms, explicit / semi-implicit Euler | 0.774 %% / 1.390 %% | "
                     "%.2g %% / %.2g %% (`ke_error_euler_pct`, `ke_error_symplectic_pct`) |\n", pe, ps);
    bench_doc_printf(&doc, "| d. error-controlled trot, nominal 5 ms, h_min 0.5 ms, 0.25 %%: mean step standing / walking | 2.34 ms "
                     "overall / 2.16 ms walking | standing (pd, %g s) %.3g ms (`adaptive_stand_mean_dt_ms`), the trot %.2g ms overall, "
                     "%.2g ms walking (`adaptive_trot_mean_dt_ms`, `adaptive_trot_walking_mean_dt_ms`)%s, the paper's %.2g× and "
                     "%.2g× these; the scenario as written (nominal step 2 ms, its cap; conservative advancement on) %.3g ms "
                     "(`adaptive_trot_as_written_mean_dt_ms`)%s |\n", T,
                     1e3 * stand.mean_dt, 1e3 * walk.mean_dt, 1e3 * walk.mean_dt_walk,
                     walk.stable && stand.stable ? "" : " (a run FAILED)", 2.3427e-3 / walk.mean_dt, 2.1646e-3 / walk.mean_dt_walk,
                     1e3 * aw_dt, aw_stable ? "" : " (FAILED)");
    bench_doc_printf(&doc, "| e. dissipation at 5 ms (fig. 5) | more dissipation, more steps before failure | ");
    {
        /* the failing λ with their steps, then the first λ from which every run holds */
        int from = nl;
        while (from > 0 && !diss_flag[from - 1]) from--;
        int any = 0;
        for (int i = 0; i < from; i++) {
            bench_doc_printf(&doc, "%sλ = %g: %s%ld steps", any ? ", " : "", lambdas[i], diss_flag[i] ? "" : "≥ ", diss_steps[i]);
            any = 1;
        }
        if (from < nl) bench_doc_printf(&doc, "%sfrom λ = %g: no failure in %g s", any ? "; " : "", lambdas[from], T);
    }
    bench_doc_printf(&doc, " |\n");
    bench_doc_printf(&doc, "\nOf the same run: b. after the cycle's step time the swing foot is %.2g m above the slope and %.4f m ahead "
                     "of the stance foot (the cycle's step: 0.5359 m); per function evaluation RK4 is %.0f× faster than "
                     "semi-implicit Euler. c. the mean errors are %.1e J (explicit) and %.1e J (semi-implicit) of a mean kinetic "
                     "energy of %.3g J while walking. d. the error-controlled trot took %ld sub-steps and refused %ld.\n", foot_z,
                     foot_x, hs > 0 ? hr / (4 * hs) : NAN, abs_e, abs_s, ke_s, walk.substeps, walk.rejected);
    bench_doc_end(&doc, "adaptive-paper");
    bench_doc_output(&doc, "adaptive");
    bench_doc_close(&doc);
    return 0;
}
