/* rk4.c — classic Runge–Kutta 4 on the Lie group (Munthe-Kaas form): stages live in the
 * tangent space at q, q_i = integrate(q, θ_i), and the configuration rate of a stage is
 * θ̇_i = dexp⁻¹(θ_i) v_i — the Jacobian of difference(q, ·) at q_i — so the scheme keeps its
 * fourth order on SE(3). Contact anchors are updated once, at the start of the step. */
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

const mbs_stepper_type mbsi_stepper_rk4 = {
    {"rk4", "classic Runge-Kutta 4 on the Lie group: accuracy per step on smooth motion", &(const mbs_option_table){"rk4", NULL, 0, NULL, 0, 0}},
    init, step, mbsi_step_buffers_fini, 0, 0, NULL, NULL,
};
