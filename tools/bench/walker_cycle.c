/* walker_cycle.c — limit-cycle search for the 3D passive walker (urdf/passive_walker.urdf) in mbs's
 * rigid-contact stepper; docs/passive_walker.md explains the conventions and the results.
 *
 * Build and run (from the repository root, after make):
 *   make build/tools/walker_cycle   (make test builds it too)
 *   export OPENBLAS_NUM_THREADS=1 GSIGN=-1
 *   MIRROR=1 HS=-1 DT=2e-4 EPS=1e-3 MAXSTEP=0.05 build/tools/walker_cycle ntd 15     # Newton from the A.3 state
 *   ... Z0="<7 numbers of the last iterate>" MAXSTEP=0.1 build/tools/walker_cycle ntd 40
 *   X0="roll pitch yaw 0 wx wy wz qd" build/tools/walker_cycle sim 20                  # simulate, list touchdowns
 *       (each touchdown is marked STEP — the foot lands ahead, toward -x, of the other foot and
 *       alternates with the previous step — or stub; the run stops when the hip drops below 0.6;
 *       the last line is "SUMMARY real_steps N stubs M ...")
 *   READING=out MIRROR=1 HS=-1 DT=5e-4 build/tools/walker_cycle sim 20                 # another reading of the table
 *   X0="..." build/tools/walker_cycle ini                                             # [model] lines of a scenario
 *   STONES=file FLOOR=-0.1 X0="..." build/tools/walker_cycle sim 60                   # on stepping stones (§5 of the doc):
 *       solid boxes read from `file` ("box = cx cy cz hx hy hz [yaw]" lines, as in a scenario, e.g.
 *       scenarios/passive_walker.ini itself) and the floor plane at z = FLOOR (default 0); each
 *       touchdown line also gives where that foot lifted off and the lowest point of its rim in
 *       the swing; PRINTSEC=1 also prints the touchdown sections and the mid-swing sections
 *       ("S0 ...", left stance, hip crossing 0) that `newton`/`cyc` take as S0:
 *   S0="<7 numbers>" EPS=1e-3 DT=2e-4 build/tools/walker_cycle newton 3                # mid-swing map: fixed point, eigenvalues
 *   DT=1e-3 OUT=scenarios/passive_walker_cycle.ini build/tools/walker_cycle cycle 3     # the stable cycle's state just after a
 *       left touch-down (Newton on the mid-swing map, then on to the touch-down; §6 of the doc) as a
 *       scenario's [model] lines, written into OUT between "; begin cycle state" and "; end cycle state"
 *
 * Section (post-touchdown, left leg = stance = root): x = (roll, pitch, yaw, q_hip, wx, wy, wz, qd_hip),
 * R_left = Rz(yaw) Ry(pitch) Rx(roll) (the scenario's base_rpy), w the left leg's WORLD angular
 * velocity; the left rim touches the ground at the origin and rolls without slip; q_hip is solved
 * so that the right rim touches too (trailing leg behind, at +x). The map runs to the next landing
 * of the right foot (after its impulse) and mirrors the state in y (right leg -> left leg).
 * Environment knobs: URDF (default urdf/passive_walker.urdf), GSIGN (-1: gravity toward -x, the
 * direction of travel), DT, MIRROR/HS/VS (how the A.3 state of passive_walker_params.md is read),
 * ZCM/YCM (override the COM numbers in the URDF text), STONES/FLOOR/PRINTSEC (above), VERB, READING (moby | out | in: how the leg
 * COM and inertia of the parameter table are read, see set_reading; with out/in also XSIGN, ZCMA,
 * LATCM), VS (scales the A.3 rates). */
#include <math.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <lapacke.h>
#include "mbs/contact.h"
#include "mbs/dynamics.h"
#include "mbs/model.h"
#include "mbs/step.h"

#define RR 0.1236
#define WW 0.3624
static double ALPHA = 0.0702, GSIGN = -1, DT = 1e-3;
static mbs_model *M;
static mbs_data *D;

static void m3mul(const double A[3][3], const double B[3][3], double C[3][3])
{
    for (int i = 0; i < 3; i++)
        for (int j = 0; j < 3; j++) C[i][j] = A[i][0] * B[0][j] + A[i][1] * B[1][j] + A[i][2] * B[2][j];
}
static void rotx(double a, double R[3][3]) { double c = cos(a), s = sin(a); double T[3][3] = {{1, 0, 0}, {0, c, -s}, {0, s, c}}; memcpy(R, T, sizeof T); }
static void roty(double a, double R[3][3]) { double c = cos(a), s = sin(a); double T[3][3] = {{c, 0, s}, {0, 1, 0}, {-s, 0, c}}; memcpy(R, T, sizeof T); }
static void rotz(double a, double R[3][3]) { double c = cos(a), s = sin(a); double T[3][3] = {{c, -s, 0}, {s, c, 0}, {0, 0, 1}}; memcpy(R, T, sizeof T); }
static void rpy2R(double r, double p, double y, double R[3][3])
{
    double X[3][3], Y[3][3], Z[3][3], T[3][3];
    rotx(r, X); roty(p, Y); rotz(y, Z);
    m3mul(Z, Y, T); m3mul(T, X, R);
}
static void R2rpy(const double R[3][3], double *r, double *p, double *y)
{
    *p = -asin(R[2][0]); *r = atan2(R[2][1], R[2][2]); *y = atan2(R[1][0], R[0][0]);
}
static void R2quat(const double R[3][3], double q[4]) /* x y z w */
{
    double tr = R[0][0] + R[1][1] + R[2][2];
    if (tr > 0) {
        double s = sqrt(tr + 1) * 2;
        q[3] = 0.25 * s; q[0] = (R[2][1] - R[1][2]) / s; q[1] = (R[0][2] - R[2][0]) / s; q[2] = (R[1][0] - R[0][1]) / s;
    } else if (R[0][0] > R[1][1] && R[0][0] > R[2][2]) {
        double s = sqrt(1 + R[0][0] - R[1][1] - R[2][2]) * 2;
        q[3] = (R[2][1] - R[1][2]) / s; q[0] = 0.25 * s; q[1] = (R[0][1] + R[1][0]) / s; q[2] = (R[0][2] + R[2][0]) / s;
    } else if (R[1][1] > R[2][2]) {
        double s = sqrt(1 + R[1][1] - R[0][0] - R[2][2]) * 2;
        q[3] = (R[0][2] - R[2][0]) / s; q[0] = (R[0][1] + R[1][0]) / s; q[1] = 0.25 * s; q[2] = (R[1][2] + R[2][1]) / s;
    } else {
        double s = sqrt(1 + R[2][2] - R[0][0] - R[1][1]) * 2;
        q[3] = (R[1][0] - R[0][1]) / s; q[0] = (R[0][2] + R[2][0]) / s; q[1] = (R[1][2] + R[2][1]) / s; q[2] = 0.25 * s;
    }
}
static void quat2R(const double *q, double R[3][3])
{
    double x = q[0], y = q[1], z = q[2], w = q[3];
    double T[3][3] = {{1 - 2 * (y * y + z * z), 2 * (x * y - z * w), 2 * (x * z + y * w)},
                      {2 * (x * y + z * w), 1 - 2 * (x * x + z * z), 2 * (y * z - x * w)},
                      {2 * (x * z - y * w), 2 * (y * z + x * w), 1 - 2 * (x * x + y * y)}};
    memcpy(R, T, sizeof T);
}
static void cross(const double a[3], const double b[3], double c[3])
{
    c[0] = a[1] * b[2] - a[2] * b[1]; c[1] = a[2] * b[0] - a[0] * b[2]; c[2] = a[0] * b[1] - a[1] * b[0];
}

/* section state x = (roll, pitch, yaw, q_hip, wx, wy, wz, qd_hip): stance (left) leg orientation
 * R = Rz(yaw) Ry(pitch) Rx(roll), its world angular velocity, the hip angle and rate.
 * The left rim touches the ground and rolls; base (foot centre) at x = y = 0. */
static double swing_low(const double *x, double qh)
{
    double R[3][3], Y[3][3], Rr[3][3];
    rpy2R(x[0], x[1], x[2], R);
    roty(qh, Y); m3mul(R, Y, Rr);
    double a[3] = {R[0][1], R[1][1], R[2][1]};
    double cz = RR * sqrt(1 - a[2] * a[2]);
    double c2 = cz + R[2][1] * (-WW / 2) + R[2][2] - WW / 2 * Rr[2][1] - Rr[2][2];
    return c2 - RR * sqrt(1 - Rr[2][1] * Rr[2][1]);
}
/* hip angle in [-1.2, -0.05] with the swing rim touching the ground (trailing leg at +x) */
static double solve_hip(const double *x)
{
    double a = -1.2, b = -0.05, fa = swing_low(x, a), fb = swing_low(x, b);
    if (fa * fb > 0) return NAN;
    for (int i = 0; i < 200; i++) {
        double c = 0.5 * (a + b), fc = swing_low(x, c);
        if (fc * fa > 0) { a = c; fa = fc; } else { b = c; fb = fc; }
    }
    return 0.5 * (a + b);
}
static int SOLVEQ = 1;
static void section_to_state(const double *x, double *q, double *v, double basev_world[6])
{
    double R[3][3];
    rpy2R(x[0], x[1], x[2], R);
    double a[3] = {R[0][1], R[1][1], R[2][1]};
    double u[3] = {-a[2] * a[0], -a[2] * a[1], 1 - a[2] * a[2]};
    double nu = sqrt(u[0] * u[0] + u[1] * u[1] + u[2] * u[2]);
    for (int k = 0; k < 3; k++) u[k] *= RR / nu;   /* contact -> centre */
    q[0] = 0; q[1] = 0; q[2] = u[2];
    R2quat(R, q + 3);
    q[7] = SOLVEQ ? solve_hip(x) : x[3];
    double w[3] = {x[4], x[5], x[6]}, vc[3];
    cross(w, u, vc);
    for (int k = 0; k < 3; k++) {
        v[k] = R[0][k] * vc[0] + R[1][k] * vc[1] + R[2][k] * vc[2];
        v[3 + k] = R[0][k] * w[0] + R[1][k] * w[1] + R[2][k] * w[2];
        if (basev_world) { basev_world[k] = vc[k]; basev_world[3 + k] = w[k]; }
    }
    v[6] = x[7];
}

/* state after a right-foot touchdown -> mirrored section state (the right leg becomes the left) */
static void state_to_section_mirrored(const double *q, const double *v, double *x, double pr[3])
{
    double Rl[3][3], Y[3][3], Rr[3][3];
    quat2R(q + 3, Rl);
    roty(q[7], Y);
    m3mul(Rl, Y, Rr);
    double wl[3], wr[3];
    for (int k = 0; k < 3; k++) wl[k] = Rl[k][0] * v[3] + Rl[k][1] * v[4] + Rl[k][2] * v[5];
    for (int k = 0; k < 3; k++) wr[k] = wl[k] + Rl[k][1] * v[6];
    /* right foot centre */
    if (pr)
        for (int k = 0; k < 3; k++) pr[k] = q[k] + Rl[k][1] * (-WW / 2) + Rl[k][2] * 1 + Rr[k][1] * (-WW / 2) - Rr[k][2];
    double S[3] = {1, -1, 1}, Rm[3][3];
    for (int i = 0; i < 3; i++)
        for (int j = 0; j < 3; j++) Rm[i][j] = S[i] * Rr[i][j] * S[j];
    R2rpy(Rm, &x[0], &x[1], &x[2]);
    x[3] = -q[7];
    x[4] = -wr[0]; x[5] = wr[1]; x[6] = -wr[2];
    x[7] = -v[6];
}

static mbs_system *SYS;
static int NSTONES = 0;
static mbs_stepper *ST;

/* Replace the <inertial> block of link `name` in the URDF text. */
static void set_inertial(char *xml, size_t cap, const char *name, const double c[3], const double In[6])
{
    char key[64], blk[512], *tmp = malloc(cap);
    snprintf(key, sizeof key, "<link name=\"%s\">", name);
    char *a = strstr(xml, key), *b0, *b1;
    if (!a || !(b0 = strstr(a, "<inertial>")) || !(b1 = strstr(b0, "</inertial>"))) { fprintf(stderr, "no inertial for %s\n", name); exit(1); }
    snprintf(blk, sizeof blk, "<inertial>\n      <origin xyz=\"%.17g %.17g %.17g\" rpy=\"0 0 0\"/>\n      <mass value=\"1.0\"/>\n"
             "      <inertia ixx=\"%.17g\" ixy=\"%.17g\" ixz=\"%.17g\" iyy=\"%.17g\" iyz=\"%.17g\" izz=\"%.17g\"/>\n    ",
             c[0], c[1], c[2], In[0], In[3], In[4], In[1], In[5], In[2]);
    snprintf(tmp, cap, "%.*s%s%s", (int)(b0 - xml), xml, blk, b1);
    strcpy(xml, tmp);
    free(tmp);
}
/* READING selects how the parameter table (passive_walker_params.md A.1) is read, for the LEFT leg
 * (the right leg is its mirror in y: com_y, ixy, iyz negated):
 *   moby : as the URDF (COM (0, 0.6969, 0.1901), Iyy = 0.0186): Moby's "ycm lateral" reading;
 *   out  : Coleman's y ALONG the leg, z lateral: COM (0, +LATCM, ZCMA) = 0.1901 outboard, 0.6969 up
 *          the leg; tensor = P I P^T with P swapping y and z: ixx 0.1982, iyy 0.1802, izz 0.0186,
 *          ixy = s*ixz_old, ixz = ixy_old, iyz = s*iyz_old (s = +1 outboard, -1 inboard: Coleman's +z
 *          mapped to our +y or -y; the COM and the products keep the table's relative signs);
 *   in   : the same with the COM 0.1901 inboard (s = -1).
 * XSIGN = -1 also flips x (negates ixy, ixz). ZCMA / LATCM override 0.6969 / 0.1901. */
static void set_reading(char *xml, size_t cap, const char *r)
{
    if (!strcmp(r, "moby")) return;
    double s = !strcmp(r, "out") ? 1 : !strcmp(r, "in") ? -1 : 0;
    if (!s) { fprintf(stderr, "READING must be moby, out or in\n"); exit(1); }
    double xs = getenv("XSIGN") ? atof(getenv("XSIGN")) : 1;
    double zc = getenv("ZCMA") ? atof(getenv("ZCMA")) : 0.6969, yc = getenv("LATCM") ? atof(getenv("LATCM")) : 0.1901;
    double cl[3] = {0, s * yc, zc}, cr[3] = {0, -s * yc, zc};
    /* ixx iyy izz ixy ixz iyz */
    double Il[6] = {0.1982, 0.1802, 0.0186, xs * s * -0.0023, xs * 0.0071, s * 0.0573};
    double Ir[6] = {Il[0], Il[1], Il[2], -Il[3], Il[4], -Il[5]};
    set_inertial(xml, cap, "left_leg", cl, Il);
    set_inertial(xml, cap, "right_leg", cr, Ir);
}

static void make_system(const char *urdf)
{
    mbs_error err;
    FILE *fu = fopen(urdf, "r");
    static char xml[40000];
    size_t nr = fread(xml, 1, sizeof xml - 1, fu);
    xml[nr] = 0;
    fclose(fu);
    if (getenv("ZCM")) { char *p; char b[8]; snprintf(b, 8, "%.4f", atof(getenv("ZCM")));
        p = xml; while ((p = strstr(p, "0.1901\""))) { memcpy(p, b, 6); p += 6; } }
    if (getenv("YCM")) { char *p; char b[8]; snprintf(b, 8, "%.4f", atof(getenv("YCM")));
        p = xml; while ((p = strstr(p, "0.6969 "))) { memcpy(p, b, 6); p += 6; } }
    if (getenv("READING")) set_reading(xml, sizeof xml, getenv("READING"));
    M = mbs_model_from_urdf_string(xml, urdf, NULL, &err);
    if (!M) { fprintf(stderr, "%s\n", err.msg); exit(1); }
    double g[3] = {GSIGN * sin(ALPHA), 0, -cos(ALPHA)};
    mbs_model_set_gravity(M, g);
    D = mbs_data_new(M);
    SYS = mbs_system_new(M, 2, &err);
    mbs_material mat = {0, 0, 0, 0, 99.9};
    double n[3] = {0, 0, 1}, ax[3] = {0, 1, 0}, c0[3] = {0, 0, 0};
    double floor_h = getenv("FLOOR") ? atof(getenv("FLOOR")) : 0;
    mbs_system_add_plane(SYS, n, floor_h, &mat, &err);
    /* STONES=file: solid boxes, one a line, "cx cy cz hx hy hz [yaw]" or a scenario's
     * "box = cx cy cz hx hy hz [yaw]" (other lines ignored); the stepping stones of docs/passive_walker.md §5 */
    if (getenv("STONES")) {
        FILE *fs = fopen(getenv("STONES"), "r");
        if (!fs) { fprintf(stderr, "cannot open %s\n", getenv("STONES")); exit(1); }
        char line[512];
        int env_sec = 1; /* boxes outside any section or in [environment] ([run] box is not a solid) */
        while (fgets(line, sizeof line, fs)) {
            char *p = line;
            while (*p == ' ' || *p == '\t') p++;
            if (*p == '[') { env_sec = !strncmp(p, "[environment]", 13); continue; }
            if (!env_sec) continue;
            if (!strncmp(p, "box", 3)) { p = strchr(p, '='); if (!p) continue; p++; }
            else if (!(*p == '-' || *p == '.' || (*p >= '0' && *p <= '9'))) continue;
            double b[7] = {0}; char *e;
            int k = 0;
            for (; k < 7; k++) { b[k] = strtod(p, &e); if (e == p) break; p = e; }
            if (k < 6) continue;
            double c = cos(b[6]), sn = sin(b[6]);
            double Rb[9] = {c, sn, 0, -sn, c, 0, 0, 0, 1}; /* column-major Rz(yaw) */
            if (mbs_system_add_box(SYS, b, Rb, b + 3, &mat, &err)) { fprintf(stderr, "%s\n", err.msg); exit(1); }
            NSTONES++;
        }
        fclose(fs);
    }
    mbs_system_add_rim(SYS, "left_foot", c0, ax, RR, &err);
    mbs_system_add_rim(SYS, "right_foot", c0, ax, RR, &err);
    mbs_system_finalize(SYS, NULL);
    ST = mbs_stepper_new("rigid", SYS, NULL, 0, &err);
    if (!ST) { fprintf(stderr, "%s\n", err.msg); exit(1); }
}

static int VERB = 0;
/* one step: from section x to the next right-foot touchdown; returns 0 ok, else failure code */
static int step_map(const double *x, double *y, double *T, double *steplen, double *Elost)
{
    double q[8], v[7];
    section_to_state(x, q, v, NULL);
    mbs_system_set_state(SYS, q, v, 0);
    if (VERB > 1) printf("   v0 %.4f %.4f %.4f %.4f %.4f %.4f %.4f\n", v[0],v[1],v[2],v[3],v[4],v[5],v[6]);
    double E0 = mbs_kinetic_energy(M, D, q, v) + mbs_potential_energy(M, D, q);
    double t_off = 0, tmax = 30;
    int right_prev = 1, left_lost = 0, armed = 0;
    int n = (int)(tmax / DT);
    for (int i = 0; i < n; i++) {
        if (mbs_stepper_step(ST, DT, NULL)) { if (VERB) printf("  stepper: %s\n", mbs_stepper_last_error(ST)->msg); return 2; }
        double t = mbs_system_time(SYS);
        mbs_contact_info cl, cr;
        mbs_system_contact(SYS, 0, &cl);
        mbs_system_contact(SYS, 1, &cr);
        const double *qq = mbs_system_q(SYS), *vv = mbs_system_v(SYS);
        if (VERB > 1 && i < 5) printf("   i=%d KE %.6f PE %.6f (E0 KE %.6f PE %.6f) v %.4f %.4f %.4f %.4f %.4f %.4f %.4f\n", i, mbs_kinetic_energy(M, D, qq, vv), mbs_potential_energy(M, D, qq), mbs_kinetic_energy(M, D, q, v), mbs_potential_energy(M, D, q), vv[0],vv[1],vv[2],vv[3],vv[4],vv[5],vv[6]);
        if (VERB && i % (int)(0.1 / DT) == 0) {
            double xs[8];
            state_to_section_mirrored(qq, vv, xs, NULL);
            printf("  t=%.2f base z %.4f hip %.4f L%d R%d rz %.4f E %.6f\n", t, qq[2], qq[7], cl.active, cr.active, cr.position[2],
                   mbs_kinetic_energy(M, D, qq, vv) + mbs_potential_energy(M, D, qq) - E0);
        }
        if (!cl.active) left_lost++;
        if (!cr.active && right_prev) t_off = t;
        if (cr.active && !right_prev && t - t_off > 0.1 && t > 0.3) armed = 1;
        if (armed && cr.active && cr.velocity[2] > -1e-6) {
            double pr[3];
            state_to_section_mirrored(qq, vv, y, pr);
            *T = t;
            *steplen = pr[0] - qq[0];
            if (Elost) *Elost = E0 - mbs_kinetic_energy(M, D, qq, vv) - mbs_potential_energy(M, D, qq);
            return left_lost > 2 ? 0 : 0;
        }
        if (cr.active && t > 0.3 && t - t_off > 0.1 && !right_prev) {}
        right_prev = cr.active;
        if (qq[2] < 0.3 * RR) return 3;
    }
    return 4;
}


/* mid-swing section: x7 = (roll, pitch, yaw, wx, wy, wz, qd) of the stance (left) leg with the
 * legs parallel (q_hip = 0, qd > 0). */
static void sec7_to_state(const double *x7, double *q, double *v)
{
    double x[8] = {x7[0], x7[1], x7[2], 0, x7[3], x7[4], x7[5], x7[6]};
    int keep = SOLVEQ; SOLVEQ = 0;
    section_to_state(x, q, v, NULL);
    SOLVEQ = keep;
}
static void state_to_sec7(const double *q, const double *v, int mirror, double *x7)
{
    double x[8];
    if (mirror) state_to_section_mirrored(q, v, x, NULL);
    else {
        double R[3][3], w[3];
        quat2R(q + 3, R);
        for (int k = 0; k < 3; k++) w[k] = R[k][0] * v[3] + R[k][1] * v[4] + R[k][2] * v[5];
        R2rpy(R, &x[0], &x[1], &x[2]);
        x[3] = q[7]; x[4] = w[0]; x[5] = w[1]; x[6] = w[2]; x[7] = v[6];
    }
    x7[0] = x[0]; x7[1] = x[1]; x7[2] = x[2]; x7[3] = x[4]; x7[4] = x[5]; x7[5] = x[6]; x7[6] = x[7];
}
typedef struct { double T, L, Elost, td_t, td_x[8], scuffs; double clear; } step_info;
/* from the current system state run to the next crossing of q_hip through 0 with rate sign dir
 * after a touchdown of the foot that lands (dir < 0: right foot lands first; dir > 0: left);
 * out: the section (mirrored when dir < 0). 0 ok. */
static int NEED_LAND = 1;
static int run_to_crossing(int dir, double *x7, step_info *si)
{
    const mbs_model *m = M;
    int nq = mbs_model_nq(m), nv = mbs_model_nv(m);
    double qp[8], vp[7];
    const double *q0 = mbs_system_q(SYS);
    double E0 = mbs_kinetic_energy(M, D, q0, mbs_system_v(SYS)) + mbs_potential_energy(M, D, q0);
    double x0 = q0[0];
    memcpy(qp, q0, sizeof(double) * nq); memcpy(vp, mbs_system_v(SYS), sizeof(double) * nv);
    int lander = dir < 0 ? 1 : 0, trailer = 1 - lander;
    int landed = !NEED_LAND, prev_land = 1, prev_active_time = 0; double t_off = -1, t0 = mbs_system_time(SYS);
    si->scuffs = 0; si->clear = 1;
    (void)prev_active_time; (void)trailer;
    for (int i = 0; i < (int)(30 / DT); i++) {
        if (mbs_stepper_step(ST, DT, NULL)) { if (VERB) printf("  stepper: %s\n", mbs_stepper_last_error(ST)->msg); return 2; }
        double t = mbs_system_time(SYS) - t0;
        const double *q = mbs_system_q(SYS), *v = mbs_system_v(SYS);
        mbs_contact_info c;
        mbs_system_contact(SYS, lander, &c);
        if (!landed) {
            if (!c.active && prev_land) t_off = t;
            if (!c.active && t_off >= 0 && c.position[2] < si->clear && t - t_off > 0.05) si->clear = c.position[2];
            if (c.active && !prev_land && t_off >= 0) {
                if (t - t_off < 0.15 || fabs(q[7]) < 0.08) si->scuffs++;
                else landed = 1;
            }
            prev_land = c.active;
            if (landed) {
                mbs_contact_info cc; mbs_system_contact(SYS, lander, &cc);
                si->td_t = t; si->L = cc.position[0];
                double xx[8];
                if (dir < 0) state_to_section_mirrored(q, v, xx, NULL);
                else { double s7[7]; state_to_sec7(q, v, 0, s7); xx[0]=s7[0];xx[1]=s7[1];xx[2]=s7[2];xx[3]=q[7];xx[4]=s7[3];xx[5]=s7[4];xx[6]=s7[5];xx[7]=s7[6]; }
                memcpy(si->td_x, xx, sizeof xx);
            }
        } else if ((dir < 0 && qp[7] > 0 && q[7] <= 0) || (dir > 0 && qp[7] < 0 && q[7] >= 0)) {
            double s = qp[7] / (qp[7] - q[7]), xa[7], xb[7];
            state_to_sec7(qp, vp, dir < 0, xa);
            state_to_sec7(q, v, dir < 0, xb);
            for (int k = 0; k < 7; k++) x7[k] = xa[k] + s * (xb[k] - xa[k]);
            si->T = t - DT * (1 - s);
            si->Elost = E0 - mbs_kinetic_energy(M, D, q, v) - mbs_potential_energy(M, D, q);
            si->L -= x0;
            return 0;
        }
        if (q[2] < 0.3 * RR) return 3;
        memcpy(qp, q, sizeof(double) * nq); memcpy(vp, v, sizeof(double) * nv);
    }
    return 4;
}
static int pmap(const double *x7, double *y7, step_info *si)
{
    double q[8], v[7];
    sec7_to_state(x7, q, v);
    mbs_system_set_state(SYS, q, v, 0);
    return run_to_crossing(-1, y7, si);
}
static void print7(const char *tag, const double *x)
{
    printf("%s", tag);
    for (int k = 0; k < 7; k++) printf(" %.10f", x[k]);
    printf("\n");
}
static int newton(double *x, int iters, double eps)
{
    for (int it = 0; it < iters; it++) {
        double y[7], F[7], J[49];
        step_info si;
        if (pmap(x, y, &si)) { printf("newton: map failed\n"); return 1; }
        double nF = 0;
        for (int k = 0; k < 7; k++) { F[k] = y[k] - x[k]; nF += F[k] * F[k]; }
        printf("it %d |F| %.3e T %.4f L %.4f Elost %.5f scuffs %g clear %.4f\n", it, sqrt(nF), si.T, si.L, si.Elost, si.scuffs, si.clear);
        print7("  x", x);
        if (sqrt(nF) < 1e-9) return 0;
        for (int j = 0; j < 7; j++) {
            double xp[7], xm[7], yp[7], ym[7];
            memcpy(xp, x, sizeof xp); memcpy(xm, x, sizeof xm);
            xp[j] += eps; xm[j] -= eps;
            if (pmap(xp, yp, &si) || pmap(xm, ym, &si)) { printf("newton: fd map failed\n"); return 1; }
            for (int k = 0; k < 7; k++) J[k * 7 + j] = (yp[k] - ym[k]) / (2 * eps) - (k == j);
        }
        /* solve J dx = -F */
        double A[49], b[7]; int piv[7];
        memcpy(A, J, sizeof A);
        for (int k = 0; k < 7; k++) b[k] = -F[k];
        if (LAPACKE_dgesv(LAPACK_ROW_MAJOR, 7, 1, A, 7, piv, b, 1)) { printf("singular\n"); return 1; }
        /* eigenvalues of DP = J + I */
        double P[49], wr[7], wi[7];
        for (int k = 0; k < 49; k++) P[k] = J[k] + (k % 8 == 0);
        LAPACKE_dgeev(LAPACK_ROW_MAJOR, 'N', 'N', 7, P, 7, wr, wi, NULL, 7, NULL, 7);
        printf("  eig:");
        for (int k = 0; k < 7; k++) printf(" (%.4f%+.4fi |%.4f|)", wr[k], wi[k], hypot(wr[k], wi[k]));
        printf("\n");
        double lam = 1, nd = 0;
        for (int k = 0; k < 7; k++) nd += b[k] * b[k];
        nd = sqrt(nd);
        if (nd > 0.05) lam = 0.05 / nd;
        for (int k = 0; k < 7; k++) x[k] += lam * b[k];
    }
    return 1;
}

static const int FREE[7] = {0, 1, 2, 4, 5, 6, 7};
static int tdmap7(const double *z, double *w, double *T, double *L, double *El)
{
    double x[8] = {z[0], z[1], z[2], 0, z[3], z[4], z[5], z[6]}, y[8];
    x[3] = solve_hip(x);
    if (isnan(x[3])) return 5;
    int rc = step_map(x, y, T, L, El);
    if (rc) return rc;
    for (int k = 0; k < 7; k++) w[k] = y[FREE[k]];
    return 0;
}
static int newton_td(double *z, int iters, double eps, double maxstep)
{
    for (int it = 0; it < iters; it++) {
        double y[7], F[7], J[49], T, L, El;
        int rc = tdmap7(z, y, &T, &L, &El);
        if (rc) { printf("newton: map failed %d\n", rc); return 1; }
        double nF = 0;
        for (int k = 0; k < 7; k++) { F[k] = y[k] - z[k]; nF += F[k] * F[k]; }
        printf("it %d |F| %.3e T %.4f L %.4f Elost %.5f\n", it, sqrt(nF), T, L, El);
        print7("  z", z);
        if (sqrt(nF) < 1e-7) return 0;
        for (int j = 0; j < 7; j++) {
            double xp[7], xm[7], yp[7], ym[7];
            memcpy(xp, z, sizeof xp); memcpy(xm, z, sizeof xm);
            xp[j] += eps; xm[j] -= eps;
            if (tdmap7(xp, yp, &T, &L, &El) || tdmap7(xm, ym, &T, &L, &El)) { printf("newton: fd map failed\n"); return 1; }
            for (int k = 0; k < 7; k++) J[k * 7 + j] = (yp[k] - ym[k]) / (2 * eps) - (k == j);
        }
        double A[49], b[7], P[49], wr[7], wi[7]; int piv[7];
        memcpy(A, J, sizeof A);
        for (int k = 0; k < 7; k++) b[k] = -F[k];
        if (LAPACKE_dgesv(LAPACK_ROW_MAJOR, 7, 1, A, 7, piv, b, 1)) { printf("singular\n"); return 1; }
        for (int k = 0; k < 49; k++) P[k] = J[k] + (k % 8 == 0);
        LAPACKE_dgeev(LAPACK_ROW_MAJOR, 'N', 'N', 7, P, 7, wr, wi, NULL, 7, NULL, 7);
        printf("  eig:");
        for (int k = 0; k < 7; k++) printf(" (%.4f%+.4fi |%.4f|)", wr[k], wi[k], hypot(wr[k], wi[k]));
        printf("\n");
        double lam = 1, nd = 0;
        for (int k = 0; k < 7; k++) nd += b[k] * b[k];
        nd = sqrt(nd);
        if (nd > maxstep) lam = maxstep / nd;
        for (int k = 0; k < 7; k++) z[k] += lam * b[k];
    }
    return 1;
}

/* The stable cycle's state just after a touch-down (docs/passive_walker.md §5.3, §6): Newton on the
 * mid-swing map from S0 (default: the fixed point of §5.3), then the simulation from the fixed point
 * on to the next left touch-down (the right foot lands first): the state at the end of the first step
 * after which the left rim touches with its contact point at rest (after the impulse), moved in x and y so that the left rim touches at
 * the origin (the floor is a plane: a shift changes nothing). Prints the [model] lines of a
 * scenario and, with OUT=file, writes them into that scenario between its lines
 * "; begin cycle state" and "; end cycle state". */
static void cycle_state(int iters, const char *out)
{
    double x7[7] = {-0.0184613921, 0.1021764786, -0.0002071453, 0.0414882084, 0.1217584103, 0.3359425730, 0.8518289219};
    double eps = getenv("EPS") ? atof(getenv("EPS")) : 1e-3;
    if (getenv("S0")) { char *s = getenv("S0"); for (int k = 0; k < 7; k++) x7[k] = strtod(s, &s); }
    if (iters > 0) newton(x7, iters, eps);
    double y7[7], nF = 0;
    step_info si;
    if (pmap(x7, y7, &si)) { fprintf(stderr, "cycle: the map fails at the fixed point\n"); exit(1); }
    for (int k = 0; k < 7; k++) nF += (y7[k] - x7[k]) * (y7[k] - x7[k]);
    print7("fixed point", x7);
    printf("|P(x) - x| %.3e, step period %.4f, step %.4f, energy lost per step %.5f, scuffs %g\n", sqrt(nF), si.T, si.L, si.Elost, si.scuffs);
    /* from the fixed point: the right foot lands, then the left one */
    double q[8], v[7];
    sec7_to_state(x7, q, v);
    mbs_system_set_state(SYS, q, v, 0);
    int prev[2] = {1, 0}, landed_right = 0;
    double t_right = 0;
    for (int i = 0; i < (int)(5 / DT); i++) {
        if (mbs_stepper_step(ST, DT, NULL)) { fprintf(stderr, "cycle: %s\n", mbs_stepper_last_error(ST)->msg); exit(1); }
        mbs_contact_info c[2];
        mbs_system_contact(SYS, 0, &c[0]);
        mbs_system_contact(SYS, 1, &c[1]);
        if (c[1].active && !prev[1] && !landed_right) { landed_right = 1; t_right = mbs_system_time(SYS); }
        /* landed: the left rim touches and has stopped (its contact point at rest after the impulse;
         * the step in which it turns active may end just before the impact) */
        if (landed_right && !prev[0] && c[0].active && c[0].velocity[2] > -1e-6) {
            const double *qq = mbs_system_q(SYS), *vv = mbs_system_v(SYS);
            double R[3][3], r, p, y, lin[3], w[3];
            memcpy(q, qq, sizeof q);
            memcpy(v, vv, sizeof v);
            q[0] -= c[0].position[0];
            q[1] -= c[0].position[1];
            quat2R(q + 3, R);
            R2rpy(R, &r, &p, &y);
            for (int k = 0; k < 3; k++) {
                lin[k] = R[k][0] * v[0] + R[k][1] * v[1] + R[k][2] * v[2];
                w[k] = R[k][0] * v[3] + R[k][1] * v[4] + R[k][2] * v[5];
            }
            char block[2048];
            snprintf(block, sizeof block,
                     "; begin cycle state: written by `build/tools/walker_cycle cycle` (DT=%g; docs/passive_walker.md section 6)\n"
                     "; q = %.17g %.17g %.17g %.17g %.17g %.17g %.17g %.17g\n"
                     "; v = %.17g %.17g %.17g %.17g %.17g %.17g %.17g\n"
                     "base_position = %.17g %.17g %.17g\nbase_rpy = %.17g %.17g %.17g\nq.hip = %.17g\n"
                     "base_velocity = %.17g %.17g %.17g %.17g %.17g %.17g\nv.hip = %.17g\n; end cycle state\n",
                     DT, q[0], q[1], q[2], q[3], q[4], q[5], q[6], q[7], v[0], v[1], v[2], v[3], v[4], v[5], v[6],
                     q[0], q[1], q[2], r, p, y, q[7], lin[0], lin[1], lin[2], w[0], w[1], w[2], v[6]);
            printf("right foot lands at t = %.3f, left foot at t = %.3f, x = %.4f (moved to 0); the state after the left touch-down:\n%s",
                   t_right, mbs_system_time(SYS), c[0].position[0], block);
            if (out) {
                FILE *f = fopen(out, "r");
                if (!f) { fprintf(stderr, "cycle: cannot read %s\n", out); exit(1); }
                static char text[1 << 16], res[1 << 16];
                size_t n = fread(text, 1, sizeof text - 1, f);
                text[n] = 0;
                fclose(f);
                char *a = strstr(text, "; begin cycle state"), *b = a ? strstr(a, "; end cycle state\n") : NULL;
                if (!a || !b) { fprintf(stderr, "cycle: %s has no '; begin cycle state' ... '; end cycle state' lines\n", out); exit(1); }
                snprintf(res, sizeof res, "%.*s%s%s", (int)(a - text), text, block, b + strlen("; end cycle state\n"));
                f = fopen(out, "w");
                if (!f || fputs(res, f) < 0 || fclose(f)) { fprintf(stderr, "cycle: cannot write %s\n", out); exit(1); }
                printf("written into %s\n", out);
            }
            return;
        }
        if (!landed_right || !c[0].active) prev[0] = c[0].active;
        prev[1] = c[1].active;
    }
    fprintf(stderr, "cycle: no left touch-down within 5 s of the fixed point\n");
    exit(1);
}

static void print_x(const char *tag, const double *x)
{
    printf("%s", tag);
    for (int k = 0; k < 8; k++) printf(" %.10f", x[k]);
    printf("\n");
}

int main(int argc, char **argv)
{
    const char *mode = argc > 1 ? argv[1] : "walk";
    setvbuf(stdout, NULL, _IOLBF, 0);
    if (getenv("GSIGN")) GSIGN = atof(getenv("GSIGN"));
    if (getenv("DT")) DT = atof(getenv("DT"));
    if (getenv("VERB")) VERB = atoi(getenv("VERB"));
    make_system(getenv("URDF") ? getenv("URDF") : "urdf/passive_walker.urdf");
    double x[8];
    /* initial guess: A.3 */
    {
        double yaw = 9.866765986740000e-02, roll = -9.248610676160000e-03, pitch = -1.601658349552200e-01;
        double X[3][3], Y[3][3], Z[3][3], T[3][3], R[3][3];
        rotx(-roll, X); roty(-pitch, Y); rotz(-yaw, Z);
        m3mul(Y, X, T); m3mul(T, Z, R);
        double mir = getenv("MIRROR") ? atof(getenv("MIRROR")) : 0;
        double w[3] = {0.040738941683897, -0.472465112865759, 0.127336677387404};
        if (mir) {
            double S[3] = {1, -1, 1};
            for (int i = 0; i < 3; i++) for (int j = 0; j < 3; j++) R[i][j] *= S[i] * S[j];
            w[0] = -w[0]; w[2] = -w[2];
        }
        R2rpy(R, &x[0], &x[1], &x[2]);
        double hs = getenv("HS") ? atof(getenv("HS")) : -1;
        x[3] = hs * (3.435833890385830 - 3.14159265358979323846);
        x[4] = w[0]; x[5] = w[1]; x[6] = w[2];
        x[7] = hs * -3.925591686648300e-01;
        double vs = getenv("VS") ? atof(getenv("VS")) : 1;
        for (int k = 4; k < 8; k++) x[k] *= vs;
    }
    if (getenv("SOLVEQ")) SOLVEQ = atoi(getenv("SOLVEQ"));
    if (getenv("X0")) { char *s = getenv("X0"); for (int k = 0; k < 8; k++) x[k] = strtod(s, &s); }
    if (SOLVEQ) x[3] = solve_hip(x);
    print_x("x0", x);
    if (!strcmp(mode, "half")) { /* from x0 (touchdown state) to the first mid-swing section */
        double q[8], v[7], x7[7]; step_info si;
        section_to_state(x, q, v, NULL);
        mbs_system_set_state(SYS, q, v, 0);
        NEED_LAND = 0; si.L = 0;
        int rc = run_to_crossing(+1, x7, &si);
        NEED_LAND = 1;
        printf("rc %d\n", rc);
        (void)si;
        if (!rc) print7("sec", x7);
        /* hmm: from a post-touchdown state no landing happens before the crossing: handled below */
    }
    if (!strcmp(mode, "newton")) {
        double x7[7]; char *s = getenv("S0");
        for (int k = 0; k < 7; k++) x7[k] = strtod(s, &s);
        newton(x7, argc > 2 ? atoi(argv[2]) : 20, getenv("EPS") ? atof(getenv("EPS")) : 1e-4);
        print7("final", x7);
    }
    if (!strcmp(mode, "ntd")) {
        double z[7];
        for (int k = 0; k < 7; k++) z[k] = x[FREE[k]];
        if (getenv("Z0")) { char *s = getenv("Z0"); for (int k = 0; k < 7; k++) z[k] = strtod(s, &s); }
        newton_td(z, argc > 2 ? atoi(argv[2]) : 20, getenv("EPS") ? atof(getenv("EPS")) : 1e-4, getenv("MAXSTEP") ? atof(getenv("MAXSTEP")) : 0.05);
        print7("final", z);
    }
    if (!strcmp(mode, "cyc")) {
        double x7[7], y7[7]; char *s = getenv("S0");
        for (int k = 0; k < 7; k++) x7[k] = strtod(s, &s);
        int n = argc > 2 ? atoi(argv[2]) : 10;
        for (int i = 0; i < n; i++) {
            step_info si;
            int rc = pmap(x7, y7, &si);
            if (rc) { printf("step %d failed %d\n", i, rc); break; }
            printf("step %d T %.4f L %.4f Elost %.5f scuffs %g clear %.4f\n", i, si.T, si.L, si.Elost, si.scuffs, si.clear);
            print7("  y", y7);
            memcpy(x7, y7, sizeof x7);
        }
    }
    if (!strcmp(mode, "cycle")) cycle_state(argc > 2 ? atoi(argv[2]) : 2, getenv("OUT"));
    if (!strcmp(mode, "ini")) {
        double q[8], v[7], bw[6];
        section_to_state(x, q, v, bw);
        printf("base_position = 0 0 %.12f\nbase_rpy = %.12f %.12f %.12f\nq.hip = %.12f\nbase_velocity = %.12f %.12f %.12f %.12f %.12f %.12f\nv.hip = %.12f\n",
               q[2], x[0], x[1], x[2], q[7], bw[0], bw[1], bw[2], bw[3], bw[4], bw[5], v[6]);
    }
    if (!strcmp(mode, "sim")) {
        double q[8], v[7], T = argc > 2 ? atof(argv[2]) : 10, toff[2] = {-1, -1};
        double qprev = 0, xoff[2] = {0, 0}, lowz[2] = {1, 1}, lowx[2] = {0, 0}, lastp[2][3] = {{0}};
        int prev[2] = {1, 1}, nreal = 0, nstub = 0, last_real = 0; double last_x = 0, tend = 0; int fell = 0;
        if (getenv("S0")) { double x7[7]; char *s = getenv("S0"); for (int k = 0; k < 7; k++) x7[k] = strtod(s, &s); sec7_to_state(x7, q, v); }
        else section_to_state(x, q, v, NULL);
        mbs_system_set_state(SYS, q, v, 0);
        for (int i = 0; i < (int)(T / DT); i++) {
            if (mbs_stepper_step(ST, DT, NULL)) { printf("stepper: %s\n", mbs_stepper_last_error(ST)->msg); break; }
            double t = mbs_system_time(SYS);
            const double *qq = mbs_system_q(SYS);
            for (int c = 0; c < 2; c++) {
                mbs_contact_info ci; mbs_system_contact(SYS, c, &ci);
                if (!ci.active && prev[c]) { toff[c] = t; xoff[c] = lastp[c][0]; lowz[c] = 1; }
                if (ci.active) memcpy(lastp[c], ci.position, sizeof lastp[c]);
                else { /* lowest point of the swing rim: its centre from the kinematics, its axis the
                        * left leg's y axis (the hip axis) */
                    double Rf[9], pf[3];
                    mbs_forward_kinematics(M, D, qq, NULL, NULL);
                    mbs_frame_placement(M, D, mbs_frame_id(M, c ? "right_foot" : "left_foot"), Rf, pf);
                    double zr = pf[2] - RR * sqrt(1 - Rf[5] * Rf[5]);  /* Rf column-major: Rf[5] = z of the y axis */
                    if (t - toff[c] > 0.05 && zr < lowz[c]) { lowz[c] = zr; lowx[c] = pf[0]; }
                }
                if (ci.active && !prev[c]) {
                    /* a real step: this foot lands ahead (-x, downhill) of the other foot, and the
                     * previous real step was by the other foot; anything else is a stub/scuff */
                    mbs_contact_info co; mbs_system_contact(SYS, 1 - c, &co);
                    int real = ci.position[0] < co.position[0] - 0.02 && last_real != c && t - toff[c] > 0.1;
                    if (real) { nreal++; last_real = c; last_x = ci.position[0]; } else nstub++;
                    printf("td %s t=%.3f (off %.3f) x=%.4f y=%.4f other x=%.4f hip=%.4f %s  [lifted at x=%.4f, rim lowest z=%.4f at x=%.4f (after 0.05 s)]\n",
                           c ? "R" : "L", t, t - toff[c], ci.position[0], ci.position[1], co.position[0], qq[7], real ? "STEP" : "stub",
                           xoff[c], lowz[c], lowx[c]);
                    if (real && getenv("PRINTSEC")) { /* the touchdown state as a section (x0 of ntd/sim), mirrored after a right landing */
                        double xx[8], x7[7], pr[3];
                        if (c) state_to_section_mirrored(qq, mbs_system_v(SYS), xx, pr);
                        else { state_to_sec7(qq, mbs_system_v(SYS), 0, x7); xx[0] = x7[0]; xx[1] = x7[1]; xx[2] = x7[2]; xx[3] = qq[7];
                               xx[4] = x7[3]; xx[5] = x7[4]; xx[6] = x7[5]; xx[7] = x7[6]; }
                        print_x("  sec", xx);
                    }
                }
                prev[c] = ci.active;
            }
            if (VERB && i % (int)(0.25 / DT) == 0) {
                double R[3][3], r, p, y; quat2R(qq + 3, R); R2rpy(R, &r, &p, &y);
                printf("  t=%.2f base %.3f %.3f %.4f rpy %.3f %.3f %.3f hip %.3f L%d R%d E %.5f\n", t, qq[0], qq[1], qq[2], r, p, y, qq[7], prev[0], prev[1],
                       mbs_kinetic_energy(M, D, qq, mbs_system_v(SYS)) + mbs_potential_energy(M, D, qq));
            }
            if (getenv("PRINTSEC") && qprev < 0 && qq[7] >= 0 && prev[0] && !prev[1]) { /* mid-swing section of pmap (newton/cyc: S0) */
                double x7[7]; state_to_sec7(qq, mbs_system_v(SYS), 0, x7);
                printf("  t=%.3f S0", t); for (int k = 0; k < 7; k++) printf(" %.10f", x7[k]); printf("\n");
            }
            qprev = qq[7];
            tend = t;
            if (qq[2] < 0.3 * RR) { printf("fell t=%.3f\n", t); fell = 1; break; }
            /* hip height: a fall shows as the hip dropping below 0.6 */
            { double R[3][3]; quat2R(qq + 3, R); if (qq[2] + R[2][1] * (-WW / 2) + R[2][2] < 0.6) { printf("fell (hip low) t=%.3f\n", t); fell = 1; break; } }
        }
        printf("SUMMARY real_steps %d stubs %d last_x %.3f t_end %.3f fell %d\n", nreal, nstub, last_x, tend, fell);
    }
    if (!strcmp(mode, "walk")) {
        int nsteps = argc > 2 ? atoi(argv[2]) : 10;
        for (int s = 0; s < nsteps; s++) {
            double y[8], T, L, El;
            int rc = step_map(x, y, &T, &L, &El);
            if (rc) { printf("step %d failed rc %d\n", s, rc); break; }
            printf("step %d T %.4f L %.4f Elost %.5f\n", s, T, L, El);
            print_x("  x", y);
            memcpy(x, y, sizeof x);
        }
    }
    return 0;
}
