/* envs_mujoco.c — MuJoCo's side of `make bench-envs` (tools/bench/bench_envs.py): N Solo-12 systems
 * (tools/bench/batch_mujoco.c's: the project's URDF through MuJoCo's importer, foot spheres, its
 * default semi-implicit Euler at 2 ms) under the same joint PD as the environments (kp 6, kd 0.2,
 * computed before every physics step), stepped one control period (5 steps of 2 ms, 10 ms) at a time
 * on T threads. Prints environment steps (control periods) per second, the best and the median of
 * its repetitions, as key: value lines. Built only when libmujoco-dev is installed; never linked
 * into libmbs.
 *     envs_mujoco N THREADS PERIODS REPETITIONS */
#include <math.h>
#include <stdio.h>
#include <stdlib.h>

#include "batch_mujoco.h"
#include "solo_stance.h"

#define DT 0.002
#define PERIOD_STEPS 5
#define KP 6.0
#define KD 0.2

static int cmp(const void *a, const void *b)
{
    double x = *(const double *)a, y = *(const double *)b;
    return (x > y) - (x < y);
}

int main(int argc, char **argv)
{
    if (argc != 5) {
        fprintf(stderr, "usage: envs_mujoco N THREADS PERIODS REPETITIONS\n");
        return 2;
    }
    int n = atoi(argv[1]), nthreads = atoi(argv[2]), periods = atoi(argv[3]), reps = atoi(argv[4]);
    if (n < 1 || nthreads < 1 || periods < 1 || reps < 1 || reps > 64) {
        fprintf(stderr, "envs_mujoco: bad arguments\n");
        return 2;
    }
    mbs_error err;
    mbs_model *m = mbs_model_from_urdf(MBS_SOURCE_DIR "/urdf/solo12.urdf", NULL, &err);
    double q0[19];
    int iq[12], iv[12];
    const char *missing = m ? solo_stance(m, q0, iq, iv) : err.msg;
    if (missing) {
        fprintf(stderr, "envs_mujoco: %s\n", missing);
        return 1;
    }
    char msg[512];
    mjbatch *b = mjbatch_new(MBS_SOURCE_DIR "/urdf/solo12.urdf", n, q0[2], solo_posture, NULL, DT, KP, KD, msg,
                             (int)sizeof msg);
    if (!b) {
        fprintf(stderr, "envs_mujoco: %s\n", msg);
        return 1;
    }
    mjbatch_run(b, nthreads, PERIOD_STEPS);   /* warm-up: one period */
    double rate[64];
    for (int r = 0; r < reps; r++) rate[r] = (double)n * periods / mjbatch_run(b, nthreads, PERIOD_STEPS * periods);
    qsort(rate, (size_t)reps, sizeof rate[0], cmp);
    printf("mujoco_version: %s\n", mjbatch_version());
    printf("mujoco_env_steps_per_s_%dt: %.0f\n", nthreads, rate[reps - 1]);
    printf("mujoco_env_steps_per_s_%dt_median: %.0f\n", nthreads, rate[reps / 2]);
    printf("mujoco_base_z_end_m: %.4f\n", mjbatch_base_z(b, n - 1));
    mjbatch_free(b);
    mbs_model_free(m);
    return 0;
}
