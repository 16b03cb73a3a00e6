/* mbs/model.h — the immutable multibody model (kinematic tree, joints, inertias, frames)
 * and the per-thread data that every algorithm works in.
 *
 * Bodies are numbered 0..nbodies-1 in depth-first order of the tree (a parent always has a
 * smaller index than its children); body i is moved by joint i, and "joint" and "body"
 * share an index. Parent -1 is the world. Frames (every URDF link, every joint) are named
 * placements attached to a body. */
#ifndef MBS_MODEL_H
#define MBS_MODEL_H

#include "error.h"

#ifdef __cplusplus
extern "C" {
#endif

/* what this header declares is the library's interface: exported from libmbs.so, where everything
 * else is hidden (the build compiles with -fvisibility=hidden) */
#if defined(__GNUC__)
#pragma GCC visibility push(default)
#endif

typedef struct mbs_model mbs_model;
typedef struct mbs_data mbs_data;

typedef enum mbs_joint_type {
    MBS_JOINT_REVOLUTE = 0,   /* nq = nv = 1, rotation about an axis (also URDF continuous) */
    MBS_JOINT_PRISMATIC = 1,  /* nq = nv = 1, translation along an axis */
    MBS_JOINT_FREEFLYER = 2,  /* nq = 7 [x y z qx qy qz qw], nv = 6 [v w] in the body frame */
    MBS_JOINT_PLANAR = 3,     /* nq = 4 [x y cos sin], nv = 3 [vx vy wz] in the body frame; plane normal = axis */
    MBS_JOINT_BALL = 4        /* spherical: nq = 4 quaternion [qx qy qz qw], nv = 3 angular velocity in the body frame */
} mbs_joint_type;

typedef enum mbs_frame_type {
    MBS_FRAME_BODY = 0,        /* a link that is a moving body (its frame) */
    MBS_FRAME_FIXED_LINK = 1,  /* a link merged into its parent by a fixed joint */
    MBS_FRAME_JOINT = 2,       /* a moving joint's frame (coincides with the child body) */
    MBS_FRAME_FIXED_JOINT = 3, /* a fixed joint */
    MBS_FRAME_OP = 4           /* added by the caller (mbs_model_add_frame) */
} mbs_frame_type;

/* ---- loading ---- */

enum { MBS_ROOT_FIXED = 0, MBS_ROOT_FREE = 1, MBS_ROOT_PLANAR = 2 };

typedef struct mbs_urdf_options {
    /* 1 (MBS_ROOT_FREE): free-flyer joint "root_joint" on the root link; 0 (MBS_ROOT_FIXED): root
     * fixed to the world; 2 (MBS_ROOT_PLANAR): planar joint "root_joint" in the world x-z plane
     * (normal y: x, z and the pitch about y), for planar models such as a rimless wheel */
    int floating_base;
    int strict;          /* 1: inertias violating the triangle inequality are errors, not warnings */
    /* Lower bounds on every moving body's mass (kg) and principal moments about its centre of
     * mass (kg m²), as MuJoCo's compiler options boundmass and boundinertia: they give the
     * massless moving bodies of a description (e.g. gripper fingers without <inertial>) a minimal
     * inertia, so that the mass matrix is not singular. <= 0: that bound off (the default). */
    double bound_mass, bound_inertia;
} mbs_urdf_options;

/* Loads a URDF file with the loader's options (NULL: a free-flyer root, impossible inertias as
 * warnings, no bounds). Returns NULL on failure with err filled (err may be NULL). Warnings
 * (physically impossible inertias, massless moving subtrees: the mass matrix is then singular)
 * are left in err->warnings on success, one per line with file, line and link. */
mbs_model *mbs_model_from_urdf(const char *path, const mbs_urdf_options *opt, mbs_error *err);
/* Same, from a string in memory; `name` is used in messages in place of a file name. */
mbs_model *mbs_model_from_urdf_string(const char *xml, const char *name, const mbs_urdf_options *opt,
                                      mbs_error *err);
typedef struct mbs_mjcf_options {
    /* Lower bounds on every body's mass (kg) and principal moments (kg m²), as the file's
     * <compiler boundmass boundinertia> (the larger of the two is used); <= 0: the file's only. */
    double bound_mass, bound_inertia;
} mbs_mjcf_options;

/* Loads a MuJoCo MJCF file (opt NULL: no bounds beyond the file's). Joint order, q and v follow
 * MuJoCo's qpos and qvel but for the free joint (q = [x y z qx qy qz qw], v = [v w] in the body
 * frame), the ball joint (q = [qx qy qz qw]) and hinge and slide joints with a ref (q = qpos −
 * ref); every MJCF body is a frame of its name, every named site and geom a frame; <key>s become keyframes.
 * Returns NULL on failure with err filled (file, line, element); warnings (what is not modelled:
 * tendons, equality constraints, frictionloss, non-motor actuators ...) in err->warnings. */
mbs_model *mbs_model_from_mjcf(const char *path, const mbs_mjcf_options *opt, mbs_error *err);
/* Same, from a string in memory; `name` is used in messages in place of a file name, and
 * <include> files are looked for in its folder. */
mbs_model *mbs_model_from_mjcf_string(const char *xml, const char *name, const mbs_mjcf_options *opt,
                                      mbs_error *err);
/* Frees a model (NULL is fine); its data must be freed first. */
void mbs_model_free(mbs_model *m);

/* ---- building a model by hand (what the URDF loader itself uses) ----
 * mbs_model_new, then add joints parent-first, add inertias and frames, then
 * mbs_model_finalize, which must succeed before the model is used. Rotations R are 3x3
 * column-major and map the child frame to the parent frame. */
mbs_model *mbs_model_new(const char *name);
/* Adds a moving joint and its body under `parent` (-1 = world). `axis` is the rotation or
 * translation axis (revolute, prismatic) or the plane normal (planar); ignored for a
 * free-flyer. Returns the new body index, or -1 with err filled. */
int mbs_model_add_joint(mbs_model *m, int parent, mbs_joint_type type, const char *name,
                        const double R[9], const double p[3], const double axis[3], mbs_error *err);
/* Adds a rigid inertia to body b (-1 = world: kept only for the total mass): mass, centre
 * of mass `com` in the body frame, and the 3x3 rotational inertia `Ic` about the centre of
 * mass in body axes. Several calls accumulate exactly (fixed-joint merging). */
int mbs_model_add_inertia(mbs_model *m, int b, double mass, const double com[3], const double Ic[9],
                          mbs_error *err);
/* Adds a named frame on body b (-1 = world) at placement (R, p) in the body frame.
 * Returns the frame id. */
int mbs_model_add_frame(mbs_model *m, const char *name, int b, const double R[9], const double p[3],
                        mbs_frame_type type, mbs_error *err);
/* A visual shape of the URDF (<visual>): what a viewer draws, never what the dynamics use.
 * Meshes are kept by their file name only (the engine ships no mesh files). */
typedef enum mbs_shape_type {
    MBS_SHAPE_BOX = 0,         /* size: full lengths along x, y, z (m) */
    MBS_SHAPE_CYLINDER = 1,    /* size[0]: radius, size[1]: length along the local z axis (m) */
    MBS_SHAPE_SPHERE = 2,      /* size[0]: radius (m) */
    MBS_SHAPE_MESH = 3,        /* size: scale per axis; mesh: the file name as the URDF gives it */
    MBS_SHAPE_CAPSULE = 4      /* collision shapes only: size[0] radius, size[1] the length of its axis segment
                                * (between the end spheres' centres) along the local z axis (m) */
} mbs_shape_type;
typedef struct mbs_visual {
    int body;                  /* -1 = world */
    mbs_shape_type type;
    double size[3];
    double R[9], p[3];         /* placement in the body frame (R column-major, shape -> body) */
    double rgba[4];            /* colour in [0, 1]; alpha 0: none given */
    char mesh[256];            /* MBS_SHAPE_MESH: the filename attribute (truncated), else "" */
} mbs_visual;
/* Adds a visual shape (copied) to body v->body; MBS_OK or an error. */
int mbs_model_add_visual(mbs_model *m, const mbs_visual *v, mbs_error *err);
/* A collision shape: URDF <collision>, an MJCF geom that collides (contype or conaffinity not 0) —
 * what the description says the robot touches with; a scenario turns them into contact geometry
 * ([contact] from_collision). A sibling of mbs_visual rather than a visual with a flag: a viewer walks
 * the visuals and never wants the (often coarser) collision boxes drawn over its meshes, and a
 * collision shape carries what a visual has no use for (a capsule, the link's name to filter by) and
 * no colour; two lists keep every reader of either free of a filter. */
typedef struct mbs_collision {
    int body;                  /* -1 = world */
    mbs_shape_type type;       /* box, cylinder, sphere, capsule or mesh (sizes as mbs_shape_type says) */
    double size[3];
    double R[9], p[3];         /* placement in the body frame (R column-major, shape -> body) */
    char link[64];             /* the URDF link or MJCF body that declares it ("world" for MJCF's worldbody) */
    char name[64];             /* its own name (<collision name>, the geom's name), "" when unnamed */
    char mesh[256];            /* MBS_SHAPE_MESH: the file name as the description gives it, else "" */
} mbs_collision;
/* Adds a collision shape (copied) to body c->body; MBS_OK or an error. */
int mbs_model_add_collision(mbs_model *m, const mbs_collision *c, mbs_error *err);
/* Names the body moved by joint j (the URDF link); the joint name is used when unset. */
int mbs_model_set_body_name(mbs_model *m, int j, const char *name);
/* Sets the limits of joint j (per coordinate arrays of its nq / nv, any may be NULL). */
void mbs_model_set_limits(mbs_model *m, int j, const double *lower, const double *upper,
                          const double *velocity, const double *effort, const double *damping,
                          const double *friction);
/* Armature of joint j: a rotor inertia per velocity coordinate (nv of them, kg m² or kg; NULL:
 * zeros) added to the mass matrix's diagonal, M + diag(armature), by every algorithm and
 * derivative (MuJoCo's and Pinocchio 3's armature: a geared motor's reflected rotor inertia). */
void mbs_model_set_armature(mbs_model *m, int j, const double *armature);
/* Named states of the model (MJCF <keyframe>): q (nq) and v (nv, NULL: zeros), copied; after
 * mbs_model_finalize. Returns the keyframe's index, or -1 with err filled (a name given twice,
 * a q that is not finite). */
int mbs_model_add_keyframe(mbs_model *m, const char *name, const double *q, const double *v, mbs_error *err);
int mbs_model_nkeyframes(const mbs_model *m);   /* how many keyframes the model has */
int mbs_model_keyframe_id(const mbs_model *m, const char *name);   /* -1 when absent */
/* Keyframe k's name, q and v (any pointer may be NULL); the name, or NULL when k is out of range. */
const char *mbs_model_keyframe(const mbs_model *m, int k, const double **q, const double **v);
/* Checks the tree (inertias are valid; a moving subtree without mass, whose mass matrix is
 * singular, is a warning in err), assigns q and v indices and precomputes what the algorithms
 * need. Returns MBS_OK or an error code. */
int mbs_model_finalize(mbs_model *m, mbs_error *err);

/* An n-link serial chain of revolute joints (a pendulum along -z, or +z with upward): links of
 * the given length and mass (uniform rods unless an inertia is given), joints about y (x with
 * axis_x; alternating when alternate_axes),
 * an optional free-flyer root body before the first joint, and a frame "tip" at the end.
 * With branching b >= 2 the links form a tree instead: link k > 0 hangs from link (k−1)/b (a
 * complete b-ary tree, depth ~log_b n), its joint at the parent's end, the b children of one link
 * spread along x by a quarter of the link length; "tip" is on the last link. */
typedef struct mbs_chain_options {
    double link_length, link_mass;
    int floating;
    int alternate_axes;
    const double *inertia;   /* 3x3 rotational inertia about each link's centre; NULL: a uniform rod */
    int axis_x;              /* 1: joints about x instead of y */
    int upward;              /* 1: links along +z instead of -z */
    int branching;           /* 0 or 1: a chain; b >= 2: a b-ary tree of the n links */
} mbs_chain_options;
/* A chain of n links (opt NULL: 0.1 m, 1 kg, fixed base, alternating axes), finalized. */
mbs_model *mbs_model_chain(int n, const mbs_chain_options *opt, mbs_error *err);

/* ---- queries ---- */
const char *mbs_model_name(const mbs_model *m);  /* the URDF robot name */
int    mbs_model_nq(const mbs_model *m);          /* size of q */
int    mbs_model_nv(const mbs_model *m);          /* size of v (and of τ) */
int    mbs_model_njoints(const mbs_model *m);      /* moving joints (= bodies), root_joint included */
int    mbs_model_nbodies(const mbs_model *m);     /* moving bodies (= joints) */
const char *mbs_joint_name(const mbs_model *m, int j);   /* its URDF name; "root_joint" for a free-flyer root */
const char *mbs_body_name(const mbs_model *m, int j); /* the URDF link moved by joint j */
int    mbs_joint_id(const mbs_model *m, const char *name); /* -1 when absent */
mbs_joint_type mbs_joint_type_of(const mbs_model *m, int j);   /* revolute, prismatic, free-flyer, planar */
int    mbs_joint_parent(const mbs_model *m, int j);    /* -1 = world */
int    mbs_joint_idx_q(const mbs_model *m, int j);    /* index of its first coordinate in q */
int    mbs_joint_idx_v(const mbs_model *m, int j);    /* index of its first coordinate in v */
int    mbs_joint_nq(const mbs_model *m, int j);       /* its coordinates in q (7 for a free-flyer) */
int    mbs_joint_nv(const mbs_model *m, int j);       /* its coordinates in v (6 for a free-flyer) */
/* Per-coordinate limits as parsed (NaN-free; unbounded = -/+INFINITY). Arrays of nq / nv. */
const double *mbs_model_lower_limits(const mbs_model *m);     /* nq: lower position limits */
const double *mbs_model_upper_limits(const mbs_model *m);     /* nq: upper position limits */
const double *mbs_model_velocity_limits(const mbs_model *m);  /* nv: |v| limits */
const double *mbs_model_effort_limits(const mbs_model *m);    /* nv: |τ| limits */
const double *mbs_model_damping(const mbs_model *m);          /* nv: URDF <dynamics damping> */
const double *mbs_model_friction(const mbs_model *m);         /* nv: URDF <dynamics friction> */
const double *mbs_model_armature(const mbs_model *m);         /* nv: rotor inertias on M's diagonal */
int    mbs_model_nframes(const mbs_model *m);               /* links, joints and added frames */
int    mbs_frame_id(const mbs_model *m, const char *name);   /* -1 when absent; links before joints */
const char *mbs_frame_name(const mbs_model *m, int f);        /* NULL when out of range */
int    mbs_frame_body(const mbs_model *m, int f);             /* -1 = world */
mbs_frame_type mbs_frame_type_of(const mbs_model *m, int f);  /* body, joint or added */
/* Placement of frame f in its body's frame (R column-major, frame -> body). */
void   mbs_frame_local_placement(const mbs_model *m, int f, double R[9], double p[3]);
double mbs_model_mass(const mbs_model *m);                  /* every inertia, world-fixed ones included */
/* Mass, centre of mass (body frame) and rotational inertia about it (body axes) of body b; zeros
 * for b = -1 (the world: its inertia counts in mbs_model_mass only) or out of range. */
void   mbs_body_inertia(const mbs_model *m, int b, double *mass, double com[3], double Ic[9]);
int    mbs_model_nvisuals(const mbs_model *m);              /* visual shapes of every link */
const mbs_visual *mbs_model_visual(const mbs_model *m, int i); /* NULL when out of range */
int    mbs_model_ncollisions(const mbs_model *m);           /* collision shapes of every link */
const mbs_collision *mbs_model_collision(const mbs_model *m, int i); /* NULL when out of range */
const double *mbs_model_gravity(const mbs_model *m);   /* 3: (0, 0, -9.81) unless set */
void   mbs_model_set_gravity(mbs_model *m, const double g[3]);   /* m/s², world frame */

/* ---- data ---- */
/* Allocates every buffer the algorithms need; after this no algorithm allocates. */
mbs_data *mbs_data_new(const mbs_model *m);
void   mbs_data_free(mbs_data *d);   /* NULL is fine */

#if defined(__GNUC__)
#pragma GCC visibility pop
#endif

#ifdef __cplusplus
}
#endif
#endif
