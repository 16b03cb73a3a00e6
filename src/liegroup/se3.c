/* se3.c — exponential, logarithm, adjoint and right Jacobians of SO(3), SE(3) and SE(2), and the
 * SE(3) inverse Jacobian's transpose applied to a wrench, with its derivative (the discrete RNEA's).
 *
 * References (formulas are quoted where used):
 *   [Sola]     J. Sola, J. Deray, D. Atchuthan, "A micro Lie theory for state estimation in
 *              robotics", arXiv:1812.01537 (2018), appendices on SO(3), SE(2) and SE(3).
 *   [Barfoot]  T. Barfoot, P. Furgale, "Associating uncertainty with three-dimensional poses
 *              for use in estimation problems", IEEE T-RO 30(3), 2014: the Q block of the
 *              SE(3) Jacobian.
 *
 * Every formula below is a combination of a handful of scalar functions of the angle θ that
 * are 0/0 at θ = 0 and lose digits to cancellation near it. They are evaluated through their
 * Taylor series below SERIES_ANGLE, where ten terms reach full double precision, and in closed
 * form above it, where the cancellation costs at most ~1e-13 relative on coefficients that
 * multiply θ³ or higher powers. A one-off check against 120-digit matrix exponentials (mpmath)
 * found exp, log and both Jacobians within 1e-15 of the truth from θ = 1e-12 to π. */
#include <math.h>
#include <string.h>

#include "../spatial/spatial.h"
#include "liegroup_internal.h"

#define SERIES_ANGLE 1.0
#define SERIES_TERMS 10

/* 1/j!, j = 0 … 2·SERIES_TERMS + 2: the series' coefficients, so that they are summed without
 * a division (a term-by-term recurrence divided ten times per series, and Solo's integrate
 * spent most of its time there). Every j! here is exact in a double. */
static const double INV_FACT[2 * SERIES_TERMS + 3] = {
    1.0 / 1.0, 1.0 / 1.0, 1.0 / 2.0, 1.0 / 6.0,
    1.0 / 24.0, 1.0 / 120.0, 1.0 / 720.0, 1.0 / 5040.0,
    1.0 / 40320.0, 1.0 / 362880.0, 1.0 / 3628800.0, 1.0 / 39916800.0,
    1.0 / 479001600.0, 1.0 / 6227020800.0, 1.0 / 87178291200.0, 1.0 / 1307674368000.0,
    1.0 / 20922789888000.0, 1.0 / 355687428096000.0, 1.0 / 6402373705728000.0, 1.0 / 121645100408832000.0,
    1.0 / 2432902008176640000.0, 1.0 / 51090942171709440000.0, 1.0 / 1124000727777607680000.0};

/* Σ_k (-x)^k / (2k+n)! with x = θ²: the tail of the sine (n odd) or cosine (n even) series
 * after its first terms, divided by the power of θ that makes it start at 1/n!, by Horner.
 * n = 0: cosθ; 1: sinθ/θ; 2: (1-cosθ)/θ²; 3: (θ-sinθ)/θ³; 4: (θ²/2+cosθ-1)/θ⁴. */
static double trig_tail(double x, int n)
{
    int k = SERIES_TERMS - 1;   /* n <= 4 */
    double sum = INV_FACT[2 * k + n];
    for (k--; k >= 0; k--) sum = INV_FACT[2 * k + n] - x * sum;
    return sum;
}

static double sinc(double t)   /* sin θ / θ */
{
    return fabs(t) < SERIES_ANGLE ? trig_tail(t * t, 1) : sin(t) / t;
}

/* A = sinθ/θ, B = (1-cosθ)/θ², C = (θ-sinθ)/θ³: the coefficients of Rodrigues' formula and
 * of the SO(3) Jacobians (even functions, so θ may be negative). */
static void exp_coefs(double t, double *A, double *B, double *C)
{
    double x = t * t;
    if (fabs(t) < SERIES_ANGLE) {
        *A = trig_tail(x, 1); *B = trig_tail(x, 2); *C = trig_tail(x, 3);
        return;
    }
    double s = sin(t), h = sin(0.5 * t);
    *A = s / t;
    *B = 2 * h * h / x;   /* 1 - cos θ = 2 sin²(θ/2) has no cancellation */
    *C = (t - s) / (x * t);
}

/* D = (θ²/2 + cosθ - 1)/θ⁴ and E = (2θ - 3 sinθ + θ cosθ)/(2θ⁵): the extra coefficients of
 * the SE(3) Q block [Barfoot]. E's series is Σ_k (-x)^k (k+1)/(2k+5)!. */
static void q_coefs(double t, double *D, double *E)
{
    double x = t * t;
    if (fabs(t) < SERIES_ANGLE) {
        *D = trig_tail(x, 4);
        double term = 1.0 / 120.0, sum = 0.0;
        for (int k = 0; k < SERIES_TERMS; k++) {
            sum += (k + 1) * term;
            term *= -x / ((2 * k + 6) * (2 * k + 7));
        }
        *E = sum;
        return;
    }
    double s = sin(t), c = cos(t), h = sin(0.5 * t);
    *D = (0.5 * x - 2 * h * h) / (x * x);
    *E = (2 * t - 3 * s + t * c) / (2 * x * x * t);
}

/* α = (θ/2) cot(θ/2) and β = (1 - α)/θ² = 1/θ² - (1 + cosθ)/(2θ sinθ): the coefficients of
 * the inverse SO(3) Jacobian and of the SE(3) / SE(2) logarithm's translation ([Sola], SO(3)
 * appendix, inverse right Jacobian). From x cot x = Σ (-1)^n 2^{2n} B_{2n} x^{2n}/(2n)!,
 * β = Σ_k |B_{2k+2}| θ^{2k}/(2k+2)! (Bernoulli numbers); the series converges for |θ| < 2π,
 * where the closed form is singular too. */
#define NBETA 12
static const double beta_series[NBETA] = {   /* |B_{2k+2}|/(2k+2)!; the last two serve jlog_t_mul's series only */
    1.0 / 12.0, 1.0 / 720.0, 1.0 / 30240.0, 1.0 / 1209600.0, 1.0 / 47900160.0,
    691.0 / 1307674368000.0, 1.0 / 74724249600.0, 3617.0 / 10670622842880000.0,
    43867.0 / 5109094217170944000.0, 174611.0 / 802857662698291200000.0,
    854513.0 / 138.0 / 1124000727777607680000.0, 236364091.0 / 2730.0 / 620448401733239439360000.0};

static void log_coefs(double t, double *alpha, double *beta)
{
    double x = t * t;
    if (fabs(t) < SERIES_ANGLE) {
        double sum = 0.0;
        for (int k = SERIES_TERMS - 1; k >= 0; k--) sum = sum * x + beta_series[k];
        *beta = sum;
        *alpha = 1.0 - x * sum;
        return;
    }
    double h = 0.5 * t;
    *alpha = h * cos(h) / sin(h);   /* half-angle form: exact at θ = π where (1+cosθ)/sinθ is 0/0 */
    *beta = (1.0 - *alpha) / x;
}

/* column-major 3x3 skew matrix [w]x */
static void skew(const double w[3], double S[9])
{
    S[0] = 0;     S[3] = -w[2]; S[6] = w[1];
    S[1] = w[2];  S[4] = 0;     S[7] = -w[0];
    S[2] = -w[1]; S[5] = w[0];  S[8] = 0;
}

/* J = I + a [w]x + b [w]x² */
static void so3_poly(const double w[3], double a, double b, double J[9])
{
    double W[9], W2[9];
    skew(w, W);
    m3_mul(W, W, W2);
    for (int k = 0; k < 9; k++) J[k] = a * W[k] + b * W2[k];
    J[0] += 1; J[4] += 1; J[8] += 1;
}

/* Copies a 3x3 block into the (r, c) block of a column-major matrix with leading dimension ld. */
static void put3(double *J, int ld, int r, int c, const double B[9], double scale)
{
    for (int j = 0; j < 3; j++)
        for (int i = 0; i < 3; i++) J[(r + i) + (size_t)ld * (c + j)] = scale * B[i + 3 * j];
}

/* ------------------------------------------------------------------------------------ SO(3) */

void mbsi_quat_mul(const double a[4], const double b[4], double o[4])
{
    double x = a[3] * b[0] + a[0] * b[3] + a[1] * b[2] - a[2] * b[1];
    double y = a[3] * b[1] - a[0] * b[2] + a[1] * b[3] + a[2] * b[0];
    double z = a[3] * b[2] + a[0] * b[1] - a[1] * b[0] + a[2] * b[3];
    double w = a[3] * b[3] - a[0] * b[0] - a[1] * b[1] - a[2] * b[2];
    o[0] = x; o[1] = y; o[2] = z; o[3] = w;
}

/* x + 2w (u × x) + 2 u × (u × x), u = vector part: cheaper than building R. */
void mbsi_quat_rotate(const double qt[4], const double x[3], double o[3])
{
    double t[3], u[3];
    v3_cross(qt, x, t);
    t[0] *= 2; t[1] *= 2; t[2] *= 2;
    v3_cross(qt, t, u);
    o[0] = x[0] + qt[3] * t[0] + u[0];
    o[1] = x[1] + qt[3] * t[1] + u[1];
    o[2] = x[2] + qt[3] * t[2] + u[2];
}

void mbsi_quat_rotate_inv(const double qt[4], const double x[3], double o[3])
{
    double c[4] = {-qt[0], -qt[1], -qt[2], qt[3]};
    mbsi_quat_rotate(c, x, o);
}

/* q = (sin(θ/2) w/θ, cos(θ/2)) [Sola, SO(3) appendix, quaternion exponential];
 * sin(θ/2)/θ = sinc(θ/2)/2 stays exact as θ -> 0. */
void mbsi_so3_exp(const double w[3], double qt[4])
{
    double t = sqrt(v3_dot(w, w));
    double k = 0.5 * sinc(0.5 * t);
    double c = cos(0.5 * t);
    qt[0] = k * w[0]; qt[1] = k * w[1]; qt[2] = k * w[2]; qt[3] = c;
}

/* θ = 2 atan2(|u|, w) is scale-free and accurate at every angle, unlike acos(w) near 0 or
 * asin(|u|) near π; the sign flip picks the representative with θ <= π. sc: (sin θ/2, cos θ/2)
 * times the quaternion's norm, as the log of SE(3) reads them. */
static double so3_log_sc(const double qt[4], double w[3], double sc[2])
{
    double sg = qt[3] < 0 ? -1.0 : 1.0;
    double u[3] = {sg * qt[0], sg * qt[1], sg * qt[2]}, c = sg * qt[3];
    double s = sqrt(v3_dot(u, u));
    double t = 2.0 * atan2(s, c);
    /* atan2(s, c)/s keeps full relative precision for any s > 0; at s = 0 the vector part is
     * zero and any finite k will do */
    double k = s > 0 ? t / s : 2.0;
    w[0] = k * u[0]; w[1] = k * u[1]; w[2] = k * u[2];
    sc[0] = s;
    sc[1] = c;
    return t;
}

double mbsi_so3_log(const double qt[4], double w[3])
{
    double sc[2];
    return so3_log_sc(qt, w, sc);
}

/* Jr = I - (1-cosθ)/θ² [w]x + (θ-sinθ)/θ³ [w]x² [Sola, eq. 143]. */
void mbsi_so3_jr(const double w[3], double J[9])
{
    double A, B, C;
    exp_coefs(sqrt(v3_dot(w, w)), &A, &B, &C);
    so3_poly(w, -B, C, J);
}

/* Jr⁻¹ = I + ½ [w]x + (1/θ² - (1+cosθ)/(2θ sinθ)) [w]x² [Sola, inverse of eq. 143]. */
void mbsi_so3_jr_inv(const double w[3], double J[9])
{
    double alpha, beta;
    log_coefs(sqrt(v3_dot(w, w)), &alpha, &beta);
    so3_poly(w, 0.5, beta, J);
}

/* ------------------------------------------------------------------------------------ SE(3) */

/* Exp(v, w) = (Exp(w), V(w) v) with V = I + B [w]x + C [w]x² the left Jacobian of SO(3)
 * [Sola, SE(3) appendix]; expanded with [w]x² = w wᵀ - θ² I as A v + B w×v + C (w·v) w. */
void mbsi_se3_exp(const double xi[6], double g[7])
{
    const double *v = xi, *w = xi + 3;
    double x = v3_dot(w, w), t = sqrt(x), A, B, C, k, c, wxv[3];
    /* Rodrigues' coefficients and the quaternion (sin(θ/2) w/θ, cos(θ/2)) from one sine and one
     * cosine of θ/2 (mbsi_so3_exp and exp_coefs each took their own: four calls per joint) */
    if (t < SERIES_ANGLE) {
        A = trig_tail(x, 1); B = trig_tail(x, 2); C = trig_tail(x, 3);
        k = 0.5 * trig_tail(0.25 * x, 1);
        c = trig_tail(0.25 * x, 0);
    } else {
        double sh = sin(0.5 * t), ch = cos(0.5 * t), s = 2 * sh * ch;
        A = s / t;
        B = 2 * sh * sh / x;
        C = (t - s) / (x * t);
        k = sh / t;
        c = ch;
    }
    v3_cross(w, v, wxv);
    double wv = C * v3_dot(w, v);
    for (int j = 0; j < 3; j++) g[j] = A * v[j] + B * wxv[j] + wv * w[j];
    g[3] = k * w[0]; g[4] = k * w[1]; g[5] = k * w[2]; g[6] = c;
}

/* Log(p, R) = (V(w)⁻¹ p, w), V⁻¹ = I - ½ [w]x + β [w]x² = α I - ½ [w]x + β w wᵀ. */
void mbsi_se3_log(const double g[7], double xi[6])
{
    double w[3], p[3] = {g[0], g[1], g[2]}, alpha, beta, wxp[3], sc[2];
    double t = so3_log_sc(g + 3, w, sc);
    if (t < SERIES_ANGLE) log_coefs(t, &alpha, &beta);
    else {
        /* log_coefs' half-angle form, cos/sin of θ/2 read off the quaternion (no trigonometry) */
        alpha = 0.5 * t * sc[1] / sc[0];
        beta = (1.0 - alpha) / (t * t);
    }
    v3_cross(w, p, wxp);
    double wp = beta * v3_dot(w, p);
    for (int k = 0; k < 3; k++) xi[k] = alpha * p[k] - 0.5 * wxp[k] + wp * w[k];
    memcpy(xi + 3, w, sizeof w);
}

void mbsi_se3_compose(const double a[7], const double b[7], double o[7])
{
    double p[3], qt[4];
    mbsi_quat_rotate(a + 3, b, p);
    p[0] += a[0]; p[1] += a[1]; p[2] += a[2];
    mbsi_quat_mul(a + 3, b + 3, qt);
    memcpy(o, p, sizeof p);
    memcpy(o + 3, qt, sizeof qt);
}

void mbsi_se3_between(const double a[7], const double b[7], double o[7])
{
    double d[3] = {b[0] - a[0], b[1] - a[1], b[2] - a[2]}, p[3], qt[4];
    double ca[4] = {-a[3], -a[4], -a[5], a[6]};
    mbsi_quat_rotate(ca, d, p);
    mbsi_quat_mul(ca, b + 3, qt);
    memcpy(o, p, sizeof p);
    memcpy(o + 3, qt, sizeof qt);
}

void mbsi_se3_inverse(const double g[7], double o[7])
{
    double ca[4] = {-g[3], -g[4], -g[5], g[6]}, p[3];
    mbsi_quat_rotate(ca, g, p);
    o[0] = -p[0]; o[1] = -p[1]; o[2] = -p[2];
    memcpy(o + 3, ca, sizeof ca);
}

/* [Sola, SE(3) appendix, adjoint]: Ad = [[R, [p]x R], [0, R]] for twists ordered (v, w). */
void mbsi_se3_adjoint(const double g[7], double *Ad, int ld)
{
    double R[9], P[9], PR[9], Z[9] = {0};
    m3_from_quat(g + 3, R);
    skew(g, P);
    m3_mul(P, R, PR);
    put3(Ad, ld, 0, 0, R, 1.0);
    put3(Ad, ld, 0, 3, PR, 1.0);
    put3(Ad, ld, 3, 0, Z, 1.0);
    put3(Ad, ld, 3, 3, R, 1.0);
}

/* The right Jacobian's Q block, Qr(ρ, θ) = Ql(-ρ, -θ) [Sola, SE(3) appendix], with [Barfoot]
 *   Ql = ½P + C (WP + PW + WPW) + D (WWP + PWW - 3 WPW) + E (WPWW + WWPW),
 * P = [ρ]x, W = [w]x; flipping both signs flips the odd-degree terms. */
static void se3_qr(const double xi[6], double Q[9])
{
    double t = sqrt(v3_dot(xi + 3, xi + 3)), A, B, C, D, E;
    exp_coefs(t, &A, &B, &C);
    q_coefs(t, &D, &E);
    double P[9], W[9], WP[9], PW[9], WPW[9], WW[9], WWP[9], PWW[9], WPWW[9], WWPW[9];
    skew(xi, P);
    skew(xi + 3, W);
    m3_mul(W, P, WP);
    m3_mul(P, W, PW);
    m3_mul(WP, W, WPW);
    m3_mul(W, W, WW);
    m3_mul(WW, P, WWP);
    m3_mul(PW, W, PWW);
    m3_mul(WPW, W, WPWW);
    m3_mul(W, WPW, WWPW);
    for (int k = 0; k < 9; k++)
        Q[k] = -0.5 * P[k] + C * (WP[k] + PW[k] - WPW[k]) - D * (WWP[k] + PWW[k] - 3 * WPW[k]) +
               E * (WPWW[k] + WWPW[k]);
}

/* Jr(v, w) = [[Jr(w), Qr], [0, Jr(w)]] [Sola, SE(3) appendix]: valid at every angle. */
void mbsi_se3_jexp(const double xi[6], double *J, int ld)
{
    double Jr[9], Q[9], Z[9] = {0};
    mbsi_so3_jr(xi + 3, Jr);
    se3_qr(xi, Q);
    put3(J, ld, 0, 0, Jr, 1.0);
    put3(J, ld, 0, 3, Q, 1.0);
    put3(J, ld, 3, 0, Z, 1.0);
    put3(J, ld, 3, 3, Jr, 1.0);
}

/* The block-triangular inverse of jexp: [[Jr⁻¹, -Jr⁻¹ Qr Jr⁻¹], [0, Jr⁻¹]]. */
void mbsi_se3_jlog(const double xi[6], double *J, int ld)
{
    double Ji[9], Q[9], T[9], Z[9] = {0};
    mbsi_so3_jr_inv(xi + 3, Ji);
    se3_qr(xi, Q);
    m3_mul(Ji, Q, T);
    m3_mul(T, Ji, T);
    put3(J, ld, 0, 0, Ji, 1.0);
    put3(J, ld, 0, 3, T, -1.0);
    put3(J, ld, 3, 0, Z, 1.0);
    put3(J, ld, 3, 3, Ji, 1.0);
}

/* ------------------------------------------------------- SE(3): Jr⁻ᵀ applied to a wrench (DRNEA)
 * Jr⁻¹(ξ) = [[A, -A Q A], [0, A]] for ξ = (ρ, ω) (mbsi_se3_jlog above), with
 *   A = I + ½ W + β W²,   W = [ω]x,  β = 1/θ² - (1 + cos θ)/(2θ sin θ),
 *   Q = -½ P + C (WP + PW - WPW) - D (WWP + PWW - 3 WPW) + E (WPWW + WWPW),  P = [ρ]x,
 * C = (θ - sin θ)/θ³, D = (θ²/2 + cos θ - 1)/θ⁴, E = (2θ - 3 sin θ + θ cos θ)/(2θ⁵). The
 * discrete RNEA needs only its transpose applied to a wrench y = (f, n):
 *   Jr⁻ᵀ y = (g, Aᵀ (n - Qᵀ g)),  g = Aᵀ f,
 * with Aᵀ = I - ½ W + β W² and Qᵀ = ½ P + C (PW + WP + WPW) + D (PWW + WWP - 3 WPW) + E (WWPW + WPWW)
 * (Pᵀ = -P, Wᵀ = -W): a dozen cross products instead of the 6x6 matrix that mbsi_se3_jlog forms,
 * which is what keeps an evaluation cheap. */

/* Series in x = θ² below 1 rad (as above), where the closed forms lose digits:
 * β = Σ |B_{2k+2}|/(2k+2)! x^k (beta_series, shared with log_coefs), C = Σ (-x)^k/(2k+3)!,
 * D = Σ (-x)^k/(2k+4)!, E = Σ (-x)^k (k+1)/(2k+5)! — the series trig_tail and q_coefs sum term
 * by term, here as tables because Horner also gives their derivatives in x. The first omitted
 * terms are below 1e-17 relative at x = 1. */
#define NCDE 10
#define F3 6.0
#define F4 24.0
#define F5 120.0
#define F6 720.0
#define F7 5040.0
#define F8 40320.0
#define F9 362880.0
#define F10 3628800.0
#define F11 39916800.0
#define F12 479001600.0
#define F13 6227020800.0
#define F14 87178291200.0
#define F15 1307674368000.0
#define F16 20922789888000.0
#define F17 355687428096000.0
#define F18 6402373705728000.0
#define F19 121645100408832000.0
#define F20 2432902008176640000.0
#define F21 51090942171709440000.0
#define F22 1124000727777607680000.0
#define F23 25852016738884976640000.0
static const double c_series[NCDE] = {1 / F3, -1 / F5, 1 / F7, -1 / F9, 1 / F11, -1 / F13, 1 / F15, -1 / F17, 1 / F19, -1 / F21};
static const double d_series[NCDE] = {1 / F4, -1 / F6, 1 / F8, -1 / F10, 1 / F12, -1 / F14, 1 / F16, -1 / F18, 1 / F20, -1 / F22};
static const double e_series[NCDE] = {1 / F5, -2 / F7, 3 / F9, -4 / F11, 5 / F13, -6 / F15, 7 / F17, -8 / F19, 9 / F21, -10 / F23};

/* Σ c_k x^k and its derivative by Horner. */
static void horner(const double *c, int n, double x, double *f, double *df)
{
    double s = c[n - 1], ds = 0;
    for (int k = n - 2; k >= 0; k--) {
        ds = ds * x + s;
        s = s * x + c[k];
    }
    *f = s;
    *df = ds;
}

static double horner_value(const double *c, int n, double x)
{
    double s = c[n - 1];
    for (int k = n - 2; k >= 0; k--) s = s * x + c[k];
    return s;
}

/* The closed forms at x = θ² >= 1, and with dc their derivatives with respect to x. */
static void closed_coefs(double x, double c[4], double *dc)
{
    double t = sqrt(x), s = sin(t), co = cos(t), sh = sin(0.5 * t), ch = cos(0.5 * t);
    double alpha = 0.5 * t * ch / sh;            /* (θ/2) cot(θ/2) */
    c[0] = (1.0 - alpha) / x;
    c[1] = (t - s) / (x * t);
    c[2] = (0.5 * x - 2 * sh * sh) / (x * x);    /* 1 - cos θ = 2 sin²(θ/2) has no cancellation */
    c[3] = (2 * t - 3 * s + t * co) / (2 * x * x * t);
    if (!dc) return;
    /* d/dθ of each, then d/dx = d/dθ / (2θ) */
    double dalpha = 0.5 * ch / sh - 0.25 * t / (sh * sh);
    double d0 = -dalpha / x - 2 * (1.0 - alpha) / (x * t);
    double d1 = (1.0 - co) / (x * t) - 3 * c[1] / t;
    double d2 = (t - s) / (x * x) - 4 * c[2] / t;
    double d3 = (2 - 2 * co - t * s) / (2 * x * x * t) - 5 * c[3] / t;
    dc[0] = d0 / (2 * t); dc[1] = d1 / (2 * t); dc[2] = d2 / (2 * t); dc[3] = d3 / (2 * t);
}

/* c = (β, C, D, E) at x = θ², dc = their derivatives with respect to x. */
static void dlog_coefs(double x, double c[4], double dc[4])
{
    if (x >= 1.0) { closed_coefs(x, c, dc); return; }
    horner(beta_series, NBETA, x, &c[0], &dc[0]);
    horner(c_series, NCDE, x, &c[1], &dc[1]);
    horner(d_series, NCDE, x, &c[2], &dc[2]);
    horner(e_series, NCDE, x, &c[3], &dc[3]);
}

/* Values only, for DRNEA, whose angles per step are small: the series is cut where its next term
 * falls below 1e-18 relative (6 terms below θ = 0.1, 4 below 0.01). */
static void dlog_coefs_value(double x, double c[4])
{
    if (x >= 1.0) { closed_coefs(x, c, NULL); return; }
    int nb = x < 1e-4 ? 4 : x < 1e-2 ? 6 : x < 0.1 ? 8 : NBETA, nc = nb < NCDE ? nb : NCDE;
    c[0] = horner_value(beta_series, nb, x);
    c[1] = horner_value(c_series, nc, x);
    c[2] = horner_value(d_series, nc, x);
    c[3] = horner_value(e_series, nc, x);
}

/* out = Aᵀ y = y - ½ w × y + β w × (w × y), with a = w × y and b = w × a kept for the tangent.
 * out may alias y. */
static inline void at_mul(const double w[3], double beta, const double y[3], double a[3], double b[3], double out[3])
{
    v3_cross(w, y, a);
    v3_cross(w, a, b);
    for (int k = 0; k < 3; k++) out[k] = y[k] - 0.5 * a[k] + beta * b[k];
}

/* The words of Qᵀ applied to g, P = [r]x, W = [w]x. */
static inline void q_words(const double r[3], const double w[3], const double g[3], mbs_se3_qwords *q)
{
    v3_cross(w, g, q->Wg);
    v3_cross(r, g, q->Pg);
    v3_cross(r, q->Wg, q->PWg);
    v3_cross(w, q->Pg, q->WPg);
    v3_cross(w, q->PWg, q->WPWg);
    v3_cross(w, q->Wg, q->WWg);
    v3_cross(r, q->WWg, q->PWWg);
    v3_cross(w, q->WPg, q->WWPg);
    v3_cross(w, q->WPWg, q->WWPWg);
    v3_cross(w, q->PWWg, q->WPWWg);
}

void mbsi_se3_jlog_t_mul(const double xi[6], const double y[6], double out[6])
{
    const double *r = xi, *w = xi + 3;
    double c[4], a[3], b[3], g[3], n[3];
    mbs_se3_qwords q;
    dlog_coefs_value(v3_dot(w, w), c);
    at_mul(w, c[0], y, a, b, g);
    q_words(r, w, g, &q);
    for (int k = 0; k < 3; k++)
        n[k] = y[k + 3] - (0.5 * q.Pg[k] + c[1] * (q.PWg[k] + q.WPg[k] + q.WPWg[k]) +
                           c[2] * (q.PWWg[k] + q.WWPg[k] - 3 * q.WPWg[k]) + c[3] * (q.WWPWg[k] + q.WPWWg[k]));
    memcpy(out, g, sizeof g);
    at_mul(w, c[0], n, a, b, out + 3);
}

void mbsi_se3_jlog_t_at(const double xi[6], const double y[6], mbs_se3_jlog_t_point *t)
{
    memcpy(t->r, xi, sizeof t->r);
    memcpy(t->w, xi + 3, sizeof t->w);
    memcpy(t->f, y, sizeof t->f);
    const double *c = t->c;
    const mbs_se3_qwords *q = &t->q;
    dlog_coefs(v3_dot(t->w, t->w), t->c, t->dc);
    at_mul(t->w, c[0], y, t->a, t->b, t->g);
    q_words(t->r, t->w, t->g, &t->q);
    for (int k = 0; k < 3; k++) {
        t->s1[k] = q->PWg[k] + q->WPg[k] + q->WPWg[k];
        t->s2[k] = q->PWWg[k] + q->WWPg[k] - 3 * q->WPWg[k];
        t->s3[k] = q->WWPWg[k] + q->WPWWg[k];
        t->n[k] = y[k + 3] - 0.5 * q->Pg[k] - c[1] * t->s1[k] - c[2] * t->s2[k] - c[3] * t->s3[k];
    }
    v3_cross(t->w, t->n, t->a2);
    v3_cross(t->w, t->a2, t->b2);
}

/* o = d(u × v) = du × v + u × dv */
static inline void dcross(const double u[3], const double du[3], const double v[3], const double dv[3], double o[3])
{
    double t[3];
    v3_cross(du, v, o);
    v3_cross(u, dv, t);
    for (int k = 0; k < 3; k++) o[k] += t[k];
}

void mbsi_se3_jlog_t_along(const mbs_se3_jlog_t_point *t, const double dxi[6], const double dy[6], double dout[6])
{
    const double *r = t->r, *w = t->w, *c = t->c, *dr = dxi, *dw = dxi + 3;
    const mbs_se3_qwords *q = &t->q;
    double dcx[4], x = 2 * v3_dot(w, dw);
    for (int k = 0; k < 4; k++) dcx[k] = t->dc[k] * x;
    double da[3], db[3], dg[3], dWg[3], dPg[3], dPWg[3], dWPg[3], dWPWg[3], dWWg[3], dPWWg[3], dWWPg[3];
    double dWWPWg[3], dWPWWg[3], dn[3], da2[3], db2[3];
    dcross(w, dw, t->f, dy, da);
    dcross(w, dw, t->a, da, db);
    for (int k = 0; k < 3; k++) dg[k] = dy[k] - 0.5 * da[k] + c[0] * db[k] + dcx[0] * t->b[k];
    dcross(w, dw, t->g, dg, dWg);
    dcross(r, dr, t->g, dg, dPg);
    dcross(r, dr, q->Wg, dWg, dPWg);
    dcross(w, dw, q->Pg, dPg, dWPg);
    dcross(w, dw, q->PWg, dPWg, dWPWg);
    dcross(w, dw, q->Wg, dWg, dWWg);
    dcross(r, dr, q->WWg, dWWg, dPWWg);
    dcross(w, dw, q->WPg, dWPg, dWWPg);
    dcross(w, dw, q->WPWg, dWPWg, dWWPWg);
    dcross(w, dw, q->PWWg, dPWWg, dWPWWg);
    for (int k = 0; k < 3; k++) {
        double ds1 = dPWg[k] + dWPg[k] + dWPWg[k], ds2 = dPWWg[k] + dWWPg[k] - 3 * dWPWg[k];
        double ds3 = dWWPWg[k] + dWPWWg[k];
        dn[k] = dy[k + 3] - 0.5 * dPg[k] - c[1] * ds1 - dcx[1] * t->s1[k] - c[2] * ds2 - dcx[2] * t->s2[k] -
                c[3] * ds3 - dcx[3] * t->s3[k];
    }
    dcross(w, dw, t->n, dn, da2);
    dcross(w, dw, t->a2, da2, db2);
    for (int k = 0; k < 3; k++) {
        dout[k] = dg[k];
        dout[k + 3] = dn[k] - 0.5 * da2[k] + c[0] * db2[k] + dcx[0] * t->b2[k];
    }
}

/* ------------------------------------------------------------------------------------ SE(2)
 * The rotation group is abelian, so with complex numbers (ρ = vx + i vy, R = e^{iθ}):
 *   Exp: t = V ρ, V = (e^{iθ} - 1)/(iθ) = A + i θB;  Log: ρ = V⁻¹ t, V⁻¹ = α - i θ/2
 * [Sola, SE(2) appendix]. */

void mbsi_se2_exp(const double xi[3], double g[4])
{
    double t = xi[2], A, B, C;
    exp_coefs(t, &A, &B, &C);
    double x = A * xi[0] - t * B * xi[1], y = t * B * xi[0] + A * xi[1];
    g[0] = x; g[1] = y; g[2] = cos(t); g[3] = sin(t);
}

void mbsi_se2_log(const double g[4], double xi[3])
{
    double t = atan2(g[3], g[2]), alpha, beta, h = 0.5 * t;
    log_coefs(t, &alpha, &beta);
    double x = alpha * g[0] + h * g[1], y = -h * g[0] + alpha * g[1];
    xi[0] = x; xi[1] = y; xi[2] = t;
}

void mbsi_se2_compose(const double a[4], const double b[4], double o[4])
{
    double x = a[0] + a[2] * b[0] - a[3] * b[1], y = a[1] + a[3] * b[0] + a[2] * b[1];
    double c = a[2] * b[2] - a[3] * b[3], s = a[3] * b[2] + a[2] * b[3];
    o[0] = x; o[1] = y; o[2] = c; o[3] = s;
}

void mbsi_se2_between(const double a[4], const double b[4], double o[4])
{
    double dx = b[0] - a[0], dy = b[1] - a[1];
    double x = a[2] * dx + a[3] * dy, y = -a[3] * dx + a[2] * dy;
    double c = a[2] * b[2] + a[3] * b[3], s = a[2] * b[3] - a[3] * b[2];
    o[0] = x; o[1] = y; o[2] = c; o[3] = s;
}

void mbsi_se2_inverse(const double g[4], double o[4])
{
    double x = -(g[2] * g[0] + g[3] * g[1]), y = -(-g[3] * g[0] + g[2] * g[1]);
    o[0] = x; o[1] = y; o[2] = g[2]; o[3] = -g[3];
}

/* Ad = [[R, (y, -x)ᵀ], [0, 1]]: the SE(3) adjoint restricted to the plane. */
void mbsi_se2_adjoint(const double g[4], double *Ad, int ld)
{
    Ad[0] = g[2];  Ad[ld] = -g[3];    Ad[2 * ld] = g[1];
    Ad[1] = g[3];  Ad[1 + ld] = g[2]; Ad[1 + 2 * ld] = -g[0];
    Ad[2] = 0;     Ad[2 + ld] = 0;    Ad[2 + 2 * ld] = 1;
}

/* Jr = [[A, θB, θC ρx - B ρy], [-θB, A, θC ρy + B ρx], [0, 0, 1]] [Sola, SE(2) appendix, right
 * Jacobian, with sinθ/θ = A, (1-cosθ)/θ = θB, (θ - sinθ)/θ² = θC]. */
void mbsi_se2_jexp(const double xi[3], double *J, int ld)
{
    double t = xi[2], A, B, C;
    exp_coefs(t, &A, &B, &C);
    J[0] = A;          J[ld] = t * B;     J[2 * ld] = t * C * xi[0] - B * xi[1];
    J[1] = -t * B;     J[1 + ld] = A;     J[1 + 2 * ld] = t * C * xi[1] + B * xi[0];
    J[2] = 0;          J[2 + ld] = 0;     J[2 + 2 * ld] = 1;
}

/* Inverse of jexp. Its 2x2 block is the complex α + iθ/2; its last column -(α + iθ/2)(θC + iB) ρ
 * simplifies to (θβ - i/2) ρ. */
void mbsi_se2_jlog(const double xi[3], double *J, int ld)
{
    double t = xi[2], alpha, beta;
    log_coefs(t, &alpha, &beta);
    J[0] = alpha;      J[ld] = -0.5 * t;  J[2 * ld] = t * beta * xi[0] + 0.5 * xi[1];
    J[1] = 0.5 * t;    J[1 + ld] = alpha; J[1 + 2 * ld] = t * beta * xi[1] - 0.5 * xi[0];
    J[2] = 0;          J[2 + ld] = 0;     J[2 + 2 * ld] = 1;
}

void mbsi_so3_error(const double A[9], const double B[9], int world, double e[3])
{
    double E[9], qt[4], w[3];
    if (world) m3t_mul(B, A, E);
    else m3t_mul(A, B, E);
    m3_to_quat(E, qt);
    mbsi_so3_log(qt, w);
    if (world) m3_mulv(B, w, e);
    else memcpy(e, w, sizeof w);
}
