/* controller.c — joint PD with feed-forward, evaluated once per controller period and held:
 *   τ_j = kp (q_ref − q) + kd (v_ref − v) + τ_ff.
 * The feed-forward is inverse dynamics b = rnea(q, v, a_ref) (or gravity alone, rnea(q, 0, 0)).
 * On a floating base the base rows of b cannot be produced by the motors: the stance feet must
 * carry them. We find the smallest contact forces λ that do (b_base = Σ J_i,baseᵀ λ_i, solved in
 * the least-squares sense — two diagonal feet cannot resist a moment about their diagonal) and
 * subtract their joint-space effect: τ_ff = b_joint − Σ J_i,jointᵀ λ_i. With no foot on the
 * ground the robot is in free fall, where gravity produces no joint torque: τ_ff = 0.
 * Contacts asked to pull are dropped from that distribution. The walk weighs each foot by the
 * plan's share of the weight, takes τ_ff at its reference, and shifts the centre of pressure by
 * its COM error (balance). */
#include <stdlib.h>

#include "../model/model_internal.h"
#include "mbs/dynamics.h"
#include "mbs/liegroup.h"
#include "mbs/contact.h"
#include "mbs/step.h"
#include "mbs/sim.h"
#include "../base/base.h"
#include "../spatial/spatial.h"
#include "sim_internal.h"
/* after spatial.h: lapacke.h brings complex.h, whose macro I would rename its inertias */
#include <lapacke.h>

/* The gain of each joint is kp (kd) times its scale: 1, or with `gains = inertia` the joint's
 * apparent inertia 1 / (M⁻¹)_jj at the initial posture, so that kp and kd are ω² and 2ζω of
 * every joint. A sampled PD is stable only while kd·dt is small against the inertia it drives: on a
 * humanoid the wrist's is ~10⁴ times smaller than the hip's, and one gain cannot suit both. */
static int gain_scales(mbs_controller *c, const mbs_scenario *sc)
{
    size_t nv = (size_t)c->nv;
    c->gain_scale = malloc((nv + 1) * sizeof(double));
    if (!c->gain_scale) return 1;
    for (size_t i = 0; i < nv; i++) c->gain_scale[i] = 1;
    const char *g = mbs_scenario_text(sc, "controller", "gains");
    if (!g || strcmp(g, "inertia") != 0) return 0;
    /* column j of M⁻¹: the accelerations a unit torque at joint j produces with every other
     * joint (and the base) free, so 1 / (M⁻¹)_jj is the smallest inertia the joint can face */
    double *Minv = malloc((nv * nv + 1) * sizeof(double));
    if (!Minv) return 1;
    mbs_crba(c->m, c->d, sc->q0, Minv);
    int rc = mbs_ltdl(c->m, c->d, Minv);
    if (rc == MBS_OK) {
        memset(Minv, 0, nv * nv * sizeof(double));
        for (size_t j = 0; j < nv; j++) Minv[j * (nv + 1)] = 1;
        mbs_ltdl_solve(c->m, c->d, Minv, (int)nv, (int)nv);
        for (size_t j = 0; j < nv; j++) c->gain_scale[j] = Minv[j * (nv + 1)] > 0 ? 1 / Minv[j * (nv + 1)] : 1;
        /* the walk knows its contact phases: the inertia under the feet that hold */
        if (c->use_walk) {
            c->walk_scale = malloc((nv + 1) * sizeof(double));
            rc = !c->walk_scale ? MBS_ERR_NOMEM : mbs_walk_gain_scales(&c->walk, sc->q0, Minv, c->walk_scale);
        }
    }
    free(Minv);
    return rc != MBS_OK;
}

int mbs_controller_init(mbs_controller *c, const mbs_scenario *sc, mbs_system *sys, mbs_error *err)
{
    memset(c, 0, sizeof *c);
    const mbs_model *m = sc->model;
    c->sc = sc;
    c->m = m;
    c->sys = sys;
    c->nq = mbs_model_nq(m);
    c->nv = mbs_model_nv(m);
    c->floating = mbs_model_njoints(m) > 0 && mbs_joint_type_of(m, 0) == MBS_JOINT_FREEFLYER;
    size_t nq = (size_t)c->nq + 1, nv = (size_t)c->nv + 1, nj = (size_t)mbs_model_njoints(m) + 1;
    c->d = mbs_data_new(m);
    c->aq = calloc(nj, sizeof(int));
    c->av = calloc(nj, sizeof(int));
    c->qr = calloc(nq, sizeof(double));
    c->qp = calloc(nq, sizeof(double));
    c->qm = calloc(nq, sizeof(double));
    c->vr = calloc(nv, sizeof(double));
    c->ar = calloc(nv, sizeof(double));
    c->zero = calloc(nv, sizeof(double));
    c->b = calloc(nv, sizeof(double));
    c->kpv = calloc(nv, sizeof(double));
    c->kdv = calloc(nv, sizeof(double));
    c->J = calloc(6 * nv, sizeof(double));
    c->Jc = calloc(3 * nv * MBS_SIM_MAX_CONTACTS, sizeof(double));
    if (!c->d || !c->aq || !c->av || !c->qr || !c->qp || !c->qm || !c->vr || !c->ar || !c->zero || !c->b || !c->kpv || !c->kdv || !c->J ||
        !c->Jc) {
        mbs_controller_fini(c);
        return mbs_fail(err, MBS_ERR_NOMEM, "out of memory");
    }
    for (int j = 0; j < mbs_model_njoints(m); j++) {
        mbs_joint_type t = mbs_joint_type_of(m, j);
        if (t != MBS_JOINT_REVOLUTE && t != MBS_JOINT_PRISMATIC) continue;
        c->aq[c->nact] = mbs_joint_idx_q(m, j);
        c->av[c->nact] = mbs_joint_idx_v(m, j);
        c->nact++;
    }
    mbs_controller_type t = sc->ctrl.type;
    c->use_gait = t == MBS_CTRL_SQUAT || t == MBS_CTRL_JUMP || t == MBS_CTRL_TROT;
    if (c->use_gait && mbs_gait_init(&c->gait, sc, err)) {
        mbs_controller_fini(c);
        return err ? err->code : MBS_ERR_MODEL;
    }
    c->use_walk = t == MBS_CTRL_WALK;
    if (c->use_walk && mbs_walk_init(&c->walk, sc, err)) {
        c->use_walk = 0;
        mbs_controller_fini(c);
        return err ? err->code : MBS_ERR_MODEL;
    }
    c->kc = mbs_scenario_num(sc, "controller", "balance", 0);
    c->kv = mbs_scenario_num(sc, "controller", "balance_damping", 0);
    if (gain_scales(c, sc)) {
        mbs_controller_fini(c);
        return mbs_fail(err, MBS_ERR_NOMEM, "out of memory");
    }
    return MBS_OK;
}

void mbs_controller_fini(mbs_controller *c)
{
    mbs_data_free(c->d);
    free(c->aq); free(c->av);
    free(c->qr); free(c->qp); free(c->qm);
    free(c->vr); free(c->ar); free(c->zero); free(c->b);
    free(c->kpv); free(c->kdv);
    free(c->J); free(c->Jc);
    free(c->gain_scale);
    free(c->walk_scale);
    if (c->use_walk) mbs_walk_fini(&c->walk);
    memset(c, 0, sizeof *c);
}

void mbs_sim_spd_solve(double *A, int n, double *b)
{
    double dmax = 0;
    for (int i = 0; i < n; i++) dmax = fmax(dmax, A[i * (n + 1)]);
    for (int i = 0; i < n; i++) A[i * (n + 1)] += 1e-12 * dmax + 1e-300;
    if (n && LAPACKE_dposv_work(LAPACK_COL_MAJOR, 'L', n, 1, A, n, b, n) != 0)
        for (int i = 0; i < n; i++) b[i] = 0;
}

/* λ_s = w_s A_sᵀ y with (A W Aᵀ + εI) y = b_base, A = [J_1,baseᵀ ... J_n,baseᵀ] (6 x 3n), W the
 * contacts' weights: the smallest weighted forces that carry the base's share (ε only keeps
 * the two-feet case, rank 5, solvable). w = 0 drops a contact. */
static void weighted_forces(const mbs_controller *c, int ns, const double *w, double lam[][3])
{
    int nv = c->nv;
    double AAt[36] = {0}, y[6], tr = 0;
    for (int s = 0; s < ns; s++) {
        const double *Js = c->Jc + (size_t)3 * nv * s;
        for (int i = 0; i < 6; i++)
            for (int j = 0; j < 6; j++)
                for (int r = 0; r < 3; r++) AAt[i + 6 * j] += w[s] * Js[r + 3 * i] * Js[r + 3 * j];
    }
    for (int i = 0; i < 6; i++) tr += AAt[i + 6 * i];
    for (int i = 0; i < 6; i++) { AAt[i + 6 * i] += 1e-9 * tr; y[i] = c->b[i]; }
    mbs_sim_spd_solve(AAt, 6, y);
    for (int s = 0; s < ns; s++) {
        const double *Js = c->Jc + (size_t)3 * nv * s;
        for (int r = 0; r < 3; r++) {
            lam[s][r] = 0;
            for (int i = 0; i < 6; i++) lam[s][r] += w[s] * Js[r + 3 * i] * y[i];
        }
    }
}

/* The stance forces of the feed-forward: weighted least squares (weighted_forces), then the
 * contacts asked to pull (λ_z < 0) are dropped and the rest solved again. A pulling foot corner
 * would need an ankle torque that pushes the centre of pressure past the edge, and the foot
 * would roll over it. */
static void distribute(const mbs_controller *c, const int *idx, int ns, double lam[][3])
{
    double w[MBS_SIM_MAX_CONTACTS] = {0};
    for (int s = 0; s < ns; s++) w[s] = c->weight[idx[s]];
    for (int pass = 0; pass < ns; pass++) {
        weighted_forces(c, ns, w, lam);
        int dropped = 0;
        for (int s = 0; s < ns; s++)
            if (w[s] > 0 && lam[s][2] < 0) { w[s] = 0; dropped++; }
        if (!dropped) return;
    }
    weighted_forces(c, ns, w, lam);
}

/* Adds to the base rows of b the couple Δp × F that moves the centre of pressure of the contact
 * forces by c->cop_shift (world x y) under the same total force F; q is the configuration the
 * base rows were computed at (its base orientation turns the couple into base axes). */
static void shift_cop(mbs_controller *c, const double *q)
{
    double R[9], f[3], M[3];
    m3_from_quat(q + 3, R);
    m3_mulv(R, c->b, f);   /* the base force in world axes */
    M[0] = c->cop_shift[1] * f[2];
    M[1] = -c->cop_shift[0] * f[2];
    M[2] = 0;
    m3t_mulv(R, M, f);
    for (int i = 0; i < 3; i++) c->b[3 + i] += f[i];
}

/* The walk's balance feedback (ankle strategy): the centre of pressure moves from under the
 * planned COM by k_c e + k_v ė, e the measured COM's horizontal error from the reference's, so
 * that the ground pushes the COM back (a linear inverted pendulum accelerates away from its
 * centre of pressure). */
static void balance(mbs_controller *c, const double *q, const double *v)
{
    double com[3], vcom[3], comr[3], vcomr[3];
    mbs_center_of_mass(c->m, c->d, q, v, com, vcom);
    mbs_center_of_mass(c->m, c->d, c->qr, c->vr, comr, vcomr);
    for (int k = 0; k < 2; k++) c->cop_shift[k] = c->kc * (com[k] - comr[k]) + c->kv * (vcom[k] - vcomr[k]);
}

/* τ_ff into tau (actuated entries), from b = rnea(...) and the stance contacts. */
static void feedforward(mbs_controller *c, const double *q, const double *v, double *tau)
{
    const mbs_model *m = c->m;
    mbs_feedforward ff = c->sc->ctrl.feedforward;
    if (ff == MBS_FF_NONE) return;
    int nv = c->nv, ns = 0, idx[MBS_SIM_MAX_CONTACTS];
    for (int i = 0; i < c->sys->ncontacts; i++)
        if (c->stance[i]) idx[ns++] = i;
    if (c->floating && ns == 0) return;   /* free fall */
    if (ff == MBS_FF_GRAVITY) mbs_rnea(m, c->d, q, c->zero, c->zero, c->b);
    else mbs_rnea(m, c->d, q, v, c->ar, c->b);
    if (c->floating && c->use_walk) shift_cop(c, q);
    if (c->floating) {
        /* linear rows of each stance contact's Jacobian at its touching point (world axes) */
        mbs_compute_joint_jacobians(m, c->d, q);
        for (int s = 0; s < ns; s++) {
            const mbs_contact *ct = &c->sys->contacts[idx[s]];
            double R[9], p[3], off[3];
            mbs_frame_placement_fk(m, c->d, ct->frame, R, p);
            /* a sphere touches at its lowest point: centre − r ẑ, in frame coordinates */
            for (int k = 0; k < 3; k++) off[k] = ct->offset[k] - ct->radius * R[2 + 3 * k];
            mbs_frame_jacobian_fk(m, c->d, ct->frame, off, MBS_LOCAL_WORLD_ALIGNED, c->J, 6);
            double *Js = c->Jc + (size_t)3 * nv * s;
            for (int col = 0; col < nv; col++)
                for (int r = 0; r < 3; r++) Js[r + 3 * col] = c->J[r + 6 * col];
        }
        double lam[MBS_SIM_MAX_CONTACTS][3];
        distribute(c, idx, ns, lam);
        for (int s = 0; s < ns; s++) {
            const double *Js = c->Jc + (size_t)3 * nv * s;
            const double *l = lam[s];
            for (int col = 6; col < nv; col++) c->b[col] -= Js[3 * col] * l[0] + Js[1 + 3 * col] * l[1] + Js[2 + 3 * col] * l[2];
        }
    }
    for (int k = 0; k < c->nact; k++) tau[c->av[k]] += c->b[c->av[k]];
}

/* touching[i] = 1 when contact point i is within 1 mm of the environment: the sensed contact
 * of a real robot, with a margin so that feet resting exactly on the ground count. */
static void touching_feet(mbs_controller *c, const double *q, int *touching)
{
    mbs_forward_kinematics(c->m, c->d, q, NULL, NULL);
    for (int i = 0; i < c->sys->ncontacts; i++) {
        const mbs_contact *ct = &c->sys->contacts[i];
        double R[9], p[3], ctr[3], depth, n[3], pt[3];
        mbs_frame_placement_fk(c->m, c->d, ct->frame, R, p);
        for (int k = 0; k < 3; k++) ctr[k] = p[k] + R[k] * ct->offset[0] + R[k + 3] * ct->offset[1] + R[k + 6] * ct->offset[2];
        touching[i] = mbs_environment_query(&c->sys->env, ctr, ct->radius + 1e-3, &depth, n, pt, NULL);
    }
}

/* The walk's kp scale of joint iv: a leg's joints go from their free inertia (swing) to the one
 * with the feet held (stance) as the plan loads the foot, reaching it at half the weight. */
static double walk_gain_scale(const mbs_controller *c, int iv)
{
    int f = c->walk.leg_of[iv];
    if (f < 0) return c->walk_scale[iv];
    double h = 2 * c->walk.load[f];
    h = h > 1 ? 1 : h;
    return c->gain_scale[iv] + h * (c->walk_scale[iv] - c->gain_scale[iv]);
}

void mbs_controller_compute(mbs_controller *c, double t, const double *q, const double *v, double *tau)
{
    const mbs_controller_config *cfg = &c->sc->ctrl;
    memset(tau, 0, (size_t)c->nv * sizeof(double));
    if (cfg->type == MBS_CTRL_NONE) return;
    for (int k = 0; k < c->nv; k++) { c->kpv[k] = cfg->kp; c->kdv[k] = cfg->kd; }
    memcpy(c->qr, c->sc->q0, (size_t)c->nq * sizeof(double));
    memset(c->vr, 0, (size_t)c->nv * sizeof(double));
    memset(c->ar, 0, (size_t)c->nv * sizeof(double));
    /* which feet carry the base: those on (or within a hair of) the ground that the gait has
     * in stance. A foot still in the air must not get its share of the weight: on a light leg
     * that torque slams the foot into the ground. */
    int touching[MBS_SIM_MAX_CONTACTS];
    touching_feet(c, q, touching);
    for (int i = 0; i < c->sys->ncontacts; i++) c->stance[i] = touching[i];
    if (c->use_gait) {
        int sched[MBS_SIM_MAX_CONTACTS], dummy[MBS_SIM_MAX_CONTACTS];
        double kp[MBS_SIM_MAX_CONTACTS], kd[MBS_SIM_MAX_CONTACTS];
        mbs_gait_reference(&c->gait, t, touching, c->qr, sched, kp, kd);
        for (int i = 0; i < c->gait.nlegs; i++)
            for (int k = 0; k < 3; k++) {
                c->kpv[c->gait.leg[i].idx_v[k]] = kp[i];
                c->kdv[c->gait.leg[i].idx_v[k]] = kd[i];
            }
        /* the reference velocity by central differences of the reference: the profiles are
         * smooth within a phase and the IK is analytic */
        const double h = 1e-4;
        memcpy(c->qp, c->qr, (size_t)c->nq * sizeof(double));
        memcpy(c->qm, c->qr, (size_t)c->nq * sizeof(double));
        mbs_gait_reference(&c->gait, t + h, NULL, c->qp, dummy, NULL, NULL);
        mbs_gait_reference(&c->gait, t - h, NULL, c->qm, dummy, NULL, NULL);
        for (int k = 0; k < c->nact; k++) c->vr[c->av[k]] = (c->qp[c->aq[k]] - c->qm[c->aq[k]]) / (2 * h);
        if (cfg->feedforward == MBS_FF_INVDYN) {
            /* a wider stencil for the second difference: rounding grows as 1/h², and a kink in
             * a profile (the jump's push) should not turn into a torque spike */
            const double ha = 2e-3;
            memcpy(c->qp, c->qr, (size_t)c->nq * sizeof(double));
            memcpy(c->qm, c->qr, (size_t)c->nq * sizeof(double));
            mbs_gait_reference(&c->gait, t + ha, NULL, c->qp, dummy, NULL, NULL);
            mbs_gait_reference(&c->gait, t - ha, NULL, c->qm, dummy, NULL, NULL);
            for (int k = 0; k < c->nact; k++)
                c->ar[c->av[k]] = (c->qp[c->aq[k]] - 2 * c->qr[c->aq[k]] + c->qm[c->aq[k]]) / (ha * ha);
        }
        for (int i = 0; i < c->sys->ncontacts; i++) c->stance[i] = sched[i] && touching[i];
    }
    for (int i = 0; i < c->sys->ncontacts; i++) c->weight[i] = 1;
    if (c->use_walk) {
        mbs_walk_reference(&c->walk, t, cfg->dt, c->qr, c->vr, c->ar, c->weight, c->sys->ncontacts);
        for (int i = 0; i < c->sys->ncontacts; i++) c->stance[i] = c->weight[i] > 0 && touching[i];
    }
    for (int k = 0; k < c->nact; k++) {
        int iq = c->aq[k], iv = c->av[k];
        double sd = c->gain_scale[iv], sp = c->walk_scale ? walk_gain_scale(c, iv) : sd;
        tau[iv] = sp * c->kpv[iv] * (c->qr[iq] - q[iq]) + sd * c->kdv[iv] * (c->vr[iv] - v[iv]);
    }
    /* the walk's feed-forward is taken at the reference: at the measured state it would follow a
     * fall, putting the centre of pressure under the falling COM instead of under the plan's */
    if (c->use_walk) {
        balance(c, q, v);
        feedforward(c, c->qr, c->vr, tau);
    }
    else feedforward(c, q, v, tau);
}
