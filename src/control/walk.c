/* walk.c — the walk controller for a biped: the quasi-static plan and whole-body IK of
 * walk_plan.c drive the joint PD with feed-forward, which it adapts three ways:
 *   - the feed-forward contact forces are weighted by the plan's share of the weight on each
 *     foot, and taken at the reference (at the measured state it would follow a fall, putting
 *     the centre of pressure under the falling COM instead of under the plan's);
 *   - balance (ankle strategy): the centre of pressure moves from under the planned COM by
 *     k_c e + k_v ė, e the measured COM's horizontal error from the reference's, so that the
 *     ground pushes the COM back (a linear inverted pendulum accelerates away from its centre
 *     of pressure);
 *   - with gains = inertia, a leg's stiffness goes from its free inertia (swing) to the one with
 *     the feet held (stance) as the plan loads the foot, reaching it at half the weight. */
#include <stdlib.h>

#include "control_internal.h"

typedef struct walk_options {
    mbs_pd_options pd;
    double settle;
    char feet[MBS_OPTION_TEXT_LEN];
    int steps;
    double step_length, step_time, double_support, step_height;
    double balance, balance_damping, stance_gain_cap;
} walk_options;

static const mbs_option_spec spec[] = {
    {"settle", MBS_OPT_REAL, "s", 0, 1e6, 0, "0", NULL, offsetof(walk_options, settle), "time standing before the first step"},
    {"feet", MBS_OPT_TEXT, "", 0, 0, 0, "", NULL, offsetof(walk_options, feet),
     "the two foot frames, left then right (each must carry contact points); the left foot steps first"},
    {"steps", MBS_OPT_INT, "", 1, 100, 0, "2", NULL, offsetof(walk_options, steps),
     "steps; the first and the last bring a foot beside the other"},
    {"step_length", MBS_OPT_REAL, "m", -0.5, 0.5, 0, "0.1", NULL, offsetof(walk_options, step_length),
     "advance of the first and last steps (twice this for the steps between)"},
    {"step_time", MBS_OPT_REAL, "s", 0, 100, MBS_OPT_OPEN_LO, "0.8", NULL, offsetof(walk_options, step_time),
     "single support: the swing foot's flight"},
    {"double_support", MBS_OPT_REAL, "s", 0, 100, MBS_OPT_OPEN_LO, "0.8", NULL, offsetof(walk_options, double_support),
     "double support: the COM moves over the next stance foot"},
    {"step_height", MBS_OPT_REAL, "m", 0, 0.2, 0, "0.05", NULL, offsetof(walk_options, step_height), "swing foot lift"},
    {"balance", MBS_OPT_REAL, "", 0, 100, 0, "0", NULL, offsetof(walk_options, balance),
     "k_c: centre-of-pressure shift per metre of COM error (m/m)"},
    {"balance_damping", MBS_OPT_REAL, "s", 0, 100, 0, "0", NULL, offsetof(walk_options, balance_damping),
     "k_v: centre-of-pressure shift per m/s of COM velocity error"},
    {"stance_gain_cap", MBS_OPT_REAL, "", 1, 1e6, 0, "10", NULL, offsetof(walk_options, stance_gain_cap),
     "with gains = inertia: a stance joint's stiffness scale is at most this times its free one"},
};

typedef struct walk {
    mbs_walk plan;
    mbs_pd_law law;
    double *stance_scale;          /* gains = inertia: the scales with both feet held (NULL otherwise) */
    double *kp_scale;              /* this period's stiffness scales */
    double cop_shift[2];
} walk;

static void fini(mbs_controller *c)
{
    walk *w = c->impl;
    if (!w) return;
    mbsi_walk_fini(&w->plan);
    mbsi_pd_law_fini(&w->law);
    free(w);   /* one block: the struct and its scale vectors */
    c->impl = NULL;
}

/* The two foot frames of `feet`: two frames of the model on different bodies, each carrying at
 * least one contact point (a point on the foot's body). */
static int find_feet(const mbs_controller *c, const char *feet, int foot[2], mbs_error *err)
{
    const mbs_model *m = c->m;
    char names[2][MBS_NAME_LEN], word[MBS_NAME_LEN];
    int n = 0, len;
    for (const char *p = feet; (len = mbsi_next_word(&p, word, sizeof word)) != 0; n++) {
        if (len < 0) return mbsi_fail(err, MBS_ERR_ARG, "feet: frame name too long");
        if (n < 2) memcpy(names[n], word, sizeof word);
    }
    if (n != 2) return mbsi_fail(err, MBS_ERR_ARG, "feet: expected two foot frames, got %d", n);
    int body[2];
    for (int f = 0; f < 2; f++) {
        foot[f] = mbs_frame_id(m, names[f]);
        if (foot[f] < 0) return mbsi_fail(err, MBS_ERR_ARG, "feet: no frame '%s' in model '%s'", names[f], mbs_model_name(m));
        body[f] = mbs_frame_body(m, foot[f]);
        int carried = 0;
        for (int i = 0; i < c->sys->nfeet; i++) carried |= mbs_frame_body(m, c->sys->contacts[i].frame) == body[f];
        if (body[f] < 0 || !carried)
            return mbsi_fail(err, MBS_ERR_ARG, "feet: foot '%s' has no contact point ([contact] frames or points on its body)", names[f]);
    }
    if (body[0] == body[1]) return mbsi_fail(err, MBS_ERR_ARG, "feet: the two feet '%s' and '%s' are on the same body", names[0], names[1]);
    return MBS_OK;
}

static int init(mbs_controller *c, mbs_error *err)
{
    const walk_options *o = c->opts;
    const mbs_model *m = c->m;
    if (!(mbs_model_njoints(m) > 0 && mbs_joint_type_of(m, 0) == MBS_JOINT_FREEFLYER))
        return mbsi_fail(err, MBS_ERR_ARG, "controller 'walk' needs a floating base");
    if (!o->feet[0]) return mbsi_fail(err, MBS_ERR_ARG, "feet: controller 'walk' needs feet = LEFT_FOOT RIGHT_FOOT");
    mbs_walk_plan_options po = {{0, 0}, o->steps, o->settle, o->step_length, o->step_time, o->double_support,
                                o->step_height, o->stance_gain_cap};
    int rc = find_feet(c, o->feet, po.foot, err);
    if (rc != MBS_OK) return rc;
    size_t nv = (size_t)mbs_model_nv(m);
    int inertia = o->pd.gains == MBS_GAINS_INERTIA;
    mbs_carver cv = {NULL, 0};
    for (int pass = 0; pass < 2; pass++) {   /* count, then carve the struct and its scales */
        walk *w = mbsi_carve(&cv, sizeof(walk));
        double *kp = mbsi_carve_doubles(&cv, nv + 1), *stance = inertia ? mbsi_carve_doubles(&cv, nv + 1) : NULL;
        if (w) { w->kp_scale = kp; w->stance_scale = stance; }
        if (pass == 0 && !mbsi_carver_alloc(&cv)) return mbsi_fail(err, MBS_ERR_NOMEM, "out of memory");
    }
    walk *w = c->impl = cv.base;
    /* M⁻¹ at q0, a scratch of the set-up only */
    double *Minv = inertia ? malloc((nv * nv + 1) * sizeof(double)) : NULL;
    if (inertia && !Minv) rc = mbsi_fail(err, MBS_ERR_NOMEM, "out of memory");
    if (rc == MBS_OK) rc = mbsi_walk_init(&w->plan, c->sys, c->q0, &po, err);
    if (rc == MBS_OK) rc = mbsi_pd_law_init(&w->law, c, &o->pd, Minv, err);
    /* the walk knows its contact phases: the inertia under the feet that hold */
    if (rc == MBS_OK && Minv && mbsi_walk_gain_scales(&w->plan, c->q0, Minv, w->stance_scale) != MBS_OK)
        rc = mbsi_fail(err, MBS_ERR_NOMEM, "out of memory");
    free(Minv);
    if (rc != MBS_OK) fini(c);
    return rc;
}

/* The kp scale of joint iv: a leg's joints go from their free inertia (swing) to the one with
 * the feet held (stance) as the plan loads the foot, reaching it at half the weight. */
static double stance_gain_scale(const walk *w, int iv)
{
    int f = w->plan.leg_of[iv];
    if (f < 0) return w->stance_scale[iv];
    double h = 2 * w->plan.load[f];
    h = h > 1 ? 1 : h;
    return w->law.gain_scale[iv] + h * (w->stance_scale[iv] - w->law.gain_scale[iv]);
}

/* The centre-of-pressure shift of the balance feedback, from the measured and the reference COM. */
static void balance(walk *w, const walk_options *o, const double *q, const double *v)
{
    mbs_pd_law *l = &w->law;
    double com[3], vcom[3], comr[3], vcomr[3];
    mbs_center_of_mass(l->m, l->d, q, v, com, vcom);
    mbs_center_of_mass(l->m, l->d, l->qr, l->vr, comr, vcomr);
    for (int k = 0; k < 2; k++) w->cop_shift[k] = o->balance * (com[k] - comr[k]) + o->balance_damping * (vcom[k] - vcomr[k]);
}

static void compute(mbs_controller *c, double t, const double *q, const double *v, double *tau)
{
    walk *w = c->impl;
    mbs_pd_law *l = &w->law;
    mbsi_pd_law_begin(l, q);
    mbsi_walk_reference(&w->plan, mbsi_pd_law_reference_time(l, t), c->dt, l->qr, l->vr, l->ar, l->weight, l->ncontacts);
    for (int i = 0; i < l->ncontacts; i++) l->stance[i] = l->weight[i] > 0 && l->touching[i];
    if (w->stance_scale)
        for (int iv = 0; iv < l->nv; iv++) w->kp_scale[iv] = stance_gain_scale(w, iv);
    mbsi_pd_law_torque(l, q, v, w->stance_scale ? w->kp_scale : NULL, tau);
    balance(w, c->opts, q, v);
    mbsi_pd_law_feedforward(l, l->qr, l->vr, w->cop_shift, tau);
    mbsi_pd_law_finish(l, q, v, tau);
}

/* Checkpoints: the plan's IK warm starts and previous reference, the law's last period and the
 * stiffness scales and centre-of-pressure shift of the last period. */
static void state(mbs_controller *c, mbsi_state *s)
{
    walk *w = c->impl;
    mbsi_walk_state(&w->plan, s);
    mbsi_pd_law_state(&w->law, s);
    if (w->stance_scale) mbsi_state_doubles(s, "walk.kp_scale", w->kp_scale, (size_t)w->law.nv);
    mbsi_state_doubles(s, "walk.cop_shift", w->cop_shift, 2);
}

const mbs_controller_type mbsi_controller_walk = {
    {"walk", "biped: quasi-static COM plan and footsteps, whole-body IK, joint PD with balance feedback",
     &(const mbs_option_table){"walk", spec, (int)(sizeof spec / sizeof *spec), &mbsi_pd_option_table,
                               offsetof(walk_options, pd), sizeof(walk_options)}},
    init, compute, fini, NULL, state, NULL,
};
