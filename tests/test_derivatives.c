/* test_derivatives.c — the Jacobians of one step (mbs_stepper_derivatives): every analytical
 * scheme's A and B against central differences of its own step (1e-6 relative to the Jacobian's
 * largest entry), their linear prediction of a perturbed step exact to second order (the error
 * falls 4× when the perturbation halves), forward and central differences of every other scheme
 * agreeing, the state untouched by the call, and no allocation in it (the allocator wrap).
 * States: Solo in the air, standing on its four feet (anchors sticking) under a joint servo, and
 * sliding (the base pushed sideways, every foot on its friction cone); expo also on its belly on 20
 * points. */
#include <math.h>
#include <stdlib.h>
#include <string.h>

#include "check.h"
#include "testmodels.h"

#include "alloc_count.h"
/* white-box: the velocity set with the contacts' anchors kept (set_state would release them) */
#include "../src/contact/contact_internal.h"

/* CLUSTERS, outside the loop over every state: five points per foot (20 contacts, 60 rows), enough
 * for expo's derivatives to build their matrix K in blocks of columns (expo_derivatives.c) */
enum { AIR, STAND, SLIDE, SPHERES, NSTATES, CLUSTERS = NSTATES };
static const char *const STATE_NAME[NSTATES + 1] = {"air", "standing", "sliding", "spheres", "clusters"};

static mbs_model *solo;

/* Solo in state `which`, its feet on the ground (K = 1e5 N/m, B = 300 N s/m, μ = 0.6), a joint
 * servo (kp 3 N m/rad, kd 0.1 N m s/rad) about the standing posture, and a torque besides. */
static mbs_system *solo_in(int which, unsigned long long seed)
{
    mbs_error err;
    mbs_system *s;
    if (which == SPHERES) {
        /* the scenarios' feet: balls of 19.1 mm, rolling as the legs move */
        static const char *const feet[4] = {"FL_FOOT", "FR_FOOT", "HL_FOOT", "HR_FOOT"};
        const double up[3] = {0, 0, 1};
        const mbs_material ground = {1e5, 1e5, 300, 300, 1.0};
        s = mbs_system_new(solo, 4, &err);
        if (!s || mbs_system_add_plane(s, up, 0, &ground, &err) != MBS_OK) return s;
        for (int f = 0; f < 4; f++) mbs_system_add_contact(s, feet[f], NULL, 0.0191, &err);
        /* the posture of tm_solo_standing, raised by the balls' radius */
        mbs_system *pose = tm_solo_standing(solo, 0.019103, 1e5, 300, 1.0);
        mbs_system_set_state(s, mbs_system_q(pose), NULL, 0);
        mbs_system_free(pose);
    } else if (which == CLUSTERS) {
        /* Solo on its belly: a 5 x 4 grid of points under the base (20 cm x 6 cm, 2 cm below its
         * frame) on the ground, the legs of tm_solo_standing in the air above no contact */
        const double up[3] = {0, 0, 1};
        const mbs_material ground = {1e5, 1e5, 300, 300, 1.0};
        s = mbs_system_new(solo, 20, &err);
        if (!s || mbs_system_add_plane(s, up, 0, &ground, &err) != MBS_OK) return s;
        for (int c = 0; c < 20; c++) {
            const double p[3] = {-0.1 + 0.05 * (c % 5), -0.03 + 0.02 * (c / 5), -0.02};
            mbs_system_add_contact(s, "base_link", p, 0, &err);
        }
        mbs_system *pose = tm_solo_standing(solo, 0.0, 1e5, 300, 1.0);
        double q[19];
        memcpy(q, mbs_system_q(pose), sizeof q);
        q[2] = 0.02;
        mbs_system_set_state(s, q, NULL, 0);
        mbs_system_free(pose);
    } else
        s = tm_solo_standing(solo, which == AIR ? 0.3 : 0.0, which == STAND ? 2e4 : 1e5, 300, which == SLIDE ? 0.6 : 1.0);
    if (!s || mbs_system_finalize(s, &err) != MBS_OK) return NULL;
    const int nq = mbs_model_nq(solo), nv = mbs_model_nv(solo);
    double *q = malloc(sizeof(double) * (size_t)nq), *v = calloc((size_t)nv, sizeof(double));
    double *kp = calloc((size_t)nv, sizeof(double)), *kd = calloc((size_t)nv, sizeof(double));
    double *tau = calloc((size_t)nv, sizeof(double));
    memcpy(q, mbs_system_q(s), sizeof(double) * (size_t)nq);
    for (int k = 6; k < nv; k++) { kp[k] = 3; kd[k] = 0.1; }
    mbs_system_set_impedance(s, kp, kd, q, NULL);
    mbs_system_set_state(s, q, NULL, 0);
    if (which != AIR) {
        /* settle on the feet: anchors placed and at rest */
        mbs_stepper *st = mbs_stepper_new("expo", s, NULL, 0, &err);
        for (int i = 0; i < 300 && st; i++) mbs_stepper_step(st, 1e-3, NULL);
        mbs_stepper_free(st);
    }
    memcpy(q, mbs_system_q(s), sizeof(double) * (size_t)nq);
    memcpy(v, mbs_system_v(s), sizeof(double) * (size_t)nv);
    for (int k = 0; k < nv; k++) {
        v[k] += which == SLIDE ? 0 : which == STAND || which == SPHERES || which == CLUSTERS ? 0.0 * tm_uniform(&seed, -0.01, 0.01) : tm_uniform(&seed, -0.2, 0.2);
        tau[k] = k < 6 ? 0 : tm_uniform(&seed, -0.5, 0.5) * (which == SPHERES ? 0.1 : 1);
    }
    if (which == SLIDE) v[1] = 1.5;   /* the base sideways at 1.5 m/s: every foot slips */
    /* keep the anchors (set_state would release them): the velocity and torque only */
    memcpy(s->v, v, sizeof(double) * (size_t)nv);
    mbs_system_set_tau(s, tau);
    free(q); free(v); free(kp); free(kd); free(tau);
    return s;
}

/* max |X − Y| / max |Y| over n entries. */
static double rel_err(const double *X, const double *Y, size_t n)
{
    double e = 0, y = 0;
    for (size_t k = 0; k < n; k++) {
        e = check_worst(e, fabs(X[k] - Y[k]));
        y = fmax(y, fabs(Y[k]));
    }
    return e / fmax(y, 1e-300);
}

/* The step from s's state moved by ε (δx, δτ) (tangent), its result as a tangent vector at the
 * unperturbed result (q1, v1) into out (2nv). */
static void perturbed_step(mbs_stepper *st, mbs_system *s, const void *saved, size_t n, double dt, double eps,
                           const double *dx, const double *dtau, const double *q1, const double *v1, double *out)
{
    const int nq = mbs_model_nq(solo), nv = mbs_model_nv(solo);
    double q[64], d[64], tau[64];
    mbs_stepper_restore(st, saved, n, NULL);
    for (int k = 0; k < nv; k++) d[k] = eps * dx[k];
    mbs_integrate(solo, s->q, d, q);
    memcpy(s->q, q, sizeof(double) * (size_t)nq);
    for (int k = 0; k < nv; k++) {
        s->v[k] += eps * dx[nv + k];
        tau[k] = mbs_system_tau(s)[k] + eps * dtau[k];
    }
    mbs_system_set_tau(s, tau);
    mbs_stepper_step(st, dt, NULL);
    mbs_difference(solo, q1, mbs_system_q(s), out);
    for (int k = 0; k < nv; k++) out[nv + k] = mbs_system_v(s)[k] - v1[k];
}

/* The reference the analytical Jacobians are held to: central differences of the step taken through
 * the public calls, at h and h/2, extrapolated (Richardson: (4 D(h/2) − D(h)) / 3, error O(h⁴)),
 * h = 1e-6 (in the tangent space; m, rad, m/s, rad/s, N m). With stiff contacts the step's third
 * derivatives are large (1e12 and more for rk4 at K = 2e4 N/m and 1 ms), where plain central
 * differences at 1e-6 are off by 1e-4 of the Jacobian; the extrapolation removes that term. A
 * column where D(h) and D(h/2) differ by more than 1e-3 of the largest entry is a kink of the step
 * map within h of the state (a discrete choice of the scheme: the implicit step keeps the better of
 * two warm starts; which columns it shows in depends on the rounding of the build): it is flagged
 * in kink[] (columns 0..2nv−1 of A, then the nv of B) and left out; at most 3 of the 3nv may be
 * such. */
static int fd_reference(mbs_stepper *st, mbs_system *s, const void *saved, size_t n, double dt, const double *q1,
                        const double *v1, double *Aref, double *Bref, unsigned char *kink, const char *what)
{
    const int nv = mbs_model_nv(solo), n2 = 2 * nv;
    const double h = 1e-6;
    double dx[128], dtau[64], p1[128], m1[128], p2[128], m2[128], bdiff[64];
    int kinks = 0;
    double amax = 0;
    for (int j = 0; j < 3 * nv; j++) {
        memset(dx, 0, sizeof dx);
        memset(dtau, 0, sizeof dtau);
        if (j < n2) dx[j] = 1;
        else dtau[j - n2] = 1;
        perturbed_step(st, s, saved, n, dt, h, dx, dtau, q1, v1, p1);
        perturbed_step(st, s, saved, n, dt, -h, dx, dtau, q1, v1, m1);
        perturbed_step(st, s, saved, n, dt, h / 2, dx, dtau, q1, v1, p2);
        perturbed_step(st, s, saved, n, dt, -h / 2, dx, dtau, q1, v1, m2);
        double *col = j < n2 ? Aref + (size_t)n2 * j : Bref + (size_t)n2 * (j - n2), diff = 0;
        for (int r = 0; r < n2; r++) {
            double d1 = (p1[r] - m1[r]) / (2 * h), d2 = (p2[r] - m2[r]) / h;
            col[r] = (4 * d2 - d1) / 3;
            diff = check_worst(diff, fabs(d1 - d2));
            amax = fmax(amax, fabs(col[r]));
        }
        if (j < n2) kink[j] = !(diff <= 1e-3 * fmax(amax, 1e-300)) && diff > 1e-9;
        else bdiff[j - n2] = diff;
    }
    /* B's columns against B's own largest entry (a torque moves the state far less than the state does) */
    double bmax = 0;
    for (size_t e = 0; e < (size_t)n2 * nv; e++) bmax = fmax(bmax, fabs(Bref[e]));
    for (int c = 0; c < nv; c++) kink[n2 + c] = !(bdiff[c] <= 1e-3 * fmax(bmax, 1e-300)) && bdiff[c] > 1e-9;
    for (int j = 0; j < 3 * nv; j++)
        if (kink[j]) {
            printf("  %s: %s column %d left out: a kink of the step map within 1e-6\n", what, j < n2 ? "A's" : "B's",
                   j < n2 ? j : j - n2);
            kinks++;
        }
    mbs_stepper_restore(st, saved, n, NULL);
    return kinks;
}

/* Analytical against differences, the second-order prediction, an untouched state. */
static void check_analytical_with(const char *scheme, int which, double dt, const char *key, const char *value);

static void check_analytical(const char *scheme, int which, double dt) { check_analytical_with(scheme, which, dt, NULL, NULL); }

/* The same with one option of the scheme set (key = value; NULL: none). */
static void check_analytical_with(const char *scheme, int which, double dt, const char *key, const char *value)
{
    mbs_error err;
    mbs_system *s = solo_in(which, 11 + (unsigned long long)which);
    CHECK(s != NULL, "system");
    if (!s) return;
    /* Newton solved far below what differences of 1e-6 resolve */
    mbs_option opt;
    int nopt = 0;
    if (strcmp(scheme, "implicit_euler") == 0) opt = tm_opt("tol", "1e-12"), nopt = 1;
    else if (key) opt = tm_opt(key, value), nopt = 1;
    mbs_stepper *st = mbs_stepper_new(scheme, s, nopt ? &opt : NULL, nopt, &err);
    CHECK(st != NULL, "%s: %s", scheme, err.msg);
    if (!st) { mbs_system_free(s); return; }
    const int nq = mbs_model_nq(solo), nv = mbs_model_nv(solo), n2 = 2 * nv;
    double *A = calloc((size_t)n2 * n2, 8), *B = calloc((size_t)n2 * nv, 8);
    double *Af = calloc((size_t)n2 * n2, 8), *Bf = calloc((size_t)n2 * nv, 8);
    char what[64];
    snprintf(what, sizeof what, "%-16s %-8s%s%s%s", scheme, STATE_NAME[which], key ? " " : "", key ? key : "",
             key ? (strcmp(value, "start") == 0 ? "=start" : "=pade") : "");
    /* the state and the unperturbed step's result */
    size_t n = mbs_stepper_state_size(st);
    unsigned char *saved = malloc(n);
    mbs_stepper_save(st, saved, n, NULL);
    double *q1 = malloc(sizeof(double) * (size_t)nq), *v1 = malloc(sizeof(double) * (size_t)nv);
    mbs_stepper_step(st, dt, NULL);
    memcpy(q1, mbs_system_q(s), sizeof(double) * (size_t)nq);
    memcpy(v1, mbs_system_v(s), sizeof(double) * (size_t)nv);
    mbs_stepper_restore(st, saved, n, NULL);

    CHECK(mbs_stepper_has_analytical_derivatives(st), "%s: no analytical derivatives", scheme);
    CHECK(mbs_stepper_derivatives(st, dt, MBS_DERIVATIVES_ANALYTICAL, NULL, 0, A, B) == MBS_OK, "%s: %s", scheme,
          mbs_stepper_last_error(st)->msg);
    unsigned char kink[128] = {0};
    int kinks = fd_reference(st, s, saved, n, dt, q1, v1, Af, Bf, kink, what);
    CHECK(kinks <= 3, "%s: %d columns where the step map has a kink", what, kinks);
    for (int c = 0; c < n2; c++)
        if (kink[c])
            for (int r = 0; r < n2; r++) Af[r + (size_t)n2 * c] = A[r + (size_t)n2 * c];
    for (int c = 0; c < nv; c++)
        if (kink[n2 + c])
            for (int r = 0; r < n2; r++) Bf[r + (size_t)n2 * c] = B[r + (size_t)n2 * c];
    double ea = rel_err(A, Af, (size_t)n2 * n2), eb = rel_err(B, Bf, (size_t)n2 * nv);
    printf("  %s dt %g: |A - A_fd| %.1e, |B - B_fd| %.1e (relative to the largest entry)\n", what, dt, ea, eb);
    CHECK(ea <= 1e-6 && eb <= 1e-6, "%s: analytical vs differences: A %.2e, B %.2e", what, ea, eb);

    /* the call leaves everything as it was: the step after it is bitwise the step without it */
    mbs_stepper_derivatives(st, dt, MBS_DERIVATIVES_AUTO, NULL, 0, A, B);
    mbs_stepper_step(st, dt, NULL);
    CHECK(memcmp(q1, mbs_system_q(s), sizeof(double) * (size_t)nq) == 0 &&
              memcmp(v1, mbs_system_v(s), sizeof(double) * (size_t)nv) == 0,
          "%s: the step after mbs_stepper_derivatives differs from the step without it", scheme);
    mbs_stepper_restore(st, saved, n, NULL);

    /* second order: ‖x⁺(x ⊕ εδx, τ + εδτ) − x⁺ − ε (A δx + B δτ)‖ = O(ε²) */
    unsigned long long seed = 5;
    double dx[128], dtau[64], out[128], e[3];
    for (int k = 0; k < n2; k++) dx[k] = kink[k] ? 0 : tm_uniform(&seed, -1, 1);   /* along the smooth directions */
    for (int k = 0; k < nv; k++) dtau[k] = kink[n2 + k] ? 0 : tm_uniform(&seed, -1, 1);
    const double eps0 = which == AIR ? 1e-2 : 1e-4;
    for (int i = 0; i < 3; i++) {
        double eps = eps0 / (1 << i), m = 0;
        perturbed_step(st, s, saved, n, dt, eps, dx, dtau, q1, v1, out);
        for (int r = 0; r < n2; r++) {
            double lin = 0;
            for (int c = 0; c < n2; c++) lin += A[r + (size_t)n2 * c] * dx[c];
            for (int c = 0; c < nv; c++) lin += B[r + (size_t)n2 * c] * dtau[c];
            m = check_worst(m, fabs(out[r] - eps * lin));
        }
        e[i] = m;
    }
    double r1 = e[0] / e[1], r2 = e[1] / e[2];
    printf("  %-16s %-8s prediction error at eps, eps/2, eps/4: %.2e %.2e %.2e (ratios %.2f %.2f)\n", scheme,
           STATE_NAME[which], e[0], e[1], e[2], r1, r2);
    /* rk4 from a sliding state: the first stage's update moves each slipping anchor so that its
     * spring gives the force on the cone's edge (eq. 28), and the later stages evaluate the forces
     * right there, where the cone's projection has a kink: the step is smooth only within ~1e-6 of
     * the state (its Jacobian matches the differences above), and the perturbations of 1e-4 here
     * cross the edge. The order is checked in the other states. */
    int smooth = !(which == SLIDE && strcmp(scheme, "rk4") == 0);
    CHECK(!smooth || (r1 > 3 && r1 < 5 && r2 > 3 && r2 < 5),
          "%s %s: the prediction error does not fall as eps² (ratios %.2f %.2f)", scheme, STATE_NAME[which], r1, r2);
    mbs_stepper_restore(st, saved, n, NULL);
    free(saved); free(q1); free(v1);
    free(A); free(B); free(Af); free(Bf);
    mbs_stepper_free(st);
    mbs_system_free(s);
}

static void test_analytical(void)
{
    static const char *const schemes[] = {"euler", "symplectic_euler", "rk4", "implicit_euler", "expo"};
    for (size_t i = 0; i < sizeof schemes / sizeof *schemes; i++)
        for (int w = 0; w < NSTATES; w++)
            /* rk4 on rolling spheres: test_rk4_unstable */
            if (!(strcmp(schemes[i], "rk4") == 0 && w == SPHERES)) check_analytical(schemes[i], w, 1e-3);
    /* the exponential integrator at the steps MPC takes it at (10 ms) */
    check_analytical("expo", STAND, 1e-2);
    check_analytical("expo", AIR, 1e-2);
    /* the paper's linearisation at the step's start; Padé, whose steps take differences */
    check_analytical_with("expo", STAND, 1e-3, "linearise", "start");
    check_analytical_with("expo", SPHERES, 1e-2, "linearise", "start");
    check_analytical_with("expo", STAND, 1e-3, "method", "pade");
    check_analytical("expo", CLUSTERS, 1e-3);
    check_analytical("expo", CLUSTERS, 1e-2);
}

/* rk4 on Solo's rolling spheres at 1 ms is outside its stability region: the lower legs are light
 * (0.04 kg with the foot) on 1e5 N/m and 300 N s/m. Its later stages magnify a perturbation of the
 * state so much (A's largest entry is printed) that a small one already carries a stage's force
 * across its friction cone: the step is smooth only that close to the state, so check_analytical's
 * second-order prediction (perturbations of 1e-4) and plain central differences at 1e-6 cross the
 * switch (their disagreement is printed). The Jacobian is checked against the library's
 * extrapolated differences, which shrink h while successive estimates disagree (derivatives.c,
 * converged_column); and five steps of rk4 from the state are printed, the speed they reach. */
static void test_rk4_unstable(void)
{
    mbs_error err;
    mbs_system *s = solo_in(SPHERES, 11 + (unsigned long long)SPHERES);
    mbs_stepper *st = s ? mbs_stepper_new("rk4", s, NULL, 0, &err) : NULL;
    CHECK(st != NULL, "rk4 on spheres");
    if (!st) { mbs_system_free(s); return; }
    const int nv = mbs_model_nv(solo), n2 = 2 * nv;
    double *A = calloc((size_t)n2 * n2, 8), *B = calloc((size_t)n2 * nv, 8);
    double *Af = calloc((size_t)n2 * n2, 8), *Bf = calloc((size_t)n2 * nv, 8);
    CHECK(mbs_stepper_derivatives(st, 1e-3, MBS_DERIVATIVES_ANALYTICAL, NULL, 0, A, B) == MBS_OK, "rk4: %s",
          mbs_stepper_last_error(st)->msg);
    CHECK(mbs_stepper_derivatives(st, 1e-3, MBS_DERIVATIVES_EXTRAPOLATED, NULL, 0, Af, Bf) == MBS_OK, "rk4: %s",
          mbs_stepper_last_error(st)->msg);
    double ea = rel_err(A, Af, (size_t)n2 * n2), eb = rel_err(B, Bf, (size_t)n2 * nv), amax = 0;
    for (size_t e = 0; e < (size_t)n2 * n2; e++) amax = fmax(amax, fabs(A[e]));
    printf("  rk4 on spheres dt 0.001: largest |A| entry %.2e; against converged extrapolated differences "
           "|A - A_fd| %.1e, |B - B_fd| %.1e\n", amax, ea, eb);
    CHECK(ea <= 1e-6 && eb <= 1e-6, "rk4 on spheres: analytical vs extrapolated differences: A %.2e, B %.2e", ea, eb);
    CHECK(mbs_stepper_derivatives(st, 1e-3, MBS_DERIVATIVES_CENTRAL, NULL, 0, Af, Bf) == MBS_OK, "rk4: %s",
          mbs_stepper_last_error(st)->msg);
    printf("  the same against plain central differences at 1e-6: |A - A_fd| %.1e\n", rel_err(A, Af, (size_t)n2 * n2));
    double vmax[6];
    for (int k = 0; k <= 5; k++) {
        const double *v = mbs_system_v(s);
        vmax[k] = 0;
        for (int i = 0; i < nv; i++) vmax[k] = fmax(vmax[k], fabs(v[i]));
        if (k < 5) mbs_stepper_step(st, 1e-3, NULL);
    }
    printf("  rk4 stepped from it: largest |v| %.2g, then %.2g %.2g %.2g %.2g %.2g (m/s, rad/s)\n", vmax[0], vmax[1], vmax[2],
           vmax[3], vmax[4], vmax[5]);
    free(A); free(B); free(Af); free(Bf);
    mbs_stepper_free(st);
    mbs_system_free(s);
}

/* Every scheme: forward and central differences agree to what forward differences can, B's chosen
 * columns are those of the whole B, and the call allocates nothing. */
static void test_every_scheme(void)
{
    ALLOC_GUARD();
    const int nv = mbs_model_nv(solo), n2 = 2 * nv;
    double *A = calloc((size_t)n2 * n2, 8), *B = calloc((size_t)n2 * nv, 8);
    double *Af = calloc((size_t)n2 * n2, 8), *Bf = calloc((size_t)n2 * nv, 8), *Bc = calloc((size_t)n2 * nv, 8);
    int cols[12];
    for (int k = 0; k < 12; k++) cols[k] = 6 + k;
    for (int i = 0; i < mbs_stepper_count(); i++) {
        const char *name = mbs_stepper_at(i)->name;
        mbs_error err;
        mbs_system *s = solo_in(STAND, 3);
        mbs_stepper *st = s ? mbs_stepper_new(name, s, NULL, 0, &err) : NULL;
        CHECK(st != NULL, "%s: %s", name, err.msg);
        if (!st) { mbs_system_free(s); continue; }
        double dt = 1e-3;
        long before = allocations;
        int rc = mbs_stepper_derivatives(st, dt, MBS_DERIVATIVES_CENTRAL, NULL, 0, Af, Bf);
        rc |= mbs_stepper_derivatives(st, dt, MBS_DERIVATIVES_FORWARD, NULL, 0, A, B);
        rc |= mbs_stepper_derivatives(st, dt, MBS_DERIVATIVES_AUTO, cols, 12, A, Bc);
        long made = allocations - before;
        CHECK(rc == MBS_OK, "%s: %s", name, mbs_stepper_last_error(st)->msg);
        CHECK(made == 0, "%s: mbs_stepper_derivatives allocated %ld times", name, made);
        mbs_stepper_derivatives(st, dt, MBS_DERIVATIVES_FORWARD, NULL, 0, A, B);
        double ea = rel_err(A, Af, (size_t)n2 * n2), eb = rel_err(B, Bf, (size_t)n2 * nv);
        printf("  %-16s standing: forward vs central differences: A %.1e, B %.1e\n", name, ea, eb);
        CHECK(ea < 1e-3 && eb < 1e-3, "%s: forward and central differences disagree: A %.2e, B %.2e", name, ea, eb);
        mbs_stepper_derivatives(st, dt, MBS_DERIVATIVES_AUTO, NULL, 0, A, B);
        CHECK(rel_err(Bc, B + (size_t)n2 * 6, (size_t)n2 * 12) == 0, "%s: B's columns 6.. differ from the whole B's", name);
        /* columns in any order, and A alone (a scheme may compute only what is asked) */
        static const int some[3] = {17, 6, 9};
        CHECK(mbs_stepper_derivatives(st, dt, MBS_DERIVATIVES_AUTO, some, 3, Af, Bc) == MBS_OK, "%s: 3 columns", name);
        double es = 0;
        for (int j = 0; j < 3; j++) es = fmax(es, rel_err(Bc + (size_t)n2 * j, B + (size_t)n2 * some[j], (size_t)n2));
        CHECK(es <= 1e-13, "%s: B's columns 17, 6, 9 asked alone differ from the whole B's by %.2e", name, es);
        CHECK(mbs_stepper_derivatives(st, dt, MBS_DERIVATIVES_AUTO, NULL, 0, Af, NULL) == MBS_OK, "%s: A alone", name);
        CHECK(rel_err(Af, A, (size_t)n2 * n2) <= 1e-13, "%s: A asked alone differs from A with B by %.2e", name,
              rel_err(Af, A, (size_t)n2 * n2));
        mbs_stepper_free(st);
        mbs_system_free(s);
    }
    free(A); free(B); free(Af); free(Bf); free(Bc);
}

/* The dissipation v ← (1 − λ) v (mbs_stepper_set_dissipation) in the Jacobians of expo's two
 * paths: its chain rule (the closed form, method = modal) and its fallback to differences (Padé;
 * forward ones, as MBS_DERIVATIVES_AUTO takes them), each
 * against central differences of the whole step, λ = 0.1; and the fallback's B columns asked
 * alone equal those of the whole B. The fallback once took the dissipation twice, in its
 * steps and again on the velocity rows (a tenth off there). */
static void test_dissipation(void)
{
    const int nv = mbs_model_nv(solo), n2 = 2 * nv;
    double *A = calloc((size_t)n2 * n2, 8), *B = calloc((size_t)n2 * nv, 8);
    double *Af = calloc((size_t)n2 * n2, 8), *Bf = calloc((size_t)n2 * nv, 8), *Bc = calloc((size_t)n2 * nv, 8);
    int cols[12];
    for (int k = 0; k < 12; k++) cols[k] = 6 + k;
    static const char *const method[2] = {"modal", "pade"};
    for (int k = 0; k < 2; k++) {
        mbs_error err;
        mbs_system *s = solo_in(STAND, 5);
        mbs_option opt = tm_opt("method", method[k]);
        mbs_stepper *st = s ? mbs_stepper_new("expo", s, &opt, 1, &err) : NULL;
        CHECK(st != NULL, "expo method=%s: %s", method[k], err.msg);
        if (!st) { mbs_system_free(s); continue; }
        CHECK(mbs_stepper_set_dissipation(st, 0.1) == MBS_OK, "set_dissipation");
        const double dt = 1e-3;
        int rc = mbs_stepper_derivatives(st, dt, MBS_DERIVATIVES_CENTRAL, NULL, 0, Af, Bf);
        rc |= mbs_stepper_derivatives(st, dt, MBS_DERIVATIVES_AUTO, NULL, 0, A, B);
        rc |= mbs_stepper_derivatives(st, dt, MBS_DERIVATIVES_AUTO, cols, 12, A, Bc);
        CHECK(rc == MBS_OK, "expo method=%s: %s", method[k], mbs_stepper_last_error(st)->msg);
        double ea = rel_err(A, Af, (size_t)n2 * n2), eb = rel_err(B, Bf, (size_t)n2 * nv);
        printf("  expo method=%-6s dissipation 0.1: A %.1e, B %.1e against central differences\n", method[k], ea, eb);
        CHECK(ea < 1e-4 && eb < 1e-4, "expo method=%s with dissipation: A %.2e, B %.2e", method[k], ea, eb);
        CHECK(rel_err(Bc, B + (size_t)n2 * 6, (size_t)n2 * 12) == 0, "expo method=%s: B's columns 6.. differ", method[k]);
        mbs_stepper_free(st);
        mbs_system_free(s);
    }
    free(A); free(B); free(Af); free(Bf); free(Bc);
}

/* The classical acceleration of a body point: its derivatives in q (tangent) and v against central
 * differences of mbs_frame_classical_acceleration, on random states of Solo. */
static void test_point_acceleration(void)
{
    const int nq = mbs_model_nq(solo), nv = mbs_model_nv(solo);
    mbs_data *d = mbs_data_new(solo);
    double q[32], v[32], a[32], tau[32], q1[32], dq[32], J6[6 * 32], P[3 * 32], Aq[3 * 32], Av[3 * 32], work[18 * 40];
    int support[32];
    unsigned long long seed = 9;
    const double off[3] = {0.01, -0.02, 0.005}, h = 1e-6;
    int frame = mbs_frame_id(solo, "HR_FOOT"), body = mbs_frame_body(solo, frame);
    double worst = 0;
    for (int trial = 0; trial < 5; trial++) {
        tm_random_state(solo, &seed, q, v, a, tau);
        mbs_forward_kinematics(solo, d, q, v, a);
        double R[9], pf[3], p[3];
        mbs_frame_placement(solo, d, frame, R, pf);
        for (int r = 0; r < 3; r++) p[r] = pf[r] + R[r] * off[0] + R[r + 3] * off[1] + R[r + 6] * off[2];
        mbs_compute_joint_jacobians(solo, d, q);
        mbs_frame_jacobian(solo, d, frame, off, MBS_LOCAL_WORLD_ALIGNED, J6, 6);
        int n = mbsi_body_support(solo, body, support);
        for (int e = 0; e < n; e++)
            for (int r = 0; r < 3; r++) P[3 * e + r] = J6[r + 6 * support[e]];
        mbsi_point_acceleration_derivatives(solo, d, support, n, p, P, v, a, Aq, Av, work);
        for (int e = 0; e < n; e++) {
            int k = support[e];
            double ap[6], am[6];
            for (int side = 0; side < 2; side++) {
                double *o = side ? am : ap, sg = side ? -h : h;
                memset(dq, 0, sizeof dq);
                dq[k] = sg;
                mbs_integrate(solo, q, dq, q1);
                mbs_forward_kinematics(solo, d, q1, v, a);
                mbs_frame_classical_acceleration(solo, d, frame, off, MBS_LOCAL_WORLD_ALIGNED, o);
            }
            for (int r = 0; r < 3; r++) worst = check_worst(worst, fabs((ap[r] - am[r]) / (2 * h) - Aq[3 * e + r]));
            for (int side = 0; side < 2; side++) {
                double *o = side ? am : ap, vv[32];
                memcpy(vv, v, sizeof(double) * (size_t)nv);
                vv[k] += side ? -h : h;
                mbs_forward_kinematics(solo, d, q, vv, a);
                mbs_frame_classical_acceleration(solo, d, frame, off, MBS_LOCAL_WORLD_ALIGNED, o);
            }
            for (int r = 0; r < 3; r++) worst = check_worst(worst, fabs((ap[r] - am[r]) / (2 * h) - Av[3 * e + r]));
        }
    }
    (void)nq;
    printf("  point acceleration derivatives: worst error against central differences %.1e\n", worst);
    CHECK(worst < 1e-6, "point acceleration derivatives: %.2e", worst);
    mbs_data_free(d);
}

/* Bad arguments are refused with a message that says what to pass. */
static void test_arguments(void)
{
    mbs_error err;
    mbs_system *s = solo_in(AIR, 1);
    mbs_stepper *st = mbs_stepper_new("expo", s, NULL, 0, &err);
    const int nv = mbs_model_nv(solo), n2 = 2 * nv;
    double *A = calloc((size_t)n2 * n2, 8), *B = calloc((size_t)n2 * nv, 8);
    int bad = nv;
    CHECK(mbs_stepper_derivatives(st, 1e-3, MBS_DERIVATIVES_AUTO, NULL, 0, NULL, B) == MBS_ERR_ARG &&
              strstr(mbs_stepper_last_error(st)->msg, "A is NULL"), "A NULL: '%s'", mbs_stepper_last_error(st)->msg);
    CHECK(mbs_stepper_derivatives(st, -1, MBS_DERIVATIVES_AUTO, NULL, 0, A, B) == MBS_ERR_ARG, "dt < 0 accepted");
    CHECK(mbs_stepper_derivatives(st, 1e-3, MBS_DERIVATIVES_AUTO, &bad, 1, A, B) == MBS_ERR_ARG &&
              strstr(mbs_stepper_last_error(st)->msg, "cols[0]"), "bad column: '%s'", mbs_stepper_last_error(st)->msg);
    CHECK(mbs_stepper_has_analytical_derivatives(st) ||
              (mbs_stepper_derivatives(st, 1e-3, MBS_DERIVATIVES_ANALYTICAL, NULL, 0, A, B) == MBS_ERR_ARG &&
               strstr(mbs_stepper_last_error(st)->msg, "FORWARD")),
          "analytical asked of a scheme without: '%s'", mbs_stepper_last_error(st)->msg);
    free(A); free(B);
    mbs_stepper_free(st);
    mbs_system_free(s);
}

/* Scheme `name` on a system of m (no contacts) at (q, v) with passive damping (NULL: none), and
 * its analytical step derivatives at 1 ms checked against central differences to tol (schemes
 * that have them). NULL when the scheme cannot be made (a failed check). */
static mbs_stepper *air_stepper(const char *name, const mbs_model *m, const double *q, const double *v,
                                const double *damping, double tol, mbs_system **out)
{
    mbs_error err;
    const int nv = mbs_model_nv(m), n2 = 2 * nv;
    mbs_system *s = mbs_system_new(m, 0, &err);
    mbs_stepper *st = NULL;
    if (s && mbs_system_finalize(s, &err) == MBS_OK) {
        mbs_system_set_state(s, q, v, 0);
        mbs_system_set_joint_damping(s, damping);
        st = mbs_stepper_new(name, s, NULL, 0, &err);
    }
    CHECK(st != NULL, "%s on %s: %s", name, mbs_model_name(m), err.msg);
    if (!st) { mbs_system_free(s); return NULL; }
    if (mbs_stepper_has_analytical_derivatives(st)) {
        double *A = calloc((size_t)n2 * n2, 8), *B = calloc((size_t)n2 * nv, 8);
        double *Af = calloc((size_t)n2 * n2, 8), *Bf = calloc((size_t)n2 * nv, 8);
        int rc = mbs_stepper_derivatives(st, 1e-3, MBS_DERIVATIVES_ANALYTICAL, NULL, 0, A, B);
        rc |= mbs_stepper_derivatives(st, 1e-3, MBS_DERIVATIVES_CENTRAL, NULL, 0, Af, Bf);
        double ea = rel_err(A, Af, (size_t)n2 * n2), eb = rel_err(B, Bf, (size_t)n2 * nv);
        CHECK(rc == MBS_OK && ea < tol && eb < tol, "%s on %s: analytical vs central differences: A %.2e, B %.2e", name,
              mbs_model_name(m), ea, eb);
        /* ∂v'/∂v of the first coordinate: below 1 by c dt / I when that joint is damped */
        if (damping) CHECK(A[(size_t)n2 * nv + nv] < 1 - 0.9 * damping[0] * 1e-3 / 0.06, "%s: ∂v'/∂v = %.9f does not see the damping",
                           name, A[(size_t)n2 * nv + nv]);
        free(A); free(B); free(Af); free(Bf);
    }
    *out = s;
    return st;
}

/* A fixed-base chain of ball, revolute and ball joints with rotors (armature), swinging in the
 * air: every scheme keeps its energy to its order (rk4 closely), and
 * the analytical step derivatives agree with central differences, as on Solo's free-flyer. */
static void test_ball_chain(void)
{
    static const double Rz[9] = {1, 0, 0, 0, 1, 0, 0, 0, 1}, down[3] = {0, 0, -0.25}, ax[3] = {0, 1, 0.3};
    mbs_model *m = mbs_model_new("ball_chain");
    int b0 = mbs_model_add_joint(m, -1, MBS_JOINT_BALL, "shoulder", Rz, NULL, NULL, NULL);
    int b1 = mbs_model_add_joint(m, b0, MBS_JOINT_REVOLUTE, "elbow", Rz, down, ax, NULL);
    int b2 = mbs_model_add_joint(m, b1, MBS_JOINT_BALL, "wrist", Rz, down, NULL, NULL);
    unsigned long long si = 3;
    tm_random_inertia(m, b0, &si, 0.1, 0.05);
    tm_random_inertia(m, b1, &si, 0.1, 0.05);
    tm_random_inertia(m, b2, &si, 0.1, 0.05);
    mbs_error err;
    CHECK(mbs_model_finalize(m, &err) == MBS_OK, "finalize: %s", err.msg);
    const double arm3[3] = {0.002, 0.003, 0.001}, arm1 = 0.004;
    mbs_model_set_armature(m, b0, arm3);
    mbs_model_set_armature(m, b1, &arm1);
    mbs_model_set_armature(m, b2, arm3);
    const int nq = mbs_model_nq(m), nv = mbs_model_nv(m);
    CHECK(nq == 9 && nv == 7, "nq %d nv %d", nq, nv);
    mbs_data *d = mbs_data_new(m);
    double q0[9], v0[7];
    unsigned long long seed = 17;
    tm_random_state(m, &seed, q0, v0, NULL, NULL);
    const double e0 = mbs_kinetic_energy(m, d, q0, v0) + mbs_potential_energy(m, d, q0);
    for (int i = 0; i < mbs_stepper_count(); i++) {
        const char *name = mbs_stepper_at(i)->name;
        mbs_system *s;
        mbs_stepper *st = air_stepper(name, m, q0, v0, NULL, 1e-6, &s);
        if (!st) continue;
        int ok = 1;
        for (int k = 0; k < 500 && ok; k++) ok = mbs_stepper_step(st, 1e-3, NULL) == MBS_OK;
        double e = mbs_kinetic_energy(m, d, mbs_system_q(s), mbs_system_v(s)) + mbs_potential_energy(m, d, mbs_system_q(s));
        double drift = fabs(e - e0) / fmax(1e-3, fabs(e0));
        printf("  %-16s ball chain, 0.5 s at 1 ms: energy drift %.1e\n", name, drift);
        /* first-order schemes drift ~dt·t (the variational integrator's velocity is the last
         * step's mean, off by O(dt) too); rk4 keeps the energy to ~1e-10 */
        int tight = strcmp(name, "rk4") == 0;
        CHECK(ok && drift < (tight ? 1e-8 : 0.1), "%s, ball chain: %s, energy drift %.2e", name,
              ok ? "stepped" : mbs_stepper_last_error(st)->msg, drift);
        mbs_stepper_free(st);
        mbs_system_free(s);
    }
    mbs_data_free(d);
    mbs_model_free(m);
}

/* Passive joint damping: a wheel on a revolute joint (no gravity) spun at w0 slows as
 * w0 exp(−c t / (I + armature)) under every scheme, and the analytical step derivatives see it. */
static void test_joint_damping(void)
{
    static const double z[3] = {0, 0, 1}, g0[3] = {0, 0, 0};
    /* a wheel on a revolute axle, then a ball of isotropic inertia on a ball joint (no gyroscopic
     * term: each component of ω decays alone), spun about an oblique axis */
    static const double Iw[9] = {0.02, 0, 0, 0, 0.02, 0, 0, 0, 0.05}, Ib[9] = {0.05, 0, 0, 0, 0.05, 0, 0, 0, 0.05};
    for (int ball = 0; ball <= 1; ball++) {
        mbs_model *m = mbs_model_new(ball ? "ball" : "wheel");
        int b = mbs_model_add_joint(m, -1, ball ? MBS_JOINT_BALL : MBS_JOINT_REVOLUTE, "axle", NULL, NULL, z, NULL);
        mbs_model_add_inertia(m, b, 1.0, g0, ball ? Ib : Iw, NULL);
        mbs_error err;
        CHECK(mbs_model_finalize(m, &err) == MBS_OK, "finalize: %s", err.msg);
        mbs_model_set_gravity(m, g0);
        const double arm[3] = {0.01, 0.01, 0.01}, c[3] = {0.3, 0.3, 0.3}, I = 0.05 + arm[0], T = 0.2;
        const double w0[3] = {2.0, -1.0, 0.5}, q0[4] = {0, 0, 0, 1};
        const int n = ball ? 3 : 1;
        mbs_model_set_armature(m, b, arm);
        for (int i = 0; i < mbs_stepper_count(); i++) {
            const char *name = mbs_stepper_at(i)->name;
            mbs_system *s;
            mbs_stepper *st = air_stepper(name, m, q0 + (ball ? 0 : 3), w0, c, 1e-7, &s);
            if (!st) continue;
            for (int k = 0; k < 2000; k++) mbs_stepper_step(st, 1e-4, NULL);
            for (int k = 0; k < n; k++) {
                double w = mbs_system_v(s)[k], exact = w0[k] * exp(-c[k] * T / I);
                CHECK(fabs(w - exact) < 1e-3 * fabs(exact), "%s, damped %s: w%d(%.1f s) = %.6f, exact %.6f", name, mbs_model_name(m),
                      k, T, w, exact);
            }
            mbs_stepper_free(st);
            mbs_system_free(s);
        }
        mbs_model_free(m);
    }
}

int main(void)
{
    mbs_error err;
    solo = mbs_model_from_urdf(tm_path("urdf/solo12.urdf"), NULL, &err);
    CHECK(solo != NULL, "solo12: %s", err.msg);
    if (!solo) return check_summary("derivatives");
    RUN(test_point_acceleration);
    RUN(test_arguments);
    RUN(test_analytical);
    RUN(test_rk4_unstable);
    RUN(test_every_scheme);
    RUN(test_dissipation);
    RUN(test_ball_chain);
    RUN(test_joint_damping);
    mbs_model_free(solo);
    return check_summary("derivatives");
}
