/* crba.c — composite-rigid-body algorithm for the joint-space inertia matrix (RBDA table 6.2).
 * Worked in the world frame: composite inertias then add without a change of frame, and
 * M(r, c) = S_rᵀ Yc S_c is a dot product of world columns, so nothing is carried up the tree. */
#include "../internal.h"
#include "joint.h"

void mbs_crba(const mbs_model *m, mbs_data *d, const double *q, double *M)
{
    int nv = m->nv;
    /* entries between bodies on different branches stay zero */
    memset(M, 0, (size_t)nv * nv * sizeof(double));
    /* joint placements are independent of each other, world placements chain to the parent:
     * two loops let the processor overlap the first */
    for (int i = 0; i < m->nbodies; i++) {
        const mbs_body *b = &m->bodies[i];
        joint_placement(b, q + b->idx_q, d->liR + 9 * i, d->lip + 3 * i);
    }
    for (int i = 0; i < m->nbodies; i++) {
        const mbs_body *b = &m->bodies[i];
        double *R = d->liR + 9 * i, *p = d->lip + 3 * i, *oR = d->oR + 9 * i, *op = d->op + 3 * i;
        if (b->parent < 0) { memcpy(oR, R, 9 * sizeof(double)); memcpy(op, p, 3 * sizeof(double)); }
        else se3_compose(d->oR + 9 * b->parent, d->op + 3 * b->parent, R, p, oR, op);
    }
    /* a separate loop: bodies are independent here, so their long products overlap */
    for (int i = 0; i < m->nbodies; i++) {
        const mbs_body *b = &m->bodies[i];
        const double *oR = d->oR + 9 * i, *op = d->op + 3 * i;
        double *Yc = d->Ic + 16 * i;
        Yc[0] = b->mass;
        inertia_act(oR, op, b->mass, b->h, b->Io, Yc + 1, Yc + 4);
        joint_world_columns(b, m->S + 6 * b->idx_v, oR, op, d->J + 6 * b->idx_v);
    }
    /* F = Yc J is kept by component (F[k·nv + c]) so that a row of M is a vectorised
     * sum of six scaled rows of F rather than one 6-term dot product per entry */
    double *F = d->F;
    for (int i = m->nbodies - 1; i >= 0; i--) {
        const mbs_body *b = &m->bodies[i];
        const double *Yc = d->Ic + 16 * i;
        for (int k = 0; k < b->nv; k++) {
            int c = b->idx_v + k;
            double f[6];
            inertia_mul(Yc[0], Yc + 1, Yc + 4, d->J + 6 * c, f);
            for (int l = 0; l < 6; l++) F[l * nv + c] = f[l];
        }
        /* rows of this joint against its own and its descendants' columns */
        int c1 = b->idx_v + b->nv_subtree;
        for (int k = 0; k < b->nv; k++) {
            int r = b->idx_v + k;
            const double *Jr = d->J + 6 * r;
            double *Mr = M + (size_t)nv * r;
            for (int c = r; c < c1; c++)
                Mr[c] = Jr[0] * F[c] + Jr[1] * F[nv + c] + Jr[2] * F[2 * nv + c]
                      + Jr[3] * F[3 * nv + c] + Jr[4] * F[4 * nv + c] + Jr[5] * F[5 * nv + c];
            for (int c = r + 1; c < c1; c++) M[r + (size_t)nv * c] = Mr[c];
        }
        if (b->parent >= 0) {
            double *Yp = d->Ic + 16 * b->parent;
            for (int k = 0; k < 13; k++) Yp[k] += Yc[k];
        }
    }
}
