/* base_pose.c — where the model's root puts the base: the root's kind, the base's world position,
 * roll pitch yaw and tilt. The loop's checks and summary and the replay page all read them, so
 * they sit in a file of their own that uses no other file of the folder (no call circle). */
#include "sim_internal.h"

int mbsi_root_kind(const mbs_model *m)
{
    if (mbs_model_njoints(m) == 0 || mbs_joint_parent(m, 0) != -1) return MBS_ROOT_FIXED;
    mbs_joint_type root = mbs_joint_type_of(m, 0);
    if (root == MBS_JOINT_FREEFLYER) return MBS_ROOT_FREE;
    if (root != MBS_JOINT_PLANAR) return MBS_ROOT_FIXED;
    /* a planar root in the world x-z plane, the loader's or a URDF's own (Drake's compass gait):
     * q = [1 0 1 0] puts the base at z = 1, [0 1 1 0] at x = 1, and [0 0 0 1] turns it by π/2
     * about y */
    static const double qz[4] = {1, 0, 1, 0}, qx[4] = {0, 1, 1, 0}, qr[4] = {0, 0, 0, 1};
    double R[9], p[3], err = 0;
    mbs_joint_local_placement(m, 0, qz, R, p);
    err += fabs(p[0]) + fabs(p[1]) + fabs(p[2] - 1);
    mbs_joint_local_placement(m, 0, qx, R, p);
    err += fabs(p[0] - 1) + fabs(p[1]) + fabs(p[2]);
    mbs_joint_local_placement(m, 0, qr, R, p);
    /* R_y(π/2) column-major: x → −z, z → x */
    err += fabs(R[0]) + fabs(R[2] + 1) + fabs(R[4] - 1) + fabs(R[6] - 1) + fabs(R[8]);
    return err < 1e-9 ? MBS_ROOT_PLANAR : MBS_ROOT_FIXED;
}

static void quat_to_rpy(const double q[4], double rpy[3])
{
    double x = q[0], y = q[1], z = q[2], w = q[3];
    double sp = 2 * (w * y - z * x);
    rpy[0] = atan2(2 * (w * x + y * z), 1 - 2 * (x * x + y * y));
    rpy[1] = asin(sp > 1 ? 1 : sp < -1 ? -1 : sp);
    rpy[2] = atan2(2 * (w * z + x * y), 1 - 2 * (y * y + z * z));
}

int mbsi_base_pose(int root, const double *q, double p[3], double rpy[3])
{
    if (root == MBS_ROOT_FREE) {
        memcpy(p, q, 3 * sizeof(double));
        if (rpy) quat_to_rpy(q + 3, rpy);
        return 1;
    }
    if (root == MBS_ROOT_PLANAR) {
        p[0] = q[1];
        p[1] = 0;
        p[2] = q[0];
        if (rpy) {
            rpy[0] = rpy[2] = 0;
            rpy[1] = atan2(q[3], q[2]);
        }
        return 1;
    }
    return 0;
}

double mbsi_base_tilt_deg(int root, const double *q)
{
    if (root == MBS_ROOT_PLANAR) return fabs(atan2(q[3], q[2])) * (180 / MBS_PI);
    const double *qb = q + 3;
    double czz = 1 - 2 * (qb[0] * qb[0] + qb[1] * qb[1]);
    return acos(czz > 1 ? 1 : czz < -1 ? -1 : czz) * (180 / MBS_PI);
}
