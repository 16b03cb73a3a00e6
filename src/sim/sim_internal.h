/* sim_internal.h — the sim layer's private pieces: loading a scenario from text in memory (for
 * the fuzzer) and where a scenario key was set. */
#ifndef MBS_SIM_INTERNAL_H
#define MBS_SIM_INTERNAL_H

#include <stddef.h>
#include <stdint.h>

#include "../base/base.h"
#include "../control/control_internal.h"
#include "../model/model_internal.h"
#include "../contact/contact_internal.h"
#include "mbs/contact.h"
#include "mbs/control.h"
#include "mbs/dynamics.h"
#include "mbs/liegroup.h"
#include "mbs/sim.h"
#include "mbs/step.h"

typedef struct mbs_scenario_contact {
    char frame[MBS_NAME_LEN];
    double offset[3];                 /* in the frame */
    double radius;                    /* 0: a point; > 0: a sphere centred at frame + offset, or a rim */
    double axis[3];                   /* a rim's axis in the frame ([contact] rim_axis); zero: no rim */
    int link;                         /* 1: a sphere of a capsule or a corner of a box on a link, not a foot */
    int boxes_only;                   /* 1: a capsule's inner sphere (mbs_system_add_capsule) */
} mbs_scenario_contact;

/* [run] push: a force on the base's origin, in world axes, over [t, t + duration). */
typedef struct mbs_scenario_push {
    double t, duration;               /* s */
    double force[3];                  /* N, world axes */
} mbs_scenario_push;

/* An option of a stepper ([expo] ...) or of the controller ([controller] keys other than type
 * and dt), with the place it came from (line 0: a --set override). */
typedef struct mbs_scenario_option {
    char scheme[MBS_NAME_LEN];        /* the section: a stepper's name, or "controller" */
    char key[MBS_NAME_LEN];
    char value[128];                  /* as written */
    int line;
    mbs_option typed;                 /* parsed once, when the scenario was read */
} mbs_scenario_option;

typedef struct mbs_scenario_entry mbs_scenario_entry;   /* one key = value as read (private) */

struct mbs_scenario {
    char path[MBS_PATH_LEN];          /* the scenario file as given */
    /* [model] */
    char urdf[MBS_PATH_LEN];          /* resolved against the scenario file's folder */
    int floating;                     /* MBS_ROOT_FIXED, MBS_ROOT_FREE or MBS_ROOT_PLANAR (mbs/model.h) */
    int joint_damping;                /* 1: the model's joint damping applied (mbs_system_set_joint_damping) */
    double gravity[3];                /* m/s², world frame; set on the model when it is loaded */
    mbs_model *model;                 /* loaded; owned by the scenario */
    double *q0;                       /* nq: initial configuration (base pose + named joints) */
    double *v0;                       /* nv: initial velocity (base velocity in the root's coordinates + named joints) */
    /* [contact] */
    mbs_material material;            /* of the ground and every geometry of [environment] */
    int ncontacts;
    mbs_scenario_contact contacts[MBS_SIM_MAX_CONTACTS];
    /* [environment] */
    mbs_environment env;              /* planes (the ground first when ground = 1), boxes, a heightfield */
    double *heights;                  /* the heightfield's grid (env's points at it), owned */
    /* [controller] */
    char controller[MBS_NAME_LEN];    /* a registered controller's name (mbs/control.h) */
    double controller_dt;             /* controller period (s); τ is held in between */
    /* [stepper] and the scheme sections */
    char stepper[MBS_NAME_LEN];
    double dt;
    double dissipation;               /* λ of the exponential velocity dissipation, v ← (1 − λ) v per step */
    int noptions;
    mbs_scenario_option options[MBS_SIM_MAX_OPTIONS];
    /* [run] */
    double duration;
    double max_velocity;              /* any |v_k| above it is divergence */
    double box_min[3], box_max[3];    /* the base leaving this box stops the run (left_box); ±inf: none */
    int npushes;
    mbs_scenario_push pushes[MBS_SIM_MAX_PUSHES];
    /* [output] */
    char csv[MBS_PATH_LEN];           /* "" = no CSV; relative to the current directory */
    int csv_every;                    /* one CSV row every this many controller periods */
    char html[MBS_PATH_LEN];          /* "" = no replay page; relative to the current directory */
    /* every key = value read (file order, then --set overrides), for messages */
    int nentries;
    mbs_scenario_entry *entries;
};

/* mbs_scenario_load on a text already in memory (len bytes, no NUL needed at the end): `path`
 * names it in messages and the [model] urdf is resolved against its folder, as for a file.
 * mbs_scenario_load reads the file and calls this; the fuzzer (tools/fuzz/fuzz_scenario.c) calls it
 * directly. */
mbs_scenario *mbsi_scenario_load_text(const char *path, const char *text, size_t len, const char *const *overrides,
                                     int noverrides, mbs_error *err);


/* ---- checkpoints (checkpoint.c) ---- */
/* The scenario's identity: a hash of its resolved key = value entries (file and overrides, in any
 * order), so that a checkpoint is only resumed by the run it was written by. */
uint64_t mbsi_scenario_identity(const mbs_scenario *sc);
/* Writes a checkpoint of sc's run holding the state stream payload (n bytes) to "<path>.tmp" and
 * renames it to path: magic, format version, identity, nq and nv, stepper and controller names,
 * payload, FNV-1a 64 checksum of everything before it. */
int mbsi_checkpoint_write(const char *path, const mbs_scenario *sc, const unsigned char *payload, size_t n,
                          mbs_error *err);
/* Reads checkpoint path and checks it (size, magic, version, checksum, nq, nv, names, identity)
 * against sc; *payload (malloc'd, free it) and *n get the state stream. MBS_ERR_IO with a message
 * naming the file and what is wrong. */
int mbsi_checkpoint_read(const char *path, const mbs_scenario *sc, unsigned char **payload, size_t *n, mbs_error *err);

/* ---- the base (base_pose.c) ---- */
/* The model's root: MBS_ROOT_FREE (a free flyer), MBS_ROOT_PLANAR (a planar joint in the world x-z
 * plane, q = [z x cos θ sin θ]: the loader's (floating = 2) or a URDF's own, as Drake's compass
 * gait) or MBS_ROOT_FIXED (anything else: the base keys and figures do not apply). */
int mbsi_root_kind(const mbs_model *m);
/* The base's world position p (m) and, with rpy (may be NULL), its roll pitch yaw (rad) at q for a
 * root of that kind; 0 (nothing written) for a fixed root. A planar root's q is [z x cos θ sin θ]
 * (mbs/model.h): x and z swap. */
int mbsi_base_pose(int root, const double *q, double p[3], double rpy[3]);
/* The angle (degrees) between the base's z axis and the world's at q (a floating root only). */
double mbsi_base_tilt_deg(int root, const double *q);

#endif
