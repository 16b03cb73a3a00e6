/* drnea.c — the discrete recursive Newton–Euler algorithm (DRNEA) of the linear-time variational
 * integrator and its exact derivative: Lee, Liu, Park, Srinivasa, "A linear-time variational
 * integrator for multibody systems", WAFR 2016 (equation and algorithm numbers are theirs). The
 * integrator's root finders are a stepper's (src/step/variational_solve.c); the SE(3) map Jr⁻ᵀ
 * both passes apply is the Lie-group layer's (mbsi_se3_jlog_t_mul, src/liegroup/se3.c).
 *
 * The DEL equations in the library's conventions. Body i has the world placement T_i, its
 * step displacement ΔT_i = T_i^k⁻¹ T_i^{k+1} (eq. 19 builds it from the parent's) and the
 * average body twist V_i = log(ΔT_i)/Δt = ξ_i/Δt (eq. 10), twists [v; w]. With the trapezoidal
 * discrete Lagrangian of eq. 9, varying T^k by T^k exp(ε) gives, per body,
 *   D2Ld(T^{k-1}, T^k) + D1Ld(T^k, T^{k+1}) = Jr⁻ᵀ(ξ^{k-1}) G V^{k-1} - Jl⁻ᵀ(ξ^k) G V^k - Δt ∂P(T^k),
 * where Jr, Jl are the right and left Jacobians of exp (src/liegroup/liegroup_internal.h has Jr⁻¹ = jlog).
 * The paper's dlog_ξ (eqs. 12–13) is Jl⁻¹(ξ) = Jr⁻¹(-ξ), and Jr⁻¹(ξ) = Jl⁻¹(ξ) Ad_{exp ξ}, so
 * the two terms are the paper's Ad*_{exp(Δt V^{k-1})} μ^{k-1} and μ^k = dlog_{ΔtV}ᵀ G V
 * (eq. 21b). Adding the impulses of gravity, external wrenches and the children's joints
 * (eq. 20) gives the impulse the parent's joint transmits (eq. 21a):
 *   F_i = μ_i^k - π_i - h (f_grav,i + f_ext,i) + Σ_c X*_c F_c,   π_i = Jr⁻ᵀ(ξ_i^{k-1}) G V_i^{k-1},
 * and the residual f_i = S_iᵀ F_i - h τ_i (eq. 22), h = (Δt_prev + Δt)/2 being the trapezoidal
 * weight of the forcing at t_k. Everything that does not depend on q^{k+1} — π_i, the forcing,
 * the placements at q^k — is computed once per step (mbs_vi_begin), so an evaluation is one
 * forward pass (ΔT_i from the joint displacements, log) and one backward pass (μ_i, F_i, f_i).
 *
 * The derivative (Algorithm 4). Perturbing q^{k+1} by joint j's tangent direction moves
 * T_i^{k+1} by its body Jacobian column, so ΔT_i⁻¹ ∂ΔT_i = Ψ_i with
 *   Ψ_i = Ad(T_{λ(i),i}^{k+1})⁻¹ Ψ_λ(i) + S_i δ_ij        (Algorithm 4, line 4, divided by ΔT_i)
 *   ∂ξ_i = Jr⁻¹(ξ_i) Ψ_i                                     (line 5)
 *   ∂μ_i = ∂μ/∂ξ (ξ_i) ∂ξ_i                                  (line 8)
 *   ∂F_i = ∂μ_i + Σ_c X*_c ∂F_c,  ∂f_i = S_iᵀ ∂F_i          (lines 9, 10)
 * The 6x6 matrix B_i = ∂μ/∂ξ · Jr⁻¹(ξ_i) does not depend on j: it is formed once per Jacobian
 * (its ∂dlogᵀ part by forward-mode differentiation of the closed form, mbsi_se3_jlog_t_along), then each
 * column j costs one pass over the subtree of j and its ancestors — the only nonzero rows. */
#include <stdlib.h>

#include "../model/model_internal.h"
#include "mbs/dynamics.h"
#include "mbs/liegroup.h"
#include "../liegroup/liegroup_internal.h"
#include "../base/base.h"
#include "dynamics_internal.h"
#include "joint.h"
/* after spatial.h: lapacke.h pulls in complex.h, whose macro I clashes with m3_identity's array;
 * here only for the size of the solvers' pivots */
#include <lapacke.h>

void mbs_vi_dlog_transpose(const double xi[6], const double y[6], double out[6])
{
    double m[6] = {-xi[0], -xi[1], -xi[2], -xi[3], -xi[4], -xi[5]};
    mbsi_se3_jlog_t_mul(m, y, out);
}

void mbs_vi_dlog_transpose_derivative(const double xi[6], const double dxi[6], const double y[6], double out[6])
{
    double m[6], dm[6], zero[6] = {0};
    mbs_se3_jlog_t_point t;
    for (int k = 0; k < 6; k++) { m[k] = -xi[k]; dm[k] = -dxi[k]; }
    mbsi_se3_jlog_t_at(m, y, &t);
    mbsi_se3_jlog_t_along(&t, dm, zero, out);
}

/* ------------------------------------------------------------------------ workspace */

#define carve mbsi_carve_doubles

static void layout(mbs_carver *c, mbs_vi *w)
{
    size_t b = (size_t)w->nb, v = (size_t)(w->nv ? w->nv : 1), q = (size_t)(w->nq ? w->nq : 1);
    w->Rk = carve(c, 9 * b); w->pk = carve(c, 3 * b);
    w->oRk = carve(c, 9 * b); w->opk = carve(c, 3 * b);
    w->cst = carve(c, 6 * b); w->Q = carve(c, v);
    w->qk = carve(c, q); w->vk = carve(c, v); w->tau = carve(c, v); w->fext = carve(c, 6 * b);
    w->R1 = carve(c, 9 * b); w->p1 = carve(c, 3 * b);
    w->dE = carve(c, 9 * b); w->de = carve(c, 3 * b);
    w->xi = carve(c, 6 * b); w->mu = carve(c, 6 * b); w->F = carve(c, 6 * b);
    w->B = carve(c, 36 * b); w->Psi = carve(c, 6 * b); w->dF = carve(c, 6 * b);
    w->drot = carve(c, v); w->rot = carve(c, 36 * b);
    w->J = carve(c, v * v); w->H = carve(c, v * v);
    w->e = carve(c, v); w->e2 = carve(c, v); w->dq = carve(c, v); w->y = carve(c, v);
    w->t1 = carve(c, v); w->t2 = carve(c, v);
    w->tree.IA = carve(c, 36 * b); w->tree.Dinv = carve(c, 36 * b);
    w->tree.U = carve(c, 6 * v); w->tree.W = carve(c, 6 * v);
    w->tree.p = carve(c, 6 * b); w->tree.u = carve(c, v);
    w->ipiv = mbsi_carve(c, v * sizeof(lapack_int));
}

mbs_vi *mbs_vi_new(const mbs_model *m, mbs_error *err)
{
    if (!m || !m->finalized) { mbsi_fail(err, MBS_ERR_ARG, "mbs_vi_new: no finalized model"); return NULL; }
    mbs_vi *w = calloc(1, sizeof *w);
    if (!w) { mbsi_fail(err, MBS_ERR_NOMEM, "out of memory"); return NULL; }
    w->nb = m->nbodies; w->nq = m->nq; w->nv = m->nv;
    mbs_carver c = {NULL, 0};
    layout(&c, w);
    w->block = mbsi_carver_alloc(&c);
    if (!w->block) {
        free(w);
        mbsi_fail(err, MBS_ERR_NOMEM, "out of memory");
        return NULL;
    }
    layout(&c, w);
    w->dt = w->h = 1;
    return w;
}

void mbs_vi_free(mbs_vi *w)
{
    if (!w) return;
    free(w->block);
    free(w);
}

const double *mbs_vi_velocity(const mbs_vi *w) { return w->vk; }

/* ------------------------------------------------------------------------ begin */

/* G ξ / Δt: the body's momentum for the average twist ξ/Δt (G about the body origin). */
static inline void momentum_of(const mbs_body *b, const double xi[6], double inv_dt, double o[6])
{
    inertia_mul(b->mass, b->h, b->Io, xi, o);
    for (int k = 0; k < 6; k++) o[k] *= inv_dt;
}

/* m3_from_quat minus the identity, without forming 1 - small */
static void quat_minus_identity(const double g[4], double E[9])
{
    double x = g[0], y = g[1], z = g[2], ww = g[3];
    E[0] = -2 * (y * y + z * z); E[3] = 2 * (x * y - z * ww);  E[6] = 2 * (x * z + y * ww);
    E[1] = 2 * (x * y + z * ww);  E[4] = -2 * (x * x + z * z); E[7] = 2 * (y * z - x * ww);
    E[2] = 2 * (x * z - y * ww);  E[5] = 2 * (y * z + x * ww);  E[8] = -2 * (x * x + y * y);
}

/* The joint's own displacement D = T_{λi}(qa)⁻¹ T_{λi}(qb), in body i, as (E = R - 1, e = p).
 * Steps move bodies by ~1e-3 of their size, so ΔT_i formed from placements of unit size would
 * keep only ~13 digits of ξ_i and put a rounding floor on the residual (~1e-9 N·s on the 10-link
 * pendulum); these small parts come straight from the joint coordinates instead. */
static void joint_displacement(const mbs_body *b, const double *qa, const double *qb, double E[9], double e[3])
{
    const double *a = b->axis;
    double s, c, omc;
    switch (b->type) {
    case MBS_JOINT_PRISMATIC:
        memset(E, 0, 9 * sizeof(double));
        for (int k = 0; k < 3; k++) e[k] = a[k] * (qb[0] - qa[0]);
        return;
    case MBS_JOINT_FREEFLYER: {
        double g[7];
        mbsi_se3_between(qa, qb, g);
        quat_minus_identity(g + 3, E);
        memcpy(e, g, 3 * sizeof(double));
        return;
    }
    case MBS_JOINT_BALL: {
        double g[4];
        mbsi_quat_between(qa, qb, g);
        quat_minus_identity(g, E);
        memset(e, 0, 3 * sizeof(double));
        return;
    }
    case MBS_JOINT_PLANAR: {
        double g[4];
        mbsi_se2_between(qa, qb, g);
        c = g[2]; s = g[3];
        for (int k = 0; k < 3; k++) e[k] = g[0] * b->plane[k] + g[1] * b->plane[3 + k];
        break;
    }
    case MBS_JOINT_REVOLUTE:
    default:
        sin_cos(qb[0] - qa[0], &s, &c);
        memset(e, 0, 3 * sizeof(double));
        break;
    }
    /* rotation about the axis: E = s [a]x + (1 - cos) [a]x², [a]x² = a aᵀ - 1 */
    omc = c > 0 ? s * s / (1 + c) : 1 - c;
    E[0] = omc * (a[0] * a[0] - 1); E[3] = -s * a[2] + omc * a[0] * a[1]; E[6] = s * a[1] + omc * a[0] * a[2];
    E[1] = s * a[2] + omc * a[1] * a[0]; E[4] = omc * (a[1] * a[1] - 1); E[7] = -s * a[0] + omc * a[1] * a[2];
    E[2] = -s * a[1] + omc * a[2] * a[0]; E[5] = s * a[0] + omc * a[2] * a[1]; E[8] = omc * (a[2] * a[2] - 1);
}

/* ΔT_i = T_{λi}(a)⁻¹ ΔT_λ T_{λi}(b) (eq. 19) = C D_i with C = T_{λi}(a)⁻¹ ΔT_λ T_{λi}(a) the
 * parent's displacement seen from body i and D_i the joint's own; (Ra, pa) is the placement at
 * the start of the step. In the small form (E, e): C = (Raᵀ E_λ Ra, Raᵀ (E_λ pa + e_λ)) and
 * C D = (E_C + E_D + E_C E_D, e_C + e_D + E_C e_D). Then ξ_i = log ΔT_i (eq. 10). */
static void displacement(const mbs_vi *w, const mbs_body *b, const double Ra[9], const double pa[3],
                         const double *qa, const double *qb, double E[9], double e[3], double xi[6])
{
    double ED[9], eD[3];
    joint_displacement(b, qa + b->idx_q, qb + b->idx_q, ED, eD);
    if (b->parent < 0) {
        memcpy(E, ED, sizeof ED);
        memcpy(e, eD, sizeof eD);
    } else {
        const double *El = w->dE + 9 * b->parent, *el = w->de + 3 * b->parent;
        double T[9], EC[9], eC[3], t[3], ECD[9];
        m3_mul(El, Ra, T);
        m3t_mul(Ra, T, EC);
        m3_mulv(El, pa, t);
        for (int k = 0; k < 3; k++) t[k] += el[k];
        m3t_mulv(Ra, t, eC);
        m3_mul(EC, ED, ECD);
        m3_mulv(EC, eD, t);
        for (int k = 0; k < 9; k++) E[k] = EC[k] + ED[k] + ECD[k];
        for (int k = 0; k < 3; k++) e[k] = eC[k] + eD[k] + t[k];
    }
    /* the off-diagonal entries of 1 + E are E's own, so the quaternion keeps E's precision */
    double R[9], g[7];
    memcpy(R, E, sizeof R);
    R[0] += 1; R[4] += 1; R[8] += 1;
    memcpy(g, e, 3 * sizeof(double));
    m3_to_quat(R, g + 3);
    mbsi_se3_log(g, xi);
}

/* mode 0: momentum from (q_prev, q) with dt_prev; mode 1: from (q, v). */
static int begin(const mbs_model *m, mbs_vi *w, int mode, double dt_prev, double dt, const double *q_prev,
                 const double *q, const double *v, const double *tau, const double *fext)
{
    if (!(dt > 0) || !isfinite(dt) || (mode == 0 && (!(dt_prev > 0) || !isfinite(dt_prev)))) return MBS_ERR_ARG;
    int nb = w->nb, nv = w->nv;
    w->dt = dt;
    w->h = mode == 0 ? 0.5 * (dt_prev + dt) : 0.5 * dt;
    memcpy(w->qk, q, (size_t)w->nq * sizeof(double));
    if (tau) memcpy(w->tau, tau, (size_t)nv * sizeof(double));
    else memset(w->tau, 0, (size_t)nv * sizeof(double));
    w->has_fext = fext != NULL;
    if (fext) memcpy(w->fext, fext, 6 * (size_t)nb * sizeof(double));
    else memset(w->fext, 0, 6 * (size_t)nb * sizeof(double));
    if (mode == 0) {
        mbs_difference(m, q_prev, q, w->vk);
        for (int k = 0; k < nv; k++) w->vk[k] /= dt_prev;
    } else
        memcpy(w->vk, v, (size_t)nv * sizeof(double));
    const double *g = m->gravity;
    for (int i = 0; i < nb; i++) {
        const mbs_body *b = &m->bodies[i];
        double *R = w->Rk + 9 * i, *p = w->pk + 3 * i, *oR = w->oRk + 9 * i, *op = w->opk + 3 * i;
        double *pi = w->cst + 6 * i;
        int par = b->parent;
        joint_placement(b, q + b->idx_q, R, p);
        if (par < 0) { memcpy(oR, R, 9 * sizeof(double)); memcpy(op, p, 3 * sizeof(double)); }
        else se3_compose(w->oRk + 9 * par, w->opk + 3 * par, R, p, oR, op);
        if (mode == 0) {
            /* π_i = Ad*_{exp ξ^{k-1}} μ^{k-1} = Jr⁻ᵀ(ξ^{k-1}) G V^{k-1}: the momentum the body
             * brings from [t_{k-1}, t_k] (eq. 21a), with R1, dE as scratch for that step */
            double *R0 = w->R1 + 9 * i, *p0 = w->p1 + 3 * i, *xi = w->xi + 6 * i, mv[6];
            joint_placement(b, q_prev + b->idx_q, R0, p0);
            displacement(w, b, R0, p0, q_prev, q, w->dE + 9 * i, w->de + 3 * i, xi);
            momentum_of(b, xi, 1.0 / dt_prev, mv);
            mbsi_se3_jlog_t_mul(xi, mv, pi);
        } else {
            /* the continuous momentum G V at t_k, V from the usual velocity recursion */
            double *V = w->xi + 6 * i, vJ[6];
            joint_motion(b, m->S + 6 * b->idx_v, v + b->idx_v, vJ);
            if (par < 0) memcpy(V, vJ, sizeof vJ);
            else {
                se3_actinv_motion(R, p, w->xi + 6 * par, V);
                for (int k = 0; k < 6; k++) V[k] += vJ[k];
            }
            inertia_mul(b->mass, b->h, b->Io, V, pi);
        }
        /* gravity's wrench at t_k about the body origin: m g and h x g in body axes */
        double gb[3], tq[3];
        m3t_mulv(oR, g, gb);
        v3_cross(b->h, gb, tq);
        const double *fe = w->fext + 6 * i;
        for (int k = 0; k < 3; k++) {
            pi[k] += w->h * (b->mass * gb[k] + fe[k]);
            pi[k + 3] += w->h * (tq[k] + fe[k + 3]);
        }
    }
    for (int k = 0; k < nv; k++) w->Q[k] = w->h * w->tau[k];
    return MBS_OK;
}

int mbs_vi_begin(const mbs_model *m, mbs_vi *w, double dt_prev, double dt, const double *q_prev, const double *q,
                 const double *tau, const double *fext)
{
    return begin(m, w, 0, dt_prev, dt, q_prev, q, NULL, tau, fext);
}

int mbs_vi_begin_velocity(const mbs_model *m, mbs_vi *w, double dt, const double *q, const double *v,
                          const double *tau, const double *fext)
{
    return begin(m, w, 1, 0, dt, NULL, q, v, tau, fext);
}

/* ------------------------------------------------------------------------ DRNEA */

void mbs_vi_residual(const mbs_model *m, mbs_vi *w, const double *q_next, double *res)
{
    const int nb = w->nb;
    const double inv_dt = 1.0 / w->dt;
    /* forward pass (Algorithm 2, lines 1-5) */
    for (int i = 0; i < nb; i++)
        displacement(w, &m->bodies[i], w->Rk + 9 * i, w->pk + 3 * i, w->qk, q_next, w->dE + 9 * i, w->de + 3 * i,
                     w->xi + 6 * i);
    /* backward pass (lines 6-10) */
    memset(w->F, 0, 6 * (size_t)nb * sizeof(double));
    for (int i = nb - 1; i >= 0; i--) {
        const mbs_body *b = &m->bodies[i];
        const double *xi = w->xi + 6 * i, *c = w->cst + 6 * i;
        double *mu = w->mu + 6 * i, *Fi = w->F + 6 * i, mv[6], mxi[6];
        momentum_of(b, xi, inv_dt, mv);
        for (int k = 0; k < 6; k++) mxi[k] = -xi[k];
        mbsi_se3_jlog_t_mul(mxi, mv, mu);                      /* μ = Jl⁻ᵀ(ξ) G V = dlog_ξᵀ G V (eq. 21b) */
        for (int k = 0; k < 6; k++) Fi[k] += mu[k] - c[k];
        double *r = res + b->idx_v;
        joint_force(b, m->S + 6 * b->idx_v, Fi, r);
        for (int k = 0; k < b->nv; k++) r[k] -= w->Q[b->idx_v + k];
        if (b->parent >= 0) {
            double t[6], *Fp = w->F + 6 * b->parent;
            se3_act_force(w->Rk + 9 * i, w->pk + 3 * i, Fi, t);
            for (int k = 0; k < 6; k++) Fp[k] += t[k];
        }
    }
    if (!m->any_armature) return;
    /* the rotors: arm (Δ/Δt − v^k), exact for one-coordinate joints (L_d = ½ arm Δ²/Δt) */
    mbs_difference(m, w->qk, q_next, w->drot);
    for (int k = 0; k < w->nv; k++) res[k] += m->armature[k] * (w->drot[k] * inv_dt - w->vk[k]);
}

int mbs_drnea(const mbs_model *m, mbs_vi *w, double dt, const double *q_prev, const double *q,
              const double *q_next, const double *tau, const double *fext, double *res)
{
    int rc = mbs_vi_begin(m, w, dt, dt, q_prev, q, tau, fext);
    if (rc == MBS_OK) mbs_vi_residual(m, w, q_next, res);
    return rc;
}

void mbs_vi_momentum(const mbs_model *m, mbs_vi *w, const double *q_next, double out[6])
{
    mbs_vi_residual(m, w, q_next, w->t2);
    memset(out, 0, 6 * sizeof(double));
    for (int i = 0; i < w->nb; i++) {
        double t[6];
        se3_act_force(w->oRk + 9 * i, w->opk + 3 * i, w->mu + 6 * i, t);
        for (int k = 0; k < 6; k++) out[k] += t[k];
    }
}

/* ------------------------------------------------------------------------ Algorithm 4 */

/* B_i = ∂μ/∂ξ (ξ_i) Jr⁻¹(ξ_i), column by column: with z = Jr⁻¹ e_c, ∂μ·z is the tangent of
 * μ(ξ) = Jr⁻ᵀ(-ξ) G ξ/Δt along ξ + ε z. */
static void body_derivative(const mbs_body *b, const double xi[6], double inv_dt, double B[36])
{
    double Jri[36], mxi[6], mv[6];
    mbs_se3_jlog_t_point t;
    mbsi_se3_jlog(xi, Jri, 6);
    for (int k = 0; k < 6; k++) mxi[k] = -xi[k];
    momentum_of(b, xi, inv_dt, mv);
    mbsi_se3_jlog_t_at(mxi, mv, &t);
    for (int c = 0; c < 6; c++) {
        const double *z = Jri + 6 * c;
        double mz[6], Gz[6];
        for (int k = 0; k < 6; k++) mz[k] = -z[k];
        momentum_of(b, z, inv_dt, Gz);
        mbsi_se3_jlog_t_along(&t, mz, Gz, B + 6 * c);
    }
}

/* The rotors' block of joint b: arm/Δt · ∂Δ/∂q^{k+1} (rows scaled by arm), ∂Δ/∂q^{k+1} the
 * inverse right Jacobian of the joint's group at its difference Δ (1 for one coordinate). */
static void rotor_block(const mbs_body *b, const double *delta, const double *arm, double inv_dt, double out[36])
{
    double Jl[36];
    int n = b->nv;
    memset(out, 0, 36 * sizeof(double));
    switch (b->type) {
    case MBS_JOINT_FREEFLYER: mbsi_se3_jlog(delta, Jl, 6); break;
    case MBS_JOINT_PLANAR: mbsi_se2_jlog(delta, Jl, 6); break;
    case MBS_JOINT_BALL: {
        double J3[9];
        mbsi_so3_jr_inv(delta, J3);
        for (int c = 0; c < 3; c++)
            for (int r = 0; r < 3; r++) Jl[r + 6 * c] = J3[r + 3 * c];
        break;
    }
    default: Jl[0] = 1; break;
    }
    for (int c = 0; c < n; c++)
        for (int r = 0; r < n; r++) out[r + 6 * c] = arm[r] * inv_dt * Jl[r + 6 * c];
}

/* What every exact Jacobian needs at q_next: the joint placements at q^{k+1} and the B_i. The
 * ξ_i it reads are those of the last residual evaluation, which must have been at q_next. */
void mbsi_vi_linearise(const mbs_model *m, mbs_vi *w, const double *q_next)
{
    const double inv_dt = 1.0 / w->dt;
    for (int i = 0; i < w->nb; i++) {
        const mbs_body *b = &m->bodies[i];
        joint_placement(b, q_next + b->idx_q, w->R1 + 9 * i, w->p1 + 3 * i);
        body_derivative(b, w->xi + 6 * i, inv_dt, w->B + 36 * i);
        if (m->any_armature) rotor_block(b, w->drot + b->idx_v, m->armature + b->idx_v, inv_dt, w->rot + 36 * i);
    }
}

/* Algorithm 4 at the configuration of the last residual evaluation. */
void mbsi_vi_jacobian_at(const mbs_model *m, mbs_vi *w, const double *q_next, double *J, int ldJ)
{
    const int nb = w->nb, nv = w->nv;
    mbsi_vi_linearise(m, w, q_next);
    for (int col = 0; col < nv; col++) memset(J + (size_t)ldJ * col, 0, (size_t)nv * sizeof(double));
    for (int j = 0; j < nb; j++) {
        const mbs_body *bj = &m->bodies[j];
        for (int c = 0; c < bj->nv; c++) {
            double *Jc = J + (size_t)ldJ * (bj->idx_v + c);
            /* forward over the subtree of j: Ψ_i and ∂F_i's own term B_i Ψ_i (lines 3-8) */
            memcpy(w->Psi + 6 * j, m->S + 6 * (bj->idx_v + c), 6 * sizeof(double));
            m6_mulv(w->B + 36 * j, w->Psi + 6 * j, w->dF + 6 * j);
            for (int i = j + 1; i <= bj->last; i++) {
                const mbs_body *b = &m->bodies[i];
                se3_actinv_motion(w->R1 + 9 * i, w->p1 + 3 * i, w->Psi + 6 * b->parent, w->Psi + 6 * i);
                m6_mulv(w->B + 36 * i, w->Psi + 6 * i, w->dF + 6 * i);
            }
            /* backward within the subtree (lines 9-10) */
            for (int i = bj->last; i >= j; i--) {
                const mbs_body *b = &m->bodies[i];
                double *dFi = w->dF + 6 * i;
                joint_force(b, m->S + 6 * b->idx_v, dFi, Jc + b->idx_v);
                if (i > j) {
                    double t[6], *dFp = w->dF + 6 * b->parent;
                    se3_act_force(w->Rk + 9 * i, w->pk + 3 * i, dFi, t);
                    for (int k = 0; k < 6; k++) dFp[k] += t[k];
                }
            }
            if (m->any_armature)   /* the joint's rotor block, in its own rows */
                for (int r = 0; r < bj->nv; r++) Jc[bj->idx_v + r] += w->rot[36 * j + r + 6 * c];
            /* the ancestors of j only transmit ∂F_j (their own Ψ is zero) */
            double f[6];
            memcpy(f, w->dF + 6 * j, sizeof f);
            for (int i = j; m->bodies[i].parent >= 0; i = m->bodies[i].parent) {
                double t[6];
                const mbs_body *a = &m->bodies[m->bodies[i].parent];
                se3_act_force(w->Rk + 9 * i, w->pk + 3 * i, f, t);
                memcpy(f, t, sizeof f);
                joint_force(a, m->S + 6 * a->idx_v, f, Jc + a->idx_v);
            }
        }
    }
}

void mbs_vi_jacobian(const mbs_model *m, mbs_vi *w, const double *q_next, double *res, double *J, int ldJ)
{
    mbs_vi_residual(m, w, q_next, res);
    mbsi_vi_jacobian_at(m, w, q_next, J, ldJ);
}
