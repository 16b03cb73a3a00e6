/* joint.h — what each joint type contributes to the recursive algorithms: its placement
 * in the parent body for a given q, and products with its motion subspace S (constant in
 * the body frame for every joint type of the model, so the bias c_J is zero). */
#ifndef MBS_JOINT_H
#define MBS_JOINT_H

#include "../model/model_internal.h"
#include "mbs/dynamics.h"
#include "mbs/liegroup.h"
#include "../spatial/spatial.h"

/* Placement (R, p) of a revolute body b in its parent for the joint angle whose sine and cosine
 * are s, c: tree transform times joint motion. About -x, -y or -z it turns by -q about +x, ... */
static inline void revolute_placement(const mbs_body *b, double s, double c, double R[9], double p[3])
{
    const double *T = b->Rt;
    int a = b->axis_id;
    if (a < 0 && b->axis_neg_id >= 0) {
        a = b->axis_neg_id;
        s = -s;
    }
    memcpy(p, b->pt, 3 * sizeof(double));
    switch (a) {
    case 0:
        for (int i = 0; i < 3; i++) {
            R[i] = T[i];
            R[i + 3] = c * T[i + 3] + s * T[i + 6];
            R[i + 6] = -s * T[i + 3] + c * T[i + 6];
        }
        return;
    case 1:
        for (int i = 0; i < 3; i++) {
            R[i] = c * T[i] - s * T[i + 6];
            R[i + 3] = T[i + 3];
            R[i + 6] = s * T[i] + c * T[i + 6];
        }
        return;
    case 2:
        for (int i = 0; i < 3; i++) {
            R[i] = c * T[i] + s * T[i + 3];
            R[i + 3] = -s * T[i] + c * T[i + 3];
            R[i + 6] = T[i + 6];
        }
        return;
    default: {
        double Rj[9];
        m3_axis_angle(b->axis, c, s, Rj);
        m3_mul(T, Rj, R);
        return;
    }
    }
}

/* Placement (R, p) of body b in its parent: tree transform times joint motion. */
static inline void joint_placement(const mbs_body *b, const double *q, double R[9], double p[3])
{
    const double *T = b->Rt;
    switch (b->type) {
    case MBS_JOINT_REVOLUTE: {
        double s, c;
        sin_cos(q[0], &s, &c);
        revolute_placement(b, s, c, R, p);
        return;
    }
    case MBS_JOINT_PRISMATIC: {
        double t[3] = {b->axis[0] * q[0], b->axis[1] * q[0], b->axis[2] * q[0]}, u[3];
        m3_mulv(T, t, u);
        memcpy(R, T, 9 * sizeof(double));
        p[0] = b->pt[0] + u[0]; p[1] = b->pt[1] + u[1]; p[2] = b->pt[2] + u[2];
        return;
    }
    case MBS_JOINT_FREEFLYER: {
        double Rj[9];
        m3_from_quat(q + 3, Rj);
        se3_compose(T, b->pt, Rj, q, R, p);
        return;
    }
    case MBS_JOINT_BALL: {
        double Rj[9];
        m3_from_quat(q, Rj);
        m3_mul(T, Rj, R);
        memcpy(p, b->pt, 3 * sizeof(double));
        return;
    }
    case MBS_JOINT_PLANAR: {
        double Rj[9], pj[3];
        m3_axis_angle(b->axis, q[2], q[3], Rj);
        for (int k = 0; k < 3; k++) pj[k] = q[0] * b->plane[k] + q[1] * b->plane[3 + k];
        se3_compose(T, b->pt, Rj, pj, R, p);
        return;
    }
    }
}

/* The sines and cosines of every body's joint coordinate (one-coordinate joints; 0 for the others)
 * into *sn, *cs, all in one vectorised loop (sin_cos_n), carved from scratch (3 nb doubles).
 * Every body's placement in its parent into (liR, lip) from them (joint_placements):
 * the joints' placements are independent, and the polynomials of eight joints then run in the
 * lanes of one vector instead of eight chains. */
static inline void joint_sin_cos(const mbs_model *m, const double *q, double *scratch, double **sn, double **cs)
{
    int nb = m->nbodies;
    /* padded to whole vectors of eight when the scratch (6 nb doubles) has room for three of
     * them: the loop then never runs its narrower tail (four lanes, then one by one) */
    int n = (nb + 7) & ~7;
    if (3 * n > 6 * nb) n = nb;
    double *ang = scratch;
    *sn = ang + n;
    *cs = ang + 2 * n;
    for (int i = 0; i < nb; i++) ang[i] = m->bodies[i].nq == 1 ? q[m->bodies[i].idx_q] : 0;
    for (int i = nb; i < n; i++) ang[i] = 0;
    sin_cos_n(ang, n, *sn, *cs);
}

static inline void joint_placements(const mbs_model *m, const double *q, double *scratch, double *liR, double *lip)
{
    int nb = m->nbodies;
    double *sn, *cs;
    joint_sin_cos(m, q, scratch, &sn, &cs);
    for (int i = 0; i < nb; i++) {
        const mbs_body *b = &m->bodies[i];
        if (b->type == MBS_JOINT_REVOLUTE) revolute_placement(b, sn[i], cs[i], liR + 9 * i, lip + 3 * i);
        else joint_placement(b, q + b->idx_q, liR + 9 * i, lip + 3 * i);
    }
}

/* o = S x (x has nv entries): the joint's spatial velocity for joint rates x. */
static inline void joint_motion(const mbs_body *b, const double *S, const double *x, double o[6])
{
    /* revolute: S = [0; axis], three products instead of six */
    if (b->type == MBS_JOINT_REVOLUTE) {
        o[0] = o[1] = o[2] = 0;
        o[3] = b->axis[0] * x[0]; o[4] = b->axis[1] * x[0]; o[5] = b->axis[2] * x[0];
        return;
    }
    if (b->nv == 1) {
        for (int k = 0; k < 6; k++) o[k] = S[k] * x[0];
        return;
    }
    memset(o, 0, 6 * sizeof(double));
    for (int j = 0; j < b->nv; j++)
        for (int k = 0; k < 6; k++) o[k] += S[6 * j + k] * x[j];
}

/* o = Sᵀ f (o has nv entries). */
static inline void joint_force(const mbs_body *b, const double *S, const double f[6], double *o)
{
    /* revolute: Sᵀ f is the torque about the axis (a pick when the axis is x, y or z) */
    if (b->type == MBS_JOINT_REVOLUTE) {
        o[0] = b->axis_id >= 0 ? f[3 + b->axis_id] : v3_dot(b->axis, f + 3);
        return;
    }
    for (int j = 0; j < b->nv; j++) o[j] = sdot(S + 6 * j, f);
}

/* World-frame columns J = X S of joint b, (oR, op) being the body's world placement. */
static inline void joint_world_columns(const mbs_body *b, const double *S, const double oR[9], const double op[3],
                                       double *J)
{
    /* revolute: J = [op x w; w] with w = oR axis, a column of oR when the axis is x, y or z */
    if (b->type == MBS_JOINT_REVOLUTE) {
        /* w is built in registers and stored once: reading back a half-written J stalls */
        double w[3];
        if (b->axis_id >= 0) { const double *c = oR + 3 * b->axis_id; w[0] = c[0]; w[1] = c[1]; w[2] = c[2]; }
        else m3_mulv(oR, b->axis, w);
        v3_cross(op, w, J);
        J[3] = w[0]; J[4] = w[1]; J[5] = w[2];
        return;
    }
    for (int k = 0; k < b->nv; k++) se3_act_motion(oR, op, S + 6 * k, J + 6 * k);
}

/* The gravity acceleration as a fictitious base acceleration [-g; 0]. */
static inline void gravity_motion(const mbs_model *m, double a0[6])
{
    a0[0] = -m->gravity[0]; a0[1] = -m->gravity[1]; a0[2] = -m->gravity[2];
    a0[3] = a0[4] = a0[5] = 0;
}

#endif
