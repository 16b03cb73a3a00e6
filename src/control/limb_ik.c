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
 * not of where the iteration started, so warm-starting from the last solution changes nothing
 * but the cost, and the solution is a smooth function of the target.
 *
 * An unreachable target stalls that iteration: the posture term keeps bending the limb away
 * from the stretched configuration the target asks for. Then the posture term is dropped and
 * Levenberg–Marquardt finishes, which converges to a local minimum of |e| (Jᵀe = 0): the
 * target clamped onto the workspace boundary.
 *
 * Near the solution the iteration above converges linearly in the posture (the null-space step
 * ignores the constraint's curvature: 20 to 30 iterations to settle to 1e-10), so once the task
 * error is under IK_NEWTON_ERR the solve is finished by Newton's method on the optimality
 * conditions themselves (sequential quadratic programming's step), whose solution is the
 * same fixed point:
 *   F(x, ν) = [x − x_rest + J(x)ᵀ ν ; e(x)] = 0,
 *   [K  Jᵀ] [Δx]   [x_rest − x]
 *   [Je 0 ] [ν⁺] = [e         ],   K = I + Σ_r ν_r ∂J_rᵀ/∂x,
 * J the task Jacobian above (for the tilt, the x and y rows of the foot's angular velocity),
 * Je the exact derivative of −e (for the tilt, those rows turned by the rotation left in
 * E = R_rest Rᵀ), ν the multipliers (the least-squares ones, (J Jᵀ)⁻¹ J d, to start). It
 * converges quadratically: two to four steps, to the optimum itself, where the iteration above
 * can stop short (at its 200 iterations where the optimum is flat: a few of a crawl's solves
 * did, the posture 1e-4 rad off). A target within IK_NEWTON_WARM of the last solution goes to
 * Newton's method at once, from that solution and its multipliers (a gait's period moves a
 * foot by millimetres), and the last solve's own target returns its solution. A Newton step
 * that is long, leaves a joint's limits or meets a singular system hands the solve back to the
 * iteration above, whose safeguards (the clamping to limits, the shortened posture steps) then
 * finish as before.
 *
 * Newton's system at the solution is also what the solution's derivative solves: the
 * conditions differentiated along a motion ṗ of the target give [K Jᵀ; Je 0] [ẋ; ν̇] = [0; ṗ; 0],
 * so the last system is kept, factored, and mbsi_limb_ik_rate returns the exact rate of the
 * angles for the gaits' reference velocity.
 *
 * The kinematics are the limb's own chain's: the placements of its joints and of the foot
 * frame read from the model at init, composed from the body the chain hangs from (the base,
 * at the origin: world coordinates are base coordinates) exactly as the library's forward
 * kinematics composes them, without the other 30 bodies of a Robosimian and their Jacobians. */
#include <stdio.h>
#include <stdlib.h>

#include "control_internal.h"
#include "../spatial/spatial.h"

#define IK_TOL 1e-11           /* m, rad: the task error at convergence (the task asks 1e-9 m) */
#define IK_STEP_TOL 1e-10      /* rad: and the last step */
#define IK_MAX_POSTURE 0.3     /* rad: the largest change of one joint by the posture term */
#define IK_MAX_STEP 0.3        /* rad: the largest change of one joint per iteration */
#define IK_ITER_POSTURE 200    /* iterations with the rest-posture term */
#define IK_ITER_CLAMP 200      /* then Levenberg–Marquardt towards the closest point */
#define IK_NEWTON_ERR 1e-3     /* m, rad: the task error under which Newton's method finishes */
#define IK_NEWTON_WARM 1e-2    /* m, rad: the same from the last solution and its multipliers */
#define IK_NEWTON_STEP 0.1     /* rad: a longer Newton step is outside its basin: give up Newton */
#define IK_ITER_NEWTON 12      /* Newton steps at most */
#define MAXM 5                 /* task rows: position, and tilt about x and y */
#define MAXJ MBS_LIMB_MAX_JOINTS

/* The chain's kinematics at angles x: the foot point p and the foot frame's rotation R (base
 * frame), and with the Jacobian each joint's axis w and origin o (base frame) and its column of
 * the point's Jacobian: the point's velocity (world-aligned axes) and the frame's angular
 * velocity per unit rate. */
typedef struct kin {
    double p[3], R[9];
    double w[MAXJ][3], o[MAXJ][3];
    double J[MAXJ][6];
} kin;

static void chain(const mbs_limb *l, const double *x, kin *k, int jacobian)
{
    double R[9], p[3];
    memcpy(R, l->root_R, sizeof R);
    memcpy(p, l->root_p, sizeof p);
    for (int j = 0; j < l->n; j++) {
        const mbs_body *b = l->body[j];
        double Rl[9], pl[3];
        mbs_joint_local_placement(l->m, (int)(b - l->m->bodies), &x[j], Rl, pl);
        se3_compose(R, p, Rl, pl, R, p);   /* in place: se3_compose reads p and R before writing them */
        if (!jacobian) continue;
        if (b->axis_id >= 0) memcpy(k->w[j], R + 3 * b->axis_id, 3 * sizeof(double));
        else m3_mulv(R, b->axis, k->w[j]);
        memcpy(k->o[j], p, sizeof p);
    }
    double o[3];
    se3_compose(R, p, l->foot_R, l->foot_p, k->R, o);
    /* the foot point: the frame's origin moved by the offset, in the frame's axes */
    const double *F = k->R;
    for (int r = 0; r < 3; r++) k->p[r] = o[r] + F[r] * l->offset[0] + F[r + 3] * l->offset[1] + F[r + 6] * l->offset[2];
    if (!jacobian) return;
    for (int j = 0; j < l->n; j++) {
        double *c = k->J[j];
        if (l->body[j]->type == MBS_JOINT_PRISMATIC) {
            memcpy(c, k->w[j], 3 * sizeof(double));
            c[3] = c[4] = c[5] = 0;
        } else {
            double d[3] = {k->p[0] - k->o[j][0], k->p[1] - k->o[j][1], k->p[2] - k->o[j][2]};
            v3_cross(k->w[j], d, c);
            memcpy(c + 3, k->w[j], 3 * sizeof(double));
        }
    }
}

/* The task at x for target p: its error e (l->rows rows) and, when J is not NULL, its Jacobian
 * (rows x n, column-major) and the kinematics in k. The tilt error is the x and y components of
 * the rotation vector taking the current foot rotation to the rest one, from the skew part of
 * E = R_rest Rᵀ (exact at the fixed point, where it vanishes); E into E when not NULL. */
static void task(const mbs_limb *l, const double *x, const double p[3], double *e, double *J, kin *k, double E[9])
{
    kin kk;
    if (!k) k = &kk;
    chain(l, x, k, J != NULL);
    for (int r = 0; r < 3; r++) e[r] = p[r] - k->p[r];
    if (l->rows == 5) {
        /* E = R_rest Rᵀ; (E − Eᵀ)/2 = [w]x with w ≈ the rotation still to make */
        double Ee[9];
        if (!E) E = Ee;
        for (int i = 0; i < 3; i++)
            for (int j = 0; j < 3; j++) {
                double s = 0;
                for (int c = 0; c < 3; c++) s += l->rest_R[i + 3 * c] * k->R[j + 3 * c];
                E[i + 3 * j] = s;
            }
        e[3] = 0.5 * (E[2 + 3 * 1] - E[1 + 3 * 2]);
        e[4] = 0.5 * (E[0 + 3 * 2] - E[2 + 3 * 0]);
    }
    if (!J) return;
    for (int j = 0; j < l->n; j++) {
        const double *c = k->J[j];
        for (int r = 0; r < 3; r++) J[r + l->rows * j] = c[r];
        if (l->rows == 5) { J[3 + 5 * j] = c[3]; J[4 + 5 * j] = c[4]; }
    }
}

static double norm(const double *e, int m)
{
    double s = 0;
    for (int r = 0; r < m; r++) s += e[r] * e[r];
    return sqrt(s);
}

/* max_k |v_k| (a comparison, not fmax: that is a call into libm) */
static double maxabs(const double *v, int n)
{
    double big = 0;
    for (int k = 0; k < n; k++) {
        double a = fabs(v[k]);
        big = a > big ? a : big;
    }
    return big;
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

/* The step towards the target and rest (see the top of the file) at x into dx, the
 * least-squares multipliers (J Jᵀ)⁻¹ J d into nu; returns |e|. */
static double step(const mbs_limb *l, const double p[3], const double *x, double beta, double *dx, double *nu)
{
    int n = l->n, m = l->rows;
    double e[MAXM], J[MAXM * MBS_LIMB_MAX_JOINTS], A[MAXM * MAXM], Ad[MAXM * MAXM], y[MAXM];
    double d[MBS_LIMB_MAX_JOINTS], Jd[MAXM] = {0}, *z = nu, np[MBS_LIMB_MAX_JOINTS];
    task(l, x, p, e, J, NULL, NULL);
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
    double big = maxabs(dx, l->n);
    double s = big > IK_MAX_STEP ? IK_MAX_STEP / big : 1;
    for (int k = 0; k < l->n; k++) xn[k] = fmin(l->hi[k], fmax(l->lo[k], x[k] + s * dx[k]));
}

/* a · (b x c) */
static double triple(const double a[3], const double b[3], const double c[3])
{
    return a[0] * (b[1] * c[2] - b[2] * c[1]) + a[1] * (b[2] * c[0] - b[0] * c[2]) + a[2] * (b[0] * c[1] - b[1] * c[0]);
}

/* Newton's system of the optimality conditions (see the top of the file) at x with multipliers
 * nu, factored into l->lu (l->kkt its size; 0 when singular), and its step: dx (n) and the new
 * multipliers into nu. Returns |e| at x, or -1 when the system is singular; when |e| is `far`
 * or more, returns it with nothing done. */
static double newton(mbs_limb *l, const double p[3], const double *x, double *nu, double *dx, double far)
{
    int n = l->n, m = l->rows, N = n + m;
    double e[MAXM], J[MAXM * MAXJ], E[9], b[MBS_LIMB_MAX_KKT];
    kin k;
    task(l, x, p, e, J, &k, E);
    double ne = norm(e, m);
    if (!(ne < far)) return ne;
    double *A = l->lu;
    /* K = I + Σ_r ν_r ∂J_rᵀ/∂x: column c of J moves with joint i before it (turned about w_i)
     * and with the point (moved by J_i) when i is at or after it */
    const double *nup = nu, nua[3] = {m == 5 ? nu[3] : 0, m == 5 ? nu[4] : 0, 0};
    for (int c = 0; c < n; c++) {
        int rev = l->body[c]->type != MBS_JOINT_PRISMATIC;
        for (int i = 0; i < n; i++) {
            double h = 0;
            if (i < c) {
                if (l->body[i]->type != MBS_JOINT_PRISMATIC) {
                    /* ν_p · (w_i x Jlin_c) + ν_a · (w_i x w_c) */
                    h = triple(nup, k.w[i], k.J[c]);
                    if (rev && m == 5) h += triple(nua, k.w[i], k.w[c]);
                }
            } else if (rev)
                h = triple(nup, k.w[c], k.J[i]);   /* ν_p · (w_c x Jlin_i) */
            A[c + N * i] = h + (c == i);
        }
    }
    /* Jᵀ, the task's exact derivative Je, and the zero block */
    double T[6] = {1, 0, 0, 1, 0, 0};   /* 2 x 3, column-major: d e_tilt = −T ω */
    if (m == 5) {
        /* the skew part of E [ω]x is ((tr E) I − Eᵀ) ω / 2 */
        double tr = E[0] + E[4] + E[8];
        for (int r = 0; r < 2; r++)
            for (int c = 0; c < 3; c++) T[r + 2 * c] = 0.5 * ((r == c) * tr - E[c + 3 * r]);
    }
    for (int c = 0; c < n; c++) {
        const double *w = k.J[c] + 3;
        for (int r = 0; r < m; r++) A[c + N * (n + r)] = J[r + m * c];
        for (int r = 0; r < 3; r++) A[n + r + N * c] = k.J[c][r];
        if (m == 5)
            for (int r = 0; r < 2; r++) A[n + 3 + r + N * c] = T[r] * w[0] + T[r + 2] * w[1] + T[r + 4] * w[2];
    }
    for (int r = 0; r < m; r++)
        for (int c = 0; c < m; c++) A[n + r + N * (n + c)] = 0;
    for (int c = 0; c < n; c++) b[c] = l->rest[c] - x[c];
    for (int r = 0; r < m; r++) b[n + r] = e[r];
    /* a pivot negligible against the matrix: singular */
    double scale = maxabs(A, N * N);
    int singular = mbsi_lu_factor(N, A, l->piv) != 0;
    for (int j = 0; j < N && !singular; j++) singular = !(fabs(A[j + N * j]) > 1e-13 * scale);
    if (singular) {
        l->kkt = 0;
        return -1;
    }
    l->kkt = N;
    mbsi_lu_solve(N, A, l->piv, b, 1, NULL);
    memcpy(dx, b, (size_t)n * sizeof(double));
    memcpy(nu, b + n, (size_t)m * sizeof(double));
    return ne;
}

/* Newton's method from x with multipliers nu, when the task error at x is under IK_NEWTON_ERR:
 * 1 when it converged (x the solution, nu its multipliers, its system kept factored for
 * mbsi_limb_ik_rate and the target in l->target), 0 when it gave up (x untouched, no system
 * kept): a singular system, a step outside the basin or the limits, or no convergence; -1 when
 * x was too far from the target to try. */
static int polish(mbs_limb *l, const double p[3], double *x, double *nu, double far)
{
    int n = l->n;
    double y[MAXJ], dx[MAXJ];
    memcpy(y, x, (size_t)n * sizeof(double));
    for (int it = 0; it < IK_ITER_NEWTON; it++) {
        double err = newton(l, p, y, nu, dx, it ? INFINITY : far);
        if (!it && !(err < far)) return -1;
        if (err < 0) break;
        double big = maxabs(dx, n);
        if (big < IK_STEP_TOL && err < IK_TOL) {
            /* the last step too: converging quadratically, it leaves an error of about its square */
            for (int k = 0; k < n; k++) x[k] = fmin(l->hi[k], fmax(l->lo[k], y[k] + dx[k]));
            memcpy(l->target, p, sizeof l->target);
            return 1;
        }
        if (!(big < IK_NEWTON_STEP)) break;
        int out = 0;
        for (int k = 0; k < n; k++) {
            y[k] += dx[k];
            out |= !(y[k] >= l->lo[k] && y[k] <= l->hi[k]);
        }
        if (out) break;
    }
    l->kkt = 0;
    return 0;
}

/* The posture-regularised iteration from x (updated), at most IK_ITER_POSTURE times: nonzero
 * when the task is met (2: and the steps died out; 1: the posture was still creeping towards
 * its optimum), 0 when it is not. The posture's convergence is linear (the null-space step
 * ignores the constraint's curvature): fast near rest, slow in the rare postures far from it
 * where the distance to rest is nearly flat along the constraint, where it is left unfinished
 * (the task is met all the same). Near the target Newton's method finishes (polish); when it
 * gives up, this iteration goes on alone. */
static int iterate(mbs_limb *l, const double p[3], double *x, const double *nu0)
{
    double dx[MBS_LIMB_MAX_JOINTS], nu[MAXM], beta = 1, prev = INFINITY, err = INFINITY;
    int newton_ok = 1;
    l->kkt = 0;
    if (nu0) {
        /* from the last solution, its multipliers: Newton's method at once if the target is near */
        memcpy(nu, nu0, (size_t)l->rows * sizeof(double));
        int r = polish(l, p, x, nu, IK_NEWTON_WARM);
        if (r > 0) goto done;
        newton_ok = r < 0;
    }
    for (int it = 0; it < IK_ITER_POSTURE; it++) {
        err = step(l, p, x, beta, dx, nu);
        if (newton_ok && err < IK_NEWTON_ERR) {
            if (polish(l, p, x, nu, INFINITY) > 0) goto done;
            newton_ok = 0;
        }
        if (maxabs(dx, l->n) < IK_STEP_TOL) return err < IK_TOL ? 2 : 0;
        /* the full posture step (β = 1) is a Gauss–Newton step of the constrained problem that
         * ignores the constraint's curvature; far from rest that curvature, weighted by large
         * multipliers, makes it overshoot into a cycle, the error growing: halve β */
        if (err > prev && err > 10 * IK_TOL && beta > 0.1) beta *= 0.5;
        prev = err;
        advance(l, x, dx, x);
    }
    double e[MAXM];
    task(l, x, p, e, NULL, NULL, NULL);
    return norm(e, l->rows) < IK_TOL;
done:
    memcpy(l->nu, nu, (size_t)l->rows * sizeof(double));
    return 2;
}

/* Levenberg–Marquardt on |e|² alone, from x (updated): a step is kept only when it brings the
 * task closer, the damping growing tenfold on a refusal and shrinking on a success, so |e|
 * decreases monotonically to a stationary point, Jᵀe = 0: the closest point. Plain damped
 * least squares with a fixed λ cycles there, its steps dominated by the direction the
 * stretched limb cannot move in. */
static void closest(const mbs_limb *l, const double p[3], double *x)
{
    int n = l->n, m = l->rows;
    double lam = 1e-4, e[MAXM];
    task(l, x, p, e, NULL, NULL, NULL);
    double cost = norm(e, m);
    for (int it = 0; it < IK_ITER_CLAMP && lam < 1e8; it++) {
        double J[MAXM * MBS_LIMB_MAX_JOINTS], A[MAXM * MAXM], y[MAXM], dx[MBS_LIMB_MAX_JOINTS], xn[MBS_LIMB_MAX_JOINTS];
        task(l, x, p, e, J, NULL, NULL);
        double tr = gram(J, m, n, A);
        for (; lam < 1e8; lam *= 10) {
            double Ad[MAXM * MAXM], en[MAXM];
            memcpy(Ad, A, sizeof Ad);
            for (int r = 0; r < m; r++) Ad[r + m * r] += lam * tr;
            solve(Ad, m, e, y);
            jt_mul(J, m, n, y, dx, 0);
            advance(l, x, dx, xn);
            task(l, xn, p, en, NULL, NULL, NULL);
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
    int ids[MBS_LIMB_MAX_JOINTS], n = 0;
    for (int b = mbs_frame_body(m, f); b >= 0; b = mbs_joint_parent(m, b)) {
        mbs_joint_type t = mbs_joint_type_of(m, b);
        if (t == MBS_JOINT_FREEFLYER && mbs_joint_parent(m, b) == -1) break;
        if (t != MBS_JOINT_REVOLUTE && t != MBS_JOINT_PRISMATIC)
            return mbsi_fail(err, MBS_ERR_MODEL, "limb '%s': joint '%s' between the base and the foot has more than one "
                            "coordinate", foot, mbs_joint_name(m, b));
        if (n == MBS_LIMB_MAX_JOINTS)
            return mbsi_fail(err, MBS_ERR_MODEL, "limb '%s': more than %d joints between the base and the foot", foot,
                            MBS_LIMB_MAX_JOINTS);
        ids[n++] = b;
    }
    if (n < l->rows)
        return mbsi_fail(err, MBS_ERR_MODEL, "limb '%s': %d joints between the base and the foot, the IK needs %d", foot, n,
                        l->rows);
    l->n = n;
    const double *lo = mbs_model_lower_limits(m), *hi = mbs_model_upper_limits(m);
    for (int k = 0; k < n; k++) {
        int j = ids[n - 1 - k];   /* base to foot */
        l->joint[k] = j;
        l->idx_q[k] = mbs_joint_idx_q(m, j);
        l->idx_v[k] = mbs_joint_idx_v(m, j);
        l->rest[k] = l->last[k] = q_ref[l->idx_q[k]];
        /* limits the model leaves open (or inverted) do not bound the IK */
        l->lo[k] = lo && lo[l->idx_q[k]] < hi[l->idx_q[k]] ? lo[l->idx_q[k]] : -INFINITY;
        l->hi[k] = hi && lo[l->idx_q[k]] < hi[l->idx_q[k]] ? hi[l->idx_q[k]] : INFINITY;
    }
    for (int k = 0; k < n; k++) l->body[k] = &m->bodies[l->joint[k]];
    mbs_frame_local_placement(m, f, l->foot_R, l->foot_p);
    /* the body the chain hangs from: the floating base, at the origin (world = base frame), or
     * the world; placed by the library's kinematics at q_ref with the base at the origin */
    m3_identity(l->root_R);
    int top = mbs_joint_parent(m, l->joint[0]);
    if (top >= 0) {
        int nq = mbs_model_nq(m);
        double *q = malloc((size_t)nq * sizeof(double));
        mbs_data *d = mbs_data_new(m);
        if (!q || !d) {
            free(q);
            mbs_data_free(d);
            return mbsi_fail(err, MBS_ERR_NOMEM, "out of memory");
        }
        memcpy(q, q_ref, (size_t)nq * sizeof(double));
        double *b = q + mbs_joint_idx_q(m, top);
        b[0] = b[1] = b[2] = b[3] = b[4] = b[5] = 0;
        b[6] = 1;
        mbs_forward_kinematics(m, d, q, NULL, NULL);
        mbs_body_placement(m, d, top, l->root_R, l->root_p);
        free(q);
        mbs_data_free(d);
    }
    double p[3];
    kin kn;
    chain(l, l->rest, &kn, 0);
    memcpy(l->rest_R, kn.R, sizeof l->rest_R);
    memcpy(p, kn.p, sizeof p);
    /* a limb whose joints cannot move the task is no limb (a foot on the base itself) */
    double e[MAXM], J[MAXM * MBS_LIMB_MAX_JOINTS], A[MAXM * MAXM];
    task(l, l->rest, p, e, J, NULL, NULL);
    if (!(gram(J, l->rows, n, A) > 1e-12)) {
        mbsi_limb_fini(l);
        return mbsi_fail(err, MBS_ERR_MODEL, "limb '%s': its joints do not move the foot", foot);
    }
    return MBS_OK;
}

void mbsi_limb_fini(mbs_limb *l)
{
    memset(l, 0, sizeof *l);
}

void mbsi_limb_fk(const mbs_limb *l, const double *x, double p[3])
{
    kin k;
    chain(l, x, &k, 0);
    memcpy(p, k.p, sizeof k.p);
}

void mbsi_limb_fk_jacobian(const mbs_limb *l, const double *x, double p[3], double R[9], double *J)
{
    kin k;
    chain(l, x, &k, J != NULL);
    memcpy(p, k.p, sizeof k.p);
    if (R) memcpy(R, k.R, sizeof k.R);
    if (J)
        for (int c = 0; c < l->n; c++)
            for (int r = 0; r < 3; r++) J[r + 3 * c] = k.J[c][r];
}

int mbsi_limb_ik(mbs_limb *l, const double p[3], double *x)
{
    int n = l->n;
    memcpy(x, l->last, (size_t)n * sizeof(double));
    /* the same target as the last solve's, which Newton's method finished: its solution */
    if (l->kkt && p[0] == l->target[0] && p[1] == l->target[1] && p[2] == l->target[2]) return 0;
    int reached = iterate(l, p, x, l->kkt ? l->nu : NULL);
    if (!reached) {
        /* from the last solution it did not get there (a far jump of the target can land in
         * another branch): once more from rest */
        memcpy(x, l->rest, (size_t)n * sizeof(double));
        reached = iterate(l, p, x, NULL);
    }
    if (!reached) {
        /* unreachable, or the posture term kept it from the target: the closest point (on a
         * reachable target, the target itself, found with the posture left where it was) */
        double e[MAXM];
        closest(l, p, x);
        task(l, x, p, e, NULL, NULL, NULL);
        reached = norm(e, l->rows) < IK_TOL;
    }
    memcpy(l->last, x, (size_t)n * sizeof(double));
    return !reached;
}

int mbsi_limb_ik_rate(const mbs_limb *l, const double pdot[3], double *xdot)
{
    int n = l->n, N = l->kkt;
    if (!N) return 1;
    /* [K Jᵀ; Je 0] [ẋ; ν̇] = [0; ṗ; 0]: the conditions kept along the target's motion, the tilt held */
    double b[MBS_LIMB_MAX_KKT] = {0};
    memcpy(b + n, pdot, 3 * sizeof(double));
    mbsi_lu_solve(N, l->lu, l->piv, b, 1, NULL);
    memcpy(xdot, b, (size_t)n * sizeof(double));
    return 0;
}

void mbsi_limb_state(mbs_limb *l, mbsi_state *s)
{
    mbsi_state_doubles(s, "limb.last", l->last, MBS_LIMB_MAX_JOINTS);
    mbsi_state_ints(s, "limb.kkt", &l->kkt, 1);
    mbsi_state_doubles(s, "limb.target", l->target, 3);
    mbsi_state_doubles(s, "limb.nu", l->nu, 5);
    mbsi_state_ints(s, "limb.piv", l->piv, MBS_LIMB_MAX_KKT);
    mbsi_state_doubles(s, "limb.lu", l->lu, MBS_LIMB_MAX_KKT * MBS_LIMB_MAX_KKT);
}
