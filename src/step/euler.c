/* euler.c — explicit Euler as Hammoud et al. 2022, eq. 34: v⁺ = v + δt v̇,
 * q⁺ = integrate(q, δt v + δt²/2 v̇). The baseline every stiff-contact scheme is measured against. */
#include "step_internal.h"

static int init(mbs_stepper *st, mbs_error *err) { return mbsi_step_buffers_init(st, 2, (size_t)st->sys->nv, err); }

static int step(mbs_stepper *st, double dt, mbs_step_stats *stats)
{
    (void)stats;
    mbs_system *s = st->sys;
    double *ddq = mbsi_step_buffer(st, 0), *dq = mbsi_step_buffer(st, 1);
    mbs_system_dynamics(s, s->q, s->v, 1, ddq);
    for (int k = 0; k < s->nv; k++) {
        dq[k] = dt * s->v[k] + 0.5 * dt * dt * ddq[k];
        s->v[k] += dt * ddq[k];
    }
    mbs_integrate(s->model, s->q, dq, s->q);
    return MBS_OK;
}

/* the chain rule through the step above (derivatives.c) */
static int derivatives(mbs_stepper *st, double dt, double *A, double *B) { return mbsi_derivatives_euler(st, dt, 0, A, B); }

const mbs_stepper_type mbsi_stepper_euler = {
    {"euler", "explicit Euler (eq. 34 of Hammoud et al.): the baseline; needs tiny steps with stiff contacts", &(const mbs_option_table){"euler", NULL, 0, NULL, 0, 0}},
    init, step, mbsi_step_buffers_fini, 0, 0, NULL, derivatives,
};
