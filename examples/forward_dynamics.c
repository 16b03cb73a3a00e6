/* forward_dynamics.c — load a robot from its URDF and run the two central algorithms on it:
 * forward dynamics (ABA: the accelerations a torque produces) and inverse dynamics (RNEA: the
 * torque that produces given accelerations), then check that each undoes the other.
 *
 *   forward_dynamics [robot.urdf]        (default: urdf/solo12.urdf, run from the repository) */
#include <math.h>
#include <stdio.h>
#include <stdlib.h>

#include <mbs.h>

int main(int argc, char **argv)
{
    const char *urdf = argc > 1 ? argv[1] : "urdf/solo12.urdf";
    mbs_error err;
    mbs_model *m = mbs_model_from_urdf(urdf, NULL, &err);   /* NULL options: a free-flyer root */
    if (!m) { fprintf(stderr, "%s\n", err.msg); return 1; }
    int nq = mbs_model_nq(m), nv = mbs_model_nv(m);

    /* The data holds every buffer the algorithms work in (one per thread); the vectors are ours. */
    mbs_data *d = mbs_data_new(m);
    double *buf = calloc((size_t)nq + 4 * (size_t)nv, sizeof *buf);
    if (!d || !buf) {
        fprintf(stderr, "out of memory\n");
        mbs_data_free(d); free(buf); mbs_model_free(m);
        return 1;
    }
    double *q = buf, *v = q + nq, *tau = v + nv, *ddq = tau + nv, *tau_back = ddq + nv;
    int base = mbs_joint_type_of(m, 0) == MBS_JOINT_FREEFLYER ? 6 : 0;   /* v's base entries */
    printf("model: %s, nq %d, nv %d, mass %.3f kg\n", mbs_model_name(m), nq, nv, mbs_model_mass(m));

    /* 1. Free fall: the neutral configuration (base at the origin, every joint at zero), at rest,
     *    no torque. ABA returns the base's acceleration in its own frame (Pinocchio's convention),
     *    then the joints'; v, tau and ddq have nv entries, q has nq (the base quaternion). */
    mbs_neutral(m, q);
    mbs_aba(m, d, q, v, tau, ddq);
    double joints = 0;
    for (int k = base; k < nv; k++) joints = fmax(joints, fabs(ddq[k]));
    if (base)
        printf("free fall: base acceleration (%.4f, %.4f, %.4f) m/s^2, largest joint acceleration %.2e\n",
               ddq[0], ddq[1], ddq[2], joints);

    /* 2. The robot moving, with a torque on every joint (a free-flyer base is not actuated). */
    for (int k = 0; k < nv; k++) v[k] = 0.1 * (k % 5) - 0.2;       /* m/s and rad/s */
    for (int k = base; k < nv; k++) tau[k] = k % 2 ? 0.5 : -0.3;   /* N·m */
    mbs_aba(m, d, q, v, tau, ddq);                                 /* ddq = M⁻¹ (τ − C v − g) */
    mbs_rnea(m, d, q, v, ddq, tau_back);                           /* τ = M ddq + C v + g */
    double worst = 0;
    for (int k = 0; k < nv; k++) worst = fmax(worst, fabs(tau_back[k] - tau[k]));
    printf("moving: first joint acceleration %.4f, |rnea(aba(tau)) - tau| <= %.2e\n",
           base < nv ? ddq[base] : 0.0, worst);

    mbs_data_free(d);
    free(buf);
    mbs_model_free(m);
    return worst < 1e-9 ? 0 : 1;   /* the two algorithms agree to round-off */
}
