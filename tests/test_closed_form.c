/* test_closed_form.c — the algorithms against hand-derived closed forms on the analytic
 * test models of tests/models (each URDF's header comment holds the derivation):
 * pendulum (M, g, ABA, energies, COM), double pendulum (M, g, Coriolis, ABA, energies),
 * planar body (M, g = 0, energy and momentum conservation under RK4), free box (6x6
 * spatial inertia, ABA = M⁻¹τ, free fall, torque-free conservation laws under RK4) and
 * fixed_chain (merged inertia and frame placements of fixed-joint merging). */
#include <stdlib.h>

#include "check.h"
#include "testmodels.h"

#define PI 3.14159265358979323846
#define NSAMPLES 5

/* ---- small helpers ---- */

static mbs_model *load(const char *name, int floating)
{
    char rel[128];
    snprintf(rel, sizeof rel, "tests/models/%s.urdf", name);
    mbs_error err;
    mbs_error_clear(&err);
    mbs_model *m = mbs_model_from_urdf(tm_path(rel), &(mbs_urdf_options){.floating_base = floating}, &err);
    CHECK(m != NULL, "loading %s: %s", rel, err.msg);
    CHECK(m == NULL || err.code == MBS_OK, "loading %s: code %d", rel, err.code);
    return m;
}

/* C = A B, 3x3 column-major. */
static void m3_mul(const double A[9], const double B[9], double C[9])
{
    for (int j = 0; j < 3; j++)
        for (int i = 0; i < 3; i++)
            C[i + 3 * j] = A[i] * B[3 * j] + A[i + 3] * B[3 * j + 1] + A[i + 6] * B[3 * j + 2];
}

static void m3_mulv(const double A[9], const double x[3], double y[3])
{
    for (int i = 0; i < 3; i++) y[i] = A[i] * x[0] + A[i + 3] * x[1] + A[i + 6] * x[2];
}

static void cross(const double a[3], const double b[3], double c[3])
{
    c[0] = a[1] * b[2] - a[2] * b[1];
    c[1] = a[2] * b[0] - a[0] * b[2];
    c[2] = a[0] * b[1] - a[1] * b[0];
}

static void rot_x(double t, double R[9])
{
    double c = cos(t), s = sin(t);
    double r[9] = {1, 0, 0, 0, c, s, 0, -s, c};
    memcpy(R, r, sizeof r);
}

static void rot_y(double t, double R[9])
{
    double c = cos(t), s = sin(t);
    double r[9] = {c, 0, -s, 0, 1, 0, s, 0, c};
    memcpy(R, r, sizeof r);
}

static void rot_z(double t, double R[9])
{
    double c = cos(t), s = sin(t);
    double r[9] = {c, s, 0, -s, c, 0, 0, 0, 1};
    memcpy(R, r, sizeof r);
}

/* URDF rpy: R = Rz(y) Ry(p) Rx(r). */
static void rpy(double r, double p, double y, double R[9])
{
    double X[9], Y[9], Z[9], ZY[9];
    rot_x(r, X); rot_y(p, Y); rot_z(y, Z);
    m3_mul(Z, Y, ZY);
    m3_mul(ZY, X, R);
}

/* Rotation of a unit quaternion stored (x, y, z, w). */
static void quat_to_R(const double qt[4], double R[9])
{
    double x = qt[0], y = qt[1], z = qt[2], w = qt[3];
    R[0] = 1 - 2 * (y * y + z * z); R[3] = 2 * (x * y - z * w);     R[6] = 2 * (x * z + y * w);
    R[1] = 2 * (x * y + z * w);     R[4] = 1 - 2 * (x * x + z * z); R[7] = 2 * (y * z - x * w);
    R[2] = 2 * (x * z - y * w);     R[5] = 2 * (y * z + x * w);     R[8] = 1 - 2 * (x * x + y * y);
}

/* Row-major 3x3 literal (as the URDF headers print them) to column-major. */
static void rows_to_colmajor(const double rows[9], double R[9])
{
    for (int i = 0; i < 3; i++)
        for (int j = 0; j < 3; j++) R[i + 3 * j] = rows[3 * i + j];
}

/* Solves A x = b for an n x n column-major A (n <= 8) by Gaussian elimination with partial
 * pivoting; A and b are copied. */
static void solve_dense(int n, const double *A, const double *b, double *x)
{
    double a[64], r[8];
    memcpy(a, A, sizeof(double) * (size_t)(n * n));
    memcpy(r, b, sizeof(double) * (size_t)n);
    for (int k = 0; k < n; k++) {
        int p = k;
        for (int i = k + 1; i < n; i++)
            if (fabs(a[i + n * k]) > fabs(a[p + n * k])) p = i;
        if (p != k) {
            for (int j = 0; j < n; j++) { double t = a[k + n * j]; a[k + n * j] = a[p + n * j]; a[p + n * j] = t; }
            double t = r[k]; r[k] = r[p]; r[p] = t;
        }
        for (int i = k + 1; i < n; i++) {
            double f = a[i + n * k] / a[k + n * k];
            for (int j = k; j < n; j++) a[i + n * j] -= f * a[k + n * j];
            r[i] -= f * r[k];
        }
    }
    for (int i = n - 1; i >= 0; i--) {
        double s = r[i];
        for (int j = i + 1; j < n; j++) s -= a[i + n * j] * x[j];
        x[i] = s / a[i + n * i];
    }
}

/* ---- Lie-group RK4 (Runge-Kutta-Munthe-Kaas) ----
 * The configuration moves as q(t) = q0 ⊕ u(t) (mbs_integrate: q·exp(u), v the body-frame
 * velocity), so u' = dexp⁻¹_{-u}(v) = v + ½[u, v] + 1/12 [u, [u, v]] + O(|u|⁴ |v|), which is
 * the truncation RKMK needs for order 4. Revolute and prismatic coordinates are additive
 * (bracket 0): for them this is the classical RK4. */

/* ad_u w for the Lie algebra of one joint, written into out (nv of the joint). */
static void joint_ad(mbs_joint_type t, const double *u, const double *w, double *out, int nv)
{
    if (t == MBS_JOINT_FREEFLYER) {
        /* se(3), [v; ω]: [(v1, ω1), (v2, ω2)] = (ω1 × v2 + v1 × ω2, ω1 × ω2) */
        double a[3], b[3];
        cross(u + 3, w, a);
        cross(u, w + 3, b);
        for (int k = 0; k < 3; k++) out[k] = a[k] + b[k];
        cross(u + 3, w + 3, out + 3);
    } else if (t == MBS_JOINT_PLANAR) {
        /* se(2), [vx vy ω]: translation ω1 J v2 - ω2 J v1 with J (a, b) = (-b, a) */
        out[0] = -u[2] * w[1] + w[2] * u[1];
        out[1] = u[2] * w[0] - w[2] * u[0];
        out[2] = 0;
    } else {
        for (int k = 0; k < nv; k++) out[k] = 0;
    }
}

static void dexpinv_neg(const mbs_model *m, const double *u, const double *v, double *out)
{
    for (int j = 0; j < mbs_model_njoints(m); j++) {
        int iv = mbs_joint_idx_v(m, j), n = mbs_joint_nv(m, j);
        mbs_joint_type t = mbs_joint_type_of(m, j);
        double a1[6], a2[6];
        joint_ad(t, u + iv, v + iv, a1, n);
        joint_ad(t, u + iv, a1, a2, n);
        for (int k = 0; k < n; k++) out[iv + k] = v[iv + k] + 0.5 * a1[k] + a2[k] / 12.0;
    }
}

#define MAXV 8
#define MAXQ 10

/* One RKMK4 step of q̈ = aba(q, v, tau) with step h, in place. */
static void rk4_step(const mbs_model *m, mbs_data *d, double *q, double *v, const double *tau, double h)
{
    int nv = mbs_model_nv(m);
    static const double c[4] = {0, 0.5, 0.5, 1}, w[4] = {1, 2, 2, 1};
    double A[4][MAXV], K[4][MAXV], u[MAXV], V[MAXV], Q[MAXQ], usum[MAXV], asum[MAXV];
    for (int i = 0; i < nv; i++) usum[i] = asum[i] = 0;
    for (int s = 0; s < 4; s++) {
        for (int i = 0; i < nv; i++) {
            u[i] = s ? c[s] * h * K[s - 1][i] : 0;
            V[i] = v[i] + (s ? c[s] * h * A[s - 1][i] : 0);
        }
        mbs_integrate(m, q, u, Q);
        mbs_aba(m, d, Q, V, tau, A[s]);
        dexpinv_neg(m, u, V, K[s]);
        for (int i = 0; i < nv; i++) { usum[i] += w[s] * K[s][i]; asum[i] += w[s] * A[s][i]; }
    }
    for (int i = 0; i < nv; i++) { usum[i] *= h / 6; v[i] += h / 6 * asum[i]; }
    mbs_integrate(m, q, usum, Q);
    memcpy(q, Q, sizeof(double) * (size_t)mbs_model_nq(m));
}

/* ---- pendulum ---- */

static void test_pendulum(void)
{
    mbs_model *m = load("pendulum", 0);
    if (!m) return;
    mbs_data *d = mbs_data_new(m);
    CHECK(mbs_model_nq(m) == 1 && mbs_model_nv(m) == 1, "pendulum nq %d nv %d", mbs_model_nq(m), mbs_model_nv(m));
    unsigned long long seed = 11;
    for (int k = 0; k < NSAMPLES; k++) {
        double q = tm_uniform(&seed, -PI, PI), v = tm_uniform(&seed, -3, 3), tau = tm_uniform(&seed, -5, 5);
        double s = sin(q), c = cos(q);
        double M, g, h, ddq, zero = 0;
        mbs_crba(m, d, &q, &M);
        double Mx = 0.51;
        CHECK_CLOSE(&M, &Mx, 1, 1e-14, "pendulum M = 0.51");
        mbs_gravity(m, d, &q, &g);
        double gx = 9.81 * s;
        CHECK_CLOSE(&g, &gx, 1, 1e-13, "pendulum g = 9.81 sin q");
        mbs_nonlinear_effects(m, d, &q, &v, &h);
        CHECK_CLOSE(&h, &gx, 1, 1e-13, "pendulum C = 0: h = g");
        mbs_aba(m, d, &q, &v, &zero, &ddq);
        double ddqx = -9.81 * s / 0.51;
        CHECK_CLOSE(&ddq, &ddqx, 1, 1e-13, "pendulum aba(tau=0) = -9.81 sin q / 0.51");
        mbs_aba(m, d, &q, &v, &tau, &ddq);
        ddqx = (tau - 9.81 * s) / 0.51;
        CHECK_CLOSE(&ddq, &ddqx, 1, 1e-13, "pendulum aba = (tau - 9.81 sin q) / 0.51");
        double ke = mbs_kinetic_energy(m, d, &q, &v), kex = 0.5 * 0.51 * v * v;
        CHECK_CLOSE(&ke, &kex, 1, 1e-14, "pendulum KE = 0.255 qd^2");
        double pe = mbs_potential_energy(m, d, &q), pex = -9.81 * c;
        CHECK_CLOSE(&pe, &pex, 1, 1e-14, "pendulum PE = -9.81 cos q");
        double com[3], vcom[3];
        mbs_center_of_mass(m, d, &q, &v, com, vcom);
        double comx[3] = {-0.5 * s, 0, -0.5 * c}, vcomx[3] = {-0.5 * c * v, 0, 0.5 * s * v};
        CHECK_CLOSE(com, comx, 3, 1e-15, "pendulum world COM");
        CHECK_CLOSE(vcom, vcomx, 3, 1e-15, "pendulum world COM velocity");
    }
    mbs_data_free(d);
    mbs_model_free(m);
}

/* ---- double pendulum ---- */

static void dp_closed_form(const double q[2], const double qd[2], double M[4], double g[2], double Cqd[2])
{
    double c2 = cos(q[1]), s1 = sin(q[0]), s2 = sin(q[1]), s12 = sin(q[0] + q[1]);
    M[0] = 1.86 + 0.8 * c2;
    M[1] = M[2] = 0.33 + 0.4 * c2;
    M[3] = 0.33;
    g[0] = 14.715 * s1 + 3.924 * s12;
    g[1] = 3.924 * s12;
    Cqd[0] = -0.4 * s2 * (2 * qd[0] * qd[1] + qd[1] * qd[1]);
    Cqd[1] = 0.4 * s2 * qd[0] * qd[0];
}

static void test_double_pendulum(void)
{
    mbs_model *m = load("double_pendulum", 0);
    if (!m) return;
    mbs_data *d = mbs_data_new(m);
    CHECK(mbs_model_nq(m) == 2 && mbs_model_nv(m) == 2, "double pendulum nq %d nv %d", mbs_model_nq(m),
          mbs_model_nv(m));

    /* The header's sample values pin our transcription of its formulas. */
    {
        double q[2] = {0.3, -0.7}, qd[2] = {0.5, 1.2}, M[4], g[2], Cqd[2];
        dp_closed_form(q, qd, M, g, Cqd);
        double Ms[4] = {2.4718737498275907, 0.6359368749137955, 0.6359368749137955, 0.33};
        double gs[2] = {2.8205022658024665, -1.5280775752191447};
        double Cs[2] = {0.6802938777230018, -0.0644217687237691};
        CHECK_CLOSE(M, Ms, 4, 1e-15, "double pendulum M formula vs header sample");
        CHECK_CLOSE(g, gs, 2, 1e-15, "double pendulum g formula vs header sample");
        CHECK_CLOSE(Cqd, Cs, 2, 1e-15, "double pendulum C qd formula vs header sample");
    }

    unsigned long long seed = 22;
    for (int k = 0; k <= NSAMPLES; k++) {
        double q[2], qd[2], tau[2];
        if (k == NSAMPLES) { q[0] = 0.3; q[1] = -0.7; qd[0] = 0.5; qd[1] = 1.2; }   /* the header's sample */
        else
            for (int i = 0; i < 2; i++) { q[i] = tm_uniform(&seed, -PI, PI); qd[i] = tm_uniform(&seed, -2, 2); }
        for (int i = 0; i < 2; i++) tau[i] = tm_uniform(&seed, -5, 5);
        double Mx[4], gx[2], Cx[2];
        dp_closed_form(q, qd, Mx, gx, Cx);

        double M[4], g[2], h[2], Cqd[2];
        mbs_crba(m, d, q, M);
        CHECK_CLOSE(M, Mx, 4, 1e-12, "double pendulum M(q)");
        mbs_gravity(m, d, q, g);
        CHECK_CLOSE(g, gx, 2, 1e-12, "double pendulum g(q)");
        mbs_nonlinear_effects(m, d, q, qd, h);
        for (int i = 0; i < 2; i++) Cqd[i] = h[i] - g[i];
        CHECK_CLOSE(Cqd, Cx, 2, 1e-12, "double pendulum C(q, qd) qd = nle - g");

        /* forward dynamics: qdd = M⁻¹ (tau - C qd - g), M⁻¹ by the 2x2 adjugate */
        double r0 = tau[0] - Cx[0] - gx[0], r1 = tau[1] - Cx[1] - gx[1];
        double det = Mx[0] * Mx[3] - Mx[1] * Mx[2];
        double ddqx[2] = {(Mx[3] * r0 - Mx[2] * r1) / det, (Mx[0] * r1 - Mx[1] * r0) / det}, ddq[2];
        mbs_aba(m, d, q, qd, tau, ddq);
        CHECK_CLOSE(ddq, ddqx, 2, 1e-12, "double pendulum aba = M⁻¹ (tau - C qd - g)");

        /* energies: T = ½ qdᵀ M qd, V = -9.81 (1.5 c1 + 0.4 cos(q1 + q2)) */
        double ke = mbs_kinetic_energy(m, d, q, qd);
        double kex = 0.5 * (Mx[0] * qd[0] * qd[0] + 2 * Mx[1] * qd[0] * qd[1] + Mx[3] * qd[1] * qd[1]);
        CHECK_CLOSE(&ke, &kex, 1, 1e-13, "double pendulum KE");
        double pe = mbs_potential_energy(m, d, q), pex = -9.81 * (1.5 * cos(q[0]) + 0.4 * cos(q[0] + q[1]));
        CHECK_CLOSE(&pe, &pex, 1, 1e-13, "double pendulum PE");
    }
    mbs_data_free(d);
    mbs_model_free(m);
}

/* ---- planar body ---- */

/* M in v = [vx vy wz phid], column-major 4x4. */
static void planar_M(double phi, double M[16])
{
    double c = cos(phi), s = sin(phi);
    double rows[16] = {
        2.0, 0.0, 0.075 - 0.1 * s, -0.1 * s,
        0.0, 2.0, 0.3 + 0.1 * c, 0.1 * c,
        0.075 - 0.1 * s, 0.3 + 0.1 * c, 0.12875 + 0.06 * c, 0.025 + 0.03 * c,
        -0.1 * s, 0.1 * c, 0.025 + 0.03 * c, 0.025,
    };
    for (int i = 0; i < 4; i++)
        for (int j = 0; j < 4; j++) M[i + 4 * j] = rows[4 * i + j];
}

/* In-plane world linear momentum (Px, Py) and angular momentum about the world z axis of
 * the whole system. The first three entries of M v are the generalised momenta of the
 * planar joint: the system's momentum at the slider origin projected on its motion
 * subspace, [Px' Py' Lz'] in slider axes. Rotated by theta and moved to the world origin:
 * P = Rz(theta) [Px' Py'], Lz = Lz' + (x, y) × P. */
static void planar_momentum(const mbs_model *m, mbs_data *d, const double *q, const double *v, double out[3])
{
    double M[16], h[4];
    mbs_crba(m, d, q, M);
    for (int i = 0; i < 4; i++) {
        h[i] = 0;
        for (int j = 0; j < 4; j++) h[i] += M[i + 4 * j] * v[j];
    }
    /* slider placement: position (x, y), rotation theta (q = [x y cos sin phi]) */
    double x = q[0], y = q[1], c = q[2], s = q[3];
    double Px = c * h[0] - s * h[1], Py = s * h[0] + c * h[1];
    out[0] = Px;
    out[1] = Py;
    out[2] = h[2] + x * Py - y * Px;   /* L_z about the world origin */
}

static void test_planar_body(void)
{
    mbs_model *m = load("planar_body", 0);
    if (!m) return;
    mbs_data *d = mbs_data_new(m);
    CHECK(mbs_model_nq(m) == 5 && mbs_model_nv(m) == 4, "planar body nq %d nv %d", mbs_model_nq(m), mbs_model_nv(m));
    CHECK(mbs_joint_type_of(m, 0) == MBS_JOINT_PLANAR, "planar body: joint 0 is not planar");

    /* header samples pin the transcription */
    {
        double M[16], s0[16], s9[16];
        double r0[16] = {2.0, 0.0, 0.07500000000000001, 0.0, 0.0, 2.0, 0.4, 0.1,
                         0.07500000000000001, 0.4, 0.18875, 0.055, 0.0, 0.1, 0.055, 0.025000000000000005};
        double r9[16] = {2.0, 0.0, -0.0033326909627483386, -0.07833269096274835,
                         0.0, 2.0, 0.3621609968270665, 0.06216099682706644,
                         -0.0033326909627483386, 0.3621609968270665, 0.16604659809623987, 0.04364829904811993,
                         -0.07833269096274835, 0.06216099682706644, 0.04364829904811993, 0.025};
        for (int i = 0; i < 4; i++)
            for (int j = 0; j < 4; j++) { s0[i + 4 * j] = r0[4 * i + j]; s9[i + 4 * j] = r9[4 * i + j]; }
        planar_M(0, M);
        CHECK_CLOSE(M, s0, 16, 1e-15, "planar M formula vs header sample phi = 0");
        planar_M(0.9, M);
        CHECK_CLOSE(M, s9, 16, 1e-15, "planar M formula vs header sample phi = 0.9");
    }

    unsigned long long seed = 33;
    for (int k = 0; k < NSAMPLES + 2; k++) {
        double q[5], M[16], Mx[16], g[4], zero4[4] = {0, 0, 0, 0};
        double th = tm_uniform(&seed, -PI, PI);
        q[0] = tm_uniform(&seed, -2, 2); q[1] = tm_uniform(&seed, -2, 2);
        q[2] = cos(th); q[3] = sin(th);
        q[4] = k == NSAMPLES ? 0 : k == NSAMPLES + 1 ? 0.9 : tm_uniform(&seed, -PI, PI);
        mbs_crba(m, d, q, M);
        planar_M(q[4], Mx);
        CHECK_CLOSE(M, Mx, 16, 1e-12, "planar body M(phi) (independent of x, y, theta)");
        mbs_gravity(m, d, q, g);
        CHECK_CLOSE(g, zero4, 4, 1e-13, "planar body g(q) = 0 (gravity normal to the plane)");
    }

    /* Torque-free motion (gravity is normal to the plane: no in-plane force): kinetic
     * energy, in-plane world linear momentum and angular momentum about world z are
     * conserved. RKMK4 with h = 1e-3 over 400 steps, |v| ~ 1..3: the error is O(h^4)
     * (measured: ~3e-14 in energy and ~2e-13 in momentum at h = 1e-3, x250 and x570 at
     * h = 4e-3, i.e. h^4), so 1e-10 is ~500x above it while
     * an integrator without the bracket terms (second order: ~1e-8) or a Coriolis term
     * off by 0.1% in aba (~4e-5 energy, ~1e-3 momentum) fails. */
    {
        double q[5] = {0.2, -0.3, cos(0.4), sin(0.4), 0.7}, v[4] = {0.8, -0.5, 2.0, -2.5};
        double tau[4] = {0, 0, 0, 0};
        double ke0 = mbs_kinetic_energy(m, d, q, v), h0[3], h1[3];
        planar_momentum(m, d, q, v, h0);
        double drift = 0, mdrift = 0;
        for (int step = 0; step < 400; step++) {
            rk4_step(m, d, q, v, tau, 1e-3);
            double ke = mbs_kinetic_energy(m, d, q, v);
            drift = fmax(drift, fabs(ke - ke0) / ke0);
            planar_momentum(m, d, q, v, h1);
            for (int i = 0; i < 3; i++) mdrift = fmax(mdrift, fabs(h1[i] - h0[i]) / fmax(1, fabs(h0[i])));
        }
        CHECK(drift < 1e-10, "planar body: kinetic energy drift %.3e >= 1e-10", drift);
        CHECK(mdrift < 1e-10, "planar body: momentum drift %.3e >= 1e-10", mdrift);
        /* the motion is not trivial: the arm moved and the body turned */
        CHECK(fabs(q[4] - 0.7) > 0.1, "planar body: the arm did not move (%g)", q[4]);
        /* independent momentum from the COM velocity: P = m_total vcom */
        double com[3], vcom[3];
        mbs_center_of_mass(m, d, q, v, com, vcom);
        double P[2] = {2.0 * vcom[0], 2.0 * vcom[1]};
        CHECK_CLOSE(P, h1, 2, 1e-12, "planar body: P = m vcom");
        printf("planar body: KE drift %.2e, momentum drift %.2e over 400 RK4 steps of 1e-3\n", drift, mdrift);
    }
    mbs_data_free(d);
    mbs_model_free(m);
}

/* ---- free box ---- */

static const double box_mass = 3.0, box_c[3] = {0.01, -0.02, 0.03};
static const double box_Ic_rows[9] = {
    0.060123718071959896, 0.00353094476968178, -0.00605141873307915,
    0.00353094476968178, 0.05102466356401883, -8.85669792336191e-05,
    -0.00605141873307915, -8.85669792336191e-05, 0.033851618364021285};
static const double box_Io_rows[9] = {
    0.06402371807195989, 0.00413094476968178, -0.0069514187330791495,
    0.00413094476968178, 0.05402466356401883, 0.0017114330207663809,
    -0.0069514187330791495, 0.0017114330207663809, 0.03535161836402129};

/* [[m 1, -m [c]x], [m [c]x, I_origin]], 6x6 column-major. */
static void box_M(double M[36])
{
    double Io[9];
    rows_to_colmajor(box_Io_rows, Io);
    memset(M, 0, 36 * sizeof(double));
    const double *c = box_c;
    double m = box_mass;
    double cx[9] = {0, c[2], -c[1], -c[2], 0, c[0], c[1], -c[0], 0};  /* [c]x column-major */
    for (int i = 0; i < 3; i++) {
        M[i + 6 * i] = m;
        for (int j = 0; j < 3; j++) {
            M[i + 6 * (j + 3)] = -m * cx[i + 3 * j];
            M[(i + 3) + 6 * j] = m * cx[i + 3 * j];
            M[(i + 3) + 6 * (j + 3)] = Io[i + 3 * j];
        }
    }
}

/* Spatial momentum in the world: P = R f, L = R n + p × P about the world origin, with
 * [f; n] = M v the body-frame momentum at the body origin. */
static void box_world_momentum(const mbs_model *m, mbs_data *d, const double *q, const double *v, double out[6])
{
    double M[36], hb[6], R[9], p[3];
    mbs_crba(m, d, q, M);
    for (int i = 0; i < 6; i++) {
        hb[i] = 0;
        for (int j = 0; j < 6; j++) hb[i] += M[i + 6 * j] * v[j];
    }
    mbs_forward_kinematics(m, d, q, NULL, NULL);
    mbs_body_placement(m, d, 0, R, p);
    double n[3], pxP[3];
    m3_mulv(R, hb, out);
    m3_mulv(R, hb + 3, n);
    cross(p, out, pxP);
    for (int k = 0; k < 3; k++) out[3 + k] = n[k] + pxP[k];
}

static void test_free_box(void)
{
    mbs_model *m = load("free_box", 1);
    if (!m) return;
    mbs_data *d = mbs_data_new(m);
    CHECK(mbs_model_nq(m) == 7 && mbs_model_nv(m) == 6, "free box nq %d nv %d", mbs_model_nq(m), mbs_model_nv(m));
    CHECK(mbs_joint_type_of(m, 0) == MBS_JOINT_FREEFLYER, "free box: joint 0 is not a free-flyer");

    /* The header's numbers against their own derivation: R diag(I) Rᵀ, then the parallel
     * axis theorem. */
    {
        double R[9], D[9] = {0.0625, 0, 0, 0, 0.05, 0, 0, 0, 0.0325}, RD[9], Rt[9], Ic[9], Io[9], Icx[9], Iox[9];
        rpy(0.1, 0.2, 0.3, R);
        for (int i = 0; i < 3; i++)
            for (int j = 0; j < 3; j++) Rt[i + 3 * j] = R[j + 3 * i];
        m3_mul(R, D, RD);
        m3_mul(RD, Rt, Ic);
        rows_to_colmajor(box_Ic_rows, Icx);
        rows_to_colmajor(box_Io_rows, Iox);
        CHECK_CLOSE(Ic, Icx, 9, 1e-16, "free box: header I_com = R diag Rᵀ");
        double cc = box_c[0] * box_c[0] + box_c[1] * box_c[1] + box_c[2] * box_c[2];
        for (int i = 0; i < 3; i++)
            for (int j = 0; j < 3; j++) Io[i + 3 * j] = Icx[i + 3 * j] + box_mass * ((i == j) * cc - box_c[i] * box_c[j]);
        CHECK_CLOSE(Io, Iox, 9, 1e-16, "free box: header I_origin = I_com + m(|c|² 1 - c cᵀ)");
        /* and the loader's body inertia */
        double mass, com[3], Icb[9];
        mbs_body_inertia(m, 0, &mass, com, Icb);
        CHECK(fabs(mass - 3.0) <= 1e-15, "free box mass %.17g", mass);
        CHECK_CLOSE(com, box_c, 3, 1e-16, "free box COM");
        CHECK_CLOSE(Icb, Icx, 9, 1e-15, "free box inertia about the COM");
    }

    double Mx[36];
    box_M(Mx);
    unsigned long long seed = 44;
    const double g0[3] = {0, 0, 0}, gstd[3] = {0, 0, -9.81};
    for (int k = 0; k < NSAMPLES; k++) {
        double q[7], v[6], tau[6], zero6[6] = {0}, M[36], ddq[6], ddqx[6];
        mbs_random_configuration(m, &seed, q);
        for (int i = 0; i < 6; i++) { v[i] = tm_uniform(&seed, -1, 1); tau[i] = tm_uniform(&seed, -2, 2); }

        /* body-frame velocities: M is the body's spatial inertia whatever q */
        mbs_crba(m, d, q, M);
        CHECK_CLOSE(M, Mx, 36, 1e-14, "free box: crba = spatial inertia [[m1, -m[c]x], [m[c]x, I_o]]");

        /* no gravity, at rest: aba = M⁻¹ tau */
        mbs_model_set_gravity(m, g0);
        mbs_aba(m, d, q, zero6, tau, ddq);
        solve_dense(6, Mx, tau, ddqx);
        CHECK_CLOSE(ddq, ddqx, 6, 1e-12, "free box: aba(q, 0, tau) without gravity = M⁻¹ tau");
        double Ma[6];
        for (int i = 0; i < 6; i++) {
            Ma[i] = 0;
            for (int j = 0; j < 6; j++) Ma[i] += Mx[i + 6 * j] * ddq[j];
        }
        CHECK_CLOSE(Ma, tau, 6, 1e-12, "free box: M aba(q, 0, tau) = tau");

        /* with gravity, at rest, no torque: free fall, origin acceleration Rᵀ g, ω̇ = 0 */
        mbs_model_set_gravity(m, gstd);
        mbs_aba(m, d, q, zero6, zero6, ddq);
        double R[9], Rt[9];
        quat_to_R(q + 3, R);
        for (int i = 0; i < 3; i++)
            for (int j = 0; j < 3; j++) Rt[i + 3 * j] = R[j + 3 * i];
        m3_mulv(Rt, gstd, ddqx);
        ddqx[3] = ddqx[4] = ddqx[5] = 0;
        CHECK_CLOSE(ddq, ddqx, 6, 1e-12, "free box: free fall aba(q, 0, 0) = [Rᵀ g; 0]");
        double pot = mbs_potential_energy(m, d, q), com[3], cw[3];
        m3_mulv(R, box_c, cw);
        for (int i = 0; i < 3; i++) com[i] = q[i] + cw[i];
        double potx = 3.0 * 9.81 * com[2];
        CHECK_CLOSE(&pot, &potx, 1, 1e-13, "free box: PE = m 9.81 z_com");
        /* kinetic energy ½ vᵀ M v */
        double ke = mbs_kinetic_energy(m, d, q, v), kex = 0;
        for (int i = 0; i < 6; i++)
            for (int j = 0; j < 6; j++) kex += 0.5 * v[i] * Mx[i + 6 * j] * v[j];
        CHECK_CLOSE(&ke, &kex, 1, 1e-14, "free box: KE = ½ vᵀ M v");
    }

    /* Torque-free motion without gravity: kinetic energy, world linear momentum and world
     * angular momentum (about the world origin) are conserved. The body spins at |ω| ~ 3
     * rad/s about no principal axis, so ω changes in the body and the bracket terms of the
     * Lie-group RK4 matter. RKMK4, h = 1e-3, 500 steps: error O(h^4), measured ~8e-14 in
     * energy and ~8e-13 in momentum (x500 and x1000 at h = 4e-3); tolerance 1e-10. Fails
     * for a second-order configuration update (no brackets: ~3e-7) and for a gyroscopic
     * term off by 0.1% in aba (momentum ~1e-3; the energy alone cannot see that one, as
     * the gyroscopic force does no work). */
    {
        mbs_model_set_gravity(m, g0);
        double q[7] = {0.1, -0.2, 0.3, 0, 0, 0, 1}, v[6] = {0.3, -0.2, 0.5, 1.5, -2.0, 1.8}, tau[6] = {0};
        double qt[4] = {0.2, -0.3, 0.1, 0.9}, nq = 0;
        for (int i = 0; i < 4; i++) nq += qt[i] * qt[i];
        for (int i = 0; i < 4; i++) q[3 + i] = qt[i] / sqrt(nq);
        double ke0 = mbs_kinetic_energy(m, d, q, v), h0[6], h1[6], v0[6];
        memcpy(v0, v, sizeof v0);
        box_world_momentum(m, d, q, v, h0);
        double drift = 0, mdrift = 0;
        for (int step = 0; step < 500; step++) {
            rk4_step(m, d, q, v, tau, 1e-3);
            double ke = mbs_kinetic_energy(m, d, q, v);
            drift = fmax(drift, fabs(ke - ke0) / ke0);
            box_world_momentum(m, d, q, v, h1);
            for (int i = 0; i < 6; i++) mdrift = fmax(mdrift, fabs(h1[i] - h0[i]) / fmax(1, fabs(h0[i])));
        }
        CHECK(drift < 1e-10, "free box: kinetic energy drift %.3e >= 1e-10", drift);
        CHECK(mdrift < 1e-10, "free box: world momentum drift %.3e >= 1e-10", mdrift);
        double dv = 0;
        for (int i = 3; i < 6; i++) dv = fmax(dv, fabs(v[i] - v0[i]));
        CHECK(dv > 0.1, "free box: the body-frame angular velocity did not change (%g): test is trivial", dv);
        printf("free box: KE drift %.2e, world momentum drift %.2e over 500 RK4 steps of 1e-3\n", drift, mdrift);
    }
    mbs_data_free(d);
    mbs_model_free(m);
}

/* ---- fixed chain ---- */

static void test_fixed_chain(void)
{
    mbs_model *m = load("fixed_chain", 1);
    if (!m) return;
    mbs_data *d = mbs_data_new(m);
    CHECK(mbs_model_nbodies(m) == 2, "fixed chain: %d bodies", mbs_model_nbodies(m));
    CHECK(mbs_model_nq(m) == 8 && mbs_model_nv(m) == 7, "fixed chain nq %d nv %d", mbs_model_nq(m), mbs_model_nv(m));
    CHECK(fabs(mbs_model_mass(m) - 3.1) <= 1e-14, "fixed chain total mass %.17g", mbs_model_mass(m));
    if (mbs_model_nbodies(m) != 2) { mbs_data_free(d); mbs_model_free(m); return; }

    /* merged root body (base + plate), in the base link frame — the header's numbers */
    const double mx = 2.8, cx[3] = {0.09108897806727527, -0.013388458552457693, 0.15889947564340157};
    const double Ic_rows[9] = {
        0.04663050899129201, 0.0037038864482900964, -0.018632600735860462,
        0.0037038864482900964, 0.07220389467062069, 0.008404557300288239,
        -0.018632600735860462, 0.008404557300288239, 0.06287944074736912};
    double Icx[9];
    rows_to_colmajor(Ic_rows, Icx);

    /* The same from the URDF numbers, computed here (checks the header's arithmetic). */
    double Rw[9], pw[3] = {0.2, -0.1, 0.3};
    rpy(0.4, -0.3, 0.7, Rw);
    {
        double Rpi[9], Rp[9], RpT[9], Ip[9] = {0.012, 0.002, -0.001, 0.002, 0.02, 0.003, -0.001, 0.003, 0.015};
        double T[9], Ipb[9], cp[3] = {0.03, 0.04, -0.02}, cpb[3];
        rpy(0.2, 0.1, -0.3, Rpi);
        m3_mul(Rw, Rpi, Rp);
        for (int i = 0; i < 3; i++)
            for (int j = 0; j < 3; j++) RpT[i + 3 * j] = Rp[j + 3 * i];
        m3_mul(Rp, Ip, T);
        m3_mul(T, RpT, Ipb);
        m3_mulv(Rw, cp, cpb);
        for (int k = 0; k < 3; k++) cpb[k] += pw[k];
        double cb[3] = {0.05, 0.0, 0.1}, mb = 2.0, mp = 0.8, Ib[9] = {0.01, 0, 0, 0, 0.02, 0, 0, 0, 0.03};
        double c[3], I[9];
        for (int k = 0; k < 3; k++) c[k] = (mb * cb[k] + mp * cpb[k]) / (mb + mp);
        for (int i = 0; i < 3; i++)
            for (int j = 0; j < 3; j++) {
                double db[3] = {cb[0] - c[0], cb[1] - c[1], cb[2] - c[2]};
                double dp[3] = {cpb[0] - c[0], cpb[1] - c[1], cpb[2] - c[2]};
                double nb = db[0] * db[0] + db[1] * db[1] + db[2] * db[2];
                double np = dp[0] * dp[0] + dp[1] * dp[1] + dp[2] * dp[2];
                I[i + 3 * j] = Ib[i + 3 * j] + Ipb[i + 3 * j] + mb * ((i == j) * nb - db[i] * db[j]) +
                               mp * ((i == j) * np - dp[i] * dp[j]);
            }
        CHECK_CLOSE(c, cx, 3, 1e-15, "fixed chain: header merged COM vs its derivation");
        CHECK_CLOSE(I, Icx, 9, 1e-15, "fixed chain: header merged inertia vs its derivation");
    }

    double mass, com[3], Ic[9];
    mbs_body_inertia(m, 0, &mass, com, Ic);
    CHECK(fabs(mass - mx) <= 1e-14, "fixed chain merged mass %.17g != 2.8", mass);
    CHECK_CLOSE(com, cx, 3, 1e-14, "fixed chain merged COM");
    CHECK_CLOSE(Ic, Icx, 9, 1e-14, "fixed chain merged inertia about the COM");
    double Ic_asym = 0;
    for (int i = 0; i < 3; i++)
        for (int j = 0; j < 3; j++) Ic_asym = fmax(Ic_asym, fabs(Ic[i + 3 * j] - Ic[j + 3 * i]));
    CHECK(Ic_asym <= 1e-17, "fixed chain merged inertia not symmetric: %g", Ic_asym);
    {
        const double ctip[3] = {0.15, 0, 0}, Itip[9] = {0.0002, 0, 0, 0, 0.002, 0, 0, 0, 0.002};
        mbs_body_inertia(m, 1, &mass, com, Ic);
        CHECK(fabs(mass - 0.3) <= 1e-15, "fixed chain tip mass %.17g", mass);
        CHECK_CLOSE(com, ctip, 3, 1e-15, "fixed chain tip COM");
        CHECK_CLOSE(Ic, Itip, 9, 1e-15, "fixed chain tip inertia");
    }

    /* Hinge placement in the merged body: the header's numbers and their derivation
     * (weld_xyz + R_weld (0.1, 0, 0.05), R_weld Ry(0.5)). */
    const double ph[3] = {0.2752024727800023, -0.06211526187339063, 0.3735481794801968};
    const double Rh_rows[9] = {
        0.6207686410753627, -0.6813825787005381, 0.38776806947046655,
        0.7669650635376659, 0.6303290966990672, -0.12020740895303378,
        -0.1625142626667319, 0.3720255519422596, 0.9138851695546577};
    double Rh[9];
    rows_to_colmajor(Rh_rows, Rh);
    {
        double Ry5[9], R[9], p[3], o[3] = {0.1, 0, 0.05};
        rot_y(0.5, Ry5);
        m3_mul(Rw, Ry5, R);
        m3_mulv(Rw, o, p);
        for (int k = 0; k < 3; k++) p[k] += pw[k];
        CHECK_CLOSE(R, Rh, 9, 1e-15, "fixed chain: header hinge rotation = R_weld Ry(0.5)");
        CHECK_CLOSE(p, ph, 3, 1e-15, "fixed chain: header hinge translation");
    }

    /* frames: kinds, bodies and local placements */
    int f_base = mbs_frame_id(m, "base"), f_plate = mbs_frame_id(m, "plate"), f_weld = mbs_frame_id(m, "weld");
    int f_tip = mbs_frame_id(m, "tip"), f_hinge = mbs_frame_id(m, "hinge"), f_end = mbs_frame_id(m, "tip_end");
    int f_endj = mbs_frame_id(m, "tip_end_joint");
    CHECK(f_base >= 0 && f_plate >= 0 && f_weld >= 0 && f_tip >= 0 && f_hinge >= 0 && f_end >= 0 && f_endj >= 0,
          "fixed chain: missing frame (base %d plate %d weld %d tip %d hinge %d tip_end %d tip_end_joint %d)",
          f_base, f_plate, f_weld, f_tip, f_hinge, f_end, f_endj);
    if (f_base < 0 || f_plate < 0 || f_weld < 0 || f_tip < 0 || f_hinge < 0 || f_end < 0 || f_endj < 0) {
        mbs_data_free(d); mbs_model_free(m); return;
    }
    CHECK(mbs_frame_type_of(m, f_base) == MBS_FRAME_BODY && mbs_frame_body(m, f_base) == 0, "base frame kind/body");
    CHECK(mbs_frame_type_of(m, f_plate) == MBS_FRAME_FIXED_LINK && mbs_frame_body(m, f_plate) == 0,
          "plate frame kind %d body %d", (int)mbs_frame_type_of(m, f_plate), mbs_frame_body(m, f_plate));
    CHECK(mbs_frame_type_of(m, f_weld) == MBS_FRAME_FIXED_JOINT && mbs_frame_body(m, f_weld) == 0, "weld frame kind/body");
    CHECK(mbs_frame_type_of(m, f_tip) == MBS_FRAME_BODY && mbs_frame_body(m, f_tip) == 1, "tip frame kind/body");
    CHECK(mbs_frame_type_of(m, f_hinge) == MBS_FRAME_JOINT && mbs_frame_body(m, f_hinge) == 1, "hinge frame kind/body");
    CHECK(mbs_frame_type_of(m, f_end) == MBS_FRAME_FIXED_LINK && mbs_frame_body(m, f_end) == 1,
          "tip_end frame kind %d body %d", (int)mbs_frame_type_of(m, f_end), mbs_frame_body(m, f_end));
    CHECK(mbs_frame_type_of(m, f_endj) == MBS_FRAME_FIXED_JOINT && mbs_frame_body(m, f_endj) == 1,
          "tip_end_joint frame kind/body");
    const double I3[9] = {1, 0, 0, 0, 1, 0, 0, 0, 1}, o3[3] = {0, 0, 0}, pend[3] = {0.3, 0, 0};
    {
        double R[9], p[3];
        mbs_frame_local_placement(m, f_base, R, p);
        CHECK_CLOSE(R, I3, 9, 0, "base frame local rotation");
        CHECK_CLOSE(p, o3, 3, 0, "base frame local translation");
        mbs_frame_local_placement(m, f_plate, R, p);
        CHECK_CLOSE(R, Rw, 9, 1e-15, "plate frame local rotation = R_weld");
        CHECK_CLOSE(p, pw, 3, 1e-15, "plate frame local translation = weld xyz");
        mbs_frame_local_placement(m, f_weld, R, p);
        CHECK_CLOSE(R, Rw, 9, 1e-15, "weld frame local rotation = R_weld");
        CHECK_CLOSE(p, pw, 3, 1e-15, "weld frame local translation = weld xyz");
        mbs_frame_local_placement(m, f_tip, R, p);
        CHECK_CLOSE(R, I3, 9, 0, "tip frame local rotation");
        CHECK_CLOSE(p, o3, 3, 0, "tip frame local translation");
        mbs_frame_local_placement(m, f_end, R, p);
        CHECK_CLOSE(R, I3, 9, 1e-16, "tip_end frame local rotation");
        CHECK_CLOSE(p, pend, 3, 1e-16, "tip_end frame local translation (0.3, 0, 0)");
    }

    /* world placements at random q: base(q) ∘ (Rh, ph) ∘ Rz(θ) for the tip, and the fixed
     * links after it */
    unsigned long long seed = 55;
    for (int k = 0; k <= NSAMPLES; k++) {
        double q[8], Rb[9], pb[3], R[9], p[3];
        if (k == 0) mbs_neutral(m, q);
        else mbs_random_configuration(m, &seed, q);
        quat_to_R(q + 3, Rb);
        memcpy(pb, q, sizeof pb);

        double Rx[9], px[3], t[3];
        mbs_compute_frame_placement(m, d, q, f_base, R, p);
        CHECK_CLOSE(R, Rb, 9, 1e-15, "base world rotation");
        CHECK_CLOSE(p, pb, 3, 1e-15, "base world translation");

        mbs_compute_frame_placement(m, d, q, f_plate, R, p);
        m3_mul(Rb, Rw, Rx);
        m3_mulv(Rb, pw, t);
        for (int i = 0; i < 3; i++) px[i] = pb[i] + t[i];
        CHECK_CLOSE(R, Rx, 9, 1e-15, "plate world rotation = R_base R_weld");
        CHECK_CLOSE(p, px, 3, 1e-15, "plate world translation");

        double Rz[9], RbRh[9], Rtip[9], ptip[3];
        rot_z(q[7], Rz);
        m3_mul(Rb, Rh, RbRh);
        m3_mul(RbRh, Rz, Rtip);
        m3_mulv(Rb, ph, t);
        for (int i = 0; i < 3; i++) ptip[i] = pb[i] + t[i];
        mbs_compute_frame_placement(m, d, q, f_tip, R, p);
        CHECK_CLOSE(R, Rtip, 9, 1e-14, "tip world rotation = R_base R_hinge Rz(q)");
        CHECK_CLOSE(p, ptip, 3, 1e-14, "tip world translation");
        mbs_compute_frame_placement(m, d, q, f_hinge, R, p);
        CHECK_CLOSE(R, Rtip, 9, 1e-14, "hinge world rotation");
        CHECK_CLOSE(p, ptip, 3, 1e-14, "hinge world translation");

        mbs_compute_frame_placement(m, d, q, f_end, R, p);
        m3_mulv(Rtip, pend, t);
        for (int i = 0; i < 3; i++) px[i] = ptip[i] + t[i];
        CHECK_CLOSE(R, Rtip, 9, 1e-14, "tip_end world rotation");
        CHECK_CLOSE(p, px, 3, 1e-14, "tip_end world translation");

        /* the world COM of the whole model from the merged inertias */
        double comw[3], c0[3], c1[3], vtmp[3];
        mbs_center_of_mass(m, d, q, NULL, comw, NULL);
        m3_mulv(Rb, cx, c0);
        m3_mulv(Rtip, (const double[3]){0.15, 0, 0}, vtmp);
        for (int i = 0; i < 3; i++) {
            c0[i] += pb[i];
            c1[i] = ptip[i] + vtmp[i];
            px[i] = (2.8 * c0[i] + 0.3 * c1[i]) / 3.1;
        }
        CHECK_CLOSE(comw, px, 3, 1e-14, "fixed chain world COM");
    }
    mbs_data_free(d);
    mbs_model_free(m);
}

int main(void)
{
    RUN(test_pendulum);
    RUN(test_double_pendulum);
    RUN(test_planar_body);
    RUN(test_free_box);
    RUN(test_fixed_chain);
    return check_summary("test_closed_form");
}
