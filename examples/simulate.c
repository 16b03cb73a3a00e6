/* simulate.c — a simulation built in code, without a scenario file: Solo-12 on flat ground for 2 s,
 * held up by a joint PD of our own, stepped by the exponential integrator at 2 ms, its contact
 * forces read back every period. Exits with 0 when the robot stood.
 *
 *   simulate [path/to/solo12.urdf]        (default: urdf/solo12.urdf, run from the repository) */
#include <math.h>
#include <stdio.h>

#include <mbs.h>

static const char *const feet[4] = {"FL_FOOT", "FR_FOOT", "HL_FOOT", "HR_FOOT"};

/* Our control law: a joint PD holding the posture q0, the base (v[0..5]) unactuated. Joint k's
 * velocity is v[k], its position q[k + 1]: the base's orientation takes 4 entries of q, 3 of v. */
static void my_controller(const double *q0, const double *q, const double *v, double tau[18])
{
    const double kp = 5, kd = 0.1;   /* N·m/rad, N·m·s/rad */
    for (int k = 0; k < 18; k++) tau[k] = k < 6 ? 0 : kp * (q0[k + 1] - q[k + 1]) - kd * v[k];
}

int main(int argc, char **argv)
{
    const char *urdf = argc > 1 ? argv[1] : "urdf/solo12.urdf";
    mbs_error err;
    mbs_model *m = mbs_model_from_urdf(urdf, NULL, &err);   /* NULL options: a free-flyer root */
    if (!m) { fprintf(stderr, "%s\n", err.msg); return 1; }
    mbs_system *sys = NULL;
    mbs_stepper *st = NULL;
    int status = 1;
    if (mbs_model_nv(m) != 18) { fprintf(stderr, "%s: not Solo-12\n", urdf); goto done; }

    /* The system: a scene (contact points, solids and their materials), then its state (q, v, τ, t). */
    sys = mbs_system_new(m, 4, &err);
    if (!sys) goto fail;
    mbs_material ground = {1e5, 1e5, 300, 300, 1.0};       /* K_n, K_t (N/m), B_n, B_t (N·s/m), mu */
    double up[3] = {0, 0, 1};
    if (mbs_system_add_plane(sys, up, 0.0, &ground, &err) != MBS_OK) goto fail;   /* the ground z = 0 */
    for (int i = 0; i < 4; i++)                            /* a ball of 19.1 mm on each foot frame */
        if (mbs_system_add_contact(sys, feet[i], NULL, 0.0191, &err) < 0) goto fail;
    if (mbs_system_finalize(sys, &err) != MBS_OK) goto fail;   /* the scene is complete: frozen */

    /* A new system starts in the neutral configuration: legs straight down, the base at the origin,
     * the feet 0.3 m under the ground. Raise the base by the deepest foot's penetration. */
    double q0[19], tau[18], raise = 0;
    mbs_neutral(m, q0);
    mbs_system_set_state(sys, q0, NULL, 0.0);
    for (int i = 0; i < 4; i++) {
        mbs_contact_info c;
        mbs_system_contact(sys, i, &c);
        raise = fmax(raise, c.depth);
    }
    q0[2] = raise;
    mbs_system_set_state(sys, q0, NULL, 0.0);              /* at rest (v = NULL: zero), t = 0 */

    st = mbs_stepper_new("expo", sys, NULL, 0, &err);     /* NULL, 0: the scheme's default options */
    if (!st) goto fail;
    double fz = 0;                                        /* the ground's vertical push on the feet */
    for (int k = 0; k < 1000; k++) {                      /* 1000 periods of 2 ms */
        my_controller(q0, mbs_system_q(sys), mbs_system_v(sys), tau);
        mbs_system_set_tau(sys, tau);
        if (mbs_stepper_step(st, 2e-3, NULL) != MBS_OK) { /* e.g. MBS_ERR_NUMERIC: a NaN, never a success */
            fprintf(stderr, "%s\n", mbs_stepper_last_error(st)->msg);
            goto done;
        }
        fz = 0;
        for (int i = 0; i < mbs_system_ncontacts(sys); i++) {
            mbs_contact_info c;
            mbs_system_contact(sys, i, &c);
            fz += c.force[2];                             /* N, world axes */
        }
    }

    /* For MPC and trajectory optimisation: the Jacobians of the next step x⁺ = f(x, τ) at this
     * state, A = ∂x⁺/∂x (36 x 36, x = (q, v) in the tangent space) and B = ∂x⁺/∂τ for the twelve
     * actuated joints (36 x 12), column-major. Nothing is stepped; the state stays as it is. */
    static double A[36 * 36], B[36 * 12];
    int actuated[12];
    for (int k = 0; k < 12; k++) actuated[k] = 6 + k;
    if (mbs_stepper_derivatives(st, 2e-3, MBS_DERIVATIVES_AUTO, actuated, 12, A, B) != MBS_OK) {
        fprintf(stderr, "%s\n", mbs_stepper_last_error(st)->msg);
        goto done;
    }
    printf("d(base_vz+)/d(tau_FL_KFE): %.3g m/s/(N m)\n", B[20 + 36 * 2]);   /* row 18 + 2: v⁺ base z; column 2: FL_KFE */

    double z = mbs_system_q(sys)[2], weight = 9.81 * mbs_model_mass(m);
    printf("t: %g s\nbase_z: %.4f m (start %.4f m)\nfeet_fz: %.2f N (weight %.2f N)\n",
           mbs_system_time(sys), z, q0[2], fz, weight);
    /* Stood: the base near its height (the feet sink by m g / (4 K_n)), the ground carrying the robot. */
    status = fabs(z - q0[2]) < 0.02 && fabs(fz - weight) < 0.05 * weight ? 0 : 1;
    if (status) fprintf(stderr, "simulate: the robot did not stand\n");
    goto done;
fail:
    fprintf(stderr, "%s\n", err.msg);
done:
    mbs_stepper_free(st);
    mbs_system_free(sys);
    mbs_model_free(m);
    return status;
}
