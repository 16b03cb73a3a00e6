/* jacobian.c — joint and frame Jacobians and the frame drift J̇ v. */
#include "../model/model_internal.h"
#include "mbs/dynamics.h"
#include "mbs/liegroup.h"
#include "joint.h"
#include "dynamics_internal.h"

void mbs_compute_joint_jacobians(const mbs_model *m, mbs_data *d, const double *q)
{
    mbs_forward_kinematics(m, d, q, NULL, NULL);
    mbsi_joint_jacobians_from_placements(m, d);
}

void mbsi_joint_jacobians_from_placements(const mbs_model *m, mbs_data *d)
{
    /* joint_world_columns: a revolute joint about x, y or z takes its axis as a column of oR */
    for (int i = 0; i < m->nbodies; i++) {
        const mbs_body *b = &m->bodies[i];
        joint_world_columns(b, m->S + 6 * b->idx_v, d->oR + 9 * i, d->op + 3 * i, d->J + 6 * b->idx_v);
    }
}

void mbs_frame_jacobian(const mbs_model *m, const mbs_data *d, int frame, const double offset[3],
                           mbs_reference_frame ref, double *J, int ldJ)
{
    const mbs_frame *f = &m->frames[frame];
    for (int c = 0; c < m->nv; c++) memset(J + (size_t)ldJ * c, 0, 6 * sizeof(double));
    if (f->body < 0) return;
    /* world placement of the point */
    double R[9], p[3];
    se3_compose(d->oR + 9 * f->body, d->op + 3 * f->body, f->R, f->p, R, p);
    if (offset) {
        double t[3];
        m3_mulv(R, offset, t);
        p[0] += t[0]; p[1] += t[1]; p[2] += t[2];
    }
    const mbs_body *b = &m->bodies[f->body];
    /* walk the support of the body: its dofs and their ancestors */
    for (int c = b->idx_v + b->nv - 1; c >= 0; c = m->dof_parent[c]) {
        const double *Jw = d->J + 6 * c;
        double *o = J + (size_t)ldJ * c;
        switch (ref) {
        case MBS_WORLD: memcpy(o, Jw, 6 * sizeof(double)); break;
        case MBS_LOCAL_WORLD_ALIGNED: {
            double t[3];
            v3_cross(Jw + 3, p, t);   /* v_p = v_0 + ω × p = v_0 - p × ω */
            for (int k = 0; k < 3; k++) { o[k] = Jw[k] + t[k]; o[3 + k] = Jw[3 + k]; }
            break;
        }
        case MBS_LOCAL: se3_actinv_motion(R, p, Jw, o); break;
        }
    }
}

void mbs_compute_frame_jacobian(const mbs_model *m, mbs_data *d, const double *q, int frame,
                        const double offset[3], mbs_reference_frame ref, double *J, int ldJ)
{
    mbs_compute_joint_jacobians(m, d, q);
    mbs_frame_jacobian(m, d, frame, offset, ref, J, ldJ);
}

void mbs_frame_jdot_v(const mbs_model *m, mbs_data *d, const double *q, const double *v, int frame,
                      const double offset[3], mbs_reference_frame ref, double out[6])
{
    double *zero = d->tmp_nv[3];
    memset(zero, 0, (size_t)m->nv * sizeof(double));
    mbs_forward_kinematics(m, d, q, v, zero);
    mbs_frame_classical_acceleration(m, d, frame, offset, ref, out);
}
