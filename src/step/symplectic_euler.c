/* symplectic_euler.c — semi-implicit Euler: the velocity first, then the position with the new
 * velocity. Cheap and without secular energy drift on smooth conservative problems. */
#include "step_internal.h"

static int init(mbs_stepper *st, mbs_error *err) { return mbsi_step_buffers_init(st, 2, (size_t)st->sys->nv, err); }

static int step(mbs_stepper *st, double dt, mbs_step_stats *stats)
{
    (void)stats;
    mbs_system *s = st->sys;
    double *ddq = mbsi_step_buffer(st, 0), *dq = mbsi_step_buffer(st, 1);
    mbs_system_dynamics(s, s->q, s->v, 1, ddq);
    for (int k = 0; k < s->nv; k++) {
        s->v[k] += dt * ddq[k];
        dq[k] = dt * s->v[k];
    }
    mbs_integrate(s->model, s->q, dq, s->q);
    return MBS_OK;
}

/* the chain rule through the step above (derivatives.c) */
static int derivatives(mbs_stepper *st, double dt, double *A, double *B) { return mbsi_derivatives_euler(st, dt, 1, A, B); }

const mbs_stepper_type mbsi_stepper_symplectic_euler = {
    {"symplectic_euler", "semi-implicit Euler: velocity, then position with the new velocity", &(const mbs_option_table){"symplectic_euler", NULL, 0, NULL, 0, 0}},
    init, step, mbsi_step_buffers_fini, 0, 0, NULL, derivatives,
};
