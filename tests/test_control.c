/* test_control.c — controllers through their interface alone (mbs/control.h) and in their
 * scenarios: a PD holding a fixed-base arm, task-space inverse dynamics keeping Romeo standing
 * (its contact forces carry the weight, its torques hold the posture), the paper's Romeo walk
 * at the 40 ms controller period with expo at 5 ms and with RK4 at 1 ms (the same footsteps),
 * and Solo squatting under it; the stable PD (feedback = stable) where the plain one diverges,
 * the PD handed to the stepper as a joint impedance (feedback = impedance),
 * the numeric limb IK on Robosimian's limbs (white-box, control_internal.h), and Robosimian's
 * jump and crawl scenarios. */
#include <math.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "check.h"
#include "mbs.h"
#include "testmodels.h"
#include "../src/control/control_internal.h" /* white-box: the limb IK and the gaits' legs */

#define SCEN(name) MBS_SOURCE_DIR "/scenarios/" name

/* A 3-link arm, fixed base, under gravity: joint PD with gravity feed-forward, 10 ms period,
 * brings it from 0.05 rad off its posture back to it. Gains per unit of apparent inertia (20 rad/s,
 * critically damped): the light links made kp = 50 N·m/rad unstable at this period, which the old
 * fmax-based check hid once the state became NaN. */
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
    const mbs_option opts[] = {MBS_OPTION("kp", 400), MBS_OPTION("kd", 40), MBS_OPTION_WORD("feedforward", "gravity"),
                               MBS_OPTION_WORD("gains", "inertia")};
    mbs_system_finalize(sys, NULL);
    mbs_controller *c = mbs_controller_new("pd", sys, q0, 0.01, opts, 4, &err);
    mbs_system_finalize(sys, NULL);
    mbs_stepper *st = mbs_stepper_new("rk4", sys, NULL, 0, &err);
    CHECK(c && st, "pd arm: %s", err.msg);
    if (c && st) {
        mbs_system_set_state(sys, q, NULL, 0);
        for (int period = 0; period < 300; period++) {
            mbs_controller_compute(c, mbs_system_time(sys), mbs_system_q(sys), mbs_system_v(sys), tau);
            mbs_system_set_tau(sys, tau);
            for (int k = 0; k < 10; k++) mbs_stepper_step(st, 1e-3, NULL);
        }
        /* not fmax, which drops a NaN: a state that blew up must fail */
        double worst = 0;
        for (int k = 0; k < 3; k++) {
            double d = fabs(mbs_system_q(sys)[k] - q0[k]);
            if (!(d <= worst)) worst = d;
        }
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
    mbs_error_free(&err);
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
        for (int k = 7; k < mbs_model_nq(m); k++) worst = check_worst(worst, fabs(q[k] - q0[k]));
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
    mbs_error_free(&err);
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

/* ---- the stable PD ---- */

/* Runs the 3-link arm under the PD with feedback fb at period h (stepper `stepper` with step
 * dt), from 0.05 rad off its posture, for 3 s; the worst joint error at the end, or INFINITY
 * when a step failed (a non-finite state). */
static double arm_error(const char *fb, double kp, double kd, double h, const char *stepper, double dt)
{
    mbs_error err;
    mbs_model *m = mbs_model_chain(3, NULL, &err);
    mbs_system *sys = m ? mbs_system_new(m, 0, &err) : NULL;
    const double q0[3] = {0.3, -0.2, 0.1};
    double q[3], tau[3], worst = INFINITY;
    char skp[32], skd[32];
    snprintf(skp, sizeof skp, "%g", kp);
    snprintf(skd, sizeof skd, "%g", kd);
    for (int k = 0; k < 3; k++) q[k] = q0[k] + 0.05;
    const mbs_option opts[] = {tm_opt("kp", skp), tm_opt("kd", skd), MBS_OPTION_WORD("feedforward", "gravity"), tm_opt("feedback", fb)};
    mbs_system_finalize(sys, NULL);
    mbs_controller *c = sys ? mbs_controller_new("pd", sys, q0, h, opts, 4, &err) : NULL;
    mbs_system_finalize(sys, NULL);
    mbs_stepper *st = sys ? mbs_stepper_new(stepper, sys, NULL, 0, &err) : NULL;
    CHECK(c && st, "arm %s %s: %s", fb, stepper, err.msg);
    if (c && st) {
        int ok = 1, sub = (int)lround(h / dt);
        mbs_system_set_state(sys, q, NULL, 0);
        for (int period = 0; ok && period < (int)lround(3 / h); period++) {
            mbs_controller_compute(c, mbs_system_time(sys), mbs_system_q(sys), mbs_system_v(sys), tau);
            mbs_system_set_tau(sys, tau);
            for (int k = 0; ok && k < sub; k++) ok = mbs_stepper_step(st, dt, NULL) == MBS_OK;
        }
        if (ok) {
            worst = 0;
            for (int k = 0; k < 3; k++) worst = check_worst(worst, fabs(mbs_system_q(sys)[k] - q0[k]));
        }
    }
    mbs_stepper_free(st);
    mbs_controller_free(c);
    mbs_system_free(sys);
    mbs_model_free(m);
    return worst;
}

/* A stiff arm (kp = 1e4 N·m/rad, kd = 100 N·m·s/rad on links of 1 kg, 0.1 m) at a 50 ms period:
 * the plain PD, explicit in time, diverges (kd h / m ≈ 1e3 ≫ 2); the stable PD, the law at the
 * backward-Euler state one period ahead, settles on the posture, under implicit Euler at the
 * period and under RK4 sub-stepped at 1 ms alike, and also with kd = 0 (the Taylor form of Tan
 * et al., position at q + h v, is unstable there: h kp > kd). At rest on its reference it
 * gives the plain PD's torque: the gravity feed-forward. */
static void test_stable_pd_stiff_joint(void)
{
    double e;
    e = arm_error("pd", 1e4, 100, 0.05, "implicit_euler", 0.05);
    CHECK(!(e < 0.05), "plain PD at 50 ms: error %g rad, expected to diverge", e);
    e = arm_error("pd", 1e4, 100, 0.05, "rk4", 1e-3);
    CHECK(!(e < 0.05), "plain PD at 50 ms (rk4): error %g rad, expected to diverge", e);
    e = arm_error("stable", 1e4, 100, 0.05, "implicit_euler", 0.05);
    CHECK(e < 1e-6, "stable PD at 50 ms: %g rad from the posture after 3 s", e);
    e = arm_error("stable", 1e4, 100, 0.05, "rk4", 1e-3);
    CHECK(e < 1e-6, "stable PD at 50 ms (rk4 at 1 ms): %g rad from the posture after 3 s", e);
    e = arm_error("stable", 1e4, 0, 0.05, "rk4", 1e-3);
    CHECK(e < 1e-3, "stable PD at 50 ms, kd = 0: %g rad from the posture after 3 s", e);

    mbs_error err;
    mbs_model *m = mbs_model_chain(3, NULL, &err);
    mbs_system *sys = m ? mbs_system_new(m, 0, &err) : NULL;
    const double q0[3] = {0.3, -0.2, 0.1}, v0[3] = {0, 0, 0};
    double t_pd[3], t_st[3];
    const mbs_option pd[] = {MBS_OPTION("kp", 1e4), MBS_OPTION("kd", 100), MBS_OPTION_WORD("feedback", "pd")};
    const mbs_option st[] = {MBS_OPTION("kp", 1e4), MBS_OPTION("kd", 100), MBS_OPTION_WORD("feedback", "stable")};
    mbs_system_finalize(sys, NULL);
    mbs_controller *a = sys ? mbs_controller_new("pd", sys, q0, 0.05, pd, 3, &err) : NULL;
    mbs_system_finalize(sys, NULL);
    mbs_controller *b = sys ? mbs_controller_new("pd", sys, q0, 0.05, st, 3, &err) : NULL;
    CHECK(a && b, "pd: %s", err.msg);
    if (a && b) {
        mbs_controller_compute(a, 0, q0, v0, t_pd);
        mbs_controller_compute(b, 0, q0, v0, t_st);
        CHECK_CLOSE(t_st, t_pd, 3, 1e-9, "stable PD at rest on its reference vs the plain PD");
    }
    mbs_controller_free(a);
    mbs_controller_free(b);
    mbs_system_free(sys);
    mbs_model_free(m);
}

/* feedback = impedance: the PD goes to the system as a joint impedance, applied by the stepper at
 * each of its steps, the torque carrying the feed-forward alone. The arm at a 50 ms period with
 * kp = 100, kd = 2 under RK4 at 1 ms: the plain PD held for 50 ms diverges (kd h / m ≈ 30), the
 * impedance, a PD at the stepper's 1 ms, settles; the system holds the controller's gains and
 * reference, and the torque is the gravity feed-forward. */
static void test_impedance_feedback(void)
{
    double e = arm_error("pd", 100, 2, 0.05, "rk4", 1e-3);
    CHECK(!(e < 0.05), "plain PD at 50 ms, kp 100: error %g rad, expected to diverge", e);
    e = arm_error("impedance", 100, 2, 0.05, "rk4", 1e-3);
    CHECK(e < 1e-3, "impedance at 50 ms (rk4 at 1 ms): %g rad from the posture after 3 s", e);

    mbs_error err;
    mbs_model *m = mbs_model_chain(3, NULL, &err);
    mbs_system *sys = m ? mbs_system_new(m, 0, &err) : NULL;
    const double q0[3] = {0.3, -0.2, 0.1}, v0[3] = {0, 0, 0}, q1[3] = {0.35, -0.15, 0.15};
    double t_pd[3], t_imp[3];
    const mbs_option pd[] = {MBS_OPTION("kp", 100), MBS_OPTION("kd", 2), MBS_OPTION_WORD("feedback", "pd")};
    const mbs_option impo[] = {MBS_OPTION("kp", 100), MBS_OPTION("kd", 2), MBS_OPTION_WORD("feedback", "impedance")};
    mbs_system_finalize(sys, NULL);
    mbs_controller *a = sys ? mbs_controller_new("pd", sys, q0, 0.05, pd, 3, &err) : NULL;
    mbs_system_finalize(sys, NULL);
    mbs_controller *b = sys ? mbs_controller_new("pd", sys, q0, 0.05, impo, 3, &err) : NULL;
    CHECK(a && b, "pd: %s", err.msg);
    if (a && b) {
        mbs_controller_compute(a, 0, q1, v0, t_pd);
        mbs_controller_compute(b, 0, q1, v0, t_imp);
        /* the plain PD's torque = its PD part + the feed-forward; the impedance's PD part is the
         * system's, at the same state */
        double imp[3] = {0, 0, 0};
        mbsi_system_impedance_torque(sys, q1, v0, imp);
        for (int k = 0; k < 3; k++) imp[k] += t_imp[k];
        CHECK(sys->imp_on && sys->imp_kp[0] == 100 && sys->imp_kd[2] == 2 && sys->imp_qref[1] == q0[1],
              "impedance: the system holds kp %g, kd %g, q_ref %g", sys->imp_kp[0], sys->imp_kd[2], sys->imp_qref[1]);
        CHECK_CLOSE(imp, t_pd, 3, 1e-12, "the impedance's torque plus the feed-forward vs the plain PD");
    }
    mbs_controller_free(a);
    mbs_controller_free(b);
    mbs_system_free(sys);
    mbs_model_free(m);
}

/* Loads a scenario with overrides (NULL with a failed check when it does not load). */
static mbs_scenario *load(const char *path, const char **sets, int nsets)
{
    mbs_error err;
    mbs_scenario *sc = mbs_scenario_load(path, sets, nsets, &err);
    CHECK(sc != NULL, "load %s: %s", path, err.msg);
    mbs_error_free(&err);
    return sc;
}

/* Robosimian standing at the paper's 50 ms controller period: the plain PD at kp = 2000,
 * kd = 50 diverges within a fraction of a second (its 0.009 kg·m² wheels and light wrists), the
 * stable PD, its prediction taking the base free and the feed-forward's contact forces as
 * known, stands still. */
static void test_stable_pd_robosimian_50ms(void)
{
    for (int stable = 0; stable < 2; stable++) {
        const char *sets[] = {"controller.type=pd", "controller.dt=0.05", "run.duration=3",
                              stable ? "controller.feedback=stable" : "controller.feedback=pd"};
        mbs_scenario *sc = load(SCEN("robosimian_walk.ini"), sets, 4);
        mbs_error err;
        mbs_sim *sim = sc ? mbs_sim_new(sc, &err) : NULL;
        mbs_sim_summary sum;
        int rc = sim ? mbs_sim_run(sim, NULL, &sum, &err) : MBS_ERR_ARG;
        if (stable) {
            CHECK(rc == MBS_OK && !sum.diverged, "robosimian standing, stable PD at 50 ms: %s",
                  rc == MBS_OK ? sum.reason : err.msg);
            CHECK(rc == MBS_OK && sum.max_tilt_deg < 0.1 && sum.base_z_max - sum.base_z_min < 2e-3,
                  "robosimian standing, stable PD at 50 ms: tilt %g deg, base z in [%g, %g]", sum.max_tilt_deg,
                  sum.base_z_min, sum.base_z_max);
        } else
            CHECK(rc != MBS_OK || sum.diverged, "robosimian standing, plain PD at 50 ms: expected to diverge");
        mbs_sim_free(sim);
        mbs_scenario_free(sc);
    }
}

/* ---- the limb IK ---- */

/* |a − b| */
static double dist3(const double a[3], const double b[3])
{
    return sqrt((a[0] - b[0]) * (a[0] - b[0]) + (a[1] - b[1]) * (a[1] - b[1]) + (a[2] - b[2]) * (a[2] - b[2]));
}

/* The foot point's placement by the library's whole-robot kinematics (qb: the posture with
 * the base at the origin; the limb's angles set to x): the foot frame's rotation R and the
 * point p, and its 6 x nv Jacobian into J when not NULL. */
static void robot_foot(const mbs_model *m, mbs_data *d, double *qb, const mbs_limb *l, const double *x, double R[9],
                       double p[3], double *J)
{
    double o[3];
    for (int k = 0; k < l->n; k++) qb[l->idx_q[k]] = x[k];
    mbs_compute_frame_placement(m, d, qb, l->foot_frame, R, o);
    for (int r = 0; r < 3; r++) p[r] = o[r] + R[r] * l->offset[0] + R[r + 3] * l->offset[1] + R[r + 6] * l->offset[2];
    if (J) mbs_compute_frame_jacobian(m, d, qb, l->foot_frame, l->offset, MBS_LOCAL_WORLD_ALIGNED, J, 6);
}

/* On Robosimian's four limbs, at the scenario's posture: the limb's own chain kinematics are
 * the robot's (the foot point, the foot frame's rotation and the point's Jacobian within
 * 1e-12 of mbs_compute_frame_jacobian's); FK(IK(p)) = p within 1e-9 m for targets
 * the limb reaches (the foot frame's origin from random postures 0.3 rad about rest; the
 * wheel-mount sphere's centre, its tilt held, moved up to 0.08 m along each axis from rest, the tilt then
 * within 1e-9 rad of rest), the same angles from a cold and a warm start; the solution's rate
 * along a random motion of the target (mbsi_limb_ik_rate) is the derivative of the solutions
 * (central differences of cold solves, within 1e-7 relative), and the task's rate along it
 * is the target's, the tilt's zero; an unreachable point (2 m from the shoulder) is reported
 * and clamped to a closest point: the gradient of the distance vanishes there, and the foot is
 * nearer the target than at rest. */
static void test_limb_ik(void)
{
    mbs_scenario *sc = load(SCEN("robosimian_walk.ini"), NULL, 0);
    if (!sc) return;
    const mbs_model *m = mbs_scenario_model(sc);
    const double *q0 = mbs_scenario_q0(sc);
    const int nq = mbs_model_nq(m), nv = mbs_model_nv(m);
    const double mount[3] = {0.12024, 0.172, 0};
    unsigned seed = 12345;
    mbs_data *d = mbs_data_new(m);
    double *qb = malloc((size_t)nq * sizeof(double)), *Jr = malloc(6 * (size_t)nv * sizeof(double));
    memcpy(qb, q0, (size_t)nq * sizeof(double));
    qb[0] = qb[1] = qb[2] = qb[3] = qb[4] = qb[5] = 0;   /* the base at the origin: world = base frame */
    qb[6] = 1;
    for (int limb = 1; limb <= 4; limb++) {
        for (int mode = 0; mode < 2; mode++) {
            char foot[32];
            snprintf(foot, sizeof foot, mode ? "limb%d_link7" : "limb%d_foot", limb);
            mbs_limb l, cold;
            mbs_error err;
            if (mbsi_limb_init(&l, m, foot, mode ? mount : NULL, mode, q0, &err) != MBS_OK) {
                CHECK(0, "%s: %s", foot, err.msg);
                continue;
            }
            CHECK(l.n == (mode ? 7 : 8) && l.rows == (mode ? 5 : 3), "%s: %d joints, %d rows", foot, l.n, l.rows);
            double p0[3], worst = 0, worst_tilt = 0, worst_start = 0, worst_kin = 0, worst_rate = 0, worst_task = 0;
            int clamped = 0, rated = 0;
            mbsi_limb_fk(&l, l.rest, p0);
            for (int trial = 0; trial < 40; trial++) {
                double x[MBS_LIMB_MAX_JOINTS], y[MBS_LIMB_MAX_JOINTS], z[MBS_LIMB_MAX_JOINTS], p[3], f[3];
                if (mode)
                    for (int r = 0; r < 3; r++) p[r] = p0[r] + 0.08 * (2.0 * rand_r(&seed) / RAND_MAX - 1);
                else {
                    for (int k = 0; k < l.n; k++) x[k] = l.rest[k] + 0.3 * (2.0 * rand_r(&seed) / RAND_MAX - 1);
                    mbsi_limb_fk(&l, x, p);
                }
                clamped += mbsi_limb_ik(&l, p, y);
                /* the solution's rate along u, before another solve replaces its system */
                double u[3], yd[MBS_LIMB_MAX_JOINTS];
                for (int r = 0; r < 3; r++) u[r] = 2.0 * rand_r(&seed) / RAND_MAX - 1;
                int has_rate = mbsi_limb_ik_rate(&l, u, yd) == 0;
                /* the chain's kinematics against the robot's */
                double R[9], o[3], Rc[9], Jc[3 * MBS_LIMB_MAX_JOINTS];
                mbsi_limb_fk_jacobian(&l, y, f, Rc, Jc);
                robot_foot(m, d, qb, &l, y, R, o, Jr);
                for (int r = 0; r < 3; r++) worst_kin = check_worst(worst_kin, fabs(f[r] - o[r]));
                for (int r = 0; r < 9; r++) worst_kin = check_worst(worst_kin, fabs(Rc[r] - R[r]));
                for (int k = 0; k < l.n; k++)
                    for (int r = 0; r < 3; r++) worst_kin = check_worst(worst_kin, fabs(Jc[r + 3 * k] - Jr[r + 6 * l.idx_v[k]]));
                worst = check_worst(worst, dist3(f, p));
                if (mode)
                    /* the vertical seen from the foot frame (R's third row): a tilt moves it, a
                     * turn about the vertical (left free) does not */
                    for (int c = 0; c < 3; c++) worst_tilt = check_worst(worst_tilt, fabs(R[2 + 3 * c] - l.rest_R[2 + 3 * c]));
                /* a cold start (from rest) finds the same angles */
                if (mbsi_limb_init(&cold, m, foot, mode ? mount : NULL, mode, q0, &err) == MBS_OK) {
                    mbsi_limb_ik(&cold, p, z);
                    for (int k = 0; k < l.n; k++) worst_start = check_worst(worst_start, fabs(z[k] - y[k]));
                    if (has_rate) {
                        /* the rate: central differences of the solutions at p ± ε u */
                        const double eps = 1e-6;
                        double pp[3], pm[3], zp[MBS_LIMB_MAX_JOINTS], zm[MBS_LIMB_MAX_JOINTS], sc2 = 0, dif = 0;
                        for (int r = 0; r < 3; r++) { pp[r] = p[r] + eps * u[r]; pm[r] = p[r] - eps * u[r]; }
                        mbsi_limb_ik(&cold, pp, zp);
                        mbsi_limb_ik(&cold, pm, zm);
                        for (int k = 0; k < l.n; k++) {
                            double fd = (zp[k] - zm[k]) / (2 * eps);
                            sc2 = fmax(sc2, fabs(fd));
                            dif = fmax(dif, fabs(fd - yd[k]));
                        }
                        worst_rate = check_worst(worst_rate, dif / sc2);
                        rated++;
                        /* the task's rate: J ẏ = u, and the angular velocity has no x or y part */
                        for (int r = 0; r < (mode ? 5 : 3); r++) {
                            double s = 0;
                            for (int k = 0; k < l.n; k++) s += Jr[r + 6 * l.idx_v[k]] * yd[k];
                            worst_task = check_worst(worst_task, fabs(s - (r < 3 ? u[r] : 0)));
                        }
                    }
                    mbsi_limb_fini(&cold);
                }
            }
            CHECK(clamped == 0, "%s: %d of 40 reachable targets reported unreachable", foot, clamped);
            CHECK(worst_kin < 1e-12, "%s: the chain's kinematics differ from the robot's by %g", foot, worst_kin);
            CHECK(worst < 1e-9, "%s: FK(IK(p)) misses p by %g m", foot, worst);
            CHECK(worst_tilt < 1e-9, "%s: the held tilt moved by %g", foot, worst_tilt);
            CHECK(worst_start < 1e-6, "%s: cold and warm starts differ by %g rad", foot, worst_start);
            CHECK(rated >= 30, "%s: a rate for %d of 40 solutions", foot, rated);
            CHECK(worst_rate < 1e-7, "%s: the solution's rate differs from its central differences by %g (relative)", foot,
                  worst_rate);
            CHECK(worst_task < 1e-9, "%s: the task moves off the target's rate by %g", foot, worst_task);
            /* unreachable: 2 m out along the shoulder-to-foot direction */
            double sh[3], R[9], far[3], x[MBS_LIMB_MAX_JOINTS], f[3], J[3 * MBS_LIMB_MAX_JOINTS], xd[MBS_LIMB_MAX_JOINTS];
            char j1[32];
            snprintf(j1, sizeof j1, "limb%d_joint1", limb);
            mbs_compute_frame_placement(m, d, q0, mbs_frame_id(m, j1), R, sh);
            for (int r = 0; r < 3; r++) sh[r] -= q0[r];   /* the base frame: the scenario's base is level */
            double u = dist3(p0, sh);
            for (int r = 0; r < 3; r++) far[r] = sh[r] + 2 * (p0[r] - sh[r]) / u;
            CHECK(mbsi_limb_ik(&l, far, x) == 1, "%s: a point 2 m away reported reachable", foot);
            CHECK(mbsi_limb_ik_rate(&l, far, xd) == 1, "%s: a rate for an unreachable target", foot);
            mbsi_limb_fk_jacobian(&l, x, f, NULL, J);
            if (!mode) {
                double g = 0, jn = 0, e[3] = {far[0] - f[0], far[1] - f[1], far[2] - f[2]};
                for (int k = 0; k < l.n; k++) {
                    double gk = J[3 * k] * e[0] + J[1 + 3 * k] * e[1] + J[2 + 3 * k] * e[2];
                    g += gk * gk;
                    jn += J[3 * k] * J[3 * k] + J[1 + 3 * k] * J[1 + 3 * k] + J[2 + 3 * k] * J[2 + 3 * k];
                }
                CHECK(sqrt(g) < 1e-6 * sqrt(jn) * dist3(far, f), "%s: clamped point not stationary: |Jᵀe| = %g", foot,
                      sqrt(g));
            }
            CHECK(dist3(far, f) < dist3(far, p0) - 0.1, "%s: clamped foot %g m from the target, %g at rest", foot,
                  dist3(far, f), dist3(far, p0));
            mbsi_limb_fini(&l);
        }
    }
    free(qb);
    free(Jr);
    mbs_data_free(d);
    mbs_scenario_free(sc);
}

/* The gaits keep the analytic leg IK for Solo (no numeric limb is made) and take the numeric
 * one for Robosimian's limbs. */
static void test_gait_legs(void)
{
    const char *files[2] = {SCEN("solo_squat.ini"), SCEN("robosimian_jump.ini")};
    for (int k = 0; k < 2; k++) {
        mbs_scenario *sc = load(files[k], NULL, 0);
        mbs_error err;
        mbs_sim *sim = sc ? mbs_sim_new(sc, &err) : NULL;
        CHECK(!sc || sim, "%s: %s", files[k], err.msg);
        if (sim) {
            mbs_option opts[40];
            int n = mbs_scenario_options(sc, "controller", opts, 40);
            mbs_system_finalize(mbs_sim_system(sim), NULL);
            mbs_controller *c = mbs_controller_new(mbs_scenario_controller(sc), mbs_sim_system(sim), mbs_scenario_q0(sc),
                                                   mbs_scenario_controller_dt(sc), opts, n, &err);
            CHECK(c != NULL, "%s: %s", files[k], err.msg);
            if (c) {
                const mbs_gait *g = c->impl;
                for (int i = 0; i < g->nlegs; i++)
                    CHECK((g->limb[i] != NULL) == (k == 1) && g->nj[i] == (k ? 7 : 3), "%s: leg %d: %s IK, %d joints",
                          files[k], i, g->limb[i] ? "numeric" : "analytic", g->nj[i]);
            }
            mbs_controller_free(c);
        }
        mbs_sim_free(sim);
        mbs_scenario_free(sc);
    }
}

/* ---- Robosimian's scenarios ---- */

/* Per controller period: lift-offs of the whole robot (every contact released after some touched),
 * each cycle's highest base, and each stance's motion of the touching points. A stance's
 * samples count from 0.1 s after its touch-down to 0.1 s before its lift-off: the landing and
 * the lift-off themselves move the touching point (the foot comes to rest on it, or leaves). */
#define WATCH_LAG 5   /* controller periods in 0.1 s at the scenarios' 20 ms */
typedef struct watch {
    mbs_system *sys;
    int prev[4], air, liftoffs, foot_liftoffs[4], age[4];
    double p_down[4][3];
    double speed[4][WATCH_LAG], drift[4][WATCH_LAG];   /* the last samples, not yet counted */
    double peak[8];           /* highest base z per jump cycle */
    double worst_speed, worst_drift;
    double settle, period;
} watch;

static void watch_period(void *user, double t, const double *q, const double *v, double *tau)
{
    (void)v;
    (void)tau;
    watch *w = user;
    int any = 0, n = mbs_system_ncontacts(w->sys);
    for (int i = 0; i < n && i < 4; i++) {
        mbs_contact_info ci;
        mbs_system_contact(w->sys, i, &ci);
        any |= ci.active;
        if (!ci.active) {
            if (w->prev[i]) w->foot_liftoffs[i]++;
            w->age[i] = 0;   /* the samples of the last 0.1 s are dropped */
        } else {
            int a = w->age[i]++;
            if (a == WATCH_LAG) memcpy(w->p_down[i], ci.position, sizeof ci.position);   /* 0.1 s after touch-down */
            if (a >= 2 * WATCH_LAG) {
                /* the sample 0.1 s old is neither the landing's nor the lift-off's: count it */
                w->worst_speed = fmax(w->worst_speed, w->speed[i][a % WATCH_LAG]);
                w->worst_drift = fmax(w->worst_drift, w->drift[i][a % WATCH_LAG]);
            }
            if (a >= WATCH_LAG) {
                w->speed[i][a % WATCH_LAG] = hypot(ci.velocity[0], ci.velocity[1]);
                w->drift[i][a % WATCH_LAG] = hypot(ci.position[0] - w->p_down[i][0], ci.position[1] - w->p_down[i][1]);
            }
        }
        w->prev[i] = ci.active;
    }
    if (!any && !w->air && t > 0) w->liftoffs++;
    w->air = !any;
    int cycle = w->period > 0 ? (int)floor((t - w->settle) / w->period) : -1;
    if (cycle >= 0 && cycle < 8) w->peak[cycle] = fmax(w->peak[cycle], q[2]);
}

static int run_watched(const char *path, const char **sets, int nsets, watch *w, mbs_sim_summary *sum, double *q_end)
{
    mbs_scenario *sc = load(path, sets, nsets);
    if (!sc) return 1;
    mbs_error err;
    mbs_sim *sim = mbs_sim_new(sc, &err);
    CHECK(sim != NULL, "%s: %s", path, err.msg);
    int rc = 1;
    if (sim) {
        w->sys = mbs_sim_system(sim);
        for (int i = 0; i < 4; i++) w->prev[i] = 1;   /* the feet start on the ground */
        mbs_sim_set_control(sim, watch_period, w);
        rc = mbs_sim_run(sim, NULL, sum, &err);
        CHECK(rc == MBS_OK, "%s: %s", path, err.msg);
        memcpy(q_end, mbs_system_q(w->sys), 3 * sizeof(double));
    }
    mbs_sim_free(sim);
    mbs_scenario_free(sc);
    return rc;
}

/* robosimian_jump.ini as shipped (nmdp at 50 ms, the stable PD integrated by the stepper), under
 * mdp at 5 ms, and on the spring-damper contacts under expo at 1 ms (the stable PD at 20 ms): five jumps in 10 s, the robot leaving the ground each time, the torso level (the
 * symmetric poses' ground truth: zero tilt) and its height periodic (each jump's top within
 * 1 cm of the others), the robot landing where it took off. */
static const char *MDP5[] = {"stepper.name=mdp", "stepper.dt=0.005"};
static const char *EXPO1[] = {"stepper.name=expo", "stepper.dt=0.001", "controller.dt=0.02", "controller.feedback=stable"};
static const char **const VARIANT[] = {NULL, MDP5, EXPO1};
static const int NVARIANT[] = {0, 2, 4};
/* the spring-damper variant jumps as it was tuned to, a push of 10 cm in 0.2 s: the shipped push
 * (15 cm in 0.15 s, vigorous enough to leave the ground at nmdp's 50 ms step) makes the robot on
 * spring-damper contacts drift 12 cm over the five jumps */
static const char *EXPO1_JUMP[] = {"stepper.name=expo", "stepper.dt=0.001", "controller.dt=0.02", "controller.feedback=stable",
                                   "controller.push_height=0.1", "controller.push_time=0.2", "controller.retract_time=0.3"};
static const char *const VARIANT_NAME[] = {"as shipped", "mdp 5 ms", "expo 1 ms"};

static void test_robosimian_jump(void)
{
    for (int k = 0; k < 3; k++) {
        watch w = {.settle = 1, .period = 1.8};
        mbs_sim_summary sum;
        double q[3];
        if (run_watched(SCEN("robosimian_jump.ini"), k == 2 ? EXPO1_JUMP : VARIANT[k], k == 2 ? 7 : NVARIANT[k], &w, &sum, q))
            continue;
        const char *who = VARIANT_NAME[k];
        CHECK(!sum.diverged, "robosimian_jump %s: %s", who, sum.reason);
        CHECK(w.liftoffs == 5, "robosimian_jump %s: %d lift-offs, expected 5", who, w.liftoffs);
        CHECK(sum.max_tilt_deg < 2, "robosimian_jump %s: tilt %g deg", who, sum.max_tilt_deg);
        double lo = INFINITY, hi = -INFINITY;
        for (int c = 0; c < 5; c++) { lo = fmin(lo, w.peak[c]); hi = fmax(hi, w.peak[c]); }
        CHECK(lo > sum.base_z_min + 0.2 && hi - lo < 0.01, "robosimian_jump %s: jump tops in [%g, %g] m", who, lo, hi);
        CHECK(hypot(q[0], q[1]) < 0.1, "robosimian_jump %s: the base ends %g m from where it started", who, hypot(q[0], q[1]));
    }
}

/* robosimian_walk.ini as shipped (nmdp at 50 ms, the stable PD integrated by the stepper), under
 * mdp at 5 ms, and on the spring-damper contacts under expo at 1 ms (the stable PD at 20 ms): the base 0.5 m forward or more in 10 s, on the plan (a distance linear in time: within
 * 5 cm of 0.07 m/s after the ramp), level; every leg swings, and a stance foot's touching point
 * neither slides (under 5 cm/s) nor wanders (under 2 cm) once landed. */
static void test_robosimian_walk(void)
{
    for (int k = 0; k < 3; k++) {
        watch w = {0};
        mbs_sim_summary sum;
        double q[3];
        if (run_watched(SCEN("robosimian_walk.ini"), VARIANT[k], NVARIANT[k], &w, &sum, q)) continue;
        const char *who = VARIANT_NAME[k];
        CHECK(!sum.diverged, "robosimian_walk %s: %s", who, sum.reason);
        /* the plan: settle 1 s, ramp 2 s to 0.07 m/s: x(10) = 0.07 (10 − 1 − 1) */
        CHECK(q[0] >= 0.5 && fabs(q[0] - 0.56) < 0.05, "robosimian_walk %s: base x %g m at 10 s (plan 0.56)", who, q[0]);
        CHECK(sum.max_tilt_deg < 2, "robosimian_walk %s: tilt %g deg", who, sum.max_tilt_deg);
        for (int i = 0; i < 4; i++)
            CHECK(w.foot_liftoffs[i] >= 1, "robosimian_walk %s: foot %d never lifted", who, i);
        CHECK(w.worst_speed < 0.05, "robosimian_walk %s: a stance foot slid at %g m/s", who, w.worst_speed);
        /* nmdp (first order) lets a stance foot creep during the body's sideways shifts: 3.7 cm
         * sideways and 4 cm into the ground over a shift, where mdp and the spring-damper contacts
         * hold it; a known limitation (docs/benchmarks.md), bounded here so that it cannot grow */
        double drift_bound = k == 0 ? 0.05 : 0.02;
        CHECK(w.worst_drift < drift_bound, "robosimian_walk %s: a stance foot's touching point moved %g m", who, w.worst_drift);
    }
}

int main(void)
{
    RUN(test_pd_holds_an_arm);
    RUN(test_tsid_stands);
    RUN(test_romeo_walks);
    RUN(test_tsid_squats);
    RUN(test_stable_pd_stiff_joint);
    RUN(test_stable_pd_robosimian_50ms);
    RUN(test_impedance_feedback);
    RUN(test_limb_ik);
    RUN(test_gait_legs);
    RUN(test_robosimian_jump);
    RUN(test_robosimian_walk);
    return check_summary("test_control");
}
