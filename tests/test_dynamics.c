/* test_dynamics.c — identities between the Featherstone algorithms on random trees:
 * RNEA∘ABA = id, CRBA columns from RNEA, M SPD and its solvers against LAPACK, external
 * forces through Jacobians, energy balance, frame Jacobians and drift against finite
 * differences. */
#include <lapacke.h>
#include <math.h>
#include <stdlib.h>

#include "../src/dynamics/dynamics_internal.h"
#include "check.h"
#include "testmodels.h"

#define NTREES 12
static const int sizes[NTREES] = {1, 2, 3, 5, 8, 13, 4, 7, 10, 16, 24, 31};

typedef struct ctx {
    mbs_model *m;
    mbs_data *d;
    int nq, nv;
    double *q, *v, *a, *tau, *x, *y, *M, *M2;
} ctx;

static ctx make(int k)
{
    ctx c;
    c.m = tm_random_tree(sizes[k], k % 2 == 0, 1000 + (unsigned long long)k);
    c.d = mbs_data_new(c.m);
    c.nq = mbs_model_nq(c.m);
    c.nv = mbs_model_nv(c.m);
    size_t nv = (size_t)c.nv, nq = (size_t)c.nq;
    c.q = calloc(nq, sizeof(double));
    c.v = calloc(nv, sizeof(double));
    c.a = calloc(nv, sizeof(double));
    c.tau = calloc(nv, sizeof(double));
    c.x = calloc(nv * nv + nq, sizeof(double));
    c.y = calloc(nv * nv + nq, sizeof(double));
    c.M = calloc(nv * nv, sizeof(double));
    c.M2 = calloc(nv * nv, sizeof(double));
    unsigned long long s = 77 + (unsigned long long)k;
    tm_random_state(c.m, &s, c.q, c.v, c.a, c.tau);
    return c;
}

static void drop(ctx *c)
{
    free(c->q); free(c->v); free(c->a); free(c->tau); free(c->x); free(c->y); free(c->M); free(c->M2);
    mbs_data_free(c->d);
    mbs_model_free(c->m);
}

static void test_rnea_aba_identity(void)
{
    for (int k = 0; k < NTREES; k++) {
        ctx c = make(k);
        mbs_aba(c.m, c.d, c.q, c.v, c.tau, c.x);
        mbs_rnea(c.m, c.d, c.q, c.v, c.x, c.y);
        CHECK_CLOSE(c.y, c.tau, c.nv, 1e-10, "rnea(aba(tau)) = tau");
        drop(&c);
    }
}

static void test_crba_columns(void)
{
    for (int k = 0; k < NTREES; k++) {
        ctx c = make(k);
        mbs_crba(c.m, c.d, c.q, c.M);
        double *g = c.y, *e = c.a, *zero = c.v, *col = c.x;
        mbs_gravity(c.m, c.d, c.q, g);
        for (int j = 0; j < c.nv; j++) zero[j] = 0;
        for (int i = 0; i < c.nv; i++) {
            for (int j = 0; j < c.nv; j++) e[j] = (i == j);
            mbs_rnea(c.m, c.d, c.q, zero, e, col);
            for (int j = 0; j < c.nv; j++) col[j] -= g[j];
            CHECK_CLOSE(c.M + (size_t)c.nv * i, col, c.nv, 1e-11, "M column = rnea(q,0,e_i) - g");
        }
        double asym = 0;
        for (int i = 0; i < c.nv; i++)
            for (int j = 0; j < c.nv; j++) asym = fmax(asym, fabs(c.M[i + c.nv * j] - c.M[j + c.nv * i]));
        CHECK(asym == 0, "M not exactly symmetric: %g", asym);
        /* the path into the factorisation in place writes M's tree entries of the lower triangle,
         * (r, j) with r in j's subtree, the same values, and nothing else */
        int nv = c.nv, wrong = 0, touched = 0;
        /* a free-flyer root's six columns are its composite forces, written whole */
        int direct = c.m->bodies[0].type == MBS_JOINT_FREEFLYER && c.m->bodies[0].nv_subtree == nv;
        for (int i = 0; i < nv * nv; i++) c.M2[i] = NAN;
        mbsi_crba_tree_lower(c.m, c.d, c.q, c.M2);
        for (int j = 0; j < nv; j++)
            for (int r = 0; r < nv; r++) {
                double x = c.M2[r + (size_t)nv * j];
                if (r >= j && r < c.m->dof_end[j]) wrong += !(x == c.M[r + (size_t)nv * j]);
                else touched += !isnan(x) && !(direct && j < 6);
            }
        CHECK(wrong == 0, "tree %d: %d tree entries of the lower triangle differ from mbs_crba's", k, wrong);
        CHECK(touched == 0, "tree %d: %d entries off the tree written", k, touched);
        memcpy(c.M2, c.M, sizeof(double) * (size_t)c.nv * c.nv);
        CHECK(LAPACKE_dpotrf(LAPACK_COL_MAJOR, 'L', c.nv, c.M2, c.nv) == 0, "M not positive definite");
        drop(&c);
    }
}

static void test_solvers_against_lapack(void)
{
    for (int k = 0; k < NTREES; k++) {
        ctx c = make(k);
        int nv = c.nv, nrhs = 3;
        double *B = calloc((size_t)nv * nrhs, sizeof(double)), *X = calloc((size_t)nv * nrhs, sizeof(double));
        unsigned long long s = 5;
        for (int i = 0; i < nv * nrhs; i++) B[i] = tm_uniform(&s, -1, 1);
        mbs_crba(c.m, c.d, c.q, c.M);
        memcpy(c.M2, c.M, sizeof(double) * (size_t)nv * nv);
        memcpy(X, B, sizeof(double) * (size_t)nv * nrhs);
        CHECK(LAPACKE_dposv(LAPACK_COL_MAJOR, 'L', nv, nrhs, c.M2, nv, X, nv) == 0, "dposv failed");
        /* LTDL */
        double *Y = calloc((size_t)nv * nrhs, sizeof(double));
        memcpy(Y, B, sizeof(double) * (size_t)nv * nrhs);
        CHECK(mbs_ltdl(c.m, c.d, c.M) == MBS_OK, "ltdl failed");
        mbs_ltdl_solve(c.m, c.d, Y, nrhs, nv);
        CHECK_CLOSE(Y, X, nv * nrhs, 1e-9, "LTDL solve = LAPACK solve");
        /* ABI, several columns at once and one at a time */
        memcpy(Y, B, sizeof(double) * (size_t)nv * nrhs);
        mbs_abi_factor(c.m, c.d, c.q);
        mbs_abi_solve(c.m, c.d, Y, nrhs, nv);
        CHECK_CLOSE(Y, X, nv * nrhs, 1e-9, "ABI solve = LAPACK solve");
        mbs_abi(c.m, c.d, c.q, B, Y);
        CHECK_CLOSE(Y, X, nv, 1e-9, "mbs_abi = LAPACK solve");
        /* the row-major solve in its two halves, Y = L⁻ᵀB then L⁻¹D⁻¹Y, and the product
         * Bᵀ M⁻¹ B = Yᵀ D⁻¹ Y of the first half alone */
        double *R = calloc((size_t)nv * nrhs, sizeof(double)), *BtX = calloc(nrhs * nrhs, sizeof(double));
        double *YDY = calloc(nrhs * nrhs, sizeof(double));
        for (int i = 0; i < nv; i++)
            for (int j = 0; j < nrhs; j++) R[nrhs * i + j] = B[i + (size_t)nv * j];
        CHECK(mbs_ltdl(c.m, c.d, c.M) == MBS_OK, "ltdl failed");
        mbsi_ltdl_solve_rows_lt(c.m, c.d, R, nrhs, 0);
        for (int i = 0; i < nrhs; i++)
            for (int j = 0; j < nrhs; j++)
                for (int r = 0; r < nv; r++) {
                    BtX[i + nrhs * j] += B[r + (size_t)nv * i] * X[r + (size_t)nv * j];
                    YDY[i + nrhs * j] += R[nrhs * r + i] * c.d->Dinv[r] * R[nrhs * r + j];
                }
        CHECK_CLOSE(YDY, BtX, nrhs * nrhs, 1e-9, "Y^T D^-1 Y = B^T M^-1 B (Y = L^-T B)");
        mbsi_ltdl_solve_rows_dl(c.m, c.d, R, nrhs, 0);
        for (int i = 0; i < nv; i++)
            for (int j = 0; j < nrhs; j++) Y[i + (size_t)nv * j] = R[nrhs * i + j];
        CHECK_CLOSE(Y, X, nv * nrhs, 1e-9, "the two halves of the row-major solve = LAPACK solve");
        free(R); free(BtX); free(YDY);
        /* ABA with zero velocity and gravity-free torque equals M⁻¹ (τ - g) */
        free(B); free(X); free(Y);
        drop(&c);
    }
}

/* mbs_minverse: the whole M⁻¹ against LAPACK's inverse of CRBA's M (dpotrf + dpotri), exactly
 * symmetric, and equal to the ∂q̈/∂τ of the ABA derivatives, on the random trees (floating and
 * fixed bases, 1 to 31 bodies); a singular M is refused (test_urdf.c, test_massless_subtree). */
static void test_minverse(void)
{
    for (int k = 0; k < NTREES; k++) {
        ctx c = make(k);
        int nv = c.nv;
        double *Minv = calloc((size_t)nv * nv, sizeof(double)), *D3 = calloc((size_t)nv * nv, sizeof(double));
        CHECK(mbs_minverse(c.m, c.d, c.q, Minv) == MBS_OK, "tree %d: minverse failed", k);
        mbs_crba(c.m, c.d, c.q, c.M2);
        CHECK(LAPACKE_dpotrf(LAPACK_COL_MAJOR, 'L', nv, c.M2, nv) == 0 &&
                  LAPACKE_dpotri(LAPACK_COL_MAJOR, 'L', nv, c.M2, nv) == 0, "tree %d: LAPACK inverse failed", k);
        for (int j = 0; j < nv; j++)
            for (int i = 0; i < j; i++) c.M2[i + (size_t)nv * j] = c.M2[j + (size_t)nv * i];
        double scale = 0, err = 0, asym = 0;
        for (int i = 0; i < nv * nv; i++) scale = fmax(scale, fabs(c.M2[i]));
        for (int i = 0; i < nv * nv; i++) err = fmax(err, fabs(Minv[i] - c.M2[i]) / scale);
        for (int i = 0; i < nv; i++)
            for (int j = 0; j < nv; j++) asym = fmax(asym, fabs(Minv[i + nv * j] - Minv[j + nv * i]));
        CHECK(err < 1e-11, "tree %d (nv %d): M^-1 %.2e from LAPACK's", k, nv, err);
        CHECK(asym == 0, "tree %d: M^-1 not exactly symmetric (%g)", k, asym);
        mbs_aba_derivatives(c.m, c.d, c.q, c.v, c.tau, c.x, NULL, NULL, D3);
        err = 0;
        for (int i = 0; i < nv * nv; i++) err = fmax(err, fabs(Minv[i] - D3[i]) / scale);
        CHECK(err < 1e-12, "tree %d: M^-1 %.2e from the ABA derivatives' d(ddq)/d(tau)", k, err);
        free(Minv);
        free(D3);
        drop(&c);
    }
}

/* mbs_model_chain's trees (branching 2 and 3, floating or not): link k hangs from link (k−1)/b,
 * the links are numbered depth-first as the algorithms require, and the tree-sparse LTDL solve,
 * ABA and CRBA agree with LAPACK and RNEA on them as on the random trees; branching 0 and 1 are
 * the same chain. */
static void test_chain_trees(void)
{
    static const int br[4] = {2, 3, 2, 1};
    for (int t = 0; t < 4; t++) {
        mbs_error err = {0};
        mbs_chain_options o = {0.2, 1.5, t == 2, 1, NULL, 0, 0, br[t]};
        int n = 31;
        mbs_model *m = mbs_model_chain(n, &o, &err);
        CHECK(m != NULL, "branching %d: %s", br[t], err.msg);
        if (!m) continue;
        for (int k = 1; k < n; k++) {
            char name[32], pname[32];
            snprintf(name, sizeof name, "joint%d", k + 1);
            snprintf(pname, sizeof pname, "joint%d", (k - 1) / br[t] + 1);
            int j = mbs_joint_id(m, name);
            CHECK(j >= 0 && mbs_joint_parent(m, j) == mbs_joint_id(m, pname), "branching %d: %s hangs from %d, not %s",
                  br[t], name, j >= 0 ? mbs_joint_parent(m, j) : -2, pname);
        }
        mbs_data *d = mbs_data_new(m);
        int nq = mbs_model_nq(m), nv = mbs_model_nv(m);
        double *q = calloc((size_t)nq, sizeof(double)), *v = calloc((size_t)nv, sizeof(double));
        double *a = calloc((size_t)nv, sizeof(double)), *tau = calloc((size_t)nv, sizeof(double));
        double *x = calloc((size_t)nv, sizeof(double)), *y = calloc((size_t)nv, sizeof(double));
        double *M = calloc((size_t)nv * nv, sizeof(double)), *M2 = calloc((size_t)nv * nv, sizeof(double));
        unsigned long long s = 11 + (unsigned long long)t;
        tm_random_state(m, &s, q, v, a, tau);
        mbs_aba(m, d, q, v, tau, x);
        mbs_rnea(m, d, q, v, x, y);
        CHECK_CLOSE(y, tau, nv, 1e-10, "tree: rnea(aba(tau)) = tau");
        mbs_crba(m, d, q, M);
        memcpy(M2, M, sizeof(double) * (size_t)nv * nv);
        memcpy(x, tau, sizeof(double) * (size_t)nv);
        memcpy(y, tau, sizeof(double) * (size_t)nv);
        CHECK(LAPACKE_dposv(LAPACK_COL_MAJOR, 'L', nv, 1, M2, nv, x, nv) == 0, "tree: dposv failed");
        CHECK(mbs_ltdl(m, d, M) == MBS_OK, "tree: ltdl failed");
        mbs_ltdl_solve(m, d, y, 1, nv);
        CHECK_CLOSE(y, x, nv, 1e-9, "tree: LTDL solve = LAPACK solve");
        free(q); free(v); free(a); free(tau); free(x); free(y); free(M); free(M2);
        mbs_data_free(d);
        mbs_model_free(m);
    }
}

/* Σ_i J_iᵀ f_i for body forces given in body frames, through the world Jacobian columns. */
static void jacobian_transpose_forces(ctx *c, const double *fext, double *out)
{
    int nb = mbs_model_nbodies(c->m);
    double *J = calloc(6 * (size_t)c->nv, sizeof(double));
    mbs_compute_joint_jacobians(c->m, c->d, c->q);
    for (int k = 0; k < c->nv; k++) out[k] = 0;
    for (int i = 0; i < nb; i++) {
        double R[9], p[3], fw[6];
        mbs_body_placement(c->m, c->d, i, R, p);
        /* world force at the world origin: f' = R f, n' = R n + p x R f */
        for (int r = 0; r < 3; r++) {
            fw[r] = R[r] * fext[6 * i] + R[r + 3] * fext[6 * i + 1] + R[r + 6] * fext[6 * i + 2];
            fw[3 + r] = R[r] * fext[6 * i + 3] + R[r + 3] * fext[6 * i + 4] + R[r + 6] * fext[6 * i + 5];
        }
        double t[3] = {p[1] * fw[2] - p[2] * fw[1], p[2] * fw[0] - p[0] * fw[2], p[0] * fw[1] - p[1] * fw[0]};
        for (int r = 0; r < 3; r++) fw[3 + r] += t[r];
        char name[32];
        snprintf(name, sizeof name, "body%d", i);
        mbs_frame_jacobian(c->m, c->d, mbs_frame_id(c->m, name), NULL, MBS_WORLD, J, 6);
        for (int k = 0; k < c->nv; k++) {
            double s = 0;
            for (int r = 0; r < 6; r++) s += J[6 * k + r] * fw[r];
            out[k] += s;
        }
    }
    free(J);
}

static void test_external_forces(void)
{
    for (int k = 0; k < NTREES; k++) {
        ctx c = make(k);
        int nb = mbs_model_nbodies(c.m);
        double *fext = calloc(6 * (size_t)nb, sizeof(double)), *jt = calloc((size_t)c.nv, sizeof(double));
        unsigned long long s = 9;
        for (int i = 0; i < 6 * nb; i++) fext[i] = tm_uniform(&s, -1, 1);
        jacobian_transpose_forces(&c, fext, jt);
        mbs_rnea(c.m, c.d, c.q, c.v, c.a, c.x);
        mbs_rnea_fext(c.m, c.d, c.q, c.v, c.a, fext, c.y);
        for (int i = 0; i < c.nv; i++) c.y[i] += jt[i];
        CHECK_CLOSE(c.y, c.x, c.nv, 1e-10, "rnea_fext = rnea - J^T f");
        /* RNEA's backward pass on the kinematics at (q, v, a) */
        mbs_rnea_fext(c.m, c.d, c.q, c.v, c.a, fext, c.x);
        mbs_forward_kinematics(c.m, c.d, c.q, c.v, c.a);
        mbsi_rnea_from_kinematics(c.m, c.d, c.a, fext, c.y);
        CHECK_CLOSE(c.y, c.x, c.nv, 1e-12, "rnea from the kinematics = rnea_fext");
        /* aba with fext = aba with τ + Jᵀ f */
        mbs_aba_fext(c.m, c.d, c.q, c.v, c.tau, fext, c.x);
        for (int i = 0; i < c.nv; i++) c.y[i] = c.tau[i] + jt[i];
        mbs_aba(c.m, c.d, c.q, c.v, c.y, c.M2);
        CHECK_CLOSE(c.x, c.M2, c.nv, 1e-10, "aba_fext = aba(tau + J^T f)");
        free(fext); free(jt);
        drop(&c);
    }
}

/* E(q ⊕ s) for a tangent step s. */
static double energy_at(ctx *c, const double *q, const double *v)
{
    return mbs_kinetic_energy(c->m, c->d, q, v) + mbs_potential_energy(c->m, c->d, q);
}

static void test_energy(void)
{
    for (int k = 0; k < NTREES; k++) {
        ctx c = make(k);
        int nv = c.nv, nq = c.nq;
        /* KE = ½ vᵀ M v */
        mbs_crba(c.m, c.d, c.q, c.M);
        double ke = 0;
        for (int i = 0; i < nv; i++)
            for (int j = 0; j < nv; j++) ke += 0.5 * c.v[i] * c.M[i + nv * j] * c.v[j];
        double ke2 = mbs_kinetic_energy(c.m, c.d, c.q, c.v);
        CHECK(fabs(ke - ke2) <= 1e-12 * fmax(1, ke), "KE %g vs vMv/2 %g", ke2, ke);
        /* dE/dt = vᵀ τ along q̈ = aba(q, v, τ), central differences on the group */
        double *ddq = c.a, *qp = c.x, *qm = c.x + nq, *vp = c.y, *vm = c.y + nv, *st = c.M2;
        mbs_aba(c.m, c.d, c.q, c.v, c.tau, ddq);
        double h = 1e-5;
        for (int i = 0; i < nv; i++) st[i] = h * c.v[i] + 0.5 * h * h * ddq[i];
        mbs_integrate(c.m, c.q, st, qp);
        for (int i = 0; i < nv; i++) st[i] = -h * c.v[i] + 0.5 * h * h * ddq[i];
        mbs_integrate(c.m, c.q, st, qm);
        for (int i = 0; i < nv; i++) { vp[i] = c.v[i] + h * ddq[i]; vm[i] = c.v[i] - h * ddq[i]; }
        double rate = (energy_at(&c, qp, vp) - energy_at(&c, qm, vm)) / (2 * h), power = 0;
        for (int i = 0; i < nv; i++) power += c.v[i] * c.tau[i];
        CHECK(fabs(rate - power) <= 1e-6 * fmax(1, fabs(power)), "dE/dt %.10g vs v.tau %.10g", rate, power);
        /* ∂PE/∂q = g(q) */
        double *g = c.tau;
        mbs_gravity(c.m, c.d, c.q, g);
        for (int i = 0; i < nv; i++) {
            for (int j = 0; j < nv; j++) st[j] = (i == j) * h;
            mbs_integrate(c.m, c.q, st, qp);
            st[i] = -h;
            mbs_integrate(c.m, c.q, st, qm);
            double dpe = (mbs_potential_energy(c.m, c.d, qp) - mbs_potential_energy(c.m, c.d, qm)) / (2 * h);
            CHECK(fabs(dpe - g[i]) <= 1e-6 * fmax(1, fabs(g[i])), "dPE/dq_%d %.10g vs g %.10g", i, dpe, g[i]);
        }
        drop(&c);
    }
}

/* ω such that R1 ≈ exp(2h ω) R0 (world axes). */
static void angular_rate(const double R0[9], const double R1[9], double h, double w[3])
{
    double A[9] = {0};   /* A = R1 R0ᵀ */
    for (int i = 0; i < 3; i++)
        for (int j = 0; j < 3; j++)
            for (int k = 0; k < 3; k++) A[i + 3 * j] += R1[i + 3 * k] * R0[j + 3 * k];
    w[0] = (A[5] - A[7]) / (4 * h);
    w[1] = (A[6] - A[2]) / (4 * h);
    w[2] = (A[1] - A[3]) / (4 * h);
}

static void test_frame_jacobians(void)
{
    for (int k = 0; k < NTREES; k++) {
        ctx c = make(k);
        int nv = c.nv, nq = c.nq, nb = mbs_model_nbodies(c.m);
        double *J = calloc(6 * (size_t)nv, sizeof(double)), *J2 = calloc(6 * (size_t)nv, sizeof(double));
        double *st = c.M2, *qp = c.x, *qm = c.x + nq;
        double off[3] = {0.05, -0.1, 0.2}, h = 1e-6;
        for (int i = 0; i < nb; i++) {
            char name[32];
            snprintf(name, sizeof name, "body%d", i);
            int f = mbs_frame_id(c.m, name);
            for (int ref = 0; ref < 3; ref++) {
                double jv[6] = {0}, vel[6];
                mbs_compute_frame_jacobian(c.m, c.d, c.q, f, off, (mbs_reference_frame)ref, J, 6);
                for (int col = 0; col < nv; col++)
                    for (int r = 0; r < 6; r++) jv[r] += J[6 * col + r] * c.v[col];
                mbs_forward_kinematics(c.m, c.d, c.q, c.v, NULL);
                mbs_frame_velocity(c.m, c.d, f, off, (mbs_reference_frame)ref, vel);
                CHECK_CLOSE(jv, vel, 6, 1e-12, "J v = frame velocity");
            }
            /* LOCAL_WORLD_ALIGNED velocity against finite differences of the placement */
            double R0[9], p0[3], R1[9], p1[3], fd[6], vel[6];
            for (int j = 0; j < nv; j++) st[j] = h * c.v[j];
            mbs_integrate(c.m, c.q, st, qp);
            for (int j = 0; j < nv; j++) st[j] = -h * c.v[j];
            mbs_integrate(c.m, c.q, st, qm);
            mbs_compute_frame_placement(c.m, c.d, qm, f, R0, p0);
            mbs_compute_frame_placement(c.m, c.d, qp, f, R1, p1);
            for (int r = 0; r < 3; r++) {
                double o0 = R0[r] * off[0] + R0[r + 3] * off[1] + R0[r + 6] * off[2];
                double o1 = R1[r] * off[0] + R1[r + 3] * off[1] + R1[r + 6] * off[2];
                fd[r] = ((p1[r] + o1) - (p0[r] + o0)) / (2 * h);
            }
            angular_rate(R0, R1, h, fd + 3);
            mbs_forward_kinematics(c.m, c.d, c.q, c.v, NULL);
            mbs_frame_velocity(c.m, c.d, f, off, MBS_LOCAL_WORLD_ALIGNED, vel);
            CHECK_CLOSE(fd, vel, 6, 1e-6, "frame velocity vs finite differences");
            /* J̇ v against d/dt (J_lwa v) along q ⊕ t v */
            double dd[6], jp[6] = {0}, jm[6] = {0};
            mbs_frame_jdot_v(c.m, c.d, c.q, c.v, f, off, MBS_LOCAL_WORLD_ALIGNED, dd);
            double hh = 1e-5;
            for (int j = 0; j < nv; j++) st[j] = hh * c.v[j];
            mbs_integrate(c.m, c.q, st, qp);
            for (int j = 0; j < nv; j++) st[j] = -hh * c.v[j];
            mbs_integrate(c.m, c.q, st, qm);
            mbs_compute_frame_jacobian(c.m, c.d, qp, f, off, MBS_LOCAL_WORLD_ALIGNED, J, 6);
            mbs_compute_frame_jacobian(c.m, c.d, qm, f, off, MBS_LOCAL_WORLD_ALIGNED, J2, 6);
            for (int col = 0; col < nv; col++)
                for (int r = 0; r < 6; r++) { jp[r] += J[6 * col + r] * c.v[col]; jm[r] += J2[6 * col + r] * c.v[col]; }
            for (int r = 0; r < 6; r++) fd[r] = (jp[r] - jm[r]) / (2 * hh);
            CHECK_CLOSE(dd, fd, 6, 1e-6, "Jdot v (LWA) vs finite differences");
            /* classical acceleration = J a + J̇ v */
            double acc[6], ja[6] = {0};
            mbs_compute_frame_jacobian(c.m, c.d, c.q, f, off, MBS_LOCAL, J, 6);
            mbs_frame_jdot_v(c.m, c.d, c.q, c.v, f, off, MBS_LOCAL, dd);
            mbs_forward_kinematics(c.m, c.d, c.q, c.v, c.a);
            mbs_frame_classical_acceleration(c.m, c.d, f, off, MBS_LOCAL, acc);
            for (int col = 0; col < nv; col++)
                for (int r = 0; r < 6; r++) ja[r] += J[6 * col + r] * c.a[col];
            for (int r = 0; r < 6; r++) ja[r] += dd[r];
            CHECK_CLOSE(acc, ja, 6, 1e-10, "classical acceleration (LOCAL) = J a + Jdot v");
        }
        free(J); free(J2);
        drop(&c);
    }
}

static void test_center_of_mass(void)
{
    for (int k = 0; k < NTREES; k++) {
        ctx c = make(k);
        double com[3], vcom[3], c0[3], c1[3], fd[3], h = 1e-6;
        double *st = c.M2, *qp = c.x, *qm = c.x + c.nq;
        mbs_center_of_mass(c.m, c.d, c.q, c.v, com, vcom);
        for (int j = 0; j < c.nv; j++) st[j] = h * c.v[j];
        mbs_integrate(c.m, c.q, st, qp);
        for (int j = 0; j < c.nv; j++) st[j] = -h * c.v[j];
        mbs_integrate(c.m, c.q, st, qm);
        mbs_center_of_mass(c.m, c.d, qp, NULL, c1, NULL);
        mbs_center_of_mass(c.m, c.d, qm, NULL, c0, NULL);
        for (int r = 0; r < 3; r++) fd[r] = (c1[r] - c0[r]) / (2 * h);
        CHECK_CLOSE(vcom, fd, 3, 1e-6, "com velocity vs finite differences");
        drop(&c);
    }
}

/* J_com v is the COM velocity, and J_com v̇ + drift its acceleration: the second by central
 * differences of ċ = J_com(q) v along q(t), v(t) = v + t v̇. */
static void test_com_jacobian(void)
{
    for (int k = 0; k < NTREES; k++) {
        ctx c = make(k);
        size_t nv = (size_t)c.nv;
        double *J = malloc(sizeof(double) * 3 * nv), *Jp = malloc(sizeof(double) * 3 * nv), *st = c.M2;
        double *qp = c.x, *qm = c.x + c.nq, *vp = c.y, *vm = c.y + nv;
        double com[3], vcom[3], drift[3], jv[3] = {0, 0, 0}, acc[3], vp_c[3] = {0, 0, 0}, vm_c[3] = {0, 0, 0}, fd[3];
        const double h = 1e-6;
        mbs_com_jacobian(c.m, c.d, c.q, c.v, J, drift);
        mbs_center_of_mass(c.m, c.d, c.q, c.v, com, vcom);
        for (size_t j = 0; j < nv; j++)
            for (int r = 0; r < 3; r++) jv[r] += J[3 * j + r] * c.v[j];
        CHECK_CLOSE(jv, vcom, 3, 1e-12, "J_com v vs the COM velocity");
        for (int r = 0; r < 3; r++) acc[r] = drift[r];
        for (size_t j = 0; j < nv; j++)
            for (int r = 0; r < 3; r++) acc[r] += J[3 * j + r] * c.a[j];
        for (size_t j = 0; j < nv; j++) { st[j] = h * c.v[j]; vp[j] = c.v[j] + h * c.a[j]; vm[j] = c.v[j] - h * c.a[j]; }
        mbs_integrate(c.m, c.q, st, qp);
        for (size_t j = 0; j < nv; j++) st[j] = -h * c.v[j];
        mbs_integrate(c.m, c.q, st, qm);
        mbs_com_jacobian(c.m, c.d, qp, NULL, Jp, NULL);
        for (size_t j = 0; j < nv; j++)
            for (int r = 0; r < 3; r++) vp_c[r] += Jp[3 * j + r] * vp[j];
        mbs_com_jacobian(c.m, c.d, qm, NULL, Jp, NULL);
        for (size_t j = 0; j < nv; j++)
            for (int r = 0; r < 3; r++) vm_c[r] += Jp[3 * j + r] * vm[j];
        for (int r = 0; r < 3; r++) fd[r] = (vp_c[r] - vm_c[r]) / (2 * h);
        CHECK_CLOSE(acc, fd, 3, 1e-5, "J_com v̇ + drift vs finite differences");
        free(J);
        free(Jp);
        drop(&c);
    }
}

/* A ball joint is a free-flyer whose origin is held: on a body with a ball root and a
 * revolute child, M, RNEA and integrate equal the free-flyer model's with the root's linear
 * velocity and acceleration zero, its rows and columns of the linear part removed. */
static void test_ball_is_held_free_flyer(void)
{
    unsigned long long s = 5;
    double R[9], p[3] = {0.1, -0.2, 0.3}, Rc[9], pc[3] = {0.2, 0.05, -0.1}, ax[3] = {0.3, -1, 0.2};
    tm_random_rotation(&s, R);
    tm_random_rotation(&s, Rc);
    mbs_model *mm[2];
    for (int k = 0; k < 2; k++) {
        mbs_model *m = mbs_model_new(k ? "free" : "ball");
        int b0 = mbs_model_add_joint(m, -1, k ? MBS_JOINT_FREEFLYER : MBS_JOINT_BALL, "root", R, p, NULL, NULL);
        unsigned long long si = 11;
        tm_random_inertia(m, b0, &si, 0.3, 0.1);
        int b1 = mbs_model_add_joint(m, b0, MBS_JOINT_REVOLUTE, "hinge", Rc, pc, ax, NULL);
        tm_random_inertia(m, b1, &si, 0.3, 0.1);
        CHECK(mbs_model_finalize(m, NULL) == MBS_OK, "finalize");
        mm[k] = m;
    }
    CHECK(mbs_model_nq(mm[0]) == 5 && mbs_model_nv(mm[0]) == 4, "ball: nq %d nv %d", mbs_model_nq(mm[0]), mbs_model_nv(mm[0]));
    mbs_data *d0 = mbs_data_new(mm[0]), *d1 = mbs_data_new(mm[1]);
    for (int it = 0; it < 20; it++) {
        double qb[5], vb[4], ab[4], qf[8] = {0}, vf[7] = {0}, af[7] = {0};
        tm_random_state(mm[0], &s, qb, vb, ab, NULL);
        memcpy(qf + 3, qb, 5 * sizeof(double));
        memcpy(vf + 3, vb, 4 * sizeof(double));
        memcpy(af + 3, ab, 4 * sizeof(double));
        double tb[4], tf[7], Mb[16], Mf[49], Mr[16];
        mbs_rnea(mm[0], d0, qb, vb, ab, tb);
        mbs_rnea(mm[1], d1, qf, vf, af, tf);
        CHECK_CLOSE(tb, tf + 3, 4, 1e-12, "ball RNEA = held free-flyer's");
        mbs_crba(mm[0], d0, qb, Mb);
        mbs_crba(mm[1], d1, qf, Mf);
        for (int c = 0; c < 4; c++)
            for (int r = 0; r < 4; r++) Mr[r + 4 * c] = Mf[(r + 3) + 7 * (c + 3)];
        CHECK_CLOSE(Mb, Mr, 16, 1e-12, "ball M = held free-flyer's");
        double qb2[5], qf2[8];
        mbs_integrate(mm[0], qb, vb, qb2);
        mbs_integrate(mm[1], qf, vf, qf2);
        CHECK_CLOSE(qb2, qf2 + 3, 5, 1e-15, "ball integrate = free-flyer's rotation");
    }
    /* Pinocchio's convention, by hand: q ⊕ (0, 0, π/2) turns the identity by 90° about z */
    double q0[5] = {0, 0, 0, 1, 0}, v0[4] = {0, 0, 3.14159265358979323846 / 2, 0}, q1[5];
    mbs_integrate(mm[0], q0, v0, q1);
    double e[5] = {0, 0, sqrt(0.5), sqrt(0.5), 0};
    CHECK_CLOSE(q1, e, 5, 1e-15, "integrate(identity, π/2 about z)");
    mbs_data_free(d0);
    mbs_data_free(d1);
    mbs_model_free(mm[0]);
    mbs_model_free(mm[1]);
}

/* ∂(M x)/∂q (mbsi_mass_times_dq, after an RNEA derivative pass at the same q) is the change of
 * ∂rnea/∂q between the accelerations a and a + x: RNEA's derivative in q is affine in q̈. */
static void test_mass_times_dq(void)
{
    for (int k = 0; k < NTREES; k++) {
        ctx c = make(k);
        const size_t nn = (size_t)c.nv * (size_t)c.nv;
        double *D1 = calloc(nn, sizeof(double)), *D2 = calloc(nn, sizeof(double)), *L = calloc(nn, sizeof(double));
        double *ax = calloc((size_t)c.nv, sizeof(double)), *xs = calloc((size_t)c.nv, sizeof(double));
        for (int j = 0; j < c.nv; j++) {
            xs[j] = c.tau[j] - 0.5 * c.a[j];   /* another random vector */
            ax[j] = c.a[j] + xs[j];
        }
        mbs_rnea_derivatives(c.m, c.d, c.q, c.v, ax, D2, NULL, NULL);
        mbs_rnea_derivatives(c.m, c.d, c.q, c.v, c.a, D1, NULL, NULL);
        mbsi_mass_times_dq(c.m, c.d, xs, -1.0, L);
        double e = 0, scale = 1;
        for (size_t i = 0; i < nn; i++) {
            e = fmax(e, fabs(D2[i] - D1[i] + L[i]));
            scale = fmax(scale, fmax(fabs(D1[i]), fabs(D2[i])));
        }
        CHECK(e <= 1e-12 * scale, "tree %d: -∂(M x)/∂q + ∂rnea/∂q(a + x) - ∂rnea/∂q(a) = %.2e (scale %.2e)", k, e, scale);
        free(D1); free(D2); free(L); free(ax); free(xs);
        drop(&c);
    }
}

int main(void)
{
    RUN(test_rnea_aba_identity);
    RUN(test_crba_columns);
    RUN(test_solvers_against_lapack);
    RUN(test_minverse);
    RUN(test_chain_trees);
    RUN(test_external_forces);
    RUN(test_energy);
    RUN(test_frame_jacobians);
    RUN(test_center_of_mass);
    RUN(test_com_jacobian);
    RUN(test_ball_is_held_free_flyer);
    RUN(test_mass_times_dq);
    return check_summary("test_dynamics");
}
