/* dense.c — the small dense numerics several layers share. */
#include <math.h>

#include "base.h"
/* lapacke.h last: it brings complex.h, whose macro I would rename an identifier above */
#include <lapacke.h>

double mbsi_smooth_step(double x)
{
    return x <= 0 ? 0 : x >= 1 ? 1 : 0.5 - 0.5 * cos(MBS_PI * x);
}

void mbsi_spd_solve(double *A, int n, double *b)
{
    double dmax = 0;
    for (int i = 0; i < n; i++) dmax = fmax(dmax, A[i * (n + 1)]);
    for (int i = 0; i < n; i++) A[i * (n + 1)] += 1e-12 * dmax + 1e-300;
    if (n && LAPACKE_dposv_work(LAPACK_COL_MAJOR, 'L', n, 1, A, n, b, n) != 0)
        for (int i = 0; i < n; i++) b[i] = 0;
}
