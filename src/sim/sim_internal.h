/* sim_internal.h — the pieces of the simulation layer shared by its files: the gait reference
 * generators (gait.c) and the joint controller (controller.c) that the loop (sim.c) calls. */
#ifndef MBS_SIM_INTERNAL_H
#define MBS_SIM_INTERNAL_H

#include <stddef.h>

#include "mbs/sim.h"

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

/* Joint PD with feed-forward, evaluated at the controller period. */
typedef struct mbs_controller {
    const mbs_scenario *sc;
    const mbs_model *m;
    mbs_system *sys;            /* for the contact points and their measured state */
    mbs_data *d;                /* its own: the stepper's data is left alone between steps */
    int nv, nq, floating;
    int nact, *aq, *av;         /* the actuated (one-coordinate) joints' indices into q and v */
    int use_gait;
    mbs_gait gait;
    int stance[MBS_SIM_MAX_CONTACTS];
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
