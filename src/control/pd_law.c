/* pd_law.c — the feedback law of today's controllers: joint PD with feed-forward, evaluated
 * once per controller period and held:
 *   τ_j = kp (q_ref − q) + kd (v_ref − v) + τ_ff.
 * The feed-forward is inverse dynamics b = rnea(q, v, a_ref) (or gravity alone, rnea(q, 0, 0)).
 * On a floating base the base rows of b cannot be produced by the motors: the stance feet must
 * carry them. We find the smallest contact forces λ that do (b_base = Σ J_i,baseᵀ λ_i, solved in
 * the least-squares sense — two diagonal feet cannot resist a moment about their diagonal) and
 * subtract their joint-space effect: τ_ff = b_joint − Σ J_i,jointᵀ λ_i. With no foot on the
 * ground the robot is in free fall, where gravity produces no joint torque: τ_ff = 0.
 * Contacts asked to pull are dropped from that distribution. A controller may weigh each
 * contact (the walk: by the plan's share of the weight) and shift the centre of pressure.
 *
 * feedback = stable is the stable PD of Tan, Liu & Turk, "Stable proportional-derivative
 * controllers", IEEE CG&A 31(4), 2011, which Pan & Hauser 2020 track their Robosimian
 * trajectories with. A PD sampled every h and held is explicit in time: on a joint of inertia
 * m it is stable only while kd h / m stays below ~2 (and kp h² / m small), so a stiff gain on a
 * light joint diverges at a large period (Robosimian's wheel, 0.009 kg·m², at h = 50 ms allows
 * kd < 0.4 N·m·s/rad). Tan et al. evaluate the law at the next state instead,
 *   τ = −kp (q_{n+1} − q̄_{n+1}) − kd (q̇_{n+1} − q̄̇_{n+1}),
 * consistent with backward Euler, and replace the unknown next state by its first-order
 * prediction from the acceleration a this very torque produces. Their Taylor form takes the
 * position at q + h v; we take it at q + h v_{n+1} = q + h v + h² a, the backward-Euler (and
 * semi-implicit Euler) update itself:
 *   τ = kp (q_ref(t + h) − q − h v − h² a) + kd (v_ref(t + h) − v − h a) + τ_ff,
 *   (M + h Kd + h² Kp) a = kp (q_ref − q − h v) + kd (v_ref − v) + τ_ff − b,
 * the second line the equation of motion M a + b = τ with the terms in a moved to the left,
 * b = C(q, v) v + g(q) − (the contact forces). Why not the Taylor form: on one joint of inertia
 * m with the torque held over h, it is stable only while h kp stays below about 2/3 kd (the
 * closed loop's eigenvalues leave the unit circle for most gain pairs at h = 50 ms), whereas
 * with the h² Kp term the closed loop is exactly backward Euler applied to m q̈ = −kp q − kd q̇
 * under an implicit-Euler plant, stable for every kp, kd ≥ 0 and h, and under an exact
 * (sub-stepped) plant as well. It stays stable when the predicted inertia is smaller than the
 * true one (the effective gains, kp m̂ / (m̂ + h kd + h² kp) and likewise kd, are then the
 * true inertia's or less), but not when it is several times larger.
 *
 * What M and b are for a floating-base robot on contacts is ours to decide (Tan et al.
 * simulate characters with their own root handling). We predict with the base free and the
 * stance contacts' forces known, found by the feed-forward's rule (the smallest forces λ that
 * carry the base rows of b, here b = C v + g at the measured state), so b − Σ J_iᵀ λ_i, not
 * as constraints. Contacts can only hold the robot, never free it, so this inertia is the
 * smallest the joints can face: a lower bound, the safe side of the argument above, whatever
 * the contacts do (stick, slip, comply as a spring, let go). A swing leg's prediction is then
 * nearly exact; a stance leg's is softer than the truth, so its gains come out softened,
 * bounded by its free inertia / h², and the feed-forward must carry the load. With those λ,
 * a posture resting on its reference under gravity feed-forward predicts a = 0, as it should
 * (without them a stance leg would be predicted to fall under the weight it carries, and the
 * law would push it into the ground). Two other choices were tried on Robosimian on
 * spring-damper contacts and diverged: the base held fixed by the feet (M_jj: the base is
 * only as still as the stance legs hold it, so the joints' true inertia is smaller than
 * predicted; divergent standing, already at h = 20 ms), and the stance feet held as
 * constraints (exact while a foot sticks, but too large whenever the contact complies or a
 * foot leaves; the jump and the crawl diverged at h = 20 ms). A fixed-base robot uses its M.
 *
 * feedback = impedance hands the PD itself to the system instead (mbs_system_set_impedance, in
 * mbs/contact.h): the gains and the reference of the period's end, held with the torque, which
 * then carries the feed-forward alone. nmdp integrates that impedance implicitly at the end of
 * each step, which is the paper's own stable PD (the law at the new state, inside the
 * backward-Euler step, with the contacts); mdp semi-implicitly; every other scheme evaluates it
 * at the start of each of its steps, a plain PD at the stepper's rate (stable while kd dt / m
 * stays small, dt the stepper's step). */
#include <stdlib.h>

#include "../dynamics/dynamics_internal.h"
#include "../spatial/spatial.h"
#include "control_internal.h"

static const mbs_option_spec pd_spec[] = {
    {"kp", MBS_OPT_REAL, "N·m/rad", 0, 1e6, 0, "5", NULL, offsetof(mbs_pd_options, kp),
     "joint stiffness (with gains = inertia: per unit of the joint's apparent inertia, 1/s²)"},
    {"kd", MBS_OPT_REAL, "N·m·s/rad", 0, 1e5, 0, "0.1", NULL, offsetof(mbs_pd_options, kd),
     "joint damping (with gains = inertia: per unit of apparent inertia, 1/s)"},
    {"feedforward", MBS_OPT_ENUM, "", 0, 0, 0, "gravity", "none gravity inverse_dynamics",
     offsetof(mbs_pd_options, feedforward),
     "torque added to the PD: none, gravity rnea(q, 0, 0), or inverse dynamics of the reference; the base's share carried by the stance feet"},
    {"gains", MBS_OPT_ENUM, "", 0, 0, 0, "uniform", "uniform inertia", offsetof(mbs_pd_options, gains),
     "uniform: kp and kd as given; inertia: scaled by each joint's apparent inertia at the initial posture, so kp = ω², kd = 2ζω"},
    {"feedback", MBS_OPT_ENUM, "", 0, 0, 0, "pd", "pd stable impedance", offsetof(mbs_pd_options, feedback),
     "pd: the law at the measured state; stable: at the state one period ahead, consistent with backward Euler (Tan et al. 2011), so that stiff gains stay stable at long periods; impedance: handed to the stepper with the torque (mbs_system_set_impedance), applied at every step (implicitly by nmdp)"},
};
const mbs_option_table mbsi_pd_option_table = {"pd", pd_spec, (int)(sizeof pd_spec / sizeof *pd_spec), NULL, 0,
                                              sizeof(mbs_pd_options)};

#define carve mbsi_carve_doubles

static void layout(mbs_carver *c, mbs_pd_law *l)
{
    size_t nq = (size_t)l->nq + 1, nv = (size_t)l->nv + 1, nj = (size_t)mbs_model_njoints(l->m) + 1;
    l->aq = mbsi_carve_ints(c, nj); l->av = mbsi_carve_ints(c, nj);
    l->gain_scale = carve(c, nv);
    l->qr = carve(c, nq); l->qp = carve(c, nq); l->qm = carve(c, nq);
    l->vr = carve(c, nv); l->ar = carve(c, nv); l->zero = carve(c, nv); l->b = carve(c, nv);
    l->kpv = carve(c, nv); l->kdv = carve(c, nv);
    l->J = carve(c, 6 * nv);
    l->Jc = carve(c, 3 * nv * MBS_CONTROL_MAX_CONTACTS);
    if (l->opt.feedback != MBS_FEEDBACK_PD) {
        l->M = carve(c, nv * nv);
        l->kp_eff = carve(c, nv);
        l->kd_eff = carve(c, nv);
    }
}

/* The gain of each joint is kp (kd) times its scale: 1, or with `gains = inertia` the joint's
 * apparent inertia 1 / (M⁻¹)_jj at the initial posture, so that kp and kd are ω² and 2ζω of
 * every joint. A sampled PD is stable only while kd·dt is small against the inertia it drives: on a
 * humanoid the wrist's is ~10⁴ times smaller than the hip's, and one gain cannot suit both.
 * Column j of M⁻¹: the accelerations a unit torque at joint j produces with every other joint
 * (and the base) free, so 1 / (M⁻¹)_jj is the smallest inertia the joint can face. */
static int inverse_inertia(mbs_pd_law *l, double *Minv)
{
    size_t nv = (size_t)l->nv;
    mbs_crba(l->m, l->d, l->q0, Minv);
    int rc = mbs_ltdl(l->m, l->d, Minv);
    if (rc != MBS_OK) return rc;
    memset(Minv, 0, nv * nv * sizeof(double));
    for (size_t j = 0; j < nv; j++) Minv[j * (nv + 1)] = 1;
    mbs_ltdl_solve(l->m, l->d, Minv, (int)nv, (int)nv);
    return MBS_OK;
}

int mbsi_pd_law_init(mbs_pd_law *l, const mbs_controller *c, const mbs_pd_options *o, double *Minv, mbs_error *err)
{
    memset(l, 0, sizeof *l);
    const mbs_model *m = c->m;
    l->m = m;
    l->sys = c->sys;
    l->opt = *o;
    l->q0 = c->q0;
    l->h = c->dt;
    l->nq = mbs_model_nq(m);
    l->nv = mbs_model_nv(m);
    l->ncontacts = c->sys->nfeet;
    if (l->ncontacts > MBS_CONTROL_MAX_CONTACTS)
        return mbsi_fail(err, MBS_ERR_ARG, "the controller handles at most %d contact points, the system has %d",
                        MBS_CONTROL_MAX_CONTACTS, l->ncontacts);
    l->floating = mbs_model_njoints(m) > 0 && mbs_joint_type_of(m, 0) == MBS_JOINT_FREEFLYER;
    mbs_carver cv = {NULL, 0};
    layout(&cv, l);
    l->block = mbsi_carver_alloc(&cv);
    l->d = mbs_data_new(m);
    if (!l->block || !l->d) {
        mbsi_pd_law_fini(l);
        return mbsi_fail(err, MBS_ERR_NOMEM, "out of memory");
    }
    layout(&cv, l);
    for (int j = 0; j < mbs_model_njoints(m); j++) {
        mbs_joint_type t = mbs_joint_type_of(m, j);
        if (t != MBS_JOINT_REVOLUTE && t != MBS_JOINT_PRISMATIC) continue;
        l->aq[l->nact] = mbs_joint_idx_q(m, j);
        l->av[l->nact] = mbs_joint_idx_v(m, j);
        l->nact++;
    }
    for (int i = 0; i < l->nv; i++) l->gain_scale[i] = 1;
    if (o->gains == MBS_GAINS_INERTIA || Minv) {
        size_t nv = (size_t)l->nv;
        double *Mi = Minv ? Minv : malloc((nv * nv + 1) * sizeof(double));
        int rc = Mi ? inverse_inertia(l, Mi) : MBS_ERR_NOMEM;
        if (rc == MBS_OK && o->gains == MBS_GAINS_INERTIA)
            for (size_t j = 0; j < nv; j++) l->gain_scale[j] = Mi[j * (nv + 1)] > 0 ? 1 / Mi[j * (nv + 1)] : 1;
        if (Mi != Minv) free(Mi);
        if (rc != MBS_OK) {
            mbsi_pd_law_fini(l);
            if (rc == MBS_ERR_NOMEM) return mbsi_fail(err, MBS_ERR_NOMEM, "out of memory");
            return mbsi_fail(err, MBS_ERR_MODEL, "gains: the mass matrix at the initial posture is singular");
        }
    }
    return MBS_OK;
}

void mbsi_pd_law_fini(mbs_pd_law *l)
{
    mbs_data_free(l->d);
    free(l->block);
    memset(l, 0, sizeof *l);
}

void mbsi_pd_law_begin(mbs_pd_law *l, const double *q)
{
    for (int k = 0; k < l->nv; k++) { l->kpv[k] = l->opt.kp; l->kdv[k] = l->opt.kd; }
    memcpy(l->qr, l->q0, (size_t)l->nq * sizeof(double));
    memset(l->vr, 0, (size_t)l->nv * sizeof(double));
    memset(l->ar, 0, (size_t)l->nv * sizeof(double));
    /* which feet carry the base: those on (or within a hair of) the ground (a controller may
     * narrow it to those its plan has in stance). A foot still in the air must not get its
     * share of the weight: on a light leg that torque slams the foot into the ground. */
    mbsi_sense_contacts(l->sys, l->d, q, l->touching);
    for (int i = 0; i < l->ncontacts; i++) {
        l->stance[i] = l->touching[i];
        l->weight[i] = 1;
    }
}

double mbsi_pd_law_reference_time(const mbs_pd_law *l, double t)
{
    return l->opt.feedback != MBS_FEEDBACK_PD ? t + l->h : t;
}

void mbsi_pd_law_torque(mbs_pd_law *l, const double *q, const double *v, const double *kp_scale, double *tau)
{
    memset(tau, 0, (size_t)l->nv * sizeof(double));
    if (l->opt.feedback == MBS_FEEDBACK_IMPEDANCE) {
        /* the PD is the system's to apply, at every step: only its gains are kept here */
        for (int k = 0; k < l->nact; k++) {
            int iv = l->av[k];
            double sd = l->gain_scale[iv], sp = kp_scale ? kp_scale[iv] : sd;
            l->kp_eff[iv] = sp * l->kpv[iv];
            l->kd_eff[iv] = sd * l->kdv[iv];
        }
        return;
    }
    if (l->opt.feedback == MBS_FEEDBACK_STABLE) {
        /* the errors at the next state but for the terms in its unknown acceleration, which
         * finish() adds: the position at q + h v (a one-coordinate joint's q and v are the same
         * coordinate). The gains are kept for finish(). */
        for (int k = 0; k < l->nact; k++) {
            int iq = l->aq[k], iv = l->av[k];
            double sd = l->gain_scale[iv], sp = kp_scale ? kp_scale[iv] : sd;
            l->kp_eff[iv] = sp * l->kpv[iv];
            l->kd_eff[iv] = sd * l->kdv[iv];
            tau[iv] = l->kp_eff[iv] * (l->qr[iq] - q[iq] - l->h * v[iv]) + l->kd_eff[iv] * (l->vr[iv] - v[iv]);
        }
        return;
    }
    for (int k = 0; k < l->nact; k++) {
        int iq = l->aq[k], iv = l->av[k];
        double sd = l->gain_scale[iv], sp = kp_scale ? kp_scale[iv] : sd;
        tau[iv] = sp * l->kpv[iv] * (l->qr[iq] - q[iq]) + sd * l->kdv[iv] * (l->vr[iv] - v[iv]);
    }
}

/* λ_s = w_s A_sᵀ y with (A W Aᵀ + εI) y = b_base, A = [J_1,baseᵀ ... J_n,baseᵀ] (6 x 3n), W the
 * contacts' weights: the smallest weighted forces that carry the base's share (ε only keeps
 * the two-feet case, rank 5, solvable). w = 0 drops a contact. */
static void weighted_forces(const mbs_pd_law *l, int ns, const double *w, double lam[][3])
{
    int nv = l->nv;
    double AAt[36] = {0}, y[6], tr = 0;
    for (int s = 0; s < ns; s++) {
        const double *Js = l->Jc + (size_t)3 * nv * s;
        for (int i = 0; i < 6; i++)
            for (int j = 0; j < 6; j++)
                for (int r = 0; r < 3; r++) AAt[i + 6 * j] += w[s] * Js[r + 3 * i] * Js[r + 3 * j];
    }
    for (int i = 0; i < 6; i++) tr += AAt[i + 6 * i];
    for (int i = 0; i < 6; i++) { AAt[i + 6 * i] += 1e-9 * tr; y[i] = l->b[i]; }
    mbsi_spd_solve(AAt, 6, y);
    for (int s = 0; s < ns; s++) {
        const double *Js = l->Jc + (size_t)3 * nv * s;
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
static void distribute(const mbs_pd_law *l, const int *idx, int ns, double lam[][3])
{
    double w[MBS_CONTROL_MAX_CONTACTS] = {0};
    for (int s = 0; s < ns; s++) w[s] = l->weight[idx[s]];
    for (int pass = 0; pass < ns; pass++) {
        weighted_forces(l, ns, w, lam);
        int dropped = 0;
        for (int s = 0; s < ns; s++)
            if (w[s] > 0 && lam[s][2] < 0) { w[s] = 0; dropped++; }
        if (!dropped) return;
    }
    weighted_forces(l, ns, w, lam);
}

/* Adds to the base rows of b the couple Δp × F that moves the centre of pressure of the contact
 * forces by `shift` (world x y) under the same total force F; q is the configuration the base
 * rows were computed at (its base orientation turns the couple into base axes). */
static void shift_cop(mbs_pd_law *l, const double *q, const double shift[2])
{
    double R[9], f[3], M[3];
    m3_from_quat(q + 3, R);
    m3_mulv(R, l->b, f);   /* the base force in world axes */
    M[0] = shift[1] * f[2];
    M[1] = -shift[0] * f[2];
    M[2] = 0;
    m3t_mulv(R, M, f);
    for (int i = 0; i < 3; i++) l->b[3 + i] += f[i];
}

/* l->b = rnea(q, v, a) and, for a floating base, the joint Jacobians at q (stance_jacobians):
 * from one forward kinematics, which RNEA's backward pass and the Jacobians share, where mbs_rnea
 * and mbs_compute_joint_jacobians placed every joint twice. */
static void bias_and_jacobians(mbs_pd_law *l, const double *q, const double *v, const double *a)
{
    mbs_forward_kinematics(l->m, l->d, q, v, a);
    mbsi_rnea_from_kinematics(l->m, l->d, a, NULL, l->b);
    if (l->floating) mbsi_joint_jacobians_from_placements(l->m, l->d);
}

/* The linear rows of each stance contact's Jacobian at its touching point (world axes), into
 * l->Jc, from the joint Jacobians bias_and_jacobians left in l->d. */
static void stance_jacobians(mbs_pd_law *l, const int *idx, int ns)
{
    const mbs_model *m = l->m;
    int nv = l->nv;
    for (int s = 0; s < ns; s++) {
        const mbs_contact *ct = &l->sys->contacts[idx[s]];
        double R[9], p[3], off[3];
        mbs_frame_placement(m, l->d, ct->frame, R, p);
        /* a sphere touches at its lowest point: centre − r ẑ, in frame coordinates */
        for (int k = 0; k < 3; k++) off[k] = ct->offset[k] - ct->radius * R[2 + 3 * k];
        mbs_frame_jacobian(m, l->d, ct->frame, off, MBS_LOCAL_WORLD_ALIGNED, l->J, 6);
        double *Js = l->Jc + (size_t)3 * nv * s;
        for (int col = 0; col < nv; col++)
            for (int r = 0; r < 3; r++) Js[r + 3 * col] = l->J[r + 6 * col];
    }
}

/* Carries the base rows of l->b on the stance contacts idx (ns of them), after
 * bias_and_jacobians: the smallest forces λ that produce them (distribute), and their effect taken
 * off the joint rows, b_j −= Σ J_jᵀ λ. */
static void carry_base(mbs_pd_law *l, const int *idx, int ns, int first)
{
    int nv = l->nv;
    stance_jacobians(l, idx, ns);
    double lam[MBS_CONTROL_MAX_CONTACTS][3];
    distribute(l, idx, ns, lam);
    for (int s = 0; s < ns; s++) {
        const double *Js = l->Jc + (size_t)3 * nv * s;
        const double *lm = lam[s];
        for (int col = first; col < nv; col++) l->b[col] -= Js[3 * col] * lm[0] + Js[1 + 3 * col] * lm[1] + Js[2 + 3 * col] * lm[2];
    }
}

void mbsi_pd_law_feedforward(mbs_pd_law *l, const double *q, const double *v, const double *cop_shift, double *tau)
{
    int ff = l->opt.feedforward;
    if (ff == MBS_FF_NONE) return;
    int ns = 0, idx[MBS_CONTROL_MAX_CONTACTS];
    for (int i = 0; i < l->ncontacts; i++)
        if (l->stance[i]) idx[ns++] = i;
    if (l->floating && ns == 0) return;   /* free fall */
    if (ff == MBS_FF_GRAVITY) bias_and_jacobians(l, q, l->zero, l->zero);
    else bias_and_jacobians(l, q, v, l->ar);
    if (l->floating && cop_shift) shift_cop(l, q, cop_shift);
    if (l->floating) carry_base(l, idx, ns, 6);
    for (int k = 0; k < l->nact; k++) tau[l->av[k]] += l->b[l->av[k]];
}

void mbsi_pd_law_finish(mbs_pd_law *l, const double *q, const double *v, double *tau)
{
    if (l->opt.feedback == MBS_FEEDBACK_IMPEDANCE) {
        mbs_system_set_impedance(l->sys, l->kp_eff, l->kd_eff, l->qr, l->vr);
        return;
    }
    if (l->opt.feedback != MBS_FEEDBACK_STABLE) return;
    const mbs_model *m = l->m;
    int nv = l->nv, ns = 0, idx[MBS_CONTROL_MAX_CONTACTS];
    for (int i = 0; i < l->ncontacts; i++)
        if (l->stance[i]) idx[ns++] = i;
    /* b = C(q, v) v + g(q) − Σ J_iᵀ λ_i at the measured state: the stance contacts' forces λ,
     * by the feed-forward's rule (the smallest that carry the base's rows of b), are known
     * external forces of the prediction, not constraints */
    bias_and_jacobians(l, q, v, l->zero);
    if (l->floating && ns > 0) carry_base(l, idx, ns, 0);
    /* (M + h Kd + h² Kp) a = Sᵀτ − b over the whole of v, the base free (its rows of τ are
     * zero); M + a diagonal keeps the tree's sparsity, so the tree factorisation serves */
    mbs_crba(m, l->d, q, l->M);
    for (int k = 0; k < l->nact; k++) {
        int iv = l->av[k];
        l->M[iv + (size_t)nv * iv] += l->h * (l->kd_eff[iv] + l->h * l->kp_eff[iv]);
    }
    double *a = l->b;   /* the right-hand side in place, then the predicted accelerations */
    for (int r = 0; r < nv; r++) a[r] = tau[r] - a[r];
    if (mbs_ltdl(m, l->d, l->M) != MBS_OK) return;   /* M is positive definite: not expected */
    mbs_ltdl_solve(m, l->d, a, 1, nv);
    for (int k = 0; k < l->nact; k++) {
        int iv = l->av[k];
        tau[iv] -= l->h * (l->kd_eff[iv] + l->h * l->kp_eff[iv]) * a[iv];
    }
}

void mbsi_pd_law_state(mbs_pd_law *l, mbsi_state *s)
{
    const size_t nq = (size_t)l->nq, nv = (size_t)l->nv;
    mbsi_state_doubles(s, "pd_law.qr", l->qr, nq);
    mbsi_state_doubles(s, "pd_law.vr", l->vr, nv);
    mbsi_state_doubles(s, "pd_law.ar", l->ar, nv);
    mbsi_state_doubles(s, "pd_law.kpv", l->kpv, nv);
    mbsi_state_doubles(s, "pd_law.kdv", l->kdv, nv);
    mbsi_state_ints(s, "pd_law.stance", l->stance, MBS_CONTROL_MAX_CONTACTS);
    mbsi_state_doubles(s, "pd_law.weight", l->weight, MBS_CONTROL_MAX_CONTACTS);
    mbsi_state_ints(s, "pd_law.touching", l->touching, MBS_CONTROL_MAX_CONTACTS);
}

int mbsi_pd_law_holding_torques(const mbs_controller *c, double *ff, mbs_error *err)
{
    mbs_pd_law law;
    const mbs_pd_options po = {0, 0, MBS_FF_INVDYN, MBS_GAINS_UNIFORM, MBS_FEEDBACK_PD};
    int rc = mbsi_pd_law_init(&law, c, &po, NULL, err);
    if (rc != MBS_OK) return rc;
    mbsi_pd_law_begin(&law, c->q0);
    memset(ff, 0, sizeof(double) * (size_t)mbs_model_nv(c->m));
    /* at rest: the law's zero vector as the velocity */
    mbsi_pd_law_feedforward(&law, c->q0, law.zero, NULL, ff);
    mbsi_pd_law_fini(&law);
    return MBS_OK;
}
