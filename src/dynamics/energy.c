/* energy.c — kinetic and potential energy, centre of mass. */
#include "dynamics_internal.h"
#include "../model/model_internal.h"
#include "mbs/dynamics.h"
#include "mbs/liegroup.h"
#include "joint.h"

double mbs_kinetic_energy(const mbs_model *m, mbs_data *d, const double *q, const double *v)
{
    mbs_forward_kinematics(m, d, q, v, NULL);
    return mbsi_kinetic_energy_from_kinematics(m, d, v);
}

double mbsi_kinetic_energy_from_kinematics(const mbs_model *m, const mbs_data *d, const double *v)
{
    double ke = 0;
    for (int i = 0; i < m->nbodies; i++) {
        const mbs_body *b = &m->bodies[i];
        double h[6];
        inertia_mul(b->mass, b->h, b->Io, d->v + 6 * i, h);
        ke += 0.5 * sdot(d->v + 6 * i, h);
    }
    for (int k = 0; m->any_armature && k < m->nv; k++) ke += 0.5 * m->armature[k] * v[k] * v[k];   /* the rotors' */
    return ke;
}

double mbs_potential_energy(const mbs_model *m, mbs_data *d, const double *q)
{
    double com[3];
    mbs_center_of_mass(m, d, q, NULL, com, NULL);
    double mass = 0;
    for (int i = 0; i < m->nbodies; i++) mass += m->bodies[i].mass;
    return -mass * v3_dot(m->gravity, com);
}

void mbs_center_of_mass(const mbs_model *m, mbs_data *d, const double *q, const double *v, double com[3],
                        double vcom[3])
{
    int with_v = v && vcom;
    mbs_forward_kinematics(m, d, q, with_v ? v : NULL, NULL);
    double mass = 0, c[3] = {0, 0, 0}, pl[3] = {0, 0, 0};
    for (int i = 0; i < m->nbodies; i++) {
        const mbs_body *b = &m->bodies[i];
        double hw[3];
        /* world first moment of body i: R h + m p */
        m3_mulv(d->oR + 9 * i, b->h, hw);
        for (int k = 0; k < 3; k++) c[k] += hw[k] + b->mass * d->op[3 * i + k];
        mass += b->mass;
        if (with_v) {
            /* linear momentum m v + ω × h in body axes, rotated to the world */
            double l[3], t[3], lw[3];
            const double *vi = d->v + 6 * i;
            v3_cross(vi + 3, b->h, t);
            for (int k = 0; k < 3; k++) l[k] = b->mass * vi[k] + t[k];
            m3_mulv(d->oR + 9 * i, l, lw);
            for (int k = 0; k < 3; k++) pl[k] += lw[k];
        }
    }
    for (int k = 0; k < 3; k++) com[k] = mass > 0 ? c[k] / mass : 0;
    if (with_v)
        for (int k = 0; k < 3; k++) vcom[k] = mass > 0 ? pl[k] / mass : 0;
}

void mbs_com_jacobian(const mbs_model *m, mbs_data *d, const double *q, const double *v, double *Jcom, double drift[3])
{
    int with_drift = v && drift;
    if (with_drift) {
        /* kinematics with (q, v, q̈ = 0): the body accelerations are the drift's */
        double *zero = d->tmp_nv[3];
        memset(zero, 0, (size_t)m->nv * sizeof(double));
        mbs_forward_kinematics(m, d, q, v, zero);
    } else
        mbs_forward_kinematics(m, d, q, NULL, NULL);
    /* subtree mass and world first moment (m c), children before parents: bodies are
     * numbered depth-first, so a backward sweep sees every child before its parent */
    double *sub = d->tmp_6nb, mass = 0, acc[3] = {0, 0, 0};
    for (int i = 0; i < m->nbodies; i++) {
        const mbs_body *b = &m->bodies[i];
        double hw[3];
        m3_mulv(d->oR + 9 * i, b->h, hw);
        sub[4 * i] = b->mass;
        for (int k = 0; k < 3; k++) sub[4 * i + 1 + k] = hw[k] + b->mass * d->op[3 * i + k];
        mass += b->mass;
        if (with_drift) {
            /* Σ m a(c) over the body's points, q̈ = 0: m a + α × h + ω × (m v + ω × h), body axes */
            const double *vi = d->v + 6 * i, *ai = d->a + 6 * i;
            double l[3], t[3], u[3], s[3], w[3];
            v3_cross(vi + 3, b->h, t);
            for (int k = 0; k < 3; k++) l[k] = b->mass * vi[k] + t[k];
            v3_cross(vi + 3, l, u);
            v3_cross(ai + 3, b->h, t);
            for (int k = 0; k < 3; k++) s[k] = b->mass * ai[k] + t[k] + u[k];
            m3_mulv(d->oR + 9 * i, s, w);
            for (int k = 0; k < 3; k++) acc[k] += w[k];
        }
    }
    for (int i = m->nbodies - 1; i >= 0; i--) {
        int p = m->bodies[i].parent;
        if (p < 0) continue;
        for (int k = 0; k < 4; k++) sub[4 * p + k] += sub[4 * i + k];
    }
    /* column k: the subtree of its body moves with the joint's world twist (v0, ω):
     * J_com,k = (m_sub v0 + ω × (m c)_sub) / M */
    double inv = mass > 0 ? 1 / mass : 0;
    for (int i = 0; i < m->nbodies; i++) {
        const mbs_body *b = &m->bodies[i];
        const double *s = sub + 4 * i;
        for (int j = 0; j < b->nv; j++) {
            int c = b->idx_v + j;
            double S[6], t[3];
            se3_act_motion(d->oR + 9 * i, d->op + 3 * i, m->S + 6 * c, S);
            v3_cross(S + 3, s + 1, t);
            for (int k = 0; k < 3; k++) Jcom[3 * c + k] = (s[0] * S[k] + t[k]) * inv;
        }
    }
    if (with_drift)
        for (int k = 0; k < 3; k++) drift[k] = acc[k] * inv;
}

/* Perturbing coordinate k of joint i by ε moves the subtree of body i rigidly: in body i's frame
 * the parent's velocity, X_i v_λ, turns by −ε S_k × X_i v_λ (for a multi-coordinate joint every
 * coordinate's column S is that of q·exp(ε e_k), so the same holds), while the joint's own motion
 * and everything below it, seen from body i, is unchanged. Every body of the subtree therefore
 * gains the same velocity change, and
 *   ∂T/∂q_k = ⟨−S_k × X_i v_λ, H_i⟩,   H_i = Σ_{b in subtree(i)} X_bᵀ* I_b v_b,
 * the subtree's momentum in body i's frame, gathered by one backward pass. The free-flyer's
 * coordinates have no parent velocity: T does not depend on where the robot is. */
void mbs_kinetic_energy_dq(const mbs_model *m, mbs_data *d, const double *q, const double *v, double *dT_dq)
{
    /* d->a holds each body's parent velocity in its frame, d->f its subtree momentum */
    for (int i = 0; i < m->nbodies; i++) {
        const mbs_body *b = &m->bodies[i];
        double *R = d->liR + 9 * i, *p = d->lip + 3 * i, *vi = d->v + 6 * i, *vp = d->a + 6 * i, vJ[6];
        joint_placement(b, q + b->idx_q, R, p);
        joint_motion(b, m->S + 6 * b->idx_v, v + b->idx_v, vJ);
        if (b->parent < 0) memset(vp, 0, 6 * sizeof(double));
        else se3_actinv_motion(R, p, d->v + 6 * b->parent, vp);
        for (int k = 0; k < 6; k++) vi[k] = vp[k] + vJ[k];
        inertia_mul(b->mass, b->h, b->Io, vi, d->f + 6 * i);
    }
    for (int i = m->nbodies - 1; i >= 0; i--) {
        const mbs_body *b = &m->bodies[i];
        const double *H = d->f + 6 * i;
        for (int k = 0; k < b->nv; k++) {
            double c[6];
            motion_cross(m->S + 6 * (b->idx_v + k), d->a + 6 * i, c);
            dT_dq[b->idx_v + k] = -sdot(c, H);
        }
        if (b->parent >= 0) {
            double t[6], *Hp = d->f + 6 * b->parent;
            se3_act_force(d->liR + 9 * i, d->lip + 3 * i, H, t);
            for (int k = 0; k < 6; k++) Hp[k] += t[k];
        }
    }
}
