/* expo_modal.c — the averages λ̄ (eq. 23) and λ̄₂ (eq. 25) of the exponential integrator
 * (Hammoud et al. 2022; equation numbers are the paper's) in closed form when B = βK.
 *
 * The contact-space system (11), with the anchor velocities as src/step/expo.c integrates it:
 *     p' = w + ṗ0,   w' = −Υ K (p + β w) + p̈_free,       p = Δp, w = Δṗ, K = R²,
 * with R = K^½ (per contact, symmetric). In r = R p, s = R w it reads r' = s + R ṗ0,
 * s' = −S (r + β s) + R p̈_free with S = R Υ R symmetric positive semi-definite; S = V Λ Vᵀ
 * splits it into scalar modes. In mode i (eigenvalue λ) the variables that matter are
 * g = (Vᵀ R (p + β w))_i, whose −R V g is the force λ = −K p − B w, and u = (Vᵀ R w)_i:
 *     g' = −βλ g + u + e + β f,   u' = −λ g + f,            e = (VᵀRṗ0)_i, f = (VᵀR p̈_free)_i,
 * a 2 x 2 system y' = Y y + c with Y = [[−βλ, 1], [−λ, 0]], c = [e + βf, f]. Its integrals over
 * the step (eq. 16) are the φ-functions of hY: ∫₀^h y = h φ₁(hY) y(0) + h² φ₂(hY) c and
 * ∫₀^h∫₀^t y = h² φ₂(hY) y(0) + h³ φ₃(hY) c, φ_k(x) = Σ_j x^j/(j+k)!. Only their first row is
 * needed, and that row is made of divided differences: for any f, f(X) = P I + Q (X + aI) with
 * a = −tr X / 2, P = (f(x₁) + f(x₂))/2, Q = f[x₁, x₂] at X's eigenvalues x₁, x₂; the (1,1)
 * entry of φ_k(hY) is P − aQ = φ_{k−1}[x₁, x₂] (since x φ_k(x) = φ_{k−1}(x) − 1/(k−1)!) and the
 * (1,2) entry is h φ_k[x₁, x₂]. With Q_k = φ_k[x₁, x₂]:
 *     ∫g   = h Q₀ g(0) + h² Q₁ (u(0) + c₁) + h³ Q₂ c₂,
 *     ∫∫g  = h² Q₁ g(0) + h³ Q₂ (u(0) + c₁) + h⁴ Q₃ c₂,
 * and λ̄ = −R V ∫g / h, λ̄₂ = −2 R V ∫∫g / h² (eqs. 23, 25). Written this way (rather than from
 * the position and velocity integrals, x_int and x_int2, and then D = [−K −B]) nothing cancels:
 * in a heavily damped mode the spring and the damper nearly balance, and K x_int + B ẋ_int is a
 * small difference of large terms, while ∫g is that small force directly.
 *
 * The eigenvalues of hY are x = −a ± d with a = hβλ/2 and d² = a² − h²λ: over-damped (d real),
 * critical (d = 0), under-damped (d imaginary), λ = 0 (x₁ = x₂ = 0). Q_k is computed by whichever
 * of three forms is accurate there (mbsi_modal_divided_differences). */
#include <math.h>
#include <string.h>

#include "expo_modal.h"
#include "symeig.h"

void mbsi_modal_layout(mbs_carver *c, mbsi_modal *w, int nmax)
{
    size_t n = (size_t)(nmax > 0 ? nmax : 1);
    w->nmax = (int)n;
    w->S = mbsi_carve_doubles(c, n * n);
    w->T = mbsi_carve_doubles(c, n * n);
    w->w = mbsi_carve_doubles(c, n);
    w->e = mbsi_carve_doubles(c, n);
    w->Y = mbsi_carve_doubles(c, 8 * n);
    w->G = mbsi_carve_doubles(c, 4 * n);
    w->C = mbsi_carve_doubles(c, n * n);
    w->S0 = mbsi_carve_doubles(c, n * n);
    w->V0 = mbsi_carve_doubles(c, n * n);
    w->n0 = 0;
    w->warm_left = 0;
}

void mbsi_modal_state(mbsi_modal *w, mbsi_state *s)
{
    size_t nn = (size_t)w->nmax * (size_t)w->nmax;
    mbsi_state_ints(s, "expo.modal.n0", &w->n0, 1);
    mbsi_state_ints(s, "expo.modal.warm_left", &w->warm_left, 1);
    mbsi_state_doubles(s, "expo.modal.S0", w->S0, nn);
    mbsi_state_doubles(s, "expo.modal.V0", w->V0, nn);
    if (w->n0 < 0 || w->n0 > w->nmax) w->n0 = 0;   /* a damaged stream: start cold */
}

/* Warm starts. A call's matrix starts from the last warm call's eigenvectors when its size is the
 * same and it differs from that call's matrix by at most WARM_CHANGE of its Frobenius norm (the
 * off-diagonal part of Vᵀ S V is then that small, and one Jacobi sweep or none finishes it);
 * after WARM_CHAIN such starts in a row the decomposition is made afresh, so that the rounding
 * the rotations add to the eigenvectors' orthogonality stays within a few times the cold
 * decomposition's. A robot standing still changes S by 1e-15 to 1e-10 of its norm per step,
 * one that trots by 1e-3: the trot decomposes cold, as before. Solo standing (`./sim
 * scenarios/solo_trot.ini --set controller.type=pd --set run.duration=20`, S 12 x 12, 94 % of
 * the steps warm): 10.95 -> 8.02 us per step, medians of 11 runs alternating with the binary
 * before (Zen 4); the averages agree with cold decompositions to 2e-15 (tests/test_expo_modal.c,
 * test_warm_start). */
enum { WARM_CHAIN = 16 };
static const double WARM_CHANGE = 1e-6;

/* S (n x n) → its eigenvectors (in place) and eigenvalues (w->w); B n² of scratch. */
static int decompose(mbsi_modal *w, int warm, int n, double *S, double *B)
{
    if (!warm) return mbsi_symeig(n, S, w->w, w->e);
    size_t nn = (size_t)n * (size_t)n;
    int near = 0;
    if (w->n0 == n && w->warm_left > 0) {
        double d = 0, a = 0;
        for (size_t k = 0; k < nn; k++) {
            double x = S[k] - w->S0[k];
            d += x * x;
            a += S[k] * S[k];
        }
        near = d <= WARM_CHANGE * WARM_CHANGE * a;
    }
    memcpy(w->S0, S, nn * sizeof(double));
    if (near) {
        /* S is scratch here (its matrix is in S0) */
        if (mbsi_symeig_warm(n, w->S0, w->V0, w->w, B, S, w->e) == 0) {
            memcpy(S, w->V0, nn * sizeof(double));
            w->warm_left--;
            return 0;
        }
        memcpy(S, w->S0, nn * sizeof(double));
    }
    w->n0 = 0;
    if (mbsi_symeig(n, S, w->w, w->e) != 0) return -1;
    memcpy(w->V0, S, nn * sizeof(double));
    w->n0 = n;
    w->warm_left = WARM_CHAIN;
    return 0;
}

/* 1/n!, n = 0..39, each the double nearest to it */
static const double inv_fact[40] = {
    1.0, 1.0, 0.5, 0.16666666666666666, 0.041666666666666664,
    0.008333333333333333, 0.001388888888888889, 0.0001984126984126984, 2.48015873015873e-05, 2.7557319223985893e-06,
    2.755731922398589e-07, 2.505210838544172e-08, 2.08767569878681e-09, 1.6059043836821613e-10, 1.1470745597729725e-11,
    7.647163731819816e-13, 4.779477332387385e-14, 2.8114572543455206e-15, 1.5619206968586225e-16, 8.22063524662433e-18,
    4.110317623312165e-19, 1.9572941063391263e-20, 8.896791392450574e-22, 3.868170170630684e-23, 1.6117375710961184e-24,
    6.446950284384474e-26, 2.4795962632247976e-27, 9.183689863795546e-29, 3.279889237069838e-30, 1.1309962886447716e-31,
    3.7699876288159054e-33, 1.216125041553518e-34, 3.8003907548547434e-36, 1.151633562077195e-37, 3.387157535521162e-39,
    9.67759295863189e-41, 2.6882202662866363e-42, 7.265460179153071e-44, 1.911963205040282e-45, 4.902469756513544e-47,
};

/* φ_0..φ_3 at a real x. For |x| <= 1 the series of φ_3 and then φ_k = 1/k! + x φ_{k+1} (only
 * products by |x| <= 1); beyond, e^x and φ_{k+1} = (φ_k − 1/k!)/x, each step dividing the
 * error by |x| > 1 — the subtraction never loses more than a factor e at x = −1. */
static void phi_real(double x, double f[4])
{
    if (fabs(x) <= 1) {
        /* the terms after x^17/20! sum to under e/21! = 5e-20, below half an ulp of φ_3 >= 0.13 */
        double s = 0;
        for (int j = 17; j >= 0; j--) s = s * x + inv_fact[j + 3];
        f[3] = s;
        for (int k = 2; k >= 0; k--) f[k] = inv_fact[k] + x * f[k + 1];
    } else {
        f[0] = exp(x);
        const double ix = 1 / x;
        for (int k = 0; k < 3; k++) f[k + 1] = (f[k] - inv_fact[k]) * ix;
    }
}

/* φ_0..φ_3 at x = xr + i xi with |x| > 1 (real parts in fr, imaginary in fi): the recurrence of
 * phi_real in complex arithmetic. */
static void phi_complex(double xr, double xi, double fr[4], double fi[4])
{
    double m = exp(xr), inv = 1 / (xr * xr + xi * xi);
    fr[0] = m * cos(xi);
    fi[0] = m * sin(xi);
    for (int k = 0; k < 3; k++) {
        double pr = fr[k] - inv_fact[k], pi = fi[k];
        fr[k + 1] = (pr * xr + pi * xi) * inv;
        fi[k + 1] = (pi * xr - pr * xi) * inv;
    }
}

/* Q_k = φ_k[x₁, x₂] for X = hY, x = −a ± d, a = hβλ/2, d² = a² − h²λ (module comment). With
 * r = max |x|:
 *  - r <= 2: the Taylor series of φ_k(X) in the basis {I, N}, N = X + aI, N² = d² I (so
 *    X^j = u_j I + v_j N with u_{j+1} = −a u_j + d² v_j, v_{j+1} = u_j − a v_j): Q_k = Σ_j v_j/(j+k)!.
 *    Covers λ = 0 (X = N nilpotent) and every small λ, where the two other forms would divide
 *    by ~0.
 *  - r > 2 and |d²| <= a²/4 (near critical damping, both |x| >= a/2 > 2/3): e^X = e^{−a}(C I + S N),
 *    C = cosh d, S = sinh(d)/d (cos ω, sin(ω)/ω when d = iω; 1, 1 at d = 0), exact at every d,
 *    then φ_{k+1}(X) = X⁻¹(φ_k(X) − I/k!) with X⁻¹ = (−aI − N)/(a² − d²) on the pair (P, Q):
 *    no division by x₁ − x₂, which vanishes at the boundary.
 *  - otherwise: Q_k = (φ_k(x₁) − φ_k(x₂))/(x₁ − x₂) with |x₁ − x₂| = 2|d| > a and > 1 (r > 2),
 *    so the difference loses nothing; the smaller real root is taken as h²λ/x_big rather than
 *    −a + d, which cancels when βλ is large (a = 1e7: all its digits). */
void mbsi_modal_divided_differences(double lam, double beta, double h, double Q[4])
{
    double a = 0.5 * h * beta * lam, det = h * h * lam, d2 = det * (0.25 * lam * beta * beta - 1);
    double r = d2 >= 0 ? fabs(a) + sqrt(d2) : sqrt(det);
    if (r <= 2) {
        double u = 1, v = 0, q[4] = {0, 0, 0, 0};
        for (int j = 0; j < 34; j++) {
            for (int k = 0; k < 4; k++) q[k] += v * inv_fact[j + k];
            double un = -a * u + d2 * v, vn = u - a * v;
            u = un;
            v = vn;
            /* |u|, |v| <= (1 + r)^j: the remaining terms are below 1e-20 of Q_3 >= 0.02 */
            if (j >= 4 && (fabs(u) + fabs(v)) * inv_fact[j + 1] < 1e-22) break;
        }
        memcpy(Q, q, sizeof q);
        return;
    }
    if (fabs(d2) <= 0.25 * a * a) {
        double P, q;
        if (d2 > 0) {
            double d = sqrt(d2);
            if (d > 1) {   /* e^{−a} cosh d would overflow in cosh first when d > 710 */
                double e1 = exp(-a + d), e2 = exp(-a - d);
                P = 0.5 * (e1 + e2);
                q = 0.5 * (e1 - e2) / d;
            } else {
                double m = exp(-a);
                P = m * cosh(d);
                q = m * sinh(d) / d;
            }
        } else if (d2 < 0) {
            double om = sqrt(-d2), m = exp(-a);
            P = m * cos(om);
            q = m * sin(om) / om;
        } else {
            P = q = exp(-a);
        }
        Q[0] = q;
        for (int k = 0; k < 3; k++) {
            double pt = P - inv_fact[k];
            P = (-a * pt - d2 * q) / det;
            q = (-a * q - pt) / det;
            Q[k + 1] = q;
        }
        return;
    }
    if (d2 > 0) {
        double d = sqrt(d2), xb = a >= 0 ? -a - d : -a + d, xs = det / xb, fb[4], fs[4];
        phi_real(xb, fb);
        phi_real(xs, fs);
        /* x_small − x_big = 2d when a >= 0, −2d otherwise */
        double inv = (a >= 0 ? 0.5 : -0.5) / d;
        for (int k = 0; k < 4; k++) Q[k] = (fs[k] - fb[k]) * inv;
        return;
    }
    double om = sqrt(-d2), fr[4], fi[4];
    phi_complex(-a, om, fr, fi);
    /* x₁ − x₂ = 2iω and f(x₂) = conj f(x₁): Q = Im f(x₁) / ω */
    for (int k = 0; k < 4; k++) Q[k] = fi[k] / om;
}

/* (Q_k(λ) − 1/(k+1)!) / λ. Where the Taylor form of mbsi_modal_divided_differences applies (r <= 2,
 * which holds for every small λ), its series without its first terms: X^j = u_j I + v_j N with
 * u₁ = −a, v₁ = 1 gives Q_k = 1/(k+1)! + Σ_{j>=2} v_j/(j+k)!, and every u_j, v_j from j = 2 on is
 * λ times a polynomial in λ (a = λα, d² = λδ, α = hβ/2, δ = h²(λβ²/4 − 1)), so the recurrence
 * runs on ū_j = u_j/λ, v̄_j = v_j/λ from ū₂ = λα² + δ, v̄₂ = −2α: no division by λ, and λ = 0
 * gives the derivative. Elsewhere (r > 2, so that λh² > 4 or hβλ/2 > 1) Q_k(λ) differs from
 * 1/(k+1)! by a sizeable fraction of it, and the difference divided by λ loses nothing. */
void mbsi_modal_divided_differences_excess(double lam, double beta, double h, double Qt[4])
{
    double al = 0.5 * h * beta, a = al * lam, det = h * h * lam, delta = h * h * (0.25 * lam * beta * beta - 1),
           d2 = lam * delta;
    double r = d2 >= 0 ? fabs(a) + sqrt(d2) : sqrt(det);
    if (r > 2) {
        mbsi_modal_divided_differences(lam, beta, h, Qt);
        for (int k = 0; k < 4; k++) Qt[k] = (Qt[k] - inv_fact[k + 1]) / lam;
        return;
    }
    /* the size of the first terms, against which the series' tail is cut */
    double u = lam * al * al + delta, v = -2 * al, q[4] = {0, 0, 0, 0}, size = fabs(al) + h * h;
    for (int j = 2; j < 34; j++) {
        for (int k = 0; k < 4; k++) q[k] += v * inv_fact[j + k];
        double un = -a * u + d2 * v, vn = u - a * v;
        u = un;
        v = vn;
        if (j >= 5 && (fabs(u) + fabs(v)) * inv_fact[j + 1] < 1e-22 * size) break;
    }
    memcpy(Qt, q, sizeof q);
}

/* out[3a..3a+2] = R_a x[3a..3a+2] for each contact a (R_a symmetric 3 x 3, column-major). */
static void apply_blocks(int n, const double *R, const double *x, double *out)
{
    for (int b = 0; b < n; b += 3) {
        const double *Rb = R + 3 * b;
        for (int i = 0; i < 3; i++) out[b + i] = Rb[i] * x[b] + Rb[i + 3] * x[b + 1] + Rb[i + 6] * x[b + 2];
    }
}

/* S = R Υ R (symmetrised), through T = Υ R; a block R_a = r I (equal normal and tangential
 * stiffness, every scenario's case) is a scalar. */
static void form_s(mbsi_modal *w, int n, const double *ups, const double *R)
{
    double *T = w->T, *S = w->S;
    for (int b = 0; b < n; b += 3) {
        const double *Rb = R + 3 * b;
        double *t = T + (size_t)n * b;
        const double *u = ups + (size_t)n * b;
        int iso = Rb[1] == 0 && Rb[2] == 0 && Rb[3] == 0 && Rb[5] == 0 && Rb[6] == 0 && Rb[7] == 0 && Rb[0] == Rb[4] &&
                  Rb[0] == Rb[8];
        if (iso) {
            for (int k = 0; k < 3 * n; k++) t[k] = Rb[0] * u[k];
        } else {
            for (int j = 0; j < 3; j++)
                for (int k = 0; k < n; k++)
                    t[k + (size_t)n * j] = u[k] * Rb[3 * j] + u[k + n] * Rb[3 * j + 1] + u[k + 2 * (size_t)n] * Rb[3 * j + 2];
        }
    }
    /* S = R T, each column through the blocks */
    for (int j = 0; j < n; j++) apply_blocks(n, R, T + (size_t)n * j, S + (size_t)n * j);
    for (int j = 0; j < n; j++)
        for (int i = j + 1; i < n; i++) {
            double m = 0.5 * (S[i + (size_t)n * j] + S[j + (size_t)n * i]);
            S[i + (size_t)n * j] = S[j + (size_t)n * i] = m;
        }
}

/* The four columns [R(Δp + βΔṗ), RΔṗ, R(ṗ0 + β p̈_free), R p̈_free] into Y (n each): the
 * state and the drift in the variables of the module comment; x is n of scratch. */
static void state_columns(int n, const double *R, double beta, const double *dp, const double *dv, const double *v0,
                          const double *acc, double *x, double *Y)
{
    for (int k = 0; k < n; k++) x[k] = dp[k] + beta * dv[k];
    apply_blocks(n, R, x, Y);
    apply_blocks(n, R, dv, Y + n);
    for (int k = 0; k < n; k++) x[k] = v0[k] + beta * acc[k];
    apply_blocks(n, R, x, Y + 2 * n);
    apply_blocks(n, R, acc, Y + 3 * n);
}

/* A mode's ∫g and ∫∫g (module comment) from its g(0), u(0), c₁, c₂ in z and its scalars Q. */
static void mode_integrals(const double Q[4], const double z[4], double h, double *g1, double *g2)
{
    const double h2 = h * h, h3 = h2 * h, h4 = h3 * h;
    *g1 = h * Q[0] * z[0] + h2 * Q[1] * (z[1] + z[2]) + h3 * Q[2] * z[3];
    *g2 = h2 * Q[1] * z[0] + h3 * Q[2] * (z[1] + z[2]) + h4 * Q[3] * z[3];
}

/* λ̄ = −R F₁ / h (eq. 23), λ̄₂ = −2 R F₂ / h² (eq. 25) from F = [F₁ F₂] (n x 2) in contact space. */
static void averages_out(int n, const double *R, const double *F, double h, double *lb, double *lb2)
{
    apply_blocks(n, R, F, lb);
    apply_blocks(n, R, F + n, lb2);
    const double s1 = -1 / h, s2 = -2 / (h * h);
    for (int k = 0; k < n; k++) {
        lb[k] *= s1;
        lb2[k] *= s2;
    }
}

int mbsi_modal_averages(mbsi_modal *w, int warm, int n, const double *ups, const double *R, double beta, const double *dp,
                        const double *dv, const double *v0, const double *acc, double h, double *lb, double *lb2)
{
    double *S = w->S, *Y = w->Y, *Z = w->Y + 4 * (size_t)n, *G = w->G, *F = w->G + 2 * (size_t)n;
    form_s(w, n, ups, R);
    state_columns(n, R, beta, dp, dv, v0, acc, w->T, Y);
    if (decompose(w, warm, n, S, w->T) != 0) return -1;
    /* Z = Vᵀ Y: each mode's g(0), u(0), c₁, c₂ */
    for (int i = 0; i < n; i++) {
        const double *vi = S + (size_t)n * i;
        double z[4] = {0, 0, 0, 0};
        for (int c = 0; c < 4; c++) {
            const double *y = Y + (size_t)n * c;
            for (int k = 0; k < n; k++) z[c] += vi[k] * y[k];
        }
        for (int c = 0; c < 4; c++) Z[i + (size_t)n * c] = z[c];
    }
    /* each mode's ∫g and ∫∫g */
    for (int i = 0; i < n; i++) {
        double Q[4], z[4] = {Z[i], Z[i + n], Z[i + 2 * n], Z[i + 3 * n]};
        mbsi_modal_divided_differences(w->w[i], beta, h, Q);
        mode_integrals(Q, z, h, &G[i], &G[i + n]);
    }
    /* F = V G, back in contact space */
    memset(F, 0, 2 * (size_t)n * sizeof(double));
    for (int i = 0; i < n; i++) {
        const double *vi = S + (size_t)n * i;
        double g1 = G[i], g2 = G[i + n];
        for (int k = 0; k < n; k++) {
            F[k] += vi[k] * g1;
            F[k + n] += vi[k] * g2;
        }
    }
    averages_out(n, R, F, h, lb, lb2);
    return 0;
}

int mbsi_modal_averages_factored(mbsi_modal *w, int warm, int n, int m, const double *B, int ldb, const double *R, double beta,
                                 const double *dp, const double *dv, const double *v0, const double *acc, double h,
                                 double *lb, double *lb2)
{
    double *S = w->S, *Y = w->Y, *Z = w->Y + 4 * (size_t)n, *G = w->G, *F = w->G + 2 * (size_t)n, *H = w->T;
    double *C = w->C;
    const int ldc = n;
    for (int j = 0; j < m; j++) apply_blocks(n, R, B + (size_t)ldb * j, C + (size_t)n * j);
    state_columns(n, R, beta, dp, dv, v0, acc, w->T, Y);
    /* CᵀC (lower triangle, mirrored) and Z = Cᵀ Y (m x 4) */
    for (int j = 0; j < m; j++) {
        const double *cj = C + (size_t)ldc * j;
        for (int i = j; i < m; i++) {
            const double *ci = C + (size_t)ldc * i;
            double s = 0;
            for (int k = 0; k < n; k++) s += ci[k] * cj[k];
            S[i + (size_t)m * j] = S[j + (size_t)m * i] = s;
        }
        for (int c = 0; c < 4; c++) {
            const double *y = Y + (size_t)n * c;
            double s = 0;
            for (int k = 0; k < n; k++) s += cj[k] * y[k];
            Z[j + (size_t)m * c] = s;
        }
    }
    if (decompose(w, warm, m, S, H) != 0) return -1;
    /* each mode of CᵀC: (A(λ) − A(0))/λ applied to its coordinates Wᵀ Cᵀ Y */
    for (int i = 0; i < m; i++) {
        const double *wi = S + (size_t)m * i;
        double Qt[4], z[4] = {0, 0, 0, 0};
        for (int c = 0; c < 4; c++)
            for (int k = 0; k < m; k++) z[c] += wi[k] * Z[k + (size_t)m * c];
        mbsi_modal_divided_differences_excess(w->w[i], beta, h, Qt);
        mode_integrals(Qt, z, h, &G[i], &G[i + m]);
    }
    /* H = W G (m x 2) */
    memset(H, 0, 2 * (size_t)m * sizeof(double));
    for (int i = 0; i < m; i++) {
        const double *wi = S + (size_t)m * i;
        for (int k = 0; k < m; k++) {
            H[k] += wi[k] * G[i];
            H[k + m] += wi[k] * G[i + m];
        }
    }
    /* F = Y A(0) + C H: A(0) is a mode's integrals at λ = 0, Q_k(0) = 1/(k+1)! */
    const double *Q0 = inv_fact + 1;
    for (int k = 0; k < n; k++) {
        double z[4] = {Y[k], Y[k + n], Y[k + 2 * n], Y[k + 3 * n]}, f1, f2;
        mode_integrals(Q0, z, h, &f1, &f2);
        for (int j = 0; j < m; j++) {
            double c = C[k + (size_t)ldc * j];
            f1 += c * H[j];
            f2 += c * H[j + m];
        }
        F[k] = f1;
        F[k + n] = f2;
    }
    averages_out(n, R, F, h, lb, lb2);
    return 0;
}
