/* limb_ik.c — numeric inverse kinematics of any serial limb: the one-coordinate joints between
 * the base and a foot frame, solved for the foot point's position in the base frame and,
 * for a round foot, for the foot's tilt as well. The analytic leg IK (leg_ik.c) serves
 * Solo-type three-joint legs; a limb with more joints (Robosimian's: seven revolute joints
 * before the wheel) is redundant, so the solution is chosen by a secondary task: stay as close
 * as possible to the limb's rest posture (the initial one).
 *
 * Why the tilt: a round foot (a sphere contact) rolls when its link tilts, and rolling moves
 * its centre over the ground by the radius times the angle, although its contact point does
 * not slide; a limb whose foot link tilts as the body moves over it would walk its feet away
 * (Robosimian's 0.12 m wheels: 4 to 5 cm per stance in a crawl whose body sways 0.2 m). So a
 * round foot's task holds the foot frame's tilt (its rotation about the base's horizontal
 * axes) at rest; its rotation about the vertical is left free, as spinning a ball in place
 * moves nothing.
 *
 * Each iteration (x the limb's angles, e the task error: position p − f(x), then for a round
 * foot the tilt error; J = ∂task/∂x its m x n Jacobian, m = 3 or 5; d = x_rest − x):
 *   Δx = Jᵀ (J Jᵀ + λ² I)⁻¹ e  +  β (I − Jᵀ (J Jᵀ + ε I)⁻¹ J) d
 * the damped least-squares step towards the target (Wampler 1986; Nakamura & Hanafusa 1986),
 * plus the step towards the rest posture projected onto the null space of J. The projector
 * uses a negligible ε, not λ: with the damped inverse in the projector the fixed point would
 * be a compromise, e = λ² (J Jᵀ)⁻¹ J d ≠ 0, the foot missing the target by ~λ². With it exact,
 * a fixed point has J Δx = 0, hence e = 0, and N d = 0: the foot on the target, and the
 * posture closest to rest among those that put it there (first-order optimality of
 * min |x − x_rest|² subject to the task). The result is then a function of the target alone,
 * not of where the iteration started, so warm-starting from the last solution (what makes it
 * cheap: one or two iterations per call in a gait) changes nothing but the cost, and central
 * differences of the solution are smooth.
 *
 * An unreachable target stalls that iteration: the posture term keeps bending the limb away
 * from the stretched configuration the target asks for. Then the posture term is dropped and
 * Levenberg–Marquardt finishes, which converges to a local minimum of |e| (Jᵀe = 0): the
 * target clamped onto the workspace boundary.
 *
 * The kinematics are the library's own (mbs_compute_frame_jacobian on a configuration whose
 * base sits at the origin, so that world coordinates are base coordinates), in a data and
 * buffers carved at init: a solve allocates nothing. */
#include <stdio.h>
#include <stdlib.h>

#include "control_internal.h"

#define IK_TOL 1e-11           /* m, rad: the task error at convergence (the task asks 1e-9 m) */
#define IK_STEP_TOL 1e-10      /* rad: and the last step */
#define IK_MAX_POSTURE 0.3     /* rad: the largest change of one joint by the posture term */
#define IK_MAX_STEP 0.3        /* rad: the largest change of one joint per iteration */
#define IK_ITER_POSTURE 200    /* iterations with the rest-posture term */
#define IK_ITER_CLAMP 200      /* then Levenberg–Marquardt towards the closest point */
#define MAXM 5                 /* task rows: position, and tilt about x and y */

static void layout(mbs_carver *c, mbs_limb *l, int nq, int nv)
{
    l->q = mbsi_carve_doubles(c, (size_t)nq + 1);
    l->J = mbsi_carve_doubles(c, 6 * (size_t)nv + 1);
}

/* Kinematics at angles x: the foot point p and the foot frame's rotation R (base frame), and
 * with `jacobian` the point's 6 x nv Jacobian (world-aligned axes) in l->J. */
static void kinematics(mbs_limb *l, const double *x, double p[3], double R[9], int jacobian)
{
    const mbs_model *m = l->m;
    double o[3];
    for (int k = 0; k < l->n; k++) l->q[l->idx_q[k]] = x[k];
    if (jacobian) {
        mbs_compute_frame_jacobian(m, l->d, l->q, l->foot_frame, l->offset, MBS_LOCAL_WORLD_ALIGNED, l->J, 6);
        mbs_frame_placement(m, l->d, l->foot_frame, R, o);
    } else
        mbs_compute_frame_placement(m, l->d, l->q, l->foot_frame, R, o);
    /* the foot point: the frame's origin moved by the offset, in the frame's axes */
    for (int r = 0; r < 3; r++) p[r] = o[r] + R[r] * l->offset[0] + R[r + 3] * l->offset[1] + R[r + 6] * l->offset[2];
}

/* The task at x for target p: its error e (l->m rows) and, when J is not NULL, its Jacobian
 * (m x n, column-major). The tilt error is the x and y components of the rotation vector
 * taking the current foot rotation to the rest one, from the skew part of R_rest Rᵀ (exact
 * at the fixed point, where it vanishes). */
static void task(mbs_limb *l, const double *x, const double p[3], double *e, double *J)
{
    double f[3], R[9];
    kinematics(l, x, f, R, J != NULL);
    for (int r = 0; r < 3; r++) e[r] = p[r] - f[r];
    if (l->rows == 5) {
        /* E = R_rest Rᵀ; (E − Eᵀ)/2 = [w]x with w ≈ the rotation still to make */
        double E[9];
        for (int i = 0; i < 3; i++)
            for (int j = 0; j < 3; j++) {
                double s = 0;
                for (int k = 0; k < 3; k++) s += l->rest_R[i + 3 * k] * R[j + 3 * k];
                E[i + 3 * j] = s;
            }
        e[3] = 0.5 * (E[2 + 3 * 1] - E[1 + 3 * 2]);
        e[4] = 0.5 * (E[0 + 3 * 2] - E[2 + 3 * 0]);
    }
    if (!J) return;
    for (int k = 0; k < l->n; k++) {
        const double *Jk = l->J + 6 * (size_t)l->idx_v[k];
        for (int r = 0; r < 3; r++) J[r + l->rows * k] = Jk[r];
        if (l->rows == 5) { J[3 + 5 * k] = Jk[3]; J[4 + 5 * k] = Jk[4]; }
    }
}

static double norm(const double *e, int m)
{
    double s = 0;
    for (int r = 0; r < m; r++) s += e[r] * e[r];
    return sqrt(s);
}

/* x = A⁻¹ b for an m x m symmetric positive definite A (column-major, m <= MAXM), by Cholesky. */
static void solve(const double *A, int m, const double *b, double *x)
{
    double L[MAXM * MAXM] = {0}, y[MAXM];
    for (int j = 0; j < m; j++) {
        double s = A[j + m * j];
        for (int k = 0; k < j; k++) s -= L[j + m * k] * L[j + m * k];
        L[j + m * j] = sqrt(s > 1e-300 ? s : 1e-300);
        for (int i = j + 1; i < m; i++) {
            double t = A[i + m * j];
            for (int k = 0; k < j; k++) t -= L[i + m * k] * L[j + m * k];
            L[i + m * j] = t / L[j + m * j];
        }
    }
    for (int i = 0; i < m; i++) {
        double s = b[i];
        for (int k = 0; k < i; k++) s -= L[i + m * k] * y[k];
        y[i] = s / L[i + m * i];
    }
    for (int i = m - 1; i >= 0; i--) {
        double s = y[i];
        for (int k = i + 1; k < m; k++) s -= L[k + m * i] * x[k];
        x[i] = s / L[i + m * i];
    }
}

/* J Jᵀ (m x m) and its mean diagonal. */
static double gram(const double *J, int m, int n, double *A)
{
    double tr = 0;
    for (int r = 0; r < m; r++)
        for (int s = 0; s < m; s++) {
            double a = 0;
            for (int k = 0; k < n; k++) a += J[r + m * k] * J[s + m * k];
            A[r + m * s] = a;
        }
    for (int r = 0; r < m; r++) tr += A[r + m * r];
    return tr / m + 1e-300;
}

/* Jᵀ y into dx (n), added to it when add. */
static void jt_mul(const double *J, int m, int n, const double *y, double *dx, int add)
{
    for (int k = 0; k < n; k++) {
        double s = 0;
        for (int r = 0; r < m; r++) s += J[r + m * k] * y[r];
        dx[k] = add ? dx[k] + s : s;
    }
}

/* The step towards the target and rest (see the top of the file) at x into dx; returns |e|. */
static double step(mbs_limb *l, const double p[3], const double *x, double beta, double *dx)
{
    int n = l->n, m = l->rows;
    double e[MAXM], J[MAXM * MBS_LIMB_MAX_JOINTS], A[MAXM * MAXM], Ad[MAXM * MAXM], y[MAXM];
    double d[MBS_LIMB_MAX_JOINTS], Jd[MAXM] = {0}, z[MAXM], np[MBS_LIMB_MAX_JOINTS];
    task(l, x, p, e, J);
    double ne = norm(e, m), tr = gram(J, m, n, A);
    /* λ² relative to the Jacobian's scale, 1e-4 of its mean squared singular value while the
     * task is a centimetre (or a hundredth of a radian) away or more (a step near the
     * stretched singularity stays short), and shrinking with the error below that
     * (Levenberg–Marquardt's λ ∝ |e|), so that near the target the step is Gauss–Newton's and
     * converges quadratically even close to a singularity (a small singular value would
     * otherwise stall it at λ²/(σ² + λ²)) */
    memcpy(Ad, A, sizeof(double) * (size_t)(m * m));
    for (int r = 0; r < m; r++) {
        Ad[r + m * r] += 1e-4 * tr * fmin(1, ne / 1e-2);
        A[r + m * r] += 1e-13 * tr;
    }
    solve(Ad, m, e, y);
    jt_mul(J, m, n, y, dx, 0);
    for (int k = 0; k < n; k++) d[k] = l->rest[k] - x[k];
    for (int r = 0; r < m; r++)
        for (int k = 0; k < n; k++) Jd[r] += J[r + m * k] * d[k];
    solve(A, m, Jd, z);
    /* the posture part, shortened to at most IK_MAX_POSTURE: a long step along the null space
     * leaves the constraint at second order, and the primary step, scaled with it, then
     * chases the foot in a cycle */
    jt_mul(J, m, n, z, np, 0);
    double big = 0;
    for (int k = 0; k < n; k++) {
        np[k] = d[k] - np[k];
        big = fmax(big, fabs(np[k]));
    }
    double s = beta * (big > IK_MAX_POSTURE ? IK_MAX_POSTURE / big : 1);
    for (int k = 0; k < n; k++) dx[k] += s * np[k];
    return ne;
}

/* x + s dx with the largest joint change at most IK_MAX_STEP (the linearisation holds only
 * nearby) and every joint inside its limits, into xn. */
static void advance(const mbs_limb *l, const double *x, const double *dx, double *xn)
{
    double big = 0;
    for (int k = 0; k < l->n; k++) big = fmax(big, fabs(dx[k]));
    double s = big > IK_MAX_STEP ? IK_MAX_STEP / big : 1;
    for (int k = 0; k < l->n; k++) xn[k] = fmin(l->hi[k], fmax(l->lo[k], x[k] + s * dx[k]));
}

/* The posture-regularised iteration from x (updated), at most IK_ITER_POSTURE times: nonzero
 * when the task is met (2: and the steps died out; 1: the posture was still creeping towards
 * its optimum), 0 when it is not. The posture's convergence is linear (the null-space step
 * ignores the constraint's curvature): fast near rest, slow in the rare postures far from it
 * where the distance to rest is nearly flat along the constraint, where it is left unfinished
 * (the task is met all the same). */
static int iterate(mbs_limb *l, const double p[3], double *x)
{
    double dx[MBS_LIMB_MAX_JOINTS], beta = 1, prev = INFINITY, err = INFINITY;
    for (int it = 0; it < IK_ITER_POSTURE; it++) {
        double big = 0;
        err = step(l, p, x, beta, dx);
        for (int k = 0; k < l->n; k++) big = fmax(big, fabs(dx[k]));
        if (big < IK_STEP_TOL) return err < IK_TOL ? 2 : 0;
        /* the full posture step (β = 1) is a Gauss–Newton step of the constrained problem that
         * ignores the constraint's curvature; far from rest that curvature, weighted by large
         * multipliers, makes it overshoot into a cycle, the error growing: halve β */
        if (err > prev && err > 10 * IK_TOL && beta > 0.1) beta *= 0.5;
        prev = err;
        advance(l, x, dx, x);
    }
    double e[MAXM];
    task(l, x, p, e, NULL);
    return norm(e, l->rows) < IK_TOL;
}

/* Levenberg–Marquardt on |e|² alone, from x (updated): a step is kept only when it brings the
 * task closer, the damping growing tenfold on a refusal and shrinking on a success, so |e|
 * decreases monotonically to a stationary point, Jᵀe = 0: the closest point. Plain damped
 * least squares with a fixed λ cycles there, its steps dominated by the direction the
 * stretched limb cannot move in. */
static void closest(mbs_limb *l, const double p[3], double *x)
{
    int n = l->n, m = l->rows;
    double lam = 1e-4, e[MAXM];
    task(l, x, p, e, NULL);
    double cost = norm(e, m);
    for (int it = 0; it < IK_ITER_CLAMP && lam < 1e8; it++) {
        double J[MAXM * MBS_LIMB_MAX_JOINTS], A[MAXM * MAXM], y[MAXM], dx[MBS_LIMB_MAX_JOINTS], xn[MBS_LIMB_MAX_JOINTS];
        task(l, x, p, e, J);
        double tr = gram(J, m, n, A);
        for (; lam < 1e8; lam *= 10) {
            double Ad[MAXM * MAXM], en[MAXM];
            memcpy(Ad, A, sizeof Ad);
            for (int r = 0; r < m; r++) Ad[r + m * r] += lam * tr;
            solve(Ad, m, e, y);
            jt_mul(J, m, n, y, dx, 0);
            advance(l, x, dx, xn);
            task(l, xn, p, en, NULL);
            double c = norm(en, m);
            if (c < cost) {
                double big = 0;
                for (int k = 0; k < n; k++) big = fmax(big, fabs(xn[k] - x[k]));
                memcpy(x, xn, (size_t)n * sizeof(double));
                cost = c;
                lam = fmax(1e-6, lam / 3);
                if (big < IK_STEP_TOL) return;
                break;
            }
        }
    }
}

int mbsi_limb_init(mbs_limb *l, const mbs_model *m, const char *foot, const double offset[3], int hold_tilt,
                   const double *q_ref, mbs_error *err)
{
    memset(l, 0, sizeof *l);
    l->m = m;
    l->rows = hold_tilt ? 5 : 3;
    if (offset) memcpy(l->offset, offset, sizeof l->offset);
    snprintf(l->foot, sizeof l->foot, "%s", foot);
    int f = mbs_frame_id(m, foot);
    if (f < 0) return mbsi_fail(err, MBS_ERR_ARG, "limb: no frame '%s' in model '%s'", foot, mbs_model_name(m));
    l->foot_frame = f;
    /* the chain from the foot's body up to the base (a free flyer) or the world */
    int chain[MBS_LIMB_MAX_JOINTS], n = 0;
    for (int b = mbs_frame_body(m, f); b >= 0; b = mbs_joint_parent(m, b)) {
        mbs_joint_type t = mbs_joint_type_of(m, b);
        if (t == MBS_JOINT_FREEFLYER && mbs_joint_parent(m, b) == -1) break;
        if (t != MBS_JOINT_REVOLUTE && t != MBS_JOINT_PRISMATIC)
            return mbsi_fail(err, MBS_ERR_MODEL, "limb '%s': joint '%s' between the base and the foot has more than one "
                            "coordinate", foot, mbs_joint_name(m, b));
        if (n == MBS_LIMB_MAX_JOINTS)
            return mbsi_fail(err, MBS_ERR_MODEL, "limb '%s': more than %d joints between the base and the foot", foot,
                            MBS_LIMB_MAX_JOINTS);
        chain[n++] = b;
    }
    if (n < l->rows)
        return mbsi_fail(err, MBS_ERR_MODEL, "limb '%s': %d joints between the base and the foot, the IK needs %d", foot, n,
                        l->rows);
    l->n = n;
    const double *lo = mbs_model_lower_limits(m), *hi = mbs_model_upper_limits(m);
    for (int k = 0; k < n; k++) {
        int j = chain[n - 1 - k];   /* base to foot */
        l->joint[k] = j;
        l->idx_q[k] = mbs_joint_idx_q(m, j);
        l->idx_v[k] = mbs_joint_idx_v(m, j);
        l->rest[k] = l->last[k] = q_ref[l->idx_q[k]];
        /* limits the model leaves open (or inverted) do not bound the IK */
        l->lo[k] = lo && lo[l->idx_q[k]] < hi[l->idx_q[k]] ? lo[l->idx_q[k]] : -INFINITY;
        l->hi[k] = hi && lo[l->idx_q[k]] < hi[l->idx_q[k]] ? hi[l->idx_q[k]] : INFINITY;
    }
    int nq = mbs_model_nq(m), nv = mbs_model_nv(m);
    mbs_carver cv = {NULL, 0};
    layout(&cv, l, nq, nv);
    l->block = mbsi_carver_alloc(&cv);
    l->d = mbs_data_new(m);
    if (!l->block || !l->d) {
        mbsi_limb_fini(l);
        return mbsi_fail(err, MBS_ERR_NOMEM, "out of memory");
    }
    layout(&cv, l, nq, nv);
    /* the rest of the robot at q_ref, the base (if floating) at the origin: world = base frame */
    memcpy(l->q, q_ref, (size_t)nq * sizeof(double));
    if (mbs_model_njoints(m) > 0 && mbs_joint_type_of(m, 0) == MBS_JOINT_FREEFLYER) {
        double *b = l->q + mbs_joint_idx_q(m, 0);
        b[0] = b[1] = b[2] = b[3] = b[4] = b[5] = 0;
        b[6] = 1;
    }
    double p[3];
    kinematics(l, l->rest, p, l->rest_R, 0);
    /* a limb whose joints cannot move the task is no limb (a foot on the base itself) */
    double e[MAXM], J[MAXM * MBS_LIMB_MAX_JOINTS], A[MAXM * MAXM];
    task(l, l->rest, p, e, J);
    if (!(gram(J, l->rows, n, A) > 1e-12)) {
        mbsi_limb_fini(l);
        return mbsi_fail(err, MBS_ERR_MODEL, "limb '%s': its joints do not move the foot", foot);
    }
    return MBS_OK;
}

void mbsi_limb_fini(mbs_limb *l)
{
    mbs_data_free(l->d);
    free(l->block);
    memset(l, 0, sizeof *l);
}

void mbsi_limb_fk(mbs_limb *l, const double *x, double p[3])
{
    double R[9];
    kinematics(l, x, p, R, 0);
}

void mbsi_limb_fk_jacobian(mbs_limb *l, const double *x, double p[3], double *J)
{
    double R[9];
    kinematics(l, x, p, R, 1);
    for (int k = 0; k < l->n; k++)
        for (int r = 0; r < 3; r++) J[r + 3 * k] = l->J[r + 6 * (size_t)l->idx_v[k]];
}

int mbsi_limb_ik(mbs_limb *l, const double p[3], double *x)
{
    int n = l->n;
    memcpy(x, l->last, (size_t)n * sizeof(double));
    int reached = iterate(l, p, x);
    if (!reached) {
        /* from the last solution it did not get there (a far jump of the target can land in
         * another branch): once more from rest */
        memcpy(x, l->rest, (size_t)n * sizeof(double));
        reached = iterate(l, p, x);
    }
    if (!reached) {
        /* unreachable, or the posture term kept it from the target: the closest point (on a
         * reachable target, the target itself, found with the posture left where it was) */
        double e[MAXM];
        closest(l, p, x);
        task(l, x, p, e, NULL);
        reached = norm(e, l->rows) < IK_TOL;
    }
    memcpy(l->last, x, (size_t)n * sizeof(double));
    return !reached;
}
