/* jump.c — jumping in place, again and again: each cycle crouches (h: 0 → −crouch, smooth),
 * pushes (h: −crouch → +push_height, linear, so the base leaves at full speed, with the push
 * gains), retracts the legs in the air (h: +push_height → 0, smooth, flight gains) and lands and
 * stands (h = 0). A leg whose foot is off the ground gets the flight gains whatever the phase. */
#include <math.h>

#include "control_internal.h"

typedef struct jump_options {
    mbs_pd_options pd;
    double settle, period, crouch, push_height, crouch_time, push_time, retract_time;
    double kp_push, kd_push, kp_flight, kd_flight;   /* NAN: kp or kd */
} jump_options;

static const mbs_option_spec spec[] = {
    {"settle", MBS_OPT_REAL, "s", 0, 1e6, 0, "0", NULL, offsetof(jump_options, settle),
     "time holding the initial posture before the first jump"},
    {"period", MBS_OPT_REAL, "s", 0, 100, MBS_OPT_OPEN_LO, "1", NULL, offsetof(jump_options, period),
     "one jump cycle; must exceed crouch_time + push_time + retract_time"},
    {"crouch", MBS_OPT_REAL, "m", 0, 0.15, 0, "0.05", NULL, offsetof(jump_options, crouch), "base lowered before the push"},
    {"push_height", MBS_OPT_REAL, "m", 0, 0.15, 0, "0.06", NULL, offsetof(jump_options, push_height),
     "base raised above standing at the end of the push"},
    {"crouch_time", MBS_OPT_REAL, "s", 0, 10, MBS_OPT_OPEN_LO, "0.3", NULL, offsetof(jump_options, crouch_time), "crouch phase"},
    {"push_time", MBS_OPT_REAL, "s", 0, 10, MBS_OPT_OPEN_LO, "0.1", NULL, offsetof(jump_options, push_time), "push phase"},
    {"retract_time", MBS_OPT_REAL, "s", 0, 10, MBS_OPT_OPEN_LO, "0.2", NULL, offsetof(jump_options, retract_time),
     "retract phase, in the air"},
    {"kp_push", MBS_OPT_REAL, "N·m/rad", 0, 1e6, 0, NULL, NULL, offsetof(jump_options, kp_push), "stiffness during the push (default: kp)"},
    {"kd_push", MBS_OPT_REAL, "N·m·s/rad", 0, 1e5, 0, NULL, NULL, offsetof(jump_options, kd_push), "damping during the push (default: kd)"},
    {"kp_flight", MBS_OPT_REAL, "N·m/rad", 0, 1e6, 0, NULL, NULL, offsetof(jump_options, kp_flight),
     "stiffness from lift-off to the end of the retract phase, and of any leg off the ground (default: kp)"},
    {"kd_flight", MBS_OPT_REAL, "N·m·s/rad", 0, 1e5, 0, NULL, NULL, offsetof(jump_options, kd_flight),
     "damping likewise (default: kd)"},
};

/* Base height offset of the jump at cycle time s, and the phase's gains. */
static double jump_height(const jump_options *c, double s, double *kp, double *kd, int *air)
{
    *kp = c->pd.kp;
    *kd = c->pd.kd;
    *air = 0;
    if (s < c->crouch_time) return -c->crouch * mbsi_smooth_step(s / c->crouch_time);
    s -= c->crouch_time;
    if (s < c->push_time) {
        *kp = c->kp_push;
        *kd = c->kd_push;
        return -c->crouch + (c->crouch + c->push_height) * s / c->push_time;
    }
    s -= c->push_time;
    if (s < c->retract_time) {
        *kp = c->kp_flight;
        *kd = c->kd_flight;
        *air = 1;
        return c->push_height * (1 - mbsi_smooth_step(s / c->retract_time));
    }
    return 0;
}

static void feet(const mbs_gait *g, double t, const int *touching, double p[][3], int *stance, double *kp, double *kd)
{
    const jump_options *o = g->opts;
    double tm = t - o->settle, h = 0, kp_phase = o->pd.kp, kd_phase = o->pd.kd;
    int air = 0;
    if (tm > 0) h = jump_height(o, fmod(tm, o->period), &kp_phase, &kd_phase, &air);
    for (int i = 0; i < g->nlegs; i++) {
        p[i][0] = g->nom[i][0];
        p[i][1] = g->nom[i][1];
        p[i][2] = g->nom[i][2] - h;
        stance[i] = !air;
        if (kp) kp[i] = kp_phase;
        if (kd) kd[i] = kd_phase;
        /* a jumping leg off the ground swings freely: its inertia is tiny, and only the flight
         * gains keep the sampled PD stable (a foot may leave early in the push, or land late,
         * or bounce), and it carries nothing */
        if (touching && !touching[i]) {
            if (kp) kp[i] = o->kp_flight;
            if (kd) kd[i] = o->kd_flight;
            stance[i] = 0;
        }
    }
}

static int check(const void *opts, const char **key, mbs_error *err)
{
    const jump_options *c = opts;
    if (c->crouch_time + c->push_time + c->retract_time >= c->period) {
        *key = "period";
        return mbsi_fail(err, MBS_ERR_ARG, "out of range: the jump period %g must exceed crouch_time + push_time + "
                        "retract_time = %g", c->period, c->crouch_time + c->push_time + c->retract_time);
    }
    return MBS_OK;
}

static int init(mbs_controller *c, mbs_error *err)
{
    jump_options *o = c->opts;
    const char *key = NULL;
    int rc = check(o, &key, err);
    if (rc != MBS_OK) return rc;
    if (isnan(o->kp_push)) o->kp_push = o->pd.kp;
    if (isnan(o->kd_push)) o->kd_push = o->pd.kd;
    if (isnan(o->kp_flight)) o->kp_flight = o->pd.kp;
    if (isnan(o->kd_flight)) o->kd_flight = o->pd.kd;
    return mbsi_gait_init(c, &o->pd, feet, err);
}

const mbs_controller_type mbsi_controller_jump = {
    {"jump", "crouch, push off, retract, land: jumping in place repeatedly (leg IK, joint PD with feed-forward)",
     &(const mbs_option_table){"jump", spec, (int)(sizeof spec / sizeof *spec), &mbsi_pd_option_table,
                               offsetof(jump_options, pd), sizeof(jump_options)}},
    init, mbsi_gait_compute, mbsi_gait_fini, check, mbsi_gait_state, NULL,
};
