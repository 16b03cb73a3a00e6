/* solo_stance.h — Solo-12 standing on the ground z = 0 on its four foot spheres: the joints'
 * posture and the base height at which the lowest foot sphere touches. Shared by the batch
 * benchmark (tools/bench/bench_batch.c) and the batch test (tests/test_batch.c), which start from the
 * same stance. Header-only: both link nothing but the library. */
#ifndef MBS_TOOLS_SOLO_STANCE_H
#define MBS_TOOLS_SOLO_STANCE_H

#include <math.h>

#include "mbs.h"

#define SOLO_FOOT_RADIUS 0.0191   /* m, the foot spheres */

static const char *const solo_feet[4] = {"FL_FOOT", "FR_FOOT", "HL_FOOT", "HR_FOOT"};
static const char *const solo_joints[12] = {"FL_HAA", "FL_HFE", "FL_KFE", "FR_HAA", "FR_HFE", "FR_KFE",
                                            "HL_HAA", "HL_HFE", "HL_KFE", "HR_HAA", "HR_HFE", "HR_KFE"};
static const double solo_posture[12] = {0.1, 0.8, -1.6, -0.1, 0.8, -1.6, 0.1, -0.8, 1.6, -0.1, -0.8, 1.6};

/* q0 (19): the posture with the base raised, from the feet frames' placements, until the lowest
 * foot sphere touches z = 0; iq, iv: each of solo_joints' index in q and in v. Returns NULL, or
 * the name of what m lacks (a joint, or the free-flyer Solo-12's nq = 19 and nv = 18). */
static const char *solo_stance(const mbs_model *m, double q0[19], int iq[12], int iv[12])
{
    if (mbs_model_nq(m) != 19 || mbs_model_nv(m) != 18) return "a free-flyer Solo-12 (nq 19, nv 18)";
    mbs_neutral(m, q0);
    for (int j = 0; j < 12; j++) {
        int id = mbs_joint_id(m, solo_joints[j]);
        if (id < 0) return solo_joints[j];
        iq[j] = mbs_joint_idx_q(m, id);
        iv[j] = mbs_joint_idx_v(m, id);
        q0[iq[j]] = solo_posture[j];
    }
    mbs_data *d = mbs_data_new(m);
    double lowest = INFINITY;
    for (int f = 0; f < 4; f++) {
        double R[9], p[3];
        mbs_compute_frame_placement(m, d, q0, mbs_frame_id(m, solo_feet[f]), R, p);
        lowest = fmin(lowest, p[2]);
    }
    mbs_data_free(d);
    q0[2] = SOLO_FOOT_RADIUS - lowest;
    return NULL;
}

#endif
