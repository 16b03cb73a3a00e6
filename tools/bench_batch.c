/* bench_batch.c — batch rollouts (mbs/batch.h): system steps per second for N in {1, 16, 256,
 * 4096} Solo-12 systems standing on the ground under a joint PD, stepped by expo at 2 ms on T = 1
 * and T = 2 threads, and MuJoCo's mj_step on the same robot beside it when libmujoco-dev is
 * installed (tools/batch_mujoco.c).
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
 * serial reads and PD), and the mujoco_ figures when MuJoCo is there.
 * Usage: bench_batch [--quick] */
#include <math.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "mbs.h"
#include "tool.h"
#ifdef MBS_HAVE_MUJOCO
#include "batch_mujoco.h"
#endif

#ifndef MBS_SOURCE_DIR
#define MBS_SOURCE_DIR "."
#endif

#define DT 2e-3
#define KP 6.0
#define KD 0.15
#define FOOT_RADIUS 0.0191
#define NSIZES 4
#define MAXREPS 9

static const int sizes[NSIZES] = {1, 16, 256, 4096};
static const char *const feet[4] = {"FL_FOOT", "FR_FOOT", "HL_FOOT", "HR_FOOT"};
static const char *const joints[12] = {"FL_HAA", "FL_HFE", "FL_KFE", "FR_HAA", "FR_HFE", "FR_KFE",
                                       "HL_HAA", "HL_HFE", "HL_KFE", "HR_HAA", "HR_HFE", "HR_KFE"};
static const double posture[12] = {0.1, 0.8, -1.6, -0.1, 0.8, -1.6, 0.1, -0.8, 1.6, -0.1, -0.8, 1.6};

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
    mbs_neutral(m, s->q0);
    for (int j = 0; j < 12; j++) {
        int id = mbs_joint_id(m, joints[j]);
        if (id < 0) die(joints[j], "no such joint in solo12.urdf");
        s->iq[j] = mbs_joint_idx_q(m, id);
        s->iv[j] = mbs_joint_idx_v(m, id);
        s->q0[s->iq[j]] = posture[j];
    }
    mbs_data *d = mbs_data_new(m);
    double lowest = INFINITY;
    for (int f = 0; f < 4; f++) {
        double R[9], p[3];
        mbs_compute_frame_placement(m, d, s->q0, mbs_frame_id(m, feet[f]), R, p);
        lowest = fmin(lowest, p[2]);
    }
    mbs_data_free(d);
    s->q0[2] = FOOT_RADIUS - lowest - 9.81 * mbs_model_mass(m) / (4 * 1e5);
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
        if (mbs_system_add_contact(sys, feet[f], NULL, FOOT_RADIUS, err) < 0) return MBS_ERR_ARG;
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
            for (int j = 0; j < 12; j++) tau[s->iv[j]] = KP * (posture[j] - q[s->iq[j]]) - KD * v[s->iv[j]];
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
    int quick = argc > 1 && strcmp(argv[1], "--quick") == 0;
    const double target = quick ? 2e4 : 1.5e5;   /* system steps per repetition */
    const int reps = quick ? 3 : 7;
    mbs_error err;
    mbs_model *m = mbs_model_from_urdf(MBS_SOURCE_DIR "/urdf/solo12.urdf", NULL, &err);
    if (!m) die("solo12", err.msg);
    solo s;
    solo_init(&s, m, sizes[NSIZES - 1]);
    long online = sysconf(_SC_NPROCESSORS_ONLN);
    double load0 = loadavg();
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
    int mj_ncon = 0;
    for (int k = 0; k < NSIZES; k++) {
        int n = sizes[k], nsteps = (int)fmax(10, ceil(target / n));
        double before = resident();
        rollout r[2];
        rollout_new(&r[0], &s, n, 1);
        if (k == NSIZES - 1) bytes = (resident() - before) / n;
        rollout_new(&r[1], &s, n, 2);
        int on[NCONF] = {1, 1, 0, 0, 1, 1};
#ifdef MBS_HAVE_MUJOCO
        char msg[1024];
        mjbatch *mb = mjbatch_new(MBS_SOURCE_DIR "/urdf/solo12.urdf", n, s.q0[2], posture, s.dq, DT, KP, KD, msg,
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

    double load1 = loadavg();
    const int L = NSIZES - 1;
    printf("online_processors: %ld\n", online);
    printf("load_average_start: %.2f\n", load0);
    printf("load_average_end: %.2f\n", load1);
    printf("batch_stepper: expo\n");
    printf("batch_dt_s: %g\n", DT);
    for (int k = 0; k < NSIZES; k++)
        for (int c = 0; c < 2; c++) printf("batch_n%d_steps_per_s_%dt: %.0f\n", sizes[k], c + 1, sps[k][MBS1 + c]);
    printf("batch_n: %d\n", sizes[L]);
    printf("batch_steps_per_s_1t: %.0f\n", sps[L][MBS1]);
    printf("batch_steps_per_s_2t: %.0f\n", sps[L][MBS2]);
    printf("batch_speedup_2_threads: %.3f\n", sps[L][MBS2] / sps[L][MBS1]);
    printf("batch_speedup_2_threads_median: %.3f\n", med[L][MBS2] / med[L][MBS1]);
    printf("batch_us_per_system_step_1t: %.3f\n", 1e6 / sps[L][MBS1]);
    printf("batch_step_only_steps_per_s_1t: %.0f\n", sps[L][STEP1]);
    printf("batch_step_only_steps_per_s_2t: %.0f\n", sps[L][STEP2]);
    printf("batch_step_only_speedup_2_threads: %.3f\n", sps[L][STEP2] / sps[L][STEP1]);
    printf("batch_bytes_per_system: %.0f\n", bytes);
    printf("batch_base_z_end_m: %.4f\n", base_z);
#ifdef MBS_HAVE_MUJOCO
    printf("mujoco_version: %s\n", mjbatch_version());
    for (int k = 0; k < NSIZES; k++)
        for (int c = 0; c < 2; c++) printf("mujoco_n%d_steps_per_s_%dt: %.0f\n", sizes[k], c + 1, sps[k][MJ1 + c]);
    printf("mujoco_steps_per_s_1t: %.0f\n", sps[L][MJ1]);
    printf("mujoco_steps_per_s_2t: %.0f\n", sps[L][MJ2]);
    printf("mujoco_speedup_2_threads: %.3f\n", sps[L][MJ2] / sps[L][MJ1]);
    printf("mujoco_speedup_2_threads_median: %.3f\n", med[L][MJ2] / med[L][MJ1]);
    printf("mujoco_us_per_system_step_1t: %.3f\n", 1e6 / sps[L][MJ1]);
    printf("mujoco_data_bytes_per_system: %.0f\n", mj_bytes);
    printf("mujoco_base_z_end_m: %.4f\n", mj_z);
    printf("mujoco_contacts_end: %d\n", mj_ncon);
    printf("batch_vs_mujoco_1t: %.3f\n", sps[L][MBS1] / sps[L][MJ1]);
    printf("batch_vs_mujoco_2t: %.3f\n", sps[L][MBS2] / sps[L][MJ2]);
#else
    (void)mj_z; (void)mj_bytes; (void)mj_ncon;
    printf("mujoco_steps_per_s_1t: n/a (install libmujoco-dev)\n");
#endif
    free(s.dq);
    mbs_model_free(m);
    return 0;
}
