/* test_contact.c — the contact layer and the explicit steppers: Coulomb friction on an
 * incline (stick below tan θ = μ, slide with a = g (sin θ − μ cos θ) above), forces inside
 * the cone, a box sliding on flat ground to a stop (no energy gain, Coulomb's stopping
 * distance and time), resting sag, and the convergence order of the explicit schemes on
 * smooth problems. */
#include <stdlib.h>

#include "check.h"
#include "testmodels.h"
/* white-box: reads and sets the system's and contacts' fields directly */
#include "../src/contact/contact_internal.h"

static const double corners[4][3] = {{0.1, 0.15, -0.2}, {-0.1, 0.15, -0.2}, {0.1, -0.15, -0.2}, {-0.1, -0.15, -0.2}};

/* The free box on a plane through the origin tilted by θ about x, resting on its four bottom corners. */
static mbs_system *box_on_incline(mbs_model **mo, double theta, double mu, double K, double B)
{
    mbs_error err;
    *mo = mbs_model_from_urdf(tm_path("tests/models/free_box.urdf"), NULL, &err);
    if (!*mo) { fprintf(stderr, "%s\n", err.msg); return NULL; }
    mbs_system *s = mbs_system_new(*mo, 4, &err);
    double n[3] = {0, -sin(theta), cos(theta)};
    mbs_material mat = {K, K, B, B, mu};
    mbs_system_add_plane(s, n, 0, &mat, &err);
    for (int k = 0; k < 4; k++) mbs_system_add_contact(s, "box", corners[k], 0, &err);
    /* base frame rotated by θ about x, bottom face on the plane */
    for (int k = 0; k < 3; k++) s->q[k] = 0.2 * n[k];
    s->q[3] = sin(theta / 2); s->q[4] = 0; s->q[5] = 0; s->q[6] = cos(theta / 2);
    return s;
}

static void run_incline(const char *stepper, double theta, double mu, double dt, double *accel, int *cone)
{
    mbs_model *m;
    mbs_system *s = box_on_incline(&m, theta, mu, 1e5, 300);
    mbs_error err;
    mbs_system_finalize(s, NULL);
    mbs_stepper *st = mbs_stepper_new(stepper, s, NULL, 0, &err);
    *accel = tm_incline_acceleration(s, st, theta, dt, 1e-9, cone);
    mbs_stepper_free(st);
    mbs_system_free(s);
    mbs_model_free(m);
}

static void test_incline_stick_and_slide(void)
{
    const char *steppers[] = {"euler", "symplectic_euler", "rk4"};
    for (int k = 0; k < 3; k++) {
        double a, g = 9.81;
        int cone;
        double mu = 0.8, theta = atan(0.5 * mu);   /* tan θ < μ: sticks */
        run_incline(steppers[k], theta, mu, 1e-4, &a, &cone);
        CHECK(fabs(a) < 1e-3, "%s: box slides on a sticking incline, a = %g", steppers[k], a);
        CHECK(cone, "%s: force left the friction cone (stick)", steppers[k]);
        mu = 0.3; theta = atan(0.6);               /* tan θ > μ: slides */
        run_incline(steppers[k], theta, mu, 1e-4, &a, &cone);
        double expect = g * (sin(theta) - mu * cos(theta));
        CHECK(fabs(a - expect) < 0.01 * expect, "%s: sliding acceleration %g, Coulomb %g", steppers[k], a, expect);
        CHECK(cone, "%s: force left the friction cone (slide)", steppers[k]);
    }
}

/* Kinetic + potential + elastic energy of the contact springs. */
static double total_energy(mbs_system *s)
{
    double e = mbs_kinetic_energy(s->model, s->data, s->q, s->v) + mbs_potential_energy(s->model, s->data, s->q);
    for (int i = 0; i < s->ncontacts; i++) {
        const mbs_contact *c = &s->contacts[i];
        if (!c->active) continue;
        double d[3], dn = 0;
        for (int k = 0; k < 3; k++) { d[k] = c->p[k] - c->p0[k]; dn += d[k] * c->normal[k]; }
        double dt2 = 0;
        for (int k = 0; k < 3; k++) { double t = d[k] - dn * c->normal[k]; dt2 += t * t; }
        e += 0.5 * mbsi_contact_material(s, c)->k_normal * dn * dn + 0.5 * mbsi_contact_material(s, c)->k_tangent * dt2;
    }
    return e;
}

/* The box pushed along flat ground at v0 = 1 m/s: no step gains energy, and it stops where
 * Coulomb says. Kinetic friction μ m g decelerates it at μ g, so it stops after
 * t = v0 / (μ g) = 0.408 s, having slid d = v0² / (2 μ g) = 0.204 m. μ = 0.25 keeps it flat:
 * its centre of mass is h = 0.23 m above the ground and 0.09 m behind the front edge, so it
 * tips forward once μ > 0.09 / 0.23 = 0.39 (at μ = 0.4 it does). */
static void test_sliding_stops_at_coulomb_distance(void)
{
    mbs_model *m;
    double mu = 0.25, g = 9.81, v0 = 1.0, dt = 1e-4;
    mbs_system *s = box_on_incline(&m, 0, mu, 1e5, 300);
    s->q[2] -= 3 * 9.81 / 4e5;   /* start at the resting sag */
    mbs_error err;
    mbs_system_finalize(s, NULL);
    mbs_stepper *st = mbs_stepper_new("rk4", s, NULL, 0, &err);
    s->v[0] = v0;                /* sliding along x */
    double c[3], vc[3];
    mbs_center_of_mass(m, s->data, s->q, s->v, c, vc);
    double x0 = c[0], vprev = vc[0], t_stop = -1;
    mbs_stepper_step(st, dt, NULL);
    double e = total_energy(s), e0 = e, worst = 0;
    for (int k = 1; k < 6000; k++) {   /* 0.6 s */
        mbs_stepper_step(st, dt, NULL);
        double e1 = total_energy(s);
        worst = check_worst(worst, e1 - e);
        e = e1;
        mbs_center_of_mass(m, s->data, s->q, s->v, c, vc);
        if (t_stop < 0 && vc[0] <= 0) t_stop = (k + 1) * dt - dt * vc[0] / (vc[0] - vprev);   /* first zero */
        vprev = vc[0];
    }
    CHECK(worst <= 1e-6 * fabs(e0), "energy rose by %g J during a step while sliding", worst);
    CHECK(e < e0 - 0.1, "sliding did not dissipate: %g -> %g", e0, e);
    /* The spring-damper contact departs from rigid Coulomb by its compliance only: the
     * tangential springs stretch by μ m g / 4K = 2e-5 m (1e-4 of d), the contact's time
     * constant B/K = 3 ms (0.7 % of t) bounds how late it stops, and the load moving from the
     * back corners to the front ones under the friction moment keeps the total normal force
     * m g. Measured: distance -0.05 %, stop time +0.07 %; 1 % holds those and still fails a
     * friction force 1 % off. */
    double d = v0 * v0 / (2 * mu * g), t = v0 / (mu * g);
    CHECK(fabs(c[0] - x0 - d) < 0.01 * d, "slid %.6f m, Coulomb v0²/(2 μ g) = %.6f m", c[0] - x0, d);
    CHECK(t_stop > 0 && fabs(t_stop - t) < 0.01 * t, "stopped at %.6f s, Coulomb v0/(μ g) = %.6f s", t_stop, t);
    CHECK(fabs(vc[0]) < 1e-3, "still moving at %.3e m/s %.3f s after the stop", vc[0], 0.6 - t);
    mbs_stepper_free(st);
    mbs_system_free(s);
    mbs_model_free(m);
}

static void test_resting_sag(void)
{
    mbs_model *m;
    double K = 1e5;
    mbs_system *s = box_on_incline(&m, 0, 1.0, K, 300);
    mbs_error err;
    mbs_system_finalize(s, NULL);
    mbs_stepper *st = mbs_stepper_new("rk4", s, NULL, 0, &err);
    for (int k = 0; k < 20000; k++) mbs_stepper_step(st, 1e-4, NULL);
    double mass = mbs_model_mass(m), sag = 0.2 - s->q[2], expect = mass * 9.81 / (4 * K);
    CHECK(fabs(sag - expect) < 1e-3 * expect, "resting sag %.9g, m g / 4K = %.9g", sag, expect);
    double fz = 0;
    for (int i = 0; i < 4; i++) fz += s->contacts[i].lambda[2];
    CHECK(fabs(fz - mass * 9.81) < 1e-6 * mass * 9.81, "contact forces %g carry the weight %g", fz, mass * 9.81);
    mbs_stepper_free(st);
    mbs_system_free(s);
    mbs_model_free(m);
}

/* Error of `stepper` at time T against a fine rk4 solution, on a model without contacts. */
static double final_error(const char *file, int floating, const char *stepper, double dt, double T, const double *q0,
                          const double *v0, const double *qref, const double *vref)
{
    mbs_model *m = mbs_model_from_urdf(tm_path(file), &(mbs_urdf_options){.floating_base = floating}, NULL);
    mbs_system *s = mbs_system_new(m, 0, NULL);
    int nq = mbs_model_nq(m), nv = mbs_model_nv(m);
    memcpy(s->q, q0, sizeof(double) * (size_t)nq);
    memcpy(s->v, v0, sizeof(double) * (size_t)nv);
    mbs_system_finalize(s, NULL);
    mbs_stepper *st = mbs_stepper_new(stepper, s, NULL, 0, NULL);
    int n = (int)lround(T / dt);
    for (int k = 0; k < n; k++) mbs_stepper_step(st, dt, NULL);
    double *d = calloc((size_t)nv, sizeof(double)), e = 0;
    mbs_difference(m, qref, s->q, d);
    for (int k = 0; k < nv; k++) e = fmax(e, fmax(fabs(d[k]), fabs(s->v[k] - vref[k])));
    free(d);
    mbs_stepper_free(st);
    mbs_system_free(s);
    mbs_model_free(m);
    return e;
}

static void check_order(const char *file, int floating, const char *stepper, double dt, int order, int no_gravity)
{
    mbs_model *m = mbs_model_from_urdf(tm_path(file), &(mbs_urdf_options){.floating_base = floating}, NULL);
    int nq = mbs_model_nq(m), nv = mbs_model_nv(m);
    double *q0 = calloc((size_t)nq, 8), *v0 = calloc((size_t)nv, 8), *qr = calloc((size_t)nq, 8), *vr = calloc((size_t)nv, 8);
    unsigned long long seed = 11;
    mbs_random_configuration(m, &seed, q0);
    for (int k = 0; k < nv; k++) v0[k] = tm_uniform(&seed, -2, 2);
    if (no_gravity) { double g[3] = {0, 0, 0}; mbs_model_set_gravity(m, g); }
    /* reference: rk4 at a step 64 times smaller than the finest tested */
    mbs_system *s = mbs_system_new(m, 0, NULL);
    memcpy(s->q, q0, sizeof(double) * (size_t)nq);
    memcpy(s->v, v0, sizeof(double) * (size_t)nv);
    mbs_system_finalize(s, NULL);
    mbs_stepper *st = mbs_stepper_new("rk4", s, NULL, 0, NULL);
    double T = 0.2, fine = dt / 256;
    for (int k = 0; k < (int)lround(T / fine); k++) mbs_stepper_step(st, fine, NULL);
    memcpy(qr, s->q, sizeof(double) * (size_t)nq);
    memcpy(vr, s->v, sizeof(double) * (size_t)nv);
    mbs_stepper_free(st);
    mbs_system_free(s);
    mbs_model_free(m);
    (void)no_gravity;
    double e1 = final_error(file, floating, stepper, dt, T, q0, v0, qr, vr);
    double e2 = final_error(file, floating, stepper, dt / 2, T, q0, v0, qr, vr);
    double p = log2(e1 / e2);
    CHECK(fabs(p - order) < 0.35, "%s on %s: observed order %.2f (errors %.3g, %.3g), expected %d", stepper, file, p, e1,
          e2, order);
    free(q0); free(v0); free(qr); free(vr);
}

static void test_convergence_orders(void)
{
    check_order("tests/models/double_pendulum.urdf", 0, "euler", 2e-3, 1, 0);
    check_order("tests/models/double_pendulum.urdf", 0, "symplectic_euler", 2e-3, 1, 0);
    check_order("tests/models/double_pendulum.urdf", 0, "rk4", 2e-2, 4, 0);
    /* a free body exercises the SE(3) part of the Lie-group schemes */
    check_order("tests/models/free_box.urdf", 1, "euler", 2e-3, 1, 0);
    check_order("tests/models/free_box.urdf", 1, "rk4", 2e-2, 4, 0);
}

/* A ball thrown without spin slides, then rolls: v → 5/7 v0 and ω r = v (solid sphere). */
static void test_rolling_ball(void)
{
    const char *steppers[] = {"euler", "rk4", "expo"};
    for (int k = 0; k < 3; k++) {
        if (!mbs_stepper_find(steppers[k])) continue;
        double r = 0.1, mass = 1, I = 0.4 * mass * r * r;
        double Ic[9] = {I, 0, 0, 0, I, 0, 0, 0, I};
        mbs_model *m = mbs_model_new("ball");
        mbs_model_add_joint(m, -1, MBS_JOINT_FREEFLYER, "root_joint", NULL, NULL, NULL, NULL);
        mbs_model_add_inertia(m, 0, mass, NULL, Ic, NULL);
        mbs_model_add_frame(m, "ball", 0, NULL, NULL, MBS_FRAME_OP, NULL);
        mbs_model_finalize(m, NULL);
        mbs_system *s = mbs_system_new(m, 1, NULL);
        double n[3] = {0, 0, 1};
        mbs_material mat = {1e5, 1e5, 300, 300, 0.3};
        mbs_system_add_plane(s, n, 0, &mat, NULL);
        mbs_system_add_contact(s, "ball", NULL, r, NULL);
        s->q[2] = r - mass * 9.81 / 1e5;
        s->v[0] = 1.0;
        mbs_system_finalize(s, NULL);
        mbs_stepper *st = mbs_stepper_new(steppers[k], s, NULL, 0, NULL);
        for (int i = 0; i < 10000; i++) mbs_stepper_step(st, 1e-4, NULL);
        double R[9], p[3], vw[3], ww[3];
        mbs_forward_kinematics(m, s->data, s->q, NULL, NULL);
        mbs_body_placement(m, s->data, 0, R, p);
        for (int a = 0; a < 3; a++) {
            vw[a] = R[a] * s->v[0] + R[a + 3] * s->v[1] + R[a + 6] * s->v[2];
            ww[a] = R[a] * s->v[3] + R[a + 3] * s->v[4] + R[a + 6] * s->v[5];
        }
        CHECK(fabs(vw[0] - 5.0 / 7.0) < 2e-3, "%s: rolling speed %.5f, expected 5/7", steppers[k], vw[0]);
        CHECK(fabs(ww[1] * r - vw[0]) < 2e-3, "%s: w r = %.5f vs v = %.5f (not rolling)", steppers[k], ww[1] * r, vw[0]);
        mbs_stepper_free(st);
        mbs_system_free(s);
        mbs_model_free(m);
    }
}

static void test_bad_arguments(void)
{
    mbs_model *m = mbs_model_from_urdf(tm_path("tests/models/free_box.urdf"), NULL, NULL);
    mbs_error err;
    mbs_system *s = mbs_system_new(m, 1, &err);
    CHECK(mbs_system_add_contact(s, "no_such_frame", NULL, 0, &err) < 0 && strstr(err.msg, "no_such_frame"),
          "unknown frame accepted: %s", err.msg);
    CHECK(mbs_system_add_contact(s, "box", NULL, -1, &err) < 0 && strstr(err.msg, "radius"), "negative radius: %s", err.msg);
    CHECK(mbs_system_add_contact(s, "box", NULL, 0, &err) == 0, "contact refused");
    CHECK(mbs_system_add_contact(s, "box", NULL, 0, &err) < 0 && strstr(err.msg, "contacts"), "capacity: %s", err.msg);
    double n0[3] = {0, 0, 0};
    mbs_material mat = {1e5, 1e5, 300, 300, 1};
    CHECK(mbs_system_add_plane(s, n0, 0, &mat, &err) != MBS_OK, "zero normal accepted");
    mbs_material bad = {1e5, 1e5, 300, 300, -1};
    double n1[3] = {0, 0, 1};
    CHECK(mbs_system_add_plane(s, n1, 0, &bad, &err) != MBS_OK && strstr(err.msg, "friction"), "negative mu: %s", err.msg);
    mbs_system_finalize(s, NULL);
    CHECK(mbs_stepper_new("no_such_scheme", s, NULL, 0, &err) == NULL && strstr(err.msg, "no_such_scheme") &&
              strstr(err.msg, "rk4"), "unknown stepper: %s", err.msg);
    mbs_option o = MBS_OPTION("no_such_option", 1);
    mbs_system_finalize(s, NULL);
    CHECK(mbs_stepper_new("euler", s, &o, 1, &err) == NULL && strstr(err.msg, "no_such_option"), "unknown option: %s",
          err.msg);
    mbs_system_free(s);
    mbs_model_free(m);
}

int main(void)
{
    RUN(test_incline_stick_and_slide);
    RUN(test_sliding_stops_at_coulomb_distance);
    RUN(test_resting_sag);
    RUN(test_convergence_orders);
    RUN(test_rolling_ball);
    RUN(test_bad_arguments);
    return check_summary("test_contact");
}
