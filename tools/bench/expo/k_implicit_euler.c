/* k_implicit_euler.c — part (k) of bench_expo, appendix A of Hammoud et al. 2022: implicit Euler on
 * solo_squat at 10 ms, µs per step, Newton iterations, local error and a modelled breakdown of its
 * step, beside expo on the same test. */
#include "expo.h"
/* after the library headers: lapacke.h brings complex.h, whose macro I is no name here (the LU) */
#include <lapacke.h>
#undef I

/* The stepper's test hook (src/step/implicit_euler.c, declared by tests/test_implicit_euler.c too): the
 * residual r(x1) of eq. A1 for a step of dt from the system's state and, when N is not NULL, the
 * row-scaled Newton matrix the stepper solves with and M(q1). */
double mbsi_implicit_euler_residual(mbs_stepper *st, double dt, int clamped, const double *q1, const double *v1,
                                   double *r, double *N, double *M);

enum { IE_RES, IE_MAT, IE_RNEAD, IE_CONTD, IE_LU, IE_ABAD, IE_ABA, IE_NOP };

/* The mean over a run of the time of one step, each step timed alone from its start state (the
 * stepper's own run of the scenario at dt, replayed period by period) as the minimum of reps
 * repetitions, the clock's cost taken off: on a shared machine a burst of load lengthens some
 * repetitions of a step, rarely all, where a whole run's mean takes every burst in. µs; NAN when the
 * run diverged. */
static double step_min_mean(const char *scen, const ovl *o, const char *stepper, double dt, double horizon, int reps)
{
    traj tr;
    record(scen, o, stepper, dt, horizon, &tr);
    if (tr.diverged) { traj_free(&tr); return NAN; }
    ovl o2;
    ov_copy(&o2, o);
    ov_add(&o2, "stepper.dt=%.17g", dt);
    rig r;
    rig_new(&r, scen, &o2, stepper);
    mbs_system *s = r.sys;
    start_state x0;
    start_new(&x0, s);
    long nsub = lround(tr.cdt / dt), n = 0;
    double clk = clock_overhead(), sum = 0;
    for (long k = 0; k < tr.n; k++) {
        restore(s, &tr, k);
        for (long i = 0; i < nsub; i++) {
            start_keep(&x0, s);
            double best = INFINITY;
            for (int rep = 0; rep < reps; rep++) {
                start_put(&x0, s);
                double ta = tool_now();
                mbs_stepper_step(r.st, dt, NULL);
                best = fmin(best, tool_now() - ta - clk);
            }
            sum += best;   /* the state goes on from the last repetition's step */
            n++;
        }
    }
    start_free(&x0);
    rig_free(&r);
    traj_free(&tr);
    return n ? sum / (double)n * 1e6 : NAN;
}

/* Appendix A: solo_squat at δt = 10 ms with implicit_euler, as ./sim runs it (µs per step, Newton
 * iterations per step), beside expo on the same test (as shipped, the closed form; Padé full and
 * max_mat_mult 0, the paper's setting), the cases taking turns; the local error (sec. 6.1) of both at
 * 10 ms, each against itself at 40/2048 ms (part a's ground truths); and where an implicit Euler step's
 * time goes, modelled: the pieces of one Newton iteration timed alone at every step's start state
 * (x1 = the step's solution) — the Newton matrix (RNEA derivatives, contact-model derivatives, the
 * Lie-group Jacobians and their products: newton_matrix in src/step/implicit_euler.c), the LU solve
 * of the 36x36 system, one residual (the unit of the line search) — times the step's iterations (one
 * matrix and one solve per iteration at most); the rest of the step (warm start, line-search
 * residuals, the release passes) by difference. */
void part_k(const char *data, int quick)
{
    (void)data;
    printf("\n## (k) implicit Euler on solo_squat at 10 ms (appendix A), beside expo\n");
    const double dt = 0.01;
    enum { NK = 4 };
    static const struct { const char *label, *md, *stepper, *set[3]; } C[NK] = {
        {"implicit_euler 10 ms", "implicit_euler", "implicit_euler", {NULL}},
        {"expo closed form 10 ms", "expo, as shipped (closed form)", "expo", {NULL}},
        {"expo Pade full 10 ms", "expo, Padé full (`expo.method=pade`)", "expo", {"expo.method=pade", NULL}},
        {"expo Pade mmm 0 10 ms", "expo, Padé max_mat_mult 0 (`expo.max_mat_mult=0`)", "expo", {"expo.method=pade", "expo.max_mat_mult=0", NULL}},
    };
    /* many short runs (implicit Euler's 4 s take 15 ms): a burst of load on the shared machine hits
     * some of them, and the minimum beside the median tells how much */
    int reps = quick ? 3 : 21;
    double us[NK][32];
    case_res R[NK];
    for (int r = 0; r < reps; r++)
        for (int c = 0; c < NK; c++) {
            ovl o = {0};
            ov_add(&o, "stepper.name=%s", C[c].stepper);
            ov_add(&o, "stepper.dt=%g", dt);
            for (int k = 0; k < 3 && C[c].set[k]; k++) ov_add(&o, "%s", C[c].set[k]);
            run_case("solo_squat", &o, 1, &R[c]);
            us[c][r] = R[c].us_med;
        }
    /* local error at 10 ms against each scheme's own ground truth, as part (a) */
    mbs_scenario *sc0 = load("solo_squat", NULL);
    double cdt = mbs_scenario_controller_dt(sc0), dur = mbs_scenario_duration(sc0);
    mbs_scenario_free(sc0);
    double horizon = cdt * (double)lround((quick ? 1.0 : dur) / cdt), gdt = cdt / (double)(1 << gt_level(cdt));
    double lerr[NK];
    for (int c = 0; c < NK; c++) lerr[c] = NAN;
    {
        traj gi, gx;
        ovl of = {0};
        ov_pade(&of, -1);
        record("solo_squat", NULL, "implicit_euler", gdt, horizon, &gi);
        record("solo_squat", &of, "expo", gdt, horizon, &gx);
        replay_res rr;
        if (!gi.diverged) { replay("solo_squat", NULL, "implicit_euler", dt, &gi, &rr, NULL); lerr[0] = rr.err_mean; }
        if (!gx.diverged) {
            replay("solo_squat", NULL, "expo", dt, &gx, &rr, NULL);
            lerr[1] = rr.err_mean;
            replay("solo_squat", &of, "expo", dt, &gx, &rr, NULL);
            lerr[2] = rr.err_mean;
            ovl o0 = {0};
            ov_pade(&o0, 0);
            replay("solo_squat", &o0, "expo", dt, &gx, &rr, NULL);
            lerr[3] = rr.err_mean;
        }
        traj_free(&gi);
        traj_free(&gx);
    }
    /* each step timed alone, min of repetitions, mean over the run */
    double smin[NK];
    for (int c = 0; c < NK; c++) {
        ovl o = {0};
        for (int k = 0; k < 3 && C[c].set[k]; k++) ov_add(&o, "%s", C[c].set[k]);
        smin[c] = step_min_mean("solo_squat", &o, C[c].stepper, dt, horizon, quick ? 2 : 5);
    }
    printf("#   %-26s %10s %9s %9s %11s %11s %13s %12s %s\n", "case (./sim, 4 s)", "us_median", "us_min", "us_max",
           "step_min_us", "iters/step", "nonconverged", "local_err", "status");
    double med[NK];
    for (int c = 0; c < NK; c++) {
        double lo = us[c][0], hi = us[c][0];
        for (int r = 1; r < reps; r++) { lo = fmin(lo, us[c][r]); hi = fmax(hi, us[c][r]); }
        med[c] = tool_median(us[c], reps);
        R[c].us_min = lo;
        R[c].us_max = hi;
        printf("#   %-26s %10.2f %9.2f %9.2f %11.2f %11.2f %6ld/%-6ld %12.4g %s\n", C[c].label, med[c], lo, hi, smin[c],
               R[c].sum.mean_iterations, R[c].sum.nonconverged, R[c].sum.steps, lerr[c], status_word(&R[c].sum));
    }

    /* the breakdown over implicit Euler's own run at 10 ms */
    traj tr;
    record("solo_squat", NULL, "implicit_euler", dt, horizon, &tr);
    ovl o = {0};
    ov_add(&o, "stepper.dt=%g", dt);
    rig r;
    rig_new(&r, "solo_squat", &o, "implicit_euler");
    mbs_system *s = r.sys;
    const mbs_model *m = s->model;
    int nq = s->nq, nv = s->nv, n2 = 2 * nv;
    start_state x0;
    start_new(&x0, s);
    double *q1 = xcalloc((size_t)nq, sizeof(double)), *v1 = xcalloc((size_t)nv, sizeof(double));
    double *a1 = xcalloc((size_t)nv, sizeof(double)), *res = xcalloc((size_t)n2, sizeof(double));
    double *N = xcalloc((size_t)n2 * n2, sizeof(double)), *A = xcalloc((size_t)n2 * n2, sizeof(double));
    double *Mm = xcalloc((size_t)nv * nv, sizeof(double)), *Gq = xcalloc((size_t)nv * nv, sizeof(double));
    double *Gv = xcalloc((size_t)nv * nv, sizeof(double)), *rhs = xcalloc((size_t)n2, sizeof(double));
    double *work = xcalloc(mbsi_contact_derivatives_work_size(nv) + 1, sizeof(double));
    int *iwork = xcalloc((size_t)nv + 1, sizeof(int));
    lapack_int *ipiv = xcalloc((size_t)n2 + 1, sizeof(lapack_int));
    long nsub = lround(cdt / dt), nst = 0;
    int kreps = quick ? 2 : 5;
    double clk = clock_overhead(), sum_step = 0, sum_it = 0, sum_op[IE_NOP] = {0};
    for (long k = 0; k < tr.n; k++) {
        restore(s, &tr, k);
        for (long i = 0; i < nsub; i++) {
            start_keep(&x0, s);
            double best[IE_NOP + 1];
            for (int j = 0; j <= IE_NOP; j++) best[j] = INFINITY;
            int iters = 0;
            for (int rep = 0; rep < kreps; rep++) {
                double t[IE_NOP + 1], ta;
                start_put(&x0, s);
                mbs_step_stats st;
                memset(&st, 0, sizeof st);
                ta = tool_now();
                mbs_stepper_step(r.st, dt, &st);
                t[IE_NOP] = tool_now() - ta;
                iters = st.iterations;
                memcpy(q1, s->q, sizeof(double) * (size_t)nq);
                memcpy(v1, s->v, sizeof(double) * (size_t)nv);
                /* one residual, and one residual with the Newton matrix, at x1 from the step's start */
                start_put(&x0, s);
                ta = tool_now();
                mbsi_implicit_euler_residual(r.st, dt, 1, q1, v1, res, NULL, NULL);
                t[IE_RES] = tool_now() - ta;
                start_put(&x0, s);
                ta = tool_now();
                mbsi_implicit_euler_residual(r.st, dt, 1, q1, v1, res, N, Mm);
                t[IE_MAT] = tool_now() - ta;   /* the residual and the matrix: the residual taken off below */
                /* its pieces: the RNEA derivatives at q̈(x1), the contact model's */
                start_put(&x0, s);
                mbs_system_dynamics(s, q1, v1, 0, a1);
                ta = tool_now();
                mbs_rnea_derivatives(m, s->data, q1, v1, a1, Gq, Gv, Mm);
                t[IE_RNEAD] = tool_now() - ta;
                mbs_contact_forces(s, q1, v1, 0);
                ta = tool_now();
                mbsi_contact_force_derivatives(s, q1, v1, 1, Gq, Gv, work, iwork, NULL);
                t[IE_CONTD] = tool_now() - ta;
                /* the solve: M r_v and the LU with partial pivoting of the 36x36 matrix, as newton_direction */
                memcpy(A, N, sizeof(double) * (size_t)n2 * n2);
                ta = tool_now();
                memcpy(rhs, res, sizeof(double) * (size_t)nv);
                for (int rr = 0; rr < nv; rr++) {
                    double x = 0;
                    for (int cc = 0; cc < nv; cc++) x += Mm[rr + (size_t)nv * cc] * res[nv + cc];
                    rhs[nv + rr] = x;
                }
                LAPACKE_dgesv_work(LAPACK_COL_MAJOR, n2, 1, A, n2, ipiv, rhs, n2);
                t[IE_LU] = tool_now() - ta;
                /* for the paper's figures: ABA derivatives and ABA (28 and 8 µs there) */
                ta = tool_now();
                mbs_aba_derivatives(m, s->data, q1, v1, s->tau, a1, Gq, Gv, Mm);
                t[IE_ABAD] = tool_now() - ta;
                ta = tool_now();
                mbs_aba(m, s->data, q1, v1, s->tau, a1);
                t[IE_ABA] = tool_now() - ta;
                for (int j = 0; j <= IE_NOP; j++) if (t[j] - clk < best[j]) best[j] = t[j] - clk;
            }
            best[IE_MAT] -= best[IE_RES];   /* each a minimum over the repetitions, then the difference */
            /* on from the step's solution */
            start_put(&x0, s);
            mbs_stepper_step(r.st, dt, NULL);
            sum_step += best[IE_NOP];
            sum_it += iters;
            for (int j = 0; j < IE_NOP; j++) sum_op[j] += iters * best[j];
            nst++;
        }
    }
    double T = sum_step / nst * 1e6, it = sum_it / nst, op[IE_NOP], unit[IE_NOP];
    for (int j = 0; j < IE_NOP; j++) { op[j] = sum_op[j] / nst * 1e6; unit[j] = it > 0 ? op[j] / it : NAN; }
    double mat = op[IE_MAT], lie = op[IE_MAT] - op[IE_RNEAD] - op[IE_CONTD], rest = T - mat - op[IE_LU];
    printf("#   breakdown over the %ld steps of a recorded implicit_euler run at 10 ms (min of %d repetitions per step):\n"
           "#     step %.2f us, %.2f Newton iterations; per iteration: Newton matrix %.2f us (RNEA derivatives %.2f, contact "
           "derivatives %.2f, Lie-group Jacobians and products %.2f), LU solve %.2f us, one residual %.2f us\n"
           "#     shares: Newton matrix %.0f%% (dynamics Jacobian %.0f%%: RNEA derivatives %.0f%%, contact %.0f%%; Lie group %.0f%%), "
           "solve %.0f%%, rest (warm start, line-search residuals, release passes) %.0f%% = %.1f residuals' time\n"
           "#     for the paper's figures: ABA derivatives %.2f us (paper 28), ABA %.2f us (paper 8)\n",
           nst, kreps, T, it, unit[IE_MAT], unit[IE_RNEAD], unit[IE_CONTD], unit[IE_MAT] - unit[IE_RNEAD] - unit[IE_CONTD],
           unit[IE_LU], unit[IE_RES], 100 * mat / T, 100 * (op[IE_RNEAD] + op[IE_CONTD]) / T, 100 * op[IE_RNEAD] / T,
           100 * op[IE_CONTD] / T, 100 * lie / T, 100 * op[IE_LU] / T, 100 * rest / T, rest / unit[IE_RES], unit[IE_ABAD],
           unit[IE_ABA]);
    start_free(&x0);
    free(q1); free(v1); free(a1); free(res); free(N); free(A); free(Mm); free(Gq); free(Gv); free(rhs);
    free(work); free(iwork); free(ipiv);
    rig_free(&r);
    traj_free(&tr);

    char e0[32], e1[32];
    bench_doc_begin(&doc, "expo-implicit");
    bench_doc_printf(&doc, "| solo_squat, δt = 10 ms, 4 s | µs per step: each step timed alone, min of %d, mean over the run | "
                           "implicit_euler / this | `./sim`'s us_per_step, median of %d runs (min–max) | Newton iterations per step | "
                           "non-converged steps | mean local error (sec. 6.1) |\n|---|---|---|---|---|---|---|\n", quick ? 2 : 5, reps);
    for (int c = 0; c < NK; c++) {
        char ratio[32];
        if (c == 0) snprintf(ratio, sizeof ratio, "1");
        else snprintf(ratio, sizeof ratio, "**%.1f×**", smin[0] / smin[c]);
        bench_doc_printf(&doc, "| %s | %.2f | %s | %.2f (%.2f–%.2f) | %s | %ld of %ld | %s |\n", C[c].md, smin[c], ratio, med[c], R[c].us_min,
                         R[c].us_max, c == 0 ? fmt2(e0, sizeof e0, R[c].sum.mean_iterations) : "—", R[c].sum.nonconverged,
                         R[c].sum.steps, fmt2(e1, sizeof e1, lerr[c]));
    }
    bench_doc_printf(&doc, "| paper: Eul-imp (Expo) | 920 (≈ 92) | \"roughly 10 times\" | — | 8 | — | \"roughly the same\" |\n");
    bench_doc_printf(&doc, "\n| where an implicit Euler step's time goes (modelled, see the text) | µs per step | share | paper's share |\n"
                           "|---|---|---|---|\n");
    bench_doc_printf(&doc, "| Newton matrix (\"prepare linear system\"), %.2f per iteration | %.2f | %.0f %% | 51 %% |\n", unit[IE_MAT], mat,
                     100 * mat / T);
    bench_doc_printf(&doc, "| — dynamics Jacobian: RNEA derivatives (%.2f) + contact model (%.2f) | %.2f | %.0f %% (%.0f + %.0f) | 29 %% "
                           "(ABA derivatives 24 + contact 4) |\n", unit[IE_RNEAD], unit[IE_CONTD], op[IE_RNEAD] + op[IE_CONTD],
                     100 * (op[IE_RNEAD] + op[IE_CONTD]) / T, 100 * op[IE_RNEAD] / T, 100 * op[IE_CONTD] / T);
    bench_doc_printf(&doc, "| — Lie-group Jacobians and products, assembly | %.2f | %.0f %% | 21 %% |\n", lie, 100 * lie / T);
    bench_doc_printf(&doc, "| solve (M r_v, LU with partial pivoting, 36×36), %.2f per iteration | %.2f | %.0f %% | 12 %% |\n",
                     unit[IE_LU], op[IE_LU], 100 * op[IE_LU] / T);
    bench_doc_printf(&doc, "| rest, by difference: warm start, line-search residuals (%.2f µs each, ≈ %.1f per step), release passes | "
                           "%.2f | %.0f %% | line search 29 %%, other 8 %% |\n", unit[IE_RES], rest / unit[IE_RES], rest, 100 * rest / T);
    bench_doc_printf(&doc, "| whole step (timed alone, min of %d, mean over %ld steps) | %.2f | 100 %% | (920 µs) |\n", kreps, nst, T);
    bench_doc_printf(&doc, "\nFor the paper's unit costs on Solo: ABA derivatives %.2f µs here (paper 28 µs), ABA %.2f µs (paper 8 µs).\n",
                     unit[IE_ABAD], unit[IE_ABA]);
    bench_doc_end(&doc, "expo-implicit");
    key("implicit_euler_squat_10ms_us_per_step: %.3f\n", smin[0]);
    key("implicit_euler_squat_10ms_iterations_per_step: %.3f\n", R[0].sum.mean_iterations);
    key("expo_squat_10ms_us_per_step: %.3f\n", smin[1]);
    key("expo_mmm0_squat_10ms_us_per_step: %.3f\n", smin[3]);
    key("implicit_euler_over_expo_squat_10ms: %.2f\n", smin[0] / smin[1]);
    key("implicit_euler_squat_10ms_sim_us_per_step_median: %.3f\n", med[0]);
    key("expo_squat_10ms_sim_us_per_step_median: %.3f\n", med[1]);
}
