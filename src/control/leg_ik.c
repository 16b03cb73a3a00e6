/* leg_ik.c — analytic inverse kinematics of a Solo-type leg: HAA about the base x axis, then
 * HFE and KFE about y. Nothing is hard-coded: the offsets and link lengths are read from the
 * model's joint placements at q = neutral, and the axes are checked by turning each joint, so
 * the same code serves any leg of that form (and refuses one that is not).
 *
 * In the HAA frame the leg lies in the plane y = y_off (the lateral offsets of HFE, KFE and the
 * foot add up); HFE and KFE make a planar two-link arm in that plane with lengths L1, L2 and
 * angle offsets β1, β2 (zero when each link hangs straight down at q = 0). */
#include <stdio.h>
#include <stdlib.h>

#include "control_internal.h"

#define TWO_PI (2 * MBS_PI)

/* The angle in [−π, π] equal to x modulo 2π; cheaper than libm's remainder() for the few
 * turns an IK angle can be off by. */
static inline double wrap_angle(double x)
{
    return x - TWO_PI * nearbyint(x * (1.0 / TWO_PI));
}

static int is_rotation_about(const double R[9], int axis, double a, double tol)
{
    double c = cos(a), s = sin(a), E[9];
    /* column-major rotation about x (axis 0) or y (axis 1) by a */
    if (axis == 0) { double X[9] = {1, 0, 0, 0, c, s, 0, -s, c}; memcpy(E, X, sizeof E); }
    else { double Y[9] = {c, 0, -s, 0, 1, 0, s, 0, c}; memcpy(E, Y, sizeof E); }
    for (int k = 0; k < 9; k++)
        if (fabs(R[k] - E[k]) > tol) return 0;
    return 1;
}

/* Placement of body b relative to the root body (or the world for a fixed root). */
static void rel_placement(const mbs_model *m, mbs_data *d, int root, int b, double R[9], double p[3])
{
    double Rb[9], pb[3], Rr[9] = {1, 0, 0, 0, 1, 0, 0, 0, 1}, pr[3] = {0, 0, 0};
    mbs_body_placement(m, d, b, Rb, pb);
    if (root >= 0) mbs_body_placement(m, d, root, Rr, pr);
    for (int i = 0; i < 3; i++) {
        p[i] = 0;
        for (int k = 0; k < 3; k++) p[i] += Rr[k + 3 * i] * (pb[k] - pr[k]);
        for (int j = 0; j < 3; j++) {
            double x = 0;
            for (int k = 0; k < 3; k++) x += Rr[k + 3 * i] * Rb[k + 3 * j];
            R[i + 3 * j] = x;
        }
    }
}

/* Planar arm in the leg plane: the foot relative to HFE for link angles a = θ2 + β1 and
 * c = θ2 + θ3 + β2, with e(ψ) = −(sin ψ, cos ψ) so that ψ = 0 hangs straight down. */
static void planar(const mbs_leg *l, double th2, double th3, double *fx, double *fz)
{
    double a = th2 + l->beta1, c = th2 + th3 + l->beta2;
    *fx = -l->L1 * sin(a) - l->L2 * sin(c);
    *fz = -l->L1 * cos(a) - l->L2 * cos(c);
}

int mbsi_leg_init(mbs_leg *leg, const mbs_model *m, const char *foot, const double *q_ref, mbs_error *err)
{
    memset(leg, 0, sizeof *leg);
    snprintf(leg->foot, sizeof leg->foot, "%s", foot);
    int f = mbs_frame_id(m, foot);
    if (f < 0) return mbsi_fail(err, MBS_ERR_ARG, "leg: no frame '%s' in model '%s'", foot, mbs_model_name(m));
    leg->foot_frame = f;
    int b = mbs_frame_body(m, f);
    for (int k = 2; k >= 0; k--) {
        if (b < 0 || mbs_joint_type_of(m, b) != MBS_JOINT_REVOLUTE)
            return mbsi_fail(err, MBS_ERR_MODEL, "leg '%s': expected three revolute joints (HAA, HFE, KFE) between the "
                            "base and the foot", foot);
        leg->joint[k] = b;
        leg->idx_q[k] = mbs_joint_idx_q(m, b);
        leg->idx_v[k] = mbs_joint_idx_v(m, b);
        b = mbs_joint_parent(m, b);
    }
    int root = b;   /* the base: a free-flyer body, or -1 when the root link is fixed to the world */
    if (root >= 0 && (mbs_joint_parent(m, root) != -1 || mbs_joint_type_of(m, root) != MBS_JOINT_FREEFLYER))
        return mbsi_fail(err, MBS_ERR_MODEL, "leg '%s': the HAA joint '%s' does not hang from the free-flyer base", foot,
                        mbs_joint_name(m, leg->joint[0]));

    mbs_data *d = mbs_data_new(m);
    int nq = mbs_model_nq(m);
    double *q = calloc((size_t)nq, sizeof(double));
    if (!d || !q) { mbs_data_free(d); free(q); return mbsi_fail(err, MBS_ERR_NOMEM, "out of memory"); }
    int rc = MBS_OK;
    double R[9], P[4][3];
    mbs_neutral(m, q);
    mbs_forward_kinematics(m, d, q, NULL, NULL);
    for (int k = 0; k < 3 && !rc; k++) {
        rel_placement(m, d, root, leg->joint[k], R, P[k]);
        if (!is_rotation_about(R, 0, 0, 1e-9))
            rc = mbsi_fail(err, MBS_ERR_MODEL, "leg '%s': joint '%s' is not parallel to the base at q = neutral", foot,
                          mbs_joint_name(m, leg->joint[k]));
    }
    if (!rc) {
        /* the foot frame: its own placement in the KFE body, moved to the base */
        double Rf[9], pf[3];
        mbs_frame_local_placement(m, f, Rf, pf);
        for (int i = 0; i < 3; i++) P[3][i] = P[2][i] + pf[i];
    }
    /* each axis: turning the joint alone must rotate its body about x (HAA) or y (HFE, KFE) */
    for (int k = 0; k < 3 && !rc; k++) {
        mbs_neutral(m, q);
        q[leg->idx_q[k]] = 0.3;
        mbs_forward_kinematics(m, d, q, NULL, NULL);
        double pp[3];
        /* the joints above stay at neutral, parallel to the base: R is the joint's own rotation */
        rel_placement(m, d, root, leg->joint[k], R, pp);
        if (!is_rotation_about(R, k == 0 ? 0 : 1, 0.3, 1e-9))
            rc = mbsi_fail(err, MBS_ERR_MODEL, "leg '%s': joint '%s' does not turn about the base %s axis", foot,
                          mbs_joint_name(m, leg->joint[k]), k == 0 ? "x" : "y");
    }
    mbs_data_free(d);
    free(q);
    if (rc) return rc;

    memcpy(leg->p_haa, P[0], sizeof leg->p_haa);
    double d2[3], d3[3];
    for (int i = 0; i < 3; i++) {
        leg->d1[i] = P[1][i] - P[0][i];
        d2[i] = P[2][i] - P[1][i];
        d3[i] = P[3][i] - P[2][i];
    }
    leg->y_off = leg->d1[1] + d2[1] + d3[1];
    leg->L1 = hypot(d2[0], d2[2]);
    leg->L2 = hypot(d3[0], d3[2]);
    if (!(leg->L1 > 1e-6 && leg->L2 > 1e-6))
        return mbsi_fail(err, MBS_ERR_MODEL, "leg '%s': a link between HFE, KFE and the foot has no length in the leg plane", foot);
    leg->beta1 = atan2(-d2[0], -d2[2]);
    leg->beta2 = atan2(-d3[0], -d3[2]);
    /* the branches (knee forward or backward, foot below or above the HAA axis) of q_ref */
    double th2 = q_ref ? q_ref[leg->idx_q[1]] : 0, th3 = q_ref ? q_ref[leg->idx_q[2]] : 0, fx, fz;
    double knee = wrap_angle(th3 + leg->beta2 - leg->beta1);
    leg->knee = knee >= 0 ? 1 : -1;
    planar(leg, th2, th3, &fx, &fz);
    leg->hip_z_sign = leg->d1[2] + fz <= 0 ? -1 : 1;
    return MBS_OK;
}

void mbsi_leg_fk(const mbs_leg *l, const double a[3], double p[3])
{
    double fx, fz;
    planar(l, a[1], a[2], &fx, &fz);
    double y = l->y_off, z = l->d1[2] + fz, c = cos(a[0]), s = sin(a[0]);
    p[0] = l->p_haa[0] + l->d1[0] + fx;
    p[1] = l->p_haa[1] + c * y - s * z;
    p[2] = l->p_haa[2] + s * y + c * z;
}

int mbsi_leg_ik(const mbs_leg *l, const double p[3], double a[3])
{
    int clamped = 0;
    double r[3] = {p[0] - l->p_haa[0], p[1] - l->p_haa[1], p[2] - l->p_haa[2]};
    /* HAA: turn the leg plane (at distance y_off from the x axis) through the target */
    double rho2 = r[1] * r[1] + r[2] * r[2], zz = rho2 - l->y_off * l->y_off;
    if (zz < 0) { zz = 0; clamped = 1; }
    double zp = l->hip_z_sign * sqrt(zz);
    /* A difference of two angles is taken as one: atan2(y₁, x₁) − atan2(y₂, x₂) = atan2(y₁x₂ −
     * x₁y₂, x₁x₂ + y₁y₂) (mod 2π, which wrap_angle removes). The gaits solve twelve legs per
     * control period (the reference and its central difference): two atan2 each instead of four
     * and a sine and cosine (perf record of `./sim scenarios/solo_trot.ini`: libm's share of the
     * samples 8.5 % before, 5.1 % after). */
    a[0] = wrap_angle(atan2(r[2] * l->y_off - r[1] * zp, r[1] * l->y_off + r[2] * zp));
    /* HFE, KFE: the planar two-link arm reaching (fx, fz) from HFE */
    double fx = r[0] - l->d1[0], fz = zp - l->d1[2];
    double D2 = fx * fx + fz * fz, cb = (D2 - l->L1 * l->L1 - l->L2 * l->L2) / (2 * l->L1 * l->L2);
    if (cb > 1) { cb = 1; clamped = 1; }
    if (cb < -1) { cb = -1; clamped = 1; }
    double b = l->knee * acos(cb);
    /* the hip angle of the foot less that of the knee's triangle, (L1 + L2 cos b, L2 sin b), with
     * sin b = knee √((1 − cb)(1 + cb)) (accurate near the straight leg, cb = 1) */
    double ys = l->L2 * l->knee * sqrt((1 - cb) * (1 + cb)), xs = l->L1 + l->L2 * cb;
    double al = atan2(-fx * xs + fz * ys, -fz * xs - fx * ys);
    a[1] = wrap_angle(al - l->beta1);
    a[2] = wrap_angle(b - (l->beta2 - l->beta1));
    return clamped;
}
