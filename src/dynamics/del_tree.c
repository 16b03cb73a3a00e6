/* del_tree.c — the exact DEL Jacobian of the variational integrator eliminated along the tree
 * in O(n); the derivation is in dynamics_internal.h (mbs_del_tree). */
#include <float.h>

#include "dynamics_internal.h"
#include "joint.h"

/* Inverse of the n x n block D (leading dimension 6) by Gauss–Jordan with partial pivoting:
 * D is not symmetric here (B_i is not), so the Cholesky of the ABA does not apply. Returns 1
 * when a pivot is not finite or is at round-off level against D's largest entry: an inverse
 * from such a pivot is noise, and the caller has a better step to take. */
static int small_inverse(int n, const double *D, double *Di)
{
    double a[36], x[36], scale = 0;
    memcpy(a, D, sizeof a);
    memset(x, 0, sizeof x);
    for (int k = 0; k < n; k++) x[k + 6 * k] = 1;
    for (int c = 0; c < n; c++)
        for (int r = 0; r < n; r++) scale = fmax(scale, fabs(a[r + 6 * c]));
    const double tiny = 64 * DBL_EPSILON * scale;
    for (int c = 0; c < n; c++) {
        int p = c;
        for (int r = c + 1; r < n; r++)
            if (fabs(a[r + 6 * c]) > fabs(a[p + 6 * c])) p = r;
        double piv = a[p + 6 * c];
        if (!(fabs(piv) > tiny) || !isfinite(piv)) return 1;
        if (p != c)
            for (int k = 0; k < n; k++) {
                double t = a[c + 6 * k]; a[c + 6 * k] = a[p + 6 * k]; a[p + 6 * k] = t;
                t = x[c + 6 * k]; x[c + 6 * k] = x[p + 6 * k]; x[p + 6 * k] = t;
            }
        for (int k = 0; k < n; k++) { a[c + 6 * k] /= piv; x[c + 6 * k] /= piv; }
        for (int r = 0; r < n; r++) {
            double f = a[r + 6 * c];
            if (r == c || f == 0) continue;
            for (int k = 0; k < n; k++) { a[r + 6 * k] -= f * a[c + 6 * k]; x[r + 6 * k] -= f * x[c + 6 * k]; }
        }
    }
    memcpy(Di, x, sizeof x);
    return 0;
}

/* y = D⁻¹ x for a block of n entries. */
static inline void block_solve(int n, const double *Di, const double *x, double *y)
{
    for (int r = 0; r < n; r++) {
        double s = 0;
        for (int k = 0; k < n; k++) s += Di[r + 6 * k] * x[k];
        y[r] = s;
    }
}

int mbsi_del_tree_factor(const mbs_model *m, mbs_del_tree *t, const double *B, const double *Rk, const double *pk,
                        const double *R1, const double *p1, const double *rotor)
{
    const int nb = m->nbodies;
    memcpy(t->IA, B, 36 * (size_t)nb * sizeof(double));
    for (int i = nb - 1; i >= 0; i--) {
        const mbs_body *b = &m->bodies[i];
        const int n = b->nv;
        const double *S = m->S + 6 * b->idx_v;
        double *IA = t->IA + 36 * i, *U = t->U + 6 * b->idx_v, *W = t->W + 6 * b->idx_v, *Di = t->Dinv + 36 * i;
        double D[36] = {0};
        for (int k = 0; k < n; k++) {
            m6_mulv(IA, S + 6 * k, U + 6 * k);                         /* U = I^A S */
            for (int r = 0; r < 6; r++) W[r + 6 * k] = sdot(IA + 6 * r, S + 6 * k); /* W = I^Aᵀ S */
        }
        for (int k = 0; k < n; k++)
            for (int l = 0; l < n; l++) D[k + 6 * l] = sdot(S + 6 * k, U + 6 * l);
        if (rotor)
            for (int k = 0; k < 36; k++) D[k] += rotor[36 * i + k];
        if (small_inverse(n, D, Di)) return 1;
        if (b->parent < 0) continue;
        /* I^a = I^A - U D⁻¹ Wᵀ, in place */
        for (int k = 0; k < n; k++) {
            double DW[6];   /* row k of D⁻¹ Wᵀ, as a 6-vector over the columns of I^a */
            for (int c = 0; c < 6; c++) {
                double s = 0;
                for (int l = 0; l < n; l++) s += Di[k + 6 * l] * W[c + 6 * l];
                DW[c] = s;
            }
            for (int c = 0; c < 6; c++)
                for (int r = 0; r < 6; r++) IA[r + 6 * c] -= U[r + 6 * k] * DW[c];
        }
        /* the parent's I^A gains X^k*_i I^a_i X^{k+1}_i, one column per parent axis */
        double *IAp = t->IA + 36 * b->parent;
        for (int c = 0; c < 6; c++) {
            double e[6] = {0, 0, 0, 0, 0, 0}, y[6], z[6], wv[6];
            e[c] = 1;
            se3_actinv_motion(R1 + 9 * i, p1 + 3 * i, e, y);
            m6_mulv(IA, y, z);
            se3_act_force(Rk + 9 * i, pk + 3 * i, z, wv);
            for (int r = 0; r < 6; r++) IAp[r + 6 * c] += wv[r];
        }
    }
    return 0;
}

void mbsi_del_tree_solve(const mbs_model *m, mbs_del_tree *t, const double *Rk, const double *pk, const double *R1,
                        const double *p1, double *x)
{
    const int nb = m->nbodies;
    double *p = t->p, *u = t->u;
    memset(p, 0, 6 * (size_t)nb * sizeof(double));
    /* backward: the right-hand side's impulses gather towards the root (at q^k) */
    for (int i = nb - 1; i >= 0; i--) {
        const mbs_body *b = &m->bodies[i];
        const double *S = m->S + 6 * b->idx_v, *U = t->U + 6 * b->idx_v, *Di = t->Dinv + 36 * i;
        double *ui = u + b->idx_v, *pi = p + 6 * i, Du[6], tr[6];
        for (int k = 0; k < b->nv; k++) ui[k] = x[b->idx_v + k] - sdot(S + 6 * k, pi);
        if (b->parent < 0) continue;
        block_solve(b->nv, Di, ui, Du);
        for (int k = 0; k < b->nv; k++)
            for (int r = 0; r < 6; r++) pi[r] += U[r + 6 * k] * Du[k];
        se3_act_force(Rk + 9 * i, pk + 3 * i, pi, tr);
        for (int r = 0; r < 6; r++) p[6 * b->parent + r] += tr[r];
    }
    /* forward: twists from the root (at q^{k+1}); p_i is overwritten by body i's twist */
    for (int i = 0; i < nb; i++) {
        const mbs_body *b = &m->bodies[i];
        const double *S = m->S + 6 * b->idx_v, *W = t->W + 6 * b->idx_v, *Di = t->Dinv + 36 * i;
        double *vi = p + 6 * i, r[6], vJ[6];
        if (b->parent < 0) memset(vi, 0, 6 * sizeof(double));
        else se3_actinv_motion(R1 + 9 * i, p1 + 3 * i, p + 6 * b->parent, vi);
        for (int k = 0; k < b->nv; k++) r[k] = u[b->idx_v + k] - sdot(W + 6 * k, vi);
        double *xi = x + b->idx_v;
        block_solve(b->nv, Di, r, xi);
        joint_motion(b, S, xi, vJ);
        for (int k = 0; k < 6; k++) vi[k] += vJ[k];
    }
}
