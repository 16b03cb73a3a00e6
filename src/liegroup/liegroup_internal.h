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
void mbsi_quat_mul(const double a[4], const double b[4], double o[4]);                 /* o = a b */
void mbsi_quat_between(const double a[4], const double b[4], double o[4]);             /* o = a⁻¹ b (unit a) */
void mbsi_quat_rotate(const double qt[4], const double x[3], double o[3]);              /* o = R(qt) x */
void mbsi_quat_rotate_inv(const double qt[4], const double x[3], double o[3]);          /* o = R(qt)ᵀ x */
void mbsi_so3_exp(const double w[3], double qt[4]);
/* Rotation vector of qt (need not be exactly unit), shortest one: returns its angle in [0, pi]. */
double mbsi_so3_log(const double qt[4], double w[3]);
/* The rotation vector (axis × angle) between two orientations (rotation matrices, column-major):
 * world = 1: log(A Bᵀ), the turn from B to A in world axes; world = 0: log(Aᵀ B), the turn from
 * A to B in A's axes. */
void mbsi_so3_error(const double A[9], const double B[9], int world, double e[3]);
void mbsi_so3_jr(const double w[3], double J[9]);       /* right Jacobian of Exp at w */
void mbsi_so3_jr_inv(const double w[3], double J[9]);   /* its inverse (valid for |w| < 2 pi) */

/* ---- SE(3) ---- */
void mbsi_se3_exp(const double xi[6], double g[7]);
void mbsi_se3_log(const double g[7], double xi[6]);
void mbsi_se3_compose(const double a[7], const double b[7], double o[7]);   /* o = a b */
void mbsi_se3_between(const double a[7], const double b[7], double o[7]);   /* o = a⁻¹ b */
void mbsi_se3_inverse(const double g[7], double o[7]);
/* Ad(g) = [[R, [p]x R], [0, R]]: maps a twist in g's frame to its parent's. */
void mbsi_se3_adjoint(const double g[7], double *Ad, int ld);
void mbsi_se3_jexp(const double xi[6], double *J, int ld);   /* 6x6 right Jacobian of Exp at xi */
void mbsi_se3_jlog(const double xi[6], double *J, int ld);   /* its inverse: Jacobian of Log at Exp(xi) */

/* ---- SE(3): Jr⁻¹(ξ)ᵀ applied to a wrench, and its derivative ----
 * What the discrete RNEA (src/dynamics/drnea.c) evaluates per body and step: out = Jr⁻¹(ξ)ᵀ y,
 * from a dozen cross products rather than the matrix of mbsi_se3_jlog (the closed form is in
 * se3.c), exact at every angle below 2 pi. Its derivative along (dξ, dy) is forward-mode: the
 * values of the chain are computed once (mbsi_se3_jlog_t_at) and serve every direction
 * (mbsi_se3_jlog_t_along); Algorithm 4 of Lee et al. (WAFR 2016) needs six directions per body. */
void mbsi_se3_jlog_t_mul(const double xi[6], const double y[6], double out[6]);

typedef struct mbs_se3_qwords {   /* the words of Qᵀ applied to g (P = [rho]x, W = [w]x) */
    double Wg[3], Pg[3], PWg[3], WPg[3], WPWg[3], WWg[3], PWWg[3], WWPg[3], WWPWg[3], WPWWg[3];
} mbs_se3_qwords;

typedef struct mbs_se3_jlog_t_point {   /* mbsi_se3_jlog_t_mul's chain at one (ξ, y) */
    double c[4], dc[4];               /* (beta, C, D, E) and their derivatives in theta² */
    double r[3], w[3], f[3];
    double a[3], b[3], g[3];
    mbs_se3_qwords q;
    double s1[3], s2[3], s3[3], n[3], a2[3], b2[3];
} mbs_se3_jlog_t_point;

void mbsi_se3_jlog_t_at(const double xi[6], const double y[6], mbs_se3_jlog_t_point *t);
/* dout = d/de Jr⁻¹(ξ + e dξ)ᵀ (y + e dy) at e = 0, at the point of mbsi_se3_jlog_t_at. */
void mbsi_se3_jlog_t_along(const mbs_se3_jlog_t_point *t, const double dxi[6], const double dy[6], double dout[6]);

/* ---- SE(2) ---- */
void mbsi_se2_exp(const double xi[3], double g[4]);
void mbsi_se2_log(const double g[4], double xi[3]);
void mbsi_se2_compose(const double a[4], const double b[4], double o[4]);
void mbsi_se2_between(const double a[4], const double b[4], double o[4]);
void mbsi_se2_inverse(const double g[4], double o[4]);
void mbsi_se2_adjoint(const double g[4], double *Ad, int ld);
void mbsi_se2_jexp(const double xi[3], double *J, int ld);
void mbsi_se2_jlog(const double xi[3], double *J, int ld);

#endif
