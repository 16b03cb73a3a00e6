/* test_mjcf.c — the MJCF loader against hand-computed values: defaults and childclass, every
 * orientation form and angle unit, joints about their anchors and several joints in one body,
 * free and ball joints, inertias from geoms, <include>, keyframes, armature, actuators' effort
 * limits, sites, gravity; and bad input failing with a message that names the file, line and
 * element. (MuJoCo itself checks the same models in test_mjcf_mujoco.c.) */
#include <math.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/stat.h>

#include "check.h"
#include "mbs.h"
#include "testmodels.h"

#define DIR MBS_SOURCE_DIR "/tests/models/mjcf/"
#define REF_DIR MBS_SOURCE_DIR "/../shared/reference/mjcf/"
#define PI 3.14159265358979323846
#define WARN(e) ((e).warnings ? (e).warnings : "")

static mbs_model *load(const char *file, mbs_error *err)
{
    mbs_model *m = mbs_model_from_mjcf(file, NULL, err);
    CHECK(m != NULL, "%s: %s", file, err->msg);
    return m;
}

static mbs_model *load_string(const char *xml, mbs_error *err)
{
    return mbs_model_from_mjcf_string(xml, "t.xml", NULL, err);
}

/* World placement of frame `name` at q. */
static void placement(const mbs_model *m, const double *q, const char *name, double R[9], double p[3])
{
    mbs_data *d = mbs_data_new(m);
    int f = mbs_frame_id(m, name);
    CHECK(f >= 0, "no frame '%s'", name);
    if (f >= 0) mbs_compute_frame_placement(m, d, q, f, R, p);
    mbs_data_free(d);
}

static void rot_axis(int k, double a, double R[9])
{
    double c = cos(a), s = sin(a);
    int i = (k + 1) % 3, j = (k + 2) % 3;
    memset(R, 0, 9 * sizeof(double));
    R[k + 3 * k] = 1;
    R[i + 3 * i] = c; R[j + 3 * j] = c;
    R[j + 3 * i] = s; R[i + 3 * j] = -s;
}

/* ---- the models of tests/models/mjcf ---- */

static void test_defaults(void)
{
    mbs_error err;
    mbs_model *m = load(DIR "defaults.xml", &err);
    if (!m) return;
    const double deg = PI / 180;
    /* shoulder: childclass arm (axis x, range -90 45 degrees); elbow: class wrist (axis z, ±30, damping 0.2);
     * wrist: childclass wrist; wrist2: class main (axis y, unlimited, damping 0.5) */
    const char *names[4] = {"shoulder", "elbow", "wrist", "wrist2"};
    const double lo[4] = {-90 * deg, -30 * deg, -30 * deg, -INFINITY}, damp[4] = {0.5, 0.2, 0.2, 0.5};
    for (int k = 0; k < 4; k++) {
        int j = mbs_joint_id(m, names[k]);
        CHECK(j >= 0, "no joint %s", names[k]);
        if (j < 0) continue;
        int iq = mbs_joint_idx_q(m, j), iv = mbs_joint_idx_v(m, j);
        CHECK(lo[k] == -INFINITY ? isinf(mbs_model_lower_limits(m)[iq]) : fabs(mbs_model_lower_limits(m)[iq] - lo[k]) < 1e-15,
              "%s: lower limit %g, expected %g", names[k], mbs_model_lower_limits(m)[iq], lo[k]);
        CHECK(mbs_model_damping(m)[iv] == damp[k], "%s: damping %g", names[k], mbs_model_damping(m)[iv]);
    }
    /* shoulder turns about x: the frame "upper" (0, 0.02, -0.2) below it moves in the y-z plane */
    double q[4] = {0.3, 0, 0, 0}, R[9], p[3];
    placement(m, q, "upper", R, p);
    double want[3] = {0, 0.02 * cos(0.3) + 0.2 * sin(0.3), 1 + 0.02 * sin(0.3) - 0.2 * cos(0.3)};
    CHECK_CLOSE(p, want, 3, 1e-14, "upper after the shoulder");
    /* base: a box of the class arm (half sizes 0.05 0.03 0.1, density 800 from main) */
    double mass, com[3], Ic[9];
    mbs_body_inertia(m, mbs_joint_id(m, "shoulder"), &mass, com, Ic);
    CHECK(fabs(mass - 800 * 8 * 0.05 * 0.03 * 0.1) < 1e-13, "base mass %.15g", mass);
    CHECK(fabs(Ic[0] - mass * (0.03 * 0.03 + 0.1 * 0.1) / 3) < 1e-15, "base Ixx %.15g", Ic[0]);
    const double *g = mbs_model_gravity(m);
    CHECK(g[0] == 0.3 && g[1] == -0.2 && g[2] == -9.7, "gravity %g %g %g", g[0], g[1], g[2]);
    int tip = mbs_frame_id(m, "tip");
    CHECK(tip >= 0 && mbs_frame_type_of(m, tip) == MBS_FRAME_OP, "site tip is no added frame");
    mbs_model_free(m);
    mbs_error_free(&err);
}

/* One rotation in every form and unit gives the same body frame. */
static void test_orientation_forms(void)
{
    static const char *forms[] = {
        "<compiler/><worldbody><body name='b' quat='0.7071067811865476 0.7071067811865476 0 0'>",
        "<compiler/><worldbody><body name='b' euler='90 0 0'>",
        "<compiler angle='radian'/><worldbody><body name='b' euler='1.5707963267948966 0 0'>",
        "<compiler eulerseq='ZYX'/><worldbody><body name='b' euler='0 0 90'>",
        "<compiler/><worldbody><body name='b' axisangle='2 0 0 90'>",
        "<compiler angle='radian'/><worldbody><body name='b' axisangle='1 0 0 1.5707963267948966'>",
        "<compiler/><worldbody><body name='b' xyaxes='1 0 0 0 0 3'>",
        "<compiler/><worldbody><body name='b' zaxis='0 -2 0'>",
    };
    double want[9];
    rot_axis(0, PI / 2, want);
    for (size_t i = 0; i < sizeof forms / sizeof forms[0]; i++) {
        char xml[512];
        snprintf(xml, sizeof xml, "<mujoco>%s<joint type='slide'/><geom size='0.1'/></body></worldbody></mujoco>",
                 forms[i]);
        mbs_error err;
        mbs_model *m = load_string(xml, &err);
        CHECK(m != NULL, "form %zu: %s", i, err.msg);
        if (m) {
            double q[1] = {0}, R[9], p[3];
            placement(m, q, "b", R, p);
            CHECK_CLOSE(R, want, 9, 1e-15, forms[i]);
        }
        mbs_model_free(m);
        mbs_error_free(&err);
    }
    /* intrinsic xyz against extrinsic: euler 'a b c' about x, then the new y, then the new z */
    mbs_error err;
    mbs_model *m = load_string("<mujoco><compiler angle='radian'/><worldbody><body name='b' euler='0.3 -0.5 1.1'>"
                               "<joint type='slide'/><geom size='0.1'/></body></worldbody></mujoco>", &err);
    if (m) {
        double q[1] = {0}, R[9], p[3], A[9], B[9], C[9], T[9], W[9];
        rot_axis(0, 0.3, A); rot_axis(1, -0.5, B); rot_axis(2, 1.1, C);
        for (int i = 0; i < 3; i++)
            for (int j = 0; j < 3; j++) {
                T[i + 3 * j] = 0;
                for (int k = 0; k < 3; k++) T[i + 3 * j] += A[i + 3 * k] * B[k + 3 * j];
            }
        for (int i = 0; i < 3; i++)
            for (int j = 0; j < 3; j++) {
                W[i + 3 * j] = 0;
                for (int k = 0; k < 3; k++) W[i + 3 * j] += T[i + 3 * k] * C[k + 3 * j];
            }
        placement(m, q, "b", R, p);
        CHECK_CLOSE(R, W, 9, 1e-15, "euler xyz = Rx Ry Rz");
    }
    mbs_model_free(m);
    mbs_error_free(&err);
}

/* A hinge about z through (0.1, 0, 0) and a slide: the body origin circles the anchor. */
static void test_joint_anchor(void)
{
    mbs_error err;
    mbs_model *m = load_string("<mujoco><compiler angle='radian'/><worldbody><body name='b' pos='0 0 1'>"
                               "<joint name='h' axis='0 0 1' pos='0.1 0 0'/><joint name='s' type='slide' axis='1 0 0'/>"
                               "<joint name='h2' axis='1 0 0' pos='0 0.2 0' ref='0.25'/><geom size='0.1'/>"
                               "<site name='s1' pos='0 0.2 0.3'/></body></worldbody></mujoco>", &err);
    CHECK(m != NULL, "%s", err.msg);
    if (!m) return;
    CHECK(mbs_model_njoints(m) == 3 && mbs_model_nq(m) == 3, "3 joints, 3 coordinates");
    double t = 0.7, s = 0.05, a = 0.4, q[3] = {t, s, a}, R[9], p[3];
    placement(m, q, "b", R, p);
    /* Tr(c1) Rz(t) Tr(-c1) · Tr(s x) · Tr(c3) Rx(a) Tr(-c3) applied to the origin */
    double c3y = 0.2, o3[3] = {0, c3y - c3y * cos(a), -c3y * sin(a)};   /* Tr(c3) Rx Tr(-c3) · 0 */
    double u[3] = {o3[0] + s, o3[1], o3[2]};
    double w[3] = {0.1 + cos(t) * (u[0] - 0.1) - sin(t) * u[1], sin(t) * (u[0] - 0.1) + cos(t) * u[1], 1 + u[2]};
    CHECK_CLOSE(p, w, 3, 1e-14, "body origin through three joints");
    /* a keyframe-free check of ref: q = qpos − ref, so q = 0 is the model as written */
    double z[3] = {0, 0, 0};
    placement(m, z, "s1", R, p);
    double ws[3] = {0, 0.2, 1.3};
    CHECK_CLOSE(p, ws, 3, 1e-15, "site at q = 0");
    mbs_model_free(m);
    mbs_error_free(&err);
}

static void test_free_keyframes_actuators(void)
{
    mbs_error err;
    mbs_model *m = load(DIR "free_bodies.xml", &err);
    if (!m) return;
    int root = mbs_joint_id(m, "root"), ball = mbs_joint_id(m, "root_joint");
    CHECK(root == 0 && mbs_joint_type_of(m, root) == MBS_JOINT_FREEFLYER, "the named free joint 'root' first");
    CHECK(ball >= 0 && mbs_joint_type_of(m, ball) == MBS_JOINT_FREEFLYER, "the unnamed free joint is root_joint");
    /* effort limits: |gear| · ctrlrange, clipped by forcerange; a position actuator gives none */
    const double *eff = mbs_model_effort_limits(m), *arm = mbs_model_armature(m);
    int v1 = mbs_joint_idx_v(m, mbs_joint_id(m, "q1")), v2 = mbs_joint_idx_v(m, mbs_joint_id(m, "q2")),
        v3 = mbs_joint_idx_v(m, mbs_joint_id(m, "q3"));
    CHECK(eff[v1] == 40 && eff[v2] == 25 && isinf(eff[v3]), "effort limits %g %g %g", eff[v1], eff[v2], eff[v3]);
    CHECK(arm[v1] == 0.02 && arm[v2] == 0.05 && arm[v3] == 0, "armature %g %g %g", arm[v1], arm[v2], arm[v3]);
    CHECK(mbs_model_damping(m)[v1] == 0.3, "damping %g", mbs_model_damping(m)[v1]);
    CHECK(strstr(WARN(err), "<position>") != NULL, "no warning on the position actuator: %s", WARN(err));
    /* keyframe 'pose': MuJoCo's [x y z qw qx qy qz] and world-frame linear velocity */
    CHECK(mbs_model_nkeyframes(m) == 2, "%d keyframes", mbs_model_nkeyframes(m));
    int k = mbs_model_keyframe_id(m, "pose");
    const double *q, *v;
    CHECK(k >= 0 && mbs_model_keyframe(m, k, &q, &v) != NULL, "no keyframe 'pose'");
    if (k >= 0) {
        double wq[7] = {0.5, 0.6, 0.7, 0, 0.8, 0, 0.6};
        CHECK_CLOSE(q, wq, 7, 1e-15, "free joint q");
        /* R = rotation of (w 0.6, y 0.8): about y by 2·atan2(0.8, 0.6); v = Rᵀ (1 2 3) */
        double a = 2 * atan2(0.8, 0.6), wv[6] = {cos(a) * 1 - sin(a) * 3, 2, sin(a) * 1 + cos(a) * 3, 0.1, 0.2, 0.3};
        CHECK_CLOSE(v, wv, 6, 1e-14, "free joint v");
        CHECK(q[7] == 0.3 && q[8] == -0.4 && v[6] == 0.5, "hinge coordinates %g %g %g", q[7], q[8], v[6]);
    }
    /* the unnamed key: 'key1'; the second free body's quaternion [qw qx qy qz] = [0 0 0 1] */
    k = mbs_model_keyframe_id(m, "key1");
    if (k >= 0 && mbs_model_keyframe(m, k, &q, &v)) {
        int iq = mbs_joint_idx_q(m, ball);
        double wq[7] = {0, 1, 0.2, 0, 0, 1, 0};
        CHECK_CLOSE(q + iq, wq, 7, 1e-15, "second free body");
    } else {
        CHECK(0, "no keyframe 'key1'");
    }
    mbs_model_free(m);
    mbs_error_free(&err);
}

static void test_ball_keyframe(void)
{
    mbs_error err;
    mbs_model *m = load(DIR "ball.xml", &err);
    if (!m) return;
    int j = mbs_joint_id(m, "shoulder");
    CHECK(j >= 0 && mbs_joint_type_of(m, j) == MBS_JOINT_BALL && mbs_joint_nq(m, j) == 4 && mbs_joint_nv(m, j) == 3,
          "shoulder is no ball joint");
    const double *q, *v;
    if (mbs_model_keyframe(m, mbs_model_keyframe_id(m, "bent"), &q, &v)) {
        int iq = mbs_joint_idx_q(m, j);
        double n = sqrt(0.81 + 0.01 + 0.09 + 0.04), w[4] = {0.1 / n, 0.3 / n, 0.2 / n, 0.9 / n};
        CHECK_CLOSE(q + iq, w, 4, 1e-15, "ball quaternion [qx qy qz qw], normalised");
    } else {
        CHECK(0, "no keyframe 'bent'");
    }
    mbs_model_free(m);
    mbs_error_free(&err);
}

static void test_geom_inertia(void)
{
    mbs_error err;
    mbs_model *m = load_string("<mujoco><worldbody><body name='b'><joint/>"
                               "<geom type='sphere' size='0.1'/>"
                               "<geom type='box' size='0.1 0.2 0.3' mass='2' pos='1 0 0'/>"
                               "<geom type='cylinder' size='0.1 0.5' group='6'/>"
                               "</body></worldbody></mujoco>", &err);
    CHECK(m != NULL, "%s", err.msg);
    if (!m) return;
    double mass, com[3], Ic[9], ms = 1000 * 4.0 / 3 * PI * 1e-3;
    mbs_body_inertia(m, 0, &mass, com, Ic);
    CHECK(fabs(mass - (ms + 2)) < 1e-12, "mass %.15g (group 6 left out)", mass);
    CHECK(fabs(com[0] - 2 / (ms + 2)) < 1e-14, "com %.15g", com[0]);
    double cx = 2 / (ms + 2);
    double Iyy = 0.4 * ms * 0.01 + ms * cx * cx + 2 * (0.01 + 0.09) / 3 + 2 * (1 - cx) * (1 - cx);
    CHECK(fabs(Ic[4] - Iyy) < 1e-12, "Iyy %.15g, expected %.15g", Ic[4], Iyy);
    mbs_model_free(m);
    mbs_error_free(&err);
    /* an inertial wins over the geoms (inertiafromgeom auto); "true" takes the geoms */
    m = load_string("<mujoco><worldbody><body><joint/><inertial pos='0 0 0' mass='3' diaginertia='1 1 1'/>"
                    "<geom size='0.1'/></body></worldbody></mujoco>", &err);
    CHECK(m && fabs(mbs_model_mass(m) - 3) < 1e-15, "inertial ignored");
    mbs_model_free(m);
    mbs_error_free(&err);
    m = load_string("<mujoco><compiler inertiafromgeom='true'/><worldbody><body><joint/>"
                    "<inertial pos='0 0 0' mass='3' diaginertia='1 1 1'/><geom size='0.1'/></body></worldbody></mujoco>",
                    &err);
    CHECK(m && fabs(mbs_model_mass(m) - ms) < 1e-12, "inertiafromgeom true: mass %g", m ? mbs_model_mass(m) : 0);
    mbs_model_free(m);
    mbs_error_free(&err);
    /* a mesh geom's inertia needs the file: a warning, the geom left out */
    m = load_string("<mujoco><asset><mesh file='part.stl'/></asset><worldbody><body><joint/>"
                    "<geom type='mesh' mesh='part'/><geom size='0.1'/></body></worldbody></mujoco>", &err);
    CHECK(m && strstr(WARN(err), "t.xml:1: ") && strstr(WARN(err), "mesh"), "no mesh warning: %s", WARN(err));
    if (m) {
        CHECK(mbs_model_nvisuals(m) == 2 && strcmp(mbs_model_visual(m, 0)->mesh, "part.stl") == 0, "mesh visual");
    }
    mbs_model_free(m);
    mbs_error_free(&err);
}

/* tests/models/mjcf/no_oracle/mesh_scale.xml: a mesh's scale from its asset's defaults. */
static void test_mesh_scale(void)
{
    mbs_error err;
    mbs_model *m = load(DIR "no_oracle/mesh_scale.xml", &err);
    if (!m) return;
    static const char *const files[3] = {"parts/link.stl", "shell.obj", "own.stl"};
    static const double scales[3][3] = {{0.001, 0.001, 0.001}, {2, 3, 4}, {5, 5, 5}};
    CHECK(mbs_model_nvisuals(m) == 4, "%d visuals", mbs_model_nvisuals(m));
    for (int i = 0; i < 3 && i < mbs_model_nvisuals(m); i++) {
        const mbs_visual *v = mbs_model_visual(m, i);
        CHECK(v->type == MBS_SHAPE_MESH && strcmp(v->mesh, files[i]) == 0, "visual %d: '%s'", i, v->mesh);
        CHECK_CLOSE(v->size, scales[i], 3, 0, files[i]);
    }
    mbs_model_free(m);
    mbs_error_free(&err);
}

static void test_include(void)
{
    mbs_error err;
    mbs_model *m = load(DIR "include_main.xml", &err);
    if (!m) return;
    int j = mbs_joint_id(m, "i1");
    CHECK(j >= 0, "the included body's joint");
    if (j >= 0) {
        int iq = mbs_joint_idx_q(m, j);
        CHECK(fabs(mbs_model_upper_limits(m)[iq] - PI / 4) < 1e-15, "the included default's range");
        double mass;
        mbs_body_inertia(m, j, &mass, NULL, NULL);
        CHECK(fabs(mass - 5000 * 4.0 / 3 * PI * 0.05 * 0.05 * 0.05) < 1e-12, "included class heavy: %g", mass);
    }
    mbs_model_free(m);
    mbs_error_free(&err);
}

/* The Menagerie robot with its mesh references loads without the meshes, with the dynamics of the
 * mesh-free copy. */
static void test_meshes_not_needed(void)
{
    struct stat st;
    if (stat(REF_DIR, &st) != 0) {
        printf("skipped: ../shared/reference not found\n");
        return;
    }
    mbs_error e1, e2;
    mbs_model *a = load(REF_DIR "go2.xml", &e1), *b = load(REF_DIR "go2_nomesh.xml", &e2);
    if (a && b) {
        int nv = mbs_model_nv(a);
        CHECK(nv == mbs_model_nv(b) && mbs_model_nkeyframes(a) == 1, "go2: nv %d / %d", nv, mbs_model_nv(b));
        double q[32], Ma[32 * 32], Mb[32 * 32];
        unsigned long long seed = 7;
        mbs_random_configuration(a, &seed, q);
        mbs_data *da = mbs_data_new(a), *db = mbs_data_new(b);
        mbs_crba(a, da, q, Ma);
        mbs_crba(b, db, q, Mb);
        CHECK_CLOSE(Ma, Mb, nv * nv, 0, "go2 M with and without meshes");
        CHECK(mbs_model_nvisuals(a) > mbs_model_nvisuals(b), "mesh visuals kept");
        mbs_data_free(da);
        mbs_data_free(db);
    }
    mbs_model_free(a);
    mbs_model_free(b);
    mbs_error_free(&e1);
    mbs_error_free(&e2);
}

/* [model] mjcf and keyframe in a scenario: the keyframe is the initial state; base_position
 * overrides its base position only; both model keys at once are refused. */
static void test_scenario(void)
{
    const char *path = MBS_SOURCE_DIR "/tests/data/mjcf/free_bodies.ini";
    mbs_error err;
    mbs_scenario *sc = mbs_scenario_load(path, NULL, 0, &err);
    CHECK(sc != NULL, "%s", err.msg);
    mbs_error_free(&err);
    if (sc) {
        const mbs_model *m = mbs_scenario_model(sc);
        const double *q, *v;
        mbs_model_keyframe(m, mbs_model_keyframe_id(m, "pose"), &q, &v);
        CHECK_CLOSE(mbs_scenario_q0(sc), q, mbs_model_nq(m), 0, "q0 = the keyframe's q");
        CHECK_CLOSE(mbs_scenario_v0(sc), v, mbs_model_nv(m), 0, "v0 = the keyframe's v");
        mbs_sim *s = mbs_sim_new(sc, &err);
        CHECK(s != NULL, "%s", err.msg);
        mbs_error_free(&err);
        mbs_sim_free(s);
    }
    mbs_scenario_free(sc);
    const char *over[1] = {"model.base_position=0 0 2"};
    sc = mbs_scenario_load(path, over, 1, &err);
    if (sc) {
        const double *q0 = mbs_scenario_q0(sc);
        CHECK(q0[0] == 0 && q0[2] == 2 && q0[4] == 0.8 && q0[6] == 0.6, "base position over the keyframe's");
    }
    mbs_scenario_free(sc);
    mbs_error_free(&err);
    const char *both[1] = {"model.urdf=../../models/pendulum.urdf"};
    sc = mbs_scenario_load(path, both, 1, &err);
    CHECK(!sc && strstr(err.msg, "not both"), "urdf and mjcf: %s", err.msg);
    mbs_scenario_free(sc);
    mbs_error_free(&err);
    const char *nokey[1] = {"model.keyframe=nope"};
    sc = mbs_scenario_load(path, nokey, 1, &err);
    CHECK(!sc && strstr(err.msg, "no keyframe 'nope'"), "unknown keyframe: %s", err.msg);
    mbs_scenario_free(sc);
    mbs_error_free(&err);
}

/* ---- bad input ---- */

static void expect_fail_at(const char *xml, const char *frag1, const char *frag2, int line)
{
    mbs_error err;
    mbs_model *m = load_string(xml, &err);
    CHECK(m == NULL, "line %d: loaded although it should fail", line);
    mbs_model_free(m);
    CHECK(err.code != MBS_OK, "line %d: no error code", line);
    CHECK(strstr(err.msg, frag1) != NULL, "line %d: message '%s' lacks '%s'", line, err.msg, frag1);
    CHECK(!frag2 || strstr(err.msg, frag2) != NULL, "line %d: message '%s' lacks '%s'", line, err.msg, frag2);
    mbs_error_free(&err);
}
#define EXPECT_FAIL(xml, f1, f2) expect_fail_at(xml, f1, f2, __LINE__)

static void test_errors(void)
{
    /* broken XML: libxml2's first error, at its line */
    EXPECT_FAIL("<mujoco>\n<worldbody>\n<body>\n</worldbody>\n</mujoco>", "t.xml:4: not a valid XML document", NULL);
    EXPECT_FAIL("<robot name='r'/>", "t.xml:1:", "no <mujoco> root element");
    EXPECT_FAIL("<mujoco>\n<worldbody><body name='b'>\n<joint name='j' type='hinj'/></body></worldbody></mujoco>",
                "t.xml:3: joint 'j'", "type=\"hinj\": expected one of");
    EXPECT_FAIL("<mujoco>\n<worldbody><body name='b'>\n<composite type='grid'/></body></worldbody></mujoco>",
                "t.xml:3: body 'b'", "<composite> is not supported");
    EXPECT_FAIL("<mujoco>\n<flexcomp/></mujoco>", "t.xml:2:", "<flexcomp>");
    EXPECT_FAIL("<mujoco>\n<worldbody><body name='b'>\n<jiont/></body></worldbody></mujoco>", "t.xml:3: body 'b'",
                "unknown element <jiont>");
    EXPECT_FAIL("<mujoco><compiler autolimits='false'/><worldbody>\n<body name='b'><joint name='j' range='0 1'/>"
                "<geom size='1'/></body></worldbody></mujoco>", "t.xml:2: joint 'j'", "autolimits");
    EXPECT_FAIL("<mujoco><compiler autolimits='false'/><worldbody>\n<body name='b'><joint name='j' "
                "actuatorfrcrange='-1 1'/><geom size='1'/></body></worldbody></mujoco>", "t.xml:2: joint 'j'",
                "actuatorfrclimited");
    EXPECT_FAIL("<mujoco><worldbody>\n<body name='b'><joint name='j' actuatorfrcrange='1 2'/><geom size='1'/></body>"
                "</worldbody></mujoco>", "t.xml:2: joint 'j'", "must contain 0");
    EXPECT_FAIL("<mujoco><worldbody><body name='a'><joint/><geom size='1'/>\n<body name='b'><freejoint/><geom size='1'/>"
                "</body></body></worldbody></mujoco>", "t.xml:2:", "top-level");
    EXPECT_FAIL("<mujoco><worldbody><body name='a'>\n<geom class='nope' size='1'/></body></worldbody></mujoco>",
                "t.xml:2:", "unknown class 'nope'");
    EXPECT_FAIL("<mujoco><worldbody>\n<body name='a' quat='1 0 0 0' euler='0 0 1'/></worldbody></mujoco>", "t.xml:2:",
                "one orientation only");
    EXPECT_FAIL("<mujoco><worldbody><body name='a'><joint/>\n<inertial pos='0 0 0' mass='-1' diaginertia='1 1 1'/>"
                "</body></worldbody></mujoco>", "t.xml:2:", "negative mass");
    EXPECT_FAIL("<mujoco><worldbody><body name='a'><joint/>\n<geom size='x'/></body></worldbody></mujoco>", "t.xml:2:",
                "not a number");
    EXPECT_FAIL("<mujoco>\n<include file='no_such_file.xml'/></mujoco>", "t.xml:2: include", "no_such_file.xml");
    EXPECT_FAIL("<mujoco><worldbody><body><joint name='j'/><geom size='1'/></body></worldbody>\n<actuator>"
                "<motor joint='k'/></actuator></mujoco>", "t.xml:2:", "unknown joint 'k'");
    EXPECT_FAIL("<mujoco><worldbody><body><joint/><geom size='1'/></body></worldbody><keyframe>\n<key qpos='1 2'/>"
                "</keyframe></mujoco>", "t.xml:2: key 'key0'", "expected 1 number");
    /* found by the fuzzer: a group range far past an int (its cast was undefined) */
    EXPECT_FAIL("<mujoco>\n<compiler inertiagrouprange='08888888888888888888888888 2'/><worldbody/></mujoco>", "t.xml:2:",
                "inertiagrouprange must be two whole numbers");
    /* a missing file, a directory */
    mbs_error err;
    mbs_model *m = mbs_model_from_mjcf(DIR "no_such_model.xml", NULL, &err);
    CHECK(!m && err.code == MBS_ERR_IO && strstr(err.msg, "no_such_model.xml: cannot open"), "missing file: %s", err.msg);
    mbs_error_free(&err);
    m = mbs_model_from_mjcf(DIR, NULL, &err);
    CHECK(!m && strstr(err.msg, "directory"), "a directory: %s", err.msg);
    mbs_error_free(&err);
    m = mbs_model_from_mjcf(NULL, NULL, &err);
    CHECK(!m && err.code == MBS_ERR_ARG, "NULL path");
    mbs_error_free(&err);
    /* warnings name file, line and element: tendons, frictionloss */
    m = load_string("<mujoco><worldbody><body><joint name='j' frictionloss='1' stiffness='2'/><geom size='1'/></body>"
                    "</worldbody>\n<tendon><fixed><joint joint='j' coef='1'/></fixed></tendon></mujoco>", &err);
    CHECK(m != NULL, "%s", err.msg);
    CHECK(strstr(WARN(err), "t.xml:2: <tendon>") && strstr(WARN(err), "t.xml:1: joint 'j': frictionloss") &&
          strstr(WARN(err), "stiffness"), "warnings: %s", WARN(err));
    mbs_model_free(m);
    mbs_error_free(&err);
}

/* tests/models/mjcf/no_oracle/autolimits.xml: MuJoCo 2.3's defaults, which Menagerie's newer files
 * (Spot, Kinova Gen3) assume: autolimits true when <compiler> does not say; actuatorfrcrange as an
 * effort limit, the smaller of it and the actuators' capacity. */
static void test_autolimits_default(void)
{
    mbs_error err;
    mbs_model *m = load(DIR "no_oracle/autolimits.xml", &err);
    if (!m) return;
    CHECK(!err.warnings, "warnings: %s", WARN(err));
    const double *lo = mbs_model_lower_limits(m), *up = mbs_model_upper_limits(m), *eff = mbs_model_effort_limits(m);
    int q1 = mbs_joint_idx_q(m, mbs_joint_id(m, "j1")), q2 = mbs_joint_idx_q(m, mbs_joint_id(m, "j2")),
        q3 = mbs_joint_idx_q(m, mbs_joint_id(m, "j3"));
    CHECK(lo[q1] == -1 && up[q1] == 2 && lo[q2] == -0.5 && up[q2] == 0.5, "limits %g %g %g %g", lo[q1], up[q1], lo[q2],
          up[q2]);
    CHECK(isinf(lo[q3]) && isinf(up[q3]), "j3 has no range, so no limits: %g %g", lo[q3], up[q3]);
    /* j1: no actuator, the joint's bound; j2: min(2 · 50, 20); j3: its motor's 3, the bound switched off */
    int v1 = mbs_joint_idx_v(m, mbs_joint_id(m, "j1")), v2 = mbs_joint_idx_v(m, mbs_joint_id(m, "j2")),
        v3 = mbs_joint_idx_v(m, mbs_joint_id(m, "j3"));
    CHECK(eff[v1] == 30 && eff[v2] == 20 && eff[v3] == 3, "effort limits %g %g %g", eff[v1], eff[v2], eff[v3]);
    mbs_model_free(m);
    mbs_error_free(&err);
}

/* scenarios/go2_trot.ini: Menagerie's Go2 from its MJCF file trots forward with the gait generator
 * and leg IK of solo_trot (the file's joint damping, rotors and motor limits in), level and
 * with its feet alternating, also when shoved sideways mid-run. */
static void test_go2_trot(void)
{
    struct stat st;
    if (stat(REF_DIR, &st) != 0) {
        printf("skipped: ../shared/reference not found\n");
        return;
    }
    const char *pushes[] = {NULL, "run.push=2 0 40 0 0.1"};
    for (int k = 0; k < 2; k++) {
        mbs_error err;
        mbs_sim_summary sum;
        int rc = tm_run_scenario(MBS_SOURCE_DIR "/scenarios/go2_trot.ini", pushes + k, k, &sum, &err);
        CHECK(rc == MBS_OK, "go2_trot: %s", err.msg);
        if (rc == MBS_OK) {
            printf("  go2_trot%s: x %.3f m, tilt <= %.1f deg, %ld foot touch-downs, penetration <= %.1f mm\n",
                   k ? " pushed 40 N sideways" : "", sum.base_final[0], sum.max_tilt_deg, sum.foot_touchdowns,
                   1e3 * sum.max_penetration);
            CHECK(!sum.diverged && !sum.left_box && sum.base_final[0] > 0.6 && fabs(sum.base_final[1]) < 0.3 &&
                      sum.max_tilt_deg < 10 && sum.foot_touchdowns >= 50 && sum.max_penetration < 0.005,
                  "go2_trot%s: x %.3f y %.3f, tilt %.1f deg, %ld touch-downs, penetration %.4f m", k ? " pushed" : "",
                  sum.base_final[0], sum.base_final[1], sum.max_tilt_deg, sum.foot_touchdowns, sum.max_penetration);
        }
        mbs_error_free(&err);   /* the model's warning (frictionloss) */
    }
}

int main(void)
{
    RUN(test_defaults);
    RUN(test_orientation_forms);
    RUN(test_joint_anchor);
    RUN(test_free_keyframes_actuators);
    RUN(test_ball_keyframe);
    RUN(test_geom_inertia);
    RUN(test_include);
    RUN(test_mesh_scale);
    RUN(test_autolimits_default);
    RUN(test_meshes_not_needed);
    RUN(test_scenario);
    RUN(test_go2_trot);
    RUN(test_errors);
    return check_summary("test_mjcf");
}
