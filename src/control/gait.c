/* gait.c — what the gait controllers (squat.c, jump.c, trot.c, crawl.c) share: the legs of the
 * contact points, and each period their feet turned into joint references by the leg IK (the
 * analytic one of leg_ik.c for a Solo-type leg, the numeric one of limb_ik.c for any other
 * limb), with the reference velocity and acceleration by central differences, fed to the PD
 * law. With the stable PD the reference is the one at the end of the period. Each gait's
 * file says where the feet go, as positions in the base frame (the base taken level and at its
 * reference pose, so a foot fixed on the ground moves in the base frame opposite to the base's
 * intended motion). Every profile is continuous in position at phase boundaries, so that the
 * PD never sees a step in its reference. */
#include <math.h>
#include <stdlib.h>

#include "control_internal.h"

int mbsi_gait_init(mbs_controller *c, const mbs_pd_options *pd, mbs_gait_feet feet, mbs_error *err)
{
    const mbs_model *m = c->m;
    if (!(mbs_model_njoints(m) > 0 && mbs_joint_type_of(m, 0) == MBS_JOINT_FREEFLYER))
        return mbsi_fail(err, MBS_ERR_ARG, "controller '%s' needs a floating base", c->type->info.name);
    if (c->sys->nfeet < 1)
        return mbsi_fail(err, MBS_ERR_ARG, "controller '%s' needs the feet as contact points", c->type->info.name);
    mbs_gait *g = calloc(1, sizeof *g);
    if (!g) return mbsi_fail(err, MBS_ERR_NOMEM, "out of memory");
    c->impl = g;
    g->opts = c->opts;
    g->feet = feet;
    g->nlegs = c->sys->nfeet;
    for (int i = 0; i < g->nlegs; i++) {
        mbs_leg *l = &g->leg[i];
        const char *foot = mbs_frame_name(m, c->sys->contacts[i].frame);
        /* the analytic IK when the leg is of Solo's form (exact and cheapest), the numeric
         * limb IK for any other chain (Robosimian's limbs), which places the contact point
         * itself (its offset in the frame included) and, for a round foot (a sphere contact,
         * which rolls when its link tilts), holds the foot's tilt */
        if (mbsi_leg_init(l, m, foot, c->q0, NULL) == MBS_OK) {
            double a[3] = {c->q0[l->idx_q[0]], c->q0[l->idx_q[1]], c->q0[l->idx_q[2]]};
            mbsi_leg_fk(l, a, g->nom[i]);
            g->nj[i] = 3;
            for (int k = 0; k < 3; k++) { g->jq[i][k] = l->idx_q[k]; g->jv[i][k] = l->idx_v[k]; }
        } else {
            mbs_limb *lb = g->limb[i] = malloc(sizeof *lb);
            if (!lb) { mbsi_gait_fini(c); return mbsi_fail(err, MBS_ERR_NOMEM, "out of memory"); }
            const mbs_contact *ct = &c->sys->contacts[i];
            if (mbsi_limb_init(lb, m, foot, ct->offset, ct->radius > 0, c->q0, err) != MBS_OK) {
                free(lb);
                g->limb[i] = NULL;
                mbsi_gait_fini(c);
                return err ? err->code : MBS_ERR_MODEL;
            }
            mbsi_limb_fk(lb, lb->rest, g->nom[i]);
            g->nj[i] = lb->n;
            for (int k = 0; k < lb->n; k++) { g->jq[i][k] = lb->idx_q[k]; g->jv[i][k] = lb->idx_v[k]; }
        }
        /* diagonals: front-left with hind-right (x·y > 0), front-right with hind-left */
        g->pair[i] = g->nom[i][0] * g->nom[i][1] > 0 ? 0 : 1;
    }
    int rc = mbsi_pd_law_init(&g->law, c, pd, NULL, err);
    if (rc != MBS_OK) { mbsi_gait_fini(c); return rc; }
    return MBS_OK;
}

void mbsi_gait_fini(mbs_controller *c)
{
    mbs_gait *g = c->impl;
    if (!g) return;
    mbsi_pd_law_fini(&g->law);
    for (int i = 0; i < g->nlegs; i++)
        if (g->limb[i]) { mbsi_limb_fini(g->limb[i]); free(g->limb[i]); }
    free(g);
    c->impl = NULL;
}

/* The legs' joint references at time t into q (other coordinates untouched), stance and gains
 * per leg (kp, kd may be NULL): the gait's feet through the leg IK, the feet into p. The legs
 * with skip[i] set (skip may be NULL) are left out: their coordinates of q are left as they are. */
static void reference(mbs_gait *g, double t, const int *touching, double *q, int *stance, double *kp, double *kd,
                      double p[][3], const int *skip)
{
    g->feet(g, t, touching, p, stance, kp, kd);
    for (int i = 0; i < g->nlegs; i++) {
        if (g->limb[i]) {
            if (skip && skip[i]) continue;
            double a[MBS_LIMB_MAX_JOINTS];
            mbsi_limb_ik(g->limb[i], p[i], a);
            for (int k = 0; k < g->nj[i]; k++) q[g->jq[i][k]] = a[k];
            continue;
        }
        const mbs_leg *l = &g->leg[i];
        double a[3];
        mbsi_leg_ik(l, p[i], a);
        for (int k = 0; k < 3; k++) q[l->idx_q[k]] = a[k];
    }
}

void mbsi_gait_compute(mbs_controller *c, double t, const double *q, const double *v, double *tau)
{
    mbs_gait *g = c->impl;
    mbs_pd_law *l = &g->law;
    mbsi_pd_law_begin(l, q);
    int sched[MBS_CONTROL_MAX_CONTACTS], dummy[MBS_CONTROL_MAX_CONTACTS];
    double kp[MBS_CONTROL_MAX_CONTACTS], kd[MBS_CONTROL_MAX_CONTACTS];
    /* the reference (and its schedule and gains) of the instant the law aims at: t, or with
     * the stable PD the end of this period */
    t = mbsi_pd_law_reference_time(l, t);
    double p[MBS_CONTROL_MAX_CONTACTS][3], pp[MBS_CONTROL_MAX_CONTACTS][3], pm[MBS_CONTROL_MAX_CONTACTS][3];
    int rated[MBS_CONTROL_MAX_CONTACTS];
    reference(g, t, l->touching, l->qr, sched, kp, kd, p, NULL);
    for (int i = 0; i < g->nlegs; i++) rated[i] = g->limb[i] && g->limb[i]->kkt;
    for (int i = 0; i < g->nlegs; i++)
        for (int k = 0; k < g->nj[i]; k++) {
            l->kpv[g->jv[i][k]] = kp[i];
            l->kdv[g->jv[i][k]] = kd[i];
        }
    /* the reference velocity by central differences of the reference: the profiles are
     * smooth within a phase and the IK a smooth function of the feet (analytic, or numeric
     * converged far below the stencil's rounding). A numeric limb whose solve at t ended on a
     * regular solution gives its angles' rate exactly instead (the derivative of its
     * solution along the feet's velocity, itself by central differences of the feet): two
     * solves fewer per limb */
    const double h = 1e-4;
    memcpy(l->qp, l->qr, (size_t)l->nq * sizeof(double));
    memcpy(l->qm, l->qr, (size_t)l->nq * sizeof(double));
    reference(g, t + h, NULL, l->qp, dummy, NULL, NULL, pp, rated);
    reference(g, t - h, NULL, l->qm, dummy, NULL, NULL, pm, rated);
    for (int k = 0; k < l->nact; k++) l->vr[l->av[k]] = (l->qp[l->aq[k]] - l->qm[l->aq[k]]) / (2 * h);
    for (int i = 0; i < g->nlegs; i++) {
        double pd[3], xd[MBS_LIMB_MAX_JOINTS], xm[MBS_LIMB_MAX_JOINTS], kink = 0;
        if (!rated[i]) continue;
        for (int r = 0; r < 3; r++) {
            pd[r] = (pp[i][r] - pm[i][r]) / (2 * h);
            kink = fmax(kink, fabs(pp[i][r] - 2 * p[i][r] + pm[i][r]));
        }
        /* a foot's velocity that jumps within the stencil (a kink of its profile: the jump's
         * push begins and ends so) has no derivative to follow, and the solutions' central
         * difference, which the rate would miss by O(h), stays what it was: the second
         * difference, |ṗ⁺ − ṗ⁻| h there, is |p̈| h² elsewhere (under 1e-7 m in the gaits) */
        if (kink > 1e-5 || mbsi_limb_ik_rate(g->limb[i], pd, xd) != 0) {
            mbsi_limb_ik(g->limb[i], pp[i], xd);
            mbsi_limb_ik(g->limb[i], pm[i], xm);
            for (int k = 0; k < g->nj[i]; k++) xd[k] = (xd[k] - xm[k]) / (2 * h);
        }
        for (int k = 0; k < g->nj[i]; k++) l->vr[g->jv[i][k]] = xd[k];
    }
    if (l->opt.feedforward == MBS_FF_INVDYN) {
        /* a wider stencil for the second difference: rounding grows as 1/h², and a kink in
         * a profile (the jump's push) should not turn into a torque spike */
        const double ha = 2e-3;
        memcpy(l->qp, l->qr, (size_t)l->nq * sizeof(double));
        memcpy(l->qm, l->qr, (size_t)l->nq * sizeof(double));
        reference(g, t + ha, NULL, l->qp, dummy, NULL, NULL, pp, NULL);
        reference(g, t - ha, NULL, l->qm, dummy, NULL, NULL, pm, NULL);
        for (int k = 0; k < l->nact; k++)
            l->ar[l->av[k]] = (l->qp[l->aq[k]] - 2 * l->qr[l->aq[k]] + l->qm[l->aq[k]]) / (ha * ha);
    }
    for (int i = 0; i < l->ncontacts; i++) l->stance[i] = sched[i] && l->touching[i];
    mbsi_pd_law_torque(l, q, v, NULL, tau);
    mbsi_pd_law_feedforward(l, q, v, NULL, tau);
    mbsi_pd_law_finish(l, q, v, tau);
}

void mbsi_gait_state(mbs_controller *c, mbsi_state *s)
{
    mbs_gait *g = c->impl;
    mbsi_pd_law_state(&g->law, s);
    for (int i = 0; i < g->nlegs; i++)
        if (g->limb[i]) mbsi_limb_state(g->limb[i], s);
}
