/* batch_mujoco.c — Solo-12 in MuJoCo for bench_batch (see batch_mujoco.h). Compiled into
 * build/tools/bench_batch only when libmujoco-dev is installed. */
#include <pthread.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <time.h>
#include <unistd.h>

#include <mujoco/mujoco.h>

#include "batch_mujoco.h"
#include "solo_mujoco.h"

const char *const mjbatch_joints[12] = {"FL_HAA", "FL_HFE", "FL_KFE", "FR_HAA", "FR_HFE", "FR_KFE",
                                        "HL_HAA", "HL_HFE", "HL_KFE", "HR_HAA", "HR_HFE", "HR_KFE"};

struct mjbatch {
    mjModel *m;
    int n;
    mjData **d;
    int qadr[12], dadr[12];   /* each joint's qpos and dof address */
    double posture[12], kp, kd;
};

mjbatch *mjbatch_new(const char *urdf_path, int n, double base_z, const double posture[12], const double *dq,
                     double dt, double kp, double kd, char *msg, int msglen)
{
    mjbatch *b = calloc(1, sizeof *b);
    if (!b) { snprintf(msg, (size_t)msglen, "out of memory"); return NULL; }
    b->m = solo_mujoco_model(urdf_path, dt, NULL, 0, msg, msglen);
    b->d = calloc((size_t)n, sizeof *b->d);
    if (!b->m || !b->d) { mjbatch_free(b); return NULL; }
    b->n = n;
    b->kp = kp;
    b->kd = kd;
    memcpy(b->posture, posture, sizeof b->posture);
    for (int j = 0; j < 12; j++) {
        int id = mj_name2id(b->m, mjOBJ_JOINT, mjbatch_joints[j]);
        if (id < 0) { snprintf(msg, (size_t)msglen, "no joint %s", mjbatch_joints[j]); mjbatch_free(b); return NULL; }
        b->qadr[j] = b->m->jnt_qposadr[id];
        b->dadr[j] = b->m->jnt_dofadr[id];
    }
    for (int i = 0; i < n; i++) {
        mjData *d = b->d[i] = mj_makeData(b->m);
        if (!d) { snprintf(msg, (size_t)msglen, "mj_makeData failed"); mjbatch_free(b); return NULL; }
        d->qpos[2] = base_z;   /* the free joint: x y z qw qx qy qz, upright */
        for (int j = 0; j < 12; j++) d->qpos[b->qadr[j]] = posture[j] + (dq ? dq[j + 12 * i] : 0);
        mj_forward(b->m, d);
    }
    return b;
}

void mjbatch_free(mjbatch *b)
{
    if (!b) return;
    for (int i = 0; b->d && i < b->n; i++) mj_deleteData(b->d[i]);
    free(b->d);
    if (b->m) mj_deleteModel(b->m);
    free(b);
}

static void step_one(mjbatch *b, int i)
{
    mjData *d = b->d[i];
    for (int j = 0; j < 12; j++)
        d->qfrc_applied[b->dadr[j]] = b->kp * (b->posture[j] - d->qpos[b->qadr[j]]) - b->kd * d->qvel[b->dadr[j]];
    mj_step(b->m, d);
}

typedef struct share {
    mjbatch *b;
    int begin, end, nsteps;
    pthread_barrier_t *barrier;
} share;

static void *run_share(void *arg)
{
    share *s = arg;
    for (int k = 0; k < s->nsteps; k++) {
        for (int i = s->begin; i < s->end; i++) step_one(s->b, i);
        pthread_barrier_wait(s->barrier);
    }
    return NULL;
}

static double now(void)
{
    struct timespec t;
    clock_gettime(CLOCK_MONOTONIC, &t);
    return (double)t.tv_sec + 1e-9 * (double)t.tv_nsec;
}

double mjbatch_run(mjbatch *b, int nthreads, int nsteps)
{
    if (nthreads > b->n) nthreads = b->n;   /* as the engine's pool: no thread without a system */
    if (nthreads > 64) nthreads = 64;
    if (nthreads <= 1) {
        double t0 = now();
        for (int k = 0; k < nsteps; k++)
            for (int i = 0; i < b->n; i++) step_one(b, i);
        return now() - t0;
    }
    pthread_barrier_t barrier;
    pthread_barrier_init(&barrier, NULL, (unsigned)nthreads);
    share sh[64];
    pthread_t th[64];
    for (int t = 0; t < nthreads; t++) {
        sh[t] = (share){b, (int)((long)b->n * t / nthreads), (int)((long)b->n * (t + 1) / nthreads), nsteps, &barrier};
    }
    double t0 = now();
    for (int t = 1; t < nthreads; t++) pthread_create(&th[t], NULL, run_share, &sh[t]);
    run_share(&sh[0]);
    for (int t = 1; t < nthreads; t++) pthread_join(th[t], NULL);
    double el = now() - t0;
    pthread_barrier_destroy(&barrier);
    return el;
}

double mjbatch_base_z(const mjbatch *b, int i) { return b->d[i]->qpos[2]; }
int mjbatch_ncon(const mjbatch *b, int i) { return b->d[i]->ncon; }
long mjbatch_data_bytes(const mjbatch *b) { return (long)b->m->nstack * (long)sizeof(mjtNum) + (long)b->m->nbuffer; }
const char *mjbatch_version(void) { return mj_versionString(); }
