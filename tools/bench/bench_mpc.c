/* bench_mpc.c — the mpc controller (issue 39) on its own scenarios. scenarios/solo_mpc_stand.ini: the
 * receding-horizon iLQR's iterations per second with the planner's analytical step Jacobians
 * (expo's) against the same MPC on forward differences (`[controller] derivatives = forward`, as
 * MuJoCo's mjd_transitionFD), the same pushes, in turn in one run; and what each does in closed loop
 * beside two baselines on the same robot and pushes: the joint PD of scenarios/solo_squat.ini
 * holding the posture (amplitude 0) and TSID (scenarios/solo_squat_tsid.ini, motion = stand).
 * Every run: 2 s, Solo shoved once, `push` below, expo at 2 ms, the controller at 10 ms.
 * scenarios/solo_mpc_trot.ini as written (5 s, its push) with either kind of derivatives, and the
 * joint-PD trot of scenarios/solo_trot.ini under the same push: distance, tilt, touch-downs
 * against the schedule's cycles, iterations per second, the real-time factor (the plans counted).
 * Prints `key: value` lines; a full run (not --quick) also writes its section of docs/benchmarks.md
 * (tools/bench/bench_doc.h).
 *   bench_mpc [--quick] [--data DIR] */
#include <math.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "bench_doc.h"
#include "bench_tool.h"
#include "mbs/sim.h"

static const char *PROGRAM = "bench_mpc";

typedef struct result {
    int stable;
    char status[48];   /* "stable", or "diverged at T s" / "left the box at T s" */
    double dx, dy, roll, pitch, tilt, rtf, distance;
    long touchdowns, max_foot_touchdowns;
    int cycles;        /* the mpc trot's schedule_cycles (0: none) */
    double it_per_s;   /* the mpc's plan_iterations_per_s (0: not an mpc) */
    long iterations;
} result;

/* A value of the controller's report ("key: value" lines), 0 when absent. */
static double report_value(const char *report, const char *key)
{
    size_t n = strlen(key);
    for (const char *p = report; p && *p; p = strchr(p, '\n') ? strchr(p, '\n') + 1 : NULL)
        if (strncmp(p, key, n) == 0 && p[n] == ':') return atof(p + n + 1);
    return 0;
}

static result run(const char *file, const char *const *over, int nover)
{
    char path[1024];
    snprintf(path, sizeof path, "%s/scenarios/%s", MBS_SOURCE_DIR, file);
    mbs_error err;
    mbs_scenario *sc = mbs_scenario_load(path, over, nover, &err);
    if (!sc) { fprintf(stderr, "%s: %s\n", PROGRAM, err.msg); exit(1); }
    mbs_sim *sim = mbs_sim_new(sc, &err);
    if (!sim) { fprintf(stderr, "%s: %s\n", PROGRAM, err.msg); exit(1); }
    const double *q = mbs_system_q(mbs_sim_system(sim));
    double x0 = q[0], y0 = q[1];
    mbs_sim_run_options o = {.csv = ""};
    mbs_sim_summary sum;
    if (mbs_sim_run(sim, &o, &sum, &err) != MBS_OK) { fprintf(stderr, "%s: %s\n", PROGRAM, err.msg); exit(1); }
    result r = {!sum.diverged && !sum.left_box, "", sum.base_final[0] - x0, sum.base_final[1] - y0,
                sum.base_final[3] * 180 / 3.14159265358979323846, sum.base_final[4] * 180 / 3.14159265358979323846,
                sum.max_tilt_deg, sum.realtime_factor, sum.distance_m, sum.touchdowns, sum.max_foot_touchdowns,
                (int)report_value(sum.controller_report, "schedule_cycles"),
                report_value(sum.controller_report, "plan_iterations_per_s"),
                (long)report_value(sum.controller_report, "plan_iterations")};
    if (r.stable) snprintf(r.status, sizeof r.status, "stable");
    else snprintf(r.status, sizeof r.status, "%s at %.2f s", sum.diverged ? "diverged" : "left the box", sum.diverged_t);
    mbs_sim_free(sim);
    mbs_scenario_free(sc);
    return r;
}

int main(int argc, char **argv)
{
    tool_single_thread_blas(argv);
    tool_args a;
    int rc = tool_parse_args(argc, argv, PROGRAM, MBS_SOURCE_DIR, NULL, &a);
    if (rc) return rc;
    bench_doc doc;
    bench_doc_open(&doc, a.data, "make bench-mpc", !a.quick);
    /* issue 39's push: 1 N s sideways (10 N for 0.1 s) at 0.3 s */
    const char *push = "run.push=0.3 0 10 0 0.1", *duration = a.quick ? "run.duration=0.6" : "run.duration=2";
    const int reps = a.quick ? 1 : 3;
    double t0 = tool_now();
    printf("# bench_mpc: scenarios/solo_mpc_stand.ini, %s, one push (%s); run %s; %s\n", duration + 4, push + 9, doc.stamp,
           doc.machine);
    /* the MPC with each kind of derivatives, in turn, the best of reps (the machine is shared) */
    result mpc[2] = {{0}};
    double best[2] = {0, 0};
    static const char *const der[2] = {"controller.derivatives=analytical", "controller.derivatives=forward"};
    for (int r = 0; r < reps; r++)
        for (int k = 0; k < 2; k++) {
            const char *over[3] = {duration, push, der[k]};
            result x = run("solo_mpc_stand.ini", over, 3);
            if (x.it_per_s > best[k]) { best[k] = x.it_per_s; mpc[k] = x; }
        }
    /* the baselines */
    const char *pd_over[5] = {duration, push, "controller.amplitude=0", "controller.dt=0.01", "stepper.dt=0.002"};
    result pd = run("solo_squat.ini", pd_over, 5);
    const char *tsid_over[5] = {duration, push, "controller.motion=stand", "controller.dt=0.01", "stepper.dt=0.002"};
    result tsid = run("solo_squat_tsid.ini", tsid_over, 5);
    const char *name[4] = {"mpc, analytical", "mpc, forward differences", "joint PD (solo_squat, amplitude 0)",
                           "TSID (solo_squat_tsid, stand)"};
    const result *R[4] = {&mpc[0], &mpc[1], &pd, &tsid};
    printf("# controller                            status                final dx_mm  dy_mm  roll_deg  pitch_deg  max_tilt_deg  "
           "touchdowns  iterations  it_per_s  rtf\n");
    for (int i = 0; i < 4; i++)
        printf("  %-36s  %-20s  %11.2f %6.2f %9.3f %10.3f %13.3f %11ld %11ld %9.4g %5.3g\n", name[i],
               R[i]->status, 1e3 * R[i]->dx, 1e3 * R[i]->dy, R[i]->roll, R[i]->pitch, R[i]->tilt,
               R[i]->touchdowns, R[i]->iterations, R[i]->it_per_s, R[i]->rtf);
    printf("# total %.0f s\n\n", tool_now() - t0);
    /* the trot: scenarios/solo_mpc_trot.ini as written (its push included) with each kind of
     * derivatives, one run each, and the joint-PD trot (solo_trot.ini) under the same push */
    double t1 = tool_now();
    const char *trot_duration = a.quick ? "run.duration=1" : "run.duration=5", *trot_push = "run.push=1.2 0 15 0 0.05";
    printf("# bench_mpc: scenarios/solo_mpc_trot.ini, %s, its push (%s), against scenarios/solo_trot.ini under that push\n",
           trot_duration + 4, trot_push + 9);
    result trot[3];
    for (int k = 0; k < 2; k++) {
        const char *over[3] = {trot_duration, trot_push, der[k]};
        trot[k] = run("solo_mpc_trot.ini", over, 3);
    }
    const char *pd_trot_over[2] = {trot_duration, trot_push};
    trot[2] = run("solo_trot.ini", pd_trot_over, 2);
    const char *trot_name[3] = {"mpc trot, analytical", "mpc trot, forward differences", "joint PD trot (solo_trot)"};
    printf("# controller                            status                distance_m  max_tilt_deg  touchdowns  per_foot_max  "
           "cycles  iterations  it_per_s  rtf\n");
    for (int i = 0; i < 3; i++)
        printf("  %-36s  %-20s  %10.3f %13.3f %11ld %13ld %7d %11ld %9.4g %5.3g\n", trot_name[i], trot[i].status,
               trot[i].distance, trot[i].tilt, trot[i].touchdowns, trot[i].max_foot_touchdowns, trot[i].cycles,
               trot[i].iterations, trot[i].it_per_s, trot[i].rtf);
    printf("# total %.0f s\n\n", tool_now() - t1);
    double ratio = best[1] > 0 ? best[0] / best[1] : 0;
    printf("mpc_iterations_per_s_analytical: %.4g\nmpc_iterations_per_s_fd: %.4g\nmpc_analytical_over_fd: %.3g\n", best[0],
           best[1], ratio);
    printf("mpc_trot_status: %s\nmpc_trot_distance_m: %.4g\nmpc_trot_max_tilt_deg: %.3g\nmpc_trot_max_foot_touchdowns: %ld\n"
           "mpc_trot_schedule_cycles: %d\nmpc_trot_realtime_factor: %.3g\nmpc_trot_iterations_per_s_analytical: %.4g\n"
           "mpc_trot_iterations_per_s_fd: %.4g\n",
           trot[0].status, trot[0].distance, trot[0].tilt, trot[0].max_foot_touchdowns, trot[0].cycles, trot[0].rtf,
           trot[0].it_per_s, trot[1].it_per_s);
    if (doc.f) {
        bench_doc_begin(&doc, "mpc");
        bench_doc_printf(&doc, "| controller | status | final (or last) base offset x / y (mm) | final roll / pitch (deg) | max tilt (deg) | "
                         "touch-downs | iLQR iterations | iterations per s | real-time factor |\n|---|---|---:|---:|---:|---:|---:|---:|---:|\n");
        for (int i = 0; i < 4; i++) {
            char its[32] = "—", rate[32] = "—";
            if (i < 2) {
                snprintf(its, sizeof its, "%ld", R[i]->iterations);
                snprintf(rate, sizeof rate, "%.4g", R[i]->it_per_s);
            }
            bench_doc_printf(&doc, "| %s | %s | %.1f / %.1f | %.2f / %.2f | %.2f | %ld | %s | %s | %.2f |\n", name[i],
                             R[i]->status, 1e3 * R[i]->dx, 1e3 * R[i]->dy, R[i]->roll, R[i]->pitch,
                             R[i]->tilt, R[i]->touchdowns, its, rate, R[i]->rtf);
        }
        bench_doc_printf(&doc, "\nIterations per second, the best of %d runs of each taken in turn: analytical %.4g, forward "
                         "differences %.4g, ratio %.3g (`mpc_analytical_over_fd`).\n", reps, best[0], best[1], ratio);
        bench_doc_printf(&doc, "\nThe trot, `scenarios/solo_mpc_trot.ini` for %s s with its push (%s), one run of each:\n\n"
                         "| controller | status | distance (m) | max tilt (deg) | touch-downs | most of one foot | schedule cycles | "
                         "iLQR iterations | iterations per s | real-time factor |\n|---|---|---:|---:|---:|---:|---:|---:|---:|---:|\n",
                         trot_duration + strlen("run.duration="), trot_push + strlen("run.push="));
        for (int i = 0; i < 3; i++) {
            char its[32] = "—", rate[32] = "—", cyc[32] = "—";
            if (i < 2) {
                snprintf(its, sizeof its, "%ld", trot[i].iterations);
                snprintf(rate, sizeof rate, "%.4g", trot[i].it_per_s);
                snprintf(cyc, sizeof cyc, "%d", trot[i].cycles);
            }
            bench_doc_printf(&doc, "| %s | %s | %.3f | %.2f | %ld | %ld | %s | %s | %s | %.2f |\n", trot_name[i], trot[i].status,
                             trot[i].distance, trot[i].tilt, trot[i].touchdowns, trot[i].max_foot_touchdowns, cyc, its, rate,
                             trot[i].rtf);
        }
        bench_doc_end(&doc, "mpc");
        bench_doc_output(&doc, "mpc");
    }
    bench_doc_close(&doc);
    return 0;
}
