/* expo_derivatives.h — the analytical Jacobians of one step of the exponential integrator
 * (src/step/expo.c), for the steps its closed form takes in one piece: one sub-step (no touch-down
 * split), one pass (every contact on its spring and damper over the step), no average trimmed to
 * its cone, and the damping proportional to the stiffness (B = βK, the closed form of
 * expo_modal.c). expo.c checks that and otherwise hands the step to central differences.
 * Internal to the stepper layer; the workspace is carved in expo's one block. */
#ifndef MBS_STEP_EXPO_DERIVATIVES_H
#define MBS_STEP_EXPO_DERIVATIVES_H

#include "step_internal.h"

typedef struct mbsi_expo_dws {
    int nv, nq, nmax;              /* velocities, coordinates, 3 x contacts at most */
    double *qm, *dm;               /* nq, nv: the linearisation point and its tangent from q */
    double *dqm;                   /* nv x 3nv: its derivative in (δq, δv, δτ) */
    double *Jm, *Pm;               /* nmax x nv: the contact points' Jacobians at qm, their centres' */
    double *Y, *Mi;                /* nv x nmax: M⁻¹Jᵀ; nv x nv: M⁻¹ at qm */
    double *U, *S, *V, *lam, *esc; /* nmax²: Υ, S = RΥR, its eigenvectors; nmax: eigenvalues, scratch */
    double *R;                     /* 9 per contact: K^½ in world axes */
    double *dUp;                   /* nmax (nmax + 1) / 2 x nv: ∂Υ/∂qm, its upper triangles packed */
    double *F;                     /* 4 nmax²: the divided differences of Q_0..Q_3 at S's eigenvalues */
    double *Sk, *T;                /* nmax² and nmax (nmax + nv) scratch */
    double *Zb;                    /* 3 nmax x 3nv: Z1, Z2 (scratch) and ∂p̈_free, each n x n3, one after the
                                    * other for the n and columns n3 of the call (one product over the three) */
    double *K, *Tk;                /* nmax (nmax + 1) / 2 x a block of columns, nmax x nv: the matrix functions' change */
    double *RQ;                    /* 2 nv x nv: RNEA derivatives ∂/∂q (forces added), then ∂/∂v */
    double *MiX;                   /* 2 nv x nv: −M⁻¹ times the two */
    double *vf, *acc1, *acc2;      /* nv */
    double *dp, *dw, *pd0, *pdd, *pm, *yh, *Qv, *lb, *lb2; /* nmax (yh: 3 nmax, Qv: 4 nmax) */
    double *dDp, *dDw, *dPd0, *dy; /* nmax x 3nv (dy: three of them) */
    double *dL;                    /* nv x nmax: −Y W, which takes ∂λ̄ and ∂λ̄₂ to the accelerations */
    double *dvf, *dacc1;           /* nv x 3nv (dacc1: twice, ∂acc1 then ∂acc2 one after the other) */
    double *tk;                    /* 2 nmax: one direction's share of the two averages */
    double *work;                  /* the contact layer's scratch: 18 (nv + 1) */
    double *mwork;                 /* mbsi_mass_bilinear_dq's (bodies <= nv + 1) */
    double *J3, *P3, *D3, *D3v;    /* 3 x nv: one contact's rows over its support */
    int *support, *nsupport;       /* nv per contact: its body's support (mbsi_body_support), and its length */
} mbsi_expo_dws;

/* Carves w for up to cmax contacts on a model of nq coordinates and nv velocities. */
void mbsi_expo_dws_layout(mbs_carver *c, mbsi_expo_dws *w, int cmax, int nq, int nv);

/* A and B (mbs_stepper_type's derivatives hook) of one step h of expo from the system's state, the
 * na contacts act[] active as the step's gather left them (anchors placed), the anchors'
 * derivatives in st->dw (A0, moved), the dynamics frozen at q + h/2 v (midpoint) or q, damping β K;
 * kinematics 1 when the system's data hold the forward kinematics at (q, v) already (the anchors'
 * update evaluated the forces there last). Returns MBS_OK or MBS_ERR_MODEL (M or S could not be
 * factorised). */
int mbsi_expo_derivatives(mbsi_expo_dws *w, mbs_stepper *st, double h, const int *act, int na, int midpoint,
                          double beta, int kinematics, double *A, double *B);

#endif
