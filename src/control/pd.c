/* pd.c — joint PD with feed-forward holding the initial posture: the simplest controller, and
 * the feedback law of the gaits on its own. */
#include <stdlib.h>

#include "control_internal.h"

static int init(mbs_controller *c, mbs_error *err)
{
    mbs_pd_law *l = calloc(1, sizeof *l);
    if (!l) return mbsi_fail(err, MBS_ERR_NOMEM, "out of memory");
    c->impl = l;
    int rc = mbsi_pd_law_init(l, c, c->opts, NULL, err);
    if (rc != MBS_OK) { free(l); c->impl = NULL; }
    return rc;
}

static void compute(mbs_controller *c, double t, const double *q, const double *v, double *tau)
{
    (void)t;
    mbs_pd_law *l = c->impl;
    mbsi_pd_law_begin(l, q);
    mbsi_pd_law_torque(l, q, v, NULL, tau);
    mbsi_pd_law_feedforward(l, q, v, NULL, tau);
    mbsi_pd_law_finish(l, q, v, tau);
}

static void fini(mbs_controller *c)
{
    mbs_pd_law *l = c->impl;
    if (!l) return;
    mbsi_pd_law_fini(l);
    free(l);
    c->impl = NULL;
}

/* Checkpoints: the law's last period. */
static void state(mbs_controller *c, mbsi_state *s) { mbsi_pd_law_state(c->impl, s); }

const mbs_controller_type mbsi_controller_pd = {
    {"pd", "joint PD with feed-forward holding the initial posture", &mbsi_pd_option_table},
    init, compute, fini, NULL, state, NULL,
};
