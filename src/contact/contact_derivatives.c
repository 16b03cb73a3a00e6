/* contact_derivatives.c — analytical derivatives of the generalized contact force
 * τ_c = Σ_i J_i(q)ᵀ λ_i(q, v) of the anchor spring-damper model (Hammoud et al. 2022, eq. 2)
 * and of the system dynamics q̈ = M⁻¹ (τ − h + τ_c), for implicit Euler (appendix A); and the
 * smooth version of the model that a Newton solve starts with (no release, no cone).
 *
 * The derivation works with the world columns S_j = [s_j; ω_j] of the joint Jacobian (linear
 * part at the world origin). A tangent perturbation of dof k moves the subtree of its joint
 * rigidly by exp(S_k δ) in the world (for a free-flyer or planar joint, whose integrate is
 * q·exp(v), this holds for every dof of the joint), so for dofs j, k on the support of the
 * contact body, with k's joint an ancestor of (or the same as) j's joint, ∂S_j/∂q_k = S_k × S_j,
 * and ∂S_j/∂q_k = 0 otherwise. With pt(m, p) = m_lin + m_ang × p the velocity at the world
 * point p of the motion m, the contact point p (the deepest point of the sphere, centre c,
 * p = c − r n with the normal n held fixed) and its body-point velocity ṗ = Σ_j pt(S_j, p) v_j:
 *   J_j = pt(S_j, p),   P_k = ∂p/∂q_k = pt(S_k, c)
 *   ∂ṗ/∂q_k = pt(S_k × V_k, p) + ω_b × P_k,   V_k = Σ_{j at or below k's joint} S_j v_j
 *   ∂(J_jᵀλ)/∂q_k |_λ = λ · ([k ⪯ j] pt(S_k × S_j, p)) + ω_j · (P_k × λ)
 * and with λ = G λ_raw, λ_raw = −K (p − p0) − B (ṗ − ṗ0) (K, B: normal and tangential gains):
 *   ∂λ/∂q = G (−K P − B ∂ṗ/∂q),   ∂λ/∂v = −G B J,
 * G the Jacobian of what mbs_contact_forces did to λ_raw: the identity inside the cone, the
 * derivative of the tangential scaling λ = λ_n n + μ λ_n t̂ when slipping (contact.c, eqs. 27–28),
 * zero when released (and the identity for the smooth model). Everything is O(d²) per contact
 * for a support of d dofs. The normal of a contact is held fixed, which is exact for planes
 * and box faces; at a box edge or corner the derivatives miss the turning of the normal. */
#include "../model/model_internal.h"
#include "mbs/dynamics.h"
#include "mbs/liegroup.h"
#include "mbs/contact.h"
#include "../spatial/spatial.h"
#include "../dynamics/dynamics_internal.h"
#include "contact_internal.h"

size_t mbsi_contact_derivatives_work_size(int nv)
{
    /* the mass matrix, then per contact J, P, ∂ṗ/∂q, ∂λ/∂q, ∂λ/∂v, Pm (3 x d each) and V (6 x (d + 1)) */
    return (size_t)nv * (size_t)nv + 24 * (size_t)nv + 6;
}

/* World position of the body point recorded under the contact at the last update. */
static void contact_body_point(const mbs_system *s, const mbs_contact *c, double pm[3])
{
    double R[9], pf[3], t[3];
    mbs_frame_placement(s->model, s->data, c->frame, R, pf);
    m3_mulv(R, c->local, t);
    for (int k = 0; k < 3; k++) pm[k] = pf[k] + t[k];
}

/* o = K x (or B x) with gains a along the normal and b across it. */
static inline void gain_mul(double a, double b, const double n[3], const double x[3], double o[3])
{
    double xn = v3_dot(n, x);
    for (int k = 0; k < 3; k++) o[k] = b * x[k] + (a - b) * xn * n[k];
}

/* G = ∂λ/∂λ_raw of the unilateral release and friction scaling of mbs_contact_forces (column-major).
 * Returns 0 when the contact was released (λ = 0 and no derivative). */
static int clamp_jacobian(const mbs_system *s, const mbs_contact *c, double G[9])
{
    if (c->lambda[0] == 0 && c->lambda[1] == 0 && c->lambda[2] == 0) return 0;
    m3_identity(G);
    if (!c->slipping) return 1;
    /* the slip scaling λ = λ_n n + μ λ_n t/|t| of λ_raw */
    const double *n = c->normal;
    double raw[3], t[3];
    const mbs_material *mt = mbsi_contact_material(s, c);
    mbsi_contact_spring_force(c, mt, raw);
    double ln = v3_dot(raw, n);
    for (int k = 0; k < 3; k++) t[k] = raw[k] - ln * n[k];
    double lt = sqrt(v3_dot(t, t));
    if (!(lt > 0)) return 1;
    double mu = mt->mu, r = mu * ln / lt;
    for (int k = 0; k < 3; k++) t[k] /= lt;
    /* ∂λ = n nᵀ ∂λ_raw + μ t̂ nᵀ ∂λ_raw + μ λ_n/|t| (1 − n nᵀ − t̂ t̂ᵀ) ∂λ_raw */
    for (int j = 0; j < 3; j++)
        for (int i = 0; i < 3; i++)
            G[i + 3 * j] = n[i] * n[j] + mu * t[i] * n[j] + r * ((i == j) - n[i] * n[j] - t[i] * t[j]);
    return 1;
}

void mbsi_support_velocities(const mbs_data *d, const int *support, int n, const double *y, double *V)
{
    memset(V + 6 * n, 0, 6 * sizeof(double));
    for (int a = n - 1; a >= 0; a--) {
        const double *S = d->J + 6 * support[a];
        for (int r = 0; r < 6; r++) V[6 * a + r] = V[6 * (a + 1) + r] + S[r] * y[support[a]];
    }
}

void mbsi_point_velocity_dq(const mbs_model *m, const mbs_data *d, const int *support, int from, int n,
                            const double p[3], const double *P, const double *V, double *out)
{
    for (int a = from; a < n; a++) {
        int k = support[a];
        int a0 = a - (k - m->bodies[m->dof_body[k]].idx_v);
        double mc[6], w[3];
        motion_cross(d->J + 6 * k, V + 6 * a0, mc);
        motion_point_velocity(mc, p, out + 3 * a);
        v3_cross(V + 3, P + 3 * a, w);
        for (int r = 0; r < 3; r++) out[3 * a + r] += w[r];
    }
}

/* The terms of active contact i (clamp Jacobian G) over its body's support (iwork, n dofs, which
 * it returns), from the joint Jacobians in s->data: in work, 3 x n each, J (the point's Jacobian
 * columns), P (∂p/∂q), Dp (∂ṗ/∂q), dlq and dlv (∂λ/∂q, ∂λ/∂v), and Pm (the recorded body point's
 * ∂/∂q); see the top of the file. With forces 0, J, P and Pm alone. */
static int contact_terms(mbs_system *s, int i, const double *v, const double G[9], const unsigned char *fresh,
                         int forces, double *work, int *iwork)
{
    const mbs_model *m = s->model;
    mbs_data *d = s->data;
    const mbs_contact *c = &s->contacts[i];
    int n = mbsi_body_support(m, mbs_frame_body(m, c->frame), iwork);
    double *J = work, *P = J + 3 * n, *Dp = P + 3 * n, *dlq = Dp + 3 * n, *dlv = dlq + 3 * n, *Pm = dlv + 3 * n;
    double *V = Pm + 3 * n;
    const double *p = c->p, *n_ = c->normal;
    const mbs_material *mt = mbsi_contact_material(s, c);
    double ctr[3], pm[3];
    for (int k = 0; k < 3; k++) ctr[k] = p[k] + c->radius * n_[k];
    /* the tangential spring stretches with the body point recorded at the last update
     * (contact.c, follow_roll), the normal one with the sphere's deepest point */
    contact_body_point(s, c, pm);
    for (int a = n - 1; a >= 0; a--) {
        const double *S = d->J + 6 * iwork[a];
        motion_point_velocity(S, p, J + 3 * a);
        motion_point_velocity(S, ctr, P + 3 * a);
        motion_point_velocity(S, pm, Pm + 3 * a);
    }
    if (!forces) return n;
    /* a contact whose anchor was just placed above its point: only the normal spring stretches */
    double kt = fresh && fresh[i] ? 0 : mt->k_tangent;
    mbsi_support_velocities(d, iwork, n, v, V);
    mbsi_point_velocity_dq(m, d, iwork, 0, n, p, P, V, Dp);
    for (int a = 0; a < n; a++) {
        double *dpdq = Dp + 3 * a, x[3], y[3];
        double pn = v3_dot(n_, P + 3 * a), mn = v3_dot(n_, Pm + 3 * a);
        for (int r = 0; r < 3; r++) x[r] = mt->k_normal * pn * n_[r] + kt * (Pm[3 * a + r] - mn * n_[r]);
        gain_mul(mt->b_normal, mt->b_tangent, n_, dpdq, y);
        for (int r = 0; r < 3; r++) x[r] = -x[r] - y[r];
        m3_mulv(G, x, dlq + 3 * a);
        gain_mul(mt->b_normal, mt->b_tangent, n_, J + 3 * a, y);
        for (int r = 0; r < 3; r++) y[r] = -y[r];
        m3_mulv(G, y, dlv + 3 * a);
    }
    return n;
}

void mbsi_contact_force_derivatives(mbs_system *s, const double *q, const double *v, int clamped, double *dtau_dq,
                                   double *dtau_dv, double *work, int *iwork, const unsigned char *fresh)
{
    const mbs_model *m = s->model;
    const int nv = m->nv;
    int have_jacobians = 0;
    for (int i = 0; i < s->ncontacts; i++) {
        const mbs_contact *c = &s->contacts[i];
        int body = c->active ? mbs_frame_body(m, c->frame) : -1;
        double G[9];
        if (body < 0) continue;
        if (!clamped) m3_identity(G);
        else if (!clamp_jacobian(s, c, G)) continue;
        if (!have_jacobians) { mbs_compute_joint_jacobians(m, s->data, q); have_jacobians = 1; }
        int n = contact_terms(s, i, v, G, fresh, 1, work, iwork);
        const double *J = work, *P = J + 3 * n, *dlq = P + 6 * n, *dlv = dlq + 3 * n;
        mbsi_point_force_dq(m, s->data, iwork, n, c->p, c->lambda, J, P, dlq, 0, dtau_dq);
        for (int e = 0; e < n; e++)
            for (int a = 0; a < n; a++) dtau_dv[iwork[a] + (size_t)nv * iwork[e]] += v3_dot(J + 3 * a, dlv + 3 * e);
    }
}

void mbsi_contact_anchor_derivatives(mbs_system *s, const double *q, const double *v, const unsigned char *fresh,
                                     unsigned char *moved, double *A0, double *work, int *iwork)
{
    (void)q;   /* the kinematics at q are in s->data (see the header) */
    const mbs_model *m = s->model;
    const int nv = m->nv, n2 = 2 * nv;
    int have_jacobians = 0;
    for (int i = 0; i < s->ncontacts; i++) {
        const mbs_contact *c = &s->contacts[i];
        double G[9], *Ai = A0 + (size_t)9 * n2 * i;
        const mbs_material *mt = c->active ? mbsi_contact_material(s, c) : NULL;
        int slid = mt && c->slipping && mt->k_tangent > 0 && clamp_jacobian(s, c, G);
        int placed = fresh && fresh[i];
        /* a sphere that stays: the update rolled its anchor by the touching point's move over the
         * body (follow_roll), p0_t += (p − p_m)_t, p_m the body point recorded at the last update */
        int rolled = !slid && !placed && c->radius > 0;
        moved[i] = (unsigned char)(mt && mt->k_tangent > 0 && (slid || placed || c->radius > 0));
        if (!moved[i]) continue;
        if (!slid) m3_identity(G);
        memset(Ai, 0, sizeof(double) * 9 * (size_t)n2);
        /* the evaluation at (q, v) this follows left the placements at q in s->data */
        if (!have_jacobians) { mbsi_joint_jacobians_from_placements(m, s->data); have_jacobians = 1; }
        /* a sphere that only rolled needs J, P and Pm */
        int n = contact_terms(s, i, v, G, fresh, slid, work, iwork);
        const double *J = work, *P = J + 3 * n, *Dp = P + 3 * n, *dlq = Dp + 3 * n, *dlv = dlq + 3 * n, *Pm = dlv + 3 * n;
        const double *nn = c->normal, ikt = 1 / mt->k_tangent;
        /* slid: p0_t = p_t + λ_t / k_t, ṗ0 = ṗ_t (eq. 28); placed: p0_t = p_t, ṗ0 = 0; rolled:
         * p0_t moves by (p − p_m)_t */
        for (int a = 0; a < n; a++)
            for (int col = 0; col < 2; col++) {
                double x[3], y[3];
                for (int r = 0; r < 3; r++) {
                    if (slid) {
                        x[r] = col ? dlv[3 * a + r] * ikt : P[3 * a + r] + dlq[3 * a + r] * ikt;
                        y[r] = col ? J[3 * a + r] : Dp[3 * a + r];
                    } else {
                        x[r] = col ? 0 : P[3 * a + r] - (rolled ? Pm[3 * a + r] : 0);
                        y[r] = 0;
                    }
                }
                double xn = v3_dot(x, nn), yn = v3_dot(y, nn);
                double *o = Ai + 9 * ((size_t)iwork[a] + (size_t)nv * col);
                for (int r = 0; r < 3; r++) {
                    o[r] = x[r] - xn * nn[r];
                    o[3 + r] = y[r] - yn * nn[r];
                }
            }
        if (c->radius > 0) {
            /* the body point recorded under a sphere, local = Rᵀ(p − p_f): δlocal = Rᵀ(P − J) δq */
            double R[9], pf[3];
            mbs_frame_placement(m, s->data, c->frame, R, pf);
            for (int a = 0; a < n; a++) {
                double x[3];
                for (int r = 0; r < 3; r++) x[r] = P[3 * a + r] - J[3 * a + r];
                m3t_mulv(R, x, Ai + 9 * (size_t)iwork[a] + 6);
            }
        }
    }
}

void mbsi_contact_anchor_chain(mbs_system *s, const double *q, const double *A0, const unsigned char *moved, double alpha,
                               double *D, int ldD, int *iwork)
{
    const mbs_model *m = s->model;
    const int nv = m->nv, n2 = 2 * nv;
    int have_jacobians = 0;
    for (int i = 0; i < s->ncontacts; i++) {
        const mbs_contact *c = &s->contacts[i];
        double G[9];
        if (!moved[i] || !c->active || !clamp_jacobian(s, c, G)) continue;
        if (!have_jacobians) { mbs_compute_joint_jacobians(m, s->data, q); have_jacobians = 1; }
        int n = mbsi_body_support(m, mbs_frame_body(m, c->frame), iwork);
        const double *Ai = A0 + (size_t)9 * n2 * i;
        const mbs_material *mt = mbsi_contact_material(s, c);
        /* a sphere's anchor as evaluated here is rolled by −(R δlocal)_t too (follow_roll at q) */
        double R[9], pf[3];
        mbs_frame_placement(m, s->data, c->frame, R, pf);
        const double *nn = c->normal;
        for (int a = 0; a < n; a++) {
            /* row j of Jᵀ G: (Gᵀ J_j)ᵀ */
            double Jj[3], GJ[3];
            motion_point_velocity(s->data->J + 6 * iwork[a], c->p, Jj);
            for (int r = 0; r < 3; r++) GJ[r] = G[3 * r] * Jj[0] + G[3 * r + 1] * Jj[1] + G[3 * r + 2] * Jj[2];
            double *row = D + iwork[a];
            /* the spring's force changes by K δp0 + B δṗ0 (tangential: k_t, b_t) */
            for (int col = 0; col < n2; col++) {
                const double *o = Ai + 9 * (size_t)col;
                double rl[3], e[3];
                m3_mulv(R, o + 6, rl);
                double rn = v3_dot(rl, nn);
                for (int r = 0; r < 3; r++) e[r] = mt->k_tangent * (o[r] - (rl[r] - rn * nn[r])) + mt->b_tangent * o[3 + r];
                row[(size_t)ldD * col] += alpha * v3_dot(GJ, e);
            }
        }
    }
}

void mbsi_point_acceleration_derivatives(const mbs_model *m, const mbs_data *d, const int *support, int n,
                                         const double p[3], const double *P, const double *v, const double *acc,
                                         double *da_dq, double *da_dv, double *work)
{
    double *Vs = work, *Vp = Vs + 6 * (n + 1), *As = Vp + 6 * (n + 1);
    mbsi_support_velocities(d, support, n, v, Vs);
    /* Vp[a] = Σ_{a' < a} S v: the velocity of the body above entry a */
    memset(Vp, 0, 6 * sizeof(double));
    for (int a = 0; a < n; a++)
        for (int r = 0; r < 6; r++) Vp[6 * (a + 1) + r] = Vp[6 * a + r] + d->J[6 * support[a] + r] * v[support[a]];
    /* As[a] = Σ_{a' >= a} S a + (V_body × S) v, V_body the velocity of the body the dof moves */
    memset(As + 6 * n, 0, 6 * sizeof(double));
    for (int a = n - 1; a >= 0; a--) {
        int k = support[a], b = m->dof_body[k];
        int e1 = a - (k - m->bodies[b].idx_v) + m->bodies[b].nv;
        const double *S = d->J + 6 * k;
        double t[6];
        motion_cross(Vp + 6 * e1, S, t);
        for (int r = 0; r < 6; r++) As[6 * a + r] = As[6 * (a + 1) + r] + S[r] * acc[k] + t[r] * v[k];
    }
    const double *Vb = Vs, *Ab = As, *w = Vb + 3, *alpha = Ab + 3;
    double vp[3];
    motion_point_velocity(Vb, p, vp);
    for (int a = 0; a < n; a++) {
        int k = support[a], b = m->dof_body[k];
        int a0 = a - (k - m->bodies[b].idx_v), e1 = a0 + m->bodies[b].nv;
        const double *S = d->J + 6 * k, *dp = P + 3 * a;
        double dV[6], dA[6], t[6], u[6], x[3], y[3], z[3];
        /* q_k: dV = S_k × V[a0], dA = S_k × A[a0] − (S_k × V_λ(k)) × V[a0] (the top of the file) */
        motion_cross(S, Vs + 6 * a0, dV);
        motion_cross(S, As + 6 * a0, dA);
        motion_cross(S, Vp + 6 * a0, t);
        motion_cross(t, Vs + 6 * a0, u);
        for (int r = 0; r < 6; r++) dA[r] -= u[r];
        /* d a_p = pt(dA, p) + α × dp + dω × v_p + ω × (pt(dV, p) + ω × dp) */
        double *o = da_dq + 3 * a;
        motion_point_velocity(dA, p, o);
        v3_cross(alpha, dp, x);
        v3_cross(dV + 3, vp, y);
        motion_point_velocity(dV, p, z);
        double wd[3];
        v3_cross(w, dp, wd);
        for (int r = 0; r < 3; r++) z[r] += wd[r];
        v3_cross(w, z, wd);
        for (int r = 0; r < 3; r++) o[r] += x[r] + y[r] + wd[r];
        /* v_k: dV = S_k, dA = V_body(k) × S_k + S_k × V[a0] */
        motion_cross(Vp + 6 * e1, S, dA);
        motion_cross(S, Vs + 6 * a0, t);
        for (int r = 0; r < 6; r++) dA[r] += t[r];
        o = da_dv + 3 * a;
        motion_point_velocity(dA, p, o);
        v3_cross(S + 3, vp, y);
        motion_point_velocity(S, p, z);
        v3_cross(w, z, wd);
        for (int r = 0; r < 3; r++) o[r] += y[r] + wd[r];
    }
}

int mbsi_body_support(const mbs_model *m, int body, int *support)
{
    int n = 0;
    const mbs_body *bd = &m->bodies[body];
    for (int k = bd->idx_v + bd->nv - 1; k >= 0; k = m->dof_parent[k]) support[n++] = k;
    for (int a = 0, z = n - 1; a < z; a++, z--) { int t = support[a]; support[a] = support[z]; support[z] = t; }
    return n;
}

void mbsi_point_force_dq(const mbs_model *m, const mbs_data *d, const int *support, int n, const double p[3],
                         const double lam[3], const double *J, const double *P, const double *dlq, int skip,
                         double *dtau_dq)
{
    const int nv = m->nv;
    /* F = [λ; p × λ]: the force as a world wrench at the origin; then
     * λ · pt(S_k × S_j, p) = F · (S_k × S_j) = −S_j · (S_k ×* F) */
    double F[6];
    memcpy(F, lam, 3 * sizeof(double));
    v3_cross(p, lam, F + 3);
    for (int e = 0; e < n; e++) {
        int k = support[e], first_k = m->bodies[m->dof_body[k]].idx_v;
        double Pxl[3], SkF[6];
        v3_cross(P + 3 * e, lam, Pxl);
        force_cross(d->J + 6 * k, F, SkF);
        for (int a = e < skip ? skip : 0; a < n; a++) {
            int j = support[a];
            const double *Sj = d->J + 6 * j;
            double h = v3_dot(Sj + 3, Pxl);
            if (dlq) h += v3_dot(J + 3 * a, dlq + 3 * e);
            if (j >= first_k) h -= sdot(Sj, SkF);
            dtau_dq[j + (size_t)nv * k] += h;
        }
    }
}

void mbsi_contact_forces_smooth(mbs_system *s, const double *q, const double *v)
{
    const mbs_model *m = s->model;
    mbs_data *d = s->data;
    mbs_forward_kinematics(m, d, q, v, NULL);
    memset(s->fext, 0, 6 * (size_t)s->nbodies * sizeof(double));
    for (int i = 0; i < s->ncontacts; i++) {
        mbs_contact *c = &s->contacts[i];
        memset(c->lambda, 0, sizeof c->lambda);
        c->slipping = 0;
        int body = mbs_frame_body(m, c->frame);
        if (!c->active || body < 0) continue;
        /* the sphere's point deepest along the held normal, and the velocity of that body point */
        double R[9], pf[3], d3[3], off[3], vel[6];
        mbsi_contact_point_world(m, d, c, c->normal, c->p, R, pf);
        for (int k = 0; k < 3; k++) d3[k] = c->p[k] - pf[k];
        m3t_mulv(R, d3, off);
        mbs_frame_velocity(m, d, c->frame, off, MBS_LOCAL_WORLD_ALIGNED, vel);
        memcpy(c->dp, vel, 3 * sizeof(double));
        double p0_kept[3], pm[3];
        memcpy(p0_kept, c->p0, sizeof p0_kept);
        contact_body_point(s, c, pm);
        mbsi_contact_follow_roll(c, pm, c->normal);
        mbsi_contact_spring_force(c, mbsi_contact_material(s, c), c->lambda);
        memcpy(c->p0, p0_kept, sizeof p0_kept);
        mbsi_contact_add_wrench(s, body, c->p, c->lambda);
    }
}

void mbsi_system_dynamics_smooth(mbs_system *s, const double *q, const double *v, double *ddq)
{
    mbsi_contact_forces_smooth(s, q, v);
    mbs_aba_fext(s->model, s->data, q, v, s->tau, s->fext, ddq);
}

int mbsi_system_dynamics_derivatives(mbs_system *s, const double *q, const double *v, int clamped, const double *ddq,
                                    double *dddq_dq, double *dddq_dv, double *Minv, double *work, int *iwork,
                                    const unsigned char *fresh)
{
    const mbs_model *m = s->model;
    mbs_data *d = s->data;
    const int nv = m->nv;
    const size_t nn = (size_t)nv * (size_t)nv;
    double *M = work;
    /* M q̈ + h(q, v) = τ + τ_c(q, v) at q̈ = ddq, so ∂q̈/∂x = M⁻¹ (∂τ_c/∂x − ∂rnea/∂x): the
     * RNEA derivatives at the actual acceleration (the ABA derivatives at τ_total) plus M⁻¹
     * times the contact derivatives, with one factorisation of M for both. */
    mbs_rnea_derivatives(m, d, q, v, ddq, dddq_dq, dddq_dv, M);
    for (size_t k = 0; k < nn; k++) { dddq_dq[k] = -dddq_dq[k]; dddq_dv[k] = -dddq_dv[k]; }
    mbsi_contact_force_derivatives(s, q, v, clamped, dddq_dq, dddq_dv, work + nn, iwork, fresh);
    if (mbs_ltdl(m, d, M) != MBS_OK) return MBS_ERR_MODEL;
    mbsi_ltdl_solve_blocks(m, d, Minv, dddq_dq, dddq_dv);
    return MBS_OK;
}
