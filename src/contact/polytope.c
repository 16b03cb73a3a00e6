/* polytope.c — the maximal-dissipation contact model of Pan and Hauser 2020 ("Implicit
 * integration for articulated bodies with contact via the nonconvex maximal dissipation
 * principle"; equation and remark numbers are theirs). The force at contact point x is a convex
 * combination of the vertices of a friction pyramid (eq. 5):
 *   f_x = V_x w_x,  w_x >= 0,  1ᵀ w_x <= 1,   v_x^i = s(d) (n + μ t^i),  i = 1..k,
 * t^i evenly spaced unit tangents, d the penetration depth. The scale is smooth in d (remarks 6
 * and 7): s = c ((d/d*)³ + ζ) for d > 0, c ζ otherwise. Remark 6 writes d³ with d in the units of
 * the robot; with d in metres ζ = 1e-3 would outweigh the cubic term up to 10 cm of penetration,
 * so the depth is measured in units of d* (the depth the robot stands at): with c = m g / n (the
 * share of the weight of each of n contacts), the robot at rest sinks to about d*, and ζ is the
 * fraction of that force still available when a point does not touch (remark 7's workaround, which
 * keeps ∂G/∂w of full rank). The steppers `mdp` and `nmdp` choose the weights. */
#include <math.h>
#include <stdlib.h>

#include "../base/base.h"
#include "../model/model_internal.h"
#include "../spatial/spatial.h"
#include "mbs/dynamics.h"
#include "contact_internal.h"

static const mbs_option_spec spec[] = {
    {"vertices", MBS_OPT_INT, "", 3, 64, 0, "4", NULL, offsetof(mbs_polytope_options, vertices),
     "k: vertices of each contact's friction pyramid, tangents evenly spaced from the world x axis (eq. 5)"},
    {"zeta", MBS_OPT_REAL, "", 0, 1, MBS_OPT_OPEN_LO, "1e-3", NULL, offsetof(mbs_polytope_options, zeta),
     "ζ: the pyramid's scale at zero depth, as a fraction of c (remark 7); > 0 keeps ∂G/∂w of full rank"},
    {"stand_depth", MBS_OPT_REAL, "m", 0, 1, MBS_OPT_OPEN_LO, "0.003", NULL, offsetof(mbs_polytope_options, stand_depth),
     "d*: the depth unit of s = c ((d/d*)³ + ζ) (remark 6): the robot at rest sinks to about d*"},
    {"force_scale", MBS_OPT_REAL, "N", 0, 1e12, MBS_OPT_OPEN_LO, NULL, NULL, offsetof(mbs_polytope_options, force_scale),
     "c: the pyramid's normal force at depth d* (default: the robot's weight shared by its contact points)"},
};
const mbs_option_table mbsi_polytope_option_table = {"polytope", spec, (int)(sizeof spec / sizeof *spec), NULL, 0,
                                                    sizeof(mbs_polytope_options)};

static void layout(mbs_carver *cv, mbs_polytope *p)
{
    size_t nc = (size_t)p->nc, k = (size_t)p->k, nv = (size_t)p->nv;
    p->s = mbsi_carve_doubles(cv, nc);
    p->ds = mbsi_carve_doubles(cv, nc);
    p->depth = mbsi_carve_doubles(cv, nc);
    p->point = mbsi_carve_doubles(cv, 3 * nc);
    p->centre = mbsi_carve_doubles(cv, 3 * nc);
    p->dir = mbsi_carve_doubles(cv, 3 * k * nc);
    p->B = mbsi_carve_doubles(cv, nv * k * nc);
    p->J = mbsi_carve_doubles(cv, 3 * nv);
    p->P = mbsi_carve_doubles(cv, 3 * nv);
    p->dlq = mbsi_carve_doubles(cv, 3 * nv);
    p->support = mbsi_carve_ints(cv, nv * nc);
    p->nsupport = mbsi_carve_ints(cv, nc);
    p->Ain = mbsi_carve_doubles(cv, (size_t)p->rows * (size_t)p->nw);
    p->bin = mbsi_carve_doubles(cv, (size_t)p->rows);
    p->Ain_d = mbsi_carve_doubles(cv, (size_t)(p->rows + p->nc) * (size_t)p->nw);
    p->bin_d = mbsi_carve_doubles(cv, (size_t)(p->rows + p->nc));
}

int mbsi_polytope_init(mbs_polytope *p, const mbs_system *s, const mbs_polytope_options *o, mbs_error *err)
{
    memset(p, 0, sizeof *p);
    p->nc = s->ncontacts;   /* may be 0: the steppers then integrate the free dynamics */
    p->k = o->vertices;
    p->nv = s->nv;
    p->nw = p->nc * p->k;
    p->rows = p->nw + p->nc;
    p->zeta = o->zeta;
    p->unit = o->stand_depth;
    p->c = o->force_scale;
    if (isnan(p->c)) {
        const mbs_model *m = s->model;
        double mass = 0;
        for (int b = 0; b < m->nbodies; b++) mass += m->bodies[b].mass;
        p->c = p->nc ? mass * sqrt(v3_dot(m->gravity, m->gravity)) / p->nc : 0;
        if (p->nc && !(p->c > 0))
            return mbsi_fail(err, MBS_ERR_ARG, "polytope contacts: no weight to derive force_scale from; set it");
    }
    mbs_carver cv = {NULL, 0};
    layout(&cv, p);
    if (!mbsi_carver_alloc(&cv)) return mbsi_fail(err, MBS_ERR_NOMEM, "out of memory");
    p->block = cv.base;
    layout(&cv, p);
    for (int i = 0; i < p->nc; i++) {
        int body = mbs_frame_body(s->model, s->contacts[i].frame);
        p->nsupport[i] = body < 0 ? 0 : mbsi_body_support(s->model, body, p->support + (size_t)p->nv * i);
    }
    if (p->nw == 0) return MBS_OK;   /* no contact point: no weights */
    mbsi_polytope_constraints(p, p->Ain, p->bin);
    const size_t ld = (size_t)(p->rows + p->nc);
    for (int j = 0; j < p->nw; j++) memcpy(p->Ain_d + ld * j, p->Ain + (size_t)p->rows * j, sizeof(double) * (size_t)p->rows);
    memcpy(p->bin_d, p->bin, sizeof(double) * (size_t)p->rows);
    p->qp = mbs_qp_new(p->nw, 0, p->rows + p->nc, err);
    if (!p->qp) { mbsi_polytope_fini(p); return err ? err->code : MBS_ERR_NOMEM; }
    return MBS_OK;
}

int mbsi_polytope_qp(mbs_polytope *p, const double *H, const double *g, int warm, double *w, mbs_error *err)
{
    return p->nw == 0 ? MBS_OK : mbs_qp_solve(p->qp, p->nw, H, g, 0, NULL, NULL, p->rows, p->Ain, p->bin, warm, w, err);
}

int mbsi_polytope_qp_bounded(mbs_polytope *p, const double *H, const double *g, const double *Gd, const double *bd,
                             int warm, double *w, mbs_error *err)
{
    if (p->nw == 0) return MBS_OK;
    const int ld = p->rows + p->nc;
    for (int j = 0; j < p->nw; j++)
        for (int i = 0; i < p->nc; i++) p->Ain_d[p->rows + i + (size_t)ld * j] = Gd[i + (size_t)p->nc * j];
    memcpy(p->bin_d + p->rows, bd, sizeof(double) * (size_t)p->nc);
    return mbs_qp_solve(p->qp, p->nw, H, g, 0, NULL, NULL, ld, p->Ain_d, p->bin_d, warm, w, err);
}

void mbsi_polytope_fini(mbs_polytope *p)
{
    mbs_qp_free(p->qp);
    p->qp = NULL;
    free(p->block);
    p->block = NULL;
}

/* Two unit tangents completing n: t1 along the world x axis projected on the plane (y for a
 * normal along x), t2 = n × t1. */
static void tangents(const double n[3], double t1[3], double t2[3])
{
    double a[3] = {1, 0, 0};
    if (fabs(n[0]) > 0.9) { a[0] = 0; a[1] = 1; }
    double an = v3_dot(a, n);
    for (int k = 0; k < 3; k++) t1[k] = a[k] - an * n[k];
    double l = sqrt(v3_dot(t1, t1));
    for (int k = 0; k < 3; k++) t1[k] /= l;
    v3_cross(n, t1, t2);
}

void mbsi_polytope_eval(mbs_polytope *p, mbs_system *s, const double *q)
{
    const mbs_model *m = s->model;
    mbs_data *d = s->data;
    const int nv = p->nv, k = p->k;
    if (q) mbs_compute_joint_jacobians(m, d, q);
    memset(p->B, 0, sizeof(double) * (size_t)nv * (size_t)p->nw);
    for (int i = 0; i < p->nc; i++) {
        mbs_contact *c = &s->contacts[i];
        double *ctr = p->centre + 3 * i, *pt = p->point + 3 * i, depth = 0, n[3], hit_pt[3];
        int solid = -1;
        mbsi_contact_point_world(m, d, c, NULL, ctr, NULL, NULL);
        int hit = mbsi_contact_penetration(&s->env, c, ctr, &depth, n, hit_pt, &solid);
        if (hit) {
            memcpy(c->normal, n, sizeof n);
            c->solid = solid;
        } else {
            /* not touching: the pyramid keeps the last surface's normal and friction (its scale
             * c ζ does not depend on where the point is); a point that has touched nothing yet
             * takes the nearest solid's (mbsi_contact_material) */
            depth = 0;
        }
        const double *nn = c->normal;
        for (int r = 0; r < 3; r++) pt[r] = ctr[r] - c->radius * nn[r];
        double x = depth / p->unit;
        p->depth[i] = depth;
        /* a point switched off (mbs_system_set_contact_off) meets nothing: not even ζ's force */
        p->s[i] = c->off ? 0 : p->c * ((depth > 0 ? x * x * x : 0) + p->zeta);
        p->ds[i] = depth > 0 && !c->off ? 3 * p->c * x * x / p->unit : 0;
        double *dir = p->dir + (size_t)3 * k * i;
        mbsi_pyramid_edges(nn, mbsi_contact_material(s, c)->mu, k, dir);
        /* B's block: column a is J_xᵀ v_x^a = s Σ_j pt(S_j, p)·dir_a on the support */
        const int *sup = p->support + (size_t)nv * i;
        for (int e = 0; e < p->nsupport[i]; e++) {
            int j = sup[e];
            double Jj[3], t[3];
            const double *S = d->J + 6 * j;
            v3_cross(S + 3, pt, t);
            for (int r = 0; r < 3; r++) Jj[r] = S[r] + t[r];
            for (int a = 0; a < k; a++) p->B[j + (size_t)nv * ((size_t)k * i + a)] = p->s[i] * v3_dot(Jj, dir + 3 * a);
        }
    }
}

void mbsi_pyramid_edges(const double n[3], double mu, int k, double *dir)
{
    double t1[3], t2[3];
    tangents(n, t1, t2);
    for (int a = 0; a < k; a++) {
        double th = 2 * MBS_PI * a / k, ca = cos(th), sa = sin(th);
        for (int r = 0; r < 3; r++) dir[3 * a + r] = n[r] + mu * (ca * t1[r] + sa * t2[r]);
    }
}

void mbsi_polytope_force(const mbs_polytope *p, int i, const double *w, double f[3])
{
    const double *dir = p->dir + (size_t)3 * p->k * i, *wi = w + (size_t)p->k * i;
    f[0] = f[1] = f[2] = 0;
    for (int a = 0; a < p->k; a++)
        for (int r = 0; r < 3; r++) f[r] += p->s[i] * wi[a] * dir[3 * a + r];
}

void mbsi_polytope_force_dq(mbs_polytope *p, mbs_system *s, const double *w, int order, double *dtau_dq)
{
    const mbs_model *m = s->model;
    const mbs_data *d = s->data;
    const int nv = p->nv;
    for (int i = 0; i < p->nc; i++) {
        const int n = p->nsupport[i], *sup = p->support + (size_t)nv * i;
        const double *pt = p->point + 3 * i, *ctr = p->centre + 3 * i, *nn = s->contacts[i].normal;
        double f[3], fbar[3];
        mbsi_polytope_force(p, i, w, f);
        if (n == 0) continue;
        for (int e = 0; e < n; e++) {
            const double *S = d->J + 6 * sup[e];
            double t[3];
            v3_cross(S + 3, pt, t);
            for (int r = 0; r < 3; r++) p->J[3 * e + r] = S[r] + t[r];
            v3_cross(S + 3, ctr, t);
            for (int r = 0; r < 3; r++) p->P[3 * e + r] = S[r] + t[r];
        }
        /* ∂f/∂q_k = s'(d) F̄ ∂d/∂q_k, ∂d/∂q_k = −n · P_k (the normal held: exact on a plane); the
         * zeroth-order variant (eq. 10–11) leaves it out */
        const double *dlq = NULL;
        if (order > 0 && p->ds[i] > 0) {
            for (int r = 0; r < 3; r++) fbar[r] = f[r] / p->s[i];
            for (int e = 0; e < n; e++) {
                double g = -p->ds[i] * v3_dot(nn, p->P + 3 * e);
                for (int r = 0; r < 3; r++) p->dlq[3 * e + r] = g * fbar[r];
            }
            dlq = p->dlq;
        }
        mbsi_point_force_dq(m, d, sup, n, pt, f, p->J, p->P, dlq, 0, dtau_dq);
    }
}

void mbsi_polytope_point_jacobian(const mbs_polytope *p, const mbs_system *s, int i, double *Jp)
{
    const int nv = p->nv, n = p->nsupport[i], *sup = p->support + (size_t)nv * i;
    const double *pt = p->point + 3 * i;
    memset(Jp, 0, sizeof(double) * 3 * (size_t)nv);
    for (int e = 0; e < n; e++) {
        const double *S = s->data->J + 6 * sup[e];
        double t[3];
        v3_cross(S + 3, pt, t);
        for (int r = 0; r < 3; r++) Jp[r + 3 * (size_t)sup[e]] = S[r] + t[r];
    }
}

void mbsi_polytope_record(const mbs_polytope *p, mbs_system *s, const double *w)
{
    memset(s->fext, 0, 6 * (size_t)s->nbodies * sizeof(double));
    for (int i = 0; i < p->nc; i++) {
        mbs_contact *c = &s->contacts[i];
        double f[3];
        mbsi_polytope_force(p, i, w, f);
        memcpy(c->lambda, f, sizeof f);
        memcpy(c->p, p->point + 3 * i, 3 * sizeof(double));
        c->depth = p->depth[i];
        c->active = p->depth[i] > 0;
        /* slipping: the tangential force on the pyramid's boundary, Coulomb friction at its limit:
         * the cross-section at normal force f_n is the k-gon of vertices μ f_n t^a, whose facet
         * normals lie halfway between them at distance μ f_n cos(π/k) from the centre */
        const double *nn = c->normal;
        double fn = v3_dot(f, nn), ft[3], t1[3], t2[3], reach = 0;
        for (int r = 0; r < 3; r++) ft[r] = f[r] - fn * nn[r];
        tangents(nn, t1, t2);
        for (int a = 0; a < p->k; a++) {
            double th = (2 * a + 1) * MBS_PI / p->k;
            reach = fmax(reach, cos(th) * v3_dot(ft, t1) + sin(th) * v3_dot(ft, t2));
        }
        c->slipping = fn > 0 && reach >= (1 - 1e-9) * mbsi_contact_material(s, c)->mu * fn * cos(MBS_PI / p->k);
        mbsi_contact_add_wrench(s, mbs_frame_body(s->model, c->frame), c->p, f);
    }
}

void mbsi_polytope_constraints(const mbs_polytope *p, double *Ain, double *bin)
{
    const int nw = p->nw, rows = nw + p->nc;
    memset(Ain, 0, sizeof(double) * (size_t)rows * (size_t)nw);
    for (int j = 0; j < nw; j++) {
        Ain[j + (size_t)rows * j] = 1;                       /* w_j >= 0 */
        Ain[nw + j / p->k + (size_t)rows * j] = -1;          /* −1ᵀ w_x >= −1 */
    }
    for (int r = 0; r < rows; r++) bin[r] = r < nw ? 0 : -1;
}

void mbsi_polytope_state(mbs_polytope *p, mbsi_state *st) { mbsi_qp_state(p->qp, st); }
