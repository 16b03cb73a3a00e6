/* dynamics_internal.h — what the dynamics layer shares with the layers above beyond its public
 * header: the LTDL factorisation in place, and its solve for many right-hand sides stored as rows. */
#ifndef MBS_DYNAMICS_INTERNAL_H
#define MBS_DYNAMICS_INTERNAL_H

#include "../model/model_internal.h"
#include "mbs/dynamics.h"
#include "mbs/liegroup.h"

/* mbs_ltdl on the M already in d->L (column-major), of which only the entries (k, j), j = k or
 * j an ancestor of k (the lower triangle's tree entries), are read: the rest may hold anything. */
int mbs_ltdl_in_place(const mbs_model *m, mbs_data *d);

/* Solves M X = B in place for B of nv rows and ncols columns stored row-major (row i at
 * X + i·ncols): every tree operation then updates a whole contiguous row, which vectorises.
 * The first nid columns (0 or nv) are the identity, set here: they come out as the upper
 * triangle of M⁻¹ (row i from column i on; the entries left of the diagonal are not M⁻¹'s). */
void mbs_ltdl_solve_rows(const mbs_model *m, const mbs_data *d, double *X, int ncols, int nid);

#endif
