/* test_divergence.c — divergence is an error, never a silent NaN:
 *   - a new system starts at the model's neutral configuration (as mbs/contact.h says): Solo's
 *     feet 0.3 m under the ground;
 *   - every registered stepper, given a state that is not finite, returns MBS_ERR_NUMERIC from
 *     mbs_stepper_step with a message naming the stepper, the joint (and the coordinate within a
 *     joint of several) and the time, never MBS_OK;
 *   - the README's simulation (examples/simulate.c) started from a bad state — the neutral
 *     posture, feet deep under stiff ground — never hands back a non-finite state as success, and
 *     with explicit Euler it gets the error;
 *   - the same system from a sensible posture (the example's) steps without error. */
#include <math.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "check.h"
#include "mbs.h"

#define SOLO MBS_SOURCE_DIR "/urdf/solo12.urdf"
#define RADIUS 0.0191

static const char *const feet[4] = {"FL_FOOT", "FR_FOOT", "HL_FOOT", "HR_FOOT"};

static int finite_state(const mbs_system *s)
{
    const mbs_model *m = mbs_system_model(s);
    const double *q = mbs_system_q(s), *v = mbs_system_v(s);
    for (int k = 0; k < mbs_model_nq(m); k++)
        if (!isfinite(q[k])) return 0;
    for (int k = 0; k < mbs_model_nv(m); k++)
        if (!isfinite(v[k])) return 0;
    return isfinite(mbs_system_time(s));
}

/* The README's system: Solo, four foot balls, the ground z = 0 of stiffness k. */
static mbs_system *readme_system(const mbs_model *m, double k)
{
    mbs_error err;
    mbs_system *s = mbs_system_new(m, 4, &err);
    CHECK(s != NULL, "mbs_system_new: %s", err.msg);
    if (!s) return NULL;
    mbs_material ground = {k, k, 300, 300, 1.0};
    double up[3] = {0, 0, 1};
    CHECK(mbs_system_add_plane(s, up, 0.0, &ground, &err) == MBS_OK, "plane: %s", err.msg);
    for (int i = 0; i < 4; i++) CHECK(mbs_system_add_contact(s, feet[i], NULL, RADIUS, &err) >= 0, "%s: %s", feet[i], err.msg);
    return s;
}

/* Lowest foot ball point of the system's current q (world z). */
static double lowest_foot(const mbs_model *m, const double *q)
{
    mbs_data *d = mbs_data_new(m);
    double low = INFINITY, R[9], p[3];
    for (int i = 0; d && i < 4; i++) {
        mbs_compute_frame_placement(m, d, q, mbs_frame_id(m, feet[i]), R, p);
        low = fmin(low, p[2] - RADIUS);
    }
    mbs_data_free(d);
    return low;
}

static void test_system_starts_neutral(void)
{
    mbs_error err;
    mbs_model *m = mbs_model_from_urdf(SOLO, NULL, &err);
    CHECK(m != NULL, "%s", err.msg);
    if (!m) return;
    mbs_system *s = readme_system(m, 1e5);
    double q0[19];
    mbs_neutral(m, q0);
    if (s) {
        CHECK(memcmp(q0, mbs_system_q(s), sizeof q0) == 0 && mbs_system_time(s) == 0, "a new system is not at neutral, t = 0");
        for (int k = 0; k < 18; k++) CHECK(mbs_system_v(s)[k] == 0 && mbs_system_tau(s)[k] == 0, "v or tau[%d] not 0", k);
        double low = lowest_foot(m, mbs_system_q(s));
        CHECK(low < -0.3 && low > -0.36, "neutral: the feet's lowest point at z = %g, documented as 0.3 m under", low);
    }
    mbs_system_free(s);
    mbs_model_free(m);
}

/* One step of every stepper from a state with a NaN: MBS_ERR_NUMERIC, with the message. */
static void test_nan_state_is_an_error(void)
{
    mbs_error err;
    mbs_model *m = mbs_model_from_urdf(SOLO, NULL, &err);
    mbs_model *chain = mbs_model_chain(3, NULL, &err);
    CHECK(m && chain, "models: %s", err.msg);
    if (!m || !chain) { mbs_model_free(m); mbs_model_free(chain); return; }
    for (int i = 0; i < mbs_stepper_count(); i++) {
        const char *name = mbs_stepper_at(i)->name;
        for (int which = 0; which < 3; which++) {
            /* Solo with a NaN joint angle; Solo with an infinite base velocity; a fixed chain */
            const mbs_model *mm = which < 2 ? m : chain;
            mbs_system *s = which < 2 ? readme_system(m, 1e5) : mbs_system_new(chain, 0, &err);
            if (!s) continue;
            int nq = mbs_model_nq(mm), nv = mbs_model_nv(mm);
            double *q = calloc((size_t)nq, sizeof *q), *v = calloc((size_t)nv, sizeof *v);
            mbs_neutral(mm, q);
            if (which == 0) q[2] = 0.339, q[mbs_joint_idx_q(m, mbs_joint_id(m, "FL_KFE"))] = NAN;
            else if (which == 1) q[2] = 0.339, v[2] = INFINITY;
            else q[1] = NAN;
            mbs_system_set_state(s, q, v, 0.25);
            mbs_system_finalize(s, NULL);
            mbs_stepper *st = mbs_stepper_new(name, s, NULL, 0, &err);
            CHECK(st != NULL, "%s: %s", name, err.msg);
            if (st) {
                int rc = mbs_stepper_step(st, 1e-3, NULL);
                const mbs_error *e = mbs_stepper_last_error(st);
                CHECK(rc == MBS_ERR_NUMERIC && e->code == MBS_ERR_NUMERIC, "%s, case %d: rc %d (code %d) from a NaN state: '%s'",
                      name, which, rc, e->code, e->msg);
                CHECK(strncmp(e->msg, name, strlen(name)) == 0 && strstr(e->msg, "from t = 0.25 s"),
                      "%s, case %d: message lacks the stepper or the time: '%s'", name, which, e->msg);
                /* the first coordinate that is not finite, named by its joint; a fixed chain's
                 * joints have one coordinate each, the free-flyer's carry their index and name */
                if (rc == MBS_ERR_NUMERIC && which < 2)
                    CHECK(strstr(e->msg, "of joint 'root_joint' [") || strstr(e->msg, "of joint '"),
                          "%s: message lacks the joint: '%s'", name, e->msg);
                if (rc == MBS_ERR_NUMERIC && which == 2)
                    CHECK(strstr(e->msg, "q of joint 'joint") && !strstr(e->msg, "joint1' ["), "%s, chain: '%s'", name, e->msg);
                /* a step that works clears the record */
                if (which == 2) {
                    mbs_neutral(mm, q);
                    mbs_system_set_state(s, q, NULL, 0);
                    CHECK(mbs_stepper_step(st, 1e-3, NULL) == MBS_OK && mbs_stepper_last_error(st)->code == MBS_OK &&
                              mbs_stepper_last_error(st)->msg[0] == '\0',
                          "%s: a good step after a failed one: '%s'", name, mbs_stepper_last_error(st)->msg);
                }
            }
            mbs_stepper_free(st);
            mbs_system_free(s);
            free(q);
            free(v);
        }
    }
    mbs_model_free(m);
    mbs_model_free(chain);
}

/* Euler, NaN in a free-flyer's q: the message names root_joint's coordinate within the joint, the
 * one set so (z), not the x a step would spread it to. */
static void test_message_names_the_coordinate(void)
{
    mbs_error err;
    mbs_model *m = mbs_model_from_urdf(SOLO, NULL, &err);
    if (!m) { CHECK(0, "%s", err.msg); return; }
    mbs_system *s = readme_system(m, 1e5);
    double q[19];
    mbs_neutral(m, q);
    q[2] = NAN;   /* the base's z: integrate keeps x and y of a zero-velocity step finite */
    mbs_system_set_state(s, q, NULL, 1.5);
    mbs_system_finalize(s, NULL);
    mbs_stepper *st = mbs_stepper_new("euler", s, NULL, 0, &err);
    if (st) {
        int rc = mbs_stepper_step(st, 1e-3, NULL);
        const char *msg = mbs_stepper_last_error(st)->msg;
        CHECK(rc == MBS_ERR_NUMERIC && strstr(msg, "euler: the state given to the step from t = 1.5 s is not finite") &&
                  strstr(msg, "of joint 'root_joint' [2, z] = nan (q[2])"),
              "euler, NaN base z: '%s'", msg);
    }
    mbs_stepper_free(st);
    mbs_system_free(s);
    mbs_model_free(m);
}

/* The README's loop from the neutral posture (feet 0.3 m under) on ground of stiffness 1e9: no
 * stepper may return MBS_OK with a state that is not finite; explicit Euler at 2 ms blows up and
 * must say so. */
static void test_readme_from_a_bad_state(void)
{
    mbs_error err;
    mbs_model *m = mbs_model_from_urdf(SOLO, NULL, &err);
    if (!m) { CHECK(0, "%s", err.msg); return; }
    for (int i = 0; i < mbs_stepper_count(); i++) {
        const char *name = mbs_stepper_at(i)->name;
        mbs_system *s = readme_system(m, 1e9);
        if (!s) continue;
        mbs_system_finalize(s, NULL);
        mbs_stepper *st = mbs_stepper_new(name, s, NULL, 0, &err);
        CHECK(st != NULL, "%s: %s", name, err.msg);
        int k, rc = MBS_OK, silent = 0;
        double tau[18] = {0};
        for (k = 0; st && k < 200; k++) {
            mbs_system_set_tau(s, tau);
            rc = mbs_stepper_step(st, 2e-3, NULL);
            if (rc != MBS_OK) break;
            if (!finite_state(s)) { silent = 1; break; }
        }
        printf("%s: rc %d after %d steps: %s\n", name, rc, k, st ? mbs_stepper_last_error(st)->msg : "");
        CHECK(!silent, "%s: step %d returned MBS_OK with a state that is not finite", name, k);
        if (rc != MBS_OK)
            CHECK(mbs_stepper_last_error(st)->msg[0] && mbs_stepper_last_error(st)->code == rc, "%s: error %d without a message",
                  name, rc);
        if (strcmp(name, "euler") == 0)
            CHECK(rc == MBS_ERR_NUMERIC, "euler at 2 ms on 1e9 N/m, feet 0.3 m under: rc %d after %d steps", rc, k);
        mbs_stepper_free(st);
        mbs_system_free(s);
    }
    mbs_model_free(m);
}

int main(void)
{
    RUN(test_system_starts_neutral);
    RUN(test_nan_state_is_an_error);
    RUN(test_message_names_the_coordinate);
    RUN(test_readme_from_a_bad_state);
    return check_summary("test_divergence");
}
