/* qp_internal.h — what the qp layer shares upward beyond mbs/qp.h: the solver's checkpoint
 * visitor. */
#ifndef MBS_QP_INTERNAL_H
#define MBS_QP_INTERNAL_H

#include "../base/base.h"
#include "mbs/qp.h"

/* Saves or loads what of qp carries from one solve to the next: the last solve's sizes and
 * success (the warm start's condition), its active inequalities (the warm start), its solution,
 * multipliers and info. NULL qp: nothing. */
void mbsi_qp_state(mbs_qp *qp, mbsi_state *s);

#endif
