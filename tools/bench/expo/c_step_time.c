/* c_step_time.c — part (c) of bench_expo, table 3 of Hammoud et al. 2022: the time of one expo step
 * on solo_trot and its breakdown, explicit Euler's step. */
#include "expo.h"
#include "../../../src/dynamics/dynamics_internal.h"   /* mbsi_ltdl_solve_rows: the expo step's own solve (breakdown) */
#include "../../../src/step/expm.h"   /* the matrix exponential the expo step calls (breakdown) */

enum { OP_CONTACTS, OP_KIN, OP_JAC, OP_PREP, OP_EXPM, OP_EXPM_FULL, OP_STEP, OP_STEP_FULL, OP_STEP_MODAL, NOP };

/* One expo step's first pass rebuilt from the outside with a timer per stage, over the recorded
 * states of gt that have a contact; per state the minimum over reps (the machine is shared),
 * then the mean over states (additive, as the paper's table 3) and the median. */
static void breakdown(const traj *gt, int reps, double mean[NOP], double med[NOP], long *nstates)
{
    rig r, rf, rm;
    ovl o0 = {0}, of = {0};
    ov_pade(&o0, 0);
    rig_new(&r, "solo_trot", &o0, "expo");
    ov_pade(&of, -1);
    rig_new(&rf, "solo_trot", &of, "expo");
    rig_new(&rm, "solo_trot", NULL, "expo");   /* as shipped: the closed form */
    mbs_system *s = r.sys;
    const mbs_model *m = s->model;
    mbs_data *d = s->data;
    int nv = s->nv, cmax = s->ncontacts, N0 = 6 * cmax + 3;
    double *M = xcalloc((size_t)nv * nv, sizeof(double)), *X = xcalloc((size_t)nv * (3 * cmax + 1), sizeof(double));
    double *Jc = xcalloc((size_t)3 * cmax * nv, sizeof(double)), *J6 = xcalloc(6 * (size_t)nv, sizeof(double));
    double *h = xcalloc((size_t)nv, sizeof(double)), *zero = xcalloc((size_t)nv, sizeof(double));
    double *ups = xcalloc((size_t)9 * cmax * cmax, sizeof(double)), *pdd = xcalloc(3 * (size_t)cmax, sizeof(double));
    double *off = xcalloc(3 * (size_t)cmax, sizeof(double)), *Kw = xcalloc(9 * (size_t)cmax, sizeof(double));
    double *Bw = xcalloc(9 * (size_t)cmax, sizeof(double)), *Ab = xcalloc((size_t)N0 * N0, sizeof(double));
    double *V2 = xcalloc(2 * (size_t)N0, sizeof(double)), *X2 = xcalloc(2 * (size_t)N0, sizeof(double));
    int *act = xcalloc((size_t)cmax, sizeof(int));
    mbs_expm_ws *ws = mbsi_expm_ws_new(N0);
    double *best = xcalloc((size_t)NOP * (size_t)gt->n, sizeof(double));
    double clk = clock_overhead();
    long ns = 0;
    for (long k = 0; k < gt->n; k++) {
        double *b = best + (size_t)NOP * ns;
        for (int o = 0; o < NOP; o++) b[o] = INFINITY;
        int na = 0;
        for (int rep = 0; rep < reps; rep++) {
            double t[NOP];
            restore(s, gt, k);
            const double *q = s->q, *v = s->v;
            double t0 = tool_now();
            mbs_contact_forces(s, q, v, 1);
            double t1 = tool_now();
            t[OP_CONTACTS] = t1 - t0;
            na = 0;
            for (int i = 0; i < s->ncontacts; i++) if (s->contacts[i].active) act[na++] = i;
            if (na == 0) break;
            int nc = 3 * na, ld = nc + 1, n = 6 * na, N = n + 3;
            /* kinematics: placements, velocities, J̇v of the touching points */
            t0 = tool_now();
            touching_points_drift(m, d, s, q, v, zero, act, na, off, pdd);
            t1 = tool_now();
            t[OP_KIN] = t1 - t0;
            /* contact Jacobians */
            t0 = tool_now();
            mbs_compute_joint_jacobians(m, d, q);
            for (int a = 0; a < na; a++) {
                mbs_frame_jacobian(m, d, s->contacts[act[a]].frame, off + 3 * a, MBS_LOCAL_WORLD_ALIGNED, J6, 6);
                for (int j = 0; j < nv; j++)
                    for (int rr = 0; rr < 3; rr++) X[(size_t)ld * j + 3 * a + rr] = Jc[3 * a + rr + (size_t)nc * j] = J6[rr + 6 * j];
            }
            t1 = tool_now();
            t[OP_JAC] = t1 - t0;
            /* the linear system (11): M, its LTDL factor, h, M⁻¹[Jᵀ, τ − h], Υ, p̈_free */
            t0 = tool_now();
            mbs_crba(m, d, q, M);
            mbs_ltdl(m, d, M);
            mbs_nonlinear_effects(m, d, q, v, h);
            for (int j = 0; j < nv; j++) X[(size_t)ld * j + nc] = s->tau[j] - h[j];
            mbsi_ltdl_solve_rows(m, d, X, ld, 0);
            memset(ups, 0, (size_t)nc * nc * sizeof(double));
            for (int j = 0; j < nv; j++) {
                const double *jk = Jc + (size_t)nc * j, *xk = X + (size_t)ld * j;
                for (int cc = 0; cc < nc; cc++) {
                    double w = xk[cc], *u = ups + (size_t)nc * cc;
                    if (w == 0) continue;
                    for (int rr = 0; rr < nc; rr++) u[rr] += jk[rr] * w;
                }
                for (int rr = 0; rr < nc; rr++) pdd[rr] += jk[rr] * xk[nc];
            }
            t1 = tool_now();
            t[OP_PREP] = t1 - t0;
            /* the integrals: δt Ā (eq. 30) and e^{δt Ā} applied to its last two columns (eq. 33) */
            for (int pass = 0; pass < 2; pass++) {
                t0 = tool_now();
                double dt = gt->cdt;
                for (int a = 0; a < na; a++) {
                    const mbs_contact *c = &s->contacts[act[a]];
                    world_gain(c->normal, mbsi_contact_material(s, c)->k_normal, mbsi_contact_material(s, c)->k_tangent, Kw + 9 * a);
                    world_gain(c->normal, mbsi_contact_material(s, c)->b_normal, mbsi_contact_material(s, c)->b_tangent, Bw + 9 * a);
                }
                memset(Ab, 0, (size_t)N * N * sizeof(double));
                for (int j = 0; j < nc; j++) Ab[j + (size_t)N * (nc + j)] = dt;
                for (int bb = 0; bb < na; bb++)
                    for (int j = 0; j < 3; j++) {
                        double *ck = Ab + (size_t)N * (3 * bb + j) + nc, *cb = Ab + (size_t)N * (nc + 3 * bb + j) + nc;
                        for (int l = 0; l < 3; l++) {
                            const double *u = ups + (size_t)nc * (3 * bb + l);
                            double kk = -dt * Kw[9 * bb + l + 3 * j], bk = -dt * Bw[9 * bb + l + 3 * j];
                            for (int i = 0; i < nc; i++) { ck[i] += u[i] * kk; cb[i] += u[i] * bk; }
                        }
                    }
                double *cbv = Ab + (size_t)N * n, *cx = Ab + (size_t)N * (n + 1);
                for (int rr = 0; rr < nc; rr++) cbv[nc + rr] = dt * pdd[rr];
                for (int a = 0; a < na; a++) {
                    const mbs_contact *c = &s->contacts[act[a]];
                    for (int j = 0; j < 3; j++) {
                        cbv[3 * a + j] = dt * c->dp0[j];
                        cx[3 * a + j] = dt * (c->p[j] - c->p0[j]);
                        cx[nc + 3 * a + j] = dt * (c->dp[j] - c->dp0[j]);
                    }
                }
                cx[n] = dt;
                Ab[(n + 1) + (size_t)N * (n + 2)] = dt;
                memset(V2, 0, 2 * (size_t)N * sizeof(double));
                V2[n + 1] = 1;
                V2[N + n + 2] = 1;
                mbsi_expm_apply(ws, N, Ab, N, 2, V2, N, X2, N, pass ? MBS_EXPM_FULL : 0, 1, NULL);
                t1 = tool_now();
                t[pass ? OP_EXPM_FULL : OP_EXPM] = t1 - t0;
            }
            /* the whole step, from the same state, with the scenario's option and the full exponential */
            restore(s, gt, k);
            t0 = tool_now();
            mbs_stepper_step(r.st, gt->cdt, NULL);
            t1 = tool_now();
            t[OP_STEP] = t1 - t0;
            restore(rf.sys, gt, k);
            t0 = tool_now();
            mbs_stepper_step(rf.st, gt->cdt, NULL);
            t1 = tool_now();
            t[OP_STEP_FULL] = t1 - t0;
            restore(rm.sys, gt, k);
            t0 = tool_now();
            mbs_stepper_step(rm.st, gt->cdt, NULL);
            t1 = tool_now();
            t[OP_STEP_MODAL] = t1 - t0;
            for (int o = 0; o < NOP; o++) if (t[o] - clk < b[o]) b[o] = t[o] - clk;
        }
        if (na > 0) ns++;
    }
    double *col = xcalloc((size_t)(ns ? ns : 1), sizeof(double));
    for (int o = 0; o < NOP; o++) {
        double sum = 0;
        for (long i = 0; i < ns; i++) { col[i] = best[(size_t)NOP * i + o] * 1e6; sum += col[i]; }
        mean[o] = ns ? sum / (double)ns : NAN;
        med[o] = tool_median(col, ns);
    }
    *nstates = ns;
    free(col); free(best);
    mbsi_expm_ws_free(ws);
    free(M); free(X); free(Jc); free(J6); free(h); free(zero); free(ups); free(pdd); free(off); free(Kw); free(Bw);
    free(Ab); free(V2); free(X2); free(act);
    rig_free(&r);
    rig_free(&rf);
    rig_free(&rm);
}

/* Median time per step of the stepper over a recorded run of itself: each step timed alone (the
 * clock's own cost taken off), the median over steps per repetition, then the median over
 * repetitions. Also the mean, and the real-time factor of the steps alone. */
static void step_time(const char *stepper, const ovl *o, double dt, double horizon, int reps, double *med_us,
                      double *mean_us, double *rtf)
{
    traj tr;
    record("solo_trot", o, stepper, dt, horizon, &tr);
    if (tr.diverged) { *med_us = *mean_us = *rtf = NAN; traj_free(&tr); return; }
    long nsteps = tr.n * lround(tr.cdt / dt);
    double *t = xcalloc((size_t)nsteps, sizeof(double)), *meds = xcalloc((size_t)reps, sizeof(double));
    double *means = xcalloc((size_t)reps, sizeof(double)), *rtfs = xcalloc((size_t)reps, sizeof(double));
    double clk = clock_overhead();
    for (int r = 0; r < reps; r++) {
        replay_res res;
        replay("solo_trot", o, stepper, dt, &tr, &res, t);
        double sum = 0;
        for (long i = 0; i < nsteps; i++) { t[i] -= clk; sum += t[i]; }
        means[r] = sum / (double)nsteps * 1e6;
        meds[r] = tool_median(t, nsteps) * 1e6;
        rtfs[r] = res.rtf;
    }
    *med_us = tool_median(meds, reps);
    *mean_us = tool_median(means, reps);
    *rtf = tool_median(rtfs, reps);
    free(t); free(meds); free(means); free(rtfs);
    traj_free(&tr);
}

void part_c(int quick)
{
    printf("\n## (c) time per step on solo_trot (table 3)\n");
    int reps = quick ? 3 : 7;
    mbs_scenario *sc0 = load("solo_trot", NULL);
    double cdt = mbs_scenario_controller_dt(sc0), dur = mbs_scenario_duration(sc0);
    mbs_scenario_free(sc0);
    double horizon = quick ? 1.0 : dur;
    double cm, ca, cr, em, ea, er, fm, fa, fr, um, ua, ur;
    /* as shipped (the closed form), the Padé exponential with max_mat_mult 0 (solo_trot.ini's setting
     * before the closed form) and the full Padé exponential */
    ovl o0 = {0}, of = {0};
    step_time("expo", NULL, cdt, horizon, reps, &cm, &ca, &cr);
    ov_pade(&o0, 0);
    step_time("expo", &o0, cdt, horizon, reps, &em, &ea, &er);
    ov_pade(&of, -1);
    step_time("expo", &of, cdt, horizon, reps, &fm, &fa, &fr);
    /* explicit Euler at 2/16 ms, the step of the paper's table 2 */
    double edt = cdt / 16;
    step_time("euler", NULL, edt, horizon, reps, &um, &ua, &ur);
    printf("#   %-34s %10s %10s %12s\n", "stepper on solo_trot (whole run)", "median_us", "mean_us", "rtf(steps)");
    printf("#   %-34s %10.3f %10.3f %12.1f\n", "expo as shipped (closed form), 2 ms", cm, ca, cr);
    printf("#   %-34s %10.3f %10.3f %12.1f\n", "expo Pade mmm 0, 2 ms", em, ea, er);
    printf("#   %-34s %10.3f %10.3f %12.1f\n", "expo Pade full, 2 ms", fm, fa, fr);
    printf("#   %-34s %10.3f %10.3f %12.1f\n", "euler, 0.125 ms", um, ua, ur);
    /* the whole loop as ./sim runs it (as shipped): controller, checks and steps */
    double rt[5];
    int nrt = quick ? 1 : 5;
    for (int i = 0; i < nrt; i++) {
        mbs_scenario *sc = load("solo_trot", NULL);
        mbs_error err;
        mbs_error_clear(&err);
        mbs_sim *sim = mbs_sim_new(sc, &err);
        if (!sim) { fprintf(stderr, "bench_expo: %s\n", err.msg); exit(1); }
        mbs_sim_run_options opt = {.csv = "", .html = ""};
        mbs_sim_summary sum;
        if (mbs_sim_run(sim, &opt, &sum, &err) != MBS_OK) { fprintf(stderr, "bench_expo: %s\n", err.msg); exit(1); }
        rt[i] = sum.diverged ? 0 : sum.realtime_factor;
        mbs_sim_free(sim);
        mbs_scenario_free(sc);
    }
    double simrtf = tool_median(rt, nrt);
    printf("#   ./sim scenarios/solo_trot.ini (controller and checks included): realtime_factor %.1f (median of %d)\n",
           simrtf, nrt);

    traj tr;
    record("solo_trot", &o0, "expo", cdt, horizon, &tr);
    double mean[NOP], med[NOP];
    long ns = 0;
    breakdown(&tr, quick ? 3 : 5, mean, med, &ns);
    traj_free(&tr);
    double parts = mean[OP_CONTACTS] + mean[OP_KIN] + mean[OP_JAC] + mean[OP_PREP];
    printf("#   breakdown over the %ld states with a contact of a recorded Pade mmm 0 run (us; min of repetitions per "
           "state):\n", ns);
    printf("#   %-52s %8s %8s %7s\n", "operation", "mean", "median", "share");
    const char *desc[NOP] = {"contact forces and detection (mbs_contact_forces)",
                             "kinematics, contact points' Jdot v",
                             "joint and contact Jacobians",
                             "CRBA + LTDL + h + M^-1[J^T, tau-h] + Upsilon",
                             "assembly + expm (max_mat_mult 0)",
                             "assembly + expm (full)",
                             "whole step, Pade mmm 0",
                             "whole step, Pade full",
                             "whole step, closed form (as shipped)"};
    for (int o = 0; o < NOP; o++)
        printf("#   %-52s %8.3f %8.3f %6.0f%%\n", desc[o], mean[o], med[o],
               100 * mean[o] / (o == OP_EXPM_FULL || o == OP_STEP_FULL ? mean[OP_STEP_FULL] : o == OP_STEP_MODAL ? mean[o] : mean[OP_STEP]));
    double other = mean[OP_STEP] - parts - mean[OP_EXPM], other_full = mean[OP_STEP_FULL] - parts - mean[OP_EXPM_FULL];
    printf("#   %-52s %8.3f %8s %6.0f%%\n", "rest of the step (mmm 0): cone, updates, 2nd pass", other, "",
           100 * other / mean[OP_STEP]);
    printf("#   %-52s %8.3f %8s %6.0f%%\n", "rest of the step (full)", other_full, "", 100 * other_full / mean[OP_STEP_FULL]);

    /* table 3 of docs/benchmarks.md: the paper's figures (its table 3, its machine) recorded here */
    char b1[32], b2[32];
    bench_doc_begin(&doc, "expo-time");
    bench_doc_printf(&doc, "| operation (µs, mean over the %ld steps with a contact) | paper, mmm 0 (full) | ours, Padé mmm 0 (full) |\n"
                           "|---|---|---|\n", ns);
    bench_doc_printf(&doc, "| whole expo step | 39 (94) | %.2f (%.2f); median over all steps %.2f (%.2f) |\n", mean[OP_STEP],
                     mean[OP_STEP_FULL], em, fm);
    bench_doc_printf(&doc, "| the closed form (B = βK, as shipped) | — | %.2f; median over all steps %.2f |\n", mean[OP_STEP_MODAL], cm);
    bench_doc_printf(&doc, "| computeIntegrals: assembly of δt Ā + e^{δt Ā}·V (eqs. 29–33) | 13 (67) | %.2f (%.2f) |\n",
                     mean[OP_EXPM], mean[OP_EXPM_FULL]);
    bench_doc_printf(&doc, "| prepareExpLDS: CRBA + LTDL + h + M⁻¹[Jᵀ, τ − h] + Υ (eqs. 9–11) | 13 | %.2f |\n", mean[OP_PREP]);
    bench_doc_printf(&doc, "| computeContactForces: detection/forces + kinematics, J̇v + Jacobians | 8 | %.2f (%.2f + %.2f + %.2f) |\n",
                     mean[OP_CONTACTS] + mean[OP_KIN] + mean[OP_JAC], mean[OP_CONTACTS], mean[OP_KIN], mean[OP_JAC]);
    bench_doc_printf(&doc, "| rest: cone projection, updates, integrate, second pass on slip | 5 (6), by difference | %.2f (%.2f) |\n",
                     other, other_full);
    bench_doc_printf(&doc, "| explicit Euler step (0.125 ms) | 9 | %.2f (median; %.2f mean) |\n", um, ua);
    bench_doc_printf(&doc, "| shares of the Padé mmm 0 step: integrals / preparation / contact kinematics | 33 %% / 33 %% / 20 %% | "
                           "%.0f %% / %.0f %% / %.0f %% |\n", 100 * mean[OP_EXPM] / mean[OP_STEP], 100 * mean[OP_PREP] / mean[OP_STEP],
                     100 * (mean[OP_CONTACTS] + mean[OP_KIN] + mean[OP_JAC]) / mean[OP_STEP]);
    bench_doc_end(&doc, "expo-time");

    /* issue 3's bars on solo_trot */
    bench_doc_begin(&doc, "expo-bars");
    bench_doc_printf(&doc, "| bar | this run |\n|---|---|\n");
    bench_doc_printf(&doc, "| expo on solo_trot ≤ 8 µs per step, median | **%s**: %.2f µs as shipped (the closed form, full accuracy); "
                           "Padé mmm 0 %.2f µs, Padé full %.2f µs |\n", cm <= 8 ? "met" : "not met", cm, em, fm);
    bench_doc_printf(&doc, "| euler ≤ 3 µs per step, median | **%s**: %.2f µs |\n", um <= 3 ? "met" : "not met", um);
    bench_doc_printf(&doc, "| real-time factor > 200 at δt = 2 ms | stepper alone (the paper's definition): **%s**, %s; "
                           "end to end (`./sim scenarios/solo_trot.ini`, median of %d): **%s**, %s |\n",
                     cr > 200 ? "met" : "not met", fmt2(b1, sizeof b1, cr), nrt, simrtf > 200 ? "met" : "not met",
                     fmt2(b2, sizeof b2, simrtf));
    bench_doc_end(&doc, "expo-bars");

    key("expo_us_per_step_solo_trot: %.3f\n", cm);
    key("expo_mmm0_us_per_step_solo_trot: %.3f\n", em);
    key("expo_full_us_per_step_solo_trot: %.3f\n", fm);
    key("euler_us_per_step_solo_trot: %.3f\n", um);
    key("expo_mean_us_per_step_solo_trot: %.3f\n", ca);
    key("expo_mmm0_mean_us_per_step_solo_trot: %.3f\n", ea);
    key("expo_full_mean_us_per_step_solo_trot: %.3f\n", fa);
    key("euler_mean_us_per_step_solo_trot: %.3f\n", ua);
    key("expo_realtime_factor_solo_trot_2ms_steps: %.1f\n", cr);
    key("expo_realtime_factor_solo_trot_2ms_sim: %.1f\n", simrtf);
    key("expo_breakdown_contacts_us: %.3f\n", mean[OP_CONTACTS]);
    key("expo_breakdown_kinematics_us: %.3f\n", mean[OP_KIN]);
    key("expo_breakdown_jacobians_us: %.3f\n", mean[OP_JAC]);
    key("expo_breakdown_prepare_us: %.3f\n", mean[OP_PREP]);
    key("expo_breakdown_expm_mmm0_us: %.3f\n", mean[OP_EXPM]);
    key("expo_breakdown_expm_full_us: %.3f\n", mean[OP_EXPM_FULL]);
    key("expo_breakdown_rest_us: %.3f\n", other);
    key("expo_breakdown_step_us: %.3f\n", mean[OP_STEP]);
    key("expo_breakdown_step_full_us: %.3f\n", mean[OP_STEP_FULL]);
    key("expo_breakdown_step_modal_us: %.3f\n", mean[OP_STEP_MODAL]);
}
