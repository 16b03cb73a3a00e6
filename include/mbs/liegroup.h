/* mbs/liegroup.h — the configuration space as a Lie group: R^n for revolute and prismatic
 * joints, SE(3) (unit quaternion) for a free-flyer, SE(2) (cos, sin) for a planar joint.
 * integrate(q, v) = q ⊕ v follows the group exponential (free-flyer: q·exp6(v), as
 * Pinocchio); difference(q0, q1) = q1 ⊖ q0 is its inverse: integrate(q0, difference(q0, q1)) = q1. */
#ifndef MBS_LIEGROUP_H
#define MBS_LIEGROUP_H

#include "model.h"

#ifdef __cplusplus
extern "C" {
#endif

/* what this header declares is the library's interface: exported from libmbs.so, where everything
 * else is hidden (the build compiles with -fvisibility=hidden) */
#if defined(__GNUC__)
#pragma GCC visibility push(default)
#endif

typedef enum mbs_arg { MBS_ARG0 = 0, MBS_ARG1 = 1 } mbs_arg;

/* q_out = q ⊕ v: q moved along the tangent vector v (nv) for unit time, per joint on its group
 * (Pinocchio's integrate). q_out may be q. */
void mbs_integrate(const mbs_model *m, const double *q, const double *v, double *q_out);
/* v_out = q1 ⊖ q0: the tangent vector (nv) that integrates q0 to q1 (Pinocchio's difference). */
void mbs_difference(const mbs_model *m, const double *q0, const double *q1, double *v_out);
/* q(t) on the geodesic from q0 (t = 0) to q1 (t = 1). */
void mbs_interpolate(const mbs_model *m, const double *q0, const double *q1, double t, double *q_out);
/* The neutral configuration: zero joints, identity base orientation at the origin. */
void mbs_neutral(const mbs_model *m, double *q);
/* A random configuration: joint coordinates uniform within their limits (within [-1, 1]
 * where a limit is infinite or wider), free-flyer positions uniform in [-1, 1] and
 * orientations uniform on SO(3). `seed` is advanced, so the same seed gives the same draw. */
void mbs_random_configuration(const mbs_model *m, unsigned long long *seed, double *q);
/* Renormalises quaternions and (cos, sin) pairs in place. */
void mbs_normalize(const mbs_model *m, double *q);
/* Jacobians (nv x nv, column-major, leading dimension nv) of integrate with respect to q
 * (MBS_ARG0) or v (MBS_ARG1), and of difference with respect to q0 or q1, in the tangent
 * space. */
void mbs_dintegrate(const mbs_model *m, const double *q, const double *v, mbs_arg arg, double *J);
/* The nv x nv Jacobian of difference with respect to q0 (MBS_ARG0) or q1 (MBS_ARG1). */
void mbs_ddifference(const mbs_model *m, const double *q0, const double *q1, mbs_arg arg, double *J);

#if defined(__GNUC__)
#pragma GCC visibility pop
#endif

#ifdef __cplusplus
}
#endif
#endif
