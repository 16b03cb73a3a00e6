/* simulate.c — the README's "A simulation from C", as a whole program: Solo-12 standing on flat
 * ground under a joint PD for 2 s, stepped by the exponential integrator at 2 ms, without a
 * scenario file. `make test` builds and runs it (`make example`), so the README's code cannot rot.
 *
 *   build/examples/simulate [path/to/solo12.urdf]     (default: urdf/solo12.urdf, from the repository)
 *
 * mbs_system_new starts at the model's neutral configuration: Solo's base at the origin with its
 * legs straight down, the feet 0.3 m under the ground z = 0. Stepping from there launches the robot
 * (or, with stiff enough contacts, blows up: mbs_stepper_step then returns MBS_ERR_NUMERIC), so the
 * program sets its own initial posture: the neutral one with the base raised until the feet touch. */
#include <stdio.h>

#include <mbs.h>

#define FOOT_RADIUS 0.0191   /* Solo's foot: a ball of this radius centred on the FOOT frame */

static const char *const feet[4] = {"FL_FOOT", "FR_FOOT", "HL_FOOT", "HR_FOOT"};

/* The base height at which the lowest foot ball of posture q touches z = 0 (q's base height is
 * replaced). Returns a negative number when a foot frame is missing. */
static double standing_height(const mbs_model *m, double *q)
{
    mbs_data *d = mbs_data_new(m);
    if (!d) return -1;
    double lowest = 0, R[9], p[3];
    q[2] = 0;
    for (int i = 0; i < 4; i++) {
        int f = mbs_frame_id(m, feet[i]);
        if (f < 0) { mbs_data_free(d); return -1; }
        mbs_compute_frame_placement(m, d, q, f, R, p);
        if (i == 0 || p[2] < lowest) lowest = p[2];
    }
    mbs_data_free(d);
    return FOOT_RADIUS - lowest;
}

/* A control law of your own: a joint PD holding the posture q0, the base unactuated. Free-flyer
 * first, so joint k's position is q[k + 1] (q has the base quaternion's extra coordinate). */
static void my_controller(const double *q0, double t, const double *q, const double *v, double *tau)
{
    (void)t;
    const double kp = 5, kd = 0.1;   /* N·m/rad, N·m·s/rad */
    for (int k = 0; k < 6; k++) tau[k] = 0;
    for (int k = 6; k < 18; k++) tau[k] = kp * (q0[k + 1] - q[k + 1]) - kd * v[k];
}

int main(int argc, char **argv)
{
    const char *urdf = argc > 1 ? argv[1] : "urdf/solo12.urdf";
    mbs_error err;
    mbs_model *m = mbs_model_from_urdf(urdf, NULL, &err);   /* NULL: free-flyer root */
    if (!m) { fprintf(stderr, "%s\n", err.msg); return 1; }
    if (mbs_model_nq(m) != 19 || mbs_model_nv(m) != 18) {
        fprintf(stderr, "%s: not Solo-12 (nq %d, nv %d)\n", urdf, mbs_model_nq(m), mbs_model_nv(m));
        mbs_model_free(m);
        return 1;
    }
    int status = 1;
    mbs_stepper *st = NULL;

    /* --- the README's snippet, from here --- */
    mbs_system *sys = mbs_system_new(m, 4, &err);            /* model, data, contacts, state */
    if (!sys) { fprintf(stderr, "%s\n", err.msg); goto done; }
    mbs_material ground = {1e5, 1e5, 300, 300, 1.0};        /* K_n, K_t (N/m), B_n, B_t (N·s/m), mu */
    double up[3] = {0, 0, 1};
    if (mbs_system_add_plane(sys, up, 0.0, &ground, &err) != MBS_OK) { fprintf(stderr, "%s\n", err.msg); goto done; }
    for (int i = 0; i < 4; i++)
        if (mbs_system_add_contact(sys, feet[i], NULL, FOOT_RADIUS, &err) < 0) { fprintf(stderr, "%s\n", err.msg); goto done; }
    /* the system starts at mbs_neutral (feet 0.3 m under the ground): set a posture of your own */
    double q0[19], tau[18];
    mbs_neutral(m, q0);                                      /* legs straight down, base at the origin */
    q0[2] = standing_height(m, q0);                          /* raised until the feet touch */
    if (q0[2] < 0) { fprintf(stderr, "%s: no foot frames\n", urdf); goto done; }
    mbs_system_set_state(sys, q0, NULL, 0.0);                /* v = 0 at t = 0 */
    st = mbs_stepper_new("expo", sys, NULL, 0, &err);
    if (!st) { fprintf(stderr, "%s\n", err.msg); goto done; }
    int k;
    for (k = 0; k < 1000; k++) {
        my_controller(q0, mbs_system_time(sys), mbs_system_q(sys), mbs_system_v(sys), tau);
        mbs_system_set_tau(sys, tau);
        if (mbs_stepper_step(st, 2e-3, NULL) != MBS_OK) {    /* a NaN or inf is an error, never a success */
            fprintf(stderr, "%s\n", mbs_stepper_last_error(st)->msg);
            break;
        }
    }
    /* --- to here --- */

    const double *q = mbs_system_q(sys);
    printf("t: %g\nbase_z_start: %.4f\nbase_z: %.4f\n", mbs_system_time(sys), q0[2], q[2]);
    /* stood: every step succeeded and the base is still near its height (the feet sink m g / (4 K)) */
    status = k == 1000 && q[2] > q0[2] - 0.02 && q[2] < q0[2] + 0.02 ? 0 : 1;
    if (status) fprintf(stderr, "simulate: the robot did not stand (%d steps, base z %.4f from %.4f)\n", k, q[2], q0[2]);
done:
    mbs_stepper_free(st);
    mbs_system_free(sys);
    mbs_model_free(m);
    return status;
}
