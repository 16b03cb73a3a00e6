/* dopri5.c — the Dormand–Prince 5(4) pair (Hairer, Nørsett & Wanner, Solving ODEs I, 2nd ed.,
 * sec. II.4 table 5.2 for the tableau, sec. II.6 for the dense output, and the DOPRI5 code for
 * the error norm and the starting step). This is the "integration step" of the
 * event-selected integrator (Anderson & Revzen 2024, sec. 3.1, which also used dopri5). */
#include <math.h>
#include <stddef.h>

#include "dopri5.h"

/* Tableau (c_i, a_ij), 5th-order weights (= a7j, first same as last), error weights
 * e_j = b_j - b̂_j, and the dense-output weights d_j of the 4th-order continuous extension. */
static const double c2 = 1.0 / 5, c3 = 3.0 / 10, c4 = 4.0 / 5, c5 = 8.0 / 9;
static const double a21 = 1.0 / 5;
static const double a31 = 3.0 / 40, a32 = 9.0 / 40;
static const double a41 = 44.0 / 45, a42 = -56.0 / 15, a43 = 32.0 / 9;
static const double a51 = 19372.0 / 6561, a52 = -25360.0 / 2187, a53 = 64448.0 / 6561, a54 = -212.0 / 729;
static const double a61 = 9017.0 / 3168, a62 = -355.0 / 33, a63 = 46732.0 / 5247, a64 = 49.0 / 176,
                    a65 = -5103.0 / 18656;
static const double a71 = 35.0 / 384, a73 = 500.0 / 1113, a74 = 125.0 / 192, a75 = -2187.0 / 6784,
                    a76 = 11.0 / 84;
static const double e1 = 71.0 / 57600, e3 = -71.0 / 16695, e4 = 71.0 / 1920, e5 = -17253.0 / 339200,
                    e6 = 22.0 / 525, e7 = -1.0 / 40;
static const double d1 = -12715105075.0 / 11282082432.0, d3 = 87487479700.0 / 32700410799.0,
                    d4 = -10690763975.0 / 1880347072.0, d5 = 701980252875.0 / 199316789632.0,
                    d6 = -1453857185.0 / 822651844.0, d7 = 69997945.0 / 29380423.0;

int mbsi_dopri5_step(int n, mbs_dopri5_rhs f, void *ctx, const double *x, double h, double *const k[7],
                    double *xnew, double *ytmp, double rtol, double atol, double *err)
{
    /* The autonomous form ẋ = f(x) of the paper's sec. 2: the nodes c_i are only needed
     * for time-dependent fields, kept here as documentation of the tableau. */
    (void)c2; (void)c3; (void)c4; (void)c5;
    const double *k1 = k[0];
    double *k2 = k[1], *k3 = k[2], *k4 = k[3], *k5 = k[4], *k6 = k[5], *k7 = k[6];
    int rc;
    for (int i = 0; i < n; i++) ytmp[i] = x[i] + h * a21 * k1[i];
    if ((rc = f(ctx, ytmp, k2))) return rc;
    for (int i = 0; i < n; i++) ytmp[i] = x[i] + h * (a31 * k1[i] + a32 * k2[i]);
    if ((rc = f(ctx, ytmp, k3))) return rc;
    for (int i = 0; i < n; i++) ytmp[i] = x[i] + h * (a41 * k1[i] + a42 * k2[i] + a43 * k3[i]);
    if ((rc = f(ctx, ytmp, k4))) return rc;
    for (int i = 0; i < n; i++)
        ytmp[i] = x[i] + h * (a51 * k1[i] + a52 * k2[i] + a53 * k3[i] + a54 * k4[i]);
    if ((rc = f(ctx, ytmp, k5))) return rc;
    for (int i = 0; i < n; i++)
        ytmp[i] = x[i] + h * (a61 * k1[i] + a62 * k2[i] + a63 * k3[i] + a64 * k4[i] + a65 * k5[i]);
    if ((rc = f(ctx, ytmp, k6))) return rc;
    for (int i = 0; i < n; i++)
        xnew[i] = x[i] + h * (a71 * k1[i] + a73 * k3[i] + a74 * k4[i] + a75 * k5[i] + a76 * k6[i]);
    if ((rc = f(ctx, xnew, k7))) return rc;
    double s = 0;
    for (int i = 0; i < n; i++) {
        double e = h * (e1 * k1[i] + e3 * k3[i] + e4 * k4[i] + e5 * k5[i] + e6 * k6[i] + e7 * k7[i]);
        double sc = atol + rtol * fmax(fabs(x[i]), fabs(xnew[i]));
        double r = e / sc;
        s += r * r;
    }
    *err = sqrt(s / (double)n);
    return 0;
}

void mbsi_dopri5_dense_prepare(int n, const double *x, const double *xnew, double *const k[7], double h,
                              double *rcont)
{
    const double *k1 = k[0], *k3 = k[2], *k4 = k[3], *k5 = k[4], *k6 = k[5], *k7 = k[6];
    double *r1 = rcont, *r2 = rcont + n, *r3 = rcont + 2 * n, *r4 = rcont + 3 * n, *r5 = rcont + 4 * n;
    for (int i = 0; i < n; i++) {
        double ydiff = xnew[i] - x[i], bspl = h * k1[i] - ydiff;
        r1[i] = x[i];
        r2[i] = ydiff;
        r3[i] = bspl;
        r4[i] = ydiff - h * k7[i] - bspl;
        r5[i] = h * (d1 * k1[i] + d3 * k3[i] + d4 * k4[i] + d5 * k5[i] + d6 * k6[i] + d7 * k7[i]);
    }
}

void mbsi_dopri5_dense_eval(int n, const double *rcont, double theta, double *out)
{
    const double *r1 = rcont, *r2 = rcont + n, *r3 = rcont + 2 * n, *r4 = rcont + 3 * n, *r5 = rcont + 4 * n;
    double t1 = 1.0 - theta;
    for (int i = 0; i < n; i++)
        out[i] = r1[i] + theta * (r2[i] + t1 * (r3[i] + theta * (r4[i] + t1 * r5[i])));
}

int mbsi_dopri5_initial_step(int n, mbs_dopri5_rhs f, void *ctx, const double *x, const double *f0,
                            double rtol, double atol, double hmax, double *x1, double *f1, double *h)
{
    /* HINIT: a step whose explicit Euler increment is 1% of the solution's size, then
     * corrected by an estimate of the second derivative so that h^5 · ‖x''‖ ≈ 0.01. */
    double dnf = 0, dny = 0;
    for (int i = 0; i < n; i++) {
        double sk = atol + rtol * fabs(x[i]);
        dnf += (f0[i] / sk) * (f0[i] / sk);
        dny += (x[i] / sk) * (x[i] / sk);
    }
    dnf /= n;
    dny /= n;
    double h0 = (dnf <= 1e-10 || dny <= 1e-10) ? 1e-6 : sqrt(dny / dnf) * 0.01;
    h0 = fmin(h0, hmax);
    for (int i = 0; i < n; i++) x1[i] = x[i] + h0 * f0[i];
    int rc = f(ctx, x1, f1);
    if (rc) return rc;
    double der2 = 0;
    for (int i = 0; i < n; i++) {
        double sk = atol + rtol * fabs(x[i]);
        double r = (f1[i] - f0[i]) / sk;
        der2 += r * r;
    }
    der2 = sqrt(der2 / n) / h0;
    double der12 = fmax(fabs(der2), sqrt(dnf));
    double h1 = der12 <= 1e-15 ? fmax(1e-6, h0 * 1e-3) : pow(0.01 / der12, 0.2);
    double hh = fmin(fmin(100 * h0, h1), hmax);
    if (!(hh > 0) || !isfinite(hh)) hh = fmin(1e-6, hmax);
    *h = hh;
    return 0;
}
