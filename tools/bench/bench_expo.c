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
 * docs/images/expo_*.png (tools/bench/plot_expo.gp); ends with `key: value` lines. A full run (not --quick)
 * also writes the tables of docs/benchmarks.md into <data>/tables.md (tools/bench/bench_doc.h), which
 * tools/bench/bench_doc.py puts into the document (make bench-expo does both).
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
#include "../../src/contact/contact_internal.h"
#include "bench_tool.h"
#include "bench_doc.h"
#include "../../src/dynamics/dynamics_internal.h"   /* mbsi_ltdl_solve_rows: the expo step's own solve (breakdown) */
#include "../../src/step/expm.h"       /* the matrix exponential the expo step calls (breakdown) */
/* after the library headers: lapacke.h brings complex.h, whose macro I is no name here (part k's LU) */
#include <lapacke.h>
#undef I

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

/* The tables of docs/benchmarks.md this run writes (a full run only; tools/bench/bench_doc.py puts them
 * into the document). */
static bench_doc doc;

/* The key: value lines, printed together at the end and written into the keys block. */
static bench_keys keys;
#define key(...) bench_key(&keys, __VA_ARGS__)

/* A number for a key line or a table: "inf" for a diverged measurement. */
static const char *num(char *buf, size_t n, const char *fmt, double x)
{
    if (isfinite(x)) snprintf(buf, n, fmt, x);
    else snprintf(buf, n, "%s", isnan(x) ? "n/a" : "inf");
    return buf;
}

/* Two significant digits for a table of docs/benchmarks.md: 0.62, 0.011, 102, 16460, 9.3e-6; "inf" for a
 * diverged measurement, "—" for one not made. */
static const char *fmt2(char *buf, size_t n, double x)
{
    if (isnan(x)) { snprintf(buf, n, "—"); return buf; }
    if (!isfinite(x)) { snprintf(buf, n, "inf"); return buf; }
    if (x == 0) { snprintf(buf, n, "0"); return buf; }
    int e = (int)floor(log10(fabs(x)));
    double m = x / pow(10, e);
    if (fabs(m) >= 9.95) { m /= 10; e++; }
    if (e >= -2 && e <= 4) snprintf(buf, n, "%.*f", e >= 1 ? 0 : 1 - e, x);
    else snprintf(buf, n, "%.1fe%d", m, e);
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
    char path[2048];
    /* a scenario's name, or the path of a scenario file this program wrote */
    if (strchr(scen, '/')) snprintf(path, sizeof path, "%s", scen);
    else snprintf(path, sizeof path, "%s/scenarios/%s.ini", MBS_SOURCE_DIR, scen);
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

/* A system's state (q, v, contacts), kept to take one step again and again from the same start. */
typedef struct start_state {
    double *q, *v;
    mbs_contact *c;
} start_state;

static void start_new(start_state *x, const mbs_system *s)
{
    x->q = xcalloc((size_t)s->nq, sizeof(double));
    x->v = xcalloc((size_t)s->nv, sizeof(double));
    x->c = xcalloc((size_t)(s->ncontacts ? s->ncontacts : 1), sizeof(mbs_contact));
}
static void start_keep(start_state *x, const mbs_system *s)
{
    memcpy(x->q, s->q, sizeof(double) * (size_t)s->nq);
    memcpy(x->v, s->v, sizeof(double) * (size_t)s->nv);
    memcpy(x->c, s->contacts, sizeof(mbs_contact) * (size_t)s->ncontacts);
}
static void start_put(const start_state *x, mbs_system *s)
{
    memcpy(s->q, x->q, sizeof(double) * (size_t)s->nq);
    memcpy(s->v, x->v, sizeof(double) * (size_t)s->nv);
    memcpy(s->contacts, x->c, sizeof(mbs_contact) * (size_t)s->ncontacts);
}
static void start_free(start_state *x)
{
    free(x->q); free(x->v); free(x->c);
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

enum { NVAR = 8 };
typedef struct variant {
    const char *key, *label, *stepper;
    int mmm;        /* expo: max_mat_mult; -2 for the other schemes */
    int gt;         /* ground truth: 0 euler, 1 rk4, 2 implicit_euler, 3 expo (full) */
    int at_start;   /* expo: linearise = start, the paper's scheme (the default is midpoint) */
} variant;
static const variant VARS[NVAR] = {
    {"euler", "euler (explicit)", "euler", -2, 0, 0},
    {"rk4", "rk4", "rk4", -2, 1, 0},
    {"implicit_euler", "implicit euler", "implicit_euler", -2, 2, 0},
    {"expo_mmm0", "expo mmm 0", "expo", 0, 3, 0},
    {"expo_mmm2", "expo mmm 2", "expo", 2, 3, 0},
    {"expo_mmm4", "expo mmm 4", "expo", 4, 3, 0},
    {"expo_full", "expo full (mmm -1)", "expo", -1, 3, 0},
    {"expo_full_start", "expo full, at start", "expo", -1, 3, 1},
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
    /* every point of the grid, for the table of docs/benchmarks.md: level i is the step cdt / 2^i */
    enum { NLEV = 16 };
    static double aerr[NSCEN][NVAR][NLEV], artf[NSCEN][NVAR][NLEV];
    int igts[NSCEN];
    double cdts[NSCEN];
    for (int c = 0; c < NSCEN; c++)
        for (int vi = 0; vi < NVAR; vi++)
            for (int i = 0; i < NLEV; i++) aerr[c][vi][i] = artf[c][vi][i] = NAN;
    for (int c = 0; c < NSCEN; c++) {
        mbs_scenario *sc0 = load(SCEN[c], NULL);
        double cdt = mbs_scenario_controller_dt(sc0), dur = mbs_scenario_duration(sc0);
        mbs_scenario_free(sc0);
        /* the scenario's full duration: Romeo's 7 s costs about 75 s here, within the budget */
        double horizon = quick ? 1.0 : dur;
        horizon = cdt * (double)lround(horizon / cdt);
        int igt = gt_level(cdt);
        igts[c] = igt;
        cdts[c] = cdt;
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
                    if (v->at_start) ov_add(&o, "expo.linearise=start");
                    replay(SCEN[c], &o, v->stepper, dt, &gt[v->gt], &r, NULL);
                }
                if (i == 0) err_dtc = r.err_mean;
                if (i < NLEV) { aerr[c][vi][i] = r.err_mean; artf[c][vi][i] = r.rtf; }
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

    /* the table of docs/benchmarks.md: the error at the grid's smallest common step, at the step
     * nearest 1 ms and at the controller period, and the real-time factor there */
    static const struct { int vi; const char *label; } ROWS[] = {
        {0, "euler"}, {1, "rk4"}, {2, "implicit_euler"}, {3, "expo, Padé mmm 0"}, {6, "expo, Padé full"},
        {7, "expo, Padé full, linearised at the step's start (the paper's)"}};
    static const char *const SHORT[NSCEN] = {"squat", "jump", "trot", "walk"};
    bench_doc_begin(&doc, "expo-accuracy");
    bench_doc_printf(&doc, "| scenario | stepper | δt = 0.156 ms (trot 0.125) | δt = 1.25 ms (trot 1) | δt = δt_c | "
                           "real-time factor at δt_c |\n|---|---|---|---|---|---|\n");
    for (int c = 0; c < NSCEN; c++) {
        int ilo = igts[c] - 3, i1 = (int)lround(log2(cdts[c] / 1e-3));
        for (size_t k = 0; k < sizeof ROWS / sizeof *ROWS; k++) {
            int vi = ROWS[k].vi;
            char e0[32], e1[32], e2[32], r2[32], ee[32], small[96] = "";
            if (VARS[vi].gt == 0 && igts[c] - 1 < NLEV)
                snprintf(small, sizeof small, " (%s at %.2g ms)", fmt2(ee, sizeof ee, aerr[c][vi][igts[c] - 1]),
                         cdts[c] / (double)(1 << (igts[c] - 1)) * 1e3);
            bench_doc_printf(&doc, "| %s | %s | %s%s | %s | %s | %s |\n", SHORT[c], ROWS[k].label,
                             fmt2(e0, sizeof e0, aerr[c][vi][ilo]), small, fmt2(e1, sizeof e1, aerr[c][vi][i1]),
                             fmt2(e2, sizeof e2, aerr[c][vi][0]), fmt2(r2, sizeof r2, artf[c][vi][0]));
        }
    }
    bench_doc_end(&doc, "expo-accuracy");
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
    double bstab[NSCEN][NSTAB], btask[NSCEN][NSTAB];
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
            bstab[c][si] = best * 1e3;
            btask[c][si] = task * 1e3;
            printf("#   %-18s %10.4g %10.4g  %s\n", p->key, best * 1e3, task * 1e3, trail);
            key("max_stable_dt_%s_%s: %.4g\n", p->key, SCEN[c], best * 1e3);
            key("max_task_dt_%s_%s: %.4g\n", p->key, SCEN[c], task * 1e3);
            fflush(stdout);
        }
    }

    /* table 2 of docs/benchmarks.md: ours (stable / task) beside the paper's table 2, whose figures
     * are recorded here (the paper gives expo, explicit and implicit Euler only) */
    static const int COLS[] = {5, 6, 7, 0, 1, 2, 3, 4};   /* expo as written, Padé mmm 0, Padé full, then the rest */
    static const char *const PAPER[NSCEN][NSTAB] = {
        /* euler, symplectic_euler, rk4, implicit_euler, variational, expo, expo_mmm0, expo_full */
        {"40/512 ≈ 0.08", "—", "—", "20", "—", "40", "—", "—"},
        {"10/64 ≈ 0.16", "—", "—", "5", "—", "10", "—", "—"},
        {"2/16 = 0.125", "—", "—", "2", "—", "2", "—", "—"},
        {"40/32 = 1.25", "—", "—", "40/4 = 10", "—", "40/8 = 5", "—", "—"}};
    static const char *const SHORT[NSCEN] = {"squat", "jump", "trot", "romeo_walk"};
    bench_doc_begin(&doc, "expo-stability");
    bench_doc_printf(&doc, "| δt in ms | expo (scenario as written: closed form) | expo Padé mmm 0 | expo Padé full | euler | "
                           "symplectic_euler | rk4 | implicit_euler | variational |\n|---|---|---|---|---|---|---|---|---|\n");
    for (int c = 0; c < NSCEN; c++) {
        bench_doc_printf(&doc, "| %s, ours (stable / task) |", SHORT[c]);
        for (size_t k = 0; k < sizeof COLS / sizeof *COLS; k++)
            bench_doc_printf(&doc, k == 0 ? " **%.4g** / %.4g |" : " %.4g / %.4g |", bstab[c][COLS[k]], btask[c][COLS[k]]);
        bench_doc_printf(&doc, "\n| %s, paper |", SHORT[c]);
        for (size_t k = 0; k < sizeof COLS / sizeof *COLS; k++) bench_doc_printf(&doc, " %s |", PAPER[c][COLS[k]]);
        bench_doc_printf(&doc, "\n");
    }
    bench_doc_end(&doc, "expo-stability");
}

/* The kinematics of an expo step with q̈ = 0 (as src/step/expo.c's contact_jacobians): each
 * active touching point's offset in its frame into off (3 per point) and its classical
 * acceleration J̇v into pdd (3 per point). */
static void touching_points_drift(const mbs_model *m, mbs_data *d, const mbs_system *s, const double *q,
                                  const double *v, const double *zero, const int *act, int na, double *off, double *pdd)
{
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
}

/* ---------------------------------------------------------------- (c) time per step, breakdown */

/* out = k_n n nᵀ + k_t (1 − n nᵀ), as expo.c */
static void world_gain(const double n[3], double kn, double kt, double out[9])
{
    for (int j = 0; j < 3; j++)
        for (int i = 0; i < 3; i++) out[i + 3 * j] = (kn - kt) * n[i] * n[j] + (i == j ? kt : 0);
}

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

static void part_c(int quick)
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
    bench_doc_begin(&doc, "expo-stiffness");
    bench_doc_printf(&doc, "| K (N/m) | damping ratio | B (N s/m) | euler 0.5 ms | expo Padé mmm 0, 2 ms | implicit_euler 2 ms | "
                           "expo Padé full, 2 ms |\n|---|---|---|---|---|---|---|\n");
    for (int i = 0; i < NK + ND; i++) {
        if (!isfinite(err[i][1]) && !isfinite(err[i][0]) && isnan(err[i][2])) continue;   /* not run (--quick) */
        char kb[32], bb[32];
        bench_doc_printf(&doc, "| %s | %.1f | %s |", fmt2(kb, sizeof kb, Ks[i]), Ds[i], fmt2(bb, sizeof bb, Ds[i] * 2 * sqrt(Ks[i])));
        for (int j = 0; j < NST; j++) {
            char e[32];
            bench_doc_printf(&doc, " %s |", fmt2(e, sizeof e, err[i][j]));
        }
        bench_doc_printf(&doc, "\n");
    }
    bench_doc_end(&doc, "expo-stiffness");
    static const char *const SK[NST] = {"euler", "expo", "implicit_euler", "expo_full"};
    for (int j = 0; j < NST; j++) {
        char b1[32], b2[32], b3[32];
        key("local_err_vs_k_%s_solo_trot_k1e3: %s\n", SK[j], num(b1, sizeof b1, "%.3e", err[0][j]));
        key("local_err_vs_k_%s_solo_trot_k1e5: %s\n", SK[j], num(b2, sizeof b2, "%.3e", err[4][j]));
        key("local_err_vs_k_%s_solo_trot_k1e8: %s\n", SK[j], num(b3, sizeof b3, "%.3e", err[10][j]));
    }
}

/* ---------------------------------------------------------------- (e, f, g) runs as ./sim does them */

enum { MAXPTS = 16 };

/* Touch-downs per contact point (free at one controller period, touching at the next) and the
 * number of active points, sampled at every controller period by a control callback. */
typedef struct td_count {
    mbs_sim *sim;
    int n, started, touching[MAXPTS];
    long td[MAXPTS];
    long samples, active_sum;
    int active_min, active_max;
} td_count;

static void td_update(td_count *c)
{
    const mbs_system *s = mbs_sim_system(c->sim);
    int na = 0;
    for (int i = 0; i < c->n; i++) {
        mbs_contact_info info;
        if (mbs_system_contact(s, i, &info) != MBS_OK) continue;
        if (c->started && info.active && !c->touching[i]) c->td[i]++;
        c->touching[i] = info.active;
        na += info.active != 0;
    }
    if (c->started) {
        c->samples++;
        c->active_sum += na;
        if (na < c->active_min) c->active_min = na;
        if (na > c->active_max) c->active_max = na;
    }
    c->started = 1;
}

static void td_period(void *user, double t, const double *q, const double *v, double *tau)
{
    (void)t, (void)q, (void)v, (void)tau;
    td_update(user);
}

/* One case run reps times as ./sim runs it: the summary's us_per_step (stepper time only), median
 * and range over the runs; the summary and the counts of the last run. */
typedef struct case_res {
    double us_med, us_min, us_max;
    mbs_sim_summary sum;
    td_count td;
} case_res;

static void run_case(const char *scen, const ovl *o, int reps, case_res *res)
{
    double us[16];
    if (reps > 16) reps = 16;
    memset(res, 0, sizeof *res);
    for (int r = 0; r < reps; r++) {
        mbs_scenario *sc = load(scen, o);
        mbs_error err;
        mbs_error_clear(&err);
        mbs_sim *sim = mbs_sim_new(sc, &err);
        if (!sim) { fprintf(stderr, "bench_expo: %s\n", err.msg); exit(1); }
        td_count *td = &res->td;
        memset(td, 0, sizeof *td);
        td->sim = sim;
        td->n = mbs_system_ncontacts(mbs_sim_system(sim));
        if (td->n > MAXPTS) td->n = MAXPTS;
        td->active_min = MAXPTS + 1;
        mbs_sim_set_control(sim, td_period, td);
        mbs_sim_run_options opt = {.csv = "", .html = ""};
        mbs_sim_run(sim, &opt, &res->sum, &err);
        td_update(td);   /* the last period's steps */
        us[r] = res->sum.us_per_step;
        mbs_sim_free(sim);
        mbs_scenario_free(sc);
    }
    res->us_min = res->us_max = us[0];
    for (int r = 1; r < reps; r++) { res->us_min = fmin(res->us_min, us[r]); res->us_max = fmax(res->us_max, us[r]); }
    res->us_med = tool_median(us, reps);
}

static const char *status_word(const mbs_sim_summary *s)
{
    return s->diverged ? "diverged" : s->left_box ? "left_box" : "stable";
}

/* A run's touch-downs as parts h and l print them: "points (feet)", and how it ended if not stable */
static void touchdown_cell(const mbs_sim_summary *s, char *buf, size_t n)
{
    if (s->diverged || s->left_box)
        snprintf(buf, n, "%ld (%ld), %s at %.3g s", s->touchdowns, s->foot_touchdowns, status_word(s), s->diverged_t);
    else snprintf(buf, n, "%ld (%ld)", s->touchdowns, s->foot_touchdowns);
}

/* "18/19/19/18" and the largest count */
static long td_list(const td_count *td, char *buf, size_t n)
{
    long mx = 0;
    buf[0] = 0;
    for (int i = 0; i < td->n; i++) {
        size_t l = strlen(buf);
        snprintf(buf + l, n - l, "%s%ld", i ? "/" : "", td->td[i]);
        if (td->td[i] > mx) mx = td->td[i];
    }
    return mx;
}

/* A number option of the scenario's controller, or the controller's default for it (NAN: none). */
static double controller_option(const mbs_scenario *sc, const char *key)
{
    mbs_option opts[MBS_SIM_MAX_OPTIONS];
    int n = mbs_scenario_options(sc, "controller", opts, MBS_SIM_MAX_OPTIONS);
    for (int i = 0; i < n; i++)
        if (strcmp(opts[i].key, key) == 0) return atof(opts[i].value);
    const mbs_scheme_info *info = mbs_controller_find(mbs_scenario_controller(sc));
    const mbs_option_spec *spec = info ? mbs_options_find(info->options, key, NULL) : NULL;
    return spec && spec->def ? atof(spec->def) : NAN;
}

/* consim, the paper's C++ code, on the same work as the "solo standing" cases: Solo-12 standing on
 * 4 feet, K = 1e5 N/m, B = 300 N s/m, mu = 1, PD at 2 ms, 4 active contacts throughout, step() only,
 * median us per step, three alternating runs. Recorded from the project's peer_timings.md
 * (tests/data/reference/peer_timings.md, "consim ... measured here"), measured on 2026-11-23 on this
 * project's machine class: AMD EPYC (Zen 5, family 26 model 2), 2 vCPUs under KVM, Debian 12,
 * g++ 12.2 -O3 -march=native, Pinocchio 3.7, consim's profiler compiled out. Not re-measured here:
 * consim is not built by this repository. */
static const double CONSIM_FULL_LO = 28.6, CONSIM_FULL_HI = 32.0, CONSIM_MMM0_LO = 14.2, CONSIM_MMM0_HI = 14.7;
static const char CONSIM_WHEN[] = "2026-11-23";
static const char CONSIM_MACHINE[] = "AMD EPYC (Zen 5, family 26 model 2), 2 vCPUs under KVM, Debian 12, g++ 12.2 "
                                     "-O3 -march=native, Pinocchio 3.7";

/* expo's closed form on proportional damping (method auto with the full exponential, the default
 * of every scenario) against the Padé exponential it replaces, full and max_mat_mult 0, as ./sim
 * runs them: µs per step (stepper only, the summary's us_per_step; median and range over runs),
 * touch-downs per contact, largest tilt and force. Solo trotting (scenarios/solo_trot.ini as
 * shipped), Solo standing on 4 feet under PD (the work consim was timed on), Romeo standing on its
 * 8 sole corners under PD at 2 ms. */
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
    static const char *const MD[NCASE] = {
        "`./sim scenarios/solo_trot.ini` (closed form)", "… `--set expo.method=pade` (Padé full)",
        "… `--set expo.max_mat_mult=0` (Padé mmm 0)", "… `--set controller.type=pd`: standing, closed form",
        "… standing, `expo.method=pade`", "… standing, `expo.max_mat_mult=0`",
        "Romeo standing on 8 sole corners (below), closed form", "Romeo standing, `expo.method=pade`"};
    int reps = quick ? 2 : 9;
    case_res R[NCASE];
    double us[NCASE][16];
    printf("#   %-36s %9s %9s %9s  %-19s %8s %9s %7s %s\n", "case (./sim, 5 s)", "us_median", "us_min", "us_max",
           "touchdowns/point", "tilt_deg", "max_force", "dist_m", "status");
    /* the cases take turns within each repetition, so that a burst of load on the shared machine hits
     * all of them */
    for (int r = 0; r < reps; r++)
        for (int c = 0; c < NCASE; c++) {
            ovl o = {0};
            for (int k = 0; k < 5 && C[c].set[k]; k++) ov_add(&o, "%s", C[c].set[k]);
            run_case(C[c].scen, &o, 1, &R[c]);
            us[c][r] = R[c].us_med;
        }
    for (int c = 0; c < NCASE; c++) {
        R[c].us_min = R[c].us_max = us[c][0];
        for (int r = 1; r < reps; r++) { R[c].us_min = fmin(R[c].us_min, us[c][r]); R[c].us_max = fmax(R[c].us_max, us[c][r]); }
        R[c].us_med = tool_median(us[c], reps);
        char tds[128];
        long tdmax = td_list(&R[c].td, tds, sizeof tds);
        const mbs_sim_summary *sum = &R[c].sum;
        printf("#   %-36s %9.2f %9.2f %9.2f  %-19s %8.3f %9.1f %7.3f %s\n", C[c].label, R[c].us_med, R[c].us_min, R[c].us_max,
               tds, sum->max_tilt_deg, sum->max_contact_force, sum->distance_m, status_word(sum));
        key("expo_%s_us_per_step: %.3f\n", C[c].key, R[c].us_med);
        key("expo_%s_touchdowns_max_per_point: %ld\n", C[c].key, tdmax);
        fflush(stdout);
    }

    bench_doc_begin(&doc, "expo-closed-form");
    bench_doc_printf(&doc, "| case (5 s as `./sim` runs it) | µs per step, median of %d (range) | touch-downs per point | "
                           "tilt (°) | peak force (N) | distance (m) | status |\n|---|---|---|---|---|---|---|\n", reps);
    for (int c = 0; c < NCASE; c++) {
        char tds[128];
        td_list(&R[c].td, tds, sizeof tds);
        const mbs_sim_summary *sum = &R[c].sum;
        bench_doc_printf(&doc, "| %s | %.2f (%.2f–%.2f) | %s | %.2f | %.0f | %.3f | %s |\n", MD[c], R[c].us_med, R[c].us_min,
                         R[c].us_max, tds, sum->max_tilt_deg, sum->max_contact_force, sum->distance_m, status_word(sum));
    }
    bench_doc_end(&doc, "expo-closed-form");

    /* the same work as consim's recorded figures: Solo standing on 4 feet under PD at 2 ms */
    printf("#   same work as consim (Solo standing on 4 feet, PD at 2 ms): ours (live) closed form %.2f, Pade full %.2f, "
           "Pade mmm 0 %.2f us; consim (recorded %s on %s) full %.1f-%.1f, mmm 0 %.1f-%.1f us\n",
           R[3].us_med, R[4].us_med, R[5].us_med, CONSIM_WHEN, CONSIM_MACHINE, CONSIM_FULL_LO, CONSIM_FULL_HI,
           CONSIM_MMM0_LO, CONSIM_MMM0_HI);
    bench_doc_begin(&doc, "expo-consim");
    bench_doc_printf(&doc, "| Solo standing on 4 feet, PD at 2 ms, 4 active contacts (µs per step, stepper only) | mbs (live, this run) | "
                           "consim (recorded) | consim / mbs |\n|---|---|---|---|\n");
    bench_doc_printf(&doc, "| full accuracy: mbs closed form (`./sim scenarios/solo_trot.ini --set controller.type=pd`); "
                           "consim full exponential | %.2f | %.1f–%.1f | %.1f–%.1f× |\n", R[3].us_med, CONSIM_FULL_LO, CONSIM_FULL_HI,
                     CONSIM_FULL_LO / R[3].us_med, CONSIM_FULL_HI / R[3].us_med);
    bench_doc_printf(&doc, "| full accuracy, Padé on both: mbs `--set expo.method=pade`; consim full exponential | %.2f | %.1f–%.1f | "
                           "%.1f–%.1f× |\n", R[4].us_med, CONSIM_FULL_LO, CONSIM_FULL_HI, CONSIM_FULL_LO / R[4].us_med,
                     CONSIM_FULL_HI / R[4].us_med);
    bench_doc_printf(&doc, "| max_mat_mult 0 on both: mbs `--set expo.max_mat_mult=0` | %.2f | %.1f–%.1f | %.2f–%.2f× |\n",
                     R[5].us_med, CONSIM_MMM0_LO, CONSIM_MMM0_HI, CONSIM_MMM0_LO / R[5].us_med, CONSIM_MMM0_HI / R[5].us_med);
    char why[160], consim_machine[320];
    if (bench_doc_peer_mismatch(why, sizeof why))
        snprintf(consim_machine, sizeof consim_machine, "**not that machine** (%s: the ratios compare machines as much as "
                 "code, and understate mbs on a slower CPU)", why);
    else snprintf(consim_machine, sizeof consim_machine, "the same machine class and clock but not the same minute");
    bench_doc_printf(&doc, "\nconsim's figures are recorded constants (`tools/bench/bench_expo.c`, from the project's "
                           "`tests/data/reference/peer_timings.md`): measured on %s on %s, three alternating runs; "
                           "mbs's are live, from this run on the machine named below, %s, so the ratios mix a live and a "
                           "recorded figure. In the minute consim was timed, the same file records mbs (before the closed "
                           "form) at 24.4–25.3 µs full and 9.8–9.9 µs with max_mat_mult 0.\n",
                     CONSIM_WHEN, CONSIM_MACHINE, consim_machine);
    bench_doc_end(&doc, "expo-consim");

    /* issue 17's bars */
    mbs_scenario *sc = load("solo_trot", NULL);
    double period = controller_option(sc, "period"), settle = controller_option(sc, "settle");
    long cycles = (long)ceil((mbs_scenario_duration(sc) - settle) / period - 1e-9);
    mbs_scenario_free(sc);
    char tds[128], tdm[128];
    long tdmax = td_list(&R[0].td, tds, sizeof tds);
    td_list(&R[2].td, tdm, sizeof tdm);
    bench_doc_begin(&doc, "expo-closed-form-bars");
    bench_doc_printf(&doc, "| bar (issue 17, section 1) | this run |\n|---|---|\n");
    bench_doc_printf(&doc, "| default trot: full accuracy, ≤ 8 µs per step | **%s**: %.2f µs (median of %d), the exact exponential; "
                           "Padé full %.2f µs |\n", R[0].us_med <= 8 ? "met" : "not met", R[0].us_med, reps, R[1].us_med);
    bench_doc_printf(&doc, "| default trot: touch-downs per foot ≤ the gait's cycles + 1 (%ld + 1) | **%s**: %s, tilt %.2f°, peak force "
                           "%.0f N; Padé mmm 0: %s, %.2f°, %.0f N |\n", cycles, tdmax <= cycles + 1 ? "met" : "not met", tds,
                     R[0].sum.max_tilt_deg, R[0].sum.max_contact_force, tdm, R[2].sum.max_tilt_deg, R[2].sum.max_contact_force);
    bench_doc_printf(&doc, "| default trot: stable, ≥ 0.5 m | **%s**: %s, %.2f m |\n",
                     !R[0].sum.diverged && !R[0].sum.left_box && R[0].sum.distance_m >= 0.5 ? "met" : "not met",
                     status_word(&R[0].sum), R[0].sum.distance_m);
    bench_doc_printf(&doc, "| standing on 4 feet, full accuracy, ≤ 10 µs | **%s**: %.2f µs; Padé full %.2f µs |\n",
                     R[3].us_med <= 10 ? "met" : "not met", R[3].us_med, R[4].us_med);
    bench_doc_printf(&doc, "| standing on 4 feet: ≥ 3× consim on the same work | **%s**: %.1f–%.1f× consim's recorded full exponential |\n",
                     CONSIM_FULL_LO / R[3].us_med >= 3 ? "met" : "not met", CONSIM_FULL_LO / R[3].us_med,
                     CONSIM_FULL_HI / R[3].us_med);
    bench_doc_printf(&doc, "| Romeo standing on 8 contacts, full accuracy, ≤ 30 µs | **%s**: %.2f µs; Padé full %.2f µs |\n",
                     R[6].us_med <= 30 ? "met" : "not met", R[6].us_med, R[7].us_med);
    bench_doc_end(&doc, "expo-closed-form-bars");
    key("expo_stand_modal_over_consim_full: %.2f\n", 0.5 * (CONSIM_FULL_LO + CONSIM_FULL_HI) / R[3].us_med);
}

/* Touch-downs per point, tilt and peak force per scheme on the four tests, as ./sim runs them: so
 * that a reader sees which variants chatter (a contact switching on and off on alternate steps
 * counts a touch-down each time). Explicit Euler and the reference expo run at the step at which
 * explicit Euler does the task (table 2). Points are sampled at every controller period; the
 * summary's `touchdowns` counts after every step and between expo's sub-steps (all points), which
 * catches a chatter inside a period where the step is shorter than the period. */
static void part_f(int quick)
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
static void part_g(const char *data, int quick)
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

/* ---------------------------------------------------------------- (h) held-out variants */

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
static void part_h(int quick)
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

/* ---------------------------------------------------------------- (l) Romeo's walk against its step */

/* Is the reference of part h converged in its step? Romeo's walk, as shipped and in the five
 * contact variants of part h, run with expo (as shipped: touch-down splitting, linearised at the
 * midpoint) at steps from 0.05 to 5 ms, and implicit Euler beside it: touch-downs of points and
 * feet, and the largest tilt of the base. A count that changes between 0.05, 0.1 and 0.2 ms is a
 * bounce at the edge of happening; a tilt that drifts with the step is an error of order δt. */
static void romeo_corner_events(int quick);

static void part_l(int quick)
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

/* ---------------------------------------------------------------- (i) force prediction (fig. 5) */

/* The contact-space linear system (11) at the system's state, as one expo step takes it over the
 * whole step: the active contacts as src/step/expo.c's stage 1 finds them (mbs_contact_forces with
 * update, a just-released contact that still penetrates kept), then J, J̇v, Υ = J M⁻¹Jᵀ and
 * p̈_free = J M⁻¹(τ − h) + J̇v (stage 2) from the same library calls in the same order, and from
 * them A (eq. 11, each contact's K and B as 3x3 blocks in world axes), b = [ṗ0; p̈_free] (the
 * anchor's velocity in b, as expo.c integrates the force law) and x(0) = [p − p0; ṗ − ṗ0]. With
 * Z = [[A, b], [0, 0]], x(t) = [I 0] e^{tZ} [x(0); 1] (eq. 17) at any t from one exponential:
 * A and b frozen at the start, the assumption of sec. 6.6. */
typedef struct lds {
    int na, act[MAXPTS];
    int N;               /* 6 na + 1 */
    double *Z, *z0;      /* N x N (column-major), N */
    double *Kw, *Bw;     /* 9 per active contact */
    double *tZ, *x;      /* N x N, N: scratch of lds_force */
    mbs_expm_ws *ws;
} lds;

static void lds_build(mbs_system *s, lds *L)
{
    const mbs_model *m = s->model;
    mbs_data *d = s->data;
    const double *q = s->q, *v = s->v;
    int nv = s->nv;
    memset(L, 0, sizeof *L);
    mbs_contact_forces(s, q, v, 1);
    for (int i = 0; i < s->ncontacts && L->na < MAXPTS; i++) {
        mbs_contact *c = &s->contacts[i];
        if (!c->active && mbsi_contact_penetrates(s, c)) mbsi_contact_activate(c);
        if (c->active) L->act[L->na++] = i;
    }
    int na = L->na, nc = 3 * na, n = 6 * na, N = n + 1, ld = nc + 1;
    L->N = N;
    double *M = xcalloc((size_t)nv * nv, sizeof(double)), *X = xcalloc((size_t)nv * ld, sizeof(double));
    double *Jc = xcalloc((size_t)(nc ? nc : 1) * nv, sizeof(double)), *J6 = xcalloc(6 * (size_t)nv, sizeof(double));
    double *h = xcalloc((size_t)nv, sizeof(double)), *zero = xcalloc((size_t)nv, sizeof(double));
    double *ups = xcalloc((size_t)nc * nc + 1, sizeof(double)), *pdd = xcalloc((size_t)nc + 1, sizeof(double));
    double *off = xcalloc((size_t)nc + 1, sizeof(double));
    L->Kw = xcalloc(9 * (size_t)na + 1, sizeof(double));
    L->Bw = xcalloc(9 * (size_t)na + 1, sizeof(double));
    /* J̇v: the classical acceleration of each touching point with q̈ = 0 */
    touching_points_drift(m, d, s, q, v, zero, L->act, na, off, pdd);
    for (int a = 0; a < na; a++) {
        const mbs_contact *c = &s->contacts[L->act[a]];
        world_gain(c->normal, c->material.k_normal, c->material.k_tangent, L->Kw + 9 * a);
        world_gain(c->normal, c->material.b_normal, c->material.b_tangent, L->Bw + 9 * a);
    }
    mbs_compute_joint_jacobians(m, d, q);
    for (int a = 0; a < na; a++) {
        mbs_frame_jacobian(m, d, s->contacts[L->act[a]].frame, off + 3 * a, MBS_LOCAL_WORLD_ALIGNED, J6, 6);
        for (int j = 0; j < nv; j++)
            for (int r = 0; r < 3; r++) X[(size_t)ld * j + 3 * a + r] = Jc[3 * a + r + (size_t)nc * j] = J6[r + 6 * j];
    }
    /* M⁻¹[Jᵀ, τ − h] through the LTDL factor, Υ = J M⁻¹Jᵀ (eq. 9), p̈_free (eq. 10) */
    mbs_crba(m, d, q, M);
    mbs_ltdl(m, d, M);
    mbs_nonlinear_effects(m, d, q, v, h);
    for (int j = 0; j < nv; j++) X[(size_t)ld * j + nc] = s->tau[j] - h[j];
    mbsi_ltdl_solve_rows(m, d, X, ld, 0);
    for (int j = 0; j < nv; j++) {
        const double *jk = Jc + (size_t)nc * j, *xk = X + (size_t)ld * j;
        for (int cc = 0; cc < nc; cc++) {
            double w = xk[cc], *u = ups + (size_t)nc * cc;
            for (int r = 0; r < nc; r++) u[r] += jk[r] * w;
        }
        for (int r = 0; r < nc; r++) pdd[r] += jk[r] * xk[nc];
    }
    /* Z = [[0, I, ṗ0], [−ΥK, −ΥB, p̈_free], [0, 0, 0]], z0 = [Δp; Δṗ; 1] */
    L->Z = xcalloc((size_t)N * N, sizeof(double));
    L->z0 = xcalloc((size_t)N, sizeof(double));
    L->tZ = xcalloc((size_t)N * N, sizeof(double));
    L->x = xcalloc((size_t)N, sizeof(double));
    double *Z = L->Z;
    for (int k = 0; k < nc; k++) Z[k + (size_t)N * (nc + k)] = 1;
    for (int b = 0; b < na; b++)
        for (int j = 0; j < 3; j++) {
            double *ck = Z + (size_t)N * (3 * b + j) + nc, *cb = Z + (size_t)N * (nc + 3 * b + j) + nc;
            for (int l = 0; l < 3; l++) {
                const double *u = ups + (size_t)nc * (3 * b + l);
                double kk = -L->Kw[9 * b + l + 3 * j], bk = -L->Bw[9 * b + l + 3 * j];
                for (int i = 0; i < nc; i++) { ck[i] += u[i] * kk; cb[i] += u[i] * bk; }
            }
        }
    for (int a = 0; a < na; a++) {
        const mbs_contact *c = &s->contacts[L->act[a]];
        for (int k = 0; k < 3; k++) {
            Z[3 * a + k + (size_t)N * n] = c->dp0[k];
            L->z0[3 * a + k] = c->p[k] - c->p0[k];
            L->z0[nc + 3 * a + k] = c->dp[k] - c->dp0[k];
        }
    }
    for (int r = 0; r < nc; r++) Z[nc + r + (size_t)N * n] = pdd[r];
    L->z0[n] = 1;
    L->ws = mbsi_expm_ws_new(N);
    free(M); free(X); free(Jc); free(J6); free(h); free(zero); free(ups); free(pdd); free(off);
}

static void lds_free(lds *L)
{
    free(L->Z); free(L->z0); free(L->Kw); free(L->Bw); free(L->tZ); free(L->x);
    mbsi_expm_ws_free(L->ws);
    memset(L, 0, sizeof *L);
}

/* The normal force (N) of every contact of s at time t of the frozen linear system:
 * λ = D x(t), D = [−K −B] (eq. 12), along the contact's normal; 0 for a contact that was not active
 * at the start (it is not in the system). */
static void lds_force(const lds *L, const mbs_system *s, double t, double *fn)
{
    int N = L->N, nc = 3 * L->na;
    for (int i = 0; i < s->ncontacts; i++) fn[i] = 0;
    if (L->na == 0) return;
    for (size_t k = 0; k < (size_t)N * N; k++) L->tZ[k] = t * L->Z[k];
    if (mbsi_expm_apply(L->ws, N, L->tZ, N, 1, L->z0, N, L->x, N, MBS_EXPM_FULL, 1, NULL) != 0) {
        fprintf(stderr, "bench_expo: the exponential of the linear system failed\n");
        exit(1);
    }
    for (int a = 0; a < L->na; a++) {
        const mbs_contact *c = &s->contacts[L->act[a]];
        const double *K = L->Kw + 9 * a, *B = L->Bw + 9 * a, *xp = L->x + 3 * a, *xv = L->x + nc + 3 * a;
        double f = 0;
        for (int i = 0; i < 3; i++) {
            double li = 0;
            for (int k = 0; k < 3; k++) li -= K[i + 3 * k] * xp[k] + B[i + 3 * k] * xv[k];
            f += li * c->normal[i];
        }
        fn[L->act[a]] = f;
    }
}

/* The normal force of contact c as the stepper left it (its force along the normal; 0 when free). */
static double contact_fn(const mbs_contact *c)
{
    if (!c->active) return 0;
    return c->lambda[0] * c->normal[0] + c->lambda[1] * c->normal[1] + c->lambda[2] * c->normal[2];
}

/* Fig. 5: at the start of solo_squat, with the base given an initial vertical velocity, the
 * normal force of each foot predicted over the horizon by the contact-space linear system (11)
 * with A and b frozen at the start (what one expo step of that length assumes), against a fine
 * simulation from the same state with the same torque (the controller's first, held for its 40 ms
 * period as the scenario holds it): explicit Euler at 1/4096 ms, whose force after each step is the
 * spring-damper's at the step's start (the instantaneous force), and explicit Euler at 1/1024 ms as
 * a check of that reference. Sampled every 1/64 ms (the jump at t = 0 decays within a millisecond,
 * between two samples 0.25 ms apart) over 40 ms; errors over the paper's 20 ms and over 40 ms. */
enum { FP_NV = 4, FP_NS = 2560, FP_N20 = 1280, FP_SUB_EULER = 64, FP_SUB_CHECK = 16 };
static const double FP_V0[FP_NV] = {0, -0.1, -0.3, -0.5};
static const double FP_DT = 1e-3 / 64;

static void part_i(const char *data, int quick)
{
    (void)quick;   /* a few seconds: the same in a quick run */
    printf("\n## (i) force prediction of the frozen linear system (11) at the start of solo_squat (fig. 5)\n"
           "#   reference: explicit Euler at %.4g ms (instantaneous spring-damper force); check: explicit Euler at %.4g ms; "
           "samples every %.4g ms\n", FP_DT / FP_SUB_EULER * 1e3, FP_DT / FP_SUB_CHECK * 1e3, FP_DT * 1e3);
    printf("#   %-8s %4s %9s %9s %10s %10s %10s %11s %10s %10s %10s %12s\n", "v0_m/s", "na", "f0_FL_N", "peak_FL_N",
           "max_err_N", "max_err_%", "rms_err_%", "mean_err_%", "worst_%", "max40_%", "ref_chk_%", "err20/f(20)%");
    static double ref[FP_NV][FP_NS + 1][MAXPTS], pred[FP_NV][FP_NS + 1][MAXPTS], chk[FP_NV][FP_NS + 1][MAXPTS];
    double emax[FP_NV], erms[FP_NV], emean[FP_NV], eworst[FP_NV], emax40[FP_NV], echk[FP_NV], peak[FP_NV], f0[FP_NV];
    double eend[FP_NV];   /* the error at 20 ms relative to the reference's force there (the weight it carries) */
    int nas[FP_NV], nc = 0;
    char fname[MBS_NAME_LEN] = "";
    for (int iv = 0; iv < FP_NV; iv++) {
        ovl o = {0};
        ov_add(&o, "model.base_velocity=0 0 %.17g 0 0 0", FP_V0[iv]);
        /* the initial state and the controller's first torque (one 40 ms period, one expo step) */
        traj tr;
        mbs_scenario *sc0 = load("solo_squat", &o);
        double cdt = mbs_scenario_controller_dt(sc0);
        mbs_scenario_free(sc0);
        record("solo_squat", &o, "expo", cdt, cdt, &tr);
        rig re, rx, rp;
        rig_new(&re, "solo_squat", &o, "euler");
        rig_new(&rx, "solo_squat", &o, "euler");
        rig_new(&rp, "solo_squat", &o, "expo");
        nc = re.sys->ncontacts;
        if (nc > MAXPTS) nc = MAXPTS;
        snprintf(fname, sizeof fname, "%s", re.sys->contacts[0].name);
        restore(re.sys, &tr, 0);
        restore(rx.sys, &tr, 0);
        restore(rp.sys, &tr, 0);
        lds L;
        lds_build(rp.sys, &L);
        nas[iv] = L.na;
        double fn[MAXPTS];
        for (int k = 0; k <= FP_NS; k++) {
            lds_force(&L, rp.sys, k * FP_DT, fn);
            for (int i = 0; i < nc; i++) pred[iv][k][i] = fn[i];
            for (int j = 0; j < FP_SUB_EULER; j++) {
                mbs_stepper_step(re.st, FP_DT / FP_SUB_EULER, NULL);
                if (j == 0)
                    for (int i = 0; i < nc; i++) ref[iv][k][i] = contact_fn(&re.sys->contacts[i]);
            }
            for (int j = 0; j < FP_SUB_CHECK; j++) {
                mbs_stepper_step(rx.st, FP_DT / FP_SUB_CHECK, NULL);
                if (j == 0)
                    for (int i = 0; i < nc; i++) chk[iv][k][i] = contact_fn(&rx.sys->contacts[i]);
            }
        }
        lds_free(&L);
        rig_free(&re);
        rig_free(&rx);
        rig_free(&rp);
        traj_free(&tr);
        /* errors relative to the reference's peak, the first foot for the figure, every foot for the worst */
        eworst[iv] = 0;
        for (int i = 0; i < nc; i++) {
            double pk = 0, mx = 0, ss = 0, sr = 0, sp = 0, mx40 = 0, mc = 0;
            for (int k = 0; k <= FP_NS; k++) {
                double e = fabs(pred[iv][k][i] - ref[iv][k][i]);
                if (k <= FP_N20) {
                    if (fabs(ref[iv][k][i]) > pk) pk = fabs(ref[iv][k][i]);
                    if (e > mx) mx = e;
                    ss += e * e;
                    double w = k == 0 || k == FP_N20 ? 0.5 : 1;   /* trapezoid: the averages over 20 ms */
                    sr += w * ref[iv][k][i];
                    sp += w * pred[iv][k][i];
                    if (fabs(chk[iv][k][i] - ref[iv][k][i]) > mc) mc = fabs(chk[iv][k][i] - ref[iv][k][i]);
                }
                if (e > mx40) mx40 = e;
            }
            double rel = pk > 0 ? mx / pk : NAN;
            if (rel > eworst[iv]) eworst[iv] = rel;
            if (i == 0) {
                peak[iv] = pk;
                f0[iv] = ref[iv][0][0];
                emax[iv] = mx;
                erms[iv] = sqrt(ss / (FP_N20 + 1)) / pk;
                emean[iv] = fabs(sp - sr) / FP_N20 / pk;
                emax40[iv] = mx40 / pk;
                echk[iv] = mc / pk;
                eend[iv] = fabs(pred[iv][FP_N20][0] - ref[iv][FP_N20][0]) / fabs(ref[iv][FP_N20][0]);
            }
        }
        printf("#   %-8.3g %4d %9.2f %9.2f %10.3f %10.2f %10.2f %11.3f %10.2f %10.2f %10.3f %12.2f\n", FP_V0[iv], nas[iv],
               f0[iv], peak[iv], emax[iv], 100 * emax[iv] / peak[iv], 100 * erms[iv], 100 * emean[iv], 100 * eworst[iv],
               100 * emax40[iv], 100 * echk[iv], 100 * eend[iv]);
        fflush(stdout);
        char kv[16];
        snprintf(kv, sizeof kv, "%02ld", lround(-FP_V0[iv] * 10));
        key("expo_force_prediction_max_err_pct_v%s: %.3f\n", kv, 100 * emax[iv] / peak[iv]);
        key("expo_force_prediction_rms_err_pct_v%s: %.3f\n", kv, 100 * erms[iv]);
    }
    FILE *f = tool_open_data("bench_expo", data, "force_prediction.dat");
    if (f) {
        fprintf(f, "# t_ms  normal force of %s (N): reference (explicit Euler 1/4096 ms), predicted by (11) frozen at t = 0, "
                   "explicit Euler 1/1024 ms; one block per initial base velocity\n", fname);
        for (int iv = 0; iv < FP_NV; iv++) {
            fprintf(f, "%s\"v_z(0) = %g m/s\"\n", iv ? "\n\n" : "", FP_V0[iv]);
            for (int k = 0; k <= FP_NS; k++)
                fprintf(f, "%.4f %.6g %.6g %.6g\n", k * FP_DT * 1e3, ref[iv][k][0], pred[iv][k][0], chk[iv][k][0]);
        }
        fclose(f);
    }
    bench_doc_begin(&doc, "expo-prediction");
    bench_doc_printf(&doc, "| initial base velocity v_z (m/s) | active contacts | %s force at t = 0 (N) | peak over 20 ms (N) | "
                           "max error over 20 ms (N, %% of peak) | RMS error (%% of peak) | error of the 20 ms average (%% of peak) | "
                           "error at 20 ms (%% of the force there) | "
                           "worst foot, max error (%% of its peak) | max error over 40 ms (%% of peak) | reference check: "
                           "Euler 1/1024 ms vs 1/4096 ms, max difference (%% of peak) |\n|---|---|---|---|---|---|---|---|---|---|---|\n", fname);
    for (int iv = 0; iv < FP_NV; iv++)
        bench_doc_printf(&doc, "| %g | %d | %.1f | %.1f | %.2f (%.2f %%) | %.2f | %.3f | %.1f | %.2f | %.2f | %.3f |\n", FP_V0[iv],
                         nas[iv], f0[iv], peak[iv], emax[iv], 100 * emax[iv] / peak[iv], 100 * erms[iv], 100 * emean[iv],
                         100 * eend[iv], 100 * eworst[iv], 100 * emax40[iv], 100 * echk[iv]);
    bench_doc_end(&doc, "expo-prediction");
}

/* ---------------------------------------------------------------- (j) normal force at touch-down (fig. 6) */

/* A touch-down of a contact point: free after one step, touching after the next. */
typedef struct touchdown {
    int point;
    long step;      /* index of the step that found it touching */
    double t;       /* the (sub-)step's start at which it was found touching (s) */
    double vn;      /* the point's velocity along the normal when the step put it on its spring (m/s) */
    double f0;      /* the spring-damper force then, −k_n nᵀΔp − b_n nᵀΔṗ (N) */
    double f1;      /* the step's force as the stepper reports it (its average over the step) (N) */
    double fpk;     /* the largest force the run reports in the 2 ms from the step on (N) */
    double b;       /* the damping b_n of the material touched (N s/m) */
} touchdown;

enum { MAXTD = 128 };

/* The normal force of every contact point after every step of a run of the scenario as shipped but
 * for the step dt: a recorded run (the controller's torque per period), replayed period by period
 * from its recorded states with a stepper of its own, every step sampled. The replay is the run:
 * the largest difference to the recorded states is returned in replay_dev (0 when bitwise). */
typedef struct force_trace {
    long n;
    int nc;
    double *t, *f;    /* n; n x nc (the points of step i at f + nc i) */
    int ntd;
    touchdown td[MAXTD];
    double replay_dev;
    char name[MAXPTS][MBS_NAME_LEN];
} force_trace;

/* The system's substep callback during force_trace_run: at the start of every step and of every
 * sub-step of a split one, a point found touching that was free is a touch-down, recorded with its
 * state there (the state a step leaves is that at the start of its last sub-step, which after a
 * landing taken in sub-steps is no longer the touch-down). */
typedef struct trace_ctx {
    force_trace *ft;
    int was[MAXPTS];
    int first, nnew;   /* the first touch-down of the step under way, how many it has */
} trace_ctx;

static void trace_substep(void *user, const mbs_system *s)
{
    trace_ctx *x = user;
    force_trace *ft = x->ft;
    for (int p = 0; p < ft->nc; p++) {
        const mbs_contact *c = &s->contacts[p];
        int on = c->active != 0, was = x->was[p];
        x->was[p] = on;
        if (was || !on || ft->ntd >= MAXTD) continue;
        touchdown *td = &ft->td[ft->ntd++];
        double dpn = 0, dvn = 0, vn = 0;
        for (int j = 0; j < 3; j++) {
            dpn += (c->p[j] - c->p0[j]) * c->normal[j];
            dvn += (c->dp[j] - c->dp0[j]) * c->normal[j];
            vn += c->dp[j] * c->normal[j];
        }
        td->point = p;
        td->step = ft->n;
        td->t = s->t;
        td->vn = vn;
        td->b = c->material.b_normal;
        td->f0 = -c->material.k_normal * dpn - c->material.b_normal * dvn;
        x->nnew++;
    }
}

static void force_trace_run(const char *scen, double dt, force_trace *ft)
{
    memset(ft, 0, sizeof *ft);
    mbs_scenario *sc0 = load(scen, NULL);
    double cdt = mbs_scenario_controller_dt(sc0), dur = mbs_scenario_duration(sc0);
    mbs_scenario_free(sc0);
    traj tr;
    record(scen, NULL, "expo", dt, dur, &tr);
    if (tr.diverged) { fprintf(stderr, "bench_expo: %s at dt %g: %s\n", scen, dt, tr.reason); exit(1); }
    ovl o = {0};
    ov_add(&o, "stepper.dt=%.17g", dt);
    rig r;
    rig_new(&r, scen, &o, "expo");
    mbs_system *s = r.sys;
    long nsub = lround(cdt / dt);
    int nc = s->ncontacts < MAXPTS ? s->ncontacts : MAXPTS;
    ft->nc = nc;
    ft->t = xcalloc((size_t)(tr.n * nsub + 1), sizeof(double));
    ft->f = xcalloc((size_t)(tr.n * nsub + 1) * (size_t)nc, sizeof(double));
    for (int i = 0; i < nc; i++) snprintf(ft->name[i], sizeof ft->name[i], "%s", s->contacts[i].name);
    trace_ctx x = {ft, {0}, 0, 0};
    s->substep = trace_substep;
    s->substep_user = &x;
    for (long k = 0; k < tr.n; k++) {
        restore(s, &tr, k);
        for (long i = 0; i < nsub; i++) {
            /* the flags as the last step left them (a restored period may start from other ones) */
            for (int p = 0; p < nc; p++) x.was[p] = s->contacts[p].active;
            x.first = ft->ntd;
            x.nnew = 0;
            if (mbs_stepper_step(r.st, dt, NULL) != MBS_OK) { fprintf(stderr, "bench_expo: %s: step failed\n", scen); exit(1); }
            s->t = (double)k * cdt + (double)(i + 1) * dt;
            ft->t[ft->n] = s->t;
            for (int p = 0; p < nc; p++) ft->f[(size_t)nc * ft->n + p] = contact_fn(&s->contacts[p]);
            for (int j = x.first; j < x.first + x.nnew; j++) ft->td[j].f1 = ft->f[(size_t)nc * ft->n + ft->td[j].point];
            ft->n++;
        }
        for (int j = 0; j < s->nq; j++) ft->replay_dev = fmax(ft->replay_dev, fabs(s->q[j] - tr.q[(size_t)tr.nq * (k + 1) + j]));
        for (int j = 0; j < s->nv; j++) ft->replay_dev = fmax(ft->replay_dev, fabs(s->v[j] - tr.v[(size_t)tr.nv * (k + 1) + j]));
    }
    s->substep = NULL;
    for (int k = 0; k < ft->ntd; k++) {
        touchdown *td = &ft->td[k];
        td->fpk = 0;
        for (long i = td->step; i < ft->n && ft->t[i] <= td->t + 2e-3 + 1e-12; i++)
            td->fpk = fmax(td->fpk, ft->f[(size_t)nc * i + td->point]);
    }
    rig_free(&r);
    traj_free(&tr);
}

static void force_trace_free(force_trace *ft)
{
    free(ft->t);
    free(ft->f);
    memset(ft, 0, sizeof *ft);
}

/* Fig. 6: the normal force of one contact point over time in the default trot and in Romeo's walk,
 * as shipped (expo, closed form, touch-down splitting, at the scenario's step), beside the same
 * scenario at ≈ 1/64 ms (the paper plots its ground truth's force, at that step): a linear
 * spring-damper jumps at a touch-down to b_n times the velocity there (Δp is still zero). Per
 * touch-down (trot: of the plotted foot in the window; Romeo: of every sole corner): that velocity,
 * b_n |v_n|, the force when the step put the point on its spring (from its state), the step's
 * reported force (its average over the step), and the fine run's velocity, jump and largest force
 * in the 2 ms after (its steps' averages over 1/64 ms are the force to a few percent). */
static void part_j(const char *data, int quick)
{
    printf("\n## (j) normal force of one contact point at touch-down: solo_trot and romeo_walk as shipped (fig. 6)\n");
    static const struct { const char *scen; int ci, all; double w0, w1; } S[2] = {
        {"solo_trot", 0, 0, 0.3, 1.8}, {"romeo_walk", 0, 1, 0, 5}};
    bench_doc_begin(&doc, "expo-touchdown-force");
    for (int c = 0; c < 2; c++) {
        mbs_scenario *sc0 = load(S[c].scen, NULL);
        double dt0 = mbs_scenario_dt(sc0), cdt = mbs_scenario_controller_dt(sc0);
        mbs_scenario_free(sc0);
        /* ≈ 1/64 ms, a step that divides the controller period (2 ms / 128, 40 ms / 2048) */
        double dtf = cdt / (double)(1 << gt_level(cdt));
        if (quick) dtf = cdt / (double)(1 << (gt_level(cdt) - 3));
        force_trace sh, fi;
        double t0 = tool_now();
        force_trace_run(S[c].scen, dt0, &sh);
        force_trace_run(S[c].scen, dtf, &fi);
        int ci = S[c].ci;
        printf("# %s, plotted point %d (%s): as shipped at %g ms (the replay's largest deviation from the run %.3g), "
               "fine run at %.5g ms (%.3g); %.1f s\n", S[c].scen, ci, sh.name[ci], dt0 * 1e3, sh.replay_dev, dtf * 1e3,
               fi.replay_dev, tool_now() - t0);
        printf("#   %-10s %8s %8s %8s %9s %9s   fine: %8s %8s %8s %9s %9s\n", "point", "t_s", "v_n_m/s", "b|v_n|", "f_start_N",
               "f_step_N", "t_s", "v_n_m/s", "b|v_n|", "f_start_N", "peak2ms_N");
        char name[128];
        snprintf(name, sizeof name, "normal_force_%s.dat", S[c].scen);
        FILE *f = tool_open_data("bench_expo", data, name);
        if (f) {
            fprintf(f, "# t_s  normal force of %s (N); block 0: as shipped (dt %g ms, the step's average force), block 1: "
                       "dt %.5g ms (every 4th step, every step in the 5 ms after a touch-down); block 2: its touch-downs as shipped (t, b|v_n|, force at the start of "
                       "contact)\n", sh.name[ci], dt0 * 1e3, dtf * 1e3);
            fprintf(f, "\"expo as shipped, %g ms (the step's average)\"\n", dt0 * 1e3);
            for (long i = 0; i < sh.n; i++) fprintf(f, "%.6f %.6g\n", sh.t[i], sh.f[(size_t)sh.nc * i + ci]);
            fprintf(f, "\n\n\"expo at %.3g ms\"\n", dtf * 1e3);
            /* every 4th step, and every step in the 5 ms after a touch-down of the point (the jump) */
            for (long i = 0, next = 0; i < fi.n; i++) {
                int near = 0;
                for (int k = 0; k < fi.ntd && !near; k++)
                    near = fi.td[k].point == ci && fi.t[i] >= fi.td[k].t - 1e-4 && fi.t[i] <= fi.td[k].t + 5e-3;
                if (near || i >= next) {
                    fprintf(f, "%.6f %.6g\n", fi.t[i], fi.f[(size_t)fi.nc * i + ci]);
                    next = i + 4;
                }
            }
            fprintf(f, "\n\n\"b |v_n| at touch-down (as shipped)\"\n");
            for (int k = 0; k < sh.ntd; k++)
                if (sh.td[k].point == ci)
                    fprintf(f, "%.6f %.6g %.6g\n", sh.td[k].t, sh.td[k].b * fabs(sh.td[k].vn), sh.td[k].f0);
            fclose(f);
        }
        bench_doc_printf(&doc, "%s**%s** (`./sim scenarios/%s.ini`, expo at %g ms; fine run at %.3g ms), touch-downs in %g–%g s "
                               "of %s\n\n| point | touch-down (s) | v_n at contact (m/s) | b·\\|v_n\\| (N) | force when put on its spring (N) | "
                               "the step's force, its average over %g ms (N) | fine run: touch-down (s), v_n (m/s), b·\\|v_n\\| (N), force "
                               "when put on its spring (N), largest force in the 2 ms after (N) |\n|---|---|---|---|---|---|---|\n",
                         c ? "\n" : "", S[c].scen, S[c].scen, dt0 * 1e3, dtf * 1e3, S[c].w0, S[c].w1,
                         S[c].all ? "every contact point" : sh.name[ci], dt0 * 1e3);
        int nrow = 0;
        double worst = 0;
        for (int k = 0; k < sh.ntd; k++) {
            const touchdown *a = &sh.td[k];
            if (a->t < S[c].w0 || a->t > S[c].w1 || (!S[c].all && a->point != ci)) continue;
            /* the fine run's touch-down of the same point nearest in time */
            const touchdown *b = NULL;
            for (int j = 0; j < fi.ntd; j++)
                if (fi.td[j].point == a->point && (!b || fabs(fi.td[j].t - a->t) < fabs(b->t - a->t))) b = &fi.td[j];
            char pn[MBS_NAME_LEN + 8];
            snprintf(pn, sizeof pn, "%d %s", a->point, sh.name[a->point]);
            printf("#   %-10s %8.4f %8.4f %8.2f %9.2f %9.2f   fine: %8.4f %8.4f %8.2f %9.2f %9.2f\n", pn, a->t,
                   a->vn, a->b * fabs(a->vn), a->f0, a->f1, b ? b->t : NAN, b ? b->vn : NAN, b ? b->b * fabs(b->vn) : NAN,
                   b ? b->f0 : NAN, b ? b->fpk : NAN);
            bench_doc_printf(&doc, "| %d `%s` | %.3f | %.3f | %.1f | %.1f | %.1f |", a->point, sh.name[a->point], a->t, a->vn,
                             a->b * fabs(a->vn), a->f0, a->f1);
            if (b) bench_doc_printf(&doc, " %.4f, %.3f, %.1f, %.1f, %.1f |\n", b->t, b->vn, b->b * fabs(b->vn), b->f0, b->fpk);
            else bench_doc_printf(&doc, " — |\n");
            if (b && b->b * fabs(b->vn) > 1) worst = fmax(worst, fabs(b->f0 / (b->b * fabs(b->vn)) - 1));
            nrow++;
        }
        if (!nrow) bench_doc_printf(&doc, "| (none in the window) | | | | | | |\n");
        key("expo_touchdowns_%s_in_table: %d\n", S[c].scen, nrow);
        key("expo_touchdown_fine_jump_over_bv_worst_dev_%s: %.3f\n", S[c].scen, worst);
        force_trace_free(&sh);
        force_trace_free(&fi);
        fflush(stdout);
    }
    bench_doc_end(&doc, "expo-touchdown-force");
}

/* ---------------------------------------------------------------- (k) implicit Euler's cost (appendix A) */

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
static void part_k(const char *data, int quick)
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
                mbsi_contact_force_derivatives(s, q1, v1, 1, Gq, Gv, work, iwork);
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

/* ---------------------------------------------------------------- main */

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
    fputs(keys.text, stdout);
    /* the key lines and the whole output */
    bench_doc_keys(&doc, "expo", keys.text);
    bench_doc_output(&doc, "expo");
    bench_doc_close(&doc);
    return 0;
}
