/* walker_energy.c — experiment b of Zapolsky and Drumwright, "Adaptive integration for controlling
 * speed vs. accuracy in multi-rigid body simulation" (IROS 2015, sec. IV-B) on the paper's own system,
 * the 3D passive walker of Coleman et al. 2001 (urdf/passive_walker.urdf), from its stable limit
 * cycle on flat ground (scenarios/passive_walker_cycle.ini; docs/passive_walker.md section 6):
 * the largest step keeping the total energy within 0.001 % of its value at the start of a swing
 * phase (the paper's criterion: "deviate no more than 0.001% from its nominal value"), over one
 * swing phase, for explicit Euler and classic RK4, and the gain of RK4 per function evaluation.
 *
 * The swing phase is the smooth ODE the paper's MATLAB walker integrates: the stance rim rolls
 * without slipping (its contact point at rest, a constraint on v, imposed on the acceleration with
 * its multiplier: M v̇ = −C v − g + Jᵀλ, J v̇ = −J̇ v), the swing leg is free; no impact happens
 * in it. J is the 3 x nv Jacobian of the stance rim's lowest point, J̇ v the derivative of J(q) v
 * along q̇ (central differences on the group, ε = 1e-6: the contact point moves round the rim, so
 * J̇ v is not the drift of a point fixed in the leg). The state (q ∈ R⁸ with its quaternion, v ∈ R⁷)
 * is integrated as a vector ODE, q̇ = (R v_lin, ½ quat ⊗ ω, q̇_hip), the quaternion renormalised after
 * each step (the paper's Algorithm 2, line 29): explicit Euler x⁺ = x + h f(x) (the paper's explicit
 * Euler, eq. 1 with f at q_i) and RK4. The engine's `euler` and `rk4` steppers integrate the system's
 * dynamics with its contact models, none of which is a rolling constraint (a rim is a rigid-contact
 * geometry), and hold τ over a step, so a constraint force cannot be fed to their stages; hence
 * the two schemes here, on the engine's crba, aba and Jacobians. Beside them the engine's own
 * first-order step with rigid contact, `rigid` (the paper's Algorithm 1: impulses as the contact
 * model), explicit (dynamics_at = old) and as the paper's eq. 2 (new), on the same swing.
 *
 * The horizon: the swing from the scenario's start (just after a left touch-down) to the right
 * foot's landing, found on a fine RK4 run (h = 1e-4) where the right rim's lowest point comes back to
 * the floor. The largest step: bisection on a log scale between 1e-6 and the horizon, to 0.5 %.
 * Ends with `key: value` lines; a full run writes the block walker-paper of docs/benchmarks.md into
 * <data>/tables.md (tools/bench/bench_doc.h), which `make bench-walker` puts into the document.
 *   walker_energy [--quick] [--data DIR]        (--quick: the ODE schemes only) */
#include <math.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "mbs.h"
#include "bench_tool.h"
#include "bench_doc.h"

#ifndef MBS_SOURCE_DIR
#define MBS_SOURCE_DIR "."
#endif

static const char *PROGRAM = "walker_energy";
enum { NQ = 8, NV = 7, NX = NQ + NV };
static const double TOL = 1e-5;   /* 0.001 % */

static void die(const char *what, const mbs_error *e)
{
    fprintf(stderr, "%s: %s: %s\n", PROGRAM, what, e->msg);
    exit(1);
}

typedef struct walker {
    const mbs_model *m;
    mbs_data *d;
    int stance, swing;    /* frames of the left (stance) and right foot */
    double radius;
    long evals;           /* evaluations of the field */
} walker;

/* The lowest point of a foot's rim (centre at the frame's origin, axis its y axis) as an offset in
 * the frame; its world height into *z. */
static void rim_low(walker *w, const double *q, int frame, double off[3], double *z)
{
    double R[9], p[3];
    mbs_compute_frame_placement(w->m, w->d, q, frame, R, p);
    /* −ẑ projected on the rim's plane (normal a = R ŷ, column 1), in the frame's axes */
    const double *a = R + 3;
    double u[3] = {a[2] * a[0], a[2] * a[1], a[2] * a[2] - 1}, n = sqrt(u[0] * u[0] + u[1] * u[1] + u[2] * u[2]);
    for (int k = 0; k < 3; k++) off[k] = w->radius * (R[3 * k] * u[0] + R[3 * k + 1] * u[1] + R[3 * k + 2] * u[2]) / n;
    if (z) *z = p[2] + w->radius * u[2] / n;
}

/* J (3 x nv, world axes, column-major) of the stance rim's lowest point at q; J v into jv. */
static void contact_jacobian(walker *w, const double *q, const double *v, double *J, double jv[3])
{
    double off[3], J6[6 * NV];
    rim_low(w, q, w->stance, off, NULL);
    mbs_compute_frame_jacobian(w->m, w->d, q, w->stance, off, MBS_LOCAL_WORLD_ALIGNED, J6, 6);
    for (int r = 0; r < 3; r++) {
        jv[r] = 0;
        for (int c = 0; c < NV; c++) {
            if (J) J[r + 3 * c] = J6[r + 6 * c];
            jv[r] += J6[r + 6 * c] * v[c];
        }
    }
}

/* Solves (J M⁻¹ Jᵀ) λ = b and returns y = M⁻¹ Jᵀ λ, M factored in d (mbs_ltdl). */
static void constraint_solve(walker *w, const double *J, const double b[3], double y[NV])
{
    double Y[NV * 3], A[9];
    for (int r = 0; r < 3; r++)
        for (int c = 0; c < NV; c++) Y[c + NV * r] = J[r + 3 * c];
    mbs_ltdl_solve(w->m, w->d, Y, 3, NV);
    for (int i = 0; i < 3; i++)
        for (int j = 0; j < 3; j++) {
            A[i + 3 * j] = 0;
            for (int c = 0; c < NV; c++) A[i + 3 * j] += J[i + 3 * c] * Y[c + NV * j];
        }
    /* 3 x 3 by Cramer's rule: A is symmetric positive definite and well conditioned here */
    double det = A[0] * (A[4] * A[8] - A[7] * A[5]) - A[3] * (A[1] * A[8] - A[7] * A[2]) + A[6] * (A[1] * A[5] - A[4] * A[2]);
    double lam[3];
    for (int k = 0; k < 3; k++) {
        double B[9];
        memcpy(B, A, sizeof B);
        for (int r = 0; r < 3; r++) B[r + 3 * k] = b[r];
        lam[k] = (B[0] * (B[4] * B[8] - B[7] * B[5]) - B[3] * (B[1] * B[8] - B[7] * B[2]) + B[6] * (B[1] * B[5] - B[4] * B[2])) / det;
    }
    for (int c = 0; c < NV; c++) y[c] = Y[c] * lam[0] + Y[c + NV] * lam[1] + Y[c + 2 * NV] * lam[2];
}

/* The swing phase's field: x = (q, v) -> (q̇, v̇). */
static void field(walker *w, const double *x, double *xd)
{
    double q[NQ], J[3 * NV], jv[3], jp[3], jm[3], qe[NQ], dq[NV], a0[NV], y[NV], tau[NV] = {0}, Mm[NV * NV];
    const double *v = x + NQ;
    memcpy(q, x, sizeof q);
    double n = sqrt(q[3] * q[3] + q[4] * q[4] + q[5] * q[5] + q[6] * q[6]);
    for (int k = 3; k < 7; k++) q[k] /= n;
    w->evals++;
    /* J̇ v: the derivative of J(q) v along the motion, the contact point re-found at each q */
    const double eps = 1e-6;
    for (int k = 0; k < NV; k++) dq[k] = eps * v[k];
    mbs_integrate(w->m, q, dq, qe);
    contact_jacobian(w, qe, v, NULL, jp);
    for (int k = 0; k < NV; k++) dq[k] = -eps * v[k];
    mbs_integrate(w->m, q, dq, qe);
    contact_jacobian(w, qe, v, NULL, jm);
    contact_jacobian(w, q, v, J, jv);
    mbs_aba(w->m, w->d, q, v, tau, a0);
    mbs_crba(w->m, w->d, q, Mm);
    mbs_ltdl(w->m, w->d, Mm);
    double b[3];
    for (int r = 0; r < 3; r++) {
        b[r] = -(jp[r] - jm[r]) / (2 * eps);
        for (int c = 0; c < NV; c++) b[r] -= J[r + 3 * c] * a0[c];
    }
    constraint_solve(w, J, b, y);
    /* q̇: the base origin's world velocity, the quaternion's rate (x y z w), the hip's */
    double R[9], p[3], qx = q[3], qy = q[4], qz = q[5], qw = q[6], wx = v[3], wy = v[4], wz = v[5];
    mbs_joint_local_placement(w->m, 0, q, R, p);
    for (int k = 0; k < 3; k++) xd[k] = R[k] * v[0] + R[k + 3] * v[1] + R[k + 6] * v[2];
    xd[3] = 0.5 * (qw * wx + qy * wz - qz * wy);
    xd[4] = 0.5 * (qw * wy + qz * wx - qx * wz);
    xd[5] = 0.5 * (qw * wz + qx * wy - qy * wx);
    xd[6] = -0.5 * (qx * wx + qy * wy + qz * wz);
    xd[7] = v[6];
    for (int k = 0; k < NV; k++) xd[NQ + k] = a0[k] + y[k];
}

static void normalise(double *x)
{
    double n = sqrt(x[3] * x[3] + x[4] * x[4] + x[5] * x[5] + x[6] * x[6]);
    for (int k = 3; k < 7; k++) x[k] /= n;
}

/* One step of h: explicit Euler (order 1) or classic RK4 (order 4). */
static void ode_step(walker *w, int order, double *x, double h)
{
    double k1[NX], k2[NX], k3[NX], k4[NX], xs[NX];
    field(w, x, k1);
    if (order == 1) {
        for (int i = 0; i < NX; i++) x[i] += h * k1[i];
    } else {
        for (int i = 0; i < NX; i++) xs[i] = x[i] + 0.5 * h * k1[i];
        field(w, xs, k2);
        for (int i = 0; i < NX; i++) xs[i] = x[i] + 0.5 * h * k2[i];
        field(w, xs, k3);
        for (int i = 0; i < NX; i++) xs[i] = x[i] + h * k3[i];
        field(w, xs, k4);
        for (int i = 0; i < NX; i++) x[i] += h / 6 * (k1[i] + 2 * k2[i] + 2 * k3[i] + k4[i]);
    }
    normalise(x);
}

static double energy(walker *w, const double *q, const double *v)
{
    return mbs_kinetic_energy(w->m, w->d, q, v) + mbs_potential_energy(w->m, w->d, q);
}

/* One run of a scheme over [0, T] from x0 at step h (the last step shortened to end at T); the largest
 * relative deviation of the energy from its start, stopping once it passes `stop`. */
typedef double (*drift_fn)(void *ctx, double h, double T, double stop);

typedef struct ode_ctx { walker *w; int order; const double *x0; } ode_ctx;

static double ode_drift(void *ctx, double h, double T, double stop)
{
    ode_ctx *c = ctx;
    double x[NX];
    memcpy(x, c->x0, sizeof x);
    double E0 = energy(c->w, x, x + NQ), worst = 0;
    long n = (long)ceil(T / h - 1e-9);
    for (long k = 0; k < n && worst <= stop; k++) {
        ode_step(c->w, c->order, x, fmin(h, T - (double)k * h));
        double e = fabs(energy(c->w, x, x + NQ) - E0) / fabs(E0);
        worst = isfinite(e) ? fmax(worst, e) : INFINITY;
    }
    return worst;
}

/* The engine's rigid stepper on the scenario's system over the same swing (the right foot's contact,
 * active at the start behind the stance foot, is left to lift off; the run ends at T or when the
 * right foot lands again, whichever comes first: the landing's impulse is the next step's). */
typedef struct rigid_ctx { mbs_scenario *sc; const char *at; } rigid_ctx;

static double rigid_drift(void *ctx, double h, double T, double stop)
{
    rigid_ctx *c = ctx;
    mbs_error err;
    mbs_sim *sim = mbs_sim_new(c->sc, &err);
    if (!sim) die("sim", &err);
    mbs_system *s = mbs_sim_system(sim);
    const mbs_model *m = mbs_system_model(s);
    mbs_option o[1] = {MBS_OPTION_WORD("dynamics_at", c->at)};
    mbs_stepper *st = mbs_stepper_new("rigid", s, o, 1, &err);
    if (!st) die("rigid", &err);
    mbs_data *d = mbs_data_new(m);
    double E0 = mbs_kinetic_energy(m, d, mbs_system_q(s), mbs_system_v(s)) + mbs_potential_energy(m, d, mbs_system_q(s)), worst = 0;
    long n = (long)ceil(T / h - 1e-9);
    int lifted = 0;
    for (long k = 0; k < n && worst <= stop; k++) {
        if (mbs_stepper_step(st, fmin(h, T - (double)k * h), NULL) != MBS_OK) { worst = INFINITY; break; }
        mbs_contact_info ci;
        mbs_system_contact(s, 1, &ci);
        if (!ci.active) lifted = 1;
        else if (lifted) break;
        const double *q = mbs_system_q(s), *v = mbs_system_v(s);
        double e = fabs(mbs_kinetic_energy(m, d, q, v) + mbs_potential_energy(m, d, q) - E0) / fabs(E0);
        worst = isfinite(e) ? fmax(worst, e) : INFINITY;
    }
    mbs_data_free(d);
    mbs_stepper_free(st);
    mbs_sim_free(sim);
    return worst;
}

/* The largest step keeping the deviation within TOL: bisection on a log scale, to 0.5 %, between
 * H_LO (not tried: a run of 1e-6 s steps costs more than the rest; a result of H_LO means "at most")
 * and the horizon. */
static const double H_LO = 1e-6;
static double largest_step(drift_fn f, void *ctx, double T, int *runs)
{
    double lo = H_LO, hi = T;
    *runs = 1;
    if (f(ctx, hi, T, TOL) <= TOL) return hi;
    while (hi / lo > 1.005) {
        double mid = sqrt(lo * hi);
        ++*runs;
        if (f(ctx, mid, T, TOL) <= TOL) lo = mid;
        else hi = mid;
    }
    return lo;
}

int main(int argc, char **argv)
{
    tool_single_thread_blas(argv);
    tool_args args;
    int status = tool_parse_args(argc, argv, PROGRAM, MBS_SOURCE_DIR, NULL, &args);
    if (status) return status;
    bench_doc doc;
    bench_doc_open(&doc, args.data, "make bench-walker", !args.quick);
    double t_start = tool_now();
    printf("# walker_energy: Zapolsky and Drumwright 2015, experiment b (sec. IV-B), on the 3D passive walker's swing from its "
           "stable limit cycle (scenarios/passive_walker_cycle.ini)%s\n", args.quick ? " (--quick: the ODE schemes only)" : "");
    printf("# run %s; %s\n", doc.stamp, doc.machine);

    mbs_error err;
    mbs_scenario *sc = mbs_scenario_load(MBS_SOURCE_DIR "/scenarios/passive_walker_cycle.ini", NULL, 0, &err);
    if (!sc) die("scenario", &err);
    mbs_sim *sim = mbs_sim_new(sc, &err);
    if (!sim) die("sim", &err);
    const mbs_model *m = mbs_system_model(mbs_sim_system(sim));
    if (mbs_model_nq(m) != NQ || mbs_model_nv(m) != NV) { fprintf(stderr, "%s: not the walker\n", PROGRAM); return 1; }
    walker w = {m, mbs_data_new(m), mbs_frame_id(m, "left_foot"), mbs_frame_id(m, "right_foot"), 0.1236, 0};

    /* the start: the scenario's state, its velocity projected on the rolling constraint (J v = 0; the
     * rigid stepper's impulse leaves it at rest to about 1e-6 m/s) */
    double x0[NX], J[3 * NV], jv[3], y[NV], Mm[NV * NV];
    memcpy(x0, mbs_scenario_q0(sc), sizeof(double) * NQ);
    memcpy(x0 + NQ, mbs_scenario_v0(sc), sizeof(double) * NV);
    contact_jacobian(&w, x0, x0 + NQ, J, jv);
    double jv0 = sqrt(jv[0] * jv[0] + jv[1] * jv[1] + jv[2] * jv[2]);
    mbs_crba(m, w.d, x0, Mm);
    mbs_ltdl(m, w.d, Mm);
    constraint_solve(&w, J, jv, y);
    for (int k = 0; k < NV; k++) x0[NQ + k] -= y[k];
    double E0 = energy(&w, x0, x0 + NQ);

    /* the swing's end: the right rim back on the floor, on a fine RK4 run */
    const double hf = 1e-4;
    static double zs[30001];   /* the swing rim's lowest point at each step of hf */
    double x[NX], T = NAN, zmin = INFINITY, zprev = 0, drift_fine = 0, slip = 0;
    memcpy(x, x0, sizeof x);
    for (long k = 1; k <= (long)(3 / hf); k++) {
        double xp[NX];
        memcpy(xp, x, sizeof x);
        ode_step(&w, 4, x, hf);
        double off[3], z;
        rim_low(&w, x, w.swing, off, &z);
        drift_fine = fmax(drift_fine, fabs(energy(&w, x, x + NQ) - E0) / fabs(E0));
        contact_jacobian(&w, x, x + NQ, NULL, jv);
        slip = fmax(slip, sqrt(jv[0] * jv[0] + jv[1] * jv[1] + jv[2] * jv[2]));
        zs[k] = z;
        if (k * hf > 0.2 && z <= 0 && zprev > 0) { T = (k - 1) * hf + hf * zprev / (zprev - z); break; }
        zprev = z;
    }
    /* its clearance: the lowest point between lift-off and the last 0.05 before landing */
    for (long k = (long)(0.05 / hf); isfinite(T) && k * hf < T - 0.05; k++) zmin = fmin(zmin, zs[k]);
    if (!isfinite(T)) { fprintf(stderr, "%s: the swing foot does not come back to the floor in 3 s\n", PROGRAM); return 1; }
    printf("swing: the right foot lands after %.4f (the scenario's rigid run: 1.025-1.030 between steps); its rim's lowest point "
           "at least %.3g above the floor from 0.05 to 0.05 before it lands; energy %.6f at the start (|J v| %.1e before the projection), RK4 at %g: "
           "energy within %.1e, the stance contact point's speed below %.1e\n", T, zmin, E0, jv0, hf, drift_fine, slip);

    ode_ctx ce = {&w, 1, x0}, cr = {&w, 4, x0};
    int runs_e, runs_r;
    w.evals = 0;
    double he = largest_step(ode_drift, &ce, T, &runs_e);
    long evals_e = w.evals;
    w.evals = 0;
    double hr = largest_step(ode_drift, &cr, T, &runs_r);
    double gain = he > 0 ? hr / (4 * he) : NAN;
    printf("b. swing phase (%.3f), energy within 0.001 %%: largest step euler %.4g s, rk4 %.4g s; per function evaluation rk4 is "
           "%.3g x faster than euler; the paper (their 3D walker, MATLAB): euler 3.5e-3 s, rk4 0.28 s, 20 x "
           "(%d and %d runs, %ld field evaluations for euler's search)\n", T, he, hr, gain, runs_e, runs_r, evals_e);
    /* the deviation at the found steps and just above them (what the bisection bracketed) */
    double de = ode_drift(&ce, he, T, INFINITY), de2 = ode_drift(&ce, 1.01 * he, T, INFINITY);
    double dr = ode_drift(&cr, hr, T, INFINITY), dr2 = ode_drift(&cr, 1.01 * hr, T, INFINITY);
    printf("   deviation at the step / 1 %% above: euler %.3g / %.3g, rk4 %.3g / %.3g (of the energy)\n", de, de2, dr, dr2);

    double hre = NAN, hrn = NAN, d_old_1ms = NAN, d_new_1ms = NAN;
    int runs_old = 0, runs_new = 0;
    if (!args.quick) {
        rigid_ctx co = {sc, "old"}, cn = {sc, "new"};
        d_old_1ms = rigid_drift(&co, 1e-3, T, INFINITY);
        d_new_1ms = rigid_drift(&cn, 1e-3, T, INFINITY);
        hre = largest_step(rigid_drift, &co, T, &runs_old);
        hrn = largest_step(rigid_drift, &cn, T, &runs_new);
        printf("b. the engine's rigid stepper (impulses as the contact model) on the same swing: largest step explicit (dynamics_at=old) "
               "%.3g s, semi-implicit (new, eq. 2) %.3g s; the scenario's 1 ms: deviation %.2g (old), %.2g (new)\n", hre, hrn,
               d_old_1ms, d_new_1ms);
    }
    printf("# total %.0f s\n", tool_now() - t_start);
    printf("walker3d_swing_s: %.4f\n", T);
    printf("walker3d_max_energy_step_euler_s: %.4g\n", he);
    printf("walker3d_max_energy_step_rk4_s: %.4g\n", hr);
    printf("walker3d_rk4_gain_per_evaluation: %.4g\n", gain);
    if (!args.quick) {
        printf("walker3d_max_energy_step_rigid_explicit_s: %.4g\n", hre);
        printf("walker3d_max_energy_step_rigid_s: %.4g\n", hrn);
    }

    bench_doc_begin(&doc, "walker-paper");
    bench_doc_printf(&doc, "| largest step keeping the 3D walker's energy within 0.001 %% over a swing phase | paper (MATLAB, Coleman's "
                     "walker) | ours (`make bench-walker`) |\n|---|---|---|\n");
    bench_doc_printf(&doc, "| explicit Euler | 3.5e-3 s | %.3g s (`walker3d_max_energy_step_euler_s`): the paper's %.3g× |\n", he,
                     3.5e-3 / he);
    bench_doc_printf(&doc, "| RK4 | 0.28 s | %.3g s (`walker3d_max_energy_step_rk4_s`): the paper's %.3g× |\n", hr, 0.28 / hr);
    bench_doc_printf(&doc, "| RK4's gain per function evaluation | 20× | %.0f× (`walker3d_rk4_gain_per_evaluation`) |\n", gain);
    bench_doc_printf(&doc, "| the engine's `rigid` step (impulses as contacts), explicit / semi-implicit | — | %.3g s / %.3g s "
                     "(`walker3d_max_energy_step_rigid_explicit_s`, `walker3d_max_energy_step_rigid_s`); at the scenario's 1 ms the "
                     "energy moves by %.2g / %.2g of itself |\n", hre, hrn, d_old_1ms, d_new_1ms);
    bench_doc_printf(&doc, "\nOf the same run: the swing lasts %.4f (from the touch-down state of the scenario to the right foot's landing "
                     "on a fine RK4 run, h = %g, which keeps the energy within %.1e and the stance contact point's speed below %.1e); "
                     "the swing foot's rim stays at least %.3g above the floor from 0.05 after the start to 0.05 before its landing; energy %.6f at the start. "
                     "At the steps found the energy deviates by %.3g (Euler) and %.3g (RK4), 1 %% above them by %.3g and %.3g.\n",
                     T, hf, drift_fine, slip, zmin, E0, de, dr, de2, dr2);
    bench_doc_end(&doc, "walker-paper");
    bench_doc_output(&doc, "walker");
    bench_doc_close(&doc);
    mbs_data_free(w.d);
    mbs_sim_free(sim);
    mbs_scenario_free(sc);
    return 0;
}
