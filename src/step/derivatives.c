/* derivatives.c — the Jacobians of one step, x⁺ = f(x, τ), for every scheme (mbs/step.h,
 * mbs_stepper_derivatives): the schemes' own chain rules where they have one (their type's
 * derivatives hook), finite differences in the tangent space otherwise, and the pieces the chain
 * rules share. The state is (q, v): the contacts' anchors, active set and modes are held at their
 * values at the call, as a step from a perturbed state would find them; each perturbed step of the
 * differences starts from the saved state of the whole stepper, so both methods differentiate the
 * same map.
 *
 * Finite-difference steps (tangent space, as MuJoCo's mjd_transitionFD): h = 1e-8 forward — near
 * √ε, where truncation h |f''| and rounding ε |f| / h balance for f'' ~ f — and h = 1e-6 central,
 * near ε^⅓ (its truncation is h² |f'''| / 6): central differences with it are the reference the
 * tests hold the analytical Jacobians to (1e-6 relative), forward ones what a user takes when
 * speed matters more. */
#include <cblas.h>
#include <math.h>
#include <stdlib.h>
#include <string.h>

#include "../contact/contact_internal.h"
#include "step_internal.h"

static const double H_FORWARD = 1e-8, H_CENTRAL = 1e-6;

int mbsi_derivatives_init(mbs_stepper *st, mbs_error *err)
{
    const mbs_system *s = st->sys;
    const size_t nq = (size_t)s->nq, nv = (size_t)s->nv, nn = nv * nv, nc = (size_t)(s->ncontacts > 0 ? s->ncontacts : 1);
    mbsi_derivatives_ws *w = &st->dw;
    mbs_carver c = {NULL, 0};
    for (int pass = 0; pass < 2; pass++) {
        w->saved = mbsi_carve(&c, st->undo_n ? st->undo_n : 1);
        double **vq[] = {&w->q0, &w->qn, &w->qp};
        for (int k = 0; k < 3; k++) *vq[k] = mbsi_carve_doubles(&c, nq);
        double **vv[] = {&w->v0, &w->tau0, &w->vn, &w->vp, &w->a};
        for (int k = 0; k < 5; k++) *vv[k] = mbsi_carve_doubles(&c, nv);
        w->col = mbsi_carve_doubles(&c, 10 * nv);
        w->A = mbsi_carve_doubles(&c, 4 * nn);
        w->B = mbsi_carve_doubles(&c, 2 * nn);
        double **m[] = {&w->Fq, &w->Fv, &w->Mi, &w->D0, &w->D1};
        for (int k = 0; k < 5; k++) *m[k] = mbsi_carve_doubles(&c, nn);
        for (int k = 0; k < 7; k++) w->X[k] = mbsi_carve_doubles(&c, 3 * nn);
        w->work = mbsi_carve_doubles(&c, mbsi_contact_derivatives_work_size((int)nv));
        w->iwork = mbsi_carve_ints(&c, nv);
        w->contacts = mbsi_carve(&c, nc * sizeof(mbs_contact));
        w->contacts2 = mbsi_carve(&c, nc * sizeof(mbs_contact));
        w->fresh = mbsi_carve(&c, nc);
        w->moved = mbsi_carve(&c, nc);
        w->A0 = mbsi_carve_doubles(&c, 18 * nv * nc);
        if (pass == 0 && !mbsi_carver_alloc(&c)) return mbsi_fail(err, MBS_ERR_NOMEM, "out of memory");
    }
    st->dw_block = c.base;
    return MBS_OK;
}

void mbsi_derivatives_fini(mbs_stepper *st)
{
    free(st->dw_block);
    st->dw_block = NULL;
}

int mbs_stepper_has_analytical_derivatives(const mbs_stepper *st) { return st && st->type->derivatives != NULL; }

/* The update of a step's first evaluation at (q, v): the contacts before it into w->contacts, the
 * update (the dynamics into a, or the forces alone when a is NULL), the contacts after it into
 * w->contacts2, and back to the contacts before it but for those it activated (fresh): the state
 * the held model (update 0) differentiates the update's forces from. A fresh contact's anchor was
 * placed right above its point and moves with it across the surface (contact.c). */
static void update_begin(mbs_stepper *st, const double *q, const double *v, double *a)
{
    mbs_system *s = st->sys;
    mbsi_derivatives_ws *w = &st->dw;
    const int nc = s->ncontacts;
    memset(w->moved, 0, (size_t)(nc > 0 ? nc : 1));
    memcpy(w->contacts, s->contacts, (size_t)nc * sizeof(mbs_contact));
    if (a) mbs_system_dynamics(s, q, v, 1, a);
    else mbs_contact_forces(s, q, v, 1);
    memcpy(w->contacts2, s->contacts, (size_t)nc * sizeof(mbs_contact));
    for (int i = 0; i < nc; i++) {
        w->fresh[i] = s->contacts[i].active && !w->contacts[i].active;
        if (!w->fresh[i]) s->contacts[i] = w->contacts[i];
    }
}

/* After the held model's evaluation at (q, v) (update 0): the anchors the update placed or moved,
 * as functions of (q, v), into w->A0 and w->moved; the contacts as the update left them. */
static void update_end(mbs_stepper *st, const double *q, const double *v)
{
    mbs_system *s = st->sys;
    mbsi_derivatives_ws *w = &st->dw;
    mbsi_contact_anchor_derivatives(s, q, v, w->fresh, w->moved, w->A0, w->work, w->iwork);
    memcpy(s->contacts, w->contacts2, (size_t)s->ncontacts * sizeof(mbs_contact));
}

void mbsi_step_anchor_derivatives(mbs_stepper *st, const double *q, const double *v)
{
    update_begin(st, q, v, NULL);
    mbsi_contact_forces_kinematics(st->sys, 0);   /* the update's kinematics at (q, v) */
    update_end(st, q, v);
}

int mbsi_step_acceleration_derivatives(mbs_stepper *st, const double *q, const double *v, int update, double *a)
{
    mbs_system *s = st->sys;
    mbsi_derivatives_ws *w = &st->dw;
    const int nv = s->nv;
    if (update) update_begin(st, q, v, a);
    /* the derivatives must follow the evaluation they differentiate, at the same (q, v) */
    mbs_system_dynamics(s, q, v, 0, w->a);
    if (!update) memcpy(a, w->a, (size_t)nv * sizeof(double));
    /* without update, the anchors (however placed) are held: their dependence on the state an
     * earlier update saw is the caller's (w->A0) */
    int rc = mbsi_system_dynamics_derivatives(s, q, v, 1, w->a, w->Fq, w->Fv, w->Mi, w->work, w->iwork,
                                              update ? w->fresh : NULL);
    if (rc != MBS_OK) return rc;
    if (update) update_end(st, q, v);
    return MBS_OK;
}

void mbsi_derivatives_configuration_rows(mbs_stepper *st, const double *q, const double *delta, const double *X,
                                         int nb, double *A, double *B)
{
    const mbs_model *m = st->sys->model;
    mbsi_derivatives_ws *w = &st->dw;
    const int nv = st->sys->nv, n2 = 2 * nv;
    mbs_dintegrate(m, q, delta, MBS_ARG0, w->D0);
    mbs_dintegrate(m, q, delta, MBS_ARG1, w->D1);
    /* [A_q | B_q] = D1 X (the three blocks of X's columns), then A_qq += D0. integrate's Jacobians
     * are block-diagonal, one block per joint (each joint moves by its own tangent), so row r of
     * D1 X sums over r's joint's dofs only: a dense product cost nv times that. A column at a time:
     * D1's diagonal times the whole column (the one-dof joints' blocks), then the larger blocks
     * (a free-flyer's 6 x 6) over their rows, their columns added in turn. */
    int *big = w->iwork, nbig = 0;   /* the joints of more than one dof */
    for (int i = 0; i < m->nbodies; i++)
        if (m->bodies[i].nv > 1) big[nbig++] = i;
    double *restrict dg = w->col;    /* D1's diagonal, read once (2nv doubles of room) */
    for (int r = 0; r < nv; r++) dg[r] = w->D1[r + (size_t)nv * r];
    for (int c = 0; c < n2 + nb; c++) {
        const double *restrict x = X + (size_t)nv * c;
        double *restrict o = c < n2 ? A + (size_t)n2 * c : B + (size_t)n2 * (c - n2);
        for (int r = 0; r < nv; r++) o[r] = dg[r] * x[r];
        for (int j = 0; j < nbig; j++) {
            const int r0 = m->bodies[big[j]].idx_v, nd = m->bodies[big[j]].nv;
            const double *restrict D = w->D1 + r0 + (size_t)nv * r0;
            for (int r = 0; r < nd; r++) {
                double t = 0;
                for (int k = 0; k < nd; k++) t += D[r + (size_t)nv * k] * x[r0 + k];
                o[r0 + r] = t;
            }
        }
    }
    for (int c = 0; c < nv; c++)
        for (int r = 0; r < nv; r++) A[r + (size_t)n2 * c] += w->D0[r + (size_t)nv * c];
}

/* One step of the scheme from the system's state as mbs_stepper_step takes it (impedance and
 * dissipation included; no clock, no checks), its result into (q1, v1). */
static int plain_step(mbs_stepper *st, double dt, double *q1, double *v1)
{
    mbs_system *s = st->sys;
    mbs_step_stats stats;
    memset(&stats, 0, sizeof stats);
    int rc = mbsi_stepper_raw_step(st, dt, &stats);
    for (int k = 0; k < s->nv; k++) v1[k] = s->v[k] * (1 - st->dissipation);
    memcpy(q1, s->q, (size_t)s->nq * sizeof(double));
    for (int k = 0; k < s->nq; k++)
        if (!isfinite(q1[k])) rc = rc ? rc : MBS_ERR_NUMERIC;
    for (int k = 0; k < s->nv; k++)
        if (!isfinite(v1[k])) rc = rc ? rc : MBS_ERR_NUMERIC;
    return rc;
}

/* Puts the state saved at the call back (it fits: it was saved from this stepper). */
static void restore(mbs_stepper *st)
{
    mbsi_stepper_reload(st, st->dw.saved, st->undo_n);
}

/* Input j of (δq, δv, δτ) moved by h from the saved state, the step taken, and its result as a
 * tangent vector at the nominal result (qn, vn) into out (2nv). */
static int perturbed(mbs_stepper *st, double dt, int j, double h, double *out)
{
    mbs_system *s = st->sys;
    mbsi_derivatives_ws *w = &st->dw;
    const int nv = s->nv;
    restore(st);
    if (j < nv) {
        memset(w->a, 0, (size_t)nv * sizeof(double));
        w->a[j] = h;
        mbs_integrate(s->model, w->q0, w->a, s->q);
    } else if (j < 2 * nv) s->v[j - nv] += h;
    else s->tau[j - 2 * nv] += h;
    int rc = plain_step(st, dt, w->qp, w->vp);
    if (rc) return rc;
    mbs_difference(s->model, w->qn, w->qp, out);
    for (int k = 0; k < nv; k++) out[nv + k] = w->vp[k] - w->vn[k];
    return MBS_OK;
}

/* Central differences of input j at h and h/2 extrapolated (Richardson: (4 D(h/2) − D(h)) / 3, error
 * O(h⁴)) into out (2nv), with w->col's first three 2nv blocks as room. */
static int extrapolated_column(mbs_stepper *st, double dt, int j, double h, double *out)
{
    mbsi_derivatives_ws *w = &st->dw;
    const int n2 = 2 * st->sys->nv;
    double *m1 = w->col, *p2 = w->col + n2, *m2 = w->col + 2 * n2;
    int rc = perturbed(st, dt, j, h, out);
    if (rc == MBS_OK) rc = perturbed(st, dt, j, -h, m1);
    if (rc == MBS_OK) rc = perturbed(st, dt, j, h / 2, p2);
    if (rc == MBS_OK) rc = perturbed(st, dt, j, -h / 2, m2);
    if (rc != MBS_OK) return rc;
    for (int k = 0; k < n2; k++) out[k] = (4 * (p2[k] - m2[k]) / h - (out[k] - m1[k]) / (2 * h)) / 3;
    return MBS_OK;
}

/* The extrapolated column at h = H_CENTRAL, checked against the one at h/8: where they agree (to
 * 1e-7 of the column's largest entry, or 1e-9 absolute: the rounding of the finer one) it stands.
 * Where they do not, the step map is far from its Taylor polynomial within h — a step outside its
 * scheme's stability region magnifies 1e-7 into a stage force crossing its friction cone (rk4 at
 * 1 ms on Solo's 1e5 N/m feet: A's entries of 3e6), and differences across that switch are not a
 * derivative — so h shrinks by 8 while successive columns disagree, to H_CENTRAL / 512 at most
 * (rounding there ~1e-7 of a unit state), and the column kept is the one that agreed best with its
 * finer neighbour (Ridders' choice). */
static int converged_column(mbs_stepper *st, double dt, int j, double *out)
{
    mbsi_derivatives_ws *w = &st->dw;
    const int n2 = 2 * st->sys->nv;
    double *cur = w->col + 3 * n2, *best = w->col + 4 * n2, bestd = INFINITY, h = H_CENTRAL;
    int rc = extrapolated_column(st, dt, j, h, out);
    for (int level = 1; level <= 3 && rc == MBS_OK; level++) {
        h /= 8;
        rc = extrapolated_column(st, dt, j, h, cur);
        if (rc != MBS_OK) break;
        double d = 0, s = 0;
        for (int k = 0; k < n2; k++) {
            d = fmax(d, fabs(cur[k] - out[k]));
            s = fmax(s, fabs(cur[k]));
        }
        if (d <= 1e-7 * s || d <= 1e-9) return MBS_OK;
        if (d < bestd) {
            bestd = d;
            memcpy(best, out, (size_t)n2 * sizeof(double));
        }
        memcpy(out, cur, (size_t)n2 * sizeof(double));
    }
    if (rc == MBS_OK) memcpy(out, best, (size_t)n2 * sizeof(double));
    return rc;
}

/* A (into w->A) and B's columns cols[0..nb) (into those of w->B; cols NULL: every one) by
 * differences: forward (a step per column), central (two) or extrapolated (converged_column: four
 * per level, usually two levels). */
static int finite_differences(mbs_stepper *st, double dt, mbs_derivatives_method method, const int *cols, int nb)
{
    mbs_system *s = st->sys;
    mbsi_derivatives_ws *w = &st->dw;
    const int nv = s->nv, n2 = 2 * nv;
    const int central = method == MBS_DERIVATIVES_CENTRAL;
    const double h = central ? H_CENTRAL : H_FORWARD;
    int rc = plain_step(st, dt, w->qn, w->vn);
    for (int i = 0; i < n2 + nb && rc == MBS_OK; i++) {
        int j = i < n2 ? i : n2 + (cols ? cols[i - n2] : i - n2);
        double *out = j < n2 ? w->A + (size_t)n2 * j : w->B + (size_t)n2 * (j - n2);
        if (method == MBS_DERIVATIVES_EXTRAPOLATED) {
            rc = converged_column(st, dt, j, out);
            continue;
        }
        rc = perturbed(st, dt, j, h, out);
        if (rc == MBS_OK && central) rc = perturbed(st, dt, j, -h, w->col);
        if (rc != MBS_OK) break;
        for (int k = 0; k < n2; k++) out[k] = central ? (out[k] - w->col[k]) / (2 * h) : out[k] / h;
    }
    return rc;
}

/* The scheme's own A and B (into w->A, w->B), with the joint impedance's torque added to τ for a
 * scheme that holds it over the step, as mbsi_stepper_raw_step does, and its derivative chained
 * in: τ_imp = kp (q_ref − q) + kd (v_ref − v) on one-coordinate joints. A step the scheme's chain
 * rule does not cover takes differences instead (forward ones for MBS_DERIVATIVES_AUTO, central
 * ones otherwise), of B's columns cols[0..nb) only (cols NULL: all), and sets *differenced: those
 * steps took the dissipation already. */
static int analytical(mbs_stepper *st, double dt, mbs_derivatives_method method, const int *cols, int nb,
                      int *differenced)
{
    mbs_system *s = st->sys;
    mbsi_derivatives_ws *w = &st->dw;
    const int nv = s->nv, n2 = 2 * nv;
    int imp = s->imp_on && !st->type->impedance;
    if (imp) mbsi_system_impedance_torque(s, s->q, s->v, s->tau);
    /* B's columns a hook may compute alone (bcols NULL: the first nbcols); the impedance's chain
     * rule below needs those of every joint it holds */
    w->bcols = imp ? NULL : cols;
    w->nbcols = imp ? nv : nb;
    int rc = st->type->derivatives(st, dt, w->A, w->B);
    if (rc == MBSI_DERIVATIVES_FALLBACK) {
        /* a step outside what the scheme's chain rule covers: differences of it, forward ones for
         * MBS_DERIVATIVES_AUTO (half the steps: what a planner asks), central ones otherwise */
        restore(st);
        w->bchosen = 0;
        *differenced = 1;
        return finite_differences(st, dt, method == MBS_DERIVATIVES_AUTO ? MBS_DERIVATIVES_FORWARD : MBS_DERIVATIVES_CENTRAL,
                                  cols, nb);
    }
    if (rc != MBS_OK || !imp) return rc;
    for (int k = 0; k < nv; k++) {
        double kp = s->imp_kp[k], kd = s->imp_kd[k];
        if (kp == 0 && kd == 0) continue;
        const double *b = w->B + (size_t)n2 * k;
        double *aq = w->A + (size_t)n2 * k, *av = w->A + (size_t)n2 * (nv + k);
        for (int r = 0; r < n2; r++) { aq[r] -= kp * b[r]; av[r] -= kd * b[r]; }
    }
    return MBS_OK;
}

int mbs_stepper_derivatives(mbs_stepper *st, double dt, mbs_derivatives_method method, const int *cols, int ncols,
                            double *A, double *B)
{
    if (!st) return MBS_ERR_ARG;
    mbs_system *s = st->sys;
    mbsi_derivatives_ws *w = &st->dw;
    const int nv = s->nv, n2 = 2 * nv;
    const char *name = st->type->info.name;
    st->err.code = MBS_OK;
    st->err.msg[0] = '\0';
    if (!A) return mbsi_fail(&st->err, MBS_ERR_ARG, "mbs_stepper_derivatives: A is NULL (room for 2nv x 2nv = %d doubles)",
                             n2 * n2);
    if (!(dt > 0) || !isfinite(dt))
        return mbsi_fail(&st->err, MBS_ERR_ARG, "mbs_stepper_derivatives: dt = %g s is not a positive number", dt);
    if (B && cols) {
        if (ncols < 0 || ncols > nv)
            return mbsi_fail(&st->err, MBS_ERR_ARG, "mbs_stepper_derivatives: ncols = %d is not in [0, nv = %d]", ncols, nv);
        for (int j = 0; j < ncols; j++)
            if (cols[j] < 0 || cols[j] >= nv)
                return mbsi_fail(&st->err, MBS_ERR_ARG, "mbs_stepper_derivatives: cols[%d] = %d is not a velocity index "
                                 "(0 to nv - 1 = %d)", j, cols[j], nv - 1);
    }
    if (method < MBS_DERIVATIVES_AUTO || method > MBS_DERIVATIVES_EXTRAPOLATED)
        return mbsi_fail(&st->err, MBS_ERR_ARG, "mbs_stepper_derivatives: unknown method %d", (int)method);
    if (method == MBS_DERIVATIVES_ANALYTICAL && !st->type->derivatives)
        return mbsi_fail(&st->err, MBS_ERR_ARG, "mbs_stepper_derivatives: stepper '%s' has no analytical derivatives "
                         "(they are euler, symplectic_euler, rk4, implicit_euler and expo's): ask for finite differences "
                         "(MBS_DERIVATIVES_FORWARD, CENTRAL or EXTRAPOLATED) or MBS_DERIVATIVES_AUTO", name);
    int use_analytical = st->type->derivatives && (method == MBS_DERIVATIVES_AUTO || method == MBS_DERIVATIVES_ANALYTICAL);
    /* the state at the call, put back at the end whatever happened; the sim's sub-step callback
     * must not see the steps taken here */
    if (mbsi_stepper_snapshot(st, w->saved, st->undo_n) != MBS_OK)
        return mbsi_fail(&st->err, MBS_ERR_ARG, "mbs_stepper_derivatives: the stepper's state outgrew the %zu bytes it "
                         "had when it was made", st->undo_n);
    memcpy(w->q0, s->q, (size_t)s->nq * sizeof(double));
    memcpy(w->v0, s->v, (size_t)nv * sizeof(double));
    memcpy(w->tau0, s->tau, (size_t)nv * sizeof(double));
    void (*substep)(void *, const mbs_system *, double) = s->substep;
    s->substep = NULL;
    int nb = B ? (cols ? ncols : nv) : 0;
    int differenced = !use_analytical;
    w->bchosen = 0;
    int rc = use_analytical ? analytical(st, dt, method, cols, nb, &differenced)
                            : finite_differences(st, dt, method, cols, nb);
    restore(st);
    s->substep = substep;
    if (rc != MBS_OK) {
        if (st->err.code == MBS_OK)
            mbsi_fail(&st->err, rc, "mbs_stepper_derivatives: %s: a step from the state at t = %.9g s failed (code %d)",
                      name, s->t, rc);
        return st->err.code;
    }
    /* the dissipation v ← (1 − λ) v closes the step: the analytical velocity rows take it here
     * (finite differences, also a scheme's fallback to them, took it in each step) */
    double keep = differenced ? 1 : 1 - st->dissipation;
    memcpy(A, w->A, sizeof(double) * (size_t)n2 * (size_t)n2);
    if (keep != 1)
        for (int c = 0; c < n2; c++)
            for (int r = nv; r < n2; r++) A[r + (size_t)n2 * c] *= keep;
    if (B) {
        for (int j = 0; j < nb; j++) {
            /* the hook's column of cols[j]: j when it computed the chosen columns alone */
            const double *src = w->B + (size_t)n2 * (!cols || (w->bchosen && w->bcols) ? j : cols[j]);
            double *dst = B + (size_t)n2 * j;
            for (int r = 0; r < n2; r++) dst[r] = r < nv ? src[r] : keep * src[r];
        }
    }
    return MBS_OK;
}

int mbsi_derivatives_euler(mbs_stepper *st, double dt, int symplectic, double *A, double *B)
{
    mbs_system *s = st->sys;
    mbsi_derivatives_ws *w = &st->dw;
    const int nv = s->nv, n2 = 2 * nv;
    double *a = w->col, *delta = w->vp, *X = w->X[0];
    int rc = mbsi_step_acceleration_derivatives(st, s->q, s->v, 1, a);
    if (rc != MBS_OK) return rc;
    /* v⁺ = v + δt q̈ */
    for (int c = 0; c < nv; c++)
        for (int r = 0; r < nv; r++) {
            size_t i = (size_t)r + (size_t)nv * c;
            A[nv + r + (size_t)n2 * c] = dt * w->Fq[i];
            A[nv + r + (size_t)n2 * (nv + c)] = (r == c) + dt * w->Fv[i];
            B[nv + r + (size_t)n2 * c] = dt * w->Mi[i];
        }
    /* δ = δt v + δt²/2 q̈ (eq. 34), or δt v⁺ (symplectic): its derivative X = [∂δ/∂q ∂δ/∂v ∂δ/∂τ] */
    const double h2 = 0.5 * dt * dt;
    for (int c = 0; c < nv; c++)
        for (int r = 0; r < nv; r++) {
            size_t i = (size_t)r + (size_t)nv * c, nn = (size_t)nv * nv;
            if (symplectic) {
                X[i] = dt * A[nv + r + (size_t)n2 * c];
                X[nn + i] = dt * A[nv + r + (size_t)n2 * (nv + c)];
                X[2 * nn + i] = dt * B[nv + r + (size_t)n2 * c];
            } else {
                X[i] = h2 * w->Fq[i];
                X[nn + i] = h2 * w->Fv[i] + (r == c) * dt;
                X[2 * nn + i] = h2 * w->Mi[i];
            }
        }
    for (int k = 0; k < nv; k++) delta[k] = symplectic ? dt * (s->v[k] + dt * a[k]) : dt * s->v[k] + h2 * a[k];
    mbsi_derivatives_configuration_rows(st, s->q, delta, X, nv, A, B);
    return MBS_OK;
}
