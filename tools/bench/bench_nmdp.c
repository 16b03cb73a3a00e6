/* bench_nmdp.c — section VI of Pan and Hauser, "Implicit integration for articulated bodies with
 * contact via the nonconvex maximal dissipation principle" (2020), on scenarios/robosimian_jump.ini
 * and robosimian_walk.ini (issue 12, section 6):
 *   fig. 3   torso tilt of the jump for Δt in {5, 7, 10, 20, 30, 50} ms, mdp against nmdp, mdp with
 *            both of its feedbacks: semi-implicit (ours, the default) and explicit (the paper's NE-MDP,
 *            issue 42), the explicit one also on a finer set of small steps, down to 0.1 ms, to find
 *            the largest step at which it is stable;
 *   figs. 4–5 torso height of the jump and distance walked over time for the same Δt; zeroth-order
 *            nmdp (NE-ZONMDP) over the same Δt too, as fig. 3 runs all four NMDP variants, with its
 *            outer iterations per step against Δt beside first order's (fig. 6c);
 *   table I  for each, the standard deviation across the Δt set at each instant, averaged over time;
 *   fig. 6   at Δt = 50 ms, first- against zeroth-order nmdp: frame rate, outer iterations per step
 *            and the step fraction α Algorithm 2 chose;
 *   beyond   the same runs with expo and implicit_euler on the spring-damper contacts.
 * Every run holds the controller period equal to the step (the stable PD is evaluated at every
 * step, as in the paper): integrated by the stepper (feedback = impedance, the scenarios' own) for
 * mdp and nmdp (mdp semi-implicitly, or at the step's start with mdp.feedback = explicit), predicted one period ahead with its torque held (feedback = stable) for expo and
 * implicit_euler, which do not integrate it. A run is stable when it covers the whole duration without a stepper error,
 * with every velocity below 100 m/s or rad/s and the torso tilted less than 60°. The spread of
 * table I is taken over the step sizes whose run was stable, sampled every 50 ms (linear
 * interpolation between steps). Writes the data under build/bench_nmdp, the plots into
 * docs/images/nmdp_*.png (tools/bench/plot_nmdp.gp, when gnuplot is installed), and ends with
 * `key: value` lines. A full run (not --quick) also writes the tables of its section of
 * docs/benchmarks.md into <data>/tables.md (tools/bench/bench_doc.h), which tools/bench/bench_doc.py puts into
 * the document (make bench-nmdp does both).
 *   bench_nmdp [--quick] [--data DIR] [--images DIR]
 * --quick: 2 s horizons, Δt in {10, 50} ms and the explicit mdp at {0.25, 0.5} ms. Only the public API is used: the scenario and sim
 * give the system, and this program runs its own loop of controller and stepper, as an embedding
 * program does, to time each step and read its statistics. */
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

static const char *PROGRAM = "bench_nmdp";
enum { MAXDT = 6, MAXOPT = 64, NSTEP = 8, NFINE = 8 };

typedef struct run {
    int stable;
    double t_end;                  /* time reached */
    char why[160];
    long n;                        /* steps */
    double *t, *x, *y, *z, *tilt;  /* base after each step (n + 1 samples, 0: the start) */
    double *wall, *alpha;          /* per step: stepper time (s), smallest step fraction */
    int *iters;
    double rtf;                    /* simulated time over stepper time */
    double rtf_ctrl;               /* simulated time over stepper and controller time */
    double mean_iters, min_alpha, max_tilt;
    double max_pen;                /* deepest penetration of an active contact after a step (m) */
    double max_flight;             /* longest stretch without an active contact after the start (s) */
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
 * s, with up to two extra overrides (or NULL). */
static run simulate3(const char *file, const char *stepper, double dt, double duration, const char *extra,
                     const char *extra2, const char *extra3)
{
    run r = {0};
    char path[1024], o1[128], o2[64], o3[64], o4[64];
    snprintf(path, sizeof path, "%s/scenarios/%s", MBS_SOURCE_DIR, file);
    snprintf(o1, sizeof o1, "stepper.name=%s", stepper);
    snprintf(o2, sizeof o2, "stepper.dt=%.17g", dt);
    snprintf(o3, sizeof o3, "controller.dt=%.17g", dt);
    snprintf(o4, sizeof o4, "run.duration=%.17g", duration);
    const char *ov[7] = {o1, o2, o3, o4};
    int nov = 4;
    if (extra) ov[nov++] = extra;
    if (extra2) ov[nov++] = extra2;
    if (extra3) ov[nov++] = extra3;
    mbs_error err;
    mbs_scenario *sc = mbs_scenario_load(path, ov, nov, &err);
    if (!sc) { fprintf(stderr, "%s: %s\n", PROGRAM, err.msg); exit(1); }
    mbs_sim *sim = mbs_sim_new(sc, &err);
    if (!sim) { fprintf(stderr, "%s: %s\n", PROGRAM, err.msg); exit(1); }
    mbs_system *s = mbs_sim_system(sim);
    mbs_option so[MAXOPT], co[MAXOPT];
    int ns = mbs_scenario_options(sc, stepper, so, MAXOPT), nc = mbs_scenario_options(sc, "controller", co, MAXOPT);
    mbs_system_finalize(s, NULL);
    mbs_stepper *st = mbs_stepper_new(stepper, s, so, ns, &err);
    mbs_system_finalize(s, NULL);
    mbs_controller *c = st ? mbs_controller_new(mbs_scenario_controller(sc), s, mbs_scenario_q0(sc), dt, co, nc, &err) : NULL;
    if (!st || !c) { fprintf(stderr, "%s: %s\n", PROGRAM, err.msg); exit(1); }
    const mbs_model *m = mbs_system_model(s);
    int nv = mbs_model_nv(m);
    long n = (long)ceil(duration / dt - 1e-9);
    r.t = calloc((size_t)n + 1, sizeof(double)); r.x = calloc((size_t)n + 1, sizeof(double));
    r.y = calloc((size_t)n + 1, sizeof(double)); r.z = calloc((size_t)n + 1, sizeof(double));
    r.tilt = calloc((size_t)n + 1, sizeof(double)); r.wall = calloc((size_t)n + 1, sizeof(double));
    r.alpha = calloc((size_t)n + 1, sizeof(double)); r.iters = calloc((size_t)n + 1, sizeof(int));
    double *tau = calloc((size_t)nv, sizeof(double)), stepping = 0, controlling = 0, flight = 0;
    const int ncontacts = mbs_system_ncontacts(s);
    const double *q = mbs_system_q(s), *v = mbs_system_v(s);
    r.x[0] = q[0]; r.y[0] = q[1]; r.z[0] = q[2]; r.tilt[0] = tilt_deg(q + 3);
    r.stable = 1;
    r.min_alpha = 1;
    long it_sum = 0, k;
    for (k = 0; k < n; k++) {
        double t = (double)k * dt, tc = tool_now();
        mbs_controller_compute(c, t, q, v, tau);
        mbs_system_set_tau(s, tau);
        controlling += tool_now() - tc;
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
        int touching = 0;
        for (int i = 0; i < ncontacts; i++) {
            mbs_contact_info ci;
            if (mbs_system_contact(s, i, &ci) != MBS_OK || !ci.active) continue;
            touching = 1;
            r.max_pen = fmax(r.max_pen, ci.depth);
        }
        flight = touching ? 0 : flight + dt;
        r.max_flight = fmax(r.max_flight, flight);
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
    r.rtf_ctrl = stepping + controlling > 0 ? r.t_end / (stepping + controlling) : 0;
    r.mean_iters = k ? (double)it_sum / (double)k : 0;
    free(tau);
    mbs_controller_free(c);
    mbs_stepper_free(st);
    mbs_sim_free(sim);
    mbs_scenario_free(sc);
    return r;
}

static run simulate2(const char *file, const char *stepper, double dt, double duration, const char *extra,
                     const char *extra2)
{
    return simulate3(file, stepper, dt, duration, extra, extra2, NULL);
}
static run simulate(const char *file, const char *stepper, double dt, double duration, const char *extra)
{
    return simulate2(file, stepper, dt, duration, extra, NULL);
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

/* Writes run r's data file and prints its row of the output. */
static void report(const char *data, const char *label, const char *scen, double dt, const run *r)
{
    char name[128];
    snprintf(name, sizeof name, "%s_%s_%g.dat", label, scen, 1e3 * dt);
    write_series(data, name, r);
    char status[64];
    if (r->stable) snprintf(status, sizeof status, "stable");
    else snprintf(status, sizeof status, "failed at %.2f s", r->t_end);
    printf("  %-15s %-8s %6g  %-18s %12.3g %10.4f %13.4f %14.3g %10.3g %9.4g %11.3g %9.3g%s%s\n", label, scen, 1e3 * dt,
           status, r->max_tilt, r->z[r->n], r->x[r->n] - r->x[0], r->mean_iters, r->min_alpha, r->rtf, 1e3 * r->max_pen,
           r->max_flight, r->stable ? "" : "  ", r->stable ? "" : r->why);
    fflush(stdout);
}

/* The largest step at which the scenario's joint PD, taken explicitly (sampled at the step's start
 * and held), is stable on the lightest joint it drives: on one joint of apparent inertia I (1 / (M⁻¹)_jj
 * at the initial posture), v⁺ = v + h (−kp x − kd v) / I, x⁺ = x + h v⁺ has the characteristic
 * polynomial z² − (2 − h kd / I − h² kp / I) z + 1 − h kd / I, inside the unit circle (Jury) while
 * 2 h kd / I + h² kp / I < 4. The controller's uniform kp and kd (the scenario's [controller]); the
 * joint's name into *joint. 0 when the gains are not uniform or absent. */
static double explicit_pd_bound(const char *file, const char **joint)
{
    char path[1024];
    snprintf(path, sizeof path, "%s/scenarios/%s", MBS_SOURCE_DIR, file);
    mbs_error err;
    mbs_scenario *sc = mbs_scenario_load(path, NULL, 0, &err);
    if (!sc) { fprintf(stderr, "%s: %s\n", PROGRAM, err.msg); exit(1); }
    mbs_sim *sim = mbs_sim_new(sc, &err);
    if (!sim) { fprintf(stderr, "%s: %s\n", PROGRAM, err.msg); exit(1); }
    mbs_option co[MAXOPT];
    int nc = mbs_scenario_options(sc, "controller", co, MAXOPT);
    double kp = 0, kd = 0, best = 0;
    int uniform = 1;
    for (int i = 0; i < nc; i++) {
        if (strcmp(co[i].key, "kp") == 0) kp = co[i].value;
        if (strcmp(co[i].key, "kd") == 0) kd = co[i].value;
        if (strcmp(co[i].key, "gains") == 0 && co[i].word && strcmp(co[i].word, "uniform") != 0) uniform = 0;
    }
    const mbs_model *m = mbs_system_model(mbs_sim_system(sim));
    int nv = mbs_model_nv(m);
    mbs_data *d = mbs_data_new(m);
    double *Minv = calloc((size_t)nv * (size_t)nv, sizeof(double));
    static char name[128];
    *joint = "";
    if (uniform && kp + kd > 0 && d && Minv && mbs_minverse(m, d, mbs_scenario_q0(sc), Minv) == MBS_OK)
        for (int j = 0; j < mbs_model_njoints(m); j++) {
            if (mbs_joint_nv(m, j) != 1) continue;
            int k = mbs_joint_idx_v(m, j);
            double I = 1 / Minv[k + (size_t)nv * k];
            double h = kp > 0 ? (-kd + sqrt(kd * kd + 4 * kp * I)) / kp : 2 * I / kd;
            if (best == 0 || h < best) {
                best = h;
                snprintf(name, sizeof name, "%s (I = %.3g kg m^2)", mbs_joint_name(m, j), I);
                *joint = name;
            }
        }
    free(Minv);
    mbs_data_free(d);
    mbs_sim_free(sim);
    mbs_scenario_free(sc);
    return best;
}

/* A step fraction α = 2^-k as "1/2^k" (1 as "1"). */
static const char *frac(char *buf, size_t n, double a)
{
    if (a >= 1) snprintf(buf, n, "1");
    else if (a > 0 && fabs(1 / a - round(1 / a)) < 1e-9) snprintf(buf, n, "1/%.0f", 1 / a);
    else snprintf(buf, n, "%.3g", a);
    return buf;
}

int main(int argc, char **argv)
{
    tool_single_thread_blas(argv);
    tool_args a;
    int rc = tool_parse_args(argc, argv, PROGRAM, MBS_SOURCE_DIR, NULL, &a);
    if (rc) return rc;
    bench_doc doc;
    bench_doc_open(&doc, a.data, "make bench-nmdp", !a.quick);
    static const double full[] = {0.005, 0.007, 0.010, 0.020, 0.030, 0.050}, quick[] = {0.010, 0.050};
    const double *dts = a.quick ? quick : full;
    const int ndt = a.quick ? 2 : 6;
    const double duration = a.quick ? 2 : 10;
    const char *scen[2] = {"robosimian_jump.ini", "robosimian_walk.ini"}, *sname[2] = {"jump", "walk"};
    /* the rows: a scheme, its label in the output and the data files, and the override it runs with
     * (the spring-damper steppers do not integrate the joint impedance: they get the stable PD
     * predicted one period ahead with its torque held, their best controller) */
    const char *steppers[NSTEP] = {"mdp", "nmdp", "expo", "implicit_euler", "mdp", "nmdp", "nmdp", "nmdp"};
    const char *label[NSTEP] = {"mdp", "nmdp", "expo", "implicit_euler", "mdp_explicit", "nmdp_order0", "pbd_nmdp",
                                "pbd_zonmdp"};
    /* nmdp as the paper's (no depth bound) in figs. 3-5, table I and fig. 6; the bound (ours, the
     * default) in fig. 6's last variant */
    const char *extra[NSTEP] = {NULL, "nmdp.nonpenetration=0", "controller.feedback=stable", "controller.feedback=stable",
                                "mdp.feedback=explicit", "nmdp.nonpenetration=0", "nmdp.nonpenetration=0",
                                "nmdp.nonpenetration=0"};
    /* the last three rows, zeroth-order nmdp (the paper's NE-ZONMDP, eqs. 10-11) and position-based
     * nmdp of first and zeroth order (PBD-NMDP, PBD-ZONMDP, eq. 12), over the same steps as its fig. 3
     * runs all four NMDP variants */
    const char *extra2[NSTEP] = {NULL, NULL, NULL, NULL, NULL, "nmdp.order=0", "nmdp.dynamics=pbd", "nmdp.dynamics=pbd"};
    const char *extra3[NSTEP] = {NULL, NULL, NULL, NULL, NULL, NULL, NULL, "nmdp.order=0"};
    static run R[NSTEP][2][MAXDT];
    double t_start = tool_now();
    printf("# bench_nmdp: Pan and Hauser 2020, section VI, on scenarios/robosimian_{jump,walk}.ini, %g s each\n",
           duration);
    printf("# run %s; %s\n", doc.stamp, doc.machine);
    printf("# max_pen_mm: deepest penetration of a contact after a step; flight_s: longest stretch without a contact\n");
    printf("# mdp_explicit: mdp with feedback = explicit, the joint PD at the step's start (the paper's NE-MDP)\n");
    printf("# stepper         scenario  dt_ms  status              max_tilt_deg  final_z_m  distance_x_m  outer_it/step  min_alpha"
           "       rtf  max_pen_mm  flight_s\n");
    for (int sp = 0; sp < NSTEP; sp++)
        for (int sc = 0; sc < 2; sc++)
            for (int i = 0; i < ndt; i++) {
                R[sp][sc][i] = simulate3(scen[sc], steppers[sp], dts[i], duration, extra[sp], extra2[sp], extra3[sp]);
                report(a.data, label[sp], sname[sc], dts[i], &R[sp][sc][i]);
            }
    /* the explicit mdp on smaller steps: where its instability starts */
    static const double fine_full[NFINE] = {0.0001, 0.0002, 0.00025, 0.0003125, 0.0004, 0.0005, 0.001, 0.002};
    static const double fine_quick[2] = {0.00025, 0.0005};
    const double *fine = a.quick ? fine_quick : fine_full;
    const int nfine = a.quick ? 2 : NFINE;
    static run F[2][NFINE];
    printf("# mdp_explicit on smaller steps\n");
    for (int sc = 0; sc < 2; sc++)
        for (int i = 0; i < nfine; i++) {
            F[sc][i] = simulate(scen[sc], "mdp", fine[i], duration, "mdp.feedback=explicit");
            report(a.data, "mdp_explicit", sname[sc], fine[i], &F[sc][i]);
        }
    /* the largest step of the fine set, then the main one, up to which the explicit mdp is stable
     * (every smaller one too), per scenario and for both */
    double xdt_sc[2] = {0, 0}, xdt, xfail_sc[2] = {0, 0};
    for (int sc = 0; sc < 2; sc++) {
        int ok = 1;
        for (int i = 0; i < nfine + ndt; i++) {
            const run *r = i < nfine ? &F[sc][i] : &R[4][sc][i - nfine];
            double h = i < nfine ? fine[i] : dts[i - nfine];
            if (ok && r->stable) xdt_sc[sc] = h;
            else if (ok) { ok = 0; xfail_sc[sc] = h; }
        }
    }
    xdt = fmin(xdt_sc[0], xdt_sc[1]);
    const char *bound_joint;
    double bound = explicit_pd_bound(scen[0], &bound_joint);
    /* table I and the largest stable step */
    printf("\n# table I: std. dev. across the stable dt at each instant, averaged over time (m)\n");
    printf("#   quantity                 %-12s %-12s %-12s %-12s %-12s %-12s %-12s   paper: NE-MDP NE-NMDP PBD-NMDP\n", "mdp", "nmdp",
           "expo", "implicit_euler", "nmdp_order0", "pbd_nmdp", "pbd_zonmdp");
    /* the rows of table I and of the largest stable step: every scheme but the explicit mdp, which
     * has its finer set of steps */
    enum { NTAB = 7 };
    static const int tab[NTAB] = {0, 1, 2, 3, 5, 6, 7};
    double std[NSTEP][2] = {{0}};
    int used_n[NSTEP][2] = {{0}};
    for (int sc = 0; sc < 2; sc++) {
        printf("    %-24s", sc ? "robosimian walk distance" : "robosimian jump height");
        for (int t = 0; t < NTAB; t++) {
            int sp = tab[t];
            run *rs[MAXDT];
            for (int i = 0; i < ndt; i++) rs[i] = &R[sp][sc][i];
            std[sp][sc] = spread(rs, ndt, sc, duration, &used_n[sp][sc]);
            char cell[32];
            snprintf(cell, sizeof cell, "%.3g (%d/%d)", std[sp][sc], used_n[sp][sc], ndt);
            printf(" %-12s", cell);
        }
        printf("   %s\n", sc ? "0.72 0.10 0.25" : "0.26 0.02 0.01");
    }
    /* the largest dt of the set up to which a scenario is stable (every smaller one too), per
     * scenario and for both */
    double maxdt[NSTEP] = {0}, maxdt_sc[NSTEP][2] = {{0}};
    for (int t = 0; t < NTAB; t++) {
        int sp = tab[t];
        maxdt[sp] = 0;
        for (int i = 0; i < ndt && R[sp][0][i].stable && R[sp][1][i].stable; i++) maxdt[sp] = dts[i];
        for (int sc = 0; sc < 2; sc++) {
            maxdt_sc[sp][sc] = 0;
            for (int i = 0; i < ndt && R[sp][sc][i].stable; i++) maxdt_sc[sp][sc] = dts[i];
        }
    }
    printf("\n# largest dt of the set up to which both scenarios are stable (ms): mdp %g, nmdp %g, expo %g, "
           "implicit_euler %g (paper: NE-MDP 7, NE-NMDP 50)\n", 1e3 * maxdt[0], 1e3 * maxdt[1], 1e3 * maxdt[2], 1e3 * maxdt[3]);
    printf("# the same per scenario, jump / walk (ms): mdp %g / %g, nmdp %g / %g, expo %g / %g, implicit_euler %g / %g\n",
           1e3 * maxdt_sc[0][0], 1e3 * maxdt_sc[0][1], 1e3 * maxdt_sc[1][0], 1e3 * maxdt_sc[1][1], 1e3 * maxdt_sc[2][0],
           1e3 * maxdt_sc[2][1], 1e3 * maxdt_sc[3][0], 1e3 * maxdt_sc[3][1]);
    printf("# mdp with feedback = explicit (the paper's NE-MDP), over both sets of steps: stable up to %g ms on the jump "
           "(first failure at %g ms), %g ms on the walk (first failure at %g ms); paper: 7 ms\n", 1e3 * xdt_sc[0],
           1e3 * xfail_sc[0], 1e3 * xdt_sc[1], 1e3 * xfail_sc[1]);
    printf("# zeroth-order nmdp (NE-ZONMDP): stable up to %g ms on both (jump %g, walk %g; paper: 50 ms); outer iterations per "
           "step against the step (fig. 6c), walk, first / zeroth order:", 1e3 * maxdt[5], 1e3 * maxdt_sc[5][0], 1e3 * maxdt_sc[5][1]);
    for (int i = 0; i < ndt; i++) printf(" %g ms %.3g / %.3g%s", 1e3 * dts[i], R[1][1][i].mean_iters, R[5][1][i].mean_iters, i + 1 < ndt ? "," : "\n");
    printf("# position-based nmdp: PBD-NMDP stable up to %g ms on both (jump %g, walk %g), PBD-ZONMDP %g ms (jump %g, walk %g); "
           "paper: 50 ms; outer iterations per step, walk, PBD first / zeroth order:", 1e3 * maxdt[6], 1e3 * maxdt_sc[6][0],
           1e3 * maxdt_sc[6][1], 1e3 * maxdt[7], 1e3 * maxdt_sc[7][0], 1e3 * maxdt_sc[7][1]);
    for (int i = 0; i < ndt; i++) printf(" %g ms %.3g / %.3g%s", 1e3 * dts[i], R[6][1][i].mean_iters, R[7][1][i].mean_iters, i + 1 < ndt ? "," : "\n");
    printf("# the explicit PD's own bound on its lightest joint, 2 h kd / I + h^2 kp / I < 4: h < %.3g ms, %s\n",
           1e3 * bound, bound_joint);
    /* fig. 6: first against zeroth order at 50 ms */
    printf("\n# fig. 6: nmdp at 50 ms, first (order 1) against zeroth order (order 0); warm 0: Algorithm 1's w = 0 start\n");
    printf("#   scenario order warm  status        mean_fps  median_fps  outer_it/step  max_outer_it  min_alpha  max_pen_mm"
           "  rtf_with_controller\n");
    double rtf50 = INFINITY;
    /* per scenario and variant (0: first order, 1: warm 0, 2: zeroth order): mean fps, mean outer
     * iterations, smallest α, deepest penetration, real-time factor with the controller */
    double fig_fps[2][4], fig_it[2][4], fig_alpha[2][4], fig_pen[2][4], fig_rtfc[2][4];
    int fig_stable[2][4];
    /* 0-2: the paper's NMDP (first order, Algorithm 1's cold start, zeroth order); 3: the depth bound (ours) */
    static const char *const variant[4] = {NULL, "nmdp.warm=0", "nmdp.order=0", NULL};
    for (int sc = 0; sc < 2; sc++)
        for (int k = 0; k < 4; k++) {
            int order = k == 2 ? 0 : 1, warm = k != 1;
            run r = simulate2(scen[sc], "nmdp", 0.05, duration, variant[k], k < 3 ? "nmdp.nonpenetration=0" : NULL);
            char name[128];
            if (k == 0 || k == 2) {
                snprintf(name, sizeof name, "fig6_%s_order%d.dat", sname[sc], order);
                write_series(a.data, name, &r);
            }
            double *fps = calloc((size_t)r.n, sizeof(double)), sumw = 0;
            int maxit = 0;
            for (long i = 1; i <= r.n; i++) { fps[i - 1] = 1 / r.wall[i]; sumw += r.wall[i]; maxit = r.iters[i] > maxit ? r.iters[i] : maxit; }
            double med = tool_median(fps, r.n);
            fig_fps[sc][k] = r.n / sumw;
            fig_it[sc][k] = r.mean_iters;
            fig_alpha[sc][k] = r.min_alpha;
            fig_pen[sc][k] = r.max_pen;
            fig_rtfc[sc][k] = r.rtf_ctrl;
            fig_stable[sc][k] = r.stable;
            printf("    %-8s %5d %4d  %-12s %9.0f %11.0f %14.3g %13d %10.3g %11.3g %20.4g%s\n", sname[sc], order, warm,
                   r.stable ? "stable" : "failed", r.n / sumw, med, r.mean_iters, maxit, r.min_alpha, 1e3 * r.max_pen, r.rtf_ctrl,
                   k == 3 ? "  (depth bound, ours)" : "");
            if (k == 0) rtf50 = fmin(rtf50, r.rtf);
            free(fps);
            run_free(&r);
        }
    tool_plot(MBS_SOURCE_DIR, "plot_nmdp.gp", a.data, a.images, "", "nmdp_{tilt,height,distance,fig6}.png");
    printf("# total %.0f s\n", tool_now() - t_start);
    printf("\nnmdp_walk_dist_std: %.4g\n", std[1][1]);
    printf("nmdp_jump_height_std: %.4g\n", std[1][0]);
    printf("mdp_walk_dist_std: %.4g\n", std[0][1]);
    printf("mdp_jump_height_std: %.4g\n", std[0][0]);
    printf("mdp_max_stable_dt: %g\n", maxdt[0]);
    printf("mdp_explicit_max_stable_dt: %g\n", xdt);
    printf("mdp_explicit_pd_bound_dt: %.4g\n", bound);
    printf("nmdp_max_stable_dt: %g\n", maxdt[1]);
    printf("nmdp_order0_max_stable_dt: %g\n", maxdt[5]);
    printf("nmdp_order0_walk_dist_std: %.4g\n", std[5][1]);
    printf("nmdp_order0_jump_height_std: %.4g\n", std[5][0]);
    printf("pbd_nmdp_max_stable_dt: %g\n", maxdt[6]);
    printf("pbd_nmdp_walk_dist_std: %.4g\n", std[6][1]);
    printf("pbd_nmdp_jump_height_std: %.4g\n", std[6][0]);
    printf("pbd_zonmdp_max_stable_dt: %g\n", maxdt[7]);
    printf("pbd_zonmdp_walk_dist_std: %.4g\n", std[7][1]);
    printf("pbd_zonmdp_jump_height_std: %.4g\n", std[7][0]);
    printf("nmdp_realtime_factor_50ms: %.4g\n", rtf50);
    printf("nmdp_bound_walk_max_pen: %.4g\n", fig_pen[1][3]);
    printf("nmdp_bound_jump_max_pen: %.4g\n", fig_pen[0][3]);

    /* the section's tables (a full run only: the last dt of the set is then 50 ms) */
    if (doc.f) {
        char f1[32], f2[32], f3[32], f4[32];
        const int last = ndt - 1;   /* 50 ms */
        bench_doc_begin(&doc, "nmdp-paper");
        bench_doc_printf(&doc, "| | paper (their machine) | ours |\n|---|---|---|\n");
        bench_doc_printf(&doc, "| NE-MDP (`mdp`, `feedback = explicit`: the PD at the step's start) stable up to | 7 ms | "
                         "%g ms (`mdp_explicit_max_stable_dt`; jump %g ms, walk %g ms, the next step of the set failing: "
                         "%g ms and %g ms) |\n", 1e3 * xdt, 1e3 * xdt_sc[0], 1e3 * xdt_sc[1], 1e3 * xfail_sc[0],
                         1e3 * xfail_sc[1]);
        bench_doc_printf(&doc, "| the explicit PD's own bound on its lightest joint (2 h kd / I + h² kp / I < 4) | — | "
                         "%.2g ms (`mdp_explicit_pd_bound_dt`): %s |\n", 1e3 * bound, bound_joint);
        bench_doc_printf(&doc, "| `mdp`, `feedback = semi_implicit` (the default: M + h Kd + h² Kp) stable up to | — | "
                         "%g ms (`mdp_max_stable_dt`)%s |\n", 1e3 * maxdt[0],
                         maxdt[0] == dts[last] ? ", every step size of the set" : "");
        bench_doc_printf(&doc, "| NE-NMDP stable up to | 50 ms | %g ms (`nmdp_max_stable_dt`)%s |\n", 1e3 * maxdt[1],
                         maxdt[1] == dts[last] ? ", every step size of the set" : "");
        bench_doc_printf(&doc, "| NE-ZONMDP (`nmdp`, `order = 0`) stable up to | 50 ms (fig. 3) | %g ms (`nmdp_order0_max_stable_dt`)%s |\n",
                         1e3 * maxdt[5], maxdt[5] == dts[last] ? ", every step size of the set" : "");
        bench_doc_printf(&doc, "| PBD-NMDP (`nmdp`, `dynamics = pbd`) / PBD-ZONMDP (and `order = 0`) stable up to | 50 ms / 50 ms "
                         "(fig. 3) | %g ms / %g ms (`pbd_nmdp_max_stable_dt`, `pbd_zonmdp_max_stable_dt`) |\n", 1e3 * maxdt[6],
                         1e3 * maxdt[7]);
        bench_doc_printf(&doc, "| outer iterations per step against the step, walk, PBD-NMDP / PBD-ZONMDP | fig. 6c (NE only) |");
        for (int i = 0; i < ndt; i++)
            bench_doc_printf(&doc, " %g ms: %.2g / %.2g%s", 1e3 * dts[i], R[6][1][i].mean_iters, R[7][1][i].mean_iters,
                             i + 1 < ndt ? ";" : " |\n");
        bench_doc_printf(&doc, "| outer iterations per step against the step, walk, NE-NMDP / NE-ZONMDP | fig. 6c |");
        for (int i = 0; i < ndt; i++)
            bench_doc_printf(&doc, " %g ms: %.2g / %.2g%s", 1e3 * dts[i], R[1][1][i].mean_iters, R[5][1][i].mean_iters,
                             i + 1 < ndt ? ";" : " |\n");
        bench_doc_printf(&doc, "| jump height spread, NE-MDP (ours: `mdp` semi-implicit) / NE-NMDP (m) | 0.26 / 0.02 | %.2g / %.2g |\n", std[0][0], std[1][0]);
        bench_doc_printf(&doc, "| walk distance spread, NE-MDP (ours: `mdp` semi-implicit) / NE-NMDP (m) | 0.72 / 0.10 | %.2g / %.2g |\n", std[0][1], std[1][1]);
        bench_doc_printf(&doc, "| jump height / walk distance spread, NE-ZONMDP (m) | — (table I has no zeroth-order column) | %.2g / %.2g |\n",
                         std[5][0], std[5][1]);
        bench_doc_printf(&doc, "| jump height / walk distance spread, PBD-NMDP (m) | 0.01 / 0.25 | %.2g / %.2g |\n", std[6][0],
                         std[6][1]);
        bench_doc_printf(&doc, "| jump height / walk distance spread, PBD-ZONMDP (m) | — (table I has no zeroth-order column) | "
                         "%.2g / %.2g |\n", std[7][0], std[7][1]);
        bench_doc_printf(&doc, "| outer iterations per step at 50 ms, first / zeroth order | fig. 6: zeroth order about 10× first | "
                         "jump %.1f / %.1f, walk %.1f / %.1f (%.1f× and %.1f×) |\n", fig_it[0][0], fig_it[0][2], fig_it[1][0],
                         fig_it[1][2], fig_it[0][2] / fig_it[0][0], fig_it[1][2] / fig_it[1][0]);
        bench_doc_printf(&doc, "| smallest step fraction α at 50 ms, first / zeroth order | 1 / 0.5 (25 ms) | jump %s / %s, "
                         "walk %s / %s |\n", frac(f1, sizeof f1, fig_alpha[0][0]), frac(f2, sizeof f2, fig_alpha[0][2]),
                         frac(f3, sizeof f3, fig_alpha[1][0]), frac(f4, sizeof f4, fig_alpha[1][2]));
        bench_doc_printf(&doc, "| nmdp real-time factor at 50 ms (stepper only, the slower scenario) | fig. 6a: frame rates | %.0f "
                         "(`nmdp_realtime_factor_50ms`); stepper and controller (this program's loop): jump %.0f, walk %.0f |\n",
                         rtf50, fig_rtfc[0][0], fig_rtfc[1][0]);
        bench_doc_printf(&doc, "| nmdp with the depth bound (`nonpenetration = 1`, ours, the default) at 50 ms: deepest foot, jump / "
                         "walk | — (the paper's sinks: %.1f / %.1f mm) | %.1f / %.1f mm (`nmdp_bound_*_max_pen`), %.1f / %.1f outer "
                         "iterations per step (the paper's %.1f / %.1f), stepper and controller %.0f / %.0f× real time |\n",
                         1e3 * fig_pen[0][0], 1e3 * fig_pen[1][0], 1e3 * fig_pen[0][3], 1e3 * fig_pen[1][3], fig_it[0][3],
                         fig_it[1][3], fig_it[0][0], fig_it[1][0], fig_rtfc[0][3], fig_rtfc[1][3]);
        /* the figures the notes under the table quote */
        double flight_lo = INFINITY, flight_hi = 0, pen_walk1 = 0;
        for (int sp = 0; sp < 2; sp++)
            for (int i = 0; i < ndt; i++)
                if (R[sp][0][i].stable) {
                    flight_lo = fmin(flight_lo, R[sp][0][i].max_flight);
                    flight_hi = fmax(flight_hi, R[sp][0][i].max_flight);
                }
        for (int i = 0; i < ndt; i++) pen_walk1 = fmax(pen_walk1, R[1][1][i].max_pen);
        double slow_lo = fmin(fig_fps[0][0] / fig_fps[0][2], fig_fps[1][0] / fig_fps[1][2]);
        double slow_hi = fmax(fig_fps[0][0] / fig_fps[0][2], fig_fps[1][0] / fig_fps[1][2]);
        bench_doc_printf(&doc, "\nFigures of the same run that the notes below quote:\n\n");
        bench_doc_printf(&doc, "- deepest penetration of a foot at 50 ms: mdp %.1f cm on the jump and %.1f cm on the walk, nmdp "
                         "%.1f mm and %.1f mm (the scenarios as written: nmdp at 50 ms);\n", 1e2 * R[0][0][last].max_pen,
                         1e2 * R[0][1][last].max_pen, 1e3 * R[1][0][last].max_pen, 1e3 * R[1][1][last].max_pen);
        bench_doc_printf(&doc, "- the jump's longest flight (no foot in contact), mdp and nmdp over the stable step sizes: "
                         "%.2f–%.2f s;\n", flight_lo, flight_hi);
        bench_doc_printf(&doc, "- nmdp at 50 ms with `warm = 0` (Algorithm 1's start): %.1f outer iterations per step on the jump "
                         "instead of %.1f, %.1f on the walk instead of %.1f%s;\n", fig_it[0][1], fig_it[0][0], fig_it[1][1],
                         fig_it[1][0], fig_stable[0][1] && fig_stable[1][1] ? " (both stable)" : " (not both stable)");
        bench_doc_printf(&doc, "- zeroth order at 50 ms: α down to %s (jump) and %s (walk), %.0f–%.0f× slower per step than first "
                         "order (mean frame rates);\n", frac(f1, sizeof f1, fig_alpha[0][2]), frac(f2, sizeof f2, fig_alpha[1][2]),
                         slow_lo, slow_hi);
        bench_doc_printf(&doc, "- largest step of the set up to which each scenario is stable, jump / walk (ms): mdp %g / %g, nmdp "
                         "%g / %g, expo %g / %g, implicit_euler %g / %g;\n", 1e3 * maxdt_sc[0][0], 1e3 * maxdt_sc[0][1],
                         1e3 * maxdt_sc[1][0], 1e3 * maxdt_sc[1][1], 1e3 * maxdt_sc[2][0], 1e3 * maxdt_sc[2][1],
                         1e3 * maxdt_sc[3][0], 1e3 * maxdt_sc[3][1]);
        bench_doc_printf(&doc, "- deepest penetration on the walk, first-order nmdp over the step sizes: %.1f mm; zeroth order at "
                         "50 ms: %.1f mm.\n", 1e3 * pen_walk1, 1e3 * fig_pen[1][2]);
        bench_doc_end(&doc, "nmdp-paper");
        bench_doc_output(&doc, "nmdp");
    }
    bench_doc_close(&doc);
    for (int sp = 0; sp < NSTEP; sp++)
        for (int sc = 0; sc < 2; sc++)
            for (int i = 0; i < ndt; i++) run_free(&R[sp][sc][i]);
    for (int sc = 0; sc < 2; sc++)
        for (int i = 0; i < nfine; i++) run_free(&F[sc][i]);
    return 0;
}
