/* f_touchdowns.c — part (f) of bench_expo: touch-downs per contact point, tilt and peak force per
 * scheme on the four tests (which variants chatter). */
#include "expo.h"

/* Touch-downs per point, tilt and peak force per scheme on the four tests, as ./sim runs them: so
 * that a reader sees which variants chatter (a contact switching on and off on alternate steps
 * counts a touch-down each time). Explicit Euler and the reference expo run at the step at which
 * explicit Euler does the task (table 2). Points are sampled at every controller period; the
 * summary's `touchdowns` counts after every step and between expo's sub-steps (all points), which
 * catches a chatter inside a period where the step is shorter than the period. */
void part_f(int quick)
{
    printf("\n## (f) touch-downs per contact point, tilt and peak force per scheme (./sim runs, full durations)\n");
    /* explicit Euler's task step of table 2, as a division of the controller period */
    static const int EULER_DIV[NSCEN] = {256, 128, 16, 32};
    enum { NSCH = 7 };
    static const struct {
        const char *label, *md, *stepper;
        int kind;   /* 0 as written, 1 Padé full, 2 Padé mmm 0, 3 the scheme at the scenario's step, 4 at Euler's step */
    } S[NSCH] = {
        {"expo closed form (as written)", "expo, closed form (as shipped)", "expo", 0},
        {"expo Pade full", "expo, Padé full", "expo", 1},
        {"expo Pade mmm 0", "expo, Padé mmm 0", "expo", 2},
        {"implicit_euler", "implicit_euler", "implicit_euler", 3},
        {"symplectic_euler (small step)", "symplectic_euler, small step", "symplectic_euler", 4},
        {"euler (small step)", "explicit Euler, small step", "euler", 4},
        {"expo closed form (small step)", "expo, closed form, small step", "expo", 4},
    };
    static const char *const SHORT[NSCEN] = {"solo_squat", "solo_jump", "solo_trot", "romeo_walk"};
    bench_doc_begin(&doc, "expo-touchdowns");
    for (int c = 0; c < NSCEN; c++) {
        mbs_scenario *sc0 = load(SCEN[c], NULL);
        double dt0 = mbs_scenario_dt(sc0), cdt = mbs_scenario_controller_dt(sc0), dur = mbs_scenario_duration(sc0);
        mbs_scenario_free(sc0);
        printf("# %s (%g s, controller %g ms, step as written %g ms)\n", SCEN[c], dur, cdt * 1e3, dt0 * 1e3);
        printf("#   %-32s %8s %-10s %-31s %6s %8s %9s %9s\n", "scheme", "dt_ms", "status", "touchdowns/point (periods)",
               "steps", "tilt_deg", "max_force", "us/step");
        bench_doc_printf(&doc, "%s**%s** (%g s, controller period %g ms, step as written %g ms)\n\n"
                               "| scheme | δt (ms) | status | touch-downs per point (at controller periods) | touch-downs, all points "
                               "(after every step and sub-step) | tilt (°) | peak force (N) |\n|---|---|---|---|---|---|---|\n",
                         c ? "\n" : "", SHORT[c], dur, cdt * 1e3, dt0 * 1e3);
        for (int k = 0; k < NSCH; k++) {
            double dt = S[k].kind == 4 ? cdt / EULER_DIV[c] : dt0;
            ovl o = {0};
            ov_add(&o, "stepper.name=%s", S[k].stepper);
            ov_add(&o, "stepper.dt=%.17g", dt);
            if (S[k].kind == 1) ov_pade(&o, -1);
            if (S[k].kind == 2) ov_pade(&o, 0);
            case_res r;
            run_case(SCEN[c], &o, 1, &r);
            char tds[160], st[96];
            td_list(&r.td, tds, sizeof tds);
            if (r.sum.diverged || r.sum.left_box) snprintf(st, sizeof st, "%s at %.3g s", status_word(&r.sum), r.sum.diverged_t);
            else snprintf(st, sizeof st, "stable");
            printf("#   %-32s %8.4g %-10s %-31s %6ld %8.2f %9.1f %9.2f\n", S[k].label, dt * 1e3, st, tds, r.sum.touchdowns,
                   r.sum.max_tilt_deg, r.sum.max_contact_force, r.us_med);
            bench_doc_printf(&doc, "| %s | %.4g | %s | %s | %ld | %.2f | %.0f |\n", S[k].md, dt * 1e3, st, tds, r.sum.touchdowns,
                             r.sum.max_tilt_deg, r.sum.max_contact_force);
            fflush(stdout);
            if (quick && k == 2) break;
        }
    }
    bench_doc_end(&doc, "expo-touchdowns");
}
