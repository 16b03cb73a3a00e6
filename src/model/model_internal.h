/* model_internal.h — the layout of mbs_model and mbs_data, shared by the library's files only
 * (the model layer and the layers above it). */
#ifndef MBS_MODEL_INTERNAL_H
#define MBS_MODEL_INTERNAL_H

#include <math.h>
#include <stddef.h>
#include <string.h>

#include "../base/base.h"
#include "mbs/model.h"

/* One moving body and the joint that moves it. */
typedef struct mbs_body {
    int parent;                 /* body index, -1 = world */
    mbs_joint_type type;
    int idx_q, idx_v, nq, nv;
    int axis_id;                /* 0, 1, 2 when the axis is +x, +y, +z (fast paths), else -1 */
    int axis_neg_id;            /* 0, 1, 2 when the axis is -x, -y, -z (a turn by -q about +x, ...), else -1 */
    double axis[3];             /* unit axis (revolute, prismatic) or plane normal (planar) */
    double plane[6];            /* planar: in-plane unit vectors t1, t2 with t1 x t2 = axis */
    double Rt[9], pt[3];        /* joint frame in the parent body frame (the tree transform) */
    double mass, h[3], Io[9];   /* inertia: mass, first moment m·c and rotational inertia about the body origin */
    double lower[7], upper[7];  /* position limits per coordinate */
    double vlimit[6], effort[6], damping[6], friction[6], armature[6];
    /* finalize: for a revolute joint about ±x, ±y or ±z behind an identity tree rotation, the
     * axis its body turns about by a plane rotation (0, 1, 2; else -1), and -1 for -x, -y, -z
     * (a turn by -q about +x, ...; else 1) */
    int turn_axis;
    double turn_sign;
    int last;                   /* last body index of the subtree rooted here */
    int nv_subtree;             /* dofs in the subtree, this joint's included */
    char *joint_name, *link_name;
} mbs_body;

typedef struct mbs_frame {
    char *name;
    int body;                   /* -1 = world */
    mbs_frame_type type;
    double R[9], p[3];          /* placement in the body frame */
} mbs_frame;

struct mbs_model {
    char *name;
    int nbodies, nq, nv, nframes;
    int cap_bodies, cap_frames;
    mbs_body *bodies;
    mbs_frame *frames;
    int nvisuals, cap_visuals;
    mbs_visual *visuals;        /* what a viewer draws (URDF <visual>) */
    int ncollisions, cap_collisions;
    mbs_collision *collisions;  /* what the robot touches with (URDF <collision>, colliding MJCF geoms) */
    double world_mass;          /* inertia fixed to the world (counts in the total mass only) */
    double gravity[3];
    int finalized;
    /* per coordinate, filled by finalize */
    double *S;                  /* 6 x nv motion subspace columns in body frames (constant) */
    int *dof_body;              /* body of each dof */
    int *dof_parent;            /* λ(k): the dof that precedes k towards the root, -1 at the root */
    /* the ancestors of dof k, nearest first (λ(k), λ(λ(k)), ...): dof_anc[dof_anc_at[k] ..
     * dof_anc_at[k + 1]). Loops over them then walk an array instead of a chain of dependent
     * loads through dof_parent (the sparse factorisation and solves, the ABA derivatives). */
    int *dof_anc, *dof_anc_at;
    /* the end of dof k's subtree: its dofs are k .. dof_end[k] − 1 (depth-first numbering) */
    int *dof_end;
    double *lower, *upper;      /* nq */
    double *vlimit, *effort, *damping, *friction; /* nv */
    double *armature;           /* nv: rotor inertias added to M's diagonal */
    int any_armature;           /* 1 when an armature is non-zero (the algorithms skip it otherwise) */
    int nkeyframes, cap_keyframes;
    struct mbs_keyframe { char *name; double *q, *v; } *keyframes;
};

struct mbs_data {
    int nb, nv;
    /* kinematics (body frames unless prefixed o: world) */
    double *liR, *lip;          /* 9 x nb, 3 x nb: body i in its parent */
    double *oR, *op;            /* 9 x nb, 3 x nb: body i in the world */
    double *v, *a;              /* 6 x nb: spatial velocity and acceleration in body frames */
    double *f;                  /* 6 x nb: forces (RNEA), bias forces (ABA) */
    /* mass matrix and its factor */
    double *M;                  /* nv x nv scratch mass matrix */
    double *L;                  /* nv x nv: Lᵀ D L factor (strict lower part of row k: L(k, λ^j(k))) */
    double *Lp;                 /* the factorisation's packed rows: row k's diagonal, then its entries in the columns of
                                 * its ancestors, nearest first (at dof_anc_at[k] + k; ltdl.c) */
    double *D, *Dinv;           /* nv */
    double *Ic;                 /* 16 x nb composite inertias (mass, h[3], Io[9] + pad) */
    double *rR, *rp;            /* 9 x nb, 3 x nb: body i in the frame of its tree's root body (CRBA) */
    double *F;                  /* 6 x nv scratch force columns */
    /* articulated bodies */
    double *IA;                 /* 36 x nb articulated inertias */
    double *U;                  /* 6 x nv: IA S */
    double *Dab;                /* 36 x nb: inverse of the joint-space articulated inertia (nv_i x nv_i) */
    double *u;                  /* nv */
    /* the forward dynamics' own (mbs_aba, in world axes; apart from the above, which
     * mbs_abi_factor leaves for mbs_abi_solve): placements, joint columns, velocities, bias
     * accelerations, bias forces, accelerations, articulated inertias, U = IA S, D⁻¹, u */
    double *wR, *wp, *wS, *wv, *wc, *wf, *wa, *wI, *wU, *wD, *wu;
    /* Jacobians */
    double *J;                  /* 6 x nv world-frame motion subspace columns */
    /* derivatives: 6 x nv columns each, 36 x nb matrices */
    double *dVdq, *dAdq, *dAdv, *dFdq, *dFdv, *dFda;
    double *ov, *oa, *of, *oh;  /* 6 x nb world-frame quantities */
    double *oYc;                /* 16 x nb world composite inertias */
    double *oBc;                /* 36 x nb world composite B matrices */
    /* scratch vectors */
    double *tmp_nv[4];
    double *tmp_nvnv;           /* nv x nv */
    double *M2;                 /* nv x nv */
    double *rows;               /* nv x 3nv row-major right-hand sides */
    double *tmp_6nv;            /* 6 x nv */
    double *tmp_6nb;            /* 6 x nb */
};

#endif
