/* rnea.c — recursive Newton–Euler inverse dynamics (Featherstone, RBDA table 5.1), in body frames. */
#include "dynamics_internal.h"
#include "joint.h"

void mbs_rnea_fext(const mbs_model *m, mbs_data *d, const double *q, const double *v,
                   const double *a, const double *fext, double *tau)
{
    joint_placements(m, q, d->tmp_6nb, d->liR, d->lip);
    mbsi_rnea_from_placements(m, d, v, a, fext, tau);
}

void mbsi_rnea_from_placements(const mbs_model *m, mbs_data *d, const double *v, const double *a, const double *fext,
                               double *tau)
{
    double a0[6];
    gravity_motion(m, a0);
    for (int i = 0; i < m->nbodies; i++) {
        const mbs_body *b = &m->bodies[i];
        const double *S = m->S + 6 * b->idx_v;
        const double *R = d->liR + 9 * i, *p = d->lip + 3 * i;
        double *vi = d->v + 6 * i, *ai = d->a + 6 * i, *fi = d->f + 6 * i;
        int par = b->parent;
        double vJ[6], aJ[6], c[6], h[6], t[6];
        joint_motion(b, S, v + b->idx_v, vJ);
        joint_motion(b, S, a + b->idx_v, aJ);
        if (par < 0) {
            memcpy(vi, vJ, sizeof vJ);
            se3_actinv_motion(R, p, a0, ai);
        } else {
            se3_actinv_motion(R, p, d->v + 6 * par, vi);
            for (int k = 0; k < 6; k++) vi[k] += vJ[k];
            se3_actinv_motion(R, p, d->a + 6 * par, ai);
        }
        motion_cross(vi, vJ, c);
        for (int k = 0; k < 6; k++) ai[k] += aJ[k] + c[k];
        /* f_i = I a_i + v_i ×* I v_i - f_ext */
        inertia_mul(b->mass, b->h, b->Io, ai, fi);
        inertia_mul(b->mass, b->h, b->Io, vi, h);
        force_cross(vi, h, t);
        for (int k = 0; k < 6; k++) fi[k] += t[k];
        if (fext)
            for (int k = 0; k < 6; k++) fi[k] -= fext[6 * i + k];
    }
    for (int i = m->nbodies - 1; i >= 0; i--) {
        const mbs_body *b = &m->bodies[i];
        const double *fi = d->f + 6 * i;
        joint_force(b, m->S + 6 * b->idx_v, fi, tau + b->idx_v);
        if (b->parent >= 0) {
            double t[6], *fp = d->f + 6 * b->parent;
            se3_act_force(d->liR + 9 * i, d->lip + 3 * i, fi, t);
            for (int k = 0; k < 6; k++) fp[k] += t[k];
        }
    }
}

void mbs_rnea(const mbs_model *m, mbs_data *d, const double *q, const double *v, const double *a,
              double *tau)
{
    mbs_rnea_fext(m, d, q, v, a, NULL, tau);
}

void mbs_gravity(const mbs_model *m, mbs_data *d, const double *q, double *g)
{
    double *zero = d->tmp_nv[3];
    memset(zero, 0, (size_t)m->nv * sizeof(double));
    mbs_rnea_fext(m, d, q, zero, zero, NULL, g);
}

void mbs_nonlinear_effects(const mbs_model *m, mbs_data *d, const double *q, const double *v, double *h)
{
    double *zero = d->tmp_nv[3];
    memset(zero, 0, (size_t)m->nv * sizeof(double));
    mbs_rnea_fext(m, d, q, v, zero, NULL, h);
}
