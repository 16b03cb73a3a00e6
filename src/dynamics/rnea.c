/* rnea.c — recursive Newton–Euler inverse dynamics (Featherstone, RBDA table 5.1), in body frames. */
#include "dynamics_internal.h"
#include "joint.h"

/* The backward pass from the body forces d->f: each joint's torque, each body's force added to
 * its parent's (RBDA table 5.1, second loop). */
static void backward(const mbs_model *m, mbs_data *d, double *tau)
{
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

/* f = I a + v ×* I v − f_ext: the force body b needs for its acceleration a at velocity v. */
static inline void body_force(const mbs_body *b, const double v[6], const double a[6], const double *fext, double f[6])
{
    double h[6], t[6];
    inertia_mul(b->mass, b->h, b->Io, a, f);
    inertia_mul(b->mass, b->h, b->Io, v, h);
    force_cross(v, h, t);
    for (int k = 0; k < 6; k++) f[k] += t[k];
    if (fext)
        for (int k = 0; k < 6; k++) f[k] -= fext[k];
}

/* τ += diag(armature) a: the rotors' inertial torques (a NULL: none) */
static void add_rotor_torques(const mbs_model *m, const double *a, double *tau)
{
    if (!m->any_armature || !a) return;
    for (int k = 0; k < m->nv; k++) tau[k] += m->armature[k] * a[k];
}

/* Both passes on the joint placements already in d->liR, d->lip. */
static void rnea_on_placements(const mbs_model *m, mbs_data *d, const double *v, const double *a, const double *fext,
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
        double vJ[6], aJ[6], c[6];
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
        body_force(b, vi, ai, fext ? fext + 6 * i : NULL, fi);
    }
    backward(m, d, tau);
    add_rotor_torques(m, a, tau);
}

void mbs_rnea_fext(const mbs_model *m, mbs_data *d, const double *q, const double *v,
                   const double *a, const double *fext, double *tau)
{
    joint_placements(m, q, d->tmp_6nb, d->liR, d->lip);
    rnea_on_placements(m, d, v, a, fext, tau);
}

void mbsi_rnea_from_kinematics(const mbs_model *m, mbs_data *d, const double *a, const double *fext, double *tau)
{
    double a0[6], g[3];
    gravity_motion(m, a0);
    for (int i = 0; i < m->nbodies; i++) {
        const mbs_body *b = &m->bodies[i];
        const double *vi = d->v + 6 * i;
        double *ai = d->a + 6 * i;
        /* the base's acceleration −g in body i's axes: a0 has no angular part, so moving it to
         * the body's origin leaves its linear part as it is */
        m3t_mulv(d->oR + 9 * i, a0, g);
        for (int k = 0; k < 3; k++) ai[k] += g[k];
        body_force(b, vi, ai, fext ? fext + 6 * i : NULL, d->f + 6 * i);
    }
    backward(m, d, tau);
    add_rotor_torques(m, a, tau);
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
