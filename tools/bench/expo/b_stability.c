/* b_stability.c — part (b) of bench_expo, table 2 of Hammoud et al. 2022: the largest stable step
 * per stepper and scenario over the full duration; expo as the scenarios run it, with Padé, and as
 * the paper's scheme (Padé full, linearised at the step's start, no touch-down splitting). */
#include "expo.h"

typedef struct stab_stepper {
    const char *key, *stepper;
    int mmm;     /* expo: -2 the scenario as written, else max_mat_mult */
    int paper;   /* expo: the paper's scheme, linearise = start and split = 0 */
} stab_stepper;
static const stab_stepper STAB[] = {
    {"euler", "euler", -2, 0},
    {"symplectic_euler", "symplectic_euler", -2, 0},
    {"rk4", "rk4", -2, 0},
    {"implicit_euler", "implicit_euler", -2, 0},
    {"variational", "variational", -2, 0},
    {"expo", "expo", -2, 0},
    {"expo_mmm0", "expo", 0, 0},
    {"expo_full", "expo", -1, 0},
    {"expo_paper", "expo", -1, 1},
};
enum { NSTAB = sizeof STAB / sizeof *STAB };

/* One run of the scenario for its full duration; 0 when refused (a scheme's option). */
static int full_run(const char *scen, const stab_stepper *p, double dt, mbs_sim_summary *sum)
{
    ovl o = {0};
    ov_add(&o, "stepper.name=%s", p->stepper);
    ov_add(&o, "stepper.dt=%.17g", dt);
    if (p->mmm > -2) ov_pade(&o, p->mmm);
    if (p->paper) { ov_add(&o, "expo.linearise=start"); ov_add(&o, "expo.split=0"); }
    mbs_scenario *sc = load(scen, &o);
    mbs_error err;
    mbs_error_clear(&err);
    mbs_sim *sim = mbs_sim_new(sc, &err);
    int ok = sim != NULL;
    if (sim) {
        mbs_sim_run_options opt = {.csv = "", .html = ""};
        if (mbs_sim_run(sim, &opt, sum, &err) != MBS_OK) { fprintf(stderr, "bench_expo: %s\n", err.msg); exit(1); }
        mbs_sim_free(sim);
    }
    mbs_scenario_free(sc);
    return ok;
}

/* The motion is the scenario's: base height range within 1 cm, travel within 5 cm + 10 % and
 * tilt within 5 degrees of the reference run (expo, full exponential, at ≈ 1/64 ms). */
static int task_ok(const mbs_sim_summary *s, const mbs_sim_summary *ref)
{
    return !s->diverged && fabs(s->base_z_min - ref->base_z_min) <= 0.01 && fabs(s->base_z_max - ref->base_z_max) <= 0.01 &&
           fabs(s->distance_m - ref->distance_m) <= 0.05 + 0.1 * ref->distance_m && s->max_tilt_deg <= ref->max_tilt_deg + 5;
}

void part_b(void)
{
    printf("\n## (b) largest stable step over the full duration (table 2)\n"
           "#   grid: controller period / 2^j down to >= 1/64 ms (a step must divide the controller period), tried from\n"
           "#   the largest. stable: the sim's divergence check passes for the whole run (the paper: the state stays\n"
           "#   bounded); task: stable and the motion is the scenario's — base height range within 1 cm, travel within\n"
           "#   5 cm + 10 %%, tilt within 5 deg of a reference run (expo, full exponential, at the grid's smallest step).\n"
           "#   x@t: diverged at t; b: bounded but the task failed (travel m, lowest base z m)\n");
    double bstab[NSCEN][NSTAB], btask[NSCEN][NSTAB];
    for (int c = 0; c < NSCEN; c++) {
        mbs_scenario *sc0 = load(SCEN[c], NULL);
        double cdt = mbs_scenario_controller_dt(sc0);
        mbs_scenario_free(sc0);
        int jmax = gt_level(cdt);
        mbs_sim_summary ref;
        static const stab_stepper REF = {"expo_full", "expo", -1, 0};
        full_run(SCEN[c], &REF, cdt / (double)(1 << jmax), &ref);
        printf("# %s: reference expo full at %.4g ms: %s, travel %.3f m, base z %.4f..%.4f m, tilt %.2f deg\n", SCEN[c],
               cdt / (double)(1 << jmax) * 1e3, ref.diverged ? "DIVERGED" : "stable", ref.distance_m, ref.base_z_min,
               ref.base_z_max, ref.max_tilt_deg);
        printf("#   %-18s %10s %10s  %s\n", "stepper", "stable_ms", "task_ms", "runs");
        for (int si = 0; si < NSTAB; si++) {
            const stab_stepper *p = &STAB[si];
            double best = 0, task = 0;
            char trail[1024] = "";
            size_t tl = 0;
            for (int j = 0; j <= jmax && task == 0; j++) {
                double dt = cdt / (double)(1 << j);
                mbs_sim_summary sum;
                memset(&sum, 0, sizeof sum);
                int n;
                if (!full_run(SCEN[c], p, dt, &sum)) n = snprintf(trail + tl, sizeof trail - tl, " %.4g:refused", dt * 1e3);
                else if (sum.diverged) n = snprintf(trail + tl, sizeof trail - tl, " %.4g:x@%.3gs", dt * 1e3, sum.diverged_t);
                else if (!task_ok(&sum, &ref))
                    n = snprintf(trail + tl, sizeof trail - tl, " %.4g:b(%.2f,%.3f)", dt * 1e3, sum.distance_m, sum.base_z_min);
                else n = snprintf(trail + tl, sizeof trail - tl, " %.4g:ok", dt * 1e3);
                if (n > 0) tl += (size_t)n;
                if (tl >= sizeof trail) tl = sizeof trail - 1;
                if (!sum.diverged && sum.steps > 0) {
                    if (best == 0) best = dt;
                    if (task_ok(&sum, &ref)) task = dt;
                }
            }
            bstab[c][si] = best * 1e3;
            btask[c][si] = task * 1e3;
            printf("#   %-18s %10.4g %10.4g  %s\n", p->key, best * 1e3, task * 1e3, trail);
            key("max_stable_dt_%s_%s: %.4g\n", p->key, SCEN[c], best * 1e3);
            key("max_task_dt_%s_%s: %.4g\n", p->key, SCEN[c], task * 1e3);
            fflush(stdout);
        }
    }

    /* table 2 of docs/benchmarks.md: ours (stable / task) beside the paper's table 2, whose figures
     * are recorded here (the paper gives expo, explicit and implicit Euler only) */
    /* expo as written, Padé mmm 0, Padé full, the paper's scheme, then the rest */
    static const int COLS[] = {5, 6, 7, 8, 0, 1, 2, 3, 4};
    static const char *const PAPER[NSCEN][NSTAB] = {
        /* euler, symplectic_euler, rk4, implicit_euler, variational, expo, expo_mmm0, expo_full, expo_paper:
         * the paper's expo column is its scheme's, so it stands under both */
        {"40/512 ≈ 0.08", "—", "—", "20", "—", "40", "—", "—", "40"},
        {"10/64 ≈ 0.16", "—", "—", "5", "—", "10", "—", "—", "10"},
        {"2/16 = 0.125", "—", "—", "2", "—", "2", "—", "—", "2"},
        {"40/32 = 1.25", "—", "—", "40/4 = 10", "—", "40/8 = 5", "—", "—", "40/8 = 5"}};
    static const char *const SHORT[NSCEN] = {"squat", "jump", "trot", "romeo_walk"};
    bench_doc_begin(&doc, "expo-stability");
    bench_doc_printf(&doc, "| δt in ms | expo (scenario as written: closed form) | expo Padé mmm 0 | expo Padé full | "
                           "expo, the paper's scheme (Padé full, at the step's start, no splitting) | euler | "
                           "symplectic_euler | rk4 | implicit_euler | variational |\n|---|---|---|---|---|---|---|---|---|---|\n");
    for (int c = 0; c < NSCEN; c++) {
        bench_doc_printf(&doc, "| %s, ours (stable / task) |", SHORT[c]);
        for (size_t k = 0; k < sizeof COLS / sizeof *COLS; k++)
            bench_doc_printf(&doc, k == 0 ? " **%.4g** / %.4g |" : " %.4g / %.4g |", bstab[c][COLS[k]], btask[c][COLS[k]]);
        bench_doc_printf(&doc, "\n| %s, paper |", SHORT[c]);
        for (size_t k = 0; k < sizeof COLS / sizeof *COLS; k++) bench_doc_printf(&doc, " %s |", PAPER[c][COLS[k]]);
        bench_doc_printf(&doc, "\n");
    }
    bench_doc_end(&doc, "expo-stability");
}
