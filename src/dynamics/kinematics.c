/* kinematics.c — placements, velocities and accelerations of bodies and frames. */
#include "../model/model_internal.h"
#include "mbs/dynamics.h"
#include "mbs/liegroup.h"
#include "joint.h"

void mbs_forward_kinematics(const mbs_model *m, mbs_data *d, const double *q, const double *v,
                            const double *a)
{
    static const double zero6[6] = {0, 0, 0, 0, 0, 0};
    joint_placements(m, q, d->tmp_6nb, d->liR, d->lip);
    for (int i = 0; i < m->nbodies; i++) {
        const mbs_body *b = &m->bodies[i];
        const double *R = d->liR + 9 * i, *p = d->lip + 3 * i;
        int par = b->parent;
        if (par < 0) {
            memcpy(d->oR + 9 * i, R, 9 * sizeof(double));
            memcpy(d->op + 3 * i, p, 3 * sizeof(double));
        } else
            se3_compose(d->oR + 9 * par, d->op + 3 * par, R, p, d->oR + 9 * i, d->op + 3 * i);
        if (!v) continue;
        const double *S = m->S + 6 * b->idx_v;
        double vJ[6], *vi = d->v + 6 * i;
        joint_motion(b, S, v + b->idx_v, vJ);
        se3_actinv_motion(R, p, par < 0 ? zero6 : d->v + 6 * par, vi);
        for (int k = 0; k < 6; k++) vi[k] += vJ[k];
        if (!a) continue;
        /* a_i = X a_λ + S q̈ + v_i × S q̇ (S is constant in the body frame). */
        double aJ[6], c[6], *ai = d->a + 6 * i;
        joint_motion(b, S, a + b->idx_v, aJ);
        motion_cross(vi, vJ, c);
        se3_actinv_motion(R, p, par < 0 ? zero6 : d->a + 6 * par, ai);
        for (int k = 0; k < 6; k++) ai[k] += aJ[k] + c[k];
    }
}

void mbs_joint_local_placement(const mbs_model *m, int b, const double *q, double R[9], double p[3])
{
    joint_placement(&m->bodies[b], q, R, p);
}

void mbs_body_placement(const mbs_model *m, const mbs_data *d, int b, double R[9], double p[3])
{
    (void)m;
    memcpy(R, d->oR + 9 * b, 9 * sizeof(double));
    memcpy(p, d->op + 3 * b, 3 * sizeof(double));
}

void mbs_frame_placement(const mbs_model *m, const mbs_data *d, int frame, double R[9], double p[3])
{
    const mbs_frame *f = &m->frames[frame];
    if (f->body < 0) {
        memcpy(R, f->R, 9 * sizeof(double));
        memcpy(p, f->p, 3 * sizeof(double));
        return;
    }
    se3_compose(d->oR + 9 * f->body, d->op + 3 * f->body, f->R, f->p, R, p);
}

void mbs_compute_frame_placement(const mbs_model *m, mbs_data *d, const double *q, int frame, double R[9],
                         double p[3])
{
    mbs_forward_kinematics(m, d, q, NULL, NULL);
    mbs_frame_placement(m, d, frame, R, p);
}

/* Placement of the point (frame axes, origin shifted by offset) in its body. */
static void point_in_body(const mbs_frame *f, const double offset[3], double p[3])
{
    memcpy(p, f->p, 3 * sizeof(double));
    if (offset) {
        double t[3];
        m3_mulv(f->R, offset, t);
        p[0] += t[0]; p[1] += t[1]; p[2] += t[2];
    }
}

/* Re-expresses a body-frame spatial motion (velocity or acceleration) at the point's origin
 * in the requested axes. */
static void express_motion(const mbs_data *d, const mbs_frame *f, const double pb[3], const double mb[6],
                           mbs_reference_frame ref, double out[6])
{
    const double *oR = f->body >= 0 ? d->oR + 9 * f->body : NULL;
    const double *op = f->body >= 0 ? d->op + 3 * f->body : NULL;
    double mp[6], t[3];
    /* shift to the point: v_p = v + w x p (body axes) */
    v3_cross(mb + 3, pb, t);
    for (int k = 0; k < 3; k++) { mp[k] = mb[k] + t[k]; mp[3 + k] = mb[3 + k]; }
    double I[9];
    if (!oR) { m3_identity(I); oR = I; }
    switch (ref) {
    case MBS_LOCAL:
        m3t_mulv(f->R, mp, out);
        m3t_mulv(f->R, mp + 3, out + 3);
        return;
    case MBS_LOCAL_WORLD_ALIGNED:
        m3_mulv(oR, mp, out);
        m3_mulv(oR, mp + 3, out + 3);
        return;
    case MBS_WORLD:
        if (op) se3_act_motion(oR, op, mb, out);
        else memcpy(out, mb, 6 * sizeof(double));
        return;
    }
}

void mbs_frame_velocity(const mbs_model *m, const mbs_data *d, int frame, const double offset[3],
                        mbs_reference_frame ref, double out[6])
{
    const mbs_frame *f = &m->frames[frame];
    double pb[3];
    point_in_body(f, offset, pb);
    if (f->body < 0) { memset(out, 0, 6 * sizeof(double)); return; }
    express_motion(d, f, pb, d->v + 6 * f->body, ref, out);
}

void mbs_frame_classical_acceleration(const mbs_model *m, const mbs_data *d, int frame,
                                      const double offset[3], mbs_reference_frame ref, double out[6])
{
    const mbs_frame *f = &m->frames[frame];
    if (f->body < 0) { memset(out, 0, 6 * sizeof(double)); return; }
    double pb[3], ac[6], vp[6], t[3];
    point_in_body(f, offset, pb);
    const double *vb = d->v + 6 * f->body;
    /* classical = spatial acceleration at the point + ω × v_point (body axes) */
    v3_cross(vb + 3, pb, t);
    for (int k = 0; k < 3; k++) vp[k] = vb[k] + t[k];
    memcpy(ac, d->a + 6 * f->body, 6 * sizeof(double));
    {
        double wv[3];
        v3_cross(vb + 3, vp, wv);
        for (int k = 0; k < 3; k++) ac[k] += wv[k];
    }
    /* express_motion shifts by ω̇ × p, which is the remaining term of the point's acceleration */
    /* A classical acceleration belongs to a point, not to the world origin: WORLD gives it in
     * world axes at the point. */
    if (ref == MBS_WORLD) ref = MBS_LOCAL_WORLD_ALIGNED;
    express_motion(d, f, pb, ac, ref, out);
}
