/* mbs/dynamics.h — the Featherstone layer: kinematics, Jacobians, inverse and forward
 * dynamics, the mass matrix and its tree-sparse factorisation, energies and analytical
 * derivatives, and the discrete RNEA of the variational integrator. Every function is O(n) or
 * O(n d) (d = depth) and works in the buffers of mbs_data (DRNEA: of its mbs_vi workspace):
 * none but mbs_vi_new allocates.
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

/* what this header declares is the library's interface: exported from libmbs.so, where everything
 * else is hidden (the build compiles with -fvisibility=hidden) */
#if defined(__GNUC__)
#pragma GCC visibility push(default)
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
/* Placement of body b in its parent's frame for b's joint coordinates q (its nq entries): the
 * joint's fixed placement composed with the joint's motion, as every kinematics pass computes it.
 * No data needed: for a chain's own kinematics (a limb's inverse kinematics). */
void mbs_joint_local_placement(const mbs_model *m, int b, const double *q, double R[9], double p[3]);
/* Runs placement kinematics for q and returns the world placement of frame `frame`. */
void mbs_compute_frame_placement(const mbs_model *m, mbs_data *d, const double *q, int frame, double R[9],
                                 double p[3]);
/* After mbs_forward_kinematics: the world placement of a frame (R column-major, frame -> world). */
void mbs_frame_placement(const mbs_model *m, const mbs_data *d, int frame, double R[9], double p[3]);
/* After mbs_forward_kinematics with v: the spatial velocity of a point at local offset `offset`
 * (may be NULL) in a frame, [linear; angular] in the requested reference frame. */
void mbs_frame_velocity(const mbs_model *m, const mbs_data *d, int frame, const double offset[3],
                        mbs_reference_frame ref, double out[6]);
/* After mbs_forward_kinematics with v and a: the classical acceleration [p̈; ω̇] of that point. */
void mbs_frame_classical_acceleration(const mbs_model *m, const mbs_data *d, int frame,
                                      const double offset[3], mbs_reference_frame ref, double out[6]);

/* ---- Jacobians ---- */
/* Computes the world-frame columns of every joint's motion subspace (placements included). */
void mbs_compute_joint_jacobians(const mbs_model *m, mbs_data *d, const double *q);
/* After mbs_compute_joint_jacobians (or with q: mbs_compute_frame_jacobian): the 6 x nv Jacobian of a
 * point at `offset` (may be NULL) in frame `frame`, in the requested reference frame,
 * written into J (column-major, leading dimension ldJ >= 6); columns of joints that do not
 * move the frame are zero. */
void mbs_frame_jacobian(const mbs_model *m, const mbs_data *d, int frame, const double offset[3],
                        mbs_reference_frame ref, double *J, int ldJ);
/* The same Jacobian at q, running the joint Jacobians first. */
void mbs_compute_frame_jacobian(const mbs_model *m, mbs_data *d, const double *q, int frame,
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
/* RNEA with the external forces fext. */
void mbs_rnea_fext(const mbs_model *m, mbs_data *d, const double *q, const double *v,
                   const double *a, const double *fext, double *tau);
void mbs_gravity(const mbs_model *m, mbs_data *d, const double *q, double *g);           /* g(q), nv */
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
/* ABA with the external forces fext (6 x nbodies, body frames at the body origins). */
void mbs_aba_fext(const mbs_model *m, mbs_data *d, const double *q, const double *v,
                  const double *tau, const double *fext, double *ddq);
/* M⁻¹ x without forming M: mbs_abi_factor computes the articulated inertias at q once,
 * mbs_abi_solve then applies M⁻¹ in O(n) per column, in place (leading dimension ldx). */
void mbs_abi_factor(const mbs_model *m, mbs_data *d, const double *q);
/* x (nv x ncols, leading dimension ldx) ← M⁻¹ x with the factor of mbs_abi_factor. */
void mbs_abi_solve(const mbs_model *m, mbs_data *d, double *x, int ncols, int ldx);
/* Both in one call: y = M⁻¹ x for one vector. */
void mbs_abi(const mbs_model *m, mbs_data *d, const double *q, const double *x, double *y);
/* M⁻¹ at q, whole (nv x nv, column-major, leading dimension nv, both triangles; Pinocchio's
 * computeMinverse), through CRBA and the tree-sparse factor of M. Returns MBS_OK, or
 * MBS_ERR_MODEL when M is not positive definite (a moving subtree without mass or inertia;
 * Minv is then left as it was). Overwrites the factor of mbs_ltdl in d. */
int  mbs_minverse(const mbs_model *m, mbs_data *d, const double *q, double *Minv);

/* ---- energies and centre of mass ---- */
double mbs_kinetic_energy(const mbs_model *m, mbs_data *d, const double *q, const double *v);
/* ∂T/∂q (nv, in the tangent space at q) of the kinetic energy T = ½ vᵀ M(q) v with v held: the
 * configuration gradient ½ vᵀ (∂M/∂q) v without forming ∂M/∂q, O(n). Overwrites the kinematics in d. */
void mbs_kinetic_energy_dq(const mbs_model *m, mbs_data *d, const double *q, const double *v, double *dT_dq);
/* -Σ m_i g·c_i (J), zero at the world origin. */
double mbs_potential_energy(const mbs_model *m, mbs_data *d, const double *q);
/* The 3 x nv Jacobian of the centre of mass (world axes; column-major, leading dimension 3) at q,
 * so that ċ = J_com v, and with v and drift not NULL its drift J̇_com v, so that c̈ = J_com v̇ + drift.
 * O(n); runs kinematics. */
void mbs_com_jacobian(const mbs_model *m, mbs_data *d, const double *q, const double *v, double *Jcom, double drift[3]);
/* Centre of mass of the moving bodies in the world, and its velocity when v and vcom are not NULL. */
void   mbs_center_of_mass(const mbs_model *m, mbs_data *d, const double *q, const double *v,
                          double com[3], double vcom[3]);

/* ---- analytical derivatives (Carpentier & Mansard, RSS 2018) ----
 * Derivatives with respect to q are taken in the tangent space: ∂f/∂q · δ is the change of
 * f at integrate(q, δ). Outputs are nv x nv column-major with leading dimension nv. */
/* dtau_da (M) and dtau_dv may be NULL: not computed. */
void mbs_rnea_derivatives(const mbs_model *m, mbs_data *d, const double *q, const double *v,
                          const double *a, double *dtau_dq, double *dtau_dv, double *dtau_da);
/* ddq = aba(q, v, τ) and its derivatives; dddq_dtau = M⁻¹. Any output but ddq may be NULL. */
void mbs_aba_derivatives(const mbs_model *m, mbs_data *d, const double *q, const double *v,
                         const double *tau, double *ddq, double *dddq_dq, double *dddq_dv,
                         double *dddq_dtau);

/* ---- the discrete RNEA of the variational integrator (Lee, Liu, Park, Srinivasa, "A linear-time
 * variational integrator for multibody systems", WAFR 2016; equation and algorithm numbers are
 * theirs; the root finders are in mbs/variational.h) ----
 * Conventions are the library's (Pinocchio's): twists are [v; w], wrenches [f; n], expressed
 * in the body frame; q^{k+1} is perturbed in the tangent space, q ⊕ δ = integrate(q, δ). The
 * residual is an impulse per joint (N·s, N·m·s): with Δt → 0, f / Δt tends to the torque of
 * mbs_rnea_fext. Forcing (Lagrange–d'Alembert, eq. 17) is integrated like the Lagrangian, by the
 * trapezoidal rule: the impulse at t_k is (Δt_prev + Δt)/2 · (τ, gravity, f_ext) at t_k.
 *
 * A workspace is made once per model (the only allocation); begin, residual, jacobian, solve
 * and momentum never allocate. One workspace per thread. */
typedef struct mbs_vi mbs_vi;

/* The workspace of DRNEA and its solvers for model m; NULL with err filled when out of memory. */
mbs_vi *mbs_vi_new(const mbs_model *m, mbs_error *err);
/* Frees a workspace (NULL is fine). */
void mbs_vi_free(mbs_vi *w);

/* Fixes what a step knows before it solves: the step dt from q to q_next, the previous
 * configuration q_prev from which the step dt_prev reached q, the joint torques tau (nv,
 * held over the step; NULL = 0) and external wrenches fext (6 x nbodies, body frame at the
 * body origin, as mbs_rnea_fext; NULL = none), both taken at t_k. Its O(n) pass computes the
 * discrete momentum each body brings from the previous step (the Ad* μ^{k-1} term of eq. 21a)
 * and the forcing impulses. Returns MBS_OK, or MBS_ERR_ARG when a step is not positive. */
int mbs_vi_begin(const mbs_model *m, mbs_vi *w, double dt_prev, double dt, const double *q_prev,
                 const double *q, const double *tau, const double *fext);
/* The same for a first step from a continuous state (q, v): each body's momentum at t_k is the
 * continuous G_i V_i rather than a discrete one, and the forcing acts over the half-step dt/2
 * that follows t_k (the discrete Legendre transform p_k = -D1 Ld(q^k, q^{k+1}) - F^-_k set to
 * M(q) v). */
int mbs_vi_begin_velocity(const mbs_model *m, mbs_vi *w, double dt, const double *q, const double *v,
                          const double *tau, const double *fext);

/* DRNEA (Algorithm 2): the DEL residual f(q_next) of eq. 22, nv impulses, after mbs_vi_begin. */
void mbs_vi_residual(const mbs_model *m, mbs_vi *w, const double *q_next, double *res);
/* Algorithm 4: the residual and its Jacobian ∂f/∂q_next (nv x nv, column-major, leading
 * dimension ldJ >= nv) in the tangent space at q_next. */
void mbs_vi_jacobian(const mbs_model *m, mbs_vi *w, const double *q_next, double *res, double *J, int ldJ);
/* The velocity estimate at t_k that IG2 and IG3 use: (q ⊖ q_prev)/dt_prev, or v. */
const double *mbs_vi_velocity(const mbs_vi *w);

/* One-shot DRNEA: mbs_vi_begin with dt_prev = dt, then mbs_vi_residual. */
int mbs_drnea(const mbs_model *m, mbs_vi *w, double dt, const double *q_prev, const double *q,
              const double *q_next, const double *tau, const double *fext, double *res);

/* The discrete spatial momentum of the tree over [t_k, t_k+1], in the world frame at the world
 * origin ([linear; angular]): the sum of the bodies' μ_i^k (eq. 21b), each moved from body i's
 * frame at t_k to the world. For a free-floating tree without gravity or external forces it is
 * the same at every step (discrete Noether). */
void mbs_vi_momentum(const mbs_model *m, mbs_vi *w, const double *q_next, double out[6]);

/* ---- the SE(3) building blocks, exposed for tests and for users of DRNEA ----
 * dlog_ξ is the paper's (eqs. 11–13): the inverse of the right-trivialised tangent of exp,
 * Σ_j B_j/j! ad_ξ^j, which is the left Jacobian inverse Jl⁻¹(ξ). Closed forms, exact at every
 * angle below 2π (series below 1 rad, like src/liegroup/se3.c). */
/* out = [dlog_ξ]ᵀ y, the map from a body's average velocity to its discrete momentum (eq. 21b). */
void mbs_vi_dlog_transpose(const double xi[6], const double y[6], double out[6]);
/* out = d/dε [dlog_{ξ+ε dξ}]ᵀ y at ε = 0: the derivative Algorithm 4 (line 8) needs. */
void mbs_vi_dlog_transpose_derivative(const double xi[6], const double dxi[6], const double y[6], double out[6]);

#if defined(__GNUC__)
#pragma GCC visibility pop
#endif

#ifdef __cplusplus
}
#endif
#endif
