/* a_accuracy.c — part (a) of bench_expo, figs. 2-3 of Hammoud et al. 2022: local integration error
 * (sec. 6.1) against real-time factor and step, for euler, rk4, implicit_euler and expo (max_mat_mult
 * 0, 2, 4, full), on the four tests; the full exponential also linearised at the step's start with
 * our touch-down splitting, and as the paper's scheme (linearised at the start, no splitting). */
#include "expo.h"

/* the rows the table and the ratios below name */
enum { V_IE = 2, V_MMM0 = 3, V_FULL = 8, V_FULL_START = 9, V_PAPER = 10, NVAR = 11 };
typedef struct variant {
    const char *key, *label, *stepper;
    int mmm;        /* expo: max_mat_mult; -2 for the other schemes */
    int gt;         /* ground truth: 0 euler, 1 rk4, 2 implicit_euler, 3 expo (full) */
    int at_start;   /* expo: linearise = start (the default is midpoint) */
    int no_split;   /* expo: split = 0, no touch-down splitting; with at_start, the paper's scheme */
} variant;
static const variant VARS[NVAR] = {
    {"euler", "euler (explicit)", "euler", -2, 0, 0, 0},
    {"rk4", "rk4", "rk4", -2, 1, 0, 0},
    {"implicit_euler", "implicit euler", "implicit_euler", -2, 2, 0, 0},
    {"expo_mmm0", "expo mmm 0", "expo", 0, 3, 0, 0},
    {"expo_mmm1", "expo mmm 1", "expo", 1, 3, 0, 0},
    {"expo_mmm2", "expo mmm 2", "expo", 2, 3, 0, 0},
    {"expo_mmm3", "expo mmm 3", "expo", 3, 3, 0, 0},
    {"expo_mmm4", "expo mmm 4", "expo", 4, 3, 0, 0},
    {"expo_full", "expo full (mmm -1)", "expo", -1, 3, 0, 0},
    {"expo_full_start", "expo full, at start, split", "expo", -1, 3, 1, 0},
    {"expo_paper", "expo full, paper (at start, no split)", "expo", -1, 3, 1, 1},
};
static const char *const GT_STEPPER[4] = {"euler", "rk4", "implicit_euler", "expo"};

/* the variants' step sizes: cdt / 2^i, i = 0 .. imax */
static int var_imax(const variant *v, int igt) { return v->gt == 0 ? igt - 1 : igt - 3; }

static int imin(int a, int b) { return a < b ? a : b; }

/* The range of num[i] / den[i] over the levels i = 0 .. imax (NaN where none is finite). */
static void ratio_range(const double *num, const double *den, int imax, double *lo, double *hi)
{
    *lo = INFINITY, *hi = -INFINITY;
    for (int i = 0; i <= imax; i++) {
        double r = num[i] / den[i];
        if (isfinite(r)) { *lo = fmin(*lo, r); *hi = fmax(*hi, r); }
    }
    if (!isfinite(*lo)) *lo = *hi = NAN;
}

void part_a(const char *data, int quick)
{
    printf("\n## (a) local integration error vs real-time factor (figs. 2, 3)\n");
    /* every point of the grid, for the table of docs/benchmarks.md: level i is the step cdt / 2^i */
    enum { NLEV = 16 };
    static double aerr[NFIG][NVAR][NLEV], artf[NFIG][NVAR][NLEV];
    int igts[NFIG];
    double cdts[NFIG];
    for (int c = 0; c < NFIG; c++)
        for (int vi = 0; vi < NVAR; vi++)
            for (int i = 0; i < NLEV; i++) aerr[c][vi][i] = artf[c][vi][i] = NAN;
    for (int c = 0; c < NFIG; c++) {
        mbs_scenario *sc0 = load(FIG_SCEN[c], NULL);
        double cdt = mbs_scenario_controller_dt(sc0), dur = mbs_scenario_duration(sc0);
        mbs_scenario_free(sc0);
        /* the scenario's full duration: Romeo's 7 s costs about 75 s here, within the budget */
        double horizon = quick ? 1.0 : dur;
        horizon = cdt * (double)lround(horizon / cdt);
        int igt = gt_level(cdt);
        igts[c] = igt;
        cdts[c] = cdt;
        printf("# %s: controller period %g ms, horizon %g s (%ld periods); ground truth at %.5g ms "
               "(explicit Euler's at %.5g ms)\n", FIG_SCEN[c], cdt * 1e3, horizon, lround(horizon / cdt),
               cdt / (1 << igt) * 1e3, cdt / (1 << (igt + 2)) * 1e3);
        traj gt[4];
        for (int g = 0; g < 4; g++) {
            ovl o = {0};
            if (g == 3) ov_pade(&o, -1);
            double gdt = cdt / (double)(1 << (g == 0 ? igt + 2 : igt));
            double t0 = tool_now();
            record(FIG_SCEN[c], &o, GT_STEPPER[g], gdt, horizon, &gt[g]);
            printf("#   ground truth %-15s %8.2f s%s%s\n", GT_STEPPER[g], tool_now() - t0, gt[g].diverged ? "  " : "",
                   gt[g].diverged ? gt[g].reason : "");
        }
        char name[256];
        snprintf(name, sizeof name, "accuracy_%s.dat", FIG_SCEN[c]);
        FILE *f = tool_open_data("bench_expo", data, name);
        printf("#   %-20s %10s %12s %12s %12s %9s %s\n", "stepper", "dt_ms", "rtf", "err_mean", "err_max", "diverged",
               "nonconverged");
        for (int vi = 0; vi < NVAR; vi++) {
            const variant *v = &VARS[vi];
            if (f) fprintf(f, "%s\"%s\"\n", vi ? "\n\n" : "", v->label);
            double err_dtc = NAN;
            for (int i = var_imax(v, igt); i >= 0; i--) {
                double dt = cdt / (double)(1 << i);
                replay_res r;
                if (gt[v->gt].diverged) {
                    memset(&r, 0, sizeof r);
                    r.err_mean = r.err_max = r.rtf = NAN;
                } else {
                    ovl o = {0};
                    if (v->mmm > -2) ov_pade(&o, v->mmm);
                    if (v->at_start) ov_add(&o, "expo.linearise=start");
                    if (v->no_split) ov_add(&o, "expo.split=0");
                    replay(FIG_SCEN[c], &o, v->stepper, dt, &gt[v->gt], &r, NULL);
                }
                if (i == 0) err_dtc = r.err_mean;
                if (i < NLEV) { aerr[c][vi][i] = r.err_mean; artf[c][vi][i] = r.rtf; }
                printf("#   %-20s %10.5g %12.4g %12.4g %12.4g %9ld %ld/%ld\n", v->label, dt * 1e3, r.rtf, r.err_mean,
                       r.err_max, r.ndiv, r.nonconverged, r.steps);
                /* a diverged period makes the mean infinite: left out of the plot, as unstable */
                if (f) fprintf(f, "%.6g %.6g %.6g %.6g %ld\n", dt * 1e3, r.rtf, isfinite(r.err_mean) ? r.err_mean : NAN,
                               isfinite(r.err_max) ? r.err_max : NAN, r.ndiv);
            }
            char b[32];
            key("local_err_%s_%s_dtc: %s\n", v->key, FIG_SCEN[c], num(b, sizeof b, "%.3e", err_dtc));
            fflush(stdout);
        }
        if (f) fclose(f);
        for (int g = 0; g < 4; g++) traj_free(&gt[g]);
    }

    /* the table of docs/benchmarks.md: the error at the grid's smallest common step, at the step
     * nearest 1 ms and at the controller period, and the real-time factor there */
    static const struct { int vi; const char *label; } ROWS[] = {
        {0, "euler"}, {1, "rk4"}, {V_IE, "implicit_euler"}, {V_MMM0, "expo, Padé mmm 0"}, {V_MMM0 + 1, "expo, Padé mmm 1"},
        {V_MMM0 + 2, "expo, Padé mmm 2"}, {V_MMM0 + 3, "expo, Padé mmm 3"}, {V_MMM0 + 4, "expo, Padé mmm 4"},
        {V_FULL, "expo, Padé full"},
        {V_FULL_START, "expo, Padé full, linearised at the step's start with touch-down splitting (ours)"},
        {V_PAPER, "expo, Padé full, the paper's scheme (linearised at the step's start, no splitting)"}};
    static const char *const SHORT[NFIG] = {"squat (TSID)", "squat (PD)", "jump", "trot", "walk"};
    bench_doc_begin(&doc, "expo-accuracy");
    bench_doc_printf(&doc, "| scenario | stepper | δt = 0.156 ms (trot 0.125) | δt = 1.25 ms (trot 1) | δt = δt_c | "
                           "real-time factor at δt_c |\n|---|---|---|---|---|---|\n");
    for (int c = 0; c < NFIG; c++) {
        int ilo = igts[c] - 3, i1 = (int)lround(log2(cdts[c] / 1e-3));
        for (size_t k = 0; k < sizeof ROWS / sizeof *ROWS; k++) {
            int vi = ROWS[k].vi;
            char e0[32], e1[32], e2[32], r2[32], ee[32], small[96] = "";
            if (VARS[vi].gt == 0 && igts[c] - 1 < NLEV)
                snprintf(small, sizeof small, " (%s at %.2g ms)", fmt2(ee, sizeof ee, aerr[c][vi][igts[c] - 1]),
                         cdts[c] / (double)(1 << (igts[c] - 1)) * 1e3);
            bench_doc_printf(&doc, "| %s | %s | %s%s | %s | %s | %s |\n", SHORT[c], ROWS[k].label,
                             fmt2(e0, sizeof e0, aerr[c][vi][ilo]), small, fmt2(e1, sizeof e1, aerr[c][vi][i1]),
                             fmt2(e2, sizeof e2, aerr[c][vi][0]), fmt2(r2, sizeof r2, artf[c][vi][0]));
        }
    }
    /* the paper's scheme against the two rows it is read beside, step by step over the grid the
     * three share (cdt / 2^i, i = 0 .. igt - 3): the ranges of the ratios of their mean errors */
    static const struct { int vi; const char *what; } VS[] = {
        {V_FULL_START, "expo linearised at the step's start with our touch-down splitting"}, {V_IE, "implicit Euler"}};
    printf("# the paper's scheme's mean error over that of another row at the same step, min-max over the grid\n");
    bench_doc_printf(&doc, "\nThe paper's scheme's mean local error over that of another row at the same step (the range over "
                           "every step of the grid, δt_c down to ≈ 1/8 ms):");
    for (size_t w = 0; w < sizeof VS / sizeof *VS; w++) {
        bench_doc_printf(&doc, "%s against %s: ", w ? ";" : "", VS[w].what);
        for (int c = 0; c < NFIG; c++) {
            double lo, hi;
            ratio_range(aerr[c][V_PAPER], aerr[c][VS[w].vi], imin(igts[c] - 3, NLEV - 1), &lo, &hi);
            char b1[32], b2[32];
            bench_doc_printf(&doc, "%s%s %s–%s×", c ? ", " : "", SHORT[c], fmt2(b1, sizeof b1, lo), fmt2(b2, sizeof b2, hi));
            printf("#   %-12s over %-67s %.3g .. %.3g\n", FIG_SCEN[c], VS[w].what, lo, hi);
        }
    }
    /* what the midpoint costs, as far as this part can tell: the rows of the full exponential at the
     * midpoint and at the step's start (both with splitting) differ only in the linearisation */
    bench_doc_printf(&doc, ". The real-time factor of expo full at the midpoint (as shipped) over that of expo full "
                           "linearised at the step's start with splitting, the same scheme but for the linearisation (the "
                           "range over the same steps; the rows are timed at different moments of the run): ");
    for (int c = 0; c < NFIG; c++) {
        double lo, hi;
        ratio_range(artf[c][V_FULL], artf[c][V_FULL_START], imin(igts[c] - 3, NLEV - 1), &lo, &hi);
        char b1[32], b2[32];
        bench_doc_printf(&doc, "%s%s %s–%s", c ? ", " : "", SHORT[c], fmt2(b1, sizeof b1, lo), fmt2(b2, sizeof b2, hi));
        printf("#   %-12s real-time factor, midpoint over start (both split) %.3g .. %.3g\n", FIG_SCEN[c], lo, hi);
    }
    bench_doc_printf(&doc, ".\n");
    bench_doc_end(&doc, "expo-accuracy");
}
