/* test_implicit_euler.c — the implicit Euler stepper (Hammoud et al. 2022, appendix A) and the
 * derivatives it is built on: the contact-force and system-dynamics derivatives and the Newton
 * Jacobian of the residual against central finite differences, first-order convergence on
 * smooth problems, Newton iteration counts, stability of a box resting on stiff contacts at a
 * step where explicit Euler diverges, its sag at equilibrium, Solo standing, bad options. */
#include <stdlib.h>

#include "../src/contact/contact_internal.h"
#include "check.h"
#include "testmodels.h"

/* Defined in src/step/implicit_euler.c for this test: the residual of eq. A1 at x1 for a step of
 * dt from the system's state, with the clamped (1) or smooth (0) contact forces; when N is not
 * NULL, the Newton matrix the stepper solves with, −diag(1, M) ∂r/∂x1 (2nv x 2nv column-major:
 * its velocity rows are multiplied by the mass matrix), and M(q1) (nv x nv). */
double mbsi_implicit_euler_residual(mbs_stepper *st, double dt, int clamped, const double *q1, const double *v1,
                                   double *r, double *N, double *M);

static const double corners[4][3] = {{0.1, 0.15, -0.2}, {-0.1, 0.15, -0.2}, {0.1, -0.15, -0.2}, {-0.1, -0.15, -0.2}};

/* max |A − B| / max(1, max |B|): derivatives are compared on the scale of the matrix. */
static double scaled_error(const double *A, const double *B, size_t n)
{
    double e = 0, s = 1;
    for (size_t k = 0; k < n; k++) { e = fmax(e, fabs(A[k] - B[k])); s = fmax(s, fabs(B[k])); }
    return e / s;
}

/* The free box resting on the plane z = 0 on its four bottom corners. */
static mbs_system *box_on_plane(mbs_model **mo, double K, double B, double mu)
{
    mbs_error err;
    *mo = mbs_model_from_urdf(tm_path("tests/models/free_box.urdf"), NULL, &err);
    if (!*mo) { fprintf(stderr, "%s\n", err.msg); return NULL; }
    mbs_system *s = mbs_system_new(*mo, 4, &err);
    double n[3] = {0, 0, 1};
    mbs_material mat = {K, K, B, B, mu};
    mbs_system_add_plane(s, n, 0, &mat, &err);
    for (int k = 0; k < 4; k++) mbs_system_add_contact(s, "box", corners[k], 0, &err);
    s->q[2] = 0.2;
    return s;
}

/* Solo-12 in its SRDF standing pose with point contacts on the four feet, feet on z = 0. */
static mbs_system *solo_standing(mbs_model **mo, double *qref)
{
    mbs_error err;
    *mo = mbs_model_from_urdf(tm_path("urdf/solo12.urdf"), NULL, &err);
    if (!*mo) { fprintf(stderr, "%s\n", err.msg); return NULL; }
    mbs_system *s = mbs_system_new(*mo, 4, &err);
    double n[3] = {0, 0, 1};
    mbs_material mat = {1e5, 1e5, 300, 300, 1.0};
    mbs_system_add_plane(s, n, 0, &mat, &err);
    const char *feet[4] = {"FL_FOOT", "FR_FOOT", "HL_FOOT", "HR_FOOT"};
    for (int k = 0; k < 4; k++) mbs_system_add_contact(s, feet[k], NULL, 0, &err);
    const char *legs[4] = {"FL", "FR", "HL", "HR"};
    const double side[4] = {1, -1, 1, -1}, front[4] = {1, 1, -1, -1};
    for (int l = 0; l < 4; l++) {
        char name[16];
        const char *jn[3] = {"HAA", "HFE", "KFE"};
        const double val[3] = {0.1 * side[l], 0.8 * front[l], -1.6 * front[l]};
        for (int k = 0; k < 3; k++) {
            snprintf(name, sizeof name, "%s_%s", legs[l], jn[k]);
            int j = mbs_joint_id(*mo, name);
            if (j >= 0) s->q[mbs_joint_idx_q(*mo, j)] = val[k];
        }
    }
    s->q[2] = 0.235 - 0.019103;   /* foot frames at z = 0 (reference_configs.yaml) */
    memcpy(qref, s->q, sizeof(double) * (size_t)s->nq);
    return s;
}

/* Joint PD about the standing pose plus gravity compensation, held over the step. */
static void solo_pd(mbs_system *s, const double *qref)
{
    mbs_gravity(s->model, s->data, s->q, s->tau);
    for (int k = 6; k < s->nv; k++) s->tau[k] += 3.0 * (qref[k + 1] - s->q[k + 1]) - 0.05 * s->v[k];
    for (int k = 0; k < 6; k++) s->tau[k] = 0;
}

/* ---- derivatives against finite differences ---- */

/* τ_c = Σ J_iᵀ λ_i at (q, v), anchors and active set held: rnea without minus rnea with the contact wrenches. */
static void contact_tau(mbs_system *s, int clamped, const double *q, const double *v, double *tauc, double *tmp,
                        double *zero)
{
    if (clamped) mbs_contact_forces(s, q, v, 0);
    else mbsi_contact_forces_smooth(s, q, v);
    mbs_rnea(s->model, s->data, q, v, zero, tauc);
    mbs_rnea_fext(s->model, s->data, q, v, zero, s->fext, tmp);
    for (int k = 0; k < s->nv; k++) tauc[k] -= tmp[k];
}

static void dynamics(mbs_system *s, int clamped, const double *q, const double *v, double *ddq)
{
    if (clamped) mbs_system_dynamics(s, q, v, 0, ddq);
    else mbsi_system_dynamics_smooth(s, q, v, ddq);
}

/* Checks ∂τ_c/∂x and ∂q̈/∂x at (q, v) with the system's current anchors against central
 * differences, for the clamped and the smooth contact forces. */
static void check_derivatives_mode(mbs_system *s, int clamped, const double *q, const double *v, const char *what0)
{
    char what[128];
    snprintf(what, sizeof what, "%s (%s)", what0, clamped ? "clamped" : "smooth");
    int nq = s->nq, nv = s->nv;
    size_t nn = (size_t)nv * nv;
    double *Aq = calloc(nn, 8), *Av = calloc(nn, 8), *Fq = calloc(nn, 8), *Fv = calloc(nn, 8);
    double *work = calloc(mbsi_contact_derivatives_work_size(nv), 8);
    int *iwork = calloc((size_t)nv, sizeof(int));
    double *qp = calloc((size_t)nq, 8), *qm = calloc((size_t)nq, 8), *vp = calloc((size_t)nv, 8),
           *vm = calloc((size_t)nv, 8), *dq = calloc((size_t)nv, 8), *fp = calloc((size_t)nv, 8),
           *fm = calloc((size_t)nv, 8), *tmp = calloc((size_t)nv, 8), *zero = calloc((size_t)nv, 8),
           *ddq = calloc((size_t)nv, 8);
    const double h = 1e-6;
    /* contact forces */
    if (clamped) mbs_contact_forces(s, q, v, 0);
    else mbsi_contact_forces_smooth(s, q, v);
    mbsi_contact_force_derivatives(s, q, v, clamped, Aq, Av, work, iwork, NULL);
    for (int k = 0; k < nv; k++) {
        memset(dq, 0, (size_t)nv * 8);
        dq[k] = h;
        mbs_integrate(s->model, q, dq, qp);
        dq[k] = -h;
        mbs_integrate(s->model, q, dq, qm);
        contact_tau(s, clamped, qp, v, fp, tmp, zero);
        contact_tau(s, clamped, qm, v, fm, tmp, zero);
        for (int r = 0; r < nv; r++) Fq[r + (size_t)nv * k] = (fp[r] - fm[r]) / (2 * h);
        memcpy(vp, v, (size_t)nv * 8);
        memcpy(vm, v, (size_t)nv * 8);
        vp[k] += h;
        vm[k] -= h;
        contact_tau(s, clamped, q, vp, fp, tmp, zero);
        contact_tau(s, clamped, q, vm, fm, tmp, zero);
        for (int r = 0; r < nv; r++) Fv[r + (size_t)nv * k] = (fp[r] - fm[r]) / (2 * h);
    }
    double eq = scaled_error(Aq, Fq, nn), ev = scaled_error(Av, Fv, nn);
    CHECK(eq < 1e-6, "%s: dtau_c/dq off by %.3e (scaled)", what, eq);
    CHECK(ev < 1e-6, "%s: dtau_c/dv off by %.3e (scaled)", what, ev);
    /* system dynamics */
    dynamics(s, clamped, q, v, ddq);
    CHECK(mbsi_system_dynamics_derivatives(s, q, v, clamped, ddq, Aq, Av, NULL, work, iwork, NULL) == MBS_OK, "%s: M not factorised",
          what);
    for (int k = 0; k < nv; k++) {
        memset(dq, 0, (size_t)nv * 8);
        dq[k] = h;
        mbs_integrate(s->model, q, dq, qp);
        dq[k] = -h;
        mbs_integrate(s->model, q, dq, qm);
        dynamics(s, clamped, qp, v, fp);
        dynamics(s, clamped, qm, v, fm);
        for (int r = 0; r < nv; r++) Fq[r + (size_t)nv * k] = (fp[r] - fm[r]) / (2 * h);
        memcpy(vp, v, (size_t)nv * 8);
        memcpy(vm, v, (size_t)nv * 8);
        vp[k] += h;
        vm[k] -= h;
        dynamics(s, clamped, q, vp, fp);
        dynamics(s, clamped, q, vm, fm);
        for (int r = 0; r < nv; r++) Fv[r + (size_t)nv * k] = (fp[r] - fm[r]) / (2 * h);
    }
    eq = scaled_error(Aq, Fq, nn);
    ev = scaled_error(Av, Fv, nn);
    CHECK(eq < 1e-6, "%s: dddq/dq off by %.3e (scaled)", what, eq);
    CHECK(ev < 1e-6, "%s: dddq/dv off by %.3e (scaled)", what, ev);
    free(Aq); free(Av); free(Fq); free(Fv); free(work); free(iwork); free(qp); free(qm); free(vp); free(vm);
    free(dq); free(fp); free(fm); free(tmp); free(zero); free(ddq);
}

static void check_derivatives_at(mbs_system *s, const double *q, const double *v, const char *what)
{
    check_derivatives_mode(s, 1, q, v, what);
    check_derivatives_mode(s, 0, q, v, what);
}

/* Sets anchors at (q, v) and then moves them off the points, so that springs pull sideways too. */
static void scatter_anchors(mbs_system *s, const double *q, const double *v, unsigned long long *seed)
{
    mbs_contact_forces(s, q, v, 1);
    for (int i = 0; i < s->ncontacts; i++) {
        mbs_contact *c = &s->contacts[i];
        for (int k = 0; k < 2; k++) {
            c->p0[k] += tm_uniform(seed, -0.01, 0.01);
            c->dp0[k] = tm_uniform(seed, -0.2, 0.2);
        }
    }
}

/* Counts active contacts that stick, slip and were released at (q, v). */
static void contact_regimes(mbs_system *s, const double *q, const double *v, int *stick, int *slip, int *released)
{
    mbs_contact_forces(s, q, v, 0);
    *stick = *slip = *released = 0;
    for (int i = 0; i < s->ncontacts; i++) {
        const mbs_contact *c = &s->contacts[i];
        if (!c->active) continue;
        if (c->lambda[0] == 0 && c->lambda[1] == 0 && c->lambda[2] == 0) (*released)++;
        else if (c->slipping) (*slip)++;
        else (*stick)++;
    }
}

static void test_contact_derivatives_box(void)
{
    unsigned long long seed = 5;
    for (int pass = 0; pass < 2; pass++) {
        mbs_model *m;
        mbs_system *s = box_on_plane(&m, 1e5, 300, pass == 0 ? 10.0 : 0.3);
        /* tilted, penetrating, moving */
        double q[7], v[6], axis[3] = {0.3, -0.5, 0.2}, ang = 0.2;
        double na = sqrt(axis[0] * axis[0] + axis[1] * axis[1] + axis[2] * axis[2]);
        for (int k = 0; k < 3; k++) q[3 + k] = sin(ang / 2) * axis[k] / na;
        q[6] = cos(ang / 2);
        q[0] = 0.05; q[1] = -0.02; q[2] = 0.16;
        for (int k = 0; k < 6; k++) v[k] = tm_uniform(&seed, -0.3, 0.3);
        scatter_anchors(s, q, v, &seed);
        int st_, sl, rl;
        contact_regimes(s, q, v, &st_, &sl, &rl);
        CHECK(st_ + sl + rl > 0, "no active contact");
        if (pass == 0) CHECK(st_ == 4, "stick case: %d sticking, %d slipping, %d released", st_, sl, rl);
        else CHECK(sl >= 2 && rl == 0, "slip case: %d sticking, %d slipping, %d released", st_, sl, rl);
        check_derivatives_at(s, q, v, pass == 0 ? "box, sticking" : "box, slipping");
        mbs_system_free(s);
        mbs_model_free(m);
    }
}

/* A random tree (free-flyer root, revolute, prismatic and planar joints) with contacts, some
 * of them spheres, on several bodies below a plane. */
static void test_contact_derivatives_tree(void)
{
    for (int floating = 0; floating < 2; floating++) {
        unsigned long long seed = 77 + floating;
        mbs_model *m = tm_random_tree(9, floating, 1234 + floating);
        int nq = mbs_model_nq(m), nv = mbs_model_nv(m);
        mbs_error err;
        mbs_system *s = mbs_system_new(m, 6, &err);
        double *q = calloc((size_t)nq, 8), *v = calloc((size_t)nv, 8), *a = calloc((size_t)nv, 8),
               *tau = calloc((size_t)nv, 8);
        tm_random_state(m, &seed, q, v, a, tau);
        const char *bodies[6] = {"body1", "body3", "body4", "body6", "body8", "body8"};
        for (int i = 0; i < 6; i++) {
            double off[3] = {tm_uniform(&seed, -0.2, 0.2), tm_uniform(&seed, -0.2, 0.2), tm_uniform(&seed, -0.2, 0.2)};
            CHECK(mbs_system_add_contact(s, bodies[i], off, i % 2 ? 0.03 : 0.0, &err) >= 0, "%s", err.msg);
        }
        /* a plane above every contact point: all penetrate */
        double top = -1e9, R[9], p[3];
        mbs_forward_kinematics(m, s->data, q, NULL, NULL);
        for (int i = 0; i < s->ncontacts; i++) {
            mbs_frame_placement(m, s->data, s->contacts[i].frame, R, p);
            double z = p[2] + R[2] * s->contacts[i].offset[0] + R[5] * s->contacts[i].offset[1] +
                       R[8] * s->contacts[i].offset[2];
            top = fmax(top, z);
        }
        double n[3] = {0, 0, 1};
        mbs_material mat = {2e4, 1e4, 50, 80, 0.4};
        mbs_system_add_plane(s, n, top + 0.05, &mat, &err);
        scatter_anchors(s, q, v, &seed);
        int st_, sl, rl;
        contact_regimes(s, q, v, &st_, &sl, &rl);
        CHECK(st_ + sl >= 3, "random tree: only %d contacts carry force", st_ + sl);
        check_derivatives_at(s, q, v, floating ? "random tree, floating" : "random tree, fixed");
        free(q); free(v); free(a); free(tau);
        mbs_system_free(s);
        mbs_model_free(m);
    }
}

static void test_contact_derivatives_solo(void)
{
    mbs_model *m;
    double qref[19];
    mbs_system *s = solo_standing(&m, qref);
    if (!s) { CHECK(0, "solo"); return; }
    unsigned long long seed = 9;
    double q[19], v[18], dq[18];
    for (int k = 0; k < 18; k++) { dq[k] = tm_uniform(&seed, -0.05, 0.05); v[k] = tm_uniform(&seed, -0.5, 0.5); }
    dq[2] = -0.01;   /* push the feet into the ground */
    mbs_integrate(m, qref, dq, q);
    scatter_anchors(s, q, v, &seed);
    int st_, sl, rl;
    contact_regimes(s, q, v, &st_, &sl, &rl);
    CHECK(st_ + sl >= 2, "solo: only %d feet carry force", st_ + sl);
    check_derivatives_at(s, q, v, "solo");
    mbs_system_free(s);
    mbs_model_free(m);
}

/* The stepper's Newton matrix against −diag(1, M) times central differences of r(x1) (eq. A1)
 * in the tangent space of x1. */
static void check_newton_jacobian_mode(mbs_system *s, mbs_stepper *st, int clamped, double dt, const double *q1,
                                       const double *v1, const char *what)
{
    int nq = s->nq, nv = s->nv, n2 = 2 * nv;
    double *N = calloc((size_t)n2 * n2, 8), *F = calloc((size_t)n2 * n2, 8), *M = calloc((size_t)nv * nv, 8),
           *r = calloc((size_t)n2, 8), *rp = calloc((size_t)n2, 8), *rm = calloc((size_t)n2, 8),
           *qp = calloc((size_t)nq, 8), *qm = calloc((size_t)nq, 8), *vp = calloc((size_t)nv, 8),
           *vm = calloc((size_t)nv, 8), *dq = calloc((size_t)nv, 8), *col = calloc((size_t)n2, 8);
    const double h = 1e-6;
    mbsi_implicit_euler_residual(st, dt, clamped, q1, v1, r, N, M);
    for (int k = 0; k < n2; k++) {
        memset(dq, 0, (size_t)nv * 8);
        memcpy(vp, v1, (size_t)nv * 8);
        memcpy(vm, v1, (size_t)nv * 8);
        if (k < nv) dq[k] = h; else { vp[k - nv] += h; vm[k - nv] -= h; }
        mbs_integrate(s->model, q1, dq, qp);
        for (int i = 0; i < nv; i++) dq[i] = -dq[i];
        mbs_integrate(s->model, q1, dq, qm);
        mbsi_implicit_euler_residual(st, dt, clamped, qp, vp, rp, NULL, NULL);
        mbsi_implicit_euler_residual(st, dt, clamped, qm, vm, rm, NULL, NULL);
        for (int i = 0; i < n2; i++) col[i] = (rp[i] - rm[i]) / (2 * h);
        for (int i = 0; i < nv; i++) {
            double x = 0;
            for (int j = 0; j < nv; j++) x += M[i + (size_t)nv * j] * col[nv + j];
            F[i + (size_t)n2 * k] = -col[i];
            F[nv + i + (size_t)n2 * k] = -x;
        }
    }
    double e = scaled_error(N, F, (size_t)n2 * n2);
    CHECK(e < 1e-6, "%s (%s): Newton matrix off by %.3e (scaled)", what, clamped ? "clamped" : "smooth", e);
    free(N); free(F); free(M); free(r); free(rp); free(rm); free(qp); free(qm); free(vp); free(vm); free(dq);
    free(col);
}

static void check_newton_jacobian(mbs_system *s, mbs_stepper *st, double dt, const double *q1, const double *v1,
                                  const char *what)
{
    check_newton_jacobian_mode(s, st, 1, dt, q1, v1, what);
    check_newton_jacobian_mode(s, st, 0, dt, q1, v1, what);
}

static void test_newton_jacobian(void)
{
    unsigned long long seed = 21;
    /* box with stiff contacts, tilted and moving; x1 away from x so that every block is exercised */
    {
        mbs_model *m;
        mbs_system *s = box_on_plane(&m, 1e5, 300, 0.5);
        mbs_system_finalize(s, NULL);
        mbs_stepper *st = mbs_stepper_new("implicit_euler", s, NULL, 0, NULL);
        double dx[6] = {0.01, -0.02, -0.003, 0.1, -0.2, 0.15}, q1[7], v1[6];
        mbs_integrate(m, s->q, dx, s->q);
        for (int k = 0; k < 6; k++) { s->v[k] = tm_uniform(&seed, -1, 1); dx[k] = tm_uniform(&seed, -0.01, 0.01); }
        scatter_anchors(s, s->q, s->v, &seed);
        mbs_integrate(m, s->q, dx, q1);
        for (int k = 0; k < 6; k++) v1[k] = s->v[k] + tm_uniform(&seed, -0.5, 0.5);
        check_newton_jacobian(s, st, 0.01, q1, v1, "box with contacts");
        mbs_stepper_free(st);
        mbs_system_free(s);
        mbs_model_free(m);
    }
    /* Solo standing on its feet */
    {
        mbs_model *m;
        double qref[19], q1[19], v1[18], dq[18];
        mbs_system *s = solo_standing(&m, qref);
        mbs_system_finalize(s, NULL);
        mbs_stepper *st = mbs_stepper_new("implicit_euler", s, NULL, 0, NULL);
        for (int k = 0; k < 18; k++) { dq[k] = tm_uniform(&seed, -0.03, 0.03); s->v[k] = tm_uniform(&seed, -0.5, 0.5); }
        dq[2] = -0.005;
        mbs_integrate(m, qref, dq, s->q);
        scatter_anchors(s, s->q, s->v, &seed);
        for (int k = 0; k < 18; k++) {
            dq[k] = tm_uniform(&seed, -0.005, 0.005);
            v1[k] = s->v[k] + tm_uniform(&seed, -0.2, 0.2);
        }
        mbs_integrate(m, s->q, dq, q1);
        check_newton_jacobian(s, st, 0.01, q1, v1, "solo");
        mbs_stepper_free(st);
        mbs_system_free(s);
        mbs_model_free(m);
    }
    /* a random tree without contacts (planar and prismatic joints, free-flyer root) */
    {
        mbs_model *m = tm_random_tree(8, 1, 99);
        int nq = mbs_model_nq(m), nv = mbs_model_nv(m);
        mbs_system *s = mbs_system_new(m, 0, NULL);
        mbs_system_finalize(s, NULL);
        mbs_stepper *st = mbs_stepper_new("implicit_euler", s, NULL, 0, NULL);
        double *a = calloc((size_t)nv, 8), *tau = calloc((size_t)nv, 8), *q1 = calloc((size_t)nq, 8),
               *v1 = calloc((size_t)nv, 8), *dq = calloc((size_t)nv, 8);
        tm_random_state(m, &seed, s->q, s->v, a, tau);
        memcpy(s->tau, tau, sizeof(double) * (size_t)nv);
        for (int k = 0; k < nv; k++) {
            dq[k] = tm_uniform(&seed, -0.05, 0.05);
            v1[k] = s->v[k] + tm_uniform(&seed, -0.3, 0.3);
        }
        mbs_integrate(m, s->q, dq, q1);
        check_newton_jacobian(s, st, 0.02, q1, v1, "random tree");
        free(a); free(tau); free(q1); free(v1); free(dq);
        mbs_stepper_free(st);
        mbs_system_free(s);
        mbs_model_free(m);
    }
}

/* ---- convergence and iterations on smooth problems ---- */

/* Error at T of implicit Euler at step dt against a fine rk4 solution, no contacts. */
static double ie_error(mbs_model *m, const double *q0, const double *v0, double dt, double T, const double *qr,
                       const double *vr, int *max_iter_seen, int *nonconverged)
{
    int nq = mbs_model_nq(m), nv = mbs_model_nv(m);
    mbs_system *s = mbs_system_new(m, 0, NULL);
    memcpy(s->q, q0, sizeof(double) * (size_t)nq);
    memcpy(s->v, v0, sizeof(double) * (size_t)nv);
    mbs_system_finalize(s, NULL);
    mbs_stepper *st = mbs_stepper_new("implicit_euler", s, NULL, 0, NULL);
    for (int k = 0; k < (int)lround(T / dt); k++) {
        mbs_step_stats stats;
        mbs_stepper_step(st, dt, &stats);
        if (max_iter_seen) *max_iter_seen = stats.iterations > *max_iter_seen ? stats.iterations : *max_iter_seen;
        if (nonconverged) *nonconverged += stats.nonconverged;
    }
    double *d = calloc((size_t)nv, 8), e = 0;
    mbs_difference(m, qr, s->q, d);
    for (int k = 0; k < nv; k++) e = fmax(e, fmax(fabs(d[k]), fabs(s->v[k] - vr[k])));
    free(d);
    mbs_stepper_free(st);
    mbs_system_free(s);
    return e;
}

static void check_first_order(const char *file, int floating, double dt)
{
    mbs_model *m = mbs_model_from_urdf(tm_path(file), &(mbs_urdf_options){.floating_base = floating}, NULL);
    int nq = mbs_model_nq(m), nv = mbs_model_nv(m);
    double *q0 = calloc((size_t)nq, 8), *v0 = calloc((size_t)nv, 8), *qr = calloc((size_t)nq, 8),
           *vr = calloc((size_t)nv, 8);
    unsigned long long seed = 11;
    mbs_random_configuration(m, &seed, q0);
    for (int k = 0; k < nv; k++) v0[k] = tm_uniform(&seed, -2, 2);
    double T = 0.2, fine = dt / 256;
    mbs_system *s = mbs_system_new(m, 0, NULL);
    memcpy(s->q, q0, sizeof(double) * (size_t)nq);
    memcpy(s->v, v0, sizeof(double) * (size_t)nv);
    mbs_system_finalize(s, NULL);
    mbs_stepper *st = mbs_stepper_new("rk4", s, NULL, 0, NULL);
    for (int k = 0; k < (int)lround(T / fine); k++) mbs_stepper_step(st, fine, NULL);
    memcpy(qr, s->q, sizeof(double) * (size_t)nq);
    memcpy(vr, s->v, sizeof(double) * (size_t)nv);
    mbs_stepper_free(st);
    mbs_system_free(s);
    int nc = 0;
    double e1 = ie_error(m, q0, v0, dt, T, qr, vr, NULL, &nc);
    double e2 = ie_error(m, q0, v0, dt / 2, T, qr, vr, NULL, &nc);
    double e3 = ie_error(m, q0, v0, dt / 4, T, qr, vr, NULL, &nc);
    CHECK(fabs(e1 / e2 - 2) < 0.3 && fabs(e2 / e3 - 2) < 0.2,
          "%s: error ratios %.3f, %.3f (errors %.3g %.3g %.3g), want 2", file, e1 / e2, e2 / e3, e1, e2, e3);
    CHECK(nc == 0, "%s: %d steps did not converge", file, nc);
    free(q0); free(v0); free(qr); free(vr);
    mbs_model_free(m);
}

static void test_first_order(void)
{
    check_first_order("tests/models/double_pendulum.urdf", 0, 2e-3);
    /* a free body: the SE(3) part of integrate, difference and their Jacobians */
    check_first_order("tests/models/free_box.urdf", 1, 2e-3);
}

static void test_iterations(void)
{
    mbs_model *m = mbs_model_from_urdf(tm_path("tests/models/double_pendulum.urdf"), &(mbs_urdf_options){.floating_base = 0}, NULL);
    mbs_system *s = mbs_system_new(m, 0, NULL);
    s->q[0] = 1.0; s->q[1] = -0.5;
    mbs_system_finalize(s, NULL);
    mbs_stepper *st = mbs_stepper_new("implicit_euler", s, NULL, 0, NULL);
    int worst = 0, least = 1000, nc = 0;
    double res = 0;
    for (int k = 0; k < 100; k++) {
        mbs_step_stats stats;
        CHECK(mbs_stepper_step(st, 0.01, &stats) == MBS_OK, "step failed");
        worst = stats.iterations > worst ? stats.iterations : worst;
        least = stats.iterations < least ? stats.iterations : least;
        nc += stats.nonconverged;
        res = fmax(res, stats.residual);
    }
    CHECK(least >= 1 && worst <= 3, "double pendulum at 10 ms: %d to %d Newton iterations", least, worst);
    CHECK(nc == 0 && res <= 1e-6, "double pendulum: %d steps unconverged, worst residual %g", nc, res);
    mbs_stepper_free(st);
    /* a tighter tolerance costs about one more iteration: the convergence is quadratic */
    mbs_option tight = MBS_OPTION("tol", 1e-13);
    mbs_system_finalize(s, NULL);
    st = mbs_stepper_new("implicit_euler", s, &tight, 1, NULL);
    worst = 0;
    for (int k = 0; k < 50; k++) {
        mbs_step_stats stats;
        mbs_stepper_step(st, 0.01, &stats);
        worst = stats.iterations > worst ? stats.iterations : worst;
        CHECK(!stats.nonconverged && stats.residual <= 1e-13, "tol 1e-13: residual %g", stats.residual);
    }
    CHECK(worst <= 4, "tol 1e-13 took %d iterations", worst);
    mbs_stepper_free(st);
    /* an iteration cap below what the tolerance needs is reported as non-convergence */
    mbs_option capped[2] = {MBS_OPTION("tol", 1e-14), MBS_OPTION("max_iter", 1)};
    mbs_system_finalize(s, NULL);
    st = mbs_stepper_new("implicit_euler", s, capped, 2, NULL);
    mbs_step_stats stats;
    s->v[0] = 3;
    mbs_stepper_step(st, 0.05, &stats);
    CHECK(stats.iterations == 1 && stats.nonconverged && stats.residual > 1e-14,
          "capped: %d iterations, nonconverged %d, residual %g", stats.iterations, stats.nonconverged, stats.residual);
    mbs_stepper_free(st);
    mbs_system_free(s);
    mbs_model_free(m);
}

/* ---- stiff contacts ---- */

static void test_stiff_box(void)
{
    const double K = 1e5, B = 300, dt = 0.01;
    mbs_model *m;
    mbs_system *s = box_on_plane(&m, K, B, 1.0);
    mbs_system_finalize(s, NULL);
    mbs_stepper *st = mbs_stepper_new("implicit_euler", s, NULL, 0, NULL);
    int nc = 0, iters = 0, steps = 200, finite = 1;
    for (int k = 0; k < steps; k++) {
        mbs_step_stats stats;
        mbs_stepper_step(st, dt, &stats);
        nc += stats.nonconverged;
        iters += stats.iterations;
        for (int i = 0; i < 6; i++) finite &= isfinite(s->v[i]);
    }
    CHECK(finite, "implicit Euler diverged on the box");
    CHECK(nc == 0, "%d of %d steps did not converge", nc, steps);
    CHECK(iters <= 5 * steps, "%.2f iterations per step", (double)iters / steps);
    double speed = 0;
    for (int i = 0; i < 6; i++) speed = fmax(speed, fabs(s->v[i]));
    CHECK(speed < 1e-4, "box still moving after 2 s: |v| = %g", speed);
    /* at rest each corner sinks by the spring length that carries its share of m g; the shares
     * follow from the force and moment balance about the centre of mass c:
     * δ_i = m g / (4K) (1 + c_x x_i / x_i² + c_y y_i / y_i²) */
    double mass = mbs_model_mass(m), mg = mass * 9.81, d0 = mg / (4 * K), com[3], Ic[9], mean = 0, fz = 0;
    mbs_body_inertia(m, 0, &mass, com, Ic);
    for (int i = 0; i < 4; i++) {
        const mbs_contact *c = &s->contacts[i];
        double x = corners[i][0], y = corners[i][1];
        double expect = d0 * (1 + com[0] * x / (x * x) + com[1] * y / (y * y)), sag = -c->p[2];
        CHECK(fabs(sag - expect) < 0.02 * d0, "corner %d sags %.6g, expected %.6g", i, sag, expect);
        mean += sag / 4;
        fz += c->lambda[2];
    }
    CHECK(fabs(mean - d0) < 1e-3 * d0, "mean sag %.9g, m g / 4K = %.9g", mean, d0);
    CHECK(fabs(fz - mg) < 1e-4 * mg, "contact forces %g carry the weight %g", fz, mg);
    printf("implicit_euler box on 4 stiff contacts (K 1e5, B 300, dt 10 ms): %.2f Newton iterations per step, "
           "sag %.4g mm (m g / 4K = %.4g mm)\n", (double)iters / steps, mean * 1e3, d0 * 1e3);
    mbs_stepper_free(st);
    /* explicit Euler at the same step: the contact oscillation (ω δt ≈ 3.7) blows up */
    s->q[0] = s->q[1] = 0; s->q[2] = 0.2; s->q[3] = s->q[4] = s->q[5] = 0; s->q[6] = 1;
    memset(s->v, 0, 6 * sizeof(double));
    for (int i = 0; i < 4; i++) s->contacts[i].active = 0;
    mbs_system_finalize(s, NULL);
    st = mbs_stepper_new("euler", s, NULL, 0, NULL);
    double worst = 0;
    for (int k = 0; k < steps; k++) {
        mbs_stepper_step(st, dt, NULL);
        double z = fabs(s->q[2] - 0.2);
        worst = isfinite(z) ? fmax(worst, z) : INFINITY;
    }
    CHECK(worst > 0.01, "explicit Euler at 10 ms stayed within %g m of rest: expected it to diverge", worst);
    mbs_stepper_free(st);
    mbs_system_free(s);
    mbs_model_free(m);
}

/* The box on an incline: sticks when tan θ < μ, slides with a = g (sin θ − μ cos θ) when tan θ > μ,
 * with the contact forces inside the friction cone, at a small and at the 10 ms step. */
static void run_incline(double theta, double mu, double dt, double *accel, int *cone, int *nonconverged)
{
    mbs_model *m;
    mbs_system *s = box_on_plane(&m, 1e5, 300, mu);
    double n[3] = {0, -sin(theta), cos(theta)};
    memcpy(s->env.planes[0].normal, n, sizeof n);
    for (int k = 0; k < 3; k++) s->q[k] = 0.2 * n[k];
    s->q[3] = sin(theta / 2); s->q[6] = cos(theta / 2);
    mbs_system_finalize(s, NULL);
    mbs_stepper *st = mbs_stepper_new("implicit_euler", s, NULL, 0, NULL);
    double down[3] = {0, -cos(theta), -sin(theta)}, R[9], p[3], w0 = 0, t1 = 0.3, t2 = 0.6;
    *cone = 1;
    *nonconverged = 0;
    int n1 = (int)lround(t1 / dt), n2 = (int)lround(t2 / dt);
    for (int k = 1; k <= n2; k++) {
        mbs_step_stats stats;
        mbs_stepper_step(st, dt, &stats);
        *nonconverged += stats.nonconverged;
        for (int i = 0; i < 4; i++) {
            const mbs_contact *c = &s->contacts[i];
            double ln = c->lambda[0] * n[0] + c->lambda[1] * n[1] + c->lambda[2] * n[2], t2s = 0;
            for (int j = 0; j < 3; j++) { double t = c->lambda[j] - ln * n[j]; t2s += t * t; }
            if (ln < 0 || sqrt(t2s) > mu * ln * (1 + 1e-9) + 1e-9) *cone = 0;
        }
        if (k == n1 || k == n2) {
            /* velocity of the box origin down the slope (world axes) */
            mbs_forward_kinematics(m, s->data, s->q, NULL, NULL);
            mbs_body_placement(m, s->data, 0, R, p);
            double w = 0;
            for (int r = 0; r < 3; r++) w += down[r] * (R[r] * s->v[0] + R[r + 3] * s->v[1] + R[r + 6] * s->v[2]);
            if (k == n1) w0 = w; else *accel = (w - w0) / (t2 - t1);
        }
    }
    mbs_stepper_free(st);
    mbs_system_free(s);
    mbs_model_free(m);
}

static void test_incline(void)
{
    const double dts[2] = {1e-3, 1e-2};
    for (int i = 0; i < 2; i++) {
        double a, theta = 0.3, mu = 0.5;
        int cone, nc;
        run_incline(theta, mu, dts[i], &a, &cone, &nc);
        CHECK(fabs(a) < 1e-3, "dt %g: box slides on a sticking incline, a = %g", dts[i], a);
        CHECK(cone && nc == 0, "dt %g (stick): cone %d, %d steps unconverged", dts[i], cone, nc);
        mu = 0.2;
        double expect = 9.81 * (sin(theta) - mu * cos(theta));
        run_incline(theta, mu, dts[i], &a, &cone, &nc);
        /* the box rocks on its uphill corners while it slides, which the coarse step samples */
        double tol = i == 0 ? 0.02 : 0.08;
        CHECK(fabs(a - expect) < tol * expect, "dt %g: sliding acceleration %g, Coulomb %g", dts[i], a, expect);
        CHECK(cone && nc == 0, "dt %g (slide): cone %d, %d steps unconverged", dts[i], cone, nc);
    }
}

static void test_solo_standing(void)
{
    mbs_model *m;
    double qref[19];
    mbs_system *s = solo_standing(&m, qref);
    if (!s) { CHECK(0, "solo"); return; }
    mbs_system_finalize(s, NULL);
    mbs_stepper *st = mbs_stepper_new("implicit_euler", s, NULL, 0, NULL);
    int steps = 200, nc = 0, iters = 0;
    for (int k = 0; k < steps; k++) {
        mbs_step_stats stats;
        solo_pd(s, qref);
        mbs_stepper_step(st, 0.01, &stats);
        nc += stats.nonconverged;
        iters += stats.iterations;
    }
    double speed = 0;
    for (int k = 0; k < 18; k++) speed = fmax(speed, fabs(s->v[k]));
    /* the weak PD lets the base sink a few centimetres before the legs hold it */
    CHECK(isfinite(speed) && speed < 0.02, "solo not settling after 2 s: |v| = %g", speed);
    CHECK(fabs(s->q[2] - qref[2]) < 0.04, "solo base height %g, started at %g", s->q[2], qref[2]);
    CHECK(nc == 0, "solo: %d of %d steps did not converge", nc, steps);
    printf("implicit_euler solo standing (K 1e5, B 300, dt 10 ms): %.2f Newton iterations per step\n",
           (double)iters / steps);
    mbs_stepper_free(st);
    mbs_system_free(s);
    mbs_model_free(m);
}

static void test_bad_options(void)
{
    mbs_model *m = mbs_model_from_urdf(tm_path("tests/models/pendulum.urdf"), &(mbs_urdf_options){.floating_base = 0}, NULL);
    mbs_system *s = mbs_system_new(m, 0, NULL);
    mbs_error err;
    struct { mbs_option o; const char *needle; } bad[] = {
        {tm_opt("tol", "-1"), "tol"}, {tm_opt("tol", "abc"), "abc"}, {tm_opt("tol", "1e-6x"), "tol"}, {tm_opt("max_iter", "0"), "max_iter"},
        {tm_opt("max_iter", "2.5"), "max_iter"}, {tm_opt("reg", "-1e-3"), "reg"}, {tm_opt("reg", "nan"), "reg"},
        {tm_opt("no_such_option", "1"), "no_such_option"},
    };
    for (size_t i = 0; i < sizeof bad / sizeof *bad; i++) {
        mbs_system_finalize(s, NULL);
        mbs_stepper *st = mbs_stepper_new("implicit_euler", s, &bad[i].o, 1, &err);
        CHECK(st == NULL && err.code == MBS_ERR_ARG && strstr(err.msg, bad[i].needle),
              "option %s = %g (%s): accepted or unclear message '%s'", bad[i].o.key, bad[i].o.value, bad[i].o.word ? bad[i].o.word : "a number", st ? "" : err.msg);
        mbs_stepper_free(st);
    }
    mbs_option good[3] = {MBS_OPTION("tol", 1e-8), MBS_OPTION("max_iter", 5), MBS_OPTION("reg", 0)};
    mbs_system_finalize(s, NULL);
    mbs_stepper *st = mbs_stepper_new("implicit_euler", s, good, 3, &err);
    CHECK(st != NULL, "good options refused: %s", err.msg);
    mbs_stepper_free(st);
    CHECK(mbs_stepper_find("implicit_euler") != NULL, "implicit_euler not registered");
    mbs_system_free(s);
    mbs_model_free(m);
}

int main(void)
{
    RUN(test_contact_derivatives_box);
    RUN(test_contact_derivatives_tree);
    RUN(test_contact_derivatives_solo);
    RUN(test_newton_jacobian);
    RUN(test_first_order);
    RUN(test_iterations);
    RUN(test_stiff_box);
    RUN(test_incline);
    RUN(test_solo_standing);
    RUN(test_bad_options);
    return check_summary("test_implicit_euler");
}
