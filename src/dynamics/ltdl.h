/* ltdl.h — the LTDL solve for many right-hand sides stored as rows. */
#ifndef MBS_LTDL_H
#define MBS_LTDL_H

#include "../internal.h"

/* Solves M X = B in place for B of nv rows and ncols columns stored row-major (row i at
 * X + i·ncols): every tree operation then updates a whole contiguous row, which vectorises.
 * The first nid columns (0 or nv) are the identity, set here: they come out as M⁻¹. */
void mbs_ltdl_solve_rows(const mbs_model *m, const mbs_data *d, double *X, int ncols, int nid);

#endif
