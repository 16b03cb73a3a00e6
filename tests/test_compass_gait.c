/* test_compass_gait.c — the compass gait walker (urdf/compass_gait.urdf) walking down a slope
 * under rigid contact (stepper `rigid`), against an independent reference: the classic hybrid model
 * of Goswami, Thuilot and Espiau 1998 (Tedrake, Underactuated Robotics, "Simple models of walking"),
 * integrated here by RK4 with event location, its impact map from the conservation of angular
 * momentum, and its period-one fixed point found by Newton on the Poincaré map. The engine starts on
 * that fixed point and walks on stepping stones (the swing foot's scuffing dip passes over the gaps
 * between them, docs/compass_gait.md); its impacts and gait are compared with the reference's. */
#include <stdlib.h>

#include "check.h"
#include "testmodels.h"

/* ---- the reference: the hybrid compass gait in its own coordinates ----
 * Gravity vertical (−y), the slope descending towards +x at angle GAM. x = [p1 p2 w1 w2]: the
 * stance and swing legs' angles from the vertical, each leg's foot-to-hip vector being
 * l (sin p, cos p), and their rates. Point masses: MH at the hip, M on each leg A from its foot
 * (B = l − A from the hip). */
static const double MH = 10, M = 5, A = 0.5, B = 0.5, L = 1, G = 9.81, GAM = 0.0525;

/* Lagrange's equations of the stance phase (the stance foot a pin):
 *   [(MH + M) l² + M a²   −M l b cos(p1−p2)] [ẇ1]   [ M l b sin(p1−p2) w2² + g (MH l + M a + M l) sin p1]
 *   [−M l b cos(p1−p2)    M b²             ] [ẇ2] = [−M l b sin(p1−p2) w1² − M g b sin p2              ] */
static void ref_rhs(const double x[4], double dx[4])
{
    double d = x[0] - x[1], s = sin(d), c = cos(d);
    double m11 = (MH + M) * L * L + M * A * A, m12 = -M * L * B * c, m22 = M * B * B;
    double r1 = M * L * B * s * x[3] * x[3] + G * (MH * L + M * A + M * L) * sin(x[0]);
    double r2 = -M * L * B * s * x[2] * x[2] - M * G * B * sin(x[1]);
    double det = m11 * m22 - m12 * m12;
    dx[0] = x[2];
    dx[1] = x[3];
    dx[2] = (m22 * r1 - m12 * r2) / det;
    dx[3] = (m11 * r2 - m12 * r1) / det;
}

static void ref_rk4(double x[4], double h)
{
    double k1[4], k2[4], k3[4], k4[4], y[4];
    ref_rhs(x, k1);
    for (int i = 0; i < 4; i++) y[i] = x[i] + 0.5 * h * k1[i];
    ref_rhs(y, k2);
    for (int i = 0; i < 4; i++) y[i] = x[i] + 0.5 * h * k2[i];
    ref_rhs(y, k3);
    for (int i = 0; i < 4; i++) y[i] = x[i] + h * k3[i];
    ref_rhs(y, k4);
    for (int i = 0; i < 4; i++) x[i] += h / 6 * (k1[i] + 2 * k2[i] + 2 * k3[i] + k4[i]);
}

/* Height of the swing foot above the slope: l (cos(p1 − γ) − cos(p2 − γ)). Zero when the legs are
 * symmetric about the slope's normal (the impact) and when they coincide (the scuffing the model
 * ignores). */
static double ref_clearance(const double x[4]) { return L * (cos(x[0] - GAM) - cos(x[1] - GAM)); }

/* Positions and velocities of the three masses (hip, stance leg, swing leg), stance foot at f. */
static void ref_masses(const double x[4], const double f[2], double p[3][2], double v[3][2])
{
    double s1 = sin(x[0]), c1 = cos(x[0]), s2 = sin(x[1]), c2 = cos(x[1]);
    p[0][0] = f[0] + L * s1; p[0][1] = f[1] + L * c1;
    v[0][0] = L * x[2] * c1; v[0][1] = -L * x[2] * s1;
    p[1][0] = f[0] + A * s1; p[1][1] = f[1] + A * c1;
    v[1][0] = A * x[2] * c1; v[1][1] = -A * x[2] * s1;
    p[2][0] = p[0][0] - B * s2; p[2][1] = p[0][1] - B * c2;
    v[2][0] = v[0][0] - B * x[3] * c2; v[2][1] = v[0][1] + B * x[3] * s2;
}

/* Angular momentum of a point mass about P (out of the plane). */
static double ref_moment(const double p[2], const double v[2], double m, const double P[2])
{
    return m * ((p[0] - P[0]) * v[1] - (p[1] - P[1]) * v[0]);
}

static double ref_energy(const double x[4])
{
    static const double o[2] = {0, 0};
    double p[3][2], v[3][2];
    ref_masses(x, o, p, v);
    const double mass[3] = {MH, M, M};
    double T = 0;
    for (int i = 0; i < 3; i++) T += 0.5 * mass[i] * (v[i][0] * v[i][0] + v[i][1] * v[i][1]);
    return T;
}

/* The impact map: the swing foot lands and sticks, the stance foot leaves the ground. Conserved
 * through the impulse: the whole walker's angular momentum about the landing foot (the only other
 * impulse acts there), and the old stance leg's about the hip (only the hip pin's impulse acts on
 * it, the foot leaving). The legs swap roles: p⁺ = (p2⁻, p1⁻), and (w1⁺, w2⁺) solve the 2 × 2 linear
 * system of the two momenta after the impact. */
static void ref_impact(const double xm[4], double xp[4])
{
    static const double o[2] = {0, 0};
    double p[3][2], v[3][2];
    ref_masses(xm, o, p, v);
    const double S[2] = {p[0][0] - L * sin(xm[1]), p[0][1] - L * cos(xm[1])}, H[2] = {p[0][0], p[0][1]};
    double all = ref_moment(p[0], v[0], MH, S) + ref_moment(p[1], v[1], M, S) + ref_moment(p[2], v[2], M, S);
    double leg = ref_moment(p[1], v[1], M, H);
    double Am[2][2];
    for (int k = 0; k < 2; k++) {   /* the momenta after, linear in (w1⁺, w2⁺): column k at a unit rate */
        double y[4] = {xm[1], xm[0], k == 0, k == 1}, q[3][2], u[3][2];
        ref_masses(y, S, q, u);
        Am[0][k] = ref_moment(q[0], u[0], MH, S) + ref_moment(q[1], u[1], M, S) + ref_moment(q[2], u[2], M, S);
        Am[1][k] = ref_moment(q[2], u[2], M, q[0]);
    }
    double det = Am[0][0] * Am[1][1] - Am[0][1] * Am[1][0];
    xp[0] = xm[1];
    xp[1] = xm[0];
    xp[2] = (Am[1][1] * all - Am[0][1] * leg) / det;
    xp[3] = (Am[0][0] * leg - Am[1][0] * all) / det;
}

/* One stance phase from x0 to the swing foot's landing: RK4 at step h until the clearance crosses
 * zero downwards with the swing foot ahead (p1 − p2 > 0.05 rad: the scuffing crossing, legs
 * together, is not a landing), the crossing located by bisection on the last step. Returns 0 with
 * the state before the impact and the time; −1 when the walker falls. dip: least clearance. */
static int ref_stride(const double x0[4], double h, double xm[4], double *T, double *dip)
{
    double x[4] = {x0[0], x0[1], x0[2], x0[3]}, t = 0, c0 = ref_clearance(x);
    if (dip) *dip = 0;
    for (int i = 0; i < 100000; i++) {
        double y[4] = {x[0], x[1], x[2], x[3]};
        ref_rk4(y, h);
        double c1 = ref_clearance(y);
        if (dip && c1 < *dip) *dip = c1;
        if (c0 > 0 && c1 <= 0 && y[0] - y[1] > 0.05) {
            double lo = 0, hi = h;
            for (int k = 0; k < 60; k++) {
                double mid = 0.5 * (lo + hi), z[4] = {x[0], x[1], x[2], x[3]};
                ref_rk4(z, mid);
                if (ref_clearance(z) > 0) lo = mid;
                else hi = mid;
            }
            memcpy(xm, x, sizeof x);
            ref_rk4(xm, hi);
            *T = t + hi;
            return 0;
        }
        memcpy(x, y, sizeof x);
        t += h;
        c0 = c1;
        if (fabs(x[0]) > 1.5 || fabs(x[1]) > 1.5) return -1;
    }
    return -1;
}

/* The Poincaré map on the section just after an impact, z = (p1, w1, w2) with p2 = 2γ − p1. */
static const double REF_H = 1e-3;
static int ref_poincare(const double z[3], double out[3], double *T)
{
    double x[4] = {z[0], 2 * GAM - z[0], z[1], z[2]}, xm[4], xp[4], t;
    if (ref_stride(x, REF_H, xm, &t, NULL)) return -1;
    ref_impact(xm, xp);
    out[0] = xp[0]; out[1] = xp[2]; out[2] = xp[3];
    if (T) *T = t;
    return 0;
}

static int solve3(double Jm[3][3], const double r[3], double d[3])
{
    double a[3][4];
    for (int i = 0; i < 3; i++) { for (int j = 0; j < 3; j++) a[i][j] = Jm[i][j]; a[i][3] = r[i]; }
    for (int c = 0; c < 3; c++) {
        int p = c;
        for (int i = c + 1; i < 3; i++) if (fabs(a[i][c]) > fabs(a[p][c])) p = i;
        if (fabs(a[p][c]) < 1e-14) return -1;
        for (int j = 0; j < 4; j++) { double t = a[c][j]; a[c][j] = a[p][j]; a[p][j] = t; }
        for (int i = 0; i < 3; i++)
            if (i != c) {
                double f = a[i][c] / a[c][c];
                for (int j = 0; j < 4; j++) a[i][j] -= f * a[c][j];
            }
    }
    for (int i = 0; i < 3; i++) d[i] = a[i][3] / a[i][i];
    return 0;
}

/* Eigenvalue moduli of a 3 × 3 matrix: the roots of its characteristic polynomial
 * λ³ − c2 λ² + c1 λ − c0 (one real root by bisection, the other two from the quadratic left). */
static void eig3_moduli(double Jm[3][3], double mod[3])
{
    double c2 = Jm[0][0] + Jm[1][1] + Jm[2][2];
    double c1 = Jm[0][0] * Jm[1][1] - Jm[0][1] * Jm[1][0] + Jm[0][0] * Jm[2][2] - Jm[0][2] * Jm[2][0]
              + Jm[1][1] * Jm[2][2] - Jm[1][2] * Jm[2][1];
    double c0 = Jm[0][0] * (Jm[1][1] * Jm[2][2] - Jm[1][2] * Jm[2][1]) - Jm[0][1] * (Jm[1][0] * Jm[2][2] - Jm[1][2] * Jm[2][0])
              + Jm[0][2] * (Jm[1][0] * Jm[2][1] - Jm[1][1] * Jm[2][0]);
    double bound = 1 + fabs(c2) + fabs(c1) + fabs(c0), lo = -bound, hi = bound;
    for (int k = 0; k < 200; k++) {   /* p(lo) < 0 < p(hi) */
        double mid = 0.5 * (lo + hi), p = ((mid - c2) * mid + c1) * mid - c0;
        if (p < 0) lo = mid; else hi = mid;
    }
    double r = 0.5 * (lo + hi);
    /* λ³ − c2 λ² + c1 λ − c0 = (λ − r)(λ² + b λ + c) */
    double b = r - c2, c = c1 + r * b, disc = b * b - 4 * c;
    mod[0] = fabs(r);
    if (disc >= 0) {
        mod[1] = fabs((-b + sqrt(disc)) / 2);
        mod[2] = fabs((-b - sqrt(disc)) / 2);
    } else {
        mod[1] = mod[2] = sqrt(c);
    }
}

/* The same impact solved another way: the walker free in the plane, r = (hip x, hip y, p1, p2),
 * M_r (r⁺' − r⁻') = J_fᵀ Λ and J_f r⁺' = 0 for the landing foot f = hip − l (sin p2, cos p2): a
 * plastic impact in generalised coordinates (Hurmuzlu and Marghitu 1994), a 6 × 6 linear system.
 * Returns the rates after (new stance, new swing), the impulse Λ in the slope's axes (along, normal)
 * and the trailing foot's normal velocity after. */
static void ref_impact_plastic(const double xm[4], double w[2], double lam[2], double *trail_vn)
{
    double s1 = sin(xm[0]), c1 = cos(xm[0]), s2 = sin(xm[1]), c2 = cos(xm[1]);
    /* Jacobians (2 × 4, row-major) of the hip, the two leg masses and the landing foot */
    double Jh[8] = {1, 0, 0, 0, 0, 1, 0, 0};
    double J1[8] = {1, 0, -B * c1, 0, 0, 1, B * s1, 0};
    double J2[8] = {1, 0, 0, -B * c2, 0, 1, 0, B * s2};
    double Jf[8] = {1, 0, 0, -L * c2, 0, 1, 0, L * s2};
    const double *Js[3] = {Jh, J1, J2}, mass[3] = {MH, M, M};
    double rd[4] = {L * xm[2] * c1, -L * xm[2] * s1, xm[2], xm[3]};   /* the hip moves about the stance foot */
    double a[6][7] = {{0}};
    for (int i = 0; i < 4; i++)
        for (int j = 0; j < 4; j++)
            for (int b = 0; b < 3; b++) a[i][j] += mass[b] * (Js[b][i] * Js[b][j] + Js[b][4 + i] * Js[b][4 + j]);
    for (int i = 0; i < 4; i++) {
        for (int j = 0; j < 4; j++) a[i][6] += a[i][j] * rd[j];
        a[i][4] = -Jf[i];
        a[i][5] = -Jf[4 + i];
        a[4][i] = Jf[i];
        a[5][i] = Jf[4 + i];
    }
    for (int c = 0; c < 6; c++) {   /* Gauss-Jordan with partial pivoting */
        int p = c;
        for (int i = c + 1; i < 6; i++) if (fabs(a[i][c]) > fabs(a[p][c])) p = i;
        for (int j = 0; j < 7; j++) { double t = a[c][j]; a[c][j] = a[p][j]; a[p][j] = t; }
        for (int i = 0; i < 6; i++)
            if (i != c) {
                double f = a[i][c] / a[c][c];
                for (int j = 0; j < 7; j++) a[i][j] -= f * a[c][j];
            }
    }
    double r[6];
    for (int i = 0; i < 6; i++) r[i] = a[i][6] / a[i][i];
    w[0] = r[3];   /* leg 2 is the new stance leg */
    w[1] = r[2];
    /* the slope's axes: along (cos γ, −sin γ), normal (sin γ, cos γ) */
    lam[0] = r[4] * cos(GAM) - r[5] * sin(GAM);
    lam[1] = r[4] * sin(GAM) + r[5] * cos(GAM);
    double vt[2] = {r[0] - L * r[2] * c1, r[1] + L * r[2] * s1};   /* the old stance foot, hip − l (sin p1, cos p1) */
    *trail_vn = vt[0] * sin(GAM) + vt[1] * cos(GAM);
}

typedef struct ref_cycle {
    double x[4];            /* just after an impact: p1, p2, w1, w2 */
    double xm[4];           /* just before the next */
    double T;               /* step period (s) */
    double step;            /* step length along the slope, 2 l sin((p2 − p1) / 2) (m) */
    double ke_loss;         /* kinetic energy lost at each impact (J) */
    double eig[3];          /* moduli of the Poincaré map's eigenvalues */
    double dip;             /* least swing-foot clearance during a step (m, < 0: scuffing) */
    double residual;        /* |P(z) − z| at the fixed point */
} ref_cycle;

/* Newton on P(z) − z with a forward-difference Jacobian, from a guess near Goswami's 3° cycle. */
static int ref_fixed_point(ref_cycle *c)
{
    double z[3] = {-0.2, 1.0, 0.4}, Pz[3], Jm[3][3];
    for (int it = 0; it < 20; it++) {
        if (ref_poincare(z, Pz, NULL)) return -1;
        double r[3] = {Pz[0] - z[0], Pz[1] - z[1], Pz[2] - z[2]};
        c->residual = fmax(fabs(r[0]), fmax(fabs(r[1]), fabs(r[2])));
        if (c->residual < 1e-11) break;
        for (int j = 0; j < 3; j++) {
            double zj[3] = {z[0], z[1], z[2]}, Pj[3], e = 1e-7;
            zj[j] += e;
            if (ref_poincare(zj, Pj, NULL)) return -1;
            for (int i = 0; i < 3; i++) Jm[i][j] = (Pj[i] - Pz[i]) / e - (i == j);
        }
        double d[3];
        if (solve3(Jm, r, d)) return -1;
        for (int i = 0; i < 3; i++) z[i] -= d[i];
    }
    /* the map's own Jacobian at the fixed point (central differences) */
    for (int j = 0; j < 3; j++) {
        double zp[3] = {z[0], z[1], z[2]}, zm[3] = {z[0], z[1], z[2]}, Pp[3], Pm[3], e = 1e-6;
        zp[j] += e;
        zm[j] -= e;
        if (ref_poincare(zp, Pp, NULL) || ref_poincare(zm, Pm, NULL)) return -1;
        for (int i = 0; i < 3; i++) Jm[i][j] = (Pp[i] - Pm[i]) / (2 * e);
    }
    eig3_moduli(Jm, c->eig);
    double x[4] = {z[0], 2 * GAM - z[0], z[1], z[2]}, xp[4];
    memcpy(c->x, x, sizeof x);
    if (ref_stride(x, REF_H, c->xm, &c->T, &c->dip)) return -1;
    ref_impact(c->xm, xp);
    c->step = 2 * L * sin(0.5 * (x[1] - x[0]));
    c->ke_loss = ref_energy(c->xm) - ref_energy(xp);
    return 0;
}

/* ---- the engine ---- */

/* World = the slope's frame: x down the slope, z its normal, gravity g (sin γ, 0, −cos γ). A leg's
 * angle from the slope's normal is ψ = p − γ. The root is the URDF's own planar joint
 * "floating_base" (normal y, so q = [z x cos θ sin θ], src/model/model.c) with θ the left leg's ψ
 * (the left leg is welded to the hip) and v = [v·z_b, v·x_b, θ̇] in the hip's frame; the right leg's
 * ψ is θ + q[4]. */
static const double TRACK = 0.1;                        /* the feet's points at y = ±TRACK */
static const double STONE_HALF[3] = {0.15, 0.05, 0.025};

typedef struct walker {
    mbs_model *m;
    mbs_data *d;
    mbs_system *s;
    mbs_stepper *st;
} walker;

static void walker_free(walker *w)
{
    mbs_stepper_free(w->st);
    mbs_system_free(w->s);
    mbs_data_free(w->d);
    mbs_model_free(w->m);
}

/* The walker with its feet's contact points on their tracks (left: contact 0 at y = +TRACK), a floor
 * 5 cm below the stones' tops (z = 0) and n stones at x0 + k · step, k = 0 .. n − 1, on the left
 * track for even k: the swing foot leaves one stone, dips over the gap around the stance foot's stone
 * (on the other track) and lands on the next. */
static int walker_new(walker *w, double x0, double step, int n)
{
    mbs_error err;
    mbs_urdf_options uo = {.floating_base = MBS_ROOT_FIXED};
    memset(w, 0, sizeof *w);
    w->m = mbs_model_from_urdf(tm_path("urdf/compass_gait.urdf"), &uo, &err);
    if (!w->m) { fprintf(stderr, "%s\n", err.msg); return -1; }
    double g[3] = {G * sin(GAM), 0, -G * cos(GAM)};
    mbs_model_set_gravity(w->m, g);
    w->d = mbs_data_new(w->m);
    w->s = mbs_system_new(w->m, 2, &err);
    double left[3] = {0, TRACK, -L}, right[3] = {0, -TRACK, -L}, up[3] = {0, 0, 1};
    if (!w->d || !w->s || mbs_system_add_contact(w->s, "left_leg", left, 0, &err) != 0 ||
        mbs_system_add_contact(w->s, "right_leg", right, 0, &err) != 1) { fprintf(stderr, "%s\n", err.msg); return -1; }
    mbs_material mat = {0, 0, 0, 0, 1};
    static const double I3[9] = {1, 0, 0, 0, 1, 0, 0, 0, 1};
    if (mbs_system_add_plane(w->s, up, -2 * STONE_HALF[2], &mat, &err) != MBS_OK) return -1;
    for (int k = 0; k < n; k++) {
        double c[3] = {x0 + k * step, k % 2 == 0 ? TRACK : -TRACK, -STONE_HALF[2]};
        if (mbs_system_add_box(w->s, c, I3, STONE_HALF, &mat, &err) != MBS_OK) { fprintf(stderr, "%s\n", err.msg); return -1; }
    }
    mbs_system_finalize(w->s, NULL);
    w->st = mbs_stepper_new("rigid", w->s, NULL, 0, &err);
    if (!w->st) { fprintf(stderr, "%s\n", err.msg); return -1; }
    return 0;
}

/* The engine state of the reference state x (stance leg left or right), the stance foot at (xf, 0). */
static void to_engine(const double x[4], int stance_left, double xf, double q[5], double v[4])
{
    double ps = x[0] - GAM, pw = x[1] - GAM;
    double th = stance_left ? ps : pw, wl = stance_left ? x[2] : x[3], wr = stance_left ? x[3] : x[2];
    double hx = xf + L * sin(ps), hz = L * cos(ps);              /* hip */
    double Vx = L * x[2] * cos(ps), Vz = -L * x[2] * sin(ps);    /* its velocity */
    q[0] = hz;
    q[1] = hx;
    q[2] = cos(th);
    q[3] = sin(th);
    q[4] = stance_left ? pw - ps : ps - pw;
    v[0] = Vx * sin(th) + Vz * cos(th);
    v[1] = Vx * cos(th) - Vz * sin(th);
    v[2] = wl;
    v[3] = wr - wl;
}

/* The reference state (angles from the vertical, rates) of the engine's (q, v), stance leg given
 * (the stance foot taken at rest). */
static void to_ref(const double *q, const double *v, int stance_left, double x[4])
{
    double th = atan2(q[3], q[2]), pl = th + GAM, pr = th + q[4] + GAM, wl = v[2], wr = v[2] + v[3];
    x[0] = stance_left ? pl : pr;
    x[1] = stance_left ? pr : pl;
    x[2] = stance_left ? wl : wr;
    x[3] = stance_left ? wr : wl;
}

/* The reference's fixed point, found once. */
static ref_cycle cyc;
static int cyc_ok;

static void test_reference_cycle(void)
{
    cyc_ok = ref_fixed_point(&cyc) == 0;
    CHECK(cyc_ok, "no fixed point");
    if (!cyc_ok) return;
    printf("  fixed point just after an impact: stance %.6f, swing %.6f rad from the vertical (%.6f, %.6f from the "
           "slope's normal), rates %.6f %.6f rad/s; |P(z) - z| = %.1e\n", cyc.x[0], cyc.x[1], cyc.x[0] - GAM,
           cyc.x[1] - GAM, cyc.x[2], cyc.x[3], cyc.residual);
    printf("  period %.6f s, step %.6f m (%.4f m/s), an impact loses %.6f J of %.6f (%.4f), swing foot down to %.2f mm "
           "below the slope, |eigenvalues| %.4f %.4f %.4f\n", cyc.T, cyc.step, cyc.step / cyc.T, cyc.ke_loss,
           ref_energy(cyc.xm), cyc.ke_loss / ref_energy(cyc.xm), -1e3 * cyc.dip, cyc.eig[0], cyc.eig[1], cyc.eig[2]);
    CHECK(cyc.residual < 1e-9, "residual %g", cyc.residual);
    CHECK(fmax(cyc.eig[0], fmax(cyc.eig[1], cyc.eig[2])) < 1, "unstable cycle: |eig| %g %g %g", cyc.eig[0], cyc.eig[1],
          cyc.eig[2]);
    /* the classic gait: the stance leg rotates forward, the swing leg keeps rotating backward just
     * after the impact (its foot lifts off: ψ̇ of the leg > 0 with the foot behind), the legs 0.54 rad
     * apart at impact */
    CHECK(cyc.x[2] > 0 && cyc.x[3] > 0 && fabs(cyc.x[1] - cyc.x[0] - 0.5426) < 1e-3, "cycle %g %g %g %g", cyc.x[0],
          cyc.x[1], cyc.x[2], cyc.x[3]);
    /* the swing foot does pass below the slope (the scuffing the stones let it clear) */
    CHECK(cyc.dip < -1e-3, "dip %g", cyc.dip);
    /* RK4's own error: the same stride at half the step agrees to 1e-9 */
    double xm[4], T = 0;
    CHECK(ref_stride(cyc.x, REF_H / 2, xm, &T, NULL) == 0 && fabs(T - cyc.T) < 1e-9 && fabs(xm[2] - cyc.xm[2]) < 1e-9,
          "RK4 step: period %.12g vs %.12g", T, cyc.T);
    /* the angular-momentum impact map against the plastic impact in generalised coordinates: the same
     * rates; the impulse pushes (Λ_n > 0) within the friction cone of the scenario's μ = 1, and the
     * trailing foot leaves the ground (the assumption of both) */
    double wp[2], lam[2], vn;
    ref_impact_plastic(cyc.xm, wp, lam, &vn);
    printf("  plastic impact: rates %.9f %.9f rad/s, impulse %.4f N s along the normal, %.4f along the slope "
           "(ratio %.3f), trailing foot leaves at %.4f m/s\n", wp[0], wp[1], lam[1], lam[0], lam[0] / lam[1], vn);
    CHECK(fabs(wp[0] - cyc.x[2]) < 1e-12 && fabs(wp[1] - cyc.x[3]) < 1e-12, "plastic impact %.12g %.12g, map %.12g %.12g",
          wp[0], wp[1], cyc.x[2], cyc.x[3]);
    CHECK(lam[1] > 0 && fabs(lam[0]) < lam[1] && vn > 0, "impulse %g %g, trailing foot %g m/s", lam[0], lam[1], vn);
}

typedef struct gait {
    int landings, touchdowns, off_stone;
    double map_rate, map_energy;        /* worst |engine − reference impact map| at each landing */
    double cycle_rate, period, step;    /* worst |engine − limit cycle| */
    double map_rel_energy;              /* worst |lost − map's| / map's */
} gait;

/* The engine walks `steps` steps at the fixed step h from the fixed point (left stance, left foot at
 * x = 0). At each landing: the rates just after it against the reference impact map of the engine's
 * own state just before it, the energy lost against the map's, and the rates, step period and step
 * length against the limit cycle's. */
static int walk(double h, int steps, gait *gs, int print)
{
    memset(gs, 0, sizeof *gs);
    walker w;
    if (walker_new(&w, 0, cyc.step, steps + 2) != 0) { walker_free(&w); return -1; }
    double q[5], v[4];
    to_engine(cyc.x, 1, 0, q, v);
    mbs_system_set_state(w.s, q, v, 0);
    /* the state is the reference's: the stance foot at rest on its stone, the swing foot on its own */
    mbs_forward_kinematics(w.m, w.d, q, v, NULL);
    double fv[6], fp[3], R[9], off[3] = {0, TRACK, -L}, offr[3] = {0, -TRACK, -L};
    mbs_frame_velocity(w.m, w.d, mbs_frame_id(w.m, "left_leg"), off, MBS_LOCAL_WORLD_ALIGNED, fv);
    CHECK(fabs(fv[0]) < 1e-12 && fabs(fv[2]) < 1e-12, "stance foot moves: %g %g", fv[0], fv[2]);
    mbs_frame_placement(w.m, w.d, mbs_frame_id(w.m, "right_leg"), R, fp);
    double zr = fp[2] + R[6] * offr[0] + R[7] * offr[1] + R[8] * offr[2];
    CHECK(fabs(zr) < 1e-12, "swing foot at z = %g", zr);

    int stance_left = 1, prev_active[2] = {1, 1}, in_impact = 0;
    double t_last = 0, x_last = 0, qpre[5], vpre[4], epre = 0;
    for (long i = 0; i < (long)((steps + 0.5) * cyc.T / h) && gs->landings < steps; i++) {
        const double *qs = mbs_system_q(w.s), *vs = mbs_system_v(w.s);
        double q0[5], v0[4];
        memcpy(q0, qs, sizeof q0);
        memcpy(v0, vs, sizeof v0);
        int rc = mbs_stepper_step(w.st, h, NULL);
        CHECK(rc == MBS_OK, "step: %s", mbs_stepper_last_error(w.st)->msg);
        if (rc != MBS_OK) break;
        /* gravity changes a rate by < 25 h rad/s a step (2.5e-3 at h = 1e-4); an impact by ~0.5,
         * spread over one or two steps by the impact model's c = −gap/h (a point may close its gap
         * within the step, not more) */
        double dwl = fabs(vs[2] - v0[2]), dwr = fabs(vs[2] + vs[3] - v0[2] - v0[3]);
        int jump = fmax(dwl, dwr) > 1e-2 + 40 * h;
        if (jump && !in_impact) {
            /* just before the impact: this step's initial rates at the configuration it moved to
             * (eq. 1 moves q with the old v, then the impulse acts on the velocity); the energy,
             * kinetic and potential, at its start */
            memcpy(qpre, qs, sizeof qpre);
            memcpy(vpre, v0, sizeof vpre);
            epre = mbs_kinetic_energy(w.m, w.d, q0, v0) + mbs_potential_energy(w.m, w.d, q0);
        }
        if (!jump && in_impact) {
            /* the impact is over, (q0, v0) just after it; the swing leg is the new stance leg */
            stance_left = !stance_left;
            gs->landings++;
            double t = mbs_system_time(w.s) - h;
            mbs_contact_info ci;
            mbs_system_contact(w.s, stance_left ? 0 : 1, &ci);
            double pre[4], post[4], pred[4];
            to_ref(qpre, vpre, !stance_left, pre);
            to_ref(q0, v0, stance_left, post);
            ref_impact(pre, pred);
            /* potential energy included, so that gravity's work over the impact's steps cancels */
            double lost = epre - mbs_kinetic_energy(w.m, w.d, q0, v0) - mbs_potential_energy(w.m, w.d, q0);
            double lost_ref = ref_energy(pre) - ref_energy(pred);
            if (print)
                printf("    landing %d at t %.4f s, x %.4f m: rates %.5f %.5f rad/s (the map of the state before: "
                       "%.5f %.5f; the cycle: %.5f %.5f), energy lost %.4f J (map %.4f, cycle %.4f)\n", gs->landings, t,
                       ci.position[0], post[2], post[3], pred[2], pred[3], cyc.x[2], cyc.x[3], lost, lost_ref,
                       cyc.ke_loss);
            gs->map_rate = fmax(gs->map_rate, fmax(fabs(post[2] - pred[2]), fabs(post[3] - pred[3])));
            gs->cycle_rate = fmax(gs->cycle_rate, fmax(fabs(post[2] - cyc.x[2]), fabs(post[3] - cyc.x[3])));
            gs->period = fmax(gs->period, fabs(t - t_last - cyc.T));
            gs->step = fmax(gs->step, fabs(ci.position[0] - x_last - cyc.step));
            gs->map_energy = fmax(gs->map_energy, fabs(lost - lost_ref));
            gs->map_rel_energy = fmax(gs->map_rel_energy, fabs(lost - lost_ref) / lost_ref);
            /* on its stone: the k-th landing on the stone at k · step */
            if (fabs(ci.position[0] - gs->landings * cyc.step) > STONE_HALF[0] || fabs(ci.position[2]) > 1e-6 ||
                (ci.position[1] > 0) != stance_left)
                gs->off_stone++;
            t_last = t;
            x_last = ci.position[0];
        }
        in_impact = jump;
        for (int k = 0; k < 2; k++) {
            mbs_contact_info ci;
            mbs_system_contact(w.s, k, &ci);
            if (ci.active && !prev_active[k]) gs->touchdowns++;
            prev_active[k] = ci.active;
        }
    }
    walker_free(&w);
    return 0;
}

/* The engine against the reference, from the fixed point, at h = 1e-4 s. The rigid stepper is first
 * order: each landing's state is known to O(h) (the impact spreads over one or two steps, over which
 * gravity and the stance change the rates by ~25 h rad/s, 2.5e-3 rad/s, a step), so the tolerances
 * are 50 h on the rates (5e-3 rad/s, 0.5 % of the stance rate), and the rates' error δw moves the
 * kinetic energy after the impact by ~(M w)·δw ≈ 10 kg·m² × 1 rad/s × δw, 0.05 J (0.9 % of the
 * 5.5 J lost). The period is counted in steps and its error is a few h: 10 h; the step length, the
 * walker moving at 0.73 m/s, to 10 h × 1 m/s. At 2h every error about doubles: first order. */
static void test_engine_gait(void)
{
    if (!cyc_ok) return;
    enum { STEPS = 12 };
    const double h = 1e-4;
    gait g1, g2;
    CHECK(walk(h, STEPS, &g1, 1) == 0, "walker");
    CHECK(walk(2 * h, STEPS, &g2, 0) == 0, "walker");
    printf("  h = %g s: %d landings, %d touchdowns; worst error against the impact map: rates %.2e rad/s, energy lost "
           "%.2e J (%.2f %%); against the cycle: rates %.2e rad/s, period %.2e s, step %.2e m\n", h, g1.landings,
           g1.touchdowns, g1.map_rate, g1.map_energy, 100 * g1.map_rel_energy, g1.cycle_rate, g1.period, g1.step);
    printf("  h = %g s: against the impact map: rates %.2e rad/s, energy lost %.2e J; against the cycle: rates %.2e rad/s, "
           "period %.2e s, step %.2e m\n", 2 * h, g2.map_rate, g2.map_energy, g2.cycle_rate, g2.period, g2.step);
    CHECK(g1.landings == STEPS, "%d landings of %d", g1.landings, STEPS);
    /* every touchdown is a landing: the swing foot never touched a stone or the floor mid-stride */
    CHECK(g1.touchdowns == g1.landings, "%d touchdowns for %d landings (scuffing)", g1.touchdowns, g1.landings);
    CHECK(g1.off_stone == 0, "%d landings off their stones", g1.off_stone);
    CHECK(g1.map_rate < 50 * h, "rates after the impact off the map's by %g rad/s", g1.map_rate);
    CHECK(g1.map_energy < 0.05, "energy lost off the map's by %g J", g1.map_energy);
    CHECK(g1.cycle_rate < 50 * h, "rates after the impact off the cycle's by %g rad/s", g1.cycle_rate);
    CHECK(g1.period < 10 * h, "period off by %g s", g1.period);
    CHECK(g1.step < 10 * h, "step length off by %g m", g1.step);
    CHECK(g2.landings == STEPS && g2.touchdowns == g2.landings && g2.off_stone == 0, "at 2h: %d landings, %d touchdowns",
          g2.landings, g2.touchdowns);
    /* first order: the impact's error grows with the step */
    CHECK(g2.map_rate > 1.3 * g1.map_rate && g2.map_rate < 3 * g1.map_rate, "rate error %g at h, %g at 2h", g1.map_rate,
          g2.map_rate);
}

/* scenarios/compass_gait.ini: the walker starts at rest (no key sets a file-defined planar root's
 * velocity) with the swing leg kicked forward; its stones sit at the footholds the reference walks to
 * from that state. The first 5 s: seven landings, each on its stone, within a few mm of the
 * reference's footholds. */
typedef struct landing_log {
    mbs_system *s;
    int prev[2], n;
    double x[16];
    int left[16];
} landing_log;

static void log_landings(void *user, double t, const double *q, const double *v, double *tau)
{
    (void)t; (void)q; (void)v; (void)tau;
    landing_log *lg = user;
    for (int k = 0; k < 2; k++) {
        mbs_contact_info ci;
        mbs_system_contact(lg->s, k, &ci);
        if (ci.active && !lg->prev[k] && lg->n < 16) {
            lg->x[lg->n] = ci.position[0];
            lg->left[lg->n++] = k == 0;
        }
        lg->prev[k] = ci.active;
    }
}

static void test_scenario(void)
{
    mbs_error err;
    const char *sets[] = {"run.duration=5"};
    mbs_scenario *sc = mbs_scenario_load(tm_path("scenarios/compass_gait.ini"), sets, 1, &err);
    CHECK(sc != NULL, "load: %s", err.msg);
    if (!sc) return;
    mbs_sim *sim = mbs_sim_new(sc, &err);
    CHECK(sim != NULL, "sim: %s", err.msg);
    if (!sim) { mbs_scenario_free(sc); return; }
    landing_log lg = {mbs_sim_system(sim), {1, 1}, 0, {0}, {0}};
    mbs_sim_set_control(sim, log_landings, &lg);
    /* the reference from the scenario's initial state: left stance, its foot at x = 0 */
    const double *q0 = mbs_scenario_q0(sc), *v0 = mbs_scenario_v0(sc);
    double x[4], ref[16] = {0}, foot = -sin(atan2(q0[3], q0[2])) + q0[1];
    to_ref(q0, v0, 1, x);
    CHECK(fabs(foot) < 1e-12 && q0[0] == 0 && q0[1] == 0 && q0[2] == 1 && v0[0] == 0 && v0[1] == 0 && v0[2] == 0,
          "the hip starts at rest at the origin, the left leg along −z");
    int nref = 0;
    for (; nref < 16; nref++) {
        double xm[4], T;
        if (ref_stride(x, REF_H, xm, &T, NULL)) break;
        foot += 2 * L * sin(0.5 * (xm[0] - xm[1]));
        ref[nref] = foot;
        ref_impact(xm, x);
    }
    mbs_sim_summary sum;
    int rc = mbs_sim_run(sim, NULL, &sum, &err);
    CHECK(rc == MBS_OK && !sum.diverged, "run: %s %s", err.msg, sum.reason);
    /* the stones: the first at the start's stance foot, then one at each of the reference's footholds */
    const mbs_environment *env = mbs_system_environment(lg.s);
    CHECK(env->nboxes >= 11 && fabs(env->boxes[0].center[0]) < 1e-9, "%d stones", env->nboxes);
    double worst_stone = 0, worst_ref = 0;
    for (int k = 1; k < env->nboxes && k <= nref; k++)
        worst_stone = check_worst(worst_stone, fabs(env->boxes[k].center[0] - ref[k - 1]));
    for (int k = 0; k < env->nboxes; k++)   /* tops at the stance foot's level, z = −l */
        worst_stone = check_worst(worst_stone, fabs(env->boxes[k].center[2] + env->boxes[k].half[2] + L));
    int on = 0;
    for (int i = 0; i < lg.n; i++) {
        worst_ref = check_worst(worst_ref, fabs(lg.x[i] - ref[i]));
        const mbs_box *b = &env->boxes[i + 1];
        on += fabs(lg.x[i] - b->center[0]) < b->half[0] && lg.left[i] == (b->center[1] > 0) && lg.left[i] == (i % 2 == 1);
    }
    printf("  scenario, first %.0f s: %d landings (%ld touchdowns), %d on their stones; footholds within %.2f mm of the "
           "reference's, stones within %.2f mm\n", sum.sim_time, lg.n, sum.touchdowns, on, 1e3 * worst_ref,
           1e3 * worst_stone);
    CHECK(lg.n == 7 && sum.touchdowns == 7 && on == 7, "%d landings, %ld touchdowns, %d on stones", lg.n, sum.touchdowns,
          on);
    CHECK(worst_stone < 1e-4, "stones off the reference's footholds by %g m", worst_stone);
    /* the footholds' error accumulates over the steps at O(h) each (h = 1e-4 s): 1 cm */
    CHECK(worst_ref < 0.01, "footholds off the reference's by %g m", worst_ref);
    mbs_sim_free(sim);
    mbs_scenario_free(sc);
}

/* The swing phase as a fixed-base tree (tests/models/compass_swing.urdf: the stance foot pinned):
 * from the cycle's state after an impact, RK4 at 1 ms keeps the total energy to 1e-6 of itself over
 * the step time, and the engine's dynamics bring the swing foot back to the slope at the reference's
 * step length, which its own equations of motion gave. */
static void test_swing_energy(void)
{
    if (!cyc_ok) return;
    mbs_error err;
    mbs_urdf_options uo = {.floating_base = 0};
    mbs_model *m = mbs_model_from_urdf(tm_path("tests/models/compass_swing.urdf"), &uo, &err);
    CHECK(m != NULL, "load: %s", err.msg);
    if (!m) return;
    double g[3] = {G * sin(GAM), 0, -G * cos(GAM)};
    mbs_model_set_gravity(m, g);
    mbs_system *s = mbs_system_new(m, 0, &err);
    mbs_system_finalize(s, NULL);
    mbs_stepper *st = mbs_stepper_new("rk4", s, NULL, 0, &err);
    mbs_data *d = mbs_data_new(m);
    /* the stance angle from the slope's normal, the hip's relative angle and their rates */
    double q[2] = {cyc.x[0] - GAM, cyc.x[1] - cyc.x[0]}, v[2] = {cyc.x[2], cyc.x[3] - cyc.x[2]};
    mbs_system_set_state(s, q, v, 0);
    double E0 = mbs_kinetic_energy(m, d, q, v) + mbs_potential_energy(m, d, q), worst = 0;
    int n = (int)ceil(cyc.T / 1e-3);
    for (int k = 0; k < n; k++) {
        mbs_stepper_step(st, cyc.T / n, NULL);
        const double *x = mbs_system_q(s), *w = mbs_system_v(s);
        worst = check_worst(worst, fabs(mbs_kinetic_energy(m, d, x, w) + mbs_potential_energy(m, d, x) - E0) / fabs(E0));
    }
    const double *x = mbs_system_q(s);
    double zf = cos(x[0]) - cos(x[0] + x[1]), xf = sin(x[0]) - sin(x[0] + x[1]);
    printf("  swing phase, rk4 at %.3g ms: energy within %.2g of itself; the swing foot back at %.2g m above the slope, "
           "%.6f m ahead (the reference's step %.6f m)\n", 1e3 * cyc.T / n, worst, zf, xf, cyc.step);
    CHECK(worst < 1e-6, "energy drift %g", worst);
    CHECK(fabs(zf) < 1e-5 && fabs(xf - cyc.step) < 1e-5, "swing foot at %g, %g (step %g)", zf, xf, cyc.step);
    mbs_data_free(d);
    mbs_stepper_free(st);
    mbs_system_free(s);
    mbs_model_free(m);
}

int main(void)
{
    RUN(test_reference_cycle);
    RUN(test_engine_gait);
    RUN(test_swing_energy);
    RUN(test_scenario);
    return check_summary("test_compass_gait");
}
