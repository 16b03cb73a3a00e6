/* ess.c — the event-selected rapid integrator (Anderson & Revzen 2024, arXiv 2402.00279).
 *
 * The loop is listing 1 of sec. 3.1: while an armed (not yet crossed) guard has h_k >= -ε_k,
 * take a projection step to the earliest first-order crossing; otherwise take one
 * Dormand–Prince 5(4) step and stop it where the trajectory enters a band. What this file
 * adds to the listing, and why:
 *
 * - σ is the integrator's record of which side of each guard the trajectory is on, and it is
 *   held fixed over a step, so that dopri5's error control sees a smooth field (sec. 6's f_b).
 *   A projection onto guard j sets σ_j = +1 whatever the second-order residual h_j left by
 *   the linear move. A guard k that the same move leaves on its zero set (the hopper's
 *   h2 = -h1) takes the side it is heading to, sign(∇h_k·f): the sign of a residual of the
 *   order of rounding says nothing.
 * - The entry into a band is located on the dense output (the termination condition of
 *   listing 1, at the point where it becomes true), so a projection always starts from
 *   h_k = -ε_k and its error is O(ε²) (sec. 6): this is what the order test of sec. 4 measures.
 * - Sign changes that no projection covers (a guard crossed back while its partner is not
 *   armed, or a grazing guard left to root finding) are located on the dense output and
 *   logged, rather than integrated through: no crossing is missed silently.
 * - A crossed guard is re-armed once the trajectory leaves its band on the negative side
 *   (or, optionally, by listing 1's rule); see mbs_ess_rearm in the header.
 */
#include <float.h>
#include <math.h>
#include <stdlib.h>
#include <string.h>

#include "mbs/ess.h"
#include "../base/base.h"
#include "dopri5.h"

enum { CAND_ENTRY = 0, CAND_CROSS = 1, CAND_REVERSE = 2 };

struct mbs_ess {
    int n, m, max_events;
    mbs_ess_system sys;
    mbs_ess_options opt;
    int initialized, status;
    double t;
    /* n-vectors */
    double *x, *xnew, *ytmp, *xb, *xc, *xs;
    double *k[7];                 /* dopri5 stages; k[0] = f(x, σ) when f_valid */
    double *rcont;                /* 5n dense-output coefficients of the last step */
    /* m-vectors */
    double *hcur, *hnew, *hb, *hc, *rate, *eps, *hp, *hm;
    signed char *sigma;
    unsigned char *armed, *pending, *deferred;
    int *cand;                    /* candidate guards of the last step's event check */
    signed char *cand_kind, *cand_dir;
    double *cand_level;
    mbs_ess_event *events;
    int nevents;
    mbs_ess_stats st;
    int f_valid;
    double h_next, facold;
    /* dense output requested by the running call */
    const double *t_out;
    double *x_out;
    int nout, iout, ldx;
    mbs_error *err;
};

/* ---------------------------------------------------------------- errors and callbacks */

static int fail(mbs_ess *w, int status, int code, const char *what, double t, int k)
{
    w->status = status;
    if (k >= 0) return mbsi_fail(w->err, code, "mbs_ess: t = %.17g: guard %d: %s", t, k, what);
    return mbsi_fail(w->err, code, "mbs_ess: t = %.17g: %s", t, what);
}

static int all_finite(const double *v, int n)
{
    for (int i = 0; i < n; i++)
        if (!isfinite(v[i])) return 0;
    return 1;
}

/* The field with the current σ, as dopri5 wants it. */
static int rhs(void *ctx, const double *x, double *xdot)
{
    mbs_ess *w = ctx;
    w->st.nfev++;
    return w->sys.f(w->sys.user, x, w->sigma, xdot);
}

static int eval_f(mbs_ess *w, const double *x, double *out)
{
    int rc = rhs(w, x, out);
    if (rc) return fail(w, MBS_ESS_ERR_CALLBACK, MBS_ERR_MODEL, "the vector field f returned non-zero", w->t, -1);
    if (!all_finite(out, w->n))
        return fail(w, MBS_ESS_ERR_NOT_FINITE, MBS_ERR_MODEL, "the vector field f is not finite", w->t, -1);
    return 0;
}

static int eval_h(mbs_ess *w, const double *x, double *out, double t)
{
    w->st.nhev++;
    if (w->sys.h(w->sys.user, x, out))
        return fail(w, MBS_ESS_ERR_CALLBACK, MBS_ERR_MODEL, "the guard function h returned non-zero", t, -1);
    for (int k = 0; k < w->m; k++)
        if (!isfinite(out[k]))
            return fail(w, MBS_ESS_ERR_NOT_FINITE, MBS_ERR_MODEL, "h is not finite", t, k);
    return 0;
}

/* out = Dh(x)·v: the user's product, or a central difference of h along v (sec. 2.2: the
 * Jacobian need not be closed-form). */
static int eval_jvp(mbs_ess *w, const double *x, const double *v, double *out)
{
    int n = w->n, m = w->m;
    w->st.ndhev++;
    if (w->sys.dh) {
        if (w->sys.dh(w->sys.user, x, v, out))
            return fail(w, MBS_ESS_ERR_CALLBACK, MBS_ERR_MODEL, "the guard Jacobian product Dh·w returned non-zero",
                        w->t, -1);
    } else {
        double xn = 0, vn = 0;
        for (int i = 0; i < n; i++) { xn = fmax(xn, fabs(x[i])); vn = fmax(vn, fabs(v[i])); }
        if (vn == 0) { memset(out, 0, sizeof(double) * (size_t)m); return 0; }
        double d = sqrt(DBL_EPSILON) * (1 + xn) / vn;
        int rc;
        for (int i = 0; i < n; i++) w->xs[i] = x[i] + d * v[i];
        if ((rc = eval_h(w, w->xs, w->hp, w->t))) return rc;
        for (int i = 0; i < n; i++) w->xs[i] = x[i] - d * v[i];
        if ((rc = eval_h(w, w->xs, w->hm, w->t))) return rc;
        for (int k = 0; k < m; k++) out[k] = (w->hp[k] - w->hm[k]) / (2 * d);
    }
    for (int k = 0; k < m; k++)
        if (!isfinite(out[k])) return fail(w, MBS_ESS_ERR_NOT_FINITE, MBS_ERR_MODEL, "Dh·f is not finite", w->t, k);
    return 0;
}

static int ensure_f(mbs_ess *w)
{
    if (w->f_valid) return 0;
    int rc = eval_f(w, w->x, w->k[0]);
    if (rc) return rc;
    w->f_valid = 1;
    return 0;
}

static void log_event(mbs_ess *w, double t, int k, int kind)
{
    if (w->nevents < w->max_events) {
        w->events[w->nevents].t = t;
        w->events[w->nevents].guard = k;
        w->events[w->nevents].kind = kind;
    }
    w->nevents++;
    if (kind != MBS_ESS_PROJECTED) w->st.nlocated++;
}

/* h strictly on the side σ says. */
static int agree(double h, int s) { return s > 0 ? h > 0 : h < 0; }

/* ---------------------------------------------------------------- dense output */

static void put_column(mbs_ess *w, const double *x)
{
    memcpy(w->x_out + (size_t)w->ldx * w->iout, x, sizeof(double) * (size_t)w->n);
    w->iout++;
}

/* Requested times in (t0, tend] of a dopri5 step of size h from t0 (rcont prepared). */
static void emit_dense(mbs_ess *w, double t0, double h, double tend)
{
    while (w->iout < w->nout && w->t_out[w->iout] <= tend) {
        double th = h > 0 ? (w->t_out[w->iout] - t0) / h : 1;
        th = fmin(1, fmax(0, th));
        mbsi_dopri5_dense_eval(w->n, w->rcont, th, w->x_out + (size_t)w->ldx * w->iout);
        w->iout++;
    }
}

/* Requested times in (t0, tend] of a projection step: x0 + f·(t - t0), the projection line. */
static void emit_line(mbs_ess *w, double t0, const double *x0, const double *f, double tend)
{
    while (w->iout < w->nout && w->t_out[w->iout] <= tend) {
        double s = w->t_out[w->iout] - t0;
        double *o = w->x_out + (size_t)w->ldx * w->iout;
        for (int i = 0; i < w->n; i++) o[i] = x0[i] + f[i] * s;
        w->iout++;
    }
}

/* ---------------------------------------------------------------- projection steps */

/* After a move that crossed guard j (or after init, j = -1): every guard that is not armed
 * and not pending must have σ_k agree with the sign of h_k. A guard left (numerically) on
 * its zero set takes the side it heads to, sign(∇h_k·f); one that the move carried across
 * takes its new side and the crossing is logged. `rate` (may be NULL) holds ∇h·f along the
 * move just made: the direction in which a tied guard reached its zero set is the side it
 * goes on to, and reusing it spares an evaluation of f and of Dh·f per projection. */
static int resolve_sides(mbs_ess *w, int j, const double *rate)
{
    int m = w->m, nties = 0, rc;
    double r = j >= 0 ? fabs(w->hcur[j]) : 0;
    for (int k = 0; k < m; k++) {
        if (k == j || w->pending[k] || (w->armed[k] && !w->deferred[k])) continue;
        double tie = 2 * r + 1e-12 * w->eps[k];
        if (fabs(w->hcur[k]) <= tie) { nties++; continue; }
        if (!agree(w->hcur[k], w->sigma[k])) {
            int s = w->hcur[k] > 0 ? 1 : -1;
            w->sigma[k] = (signed char)s;
            w->f_valid = 0;
            log_event(w, w->t, k, s > 0 ? MBS_ESS_LOCATED : MBS_ESS_REVERSED);
            if (s > 0 && w->armed[k]) { w->armed[k] = 0; w->deferred[k] = 0; }
        }
    }
    if (!nties) return 0;
    if (!rate) {
        if ((rc = ensure_f(w))) return rc;
        if ((rc = eval_jvp(w, w->x, w->k[0], w->rate))) return rc;
        rate = w->rate;
    }
    for (int k = 0; k < m; k++) {
        if (k == j || w->pending[k] || (w->armed[k] && !w->deferred[k])) continue;
        if (fabs(w->hcur[k]) > 2 * r + 1e-12 * w->eps[k]) continue;
        int s = rate[k] > 0 ? 1 : rate[k] < 0 ? -1 : w->sigma[k];
        if (s != w->sigma[k]) { w->sigma[k] = (signed char)s; w->f_valid = 0; }
        if (s > 0 && w->armed[k]) {   /* a grazing guard found on its zero set, heading across */
            w->armed[k] = 0;
            w->deferred[k] = 0;
            log_event(w, w->t, k, MBS_ESS_LOCATED);
        }
        w->pending[k] = (unsigned char)!agree(w->hcur[k], s);
    }
    return 0;
}

/* Listing 1's projection branch, repeated while an armed guard is inside its band (several
 * guards in one band give consecutive projections, sec. 3.1). Each pass crosses or defers at
 * least one guard, so there are at most m + 1 passes. Sets *at_end when the projection line
 * reaches tf first; the state then stops on it at tf, the guard still armed. */
static int project(mbs_ess *w, double tf, int *at_end)
{
    int m = w->m, n = w->n, rc;
    const double c = w->opt.liveness_c;
    for (int pass = 0; pass <= m; pass++) {
        int any = 0;
        for (int k = 0; k < m && !any; k++)
            any = w->armed[k] && !w->deferred[k] && w->hcur[k] >= -w->eps[k];
        if (!any) return 0;
        if ((rc = ensure_f(w))) return rc;
        const double *f = w->k[0];
        if ((rc = eval_jvp(w, w->x, f, w->rate))) return rc;
        int best = -1, crossed_here = 0;
        double dtbest = 0;
        for (int k = 0; k < m; k++) {
            if (!w->armed[k] || w->deferred[k] || w->hcur[k] < -w->eps[k]) continue;
            double rk = w->rate[k];
            if (!(rk > c)) {
                /* requirement 4 fails here: the first-order crossing time is meaningless */
                if (w->opt.liveness_policy == MBS_ESS_LIVENESS_FAIL)
                    return fail(w, MBS_ESS_ERR_LIVENESS, MBS_ERR_MODEL,
                                "liveness violated inside the band: grad(h)·f <= c (requirement 4)", w->t, k);
                if (w->hcur[k] >= 0) {   /* already across (overshot): take that side now */
                    w->armed[k] = 0;
                    w->sigma[k] = 1;
                    w->f_valid = 0;
                    crossed_here = 1;
                    log_event(w, w->t, k, MBS_ESS_LOCATED);
                } else {
                    w->deferred[k] = 1;
                }
                continue;
            }
            /* the first-order time to the guard, -h_k / (∇h_k·f); a guard already on its far
             * side (overshot by an earlier projection) is crossed where we are */
            double dt = w->hcur[k] >= 0 ? 0 : -w->hcur[k] / rk;
            if (best < 0 || dt < dtbest) { best = k; dtbest = dt; }
        }
        if (crossed_here) continue;   /* the field changed: project with the new one */
        if (best < 0) return 0;
        if (w->t + dtbest > tf) {
            double s = tf - w->t;
            emit_line(w, w->t, w->x, f, tf);
            for (int i = 0; i < n; i++) w->x[i] += f[i] * s;
            w->t = tf;
            w->f_valid = 0;
            *at_end = 1;
            return eval_h(w, w->x, w->hcur, w->t);
        }
        emit_line(w, w->t, w->x, f, w->t + dtbest);
        for (int i = 0; i < n; i++) w->x[i] += f[i] * dtbest;
        w->t += dtbest;
        w->armed[best] = 0;
        w->sigma[best] = 1;
        w->f_valid = 0;
        w->st.nprojections++;
        log_event(w, w->t, best, MBS_ESS_PROJECTED);
        if ((rc = eval_h(w, w->x, w->hcur, w->t))) return rc;
        w->pending[best] = (unsigned char)!(w->hcur[best] > 0);
        if ((rc = resolve_sides(w, best, w->rate))) return rc;
        w->facold = 1e-4;   /* the step-size controller's memory is of a field we have left */
    }
    return 0;
}

/* ---------------------------------------------------------------- events inside a step */

static int collect_candidates(mbs_ess *w)
{
    int m = w->m, nc = 0, pool_empty = 1;
    for (int k = 0; k < m; k++)
        if (w->armed[k]) { pool_empty = 0; break; }
    const int listing1 = w->opt.rearm == MBS_ESS_REARM_POOL_EMPTY;
    for (int k = 0; k < m; k++) {
        const double ho = w->hcur[k], hn = w->hnew[k], e = w->eps[k];
        int kind = -1, dir = 1;
        double level = 0;
        if (w->armed[k] && !w->deferred[k]) {
            if (ho < -e && hn >= -e) { kind = CAND_ENTRY; level = -e; }
        } else if (w->pending[k]) {
            continue;
        } else if (listing1 && pool_empty && ho < -e && hn >= -e) {
            kind = CAND_ENTRY; level = -e;    /* listing 1 stops on any guard when the pool is empty */
        } else if (w->sigma[k] > 0 && hn < 0) {
            kind = CAND_REVERSE; dir = -1;
        } else if (w->sigma[k] < 0 && hn > 0) {
            kind = CAND_CROSS;
        }
        if (kind < 0) continue;
        w->cand[nc] = k;
        w->cand_kind[nc] = (signed char)kind;
        w->cand_dir[nc] = (signed char)dir;
        w->cand_level[nc] = level;
        nc++;
    }
    return nc;
}

/* g(t) = max over candidates of dir·(h_k - level): negative at the start of the step,
 * >= 0 where the first candidate event has happened. */
static double gmax(const mbs_ess *w, int nc, const double *h)
{
    double g = -INFINITY;
    for (int c = 0; c < nc; c++) {
        int k = w->cand[c];
        g = fmax(g, w->cand_dir[c] * (h[k] - w->cand_level[c]));
    }
    return g;
}

/* The first event of the step, by the Illinois variant of regula falsi on the dense output
 * (each iteration keeps a bracket, so it cannot leave the step). On return xb, hb hold the
 * state and the guards at θ_b, the right end of the final bracket, where the event has
 * happened: the caller's decisions there rest on signs that are already right. */
static int locate(mbs_ess *w, int nc, double t0, double h, double *theta_b)
{
    int rc;
    double a = 0, b = 1, ga = gmax(w, nc, w->hcur), gb = gmax(w, nc, w->hnew), gb_true = gb;
    memcpy(w->xb, w->xnew, sizeof(double) * (size_t)w->n);
    memcpy(w->hb, w->hnew, sizeof(double) * (size_t)w->m);
    int entry_only = 1;
    double tol_g = INFINITY;
    for (int c = 0; c < nc; c++) {
        if (w->cand_kind[c] != CAND_ENTRY) entry_only = 0;
        else tol_g = fmin(tol_g, 1e-6 * w->eps[w->cand[c]]);
    }
    /* a band entry only fixes where a projection starts: to a millionth of the band, which
     * makes the O(ε²) projection error reproducible to ~1e-6 of itself; a sign change is a
     * switch of the field and is located to the rounding level of t */
    const double tol_t = fmax(1e-12 * h, 4 * DBL_EPSILON * fabs(t0 + h));
    int side = 0;
    for (int it = 0; it < 200; it++) {
        if ((b - a) * h <= tol_t) break;
        if (entry_only && gb_true <= tol_g) break;
        double cth = b - gb * (b - a) / (gb - ga);
        if (!(cth > a && cth < b)) cth = 0.5 * (a + b);
        mbsi_dopri5_dense_eval(w->n, w->rcont, cth, w->xc);
        if ((rc = eval_h(w, w->xc, w->hc, t0 + cth * h))) return rc;
        w->st.nroot_iterations++;
        double gc = gmax(w, nc, w->hc);
        if (gc >= 0) {
            double *tx = w->xb; w->xb = w->xc; w->xc = tx;
            double *th = w->hb; w->hb = w->hc; w->hc = th;
            b = cth; gb = gc; gb_true = gc;
            if (side == 1) ga *= 0.5;
            side = 1;
        } else {
            a = cth; ga = gc;
            if (side == -1) gb *= 0.5;
            side = -1;
        }
    }
    *theta_b = b;
    return 0;
}

/* After every step or cut: pending sides that the trajectory has confirmed, bands left,
 * guards to re-arm. */
static int bookkeeping(mbs_ess *w)
{
    for (int k = 0; k < w->m; k++) {
        const double h = w->hcur[k], e = w->eps[k];
        if (w->pending[k]) {
            if (agree(h, w->sigma[k])) w->pending[k] = 0;
            else if (w->sigma[k] > 0 ? h < -e : h > e) {
                /* set by an event, but the trajectory went the other way across the band */
                if (w->opt.liveness_policy == MBS_ESS_LIVENESS_FAIL)
                    return fail(w, MBS_ESS_ERR_LIVENESS, MBS_ERR_MODEL,
                                "liveness violated: the trajectory turned back across the band of a guard it had just crossed",
                                w->t, k);
                w->sigma[k] = (signed char)-w->sigma[k];
                w->pending[k] = 0;
                w->f_valid = 0;
                log_event(w, w->t, k, w->sigma[k] > 0 ? MBS_ESS_LOCATED : MBS_ESS_REVERSED);
            }
        }
        if (w->deferred[k] && h < -e) w->deferred[k] = 0;
        if (w->opt.rearm == MBS_ESS_REARM_LEFT_BAND && !w->armed[k] && !w->pending[k] && h < -e) {
            w->armed[k] = 1;
            w->sigma[k] = -1;
            w->st.nrearmed++;
        }
    }
    return 0;
}

/* Hairer's starting step when neither the last step nor the options give one, so that the
 * first step size is scaled to the field rather than guessed. */
static int first_step_size(mbs_ess *w, double hmax)
{
    if (w->h_next > 0) return 0;
    if (w->opt.h_init > 0) w->h_next = w->opt.h_init;
    else if (mbsi_dopri5_initial_step(w->n, rhs, w, w->x, w->k[0], w->opt.rtol, w->opt.atol, hmax, w->ytmp, w->xnew,
                                     &w->h_next))
        return fail(w, MBS_ESS_ERR_CALLBACK, MBS_ERR_MODEL, "the vector field f returned non-zero", w->t, -1);
    return 0;
}

/* dopri5 steps of shrinking size from x until one passes the error test, so that only an
 * accepted step reaches the event check. On return xnew and k[6] = f(xnew) are that step's,
 * *h its size, *err its error estimate, *rejected whether a try failed, *last whether it
 * lands on tf. */
static int try_until_accepted(mbs_ess *w, double tf, double hmax, long *attempts, double *h_out, double *err_out,
                              int *rejected_out, int *last_out)
{
    double h = fmin(w->h_next, hmax), err = 0;
    int rejected = 0, last = 0, nonfinite = 0;
    for (;;) {
        if (++*attempts > w->opt.max_steps)
            return fail(w, MBS_ESS_ERR_STEP_LIMIT, MBS_ERR_MODEL,
                        "step budget (max_steps) exhausted before the final time", w->t, -1);
        const double rem = tf - w->t;
        last = h >= rem || w->t + 1.01 * h >= tf;   /* land on tf rather than leave a sliver */
        if (last) h = rem;
        if (!(h > 16 * DBL_EPSILON * fmax(1, fabs(w->t)))) {
            if (nonfinite)
                return fail(w, MBS_ESS_ERR_NOT_FINITE, MBS_ERR_MODEL,
                            "the vector field f is not finite at the stages of every step from here", w->t, -1);
            return fail(w, MBS_ESS_ERR_STEP_SIZE, MBS_ERR_MODEL,
                        "step size underflow (a discontinuity no guard covers, or a stiff field)", w->t, -1);
        }
        int rc = mbsi_dopri5_step(w->n, rhs, w, w->x, h, w->k, w->xnew, w->ytmp, w->opt.rtol, w->opt.atol, &err);
        if (rc) return fail(w, MBS_ESS_ERR_CALLBACK, MBS_ERR_MODEL, "the vector field f returned non-zero", w->t, -1);
        if (err <= 1) break;
        w->st.nrejected++;
        rejected = 1;
        if (isfinite(err)) {
            h /= fmin(5.0, pow(err, 0.17) / 0.9);
            continue;
        }
        /* a non-finite estimate: a stage left the field's domain (shrink hard), or f is
         * not finite arbitrarily close to x (give up after 10^-30 of the step) */
        if (++nonfinite > 30)
            return fail(w, MBS_ESS_ERR_NOT_FINITE, MBS_ERR_MODEL,
                        "the vector field f is not finite at the stages of every step from here", w->t, -1);
        h *= 0.1;
    }
    *h_out = h;
    *err_out = err;
    *rejected_out = rejected;
    *last_out = last;
    return 0;
}

/* The next step size from the accepted step's error, so that the controller remembers how the
 * field behaved: Hairer's PI controller (DOPRI5: β = 0.04, safety 0.9, factor within [0.2, 10]). */
static void next_step_size(mbs_ess *w, double h, double err, int rejected, int last)
{
    double fac = pow(err, 0.17) / pow(w->facold, 0.04);
    fac = fmax(0.1, fmin(5.0, fac / 0.9));
    double hn = h / fac;
    if (rejected) hn = fmin(hn, h);
    w->facold = fmax(err, 1e-4);
    if (!last || hn < w->h_next) w->h_next = hn;   /* a step clipped at tf says nothing about the next */
}

/* When a candidate needs it, locates the step's first event on the dense output and moves the
 * state there (*cut = 1), so that no guard is integrated through; *dense says whether the dense
 * output of the step was prepared. */
static int cut_at_first_event(mbs_ess *w, int nc, double t0, double h, int *dense, int *cut)
{
    int need = w->opt.entry == MBS_ESS_ENTRY_LOCATE, rc;
    for (int c = 0; c < nc && !need; c++) need = w->cand_kind[c] != CAND_ENTRY;
    if (!need) return 0;
    double th;
    mbsi_dopri5_dense_prepare(w->n, w->x, w->xnew, w->k, h, w->rcont);
    *dense = 1;
    if ((rc = locate(w, nc, t0, h, &th))) return rc;
    if (th < 1) {
        *cut = 1;
        double tb = t0 + th * h;
        emit_dense(w, t0, h, tb);
        double *tx = w->x; w->x = w->xb; w->xb = tx;
        double *th2 = w->hcur; w->hcur = w->hb; w->hb = th2;
        w->t = tb;
        w->f_valid = 0;
    }
    return 0;
}

/* Moves the state to the end of an uncut step, emitting the requested outputs inside it; the
 * last stage becomes the next step's first (first same as last), so f is not evaluated again. */
static void advance_to_step_end(mbs_ess *w, double t0, double h, double tnew, int dense)
{
    if (w->iout < w->nout && w->t_out[w->iout] <= tnew) {
        if (!dense) mbsi_dopri5_dense_prepare(w->n, w->x, w->xnew, w->k, h, w->rcont);
        emit_dense(w, t0, h, tnew);
    }
    double *tx = w->x; w->x = w->xnew; w->xnew = tx;
    double *tk = w->k[0]; w->k[0] = w->k[6]; w->k[6] = tk;   /* first same as last */
    double *th = w->hcur; w->hcur = w->hnew; w->hnew = th;
    w->t = tnew;
    w->f_valid = 1;
}

/* The candidate events that have happened at the new point switch the field there (σ), so
 * that the next step integrates the mode the trajectory is in; an entry with the pool empty
 * re-arms every guard on its negative side (listing 1). */
static void switch_at_events(mbs_ess *w, int nc)
{
    int rearm_all = 0;
    for (int c = 0; c < nc; c++) {
        const int k = w->cand[c];
        if (w->cand_dir[c] * (w->hcur[k] - w->cand_level[c]) < 0) continue;
        switch (w->cand_kind[c]) {
        case CAND_ENTRY:
            if (!w->armed[k]) rearm_all = 1;   /* listing 1: the pool was empty */
            break;
        case CAND_CROSS:
            w->sigma[k] = 1;
            w->f_valid = 0;
            if (w->armed[k]) { w->armed[k] = 0; w->deferred[k] = 0; }
            log_event(w, w->t, k, MBS_ESS_LOCATED);
            break;
        case CAND_REVERSE:
            w->sigma[k] = -1;
            w->f_valid = 0;
            log_event(w, w->t, k, MBS_ESS_REVERSED);
            break;
        }
    }
    if (rearm_all)
        for (int k = 0; k < w->m; k++)
            if (!w->armed[k] && !w->pending[k] && w->hcur[k] < 0) {
                w->armed[k] = 1;
                w->sigma[k] = -1;
                w->st.nrearmed++;
            }
}

/* One accepted dopri5 step (after any rejections), cut at its first event: listing 1's
 * integration branch. */
static int step(mbs_ess *w, double tf, long *attempts)
{
    double h = 0, err = 0;
    int rc, rejected = 0, last = 0;
    if ((rc = ensure_f(w))) return rc;
    const double hmax = w->opt.h_max > 0 ? w->opt.h_max : tf - w->t;
    if ((rc = first_step_size(w, hmax))) return rc;
    if ((rc = try_until_accepted(w, tf, hmax, attempts, &h, &err, &rejected, &last))) return rc;
    next_step_size(w, h, err, rejected, last);
    w->st.nsteps++;
    if (!all_finite(w->k[6], w->n) || !all_finite(w->xnew, w->n))
        return fail(w, MBS_ESS_ERR_NOT_FINITE, MBS_ERR_MODEL, "the vector field f is not finite", w->t + h, -1);

    const double t0 = w->t, tnew = last ? tf : w->t + h;
    int nc = 0, dense = 0, cut = 0;
    if (w->m > 0) {
        if ((rc = eval_h(w, w->xnew, w->hnew, tnew))) return rc;
        nc = collect_candidates(w);
    }
    if (nc > 0 && (rc = cut_at_first_event(w, nc, t0, h, &dense, &cut))) return rc;
    if (!cut) advance_to_step_end(w, t0, h, tnew, dense);
    switch_at_events(w, nc);
    return bookkeeping(w);
}

/* ---------------------------------------------------------------- public API */

void mbs_ess_default_options(mbs_ess_options *opt)
{
    if (!opt) return;
    memset(opt, 0, sizeof(*opt));
    opt->eps = 1e-3;
    opt->eps_k = NULL;
    opt->rtol = 1e-6;
    opt->atol = 1e-9;
    opt->h_init = 0;
    opt->h_max = 0;
    opt->liveness_c = 0;
    opt->liveness_policy = MBS_ESS_LIVENESS_FAIL;
    opt->rearm = MBS_ESS_REARM_LEFT_BAND;
    opt->entry = MBS_ESS_ENTRY_LOCATE;
    opt->max_steps = 10000000L;
}

mbs_ess *mbs_ess_new(int n, int m, int max_events, mbs_error *err)
{
    if (n < 1 || m < 0 || max_events < 0 || n > (1 << 24) || m > (1 << 24)) {
        mbsi_fail(err, MBS_ERR_ARG, "mbs_ess_new: bad sizes n = %d, m = %d, max_events = %d", n, m, max_events);
        return NULL;
    }
    /* one block: the struct, then doubles, then events, then ints and chars */
    size_t nd = (size_t)n * (6 + 7 + 5) + (size_t)m * 9;
    size_t bytes = sizeof(mbs_ess) + sizeof(double) * nd + sizeof(mbs_ess_event) * (size_t)max_events +
                   sizeof(int) * (size_t)m + (size_t)m * 6 + 64;
    mbs_ess *w = calloc(1, bytes);
    if (!w) {
        mbsi_fail(err, MBS_ERR_NOMEM, "mbs_ess_new: out of memory (%zu bytes)", bytes);
        return NULL;
    }
    w->n = n;
    w->m = m;
    w->max_events = max_events;
    double *p = (double *)(w + 1);
    double **vn[] = {&w->x, &w->xnew, &w->ytmp, &w->xb, &w->xc, &w->xs};
    for (size_t i = 0; i < sizeof vn / sizeof vn[0]; i++) { *vn[i] = p; p += n; }
    for (int i = 0; i < 7; i++) { w->k[i] = p; p += n; }
    w->rcont = p; p += 5 * (size_t)n;
    double **vm[] = {&w->hcur, &w->hnew, &w->hb, &w->hc, &w->rate, &w->eps, &w->hp, &w->hm, &w->cand_level};
    for (size_t i = 0; i < sizeof vm / sizeof vm[0]; i++) { *vm[i] = p; p += m; }
    w->events = (mbs_ess_event *)p;
    int *ip = (int *)(w->events + max_events);
    w->cand = ip; ip += m;
    signed char *cp = (signed char *)ip;
    w->sigma = cp; cp += m;
    w->cand_kind = cp; cp += m;
    w->cand_dir = cp; cp += m;
    w->armed = (unsigned char *)cp; cp += m;
    w->pending = (unsigned char *)cp; cp += m;
    w->deferred = (unsigned char *)cp;
    mbs_ess_default_options(&w->opt);
    return w;
}

void mbs_ess_free(mbs_ess *w) { free(w); }

int mbs_ess_init(mbs_ess *w, const mbs_ess_system *sys, const mbs_ess_options *opt, double t0,
                 const double *x0, mbs_error *err)
{
    if (!w) return mbsi_fail(err, MBS_ERR_ARG, "mbs_ess_init: NULL integrator");
    w->err = err;
    w->initialized = 0;
    w->status = MBS_ESS_ERR_INPUT;
    if (!sys || !x0) return mbsi_fail(err, MBS_ERR_ARG, "mbs_ess_init: NULL system or initial state");
    if (sys->n != w->n || sys->m != w->m)
        return mbsi_fail(err, MBS_ERR_ARG, "mbs_ess_init: system has n = %d, m = %d but the integrator was made for %d, %d",
                        sys->n, sys->m, w->n, w->m);
    if (!sys->f) return mbsi_fail(err, MBS_ERR_ARG, "mbs_ess_init: the vector field f is NULL");
    if (w->m > 0 && !sys->h) return mbsi_fail(err, MBS_ERR_ARG, "mbs_ess_init: m = %d guards but h is NULL", w->m);
    mbs_ess_options o;
    if (opt) o = *opt;
    else mbs_ess_default_options(&o);
    for (int k = 0; k < w->m; k++) {
        double e = o.eps_k ? o.eps_k[k] : o.eps;
        if (!(e > 0) || !isfinite(e))
            return mbsi_fail(err, MBS_ERR_ARG, "mbs_ess_init: precision eps of guard %d is %g; it must be finite and > 0", k, e);
        w->eps[k] = e;
    }
    if (!(o.rtol >= 0) || !(o.atol >= 0) || !(o.rtol + o.atol > 0) || !isfinite(o.rtol) || !isfinite(o.atol))
        return mbsi_fail(err, MBS_ERR_ARG, "mbs_ess_init: tolerances rtol = %g, atol = %g must be >= 0, finite, not both 0",
                        o.rtol, o.atol);
    if (!(o.h_init >= 0) || !(o.h_max >= 0) || !isfinite(o.h_init) || !isfinite(o.h_max))
        return mbsi_fail(err, MBS_ERR_ARG, "mbs_ess_init: h_init = %g, h_max = %g must be finite and >= 0", o.h_init, o.h_max);
    if (!(o.liveness_c >= 0) || !isfinite(o.liveness_c))
        return mbsi_fail(err, MBS_ERR_ARG, "mbs_ess_init: liveness_c = %g must be finite and >= 0", o.liveness_c);
    if (o.liveness_policy < 0 || o.liveness_policy > 1 || o.rearm < 0 || o.rearm > 1 || o.entry < 0 || o.entry > 1)
        return mbsi_fail(err, MBS_ERR_ARG, "mbs_ess_init: unknown liveness_policy, rearm or entry value");
    if (o.max_steps < 1) return mbsi_fail(err, MBS_ERR_ARG, "mbs_ess_init: max_steps = %ld must be >= 1", o.max_steps);
    if (!isfinite(t0)) return mbsi_fail(err, MBS_ERR_ARG, "mbs_ess_init: t0 is not finite");
    for (int i = 0; i < w->n; i++)
        if (!isfinite(x0[i])) return mbsi_fail(err, MBS_ERR_ARG, "mbs_ess_init: x0[%d] is not finite", i);
    o.eps_k = NULL;   /* copied into w->eps: the caller's array need not outlive this call */
    w->opt = o;
    w->sys = *sys;
    w->t = t0;
    memcpy(w->x, x0, sizeof(double) * (size_t)w->n);
    memset(&w->st, 0, sizeof w->st);
    w->nevents = 0;
    w->f_valid = 0;
    w->h_next = o.h_init;
    w->facold = 1e-4;
    w->nout = w->iout = 0;
    w->t_out = NULL;
    w->x_out = NULL;
    int rc;
    if (w->m > 0) {
        if ((rc = eval_h(w, w->x, w->hcur, t0))) return rc;
        /* listing 1: crossmsk = h(x0) >= 0 */
        for (int k = 0; k < w->m; k++) {
            w->armed[k] = w->hcur[k] < 0;
            w->sigma[k] = (signed char)(w->hcur[k] < 0 ? -1 : 1);
            w->pending[k] = 0;
            w->deferred[k] = 0;
        }
        /* a guard exactly on its zero set takes the side it is heading to */
        if ((rc = resolve_sides(w, -1, NULL))) return rc;
    }
    w->status = MBS_ESS_DONE;
    w->initialized = 1;
    return MBS_OK;
}

int mbs_ess_integrate(mbs_ess *w, double tf, const double *t_out, int nout, double *x_out, int ldx,
                      mbs_error *err)
{
    if (!w) return mbsi_fail(err, MBS_ERR_ARG, "mbs_ess_integrate: NULL integrator");
    w->err = err;
    if (!w->initialized) {
        w->status = MBS_ESS_ERR_INPUT;
        return mbsi_fail(err, MBS_ERR_ARG, "mbs_ess_integrate: not initialised (mbs_ess_init failed or was not called)");
    }
    if (!isfinite(tf) || tf < w->t) {
        w->status = MBS_ESS_ERR_INPUT;
        return mbsi_fail(err, MBS_ERR_ARG, "mbs_ess_integrate: final time %g is before the current time %.17g", tf, w->t);
    }
    if (nout < 0 || (nout > 0 && (!t_out || !x_out || ldx < w->n))) {
        w->status = MBS_ESS_ERR_INPUT;
        return mbsi_fail(err, MBS_ERR_ARG, "mbs_ess_integrate: bad dense output request (nout = %d, ldx = %d, n = %d)",
                        nout, ldx, w->n);
    }
    for (int i = 0; i < nout; i++)
        if (!(t_out[i] >= w->t && t_out[i] <= tf) || (i > 0 && t_out[i] < t_out[i - 1])) {
            w->status = MBS_ESS_ERR_INPUT;
            return mbsi_fail(err, MBS_ERR_ARG,
                            "mbs_ess_integrate: output time t_out[%d] = %g is outside [%.17g, %g] or out of order", i,
                            t_out[i], w->t, tf);
        }
    w->t_out = t_out;
    w->x_out = x_out;
    w->nout = nout;
    w->ldx = ldx;
    w->iout = 0;
    while (w->iout < nout && t_out[w->iout] <= w->t) put_column(w, w->x);
    w->f_valid = 0;   /* the user's data may have changed since the last call */
    long attempts = 0;
    int rc;
    /* each pass either reaches tf or makes at least one counted step attempt */
    while (w->t < tf) {
        int at_end = 0;
        if ((rc = project(w, tf, &at_end))) return rc;
        if (at_end || w->t >= tf) break;
        if ((rc = step(w, tf, &attempts))) return rc;
    }
    while (w->iout < nout) put_column(w, w->x);   /* t_out == tf lost to rounding */
    w->status = MBS_ESS_DONE;
    return MBS_OK;
}

double mbs_ess_time(const mbs_ess *w) { return w->t; }
const double *mbs_ess_state(const mbs_ess *w) { return w->x; }
const signed char *mbs_ess_sigma(const mbs_ess *w) { return w->sigma; }
const mbs_ess_stats *mbs_ess_get_stats(const mbs_ess *w) { return &w->st; }
int mbs_ess_last_status(const mbs_ess *w) { return w->status; }

const mbs_ess_event *mbs_ess_events(const mbs_ess *w, int *nstored, int *ntotal)
{
    if (nstored) *nstored = w->nevents < w->max_events ? w->nevents : w->max_events;
    if (ntotal) *ntotal = w->nevents;
    return w->events;
}
