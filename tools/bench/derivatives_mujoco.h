/* derivatives_mujoco.h — the MuJoCo side of tools/bench/bench_derivatives.c: Solo-12 standing on its
 * four foot spheres (tools/bench/solo_mujoco.h, a motor on each joint), its one-step Jacobians by
 * MuJoCo's mjd_transitionFD (forward differences). Built and linked only when Debian's
 * libmujoco-dev is installed (the Makefile defines MBS_HAVE_MUJOCO); never part of libmbs. */
#ifndef MBS_DERIVATIVES_MUJOCO_H
#define MBS_DERIVATIVES_MUJOCO_H

/* Solo from the URDF at urdf_path, time step dt, the base upright at height base_z and the joints
 * (named in joints) at posture, settled for `settle` steps under a joint PD of gains kp, kd holding
 * it (the motors' ctrl, computed before each step, then held); then `reps` calls of
 * mjd_transitionFD(m, d, 1e-6, forward, A, B, NULL, NULL), each timed alone. Returns 0 with the
 * median microseconds per call in *us, the contacts at the call in *ncon and MuJoCo's version in
 * version; -1 with msg filled on failure. */
int mjderiv_transition_fd(const char *urdf_path, double dt, double base_z, const char *const joints[12],
                          const double posture[12], double kp, double kd, int settle, int reps, double *us, int *ncon,
                          char *version, int versionlen, char *msg, int msglen);

#endif
