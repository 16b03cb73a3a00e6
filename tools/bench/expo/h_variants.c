/* h_variants.c — part (h) of bench_expo: touch-downs of the four tests in held-out variants, as
 * shipped, without splitting, at 0.1 ms. */
#include "expo.h"

/* The overrides of one held-out variant (NULL: as shipped; "half": the scenario's step dt0 halved;
 * else one --set) into base, and its label. */
static void variant_overrides(const char *v, double dt0, ovl *base, char *label, size_t n)
{
    if (v && strcmp(v, "half") == 0) {
        ov_add(base, "stepper.dt=%.17g", dt0 / 2);
        snprintf(label, n, "stepper.dt=%g", dt0 / 2);
    } else {
        if (v) ov_add(base, "%s", v);
        snprintf(label, n, "%s", v ? v : "as shipped");
    }
}

/* The same variants (but the squat's, which never leaves the ground) with expo's landing_substeps
 * from 1 (the rest of a landing's step in one sub-step) to 8, against the references part h ran:
 * how the choice of the default, 4, sits among its neighbours. */
enum { NLS = 6, NVARIANTS = 7 };
static void landing_substeps_sweep(const char *const *V, int nv, const char *const *SHORT, long ref_points[][NVARIANTS],
                                   long ref_feet[][NVARIANTS])
{
    static const int LS[NLS] = {1, 2, 3, 4, 6, 8};
    int kept[NLS] = {0}, kept_feet[NLS] = {0}, total = 0;
    printf("#   landing_substeps:");
    for (int j = 0; j < NLS; j++) printf(" %d", LS[j]);
    printf("\n");
    bench_doc_begin(&doc, "expo-landing-substeps");
    bench_doc_printf(&doc, "| test | variant | reference: expo at 0.1 ms, points (feet) |");
    for (int j = 0; j < NLS; j++) bench_doc_printf(&doc, " landing_substeps = %d |", LS[j]);
    bench_doc_printf(&doc, "\n|---|---|---|");
    for (int j = 0; j < NLS; j++) bench_doc_printf(&doc, "---|");
    bench_doc_printf(&doc, "\n");
    for (int c = 1; c < NSCEN; c++) {
        mbs_scenario *sc0 = load(SCEN[c], NULL);
        double dt0 = mbs_scenario_dt(sc0);
        mbs_scenario_free(sc0);
        for (int v = 0; v < nv; v++) {
            char label[64];
            ovl base = {0};
            variant_overrides(V[v], dt0, &base, label, sizeof label);
            bench_doc_printf(&doc, "| %s | `%s` | %ld (%ld) |", SHORT[c], label, ref_points[c][v], ref_feet[c][v]);
            printf("#   %-11s %-24s %ld (%ld):", SHORT[c], label, ref_points[c][v], ref_feet[c][v]);
            for (int j = 0; j < NLS; j++) {
                ovl o;
                ov_copy(&o, &base);
                ov_add(&o, "expo.landing_substeps=%d", LS[j]);
                case_res r;
                run_case(SCEN[c], &o, 1, &r);
                char cell[64];
                touchdown_cell(&r.sum, cell, sizeof cell);
                int sane = !r.sum.diverged && !r.sum.left_box;
                int ok = sane && r.sum.touchdowns == ref_points[c][v], okf = sane && r.sum.foot_touchdowns == ref_feet[c][v];
                kept[j] += ok;
                kept_feet[j] += okf;
                bench_doc_printf(&doc, " %s%s%s |", okf ? "" : "**", cell, okf ? "" : "**");
                printf(" %s", cell);
            }
            total++;
            bench_doc_printf(&doc, "\n");
            printf("\n");
            fflush(stdout);
        }
    }
    bench_doc_printf(&doc, "| variants keeping the reference's count: points (feet) | | |");
    for (int j = 0; j < NLS; j++) bench_doc_printf(&doc, " %d (%d) of %d |", kept[j], kept_feet[j], total);
    bench_doc_printf(&doc, "\n");
    bench_doc_end(&doc, "expo-landing-substeps");
}

/* Touch-downs of the four tests in variants of their contact and step that the scenarios were not
 * tuned on, as ./sim runs them: the scheme as shipped (expo, closed form, touch-down splitting),
 * the same without splitting (split = 0, the paper's letter), and the reference, expo at 0.1 ms
 * without splitting. Counted after every step and between expo's sub-steps, both of the summary's
 * counts: `touchdowns` (every
 * contact point) and `foot_touchdowns` (a foot, the points on one frame, touching again after none
 * of its points did; on Solo, one point per foot, the two are equal). A variant that keeps the
 * reference's count lands as the reference does; more is a bounce or a chatter the reference does
 * not have, fewer a bounce it has and the step cannot resolve. On Romeo the point count also
 * counts the sole rocking from heel to toe, corners lifting for a few milliseconds. */
void part_h(int quick)
{
    printf("\n## (h) held-out variants: touch-downs as shipped, without touch-down splitting, and at 0.1 ms\n");
    enum { NV = NVARIANTS };
    static const char *const V[NV] = {NULL, "contact.stiffness=5e4", "contact.stiffness=2e5", "contact.damping=150",
                                      "contact.damping=600", "contact.friction=0.5", "half"};
    static const char *const SHORT[NSCEN] = {"solo_squat", "solo_jump", "solo_trot", "romeo_walk"};
    int kept = 0, total = 0, kept0 = 0, kept_feet = 0, kept0_feet = 0;
    long ref_points[NSCEN][NV], ref_feet[NSCEN][NV];
    bench_doc_begin(&doc, "expo-variants");
    bench_doc_printf(&doc, "| test | variant | reference: expo at 0.1 ms, points (feet) | as shipped (split) | split = 0 | "
                           "tilt (°): reference, as shipped | peak force (N): reference, as shipped | keeps the "
                           "reference's count: points, feet |\n|---|---|---|---|---|---|---|---|\n");
    printf("#   %-11s %-24s %14s %14s %20s %14s %16s\n", "test", "variant", "reference", "as_shipped", "split0",
           "tilt_deg", "max_force");
    for (int c = 0; c < NSCEN; c++) {
        mbs_scenario *sc0 = load(SCEN[c], NULL);
        double dt0 = mbs_scenario_dt(sc0);
        mbs_scenario_free(sc0);
        for (int v = 0; v < NV; v++) {
            if (quick && v > 1) break;
            char label[64];
            ovl base = {0};
            variant_overrides(V[v], dt0, &base, label, sizeof label);
            case_res ref, run, run0;
            ovl o;
            ov_copy(&o, &base);
            ov_add(&o, "stepper.dt=1e-4");
            ov_add(&o, "expo.split=0");
            run_case(SCEN[c], &o, 1, &ref);
            ref_points[c][v] = ref.sum.touchdowns;
            ref_feet[c][v] = ref.sum.foot_touchdowns;
            run_case(SCEN[c], &base, 1, &run);
            ov_copy(&o, &base);
            ov_add(&o, "expo.split=0");
            run_case(SCEN[c], &o, 1, &run0);
            char st[3][64];
            const case_res *R[3] = {&ref, &run, &run0};
            for (int k = 0; k < 3; k++) touchdown_cell(&R[k]->sum, st[k], sizeof st[k]);
            int sane = !run.sum.diverged && !run.sum.left_box, sane0 = !run0.sum.diverged && !run0.sum.left_box;
            int ok = sane && run.sum.touchdowns == ref.sum.touchdowns;
            int ok0 = sane0 && run0.sum.touchdowns == ref.sum.touchdowns;
            int okf = sane && run.sum.foot_touchdowns == ref.sum.foot_touchdowns;
            int ok0f = sane0 && run0.sum.foot_touchdowns == ref.sum.foot_touchdowns;
            kept += ok;
            kept0 += ok0;
            kept_feet += okf;
            kept0_feet += ok0f;
            total++;
            printf("#   %-11s %-24s %14s %14s %20s %6.2f %6.2f %7.1f %7.1f\n", SHORT[c], label, st[0], st[1], st[2],
                   ref.sum.max_tilt_deg, run.sum.max_tilt_deg, ref.sum.max_contact_force, run.sum.max_contact_force);
            bench_doc_printf(&doc, "| %s | `%s` | %s | %s | %s | %.2f, %.2f | %.0f, %.0f | %s, %s |\n", SHORT[c], label,
                             st[0], st[1], st[2], ref.sum.max_tilt_deg, run.sum.max_tilt_deg, ref.sum.max_contact_force,
                             run.sum.max_contact_force, ok ? "yes" : "**no**", okf ? "yes" : "**no**");
            fflush(stdout);
        }
    }
    bench_doc_printf(&doc,
                     "\nAs shipped, %d of %d variants keep the reference's count of point touch-downs and %d of %d its "
                     "count of foot touch-downs; without splitting %d and %d.\n",
                     kept, total, kept_feet, total, kept0, kept0_feet);
    bench_doc_end(&doc, "expo-variants");
    if (!quick) landing_substeps_sweep(V, NV, SHORT, ref_points, ref_feet);
    key("expo_variants_kept: %d\n", kept);
    key("expo_variants_kept_without_split: %d\n", kept0);
    key("expo_variants_feet_kept: %d\n", kept_feet);
    key("expo_variants_feet_kept_without_split: %d\n", kept0_feet);
    key("expo_variants_total: %d\n", total);
}
