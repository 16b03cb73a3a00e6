/* trot.c — the trot: diagonal pairs alternate every half cycle; a stance foot slides backward
 * under the base by v·T/2 at the base's speed v (so the base travels forward at v when the feet
 * grip), a swing foot returns forward lifted by step_height, leaving and landing at rest in
 * the world. */
#include <math.h>

#include "control_internal.h"

/* The schedule first: its option table (below) is also the trot's own, offsets and all. */
typedef struct trot_options {
    mbs_trot_schedule s;
    mbs_pd_options pd;
} trot_options;
_Static_assert(offsetof(trot_options, s) == 0, "the schedule's options must start the trot's");

static const mbs_option_spec schedule_spec[] = {
    {"settle", MBS_OPT_REAL, "s", 0, 1e6, 0, "0", NULL, offsetof(mbs_trot_schedule, settle),
     "time standing before the trot"},
    {"period", MBS_OPT_REAL, "s", 0, 100, MBS_OPT_OPEN_LO, "0.3", NULL, offsetof(mbs_trot_schedule, period),
     "gait cycle: each diagonal pair swings for half of it"},
    {"velocity", MBS_OPT_REAL, "m/s", -2, 2, 0, "0.2", NULL, offsetof(mbs_trot_schedule, velocity),
     "forward base velocity"},
    {"step_height", MBS_OPT_REAL, "m", 0, 0.2, 0, "0.05", NULL, offsetof(mbs_trot_schedule, step_height),
     "swing foot lift"},
    {"ramp", MBS_OPT_REAL, "s", 0, 1e3, 0, "0.5", NULL, offsetof(mbs_trot_schedule, ramp),
     "time to reach the full velocity, so that the first steps are short"},
};

const mbs_option_table mbsi_trot_schedule_option_table = {"trot", schedule_spec, (int)(sizeof schedule_spec / sizeof *schedule_spec),
                                                          NULL, 0, sizeof(mbs_trot_schedule)};

double mbsi_trot_foot(const mbs_trot_schedule *c, const double nom[3], int pair, double t, double sink, double p[3], int *stance)
{
    double tm = t - c->settle;   /* time since the motion started */
    /* the stride is the distance the base is to travel in half a cycle; the speed ramps up so
     * that the first steps are short */
    double v = 0;
    if (tm > 0) v = c->velocity * (c->ramp > 0 ? fmin(1, tm / c->ramp) : 1);
    p[0] = nom[0];
    p[1] = nom[1];
    p[2] = nom[2];
    *stance = 1;
    if (tm <= 0) return -1;
    double half = c->period / 2, stride = v * half;
    double cyc = tm / c->period + (pair ? 0.5 : 0), phase = fmod(cyc, 1.0);
    if (phase < 0.5) {
        /* stance: from +stride/2 to −stride/2 at the base's speed */
        double s = phase / 0.5;
        p[0] += stride * (0.5 - s);
        if (cyc >= 1) p[2] -= sink * (1 - mbsi_smooth_step(s / 0.3));   /* not the first stance: no swing before it */
    } else {
        /* swing: back to the front, lifted. The cubic (Hermite) in x leaves and lands
         * with the stance's velocity relative to the base, −v: zero in the world, so the
         * foot neither scuffs at lift-off nor hits the ground sliding */
        double s = (phase - 0.5) / 0.5;
        p[0] += stride * (((-4 * s + 6) * s - 1) * s - 0.5);
        p[2] += c->step_height * 0.5 * (1 - cos(2 * MBS_PI * s)) - sink * mbsi_smooth_step(s);
        *stance = 0;
        return s;
    }
    return -1;
}

static void feet(const mbs_gait *g, double t, const int *touching, double p[][3], int *stance, double *kp, double *kd)
{
    (void)touching;
    const trot_options *c = g->opts;
    for (int i = 0; i < g->nlegs; i++) {
        /* a swing ends 0.2 step_height below the ground, so that the foot lands before its stance
         * begins even when the base rides a little high or rolls to that side, and the stance
         * target comes back up to the ground early in the stance */
        mbsi_trot_foot(&c->s, g->nom[i], g->pair[i], t, 0.2 * c->s.step_height, p[i], &stance[i]);
        if (kp) kp[i] = c->pd.kp;
        if (kd) kd[i] = c->pd.kd;
    }
}

static int init(mbs_controller *c, mbs_error *err)
{
    if (c->sys->nfeet != 4)
        return mbsi_fail(err, MBS_ERR_ARG, "controller 'trot' needs four feet as contact points, got %d", c->sys->nfeet);
    return mbsi_gait_init(c, &((const trot_options *)c->opts)->pd, feet, err);
}

const mbs_controller_type mbsi_controller_trot = {
    {"trot", "diagonal leg pairs, feet trajectories relative to a base moving forward (leg IK, joint PD with feed-forward)",
     &(const mbs_option_table){"trot", schedule_spec, (int)(sizeof schedule_spec / sizeof *schedule_spec),
                               &mbsi_pd_option_table, offsetof(trot_options, pd), sizeof(trot_options)}},
    init, mbsi_gait_compute, mbsi_gait_fini, NULL, mbsi_gait_state, NULL,
};
