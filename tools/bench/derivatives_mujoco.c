/* derivatives_mujoco.c — mjd_transitionFD on Solo-12 standing, for bench_derivatives (see
 * derivatives_mujoco.h). Compiled into build/tools/bench_derivatives only when libmujoco-dev is
 * installed. */
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "bench_tool.h"
#include "derivatives_mujoco.h"
#include "solo_mujoco.h"

int mjderiv_transition_fd(const char *urdf_path, double dt, double base_z, const char *const joints[12],
                          const double posture[12], double kp, double kd, int settle, int reps, double *us, int *ncon,
                          char *version, int versionlen, char *msg, int msglen)
{
    mjModel *m = solo_mujoco_model(urdf_path, dt, joints, 12, msg, msglen);
    if (!m) return -1;
    int qadr[12], dadr[12];
    for (int j = 0; j < 12; j++) {
        int id = mj_name2id(m, mjOBJ_JOINT, joints[j]);
        if (id < 0) { snprintf(msg, (size_t)msglen, "no joint %s", joints[j]); mj_deleteModel(m); return -1; }
        qadr[j] = m->jnt_qposadr[id];
        dadr[j] = m->jnt_dofadr[id];
    }
    mjData *d = mj_makeData(m);
    int n2 = 2 * m->nv + m->na;
    double *A = malloc(sizeof(double) * (size_t)n2 * (size_t)n2), *B = malloc(sizeof(double) * (size_t)n2 * (size_t)m->nu);
    double *t = malloc(sizeof(double) * (size_t)(reps > 0 ? reps : 1));
    int rc = -1;
    if (!d || !A || !B || !t) { snprintf(msg, (size_t)msglen, "out of memory"); goto done; }
    d->qpos[2] = base_z;   /* the free joint: x y z qw qx qy qz, upright */
    for (int j = 0; j < 12; j++) d->qpos[qadr[j]] = posture[j];
    for (int k = 0; k < settle; k++) {
        /* motor j drives joint j: ctrl in the motors' order */
        for (int j = 0; j < 12; j++) d->ctrl[j] = kp * (posture[j] - d->qpos[qadr[j]]) - kd * d->qvel[dadr[j]];
        mj_step(m, d);
    }
    mj_forward(m, d);
    for (int r = 0; r < reps; r++) {
        double t0 = tool_now();
        mjd_transitionFD(m, d, 1e-6, 0, A, B, NULL, NULL);
        t[r] = 1e6 * (tool_now() - t0);
    }
    *us = tool_median(t, reps);
    *ncon = d->ncon;
    snprintf(version, (size_t)versionlen, "%s", mj_versionString());
    rc = 0;
done:
    free(A);
    free(B);
    free(t);
    if (d) mj_deleteData(d);
    mj_deleteModel(m);
    return rc;
}
