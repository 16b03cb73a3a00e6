/* variational_solve.c — the root finders of the linear-time variational integrator (Lee, Liu,
 * Park, Srinivasa, WAFR 2016; equation and algorithm numbers are theirs): each finds the q^{k+1}
 * at which DRNEA's residual (src/dynamics/drnea.c) vanishes. RIQN (Algorithm 3) applies M⁻¹(q^k)
 * by the articulated-body impulse solve; Newton (Algorithm 1) and Broyden use the exact Jacobian
 * of Algorithm 4; tree Newton eliminates that Jacobian along the tree in O(n) (del_tree.c). All
 * work in the scratch of the mbs_vi workspace and never allocate. */
#include <float.h>
#include <string.h>

#include "../dynamics/dynamics_internal.h"
#include "mbs/liegroup.h"
#include "mbs/variational.h"
/* after spatial.h: lapacke.h pulls in complex.h, whose macro I clashes with m3_identity's array */
#include <lapacke.h>

void mbs_vi_default_options(mbs_vi_options *opt)
{
    opt->solver = MBS_VI_RIQN;
    opt->guess = MBS_VI_IG3;
    opt->tol = 1e-9;
    opt->max_iter = 20;
    opt->history = NULL;
    opt->history_cap = 0;
}

static double norm2(const double *x, int n)
{
    double s = 0;
    for (int k = 0; k < n; k++) s += x[k] * x[k];
    return sqrt(s);
}

/* The update would move every joint by less than the rounding of its coordinates: no
 * representable q^{k+1} is closer to the root, whose residual cannot then go below
 * ~ ‖M‖ ε |q| / Δt (≈ 2e-11 N·m·s on the 10-link 1.5 m pendulum at 1 ms). The solve has
 * converged as far as doubles allow. Joint by joint, because a free-flyer far from the origin
 * has coarser positions than its joints' angles. */
static int stalled(const mbs_model *m, const double *dq, const double *q)
{
    for (int i = 0; i < m->nbodies; i++) {
        const mbs_body *b = &m->bodies[i];
        double scale = 1;
        for (int k = 0; k < b->nq; k++) scale = fmax(scale, fabs(q[b->idx_q + k]));
        for (int k = 0; k < b->nv; k++)
            if (fabs(dq[b->idx_v + k]) > 4 * DBL_EPSILON * scale) return 0;
    }
    return 1;
}

static void initial_guess(const mbs_model *m, mbs_data *d, mbs_vi *w, mbs_vi_guess guess, double *q)
{
    const int nv = w->nv;
    double *dq = w->dq;
    switch (guess) {
    case MBS_VI_GUESS_GIVEN:
        return;
    case MBS_VI_IG1:
        memcpy(q, w->qk, (size_t)w->nq * sizeof(double));
        return;
    case MBS_VI_IG2:
        for (int k = 0; k < nv; k++) dq[k] = w->dt * w->vk[k];
        break;
    case MBS_VI_IG3:
        mbs_aba_fext(m, d, w->qk, w->vk, w->tau, w->has_fext ? w->fext : NULL, w->t1);
        for (int k = 0; k < nv; k++) dq[k] = w->dt * (w->vk[k] + w->dt * w->t1[k]);
        break;
    }
    mbs_integrate(m, w->qk, dq, q);
}

int mbs_vi_solve(const mbs_model *m, mbs_data *d, mbs_vi *w, const mbs_vi_options *opt, double *q_next,
                 mbs_vi_result *result)
{
    mbs_vi_options def;
    if (!opt) { mbs_vi_default_options(&def); opt = &def; }
    if (!(opt->tol >= 0) || opt->max_iter < 0 || opt->guess < MBS_VI_GUESS_GIVEN || opt->guess > MBS_VI_IG3 ||
        opt->solver < MBS_VI_RIQN || opt->solver > MBS_VI_TREE_NEWTON)
        return MBS_ERR_ARG;
    const int nv = w->nv;
    double *e = w->e, *dq = w->dq;
    mbs_vi_result r = {0, 0, 0, 0, 0};
    int rc = MBS_OK, at_floor = 0, refresh = 1, factored = 0, abi_ready = 0;
    initial_guess(m, d, w, opt->guess, q_next);
    if (opt->solver == MBS_VI_RIQN) mbs_abi_factor(m, d, w->qk);   /* M(q^k): once per step */
    mbs_vi_residual(m, w, q_next, e);
    if (opt->solver == MBS_VI_BROYDEN) {
        /* H = J⁻¹ at the initial guess */
        mbsi_vi_jacobian_at(m, w, q_next, w->J, nv);
        r.jacobians = 1;
        memset(w->H, 0, (size_t)nv * (size_t)nv * sizeof(double));
        for (int k = 0; k < nv; k++) w->H[k + (size_t)nv * k] = 1;
        if (nv && LAPACKE_dgesv_work(LAPACK_COL_MAJOR, nv, nv, w->J, nv, w->ipiv, w->H, nv) != 0) rc = MBS_ERR_MODEL;
    }
    r.evaluations = 1;
    r.residual = norm2(e, nv);
    if (opt->history && opt->history_cap > 0) opt->history[0] = r.residual;
    while (rc == MBS_OK && !(r.residual <= opt->tol) && r.iterations < opt->max_iter) {
        if (!isfinite(r.residual)) { rc = MBS_ERR_MODEL; break; }
        switch (opt->solver) {
        case MBS_VI_RIQN:
            /* Algorithm 3, line 5: Δq = -Δt M⁻¹(q^k) e by the articulated-body impulse solve */
            memcpy(dq, e, (size_t)nv * sizeof(double));
            mbs_abi_solve(m, d, dq, 1, nv);
            for (int k = 0; k < nv; k++) dq[k] *= -w->dt;
            break;
        case MBS_VI_NEWTON:
            /* Algorithm 1, line 5, with the Jacobian of Algorithm 4 at the current iterate */
            mbsi_vi_jacobian_at(m, w, q_next, w->J, nv);
            r.jacobians++;
            for (int k = 0; k < nv; k++) dq[k] = -e[k];
            if (LAPACKE_dgesv_work(LAPACK_COL_MAJOR, nv, 1, w->J, nv, w->ipiv, dq, nv) != 0) rc = MBS_ERR_MODEL;
            break;
        case MBS_VI_TREE_NEWTON:
            /* Newton's step with the Jacobian eliminated along the tree in O(n). Forming B_i costs
             * about six DRNEA passes, so the factors are kept while they contract the residual
             * by 4 or more per iteration (a chord step, as cheap as RIQN's) and renewed when not */
            if (refresh || !factored) {
                mbsi_vi_linearise(m, w, q_next);
                factored = !mbsi_del_tree_factor(m, &w->tree, w->B, w->Rk, w->pk, w->R1, w->p1, m->any_armature ? w->rot : NULL);
                r.jacobians++;
            }
            for (int k = 0; k < nv; k++) dq[k] = -e[k];
            if (factored) {
                /* R1, p1 still hold the placements the factors were formed at: the residual does
                 * not touch them, and mbs_vi_begin, which uses them as scratch, comes before the
                 * first refresh of every solve */
                mbsi_del_tree_solve(m, &w->tree, w->Rk, w->pk, w->R1, w->p1, dq);
                break;
            }
            /* a block D_i singular to round-off (A may still be regular: the elimination pivots
             * only within bodies): this iteration takes RIQN's step, and the next refactors */
            if (!abi_ready) { mbs_abi_factor(m, d, w->qk); abi_ready = 1; }
            mbs_abi_solve(m, d, dq, 1, nv);
            for (int k = 0; k < nv; k++) dq[k] *= w->dt;
            break;
        case MBS_VI_BROYDEN:
            /* Δq = -H e, column by column (H is column-major) */
            memset(dq, 0, (size_t)nv * sizeof(double));
            for (int k = 0; k < nv; k++) {
                const double *Hk = w->H + (size_t)nv * k;
                for (int i = 0; i < nv; i++) dq[i] -= Hk[i] * e[k];
            }
            break;
        }
        if (rc != MBS_OK) break;
        for (int k = 0; k < nv; k++)
            if (!isfinite(dq[k])) rc = MBS_ERR_MODEL;
        if (rc != MBS_OK) break;
        if (stalled(m, dq, q_next)) { at_floor = 1; break; }
        mbs_integrate(m, q_next, dq, q_next);
        r.iterations++;
        if (opt->solver == MBS_VI_BROYDEN) {
            /* good Broyden, inverse form: H += (s - H y) sᵀ H / (sᵀ H y), y = e⁺ - e */
            memcpy(w->e2, e, (size_t)nv * sizeof(double));
            mbs_vi_residual(m, w, q_next, e);
            double *y = w->y, *Hy = w->t1, *sH = w->t2, den = 0;
            for (int k = 0; k < nv; k++) { y[k] = e[k] - w->e2[k]; Hy[k] = 0; }
            for (int k = 0; k < nv; k++) {
                const double *Hk = w->H + (size_t)nv * k;
                double t = 0;
                for (int i = 0; i < nv; i++) {
                    Hy[i] += Hk[i] * y[k];
                    t += dq[i] * Hk[i];
                }
                sH[k] = t;
            }
            for (int k = 0; k < nv; k++) den += dq[k] * Hy[k];
            if (den != 0 && isfinite(den))
                for (int j = 0; j < nv; j++) {
                    double sj = sH[j] / den;
                    for (int i = 0; i < nv; i++) w->H[i + (size_t)nv * j] += (dq[i] - Hy[i]) * sj;
                }
        } else
            mbs_vi_residual(m, w, q_next, e);
        r.evaluations++;
        double previous = r.residual;
        r.residual = norm2(e, nv);
        refresh = !(r.residual <= 0.25 * previous);
        if (opt->history && r.iterations < opt->history_cap) opt->history[r.iterations] = r.residual;
    }
    if (rc == MBS_OK && !isfinite(r.residual)) rc = MBS_ERR_NUMERIC;
    r.converged = rc == MBS_OK && (r.residual <= opt->tol || at_floor);
    if (result) *result = r;
    return rc;
}
