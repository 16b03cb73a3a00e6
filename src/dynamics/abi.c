/* abi.c — M⁻¹ x in O(n) per vector without forming M: the impulse form of the articulated-body
 * algorithm (Featherstone; Mirtich), with the articulated inertias of mbsi_aba_passes. */
#include "../model/model_internal.h"
#include "mbs/dynamics.h"
#include "mbs/liegroup.h"
#include "aba.h"
#include "joint.h"

void mbs_abi_factor(const mbs_model *m, mbs_data *d, const double *q)
{
    mbsi_aba_passes(m, d, q, NULL, NULL, NULL, NULL);
}

void mbs_abi_solve(const mbs_model *m, mbs_data *d, double *x, int ncols, int ldx)
{
    double *pA = d->f, *acc = d->a, *u = d->u;
    for (int c = 0; c < ncols; c++) {
        double *xc = x + (size_t)ldx * c;
        memset(pA, 0, 6 * (size_t)m->nbodies * sizeof(double));
        /* backward: impulses propagate to the root through the articulated inertias */
        for (int i = m->nbodies - 1; i >= 0; i--) {
            const mbs_body *b = &m->bodies[i];
            const double *S = m->S + 6 * b->idx_v, *U = d->U + 6 * b->idx_v, *Di = d->Dab + 36 * i;
            double *ui = u + b->idx_v, *p = pA + 6 * i;
            for (int k = 0; k < b->nv; k++) ui[k] = xc[b->idx_v + k] - sdot(S + 6 * k, p);
            if (b->parent < 0) continue;
            double pa[6], t[6], Du[6];
            memcpy(pa, p, sizeof pa);
            dinv_mul(b, Di, ui, Du);
            for (int k = 0; k < b->nv; k++)
                for (int r = 0; r < 6; r++) pa[r] += U[r + 6 * k] * Du[k];
            se3_act_force(d->liR + 9 * i, d->lip + 3 * i, pa, t);
            for (int k = 0; k < 6; k++) pA[6 * b->parent + k] += t[k];
        }
        /* forward: velocity changes, root first */
        for (int i = 0; i < m->nbodies; i++) {
            const mbs_body *b = &m->bodies[i];
            const double *S = m->S + 6 * b->idx_v, *U = d->U + 6 * b->idx_v, *Di = d->Dab + 36 * i;
            double *ai = acc + 6 * i, r[6], aJ[6];
            if (b->parent < 0) memset(ai, 0, 6 * sizeof(double));
            else se3_actinv_motion(d->liR + 9 * i, d->lip + 3 * i, acc + 6 * b->parent, ai);
            for (int k = 0; k < b->nv; k++) r[k] = u[b->idx_v + k] - sdot(U + 6 * k, ai);
            double *y = xc + b->idx_v;
            dinv_mul(b, Di, r, y);
            joint_motion(b, S, y, aJ);
            for (int k = 0; k < 6; k++) ai[k] += aJ[k];
        }
    }
}

void mbs_abi(const mbs_model *m, mbs_data *d, const double *q, const double *x, double *y)
{
    if (y != x) memcpy(y, x, (size_t)m->nv * sizeof(double));
    mbs_abi_factor(m, d, q);
    mbs_abi_solve(m, d, y, 1, m->nv);
}
