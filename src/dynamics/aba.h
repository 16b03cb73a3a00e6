/* aba.h — the articulated-body passes shared by ABA and ABI. */
#ifndef MBS_ABA_H
#define MBS_ABA_H

#include "../model/model_internal.h"
#include "mbs/dynamics.h"
#include "mbs/liegroup.h"

/* Runs ABA in body frames; with v == NULL the velocity terms are skipped, with ddq == NULL only the
 * articulated inertias (d->IA, d->U, d->Dab) and bias terms are computed. */
void mbsi_aba_passes(const mbs_model *m, mbs_data *d, const double *q, const double *v, const double *tau,
                    const double *fext, double *ddq);

/* y = Dinv x for joint b (nv entries). */
static inline void dinv_mul(const mbs_body *b, const double *Di, const double *x, double *y)
{
    if (b->nv == 1) { y[0] = Di[0] * x[0]; return; }
    for (int i = 0; i < b->nv; i++) {
        double s = 0;
        for (int k = 0; k < b->nv; k++) s += Di[i + 6 * k] * x[k];
        y[i] = s;
    }
}

#endif
