/* sensing.c — what a controller knows of the contacts: which points touch, as a foot switch or
 * a force sensor would tell a real robot, not the simulator's contact state. */
#include "control_internal.h"

void mbsi_sense_contacts(const mbs_system *sys, mbs_data *d, const double *q, int *touching)
{
    mbs_forward_kinematics(sys->model, d, q, NULL, NULL);
    for (int i = 0; i < sys->nfeet; i++) {
        const mbs_contact *ct = &sys->contacts[i];
        double ctr[3], depth, n[3], pt[3];
        mbsi_contact_point_world(sys->model, d, ct, NULL, ctr, NULL, NULL);
        touching[i] = mbs_environment_query(&sys->env, ctr, ct->radius + 1e-3, &depth, n, pt, NULL);
    }
}
