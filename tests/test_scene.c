/* test_scene.c — one world per simulation: the scene (contact points, solids, materials) is
 * frozen by mbs_system_finalize before any stepper or controller exists, an add call afterwards
 * is an error that leaves the world as the stepper sized it, and the time has one owner (the step
 * registry: t = t0 + k·dt from an integer count). Public API only. */
#include <math.h>
#include <stdlib.h>
#include <string.h>

#include "check.h"
#include "testmodels.h"

static const char *const FEET[4] = {"FL_FOOT", "FR_FOOT", "HL_FOOT", "HR_FOOT"};
static const char *const JOINTS[12] = {"FL_HAA", "FL_HFE", "FL_KFE", "FR_HAA", "FR_HFE", "FR_KFE",
                                       "HL_HAA", "HL_HFE", "HL_KFE", "HR_HAA", "HR_HFE", "HR_KFE"};
static const double POSTURE[12] = {0.1, 0.8, -1.6, -0.1, 0.8, -1.6, 0.1, -0.8, 1.6, -0.1, -0.8, 1.6};

/* Solo standing on the ground with its four feet described, room for 8 points, not finalized. */
static mbs_system *solo_scene(const mbs_model *m, double q0[19])
{
    mbs_error err;
    mbs_system *s = mbs_system_new(m, 8, &err);
    CHECK(s != NULL, "system: %s", err.msg);
    if (!s) return NULL;
    const double up[3] = {0, 0, 1};
    const mbs_material ground = {1e5, 1e5, 300, 300, 1};
    CHECK(mbs_system_add_plane(s, up, 0, &ground, &err) == MBS_OK, "plane: %s", err.msg);
    for (int f = 0; f < 4; f++) CHECK(mbs_system_add_contact(s, FEET[f], NULL, 0.0191, &err) == f, "foot: %s", err.msg);
    mbs_neutral(m, q0);
    for (int j = 0; j < 12; j++) q0[mbs_joint_idx_q(m, mbs_joint_id(m, JOINTS[j]))] = POSTURE[j];
    q0[2] = 0.235;
    mbs_system_set_state(s, q0, NULL, 0);
    return s;
}

/* A step each scheme is stable at on Solo's stiff feet: the explicit ones need short steps. */
static double scheme_dt(const char *name)
{
    return strcmp(name, "euler") == 0 || strcmp(name, "symplectic_euler") == 0 || strcmp(name, "rk4") == 0 ||
                   strcmp(name, "variational") == 0
               ? 1e-4
               : 1e-3;
}

/* Every add call on a finalized scene fails, names itself, and changes nothing. */
static void check_frozen(mbs_system *s)
{
    mbs_error err;
    const double up[3] = {0, 0, 1}, half[3] = {1, 1, 1}, ctr[3] = {0, 0, -5}, axis[3] = {0, 1, 0};
    const mbs_material mat = {1e5, 1e5, 300, 300, 1};
    int n = mbs_system_ncontacts(s), planes = mbs_system_environment(s)->nplanes;
    CHECK(mbs_system_add_contact(s, "FL_LOWER_LEG", NULL, 0.02, &err) == -1 && strstr(err.msg, "mbs_system_add_contact") &&
              strstr(err.msg, "finalize"), "add_contact after finalize: '%s'", err.msg);
    CHECK(mbs_system_add_rim(s, "FL_LOWER_LEG", NULL, axis, 0.02, &err) == -1 && strstr(err.msg, "mbs_system_add_rim"),
          "add_rim after finalize: '%s'", err.msg);
    CHECK(mbs_system_add_plane(s, up, -1, &mat, &err) != MBS_OK && strstr(err.msg, "mbs_system_add_plane"),
          "add_plane after finalize: '%s'", err.msg);
    CHECK(mbs_system_add_box(s, ctr, NULL, half, &mat, &err) != MBS_OK && strstr(err.msg, "mbs_system_add_box"),
          "add_box after finalize: '%s'", err.msg);
    CHECK(mbs_system_ncontacts(s) == n && mbs_system_environment(s)->nplanes == planes &&
              mbs_system_environment(s)->nboxes == 0, "a refused add changed the scene");
}

/* No stepper or controller is made against a scene still being described; finalize freezes it. */
static void test_finalize_before_steppers(void)
{
    mbs_error err;
    mbs_model *m = mbs_model_from_urdf(tm_path("urdf/solo12.urdf"), NULL, &err);
    CHECK(m != NULL, "solo12: %s", err.msg);
    if (!m) return;
    double q0[19];
    for (int i = 0; i < mbs_stepper_count(); i++) {
        const char *name = mbs_stepper_at(i)->name;
        mbs_system *s = solo_scene(m, q0);
        if (!s) break;
        CHECK(!mbs_system_finalized(s), "a new scene is finalized");
        CHECK(mbs_stepper_new(name, s, NULL, 0, &err) == NULL && strstr(err.msg, "mbs_system_finalize"),
              "%s on a scene not finalized: '%s'", name, err.msg);
        CHECK(mbs_controller_new("pd", s, q0, 0.002, NULL, 0, &err) == NULL && strstr(err.msg, "mbs_system_finalize"),
              "pd on a scene not finalized: '%s'", err.msg);
        CHECK(mbs_system_finalize(s, &err) == MBS_OK && mbs_system_finalized(s), "finalize: %s", err.msg);
        CHECK(mbs_system_finalize(s, &err) == MBS_OK, "a second finalize: %s", err.msg);
        check_frozen(s);
        mbs_stepper *st = mbs_stepper_new(name, s, NULL, 0, &err);
        CHECK(st != NULL, "%s on a finalized scene: %s", name, err.msg);
        mbs_stepper_free(st);
        mbs_system_free(s);
    }
    /* contact points and nothing to touch: no material */
    mbs_system *s = mbs_system_new(m, 1, &err);
    CHECK(mbs_system_add_contact(s, "FL_FOOT", NULL, 0, &err) == 0, "foot: %s", err.msg);
    CHECK(mbs_system_finalize(s, &err) == MBS_ERR_ARG && strstr(err.msg, "FL_FOOT") && strstr(err.msg, "material"),
          "a contact without material: '%s'", err.msg);
    mbs_system_free(s);
    mbs_model_free(m);
}

/* The case: contacts added after the stepper was made. They are refused, and the robot
 * the stepper was made for stands on the ground it was made with (the schemes that crashed or
 * dropped Solo through the floor when the scene could change under them). */
static void test_add_after_stepper_stands(void)
{
    mbs_error err;
    mbs_model *m = mbs_model_from_urdf(tm_path("urdf/solo12.urdf"), NULL, &err);
    CHECK(m != NULL, "solo12: %s", err.msg);
    if (!m) return;
    static const char *const schemes[] = {"expo", "adaptive", "mdp", "nmdp", "rigid"};
    int nq = mbs_model_nq(m), nv = mbs_model_nv(m);
    double q0[19], tau[18];
    for (size_t k = 0; k < sizeof schemes / sizeof *schemes; k++) {
        mbs_system *s = solo_scene(m, q0);
        if (!s) break;
        CHECK(mbs_system_finalize(s, &err) == MBS_OK, "finalize: %s", err.msg);
        mbs_stepper *st = mbs_stepper_new(schemes[k], s, NULL, 0, &err);
        CHECK(st != NULL, "%s: %s", schemes[k], err.msg);
        if (!st) { mbs_system_free(s); continue; }
        static const char *const more[3] = {"FL_LOWER_LEG", "FR_LOWER_LEG", "HL_LOWER_LEG"};
        for (int i = 0; i < 3; i++)
            CHECK(mbs_system_add_contact(s, more[i], NULL, 0.02, &err) == -1, "%s: a contact added after the stepper",
                  schemes[k]);
        int rc = MBS_OK;
        for (int i = 0; i < 500 && rc == MBS_OK; i++) {
            const double *q = mbs_system_q(s), *v = mbs_system_v(s);
            memset(tau, 0, sizeof tau);
            for (int j = 0; j < 12; j++) {
                int id = mbs_joint_id(m, JOINTS[j]), iq = mbs_joint_idx_q(m, id), iv = mbs_joint_idx_v(m, id);
                tau[iv] = 20 * (POSTURE[j] - q[iq]) - 0.5 * v[iv];
            }
            mbs_system_set_tau(s, tau);
            rc = mbs_stepper_step(st, 1e-3, NULL);
        }
        const double *q = mbs_system_q(s);
        CHECK(rc == MBS_OK, "%s: %s", schemes[k], mbs_stepper_last_error(st)->msg);
        CHECK(q[2] > 0.15 && q[2] < 0.3, "%s: the base is at z = %g m after 0.5 s standing", schemes[k], q[2]);
        CHECK(mbs_system_ncontacts(s) == 4, "%s: %d contacts", schemes[k], mbs_system_ncontacts(s));
        (void)nq;
        (void)nv;
        mbs_stepper_free(st);
        mbs_system_free(s);
    }
    mbs_model_free(m);
}

/* One clock: 10⁶ steps of 1 ms through mbs_stepper_step alone end at t = 1000 s, where the sum of
 * the steps (what every scheme did to t) is off by far more than the tolerance; a step of another
 * length and a new state start the count again from where the time is. */
static void test_one_clock(void)
{
    mbs_error err;
    mbs_model *m = tm_random_tree(1, 0, 7);
    mbs_system *s = mbs_system_new(m, 0, &err);
    CHECK(s && mbs_system_finalize(s, &err) == MBS_OK, "system: %s", err.msg);
    mbs_stepper *st = mbs_stepper_new("symplectic_euler", s, NULL, 0, &err);
    CHECK(st != NULL, "stepper: %s", err.msg);
    if (!st) { mbs_system_free(s); mbs_model_free(m); return; }
    double q[8] = {0}, sum = 0;
    mbs_neutral(m, q);
    mbs_system_set_state(s, q, NULL, 0);
    const long n = 1000000;
    int rc = MBS_OK;
    for (long k = 0; k < n && rc == MBS_OK; k++) {
        rc = mbs_stepper_step(st, 1e-3, NULL);
        sum += 1e-3;
    }
    CHECK(rc == MBS_OK, "step: %s", mbs_stepper_last_error(st)->msg);
    CHECK(fabs(mbs_system_time(s) - 1000) <= 1e-12, "t = %.17g s after 10^6 steps of 1 ms", mbs_system_time(s));
    /* the test can fail: summation drifts */
    CHECK(fabs(sum - 1000) > 1e-12, "the summed clock %.17g did not drift: the test above proves nothing", sum);
    /* a new step length counts on from the time reached */
    for (int k = 0; k < 3; k++) mbs_stepper_step(st, 0.25, NULL);
    CHECK(mbs_system_time(s) == 1000.75, "t = %.17g s after 3 steps of 0.25 s from 1000 s", mbs_system_time(s));
    /* set_state sets the time and restarts the count */
    mbs_system_set_state(s, q, NULL, 5);
    for (int k = 0; k < 10; k++) mbs_stepper_step(st, 0.1, NULL);
    CHECK(mbs_system_time(s) == 5 + 10 * 0.1, "t = %.17g s after 10 steps of 0.1 s from 5 s", mbs_system_time(s));
    mbs_stepper_free(st);
    mbs_system_free(s);
    mbs_model_free(m);
}

/* A stepper's state saved and restored: the steps that follow are bitwise the ones that followed
 * the save, for every scheme (warm starts, previous configurations and inner steppers included);
 * bytes of another scheme are refused and change nothing. */
static void test_save_restore(void)
{
    mbs_error err;
    mbs_model *m = mbs_model_from_urdf(tm_path("urdf/solo12.urdf"), NULL, &err);
    CHECK(m != NULL, "solo12: %s", err.msg);
    if (!m) return;
    int nq = mbs_model_nq(m), nv = mbs_model_nv(m);
    double q0[19], tau[18], qa[19], va[18];
    for (int k = 0; k < mbs_stepper_count(); k++) {
        const char *name = mbs_stepper_at(k)->name;
        mbs_system *s = solo_scene(m, q0);
        if (!s) break;
        mbs_system_finalize(s, &err);
        mbs_stepper *st = mbs_stepper_new(name, s, NULL, 0, &err);
        CHECK(st != NULL, "%s: %s", name, err.msg);
        if (!st) { mbs_system_free(s); continue; }
        double dt = scheme_dt(name);
        for (int i = 0; i < 120; i++) {
            const double *q = mbs_system_q(s);
            for (int j = 0; j < nv; j++) tau[j] = 0;
            for (int j = 0; j < 12; j++) {
                int id = mbs_joint_id(m, JOINTS[j]), iq = mbs_joint_idx_q(m, id), iv = mbs_joint_idx_v(m, id);
                tau[iv] = 20 * (POSTURE[j] + 0.2 * sin(0.05 * i + j) - q[iq]) - 0.5 * mbs_system_v(s)[iv];
            }
            mbs_system_set_tau(s, tau);
            if (i == 60) {
                size_t n = mbs_stepper_state_size(st);
                unsigned char *buf = malloc(n), small[8];
                CHECK(buf && mbs_stepper_save(st, buf, n, &err) == MBS_OK, "%s: save: %s", name, err.msg);
                CHECK(mbs_stepper_save(st, small, sizeof small, &err) == MBS_ERR_ARG, "%s: a save into 8 bytes", name);
                double t0 = mbs_system_time(s);
                for (int r = 0; r < 60; r++) mbs_stepper_step(st, dt, NULL);
                memcpy(qa, mbs_system_q(s), (size_t)nq * sizeof(double));
                memcpy(va, mbs_system_v(s), (size_t)nv * sizeof(double));
                double ta = mbs_system_time(s);
                CHECK(mbs_stepper_restore(st, buf, n, &err) == MBS_OK, "%s: restore: %s", name, err.msg);
                CHECK(mbs_system_time(s) == t0, "%s: t = %.17g after the restore, %.17g saved", name, mbs_system_time(s), t0);
                for (int r = 0; r < 60; r++) mbs_stepper_step(st, dt, NULL);
                CHECK(memcmp(qa, mbs_system_q(s), (size_t)nq * sizeof(double)) == 0 &&
                          memcmp(va, mbs_system_v(s), (size_t)nv * sizeof(double)) == 0 && mbs_system_time(s) == ta,
                      "%s: the steps after a restore differ from those after the save", name);
                /* bytes of another scheme: refused, nothing changed */
                const char *other = strcmp(name, "expo") == 0 ? "rk4" : "expo";
                mbs_system *s2 = solo_scene(m, q0);
                mbs_system_finalize(s2, &err);
                mbs_stepper *st2 = mbs_stepper_new(other, s2, NULL, 0, &err);
                size_t n2 = st2 ? mbs_stepper_state_size(st2) : 0;
                unsigned char *buf2 = malloc(n2 ? n2 : 1);
                CHECK(st2 && mbs_stepper_save(st2, buf2, n2, &err) == MBS_OK, "%s: save: %s", other, err.msg);
                CHECK(mbs_stepper_restore(st, buf2, n2, &err) == MBS_ERR_ARG && strstr(err.msg, "nothing changed"),
                      "%s: restored the state of %s: '%s'", name, other, err.msg);
                CHECK(memcmp(qa, mbs_system_q(s), (size_t)nq * sizeof(double)) == 0 && mbs_system_time(s) == ta,
                      "%s: a refused restore changed the state", name);
                free(buf2);
                mbs_stepper_free(st2);
                mbs_system_free(s2);
                free(buf);
                break;
            }
            mbs_stepper_step(st, dt, NULL);
        }
        mbs_stepper_free(st);
        mbs_system_free(s);
    }
    mbs_model_free(m);
}


/* A contact point switched off (mbs_system_set_contact_off, state) meets nothing, for every
 * stepper: Solo standing, its front-left foot switched off, lets go of the ground at once while the
 * other three hold; a clone and the stepper's saved state carry the switch; switched back on, the
 * foot touches again. */
static void test_contact_off(void)
{
    mbs_error err;
    mbs_model *m = mbs_model_from_urdf(tm_path("urdf/solo12.urdf"), NULL, &err);
    CHECK(m != NULL, "solo12: %s", err.msg);
    if (!m) return;
    double q0[19];
    for (int k = 0; k < mbs_stepper_count(); k++) {
        const char *name = mbs_stepper_at(k)->name;
        mbs_system *s = solo_scene(m, q0);
        if (!s) break;
        mbs_system_finalize(s, &err);
        mbs_stepper *st = mbs_stepper_new(name, s, NULL, 0, &err);
        CHECK(st != NULL, "%s: %s", name, err.msg);
        if (!st) { mbs_system_free(s); continue; }
        double dt = scheme_dt(name);
        tm_solo_hold(m, s, 20, 0.5);
        const int settle = (int)(0.1 / dt), brief = (int)(0.01 / dt);   /* steps in 0.1 s, 10 ms */
        for (int i = 0; i < settle; i++) mbs_stepper_step(st, dt, NULL);
        mbs_contact_info c;
        mbs_system_contact(s, 0, &c);
        CHECK(c.active && !c.off && c.force[2] > 0.1, "%s: the foot does not stand before (active %d, fz %g N)", name,
              c.active, c.force[2]);
        CHECK(mbs_system_set_contact_off(s, 0, 1) == MBS_OK && mbs_system_set_contact_off(s, 4, 1) == MBS_ERR_ARG,
              "%s: set_contact_off's return", name);
        for (int i = 0; i < brief; i++) mbs_stepper_step(st, dt, NULL);
        mbs_system_contact(s, 0, &c);
        int others = 0;
        for (int f = 1; f < 4; f++) {
            mbs_contact_info o;
            mbs_system_contact(s, f, &o);
            others += o.active;
        }
        CHECK(c.off && !c.active && c.force[0] == 0 && c.force[1] == 0 && c.force[2] == 0 && others == 3,
              "%s: switched off, the foot still acts (active %d, fz %g N; %d others standing)", name, c.active, c.force[2], others);
        /* a clone, and the stepper's saved state, carry the switch */
        mbs_system *cl = mbs_system_clone(s, &err);
        mbs_contact_info cc;
        CHECK(cl && mbs_system_contact(cl, 0, &cc) == MBS_OK && cc.off, "%s: the clone lost the switch", name);
        mbs_system_free(cl);
        size_t n = mbs_stepper_state_size(st);
        unsigned char *buf = malloc(n);
        CHECK(buf && mbs_stepper_save(st, buf, n, &err) == MBS_OK, "%s: save: %s", name, err.msg);
        mbs_system_set_contact_off(s, 0, 0);
        CHECK(buf && mbs_stepper_restore(st, buf, n, &err) == MBS_OK && mbs_system_contact(s, 0, &c) == MBS_OK && c.off,
              "%s: the restored state lost the switch", name);
        free(buf);
        /* back on: the foot, which the base leaning onto it lowers, touches again within 0.1 s */
        mbs_system_set_contact_off(s, 0, 0);
        int touched = 0;
        for (int i = 0; i < settle && !touched; i++) {
            mbs_stepper_step(st, dt, NULL);
            mbs_system_contact(s, 0, &c);
            touched = c.active;
        }
        CHECK(!c.off && touched, "%s: switched back on, the foot does not touch", name);
        mbs_stepper_free(st);
        mbs_system_free(s);
    }
    mbs_model_free(m);
}

int main(void)
{
    RUN(test_finalize_before_steppers);
    RUN(test_add_after_stepper_stands);
    RUN(test_one_clock);
    RUN(test_save_restore);
    RUN(test_contact_off);
    return check_summary("scene");
}
