/* mdp.c — NE-MDP, the baseline of Pan and Hauser 2020: a forward Newton–Euler step (eq. 3) whose
 * contact forces are chosen by the maximal dissipation principle on the polytope contacts of
 * src/contact/polytope.c (eq. 5). Everything is evaluated at the current configuration q₋:
 *   v⁺ = v + h M⁻¹ (τ − b(q₋, v) + B(q₋) w),   q⁺ = q₋ ⊕ h v⁺        (eqs. 2–3, θ̈ = (θ̇ − θ̇₋)/h)
 * and the weights w minimise the kinetic energy after the step, ½ v⁺ᵀ M v⁺ (in the step's metric
 * with a joint impedance, see step()), a convex QP over the
 * product of the contacts' simplices (w >= 0, 1ᵀ w_x <= 1):
 *   min ½ wᵀ (h² Bᵀ M⁻¹ B) w + h (Bᵀ v_free)ᵀ w,   v_free = v + h M⁻¹ (τ − b).
 * Its Hessian is singular (k > 3 vertices per point are linearly dependent, and the solution need
 * not be unique: remark 4), so a small multiple of the identity, relative to its largest diagonal
 * entry, is added. The QP is warm-started from the previous step's active set.
 *
 * The system's joint impedance (the PD servo a controller hands over with mbs_system_set_impedance,
 * τ_imp = Kp (q_ref − q) + Kd (v_ref − v)) enters eq. 3's τ in one of two ways, the option `feedback`:
 *   semi_implicit (default): at q₋ + h v⁺ and v⁺, the stable PD of Tan et al. 2011 that sec. VI
 *     tracks with ("consistent with the backward-Euler integrator"), which moves the terms in v⁺ to
 *     the left of eq. 3: (M + h Kd + h² Kp) v⁺ = M v + h (τ + Kp (q_ref − q₋) + Kd v_ref − b + B w).
 *     The servo cannot destabilise the step, whatever h and the gains.
 *   explicit: at the step's start (q₋, θ̇₋), added to τ, M left alone: eq. 3 with
 *     τ + Kp (q_ref − q₋) + Kd (v_ref − v), the fully forward NE-MDP whose stability sec. VI and
 *     fig. 3 find limited to Δt ≤ 7 ms (a PD sampled every h on a joint of inertia m is stable only
 *     while about kd h / m < 2). The paper does not write how its NE-MDP applies the PD; this is
 *     the reading in which eq. 3 is forward in every term. */
#include <stdlib.h>

#include "../base/base.h"
#include "../contact/contact_internal.h"
#include "step_internal.h"
/* after the library headers: lapacke.h (via cblas) brings complex.h */
#include <cblas.h>

typedef struct mdp_options {
    mbs_polytope_options poly;
    double reg;
    int feedback;
} mdp_options;

/* the values of the option `feedback`, in the order of its words */
enum { FEEDBACK_SEMI_IMPLICIT = 0, FEEDBACK_EXPLICIT = 1 };

static const mbs_option_spec spec[] = {
    {"reg", MBS_OPT_REAL, "", 0, 1, 0, "1e-9", NULL, offsetof(mdp_options, reg),
     "regularisation of the QP's singular Hessian, relative to its largest diagonal entry (remark 4)"},
    {"feedback", MBS_OPT_ENUM, "", 0, 0, 0, "semi_implicit", "semi_implicit explicit", offsetof(mdp_options, feedback),
     "how the system's joint impedance (a controller's feedback = impedance) enters eq. 3: semi_implicit: at the "
     "step's end velocity, (M + h Kd + h^2 Kp) on the left (the stable PD of Tan et al. 2011), stable at any step; "
     "explicit: Kp (q_ref - q) + Kd (v_ref - v) at the step's start added to the torque, the paper's NE-MDP "
     "(sec. VI: unstable above 7 ms; stable while 2 h kd / I + h^2 kp / I < 4 on every joint of inertia I, "
     "0.31 ms on robosimian_jump: docs/benchmarks.md)"},
};

typedef struct mdp {
    mbs_polytope poly;             /* the contact model and the weights' QP */
    double reg;
    int feedback;                  /* FEEDBACK_SEMI_IMPLICIT or FEEDBACK_EXPLICIT */
    int warm;
    double *M, *Mt, *Y, *H, *g, *w, *vfree, *b, *tau, *dq, *qn;
} mdp;

static void layout(mbs_carver *c, mdp *w, size_t nq, size_t nv, size_t nw)
{
    w->qn = mbsi_carve_doubles(c, nq);
    w->M = mbsi_carve_doubles(c, nv * nv);
    w->Mt = mbsi_carve_doubles(c, nv * nv);
    w->Y = mbsi_carve_doubles(c, nv * nw);
    w->tau = mbsi_carve_doubles(c, nv);
    w->H = mbsi_carve_doubles(c, nw * nw);
    w->g = mbsi_carve_doubles(c, nw);
    w->w = mbsi_carve_doubles(c, nw);
    w->vfree = mbsi_carve_doubles(c, nv);
    w->b = mbsi_carve_doubles(c, nv);
    w->dq = mbsi_carve_doubles(c, nv);
}

static void fini(mbs_stepper *st)
{
    mdp *w = st->impl;   /* one block: the struct and every buffer */
    if (w) mbsi_polytope_fini(&w->poly);
    free(w);
    st->impl = NULL;
}

static int init(mbs_stepper *st, mbs_error *err)
{
    const mdp_options *o = st->opts;
    mdp head = {0};
    if (mbsi_polytope_init(&head.poly, st->sys, &o->poly, err) != MBS_OK) return err ? err->code : MBS_ERR_ARG;
    size_t nq = (size_t)st->sys->nq, nv = (size_t)st->sys->nv, nw = (size_t)head.poly.nw;
    mbs_carver c = {NULL, 0};
    mbsi_carve(&c, sizeof head);
    layout(&c, &head, nq, nv, nw);
    mdp *w = mbsi_carver_alloc(&c);
    if (!w) { mbsi_polytope_fini(&head.poly); return mbsi_fail(err, MBS_ERR_NOMEM, "out of memory"); }
    mbsi_carve(&c, sizeof head);
    *w = head;
    layout(&c, w, nq, nv, nw);
    w->reg = o->reg;
    w->feedback = o->feedback;
    st->impl = w;
    return MBS_OK;
}

static int step(mbs_stepper *st, double h, mbs_step_stats *stats)
{
    mdp *w = st->impl;
    mbs_system *s = st->sys;
    const mbs_model *m = s->model;
    mbs_data *d = s->data;
    const int nv = s->nv, nw = w->poly.nw;
    mbsi_polytope_eval(&w->poly, s, s->q);
    const double *B = w->poly.B;
    mbs_crba(m, d, s->q, w->M);
    memcpy(w->Mt, w->M, sizeof(double) * (size_t)nv * (size_t)nv);
    memcpy(w->tau, s->tau, sizeof(double) * (size_t)nv);
    if (s->imp_on && w->feedback == FEEDBACK_EXPLICIT) {
        /* the joint impedance explicitly, the paper's NE-MDP: its torque at (q₋, θ̇₋) joins τ in
         * eq. 3, and the step's metric stays M */
        mbsi_system_impedance_torque(s, s->q, s->v, w->tau);
    } else if (s->imp_on) {
        /* the joint impedance semi-implicitly (its torque at q₋ + h v⁺, v⁺: the stable PD of Tan et
         * al.): (M + h Kd + h² Kp) v⁺ = M v + h (τ + Kp (q_ref − q) + Kd v_ref − b + B w) */
        for (int k = 0; k < nv; k++) w->Mt[k * ((size_t)nv + 1)] += h * s->imp_kd[k] + h * h * s->imp_kp[k];
        for (int k = 0; k < nv; k++) w->vfree[k] = 0;
        mbsi_system_impedance_torque(s, s->q, w->vfree, w->tau);   /* at v = 0: Kp (q_ref − q) + Kd v_ref */
    }
    mbs_nonlinear_effects(m, d, s->q, s->v, w->b);
    for (int k = 0; k < nv; k++) {
        double x = 0;
        for (int j = 0; j < nv; j++) x += w->M[k + (size_t)nv * j] * s->v[j];
        w->vfree[k] = x + h * (w->tau[k] - w->b[k]);
    }
    if (mbs_ltdl(m, d, w->Mt) != MBS_OK)
        return mbsi_fail(&st->err, MBS_ERR_MODEL, "mdp: the mass matrix is not positive definite at t = %g s", s->t);
    mbs_ltdl_solve(m, d, w->vfree, 1, nv);
    memcpy(w->Y, B, sizeof(double) * (size_t)nv * (size_t)nw);
    mbs_ltdl_solve(m, d, w->Y, nw, nv);
    /* the kinetic energy after the step, ½ v⁺ᵀ M̃ v⁺ in the step's metric M̃ = M + h Kd + h² Kp (M
     * without an impedance or with feedback = explicit; as nmdp.c explains), with v⁺ = v_free + h Y w, Y = M̃⁻¹ B:
     * H = h² Bᵀ Y, g = h Bᵀ v_free */
    cblas_dgemm(CblasColMajor, CblasTrans, CblasNoTrans, nw, nw, nv, h * h, B, nv, w->Y, nv, 0, w->H, nw);
    cblas_dgemv(CblasColMajor, CblasTrans, nv, nw, h, B, nv, w->vfree, 1, 0, w->g, 1);
    double dmax = 0;
    for (int j = 0; j < nw; j++) dmax = fmax(dmax, w->H[j + (size_t)nw * j]);
    for (int j = 0; j < nw; j++) w->H[j + (size_t)nw * j] += w->reg * dmax + 1e-300;
    mbs_error qerr;
    int rc = mbsi_polytope_qp(&w->poly, w->H, w->g, w->warm, w->w, &qerr);
    w->warm = rc == MBS_OK;
    if (rc != MBS_OK) return mbsi_fail(&st->err, rc, "mdp: the dissipation QP failed at t = %g s: %s", s->t, qerr.msg);
    stats->iterations = nw ? mbs_qp_last_info(w->poly.qp)->iterations : 0;
    stats->substeps = 1;
    /* v⁺ = v_free + h M⁻¹ B w; the forces recorded are those applied during the step, at q₋ */
    mbsi_polytope_record(&w->poly, s, w->w);
    for (int k = 0; k < nv; k++) {
        double x = 0;
        for (int j = 0; j < nw; j++) x += w->Y[k + (size_t)nv * j] * w->w[j];
        s->v[k] = w->vfree[k] + h * x;
        w->dq[k] = h * s->v[k];
    }
    mbs_integrate(m, s->q, w->dq, w->qn);
    memcpy(s->q, w->qn, sizeof(double) * (size_t)s->nq);
    return MBS_OK;
}

/* Checkpoints: the weights' QP's warm start and whether the next step uses it. */
static void state(mbs_stepper *st, mbsi_state *s)
{
    mdp *w = st->impl;
    mbsi_state_ints(s, "mdp.warm", &w->warm, 1);
    mbsi_state_doubles(s, "mdp.w", w->w, (size_t)w->poly.nw);
    mbsi_polytope_state(&w->poly, s);
}

const mbs_stepper_type mbsi_stepper_mdp = {
    {"mdp",
     "NE-MDP (Pan and Hauser 2020, eq. 3): forward Newton-Euler with polytope contact forces of maximal "
     "dissipation (one QP per step); the baseline of nmdp; with feedback = explicit (the paper's), stable only at "
     "small steps",
     &(const mbs_option_table){"mdp", spec, (int)(sizeof spec / sizeof *spec), &mbsi_polytope_option_table,
                               offsetof(mdp_options, poly), sizeof(mdp_options)}},
    init, step, fini, 1, 0, state, NULL,
};
