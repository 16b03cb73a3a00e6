/* crba.c — composite-rigid-body algorithm for the joint-space inertia matrix (RBDA table 6.2).
 * Composite inertias are accumulated in body frames, where a revolute joint about x, y or z moves
 * a child's inertia into its parent by a plane rotation; each joint's force columns F = Yc S are
 * then moved to one common frame per tree, where M(r, c) = J_rᵀ F_c is a dot product of
 * common-frame columns. M does not depend on which common frame is used, and the frame of the
 * tree's root body is the cheapest: the root needs no placement, and for a free-flyer root S is
 * the identity, so its rows of M are the composite forces themselves.
 *
 * Three passes: placements (forward), composite inertias and force columns (backward), then M
 * column by column. What the next body needs (a chain's parent placement, a chain's child
 * inertia) is handed over in local variables rather than read back from the array it was just
 * stored to: such a load stalls whenever its width does not match the stores' (the compiler
 * vectorises some of them and not others), and that was a quarter of the time. */
#include "../model/model_internal.h"
#include "mbs/dynamics.h"
#include "mbs/liegroup.h"
#include "joint.h"

/* d->Ic is CRBA's scratch here (16 doubles per body): the composite inertia (mass, h, the six
 * distinct entries of Io), then a planar joint's cosine and sine, its axis (-1: not planar) and
 * the axis' sign (-1 for -x, -y, -z). */
enum { IC_C = 10, IC_S = 11, IC_AXIS = 12, IC_SIGN = 13 };

/* Composite inertia with the symmetric Io kept as xx, yy, zz, yz, zx, xy: the off-diagonal
 * entry (i, j) sits at 3 + k, k being the third axis. */
typedef struct { double m, h[3], I[6]; } sym_inertia;
#define SYM(i, j) ((i) == (j) ? (i) : 6 - (i) - (j))

static inline void sym_load(const double *y, sym_inertia *Y)
{
    Y->m = y[0];
    for (int k = 0; k < 3; k++) Y->h[k] = y[1 + k];
    for (int k = 0; k < 6; k++) Y->I[k] = y[4 + k];
}
static inline void sym_store(const sym_inertia *Y, double *y)
{
    y[0] = Y->m;
    for (int k = 0; k < 3; k++) y[1 + k] = Y->h[k];
    for (int k = 0; k < 6; k++) y[4 + k] = Y->I[k];
}
static inline void sym_add(sym_inertia *Y, const sym_inertia *X)
{
    Y->m += X->m;
    for (int k = 0; k < 3; k++) Y->h[k] += X->h[k];
    for (int k = 0; k < 6; k++) Y->I[k] += X->I[k];
}
static inline void sym_to_full(const double I[6], double Io[9])
{
    for (int j = 0; j < 3; j++)
        for (int i = 0; i < 3; i++) Io[i + 3 * j] = I[SYM(i, j)];
}

/* A revolute joint about x, y or z behind an identity tree rotation turns its body by a plane
 * rotation: with (a, u, v) the axis and the two others in cyclic order, e_u -> c e_u + s e_v
 * (the model's turn_axis). A joint about -x, -y or -z (Robosimian's 12 pitch joints turn about
 * -y) turns by -q about +x, +y or +z: its columns S, J and F are those of the + axis negated. */

/* (P, pp) <- (P, pp) ∘ (plane rotation about axis a, pt): columns u, v of P turn, column a
 * stays and is the joint's axis w in the root frame, so its columns are J = [pp x w; w]. The
 * result is also stored to (dR, dp), element by element as it is computed: copying P there
 * afterwards read it back in one wide load from its narrow stores, a store-forwarding stall
 * that was a fifth of Robosimian's CRBA. */
static inline void planar_step(int a, double c, double s, const double pt[3], double P[9], double pp[3], double J[6],
                               double *restrict dR, double *restrict dp)
{
    int u = (a + 1) % 3, v = (a + 2) % 3;
    for (int k = 0; k < 3; k++) dp[k] = pp[k] += P[k] * pt[0] + P[k + 3] * pt[1] + P[k + 6] * pt[2];
    for (int k = 0; k < 3; k++) {
        double pu = P[k + 3 * u], pv = P[k + 3 * v];
        dR[k + 3 * u] = P[k + 3 * u] = c * pu + s * pv;
        dR[k + 3 * v] = P[k + 3 * v] = c * pv - s * pu;
        dR[k + 3 * a] = P[k + 3 * a];
    }
    const double *w = P + 3 * a;
    v3_cross(pp, w, J);
    J[3] = w[0]; J[4] = w[1]; J[5] = w[2];
}

/* Forward pass: each body's placement in its tree's root frame (rR, rp), its joint's root-frame
 * columns J, and each body's own inertia as the start of its composite one. */
static void placements(const mbs_model *m, mbs_data *d, const double *q)
{
    double *J = d->tmp_6nv;
    double P[9], pp[3];   /* the placement of the body last visited, i.e. a chain's parent */
    /* the sines and cosines of every one-coordinate joint first, all at once (d->tmp_6nb) */
    double *sn, *cs;
    joint_sin_cos(m, q, d->tmp_6nb, &sn, &cs);
    for (int i = 0; i < m->nbodies; i++) {
        const mbs_body *b = &m->bodies[i];
        const double *S = m->S + 6 * b->idx_v;
        double *y = d->Ic + 16 * i, *Ji = J + 6 * b->idx_v;
        y[0] = b->mass;
        for (int k = 0; k < 3; k++) y[1 + k] = b->h[k];
        for (int k = 0; k < 3; k++) y[4 + k] = b->Io[4 * k];
        y[7] = b->Io[5]; y[8] = b->Io[6]; y[9] = b->Io[1];
        y[IC_AXIS] = -1;
        if (b->parent < 0) {   /* the root's frame is the common frame */
            m3_identity(P); pp[0] = pp[1] = pp[2] = 0;
            memcpy(Ji, S, 6 * (size_t)b->nv * sizeof(double));
        } else {
            if (b->parent != i - 1) {
                memcpy(P, d->rR + 9 * b->parent, sizeof P);
                memcpy(pp, d->rp + 3 * b->parent, sizeof pp);
            }
            double sign = b->turn_sign;
            int axis = b->turn_axis;
            if (axis >= 0) {
                double s = sign * sn[i], c = cs[i];
                y[IC_C] = c; y[IC_S] = s; y[IC_AXIS] = axis; y[IC_SIGN] = sign;
                double *dR = d->rR + 9 * i, *dp = d->rp + 3 * i;
                switch (axis) {   /* constant axes let the compiler drop the index arithmetic */
                case 0: planar_step(0, c, s, b->pt, P, pp, Ji, dR, dp); break;
                case 1: planar_step(1, c, s, b->pt, P, pp, Ji, dR, dp); break;
                default: planar_step(2, c, s, b->pt, P, pp, Ji, dR, dp); break;
                }
                if (sign < 0)
                    for (int k = 0; k < 6; k++) Ji[k] = -Ji[k];
                continue;
            } else {
                double *jR = d->liR + 9 * i, *jp = d->lip + 3 * i;
                if (b->type == MBS_JOINT_REVOLUTE) revolute_placement(b, sn[i], cs[i], jR, jp);
                else joint_placement(b, q + b->idx_q, jR, jp);
                se3_compose(P, pp, jR, jp, P, pp);
                joint_world_columns(b, S, P, pp, Ji);
            }
        }
        memcpy(d->rR + 9 * i, P, sizeof P);
        memcpy(d->rp + 3 * i, pp, sizeof pp);
    }
}

/* Root-frame force column of a revolute joint about axis a: locally f = Y S = [-h x e_a; Io e_a],
 * whose linear part has no a component, then moved by the body's root placement (R, p). */
static inline void axis_force_column(int a, const sym_inertia *Y, const double R[9], const double p[3],
                                     double *F, int nv)
{
    int u = (a + 1) % 3, v = (a + 2) % 3;
    double n[3];
    n[a] = Y->I[a]; n[u] = Y->I[SYM(u, a)]; n[v] = Y->I[SYM(v, a)];
    double fu = -Y->h[v], fv = Y->h[u], f[3], t[3];
    for (int k = 0; k < 3; k++) f[k] = R[k + 3 * u] * fu + R[k + 3 * v] * fv;
    v3_cross(p, f, t);
    for (int k = 0; k < 3; k++) {
        F[k * nv] = f[k];
        F[(3 + k) * nv] = R[k] * n[0] + R[k + 3] * n[1] + R[k + 6] * n[2] + t[k];
    }
}

/* X = Y seen from the parent, for a child turned by (c, s) about axis a and offset by p. The
 * rotation only mixes the u, v rows and columns (the 2x2 block through the double angle); the
 * parallel-axis terms fold into g = R h + m p / 2: Io' = R Io Rᵀ + 2 (g·p) 1 - g pᵀ - p gᵀ. */
static inline void planar_to_parent(int a, double c, double s, const double p[3], const sym_inertia *Y,
                                    sym_inertia *X)
{
    int u = (a + 1) % 3, v = (a + 2) % 3;
    double m = Y->m;
    const double *h = Y->h, *I = Y->I;
    double Rh[3];
    Rh[a] = h[a]; Rh[u] = c * h[u] - s * h[v]; Rh[v] = s * h[u] + c * h[v];
    double c2 = c * c - s * s, s2 = 2 * c * s;
    double Iau = I[SYM(a, u)], Iav = I[SYM(a, v)], Iuv = I[SYM(u, v)];
    double mid = 0.5 * (I[u] + I[v]), dif = 0.5 * (I[u] - I[v]);
    double Jr[6];
    Jr[a] = I[a];
    Jr[SYM(a, u)] = c * Iau - s * Iav;
    Jr[SYM(a, v)] = s * Iau + c * Iav;
    Jr[u] = mid + dif * c2 - Iuv * s2;
    Jr[v] = mid - dif * c2 + Iuv * s2;
    Jr[SYM(u, v)] = dif * s2 + Iuv * c2;
    double g[3] = {Rh[0] + 0.5 * m * p[0], Rh[1] + 0.5 * m * p[1], Rh[2] + 0.5 * m * p[2]};
    double gp2 = 2 * (g[0] * p[0] + g[1] * p[1] + g[2] * p[2]);
    X->m = m;
    for (int k = 0; k < 3; k++) X->h[k] = Rh[k] + m * p[k];
    for (int k = 0; k < 3; k++) X->I[k] = Jr[k] + gp2 - 2 * g[k] * p[k];
    X->I[3] = Jr[3] - g[1] * p[2] - p[1] * g[2];
    X->I[4] = Jr[4] - g[2] * p[0] - p[2] * g[0];
    X->I[5] = Jr[5] - g[0] * p[1] - p[0] * g[1];
}

/* Any joint: the root-frame force columns Yc S, moved by the body's root placement (R, p). */
static void general_force_columns(const mbs_model *m, const mbs_body *b, const sym_inertia *Y, const double R[9],
                                  const double p[3], double *F)
{
    int nv = m->nv;
    double Io[9];
    sym_to_full(Y->I, Io);
    for (int k = 0; k < b->nv; k++) {
        int c = b->idx_v + k;
        double fl[6], f[6];
        inertia_mul(Y->m, Y->h, Io, m->S + 6 * c, fl);
        se3_act_force(R, p, fl, f);
        for (int l = 0; l < 6; l++) F[l * nv + c] = f[l];
    }
}
/* Any joint: Yc seen from the parent, (R, p) being the body's placement in its parent. */
static void general_to_parent(const double R[9], const double p[3], const sym_inertia *Y, sym_inertia *X)
{
    double Io[9], h[3], Io2[9];
    sym_to_full(Y->I, Io);
    inertia_act(R, p, Y->m, Y->h, Io, h, Io2);
    X->m = Y->m;
    for (int k = 0; k < 3; k++) X->h[k] = h[k];
    for (int k = 0; k < 3; k++) X->I[k] = Io2[4 * k];
    X->I[3] = Io2[5]; X->I[4] = Io2[6]; X->I[5] = Io2[1];
}

/* Backward pass: composite inertias (a child's share goes to its parent in registers when the
 * parent is the next body, else through d->Ic) and the root-frame force columns F (F[k·nv + c]). */
static void composite_forces(const mbs_model *m, mbs_data *d, double *F)
{
    int nv = m->nv;
    sym_inertia carry = {0}, X;
    int carry_to = -1;
    for (int i = m->nbodies - 1; i >= 0; i--) {
        const mbs_body *b = &m->bodies[i];
        const double *y = d->Ic + 16 * i, *R = d->rR + 9 * i, *p = d->rp + 3 * i;
        sym_inertia Y;
        sym_load(y, &Y);
        if (carry_to == i) sym_add(&Y, &carry);
        int axis = (int)y[IC_AXIS];
        if (b->parent < 0) {
            if (b->type == MBS_JOINT_FREEFLYER) {
                /* S = 1 in the root frame: the columns are the 6x6 inertia itself */
                double Io[9], I6[36];
                sym_to_full(Y.I, Io);
                inertia_matrix(Y.m, Y.h, Io, I6);
                for (int c = 0; c < 6; c++)
                    for (int k = 0; k < 6; k++) F[k * nv + b->idx_v + c] = I6[k + 6 * c];
            } else
                general_force_columns(m, b, &Y, R, p, F);
            continue;
        }
        if (axis >= 0) {
            double c = y[IC_C], s = y[IC_S];
            switch (axis) {   /* constant axes let the compiler drop the index arithmetic */
            case 0: axis_force_column(0, &Y, R, p, F + b->idx_v, nv); planar_to_parent(0, c, s, b->pt, &Y, &X); break;
            case 1: axis_force_column(1, &Y, R, p, F + b->idx_v, nv); planar_to_parent(1, c, s, b->pt, &Y, &X); break;
            default: axis_force_column(2, &Y, R, p, F + b->idx_v, nv); planar_to_parent(2, c, s, b->pt, &Y, &X); break;
            }
            if (y[IC_SIGN] < 0)
                for (int k = 0; k < 6; k++) F[k * nv + b->idx_v] = -F[k * nv + b->idx_v];
        } else {
            if (b->type == MBS_JOINT_REVOLUTE && b->axis_id >= 0)
                axis_force_column(b->axis_id, &Y, R, p, F + b->idx_v, nv);
            else
                general_force_columns(m, b, &Y, R, p, F);
            general_to_parent(d->liR + 9 * i, d->lip + 3 * i, &Y, &X);
        }
        if (b->parent == i - 1) {
            carry = X;
            carry_to = i - 1;
        } else {
            double *yp = d->Ic + 16 * b->parent;
            sym_inertia P;
            sym_load(yp, &P);
            sym_add(&P, &X);
            sym_store(&P, yp);
        }
    }
}

/* Rows longer than this (long chains) are computed as one vectorised loop and mirrored after:
 * the stall on reading back the fresh stores is then small against the strided mirror stores
 * that the element-wise path makes (a 200-link chain: 45 µs element-wise, 23 µs so). */
enum { CRBA_LONG_ROW = 16 };

/* M column by column: zeros, then the rows of the descendants M(c, r) = J_rᵀ F_c, each value
 * stored at once into its mirror M(r, c) too (copying the column afterwards would read back its
 * fresh vector stores and stall). The first nfilled columns are already complete (F written into
 * M); their mirrors, the rows of a free-flyer root whose J is the identity, are components of F.
 * With tree_lower, only the descendants' rows are written: no zeros, no mirrors. */
static void fill_mass_matrix(const mbs_model *m, const mbs_data *d, const double *F, int nfilled, int tree_lower,
                             double *M)
{
    int nv = m->nv;
    const double *J = d->tmp_6nv;
    if (!tree_lower) memset(M + (size_t)nv * nfilled, 0, (size_t)nv * (size_t)(nv - nfilled) * sizeof(double));
    for (int r = nfilled; r < nv; r++) {
        int c1 = m->dof_end[r];
        double *Mr = M + (size_t)nv * r;
        const double *Jr = J + 6 * r;
        if (tree_lower || c1 - r > CRBA_LONG_ROW) {
            for (int c = r; c < c1; c++)
                Mr[c] = Jr[0] * F[c] + Jr[1] * F[nv + c] + Jr[2] * F[2 * nv + c]
                      + Jr[3] * F[3 * nv + c] + Jr[4] * F[4 * nv + c] + Jr[5] * F[5 * nv + c];
            if (tree_lower) continue;
            for (int k = 0; k < nfilled; k++) Mr[k] = F[k * nv + r];
            for (int c = r + 1; c < c1; c++) M[r + (size_t)nv * c] = Mr[c];
            continue;
        }
        for (int k = 0; k < nfilled; k++) Mr[k] = F[k * nv + r];
        for (int c = r; c < c1; c++) {
            double x = Jr[0] * F[c] + Jr[1] * F[nv + c] + Jr[2] * F[2 * nv + c]
                     + Jr[3] * F[3 * nv + c] + Jr[4] * F[4 * nv + c] + Jr[5] * F[5 * nv + c];
            Mr[c] = x;
            M[r + (size_t)nv * c] = x;
        }
    }
}

static void crba(const mbs_model *m, mbs_data *d, const double *q, int tree_lower, double *M)
{
    /* under a free-flyer root spanning the model, component k of F is column k of M: F is
     * written there and those six columns are complete */
    const mbs_body *b0 = &m->bodies[0];
    int direct = b0->type == MBS_JOINT_FREEFLYER && b0->nv_subtree == m->nv;
    double *F = direct ? M : d->F;
    placements(m, d, q);
    composite_forces(m, d, F);
    fill_mass_matrix(m, d, F, direct ? 6 : 0, tree_lower, M);
    if (m->any_armature)   /* the rotors' inertias on the diagonal */
        for (int k = 0; k < m->nv; k++) M[k + (size_t)m->nv * k] += m->armature[k];
}

void mbs_crba(const mbs_model *m, mbs_data *d, const double *q, double *M) { crba(m, d, q, 0, M); }

void mbsi_crba_tree_lower(const mbs_model *m, mbs_data *d, const double *q, double *M) { crba(m, d, q, 1, M); }
