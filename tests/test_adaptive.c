/* test_adaptive.c — the error-controlled stepper of Zapolsky and Drumwright 2015 (Algorithm 2) on a
 * smooth pendulum: the step-doubling estimate of the kinetic-energy error has the order of a
 * first-order scheme's local error, Richardson extrapolation raises the observed global order from
 * 1 to 2, and a tighter tolerance takes shorter steps and keeps the energy better. Also the
 * exponential dissipation that any stepper takes. */
#include <stdlib.h>

#include "check.h"
#include "testmodels.h"

static mbs_system *pendulum(mbs_model **mo, double q0)
{
    mbs_error err;
    mbs_urdf_options uo = {.floating_base = 0};
    *mo = mbs_model_from_urdf(tm_path("tests/models/pendulum.urdf"), &uo, &err);
    if (!*mo) { fprintf(stderr, "%s\n", err.msg); return NULL; }
    mbs_system *s = mbs_system_new(*mo, 0, &err);
    mbs_system_set_state(s, &q0, NULL, 0);
    return s;
}

static mbs_stepper *make(mbs_system *s, const char *name, const mbs_option *o, int n)
{
    mbs_error err;
    mbs_system_finalize(s, NULL);
    mbs_stepper *st = mbs_stepper_new(name, s, o, n, &err);
    if (!st) fprintf(stderr, "%s: %s\n", name, err.msg);
    return st;
}

static double energy(mbs_system *s, mbs_data *d)
{
    const mbs_model *m = mbs_system_model(s);
    return mbs_kinetic_energy(m, d, mbs_system_q(s), mbs_system_v(s)) + mbs_potential_energy(m, d, mbs_system_q(s));
}

/* The estimate of lines 18–20, |E' − E''| of one step of h against two of h/2 of the first-order
 * scheme, shrinks as h² (a local error of order 2): ratios near 4 when h halves. */
static void test_estimate_order(void)
{
    mbs_model *m;
    mbs_system *s = pendulum(&m, 1.0);
    mbs_stepper *st = make(s, "rigid", NULL, 0);
    double q0 = 1.0, v0 = 0.5, e[4];
    mbs_data *d = mbs_data_new(m);
    for (int i = 0; i < 4; i++) {
        double h = 0.004 / (1 << i);
        mbs_system_set_state(s, &q0, &v0, 0);
        mbs_stepper_step(st, h, NULL);
        double E1 = mbs_kinetic_energy(m, d, mbs_system_q(s), mbs_system_v(s));
        mbs_system_set_state(s, &q0, &v0, 0);
        mbs_stepper_step(st, h / 2, NULL);
        mbs_stepper_step(st, h / 2, NULL);
        double E2 = mbs_kinetic_energy(m, d, mbs_system_q(s), mbs_system_v(s));
        e[i] = fabs(E1 - E2);
    }
    for (int i = 0; i < 3; i++) {
        double ratio = e[i] / e[i + 1];
        printf("  h = %.4g s: |e_E| = %.4g J, ratio to h/2: %.3f\n", 0.004 / (1 << i), e[i], ratio);
        CHECK(ratio > 3.6 && ratio < 4.4, "estimate ratio %.3f not near 4 at h = %g", ratio, 0.004 / (1 << i));
    }
    mbs_data_free(d);
    mbs_stepper_free(st);
    mbs_system_free(s);
    mbs_model_free(m);
}

/* Error at t = 1 s of the pendulum from 1 rad, at a constant step h (error control off: a
 * tolerance nothing reaches, no advancement), against RK4 at 1e-5 s. */
static double global_error(double h, const char *richardson, double qref)
{
    mbs_model *m;
    mbs_system *s = pendulum(&m, 1.0);
    mbs_option o[4] = {tm_opt("richardson", richardson), MBS_OPTION("rel_tol", 1), MBS_OPTION("abs_tol", 1e9), MBS_OPTION("conservative", 0)};
    mbs_stepper *st = make(s, "adaptive", o, 4);
    int n = (int)lround(1.0 / h);
    for (int i = 0; i < n; i++) mbs_stepper_step(st, h, NULL);
    double e = fabs(mbs_system_q(s)[0] - qref);
    mbs_stepper_free(st);
    mbs_system_free(s);
    mbs_model_free(m);
    return e;
}

static void test_richardson_order(void)
{
    mbs_model *m;
    mbs_system *s = pendulum(&m, 1.0);
    mbs_stepper *rk = make(s, "rk4", NULL, 0);
    for (int i = 0; i < 100000; i++) mbs_stepper_step(rk, 1e-5, NULL);
    double qref = mbs_system_q(s)[0];
    mbs_stepper_free(rk);
    mbs_system_free(s);
    mbs_model_free(m);
    for (int r = 0; r < 2; r++) {
        const char *rich = r ? "1" : "0";
        double e1 = global_error(0.01, rich, qref), e2 = global_error(0.005, rich, qref), e3 = global_error(0.0025, rich, qref);
        double p1 = log2(e1 / e2), p2 = log2(e2 / e3);
        printf("  richardson %s: errors %.3g %.3g %.3g rad at h = 10, 5, 2.5 ms: observed order %.2f, %.2f\n", rich, e1, e2,
               e3, p1, p2);
        double want = r ? 2 : 1;
        CHECK(fabs(p1 - want) < 0.25 && fabs(p2 - want) < 0.25, "richardson %s: order %.2f %.2f, want %g", rich, p1, p2, want);
    }
}

/* A tighter tolerance: shorter sub-steps on average, some refused, and a smaller energy drift of
 * the conservative pendulum over 2 s. */
static void test_tolerance(void)
{
    double drift[2], mean[2];
    for (int k = 0; k < 2; k++) {
        mbs_model *m;
        mbs_system *s = pendulum(&m, 1.5);
        mbs_data *d = mbs_data_new(m);
        mbs_option o[3] = {tm_opt("rel_tol", k ? "1e-5" : "1e-3"), MBS_OPTION("abs_tol", 0), MBS_OPTION("h_min", 1e-6)};
        mbs_stepper *st = make(s, "adaptive", o, 3);
        double E0 = energy(s, d);
        long sub = 0, rej = 0;
        double dmax = 0;
        for (int i = 0; i < 200; i++) {
            mbs_step_stats stats;
            CHECK(mbs_stepper_step(st, 0.01, &stats) == MBS_OK, "adaptive step failed");
            sub += stats.substeps;
            rej += stats.rejected;
            CHECK(stats.min_dt > 0 && stats.min_dt <= 0.01, "min_dt %g", stats.min_dt);
            dmax = fmax(dmax, fabs(energy(s, d) - E0));
        }
        drift[k] = dmax / fabs(E0);
        mean[k] = 2.0 / (double)sub;
        printf("  rel_tol %g: mean sub-step %.3g ms, %ld refused, largest energy drift %.3g (relative)\n", o[0].value,
               1e3 * mean[k], rej, drift[k]);
        mbs_data_free(d);
        mbs_stepper_free(st);
        mbs_system_free(s);
        mbs_model_free(m);
    }
    CHECK(mean[0] > 0.009 && mean[1] < 0.5 * mean[0], "tighter tolerance, mean step %g vs %g", mean[1], mean[0]);
    CHECK(drift[1] < 0.2 * drift[0], "tighter tolerance, drift %g vs %g", drift[1], drift[0]);
}

/* v ← (1 − λ) v after each step, for any scheme; λ out of [0, 1] is refused. */
static void test_dissipation(void)
{
    mbs_model *m;
    mbs_system *s = pendulum(&m, 0.0);
    mbs_stepper *st = make(s, "euler", NULL, 0);
    double q0 = 0, v0 = 2;
    mbs_system_set_state(s, &q0, &v0, 0);
    CHECK(mbs_stepper_set_dissipation(st, 1.5) == MBS_ERR_ARG, "lambda 1.5 accepted");
    CHECK(mbs_stepper_set_dissipation(st, 0.1) == MBS_OK, "lambda 0.1 refused");
    mbs_stepper_step(st, 1e-9, NULL);
    CHECK(fabs(mbs_system_v(s)[0] - 1.8) < 1e-6, "v after one dissipated step: %g, want 1.8", mbs_system_v(s)[0]);
    mbs_stepper_free(st);
    mbs_system_free(s);
    mbs_model_free(m);
}

/* Adaptive wraps any fixed-step scheme: the spring-damper steppers on Solo standing on its feet
 * (the base, 0.216 m high at the start under a weak PD without feed-forward, stays above 0.18 m;
 * sub-steps reported), not itself. */
static void test_wraps_any_scheme(void)
{
    mbs_model *m = mbs_model_from_urdf(tm_path("urdf/solo12.urdf"), NULL, NULL);
    static const char *schemes[] = {"expo", "euler", "implicit_euler", "rigid"};
    for (int k = 0; k < 4; k++) {
        mbs_system *s = tm_solo_standing(m, -0.0001, 1e5, 300, 1);
        mbs_option o[2] = {tm_opt("scheme", schemes[k]), MBS_OPTION("rel_tol", 0.01)};
        mbs_stepper *st = make(s, "adaptive", o, 2);
        CHECK(st != NULL, "adaptive around %s", schemes[k]);
        long sub = 0;
        for (int i = 0; st && i < 50; i++) {
            tm_solo_hold(m, s, 8, 0.2);
            mbs_step_stats stats;
            int rc = mbs_stepper_step(st, 2e-3, &stats);
            CHECK(rc == MBS_OK, "adaptive around %s: %s", schemes[k], mbs_stepper_last_error(st)->msg);
            if (rc != MBS_OK) break;
            sub += stats.substeps;
        }
        double z = mbs_system_q(s)[2];
        printf("  adaptive around %-14s base height %.4f m after 0.1 s, %ld sub-steps\n", schemes[k], z, sub);
        CHECK(z > 0.18 && z < 0.25 && sub >= 50, "around %s: z %g, %ld sub-steps", schemes[k], z, sub);
        mbs_stepper_free(st);
        mbs_system_free(s);
    }
    mbs_system *s = tm_solo_standing(m, 0, 1e5, 300, 1);
    mbs_option self = MBS_OPTION_WORD("scheme", "adaptive"), none = MBS_OPTION_WORD("scheme", "no_such");
    mbs_error err;
    mbs_system_finalize(s, NULL);
    CHECK(mbs_stepper_new("adaptive", s, &self, 1, &err) == NULL && strstr(err.msg, "scheme"), "adaptive around itself: %s", err.msg);
    mbs_system_finalize(s, NULL);
    CHECK(mbs_stepper_new("adaptive", s, &none, 1, &err) == NULL && strstr(err.msg, "no_such"), "unknown scheme: %s", err.msg);
    mbs_system_free(s);
    mbs_model_free(m);
}

/* C²A on impacts: balls thrown at the ground at up to 18 m/s with spin, adaptive around rigid with
 * conservative advancement: every step ends (the trial step shrinks by a tenth at least when the
 * bound moves under it), the ball stops on the ground, sinking by less than 1 mm (Richardson's
 * extrapolation across an impact, and plain steps of h_min, are first order there). */
static void test_conservative_drops(void)
{
    mbs_model *m = mbs_model_from_urdf(tm_path("tests/models/cube.urdf"), NULL, NULL);
    double worst = 0;
    long sub = 0;
    for (int trial = 0; trial < 12; trial++) {
        mbs_error err;
        mbs_system *s = mbs_system_new(m, 1, &err);
        mbs_material mat = {0, 0, 0, 0, trial % 2 ? 1.0 : 0.0};
        double n[3] = {0, 0, 1};
        mbs_system_add_plane(s, n, 0, &mat, &err);
        mbs_system_add_contact(s, "cube", NULL, 0.1, &err);
        mbs_option o[1] = {MBS_OPTION("rel_tol", 0.01)};
        mbs_stepper *st = make(s, "adaptive", o, 1);
        double q[7] = {0, 0, 0.12 + 0.05 * trial, 0, 0, 0, 1}, v[6] = {0.3, 0, -(trial % 7) * 3.0, 0, (trial % 3) * 2.0, 0};
        mbs_system_set_state(s, q, v, 0);
        for (int i = 0; i < 60; i++) {
            mbs_step_stats stats;
            CHECK(mbs_stepper_step(st, 1e-2, &stats) == MBS_OK, "drop %d: %s", trial, mbs_stepper_last_error(st)->msg);
            sub += stats.substeps;
            worst = check_worst(worst, 0.1 - mbs_system_q(s)[2]);
        }
        CHECK(fabs(mbs_system_q(s)[2] - 0.1) < 1e-3, "drop %d: the ball at z = %g", trial, mbs_system_q(s)[2]);
        mbs_stepper_free(st);
        mbs_system_free(s);
    }
    printf("  12 drops with C²A: deepest sink %.3g m, %ld sub-steps for 7.2 s\n", worst, sub);
    CHECK(worst < 1e-3, "sink %g", worst);
    mbs_model_free(m);
}

int main(void)
{
    RUN(test_estimate_order);
    RUN(test_richardson_order);
    RUN(test_tolerance);
    RUN(test_dissipation);
    RUN(test_wraps_any_scheme);
    RUN(test_conservative_drops);
    return check_summary("test_adaptive");
}
