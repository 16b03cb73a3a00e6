/* none.c — zero torque: a passive robot. */
#include "control_internal.h"

static int init(mbs_controller *c, mbs_error *err)
{
    (void)c;
    (void)err;
    return MBS_OK;
}

static void compute(mbs_controller *c, double t, const double *q, const double *v, double *tau)
{
    (void)t;
    (void)q;
    (void)v;
    memset(tau, 0, (size_t)mbs_model_nv(c->m) * sizeof(double));
}

static void fini(mbs_controller *c) { (void)c; }

const mbs_controller_type mbsi_controller_none = {
    {"none", "zero torque: a passive robot", &(const mbs_option_table){"none", NULL, 0, NULL, 0, 0}},
    init, compute, fini, NULL, NULL, NULL,
};
