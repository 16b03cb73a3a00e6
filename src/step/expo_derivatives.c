/* expo_derivatives.c — the Jacobians A = ∂x⁺/∂x and B = ∂x⁺/∂τ of one step of the exponential
 * integrator (Hammoud et al. 2022; equation numbers are the paper's), analytically, for a step
 * its closed form takes in one piece (expo_derivatives.h says which). The expo paper leaves this
 * as future work ("we will need to differentiate the integration scheme, which should be
 * feasible", sec. 7). Everything is differentiated in the inputs z = (δq, δv, δτ), δq in the
 * tangent space, as nv x n3 (or 3c x n3) matrices, n3 = 2nv + the columns of B asked for.
 *
 * The step (expo.c), with qm = integrate(q, h/2 v) (or q) where the dynamics are frozen:
 *   Δp = p(q) − p0, Δṗ = ṗ(q, v) − ṗ0                        the contacts at the start (anchors
 *                                                              placed by the update: st->dw.A0)
 *   J, M, v̇_f = M⁻¹(τ − h), Y = M⁻¹Jᵀ, Υ = J Y (eq. 9),      at (qm, v)
 *   p̈_free = J v̇_f + J̇v (eq. 10)                             the points' classical acceleration
 *   λ̄ = −R [Q₀(S) y_A + h Q₁(S) y_B + h² Q₂(S) y_C],           the averages (23) and (25) in the
 *   λ̄₂ = −2R [Q₁(S) y_A + h Q₂(S) y_B + h² Q₃(S) y_C]          closed form of expo_modal.c:
 *        S = R Υ R, R = K^½, y_A = R(Δp + βΔṗ), y_B = R(Δṗ + ṗ0 + β p̈_free), y_C = R p̈_free,
 *        Q_k(S) the matrix functions of the scalars mbsi_modal_divided_differences gives
 *   v⁺ = v + h (v̇_f + Y λ̄),  q⁺ = integrate(q, h v + h²/2 (v̇_f + Y λ̄₂))   (eqs. 14, 19–20).
 * The derivatives:
 *   - of the start terms: ∂p/∂q (the touching point follows the sphere's centre), ∂ṗ/∂q, J, less
 *     the anchors' (mbsi_contact_anchor_derivatives);
 *   - of the acceleration for held forces, M⁻¹ (∂(Jᵀλ)/∂qm − ∂rnea/∂qm, −∂rnea/∂v, 1): the RNEA
 *     derivatives at v̇_f (Carpentier & Mansard 2018), at v̇_f + Y λ those plus ∂(M Y λ)/∂qm
 *     (mbsi_mass_times_dq: RNEA's q-derivative is affine in q̈), and the point-force terms of the
 *     contact layer (mbsi_point_force_dq);
 *   - of Υ = J M⁻¹Jᵀ: ∂Υ/∂qm_k = (∂J/∂qm_k) Y + ((∂J/∂qm_k) Y)ᵀ − Yᵀ (∂M/∂qm_k) Y, the last from
 *     the subtrees' momenta (mbsi_mass_bilinear_dq);
 *   - of p̈_free: the classical acceleration's derivatives (mbsi_point_acceleration_derivatives)
 *     and J ∂v̇_f;
 *   - of the matrix functions: Daleckii and Krein's formula, for S = V diag(σ) Vᵀ,
 *       ∂f(S)[E] = V (F ∘ (Vᵀ E V)) Vᵀ,   F_ij = (f(σ_i) − f(σ_j))/(σ_i − σ_j), F_ii = f'(σ_i),
 *     whose divided differences are taken whole where the eigenvalues are apart (above 1e-3 of
 *     their scale) and as the mean of the two slopes f' where they are not (equal eigenvalues: a
 *     symmetric robot's feet; off by gap² f''' / 8, 1e-7 of f' at most); f' by central differences
 *     of the closed form in σ (Q_k is an entire function of σ; a relative step of 1e-5 leaves ~1e-10;
 *     forward ones at 1e-8, one evaluation fewer, left the MPC trot and the jump's plans worse in a
 *     build without fused multiply-adds).
 * No allocation; the workspace is carved with expo's. */
#include <math.h>
#include <string.h>

#include "../contact/contact_internal.h"
#include "../dynamics/dynamics_internal.h"
#include "../spatial/spatial.h"
#include "expo_derivatives.h"
#include "expo_modal.h"
#include "symeig.h"
/* after the library headers: cblas.h brings complex.h, whose macro I would rename an identifier */
#include <cblas.h>

/* How many of K's 2n columns (below) are built at a time: all of them while K fits in K_BUDGET
 * doubles (512 KB: up to 12 contacts), fewer beyond, so that the workspace grows as n² and not as
 * n³ (256 contacts, n = 768, would want 3.6 GB for the whole K). */
#define K_BUDGET ((size_t)1 << 16)
static int k_columns(int n)
{
    const size_t np = (size_t)n * (size_t)(n + 1) / 2;
    if (np * 2 * (size_t)n <= K_BUDGET) return n > 0 ? 2 * n : 1;
    return K_BUDGET / np > 0 ? (int)(K_BUDGET / np) : 1;
}

/* K's carve for up to nmax rows of contacts: a block of any n ≤ nmax fits (np(n) k_columns(n) is at
 * most np(nmax) 2 nmax when that fits the budget, else at most the budget or one column). */
static size_t k_size(size_t nmax)
{
    const size_t np = nmax * (nmax + 1) / 2;
    return np * 2 * nmax <= K_BUDGET ? np * 2 * nmax : (np > K_BUDGET ? np : K_BUDGET);
}

void mbsi_expo_dws_layout(mbs_carver *c, mbsi_expo_dws *w, int cmax, int nq, int nv)
{
    size_t n = 3 * (size_t)(cmax > 0 ? cmax : 1), v = (size_t)nv, v3 = 3 * v;
    w->nv = nv;
    w->nq = nq;
    w->nmax = (int)n;
    w->qm = mbsi_carve_doubles(c, (size_t)nq);
    w->dm = mbsi_carve_doubles(c, v);
    w->dqm = mbsi_carve_doubles(c, v * v3);
    w->Jm = mbsi_carve_doubles(c, n * v);
    w->Pm = mbsi_carve_doubles(c, n * v);
    w->Y = mbsi_carve_doubles(c, n * v);
    w->Mi = mbsi_carve_doubles(c, v * v);
    w->U = mbsi_carve_doubles(c, n * n);
    w->S = mbsi_carve_doubles(c, n * n);
    w->V = mbsi_carve_doubles(c, n * n);
    w->lam = mbsi_carve_doubles(c, n);
    w->esc = mbsi_carve_doubles(c, n);
    w->R = mbsi_carve_doubles(c, 3 * n);
    w->dUp = mbsi_carve_doubles(c, n * (n + 1) / 2 * v);
    w->F = mbsi_carve_doubles(c, 4 * n * n);
    w->Sk = mbsi_carve_doubles(c, 2 * n * n);
    w->T = mbsi_carve_doubles(c, n * (2 * n + v));
    w->K = mbsi_carve_doubles(c, k_size(n));
    w->Tk = mbsi_carve_doubles(c, 2 * n * v);
    w->Zb = mbsi_carve_doubles(c, 3 * n * v3);
    /* twice nv x nv each: ∂rnea/∂v right after ∂rnea/∂q, and M⁻¹ times both (one product) */
    w->RQ = mbsi_carve_doubles(c, 2 * v * v);
    w->MiX = mbsi_carve_doubles(c, 2 * v * v);
    double **vv[] = {&w->vf, &w->acc1, &w->acc2};
    for (int k = 0; k < 3; k++) *vv[k] = mbsi_carve_doubles(c, v);
    double **vn[] = {&w->dp, &w->dw, &w->pd0, &w->pdd, &w->pm, &w->lb, &w->lb2};
    for (int k = 0; k < 7; k++) *vn[k] = mbsi_carve_doubles(c, n);
    w->yh = mbsi_carve_doubles(c, 3 * n);
    w->Qv = mbsi_carve_doubles(c, 4 * n);
    w->tk = mbsi_carve_doubles(c, 2 * n);
    double **mz[] = {&w->dDp, &w->dDw, &w->dPd0};
    for (int k = 0; k < 3; k++) *mz[k] = mbsi_carve_doubles(c, n * v3);
    w->dL = mbsi_carve_doubles(c, n * v);
    w->dy = mbsi_carve_doubles(c, 3 * n * v3);
    w->dvf = mbsi_carve_doubles(c, v * v3);
    w->dacc1 = mbsi_carve_doubles(c, 2 * v * v3);   /* and dacc2 right after it: one product adds Y ∂λ̄ to both */
    w->work = mbsi_carve_doubles(c, 18 * (v + 1));
    w->mwork = mbsi_carve_doubles(c, 12 * n * (v + 1) + 13 * (v + 1) + 6 * n);
    double **m3[] = {&w->J3, &w->P3, &w->D3, &w->D3v};
    for (int k = 0; k < 4; k++) *m3[k] = mbsi_carve_doubles(c, 3 * v);
    w->support = mbsi_carve_ints(c, (n / 3) * v);
    w->nsupport = mbsi_carve_ints(c, n / 3);
}

/* out (n x cols, leading dimension n) = R X, R block-diagonal with a symmetric 3 x 3 block per
 * contact (w->R); out may not be X. */
static void r_mul(const double *R, int n, int cols, const double *X, double *out)
{
    for (int c = 0; c < cols; c++)
        for (int b = 0; b < n / 3; b++) {
            const double *x = X + (size_t)n * c + 3 * b;
            double *o = out + (size_t)n * c + 3 * b;
            for (int i = 0; i < 3; i++) o[i] = R[9 * b + i] * x[0] + R[9 * b + i + 3] * x[1] + R[9 * b + i + 6] * x[2];
        }
}

/* out = R X R (n x n); T n² of scratch. */
static void rxr(const double *R, int n, const double *X, double *out, double *T)
{
    r_mul(R, n, n, X, T);   /* R X, then (R (R X)ᵀ)ᵀ = R X R as R and the result's symmetry allow */
    for (int j = 0; j < n; j++)
        for (int i = 0; i < n; i++) out[j + (size_t)n * i] = T[i + (size_t)n * j];
    r_mul(R, n, n, out, T);
    for (int j = 0; j < n; j++)
        for (int i = 0; i < n; i++) out[j + (size_t)n * i] = T[i + (size_t)n * j];
}

/* out (r x ncol, leading dimension r) = α X ∂qm + β out, X r x nv (leading dimension ldx): ∂qm =
 * [D0, h/2 D1, 0] (ncol = 2nv + B's columns) is block-diagonal per joint in each of its blocks
 * (integrate's Jacobians; the identity on one-coordinate joints), so each column of out sums over
 * its joint's dofs only. */
__attribute__((noinline)) static void mul_dqm(const mbs_model *m, const double *restrict dqm, int r, int ncol, double alpha,
                                              const double *restrict X, int ldx, double beta, double *restrict out)
{
    const int nv = m->nv;
    for (int c = 0; c < ncol; c++) {
        double *o = out + (size_t)r * c;
        if (beta == 0) memset(o, 0, (size_t)r * sizeof(double));
        else if (beta != 1) for (int i = 0; i < r; i++) o[i] *= beta;
        if (c >= 2 * nv) continue;
        const mbs_body *b = &m->bodies[m->dof_body[c % nv]];
        for (int k = b->idx_v; k < b->idx_v + b->nv; k++) {
            double g = alpha * dqm[k + (size_t)nv * c];
            if (g == 0) continue;
            const double *x = X + (size_t)ldx * k;
            for (int i = 0; i < r; i++) o[i] += g * x[i];
        }
    }
}

/* Z1 = ∂Δp + β ∂Δṗ and Z2 = ∂Δṗ + ∂ṗ0 + β ∂p̈_free over len entries (y_A's and y_B's derivatives
 * before R). */
__attribute__((noinline)) static void state_derivatives(size_t len, double beta, const double *restrict dp,
                                                        const double *restrict dw, const double *restrict dp0,
                                                        const double *restrict dpdd, double *restrict Z1,
                                                        double *restrict Z2)
{
    for (size_t k = 0; k < len; k++) Z1[k] = dp[k] + beta * dw[k];
    for (size_t k = 0; k < len; k++) Z2[k] = dw[k] + dp0[k] + beta * dpdd[k];
}

/* o = a x + b y + c z over n entries. */
__attribute__((noinline)) static void combine3(int n, const double *restrict x, const double *restrict y,
                                               const double *restrict z, double a, double b, double c,
                                               double *restrict o)
{
    for (int i = 0; i < n; i++) o[i] = x[i] * a + b * y[i] + c * z[i];
}

/* k (packed upper triangle by columns, n (n + 1)/2) = the entries a ≤ b of w uᵀ + u wᵀ halved on
 * the diagonal: w_a u_b + w_b u_a for a < b, w_b u_b for a = b (K's column for a symmetric ∂Υ). */
__attribute__((noinline)) static void packed_sym_outer(int n, const double *restrict wv, const double *restrict uv,
                                                       double *restrict k)
{
    for (int bb = 0; bb < n; bb++) {
        const double wb = wv[bb], ub = uv[bb];
        double *kb = k + (size_t)bb * (size_t)(bb + 1) / 2;
        for (int aa = 0; aa < bb; aa++) kb[aa] = wv[aa] * ub + wb * uv[aa];
        kb[bb] = wb * ub;
    }
}

/* Z1 = Q₀ ∘ a + h Q₁ ∘ b + h² Q₂ ∘ c and Z2 = 2 (Q₁ ∘ a + h Q₂ ∘ b + h² Q₃ ∘ c), column by column
 * (ncol columns of n; Q: Q₀..Q₃, n each). Apart, with every pointer restrict: inside the caller
 * the loop needed more aliasing checks than the vectoriser makes, and ran scalar. */
__attribute__((noinline)) static void averages_in_modes(int n, int ncol, double h, const double *restrict Q,
                                                        const double *restrict A, const double *restrict Bm,
                                                        const double *restrict C, double *restrict Z1, double *restrict Z2)
{
    const double *Q0 = Q, *Q1 = Q + n, *Q2 = Q + 2 * n, *Q3 = Q + 3 * n;
    const double hh = h * h;
    for (int col = 0; col < ncol; col++) {
        const size_t o = (size_t)n * col;
        const double *a = A + o, *b = Bm + o, *c = C + o;
        double *z1 = Z1 + o, *z2 = Z2 + o;
        for (int i = 0; i < n; i++) z1[i] = Q0[i] * a[i] + h * Q1[i] * b[i] + hh * Q2[i] * c[i];
        for (int i = 0; i < n; i++) z2[i] = 2 * (Q1[i] * a[i] + h * Q2[i] * b[i] + hh * Q3[i] * c[i]);
    }
}

/* out (6 rows of n) = below + S yᵀ: a support's velocities for n joint-velocity columns, one dof on. */
__attribute__((noinline)) static void rows_add_dof(int n, const double S[6], const double *restrict y,
                                                   const double *restrict below, double *restrict out)
{
    for (int r = 0; r < 6; r++) {
        const double s = S[r];
        const double *b = below + (size_t)n * r;
        double *o = out + (size_t)n * r;
        for (int c = 0; c < n; c++) o[c] = b[c] + s * y[c];
    }
}

/* D (3 rows of n) = ω_k × u + W × e: a root dof's point-velocity derivative (below), u and the body's
 * angular velocity W in rows of n. */
__attribute__((noinline)) static void rows_root_dq(int n, const double om[3], const double E[3],
                                                   const double *restrict u, const double *restrict W,
                                                   double *restrict D)
{
    const double o0 = om[0], o1 = om[1], o2 = om[2], e0 = E[0], e1 = E[1], e2 = E[2];
    const double *u0 = u, *u1 = u + n, *u2 = u + 2 * n, *W0 = W, *W1 = W + n, *W2 = W + 2 * n;
    for (int c = 0; c < n; c++) D[c] = o1 * u2[c] - o2 * u1[c] + (W1[c] * e2 - W2[c] * e1);
    for (int c = 0; c < n; c++) D[n + c] = o2 * u0[c] - o0 * u2[c] + (W2[c] * e0 - W0[c] * e2);
    for (int c = 0; c < n; c++) D[2 * n + c] = o0 * u1[c] - o1 * u0[c] + (W0[c] * e1 - W1[c] * e0);
}

/* D (3 rows of n) = (S × V) at p + W × P (mbsi_point_velocity_dq for n columns): S × V = (ω_S × v +
 * v_S × w, ω_S × w) =: (l, g), at p: l + g × p; V (6 rows) the velocity from the dof's joint on, W
 * (3 rows) the body's angular velocity, P the touching point's motion for the dof. */
__attribute__((noinline)) static void rows_point_dq(int n, const double S[6], const double p[3], const double P[3],
                                                    const double *restrict V, const double *restrict W,
                                                    double *restrict D)
{
    const double s0 = S[0], s1 = S[1], s2 = S[2], s3 = S[3], s4 = S[4], s5 = S[5];
    const double p0 = p[0], p1 = p[1], p2 = p[2], P0 = P[0], P1 = P[1], P2 = P[2];
    const double *v0 = V, *v1 = V + n, *v2 = V + 2 * n, *w0 = V + 3 * n, *w1 = V + 4 * n, *w2 = V + 5 * n;
    const double *W0 = W, *W1 = W + n, *W2 = W + 2 * n;
    for (int c = 0; c < n; c++) {
        double g1 = s5 * w0[c] - s3 * w2[c], g2 = s3 * w1[c] - s4 * w0[c];
        D[c] = s4 * v2[c] - s5 * v1[c] + (s1 * w2[c] - s2 * w1[c]) + (g1 * p2 - g2 * p1) + (W1[c] * P2 - W2[c] * P1);
    }
    for (int c = 0; c < n; c++) {
        double g0 = s4 * w2[c] - s5 * w1[c], g2 = s3 * w1[c] - s4 * w0[c];
        D[n + c] = s5 * v0[c] - s3 * v2[c] + (s2 * w0[c] - s0 * w2[c]) + (g2 * p0 - g0 * p2) + (W2[c] * P0 - W0[c] * P2);
    }
    for (int c = 0; c < n; c++) {
        double g0 = s4 * w2[c] - s5 * w1[c], g1 = s5 * w0[c] - s3 * w2[c];
        D[2 * n + c] = s3 * v1[c] - s4 * v0[c] + (s0 * w1[c] - s1 * w0[c]) + (g0 * p1 - g1 * p0) + (W0[c] * P1 - W1[c] * P0);
    }
}

/* Q_0..Q_3 at σ and their derivatives in σ (central differences, the comment at the top). */
static void q_and_slope(double sigma, double beta, double h, double scale, double Q[4], double dQ[4])
{
    double qp[4], qm[4], e = 1e-5 * fmax(fabs(sigma), scale);
    mbsi_modal_divided_differences(sigma, beta, h, Q);
    mbsi_modal_divided_differences(sigma + e, beta, h, qp);
    mbsi_modal_divided_differences(sigma - e, beta, h, qm);
    for (int k = 0; k < 4; k++) dQ[k] = (qp[k] - qm[k]) / (2 * e);
}

int mbsi_expo_derivatives(mbsi_expo_dws *w, mbs_stepper *st, double h, const int *act, int na, int midpoint,
                          double beta, int kinematics, double *A, double *B)
{
    mbs_system *s = st->sys;
    const mbs_model *m = s->model;
    mbs_data *d = s->data;
    mbsi_derivatives_ws *dw = &st->dw;
    /* the columns: δq, δv and B's chosen ones of δτ (st->dw: the call's, tc NULL for the first nb) */
    const int *tc = dw->bcols, nb = dw->nbcols;
    const int nv = s->nv, n = 3 * na, n2 = 2 * nv, n3 = n2 + nb;
    const size_t nn = (size_t)nv * (size_t)nv, zn = (size_t)n * (size_t)n3;
    const double *q = s->q, *v = s->v;
    int *sup = w->support;
    /* n x n3 blocks placed one after the other for this n: Z1, Z2 and ∂p̈_free (one product takes
     * the three to ŷ-space), and YW = −Y W (nv x n) */
    double *Z1 = w->Zb, *Z2 = Z1 + zn, *dPdd = Z2 + zn, *YW = w->dL, *dacc2 = w->dacc1 + (size_t)nv * n3;

    /* ---- the contacts at the step's start: Δp, Δṗ, ṗ0 and their derivatives ---- */
    memset(w->dDp, 0, zn * sizeof(double));
    memset(w->dDw, 0, zn * sizeof(double));
    memset(w->dPd0, 0, zn * sizeof(double));
    if (!kinematics) mbs_forward_kinematics(m, d, q, v, NULL);
    mbsi_joint_jacobians_from_placements(m, d);
    for (int a = 0; a < na; a++) {
        const mbs_contact *c = &s->contacts[act[a]];
        sup = w->support + (size_t)nv * a;
        int ns = w->nsupport[a] = mbsi_body_support(m, mbs_frame_body(m, c->frame), sup);
        double ctr[3];
        for (int r = 0; r < 3; r++) {
            ctr[r] = c->p[r] + c->radius * c->normal[r];
            w->dp[3 * a + r] = c->p[r] - c->p0[r];
            w->dw[3 * a + r] = c->dp[r] - c->dp0[r];
            w->pd0[3 * a + r] = c->dp0[r];
        }
        for (int e = 0; e < ns; e++) {
            motion_point_velocity(d->J + 6 * sup[e], c->p, w->J3 + 3 * e);
            motion_point_velocity(d->J + 6 * sup[e], ctr, w->P3 + 3 * e);
        }
        mbsi_support_velocities(d, sup, ns, v, w->work);
        mbsi_point_velocity_dq(m, d, sup, 0, ns, c->p, w->P3, w->work, w->D3);
        for (int e = 0; e < ns; e++)
            for (int r = 0; r < 3; r++) {
                size_t i = (size_t)(3 * a + r);
                w->dDp[i + (size_t)n * sup[e]] = w->P3[3 * e + r];
                w->dDw[i + (size_t)n * sup[e]] = w->D3[3 * e + r];
                w->dDw[i + (size_t)n * (nv + sup[e])] = w->J3[3 * e + r];
            }
        if (!dw->moved[act[a]]) continue;
        const double *A0 = dw->A0 + (size_t)18 * nv * act[a];
        for (int col = 0; col < n2; col++)
            for (int r = 0; r < 3; r++) {
                size_t i = (size_t)(3 * a + r) + (size_t)n * col;
                w->dDp[i] -= A0[r + 9 * col];
                w->dDw[i] -= A0[3 + r + 9 * col];
                w->dPd0[i] = A0[3 + r + 9 * col];
            }
    }

    /* ---- the linearisation point qm and its derivative ---- */
    memset(w->dqm, 0, (size_t)nv * n3 * sizeof(double));
    if (midpoint) {
        for (int k = 0; k < nv; k++) w->dm[k] = 0.5 * h * v[k];
        mbs_integrate(m, q, w->dm, w->qm);
        mbs_dintegrate(m, q, w->dm, MBS_ARG0, dw->D0);
        mbs_dintegrate(m, q, w->dm, MBS_ARG1, dw->D1);
        for (size_t k = 0; k < nn; k++) {
            w->dqm[k] = dw->D0[k];
            w->dqm[nn + k] = 0.5 * h * dw->D1[k];
        }
    } else {
        memcpy(w->qm, q, (size_t)s->nq * sizeof(double));
        for (int k = 0; k < nv; k++) w->dqm[k + (size_t)nv * k] = 1;
    }
    const double *qm = w->qm;

    /* ---- the frozen dynamics at (qm, v): M⁻¹, v̇_f, the points' Jacobians, p̈_free ---- */
    if (mbs_minverse(m, d, qm, w->Mi) != MBS_OK) return MBS_ERR_MODEL;
    mbs_nonlinear_effects(m, d, qm, v, w->acc1);
    for (int k = 0; k < nv; k++) w->acc1[k] = s->tau[k] - w->acc1[k];
    cblas_dgemv(CblasColMajor, CblasNoTrans, nv, nv, 1.0, w->Mi, nv, w->acc1, 1, 0.0, w->vf, 1);
    mbs_forward_kinematics(m, d, qm, v, w->vf);
    for (int a = 0; a < na; a++) {
        const mbs_contact *c = &s->contacts[act[a]];
        double R[9], pf[3], off[3], dpf[3], acc[6];
        mbsi_contact_touch_point(s, c, c->normal, w->pm + 3 * a, R, pf);
        for (int r = 0; r < 3; r++) dpf[r] = w->pm[3 * a + r] - pf[r];
        m3t_mulv(R, dpf, off);
        mbs_frame_classical_acceleration(m, d, c->frame, off, MBS_LOCAL_WORLD_ALIGNED, acc);
        memcpy(w->pdd + 3 * a, acc, 3 * sizeof(double));
    }
    mbsi_joint_jacobians_from_placements(m, d);   /* the placements of the kinematics above, at qm */
    memset(w->Jm, 0, (size_t)n * nv * sizeof(double));
    memset(w->Pm, 0, (size_t)n * nv * sizeof(double));
    for (int a = 0; a < na; a++) {
        const mbs_contact *c = &s->contacts[act[a]];
        int ns = w->nsupport[a];
        sup = w->support + (size_t)nv * a;
        double ctr[3], x[3];
        for (int r = 0; r < 3; r++) ctr[r] = w->pm[3 * a + r] + c->radius * c->normal[r];
        for (int e = 0; e < ns; e++) {
            motion_point_velocity(d->J + 6 * sup[e], w->pm + 3 * a, x);
            for (int r = 0; r < 3; r++) w->Jm[3 * a + r + (size_t)n * sup[e]] = x[r];
            motion_point_velocity(d->J + 6 * sup[e], ctr, x);
            for (int r = 0; r < 3; r++) w->Pm[3 * a + r + (size_t)n * sup[e]] = x[r];
        }
    }
    if (n > 0) {
        cblas_dgemm(CblasColMajor, CblasNoTrans, CblasTrans, nv, n, nv, 1.0, w->Mi, nv, w->Jm, n, 0.0, w->Y, nv);
        cblas_dgemm(CblasColMajor, CblasNoTrans, CblasNoTrans, n, n, nv, 1.0, w->Jm, n, w->Y, nv, 0.0, w->U, n);
    }

    /* ∂v̇_f = M⁻¹ (−∂rnea/∂qm ∂qm − ∂rnea/∂v δv + δτ), at v̇_f; the RNEA derivatives leave the
     * placements and joint columns at qm in d, which what follows reads */
    mbs_rnea_derivatives(m, d, qm, v, w->vf, w->RQ, w->RQ + nn, NULL);
    /* −M⁻¹ [∂rnea/∂qm ∂rnea/∂v] at once; then times ∂qm, sparse (mul_dqm: a dense product cost
     * three times that), less M⁻¹ ∂rnea/∂v in the δv block, and the δτ block B's nb columns tc of M⁻¹ */
    cblas_dgemm(CblasColMajor, CblasNoTrans, CblasNoTrans, nv, 2 * nv, nv, -1.0, w->Mi, nv, w->RQ, nv, 0.0, w->MiX, nv);
    mul_dqm(m, w->dqm, nv, n3, 1.0, w->MiX, nv, 0.0, w->dvf);
    for (size_t k = 0; k < nn; k++) w->dvf[nn + k] += w->MiX[nn + k];
    for (int j = 0; j < nb; j++)
        memcpy(w->dvf + 2 * nn + (size_t)nv * j, w->Mi + (size_t)nv * (tc ? tc[j] : j), (size_t)nv * sizeof(double));
    if (n > 0) {
        /* ---- ∂p̈_free = ∂a_p/∂qm ∂qm + ∂a_p/∂v δv + J ∂v̇_f ---- */
        cblas_dgemm(CblasColMajor, CblasNoTrans, CblasNoTrans, n, n3, nv, 1.0, w->Jm, n, w->dvf, nv, 0.0, dPdd, n);
        for (int a = 0; a < na; a++) {
            int ns = w->nsupport[a];
            sup = w->support + (size_t)nv * a;
            for (int e = 0; e < ns; e++)
                for (int r = 0; r < 3; r++) w->P3[3 * e + r] = w->Pm[3 * a + r + (size_t)n * sup[e]];
            mbsi_point_acceleration_derivatives(m, d, sup, ns, w->pm + 3 * a, w->P3, v, w->vf, w->D3, w->D3v, w->work);
            for (int e = 0; e < ns; e++) {
                const mbs_body *bd = &m->bodies[m->dof_body[sup[e]]];
                const double *D = w->D3 + 3 * e, *Dv = w->D3v + 3 * e, *dq = w->dqm + sup[e];
                double *o = dPdd + 3 * a + (size_t)n * (nv + sup[e]);
                for (int r = 0; r < 3; r++) o[r] += Dv[r];
                /* ∂qm's row of this dof is not zero only in its joint's columns (mul_dqm) */
                for (int half = 0; half < 2; half++)
                    for (int col = half * nv + bd->idx_v; col < half * nv + bd->idx_v + bd->nv; col++) {
                        const double g = dq[(size_t)nv * col];
                        if (g == 0) continue;
                        o = dPdd + 3 * a + (size_t)n * col;
                        for (int r = 0; r < 3; r++) o[r] += D[r] * g;
                    }
            }
        }

        /* ---- ∂Υ/∂qm_k = (∂J/∂qm_k) Y + ((∂J/∂qm_k) Y)ᵀ − Yᵀ (∂M/∂qm_k) Y ---- */
        /* packed: the entries a ≤ b of each symmetric ∂Υ_k, what the contraction below reads */
        const size_t un = (size_t)n * (size_t)n, np = (size_t)n * (size_t)(n + 1) / 2;
        mbsi_mass_bilinear_dq(m, d, w->Y, n, -1.0, w->dUp, w->mwork);
        /* The root body's dofs (a floating base's six) move the whole tree rigidly: for them the
         * point velocity's derivative is ω_k × u + ω × (P_k − v_k − ω_k × p), u = J_a y the point's
         * velocity (Υ's column, U) and ω the body's angular velocity for y, S_k = (v_k, ω_k) the
         * dof's world column, P_k the centre's velocity (the touching point's motion): the
         * general formula (mbsi_point_velocity_dq, S_k × V(y) at p + ω × P_k) rearranged by the
         * Jacobi identity, with e_k = P_k − v_k − ω_k × p the same for every column of Y (zero
         * for a translation). The other dofs take the general formula. */
        double *ek = w->D3v;
        for (int a = 0; a < na; a++) {
            int ns = w->nsupport[a];
            sup = w->support + (size_t)nv * a;
            int nr = 0;
            while (nr < ns && m->bodies[m->dof_body[sup[nr]]].parent < 0) nr++;
            for (int e = 0; e < ns; e++)
                for (int r = 0; r < 3; r++) w->P3[3 * e + r] = w->Pm[3 * a + r + (size_t)n * sup[e]];
            for (int e = 0; e < nr; e++) {
                double rigid[3];
                motion_point_velocity(d->J + 6 * sup[e], w->pm + 3 * a, rigid);
                for (int r = 0; r < 3; r++) ek[3 * e + r] = w->P3[3 * e + r] - rigid[r];
            }
            /* every column c of Y at once, in rows of n (component-major): the support's velocities
             * V_e = Σ_{e' ≥ e} S_e' y_e' (V_0: the body's), then each dof's derivative D (3 rows of
             * n), added to its packed ∂Υ */
            const size_t n6 = (size_t)6 * n;
            double *Vl = w->mwork, *D = Vl + n6 * (size_t)(ns + 1), *yr = D + 3 * (size_t)n;
            memset(Vl + n6 * ns, 0, n6 * sizeof(double));
            for (int e = ns - 1; e >= 0; e--) {
                for (int c = 0; c < n; c++) yr[c] = w->Y[sup[e] + (size_t)nv * c];
                rows_add_dof(n, d->J + 6 * sup[e], yr, Vl + n6 * (e + 1), Vl + n6 * e);
            }
            /* Υ's rows 3a.. (the point's velocity u for each column), for the root's dofs */
            for (int r = 0; r < 3; r++)
                for (int c = 0; c < n; c++) yr[(size_t)n * r + c] = w->U[3 * a + r + (size_t)n * c];
            for (int e = 0; e < ns; e++) {
                if (e < nr) {
                    /* ω_k × u + ω × e_k */
                    rows_root_dq(n, d->J + 6 * sup[e] + 3, ek + 3 * e, yr, Vl + 3 * (size_t)n, D);
                } else {
                    const int k = sup[e], a0 = e - (k - m->bodies[m->dof_body[k]].idx_v);
                    rows_point_dq(n, d->J + 6 * k, w->pm + 3 * a, w->P3 + 3 * e, Vl + n6 * a0, Vl + 3 * (size_t)n, D);
                }
                /* P_k + P_kᵀ, P_k = (∂J/∂qm_k) Y: entry (3a + r, c) and its mirror, one packed entry */
                double *o = w->dUp + np * sup[e];
                for (int r = 0; r < 3; r++) {
                    const int i = 3 * a + r;
                    const double *Dr = D + (size_t)n * r;
                    double *col = o + (size_t)i * (size_t)(i + 1) / 2;   /* (c, i) for c < i: contiguous */
                    for (int c = 0; c < i; c++) col[c] += Dr[c];
                    col[i] += 2 * Dr[i];
                    for (int c = i + 1; c < n; c++) o[i + (size_t)c * (size_t)(c + 1) / 2] += Dr[c];
                }
            }
        }

        /* ---- the closed form and its derivative ---- */
        for (int a = 0; a < na; a++) {
            const mbs_contact *c = &s->contacts[act[a]];
            const mbs_material *mt = mbsi_contact_material(s, c);
            double kn = sqrt(mt->k_normal), kt = sqrt(mt->k_tangent);
            for (int j = 0; j < 3; j++)
                for (int i = 0; i < 3; i++)
                    w->R[9 * a + i + 3 * j] = (kn - kt) * c->normal[i] * c->normal[j] + (i == j ? kt : 0);
        }
        rxr(w->R, n, w->U, w->S, w->T);
        memcpy(w->V, w->S, un * sizeof(double));
        if (mbsi_symeig(n, w->V, w->lam, w->esc) != 0) return MBS_ERR_MODEL;
        /* the scale on which Q_k changes: σ h² ~ 1 or σ h β ~ 1 */
        double scale = 1 / (h * h);
        if (beta > 0) scale = fmin(scale, 1 / (h * beta));
        for (int i = 0; i < n; i++) {
            double Q[4], dQ[4];
            q_and_slope(w->lam[i], beta, h, scale, Q, dQ);
            for (int k = 0; k < 4; k++) {
                w->Qv[k * n + i] = Q[k];
                w->F[(size_t)k * un + i + (size_t)n * i] = dQ[k];
            }
        }
        for (int j = 0; j < n; j++)
            for (int i = 0; i < j; i++) {
                double li = w->lam[i], lj = w->lam[j], gap = li - lj;
                double Fk[4];
                if (fabs(gap) > 1e-3 * fmax(fmax(fabs(li), fabs(lj)), scale)) {
                    for (int k = 0; k < 4; k++) Fk[k] = (w->Qv[k * n + i] - w->Qv[k * n + j]) / gap;
                } else {
                    /* the mean of the two slopes: off the divided difference by gap² f''' / 8 */
                    for (int k = 0; k < 4; k++)
                        Fk[k] = 0.5 * (w->F[(size_t)k * un + i + (size_t)n * i] + w->F[(size_t)k * un + j + (size_t)n * j]);
                }
                for (int k = 0; k < 4; k++) {
                    w->F[(size_t)k * un + i + (size_t)n * j] = Fk[k];
                    w->F[(size_t)k * un + j + (size_t)n * i] = Fk[k];
                }
            }
        /* y_A, y_B, y_C and ŷ = Vᵀ y */
        double *yA = w->tk, *yB = w->tk + n;
        for (int i = 0; i < n; i++) {
            w->T[i] = w->dp[i] + beta * w->dw[i];
            w->T[n + i] = w->dw[i] + w->pd0[i] + beta * w->pdd[i];
            w->T[2 * n + i] = w->pdd[i];
        }
        r_mul(w->R, n, 3, w->T, w->Sk);
        cblas_dgemm(CblasColMajor, CblasTrans, CblasNoTrans, n, 3, n, 1.0, w->V, n, w->Sk, n, 0.0, w->yh, n);
        const double *hA = w->yh, *hB = w->yh + n, *hC = w->yh + 2 * n;
        const double *Q0 = w->Qv, *Q1 = w->Qv + n, *Q2 = w->Qv + 2 * n, *Q3 = w->Qv + 3 * n;
        for (int i = 0; i < n; i++) {
            yA[i] = Q0[i] * hA[i] + h * Q1[i] * hB[i] + h * h * Q2[i] * hC[i];
            yB[i] = -2 * (Q1[i] * hA[i] + h * Q2[i] * hB[i] + h * h * Q3[i] * hC[i]);
            yA[i] = -yA[i];
        }
        /* λ̄ = −R V (…), λ̄₂ = −2 R V (…) */
        cblas_dgemv(CblasColMajor, CblasNoTrans, n, n, 1.0, w->V, n, yA, 1, 0.0, w->Sk, 1);
        r_mul(w->R, n, 1, w->Sk, w->lb);
        cblas_dgemv(CblasColMajor, CblasNoTrans, n, n, 1.0, w->V, n, yB, 1, 0.0, w->Sk, 1);
        r_mul(w->R, n, 1, w->Sk, w->lb2);

        /* ∂y (n x n3 each): R(∂Δp + β∂Δṗ), R(∂Δṗ + ∂ṗ0 + β∂p̈_free), R ∂p̈_free, into ŷ-space */
        double *dyA = w->dy, *dyB = w->dy + zn, *dyC = w->dy + 2 * zn;
        state_derivatives(zn, beta, w->dDp, w->dDw, w->dPd0, dPdd, Z1, Z2);
        /* Vᵀ R = Wᵀ, W = R V */
        double *Wm = w->S;
        r_mul(w->R, n, n, w->V, Wm);
        /* Wᵀ written out (into Υ's storage, no longer read): the product without a transposed
         * operand runs on BLAS's faster small-matrix kernel */
        double *Wt = w->U;
        for (int j = 0; j < n; j++)
            for (int i = 0; i < n; i++) Wt[i + (size_t)n * j] = Wm[j + (size_t)n * i];
        cblas_dgemm(CblasColMajor, CblasNoTrans, CblasNoTrans, n, 3 * n3, n, 1.0, Wt, n, Z1, n, 0.0, dyA, n);
        /* Z1, Z2: the averages' derivatives in ŷ-space before −R V and −R V (Z2 doubled: λ̄₂'s 2) */
        averages_in_modes(n, n3, h, w->Qv, dyA, dyB, dyC, Z1, Z2);
        /* the matrix functions' own change with S, per direction k of qm: with Ŝ_k = Wᵀ ∂Υ_k W, W = R V,
         *   t_k[i] = Σ_j Ŝ_k[i,j] G[i,j] = Σ_ab ∂Υ_k[a,b] W[a,i] U[b,i],   U = W Gᵀ,
         * G1[i,j] = F₀ ŷ_A + h F₁ ŷ_B + h² F₂ ŷ_C (at i, j; G2 with F₁, F₂, F₃): for every k at once,
         * T = Kᵀ ∂Υ with K[(a,b), i] = W[a,i] U[b,i] (n² x n), then Z += T ∂qm. ∂Υ_k being symmetric,
         * the sum runs over a ≤ b, packed (K's entry for a < b is W[a,i] U[b,i] + W[b,i] U[a,i]):
         * half the product's length. */
        /* G1 and G2 stacked (2n x n), U1 and U2 side by side (n x 2n), K's 2n columns (those of
         * G1, then G2's) and the 2n rows of T from one product each */
        double *G = w->Sk, *Um = w->T, *K = w->K, *Tk = w->Tk;
        const int n2r = 2 * n;
        for (int j = 0; j < n; j++)
            for (int t = 0; t < 2; t++) {
                const double *f = w->F + (size_t)t * un + (size_t)n * j;
                combine3(n, f, f + un, f + 2 * un, hA[j], h * hB[j], h * h * hC[j], G + t * n + (size_t)n2r * j);
            }
        cblas_dgemm(CblasColMajor, CblasNoTrans, CblasTrans, n, n2r, n, 1.0, Wm, n, G, n2r, 0.0, Um, n);
        /* K's columns a block at a time (k_columns), each block's rows of T from its product */
        for (int i0 = 0, kc = k_columns(n); i0 < n2r; i0 += kc) {
            const int nk = n2r - i0 < kc ? n2r - i0 : kc;
            for (int ii = i0; ii < i0 + nk; ii++)
                packed_sym_outer(n, Wm + (size_t)n * (ii % n), Um + (size_t)n * ii, K + np * (size_t)(ii - i0));
            cblas_dgemm(CblasColMajor, CblasTrans, CblasNoTrans, nk, nv, (int)np, 1.0, K, (int)np, w->dUp, (int)np, 0.0,
                        Tk + i0, n2r);
        }
        mul_dqm(m, w->dqm, n, n3, 1.0, Tk, n2r, 1.0, Z1);
        mul_dqm(m, w->dqm, n, n3, 2.0, Tk + n, n2r, 1.0, Z2);
        /* ∂λ̄ = −W Z1 and ∂λ̄₂ = −W Z2 enter only as Y ∂λ (below): −Y W once, n x n narrower than Z */
        cblas_dgemm(CblasColMajor, CblasNoTrans, CblasNoTrans, nv, n, n, -1.0, w->Y, nv, Wm, n, 0.0, YW, nv);
    }

    /* ---- the accelerations acc = v̇_f + Y λ and their derivatives, M⁻¹ (∂(Jᵀλ)/∂qm − ∂rnea/∂qm,
     * −∂rnea/∂v, 1) + Y ∂λ: RNEA's derivative in q being affine in q̈, that at acc is v̇_f's less
     * ∂(M Y λ)/∂qm (mbsi_mass_times_dq, on the placements at qm the RNEA derivatives left), so
     * ∂acc = ∂v̇_f + M⁻¹ (∂(Jᵀλ)/∂qm − ∂(M Y λ)/∂qm) ∂qm + Y ∂λ ---- */
    for (int pass = 0; pass < 2; pass++) {
        double *acc = pass ? w->acc2 : w->acc1, *dacc = pass ? dacc2 : w->dacc1;
        memcpy(acc, w->vf, (size_t)nv * sizeof(double));
        memcpy(dacc, w->dvf, (size_t)nv * n3 * sizeof(double));
    }
    if (n > 0) {
        /* each pass's bracket into its half of RQ, then M⁻¹ times both at once */
        for (int pass = 0; pass < 2; pass++) {
            double *acc = pass ? w->acc2 : w->acc1, *rq = w->RQ + (size_t)pass * nn;
            const double *lb = pass ? w->lb2 : w->lb;
            double *x = w->MiX;   /* Y λ */
            cblas_dgemv(CblasColMajor, CblasNoTrans, nv, n, 1.0, w->Y, nv, lb, 1, 0.0, x, 1);
            for (int k = 0; k < nv; k++) acc[k] += x[k];
            mbsi_mass_times_dq(m, d, x, -1.0, rq);
            /* the root joint's dofs (a floating base's six, every contact's first ones) pair with
             * each other alike for every contact: their block from the sums over the contacts of
             * F = [λ; p × λ] and of P_k × λ (mbsi_point_force_dq leaves it out) */
            int nr = 0;
            while (nr < nv && m->bodies[m->dof_body[nr]].parent < 0) nr++;
            double Fs[6] = {0, 0, 0, 0, 0, 0}, *Ps = w->D3;   /* 3 per root dof */
            memset(Ps, 0, 3 * (size_t)nr * sizeof(double));
            for (int a = 0; a < na; a++) {
                int ns = w->nsupport[a];
                sup = w->support + (size_t)nv * a;
                const double *l = lb + 3 * a, *pa = w->pm + 3 * a;
                for (int e = 0; e < ns; e++)
                    for (int r = 0; r < 3; r++) {
                        w->J3[3 * e + r] = w->Jm[3 * a + r + (size_t)n * sup[e]];
                        w->P3[3 * e + r] = w->Pm[3 * a + r + (size_t)n * sup[e]];
                    }
                /* every support starts with the root joint's nr dofs (mbsi_body_support: a tree) */
                mbsi_point_force_dq(m, d, sup, ns, pa, l, w->J3, w->P3, NULL, nr, rq);
                double pxl[3], t[3];
                v3_cross(pa, l, pxl);
                for (int r = 0; r < 3; r++) { Fs[r] += l[r]; Fs[3 + r] += pxl[r]; }
                for (int e = 0; e < nr; e++) {
                    v3_cross(w->P3 + 3 * e, l, t);
                    for (int r = 0; r < 3; r++) Ps[3 * e + r] += t[r];
                }
            }
            for (int e = 0; e < nr; e++) {
                double SkF[6];
                force_cross(d->J + 6 * e, Fs, SkF);
                for (int j = 0; j < nr; j++) {
                    const double *Sj = d->J + 6 * j;
                    rq[j + (size_t)nv * e] += v3_dot(Sj + 3, Ps + 3 * e) - sdot(Sj, SkF);
                }
            }
        }
        cblas_dgemm(CblasColMajor, CblasNoTrans, CblasNoTrans, nv, 2 * nv, nv, 1.0, w->Mi, nv, w->RQ, nv, 0.0, w->MiX, nv);
        mul_dqm(m, w->dqm, nv, n3, 1.0, w->MiX, nv, 1.0, w->dacc1);
        mul_dqm(m, w->dqm, nv, n3, 1.0, w->MiX + nn, nv, 1.0, dacc2);
    }
    /* + Y ∂λ̄ and Y ∂λ̄₂ at once, (−Y W) [Z1 Z2] (dacc1, dacc2 and Z1, Z2 are each one after the other) */
    if (n > 0) cblas_dgemm(CblasColMajor, CblasNoTrans, CblasNoTrans, nv, 2 * n3, n, 1.0, YW, nv, Z1, n, 1.0, w->dacc1, nv);

    /* ---- v⁺ = v + h acc1, q⁺ = integrate(q, h v + h²/2 acc2) ---- */
    for (int col = 0; col < n3; col++)
        for (int r = 0; r < nv; r++) {
            double x = h * w->dacc1[r + (size_t)nv * col] + (col == nv + r);
            if (col < n2) A[nv + r + (size_t)n2 * col] = x;
            else B[nv + r + (size_t)n2 * (col - n2)] = x;
            dacc2[r + (size_t)nv * col] = 0.5 * h * h * dacc2[r + (size_t)nv * col] + (col == nv + r ? h : 0);
        }
    for (int k = 0; k < nv; k++) w->dm[k] = h * v[k] + 0.5 * h * h * w->acc2[k];
    mbsi_derivatives_configuration_rows(st, q, w->dm, dacc2, nb, A, B);
    dw->bchosen = 1;
    return MBS_OK;
}
