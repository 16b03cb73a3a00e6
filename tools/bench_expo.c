/* bench_expo.c — section 6 of Hammoud, Olivieri, Righetti, Carpentier, Del Prete, "Exponential
 * integration for efficient and accurate multi-body simulation with stiff viscoelastic contacts"
 * (Multibody System Dynamics 2022) on the Solo scenarios and Romeo's walk (issue 3, section 6):
 *   (a) figs. 2-3  local integration error (sec. 6.1) against real-time factor and step, for
 *                  euler, rk4, implicit_euler and expo (max_mat_mult 0, 2, 4, full), on all four;
 *   (b) table 2    largest stable step per stepper and scenario over the full duration;
 *   (c) table 3    time of one expo step on solo_trot and its breakdown, explicit Euler's step;
 *   (d) fig. 4     local error against contact stiffness and damping ratio on solo_trot;
 *   (e) beyond the paper: the closed form expo takes when B = βK (src/step/expo_modal.c) against the
 *                  Padé exponential, µs per step and touch-downs on Solo trotting and standing and Romeo
 *                  standing on 8 points. Parts (a) to (d) run the Padé exponential (method pade).
 * Writes the data under build/bench_expo and, when gnuplot is installed, the plots into
 * docs/images/expo_*.png (tools/plot_expo.gp); ends with `key: value` lines.
 *   bench_expo [--quick] [--only abcde] [--data DIR] [--images DIR]
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
 * API to replay), plus the step's internal LTDL row solve and the expm API for the breakdown. */
#include <errno.h>
#include <math.h>
#include <stdarg.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/stat.h>
#include <time.h>

#include "mbs.h"
/* a benchmark reads the system's contact state and sets its state directly, as the tests do */
#include "../src/contact/contact_internal.h"
#include "tool.h"
#include "../src/dynamics/dynamics_internal.h"   /* mbsi_ltdl_solve_rows: the expo step's own solve (breakdown) */
#include "../src/step/expm.h"       /* the matrix exponential the expo step calls (breakdown) */

#ifndef MBS_SOURCE_DIR
#define MBS_SOURCE_DIR "."
#endif

static void *xcalloc(size_t n, size_t sz)
{
    void *p = calloc(n ? n : 1, sz);
    if (!p) { fprintf(stderr, "bench_expo: out of memory\n"); exit(1); }
    return p;
}

/* The cost of one tool_now() pair, taken off intervals timed one call at a time. */
static double clock_overhead(void)
{
    double t[101];
    for (int i = 0; i < 101; i++) { double a = tool_now(); t[i] = tool_now() - a; }
    return tool_median(t, 101);
}

/* The key: value lines, printed together at the end. */
static char keys[32768];
static size_t keys_len;
static void key(const char *fmt, ...) __attribute__((format(printf, 1, 2)));
static void key(const char *fmt, ...)
{
    va_list ap;
    va_start(ap, fmt);
    int k = vsnprintf(keys + keys_len, sizeof keys - keys_len, fmt, ap);
    va_end(ap);
    if (k > 0 && keys_len + (size_t)k < sizeof keys) keys_len += (size_t)k;
}

/* A number for a key line or a table: "inf" for a diverged measurement. */
static const char *num(char *buf, size_t n, const char *fmt, double x)
{
    if (isfinite(x)) snprintf(buf, n, fmt, x);
    else snprintf(buf, n, "%s", isnan(x) ? "n/a" : "inf");
    return buf;
}

/* ---------------------------------------------------------------- scenarios and overrides */

/* the paper's four tests, in its order (parts a and b; c and d are on solo_trot only) */
enum { MAXOV = 16, NSCEN = 4 };
static const char *const SCEN[NSCEN] = {"solo_squat", "solo_jump", "solo_trot", "romeo_walk"};

/* --set style overrides, "section.key=value" each. */
typedef struct ovl {
    int n;
    char s[MAXOV][192];
    const char *p[MAXOV];
} ovl;

static void ov_add(ovl *o, const char *fmt, ...) __attribute__((format(printf, 2, 3)));
static void ov_add(ovl *o, const char *fmt, ...)
{
    if (o->n >= MAXOV) { fprintf(stderr, "bench_expo: too many overrides\n"); exit(1); }
    va_list ap;
    va_start(ap, fmt);
    vsnprintf(o->s[o->n], sizeof o->s[o->n], fmt, ap);
    va_end(ap);
    o->p[o->n] = o->s[o->n];
    o->n++;
}

static void ov_copy(ovl *dst, const ovl *src)
{
    dst->n = 0;
    for (int i = 0; src && i < src->n; i++) ov_add(dst, "%s", src->s[i]);
}

/* expo with max_mat_mult mmm through the Padé exponential (method pade): parts (a) to (d) are the
 * paper's method; the closed form that method auto takes with the full exponential is part (e). */
static void ov_pade(ovl *o, int mmm)
{
    ov_add(o, "expo.max_mat_mult=%d", mmm);
    ov_add(o, "expo.method=pade");
}

static mbs_scenario *load(const char *scen, const ovl *o)
{
    char path[1024];
    snprintf(path, sizeof path, "%s/scenarios/%s.ini", MBS_SOURCE_DIR, scen);
    mbs_error err;
    mbs_error_clear(&err);
    mbs_scenario *sc = mbs_scenario_load(path, o ? o->p : NULL, o ? o->n : 0, &err);
    if (!sc) { fprintf(stderr, "bench_expo: %s\n", err.msg); exit(1); }
    return sc;
}

/* ---------------------------------------------------------------- ground truth: record */

/* The state at the start of every controller period of a run and the torque of every period. */
typedef struct traj {
    int nq, nv, nc;
    long n;                  /* controller periods; states 0..n */
    double cdt;
    double *q, *v, *tau;     /* (n+1) nq, (n+1) nv, n nv */
    mbs_contact *ct;         /* (n+1) nc */
    int diverged;
    char reason[MBS_ERROR_MSG_LEN + 128];
} traj;

static void traj_free(traj *tr)
{
    free(tr->q); free(tr->v); free(tr->tau); free(tr->ct);
    memset(tr, 0, sizeof *tr);
}

static void save_state(traj *tr, long k, const mbs_system *s)
{
    memcpy(tr->q + (size_t)tr->nq * k, s->q, sizeof(double) * (size_t)tr->nq);
    memcpy(tr->v + (size_t)tr->nv * k, s->v, sizeof(double) * (size_t)tr->nv);
    memcpy(tr->ct + (size_t)tr->nc * k, s->contacts, sizeof(mbs_contact) * (size_t)tr->nc);
}

/* Puts the system in recorded state k with the torque of period k. */
static void restore(mbs_system *s, const traj *tr, long k)
{
    memcpy(s->q, tr->q + (size_t)tr->nq * k, sizeof(double) * (size_t)tr->nq);
    memcpy(s->v, tr->v + (size_t)tr->nv * k, sizeof(double) * (size_t)tr->nv);
    memcpy(s->contacts, tr->ct + (size_t)tr->nc * k, sizeof(mbs_contact) * (size_t)tr->nc);
    memcpy(s->tau, tr->tau + (size_t)tr->nv * k, sizeof(double) * (size_t)tr->nv);
    s->t = (double)k * tr->cdt;
}

typedef struct rec_ctx {
    traj *tr;
    const mbs_system *sys;
} rec_ctx;

/* mbs_sim_run calls this at the start of each period, before the controller: the state of
 * period k, and in sys->tau still the torque of period k − 1. */
static int rec_progress(void *user, double t, double duration)
{
    (void)duration;
    rec_ctx *c = user;
    traj *tr = c->tr;
    long k = lround(t / tr->cdt);
    if (k < 0 || k > tr->n) return 0;
    save_state(tr, k, c->sys);
    if (k > 0) memcpy(tr->tau + (size_t)tr->nv * (k - 1), c->sys->tau, sizeof(double) * (size_t)tr->nv);
    return 0;
}

/* Runs the scenario (with overrides) for `horizon` seconds, a whole number of controller
 * periods, recording every period. */
static void record(const char *scen, const ovl *o, const char *stepper, double dt, double horizon, traj *tr)
{
    ovl o2;
    ov_copy(&o2, o);
    ov_add(&o2, "stepper.name=%s", stepper);
    ov_add(&o2, "stepper.dt=%.17g", dt);
    ov_add(&o2, "run.duration=%.17g", horizon);
    mbs_scenario *sc = load(scen, &o2);
    mbs_error err;
    mbs_error_clear(&err);
    mbs_sim *sim = mbs_sim_new(sc, &err);
    if (!sim) { fprintf(stderr, "bench_expo: %s\n", err.msg); exit(1); }
    mbs_system *s = mbs_sim_system(sim);
    memset(tr, 0, sizeof *tr);
    tr->nq = s->nq;
    tr->nv = s->nv;
    tr->nc = s->ncontacts;
    tr->cdt = mbs_scenario_controller_dt(sc);
    tr->n = lround(horizon / tr->cdt);
    size_t n1 = (size_t)tr->n + 1;
    tr->q = xcalloc(n1 * (size_t)tr->nq, sizeof(double));
    tr->v = xcalloc(n1 * (size_t)tr->nv, sizeof(double));
    tr->tau = xcalloc(n1 * (size_t)tr->nv, sizeof(double));
    tr->ct = xcalloc(n1 * (size_t)(tr->nc ? tr->nc : 1), sizeof(mbs_contact));
    rec_ctx ctx = {tr, s};
    mbs_sim_run_options opt = {.csv = "", .progress = rec_progress, .user = &ctx, .html = ""};
    mbs_sim_summary sum;
    if (mbs_sim_run(sim, &opt, &sum, &err) != MBS_OK) { fprintf(stderr, "bench_expo: %s\n", err.msg); exit(1); }
    if (sum.diverged) {
        tr->diverged = 1;
        snprintf(tr->reason, sizeof tr->reason, "diverged at t = %.4g: %s", sum.diverged_t, sum.reason);
    } else {
        save_state(tr, tr->n, s);
        memcpy(tr->tau + (size_t)tr->nv * (tr->n - 1), s->tau, sizeof(double) * (size_t)tr->nv);
    }
    mbs_sim_free(sim);
    mbs_scenario_free(sc);
}

/* ---------------------------------------------------------------- replay: local errors, timing */

typedef struct replay_res {
    double err_mean, err_max;     /* over periods; inf when a period diverged */
    double step_s, rtf;           /* time in the stepper, simulated time / step_s */
    long ndiv;                    /* periods that ended non-finite or with a stepper failure */
    long nonconverged, steps;
} replay_res;

/* A system for the scenario and a stepper of the named scheme on it, with the scenario's options
 * of that scheme (its [section] and --set overrides). */
typedef struct rig {
    mbs_scenario *sc;
    mbs_sim *sim;
    mbs_system *sys;
    mbs_stepper *st;
} rig;

static void rig_new(rig *r, const char *scen, const ovl *o, const char *stepper)
{
    r->sc = load(scen, o);
    mbs_error err;
    mbs_error_clear(&err);
    r->sim = mbs_sim_new(r->sc, &err);
    if (!r->sim) { fprintf(stderr, "bench_expo: %s\n", err.msg); exit(1); }
    r->sys = mbs_sim_system(r->sim);
    mbs_option opts[MBS_SIM_MAX_OPTIONS];
    int n = mbs_scenario_options(r->sc, stepper, opts, MBS_SIM_MAX_OPTIONS);
    r->st = mbs_stepper_new(stepper, r->sys, opts, n, &err);
    if (!r->st) { fprintf(stderr, "bench_expo: %s\n", err.msg); exit(1); }
}

static void rig_free(rig *r)
{
    mbs_stepper_free(r->st);
    mbs_sim_free(r->sim);
    mbs_scenario_free(r->sc);
}

static int finite_state(const mbs_system *s)
{
    for (int k = 0; k < s->nq; k++) if (!isfinite(s->q[k])) return 0;
    for (int k = 0; k < s->nv; k++) if (!isfinite(s->v[k])) return 0;
    return 1;
}

/* Every period of gt from its recorded state with the stepper at dt; errors against gt's next
 * state. times (may be NULL): the time of every step, n · nsub of them. */
static void replay(const char *scen, const ovl *o, const char *stepper, double dt, const traj *gt, replay_res *res,
                   double *times)
{
    rig r;
    rig_new(&r, scen, o, stepper);
    mbs_system *s = r.sys;
    const mbs_model *m = s->model;
    long nsub = lround(gt->cdt / dt);
    double *dq = xcalloc((size_t)s->nv, sizeof(double));
    memset(res, 0, sizeof *res);
    double sum = 0;
    for (long k = 0; k < gt->n; k++) {
        restore(s, gt, k);
        int bad = 0;
        double t0 = tool_now();
        for (long i = 0; i < nsub && !bad; i++) {
            mbs_step_stats st;
            memset(&st, 0, sizeof st);
            double ts = times ? tool_now() : 0;
            bad = mbs_stepper_step(r.st, dt, &st) != MBS_OK;
            if (times) times[k * nsub + i] = tool_now() - ts;
            res->nonconverged += st.nonconverged != 0;
            res->steps++;
        }
        res->step_s += tool_now() - t0;
        double e = INFINITY;
        if (!bad && finite_state(s)) {
            const double *qg = gt->q + (size_t)gt->nq * (k + 1), *vg = gt->v + (size_t)gt->nv * (k + 1);
            mbs_difference(m, s->q, qg, dq);
            e = 0;
            for (int j = 0; j < s->nv; j++) {
                double a = fabs(dq[j]), b = fabs(s->v[j] - vg[j]);
                if (a > e) e = a;
                if (b > e) e = b;
            }
            if (!isfinite(e)) e = INFINITY;
        }
        if (!isfinite(e)) res->ndiv++;
        sum += e;
        if (e > res->err_max) res->err_max = e;
    }
    res->err_mean = sum / (double)gt->n;
    res->rtf = res->step_s > 0 ? (double)gt->n * gt->cdt / res->step_s : NAN;
    free(dq);
    rig_free(&r);
}

/* ---------------------------------------------------------------- (a) accuracy vs speed */

enum { NVAR = 7 };
typedef struct variant {
    const char *key, *label, *stepper;
    int mmm;        /* expo: max_mat_mult; -2 for the other schemes */
    int gt;         /* ground truth: 0 euler, 1 rk4, 2 implicit_euler, 3 expo (full) */
} variant;
static const variant VARS[NVAR] = {
    {"euler", "euler (explicit)", "euler", -2, 0},
    {"rk4", "rk4", "rk4", -2, 1},
    {"implicit_euler", "implicit euler", "implicit_euler", -2, 2},
    {"expo_mmm0", "expo mmm 0", "expo", 0, 3},
    {"expo_mmm2", "expo mmm 2", "expo", 2, 3},
    {"expo_mmm4", "expo mmm 4", "expo", 4, 3},
    {"expo_full", "expo full (mmm -1)", "expo", -1, 3},
};
static const char *const GT_STEPPER[4] = {"euler", "rk4", "implicit_euler", "expo"};

/* Largest i with cdt / 2^i >= 1/64 ms: the ground truth's step is cdt / 2^i (1/64 ms on trot,
 * 40/2048 and 10/512 ms on squat, jump and walk, since a step must divide the controller period). */
static int gt_level(double cdt) { return (int)floor(log2(cdt / (1e-3 / 64)) + 1e-9); }

/* the variants' step sizes: cdt / 2^i, i = 0 .. imax */
static int var_imax(const variant *v, int igt) { return v->gt == 0 ? igt - 1 : igt - 3; }

static void part_a(const char *data, int quick)
{
    printf("\n## (a) local integration error vs real-time factor (figs. 2, 3)\n");
    for (int c = 0; c < NSCEN; c++) {
        mbs_scenario *sc0 = load(SCEN[c], NULL);
        double cdt = mbs_scenario_controller_dt(sc0), dur = mbs_scenario_duration(sc0);
        mbs_scenario_free(sc0);
        /* the scenario's full duration: Romeo's 7 s costs about 75 s here, within the budget */
        double horizon = quick ? 1.0 : dur;
        horizon = cdt * (double)lround(horizon / cdt);
        int igt = gt_level(cdt);
        printf("# %s: controller period %g ms, horizon %g s (%ld periods); ground truth at %.5g ms "
               "(explicit Euler's at %.5g ms)\n", SCEN[c], cdt * 1e3, horizon, lround(horizon / cdt),
               cdt / (1 << igt) * 1e3, cdt / (1 << (igt + 2)) * 1e3);
        traj gt[4];
        for (int g = 0; g < 4; g++) {
            ovl o = {0};
            if (g == 3) ov_pade(&o, -1);
            double gdt = cdt / (double)(1 << (g == 0 ? igt + 2 : igt));
            double t0 = tool_now();
            record(SCEN[c], &o, GT_STEPPER[g], gdt, horizon, &gt[g]);
            printf("#   ground truth %-15s %8.2f s%s%s\n", GT_STEPPER[g], tool_now() - t0, gt[g].diverged ? "  " : "",
                   gt[g].diverged ? gt[g].reason : "");
        }
        char name[256];
        snprintf(name, sizeof name, "accuracy_%s.dat", SCEN[c]);
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
                    replay(SCEN[c], &o, v->stepper, dt, &gt[v->gt], &r, NULL);
                }
                if (i == 0) err_dtc = r.err_mean;
                printf("#   %-20s %10.5g %12.4g %12.4g %12.4g %9ld %ld/%ld\n", v->label, dt * 1e3, r.rtf, r.err_mean,
                       r.err_max, r.ndiv, r.nonconverged, r.steps);
                /* a diverged period makes the mean infinite: left out of the plot, as unstable */
                if (f) fprintf(f, "%.6g %.6g %.6g %.6g %ld\n", dt * 1e3, r.rtf, isfinite(r.err_mean) ? r.err_mean : NAN,
                               isfinite(r.err_max) ? r.err_max : NAN, r.ndiv);
            }
            char b[32];
            key("local_err_%s_%s_dtc: %s\n", v->key, SCEN[c], num(b, sizeof b, "%.3e", err_dtc));
            fflush(stdout);
        }
        if (f) fclose(f);
        for (int g = 0; g < 4; g++) traj_free(&gt[g]);
    }
}

/* ---------------------------------------------------------------- (b) stability */

typedef struct stab_stepper {
    const char *key, *stepper;
    int mmm;   /* expo: -2 the scenario as written, else max_mat_mult */
} stab_stepper;
static const stab_stepper STAB[] = {
    {"euler", "euler", -2},
    {"symplectic_euler", "symplectic_euler", -2},
    {"rk4", "rk4", -2},
    {"implicit_euler", "implicit_euler", -2},
    {"variational", "variational", -2},
    {"expo", "expo", -2},
    {"expo_mmm0", "expo", 0},
    {"expo_full", "expo", -1},
};
enum { NSTAB = sizeof STAB / sizeof *STAB };

/* One run of the scenario for its full duration; 0 when refused (a scheme's option). */
static int full_run(const char *scen, const stab_stepper *p, double dt, mbs_sim_summary *sum)
{
    ovl o = {0};
    ov_add(&o, "stepper.name=%s", p->stepper);
    ov_add(&o, "stepper.dt=%.17g", dt);
    if (p->mmm > -2) ov_pade(&o, p->mmm);
    mbs_scenario *sc = load(scen, &o);
    mbs_error err;
    mbs_error_clear(&err);
    mbs_sim *sim = mbs_sim_new(sc, &err);
    int ok = sim != NULL;
    if (sim) {
        mbs_sim_run_options opt = {.csv = "", .html = ""};
        if (mbs_sim_run(sim, &opt, sum, &err) != MBS_OK) { fprintf(stderr, "bench_expo: %s\n", err.msg); exit(1); }
        mbs_sim_free(sim);
    }
    mbs_scenario_free(sc);
    return ok;
}

/* The motion is the scenario's: base height range within 1 cm, travel within 5 cm + 10 % and
 * tilt within 5 degrees of the reference run (expo, full exponential, at ≈ 1/64 ms). */
static int task_ok(const mbs_sim_summary *s, const mbs_sim_summary *ref)
{
    return !s->diverged && fabs(s->base_z_min - ref->base_z_min) <= 0.01 && fabs(s->base_z_max - ref->base_z_max) <= 0.01 &&
           fabs(s->distance_m - ref->distance_m) <= 0.05 + 0.1 * ref->distance_m && s->max_tilt_deg <= ref->max_tilt_deg + 5;
}

static void part_b(void)
{
    printf("\n## (b) largest stable step over the full duration (table 2)\n"
           "#   grid: controller period / 2^j down to >= 1/64 ms (a step must divide the controller period), tried from\n"
           "#   the largest. stable: the sim's divergence check passes for the whole run (the paper: the state stays\n"
           "#   bounded); task: stable and the motion is the scenario's — base height range within 1 cm, travel within\n"
           "#   5 cm + 10 %%, tilt within 5 deg of a reference run (expo, full exponential, at the grid's smallest step).\n"
           "#   x@t: diverged at t; b: bounded but the task failed (travel m, lowest base z m)\n");
    for (int c = 0; c < NSCEN; c++) {
        mbs_scenario *sc0 = load(SCEN[c], NULL);
        double cdt = mbs_scenario_controller_dt(sc0);
        mbs_scenario_free(sc0);
        int jmax = gt_level(cdt);
        mbs_sim_summary ref;
        static const stab_stepper REF = {"expo_full", "expo", -1};
        full_run(SCEN[c], &REF, cdt / (double)(1 << jmax), &ref);
        printf("# %s: reference expo full at %.4g ms: %s, travel %.3f m, base z %.4f..%.4f m, tilt %.2f deg\n", SCEN[c],
               cdt / (double)(1 << jmax) * 1e3, ref.diverged ? "DIVERGED" : "stable", ref.distance_m, ref.base_z_min,
               ref.base_z_max, ref.max_tilt_deg);
        printf("#   %-18s %10s %10s  %s\n", "stepper", "stable_ms", "task_ms", "runs");
        for (int si = 0; si < NSTAB; si++) {
            const stab_stepper *p = &STAB[si];
            double best = 0, task = 0;
            char trail[1024] = "";
            size_t tl = 0;
            for (int j = 0; j <= jmax && task == 0; j++) {
                double dt = cdt / (double)(1 << j);
                mbs_sim_summary sum;
                memset(&sum, 0, sizeof sum);
                int n;
                if (!full_run(SCEN[c], p, dt, &sum)) n = snprintf(trail + tl, sizeof trail - tl, " %.4g:refused", dt * 1e3);
                else if (sum.diverged) n = snprintf(trail + tl, sizeof trail - tl, " %.4g:x@%.3gs", dt * 1e3, sum.diverged_t);
                else if (!task_ok(&sum, &ref))
                    n = snprintf(trail + tl, sizeof trail - tl, " %.4g:b(%.2f,%.3f)", dt * 1e3, sum.distance_m, sum.base_z_min);
                else n = snprintf(trail + tl, sizeof trail - tl, " %.4g:ok", dt * 1e3);
                if (n > 0) tl += (size_t)n;
                if (tl >= sizeof trail) tl = sizeof trail - 1;
                if (!sum.diverged && sum.steps > 0) {
                    if (best == 0) best = dt;
                    if (task_ok(&sum, &ref)) task = dt;
                }
            }
            printf("#   %-18s %10.4g %10.4g  %s\n", p->key, best * 1e3, task * 1e3, trail);
            key("max_stable_dt_%s_%s: %.4g\n", p->key, SCEN[c], best * 1e3);
            key("max_task_dt_%s_%s: %.4g\n", p->key, SCEN[c], task * 1e3);
            fflush(stdout);
        }
    }
}

/* ---------------------------------------------------------------- (c) time per step, breakdown */

/* out = k_n n nᵀ + k_t (1 − n nᵀ), as expo.c */
static void world_gain(const double n[3], double kn, double kt, double out[9])
{
    for (int j = 0; j < 3; j++)
        for (int i = 0; i < 3; i++) out[i + 3 * j] = (kn - kt) * n[i] * n[j] + (i == j ? kt : 0);
}

enum { OP_CONTACTS, OP_KIN, OP_JAC, OP_PREP, OP_EXPM, OP_EXPM_FULL, OP_STEP, OP_STEP_FULL, NOP };

/* One expo step's first pass rebuilt from the outside with a timer per stage, over the recorded
 * states of gt that have a contact; per state the minimum over reps (the machine is shared),
 * then the mean over states (additive, as the paper's table 3) and the median. */
static void breakdown(const traj *gt, int reps, double mean[NOP], double med[NOP], long *nstates)
{
    rig r, rf;
    ovl o0 = {0}, of = {0};
    ov_pade(&o0, 0);
    rig_new(&r, "solo_trot", &o0, "expo");
    ov_pade(&of, -1);
    rig_new(&rf, "solo_trot", &of, "expo");
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
            mbs_forward_kinematics(m, d, q, v, zero);
            for (int a = 0; a < na; a++) {
                const mbs_contact *c = &s->contacts[act[a]];
                double R[9], pf[3], dp[3], acc[6], *o3 = off + 3 * a;
                mbs_frame_placement(m, d, c->frame, R, pf);
                for (int j = 0; j < 3; j++) dp[j] = c->p[j] - pf[j];
                for (int j = 0; j < 3; j++) o3[j] = R[3 * j] * dp[0] + R[3 * j + 1] * dp[1] + R[3 * j + 2] * dp[2];
                mbs_frame_classical_acceleration(m, d, c->frame, o3, MBS_LOCAL_WORLD_ALIGNED, acc);
                memcpy(pdd + 3 * a, acc, 3 * sizeof(double));
            }
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
                    world_gain(c->normal, c->material.k_normal, c->material.k_tangent, Kw + 9 * a);
                    world_gain(c->normal, c->material.b_normal, c->material.b_tangent, Bw + 9 * a);
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

static void part_c(int quick)
{
    printf("\n## (c) time per step on solo_trot (table 3)\n");
    int reps = quick ? 3 : 7;
    mbs_scenario *sc0 = load("solo_trot", NULL);
    double cdt = mbs_scenario_controller_dt(sc0), dur = mbs_scenario_duration(sc0);
    mbs_scenario_free(sc0);
    double horizon = quick ? 1.0 : dur;
    double em, ea, er, fm, fa, fr, um, ua, ur;
    /* max_mat_mult 0, solo_trot.ini's setting when this part was written (now the closed form) */
    ovl o0 = {0}, of = {0};
    ov_pade(&o0, 0);
    step_time("expo", &o0, cdt, horizon, reps, &em, &ea, &er);
    ov_pade(&of, -1);
    step_time("expo", &of, cdt, horizon, reps, &fm, &fa, &fr);
    /* explicit Euler at 2/16 ms, the step of the paper's table 2 */
    double edt = cdt / 16;
    step_time("euler", NULL, edt, horizon, reps, &um, &ua, &ur);
    printf("#   %-34s %10s %10s %12s\n", "stepper on solo_trot (whole run)", "median_us", "mean_us", "rtf(steps)");
    printf("#   %-34s %10.3f %10.3f %12.1f\n", "expo, as written (mmm 0), 2 ms", em, ea, er);
    printf("#   %-34s %10.3f %10.3f %12.1f\n", "expo, full exponential, 2 ms", fm, fa, fr);
    printf("#   %-34s %10.3f %10.3f %12.1f\n", "euler, 0.125 ms", um, ua, ur);
    /* the whole loop as ./sim runs it: controller, checks and steps */
    double rt[5];
    int nrt = quick ? 1 : 5;
    for (int i = 0; i < nrt; i++) {
        mbs_scenario *sc = load("solo_trot", &o0);
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
    printf("#   breakdown over the %ld recorded states with a contact (us; min of repetitions per state):\n", ns);
    printf("#   %-52s %8s %8s %7s\n", "operation", "mean", "median", "share");
    const char *desc[NOP] = {"contact forces and detection (mbs_contact_forces)",
                             "kinematics, contact points' Jdot v",
                             "joint and contact Jacobians",
                             "CRBA + LTDL + h + M^-1[J^T, tau-h] + Upsilon",
                             "assembly + expm (max_mat_mult 0)",
                             "assembly + expm (full)",
                             "whole step, as written (mmm 0)",
                             "whole step, full exponential"};
    for (int o = 0; o < NOP; o++)
        printf("#   %-52s %8.3f %8.3f %6.0f%%\n", desc[o], mean[o], med[o],
               100 * mean[o] / (o == OP_EXPM_FULL || o == OP_STEP_FULL ? mean[OP_STEP_FULL] : mean[OP_STEP]));
    double other = mean[OP_STEP] - parts - mean[OP_EXPM], other_full = mean[OP_STEP_FULL] - parts - mean[OP_EXPM_FULL];
    printf("#   %-52s %8.3f %8s %6.0f%%\n", "rest of the step (mmm 0): cone, updates, 2nd pass", other, "",
           100 * other / mean[OP_STEP]);
    printf("#   %-52s %8.3f %8s %6.0f%%\n", "rest of the step (full)", other_full, "", 100 * other_full / mean[OP_STEP_FULL]);

    key("expo_us_per_step_solo_trot: %.3f\n", em);
    key("expo_full_us_per_step_solo_trot: %.3f\n", fm);
    key("euler_us_per_step_solo_trot: %.3f\n", um);
    key("expo_mean_us_per_step_solo_trot: %.3f\n", ea);
    key("expo_full_mean_us_per_step_solo_trot: %.3f\n", fa);
    key("euler_mean_us_per_step_solo_trot: %.3f\n", ua);
    key("expo_realtime_factor_solo_trot_2ms_steps: %.1f\n", er);
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
}

/* ---------------------------------------------------------------- (d) stiffness and damping */

static void part_d(const char *data, int quick)
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
    enum { NST = 4 };
    static const struct { const char *label, *stepper; double dt_ms; int mmm; } ST[NST] = {
        {"euler 0.5 ms", "euler", 0.5, -2}, {"expo mmm 0, 2 ms", "expo", 2, 0},
        {"implicit euler 2 ms", "implicit_euler", 2, -2}, {"expo full, 2 ms", "expo", 2, -1}};
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
    static const char *const SK[NST] = {"euler", "expo", "implicit_euler", "expo_full"};
    for (int j = 0; j < NST; j++) {
        char b1[32], b2[32], b3[32];
        key("local_err_vs_k_%s_solo_trot_k1e3: %s\n", SK[j], num(b1, sizeof b1, "%.3e", err[0][j]));
        key("local_err_vs_k_%s_solo_trot_k1e5: %s\n", SK[j], num(b2, sizeof b2, "%.3e", err[4][j]));
        key("local_err_vs_k_%s_solo_trot_k1e8: %s\n", SK[j], num(b3, sizeof b3, "%.3e", err[10][j]));
    }
}

/* ---------------------------------------------------------------- (e) the closed form */

/* Touch-downs per contact point: free at one controller period, touching at the next. */
typedef struct td_count {
    mbs_sim *sim;
    int n, started, touching[16];
    long td[16];
} td_count;

static void td_update(td_count *c)
{
    const mbs_system *s = mbs_sim_system(c->sim);
    for (int i = 0; i < c->n; i++) {
        mbs_contact_info info;
        if (mbs_system_contact(s, i, &info) != MBS_OK) continue;
        if (c->started && info.active && !c->touching[i]) c->td[i]++;
        c->touching[i] = info.active;
    }
    c->started = 1;
}

static void td_period(void *user, double t, const double *q, const double *v, double *tau)
{
    (void)t, (void)q, (void)v, (void)tau;
    td_update(user);
}

/* expo's closed form on proportional damping (method auto with the full exponential, the default
 * of every scenario) against the Padé exponential it replaces, full and max_mat_mult 0, as ./sim
 * runs them: µs per step (stepper only, the summary's us_per_step; median and range over runs),
 * touch-downs per contact, largest tilt and force. Solo trotting (scenarios/solo_trot.ini as
 * shipped), Solo standing on 4 feet under PD, Romeo standing on its 8 sole corners under PD at 2 ms. */
static void part_e(int quick)
{
    printf("\n## (e) the exponential's closed form on proportional damping (B = beta K)\n");
    enum { NCASE = 8 };
    static const struct {
        const char *key, *label, *scen, *set[5];
    } C[NCASE] = {
        {"trot_modal", "solo_trot, closed form (default)", "solo_trot", {NULL}},
        {"trot_pade", "solo_trot, Pade full", "solo_trot", {"expo.method=pade"}},
        {"trot_mmm0", "solo_trot, Pade mmm 0", "solo_trot", {"expo.max_mat_mult=0"}},
        {"stand_modal", "solo standing (pd), closed form", "solo_trot", {"controller.type=pd"}},
        {"stand_pade", "solo standing (pd), Pade full", "solo_trot", {"controller.type=pd", "expo.method=pade"}},
        {"stand_mmm0", "solo standing (pd), Pade mmm 0", "solo_trot", {"controller.type=pd", "expo.max_mat_mult=0"}},
        {"romeo_modal", "romeo standing, 8 pts, closed form", "romeo_walk",
         {"controller.type=pd", "stepper.dt=0.002", "controller.dt=0.002"}},
        {"romeo_pade", "romeo standing, 8 pts, Pade full", "romeo_walk",
         {"controller.type=pd", "stepper.dt=0.002", "controller.dt=0.002", "expo.method=pade"}},
    };
    int reps = quick ? 2 : 7;
    printf("#   %-36s %9s %9s %9s  %-19s %8s %9s %7s %s\n", "case (./sim, 5 s)", "us_median", "us_min", "us_max",
           "touchdowns/point", "tilt_deg", "max_force", "dist_m", "status");
    for (int c = 0; c < NCASE; c++) {
        double us[16];
        mbs_sim_summary sum = {0};
        td_count td = {0};
        for (int r = 0; r < reps; r++) {
            ovl o = {0};
            for (int k = 0; k < 5 && C[c].set[k]; k++) ov_add(&o, "%s", C[c].set[k]);
            mbs_scenario *sc = load(C[c].scen, &o);
            mbs_error err;
            mbs_error_clear(&err);
            mbs_sim *sim = mbs_sim_new(sc, &err);
            if (!sim) { fprintf(stderr, "bench_expo: %s\n", err.msg); exit(1); }
            td = (td_count){sim, mbs_system_ncontacts(mbs_sim_system(sim)), 0, {0}, {0}};
            if (td.n > 16) td.n = 16;
            mbs_sim_set_control(sim, td_period, &td);
            mbs_sim_run_options opt = {.csv = "", .html = ""};
            mbs_sim_run(sim, &opt, &sum, &err);
            td_update(&td);
            us[r] = sum.us_per_step;
            mbs_sim_free(sim);
            mbs_scenario_free(sc);
        }
        double lo = us[0], hi = us[0];
        for (int r = 1; r < reps; r++) { lo = fmin(lo, us[r]); hi = fmax(hi, us[r]); }
        double med = tool_median(us, reps);
        char tds[128] = "";
        long tdmax = 0;
        for (int i = 0; i < td.n; i++) {
            snprintf(tds + strlen(tds), sizeof tds - strlen(tds), "%s%ld", i ? "/" : "", td.td[i]);
            tdmax = td.td[i] > tdmax ? td.td[i] : tdmax;
        }
        printf("#   %-36s %9.2f %9.2f %9.2f  %-19s %8.3f %9.1f %7.3f %s\n", C[c].label, med, lo, hi, tds, sum.max_tilt_deg,
               sum.max_contact_force, sum.distance_m, sum.diverged ? "diverged" : sum.left_box ? "left_box" : "stable");
        key("expo_%s_us_per_step: %.3f\n", C[c].key, med);
        key("expo_%s_touchdowns_max_per_point: %ld\n", C[c].key, tdmax);
    }
}

/* ---------------------------------------------------------------- main */

int main(int argc, char **argv)
{
    tool_single_thread_blas(argv);
    tool_args args;
    int status = tool_parse_args(argc, argv, "bench_expo", MBS_SOURCE_DIR, "abcde", &args);
    if (status) return status;
    int quick = args.quick;
    const char *only = args.only, *data = args.data, *images = args.images;
    double t0 = tool_now();
    printf("# bench_expo: Hammoud et al. 2022, section 6, on scenarios/solo_{squat,jump,trot}.ini and romeo_walk.ini "
           "(parts a, b; c, d on solo_trot)%s\n",
           quick ? " (--quick: short horizons, fewer repetitions)" : "");
    if (strchr(only, 'a')) part_a(data, quick);
    if (strchr(only, 'b')) part_b();
    if (strchr(only, 'c')) part_c(quick);
    if (strchr(only, 'd')) part_d(data, quick);
    if (strchr(only, 'e')) part_e(quick);

    if (strchr(only, 'a') || strchr(only, 'd')) {
        char parts[64];
        snprintf(parts, sizeof parts, "parts='%s'", only);
        tool_plot(MBS_SOURCE_DIR, "plot_expo.gp", data, images, parts,
                  "expo_{error_vs_rtf,error_vs_dt,stiffness_damping}.png");
    }
    printf("# total %.0f s\n\n", tool_now() - t0);
    fputs(keys, stdout);
    return 0;
}
