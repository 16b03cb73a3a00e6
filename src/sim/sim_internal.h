/* sim_internal.h — the pieces of the simulation layer shared by its files: the gait reference
 * generators (gait.c) and the joint controller (controller.c) that the loop (sim.c) calls. */
#ifndef MBS_SIM_INTERNAL_H
#define MBS_SIM_INTERNAL_H

#include <stddef.h>

#include <math.h>

#include "mbs/sim.h"

#define MBS_SIM_PI 3.14159265358979323846   /* M_PI is not ISO C */

/* 0 → 1 over x in [0, 1] with zero slope at both ends (a raised cosine): the time profile of
 * every planned motion of the gaits and the walk. */
static inline double mbs_sim_smooth(double x)
{
    return x <= 0 ? 0 : x >= 1 ? 1 : 0.5 - 0.5 * cos(MBS_SIM_PI * x);
}

/* Solves the n x n symmetric positive semi-definite system A x = b in place (A overwritten;
 * column-major). A ridge at round-off level of A's diagonal makes a semi-definite A (dependent
 * contact rows) definite without moving the solution of a regular one; b becomes 0 when A is
 * not even semi-definite. */
void mbs_sim_spd_solve(double *A, int n, double *b);

/* mbs_scenario_load on a text already in memory (len bytes, no NUL needed at the end): `path`
 * names it in messages and the [model] urdf is resolved against its folder, as for a file.
 * mbs_scenario_load reads the file and calls this; the fuzzer (tools/fuzz_scenario.c) calls it
 * directly. */
mbs_scenario *mbs_scenario_load_text(const char *path, const char *text, size_t len, const char *const *overrides,
                                     int noverrides, mbs_error *err);

/* Reference generator of the squat, jump and trot controllers: foot positions in the base
 * frame as functions of time, turned into joint angles by the legs' IK. Leg i is the leg of
 * contact point i of the scenario. */
typedef struct mbs_gait {
    const mbs_controller_config *cfg;
    int nlegs;
    mbs_leg leg[MBS_SIM_MAX_CONTACTS];
    double nom[MBS_SIM_MAX_CONTACTS][3];   /* foot positions (base frame) in the initial posture */
    int pair[MBS_SIM_MAX_CONTACTS];        /* trot: 0 for the FL-HR diagonal, 1 for FR-HL */
} mbs_gait;

int mbs_gait_init(mbs_gait *g, const mbs_scenario *sc, mbs_error *err);
/* Writes the legs' joint references at time t into q (other coordinates untouched), sets
 * stance[i] = 1 for the legs the gait expects on the ground, and each leg's gains kp[i], kd[i]
 * (kp, kd may be NULL). touching (may be NULL) says which feet touch the ground now: the
 * jump's gains depend on it. */
void mbs_gait_reference(const mbs_gait *g, double t, const int *touching, double *q, int *stance, double *kp,
                        double *kd);

/* The scenario name of a controller type ("trot", "walk" ...). */
const char *mbs_controller_type_name(mbs_controller_type t);

/* A key's value as read (after --set overrides): the number (def when absent) or the text
 * (NULL when absent). For the walk's keys, which mbs_controller_config does not hold yet. */
double mbs_scenario_num(const mbs_scenario *sc, const char *section, const char *key, double def);
const char *mbs_scenario_text(const mbs_scenario *sc, const char *section, const char *key);
/* The two frames of a space-separated list of two names (the walk's feet); 0 when both exist. */
int mbs_scenario_two_frames(const mbs_scenario *sc, const char *list, int frame[2]);

/* Reference generator of the walk controller (walk.c): a quasi-static plan of the centre of
 * mass and the feet, turned into a whole-body configuration by damped least-squares inverse
 * kinematics on the full floating-base q, once per controller period. */
typedef struct mbs_walk {
    const mbs_model *m;
    mbs_data *d;
    int nq, nv, nbodies;
    int foot[2];                          /* frame ids of the feet */
    int foot_of[MBS_SIM_MAX_CONTACTS];    /* contact point i belongs to foot 0, 1, or -1 (neither) */
    double centre[2][3];                  /* centre of each foot's contact points, in the foot frame */
    double R0[2][9];                      /* foot orientations, kept all along */
    int nsteps;
    double (*steps)[2][3];                /* foot positions after each step (nsteps + 1 entries) */
    double com0[3], com_final[3];         /* initial and final COM targets */
    double settle, t_ds, t_ss, height;
    double gain_cap;                      /* a stance joint's kp scale is at most this times its free one */
    double qb0[4];                        /* base orientation target (the initial one) */
    double *q0;                           /* the posture the IK regularises towards */
    double *qc, *qn, *qw, *vprev;         /* IK solution at t and at t + dt, scratch, the previous v_ref */
    double tn;                            /* the time qn is for (NAN: none) */
    double *H, *g, *J, *Jb;               /* nv x nv normal matrix, nv right-hand side, two 6 x nv Jacobians */
    int *body_frame;                      /* a frame on each body at its origin, for the COM Jacobian */
    double mass;
    int swing;                            /* the foot the last reference has swinging, -1: none */
    double load[2];                       /* the share of the weight the last reference puts on each foot */
    int *leg_of;                          /* per velocity coordinate: the foot whose leg it moves, or -1 */
} mbs_walk;

int mbs_walk_init(mbs_walk *w, const mbs_scenario *sc, mbs_error *err);
void mbs_walk_fini(mbs_walk *w);
/* The walk's references at time t for a controller period dt: the configuration q (all nq),
 * the velocity v = (q(t + dt) ⊖ q(t)) / dt and the acceleration a (change of v over the last
 * period, all nv), and weight[i], the share of the weight the plan puts on the foot of contact
 * i (0 for a swing foot; 1 for a point on neither foot). */
void mbs_walk_reference(mbs_walk *w, double t, double dt, double *q, double *v, double *a, double *weight, int ncontacts);
/* The walk's stance gain scale (gains = inertia), nv entries: the apparent inertia of every
 * joint at q0 with both feet held, from Minv = M(q0)⁻¹ (nv x nv). Also fills w->leg_of. */
int mbs_walk_gain_scales(mbs_walk *w, const double *q0, const double *Minv, double *scale);

/* Joint PD with feed-forward, evaluated at the controller period. */
typedef struct mbs_controller {
    const mbs_scenario *sc;
    const mbs_model *m;
    mbs_system *sys;            /* for the contact points and their measured state */
    mbs_data *d;                /* its own: the stepper's data is left alone between steps */
    int nv, nq, floating;
    int nact, *aq, *av;         /* the actuated (one-coordinate) joints' indices into q and v */
    int use_gait, use_walk;
    mbs_gait gait;
    mbs_walk walk;
    double *gain_scale;         /* per velocity coordinate: 1, or the apparent inertia with gains = inertia */
    double *walk_scale;         /* walk with gains = inertia: the scales with both feet held */
    int stance[MBS_SIM_MAX_CONTACTS];
    double weight[MBS_SIM_MAX_CONTACTS];   /* each stance contact's weight in the feed-forward distribution */
    double kc, kv, cop_shift[2];           /* walk: balance gains (1, s) and the centre-of-pressure shift they ask */
    double *qr, *qp, *qm;       /* references at t, t + h, t - h */
    double *vr, *ar, *zero, *b; /* reference velocity and acceleration, zeros, rnea output */
    double *kpv, *kdv;          /* gains per velocity coordinate */
    double *J;                  /* 6 x nv scratch Jacobian */
    double *Jc;                 /* 3 x nv per stance contact: linear rows of the contact Jacobians */
} mbs_controller;

int mbs_controller_init(mbs_controller *c, const mbs_scenario *sc, mbs_system *sys, mbs_error *err);
void mbs_controller_fini(mbs_controller *c);
/* τ at time t for the state (q, v); writes every entry of tau (zero on unactuated dofs). */
void mbs_controller_compute(mbs_controller *c, double t, const double *q, const double *v, double *tau);

#endif
