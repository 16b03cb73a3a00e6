/* common.c — the helpers every part of bench_expo uses (declared, with the types, in expo.h). */
#include <stdarg.h>

#include "expo.h"

void *xcalloc(size_t n, size_t sz)
{
    void *p = calloc(n ? n : 1, sz);
    if (!p) { fprintf(stderr, "bench_expo: out of memory\n"); exit(1); }
    return p;
}

/* The cost of one tool_now() pair, taken off intervals timed one call at a time. */
double clock_overhead(void)
{
    double t[101];
    for (int i = 0; i < 101; i++) { double a = tool_now(); t[i] = tool_now() - a; }
    return tool_median(t, 101);
}

bench_doc doc;
bench_keys keys;

/* A number for a key line or a table: "inf" for a diverged measurement. */
const char *num(char *buf, size_t n, const char *fmt, double x)
{
    if (isfinite(x)) snprintf(buf, n, fmt, x);
    else snprintf(buf, n, "%s", isnan(x) ? "n/a" : "inf");
    return buf;
}

/* Two significant digits for a table of docs/benchmarks.md: 0.62, 0.011, 102, 16460, 9.3e-6; "inf" for a
 * diverged measurement, "—" for one not made. */
const char *fmt2(char *buf, size_t n, double x)
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

const char *const SCEN[NSCEN] = {"solo_squat", "solo_jump", "solo_trot", "romeo_walk"};
const char *const FIG_SCEN[NFIG] = {"solo_squat_tsid", "solo_squat", "solo_jump", "solo_trot", "romeo_walk"};


void ov_add(ovl *o, const char *fmt, ...)
{
    if (o->n >= MAXOV) { fprintf(stderr, "bench_expo: too many overrides\n"); exit(1); }
    va_list ap;
    va_start(ap, fmt);
    vsnprintf(o->s[o->n], sizeof o->s[o->n], fmt, ap);
    va_end(ap);
    o->p[o->n] = o->s[o->n];
    o->n++;
}

void ov_copy(ovl *dst, const ovl *src)
{
    dst->n = 0;
    for (int i = 0; src && i < src->n; i++) ov_add(dst, "%s", src->s[i]);
}

/* expo with max_mat_mult mmm through the Padé exponential (method pade): parts (a) to (d) are the
 * paper's method; the closed form that method auto takes with the full exponential is part (e). */
void ov_pade(ovl *o, int mmm)
{
    ov_add(o, "expo.max_mat_mult=%d", mmm);
    ov_add(o, "expo.method=pade");
}

mbs_scenario *load(const char *scen, const ovl *o)
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

void traj_free(traj *tr)
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
void restore(mbs_system *s, const traj *tr, long k)
{
    memcpy(s->q, tr->q + (size_t)tr->nq * k, sizeof(double) * (size_t)tr->nq);
    memcpy(s->v, tr->v + (size_t)tr->nv * k, sizeof(double) * (size_t)tr->nv);
    memcpy(s->contacts, tr->ct + (size_t)tr->nc * k, sizeof(mbs_contact) * (size_t)tr->nc);
    memcpy(s->tau, tr->tau + (size_t)tr->nv * k, sizeof(double) * (size_t)tr->nv);
    s->t = (double)k * tr->cdt;
}

void start_new(start_state *x, const mbs_system *s)
{
    x->q = xcalloc((size_t)s->nq, sizeof(double));
    x->v = xcalloc((size_t)s->nv, sizeof(double));
    x->c = xcalloc((size_t)(s->ncontacts ? s->ncontacts : 1), sizeof(mbs_contact));
}
void start_keep(start_state *x, const mbs_system *s)
{
    memcpy(x->q, s->q, sizeof(double) * (size_t)s->nq);
    memcpy(x->v, s->v, sizeof(double) * (size_t)s->nv);
    memcpy(x->c, s->contacts, sizeof(mbs_contact) * (size_t)s->ncontacts);
}
void start_put(const start_state *x, mbs_system *s)
{
    memcpy(s->q, x->q, sizeof(double) * (size_t)s->nq);
    memcpy(s->v, x->v, sizeof(double) * (size_t)s->nv);
    memcpy(s->contacts, x->c, sizeof(mbs_contact) * (size_t)s->ncontacts);
}
void start_free(start_state *x)
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
void record(const char *scen, const ovl *o, const char *stepper, double dt, double horizon, traj *tr)
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

/* Largest i with cdt / 2^i >= 1/64 ms: the ground truth's step is cdt / 2^i (1/64 ms on trot,
 * 40/2048 and 10/512 ms on squat, jump and walk, since a step must divide the controller period). */
int gt_level(double cdt) { return (int)floor(log2(cdt / (1e-3 / 64)) + 1e-9); }

/* ---------------------------------------------------------------- replay: local errors, timing */

void rig_new(rig *r, const char *scen, const ovl *o, const char *stepper)
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

void rig_free(rig *r)
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
void replay(const char *scen, const ovl *o, const char *stepper, double dt, const traj *gt, replay_res *res,
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

/* ---------------------------------------------------------------- contact kinematics (parts c, i, j) */

/* The kinematics of an expo step with q̈ = 0 (as src/step/expo.c's contact_jacobians): each
 * active touching point's offset in its frame into off (3 per point) and its classical
 * acceleration J̇v into pdd (3 per point). */
void touching_points_drift(const mbs_model *m, mbs_data *d, const mbs_system *s, const double *q,
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

/* out = k_n n nᵀ + k_t (1 − n nᵀ), as expo.c */
void world_gain(const double n[3], double kn, double kt, double out[9])
{
    for (int j = 0; j < 3; j++)
        for (int i = 0; i < 3; i++) out[i + 3 * j] = (kn - kt) * n[i] * n[j] + (i == j ? kt : 0);
}

/* The normal force of contact c as the stepper left it (its force along the normal; 0 when free). */
double contact_fn(const mbs_contact *c)
{
    if (!c->active) return 0;
    return c->lambda[0] * c->normal[0] + c->lambda[1] * c->normal[1] + c->lambda[2] * c->normal[2];
}

/* ---------------------------------------------------------------- runs as ./sim does them (parts e to l) */

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

void run_case(const char *scen, const ovl *o, int reps, case_res *res)
{
    double us[16];
    if (reps > 16) reps = 16;
    if (reps < 1) reps = 1;   /* the summary and counts are those of a run: there is at least one */
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

const char *status_word(const mbs_sim_summary *s)
{
    return s->diverged ? "diverged" : s->left_box ? "left_box" : "stable";
}

/* A run's touch-downs as parts h and l print them: "points (feet)", and how it ended if not stable */
void touchdown_cell(const mbs_sim_summary *s, char *buf, size_t n)
{
    if (s->diverged || s->left_box)
        snprintf(buf, n, "%ld (%ld), %s at %.3g s", s->touchdowns, s->foot_touchdowns, status_word(s), s->diverged_t);
    else snprintf(buf, n, "%ld (%ld)", s->touchdowns, s->foot_touchdowns);
}

/* "18/19/19/18" and the largest count */
long td_list(const td_count *td, char *buf, size_t n)
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
