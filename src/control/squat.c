/* squat.c — the squat: the base sinks and rises as h(t) = −A (1 − cos(2π t / T)), a sinusoid
 * of amplitude A about z0 − A that starts at rest from the standing posture; the feet stay put. */
#include "control_internal.h"

typedef struct squat_options {
    mbs_pd_options pd;
    double settle, period, amplitude;
} squat_options;

static const mbs_option_spec spec[] = {
    {"settle", MBS_OPT_REAL, "s", 0, 1e6, 0, "0", NULL, offsetof(squat_options, settle),
     "time holding the initial posture before the motion"},
    {"period", MBS_OPT_REAL, "s", 0, 100, MBS_OPT_OPEN_LO, "2", NULL, offsetof(squat_options, period),
     "period of the oscillation"},
    {"amplitude", MBS_OPT_REAL, "m", 0, 0.1, 0, "0.03", NULL, offsetof(squat_options, amplitude),
     "amplitude of the base height (the base goes down by twice this)"},
};

static void feet(const mbs_gait *g, double t, const int *touching, double p[][3], int *stance, double *kp, double *kd)
{
    (void)touching;
    const squat_options *o = g->opts;
    double tm = t - o->settle, h = 0;
    if (tm > 0) h = -o->amplitude * (1 - cos(2 * MBS_PI * tm / o->period));
    for (int i = 0; i < g->nlegs; i++) {
        p[i][0] = g->nom[i][0];
        p[i][1] = g->nom[i][1];
        p[i][2] = g->nom[i][2] - h;
        stance[i] = 1;
        if (kp) kp[i] = o->pd.kp;
        if (kd) kd[i] = o->pd.kd;
    }
}

static int init(mbs_controller *c, mbs_error *err)
{
    return mbsi_gait_init(c, &((const squat_options *)c->opts)->pd, feet, err);
}

const mbs_controller_type mbsi_controller_squat = {
    {"squat", "base height moving sinusoidally, feet fixed (leg IK), joint PD with feed-forward",
     &(const mbs_option_table){"squat", spec, (int)(sizeof spec / sizeof *spec), &mbsi_pd_option_table,
                               offsetof(squat_options, pd), sizeof(squat_options)}},
    init, mbsi_gait_compute, mbsi_gait_fini, NULL, mbsi_gait_state, NULL,
};
