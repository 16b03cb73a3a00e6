/* dopri5.h — the embedded Dormand–Prince 5(4) pair with its dense output (Hairer, Nørsett &
 * Wanner, Solving ODEs I, sec. II.4 and II.6, the DOPRI5 code), used by the event-selected
 * integrator (ess.c) for its smooth pieces. Internal to the library: no allocation, no state;
 * the caller owns every buffer. */
#ifndef MBS_ESS_DOPRI5_H
#define MBS_ESS_DOPRI5_H

/* ẋ = f(x); returns 0, or a non-zero code that aborts the step and is passed back. */
typedef int (*mbs_dopri5_rhs)(void *ctx, const double *x, double *xdot);

/* One step of size h from x. On entry k[0] = f(x) (first same as last); on return
 * k[1..6] hold the stages, k[6] = f(xnew) (the next step's k[0]), xnew the 5th-order
 * solution and *err the scaled RMS norm of the embedded error estimate (Hairer (4.11), with
 * sc_i = atol + rtol·max(|x_i|, |xnew_i|)): the step is acceptable when *err <= 1.
 * ytmp is n scratch doubles. Returns 0 or the first non-zero code of f. */
int mbsi_dopri5_step(int n, mbs_dopri5_rhs f, void *ctx, const double *x, double h, double *const k[7],
                    double *xnew, double *ytmp, double rtol, double atol, double *err);

/* Dense output of the last step (Hairer's CONTD5): fills rcont (5n doubles) from x, xnew,
 * the stages and h; mbsi_dopri5_dense_eval then gives the 4th-order continuous extension
 * at x(t_old + θh), θ ∈ [0, 1]. */
void mbsi_dopri5_dense_prepare(int n, const double *x, const double *xnew, double *const k[7], double h,
                              double *rcont);
void mbsi_dopri5_dense_eval(int n, const double *rcont, double theta, double *out);

/* Hairer's starting step size (HINIT): from x, f0 = f(x), the tolerances and an upper bound
 * hmax (> 0). Costs one evaluation of f; x1 and f1 are n scratch doubles each. Returns 0 or
 * the code of f with *h untouched. */
int mbsi_dopri5_initial_step(int n, mbs_dopri5_rhs f, void *ctx, const double *x, const double *f0,
                            double rtol, double atol, double hmax, double *x1, double *f1, double *h);

#endif
