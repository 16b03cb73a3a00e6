/* derivatives.c — analytical derivatives of RNEA and ABA (Carpentier & Mansard, "Analytical
 * derivatives of rigid body dynamics algorithms", RSS 2018), in the world frame.
 *
 * Why the world frame: a tangent perturbation δ of dof k moves the whole subtree of k
 * rigidly by exp(S_k δ), so every world quantity X of that subtree changes by S_k × X
 * (motions), S_k ×* X (forces) or S_k ×* Y − Y S_k × (inertias). What is left after those
 * rigid terms depends only on the parent's velocity and acceleration, giving, for dof k of
 * body b with parent λ (S_k world column, v, a world velocities and accelerations, gravity
 * included in a):
 *   ∂v_i/∂q_k = S_k × v_i + dVdq_k,       dVdq_k = v_λ × S_k
 *   ∂a_i/∂q_k = S_k × a_i − v_i × dVdq_k + dAdq_k,  dAdq_k = a_λ × S_k + v_λ × dVdq_k
 *   ∂a_i/∂q̇_k = dAdv_k − v_i × S_k,       dAdv_k = (v_b + v_λ) × S_k
 * and with f_i = Y_i a_i + v_i ×* Y_i v_i, B_i m = v_i ×* Y_i m − Y_i (v_i × m) + m ×* (Y_i v_i):
 *   ∂τ_j/∂q_k = S_jᵀ (Yc dAdq_k + Bc dVdq_k [+ S_k ×* Fc when j is a strict ancestor of b])
 *   ∂τ_j/∂q̇_k = S_jᵀ (Yc dAdv_k + Bc S_k)
 * where Yc, Bc, Fc are the composite (subtree) sums of the deeper of the bodies of j and k. */
#include "../internal.h"
#include "aba.h"
#include "joint.h"
#include "ltdl.h"

/* B = crf(v) Y − Y crm(v) + [m ↦ m ×* h], with Y the 6x6 inertia: since crf = −crmᵀ and Y
 * is symmetric, crf(v) Y − Y crm(v) = −(T + Tᵀ) with T = Y crm(v). */
static void inertia_variation(const double Y[36], const double v[6], const double h[6], double B[36])
{
    double C[36] = {0}, T[36];
    const double *lin = v, *ang = v + 3;
    /* crm(v) = [[ [w]x, [v]x ], [0, [w]x ]] */
    double W[9] = {0, ang[2], -ang[1], -ang[2], 0, ang[0], ang[1], -ang[0], 0};
    double V[9] = {0, lin[2], -lin[1], -lin[2], 0, lin[0], lin[1], -lin[0], 0};
    for (int j = 0; j < 3; j++)
        for (int i = 0; i < 3; i++) {
            C[i + 6 * j] = W[i + 3 * j];
            C[(i + 3) + 6 * (j + 3)] = W[i + 3 * j];
            C[i + 6 * (j + 3)] = V[i + 3 * j];
        }
    for (int j = 0; j < 6; j++) m6_mulv(Y, C + 6 * j, T + 6 * j);
    for (int j = 0; j < 6; j++)
        for (int i = 0; i < 6; i++) B[i + 6 * j] = -(T[i + 6 * j] + T[j + 6 * i]);
    /* m ×* h = [−[hf]x mw; −[hf]x mv − [hn]x mw] */
    const double *hf = h, *hn = h + 3;
    double Hf[9] = {0, hf[2], -hf[1], -hf[2], 0, hf[0], hf[1], -hf[0], 0};
    double Hn[9] = {0, hn[2], -hn[1], -hn[2], 0, hn[0], hn[1], -hn[0], 0};
    for (int j = 0; j < 3; j++)
        for (int i = 0; i < 3; i++) {
            B[i + 6 * (j + 3)] -= Hf[i + 3 * j];
            B[(i + 3) + 6 * j] -= Hf[i + 3 * j];
            B[(i + 3) + 6 * (j + 3)] -= Hn[i + 3 * j];
        }
}

/* o = Bᵀ x for a 6x6 column-major B. */
static inline void m6t_mulv(const double B[36], const double x[6], double o[6])
{
    for (int j = 0; j < 6; j++) o[j] = sdot(B + 6 * j, x);
}

void mbs_rnea_derivatives(const mbs_model *m, mbs_data *d, const double *q, const double *v,
                          const double *a, double *dtau_dq, double *dtau_dv, double *dtau_da)
{
    const int nv = m->nv;
    double a0[6];
    gravity_motion(m, a0);
    static const double zero6[6] = {0, 0, 0, 0, 0, 0};
    /* joint placements are independent of each other: a loop of their own lets them overlap */
    for (int i = 0; i < m->nbodies; i++) {
        const mbs_body *b = &m->bodies[i];
        joint_placement(b, q + b->idx_q, d->liR + 9 * i, d->lip + 3 * i);
    }
    /* forward pass: world placements, motions and the dof columns */
    for (int i = 0; i < m->nbodies; i++) {
        const mbs_body *b = &m->bodies[i];
        int par = b->parent;
        double *R = d->liR + 9 * i, *p = d->lip + 3 * i, *oR = d->oR + 9 * i, *op = d->op + 3 * i;
        if (par < 0) { memcpy(oR, R, 9 * sizeof(double)); memcpy(op, p, 3 * sizeof(double)); }
        else se3_compose(d->oR + 9 * par, d->op + 3 * par, R, p, oR, op);
        const double *vp = par < 0 ? zero6 : d->ov + 6 * par;
        const double *ap = par < 0 ? a0 : d->oa + 6 * par;
        double *ov = d->ov + 6 * i, *oa = d->oa + 6 * i, vJ[6] = {0}, aJ[6] = {0}, c[6];
        joint_world_columns(b, m->S + 6 * b->idx_v, oR, op, d->J + 6 * b->idx_v);
        for (int k = 0; k < b->nv; k++) {
            int col = b->idx_v + k;
            const double *Jk = d->J + 6 * col;
            for (int r = 0; r < 6; r++) { vJ[r] += Jk[r] * v[col]; aJ[r] += Jk[r] * a[col]; }
        }
        for (int r = 0; r < 6; r++) ov[r] = vp[r] + vJ[r];
        motion_cross(ov, vJ, c);
        for (int r = 0; r < 6; r++) oa[r] = ap[r] + aJ[r] + c[r];
        for (int k = 0; k < b->nv; k++) {
            int col = b->idx_v + k;
            const double *Jk = d->J + 6 * col;
            double *dVdq = d->dVdq + 6 * col, *dAdq = d->dAdq + 6 * col, *dAdv = d->dAdv + 6 * col, t[6];
            motion_cross(vp, Jk, dVdq);
            motion_cross(ap, Jk, dAdq);
            motion_cross(vp, dVdq, t);
            for (int r = 0; r < 6; r++) dAdq[r] += t[r];
            motion_cross(ov, Jk, dAdv);
            for (int r = 0; r < 6; r++) dAdv[r] += dVdq[r];
        }
    }
    /* world inertia, momentum, force and the inertia variation B: independent per body */
    for (int i = 0; i < m->nbodies; i++) {
        const mbs_body *b = &m->bodies[i];
        const double *oR = d->oR + 9 * i, *op = d->op + 3 * i, *ov = d->ov + 6 * i, *oa = d->oa + 6 * i;
        double *Yc = d->oYc + 16 * i, Y6[36], *oh = d->oh + 6 * i, *of = d->of + 6 * i, t[6];
        Yc[0] = b->mass;
        inertia_act(oR, op, b->mass, b->h, b->Io, Yc + 1, Yc + 4);
        inertia_mul(Yc[0], Yc + 1, Yc + 4, ov, oh);
        inertia_mul(Yc[0], Yc + 1, Yc + 4, oa, of);
        force_cross(ov, oh, t);
        for (int r = 0; r < 6; r++) of[r] += t[r];
        inertia_matrix(Yc[0], Yc + 1, Yc + 4, Y6);
        inertia_variation(Y6, ov, oh, d->oBc + 36 * i);
    }
    if (dtau_da) memset(dtau_da, 0, sizeof(double) * (size_t)nv * nv);
    memset(dtau_dq, 0, sizeof(double) * (size_t)nv * nv);
    memset(dtau_dv, 0, sizeof(double) * (size_t)nv * nv);
    /* backward pass: composite quantities and the derivative columns, leaves first */
    for (int i = m->nbodies - 1; i >= 0; i--) {
        const mbs_body *b = &m->bodies[i];
        const double *Yc = d->oYc + 16 * i, *Bc = d->oBc + 36 * i, *Fc = d->of + 6 * i;
        for (int k = 0; k < b->nv; k++) {
            int col = b->idx_v + k;
            const double *Jk = d->J + 6 * col;
            double *dFda = d->dFda + 6 * col, *dFdv = d->dFdv + 6 * col, *dFdq = d->dFdq + 6 * col, t[6];
            inertia_mul(Yc[0], Yc + 1, Yc + 4, Jk, dFda);
            inertia_mul(Yc[0], Yc + 1, Yc + 4, d->dAdv + 6 * col, dFdv);
            m6_mulv(Bc, Jk, t);
            for (int r = 0; r < 6; r++) dFdv[r] += t[r];
            inertia_mul(Yc[0], Yc + 1, Yc + 4, d->dAdq + 6 * col, dFdq);
            m6_mulv(Bc, d->dVdq + 6 * col, t);
            for (int r = 0; r < 6; r++) dFdq[r] += t[r];
        }
        /* rows of this joint, columns of its subtree (itself and descendants) */
        int c0 = b->idx_v, c1 = b->idx_v + b->nv_subtree;
        for (int k = 0; k < b->nv; k++) {
            int row = b->idx_v + k;
            const double *Jr = d->J + 6 * row;
            for (int col = c0; col < c1; col++) {
                dtau_dq[row + (size_t)nv * col] = sdot(Jr, d->dFdq + 6 * col);
                dtau_dv[row + (size_t)nv * col] = sdot(Jr, d->dFdv + 6 * col);
                if (dtau_da) dtau_da[row + (size_t)nv * col] = sdot(Jr, d->dFda + 6 * col);
            }
        }
        /* rows of this joint, columns of strict ancestors */
        for (int k = 0; k < b->nv; k++) {
            int row = b->idx_v + k;
            const double *Jr = d->J + 6 * row, *r1 = d->dFda + 6 * row;
            double r2[6];
            m6t_mulv(Bc, Jr, r2);
            for (int col = m->dof_parent[b->idx_v]; col >= 0; col = m->dof_parent[col]) {
                dtau_dq[row + (size_t)nv * col] = sdot(r1, d->dAdq + 6 * col) + sdot(r2, d->dVdq + 6 * col);
                dtau_dv[row + (size_t)nv * col] = sdot(r1, d->dAdv + 6 * col) + sdot(r2, d->J + 6 * col);
                if (dtau_da) dtau_da[row + (size_t)nv * col] = sdot(r1, d->J + 6 * col);
            }
        }
        /* the rigid term seen by strict ancestors: dFdq_k += S_k ×* Fc */
        for (int k = 0; k < b->nv; k++) {
            int col = b->idx_v + k;
            double t[6];
            force_cross(d->J + 6 * col, Fc, t);
            for (int r = 0; r < 6; r++) d->dFdq[6 * col + r] += t[r];
        }
        if (b->parent >= 0) {
            int pi = b->parent;
            double *Yp = d->oYc + 16 * pi, *Bp = d->oBc + 36 * pi, *Fp = d->of + 6 * pi;
            for (int r = 0; r < 13; r++) Yp[r] += Yc[r];
            for (int r = 0; r < 36; r++) Bp[r] += Bc[r];
            for (int r = 0; r < 6; r++) Fp[r] += Fc[r];
        }
    }
}

void mbs_aba_derivatives(const mbs_model *m, mbs_data *d, const double *q, const double *v,
                         const double *tau, double *ddq, double *dddq_dq, double *dddq_dv,
                         double *dddq_dtau)
{
    const int nv = m->nv;
    double *acc = ddq ? ddq : d->tmp_nv[0];
    mbs_aba_passes(m, d, q, v, tau, NULL, acc);
    if (!dddq_dq && !dddq_dv && !dddq_dtau) return;
    /* ∂q̈/∂x = −M⁻¹ ∂τ/∂x at q̈ = aba(q, v, τ); M comes out of the same pass as ∂τ/∂q̈. */
    double *dq = d->tmp_nvnv, *dv = d->M2;
    mbs_rnea_derivatives(m, d, q, v, acc, dq, dv, d->M);
    mbs_ltdl(m, d, d->M);
    /* one row-major block [−∂τ/∂q | −∂τ/∂v | 1] solved at once */
    double *out[3] = {dddq_dq, dddq_dv, dddq_dtau};
    const double *in[3] = {dq, dv, NULL};
    int nb = 0, which[3];
    for (int k = 0; k < 3; k++)
        if (out[k]) which[nb++] = k;
    int ncols = nb * nv;
    double *X = d->rows;
    for (int b = 0; b < nb; b++) {
        const double *A = in[which[b]];
        for (int c = 0; c < nv; c++)
            for (int i = 0; i < nv; i++)
                X[(size_t)ncols * i + b * nv + c] = A ? -A[i + (size_t)nv * c] : (i == c);
    }
    mbs_ltdl_solve_rows(m, d, X, ncols);
    for (int b = 0; b < nb; b++) {
        double *O = out[which[b]];
        for (int c = 0; c < nv; c++)
            for (int i = 0; i < nv; i++) O[i + (size_t)nv * c] = X[(size_t)ncols * i + b * nv + c];
    }
}
