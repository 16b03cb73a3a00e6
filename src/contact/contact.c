/* contact.c — the anchor-point spring-damper contact model (Hammoud et al. 2022, eq. 2) with
 * unilateral release, Coulomb cone and anchor slip (eq. 28). */
#include "../model/model_internal.h"
#include "mbs/dynamics.h"
#include "mbs/liegroup.h"
#include "mbs/contact.h"
#include "../spatial/spatial.h"
#include "contact_internal.h"

void mbs_cone_project(const double lambda[3], const double n[3], double mu, double out[3])
{
    double ln = v3_dot(lambda, n), t[3];
    for (int k = 0; k < 3; k++) t[k] = lambda[k] - ln * n[k];
    double lt = sqrt(v3_dot(t, t));
    if (lt <= mu * ln) { memcpy(out, lambda, 3 * sizeof(double)); return; }   /* inside */
    if (mu * lt <= -ln) { out[0] = out[1] = out[2] = 0; return; }            /* inside the polar cone */
    double a = (mu * lt + ln) / (1 + mu * mu);                                /* new normal part */
    for (int k = 0; k < 3; k++) out[k] = a * n[k] + (lt > 0 ? mu * a * t[k] / lt : 0.0);
}

const mbs_material *mbsi_contact_material(const mbs_system *s, const mbs_contact *c)
{
    const mbs_material *mt = mbsi_solid_material(&s->env, c->solid);
    if (mt) return mt;
    /* touched nothing yet: the nearest solid's (finalize refused a scene of contacts without one) */
    double ctr[3], gap, n[3];
    int solid = -1;
    mbsi_contact_point_world(s->model, s->data, c, NULL, ctr, NULL, NULL);
    mbsi_contact_nearest(&s->env, c, ctr, c->radius, &gap, n, &solid);
    mt = mbsi_solid_material(&s->env, solid);
    static const mbs_material none = {0, 0, 0, 0, 0};
    return mt ? mt : &none;
}

void mbsi_contact_spring_force(const mbs_contact *c, const mbs_material *mt, double lambda[3])
{
    double dp[3], dv[3];
    for (int k = 0; k < 3; k++) { dp[k] = c->p[k] - c->p0[k]; dv[k] = c->dp[k] - c->dp0[k]; }
    double pn = v3_dot(dp, c->normal), vn = v3_dot(dv, c->normal);
    for (int k = 0; k < 3; k++) {
        double pt = dp[k] - pn * c->normal[k], vt = dv[k] - vn * c->normal[k];
        lambda[k] = -(mt->k_normal * pn + mt->b_normal * vn) * c->normal[k] - mt->k_tangent * pt - mt->b_tangent * vt;
    }
}

void mbsi_contact_point_world(const mbs_model *m, const mbs_data *d, const mbs_contact *c, const double n[3],
                             double p[3], double R[9], double pf[3])
{
    double R_[9], pf_[3];
    if (!R) R = R_;
    if (!pf) pf = pf_;
    mbs_frame_placement(m, d, c->frame, R, pf);
    m3_mulv(R, c->offset, p);
    for (int k = 0; k < 3; k++) p[k] += pf[k];
    if (n)
        for (int k = 0; k < 3; k++) p[k] -= c->radius * n[k];
}

/* The point of c's geometry nearest a solid of outward normal n, its centre ctr and frame
 * rotation R given: the centre less the radius along n (a point, a sphere); for a rim, its point
 * along n's part in the rim's plane, away from the solid (a rim lying flat touches along its whole
 * circle: its centre). Returns 1 for a rim. */
static int touch_point(const mbs_contact *c, const double R[9], const double ctr[3], const double n[3], double pt[3])
{
    double a[3];
    m3_mulv(R, c->axis, a);
    if (v3_dot(a, a) == 0) {
        for (int k = 0; k < 3; k++) pt[k] = ctr[k] - c->radius * n[k];
        return 0;
    }
    double an = v3_dot(a, n), u[3];
    for (int k = 0; k < 3; k++) u[k] = n[k] - an * a[k];
    double l = sqrt(v3_dot(u, u));
    for (int k = 0; k < 3; k++) pt[k] = l > 1e-12 ? ctr[k] - c->radius * u[k] / l : ctr[k];
    return 1;
}

int mbsi_contact_gap(const mbs_system *s, const mbs_contact *c, double *gap, double n[3], double pt[3], double ctr[3],
                     int *solid)
{
    double R[9], pf[3];
    mbsi_contact_point_world(s->model, s->data, c, NULL, ctr, R, pf);
    if (!mbsi_contact_nearest(&s->env, c, ctr, c->radius, gap, n, solid)) return 0;
    /* a rim's gap is its touching point's */
    return !touch_point(c, R, ctr, n, pt) || mbsi_contact_nearest(&s->env, c, pt, 0, gap, n, solid);
}

void mbsi_contact_touch_point(const mbs_system *s, const mbs_contact *c, const double n[3], double pt[3], double R[9],
                              double pf[3])
{
    double ctr[3];
    mbsi_contact_point_world(s->model, s->data, c, NULL, ctr, R, pf);
    touch_point(c, R, ctr, n, pt);
}

int mbsi_contact_penetrates(const mbs_system *s, const mbs_contact *c)
{
    double ctr[3], depth, n[3], pt[3];
    mbsi_contact_point_world(s->model, s->data, c, NULL, ctr, NULL, NULL);
    return mbsi_contact_penetration(&s->env, c, ctr, &depth, n, pt, NULL);
}

void mbsi_contact_activate(mbs_contact *c) { c->active = 1; }

void mbsi_contact_release(mbs_contact *c) { c->active = 0; }

void mbsi_contact_record_step(mbs_contact *c, const double lambda[3], int slipping)
{
    c->slipping = slipping;
    if (!slipping) memset(c->dp0, 0, sizeof c->dp0);
    memcpy(c->lambda, lambda, sizeof c->lambda);
}

/* World position and velocity of the contact point and the environment below it, and where
 * the body point recorded at the last update has moved to (roll); with record, the body
 * point under the contact now is recorded for the next update. */
static int locate(const mbs_system *s, mbs_contact *c, double *depth, double n[3], int *solid,
                  double roll[3], int record)
{
    double R[9], pf[3], vel[6], ctr[3], pt[3];
    mbsi_contact_point_world(s->model, s->data, c, NULL, ctr, R, pf);
    int hit = mbsi_contact_penetration(&s->env, c, ctr, depth, n, pt, solid);
    /* the touching point of a sphere is its deepest point; velocity of that body point */
    double off[3];
    if (hit) {
        double d[3] = {pt[0] - pf[0], pt[1] - pf[1], pt[2] - pf[2]};
        m3t_mulv(R, d, off);
        memcpy(c->p, pt, sizeof pt);
    } else {
        memcpy(off, c->offset, sizeof off);
        memcpy(c->p, ctr, sizeof ctr);
    }
    mbs_frame_velocity(s->model, s->data, c->frame, off, MBS_LOCAL_WORLD_ALIGNED, vel);
    memcpy(c->dp, vel, 3 * sizeof(double));
    /* where the body point that was under the contact at the last update is now */
    double t[3];
    m3_mulv(R, c->local, t);
    for (int k = 0; k < 3; k++) roll[k] = pf[k] + t[k];
    if (record) memcpy(c->local, off, sizeof off);
    return hit;
}

void mbsi_contact_add_wrench(mbs_system *s, int body, const double p[3], const double f[3])
{
    if (body < 0) return;
    double R[9], o[3], fb[3], d[3], r[3], tq[3];
    mbs_body_placement(s->model, s->data, body, R, o);
    m3t_mulv(R, f, fb);
    for (int k = 0; k < 3; k++) d[k] = p[k] - o[k];
    m3t_mulv(R, d, r);
    v3_cross(r, fb, tq);
    double *w = s->fext + 6 * body;
    for (int k = 0; k < 3; k++) { w[k] += fb[k]; w[3 + k] += tq[k]; }
}

void mbsi_contact_follow_roll(mbs_contact *c, const double pm[3], const double n[3])
{
    double d[3];
    for (int k = 0; k < 3; k++) d[k] = c->p[k] - pm[k];
    double dn = v3_dot(d, n);
    for (int k = 0; k < 3; k++) c->p0[k] += d[k] - dn * n[k];
}

/* The anchor put back on the surface the point penetrates now, along its normal n: its tangential
 * place kept, its normal part that of the surface point above the deepest point (p + depth n). On
 * one plane, where the anchor was laid, this changes nothing. Where the nearest surface turns under
 * a contact — a foot rolling over a step's nosing from the tread onto the riser, a point crossing
 * into a heightfield's next triangle — an anchor left on the old surface would make the spring's
 * normal part measure from a plane that is no longer there: a foot rolled over a nosing pulled
 * (zero force, a released contact) while it sank 2 cm into the riser, and the run diverged. */
static void anchor_on_surface(mbs_contact *c, const double n[3], double depth)
{
    double e = 0;
    for (int k = 0; k < 3; k++) e += (c->p[k] + depth * n[k] - c->p0[k]) * n[k];
    for (int k = 0; k < 3; k++) c->p0[k] += e * n[k];
}

void mbs_contact_forces(mbs_system *s, const double *q, const double *v, int update)
{
    mbs_forward_kinematics(s->model, s->data, q, v, NULL);
    mbsi_contact_forces_kinematics(s, update);
}

void mbsi_contact_forces_kinematics(mbs_system *s, int update)
{
    memset(s->fext, 0, 6 * (size_t)s->nbodies * sizeof(double));
    for (int i = 0; i < s->ncontacts; i++) {
        mbs_contact *c = &s->contacts[i];
        double depth = 0, n[3] = {0, 0, 1};
        int solid = -1;
        double pm[3];
        int was_active = c->active;
        int hit = locate(s, c, &depth, n, &solid, pm, update);
        memset(c->lambda, 0, sizeof c->lambda);
        c->slipping = 0;
        if (update) {
            if (!hit) c->active = 0;
            else if (!was_active) {
                /* first penetration: anchor on the surface right above the point, at rest */
                c->active = 1;
                for (int k = 0; k < 3; k++) { c->p0[k] = c->p[k] + depth * n[k]; c->dp0[k] = 0; }
            } else {
                if (c->radius > 0) mbsi_contact_follow_roll(c, pm, n);
                anchor_on_surface(c, n, depth);
            }
        }
        /* Between updates (the stages of a multi-stage step) the same holds without moving
         * the stored anchor: the spring is evaluated about the anchor shifted by that move. */
        double p0_kept[3];
        memcpy(p0_kept, c->p0, sizeof p0_kept);
        if (!update && c->active && hit) {
            if (c->radius > 0) mbsi_contact_follow_roll(c, pm, n);
            anchor_on_surface(c, n, depth);
        }
        if (!c->active) continue;
        if (hit) {
            memcpy(c->normal, n, sizeof n);
            c->solid = solid;
        }
        const mbs_material *mt = mbsi_contact_material(s, c);
        c->depth = hit ? depth : 0;
        double lam[3];
        mbsi_contact_spring_force(c, mt, lam);
        if (!update) memcpy(c->p0, p0_kept, sizeof p0_kept);
        double ln = v3_dot(lam, c->normal);
        if (ln <= 0 || !hit) {
            /* a unilateral contact never pulls */
            if (update) c->active = 0;
            continue;
        }
        double t[3];
        for (int k = 0; k < 3; k++) t[k] = lam[k] - ln * c->normal[k];
        double lt = sqrt(v3_dot(t, t)), mu = mt->mu;
        if (lt > mu * ln) {
            /* slip: keep the normal force the spring gives and scale the tangential part onto
             * the cone boundary; with update, move the anchor so that the spring itself gives
             * that force from now on (eq. 28), at the point's tangential velocity */
            double sc = mu * ln / lt;
            for (int k = 0; k < 3; k++) lam[k] = ln * c->normal[k] + sc * t[k];
            c->slipping = 1;
            if (update && mt->k_tangent > 0) {
                double dvn = v3_dot(c->dp, c->normal), dpn = v3_dot(c->p, c->normal), p0n = v3_dot(c->p0, c->normal);
                for (int k = 0; k < 3; k++) {
                    double pt_k = c->p[k] - dpn * c->normal[k];
                    c->p0[k] = pt_k + sc * t[k] / mt->k_tangent + p0n * c->normal[k];
                    c->dp0[k] = c->dp[k] - dvn * c->normal[k];
                }
            }
        } else if (update && (c->dp0[0] != 0 || c->dp0[1] != 0 || c->dp0[2] != 0)) {
            /* "as long as contacts are sticking ṗ0 = 0" (§2.1): an anchor still moving from an
             * earlier slip stops once the force with the anchor at rest is inside the cone */
            double dp0[3], l0[3];
            memcpy(dp0, c->dp0, sizeof dp0);
            memset(c->dp0, 0, sizeof c->dp0);
            mbsi_contact_spring_force(c, mt, l0);
            double n0 = v3_dot(l0, c->normal), t2 = 0;
            for (int k = 0; k < 3; k++) { double tk = l0[k] - n0 * c->normal[k]; t2 += tk * tk; }
            if (n0 > 0 && sqrt(t2) <= mu * n0) memcpy(lam, l0, sizeof l0);
            else memcpy(c->dp0, dp0, sizeof dp0);
        }
        memcpy(c->lambda, lam, sizeof lam);
        mbsi_contact_add_wrench(s, mbs_frame_body(s->model, c->frame), c->p, lam);
    }
}

void mbs_system_dynamics(mbs_system *s, const double *q, const double *v, int update, double *ddq)
{
    mbs_contact_forces(s, q, v, update);
    mbs_aba_fext(s->model, s->data, q, v, s->tau, s->fext, ddq);
}
