/* rk4.c — classic Runge–Kutta 4 on the Lie group (Munthe-Kaas form): stages live in the
 * tangent space at q, q_i = integrate(q, θ_i), and the configuration rate of a stage is
 * θ̇_i = dexp⁻¹(θ_i) v_i — the Jacobian of difference(q, ·) at q_i — so the scheme keeps its
 * fourth order on SE(3). Contact anchors are updated once, at the start of the step. */
#include <cblas.h>

#include "step_internal.h"

enum { QS, TH, KQ, KV, VS, ACC, JL, NBUF };

static int init(mbs_stepper *st, mbs_error *err)
{
    size_t n = (size_t)st->sys->nv;
    if (mbsi_step_buffers_init(st, NBUF, n * n + (size_t)st->sys->nq, err)) return err ? err->code : MBS_ERR_NOMEM;
    return MBS_OK;
}

/* Stage i: rates (kq, kv) at the tangent point th with velocity vs. */
static void stage(mbs_stepper *st, const double *th, const double *vs, int first, double *kq, double *kv)
{
    mbs_system *s = st->sys;
    int nv = s->nv;
    double *qs = mbsi_step_buffer(st, QS), *Jl = mbsi_step_buffer(st, JL);
    mbs_integrate(s->model, s->q, th, qs);
    mbs_system_dynamics(s, qs, vs, first, kv);
    if (first) { for (int k = 0; k < nv; k++) kq[k] = vs[k]; return; }
    mbs_ddifference(s->model, s->q, qs, MBS_ARG1, Jl);
    for (int r = 0; r < nv; r++) {
        double x = 0;
        for (int c = 0; c < nv; c++) x += Jl[r + (size_t)nv * c] * vs[c];
        kq[r] = x;
    }
}

static int step(mbs_stepper *st, double dt, mbs_step_stats *stats)
{
    (void)stats;
    mbs_system *s = st->sys;
    int nv = s->nv;
    double *th = mbsi_step_buffer(st, TH), *kq = mbsi_step_buffer(st, KQ), *kv = mbsi_step_buffer(st, KV);
    double *vs = mbsi_step_buffer(st, VS), *acc = mbsi_step_buffer(st, ACC);
    /* acc accumulates Σ w_i kq_i in acc[0..nv) and Σ w_i kv_i in acc[nv..2nv) */
    static const double w[4] = {1, 2, 2, 1}, c[4] = {0, 0.5, 0.5, 1};
    memset(acc, 0, 2 * (size_t)nv * sizeof(double));
    memset(th, 0, (size_t)nv * sizeof(double));
    memcpy(vs, s->v, (size_t)nv * sizeof(double));
    for (int i = 0; i < 4; i++) {
        stage(st, th, vs, i == 0, kq, kv);
        for (int k = 0; k < nv; k++) { acc[k] += w[i] * kq[k]; acc[nv + k] += w[i] * kv[k]; }
        if (i == 3) break;
        for (int k = 0; k < nv; k++) {
            th[k] = c[i + 1] * dt * kq[k];
            vs[k] = s->v[k] + c[i + 1] * dt * kv[k];
        }
    }
    for (int k = 0; k < nv; k++) {
        th[k] = dt / 6 * acc[k];
        s->v[k] += dt / 6 * acc[nv + k];
    }
    mbs_integrate(s->model, s->q, th, s->q);
    return MBS_OK;
}

/* The chain rule through the four stages, in the inputs z = (δq, δv, δτ) (nv x 3nv matrices):
 *   δqs_i = D0(q, θ_i) δq + D1(q, θ_i) δθ_i                (the stage's configuration, tangent at qs_i)
 *   δkv_i = ∂q̈/∂q δqs_i + ∂q̈/∂v δvs_i + M⁻¹ δτ + M⁻¹ Σ Jᵀ G (K δp0 + B δṗ0)   (stages 2–4: the anchors the
 *           first stage's update placed or moved, mbsi_contact_anchor_derivatives)
 *   δkq_i = ∂(dexp⁻¹(θ) w)/∂θ|_(θ_i, vs_i) δθ_i + dexp⁻¹(θ_i) δvs_i
 *   δθ_{i+1} = c_{i+1} δt δkq_i,   δvs_{i+1} = δv + c_{i+1} δt δkv_i
 *   δq⁺ = D0(q, θ) δq + D1(q, θ) δθ,  δθ = δt/6 Σ w_i δkq_i,   δv⁺ = δv + δt/6 Σ w_i δkv_i.
 * dexp⁻¹(θ) is block-diagonal per joint and the identity on one-coordinate joints; the derivative
 * of its product with w in θ, on the joints of several coordinates (a free-flyer's six), is taken
 * by central differences of the closed form (h = 1e-5; a smooth function of six numbers, error
 * ~1e-10); everything else is analytical. */
static int derivatives(mbs_stepper *st, double dt, double *A, double *B)
{
    mbs_system *s = st->sys;
    const mbs_model *m = s->model;
    mbsi_derivatives_ws *w = &st->dw;
    const int nv = s->nv, n2 = 2 * nv;
    const size_t nn = (size_t)nv * (size_t)nv, n3 = 3 * nn;
    static const double wt[4] = {1, 2, 2, 1}, c[4] = {0, 0.5, 0.5, 1};
    double *th = mbsi_step_buffer(st, TH), *kq = mbsi_step_buffer(st, KQ), *kv = mbsi_step_buffer(st, KV);
    double *vs = mbsi_step_buffer(st, VS), *acc = mbsi_step_buffer(st, ACC), *Jl = mbsi_step_buffer(st, JL);
    double *Th = w->X[0], *dVS = w->X[1], *dQS = w->X[2], *DKV = w->X[3], *KQa = w->X[4], *KVa = w->X[5], *T = w->X[6];
    memset(acc, 0, 2 * (size_t)nv * sizeof(double));
    memset(th, 0, (size_t)nv * sizeof(double));
    memcpy(vs, s->v, (size_t)nv * sizeof(double));
    memset(Th, 0, n3 * sizeof(double));
    memset(dVS, 0, n3 * sizeof(double));
    memset(KQa, 0, n3 * sizeof(double));
    memset(KVa, 0, n3 * sizeof(double));
    for (int k = 0; k < nv; k++) dVS[k + (size_t)nv * (nv + k)] = 1;
    for (int i = 0; i < 4; i++) {
        /* the stage's rates, and ∂q̈, M⁻¹ there */
        double *qs = mbsi_step_buffer(st, QS);
        mbs_integrate(m, s->q, th, qs);
        int rc = mbsi_step_acceleration_derivatives(st, qs, vs, i == 0, kv);
        if (rc != MBS_OK) return rc;
        /* δqs = D0 [1 0 0] + D1 Θ */
        mbs_dintegrate(m, s->q, th, MBS_ARG0, w->D0);
        mbs_dintegrate(m, s->q, th, MBS_ARG1, w->D1);
        cblas_dgemm(CblasColMajor, CblasNoTrans, CblasNoTrans, nv, 3 * nv, nv, 1.0, w->D1, nv, Th, nv, 0.0, dQS, nv);
        for (size_t k = 0; k < nn; k++) dQS[k] += w->D0[k];
        /* δkv = Fq δqs + Fv δvs + M⁻¹ [0 0 1] (+ the anchors' share) */
        cblas_dgemm(CblasColMajor, CblasNoTrans, CblasNoTrans, nv, 3 * nv, nv, 1.0, w->Fq, nv, dQS, nv, 0.0, DKV, nv);
        cblas_dgemm(CblasColMajor, CblasNoTrans, CblasNoTrans, nv, 3 * nv, nv, 1.0, w->Fv, nv, dVS, nv, 1.0, DKV, nv);
        for (size_t k = 0; k < nn; k++) DKV[2 * nn + k] += w->Mi[k];
        if (i > 0) {
            memset(T, 0, 2 * nn * sizeof(double));
            mbsi_contact_anchor_chain(s, qs, w->A0, w->moved, 1.0, T, nv, w->iwork);
            cblas_dgemm(CblasColMajor, CblasNoTrans, CblasNoTrans, nv, 2 * nv, nv, 1.0, w->Mi, nv, T, nv, 1.0, DKV, nv);
        }
        for (size_t k = 0; k < n3; k++) KVa[k] += wt[i] * DKV[k];
        /* kq and δkq (into dQS, no longer needed) */
        if (i == 0) {
            memcpy(kq, vs, (size_t)nv * sizeof(double));
            memcpy(dQS, dVS, n3 * sizeof(double));
        } else {
            mbs_ddifference(m, s->q, qs, MBS_ARG1, Jl);
            for (int r = 0; r < nv; r++) {
                double x = 0;
                for (int k = 0; k < nv; k++) x += Jl[r + (size_t)nv * k] * vs[k];
                kq[r] = x;
            }
            cblas_dgemm(CblasColMajor, CblasNoTrans, CblasNoTrans, nv, 3 * nv, nv, 1.0, Jl, nv, dVS, nv, 0.0, dQS, nv);
            /* H = ∂(dexp⁻¹(θ) vs)/∂θ, block-diagonal, on the joints of several coordinates (into D0) */
            memset(w->D0, 0, nn * sizeof(double));
            for (int b = 0; b < m->nbodies; b++) {
                int o = m->bodies[b].idx_v, nb = m->bodies[b].nv;
                if (nb < 2) continue;
                for (int k = o; k < o + nb; k++) {
                    const double h = 1e-5;
                    for (int sgn = -1; sgn <= 1; sgn += 2) {
                        double keep = th[k];
                        th[k] = keep + sgn * h;
                        mbs_integrate(m, s->q, th, w->qp);
                        mbs_ddifference(m, s->q, w->qp, MBS_ARG1, w->D1);
                        th[k] = keep;
                        for (int r = o; r < o + nb; r++) {
                            double x = 0;
                            for (int j = o; j < o + nb; j++) x += w->D1[r + (size_t)nv * j] * vs[j];
                            w->D0[r + (size_t)nv * k] += sgn * x / (2 * h);
                        }
                    }
                }
            }
            cblas_dgemm(CblasColMajor, CblasNoTrans, CblasNoTrans, nv, 3 * nv, nv, 1.0, w->D0, nv, Th, nv, 1.0, dQS, nv);
        }
        for (size_t k = 0; k < n3; k++) KQa[k] += wt[i] * dQS[k];
        for (int k = 0; k < nv; k++) { acc[k] += wt[i] * kq[k]; acc[nv + k] += wt[i] * kv[k]; }
        if (i == 3) break;
        /* the next stage's point and its derivative */
        for (int k = 0; k < nv; k++) {
            th[k] = c[i + 1] * dt * kq[k];
            vs[k] = s->v[k] + c[i + 1] * dt * kv[k];
        }
        for (size_t k = 0; k < n3; k++) {
            Th[k] = c[i + 1] * dt * dQS[k];
            dVS[k] = c[i + 1] * dt * DKV[k];
        }
        for (int k = 0; k < nv; k++) dVS[k + (size_t)nv * (nv + k)] += 1;
    }
    /* v⁺ rows: [0 1 0] + δt/6 Σ w δkv; q⁺ rows through integrate(q, δt/6 Σ w kq) */
    for (int col = 0; col < 3 * nv; col++)
        for (int r = 0; r < nv; r++) {
            double x = dt / 6 * KVa[r + (size_t)nv * col] + (col == nv + r);
            if (col < n2) A[nv + r + (size_t)n2 * col] = x;
            else B[nv + r + (size_t)n2 * (col - n2)] = x;
        }
    for (int k = 0; k < nv; k++) th[k] = dt / 6 * acc[k];
    for (size_t k = 0; k < n3; k++) KQa[k] *= dt / 6;
    mbsi_derivatives_configuration_rows(st, s->q, th, KQa, s->nv, A, B);
    return MBS_OK;
}

const mbs_stepper_type mbsi_stepper_rk4 = {
    {"rk4", "classic Runge-Kutta 4 on the Lie group: accuracy per step on smooth motion", &(const mbs_option_table){"rk4", NULL, 0, NULL, 0, 0}},
    init, step, mbsi_step_buffers_fini, 0, 0, NULL, derivatives,
};
