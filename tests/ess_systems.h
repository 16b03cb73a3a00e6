/* ess_systems.h — the test systems of Anderson & Revzen 2024 (arXiv 2402.00279) for the
 * event-selected integrator (mbs/ess.h), with their exact solutions, shared by
 * tests/test_ess.c and tools/bench/bench_ess.c (defined in tests/ess_systems.c):
 *
 *  - the 3-D affine system of table 4.1, guards at the coordinate planes, and its exact
 *    piecewise e^{At}-affine solution with event times found to machine precision;
 *  - the 1-D hopper of sec. 5.1 and its closed form;
 *  - the planar plate falling on m vertical spring-dampers of sec. 5.2;
 *  - Solo-12 dropped onto the ground, the four foot heights as guards (the engine's
 *    articulated-body algorithm is the vector field).
 *
 * Each system's f, h and dh have the signatures of mbs_ess_system's callbacks, with the
 * system's struct (or NULL for the affine system) as user. */
#ifndef MBS_ESS_SYSTEMS_H
#define MBS_ESS_SYSTEMS_H

#include "mbs.h"

/* ================================================================ affine system (table 4.1) */

/* The exact solution of the affine system: its pieces between events. */
typedef struct affine_exact {
    int nseg;                    /* pieces of the trajectory (events + 1) */
    double t[4], x[4][3];        /* start time and state of each piece */
    signed char s[4][3];         /* its guard sides */
    int guard[3];                /* guard crossed at the start of piece i + 1 */
} affine_exact;

/* The field ẋ = A x + b of the mode selected by the guard sides s (table 4.1). */
int affine_f(void *user, const double *x, const signed char *s, double *xd);
/* Guards h = (x, y, -z): crossing means x >= 0, y >= 0, z <= 0 (sigma > 0 is the crossed side). */
int affine_h(void *user, const double *x, double *h);
/* Dh·w of affine_h. */
int affine_dh(void *user, const double *x, const double *w, double *out);
/* The exact solution from x0 over [0, T], event times bisected to the last bit. */
void affine_solve(const double x0[3], double T, affine_exact *ex);
/* The exact state x at time t of a solution from affine_solve. */
void affine_eval(const affine_exact *ex, double t, double x[3]);

/* ================================================================ 1-D hopper (sec. 5.1) */

/* The hopper's mass, leg stiffness, rest length and gravity; x = (z, ż). */
typedef struct hopper_par { double mass, k, L0, g; } hopper_par;

/* Free fall, plus the leg spring k (L0 - z) in stance (guard 0 crossed). */
int hopper_f(void *user, const double *x, const signed char *s, double *xd);
/* Guards h = (L0 - z, z - L0): touch-down, lift-off. */
int hopper_h(void *user, const double *x, double *h);
/* Dh·w of hopper_h. */
int hopper_dh(void *user, const double *x, const double *w, double *out);
/* Exact (z, v) at t from (z0, v0) and the first maxev events (times, guards); returns the event count. */
int hopper_exact(const hopper_par *p, double z0, double v0, double t, double *z, double *v, double *ev_t,
                 int *ev_g, int maxev);

/* ================================================================ plate on springs (sec. 5.2) */

/* The plate is a line through its centre of mass (x, z) at angle θ; spring i stands at
 * x_s[i] with rest length L0, so h_i = L0 + tan θ (x - x_s[i]) - z is its compression,
 * Dh_i = [tan θ, -1, sec² θ (x - x_s[i])] (sec. 5.2), and its force K h_i + B ḣ_i acts
 * vertically at x_s[i] while compressed. Guard 2i is spring i's touch-down, 2i + 1 its
 * lift-off (the negative, as for the hopper). State (x, z, θ, ẋ, ż, θ̇). */
typedef struct plate_sys {
    int ns;
    double mass, inertia, L0, g, K, B;   /* K, B per spring */
    double xs[128];
} plate_sys;

/* A 2 m, 1 kg plate over ns evenly spaced springs of total stiffness Ktot and damping Btot. */
void plate_setup(plate_sys *p, int ns, double Ktot, double Btot);
/* Gravity plus the compressed springs' forces and torques. */
int plate_f(void *user, const double *x, const signed char *s, double *xd);
/* Guards 2i, 2i + 1: spring i's compression and its negative. */
int plate_h(void *user, const double *x, double *h);
/* Dh·w of plate_h. */
int plate_dh(void *user, const double *x, const double *w, double *out);

/* ================================================================ Solo-12 drop */

/* State x = (q, v) with q as a plain vector of R^19: the base quaternion is normalised
 * inside f and h, so the field is defined for any non-zero quaternion, and its quaternion
 * part q̇ = ½ q ⊗ (ω, 0) leaves |q| constant in exact arithmetic; the integrator's drift of
 * |q| (tolerance-sized) then changes nothing the model sees. This keeps the integrator a
 * plain R^n method (dense output, projection x + f·dt) without re-anchoring local
 * coordinates at every accepted step. Contact: a vertical linear spring-damper below z = 0
 * at each foot frame's origin, with viscous tangential damping; guard 2i is foot i's
 * touch-down (h = -z), 2i + 1 its lift-off (h = z). The joints are held by a PD law. */
typedef struct solo_sys {
    mbs_model *m;
    mbs_data *d;
    int nq, nv, nb;
    int frame[4], body[4];
    double pfoot[4][3];                  /* foot frame origin in its body */
    double K, B, Bt, Kp, Kd;
    double qref[64];
    double *qn, *fext, *tau, *ddq, *vt;
} solo_sys;

/* The state's derivative: ABA with the foot contact forces and the joints' PD torques. */
int solo_f(void *user, const double *x, const signed char *sg, double *xd);
/* Guards 2i, 2i + 1: foot i's depth -z and height z. */
int solo_h(void *user, const double *x, double *h);
/* Dh·w of solo_h, from the foot velocities w's q part represents. */
int solo_dh(void *user, const double *x, const double *w, double *out);
/* Frees what solo_setup allocated and zeroes s (s NULL: nothing). */
void solo_free(solo_sys *s);
/* Loads Solo standing at height z0 with roll and pitch, at rest, into s and x0; 0, or -1 with err filled. */
int solo_setup(solo_sys *s, const char *urdf, double z0, double roll, double pitch, double *x0,
               mbs_error *err);

#endif
