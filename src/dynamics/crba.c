/* crba.c — composite-rigid-body algorithm for the joint-space inertia matrix (RBDA table 6.2).
 * Worked in one common frame per tree: composite inertias then add without a change of frame,
 * and M(r, c) = S_rᵀ Yc S_c is a dot product of common-frame columns, so nothing is carried up
 * the tree. M does not depend on which common frame is used, and the frame of the tree's root
 * body is the cheapest: the root needs no placement, and for a free-flyer root S is the
 * identity, so its rows of M are the composite forces themselves. */
#include "../internal.h"
#include "joint.h"

void mbs_crba(const mbs_model *m, mbs_data *d, const double *q, double *M)
{
    int nv = m->nv;
    double *rR = d->rR, *rp = d->rp, *J = d->tmp_6nv;
    /* entries between bodies on different branches stay zero */
    memset(M, 0, (size_t)nv * nv * sizeof(double));
    /* joint placements are independent of each other, root-frame placements chain to the
     * parent: two loops let the processor overlap the first */
    for (int i = 0; i < m->nbodies; i++) {
        const mbs_body *b = &m->bodies[i];
        if (b->parent >= 0) joint_placement(b, q + b->idx_q, d->liR + 9 * i, d->lip + 3 * i);
    }
    for (int i = 0; i < m->nbodies; i++) {
        const mbs_body *b = &m->bodies[i];
        int par = b->parent;
        double *R = d->liR + 9 * i, *p = d->lip + 3 * i;
        if (par < 0) { m3_identity(rR + 9 * i); memset(rp + 3 * i, 0, 3 * sizeof(double)); }
        else if (m->bodies[par].parent < 0) {   /* the root's frame is the common frame */
            memcpy(rR + 9 * i, R, 9 * sizeof(double));
            memcpy(rp + 3 * i, p, 3 * sizeof(double));
        } else se3_compose(rR + 9 * par, rp + 3 * par, R, p, rR + 9 * i, rp + 3 * i);
    }
    /* a separate loop: bodies are independent here, so their long products overlap */
    for (int i = 0; i < m->nbodies; i++) {
        const mbs_body *b = &m->bodies[i];
        const double *S = m->S + 6 * b->idx_v;
        double *Yc = d->Ic + 16 * i;
        Yc[0] = b->mass;
        if (b->parent < 0) {
            memcpy(Yc + 1, b->h, 3 * sizeof(double));
            memcpy(Yc + 4, b->Io, 9 * sizeof(double));
            memcpy(J + 6 * b->idx_v, S, 6 * (size_t)b->nv * sizeof(double));
        } else {
            inertia_act(rR + 9 * i, rp + 3 * i, b->mass, b->h, b->Io, Yc + 1, Yc + 4);
            joint_world_columns(b, S, rR + 9 * i, rp + 3 * i, J + 6 * b->idx_v);
        }
    }
    /* F = Yc J is kept by component (F[k·nv + c]) so that a row of M is a vectorised
     * sum of six scaled rows of F rather than one 6-term dot product per entry. Under a
     * free-flyer root spanning the model, component k of F is column k of M: F is written there. */
    const mbs_body *b0 = &m->bodies[0];
    double *F = b0->type == MBS_JOINT_FREEFLYER && b0->nv_subtree == nv ? M : d->F;
    for (int i = m->nbodies - 1; i >= 0; i--) {
        const mbs_body *b = &m->bodies[i];
        const double *Yc = d->Ic + 16 * i;
        int c1 = b->idx_v + b->nv_subtree;
        if (b->parent < 0 && b->type == MBS_JOINT_FREEFLYER) {
            /* J = 1: the root block is Yc itself and row k of the rest is component k of F */
            int r0 = b->idx_v;
            double I6[36];
            inertia_matrix(Yc[0], Yc + 1, Yc + 4, I6);
            for (int c = 0; c < 6; c++)
                for (int k = 0; k < 6; k++) M[(r0 + k) + (size_t)nv * (r0 + c)] = I6[k + 6 * c];
            for (int k = 0; k < 6; k++) {
                double *Mr = M + (size_t)nv * (r0 + k);
                const double *Fk = F + (size_t)k * nv;
                if (Fk != Mr)
                    for (int c = r0 + 6; c < c1; c++) Mr[c] = Fk[c];
                for (int c = r0 + 6; c < c1; c++) M[(r0 + k) + (size_t)nv * c] = Fk[c];
            }
            continue;
        }
        for (int k = 0; k < b->nv; k++) {
            int c = b->idx_v + k;
            double f[6];
            inertia_mul(Yc[0], Yc + 1, Yc + 4, J + 6 * c, f);
            for (int l = 0; l < 6; l++) F[l * nv + c] = f[l];
        }
        /* rows of this joint against its own and its descendants' columns */
        for (int k = 0; k < b->nv; k++) {
            int r = b->idx_v + k;
            const double *Jr = J + 6 * r;
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
