/* test_liegroup.c — the configuration space as a Lie group: integrate / difference are
 * inverse to each other, their four Jacobians match finite differences taken on the group,
 * quaternions stay unit, hand-computed cases, and Pinocchio's integrate on three robots. */
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include <cjson/cJSON.h>

#include "check.h"
#include "testmodels.h"
#include "mbs.h"

#define PI 3.14159265358979323846

/* ------------------------------------------------------------------ helpers */

static double rnd(unsigned long long *s, double lo, double hi)   /* splitmix64, independent of the library's */
{
    unsigned long long z = (*s += 0x9E3779B97F4A7C15ULL);
    z = (z ^ (z >> 30)) * 0xBF58476D1CE4E5B9ULL;
    z = (z ^ (z >> 27)) * 0x94D049BB133111EBULL;
    z ^= z >> 31;
    return lo + (hi - lo) * ((double)(z >> 11) * 0x1.0p-53);
}

static int add_body(mbs_model *m, int parent, mbs_joint_type type, const char *name, const double axis[3])
{
    static const double Ic[9] = {0.1, 0, 0, 0, 0.2, 0, 0, 0, 0.3}, com[3] = {0.01, 0.02, 0.03};
    double p[3] = {0.1, 0, 0.05};
    mbs_error err;
    int b = mbs_model_add_joint(m, parent, type, name, NULL, p, axis, &err);
    CHECK(b >= 0, "add_joint %s: %s", name, err.msg);
    if (b >= 0) CHECK(mbs_model_add_inertia(m, b, 1.0, com, Ic, &err) == MBS_OK, "add_inertia: %s", err.msg);
    return b;
}

/* free-flyer, revolute x, prismatic oblique, planar (normal z), planar (normal y), revolute
 * oblique with limits, revolute with limits outside [-1, 1]: every joint kind and both
 * branches of the random draw. */
static mbs_model *mixed_model(void)
{
    static const double ax[3] = {1, 0, 0}, ob[3] = {0, 1, 1}, z[3] = {0, 0, 1}, y[3] = {0, 1, 0},
                        ob2[3] = {1, -2, 0.5};
    mbs_model *m = mbs_model_new("mixed");
    int b0 = add_body(m, -1, MBS_JOINT_FREEFLYER, "root", NULL);
    int b1 = add_body(m, b0, MBS_JOINT_REVOLUTE, "rx", ax);
    int b2 = add_body(m, b1, MBS_JOINT_PRISMATIC, "pr", ob);
    int b3 = add_body(m, b2, MBS_JOINT_PLANAR, "planar_z", z);
    int b4 = add_body(m, b3, MBS_JOINT_PLANAR, "planar_y", y);
    int b5 = add_body(m, b4, MBS_JOINT_REVOLUTE, "limited", ob2);
    int b6 = add_body(m, b0, MBS_JOINT_REVOLUTE, "far", z);
    add_body(m, b6, MBS_JOINT_BALL, "ball", NULL);
    double lo5 = -0.5, hi5 = 2.0, lo6 = 2.0, hi6 = 3.0;
    mbs_model_set_limits(m, b5, &lo5, &hi5, NULL, NULL, NULL, NULL);
    mbs_model_set_limits(m, b6, &lo6, &hi6, NULL, NULL, NULL, NULL);
    mbs_error err;
    CHECK(mbs_model_finalize(m, &err) == MBS_OK, "finalize: %s", err.msg);
    return m;
}

static mbs_model *single_model(mbs_joint_type type, const double axis[3])
{
    mbs_model *m = mbs_model_new("single");
    add_body(m, -1, type, "j", axis);
    mbs_error err;
    CHECK(mbs_model_finalize(m, &err) == MBS_OK, "finalize: %s", err.msg);
    return m;
}

/* Random tangent vector: joint rates in [-s, s], free-flyer / planar angular parts rescaled
 * to norm wmax·u (u uniform) so the angle range asked for is covered. */
static void random_tangent(const mbs_model *m, unsigned long long *seed, double s, double wmax, double *v)
{
    for (int j = 0; j < mbs_model_njoints(m); j++) {
        int iv = mbs_joint_idx_v(m, j), nv = mbs_joint_nv(m, j);
        for (int k = 0; k < nv; k++) v[iv + k] = rnd(seed, -s, s);
        mbs_joint_type t = mbs_joint_type_of(m, j);
        if (t == MBS_JOINT_FREEFLYER) {
            double *w = v + iv + 3, n = sqrt(w[0] * w[0] + w[1] * w[1] + w[2] * w[2]);
            double r = wmax * rnd(seed, 0, 1) / n;
            for (int k = 0; k < 3; k++) w[k] *= r;
        } else if (t == MBS_JOINT_BALL) {
            double *w = v + iv, n = sqrt(w[0] * w[0] + w[1] * w[1] + w[2] * w[2]);
            double r = wmax * rnd(seed, 0, 1) / n;
            for (int k = 0; k < 3; k++) w[k] *= r;
        } else if (t == MBS_JOINT_PLANAR)
            v[iv + 2] = wmax * rnd(seed, -1, 1);
    }
}

/* Worst distance between two configurations as group elements (a quaternion and its
 * negative are the same rotation). */
static double group_distance(const mbs_model *m, const double *a, const double *b)
{
    double worst = 0;
    for (int j = 0; j < mbs_model_njoints(m); j++) {
        int iq = mbs_joint_idx_q(m, j), nq = mbs_joint_nq(m, j);
        double dp = 0, dm = 0;
        for (int k = 0; k < nq; k++) {
            double e = fabs(a[iq + k] - b[iq + k]);
            if (e > dp) dp = e;
        }
        mbs_joint_type t = mbs_joint_type_of(m, j);
        if (t == MBS_JOINT_FREEFLYER || t == MBS_JOINT_BALL) {
            int np = t == MBS_JOINT_FREEFLYER ? 3 : 0;   /* the position part keeps its sign */
            for (int k = 0; k < nq; k++) {
                double e = k < np ? fabs(a[iq + k] - b[iq + k]) : fabs(a[iq + k] + b[iq + k]);
                if (e > dm) dm = e;
            }
            if (dm < dp) dp = dm;
        }
        if (dp > worst) worst = dp;
    }
    return worst;
}

static double vnorm(const double *x, int n)
{
    double s = 0;
    for (int k = 0; k < n; k++) s += x[k] * x[k];
    return sqrt(s);
}

/* ------------------------------------------------------------------ tests */

static void test_neutral_random_normalize(void)
{
    mbs_model *m = mixed_model();
    int nq = mbs_model_nq(m), nv = mbs_model_nv(m);
    CHECK(nq == 7 + 1 + 1 + 4 + 4 + 1 + 1 + 4 && nv == 6 + 1 + 1 + 3 + 3 + 1 + 1 + 3, "nq %d nv %d", nq, nv);
    double q[23], q2[23], v[20];
    mbs_neutral(m, q);
    static const double expect[23] = {0, 0, 0, 0, 0, 0, 1, 0, 0, 0, 0, 1, 0, 0, 0, 1, 0, 0, 0, 0, 0, 0, 1};
    CHECK_CLOSE(q, expect, 23, 0.0, "neutral");
    /* integrate(neutral, 0) = neutral, difference(q, q) = 0 */
    memset(v, 0, sizeof v);
    mbs_integrate(m, q, v, q2);
    CHECK_CLOSE(q2, expect, 23, 0.0, "integrate(neutral, 0)");

    unsigned long long s1 = 42, s2 = 42;
    mbs_random_configuration(m, &s1, q);
    mbs_random_configuration(m, &s2, q2);
    CHECK(s1 != 42 && s1 == s2, "the seed is advanced deterministically");
    CHECK_CLOSE(q, q2, nq, 0.0, "same seed, same draw");
    mbs_random_configuration(m, &s1, q2);
    CHECK(group_distance(m, q, q2) > 1e-3, "the next draw differs");

    double qsum[4] = {0}, q2sum[4] = {0}, bsum[4] = {0}, b2sum[4] = {0};
    int n = 20000;
    double lim_lo = 1, lim_hi = -1, far_lo = 10, far_hi = -10, xy_max = 0;
    for (int it = 0; it < n; it++) {
        mbs_random_configuration(m, &s1, q);
        mbs_difference(m, q, q, v);
        double z[20] = {0};
        if (it < 100) CHECK_CLOSE(v, z, nv, 1e-15, "difference(q, q)");
        double nn = q[3] * q[3] + q[4] * q[4] + q[5] * q[5] + q[6] * q[6];
        CHECK(fabs(nn - 1) < 1e-15, "random quaternion has norm² %.17g", nn);
        nn = q[19] * q[19] + q[20] * q[20] + q[21] * q[21] + q[22] * q[22];
        CHECK(fabs(nn - 1) < 1e-15, "random ball quaternion has norm² %.17g", nn);
        for (int k = 0; k < 4; k++) { bsum[k] += q[19 + k]; b2sum[k] += q[19 + k] * q[19 + k]; }
        CHECK(fabs(q[11] * q[11] + q[12] * q[12] - 1) < 1e-15 && fabs(q[15] * q[15] + q[16] * q[16] - 1) < 1e-15,
              "planar (cos, sin) unit");
        for (int k = 0; k < 4; k++) { qsum[k] += q[3 + k]; q2sum[k] += q[3 + k] * q[3 + k]; }
        for (int k = 0; k < 3; k++) xy_max = fmax(xy_max, fabs(q[k]));
        lim_lo = fmin(lim_lo, q[17]); lim_hi = fmax(lim_hi, q[17]);
        far_lo = fmin(far_lo, q[18]); far_hi = fmax(far_hi, q[18]);
        CHECK(fabs(q[7]) <= 1 && fabs(q[8]) <= 1 && fabs(q[9]) <= 1 && fabs(q[10]) <= 1 && fabs(q[13]) <= 1 &&
                  fabs(q[14]) <= 1, "unbounded coordinates in [-1, 1]");
    }
    CHECK(xy_max <= 1 && xy_max > 0.99, "free-flyer position fills [-1, 1] (max %g)", xy_max);
    /* [-0.5, 2] clipped to [-0.5, 1]; [2, 3] lies outside [-1, 1] so the limits are used */
    CHECK(lim_lo >= -0.5 && lim_lo < -0.49 && lim_hi <= 1 && lim_hi > 0.99, "limited joint in [%g, %g]", lim_lo, lim_hi);
    CHECK(far_lo >= 2 && far_lo < 2.01 && far_hi <= 3 && far_hi > 2.99, "far joint in [%g, %g]", far_lo, far_hi);
    /* uniform on SO(3): every component has mean 0 and mean square 1/4 (sd of the estimate ~0.003) */
    for (int k = 0; k < 4; k++) {
        CHECK(fabs(qsum[k] / n) < 0.02, "quaternion component %d mean %g", k, qsum[k] / n);
        CHECK(fabs(q2sum[k] / n - 0.25) < 0.01, "quaternion component %d mean square %g", k, q2sum[k] / n);
        CHECK(fabs(bsum[k] / n) < 0.02 && fabs(b2sum[k] / n - 0.25) < 0.01, "ball quaternion component %d: mean %g, mean square %g",
              k, bsum[k] / n, b2sum[k] / n);
    }

    /* normalize rescales the quaternion and the (cos, sin) pairs only */
    mbs_random_configuration(m, &s1, q);
    memcpy(q2, q, sizeof q);
    for (int k = 3; k < 7; k++) q2[k] *= 3;
    q2[11] *= 0.5; q2[12] *= 0.5;
    q2[15] *= 7; q2[16] *= 7;
    for (int k = 19; k < 23; k++) q2[k] *= 0.25;
    mbs_normalize(m, q2);
    CHECK_CLOSE(q2, q, nq, 1e-15, "normalize");
    double zq[23] = {0};
    mbs_normalize(m, zq);
    CHECK(zq[6] == 1 && zq[11] == 1 && zq[15] == 1 && zq[22] == 1, "a zero quaternion / pair becomes the identity, not NaN");
    mbs_model_free(m);
}

/* integrate(q0, difference(q0, q1)) = q1, including relative rotations near π and tiny ones. */
static void test_integrate_difference_roundtrip(void)
{
    mbs_model *m = mixed_model();
    int nq = mbs_model_nq(m), nv = mbs_model_nv(m);
    double q0[23], q1[23], q2[23], v[20];
    unsigned long long seed = 7;
    double worst = 0;
    for (int it = 0; it < 2000; it++) {
        mbs_random_configuration(m, &seed, q0);
        mbs_random_configuration(m, &seed, q1);
        mbs_difference(m, q0, q1, v);
        mbs_integrate(m, q0, v, q2);
        worst = check_worst(worst, group_distance(m, q2, q1));
        CHECK(vnorm(v + 3, 3) <= PI + 1e-15 && fabs(v[10]) <= PI && fabs(v[13]) <= PI && vnorm(v + 16, 3) <= PI + 1e-15,
              "logarithm angles in [0, π]: %.17g %.17g", vnorm(v + 3, 3), vnorm(v + 16, 3));
    }
    CHECK(worst < 1e-13, "random pairs: worst %.3e", worst);

    /* relative rotations at and around π (the short way round flips there), and tiny ones */
    static const double angles[] = {PI - 1e-4, PI - 1e-7, PI - 1e-10, PI, PI + 1e-9, 1e-3, 1e-8, 1e-12, 1e-300, 0};
    for (size_t a = 0; a < sizeof angles / sizeof angles[0]; a++)
        for (int it = 0; it < 50; it++) {
            mbs_random_configuration(m, &seed, q0);
            random_tangent(m, &seed, 1.0, 1.0, v);
            double *w = v + 3, n = vnorm(w, 3);
            for (int k = 0; k < 3; k++) w[k] *= angles[a] / n;
            double *wb = v + 16, nb = vnorm(wb, 3);   /* the ball joint's rotation (v[16..18]) */
            for (int k = 0; k < 3; k++) wb[k] *= angles[a] / nb;
            v[10] = angles[a] * (it % 2 ? 1 : -1);
            v[13] = angles[a];
            if (angles[a] < 1e-6)
                for (int k = 0; k < nv; k++) if (k < 3 || k == 8 || k == 9 || k == 11 || k == 12) v[k] *= angles[a];
            mbs_integrate(m, q0, v, q1);
            mbs_difference(m, q0, q1, v);
            mbs_integrate(m, q0, v, q2);
            double e = group_distance(m, q2, q1);
            CHECK(e < 1e-13, "angle %.17g: roundtrip error %.3e", angles[a], e);
        }
    /* in place: q_out may alias q */
    mbs_random_configuration(m, &seed, q0);
    random_tangent(m, &seed, 1.0, 3.0, v);
    mbs_integrate(m, q0, v, q1);
    memcpy(q2, q0, sizeof q0);
    mbs_integrate(m, q2, v, q2);
    CHECK_CLOSE(q2, q1, nq, 0.0, "integrate in place");
    mbs_model_free(m);
}

/* difference(q, integrate(q, v)) = v whenever the rotation angles are below π. */
static void test_difference_inverts_integrate(void)
{
    mbs_model *m = mixed_model();
    int nv = mbs_model_nv(m);
    double q0[23], q1[23], v[20], d[20];
    unsigned long long seed = 11;
    for (int it = 0; it < 2000; it++) {
        mbs_random_configuration(m, &seed, q0);
        random_tangent(m, &seed, 2.0, PI - 1e-6, v);
        mbs_integrate(m, q0, v, q1);
        mbs_difference(m, q0, q1, d);
        CHECK_CLOSE(d, v, nv, 1e-13, "difference(q, integrate(q, v))");
    }
    /* tiny motions from the identity keep their relative accuracy: no 1 - cos cancellation */
    mbs_neutral(m, q0);
    static const double scales[] = {1e-3, 1e-6, 1e-9, 1e-12, 1e-15, 1e-20, 1e-100};
    for (size_t s = 0; s < sizeof scales / sizeof scales[0]; s++) {
        random_tangent(m, &seed, 1.0, 1.0, v);
        for (int k = 0; k < nv; k++) v[k] *= scales[s];
        mbs_integrate(m, q0, v, q1);
        mbs_difference(m, q0, q1, d);
        double err = 0;
        for (int k = 0; k < nv; k++) err = fmax(err, fabs(d[k] - v[k]) / fabs(v[k]));
        CHECK(err < 1e-14, "scale %g: relative error %.3e", scales[s], err);
    }
    /* and close to π the logarithm still inverts the exponential */
    for (int it = 0; it < 200; it++) {
        mbs_random_configuration(m, &seed, q0);
        random_tangent(m, &seed, 2.0, 1.0, v);
        double n = vnorm(v + 3, 3), t = PI * (1 - pow(10.0, -3 - it % 10));
        for (int k = 0; k < 3; k++) v[3 + k] *= t / n;
        v[10] = t; v[13] = -t;
        mbs_integrate(m, q0, v, q1);
        mbs_difference(m, q0, q1, d);
        CHECK_CLOSE(d, v, nv, 1e-13, "near π");
    }
    mbs_model_free(m);
}

/* Column k of each Jacobian from central differences on the group:
 * (f(x ⊕ εe_k) ⊖ f(x)) - (f(x ⊕ -εe_k) ⊖ f(x)) over 2ε, output differences taken at f(x). */
enum { JI_Q, JI_V, JD_Q0, JD_Q1 };

static void fd_column(const mbs_model *m, int which, const double *x0, const double *x1, int k, double *col)
{
    int nv = mbs_model_nv(m);
    double eps = 1e-6, f0[23], fp[23], xq[23], dv[20], d[2][20];
    if (which == JI_Q || which == JI_V) mbs_integrate(m, x0, x1, f0);
    for (int s = 0; s < 2; s++) {
        memset(dv, 0, sizeof dv);
        dv[k] = s ? eps : -eps;
        switch (which) {
        case JI_Q:
            mbs_integrate(m, x0, dv, xq);
            mbs_integrate(m, xq, x1, fp);
            mbs_difference(m, f0, fp, d[s]);
            break;
        case JI_V:
            for (int i = 0; i < nv; i++) dv[i] += x1[i];
            mbs_integrate(m, x0, dv, fp);
            mbs_difference(m, f0, fp, d[s]);
            break;
        case JD_Q0:
            mbs_integrate(m, x0, dv, xq);
            mbs_difference(m, xq, x1, d[s]);
            break;
        default:
            mbs_integrate(m, x1, dv, xq);
            mbs_difference(m, x0, xq, d[s]);
            break;
        }
    }
    for (int i = 0; i < nv; i++) col[i] = (d[1][i] - d[0][i]) / (2 * eps);
}

static void check_jacobians_at(const mbs_model *m, const double *q0, const double *v, const char *what)
{
    int nv = mbs_model_nv(m);
    double q1[23], J[20 * 20], col[20];
    mbs_integrate(m, q0, v, q1);
    static const char *names[] = {"dintegrate/dq", "dintegrate/dv", "ddifference/dq0", "ddifference/dq1"};
    for (int which = JI_Q; which <= JD_Q1; which++) {
        const double *x1 = which <= JI_V ? v : q1;
        if (which <= JI_V) mbs_dintegrate(m, q0, v, which == JI_Q ? MBS_ARG0 : MBS_ARG1, J);
        else mbs_ddifference(m, q0, q1, which == JD_Q0 ? MBS_ARG0 : MBS_ARG1, J);
        for (int k = 0; k < nv; k++) {
            fd_column(m, which, q0, x1, k, col);
            char label[128];
            snprintf(label, sizeof label, "%s %s column %d", what, names[which], k);
            CHECK_CLOSE(J + nv * k, col, nv, 1e-6, label);
        }
    }
}

static void test_jacobians_finite_differences(void)
{
    mbs_model *m = mixed_model();
    int nv = mbs_model_nv(m);
    double q0[23], v[20];
    unsigned long long seed = 3;
    for (int it = 0; it < 40; it++) {
        mbs_random_configuration(m, &seed, q0);
        /* angles up to 3 (difference Jacobians need the log branch |w| < π; integrate's
         * Jacobians hold at every angle, tried below) */
        random_tangent(m, &seed, 2.0, 3.0, v);
        check_jacobians_at(m, q0, v, "random");
    }
    /* dintegrate beyond π, where q Exp(v) wraps around */
    for (int it = 0; it < 10; it++) {
        double J[20 * 20], col[20];
        mbs_random_configuration(m, &seed, q0);
        random_tangent(m, &seed, 2.0, 1.0, v);
        double n = vnorm(v + 3, 3);
        for (int k = 0; k < 3; k++) v[3 + k] *= (3.5 + 0.2 * it) / n;
        v[10] = 4.0 + 0.1 * it;
        for (int which = JI_Q; which <= JI_V; which++) {
            mbs_dintegrate(m, q0, v, which == JI_Q ? MBS_ARG0 : MBS_ARG1, J);
            for (int k = 0; k < nv; k++) {
                fd_column(m, which, q0, v, k, col);
                CHECK_CLOSE(J + nv * k, col, nv, 1e-6, which == JI_Q ? "dintegrate/dq beyond π" : "dintegrate/dv beyond π");
            }
        }
    }
    /* small and zero angles, and angles astride the switch between Taylor series and closed form */
    static const double angles[] = {0, 1e-300, 1e-12, 1e-7, 1e-3, 1 - 1e-12, 1, 1 + 1e-12, 3.1, PI - 1e-6};
    for (size_t a = 0; a < sizeof angles / sizeof angles[0]; a++) {
        mbs_random_configuration(m, &seed, q0);
        random_tangent(m, &seed, 2.0, 1.0, v);
        double n = vnorm(v + 3, 3);
        for (int k = 0; k < 3; k++) v[3 + k] *= angles[a] / n;
        v[10] = angles[a]; v[13] = -angles[a];
        char what[64];
        snprintf(what, sizeof what, "angle %g", angles[a]);
        check_jacobians_at(m, q0, v, what);
    }
    mbs_model_free(m);
}

/* Jexp(v) Jlog(v) = I exactly (two independent closed forms), and each is continuous where
 * the coefficients switch from Taylor series to closed form. */
static void test_jacobian_identities(void)
{
    mbs_model *m = mixed_model();
    int nv = mbs_model_nv(m);
    double q0[23], q1[23], v[20], Je[20 * 20], Jl[20 * 20], P[20 * 20];
    unsigned long long seed = 5;
    static const double angles[] = {0, 1e-200, 1e-9, 1e-4, 0.3, 1 - 1e-13, 1, 1 + 1e-13, 2, 3, PI - 1e-9};
    for (size_t a = 0; a < sizeof angles / sizeof angles[0]; a++)
        for (int it = 0; it < 20; it++) {
            mbs_random_configuration(m, &seed, q0);
            random_tangent(m, &seed, 3.0, 1.0, v);
            double n = vnorm(v + 3, 3);
            for (int k = 0; k < 3; k++) v[3 + k] *= angles[a] / n;
            v[10] = angles[a]; v[13] = -angles[a];
            mbs_integrate(m, q0, v, q1);
            mbs_dintegrate(m, q0, v, MBS_ARG1, Je);
            mbs_ddifference(m, q0, q1, MBS_ARG1, Jl);
            for (int j = 0; j < nv; j++)
                for (int i = 0; i < nv; i++) {
                    double s = 0;
                    for (int k = 0; k < nv; k++) s += Jl[i + nv * k] * Je[k + nv * j];
                    P[i + nv * j] = s - (i == j);
                }
            double z[20 * 20] = {0};
            char what[64];
            snprintf(what, sizeof what, "Jlog Jexp - I at angle %.17g", angles[a]);
            CHECK_CLOSE(P, z, nv * nv, 1e-13, what);
        }
    /* across the series / closed-form switch at angle 1 the Jacobians vary smoothly: the jump
     * over 2e-13 must be of the order of 2e-13 times their derivative, not a coefficient error */
    for (int it = 0; it < 20; it++) {
        double Ja[2][20 * 20], Jb[2][20 * 20], w[20];
        mbs_random_configuration(m, &seed, q0);
        random_tangent(m, &seed, 3.0, 1.0, v);
        double n = vnorm(v + 3, 3);
        for (int side = 0; side < 2; side++) {
            double t = side ? 1 + 1e-13 : 1 - 1e-13;
            memcpy(w, v, sizeof w);
            for (int k = 0; k < 3; k++) w[3 + k] *= t / n;
            w[10] = t; w[13] = -t;
            mbs_integrate(m, q0, w, q1);
            mbs_dintegrate(m, q0, w, MBS_ARG1, Ja[side]);
            mbs_ddifference(m, q0, q1, MBS_ARG1, Jb[side]);
        }
        CHECK_CLOSE(Ja[0], Ja[1], nv * nv, 1e-12, "dintegrate/dv continuous across the Taylor switch");
        CHECK_CLOSE(Jb[0], Jb[1], nv * nv, 1e-12, "ddifference/dq1 continuous across the Taylor switch");
    }
    /* at q0 = q1 the difference Jacobians are -I and I, at v = 0 the integrate ones are I */
    mbs_random_configuration(m, &seed, q0);
    memset(v, 0, sizeof v);
    double I[20 * 20] = {0}, mI[20 * 20] = {0};
    for (int k = 0; k < nv; k++) { I[k + nv * k] = 1; mI[k + nv * k] = -1; }
    mbs_dintegrate(m, q0, v, MBS_ARG0, Je);
    CHECK_CLOSE(Je, I, nv * nv, 0.0, "dintegrate/dq at v = 0");
    mbs_dintegrate(m, q0, v, MBS_ARG1, Je);
    CHECK_CLOSE(Je, I, nv * nv, 0.0, "dintegrate/dv at v = 0");
    mbs_ddifference(m, q0, q0, MBS_ARG0, Je);
    CHECK_CLOSE(Je, mI, nv * nv, 1e-15, "ddifference/dq0 at q1 = q0");
    mbs_ddifference(m, q0, q0, MBS_ARG1, Je);
    CHECK_CLOSE(Je, I, nv * nv, 1e-15, "ddifference/dq1 at q1 = q0");
    mbs_model_free(m);
}

/* A million small steps keep the quaternion unit. */
static void test_quaternion_drift(void)
{
    mbs_model *m = single_model(MBS_JOINT_FREEFLYER, NULL);
    double q[7], v[6];
    unsigned long long seed = 99, s2 = 1;
    mbs_random_configuration(m, &s2, q);
    double worst = 0;
    for (int it = 0; it < 1000000; it++) {
        for (int k = 0; k < 6; k++) v[k] = rnd(&seed, -0.01, 0.01);
        mbs_integrate(m, q, v, q);
        if (it % 1000 == 0 || it == 999999)
            worst = check_worst(worst, fabs(sqrt(q[3] * q[3] + q[4] * q[4] + q[5] * q[5] + q[6] * q[6]) - 1));
    }
    CHECK(worst < 1e-12, "quaternion norm drifted by %.3e", worst);
    mbs_model_free(m);
}

static void test_freeflyer_hand_cases(void)
{
    mbs_model *m = single_model(MBS_JOINT_FREEFLYER, NULL);
    double q[7], q1[7], q2[7];
    mbs_neutral(m, q);
    /* rotate about z by π/2, then move 1 along the body x axis, which now points along world y */
    double rot[6] = {0, 0, 0, 0, 0, PI / 2}, move[6] = {1, 0, 0, 0, 0, 0};
    mbs_integrate(m, q, rot, q1);
    double h = sqrt(0.5);
    double e1[7] = {0, 0, 0, 0, 0, h, h};
    CHECK_CLOSE(q1, e1, 7, 1e-15, "rotation by π/2 about z");
    mbs_integrate(m, q1, move, q2);
    double e2[7] = {0, 1, 0, 0, 0, h, h};
    CHECK_CLOSE(q2, e2, 7, 1e-15, "then translation along the rotated x");
    /* both at once is a screw motion: the origin travels on an arc, p = V(w) v =
     * (sinθ/θ, (1-cosθ)/θ, 0) = (2/π, 2/π, 0) */
    double screw[6] = {1, 0, 0, 0, 0, PI / 2};
    mbs_integrate(m, q, screw, q2);
    double e3[7] = {2 / PI, 2 / PI, 0, 0, 0, h, h};
    CHECK_CLOSE(q2, e3, 7, 1e-15, "screw motion");
    /* translation along the screw axis is untouched by the rotation */
    double pitch[6] = {0, 0, 0.5, 0, 0, 1.0};
    mbs_integrate(m, q, pitch, q2);
    double e4[7] = {0, 0, 0.5, 0, 0, sin(0.5), cos(0.5)};
    CHECK_CLOSE(q2, e4, 7, 1e-15, "translation along the axis");
    /* from a rotated base, body-frame v is rotated into the world: base rotated π about x,
     * body +y is world -y */
    double qb[7] = {1, 2, 3, 1, 0, 0, 0}, up[6] = {0, 1, 0, 0, 0, 0};
    mbs_integrate(m, qb, up, q2);
    double e5[7] = {1, 1, 3, 1, 0, 0, 0};
    CHECK_CLOSE(q2, e5, 7, 1e-15, "body-frame velocity");
    /* beyond π the result stays in the input's hemisphere (Pinocchio's convention) */
    double big[6] = {0, 0, 0, 0, 0, 1.5 * PI};
    mbs_integrate(m, q, big, q2);
    double e6[7] = {0, 0, 0, 0, 0, -h, h};
    CHECK_CLOSE(q2, e6, 7, 1e-15, "rotation by 3π/2 = -π/2, w >= 0 kept");
    double d[6];
    mbs_difference(m, q, q2, d);
    double e7[6] = {0, 0, 0, 0, 0, -PI / 2};
    CHECK_CLOSE(d, e7, 6, 1e-15, "its difference is the short way round");
    /* interpolate: the midpoint of a pure rotation is half the rotation */
    mbs_interpolate(m, q, q1, 0.5, q2);
    double e8[7] = {0, 0, 0, 0, 0, sin(PI / 8), cos(PI / 8)};
    CHECK_CLOSE(q2, e8, 7, 1e-15, "interpolate midpoint");
    mbs_model_free(m);
}

static void test_planar(void)
{
    static const double z[3] = {0, 0, 1}, y[3] = {0, 1, 0}, ob[3] = {1, 2, 3};
    const double *normals[3] = {z, y, ob};
    double first[3][4];
    for (int n = 0; n < 3; n++) {
        mbs_model *m = single_model(MBS_JOINT_PLANAR, normals[n]);
        double q[4], q1[4], d[3];
        mbs_neutral(m, q);
        for (int a = -8; a <= 8; a++) {
            double t = a * PI / 8 * 0.999, v[3] = {0, 0, t};
            mbs_integrate(m, q, v, q1);
            double e[4] = {0, 0, cos(t), sin(t)};
            CHECK_CLOSE(q1, e, 4, 1e-15, "pure rotation gives (cos, sin) of the angle");
            mbs_difference(m, q, q1, d);
            CHECK_CLOSE(d, v, 3, 1e-15, "and its difference the angle");
        }
        /* screw in the plane: from the origin, (1, 0) body velocity while turning π/2 */
        double v[3] = {1, 0, PI / 2};
        mbs_integrate(m, q, v, q1);
        double e[4] = {2 / PI, 2 / PI, 0, 1};
        CHECK_CLOSE(q1, e, 4, 1e-15, "planar screw");
        /* body-frame translation from a turned base */
        double qa[4] = {1, 2, cos(0.3), sin(0.3)}, va[3] = {0.5, 0, 0};
        mbs_integrate(m, qa, va, q1);
        double ea[4] = {1 + 0.5 * cos(0.3), 2 + 0.5 * sin(0.3), cos(0.3), sin(0.3)};
        CHECK_CLOSE(q1, ea, 4, 1e-15, "planar body-frame translation");
        double vb[3] = {0.3, -0.7, 2.5};
        mbs_integrate(m, qa, vb, first[n]);
        if (n > 0) CHECK_CLOSE(first[n], first[0], 4, 0.0, "the planar group does not depend on the normal");
        mbs_model_free(m);
    }
}

/* A model with the joint layout of the reference file, built from its "joints" list (the
 * axes do not matter to integrate, so the URDF is not needed). */
static mbs_model *model_from_reference(const cJSON *root)
{
    const cJSON *joints = cJSON_GetObjectItemCaseSensitive(root, "joints"), *j;
    mbs_model *m = mbs_model_new("reference");
    cJSON_ArrayForEach(j, joints) {
        const char *name = cJSON_GetObjectItemCaseSensitive(j, "name")->valuestring;
        const char *type = cJSON_GetObjectItemCaseSensitive(j, "type")->valuestring;
        const char *parent = cJSON_GetObjectItemCaseSensitive(j, "parent")->valuestring;
        int p = strcmp(parent, "universe") == 0 ? -1 : mbs_joint_id(m, parent);
        double axis[3] = {1, 1, 0};
        mbs_joint_type t = MBS_JOINT_REVOLUTE;
        if (strcmp(type, "JointModelFreeFlyer") == 0) t = MBS_JOINT_FREEFLYER;
        else if (strncmp(type, "JointModelP", 11) == 0) t = MBS_JOINT_PRISMATIC;
        else CHECK(strncmp(type, "JointModelR", 11) == 0, "unexpected joint type %s", type);
        size_t l = strlen(type);
        if (type[l - 1] >= 'X' && type[l - 1] <= 'Z' && l == strlen("JointModelRX")) {
            axis[0] = axis[1] = 0;
            axis[type[l - 1] - 'X'] = 1;
        }
        int b = add_body(m, p, t, name, axis);
        CHECK(b >= 0 && mbs_joint_idx_q(m, b) >= 0, "joint %s", name);
    }
    mbs_error err;
    CHECK(mbs_model_finalize(m, &err) == MBS_OK, "finalize: %s", err.msg);
    cJSON_ArrayForEach(j, joints) {
        int b = mbs_joint_id(m, cJSON_GetObjectItemCaseSensitive(j, "name")->valuestring);
        CHECK(b >= 0 && mbs_joint_idx_q(m, b) == cJSON_GetObjectItemCaseSensitive(j, "idx_q")->valueint &&
                  mbs_joint_idx_v(m, b) == cJSON_GetObjectItemCaseSensitive(j, "idx_v")->valueint,
              "joint layout differs from the reference");
    }
    return m;
}

static int read_vector(const cJSON *a, double *x, int n)
{
    if (!cJSON_IsArray(a) || cJSON_GetArraySize(a) != n) return 0;
    int k = 0;
    const cJSON *e;
    cJSON_ArrayForEach(e, a) x[k++] = e->valuedouble;
    return 1;
}

static void test_pinocchio_integrate(void)
{
    static const char *robots[] = {"solo12", "romeo", "robosimian"};
    for (int r = 0; r < 3; r++) {
        cJSON *root = tm_reference_vectors(robots[r]);
        CHECK(root != NULL, "cannot read the vectors of %s", robots[r]);
        if (!root) continue;
        mbs_model *m = model_from_reference(root);
        int nq = mbs_model_nq(m), nv = mbs_model_nv(m);
        CHECK(nq == cJSON_GetObjectItemCaseSensitive(root, "nq")->valueint &&
                  nv == cJSON_GetObjectItemCaseSensitive(root, "nv")->valueint, "%s: nq %d nv %d", robots[r], nq, nv);
        const cJSON *s;
        int count = 0;
        cJSON_ArrayForEach(s, cJSON_GetObjectItemCaseSensitive(root, "samples")) {
            double q[64], v[64], ref[64], out[64], d[64];
            CHECK(nq <= 64 && read_vector(cJSON_GetObjectItemCaseSensitive(s, "q"), q, nq) &&
                      read_vector(cJSON_GetObjectItemCaseSensitive(s, "v"), v, nv) &&
                      read_vector(cJSON_GetObjectItemCaseSensitive(s, "integrate_q_v"), ref, nq),
                  "%s: sample vectors", robots[r]);
            mbs_integrate(m, q, v, out);
            char what[64];
            snprintf(what, sizeof what, "%s sample %d: integrate vs Pinocchio", robots[r], count);
            CHECK_CLOSE(out, ref, nq, 1e-12, what);   /* same quaternion sign too */
            mbs_difference(m, q, ref, d);
            snprintf(what, sizeof what, "%s sample %d: difference(q, Pinocchio's q ⊕ v)", robots[r], count);
            CHECK_CLOSE(d, v, nv, 1e-12, what);
            count++;
        }
        CHECK(count == 3, "%s: %d samples", robots[r], count);
        mbs_model_free(m);
        cJSON_Delete(root);
    }
}

/* interpolate: the ends, the midpoint halves the difference, and q_out may alias q0. */
static void test_interpolate(void)
{
    mbs_model *m = mixed_model();
    int nq = mbs_model_nq(m), nv = mbs_model_nv(m);
    double q0[23], q1[23], qt[23], d[20], dt[20];
    unsigned long long seed = 21;
    for (int it = 0; it < 200; it++) {
        mbs_random_configuration(m, &seed, q0);
        mbs_random_configuration(m, &seed, q1);
        mbs_interpolate(m, q0, q1, 0.0, qt);
        CHECK(group_distance(m, qt, q0) < 1e-15, "t = 0");
        mbs_interpolate(m, q0, q1, 1.0, qt);
        CHECK(group_distance(m, qt, q1) < 1e-13, "t = 1");
        double t = rnd(&seed, -0.5, 1.5);
        mbs_interpolate(m, q0, q1, t, qt);
        mbs_difference(m, q0, q1, d);
        mbs_difference(m, q0, qt, dt);
        for (int k = 0; k < nv; k++) d[k] *= t;
        if (t >= 0 && t <= 1) CHECK_CLOSE(dt, d, nv, 1e-12, "interpolate follows the geodesic");
        memcpy(qt, q0, sizeof q0);
        double qr[23];
        mbs_interpolate(m, q0, q1, t, qr);
        mbs_interpolate(m, qt, q1, t, qt);
        CHECK_CLOSE(qt, qr, nq, 0.0, "interpolate in place");
    }
    mbs_model_free(m);
}

int main(void)
{
    RUN(test_neutral_random_normalize);
    RUN(test_integrate_difference_roundtrip);
    RUN(test_difference_inverts_integrate);
    RUN(test_jacobians_finite_differences);
    RUN(test_jacobian_identities);
    RUN(test_quaternion_drift);
    RUN(test_freeflyer_hand_cases);
    RUN(test_planar);
    RUN(test_pinocchio_integrate);
    RUN(test_interpolate);
    return check_summary("test_liegroup");
}
