/* mbs/dynamics.h — the Featherstone layer: kinematics, Jacobians, inverse and forward
 * dynamics, the mass matrix and its tree-sparse factorisation, energies and analytical
 * derivatives. Every function is O(n) or O(n d) (d = depth) and works in the buffers of
 * mbs_data: none allocates.
 *
 * Conventions (Pinocchio's): spatial motion vectors are [linear; angular], spatial forces
 * [force; torque]. Dense matrices are column-major with the leading dimension given
 * (ld >= rows). Results of a kinematics call stay in `d` until the next call. */
#ifndef MBS_DYNAMICS_H
#define MBS_DYNAMICS_H

#include "model.h"

#ifdef __cplusplus
extern "C" {
#endif

typedef enum mbs_reference_frame {
    MBS_LOCAL = 0,                 /* frame origin, frame axes */
    MBS_WORLD = 1,                 /* world origin, world axes (spatial velocity) */
    MBS_LOCAL_WORLD_ALIGNED = 2    /* frame origin, world axes */
} mbs_reference_frame;

/* ---- kinematics ---- */
/* Placement of every body (and velocity and spatial acceleration in body frames when v, a
 * are not NULL; a needs v). Gravity is not included in the accelerations. */
void mbs_forward_kinematics(const mbs_model *m, mbs_data *d, const double *q, const double *v,
                            const double *a);
/* World placement of body b after mbs_forward_kinematics (R column-major, body -> world). */
void mbs_body_placement(const mbs_model *m, const mbs_data *d, int b, double R[9], double p[3]);
/* Runs placement kinematics for q and returns the world placement of frame `frame`. */
void mbs_frame_placement(const mbs_model *m, mbs_data *d, const double *q, int frame, double R[9],
                         double p[3]);
/* After mbs_forward_kinematics: the world placement of a frame, of a point at local offset
 * `offset` (may be NULL) in a frame, its spatial velocity, and its classical acceleration
 * ([p̈; ω̇] of the point) in the requested reference frame. */
void mbs_frame_placement_fk(const mbs_model *m, const mbs_data *d, int frame, double R[9], double p[3]);
void mbs_frame_velocity(const mbs_model *m, const mbs_data *d, int frame, const double offset[3],
                        mbs_reference_frame ref, double out[6]);
void mbs_frame_classical_acceleration(const mbs_model *m, const mbs_data *d, int frame,
                                      const double offset[3], mbs_reference_frame ref, double out[6]);

/* ---- Jacobians ---- */
/* Computes the world-frame columns of every joint's motion subspace (placements included). */
void mbs_compute_joint_jacobians(const mbs_model *m, mbs_data *d, const double *q);
/* After mbs_compute_joint_jacobians (or with q: mbs_frame_jacobian): the 6 x nv Jacobian of a
 * point at `offset` (may be NULL) in frame `frame`, in the requested reference frame,
 * written into J (column-major, leading dimension ldJ >= 6); columns of joints that do not
 * move the frame are zero. */
void mbs_frame_jacobian_fk(const mbs_model *m, const mbs_data *d, int frame, const double offset[3],
                           mbs_reference_frame ref, double *J, int ldJ);
void mbs_frame_jacobian(const mbs_model *m, mbs_data *d, const double *q, int frame,
                        const double offset[3], mbs_reference_frame ref, double *J, int ldJ);
/* The drift J̇(q,v)·v of a point at `offset` in a frame: its classical acceleration when
 * q̈ = 0 (gravity excluded), so that p̈ = J q̈ + J̇ v. Runs kinematics with (q, v, 0). */
void mbs_frame_jdot_v(const mbs_model *m, mbs_data *d, const double *q, const double *v, int frame,
                      const double offset[3], mbs_reference_frame ref, double out[6]);

/* ---- inverse dynamics ---- */
/* τ = M(q) a + C(q,v) v + g(q) - Σ J_iᵀ f_ext_i. fext (may be NULL) holds one spatial force per
 * body (6 x nbodies), each expressed in its body frame at the body origin. */
void mbs_rnea(const mbs_model *m, mbs_data *d, const double *q, const double *v, const double *a,
              double *tau);
void mbs_rnea_fext(const mbs_model *m, mbs_data *d, const double *q, const double *v,
                   const double *a, const double *fext, double *tau);
void mbs_gravity(const mbs_model *m, mbs_data *d, const double *q, double *g);           /* g(q) */
void mbs_nonlinear_effects(const mbs_model *m, mbs_data *d, const double *q, const double *v,
                           double *h);                                                  /* C v + g */

/* ---- mass matrix ---- */
/* Joint-space inertia M(q), nv x nv column-major (leading dimension nv), full and symmetric. */
void mbs_crba(const mbs_model *m, mbs_data *d, const double *q, double *M);
/* Factorises M = Lᵀ D L following the tree (Featherstone, RBDA §6.3); L and D stay in d.
 * Returns MBS_OK, or MBS_ERR_MODEL when a pivot is not positive. */
int  mbs_ltdl(const mbs_model *m, mbs_data *d, const double *M);
/* Solves M x = b in place for nrhs right-hand sides (column-major, leading dimension ldb),
 * using the factor from mbs_ltdl. */
void mbs_ltdl_solve(const mbs_model *m, const mbs_data *d, double *b, int nrhs, int ldb);

/* ---- forward dynamics ---- */
/* ddq = M⁻¹ (τ - C v - g + Σ J_iᵀ f_ext_i): the articulated-body algorithm. */
void mbs_aba(const mbs_model *m, mbs_data *d, const double *q, const double *v, const double *tau,
             double *ddq);
void mbs_aba_fext(const mbs_model *m, mbs_data *d, const double *q, const double *v,
                  const double *tau, const double *fext, double *ddq);
/* M⁻¹ x without forming M: mbs_abi_factor computes the articulated inertias at q once,
 * mbs_abi_solve then applies M⁻¹ in O(n) per column, in place (leading dimension ldx). */
void mbs_abi_factor(const mbs_model *m, mbs_data *d, const double *q);
void mbs_abi_solve(const mbs_model *m, mbs_data *d, double *x, int ncols, int ldx);
/* Both in one call: y = M⁻¹ x for one vector. */
void mbs_abi(const mbs_model *m, mbs_data *d, const double *q, const double *x, double *y);

/* ---- energies and centre of mass ---- */
double mbs_kinetic_energy(const mbs_model *m, mbs_data *d, const double *q, const double *v);
double mbs_potential_energy(const mbs_model *m, mbs_data *d, const double *q); /* -Σ m_i g·c_i */
/* Centre of mass of the moving bodies in the world, and its velocity when v and vcom are not NULL. */
void   mbs_center_of_mass(const mbs_model *m, mbs_data *d, const double *q, const double *v,
                          double com[3], double vcom[3]);

/* ---- analytical derivatives (Carpentier & Mansard, RSS 2018) ----
 * Derivatives with respect to q are taken in the tangent space: ∂f/∂q · δ is the change of
 * f at integrate(q, δ). Outputs are nv x nv column-major with leading dimension nv. */
void mbs_rnea_derivatives(const mbs_model *m, mbs_data *d, const double *q, const double *v,
                          const double *a, double *dtau_dq, double *dtau_dv, double *dtau_da);
/* ddq = aba(q, v, τ) and its derivatives; dddq_dtau = M⁻¹. Any output but ddq may be NULL. */
void mbs_aba_derivatives(const mbs_model *m, mbs_data *d, const double *q, const double *v,
                         const double *tau, double *ddq, double *dddq_dq, double *dddq_dv,
                         double *dddq_dtau);

#ifdef __cplusplus
}
#endif
#endif
