/* bench_expo.c — section 6 of Hammoud, Olivieri, Righetti, Carpentier, Del Prete, "Exponential
 * integration for efficient and accurate multi-body simulation with stiff viscoelastic contacts"
 * (Multibody System Dynamics 2022) on the Solo scenarios and Romeo's walk (issue 3, section 6):
 *   (a) figs. 2-3  local integration error (sec. 6.1) against real-time factor and step, for
 *                  euler, rk4, implicit_euler and expo (max_mat_mult 0 to 4, full), on all four, the
 *                  squat twice: under TSID (solo_squat_tsid, the paper's controller) and under PD;
 *   (b) table 2    largest stable step per stepper and scenario over the full duration;
 *   (c) table 3    time of one expo step on solo_trot and its breakdown, explicit Euler's step;
 *   (d) fig. 4     local error against contact stiffness and damping ratio on solo_trot (expo mmm 0, 1,
 *                  3 and full);
 *   (e) beyond the paper: the closed form expo takes when B = βK (src/step/expo_modal.c) against the
 *                  Padé exponential, µs per step and touch-downs on Solo trotting and standing and Romeo
 *                  standing on 8 points; the standing Solo beside consim's recorded figures (same work);
 *   (f) touch-downs per contact point, tilt and peak force per scheme on the four tests (which
 *                  variants chatter);
 *   (g) expo's cost per step against the number of active contacts, 1 to 16 (Romeo standing);
 *   (h) touch-downs of the four tests in held-out variants, as shipped, without splitting, at 0.1 ms;
 *   (i) fig. 5     force prediction (sec. 6.6): at the start of solo_squat with initial base velocities
 *                  0 to −0.5 m/s, a foot's normal force from the contact-space linear system (11) with A
 *                  and b frozen at the start (one expo step's assumption) against a fine simulation;
 *   (j) fig. 6     a contact point's normal force over time in the trot and Romeo's walk as shipped and
 *                  at ≈ 1/64 ms, per touch-down the contact velocity, the jump and b·v;
 *   (k) app. A     implicit Euler on solo_squat at 10 ms: µs per step, Newton iterations, local error and
 *                  a modelled breakdown of its step, beside expo on the same test.
 *   (l) beyond     romeo_walk against the step (0.05 to 5 ms), expo and implicit Euler: touch-downs and
 *                  largest tilt, whether part h's reference is converged in its step.
 * Parts (a) to (d) run the Padé exponential (method pade), the paper's; (c) times the closed form too.
 * Writes the data under build/bench_expo and, when gnuplot is installed, the plots into
 * docs/images/expo_*.png (tools/bench/plot_expo.gp); ends with `key: value` lines. A full run (not
 * --quick) also writes the tables of docs/benchmarks.md into <data>/tables.md (tools/bench/bench_doc.h),
 * which tools/bench/bench_doc.py puts into the document (make bench-expo does both).
 * This file holds the command line; each part is one file of tools/bench/expo/ (a_accuracy.c to
 * l_romeo_steps.c), the helpers they share are in expo/common.c, declared in expo/expo.h.
 *   bench_expo [--quick] [--only abcdefghijkl] [--data DIR] [--images DIR]
 *
 * The local error of sec. 6.1, as the paper's code computes it (consim, test_accuracy_cpp.py with
 * RESET_STATE_ON_GROUND_TRUTH): a ground-truth run with the same stepper at ≈ 1/64 ms records,
 * at the start of every controller period, the state (q, v and every contact's state: active
 * set, anchors) and the torque the controller computed from it. For each step size the stepper
 * then restarts every period from the recorded state with the recorded torque, integrates one
 * controller period, and e = ‖(q̂ ⊖ q, v̂ − v)‖∞ against the ground truth's next recorded state
 * (q̂ ⊖ q = mbs_difference(q̂, q), the paper's pin.difference); the figure is the mean of e over
 * the periods. The real-time factor is simulated time over the time spent in the stepper's steps
 * (controller, resets and error excluded, as the paper's per-step timers).
 * Stability (b) runs the scenario as ./sim does for its full duration: "stable" when the sim's
 * divergence check passes, "task" when moreover the motion is the scenario's (base height,
 * travel and tilt close to a reference run), since an explicit scheme can stay bounded while
 * the robot no longer trots. Horizons: full durations for (a) and (b), 2 s for (d).
 * Only the public API is used (mbs_sim_run with its per-period callback to record, the stepper
 * API to replay), plus the step's internal LTDL row solve and the expm API for the breakdown and
 * part (i)'s linear system, and implicit Euler's residual hook (the tests' too) for part (k). */
#include <stdio.h>
#include <string.h>

#include "expo/expo.h"

int main(int argc, char **argv)
{
    tool_single_thread_blas(argv);
    tool_args args;
    static const char PARTS[] = "abcdefghijkl";
    enum { NPARTS = sizeof PARTS - 1 };
    int status = tool_parse_args(argc, argv, "bench_expo", MBS_SOURCE_DIR, PARTS, &args);
    if (status) return status;
    int quick = args.quick;
    const char *only = args.only, *data = args.data, *images = args.images;
    double t0 = tool_now();
    /* the tables of docs/benchmarks.md: written by a full run only */
    bench_doc_open(&doc, data, "make bench-expo", !quick);
    printf("# bench_expo: Hammoud et al. 2022, section 6, on scenarios/solo_{squat,jump,trot}.ini and romeo_walk.ini "
           "(parts a, b, f; c, d on solo_trot; i, k on solo_squat; j on solo_trot and romeo_walk; e, g, h, l beyond the paper)%s\n",
           quick ? " (--quick: short horizons, fewer repetitions)" : "");
    printf("# run %s; %s; parts %s\n", doc.stamp, doc.machine, only);
    double tp[NPARTS] = {0};
    for (int p = 0; p < NPARTS; p++) {
        if (!strchr(only, PARTS[p])) continue;
        double tpart = tool_now();
        switch (PARTS[p]) {
        case 'a': part_a(data, quick); break;
        case 'b': part_b(); break;
        case 'c': part_c(quick); break;
        case 'd': part_d(data, quick); break;
        case 'e': part_e(quick); break;
        case 'f': part_f(quick); break;
        case 'g': part_g(data, quick); break;
        case 'h': part_h(quick); break;
        case 'i': part_i(data, quick); break;
        case 'j': part_j(data, quick); break;
        case 'k': part_k(data, quick); break;
        case 'l': part_l(quick); break;
        }
        tp[p] = tool_now() - tpart;
    }

    if (strchr(only, 'a') || strchr(only, 'd') || strchr(only, 'g') || strchr(only, 'i') || strchr(only, 'j')) {
        char parts[64], produced[256];
        snprintf(parts, sizeof parts, "parts='%s'", only);
        snprintf(produced, sizeof produced, "expo_{error_vs_rtf,error_vs_dt,stiffness_damping,cost_vs_contacts%s%s}.png",
                 strchr(only, 'i') ? ",fig5_force_prediction" : "", strchr(only, 'j') ? ",fig6_normal_force" : "");
        tool_plot(MBS_SOURCE_DIR, "plot_expo.gp", data, images, parts, produced);
    }
    printf("# total %.0f s (", tool_now() - t0);
    for (int p = 0, first = 1; p < NPARTS; p++)
        if (strchr(only, PARTS[p])) { printf("%s%c %.0f s", first ? "" : ", ", PARTS[p], tp[p]); first = 0; }
    printf(")\n\n");
    bench_doc_finish(&doc, "expo", &keys);
    return 0;
}
