/* liegroup_internal.h — what the Lie-group layer shares with the layers above: exponential, logarithm, adjoint and right Jacobians of SO(3), SE(3) and SE(2):
 * the group arithmetic behind liegroup.c. Internal to the library.
 *
 * Layouts follow the configuration vector, so a joint's slice of q is a group element:
 *   quaternion   [x y z w]
 *   SE(3)        g = [p(3); quaternion(4)], the placement body -> world (a free-flyer's q)
 *   SE(3) twist  xi = [v(3); w(3)], linear part first (Pinocchio's Motion order)
 *   SE(2)        g = [x y c s], twist [vx vy w]
 * Every function reads all of its inputs before writing its output, so outputs may alias
 * inputs. Matrices are column-major with leading dimension ld. No function allocates.
 *
 * Jacobians are right (body-frame) Jacobians: Exp(xi + d) = Exp(xi) Exp(Jr(xi) d) to first
 * order (Sola, Deray, Atchuthan, "A micro Lie theory for state estimation in robotics",
 * 2018, eqs. 41 and 67). Near zero angle every coefficient switches to its Taylor series, so
 * results stay accurate to a few ulps at any angle; logarithms return angles in [0, pi]. */
#ifndef MBS_LIEGROUP_SE3_H
#define MBS_LIEGROUP_SE3_H

/* ---- SO(3) on unit quaternions ---- */
void mbs_quat_mul(const double a[4], const double b[4], double o[4]);                 /* o = a b */
void mbs_quat_rotate(const double qt[4], const double x[3], double o[3]);              /* o = R(qt) x */
void mbs_quat_rotate_inv(const double qt[4], const double x[3], double o[3]);          /* o = R(qt)ᵀ x */
void mbs_so3_exp(const double w[3], double qt[4]);
/* Rotation vector of qt (need not be exactly unit), shortest one: returns its angle in [0, pi]. */
double mbs_so3_log(const double qt[4], double w[3]);
void mbs_so3_jr(const double w[3], double J[9]);       /* right Jacobian of Exp at w */
void mbs_so3_jr_inv(const double w[3], double J[9]);   /* its inverse (valid for |w| < 2 pi) */

/* ---- SE(3) ---- */
void mbs_se3_exp(const double xi[6], double g[7]);
void mbs_se3_log(const double g[7], double xi[6]);
void mbs_se3_compose(const double a[7], const double b[7], double o[7]);   /* o = a b */
void mbs_se3_between(const double a[7], const double b[7], double o[7]);   /* o = a⁻¹ b */
void mbs_se3_inverse(const double g[7], double o[7]);
/* Ad(g) = [[R, [p]x R], [0, R]]: maps a twist in g's frame to its parent's. */
void mbs_se3_adjoint(const double g[7], double *Ad, int ld);
void mbs_se3_jexp(const double xi[6], double *J, int ld);   /* 6x6 right Jacobian of Exp at xi */
void mbs_se3_jlog(const double xi[6], double *J, int ld);   /* its inverse: Jacobian of Log at Exp(xi) */

/* ---- SE(2) ---- */
void mbs_se2_exp(const double xi[3], double g[4]);
void mbs_se2_log(const double g[4], double xi[3]);
void mbs_se2_compose(const double a[4], const double b[4], double o[4]);
void mbs_se2_between(const double a[4], const double b[4], double o[4]);
void mbs_se2_inverse(const double g[4], double o[4]);
void mbs_se2_adjoint(const double g[4], double *Ad, int ld);
void mbs_se2_jexp(const double xi[3], double *J, int ld);
void mbs_se2_jlog(const double xi[3], double *J, int ld);

#endif
