/* d_stiffness.c — part (d) of bench_expo, fig. 4 of Hammoud et al. 2022: local error against contact
 * stiffness and damping ratio on solo_trot; expo as shipped (midpoint, touch-down splitting) with
 * max_mat_mult 0, 1, 3 and full, and as the paper's scheme (linearised at the step's start, no
 * splitting) with max_mat_mult 0, the paper's setting. */
#include "expo.h"

void part_d(const char *data, int quick)
{
    printf("\n## (d) local error vs contact stiffness and damping ratio on solo_trot (fig. 4)\n");
    mbs_scenario *sc0 = load("solo_trot", NULL);
    double cdt = mbs_scenario_controller_dt(sc0), K0 = mbs_scenario_material(sc0)->k_normal, z00 = mbs_scenario_q0(sc0)[2];
    double W = mbs_model_mass(mbs_scenario_model(sc0)) * 9.81;
    mbs_scenario_free(sc0);
    double horizon = quick ? 0.5 : 2.0;
    horizon = cdt * (double)lround(horizon / cdt);
    /* the paper's settings (consim test_stiff_damp_cpp.py): explicit Euler at 1/2 ms, expo (0
     * matrix products) and implicit Euler at 2 ms, each against itself at 1/64 ms */
    enum { NST = 7 };
    static const struct { const char *label, *key, *col, *stepper; double dt_ms; int mmm, paper; } ST[NST] = {
        {"euler 0.5 ms", "euler", "euler 0.5 ms", "euler", 0.5, -2, 0},
        {"expo mmm 0, 2 ms", "expo", "expo Padé mmm 0, 2 ms", "expo", 2, 0, 0},
        {"expo mmm 1, 2 ms", "expo_mmm1", "expo Padé mmm 1, 2 ms", "expo", 2, 1, 0},
        {"expo mmm 3, 2 ms", "expo_mmm3", "expo Padé mmm 3, 2 ms", "expo", 2, 3, 0},
        {"implicit euler 2 ms", "implicit_euler", "implicit_euler 2 ms", "implicit_euler", 2, -2, 0},
        {"expo full, 2 ms", "expo_full", "expo Padé full, 2 ms", "expo", 2, -1, 0},
        {"expo mmm 0, paper's scheme, 2 ms", "expo_paper",
         "expo Padé mmm 0, the paper's scheme (at the step's start, no splitting), 2 ms", "expo", 2, 0, 1}};
    enum { NK = 11, ND = 5 };
    double Ks[NK + ND], Ds[NK + ND];
    for (int i = 0; i < NK; i++) { Ks[i] = pow(10, 3 + 0.5 * i); Ds[i] = 0.5; }
    for (int i = 0; i < ND; i++) { Ks[NK + i] = 1e5; Ds[NK + i] = 0.2 + 0.2 * i; }
    static const int qsel[] = {0, 4, 10, NK, NK + 4};   /* --quick: K = 1e3, 1e5, 1e8; ratio 0.2 and 1 */
    int nset = quick ? 5 : NK + ND;
    double err[NK + ND][NST];
    for (int i = 0; i < NK + ND; i++) for (int j = 0; j < NST; j++) err[i][j] = NAN;
    printf("#   horizon %g s (%ld periods); the base starts lowered by the static sinking m g / (4 K)\n", horizon,
           lround(horizon / cdt));
    printf("#   %10s %6s %10s", "K", "ratio", "B");
    for (int j = 0; j < NST; j++) printf(" %22s", ST[j].label);
    printf("\n");
    for (int ii = 0; ii < nset; ii++) {
        int i = quick ? qsel[ii] : ii;
        double K = Ks[i], B = Ds[i] * 2 * sqrt(K);
        ovl o = {0};
        ov_add(&o, "contact.stiffness=%.17g", K);
        ov_add(&o, "contact.damping=%.17g", B);
        ov_add(&o, "model.base_position=0 0 %.9f", z00 + W / (4 * K0) - W / (4 * K));
        printf("#   %10.3g %6.2f %10.4g", K, Ds[i], B);
        for (int j = 0; j < NST; j++) {
            ovl o1;
            ov_copy(&o1, &o);
            if (ST[j].mmm > -2) ov_pade(&o1, ST[j].mmm);
            if (ST[j].paper) { ov_add(&o1, "expo.linearise=start"); ov_add(&o1, "expo.split=0"); }
            /* the ground truth at 1/64 ms; explicit Euler's diverges there on the stiffest contacts,
             * then at 1/256 and 1/1024 ms */
            traj gt;
            double gdt = 1e-3 / 64;
            record("solo_trot", &o1, ST[j].stepper, gdt, horizon, &gt);
            for (int retry = 0; retry < 2 && gt.diverged && j == 0; retry++) {
                traj_free(&gt);
                gdt /= 4;
                record("solo_trot", &o1, ST[j].stepper, gdt, horizon, &gt);
            }
            char b[64], e[32];
            if (gt.diverged) {
                printf(" %22s", "(ground truth diverged)");
            } else {
                replay_res r;
                replay("solo_trot", &o1, ST[j].stepper, ST[j].dt_ms * 1e-3, &gt, &r, NULL);
                err[i][j] = r.err_mean;
                num(e, sizeof e, "%.4g", r.err_mean);
                if (gdt < 1e-3 / 64 * 0.99) snprintf(b, sizeof b, "%s (gt %.3g ms)", e, gdt * 1e3);
                else snprintf(b, sizeof b, "%s", e);
                printf(" %22s", b);
            }
            traj_free(&gt);
            fflush(stdout);
        }
        printf("\n");
    }
    FILE *f = tool_open_data("bench_expo", data, "stiffness.dat"), *g = tool_open_data("bench_expo", data, "damping.dat");
    for (int j = 0; j < NST; j++) {
        if (f) fprintf(f, "%s\"%s\"\n", j ? "\n\n" : "", ST[j].label);
        if (g) fprintf(g, "%s\"%s\"\n", j ? "\n\n" : "", ST[j].label);
        for (int i = 0; i < NK + ND; i++) {
            FILE *h = i < NK ? f : g;
            /* settings not run (--quick) are NaN and skipped by the plot */
            if (h) fprintf(h, "%.6g %.6g\n", i < NK ? Ks[i] : Ds[i], isfinite(err[i][j]) ? err[i][j] : NAN);
        }
    }
    if (f) fclose(f);
    if (g) fclose(g);
    bench_doc_begin(&doc, "expo-stiffness");
    bench_doc_printf(&doc, "| K (N/m) | damping ratio | B (N s/m) |");
    for (int j = 0; j < NST; j++) bench_doc_printf(&doc, " %s |", ST[j].col);
    bench_doc_printf(&doc, "\n|---|---|---|");
    for (int j = 0; j < NST; j++) bench_doc_printf(&doc, "---|");
    bench_doc_printf(&doc, "\n");
    for (int i = 0; i < NK + ND; i++) {
        int run = 0;   /* a setting not run (--quick) is NaN in every column */
        for (int j = 0; j < NST; j++) run |= !isnan(err[i][j]);
        if (!run) continue;
        char kb[32], bb[32];
        bench_doc_printf(&doc, "| %s | %.1f | %s |", fmt2(kb, sizeof kb, Ks[i]), Ds[i], fmt2(bb, sizeof bb, Ds[i] * 2 * sqrt(Ks[i])));
        for (int j = 0; j < NST; j++) {
            char e[32];
            bench_doc_printf(&doc, " %s |", fmt2(e, sizeof e, err[i][j]));
        }
        bench_doc_printf(&doc, "\n");
    }
    bench_doc_end(&doc, "expo-stiffness");
    for (int j = 0; j < NST; j++) {
        const char *const sk = ST[j].key;
        char b1[32], b2[32], b3[32];
        key("local_err_vs_k_%s_solo_trot_k1e3: %s\n", sk, num(b1, sizeof b1, "%.3e", err[0][j]));
        key("local_err_vs_k_%s_solo_trot_k1e5: %s\n", sk, num(b2, sizeof b2, "%.3e", err[4][j]));
        key("local_err_vs_k_%s_solo_trot_k1e8: %s\n", sk, num(b3, sizeof b3, "%.3e", err[10][j]));
    }
}
