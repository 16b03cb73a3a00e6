/* bench_derivatives.c — the cost of one step's Jacobians, mbs_stepper_derivatives (mbs/step.h):
 * A = ∂x⁺/∂x (2nv x 2nv) and B = ∂x⁺/∂τ (2nv x the joints' columns), x = (q, v) in the tangent space,
 * the contacts' anchors held, one step of 1 ms.
 *   cases     Solo-12 standing on its four foot spheres (urdf/solo12.urdf, radius 0.0191 m, ground
 *             K = 1e5 N/m, B = 300 N s/m, μ = 1, settled 0.3 s under a joint PD), Solo mid-trot
 *             (scenarios/solo_trot.ini run by its own controller until two feet, a diagonal pair,
 *             have carried it alone for 10 ms) and Romeo standing on its 8 sole corners
 *             (scenarios/romeo_walk.ini under its PD controller, settled 0.3 s). For every scheme
 *             with analytical derivatives (mbs_stepper_has_analytical_derivatives over the registry:
 *             a scheme that gains them appears here by itself) the median µs of a derivatives call,
 *             of a step, and the largest error of A and B against the library's extrapolated central differences
 *             (relative to each matrix's largest entry); for expo, which takes forward differences
 *             (MBS_DERIVATIVES_AUTO), the same calls. B's columns are the joints' (v from 6 on), as a
 *             controller's torques.
 *   mujoco    MuJoCo's mjd_transitionFD (forward, eps 1e-6) on Solo with the same four foot spheres
 *             and a motor per joint (tools/bench/derivatives_mujoco.c; libmujoco-dev), timed in the
 *             same run, beside expo's derivatives: the same count of perturbed steps, 1 + 2 nv + 12.
 *   contacts  the cost of a derivatives call against the number of contact points on the standing
 *             Solo, 1, 2, 4, 8, 16: up to 4 the feet (diagonal pairs first), beyond them spheres of
 *             the same radius on the lower legs around each foot, 1 cm from its sphere.
 * Times are medians over repeated calls from the same state (each step restored before the next),
 * the least of 3 rounds in which every state and scheme, and MuJoCo, take turns; OpenBLAS on one thread. Ends with `key: value` lines; a full run (not --quick) built with MuJoCo
 * writes the tables of docs/benchmarks.md's section "Step derivatives" into <data>/tables.md
 * (tools/bench/bench_doc.h), which tools/bench/bench_doc.py puts into the document (make
 * bench-derivatives does both).
 *   bench_derivatives [--quick] [--data DIR] */
#include <math.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "mbs.h"
#include "bench_doc.h"
#include "bench_tool.h"
#include "solo_stance.h"
#ifdef MBS_HAVE_MUJOCO
#include "derivatives_mujoco.h"
#endif

#ifndef MBS_SOURCE_DIR
#define MBS_SOURCE_DIR "."
#endif

static const double DT = 1e-3;                 /* the step differentiated (s) */
static const double KP = 3, KD = 0.1;          /* the standing Solo's joint PD about its posture */
static const double K_GROUND = 1e5;            /* N/m, the ground's stiffness */
enum { SETTLE = 300, TABLE_STEPS = 5, ROUNDS = 3, MAXSCHEMES = 32, MAXREPS = 2001, MINREPS = 5, NCOUNTS = 5 };
static const int COUNTS[NCOUNTS] = {1, 2, 4, 8, 16};
static double budget = 0.15;                   /* s of calls per figure and round (--quick: less) */

static bench_doc doc;
static bench_keys keys;
#define key(...) bench_key(&keys, __VA_ARGS__)

static void die(const char *what, const char *msg)
{
    fprintf(stderr, "bench_derivatives: %s: %s\n", what, msg);
    exit(1);
}

static void *xmalloc(size_t n)
{
    void *p = malloc(n ? n : 1);
    if (!p) die("malloc", "out of memory");
    return p;
}

/* ---------------------------------------------------------------- timing */

/* One call to time: a step of dt (method < 0; the state restored after it, untimed) or a
 * derivatives call with that method into A, B. */
typedef struct call {
    mbs_stepper *st;
    int method;
    const int *cols;
    int ncols;
    double *A, *B;
    const void *saved;
    size_t nsaved;
} call;

static double timed(const call *c)
{
    double t0 = tool_now();
    int rc = c->method < 0 ? mbs_stepper_step(c->st, DT, NULL)
                           : mbs_stepper_derivatives(c->st, DT, (mbs_derivatives_method)c->method, c->cols, c->ncols, c->A,
                                                     c->B);
    double el = tool_now() - t0;
    if (c->method < 0) mbs_stepper_restore(c->st, c->saved, c->nsaved, NULL);
    if (rc != MBS_OK) die(c->method < 0 ? "mbs_stepper_step" : "mbs_stepper_derivatives", mbs_stepper_last_error(c->st)->msg);
    return el;
}

/* Median µs of the call, repeated for about `budget` seconds (MINREPS to MAXREPS times). */
static double median_us(const call *c)
{
    static double t[MAXREPS];
    double first = timed(c);
    int reps = (int)fmin(MAXREPS, fmax(MINREPS, budget / fmax(first, 1e-9)));
    for (int r = 0; r < reps; r++) t[r] = 1e6 * timed(c);
    return tool_median(t, reps);
}

/* max |X − Y| / max |Y| over n entries. */
static double rel_err(const double *X, const double *Y, size_t n)
{
    double e = 0, y = 0;
    for (size_t k = 0; k < n; k++) {
        e = fmax(e, fabs(X[k] - Y[k]));
        y = fmax(y, fabs(Y[k]));
    }
    return isfinite(e) ? e / fmax(y, 1e-300) : INFINITY;
}

/* ---------------------------------------------------------------- one state, every scheme */

typedef struct figures {
    const char *scheme;
    int analytical;
    double deriv_us, step_us, err, err_fwd, fd_us;   /* err, err_fwd: analytical only (against extrapolated central,
                                                     * and forward, differences); fd_us: forward differences (expo) */
} figures;

typedef struct case_res {
    int active, nv, ncols, nfig;
    figures fig[MAXSCHEMES];
} case_res;

static int active_contacts(const mbs_system *s)
{
    int n = 0;
    mbs_contact_info info;
    for (int i = 0; i < mbs_system_ncontacts(s); i++) n += mbs_system_contact(s, i, &info) == MBS_OK && info.active;
    return n;
}

/* One state's schemes, timed in rounds: every scheme with analytical derivatives, and expo. */
typedef struct set {
    case_res res;
    mbs_stepper *st[MAXSCHEMES];
    void *saved[MAXSCHEMES];
    size_t nsaved[MAXSCHEMES];
    int *cols;
    double *A, *B;
} set;

/* The schemes on the state of sys (sc: the scenario whose options they take, or NULL), B's columns
 * the joints' (v from 6 on); the analytical ones' errors against extrapolated central differences. */
static void set_open(set *x, mbs_system *sys, const mbs_scenario *sc)
{
    const mbs_model *m = mbs_system_model(sys);
    const int nv = mbs_model_nv(m), n2 = 2 * nv, ncols = nv - 6;
    case_res *res = &x->res;
    memset(x, 0, sizeof *x);
    x->cols = xmalloc(sizeof(int) * (size_t)ncols);
    for (int k = 0; k < ncols; k++) x->cols[k] = 6 + k;
    x->A = xmalloc(sizeof(double) * (size_t)n2 * n2);
    x->B = xmalloc(sizeof(double) * (size_t)n2 * ncols);
    double *Ac = xmalloc(sizeof(double) * (size_t)n2 * n2), *Bc = xmalloc(sizeof(double) * (size_t)n2 * ncols);
    res->active = active_contacts(sys);
    res->nv = nv;
    res->ncols = ncols;
    for (int i = 0; i < mbs_stepper_count() && res->nfig < MAXSCHEMES; i++) {
        const char *name = mbs_stepper_at(i)->name;
        mbs_option opts[64];
        int nopts = sc ? mbs_scenario_options(sc, name, opts, 64) : 0;
        mbs_error err;
        mbs_stepper *t = mbs_stepper_new(name, sys, opts, nopts < 64 ? nopts : 64, &err);
        if (!t) continue;   /* a scheme for other contacts (rigid, rims) */
        int analytical = mbs_stepper_has_analytical_derivatives(t);
        if (!analytical && strcmp(name, "expo") != 0) {
            mbs_stepper_free(t);
            continue;
        }
        int f = res->nfig++;
        x->st[f] = t;
        x->nsaved[f] = mbs_stepper_state_size(t);
        x->saved[f] = xmalloc(x->nsaved[f]);
        if (mbs_stepper_save(t, x->saved[f], x->nsaved[f], &err) != MBS_OK) die(name, err.msg);
        res->fig[f] = (figures){name, analytical, INFINITY, INFINITY, NAN, NAN, INFINITY};
        if (analytical) {
            /* the error against extrapolated central differences (O(h⁴): plain ones at 1e-6 are off by
             * 1e-4 where the contacts are stiff); implicit Euler's Newton solved to 1e-12 for it, far
             * below what differences of 1e-6 resolve (its default 1e-6 would be their noise) */
            mbs_option tight[65];
            int nt = nopts < 64 ? nopts : 64;
            memcpy(tight, opts, sizeof(mbs_option) * (size_t)nt);
            if (strcmp(name, "implicit_euler") == 0) tight[nt++] = (mbs_option)MBS_OPTION("tol", 1e-12);
            mbs_stepper *r = mbs_stepper_new(name, sys, tight, nt, &err);
            if (!r) die(name, err.msg);
            call an = {r, MBS_DERIVATIVES_ANALYTICAL, x->cols, ncols, x->A, x->B, x->saved[f], x->nsaved[f]};
            call fd = {r, MBS_DERIVATIVES_EXTRAPOLATED, x->cols, ncols, Ac, Bc, x->saved[f], x->nsaved[f]};
            timed(&an);
            timed(&fd);
            res->fig[f].err = fmax(rel_err(x->A, Ac, (size_t)n2 * n2), rel_err(x->B, Bc, (size_t)n2 * ncols));
            /* and against forward differences (h = 1e-8, one side): where the step has a kink
             * within central differences' reach, the analytical Jacobian is that side's */
            fd.method = MBS_DERIVATIVES_FORWARD;
            timed(&fd);
            res->fig[f].err_fwd = fmax(rel_err(x->A, Ac, (size_t)n2 * n2), rel_err(x->B, Bc, (size_t)n2 * ncols));
            mbs_stepper_free(r);
        }
    }
    free(Ac);
    free(Bc);
}

/* One round: each figure becomes the least of its medians so far. */
static void set_round(set *x)
{
    for (int f = 0; f < x->res.nfig; f++) {
        figures *g = &x->res.fig[f];
        call c = {x->st[f], MBS_DERIVATIVES_AUTO, x->cols, x->res.ncols, x->A, x->B, x->saved[f], x->nsaved[f]};
        g->deriv_us = fmin(g->deriv_us, median_us(&c));
        if (strcmp(g->scheme, "expo") == 0) {
            /* our own forward differences of expo, beside its analytical call and MuJoCo's */
            c.method = MBS_DERIVATIVES_FORWARD;
            g->fd_us = fmin(g->fd_us, median_us(&c));
        }
        c.method = -1;
        g->step_us = fmin(g->step_us, median_us(&c));
    }
}

static void set_close(set *x)
{
    for (int f = 0; f < x->res.nfig; f++) {
        free(x->saved[f]);
        mbs_stepper_free(x->st[f]);
    }
    free(x->cols);
    free(x->A);
    free(x->B);
}

static const figures *find(const case_res *r, const char *scheme)
{
    for (int i = 0; i < r->nfig; i++)
        if (strcmp(r->fig[i].scheme, scheme) == 0) return &r->fig[i];
    return NULL;
}

/* The case's lines of output, its keys (prefix_...) and its rows of the cases table. */
static void report(const char *prefix, const char *what, const case_res *r)
{
    printf("\n## %s: %s; %d contacts active, nv %d, B's %d joint columns, dt %g ms\n", prefix, what, r->active, r->nv,
           r->ncols, 1e3 * DT);
    printf("#   %-18s %-20s %14s %10s %18s %22s %22s\n", "scheme", "method", "derivatives_us", "step_us",
           "derivatives/step", "max_rel_error_vs_fd", "vs_forward_fd");
    key("%s_active_contacts: %d\n", prefix, r->active);
    for (int i = 0; i < r->nfig; i++) {
        const figures *f = &r->fig[i];
        const char *method = f->analytical ? "analytical" : "forward differences";
        char e[32] = "-", ef[32] = "-";
        if (f->analytical) {
            snprintf(e, sizeof e, "%.2e", f->err);
            snprintf(ef, sizeof ef, "%.2e", f->err_fwd);
        }
        printf("#   %-18s %-20s %14.2f %10.2f %18.1f %22s %22s\n", f->scheme, method, f->deriv_us, f->step_us,
               f->deriv_us / f->step_us, e, ef);
        key("%s_%s_derivatives_us: %.2f\n", prefix, f->scheme, f->deriv_us);
        key("%s_%s_step_us: %.3f\n", prefix, f->scheme, f->step_us);
        if (f->analytical) {
            key("%s_%s_derivatives_max_rel_error_vs_fd: %.2e\n", prefix, f->scheme, f->err);
            key("%s_%s_derivatives_max_rel_error_vs_forward_fd: %.2e\n", prefix, f->scheme, f->err_fwd);
        }
        bench_doc_printf(&doc, "| %s | %d | `%s` | %s | %.1f | %.2f | %.0f× | %s | %s |\n", prefix, r->active, f->scheme,
                         method, f->deriv_us, f->step_us, f->deriv_us / f->step_us, f->analytical ? e : "",
                         f->analytical ? ef : "");
        if (strcmp(f->scheme, "expo") == 0) {
            key("%s_fd_derivatives_us: %.2f\n", prefix, f->fd_us);
            bench_doc_printf(&doc, "| %s | %d | `expo` | forward differences | %.1f | %.2f | %.0f× | | |\n", prefix, r->active,
                             f->fd_us, f->step_us, f->fd_us / f->step_us);
        }
    }
    fflush(stdout);
}

/* ---------------------------------------------------------------- the systems */

/* Solo standing on n contact points (up to 4: feet FL, HR, FR, HL; beyond: n / 4 per foot, the
 * foot's sphere and spheres of the same radius around it on the lower leg, 5 mm away in world x-y
 * at the configuration it starts from), `settle` steps of expo under the joint PD, whose torque at
 * the end is then held. It starts from qs (nq; NULL: the stance with the base sunk by the static
 * sinking m g / (n K)) at rest: the extra spheres are level with the feet there. (Settled long,
 * three or four stiff points under one floppy leg do not all stay down: a leg turning by 1e-3 rad
 * lifts a point 5 µm, as much as the weight sinks it.) */
static mbs_system *solo_on(const mbs_model *m, int n, const double *qs, int settle)
{
    static const char *const order[4] = {"FL_FOOT", "HR_FOOT", "FR_FOOT", "HL_FOOT"};
    double q0[19], v0[18] = {0}, tau[18] = {0};
    int iq[12], iv[12];
    const char *missing = solo_stance(m, q0, iq, iv);
    if (missing) die(missing, "not in solo12.urdf");
    if (qs) memcpy(q0, qs, sizeof q0);
    else q0[2] -= 9.81 * mbs_model_mass(m) / (n * K_GROUND);
    mbs_error err;
    mbs_system *s = mbs_system_new(m, n, &err);
    const mbs_material ground = {K_GROUND, K_GROUND, 300, 300, 1.0};
    const double up[3] = {0, 0, 1};
    if (!s || mbs_system_add_plane(s, up, 0.0, &ground, &err) != MBS_OK) die("solo", err.msg);
    mbs_data *d = mbs_data_new(m);
    int per = n > 4 ? n / 4 : 1;
    for (int k = 0; k < (n < 4 ? n : 4); k++)
        for (int j = 0; j < per; j++) {
            double off[3] = {0, 0, 0};
            if (j > 0) {
                /* a world x-y offset at q0 in the foot frame: R (column-major) transposed */
                double R[9], p[3], a = 6.283185307179586 * (j - 1) / (per - 1), w[3] = {0.005 * cos(a), 0.005 * sin(a), 0};
                mbs_compute_frame_placement(m, d, q0, mbs_frame_id(m, order[k]), R, p);
                for (int r = 0; r < 3; r++) off[r] = R[3 * r] * w[0] + R[3 * r + 1] * w[1] + R[3 * r + 2] * w[2];
            }
            if (mbs_system_add_contact(s, order[k], off, SOLO_FOOT_RADIUS, &err) < 0) die("solo", err.msg);
        }
    mbs_data_free(d);
    if (mbs_system_finalize(s, &err) != MBS_OK) die("solo", err.msg);
    mbs_system_set_state(s, q0, v0, 0);
    mbs_stepper *st = mbs_stepper_new("expo", s, NULL, 0, &err);
    if (!st) die("expo", err.msg);
    for (int k = 0; k <= settle; k++) {
        const double *q = mbs_system_q(s), *v = mbs_system_v(s);
        for (int j = 0; j < 12; j++) tau[iv[j]] = KP * (solo_posture[j] - q[iq[j]]) - KD * v[iv[j]];
        mbs_system_set_tau(s, tau);
        if (k < settle && mbs_stepper_step(st, DT, NULL) != MBS_OK) die("settling Solo", mbs_stepper_last_error(st)->msg);
    }
    mbs_stepper_free(st);
    return s;
}

/* A scenario at 1 ms steps and controller periods, with more overrides (NULL-ended). */
static mbs_sim *scenario_sim(const char *file, const char *const *more, mbs_scenario **sc)
{
    const char *ov[8] = {"stepper.dt=0.001", "controller.dt=0.001"};
    int n = 2;
    while (more && more[n - 2] && n < 8) { ov[n] = more[n - 2]; n++; }
    char path[1024];
    snprintf(path, sizeof path, "%s/scenarios/%s", MBS_SOURCE_DIR, file);
    mbs_error err;
    *sc = mbs_scenario_load(path, ov, n, &err);
    if (!*sc) die(file, err.msg);
    mbs_sim *sim = mbs_sim_new(*sc, &err);
    if (!sim) die(file, err.msg);
    return sim;
}

static void sim_period(mbs_sim *sim, const char *what)
{
    mbs_error err;
    if (mbs_sim_step(sim, 1, &err) != MBS_OK) die(what, err.msg);
}

/* ---------------------------------------------------------------- main */

int main(int argc, char **argv)
{
    tool_single_thread_blas(argv);
    tool_args args;
    int status = tool_parse_args(argc, argv, "bench_derivatives", MBS_SOURCE_DIR, NULL, &args);
    if (status) return status;
    if (args.quick) budget = 0.02;
    double t0 = tool_now();
    int with_mujoco = bench_doc_with_mujoco();
    bench_doc_open(&doc, args.data, "make bench-derivatives", !args.quick && with_mujoco);
    printf("# bench_derivatives: the cost of mbs_stepper_derivatives (one step's A = dx+/dx and B = dx+/dtau, "
           "x = (q, v) in the tangent space) on Solo standing, Solo mid-trot and Romeo standing%s\n",
           args.quick ? " (--quick: fewer repetitions)" : "");
    printf("# run %s; %s\n", doc.stamp, doc.machine);

    char urdf[1024];
    snprintf(urdf, sizeof urdf, "%s/urdf/solo12.urdf", MBS_SOURCE_DIR);
    mbs_error err;
    mbs_model *solo = mbs_model_from_urdf(urdf, NULL, &err);
    if (!solo) die(urdf, err.msg);

    /* every state first, then ROUNDS rounds over all of them: the cases, the contact counts and
     * MuJoCo take turns, so that a burst of load on the shared machine hits one round of all */
    enum { STAND, TROT, ROMEO, NCASES };
    set sets[NCASES + NCOUNTS];
    mbs_system *own[1 + NCOUNTS];
    own[0] = solo_on(solo, 4, NULL, SETTLE);
    double q_stand[19];
    memcpy(q_stand, mbs_system_q(own[0]), sizeof q_stand);
    set_open(&sets[STAND], own[0], NULL);

    mbs_scenario *sc_trot, *sc_romeo;
    mbs_sim *trot = scenario_sim("solo_trot.ini", NULL, &sc_trot);
    int two = 0;
    while (two < 10) {
        sim_period(trot, "solo_trot");
        double t = mbs_system_time(mbs_sim_system(trot));
        two = t >= 1.0 && active_contacts(mbs_sim_system(trot)) == 2 ? two + 1 : 0;
        if (t > 4) die("solo_trot", "no 10 ms on exactly two feet between 1 and 4 s");
    }
    char what[256];
    snprintf(what, sizeof what, "scenarios/solo_trot.ini by its controller at 1 ms to t = %.3f s, on two feet for 10 ms",
             mbs_system_time(mbs_sim_system(trot)));
    set_open(&sets[TROT], mbs_sim_system(trot), sc_trot);

    static const char *const romeo_ov[] = {"controller.type=pd", NULL};
    mbs_sim *romeo = scenario_sim("romeo_walk.ini", romeo_ov, &sc_romeo);
    for (int k = 0; k < SETTLE; k++) sim_period(romeo, "romeo_walk");
    set_open(&sets[ROMEO], mbs_sim_system(romeo), sc_romeo);

    for (int c = 0; c < NCOUNTS; c++) {
        own[1 + c] = solo_on(solo, COUNTS[c], q_stand, TABLE_STEPS);
        set_open(&sets[NCASES + c], own[1 + c], NULL);
    }

#ifdef MBS_HAVE_MUJOCO
    double mj_us = INFINITY;
    int ncon = 0;
    char version[32] = "", msg[512] = "";
    int iq[12], iv[12];
    double q0[19];
    solo_stance(solo, q0, iq, iv);
#endif
    for (int round = 0; round < ROUNDS; round++) {
        for (int k = 0; k < NCASES + NCOUNTS; k++) set_round(&sets[k]);
#ifdef MBS_HAVE_MUJOCO
        double us;
        if (mjderiv_transition_fd(urdf, DT, q0[2], solo_joints, solo_posture, KP, KD, SETTLE, args.quick ? 5 : 201, &us,
                                  &ncon, version, sizeof version, msg, sizeof msg) != 0)
            die("MuJoCo", msg);
        mj_us = fmin(mj_us, us);
#endif
    }

    bench_doc_begin(&doc, "derivatives-cases");
    bench_doc_printf(&doc, "| case | active contacts | scheme | method | derivatives µs | step µs | derivatives / step | "
                           "max rel. error vs extrapolated central differences | vs forward differences |\n"
                           "|---|---|---|---|---|---|---|---|---|\n");
    report("solo_stand", "Solo-12 standing on its 4 foot spheres under a joint PD, settled 0.3 s", &sets[STAND].res);
    report("solo_trot", what, &sets[TROT].res);
    report("romeo_stand", "scenarios/romeo_walk.ini on its 8 sole corners under its PD controller, settled 0.3 s",
           &sets[ROMEO].res);
    const figures *ex = find(&sets[STAND].res, "expo");
#ifdef MBS_HAVE_MUJOCO
    printf("\n## MuJoCo %s: mjd_transitionFD (forward differences, eps 1e-6) on Solo standing on its 4 foot spheres, "
           "a motor per joint (nu 12), dt %g ms, settled 0.3 s under the same PD; %d contacts\n", version, 1e3 * DT, ncon);
    printf("#   mjd_transitionFD %.2f us, expo's derivatives (MBS_DERIVATIVES_AUTO: its chain rule) %.2f us: %.2f times faster\n", mj_us,
           ex->deriv_us, mj_us / ex->deriv_us);
    key("mujoco_contacts: %d\n", ncon);
    key("mujoco_transition_fd_us: %.2f\n", mj_us);
    key("expo_derivatives_speedup_vs_mujoco_fd: %.3f\n", mj_us / ex->deriv_us);
    bench_doc_printf(&doc, "| solo_stand | %d | MuJoCo %s `mjd_transitionFD` | forward differences | %.1f | | | | |\n", ncon,
                     version, mj_us);
#else
    printf("\n## MuJoCo: skipped (not built in: apt-get install libmujoco-dev); mujoco_transition_fd_us and "
           "expo_derivatives_speedup_vs_mujoco_fd print as n/a\n");
    key("mujoco_contacts: n/a\nmujoco_transition_fd_us: n/a\nexpo_derivatives_speedup_vs_mujoco_fd: n/a\n");
    (void)ex;
#endif
    bench_doc_end(&doc, "derivatives-cases");

    /* the cost against the number of contacts */
    const case_res *byn[NCOUNTS];
    for (int c = 0; c < NCOUNTS; c++) byn[c] = &sets[NCASES + c].res;
    printf("\n## contacts: the standing Solo on n contact points (feet, then spheres on the lower legs around them), from "
           "solo_stand's configuration at rest, 5 steps to place the anchors; us per derivatives call\n#   %3s %6s", "n",
           "active");
    for (int i = 0; i < byn[0]->nfig; i++) printf(" %18s", byn[0]->fig[i].scheme);
    printf(" %18s %12s\n", "expo_step", "expo_ratio");
    bench_doc_begin(&doc, "derivatives-contacts");
    bench_doc_printf(&doc, "| contact points n | active |");
    for (int i = 0; i < byn[0]->nfig; i++)
        bench_doc_printf(&doc, " `%s` derivatives µs (%s) |", byn[0]->fig[i].scheme,
                         byn[0]->fig[i].analytical ? "analytical" : "forward differences");
    bench_doc_printf(&doc, " `expo` step µs | `expo` derivatives / step |\n|---|---|");
    for (int i = 0; i < byn[0]->nfig + 2; i++) bench_doc_printf(&doc, "---|");
    bench_doc_printf(&doc, "\n");
    for (int c = 0; c < NCOUNTS; c++) {
        const figures *e = find(byn[c], "expo");
        printf("#   %3d %6d", COUNTS[c], byn[c]->active);
        bench_doc_printf(&doc, "| %d | %d |", COUNTS[c], byn[c]->active);
        for (int i = 0; i < byn[c]->nfig; i++) {
            printf(" %18.2f", byn[c]->fig[i].deriv_us);
            bench_doc_printf(&doc, " %.1f |", byn[c]->fig[i].deriv_us);
            key("solo_contacts%d_%s_derivatives_us: %.2f\n", COUNTS[c], byn[c]->fig[i].scheme, byn[c]->fig[i].deriv_us);
        }
        printf(" %18.2f %12.1f\n", e->step_us, e->deriv_us / e->step_us);
        bench_doc_printf(&doc, " %.2f | %.0f× |\n", e->step_us, e->deriv_us / e->step_us);
    }
    bench_doc_end(&doc, "derivatives-contacts");
    for (int k = 0; k < NCASES + NCOUNTS; k++) set_close(&sets[k]);
    for (int k = 0; k < 1 + NCOUNTS; k++) mbs_system_free(own[k]);
    mbs_sim_free(trot);
    mbs_sim_free(romeo);
    mbs_scenario_free(sc_trot);
    mbs_scenario_free(sc_romeo);
    mbs_model_free(solo);
    printf("# total %.0f s\n\n", tool_now() - t0);
    bench_doc_finish(&doc, "derivatives", &keys);
    return 0;
}
