/* mbs/contact.h — the contact layer: an environment of planes, boxes and heightfields, contact points on
 * the robot, and the visco-elastic "anchor" contact model of Hammoud et al. 2022 (eq. 2):
 * λ = −K (p − p0) − B (ṗ − ṗ0), unilateral, inside a Coulomb cone, with the anchor moved on
 * slip (eq. 28). A system bundles a model, its data, the environment, the contacts and the
 * state (q, v, τ, t) that the steppers advance. */
#ifndef MBS_CONTACT_H
#define MBS_CONTACT_H

#include <stddef.h>

#include "model.h"

#ifdef __cplusplus
extern "C" {
#endif

/* what this header declares is the library's interface: exported from libmbs.so, where everything
 * else is hidden (the build compiles with -fvisibility=hidden) */
#if defined(__GNUC__)
#pragma GCC visibility push(default)
#endif

#define MBS_MAX_PLANES 16
#define MBS_MAX_BOXES 32
#define MBS_MAX_HEIGHTFIELDS 4
#define MBS_NAME_LEN 64

/* Contact material: stiffness and damping along the normal and the tangent directions, friction. */
typedef struct mbs_material {
    double k_normal, k_tangent;   /* N/m */
    double b_normal, b_tangent;   /* N·s/m */
    double mu;                    /* Coulomb friction coefficient */
} mbs_material;

/* The half-space n·x <= offset is solid (n is the outward unit normal). */
typedef struct mbs_plane {
    double normal[3], offset;
    mbs_material material;
} mbs_plane;

/* A solid box: centre, orientation (R column-major, box -> world) and half sizes. */
typedef struct mbs_box {
    double center[3], R[9], half[3];
    mbs_material material;
} mbs_box;

/* A heightfield: the solid below the surface z = h(x, y) over a grid of nx x ny heights, h[i + nx j]
 * at (x0 + i dx, y0 + j dy). Each cell is two triangles, split along its diagonal from (i, j) to
 * (i + 1, j + 1), h linear on each: the surface is exact, continuous, with a normal per triangle.
 * Outside the grid's rectangle the edge's heights go on horizontally. A sphere's signed distance is
 * (c_z − h(c_x, c_y)) n_z − r, h that exact surface under its centre and n a smoothed normal (the
 * slopes of the grid points, central differences, interpolated over the triangle; none across the
 * border): exact on a plane, continuous across creases, and near one off by about the gap times the
 * angle between the smoothed and the triangle's normal. O(1): one cell and its neighbours are read. */
typedef struct mbs_heightfield {
    int nx, ny;                   /* grid points along x and y (>= 2 each) */
    double x0, y0, dx, dy;        /* the grid's first point and its spacing (m, dx and dy > 0) */
    const double *h;              /* nx ny heights (m); in a system, its own copy */
    mbs_material material;
} mbs_heightfield;

typedef struct mbs_environment {
    int nplanes, nboxes, nheightfields;
    mbs_plane planes[MBS_MAX_PLANES];
    mbs_box boxes[MBS_MAX_BOXES];
    mbs_heightfield heightfields[MBS_MAX_HEIGHTFIELDS];
} mbs_environment;

/* The surface height of heightfield f at (x, y) and, when grad is not NULL, its slopes
 * (∂h/∂x, ∂h/∂y) on the triangle there. */
double mbs_heightfield_height(const mbs_heightfield *f, double x, double y, double grad[2]);

/* Deepest penetration of a sphere (radius 0 = a point) into the environment. Returns 1 when
 * it penetrates, with the depth (> 0), the outward surface normal, the deepest point of the
 * sphere and the material of the geometry touched. */
int mbs_environment_query(const mbs_environment *env, const double center[3], double radius, double *depth,
                          double normal[3], double point[3], const mbs_material **material);

/* Signed distance from a sphere (radius 0: a point) at center to the nearest solid of env: gap > 0
 * apart, < 0 penetrating (minus the depth), the outward normal of that solid and its material (may
 * be NULL). Returns 0 (gap = +inf) when the environment has no solid. */
int mbs_environment_distance(const mbs_environment *env, const double center[3], double radius, double *gap,
                             double normal[3], const mbs_material **material);

/* A system bundles a model (not owned), its data, a scene — what the world is: the contact points
 * on the robot and the solids (planes, boxes) with their materials — and a state — what the world
 * does: t, q, v, τ, each contact's anchor and mode, the forces. The scene is described with the
 * add calls, then frozen once by mbs_system_finalize; steppers and controllers are created against
 * a finalized scene only (they size their buffers for it once), and an add call after finalize is
 * an error. It is opaque: a program reads and sets the state with the functions below, and a
 * stepper notices when the state was set from outside. */
typedef struct mbs_system mbs_system;

/* What a program reads of a contact point (mbs_system_contact). */
typedef struct mbs_contact_info {
    const char *name;             /* the frame's name */
    int frame;                    /* model frame the point is attached to */
    double offset[3];             /* local offset in that frame (m) */
    double radius;                /* 0: a point; > 0: a sphere or a rim (m) */
    double axis[3];               /* a rim's axis in the frame; zero for a point or a sphere */
    int active;                   /* 1 while in contact */
    int off;                      /* 1 while switched off (mbs_system_set_contact_off) */
    int slipping;                 /* 1 when the force was on the friction cone's boundary */
    double position[3];           /* world position of the touching point (m) */
    double velocity[3];           /* its world velocity (m/s) */
    double normal[3];             /* outward surface normal at the contact */
    double depth;                 /* penetration depth (m, >= 0) */
    double force[3];              /* world force the environment applies to the robot (N) */
} mbs_contact_info;

/* A new system of the same model and scene (contact points, solids, materials; finalized when s
 * is) in the same state: for a planner that steps a copy of the world (mbs/ilqr.h, the mpc
 * controller). The only allocation; NULL with err filled on failure. */
mbs_system *mbs_system_clone(const mbs_system *s, mbs_error *err);
/* The state of src (t and the clock, q, v, τ, the contact wrenches, every contact's anchor and
 * mode, the joint impedance) into dst, a clone of src or of its clone. MBS_ERR_ARG when their
 * models or scenes differ. Allocates nothing. */
int mbs_system_copy_state(mbs_system *dst, const mbs_system *src);
/* A system for model m (not owned) with room for `max_contacts` contact points. It starts at
 * t = 0 in the model's neutral configuration (mbs_neutral: a free-flyer base at the origin, every
 * joint at 0, so Solo's feet are 0.3 m under a ground at z = 0) with v = τ = 0: set a posture of
 * your own with mbs_system_set_state (e.g. a scenario's mbs_scenario_q0) before stepping. */
mbs_system *mbs_system_new(const mbs_model *m, int max_contacts, mbs_error *err);
void mbs_system_free(mbs_system *s);   /* NULL is fine; the model stays */
/* Adds a contact point on the named frame; returns its index or -1 with err filled (also once the
 * scene is finalized). */
int mbs_system_add_contact(mbs_system *s, const char *frame, const double offset[3], double radius,
                           mbs_error *err);
/* Adds a circular rim contact on the named frame: the circle of radius `radius` (m, > 0) centred at
 * `center` in the frame, in the plane normal to `axis` (frame coordinates, normalised here), a
 * wheel's or a passive walker's rounded foot; it touches at the rim point nearest the ground.
 * Stepped by the rigid-contact steppers (rigid, adaptive around rigid); the spring-damper and
 * polytope steppers refuse a system with rims. Returns its index or -1 with err filled. */
int mbs_system_add_rim(mbs_system *s, const char *frame, const double center[3], const double axis[3],
                       double radius, mbs_error *err);
/* Adds a capsule on the named frame — the segment from a to b (frame coordinates) swept by a sphere of
 * radius `radius` (m, > 0): a shin, a knee, a forearm — as the spheres of mbs_capsule_spheres. Its
 * two end spheres meet every solid; its inner spheres meet boxes only: against a plane, or a
 * heightfield's triangle, the segment's deepest point is one of its ends, so a capsule lying on such
 * a surface touches at its two ends, exactly, while a box's edge (a stair's nosing) is met wherever
 * it crosses the segment. A link's geometry comes after the feet (controllers take the contacts
 * 0 .. mbs_system_nfeet − 1 as their feet). Returns the first sphere's index, or -1 with err filled. */
int mbs_system_add_capsule(mbs_system *s, const char *frame, const double a[3], const double b[3], double radius,
                           mbs_error *err);
/* The sphere centres (3 each, into centers when max allows) that stand for the capsule from a to b
 * of radius r: n = ceil(|b − a| / r) + 1 >= 2 equally spaced from a to b, no more than r apart, so
 * that the spheres' union dips at most (1 − √3/2) r = 0.13 r below the capsule's surface between
 * two of them. Returns n (0 for r <= 0 or ends that are not finite). */
int mbs_capsule_spheres(const double a[3], const double b[3], double radius, double *centers, int max);
/* Adds a box on the named frame (centre, R box -> frame column-major or NULL for the frame's axes,
 * half sizes, m) as its 8 corners, points that touch every solid; after the feet, as a capsule.
 * Returns the first corner's index, or -1 with err filled. */
int mbs_system_add_link_box(mbs_system *s, const char *frame, const double center[3], const double R[9],
                            const double half[3], mbs_error *err);
/* The 8 corners of that box (corner i at ±half along each axis, bit k of i the sign on axis k). */
void mbs_box_corners(const double center[3], const double R[9], const double half[3], double corners[24]);
/* Adds the solid half-space n·x <= offset (n normalised here) of material mat; 0 or an error. */
int mbs_system_add_plane(mbs_system *s, const double normal[3], double offset, const mbs_material *mat,
                         mbs_error *err);
/* Adds a solid box (centre, R box -> world column-major, half sizes) of material mat. */
int mbs_system_add_box(mbs_system *s, const double center[3], const double R[9], const double half[3],
                       const mbs_material *mat, mbs_error *err);
/* Adds heightfield f (its grid copied: f->h may go after the call) of material f->material; MBS_ERR_ARG
 * for fewer than 2 x 2 points, a spacing that is not > 0, a height that is not finite. */
int mbs_system_add_heightfield(mbs_system *s, const mbs_heightfield *f, mbs_error *err);

/* Freezes the scene: after it every add call fails (naming the call), and steppers and controllers
 * may be created. MBS_ERR_ARG when a contact point would have no material (contact points, but no
 * plane or box: a contact's material is the solid's it touches). Calling it again does nothing. */
int mbs_system_finalize(mbs_system *s, mbs_error *err);
/* 1 once mbs_system_finalize succeeded. */
int mbs_system_finalized(const mbs_system *s);

/* ---- state ---- */
const mbs_model *mbs_system_model(const mbs_system *s);   /* the model it was made for */
/* t (s): set by mbs_system_set_state, advanced only by mbs_stepper_step as t0 + k·dt from the count k
 * of steps of one length dt since then (no sum of roundings; a step of another length restarts the
 * count from the time reached). */
double mbs_system_time(const mbs_system *s);
const double *mbs_system_q(const mbs_system *s);         /* nq: configuration */
const double *mbs_system_v(const mbs_system *s);         /* nv: velocity */
const double *mbs_system_tau(const mbs_system *s);       /* nv: the torque held during the next steps */
/* Sets the torque (nv) the next steps hold, as a controller does each period. */
void mbs_system_set_tau(mbs_system *s, const double *tau);
/* A joint impedance held during the next steps with the torque, as a position servo:
 *   τ_imp = kp (q_ref − q) + kd (v_ref − v)
 * on each one-coordinate joint (revolute, prismatic; the entries of other joints are ignored),
 * kp, kd and v_ref of nv entries, q_ref of nq. A scheme that integrates it implicitly (nmdp, at the
 * end of the step, and mdp, semi-implicitly: the stable PD of Tan et al. 2011 consistent with the
 * scheme, unless its option feedback = explicit) does so; every other scheme adds τ_imp evaluated
 * at the start of each step to τ. kp = NULL
 * (or kd or q_ref) removes it. v_ref may be NULL for zero. */
void mbs_system_set_impedance(mbs_system *s, const double *kp, const double *kd, const double *q_ref,
                              const double *v_ref);
/* Passive joint damping τ = −damping v (nv entries, N·m·s/rad or N·s/m; NULL: none), as MuJoCo's
 * joint damping, on every coordinate (a ball or free joint's too): held with the joint impedance
 * (added to its kd), so that mdp and nmdp take it implicitly and the step derivatives see it. A model's
 * own values are mbs_model_damping (URDF <dynamics damping>, MJCF joint damping). */
void mbs_system_set_joint_damping(mbs_system *s, const double *damping);
/* Sets the state (q: nq, v: nv, may be NULL for zero) and the time, releases every contact and
 * anchors those that penetrate at q: a new start, which a stepper with memory notices. */
void mbs_system_set_state(mbs_system *s, const double *q, const double *v, double t);
/* Contact points added. */
int mbs_system_ncontacts(const mbs_system *s);
/* The feet: contact points 0 .. nfeet − 1, those added as points, spheres or rims, before any
 * capsule or box of a link's geometry. Controllers use these. */
int mbs_system_nfeet(const mbs_system *s);
/* Switches contact point i off (off = 1: from the next step it meets nothing, and lets go of its
 * anchor) or back on (0, as every point starts). Part of the state, saved and copied with it: a
 * planner's contact schedule, a foot due to swing taken out of its model of the world (the mpc
 * controller's `contacts = scheduled`). MBS_ERR_ARG when i is out of range. */
int mbs_system_set_contact_off(mbs_system *s, int i, int off);
/* Contact point i's state after the last step (or set_state) into out; MBS_ERR_ARG when i is out of range. */
int mbs_system_contact(const mbs_system *s, int i, mbs_contact_info *out);
/* Contact point i's label, as the trajectory CSV names its columns: the frame's name, with "_k"
 * appended (k = 0, 1 ... in the order the points were added) when several points share it
 * ("r_sole_1"). Writes at most n bytes to buf (NUL-terminated when n > 0) and returns the label's
 * full length, as snprintf does; -1 when i is out of range. */
int mbs_system_contact_label(const mbs_system *s, int i, char *buf, size_t n);
/* The environment (planes and boxes) contacts are checked against. */
const mbs_environment *mbs_system_environment(const mbs_system *s);
/* Sets the material of solid i of the scene (planes first, then boxes, then heightfields), also
 * once it is finalized: a material is values every step reads (friction, stiffness, damping), not
 * the scene's shape, so a randomised environment may change it between episodes. MBS_ERR_ARG with
 * err filled when i is out of range or a value is not finite and >= 0. Allocates nothing. */
int mbs_system_set_material(mbs_system *s, int i, const mbs_material *mat, mbs_error *err);

/* Force of every contact at (q, v) and the wrenches in s->fext.
 * update = 1: the state changes as time advances — contacts that start penetrating get an
 * anchor on the surface, separating or pulling contacts are released, and slipping
 * contacts move their anchor so that the force lies on the friction-cone boundary (eq. 28).
 * update = 0: the anchors and the active set stay as they are (for the intermediate
 * stages of a multi-stage scheme); forces are still made unilateral and kept in the cone. */
void mbs_contact_forces(mbs_system *s, const double *q, const double *v, int update);
/* ddq = M⁻¹ (τ − h + Jᵀλ) at (q, v) with the contact forces of mbs_contact_forces. */
void mbs_system_dynamics(mbs_system *s, const double *q, const double *v, int update, double *ddq);
/* The Euclidean projection of a force λ onto the second-order cone ‖λ_t‖ <= μ λ_n about n. */
void mbs_cone_project(const double lambda[3], const double normal[3], double mu, double out[3]);

#if defined(__GNUC__)
#pragma GCC visibility pop
#endif

#ifdef __cplusplus
}
#endif
#endif
