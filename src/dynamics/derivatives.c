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
 * where Yc, Bc, Fc are the composite (subtree) sums of the deeper of the bodies of j and k.
 *
 * ABA derivatives need no separate ABA: the same passes run with q̈ = 0 give the bias torques
 * τ_b and (from the composite inertias) M, so q̈ = M⁻¹ (τ − τ_b) by the LTDL factor; q̈ then
 * only adds δa to the accelerations and Y δa to the forces, and ∂q̈/∂x = −M⁻¹ ∂τ/∂x. */
#include "../model/model_internal.h"
#include "mbs/dynamics.h"
#include "mbs/liegroup.h"
#include "joint.h"
#include "dynamics_internal.h"

/* B = crf(v) Y − Y crm(v) + [m ↦ m ×* Yv] has only two non-zero 3x3 blocks once expanded
 * with Y = [[m 1, −[c̄]x], [[c̄]x, Io]] (c̄ = m c) and p = Y v = [p_l; p_a]:
 *   B = [[0, [β]x], [0, B22]],  β = −2 p_l,
 *   B22 = −([c̄]x[v]x + [v]x[c̄]x) − (Io[ω]x − [ω]xIo) − [p_a]x,
 * so it is stored as 12 numbers (β, B22) and applied in a few products. */
static void inertia_variation(const double Yc[13], const double v[6], const double p[6], double B[12])
{
    const double *cb = Yc + 1, *Io = Yc + 4, *lin = v, *w = v + 3;
    double *B22 = B + 3;
    for (int k = 0; k < 3; k++) B[k] = -2 * p[k];
    /* [a]x[b]x + [b]x[a]x = a bᵀ + b aᵀ − 2 (a·b) 1 */
    double cv = v3_dot(cb, lin);
    double wx[3][3] = {{0, w[2], -w[1]}, {-w[2], 0, w[0]}, {w[1], -w[0], 0}};  /* columns of [ω]x */
    for (int j = 0; j < 3; j++) {
        double IoW[3], WIo[3];
        m3_mulv(Io, wx[j], IoW);          /* column j of Io [ω]x */
        v3_cross(w, Io + 3 * j, WIo);     /* column j of [ω]x Io */
        for (int i = 0; i < 3; i++)
            B22[i + 3 * j] = -(lin[i] * cb[j] + cb[i] * lin[j] - (i == j ? 2 * cv : 0.0)) - (IoW[i] - WIo[i]);
    }
    /* − [p_a]x */
    B22[1] -= p[5]; B22[2] += p[4]; B22[3] += p[5]; B22[5] -= p[3]; B22[6] -= p[4]; B22[7] += p[3];
}

/* o = B x */
static inline void variation_mul(const double B[12], const double x[6], double o[6])
{
    v3_cross(B, x + 3, o);
    m3_mulv(B + 3, x + 3, o + 3);
}

/* o = Bᵀ x = [0; −β × x_l + B22ᵀ x_a] */
static inline void variation_tmul(const double B[12], const double x[6], double o[6])
{
    double t[3];
    v3_cross(x, B, t);
    m3t_mulv(B + 3, x + 3, o + 3);
    o[0] = o[1] = o[2] = 0;
    o[3] += t[0]; o[4] += t[1]; o[5] += t[2];
}

/* Forward pass: world placements, motions and dof columns, then each body's world inertia,
 * momentum, force and inertia variation B. a == NULL stands for q̈ = 0 (the bias terms); with_dv 0
 * leaves out what only the derivatives in v need (dAdv). */
static void forward_pass(const mbs_model *m, mbs_data *d, const double *q, const double *v, const double *a,
                         int with_dv)
{
    double a0[6];
    gravity_motion(m, a0);
    static const double zero6[6] = {0, 0, 0, 0, 0, 0};
    /* joint placements are independent of each other: a loop of their own lets them overlap */
    joint_placements(m, q, d->tmp_6nb, d->liR, d->lip);
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
            double ak = a ? a[col] : 0.0;
            for (int r = 0; r < 6; r++) { vJ[r] += Jk[r] * v[col]; aJ[r] += Jk[r] * ak; }
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
            if (!with_dv) continue;
            motion_cross(ov, Jk, dAdv);
            for (int r = 0; r < 6; r++) dAdv[r] += dVdq[r];
        }
    }
    /* world inertia, momentum, force and the inertia variation B: independent per body */
    for (int i = 0; i < m->nbodies; i++) {
        const mbs_body *b = &m->bodies[i];
        const double *oR = d->oR + 9 * i, *op = d->op + 3 * i, *ov = d->ov + 6 * i, *oa = d->oa + 6 * i;
        double *Yc = d->oYc + 16 * i, *oh = d->oh + 6 * i, *of = d->of + 6 * i, t[6];
        Yc[0] = b->mass;
        inertia_act(oR, op, b->mass, b->h, b->Io, Yc + 1, Yc + 4);
        inertia_mul(Yc[0], Yc + 1, Yc + 4, ov, oh);
        inertia_mul(Yc[0], Yc + 1, Yc + 4, oa, of);
        force_cross(ov, oh, t);
        for (int r = 0; r < 6; r++) of[r] += t[r];
        inertia_variation(Yc, ov, oh, d->oBc + 12 * i);
    }
}

/* d->dFdq, d->dFdv and d->dFda are stored component-major, entry r of column c at [r·nv + c], so
 * that the dot products of one row's S_j with consecutive columns vectorise across the columns. */
static inline void store_column(double *F, int nv, int col, const double f[6])
{
    for (int r = 0; r < 6; r++) F[r * nv + col] = f[r];
}
static inline void load_column(const double *F, int nv, int col, double f[6])
{
    for (int r = 0; r < 6; r++) f[r] = F[r * nv + col];
}

/* o[c·cs] = s (x · F_c) for c in [c0, c1), F component-major (summed in the order of sdot) */
static inline void column_dots(const double x[6], const double *F, int nv, int c0, int c1, double s, double *o,
                               size_t cs)
{
    const double *F0 = F, *F1 = F + nv, *F2 = F + 2 * nv, *F3 = F + 3 * nv, *F4 = F + 4 * nv, *F5 = F + 5 * nv;
    for (int c = c0; c < c1; c++)
        o[c * cs] = s * (x[0] * F0[c] + x[1] * F1[c] + x[2] * F2[c] + x[3] * F3[c] + x[4] * F4[c] + x[5] * F5[c]);
}

/* Where the backward pass stores entry (row, col) of each derivative: out[row·rs + col·cs],
 * times sign; a NULL block is skipped. */
typedef struct dtau_out { double *dq, *dv, *da; size_t rs, cs; double sign; } dtau_out;

/* Backward pass: composite quantities and the derivative entries, leaves first. composed: the
 * composite inertias are already summed in d->oYc and dFda = Yc S formed (by mass_and_bias: they
 * do not depend on q̈). moving 0: no velocity (v = 0: the terms of Bc, and dVdq, vanish and are
 * skipped). Inlined, so that each caller's constants remove their branches. */
static inline void backward_pass(const mbs_model *m, mbs_data *d, const dtau_out *o, int composed, int moving)
{
    const size_t rs = o->rs, cs = o->cs;
    const double sg = o->sign;
    const int nv = m->nv;
    for (int i = m->nbodies - 1; i >= 0; i--) {
        const mbs_body *b = &m->bodies[i];
        const double *Yc = d->oYc + 16 * i, *Bc = d->oBc + 12 * i, *Fc = d->of + 6 * i;
        for (int k = 0; k < b->nv; k++) {
            int col = b->idx_v + k;
            const double *Jk = d->J + 6 * col;
            double dFdv[6], dFdq[6], t[6];
            if (!composed) {
                inertia_mul(Yc[0], Yc + 1, Yc + 4, Jk, t);
                store_column(d->dFda, nv, col, t);
            }
            if (o->dv) {
                inertia_mul(Yc[0], Yc + 1, Yc + 4, d->dAdv + 6 * col, dFdv);
                variation_mul(Bc, Jk, t);
                for (int r = 0; r < 6; r++) dFdv[r] += t[r];
                store_column(d->dFdv, nv, col, dFdv);
            }
            inertia_mul(Yc[0], Yc + 1, Yc + 4, d->dAdq + 6 * col, dFdq);
            if (moving) {
                variation_mul(Bc, d->dVdq + 6 * col, t);
                for (int r = 0; r < 6; r++) dFdq[r] += t[r];
            }
            store_column(d->dFdq, nv, col, dFdq);
        }
        /* rows of this joint, columns of its subtree (itself and descendants) */
        int c0 = b->idx_v, c1 = b->idx_v + b->nv_subtree;
        for (int k = 0; k < b->nv; k++) {
            int row = b->idx_v + k;
            const double *Jr = d->J + 6 * row;
            if (o->dq) column_dots(Jr, d->dFdq, nv, c0, c1, sg, o->dq + row * rs, cs);
            if (o->dv) column_dots(Jr, d->dFdv, nv, c0, c1, sg, o->dv + row * rs, cs);
            if (o->da) column_dots(Jr, d->dFda, nv, c0, c1, sg, o->da + row * rs, cs);
        }
        /* rows of this joint, columns of strict ancestors */
        for (int k = 0; k < b->nv; k++) {
            int row = b->idx_v + k;
            const double *Jr = d->J + 6 * row;
            double r1[6], r2[6] = {0, 0, 0, 0, 0, 0};
            load_column(d->dFda, nv, row, r1);
            if (moving) variation_tmul(Bc, Jr, r2);
            const int *anc = m->dof_anc + m->dof_anc_at[b->idx_v];
            const int nanc = m->dof_anc_at[b->idx_v + 1] - m->dof_anc_at[b->idx_v];
            for (int t = 0; t < nanc; t++) {
                int col = anc[t];
                size_t e = row * rs + col * cs;
                /* Bcᵀ S_j has no linear part (variation_tmul) */
                if (o->dq) o->dq[e] = sg * (sdot(r1, d->dAdq + 6 * col) + (moving ? v3_dot(r2 + 3, d->dVdq + 6 * col + 3) : 0));
                if (o->dv) o->dv[e] = sg * (sdot(r1, d->dAdv + 6 * col) + v3_dot(r2 + 3, d->J + 6 * col + 3));
                if (o->da) o->da[e] = sg * sdot(r1, d->J + 6 * col);
            }
        }
        /* the rigid term seen by strict ancestors: dFdq_k += S_k ×* Fc */
        for (int k = 0; k < b->nv; k++) {
            int col = b->idx_v + k;
            double t[6];
            force_cross(d->J + 6 * col, Fc, t);
            for (int r = 0; r < 6; r++) d->dFdq[r * nv + col] += t[r];
        }
        if (b->parent >= 0) {
            int pi = b->parent;
            double *Yp = d->oYc + 16 * pi, *Bp = d->oBc + 12 * pi, *Fp = d->of + 6 * pi;
            if (!composed)
                for (int r = 0; r < 13; r++) Yp[r] += Yc[r];
            if (moving)
                for (int r = 0; r < 12; r++) Bp[r] += Bc[r];
            for (int r = 0; r < 6; r++) Fp[r] += Fc[r];
        }
    }
}

void mbs_rnea_derivatives(const mbs_model *m, mbs_data *d, const double *q, const double *v,
                          const double *a, double *dtau_dq, double *dtau_dv, double *dtau_da)
{
    const size_t nv = (size_t)m->nv;
    forward_pass(m, d, q, v, a, dtau_dv != NULL);
    if (dtau_da) memset(dtau_da, 0, sizeof(double) * nv * nv);
    memset(dtau_dq, 0, sizeof(double) * nv * nv);
    if (dtau_dv) memset(dtau_dv, 0, sizeof(double) * nv * nv);
    dtau_out o = {dtau_dq, dtau_dv, dtau_da, 1, nv, 1.0};
    backward_pass(m, d, &o, 0, 1);
    /* the rotors' torques diag(armature) q̈ depend on q̈ alone */
    if (dtau_da && m->any_armature)
        for (size_t k = 0; k < nv; k++) dtau_da[k + nv * k] += m->armature[k];
}

/* After forward_pass(q, v, NULL): M (world-frame CRBA on the composite inertias) and the bias
 * torques τ_b = S_jᵀ Σ_subtree f (summed in d->tmp_6nb), leaves first. Only M's tree entries of
 * the lower triangle are written, in d->L, which mbsi_ltdl_in_place factors. The composite
 * inertias are summed in d->oYc and dFda = Yc S kept for the backward pass (see dtau_out), each
 * body's own inertia being copied to d->Ic for add_acceleration. */
static void mass_and_bias(const mbs_model *m, mbs_data *d, double *tau_b)
{
    const int nv = m->nv;
    memcpy(d->Ic, d->oYc, sizeof(double) * 16 * (size_t)m->nbodies);
    memcpy(d->tmp_6nb, d->of, sizeof(double) * 6 * (size_t)m->nbodies);
    for (int i = m->nbodies - 1; i >= 0; i--) {
        const mbs_body *b = &m->bodies[i];
        const double *Yc = d->oYc + 16 * i, *Fc = d->tmp_6nb + 6 * i;
        for (int k = 0; k < b->nv; k++) {
            int col = b->idx_v + k;
            double t[6];
            inertia_mul(Yc[0], Yc + 1, Yc + 4, d->J + 6 * col, t);
            store_column(d->dFda, nv, col, t);
        }
        int c1 = b->idx_v + b->nv_subtree;
        for (int k = 0; k < b->nv; k++) {
            int row = b->idx_v + k;
            const double *Jr = d->J + 6 * row;
            /* column row of d->L: the entries (col, row), col >= row */
            column_dots(Jr, d->dFda, nv, row, c1, 1.0, d->L + (size_t)nv * row, 1);
            d->L[(size_t)nv * row + row] += m->armature[row];
            tau_b[row] = sdot(Jr, Fc);
        }
        if (b->parent >= 0) {
            double *Yp = d->oYc + 16 * b->parent, *Fp = d->tmp_6nb + 6 * b->parent;
            for (int r = 0; r < 13; r++) Yp[r] += Yc[r];
            for (int r = 0; r < 6; r++) Fp[r] += Fc[r];
        }
    }
}

/* Adds what q̈ changes to a forward_pass(q, v, NULL) (after mass_and_bias, whose d->Ic holds each
 * body's own inertia): every world acceleration gains
 * δa_i = δa_λ + Σ S_k q̈_k, its force Y_i δa_i, and dAdq_k = a_λ × S_k + ... gains δa_λ × S_k. */
static void add_acceleration(const mbs_model *m, mbs_data *d, const double *ddq)
{
    double *da = d->tmp_6nb;
    for (int i = 0; i < m->nbodies; i++) {
        const mbs_body *b = &m->bodies[i];
        static const double zero6[6] = {0, 0, 0, 0, 0, 0};
        const double *dap = b->parent < 0 ? zero6 : da + 6 * b->parent, *Y = d->Ic + 16 * i;
        double *dai = da + 6 * i, t[6];
        memcpy(dai, dap, 6 * sizeof(double));
        for (int k = 0; k < b->nv; k++) {
            int col = b->idx_v + k;
            const double *Jk = d->J + 6 * col;
            for (int r = 0; r < 6; r++) dai[r] += Jk[r] * ddq[col];
            motion_cross(dap, Jk, t);
            for (int r = 0; r < 6; r++) d->dAdq[6 * col + r] += t[r];
        }
        for (int r = 0; r < 6; r++) d->oa[6 * i + r] += dai[r];
        inertia_mul(Y[0], Y + 1, Y + 4, dai, t);
        for (int r = 0; r < 6; r++) d->of[6 * i + r] += t[r];
    }
}

void mbs_aba_derivatives(const mbs_model *m, mbs_data *d, const double *q, const double *v,
                         const double *tau, double *ddq, double *dddq_dq, double *dddq_dv,
                         double *dddq_dtau)
{
    const int nv = m->nv;
    double *acc = ddq ? ddq : d->tmp_nv[0], *tau_b = d->tmp_nv[1];
    /* q̈ = M⁻¹ (τ − τ_b) with M and τ_b from the world-frame quantities the derivatives need
     * anyway (no separate ABA), then the terms q̈ adds to them */
    forward_pass(m, d, q, v, NULL, dddq_dv != NULL);
    mass_and_bias(m, d, tau_b);
    mbsi_ltdl_in_place(m, d);
    for (int k = 0; k < nv; k++) acc[k] = tau[k] - tau_b[k];
    mbs_ltdl_solve(m, d, acc, 1, nv);
    if (!dddq_dq && !dddq_dv && !dddq_dtau) return;
    add_acceleration(m, d, acc);
    /* ∂q̈/∂x = −M⁻¹ ∂τ/∂x: one row-major block [1 | −∂τ/∂q | −∂τ/∂v], the last two written in
     * place by the backward pass, solved at once */
    double *out[3] = {dddq_dtau, dddq_dq, dddq_dv};
    /* the identity block and the rows padded to whole cache lines (mbsi_ltdl_solve_rows) */
    size_t nid = dddq_dtau ? (size_t)mbsi_line_up(nv) : 0, at[3] = {0, nid, nid};
    if (dddq_dq) at[2] += (size_t)nv;
    size_t ncols = (size_t)mbsi_line_up((int)at[2] + (dddq_dv ? nv : 0));
    double *X = d->rows;
    for (int i = 0; i < nv; i++) memset(X + ncols * i + nid, 0, sizeof(double) * (ncols - nid));
    dtau_out o = {dddq_dq ? X + at[1] : NULL, dddq_dv ? X + at[2] : NULL, NULL, ncols, 1, -1.0};
    backward_pass(m, d, &o, 1, 1);
    mbsi_ltdl_solve_rows(m, d, X, (int)ncols, (int)nid);
    /* M⁻¹ comes as its upper triangle, which is mirrored */
    if (dddq_dtau) mbsi_ltdl_minv_out(nv, X, (int)ncols, dddq_dtau);
    for (int k = 1; k < 3; k++)
        if (out[k]) mbsi_rows_to_columns(nv, X + at[k], (int)ncols, out[k]);
}

void mbsi_mass_times_dq(const mbs_model *m, mbs_data *d, const double *x, double sign, double *out)
{
    /* RNEA's derivative in q at v = 0 without gravity and q̈ = x (τ = M x): the forward pass's
     * accelerations and dAdq from the placements and columns in d, no velocity terms (dVdq, B
     * and the velocity products vanish: the backward pass without them) */
    for (int i = 0; i < m->nbodies; i++) {
        const mbs_body *b = &m->bodies[i];
        const int par = b->parent;
        static const double zero6[6] = {0, 0, 0, 0, 0, 0};
        const double *ap = par < 0 ? zero6 : d->oa + 6 * par;
        double *oa = d->oa + 6 * i, *Yc = d->oYc + 16 * i, *of = d->of + 6 * i;
        for (int r = 0; r < 6; r++) oa[r] = ap[r];
        for (int k = 0; k < b->nv; k++) {
            int col = b->idx_v + k;
            const double *Jk = d->J + 6 * col;
            for (int r = 0; r < 6; r++) oa[r] += Jk[r] * x[col];
            motion_cross(ap, Jk, d->dAdq + 6 * col);
        }
        Yc[0] = b->mass;
        inertia_act(d->oR + 9 * i, d->op + 3 * i, b->mass, b->h, b->Io, Yc + 1, Yc + 4);
        inertia_mul(Yc[0], Yc + 1, Yc + 4, oa, of);
    }
    memset(out, 0, sizeof(double) * (size_t)m->nv * (size_t)m->nv);
    dtau_out o = {out, NULL, NULL, 1, (size_t)m->nv, sign};
    backward_pass(m, d, &o, 0, 0);
}

/* a (6 rows of n) = S × V, V's six rows of n (component-major): (ω_S × v + v_S × ω, ω_S × ω). */
__attribute__((noinline)) static void bilinear_column_terms(int n, const double S_[6], const double *restrict V, double *restrict a)
{
    const double s0 = S_[0], s1 = S_[1], s2 = S_[2], s3 = S_[3], s4 = S_[4], s5 = S_[5];
    const double *v0 = V, *v1 = V + n, *v2 = V + 2 * n, *w0 = V + 3 * n, *w1 = V + 4 * n, *w2 = V + 5 * n;
    /* a row per loop: one stream written, read from V only (restrict), which vectorises */
    for (int i = 0; i < n; i++) a[i] = s4 * v2[i] - s5 * v1[i] + s1 * w2[i] - s2 * w1[i];
    for (int i = 0; i < n; i++) a[n + i] = s5 * v0[i] - s3 * v2[i] + s2 * w0[i] - s0 * w2[i];
    for (int i = 0; i < n; i++) a[2 * n + i] = s3 * v1[i] - s4 * v0[i] + s0 * w1[i] - s1 * w0[i];
    for (int i = 0; i < n; i++) a[3 * n + i] = s4 * w2[i] - s5 * w1[i];
    for (int i = 0; i < n; i++) a[4 * n + i] = s5 * w0[i] - s3 * w2[i];
    for (int i = 0; i < n; i++) a[5 * n + i] = s3 * w1[i] - s4 * w0[i];
}

/* V (6 rows of n) += S yᵀ: a dof's column S times its row y of coordinates. */
__attribute__((noinline)) static void bilinear_add_dof(int n, const double S[6], const double *restrict y,
                                                       double *restrict V)
{
    for (int r = 0; r < 6; r++) {
        const double s = S[r];
        double *restrict row = V + (size_t)n * r;
        for (int i = 0; i < n; i++) row[i] += s * y[i];
    }
}

/* h (6 rows of n) = the momenta of velocities V (6 rows of n) for the inertia (mass, c̄ = m c, Io)
 * in world axes about the world origin: f = m v − c̄ × ω, τ = Io ω + c̄ × v. */
__attribute__((noinline)) static void bilinear_momenta(int n, double mass, const double c[3], const double I[9],
                                                       const double *restrict V, double *restrict h)
{
    const double *v0 = V, *v1 = V + n, *v2 = V + 2 * n, *w0 = V + 3 * n, *w1 = V + 4 * n, *w2 = V + 5 * n;
    const double c0 = c[0], c1 = c[1], c2 = c[2];
    const double I0 = I[0], I1 = I[1], I2 = I[2], I3 = I[3], I4 = I[4], I5 = I[5], I6 = I[6], I7 = I[7], I8 = I[8];
    for (int i = 0; i < n; i++) h[i] = mass * v0[i] - (c1 * w2[i] - c2 * w1[i]);
    for (int i = 0; i < n; i++) h[n + i] = mass * v1[i] - (c2 * w0[i] - c0 * w2[i]);
    for (int i = 0; i < n; i++) h[2 * n + i] = mass * v2[i] - (c0 * w1[i] - c1 * w0[i]);
    for (int i = 0; i < n; i++) h[3 * n + i] = I0 * w0[i] + I3 * w1[i] + I6 * w2[i] + (c1 * v2[i] - c2 * v1[i]);
    for (int i = 0; i < n; i++) h[4 * n + i] = I1 * w0[i] + I4 * w1[i] + I7 * w2[i] + (c2 * v0[i] - c0 * v2[i]);
    for (int i = 0; i < n; i++) h[5 * n + i] = I2 * w0[i] + I5 * w1[i] + I8 * w2[i] + (c0 * v1[i] - c1 * v0[i]);
}

/* o = −sign (a_i · h_j + a_j · h_i) for i ≤ j, packed by columns (o[i + j (j + 1)/2]), a and h
 * six rows of n. */
__attribute__((noinline)) static void bilinear_packed(int n, const double *restrict a, const double *restrict h,
                                                      double sign, double *restrict o)
{
    const double *a0 = a, *a1 = a + n, *a2 = a + 2 * n, *a3 = a + 3 * n, *a4 = a + 4 * n, *a5 = a + 5 * n;
    const double *h0 = h, *h1 = h + n, *h2 = h + 2 * n, *h3 = h + 3 * n, *h4 = h + 4 * n, *h5 = h + 5 * n;
    for (int j = 0; j < n; j++) {
        const double x0 = -sign * h0[j], x1 = -sign * h1[j], x2 = -sign * h2[j], x3 = -sign * h3[j],
                     x4 = -sign * h4[j], x5 = -sign * h5[j];
        const double y0 = -sign * a0[j], y1 = -sign * a1[j], y2 = -sign * a2[j], y3 = -sign * a3[j],
                     y4 = -sign * a4[j], y5 = -sign * a5[j];
        double *oj = o + (size_t)j * (size_t)(j + 1) / 2;
        for (int i = 0; i <= j; i++)
            oj[i] = a0[i] * x0 + a1[i] * x1 + a2[i] * x2 + a3[i] * x3 + a4[i] * x4 + a5[i] * x5 +
                    (h0[i] * y0 + h1[i] * y1 + h2[i] * y2 + h3[i] * y3 + h4[i] * y4 + h5[i] * y5);
    }
}

void mbsi_mass_bilinear_dq(const mbs_model *m, const mbs_data *d, const double *Y, int n, double sign, double *out,
                           double *work)
{
    const int nb = m->nbodies, nv = m->nv;
    const size_t n6 = (size_t)6 * n, np = (size_t)n * (size_t)(n + 1) / 2;
    /* component-major, so that the loops over the n columns run down contiguous rows: body b's
     * velocity for column i in V[n6 b + n r + i], its subtree's momentum likewise in H */
    double *V = work, *H = V + n6 * nb, *a = H + n6 * nb, *yk = a;   /* yk: n of a's room, free until a is */
    for (int b = 0; b < nb; b++) {
        const mbs_body *bd = &m->bodies[b];
        double *vb = V + n6 * b, *hb = H + n6 * b;
        if (bd->parent >= 0) memcpy(vb, V + n6 * bd->parent, n6 * sizeof(double));
        else memset(vb, 0, n6 * sizeof(double));
        for (int k = bd->idx_v; k < bd->idx_v + bd->nv; k++) {
            for (int i = 0; i < n; i++) yk[i] = Y[k + (size_t)nv * i];   /* row k of Y, contiguous */
            bilinear_add_dof(n, d->J + 6 * k, yk, vb);
        }
        /* the body's inertia in world axes about the world origin, times each velocity */
        double hh[3], I[9];
        inertia_act(d->oR + 9 * b, d->op + 3 * b, bd->mass, bd->h, bd->Io, hh, I);
        bilinear_momenta(n, bd->mass, hh, I, vb, hb);
    }
    /* subtree momenta, leaves first (a parent's index is below its children's) */
    for (int b = nb - 1; b >= 0; b--) {
        int p = m->bodies[b].parent;
        if (p >= 0)
            for (size_t r = 0; r < n6; r++) H[n6 * p + r] += H[n6 * b + r];
    }
    for (int k = 0; k < nv; k++) {
        int b = m->dof_body[k], p = m->bodies[b].parent;
        double *o = out + np * k;
        if (p < 0) {
            memset(o, 0, np * sizeof(double));   /* the root's joint: M does not depend on it */
            continue;
        }
        /* a_i = S_k × V_λ(k)(y_i) = (ω_S × v + v_S × ω, ω_S × ω), component-major */
        const double *vp = V + n6 * p, *hb = H + n6 * b;
        bilinear_column_terms(n, d->J + 6 * k, vp, a);
        /* the packed upper triangle: −(a_i · H(y_j) + a_j · H(y_i)), i ≤ j */
        bilinear_packed(n, a, hb, sign, o);
    }
}
