/* liegroup.c — the configuration space as a product of Lie groups, one per joint: R for
 * revolute and prismatic joints, SE(3) for a free-flyer, SE(2) for a planar joint, SO(3) for a
 * ball joint. Every
 * operation is a loop over joints that applies the joint's group operation to its slices of
 * q and v (se3.c holds the group arithmetic), so all of them are allocation-free and a
 * joint's output slice may alias its input slice (mbs_integrate(m, q, v, q) is allowed).
 *
 * Conventions are Pinocchio's: integrate(q, v) = q Exp(v) (v in the body frame),
 * difference(q0, q1) = Log(q0⁻¹ q1), and the Jacobians are expressed in the tangent spaces
 * at the inputs and outputs (right-trivialised): with d = difference(q0, q1),
 *   d integrate/dq   = Ad(Exp(v)⁻¹)      d integrate/dv   = Jr(v)
 *   d difference/dq1 = Jr⁻¹(d)           d difference/dq0 = -Jr⁻¹(d) Ad(q1⁻¹ q0)
 * where the last one holds because perturbing q0 to q0 Exp(δ) turns M = q0⁻¹ q1 into
 * Exp(-δ) M = M Exp(-Ad(M⁻¹) δ). */
#include <math.h>
#include <stdint.h>
#include <string.h>

#include "../model/model_internal.h"
#include "mbs/liegroup.h"
#include "../spatial/spatial.h"
#include "liegroup_internal.h"

/* Unit-norm the last four (free-flyer quaternion) or the (cos, sin) pair; a zero norm
 * (only from garbage input) becomes the identity rather than NaN. A product of unit quaternions
 * is off the unit sphere by rounding only, and there the first-order step x (3 − |x|²)/2 leaves
 * an error of ¾ (|x|² − 1)², below 1e-16 for |x|² within 1e-8 of 1: no square root nor division
 * on the common path (they were a fifth of a free-flyer's integrate). */
static void unit(double *x, int n, const double *identity)
{
    double s = 0;
    for (int k = 0; k < n; k++) s += x[k] * x[k];
    double r;
    if (fabs(s - 1) < 1e-8) r = 0.5 * (3 - s);
    else if (s > 0) r = 1.0 / sqrt(s);
    else {
        memcpy(x, identity, (size_t)n * sizeof(double));
        return;
    }
    for (int k = 0; k < n; k++) x[k] *= r;
}

static const double quat_identity[4] = {0, 0, 0, 1};
static const double rot2_identity[2] = {1, 0};

static void joint_integrate(const mbs_body *b, const double *q, const double *v, double *qo)
{
    switch (b->type) {
    case MBS_JOINT_REVOLUTE:
    case MBS_JOINT_PRISMATIC:
        qo[0] = q[0] + v[0];
        return;
    case MBS_JOINT_FREEFLYER: {
        double e[7], g[7];
        mbsi_se3_exp(v, e);
        mbsi_se3_compose(q, e, g);
        unit(g + 3, 4, quat_identity);
        /* Pinocchio keeps the result in the input's hemisphere (q and -q are the same
         * rotation); for |w| < π the product already is, beyond it this keeps q continuous. */
        if (v3_dot(g + 3, q + 3) + g[6] * q[6] < 0)
            for (int k = 3; k < 7; k++) g[k] = -g[k];
        memcpy(qo, g, sizeof g);
        return;
    }
    case MBS_JOINT_PLANAR: {
        double e[4], g[4];
        mbsi_se2_exp(v, e);
        mbsi_se2_compose(q, e, g);
        unit(g + 2, 2, rot2_identity);
        memcpy(qo, g, sizeof g);
        return;
    }
    case MBS_JOINT_BALL: {
        double e[4], g[4];
        mbsi_so3_exp(v, e);
        mbsi_quat_mul(q, e, g);
        unit(g, 4, quat_identity);
        if (v3_dot(g, q) + g[3] * q[3] < 0)   /* the input's hemisphere, as the free-flyer's */
            for (int k = 0; k < 4; k++) g[k] = -g[k];
        memcpy(qo, g, sizeof g);
        return;
    }
    }
}

/* a⁻¹ b for unit quaternions (the conjugate of a times b) */
void mbsi_quat_between(const double a[4], const double b[4], double o[4])
{
    double ai[4] = {-a[0], -a[1], -a[2], a[3]};
    mbsi_quat_mul(ai, b, o);
}

static void joint_difference(const mbs_body *b, const double *q0, const double *q1, double *v)
{
    switch (b->type) {
    case MBS_JOINT_REVOLUTE:
    case MBS_JOINT_PRISMATIC:
        v[0] = q1[0] - q0[0];
        return;
    case MBS_JOINT_FREEFLYER: {
        double g[7];
        mbsi_se3_between(q0, q1, g);
        mbsi_se3_log(g, v);
        return;
    }
    case MBS_JOINT_PLANAR: {
        double g[4];
        mbsi_se2_between(q0, q1, g);
        mbsi_se2_log(g, v);
        return;
    }
    case MBS_JOINT_BALL: {
        double g[4];
        mbsi_quat_between(q0, q1, g);
        mbsi_so3_log(g, v);
        return;
    }
    }
}

void mbs_integrate(const mbs_model *m, const double *q, const double *v, double *q_out)
{
    for (int i = 0; i < m->nbodies; i++) {
        const mbs_body *b = &m->bodies[i];
        joint_integrate(b, q + b->idx_q, v + b->idx_v, q_out + b->idx_q);
    }
}

void mbs_difference(const mbs_model *m, const double *q0, const double *q1, double *v_out)
{
    for (int i = 0; i < m->nbodies; i++) {
        const mbs_body *b = &m->bodies[i];
        joint_difference(b, q0 + b->idx_q, q1 + b->idx_q, v_out + b->idx_v);
    }
}

/* Joint by joint, so the tangent vector needs no buffer of size nv. */
void mbs_interpolate(const mbs_model *m, const double *q0, const double *q1, double t, double *q_out)
{
    for (int i = 0; i < m->nbodies; i++) {
        const mbs_body *b = &m->bodies[i];
        double v[6];
        joint_difference(b, q0 + b->idx_q, q1 + b->idx_q, v);
        for (int k = 0; k < b->nv; k++) v[k] *= t;
        joint_integrate(b, q0 + b->idx_q, v, q_out + b->idx_q);
    }
}

void mbs_neutral(const mbs_model *m, double *q)
{
    memset(q, 0, (size_t)m->nq * sizeof(double));
    for (int i = 0; i < m->nbodies; i++) {
        const mbs_body *b = &m->bodies[i];
        if (b->type == MBS_JOINT_FREEFLYER) q[b->idx_q + 6] = 1;
        else if (b->type == MBS_JOINT_BALL) q[b->idx_q + 3] = 1;
        else if (b->type == MBS_JOINT_PLANAR) q[b->idx_q + 2] = 1;
    }
}

/* splitmix64 (Steele, Lea, Flood, "Fast splittable pseudorandom number generators", 2014):
 * one 64-bit state, so the caller's seed is the whole generator state. */
static double uniform01(unsigned long long *seed)
{
    uint64_t z = (uint64_t)*seed + 0x9E3779B97F4A7C15ULL;
    *seed = z;
    z = (z ^ (z >> 30)) * 0xBF58476D1CE4E5B9ULL;
    z = (z ^ (z >> 27)) * 0x94D049BB133111EBULL;
    z ^= z >> 31;
    return (double)(z >> 11) * 0x1.0p-53;
}

/* Uniform in [max(lo, -1), min(hi, 1)] (the limits, clipped to [-1, 1] so infinite or huge
 * ranges give values of unit size); when that is empty — limits lying wholly outside
 * [-1, 1] — uniform within the limits, an infinite side replaced by the finite one ± 2. */
static double draw_coordinate(unsigned long long *seed, double lo, double hi)
{
    double a = fmax(lo, -1.0), b = fmin(hi, 1.0);
    if (!(a <= b)) {
        a = lo; b = hi;
        if (isinf(a)) a = b - 2.0;
        if (isinf(b)) b = a + 2.0;
    }
    return a + (b - a) * uniform01(seed);
}

/* Shoemake, "Uniform random rotations", Graphics Gems III (1992): uniform on SO(3). */
static void random_rotation(unsigned long long *seed, double qt[4])
{
    double u1 = uniform01(seed), u2 = 2 * MBS_PI * uniform01(seed), u3 = 2 * MBS_PI * uniform01(seed);
    double r1 = sqrt(1 - u1), r2 = sqrt(u1);
    qt[0] = r1 * sin(u2); qt[1] = r1 * cos(u2); qt[2] = r2 * sin(u3); qt[3] = r2 * cos(u3);
    unit(qt, 4, quat_identity);
}

void mbs_random_configuration(const mbs_model *m, unsigned long long *seed, double *q)
{
    for (int i = 0; i < m->nbodies; i++) {
        const mbs_body *b = &m->bodies[i];
        double *qi = q + b->idx_q;
        const double *lo = m->lower + b->idx_q, *hi = m->upper + b->idx_q;
        switch (b->type) {
        case MBS_JOINT_REVOLUTE:
        case MBS_JOINT_PRISMATIC:
            qi[0] = draw_coordinate(seed, lo[0], hi[0]);
            break;
        case MBS_JOINT_FREEFLYER:
            for (int k = 0; k < 3; k++) qi[k] = draw_coordinate(seed, lo[k], hi[k]);
            random_rotation(seed, qi + 3);
            break;
        case MBS_JOINT_BALL:
            random_rotation(seed, qi);
            break;
        case MBS_JOINT_PLANAR: {
            for (int k = 0; k < 2; k++) qi[k] = draw_coordinate(seed, lo[k], hi[k]);
            double t = MBS_PI * (2 * uniform01(seed) - 1);
            qi[2] = cos(t); qi[3] = sin(t);
            break;
        }
        }
    }
}

void mbs_normalize(const mbs_model *m, double *q)
{
    for (int i = 0; i < m->nbodies; i++) {
        const mbs_body *b = &m->bodies[i];
        if (b->type == MBS_JOINT_FREEFLYER) unit(q + b->idx_q + 3, 4, quat_identity);
        else if (b->type == MBS_JOINT_BALL) unit(q + b->idx_q, 4, quat_identity);
        else if (b->type == MBS_JOINT_PLANAR) unit(q + b->idx_q + 2, 2, rot2_identity);
    }
}

/* C = s A B for n x n column-major A, B (leading dimension n), C with leading dimension ldc. */
static void block_mul(int n, double s, const double *A, const double *B, double *C, int ldc)
{
    for (int j = 0; j < n; j++)
        for (int i = 0; i < n; i++) {
            double acc = 0;
            for (int k = 0; k < n; k++) acc += A[i + n * k] * B[k + n * j];
            C[i + (size_t)ldc * j] = s * acc;
        }
}

void mbs_dintegrate(const mbs_model *m, const double *q, const double *v, mbs_arg arg, double *J)
{
    int nv = m->nv;
    (void)q;   /* right-trivialised, the Jacobians of q Exp(v) do not depend on q */
    memset(J, 0, (size_t)nv * (size_t)nv * sizeof(double));
    for (int i = 0; i < m->nbodies; i++) {
        const mbs_body *b = &m->bodies[i];
        const double *vi = v + b->idx_v;
        double *Jb = J + b->idx_v + (size_t)nv * b->idx_v;
        switch (b->type) {
        case MBS_JOINT_REVOLUTE:
        case MBS_JOINT_PRISMATIC:
            Jb[0] = 1;
            break;
        case MBS_JOINT_FREEFLYER:
            if (arg == MBS_ARG0) {
                double e[7];
                mbsi_se3_exp(vi, e);
                mbsi_se3_inverse(e, e);
                mbsi_se3_adjoint(e, Jb, nv);
            } else
                mbsi_se3_jexp(vi, Jb, nv);
            break;
        case MBS_JOINT_PLANAR:
            if (arg == MBS_ARG0) {
                double e[4];
                mbsi_se2_exp(vi, e);
                mbsi_se2_inverse(e, e);
                mbsi_se2_adjoint(e, Jb, nv);
            } else
                mbsi_se2_jexp(vi, Jb, nv);
            break;
        case MBS_JOINT_BALL: {
            /* Ad(Exp(v)⁻¹) on SO(3) is Exp(v)ᵀ */
            double e[4], R[9], Jr[9];
            if (arg == MBS_ARG0) {
                mbsi_so3_exp(vi, e);
                m3_from_quat(e, R);
                for (int c = 0; c < 3; c++)
                    for (int r = 0; r < 3; r++) Jb[r + (size_t)nv * c] = R[c + 3 * r];
            } else {
                mbsi_so3_jr(vi, Jr);
                for (int c = 0; c < 3; c++)
                    for (int r = 0; r < 3; r++) Jb[r + (size_t)nv * c] = Jr[r + 3 * c];
            }
            break;
        }
        }
    }
}

void mbs_ddifference(const mbs_model *m, const double *q0, const double *q1, mbs_arg arg, double *J)
{
    int nv = m->nv;
    memset(J, 0, (size_t)nv * (size_t)nv * sizeof(double));
    for (int i = 0; i < m->nbodies; i++) {
        const mbs_body *b = &m->bodies[i];
        const double *a = q0 + b->idx_q, *c = q1 + b->idx_q;
        double *Jb = J + b->idx_v + (size_t)nv * b->idx_v;
        switch (b->type) {
        case MBS_JOINT_REVOLUTE:
        case MBS_JOINT_PRISMATIC:
            Jb[0] = arg == MBS_ARG0 ? -1.0 : 1.0;
            break;
        case MBS_JOINT_FREEFLYER: {
            double g[7], d[6], L[36], Ad[36];
            mbsi_se3_between(a, c, g);
            mbsi_se3_log(g, d);
            if (arg == MBS_ARG1) {
                mbsi_se3_jlog(d, Jb, nv);
                break;
            }
            /* q0 Exp(δ) moves d by -Jr⁻¹(d) Ad(q1⁻¹ q0) δ: push δ through q0⁻¹ q1 first. */
            mbsi_se3_jlog(d, L, 6);
            mbsi_se3_between(c, a, g);
            mbsi_se3_adjoint(g, Ad, 6);
            block_mul(6, -1.0, L, Ad, Jb, nv);
            break;
        }
        case MBS_JOINT_PLANAR: {
            double g[4], d[3], L[9], Ad[9];
            mbsi_se2_between(a, c, g);
            mbsi_se2_log(g, d);
            if (arg == MBS_ARG1) {
                mbsi_se2_jlog(d, Jb, nv);
                break;
            }
            mbsi_se2_jlog(d, L, 3);
            mbsi_se2_between(c, a, g);
            mbsi_se2_adjoint(g, Ad, 3);
            block_mul(3, -1.0, L, Ad, Jb, nv);
            break;
        }
        case MBS_JOINT_BALL: {
            double g[4], d[3], L[9], R[9];
            mbsi_quat_between(a, c, g);
            mbsi_so3_log(g, d);
            mbsi_so3_jr_inv(d, L);
            if (arg == MBS_ARG1) {
                for (int j = 0; j < 3; j++)
                    for (int r = 0; r < 3; r++) Jb[r + (size_t)nv * j] = L[r + 3 * j];
                break;
            }
            mbsi_quat_between(c, a, g);   /* Ad(q1⁻¹ q0) = R(q1⁻¹ q0) */
            m3_from_quat(g, R);
            block_mul(3, -1.0, L, R, Jb, nv);
            break;
        }
        }
    }
}
