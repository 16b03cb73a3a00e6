/* ess_systems.c — the test systems of Anderson & Revzen 2024 (arXiv 2402.00279) for the
 * event-selected integrator (mbs/ess.h) and their exact solutions; declared, with their
 * state layouts, in ess_systems.h. Shared by tests/test_ess.c and tools/bench/bench_ess.c. */
#include "ess_systems.h"

#include <math.h>
#include <stdlib.h>
#include <string.h>

#ifndef M_PI
#define M_PI 3.14159265358979323846
#endif

/* ================================================================ affine system (table 4.1) */

/* Guards h = (x, y, -z): crossing means x becomes >= 0, y becomes >= 0, z becomes <= 0, the
 * closed sides of the table's cases. sigma > 0 is the crossed side. */
static void affine_mode(const signed char s[3], double A[9], double b[3])
{
    memset(A, 0, 9 * sizeof(double));   /* row-major here: A[3*r + c] */
    b[0] = b[1] = b[2] = 0;
    int xp = s[0] > 0, yp = s[1] > 0;
    if (!xp && !yp) { A[1] = -1; b[0] = 1; A[3] = 1; b[1] = 1; }          /* ẋ = -y + 1,  ẏ = x + 1 */
    if (xp && !yp) { A[1] = -2; b[0] = 1; A[3] = 0.5; b[1] = 2; }         /* ẋ = -2y + 1, ẏ = x/2 + 2 */
    if (!xp && yp) { A[1] = 1; b[0] = 1; A[3] = -1; b[1] = 1; }           /* ẋ = y + 1,   ẏ = -x + 1 */
    if (xp && yp) { A[0] = 10; b[0] = 1; A[4] = 1; b[1] = 1; }            /* ẋ = 10x + 1, ẏ = y + 1 */
    if (s[2] > 0) { A[8] = 3; b[2] = -1; }                                /* z <= 0: ż = 3z - 1 */
    else { A[8] = -1; b[2] = -1; }                                        /* z > 0:  ż = -z - 1 */
}

int affine_f(void *user, const double *x, const signed char *s, double *xd)
{
    (void)user;
    double A[9], b[3];
    affine_mode(s, A, b);
    for (int r = 0; r < 3; r++) xd[r] = A[3 * r] * x[0] + A[3 * r + 1] * x[1] + A[3 * r + 2] * x[2] + b[r];
    return 0;
}

int affine_h(void *user, const double *x, double *h)
{
    (void)user;
    h[0] = x[0]; h[1] = x[1]; h[2] = -x[2];
    return 0;
}

int affine_dh(void *user, const double *x, const double *w, double *out)
{
    (void)user; (void)x;
    out[0] = w[0]; out[1] = w[1]; out[2] = -w[2];
    return 0;
}

/* exp(t·M) of a 4x4 row-major matrix: scaling and squaring of a degree-24 Taylor sum, good
 * to rounding for the ‖tM‖ <= 10 met here. */
static void affine_expm4(const double M[16], double t, double E[16])
{
    double nrm = 0;
    for (int i = 0; i < 16; i++) nrm = fmax(nrm, fabs(M[i] * t));
    int sq = 0;
    double sc = t;
    while (nrm * 4 > 0.5 && sq < 60) { nrm *= 0.5; sc *= 0.5; sq++; }
    double A[16], T[16], S[16], P[16];
    for (int i = 0; i < 16; i++) A[i] = M[i] * sc;
    for (int i = 0; i < 16; i++) T[i] = S[i] = (i % 5 == 0);
    for (int k = 1; k <= 24; k++) {
        for (int r = 0; r < 4; r++)
            for (int c = 0; c < 4; c++) {
                double v = 0;
                for (int j = 0; j < 4; j++) v += T[4 * r + j] * A[4 * j + c];
                P[4 * r + c] = v / k;
            }
        for (int i = 0; i < 16; i++) { T[i] = P[i]; S[i] += P[i]; }
    }
    for (int s = 0; s < sq; s++) {
        for (int r = 0; r < 4; r++)
            for (int c = 0; c < 4; c++) {
                double v = 0;
                for (int j = 0; j < 4; j++) v += S[4 * r + j] * S[4 * j + c];
                P[4 * r + c] = v;
            }
        memcpy(S, P, sizeof P);
    }
    memcpy(E, S, sizeof S);
}

/* Exact flow of one mode for time t from x0: the augmented matrix [[A, b], [0, 0]]. */
static void affine_flow(const signed char s[3], const double x0[3], double t, double x[3])
{
    double A[9], b[3], M[16] = {0}, E[16];
    affine_mode(s, A, b);
    for (int r = 0; r < 3; r++) {
        for (int c = 0; c < 3; c++) M[4 * r + c] = A[3 * r + c];
        M[4 * r + 3] = b[r];
    }
    affine_expm4(M, t, E);
    for (int r = 0; r < 3; r++) x[r] = E[4 * r] * x0[0] + E[4 * r + 1] * x0[1] + E[4 * r + 2] * x0[2] + E[4 * r + 3];
}

/* The exact solution from x0 over [0, T]: in each mode the earliest crossing of a guard not
 * yet crossed is bracketed on a 1 ms grid and bisected to the last bit. */
void affine_solve(const double x0[3], double T, affine_exact *ex)
{
    double h0[3];
    affine_h(NULL, x0, h0);
    ex->nseg = 1;
    ex->t[0] = 0;
    memcpy(ex->x[0], x0, sizeof(double) * 3);
    for (int k = 0; k < 3; k++) ex->s[0][k] = (signed char)(h0[k] >= 0 ? 1 : -1);
    for (int seg = 0; seg < 3; seg++) {
        const signed char *s = ex->s[seg];
        const double *xs = ex->x[seg], ts = ex->t[seg];
        double lo = 0, hi = -1, xx[3], hh[3];
        int nsamp = (int)ceil((T - ts) / 1e-3);
        for (int i = 1; i <= nsamp && hi < 0; i++) {
            double tt = fmin(T - ts, i * 1e-3);
            affine_flow(s, xs, tt, xx);
            affine_h(NULL, xx, hh);
            for (int k = 0; k < 3; k++)
                if (s[k] < 0 && hh[k] >= 0) hi = tt;
            if (hi < 0) lo = tt;
        }
        if (hi < 0) break;
        for (int it = 0; it < 200 && hi - lo > 0; it++) {
            double mid = 0.5 * (lo + hi);
            if (mid <= lo || mid >= hi) break;
            affine_flow(s, xs, mid, xx);
            affine_h(NULL, xx, hh);
            int crossed = 0;
            for (int k = 0; k < 3; k++) crossed |= s[k] < 0 && hh[k] >= 0;
            if (crossed) hi = mid;
            else lo = mid;
        }
        affine_flow(s, xs, hi, xx);
        affine_h(NULL, xx, hh);
        int g = -1;
        double best = -INFINITY;
        for (int k = 0; k < 3; k++)
            if (s[k] < 0 && hh[k] > best) { best = hh[k]; g = k; }
        ex->guard[seg] = g;
        ex->t[seg + 1] = ts + hi;
        memcpy(ex->x[seg + 1], xx, sizeof xx);
        ex->x[seg + 1][g] = 0;   /* on the guard */
        memcpy(ex->s[seg + 1], s, 3);
        ex->s[seg + 1][g] = 1;
        ex->nseg++;
    }
}

void affine_eval(const affine_exact *ex, double t, double x[3])
{
    int seg = 0;
    while (seg + 1 < ex->nseg && ex->t[seg + 1] <= t) seg++;
    affine_flow(ex->s[seg], ex->x[seg], t - ex->t[seg], x);
}

/* ================================================================ 1-D hopper (sec. 5.1) */

/* x = (z, ż); guards h1 = L0 - z (touch-down), h2 = z - L0 (lift-off), the pair of sec. 5.1:
 * h1 alone is live only while falling. Stance while the touch-down guard is crossed. */
int hopper_f(void *user, const double *x, const signed char *s, double *xd)
{
    const hopper_par *p = user;
    xd[0] = x[1];
    xd[1] = -p->g + (s[0] > 0 ? p->k * (p->L0 - x[0]) / p->mass : 0);
    return 0;
}

int hopper_h(void *user, const double *x, double *h)
{
    const hopper_par *p = user;
    h[0] = p->L0 - x[0];
    h[1] = x[0] - p->L0;
    return 0;
}

int hopper_dh(void *user, const double *x, const double *w, double *out)
{
    (void)user; (void)x;
    out[0] = -w[0];
    out[1] = w[0];
    return 0;
}

/* The next phase change of the exact hopper from (z, v) at phase `stance`: its delay, or
 * INFINITY when there is none (a stance too shallow to reach L0 again). */
static double hopper_next(const hopper_par *p, double z, double v, int stance)
{
    if (!stance) {   /* z = L0 + v t - g t²/2, the root after the apex */
        double disc = v * v + 2 * p->g * (z - p->L0);
        if (disc < 0) return INFINITY;
        double t = (v + sqrt(disc)) / p->g;
        return t > 0 ? t : INFINITY;
    }
    double w = sqrt(p->k / p->mass), zeq = p->L0 - p->mass * p->g / p->k;
    double u = z - zeq, d = p->L0 - zeq;
    double R = sqrt(u * u + (v / w) * (v / w));
    if (R <= d) return INFINITY;
    double phi = atan2(-v / w, u);                 /* u = R cos(ωt + φ) */
    double psi = 2 * M_PI - acos(d / R);           /* u = d while rising */
    double t = (psi - phi) / w;
    while (t <= 1e-15) t += 2 * M_PI / w;
    while (t > 2 * M_PI / w) t -= 2 * M_PI / w;
    return t;
}

static void hopper_advance(const hopper_par *p, double *z, double *v, int stance, double t)
{
    if (!stance) {
        *z += *v * t - 0.5 * p->g * t * t;
        *v -= p->g * t;
        return;
    }
    double w = sqrt(p->k / p->mass), zeq = p->L0 - p->mass * p->g / p->k;
    double u = *z - zeq, c = cos(w * t), s = sin(w * t);
    double un = u * c + (*v / w) * s, vn = -u * w * s + *v * c;
    *z = zeq + un;
    *v = vn;
}

/* Exact state at time t from (z0, v0) in flight (z0 > L0), and the events before t (times
 * and guards: 0 touch-down, 1 lift-off), at most maxev of them; returns the event count. */
int hopper_exact(const hopper_par *p, double z0, double v0, double t, double *z, double *v, double *ev_t,
                 int *ev_g, int maxev)
{
    double tz = 0, zz = z0, vv = v0;
    int stance = z0 < p->L0, nev = 0;
    for (int it = 0; it < 100000; it++) {
        double dt = hopper_next(p, zz, vv, stance);
        if (tz + dt > t) break;
        hopper_advance(p, &zz, &vv, stance, dt);
        zz = p->L0;
        tz += dt;
        stance = !stance;
        if (nev < maxev) { ev_t[nev] = tz; ev_g[nev] = stance ? 0 : 1; }
        nev++;
    }
    hopper_advance(p, &zz, &vv, stance, t - tz);
    *z = zz;
    *v = vv;
    return nev;
}

/* ================================================================ plate on springs (sec. 5.2) */

/* ns springs evenly spaced on [-0.9, 0.9] under a 2 m plate of 1 kg; the bed's total
 * stiffness and damping are Ktot and Btot whatever ns, so that the dynamics (and a resting
 * plate's sag Mg/Ktot) are the same for every ns and only the cost per contact changes. */
void plate_setup(plate_sys *p, int ns, double Ktot, double Btot)
{
    memset(p, 0, sizeof *p);
    p->ns = ns;
    p->mass = 1;
    p->inertia = 1.0 * 2.0 * 2.0 / 12;
    p->L0 = 1;
    p->g = 9.81;
    p->K = Ktot / ns;
    p->B = Btot / ns;
    for (int i = 0; i < ns; i++) p->xs[i] = ns > 1 ? -0.9 + 1.8 * i / (ns - 1) : 0;
}

int plate_f(void *user, const double *x, const signed char *s, double *xd)
{
    const plate_sys *p = user;
    double ta = tan(x[2]), se2 = 1 + ta * ta, F = 0, tq = 0;
    for (int i = 0; i < p->ns; i++) {
        if (s[2 * i] <= 0) continue;
        double r = x[0] - p->xs[i];
        double h = p->L0 + ta * r - x[1];
        double hd = ta * x[3] - x[4] + se2 * r * x[5];
        double Fi = p->K * h + p->B * hd;
        F += Fi;
        tq -= r * Fi;   /* lever arm x_s - x */
    }
    xd[0] = x[3]; xd[1] = x[4]; xd[2] = x[5];
    xd[3] = 0;
    xd[4] = -p->g + F / p->mass;
    xd[5] = tq / p->inertia;
    return 0;
}

int plate_h(void *user, const double *x, double *h)
{
    const plate_sys *p = user;
    double ta = tan(x[2]);
    for (int i = 0; i < p->ns; i++) {
        double hi = p->L0 + ta * (x[0] - p->xs[i]) - x[1];
        h[2 * i] = hi;
        h[2 * i + 1] = -hi;
    }
    return 0;
}

int plate_dh(void *user, const double *x, const double *w, double *out)
{
    const plate_sys *p = user;
    double ta = tan(x[2]), se2 = 1 + ta * ta;
    for (int i = 0; i < p->ns; i++) {
        double d = ta * w[0] - w[1] + se2 * (x[0] - p->xs[i]) * w[2];
        out[2 * i] = d;
        out[2 * i + 1] = -d;
    }
    return 0;
}

/* ================================================================ Solo-12 drop */

static void solo_quat_R(const double *q, double R[9])
{
    double x = q[0], y = q[1], z = q[2], w = q[3];
    double n = sqrt(x * x + y * y + z * z + w * w);
    x /= n; y /= n; z /= n; w /= n;
    R[0] = 1 - 2 * (y * y + z * z); R[1] = 2 * (x * y + z * w);     R[2] = 2 * (x * z - y * w);
    R[3] = 2 * (x * y - z * w);     R[4] = 1 - 2 * (x * x + z * z); R[5] = 2 * (y * z + x * w);
    R[6] = 2 * (x * z + y * w);     R[7] = 2 * (y * z - x * w);     R[8] = 1 - 2 * (x * x + y * y);
}

static void solo_normalized(const solo_sys *s, const double *q)
{
    memcpy(s->qn, q, sizeof(double) * (size_t)s->nq);
    double n = sqrt(q[3] * q[3] + q[4] * q[4] + q[5] * q[5] + q[6] * q[6]);
    for (int i = 3; i < 7; i++) s->qn[i] = q[i] / n;
}

int solo_f(void *user, const double *x, const signed char *sg, double *xd)
{
    solo_sys *s = user;
    const double *q = x, *v = x + s->nq;
    solo_normalized(s, q);
    mbs_forward_kinematics(s->m, s->d, s->qn, v, NULL);
    memset(s->fext, 0, sizeof(double) * 6 * (size_t)s->nb);
    for (int i = 0; i < 4; i++) {
        if (sg[2 * i] <= 0) continue;
        double Rf[9], pf[3], vel[6], Rb[9], pb[3];
        mbs_frame_placement(s->m, s->d, s->frame[i], Rf, pf);
        mbs_frame_velocity(s->m, s->d, s->frame[i], NULL, MBS_LOCAL_WORLD_ALIGNED, vel);
        double fw[3] = {-s->Bt * vel[0], -s->Bt * vel[1], s->K * (-pf[2]) - s->B * vel[2]};
        mbs_body_placement(s->m, s->d, s->body[i], Rb, pb);
        double fb[3], *fe = s->fext + 6 * s->body[i];
        for (int r = 0; r < 3; r++) fb[r] = Rb[3 * r] * fw[0] + Rb[3 * r + 1] * fw[1] + Rb[3 * r + 2] * fw[2]; /* Rᵀ f */
        const double *c = s->pfoot[i];
        fe[0] += fb[0]; fe[1] += fb[1]; fe[2] += fb[2];
        fe[3] += c[1] * fb[2] - c[2] * fb[1];
        fe[4] += c[2] * fb[0] - c[0] * fb[2];
        fe[5] += c[0] * fb[1] - c[1] * fb[0];
    }
    memset(s->tau, 0, sizeof(double) * (size_t)s->nv);
    for (int j = 6; j < s->nv; j++) s->tau[j] = s->Kp * (s->qref[j + 1] - q[j + 1]) - s->Kd * v[j];
    mbs_aba_fext(s->m, s->d, s->qn, v, s->tau, s->fext, s->ddq);
    double R[9];
    solo_quat_R(q + 3, R);
    for (int r = 0; r < 3; r++) xd[r] = R[r] * v[0] + R[r + 3] * v[1] + R[r + 6] * v[2];
    const double *qv = q + 3, qw = q[6], *w = v + 3;   /* q̇ = ½ q ⊗ (ω, 0), ω in the base frame */
    xd[3] = 0.5 * (qw * w[0] + qv[1] * w[2] - qv[2] * w[1]);
    xd[4] = 0.5 * (qw * w[1] + qv[2] * w[0] - qv[0] * w[2]);
    xd[5] = 0.5 * (qw * w[2] + qv[0] * w[1] - qv[1] * w[0]);
    xd[6] = -0.5 * (qv[0] * w[0] + qv[1] * w[1] + qv[2] * w[2]);
    for (int j = 7; j < s->nq; j++) xd[j] = v[j - 1];
    memcpy(xd + s->nq, s->ddq, sizeof(double) * (size_t)s->nv);
    return 0;
}

int solo_h(void *user, const double *x, double *h)
{
    solo_sys *s = user;
    solo_normalized(s, x);
    mbs_forward_kinematics(s->m, s->d, s->qn, NULL, NULL);
    for (int i = 0; i < 4; i++) {
        double R[9], p[3];
        mbs_frame_placement(s->m, s->d, s->frame[i], R, p);
        h[2 * i] = -p[2];
        h[2 * i + 1] = p[2];
    }
    return 0;
}

/* Dh(x)·w: the foot heights depend on q only; w's q part is turned into the tangent
 * velocity it represents (base linear Rᵀṗ, angular 2 vec(q̄ ⊗ q̇)/|q|², joints as they are)
 * and the foot velocities follow from kinematics. */
int solo_dh(void *user, const double *x, const double *w, double *out)
{
    solo_sys *s = user;
    const double *q = x, *qv = x + 3, *wv = w + 3;
    double R[9], qw = q[6], ww = w[6], n2 = qv[0] * qv[0] + qv[1] * qv[1] + qv[2] * qv[2] + qw * qw;
    solo_quat_R(q + 3, R);
    for (int r = 0; r < 3; r++) s->vt[r] = R[3 * r] * w[0] + R[3 * r + 1] * w[1] + R[3 * r + 2] * w[2];
    double c[3] = {qv[1] * wv[2] - qv[2] * wv[1], qv[2] * wv[0] - qv[0] * wv[2], qv[0] * wv[1] - qv[1] * wv[0]};
    for (int r = 0; r < 3; r++) s->vt[3 + r] = 2 * (qw * wv[r] - ww * qv[r] - c[r]) / n2;
    for (int j = 6; j < s->nv; j++) s->vt[j] = w[j + 1];
    solo_normalized(s, x);
    mbs_forward_kinematics(s->m, s->d, s->qn, s->vt, NULL);
    for (int i = 0; i < 4; i++) {
        double vel[6];
        mbs_frame_velocity(s->m, s->d, s->frame[i], NULL, MBS_LOCAL_WORLD_ALIGNED, vel);
        out[2 * i] = -vel[2];
        out[2 * i + 1] = vel[2];
    }
    return 0;
}

void solo_free(solo_sys *s)
{
    if (!s) return;
    free(s->qn); free(s->fext); free(s->tau); free(s->ddq); free(s->vt);
    mbs_data_free(s->d);
    mbs_model_free(s->m);
    memset(s, 0, sizeof *s);
}

/* Loads Solo and its standing posture (SRDF "standing", ../shared/reference/reference_configs.yaml),
 * fills the initial state x0 (n = nq + nv): base at height z0 with roll and pitch, at rest.
 * Returns 0, or -1 with err filled. */
int solo_setup(solo_sys *s, const char *urdf, double z0, double roll, double pitch, double *x0,
               mbs_error *err)
{
    memset(s, 0, sizeof *s);
    s->m = mbs_model_from_urdf(urdf, NULL, err);
    if (!s->m) return -1;
    s->nq = mbs_model_nq(s->m);
    s->nv = mbs_model_nv(s->m);
    s->nb = mbs_model_nbodies(s->m);
    s->d = mbs_data_new(s->m);
    s->qn = calloc((size_t)s->nq, sizeof(double));
    s->fext = calloc(6 * (size_t)s->nb, sizeof(double));
    s->tau = calloc((size_t)s->nv, sizeof(double));
    s->ddq = calloc((size_t)s->nv, sizeof(double));
    s->vt = calloc((size_t)s->nv, sizeof(double));
    if (!s->d || !s->qn || !s->fext || !s->tau || !s->ddq || !s->vt || s->nq > 64) {
        solo_free(s);
        return -1;
    }
    static const char *feet[4] = {"FL_FOOT", "FR_FOOT", "HL_FOOT", "HR_FOOT"};
    for (int i = 0; i < 4; i++) {
        s->frame[i] = mbs_frame_id(s->m, feet[i]);
        if (s->frame[i] < 0) { solo_free(s); return -1; }
        s->body[i] = mbs_frame_body(s->m, s->frame[i]);
        double Rl[9];
        mbs_frame_local_placement(s->m, s->frame[i], Rl, s->pfoot[i]);
    }
    static const char *jn[12] = {"FL_HAA", "FL_HFE", "FL_KFE", "FR_HAA", "FR_HFE", "FR_KFE",
                                 "HL_HAA", "HL_HFE", "HL_KFE", "HR_HAA", "HR_HFE", "HR_KFE"};
    static const double jq[12] = {0.1, 0.8, -1.6, -0.1, 0.8, -1.6, 0.1, -0.8, 1.6, -0.1, -0.8, 1.6};
    mbs_neutral(s->m, s->qref);
    for (int j = 0; j < 12; j++) {
        int id = mbs_joint_id(s->m, jn[j]);
        if (id < 0) { solo_free(s); return -1; }
        s->qref[mbs_joint_idx_q(s->m, id)] = jq[j];
    }
    s->K = 2000; s->B = 20; s->Bt = 20;   /* N/m, N s/m: 3 mm sag per foot when standing */
    s->Kp = 5; s->Kd = 0.1;               /* N m/rad, N m s/rad */
    memcpy(x0, s->qref, sizeof(double) * (size_t)s->nq);
    x0[2] = z0;
    double cr = cos(roll / 2), sr = sin(roll / 2), cp = cos(pitch / 2), sp = sin(pitch / 2);
    x0[3] = sr * cp; x0[4] = cr * sp; x0[5] = sr * sp; x0[6] = cr * cp;    /* R = Rx(roll) Ry(pitch) */
    memset(x0 + s->nq, 0, sizeof(double) * (size_t)s->nv);
    return 0;
}
