/* test_api_args.c — the public API refuses bad arguments with an error instead of crashing: NULL
 * models, data, systems, steppers and names, sizes and indices out of range, a step of no or a
 * negative or non-finite length, a system of one model handed to a scenario of another. Functions
 * that return a code return MBS_ERR_ARG (or another error) with a message; functions that return
 * an object return NULL with err filled; counts and lookups return -1 or 0. */
#include <math.h>
#include <stdio.h>
#include <string.h>

#include "check.h"
#include "mbs.h"
#include "testmodels.h"

static int has(const mbs_error *e, const char *needle) { return e->code != MBS_OK && strstr(e->msg, needle) != NULL; }

static void test_model_and_data(void)
{
    mbs_error err;
    CHECK(mbs_model_from_urdf(NULL, NULL, &err) == NULL && err.code != MBS_OK, "NULL URDF path: code %d", err.code);
    CHECK(mbs_model_from_urdf_string(NULL, "x", NULL, &err) == NULL && err.code != MBS_OK, "NULL URDF text");
    CHECK(mbs_data_new(NULL) == NULL, "mbs_data_new(NULL)");
    mbs_data_free(NULL);
    mbs_model_free(NULL);
    mbs_model *m = mbs_model_from_urdf(tm_path("urdf/solo12.urdf"), NULL, &err);
    CHECK(m != NULL, "solo: %s", err.msg);
    if (!m) return;
    CHECK(mbs_joint_id(m, NULL) == -1 && mbs_frame_id(m, NULL) == -1 && mbs_frame_id(NULL, "x") == -1,
          "lookups of NULL names");
    CHECK(mbs_frame_name(m, -1) == NULL && mbs_frame_name(m, 100000) == NULL && mbs_model_visual(m, -1) == NULL,
          "names out of range");
    mbs_model_free(m);
}

static void test_system_and_stepper(void)
{
    mbs_error err;
    mbs_model *m = mbs_model_from_urdf(tm_path("urdf/solo12.urdf"), NULL, &err);
    CHECK(m != NULL, "solo: %s", err.msg);
    if (!m) return;
    CHECK(mbs_system_new(NULL, 4, &err) == NULL && has(&err, "model"), "system of no model: '%s'", err.msg);
    CHECK(mbs_system_new(m, -1, &err) == NULL && err.code == MBS_ERR_ARG, "system with -1 contacts: '%s'", err.msg);
    mbs_system *s = mbs_system_new(m, 4, &err);
    CHECK(s != NULL, "system: %s", err.msg);
    if (!s) { mbs_model_free(m); return; }
    CHECK(mbs_system_add_contact(NULL, "FL_FOOT", NULL, 0, &err) < 0 && err.code == MBS_ERR_ARG, "contact on no system");
    CHECK(mbs_system_add_contact(s, NULL, NULL, 0, &err) < 0 && err.code == MBS_ERR_ARG, "contact on no frame");
    CHECK(mbs_system_add_contact(s, "NOPE", NULL, 0, &err) < 0 && has(&err, "NOPE"), "unknown frame: '%s'", err.msg);
    CHECK(mbs_system_add_contact(s, "FL_FOOT", NULL, -1, &err) < 0 && err.code == MBS_ERR_ARG, "negative radius: '%s'",
          err.msg);
    static const double up[3] = {0, 0, 1}, zero[3] = {0, 0, 0};
    mbs_material mat = {1e5, 1e5, 300, 300, 1};
    CHECK(mbs_system_add_plane(s, zero, 0, &mat, &err) != MBS_OK, "a plane of zero normal");
    CHECK(mbs_system_add_plane(s, up, 0, NULL, &err) != MBS_OK, "a plane of no material");
    CHECK(mbs_system_add_plane(NULL, up, 0, &mat, &err) != MBS_OK, "a plane on no system");
    mbs_contact_info info;
    CHECK(mbs_system_contact(s, 0, &info) == MBS_ERR_ARG && mbs_system_contact(NULL, 0, &info) == MBS_ERR_ARG &&
              mbs_system_contact(s, 0, NULL) == MBS_ERR_ARG,
          "contact info out of range or of no system");
    CHECK(mbs_system_ncontacts(NULL) == 0 && mbs_system_model(NULL) == NULL, "queries of no system");

    mbs_system_finalize(s, NULL);
    CHECK(mbs_stepper_new(NULL, s, NULL, 0, &err) == NULL && err.code == MBS_ERR_ARG, "stepper of no name: '%s'", err.msg);
    mbs_system_finalize(s, NULL);
    CHECK(mbs_stepper_new("nope", s, NULL, 0, &err) == NULL && has(&err, "nope"), "unknown stepper: '%s'", err.msg);
    CHECK(mbs_stepper_new("expo", NULL, NULL, 0, &err) == NULL && err.code == MBS_ERR_ARG, "stepper of no system: '%s'",
          err.msg);
    mbs_system_finalize(s, NULL);
    CHECK(mbs_stepper_new("expo", s, NULL, 3, &err) == NULL && err.code == MBS_ERR_ARG, "3 options at NULL: '%s'", err.msg);
    CHECK(mbs_stepper_step(NULL, 1e-3, NULL) == MBS_ERR_ARG, "step of no stepper");
    mbs_system_finalize(s, NULL);
    mbs_stepper *st = mbs_stepper_new("euler", s, NULL, 0, &err);
    CHECK(st != NULL, "euler: %s", err.msg);
    if (st) {
        static const double bad[] = {0, -1e-3, NAN, INFINITY};
        for (int i = 0; i < 4; i++) {
            int rc = mbs_stepper_step(st, bad[i], NULL);
            CHECK(rc == MBS_ERR_ARG && strstr(mbs_stepper_last_error(st)->msg, "dt"), "step of dt = %g: rc %d '%s'", bad[i],
                  rc, mbs_stepper_last_error(st)->msg);
        }
        CHECK(mbs_system_time(s) == 0, "a refused step moved the time to %g", mbs_system_time(s));
        CHECK(mbs_stepper_set_dissipation(st, 2) == MBS_ERR_ARG && mbs_stepper_set_dissipation(NULL, 0) == MBS_ERR_ARG,
              "dissipation out of range or of no stepper");
        mbs_stepper_free(st);
    }
    mbs_stepper_free(NULL);
    mbs_system_finalize(s, NULL);
    CHECK(mbs_controller_new(NULL, s, NULL, 2e-3, NULL, 0, &err) == NULL && err.code == MBS_ERR_ARG,
          "controller of no name: '%s'", err.msg);
    CHECK(mbs_controller_new("pd", NULL, NULL, 2e-3, NULL, 0, &err) == NULL && err.code == MBS_ERR_ARG,
          "controller of no system: '%s'", err.msg);
    mbs_system_finalize(s, NULL);
    CHECK(mbs_controller_new("pd", s, NULL, 0, NULL, 0, &err) == NULL && err.code == MBS_ERR_ARG,
          "controller of period 0: '%s'", err.msg);
    mbs_system_free(s);
    mbs_system_free(NULL);
    mbs_model_free(m);
}

static void test_scenario_and_sim(void)
{
    mbs_error err;
    CHECK(mbs_scenario_load(NULL, NULL, 0, &err) == NULL && err.code != MBS_OK, "scenario of no path");
    CHECK(mbs_scenario_load(tm_path("scenarios/solo_trot.ini"), NULL, 2, &err) == NULL && err.code == MBS_ERR_ARG,
          "2 overrides at NULL: '%s'", err.msg);
    CHECK(mbs_sim_new(NULL, &err) == NULL && err.code == MBS_ERR_ARG, "sim of no scenario");
    mbs_sim_summary sum;
    CHECK(mbs_sim_run(NULL, NULL, &sum, &err) == MBS_ERR_ARG, "run of no sim");
    CHECK(mbs_sim_step(NULL, 1, &err) == MBS_ERR_ARG, "step of no sim");
    mbs_sim_free(NULL);
    mbs_scenario_free(NULL);
    /* a system of another model (other joints) is refused; one of a variant of the scenario's (the same
     * joints, as a batch's per-system models) is built */
    mbs_scenario *sc = mbs_scenario_load(tm_path("scenarios/solo_trot.ini"), NULL, 0, &err);
    mbs_model *other = mbs_model_chain(3, NULL, &err);
    mbs_model *variant = mbs_model_from_urdf(tm_path("urdf/solo12.urdf"), NULL, &err);
    if (sc && other && variant) {
        mbs_system *s = mbs_system_new(other, 8, &err);
        CHECK(s && mbs_scenario_setup_system(sc, s, &err) == MBS_ERR_ARG && has(&err, "model"),
              "a system of another model: '%s'", err.msg);
        mbs_system_free(s);
        s = mbs_system_new(variant, 8, &err);
        CHECK(s && mbs_scenario_setup_system(sc, s, &err) == MBS_OK, "a system of a variant: '%s'", err.msg);
        mbs_system_free(s);
    }
    mbs_model_free(variant);
    mbs_model_free(other);
    mbs_scenario_free(sc);
    const char *sweep = "stepper.dt=0.001";
    CHECK(mbs_sweep_new(NULL, NULL, 0, &sweep, 1, &err) == NULL && err.code == MBS_ERR_ARG, "sweep of no scenario");
    CHECK(mbs_sweep_size(NULL) == 0, "size of no sweep");
}

int main(void)
{
    RUN(test_model_and_data);
    RUN(test_system_and_stepper);
    RUN(test_scenario_and_sim);
    return check_summary("test_api_args");
}
