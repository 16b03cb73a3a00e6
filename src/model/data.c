/* data.c — one allocation holds every buffer an algorithm needs, so no algorithm allocates. */
#include <stdlib.h>
#include <string.h>

#include "model_internal.h"

#define carve mbsi_carve_doubles

static void layout(mbs_carver *c, mbs_data *d, int nb, int nv)
{
    size_t b = (size_t)nb, v = (size_t)(nv ? nv : 1);
    d->liR = carve(c, 9 * b); d->lip = carve(c, 3 * b);
    d->oR = carve(c, 9 * b); d->op = carve(c, 3 * b);
    d->v = carve(c, 6 * b); d->a = carve(c, 6 * b); d->f = carve(c, 6 * b);
    d->M = carve(c, v * v); d->L = carve(c, v * v); d->Lp = carve(c, v * (v + 1) / 2);
    d->D = carve(c, v); d->Dinv = carve(c, v);
    d->Ic = carve(c, 16 * b); d->F = carve(c, 6 * v);
    d->rR = carve(c, 9 * b); d->rp = carve(c, 3 * b);
    d->IA = carve(c, 36 * b); d->U = carve(c, 6 * v); d->Dab = carve(c, 36 * b); d->u = carve(c, v);
    d->J = carve(c, 6 * v);
    d->wR = carve(c, 9 * b); d->wp = carve(c, 3 * b); d->wS = carve(c, 6 * v);
    d->wv = carve(c, 6 * b); d->wc = carve(c, 6 * b); d->wf = carve(c, 6 * b); d->wa = carve(c, 6 * b);
    d->wI = carve(c, 36 * b); d->wU = carve(c, 6 * v); d->wD = carve(c, 36 * b); d->wu = carve(c, v);
    d->dVdq = carve(c, 6 * v); d->dAdq = carve(c, 6 * v); d->dAdv = carve(c, 6 * v);
    d->dFdq = carve(c, 6 * v); d->dFdv = carve(c, 6 * v); d->dFda = carve(c, 6 * v);
    d->ov = carve(c, 6 * b); d->oa = carve(c, 6 * b); d->of = carve(c, 6 * b); d->oh = carve(c, 6 * b);
    d->oYc = carve(c, 16 * b); d->oBc = carve(c, 36 * b);
    for (int k = 0; k < 4; k++) d->tmp_nv[k] = carve(c, v);
    d->tmp_nvnv = carve(c, v * v);
    d->M2 = carve(c, v * v);
    /* [M⁻¹ | ∂τ/∂q | ∂τ/∂v] of the ABA derivatives, each row and the first block padded to
     * whole cache lines (mbsi_line_up: 14 columns more at most) */
    d->rows = carve(c, v * (3 * v + 14));
    d->tmp_6nv = carve(c, 6 * v);
    d->tmp_6nb = carve(c, 6 * b);
}

mbs_data *mbs_data_new(const mbs_model *m)
{
    if (!m || !m->finalized) return NULL;
    /* whole cache lines of its own, as its buffers: no line shared with another thread's objects */
    mbs_carver sc = {NULL, 0};
    mbsi_carve(&sc, sizeof(mbs_data));
    mbs_data *d = mbsi_carver_alloc(&sc);
    if (!d) return NULL;
    d->nb = m->nbodies;
    d->nv = m->nv;
    mbs_carver c = {NULL, 0};
    layout(&c, d, d->nb, d->nv);
    if (!mbsi_carver_alloc(&c)) { free(d); return NULL; }
    layout(&c, d, d->nb, d->nv);
    return d;
}

void mbs_data_free(mbs_data *d)
{
    if (!d) return;
    free(d->liR);   /* the first carved array is the block */
    free(d);
}
