/* aba.c — the articulated-body algorithm (Featherstone, RBDA table 7.1): mbs_aba in world axes,
 * and the body-frame passes whose articulated inertias mbs_abi_solve reuses (mbs_abi_factor). */
#include "../model/model_internal.h"
#include "mbs/dynamics.h"
#include "mbs/liegroup.h"
#include "aba.h"
#include "joint.h"

/* R M Rᵀ for the 3x3 block M of a 6x6 matrix (M(l, k) at M[l + 6 k]). */
static inline void block_rotate(const double R[9], const double *M, double out[9])
{
    double T[9];
    for (int k = 0; k < 3; k++)
        for (int i = 0; i < 3; i++) T[i + 3 * k] = R[i] * M[6 * k] + R[i + 3] * M[1 + 6 * k] + R[i + 6] * M[2 + 6 * k];
    for (int j = 0; j < 3; j++)
        for (int i = 0; i < 3; i++) out[i + 3 * j] = T[i] * R[j] + T[i + 3] * R[j + 3] + T[i + 6] * R[j + 6];
}

/* The same for a symmetric block: only the lower half is formed, then mirrored. */
static inline void block_rotate_sym(const double R[9], const double *M, double out[9])
{
    double T[9];
    for (int k = 0; k < 3; k++)
        for (int i = 0; i < 3; i++) T[i + 3 * k] = R[i] * M[6 * k] + R[i + 3] * M[1 + 6 * k] + R[i + 6] * M[2 + 6 * k];
    for (int j = 0; j < 3; j++)
        for (int i = j; i < 3; i++)
            out[i + 3 * j] = out[j + 3 * i] = T[i] * R[j] + T[i + 3] * R[j + 3] + T[i + 6] * R[j + 6];
}

/* X = X* Ia X⁻¹: an articulated inertia of a child expressed in its parent, with X = (R, p) the
 * child's placement. Blocks: Ia = [[A B] [Bᵀ C]] acting on [v; w]. Each block is rotated
 * (A' = R A Rᵀ, ...), then translated with P = [p]x: A'' = A', B'' = B' - A' P,
 * C'' = C' + P B' - B''ᵀ P, whose entry (i, j) is C'(i, j) + (p x B'(:, j))_i + (p x B''(:, i))_j. */
static void inertia_to_parent(const double R[9], const double p[3], const double Ia[36], double X[36])
{
    double A[9], B[9], C[9], B2[9], PB[9], PB2[9];
    block_rotate(R, Ia + 18, B);
    block_rotate_sym(R, Ia, A);
    block_rotate_sym(R, Ia + 21, C);
    /* column j of A' P is A' (p x e_j) */
    for (int i = 0; i < 3; i++) {
        B2[i]     = B[i]     - (A[i + 3] * p[2] - A[i + 6] * p[1]);
        B2[i + 3] = B[i + 3] - (A[i + 6] * p[0] - A[i] * p[2]);
        B2[i + 6] = B[i + 6] - (A[i] * p[1] - A[i + 3] * p[0]);
    }
    for (int j = 0; j < 3; j++) {
        v3_cross(p, B + 3 * j, PB + 3 * j);
        v3_cross(p, B2 + 3 * j, PB2 + 3 * j);
    }
    for (int j = 0; j < 3; j++)
        for (int i = 0; i < 3; i++) {
            X[i + 6 * j] = A[i + 3 * j];
            X[i + 6 * (j + 3)] = B2[i + 3 * j];
            X[(j + 3) + 6 * i] = B2[i + 3 * j];
            X[(i + 3) + 6 * (j + 3)] = C[i + 3 * j] + PB[i + 3 * j] + PB2[j + 3 * i];
        }
}

/* Inverse of the small SPD matrix D (n <= 6, leading dimension 6) by Cholesky, into Di.
 * The reciprocals of the diagonal are formed once: n divisions instead of 2n² in the solves. */
static void small_spd_inverse(int n, const double *D, double *Di)
{
    double L[36], r[6];
    memcpy(L, D, sizeof L);
    for (int j = 0; j < n; j++) {
        double s = L[j + 6 * j];
        for (int k = 0; k < j; k++) s -= L[j + 6 * k] * L[j + 6 * k];
        r[j] = 1.0 / sqrt(s);
        for (int i = j + 1; i < n; i++) {
            double t = L[i + 6 * j];
            for (int k = 0; k < j; k++) t -= L[i + 6 * k] * L[j + 6 * k];
            L[i + 6 * j] = t * r[j];
        }
    }
    for (int c = 0; c < n; c++) {
        double x[6] = {0};
        x[c] = 1;
        for (int i = c; i < n; i++) {   /* x(0 .. c-1) stays zero */
            for (int k = c; k < i; k++) x[i] -= L[i + 6 * k] * x[k];
            x[i] *= r[i];
        }
        for (int i = n - 1; i >= 0; i--) {
            for (int k = i + 1; k < n; k++) x[i] -= L[k + 6 * i] * x[k];
            x[i] *= r[i];
        }
        for (int i = 0; i < n; i++) Di[i + 6 * c] = x[i];
    }
}

/* D⁻¹ = (Sᵀ U + diag(armature))⁻¹ of a joint of n dofs, U = I^A S (the joint-space articulated
 * inertia with the rotors' share, M's diagonal term). */
static void joint_dinv(int n, const double *S, const double *U, const double *arm, double *Di)
{
    if (n == 1) {
        Di[0] = 1.0 / (sdot(S, U) + arm[0]);
        return;
    }
    double Dm[36] = {0};   /* small_spd_inverse copies all 36 */
    for (int c = 0; c < n; c++)
        for (int r = 0; r < n; r++) Dm[r + 6 * c] = sdot(S + 6 * r, U + 6 * c);
    for (int c = 0; c < n; c++) Dm[c + 6 * c] += arm[c];
    small_spd_inverse(n, Dm, Di);
}

void mbsi_aba_passes(const mbs_model *m, mbs_data *d, const double *q, const double *v, const double *tau,
                    const double *fext, double *ddq)
{
    double a0[6];
    gravity_motion(m, a0);
    /* pass 1: placements, velocities, bias accelerations c_i (kept in d->a) and bias forces */
    joint_placements(m, q, d->tmp_6nb, d->liR, d->lip);
    for (int i = 0; i < m->nbodies; i++) {
        const mbs_body *b = &m->bodies[i];
        const double *R = d->liR + 9 * i, *p = d->lip + 3 * i;
        double *IA = d->IA + 36 * i;
        inertia_matrix(b->mass, b->h, b->Io, IA);
        double *vi = d->v + 6 * i, *ci = d->a + 6 * i, *pA = d->f + 6 * i;
        if (!v) {
            memset(vi, 0, 6 * sizeof(double));
            memset(ci, 0, 6 * sizeof(double));
            memset(pA, 0, 6 * sizeof(double));
            continue;
        }
        double vJ[6], h[6];
        joint_motion(b, m->S + 6 * b->idx_v, v + b->idx_v, vJ);
        if (b->parent < 0) memcpy(vi, vJ, sizeof vJ);
        else {
            se3_actinv_motion(R, p, d->v + 6 * b->parent, vi);
            for (int k = 0; k < 6; k++) vi[k] += vJ[k];
        }
        motion_cross(vi, vJ, ci);
        inertia_mul(b->mass, b->h, b->Io, vi, h);
        force_cross(vi, h, pA);
        if (fext)
            for (int k = 0; k < 6; k++) pA[k] -= fext[6 * i + k];
    }
    /* pass 2: articulated inertias and bias forces, leaves first. A child's share goes to its
     * parent in local variables when the parent is the next body (a chain), else through d->IA
     * and d->f: reading back what was just stored there would stall the chain. */
    double carry_I[36] = {0}, carry_p[6] = {0};
    int carry_to = -1;
    for (int i = m->nbodies - 1; i >= 0; i--) {
        const mbs_body *b = &m->bodies[i];
        const double *S = m->S + 6 * b->idx_v;
        double *U = d->U + 6 * b->idx_v, *Di = d->Dab + 36 * i;
        double *u = d->u + b->idx_v;
        /* the joint's rotor inertias: D = Sᵀ I^A S + diag(armature), M's diagonal term */
        const double *arm = m->armature + b->idx_v;
        int n = b->nv;
        double IA[36], pA[6];
        memcpy(IA, d->IA + 36 * i, sizeof IA);
        memcpy(pA, d->f + 6 * i, sizeof pA);
        if (carry_to == i) {
            for (int k = 0; k < 36; k++) IA[k] += carry_I[k];
            for (int k = 0; k < 6; k++) pA[k] += carry_p[k];
            /* stored (never read back here) so that d->IA and d->f stay complete */
            memcpy(d->IA + 36 * i, IA, sizeof IA);
            memcpy(d->f + 6 * i, pA, sizeof pA);
        }
        if (b->type == MBS_JOINT_REVOLUTE && b->axis_id >= 0) {
            /* S = e_{3+a}: U = I^A S is a column of I^A and D = Sᵀ U one of its entries */
            int c = 3 + b->axis_id;
            memcpy(U, IA + 6 * c, 6 * sizeof(double));
            Di[0] = 1.0 / (IA[c + 6 * c] + arm[0]);
            u[0] = (tau ? tau[b->idx_v] : 0.0) - pA[c];
        } else {
            for (int k = 0; k < n; k++) m6_mulv(IA, S + 6 * k, U + 6 * k);
            joint_dinv(n, S, U, arm, Di);
            for (int k = 0; k < n; k++) u[k] = (tau ? tau[b->idx_v + k] : 0.0) - sdot(S + 6 * k, pA);
        }
        if (b->parent < 0) continue;
        /* Ia = IA - U D⁻¹ Uᵀ ; pa = pA + Ia c + U D⁻¹ u */
        double Ia[36], pa[6], UD[36], Du[6], X[36], t[6];
        for (int k = 0; k < n; k++)
            for (int r = 0; r < 6; r++) {
                double s = 0;
                for (int l = 0; l < n; l++) s += U[r + 6 * l] * Di[l + 6 * k];
                UD[r + 6 * k] = s;
            }
        for (int c = 0; c < 6; c++)
            for (int r = 0; r < 6; r++) {
                double s = IA[r + 6 * c];
                for (int k = 0; k < n; k++) s -= UD[r + 6 * k] * U[c + 6 * k];
                Ia[r + 6 * c] = s;
            }
        m6_mulv(Ia, d->a + 6 * i, pa);
        for (int k = 0; k < 6; k++) pa[k] += pA[k];
        dinv_mul(b, Di, u, Du);
        for (int k = 0; k < n; k++)
            for (int r = 0; r < 6; r++) pa[r] += U[r + 6 * k] * Du[k];
        inertia_to_parent(d->liR + 9 * i, d->lip + 3 * i, Ia, X);
        se3_act_force(d->liR + 9 * i, d->lip + 3 * i, pa, t);
        if (b->parent == i - 1) {
            memcpy(carry_I, X, sizeof X);
            memcpy(carry_p, t, sizeof t);
            carry_to = i - 1;
        } else {
            double *Ip = d->IA + 36 * b->parent, *fp = d->f + 6 * b->parent;
            for (int k = 0; k < 36; k++) Ip[k] += X[k];
            for (int k = 0; k < 6; k++) fp[k] += t[k];
        }
    }
    if (!ddq) return;
    /* pass 3: accelerations, root first */
    for (int i = 0; i < m->nbodies; i++) {
        const mbs_body *b = &m->bodies[i];
        const double *S = m->S + 6 * b->idx_v, *U = d->U + 6 * b->idx_v, *Di = d->Dab + 36 * i;
        double *ai = d->a + 6 * i, ap[6], r[6];
        se3_actinv_motion(d->liR + 9 * i, d->lip + 3 * i, b->parent < 0 ? a0 : d->a + 6 * b->parent, ap);
        for (int k = 0; k < 6; k++) ai[k] += ap[k];
        for (int k = 0; k < b->nv; k++) r[k] = d->u[b->idx_v + k] - sdot(U + 6 * k, ai);
        dinv_mul(b, Di, r, ddq + b->idx_v);
        double aJ[6];
        joint_motion(b, S, ddq + b->idx_v, aJ);
        for (int k = 0; k < 6; k++) ai[k] += aJ[k];
    }
}

/* Forward dynamics in world axes (Featherstone, RBDA §7.3 with every quantity in the world frame at
 * its origin; Pinocchio's WORLD convention). A body's articulated inertia then passes to its
 * parent as it is: no X* Ia X⁻¹ per joint, which in body frames costs more than the rest of the
 * backward pass, and each body's world inertia (inertia_act) does not wait for its children, so
 * that the bodies' transforms overlap where the body-frame pass must chain them. With S constant
 * in the body frame, its world column moves with the body: Ṡ = v × S, the bias c = v × S q̇. */
static void aba_world(const mbs_model *m, mbs_data *d, const double *q, const double *v, const double *tau,
                      const double *fext, double *ddq)
{
    joint_placements(m, q, d->tmp_6nb, d->liR, d->lip);
    /* pass 1, root first: world placements, joint columns, inertias, velocities, bias terms */
    for (int i = 0; i < m->nbodies; i++) {
        const mbs_body *b = &m->bodies[i];
        double *R = d->wR + 9 * i, *p = d->wp + 3 * i, *S = d->wS + 6 * b->idx_v;
        if (b->parent < 0) {
            memcpy(R, d->liR + 9 * i, 9 * sizeof(double));
            memcpy(p, d->lip + 3 * i, 3 * sizeof(double));
        } else
            se3_compose(d->wR + 9 * b->parent, d->wp + 3 * b->parent, d->liR + 9 * i, d->lip + 3 * i, R, p);
        joint_world_columns(b, m->S + 6 * b->idx_v, R, p, S);
        double h[3], Io[9];
        inertia_act(R, p, b->mass, b->h, b->Io, h, Io);
        inertia_matrix(b->mass, h, Io, d->wI + 36 * i);
        double *vi = d->wv + 6 * i, *ci = d->wc + 6 * i, *pA = d->wf + 6 * i;
        if (b->parent < 0) memset(vi, 0, 6 * sizeof(double));
        else memcpy(vi, d->wv + 6 * b->parent, 6 * sizeof(double));
        double vJ[6] = {0, 0, 0, 0, 0, 0}, mom[6];
        if (v)
            for (int k = 0; k < b->nv; k++)
                for (int r = 0; r < 6; r++) vJ[r] += S[6 * k + r] * v[b->idx_v + k];
        for (int r = 0; r < 6; r++) vi[r] += vJ[r];
        motion_cross(vi, vJ, ci);
        inertia_mul(b->mass, h, Io, vi, mom);
        force_cross(vi, mom, pA);
        if (fext) {
            double fw[6];
            se3_act_force(R, p, fext + 6 * i, fw);
            for (int r = 0; r < 6; r++) pA[r] -= fw[r];
        }
    }
    /* pass 2, leaves first: U = IA S, D⁻¹, u = τ − Sᵀ pA; the parent gains IA − U D⁻¹ Uᵀ and
     * pA + Ia c + U D⁻¹ u */
    for (int i = m->nbodies - 1; i >= 0; i--) {
        const mbs_body *b = &m->bodies[i];
        const int n = b->nv;
        const double *S = d->wS + 6 * b->idx_v, *arm = m->armature + b->idx_v;
        double *IA = d->wI + 36 * i, *pA = d->wf + 6 * i, *U = d->wU + 6 * b->idx_v, *Di = d->wD + 36 * i;
        double *u = d->wu + b->idx_v;
        for (int k = 0; k < n; k++) {
            m6_mulv(IA, S + 6 * k, U + 6 * k);
            u[k] = (tau ? tau[b->idx_v + k] : 0.0) - sdot(S + 6 * k, pA);
        }
        joint_dinv(n, S, U, arm, Di);
        if (b->parent < 0) continue;
        double *Ip = d->wI + 36 * b->parent, *fp = d->wf + 6 * b->parent, pa[6];
        const double *ci = d->wc + 6 * i;
        m6_mulv(IA, ci, pa);
        if (n == 1) {
            /* one column: Ia c = IA c − U D⁻¹ (U·c), so pa = pA + IA c + U D⁻¹ (u − U·c) */
            double UD[6], g = u[0] - sdot(U, ci);
            for (int r = 0; r < 6; r++) UD[r] = U[r] * Di[0];
            for (int c = 0; c < 6; c++)
                for (int r = 0; r < 6; r++) Ip[r + 6 * c] += IA[r + 6 * c] - UD[r] * U[c];
            for (int r = 0; r < 6; r++) fp[r] += pA[r] + pa[r] + UD[r] * g;
            continue;
        }
        double UD[36], Du[6];
        for (int k = 0; k < n; k++)
            for (int r = 0; r < 6; r++) {
                double s = 0;
                for (int l = 0; l < n; l++) s += U[r + 6 * l] * Di[l + 6 * k];
                UD[r + 6 * k] = s;
            }
        /* Ia c = IA c − U D⁻¹ Uᵀ c: pa = pA + IA c + U D⁻¹ (u − Uᵀ c) */
        double g[6];
        for (int k = 0; k < n; k++) g[k] = u[k] - sdot(U + 6 * k, ci);
        dinv_mul(b, Di, g, Du);
        for (int c = 0; c < 6; c++)
            for (int r = 0; r < 6; r++) {
                double x = IA[r + 6 * c];
                for (int k = 0; k < n; k++) x -= UD[r + 6 * k] * U[c + 6 * k];
                Ip[r + 6 * c] += x;
            }
        for (int r = 0; r < 6; r++) {
            double x = pA[r] + pa[r];
            for (int k = 0; k < n; k++) x += U[r + 6 * k] * Du[k];
            fp[r] += x;
        }
    }
    /* pass 3, root first: a = a_λ + c, q̈ = D⁻¹ (u − Uᵀ a), a += S q̈; gravity as the world's
     * acceleration upwards */
    double a0[6];
    gravity_motion(m, a0);
    for (int i = 0; i < m->nbodies; i++) {
        const mbs_body *b = &m->bodies[i];
        const int n = b->nv;
        const double *S = d->wS + 6 * b->idx_v, *U = d->wU + 6 * b->idx_v, *ap = b->parent < 0 ? a0 : d->wa + 6 * b->parent;
        double *ai = d->wa + 6 * i, r[6];
        for (int k = 0; k < 6; k++) ai[k] = ap[k] + d->wc[6 * i + k];
        for (int k = 0; k < n; k++) r[k] = d->wu[b->idx_v + k] - sdot(U + 6 * k, ai);
        dinv_mul(b, d->wD + 36 * i, r, ddq + b->idx_v);
        for (int k = 0; k < n; k++)
            for (int c = 0; c < 6; c++) ai[c] += S[6 * k + c] * ddq[b->idx_v + k];
    }
}

void mbs_aba_fext(const mbs_model *m, mbs_data *d, const double *q, const double *v,
                  const double *tau, const double *fext, double *ddq)
{
    aba_world(m, d, q, v, tau, fext, ddq);
}

void mbs_aba(const mbs_model *m, mbs_data *d, const double *q, const double *v, const double *tau,
             double *ddq)
{
    aba_world(m, d, q, v, tau, NULL, ddq);
}
