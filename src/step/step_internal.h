/* step_internal.h — the step layer's internal header: the scheme descriptor every stepper file
 * defines and the registry lists, the stepper object, and the scratch helper of the simple
 * schemes. The layers above (and the tests) may include it. */
#ifndef MBS_STEP_INTERNAL_H
#define MBS_STEP_INTERNAL_H

#include "../base/base.h"
#include "../model/model_internal.h"
#include "../contact/contact_internal.h"
#include "mbs/contact.h"
#include "mbs/dynamics.h"
#include "mbs/liegroup.h"
#include "mbs/options.h"
#include "mbs/step.h"

/* One scheme: adding one is a file defining such a type and a line in registry.c. */
typedef struct mbs_stepper_type {
    mbs_scheme_info info;          /* name, summary, option table */
    /* allocates the scheme's state (st->impl) for st->sys with the options in st->opts */
    int (*init)(mbs_stepper *st, mbs_error *err);
    /* advances st->sys by dt; returns MBS_OK or non-zero when it cannot */
    int (*step)(mbs_stepper *st, double dt, mbs_step_stats *stats);
    void (*fini)(mbs_stepper *st);
    /* 1: step() applies the system's joint impedance itself (implicitly); 0: the registry adds its
     * torque at the start of each step to τ for the duration of the step */
    int impedance;
    /* 1: step() handles circular rim contacts (the rigid-contact schemes); 0: a system with rims is
     * refused when the stepper is created */
    int rims;
    /* saves or loads (one visitor, both directions) what the scheme keeps from one step to the next
     * — a previous configuration, warm starts, an inner stepper — for checkpoints; NULL: nothing
     * persists (scratch only), which tests/test_checkpoint.c proves by resuming bitwise */
    void (*state)(mbs_stepper *st, mbsi_state *s);
    /* the analytical Jacobians of one step of dt from the system's state (mbs_stepper_derivatives
     * says what they are): A (2nv x 2nv) and B (2nv x nv, every torque column), column-major, with
     * the torque the system holds (the registry adds the joint impedance's torque to it and its
     * derivative to A, and scales the velocity rows for the dissipation). It may change the system
     * and its contacts: the registry saved them and puts them back. NULL: finite differences. */
    int (*derivatives)(mbs_stepper *st, double dt, double *A, double *B);
} mbs_stepper_type;

/* What mbs_stepper_derivatives works in, carved once when the stepper is made (derivatives.c):
 * the state saved around the call, the nominal and perturbed results of finite differences, and
 * the matrices of the analytical chain rules. */
typedef struct mbsi_derivatives_ws {
    unsigned char *saved;          /* the stepper's state at the call (undo_n bytes) */
    double *q0, *v0, *tau0;        /* the state and torque at the call */
    double *qn, *vn, *qp, *vp;     /* the nominal and a perturbed step's result */
    double *col, *A, *B;           /* 2nv; 2nv x 2nv and 2nv x nv: the full Jacobians before the columns are chosen */
    double *a;                     /* nv: an acceleration */
    double *Fq, *Fv, *Mi;          /* nv x nv: ∂q̈/∂q, ∂q̈/∂v, M⁻¹ */
    double *D0, *D1;               /* nv x nv: Lie-group Jacobians */
    double *X[7];                  /* nv x 3nv each: derivatives of a stage's vectors in (δq, δv, δτ) */
    double *work;                  /* mbsi_contact_derivatives_work_size(nv) */
    int *iwork;                    /* nv */
    mbs_contact *contacts, *contacts2;   /* ncontacts each: the contacts before and after an update */
    unsigned char *fresh;          /* ncontacts: the update placed this contact's anchor */
    unsigned char *moved;          /* ncontacts: the update placed or moved it (A0 not zero) */
    double *A0;                    /* 9 x 2nv per contact: mbsi_contact_anchor_derivatives */
    /* B's nbcols columns the call needs (bcols NULL: the first nbcols), which a hook may compute
     * alone: it then writes them in that order (2nv x nbcols) and sets bchosen */
    const int *bcols;
    int nbcols, bchosen;
} mbsi_derivatives_ws;

struct mbs_stepper {
    const mbs_stepper_type *type;
    mbs_system *sys;
    void *opts;                    /* the struct the scheme's table filled (owned) */
    void *impl;
    mbs_error err;                 /* why the last step failed: a scheme fills it with mbsi_fail */
    double dissipation;            /* λ of mbs_stepper_set_dissipation: v ← (1 − λ) v after each step */
    unsigned char *undo;           /* mbs_stepper_restore's copy of the state it replaces (undo_n bytes) */
    size_t undo_n;
    mbsi_derivatives_ws dw;        /* mbs_stepper_derivatives' buffers (one block, dw_block) */
    void *dw_block;
};

/* One step of st's scheme as mbs_stepper_step takes it, without the checks and the dissipation:
 * the joint impedance's torque held from the step's start for a scheme that does not integrate it.
 * For a scheme that steps another (adaptive). */
int mbsi_stepper_raw_step(mbs_stepper *st, double dt, mbs_step_stats *stats);
/* A snapshot of st's state into buf (n >= mbs_stepper_state_size(st)): the fields' bytes alone
 * (mbsi_state_begin_snapshot), for mbsi_stepper_reload on st itself in this process. MBS_OK, or
 * MBS_ERR_ARG when the state needs more than n bytes. */
int mbsi_stepper_snapshot(mbs_stepper *st, void *buf, size_t n);
/* Loads a snapshot mbsi_stepper_snapshot took from st itself (it fits: no undo copy, no checks):
 * the derivatives' restore, before each perturbed step and at the end; a planner's knots. */
void mbsi_stepper_reload(mbs_stepper *st, const void *buf, size_t n);
/* Saves or loads st's persistent state (its type's state hook; nothing when NULL), after the
 * scheme's name, so that a checkpoint of another scheme fails at once. */
void mbsi_stepper_state(mbs_stepper *st, mbsi_state *s);
/* 1 when one of s's contacts is a rim. */
int mbsi_system_has_rims(const mbs_system *s);

/* What a scheme's derivatives hook returns for a step its chain rule does not cover (expo: a step
 * split at a touch-down, a second pass, a force trimmed to its cone, the Padé path): the registry
 * then takes central differences of it, through the same call. */
enum { MBSI_DERIVATIVES_FALLBACK = 1000 };

/* The anchors a step's first update (mbs_contact_forces with update = 1) at (q, v) places or
 * moves, as functions of (q, v), into st->dw.A0 and moved (mbsi_contact_anchor_derivatives); the
 * contacts left as that update leaves them, their state before it in st->dw.contacts. */
void mbsi_step_anchor_derivatives(mbs_stepper *st, const double *q, const double *v);
/* Carves st->dw for st's system (once, at creation) and frees it. */
int mbsi_derivatives_init(mbs_stepper *st, mbs_error *err);
void mbsi_derivatives_fini(mbs_stepper *st);
/* q̈ at (q, v) as a step evaluates it (mbs_system_dynamics with `update`, from the contacts' state
 * at the call) into a, and its Jacobians ∂q̈/∂q (tangent), ∂q̈/∂v and M⁻¹ (= ∂q̈/∂τ) into st->dw.Fq,
 * Fv, Mi, with the contacts' anchors held; with update, a contact whose anchor the update placed
 * (touch-down) is differentiated with its anchor following the point across the surface, as it
 * does, and the anchors it placed or moved are differentiated in st->dw.A0 and moved
 * (mbsi_contact_anchor_derivatives), for the schemes that evaluate forces again later in the step.
 * Leaves the contacts as the evaluation with `update` leaves them (their state before it in
 * st->dw.contacts). MBS_ERR_MODEL when M cannot be factorised. */
int mbsi_step_acceleration_derivatives(mbs_stepper *st, const double *q, const double *v, int update, double *a);
/* The configuration rows of a step's Jacobians for q⁺ = integrate(q, δ): A's and B's first nv rows
 * = [D0 0 0] + D1 X, where D0, D1 are the Jacobians of integrate at (q, δ) and X (nv x (2nv + nb))
 * is the derivative of δ in (δq, δv) and nb columns of δτ (B's nb columns). */
void mbsi_derivatives_configuration_rows(mbs_stepper *st, const double *q, const double *delta, const double *X,
                                         int nb, double *A, double *B);

/* The analytical A and B of explicit Euler (eq. 34; symplectic = 0) or semi-implicit Euler
 * (symplectic = 1), the two schemes' derivatives hook. */
int mbsi_derivatives_euler(mbs_stepper *st, double dt, int symplectic, double *A, double *B);

/* Steppers that need only scratch vectors keep them as st->impl = one carved block of nbuf
 * zeroed arrays of n doubles each; these make and free it (only at init / fini). */
int mbsi_step_buffers_init(mbs_stepper *st, int nbuf, size_t n, mbs_error *err);
void mbsi_step_buffers_fini(mbs_stepper *st);
static inline double *mbsi_step_buffer(const mbs_stepper *st, int i) { return ((double **)st->impl)[i]; }

#endif
