/* nmdp.c — NE-NMDP of Pan and Hauser 2020 ("Implicit integration for articulated bodies with
 * contact via the nonconvex maximal dissipation principle"; numbers are theirs): backward Euler on
 * the Newton–Euler equations with the polytope contacts of src/contact/polytope.c evaluated at the
 * next configuration, the weights chosen by maximal dissipation (eq. 6):
 *   min_{θ, w} K(θ) = ½ θ̇ᵀ H(θ) θ̇   s.t.   G(θ, w) = H(θ) θ̈ + C(θ, θ̇) − Σ_x ∇X(x, θ)ᵀ v_x(θ) w_x − τ = 0,
 *   w_x >= 0, 1ᵀ w_x <= 1.
 * On the Lie group the unknown is the increment δ of a step of h (θ = q₋ ⊕ δ): θ̇ = δ / h and
 * θ̈ = (θ̇ − v₋) / h (eq. 2, with the velocity v₋ kept as state instead of θ₋₋), so
 *   G(δ, w) = rnea(q₋ ⊕ δ, δ/h, (δ/h − v₋)/h) − τ − τ_imp(θ, θ̇) − B(q₋ ⊕ δ) w,   B = [J_xᵀ V_x],
 * τ_imp the system's joint impedance (mbs_system_set_impedance) evaluated at the next state: the
 * stable PD of the paper's experiments, "consistent with the backward-Euler integrator". With it,
 * K is measured in the metric of the step, ½ θ̇ᵀ (M + h Kd + h² Kp) θ̇ (ours): through the implicit
 * servo a contact force moves the robot by (M + h Kd + h² Kp)⁻¹, and maximal dissipation in that
 * metric keeps MDP's defining property that a point the polytope can hold comes to rest (for the
 * linearised step it is Gauss's principle in that metric). Measured in M alone, a stiff servo makes
 * it cheaper to let a pushing foot sink into the ground than to move the body: Robosimian's
 * push-off sank its feet 4 cm at every jump at 50 ms, against 4.5 mm in the step's metric (docs/benchmarks.md). Without
 * an impedance, K is the paper's.
 *
 * Algorithm 1, the projected gradient method (PGM): from weights w⁰, θ is projected onto the
 * manifold G = 0 by Newton's iteration θ ← θ − ∇_θG⁻¹ G (eq. 9); then each outer iteration solves
 * the QP of eq. 8 for the new weights, with Δθ = ∇_θG⁻¹ B Δw from the implicit function theorem,
 *   min_x ∇Kᵀ D (x − w) + ½ (x − w)ᵀ (Dᵀ ∇²K D + (2/γ) S) (x − w),   D = ∇_θG⁻¹ B,
 *   s.t. x >= 0, 1ᵀ x_x <= 1,
 * projects again from θ + D (x − w) (the tangent prediction), and accepts the new point when K did
 * not increase; it stops when ‖θᵏ − θᵏ⁻¹‖∞ < ε. ∇K is exact (∂T/∂q by mbs_kinetic_energy_dq);
 * ∇²K is taken as M/h², its Gauss–Newton part, which keeps the QP convex (the acceptance test on
 * the true K guards the descent). The paper writes the proximal term ‖Δw‖²/γ and multiplies γ by η
 * after a rejected step; we shrink the step after a rejection (γ ← γ/η) and grow it after an
 * accepted one (γ ← ηγ), which is what a line search on K needs with the term written that way,
 * and along a run of rejections (or acceptances) the factor grows, η, η², η⁴, then η⁸: a weight
 * whose QP diagonal is small against the others' moves by its whole range until γ has shrunk by
 * orders of magnitude, which at η per rejection took Robosimian's walk up to 27 projections in
 * one step. S, the diagonal of Dᵀ ∇²K D, makes γ scale-free.
 * dissipation = contact (ours) replaces eq. 6's K by each touching point's own dissipation over
 * the step's displacement of its material point, a variational inequality that the same outer
 * iterations solve by Newton's method (contact_model says why and how): the paper's K lets stance
 * feet that their pyramids could hold creep by centimetres at 50 ms (docs/benchmarks.md).
 * order = 0 is the zeroth-order variant (eqs. 10–11): ∇_θG without the change of the vertices
 * with θ, in the QP and in the projection.
 * dynamics = pbd is the paper's PBD-NMDP (eq. 12; PBD-ZONMDP with order = 0): position-based
 * dynamics in place of Newton–Euler, the same PGM on
 *   G(δ, w) = ∇I(θ) + diag(armature) θ̈ − τ − τ_imp(θ, θ̇) − B(θ) w,
 *   I(θ) = Σ_b ∫ρ ‖X(x, θ) − 2 X(x, θ₋) + X(x, θ₋₋) − h² g‖² / 2h²   (eq. 4's I_α, α = 1),
 *   K(θ) = Σ_b ∫ρ ‖X(x, θ) − X(x, θ₋)‖² / 2h²                      (eq. 12's K),
 * the body integrals in closed form (src/dynamics/pbd.c), θ₋₋ = θ₋ ⊕ (−h v₋) (pbd_targets says
 * why), gravity's potential as the targets' shift by h² g, the rotors' inertia and the impedance
 * as in NE; ∇_δG is I's exact second derivative (pbd.c) where NE has RNEA's derivatives, and the
 * QP's ∇²K keeps its Gauss–Newton part M/h², which is the same for both K.
 *
 * ∇_θG is factorised by LU, its pivots' spread watched (the paper: a rank-revealing LU): when it is numerically singular
 * (assumption A 5.2 fails) or a projection does not decrease ‖G‖, PGM has diverged and Algorithm 2
 * splits the step in two halves, recursively (at most max_halvings deep, so that every step ends
 * in finite time: past that depth the step fails with an error). */
#include <stdlib.h>

#include "../base/base.h"
#include "../contact/contact_internal.h"
#include "../dynamics/dynamics_internal.h"
#include "../spatial/spatial.h"
#include "step_internal.h"
#include <cblas.h>

enum { PROJ_HALVINGS = 8 };   /* of a projection's Newton step before it counts as diverged */
/* γ at most: the proximal term keeps 2e-6 of the QP's diagonal, which stays positive definite although
 * a pyramid's k > 3 vertices make Dᵀ M D singular */
static const double GAMMA_MAX = 1e6;
/* γ's factor at the run-th rejection (or acceptance) in a row: η, η², η⁴, then η⁸ */
static double gamma_factor(double eta, int run)
{
    return pow(eta, (double)(1 << (run - 1 < 3 ? run - 1 : 3)));
}

typedef struct nmdp_options {
    mbs_polytope_options poly;
    int order, max_iter, proj_iter, max_halvings, warm, nonpenetration, dynamics, dissipation;
    double eps, eta, proj_tol, max_depth;
} nmdp_options;

/* the values of the options `dynamics` and `dissipation`, in the order of their words */
enum { DYN_NE = 0, DYN_PBD = 1 };
enum { DISS_KINETIC = 0, DISS_CONTACT = 1 };
/* contact dissipation: the splitting iterations of one linearised inequality at most (weights_qp) */
enum { SPLIT_ITER = 4 };

static const mbs_option_spec spec[] = {
    {"dynamics", MBS_OPT_ENUM, "", 0, 0, 0, "ne", "ne pbd", offsetof(nmdp_options, dynamics),
     "ne: NE-NMDP, backward Euler on the Newton-Euler equations (eq. 6); pbd: PBD-NMDP, position-based dynamics "
     "(eq. 12: G = ∇I_α − B w − τ, K the Euclidean kinetic energy of the body points)"},
    {"order", MBS_OPT_INT, "", 0, 1, 0, "1", NULL, offsetof(nmdp_options, order),
     "1: first-order PGM (eqs. 8–9); 0: zeroth order, the vertices' derivatives left out (eqs. 10–11)"},
    {"eps", MBS_OPT_REAL, "", 0, 1, MBS_OPT_OPEN_LO, "1e-6", NULL, offsetof(nmdp_options, eps),
     "ε: PGM stops when an accepted iteration moves θ by less (max norm, m or rad)"},
    {"eta", MBS_OPT_REAL, "", 1, 100, MBS_OPT_OPEN_LO, "1.5", NULL, offsetof(nmdp_options, eta),
     "η: factor of the proximal step γ after each accepted (×η) or rejected (÷η) iteration"},
    {"max_iter", MBS_OPT_INT, "", 1, 100000, 0, "100", NULL, offsetof(nmdp_options, max_iter),
     "outer PGM iterations at most per step (a step that stops there counts as non-converged)"},
    {"proj_tol", MBS_OPT_REAL, "", 0, 1, MBS_OPT_OPEN_LO, "1e-7", NULL, offsetof(nmdp_options, proj_tol),
     "the manifold projection (eq. 9) stops when a Newton step moves θ by less (max norm, m or rad); Newton's quadratic convergence leaves θ far closer than that"},
    {"proj_iter", MBS_OPT_INT, "", 1, 1000, 0, "20", NULL, offsetof(nmdp_options, proj_iter),
     "Newton steps of one manifold projection at most (more counts as divergence)"},
    {"max_halvings", MBS_OPT_INT, "", 0, 30, 0, "10", NULL, offsetof(nmdp_options, max_halvings),
     "Algorithm 2: how often a diverging step may be halved before the step fails"},
    {"warm", MBS_OPT_BOOL, "", 0, 1, 0, "1", NULL, offsetof(nmdp_options, warm),
     "1: PGM starts from the previous step's weights; 0: from w = 0 as Algorithm 1"},
    {"nonpenetration", MBS_OPT_BOOL, "", 0, 1, 0, "1", NULL, offsetof(nmdp_options, nonpenetration),
     "1 (ours): a touching point may not end the step deeper than max_depth, a constraint of each QP (eq. 8) "
     "linearised as the weights are; 0: the paper's NMDP, whose stance feet may sink and creep"},
    {"dissipation", MBS_OPT_ENUM, "", 0, 0, 0, "kinetic", "kinetic contact", offsetof(nmdp_options, dissipation),
     "kinetic: the paper's maximal dissipation (eq. 6), the robot's kinetic energy at the step's end made least; "
     "contact (ours): each touching point's force dissipates the most over its own displacement in the step, "
     "which keeps a stance foot that its pyramid can hold from creeping"},
    {"max_depth", MBS_OPT_REAL, "m", 0, 1, MBS_OPT_OPEN_LO, NULL, NULL, offsetof(nmdp_options, max_depth),
     "the depth a touching point may not pass with nonpenetration = 1 (default: 3 stand_depth, where the "
     "pyramid holds 27 times its force at stand_depth)"},
};

typedef struct nmdp {
    const nmdp_options *o;
    mbs_polytope poly;               /* the contact model and the weights' QP */
    int nq, nv, nw, nb;
    size_t pwork_n;
    double h;                        /* the sub-step being solved */
    double *q0, *v0, *qn;            /* start of the sub-step (nq, nv), θ (nq) */
    double *vn, *an, *G, *delta, *dtrial, *gK, *dT, *newton, *tau;
    double *w, *x, *wprev;           /* nw */
    double *Gq, *Gv, *M, *Cq, *Jint, *A;   /* nv x nv */
    double *D, *Dt, *Q, *Q0, *c, *c0;   /* nv x nw, nv x nw, nw x nw (twice), nw (twice) */
    double *Gd, *bd;                 /* the depth bounds: nc x nw, nc */
    double *dlim;                    /* nc: each point's bound this step, max(max_depth, its depth at the start) */
    double *Jp, *JpJ, *R;            /* a point's Jacobian, times Jint (3 x nv each), times D (3 x nw) */
    int contact;                     /* dissipation = contact */
    double *Ha, *xs, *cbase;         /* contact: H's antisymmetric part (nw x nw), the splitting's last x and
                                      * the QP's linear term without the split part (nw each) */
    double *place0;                  /* contact: 12 per point, its frame's placement at the step's start (R, p) */
    double dmax;                     /* max_depth (m); 0: no bound (nonpenetration = 0) */
    int pbd;                         /* dynamics = pbd */
    double *tI, *tK;                 /* pbd: 12 per body, the affine targets of I_α and of K this sub-step */
    double *pwork;                   /* pbd: mbsi_pbd_energy's scratch */
    int *ipiv;
    int have_wprev;
    int fact_here;   /* ∇G's factorisation is at (within proj_tol of) the last projection's end */
    int have_fact;   /* w->A holds a factorisation, made with a step of h_fact (kept across steps) */
    double h_fact;
    double gamma_last;
    unsigned long resets;
    /* statistics of the current step */
    int outer, substeps, converged_all;
    double min_alpha, dt_full;
} nmdp;

static void layout(mbs_carver *c, nmdp *w)
{
    size_t nq = (size_t)w->nq, nv = (size_t)w->nv, nw = (size_t)w->nw, nn = nv * nv;
    w->q0 = mbsi_carve_doubles(c, nq);
    w->qn = mbsi_carve_doubles(c, nq);
    double **vecv[] = {&w->v0, &w->vn, &w->an, &w->G, &w->delta, &w->dtrial, &w->gK, &w->dT, &w->newton, &w->tau};
    for (int k = 0; k < 10; k++) *vecv[k] = mbsi_carve_doubles(c, nv);
    double **vecw[] = {&w->w, &w->x, &w->wprev, &w->c, &w->c0};
    for (int k = 0; k < 5; k++) *vecw[k] = mbsi_carve_doubles(c, nw);
    double **mat[] = {&w->Gq, &w->Gv, &w->M, &w->Cq, &w->Jint, &w->A};
    for (int k = 0; k < 6; k++) *mat[k] = mbsi_carve_doubles(c, nn);
    w->D = mbsi_carve_doubles(c, nv * nw);
    w->Dt = mbsi_carve_doubles(c, nv * nw);
    w->Q = mbsi_carve_doubles(c, nw * nw);
    w->Q0 = mbsi_carve_doubles(c, nw * nw);
    size_t nc = (size_t)w->poly.nc;
    w->Gd = mbsi_carve_doubles(c, nc * nw);
    w->bd = mbsi_carve_doubles(c, nc);
    w->dlim = mbsi_carve_doubles(c, nc);
    w->Jp = mbsi_carve_doubles(c, 3 * nv);
    w->JpJ = mbsi_carve_doubles(c, 3 * nv);
    w->R = mbsi_carve_doubles(c, 3 * nw);
    w->ipiv = mbsi_carve(c, nv * sizeof(int));
    if (w->contact) {
        w->Ha = mbsi_carve_doubles(c, nw * nw);
        w->xs = mbsi_carve_doubles(c, nw);
        w->cbase = mbsi_carve_doubles(c, nw);
        w->place0 = mbsi_carve_doubles(c, 12 * nc);
    }
    if (w->pbd) {
        w->tI = mbsi_carve_doubles(c, 12 * (size_t)w->nb);
        w->tK = mbsi_carve_doubles(c, 12 * (size_t)w->nb);
        w->pwork = mbsi_carve_doubles(c, w->pwork_n);
    }
}

static void fini(mbs_stepper *st)
{
    nmdp *w = st->impl;   /* one block: the struct and every buffer */
    if (w) mbsi_polytope_fini(&w->poly);
    free(w);
    st->impl = NULL;
}

static int init(mbs_stepper *st, mbs_error *err)
{
    mbs_system *s = st->sys;
    nmdp head = {0};
    head.o = st->opts;
    if (mbsi_polytope_init(&head.poly, s, &head.o->poly, err) != MBS_OK) return err ? err->code : MBS_ERR_ARG;
    head.nq = s->nq;
    head.nv = s->nv;
    head.nw = head.poly.nw;
    head.nb = s->model->nbodies;
    head.pbd = head.o->dynamics == DYN_PBD;
    head.contact = head.o->dissipation == DISS_CONTACT;
    head.pwork_n = mbsi_pbd_work_doubles(s->model);
    head.resets = s->resets;
    mbs_carver c = {NULL, 0};
    mbsi_carve(&c, sizeof head);
    layout(&c, &head);
    nmdp *w = mbsi_carver_alloc(&c);
    if (!w) { mbsi_polytope_fini(&head.poly); return mbsi_fail(err, MBS_ERR_NOMEM, "out of memory"); }
    mbsi_carve(&c, sizeof head);
    *w = head;
    layout(&c, w);
    w->dmax = !w->o->nonpenetration ? 0 : isnan(w->o->max_depth) ? 3 * w->o->poly.stand_depth : w->o->max_depth;
    st->impl = w;
    return MBS_OK;
}

/* θ = q₋ ⊕ δ, θ̇ = δ / h and θ̈ = (θ̇ − v₋) / h (eq. 2) into qn, vn, an. */
static void next_state(nmdp *w, const mbs_model *m, const double *delta)
{
    mbs_integrate(m, w->q0, delta, w->qn);
    for (int k = 0; k < w->nv; k++) {
        w->vn[k] = delta[k] / w->h;
        w->an[k] = (w->vn[k] - w->v0[k]) / w->h;
    }
}

/* G(δ, wt) into w->G, leaving θ = q₋ ⊕ δ, θ̇, θ̈ in qn, vn, an and the polytopes evaluated at θ.
 * Returns ‖G‖∞ (NAN when not finite). */
static double residual(nmdp *w, mbs_system *s, const double *delta, const double *wt)
{
    const mbs_model *m = s->model;
    const int nv = w->nv, nw = w->nw;
    next_state(w, m, delta);
    if (w->pbd) {
        /* eq. 12: ∇I_α at θ (gravity in its targets), the rotors' inertia diag(armature) θ̈ */
        mbs_forward_kinematics(m, s->data, w->qn, NULL, NULL);
        mbsi_joint_jacobians_from_placements(m, s->data);
        mbsi_pbd_energy(m, s->data, w->tI, 1 / (w->h * w->h), w->G, NULL, w->pwork);
        for (int k = 0; m->any_armature && k < nv; k++) w->G[k] += m->armature[k] * w->an[k];
    } else {
        /* one kinematics pass at θ for both: RNEA's backward pass on its velocities and
         * accelerations, the polytopes on its placements */
        mbs_forward_kinematics(m, s->data, w->qn, w->vn, w->an);
        mbsi_rnea_from_kinematics(m, s->data, w->an, NULL, w->G);
        mbsi_joint_jacobians_from_placements(m, s->data);
    }
    mbsi_polytope_eval(&w->poly, s, NULL);
    /* the joint impedance (the stable PD) at the end of the step, with the torque */
    memcpy(w->tau, s->tau, (size_t)nv * sizeof(double));
    if (s->imp_on) mbsi_system_impedance_torque(s, w->qn, w->vn, w->tau);
    double g = 0;
    for (int k = 0; k < nv; k++) {
        double f = 0;
        for (int j = 0; j < nw; j++) f += w->poly.B[k + (size_t)nv * j] * wt[j];
        w->G[k] -= w->tau[k] + f;
        g = fmax(g, fabs(w->G[k]));
    }
    return isfinite(g) ? g : NAN;
}

/* ∇_δG at (δ, wt) into w->A (and M(θ), the integrate Jacobian Jint at δ). Leaves the polytopes
 * evaluated at θ. */
static void jacobian_build(nmdp *w, mbs_system *s, const double *delta, const double *wt)
{
    const mbs_model *m = s->model;
    const int nv = w->nv;
    const size_t nn = (size_t)nv * (size_t)nv;
    const double h = w->h;
    next_state(w, m, delta);
    if (w->pbd) {
        /* ∂(∇I_α)/∂θ in Gq; M for the QP's metric (∇²K's Gauss–Newton part, as NE's) */
        mbs_crba(m, s->data, w->qn, w->M);
        mbs_compute_joint_jacobians(m, s->data, w->qn);
        mbsi_pbd_energy(m, s->data, w->tI, 1 / (h * h), NULL, w->Gq, w->pwork);
    } else {
        mbs_rnea_derivatives(m, s->data, w->qn, w->vn, w->an, w->Gq, w->Gv, w->M);
    }
    mbsi_polytope_eval(&w->poly, s, NULL);   /* at qn: the derivatives left its placements and Jacobians */
    memset(w->Cq, 0, nn * sizeof(double));
    mbsi_polytope_force_dq(&w->poly, s, wt, w->o->order, w->Cq);
    for (size_t k = 0; k < nn; k++) w->Gq[k] -= w->Cq[k];
    mbs_dintegrate(m, w->q0, delta, MBS_ARG1, w->Jint);
    /* ∂G/∂δ = (∂rnea/∂q − ∂(Bw)/∂q) Jint + ∂rnea/∂v / h + M / h²; Jint is block-diagonal per joint */
    const double ih = 1 / h, ih2 = ih * ih;
    for (int b = 0; b < m->nbodies; b++) {
        int o = m->bodies[b].idx_v, nb = m->bodies[b].nv;
        for (int cc = 0; cc < nb; cc++) {
            double *Ac = w->A + (size_t)nv * (o + cc);
            const double *Gv = w->Gv + (size_t)nv * (o + cc), *Mc = w->M + (size_t)nv * (o + cc);
            if (w->pbd) {
                /* eq. 12's G depends on θ alone, but for the rotors' diag(armature) θ̈ */
                for (int r = 0; r < nv; r++) Ac[r] = 0;
                Ac[o + cc] = m->armature[o + cc] * ih2;
            } else {
                for (int r = 0; r < nv; r++) Ac[r] = Gv[r] * ih + Mc[r] * ih2;
            }
            for (int k = 0; k < nb; k++) {
                const double *Gq = w->Gq + (size_t)nv * (o + k), jk = w->Jint[o + k + (size_t)nv * (o + cc)];
                for (int r = 0; r < nv; r++) Ac[r] += Gq[r] * jk;
            }
        }
    }
    /* −∂τ_imp/∂δ: kp + kd / h on each one-coordinate joint, whose integrate adds δ */
    if (s->imp_on)
        for (int k = 0; k < nv; k++) w->A[k + (size_t)nv * k] += s->imp_kp[k] + s->imp_kd[k] / h;
}

/* jacobian_build, then w->A factorised in place by LU (partial pivoting, mbsi_lu_factor: at
 * Robosimian's 34 x 34, LAPACK's blocked dgetrf and dgetrs spread their time over row exchanges,
 * triangular solves and small products, as expm.c found at 27 x 27). The paper
 * uses a rank-revealing LU to notice a near-singular ∇G (assumption A 5.2 broken); we take the
 * pivots' spread, |U_ii| against the largest, as that detector: a condition estimate (dgecon)
 * costs as much as the factorisation itself (measured on Robosimian: about 5 µs each), and
 * complete pivoting more. Returns 1 when ∇_δG is numerically singular. */
static int jacobian(nmdp *w, mbs_system *s, const double *delta, const double *wt)
{
    const int nv = w->nv;
    jacobian_build(w, s, delta, wt);
    w->have_fact = 0;
    if (mbsi_lu_factor(nv, w->A, w->ipiv) != 0) return 1;
    double lo = INFINITY, hi = 0;
    for (int k = 0; k < nv; k++) {
        double u = fabs(w->A[k * ((size_t)nv + 1)]);
        lo = fmin(lo, u);
        hi = fmax(hi, u);
    }
    w->have_fact = lo > 1e-13 * hi;
    w->h_fact = w->h;
    return !w->have_fact;
}

/* X (nv x nrhs, leading dimension nv) ← ∇_δG⁻¹ X with the factorisation of jacobian(). */
static void solve(nmdp *w, double *X, int nrhs)
{
    mbsi_lu_solve(w->nv, w->A, w->ipiv, X, nrhs, w->Dt);   /* Dt: free scratch until the model is formed */
}

/* Manifold projection (eq. 9 / 11): Newton on G(·, wt) = 0 from δ (updated in place), until a
 * step moves θ by less than proj_tol. The tolerance is on θ, not on ‖G‖: G is in newtons and
 * newton-metres, and a light wrist turns a residual torque that looks small into a large angle,
 * which PGM's own test on θ (ε) would then see as motion. With chord = 1 the steps start on the
 * factorisation the caller left (at the point the prediction started from). A factorisation is
 * kept while its steps shrink at least fourfold each (a chord iteration, converging linearly at
 * that rate: its last step's error is within a third of proj_tol) and made afresh at the current
 * point when they do not, or when its step does not decrease ‖G‖: ∇G costs an RNEA-derivative pass
 * and an LU each, a chord step one RNEA. w->fact_here says whether the factorisation ended within
 * proj_tol of θ (its last step was a fresh Newton step). Returns 0 when converged, 1 when it
 * diverged (singular ∇G, ‖G‖ not decreasing under a fresh ∇G, or proj_iter steps without
 * converging). Leaves the polytopes evaluated at the final θ. */
static int project(nmdp *w, mbs_system *s, double *delta, const double *wt, int chord)
{
    const double tol = w->o->proj_tol;
    double g = residual(w, s, delta, wt), last = INFINITY;
    int stale = chord;   /* the factorisation was made at another point */
    w->fact_here = 0;
    for (int it = 0; it < w->o->proj_iter; it++) {
        if (!isfinite(g) || (!stale && jacobian(w, s, delta, wt))) return 1;
        int fresh = !stale;
        solve(w, w->G, 1);   /* jacobian() left G as residual() made it */
        double step = 0;
        for (int k = 0; k < w->nv; k++) { w->newton[k] = w->G[k]; step = fmax(step, fabs(w->G[k])); }
        /* the Newton step, halved while ‖G‖ does not decrease (a damped Newton: far from the
         * manifold, the stiff contact forces make the full step overshoot) */
        double g1 = NAN, frac = 1;
        for (int ls = 0; ls <= PROJ_HALVINGS; ls++, frac *= 0.5) {
            for (int k = 0; k < w->nv; k++) delta[k] -= frac * w->newton[k];
            g1 = residual(w, s, delta, wt);
            if (g1 < g || step * frac <= tol) break;
            for (int k = 0; k < w->nv; k++) delta[k] += frac * w->newton[k];
        }
        if (step <= tol && (fresh || step <= 0.25 * last)) { w->fact_here = fresh; return 0; }
        if (!(g1 < g)) {
            if (fresh) { residual(w, s, delta, wt); return 1; }   /* ‖G‖ does not decrease: divergence (section V) */
            stale = 0;   /* the old factorisation failed: Newton from where it started */
            continue;
        }
        /* the next step on this factorisation while the steps shrink fast enough */
        stale = fresh || step <= 0.25 * last;
        last = step;
        g = g1;
    }
    return 1;
}

/* K(θ) = ½ θ̇ᵀ M(θ) θ̇ at the δ of the last residual(), in the step's metric M + h Kd + h² Kp when
 * the system carries a joint impedance (see the top of the file). */
static double kinetic(nmdp *w, mbs_system *s)
{
    const mbs_model *m = s->model;
    double k = 0;
    if (!w->pbd) k = mbsi_kinetic_energy_from_kinematics(m, s->data, w->vn);   /* residual()'s kinematics */
    else {
        /* eq. 12's K: ∫ρ ‖X(θ) − X(θ₋)‖² / 2h² on residual()'s placements, and the rotors' */
        k = mbsi_pbd_energy(m, s->data, w->tK, 1 / (w->h * w->h), NULL, NULL, w->pwork);
        for (int i = 0; m->any_armature && i < w->nv; i++) k += 0.5 * m->armature[i] * w->vn[i] * w->vn[i];
    }
    if (s->imp_on)
        for (int i = 0; i < w->nv; i++) k += 0.5 * (w->h * s->imp_kd[i] + w->h * w->h * s->imp_kp[i]) * w->vn[i] * w->vn[i];
    return k;
}

/* How far the deepest touching point at the θ of the last residual() is past max_depth (m; 0 within
 * it, and without the bound). The QP's bound is linear in the weights, the depth after projection
 * not: within 1 % of max_depth over it counts as on it, else every step would end rejecting
 * iterations over the linearisation's error. */
static double depth_excess(const nmdp *w)
{
    double e = 0;
    if (w->dmax > 0)
        for (int i = 0; i < w->poly.nc; i++) e = fmax(e, w->poly.depth[i] - 1.01 * w->dlim[i]);
    return e;
}

/* Contact i's touching point's Jacobian at θ (the last evaluation) times Jint (∂θ/∂δ, block-
 * diagonal per joint), into w->JpJ (3 x nv): the point's motion per δ. */
static void point_motion(nmdp *w, mbs_system *s, int i, const double *Jint)
{
    const mbs_model *m = s->model;
    const int nv = w->nv;
    mbsi_polytope_point_jacobian(&w->poly, s, i, w->Jp);
    for (int b = 0; b < m->nbodies; b++) {
        int o = m->bodies[b].idx_v, nb = m->bodies[b].nv;
        for (int cc = 0; cc < nb; cc++)
            for (int r = 0; r < 3; r++) {
                double x = 0;
                for (int k = 0; k < nb; k++) x += w->Jp[r + 3 * (size_t)(o + k)] * Jint[o + k + (size_t)nv * (o + cc)];
                w->JpJ[r + 3 * (size_t)(o + cc)] = x;
            }
    }
}

/* The depth bounds of the QP at the accepted point (δ, w), the model's D and Jint given: each
 * point touching at θ ends the step at depth d − n·R (x − w) to first order (R = JpJ D, the point's
 * motion per weight), at most its bound d_lim = max(max_depth, its depth at the step's start) — a row
 * G_d,i x >= b_d,i with G_d,i = nᵀ R. A point already deeper (a landing faster than its pyramid
 * could stop within max_depth) may sink no further but is not pushed out: pushing it back to
 * max_depth within one step would throw the body up at (d − max_depth) / h. A point not
 * touching at θ is left free (a zero row): a bound there could ask more than its pyramid's c ζ
 * holds and leave the QP infeasible. */
static void depth_bounds(nmdp *w, mbs_system *s)
{
    const int nv = w->nv, nw = w->nw, nc = w->poly.nc;
    for (int i = 0; i < nc; i++) {
        for (int j = 0; j < nw; j++) w->Gd[i + (size_t)nc * j] = 0;
        w->bd[i] = -1;
        if (!(w->poly.depth[i] > 0)) continue;
        point_motion(w, s, i, w->Jint);
        cblas_dgemm(CblasColMajor, CblasNoTrans, CblasNoTrans, 3, nw, nv, 1, w->JpJ, 3, w->D, nv, 0, w->R, 3);
        const double *n = s->contacts[i].normal;
        double gw = 0;
        for (int j = 0; j < nw; j++) {
            double g = n[0] * w->R[3 * j] + n[1] * w->R[3 * j + 1] + n[2] * w->R[3 * j + 2];
            w->Gd[i + (size_t)nc * j] = g;
            gw += g * w->w[j];
        }
        w->bd[i] = w->poly.depth[i] - w->dlim[i] + gw;
    }
}

/* The linearised inequality of dissipation = contact at the accepted point (δ, w), D and Jint given
 * (ours; the paper's eq. 6 minimises the kinetic energy of the whole robot instead). Each touching
 * point's weights are to minimise the work of its force over the step, Σ_a x_a c_a, with
 *   c_a = s V_aᵀ Δp,   Δp = X(θ) − X(θ₋) the displacement over the step of the material point under
 * the contact at θ (X its place in its frame, at the end and at the start of the step):
 * at a solution a point whose force is inside its pyramid does not move, and one on a face moves
 * along the face's outward normal (sliding against its force, or sinking while the pyramid grows).
 * Minimising K does that only where ∇_δG is M/h²: at 50 ms its other terms (the pyramids' growth
 * with depth, gravity's and the servo's) let Robosimian's stance feet creep by centimetres, and c
 * taken as the velocity at the step's end, Bᵀδ, still left 1.6 mm per step to the second-order
 * terms of a step in which the base moves a centimetre and the limb joints undo it. A point not
 * touching at θ (its pyramid has only the ζ share) keeps the velocity form, Bᵀδ.
 * c(x) ≈ c0 + H (x − w), H = Bᵀ Jint D (the displacement's derivative, the vertices' scale held):
 * a variational inequality over the pyramids, not a minimisation (H is not symmetric), solved by
 * Newton's method: each outer iteration solves the linearised one, then projects onto G = 0. Q0
 * gets H's symmetric part, w->Ha the rest (pgm's splitting). */
static void contact_model(nmdp *w, mbs_system *s)
{
    const mbs_model *m = s->model;
    const int nv = w->nv, nw = w->nw, k = w->poly.k;
    cblas_dgemv(CblasColMajor, CblasTrans, nv, nw, 1, w->poly.B, nv, w->delta, 1, 0, w->c0, 1);
    for (int i = 0; i < w->poly.nc; i++) {
        if (!(w->poly.depth[i] > 0)) continue;
        double R[9], pf[3], d[3], loc[3], was[3], dp[3];
        mbs_frame_placement(m, s->data, s->contacts[i].frame, R, pf);
        const double *pt = w->poly.point + 3 * i, *R0 = w->place0 + 12 * i, *p0 = R0 + 9;
        for (int r = 0; r < 3; r++) d[r] = pt[r] - pf[r];
        m3t_mulv(R, d, loc);    /* the material point in its frame */
        m3_mulv(R0, loc, was);  /* and where it was, from the frame at the step's start */
        for (int r = 0; r < 3; r++) dp[r] = pt[r] - p0[r] - was[r];
        for (int a = 0; a < k; a++) {
            const double *v = w->poly.dir + 3 * ((size_t)k * i + a);
            w->c0[k * i + a] = w->poly.s[i] * (v[0] * dp[0] + v[1] * dp[1] + v[2] * dp[2]);
        }
    }
    /* Jint D into Dt (free scratch here; Jint is block-diagonal per joint), then H into Q0 */
    for (int b = 0; b < m->nbodies; b++) {
        int o = m->bodies[b].idx_v, nb = m->bodies[b].nv;
        for (int j = 0; j < nw; j++)
            for (int r = 0; r < nb; r++) {
                double x = 0;
                for (int cc = 0; cc < nb; cc++) x += w->Jint[o + r + (size_t)nv * (o + cc)] * w->D[o + cc + (size_t)nv * j];
                w->Dt[o + r + (size_t)nv * j] = x;
            }
    }
    cblas_dgemm(CblasColMajor, CblasTrans, CblasNoTrans, nw, nw, nv, 1, w->poly.B, nv, w->Dt, nv, 0, w->Q0, nw);
    for (int i = 0; i < nw; i++) {
        w->Ha[i + (size_t)nw * i] = 0;
        for (int j = 0; j < i; j++) {
            double *a = w->Q0 + i + (size_t)nw * j, *b = w->Q0 + j + (size_t)nw * i, sym = 0.5 * (*a + *b);
            w->Ha[i + (size_t)nw * j] = *a - sym;
            w->Ha[j + (size_t)nw * i] = *b - sym;
            *a = *b = sym;
        }
    }
}

/* The QP of eq. 8 at the accepted point (δ, w), D, M and Jint given: Q0 = Dᵀ (M/h²) D (∇²K's
 * Gauss–Newton part, in the step's metric with an impedance) and c0 = Dᵀ ∇K,
 * ∇K = Jintᵀ ∂T/∂q + M θ̇ / h. */
static void kinetic_model(nmdp *w, mbs_system *s)
{
    const int nv = w->nv, nw = w->nw;
    const double h = w->h;
    if (w->pbd) {
        /* ∇K = Jintᵀ ∂K/∂θ, and the rotors' diag(armature) θ̇ / h, on the placements and
         * Jacobians at θ that the last residual() or jacobian_build() left */
        mbsi_pbd_energy(s->model, s->data, w->tK, 1 / (h * h), w->dT, NULL, w->pwork);
    } else {
        mbs_kinetic_energy_dq(s->model, s->data, w->qn, w->vn, w->dT);
    }
    for (int cc = 0; cc < nv; cc++) {
        double x = 0;
        if (w->pbd) {
            for (int r = 0; r < nv; r++) x += w->Jint[r + (size_t)nv * cc] * w->dT[r];
            x += s->model->armature[cc] * w->vn[cc] / h;
        } else {
            for (int r = 0; r < nv; r++)
                x += w->Jint[r + (size_t)nv * cc] * w->dT[r] + w->M[r + (size_t)nv * cc] * w->vn[r] / h;
        }
        if (s->imp_on) x += (h * s->imp_kd[cc] + h * h * s->imp_kp[cc]) * w->vn[cc] / h;
        w->gK[cc] = x;
    }
    /* Q0 = Dᵀ (M/h²) D and c0 = Dᵀ ∇K (MD: nv x nw scratch in Dt) */
    if (s->imp_on)
        for (int k = 0; k < nv; k++) w->M[k * (nv + 1)] += h * s->imp_kd[k] + h * h * s->imp_kp[k];
    cblas_dsymm(CblasColMajor, CblasLeft, CblasLower, nv, nw, 1 / (h * h), w->M, nv, w->D, nv, 0, w->Dt, nv);
    cblas_dgemm(CblasColMajor, CblasTrans, CblasNoTrans, nw, nw, nv, 1, w->D, nv, w->Dt, nv, 0, w->Q0, nw);
    cblas_dgemv(CblasColMajor, CblasTrans, nv, nw, 1, w->D, nv, w->gK, 1, 0, w->c0, 1);
}

/* The QP of an outer iteration (eq. 8, or with dissipation = contact the linearised inequality)
 * from the matrix w->Q and linear term w->c made by pgm, into w->x; with the depth bounds, and
 * where they ask more than the pyramids hold (an infeasible QP) the paper's QP without them.
 * With dissipation = contact, H's antisymmetric part is taken by splitting: each QP has it at the
 * last solution, x ← argmin ½ xᵀ Q x + (c + Ha (x_last − w))ᵀ x, a few times while x moves (the
 * part is a few percent of the symmetric one on Robosimian). Returns 0, or 1 when no QP solved:
 * the step is then halved (Algorithm 2). With dissipation = contact that happens where H's
 * symmetric part is indefinite (at touch-downs and push-offs at 50 ms), and half the step, where
 * ∇_δG is nearer M/h², cures it. */
static int weights_qp(nmdp *w, int warm)
{
    const int nw = w->nw;
    if (w->contact) {
        memcpy(w->xs, w->w, (size_t)nw * sizeof(double));
        memcpy(w->cbase, w->c, (size_t)nw * sizeof(double));
    }
    for (int it = 0; it < (w->contact ? SPLIT_ITER : 1); it++) {
        for (int i = 0; it && i < nw; i++) {
            double x = w->cbase[i];
            for (int j = 0; j < nw; j++) x += w->Ha[i + (size_t)nw * j] * (w->xs[j] - w->w[j]);
            w->c[i] = x;
        }
        if ((w->dmax > 0 ? mbsi_polytope_qp_bounded(&w->poly, w->Q, w->c, w->Gd, w->bd, warm || it, w->x, NULL) : 1) != MBS_OK &&
            mbsi_polytope_qp(&w->poly, w->Q, w->c, 0, w->x, NULL) != MBS_OK)
            return 1;
        if (!w->contact) break;
        double moved = 0;
        for (int j = 0; j < nw; j++) {
            moved = fmax(moved, fabs(w->x[j] - w->xs[j]));
            w->xs[j] = w->x[j];
        }
        if (moved < 1e-9) break;
    }
    return 0;
}

/* Algorithm 1 for a step of w->h from (q0, v0): δ and w on the manifold at a stationary point of K
 * (with dissipation = contact, at a solution of contact_model's inequality). Returns 0 (converged,
 * or stopped at max_iter with *converged = 0) or 1 when it diverged. */
static int pgm(nmdp *w, mbs_system *s, int *converged)
{
    const nmdp_options *o = w->o;
    const int nv = w->nv, nw = w->nw;
    const double h = w->h;
    *converged = 0;
    if (o->warm && w->have_wprev) memcpy(w->w, w->wprev, (size_t)nw * sizeof(double));
    else memset(w->w, 0, (size_t)nw * sizeof(double));
    for (int k = 0; k < nv; k++) w->delta[k] = h * w->v0[k];
    /* the first projection starts as a chord on the last step's ∇G when it had this h:
     * consecutive steps are alike */
    if (project(w, s, w->delta, w->w, w->have_fact && w->h_fact == h)) return 1;
    /* γ starts where the last step's ended, less two growths, and at least 1 (Algorithm 1 starts
     * every step at γ = 1: consecutive steps are alike, and this saves most of the iterations that
     * only grow γ) */
    if (nw == 0) { *converged = 1; return 0; }   /* no contact point: backward Euler alone */
    double K = w->contact ? 0 : kinetic(w, s), gamma = fmax(1, w->gamma_last / (o->eta * o->eta)), excess = depth_excess(w);
    int qp_warm = 0, model = 0, rejected = 0;
    int streak = 0;                  /* > 0: accepted iterations in a row; < 0: rejected ones */
    double dw_rejected = INFINITY;   /* the weights' move of the last rejected iteration */
    for (int it = 0; it < o->max_iter; it++) {
        w->outer++;
        if (!model) {
            /* the QP's model at the accepted point, with ∇G as the projection's last Newton step
             * factorised it (within proj_tol of θ) or, when its chord steps left the factorisation
             * elsewhere, made here at the point (jacobian_build leaves M, Jint and the polytopes
             * there); a rejection changes only γ, not the model. D = ∇_δG⁻¹ B */
            if (!w->fact_here && jacobian(w, s, w->delta, w->w)) return 1;
            w->fact_here = 1;
            memcpy(w->D, w->poly.B, sizeof(double) * (size_t)nv * (size_t)nw);
            solve(w, w->D, nw);
            if (w->contact) contact_model(w, s);
            else kinetic_model(w, s);
            if (w->dmax > 0) depth_bounds(w, s);
            model = 1;
        }
        /* the proximal term in the QP's own metric, weight by weight (its diagonal Q_jj, with a floor
         * of 1e-6 of the largest, which with γ <= GAMMA_MAX keeps Q safely positive definite): the
         * weights are dimensionless, but Dᵀ M D / h² scales with h² F² / m and differs by orders of
         * magnitude between a foot's vertices and between feet in the air and on the ground. The
         * QP's linear term in x: c0 − Q w. */
        memcpy(w->Q, w->Q0, sizeof(double) * (size_t)nw * (size_t)nw);
        double sigma = 0;
        for (int j = 0; j < nw; j++) sigma = fmax(sigma, w->Q[j + (size_t)nw * j]);
        for (int j = 0; j < nw; j++) w->Q[j + (size_t)nw * j] += 2 * (w->Q[j + (size_t)nw * j] + 1e-6 * sigma + 1e-300) / gamma;
        for (int i = 0; i < nw; i++) {
            double x = w->c0[i];
            for (int j = 0; j < nw; j++) x -= w->Q[i + (size_t)nw * j] * w->w[j];
            w->c[i] = x;
        }
        if (weights_qp(w, qp_warm)) return 1;
        qp_warm = 1;
        double dw = 0;
        for (int j = 0; j < nw; j++) dw = fmax(dw, fabs(w->x[j] - w->w[j]));
        if (dw <= 1e-12) { *converged = 1; break; }   /* the QP keeps w: a stationary point */
        /* the tangent prediction θ + D Δw, projected with the new weights */
        for (int r = 0; r < nv; r++) {
            double x = 0;
            for (int j = 0; j < nw; j++) x += w->D[r + (size_t)nv * j] * (w->x[j] - w->w[j]);
            w->dtrial[r] = w->delta[r] + x;
        }
        if (project(w, s, w->dtrial, w->x, 1)) return 1;
        double K1 = w->contact ? 0 : kinetic(w, s), excess1 = depth_excess(w), move = 0;
        for (int r = 0; r < nv; r++) move = fmax(move, fabs(w->dtrial[r] - w->delta[r]));
        /* accepted when it brings a point past max_depth back towards it, or, no deeper past it,
         * when K does not grow: the bound comes first, then the dissipation. A move that a
         * smaller γ did not shrink (by half, after two rejections) is the depth bounds' own, not
         * the proximal step's: a point within depth_excess' 1 % over its bound, which the QP
         * brings back to it at a cost in K. Rejected for that cost, it would be asked again at
         * every iteration to max_iter: it is taken when it goes no deeper. With dissipation =
         * contact there is no K to descend (both stay 0): Newton's iterations on the inequality
         * are taken as they come, and only the depth bound rejects one. */
        int forced = streak <= -2 && dw >= 0.5 * dw_rejected && !(excess1 > excess + 1e-12);
        if (!forced && !(excess1 < excess - 1e-12) && (excess1 > excess + 1e-12 || K1 > K)) {
            dw_rejected = dw;
            /* rejected: a shorter step from the same point and model */
            streak = streak < 0 ? streak - 1 : -1;
            gamma /= gamma_factor(o->eta, -streak);
            rejected = 1;
            if (move < o->eps) { *converged = 1; break; }   /* stationary within ε: nothing to gain */
            continue;
        }
        dw_rejected = INFINITY;
        streak = streak > 0 ? streak + 1 : 1;
        gamma = fmin(gamma * gamma_factor(o->eta, streak), GAMMA_MAX);
        memcpy(w->delta, w->dtrial, (size_t)nv * sizeof(double));
        memcpy(w->w, w->x, (size_t)nw * sizeof(double));
        K = K1;
        excess = excess1;
        model = rejected = 0;
        if (move < o->eps) { *converged = 1; break; }
    }
    w->gamma_last = gamma;
    /* leave the polytopes evaluated at the accepted θ */
    if (rejected) residual(w, s, w->delta, w->w);
    return 0;
}

/* The affine targets of PBD-NMDP's I_α and K for a sub-step of w->h from (q0, v0) (eq. 4 with
 * α = 1, the step being h): each point of each body pulled towards 2 X(x, θ₋) − X(x, θ₋₋) + h² g,
 * θ₋₋ = θ₋ ⊕ (−h v₋) the configuration a step of h back along the velocity (the paper keeps θ₋₋,
 * the previous step's configuration, as state; with (q, v) as state this is the same point when
 * the previous step had this h), and K's towards X(x, θ₋). Gravity's potential −Σ m g·p_c enters
 * I_α as that shift of the targets by h² g. */
static void pbd_targets(nmdp *w, mbs_system *s)
{
    const mbs_model *m = s->model;
    mbs_data *d = s->data;
    const double h = w->h;
    /* θ₋₋ into qn, through dT (both scratch until the sub-step's first residual) */
    for (int k = 0; k < w->nv; k++) w->dT[k] = -h * w->v0[k];
    mbs_integrate(m, w->q0, w->dT, w->qn);
    mbs_forward_kinematics(m, d, w->qn, NULL, NULL);
    for (int b = 0; b < w->nb; b++) {
        memcpy(w->tI + 12 * b, d->oR + 9 * b, 9 * sizeof(double));
        memcpy(w->tI + 12 * b + 9, d->op + 3 * b, 3 * sizeof(double));
    }
    mbs_forward_kinematics(m, d, w->q0, NULL, NULL);
    for (int b = 0; b < w->nb; b++) {
        double *tI = w->tI + 12 * b, *tK = w->tK + 12 * b;
        memcpy(tK, d->oR + 9 * b, 9 * sizeof(double));
        memcpy(tK + 9, d->op + 3 * b, 3 * sizeof(double));
        for (int k = 0; k < 12; k++) tI[k] = 2 * tK[k] - tI[k];
        for (int k = 0; k < 3; k++) tI[9 + k] += h * h * m->gravity[k];
    }
}

/* Algorithm 2: a step of h from the system's state, halved recursively while PGM diverges. */
static int advance(mbs_stepper *st, double h, int depth)
{
    nmdp *w = st->impl;
    mbs_system *s = st->sys;
    w->h = h;
    memcpy(w->q0, s->q, (size_t)w->nq * sizeof(double));
    memcpy(w->v0, s->v, (size_t)w->nv * sizeof(double));
    if (w->pbd) pbd_targets(w, s);
    if (w->dmax > 0) {
        mbsi_polytope_eval(&w->poly, s, w->q0);
        for (int i = 0; i < w->poly.nc; i++) w->dlim[i] = fmax(w->dmax, w->poly.depth[i]);
    }
    if (w->contact) {
        /* the contact frames at the step's start, where contact_model finds each material point */
        if (!(w->dmax > 0)) mbs_forward_kinematics(s->model, s->data, w->q0, NULL, NULL);
        for (int i = 0; i < w->poly.nc; i++)
            mbs_frame_placement(s->model, s->data, s->contacts[i].frame, w->place0 + 12 * i, w->place0 + 12 * i + 9);
    }
    int converged = 0;
    if (pgm(w, s, &converged) == 0) {
        w->converged_all &= converged;
        w->substeps++;
        mbs_integrate(s->model, w->q0, w->delta, s->q);
        for (int k = 0; k < w->nv; k++) s->v[k] = w->delta[k] / h;
        memcpy(w->wprev, w->w, (size_t)w->nw * sizeof(double));
        w->have_wprev = 1;
        w->min_alpha = fmin(w->min_alpha, h / w->dt_full);
        /* the forces of the step, at its end (backward Euler): pgm() left the polytopes
         * evaluated at the accepted θ */
        mbsi_polytope_record(&w->poly, s, w->w);
        return MBS_OK;
    }
    if (depth >= w->o->max_halvings)
        return mbsi_fail(&st->err, MBS_ERR_NUMERIC,
                         "nmdp: the projected gradient method diverged at t = %.9g s even with the step halved %d times "
                         "(h = %g s); try a smaller [stepper] dt or a larger max_halvings",
                         s->t, depth, h);
    int rc = advance(st, h / 2, depth + 1);
    return rc != MBS_OK ? rc : advance(st, h / 2, depth + 1);
}

static int step(mbs_stepper *st, double dt, mbs_step_stats *stats)
{
    nmdp *w = st->impl;
    mbs_system *s = st->sys;
    if (s->resets != w->resets) { w->have_wprev = w->have_fact = 0; w->resets = s->resets; }
    w->outer = 0;
    w->substeps = 0;
    w->converged_all = 1;
    w->min_alpha = 1;
    w->dt_full = dt;
    int rc = advance(st, dt, 0);
    stats->iterations = w->outer;
    stats->nonconverged = !w->converged_all;
    stats->alpha = w->min_alpha;
    stats->substeps = w->substeps;
    return rc;
}

/* For the tests (declared there): G(δ, w) of a step of h from (q0, v0) into G (nv) and, when A is
 * not NULL, ∇_δG (nv x nv, column-major); returns ‖G‖∞ (absolute). */
double mbsi_nmdp_residual(mbs_stepper *st, const double *q0, const double *v0, double h, const double *delta,
                          const double *wt, double *G, double *A);
double mbsi_nmdp_residual(mbs_stepper *st, const double *q0, const double *v0, double h, const double *delta,
                          const double *wt, double *G, double *A)
{
    nmdp *w = st->impl;
    mbs_system *s = st->sys;
    const size_t nv = (size_t)w->nv;
    memcpy(w->q0, q0, (size_t)w->nq * sizeof(double));
    memcpy(w->v0, v0, nv * sizeof(double));
    w->h = h;
    if (w->pbd) pbd_targets(w, s);
    residual(w, s, delta, wt);
    memcpy(G, w->G, nv * sizeof(double));
    if (A) {
        jacobian_build(w, s, delta, wt);
        memcpy(A, w->A, nv * nv * sizeof(double));
    }
    double g = 0;
    for (size_t k = 0; k < nv; k++) g = fmax(g, fabs(G[k]));
    return g;
}

/* For the tests: the weights of the last step (nw = contacts x vertices). */
const double *mbsi_nmdp_weights(const mbs_stepper *st);
const double *mbsi_nmdp_weights(const mbs_stepper *st) { return ((const nmdp *)st->impl)->wprev; }

/* Checkpoints: the previous step's weights (PGM's warm start), γ where the last step ended, the
 * last ∇G's factorisation (the next step's first chord), the reset count it saw, and the weights'
 * QP's warm start. */
static void state(mbs_stepper *st, mbsi_state *s)
{
    nmdp *w = st->impl;
    mbsi_state_doubles(s, "nmdp.w", w->w, (size_t)w->nw);
    mbsi_state_doubles(s, "nmdp.wprev", w->wprev, (size_t)w->nw);
    mbsi_state_ints(s, "nmdp.have_wprev", &w->have_wprev, 1);
    mbsi_state_doubles(s, "nmdp.gamma_last", &w->gamma_last, 1);
    mbsi_state_ints(s, "nmdp.have_fact", &w->have_fact, 1);
    mbsi_state_doubles(s, "nmdp.h_fact", &w->h_fact, 1);
    mbsi_state_doubles(s, "nmdp.A", w->A, (size_t)w->nv * (size_t)w->nv);
    mbsi_state_ints(s, "nmdp.ipiv", w->ipiv, (size_t)w->nv);
    mbsi_state_bytes(s, "nmdp.resets", &w->resets, sizeof w->resets);
    mbsi_polytope_state(&w->poly, s);
}

const mbs_stepper_type mbsi_stepper_nmdp = {
    {"nmdp",
     "NE-NMDP (Pan and Hauser 2020, eq. 6): backward-Euler Newton-Euler with polytope contact forces of "
     "maximal dissipation, by the projected gradient method (Algorithms 1-2); stable at 50 ms steps; "
     "dynamics = pbd: PBD-NMDP (eq. 12)",
     &(const mbs_option_table){"nmdp", spec, (int)(sizeof spec / sizeof *spec), &mbsi_polytope_option_table,
                               offsetof(nmdp_options, poly), sizeof(nmdp_options)}},
    init, step, fini, 1, 0, state, NULL,
};
