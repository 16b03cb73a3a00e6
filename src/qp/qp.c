/* qp.c — the engine's one QP solver: min ½ xᵀHx + gᵀx s.t. Aeq x = beq, Ain x >= bin, by the
 * dual active-set method of D. Goldfarb and A. Idnani, "A numerically stable dual method for
 * solving strictly convex quadratic programs", Math. Programming 27 (1983) 1-33.
 *
 * Why the dual method: it starts from the unconstrained minimum, which needs no feasible
 * point, and every iterate stays optimal for the constraints it holds active, so infeasibility
 * shows as a constraint that no dual step can reach. The numerics are the paper's section 4:
 * H = L Lᵀ once, and the active normals N are kept through J = L⁻ᵀQ and R with JᵀN = [R; 0]
 * (Q orthogonal, R upper triangular), updated by Givens rotations when a constraint enters or
 * leaves, so H⁻¹ is never formed and the step directions are products with J and triangular
 * solves. "Step 1", "step 2(a)" ... below are the paper's steps of its algorithm (section 3). */
#include <float.h>
#include <stdio.h>
#include <math.h>
#include <stdlib.h>
#include <string.h>

#include "qp_internal.h"

/* Relative tolerances, all scale-aware:
 * - a normal whose H⁻¹-norm component outside the span of the active normals is below TOL_DEP
 *   times its H⁻¹-norm is taken as dependent on them (round-off in J is a few ulps of ‖d‖);
 * - a row is violated when aᵀx − b < −TOL_VIOL (Σ|a_j x_j| + |b|), the size of the round-off
 *   of evaluating it, so that a constraint met to round-off is never chased;
 * - a dual direction component counts as positive above TOL_R times the largest one. */
#define TOL_DEP 1e-10
#define TOL_VIOL 1e-11
#define TOL_R 1e-13

struct mbs_qp {
    int nmax, meqmax, minmax;
    int n, meq, min;         /* sizes of the last solve */
    int valid;               /* the last solve succeeded: its active set may warm the next */
    int q;                   /* number of active constraints (equalities first) */
    int nprev;               /* inequalities of the previous solution, for the warm start */
    mbs_qp_info info;
    double *J;               /* n x n, J = L⁻ᵀQ (leading dimension n of the solve) */
    double *R;               /* n x n upper triangular, JᵀN = [R; 0] */
    double *xu;              /* the unconstrained minimum −H⁻¹g */
    double *x;               /* the iterate */
    double *a;               /* the normal of the constraint at hand, contiguous */
    double *d, *z, *r, *w;   /* Jᵀa, the primal and dual directions, R⁻ᵀc */
    double *u;               /* multipliers of the active constraints, by position */
    double *c;               /* b − aᵀxu of the active constraints, by position */
    double *rownorm;         /* ‖row i of Ain‖ */
    double *lam_eq, *lam_in; /* the multipliers of the last solution, by row */
    int *act;                /* row of each active position (equalities at 0 .. meq−1) */
    int *pos;                /* active position of each inequality, −1 when inactive */
    int *ineq;               /* the active inequalities of the last solution (mbs_qp_active) */
};

/* The one layout of the solver's block: counted with no block, carved with one. */
static void layout(mbs_qp *qp, mbs_carver *cv)
{
    size_t n = (size_t)qp->nmax, me = (size_t)qp->meqmax, mi = (size_t)qp->minmax;
    size_t nc = n + 1;       /* positions: at most n independent constraints, one more in transit */
    qp->J = mbsi_carve_doubles(cv, n * n);
    qp->R = mbsi_carve_doubles(cv, n * n);
    qp->xu = mbsi_carve_doubles(cv, n);
    qp->x = mbsi_carve_doubles(cv, n);
    qp->a = mbsi_carve_doubles(cv, n);
    qp->d = mbsi_carve_doubles(cv, n);
    qp->z = mbsi_carve_doubles(cv, n);
    qp->r = mbsi_carve_doubles(cv, nc);
    qp->w = mbsi_carve_doubles(cv, nc);
    qp->u = mbsi_carve_doubles(cv, nc);
    qp->c = mbsi_carve_doubles(cv, nc);
    qp->rownorm = mbsi_carve_doubles(cv, mi);
    qp->lam_eq = mbsi_carve_doubles(cv, me);
    qp->lam_in = mbsi_carve_doubles(cv, mi);
    qp->act = mbsi_carve_ints(cv, nc);
    qp->pos = mbsi_carve_ints(cv, mi);
    qp->ineq = mbsi_carve_ints(cv, n);
}

mbs_qp *mbs_qp_new(int n, int meq, int min, mbs_error *err)
{
    if (n < 1 || meq < 0 || min < 0) {
        mbsi_fail(err, MBS_ERR_ARG, "mbs_qp_new: sizes n = %d, meq = %d, min = %d: need n >= 1, meq >= 0, min >= 0",
                  n, meq, min);
        return NULL;
    }
    if ((size_t)n > ((size_t)1 << 24) || meq > (1 << 28) || min > (1 << 28)) {
        mbsi_fail(err, MBS_ERR_ARG, "mbs_qp_new: sizes n = %d, meq = %d, min = %d are too large for a dense solver",
                  n, meq, min);
        return NULL;
    }
    mbs_qp proto = {.nmax = n, .meqmax = meq, .minmax = min};
    mbs_carver cv = {0};
    mbsi_carve(&cv, sizeof(mbs_qp));     /* the struct heads the block, in both passes */
    layout(&proto, &cv);
    if (!mbsi_carver_alloc(&cv)) {
        mbsi_fail(err, MBS_ERR_NOMEM, "mbs_qp_new: no memory for a solver of %d variables, %d + %d constraints",
                  n, meq, min);
        return NULL;
    }
    mbs_qp *qp = mbsi_carve(&cv, sizeof(mbs_qp));
    *qp = proto;
    layout(qp, &cv);
    return qp;
}

void mbs_qp_free(mbs_qp *qp)
{
    free(qp);
}

const mbs_qp_info *mbs_qp_last_info(const mbs_qp *qp)
{
    return &qp->info;
}

const int *mbs_qp_active(const mbs_qp *qp)
{
    return qp->ineq;
}

void mbs_qp_multipliers(const mbs_qp *qp, double *lambda_eq, double *lambda_in)
{
    if (lambda_eq) memcpy(lambda_eq, qp->lam_eq, (size_t)qp->meq * sizeof(double));
    if (lambda_in) memcpy(lambda_in, qp->lam_in, (size_t)qp->min * sizeof(double));
}

/* ---- dense pieces ---------------------------------------------------------------------- */

/* J = L⁻ᵀ from the Cholesky factor of H (lower triangle read), the paper's step 0. Returns −1,
 * or the column whose pivot is not safely positive: a pivot below n ε max Hᵢᵢ is round-off, and
 * J built on it would be noise. L is formed in R's storage (free at this point). */
static int factor(mbs_qp *qp, int n, const double *H)
{
    double *L = qp->R, *J = qp->J;
    double hmax = 0;
    for (int i = 0; i < n; i++) hmax = fmax(hmax, fabs(H[i + (size_t)n * i]));
    for (int j = 0; j < n; j++)
        for (int i = j; i < n; i++) L[i + (size_t)n * j] = H[i + (size_t)n * j];
    int bad = mbsi_cholesky(L, n, n, n * DBL_EPSILON * hmax);
    if (bad >= 0) return bad;
    /* Lᵀ J = I column by column: J is upper triangular */
    memset(J, 0, (size_t)n * n * sizeof(double));
    for (int j = 0; j < n; j++) {
        double *col = J + (size_t)n * j;
        for (int i = j; i >= 0; i--) {
            double s = i == j ? 1.0 : 0.0;
            for (int k = i + 1; k <= j; k++) s -= L[k + (size_t)n * i] * col[k];
            col[i] = s / L[i + (size_t)n * i];
        }
    }
    return -1;
}

/* Rotation (c, s) with [c s; −s c] [f; h] = [ρ; 0], ρ = hypot(f, h) >= 0. */
static void givens(double f, double h, double *c, double *s, double *rho)
{
    if (h == 0) { *c = 1; *s = 0; *rho = f; return; }
    double t = hypot(f, h);
    *c = f / t; *s = h / t; *rho = t;
}

/* Columns i and j of the n x n J (leading dimension n) rotated like the pair (f, h). */
static void rotate_cols(double *J, int n, int i, int j, double c, double s)
{
    double *a = J + (size_t)n * i, *b = J + (size_t)n * j;
    for (int k = 0; k < n; k++) {
        double t = a[k];
        a[k] = c * t + s * b[k];
        b[k] = -s * t + c * b[k];
    }
}

/* d = Jᵀa; returns ‖d‖ and, through d2, the norm of its part d[q..n−1] outside the active span. */
static double project(mbs_qp *qp, int n, int q, double *d2)
{
    const double *J = qp->J, *a = qp->a;
    double all = 0, out = 0;
    for (int k = 0; k < n; k++) {
        const double *col = J + (size_t)n * k;
        double s = 0;
        for (int i = 0; i < n; i++) s += col[i] * a[i];
        qp->d[k] = s;
        all += s * s;
        if (k >= q) out += s * s;
    }
    *d2 = sqrt(out);
    return sqrt(all);
}

/* The normal in qp->a (d = Jᵀa from project) enters the active set at position q: rotations
 * zero d[q+1..n−1] from the bottom up, each applied to J's columns, and d[0..q] becomes R's
 * column q (the paper's section 4.1). */
static void add_normal(mbs_qp *qp, int n, int q)
{
    double *d = qp->d, *R = qp->R;
    for (int j = n - 1; j > q; j--) {
        double c, s, rho;
        givens(d[j - 1], d[j], &c, &s, &rho);
        if (s == 0) continue;
        d[j - 1] = rho;
        d[j] = 0;
        rotate_cols(qp->J, n, j - 1, j, c, s);
    }
    for (int i = 0; i <= q; i++) R[i + (size_t)n * q] = d[i];
}

/* Active position k (an inequality) leaves: R's later columns shift left and the Hessenberg
 * band this leaves is zeroed by rotations of rows j, j+1, applied to J's columns j, j+1 (the
 * paper's section 4.2). Positions, multipliers and right-hand sides shift with them. */
static void drop_position(mbs_qp *qp, int n, int k)
{
    double *R = qp->R;
    int q = qp->q;
    qp->pos[qp->act[k]] = -1;
    for (int j = k; j < q - 1; j++) {
        memcpy(R + (size_t)n * j, R + (size_t)n * (j + 1), (size_t)(j + 2) * sizeof(double));
        qp->act[j] = qp->act[j + 1];
        qp->u[j] = qp->u[j + 1];
        qp->c[j] = qp->c[j + 1];
        qp->pos[qp->act[j]] = j;
    }
    for (int j = k; j < q - 1; j++) {
        double c, s, rho;
        givens(R[j + (size_t)n * j], R[j + 1 + (size_t)n * j], &c, &s, &rho);
        R[j + (size_t)n * j] = rho;
        R[j + 1 + (size_t)n * j] = 0;
        if (s == 0) continue;
        for (int col = j + 1; col < q - 1; col++) {
            double *rc = R + (size_t)n * col, t = rc[j];
            rc[j] = c * t + s * rc[j + 1];
            rc[j + 1] = -s * t + c * rc[j + 1];
        }
        rotate_cols(qp->J, n, j, j + 1, c, s);
    }
    qp->q = q - 1;
}

/* The minimum on the active set, taken as equalities, straight from the factors:
 * x = xu + J₁w, u = R⁻¹w with w = R⁻ᵀ(b_A − N_Aᵀxu), since N_A = L Q₁ R. Recomputing it after
 * each addition, instead of only accumulating the steps of 2(c), keeps x on its active
 * constraints to round-off however many steps were taken. */
static void active_minimum(mbs_qp *qp, int n)
{
    const double *R = qp->R;
    int q = qp->q;
    double *w = qp->w, *u = qp->u, *x = qp->x;
    for (int i = 0; i < q; i++) {
        double s = qp->c[i];
        for (int k = 0; k < i; k++) s -= R[k + (size_t)n * i] * w[k];
        w[i] = s / R[i + (size_t)n * i];
    }
    memcpy(x, qp->xu, (size_t)n * sizeof(double));
    for (int i = 0; i < q; i++) {
        const double *col = qp->J + (size_t)n * i;
        for (int k = 0; k < n; k++) x[k] += col[k] * w[i];
    }
    for (int i = q - 1; i >= 0; i--) {
        double s = w[i];
        for (int k = i + 1; k < q; k++) s -= R[i + (size_t)n * k] * u[k];
        u[i] = s / R[i + (size_t)n * i];
    }
}

/* Row i of a rows x n column-major matrix (leading dimension rows) into qp->a. */
static void load_row(mbs_qp *qp, int n, const double *A, int rows, int i)
{
    for (int j = 0; j < n; j++) qp->a[j] = A[i + (size_t)rows * j];
}

static double dot(int n, const double *a, const double *b)
{
    double s = 0;
    for (int i = 0; i < n; i++) s += a[i] * b[i];
    return s;
}

static int all_finite(size_t k, const double *v)
{
    for (size_t i = 0; i < k; i++)
        if (!isfinite(v[i])) return 0;
    return 1;
}

/* "{3, 7, 12}": the active inequalities, for a message. */
static void active_list(const mbs_qp *qp, int meq, char *buf, size_t size)
{
    size_t used = 0;
    int shown = 0;
    buf[0] = 0;
    for (int j = meq; j < qp->q && used + 24 < size; j++, shown++)
        used += (size_t)snprintf(buf + used, size - used, "%s%d", shown ? ", " : "", qp->act[j]);
    if (qp->q - meq > shown) snprintf(buf + used, size - used, ", ...");
}

/* ---- the solve -------------------------------------------------------------------------- */

static int solve(mbs_qp *qp, int n, const double *H, const double *g, int meq, const double *Aeq,
                 const double *beq, int min, const double *Ain, const double *bin, int warm, mbs_error *err)
{
    int *it = &qp->info.iterations, cap = 100 + 10 * (n + meq + min);
    if (!all_finite((size_t)n * n, H) || !all_finite((size_t)n, g) || !all_finite((size_t)meq * n, Aeq)
        || !all_finite((size_t)meq, beq) || !all_finite((size_t)min * n, Ain) || !all_finite((size_t)min, bin))
        return mbsi_fail(err, MBS_ERR_NUMERIC, "mbs_qp_solve: an entry of H, g, Aeq, beq, Ain or bin is not finite");

    /* step 0: H = LLᵀ, J = L⁻ᵀ, x = −H⁻¹g = −J Jᵀ g */
    int bad = factor(qp, n, H);
    if (bad >= 0)
        return mbsi_fail(err, MBS_ERR_NUMERIC,
                         "mbs_qp_solve: H is not positive definite (Cholesky pivot %d is not safely positive)", bad);
    for (int k = 0; k < n; k++) qp->d[k] = dot(n, qp->J + (size_t)n * k, g);
    for (int i = 0; i < n; i++) {
        double s = 0;
        for (int k = i; k < n; k++) s += qp->J[i + (size_t)n * k] * qp->d[k];
        qp->xu[i] = -s;
    }
    for (int i = 0; i < min; i++) {
        load_row(qp, n, Ain, min, i);
        qp->rownorm[i] = sqrt(dot(n, qp->a, qp->a));
        qp->pos[i] = -1;
    }
    qp->q = 0;

    /* the equalities enter first and never leave: their multipliers have no sign (the paper's
     * remark on equality constraints, section 3) */
    for (int i = 0; i < meq; i++) {
        load_row(qp, n, Aeq, meq, i);
        double d2, dn = project(qp, n, qp->q, &d2);
        if (!(d2 > TOL_DEP * dn))
            return mbsi_fail(err, MBS_ERR_NUMERIC,
                             dn == 0 ? "mbs_qp_solve: equality %d: its row of Aeq is zero"
                                     : "mbs_qp_solve: equality %d: its row of Aeq is linearly dependent on the "
                                       "equalities before it (remove the redundant rows)", i);
        add_normal(qp, n, qp->q);
        qp->act[qp->q] = i;
        qp->c[qp->q] = beq[i] - dot(n, qp->a, qp->xu);
        qp->q++;
    }

    /* warm start: the previous active inequalities enter as equalities (any now dependent on
     * those already in is left out), then while one has a negative multiplier the most negative
     * leaves. What remains is an S-pair (x optimal on its active set with u >= 0), which is all
     * that step 1 requires of its starting point, so the usual iterations follow unchanged. */
    if (warm) {
        for (int j = 0; j < qp->nprev; j++) {
            int i = qp->ineq[j];
            load_row(qp, n, Ain, min, i);
            double d2, dn = project(qp, n, qp->q, &d2);
            if (!(d2 > TOL_DEP * dn)) continue;
            add_normal(qp, n, qp->q);
            qp->act[qp->q] = i;
            qp->pos[i] = qp->q;
            qp->c[qp->q] = bin[i] - dot(n, qp->a, qp->xu);
            qp->q++;
        }
        for (;;) {
            active_minimum(qp, n);
            int k = -1;
            double worst = 0;
            for (int j = meq; j < qp->q; j++)
                if (qp->u[j] < worst) { worst = qp->u[j]; k = j; }
            if (k < 0) break;
            drop_position(qp, n, k);
            (*it)++;
        }
    } else {
        active_minimum(qp, n);
    }
    qp->valid = 0;
    for (int j = meq; j < qp->q; j++) qp->u[j] = fmax(qp->u[j], 0.0);

    double *x = qp->x, *d = qp->d, *z = qp->z, *r = qp->r, *u = qp->u;
    for (;;) {
        /* step 1: the most violated inequality, measured by distance (violation / ‖row‖) so that
         * a row's scaling does not decide; none violated: x is optimal */
        int p = -1;
        double most = 0;
        for (int i = 0; i < min; i++) {
            if (qp->pos[i] >= 0) continue;
            double s = -bin[i], scale = fabs(bin[i]);
            for (int j = 0; j < n; j++) {
                double t = Ain[i + (size_t)min * j] * x[j];
                s += t;
                scale += fabs(t);
            }
            if (!(s < -TOL_VIOL * scale)) continue;
            double dist = qp->rownorm[i] > 0 ? -s / qp->rownorm[i] : HUGE_VAL;
            if (dist > most || p < 0) { most = dist; p = i; }
        }
        if (p < 0) break;
        load_row(qp, n, Ain, min, p);
        double up = 0;        /* u⁺ of the entering constraint */
        for (;;) {
            if (++*it > cap)
                return mbsi_fail(err, MBS_ERR_NUMERIC,
                                 "mbs_qp_solve: no solution after %d active-set changes (inequality %d keeps "
                                 "entering: a degenerate problem cycling on round-off)", cap, p);
            /* step 2(a): z = J₂J₂ᵀn⁺ (primal direction), r = R⁻¹J₁ᵀn⁺ (dual direction) */
            int q = qp->q;
            double d2, dn = project(qp, n, q, &d2);
            int dependent = !(d2 > TOL_DEP * dn);
            memset(z, 0, (size_t)n * sizeof(double));
            if (!dependent)
                for (int k = q; k < n; k++) {
                    const double *col = qp->J + (size_t)n * k;
                    for (int i = 0; i < n; i++) z[i] += col[i] * d[k];
                }
            double rmax = 0;
            for (int i = q - 1; i >= 0; i--) {
                double s = d[i];
                for (int k = i + 1; k < q; k++) s -= qp->R[i + (size_t)n * k] * r[k];
                r[i] = s / qp->R[i + (size_t)n * i];
                if (i >= meq) rmax = fmax(rmax, r[i]);
            }
            /* step 2(b): the partial step t1 (the first active inequality whose multiplier
             * reaches zero) and the full step t2 (the entering constraint met) */
            double t1 = HUGE_VAL;
            int k = -1;
            for (int j = meq; j < q; j++)
                if (r[j] > TOL_R * rmax && u[j] / r[j] < t1) { t1 = u[j] / r[j]; k = j; }
            double sp = dot(n, qp->a, x) - bin[p];
            double t2 = dependent ? HUGE_VAL : fmax(-sp / (d2 * d2), 0.0);   /* zᵀn⁺ = ‖J₂ᵀn⁺‖² */
            /* step 2(c) */
            if (k < 0 && dependent) {
                char list[160];
                active_list(qp, meq, list, sizeof list);
                return mbsi_fail(err, MBS_ERR_INFEASIBLE,
                                 "mbs_qp_solve: the constraints admit no x: inequality %d (row %d of Ain) cannot "
                                 "hold together with the equalities and the inequalities {%s}", p, p, list);
            }
            double t = fmin(t1, t2);
            for (int j = 0; j < q; j++) u[j] -= t * r[j];
            up += t;
            if (!dependent)
                for (int i = 0; i < n; i++) x[i] += t * z[i];
            if (t2 <= t1) {
                /* full step: p enters and x is the minimum on the new active set */
                add_normal(qp, n, q);
                qp->act[q] = p;
                qp->pos[p] = q;
                qp->c[q] = bin[p] - dot(n, qp->a, qp->xu);
                u[q] = up;
                qp->q = q + 1;
                active_minimum(qp, n);
                for (int j = meq; j < qp->q; j++) u[j] = fmax(u[j], 0.0);
                break;
            }
            /* partial step: constraint k leaves with its multiplier at zero; back to 2(a) */
            u[k] = 0;
            drop_position(qp, n, k);
        }
    }

    for (int i = 0; i < n; i++)
        if (!isfinite(x[i]))
            return mbsi_fail(err, MBS_ERR_NUMERIC, "mbs_qp_solve: the solution is not finite (x[%d])", i);
    return MBS_OK;
}

int mbs_qp_solve(mbs_qp *qp, int n, const double *H, const double *g, int meq, const double *Aeq,
                 const double *beq, int min, const double *Ain, const double *bin, int warm, double *x,
                 mbs_error *err)
{
    if (!qp) return mbsi_fail(err, MBS_ERR_ARG, "mbs_qp_solve: no solver");
    qp->info = (mbs_qp_info){0, 0, 0};
    if (n < 1 || n > qp->nmax || meq < 0 || meq > qp->meqmax || min < 0 || min > qp->minmax) {
        qp->valid = 0;
        qp->n = qp->meq = qp->min = 0;
        return mbsi_fail(err, MBS_ERR_ARG,
                         "mbs_qp_solve: sizes n = %d, meq = %d, min = %d: the solver was made for 1..%d, 0..%d, 0..%d",
                         n, meq, min, qp->nmax, qp->meqmax, qp->minmax);
    }
    const char *missing = !H ? "H" : !g ? "g" : !x ? "x" : meq && !Aeq ? "Aeq" : meq && !beq ? "beq"
                        : min && !Ain ? "Ain" : min && !bin ? "bin" : NULL;
    if (missing) {
        qp->valid = 0;
        qp->n = qp->meq = qp->min = 0;
        return mbsi_fail(err, MBS_ERR_ARG, "mbs_qp_solve: %s is NULL", missing);
    }
    int warm_ok = warm && qp->valid && qp->n == n && qp->meq == meq && qp->min == min;
    if (!warm_ok) qp->nprev = 0;
    int rc = solve(qp, n, H, g, meq, Aeq, beq, min, Ain, bin, warm_ok, err);
    qp->n = n;
    qp->meq = meq;
    qp->min = min;
    memset(qp->lam_eq, 0, (size_t)meq * sizeof(double));
    memset(qp->lam_in, 0, (size_t)min * sizeof(double));
    if (rc != MBS_OK) {
        int iterations = qp->info.iterations;
        qp->info = (mbs_qp_info){iterations, 0, 0};
        qp->nprev = 0;
        qp->valid = 0;
        return rc;
    }
    int na = 0;
    for (int j = 0; j < qp->q; j++) {
        if (j < meq) qp->lam_eq[qp->act[j]] = qp->u[j];
        else { qp->lam_in[qp->act[j]] = qp->u[j]; qp->ineq[na++] = qp->act[j]; }
    }
    qp->nprev = na;
    qp->valid = 1;
    double f = 0;
    for (int j = 0; j < n; j++) {
        double hx = 0;
        for (int i = 0; i < n; i++) hx += H[i + (size_t)n * j] * qp->x[i];
        f += qp->x[j] * (0.5 * hx + g[j]);
    }
    qp->info.nactive = na;
    qp->info.objective = f;
    memcpy(x, qp->x, (size_t)n * sizeof(double));
    return MBS_OK;
}

void mbsi_qp_state(mbs_qp *qp, mbsi_state *s)
{
    if (!qp) return;
    mbsi_state_ints(s, "qp.sizes", &qp->n, 3);
    mbsi_state_ints(s, "qp.valid", &qp->valid, 1);
    mbsi_state_ints(s, "qp.nprev", &qp->nprev, 1);
    mbsi_state_bytes(s, "qp.info", &qp->info, sizeof qp->info);
    mbsi_state_ints(s, "qp.ineq", qp->ineq, (size_t)qp->nmax);
    mbsi_state_doubles(s, "qp.x", qp->x, (size_t)qp->nmax);
    mbsi_state_doubles(s, "qp.lam_eq", qp->lam_eq, (size_t)qp->meqmax);
    mbsi_state_doubles(s, "qp.lam_in", qp->lam_in, (size_t)qp->minmax);
}
