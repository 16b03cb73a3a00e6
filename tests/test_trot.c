/* test_trot.c — landings without chatter. The default trot (scenarios/solo_trot.ini as shipped,
 * no override) does not chatter: each foot touches down at most once per gait cycle (plus one), the run is stable and
 * travels at least 0.5 m. A touch-down is a contact point going from free to touching between
 * two controller periods, read through the public API (mbs_system_contact) from a control
 * callback. With an inaccurate exponential (expo's max_mat_mult = 0) a landing foot switched
 * on and off on alternate steps: about 40 touch-downs per foot in 5 s for 19 cycles. One 5 s run.
 * And the jump (scenarios/solo_jump.ini, expo at the controller's 10 ms) lands as often as the
 * same scenario at 0.1 ms, as shipped and in held-out variants of its contact and step: before expo
 * split its steps at touch-downs, a landing foot touched, left and touched again on alternate steps
 * (9 touch-downs per foot where 0.1 ms counts 3), and with the rest of a landing's step taken in one
 * sub-step (landing_substeps = 1) the feet leave the ground at the next step's start and land again
 * inside that step, which the summary must count (it sees the contacts between sub-steps). And a
 * run's contact events (mbs_sim_run_options.contact_event) are the ones its summary counts. */
#include <stdlib.h>

#include "check.h"
#include "testmodels.h"

#define SCEN(name) MBS_SOURCE_DIR "/scenarios/" name

typedef struct counter {
    mbs_sim *sim;
    int n, started;
    int touching[8];
    long touchdowns[8];
} counter;

/* The contacts' state now against the last period's: a free point now touching is a touch-down. */
static void count(counter *c)
{
    const mbs_system *s = mbs_sim_system(c->sim);
    for (int i = 0; i < c->n; i++) {
        mbs_contact_info info;
        if (mbs_system_contact(s, i, &info) != MBS_OK) continue;
        if (c->started && info.active && !c->touching[i]) c->touchdowns[i]++;
        c->touching[i] = info.active;
    }
    c->started = 1;
}

static void on_period(void *user, double t, const double *q, const double *v, double *tau)
{
    (void)t, (void)q, (void)v, (void)tau;
    count(user);
}

/* A number option of the scenario's controller, or the controller's default for it. */
static double controller_option(const mbs_scenario *sc, const char *key)
{
    mbs_option opts[MBS_SIM_MAX_OPTIONS];
    int n = mbs_scenario_options(sc, "controller", opts, MBS_SIM_MAX_OPTIONS);
    for (int i = 0; i < n; i++)
        if (strcmp(opts[i].key, key) == 0) return opts[i].value;
    const mbs_scheme_info *info = mbs_controller_find(mbs_scenario_controller(sc));
    const mbs_option_spec *spec = info ? mbs_options_find(info->options, key, NULL) : NULL;
    return spec && spec->def ? atof(spec->def) : NAN;
}

static void test_default_trot(void)
{
    mbs_error err;
    mbs_scenario *sc = mbs_scenario_load(SCEN("solo_trot.ini"), NULL, 0, &err);
    if (!sc) { CHECK(0, "solo_trot.ini: %s", err.msg); return; }
    CHECK(strcmp(mbs_scenario_controller(sc), "trot") == 0, "solo_trot.ini's controller is %s", mbs_scenario_controller(sc));
    /* the gait's cycles: one touch-down per foot per period once the settling time is over */
    double period = controller_option(sc, "period"), settle = controller_option(sc, "settle");
    double duration = mbs_scenario_duration(sc);
    long cycles = (long)ceil((duration - settle) / period - 1e-9);
    CHECK(period > 0 && cycles > 5, "period %g, settle %g, duration %g: no gait to count", period, settle, duration);
    mbs_sim *sim = mbs_sim_new(sc, &err);
    if (!sim) { CHECK(0, "sim: %s", err.msg); mbs_scenario_free(sc); return; }
    counter c = {sim, mbs_system_ncontacts(mbs_sim_system(sim)), 0, {0}, {0}};
    CHECK(c.n == 4, "%d contact points, not Solo's four feet", c.n);
    mbs_sim_set_control(sim, on_period, &c);
    mbs_sim_summary sum;
    mbs_sim_run_options ro = {.csv = "", .html = ""};
    int rc = mbs_sim_run(sim, &ro, &sum, &err);
    count(&c);   /* the last period's steps */
    CHECK(rc == MBS_OK && !sum.diverged && !sum.left_box, "status not stable: %s", sum.reason);
    CHECK(sum.distance_m >= 0.5, "travelled %.3f m, less than 0.5", sum.distance_m);
    long total = 0;
    for (int i = 0; i < c.n; i++) {
        CHECK(c.touchdowns[i] <= cycles + 1, "foot %d touched down %ld times in %g s, for %ld gait cycles", i,
              c.touchdowns[i], duration, cycles);
        /* and it did walk: every foot landed after nearly every swing */
        CHECK(c.touchdowns[i] >= cycles - 2, "foot %d touched down only %ld times in %ld cycles", i, c.touchdowns[i], cycles);
        total += c.touchdowns[i];
    }
    CHECK(total == sum.touchdowns, "%ld touch-downs counted here, %ld in the summary", total, sum.touchdowns);
    printf("default trot: touch-downs per foot %ld %ld %ld %ld for %ld cycles, %.3f m, %.2f us per step, %s\n",
           c.touchdowns[0], c.touchdowns[1], c.touchdowns[2], c.touchdowns[3], cycles, sum.distance_m, sum.us_per_step,
           sum.diverged ? "diverged" : "stable");
    mbs_sim_free(sim);
    mbs_scenario_free(sc);
}

/* The summary of scenario file with the overrides set[0..n) and, if dt > 0, stepper.dt = dt. */
static int scenario_run(const char *file, const char *const *set, int n, double dt, mbs_sim_summary *sum)
{
    const char *ov[8];
    char step[64];
    for (int i = 0; i < n; i++) ov[i] = set[i];
    if (dt > 0) {
        snprintf(step, sizeof step, "stepper.dt=%.17g", dt);
        ov[n++] = step;
    }
    mbs_error err;
    mbs_scenario *sc = mbs_scenario_load(file, ov, n, &err);
    if (!sc) { CHECK(0, "%s: %s", file, err.msg); return 1; }
    mbs_error_free(&err);
    mbs_sim *sim = mbs_sim_new(sc, &err);
    int rc = sim ? mbs_sim_run(sim, &(mbs_sim_run_options){.csv = "", .html = ""}, sum, &err) : MBS_ERR_ARG;
    CHECK(rc == MBS_OK, "%s: %s", file, err.msg);
    mbs_sim_free(sim);
    mbs_scenario_free(sc);
    return rc != MBS_OK;
}

static int jump_run(const char *const *set, int n, double dt, mbs_sim_summary *sum)
{
    return scenario_run(SCEN("solo_jump.ini"), set, n, dt, sum);
}

static void test_jump_landings(void)
{
    static const char *const variants[][2] = {
        {NULL}, {"contact.stiffness=5e4"}, {"contact.stiffness=2e5"}, {"contact.damping=150"},
        {"contact.damping=600"}, {"contact.friction=0.5"}, {"stepper.dt=0.005"},
    };
    for (size_t k = 0; k < sizeof variants / sizeof *variants; k++) {
        int n = variants[k][0] != NULL;
        const char *label = n ? variants[k][0] : "as shipped";
        mbs_sim_summary ref, sum;
        if (jump_run(variants[k], n, 1e-4, &ref) || jump_run(variants[k], n, 0, &sum)) return;
        CHECK(!sum.diverged && !ref.diverged, "%s: diverged", label);
        CHECK(sum.touchdowns == ref.touchdowns, "%s: %ld touch-downs, %ld at 0.1 ms", label, sum.touchdowns, ref.touchdowns);
        printf("solo_jump %s: %ld touch-downs (0.1 ms: %ld), peak force %.1f N (0.1 ms: %.1f)\n", label, sum.touchdowns,
               ref.touchdowns, sum.max_contact_force, ref.max_contact_force);
    }
}

/* A bounce that begins at a step's start and ends inside the step is counted: with the rest of a
 * landing's step in one sub-step the shipped jump's feet are free at the next step's start and land
 * again a few milliseconds into it. The summary read after whole steps alone saw the feet touching
 * at both ends and counted one landing each, as the reference does. */
static void test_bounce_inside_a_step(void)
{
    const char *one[] = {"expo.landing_substeps=1"};
    mbs_sim_summary ref, sum;
    if (jump_run(NULL, 0, 1e-4, &ref) || jump_run(one, 1, 0, &sum)) return;
    CHECK(sum.touchdowns > ref.touchdowns, "landing_substeps = 1: %ld touch-downs, %ld at 0.1 ms: the bounce was not counted",
          sum.touchdowns, ref.touchdowns);
    printf("solo_jump, landing_substeps = 1: %ld touch-downs (0.1 ms: %ld)\n", sum.touchdowns, ref.touchdowns);
}

/* A hop that begins and ends inside one step is seen when a corner leaves before another lands:
 * Romeo's walk with the contact stiffness doubled, at its 5 ms step, against part h's reference
 * (expo at 0.1 ms without splitting). The left sole rests on one corner, leaves the ground for
 * 4.8 ms at 1.68 s in the reference and lands on another corner: with the step split only at
 * that landing, the sole was never seen in the air (3 foot touch-downs against 4). */
static void test_hop_inside_a_step(void)
{
    const char *stiff[] = {"contact.stiffness=2e5", "expo.split=0"};
    mbs_sim_summary ref, sum;
    if (scenario_run(SCEN("romeo_walk.ini"), stiff, 2, 1e-4, &ref) || scenario_run(SCEN("romeo_walk.ini"), stiff, 1, 0, &sum))
        return;
    CHECK(!sum.diverged && !ref.diverged, "romeo_walk, stiffness 2e5: diverged");
    CHECK(sum.foot_touchdowns == ref.foot_touchdowns, "romeo_walk, stiffness 2e5 at 5 ms: %ld foot touch-downs, %ld at 0.1 ms",
          sum.foot_touchdowns, ref.foot_touchdowns);
    printf("romeo_walk, stiffness 2e5: %ld foot touch-downs (0.1 ms: %ld)\n", sum.foot_touchdowns, ref.foot_touchdowns);
}

/* The run's contact events (mbs_sim_run_options.contact_event) are what its summary counts: Romeo's
 * walk at its 5 ms step, which expo splits at touch-downs and lift-offs. Every point's events
 * alternate from its initial state, their times rise and stay within the run, the touch-downs among
 * them add up to the summary's points and (a foot being the points on one frame) feet, and some
 * fall between steps: the sub-steps' times, finer than a step. */
enum { MAX_EVENTS = 512 };
typedef struct event_log {
    int n, overflow;
    double t[MAX_EVENTS];
    int contact[MAX_EVENTS], touching[MAX_EVENTS];
} event_log;

static void on_event(void *user, double t, int contact, int touching)
{
    event_log *log = user;
    if (log->n == MAX_EVENTS) { log->overflow = 1; return; }
    log->t[log->n] = t;
    log->contact[log->n] = contact;
    log->touching[log->n++] = touching;
}

static void test_contact_events(void)
{
    mbs_error err;
    mbs_scenario *sc = mbs_scenario_load(SCEN("romeo_walk.ini"), NULL, 0, &err);
    if (!sc) { CHECK(0, "romeo_walk.ini: %s", err.msg); return; }
    mbs_error_free(&err);
    mbs_sim *sim = mbs_sim_new(sc, &err);
    if (!sim) { CHECK(0, "sim: %s", err.msg); mbs_scenario_free(sc); return; }
    const mbs_system *s = mbs_sim_system(sim);
    int n = mbs_system_ncontacts(s), touching[8], frame[8];
    CHECK(n == 8, "%d contact points, not Romeo's eight sole corners", n);
    for (int i = 0; i < n && i < 8; i++) {
        mbs_contact_info info;
        mbs_system_contact(s, i, &info);
        touching[i] = info.active;
        frame[i] = info.frame;
    }
    static event_log log;
    log.n = log.overflow = 0;
    mbs_sim_summary sum;
    int rc = mbs_sim_run(sim, &(mbs_sim_run_options){.csv = "", .html = "", .user = &log, .contact_event = on_event}, &sum, &err);
    CHECK(rc == MBS_OK && !sum.diverged, "romeo_walk: %s", rc == MBS_OK ? sum.reason : err.msg);
    CHECK(!log.overflow, "more than %d contact events", MAX_EVENTS);
    long points = 0, feet = 0;
    int alternate = 1, rising = 1, between = 0;
    for (int k = 0; k < log.n; k++) {
        int c = log.contact[k];
        if (c < 0 || c >= n) { CHECK(0, "event %d names contact %d of %d", k, c, n); break; }
        alternate &= log.touching[k] == !touching[c];
        rising &= log.t[k] > 0 && log.t[k] <= sum.sim_time + 1e-12 && (k == 0 || log.t[k] >= log.t[k - 1]);
        /* a sub-step's end: not a whole number of steps */
        double steps = log.t[k] / sum.dt;
        between += fabs(steps - round(steps)) > 1e-6;
        if (log.touching[k]) {
            points++;
            int foot_touching = 0;
            for (int i = 0; i < n; i++) foot_touching |= frame[i] == frame[c] && touching[i];
            feet += !foot_touching;
        }
        touching[c] = log.touching[k];
    }
    CHECK(alternate, "a contact's events do not alternate between touching and free");
    CHECK(rising, "event times not rising within (0, %g] s", sum.sim_time);
    CHECK(points == sum.touchdowns, "%ld touch-downs among the events, %ld in the summary", points, sum.touchdowns);
    CHECK(feet == sum.foot_touchdowns, "%ld foot touch-downs among the events, %ld in the summary", feet, sum.foot_touchdowns);
    CHECK(between > 0, "no event between steps: the sub-steps were not seen");
    printf("romeo_walk: %d contact events, %ld point and %ld foot touch-downs (summary %ld, %ld), %d between steps\n", log.n,
           points, feet, sum.touchdowns, sum.foot_touchdowns, between);
    mbs_sim_free(sim);
    mbs_scenario_free(sc);
}

int main(void)
{
    RUN(test_default_trot);
    RUN(test_jump_landings);
    RUN(test_bounce_inside_a_step);
    RUN(test_hop_inside_a_step);
    RUN(test_contact_events);
    return check_summary("test_trot");
}
