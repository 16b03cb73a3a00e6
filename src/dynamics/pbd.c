/* pbd.c — the inertial energy of position-based dynamics (Pan and Manocha 2018; Pan and Hauser
 * 2020, eqs. 4 and 12): every material point x of every body pulled towards a target Y(x) that is
 * an affine function of x,
 *   E(θ) = s/2 Σ_b ∫_b ρ ‖X_b(x, θ) − (A_b x + c_b)‖² dx,
 * with its gradient in the tangent space and that gradient's derivative, for the NMDP stepper's
 * PBD variant (I_α with A = 2R₋ − R₋₋, c = 2p₋ − p₋₋ + h² g; K with A = R₋, c = p₋).
 *
 * Per body, with x = x_c + r about its centre of mass (∫ρ r = 0) and Σ_c = ∫ρ r rᵀ (body axes):
 *   ∫ρ ‖R x + p − A x − c‖² = m ‖p_c − ȳ‖² + tr Σ_c + tr(A Σ_c Aᵀ) − 2 tr N,
 *   p_c = R x_c + p, ȳ = A x_c + c, N = A Σ_c Rᵀ.
 * Under a world twist ξ = [v; ω] of the body (points move by v + ω × X, R by [ω]× R) its gradient
 * is the wrench w = s [e; p_c × e + τ(N)], e = m (p_c − ȳ), τ(N) = (N₂₃ − N₃₂, N₃₁ − N₁₃,
 * N₁₂ − N₂₁) (from tr([ω]× N) = ω · τ(N)), and the wrench's own change is D ξ with, u = v + ω × p_c,
 *   D ξ = s [m u; u × e + m p_c × u + τ(−N [ω]×)].
 * The generalised gradient is g_j = S_jᵀ W_b, W_b the wrenches of the subtree of dof j's body b
 * (S_j its world column). A perturbation of dof k moves k's subtree rigidly by exp(S_k ε): S_j
 * turns by S_k × S_j when k is dof j's own joint or an ancestor of it, and each wrench of the
 * moved subtree changes by D S_k, so with Dc_b the sum of D over b's subtree:
 *   ∂g_j/∂q_k = (S_k × S_j) · W_b + S_jᵀ Dc_b S_k     (k in b's joint or an ancestor),
 *   ∂g_j/∂q_k = S_jᵀ Dc_bk S_k                        (k in a joint of a descendant bk of b),
 * and 0 otherwise. */
#include "../model/model_internal.h"
#include "joint.h"
#include "dynamics_internal.h"

size_t mbsi_pbd_work_doubles(const mbs_model *m)
{
    return (size_t)m->nbodies * 42 + (size_t)m->nv * 12;
}

/* τ(N) for a column-major 3 x 3 N */
static inline void tau_of(const double N[9], double t[3])
{
    t[0] = N[7] - N[5];
    t[1] = N[2] - N[6];
    t[2] = N[3] - N[1];
}

double mbsi_pbd_energy(const mbs_model *m, const mbs_data *d, const double *target, double s, double *grad,
                       double *hess, double *work)
{
    const int nb = m->nbodies, nv = m->nv;
    double *W = work, *Dc = W + 6 * (size_t)nb, *T = Dc + 36 * (size_t)nb, *U = T + 6 * (size_t)nv;
    double E = 0;
    for (int b = 0; b < nb; b++) {
        const mbs_body *bd = &m->bodies[b];
        double *w = W + 6 * b, *D = Dc + 36 * b;
        memset(w, 0, 6 * sizeof(double));
        if (hess) memset(D, 0, 36 * sizeof(double));
        const double mass = bd->mass;
        if (!(mass > 0)) continue;
        const double *R = d->oR + 9 * b, *p = d->op + 3 * b, *A = target + 12 * b, *c = A + 9;
        /* centre of mass and second moment about it, body axes: Σ_o = ½ tr(Io) 1 − Io */
        double xc[3] = {bd->h[0] / mass, bd->h[1] / mass, bd->h[2] / mass}, Sc[9];
        double half = 0.5 * (bd->Io[0] + bd->Io[4] + bd->Io[8]);
        for (int j = 0; j < 3; j++)
            for (int i = 0; i < 3; i++) Sc[i + 3 * j] = (i == j ? half : 0.0) - bd->Io[i + 3 * j] - mass * xc[i] * xc[j];
        double pc[3], yb[3], e[3], AS[9], N[9], RT[9], tN[3];
        m3_mulv(R, xc, pc);
        m3_mulv(A, xc, yb);
        for (int k = 0; k < 3; k++) { pc[k] += p[k]; yb[k] += c[k]; e[k] = mass * (pc[k] - yb[k]); }
        m3_mul(A, Sc, AS);
        for (int j = 0; j < 3; j++)
            for (int i = 0; i < 3; i++) RT[i + 3 * j] = R[j + 3 * i];
        m3_mul(AS, RT, N);
        tau_of(N, tN);
        /* tr(A Σ_c Aᵀ) = Σ_ij (A Σ_c)_ij A_ij */
        double trASA = 0;
        for (int k = 0; k < 9; k++) trASA += AS[k] * A[k];
        E += 0.5 * s * (v3_dot(e, e) / mass + Sc[0] + Sc[4] + Sc[8] + trASA - 2 * (N[0] + N[4] + N[8]));
        double pe[3];
        v3_cross(pc, e, pe);
        for (int k = 0; k < 3; k++) { w[k] = s * e[k]; w[3 + k] = s * (pe[k] + tN[k]); }
        if (!hess) continue;
        /* D, column by column: ξ = e_i (v = e_i, then ω = e_{i−3}) */
        for (int i = 0; i < 6; i++) {
            double u[3] = {0, 0, 0}, om[3] = {0, 0, 0}, ue[3], pu[3], t[3] = {0, 0, 0};
            if (i < 3) u[i] = 1;
            else {
                om[i - 3] = 1;
                v3_cross(om, pc, u);
                /* τ(−N [ω]×): column j of N [ω]× is N (ω × e_j) */
                double Nw[9];
                for (int j = 0; j < 3; j++) {
                    double ej[3] = {0, 0, 0}, oe[3];
                    ej[j] = 1;
                    v3_cross(om, ej, oe);
                    m3_mulv(N, oe, Nw + 3 * j);
                }
                tau_of(Nw, t);
            }
            v3_cross(u, e, ue);
            v3_cross(pc, u, pu);
            double *Di = D + 6 * i;
            for (int k = 0; k < 3; k++) { Di[k] = s * mass * u[k]; Di[3 + k] = s * (ue[k] + mass * pu[k] - t[k]); }
        }
    }
    /* subtree sums, leaves first */
    for (int b = nb - 1; b >= 0; b--) {
        int par = m->bodies[b].parent;
        if (par < 0) continue;
        for (int k = 0; k < 6; k++) W[6 * par + k] += W[6 * b + k];
        if (hess)
            for (int k = 0; k < 36; k++) Dc[36 * par + k] += Dc[36 * b + k];
    }
    if (grad)
        for (int j = 0; j < nv; j++) grad[j] = sdot(d->J + 6 * j, W + 6 * m->dof_body[j]);
    if (!hess) return E;
    /* T_k = Dc_b(k) S_k, U_j = Dc_b(j)ᵀ S_j */
    for (int k = 0; k < nv; k++) {
        const double *D = Dc + 36 * m->dof_body[k], *S = d->J + 6 * k;
        m6_mulv(D, S, T + 6 * k);
        for (int r = 0; r < 6; r++) U[6 * k + r] = sdot(D + 6 * r, S);
    }
    memset(hess, 0, sizeof(double) * (size_t)nv * (size_t)nv);
    for (int j = 0; j < nv; j++) {
        const int b = m->dof_body[j];
        const mbs_body *bd = &m->bodies[b];
        const double *Sj = d->J + 6 * j, *Wb = W + 6 * b;
        /* the joint's own dofs and its ancestors' */
        const int *anc = m->dof_anc + m->dof_anc_at[bd->idx_v];
        const int nanc = m->dof_anc_at[bd->idx_v + 1] - m->dof_anc_at[bd->idx_v];
        for (int t = -bd->nv; t < nanc; t++) {
            int k = t < 0 ? bd->idx_v + bd->nv + t : anc[t];
            double x[6];
            motion_cross(d->J + 6 * k, Sj, x);
            hess[j + (size_t)nv * k] = sdot(x, Wb) + sdot(U + 6 * j, d->J + 6 * k);
        }
        /* the descendants' dofs */
        for (int k = bd->idx_v + bd->nv; k < bd->idx_v + bd->nv_subtree; k++)
            hess[j + (size_t)nv * k] = sdot(Sj, T + 6 * k);
    }
    return E;
}
