/* test_batch.c — batch rollouts (mbs/batch.h): eight Solo-12 systems, standing or trotting from
 * different starts on grounds of different stiffness, stepped by expo at 2 ms under a joint PD
 * computed from q and v each step, on 1, 2, 3 and 8 threads, must follow bit for bit the runs of
 * the same systems stepped alone by mbs_stepper_step; stepping allocates nothing; a system that
 * diverges is reported by its index and left out while the others go on. Linked with the
 * allocator wrap (the Makefile's WRAP_ALLOC). */
#include <math.h>
#include <stdlib.h>
#include <string.h>

#include "check.h"
#include "testmodels.h"

#include "alloc_count.h"
#include "../tools/bench/solo_stance.h"

#define NSYS 8
#define NSTEPS 200
#define DT 2e-3
#define PI 3.14159265358979323846


typedef struct solo {
    const mbs_model *m;
    int iq[12], iv[12];   /* each joint's index in q and in v */
    double q0[19];        /* the standing posture on the ground, feet touching */
} solo;

/* The stance of tools/bench/solo_stance.h (the batch benchmark's): the posture with the base raised
 * until the lowest foot sphere touches z = 0. */
static int solo_init(solo *s, const mbs_model *m)
{
    s->m = m;
    return solo_stance(m, s->q0, s->iq, s->iv) ? -1 : 0;
}

/* System i: the ground of its own stiffness (proportional damping for even i, which expo steps in
 * closed form; a fixed damping for odd i, which takes the Padé exponential), four foot spheres,
 * and its own start: the base lower or higher, moving, a joint off its posture. */
static int setup(mbs_system *sys, int i, void *user, mbs_error *err)
{
    const solo *s = user;
    double K = 5e4 * (1 + 0.5 * i), Kt = 0.8 * K;
    mbs_material ground = {K, Kt, i % 2 ? 250 : 3e-3 * K, i % 2 ? 250 : 3e-3 * Kt, 0.8 + 0.05 * i};
    const double up[3] = {0, 0, 1};
    if (mbs_system_add_plane(sys, up, 0.0, &ground, err) != MBS_OK) return err ? err->code : MBS_ERR_ARG;
    for (int f = 0; f < 4; f++)
        if (mbs_system_add_contact(sys, solo_feet[f], NULL, SOLO_FOOT_RADIUS, err) < 0) return err ? err->code : MBS_ERR_ARG;
    double q[19], v[18] = {0};
    memcpy(q, s->q0, sizeof q);
    q[2] += 0.004 * (i % 3) - 9.81 * mbs_model_mass(s->m) / (4 * K);   /* dropped, or sunk to carry the weight */
    q[s->iq[(5 * i) % 12]] += 0.05 * (i % 4);
    v[0] = 0.1 * (i % 2);
    v[5] = 0.2 * (i % 3 == 1);
    mbs_system_set_state(sys, q, v, 0.0);
    return MBS_OK;
}

/* System i of a larger batch built as system i % NSYS. */
static int setup_repeated(mbs_system *sys, int i, void *user, mbs_error *err) { return setup(sys, i % NSYS, user, err); }

/* The control law from (t, q, v): a joint PD about the posture, plus for odd systems a trot-like
 * swing of the knees and hips, the diagonal pairs in opposite phase. */
static void controller(const solo *s, int i, double t, const double *q, const double *v, double *tau)
{
    const double kp = 6, kd = 0.15;
    memset(tau, 0, 18 * sizeof(double));
    for (int j = 0; j < 12; j++) {
        int leg = j / 3, diagonal = leg == 0 || leg == 3;
        double swing = i % 2 && j % 3 ? 0.25 * sin(2 * PI * 2.5 * t + (diagonal ? 0 : PI)) : 0;
        tau[s->iv[j]] = kp * (solo_posture[j] + swing - q[s->iq[j]]) - kd * v[s->iv[j]];
    }
}

/* The reference: each system alone, built by the same setup, stepped by mbs_stepper_step; its q
 * and v after every step and its contact forces at the end. */
typedef struct reference {
    double q[NSYS][NSTEPS][19], v[NSYS][NSTEPS][18];
    double f[NSYS][12];
} reference;

static int run_alone(const solo *s, reference *ref)
{
    for (int i = 0; i < NSYS; i++) {
        mbs_error err;
        mbs_system *sys = mbs_system_new(s->m, 4, &err);
        CHECK(sys && setup(sys, i, (void *)s, &err) == MBS_OK, "system %d: %s", i, err.msg);
        mbs_system_finalize(sys, NULL);
        mbs_stepper *st = sys ? mbs_stepper_new("expo", sys, NULL, 0, &err) : NULL;
        CHECK(st != NULL, "expo: %s", err.msg);
        if (!st) { mbs_system_free(sys); return -1; }
        double tau[18];
        for (int k = 0; k < NSTEPS; k++) {
            controller(s, i, mbs_system_time(sys), mbs_system_q(sys), mbs_system_v(sys), tau);
            mbs_system_set_tau(sys, tau);
            int rc = mbs_stepper_step(st, DT, NULL);
            CHECK(rc == MBS_OK, "system %d alone, step %d: %s", i, k, mbs_stepper_last_error(st)->msg);
            memcpy(ref->q[i][k], mbs_system_q(sys), sizeof ref->q[i][k]);
            memcpy(ref->v[i][k], mbs_system_v(sys), sizeof ref->v[i][k]);
        }
        for (int c = 0; c < 4; c++) {
            mbs_contact_info ci;
            mbs_system_contact(sys, c, &ci);
            memcpy(ref->f[i] + 3 * c, ci.force, sizeof ci.force);
        }
        mbs_stepper_free(st);
        mbs_system_free(sys);
    }
    return 0;
}

static mbs_batch *solo_batch(solo *s, int n, int nthreads, mbs_error *err)
{
    mbs_batch_config cfg = {0};
    cfg.stepper = "expo";
    cfg.max_contacts = 4;
    cfg.nthreads = nthreads;
    cfg.setup = n > NSYS ? setup_repeated : setup;
    cfg.user = s;
    return mbs_batch_new(s->m, n, &cfg, err);
}

/* The batch on T threads against the systems alone: every q and v after every step, bit for bit. */
static void compare(solo *s, const reference *ref, int nthreads)
{
    mbs_error err;
    mbs_batch *b = solo_batch(s, NSYS, nthreads, &err);
    CHECK(b != NULL, "batch on %d threads: %s", nthreads, err.msg);
    if (!b) return;
    CHECK(mbs_batch_size(b) == NSYS && mbs_batch_nthreads(b) == nthreads && mbs_batch_ncontacts(b) == 4,
          "size %d, threads %d, contacts %d", mbs_batch_size(b), mbs_batch_nthreads(b), mbs_batch_ncontacts(b));
    static double q[19 * NSYS], v[18 * NSYS], tau[18 * NSYS], t[NSYS], f[12 * NSYS];
    int diff_q = -1, diff_v = -1;
    for (int k = 0; k < NSTEPS; k++) {
        mbs_batch_q(b, q);
        mbs_batch_v(b, v);
        mbs_batch_time(b, t);
        for (int i = 0; i < NSYS; i++) controller(s, i, t[i], q + 19 * i, v + 18 * i, tau + 18 * i);
        mbs_batch_set_tau(b, tau);
        int rc = mbs_batch_step(b, DT, &err);
        CHECK(rc == MBS_OK, "%d threads, step %d: %s", nthreads, k, err.msg);
        mbs_batch_q(b, q);
        mbs_batch_v(b, v);
        for (int i = 0; i < NSYS; i++) {
            if (diff_q < 0 && memcmp(q + 19 * i, ref->q[i][k], sizeof ref->q[i][k])) diff_q = k * NSYS + i;
            if (diff_v < 0 && memcmp(v + 18 * i, ref->v[i][k], sizeof ref->v[i][k])) diff_v = k * NSYS + i;
        }
    }
    CHECK(diff_q < 0, "%d threads: q of system %d differs from its run alone from step %d", nthreads, diff_q % NSYS,
          diff_q / NSYS);
    CHECK(diff_v < 0, "%d threads: v of system %d differs from its run alone from step %d", nthreads, diff_v % NSYS,
          diff_v / NSYS);
    mbs_batch_contact_forces(b, f);
    CHECK(memcmp(f, ref->f, sizeof f) == 0, "%d threads: contact forces differ from the runs alone", nthreads);
    mbs_batch_time(b, t);
    CHECK(t[NSYS - 1] == NSTEPS * DT || fabs(t[NSYS - 1] - NSTEPS * DT) < 1e-12, "time %g", t[NSYS - 1]);
    /* the runs are physical: every robot is up, the standing ones carry their weight on the ground */
    double weight = 9.81 * mbs_model_mass(s->m);
    for (int i = 0; i < NSYS; i++) {
        CHECK(q[19 * i + 2] > 0.15 && q[19 * i + 2] < 0.30, "system %d: base height %g", i, q[19 * i + 2]);
        if (i % 2) continue;
        double fz = 0;
        for (int c = 0; c < 4; c++) fz += f[12 * i + 3 * c + 2];
        CHECK(fabs(fz - weight) < 0.2 * weight, "system %d: the ground carries %g N of %g N", i, fz, weight);
    }
    mbs_batch_free(b);
}

static solo solo_model;
static reference ref;

static void test_bitwise_equal(void)
{
    solo *s = &solo_model;
    if (run_alone(s, &ref) != 0) return;
    /* more threads than cores, and more than systems, shuffle the order in which systems are taken */
    static const int threads[] = {1, 2, 3, 8};
    for (int k = 0; k < 4; k++) compare(s, &ref, threads[k]);
}

/* Repeated runs on 2 threads take the systems in different orders; every one ends on the same bits. */
static void test_repeatable(void)
{
    solo *s = &solo_model;
    mbs_error err;
    static double q0[19 * 64], q[19 * 64], tau[18 * 64];
    for (int rep = 0; rep < 3; rep++) {
        mbs_batch *b = solo_batch(s, 64, 2, &err);
        CHECK(b != NULL, "%s", err.msg);
        if (!b) return;
        for (int k = 0; k < 50; k++) {
            mbs_batch_q(b, q);
            static double v[18 * 64], t[64];
            mbs_batch_v(b, v);
            mbs_batch_time(b, t);
            for (int i = 0; i < 64; i++) controller(s, i % NSYS, t[i], q + 19 * i, v + 18 * i, tau + 18 * i);
            mbs_batch_set_tau(b, tau);
            CHECK(mbs_batch_step(b, DT, &err) == MBS_OK, "%s", err.msg);
        }
        mbs_batch_q(b, rep ? q : q0);
        if (rep) CHECK(memcmp(q, q0, sizeof q) == 0, "run %d of 64 systems on 2 threads differs from the first", rep);
        /* systems i and i + 8 are built alike: same bits whichever thread took them */
        for (int i = NSYS; i < 64; i++)
            CHECK(memcmp(q0 + 19 * i, q0 + 19 * (i % NSYS), 19 * sizeof(double)) == 0, "system %d differs from %d", i,
                  i % NSYS);
        mbs_batch_free(b);
    }
}

/* After creation, setting torques, stepping and reading results allocate nothing, on one thread
 * and on two. */
static void test_no_allocation(void)
{
    ALLOC_GUARD();
    solo *s = &solo_model;
    for (int nthreads = 1; nthreads <= 2; nthreads++) {
        mbs_error err;
        mbs_batch *b = solo_batch(s, 16, nthreads, &err);
        CHECK(b != NULL, "%s", err.msg);
        if (!b) return;
        static double q[19 * 16], v[18 * 16], tau[18 * 16], t[16], f[12 * 16];
        long before = allocations;
        for (int k = 0; k < 20; k++) {
            mbs_batch_q(b, q);
            mbs_batch_v(b, v);
            mbs_batch_time(b, t);
            for (int i = 0; i < 16; i++) controller(s, i % NSYS, t[i], q + 19 * i, v + 18 * i, tau + 18 * i);
            mbs_batch_set_tau(b, tau);
            CHECK(mbs_batch_step(b, DT, &err) == MBS_OK, "%s", err.msg);
            mbs_batch_contact_forces(b, f);
        }
        mbs_batch_set_state(b, 3, solo_model.q0, NULL, 0.0);
        mbs_batch_step(b, DT, &err);
        CHECK(allocations == before, "%d thread(s): %ld allocations in 21 batch steps", nthreads, allocations - before);
        mbs_batch_free(b);
    }
}

/* The impedance handed over by mbs_batch_set_impedance and held over mbs_batch_step_n's steps (a
 * vectorised environment's control period: the PD acts at every step) against each system alone
 * with mbs_system_set_impedance and mbs_stepper_step, bit for bit, on 1 and 2 threads; a material set
 * per system (mbs_batch_set_material) is the one its steps use; none of it allocates. */
#define PERIOD 5
static void period_targets(const solo *s, int i, int period, double *kp, double *kd, double *qref)
{
    memset(kp, 0, 18 * sizeof(double));
    memset(kd, 0, 18 * sizeof(double));
    memcpy(qref, s->q0, 19 * sizeof(double));
    for (int j = 0; j < 12; j++) {
        kp[s->iv[j]] = 5 + 0.5 * (i % 3);
        kd[s->iv[j]] = 0.1 + 0.02 * (i % 2);
        qref[s->iq[j]] += j % 3 ? 0.2 * sin(0.7 * period + i + j) : 0;
    }
}

static void test_impedance_periods(void)
{
    ALLOC_GUARD();
    solo *s = &solo_model;
    enum { NPER = 30 };
    static double alone[NSYS][19], first[19 * NSYS], kp[18 * NSYS], kd[18 * NSYS], qref[19 * NSYS], q[19 * NSYS];
    mbs_material mat[NSYS];
    for (int i = 0; i < NSYS; i++) {
        double K = 3e4 * (1 + i);
        mat[i] = (mbs_material){K, K, 4e-3 * K, 4e-3 * K, 0.4 + 0.1 * i};
    }
    for (int i = 0; i < NSYS; i++) {
        mbs_error err;
        mbs_system *sys = mbs_system_new(s->m, 4, &err);
        CHECK(sys && setup(sys, i, (void *)s, &err) == MBS_OK, "system %d: %s", i, err.msg);
        mbs_system_finalize(sys, NULL);
        mbs_stepper *st = mbs_stepper_new("expo", sys, NULL, 0, &err);
        CHECK(mbs_system_set_material(sys, 0, &mat[i], &err) == MBS_OK, "set_material: %s", err.msg);
        CHECK(st != NULL, "expo: %s", err.msg);
        if (!st) { mbs_system_free(sys); return; }
        for (int p = 0; p < NPER; p++) {
            period_targets(s, i, p, kp, kd, qref);
            mbs_system_set_impedance(sys, kp, kd, qref, NULL);
            for (int k = 0; k < PERIOD; k++) CHECK(mbs_stepper_step(st, DT, NULL) == MBS_OK, "step");
        }
        memcpy(alone[i], mbs_system_q(sys), sizeof alone[i]);
        CHECK(alone[i][2] > 0.1, "system %d alone: base at %g m", i, alone[i][2]);
        mbs_stepper_free(st);
        mbs_system_free(sys);
    }
    for (int nthreads = 1; nthreads <= 2; nthreads++) {
        mbs_error err;
        mbs_batch *b = solo_batch(s, NSYS, nthreads, &err);
        CHECK(b != NULL, "%s", err.msg);
        if (!b) return;
        long before = allocations;
        for (int i = 0; i < NSYS; i++)
            CHECK(mbs_batch_set_material(b, i, 0, &mat[i], &err) == MBS_OK, "set_material: %s", err.msg);
        for (int p = 0; p < NPER; p++) {
            for (int i = 0; i < NSYS; i++) period_targets(s, i, p, kp + 18 * i, kd + 18 * i, qref + 19 * i);
            mbs_batch_set_impedance(b, kp, kd, qref);
            CHECK(mbs_batch_step_n(b, DT, PERIOD, &err) == MBS_OK, "%s", err.msg);
            mbs_batch_q(b, q);
        }
        CHECK(allocations == before, "%d thread(s): %ld allocations in %d periods", nthreads, allocations - before, NPER);
        /* against the runs alone to rounding (a step's last bits may follow where its buffers lie in
         * memory: BLAS kernels split their sums by alignment), and the runs on 1 and 2 threads, whose
         * systems sit in alike blocks, bit for bit */
        for (int i = 0; i < NSYS; i++)
            for (int k = 0; k < 19; k++)
                CHECK(fabs(q[19 * i + k] - alone[i][k]) < 1e-9, "%d thread(s): system %d, q[%d] %.17g alone %.17g",
                      nthreads, i, k, q[19 * i + k], alone[i][k]);
        if (nthreads == 1) memcpy(first, q, sizeof first);
        else CHECK(memcmp(first, q, sizeof first) == 0, "2 threads differ from 1");
        CHECK(mbs_batch_step_n(b, DT, 0, &err) == MBS_ERR_ARG, "step_n of 0 steps");
        CHECK(mbs_batch_set_material(b, NSYS, 0, &mat[0], &err) == MBS_ERR_ARG, "set_material out of range");
        CHECK(mbs_batch_set_material(b, 0, 1, &mat[0], &err) == MBS_ERR_ARG && strstr(err.msg, "no solid 1"),
              "set_material of a solid not there: %s", err.msg);
        mbs_material bad = mat[0];
        bad.mu = -1;
        CHECK(mbs_batch_set_material(b, 0, 0, &bad, &err) == MBS_ERR_ARG, "a negative friction");
        /* removed: the systems fall under gravity alone */
        mbs_batch_set_impedance(b, NULL, NULL, NULL);
        mbs_batch_step_n(b, DT, 100, &err);
        mbs_batch_q(b, q);
        CHECK(q[2] < alone[0][2] - 0.02, "without the impedance the base should sink: %g against %g", q[2], alone[0][2]);
        mbs_batch_free(b);
    }
}

/* Per-system models: system i of models[i], the batch refuses a model of other joints. */
static void test_models(void)
{
    solo *s = &solo_model;
    mbs_error err;
    mbs_model *heavy = mbs_model_from_urdf(tm_path("urdf/solo12.urdf"), NULL, &err);
    CHECK(heavy != NULL, "%s", err.msg);
    if (!heavy) return;
    mbs_model *chain = mbs_model_chain(3, NULL, &err);
    const mbs_model *models[2] = {s->m, heavy};
    mbs_batch_config cfg = {0};
    cfg.max_contacts = 4;
    cfg.nthreads = 1;
    cfg.setup = setup;
    cfg.user = s;
    cfg.models = models;
    mbs_batch *b = mbs_batch_new(s->m, 2, &cfg, &err);
    CHECK(b != NULL, "%s", err.msg);
    CHECK(b && mbs_system_model(mbs_batch_system(b, 1)) == heavy && mbs_system_model(mbs_batch_system(b, 0)) == s->m,
          "system i of models[i]");
    mbs_batch_free(b);
    models[1] = chain;
    b = mbs_batch_new(s->m, 2, &cfg, &err);
    CHECK(b == NULL && strstr(err.msg, "system 1: its model has other joints"), "a chain in a Solo batch: %s", err.msg);
    mbs_batch_free(b);
    mbs_model_free(chain);
    mbs_model_free(heavy);
}

/* A system given a non-finite state fails alone: the step reports its index and error, the others
 * are stepped; it stays out (its time stopped) until a new start brings it back. */
static void test_failure(void)
{
    solo *s = &solo_model;
    mbs_error err;
    mbs_batch *b = solo_batch(s, NSYS, 2, &err);
    CHECK(b != NULL, "%s", err.msg);
    if (!b) return;
    double bad[19], t[NSYS];
    memcpy(bad, s->q0, sizeof bad);
    bad[2] = NAN;
    CHECK(mbs_batch_set_state(b, 5, bad, NULL, 0.0) == MBS_OK, "set_state");
    CHECK(mbs_batch_set_state(b, NSYS, bad, NULL, 0.0) == MBS_ERR_ARG, "set_state out of range");
    int rc = mbs_batch_step(b, DT, &err);
    CHECK(rc == MBS_ERR_NUMERIC, "step with a NaN system: %d", rc);
    CHECK(strncmp(err.msg, "system 5: ", 10) == 0 && strstr(err.msg, "not finite"), "message: %s", err.msg);
    CHECK(mbs_batch_status(b, 5) == MBS_ERR_NUMERIC && mbs_batch_status(b, 4) == MBS_OK, "status %d %d",
          mbs_batch_status(b, 5), mbs_batch_status(b, 4));
    CHECK(mbs_batch_error(b, 5)->code == MBS_ERR_NUMERIC && mbs_batch_error(b, 0)->code == MBS_OK, "errors");
    CHECK(mbs_batch_status(b, -1) == MBS_ERR_ARG && mbs_batch_error(b, NSYS) == NULL && !mbs_batch_system(b, NSYS),
          "out of range");
    CHECK(mbs_batch_nfailed(b) == 1, "nfailed %d", mbs_batch_nfailed(b));
    /* the next step: the others go on, the failed one waits */
    rc = mbs_batch_step(b, DT, &err);
    CHECK(rc == MBS_OK, "second step: %s", err.msg);
    mbs_batch_time(b, t);
    /* 5 stopped where it was given its state: a non-finite start is refused before any step */
    CHECK(t[4] == 2 * DT && t[5] == 0, "times %g %g", t[4], t[5]);
    /* two fail at once: the first named, the other counted */
    CHECK(mbs_batch_set_state(b, 2, bad, NULL, 0.0) == MBS_OK && mbs_batch_set_state(b, 7, bad, NULL, 0.0) == MBS_OK,
          "set_state");
    rc = mbs_batch_step(b, DT, &err);
    CHECK(rc == MBS_ERR_NUMERIC && strncmp(err.msg, "system 2 (and 1 more): ", 23) == 0, "message: %s", err.msg);
    CHECK(mbs_batch_nfailed(b) == 3, "nfailed %d", mbs_batch_nfailed(b));
    /* a new start brings them back */
    for (int i = 0; i < NSYS; i++) mbs_batch_set_state(b, i, s->q0, NULL, 1.0);
    CHECK(mbs_batch_nfailed(b) == 0 && mbs_batch_status(b, 5) == MBS_OK, "after new starts: %d failed",
          mbs_batch_nfailed(b));
    rc = mbs_batch_step(b, DT, &err);
    CHECK(rc == MBS_OK, "after new starts: %s", err.msg);
    mbs_batch_time(b, t);
    CHECK(t[5] == 1.0 + DT, "time after a new start %g", t[5]);
    mbs_batch_free(b);
}

static int failing_setup(mbs_system *sys, int i, void *user, mbs_error *err)
{
    if (i == 3) return mbs_system_add_contact(sys, "NO_SUCH_FRAME", NULL, 0, err) < 0 ? MBS_ERR_ARG : MBS_OK;
    return setup(sys, i, user, err);
}

/* Bad arguments and failed set-ups are errors naming what is wrong, never a crash. */
static void test_bad_arguments(void)
{
    solo *s = &solo_model;
    mbs_error err;
    mbs_batch_config cfg = {0};
    cfg.max_contacts = 4;
    CHECK(!mbs_batch_new(s->m, 0, &cfg, &err) && err.code == MBS_ERR_ARG, "n = 0");
    cfg.nthreads = -1;
    CHECK(!mbs_batch_new(s->m, 4, &cfg, &err) && strstr(err.msg, "threads"), "threads -1: %s", err.msg);
    cfg.nthreads = 1;
    cfg.stepper = "no_such_scheme";
    CHECK(!mbs_batch_new(s->m, 4, &cfg, &err) && strstr(err.msg, "no_such_scheme"), "stepper: %s", err.msg);
    cfg.stepper = "expo";
    mbs_option bad = MBS_OPTION("max_mat_mult", 9);
    cfg.options = &bad;
    cfg.noptions = 1;
    cfg.setup = setup;
    cfg.user = s;
    CHECK(!mbs_batch_new(s->m, 4, &cfg, &err) && strncmp(err.msg, "system 0: max_mat_mult", 22) == 0, "option: %s",
          err.msg);
    cfg.options = NULL;
    cfg.noptions = 0;
    cfg.setup = failing_setup;
    CHECK(!mbs_batch_new(s->m, 6, &cfg, &err) && strncmp(err.msg, "system 3: ", 10) == 0 && strstr(err.msg, "NO_SUCH"),
          "setup: %s", err.msg);
    /* no setup: systems without contacts, at rest in the neutral configuration, falling freely */
    cfg.setup = NULL;
    cfg.nthreads = 0;   /* one thread per processor */
    mbs_batch *b = mbs_batch_new(s->m, 3, &cfg, &err);
    CHECK(b != NULL && mbs_batch_nthreads(b) >= 1 && mbs_batch_ncontacts(b) == 0, "no setup: %s", b ? "" : err.msg);
    if (b) {
        double v[18 * 3];
        CHECK(mbs_batch_step(b, DT, &err) == MBS_OK, "%s", err.msg);
        mbs_batch_v(b, v);
        CHECK(fabs(v[18 * 2 + 2] + 9.81 * DT) < 1e-9, "free fall: vz %g", v[18 * 2 + 2]);
        mbs_batch_free(b);
    }
    mbs_batch_free(NULL);
}

int main(void)
{
    mbs_error err;
    mbs_model *m = mbs_model_from_urdf(tm_path("urdf/solo12.urdf"), NULL, &err);
    CHECK(m != NULL, "solo12: %s", err.msg);
    if (!m || solo_init(&solo_model, m) != 0) return check_summary("test_batch") || 1;
    RUN(test_bitwise_equal);
    RUN(test_repeatable);
    RUN(test_no_allocation);
    RUN(test_impedance_periods);
    RUN(test_models);
    RUN(test_failure);
    RUN(test_bad_arguments);
    mbs_model_free(m);
    return check_summary("test_batch");
}
