/* impact.c — rigid contact at the velocity level, the impact model k(·) of Zapolsky and Drumwright
 * 2015 ("Adaptive integration for controlling speed vs. accuracy in multi-rigid body simulation";
 * equation numbers are theirs), and the conservative-advancement bounds of their eqs. 3–5.
 *
 * k is inelastic and dissipates maximally (Drumwright and Shell 2010, their ref. [12]), in two
 * convex QPs of the kinetic energy of v⁺ = v* + M⁻¹ B x (the engine's one solver, src/qp):
 *  1. the normal impulses p_n >= 0 of a frictionless inelastic impact: the least kinetic energy
 *     less the work c·p_n, whose optimality conditions are the complementarity
 *     p_n >= 0 ⊥ n·J v⁺ >= c, with c = −gap/h: a point may close its gap within the next step of
 *     eq. 1 but not pass it (Stewart and Trinkle's linearised non-penetration), and no impulse acts
 *     on a point that does not need one; a point already inside is pushed out by erp of its depth;
 *  2. friction by maximal dissipation: the least kinetic energy over tangential impulses in each
 *     touching contact's k-gon circumscribing the disc of radius μ times its normal impulse of the
 *     stage before, with the normal impulses free again (so that a tipping or rolling body stays
 *     out of the ground), repeated with the new normal impulses until they agree (staggered
 *     projections, Kaufman et al. 2008). A point still closing its gap within the step (it enters
 *     by prediction) takes only a normal impulse: rubbing before it touches made a compass gait's
 *     landings slide where the plastic impact sticks (tests/test_compass_gait.c).
 * Minimising the energy over normal and friction impulses together would rather push a sliding
 * body off the ground to buy more friction; the staggered stages keep Coulomb's law: a sliding
 * block decelerates at μ g, a resting point keeps zero normal velocity. */
#include <math.h>
#include <stdio.h>
#include <stdlib.h>

#include "../base/base.h"
#include "../model/model_internal.h"
#include "../spatial/spatial.h"
#include "mbs/dynamics.h"
#include "contact_internal.h"

static const mbs_option_spec spec[] = {
    {"sides", MBS_OPT_INT, "", 3, 64, 0, "8", NULL, offsetof(mbs_impact_options, sides),
     "k: sides of each contact's friction polygon, which circumscribes Coulomb's disc (μ exactly along its facet "
     "normals, evenly spaced from the world x axis; at most μ / cos(π/k) between them)"},
    {"margin", MBS_OPT_REAL, "m", 0, 1, 0, "1e-3", NULL, offsetof(mbs_impact_options, margin),
     "points nearer the environment than this (or that would reach it within the step) enter the impact problem; "
     "farther ones bound the conservative advancement"},
    {"predict", MBS_OPT_BOOL, "", 0, 1, 0, "1", NULL, offsetof(mbs_impact_options, predict),
     "1: a point farther than the margin that would pass the surface within the step at v* enters too (no tunnelling "
     "at a fixed step); 0: only near points, the fixed step of Zapolsky and Drumwright's ref. [4], which lets them sink"},
    {"stagger", MBS_OPT_INT, "", 1, 100, 0, "20", NULL, offsetof(mbs_impact_options, stagger),
     "friction solves at most, each bounded by the last one's normal impulses (staggered projections), until they agree"},
    {"erp", MBS_OPT_REAL, "", 0, 1, 0, "0.2", NULL, offsetof(mbs_impact_options, erp),
     "fraction of a penetration the non-penetration constraint removes per step (0: none)"},
};
const mbs_option_table mbsi_impact_option_table = {"impact", spec, (int)(sizeof spec / sizeof *spec), NULL, 0,
                                                  sizeof(mbs_impact_options)};

static void layout(mbs_carver *cv, mbs_impact *im)
{
    size_t nc = (size_t)im->nc, k = (size_t)im->k, nv = (size_t)im->nv, nw = (size_t)im->nw, rows = nc * (1 + k);
    im->cvec = mbsi_carve_doubles(cv, nw);
    im->pbar = mbsi_carve_doubles(cv, nc);
    im->near = mbsi_carve_ints(cv, nc);
    im->fric = mbsi_carve_ints(cv, nc);
    im->gap = mbsi_carve_doubles(cv, nc);
    im->normal = mbsi_carve_doubles(cv, 3 * nc);
    im->point = mbsi_carve_doubles(cv, 3 * nc);
    im->dir = mbsi_carve_doubles(cv, 6 * nc);
    im->J = mbsi_carve_doubles(cv, 6 * nv);
    im->Jt = mbsi_carve_doubles(cv, 3 * nc * nv);
    im->M = mbsi_carve_doubles(cv, nv * nv);
    im->B = mbsi_carve_doubles(cv, nv * nw);
    im->MB = mbsi_carve_doubles(cv, nv * nw);
    im->Bc = mbsi_carve_doubles(cv, nv * nw);
    im->MBc = mbsi_carve_doubles(cv, nv * nw);
    im->H = mbsi_carve_doubles(cv, nw * nw);
    im->g = mbsi_carve_doubles(cv, nw);
    im->Ain = mbsi_carve_doubles(cv, rows * nw);
    im->bin = mbsi_carve_doubles(cv, rows);
    im->beta = mbsi_carve_doubles(cv, nw);
    im->vel = mbsi_carve_doubles(cv, 6 * nc);
}

int mbsi_impact_init(mbs_impact *im, const mbs_system *s, const mbs_impact_options *o, mbs_error *err)
{
    memset(im, 0, sizeof *im);
    im->nc = s->ncontacts;
    im->k = o->sides;
    im->nv = s->nv;
    im->nw = 3 * im->nc;
    im->margin = o->margin;
    im->erp = o->erp;
    im->predict = o->predict;
    im->stagger = o->stagger;
    mbs_carver cv = {NULL, 0};
    layout(&cv, im);
    if (!mbsi_carver_alloc(&cv)) return mbsi_fail(err, MBS_ERR_NOMEM, "out of memory");
    im->block = cv.base;
    layout(&cv, im);
    if (im->nw == 0) return MBS_OK;
    im->qp = mbs_qp_new(im->nw, 0, im->nc * (1 + im->k), err);
    if (!im->qp) { mbsi_impact_fini(im); return err ? err->code : MBS_ERR_NOMEM; }
    return MBS_OK;
}

void mbsi_impact_fini(mbs_impact *im)
{
    mbs_qp_free(im->qp);
    im->qp = NULL;
    free(im->block);
    im->block = NULL;
}

/* The linear rows (3 x nv, leading dimension 3) of the world-aligned Jacobian of the body point
 * under world point pt on contact c's frame, from the joint Jacobians in s->data. */
static void point_jacobian(mbs_impact *im, const mbs_system *s, const mbs_contact *c, const double pt[3], double *Jp)
{
    double R[9], pf[3], d[3], off[3];
    mbs_frame_placement(s->model, s->data, c->frame, R, pf);
    for (int k = 0; k < 3; k++) d[k] = pt[k] - pf[k];
    m3t_mulv(R, d, off);
    mbs_frame_jacobian(s->model, s->data, c->frame, off, MBS_LOCAL_WORLD_ALIGNED, im->J, 6);
    for (int j = 0; j < im->nv; j++)
        for (int r = 0; r < 3; r++) Jp[3 * j + r] = im->J[6 * j + r];
}

/* One QP of the impulses x (n of them, directions B: nv x n, M⁻¹ B in MB) about the velocity v:
 *   min ½ xᵀ (Bᵀ M⁻¹ B) x + xᵀ (Bᵀ v − c)  s.t.  x_a >= 0 for a < nb and the rows of Ain, bin
 * past the first nb, i.e. the least kinetic energy of v + M⁻¹ B x less the work c·x; into im->beta. */
static int impulse_qp(mbs_impact *im, const double *B, const double *MB, int n, int nb, int rows, const double *v,
                      const double *c, mbs_error *err)
{
    const int nv = im->nv;
    double tr = 0;
    for (int a = 0; a < n; a++) {
        for (int b = 0; b <= a; b++) {
            double x = 0;
            for (int j = 0; j < nv; j++) x += B[j + (size_t)nv * a] * MB[j + (size_t)nv * b];
            im->H[a + (size_t)n * b] = im->H[b + (size_t)n * a] = x;
        }
        tr += im->H[a + (size_t)n * a];
        double x = 0;
        for (int j = 0; j < nv; j++) x += B[j + (size_t)nv * a] * v[j];
        im->g[a] = x - c[a];
    }
    /* Bᵀ M⁻¹ B is only semi-definite when the contacts have more directions than the bodies have
     * freedoms (a box on four corners): a regularisation far below its scale makes it definite
     * for the solver and picks the least-norm impulses among equally dissipative ones */
    double reg = 1e-10 * (tr > 0 ? tr / n : 1);
    for (int a = 0; a < n; a++) im->H[a + (size_t)n * a] += reg;
    for (int a = 0; a < n; a++)
        for (int r = 0; r < nb; r++) im->Ain[r + (size_t)rows * a] = r == a;
    for (int r = 0; r < nb; r++) im->bin[r] = 0;
    return mbs_qp_solve(im->qp, n, im->H, im->g, 0, NULL, NULL, rows, im->Ain, im->bin, 1, im->beta, err);
}

int mbsi_impact_apply(mbs_impact *im, mbs_system *s, const double *q, double *v, double h, double horizon,
                      mbs_error *err)
{
    const mbs_model *m = s->model;
    mbs_data *d = s->data;
    const int nv = im->nv, k = im->k;
    mbs_compute_joint_jacobians(m, d, q);
    /* which points enter: near the surface, or (predict) passing it within the step at v* */
    im->nnear = 0;
    for (int i = 0; i < im->nc; i++) {
        mbs_contact *c = &s->contacts[i];
        double ctr[3], *n = im->normal + 3 * i, *pt = im->point + 3 * i, *Jp = im->Jt + (size_t)3 * nv * i;
        int solid = -1;
        if (!mbsi_contact_gap(s, c, &im->gap[i], n, pt, ctr, &solid)) {
            im->gap[i] = INFINITY;
            continue;
        }
        c->solid = solid;
        point_jacobian(im, s, c, pt, Jp);
        double vn = 0;
        for (int j = 0; j < nv; j++) vn += v3_dot(n, Jp + 3 * j) * v[j];
        if (im->gap[i] <= im->margin || (im->predict && im->gap[i] + fmax(h, horizon) * vn < 0)) im->near[im->nnear++] = i;
    }
    const int nn = im->nnear, nx = 3 * nn;
    int nx2 = nn;
    im->staggers = 0;
    if (nn > 0) {
        /* directions: the normals, then two tangents of each contact; c: the normal velocity each
         * contact must reach, −gap/H (it may close its gap within the horizon H, the longest step
         * of eq. 1 that can follow, not pass it) or, inside, erp · depth / h out */
        for (int r = 0; r < nn; r++) {
            int i = im->near[r];
            const double *n = im->normal + 3 * i, *Jp = im->Jt + (size_t)3 * nv * i;
            double *t = im->dir + 6 * r, e4[12];
            mbsi_pyramid_edges(n, 1, 4, e4);   /* n + t1, n + t2, n − t1, n − t2 */
            for (int e = 0; e < 3; e++) { t[e] = e4[e] - n[e]; t[3 + e] = e4[3 + e] - n[e]; }
            for (int j = 0; j < nv; j++) {
                im->B[j + (size_t)nv * r] = v3_dot(Jp + 3 * j, n);
                im->B[j + (size_t)nv * (nn + 2 * r)] = v3_dot(Jp + 3 * j, t);
                im->B[j + (size_t)nv * (nn + 2 * r + 1)] = v3_dot(Jp + 3 * j, t + 3);
            }
            double gap = im->gap[i];
            im->cvec[r] = gap >= 0 ? -gap / fmax(h, horizon) : -im->erp * gap / h;
        }
        memset(im->cvec + nn, 0, sizeof(double) * 2 * (size_t)nn);
        mbs_crba(m, d, q, im->M);
        if (mbs_ltdl(m, d, im->M) != MBS_OK)
            return mbsi_fail(err, MBS_ERR_MODEL, "impact model: the mass matrix is not positive definite at t = %g s", s->t);
        memcpy(im->MB, im->B, sizeof(double) * (size_t)nv * (size_t)nx);
        mbs_ltdl_solve(m, d, im->MB, nx, nv);
        /* stage 1, the normal impulses of an inelastic impact without friction: the QP's optimality
         * conditions are the complementarity p_n >= 0 ⊥ n·J v⁺ − c >= 0 */
        int rc = impulse_qp(im, im->B, im->MB, nn, nn, nn, v, im->cvec, err);
        /* the scale of the impulses: the largest that would stop a contact's approach */
        double pscale = 0;
        for (int r = 0; r < nn; r++) pscale = fmax(pscale, fabs(im->g[r]) / im->H[r + (size_t)nn * r]);
        memcpy(im->pbar, im->beta, sizeof(double) * (size_t)nn);
        for (int it = 0; rc == MBS_OK && it < im->stagger; it++) {
            for (int r = 0; r < nn; r++) pscale = fmax(pscale, im->pbar[r]);
            /* stage 2, friction by maximal dissipation within μ times the normal impulses of the
             * last stage (the normal ones free again, the friction bound held): the tangential
             * impulse f in the k-gon circumscribing Coulomb's disc, (cos θ_a t1 + sin θ_a t2)·f <=
             * μ p̄. Only the contacts the last stage loads can rub: their tangent columns follow
             * the normals (a bound μ · 0, or round-off, 1e-19 beside 1e-4, would leave the solver a
             * degenerate point to find, on which it cycles). */
            nx2 = nn;
            memcpy(im->Bc, im->B, sizeof(double) * (size_t)nv * (size_t)nn);
            memcpy(im->MBc, im->MB, sizeof(double) * (size_t)nv * (size_t)nn);
            for (int r = 0; r < nn; r++) {
                im->fric[r] = -1;
                /* a point still closing its gap (predicted to land within the step) takes the normal
                 * impulse that stops it at the surface but does not rub: it is not touching yet */
                if (!(im->pbar[r] > 1e-9 * pscale) || mbsi_contact_material(s, &s->contacts[im->near[r]])->mu <= 0 ||
                    im->gap[im->near[r]] > 1e-3 * im->margin)
                    continue;
                im->fric[r] = nx2;
                memcpy(im->Bc + (size_t)nv * nx2, im->B + (size_t)nv * (nn + 2 * r), 2 * sizeof(double) * (size_t)nv);
                memcpy(im->MBc + (size_t)nv * nx2, im->MB + (size_t)nv * (nn + 2 * r), 2 * sizeof(double) * (size_t)nv);
                nx2 += 2;
            }
            int rows = nn + k * ((nx2 - nn) / 2), row = nn;
            memset(im->Ain, 0, sizeof(double) * (size_t)rows * (size_t)nx2);
            for (int r = 0; r < nn; r++) {
                if (im->fric[r] < 0) continue;
                double bound = mbsi_contact_material(s, &s->contacts[im->near[r]])->mu * im->pbar[r];
                for (int a = 0; a < k; a++, row++) {
                    double th = 2 * MBS_PI * a / k;
                    im->Ain[row + (size_t)rows * im->fric[r]] = -cos(th);
                    im->Ain[row + (size_t)rows * (im->fric[r] + 1)] = -sin(th);
                    im->bin[row] = -bound;
                }
            }
            rc = impulse_qp(im, im->Bc, im->MBc, nx2, nn, rows, v, im->cvec, err);
            /* staggered projections (Kaufman et al. 2008): again with these normal impulses as the
             * friction's bound, until they stop changing — the coupled Coulomb solution (a foot
             * that hands its load to another while it rubs keeps no friction without the load) */
            double change = 0;
            for (int r = 0; r < nn; r++) {
                change = fmax(change, fabs(im->beta[r] - im->pbar[r]));
                im->pbar[r] = im->beta[r];
            }
            im->staggers = it + 1;
            if (change <= 1e-9 * pscale) break;
        }
        if (rc != MBS_OK) {
            char why[MBS_ERROR_MSG_LEN];
            snprintf(why, sizeof why, "%s", err ? err->msg : "");
            return mbsi_fail(err, rc, "impact model: the impulse QP of %d contact points failed at t = %g s: %s", nn, s->t, why);
        }
        for (int a = 0; a < nx2; a++)
            for (int j = 0; j < nv; j++) v[j] += im->MBc[j + (size_t)nv * a] * im->beta[a];
    }
    /* the contacts' state: impulses as mean forces over the step */
    memset(s->fext, 0, 6 * (size_t)s->nbodies * sizeof(double));
    for (int i = 0; i < im->nc; i++) {
        mbs_contact *c = &s->contacts[i];
        const double *Jp = im->Jt + (size_t)3 * nv * i;
        int r = 0;
        while (r < nn && im->near[r] != i) r++;
        double p[3] = {0, 0, 0};
        if (r < nn)
            for (int e = 0; e < 3; e++) {
                p[e] = im->beta[r] * im->normal[3 * i + e];
                for (int a = 0; im->fric[r] >= 0 && a < 2; a++) p[e] += im->beta[im->fric[r] + a] * im->dir[6 * r + 3 * a + e];
            }
        for (int e = 0; e < 3; e++) c->lambda[e] = p[e] / h;
        c->depth = isfinite(im->gap[i]) && im->gap[i] < 0 ? -im->gap[i] : 0;
        if (!isfinite(im->gap[i])) { c->active = 0; c->slipping = 0; continue; }
        memcpy(c->normal, im->normal + 3 * i, 3 * sizeof(double));
        memcpy(c->p, im->point + 3 * i, 3 * sizeof(double));
        double vel[3] = {0, 0, 0};
        for (int j = 0; j < nv; j++)
            for (int e = 0; e < 3; e++) vel[e] += Jp[3 * j + e] * v[j];
        memcpy(c->dp, vel, sizeof vel);
        double pn = r < nn ? im->beta[r] : 0, vn = v3_dot(vel, c->normal), vt[3];
        for (int e = 0; e < 3; e++) vt[e] = vel[e] - vn * c->normal[e];
        /* touching: in the band of the margin (resting, rolling, just lifting or just arriving) or
         * pushed; a point does not flicker in and out while an impact spreads over a few steps */
        c->active = pn > 0 || im->gap[i] <= im->margin;
        /* slipping: the point still slides after the impulse (friction at its limit) */
        c->slipping = c->active && sqrt(v3_dot(vt, vt)) > 1e-6;
        if (c->active) mbsi_contact_add_wrench(s, mbs_frame_body(m, c->frame), c->p, c->lambda);
    }
    return MBS_OK;
}

/* g(ω, e_ω) of eq. 5: each component moved by its error away from zero. */
static void worst_rate(const double w[3], const double e[3], double out[3])
{
    for (int k = 0; k < 3; k++) out[k] = fabs(w[k] + e[k]) > fabs(w[k] - e[k]) ? w[k] + e[k] : w[k] - e[k];
}

double mbsi_impact_advance_time(mbs_impact *im, mbs_system *s, const double *q, const double *v, const double *ev)
{
    const mbs_model *m = s->model;
    mbs_data *d = s->data;
    double t = INFINITY;
    if (im->nc == 0 || mbsi_environment_nsolids(&s->env) == 0) return t;
    /* the centres' velocity errors first (eq. 4 needs both; the kinematics of ev, then of v) */
    if (ev) {
        mbs_forward_kinematics(m, d, q, ev, NULL);
        for (int i = 0; i < im->nc; i++)
            mbs_frame_velocity(m, d, s->contacts[i].frame, s->contacts[i].offset, MBS_LOCAL_WORLD_ALIGNED, im->vel + 6 * i);
    }
    mbs_forward_kinematics(m, d, q, v, NULL);
    for (int i = 0; i < im->nc; i++) {
        const mbs_contact *c = &s->contacts[i];
        double gap, n[3], pt[3], ctr[3], vel[6], nw[3], R[9], o[3];
        if (!mbsi_contact_gap(s, c, &gap, n, pt, ctr, NULL) || gap <= im->margin) continue;
        /* eq. 3 about the origin o of the geometry's body, which moves in a straight line over the
         * sub-step (see rigid.c), every point of the geometry within |ctr − o| + radius of it */
        mbs_frame_velocity(m, d, c->frame, c->offset, MBS_LOCAL_WORLD_ALIGNED, vel);
        int body = mbs_frame_body(m, c->frame);
        if (body >= 0) mbs_body_placement(m, d, body, R, o);
        else memcpy(o, ctr, sizeof o);
        double w[3] = {vel[3], vel[4], vel[5]}, r[3] = {ctr[0] - o[0], ctr[1] - o[1], ctr[2] - o[2]}, wr[3], vo[3];
        v3_cross(w, r, wr);
        for (int e = 0; e < 3; e++) vo[e] = vel[e] - wr[e];
        /* a sphere's gap moves with its centre alone; a rim's nearest point turns with it */
        int rim = c->axis[0] != 0 || c->axis[1] != 0 || c->axis[2] != 0;
        double closing = -v3_dot(n, vo), reach = sqrt(v3_dot(r, r)) + (rim ? c->radius : 0);
        if (ev) {
            const double *e = im->vel + 6 * i;
            double er[3], eo[3];
            v3_cross(e + 3, r, er);
            for (int k = 0; k < 3; k++) eo[k] = e[k] - er[k];
            closing += fabs(n[0]) * fabs(eo[0]) + fabs(n[1]) * fabs(eo[1]) + fabs(n[2]) * fabs(eo[2]);   /* eq. 4 */
            double wg[3];
            worst_rate(w, e + 3, wg);                                                                /* eq. 5 */
            memcpy(w, wg, sizeof w);
        }
        v3_cross(n, w, nw);
        closing += sqrt(v3_dot(nw, nw)) * reach;                                                     /* eq. 3 */
        if (closing > 0 && gap / closing < t) t = gap / closing;
    }
    return t;
}

void mbsi_impact_state(mbs_impact *im, mbsi_state *st)
{
    mbsi_state_ints(st, "impact.staggers", &im->staggers, 1);
    mbsi_qp_state(im->qp, st);
}
