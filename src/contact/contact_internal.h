/* contact_internal.h — derivatives of the contact model and of the system dynamics, for the
 * implicit schemes (src/contact/contact_derivatives.c). Library-internal: the tests include
 * it to check these derivatives against finite differences. */
#ifndef MBS_CONTACT_INTERNAL_H
#define MBS_CONTACT_INTERNAL_H

#include <stddef.h>

#include "../base/base.h"
#include "../qp/qp_internal.h"
#include "mbs/contact.h"
#include "mbs/options.h"
#include "mbs/qp.h"

/* One contact point of the robot and its state (owned by this layer: steppers change it only
 * through the functions below). */
typedef struct mbs_contact {
    char name[MBS_NAME_LEN];
    int frame;                    /* model frame the point is attached to */
    double offset[3];             /* local offset in that frame */
    double radius;                /* 0: a point; > 0: a sphere, touching at its deepest point, or a rim */
    double axis[3];               /* a rim's unit axis in the frame (the circle's plane normal); zero: no rim */
    int boxes_only;               /* 1: meets boxes only (a capsule's inner spheres: mbs_system_add_capsule) */
    int link;                     /* 1: part of a link's geometry (capsule, box corners), not a foot */
    /* state */
    int active;                   /* 1 while in contact */
    int off;                      /* 1: switched off, meets nothing (mbs_system_set_contact_off) */
    int slipping;                 /* 1 when the force was limited by the friction cone in the last update */
    double p[3], dp[3];           /* world position and velocity of the contact point */
    double p0[3], dp0[3];         /* anchor point and its velocity */
    double normal[3];             /* outward surface normal at the contact */
    double depth;                 /* penetration depth (>= 0) */
    int solid;                    /* the solid of the scene last touched (mbsi_solid_material), -1: none yet */
    double lambda[3];             /* world force the environment applies to the robot */
    double local[3];              /* body point under the contact at the last update (frame coordinates) */
} mbs_contact;

/* A system is a scene — what the world is: the contact points and their geometry, the solids
 * and their materials (each material's one copy is its solid's), described by the add calls and
 * then frozen by mbs_system_finalize — and a state — what the world does: t, q, v, τ, each
 * contact's anchor and mode, the forces. Steppers are made against a finalized scene only, so
 * that the buffers they size once fit it for good (MuJoCo's mjModel/mjData split). */
struct mbs_system {
    const mbs_model *model;
    mbs_data *data;
    /* ---- the scene (frozen once finalized = 1) ---- */
    mbs_environment env;
    int ncontacts, max_contacts;
    int nfeet;                    /* the contacts before the first of a link's geometry: the feet */
    int finalized;
    mbs_contact *contacts;        /* geometry fields fixed with the scene; the state fields from `active` on */
    int nq, nv, nbodies;
    /* ---- the state ---- */
    /* The one clock: t = clock_t0 + clock_k · clock_dt, written only by mbs_stepper_step (an integer
     * count of steps, so that 10⁶ steps of 1 ms end at 1000 s to the last bit, not at a sum of
     * 10⁶ roundings) and restarted by mbs_system_set_state or a step of another length. */
    double t;
    double clock_t0, clock_dt;
    long long clock_k;
    double *q, *v, *tau;          /* state and the torque applied during the next steps */
    double *fext;                 /* 6 x nbodies: contact forces as body wrenches (body frame, origin) */
    unsigned long resets;         /* counts mbs_system_set_state calls: a stepper with memory restarts */
    /* the joint impedance of mbs_system_set_impedance (one-coordinate joints; zero elsewhere) */
    int imp_on;
    double *imp_kp, *imp_kd, *imp_qref, *imp_vref;   /* nv, nv, nq, nv */
    double *imp_tmp;              /* nv: the registry's copy of τ while it adds the impedance */
    /* passive joint damping (mbs_system_set_joint_damping): folded into imp_kd, which holds the
     * controller's kd plus damp, so that every scheme takes it as it takes the impedance */
    int damp_on;
    double *damp;                 /* nv */
    void *block;                  /* the one allocation of the buffers above */
    double *heights[MBS_MAX_HEIGHTFIELDS];   /* the heightfields' grids (env points at them), owned */
    /* Called by a scheme that splits its step at contact events (expo) at the start of the step
     * and of every sub-step, with the contacts' flags there and the sub-step's start time t_sub (s;
     * the system's t stays the step's start until the step ends): the sim counts the touch-downs
     * that begin and end inside one step. NULL: none. */
    void (*substep)(void *user, const mbs_system *s, double t_sub);
    void *substep_user;
};


/* The material of solid i of env (planes first, then boxes); NULL when i is out of range. */
const mbs_material *mbsi_solid_material(const mbs_environment *env, int i);
/* The number of solids of env (planes, boxes, heightfields): their indices for mbsi_solid_material. */
int mbsi_environment_nsolids(const mbs_environment *env);
/* The material of the solid contact c last touched (the scene's one copy, never a contact's own);
 * a contact that has touched nothing yet reads the nearest solid's (finalize made sure there is one). */
const mbs_material *mbsi_contact_material(const mbs_system *s, const mbs_contact *c);
/* mbs_environment_distance with the index of the nearest solid (planes first, then boxes; -1: none)
 * in place of its material. */
int mbsi_environment_nearest(const mbs_environment *env, const double center[3], double radius, double *gap,
                             double normal[3], int *solid);
/* mbsi_environment_nearest against what contact c meets (every solid, or the boxes only). */
int mbsi_contact_nearest(const mbs_environment *env, const mbs_contact *c, const double center[3], double radius,
                         double *gap, double normal[3], int *solid);
/* mbs_environment_query with the index of the solid penetrated in place of its material. */
int mbsi_environment_penetration(const mbs_environment *env, const double center[3], double radius, double *depth,
                                 double normal[3], double point[3], int *solid);
/* mbsi_environment_penetration of contact c's sphere at center against what c meets. */
int mbsi_contact_penetration(const mbs_environment *env, const mbs_contact *c, const double center[3], double *depth,
                             double normal[3], double point[3], int *solid);
/* Appends a point (radius 0) or sphere of a link's geometry on the named frame, after the feet;
 * boxes_only: it meets boxes alone (a capsule's inner spheres). Its index, or -1 with err filled. */
int mbsi_system_add_link_point(mbs_system *s, const char *frame, const double offset[3], double radius, int boxes_only,
                               mbs_error *err);
/* Checks a material's values (finite, >= 0); `what` names it in the message. The one check of a
 * material, for the add calls and the scenario reader alike. */
int mbsi_material_check(const mbs_material *mt, const char *what, mbs_error *err);

/* Saves or loads the system's whole evolving state (checkpoints): t, q, v, τ, the contact wrenches,
 * every contact's state (active and slipping flags, points, anchors, normal, depth, material,
 * force, body point), the reset counter and the joint impedance (on/off, gains, reference). */
void mbsi_system_state(mbs_system *s, mbsi_state *st);

/* Adds the joint impedance's torque kp (q_ref − q) + kd (v_ref − v) at (q, v) to tau (nv). */
void mbsi_system_impedance_torque(const mbs_system *s, const double *q, const double *v, double *tau);

/* World position p of contact c (frame placement · offset, from the kinematics last run in d);
 * with n, a sphere's point deepest along −n (centre − r n). R, pf: the frame's placement, or NULL. */
void mbsi_contact_point_world(const mbs_model *m, const mbs_data *d, const mbs_contact *c, const double n[3],
                             double p[3], double R[9], double pf[3]);


/* The signed gap (m; < 0: penetrating) between contact c's geometry — a point, a sphere, or a rim
 * (c->axis non-zero) — and the nearest solid of s->env, at the placements of the last kinematics
 * in s->data: the touching point pt (the geometry's point nearest that solid), the solid's outward
 * normal n and index (solid, see mbsi_solid_material), and the geometry's centre ctr (frame placement · offset). Returns 0 (gap =
 * +inf) when the environment is empty. */
int mbsi_contact_gap(const mbs_system *s, const mbs_contact *c, double *gap, double n[3], double pt[3], double ctr[3],
                     int *solid);

/* The point of c's geometry nearest a solid whose outward normal is n (the touching point of
 * mbsi_contact_gap, for a normal given) at the placements of the last kinematics in s->data, and
 * the placement R, pf of c's frame (neither may be NULL). */
void mbsi_contact_touch_point(const mbs_system *s, const mbs_contact *c, const double n[3], double pt[3], double R[9],
                              double pf[3]);

/* λ = −K (p − p0) − B (ṗ − ṗ0) (eq. 2) of a contact's current point and anchor, with
 * K = k_n n nᵀ + k_t (1 − n nᵀ) and B alike (material mt): no release, no cone. */
void mbsi_contact_spring_force(const mbs_contact *c, const mbs_material *mt, double lambda[3]);
/* A rolling sphere's touching point moves over the body: the tangential spring must stretch
 * only by what the body point under the contact slid (pm: where the body point recorded in
 * c->local at the last update is now), so the anchor follows the touching point's move
 * relative to it, in the tangent plane of n. */
void mbsi_contact_follow_roll(mbs_contact *c, const double pm[3], const double n[3]);
/* Adds to s->fext the wrench of a world force f applied at world point p on `body`
 * (body frame, at the body origin), using the placements of the last kinematics call. */
void mbsi_contact_add_wrench(mbs_system *s, int body, const double p[3], const double f[3]);

/* The contact layer owns each contact's state; a stepper changes it only through these. */
/* 1 when contact c's point (its sphere) penetrates s->env, at the placements of the last kinematics. */
int mbsi_contact_penetrates(const mbs_system *s, const mbs_contact *c);
/* Makes c active again with the anchor it had when it was released (ṗ0 kept). */
void mbsi_contact_activate(mbs_contact *c);
/* Releases c: no force until mbs_contact_forces with update = 1 finds it penetrating (new anchor). */
void mbsi_contact_release(mbs_contact *c);
/* Records the force a step applied to c (lambda) and whether it was on the friction cone's
 * boundary; a contact that did not slip gets an anchor at rest (ṗ0 = 0, §2.1). */
void mbsi_contact_record_step(mbs_contact *c, const double lambda[3], int slipping);

/* The dofs that move body `body` (its support), root first (indices increase down the tree), into
 * support (room for nv); returns how many. */
int mbsi_body_support(const mbs_model *m, int body, int *support);
/* Adds to dtau_dq (nv x nv, column-major) ∂(Σ_j J_jᵀ λ)/∂q_k, the change of the generalized force of
 * a world force λ at the world point p of a body, over the body's support (n dofs from
 * mbsi_body_support), from the world joint Jacobian columns S_j in d (mbs_compute_joint_jacobians
 * at q): J and P are 3 x n, J_j = pt(S_j, p) and P_k = ∂p/∂q_k; dlq (3 x n) is ∂λ/∂q_k, or NULL for
 * a force held fixed. With k's joint at or above j's, ∂S_j/∂q_k = S_k × S_j, whence
 *   ∂(J_jᵀλ)/∂q_k = λ · [k ⪯ j] pt(S_k × S_j, p) + ω_j · (P_k × λ) + J_j · ∂λ/∂q_k.
 * The entries whose j and k are both among the first `skip` dofs of the support are left out: a
 * caller with several points on one tree sums those of its root joint over the points at once
 * (with dlq NULL they are S_jᵀ (ω-part) · Σ P_k × λ − S_j · (S_k ×* Σ F), F = [λ; p × λ]). */
void mbsi_point_force_dq(const mbs_model *m, const mbs_data *d, const int *support, int n, const double p[3],
                         const double lam[3], const double *J, const double *P, const double *dlq, int skip, double *dtau_dq);

/* V[a] = Σ_{a' >= a} S_{a'} y_{a'} over a body's support (n dofs, root first; mbsi_body_support),
 * V[n] = 0 (6 x (n + 1)): the velocity the dofs from entry a down give the body, for joint
 * velocities y, from the world joint Jacobian columns S in d (mbs_compute_joint_jacobians). */
void mbsi_support_velocities(const mbs_data *d, const int *support, int n, const double *y, double *V);
/* ∂(J_p(q) y)/∂q at the support's dofs (3 x n into out): the change, with q, of the velocity for
 * joint velocities y of the body point at world p, p following a point whose own Jacobian columns
 * are P (3 x n; P = J_p for a point of the body, the centre's for a sphere's touching point),
 * from V of mbsi_support_velocities(y):
 *   ∂(J y)/∂q_k = pt(S_k × V[a0(k)], p) + ω × P_k,   ω = V[0]'s angular part,
 * a0(k) the entry of the first dof of k's joint (a tangent perturbation of dof k moves the subtree
 * from k's joint rigidly by exp(S_k δ); contact_derivatives.c's top comment). Only the entries
 * from `from` on are written (0: all; a caller may take the root's dofs otherwise). */
void mbsi_point_velocity_dq(const mbs_model *m, const mbs_data *d, const int *support, int from, int n,
                            const double p[3], const double *P, const double *V, double *out);
/* ∂a_p/∂q and ∂a_p/∂v (3 x n each, at the support's dofs) of the classical acceleration of the body
 * point at world p (following P as above) for joint velocities v and accelerations acc, gravity
 * excluded (mbs_frame_classical_acceleration after kinematics at (q, v, acc)); ∂a_p/∂acc = J_p.
 * With the body's spatial velocity V = Σ S v and acceleration A = Σ S acc + (V_body(j) × S_j) v_j
 * (world axes, at the origin), a_p = pt(A, p) + ω × v_p, and a perturbation of dof k gives
 *   q_k:  δV = S_k × V[a0],  δA = S_k × A[a0] − (S_k × V_λ(k)) × V[a0],  δp = P_k
 *   v_k:  δV = S_k,          δA = V_body(k) × S_k + S_k × V[a0],         δp = 0
 * (V[a0], A[a0]: the sums from k's joint down; V_λ(k): the velocity of the joint's parent body;
 * the Jacobi identity folds the Ṡ terms), then δa_p = pt(δA, p) + α × δp + δω × v_p
 * + ω × (pt(δV, p) + ω × δp). work: 18 (n + 1) doubles. */
void mbsi_point_acceleration_derivatives(const mbs_model *m, const mbs_data *d, const int *support, int n,
                                         const double p[3], const double *P, const double *v, const double *acc,
                                         double *da_dq, double *da_dv, double *work);

/* Doubles of scratch (`work`) that the two functions below need for a model with nv
 * velocities; they also need `iwork`, nv ints. Allocate once, outside any step. */
size_t mbsi_contact_derivatives_work_size(int nv);

/* The contact forces of the active contacts as plain spring-dampers (eq. 2) about their
 * anchors, with the active set, the anchors and the normals held: no release, no friction cone,
 * and a point that has left the surface still pulled back. This smooth model is what a Newton
 * solve converges on reliably. Fills the contacts' p, dp, lambda and s->fext as
 * mbs_contact_forces does (slipping = 0). */
void mbsi_contact_forces_smooth(mbs_system *s, const double *q, const double *v);
/* mbs_contact_forces on the forward kinematics already in s->data (at the (q, v) meant). */
void mbsi_contact_forces_kinematics(mbs_system *s, int update);
/* q̈ = M⁻¹ (τ − h + Jᵀλ) with the forces of mbsi_contact_forces_smooth. */
void mbsi_system_dynamics_smooth(mbs_system *s, const double *q, const double *v, double *ddq);

/* Adds ∂τ_c/∂q and ∂τ_c/∂v of the generalized contact force τ_c = Σ_i J_iᵀ λ_i(q, v) to
 * dtau_dq and dtau_dv (nv x nv, column-major, leading dimension nv; q in the tangent space),
 * the anchors, normals and the active set held fixed. clamped = 1: of the forces of
 * mbs_contact_forces(s, q, v, 0), whose unilateral release and friction-cone scaling are
 * differentiated where they are smooth (a released contact contributes nothing); clamped = 0:
 * of those of mbsi_contact_forces_smooth(s, q, v). Must follow that call at the same (q, v):
 * it reads the contact points, velocities and forces it left in s->contacts. Overwrites the
 * kinematics in s->data (joint Jacobians at q). fresh (ncontacts flags, may be NULL): contacts whose
 * anchor an update at this (q, v) placed right above the point, so that it moves with the point
 * across the surface and only the normal spring stretches with q. */
void mbsi_contact_force_derivatives(mbs_system *s, const double *q, const double *v, int clamped, double *dtau_dq,
                                   double *dtau_dv, double *work, int *iwork, const unsigned char *fresh);

/* The anchors an update (mbs_contact_forces with update = 1) at the state x = (q, v) placed or
 * moved, as functions of x: a contact that slipped there gets its anchor at p0_t = p_t + λ_t / k_t
 * with ṗ0 = ṗ_t (eq. 28; λ_t the cone-clamped force at x), one that touched down (fresh) at
 * p0_t = p_t with ṗ0 = 0, and a sphere's that stayed was rolled by its touching point's move over
 * the body, p0_t += (p − p_m)_t (follow_roll); the anchor's normal part is kept. And a sphere's
 * body point recorded under it, local = Rᵀ(p − p_f), from which later evaluations in the step roll
 * the anchor again. Fills A0 (9 x 2nv per contact, column-major, contact i at A0 + 18nv·i: rows
 * 0–2 ∂p0/∂x, rows 3–5 ∂ṗ0/∂x, rows 6–8 ∂local/∂x (frame axes), x = (q tangent, v))
 * and moved (1 where A0 is not zero). Must follow mbs_contact_forces(s, q, v, 0) on the contacts
 * as they were before that update (the fresh ones as it left them), as
 * mbsi_contact_force_derivatives. Overwrites s->data. */
void mbsi_contact_anchor_derivatives(mbs_system *s, const double *q, const double *v, const unsigned char *fresh,
                                     unsigned char *moved, double *A0, double *work, int *iwork);
/* D (nv x 2nv, leading dimension ldD) += α Σ_i J_i(q)ᵀ G_i (K_i δp0 + B_i δṗ0)/δx over the moved
 * contacts active at q: the generalized contact force's change at q with the start state x through
 * the anchors the update at x placed (A0 above), a sphere's rolled again from its recorded body point. Must follow mbs_contact_forces(s, q, ·, 0).
 * Overwrites s->data. */
void mbsi_contact_anchor_chain(mbs_system *s, const double *q, const double *A0, const unsigned char *moved, double alpha,
                               double *D, int ldD, int *iwork);

/* ∂q̈/∂q and ∂q̈/∂v (nv x nv, column-major, leading dimension nv) of the system dynamics
 * q̈ = M⁻¹ (τ − h + Σ J_iᵀ λ_i) at (q, v), with anchors and active set fixed as above.
 * `ddq` must be what mbs_system_dynamics(s, q, v, 0, ddq) (clamped = 1) or
 * mbsi_system_dynamics_smooth(s, q, v, ddq) (clamped = 0) just returned. Returns MBS_OK, or
 * MBS_ERR_MODEL when the mass matrix cannot be factorised. fresh: as above. Minv: M(q)⁻¹ (nv x nv,
 * column-major) when not NULL. The LTDL factor of M(q) is left in s->data (mbs_ltdl_solve applies
 * M⁻¹). */
int mbsi_system_dynamics_derivatives(mbs_system *s, const double *q, const double *v, int clamped, const double *ddq,
                                    double *dddq_dq, double *dddq_dv, double *Minv, double *work, int *iwork,
                                    const unsigned char *fresh);

/* ---- maximal-dissipation polytope contacts (polytope.c; Pan and Hauser 2020, eq. 5) ----
 * f_x = V_x w_x with w_x >= 0, 1ᵀ w_x <= 1 and the vertices v_x^a = s(d) (n + μ t^a) of a friction
 * pyramid scaled smoothly by the depth d: s = c ((d/d*)³ + ζ) (remarks 6–7). The mdp and nmdp
 * steppers choose the weights w (k per contact point, contact by contact). */
typedef struct mbs_polytope_options {
    int vertices;                  /* k */
    double zeta;                   /* ζ */
    double stand_depth;            /* d* (m) */
    double force_scale;            /* c (N); NAN: the weight over the number of contact points */
} mbs_polytope_options;

extern const mbs_option_table mbsi_polytope_option_table;

typedef struct mbs_polytope {
    int nc, k, nv, nw;             /* contact points, vertices each, velocities, weights (nc k) */
    double c, zeta, unit;          /* s = c ((d / unit)³ + ζ) */
    /* at the configuration of the last mbsi_polytope_eval, per contact point */
    double *s, *ds;                /* s(d) and ds/dd */
    double *depth;                 /* d (m, 0 when not touching) */
    double *point, *centre;        /* 3 each: the touching point and its sphere's centre (world) */
    double *dir;                   /* 3 x k each: n + μ t^a, the vertices over s */
    double *B;                     /* nv x nw: [J_xᵀ V_x], so that the generalized force is B w */
    /* the weights' QP: the engine's one solver, with the simplex constraints of
     * mbsi_polytope_constraints (rows = nw + nc), sized for nc more rows (nmdp's depth bounds);
     * NULL without contact points */
    mbs_qp *qp;
    int rows;
    double *Ain, *bin;
    double *Ain_d, *bin_d;         /* the same and nc rows more (mbsi_polytope_qp_bounded), ld rows + nc */
    /* scratch */
    double *J, *P, *dlq;           /* 3 x nv */
    int *support, *nsupport;       /* each contact body's dofs (nv each) and their number */
    void *block;
} mbs_polytope;

/* Saves or loads what of a polytope model persists between steps: its QP's warm start. */
void mbsi_polytope_state(mbs_polytope *p, mbsi_state *st);

/* The model of s's contact points with options o, and its QP; the only allocation. */
int mbsi_polytope_init(mbs_polytope *p, const mbs_system *s, const mbs_polytope_options *o, mbs_error *err);
void mbsi_polytope_fini(mbs_polytope *p);
/* Evaluates the pyramids at q: kinematics and joint Jacobians (into s->data), each point's depth,
 * normal, friction, scale and vertices, and B. Sets the contacts' normal and material. q = NULL:
 * at the configuration whose world placements and joint Jacobians s->data already holds (after
 * mbs_rnea_derivatives, which computes both as mbs_compute_joint_jacobians does). */
void mbsi_polytope_eval(mbs_polytope *p, mbs_system *s, const double *q);
/* The k edges n + μ t^a of a friction pyramid about the unit normal n (3 x k into dir), t^a evenly
 * spaced unit tangents starting from the world x axis projected on the surface (y for a normal
 * along x). */
void mbsi_pyramid_edges(const double n[3], double mu, int k, double *dir);
/* The world force V_i w_i of contact i (w: all nw weights) at the last evaluation. */
void mbsi_polytope_force(const mbs_polytope *p, int i, const double *w, double f[3]);
/* Adds ∂(B(q) w)/∂q (w held; tangent space) to dtau_dq (nv x nv), at the last evaluation (reads
 * its joint Jacobians); order 0 leaves out the change of the vertices with the depth (the
 * zeroth-order variant, eq. 10–11), order 1 keeps it. */
void mbsi_polytope_force_dq(mbs_polytope *p, mbs_system *s, const double *w, int order, double *dtau_dq);
/* The weights' QP with nc more constraints G_d w >= b_d (G_d: nc x nw, leading dimension nc; a
 * zero row with b_d = −1 leaves a point free): nmdp's bounds on the depths after the step. */
int mbsi_polytope_qp_bounded(mbs_polytope *p, const double *H, const double *g, const double *Gd, const double *bd,
                             int warm, double *w, mbs_error *err);
/* The velocity Jacobian of contact i's touching point (3 x nv, column-major, leading dimension 3;
 * zero off its body's support) at the last evaluation, which reads its joint Jacobians. Its normal
 * row is −∂d_i/∂q (the normal held: exact on a plane; a sphere's centre and touching point move
 * alike along n). */
void mbsi_polytope_point_jacobian(const mbs_polytope *p, const mbs_system *s, int i, double *Jp);
/* The QP constraints of the weights, Ain w >= bin: w >= 0 (nw rows), then −1ᵀ w_x >= −1 per contact
 * point (nc rows); Ain is (nw + nc) x nw, column-major, leading dimension nw + nc. */
void mbsi_polytope_constraints(const mbs_polytope *p, double *Ain, double *bin);
/* Solves the weights' QP: min ½ wᵀ H w + gᵀ w over the product of the contacts' simplices (H:
 * nw x nw, positive definite), warm-started from the last active set when warm is 1. Returns
 * MBS_OK or the solver's error (err may be NULL). */
int mbsi_polytope_qp(mbs_polytope *p, const double *H, const double *g, int warm, double *w, mbs_error *err);
/* Records the weights' forces into the contacts (force, point, depth, active = touching,
 * slipping = on the pyramid's boundary) and s->fext, at the last evaluation. */
void mbsi_polytope_record(const mbs_polytope *p, mbs_system *s, const double *w);

/* ---- rigid contact: inelastic impulses of maximal dissipation (impact.c; Zapolsky and Drumwright
 * 2015, eqs. 1–5) ----
 * k(v*): the post-impact velocity v⁺ = v* + M⁻¹ Σ_i J_iᵀ p_i: normal impulses of an inelastic
 * impact (p_n >= 0 ⊥ n_iᵀ J_i v⁺ >= −gap_i / H: a point may close its gap in the next step H, not
 * pass it; a penetration is pushed out by the fraction erp per step), then friction impulses in
 * each contact's polygon of radius μ p_n that dissipate the most kinetic energy; two QPs of the
 * engine's one solver (see impact.c). */
typedef struct mbs_impact_options {
    int sides;                     /* k: of the friction polygon */
    double margin;                 /* m: nearer points enter the impact problem */
    double erp;                    /* fraction of a penetration removed per step */
    int predict;                   /* 1: points that would pass the surface within the step enter too */
    int stagger;                   /* friction solves at most per impact */
} mbs_impact_options;

extern const mbs_option_table mbsi_impact_option_table;

typedef struct mbs_impact {
    int nc, k, nv, nw;             /* contact points, friction polygon sides, velocities, max impulses 3 nc */
    double margin, erp;
    int predict, stagger;
    int staggers;                  /* friction solves the last impact took */
    mbs_qp *qp;
    int nnear;                     /* contacts in the last impact problem */
    int *near;                     /* nc: their indices */
    int *fric;                     /* nc: the first friction column of each near contact in stage 2, or -1 */
    double *gap, *normal, *point;  /* nc, 3 nc, 3 nc: each contact's gap, normal, touching point */
    double *dir;                   /* 6 nc: two unit tangents of each near contact */
    double *J;                     /* 6 x nv: a frame Jacobian */
    double *Jt;                    /* 3 nc x nv: their point Jacobians (linear part) */
    double *M, *B, *MB;            /* nv x nv; nv x nw: [J_iᵀ n_i, J_iᵀ t_1, J_iᵀ t_2] and M⁻¹ B */
    double *Bc, *MBc;              /* the columns of B and M⁻¹ B a friction solve uses */
    double *H, *g, *Ain, *bin, *beta;
    double *cvec, *pbar;           /* the impulses' work coefficients; stage 1's normal impulses */
    double *vel;                   /* 6 nc: the contacts' centre velocities (eq. 3–4 bounds) */
    void *block;
} mbs_impact;

/* Saves or loads what of an impact model persists between steps: its QP's warm start and the
 * last impact's friction-solve count. */
void mbsi_impact_state(mbs_impact *im, mbsi_state *st);

/* The impact model of s's contact points with options o; the only allocation. */
int mbsi_impact_init(mbs_impact *im, const mbs_system *s, const mbs_impact_options *o, mbs_error *err);
void mbsi_impact_fini(mbs_impact *im);
/* k(·) at configuration q after a step h: v (nv) holds v* on entry and v⁺ on return. A point may
 * approach at gap / max(h, horizon): horizon is the longest step of eq. 1 that can follow (the
 * caller's whole step), so that a short sub-step's impulse cannot carry a point through the
 * surface in a longer one after it.
 * Records each contact's state (active: an impulse pushes; lambda: the impulse over h, N; depth,
 * point, normal, point velocity) and the wrenches in s->fext. Overwrites the kinematics in s->data.
 * Returns MBS_OK or the QP's error, with err filled. */
int mbsi_impact_apply(mbs_impact *im, mbs_system *s, const double *q, double *v, double h, double horizon,
                      mbs_error *err);
/* Conservative advancement (eq. 3; eq. 4 with ev): the longest time the state (q, v) may move at
 * constant velocity before a contact geometry farther than the margin from the environment can
 * touch it: its gap over a bound on its closing speed, that of its body's origin along the normal
 * plus |n × ω| r_max (r_max: the geometry's reach from that origin, its centre's distance plus its
 * radius). Exact for a rigid body whose origin moves in a straight line (rigid.c integrates a
 * free-flyer so); an estimate, as the paper's, for the bodies of a chain. ev (nv, may be NULL) is
 * an error estimate of v whose share eq. 4 adds (|n|ᵀ|e_ẋ| and g(ω, e_ω) of eq. 5). INFINITY when
 * nothing can touch. Overwrites the kinematics in s->data. */
double mbsi_impact_advance_time(mbs_impact *im, mbs_system *s, const double *q, const double *v, const double *ev);

#endif
