/* energy.c — kinetic and potential energy, centre of mass. */
#include "../model/model_internal.h"
#include "mbs/dynamics.h"
#include "mbs/liegroup.h"
#include "joint.h"

double mbs_kinetic_energy(const mbs_model *m, mbs_data *d, const double *q, const double *v)
{
    mbs_forward_kinematics(m, d, q, v, NULL);
    double ke = 0;
    for (int i = 0; i < m->nbodies; i++) {
        const mbs_body *b = &m->bodies[i];
        double h[6];
        inertia_mul(b->mass, b->h, b->Io, d->v + 6 * i, h);
        ke += 0.5 * sdot(d->v + 6 * i, h);
    }
    return ke;
}

double mbs_potential_energy(const mbs_model *m, mbs_data *d, const double *q)
{
    double com[3];
    mbs_center_of_mass(m, d, q, NULL, com, NULL);
    double mass = 0;
    for (int i = 0; i < m->nbodies; i++) mass += m->bodies[i].mass;
    return -mass * v3_dot(m->gravity, com);
}

void mbs_center_of_mass(const mbs_model *m, mbs_data *d, const double *q, const double *v, double com[3],
                        double vcom[3])
{
    int with_v = v && vcom;
    mbs_forward_kinematics(m, d, q, with_v ? v : NULL, NULL);
    double mass = 0, c[3] = {0, 0, 0}, pl[3] = {0, 0, 0};
    for (int i = 0; i < m->nbodies; i++) {
        const mbs_body *b = &m->bodies[i];
        double hw[3];
        /* world first moment of body i: R h + m p */
        m3_mulv(d->oR + 9 * i, b->h, hw);
        for (int k = 0; k < 3; k++) c[k] += hw[k] + b->mass * d->op[3 * i + k];
        mass += b->mass;
        if (with_v) {
            /* linear momentum m v + ω × h in body axes, rotated to the world */
            double l[3], t[3], lw[3];
            const double *vi = d->v + 6 * i;
            v3_cross(vi + 3, b->h, t);
            for (int k = 0; k < 3; k++) l[k] = b->mass * vi[k] + t[k];
            m3_mulv(d->oR + 9 * i, l, lw);
            for (int k = 0; k < 3; k++) pl[k] += lw[k];
        }
    }
    for (int k = 0; k < 3; k++) com[k] = mass > 0 ? c[k] / mass : 0;
    if (with_v)
        for (int k = 0; k < 3; k++) vcom[k] = mass > 0 ? pl[k] / mass : 0;
}
