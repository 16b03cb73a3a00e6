/* drnea.c — the discrete recursive Newton–Euler algorithm (DRNEA) and the root finders of the
 * linear-time variational integrator: Lee, Liu, Park, Srinivasa, "A linear-time variational
 * integrator for multibody systems", WAFR 2016 (equation and algorithm numbers are theirs).
 *
 * The DEL equations in the library's conventions. Body i has the world placement T_i, its
 * step displacement ΔT_i = T_i^k⁻¹ T_i^{k+1} (eq. 19 builds it from the parent's) and the
 * average body twist V_i = log(ΔT_i)/Δt = ξ_i/Δt (eq. 10), twists [v; w]. With the trapezoidal
 * discrete Lagrangian of eq. 9, varying T^k by T^k exp(ε) gives, per body,
 *   D2Ld(T^{k-1}, T^k) + D1Ld(T^k, T^{k+1}) = Jr⁻ᵀ(ξ^{k-1}) G V^{k-1} - Jl⁻ᵀ(ξ^k) G V^k - Δt ∂P(T^k),
 * where Jr, Jl are the right and left Jacobians of exp (src/liegroup/liegroup_internal.h has Jr⁻¹ = jlog).
 * The paper's dlog_ξ (eqs. 12–13) is Jl⁻¹(ξ) = Jr⁻¹(-ξ), and Jr⁻¹(ξ) = Jl⁻¹(ξ) Ad_{exp ξ}, so
 * the two terms are the paper's Ad*_{exp(Δt V^{k-1})} μ^{k-1} and μ^k = dlog_{ΔtV}ᵀ G V
 * (eq. 21b). Adding the impulses of gravity, external wrenches and the children's joints
 * (eq. 20) gives the impulse the parent's joint transmits (eq. 21a):
 *   F_i = μ_i^k - π_i - h (f_grav,i + f_ext,i) + Σ_c X*_c F_c,   π_i = Jr⁻ᵀ(ξ_i^{k-1}) G V_i^{k-1},
 * and the residual f_i = S_iᵀ F_i - h τ_i (eq. 22), h = (Δt_prev + Δt)/2 being the trapezoidal
 * weight of the forcing at t_k. Everything that does not depend on q^{k+1} — π_i, the forcing,
 * the placements at q^k — is computed once per step (mbs_vi_begin), so an evaluation is one
 * forward pass (ΔT_i from the joint displacements, log) and one backward pass (μ_i, F_i, f_i).
 *
 * The derivative (Algorithm 4). Perturbing q^{k+1} by joint j's tangent direction moves
 * T_i^{k+1} by its body Jacobian column, so ΔT_i⁻¹ ∂ΔT_i = Ψ_i with
 *   Ψ_i = Ad(T_{λ(i),i}^{k+1})⁻¹ Ψ_λ(i) + S_i δ_ij        (Algorithm 4, line 4, divided by ΔT_i)
 *   ∂ξ_i = Jr⁻¹(ξ_i) Ψ_i                                     (line 5)
 *   ∂μ_i = ∂μ/∂ξ (ξ_i) ∂ξ_i                                  (line 8)
 *   ∂F_i = ∂μ_i + Σ_c X*_c ∂F_c,  ∂f_i = S_iᵀ ∂F_i          (lines 9, 10)
 * The 6x6 matrix B_i = ∂μ/∂ξ · Jr⁻¹(ξ_i) does not depend on j: it is formed once per Jacobian
 * (its ∂dlogᵀ part by forward-mode differentiation of the closed form below), then each
 * column j costs one pass over the subtree of j and its ancestors — the only nonzero rows. */
#include <float.h>
#include <stdlib.h>

#include "../model/model_internal.h"
#include "mbs/dynamics.h"
#include "mbs/liegroup.h"
#include "../liegroup/liegroup_internal.h"
#include "../base/base.h"
#include "del_tree.h"
#include "joint.h"
#include "mbs/variational.h"
/* after spatial.h: lapacke.h pulls in complex.h, whose macro I clashes with m3_identity's array */
#include <lapacke.h>

struct mbs_vi {
    int nb, nq, nv;
    double dt, h;                /* the step, and the weight of the forcing at t_k */
    /* fixed by begin */
    double *Rk, *pk;             /* 9 x nb, 3 x nb: body in its parent at q^k */
    double *oRk, *opk;           /* 9 x nb, 3 x nb: body in the world at q^k */
    double *cst;                 /* 6 x nb: π_i + h (f_grav + f_ext) */
    double *Q;                   /* nv: h τ */
    double *qk, *vk, *tau, *fext;
    int has_fext;
    /* one evaluation at q^{k+1} */
    double *R1, *p1;             /* body in its parent at q^{k+1} (Algorithm 4), at q^{k-1} (begin) */
    double *dE, *de;             /* ΔT_i as (R - 1, p): see displacement() */
    double *xi, *mu, *F;         /* 6 x nb: log ΔT_i, μ_i, F_i */
    /* Algorithm 4, Newton, Broyden */
    double *B, *Psi, *dF;        /* 36 x nb, 6 x nb, 6 x nb */
    double *J, *H;               /* nv x nv */
    del_tree tree;               /* the O(n) elimination of the same Jacobian (del_tree.h) */
    double *e, *e2, *dq, *y, *t1, *t2;
    lapack_int *ipiv;
    double *block;
};

/* ------------------------------------------------------------------------ dlog closed form
 * Jr⁻¹(ξ) = [[A, -A Q A], [0, A]] for ξ = (ρ, ω) [Sola, SE(3) appendix; se3.c], with
 *   A = I + ½ W + β W²,   W = [ω]x,  β = 1/θ² - (1 + cos θ)/(2θ sin θ),
 *   Q = -½ P + C (WP + PW - WPW) - D (WWP + PWW - 3 WPW) + E (WPWW + WWPW),  P = [ρ]x,
 * C = (θ - sin θ)/θ³, D = (θ²/2 + cos θ - 1)/θ⁴, E = (2θ - 3 sin θ + θ cos θ)/(2θ⁵). DRNEA needs
 * only its transpose applied to a wrench y = (f, n):
 *   Jr⁻ᵀ y = (g, Aᵀ (n - Qᵀ g)),  g = Aᵀ f,
 * with Aᵀ = I - ½ W + β W² and Qᵀ = ½ P + C (PW + WP + WPW) + D (PWW + WWP - 3 WPW) + E (WWPW + WPWW)
 * (Pᵀ = -P, Wᵀ = -W): a dozen cross products instead of the 6x6 matrix that se3.c forms,
 * which is what keeps an evaluation cheap. */

/* Series in x = θ² below 1 rad (as se3.c), where the closed forms lose digits:
 * β = Σ |B_{2k+2}|/(2k+2)! x^k (Bernoulli numbers), C = Σ (-x)^k/(2k+3)!, D = Σ (-x)^k/(2k+4)!,
 * E = Σ (-x)^k (k+1)/(2k+5)!. The first omitted terms are below 1e-17 relative at x = 1. */
#define NBETA 12
#define NCDE 10
static const double beta_series[NBETA] = {
    1.0 / 12.0, 1.0 / 720.0, 1.0 / 30240.0, 1.0 / 1209600.0, 1.0 / 47900160.0,
    691.0 / 1307674368000.0, 1.0 / 74724249600.0, 3617.0 / 10670622842880000.0,
    43867.0 / 5109094217170944000.0, 174611.0 / 802857662698291200000.0,
    854513.0 / 138.0 / 1124000727777607680000.0, 236364091.0 / 2730.0 / 620448401733239439360000.0};
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

/* out = Jr⁻¹(ξ)ᵀ y. out may alias y. */
static void jrinv_t(const double xi[6], const double y[6], double out[6])
{
    const double *r = xi, *w = xi + 3;
    double c[4];
    dlog_coefs_value(v3_dot(w, w), c);
    double a[3], b[3], g[3], n[3];
    v3_cross(w, y, a);
    v3_cross(w, a, b);
    for (int k = 0; k < 3; k++) { g[k] = y[k] - 0.5 * a[k] + c[0] * b[k]; n[k] = y[k + 3]; }
    double Wg[3], Pg[3], PWg[3], WPg[3], WPWg[3], WWg[3], PWWg[3], WWPg[3], WWPWg[3], WPWWg[3];
    v3_cross(w, g, Wg);
    v3_cross(r, g, Pg);
    v3_cross(r, Wg, PWg);
    v3_cross(w, Pg, WPg);
    v3_cross(w, PWg, WPWg);
    v3_cross(w, Wg, WWg);
    v3_cross(r, WWg, PWWg);
    v3_cross(w, WPg, WWPg);
    v3_cross(w, WPWg, WWPWg);
    v3_cross(w, PWWg, WPWWg);
    for (int k = 0; k < 3; k++)
        n[k] -= 0.5 * Pg[k] + c[1] * (PWg[k] + WPg[k] + WPWg[k]) + c[2] * (PWWg[k] + WWPg[k] - 3 * WPWg[k]) +
                c[3] * (WWPWg[k] + WPWWg[k]);
    v3_cross(w, n, a);
    v3_cross(w, a, b);
    for (int k = 0; k < 3; k++) { out[k] = g[k]; out[k + 3] = n[k] - 0.5 * a[k] + c[0] * b[k]; }
}

/* The derivative of jrinv_t along (dξ, dy), by the product rule over its chain of cross
 * products. The values of the chain are computed once (tangent_at) and serve every direction
 * (tangent_along): Algorithm 4 needs six directions per body. */
typedef struct tangent {
    double c[4], dc[4];
    double r[3], w[3], f[3];
    double a[3], b[3], g[3], Wg[3], Pg[3], PWg[3], WPg[3], WPWg[3], WWg[3], PWWg[3], WWPg[3];
    double s1[3], s2[3], s3[3], n[3], a2[3], b2[3];
} tangent;

static void tangent_at(const double xi[6], const double y[6], tangent *t)
{
    memcpy(t->r, xi, sizeof t->r);
    memcpy(t->w, xi + 3, sizeof t->w);
    memcpy(t->f, y, sizeof t->f);
    const double *r = t->r, *w = t->w, *c = t->c;
    dlog_coefs(v3_dot(w, w), t->c, t->dc);
    double WWPWg[3], WPWWg[3];
    v3_cross(w, y, t->a);
    v3_cross(w, t->a, t->b);
    for (int k = 0; k < 3; k++) t->g[k] = y[k] - 0.5 * t->a[k] + c[0] * t->b[k];
    v3_cross(w, t->g, t->Wg);
    v3_cross(r, t->g, t->Pg);
    v3_cross(r, t->Wg, t->PWg);
    v3_cross(w, t->Pg, t->WPg);
    v3_cross(w, t->PWg, t->WPWg);
    v3_cross(w, t->Wg, t->WWg);
    v3_cross(r, t->WWg, t->PWWg);
    v3_cross(w, t->WPg, t->WWPg);
    v3_cross(w, t->WPWg, WWPWg);
    v3_cross(w, t->PWWg, WPWWg);
    for (int k = 0; k < 3; k++) {
        t->s1[k] = t->PWg[k] + t->WPg[k] + t->WPWg[k];
        t->s2[k] = t->PWWg[k] + t->WWPg[k] - 3 * t->WPWg[k];
        t->s3[k] = WWPWg[k] + WPWWg[k];
        t->n[k] = y[k + 3] - 0.5 * t->Pg[k] - c[1] * t->s1[k] - c[2] * t->s2[k] - c[3] * t->s3[k];
    }
    v3_cross(w, t->n, t->a2);
    v3_cross(w, t->a2, t->b2);
}

/* o = d(u × v) = du × v + u × dv */
static inline void dcross(const double u[3], const double du[3], const double v[3], const double dv[3], double o[3])
{
    double t[3];
    v3_cross(du, v, o);
    v3_cross(u, dv, t);
    for (int k = 0; k < 3; k++) o[k] += t[k];
}

/* dout = the derivative of Jr⁻¹(ξ)ᵀ y along ξ + ε dξ, y + ε dy, at the point of tangent_at. */
static void tangent_along(const tangent *t, const double dxi[6], const double dy[6], double dout[6])
{
    const double *r = t->r, *w = t->w, *c = t->c, *dr = dxi, *dw = dxi + 3;
    double dcx[4], x = 2 * v3_dot(w, dw);
    for (int k = 0; k < 4; k++) dcx[k] = t->dc[k] * x;
    double da[3], db[3], dg[3], dWg[3], dPg[3], dPWg[3], dWPg[3], dWPWg[3], dWWg[3], dPWWg[3], dWWPg[3];
    double dWWPWg[3], dWPWWg[3], dn[3], da2[3], db2[3];
    dcross(w, dw, t->f, dy, da);
    dcross(w, dw, t->a, da, db);
    for (int k = 0; k < 3; k++) dg[k] = dy[k] - 0.5 * da[k] + c[0] * db[k] + dcx[0] * t->b[k];
    dcross(w, dw, t->g, dg, dWg);
    dcross(r, dr, t->g, dg, dPg);
    dcross(r, dr, t->Wg, dWg, dPWg);
    dcross(w, dw, t->Pg, dPg, dWPg);
    dcross(w, dw, t->PWg, dPWg, dWPWg);
    dcross(w, dw, t->Wg, dWg, dWWg);
    dcross(r, dr, t->WWg, dWWg, dPWWg);
    dcross(w, dw, t->WPg, dWPg, dWWPg);
    dcross(w, dw, t->WPWg, dWPWg, dWWPWg);
    dcross(w, dw, t->PWWg, dPWWg, dWPWWg);
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

void mbs_vi_dlog_transpose(const double xi[6], const double y[6], double out[6])
{
    double m[6] = {-xi[0], -xi[1], -xi[2], -xi[3], -xi[4], -xi[5]};
    jrinv_t(m, y, out);
}

void mbs_vi_dlog_transpose_derivative(const double xi[6], const double dxi[6], const double y[6], double out[6])
{
    double m[6], dm[6], zero[6] = {0};
    tangent t;
    for (int k = 0; k < 6; k++) { m[k] = -xi[k]; dm[k] = -dxi[k]; }
    tangent_at(m, y, &t);
    tangent_along(&t, dm, zero, out);
}

/* ------------------------------------------------------------------------ workspace */

typedef struct carver { double *base; size_t used; } carver;

static double *carve(carver *c, size_t n)
{
    double *p = c->base ? c->base + c->used : NULL;
    c->used += (n + 7) & ~(size_t)7;
    return p;
}

static void layout(carver *c, mbs_vi *w)
{
    size_t b = (size_t)w->nb, v = (size_t)(w->nv ? w->nv : 1), q = (size_t)(w->nq ? w->nq : 1);
    w->Rk = carve(c, 9 * b); w->pk = carve(c, 3 * b);
    w->oRk = carve(c, 9 * b); w->opk = carve(c, 3 * b);
    w->cst = carve(c, 6 * b); w->Q = carve(c, v);
    w->qk = carve(c, q); w->vk = carve(c, v); w->tau = carve(c, v); w->fext = carve(c, 6 * b);
    w->R1 = carve(c, 9 * b); w->p1 = carve(c, 3 * b);
    w->dE = carve(c, 9 * b); w->de = carve(c, 3 * b);
    w->xi = carve(c, 6 * b); w->mu = carve(c, 6 * b); w->F = carve(c, 6 * b);
    w->B = carve(c, 36 * b); w->Psi = carve(c, 6 * b); w->dF = carve(c, 6 * b);
    w->J = carve(c, v * v); w->H = carve(c, v * v);
    w->e = carve(c, v); w->e2 = carve(c, v); w->dq = carve(c, v); w->y = carve(c, v);
    w->t1 = carve(c, v); w->t2 = carve(c, v);
    w->tree.IA = carve(c, 36 * b); w->tree.Dinv = carve(c, 36 * b);
    w->tree.U = carve(c, 6 * v); w->tree.W = carve(c, 6 * v);
    w->tree.p = carve(c, 6 * b); w->tree.u = carve(c, v);
}

mbs_vi *mbs_vi_new(const mbs_model *m, mbs_error *err)
{
    if (!m || !m->finalized) { mbs_fail(err, MBS_ERR_ARG, "mbs_vi_new: no finalized model"); return NULL; }
    mbs_vi *w = calloc(1, sizeof *w);
    if (!w) { mbs_fail(err, MBS_ERR_NOMEM, "out of memory"); return NULL; }
    w->nb = m->nbodies; w->nq = m->nq; w->nv = m->nv;
    carver c = {NULL, 0};
    layout(&c, w);
    w->block = calloc(c.used ? c.used : 1, sizeof(double));
    w->ipiv = calloc((size_t)(w->nv ? w->nv : 1), sizeof(lapack_int));
    if (!w->block || !w->ipiv) {
        mbs_vi_free(w);
        mbs_fail(err, MBS_ERR_NOMEM, "out of memory");
        return NULL;
    }
    c.base = w->block;
    c.used = 0;
    layout(&c, w);
    w->dt = w->h = 1;
    return w;
}

void mbs_vi_free(mbs_vi *w)
{
    if (!w) return;
    free(w->block);
    free(w->ipiv);
    free(w);
}

void mbs_vi_default_options(mbs_vi_options *opt)
{
    opt->solver = MBS_VI_RIQN;
    opt->guess = MBS_VI_IG3;
    opt->tol = 1e-9;
    opt->max_iter = 20;
    opt->history = NULL;
    opt->history_cap = 0;
}

const double *mbs_vi_velocity(const mbs_vi *w) { return w->vk; }

/* ------------------------------------------------------------------------ begin */

/* G ξ / Δt: the body's momentum for the average twist ξ/Δt (G about the body origin). */
static inline void momentum_of(const mbs_body *b, const double xi[6], double inv_dt, double o[6])
{
    inertia_mul(b->mass, b->h, b->Io, xi, o);
    for (int k = 0; k < 6; k++) o[k] *= inv_dt;
}

/* The joint's own displacement D = T_{λi}(qa)⁻¹ T_{λi}(qb), in body i, as (E = R - 1, e = p).
 * Steps move bodies by ~1e-3 of their size, so ΔT_i formed from placements of unit size would
 * keep only ~13 digits of ξ_i and put a rounding floor on the residual (~1e-9 N·s on the 10-link
 * pendulum); these small parts come straight from the joint coordinates instead. */
static void joint_displacement(const mbs_body *b, const double *qa, const double *qb, double E[9], double e[3])
{
    const double *a = b->axis;
    double s, c, omc;
    switch (b->type) {
    case MBS_JOINT_PRISMATIC:
        memset(E, 0, 9 * sizeof(double));
        for (int k = 0; k < 3; k++) e[k] = a[k] * (qb[0] - qa[0]);
        return;
    case MBS_JOINT_FREEFLYER: {
        double g[7];
        mbs_se3_between(qa, qb, g);
        double x = g[3], y = g[4], z = g[5], ww = g[6];
        /* m3_from_quat minus the identity, without forming 1 - small */
        E[0] = -2 * (y * y + z * z); E[3] = 2 * (x * y - z * ww);  E[6] = 2 * (x * z + y * ww);
        E[1] = 2 * (x * y + z * ww);  E[4] = -2 * (x * x + z * z); E[7] = 2 * (y * z - x * ww);
        E[2] = 2 * (x * z - y * ww);  E[5] = 2 * (y * z + x * ww);  E[8] = -2 * (x * x + y * y);
        memcpy(e, g, 3 * sizeof(double));
        return;
    }
    case MBS_JOINT_PLANAR: {
        double g[4];
        mbs_se2_between(qa, qb, g);
        c = g[2]; s = g[3];
        for (int k = 0; k < 3; k++) e[k] = g[0] * b->plane[k] + g[1] * b->plane[3 + k];
        break;
    }
    case MBS_JOINT_REVOLUTE:
    default:
        sin_cos(qb[0] - qa[0], &s, &c);
        memset(e, 0, 3 * sizeof(double));
        break;
    }
    /* rotation about the axis: E = s [a]x + (1 - cos) [a]x², [a]x² = a aᵀ - 1 */
    omc = c > 0 ? s * s / (1 + c) : 1 - c;
    E[0] = omc * (a[0] * a[0] - 1); E[3] = -s * a[2] + omc * a[0] * a[1]; E[6] = s * a[1] + omc * a[0] * a[2];
    E[1] = s * a[2] + omc * a[1] * a[0]; E[4] = omc * (a[1] * a[1] - 1); E[7] = -s * a[0] + omc * a[1] * a[2];
    E[2] = -s * a[1] + omc * a[2] * a[0]; E[5] = s * a[0] + omc * a[2] * a[1]; E[8] = omc * (a[2] * a[2] - 1);
}

/* ΔT_i = T_{λi}(a)⁻¹ ΔT_λ T_{λi}(b) (eq. 19) = C D_i with C = T_{λi}(a)⁻¹ ΔT_λ T_{λi}(a) the
 * parent's displacement seen from body i and D_i the joint's own; (Ra, pa) is the placement at
 * the start of the step. In the small form (E, e): C = (Raᵀ E_λ Ra, Raᵀ (E_λ pa + e_λ)) and
 * C D = (E_C + E_D + E_C E_D, e_C + e_D + E_C e_D). Then ξ_i = log ΔT_i (eq. 10). */
static void displacement(const mbs_vi *w, const mbs_body *b, const double Ra[9], const double pa[3],
                         const double *qa, const double *qb, double E[9], double e[3], double xi[6])
{
    double ED[9], eD[3];
    joint_displacement(b, qa + b->idx_q, qb + b->idx_q, ED, eD);
    if (b->parent < 0) {
        memcpy(E, ED, sizeof ED);
        memcpy(e, eD, sizeof eD);
    } else {
        const double *El = w->dE + 9 * b->parent, *el = w->de + 3 * b->parent;
        double T[9], EC[9], eC[3], t[3], ECD[9];
        m3_mul(El, Ra, T);
        m3t_mul(Ra, T, EC);
        m3_mulv(El, pa, t);
        for (int k = 0; k < 3; k++) t[k] += el[k];
        m3t_mulv(Ra, t, eC);
        m3_mul(EC, ED, ECD);
        m3_mulv(EC, eD, t);
        for (int k = 0; k < 9; k++) E[k] = EC[k] + ED[k] + ECD[k];
        for (int k = 0; k < 3; k++) e[k] = eC[k] + eD[k] + t[k];
    }
    /* the off-diagonal entries of 1 + E are E's own, so the quaternion keeps E's precision */
    double R[9], g[7];
    memcpy(R, E, sizeof R);
    R[0] += 1; R[4] += 1; R[8] += 1;
    memcpy(g, e, 3 * sizeof(double));
    m3_to_quat(R, g + 3);
    mbs_se3_log(g, xi);
}

/* mode 0: momentum from (q_prev, q) with dt_prev; mode 1: from (q, v). */
static int begin(const mbs_model *m, mbs_vi *w, int mode, double dt_prev, double dt, const double *q_prev,
                 const double *q, const double *v, const double *tau, const double *fext)
{
    if (!(dt > 0) || !isfinite(dt) || (mode == 0 && (!(dt_prev > 0) || !isfinite(dt_prev)))) return MBS_ERR_ARG;
    int nb = w->nb, nv = w->nv;
    w->dt = dt;
    w->h = mode == 0 ? 0.5 * (dt_prev + dt) : 0.5 * dt;
    memcpy(w->qk, q, (size_t)w->nq * sizeof(double));
    if (tau) memcpy(w->tau, tau, (size_t)nv * sizeof(double));
    else memset(w->tau, 0, (size_t)nv * sizeof(double));
    w->has_fext = fext != NULL;
    if (fext) memcpy(w->fext, fext, 6 * (size_t)nb * sizeof(double));
    else memset(w->fext, 0, 6 * (size_t)nb * sizeof(double));
    if (mode == 0) {
        mbs_difference(m, q_prev, q, w->vk);
        for (int k = 0; k < nv; k++) w->vk[k] /= dt_prev;
    } else
        memcpy(w->vk, v, (size_t)nv * sizeof(double));
    const double *g = m->gravity;
    for (int i = 0; i < nb; i++) {
        const mbs_body *b = &m->bodies[i];
        double *R = w->Rk + 9 * i, *p = w->pk + 3 * i, *oR = w->oRk + 9 * i, *op = w->opk + 3 * i;
        double *pi = w->cst + 6 * i;
        int par = b->parent;
        joint_placement(b, q + b->idx_q, R, p);
        if (par < 0) { memcpy(oR, R, 9 * sizeof(double)); memcpy(op, p, 3 * sizeof(double)); }
        else se3_compose(w->oRk + 9 * par, w->opk + 3 * par, R, p, oR, op);
        if (mode == 0) {
            /* π_i = Ad*_{exp ξ^{k-1}} μ^{k-1} = Jr⁻ᵀ(ξ^{k-1}) G V^{k-1}: the momentum the body
             * brings from [t_{k-1}, t_k] (eq. 21a), with R1, dE as scratch for that step */
            double *R0 = w->R1 + 9 * i, *p0 = w->p1 + 3 * i, *xi = w->xi + 6 * i, mv[6];
            joint_placement(b, q_prev + b->idx_q, R0, p0);
            displacement(w, b, R0, p0, q_prev, q, w->dE + 9 * i, w->de + 3 * i, xi);
            momentum_of(b, xi, 1.0 / dt_prev, mv);
            jrinv_t(xi, mv, pi);
        } else {
            /* the continuous momentum G V at t_k, V from the usual velocity recursion */
            double *V = w->xi + 6 * i, vJ[6];
            joint_motion(b, m->S + 6 * b->idx_v, v + b->idx_v, vJ);
            if (par < 0) memcpy(V, vJ, sizeof vJ);
            else {
                se3_actinv_motion(R, p, w->xi + 6 * par, V);
                for (int k = 0; k < 6; k++) V[k] += vJ[k];
            }
            inertia_mul(b->mass, b->h, b->Io, V, pi);
        }
        /* gravity's wrench at t_k about the body origin: m g and h x g in body axes */
        double gb[3], tq[3];
        m3t_mulv(oR, g, gb);
        v3_cross(b->h, gb, tq);
        const double *fe = w->fext + 6 * i;
        for (int k = 0; k < 3; k++) {
            pi[k] += w->h * (b->mass * gb[k] + fe[k]);
            pi[k + 3] += w->h * (tq[k] + fe[k + 3]);
        }
    }
    for (int k = 0; k < nv; k++) w->Q[k] = w->h * w->tau[k];
    return MBS_OK;
}

int mbs_vi_begin(const mbs_model *m, mbs_vi *w, double dt_prev, double dt, const double *q_prev, const double *q,
                 const double *tau, const double *fext)
{
    return begin(m, w, 0, dt_prev, dt, q_prev, q, NULL, tau, fext);
}

int mbs_vi_begin_velocity(const mbs_model *m, mbs_vi *w, double dt, const double *q, const double *v,
                          const double *tau, const double *fext)
{
    return begin(m, w, 1, 0, dt, NULL, q, v, tau, fext);
}

/* ------------------------------------------------------------------------ DRNEA */

void mbs_vi_residual(const mbs_model *m, mbs_vi *w, const double *q_next, double *res)
{
    const int nb = w->nb;
    const double inv_dt = 1.0 / w->dt;
    /* forward pass (Algorithm 2, lines 1-5) */
    for (int i = 0; i < nb; i++)
        displacement(w, &m->bodies[i], w->Rk + 9 * i, w->pk + 3 * i, w->qk, q_next, w->dE + 9 * i, w->de + 3 * i,
                     w->xi + 6 * i);
    /* backward pass (lines 6-10) */
    memset(w->F, 0, 6 * (size_t)nb * sizeof(double));
    for (int i = nb - 1; i >= 0; i--) {
        const mbs_body *b = &m->bodies[i];
        const double *xi = w->xi + 6 * i, *c = w->cst + 6 * i;
        double *mu = w->mu + 6 * i, *Fi = w->F + 6 * i, mv[6], mxi[6];
        momentum_of(b, xi, inv_dt, mv);
        for (int k = 0; k < 6; k++) mxi[k] = -xi[k];
        jrinv_t(mxi, mv, mu);                         /* μ = Jl⁻ᵀ(ξ) G V = dlog_ξᵀ G V (eq. 21b) */
        for (int k = 0; k < 6; k++) Fi[k] += mu[k] - c[k];
        double *r = res + b->idx_v;
        joint_force(b, m->S + 6 * b->idx_v, Fi, r);
        for (int k = 0; k < b->nv; k++) r[k] -= w->Q[b->idx_v + k];
        if (b->parent >= 0) {
            double t[6], *Fp = w->F + 6 * b->parent;
            se3_act_force(w->Rk + 9 * i, w->pk + 3 * i, Fi, t);
            for (int k = 0; k < 6; k++) Fp[k] += t[k];
        }
    }
}

int mbs_drnea(const mbs_model *m, mbs_vi *w, double dt, const double *q_prev, const double *q,
              const double *q_next, const double *tau, const double *fext, double *res)
{
    int rc = mbs_vi_begin(m, w, dt, dt, q_prev, q, tau, fext);
    if (rc == MBS_OK) mbs_vi_residual(m, w, q_next, res);
    return rc;
}

void mbs_vi_momentum(const mbs_model *m, mbs_vi *w, const double *q_next, double out[6])
{
    mbs_vi_residual(m, w, q_next, w->t2);
    memset(out, 0, 6 * sizeof(double));
    for (int i = 0; i < w->nb; i++) {
        double t[6];
        se3_act_force(w->oRk + 9 * i, w->opk + 3 * i, w->mu + 6 * i, t);
        for (int k = 0; k < 6; k++) out[k] += t[k];
    }
}

/* ------------------------------------------------------------------------ Algorithm 4 */

/* B_i = ∂μ/∂ξ (ξ_i) Jr⁻¹(ξ_i), column by column: with z = Jr⁻¹ e_c, ∂μ·z is the tangent of
 * μ(ξ) = Jr⁻ᵀ(-ξ) G ξ/Δt along ξ + ε z. */
static void body_derivative(const mbs_body *b, const double xi[6], double inv_dt, double B[36])
{
    double Jri[36], mxi[6], mv[6];
    tangent t;
    mbs_se3_jlog(xi, Jri, 6);
    for (int k = 0; k < 6; k++) mxi[k] = -xi[k];
    momentum_of(b, xi, inv_dt, mv);
    tangent_at(mxi, mv, &t);
    for (int c = 0; c < 6; c++) {
        const double *z = Jri + 6 * c;
        double mz[6], Gz[6];
        for (int k = 0; k < 6; k++) mz[k] = -z[k];
        momentum_of(b, z, inv_dt, Gz);
        tangent_along(&t, mz, Gz, B + 6 * c);
    }
}

/* What every exact Jacobian needs at q_next: the joint placements at q^{k+1} and the B_i. The
 * ξ_i it reads are those of the last residual evaluation, which must have been at q_next. */
static void linearise(const mbs_model *m, mbs_vi *w, const double *q_next)
{
    const double inv_dt = 1.0 / w->dt;
    for (int i = 0; i < w->nb; i++) {
        const mbs_body *b = &m->bodies[i];
        joint_placement(b, q_next + b->idx_q, w->R1 + 9 * i, w->p1 + 3 * i);
        body_derivative(b, w->xi + 6 * i, inv_dt, w->B + 36 * i);
    }
}

/* Algorithm 4 at the configuration of the last residual evaluation. */
static void jacobian_here(const mbs_model *m, mbs_vi *w, const double *q_next, double *J, int ldJ)
{
    const int nb = w->nb, nv = w->nv;
    linearise(m, w, q_next);
    for (int col = 0; col < nv; col++) memset(J + (size_t)ldJ * col, 0, (size_t)nv * sizeof(double));
    for (int j = 0; j < nb; j++) {
        const mbs_body *bj = &m->bodies[j];
        for (int c = 0; c < bj->nv; c++) {
            double *Jc = J + (size_t)ldJ * (bj->idx_v + c);
            /* forward over the subtree of j: Ψ_i and ∂F_i's own term B_i Ψ_i (lines 3-8) */
            memcpy(w->Psi + 6 * j, m->S + 6 * (bj->idx_v + c), 6 * sizeof(double));
            m6_mulv(w->B + 36 * j, w->Psi + 6 * j, w->dF + 6 * j);
            for (int i = j + 1; i <= bj->last; i++) {
                const mbs_body *b = &m->bodies[i];
                se3_actinv_motion(w->R1 + 9 * i, w->p1 + 3 * i, w->Psi + 6 * b->parent, w->Psi + 6 * i);
                m6_mulv(w->B + 36 * i, w->Psi + 6 * i, w->dF + 6 * i);
            }
            /* backward within the subtree (lines 9-10) */
            for (int i = bj->last; i >= j; i--) {
                const mbs_body *b = &m->bodies[i];
                double *dFi = w->dF + 6 * i;
                joint_force(b, m->S + 6 * b->idx_v, dFi, Jc + b->idx_v);
                if (i > j) {
                    double t[6], *dFp = w->dF + 6 * b->parent;
                    se3_act_force(w->Rk + 9 * i, w->pk + 3 * i, dFi, t);
                    for (int k = 0; k < 6; k++) dFp[k] += t[k];
                }
            }
            /* the ancestors of j only transmit ∂F_j (their own Ψ is zero) */
            double f[6];
            memcpy(f, w->dF + 6 * j, sizeof f);
            for (int i = j; m->bodies[i].parent >= 0; i = m->bodies[i].parent) {
                double t[6];
                const mbs_body *a = &m->bodies[m->bodies[i].parent];
                se3_act_force(w->Rk + 9 * i, w->pk + 3 * i, f, t);
                memcpy(f, t, sizeof f);
                joint_force(a, m->S + 6 * a->idx_v, f, Jc + a->idx_v);
            }
        }
    }
}

void mbs_vi_jacobian(const mbs_model *m, mbs_vi *w, const double *q_next, double *res, double *J, int ldJ)
{
    mbs_vi_residual(m, w, q_next, res);
    jacobian_here(m, w, q_next, J, ldJ);
}

/* ------------------------------------------------------------------------ root finding */

static double norm2(const double *x, int n)
{
    double s = 0;
    for (int k = 0; k < n; k++) s += x[k] * x[k];
    return sqrt(s);
}

/* The update would move every joint by less than the rounding of its coordinates: no
 * representable q^{k+1} is closer to the root, whose residual cannot then go below
 * ~ ‖M‖ ε |q| / Δt (≈ 2e-11 N·m·s on the 10-link 1.5 m pendulum at 1 ms). The solve has
 * converged as far as doubles allow. Joint by joint, because a free-flyer far from the origin
 * has coarser positions than its joints' angles. */
static int stalled(const mbs_model *m, const double *dq, const double *q)
{
    for (int i = 0; i < m->nbodies; i++) {
        const mbs_body *b = &m->bodies[i];
        double scale = 1;
        for (int k = 0; k < b->nq; k++) scale = fmax(scale, fabs(q[b->idx_q + k]));
        for (int k = 0; k < b->nv; k++)
            if (fabs(dq[b->idx_v + k]) > 4 * DBL_EPSILON * scale) return 0;
    }
    return 1;
}

static void initial_guess(const mbs_model *m, mbs_data *d, mbs_vi *w, mbs_vi_guess guess, double *q)
{
    const int nv = w->nv;
    double *dq = w->dq;
    switch (guess) {
    case MBS_VI_GUESS_GIVEN:
        return;
    case MBS_VI_IG1:
        memcpy(q, w->qk, (size_t)w->nq * sizeof(double));
        return;
    case MBS_VI_IG2:
        for (int k = 0; k < nv; k++) dq[k] = w->dt * w->vk[k];
        break;
    case MBS_VI_IG3:
        mbs_aba_fext(m, d, w->qk, w->vk, w->tau, w->has_fext ? w->fext : NULL, w->t1);
        for (int k = 0; k < nv; k++) dq[k] = w->dt * (w->vk[k] + w->dt * w->t1[k]);
        break;
    }
    mbs_integrate(m, w->qk, dq, q);
}

int mbs_vi_solve(const mbs_model *m, mbs_data *d, mbs_vi *w, const mbs_vi_options *opt, double *q_next,
                 mbs_vi_result *result)
{
    mbs_vi_options def;
    if (!opt) { mbs_vi_default_options(&def); opt = &def; }
    if (!(opt->tol >= 0) || opt->max_iter < 0 || opt->guess < MBS_VI_GUESS_GIVEN || opt->guess > MBS_VI_IG3 ||
        opt->solver < MBS_VI_RIQN || opt->solver > MBS_VI_TREE_NEWTON)
        return MBS_ERR_ARG;
    const int nv = w->nv;
    double *e = w->e, *dq = w->dq;
    mbs_vi_result r = {0, 0, 0, 0, 0};
    int rc = MBS_OK, at_floor = 0, refresh = 1, factored = 0, abi_ready = 0;
    initial_guess(m, d, w, opt->guess, q_next);
    if (opt->solver == MBS_VI_RIQN) mbs_abi_factor(m, d, w->qk);   /* M(q^k): once per step */
    mbs_vi_residual(m, w, q_next, e);
    if (opt->solver == MBS_VI_BROYDEN) {
        /* H = J⁻¹ at the initial guess */
        jacobian_here(m, w, q_next, w->J, nv);
        r.jacobians = 1;
        memset(w->H, 0, (size_t)nv * (size_t)nv * sizeof(double));
        for (int k = 0; k < nv; k++) w->H[k + (size_t)nv * k] = 1;
        if (nv && LAPACKE_dgesv_work(LAPACK_COL_MAJOR, nv, nv, w->J, nv, w->ipiv, w->H, nv) != 0) rc = MBS_ERR_MODEL;
    }
    r.evaluations = 1;
    r.residual = norm2(e, nv);
    if (opt->history && opt->history_cap > 0) opt->history[0] = r.residual;
    while (rc == MBS_OK && !(r.residual <= opt->tol) && r.iterations < opt->max_iter) {
        if (!isfinite(r.residual)) { rc = MBS_ERR_MODEL; break; }
        switch (opt->solver) {
        case MBS_VI_RIQN:
            /* Algorithm 3, line 5: Δq = -Δt M⁻¹(q^k) e by the articulated-body impulse solve */
            memcpy(dq, e, (size_t)nv * sizeof(double));
            mbs_abi_solve(m, d, dq, 1, nv);
            for (int k = 0; k < nv; k++) dq[k] *= -w->dt;
            break;
        case MBS_VI_NEWTON:
            /* Algorithm 1, line 5, with the Jacobian of Algorithm 4 at the current iterate */
            jacobian_here(m, w, q_next, w->J, nv);
            r.jacobians++;
            for (int k = 0; k < nv; k++) dq[k] = -e[k];
            if (LAPACKE_dgesv_work(LAPACK_COL_MAJOR, nv, 1, w->J, nv, w->ipiv, dq, nv) != 0) rc = MBS_ERR_MODEL;
            break;
        case MBS_VI_TREE_NEWTON:
            /* Newton's step with the Jacobian eliminated along the tree in O(n). Forming B_i costs
             * about six DRNEA passes, so the factors are kept while they contract the residual
             * by 4 or more per iteration (a chord step, as cheap as RIQN's) and renewed when not */
            if (refresh || !factored) {
                linearise(m, w, q_next);
                factored = !del_tree_factor(m, &w->tree, w->B, w->Rk, w->pk, w->R1, w->p1);
                r.jacobians++;
            }
            for (int k = 0; k < nv; k++) dq[k] = -e[k];
            if (factored) {
                /* R1, p1 still hold the placements the factors were formed at: the residual does
                 * not touch them, and mbs_vi_begin, which uses them as scratch, comes before the
                 * first refresh of every solve */
                del_tree_solve(m, &w->tree, w->Rk, w->pk, w->R1, w->p1, dq);
                break;
            }
            /* a block D_i singular to round-off (A may still be regular: the elimination pivots
             * only within bodies): this iteration takes RIQN's step, and the next refactors */
            if (!abi_ready) { mbs_abi_factor(m, d, w->qk); abi_ready = 1; }
            mbs_abi_solve(m, d, dq, 1, nv);
            for (int k = 0; k < nv; k++) dq[k] *= w->dt;
            break;
        case MBS_VI_BROYDEN:
            /* Δq = -H e, column by column (H is column-major) */
            memset(dq, 0, (size_t)nv * sizeof(double));
            for (int k = 0; k < nv; k++) {
                const double *Hk = w->H + (size_t)nv * k;
                for (int i = 0; i < nv; i++) dq[i] -= Hk[i] * e[k];
            }
            break;
        }
        if (rc != MBS_OK) break;
        for (int k = 0; k < nv; k++)
            if (!isfinite(dq[k])) rc = MBS_ERR_MODEL;
        if (rc != MBS_OK) break;
        if (stalled(m, dq, q_next)) { at_floor = 1; break; }
        mbs_integrate(m, q_next, dq, q_next);
        r.iterations++;
        if (opt->solver == MBS_VI_BROYDEN) {
            /* good Broyden, inverse form: H += (s - H y) sᵀ H / (sᵀ H y), y = e⁺ - e */
            memcpy(w->e2, e, (size_t)nv * sizeof(double));
            mbs_vi_residual(m, w, q_next, e);
            double *y = w->y, *Hy = w->t1, *sH = w->t2, den = 0;
            for (int k = 0; k < nv; k++) { y[k] = e[k] - w->e2[k]; Hy[k] = 0; }
            for (int k = 0; k < nv; k++) {
                const double *Hk = w->H + (size_t)nv * k;
                double t = 0;
                for (int i = 0; i < nv; i++) {
                    Hy[i] += Hk[i] * y[k];
                    t += dq[i] * Hk[i];
                }
                sH[k] = t;
            }
            for (int k = 0; k < nv; k++) den += dq[k] * Hy[k];
            if (den != 0 && isfinite(den))
                for (int j = 0; j < nv; j++) {
                    double sj = sH[j] / den;
                    for (int i = 0; i < nv; i++) w->H[i + (size_t)nv * j] += (dq[i] - Hy[i]) * sj;
                }
        } else
            mbs_vi_residual(m, w, q_next, e);
        r.evaluations++;
        double previous = r.residual;
        r.residual = norm2(e, nv);
        refresh = !(r.residual <= 0.25 * previous);
        if (opt->history && r.iterations < opt->history_cap) opt->history[r.iterations] = r.residual;
    }
    if (rc == MBS_OK && !isfinite(r.residual)) rc = MBS_ERR_MODEL;
    r.converged = rc == MBS_OK && (r.residual <= opt->tol || at_floor);
    if (result) *result = r;
    return rc;
}
