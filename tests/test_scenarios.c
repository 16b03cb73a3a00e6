/* test_scenarios.c — scenario files, the simulation loop and the Solo scenarios:
 *   - every stepper of the registry runs every Solo scenario for its full duration at a small
 *     step without diverging, and the motion is the one the scenario asks for (the squat
 *     squats, the jump leaves the ground, the trot travels ≥ 0.5 m with the base level);
 *   - every kind of bad scenario file gives its message, naming the file, line and key;
 *   - --set overrides, the keys every scenario has, the CSV (header, rows, temp + rename,
 *     nothing left by an interrupted run; "-" is stdout; a FIFO, a character device and a symlink
 *     written through; a directory or an unwritable path refused before the run), the summary's keys;
 *   - divergence (the stepper's error naming the joint) and leaving the box (status left_box,
 *     not a divergence; no box when the scenario sets none);
 *   - touchdowns (recounted from the contacts' public state), the figures of sub-stepping schemes,
 *     [model] gravity, a planar root (floating = 2), the initial velocity ([model] base_velocity
 *     in world axes, v.JOINT), rims ([contact] rim_axis) and [stepper] dissipation;
 *   - the leg inverse kinematics against the model's own forward kinematics;
 *   - every shipped scenario (each .ini in scenarios/) loads its model and itself without a warning;
 *   - the replay page's frame budget: the stride between frames over short and very long runs. */
#include <dirent.h>
#include <fcntl.h>
#include <limits.h>
#include <math.h>
#include <signal.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/stat.h>
#include <sys/wait.h>
#include <unistd.h>

#include "check.h"
#include "testmodels.h"
#include "mbs.h"
#include "../src/control/control_internal.h" /* the leg IK is internal to the control layer */
#include "../src/sim/sim_internal.h"         /* white-box: the scenario's fields */
#include "../src/sim/replay.h"               /* white-box: the replay's frame stride */

#define SCEN(name) MBS_SOURCE_DIR "/scenarios/" name
#define BAD(name) MBS_SOURCE_DIR "/tests/data/scenarios_bad/" name

static const char *const SOLO[] = {"solo_squat", "solo_jump", "solo_trot"};

/* Under AddressSanitizer (make test SAN=1) a step costs several times more, and the full runs
 * of every stepper take close to a minute; there the runs stop after 1.2 s, which still takes
 * every controller through its phases (the squat's descent, the jump's first push, landing at
 * about 1.1 s, the trot's first steps), and the checks of the motion, which need the whole
 * run, are left to the normal build. */
#if defined(__SANITIZE_ADDRESS__)
#define SANITIZED 1
#elif defined(__has_feature)
#if __has_feature(address_sanitizer)
#define SANITIZED 1
#endif
#endif
#ifndef SANITIZED
#define SANITIZED 0
#endif

/* The step each stepper runs the Solo scenarios at. Explicit schemes need about 0.1 ms with
 * K = 1e5 N/m (the paper's table 2: 0.08 to 0.16 ms for explicit Euler), so they run at
 * 1/16 ms, which divides every controller period; the schemes made for stiff contacts run at
 * larger steps: expo at the step its scenario file sets, implicit Euler at 2 ms at most (the
 * paper finds it stable up to 20, 5 and 2 ms). A scheme this table does not know runs at the
 * explicit step: slow, but a fair test of not diverging. */
static double test_dt(const char *stepper, const mbs_scenario *sc)
{
    if (strcmp(stepper, "expo") == 0) return sc->dt;
    if (strcmp(stepper, "implicit_euler") == 0 || strcmp(stepper, "nmdp") == 0 || strcmp(stepper, "mdp") == 0)
        return fmin(sc->controller_dt, 0.002);
    return 1.0 / 16000;
}

static mbs_scenario *load(const char *path, const char **sets, int nsets, mbs_error *err)
{
    mbs_scenario *sc = mbs_scenario_load(path, sets, nsets, err);
    CHECK(sc != NULL, "%s: %s", path, err->msg);
    if (sc) mbs_error_free(err);   /* the warnings of a scenario that loads are not what these tests read */
    return sc;
}

/* Runs a scenario to the end; returns its summary. */
static int run(mbs_scenario *sc, const mbs_sim_run_options *opt, mbs_sim_summary *sum, mbs_error *err)
{
    mbs_sim *sim = mbs_sim_new(sc, err);
    CHECK(sim != NULL, "%s: %s", sc->path, err->msg);
    if (!sim) return -1;
    int rc = mbs_sim_run(sim, opt, sum, err);
    mbs_sim_free(sim);
    return rc;
}

/* ---- every stepper, every Solo scenario ---- */

static void test_every_stepper_runs_every_solo_scenario(void)
{
    for (int s = 0; s < mbs_stepper_count(); s++) {
        const char *name = mbs_stepper_at(s)->name;
        for (int k = 0; k < 3; k++) {
            char path[512], set_name[64], set_dt[64];
            snprintf(path, sizeof path, MBS_SOURCE_DIR "/scenarios/%s.ini", SOLO[k]);
            mbs_error err;
            mbs_scenario *probe = load(path, NULL, 0, &err);
            if (!probe) continue;
            snprintf(set_name, sizeof set_name, "stepper.name=%s", name);
            snprintf(set_dt, sizeof set_dt, "stepper.dt=%.17g", test_dt(name, probe));
            mbs_scenario_free(probe);
            const char *sets[] = {set_name, set_dt, "run.duration=1.2"};
            mbs_scenario *sc = load(path, sets, SANITIZED ? 3 : 2, &err);
            if (!sc) continue;
            mbs_sim_summary sum;
            int rc = run(sc, NULL, &sum, &err);
            const char *what = SOLO[k];
            CHECK(rc == MBS_OK, "%s with %s: %s", what, name, err.msg);
            CHECK(!sum.diverged, "%s with %s at dt = %g: diverged at t = %g (%s)", what, name, sc->dt, sum.diverged_t,
                  sum.reason);
            CHECK(fabs(sum.sim_time - sc->duration) < 1e-9, "%s with %s: ran %g s of %g", what, name, sum.sim_time,
                  sc->duration);
            CHECK(sum.steps == (long)floor(sc->duration / sc->dt + 0.5), "%s with %s: %ld steps", what, name, sum.steps);
            /* the motion each scenario is for; bounds wide enough for every scheme's accuracy */
            if (SANITIZED) {
                /* shortened run: the motion is checked by the normal build */
            } else if (k == 0) {
                CHECK(sum.base_z_min < 0.18 && sum.base_z_max > 0.23 && sum.base_z_max < 0.245,
                      "squat with %s: base z in [%g, %g], expected down to 0.175 and back to 0.235", name, sum.base_z_min,
                      sum.base_z_max);
                CHECK(sum.airborne_s == 0 && sum.max_tilt_deg < 1 && sum.distance_m < 0.01,
                      "squat with %s: airborne %g s, tilt %g deg, drift %g m", name, sum.airborne_s, sum.max_tilt_deg,
                      sum.distance_m);
            } else if (k == 1) {
                CHECK(sum.airborne_s > 0.3 && sum.base_z_max > 0.27, "jump with %s: airborne %g s, top %g m", name,
                      sum.airborne_s, sum.base_z_max);
                CHECK(sum.max_tilt_deg < 10 && sum.distance_m < 0.05, "jump with %s: tilt %g deg, drift %g m", name,
                      sum.max_tilt_deg, sum.distance_m);
            } else {
                CHECK(sum.base_final[0] >= 0.5, "trot with %s: %g m forward in %g s, expected >= 0.5", name,
                      sum.base_final[0], sum.sim_time);
                CHECK(sum.base_z_min > 0.2 && sum.base_z_max < 0.27 && sum.max_tilt_deg < 20,
                      "trot with %s: base z in [%g, %g], tilt up to %g deg", name, sum.base_z_min, sum.base_z_max,
                      sum.max_tilt_deg);
            }
            mbs_scenario_free(sc);
        }
    }
}

/* ---- bad scenario files ---- */

/* Line of the first line of a file containing `token`. */
static int line_of(const char *path, const char *token)
{
    FILE *f = fopen(path, "r");
    if (!f) return -1;
    char buf[512];
    int n = 0, found = -1;
    while (fgets(buf, sizeof buf, f)) {
        n++;
        if (buf[0] != ';' && strstr(buf, token)) { found = n; break; }
    }
    fclose(f);
    return found;
}

/* Loading (and, for a scheme option, building the sim) must fail with a message that names
 * the file, the line holding `token`, and holds `frag` and `key` (when not NULL). */
static void expect_bad(const char *file, const char *token, const char *key, const char *frag)
{
    char path[512], where[600];
    snprintf(path, sizeof path, BAD("%s"), file);
    mbs_error err;
    mbs_scenario *sc = mbs_scenario_load(path, NULL, 0, &err);
    mbs_sim *sim = NULL;
    if (sc) {
        sim = mbs_sim_new(sc, &err);
        CHECK(sim == NULL, "%s: loaded and built although it is bad", file);
    }
    CHECK(err.code != MBS_OK, "%s: no error code", file);
    int line = line_of(path, token);
    snprintf(where, sizeof where, "%s:%d:", path, line);
    CHECK(line > 0 && strncmp(err.msg, where, strlen(where)) == 0, "%s: message '%s' does not start with '%s'", file,
          err.msg, where);
    CHECK(!key || strstr(err.msg, key), "%s: message '%s' lacks the key '%s'", file, err.msg, key);
    CHECK(strstr(err.msg, frag) != NULL, "%s: message '%s' lacks '%s'", file, err.msg, frag);
    mbs_sim_free(sim);
    mbs_scenario_free(sc);
}

static void test_bad_scenarios(void)
{
    mbs_error err;
    mbs_scenario *sc = load(BAD("base.ini"), NULL, 0, &err);   /* the one the bad files spoil */
    mbs_sim *sim = sc ? mbs_sim_new(sc, &err) : NULL;
    CHECK(sim != NULL, "base.ini: %s", err.msg);
    mbs_sim_free(sim);
    mbs_scenario_free(sc);

    expect_bad("unknown_section.ini", "[rn]", NULL, "unknown section [rn]");
    expect_bad("unknown_key.ini", "raduis", "[contact] raduis", "unknown key 'raduis'");
    expect_bad("malformed_number.ini", "1e-3x", "[stepper] dt", "malformed number '1e-3x'");
    expect_bad("out_of_range.ini", "radius", "[contact] radius", "out of range: -0.01");
    expect_bad("missing_urdf.ini", "solo13", "[model] urdf", "cannot open");
    expect_bad("missing_frame.ini", "FR_TOE", "[contact] frames", "no frame 'FR_TOE'");
    expect_bad("unknown_stepper.ini", "eulr", "[stepper] name", "unknown stepper 'eulr'");
    expect_bad("unknown_joint.ini", "FL_KNEE", "[model] q.FL_KNEE", "no joint 'FL_KNEE'");
    expect_bad("duplicate_key.ini", "duration = 0.03", "[run] duration", "given twice");
    expect_bad("syntax_error.ini", "friction 1", NULL, "syntax error");
    expect_bad("dt_not_dividing.ini", "dt = 0.003", "[stepper] dt", "does not divide");
    expect_bad("scheme_option.ini", "max_mat_mult", "[euler] max_mat_mult", "max_mat_mult");
    expect_bad("bad_controller.ini", "fly", "[controller] type", "'fly' is not one of");
    /* [contact] points: one "FRAME x y z" per line, each line its own entry */
    expect_bad("points_missing_frame.ini", "FR_TOE", "[contact] points", "no frame 'FR_TOE'");
    expect_bad("points_count.ini", "FR_FOOT 0.01 0", "[contact] points", "expected a frame name and 3 numbers, got 2");
    expect_bad("points_no_name.ini", "points = 0.01", "[contact] points", "expected a frame name before the numbers");
    expect_bad("points_malformed.ini", "0x", "[contact] points", "malformed number '0x'");
    /* the walk's feet */
    expect_bad("walk_feet.ini", "feet = ", "[controller] feet", "expected two foot frames, got 1");
    expect_bad("walk_foot_no_contact.ini", "feet = ", "[controller] feet", "foot 'HL_FOOT' has no contact point");
    /* step counts beyond what the loop's int and long hold (UB before the check existed) */
    expect_bad("too_many_steps.ini", "dt = 1e-10", "[stepper] dt", "1e+11 steps per controller period");
    expect_bad("too_many_periods.ini", "duration = 1", "[run] duration", "1e+300 controller periods");

    /* --set: its syntax, and its values checked like the file's, named by the override */
    static const struct { const char *set, *frag; } sets[] = {
        {"stepper.dt", "bad --set 'stepper.dt': expected section.key=value"},
        {"dt=0.001", "bad --set 'dt=0.001'"},
        {".dt=0.001", "bad --set '.dt=0.001'"},
        {"stepper.=0.001", "bad --set 'stepper.=0.001'"},
        {"stepper.dt=fast", "--set stepper.dt=fast: malformed number 'fast'"},
        {"stepper.dt=-1", "--set stepper.dt=-1: out of range"},
        {"stepper.name=rk5", "--set stepper.name=rk5: unknown stepper 'rk5'"},
        {"stepper.dtt=0.001", "--set stepper.dtt=0.001: unknown key 'dtt'"},
        {"steper.dt=0.001", "--set steper.dt=0.001: unknown section [steper]"},
        {"contact.friction=-0.5", "--set contact.friction=-0.5: out of range"},
        {"model.floating=3", "--set model.floating=3: out of range: 3"},
        {"model.gravity=0 -9.81", "--set model.gravity=0 -9.81: expected 3 numbers"},
        {"stepper.dissipation=-0.1", "--set stepper.dissipation=-0.1: out of range"},
    };
    for (size_t i = 0; i < sizeof sets / sizeof *sets; i++) {
        const char *one[] = {sets[i].set};
        sc = mbs_scenario_load(BAD("base.ini"), one, 1, &err);
        CHECK(sc == NULL, "--set %s: accepted", sets[i].set);
        CHECK(strstr(err.msg, sets[i].frag) != NULL, "--set %s: message '%s' lacks '%s'", sets[i].set, err.msg,
              sets[i].frag);
        CHECK(strncmp(err.msg, BAD("base.ini"), strlen(BAD("base.ini"))) == 0, "--set %s: message '%s' lacks the file",
              sets[i].set, err.msg);
        mbs_scenario_free(sc);
    }
    /* a scheme option given by --set is refused by the scheme's table when the scenario loads,
     * named by the override */
    const char *opt[] = {"euler.max_mat_mult=2"};
    sc = mbs_scenario_load(BAD("base.ini"), opt, 1, &err);
    CHECK(sc == NULL && strstr(err.msg, "--set euler.max_mat_mult=2: ") && strstr(err.msg, "'euler' has no option"),
          "scheme option by --set: '%s'", err.msg);
    mbs_scenario_free(sc);
    /* a missing scenario file */
    sc = mbs_scenario_load(BAD("no_such_file.ini"), NULL, 0, &err);
    CHECK(sc == NULL && err.code == MBS_ERR_IO && strstr(err.msg, "no_such_file.ini"), "missing file: '%s'", err.msg);
    mbs_scenario_free(sc);
    /* a directory, as a scenario and as its model */
    sc = mbs_scenario_load(MBS_SOURCE_DIR "/scenarios", NULL, 0, &err);
    CHECK(sc == NULL && err.code == MBS_ERR_IO && strstr(err.msg, "/scenarios: it is a directory"), "directory: '%s'",
          err.msg);
    const char *urdf_dir[] = {"model.urdf=" MBS_SOURCE_DIR "/urdf"};
    sc = mbs_scenario_load(MBS_SOURCE_DIR "/scenarios/solo_squat.ini", urdf_dir, 1, &err);
    CHECK(sc == NULL && strstr(err.msg, "/urdf: it is a directory, not a URDF file"), "URDF directory: '%s'", err.msg);
    mbs_scenario_free(sc);
}

/* ---- romeo_walk ---- */

/* World x of each foot frame of Romeo at configuration q. */
static void romeo_feet_x(const mbs_model *m, const double *q, double x[2])
{
    static const char *const feet[2] = {"l_sole", "r_sole"};
    mbs_data *d = mbs_data_new(m);
    CHECK(d != NULL, "mbs_data_new");
    if (!d) return;
    mbs_forward_kinematics(m, d, q, NULL, NULL);
    for (int f = 0; f < 2; f++) {
        double R[9], p[3];
        mbs_frame_placement(m, d, mbs_frame_id(m, feet[f]), R, p);
        x[f] = p[0];
    }
    mbs_data_free(d);
}

/* The Romeo scenario: eight sole corners from [contact] points. The robot stands in equilibrium
 * (held by the PD: no sinking beyond m g / (8 K), no tilt). */
static void test_romeo_stands(void)
{
    mbs_error err;
    mbs_scenario *sc = load(SCEN("romeo_walk_quasistatic.ini"), NULL, 0, &err);
    if (!sc) return;
    CHECK(sc->ncontacts == 8, "romeo_walk: %d contact points", sc->ncontacts);
    CHECK(strcmp(sc->contacts[5].frame, "r_sole") == 0 && sc->contacts[5].offset[1] == -0.05,
          "romeo_walk: point 6 is %s %g", sc->contacts[5].frame, sc->contacts[5].offset[1]);
    mbs_scenario_free(sc);

    const char *stand[] = {"controller.type=pd", "run.duration=1"};
    sc = load(SCEN("romeo_walk_quasistatic.ini"), stand, 2, &err);
    mbs_sim_summary sum;
    if (sc && run(sc, NULL, &sum, &err) == MBS_OK) {
        CHECK(!sum.diverged, "romeo standing: %s", sum.reason);
        CHECK(sum.max_tilt_deg < 0.5 && sum.max_penetration < 2e-3, "romeo standing: tilt %g deg, penetration %g",
              sum.max_tilt_deg, sum.max_penetration);
    }
    mbs_scenario_free(sc);
}

/* scenarios/romeo_walk_quasistatic.ini as shipped (expo): two steps without falling; each foot ends ahead
 * of where it started by at least half the planned step, and so does the base. */
static void test_romeo_walks(void)
{
    mbs_error err;
    mbs_scenario *sc = load(SCEN("romeo_walk_quasistatic.ini"), NULL, 0, &err);
    if (!sc) return;
    mbs_sim *sim = mbs_sim_new(sc, &err);
    CHECK(sim != NULL, "romeo_walk: %s", err.msg);
    mbs_sim_summary sum;
    if (sim && mbs_sim_run(sim, NULL, &sum, &err) == MBS_OK) {
        const mbs_system *sys = mbs_sim_system(sim);
        double x0[2] = {0, 0}, x1[2] = {0, 0}, half = 0.5 * 0.1;   /* the scenario's step_length */
        romeo_feet_x(sc->model, sc->q0, x0);
        romeo_feet_x(sc->model, sys->q, x1);
        CHECK(!sum.diverged, "romeo_walk: %s", sum.reason);
        CHECK(x1[0] - x0[0] > half && x1[1] - x0[1] > half, "romeo_walk: feet moved %g, %g m (step %g)", x1[0] - x0[0],
              x1[1] - x0[1], 2 * half);
        CHECK(sys->q[0] - sc->q0[0] > half, "romeo_walk: base moved %g m", sys->q[0] - sc->q0[0]);
        CHECK(sum.max_tilt_deg < 5, "romeo_walk: tilt %g deg", sum.max_tilt_deg);
    }
    mbs_sim_free(sim);
    mbs_scenario_free(sc);
}

/* A walk whose plan would not fit in memory is refused with the keys that make it (found by the
 * scenario fuzzer: settle = 1e5 s asked for 9 GB). */
static void test_walk_too_long(void)
{
    mbs_error err;
    const char *sets[] = {"controller.settle=1e5"};
    mbs_scenario *sc = load(SCEN("romeo_walk.ini"), sets, 1, &err);
    if (!sc) return;
    mbs_sim *sim = mbs_sim_new(sc, &err);
    CHECK(!sim && strstr(err.msg, "[controller]") && strstr(err.msg, "settle + steps") && strstr(err.msg, "at most 3600 s"),
          "a walk of 10^5 s: '%s'", sim ? "(accepted)" : err.msg);
    mbs_sim_free(sim);
    mbs_scenario_free(sc);
}

/* ---- overrides and the keys of every scenario ---- */

static void test_overrides(void)
{
    static const char *const keys[][2] = {{"stepper", "name"}, {"stepper", "dt"}, {"controller", "dt"},
                                          {"contact", "stiffness"}, {"contact", "damping"}, {"contact", "friction"},
                                          {"run", "duration"}};
    mbs_error err;
    for (int k = 0; k < 3; k++) {
        char path[512];
        snprintf(path, sizeof path, MBS_SOURCE_DIR "/scenarios/%s.ini", SOLO[k]);
        mbs_scenario *sc = load(path, NULL, 0, &err);
        if (!sc) continue;
        for (int i = 0; i < 7; i++)
            CHECK(mbs_scenario_line(sc, keys[i][0], keys[i][1]) > 0, "%s does not set [%s] %s", SOLO[k], keys[i][0],
                  keys[i][1]);
        /* the paper's defaults, and expo */
        CHECK(sc->material.k_normal == 1e5 && sc->material.k_tangent == 1e5 && sc->material.b_normal == 300 &&
              sc->material.b_tangent == 300 && sc->material.mu == 1, "%s: contact is not the paper's", SOLO[k]);
        CHECK(strcmp(sc->stepper, "expo") == 0 && sc->ncontacts == 4, "%s: stepper %s, %d contacts", SOLO[k],
              sc->stepper, sc->ncontacts);
        mbs_scenario_free(sc);
        const char *sets[] = {"stepper.name=euler", "stepper.dt=1e-4", "controller.dt=0.004", "contact.stiffness=2e5",
                              "contact.damping=100", "contact.friction=0.5", "run.duration=0.5", "model.q.FL_HFE=0.7",
                              "contact.stiffness_tangent=3e4"};
        sc = load(path, sets, 9, &err);
        if (!sc) continue;
        CHECK(strcmp(sc->stepper, "euler") == 0 && sc->dt == 1e-4 && sc->controller_dt == 0.004 && sc->duration == 0.5,
              "%s: stepper/time overrides not applied", SOLO[k]);
        CHECK(sc->material.k_normal == 2e5 && sc->material.b_normal == 100 && sc->material.mu == 0.5 &&
              sc->material.k_tangent == 3e4 && sc->material.b_tangent == 100 && sc->env.planes[0].material.k_normal == 2e5,
              "%s: contact overrides not applied", SOLO[k]);
        int j = mbs_joint_id(sc->model, "FL_HFE");
        CHECK(sc->q0[mbs_joint_idx_q(sc->model, j)] == 0.7, "%s: q.FL_HFE override not applied", SOLO[k]);
        CHECK(mbs_scenario_line(sc, "stepper", "dt") == 0 && mbs_scenario_line(sc, "contact", "stiffness_tangent") == 0,
              "%s: overrides should be at line 0", SOLO[k]);
        char w[1200];
        mbs_scenario_where(sc, "stepper", "dt", w, sizeof w);
        CHECK(strstr(w, "--set stepper.dt=1e-4") != NULL, "where: %s", w);
        mbs_scenario_free(sc);
    }
    /* a controller key the type does not use is a warning, not an error */
    const char *pd[] = {"controller.type=pd"};
    mbs_scenario *sc = mbs_scenario_load(SCEN("solo_trot.ini"), pd, 1, &err);
    CHECK(sc && err.nwarnings > 0 && strstr(err.warnings, "not used by controller type 'pd'"), "warnings: %s",
          err.warnings);
    mbs_scenario_free(sc);
    mbs_error_free(&err);
}

/* ---- the CSV and the summary ---- */

typedef struct csv_probe {
    const char *out, *tmp;
    int calls, out_seen, tmp_missing, stop_at;
} csv_probe;

/* While the run goes, the requested file must not exist and the temporary one must. */
static int probe(void *user, double t, double duration)
{
    csv_probe *p = user;
    (void)t; (void)duration;
    p->calls++;
    if (access(p->out, F_OK) == 0) p->out_seen++;
    if (p->calls > 1 && access(p->tmp, F_OK) != 0) p->tmp_missing++;
    return p->stop_at && p->calls >= p->stop_at;
}

/* Several contact points on one frame get numbered columns (l_sole_0_fz_N ... l_sole_3_fz_N). */
static void test_csv_numbered_points(void)
{
    char out[256];
    snprintf(out, sizeof out, "/tmp/mbs_test_points_%d.csv", (int)getpid());
    mbs_error err;
    const char *sets[] = {"controller.type=pd", "run.duration=0.01"};
    mbs_scenario *sc = load(SCEN("romeo_walk_quasistatic.ini"), sets, 2, &err);
    if (!sc) return;
    mbs_sim_run_options opt = {.csv = out};
    mbs_sim_summary sum;
    CHECK(run(sc, &opt, &sum, &err) == MBS_OK, "romeo csv: %s", err.msg);
    FILE *f = fopen(out, "r");
    static char line[65536];
    CHECK(f && fgets(line, sizeof line, f), "no romeo CSV header");
    if (f) fclose(f);
    CHECK(strstr(line, ",l_sole_0_fx_N,l_sole_0_fy_N,l_sole_0_fz_N,l_sole_0_active,l_sole_1_fx_N,") &&
              strstr(line, ",r_sole_3_fz_N,r_sole_3_active") && !strstr(line, ",l_sole_fz_N,"),
          "romeo CSV contact columns not numbered");
    remove(out);
    mbs_scenario_free(sc);
}

static void test_csv_and_summary(void)
{
    char out[256], tmp[300];
    snprintf(out, sizeof out, "/tmp/mbs_test_scenarios_%d.csv", (int)getpid());
    snprintf(tmp, sizeof tmp, "%s.tmp", out);
    remove(out);
    remove(tmp);
    mbs_error err;
    const char *sets[] = {"stepper.name=euler", "stepper.dt=6.25e-5", "run.duration=0.1", "output.every=5"};
    mbs_scenario *sc = load(SCEN("solo_trot.ini"), sets, 4, &err);
    if (!sc) return;
    csv_probe p = {out, tmp, 0, 0, 0, 0};
    mbs_sim_run_options opt = {.csv = out, .progress = probe, .user = &p};
    mbs_sim_summary sum;
    int rc = run(sc, &opt, &sum, &err);
    CHECK(rc == MBS_OK && !sum.diverged, "run: %s %s", err.msg, sum.reason);
    CHECK(p.calls == 50, "progress called %d times, expected once per controller period (50)", p.calls);
    CHECK(p.out_seen == 0, "the CSV existed under its name during the run");
    CHECK(p.tmp_missing == 0, "the temporary CSV was missing during the run");
    CHECK(access(tmp, F_OK) != 0, "the temporary CSV is left after the run");
    FILE *f = fopen(out, "r");
    CHECK(f != NULL, "no CSV after the run");
    if (f) {
        static char line[65536];
        int rows = 0, cols = 0;
        if (fgets(line, sizeof line, f)) {
            for (char *c = line; *c; c++) cols += *c == ',';
            cols++;
            CHECK(strncmp(line, "t_s,q_root_joint_x_m,q_root_joint_y_m,q_root_joint_z_m,q_root_joint_qx,", 71) == 0, "header: %.80s",
                  line);
            CHECK(strstr(line, ",v_FL_HAA_rad_s,") && strstr(line, ",tau_HR_KFE_Nm,") &&
                      strstr(line, ",FL_FOOT_fz_N,FL_FOOT_active") && !strstr(line, "tau_root_joint"),
                  "header lacks columns, or has the unactuated root's torques");
        }
        /* t, q (19), v (18), tau (12: not the free flyer's), 4 contacts x 4 */
        CHECK(cols == 1 + 19 + 18 + 12 + 16, "%d columns", cols);
        double t_last = -1;
        while (fgets(line, sizeof line, f)) {
            int c = 1;
            for (char *s = line; *s; s++) c += *s == ',';
            CHECK(c == cols, "row %d has %d columns", rows, c);
            t_last = atof(line);
            rows++;
        }
        /* every 5th controller period of 50, and the end */
        CHECK(rows == 11, "%d rows, expected 11", rows);
        CHECK(fabs(t_last - 0.1) < 1e-9, "last row at t = %g", t_last);
        fclose(f);
    }
    remove(out);
    mbs_scenario_free(sc);

    /* an interrupted run keeps its CSV, complete up to the period it stopped at, and its summary */
    sc = load(SCEN("solo_trot.ini"), sets, 4, &err);
    if (!sc) return;
    csv_probe q = {out, tmp, 0, 0, 0, 10};
    mbs_sim_run_options opt2 = {.csv = out, .progress = probe, .user = &q};
    rc = run(sc, &opt2, &sum, &err);
    CHECK(rc == MBS_ERR_INTERRUPTED && strstr(err.msg, "interrupted"), "interrupted run: rc %d, '%s'", rc, err.msg);
    CHECK(sum.interrupted && fabs(sum.sim_time - sum.diverged_t) < 1e-12 && sum.steps > 0, "interrupted run: summary %d at %g",
          sum.interrupted, sum.diverged_t);
    char text[4096];
    mbs_sim_summary_format(&sum, text, sizeof text);
    CHECK(strstr(text, "status: interrupted\nstatus_detail: at t = ") != NULL, "interrupted run: no status line in\n%s", text);
    f = fopen(out, "r");
    int kept = 0;
    double t_end = -1;
    static char row[65536];
    while (f && fgets(row, sizeof row, f)) {
        if (kept++) t_end = atof(row);
    }
    if (f) fclose(f);
    CHECK(access(tmp, F_OK) != 0 && kept > 1 && fabs(t_end - sum.sim_time) < 1e-9,
          "an interrupted run's CSV: %d lines, last row at t = %g, stopped at %g", kept, t_end, sum.sim_time);
    remove(out);
    mbs_scenario_free(sc);

    /* a CSV that cannot be written is an error, before the run, naming the path as given */
    sc = load(SCEN("solo_trot.ini"), sets, 4, &err);
    if (!sc) return;
    csv_probe r = {out, tmp, 0, 0, 0, 0};
    mbs_sim_run_options opt3 = {.csv = "/nonexistent_dir/x.csv", .progress = probe, .user = &r};
    mbs_sim_summary sum3;
    rc = run(sc, &opt3, &sum3, &err);
    CHECK(rc == MBS_ERR_IO && strstr(err.msg, "'/nonexistent_dir/x.csv'") && !strstr(err.msg, ".tmp") && r.calls == 0,
          "unwritable CSV: rc %d '%s', %d periods run", rc, err.msg, r.calls);
    mbs_scenario_free(sc);

    /* the summary's keys, one "key: value" per line */
    char buf[4096];
    int n = mbs_sim_summary_format(&sum, buf, sizeof buf);
    CHECK(n > 0 && n < (int)sizeof buf, "summary length %d", n);
    static const char *const must[] = {"model: ", "stepper: ", "dt_s: ", "controller_dt_s: ", "sim_time_s: ", "wall_time_s: ",
                                       "steps: ", "us_per_step: ", "realtime_factor: ", "max_penetration_m: ",
                                       "max_contact_force_N: ", "base_final_x_m: ", "base_final_yaw_deg: ", "distance_m: ",
                                       "energy_initial_J: ", "energy_final_J: ", "status: "};
    for (size_t i = 0; i < sizeof must / sizeof *must; i++) {
        char key[64];
        snprintf(key, sizeof key, "\n%s", must[i]);
        CHECK(strncmp(buf, must[i], strlen(must[i])) == 0 || strstr(buf, key), "summary lacks '%s'", must[i]);
    }
    mbs_sim_summary d = sum;
    d.diverged = 1;
    d.diverged_t = 0.25;
    snprintf(d.reason, sizeof d.reason, "v[3] is not finite");
    mbs_sim_summary_format(&d, buf, sizeof buf);
    CHECK(strstr(buf, "\nstatus: diverged\nstatus_detail: at t = 0.25 (v[3] is not finite)\n"), "diverged status: %s", buf);
    d.diverged = 0;
    d.left_box = 1;
    snprintf(d.reason, sizeof d.reason, "base x = 10.01 left [-10, 10]");
    mbs_sim_summary_format(&d, buf, sizeof buf);
    CHECK(strstr(buf, "\nstatus: left_box\nstatus_detail: at t = 0.25 (base x = 10.01 left [-10, 10])\n") && !strstr(buf, "diverged"),
          "left_box status: %s", buf);
    /* a small buffer is not overrun, and the length needed is returned */
    char small[16];
    int need = mbs_sim_summary_format(&sum, small, sizeof small);
    CHECK(need == n && strlen(small) == sizeof small - 1, "truncated summary: %d vs %d", need, n);
}

/* A run that blows up stops with the reason: explicit Euler at 2 ms on the trot. */
static void test_divergence_detected(void)
{
    mbs_error err;
    const char *sets[] = {"stepper.name=euler", "stepper.dt=0.002", "run.duration=2"};
    mbs_scenario *sc = load(SCEN("solo_trot.ini"), sets, 3, &err);
    if (!sc) return;
    mbs_sim_summary sum;
    int rc = run(sc, NULL, &sum, &err);
    CHECK(rc == MBS_OK && sum.diverged && sum.diverged_t < 2 && sum.reason[0], "euler at 2 ms: diverged %d at %g (%s)",
          sum.diverged, sum.diverged_t, sum.reason);
    CHECK(fabs(sum.sim_time - sum.diverged_t) < 1e-12, "sim_time %g, diverged at %g", sum.sim_time, sum.diverged_t);
    mbs_scenario_free(sc);
}

/* A run whose state stops being finite: the stepper's error (MBS_ERR_NUMERIC) is the reason,
 * naming the joint and the time; the velocity bound and the box pushed out of the way. */
static void test_nan_divergence_names_the_joint(void)
{
    mbs_error err;
    const char *sets[] = {"stepper.name=euler", "stepper.dt=0.002", "run.duration=2", "run.max_velocity=1e300",
                          "run.box=-1e300 -1e300 -1e300 1e300 1e300 1e300"};
    mbs_scenario *sc = load(SCEN("solo_trot.ini"), sets, 5, &err);
    if (!sc) return;
    mbs_sim_summary sum;
    int rc = run(sc, NULL, &sum, &err);
    CHECK(rc == MBS_OK && sum.diverged && !sum.left_box && sum.diverged_t < 2, "euler at 2 ms, no bounds: diverged %d at %g",
          sum.diverged, sum.diverged_t);
    CHECK(strstr(sum.reason, "euler: the state is not finite in the step from t = ") && strstr(sum.reason, " of joint '"),
          "reason: '%s'", sum.reason);
    mbs_scenario_free(sc);
}

/* The base walking out of the box is its own status, not a divergence; no [run] box, no box. */
static void test_left_box(void)
{
    mbs_error err;
    const char *sets[] = {"run.box=-10 -10 0 0.3 10 2"};
    mbs_scenario *sc = load(SCEN("solo_trot.ini"), sets, 1, &err);
    if (!sc) return;
    mbs_sim_summary sum;
    int rc = run(sc, NULL, &sum, &err);
    CHECK(rc == MBS_OK && sum.left_box && !sum.diverged && sum.diverged_t < sc->duration &&
              fabs(sum.sim_time - sum.diverged_t) < 1e-12,
          "trot out of a box ending at x = 0.3: rc %d, left_box %d, diverged %d at %g", rc, sum.left_box, sum.diverged,
          sum.diverged_t);
    CHECK(strncmp(sum.reason, "base x = 0.3", 12) == 0 && strstr(sum.reason, " left [-10, 0.3]"), "reason: '%s'", sum.reason);
    char buf[4096];
    mbs_sim_summary_format(&sum, buf, sizeof buf);
    CHECK(strstr(buf, "\nstatus: left_box\nstatus_detail: at t = ") && !strstr(buf, "diverged"), "summary: %s", buf);
    mbs_scenario_free(sc);
    /* a scenario that sets no box has none; one that sets it keeps it */
    sc = load(BAD("base.ini"), NULL, 0, &err);
    if (sc) {
        for (int k = 0; k < 3; k++)
            CHECK(sc->box_min[k] == -INFINITY && sc->box_max[k] == INFINITY, "no [run] box: [%g, %g]", sc->box_min[k],
                  sc->box_max[k]);
        mbs_scenario_free(sc);
    }
    sc = load(SCEN("solo_trot.ini"), NULL, 0, &err);
    if (sc) {
        CHECK(sc->box_min[2] == 0 && sc->box_max[0] == 10, "solo_trot's box: z >= %g, x <= %g", sc->box_min[2], sc->box_max[0]);
        mbs_scenario_free(sc);
    }
}

/* ---- where the CSV goes: stdout, FIFOs, devices, symlinks, directories ---- */

static const char *CSV_SETS[] = {"stepper.name=euler", "stepper.dt=6.25e-5", "run.duration=0.1", "output.every=5"};
#define CSV_LINES 12   /* the header, every 5th of 50 controller periods, the end */

/* Runs the short trot with its CSV at `out`; p (may be NULL) counts the controller periods. */
static int csv_run(const char *out, csv_probe *p, mbs_error *err)
{
    mbs_scenario *sc = load(SCEN("solo_trot.ini"), CSV_SETS, 4, err);
    if (!sc) return -1;
    mbs_sim_run_options opt = {.csv = out, .progress = p ? probe : NULL, .user = p};
    mbs_sim_summary sum;
    int rc = run(sc, &opt, &sum, err);
    CHECK(rc != MBS_OK || !sum.diverged, "csv run to '%s' diverged: %s", out, sum.reason);
    mbs_scenario_free(sc);
    return rc;
}

/* The lines of a stream, and whether the first is the CSV header. */
static int count_lines(FILE *f, int *header_ok)
{
    static char line[65536];
    int n = 0;
    *header_ok = 0;
    while (fgets(line, sizeof line, f)) {
        if (n == 0) *header_ok = strncmp(line, "t_s,q_root_joint_x_m,", 21) == 0;
        if (strchr(line, '\n')) n++;
    }
    return n;
}

static int file_lines(const char *path, int *header_ok)
{
    FILE *f = fopen(path, "r");
    *header_ok = 0;
    if (!f) return -1;
    int n = count_lines(f, header_ok);
    fclose(f);
    return n;
}

static void test_csv_destinations(void)
{
    mbs_error err;
    char path[256], tmp[300], target[256];
    int pid = (int)getpid(), ok = 0, n;

    /* "-": stdout, caught in a file; no file named "-" appears */
    snprintf(path, sizeof path, "/tmp/mbs_test_stdout_%d.csv", pid);
    int dash_before = access("-", F_OK) == 0;
    fflush(stdout);
    int saved = dup(1), fd = open(path, O_WRONLY | O_CREAT | O_TRUNC, 0644);
    CHECK(saved >= 0 && fd >= 0, "cannot redirect stdout");
    if (saved >= 0 && fd >= 0) {
        dup2(fd, 1);
        close(fd);
        int rc = csv_run("-", NULL, &err);
        fflush(stdout);
        dup2(saved, 1);
        close(saved);
        CHECK(rc == MBS_OK, "--csv -: %s", err.msg);
        n = file_lines(path, &ok);
        CHECK(n == CSV_LINES && ok, "--csv -: %d lines on stdout (header %d), expected %d", n, ok, CSV_LINES);
        CHECK(dash_before || access("-", F_OK) != 0, "--csv - created a file named '-'");
    }
    remove(path);

    /* a FIFO, read by a child process: written through, still a FIFO, no temporary file */
    snprintf(path, sizeof path, "/tmp/mbs_test_fifo_%d.csv", pid);
    snprintf(tmp, sizeof tmp, "%s.tmp", path);
    remove(path);
    CHECK(mkfifo(path, 0600) == 0, "mkfifo %s", path);
    fflush(stdout);
    fflush(stderr);
    pid_t child = fork();
    if (child == 0) {
        alarm(60);   /* never hang the suite if the parent never opens the FIFO */
        FILE *f = fopen(path, "r");
        int good = 0, lines = f ? count_lines(f, &good) : -1;
        _exit(f && good && lines > 0 && lines < 200 ? lines : 255);
    }
    CHECK(child > 0, "fork");
    if (child > 0) {
        alarm(120);   /* nor if the child dies before opening it */
        int rc = csv_run(path, NULL, &err);
        alarm(0);
        int status = 0;
        waitpid(child, &status, 0);
        CHECK(rc == MBS_OK, "FIFO: %s", err.msg);
        CHECK(WIFEXITED(status) && WEXITSTATUS(status) == CSV_LINES, "FIFO: the reader got %d lines (status %#x), expected %d",
              WIFEXITED(status) ? WEXITSTATUS(status) : -1, status, CSV_LINES);
        struct stat st;
        CHECK(lstat(path, &st) == 0 && S_ISFIFO(st.st_mode), "the FIFO was replaced");
        CHECK(access(tmp, F_OK) != 0, "a temporary file was made beside the FIFO");
    }
    remove(path);

    /* a character device */
    CHECK(csv_run("/dev/null", NULL, &err) == MBS_OK, "/dev/null: %s", err.msg);
    struct stat dn;
    CHECK(stat("/dev/null", &dn) == 0 && S_ISCHR(dn.st_mode), "/dev/null is no longer a character device");

    /* a symlink to a regular file: still a link afterwards, its target holds the CSV */
    snprintf(target, sizeof target, "/tmp/mbs_test_target_%d.csv", pid);
    snprintf(path, sizeof path, "/tmp/mbs_test_link_%d.csv", pid);
    snprintf(tmp, sizeof tmp, "%s.tmp", path);
    remove(path);
    FILE *t = fopen(target, "w");
    if (t) { fputs("old\n", t); fclose(t); }
    CHECK(symlink(target, path) == 0, "symlink %s", path);
    CHECK(csv_run(path, NULL, &err) == MBS_OK, "symlink: %s", err.msg);
    struct stat st;
    char dest[256] = "";
    ssize_t len = readlink(path, dest, sizeof dest - 1);
    if (len > 0) dest[len] = '\0';
    CHECK(lstat(path, &st) == 0 && S_ISLNK(st.st_mode) && strcmp(dest, target) == 0, "the symlink was replaced");
    n = file_lines(target, &ok);
    CHECK(n == CSV_LINES && ok, "symlink target: %d lines (header %d), expected %d", n, ok, CSV_LINES);
    CHECK(access(tmp, F_OK) != 0, "a temporary file was left beside the symlink");
    remove(path);
    remove(target);

    /* a directory: refused before the run, named as given, left alone */
    snprintf(path, sizeof path, "/tmp/mbs_test_dir_%d", pid);
    rmdir(path);
    CHECK(mkdir(path, 0700) == 0, "mkdir %s", path);
    csv_probe p = {path, path, 0, 0, 0, 0};
    int rc = csv_run(path, &p, &err);
    char quoted[300];
    snprintf(quoted, sizeof quoted, "'%s'", path);
    CHECK(rc == MBS_ERR_IO && strstr(err.msg, quoted) && strstr(err.msg, "directory") && p.calls == 0,
          "directory: rc %d '%s' after %d periods", rc, err.msg, p.calls);
    CHECK(stat(path, &st) == 0 && S_ISDIR(st.st_mode), "the directory was touched");
    rmdir(path);

    /* a regular file without write permission (root may write anyway: then it is replaced) */
    if (geteuid() != 0) {
        snprintf(path, sizeof path, "/tmp/mbs_test_readonly_%d.csv", pid);
        t = fopen(path, "w");
        if (t) fclose(t);
        chmod(path, 0444);
        p.calls = 0;
        rc = csv_run(path, &p, &err);
        snprintf(quoted, sizeof quoted, "'%s'", path);
        CHECK(rc == MBS_ERR_IO && strstr(err.msg, quoted) && p.calls == 0, "read-only file: rc %d '%s'", rc, err.msg);
        remove(path);
    }
}

/* ---- touchdowns, the figures of sub-stepping schemes, gravity, planar roots, rims, dissipation ---- */

/* A scratch folder for scenario files, made once per run. */
static const char *scratch(void)
{
    static char dir[64];
    if (!dir[0]) {
        snprintf(dir, sizeof dir, "/tmp/mbs_test_scen_XXXXXX");
        if (!mkdtemp(dir)) dir[0] = '\0';
    }
    return dir;
}

static char written[8][300];   /* the files write_scenario made, removed by scratch_clean */

/* Writes text to scratch()/name; returns path, where it wrote (n bytes). */
static const char *write_scenario(const char *name, const char *text, char *path, size_t n)
{
    snprintf(path, n, "%s/%s", scratch(), name);
    for (int i = 0; i < 8; i++)
        if (!written[i][0] || strcmp(written[i], path) == 0) {
            snprintf(written[i], sizeof written[i], "%s", path);
            break;
        }
    FILE *f = fopen(path, "w");
    CHECK(f != NULL, "cannot write %s", path);
    if (f) {
        fputs(text, f);
        fclose(f);
    }
    return path;
}

/* Removes the scratch folder and what was written there. */
static void scratch_clean(void)
{
    for (int i = 0; i < 8 && written[i][0]; i++) remove(written[i]);
    if (scratch()[0]) rmdir(scratch());
}

/* The cube of tests/models (2 kg, side 0.2 m) on a planar root: x = 0.3, z = 1, pitched by 0.2
 * rad, no contact, no controller; the rest of the keys from `extra`. */
static void planar_cube(char *text, size_t n, const char *extra)
{
    snprintf(text, n,
             "[model]\nurdf = " MBS_SOURCE_DIR "/tests/models/cube.urdf\nfloating = 2\nbase_position = 0.3 0 1\n"
             "base_rpy = 0 0.2 0\n%s\n[controller]\ntype = none\ndt = 0.001\n[stepper]\nname = rk4\ndt = 0.001\n"
             "[run]\nduration = 0.1\n", extra);
}

/* Counts touchdowns from the contacts' public state once per controller period, which is one
 * step in the runs below. */
typedef struct touch_count {
    mbs_system *sys;
    int was[MBS_SIM_MAX_CONTACTS];
    int calls;
    long touchdowns, foot_touchdowns;
} touch_count;

/* A foot touches down when one of the points on its frame touches and none of them did. */
static void touch_look(touch_count *tc)
{
    int n = mbs_system_ncontacts(tc->sys), frame[MBS_SIM_MAX_CONTACTS], now[MBS_SIM_MAX_CONTACTS];
    for (int i = 0; i < n; i++) {
        mbs_contact_info c;
        mbs_system_contact(tc->sys, i, &c);
        frame[i] = c.frame;
        now[i] = c.active != 0;
        if (tc->calls && now[i] && !tc->was[i]) tc->touchdowns++;
    }
    for (int i = 0; i < n; i++) {
        int first = 1, was = 0, is = 0;
        for (int j = 0; j < n; j++)
            if (frame[j] == frame[i]) {
                first &= j >= i;
                was |= tc->was[j];
                is |= now[j];
            }
        if (first && tc->calls && is && !was) tc->foot_touchdowns++;
    }
    memcpy(tc->was, now, sizeof(int) * (size_t)n);
    tc->calls++;
}

static void touch_control(void *user, double t, const double *q, const double *v, double *tau)
{
    (void)t; (void)q; (void)v; (void)tau;
    touch_look(user);
}

/* The trot's feet land again and again: the summary's count equals one made from the contacts'
 * state after each step (one step per 2 ms controller period); standing still, no foot lands. */
static void test_touchdowns(void)
{
    mbs_error err;
    const char *sets[] = {"run.duration=1"};
    mbs_scenario *sc = load(SCEN("solo_trot.ini"), sets, 1, &err);
    if (!sc) return;
    CHECK(fabs(sc->controller_dt - sc->dt) < 1e-15, "solo_trot: %g s controller period, %g s step", sc->controller_dt, sc->dt);
    mbs_sim *sim = mbs_sim_new(sc, &err);
    CHECK(sim != NULL, "solo_trot: %s", err.msg);
    if (sim) {
        touch_count tc = {mbs_sim_system(sim), {0}, 0, 0, 0};
        mbs_sim_set_control(sim, touch_control, &tc);
        mbs_sim_summary sum;
        CHECK(mbs_sim_run(sim, NULL, &sum, &err) == MBS_OK && !sum.diverged, "solo_trot: %s %s", err.msg, sum.reason);
        touch_look(&tc);   /* the state the last step left */
        CHECK(sum.touchdowns >= 8, "solo_trot: %ld touchdowns in 1 s of trot, expected at least 8", sum.touchdowns);
        CHECK(sum.touchdowns == tc.touchdowns, "solo_trot: the summary counts %ld touchdowns, the contacts' state %ld",
              sum.touchdowns, tc.touchdowns);
        /* one point per foot: every point touch-down is a foot's */
        CHECK(sum.foot_touchdowns == sum.touchdowns && tc.foot_touchdowns == tc.touchdowns,
              "solo_trot: %ld foot touch-downs (recount %ld) for %ld point touch-downs", sum.foot_touchdowns,
              tc.foot_touchdowns, sum.touchdowns);
        char buf[4096];
        mbs_sim_summary_format(&sum, buf, sizeof buf);
        char line[64];
        snprintf(line, sizeof line, "\nairborne_s: %.4g\ntouchdowns: %ld\n", sum.airborne_s, sum.touchdowns);
        CHECK(strstr(buf, line) != NULL, "summary lacks '%s' after airborne_s:\n%s", line + 1, buf);
        snprintf(line, sizeof line, "\nfoot_touchdowns: %ld\n", sum.foot_touchdowns);
        CHECK(strstr(buf, line) != NULL, "summary lacks '%s':\n%s", line + 1, buf);
    }
    mbs_sim_free(sim);
    mbs_scenario_free(sc);

    /* Romeo's soles have four points each: the corners touch down as the sole rocks, the feet
     * only when they land (its controller at the step, 5 ms, so that the count after each step can
     * be made from the contacts' state) */
    const char *walk[] = {"controller.dt=0.005"};
    sc = load(SCEN("romeo_walk.ini"), walk, 1, &err);
    sim = sc ? mbs_sim_new(sc, &err) : NULL;
    CHECK(sim != NULL, "romeo_walk: %s", err.msg);
    if (sim) {
        touch_count tc = {mbs_sim_system(sim), {0}, 0, 0, 0};
        mbs_sim_set_control(sim, touch_control, &tc);
        mbs_sim_summary sum;
        CHECK(mbs_sim_run(sim, NULL, &sum, &err) == MBS_OK && !sum.diverged, "romeo_walk: %s %s", err.msg, sum.reason);
        touch_look(&tc);
        CHECK(sum.touchdowns == tc.touchdowns && sum.foot_touchdowns == tc.foot_touchdowns,
              "romeo_walk: the summary counts %ld point and %ld foot touch-downs, the contacts' state %ld and %ld",
              sum.touchdowns, sum.foot_touchdowns, tc.touchdowns, tc.foot_touchdowns);
        /* two steps: each foot lands at least once, and a rocking sole adds corners, not feet */
        CHECK(sum.foot_touchdowns >= 2 && sum.touchdowns > sum.foot_touchdowns,
              "romeo_walk: %ld foot and %ld point touch-downs", sum.foot_touchdowns, sum.touchdowns);
        printf("  romeo_walk, 5 ms controller: %ld point touch-downs, %ld foot touch-downs\n", sum.touchdowns,
               sum.foot_touchdowns);
    }
    mbs_sim_free(sim);
    mbs_scenario_free(sc);

    /* the feet start on the ground carrying the robot: standing, none lands */
    const char *stand[] = {"controller.type=pd", "run.duration=0.5"};
    sc = load(SCEN("solo_trot.ini"), stand, 2, &err);
    mbs_sim_summary sum;
    if (sc && run(sc, NULL, &sum, &err) == MBS_OK)
        CHECK(!sum.diverged && sum.touchdowns == 0 && sum.airborne_s == 0, "solo standing: %ld touchdowns, airborne %g s",
              sum.touchdowns, sum.airborne_s);
    mbs_scenario_free(sc);
}

/* The summary of a scheme that chooses its sub-steps: mean_dt_s, min_dt_s, rejected_steps instead of
 * the maximal-dissipation figures, which stay for a scheme reporting sub-steps only. */
static void test_substep_summary(void)
{
    mbs_sim_summary s;
    memset(&s, 0, sizeof s);
    s.sim_time = 1;
    s.substeps = 400;
    s.min_alpha = 0.25;
    s.mean_iterations = 3;
    char buf[4096];
    mbs_sim_summary_format(&s, buf, sizeof buf);
    CHECK(strstr(buf, "\nmean_outer_iterations: 3\n") && strstr(buf, "\nmin_alpha: 0.25\n") && !strstr(buf, "min_dt"),
          "sub-steps without min_dt:\n%s", buf);
    s.min_dt = 1e-5;
    s.mean_dt = 2.5e-3;
    s.rejected = 7;
    mbs_sim_summary_format(&s, buf, sizeof buf);
    CHECK(strstr(buf, "\nmean_dt_s: 0.0025\nmin_dt_s: 1e-05\nrejected_steps: 7\n") && !strstr(buf, "mean_outer_iterations") &&
              !strstr(buf, "min_alpha"), "sub-steps with min_dt:\n%s", buf);
    s.substeps = 0;
    s.min_dt = 0;
    mbs_sim_summary_format(&s, buf, sizeof buf);
    CHECK(!strstr(buf, "min_dt") && !strstr(buf, "mean_outer_iterations"), "no sub-steps:\n%s", buf);

    /* a run of rigid, which reports its conservative advancement's sub-steps */
    char text[1024], path[256];
    planar_cube(text, sizeof text, "[contact]\nframes = cube\nradius = 0.1\nrim_axis = 0 1 0");
    mbs_error err;
    const char *sets[] = {"stepper.name=rigid", "model.base_position=0 0 0.3", "run.duration=0.5"};
    mbs_scenario *sc = load(write_scenario("rigid.ini", text, path, sizeof path), sets, 3, &err);
    mbs_sim_summary sum;
    if (sc && run(sc, NULL, &sum, &err) == MBS_OK) {
        CHECK(sum.substeps >= sum.steps && sum.min_dt > 0 && sum.min_dt <= sc->dt * (1 + 1e-12),
              "rigid: %ld sub-steps in %ld steps, min_dt %g", sum.substeps, sum.steps, sum.min_dt);
        CHECK(fabs(sum.mean_dt - sum.sim_time / (double)sum.substeps) < 1e-15 && sum.mean_dt >= sum.min_dt,
              "rigid: mean_dt %g, sim_time %g over %ld sub-steps", sum.mean_dt, sum.sim_time, sum.substeps);
        mbs_sim_summary_format(&sum, buf, sizeof buf);
        CHECK(strstr(buf, "\nmean_dt_s: ") && strstr(buf, "\nmin_dt_s: ") && strstr(buf, "\nrejected_steps: 0\n"),
              "rigid's summary:\n%s", buf);
    }
    mbs_scenario_free(sc);
}

/* [model] gravity reaches the model: without it a robot in the air stays where it is; with the
 * default it falls g t² / 2. */
static void test_gravity(void)
{
    mbs_error err;
    for (int g = 0; g < 2; g++) {
        const char *sets[] = {"controller.type=none", "model.base_position=0 0 1", "run.duration=0.2", "model.gravity=0 0 0"};
        mbs_scenario *sc = load(SCEN("solo_trot.ini"), sets, g ? 3 : 4, &err);
        if (!sc) continue;
        const double *gm = mbs_model_gravity(sc->model);
        CHECK(gm[0] == 0 && gm[1] == 0 && gm[2] == (g ? -9.81 : 0), "gravity %d: the model's is %g %g %g", g, gm[0], gm[1],
              gm[2]);
        mbs_sim *sim = mbs_sim_new(sc, &err);
        mbs_sim_summary sum;
        if (sim && mbs_sim_run(sim, NULL, &sum, &err) == MBS_OK) {
            const double *v = mbs_system_v(mbs_sim_system(sim));
            double vmax = 0;
            for (int k = 0; k < mbs_model_nv(sc->model); k++) vmax = fmax(vmax, fabs(v[k]));
            if (g == 0)
                CHECK(sum.base_z_min == 1 && sum.base_z_max == 1 && vmax == 0 && sum.airborne_s > 0,
                      "no gravity: base z in [%g, %g], |v| up to %g", sum.base_z_min, sum.base_z_max, vmax);
            else
                CHECK(fabs(sum.base_final[2] - (1 - 0.5 * 9.81 * 0.2 * 0.2)) < 1e-6, "gravity: base z %g after 0.2 s",
                      sum.base_final[2]);
        }
        mbs_sim_free(sim);
        mbs_scenario_free(sc);
    }
}

/* floating = 2: the planar root's q is [z x cos θ sin θ]; the base figures read it so; y, roll
 * and yaw out of the plane are refused, naming the key. */
static void test_planar_root(void)
{
    char text[1024], path[256];
    planar_cube(text, sizeof text, "");
    write_scenario("planar.ini", text, path, sizeof path);
    mbs_error err;
    mbs_scenario *sc = load(path, NULL, 0, &err);
    if (!sc) return;
    const mbs_model *m = sc->model;
    CHECK(sc->floating == MBS_ROOT_PLANAR && mbs_model_nq(m) == 4 && mbs_model_nv(m) == 3 &&
              mbs_joint_type_of(m, 0) == MBS_JOINT_PLANAR, "planar cube: nq %d, nv %d", mbs_model_nq(m), mbs_model_nv(m));
    double q0[4] = {1, 0.3, cos(0.2), sin(0.2)};
    CHECK_CLOSE(sc->q0, q0, 4, 1e-15, "planar q0 = [z x cos sin]");
    char csv[300];
    snprintf(csv, sizeof csv, "%s/planar.csv", scratch());
    mbs_sim_run_options opt = {.csv = csv};
    mbs_sim_summary sum;
    if (run(sc, &opt, &sum, &err) == MBS_OK) {
        /* a free fall: x and the pitch stay, z drops g t² / 2 */
        double z = 1 - 0.5 * 9.81 * 0.01;
        CHECK(fabs(sum.base_final[0] - 0.3) < 1e-9 && sum.base_final[1] == 0 && fabs(sum.base_final[2] - z) < 1e-9,
              "planar base_final x y z %g %g %g, expected 0.3 0 %g", sum.base_final[0], sum.base_final[1], sum.base_final[2], z);
        CHECK(sum.base_final[3] == 0 && fabs(sum.base_final[4] - 0.2) < 1e-12 && sum.base_final[5] == 0,
              "planar base_final rpy %g %g %g", sum.base_final[3], sum.base_final[4], sum.base_final[5]);
        CHECK(fabs(sum.base_z_max - 1) < 1e-12 && fabs(sum.base_z_min - z) < 1e-9 && fabs(sum.distance_m) < 1e-9,
              "planar: z in [%g, %g], distance %g", sum.base_z_min, sum.base_z_max, sum.distance_m);
        CHECK(fabs(sum.max_tilt_deg - 0.2 * 180 / MBS_PI) < 1e-9, "planar tilt %g deg", sum.max_tilt_deg);
        FILE *f = fopen(csv, "r");
        char line[1024] = "";
        CHECK(f && fgets(line, sizeof line, f), "no planar CSV");
        if (f) fclose(f);
        static const char planar_header[] = "t_s,q_root_joint_z_m,q_root_joint_x_m,q_root_joint_c,q_root_joint_s,"
                                            "v_root_joint_vz_m_s,v_root_joint_vx_m_s,v_root_joint_wy_rad_s";
        CHECK(strncmp(line, planar_header, sizeof planar_header - 1) == 0 && !strstr(line, "tau_root_joint"),
              "planar CSV header: %s", line);
        remove(csv);
    }
    mbs_scenario_free(sc);
    /* the box sees world x (q[1]), not z (q[0]) */
    const char *box[] = {"run.box=-1 -1 -1 0.2 1 2"};
    sc = load(path, box, 1, &err);
    if (sc && run(sc, NULL, &sum, &err) == MBS_OK)
        CHECK(sum.left_box && strncmp(sum.reason, "base x = 0.3 left", 17) == 0, "planar box: left_box %d (%s)", sum.left_box,
              sum.reason);
    mbs_scenario_free(sc);
    /* out of the plane: an error naming the key and its line */
    static const struct { const char *old, *new_, *key, *frag; } bad[] = {
        {"base_position = 0.3 0 1", "base_position = 0.3 0.1 1", "[model] base_position", "y = 0.1"},
        {"base_rpy = 0 0.2 0", "base_rpy = 0.1 0.2 0", "[model] base_rpy", "roll 0.1 and yaw 0 must be 0"},
        {"base_rpy = 0 0.2 0", "base_rpy = 0 0.2 0.3", "[model] base_rpy", "roll 0 and yaw 0.3 must be 0"},
    };
    for (size_t i = 0; i < sizeof bad / sizeof *bad; i++) {
        char t2[1024], t3[1100], where[300];
        planar_cube(t2, sizeof t2, "");
        char *at = strstr(t2, bad[i].old);
        if (!at) continue;
        snprintf(t3, sizeof t3, "%.*s%s%s", (int)(at - t2), t2, bad[i].new_, at + strlen(bad[i].old));
        write_scenario("planar_bad.ini", t3, path, sizeof path);
        snprintf(where, sizeof where, "%s:%d: %s: out of range: ", path, line_of(path, bad[i].new_), bad[i].key);
        sc = mbs_scenario_load(path, NULL, 0, &err);
        CHECK(!sc && strncmp(err.msg, where, strlen(where)) == 0 && strstr(err.msg, bad[i].frag), "%s: '%s'", bad[i].new_,
              err.msg);
        mbs_scenario_free(sc);
    }
}

/* The world velocity [v; ω] of the cube's origin (MBS_LOCAL_WORLD_ALIGNED) at the scenario's
 * (q0, v0). */
static void cube_world_velocity(const mbs_scenario *sc, double out[6])
{
    mbs_data *d = mbs_data_new(sc->model);
    int f = mbs_frame_id(sc->model, "cube");
    CHECK(d && f >= 0, "no data or no frame 'cube'");
    if (d && f >= 0) {
        mbs_forward_kinematics(sc->model, d, sc->q0, mbs_scenario_v0(sc), NULL);
        mbs_frame_velocity(sc->model, d, f, NULL, MBS_LOCAL_WORLD_ALIGNED, out);
    }
    mbs_data_free(d);
}

/* A --set that must be refused with a message naming the override and holding frag. */
static void expect_bad_set(const char *path, const char *set, const char *frag)
{
    mbs_error err;
    const char *one[] = {set};
    mbs_scenario *sc = mbs_scenario_load(path, one, 1, &err);
    char where[400];
    snprintf(where, sizeof where, "%s: --set %s: ", path, set);
    CHECK(!sc && strncmp(err.msg, where, strlen(where)) == 0 && strstr(err.msg, frag), "--set %s: '%s' (expected '%s...%s')",
          set, err.msg, where, frag);
    mbs_scenario_free(sc);
}

/* [model] base_velocity (world axes) and v.JOINT: the base origin's world velocity at (q0, v0)
 * is the one asked, for a free-flyer turned by roll, pitch and yaw and for a pitched planar
 * root, and the run starts from it; v.JOINT sets its joint's entry; the bad cases are refused
 * naming the key. */
static void test_initial_velocity(void)
{
    static const double want[6] = {0.5, -1.2, 0.7, 0.9, 0.2, -1.5};
    char text[1024], path[256], bad[256];
    snprintf(text, sizeof text,
             "[model]\nurdf = " MBS_SOURCE_DIR "/tests/models/cube.urdf\nfloating = 1\nbase_position = 0.1 -0.2 1\n"
             "base_rpy = 0.3 -0.4 1.1\nbase_velocity = 0.5 -1.2 0.7 0.9 0.2 -1.5\ngravity = 0 0 0\n[controller]\ntype = none\n"
             "dt = 0.001\n[stepper]\nname = rk4\ndt = 0.001\n[run]\nduration = 0.1\n");
    write_scenario("velocity.ini", text, path, sizeof path);
    mbs_error err;
    mbs_scenario *sc = load(path, NULL, 0, &err);
    mbs_sim_summary sum;
    if (sc) {
        CHECK(mbs_scenario_v0(sc) == sc->v0 && mbs_model_nv(sc->model) == 6, "free cube: v0 accessor, nv %d",
              mbs_model_nv(sc->model));
        /* the body-frame coordinates differ from the world ones: the base is turned */
        CHECK(fabs(sc->v0[0] - want[0]) > 0.05 && fabs(sc->v0[3] - want[3]) > 0.05, "free cube: v0 = %g ... %g unturned",
              sc->v0[0], sc->v0[3]);
        double w[6] = {0};
        cube_world_velocity(sc, w);
        CHECK_CLOSE(w, want, 6, 1e-12, "free-flyer base_velocity in world axes");
        /* without gravity or contact the origin (the centre of mass) moves straight at that velocity */
        if (run(sc, NULL, &sum, &err) == MBS_OK) {
            double p[3] = {0.1 + 0.1 * want[0], -0.2 + 0.1 * want[1], 1 + 0.1 * want[2]};
            CHECK_CLOSE(sum.base_final, p, 3, 1e-9, "free cube after 0.1 s");
        }
    }
    mbs_scenario_free(sc);
    /* v.JOINT on a free-flyer root: base_velocity's job */
    expect_bad_set(path, "model.v.root_joint=1", "joint 'root_joint' has 6 velocity coordinates");
    expect_bad_set(path, "model.base_velocity=1 2 3", "expected 6 numbers");

    /* a planar root pitched by 0.2 rad: v = [vz vx ω_y] along the base's own axes */
    planar_cube(text, sizeof text, "base_velocity = 0.4 0 -0.3 0 1.5 0");
    write_scenario("velocity.ini", text, path, sizeof path);
    sc = load(path, NULL, 0, &err);
    if (sc) {
        static const double wp[6] = {0.4, 0, -0.3, 0, 1.5, 0};
        double c = cos(0.2), s = sin(0.2), vb[3] = {0.4 * s - 0.3 * c, 0.4 * c + 0.3 * s, 1.5};
        CHECK_CLOSE(sc->v0, vb, 3, 1e-15, "planar v0 = [vz vx wy] in the base frame");
        double w[6] = {0};
        cube_world_velocity(sc, w);
        CHECK_CLOSE(w, wp, 6, 1e-12, "planar base_velocity in world axes");
        if (run(sc, NULL, &sum, &err) == MBS_OK) {
            double t = 0.1, p[3] = {0.3 + 0.4 * t, 0, 1 - 0.3 * t - 0.5 * 9.81 * t * t};
            CHECK_CLOSE(sum.base_final, p, 3, 1e-9, "planar cube after 0.1 s");
            CHECK(fabs(sum.base_final[4] - (0.2 + 1.5 * t)) < 1e-9, "planar pitch %g after 0.1 s, expected %g",
                  sum.base_final[4], 0.2 + 1.5 * t);
        }
    }
    mbs_scenario_free(sc);
    expect_bad_set(path, "model.base_velocity=0 0.1 0 0 0 0", "out of range: vy 0.1, wx 0 and wz 0 must be 0");
    expect_bad_set(path, "model.base_velocity=0 0 0 0.2 0 0", "vy 0, wx 0.2 and wz 0 must be 0");
    expect_bad_set(path, "model.base_velocity=0 0 0 0 0 -3", "vy 0, wx 0 and wz -3 must be 0");
    expect_bad_set(path, "model.v.nojoint=1", "no joint 'nojoint'");

    /* a fixed root: v.JOINT in the file; a zero base_velocity is fine, a non-zero one refused at its line */
    snprintf(text, sizeof text,
             "[model]\nurdf = " MBS_SOURCE_DIR "/tests/models/pendulum.urdf\nfloating = 0\nv.hinge = -0.75\n"
             "base_velocity = 0 0 0 0 0 0\n[controller]\ntype = none\ndt = 0.001\n[stepper]\nname = rk4\ndt = 0.001\n"
             "[run]\nduration = 0.1\n");
    write_scenario("velocity.ini", text, path, sizeof path);
    sc = load(path, NULL, 0, &err);
    if (sc) {
        int j = mbs_joint_id(sc->model, "hinge");
        CHECK(j >= 0 && mbs_model_nv(sc->model) == 1 && sc->v0[mbs_joint_idx_v(sc->model, j)] == -0.75,
              "pendulum: v.hinge gives v0 = %g", sc->v0[0]);
    }
    mbs_scenario_free(sc);
    char *at = strstr(text, "base_velocity = 0 0 0 0 0 0");
    if (at) memcpy(at, "base_velocity = 0 0 0 0 0 1", strlen("base_velocity = 0 0 0 0 0 1"));
    write_scenario("velocity_bad.ini", text, bad, sizeof bad);
    sc = mbs_scenario_load(bad, NULL, 0, &err);
    char where[400];
    snprintf(where, sizeof where, "%s:%d: [model] base_velocity: ", bad, line_of(bad, "base_velocity"));
    CHECK(!sc && strncmp(err.msg, where, strlen(where)) == 0 && strstr(err.msg, "no floating root"), "fixed root: '%s'",
          err.msg);
    mbs_scenario_free(sc);
    expect_bad_set(path, "model.v.hinge=fast", "malformed number 'fast'");

    /* v.JOINT on Solo by --set: that joint's entry, every other one (the base's too) 0 */
    const char *sets[] = {"model.v.FL_HFE=1.5", "model.v.HR_KFE=-0.25"};
    sc = load(SCEN("solo_squat.ini"), sets, 2, &err);
    if (sc) {
        const mbs_model *m = sc->model;
        int a = mbs_joint_idx_v(m, mbs_joint_id(m, "FL_HFE")), b = mbs_joint_idx_v(m, mbs_joint_id(m, "HR_KFE")), others = 0;
        for (int k = 0; k < mbs_model_nv(m); k++)
            if (k != a && k != b) others += sc->v0[k] != 0;
        CHECK(sc->v0[a] == 1.5 && sc->v0[b] == -0.25 && others == 0, "solo v.JOINT: %g %g, %d others non-zero", sc->v0[a],
              sc->v0[b], others);
    }
    mbs_scenario_free(sc);
}

/* [run] push: a force on the base's origin in world axes. A free cube turned by roll, pitch and
 * yaw, without gravity, and a pitched planar cube under gravity (their origins are their centres
 * of mass) move exactly as a point mass under that force over the steps that start inside the
 * window; the CSV has the force as its last three columns; bad pushes are refused at their line. */
static void test_pushes(void)
{
    char text[1024], path[256], out[256];
    snprintf(out, sizeof out, "/tmp/mbs_test_push_%d.csv", (int)getpid());
    /* the window [0.0205, 0.0705) holds the steps starting at 0.021 ... 0.070: the force acts over
     * [0.021, 0.071), d = 0.05 s, then the cube coasts to T = 0.1 */
    const double f[3] = {3, -2, 5}, m = 2, d = 0.05, t1 = 0.071, T = 0.1, reach = d * d / 2 + d * (T - t1);
    snprintf(text, sizeof text,
             "[model]\nurdf = " MBS_SOURCE_DIR "/tests/models/cube.urdf\nfloating = 1\nbase_position = 0.1 -0.2 1\n"
             "base_rpy = 0.3 -0.4 1.1\ngravity = 0 0 0\n[controller]\ntype = none\ndt = 0.001\n[stepper]\nname = rk4\n"
             "dt = 0.001\n[run]\nduration = 0.1\npush = 0.0205 3 -2 5 0.05\n");
    write_scenario("push.ini", text, path, sizeof path);
    mbs_error err;
    mbs_scenario *sc = load(path, NULL, 0, &err);
    mbs_sim_summary sum;
    if (sc) {
        mbs_sim_run_options opt = {.csv = out};
        if (run(sc, &opt, &sum, &err) == MBS_OK) {
            double p[3] = {0.1 + f[0] / m * reach, -0.2 + f[1] / m * reach, 1 + f[2] / m * reach};
            CHECK_CLOSE(sum.base_final, p, 3, 1e-9, "free cube pushed");
            /* a force through the centre of mass turns nothing */
            CHECK(fabs(sum.base_final[3] - 0.3) < 1e-9 && fabs(sum.base_final[4] + 0.4) < 1e-9, "pushed cube turned: rpy %g %g",
                  sum.base_final[3], sum.base_final[4]);
        }
        FILE *fp = fopen(out, "r");
        char line[8192];
        int rows = 0, pushed = 0, ok = fp && fgets(line, sizeof line, fp);
        size_t n = ok ? strlen(line) : 0;
        const char *tail = ",push_fx_N,push_fy_N,push_fz_N\n";
        CHECK(ok && n > strlen(tail) && strcmp(line + n - strlen(tail), tail) == 0, "push CSV header: %s", ok ? line : "none");
        while (fp && fgets(line, sizeof line, fp)) {
            double t = atof(line), x[3];
            const char *c = line + strlen(line);
            for (int k = 2; k >= 0; k--) {
                while (c > line && c[-1] != ',') c--;
                x[k] = atof(c);
                if (c > line) c--;
            }
            int in = t >= 0.0205 && t < 0.0705;
            pushed += in;
            rows++;
            CHECK(in ? x[0] == 3 && x[1] == -2 && x[2] == 5 : x[0] == 0 && x[1] == 0 && x[2] == 0, "CSV push at t = %g: %g %g %g",
                  t, x[0], x[1], x[2]);
        }
        CHECK(rows == 101 && pushed == 50, "push CSV: %d rows, %d pushed", rows, pushed);
        if (fp) fclose(fp);
        remove(out);
    }
    mbs_scenario_free(sc);

    /* a planar root pitched by 0.2 rad: the push's x and z move it, under gravity */
    planar_cube(text, sizeof text, "");
    write_scenario("push.ini", text, path, sizeof path);
    const char *sets[] = {"run.push=0.0205 4 0 6 0.05"};
    sc = load(path, sets, 1, &err);
    if (sc && run(sc, NULL, &sum, &err) == MBS_OK) {
        double p[3] = {0.3 + 4 / m * reach, 0, 1 - 0.5 * 9.81 * T * T + 6 / m * reach};
        CHECK_CLOSE(sum.base_final, p, 3, 1e-9, "planar cube pushed");
        CHECK(fabs(sum.base_final[4] - 0.2) < 1e-9, "pushed planar cube pitched to %g", sum.base_final[4]);
    }
    mbs_scenario_free(sc);

    expect_bad_set(path, "run.push=0.1 1 2 3", "expected 5 numbers");
    expect_bad_set(path, "run.push=0.1 1 2 3 0", "the duration (5th number) 0 s must be > 0");
    expect_bad_set(path, "run.push=-1 1 2 3 0.1", "the start t = -1 s must be >= 0");
    snprintf(text, sizeof text,
             "[model]\nurdf = " MBS_SOURCE_DIR "/tests/models/pendulum.urdf\nfloating = 0\n[controller]\ntype = none\n"
             "dt = 0.001\n[stepper]\nname = rk4\ndt = 0.001\n[run]\nduration = 0.1\n");
    write_scenario("push.ini", text, path, sizeof path);
    expect_bad_set(path, "run.push=0 1 0 0 0.1", "a push acts on a floating base");
}

/* [contact] rim_axis: the points of `frames` become rims (those of `points` stay points), a rim
 * without a radius is refused naming the key, and a rim lands on its edge. */
static void test_rims(void)
{
    char text[1024], path[256], where[300];
    planar_cube(text, sizeof text, "[contact]\nframes = cube\nrim_axis = 0 2 0\npoints = cube 0 0 0.1");
    write_scenario("rim0.ini", text, path, sizeof path);
    mbs_error err;
    mbs_scenario *sc = mbs_scenario_load(path, NULL, 0, &err);
    snprintf(where, sizeof where, "%s:%d: [contact] rim_axis: ", path, line_of(path, "rim_axis"));
    CHECK(!sc && strncmp(err.msg, where, strlen(where)) == 0 && strstr(err.msg, "radius"), "a rim of radius 0: '%s'", err.msg);
    mbs_scenario_free(sc);

    const char *sets[] = {"contact.radius=0.1", "stepper.name=rigid", "model.base_position=0 0 0.3", "model.base_rpy=0 0 0",
                          "run.duration=1"};
    sc = load(path, sets, 5, &err);
    if (!sc) return;
    mbs_sim *sim = mbs_sim_new(sc, &err);
    CHECK(sim != NULL, "rim with rigid: %s", err.msg);
    if (sim) {
        mbs_system *sys = mbs_sim_system(sim);
        mbs_contact_info c0, c1;
        CHECK(mbs_system_ncontacts(sys) == 2 && mbs_system_contact(sys, 0, &c0) == MBS_OK &&
                  mbs_system_contact(sys, 1, &c1) == MBS_OK, "rim: %d contacts", mbs_system_ncontacts(sys));
        CHECK(c0.axis[0] == 0 && fabs(c0.axis[1] - 1) < 1e-15 && c0.axis[2] == 0 && c0.radius == 0.1,
              "rim: axis %g %g %g, radius %g", c0.axis[0], c0.axis[1], c0.axis[2], c0.radius);
        CHECK(c1.axis[0] == 0 && c1.axis[1] == 0 && c1.axis[2] == 0, "a point of `points` became a rim");
        mbs_sim_summary sum;
        if (mbs_sim_run(sim, NULL, &sum, &err) == MBS_OK)
            CHECK(!sum.diverged && fabs(sum.base_final[2] - 0.1) < 1e-3 && sum.touchdowns >= 1,
                  "rim dropped from 0.3 m: rests at z = %g (radius 0.1), %ld touchdowns (%s)", sum.base_final[2],
                  sum.touchdowns, sum.reason);
    }
    mbs_sim_free(sim);
    mbs_scenario_free(sc);
    /* a stepper that cannot step rims says so, at [stepper] name */
    const char *expo[] = {"contact.radius=0.1", "stepper.name=expo"};
    sc = load(path, expo, 2, &err);
    sim = sc ? mbs_sim_new(sc, &err) : NULL;
    CHECK(sc && !sim && strstr(err.msg, "--set stepper.name=expo: ") && strstr(err.msg, "rim"), "rims with expo: '%s'", err.msg);
    mbs_sim_free(sim);
    mbs_scenario_free(sc);
}

/* [stepper] dissipation: λ = 1 leaves the system at rest after every step (a robot dropped in the
 * air hardly moves: 1000 steps each starting from rest, where it would fall 4.9 cm); out of
 * [0, 1] refused. */
static void test_dissipation(void)
{
    mbs_error err;
    for (int d = 0; d < 2; d++) {
        const char *sets[] = {"run.duration=0.1", "stepper.name=euler", "stepper.dt=1e-4", "controller.type=none",
                              "model.base_position=0 0 1", "stepper.dissipation=1"};
        mbs_scenario *sc = load(SCEN("solo_jump.ini"), sets, d ? 6 : 5, &err);
        if (!sc) continue;
        CHECK(sc->dissipation == d, "dissipation %g", sc->dissipation);
        mbs_sim *sim = mbs_sim_new(sc, &err);
        mbs_sim_summary sum;
        if (sim && mbs_sim_run(sim, NULL, &sum, &err) == MBS_OK) {
            const double *v = mbs_system_v(mbs_sim_system(sim));
            double vmax = 0;
            for (int k = 0; k < mbs_model_nv(sc->model); k++) vmax = fmax(vmax, fabs(v[k]));
            if (d)
                CHECK(vmax == 0 && sum.base_final[2] > 1 - 1e-4, "dissipation 1: |v| up to %g, base z %g after the run", vmax,
                      sum.base_final[2]);
            else
                CHECK(vmax > 0.9 && sum.base_final[2] < 0.96, "no dissipation: |v| up to %g, base z %g after 0.1 s of fall",
                      vmax, sum.base_final[2]);
        }
        mbs_sim_free(sim);
        mbs_scenario_free(sc);
    }
    const char *bad[] = {"stepper.dissipation=1.5"};
    mbs_scenario *sc = mbs_scenario_load(SCEN("solo_jump.ini"), bad, 1, &err);
    CHECK(!sc && strstr(err.msg, "--set stepper.dissipation=1.5: out of range"), "dissipation 1.5: '%s'", err.msg);
    mbs_scenario_free(sc);
}

/* ---- leg inverse kinematics ---- */

static void test_leg_ik(void)
{
    mbs_error err;
    mbs_scenario *sc = load(SCEN("solo_trot.ini"), NULL, 0, &err);
    if (!sc) return;
    const mbs_model *m = sc->model;
    mbs_data *d = mbs_data_new(m);
    int nq = mbs_model_nq(m);
    double *q = malloc((size_t)nq * sizeof(double));
    unsigned long long seed = 7;
    static const char *const feet[] = {"FL_FOOT", "FR_FOOT", "HL_FOOT", "HR_FOOT"};
    for (int i = 0; i < 4; i++) {
        mbs_leg leg;
        int rc = mbsi_leg_init(&leg, m, feet[i], sc->q0, &err);
        CHECK(rc == MBS_OK, "%s: %s", feet[i], err.msg);
        if (rc) continue;
        /* Solo's published dimensions, here found in the model: thigh and shank 0.16 m, the
         * leg plane 0.014 + 0.03745 + 0.008 m off the HAA axis, HAA at (±0.1946, ±0.0875, 0) */
        CHECK(fabs(leg.L1 - 0.16) < 1e-12 && fabs(leg.L2 - 0.16) < 1e-12, "%s: L1 %g L2 %g", feet[i], leg.L1, leg.L2);
        CHECK(fabs(fabs(leg.y_off) - 0.05945) < 1e-12 && fabs(fabs(leg.p_haa[0]) - 0.1946) < 1e-12 &&
              fabs(fabs(leg.p_haa[1]) - 0.0875) < 1e-12, "%s: y_off %g, HAA at %g %g", feet[i], leg.y_off, leg.p_haa[0],
              leg.p_haa[1]);
        CHECK(leg.knee == (i < 2 ? -1 : 1), "%s: knee branch %g", feet[i], leg.knee);
        for (int trial = 0; trial < 200; trial++) {
            /* random joint angles near the posture's branch; the base at the origin, level */
            mbs_neutral(m, q);
            double a[3], back[3], p[3], R[9], pw[3];
            for (int k = 0; k < 3; k++) {
                a[k] = sc->q0[leg.idx_q[k]] + tm_uniform(&seed, -0.5, 0.5);
                q[leg.idx_q[k]] = a[k];
            }
            mbsi_leg_fk(&leg, a, p);
            mbs_compute_frame_placement(m, d, q, leg.foot_frame, R, pw);
            CHECK_CLOSE(p, pw, 3, 1e-12, "leg FK vs the model's frame placement");
            int clamped = mbsi_leg_ik(&leg, p, back);
            CHECK(!clamped, "%s: a reachable target was clamped", feet[i]);
            CHECK_CLOSE(back, a, 3, 1e-9, "IK(FK(a)) = a");
        }
        /* the posture itself, and a target out of reach is clamped onto the workspace */
        double p0[3], a0[3] = {sc->q0[leg.idx_q[0]], sc->q0[leg.idx_q[1]], sc->q0[leg.idx_q[2]]}, a1[3];
        mbsi_leg_fk(&leg, a0, p0);
        mbsi_leg_ik(&leg, p0, a1);
        CHECK_CLOSE(a1, a0, 3, 1e-12, "IK of the initial posture");
        double far[3] = {p0[0], p0[1], p0[2] - 1};
        CHECK(mbsi_leg_ik(&leg, far, a1) == 1, "%s: an unreachable target was not flagged", feet[i]);
        CHECK(isfinite(a1[0]) && isfinite(a1[1]) && isfinite(a1[2]), "clamped IK not finite");
    }
    /* a frame that does not end such a leg is refused */
    mbs_leg leg;
    CHECK(mbsi_leg_init(&leg, m, "FL_UPPER_LEG", sc->q0, &err) != MBS_OK, "FL_UPPER_LEG accepted as a foot");
    CHECK(mbsi_leg_init(&leg, m, "nope", sc->q0, &err) != MBS_OK && strstr(err.msg, "nope"), "missing frame: %s", err.msg);
    mbs_model *chain = mbs_model_chain(3, NULL, &err);
    if (chain) {
        CHECK(mbsi_leg_init(&leg, chain, "tip", NULL, &err) != MBS_OK, "a 3-link chain with alternating axes accepted");
        mbs_model_free(chain);
    }
    free(q);
    mbs_data_free(d);
    mbs_scenario_free(sc);
}

/* 1 when the scenario file reads its model from ../shared/reference (a Menagerie robot). */
static int needs_shared_reference(const char *path)
{
    FILE *f = fopen(path, "r");
    char line[1024];
    int found = 0;
    while (f && !found && fgets(line, sizeof line, f)) found = line[0] != ';' && strstr(line, "shared/reference/") != NULL;
    if (f) fclose(f);
    return found;
}

/* Every scenario the project ships loads with no warning: a shipped model or scenario that warns
 * (an impossible inertia, a key its controller ignores) prints on every run of it, and a user
 * cannot tell it from a warning about their own file. */
static void test_shipped_scenarios_do_not_warn(void)
{
    DIR *dir = opendir(MBS_SOURCE_DIR "/scenarios");
    CHECK(dir != NULL, "cannot list %s/scenarios", MBS_SOURCE_DIR);
    if (!dir) return;
    int n = 0;
    for (struct dirent *e; (e = readdir(dir)) != NULL;) {
        size_t len = strlen(e->d_name);
        if (len < 5 || strcmp(e->d_name + len - 4, ".ini") != 0) continue;
        char path[1024];
        snprintf(path, sizeof path, "%s/scenarios/%s", MBS_SOURCE_DIR, e->d_name);
        /* a scenario of a third-party model (read from ../shared/reference) needs that folder */
        int third_party = needs_shared_reference(path);
        if (third_party && !tm_shared_reference("")) continue;
        mbs_error err;
        mbs_scenario *sc = mbs_scenario_load(path, NULL, 0, &err);
        CHECK(sc != NULL, "%s: %s", e->d_name, err.msg);
        /* a third-party model may warn about itself (Go2's frictionloss, which the dynamics do
         * not model: the user should read that), never the scenario */
        int own = err.nwarnings;
        for (const char *w = err.warnings; third_party && w && *w; w = strchr(w, '\n') ? strchr(w, '\n') + 1 : "")
            if (strstr(w, "shared/reference/") && strstr(w, "shared/reference/") < strchr(w, ':')) own--;
        CHECK(own == 0, "%s: %d warnings on loading:\n%s", e->d_name, own, err.warnings ? err.warnings : "");
        mbs_error_free(&err);
        mbs_scenario_free(sc);
        n++;
    }
    closedir(dir);
    CHECK(n >= 13, "only %d scenarios in %s/scenarios", n, MBS_SOURCE_DIR);
}

/* The replay records one frame every `every` controller periods: 100 per simulated second at
 * most, and fewer over a long run, so that nperiods / every + 2 frames (what it allocates) stay
 * within the budget, small budgets and periods longer than 0.01 s included. */
static void test_replay_frame_budget(void)
{
    CHECK(mbsi_replay_every(0.002, 2500, 20000) == 5, "solo_trot, 5 s: every %ld periods", mbsi_replay_every(0.002, 2500, 20000));
    CHECK(mbsi_replay_every(0.04, 250, 20000) == 1, "romeo_walk: every %ld periods", mbsi_replay_every(0.04, 250, 20000));
    CHECK(mbsi_replay_every(0.001, 60000, 20000) == 10, "walker: every %ld", mbsi_replay_every(0.001, 60000, 20000));
    static const double cdts[] = {0.001, 0.002, 0.0035, 0.04, 0.5};
    static const long budgets[] = {3, 10, 1000, 20000};
    static const long runs[] = {1, 7, 999, 1000, 20000, 123457, 5000000000L};
    for (int i = 0; i < 5; i++)
        for (int j = 0; j < 4; j++)
            for (int k = 0; k < 7; k++) {
                long every = mbsi_replay_every(cdts[i], runs[k], budgets[j]);
                long rate = mbsi_replay_every(cdts[i], runs[k], LONG_MAX);
                CHECK(every >= rate && runs[k] / every + 2 <= budgets[j],
                      "dt %g, %ld periods, budget %ld: every %ld (rate %ld) makes %ld frames", cdts[i], runs[k], budgets[j],
                      every, rate, runs[k] / every + 2);
                /* no more thinning than the budget needs */
                CHECK(every == rate || runs[k] / (every - 1) + 2 > budgets[j],
                      "dt %g, %ld periods, budget %ld: every %ld where %ld would do", cdts[i], runs[k], budgets[j], every,
                      every - 1);
            }
    /* the public figure: solo_trot as shipped (5 s) at 100 frames per second; for 1e7 s, longer */
    const char *sets[] = {"run.duration=1e7"};
    mbs_error err;
    mbs_scenario *sc = load(SCEN("solo_trot.ini"), NULL, 0, &err);
    double unthinned = 0;
    if (sc) {
        double iv = mbs_sim_replay_interval(sc, &unthinned);
        CHECK(fabs(iv - 0.01) < 1e-12 && fabs(unthinned - 0.01) < 1e-12, "solo_trot: a frame every %g s (%g)", iv,
              unthinned);
        mbs_scenario_free(sc);
    }
    sc = load(SCEN("solo_trot.ini"), sets, 1, &err);
    if (sc) {
        double iv = mbs_sim_replay_interval(sc, &unthinned);
        CHECK(fabs(unthinned - 0.01) < 1e-12 && (long)(1e7 / iv) + 2 <= MBS_REPLAY_MAX_FRAMES && iv > 400,
              "solo_trot for 1e7 s: a frame every %g s (%g unthinned)", iv, unthinned);
        mbs_scenario_free(sc);
    }
}

int main(void)
{
    RUN(test_shipped_scenarios_do_not_warn);
    RUN(test_replay_frame_budget);
    RUN(test_leg_ik);
    RUN(test_bad_scenarios);
    RUN(test_romeo_stands);
    RUN(test_romeo_walks);
    RUN(test_walk_too_long);
    RUN(test_overrides);
    RUN(test_csv_and_summary);
    RUN(test_csv_numbered_points);
    RUN(test_divergence_detected);
    RUN(test_nan_divergence_names_the_joint);
    RUN(test_left_box);
    RUN(test_touchdowns);
    RUN(test_substep_summary);
    RUN(test_gravity);
    RUN(test_planar_root);
    RUN(test_initial_velocity);
    RUN(test_pushes);
    RUN(test_rims);
    RUN(test_dissipation);
    scratch_clean();
    RUN(test_csv_destinations);
    RUN(test_every_stepper_runs_every_solo_scenario);
    return check_summary("test_scenarios");
}
