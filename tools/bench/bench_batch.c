/* bench_batch.c — batch rollouts (mbs/batch.h): system steps per second for N in {1, 16, 256,
 * 4096} Solo-12 systems standing on the ground under a joint PD, stepped by expo at 2 ms on T = 1
 * and T = 2 threads, and MuJoCo's mj_step on the same robot beside it when libmujoco-dev is
 * installed (tools/bench/batch_mujoco.c).
 *
 * Each rollout step of the batch is what a vectorised controller does: read q and v of every
 * system (mbs_batch_q, mbs_batch_v), compute the PD torques on the calling thread, set them
 * (mbs_batch_set_tau) and step (mbs_batch_step); MuJoCo's computes each system's PD right before
 * its mj_step, on the thread that steps it. A measurement is N x steps / wall time, the best of
 * several repetitions (the median beside it); the two thread counts are measured alternately, so
 * that a load that comes and goes on a shared machine hits both alike. The load average is printed
 * before and after: figures taken on a busy machine say so.
 *
 * Ends with `key: value` lines: batch_n<N>_steps_per_s_<T>t for every N and T, then for the
 * largest N batch_steps_per_s_1t, batch_steps_per_s_2t, batch_speedup_2_threads, the same for the
 * time spent inside mbs_batch_step (batch_step_only_*: the library's part, without the caller's
 * serial reads and PD), and the mujoco_ figures when MuJoCo is there. A full run (not --quick) also
 * writes the tables of its section of docs/benchmarks.md into <data>/tables.md (tools/bench/bench_doc.h),
 * which tools/bench/bench_doc.py puts into the document (make bench-batch does both).
 * Usage: bench_batch [--quick] [--data DIR] */
#include <math.h>
#include <pthread.h>
#include <stdarg.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "mbs.h"
#include "bench_tool.h"
#include "bench_doc.h"
#include "solo_stance.h"
#ifdef MBS_HAVE_MUJOCO
#include "batch_mujoco.h"
#endif

#ifndef MBS_SOURCE_DIR
#define MBS_SOURCE_DIR "."
#endif

#define DT 2e-3
#define KP 6.0
#define KD 0.15
#define NSIZES 4
#define MAXREPS 9

static const int sizes[NSIZES] = {1, 16, 256, 4096};

/* The key: value lines, printed together at the end and written into the keys block. */
static bench_keys keys;
#define key(...) bench_key(&keys, __VA_ARGS__)

/* "134 386": a rate with a thin space between thousands, for the tables. */
static const char *rate(char *buf, size_t n, double x)
{
    if (!isfinite(x)) { snprintf(buf, n, "n/a"); return buf; }
    long v = lround(x);
    if (v >= 1000000) snprintf(buf, n, "%ld %03ld %03ld", v / 1000000, v / 1000 % 1000, v % 1000);
    else if (v >= 1000) snprintf(buf, n, "%ld %03ld", v / 1000, v % 1000);
    else snprintf(buf, n, "%ld", v);
    return buf;
}

typedef struct solo {
    const mbs_model *m;
    int iq[12], iv[12];
    double q0[19];      /* the posture, base at the height where the feet carry the weight */
    double *dq;         /* 12 x nmax: each system's joint offsets at the start */
} solo;

static void die(const char *what, const char *msg)
{
    fprintf(stderr, "bench_batch: %s: %s\n", what, msg);
    exit(1);
}

/* The posture on the ground: the base raised by kinematics until the lowest foot sphere touches
 * z = 0, then sunk by m g / (4 K), the feet's static sinking. */
static void solo_init(solo *s, const mbs_model *m, int nmax)
{
    s->m = m;
    const char *missing = solo_stance(m, s->q0, s->iq, s->iv);
    if (missing) die(missing, "not in solo12.urdf");
    s->q0[2] -= 9.81 * mbs_model_mass(m) / (4 * 1e5);
    s->dq = malloc(12 * (size_t)nmax * sizeof(double));
    unsigned long long seed = 12345;
    for (long k = 0; k < 12L * nmax; k++) {   /* xorshift: offsets in [-0.03, 0.03) rad */
        seed ^= seed << 13;
        seed ^= seed >> 7;
        seed ^= seed << 17;
        s->dq[k] = 0.06 * ((double)(seed >> 11) / 9007199254740992.0 - 0.5);
    }
}

/* System i: the paper's ground (K = 1e5 N/m, B = 300 N s/m, mu = 1), a sphere on each foot, the
 * posture with its own joint offsets, at rest. */
static int setup(mbs_system *sys, int i, void *user, mbs_error *err)
{
    const solo *s = user;
    const mbs_material ground = {1e5, 1e5, 300, 300, 1.0};
    const double up[3] = {0, 0, 1};
    if (mbs_system_add_plane(sys, up, 0.0, &ground, err) != MBS_OK) return MBS_ERR_ARG;
    for (int f = 0; f < 4; f++)
        if (mbs_system_add_contact(sys, solo_feet[f], NULL, SOLO_FOOT_RADIUS, err) < 0) return MBS_ERR_ARG;
    double q[19];
    memcpy(q, s->q0, sizeof q);
    for (int j = 0; j < 12; j++) q[s->iq[j]] += s->dq[j + 12 * i];
    mbs_system_set_state(sys, q, NULL, 0.0);
    return MBS_OK;
}

typedef struct rollout {
    mbs_batch *b;
    double *q, *v, *tau;
} rollout;

static void rollout_new(rollout *r, solo *s, int n, int nthreads)
{
    mbs_batch_config cfg = {0};
    cfg.stepper = "expo";
    cfg.max_contacts = 4;
    cfg.nthreads = nthreads;
    cfg.setup = setup;
    cfg.user = s;
    mbs_error err;
    r->b = mbs_batch_new(s->m, n, &cfg, &err);
    if (!r->b) die("mbs_batch_new", err.msg);
    r->q = malloc((size_t)n * 19 * sizeof(double));
    r->v = malloc((size_t)n * 18 * sizeof(double));
    r->tau = calloc((size_t)n * 18, sizeof(double));
}

static void rollout_free(rollout *r)
{
    mbs_batch_free(r->b);
    free(r->q);
    free(r->v);
    free(r->tau);
}

/* nsteps rollout steps: read the states, PD torques, set them, step; returns the wall time (s),
 * and in *in_step (may be NULL) the part spent in mbs_batch_step, the library's side. */
static double rollout_run(rollout *r, const solo *s, int nsteps, double *in_step)
{
    int n = mbs_batch_size(r->b);
    mbs_error err;
    double t0 = tool_now(), stepping = 0;
    for (int k = 0; k < nsteps; k++) {
        mbs_batch_q(r->b, r->q);
        mbs_batch_v(r->b, r->v);
        for (int i = 0; i < n; i++) {
            const double *q = r->q + 19 * (size_t)i, *v = r->v + 18 * (size_t)i;
            double *tau = r->tau + 18 * (size_t)i;
            for (int j = 0; j < 12; j++) tau[s->iv[j]] = KP * (solo_posture[j] - q[s->iq[j]]) - KD * v[s->iv[j]];
        }
        mbs_batch_set_tau(r->b, r->tau);
        double t1 = tool_now();
        if (mbs_batch_step(r->b, DT, &err) != MBS_OK) die("mbs_batch_step", err.msg);
        stepping += tool_now() - t1;
    }
    if (in_step) *in_step = stepping;
    return tool_now() - t0;
}

/* The best of n repetitions (system steps per second): on a shared machine other programs only
 * ever slow a repetition down, so the fastest is the nearest to the machine alone. The median,
 * printed beside it, says how steady the runs were. */
static double best(const double *x, int n)
{
    double b = 0;
    for (int i = 0; i < n; i++) b = fmax(b, x[i]);
    return b;
}

static double loadavg(void)
{
    double l = NAN;
    FILE *f = fopen("/proc/loadavg", "r");
    if (f) {
        if (fscanf(f, "%lf", &l) != 1) l = NAN;
        fclose(f);
    }
    return l;
}

/* Whether both cores are ours: a CPU-bound loop run on two threads side by side against the same
 * loop alone, the median of 3 such pairs; about 1 when both cores are free, about 2 when another
 * program keeps one of them busy. */
static void *spin(void *arg)
{
    volatile double x = 0;
    for (long i = 0; i < 60000000L; i++) x += 1e-9;
    *(double *)arg = x;
    return NULL;
}

static double spin_ratio(void)
{
    double r[3];
    for (int k = 0; k < 3; k++) {
        double out[2], t[2];
        for (int n = 1; n <= 2; n++) {
            pthread_t th[2];
            double t0 = tool_now();
            for (int i = 0; i < n; i++) pthread_create(&th[i], NULL, spin, &out[i]);
            for (int i = 0; i < n; i++) pthread_join(th[i], NULL);
            t[n - 1] = tool_now() - t0;
        }
        r[k] = t[1] / t[0];
    }
    return tool_median(r, 3);
}

/* resident memory (bytes) */
static double resident(void)
{
    long pages = 0, res = 0;
    FILE *f = fopen("/proc/self/statm", "r");
    if (f) {
        if (fscanf(f, "%ld %ld", &pages, &res) != 2) res = 0;
        fclose(f);
    }
    return (double)res * (double)sysconf(_SC_PAGESIZE);
}

int main(int argc, char **argv)
{
    tool_single_thread_blas(argv);
    tool_args args;
    int status = tool_parse_args(argc, argv, "bench_batch", MBS_SOURCE_DIR, NULL, &args);
    if (status) return status;
    const int quick = args.quick;
    bench_doc doc;
    bench_doc_open(&doc, args.data, "make bench-batch", !quick && bench_doc_with_mujoco());
    const double target = quick ? 2e4 : 1.5e5;   /* system steps per repetition */
    const int reps = quick ? 3 : 7;
    mbs_error err;
    mbs_model *m = mbs_model_from_urdf(MBS_SOURCE_DIR "/urdf/solo12.urdf", NULL, &err);
    if (!m) die("solo12", err.msg);
    solo s;
    solo_init(&s, m, sizes[NSIZES - 1]);
    long online = sysconf(_SC_NPROCESSORS_ONLN);
    double load0 = loadavg(), t_start = tool_now(), spin0 = spin_ratio();
    printf("# bench_batch: batch rollouts of N Solo-12 systems on 1 and 2 threads%s\n", quick ? " (--quick)" : "");
    printf("# run %s; %s\n", doc.stamp, doc.machine);
    printf("# a CPU-bound loop on two threads side by side takes %.2f x its time alone (1: both cores free)\n", spin0);
    printf("# Solo-12 standing under a joint PD (kp %g, kd %g), expo at %g s, ground K = 1e5 N/m, B = 300 N s/m\n",
           KP, KD, DT);
    printf("# system steps per second, best of %d repetitions of ~%.0f system steps; the configurations in turn\n",
           reps, target);
    /* per N, the configurations measured in turn each repetition (rotating which goes first): the
     * batch on 1 and 2 threads, MuJoCo on 1 and 2; STEP1 and STEP2 are the batch's time in
     * mbs_batch_step alone, from the same runs */
    enum { MBS1, MBS2, MJ1, MJ2, NRUN, STEP1 = NRUN, STEP2, NCONF };
    double sps[NSIZES][NCONF], med[NSIZES][NCONF], base_z = NAN, bytes = NAN;
    double mj_z = NAN, mj_bytes = NAN;
    int mj_ncon = 0, steps_of[NSIZES];
    for (int k = 0; k < NSIZES; k++) {
        int n = sizes[k], nsteps = (int)fmax(10, ceil(target / n));
        steps_of[k] = nsteps;
        double before = resident();
        rollout r[2];
        rollout_new(&r[0], &s, n, 1);
        if (k == NSIZES - 1) bytes = (resident() - before) / n;
        rollout_new(&r[1], &s, n, 2);
        int on[NCONF] = {1, 1, 0, 0, 1, 1};
#ifdef MBS_HAVE_MUJOCO
        char msg[1024];
        mjbatch *mb = mjbatch_new(MBS_SOURCE_DIR "/urdf/solo12.urdf", n, s.q0[2], solo_posture, s.dq, DT, KP, KD, msg,
                                  sizeof msg);
        if (!mb) die("MuJoCo", msg);
        mjbatch_run(mb, 1, nsteps / 5 + 1);   /* warm up */
        on[MJ1] = on[MJ2] = 1;
#endif
        for (int c = 0; c < 2; c++) rollout_run(&r[c], &s, nsteps / 5 + 1, NULL);   /* warm up */
        double t[NCONF][MAXREPS];
        for (int rep = 0; rep < reps; rep++)
            for (int j = 0; j < NRUN; j++) {
                int c = (rep + j) % NRUN;
                if (!on[c]) continue;
                double el = NAN, in_step;
                if (c == MBS1 || c == MBS2) {
                    el = rollout_run(&r[c - MBS1], &s, nsteps, &in_step);
                    t[STEP1 + c - MBS1][rep] = (double)n * nsteps / in_step;
                }
#ifdef MBS_HAVE_MUJOCO
                if (c == MJ1 || c == MJ2) el = mjbatch_run(mb, c - MJ1 + 1, nsteps);
#endif
                t[c][rep] = (double)n * nsteps / el;
            }
        for (int c = 0; c < NCONF; c++) {
            sps[k][c] = on[c] ? best(t[c], reps) : NAN;
            med[k][c] = on[c] ? tool_median(t[c], reps) : NAN;
        }
        printf("# N = %4d: %6d steps, %.4g and %.4g system steps/s, speed-up %.3f (medians %.4g and %.4g, %.3f)\n", n,
               nsteps, sps[k][MBS1], sps[k][MBS2], sps[k][MBS2] / sps[k][MBS1], med[k][MBS1], med[k][MBS2],
               med[k][MBS2] / med[k][MBS1]);
        printf("# N = %4d, in mbs_batch_step: %.4g and %.4g system steps/s, speed-up %.3f\n", n, sps[k][STEP1],
                   sps[k][STEP2], sps[k][STEP2] / sps[k][STEP1]);
        if (on[MJ1])
            printf("# MuJoCo N = %4d: %.4g and %.4g system steps/s, speed-up %.3f (medians %.4g and %.4g, %.3f)\n", n,
                   sps[k][MJ1], sps[k][MJ2], sps[k][MJ2] / sps[k][MJ1], med[k][MJ1], med[k][MJ2], med[k][MJ2] / med[k][MJ1]);
        fflush(stdout);
        if (k == NSIZES - 1) base_z = mbs_system_q(mbs_batch_system(r[1].b, n - 1))[2];
#ifdef MBS_HAVE_MUJOCO
        if (k == NSIZES - 1) {
            mj_z = mjbatch_base_z(mb, n - 1);
            mj_ncon = mjbatch_ncon(mb, n - 1);
            mj_bytes = (double)mjbatch_data_bytes(mb);
        }
        mjbatch_free(mb);
#endif
        rollout_free(&r[0]);
        rollout_free(&r[1]);
    }

    double load1 = loadavg(), spin1 = spin_ratio();
    const int L = NSIZES - 1;
    printf("# after the run: a CPU-bound loop on two threads side by side takes %.2f x its time alone\n", spin1);
    printf("# total %.0f s\n\n", tool_now() - t_start);
    char b1[64], b2[64], b3[64], b4[64];
    key("online_processors: %ld\n", online);
    key("load_average_start: %.2f\n", load0);
    key("load_average_end: %.2f\n", load1);
    key("two_spinners_over_one_start: %.3f\n", spin0);
    key("two_spinners_over_one_end: %.3f\n", spin1);
    key("batch_stepper: expo\n");
    key("batch_dt_s: %g\n", DT);
    for (int k = 0; k < NSIZES; k++)
        for (int c = 0; c < 2; c++) key("batch_n%d_steps_per_s_%dt: %.0f\n", sizes[k], c + 1, sps[k][MBS1 + c]);
    key("batch_n: %d\n", sizes[L]);
    key("batch_steps_per_s_1t: %.0f\n", sps[L][MBS1]);
    key("batch_steps_per_s_2t: %.0f\n", sps[L][MBS2]);
    key("batch_speedup_2_threads: %.3f\n", sps[L][MBS2] / sps[L][MBS1]);
    key("batch_speedup_2_threads_median: %.3f\n", med[L][MBS2] / med[L][MBS1]);
    key("batch_us_per_system_step_1t: %.3f\n", 1e6 / sps[L][MBS1]);
    key("batch_step_only_steps_per_s_1t: %.0f\n", sps[L][STEP1]);
    key("batch_step_only_steps_per_s_2t: %.0f\n", sps[L][STEP2]);
    key("batch_step_only_speedup_2_threads: %.3f\n", sps[L][STEP2] / sps[L][STEP1]);
    key("batch_bytes_per_system: %.0f\n", bytes);
    key("batch_base_z_end_m: %.4f\n", base_z);
#ifdef MBS_HAVE_MUJOCO
    key("mujoco_version: %s\n", mjbatch_version());
    for (int k = 0; k < NSIZES; k++)
        for (int c = 0; c < 2; c++) key("mujoco_n%d_steps_per_s_%dt: %.0f\n", sizes[k], c + 1, sps[k][MJ1 + c]);
    key("mujoco_steps_per_s_1t: %.0f\n", sps[L][MJ1]);
    key("mujoco_steps_per_s_2t: %.0f\n", sps[L][MJ2]);
    key("mujoco_speedup_2_threads: %.3f\n", sps[L][MJ2] / sps[L][MJ1]);
    key("mujoco_speedup_2_threads_median: %.3f\n", med[L][MJ2] / med[L][MJ1]);
    key("mujoco_us_per_system_step_1t: %.3f\n", 1e6 / sps[L][MJ1]);
    key("mujoco_data_bytes_per_system: %.0f\n", mj_bytes);
    key("mujoco_base_z_end_m: %.4f\n", mj_z);
    key("mujoco_contacts_end: %d\n", mj_ncon);
    key("batch_vs_mujoco_1t: %.3f\n", sps[L][MBS1] / sps[L][MJ1]);
    key("batch_vs_mujoco_2t: %.3f\n", sps[L][MBS2] / sps[L][MJ2]);
    const int have_mj = 1;
#else
    (void)mj_z; (void)mj_bytes; (void)mj_ncon;
    key("mujoco_steps_per_s_1t: n/a (install libmujoco-dev)\n");
    const int have_mj = 0;
#endif
    fputs(keys.text, stdout);

    /* the section's tables */
    bench_doc_keys(&doc, "batch", keys.text);

    bench_doc_begin(&doc, "batch-table");
    bench_doc_printf(&doc, "| N | steps per repetition | mbs 1t | mbs 2t | speed-up (median) | in `mbs_batch_step` | MuJoCo 1t | "
                     "MuJoCo 2t | speed-up (median) | mbs / MuJoCo, 1t / 2t |\n|---|---|---|---|---|---|---|---|---|---|\n");
    for (int k = 0; k < NSIZES; k++) {
        bench_doc_printf(&doc, "| %d | %d | %s | %s | %.3f (%.3f) | %.3f |", sizes[k], steps_of[k], rate(b1, sizeof b1, sps[k][MBS1]),
                         rate(b2, sizeof b2, sps[k][MBS2]), sps[k][MBS2] / sps[k][MBS1], med[k][MBS2] / med[k][MBS1],
                         sps[k][STEP2] / sps[k][STEP1]);
        if (have_mj)
            bench_doc_printf(&doc, " %s | %s | %.3f (%.3f) | %.3f / %.3f |\n", rate(b3, sizeof b3, sps[k][MJ1]),
                             rate(b4, sizeof b4, sps[k][MJ2]), sps[k][MJ2] / sps[k][MJ1], med[k][MJ2] / med[k][MJ1],
                             sps[k][MBS1] / sps[k][MJ1], sps[k][MBS2] / sps[k][MJ2]);
        else
            bench_doc_printf(&doc, " n/a | n/a | n/a | n/a |\n");
    }
    bench_doc_printf(&doc, "\nSystem steps per second, the best of %d repetitions (the speed-ups' medians of the repetitions in "
                     "parentheses); \"in `mbs_batch_step`\" is the speed-up of the time spent inside the call alone "
                     "(`batch_step_only_speedup_2_threads` at N = %d). Load average %.2f at the start, %.2f at the end, %ld CPUs "
                     "online; a CPU-bound loop on two threads side by side took %.2f× its time alone before the run and %.2f× after "
                     "it (`two_spinners_over_one_start`, `_end`: 1 when both cores are free, 2 when another program keeps one "
                     "busy): %s\n", reps, sizes[L], load0, load1, online, spin0, spin1,
                     fmax(spin0, spin1) < 1.15 ? "both cores were free, as far as these two checks see."
                                               : "**the cores were shared with another program**, so the 2-thread figures of this "
                                                 "run measure that sharing more than the library.");
    bench_doc_end(&doc, "batch-table");

    /* the figures the notes of the section quote */
    const double sp = sps[L][MBS2] / sps[L][MBS1], spm = med[L][MBS2] / med[L][MBS1];
    const double sp_step = sps[L][STEP2] / sps[L][STEP1];
    double small_lo = INFINITY, small_hi = 0;   /* µs per system step, 1 thread, N <= 16 */
    for (int k = 0; k < NSIZES; k++)
        if (sizes[k] <= 16) {
            small_lo = fmin(small_lo, 1e6 / sps[k][MBS1]);
            small_hi = fmax(small_hi, 1e6 / sps[k][MBS1]);
        }
    bench_doc_begin(&doc, "batch-notes");
    bench_doc_printf(&doc, "- goal, a 2-thread speed-up of at least 1.8 at N = %d: best of the repetitions %.3f (**%s**), their median "
                     "%.3f (**%s**); inside `mbs_batch_step` %.3f, the difference (%+.1f %%) being the caller's serial part of a "
                     "rollout step (reading q and v, the PD, setting τ);\n", sizes[L], sp, sp >= 1.8 ? "met" : "not met", spm,
                     spm >= 1.8 ? "met" : "not met", sp_step, 100 * (sp - sp_step) / sp_step);
    bench_doc_printf(&doc, "- N = 16: two threads give %.2f× (mbs)", sps[1][MBS2] / sps[1][MBS1]);
    if (have_mj) bench_doc_printf(&doc, ", %.2f× (MuJoCo)", sps[1][MJ2] / sps[1][MJ1]);
    bench_doc_printf(&doc, "; N = 256: %.2f× (mbs)", sps[2][MBS2] / sps[2][MBS1]);
    if (have_mj) bench_doc_printf(&doc, ", %.2f× (MuJoCo)", sps[2][MJ2] / sps[2][MJ1]);
    bench_doc_printf(&doc, "; mbs's 1-thread rate at N = 256: best %s, median %s steps/s;\n", rate(b1, sizeof b1, sps[2][MBS1]),
                     rate(b2, sizeof b2, med[2][MBS1]));
    bench_doc_printf(&doc, "- memory: a system takes %.0f kB (`batch_bytes_per_system`), %d systems %.0f MB; a system step costs "
                     "%.1f µs on one thread at N = %d against %.1f–%.1f µs at N ≤ 16;\n", bytes / 1e3, sizes[L],
                     bytes * sizes[L] / 1e6, 1e6 / sps[L][MBS1], sizes[L], small_lo, small_hi);
    if (have_mj)
        bench_doc_printf(&doc, "- beside MuJoCo: mbs at %.2f× MuJoCo's rate on one thread and %.2f× on two at N = %d, %.2f× for a "
                         "single system; the robot stands at %.3f m in MuJoCo, %.3f m in mbs; an mjData is %.0f kB.\n",
                         sps[L][MBS1] / sps[L][MJ1], sps[L][MBS2] / sps[L][MJ2], sizes[L], sps[0][MBS1] / sps[0][MJ1], mj_z, base_z,
                         mj_bytes / 1e3);
    else
        bench_doc_printf(&doc, "- MuJoCo was not installed for this run (libmujoco-dev): no comparison.\n");
    bench_doc_end(&doc, "batch-notes");
    bench_doc_output(&doc, "batch");
    bench_doc_close(&doc);
    free(s.dq);
    mbs_model_free(m);
    return 0;
}
