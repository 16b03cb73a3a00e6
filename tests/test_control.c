/* test_control.c — controllers through their interface alone (mbs/control.h) and in their
 * scenarios: a PD holding a fixed-base arm, task-space inverse dynamics keeping Romeo standing
 * (its contact forces carry the weight, its torques hold the posture), the paper's Romeo walk
 * at the 40 ms controller period with expo at 5 ms and with RK4 at 1 ms (the same footsteps),
 * and Solo squatting under it. */
#include <math.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "check.h"
#include "mbs.h"

#define SCEN(name) MBS_SOURCE_DIR "/scenarios/" name

/* A 3-link arm, fixed base, under gravity: joint PD with gravity feed-forward, 10 ms period,
 * brings it from 0.05 rad off its posture back to it. */
static void test_pd_holds_an_arm(void)
{
    mbs_error err;
    mbs_model *m = mbs_model_chain(3, NULL, &err);
    mbs_system *sys = m ? mbs_system_new(m, 0, &err) : NULL;
    CHECK(sys != NULL, "arm: %s", err.msg);
    if (!sys) { mbs_model_free(m); return; }
    const double q0[3] = {0.3, -0.2, 0.1};
    double q[3], tau[3];
    for (int k = 0; k < 3; k++) q[k] = q0[k] + 0.05;
    const mbs_option opts[] = {{"kp", "50"}, {"kd", "5"}, {"feedforward", "gravity"}};
    mbs_controller *c = mbs_controller_new("pd", sys, q0, 0.01, opts, 3, &err);
    mbs_stepper *st = mbs_stepper_new("rk4", sys, NULL, 0, &err);
    CHECK(c && st, "pd arm: %s", err.msg);
    if (c && st) {
        mbs_system_set_state(sys, q, NULL, 0);
        for (int period = 0; period < 300; period++) {
            mbs_controller_compute(c, mbs_system_time(sys), mbs_system_q(sys), mbs_system_v(sys), tau);
            mbs_system_set_tau(sys, tau);
            for (int k = 0; k < 10; k++) mbs_stepper_step(st, 1e-3, NULL);
        }
        double worst = 0;
        for (int k = 0; k < 3; k++) worst = fmax(worst, fabs(mbs_system_q(sys)[k] - q0[k]));
        CHECK(worst < 1e-3, "pd arm: %g rad from its posture after 3 s", worst);
    }
    mbs_stepper_free(st);
    mbs_controller_free(c);
    mbs_system_free(sys);
    mbs_model_free(m);
}

/* Loads and runs a scenario with overrides; the scenario and the sim (NULL when it could not be
 * made; both to be freed by the caller) and the summary. */
static mbs_sim *run_scenario(const char *path, const char **sets, int nsets, mbs_scenario **sc, mbs_sim_summary *sum)
{
    mbs_error err;
    *sc = mbs_scenario_load(path, sets, nsets, &err);
    CHECK(*sc != NULL, "load: %s", err.msg);
    if (!*sc) return NULL;
    mbs_sim *sim = mbs_sim_new(*sc, &err);
    CHECK(sim && mbs_sim_run(sim, NULL, sum, &err) == MBS_OK, "run: %s", err.msg);
    return sim;
}

/* Romeo standing 10 s under tsid at 40 ms: the contact forces carry the weight, the joints stay
 * at their posture, the base upright. */
static void test_tsid_stands(void)
{
    const char *sets[] = {"controller.motion=stand", "run.duration=10"};
    mbs_scenario *sc;
    mbs_sim_summary sum;
    mbs_sim *sim = run_scenario(SCEN("romeo_walk.ini"), sets, 2, &sc, &sum);
    if (sim) {
        mbs_system *sys = mbs_sim_system(sim);
        const mbs_model *m = mbs_scenario_model(sc);
        double fz = 0, weight = mbs_model_mass(m) * 9.81;
        for (int i = 0; i < mbs_system_ncontacts(sys); i++) {
            mbs_contact_info ci;
            mbs_system_contact(sys, i, &ci);
            fz += ci.force[2];
        }
        double worst = 0;
        const double *q = mbs_system_q(sys), *q0 = mbs_scenario_q0(sc);
        for (int k = 7; k < mbs_model_nq(m); k++) worst = fmax(worst, fabs(q[k] - q0[k]));
        CHECK(!sum.diverged, "romeo standing: %s", sum.reason);
        CHECK(fabs(fz - weight) < 0.02 * weight, "romeo standing: the contacts carry %g N of %g N", fz, weight);
        CHECK(worst < 0.02, "romeo standing: a joint %g rad from its posture", worst);
        CHECK(sum.max_tilt_deg < 0.5, "romeo standing: tilt %g deg", sum.max_tilt_deg);
    }
    mbs_sim_free(sim);
    mbs_scenario_free(sc);
}

/* Touch-downs of each contact point, sampled once per controller period as the CSV is. */
typedef struct touchdowns { mbs_system *sys; int prev[8], count[8]; } touchdowns;

static void count_touchdowns(void *user, double t, const double *q, const double *v, double *tau)
{
    (void)t; (void)q; (void)v; (void)tau;
    touchdowns *c = user;
    for (int i = 0; i < 8 && i < mbs_system_ncontacts(c->sys); i++) {
        mbs_contact_info ci;
        mbs_system_contact(c->sys, i, &ci);
        if (ci.active && !c->prev[i]) c->count[i]++;
        c->prev[i] = ci.active;
    }
}

/* Runs romeo_walk.ini with the given overrides; the final sole positions into feet (x y of l, r)
 * and each sole corner's touch-downs after the start into td (may be NULL). */
static int walk(const char **sets, int nsets, double feet[4], mbs_sim_summary *sum, int td[8])
{
    mbs_error err;
    mbs_scenario *sc = mbs_scenario_load(SCEN("romeo_walk.ini"), sets, nsets, &err);
    CHECK(sc != NULL, "load: %s", err.msg);
    if (!sc) return 1;
    mbs_sim *sim = mbs_sim_new(sc, &err);
    touchdowns c = {sim ? mbs_sim_system(sim) : NULL, {1, 1, 1, 1, 1, 1, 1, 1}, {0}};
    if (sim) mbs_sim_set_control(sim, count_touchdowns, &c);
    int rc = sim ? mbs_sim_run(sim, NULL, sum, &err) : 1;
    if (td) memcpy(td, c.count, sizeof c.count);
    CHECK(rc == MBS_OK, "run: %s", err.msg);
    if (rc == MBS_OK) {
        const mbs_model *m = mbs_scenario_model(sc);
        mbs_data *d = mbs_data_new(m);
        const char *names[2] = {"l_sole", "r_sole"};
        for (int f = 0; f < 2; f++) {
            double R[9], p[3];
            mbs_compute_frame_placement(m, d, mbs_system_q(mbs_sim_system(sim)), mbs_frame_id(m, names[f]), R, p);
            feet[2 * f] = p[0];
            feet[2 * f + 1] = p[1];
        }
        mbs_data_free(d);
    }
    mbs_sim_free(sim);
    mbs_scenario_free(sc);
    return rc;
}

/* The paper's Romeo walk as shipped (tsid at 40 ms, expo at 5 ms): two steps of 0.2 m, the
 * feet end side by side 0.2 m ahead, the base upright, every sole corner lands once without
 * flicker; RK4 at 1 ms puts the feet at the same places within 1 cm. */
static void test_romeo_walks(void)
{
    double fe[4], fr[4];
    int td[8];
    mbs_sim_summary se, sr;
    const char *rk4[] = {"stepper.name=rk4", "stepper.dt=1e-3"};
    if (walk(NULL, 0, fe, &se, td) || walk(rk4, 2, fr, &sr, NULL)) return;
    for (int i = 0; i < 8; i++) CHECK(td[i] == 1, "romeo_walk: sole corner %d touched down %d times (once: no flicker)", i, td[i]);
    for (int r = 0; r < 2; r++) {
        const mbs_sim_summary *s = r ? &sr : &se;
        const double *f = r ? fr : fe;
        const char *who = r ? "rk4 1 ms" : "expo 5 ms";
        CHECK(!s->diverged, "romeo_walk %s: %s", who, s->reason);
        CHECK(s->controller_dt == 0.04, "romeo_walk %s: controller period %g", who, s->controller_dt);
        CHECK(s->distance_m >= 0.15, "romeo_walk %s: the base moved %g m", who, s->distance_m);
        CHECK(f[0] > 0.15 && f[2] > 0.15, "romeo_walk %s: the feet moved to x = %g, %g m", who, f[0], f[2]);
        CHECK(fabs(f[0] - f[2]) < 0.03 && fabs(f[1] - f[3] - 0.19) < 0.03, "romeo_walk %s: the feet end at (%g %g), (%g %g)", who,
              f[0], f[1], f[2], f[3]);
        CHECK(s->max_tilt_deg < 7, "romeo_walk %s: tilt %g deg", who, s->max_tilt_deg);
    }
    for (int k = 0; k < 4; k++)
        CHECK(fabs(fe[k] - fr[k]) < 0.01, "romeo_walk: expo and rk4 put foot coordinate %d %g m apart", k, fabs(fe[k] - fr[k]));
}

/* Solo squatting under tsid at 40 ms: the base goes down and comes back up, upright. */
static void test_tsid_squats(void)
{
    mbs_scenario *sc;
    mbs_sim_summary sum;
    mbs_sim *sim = run_scenario(SCEN("solo_squat_tsid.ini"), NULL, 0, &sc, &sum);
    if (sim) {
        CHECK(!sum.diverged, "solo_squat_tsid: %s", sum.reason);
        CHECK(sum.base_z_min < 0.2 && sum.base_z_max > 0.23, "solo_squat_tsid: base z in [%g, %g]", sum.base_z_min, sum.base_z_max);
        CHECK(sum.max_tilt_deg < 0.5, "solo_squat_tsid: tilt %g deg", sum.max_tilt_deg);
    }
    mbs_sim_free(sim);
    mbs_scenario_free(sc);
}

int main(void)
{
    RUN(test_pd_holds_an_arm);
    RUN(test_tsid_stands);
    RUN(test_romeo_walks);
    RUN(test_tsid_squats);
    return check_summary("test_control");
}
