/* aba_derivatives.c — the derivatives of forward dynamics, as a model-predictive controller
 * needs them to linearise ddq = aba(q, v, τ) about its trajectory:
 *
 *   δddq = ∂ddq/∂q δq + ∂ddq/∂v δv + M⁻¹ δτ
 *
 * computed analytically in O(n²) (Carpentier & Mansard, RSS 2018). δq lives in the tangent space
 * (nv entries, even though q has nq): the configuration moved by δq is mbs_integrate(q, δq). The
 * program checks one column of ∂ddq/∂q against a central finite difference.
 *
 *   aba_derivatives [robot.urdf]        (default: urdf/solo12.urdf, run from the repository) */
#include <math.h>
#include <stdio.h>
#include <stdlib.h>

#include <mbs.h>

int main(int argc, char **argv)
{
    const char *urdf = argc > 1 ? argv[1] : "urdf/solo12.urdf";
    mbs_error err;
    mbs_model *m = mbs_model_from_urdf(urdf, NULL, &err);
    if (!m) { fprintf(stderr, "%s\n", err.msg); return 1; }
    int nq = mbs_model_nq(m), nv = mbs_model_nv(m);
    size_t n2 = (size_t)nv * (size_t)nv;
    mbs_data *d = mbs_data_new(m);
    /* q, q+ and q- (nq each), then v, tau, ddq, ddq+, ddq-, dq (nv each), then three nv x nv matrices */
    double *buf = calloc(3 * (size_t)nq + 6 * (size_t)nv + 3 * n2, sizeof *buf);
    if (!d || !buf) {
        fprintf(stderr, "out of memory\n");
        mbs_data_free(d); free(buf); mbs_model_free(m);
        return 1;
    }
    double *q = buf, *qp = q + nq, *qm = qp + nq, *v = qm + nq, *tau = v + nv, *ddq = tau + nv;
    double *ddqp = ddq + nv, *ddqm = ddqp + nv, *dq = ddqm + nv;
    double *dddq_dq = dq + nv, *dddq_dv = dddq_dq + n2, *Minv = dddq_dv + n2;

    /* A state away from every symmetry: a random configuration (the same one on every run),
     * some velocity and some torque. */
    unsigned long long seed = 42;
    mbs_random_configuration(m, &seed, q);
    for (int k = 0; k < nv; k++) {
        v[k] = 0.3 * sin(1.0 + k);      /* m/s, rad/s */
        tau[k] = 0.5 * cos(2.0 * k);    /* N·m (the base's entries are forces on it: zero for a robot) */
    }

    /* The three Jacobians, nv x nv column-major (leading dimension nv), and ddq itself. A step of
     * dt, v' = v + dt ddq, then has ∂v'/∂v = I + dt dddq_dv and ∂v'/∂τ = dt M⁻¹: an MPC's A and B. */
    mbs_aba_derivatives(m, d, q, v, tau, ddq, dddq_dq, dddq_dv, Minv);

    /* Check column j of ∂ddq/∂q: move q by ±h along tangent direction j. */
    int last = mbs_model_njoints(m) - 1, j = mbs_joint_idx_v(m, last);   /* the last joint's column */
    const double h = 1e-6;
    dq[j] = h;
    mbs_integrate(m, q, dq, qp);
    dq[j] = -h;
    mbs_integrate(m, q, dq, qm);
    mbs_aba(m, d, qp, v, tau, ddqp);
    mbs_aba(m, d, qm, v, tau, ddqm);

    printf("d ddq / d q, column %d (joint %s):\n%4s %16s %16s\n", j, mbs_joint_name(m, last),
           "row", "analytical", "finite diff.");
    double worst = 0, scale = 1;
    for (int i = 0; i < nv; i++) {
        double fd = (ddqp[i] - ddqm[i]) / (2 * h), an = dddq_dq[(size_t)j * nv + i];
        printf("%4d %16.8f %16.8f\n", i, an, fd);
        worst = fmax(worst, fabs(an - fd));
        scale = fmax(scale, fabs(an));
    }
    printf("largest difference: %.2e (relative %.2e)\n", worst, worst / scale);

    mbs_data_free(d);
    free(buf);
    mbs_model_free(m);
    return worst <= 1e-6 * scale ? 0 : 1;   /* central differences are good to about h² */
}
