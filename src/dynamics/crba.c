/* crba.c — composite-rigid-body algorithm for the joint-space inertia matrix (RBDA table 6.2).
 * Composite inertias are accumulated in body frames, where a revolute joint about x, y or z moves
 * a child's inertia into its parent by a plane rotation; each joint's force columns F = Yc S are
 * then moved to one common frame per tree, where M(r, c) = J_rᵀ F_c is a dot product of
 * common-frame columns. M does not depend on which common frame is used, and the frame of the
 * tree's root body is the cheapest: the root needs no placement, and for a free-flyer root S is
 * the identity, so its rows of M are the composite forces themselves. */
#include "../internal.h"
#include "joint.h"

/* A revolute joint about x, y or z behind an identity tree rotation turns its body by a plane
 * rotation: with (a, u, v) the axis and the two others in cyclic order, e_u -> c e_u + s e_v. */
static int is_planar(const mbs_body *b)
{
    static const double I[9] = {1, 0, 0, 0, 1, 0, 0, 0, 1};
    return b->type == MBS_JOINT_REVOLUTE && b->axis_id >= 0 && memcmp(b->Rt, I, sizeof I) == 0;
}

/* (R, p) = (P, pp) ∘ (plane rotation about axis a, pt): columns u, v of P turn, column a stays;
 * the joint's own placement (R_j, pt) is written to (jR, jp) for the other algorithms. */
static inline void compose_planar(int a, double c, double s, const double P[9], const double pp[3],
                                  const double pt[3], double R[9], double p[3], double jR[9], double jp[3])
{
    int u = (a + 1) % 3, v = (a + 2) % 3;
    jR[a + 3 * a] = 1; jR[u + 3 * a] = 0; jR[v + 3 * a] = 0;
    jR[a + 3 * u] = 0; jR[u + 3 * u] = c; jR[v + 3 * u] = s;
    jR[a + 3 * v] = 0; jR[u + 3 * v] = -s; jR[v + 3 * v] = c;
    memcpy(jp, pt, 3 * sizeof(double));
    for (int k = 0; k < 3; k++) {
        double pu = P[k + 3 * u], pv = P[k + 3 * v];
        R[k + 3 * a] = P[k + 3 * a];
        R[k + 3 * u] = c * pu + s * pv;
        R[k + 3 * v] = c * pv - s * pu;
        p[k] = pp[k] + P[k] * pt[0] + P[k + 3] * pt[1] + P[k + 6] * pt[2];
    }
}

/* Yp += X Y Xᵀ for a child turned by (c, s) about axis a and offset by p. The rotation only
 * mixes the u, v rows and columns (the 2x2 block through the double angle); the parallel-axis
 * terms fold into g = R h + m p / 2: Io' = R Io Rᵀ + 2 (g·p) 1 - g pᵀ - p gᵀ. */
static inline void add_planar_inertia(int a, double c, double s, const double p[3], const double *Y, double *Yp)
{
    int u = (a + 1) % 3, v = (a + 2) % 3;
    double m = Y[0];
    const double *h = Y + 1, *I = Y + 4;
    double Rh[3];
    Rh[a] = h[a]; Rh[u] = c * h[u] - s * h[v]; Rh[v] = s * h[u] + c * h[v];
    double c2 = c * c - s * s, s2 = 2 * c * s;
    double Iau = I[a + 3 * u], Iav = I[a + 3 * v], Iuv = I[u + 3 * v];
    double mid = 0.5 * (I[u + 3 * u] + I[v + 3 * v]), dif = 0.5 * (I[u + 3 * u] - I[v + 3 * v]);
    double J[9];
    J[a + 3 * a] = I[a + 3 * a];
    J[a + 3 * u] = J[u + 3 * a] = c * Iau - s * Iav;
    J[a + 3 * v] = J[v + 3 * a] = s * Iau + c * Iav;
    J[u + 3 * u] = mid + dif * c2 - Iuv * s2;
    J[v + 3 * v] = mid - dif * c2 + Iuv * s2;
    J[u + 3 * v] = J[v + 3 * u] = dif * s2 + Iuv * c2;
    double g[3] = {Rh[0] + 0.5 * m * p[0], Rh[1] + 0.5 * m * p[1], Rh[2] + 0.5 * m * p[2]};
    double gp2 = 2 * (g[0] * p[0] + g[1] * p[1] + g[2] * p[2]);
    Yp[0] += m;
    for (int k = 0; k < 3; k++) Yp[1 + k] += Rh[k] + m * p[k];
    for (int j = 0; j < 3; j++)
        for (int i = 0; i < 3; i++)
            Yp[4 + i + 3 * j] += J[i + 3 * j] - g[i] * p[j] - p[i] * g[j] + (i == j ? gp2 : 0.0);
}

/* Root-frame force column of a revolute joint about axis a: locally f = Y S = [-h x e_a; Io e_a],
 * whose linear part has no a component, then moved by the body's root placement (R, p). */
static inline void axis_force_column(int a, const double *Y, const double R[9], const double p[3], double *F, int nv)
{
    int u = (a + 1) % 3, v = (a + 2) % 3;
    const double *h = Y + 1, *n = Y + 4 + 3 * a;
    double fu = -h[v], fv = h[u], f[3], t[3];
    for (int k = 0; k < 3; k++) f[k] = R[k + 3 * u] * fu + R[k + 3 * v] * fv;
    v3_cross(p, f, t);
    for (int k = 0; k < 3; k++) {
        F[k * nv] = f[k];
        F[(3 + k) * nv] = R[k] * n[0] + R[k + 3] * n[1] + R[k + 6] * n[2] + t[k];
    }
}

void mbs_crba(const mbs_model *m, mbs_data *d, const double *q, double *M)
{
    int nv = m->nv;
    double *rR = d->rR, *rp = d->rp, *J = d->tmp_6nv;
    /* entries between bodies on different branches stay zero */
    memset(M, 0, (size_t)nv * nv * sizeof(double));
    /* composite inertias are accumulated in body frames, where a planar joint moves a child's
     * inertia into its parent cheaply; only the force columns F = Yc S go to the root frame */
    for (int i = 0; i < m->nbodies; i++) {
        const mbs_body *b = &m->bodies[i];
        double *Yc = d->Ic + 16 * i;
        Yc[0] = b->mass;
        memcpy(Yc + 1, b->h, 3 * sizeof(double));
        memcpy(Yc + 4, b->Io, 9 * sizeof(double));
    }
    for (int i = 0; i < m->nbodies; i++) {
        const mbs_body *b = &m->bodies[i];
        int par = b->parent;
        const double *S = m->S + 6 * b->idx_v;
        double *R = d->liR + 9 * i, *p = d->lip + 3 * i, *oR = rR + 9 * i, *op = rp + 3 * i;
        if (par < 0) {   /* the root's frame is the common frame */
            m3_identity(oR); memset(op, 0, 3 * sizeof(double));
            memcpy(J + 6 * b->idx_v, S, 6 * (size_t)b->nv * sizeof(double));
            continue;
        }
        /* Yc's padding remembers a planar joint's cosine and sine for the backward sweep */
        double *Yc = d->Ic + 16 * i;
        Yc[15] = 0;
        if (is_planar(b)) {
            double s, c;
            sin_cos(q[b->idx_q], &s, &c);
            Yc[13] = c; Yc[14] = s; Yc[15] = 1;
            const double *P = rR + 9 * par;
            switch (b->axis_id) {   /* constant axes let the compiler drop the index arithmetic */
            case 0: compose_planar(0, c, s, P, rp + 3 * par, b->pt, oR, op, R, p); break;
            case 1: compose_planar(1, c, s, P, rp + 3 * par, b->pt, oR, op, R, p); break;
            default: compose_planar(2, c, s, P, rp + 3 * par, b->pt, oR, op, R, p); break;
            }
        } else {
            joint_placement(b, q + b->idx_q, R, p);
            se3_compose(rR + 9 * par, rp + 3 * par, R, p, oR, op);
        }

        joint_world_columns(b, S, oR, op, J + 6 * b->idx_v);
    }
    /* F = Yc S in the root frame is kept by component (F[k·nv + c]) so that a row of M is a
     * vectorised sum of six scaled rows of F rather than one 6-term dot product per entry. Under a
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
        const double *oR = rR + 9 * i, *op = rp + 3 * i;
        if (b->type == MBS_JOINT_REVOLUTE && b->axis_id >= 0)
            axis_force_column(b->axis_id, Yc, oR, op, F + b->idx_v, nv);
        else
            for (int k = 0; k < b->nv; k++) {
                int c = b->idx_v + k;
                double fl[6], f[6];
                inertia_mul(Yc[0], Yc + 1, Yc + 4, m->S + 6 * c, fl);
                se3_act_force(oR, op, fl, f);
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
            const double *R = d->liR + 9 * i, *p = d->lip + 3 * i;
            if (Yc[15] != 0) {
                double c = Yc[13], s = Yc[14];
                switch (b->axis_id) {
                case 0: add_planar_inertia(0, c, s, p, Yc, Yp); break;
                case 1: add_planar_inertia(1, c, s, p, Yc, Yp); break;
                default: add_planar_inertia(2, c, s, p, Yc, Yp); break;
                }
            } else {
                double h[3], Io[9];
                inertia_act(R, p, Yc[0], Yc + 1, Yc + 4, h, Io);
                Yp[0] += Yc[0];
                for (int k = 0; k < 3; k++) Yp[1 + k] += h[k];
                for (int k = 0; k < 9; k++) Yp[4 + k] += Io[k];
            }
        }
    }
}
