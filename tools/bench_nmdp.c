/* bench_nmdp.c — section VI of Pan and Hauser, "Implicit integration for articulated bodies with
 * contact via the nonconvex maximal dissipation principle" (2020), on scenarios/robosimian_jump.ini
 * and robosimian_walk.ini (issue 12, section 6):
 *   fig. 3   torso tilt of the jump for Δt in {5, 7, 10, 20, 30, 50} ms, mdp against nmdp;
 *   figs. 4–5 torso height of the jump and distance walked over time for the same Δt;
 *   table I  for each, the standard deviation across the Δt set at each instant, averaged over time;
 *   fig. 6   at Δt = 50 ms, first- against zeroth-order nmdp: frame rate, outer iterations per step
 *            and the step fraction α Algorithm 2 chose;
 *   beyond   the same runs with expo and implicit_euler on the spring-damper contacts.
 * Every run holds the controller period equal to the step (the stable PD is evaluated at every
 * step, as in the paper): integrated by the stepper (feedback = impedance, the scenarios' own) for
 * mdp and nmdp, predicted one period ahead with its torque held (feedback = stable) for expo and
 * implicit_euler, which do not integrate it. A run is stable when it covers the whole duration without a stepper error,
 * with every velocity below 100 m/s or rad/s and the torso tilted less than 60°. The spread of
 * table I is taken over the step sizes whose run was stable, sampled every 50 ms (linear
 * interpolation between steps). Writes the data under build/bench_nmdp, the plots into
 * docs/images/nmdp_*.png (tools/plot_nmdp.gp, when gnuplot is installed), and ends with
 * `key: value` lines.
 *   bench_nmdp [--quick] [--data DIR] [--images DIR]
 * --quick: 2 s horizons and Δt in {10, 50} ms. Only the public API is used: the scenario and sim
 * give the system, and this program runs its own loop of controller and stepper, as an embedding
 * program does, to time each step and read its statistics. */
#include <math.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "mbs.h"
#include "tool.h"

#ifndef MBS_SOURCE_DIR
#define MBS_SOURCE_DIR "."
#endif

static const char *PROGRAM = "bench_nmdp";
enum { MAXDT = 6, MAXOPT = 64 };

typedef struct run {
    int stable;
    double t_end;                  /* time reached */
    char why[160];
    long n;                        /* steps */
    double *t, *x, *y, *z, *tilt;  /* base after each step (n + 1 samples, 0: the start) */
    double *wall, *alpha;          /* per step: stepper time (s), smallest step fraction */
    int *iters;
    double rtf;                    /* simulated time over stepper time */
    double mean_iters, min_alpha, max_tilt;
} run;

static void run_free(run *r)
{
    free(r->t); free(r->x); free(r->y); free(r->z); free(r->tilt); free(r->wall); free(r->alpha); free(r->iters);
    memset(r, 0, sizeof *r);
}

static double tilt_deg(const double *qb)
{
    double czz = 1 - 2 * (qb[0] * qb[0] + qb[1] * qb[1]);
    return acos(czz > 1 ? 1 : czz < -1 ? -1 : czz) * (180 / 3.14159265358979323846);
}

/* One run of scenario `file` with `stepper` at step dt (the controller period too) for `duration`
 * s, with an extra override (or NULL). */
static run simulate(const char *file, const char *stepper, double dt, double duration, const char *extra)
{
    run r = {0};
    char path[1024], o1[128], o2[64], o3[64], o4[64];
    snprintf(path, sizeof path, "%s/scenarios/%s", MBS_SOURCE_DIR, file);
    snprintf(o1, sizeof o1, "stepper.name=%s", stepper);
    snprintf(o2, sizeof o2, "stepper.dt=%.17g", dt);
    snprintf(o3, sizeof o3, "controller.dt=%.17g", dt);
    snprintf(o4, sizeof o4, "run.duration=%.17g", duration);
    const char *ov[5] = {o1, o2, o3, o4, extra};
    mbs_error err;
    mbs_scenario *sc = mbs_scenario_load(path, ov, extra ? 5 : 4, &err);
    if (!sc) { fprintf(stderr, "%s: %s\n", PROGRAM, err.msg); exit(1); }
    mbs_sim *sim = mbs_sim_new(sc, &err);
    if (!sim) { fprintf(stderr, "%s: %s\n", PROGRAM, err.msg); exit(1); }
    mbs_system *s = mbs_sim_system(sim);
    mbs_option so[MAXOPT], co[MAXOPT];
    int ns = mbs_scenario_options(sc, stepper, so, MAXOPT), nc = mbs_scenario_options(sc, "controller", co, MAXOPT);
    mbs_stepper *st = mbs_stepper_new(stepper, s, so, ns, &err);
    mbs_controller *c = st ? mbs_controller_new(mbs_scenario_controller(sc), s, mbs_scenario_q0(sc), dt, co, nc, &err) : NULL;
    if (!st || !c) { fprintf(stderr, "%s: %s\n", PROGRAM, err.msg); exit(1); }
    const mbs_model *m = mbs_system_model(s);
    int nv = mbs_model_nv(m);
    long n = (long)ceil(duration / dt - 1e-9);
    r.t = calloc((size_t)n + 1, sizeof(double)); r.x = calloc((size_t)n + 1, sizeof(double));
    r.y = calloc((size_t)n + 1, sizeof(double)); r.z = calloc((size_t)n + 1, sizeof(double));
    r.tilt = calloc((size_t)n + 1, sizeof(double)); r.wall = calloc((size_t)n + 1, sizeof(double));
    r.alpha = calloc((size_t)n + 1, sizeof(double)); r.iters = calloc((size_t)n + 1, sizeof(int));
    double *tau = calloc((size_t)nv, sizeof(double)), stepping = 0;
    const double *q = mbs_system_q(s), *v = mbs_system_v(s);
    r.x[0] = q[0]; r.y[0] = q[1]; r.z[0] = q[2]; r.tilt[0] = tilt_deg(q + 3);
    r.stable = 1;
    r.min_alpha = 1;
    long it_sum = 0, k;
    for (k = 0; k < n; k++) {
        double t = (double)k * dt;
        mbs_controller_compute(c, t, q, v, tau);
        mbs_system_set_tau(s, tau);
        mbs_step_stats stats;
        double t0 = tool_now();
        int rc = mbs_stepper_step(st, dt, &stats);
        r.wall[k + 1] = tool_now() - t0;
        stepping += r.wall[k + 1];
        r.iters[k + 1] = stats.iterations;
        r.alpha[k + 1] = stats.alpha;
        it_sum += stats.iterations;
        r.min_alpha = fmin(r.min_alpha, stats.alpha);
        r.t[k + 1] = (double)(k + 1) * dt;
        r.x[k + 1] = q[0]; r.y[k + 1] = q[1]; r.z[k + 1] = q[2]; r.tilt[k + 1] = tilt_deg(q + 3);
        r.max_tilt = fmax(r.max_tilt, r.tilt[k + 1]);
        double vmax = 0;
        for (int i = 0; i < nv; i++) vmax = fmax(vmax, fabs(v[i]));
        if (rc != MBS_OK) snprintf(r.why, sizeof r.why, "%.150s", mbs_stepper_last_error(st)->msg);
        else if (!(vmax <= 100)) snprintf(r.why, sizeof r.why, "a velocity of %.3g", vmax);
        else if (r.tilt[k + 1] > 60) snprintf(r.why, sizeof r.why, "the torso tilted %.0f deg", r.tilt[k + 1]);
        else continue;
        r.stable = 0;
        k++;
        break;
    }
    r.n = k;
    r.t_end = (double)k * dt;
    r.rtf = stepping > 0 ? r.t_end / stepping : 0;
    r.mean_iters = k ? (double)it_sum / (double)k : 0;
    free(tau);
    mbs_controller_free(c);
    mbs_stepper_free(st);
    mbs_sim_free(sim);
    mbs_scenario_free(sc);
    return r;
}

/* Quantity `which` (0: torso height z, 1: distance walked, the base's progress along x, the
 * walk's heading: the crawl's sideways sway is not distance) of run r at time t, linear between
 * steps. */
static double sample(const run *r, int which, double t)
{
    double dt = r->t[1] - r->t[0];
    long i = (long)floor(t / dt);
    if (i >= r->n) i = r->n - 1;
    if (i < 0) i = 0;
    double a = (t - r->t[i]) / dt;
    double q0 = which ? r->x[i] - r->x[0] : r->z[i];
    double q1 = which ? r->x[i + 1] - r->x[0] : r->z[i + 1];
    return (1 - a) * q0 + a * q1;
}

/* Table I's figure: the standard deviation of quantity `which` across the stable runs at each
 * instant of a 50 ms grid, averaged over the grid; *used: how many runs entered. NAN with < 2. */
static double spread(run *const *runs, int nruns, int which, double duration, int *used)
{
    const run *ok[MAXDT];
    int m = 0;
    for (int i = 0; i < nruns; i++)
        if (runs[i]->stable) ok[m++] = runs[i];
    *used = m;
    if (m < 2) return NAN;
    double sum = 0;
    int ng = 0;
    for (double t = 0; t <= duration + 1e-9; t += 0.05, ng++) {
        double mean = 0, var = 0, x[MAXDT];
        for (int i = 0; i < m; i++) mean += (x[i] = sample(ok[i], which, t)) / m;
        for (int i = 0; i < m; i++) var += (x[i] - mean) * (x[i] - mean) / m;
        sum += sqrt(var);
    }
    return sum / ng;
}

static void write_series(const char *data, const char *name, const run *r)
{
    FILE *f = tool_open_data(PROGRAM, data, name);
    if (!f) return;
    fprintf(f, "# t_s x_m y_m z_m tilt_deg distance_x_m wall_ms outer_iterations alpha\n");
    for (long i = 0; i <= r->n; i++)
        fprintf(f, "%.6g %.6g %.6g %.6g %.6g %.6g %.6g %d %.6g\n", r->t[i], r->x[i], r->y[i], r->z[i], r->tilt[i],
                r->x[i] - r->x[0], 1e3 * r->wall[i], r->iters[i], i ? r->alpha[i] : 1.0);
    fclose(f);
}

int main(int argc, char **argv)
{
    tool_single_thread_blas(argv);
    tool_args a;
    int rc = tool_parse_args(argc, argv, PROGRAM, MBS_SOURCE_DIR, NULL, &a);
    if (rc) return rc;
    static const double full[] = {0.005, 0.007, 0.010, 0.020, 0.030, 0.050}, quick[] = {0.010, 0.050};
    const double *dts = a.quick ? quick : full;
    const int ndt = a.quick ? 2 : 6;
    const double duration = a.quick ? 2 : 10;
    const char *scen[2] = {"robosimian_jump.ini", "robosimian_walk.ini"}, *sname[2] = {"jump", "walk"};
    const char *steppers[4] = {"mdp", "nmdp", "expo", "implicit_euler"};
    static run R[4][2][MAXDT];
    printf("# bench_nmdp: Pan and Hauser 2020, section VI, on scenarios/robosimian_{jump,walk}.ini, %g s each\n",
           duration);
    printf("# stepper         scenario  dt_ms  status              max_tilt_deg  final_z_m  distance_x_m  outer_it/step  min_alpha       rtf\n");
    for (int sp = 0; sp < 4; sp++)
        for (int sc = 0; sc < 2; sc++)
            for (int i = 0; i < ndt; i++) {
                run *r = &R[sp][sc][i];
                /* the spring-damper steppers do not integrate the joint impedance: they get the stable
                 * PD predicted one period ahead with its torque held, their best controller */
                *r = simulate(scen[sc], steppers[sp], dts[i], duration, sp >= 2 ? "controller.feedback=stable" : NULL);
                char name[128];
                snprintf(name, sizeof name, "%s_%s_%g.dat", steppers[sp], sname[sc], 1e3 * dts[i]);
                write_series(a.data, name, r);
                char status[64];
                if (r->stable) snprintf(status, sizeof status, "stable");
                else snprintf(status, sizeof status, "failed at %.2f s", r->t_end);
                printf("  %-15s %-8s %6g  %-18s %12.3g %10.4f %13.4f %14.3g %10.3g %9.4g%s%s\n", steppers[sp], sname[sc],
                       1e3 * dts[i], status, r->max_tilt, r->z[r->n], r->x[r->n] - r->x[0],
                       r->mean_iters, r->min_alpha, r->rtf, r->stable ? "" : "  ", r->stable ? "" : r->why);
                fflush(stdout);
            }
    /* table I and the largest stable step */
    printf("\n# table I: std. dev. across the stable dt at each instant, averaged over time (m)\n");
    printf("#   quantity                 %-12s %-12s %-12s %-12s   paper: NE-MDP NE-NMDP\n", "mdp", "nmdp", "expo", "implicit_euler");
    double std[4][2];
    for (int sc = 0; sc < 2; sc++) {
        printf("    %-24s", sc ? "robosimian walk distance" : "robosimian jump height");
        for (int sp = 0; sp < 4; sp++) {
            run *rs[MAXDT];
            int used;
            for (int i = 0; i < ndt; i++) rs[i] = &R[sp][sc][i];
            std[sp][sc] = spread(rs, ndt, sc, duration, &used);
            char cell[32];
            snprintf(cell, sizeof cell, "%.3g (%d/%d)", std[sp][sc], used, ndt);
            printf(" %-12s", cell);
        }
        printf("   %s\n", sc ? "0.72 0.10" : "0.26 0.02");
    }
    double maxdt[4];
    for (int sp = 0; sp < 4; sp++) {
        maxdt[sp] = 0;
        for (int i = 0; i < ndt && R[sp][0][i].stable && R[sp][1][i].stable; i++) maxdt[sp] = dts[i];
    }
    printf("\n# largest dt of the set up to which both scenarios are stable (ms): mdp %g, nmdp %g, expo %g, "
           "implicit_euler %g (paper: NE-MDP 7, NE-NMDP 50)\n", 1e3 * maxdt[0], 1e3 * maxdt[1], 1e3 * maxdt[2], 1e3 * maxdt[3]);
    /* fig. 6: first against zeroth order at 50 ms */
    printf("\n# fig. 6: nmdp at 50 ms, first (order 1) against zeroth order (order 0); warm 0: Algorithm 1's w = 0 start\n");
    printf("#   scenario order warm  status        mean_fps  median_fps  outer_it/step  max_outer_it  min_alpha\n");
    double rtf50 = INFINITY;
    static const char *const variant[3] = {NULL, "nmdp.warm=0", "nmdp.order=0"};
    for (int sc = 0; sc < 2; sc++)
        for (int k = 0; k < 3; k++) {
            int order = k == 2 ? 0 : 1, warm = k != 1;
            run r = simulate(scen[sc], "nmdp", 0.05, duration, variant[k]);
            char name[128];
            if (k != 1) {
                snprintf(name, sizeof name, "fig6_%s_order%d.dat", sname[sc], order);
                write_series(a.data, name, &r);
            }
            double *fps = calloc((size_t)r.n, sizeof(double)), sumw = 0;
            int maxit = 0;
            for (long i = 1; i <= r.n; i++) { fps[i - 1] = 1 / r.wall[i]; sumw += r.wall[i]; maxit = r.iters[i] > maxit ? r.iters[i] : maxit; }
            double med = tool_median(fps, r.n);
            printf("    %-8s %5d %4d  %-12s %9.0f %11.0f %14.3g %13d %10.3g\n", sname[sc], order, warm, r.stable ? "stable" : "failed",
                   r.n / sumw, med, r.mean_iters, maxit, r.min_alpha);
            if (k == 0) rtf50 = fmin(rtf50, r.rtf);
            free(fps);
            run_free(&r);
        }
    tool_plot(MBS_SOURCE_DIR, "plot_nmdp.gp", a.data, a.images, "", "nmdp_{tilt,height,distance,fig6}.png");
    printf("\nnmdp_walk_dist_std: %.4g\n", std[1][1]);
    printf("nmdp_jump_height_std: %.4g\n", std[1][0]);
    printf("mdp_walk_dist_std: %.4g\n", std[0][1]);
    printf("mdp_jump_height_std: %.4g\n", std[0][0]);
    printf("mdp_max_stable_dt: %g\n", maxdt[0]);
    printf("nmdp_max_stable_dt: %g\n", maxdt[1]);
    printf("nmdp_realtime_factor_50ms: %.4g\n", rtf50);
    for (int sp = 0; sp < 4; sp++)
        for (int sc = 0; sc < 2; sc++)
            for (int i = 0; i < ndt; i++) run_free(&R[sp][sc][i]);
    return 0;
}
