/* ilqr.c — iterative LQR with box limits on the controls (mbs/ilqr.h), on any stepper.
 *
 * One iteration (Tassa, Erez & Todorov 2012, sec. II; the box of Tassa, Mansard & Todorov 2014):
 *  - the nominal trajectory's Jacobians A_k, B_k from mbs_stepper_derivatives at each knot's saved
 *    stepper state (the controls' columns only);
 *  - the backward pass, with the cost's Gauss-Newton Hessians (l_xx = Jᵀ Q J, J the Jacobian of
 *    difference(q_ref, ·) on the δq rows):
 *      Q_x = l_x + Aᵀ V_x,  Q_u = l_u + Bᵀ V_x,  Q_xx = l_xx + Aᵀ V_xx A,
 *      Q_uu = l_uu + Bᵀ V_xx B + μ 1,  Q_ux = Bᵀ V_xx A,
 *    the feed-forward step k = argmin ½ δuᵀ Q_uu δu + Q_uᵀ δu within the limits (lo − u <= δu <= hi − u),
 *    by the engine's one QP solver, and the gains K = −Q_uu,ff⁻¹ Q_ux,f on the controls it leaves
 *    free (zero rows for the clamped ones), then
 *      V_x = Q_x + Kᵀ Q_uu k + Kᵀ Q_u + Q_uxᵀ k,  V_xx = Q_xx + Kᵀ Q_uu K + Kᵀ Q_ux + Q_uxᵀ K,
 *    the last Q_xx + Q_uxᵀ K for these gains (Q_uu,ff K_f = −Q_ux,f);
 *    a Q_uu that is not positive definite raises μ (×10) and restarts the pass;
 *  - the forward pass: u = clamp(ū + α k + K δx) for α = 1, ½, … (at most 10 halvings), accepted
 *    when the cost falls by at least 1e-4 of the decrease the quadratic model expects,
 *    α (Σ kᵀ Q_u) + α² (Σ ½ kᵀ Q_uu k); μ then falls (÷ 10, down to 1e-9), else it rises.
 * Costs are in the tangent space: δx = (difference(q_ref, q), v − v_ref). The user's residuals add
 * l_x += J_rᵀ W r and l_xx += J_rᵀ W J_r (Gauss–Newton: their second derivatives are left out). */
#include <math.h>
#include <stdlib.h>
#include <string.h>

#include "control_internal.h"
#include "../step/step_internal.h"
#include "mbs/ilqr.h"
#include "mbs/qp.h"
/* after the library headers: cblas.h brings complex.h, whose macro I would rename an identifier */
#include <cblas.h>

enum { HALVINGS = 10 };
static const double MU_MIN = 1e-9, MU_MAX = 1e10, ARMIJO = 1e-4;

struct mbs_ilqr {
    mbs_stepper *st;
    mbs_system *sys;
    int N, nu, nv, nq, n;          /* horizon, controls, velocities, coordinates, 2nv */
    double dt;
    int *ctl;                      /* nu: the controls' velocity coordinates */
    double *Q, *R, *Qf, *qref, *vref, *uref;   /* 2nv, nu, 2nv, nq, nv, nu */
    double *lo, *hi;               /* nu each (−∞, +∞ without limits) */
    double *u, *un;                /* N x nu: the controls, a trial's */
    double *xs, *xn;               /* (N + 1) x (nq + nv): the states, a trial's */
    unsigned char *saved, *savedn; /* (N + 1) stepper states: the nominal's, a trial's */
    size_t ssize;
    double *tau0;                  /* nv: τ at the solve's start (the entries not controlled) */
    double *A, *B, *K, *kff;       /* N x n², N x n nu, N x nu n, N x nu */
    double *Vx, *Vxx, *Qx, *Qu, *Qxx, *Quu, *Qux, *T, *T2;   /* n, n², n, nu, n², nu², nu n, n², n² */
    double *dx, *gx, *J;           /* n, n, nv²: a state's tangent error, the cost's gradient, difference's Jacobian */
    double *H, *g, *Ain, *bin, *du;   /* the box QP: nu², nu, 2nu x nu, 2nu, nu */
    int *freei;                    /* nu: the controls the box leaves free */
    mbs_qp *qp;
    /* the user's residuals: m per knot, their values, weights and Jacobian (m, m, m x n), allocated
     * by mbs_ilqr_set_residuals */
    int nr;
    mbs_ilqr_residual_fn rf;
    void *ruser;
    mbs_ilqr_knot_fn knot;  /* the user's hook before each knot's step, and its argument */
    void *kuser;
    double *r, *rw, *rJ;
    int warm_policy;               /* 1 after mbs_ilqr_shift: the next solve's first rollout follows the shifted policy */
    int nominal;                   /* 1 once a rollout was accepted: xs holds states (a policy to follow) */
    mbs_derivatives_method dmethod;   /* the step Jacobians' method (mbs_ilqr_set_derivatives) */
    double mu;
    mbs_error err;
    void *block;
};

static void layout(mbs_carver *c, mbs_ilqr *p)
{
    size_t N = (size_t)p->N, nu = (size_t)p->nu, n = (size_t)p->n, nv = (size_t)p->nv, nx = (size_t)(p->nq + p->nv);
    p->ctl = mbsi_carve_ints(c, nu);
    p->Q = mbsi_carve_doubles(c, n);
    p->R = mbsi_carve_doubles(c, nu);
    p->Qf = mbsi_carve_doubles(c, n);
    p->qref = mbsi_carve_doubles(c, (size_t)p->nq);
    p->vref = mbsi_carve_doubles(c, nv);
    p->uref = mbsi_carve_doubles(c, nu);
    p->lo = mbsi_carve_doubles(c, nu);
    p->hi = mbsi_carve_doubles(c, nu);
    p->u = mbsi_carve_doubles(c, N * nu);
    p->un = mbsi_carve_doubles(c, N * nu);
    p->xs = mbsi_carve_doubles(c, (N + 1) * nx);
    p->xn = mbsi_carve_doubles(c, (N + 1) * nx);
    p->saved = mbsi_carve(c, (N + 1) * p->ssize);
    p->savedn = mbsi_carve(c, (N + 1) * p->ssize);
    p->tau0 = mbsi_carve_doubles(c, nv);
    p->A = mbsi_carve_doubles(c, N * n * n);
    p->B = mbsi_carve_doubles(c, N * n * nu);
    p->K = mbsi_carve_doubles(c, N * n * nu);
    p->kff = mbsi_carve_doubles(c, N * nu);
    p->Vx = mbsi_carve_doubles(c, n);
    p->Vxx = mbsi_carve_doubles(c, n * n);
    p->Qx = mbsi_carve_doubles(c, n);
    p->Qu = mbsi_carve_doubles(c, nu);
    p->Qxx = mbsi_carve_doubles(c, n * n);
    p->Quu = mbsi_carve_doubles(c, nu * nu);
    p->Qux = mbsi_carve_doubles(c, nu * n);
    p->T = mbsi_carve_doubles(c, n * n);
    p->T2 = mbsi_carve_doubles(c, n * n);
    p->dx = mbsi_carve_doubles(c, n);
    p->gx = mbsi_carve_doubles(c, n);
    p->J = mbsi_carve_doubles(c, nv * nv);
    p->H = mbsi_carve_doubles(c, nu * nu);
    p->g = mbsi_carve_doubles(c, nu);
    p->Ain = mbsi_carve_doubles(c, 2 * nu * nu);
    p->bin = mbsi_carve_doubles(c, 2 * nu);
    p->du = mbsi_carve_doubles(c, nu);
    p->freei = mbsi_carve_ints(c, nu);
}

mbs_ilqr *mbs_ilqr_new(mbs_stepper *st, int horizon, double dt, const int *controls, int nu, mbs_error *err)
{
    if (!st || !controls) { mbsi_fail(err, MBS_ERR_ARG, "mbs_ilqr_new: no %s (NULL)", st ? "controls" : "stepper"); return NULL; }
    mbs_system *sys = mbs_stepper_system(st);
    const mbs_model *m = mbs_system_model(sys);
    const int nv = mbs_model_nv(m);
    if (horizon < 1 || !(dt > 0) || !isfinite(dt) || nu < 1 || nu > nv) {
        mbsi_fail(err, MBS_ERR_ARG, "mbs_ilqr_new: horizon %d (>= 1), dt %g s (> 0) and nu %d (1 to nv = %d) are not all valid",
                  horizon, dt, nu, nv);
        return NULL;
    }
    for (int j = 0; j < nu; j++)
        if (controls[j] < 0 || controls[j] >= nv) {
            mbsi_fail(err, MBS_ERR_ARG, "mbs_ilqr_new: controls[%d] = %d is not a velocity index (0 to %d)", j, controls[j], nv - 1);
            return NULL;
        }
    mbs_ilqr head = {0};
    head.st = st;
    head.sys = sys;
    head.N = horizon;
    head.nu = nu;
    head.nv = nv;
    head.nq = mbs_model_nq(m);
    head.n = 2 * nv;
    head.dt = dt;
    head.ssize = mbs_stepper_state_size(st);
    mbs_carver c = {NULL, 0};
    mbsi_carve(&c, sizeof head);
    layout(&c, &head);
    mbs_ilqr *p = mbsi_carver_alloc(&c);
    if (!p) { mbsi_fail(err, MBS_ERR_NOMEM, "out of memory"); return NULL; }
    *p = head;
    p->block = c.base;
    mbsi_carve(&c, sizeof head);
    layout(&c, p);
    p->qp = mbs_qp_new(nu, 0, 2 * nu, err);
    if (!p->qp) { free(p->block); return NULL; }
    memcpy(p->ctl, controls, sizeof(int) * (size_t)nu);
    for (int j = 0; j < nu; j++) { p->lo[j] = -INFINITY; p->hi[j] = INFINITY; p->R[j] = 1e-6; }
    memcpy(p->qref, mbs_system_q(sys), sizeof(double) * (size_t)p->nq);
    p->mu = 1e-6;
    return p;
}

void mbs_ilqr_free(mbs_ilqr *p)
{
    if (!p) return;
    mbs_qp_free(p->qp);
    free(p->r);
    free(p->block);
}

int mbs_ilqr_set_cost(mbs_ilqr *p, const double *Q, const double *R, const double *Qf, const double *q_ref,
                      const double *v_ref, const double *u_ref)
{
    if (!p || !Q || !R || !Qf || !q_ref) return mbsi_fail(p ? &p->err : NULL, MBS_ERR_ARG, "mbs_ilqr_set_cost: a NULL argument");
    for (int k = 0; k < p->n; k++)
        if (!(Q[k] >= 0 && Qf[k] >= 0 && isfinite(Q[k]) && isfinite(Qf[k])))
            return mbsi_fail(&p->err, MBS_ERR_ARG, "mbs_ilqr_set_cost: Q[%d] = %g or Qf[%d] = %g is not a finite weight >= 0", k,
                             Q[k], k, Qf[k]);
    for (int j = 0; j < p->nu; j++)
        if (!(R[j] > 0 && isfinite(R[j])))
            return mbsi_fail(&p->err, MBS_ERR_ARG, "mbs_ilqr_set_cost: R[%d] = %g is not a finite weight > 0", j, R[j]);
    memcpy(p->Q, Q, sizeof(double) * (size_t)p->n);
    memcpy(p->Qf, Qf, sizeof(double) * (size_t)p->n);
    memcpy(p->R, R, sizeof(double) * (size_t)p->nu);
    memcpy(p->qref, q_ref, sizeof(double) * (size_t)p->nq);
    for (int k = 0; k < p->nv; k++) p->vref[k] = v_ref ? v_ref[k] : 0;
    for (int j = 0; j < p->nu; j++) p->uref[j] = u_ref ? u_ref[j] : 0;
    return MBS_OK;
}

int mbs_ilqr_set_residuals(mbs_ilqr *p, int m, mbs_ilqr_residual_fn f, void *user)
{
    if (!p) return MBS_ERR_ARG;
    if (m < 0 || m > 100000) return mbsi_fail(&p->err, MBS_ERR_ARG, "mbs_ilqr_set_residuals: m = %d (0 to 100000)", m);
    free(p->r);
    p->r = p->rw = p->rJ = NULL;
    p->nr = 0;
    p->rf = NULL;
    if (!f || m == 0) return MBS_OK;
    p->r = calloc((size_t)m * (size_t)(2 + p->n), sizeof(double));
    if (!p->r) return mbsi_fail(&p->err, MBS_ERR_NOMEM, "out of memory");
    p->rw = p->r + m;
    p->rJ = p->rw + m;
    p->nr = m;
    p->rf = f;
    p->ruser = user;
    return MBS_OK;
}

int mbs_ilqr_set_limits(mbs_ilqr *p, const double *lo, const double *hi)
{
    if (!p) return MBS_ERR_ARG;
    for (int j = 0; j < p->nu; j++) {
        double l = lo ? lo[j] : -INFINITY, h = hi ? hi[j] : INFINITY;
        if (!(l <= h) || isnan(l) || isnan(h))
            return mbsi_fail(&p->err, MBS_ERR_ARG, "mbs_ilqr_set_limits: control %d: lo %g > hi %g", j, l, h);
        p->lo[j] = l;
        p->hi[j] = h;
    }
    return MBS_OK;
}

double *mbs_ilqr_controls(mbs_ilqr *p) { return p->u; }
const double *mbs_ilqr_gains(const mbs_ilqr *p) { return p->K; }
const mbs_error *mbs_ilqr_last_error(const mbs_ilqr *p) { return &p->err; }

void mbs_ilqr_state(const mbs_ilqr *p, int k, double *q, double *v)
{
    const double *x = p->xs + (size_t)k * (size_t)(p->nq + p->nv);
    if (q) memcpy(q, x, sizeof(double) * (size_t)p->nq);
    if (v) memcpy(v, x + p->nq, sizeof(double) * (size_t)p->nv);
}

double mbs_ilqr_regularization(const mbs_ilqr *p) { return p->mu; }

int mbs_ilqr_set_regularization(mbs_ilqr *p, double mu)
{
    if (!p) return MBS_ERR_ARG;
    if (!(mu >= 0) || !isfinite(mu)) return mbsi_fail(&p->err, MBS_ERR_ARG, "mbs_ilqr_set_regularization: mu = %g (finite, >= 0)", mu);
    p->mu = mu;
    return MBS_OK;
}

void mbs_ilqr_shift(mbs_ilqr *p)
{
    const size_t nu = (size_t)p->nu, n = (size_t)p->n, N = (size_t)p->N, nx = (size_t)(p->nq + p->nv);
    memmove(p->u, p->u + nu, sizeof(double) * nu * (N - 1));
    /* the policy too, the nominal states and the gains, so that the next solve starts by following
     * it from the state it is given, u = ū + K δx, as the plan would have from there: the bare
     * controls, rolled out from a state off the old nominal, drift from it over the horizon */
    memmove(p->K, p->K + nu * n, sizeof(double) * nu * n * (N - 1));
    memmove(p->xs, p->xs + nx, sizeof(double) * nx * N);
    p->warm_policy = p->nominal;   /* before any solve there are no states to follow */
}

int mbs_ilqr_set_knot_hook(mbs_ilqr *p, mbs_ilqr_knot_fn f, void *user)
{
    if (!p) return MBS_ERR_ARG;
    p->knot = f;
    p->kuser = user;
    return MBS_OK;
}

int mbs_ilqr_set_derivatives(mbs_ilqr *p, mbs_derivatives_method method)
{
    if (!p) return MBS_ERR_ARG;
    if (method < MBS_DERIVATIVES_AUTO || method > MBS_DERIVATIVES_EXTRAPOLATED)
        return mbsi_fail(&p->err, MBS_ERR_ARG, "mbs_ilqr_set_derivatives: method %d is not one of mbs_derivatives_method", (int)method);
    p->dmethod = method;
    return MBS_OK;
}

void mbsi_ilqr_state(mbs_ilqr *p, mbsi_state *s)
{
    const size_t nu = (size_t)p->nu, n = (size_t)p->n, N = (size_t)p->N, nx = (size_t)(p->nq + p->nv);
    mbsi_state_doubles(s, "ilqr.u", p->u, N * nu);
    mbsi_state_doubles(s, "ilqr.K", p->K, N * nu * n);
    mbsi_state_doubles(s, "ilqr.xs", p->xs, (N + 1) * nx);
    mbsi_state_ints(s, "ilqr.warm_policy", &p->warm_policy, 1);
    mbsi_state_ints(s, "ilqr.nominal", &p->nominal, 1);
    mbsi_state_doubles(s, "ilqr.mu", &p->mu, 1);
}

/* The user's residuals at knot k of state x: adds ½ Σ w r² to *c and, with grad, J_rᵀ W r to p->gx
 * and (hess not NULL) J_rᵀ W J_r to hess. Returns 0, or -1 when the callback failed (p->err). */
static int residual_cost(mbs_ilqr *p, int k, const double *x, int grad, double *hess, double *c)
{
    const int m = p->nr, n = p->n;
    if (!p->rf) return 0;
    if (grad) memset(p->rJ, 0, sizeof(double) * (size_t)m * (size_t)n);
    if (p->rf(p->ruser, k, x, x + p->nq, p->r, p->rw, grad ? p->rJ : NULL) != 0) {
        mbsi_fail(&p->err, MBS_ERR_ARG, "mbs_ilqr_solve: the residual callback failed at knot %d", k);
        return -1;
    }
    for (int i = 0; i < m; i++) {
        if (!(p->rw[i] >= 0) || !isfinite(p->r[i]) || !isfinite(p->rw[i])) {
            mbsi_fail(&p->err, MBS_ERR_ARG, "mbs_ilqr_solve: residual %d at knot %d: r = %g, w = %g (finite, w >= 0)", i, k,
                      p->r[i], p->rw[i]);
            return -1;
        }
        *c += 0.5 * p->rw[i] * p->r[i] * p->r[i];
    }
    if (!grad) return 0;
    for (int a = 0; a < n; a++) {
        const double *Ja = p->rJ + (size_t)m * a;
        double s = 0;
        for (int i = 0; i < m; i++) s += Ja[i] * p->rw[i] * p->r[i];
        p->gx[a] += s;
        if (!hess) continue;
        for (int b = 0; b <= a; b++) {
            const double *Jb = p->rJ + (size_t)m * b;
            double h = 0;
            for (int i = 0; i < m; i++) h += Ja[i] * p->rw[i] * Jb[i];
            hess[a + (size_t)n * b] += h;
            if (b != a) hess[b + (size_t)n * a] += h;
        }
    }
    return 0;
}

/* The quadratic part of state_cost. */
static double quadratic_cost(mbs_ilqr *p, const double *x, const double *W, int grad, double *hess)
{
    const int nv = p->nv, n = p->n;
    const mbs_model *m = mbs_system_model(p->sys);
    mbs_difference(m, p->qref, x, p->dx);
    for (int k = 0; k < nv; k++) p->dx[nv + k] = x[p->nq + k] - p->vref[k];
    double c = 0;
    for (int k = 0; k < n; k++) c += 0.5 * W[k] * p->dx[k] * p->dx[k];
    if (!grad) return c;
    mbs_ddifference(m, p->qref, x, MBS_ARG1, p->J);
    for (int c2 = 0; c2 < nv; c2++) {
        double s = 0;
        for (int r = 0; r < nv; r++) s += p->J[r + (size_t)nv * c2] * W[r] * p->dx[r];
        p->gx[c2] = s;
        p->gx[nv + c2] = W[nv + c2] * p->dx[nv + c2];
    }
    if (hess) {
        /* difference's Jacobian is block-diagonal, a block per joint: so is Jᵀ W J */
        memset(hess, 0, sizeof(double) * (size_t)n * (size_t)n);
        for (int b = 0; b < m->nbodies; b++) {
            const int r0 = m->bodies[b].idx_v, r1 = r0 + m->bodies[b].nv;
            for (int j = r0; j < r1; j++)
                for (int i = r0; i < r1; i++) {
                    double s = 0;
                    for (int r = r0; r < r1; r++) s += p->J[r + (size_t)nv * i] * W[r] * p->J[r + (size_t)nv * j];
                    hess[i + (size_t)n * j] = s;
                }
        }
        for (int k = 0; k < nv; k++) hess[nv + k + (size_t)n * (nv + k)] = W[nv + k];
    }
    return c;
}

/* The cost of knot k's state x (nq + nv): its tangent error δx from the target into p->dx; with
 * grad, the cost's gradient J_δᵀ W δx into p->gx and, with hess (n x n), its Gauss-Newton Hessian
 * J_δᵀ W J_δ; the user's residuals added to all three. Returns ½ δxᵀ W δx + ½ Σ w r², NAN when the
 * residual callback failed. */
static double state_cost(mbs_ilqr *p, int knot, const double *x, const double *W, int grad, double *hess)
{
    double c = quadratic_cost(p, x, W, grad, hess);
    return residual_cost(p, knot, x, grad, hess, &c) ? NAN : c;
}

static double control_cost(const mbs_ilqr *p, const double *u)
{
    double c = 0;
    for (int j = 0; j < p->nu; j++) c += 0.5 * p->R[j] * (u[j] - p->uref[j]) * (u[j] - p->uref[j]);
    return c;
}

/* τ for controls u: the start's τ with the controlled entries replaced. */
static void apply_controls(mbs_ilqr *p, const double *u)
{
    double *tau = p->gx;   /* nv <= n of scratch */
    memcpy(tau, p->tau0, sizeof(double) * (size_t)p->nv);
    for (int j = 0; j < p->nu; j++) tau[p->ctl[j]] = u[j];
    mbs_system_set_tau(p->sys, tau);
}

/* A rollout from the saved start: u = clamp(ū + α k + K δx) (alpha < 0: the controls in p->u as
 * they are) into p->un, states into p->xn, each knot's stepper state (after its τ is set) into
 * p->savedn. Returns the cost, or NAN when a step fails. */
static double rollout(mbs_ilqr *p, double alpha)
{
    const int nu = p->nu, n = p->n, nx = p->nq + p->nv;
    const mbs_model *m = mbs_system_model(p->sys);
    double cost = 0;
    mbsi_stepper_reload(p->st, p->saved, p->ssize);
    for (int k = 0; k <= p->N; k++) {
        double *x = p->xn + (size_t)k * (size_t)nx;
        memcpy(x, mbs_system_q(p->sys), sizeof(double) * (size_t)p->nq);
        memcpy(x + p->nq, mbs_system_v(p->sys), sizeof(double) * (size_t)p->nv);
        if (k == p->N) { cost += state_cost(p, k, x, p->Qf, 0, NULL); break; }
        double *u = p->un + (size_t)k * (size_t)nu;
        const double *ub = p->u + (size_t)k * (size_t)nu;
        if (alpha < 0) memcpy(u, ub, sizeof(double) * (size_t)nu);
        else {
            /* δx from the nominal state at this knot */
            const double *xb = p->xs + (size_t)k * (size_t)nx;
            mbs_difference(m, xb, x, p->dx);
            for (int i = 0; i < p->nv; i++) p->dx[p->nv + i] = x[p->nq + i] - xb[p->nq + i];
            const double *K = p->K + (size_t)k * (size_t)nu * (size_t)n;
            for (int j = 0; j < nu; j++) {
                double s = ub[j] + alpha * p->kff[(size_t)k * nu + j];
                for (int i = 0; i < n; i++) s += K[j + (size_t)nu * i] * p->dx[i];
                u[j] = fmin(fmax(s, p->lo[j]), p->hi[j]);
            }
        }
        for (int j = 0; j < nu; j++) u[j] = fmin(fmax(u[j], p->lo[j]), p->hi[j]);
        cost += state_cost(p, k, x, p->Q, 0, NULL) + control_cost(p, u);
        if (isnan(cost)) return NAN;
        apply_controls(p, u);
        /* the user's changes to what the model sees at this knot go into its saved state, which
         * its Jacobians start from */
        if (p->knot) p->knot(p->kuser, k, p->sys);
        mbsi_stepper_snapshot(p->st, p->savedn + (size_t)k * p->ssize, p->ssize);
        if (mbs_stepper_step(p->st, p->dt, NULL) != MBS_OK) {
            p->err = *mbs_stepper_last_error(p->st);
            return NAN;
        }
    }
    return cost;
}

/* The rollout of p->un, p->xn, p->savedn becomes the nominal. */
static void accept(mbs_ilqr *p)
{
    double *t = p->u; p->u = p->un; p->un = t;
    t = p->xs; p->xs = p->xn; p->xn = t;
    unsigned char *s = p->saved; p->saved = p->savedn; p->savedn = s;
    p->nominal = 1;
}

/* 1 when control j at x is on a bound of its box (within rounding): the QP would clamp it. */
static int at_bound(const mbs_ilqr *p, int j, double x)
{
    double tol = 1e-12 * (1 + fabs(x));
    return (isfinite(p->lo[j]) && x <= p->lo[j] + tol) || (isfinite(p->hi[j]) && x >= p->hi[j] - tol);
}

/* The box QP of knot k's feed-forward step into p->du and which controls it leaves free
 * (p->freei, their count returned); −1 when Q_uu (regularised) is not positive definite. The
 * Newton step −Q_uu⁻¹ Q_u first (its factor left in p->H): when it stays inside the box, strictly,
 * it is the QP's solution with every control free, as at most knots of a plan that does not
 * saturate its joints; the QP otherwise. */
static int box_step(mbs_ilqr *p, const double *u)
{
    const int nu = p->nu;
    memcpy(p->H, p->Quu, sizeof(double) * (size_t)nu * (size_t)nu);
    if (mbsi_cholesky(p->H, nu, nu, 0) >= 0) return -1;
    for (int j = 0; j < nu; j++) p->du[j] = -p->Qu[j];
    mbsi_cholesky_solve_rows(p->H, nu, p->du, 1);
    int inside = 1;
    for (int j = 0; j < nu && inside; j++) inside = !at_bound(p, j, u[j] + p->du[j]);
    if (inside) {
        for (int j = 0; j < nu; j++) p->freei[j] = j;
        return nu;
    }
    memcpy(p->H, p->Quu, sizeof(double) * (size_t)nu * (size_t)nu);
    int rows = 0;
    memset(p->Ain, 0, sizeof(double) * 2 * (size_t)nu * (size_t)nu);
    for (int j = 0; j < nu; j++) {
        /* δu_j >= lo − u and −δu_j >= u − hi, for the finite limits */
        if (isfinite(p->lo[j])) { p->Ain[rows + (size_t)2 * nu * j] = 1; p->bin[rows++] = p->lo[j] - u[j]; }
        if (isfinite(p->hi[j])) { p->Ain[rows + (size_t)2 * nu * j] = -1; p->bin[rows++] = u[j] - p->hi[j]; }
    }
    /* Ain has leading dimension 2nu; the solver wants `rows`: compact the columns */
    for (int j = 0; j < nu; j++)
        for (int r = 0; r < rows; r++) p->T2[r + (size_t)rows * j] = p->Ain[r + (size_t)2 * nu * j];
    if (mbs_qp_solve(p->qp, nu, p->H, p->Qu, 0, NULL, NULL, rows, p->T2, p->bin, 0, p->du, NULL) != MBS_OK) return -1;
    int nf = 0;
    for (int j = 0; j < nu; j++)
        if (!at_bound(p, j, u[j] + p->du[j])) p->freei[nf++] = j;
    if (nf == nu) {   /* every control free after all (a step within rounding of a bound): the factor */
        memcpy(p->H, p->Quu, sizeof(double) * (size_t)nu * (size_t)nu);
        if (mbsi_cholesky(p->H, nu, nu, 0) >= 0) return -1;
    }
    return nf;
}

/* The backward pass over the nominal's Jacobians: p->kff, p->K and the expected decrease's terms
 * (d1 = Σ kᵀ Q_u, d2 = Σ ½ kᵀ Q_uu k). Returns 0, -1 when a Q_uu was not positive definite, -2 when
 * the residual callback failed. */
static int backward(mbs_ilqr *p, double *d1, double *d2)
{
    const int n = p->n, nu = p->nu, nx = p->nq + p->nv;
    *d1 = *d2 = 0;
    if (isnan(state_cost(p, p->N, p->xs + (size_t)p->N * (size_t)nx, p->Qf, 1, p->Vxx))) return -2;
    memcpy(p->Vx, p->gx, sizeof(double) * (size_t)n);
    for (int k = p->N - 1; k >= 0; k--) {
        const double *A = p->A + (size_t)k * n * n, *B = p->B + (size_t)k * n * nu, *u = p->u + (size_t)k * nu;
        if (isnan(state_cost(p, k, p->xs + (size_t)k * (size_t)nx, p->Q, 1, p->Qxx))) return -2;
        /* Q_x = l_x + Aᵀ V_x; Q_u = l_u + Bᵀ V_x */
        cblas_dgemv(CblasColMajor, CblasTrans, n, n, 1.0, A, n, p->Vx, 1, 0.0, p->Qx, 1);
        for (int i = 0; i < n; i++) p->Qx[i] += p->gx[i];
        cblas_dgemv(CblasColMajor, CblasTrans, n, nu, 1.0, B, n, p->Vx, 1, 0.0, p->Qu, 1);
        for (int j = 0; j < nu; j++) p->Qu[j] += p->R[j] * (u[j] - p->uref[j]);
        /* T = V_xx A, Q_xx += Aᵀ T, Q_ux = Bᵀ T, Q_uu = R + Bᵀ V_xx B + μ */
        cblas_dgemm(CblasColMajor, CblasNoTrans, CblasNoTrans, n, n, n, 1.0, p->Vxx, n, A, n, 0.0, p->T, n);
        cblas_dgemm(CblasColMajor, CblasTrans, CblasNoTrans, n, n, n, 1.0, A, n, p->T, n, 1.0, p->Qxx, n);
        cblas_dgemm(CblasColMajor, CblasTrans, CblasNoTrans, nu, n, n, 1.0, B, n, p->T, n, 0.0, p->Qux, nu);
        cblas_dgemm(CblasColMajor, CblasNoTrans, CblasNoTrans, n, nu, n, 1.0, p->Vxx, n, B, n, 0.0, p->T, n);
        cblas_dgemm(CblasColMajor, CblasTrans, CblasNoTrans, nu, nu, n, 1.0, B, n, p->T, n, 0.0, p->Quu, nu);
        for (int j = 0; j < nu; j++) p->Quu[j + (size_t)nu * j] += p->R[j] + p->mu;
        /* k within the box; K on the free controls: −Q_uu,ff⁻¹ Q_ux,f */
        int nf = box_step(p, u);
        if (nf < 0) return -1;
        double *kk = p->kff + (size_t)k * nu, *K = p->K + (size_t)k * nu * n;
        memcpy(kk, p->du, sizeof(double) * (size_t)nu);
        memset(K, 0, sizeof(double) * (size_t)nu * (size_t)n);
        if (nf > 0) {
            double *L = p->H;   /* nf x nf; box_step's factor when every control is free */
            if (nf < nu) {
                for (int b = 0; b < nf; b++)
                    for (int a = 0; a < nf; a++) L[a + (size_t)nf * b] = p->Quu[p->freei[a] + (size_t)nu * p->freei[b]];
                if (mbsi_cholesky(L, nf, nf, 0) >= 0) return -1;
            }
            /* K_f = −Q_uu,ff⁻¹ Q_ux,f: the n right-hand sides at once */
            double *Y = p->T2;   /* nf rows of n, one after the other */
            for (int c = 0; c < n; c++)
                for (int a = 0; a < nf; a++) Y[c + (size_t)n * a] = -p->Qux[p->freei[a] + (size_t)nu * c];
            mbsi_cholesky_solve_rows(L, nf, Y, n);
            for (int c = 0; c < n; c++)
                for (int a = 0; a < nf; a++) K[p->freei[a] + (size_t)nu * c] = Y[c + (size_t)n * a];
        }
        /* the expected decrease, and V_x, V_xx */
        double kQuk = 0;
        for (int j = 0; j < nu; j++) {
            *d1 += kk[j] * p->Qu[j];
            double s = 0;
            for (int i = 0; i < nu; i++) s += p->Quu[j + (size_t)nu * i] * kk[i];
            kQuk += kk[j] * s;
            p->g[j] = s + p->Qu[j];   /* Q_uu k + Q_u */
        }
        *d2 += 0.5 * kQuk;
        /* V_x = Q_x + Kᵀ (Q_uu k + Q_u) + Q_uxᵀ k */
        memcpy(p->Vx, p->Qx, sizeof(double) * (size_t)n);
        cblas_dgemv(CblasColMajor, CblasTrans, nu, n, 1.0, K, nu, p->g, 1, 1.0, p->Vx, 1);
        cblas_dgemv(CblasColMajor, CblasTrans, nu, n, 1.0, p->Qux, nu, kk, 1, 1.0, p->Vx, 1);
        /* V_xx = Q_xx + Kᵀ Q_uu K + Kᵀ Q_ux + Q_uxᵀ K = Q_xx + Q_uxᵀ K, symmetrised: K's free rows
         * solve Q_uu,ff K_f = −Q_ux,f and its clamped rows are zero, so Kᵀ Q_uu K = −Kᵀ Q_ux (one
         * product instead of four) */
        memcpy(p->Vxx, p->Qxx, sizeof(double) * (size_t)n * (size_t)n);
        cblas_dgemm(CblasColMajor, CblasTrans, CblasNoTrans, n, n, nu, 1.0, p->Qux, nu, K, nu, 1.0, p->Vxx, n);
        for (int j = 0; j < n; j++)
            for (int i = j + 1; i < n; i++) {
                double a = 0.5 * (p->Vxx[i + (size_t)n * j] + p->Vxx[j + (size_t)n * i]);
                p->Vxx[i + (size_t)n * j] = p->Vxx[j + (size_t)n * i] = a;
            }
    }
    return 0;
}

int mbs_ilqr_solve(mbs_ilqr *p, int max_iter, double tol, mbs_ilqr_stats *stats)
{
    mbs_ilqr_stats local;
    mbs_ilqr_stats *s = stats ? stats : &local;
    memset(s, 0, sizeof *s);
    if (!p) return MBS_ERR_ARG;
    p->err.code = MBS_OK;
    p->err.msg[0] = '\0';
    const int n = p->n, nu = p->nu, N = p->N;
    /* the start, kept as knot 0's saved state and put back at the end */
    memcpy(p->tau0, mbs_system_tau(p->sys), sizeof(double) * (size_t)p->nv);
    mbsi_stepper_snapshot(p->st, p->saved, p->ssize);
    memcpy(p->savedn, p->saved, p->ssize);
    /* the first rollout: the controls as they are, or after a shift the policy they came with */
    double cost = rollout(p, p->warm_policy ? 0 : -1);
    /* a policy whose feedback drives the steps to diverge from where this solve starts (a state
     * far from its shifted nominal one: a foot that landed early, a push): the bare controls */
    if (isnan(cost) && p->warm_policy) {
        p->err.code = MBS_OK;
        p->err.msg[0] = '\0';
        cost = rollout(p, -1);
    }
    p->warm_policy = 0;
    int rc = MBS_OK;
    if (isnan(cost)) { rc = p->err.code ? p->err.code : MBS_ERR_NUMERIC; goto done; }
    accept(p);
    s->cost_start = cost;
    int need_jacobians = 1;
    for (int it = 0; it < max_iter; it++) {
        s->iterations = it + 1;
        /* the nominal's Jacobians (again only when the nominal moved) */
        for (int k = 0; k < N && need_jacobians; k++) {
            mbsi_stepper_reload(p->st, p->saved + (size_t)k * p->ssize, p->ssize);
            if (mbs_stepper_derivatives(p->st, p->dt, p->dmethod, p->ctl, nu, p->A + (size_t)k * n * n,
                                        p->B + (size_t)k * n * nu) != MBS_OK) {
                p->err = *mbs_stepper_last_error(p->st);
                rc = p->err.code;
                goto done;
            }
        }
        double d1 = 0, d2 = 0;
        int b;
        while ((b = backward(p, &d1, &d2)) != 0) {
            if (b == -2) { rc = p->err.code; goto done; }
            p->mu = fmax(10 * p->mu, 1e-6);
            if (p->mu > MU_MAX) {
                rc = mbsi_fail(&p->err, MBS_ERR_NUMERIC, "mbs_ilqr_solve: the controls' Hessian stays indefinite up to "
                               "a regularisation of %g", MU_MAX);
                goto done;
            }
        }
        double alpha = 1, trial = NAN;
        int taken = 0;
        for (int h = 0; h <= HALVINGS; h++, alpha *= 0.5) {
            trial = rollout(p, alpha);
            double expected = -(alpha * d1 + alpha * alpha * d2);
            if (!isnan(trial) && trial < cost && (expected <= 0 || (cost - trial) >= ARMIJO * expected)) {
                taken = 1;
                break;
            }
        }
        need_jacobians = taken;
        if (!taken) {
            /* no decrease along this step: a smaller one, nearer the gradient */
            p->mu = fmax(10 * p->mu, 1e-6);
            s->alpha = 0;
            if (p->mu > MU_MAX) break;
            continue;
        }
        accept(p);
        double drop = cost - trial;
        cost = trial;
        s->alpha = alpha;
        p->mu = fmax(p->mu / 10, MU_MIN);
        if (drop <= tol * fabs(cost)) {
            s->converged = 1;
            break;
        }
    }
done:
    s->cost = cost;
    s->regularization = p->mu;
    /* the system as it was */
    mbsi_stepper_reload(p->st, p->saved, p->ssize);
    mbs_system_set_tau(p->sys, p->tau0);
    return rc;
}
