/* test_rigid.c — rigid contact (Zapolsky and Drumwright 2015): the inelastic impact model of
 * maximal dissipation (a dropped ball stops and stays, a sliding block decelerates at μ g), the
 * conservative advancement that keeps falling points out of the ground where a fixed step lets
 * them sink, and the rim geometry (a rolling wheel's contact point is its lowest rim point); the 3D
 * passive walker walks on its stepping stones and, from its stable limit cycle, on flat ground. */
#include <stdlib.h>

#include "check.h"
#include "testmodels.h"

static const double G0 = 9.81;

/* The test cube (2 kg, side 0.2 m) over the ground z = 0, friction μ; contacts: its four bottom
 * corners (corners = 1) or one sphere of radius 0.1 at its centre (a ball). */
static mbs_system *body(mbs_model **mo, int corners, double mu)
{
    mbs_error err;
    *mo = mbs_model_from_urdf(tm_path("tests/models/cube.urdf"), NULL, &err);
    if (!*mo) { fprintf(stderr, "%s\n", err.msg); return NULL; }
    mbs_system *s = mbs_system_new(*mo, 4, &err);
    mbs_material mat = {0, 0, 0, 0, mu};
    double n[3] = {0, 0, 1};
    mbs_system_add_plane(s, n, 0, &mat, &err);
    static const double corner[4][3] = {{0.1, 0.1, -0.1}, {-0.1, 0.1, -0.1}, {0.1, -0.1, -0.1}, {-0.1, -0.1, -0.1}};
    if (corners)
        for (int k = 0; k < 4; k++) mbs_system_add_contact(s, "cube", corner[k], 0, &err);
    else
        mbs_system_add_contact(s, "cube", NULL, 0.1, &err);
    return s;
}

static mbs_stepper *rigid(mbs_system *s, const char *advance, const char *predict)
{
    mbs_option o[2] = {tm_opt("advance", advance), tm_opt("predict", predict)};
    mbs_error err;
    mbs_system_finalize(s, NULL);
    mbs_stepper *st = mbs_stepper_new("rigid", s, o, 2, &err);
    if (!st) fprintf(stderr, "%s\n", err.msg);
    return st;
}

/* A ball thrown down at the ground stops on it: after the impact its height stays at its radius
 * (no bounce: inelastic) and its velocity is zero. */
static void test_ball_stops(void)
{
    mbs_model *m;
    mbs_system *s = body(&m, 0, 1);
    mbs_stepper *st = rigid(s, "1", "1");
    CHECK(st != NULL, "st != NULL");
    double q[7] = {0.0, 0, 0.6, 0, 0, 0, 1}, v[6] = {0, 0, -3, 0, 0, 0};
    mbs_system_set_state(s, q, v, 0);
    double zmin = 1, zmax_after = 0;
    int landed = 0;
    for (int i = 0; i < 1000; i++) {
        CHECK(mbs_stepper_step(st, 1e-3, NULL) == MBS_OK, "mbs_stepper_step(st, 1e-3, NULL) == MBS_OK");
        const double *x = mbs_system_q(s);
        zmin = fmin(zmin, x[2]);
        if (landed) zmax_after = fmax(zmax_after, x[2]);
        if (x[2] < 0.1 + 1e-9) landed = 1;
    }
    const double *x = mbs_system_q(s), *w = mbs_system_v(s);
    CHECK(landed, "landed");
    CHECK(fabs(zmin - (0.1)) <= 1e-9, "zmin = %.12g, expected %.12g", zmin, (double)(0.1));
    CHECK(zmax_after < 0.1 + 1e-9, "zmax_after < 0.1 + 1e-9");
    CHECK(fabs(x[2] - (0.1)) <= 1e-9, "x[2] = %.12g, expected %.12g", x[2], (double)(0.1));
    CHECK(fabs(w[2]) < 1e-9, "fabs(w[2]) < 1e-9");
    mbs_stepper_free(st);
    mbs_system_free(s);
    mbs_model_free(m);
}

/* A block sliding on its four corners loses μ g of speed per second (Coulomb), to round-off, and
 * then stays at rest (static friction). */
static void test_block_decelerates(void)
{
    for (int t = 0; t < 2; t++) {
        double mu = t ? 0.8 : 0.3, v0 = 2;
        mbs_model *m;
        mbs_system *s = body(&m, 1, mu);
        mbs_stepper *st = rigid(s, "1", "1");
        double q[7] = {0, 0, 0.1, 0, 0, 0, 1}, v[6] = {v0, 0, 0, 0, 0, 0};
        mbs_system_set_state(s, q, v, 0);
        const double h = 1e-3, tstop = v0 / (mu * G0);
        int n = (int)(0.5 * tstop / h);
        for (int i = 0; i < n; i++) CHECK(mbs_stepper_step(st, h, NULL) == MBS_OK, "mbs_stepper_step(st, h, NULL) == MBS_OK");
        double vx = mbs_system_v(s)[0], decel = (v0 - vx) / (n * h);
        printf("  mu %.1f: deceleration %.9f m/s^2 (mu g = %.9f)\n", mu, decel, mu * G0);
        CHECK(fabs(decel - (mu * G0)) <= 1e-6 * mu * G0, "decel = %.12g, expected %.12g", decel, (double)(mu * G0));
        CHECK(fabs(mbs_system_q(s)[2] - 0.1) < 1e-9, "fabs(mbs_system_q(s)[2] - 0.1) < 1e-9");
        for (int i = 0; i < n + 200; i++) CHECK(mbs_stepper_step(st, h, NULL) == MBS_OK, "mbs_stepper_step(st, h, NULL) == MBS_OK");
        CHECK(fabs(mbs_system_v(s)[0]) < 1e-9, "fabs(mbs_system_v(s)[0]) < 1e-9");
        /* the distance is that of a uniform deceleration, to one step of the scheme */
        double dist = mbs_system_q(s)[0], expect = v0 * v0 / (2 * mu * G0);
        CHECK(fabs(dist - expect) < v0 * h * 1.01, "fabs(dist - expect) < v0 * h * 1.01");
        mbs_stepper_free(st);
        mbs_system_free(s);
        mbs_model_free(m);
    }
}

/* Random drop heights and speeds at a fixed step of 10 ms: with conservative advancement the ball
 * never sinks by more than 1e-9 m; the plain fixed step (no advancement, no prediction) sinks by
 * up to its speed times the step. Frictionless, so that the ball slides rather than rolls: a ball
 * rolling at ω sinks by about r ω² h² / (2 erp) however it landed, the first-order error of eq. 1's
 * constant twist about the contact point. */
static void test_conservative_advancement(void)
{
    unsigned long long seed = 11;
    double worst_ca = 0, worst_fixed = 0;
    int substeps = 0;
    for (int trial = 0; trial < 20; trial++) {
        double z = tm_uniform(&seed, 0.12, 1.0), vz = -tm_uniform(&seed, 0, 20), vx = tm_uniform(&seed, -1, 1);
        double wy = tm_uniform(&seed, -10, 10);   /* a spin about y: the ball's own rotation */
        for (int ca = 0; ca < 2; ca++) {
            mbs_model *m;
            mbs_system *s = body(&m, 0, 0);
            mbs_stepper *st = rigid(s, ca ? "1" : "0", ca ? "1" : "0");
            double q[7] = {0, 0, z, 0, 0, 0, 1}, v[6] = {vx, 0, vz, 0, wy, 0};
            mbs_system_set_state(s, q, v, 0);
            double sink = 0;
            for (int i = 0; i < 60; i++) {
                mbs_step_stats stats;
                int rc = mbs_stepper_step(st, 1e-2, &stats);
                CHECK(rc == MBS_OK, "step: %s", mbs_stepper_last_error(st)->msg);
                if (ca) substeps += stats.substeps;
                sink = fmax(sink, 0.1 - mbs_system_q(s)[2]);
            }
            if (ca) worst_ca = check_worst(worst_ca, sink);
            else worst_fixed = check_worst(worst_fixed, sink);
            mbs_stepper_free(st);
            mbs_system_free(s);
            mbs_model_free(m);
        }
    }
    printf("  deepest sink: %.3g m with conservative advancement (%d sub-steps in 20 x 60 steps), %.3g m without\n",
           worst_ca, substeps, worst_fixed);
    CHECK(worst_ca < 1e-9, "worst_ca < 1e-9");
    CHECK(worst_fixed > 1e-2, "worst_fixed > 1e-2");
}

/* The rimless wheel (urdf/rimless_wheel.urdf, as scenarios/rimless_wheel.ini) on a 0.08 rad
 * slope: each spoke's touchdown keeps the angular momentum about the new contact, so the rate after
 * it is c = (I + m l² cos 2α) / (I + m l²) times the rate before (1 − c² of the kinetic energy
 * lost), and from rest the wheel settles on the rolling cycle whose rate after an impact is
 * ω⁺ = c sqrt(2 m g l (cos(α − γ) − cos(α + γ)) / ((I + m l²)(1 − c²))). */
static void test_rimless_wheel(void)
{
    mbs_error err;
    mbs_urdf_options uo = {.floating_base = MBS_ROOT_PLANAR};
    mbs_model *m = mbs_model_from_urdf(tm_path("urdf/rimless_wheel.urdf"), &uo, &err);
    CHECK(m != NULL, "load: %s", err.msg);
    if (!m) return;
    const double gam = 0.08, I = 1, ml2 = 1, alpha = 3.14159265358979323846 / 8;
    double g[3] = {G0 * sin(gam), 0, -G0 * cos(gam)};
    mbs_model_set_gravity(m, g);
    mbs_system *s = mbs_system_new(m, 8, &err);
    mbs_material mat = {0, 0, 0, 0, 100};
    double n[3] = {0, 0, 1}, tip[3] = {0, 0, -1};
    mbs_system_add_plane(s, n, 0, &mat, &err);
    for (int k = 1; k <= 8; k++) {
        char name[32];
        snprintf(name, sizeof name, "spoke%d", k);
        mbs_system_add_contact(s, name, tip, 0, &err);
    }
    mbs_stepper *st = rigid(s, "1", "1");
    double q[4] = {1, 0, 1, 0};   /* [z x cos θ sin θ]: spoke 1 along the normal, at rest */
    mbs_system_set_state(s, q, NULL, 0);
    /* the spokes of the file are 0.7854 rad apart (π/4 to 4 digits) */
    const double c = (I + ml2 * cos(0.7854)) / (I + ml2);
    const double wplus = c * sqrt(2 * G0 * (cos(alpha - gam) - cos(alpha + gam)) / ((I + ml2) * (1 - c * c)));
    const double h = 1e-4;
    int prev[8] = {0}, impacts = 0, until = -1;
    double prod = 1, worst = 0, wlast = 0;
    for (int i = 0; i < 400000 && impacts < 30; i++) {
        double w0 = mbs_system_v(s)[2];
        CHECK(mbs_stepper_step(st, h, NULL) == MBS_OK, "step: %s", mbs_stepper_last_error(st)->msg);
        double w1 = mbs_system_v(s)[2];
        for (int k = 0; k < 8; k++) {
            mbs_contact_info ci;
            mbs_system_contact(s, k, &ci);
            /* a spoke enters the 1 mm band: its impact follows within a few steps */
            if (ci.active && !prev[k] && i > 0) { until = i + 40; prod = 1; impacts++; }
            prev[k] = ci.active;
        }
        /* the impact's steps are those that change the rate by more than gravity can (1e-4 of it a
         * step): the impact may spread over the arrival (a frictionless push that stops the tip at
         * the surface) and the landing */
        if (i <= until && fabs(w1 / w0 - 1) > 1e-3) prod *= w1 / w0;
        if (i == until) {
            if (impacts > 1) worst = check_worst(worst, fabs(prod - c));
            wlast = w1;
        }
    }
    printf("  rimless wheel: %d impacts, rate ratio within %.2g of c = %.6f; rate 4 ms after the last %.5f rad/s "
           "(cycle: %.5f after the impact)\n", impacts, worst, c, wlast, wplus);
    CHECK(impacts == 30, "%d impacts", impacts);
    CHECK(worst < 1e-3, "impact rate ratio off by %g", worst);
    /* 4 ms after the impact gravity has slowed the wheel by about 1.4 rad/s² × 4 ms */
    CHECK(fabs(wlast - wplus) < 1e-2 * wplus, "rate after impact %g, cycle %g", wlast, wplus);
    mbs_stepper_free(st);
    mbs_system_free(s);
    mbs_model_free(m);
}

/* The 3D passive walker (scenarios/passive_walker.ini: rim feet, rigid contact, stepping stones):
 * in 12 s at least 10 real steps — touchdowns alternating between the feet, each landing foot ahead
 * of the other one (downhill, toward −x) — and the legs never tilted like a fall. */
typedef struct step_log {
    mbs_sim *sim;
    int prev[2], steps, bad, last;
    double x[2], max_tilt;
    double t_step, gap_min, gap_max;   /* the last real step's time; the least and largest time between two */
} step_log;

static void log_steps(void *user, double t, const double *q, const double *v, double *tau)
{
    (void)v; (void)tau;
    step_log *L = user;
    mbs_system *s = mbs_sim_system(L->sim);
    double czz = 1 - 2 * (q[3] * q[3] + q[4] * q[4]);
    L->max_tilt = fmax(L->max_tilt, acos(fmax(-1, fmin(1, czz))));
    for (int k = 0; k < 2; k++) {
        mbs_contact_info ci;
        mbs_system_contact(s, k, &ci);
        /* the right foot touches at the start too, behind: what touches in the first 50 ms is the
         * initial stance, not a step */
        if (ci.active && !L->prev[k] && t > 0.05) {
            /* a real step: the other foot was the last to land and this one lands ahead of it */
            if (L->last == 1 - k && ci.position[0] < L->x[1 - k] - 0.05) {
                if (L->steps++) {
                    L->gap_min = fmin(L->gap_min, t - L->t_step);
                    L->gap_max = fmax(L->gap_max, t - L->t_step);
                }
                L->t_step = t;
            } else if (L->last >= 0) L->bad++;
            L->x[k] = ci.position[0];
            L->last = k;
        }
        L->prev[k] = ci.active;
    }
}

/* Runs a walker scenario (with `sets`) to its end, logging its steps into *L (the left foot stands
 * at the origin at the start; the right one touches too, behind); 0 when it ran. */
static int walk(const char *scenario, const char **sets, int nsets, step_log *L, mbs_sim_summary *sum)
{
    mbs_error err;
    mbs_scenario *sc = mbs_scenario_load(tm_path(scenario), sets, nsets, &err);
    CHECK(sc != NULL, "%s", err.msg);
    mbs_error_free(&err);
    if (!sc) return -1;
    mbs_sim *sim = mbs_sim_new(sc, &err);
    CHECK(sim != NULL, "%s", err.msg);
    int rc = -1;
    if (sim) {
        *L = (step_log){sim, {0, 0}, 0, 0, 0, {0, 0}, 0, 0, INFINITY, 0};
        mbs_sim_set_control(sim, log_steps, L);
        mbs_sim_run_options o = {.csv = ""};
        rc = mbs_sim_run(sim, &o, sum, &err) == MBS_OK && !sum->diverged ? 0 : -1;
        CHECK(rc == 0, "%s: %s", scenario, err.msg);
    }
    mbs_sim_free(sim);
    mbs_scenario_free(sc);
    return rc;
}

static void test_passive_walker(void)
{
    step_log L;
    mbs_sim_summary sum;
    const char *sets[] = {"run.duration=12"};
    if (walk("scenarios/passive_walker.ini", sets, 1, &L, &sum)) return;
    printf("  passive walker, 12 s: %d real steps, %d other touchdowns, summary touchdowns %ld, base at x = %.3f, "
           "largest leg tilt %.1f deg\n", L.steps, L.bad, sum.touchdowns, sum.base_final[0], L.max_tilt * 180 / 3.14159265358979);
    CHECK(L.steps >= 10, "%d real steps", L.steps);
    CHECK(L.bad == 0, "%d touchdowns that are no step", L.bad);
    CHECK(L.max_tilt < 0.7, "leg tilted %g rad", L.max_tilt);
}

/* The walker started on its stable limit cycle (scenarios/passive_walker_cycle.ini: the state the
 * walker tool writes, docs/passive_walker.md section 6) on flat ground, no stepping stones: over the
 * scenario's 22 s at least 20 real steps, none of them a stub, one every step period of the cycle
 * (1.030) from the first — it starts on the cycle, not in a transient toward it. */
static void test_passive_walker_cycle(void)
{
    step_log L;
    mbs_sim_summary sum;
    if (walk("scenarios/passive_walker_cycle.ini", NULL, 0, &L, &sum)) return;
    printf("  passive walker on its cycle, flat ground, %g s: %d real steps, %d other touchdowns, %.4f to %.4f s apart, "
           "base at x = %.3f, largest leg tilt %.1f deg\n", sum.sim_time, L.steps, L.bad, L.gap_min, L.gap_max, sum.base_final[0],
           L.max_tilt * 180 / 3.14159265358979);
    CHECK(L.steps >= 20, "%d real steps on flat ground from the limit cycle, expected at least 20", L.steps);
    CHECK(L.bad == 0, "%d touchdowns that are no step", L.bad);
    CHECK(L.gap_min > 1.02 && L.gap_max < 1.04, "steps %.4f to %.4f s apart, the cycle's period is 1.030", L.gap_min, L.gap_max);
    CHECK(L.max_tilt < 0.7, "leg tilted %g rad", L.max_tilt);
}

int main(void)
{
    RUN(test_ball_stops);
    RUN(test_block_decelerates);
    RUN(test_conservative_advancement);
    RUN(test_rimless_wheel);
    RUN(test_passive_walker);
    RUN(test_passive_walker_cycle);
    return check_summary("test_rigid");
}
