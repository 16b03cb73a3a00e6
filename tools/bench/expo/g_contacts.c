/* g_contacts.c — part (g) of bench_expo: expo's cost per step against the number of active contacts,
 * 1 to 16 (Romeo standing). */
#include "expo.h"

/* Writes a copy of scenarios/<scen>.ini to path with its [contact] points replaced by n points of
 * the two soles (left and right in turn, sole[i / 2] in each sole's frame) and its urdf made an
 * absolute path; 0 on success. */
static int write_points_scenario(const char *scen, const char *path, const double sole[][2], int n)
{
    char src[1024], line[1024];
    snprintf(src, sizeof src, "%s/scenarios/%s.ini", MBS_SOURCE_DIR, scen);
    FILE *in = fopen(src, "r"), *out = fopen(path, "w");
    if (!in || !out) {
        fprintf(stderr, "bench_expo: cannot read %s or write %s\n", src, path);
        if (in) fclose(in);
        if (out) fclose(out);
        return 1;
    }
    int in_contact = 0, skipping = 0;
    while (fgets(line, sizeof line, in)) {
        if (skipping && (line[0] == ' ' || line[0] == '\t')) continue;   /* the points' continuation lines */
        skipping = 0;
        if (line[0] == '[') in_contact = strncmp(line, "[contact]", 9) == 0;
        if (strncmp(line, "urdf", 4) == 0) {
            const char *v = strchr(line, '=');
            v = v ? v + 1 : "";
            while (*v == ' ') v++;
            fprintf(out, "urdf = %s/scenarios/%s", MBS_SOURCE_DIR, v);
            continue;
        }
        if (in_contact && strncmp(line, "points", 6) == 0) {
            for (int i = 0; i < n; i++)
                fprintf(out, "%s%s_sole %.3f %.3f 0\n", i ? "  " : "points = ", i % 2 ? "r" : "l", sole[i / 2][0], sole[i / 2][1]);
            skipping = 1;
            continue;
        }
        fputs(line, out);
    }
    fclose(in);
    return fclose(out) != 0;
}

/* expo's cost per step against the number of active contacts: Romeo standing under PD at 2 ms on
 * n = 1 … 16 points of its soles (8 per sole: the 4 corners of the scenario's sole rectangle and
 * the 4 mid-points of its edges, taken left and right in turn), the base lowered by the static
 * sinking m g / (n K) so that every n starts at rest with all n points carrying the weight. 1 s
 * (500 steps) per run, as ./sim runs it; the summary's us_per_step, median over 7 runs (the paths
 * taking turns). The closed
 * form, the Padé full exponential and Padé with max_mat_mult 0. With fewer than 4 points Romeo
 * tips over slowly; the table gives the active points per period. */
void part_g(const char *data, int quick)
{
    printf("\n## (g) expo's cost per step against the number of active contacts (Romeo standing, PD at 2 ms)\n");
    static const double SOLE[8][2] = {{0.10, 0.05},  {-0.05, -0.05}, {0.10, -0.05}, {-0.05, 0.05},
                                      {0.025, 0.05}, {0.025, -0.05}, {0.10, 0},     {-0.05, 0}};
    mbs_scenario *sc0 = load("romeo_walk", NULL);
    double W = mbs_model_mass(mbs_scenario_model(sc0)) * 9.81, K = mbs_scenario_material(sc0)->k_normal;
    const double *q0 = mbs_scenario_q0(sc0);
    /* the scenario's base sits m g / (8 K) below the posture with the soles at z = 0 */
    double z_soles = q0[2] + W / (8 * K), x0 = q0[0], y0 = q0[1];
    mbs_scenario_free(sc0);
    enum { NM = 3 };   /* closed form, Padé full, Padé mmm 0 */
    int reps = quick ? 1 : 7;
    int nmax = quick ? 8 : 16;
    double us[MAXPTS + 1][NM], act[MAXPTS + 1][NM];
    int amin[MAXPTS + 1][NM], amax[MAXPTS + 1][NM];
    printf("#   %3s %14s %14s %14s   active contacts per period (mean, min-max), closed form\n", "n", "closed_us", "pade_us",
           "mmm0_us");
    FILE *f = tool_open_data("bench_expo", data, "contacts.dat");
    if (f) fprintf(f, "# n  us/step: closed form, Pade full, Pade mmm 0  mean active contacts (closed form)\n");
    for (int n = 1; n <= nmax; n++) {
        /* a --set replaces every point of the file with one: the n points go into a copy of the scenario */
        char path[1200];
        snprintf(path, sizeof path, "%.1024s/romeo_stand_%d.ini", data, n);
        if (write_points_scenario("romeo_walk", path, SOLE, n)) exit(1);
        /* the three paths take turns within each repetition (a burst of load hits all of them) */
        double t[NM][16];
        for (int rep = 0; rep < reps; rep++)
            for (int m = 0; m < NM; m++) {
                ovl o = {0};
                ov_add(&o, "controller.type=pd");
                ov_add(&o, "stepper.dt=0.002");
                ov_add(&o, "controller.dt=0.002");
                ov_add(&o, "run.duration=%g", quick ? 0.3 : 1.0);
                ov_add(&o, "model.base_position=%.9f %.9f %.9f", x0, y0, z_soles - W / (n * K));
                if (m == 1) ov_pade(&o, -1);
                if (m == 2) ov_pade(&o, 0);
                case_res r;
                run_case(path, &o, 1, &r);
                t[m][rep] = r.sum.diverged ? NAN : r.us_med;
                act[n][m] = r.td.samples ? (double)r.td.active_sum / (double)r.td.samples : 0;
                amin[n][m] = r.td.active_min;
                amax[n][m] = r.td.active_max;
            }
        for (int m = 0; m < NM; m++) us[n][m] = tool_median(t[m], reps);
        printf("#   %3d %14.2f %14.2f %14.2f   %.2f (%d-%d)\n", n, us[n][0], us[n][1], us[n][2], act[n][0], amin[n][0], amax[n][0]);
        if (f) fprintf(f, "%d %.4f %.4f %.4f %.3f\n", n, us[n][0], us[n][1], us[n][2], act[n][0]);
        fflush(stdout);
    }
    if (f) fclose(f);
    bench_doc_begin(&doc, "expo-contacts");
    bench_doc_printf(&doc, "| contact points n | active per period, closed form (mean, min–max) | closed form µs | Padé full µs | "
                           "Padé mmm 0 µs | Padé full / closed form |\n|---|---|---|---|---|---|\n");
    for (int n = 1; n <= nmax; n++)
        bench_doc_printf(&doc, "| %d | %.2f (%d–%d) | %.1f | %.1f | %.1f | %.1f× |\n", n, act[n][0], amin[n][0], amax[n][0], us[n][0],
                         us[n][1], us[n][2], us[n][1] / us[n][0]);
    bench_doc_end(&doc, "expo-contacts");
    key("expo_romeo_contacts8_modal_us: %.3f\n", us[8][0]);
    if (nmax >= 16) {
        key("expo_romeo_contacts16_modal_us: %.3f\n", us[16][0]);
        key("expo_romeo_contacts16_pade_us: %.3f\n", us[16][1]);
        key("expo_romeo_contacts16_mmm0_us: %.3f\n", us[16][2]);
    }
}
