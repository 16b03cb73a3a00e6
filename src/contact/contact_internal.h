/* contact_internal.h — derivatives of the contact model and of the system dynamics, for the
 * implicit schemes (src/contact/contact_derivatives.c). Library-internal: the tests include
 * it to check these derivatives against finite differences. */
#ifndef MBS_CONTACT_INTERNAL_H
#define MBS_CONTACT_INTERNAL_H

#include <stddef.h>

#include "mbs/contact.h"

/* One contact point of the robot and its state (owned by this layer: steppers change it only
 * through the functions below). */
typedef struct mbs_contact {
    char name[MBS_NAME_LEN];
    int frame;                    /* model frame the point is attached to */
    double offset[3];             /* local offset in that frame */
    double radius;                /* 0: a point; > 0: a sphere, touching at its deepest point */
    /* state */
    int active;                   /* 1 while in contact */
    int slipping;                 /* 1 when the force was limited by the friction cone in the last update */
    double p[3], dp[3];           /* world position and velocity of the contact point */
    double p0[3], dp0[3];         /* anchor point and its velocity */
    double normal[3];             /* outward surface normal at the contact */
    double depth;                 /* penetration depth (>= 0) */
    mbs_material material;        /* of the geometry touched */
    double lambda[3];             /* world force the environment applies to the robot */
    double local[3];              /* body point under the contact at the last update (frame coordinates) */
} mbs_contact;

struct mbs_system {
    const mbs_model *model;
    mbs_data *data;
    mbs_environment env;
    int ncontacts, max_contacts;
    mbs_contact *contacts;
    int nq, nv, nbodies;
    double t;
    double *q, *v, *tau;          /* state and the torque applied during the next steps */
    double *fext;                 /* 6 x nbodies: contact forces as body wrenches (body frame, origin) */
    unsigned long resets;         /* counts mbs_system_set_state calls: a stepper with memory restarts */
    void *block;                  /* the one allocation of the buffers above */
};


/* World position p of contact c (frame placement · offset, from the kinematics last run in d);
 * with n, a sphere's point deepest along −n (centre − r n). R, pf: the frame's placement, or NULL. */
void mbsi_contact_point_world(const mbs_model *m, const mbs_data *d, const mbs_contact *c, const double n[3],
                             double p[3], double R[9], double pf[3]);


/* λ = −K (p − p0) − B (ṗ − ṗ0) (eq. 2) of a contact's current point and anchor, with
 * K = k_n n nᵀ + k_t (1 − n nᵀ) and B alike: no release, no cone. */
void mbsi_contact_spring_force(const mbs_contact *c, double lambda[3]);
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

/* Doubles of scratch (`work`) that the two functions below need for a model with nv
 * velocities; they also need `iwork`, nv ints. Allocate once, outside any step. */
size_t mbsi_contact_derivatives_work_size(int nv);

/* The contact forces of the active contacts as plain spring-dampers (eq. 2) about their
 * anchors, with the active set, the anchors and the normals held: no release, no friction cone,
 * and a point that has left the surface still pulled back. This smooth model is what a Newton
 * solve converges on reliably. Fills the contacts' p, dp, lambda and s->fext as
 * mbs_contact_forces does (slipping = 0). */
void mbsi_contact_forces_smooth(mbs_system *s, const double *q, const double *v);
/* q̈ = M⁻¹ (τ − h + Jᵀλ) with the forces of mbsi_contact_forces_smooth. */
void mbsi_system_dynamics_smooth(mbs_system *s, const double *q, const double *v, double *ddq);

/* Adds ∂τ_c/∂q and ∂τ_c/∂v of the generalized contact force τ_c = Σ_i J_iᵀ λ_i(q, v) to
 * dtau_dq and dtau_dv (nv x nv, column-major, leading dimension nv; q in the tangent space),
 * the anchors, normals and the active set held fixed. clamped = 1: of the forces of
 * mbs_contact_forces(s, q, v, 0), whose unilateral release and friction-cone scaling are
 * differentiated where they are smooth (a released contact contributes nothing); clamped = 0:
 * of those of mbsi_contact_forces_smooth(s, q, v). Must follow that call at the same (q, v):
 * it reads the contact points, velocities and forces it left in s->contacts. Overwrites the
 * kinematics in s->data (joint Jacobians at q). */
void mbsi_contact_force_derivatives(mbs_system *s, const double *q, const double *v, int clamped, double *dtau_dq,
                                   double *dtau_dv, double *work, int *iwork);

/* ∂q̈/∂q and ∂q̈/∂v (nv x nv, column-major, leading dimension nv) of the system dynamics
 * q̈ = M⁻¹ (τ − h + Σ J_iᵀ λ_i) at (q, v), with anchors and active set fixed as above.
 * `ddq` must be what mbs_system_dynamics(s, q, v, 0, ddq) (clamped = 1) or
 * mbsi_system_dynamics_smooth(s, q, v, ddq) (clamped = 0) just returned. Returns MBS_OK, or
 * MBS_ERR_MODEL when the mass matrix cannot be factorised. */
int mbsi_system_dynamics_derivatives(mbs_system *s, const double *q, const double *v, int clamped, const double *ddq,
                                    double *dddq_dq, double *dddq_dv, double *work, int *iwork);

#endif
