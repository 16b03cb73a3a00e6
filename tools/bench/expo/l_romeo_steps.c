/* l_romeo_steps.c — part (l) of bench_expo, beyond the paper: romeo_walk against the step (0.05 to
 * 5 ms), expo and implicit Euler: touch-downs and largest tilt, whether part h's reference is
 * converged in its step. */
#include "expo.h"

/* Is the reference of part h converged in its step? Romeo's walk, as shipped and in the five
 * contact variants of part h, run with expo (as shipped: touch-down splitting, linearised at the
 * midpoint) at steps from 0.05 to 5 ms, and implicit Euler beside it: touch-downs of points and
 * feet, and the largest tilt of the base. A count that changes between 0.05, 0.1 and 0.2 ms is a
 * bounce at the edge of happening; a tilt that drifts with the step is an error of order δt. */
static void romeo_corner_events(int quick);

void part_l(int quick)
{
    printf("\n## (l) romeo_walk against the step: touch-downs and tilt, expo and implicit Euler\n");
    enum { NV = 6, ND = 8 };
    static const char *const V[NV] = {NULL,
                                      "contact.stiffness=5e4",
                                      "contact.stiffness=2e5",
                                      "contact.damping=150",
                                      "contact.damping=600",
                                      "contact.friction=0.5"};
    static const double DT[ND] = {5e-5, 1e-4, 2e-4, 5e-4, 1e-3, 2e-3, 2.5e-3, 5e-3};
    bench_doc_begin(&doc, "expo-romeo-steps");
    bench_doc_printf(&doc, "| variant | step (ms) | expo: points (feet) | expo: largest tilt (°) | implicit Euler: points "
                           "(feet) | implicit Euler: largest tilt (°) |\n|---|---|---|---|---|---|\n");
    printf("#   %-24s %8s %14s %9s %14s %9s\n", "variant", "dt_ms", "expo", "tilt_deg", "implicit", "tilt_deg");
    for (int v = 0; v < NV; v++) {
        if (quick && v > 0) break;
        for (int k = 0; k < ND; k++) {
            /* implicit Euler below 0.5 ms costs minutes and says nothing expo does not */
            int with_ie = DT[k] >= 5e-4;
            case_res r[2];
            for (int m = 0; m < 1 + with_ie; m++) {
                ovl o = {0};
                if (V[v]) ov_add(&o, "%s", V[v]);
                ov_add(&o, "stepper.dt=%.17g", DT[k]);
                if (m == 1) ov_add(&o, "stepper.name=implicit_euler");
                if (quick) ov_add(&o, "run.duration=3");
                run_case("romeo_walk", &o, 1, &r[m]);
            }
            char st[2][64] = {"-", "-"}, tl[2][16] = {"-", "-"};
            for (int m = 0; m < 1 + with_ie; m++) {
                touchdown_cell(&r[m].sum, st[m], sizeof st[m]);
                snprintf(tl[m], sizeof tl[m], "%.2f", r[m].sum.max_tilt_deg);
            }
            printf("#   %-24s %8.2f %14s %9s %14s %9s\n", V[v] ? V[v] : "as shipped", DT[k] * 1e3, st[0], tl[0], st[1], tl[1]);
            bench_doc_printf(&doc, "| `%s` | %g | %s | %s | %s | %s |\n", V[v] ? V[v] : "as shipped", DT[k] * 1e3, st[0],
                             tl[0], st[1], tl[1]);
            if (!V[v] && k == 1) key("expo_romeo_tilt_0p1ms_deg: %.3f\n", r[0].sum.max_tilt_deg);
            if (!V[v] && k == ND - 1) key("expo_romeo_tilt_5ms_deg: %.3f\n", r[0].sum.max_tilt_deg);
            fflush(stdout);
        }
    }
    bench_doc_end(&doc, "expo-romeo-steps");
    romeo_corner_events(quick);
}

/* When does Romeo's right sole, with the damping at 150, roll from one corner to the next? Part l's
 * table counts 4 foot touch-downs at some steps and 3 at others (and part h's reference, 0.1 ms,
 * 3): after bouncing off its first landing (2.73-2.74 s) the sole lands again on one corner, and
 * either a second corner lands while the first still touches (the sole rolls: 3) or the first leaves
 * before the second lands (the sole is in the air for an instant and lands again: 4). The run's
 * contact events (mbs_sim_run_options.contact_event) give the times, at sub-step resolution. */
enum { MAX_SOLE_EVENTS = 256 };
typedef struct sole_events {
    mbs_sim *sim;
    int n;
    double t[MAX_SOLE_EVENTS], vz[MAX_SOLE_EVENTS];
    double z[MAX_SOLE_EVENTS][MAXPTS];   /* every point's height at the event (m) */
    int contact[MAX_SOLE_EVENTS], touching[MAX_SOLE_EVENTS];
} sole_events;

static void on_sole_event(void *user, double t, int contact, int touching)
{
    sole_events *e = user;
    mbs_contact_info info;
    if (e->n == MAX_SOLE_EVENTS || mbs_system_contact(mbs_sim_system(e->sim), contact, &info) != MBS_OK) return;
    if (strcmp(info.name, "r_sole") != 0) return;
    e->t[e->n] = t;
    e->vz[e->n] = info.velocity[2];
    const mbs_system *sys = mbs_sim_system(e->sim);
    for (int i = 0; i < mbs_system_ncontacts(sys) && i < MAXPTS; i++)
        e->z[e->n][i] = mbs_system_contact(sys, i, &info) == MBS_OK ? info.position[2] : NAN;
    e->contact[e->n] = contact;
    e->touching[e->n++] = touching;
}

/* "front right" for a sole corner at x > 0, y < 0 in the sole's frame */
static const char *corner_name(mbs_sim *sim, int c)
{
    static const char *const names[4] = {"heel right", "heel left", "front right", "front left"};
    mbs_contact_info info;
    if (mbs_system_contact(mbs_sim_system(sim), c, &info) != MBS_OK) return "?";
    return names[2 * (info.offset[0] > 0) + (info.offset[1] > 0)];
}

static void romeo_corner_events(int quick)
{
    static const double DT[] = {2e-5, 5e-5, 1e-4, 2e-4, 5e-4, 1e-3, 2e-3, 2.5e-3, 5e-3};
    const int ND = (int)(sizeof DT / sizeof *DT);
    const double AFTER = 2.75;   /* s: after the first landing's bounce */
    printf("\n#   romeo_walk, contact.damping=150: the right sole's landing after %.2f s, corner by corner\n", AFTER);
    printf("#   %8s %-24s %-9s %-34s %-24s %6s\n", "dt_ms", "lands on", "next_z_mm", "next corner lands (vz)",
           "first corner leaves", "feet");
    bench_doc_begin(&doc, "expo-romeo-corners");
    bench_doc_printf(&doc, "| step (ms) | the sole lands on | the next corner's height then (mm) | the next corner lands "
                           "(its vertical speed) | the first corner leaves | first | foot touch-downs |\n"
                           "|---|---|---|---|---|---|---|\n");
    for (int k = 0; k < ND; k++) {
        if (quick && DT[k] < 1e-4) continue;
        ovl o = {0};
        ov_add(&o, "contact.damping=150");
        ov_add(&o, "stepper.dt=%.17g", DT[k]);
        mbs_scenario *sc = load("romeo_walk", &o);
        mbs_error err;
        mbs_error_clear(&err);
        mbs_sim *sim = mbs_sim_new(sc, &err);
        if (!sim) { fprintf(stderr, "bench_expo: %s\n", err.msg); exit(1); }
        static sole_events e;
        memset(&e, 0, sizeof e);
        e.sim = sim;
        /* the sole's points touching in the initial state */
        int touching[MAXPTS] = {0}, nc = mbs_system_ncontacts(mbs_sim_system(sim));
        for (int i = 0; i < nc && i < MAXPTS; i++) {
            mbs_contact_info info;
            touching[i] = mbs_system_contact(mbs_sim_system(sim), i, &info) == MBS_OK && info.active &&
                          strcmp(info.name, "r_sole") == 0;
        }
        mbs_sim_summary sum;
        mbs_sim_run_options opt = {.csv = "", .html = "", .user = &e, .contact_event = on_sole_event};
        if (mbs_sim_run(sim, &opt, &sum, &err) != MBS_OK) { fprintf(stderr, "bench_expo: %s\n", err.msg); exit(1); }
        /* the landing: the first corner to touch after AFTER with none touching; then the first other
         * corner's landing and the landing corner's lift-off */
        int land = -1, next = -1, leave = -1;
        for (int j = 0; j < e.n; j++) {
            int any = 0;
            for (int i = 0; i < nc && i < MAXPTS; i++) any |= touching[i];
            if (land < 0 && e.t[j] > AFTER && e.touching[j] && !any) land = j;
            else if (land >= 0 && next < 0 && e.touching[j] && e.contact[j] != e.contact[land]) next = j;
            else if (land >= 0 && leave < 0 && !e.touching[j] && e.contact[j] == e.contact[land]) leave = j;
            if (e.contact[j] < MAXPTS) touching[e.contact[j]] = e.touching[j];
        }
        char c1[64] = "-", c2[64] = "-", c3[64] = "-", hz[32] = "-";
        const char *first = "-";
        if (land >= 0) snprintf(c1, sizeof c1, "%s, %.4f s", corner_name(sim, e.contact[land]), e.t[land]);
        if (next >= 0)
            snprintf(c2, sizeof c2, "%s, %.4f s (%.0f mm/s)", corner_name(sim, e.contact[next]), e.t[next], -1e3 * e.vz[next]);
        if (leave >= 0) snprintf(c3, sizeof c3, "%.4f s", e.t[leave]);
        if (land >= 0 && next >= 0 && e.contact[next] < MAXPTS) snprintf(hz, sizeof hz, "%.3f", 1e3 * e.z[land][e.contact[next]]);
        if (next >= 0 && leave >= 0) first = e.t[next] < e.t[leave] ? "the next lands (rolls)" : "the first leaves (in the air)";
        printf("#   %8.2f %-24s %-9s %-34s %-24s %6ld\n", DT[k] * 1e3, c1, hz, c2, c3, sum.foot_touchdowns);
        bench_doc_printf(&doc, "| %g | %s | %s | %s | %s | %s | %ld |\n", DT[k] * 1e3, c1, hz, c2, c3, first, sum.foot_touchdowns);
        if (next >= 0 && leave >= 0 && k == 0) key("expo_romeo_d150_0p02ms_roll_margin_ms: %.2f\n", 1e3 * (e.t[leave] - e.t[next]));
        if (next >= 0 && leave >= 0 && k == ND - 1) key("expo_romeo_d150_5ms_roll_margin_ms: %.2f\n", 1e3 * (e.t[leave] - e.t[next]));
        fflush(stdout);
        mbs_sim_free(sim);
        mbs_scenario_free(sc);
    }
    bench_doc_end(&doc, "expo-romeo-corners");
}
