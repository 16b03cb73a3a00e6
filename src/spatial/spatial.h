/* spatial.h — tiny spatial-algebra operators, each named after what it computes.
 * Motion vectors m = [v; w] (linear, angular), force vectors f = [f; n]. A placement
 * (R, p) maps child coordinates to parent coordinates; R is 3x3 column-major.
 * Inertias are stored as (mass, h = m·c, Io = rotational inertia about the origin). */
#ifndef MBS_SPATIAL_H
#define MBS_SPATIAL_H

#include <math.h>
#include <string.h>

/* ---- sine and cosine ---- */
/* sin x and cos x together, inlined: a libm call costs about as much as the rest of a joint's
 * placement and cannot overlap with its neighbours'. Cody–Waite reduction by π/2 (the first
 * part of π/2 has 33 bits, so k·part is exact for |x| < 1e6), then fdlibm's kernel
 * polynomials on [−π/4, π/4]; within 1 ulp of libm. Valid for |x| < 1e6 only: the callers
 * below send larger |x| to libm. Branch-free (selects for the quadrant), so that a loop of
 * them vectorises. */
static inline void sin_cos_reduced(double x, double *s, double *c)
{
    const double shift = 0x1.8p52;                      /* adding it rounds to an integer */
    double k = (x * 0.63661977236758134308 + shift) - shift;
    double r = (x - k * 1.57079632673412561417e+00) - k * 6.07710050650619224932e-11;
    double z = r * r;
    double sp = -1.66666666666666324348e-01 + z * (8.33333333332248946124e-03 + z * (-1.98412698298579493134e-04
              + z * (2.75573137070700676789e-06 + z * (-2.50507602534068634195e-08 + z * 1.58969099521155010221e-10))));
    double cp = z * (4.16666666666666019037e-02 + z * (-1.38888888888741095749e-03 + z * (2.48015872894767294178e-05
              + z * (-2.75573143513906633035e-07 + z * (2.08757232129817482790e-09 + z * -1.13596475577881948265e-11)))));
    double sr = r + r * z * sp;
    double hz = 0.5 * z, w = 1.0 - hz;
    double cr = w + (((1.0 - w) - hz) + z * cp);        /* 1 − z/2 + z·cp without losing the low bits */
    /* x = n π/2 + r: rotate (sr, cr) by n quarter turns; an angle beyond 1e6 rad (redone by libm)
     * or not finite gets n = 0 here, whose conversion a k out of long long's range would make undefined */
    long long n = (long long)(fabs(k) < 1e15 ? k : 0.0);
    double ss = (n & 1) ? cr : sr, cc = (n & 1) ? sr : cr;
    *s = (n & 2) ? -ss : ss;
    *c = ((n + 1) & 2) ? -cc : cc;
}

static inline void sin_cos(double x, double *s, double *c)
{
    if (!(fabs(x) < 1e6)) { *s = sin(x); *c = cos(x); return; }
    sin_cos_reduced(x, s, c);
}

/* sin_cos of n angles at once, in a loop the compiler vectorises: the joints' sines and cosines
 * are taken here before the placements, eight lanes at a time with AVX-512, rather than one
 * chain per joint. An angle beyond 1e6 rad is redone by libm after the loop. */
static inline void sin_cos_n(const double *restrict x, int n, double *restrict s, double *restrict c)
{
    int big = 0;
    for (int i = 0; i < n; i++) {
        sin_cos_reduced(x[i], s + i, c + i);
        big |= !(fabs(x[i]) < 1e6);
    }
    if (big)
        for (int i = 0; i < n; i++)
            if (!(fabs(x[i]) < 1e6)) { s[i] = sin(x[i]); c[i] = cos(x[i]); }
}

/* ---- 3-vectors and 3x3 matrices ---- */
static inline void v3_cross(const double a[3], const double b[3], double o[3])
{
    double x = a[1] * b[2] - a[2] * b[1], y = a[2] * b[0] - a[0] * b[2], z = a[0] * b[1] - a[1] * b[0];
    o[0] = x; o[1] = y; o[2] = z;
}
static inline double v3_dot(const double a[3], const double b[3])
{
    return a[0] * b[0] + a[1] * b[1] + a[2] * b[2];
}
static inline void m3_mulv(const double R[9], const double x[3], double o[3])     /* o = R x */
{
    double a = R[0] * x[0] + R[3] * x[1] + R[6] * x[2];
    double b = R[1] * x[0] + R[4] * x[1] + R[7] * x[2];
    double c = R[2] * x[0] + R[5] * x[1] + R[8] * x[2];
    o[0] = a; o[1] = b; o[2] = c;
}
static inline void m3t_mulv(const double R[9], const double x[3], double o[3])    /* o = Rᵀ x */
{
    double a = R[0] * x[0] + R[1] * x[1] + R[2] * x[2];
    double b = R[3] * x[0] + R[4] * x[1] + R[5] * x[2];
    double c = R[6] * x[0] + R[7] * x[1] + R[8] * x[2];
    o[0] = a; o[1] = b; o[2] = c;
}
static inline void m3_mul(const double A[9], const double B[9], double C[9])      /* C = A B */
{
    double T[9];
    for (int j = 0; j < 3; j++)
        for (int i = 0; i < 3; i++)
            T[i + 3 * j] = A[i] * B[3 * j] + A[i + 3] * B[3 * j + 1] + A[i + 6] * B[3 * j + 2];
    memcpy(C, T, sizeof T);
}
static inline void m3t_mul(const double A[9], const double B[9], double C[9])     /* C = Aᵀ B */
{
    double T[9];
    for (int j = 0; j < 3; j++)
        for (int i = 0; i < 3; i++)
            T[i + 3 * j] = A[3 * i] * B[3 * j] + A[3 * i + 1] * B[3 * j + 1] + A[3 * i + 2] * B[3 * j + 2];
    memcpy(C, T, sizeof T);
}
static inline void m3_identity(double R[9])
{
    static const double I[9] = {1, 0, 0, 0, 1, 0, 0, 0, 1};
    memcpy(R, I, sizeof I);
}
/* R = exp([axis]x θ) for a unit axis (Rodrigues). */
static inline void m3_axis_angle(const double u[3], double c, double s, double R[9])
{
    double t = 1.0 - c;
    R[0] = c + t * u[0] * u[0];        R[3] = t * u[0] * u[1] - s * u[2]; R[6] = t * u[0] * u[2] + s * u[1];
    R[1] = t * u[0] * u[1] + s * u[2]; R[4] = c + t * u[1] * u[1];        R[7] = t * u[1] * u[2] - s * u[0];
    R[2] = t * u[0] * u[2] - s * u[1]; R[5] = t * u[1] * u[2] + s * u[0]; R[8] = c + t * u[2] * u[2];
}
/* Rotation matrix of a unit quaternion (x, y, z, w). */
static inline void m3_from_quat(const double qt[4], double R[9])
{
    double x = qt[0], y = qt[1], z = qt[2], w = qt[3];
    R[0] = 1 - 2 * (y * y + z * z); R[3] = 2 * (x * y - z * w);     R[6] = 2 * (x * z + y * w);
    R[1] = 2 * (x * y + z * w);     R[4] = 1 - 2 * (x * x + z * z); R[7] = 2 * (y * z - x * w);
    R[2] = 2 * (x * z - y * w);     R[5] = 2 * (y * z + x * w);     R[8] = 1 - 2 * (x * x + y * y);
}
/* Unit quaternion (x, y, z, w) of a rotation matrix (Shepperd's method). */
static inline void m3_to_quat(const double R[9], double qt[4])
{
    double tr = R[0] + R[4] + R[8];
    if (tr > 0) {
        double s = 2 * sqrt(tr + 1);
        qt[3] = 0.25 * s; qt[0] = (R[5] - R[7]) / s; qt[1] = (R[6] - R[2]) / s; qt[2] = (R[1] - R[3]) / s;
    } else if (R[0] > R[4] && R[0] > R[8]) {
        double s = 2 * sqrt(1 + R[0] - R[4] - R[8]);
        qt[3] = (R[5] - R[7]) / s; qt[0] = 0.25 * s; qt[1] = (R[3] + R[1]) / s; qt[2] = (R[6] + R[2]) / s;
    } else if (R[4] > R[8]) {
        double s = 2 * sqrt(1 + R[4] - R[0] - R[8]);
        qt[3] = (R[6] - R[2]) / s; qt[0] = (R[3] + R[1]) / s; qt[1] = 0.25 * s; qt[2] = (R[7] + R[5]) / s;
    } else {
        double s = 2 * sqrt(1 + R[8] - R[0] - R[4]);
        qt[3] = (R[1] - R[3]) / s; qt[0] = (R[6] + R[2]) / s; qt[1] = (R[7] + R[5]) / s; qt[2] = 0.25 * s;
    }
}
/* R from URDF roll-pitch-yaw: R = Rz(yaw) Ry(pitch) Rx(roll). */
static inline void m3_from_rpy(double r, double p, double y, double R[9])
{
    double cr = cos(r), sr = sin(r), cp = cos(p), sp = sin(p), cy = cos(y), sy = sin(y);
    R[0] = cy * cp; R[3] = cy * sp * sr - sy * cr; R[6] = cy * sp * cr + sy * sr;
    R[1] = sy * cp; R[4] = sy * sp * sr + cy * cr; R[7] = sy * sp * cr - cy * sr;
    R[2] = -sp;     R[5] = cp * sr;                R[8] = cp * cr;
}

/* ---- placements acting on spatial vectors ---- */
/* parent-frame motion of a child-frame motion: w' = R w, v' = R v + p x w'. */
static inline void se3_act_motion(const double R[9], const double p[3], const double m[6], double o[6])
{
    double w[3], v[3], t[3];
    m3_mulv(R, m + 3, w);
    m3_mulv(R, m, v);
    v3_cross(p, w, t);
    o[0] = v[0] + t[0]; o[1] = v[1] + t[1]; o[2] = v[2] + t[2];
    o[3] = w[0]; o[4] = w[1]; o[5] = w[2];
}
/* child-frame motion of a parent-frame motion: w = Rᵀ w', v = Rᵀ (v' - p x w'). */
static inline void se3_actinv_motion(const double R[9], const double p[3], const double m[6], double o[6])
{
    double t[3], u[3];
    v3_cross(p, m + 3, t);
    u[0] = m[0] - t[0]; u[1] = m[1] - t[1]; u[2] = m[2] - t[2];
    m3t_mulv(R, m + 3, o + 3);
    m3t_mulv(R, u, o);
}
/* parent-frame force of a child-frame force: f' = R f, n' = R n + p x f'. */
static inline void se3_act_force(const double R[9], const double p[3], const double f[6], double o[6])
{
    double fo[3], n[3], t[3];
    m3_mulv(R, f, fo);
    m3_mulv(R, f + 3, n);
    v3_cross(p, fo, t);
    o[0] = fo[0]; o[1] = fo[1]; o[2] = fo[2];
    o[3] = n[0] + t[0]; o[4] = n[1] + t[1]; o[5] = n[2] + t[2];
}
/* child-frame force of a parent-frame force: f = Rᵀ f', n = Rᵀ (n' - p x f'). */
static inline void se3_actinv_force(const double R[9], const double p[3], const double f[6], double o[6])
{
    double t[3], u[3];
    v3_cross(p, f, t);
    u[0] = f[3] - t[0]; u[1] = f[4] - t[1]; u[2] = f[5] - t[2];
    m3t_mulv(R, f, o);
    m3t_mulv(R, u, o + 3);
}
/* Composition of placements: (R, p) = (R1, p1) ∘ (R2, p2). */
static inline void se3_compose(const double R1[9], const double p1[3], const double R2[9], const double p2[3],
                               double R[9], double p[3])
{
    double t[3];
    m3_mulv(R1, p2, t);
    p[0] = p1[0] + t[0]; p[1] = p1[1] + t[1]; p[2] = p1[2] + t[2];
    m3_mul(R1, R2, R);
}

/* ---- cross products of spatial vectors ---- */
/* motion x motion (crm): [w1 x v2 + v1 x w2; w1 x w2]. */
/* o = v_lin + ω × p: the velocity at world point p of the spatial motion m = [v_lin; ω] (world
 * axes, at the origin), e.g. of a joint Jacobian column. */
static inline void motion_point_velocity(const double m[6], const double p[3], double o[3])
{
    double t[3];
    v3_cross(m + 3, p, t);
    for (int k = 0; k < 3; k++) o[k] = m[k] + t[k];
}
static inline void motion_cross(const double a[6], const double b[6], double o[6])
{
    double t1[3], t2[3], t3[3];
    v3_cross(a + 3, b, t1);
    v3_cross(a, b + 3, t2);
    v3_cross(a + 3, b + 3, t3);
    o[0] = t1[0] + t2[0]; o[1] = t1[1] + t2[1]; o[2] = t1[2] + t2[2];
    o[3] = t3[0]; o[4] = t3[1]; o[5] = t3[2];
}
/* motion x* force (crf): [w x f; w x n + v x f]. */
static inline void force_cross(const double m[6], const double f[6], double o[6])
{
    double t1[3], t2[3], t3[3];
    v3_cross(m + 3, f, t1);
    v3_cross(m + 3, f + 3, t2);
    v3_cross(m, f, t3);
    o[0] = t1[0]; o[1] = t1[1]; o[2] = t1[2];
    o[3] = t2[0] + t3[0]; o[4] = t2[1] + t3[1]; o[5] = t2[2] + t3[2];
}
static inline double sdot(const double a[6], const double b[6])
{
    return a[0] * b[0] + a[1] * b[1] + a[2] * b[2] + a[3] * b[3] + a[4] * b[4] + a[5] * b[5];
}

/* ---- rigid-body inertia (mass, h = m c, Io about the origin) ---- */
/* f = I m: f = mass v - h x w, n = Io w + h x v. */
static inline void inertia_mul(double mass, const double h[3], const double Io[9], const double m[6], double o[6])
{
    double t[3], n[3], u[3];
    v3_cross(h, m + 3, t);
    m3_mulv(Io, m + 3, n);
    v3_cross(h, m, u);
    o[0] = mass * m[0] - t[0]; o[1] = mass * m[1] - t[1]; o[2] = mass * m[2] - t[2];
    o[3] = n[0] + u[0]; o[4] = n[1] + u[1]; o[5] = n[2] + u[2];
}
/* Inertia expressed in the parent frame, (R, p) being the child's placement:
 * h' = R h + m p, Io' = R Io Rᵀ - [Rh]x[p]x - [p]x[Rh]x - m [p]x². */
static inline void inertia_act(const double R[9], const double p[3], double mass, const double h[3],
                               const double Io[9], double h_out[3], double Io_out[9])
{
    double RI[9], Rh[3];
    m3_mul(R, Io, RI);
    m3_mulv(R, h, Rh);
    /* -[a]x[b]x - [b]x[a]x = 2 (a·b) I - a bᵀ - b aᵀ ; -m[p]x² = m (|p|² I - p pᵀ) */
    double ab = v3_dot(Rh, p), pp = v3_dot(p, p);
    /* the result is symmetric: compute the lower triangle, mirror it */
    for (int j = 0; j < 3; j++)
        for (int i = j; i < 3; i++) {
            double d = (i == j) ? (2 * ab + mass * pp) : 0.0;
            double x = RI[i] * R[j] + RI[i + 3] * R[j + 3] + RI[i + 6] * R[j + 6];
            Io_out[i + 3 * j] = Io_out[j + 3 * i] = x + d - Rh[i] * p[j] - p[i] * Rh[j] - mass * p[i] * p[j];
        }
    h_out[0] = Rh[0] + mass * p[0]; h_out[1] = Rh[1] + mass * p[1]; h_out[2] = Rh[2] + mass * p[2];
}
/* 6x6 matrix (column-major) of an inertia. */
static inline void inertia_matrix(double mass, const double h[3], const double Io[9], double I6[36])
{
    /* [[m 1, -[h]x], [[h]x, Io]] */
    memset(I6, 0, 36 * sizeof(double));
    for (int i = 0; i < 3; i++) I6[i + 6 * i] = mass;
    double H[9] = {0, h[2], -h[1], -h[2], 0, h[0], h[1], -h[0], 0}; /* [h]x column-major */
    for (int j = 0; j < 3; j++)
        for (int i = 0; i < 3; i++) {
            I6[i + 6 * (j + 3)] = -H[i + 3 * j];
            I6[(i + 3) + 6 * j] = H[i + 3 * j];
            I6[(i + 3) + 6 * (j + 3)] = Io[i + 3 * j];
        }
}
/* o = A x for a 6x6 column-major A. */
static inline void m6_mulv(const double A[36], const double x[6], double o[6])
{
    double t[6] = {0, 0, 0, 0, 0, 0};
    for (int j = 0; j < 6; j++) {
        double xj = x[j];
        const double *c = A + 6 * j;
        for (int i = 0; i < 6; i++) t[i] += c[i] * xj;
    }
    memcpy(o, t, sizeof t);
}

#endif
