/* mbs/qp.h — the engine's one QP solver: dense, convex, with equality and inequality
 * constraints, by the dual active-set method of Goldfarb and Idnani (1983). Used by the
 * task-space inverse-dynamics controller, maximal-dissipation contacts and impacts.
 * Matrices are column-major with the leading dimension each prototype names. */
#ifndef MBS_QP_H
#define MBS_QP_H

#include "error.h"

#ifdef __cplusplus
extern "C" {
#endif

/* what this header declares is the library's interface: exported from libmbs.so, where everything
 * else is hidden (the build compiles with -fvisibility=hidden) */
#if defined(__GNUC__)
#pragma GCC visibility push(default)
#endif

typedef struct mbs_qp mbs_qp;

/* A solver for problems of up to n variables, meq equalities and min inequalities; the only
 * allocation. NULL with err filled on bad sizes or no memory. */
mbs_qp *mbs_qp_new(int n, int meq, int min, mbs_error *err);
/* Frees the solver (NULL is allowed). */
void mbs_qp_free(mbs_qp *qp);

/* min ½ xᵀ H x + gᵀ x  subject to  Aeq x = beq (meq rows),  Ain x >= bin (min rows).
 * H: n x n symmetric positive definite, column-major, leading dimension n (not modified; its
 * factorisation reads the lower triangle);
 * Aeq: meq x n column-major with leading dimension meq; Ain: min x n, leading dimension min
 * (either may be NULL when its count is 0). Sizes may be smaller than those of mbs_qp_new.
 * x: n, the solution. warm = 1: the active set of the previous solve (same sizes) is tried first
 * (consecutive problems of a controller or a stepper are similar); after a failed solve or with
 * other sizes the solve starts cold. Allocates nothing.
 * Returns MBS_OK; MBS_ERR_ARG for bad sizes; MBS_ERR_NUMERIC when H is not positive definite,
 * an input is not finite, the constraints are degenerate beyond recovery (linearly dependent
 * equalities) or the iteration cap is reached; MBS_ERR_INFEASIBLE when the constraints admit
 * no x. err (may be NULL) says which, with the constraint at fault. */
int mbs_qp_solve(mbs_qp *qp, int n, const double *H, const double *g, int meq, const double *Aeq,
                 const double *beq, int min, const double *Ain, const double *bin, int warm, double *x,
                 mbs_error *err);

typedef struct mbs_qp_info {
    int iterations;      /* active-set changes (additions and drops) of the last solve; a warm
                            start's re-adding of the previous set is not counted, its drops are */
    int nactive;         /* inequalities active at the solution (0 after a failed solve) */
    double objective;    /* ½ xᵀ H x + gᵀ x */
} mbs_qp_info;

/* What the last solve did: iterations, active inequalities, objective. */
const mbs_qp_info *mbs_qp_last_info(const mbs_qp *qp);
/* The active inequalities of the last solution (indices into Ain's rows, nactive of them) and
 * the Lagrange multipliers: lambda_eq (meq) and lambda_in (min, zero for inactive rows), such
 * that H x + g = Aeqᵀ λ_eq + Ainᵀ λ_in with λ_in >= 0. */
const int *mbs_qp_active(const mbs_qp *qp);
/* Writes the multipliers of the last solve (zero after a failed one); either pointer may be NULL. */
void mbs_qp_multipliers(const mbs_qp *qp, double *lambda_eq, double *lambda_in);

#if defined(__GNUC__)
#pragma GCC visibility pop
#endif

#ifdef __cplusplus
}
#endif
#endif
