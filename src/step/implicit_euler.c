/* implicit_euler.c — implicit Euler on the Lie group, as Hammoud et al. 2022, appendix A:
 * the next state x⁺ = (q⁺, v⁺) solves (eq. A1)
 *   r(x⁺) = difference(x⁺, integrate(x, δt f(x⁺))) = 0,   f(x) = (v, q̈(q, v)),
 * that is r_q = difference(q⁺, integrate(q, δt v⁺)) and r_v = v + δt q̈(x⁺) − v⁺, by Newton's
 * method with a backtracking line search on ‖r‖₂ (Armijo) and a Levenberg-style
 * regularisation μ, raised when no step along the Newton direction decreases ‖r‖. With
 * D0, D1 the Jacobians of difference(q⁺, y) in q⁺ and y, and I1 that of integrate(q, ·) at δt v⁺
 * (block-diagonal per joint), the Jacobian is
 *   ∂r/∂x⁺ = [ D0              δt D1 I1        ]
 *            [ δt ∂q̈/∂q        δt ∂q̈/∂v − 1   ],   ∂q̈/∂x = M⁻¹ (∂τ_c/∂x − ∂rnea/∂x)
 * from the analytical RNEA derivatives at q̈(x⁺) (the ABA derivatives at the total torque) and
 * the contact model's (src/contact/contact_derivatives.c). The velocity rows of the Newton
 * system N Δ = r, N = −∂r/∂x⁺, are multiplied by M, which removes every M⁻¹:
 *   [ −D0                        −δt D1 I1                   ] Δ = [ r_q   ]
 *   [ δt (∂rnea/∂q − ∂τ_c/∂q)    M + δt (∂rnea/∂v − ∂τ_c/∂v) ]     [ M r_v ]
 * and μ is added to that matrix as μ on the q rows and μ M_ii on the v rows (μ 1 on N, up to
 * the off-diagonal part of M); as μ grows the step tends to the fixed-point step Δ = r/μ.
 *
 * Warm start: the explicit Euler step (eq. 34), as the paper, which also sets the anchors and
 * the active set for the step (mbs_contact_forces with update = 1 at x). With stiff contacts
 * it can land far from the solution, so when contacts are active the consistent guess
 * (integrate(q, δt v), v) is tried too and the one with the smaller residual kept.
 *
 * Contacts: anchors and the active set are held during the solve. Newton first runs on the
 * smooth model (plain spring-dampers, no release, no cone: mbsi_contact_forces_smooth), where it
 * converges reliably; on the clamped forces alone a Newton step through a released contact sees
 * no stiffness there and overshoots into the ground. Contacts that carry no force at that
 * solution (they pull, or left the surface) are released for the rest of the step, as the
 * explicit update would release them, and the smooth model is solved again. Last, Newton runs
 * on the residual with the model's own forces (mbs_contact_forces with update = 0: unilateral,
 * inside the friction cone), whose Jacobian differentiates the cone scaling where it is smooth;
 * it differs from the smooth residual only where a contact slips. The reported residual, the
 * tolerance test and the forces left in the contacts are those of that last residual. A
 * contact that starts penetrating during the step acts from the next step on. */
#include <stdlib.h>

#include "../contact/contact_internal.h"
#include "../base/base.h"
#include "step_internal.h"
/* after the library headers: lapacke.h brings complex.h, whose macro I would rename an identifier */
#include <cblas.h>
#include <lapacke.h>

enum { LINE_SEARCH_MAX = 12 };      /* halvings of the step before the regularisation is raised */
static const double ARMIJO = 1e-4;  /* sufficient decrease of ‖r‖ per unit step */
static const double REG_FAIL = 1e-4; /* smallest μ after a failed line search */

typedef struct implicit_euler {
    double tol, reg;
    int max_iter;
    int clamped;        /* the residual uses the model's clamped forces (1) or the smooth model (0) */
    /* vectors */
    double *q1, *v1, *a1, *qt, *vt, *at, *th, *y, *r, *rt, *dx;
    /* nv x nv: ∂τ_c/∂x − ∂rnea/∂x, the mass matrix, the Lie-group Jacobians */
    double *Gq, *Gv, *M, *D0, *D1, *I1;
    /* 2nv x 2nv: the (row-scaled) Newton matrix and its regularised LU */
    double *N, *A;
    double *work;
    int *iwork;
    lapack_int *ipiv;
} implicit_euler;

typedef struct implicit_euler_options {
    double tol, reg;
    int max_iter;
} implicit_euler_options;

static const mbs_option_spec spec[] = {
    {"tol", MBS_OPT_REAL, "", 0, 1e300, MBS_OPT_OPEN_LO, "1e-6", NULL, offsetof(implicit_euler_options, tol),
     "Newton stops when the scaled residual of eq. A1 is below it"},
    {"max_iter", MBS_OPT_INT, "", 1, 100000, 0, "20", NULL, offsetof(implicit_euler_options, max_iter),
     "Newton iterations at most per step (a step that stops early counts as non-converged)"},
    {"reg", MBS_OPT_REAL, "", 0, 1e300, 0, "1e-9", NULL, offsetof(implicit_euler_options, reg),
     "first Levenberg regularisation of the Newton matrix, raised after a failed line search"},
};

static void fini(mbs_stepper *st)
{
    free(st->impl);   /* one block: the struct and every buffer */
    st->impl = NULL;
}

static void layout(mbs_carver *c, implicit_euler *w, size_t nq, size_t nv)
{
    size_t nn = nv * nv;
    double **vecq[] = {&w->q1, &w->qt, &w->y};
    for (int k = 0; k < 3; k++) *vecq[k] = mbsi_carve_doubles(c, nq);
    double **vecv[] = {&w->v1, &w->a1, &w->vt, &w->at, &w->th};
    for (int k = 0; k < 5; k++) *vecv[k] = mbsi_carve_doubles(c, nv);
    double **vec2[] = {&w->r, &w->rt, &w->dx};
    for (int k = 0; k < 3; k++) *vec2[k] = mbsi_carve_doubles(c, 2 * nv);
    double **mat[] = {&w->Gq, &w->Gv, &w->M, &w->D0, &w->D1, &w->I1};
    for (int k = 0; k < 6; k++) *mat[k] = mbsi_carve_doubles(c, nn);
    w->N = mbsi_carve_doubles(c, 4 * nn);
    w->A = mbsi_carve_doubles(c, 4 * nn);
    w->work = mbsi_carve_doubles(c, mbsi_contact_derivatives_work_size((int)nv) + 1);
    w->iwork = mbsi_carve_ints(c, nv + 1);
    w->ipiv = mbsi_carve(c, (2 * nv + 1) * sizeof(lapack_int));
}

static int init(mbs_stepper *st, mbs_error *err)
{
    const mbs_system *s = st->sys;
    const implicit_euler_options *o = st->opts;
    size_t nq = (size_t)s->nq, nv = (size_t)s->nv;
    implicit_euler head = {0};
    mbs_carver c = {NULL, 0};
    mbsi_carve(&c, sizeof head);
    layout(&c, &head, nq, nv);
    implicit_euler *w = mbsi_carver_alloc(&c);
    if (!w) return mbsi_fail(err, MBS_ERR_NOMEM, "out of memory");
    mbsi_carve(&c, sizeof head);
    layout(&c, w, nq, nv);
    st->impl = w;
    w->tol = o->tol;
    w->max_iter = o->max_iter;
    w->clamped = 1;
    w->reg = o->reg;
    return MBS_OK;
}

/* r(x1) of eq. A1 for a step of dt from the system's state; leaves a1 = q̈(x1) and the contacts
 * evaluated at x1 (anchors and active set held). Returns ‖r‖₂. */
static double residual(implicit_euler *w, mbs_system *s, double dt, const double *q1, const double *v1, double *a1,
                       double *r)
{
    const int nv = s->nv;
    if (w->clamped) mbs_system_dynamics(s, q1, v1, 0, a1);
    else mbsi_system_dynamics_smooth(s, q1, v1, a1);
    for (int k = 0; k < nv; k++) w->th[k] = dt * v1[k];
    mbs_integrate(s->model, s->q, w->th, w->y);
    mbs_difference(s->model, q1, w->y, r);
    double n2 = 0;
    for (int k = 0; k < nv; k++) r[nv + k] = s->v[k] + dt * a1[k] - v1[k];
    for (int k = 0; k < 2 * nv; k++) n2 += r[k] * r[k];
    return sqrt(n2);
}

/* The Newton matrix at x1 with its velocity rows multiplied by M (see the top of the file),
 * after residual() at the same x1. Leaves M(q1) in w->M. */
static void newton_matrix(implicit_euler *w, mbs_system *s, double dt, const double *q1, const double *v1,
                          const double *a1)
{
    const mbs_model *m = s->model;
    const int nv = s->nv, n2 = 2 * nv;
    const size_t nn = (size_t)nv * (size_t)nv;
    /* M q̈ + h(q, v) = τ + τ_c(q, v): G = ∂τ_c/∂x − ∂rnea/∂x at q̈ = a1 */
    mbs_rnea_derivatives(m, s->data, q1, v1, a1, w->Gq, w->Gv, w->M);
    for (size_t k = 0; k < nn; k++) { w->Gq[k] = -w->Gq[k]; w->Gv[k] = -w->Gv[k]; }
    mbsi_contact_force_derivatives(s, q1, v1, w->clamped, w->Gq, w->Gv, w->work, w->iwork, NULL);
    for (int k = 0; k < nv; k++) w->th[k] = dt * v1[k];
    mbs_integrate(m, s->q, w->th, w->y);
    mbs_dintegrate(m, s->q, w->th, MBS_ARG1, w->I1);
    mbs_ddifference(m, q1, w->y, MBS_ARG0, w->D0);
    mbs_ddifference(m, q1, w->y, MBS_ARG1, w->D1);
    double *N = w->N;
    memset(N, 0, sizeof(double) * (size_t)n2 * (size_t)n2);
    for (int c = 0; c < nv; c++)
        for (int r = 0; r < nv; r++) {
            size_t i = (size_t)r + (size_t)nv * c;
            N[r + (size_t)n2 * c] = -w->D0[i];
            N[nv + r + (size_t)n2 * c] = -dt * w->Gq[i];
            N[nv + r + (size_t)n2 * (nv + c)] = w->M[i] - dt * w->Gv[i];
        }
    /* −δt D1 I1: both are block-diagonal per joint, so multiply block by block */
    for (int b = 0; b < m->nbodies; b++) {
        int o = m->bodies[b].idx_v, nb = m->bodies[b].nv;
        for (int c = 0; c < nb; c++)
            for (int r = 0; r < nb; r++) {
                double x = 0;
                for (int k = 0; k < nb; k++)
                    x += w->D1[o + r + (size_t)nv * (o + k)] * w->I1[o + k + (size_t)nv * (o + c)];
                N[o + r + (size_t)n2 * (nv + o + c)] = -dt * x;
            }
    }
}

/* Solves the regularised, row-scaled Newton system for dx; returns 0 on success. */
static int newton_direction(implicit_euler *w, int nv, double mu)
{
    const int n2 = 2 * nv;
    memcpy(w->A, w->N, sizeof(double) * (size_t)n2 * (size_t)n2);
    for (int k = 0; k < n2; k++) w->A[k + (size_t)n2 * k] += k < nv ? mu : mu * w->M[(k - nv) * ((size_t)nv + 1)];
    memcpy(w->dx, w->r, sizeof(double) * (size_t)nv);
    for (int r = 0; r < nv; r++) {
        double x = 0;
        for (int c = 0; c < nv; c++) x += w->M[r + (size_t)nv * c] * w->r[nv + c];
        w->dx[nv + r] = x;
    }
    lapack_int info = LAPACKE_dgesv_work(LAPACK_COL_MAJOR, n2, 1, w->A, n2, w->ipiv, w->dx, n2);
    if (info != 0) return 1;
    for (int k = 0; k < n2; k++)
        if (!isfinite(w->dx[k])) return 1;
    return 0;
}

/* Newton iterations on r(x1) = 0 (in the current mode) from x1, whose residual is in w->r with
 * norm rho, until ‖r‖ <= tol or *iter reaches max_iter. Returns the final ‖r‖. */
static double newton(implicit_euler *w, mbs_system *s, double dt, double rho, int *iter, int *at_x1)
{
    const mbs_model *m = s->model;
    const int nv = s->nv;
    double mu = w->reg;
    int need_matrix = 1;
    while (!(rho <= w->tol) && *iter < w->max_iter && isfinite(rho)) {
        if (need_matrix) {
            newton_matrix(w, s, dt, w->q1, w->v1, w->a1);
            need_matrix = 0;
        }
        ++*iter;
        if (newton_direction(w, nv, mu)) { mu = fmax(10 * mu, REG_FAIL); continue; }
        /* backtracking on ‖r‖ along the retraction x1 ⊕ α Δ */
        double alpha = 1;
        int accepted = 0;
        for (int ls = 0; ls <= LINE_SEARCH_MAX; ls++, alpha *= 0.5) {
            for (int k = 0; k < nv; k++) {
                w->th[k] = alpha * w->dx[k];
                w->vt[k] = w->v1[k] + alpha * w->dx[nv + k];
            }
            mbs_integrate(m, w->q1, w->th, w->qt);
            double rt = residual(w, s, dt, w->qt, w->vt, w->at, w->rt);
            if (rt <= (1 - ARMIJO * alpha) * rho) {
                accepted = 1;
                rho = rt;
                break;
            }
        }
        if (accepted) {
            double *t;
            t = w->q1; w->q1 = w->qt; w->qt = t;
            t = w->v1; w->v1 = w->vt; w->vt = t;
            t = w->a1; w->a1 = w->at; w->at = t;
            t = w->r; w->r = w->rt; w->rt = t;
            need_matrix = 1;
            *at_x1 = 1;
            mu = fmax(w->reg, mu / 10);
        } else {
            /* no decrease along Δ: damp towards the fixed-point step and solve again */
            *at_x1 = 0;
            mu = fmax(10 * mu, REG_FAIL);
        }
    }
    return rho;
}

/* Releases the active contacts that carry no force at x1 under the clamped model (they pull or
 * have left the surface there); returns how many. Leaves the contacts evaluated at x1, clamped. */
static int release_at_x1(implicit_euler *w, mbs_system *s)
{
    mbs_contact_forces(s, w->q1, w->v1, 0);
    int n = 0;
    for (int i = 0; i < s->ncontacts; i++) {
        mbs_contact *c = &s->contacts[i];
        if (c->active && c->lambda[0] == 0 && c->lambda[1] == 0 && c->lambda[2] == 0) { mbsi_contact_release(c); n++; }
    }
    return n;
}

static int step(mbs_stepper *st, double dt, mbs_step_stats *stats)
{
    implicit_euler *w = st->impl;
    mbs_system *s = st->sys;
    const int nv = s->nv;
    /* warm start: the explicit Euler step (eq. 34), which also sets the anchors and the active set */
    mbs_system_dynamics(s, s->q, s->v, 1, w->a1);
    for (int k = 0; k < nv; k++) {
        w->th[k] = dt * s->v[k] + 0.5 * dt * dt * w->a1[k];
        w->v1[k] = s->v[k] + dt * w->a1[k];
    }
    mbs_integrate(s->model, s->q, w->th, w->q1);
    int active = 0;
    for (int i = 0; i < s->ncontacts; i++) active += s->contacts[i].active;
    w->clamped = !active;
    double rho = residual(w, s, dt, w->q1, w->v1, w->a1, w->r);
    if (active) {
        /* with stiff contacts the explicit step can land far outside the region where the
         * linearisation holds (a landing foot gains metres per second in one step) */
        for (int k = 0; k < nv; k++) w->th[k] = dt * s->v[k];
        mbs_integrate(s->model, s->q, w->th, w->qt);
        memcpy(w->vt, s->v, sizeof(double) * (size_t)nv);
        double r0 = residual(w, s, dt, w->qt, w->vt, w->at, w->rt);
        if (r0 < rho) {
            double *t;
            t = w->q1; w->q1 = w->qt; w->qt = t;
            t = w->v1; w->v1 = w->vt; w->vt = t;
            t = w->a1; w->a1 = w->at; w->at = t;
            t = w->r; w->r = w->rt; w->rt = t;
            rho = r0;
        }
    }
    /* at_x1: the contacts' state (forces, s->fext) was last evaluated at x1 in the current mode */
    int iter = 0, at_x1 = 1;
    if (active) {
        /* smooth model, then release the contacts that carry no force and solve again */
        rho = newton(w, s, dt, rho, &iter, &at_x1);
        while (release_at_x1(w, s) > 0) {
            rho = residual(w, s, dt, w->q1, w->v1, w->a1, w->r);
            at_x1 = 1;
            rho = newton(w, s, dt, rho, &iter, &at_x1);
        }
        w->clamped = 1;
        rho = residual(w, s, dt, w->q1, w->v1, w->a1, w->r);
        at_x1 = 1;
    }
    rho = newton(w, s, dt, rho, &iter, &at_x1);
    stats->iterations = iter;
    stats->residual = rho;
    stats->nonconverged = !(rho <= w->tol);
    /* leave the contact forces (and s->fext) as they act during the step: at x⁺ */
    if (!at_x1) mbs_contact_forces(s, w->q1, w->v1, 0);
    memcpy(s->q, w->q1, sizeof(double) * (size_t)s->nq);
    memcpy(s->v, w->v1, sizeof(double) * (size_t)nv);
    return MBS_OK;
}

/* For the tests (declared there): the residual r(x1) of eq. A1 for a step of dt from the
 * system's state, with the anchors and the active set the system holds and the clamped (1) or
 * smooth (0) contact forces; when N is not NULL, the row-scaled Newton matrix the stepper
 * solves with (2nv x 2nv, column-major: −diag(1, M) ∂r/∂x1) and M(q1) (nv x nv). Returns ‖r‖₂. */
double mbsi_implicit_euler_residual(mbs_stepper *st, double dt, int clamped, const double *q1, const double *v1,
                                   double *r, double *N, double *M);
double mbsi_implicit_euler_residual(mbs_stepper *st, double dt, int clamped, const double *q1, const double *v1,
                                   double *r, double *N, double *M)
{
    implicit_euler *w = st->impl;
    mbs_system *s = st->sys;
    const size_t nv = (size_t)s->nv;
    w->clamped = clamped;
    double rho = residual(w, s, dt, q1, v1, w->a1, r);
    if (N) {
        newton_matrix(w, s, dt, q1, v1, w->a1);
        memcpy(N, w->N, sizeof(double) * 4 * nv * nv);
        memcpy(M, w->M, sizeof(double) * nv * nv);
    }
    return rho;
}

/* The implicit function theorem on eq. A1 at the step's solution x⁺, with the anchors and the
 * active set the step ended with: r(x⁺; x, τ) = 0 gives dx⁺ = −(∂r/∂x⁺)⁻¹ (∂r/∂x dx + ∂r/∂τ dτ),
 * and with the row-scaled Newton matrix N = −diag(1, M) ∂r/∂x⁺ at x⁺ (unregularised),
 *   dx⁺ = N⁻¹ diag(1, M) (∂r/∂x dx + ∂r/∂τ dτ),   diag(1, M) ∂r/∂x = [ D1 I0  0 ],   M ∂r_v/∂τ = δt 1,
 *                                                                   [ 0     M ]
 * D1 the Jacobian of difference(q⁺, y) in y and I0 that of integrate(q, δt v⁺) in q: one LU of
 * N for the 3nv right-hand sides. The registry saved the state and puts it back. */
static int derivatives(mbs_stepper *st, double dt, double *A, double *B)
{
    implicit_euler *w = st->impl;
    mbs_system *s = st->sys;
    const mbs_model *m = s->model;
    const int nv = s->nv, n2 = 2 * nv;
    const size_t nn = (size_t)nv * (size_t)nv;
    /* the anchors the step's first update (its warm start) places or moves, as functions of x */
    int rc = mbsi_step_acceleration_derivatives(st, s->q, s->v, 1, st->dw.a);
    if (rc != MBS_OK) return rc;
    memcpy(s->contacts, st->dw.contacts, sizeof(mbs_contact) * (size_t)s->ncontacts);
    mbs_step_stats stats;
    memset(&stats, 0, sizeof stats);
    rc = step(st, dt, &stats);
    if (rc != MBS_OK) return rc;
    memcpy(w->q1, s->q, sizeof(double) * (size_t)s->nq);
    memcpy(w->v1, s->v, sizeof(double) * (size_t)nv);
    memcpy(s->q, st->dw.q0, sizeof(double) * (size_t)s->nq);
    memcpy(s->v, st->dw.v0, sizeof(double) * (size_t)nv);
    w->clamped = 1;
    residual(w, s, dt, w->q1, w->v1, w->a1, w->r);
    newton_matrix(w, s, dt, w->q1, w->v1, w->a1);
    /* newton_matrix left D1 at (q⁺, y), y = integrate(q, δt v⁺), and th = δt v⁺ */
    mbs_dintegrate(m, s->q, w->th, MBS_ARG0, w->I1);
    cblas_dgemm(CblasColMajor, CblasNoTrans, CblasNoTrans, nv, nv, nv, 1.0, w->D1, nv, w->I1, nv, 0.0, w->Gq, nv);
    memset(A, 0, sizeof(double) * 4 * nn);
    memset(B, 0, sizeof(double) * 2 * nn);
    for (int c = 0; c < nv; c++) {
        for (int r = 0; r < nv; r++) {
            A[r + (size_t)n2 * c] = w->Gq[r + (size_t)nv * c];
            A[nv + r + (size_t)n2 * (nv + c)] = w->M[r + (size_t)nv * c];
        }
        B[nv + c + (size_t)n2 * c] = dt;
    }
    /* M ∂r_v/∂x through those anchors: δt Σ J(q⁺)ᵀ G (K δp0 + B δṗ0) */
    mbsi_contact_anchor_chain(s, w->q1, st->dw.A0, st->dw.moved, dt, A + nv, n2, w->iwork);
    memcpy(w->A, w->N, sizeof(double) * 4 * nn);
    lapack_int info = LAPACKE_dgetrf_work(LAPACK_COL_MAJOR, n2, n2, w->A, n2, w->ipiv);
    if (info == 0) info = LAPACKE_dgetrs_work(LAPACK_COL_MAJOR, 'N', n2, n2, w->A, n2, w->ipiv, A, n2);
    if (info == 0) info = LAPACKE_dgetrs_work(LAPACK_COL_MAJOR, 'N', n2, nv, w->A, n2, w->ipiv, B, n2);
    if (info != 0)
        return mbsi_fail(&st->err, MBS_ERR_NUMERIC, "implicit_euler: the Newton matrix at the step's solution is singular "
                         "(LAPACK info %d): no derivatives there", (int)info);
    return MBS_OK;
}

/* Checkpoints: which force model the last step ended on (the next starts from it). */
static void state(mbs_stepper *st, mbsi_state *s)
{
    implicit_euler *w = st->impl;
    mbsi_state_ints(s, "implicit_euler.clamped", &w->clamped, 1);
}

const mbs_stepper_type mbsi_stepper_implicit_euler = {
    {"implicit_euler",
     "implicit Euler on the Lie group (appendix A of Hammoud et al.): Newton with analytical derivatives; "
     "stiff contacts at large steps, at a price",
     &(const mbs_option_table){"implicit_euler", spec, (int)(sizeof spec / sizeof *spec), NULL, 0,
                               sizeof(implicit_euler_options)}},
    init, step, fini, 0, 0, state, derivatives,
};
