/* tsid.c — task-space inverse dynamics (the controller of the expo paper's Romeo walk; Del Prete
 * et al.'s TSID formulation). Each controller period one QP over x = [v̇; f], the joint
 * accelerations and the 3-D forces at the contact points of the feet in stance:
 *
 *   min  Σ_t w_t ‖A_t v̇ − b_t‖² + w_f ‖f − f_ref‖²           weighted tasks
 *   s.t. M_b v̇ + h_b = Σ_p J_p,bᵀ f_p                         the floating base's 6 rows of M v̇ + h = Sᵀτ + J_cᵀ f
 *        J_c v̇ + J̇_c v = a_c                                  each stance foot: 6-D (a sole) or 3-D (a point foot)
 *        f_p,z >= f_min,  |f_p,x|, |f_p,y| <= μ' f_p,z          linearised friction cones (inner pyramid, μ' = μ/√2)
 *
 * with the tasks centre of mass (b = c̈_ref + kp e + kd ė − J̇_com v), swing feet (6-D pose),
 * waist orientation and posture, then τ = M_j v̇ + h_j − Σ_p J_p,jᵀ f_p on the actuated joints.
 * The analytical pieces (M, h, the Jacobians and drifts) come from the Featherstone layer, the
 * QP from the engine's one solver (mbs/qp.h), warm-started from the last period's active set.
 *
 * Feet: a foot is a frame and the contact points on its body. With three points or more it is a
 * sole held in 6-D; with one it is a point foot held in 3-D. The walk names its two feet
 * (`feet`); standing and the squat use every frame that carries contact points. A foot carries
 * force when the plan has it in stance and it touches (sensing.c): a foot the plan puts down
 * that has not landed yet keeps its swing task. */
#include <math.h>
#include <stdlib.h>

#include "../liegroup/liegroup_internal.h"
#include "../spatial/spatial.h"
#include "control_internal.h"
#include "mbs/qp.h"

#define MAX_FEET 8
#define LANDING_DEPTH 0.01   /* m: where a late foot is sent below its planned place */
#define LANDING_SPEED 0.05   /* m/s: and how fast it is asked to go down */

enum { MOTION_STAND = 0, MOTION_WALK = 1, MOTION_SQUAT = 2 };

typedef struct tsid_options {
    int motion;
    char feet[MBS_OPTION_TEXT_LEN];
    int steps;
    double settle, step_length, step_height, single_support, double_support, rest;
    double period, amplitude;                       /* squat */
    double kp_com, kp_foot, kp_waist, kp_posture, kp_contact;
    double w_com, w_foot, w_waist, w_posture, w_force;
    double friction, f_min;
} tsid_options;

static const mbs_option_spec spec[] = {
    {"motion", MBS_OPT_ENUM, "", 0, 0, 0, "stand", "stand walk squat", offsetof(tsid_options, motion),
     "the reference: stand still, walk (footsteps, LIPM centre of mass, swing feet), or squat (COM height on a sinusoid)"},
    {"feet", MBS_OPT_TEXT, "", 0, 0, 0, "", NULL, offsetof(tsid_options, feet),
     "walk: the two foot frames, the first steps first (each must carry contact points)"},
    {"steps", MBS_OPT_INT, "", 1, 100, 0, "2", NULL, offsetof(tsid_options, steps),
     "walk: steps; with two, each foot moves once and they end side by side"},
    {"settle", MBS_OPT_REAL, "s", 0, 1e6, 0, "0.5", NULL, offsetof(tsid_options, settle), "time standing before the motion"},
    {"step_length", MBS_OPT_REAL, "m", -0.5, 0.5, 0, "0.2", NULL, offsetof(tsid_options, step_length),
     "walk: advance of the first and last steps (twice this for the steps between)"},
    {"step_height", MBS_OPT_REAL, "m", 0, 0.3, 0, "0.05", NULL, offsetof(tsid_options, step_height), "walk: swing foot clearance"},
    {"single_support", MBS_OPT_REAL, "s", 0, 100, MBS_OPT_OPEN_LO, "0.8", NULL, offsetof(tsid_options, single_support),
     "walk: the swing foot's flight"},
    {"double_support", MBS_OPT_REAL, "s", 0, 100, MBS_OPT_OPEN_LO, "0.4", NULL, offsetof(tsid_options, double_support),
     "walk: the ZMP's move to the next stance foot"},
    {"rest", MBS_OPT_REAL, "s", 0, 1e6, 0, "1", NULL, offsetof(tsid_options, rest), "walk: standing after the last step"},
    {"period", MBS_OPT_REAL, "s", 0, 100, MBS_OPT_OPEN_LO, "2", NULL, offsetof(tsid_options, period), "squat: period of the oscillation"},
    {"amplitude", MBS_OPT_REAL, "m", 0, 0.2, 0, "0.03", NULL, offsetof(tsid_options, amplitude),
     "squat: amplitude of the COM height (it goes down by twice this)"},
    {"kp_com", MBS_OPT_REAL, "1/s²", 0, 1e6, 0, "10", NULL, offsetof(tsid_options, kp_com),
     "centre-of-mass task stiffness (damping 2√kp, critical)"},
    {"kp_foot", MBS_OPT_REAL, "1/s²", 0, 1e6, 0, "10", NULL, offsetof(tsid_options, kp_foot), "swing-foot task stiffness"},
    {"kp_waist", MBS_OPT_REAL, "1/s²", 0, 1e6, 0, "10", NULL, offsetof(tsid_options, kp_waist), "waist orientation task stiffness"},
    {"kp_posture", MBS_OPT_REAL, "1/s²", 0, 1e6, 0, "10", NULL, offsetof(tsid_options, kp_posture),
     "posture task stiffness (towards the initial joint angles)"},
    {"kp_contact", MBS_OPT_REAL, "1/s²", 0, 1e6, 0, "30", NULL, offsetof(tsid_options, kp_contact),
     "stance feet: their acceleration pulls them back to their planned placement with this stiffness (damping 2√kp): a foot that bounces on landing comes back down"},
    {"w_com", MBS_OPT_REAL, "", 0, 1e6, 0, "1", NULL, offsetof(tsid_options, w_com), "weight of the centre-of-mass task"},
    {"w_foot", MBS_OPT_REAL, "", 0, 1e6, 0, "1", NULL, offsetof(tsid_options, w_foot), "weight of the swing-foot tasks"},
    {"w_waist", MBS_OPT_REAL, "", 0, 1e6, 0, "1", NULL, offsetof(tsid_options, w_waist), "weight of the waist orientation task"},
    {"w_posture", MBS_OPT_REAL, "", 0, 1e6, MBS_OPT_OPEN_LO, "1e-2", NULL, offsetof(tsid_options, w_posture),
     "weight of the posture task (> 0: it makes the QP strictly convex)"},
    {"w_force", MBS_OPT_REAL, "", 0, 1e6, MBS_OPT_OPEN_LO, "1e-5", NULL, offsetof(tsid_options, w_force),
     "weight of the contact forces' distance to an even share of the weight (s⁴/kg²)"},
    {"friction", MBS_OPT_REAL, "", 0, 100, MBS_OPT_OPEN_LO, "0.5", NULL, offsetof(tsid_options, friction),
     "the friction coefficient the controller assumes (its pyramid is inside this cone)"},
    {"f_min", MBS_OPT_REAL, "N", 0, 1e6, 0, "5", NULL, offsetof(tsid_options, f_min),
     "least normal force of a stance contact point"},
};

typedef struct foot {
    int frame;                     /* the foot frame (6-D) or the point's frame (3-D) */
    int dim;                       /* 6: a sole; 3: a point foot */
    int npts, pts[MBS_CONTROL_MAX_CONTACTS];   /* its contact points (indices into the system's) */
    double off[3];                 /* 3-D: the touching point in the frame (offset − r ẑ at q0) */
    double p0[3], R0[9];           /* the frame's placement at q0 */
    double p[3], R[9];             /* this period's placement (p: the point of a point foot) */
    int stance;                    /* carries force this period */
    int held;                      /* carried force last period: it keeps doing so while the plan has it in stance */
} foot;

typedef struct tsid {
    int nv, nq, nfeet, npts;
    foot feet[MAX_FEET];
    int walk_foot[2];              /* the walk's feet: indices into feet */
    mbs_walk_pattern pattern;
    double com0[3], Rb0[9];        /* initial COM and base orientation */
    mbs_data *d;
    mbs_qp *qp;
    int last_n, last_meq, last_min;/* the last QP's sizes: warm start when they repeat */
    int touching[MBS_CONTROL_MAX_CONTACTS];
    /* buffers */
    double *M, *h, *Jcom, *J6, *Jp, *drift6;   /* nv², nv, 3 nv, 6 nv per foot, 3 nv per point, 6 per foot */
    double *Jtmp;                              /* 6 x nv scratch */
    double *H, *g, *Aeq, *beq, *Ain, *bin, *x; /* the QP */
    void *block;
} tsid;

static void layout(mbs_carver *c, tsid *s)
{
    size_t nv = (size_t)s->nv, np = (size_t)s->npts, nf = (size_t)s->nfeet;
    size_t n = nv + 3 * np, meq = 6 + 6 * nf, min = 5 * np;
    s->M = mbsi_carve_doubles(c, nv * nv);
    s->h = mbsi_carve_doubles(c, nv);
    s->Jcom = mbsi_carve_doubles(c, 3 * nv);
    s->J6 = mbsi_carve_doubles(c, 6 * nv * nf);
    s->Jp = mbsi_carve_doubles(c, 3 * nv * np);
    s->drift6 = mbsi_carve_doubles(c, 6 * nf + 3 * np);
    s->Jtmp = mbsi_carve_doubles(c, 6 * nv);
    s->H = mbsi_carve_doubles(c, n * n);
    s->g = mbsi_carve_doubles(c, n);
    s->Aeq = mbsi_carve_doubles(c, meq * n);
    s->beq = mbsi_carve_doubles(c, meq);
    s->Ain = mbsi_carve_doubles(c, min * n + 1);
    s->bin = mbsi_carve_doubles(c, min + 1);
    s->x = mbsi_carve_doubles(c, n);
}

static void fini(mbs_controller *c)
{
    tsid *s = c->impl;
    if (!s) return;
    mbsi_walk_pattern_fini(&s->pattern);
    mbs_qp_free(s->qp);
    mbs_data_free(s->d);
    free(s->block);
    free(s);
    c->impl = NULL;
}

/* The feet: the walk's two named frames, or every frame that carries contact points. */
static int find_feet(mbs_controller *c, tsid *s, const tsid_options *o, mbs_error *err)
{
    const mbs_model *m = c->m;
    const mbs_system *sys = c->sys;
    if (o->motion == MOTION_WALK) {
        char word[MBS_NAME_LEN];
        int n = 0, len;
        for (const char *p = o->feet; (len = mbsi_next_word(&p, word, sizeof word)) != 0; n++) {
            if (len < 0) return mbsi_fail(err, MBS_ERR_ARG, "feet: frame name too long");
            int f = mbs_frame_id(m, word);
            if (f < 0) return mbsi_fail(err, MBS_ERR_ARG, "feet: no frame '%s' in model '%s'", word, mbs_model_name(m));
            if (n < 2) { s->feet[n].frame = f; s->walk_foot[n] = n; }
        }
        if (n != 2) return mbsi_fail(err, MBS_ERR_ARG, "feet: the walk needs two foot frames, got %d", n);
        s->nfeet = 2;
    } else {
        for (int i = 0; i < sys->nfeet; i++) {
            int f = sys->contacts[i].frame, seen = 0;
            for (int k = 0; k < s->nfeet; k++) seen |= mbs_frame_body(m, s->feet[k].frame) == mbs_frame_body(m, f);
            if (seen) continue;
            if (s->nfeet == MAX_FEET) return mbsi_fail(err, MBS_ERR_ARG, "more than %d feet", MAX_FEET);
            s->feet[s->nfeet++].frame = f;
        }
    }
    for (int k = 0; k < s->nfeet; k++) {
        foot *ft = &s->feet[k];
        int body = mbs_frame_body(m, ft->frame);
        for (int i = 0; i < sys->nfeet; i++)
            if (mbs_frame_body(m, sys->contacts[i].frame) == body) ft->pts[ft->npts++] = i;
        if (!ft->npts)
            return mbsi_fail(err, MBS_ERR_ARG, "feet: foot '%s' has no contact point ([contact] frames or points on its body)",
                             mbs_frame_name(m, ft->frame));
        if (ft->npts == 2)
            return mbsi_fail(err, MBS_ERR_ARG, "foot '%s' has two contact points: a point foot has one, a sole three or more",
                             mbs_frame_name(m, ft->frame));
        ft->dim = ft->npts >= 3 ? 6 : 3;
        s->npts += ft->npts;
    }
    return MBS_OK;
}

static int init(mbs_controller *c, mbs_error *err)
{
    const tsid_options *o = c->opts;
    const mbs_model *m = c->m;
    if (!(mbs_model_njoints(m) > 0 && mbs_joint_type_of(m, 0) == MBS_JOINT_FREEFLYER))
        return mbsi_fail(err, MBS_ERR_ARG, "controller 'tsid' needs a floating base");
    tsid *s = calloc(1, sizeof *s);
    if (!s) return mbsi_fail(err, MBS_ERR_NOMEM, "out of memory");
    c->impl = s;
    s->nv = mbs_model_nv(m);
    s->nq = mbs_model_nq(m);
    int rc = find_feet(c, s, o, err);
    if (rc != MBS_OK) { fini(c); return rc; }
    mbs_carver cv = {NULL, 0};
    layout(&cv, s);
    s->block = mbsi_carver_alloc(&cv);
    s->d = mbs_data_new(m);
    int n = s->nv + 3 * s->npts, meq = 6 + 6 * s->nfeet, min = 5 * s->npts;
    s->qp = mbs_qp_new(n, meq, min, err);
    if (!s->block || !s->d || !s->qp) {
        fini(c);
        return err && err->code ? err->code : mbsi_fail(err, MBS_ERR_NOMEM, "out of memory");
    }
    layout(&cv, s);
    /* the initial placements: the feet's, the base's, the centre of mass */
    mbs_forward_kinematics(m, s->d, c->q0, NULL, NULL);
    for (int k = 0; k < s->nfeet; k++) {
        foot *ft = &s->feet[k];
        mbs_frame_placement(m, s->d, ft->frame, ft->R0, ft->p0);
        if (ft->dim == 3) {
            /* a point foot: its frame is the contact's, the point is where it touches (a sphere's
             * lowest point, in frame coordinates) */
            const mbs_contact *ct = &c->sys->contacts[ft->pts[0]];
            ft->frame = ct->frame;
            mbs_frame_placement(m, s->d, ft->frame, ft->R0, ft->p0);
            for (int i = 0; i < 3; i++) ft->off[i] = ct->offset[i] - ct->radius * ft->R0[2 + 3 * i];
            double t3[3];
            m3_mulv(ft->R0, ft->off, t3);
            for (int i = 0; i < 3; i++) ft->p0[i] += t3[i];   /* the point's place, not the frame's */
        }
    }
    m3_from_quat(c->q0 + 3, s->Rb0);
    mbs_center_of_mass(m, s->d, c->q0, NULL, s->com0, NULL);
    if (o->motion == MOTION_WALK) {
        if (s->feet[0].dim != 6 || s->feet[1].dim != 6)
            rc = mbsi_fail(err, MBS_ERR_ARG, "feet: the walk needs two soles (three contact points or more on each)");
        mbs_walk_pattern_options po = {{s->feet[0].frame, s->feet[1].frame}, o->steps, o->settle, o->double_support,
                                       o->single_support, o->rest, o->step_length, o->step_height};
        if (rc == MBS_OK) rc = mbsi_walk_pattern_init(&s->pattern, c->sys, c->q0, &po, err);
        if (rc != MBS_OK) { fini(c); return rc; }
    }
    return MBS_OK;
}

/* The reference at t: the COM's, and per foot stance or a swing pose (position, velocity,
 * acceleration; the orientation is the initial one). */
typedef struct reference {
    double com[3], com_v[3], com_a[3];
    int stance[MAX_FEET];
    double load[MAX_FEET];         /* each foot's planned share of the weight */
    double p[MAX_FEET][3], v[MAX_FEET][3], a[MAX_FEET][3];
} reference;

static void reference_at(const tsid *s, const tsid_options *o, double t, reference *r)
{
    memcpy(r->com, s->com0, sizeof r->com);
    memset(r->com_v, 0, sizeof r->com_v);
    memset(r->com_a, 0, sizeof r->com_a);
    for (int k = 0; k < s->nfeet; k++) {
        r->stance[k] = 1;
        r->load[k] = 1.0 / s->nfeet;
        memcpy(r->p[k], s->feet[k].p0, sizeof r->p[k]);
        memset(r->v[k], 0, sizeof r->v[k]);
        memset(r->a[k], 0, sizeof r->a[k]);
    }
    double tm = t - o->settle;
    if (o->motion == MOTION_SQUAT && tm > 0) {
        /* z = z0 − A (1 − cos 2π t/T), starting at rest */
        double w = 2 * MBS_PI / o->period;
        r->com[2] -= o->amplitude * (1 - cos(w * tm));
        r->com_v[2] = -o->amplitude * w * sin(w * tm);
        r->com_a[2] = -o->amplitude * w * w * cos(w * tm);
    }
    if (o->motion == MOTION_WALK) {
        mbs_walk_sample ws;
        mbsi_walk_pattern_sample(&s->pattern, t, &ws);
        memcpy(r->com, ws.com, sizeof r->com);
        memcpy(r->com_v, ws.com_v, sizeof r->com_v);
        memcpy(r->com_a, ws.com_a, sizeof r->com_a);
        for (int f = 0; f < 2; f++) {
            r->stance[f] = ws.stance[f];
            r->load[f] = ws.load[f];
            memcpy(r->p[f], ws.p[f], sizeof r->p[f]);
            memcpy(r->v[f], ws.v[f], sizeof r->v[f]);
            memcpy(r->a[f], ws.a[f], sizeof r->a[f]);
        }
    }
}

/* The kinematic and dynamic pieces at (q, v): M, h, J_com and its drift, each foot's Jacobian
 * (LOCAL_WORLD_ALIGNED, at the frame or the point foot's touching point), drift and placement,
 * and each contact point's linear Jacobian at its touching point. One kinematics pass with
 * (q, v, q̈ = 0) serves every drift, one with q every Jacobian. */
static void model_terms(mbs_controller *c, tsid *s, const double *q, const double *v, double com_drift[3])
{
    const mbs_model *m = c->m;
    mbs_data *d = s->d;
    int nv = s->nv;
    mbs_com_jacobian(m, d, q, v, s->Jcom, com_drift);   /* leaves the kinematics of (q, v, 0) */
    for (int k = 0; k < s->nfeet; k++) {
        const foot *ft = &s->feet[k];
        mbs_frame_classical_acceleration(m, d, ft->frame, ft->dim == 3 ? ft->off : NULL, MBS_LOCAL_WORLD_ALIGNED,
                                         s->drift6 + 6 * k);
    }
    mbs_crba(m, d, q, s->M);
    mbs_nonlinear_effects(m, d, q, v, s->h);
    mbs_compute_joint_jacobians(m, d, q);
    int ip = 0;
    for (int k = 0; k < s->nfeet; k++) {
        foot *ft = &s->feet[k];
        mbs_frame_jacobian(m, d, ft->frame, ft->dim == 3 ? ft->off : NULL, MBS_LOCAL_WORLD_ALIGNED, s->J6 + (size_t)6 * nv * k, 6);
        mbs_frame_placement(m, d, ft->frame, ft->R, ft->p);
        if (ft->dim == 3) {
            double t[3];
            m3_mulv(ft->R, ft->off, t);
            for (int i = 0; i < 3; i++) ft->p[i] += t[i];
        }
        for (int j = 0; j < ft->npts; j++, ip++) {
            const mbs_contact *ct = &c->sys->contacts[ft->pts[j]];
            double R[9], p[3], off[3], *Jp = s->Jp + (size_t)3 * nv * ip;
            mbs_frame_placement(m, d, ct->frame, R, p);
            /* the point where it touches: a sphere's lowest point */
            for (int i = 0; i < 3; i++) off[i] = ct->offset[i] - ct->radius * R[2 + 3 * i];
            mbs_frame_jacobian(m, d, ct->frame, off, MBS_LOCAL_WORLD_ALIGNED, s->Jtmp, 6);
            for (int col = 0; col < nv; col++)
                for (int r = 0; r < 3; r++) Jp[r + 3 * col] = s->Jtmp[r + 6 * col];
        }
    }
}

/* The tasks' normal system: the lower triangle of H and g_acc = Σ w Aᵀ b over the v̇ block, the
 * force regularisation over the f block (stance points only, in their order). */
static void tasks(mbs_controller *c, tsid *s, const tsid_options *o, const reference *r, const double *q, const double *v,
                  const double com_drift[3], int n)
{
    const mbs_model *m = c->m;
    int nv = s->nv;
    double *H = s->H, *g = s->g;
    memset(H, 0, sizeof(double) * (size_t)n * (size_t)n);
    memset(g, 0, sizeof(double) * (size_t)n);
    /* centre of mass: c̈ = c̈_ref + kp (c_ref − c) + kd (ċ_ref − ċ), ċ = J_com v */
    double com[3], vcom[3] = {0, 0, 0}, e[6];
    mbs_center_of_mass(m, s->d, q, NULL, com, NULL);
    for (int j = 0; j < nv; j++)
        for (int k = 0; k < 3; k++) vcom[k] += s->Jcom[3 * j + k] * v[j];
    double kd = 2 * sqrt(o->kp_com);
    for (int k = 0; k < 3; k++)
        e[k] = r->com_a[k] + o->kp_com * (r->com[k] - com[k]) + kd * (r->com_v[k] - vcom[k]) - com_drift[k];
    mbsi_add_task(H, n, g, s->Jcom, 3, 0, 3, nv, e, o->w_com);
    /* waist: the base's angular acceleration (v̇[3..5], base axes) towards the initial orientation */
    double Rb[9], eb[3];
    m3_from_quat(q + 3, Rb);
    mbsi_so3_error(Rb, s->Rb0, 0, eb);   /* the turn from the base to its reference, base axes */
    kd = 2 * sqrt(o->kp_waist);
    for (int k = 0; k < 3; k++) {
        H[(3 + k) * (n + 1)] += o->w_waist;
        g[3 + k] += o->w_waist * (o->kp_waist * eb[k] - kd * v[3 + k]);
    }
    /* posture: every one-coordinate joint towards its initial angle */
    kd = 2 * sqrt(o->kp_posture);
    for (int j = 1; j < mbs_model_njoints(m); j++) {
        if (mbs_joint_nv(m, j) != 1 || mbs_joint_nq(m, j) != 1) continue;
        int iq = mbs_joint_idx_q(m, j), iv = mbs_joint_idx_v(m, j);
        H[iv * (n + 1)] += o->w_posture;
        g[iv] += o->w_posture * (o->kp_posture * (c->q0[iq] - q[iq]) - kd * v[iv]);
    }
    /* swing feet: the frame's position and orientation (or the point's position) on the plan */
    kd = 2 * sqrt(o->kp_foot);
    for (int k = 0; k < s->nfeet; k++) {
        const foot *ft = &s->feet[k];
        if (ft->stance) continue;
        const double *J = s->J6 + (size_t)6 * nv * k, *dr = s->drift6 + 6 * k;
        double vel[6] = {0};
        for (int col = 0; col < nv; col++)
            for (int i = 0; i < 6; i++) vel[i] += J[i + 6 * col] * v[col];
        for (int i = 0; i < 3; i++)
            e[i] = r->a[k][i] + o->kp_foot * (r->p[k][i] - ft->p[i]) + kd * (r->v[k][i] - vel[i]) - dr[i];
        if (ft->dim == 6) {
            double er[3];
            mbsi_so3_error(ft->R, ft->R0, 1, er);   /* the turn from the reference to the foot, world axes */
            for (int i = 0; i < 3; i++) e[3 + i] = -o->kp_foot * er[i] - kd * vel[3 + i] - dr[3 + i];
        }
        mbsi_add_task(H, n, g, J, 6, 0, ft->dim, nv, e, o->w_foot);
    }
    /* forces: near the plan's share of the weight on each stance foot, evenly over its points,
     * upward (a foot that has just landed is loaded as the ZMP moves onto it, not at once) */
    double total = 0, weight = mbs_model_mass(m) * 9.81;
    for (int k = 0; k < s->nfeet; k++) total += s->feet[k].stance ? r->load[k] : 0;
    int p = 0;
    for (int k = 0; k < s->nfeet; k++) {
        const foot *ft = &s->feet[k];
        if (!ft->stance) continue;
        double fz = weight * (total > 0 ? r->load[k] / total : 1.0 / s->nfeet) / ft->npts;
        for (int j = 0; j < ft->npts; j++, p++)
            for (int a = 0; a < 3; a++) {
                int col = nv + 3 * p + a;
                H[col * (n + 1)] += o->w_force;
                if (a == 2) g[col] += o->w_force * fz;
            }
    }
    /* a ridge far below every weight keeps H definite whatever the tasks leave free */
    for (int i = 0; i < nv; i++) H[i * (n + 1)] += 1e-9;
    for (int a = 0; a < n; a++)
        for (int b = a + 1; b < n; b++) H[a + (size_t)n * b] = H[b + (size_t)n * a];
    for (int i = 0; i < n; i++) g[i] = -g[i];   /* ½ xᵀHx + gᵀx: the minimum of Σ w ‖A x − b‖² */
}

/* The equalities (floating-base dynamics, stance feet) and the friction pyramids. */
static void constraints(tsid *s, const tsid_options *o, const reference *ref, const double *v, int n, int meq, int min)
{
    int nv = s->nv;
    double *A = s->Aeq, *b = s->beq;
    memset(A, 0, sizeof(double) * (size_t)meq * (size_t)n);
    /* M_b v̇ − Σ J_p,bᵀ f_p = −h_b */
    for (int r = 0; r < 6; r++) {
        for (int j = 0; j < nv; j++) A[r + (size_t)meq * j] = s->M[r + (size_t)nv * j];
        b[r] = -s->h[r];
    }
    int row = 6, p = 0, ip = 0;
    for (int k = 0; k < s->nfeet; k++) {
        const foot *ft = &s->feet[k];
        if (!ft->stance) { ip += ft->npts; continue; }
        for (int j = 0; j < ft->npts; j++, p++, ip++) {
            const double *Jp = s->Jp + (size_t)3 * nv * ip;
            for (int r = 0; r < 6; r++)
                for (int a = 0; a < 3; a++) A[r + (size_t)meq * (nv + 3 * p + a)] = -Jp[a + 3 * r];
        }
        /* J_c v̇ = kp (p_ref − p) − kd J_c v − J̇_c v: held at the planned placement */
        const double *J = s->J6 + (size_t)6 * nv * k, *dr = s->drift6 + 6 * k;
        double err[6] = {0}, kd = 2 * sqrt(o->kp_contact);
        for (int i = 0; i < 3; i++) err[i] = ref->p[k][i] - ft->p[i];
        if (ft->dim == 6) {
            mbsi_so3_error(ft->R, ft->R0, 1, err + 3);
            for (int i = 3; i < 6; i++) err[i] = -err[i];
        }
        for (int i = 0; i < ft->dim; i++, row++) {
            double vel = 0;
            for (int col = 0; col < nv; col++) {
                A[row + (size_t)meq * col] = J[i + 6 * col];
                vel += J[i + 6 * col] * v[col];
            }
            b[row] = o->kp_contact * err[i] - kd * vel - dr[i];
        }
    }
    /* f_z >= f_min and the inner pyramid of the cone: μ' f_z ± f_x >= 0, μ' f_z ± f_y >= 0 */
    double mu = o->friction / sqrt(2.0);
    double *C = s->Ain, *d = s->bin;
    memset(C, 0, sizeof(double) * (size_t)(min ? min : 1) * (size_t)n);
    for (int q = 0; q < min / 5; q++) {
        int cx = nv + 3 * q, r0 = 5 * q;
        C[r0 + (size_t)min * (cx + 2)] = 1;
        d[r0] = o->f_min;
        for (int a = 0; a < 2; a++)
            for (int sgn = 0; sgn < 2; sgn++) {
                int r = r0 + 1 + 2 * a + sgn;
                C[r + (size_t)min * (cx + 2)] = mu;
                C[r + (size_t)min * (cx + a)] = sgn ? 1 : -1;
                d[r] = 0;
            }
    }
}

static void compute(mbs_controller *c, double t, const double *q, const double *v, double *tau)
{
    tsid *s = c->impl;
    const tsid_options *o = c->opts;
    int nv = s->nv;
    reference r;
    reference_at(s, o, t, &r);
    mbsi_sense_contacts(c->sys, s->d, q, s->touching);
    /* a foot carries force when the plan has it in stance (or it comes down at the end of its
     * swing) and it has touched down: once held it
     * stays held until the plan lifts it (a landing foot bounces on the contact springs for a few
     * milliseconds, and dropping it then would leave the body on one leg); one the plan puts down
     * that has not landed yet keeps a swing task aimed below the ground, so it lands */
    int np = 0, meq = 6;
    for (int k = 0; k < s->nfeet; k++) {
        foot *ft = &s->feet[k];
        int touch = 0;
        for (int j = 0; j < ft->npts; j++) touch |= s->touching[ft->pts[j]];
        /* a swing foot that touches on its way down has landed early: it is in stance from then */
        int landing = !r.stance[k] && r.v[k][2] < 0;
        ft->stance = (r.stance[k] || landing) && (touch || ft->held);
        ft->held = ft->stance;
        if (r.stance[k] && !ft->stance) {
            r.p[k][2] -= LANDING_DEPTH;
            r.v[k][2] = -LANDING_SPEED;
        }
        if (ft->stance) { np += ft->npts; meq += ft->dim; }
    }
    int n = nv + 3 * np, min = 5 * np;
    double com_drift[3];
    model_terms(c, s, q, v, com_drift);
    tasks(c, s, o, &r, q, v, com_drift, n);
    constraints(s, o, &r, v, n, meq, min);
    int warm = n == s->last_n && meq == s->last_meq && min == s->last_min;
    int rc = mbs_qp_solve(s->qp, n, s->H, s->g, meq, s->Aeq, s->beq, min, s->Ain, s->bin, warm, s->x, NULL);
    s->last_n = n;
    s->last_meq = meq;
    s->last_min = min;
    memset(tau, 0, sizeof(double) * (size_t)nv);
    if (rc != MBS_OK) {
        /* no feasible split of the weight (the robot is falling): gravity and Coriolis only */
        s->last_n = 0;
        for (int j = 6; j < nv; j++) tau[j] = s->h[j];
        return;
    }
    /* τ = M_j v̇ + h_j − Σ J_p,jᵀ f_p */
    for (int j = 6; j < nv; j++) {
        double x = s->h[j];
        for (int k = 0; k < nv; k++) x += s->M[j + (size_t)nv * k] * s->x[k];
        tau[j] = x;
    }
    int p = 0, ip = 0;
    for (int k = 0; k < s->nfeet; k++) {
        const foot *ft = &s->feet[k];
        if (!ft->stance) { ip += ft->npts; continue; }
        for (int jj = 0; jj < ft->npts; jj++, p++, ip++) {
            const double *Jp = s->Jp + (size_t)3 * nv * ip, *f = s->x + nv + 3 * p;
            for (int j = 6; j < nv; j++) tau[j] -= Jp[3 * j] * f[0] + Jp[1 + 3 * j] * f[1] + Jp[2 + 3 * j] * f[2];
        }
    }
}

/* Checkpoints: which feet carried force last period (a held foot stays held), the last QP's sizes
 * and the solver's warm start, its solution and the sensed contacts. */
static void state(mbs_controller *c, mbsi_state *s)
{
    tsid *w = c->impl;
    for (int k = 0; k < w->nfeet; k++) {
        mbsi_state_ints(s, "tsid.stance", &w->feet[k].stance, 1);
        mbsi_state_ints(s, "tsid.held", &w->feet[k].held, 1);
        mbsi_state_doubles(s, "tsid.p", w->feet[k].p, 3);
        mbsi_state_doubles(s, "tsid.R", w->feet[k].R, 9);
    }
    mbsi_state_ints(s, "tsid.last", &w->last_n, 1);
    mbsi_state_ints(s, "tsid.last_meq", &w->last_meq, 1);
    mbsi_state_ints(s, "tsid.last_min", &w->last_min, 1);
    mbsi_state_ints(s, "tsid.touching", w->touching, MBS_CONTROL_MAX_CONTACTS);
    mbsi_state_doubles(s, "tsid.x", w->x, (size_t)w->nv + 3 * (size_t)w->npts);
    mbsi_qp_state(w->qp, s);
}

const mbs_controller_type mbsi_controller_tsid = {
    {"tsid", "task-space inverse dynamics: a QP over accelerations and contact forces (COM, feet, waist, posture tasks); walk, squat or stand",
     &(const mbs_option_table){"tsid", spec, (int)(sizeof spec / sizeof *spec), NULL, 0, sizeof(tsid_options)}},
    init, compute, fini, NULL, state, NULL,
};
