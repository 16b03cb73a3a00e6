/* solo_mujoco.h — Solo-12 as a MuJoCo model, for the benchmarks that put MuJoCo beside the engine
 * (tools/bench/batch_mujoco.c, tools/bench/derivatives_mujoco.c). Built and linked only when Debian's
 * libmujoco-dev is installed (the Makefile defines MBS_HAVE_MUJOCO); never part of libmbs.
 *
 * The model is the project's urdf/solo12.urdf read by MuJoCo's own URDF importer, given a free
 * root joint (a floating joint from a `world` link) and its fixed FOOT links kept as bodies
 * (compiler fusestatic = false), then written back as MJCF and completed with the ground plane and
 * a sphere of radius 0.0191 m on each FOOT body, friction 1. MuJoCo's contacts are its soft
 * constraints with their default impedance and reference (not the visco-elastic springs of
 * K = 1e5 N/m); the integrator is its default semi-implicit Euler. */
#ifndef MBS_SOLO_MUJOCO_H
#define MBS_SOLO_MUJOCO_H

#include <mujoco/mujoco.h>

/* Solo from the URDF at urdf_path with time step dt (s); with a motor (gear 1, no control range:
 * ctrl is the joint torque) on each of the nmotors joints named in motors (motors may be NULL when
 * nmotors is 0). NULL with msg filled on failure. */
mjModel *solo_mujoco_model(const char *urdf_path, double dt, const char *const *motors, int nmotors, char *msg,
                           int msglen);

#endif
