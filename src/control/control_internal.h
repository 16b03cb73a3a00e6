/* control_internal.h — the control layer's pieces: the controller interface its files
 * implement, the feedback law (pd_law.c: the PD and the stable PD), the reference generators
 * (gait.c with squat.c, jump.c, trot.c and crawl.c; walk_plan.c), the Solo-type leg inverse
 * kinematics (leg_ik.c) and the numeric IK of any limb (limb_ik.c).
 * The sim layer and the tests may include it; nothing below the control layer does. */
#ifndef MBS_CONTROL_INTERNAL_H
#define MBS_CONTROL_INTERNAL_H

#include <stddef.h>

#include "../base/base.h"
#include "../model/model_internal.h"
#include "../contact/contact_internal.h"
#include "mbs/contact.h"
#include "mbs/control.h"
#include "mbs/dynamics.h"
#include "mbs/liegroup.h"
#include "mbs/options.h"

#define MBS_CONTROL_MAX_CONTACTS 32   /* contact points a controller distributes forces over */

/* ---- the interface ---- */

/* One controller: adding one is a file defining such a type and a line in registry.c. */
typedef struct mbs_controller_type {
    mbs_scheme_info info;          /* name, summary, option table */
    /* builds the controller's state (c->impl) from its options: the struct the table filled,
     * c->opts, which lives as long as the controller (init may resolve defaults in it) */
    int (*init)(mbs_controller *c, mbs_error *err);
    void (*compute)(mbs_controller *c, double t, const double *q, const double *v, double *tau);
    void (*fini)(mbs_controller *c);
    /* optional: checks options against each other (no model needed); *key names the one at fault */
    int (*check)(const void *opts, const char **key, mbs_error *err);
    /* saves or loads (one visitor, both directions) what the controller keeps from one period to
     * the next — phases, IK warm starts, previous references, QP warm starts — for checkpoints;
     * NULL: nothing persists, which tests/test_checkpoint.c proves by resuming bitwise */
    void (*state)(mbs_controller *c, mbsi_state *s);
    /* optional: the controller's own figures for the run's summary, as "key: value\n" lines into
     * buf (n bytes); returns the length needed, as snprintf */
    int (*report)(const mbs_controller *c, char *buf, size_t n);
} mbs_controller_type;

struct mbs_controller {
    const mbs_controller_type *type;
    mbs_system *sys;
    const mbs_model *m;
    double *q0;                    /* nq: the posture it was created with (owned copy) */
    double dt;                     /* controller period (s) */
    void *opts;                    /* the options struct of the type's table (owned) */
    void *impl;
};

/* The type behind a registry entry (NULL when unknown). */
const mbs_controller_type *mbsi_controller_type_find(const char *name);
/* Checks a controller's options against each other after they were checked one by one;
 * fills *key with the option at fault. MBS_OK for a type without such a check. */
int mbsi_controller_check(const char *name, const mbs_option *opts, int nopts, const char **key, mbs_error *err);

/* Saves or loads c's persistent state (its type's state hook, after its name). */
void mbsi_controller_state(mbs_controller *c, mbsi_state *s);
/* c's own figures for the summary (its type's report hook; "" without one) into buf (n bytes). */
void mbsi_controller_report(const mbs_controller *c, char *buf, size_t n);

/* ---- sensing (sensing.c) ---- */
/* touching[i] = 1 when contact point i of sys is within 1 mm of the environment at q: the sensed
 * contact of a real robot, with a margin so that feet resting exactly on the ground count. Uses d
 * for the kinematics. */
void mbsi_sense_contacts(const mbs_system *sys, mbs_data *d, const double *q, int *touching);

/* ---- the feedback law: joint PD with feed-forward (pd_law.c) ----
 *   τ_j = s_p kp (q_ref − q) + s_d kd (v_ref − v) + τ_ff,
 * τ_ff the joint part of inverse dynamics once the stance contacts carry the base's part; or
 * with feedback = stable, the stable PD of Tan, Liu & Turk (2011), the same law evaluated at
 * the backward-Euler state one controller period h ahead:
 *   τ_j = s_p kp (q_ref(t + h) − q − h v − h² a) + s_d kd (v_ref(t + h) − v − h a) + τ_ff,
 * a the accelerations that torque itself produces (see pd_law.c); or with feedback = impedance
 * the PD handed to the system as a joint impedance held with τ = τ_ff, which the stepper
 * applies at every step (nmdp implicitly). */

typedef enum mbs_feedforward { MBS_FF_NONE = 0, MBS_FF_GRAVITY = 1, MBS_FF_INVDYN = 2 } mbs_feedforward;
typedef enum mbs_gain_mode { MBS_GAINS_UNIFORM = 0, MBS_GAINS_INERTIA = 1 } mbs_gain_mode;
typedef enum mbs_feedback { MBS_FEEDBACK_PD = 0, MBS_FEEDBACK_STABLE = 1, MBS_FEEDBACK_IMPEDANCE = 2 } mbs_feedback;

typedef struct mbs_pd_options {
    double kp, kd;                 /* joint gains (N·m/rad, N·m·s/rad; per unit inertia with gains = inertia) */
    int feedforward;               /* mbs_feedforward */
    int gains;                     /* mbs_gain_mode */
    int feedback;                  /* mbs_feedback */
} mbs_pd_options;

extern const mbs_option_table mbsi_pd_option_table;

typedef struct mbs_pd_law {
    const mbs_model *m;
    mbs_system *sys;               /* its contact points and environment: the sensed contacts */
    mbs_data *d;                   /* its own: the stepper's data is left alone between steps */
    mbs_pd_options opt;
    const double *q0;
    double h;                      /* the controller period: the stable PD's look-ahead */
    int nv, nq, floating, ncontacts;
    int nact, *aq, *av;            /* the actuated (one-coordinate) joints' indices into q and v */
    double *gain_scale;            /* per velocity coordinate: 1, or the apparent inertia with gains = inertia */
    /* the reference of this period, set by the controller between begin and torque */
    double *qr, *vr, *ar;          /* nq, nv, nv */
    double *kpv, *kdv;             /* gains per velocity coordinate */
    int stance[MBS_CONTROL_MAX_CONTACTS];     /* contacts that carry the base in the feed-forward */
    double weight[MBS_CONTROL_MAX_CONTACTS];  /* each stance contact's weight in that distribution */
    int touching[MBS_CONTROL_MAX_CONTACTS];   /* sensed: within 1 mm of the environment */
    /* scratch */
    double *qp, *qm, *zero, *b, *J, *Jc;
    double *M;                     /* feedback = stable: the prediction's nv x nv matrix; stable and */
    double *kp_eff, *kd_eff;       /* impedance: the gains of this period (scales included) per velocity coordinate */
    void *block;
} mbs_pd_law;

/* The law for c's system and posture with options o; M⁻¹ at q0 into Minv when not NULL (nv x nv,
 * column-major), which gains = inertia needs and the walk reuses. */
int mbsi_pd_law_init(mbs_pd_law *law, const mbs_controller *c, const mbs_pd_options *o, double *Minv, mbs_error *err);
void mbsi_pd_law_fini(mbs_pd_law *law);
/* Checkpoints: the law's last reference, gains, stance and sensed contacts. */
void mbsi_pd_law_state(mbs_pd_law *law, mbsi_state *s);
/* Starts a period: the reference is the posture at rest (qr = q0, vr = ar = 0), gains kp and kd
 * everywhere, weights 1, and the stance contacts are those touching now. */
void mbsi_pd_law_begin(mbs_pd_law *law, const double *q);
/* The time the reference of a period starting at t is for: t, or t + h with feedback = stable
 * or impedance (the state the period ends in). */
double mbsi_pd_law_reference_time(const mbs_pd_law *law, double t);
/* The PD part into tau (every entry written); kp_scale (nv) replaces the gain scale of the
 * stiffness when not NULL. With feedback = stable, the position error is taken at q + h v;
 * with impedance, tau is zero (the system applies the PD). */
void mbsi_pd_law_torque(mbs_pd_law *law, const double *q, const double *v, const double *kp_scale, double *tau);
/* Adds τ_ff, the inverse dynamics at (q, v, ar) (or gravity alone) whose base part the stance
 * contacts carry, to tau. cop_shift (world x y, m) moves the centre of pressure of those
 * contact forces when not NULL. */
void mbsi_pd_law_feedforward(mbs_pd_law *law, const double *q, const double *v, const double *cop_shift, double *tau);
/* The torques that hold c's posture q0 at rest with the feet touching there carrying the base (the
 * feed-forward of a law with feedforward = invdyn and zero gains) into ff (nv): the warm start and
 * torque reference of the optimising controllers. */
int mbsi_pd_law_holding_torques(const mbs_controller *c, double *ff, mbs_error *err);
/* Ends a period: with feedback = stable, subtracts h (s_d kd + h s_p kp) a from tau, a the
 * accelerations that tau (PD and feed-forward) produces at the measured state (q, v); with
 * impedance, sets the system's joint impedance (the gains, qr, vr); nothing with pd. */
void mbsi_pd_law_finish(mbs_pd_law *law, const double *q, const double *v, double *tau);

/* ---- Solo-type leg inverse kinematics (leg_ik.c) ----
 * A leg is the chain root → HAA (about x) → HFE (about y) → KFE (about y) → foot frame, with
 * every joint frame parallel to the root at q = neutral; link lengths and offsets are read from
 * the model. Foot positions are expressed in the root (base) frame. */
typedef struct mbs_leg {
    char foot[MBS_NAME_LEN];
    int foot_frame;
    int joint[3];                  /* HAA, HFE, KFE joint ids */
    int idx_q[3], idx_v[3];
    double p_haa[3];               /* HAA origin in the base frame */
    double d1[3];                  /* HAA → HFE origin */
    double y_off;                  /* lateral offset of the leg plane from the HAA axis */
    double L1, L2, beta1, beta2;   /* thigh and shank lengths and angle offsets in the leg plane */
    double knee;                   /* +1 or -1: the knee branch */
    double hip_z_sign;             /* -1: the foot is below the HAA axis (the branch of HAA) */
} mbs_leg;

/* Builds the leg of foot frame `foot` from the model; the knee branch is the one of
 * configuration q_ref (the initial posture). Fails when the chain is not of that form. */
int mbsi_leg_init(mbs_leg *leg, const mbs_model *m, const char *foot, const double *q_ref, mbs_error *err);
/* Joint angles (HAA, HFE, KFE) placing the foot at p (base frame). Returns 0 when p is
 * reachable, 1 when it was clamped onto the workspace boundary. */
int mbsi_leg_ik(const mbs_leg *leg, const double p[3], double angles[3]);
/* Foot position (base frame) for the joint angles: the inverse of mbsi_leg_ik. */
void mbsi_leg_fk(const mbs_leg *leg, const double angles[3], double p[3]);

/* ---- numeric limb inverse kinematics (limb_ik.c) ----
 * Any serial limb: the one-coordinate joints between the base (a free flyer, or the world) and
 * a foot frame, solved for the foot point's position in the base frame (and, for a round foot,
 * the foot's tilt, so that it does not roll) by damped least squares, the redundancy
 * resolved towards the rest posture (the initial one) in the null space of the task's
 * Jacobian, finished by Newton's method on the optimality conditions. The kinematics are the
 * limb's own chain's (its joints' placements read from the model at init), not the robot's: a
 * solve allocates nothing and touches no mbs_data. */
#define MBS_LIMB_MAX_JOINTS 16
#define MBS_LIMB_MAX_KKT (MBS_LIMB_MAX_JOINTS + 5)   /* the optimality system: n angles, up to 5 multipliers */

typedef struct mbs_limb {
    const mbs_model *m;
    char foot[MBS_NAME_LEN];
    int foot_frame;
    double offset[3];                        /* the foot point in the foot frame (a contact's offset) */
    int rows;                                /* 3: the point's position; 5: and the frame's tilt */
    int n;                                   /* joints, base to foot */
    int joint[MBS_LIMB_MAX_JOINTS], idx_q[MBS_LIMB_MAX_JOINTS], idx_v[MBS_LIMB_MAX_JOINTS];
    const mbs_body *body[MBS_LIMB_MAX_JOINTS];   /* each joint's body in the model (type, axis, tree transform) */
    double root_R[9], root_p[3];             /* the body the chain hangs from, in the base frame */
    double foot_R[9], foot_p[3];             /* the foot frame in its body */
    double rest[MBS_LIMB_MAX_JOINTS];        /* the posture the solution stays closest to */
    double rest_R[9];                        /* the foot frame's rotation (base frame) at rest */
    double lo[MBS_LIMB_MAX_JOINTS], hi[MBS_LIMB_MAX_JOINTS];   /* joint limits (±inf: none) */
    double last[MBS_LIMB_MAX_JOINTS];        /* the last solution, where the next solve starts */
    /* the last solve's optimality system at its solution, LU-factored (mbsi_limb_ik_rate) */
    int kkt;                                 /* its size n + rows; 0: none (the solve did not end by Newton) */
    double target[3], nu[5];                 /* then that solve's target and multipliers */
    int piv[MBS_LIMB_MAX_KKT];
    double lu[MBS_LIMB_MAX_KKT * MBS_LIMB_MAX_KKT];
} mbs_limb;

/* The limb of the point at `offset` (may be NULL: the origin) in foot frame `foot`, resting at
 * the angles of q_ref (nq); with hold_tilt the foot frame's tilt (rotation about the base's x
 * and y axes) is held at rest as well. Fails when a joint between the base and the foot has
 * several coordinates, when there are fewer joints than the task's rows, or when none moves
 * the foot. */
int mbsi_limb_init(mbs_limb *l, const mbs_model *m, const char *foot, const double offset[3], int hold_tilt,
                   const double *q_ref, mbs_error *err);
void mbsi_limb_fini(mbs_limb *l);
/* Checkpoints: the last solution (the next solve's start) and its factorised optimality system. */
void mbsi_limb_state(mbs_limb *l, mbsi_state *s);
/* The foot point's position (base frame) for the limb's angles x (n). */
void mbsi_limb_fk(const mbs_limb *l, const double *x, double p[3]);
/* The same, the foot frame's rotation R (base frame, may be NULL) and the point's 3 x n
 * position Jacobian J (column-major, may be NULL). */
void mbsi_limb_fk_jacobian(const mbs_limb *l, const double *x, double p[3], double R[9], double *J);
/* The limb's angles x (n) placing the foot point at p (base frame), the tilt at rest if held,
 * to 1e-11 (m, rad), closest to rest among those; starts from the last solution. Returns 0
 * when that is reachable, 1 when it is not: x then puts the foot at a closest point of the
 * workspace (a local minimum of the task error). */
int mbsi_limb_ik(mbs_limb *l, const double p[3], double *x);
/* The derivative of the last solve's solution along a motion pdot of its target (base frame):
 * the angles' rate xdot (n), exact for the posture-regularised solution (the optimality
 * conditions differentiated). Returns 1 (xdot untouched) when the last solve did not end on a
 * regular solution there (a joint at its limit, an unreachable target): then differentiate
 * the solutions numerically. */
int mbsi_limb_ik_rate(const mbs_limb *l, const double pdot[3], double *xdot);

/* ---- the gaits' reference generator (gait.c) ----
 * Foot positions in the base frame as functions of time (each gait's file), turned into joint
 * angles by the legs' IK; leg i is the leg of contact point i. */
typedef struct mbs_gait mbs_gait;
/* A gait's feet at time t: p[i] (base frame) for leg i, from the nominal feet g->nom; stance[i]
 * the legs it expects on the ground, and each leg's gains. touching (may be NULL) says which
 * feet touch now. */
typedef void (*mbs_gait_feet)(const mbs_gait *g, double t, const int *touching, double p[][3], int *stance,
                              double *kp, double *kd);

struct mbs_gait {
    const void *opts;              /* the gait's options */
    mbs_gait_feet feet;
    int nlegs;
    mbs_leg leg[MBS_CONTROL_MAX_CONTACTS];     /* the analytic IK of a Solo-type leg ... */
    mbs_limb *limb[MBS_CONTROL_MAX_CONTACTS];  /* ... or, when the leg is not of that form, the numeric one */
    int nj[MBS_CONTROL_MAX_CONTACTS];          /* each leg's joints, and their indices into q and v */
    int jq[MBS_CONTROL_MAX_CONTACTS][MBS_LIMB_MAX_JOINTS], jv[MBS_CONTROL_MAX_CONTACTS][MBS_LIMB_MAX_JOINTS];
    double nom[MBS_CONTROL_MAX_CONTACTS][3];   /* foot positions (base frame) in the initial posture */
    int pair[MBS_CONTROL_MAX_CONTACTS];        /* 0 for the FL-HR diagonal, 1 for FR-HL */
    mbs_pd_law law;
};

/* The trot's schedule (trot.c; the mpc controller's gait = trot costs follow it too): after
 * `settle` s, the diagonal pairs alternate every half `period`, the base meant to travel forward
 * at `velocity` (m/s, reached over `ramp` s), a swinging foot lifted by step_height (m). */
typedef struct mbs_trot_schedule {
    double settle, period, velocity, step_height, ramp;
} mbs_trot_schedule;
/* Its keys (settle, period, velocity, step_height, ramp): the trot's options, and the base of the
 * mpc controller's table. */
extern const mbs_option_table mbsi_trot_schedule_option_table;
/* Foot position p (base frame) at time t of the leg with nominal foot nom in diagonal pair `pair`
 * (0: FL-HR, 1: FR-HL), and whether it should be in stance then; a swing ends `sink` (m) below
 * the ground, the stance coming back up to it. Returns how far through its swing the foot is
 * (0 to 1), or -1 in stance. */
double mbsi_trot_foot(const mbs_trot_schedule *s, const double nom[3], int pair, double t, double sink, double p[3],
                      int *stance);

/* The gait controllers' init, compute and fini: the legs of c's contact points, the law, and
 * each period the reference (with velocity and acceleration by central differences) fed to it. */
int mbsi_gait_init(mbs_controller *c, const mbs_pd_options *pd, mbs_gait_feet feet, mbs_error *err);
void mbsi_gait_compute(mbs_controller *c, double t, const double *q, const double *v, double *tau);
void mbsi_gait_fini(mbs_controller *c);
/* A receding horizon's checkpoint of an iLQR solver (mbs/ilqr.h): its controls, the gains and
 * nominal states its next warm start follows after mbs_ilqr_shift, and its regularisation. */
struct mbs_ilqr;
void mbsi_ilqr_state(struct mbs_ilqr *p, mbsi_state *s);
/* Checkpoints of the gait controllers: the law and every numeric limb's warm start. */
void mbsi_gait_state(mbs_controller *c, mbsi_state *s);

/* ---- the walk's reference generator (walk_plan.c) ----
 * A quasi-static plan of the centre of mass and the feet, turned into a whole-body
 * configuration by damped least-squares inverse kinematics on the full floating-base q, once
 * per controller period. */
typedef struct mbs_walk_plan_options {
    int foot[2];                   /* frame ids of the feet */
    int steps;
    double settle, step_length, step_time, double_support, step_height;
    double gain_cap;               /* a stance joint's kp scale is at most this times its free one */
} mbs_walk_plan_options;

typedef struct mbs_walk {
    const mbs_model *m;
    mbs_data *d;
    int nq, nv, nbodies;
    int foot[2];                          /* frame ids of the feet */
    int foot_of[MBS_CONTROL_MAX_CONTACTS];/* contact point i belongs to foot 0, 1, or -1 (neither) */
    double centre[2][3];                  /* centre of each foot's contact points, in the foot frame */
    double R0[2][9];                      /* foot orientations, kept all along */
    int nsteps;
    double (*steps)[2][3];                /* foot positions after each step (nsteps + 1 entries) */
    double com0[3], com_final[3];         /* initial and final COM targets */
    double settle, t_ds, t_ss, height;
    double gain_cap;
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
    void *block;
} mbs_walk;

int mbsi_walk_init(mbs_walk *w, const mbs_system *sys, const double *q0, const mbs_walk_plan_options *o, mbs_error *err);
void mbsi_walk_fini(mbs_walk *w);
/* Checkpoints: the IK solutions at t and t + dt (the next solve's start), the time of the second,
 * the previous reference velocity, the swing foot and the loads. */
void mbsi_walk_state(mbs_walk *w, mbsi_state *s);
/* The walk's references at time t for a controller period dt: the configuration q (all nq),
 * the velocity v = (q(t + dt) ⊖ q(t)) / dt and the acceleration a (change of v over the last
 * period, all nv), and weight[i], the share of the weight the plan puts on the foot of contact
 * i (0 for a swing foot; 1 for a point on neither foot). */
void mbsi_walk_reference(mbs_walk *w, double t, double dt, double *q, double *v, double *a, double *weight, int ncontacts);
/* The walk's stance gain scale (gains = inertia), nv entries: the apparent inertia of every
 * joint at q0 with both feet held, from Minv = M(q0)⁻¹ (nv x nv). Also fills w->leg_of. */
int mbsi_walk_gain_scales(mbs_walk *w, const double *q0, const double *Minv, double *scale);

/* ---- the walking pattern of the task-space controller (walk_pattern.c) ----
 * Footsteps, a centre-of-mass trajectory from the linear inverted pendulum whose ZMP follows a
 * reference inside the support polygon (solved through the divergent component of motion,
 * ξ = c + ċ/ω, backward in time so that it stays bounded), and swing-foot trajectories that
 * leave and land at rest with zero acceleration, lifted on a smooth bump. */
typedef struct mbs_walk_pattern_options {
    int foot[2];                   /* frame ids: foot[0] steps first */
    int steps;                     /* steps; foot[k % 2] swings in step k */
    double settle, double_support, single_support, rest;   /* s */
    double step_length, step_height;                       /* m */
} mbs_walk_pattern_options;

typedef struct mbs_walk_pattern {
    mbs_walk_pattern_options o;
    double omega;                  /* sqrt(g / z_c) of the pendulum */
    double com0[3];                /* initial centre of mass; its height is kept */
    double centre[2][3];           /* each foot's contact centre in its frame */
    double R0[2][9];               /* foot orientations, kept */
    double (*place)[2][3];         /* foot frame positions after each step (steps + 1) */
    double (*target)[2];           /* the ZMP target of each phase (steps + 1), x y */
    double dt;                     /* sample of the COM trajectory */
    int n;                         /* samples */
    double *c, *cd, *cdd;          /* 3 x n: COM position, velocity, acceleration */
    double *zmp;                   /* 2 x n: the ZMP reference */
    void *block;
} mbs_walk_pattern;

/* The reference of one instant: the COM's position, velocity and acceleration, and per foot
 * whether it is in stance and its frame's position, velocity and acceleration (world). */
typedef struct mbs_walk_sample {
    double com[3], com_v[3], com_a[3];
    double zmp[2];                 /* the ZMP reference (x y) */
    double load[2];                /* each foot's share of the weight the ZMP implies */
    int stance[2];
    double p[2][3], v[2][3], a[2][3];
} mbs_walk_sample;

/* The pattern for the contact points of sys at posture q0 (the feet start there); the only
 * allocation. */
int mbsi_walk_pattern_init(mbs_walk_pattern *w, const mbs_system *sys, const double *q0,
                           const mbs_walk_pattern_options *o, mbs_error *err);
void mbsi_walk_pattern_fini(mbs_walk_pattern *w);
/* The reference at time t (s). */
void mbsi_walk_pattern_sample(const mbs_walk_pattern *w, double t, mbs_walk_sample *out);
/* Each foot's contact centre (the mean of the contact points on the body of frame foot[f], in
 * foot frame coordinates) at q0, and foot_of[i] = 0, 1 or -1 (neither) per contact point (may be NULL). */
void mbsi_feet_centres(const mbs_model *m, mbs_data *d, const mbs_system *sys, const double *q0, const int foot[2],
                       double centre[2][3], int *foot_of);
/* Footsteps: place[0] the foot frames at q0 (R0 their orientations, kept), place[k + 1] after step
 * k, in which foot k % 2 advances along the base's heading by `length` (the first and the last
 * step) or twice that (the steps between, passing the other foot). */
void mbsi_footsteps(const mbs_model *m, mbs_data *d, const double *q0, const int foot[2], int steps, double length,
                    double R0[2][9], double (*place)[2][3]);
/* The pattern's duration: settle, steps, the last double support and the rest. */
double mbsi_walk_pattern_duration(const mbs_walk_pattern *w);

#endif
