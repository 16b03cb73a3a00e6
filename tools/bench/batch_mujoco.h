/* batch_mujoco.h — the MuJoCo side of tools/bench/bench_batch.c: N copies of Solo-12 standing on the
 * ground, each an mjData of one shared mjModel, stepped by mj_step on T threads. Built and linked
 * only when Debian's libmujoco-dev is installed (the Makefile defines MBS_HAVE_MUJOCO); never part
 * of libmbs.
 *
 * The model is tools/bench/solo_mujoco.h's (the project's urdf/solo12.urdf through MuJoCo's URDF
 * importer, with the ground plane and a sphere of radius 0.0191 m on each FOOT body, friction 1),
 * as bench_batch sets up its own systems. MuJoCo's contacts are its soft constraints with their
 * default impedance and reference (not the visco-elastic springs of K = 1e5 N/m); the integrator
 * is its default semi-implicit Euler at the same 2 ms step. */
#ifndef MBS_BATCH_MUJOCO_H
#define MBS_BATCH_MUJOCO_H

typedef struct mjbatch mjbatch;

/* Solo's twelve joints, in the order of posture[] and dq[] below (and of the engine's v). */
extern const char *const mjbatch_joints[12];

/* n systems from the URDF at urdf_path, at rest, the base upright at height base_z, the joints at
 * posture[j] + dq[j + 12 i] for system i (dq may be NULL: no offsets); the joint PD of gains kp, kd
 * holds `posture`. NULL with msg filled on failure. */
mjbatch *mjbatch_new(const char *urdf_path, int n, double base_z, const double posture[12], const double *dq,
                     double dt, double kp, double kd, char *msg, int msglen);
void mjbatch_free(mjbatch *b);
/* nsteps steps of every system on nthreads threads (static shares, a barrier after each step),
 * each system's PD torque computed from its qpos and qvel before its step; returns the wall time (s). */
double mjbatch_run(mjbatch *b, int nthreads, int nsteps);
/* System i's base height (m). */
double mjbatch_base_z(const mjbatch *b, int i);
/* Contacts of system i after its last step. */
int mjbatch_ncon(const mjbatch *b, int i);
/* Bytes of one system's mjData. */
long mjbatch_data_bytes(const mjbatch *b);
const char *mjbatch_version(void);

#endif
