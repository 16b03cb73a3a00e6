/* test_checkpoint.c — checkpoint and resume, bitwise: for every registered stepper and every
 * scenario of scenarios/, a run to T uninterrupted, and the same run stopped at T/2 with a
 * checkpoint (as SIGINT stops ./sim: the progress callback) and resumed by a fresh scenario and
 * sim from the file to T, must end in the same final_state_hash, print the same summary (but
 * for its wall-clock figures) and leave the same CSV, byte for byte. A stepper or controller
 * without a state hook is proven stateless by the same comparison. Then the files that must be
 * refused: truncated, with a flipped byte, of another scenario, of other options. A run resumed to a
 * longer duration ends where a run of that duration ends (test_longer). */
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <unistd.h>

#include "check.h"
#include "mbs.h"

#define SCEN(name) MBS_SOURCE_DIR "/scenarios/" name
#define MAX_SETS 8

/* One run to compare: a scenario file, its overrides (a short duration, and for the steppers'
 * cases the stepper and a step it is stable at). */
typedef struct ckpt_case {
    const char *file;
    const char *sets[MAX_SETS];
} ckpt_case;

/* Every scenario, for a few controller periods. */
static const ckpt_case SCENARIOS[] = {
    {"chain10.ini", {"run.duration=0.3"}},
    {"compass_gait.ini", {"run.duration=0.3"}},
    {"passive_walker.ini", {"run.duration=0.2"}},
    {"rimless_wheel.ini", {"run.duration=0.3"}},
    {"robosimian_jump.ini", {"run.duration=1"}},
    {"robosimian_walk.ini", {"run.duration=1"}},
    {"romeo_walk.ini", {"run.duration=0.8"}},
    {"romeo_walk_quasistatic.ini", {"run.duration=0.3"}},
    {"solo_jump.ini", {"run.duration=0.6"}},
    {"solo_squat.ini", {"run.duration=1"}},
    {"solo_squat_tsid.ini", {"run.duration=1"}},
    {"solo_trot.ini", {"run.duration=0.5"}},
    {"solo_mpc_stand.ini", {"run.duration=0.3"}},
    /* past the first lift-off: the plan's switched-off contacts and the policy between plans */
    {"solo_mpc_trot.ini", {"run.duration=0.3"}},
    /* a short plan: the playback's state (flight, landing, tilt) is what a checkpoint holds */
    {"solo_jump_opt.ini", {"run.duration=0.4", "controller.iterations=3", "controller.horizon=0.3", "controller.apex_time=0.2"}},
    /* the one controller no scenario uses */
    {"solo_trot.ini", {"run.duration=0.1", "controller.type=pd"}},
};

/* A scenario each stepper runs (its own, or one it is stable on at the step given). */
static ckpt_case stepper_case(const char *name, char *buf, size_t n)
{
    ckpt_case c = {SCEN("solo_trot.ini"), {"run.duration=0.02", NULL}};
    snprintf(buf, n, "stepper.name=%s", name);
    c.sets[1] = buf;
    if (strcmp(name, "variational") == 0) {
        c.file = SCEN("chain10.ini");
        c.sets[0] = "run.duration=0.3";
    } else if (strcmp(name, "rigid") == 0) {
        c.file = SCEN("rimless_wheel.ini");
        c.sets[0] = "run.duration=0.3";
    } else if (strcmp(name, "nmdp") == 0) {
        c.file = SCEN("robosimian_walk.ini");
        c.sets[0] = "run.duration=1";
    } else if (strcmp(name, "mdp") == 0) {
        c.file = SCEN("robosimian_walk.ini");
        c.sets[0] = "run.duration=0.1";
        c.sets[2] = "stepper.dt=0.005";
    } else if (strcmp(name, "expo") == 0 || strcmp(name, "implicit_euler") == 0) {
        c.sets[0] = "run.duration=0.1";
        c.sets[2] = "stepper.dt=0.002";
    } else if (strcmp(name, "adaptive") == 0) {
        c.sets[0] = "run.duration=0.1";
    } else {
        /* the explicit schemes, at a step they are stable at with stiff contacts */
        c.sets[2] = "stepper.dt=1e-4";
    }
    return c;
}

static int nsets(const ckpt_case *c)
{
    int n = 0;
    while (n < MAX_SETS && c->sets[n]) n++;
    return n;
}

/* Stops the run at the first controller period at or after `at` (s), as SIGINT does. */
typedef struct stop_at {
    double at;
    /* copy_to: where the checkpoint file is copied at the first period from copy_at on, while
     * the run goes on (what a periodic checkpoint held then) */
    const char *copy_from, *copy_to;
    double copy_at;
} stop_at;

static int copy_file(const char *from, const char *to);

static int stop(void *user, double t, double duration)
{
    (void)duration;
    stop_at *st = user;
    if (st->copy_to && t >= st->copy_at - 1e-12) {
        copy_file(st->copy_from, st->copy_to);
        st->copy_to = NULL;
    }
    return st->at > 0 && t >= st->at - 1e-12;
}

/* The summary as text, without the wall-clock lines (which differ from run to run). */
static void summary_text(const mbs_sim_summary *s, char *out, size_t n)
{
    char text[8192];
    mbs_sim_summary_format(s, text, sizeof text);
    out[0] = '\0';
    size_t len = 0;
    for (char *line = strtok(text, "\n"); line; line = strtok(NULL, "\n")) {
        if (!strncmp(line, "wall_time_s:", 12) || !strncmp(line, "us_per_step:", 12) || !strncmp(line, "realtime_factor:", 16) ||
            !strncmp(line, "plan_wall_time_s:", 17) || !strncmp(line, "plan_iterations_per_s:", 22))
            continue;
        len += (size_t)snprintf(out + len, len < n ? n - len : 0, "%s\n", line);
    }
}

/* The whole file into a malloc'd buffer (*n bytes); NULL when it cannot be read. */
static unsigned char *slurp(const char *path, size_t *n)
{
    FILE *f = fopen(path, "rb");
    *n = 0;
    if (!f) return NULL;
    fseek(f, 0, SEEK_END);
    long len = ftell(f);
    fseek(f, 0, SEEK_SET);
    unsigned char *b = malloc((size_t)(len > 0 ? len : 1));
    if (b && fread(b, 1, (size_t)len, f) != (size_t)len) { free(b); b = NULL; }
    fclose(f);
    *n = (size_t)len;
    return b;
}

static int write_file(const char *path, const unsigned char *b, size_t n)
{
    FILE *f = fopen(path, "wb");
    if (!f) return 0;
    int ok = fwrite(b, 1, n, f) == n;
    return fclose(f) == 0 && ok;
}

static int copy_file(const char *from, const char *to)
{
    size_t n;
    unsigned char *b = slurp(from, &n);
    int ok = b && write_file(to, b, n);
    free(b);
    return ok;
}

/* One run of path with sets: checkpoint and resume as given (NULL: none), stopped at `at` when
 * at > 0. Returns mbs_sim_run's code, or -1 when the scenario or the sim could not be made. */
static int run_st(const char *path, const char *const *sets, int n, const char *csv, const char *ckpt, double every,
                  const char *resume, stop_at st, mbs_sim_summary *sum, mbs_error *err)
{
    mbs_scenario *sc = mbs_scenario_load(path, sets, n, err);
    if (!sc) return -1;
    mbs_error_free(err);   /* the scenario's warnings; the record goes on to the run */
    mbs_sim *sim = mbs_sim_new(sc, err);
    if (!sim) { mbs_scenario_free(sc); return -1; }
    mbs_sim_run_options opt = {.csv = csv, .progress = st.at > 0 || st.copy_to ? stop : NULL, .user = &st, .html = "",
                               .checkpoint = ckpt,
                               .checkpoint_every = every, .resume = resume};
    int rc = mbs_sim_run(sim, &opt, sum, err);
    mbs_sim_free(sim);
    mbs_scenario_free(sc);
    return rc;
}

static int run_one(const char *path, const char *const *sets, int n, const char *csv, const char *ckpt, double every,
                   const char *resume, double at, mbs_sim_summary *sum, mbs_error *err)
{
    stop_at st = {at, NULL, NULL, 0};
    return run_st(path, sets, n, csv, ckpt, every, resume, st, sum, err);
}

static char tmp_a[256], tmp_b[256], tmp_ck[256], tmp_bad[256];

/* Uninterrupted to T against stopped at T/2 and resumed, then (every > 0) against resumed from
 * the periodic checkpoint of a whole run. */
static void compare(const char *label, const ckpt_case *c, int periodic)
{
    int n = nsets(c);
    mbs_error err;
    mbs_sim_summary full, part, res;
    mbs_scenario *sc = mbs_scenario_load(c->file, c->sets, n, &err);
    CHECK(sc != NULL, "%s: %s", label, err.msg);
    if (!sc) return;
    mbs_error_free(&err);
    double T = mbs_scenario_duration(sc), cdt = mbs_scenario_controller_dt(sc);
    mbs_scenario_free(sc);
    int rc = run_one(c->file, c->sets, n, tmp_a, NULL, 0, NULL, 0, &full, &err);
    CHECK(rc == MBS_OK, "%s: the whole run: %s", label, err.msg);
    remove(tmp_ck);
    rc = run_one(c->file, c->sets, n, tmp_b, tmp_ck, 0, NULL, T / 2, &part, &err);
    CHECK(rc == MBS_ERR_INTERRUPTED && part.interrupted, "%s: the stopped run: rc %d: %s", label, rc, err.msg);
    CHECK(access(tmp_ck, F_OK) == 0, "%s: no checkpoint written when the run was stopped", label);
    rc = run_one(c->file, c->sets, n, tmp_b, NULL, 0, tmp_ck, 0, &res, &err);
    CHECK(rc == MBS_OK, "%s: the resumed run: %s", label, err.msg);
    if (rc != MBS_OK) return;
    if (getenv("MBS_TEST_VERBOSE"))
        printf("%s: %ld steps, %ld resumed at %g s, %016llx\n", label, full.steps, full.steps - part.steps, part.sim_time,
               full.final_state_hash);
    CHECK(full.final_state_hash == res.final_state_hash, "%s: final_state_hash %016llx uninterrupted, %016llx resumed", label,
          full.final_state_hash, res.final_state_hash);
    char ta[8192], tb[8192];
    summary_text(&full, ta, sizeof ta);
    summary_text(&res, tb, sizeof tb);
    CHECK(strcmp(ta, tb) == 0, "%s: the summaries differ:\n%s---\n%s", label, ta, tb);
    size_t na, nb;
    unsigned char *a = slurp(tmp_a, &na), *b = slurp(tmp_b, &nb);
    CHECK(a && b && na == nb && na > 0 && memcmp(a, b, na) == 0, "%s: the CSVs differ (%zu and %zu bytes)", label, na, nb);
    free(a);
    free(b);
    if (!periodic) return;
    /* checkpoints every T/2 of a whole run: the file holds the one at T/2 one period later (copied
     * then, since the run's end writes one too) */
    remove(tmp_ck);
    remove(tmp_bad);
    double every = cdt * floor(T / 2 / cdt + 0.5);
    stop_at st = {0, tmp_ck, tmp_bad, every + cdt};
    rc = run_st(c->file, c->sets, n, tmp_b, tmp_ck, every, NULL, st, &part, &err);
    CHECK(rc == MBS_OK && part.final_state_hash == full.final_state_hash, "%s: the run with checkpoints: %s", label, err.msg);
    rc = run_one(c->file, c->sets, n, tmp_b, NULL, 0, tmp_bad, 0, &res, &err);
    CHECK(rc == MBS_OK && res.final_state_hash == full.final_state_hash, "%s: resumed from a periodic checkpoint: %s", label,
          err.msg);
    a = slurp(tmp_a, &na);
    b = slurp(tmp_b, &nb);
    CHECK(a && b && na == nb && memcmp(a, b, na) == 0, "%s: the CSVs differ after a periodic checkpoint", label);
    free(a);
    free(b);
}

static void test_every_stepper(void)
{
    for (int i = 0; i < mbs_stepper_count(); i++) {
        const char *name = mbs_stepper_at(i)->name;
        char set[128], label[256];
        ckpt_case c = stepper_case(name, set, sizeof set);
        snprintf(label, sizeof label, "stepper %s (%s)", name, strrchr(c.file, '/') + 1);
        compare(label, &c, i == 0);
    }
}

static void test_every_scenario(void)
{
    for (size_t i = 0; i < sizeof SCENARIOS / sizeof *SCENARIOS; i++) {
        char path[1024], label[1200];
        ckpt_case c = SCENARIOS[i];
        snprintf(path, sizeof path, "%s", SCEN(""));
        strncat(path, c.file, sizeof path - strlen(path) - 1);
        c.file = path;
        snprintf(label, sizeof label, "scenario %s%s%s", SCENARIOS[i].file, c.sets[1] ? " --set " : "", c.sets[1] ? c.sets[1] : "");
        compare(label, &c, strcmp(SCENARIOS[i].file, "solo_squat.ini") == 0);
    }
    /* an MJCF model with ball joints, rotors and passive damping (tests/data/mjcf/ball_air.ini),
     * by the exponential integrator and the variational one */
    static const char *const schemes[2] = {"stepper.name=expo", "stepper.name=variational"};
    for (int k = 0; k < 2; k++) {
        ckpt_case c = {MBS_SOURCE_DIR "/tests/data/mjcf/ball_air.ini", {"run.duration=0.3", schemes[k]}};
        char label[128];
        snprintf(label, sizeof label, "ball_air.ini --set %s", schemes[k]);
        compare(label, &c, 0);
    }
}

/* A resume of `ck` refused with a message holding `what` (and the file's name). */
static void refused(const char *ck, const char *file, const char *const *sets, int n, const char *what)
{
    mbs_error err;
    mbs_sim_summary sum;
    int rc = run_one(file, sets, n, "", NULL, 0, ck, 0, &sum, &err);
    CHECK(rc == MBS_ERR_IO && strstr(err.msg, what) && strstr(err.msg, ck), "resuming %s: rc %d, expected '%s' in: %s", ck, rc,
          what, err.msg);
}

static void test_refused(void)
{
    const char *sets[] = {"run.duration=0.16"};
    mbs_error err;
    mbs_sim_summary sum;
    remove(tmp_ck);
    int rc = run_one(SCEN("solo_squat.ini"), sets, 1, "", tmp_ck, 0, NULL, 0.08, &sum, &err);
    CHECK(rc == MBS_ERR_INTERRUPTED, "the stopped run: %s", err.msg);
    size_t n;
    unsigned char *b = slurp(tmp_ck, &n);
    CHECK(b && n > 200, "the checkpoint: %zu bytes", n);
    if (!b) return;
    /* the file itself resumes */
    rc = run_one(SCEN("solo_squat.ini"), sets, 1, "", NULL, 0, tmp_ck, 0, &sum, &err);
    CHECK(rc == MBS_OK, "resume: %s", err.msg);
    /* truncated: at the end, in the payload, in the header */
    size_t cuts[] = {n - 1, n / 2, 20};
    for (int i = 0; i < 3; i++) {
        CHECK(write_file(tmp_bad, b, cuts[i]), "cannot write %s", tmp_bad);
        refused(tmp_bad, SCEN("solo_squat.ini"), sets, 1, "truncated");
    }
    /* a byte flipped anywhere but the magic: the checksum (or the header's own checks) */
    size_t at[] = {n / 2, n - 3, 40};
    for (int i = 0; i < 3; i++) {
        b[at[i]] ^= 0x10;
        CHECK(write_file(tmp_bad, b, n), "cannot write %s", tmp_bad);
        refused(tmp_bad, SCEN("solo_squat.ini"), sets, 1, "corrupted");
        b[at[i]] ^= 0x10;
    }
    b[0] = 'X';
    CHECK(write_file(tmp_bad, b, n), "cannot write %s", tmp_bad);
    refused(tmp_bad, SCEN("solo_squat.ini"), sets, 1, "not an mbs checkpoint");
    free(b);
    /* another scenario (another controller), other options of the same scenario, a missing file */
    refused(tmp_ck, SCEN("solo_trot.ini"), sets, 1, "written by stepper 'expo' and controller 'squat'");
    const char *other[] = {"run.duration=0.16", "controller.amplitude=0.021"};
    refused(tmp_ck, SCEN("solo_squat.ini"), other, 2, "another scenario or other options");
    /* a duration that ends before the checkpoint */
    const char *shorter[] = {"run.duration=0.04"};
    rc = run_one(SCEN("solo_squat.ini"), shorter, 1, "", NULL, 0, tmp_ck, 0, &sum, &err);
    CHECK(rc == MBS_ERR_ARG && strstr(err.msg, "after this run's end (run.duration = 0.04 s)"), "shorter: rc %d: %s", rc,
          err.msg);
    refused(tmp_ck, SCEN("chain10.ini"), sets, 1, "nq = ");
    remove(tmp_bad);
    refused(tmp_bad, SCEN("solo_squat.ini"), sets, 1, "cannot read the checkpoint");
    /* the same overrides in another order are the same run */
    const char *ab[] = {"run.duration=0.16", "stepper.dt=0.04"}, *ba[] = {"stepper.dt=0.04", "run.duration=0.16"};
    remove(tmp_ck);
    rc = run_one(SCEN("solo_squat.ini"), ab, 2, "", tmp_ck, 0, NULL, 0.08, &sum, &err);
    CHECK(rc == MBS_ERR_INTERRUPTED, "the stopped run: %s", err.msg);
    rc = run_one(SCEN("solo_squat.ini"), ba, 2, "", NULL, 0, tmp_ck, 0, &sum, &err);
    CHECK(rc == MBS_OK, "overrides in another order: %s", err.msg);
}

/* A run resumed to a longer duration ends bitwise where a run of that duration ends (state, summary
 * and CSV), from the checkpoint its end left and from one taken mid-run; the output files are not
 * part of the checkpoint's identity either. */
static void test_longer(void)
{
    const char *f = SCEN("solo_trot.ini");
    const char *whole[] = {"run.duration=0.4"}, *part[] = {"run.duration=0.2", "output.csv=/dev/null"};
    mbs_error err;
    mbs_sim_summary full, first, res;
    int rc = run_one(f, whole, 1, tmp_a, NULL, 0, NULL, 0, &full, &err);
    CHECK(rc == MBS_OK, "the 0.4 s run: %s", err.msg);
    for (int mid = 0; mid < 2; mid++) {
        remove(tmp_ck);
        /* to its end at 0.2 s, or stopped at 0.1 s */
        rc = run_one(f, part, 2, tmp_b, tmp_ck, 0, NULL, mid ? 0.1 : 0, &first, &err);
        CHECK(rc == (mid ? MBS_ERR_INTERRUPTED : MBS_OK) && access(tmp_ck, F_OK) == 0,
              "%s: rc %d, no checkpoint: %s", mid ? "stopped at 0.1 s" : "the 0.2 s run", rc, err.msg);
        rc = run_one(f, whole, 1, tmp_b, NULL, 0, tmp_ck, 0, &res, &err);
        CHECK(rc == MBS_OK && res.final_state_hash == full.final_state_hash,
              "%s, resumed to 0.4 s: rc %d, final_state_hash %016llx, a 0.4 s run's %016llx: %s", mid ? "stopped at 0.1 s" : "0.2 s",
              rc, res.final_state_hash, full.final_state_hash, err.msg);
        char ta[8192], tb[8192];
        summary_text(&full, ta, sizeof ta);
        summary_text(&res, tb, sizeof tb);
        CHECK(strcmp(ta, tb) == 0, "resumed to 0.4 s: the summaries differ:\n%s---\n%s", ta, tb);
        size_t na, nb;
        unsigned char *a = slurp(tmp_a, &na), *b = slurp(tmp_b, &nb);
        CHECK(a && b && na == nb && memcmp(a, b, na) == 0, "resumed to 0.4 s: the CSVs differ (%zu and %zu bytes)", na, nb);
        free(a);
        free(b);
    }
    /* a run cut short in its last period leaves no checkpoint at its end: it is not a period's start */
    const char *cut[] = {"run.duration=0.201", "stepper.dt=0.0005"};
    remove(tmp_ck);
    rc = run_one(f, cut, 2, "", tmp_ck, 0, NULL, 0, &first, &err);
    CHECK(rc == MBS_OK && access(tmp_ck, F_OK) != 0, "a run ending mid-period: rc %d, checkpoint written", rc);
}

/* final_state_hash is printed by every run, in hex, and tells two different runs apart. */
static void test_hash_key(void)
{
    const char *a[] = {"run.duration=0.04"}, *b[] = {"run.duration=0.08"};
    mbs_error err;
    mbs_sim_summary s1, s2;
    CHECK(run_one(SCEN("solo_squat.ini"), a, 1, "", NULL, 0, NULL, 0, &s1, &err) == MBS_OK, "%s", err.msg);
    CHECK(run_one(SCEN("solo_squat.ini"), b, 1, "", NULL, 0, NULL, 0, &s2, &err) == MBS_OK, "%s", err.msg);
    CHECK(s1.final_state_hash != s2.final_state_hash, "two runs, one hash");
    char text[8192], want[64];
    mbs_sim_summary_format(&s1, text, sizeof text);
    snprintf(want, sizeof want, "final_state_hash: %016llx\n", s1.final_state_hash);
    CHECK(strstr(text, want) != NULL, "no '%s' in the summary", want);
}

int main(void)
{
    int pid = (int)getpid();
    snprintf(tmp_a, sizeof tmp_a, "/tmp/mbs_test_ckpt_a_%d.csv", pid);
    snprintf(tmp_b, sizeof tmp_b, "/tmp/mbs_test_ckpt_b_%d.csv", pid);
    snprintf(tmp_ck, sizeof tmp_ck, "/tmp/mbs_test_ckpt_%d.ckpt", pid);
    snprintf(tmp_bad, sizeof tmp_bad, "/tmp/mbs_test_ckpt_bad_%d.ckpt", pid);
    RUN(test_hash_key);
    RUN(test_every_stepper);
    RUN(test_every_scenario);
    RUN(test_refused);
    RUN(test_longer);
    remove(tmp_a);
    remove(tmp_b);
    remove(tmp_ck);
    remove(tmp_bad);
    return check_summary("test_checkpoint");
}
