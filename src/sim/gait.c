/* gait.c — the reference motions of the Solo scenarios, as foot positions in the base frame
 * (the base is taken level and at its reference pose, so a foot fixed on the ground moves in
 * the base frame opposite to the base's intended motion), turned into joint angles by the leg
 * IK. Every profile is continuous in position at phase boundaries, so that the PD never sees a
 * step in its reference.
 *
 *   squat: the base sinks and rises as h(t) = −A (1 − cos(2π t / T)): a sinusoid of amplitude A
 *          about z0 − A that starts at rest from the standing posture; the feet stay put.
 *   jump:  each cycle crouches (h: 0 → −crouch, smooth), pushes (h: −crouch → +push_height,
 *          linear, so the base leaves at full speed, with the push gains), retracts the legs
 *          in the air (h: +push_height → 0, smooth, flight gains) and lands and stands (h = 0).
 *          A leg whose foot is off the ground gets the flight gains whatever the phase.
 *   trot:  diagonal pairs alternate every half cycle; a stance foot slides backward under the
 *          base by v·T/2 at the base's speed v (so the base travels forward at v when the feet
 *          grip), a swing foot returns forward lifted by step_height, leaving and landing at
 *          rest in the world. */
#include "../model/model_internal.h"
#include "mbs/dynamics.h"
#include "mbs/liegroup.h"
#include "mbs/contact.h"
#include "mbs/step.h"
#include "mbs/sim.h"
#include "sim_internal.h"

int mbs_gait_init(mbs_gait *g, const mbs_scenario *sc, mbs_error *err)
{
    memset(g, 0, sizeof *g);
    g->cfg = &sc->ctrl;
    g->nlegs = sc->ncontacts;
    for (int i = 0; i < g->nlegs; i++) {
        mbs_leg *l = &g->leg[i];
        if (mbs_leg_init(l, sc->model, sc->contacts[i].frame, sc->q0, err)) return err ? err->code : MBS_ERR_MODEL;
        double a[3] = {sc->q0[l->idx_q[0]], sc->q0[l->idx_q[1]], sc->q0[l->idx_q[2]]};
        mbs_leg_fk(l, a, g->nom[i]);
        /* diagonals: front-left with hind-right (x·y > 0), front-right with hind-left */
        g->pair[i] = g->nom[i][0] * g->nom[i][1] > 0 ? 0 : 1;
    }
    return MBS_OK;
}

/* Base height offset of the jump at cycle time s, and the phase's gains. */
static double jump_height(const mbs_controller_config *c, double s, double *kp, double *kd, int *air)
{
    *kp = c->kp;
    *kd = c->kd;
    *air = 0;
    if (s < c->crouch_time) return -c->crouch * mbs_sim_smooth(s / c->crouch_time);
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
        return c->push_height * (1 - mbs_sim_smooth(s / c->retract_time));
    }
    return 0;
}

void mbs_gait_reference(const mbs_gait *g, double t, const int *touching, double *q, int *stance, double *kp,
                        double *kd)
{
    const mbs_controller_config *c = g->cfg;
    double tm = t - c->settle;   /* time since the motion started */
    double h = 0;                /* base height offset, squat and jump */
    double kp_phase = c->kp, kd_phase = c->kd;
    int air = 0;
    if (tm > 0 && c->type == MBS_CTRL_SQUAT) h = -c->amplitude * (1 - cos(2 * MBS_SIM_PI * tm / c->period));
    if (tm > 0 && c->type == MBS_CTRL_JUMP) h = jump_height(c, fmod(tm, c->period), &kp_phase, &kd_phase, &air);
    /* trot: the stride is the distance the base is to travel in half a cycle; the speed ramps
     * up so that the first steps are short */
    double v = 0;
    if (tm > 0 && c->type == MBS_CTRL_TROT) v = c->velocity * (c->ramp > 0 ? fmin(1, tm / c->ramp) : 1);
    for (int i = 0; i < g->nlegs; i++) {
        const mbs_leg *l = &g->leg[i];
        double p[3] = {g->nom[i][0], g->nom[i][1], g->nom[i][2] - h}, a[3];
        stance[i] = !air;
        if (c->type == MBS_CTRL_TROT && tm > 0) {
            double half = c->period / 2, stride = v * half;
            double cyc = tm / c->period + (g->pair[i] ? 0.5 : 0), phase = fmod(cyc, 1.0);
            /* a swing ends `sink` below the ground, so that the foot lands before its stance
             * begins even when the base rides a little high or rolls to that side, and the
             * stance target comes back up to the ground early in the stance */
            double sink = 0.2 * c->step_height;
            if (phase < 0.5) {
                /* stance: from +stride/2 to −stride/2 at the base's speed */
                double s = phase / 0.5;
                p[0] += stride * (0.5 - s);
                if (cyc >= 1) p[2] -= sink * (1 - mbs_sim_smooth(s / 0.3));   /* not the first stance: no swing before it */
            } else {
                /* swing: back to the front, lifted. The cubic (Hermite) in x leaves and lands
                 * with the stance's velocity relative to the base, −v: zero in the world, so the
                 * foot neither scuffs at lift-off nor hits the ground sliding */
                double s = (phase - 0.5) / 0.5;
                p[0] += stride * (((-4 * s + 6) * s - 1) * s - 0.5);
                p[2] += c->step_height * 0.5 * (1 - cos(2 * MBS_SIM_PI * s)) - sink * mbs_sim_smooth(s);
                stance[i] = 0;
            }
        }
        mbs_leg_ik(l, p, a);
        for (int k = 0; k < 3; k++) q[l->idx_q[k]] = a[k];
        if (kp) kp[i] = kp_phase;
        if (kd) kd[i] = kd_phase;
        /* a jumping leg off the ground swings freely: its inertia is tiny, and only the flight
         * gains keep the sampled PD stable (a foot may leave early in the push, or land late,
         * or bounce), and it carries nothing */
        if (c->type == MBS_CTRL_JUMP && touching && !touching[i]) {
            if (kp) kp[i] = c->kp_flight;
            if (kd) kd[i] = c->kd_flight;
            stance[i] = 0;
        }
    }
}
