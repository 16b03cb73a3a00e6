/* test_urdf.c — the URDF loader: the reference robots load with Pinocchio's joint layout,
 * fixed joints merge exactly, and every kind of bad input fails with a message naming the
 * file, line and element (and never prints, never crashes, never fetches). */
#include <math.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <time.h>
#include <dirent.h>
#include <unistd.h>

#include <cjson/cJSON.h>
#include <libxml/parser.h>

#include "check.h"
#include "testmodels.h"
#include "mbs.h"
#include "../src/model/model_internal.h" /* joint placements (Rt, pt) have no public query */

/* a record's warnings as text, "" when it holds none (the record keeps NULL then) */
#define WARN(e) ((e).warnings ? (e).warnings : "")

#define BAD_DIR MBS_SOURCE_DIR "/tests/data/urdf_bad/"

static const mbs_urdf_options FLOATING = {.floating_base = 1}, FIXED = {.floating_base = 0}, STRICT = {.floating_base = 1, .strict = 1};

static mbs_model *load_string(const char *xml, const mbs_urdf_options *opt, mbs_error *err)
{
    return mbs_model_from_urdf_string(xml, "t.urdf", opt, err);
}

/* Loading must fail with `code` and a message holding both fragments (the second may be NULL). */
static void expect_fail_at(const char *xml, int code, const char *frag1, const char *frag2, int line)
{
    mbs_error err;
    mbs_model *m = load_string(xml, &FLOATING, &err);
    CHECK(m == NULL, "line %d: loaded although it should fail", line);
    mbs_model_free(m);
    CHECK(err.code == code, "line %d: code %d, expected %d (%s)", line, err.code, code, err.msg);
    CHECK(strstr(err.msg, frag1) != NULL, "line %d: message '%s' lacks '%s'", line, err.msg, frag1);
    CHECK(!frag2 || strstr(err.msg, frag2) != NULL, "line %d: message '%s' lacks '%s'", line, err.msg, frag2);
    CHECK(strncmp(err.msg, "t.urdf", 6) == 0, "line %d: message '%s' does not start with the file name", line, err.msg);
}
#define EXPECT_FAIL(xml, code, f1, f2) expect_fail_at(xml, code, f1, f2, __LINE__)

/* A robot of two links, `a` (root, 1 kg) and `b` (1 kg), joined by joint `j`; the macros
 * splice a bad piece into one place. */
#define LINK_A "<link name='a'><inertial><mass value='1'/><inertia ixx='1' ixy='0' ixz='0' iyy='1' iyz='0' izz='1'/></inertial></link>"
#define LINK_B "<link name='b'><inertial><mass value='1'/></inertial></link>"
#define JOINT_J(type, inner) "<joint name='j' type='" type "'><parent link='a'/><child link='b'/>" inner "</joint>"
#define ROBOT(body) "<robot name='r'>" body "</robot>"

/* ---- reference robots ---- */

static mbs_joint_type pinocchio_type(const char *t)
{
    if (strcmp(t, "JointModelFreeFlyer") == 0) return MBS_JOINT_FREEFLYER;
    if (strcmp(t, "JointModelPlanar") == 0) return MBS_JOINT_PLANAR;
    if (strncmp(t, "JointModelP", 11) == 0) return MBS_JOINT_PRISMATIC;
    return MBS_JOINT_REVOLUTE;
}

/* The project's model urdf/<robot>.urdf, then the published description it was written from
 * (../shared/reference/urdf/<robot>.urdf) when that folder is present: n paths (1 or 2). */
static int robot_files(const char *robot, char paths[2][4096])
{
    char rel[256];
    snprintf(paths[0], 4096, "%s", tm_path("urdf/"));
    snprintf(paths[0] + strlen(paths[0]), 4096 - strlen(paths[0]), "%s.urdf", robot);
    snprintf(rel, sizeof rel, "urdf/%s.urdf", robot);
    const char *ref = tm_shared_reference(rel);
    if (!ref) return 1;
    snprintf(paths[1], 4096, "%s", ref);
    return 2;
}

/* Joint names, order, types, parents, idx_q / idx_v, nq, nv, total mass and frame names
 * as Pinocchio has them in the reference vectors, for the file at path. */
static void check_against_json(const char *robot, const char *path)
{
    mbs_error err;
    mbs_model *m = mbs_model_from_urdf(path, NULL, &err);
    CHECK(m != NULL, "%s: %s", robot, err.msg);
    mbs_error_free(&err);
    cJSON *js = tm_reference_vectors(robot);
    CHECK(js != NULL, "%s: cannot read its reference vectors", robot);
    if (!m || !js) { mbs_model_free(m); cJSON_Delete(js); return; }
    CHECK(mbs_model_nq(m) == cJSON_GetObjectItem(js, "nq")->valueint, "%s: nq %d", robot, mbs_model_nq(m));
    CHECK(mbs_model_nv(m) == cJSON_GetObjectItem(js, "nv")->valueint, "%s: nv %d", robot, mbs_model_nv(m));
    double mass = cJSON_GetObjectItem(js, "total_mass")->valuedouble;
    CHECK(fabs(mbs_model_mass(m) - mass) <= 1e-12 * mass, "%s: mass %.17g vs %.17g", robot, mbs_model_mass(m), mass);
    const cJSON *joints = cJSON_GetObjectItem(js, "joints");
    CHECK(mbs_model_njoints(m) == cJSON_GetArraySize(joints), "%s: %d joints", robot, mbs_model_njoints(m));
    int j = 0;
    for (const cJSON *e = joints ? joints->child : NULL; e && j < mbs_model_njoints(m); e = e->next, j++) {
        const char *name = cJSON_GetObjectItem(e, "name")->valuestring;
        const char *parent = cJSON_GetObjectItem(e, "parent")->valuestring;
        CHECK(strcmp(mbs_joint_name(m, j), name) == 0, "%s: joint %d is %s, expected %s", robot, j, mbs_joint_name(m, j),
              name);
        int pj = mbs_joint_parent(m, j);
        CHECK(strcmp(pj < 0 ? "universe" : mbs_joint_name(m, pj), parent) == 0, "%s: parent of %s", robot, name);
        CHECK(mbs_joint_type_of(m, j) == pinocchio_type(cJSON_GetObjectItem(e, "type")->valuestring), "%s: type of %s",
              robot, name);
        CHECK(mbs_joint_idx_q(m, j) == cJSON_GetObjectItem(e, "idx_q")->valueint, "%s: idx_q of %s", robot, name);
        CHECK(mbs_joint_idx_v(m, j) == cJSON_GetObjectItem(e, "idx_v")->valueint, "%s: idx_v of %s", robot, name);
        CHECK(mbs_joint_nq(m, j) == cJSON_GetObjectItem(e, "nq")->valueint, "%s: nq of %s", robot, name);
        CHECK(mbs_joint_nv(m, j) == cJSON_GetObjectItem(e, "nv")->valueint, "%s: nv of %s", robot, name);
    }
    const cJSON *frames = cJSON_GetObjectItem(js, "frame_names");
    for (const cJSON *e = frames ? frames->child : NULL; e; e = e->next)
        CHECK(mbs_frame_id(m, e->valuestring) >= 0, "%s: no frame %s", robot, e->valuestring);
    cJSON_Delete(js);
    mbs_model_free(m);
}

static void test_reference_layouts(void)
{
    static const char *robots[3] = {"solo12", "romeo", "robosimian"};
    for (int r = 0; r < 3; r++) {
        char paths[2][4096];
        int n = robot_files(robots[r], paths);
        for (int k = 0; k < n; k++) check_against_json(robots[r], paths[k]);
    }
}

/* Solo-12's layout (the file at path, the project's model or the published description). */
static void check_solo12(const char *path)
{
    mbs_error err;
    mbs_model *m = mbs_model_from_urdf(path, NULL, &err);
    CHECK(m != NULL, "%s: %s", path, err.msg);
    if (!m) return;
    CHECK(err.code == 0 && err.nwarnings == 0, "solo12: code %d, %d warnings", err.code, err.nwarnings);
    CHECK(mbs_model_nq(m) == 19 && mbs_model_nv(m) == 18, "solo12 nq %d nv %d", mbs_model_nq(m), mbs_model_nv(m));
    CHECK(mbs_model_njoints(m) == 13, "solo12 has %d joints", mbs_model_njoints(m));
    static const char *names[13] = {"root_joint", "FL_HAA", "FL_HFE", "FL_KFE", "FR_HAA", "FR_HFE", "FR_KFE",
                                    "HL_HAA", "HL_HFE", "HL_KFE", "HR_HAA", "HR_HFE", "HR_KFE"};
    for (int j = 0; j < 13 && j < mbs_model_njoints(m); j++)
        CHECK(strcmp(mbs_joint_name(m, j), names[j]) == 0, "joint %d is %s", j, mbs_joint_name(m, j));
    CHECK(mbs_joint_type_of(m, 0) == MBS_JOINT_FREEFLYER, "root_joint is not a free-flyer");
    CHECK(strcmp(mbs_body_name(m, 0), "base_link") == 0, "body 0 is %s", mbs_body_name(m, 0));
    CHECK(mbs_joint_id(m, "FR_KFE") == 6, "FR_KFE at %d", mbs_joint_id(m, "FR_KFE"));
    int foot = mbs_frame_id(m, "FL_FOOT");
    CHECK(foot >= 0, "no FL_FOOT frame");
    CHECK(mbs_frame_type_of(m, foot) == MBS_FRAME_FIXED_LINK, "FL_FOOT is not a merged link");
    CHECK(mbs_frame_body(m, foot) == mbs_joint_id(m, "FL_KFE"), "FL_FOOT is on body %d", mbs_frame_body(m, foot));
    CHECK(mbs_frame_id(m, "no_such_frame") == -1, "an absent frame was found");
    int kfe = mbs_frame_id(m, "FL_KFE");
    CHECK(kfe >= 0 && mbs_frame_type_of(m, kfe) == MBS_FRAME_JOINT, "FL_KFE joint frame");
    mbs_model_free(m);

    m = mbs_model_from_urdf(path, &(mbs_urdf_options){.floating_base = 0}, &err);
    CHECK(m != NULL, "fixed solo12: %s", err.msg);
    if (!m) return;
    CHECK(mbs_model_nq(m) == 12 && mbs_model_nv(m) == 12, "fixed solo12 nq %d nv %d", mbs_model_nq(m), mbs_model_nv(m));
    CHECK(mbs_joint_parent(m, 0) == -1 && strcmp(mbs_joint_name(m, 0), "FL_HAA") == 0, "fixed solo12 first joint");
    int base = mbs_frame_id(m, "base_link");
    CHECK(base >= 0 && mbs_frame_body(m, base) == -1, "fixed base_link should be on the world");
    CHECK(fabs(mbs_model_mass(m) - 2.5000027900000004) < 1e-12, "fixed solo12 mass %.17g", mbs_model_mass(m));
    mbs_model_free(m);
}

/* Solo-12's layout, on the project's model and on the published description. */
static void test_solo12(void)
{
    char paths[2][4096];
    int n = robot_files("solo12", paths);
    for (int k = 0; k < n; k++) check_solo12(paths[k]);
}

/* The published Romeo description (two right-arm inertias break the triangle inequality): two
 * warnings naming the links, a refusal in strict mode. */
static void test_romeo_warnings(void)
{
    const char *path = tm_shared_reference("urdf/romeo.urdf");
    if (!path) return;
    mbs_error err;
    mbs_model *m = mbs_model_from_urdf(path, NULL, &err);
    CHECK(m != NULL, "romeo: %s", err.msg);
    CHECK(err.code == 0, "romeo code %d", err.code);
    CHECK(err.nwarnings == 2, "romeo: %d warnings:\n%s", err.nwarnings, WARN(err));
    CHECK(strstr(WARN(err), "RShoulderYawLink") && strstr(WARN(err), "RElbowYawLink"), "romeo warnings: %s",
          WARN(err));
    CHECK(strstr(WARN(err), "romeo.urdf:") && strstr(WARN(err), "triangle inequality"), "romeo warnings: %s",
          WARN(err));
    mbs_model_free(m);
    mbs_error_free(&err);

    m = mbs_model_from_urdf(path, &STRICT, &err);
    CHECK(m == NULL, "strict romeo loaded");
    mbs_model_free(m);
    CHECK(err.code == MBS_ERR_MODEL && strstr(err.msg, "triangle inequality") && strstr(err.msg, "romeo.urdf:"),
          "strict romeo: %d %s", err.code, err.msg);
    mbs_error_free(&err);
}

/* 1 when a and b are the same model to the bit: names, tree, joint frames, axes, limits, inertias
 * and frames (the visuals are what a viewer draws, and may differ). */
static int same_model(const mbs_model *a, const mbs_model *b)
{
    if (strcmp(a->name, b->name) || a->nbodies != b->nbodies || a->nq != b->nq || a->nv != b->nv ||
        a->nframes != b->nframes || memcmp(&a->world_mass, &b->world_mass, sizeof a->world_mass))
        return 0;
    for (int i = 0; i < a->nbodies; i++) {
        const mbs_body *x = &a->bodies[i], *y = &b->bodies[i];
        if (x->parent != y->parent || x->type != y->type || x->idx_q != y->idx_q || x->idx_v != y->idx_v ||
            strcmp(x->joint_name, y->joint_name) || strcmp(x->link_name, y->link_name) ||
            memcmp(x->axis, y->axis, sizeof x->axis) || memcmp(x->Rt, y->Rt, sizeof x->Rt) ||
            memcmp(x->pt, y->pt, sizeof x->pt) || memcmp(&x->mass, &y->mass, sizeof x->mass) ||
            memcmp(x->h, y->h, sizeof x->h) || memcmp(x->Io, y->Io, sizeof x->Io) ||
            memcmp(x->lower, y->lower, sizeof x->lower) || memcmp(x->upper, y->upper, sizeof x->upper) ||
            memcmp(x->vlimit, y->vlimit, sizeof x->vlimit) || memcmp(x->effort, y->effort, sizeof x->effort) ||
            memcmp(x->damping, y->damping, sizeof x->damping) || memcmp(x->friction, y->friction, sizeof x->friction))
            return 0;
    }
    for (int f = 0; f < a->nframes; f++) {
        const mbs_frame *x = &a->frames[f], *y = &b->frames[f];
        if (strcmp(x->name, y->name) || x->body != y->body || x->type != y->type || memcmp(x->R, y->R, sizeof x->R) ||
            memcmp(x->p, y->p, sizeof x->p))
            return 0;
    }
    return 1;
}

/* The project's compass gait and rimless wheel (urdf/, written by tools/gen/gen_models.py) load
 * with their layout; the descriptions of Drake they follow, when ../shared/reference is present,
 * load as the same models to the bit (fixed root, free flyer, planar root). */
static void test_drake_models(void)
{
    mbs_error err;
    mbs_model *m = mbs_model_from_urdf(tm_path("urdf/compass_gait.urdf"), &FIXED, &err);
    CHECK(m != NULL && err.nwarnings == 0, "compass gait: %s%s", err.msg, WARN(err));
    mbs_error_free(&err);
    if (m) {
        CHECK(mbs_model_njoints(m) == 2, "compass gait has %d joints", mbs_model_njoints(m));
        CHECK(mbs_joint_type_of(m, 0) == MBS_JOINT_PLANAR, "compass gait joint 0 is not planar");
        CHECK(mbs_joint_nq(m, 0) == 4 && mbs_joint_nv(m, 0) == 3, "planar nq %d nv %d", mbs_joint_nq(m, 0),
              mbs_joint_nv(m, 0));
        CHECK(mbs_model_nq(m) == 5 && mbs_model_nv(m) == 4, "compass gait nq %d nv %d", mbs_model_nq(m), mbs_model_nv(m));
        CHECK(fabs(mbs_model_mass(m) - 20) < 1e-12, "compass gait mass %g", mbs_model_mass(m));
        /* the left leg is welded to the hip: its 5 kg lands on the planar body at z = -0.5 */
        double mass, com[3];
        mbs_body_inertia(m, 0, &mass, com, NULL);
        CHECK(fabs(mass - 15) < 1e-12 && fabs(com[2] + 0.5 / 3) < 1e-12, "hip body mass %g com z %g", mass, com[2]);
        mbs_model_free(m);
    }
    m = mbs_model_from_urdf(tm_path("urdf/compass_gait.urdf"), NULL, &err);
    CHECK(m != NULL && mbs_model_nq(m) == 12, "floating compass gait: %s", err.msg);
    mbs_model_free(m);
    mbs_error_free(&err);
    m = mbs_model_from_urdf(tm_path("urdf/rimless_wheel.urdf"), NULL, &err);
    CHECK(m != NULL && err.nwarnings == 0, "rimless wheel: %s%s", err.msg, WARN(err));
    if (m) CHECK(mbs_model_nq(m) == 7 && mbs_frame_id(m, "spoke8") >= 0, "rimless wheel nq %d", mbs_model_nq(m));
    mbs_model_free(m);
    mbs_error_free(&err);

    static const char *const names[2] = {"compass_gait", "rimless_wheel"};
    static const mbs_urdf_options roots[3] = {{.floating_base = 0}, {.floating_base = 1}, {.floating_base = 2}};
    for (int k = 0; k < 2; k++) {
        char rel[64], ours[4096];
        snprintf(rel, sizeof rel, "urdf/%s.urdf", names[k]);
        snprintf(ours, sizeof ours, "%s", tm_path(rel));
        const char *published = tm_shared_reference(rel);
        if (!published) return;
        for (int r = 0; r < 3; r++) {
            mbs_error e1, e2;
            mbs_model *a = mbs_model_from_urdf(ours, &roots[r], &e1), *b = mbs_model_from_urdf(published, &roots[r], &e2);
            CHECK((a != NULL) == (b != NULL), "%s, floating_base %d: %s / %s", names[k], r, e1.msg, e2.msg);
            CHECK(r == 2 || a, "%s, floating_base %d: %s", names[k], r, e1.msg);
            if (a && b) CHECK(same_model(a, b), "%s, floating_base %d: not the model of %s", names[k], r, published);
            mbs_model_free(a);
            mbs_model_free(b);
            mbs_error_free(&e1);
            mbs_error_free(&e2);
        }
    }
}

/* ---- a hand-made tree with a fixed chain ---- */

/* Siblings are listed z_arm before a_side: the loader must visit a_side first (name order). */
static const char *chain_urdf =
    "<?xml version='1.0'?>\n"
    "<robot name='chain' xmlns='https://example.org/ns'>\n"
    "  <link name='base'><inertial><mass value='2'/>\n"
    "    <inertia ixx='1' ixy='0' ixz='0' iyy='1' iyz='0' izz='1'/></inertial></link>\n"
    "  <joint name='z_arm' type='revolute'><parent link='base'/><child link='arm'/>\n"
    "    <origin xyz='0 0 1'/><axis xyz='0 0 2'/>\n"
    "    <limit lower='-1' upper='1.5' velocity='2' effort='3'/><dynamics damping='0.5' friction='0.25'/></joint>\n"
    "  <link name='arm'><inertial><origin xyz='0.5 0 0'/><mass value='1'/>\n"
    "    <inertia ixx='0.1' ixy='0' ixz='0' iyy='0.2' iyz='0' izz='0.3'/></inertial>\n"
    "    <visual><geometry><mesh filename='package://x/arm.stl'/></geometry><material name='red'/></visual></link>\n"
    "  <joint name='weld1' type='fixed'><parent link='arm'/><child link='plate'/>\n"
    "    <origin xyz='1 0 0' rpy='0 0 1.5707963267948966'/></joint>\n"
    "  <link name='plate'><inertial><origin xyz='0.1 0 0'/><mass value='3'/>\n"
    "    <inertia ixx='0.4' ixy='0.01' ixz='0' iyy='0.5' iyz='0' izz='0.6'/></inertial></link>\n"
    "  <joint name='weld2' type='fixed'><parent link='plate'/><child link='tip'/><origin xyz='0 2 0'/></joint>\n"
    "  <link name='tip'><inertial><mass value='1'/></inertial></link>\n"
    "  <joint name='slide' type='prismatic'><parent link='tip'/><child link='slider'/>\n"
    "    <origin xyz='0 0 0.5'/><axis xyz='1 0 0'/></joint>\n"
    "  <link name='slider'><inertial><mass value='1'/>\n"
    "    <inertia ixx='0.01' ixy='0' ixz='0' iyy='0.01' iyz='0' izz='0.01'/></inertial></link>\n"
    "  <joint name='a_side' type='continuous'><parent link='base'/><child link='side'/>\n"
    "    <origin xyz='0 1 0'/><axis xyz='0 1 0'/><limit effort='7' velocity='8'/></joint>\n"
    "  <link name='side'><inertial><mass value='0.5'/></inertial><collision/></link>\n"
    "  <transmission name='t'><joint name='z_arm'/></transmission>\n"
    "  <gazebo reference='arm'><mu1>0.5</mu1></gazebo>\n"
    "</robot>\n";

static void check_frame(const mbs_model *m, const char *name, mbs_frame_type type, int body, const double R[9],
                        const double p[3])
{
    int f = mbs_frame_id(m, name);
    CHECK(f >= 0, "no frame %s", name);
    if (f < 0) return;
    CHECK(mbs_frame_type_of(m, f) == type, "frame %s has type %d", name, (int)mbs_frame_type_of(m, f));
    CHECK(mbs_frame_body(m, f) == body, "frame %s on body %d, expected %d", name, mbs_frame_body(m, f), body);
    double Rf[9], pf[3];
    mbs_frame_local_placement(m, f, Rf, pf);
    CHECK_CLOSE(Rf, R, 9, 1e-15, name);
    CHECK_CLOSE(pf, p, 3, 1e-15, name);
}

static void test_fixed_chain(void)
{
    mbs_error err;
    mbs_model *m = load_string(chain_urdf, &FLOATING, &err);
    CHECK(m != NULL, "chain: %s", err.msg);
    if (!m) return;
    CHECK(mbs_model_njoints(m) == 4 && mbs_model_nq(m) == 10 && mbs_model_nv(m) == 9, "chain: %d joints nq %d nv %d",
          mbs_model_njoints(m), mbs_model_nq(m), mbs_model_nv(m));
    static const char *order[4] = {"root_joint", "a_side", "z_arm", "slide"};
    static const int parent[4] = {-1, 0, 0, 2};
    for (int j = 0; j < 4; j++) {
        CHECK(strcmp(mbs_joint_name(m, j), order[j]) == 0, "chain joint %d is %s", j, mbs_joint_name(m, j));
        CHECK(mbs_joint_parent(m, j) == parent[j], "chain joint %d parent %d", j, mbs_joint_parent(m, j));
    }
    CHECK(strcmp(mbs_model_name(m), "chain") == 0 && strcmp(mbs_body_name(m, 2), "arm") == 0, "names");
    CHECK(fabs(mbs_model_mass(m) - 8.5) < 1e-15, "chain mass %.17g", mbs_model_mass(m));

    /* arm (1 kg at (0.5,0,0)) + plate (3 kg, rotated 90° about z, at (1,0.1,0)) + tip (1 kg at (-1,0,0)):
     * com = (0.5, 0.06, 0); Ic = sum of rotated Ic + parallel-axis terms about that com, by hand. */
    double mass, com[3], Ic[9];
    mbs_body_inertia(m, 2, &mass, com, Ic);
    const double com_ref[3] = {0.5, 0.06, 0};
    const double Ic_ref[9] = {0.612, -0.16, 0, -0.16, 3.6, 0, 0, 0, 3.912};
    CHECK(fabs(mass - 5) < 1e-15, "merged mass %.17g", mass);
    CHECK_CLOSE(com, com_ref, 3, 1e-14, "merged com");
    CHECK_CLOSE(Ic, Ic_ref, 9, 1e-13, "merged inertia");

    const double I3[9] = {1, 0, 0, 0, 1, 0, 0, 0, 1}, Rz[9] = {0, 1, 0, -1, 0, 0, 0, 0, 1}, o[3] = {0, 0, 0};
    const double p_plate[3] = {1, 0, 0}, p_tip[3] = {-1, 0, 0};
    check_frame(m, "plate", MBS_FRAME_FIXED_LINK, 2, Rz, p_plate);
    check_frame(m, "weld1", MBS_FRAME_FIXED_JOINT, 2, Rz, p_plate);
    check_frame(m, "tip", MBS_FRAME_FIXED_LINK, 2, Rz, p_tip);
    check_frame(m, "weld2", MBS_FRAME_FIXED_JOINT, 2, Rz, p_tip);
    check_frame(m, "arm", MBS_FRAME_BODY, 2, I3, o);
    check_frame(m, "z_arm", MBS_FRAME_JOINT, 2, I3, o);
    check_frame(m, "base", MBS_FRAME_BODY, 0, I3, o);
    check_frame(m, "root_joint", MBS_FRAME_JOINT, 0, I3, o);
    check_frame(m, "slider", MBS_FRAME_BODY, 3, I3, o);
    CHECK(mbs_model_nframes(m) == 12, "chain has %d frames", mbs_model_nframes(m));

    /* slide hangs off the merged tip: its placement composes the fixed chain */
    const mbs_body *b = &m->bodies[3];
    const double p_slide[3] = {-1, 0, 0.5}, x[3] = {1, 0, 0}, z[3] = {0, 0, 1};
    CHECK_CLOSE(b->Rt, Rz, 9, 1e-15, "slide rotation");
    CHECK_CLOSE(b->pt, p_slide, 3, 1e-15, "slide position");
    CHECK_CLOSE(b->axis, x, 3, 0, "slide axis");
    CHECK_CLOSE(m->bodies[2].axis, z, 3, 0, "z_arm axis (normalised)");

    const double *lo = mbs_model_lower_limits(m), *up = mbs_model_upper_limits(m);
    CHECK(lo[8] == -1 && up[8] == 1.5, "z_arm limits %g %g", lo[8], up[8]);
    CHECK(mbs_model_velocity_limits(m)[7] == 2 && mbs_model_effort_limits(m)[7] == 3, "z_arm velocity / effort");
    CHECK(mbs_model_damping(m)[7] == 0.5 && mbs_model_friction(m)[7] == 0.25, "z_arm dynamics");
    CHECK(lo[7] == -INFINITY && up[7] == INFINITY, "continuous a_side is bounded: %g %g", lo[7], up[7]);
    CHECK(mbs_model_effort_limits(m)[6] == 7 && mbs_model_velocity_limits(m)[6] == 8, "a_side effort / velocity");
    CHECK(lo[9] == -INFINITY && up[9] == INFINITY && mbs_model_damping(m)[8] == 0, "slide without <limit>");
    mbs_model_free(m);

    m = load_string(chain_urdf, &FIXED, &err);
    CHECK(m != NULL, "fixed chain: %s", err.msg);
    if (!m) return;
    CHECK(mbs_model_njoints(m) == 3 && mbs_model_nq(m) == 3, "fixed chain: %d joints", mbs_model_njoints(m));
    check_frame(m, "base", MBS_FRAME_FIXED_LINK, -1, I3, o);
    CHECK(fabs(mbs_model_mass(m) - 8.5) < 1e-15, "fixed chain mass %.17g (the base counts)", mbs_model_mass(m));
    const double p_side[3] = {0, 1, 0};
    CHECK_CLOSE(m->bodies[0].pt, p_side, 3, 0, "a_side placement on the world");
    mbs_model_free(m);
}

/* A link fixed to a fixed-base root stays on the world; a point mass and a zero inertia load. */
static void test_world_links(void)
{
    mbs_error err;
    mbs_model *m = load_string(ROBOT(LINK_A LINK_B "<link name='c'><inertial><mass value='0.25'/></inertial></link>"
                                     "<joint name='f' type='fixed'><parent link='a'/><child link='c'/>"
                                     "<origin xyz='0 0 3' rpy='0.1 0.2 0.3'/></joint>" JOINT_J("prismatic", "")),
                               &FIXED, &err);
    CHECK(m != NULL, "world links: %s", err.msg);
    if (!m) return;
    int c = mbs_frame_id(m, "c");
    CHECK(c >= 0 && mbs_frame_body(m, c) == -1 && mbs_frame_type_of(m, c) == MBS_FRAME_FIXED_LINK, "c on world");
    double R[9], p[3];
    mbs_frame_local_placement(m, c, R, p);
    /* Rz(0.3) Ry(0.2) Rx(0.1), column-major */
    double cr = cos(0.1), sr = sin(0.1), cp = cos(0.2), sp = sin(0.2), cy = cos(0.3), sy = sin(0.3);
    const double Rref[9] = {cy * cp, sy * cp, -sp, cy * sp * sr - sy * cr, sy * sp * sr + cy * cr, cp * sr,
                            cy * sp * cr + sy * sr, sy * sp * cr - cy * sr, cp * cr};
    const double p_ref[3] = {0, 0, 3};
    CHECK_CLOSE(R, Rref, 9, 1e-15, "rpy");
    CHECK_CLOSE(p, p_ref, 3, 0, "xyz");
    CHECK(fabs(mbs_model_mass(m) - 2.25) < 1e-15, "mass %g", mbs_model_mass(m));
    CHECK(mbs_model_njoints(m) == 1 && mbs_joint_type_of(m, 0) == MBS_JOINT_PRISMATIC, "one prismatic joint");
    int j = mbs_frame_id(m, "j");
    CHECK(j >= 0 && mbs_frame_type_of(m, j) == MBS_FRAME_JOINT && mbs_frame_body(m, j) == 0, "joint frame j");
    CHECK(mbs_frame_id(m, "f") >= 0 && mbs_frame_type_of(m, mbs_frame_id(m, "f")) == MBS_FRAME_FIXED_JOINT, "frame f");
    mbs_model_free(m);

    /* <inertial> origin rotates the inertia into the link frame: Rz(90°) swaps ixx and iyy */
    m = load_string(ROBOT("<link name='a'><inertial><origin xyz='1 2 3' rpy='0 0 1.5707963267948966'/><mass value='2'/>"
                          "<inertia ixx='1' ixy='0' ixz='0' iyy='2' iyz='0' izz='3'/></inertial></link>"),
                    &FLOATING, &err);
    CHECK(m != NULL, "rotated inertial: %s", err.msg);
    if (!m) return;
    double mass, com[3], Ic[9];
    mbs_body_inertia(m, 0, &mass, com, Ic);
    const double c_ref[3] = {1, 2, 3}, I_ref[9] = {2, 0, 0, 0, 1, 0, 0, 0, 3};
    CHECK_CLOSE(com, c_ref, 3, 1e-15, "inertial com");
    CHECK_CLOSE(Ic, I_ref, 9, 1e-15, "inertial rotation");
    mbs_model_free(m);
}

/* ---- bad input ---- */

static void test_io_and_xml_errors(void)
{
    mbs_error err;
    mbs_model *m = mbs_model_from_urdf(BAD_DIR "does_not_exist.urdf", NULL, &err);
    CHECK(m == NULL && err.code == MBS_ERR_IO, "missing file: %d %s", err.code, err.msg);
    CHECK(strstr(err.msg, "does_not_exist.urdf") && strstr(err.msg, "cannot open"), "missing file: %s", err.msg);
    m = mbs_model_from_urdf(BAD_DIR, NULL, &err);
    CHECK(m == NULL && err.code == MBS_ERR_IO && strstr(err.msg, "urdf_bad/: it is a directory"), "directory: %d %s",
          err.code, err.msg);

    EXPECT_FAIL("<robot name='r'>\n<link name='a'>\n</robot>", MBS_ERR_PARSE, "t.urdf:3:", "not a valid XML");
    EXPECT_FAIL("this is not XML", MBS_ERR_PARSE, "t.urdf:1:", NULL);
    EXPECT_FAIL("", MBS_ERR_PARSE, "t.urdf", NULL);
    m = mbs_model_from_urdf(BAD_DIR "not_xml.urdf", NULL, &err);
    CHECK(m == NULL && err.code == MBS_ERR_PARSE && strstr(err.msg, "not_xml.urdf:2:"), "not_xml file: %s", err.msg);
    EXPECT_FAIL("<?xml version='1.0'?>\n<sdf><model/></sdf>", MBS_ERR_MODEL, "t.urdf:2: robot: no <robot> root element",
                "<sdf>");
    /* the first error (the cause) is reported, not libxml2's last one at the end of the file */
    m = mbs_model_from_urdf(BAD_DIR "unclosed_inertia.urdf", NULL, &err);
    CHECK(m == NULL && err.code == MBS_ERR_PARSE && strstr(err.msg, "unclosed_inertia.urdf:9: not a valid XML document") &&
          strstr(err.msg, "tag mismatch: inertia line 8 and inertial"), "unclosed <inertia>: %s", err.msg);
    EXPECT_FAIL("<robot name='r'>\n<link name='a'>\n<inertial>\n<mass value='1'>\n</inertial>\n</link>\n\n\n</robot>",
                MBS_ERR_PARSE, "t.urdf:5: not a valid XML document: Opening and ending tag mismatch: mass line 4", NULL);
    m = mbs_model_from_urdf_string(NULL, "x", NULL, &err);
    CHECK(m == NULL && err.code == MBS_ERR_ARG, "NULL string");
}

static void test_structure_errors(void)
{
    EXPECT_FAIL(ROBOT(""), MBS_ERR_MODEL, "no root link", NULL);
    EXPECT_FAIL(ROBOT(LINK_A LINK_B), MBS_ERR_MODEL, "two root links 'a' and 'b'", NULL);
    EXPECT_FAIL(ROBOT(LINK_A LINK_B JOINT_J("revolute", "")
                      "<joint name='k' type='revolute'><parent link='b'/><child link='a'/></joint>"),
                MBS_ERR_MODEL, "cycle", NULL);
    /* a cycle next to a proper root */
    EXPECT_FAIL(ROBOT("<link name='root'><inertial><mass value='1'/></inertial></link>" LINK_A LINK_B
                      JOINT_J("revolute", "") "<joint name='k' type='revolute'><parent link='b'/><child link='a'/></joint>"),
                MBS_ERR_MODEL, "cycle through link", NULL);
    EXPECT_FAIL(ROBOT(LINK_A "<joint name='k' type='fixed'><parent link='a'/><child link='a'/></joint>"), MBS_ERR_MODEL,
                "joint 'k'", "cycle");
    EXPECT_FAIL(ROBOT(LINK_A LINK_B "<joint name='j' type='revolute'><parent link='x'/><child link='b'/></joint>"),
                MBS_ERR_MODEL, "joint 'j': unknown link 'x' in <parent>", NULL);
    EXPECT_FAIL(ROBOT(LINK_A LINK_B "<joint name='j' type='revolute'><parent link='a'/><child link='y'/></joint>"),
                MBS_ERR_MODEL, "joint 'j': unknown link 'y' in <child>", NULL);
    EXPECT_FAIL(ROBOT(LINK_A LINK_B "<link name='c'/>" JOINT_J("revolute", "")
                      "<joint name='k' type='revolute'><parent link='c'/><child link='b'/></joint>"),
                MBS_ERR_MODEL, "link 'b' has two parent joints ('j' and 'k')", NULL);
    EXPECT_FAIL(ROBOT(LINK_A LINK_A), MBS_ERR_MODEL, "link 'a': duplicate link name", NULL);
    EXPECT_FAIL(ROBOT(LINK_A LINK_B "<link name='c'/>" JOINT_J("revolute", "")
                      "<joint name='j' type='revolute'><parent link='a'/><child link='c'/></joint>"),
                MBS_ERR_MODEL, "joint 'j': duplicate joint name", NULL);
    EXPECT_FAIL(ROBOT(LINK_A LINK_B "<joint name='root_joint' type='revolute'><parent link='a'/><child link='b'/></joint>"),
                MBS_ERR_MODEL, "root_joint", NULL);
}

/* A massless moving subtree loads with a warning (file, line, link, joint); its mass matrix is
 * singular and the factorisation says so instead of dividing by zero; the bounds (MuJoCo's
 * boundmass / boundinertia) make it regular. */
static void test_massless_subtree(void)
{
    const char *xmls[2] = {"<robot name='r'>\n" LINK_A "\n<link name='b'/>\n" JOINT_J("revolute", "") "\n</robot>",
                           "<robot name='r'>\n" LINK_A "\n<link name='b'><inertial><mass value='0'/></inertial></link>\n"
                           JOINT_J("revolute", "") "\n</robot>"};
    for (int k = 0; k < 2; k++) {
        mbs_error err;
        mbs_model *m = load_string(xmls[k], &FLOATING, &err);
        CHECK(m != NULL && err.code == 0, "massless %d: %s", k, err.msg);
        CHECK(err.nwarnings == 1 && strstr(WARN(err), "t.urdf:4: link 'b': joint 'j' moves a massless subtree"),
              "massless %d warning: %s", k, WARN(err));
        mbs_error_free(&err);
        if (!m) continue;
        mbs_data *d = mbs_data_new(m);
        int nv = mbs_model_nv(m);
        double q[8], M[49];
        mbs_neutral(m, q);
        mbs_crba(m, d, q, M);
        CHECK(nv == 7 && M[6 + 7 * 6] == 0, "massless %d: M(j, j) = %g", k, M[6 + 7 * 6]);
        CHECK(mbs_ltdl(m, d, M) == MBS_ERR_MODEL, "massless %d: the singular M factorised", k);
        M[0] = -7;
        CHECK(mbs_minverse(m, d, q, M) == MBS_ERR_MODEL && M[0] == -7, "massless %d: the singular M inverted", k);
        mbs_data_free(d);
        mbs_model_free(m);
    }
    /* only the top of a massless subtree is reported */
    mbs_error err;
    mbs_model *m = load_string(ROBOT(LINK_A "<link name='b'/><link name='c'/>" JOINT_J("revolute", "")
                                     "<joint name='k' type='revolute'><parent link='b'/><child link='c'/></joint>"),
                               &FLOATING, &err);
    CHECK(m != NULL && err.nwarnings == 1 && strstr(WARN(err), "joint 'j'"), "chain: %s%s", err.msg, WARN(err));
    mbs_model_free(m);
    mbs_error_free(&err);
    /* the builder's finalize warns too, into a record it resets first (callers pass uninitialised ones) */
    m = mbs_model_new("massless");
    memset(&err, 0xa5, sizeof err);
    const double axis[3] = {0, 0, 1};
    CHECK(m && mbs_model_add_joint(m, -1, MBS_JOINT_REVOLUTE, "j", NULL, NULL, axis, NULL) == 0, "builder");
    CHECK(m && mbs_model_finalize(m, &err) == MBS_OK && err.nwarnings == 1 && err.code == 0 &&
          strstr(WARN(err), "joint 'j' moves body"), "builder finalize: %s", WARN(err));
    mbs_model_free(m);
    mbs_error_free(&err);
}

/* The inertia checks judge a defect against the scale of the link and of the body it is merged
 * into (tolerance 1e-6, src/model/urdf.c): round-off passes even in strict mode, a real violation
 * is a warning (an error when strict), a negative moment beyond round-off an error. */
static void test_inertia_tolerance(void)
{
    mbs_error err;
    /* iCub's head: a 1.3 kg point mass off the joint whose zero inertia kept ixz = 2.4e-35 */
    mbs_model *m = load_string(ROBOT(LINK_A "<link name='b'><inertial><origin xyz='0.0185 -0.1108 6.78454e-18'/>"
                                     "<mass value='1.33687'/><inertia ixx='0' ixy='0' ixz='2.40741e-35' iyy='0' iyz='0' "
                                     "izz='0'/></inertial></link>" JOINT_J("revolute", "")),
                               &STRICT, &err);
    CHECK(m != NULL && err.nwarnings == 0, "point mass with round-off: %s%s", err.msg, WARN(err));
    mbs_model_free(m);
    /* TIAGo's antenna: a 1e-6 kg placeholder (moments -3.5e-8 3.5e-8 9.1e-8) fixed to a 30 kg base */
#define ANTENNA "<inertial><mass value='0.000001'/><inertia ixx='0.00000002371' ixy='0.00000006119' " \
                "ixz='0.00000001179' iyy='0.00000002833' iyz='0.00000000774' izz='0.00000003849'/></inertial>"
    m = load_string(ROBOT("<link name='a'><inertial><mass value='30'/><inertia ixx='1' ixy='0' ixz='0' iyy='1.5' "
                          "iyz='0' izz='2'/></inertial></link><link name='b'>" ANTENNA "</link>" JOINT_J("fixed", "")),
                    &STRICT, &err);
    CHECK(m != NULL && err.nwarnings == 0, "antenna on a heavy body: %s%s", err.msg, WARN(err));
    mbs_model_free(m);
    /* the same tensor as the only inertia of its body is a real defect at that scale */
    m = load_string("<robot name='r'>\n" LINK_A "\n<link name='b'>\n" ANTENNA "</link>\n" JOINT_J("revolute", "")
                    "</robot>", &FLOATING, &err);
    CHECK(m == NULL && err.code == MBS_ERR_MODEL && strstr(err.msg, "t.urdf:4: link 'b': inertia is not positive semi-definite"),
          "antenna alone: %s", err.msg);
    mbs_model_free(m);
#undef ANTENNA
    /* a triangle defect of 1e-9 of the body's scale is round-off; one of 1e-4 is real */
    const char *tri[2] = {"<robot name='r'>\n<link name='a'>\n<inertial><mass value='1'/>\n"
                          "<inertia ixx='1' ixy='0' ixz='0' iyy='1' iyz='0' izz='2.000000002'/></inertial></link>\n</robot>",
                          "<robot name='r'>\n<link name='a'>\n<inertial><mass value='1'/>\n"
                          "<inertia ixx='1' ixy='0' ixz='0' iyy='1' iyz='0' izz='2.0004'/></inertial></link>\n</robot>"};
    m = load_string(tri[0], &STRICT, &err);
    CHECK(m != NULL && err.nwarnings == 0, "triangle round-off: %s%s", err.msg, WARN(err));
    mbs_model_free(m);
    m = load_string(tri[1], &FLOATING, &err);
    CHECK(m != NULL && err.nwarnings == 1 && strstr(WARN(err), "t.urdf:4: link 'a': inertia violates the triangle "
                                                                   "inequality by 0.0004"),
          "triangle 1e-4: %s%s", err.msg, WARN(err));
    mbs_model_free(m);
    mbs_error_free(&err);
    m = load_string(tri[1], &STRICT, &err);
    CHECK(m == NULL && err.code == MBS_ERR_MODEL && strstr(err.msg, "t.urdf:4: link 'a': inertia violates the triangle"),
          "triangle 1e-4 strict: %s", err.msg);
    mbs_model_free(m);
}

/* Every real description of the shared collection (../shared/reference/urdf/collection/) that
 * Pinocchio 3.7 loads (its README), mbs loads, and its dynamics are finite; the two Pinocchio
 * refuses are refused with the reason. */
static void test_urdf_collection(void)
{
    const char *found = tm_shared_reference("urdf/collection/");
    if (!found) return;
    char dirpath[4096];
    snprintf(dirpath, sizeof dirpath, "%s", found);
    static const struct { const char *file, *refused; } files[] = {
        {"a1.urdf", NULL}, {"alex_psyonic_hands.urdf", NULL}, {"allegro_right_hand.urdf", NULL},
        {"anymal_b.urdf", NULL}, {"b1.urdf", NULL}, {"bolt.urdf", NULL}, {"bravo7_gripper.urdf", NULL},
        {"falcon.urdf", "falcon.urdf:180: joint 'top_propeller_joint': unknown link 'Z_propeller' in <child>"},
        {"finger_edu.urdf", NULL}, {"go1.urdf", NULL}, {"go2.urdf", NULL}, {"hyq_no_sensors.urdf", NULL},
        {"icub.urdf", NULL}, {"kinova.urdf", NULL}, {"pr2.urdf", NULL}, {"simple_humanoid.urdf", NULL},
        {"talos_reduced.urdf", NULL}, {"tiago_dual.urdf", NULL}, {"ur10_robot.urdf", NULL},
        {"ur3.urdf", "ur3.urdf:6: robot: no root link (the robot has no <link>)"}, {"z1.urdf", NULL},
    };
    const int n = (int)(sizeof files / sizeof *files);
    /* the list is the whole folder */
    int on_disk = 0;
    DIR *dir = opendir(dirpath);
    CHECK(dir != NULL, "cannot open %s", dirpath);
    for (struct dirent *e; dir && (e = readdir(dir));) {
        size_t len = strlen(e->d_name);
        if (len < 5 || strcmp(e->d_name + len - 5, ".urdf") != 0) continue;
        on_disk++;
        int listed = 0;
        for (int k = 0; k < n; k++) listed |= strcmp(files[k].file, e->d_name) == 0;
        CHECK(listed, "%s is not in the test's list", e->d_name);
    }
    if (dir) closedir(dir);
    CHECK(on_disk == n, "%d files on disk, %d listed", on_disk, n);
    int loaded = 0;
    for (int k = 0; k < n; k++) {
        char path[4096];
        snprintf(path, sizeof path, "%s%s", dirpath, files[k].file);
        mbs_error err;
        mbs_model *m = mbs_model_from_urdf(path, NULL, &err);
        if (files[k].refused) {
            CHECK(m == NULL && err.code == MBS_ERR_MODEL && strstr(err.msg, files[k].refused),
                  "%s: expected refusal '%s', got '%s'", files[k].file, files[k].refused, err.msg);
            mbs_model_free(m);
            mbs_error_free(&err);
            continue;
        }
        CHECK(m != NULL, "%s: %s", files[k].file, err.msg);
        if (!m) { mbs_error_free(&err); continue; }
        loaded++;
        int massless = strstr(WARN(err), "massless") != NULL;
        CHECK(massless == (strcmp(files[k].file, "bravo7_gripper.urdf") == 0), "%s: warnings %s", files[k].file,
              WARN(err));
        if (massless) {   /* the gripper's fingers have no inertia: load it with MuJoCo-style bounds */
            mbs_model_free(m);
            mbs_urdf_options b = {.floating_base = 1, .bound_mass = 1e-3, .bound_inertia = 1e-6};
            mbs_error_free(&err);
            m = mbs_model_from_urdf(path, &b, &err);
            CHECK(m != NULL && !strstr(WARN(err), "massless"), "%s bounded: %s%s", files[k].file, err.msg, WARN(err));
            if (!m) { mbs_error_free(&err); continue; }
        }
        mbs_error_free(&err);
        int nq = mbs_model_nq(m), nv = mbs_model_nv(m);
        mbs_data *d = mbs_data_new(m);
        double *q = calloc((size_t)nq, sizeof *q), *v = calloc((size_t)nv, sizeof *v);
        double *tau = calloc((size_t)nv, sizeof *tau), *ddq = calloc((size_t)nv, sizeof *ddq);
        double *M = calloc((size_t)nv * (size_t)nv, sizeof *M);
        mbs_neutral(m, q);
        mbs_crba(m, d, q, M);
        CHECK(mbs_ltdl(m, d, M) == MBS_OK, "%s: M is not positive definite", files[k].file);
        mbs_aba(m, d, q, v, tau, ddq);
        int finite = 1;
        for (int i = 0; i < nv; i++) finite &= isfinite(ddq[i]);
        CHECK(finite, "%s: aba at the neutral configuration is not finite", files[k].file);
        /* ABA (in world axes) solves M q̈ = τ − h at random states: its backward error, the residual
         * against |M| |q̈| + |τ − h|, is rounding's, however badly M is conditioned (iCub's tiny
         * links make q̈ itself sensitive to 1e-8) */
        double *h = calloc((size_t)nv, sizeof *h), worst = 0;
        unsigned long long seed = 5 + (unsigned long long)k;
        for (int sample = 0; sample < 5; sample++) {
            mbs_random_configuration(m, &seed, q);
            for (int i = 0; i < nv; i++) {
                v[i] = tm_uniform(&seed, -1, 1);
                tau[i] = tm_uniform(&seed, -1, 1);
                ddq[i] = 0;
            }
            mbs_rnea(m, d, q, v, ddq, h);
            mbs_crba(m, d, q, M);
            mbs_aba(m, d, q, v, tau, ddq);
            double mn = 0, an = 0, bn = 0, rn = 0;
            for (int i = 0; i < nv; i++) {
                double r = h[i] - tau[i];
                for (int j = 0; j < nv; j++) {
                    r += M[i + (size_t)nv * j] * ddq[j];
                    mn = fmax(mn, fabs(M[i + (size_t)nv * j]));
                }
                an = fmax(an, fabs(ddq[i]));
                bn = fmax(bn, fabs(tau[i] - h[i]));
                rn = fmax(rn, fabs(r));
            }
            worst = fmax(worst, rn / (nv * mn * an + bn));
        }
        CHECK(worst < 1e-12, "%s: aba's backward error %.1e", files[k].file, worst);
        free(h);
        free(q); free(v); free(tau); free(ddq); free(M);
        mbs_data_free(d);
        mbs_model_free(m);
    }
    CHECK(loaded == 19, "%d of the 19 files Pinocchio loads loaded", loaded);
}

static void test_value_errors(void)
{
    EXPECT_FAIL("<robot name='r'>\n" LINK_A "\n<link name='b'>\n<inertial><mass value='-1'/></inertial></link>\n</robot>",
                MBS_ERR_MODEL, "t.urdf:4: link 'b': negative mass", NULL);
    EXPECT_FAIL(ROBOT("<link name='a'><inertial><mass value='1'/>"
                      "<inertia ixx='1' ixy='2' ixz='0' iyy='1' iyz='0' izz='1'/></inertial></link>"),
                MBS_ERR_MODEL, "link 'a': inertia is not positive semi-definite", NULL);
    /* finite numbers whose products are not (found by make fuzz) */
    EXPECT_FAIL(ROBOT(LINK_A "<link name='b'><inertial><origin xyz='0 0 1e10'/><mass value='1e300'/></inertial></link>"
                      JOINT_J("revolute", "")),
                MBS_ERR_MODEL, "link 'b': inertia overflows: mass 1e+300 with centre of mass at distance 1e+10", NULL);
    EXPECT_FAIL(ROBOT("<link name='a'><inertial><mass value='1'/>"
                      "<inertia ixx='-1' ixy='0' ixz='0' iyy='-1' iyz='0' izz='-1'/></inertial></link>"),
                MBS_ERR_MODEL, "positive semi-definite", NULL);
    EXPECT_FAIL(ROBOT(LINK_A LINK_B JOINT_J("ball", "")), MBS_ERR_MODEL, "joint 'j': unknown joint type 'ball'", NULL);
    EXPECT_FAIL(ROBOT(LINK_A LINK_B JOINT_J("revolute", "<axis xyz='0 0 0'/>")), MBS_ERR_MODEL,
                "joint 'j': axis has zero length", NULL);
    EXPECT_FAIL(ROBOT(LINK_A LINK_B JOINT_J("planar", "<axis xyz='0 0 0'/>")), MBS_ERR_MODEL, "zero length", NULL);
    EXPECT_FAIL(ROBOT(LINK_A LINK_B JOINT_J("revolute", "<limit lower='1' upper='0'/>")), MBS_ERR_MODEL,
                "lower limit", NULL);
    /* numbers: not finite, malformed, wrong count */
    EXPECT_FAIL(ROBOT(LINK_A LINK_B JOINT_J("revolute", "<origin xyz='0 nan 0'/>")), MBS_ERR_MODEL,
                "joint 'j': <origin> attribute xyz=\"0 nan 0\"", "not finite");
    EXPECT_FAIL(ROBOT(LINK_A LINK_B JOINT_J("revolute", "<origin rpy='0 0 inf'/>")), MBS_ERR_MODEL, "not finite", NULL);
    EXPECT_FAIL(ROBOT(LINK_A LINK_B JOINT_J("revolute", "<origin xyz='0 0 1e999'/>")), MBS_ERR_MODEL, "not finite", NULL);
    EXPECT_FAIL(ROBOT(LINK_A "<link name='b'><inertial><mass value='NaN'/></inertial></link>" JOINT_J("revolute", "")),
                MBS_ERR_MODEL, "link 'b': <mass> attribute value=\"NaN\"", "not finite");
    EXPECT_FAIL(ROBOT(LINK_A LINK_B JOINT_J("revolute", "<origin xyz='1.2.3 0 0'/>")), MBS_ERR_MODEL, "not a number",
                NULL);
    EXPECT_FAIL(ROBOT(LINK_A LINK_B JOINT_J("revolute", "<axis xyz='abc 0 1'/>")), MBS_ERR_MODEL, "<axis>",
                "not a number");
    EXPECT_FAIL(ROBOT(LINK_A LINK_B JOINT_J("revolute", "<axis xyz='0,0,1'/>")), MBS_ERR_MODEL, "not a number", NULL);
    EXPECT_FAIL(ROBOT(LINK_A LINK_B JOINT_J("revolute", "<origin xyz='1 2'/>")), MBS_ERR_MODEL, "expected 3 numbers, got 2",
                NULL);
    EXPECT_FAIL(ROBOT(LINK_A LINK_B JOINT_J("revolute", "<origin rpy='1 2 3 4'/>")), MBS_ERR_MODEL,
                "expected 3 numbers, got 4", NULL);
    EXPECT_FAIL(ROBOT(LINK_A LINK_B JOINT_J("revolute", "<origin xyz=''/>")), MBS_ERR_MODEL, "got 0", NULL);
    EXPECT_FAIL(ROBOT(LINK_A LINK_B JOINT_J("revolute", "<limit effort='1 2'/>")), MBS_ERR_MODEL, "expected 1 number,",
                NULL);
    EXPECT_FAIL(ROBOT(LINK_A "<link name='b'><inertial><mass value='1'/>"
                             "<inertia ixx='1' ixy='0' ixz='0' iyy='1' iyz='0x' izz='1'/></inertial></link>"
                             JOINT_J("revolute", "")),
                MBS_ERR_MODEL, "iyz", "not a number");
}

static void test_missing_attributes(void)
{
    EXPECT_FAIL(ROBOT("<link><inertial><mass value='1'/></inertial></link>"), MBS_ERR_MODEL,
                "link: <link> is missing attribute 'name'", NULL);
    EXPECT_FAIL(ROBOT(LINK_A LINK_B "<joint type='fixed'><parent link='a'/><child link='b'/></joint>"), MBS_ERR_MODEL,
                "<joint> is missing attribute 'name'", NULL);
    EXPECT_FAIL(ROBOT(LINK_A LINK_B "<joint name='j'><parent link='a'/><child link='b'/></joint>"), MBS_ERR_MODEL,
                "joint 'j': <joint> is missing attribute 'type'", NULL);
    EXPECT_FAIL(ROBOT(LINK_A LINK_B "<joint name='j' type='fixed'><parent/><child link='b'/></joint>"), MBS_ERR_MODEL,
                "<parent> is missing attribute 'link'", NULL);
    EXPECT_FAIL(ROBOT(LINK_A LINK_B "<joint name='j' type='fixed'><parent link='a'/><child name='b'/></joint>"),
                MBS_ERR_MODEL, "<child> is missing attribute 'link'", NULL);
    EXPECT_FAIL(ROBOT(LINK_A LINK_B "<joint name='j' type='fixed'><parent link='a'/></joint>"), MBS_ERR_MODEL,
                "missing <child> element", NULL);
    EXPECT_FAIL(ROBOT("<link name='a'><inertial><mass/></inertial></link>"), MBS_ERR_MODEL,
                "link 'a': <mass> is missing attribute 'value'", NULL);
    EXPECT_FAIL(ROBOT("<link name='a'><inertial><origin xyz='0 0 0'/></inertial></link>"), MBS_ERR_MODEL,
                "<inertial> has no <mass>", NULL);
    EXPECT_FAIL(ROBOT("<link name='a'><inertial><mass value='1'/><inertia ixx='1' ixy='0' ixz='0' iyy='1' izz='1'/>"
                      "</inertial></link>"),
                MBS_ERR_MODEL, "<inertia> is missing attribute 'iyz'", NULL);
}

/* A physically impossible inertia (principal moments 1, 1, 3) is a warning, or an error when strict. */
static void test_triangle_inequality(void)
{
    const char *xml = "<robot name='r'>\n<link name='a'>\n<inertial><mass value='1'/>\n"
                      "<inertia ixx='1' ixy='0' ixz='0' iyy='1' iyz='0' izz='3'/></inertial></link>\n</robot>";
    mbs_error err;
    mbs_model *m = load_string(xml, &FLOATING, &err);
    CHECK(m != NULL && err.code == 0, "triangle warning only: %s", err.msg);
    CHECK(err.nwarnings == 1 && strstr(WARN(err), "t.urdf:4: link 'a':") && strstr(WARN(err), "triangle inequality"),
          "warning: %s", WARN(err));
    mbs_model_free(m);
    mbs_error_free(&err);
    m = load_string(xml, &STRICT, &err);
    CHECK(m == NULL && err.code == MBS_ERR_MODEL && strstr(err.msg, "t.urdf:4: link 'a': inertia violates the triangle"),
          "strict: %s", err.msg);
    mbs_model_free(m);
    /* a thin rod (1, 1, 0) is exactly on the boundary and a point mass has none: both are fine */
    m = load_string(ROBOT("<link name='a'><inertial><mass value='1'/><inertia ixx='1' ixy='0' ixz='0' iyy='1' iyz='0' "
                          "izz='0'/></inertial></link>"),
                    &STRICT, &err);
    CHECK(m != NULL && err.nwarnings == 0, "rod: %s", err.msg);
    mbs_model_free(m);
    /* the same rod, tilted: off-diagonal terms, eigenvalues by the closed form */
    m = load_string(ROBOT("<link name='a'><inertial><mass value='1'/><inertia ixx='1' ixy='0' ixz='0' iyy='0.5' iyz='0.5' "
                          "izz='0.5'/></inertial></link>"),
                    &STRICT, &err);
    CHECK(m != NULL && err.nwarnings == 0, "tilted rod: %s", err.msg);
    mbs_model_free(m);
    m = load_string(ROBOT("<link name='a'><inertial><mass value='1'/><inertia ixx='0' ixy='0' ixz='0' iyy='0' iyz='0' "
                          "izz='0'/></inertial></link>"),
                    &STRICT, &err);
    CHECK(m != NULL && err.nwarnings == 0, "point mass: %s", err.msg);
    mbs_model_free(m);
}

/* Rotational inertia is carried by mass: a link of mass 0 with a non-zero inertia loads, with a
 * warning at its <inertia>; mass 0 with a zero inertia (a frame-only link) stays silent. The
 * warning stays because such an inertia is not inert: the loader adds it to its body, as
 * Pinocchio does, so it changes the mass matrix (a joint that moves only such a link has
 * M = its moment about the axis), and a missing or zeroed <mass> would go unseen. */
static void test_zero_mass_inertia(void)
{
    mbs_error err;
    mbs_model *m = load_string("<robot name='r'>\n" LINK_A "\n<link name='b'><inertial><mass value='0'/>\n"
                               "<inertia ixx='1e-3' ixy='0' ixz='0' iyy='2e-3' iyz='0' izz='2e-3'/></inertial></link>\n"
                               JOINT_J("fixed", "") "\n</robot>", &STRICT, &err);
    CHECK(m != NULL && err.nwarnings == 1 &&
          strstr(WARN(err), "t.urdf:4: link 'b': mass 0 with a non-zero inertia (principal moments 0.001 0.002 0.002)"),
          "mass 0, inertia 1e-3: %s%s", err.msg, WARN(err));
    mbs_model_free(m);
    mbs_error_free(&err);
    m = load_string(ROBOT(LINK_A "<link name='b'><inertial><mass value='0'/><inertia ixx='0' ixy='0' ixz='0' iyy='0' "
                          "iyz='0' izz='0'/></inertial></link>" JOINT_J("fixed", "")),
                    &STRICT, &err);
    CHECK(m != NULL && err.nwarnings == 0, "mass 0, inertia 0: %s%s", err.msg, WARN(err));
    mbs_model_free(m);
    mbs_error_free(&err);
    /* the inertia of a massless link enters the dynamics: M of its revolute joint about z is its izz */
    m = load_string(ROBOT(LINK_A "<link name='b'><inertial><mass value='0'/><inertia ixx='0' ixy='0' ixz='0' iyy='0' "
                          "iyz='0' izz='0.5'/></inertial></link>" JOINT_J("revolute", "<axis xyz='0 0 1'/>"
                          "<limit lower='-1' upper='1' effort='1' velocity='1'/>")),
                    &FIXED, &err);
    CHECK(m != NULL && strstr(WARN(err), "link 'b': mass 0 with a non-zero inertia"), "mass 0, izz 0.5: %s%s", err.msg,
          WARN(err));
    if (m) {
        mbs_data *d = mbs_data_new(m);
        double q = 0, M = 0;
        mbs_crba(m, d, &q, &M);
        CHECK(fabs(M - 0.5) < 1e-15, "a massless link's izz 0.5 gives M = %g", M);
        mbs_data_free(d);
    }
    mbs_model_free(m);
    mbs_error_free(&err);
}

/* Every warning reaches the caller whole, however many: a chain of 30 links whose inertias break
 * the triangle inequality gives 30 lines, each naming its link and ending as written, far past the
 * 2048 bytes the record once held; mbs_error_free leaves it empty (and the tests run under ASan and
 * valgrind, which would see the text leak). */
static void test_many_warnings(void)
{
    enum { N = 30 };
    size_t cap = 400 * N + 64, at = 0;
    char *xml = malloc(cap);
    CHECK(xml != NULL, "out of memory");
    if (!xml) return;
    at += (size_t)snprintf(xml + at, cap - at, "<robot name='r'>\n");
    for (int i = 0; i < N; i++) {
        at += (size_t)snprintf(xml + at, cap - at, "<link name='a_rather_long_link_name_%02d'><inertial><mass value='1'/>"
                               "<inertia ixx='1' ixy='0' ixz='0' iyy='1' iyz='0' izz='3'/></inertial></link>\n", i);
        if (i > 0)
            at += (size_t)snprintf(xml + at, cap - at, "<joint name='j%02d' type='revolute'><parent link="
                                   "'a_rather_long_link_name_%02d'/><child link='a_rather_long_link_name_%02d'/></joint>\n",
                                   i, i - 1, i);
    }
    snprintf(xml + at, cap - at, "</robot>\n");
    mbs_error err;
    mbs_model *m = load_string(xml, &FLOATING, &err);
    CHECK(m != NULL && err.code == 0, "many warnings: %s", err.msg);
    CHECK(err.nwarnings == N, "%d warnings, expected %d", err.nwarnings, N);
    CHECK(err.warnings && strlen(err.warnings) == err.warnings_len && err.warnings_len > 2048,
          "warnings text of %zu bytes (length field %zu)", strlen(WARN(err)), err.warnings_len);
    int lines = 0, whole = 0;
    for (const char *line = WARN(err), *nl; (nl = strchr(line, '\n')); line = nl + 1) {
        lines++;
        whole += nl > line && nl[-1] == ')' && strncmp(line, "t.urdf:", 7) == 0;
    }
    CHECK(lines == N && whole == N, "%d lines, %d whole, of %d", lines, whole, N);
    for (int i = 0; i < N; i++) {
        char name[64];
        snprintf(name, sizeof name, "link 'a_rather_long_link_name_%02d': inertia violates", i);
        CHECK(strstr(WARN(err), name) != NULL, "no warning for %s", name);
    }
    mbs_error_free(&err);
    CHECK(err.warnings == NULL && err.nwarnings == 0 && err.warnings_len == 0 && err.code == 0, "freed record not empty");
    /* ./sim --info prints them all (MBS_SIM: the ./sim that make test built) */
    char path[] = "/tmp/mbs_warnings_XXXXXX";
    int fd = mkstemp(path);
    FILE *f = fd >= 0 ? fdopen(fd, "w") : NULL;
    CHECK(f != NULL, "cannot write a temporary file");
    if (f) {
        fputs(xml, f);
        fclose(f);
        const char *sim = getenv("MBS_SIM");
        if (!sim || !*sim) sim = "sim";
        char cmd[4096];   /* a bare name is the tree's own program, not one on the PATH */
        snprintf(cmd, sizeof cmd, "'%s%s' --info %s 2>&1", strchr(sim, '/') ? "" : MBS_SOURCE_DIR "/", sim, path);
        FILE *p = popen(cmd, "r");
        int printed = 0, counted = 0;
        char line[1024];
        while (p && fgets(line, sizeof line, p)) {
            printed += strstr(line, "inertia violates the triangle inequality") != NULL && strstr(line, "3)\n") != NULL;
            counted += strcmp(line, "warnings: 30\n") == 0;
        }
        int rc = p ? pclose(p) : -1;
        CHECK(rc == 0 && printed == N && counted == 1, "./sim --info: exit %d, %d whole warnings printed, count line %d",
              rc, printed, counted);
        unlink(path);
    }
    mbs_error_free(&err);   /* a freed record may be freed again */
    mbs_error_free(NULL);
    mbs_model_free(m);
    free(xml);
}

/* A link welded to the world (fixed joints only, under a fixed root) never moves, so its inertia
 * never enters the dynamics: an impossible one loads, with a warning naming it, even in strict
 * mode. TIAGo (example-robot-data's tiago_dual) with its root on the world: its antennas' 1e-6 kg
 * placeholders have a principal moment of -3.5e-8 (Pinocchio loads it); RNEA(ABA) = id on it. */
static void test_welded_to_world(void)
{
#define ANTENNA(on) "<link name='antenna'><inertial><mass value='0.000001'/><inertia ixx='0.00000002371' " \
                    "ixy='0.00000006119' ixz='0.00000001179' iyy='0.00000002833' iyz='0.00000000774' " \
                    "izz='0.00000003849'/></inertial></link><joint name='w' type='fixed'><parent link='" on "'/>" \
                    "<child link='antenna'/></joint>"
    const mbs_urdf_options strict_fixed = {.floating_base = 0, .strict = 1};
    mbs_error err;
    /* on the massless moving link b it is the body's whole inertia: refused */
    mbs_model *m = load_string(ROBOT(LINK_A "<link name='b'/>" ANTENNA("b") JOINT_J("revolute", "")), &strict_fixed, &err);
    CHECK(m == NULL && strstr(err.msg, "link 'antenna': inertia is not positive semi-definite"),
          "on a moving body: %s", err.msg);
    mbs_model_free(m);
    mbs_error_free(&err);
    /* on the fixed root a: welded to the world, ignored with a warning */
    m = load_string(ROBOT(LINK_A "<link name='b'/>" ANTENNA("a") JOINT_J("revolute", "")), &strict_fixed, &err);
    CHECK(m != NULL && err.nwarnings == 2 && strstr(WARN(err), "link 'antenna': inertia is not physically possible") &&
          strstr(WARN(err), "welded to the world"), "welded to the world: %s%s", err.msg, WARN(err));
    CHECK(m && mbs_model_nv(m) == 1, "one joint");
    mbs_model_free(m);
    mbs_error_free(&err);
#undef ANTENNA

    const char *path = tm_shared_reference("urdf/collection/tiago_dual.urdf");
    if (!path) return;
    m = mbs_model_from_urdf(path, &FIXED, &err);
    CHECK(m != NULL, "tiago with a fixed root: %s", err.msg);
    CHECK(strstr(WARN(err), "link 'base_antenna_left_link': inertia is not physically possible") &&
          strstr(WARN(err), "link 'base_antenna_right_link'"), "tiago's warnings: %s", WARN(err));
    mbs_error_free(&err);
    if (!m) return;
    int nq = mbs_model_nq(m), nv = mbs_model_nv(m);
    CHECK(nq == 101 && nv == 101, "tiago: nq %d nv %d", nq, nv);
    mbs_data *d = mbs_data_new(m);
    double *q = malloc(sizeof(double) * (size_t)nq), *buf = malloc(sizeof(double) * 4 * (size_t)nv);
    double *v = buf, *a = buf + nv, *tau = buf + 2 * nv, *back = buf + 3 * nv;
    unsigned long long seed = 44;
    for (int trial = 0; d && q && buf && trial < 3; trial++) {
        tm_random_state(m, &seed, q, v, a, tau);
        mbs_aba(m, d, q, v, tau, a);
        mbs_rnea(m, d, q, v, a, back);
        CHECK_CLOSE(back, tau, nv, 1e-8, "tiago: rnea(aba(tau)) - tau");
    }
    free(q);
    free(buf);
    mbs_data_free(d);
    mbs_model_free(m);
}

/* ---- hostile XML ---- */

static double now(void)
{
    struct timespec t;
    clock_gettime(CLOCK_MONOTONIC, &t);
    return (double)t.tv_sec + 1e-9 * (double)t.tv_nsec;
}

#define LOL_DTD                                                                                                        \
    "<?xml version='1.0'?>\n<!DOCTYPE robot [\n"                                                                        \
    " <!ENTITY lol 'lol'>\n"                                                                                           \
    " <!ENTITY lol1 '&lol;&lol;&lol;&lol;&lol;&lol;&lol;&lol;&lol;&lol;'>\n"                                           \
    " <!ENTITY lol2 '&lol1;&lol1;&lol1;&lol1;&lol1;&lol1;&lol1;&lol1;&lol1;&lol1;'>\n"                                 \
    " <!ENTITY lol3 '&lol2;&lol2;&lol2;&lol2;&lol2;&lol2;&lol2;&lol2;&lol2;&lol2;'>\n"                                 \
    " <!ENTITY lol4 '&lol3;&lol3;&lol3;&lol3;&lol3;&lol3;&lol3;&lol3;&lol3;&lol3;'>\n"                                 \
    " <!ENTITY lol5 '&lol4;&lol4;&lol4;&lol4;&lol4;&lol4;&lol4;&lol4;&lol4;&lol4;'>\n"                                 \
    " <!ENTITY lol6 '&lol5;&lol5;&lol5;&lol5;&lol5;&lol5;&lol5;&lol5;&lol5;&lol5;'>\n"                                 \
    " <!ENTITY lol7 '&lol6;&lol6;&lol6;&lol6;&lol6;&lol6;&lol6;&lol6;&lol6;&lol6;'>\n"                                 \
    " <!ENTITY lol8 '&lol7;&lol7;&lol7;&lol7;&lol7;&lol7;&lol7;&lol7;&lol7;&lol7;'>\n"                                 \
    " <!ENTITY lol9 '&lol8;&lol8;&lol8;&lol8;&lol8;&lol8;&lol8;&lol8;&lol8;&lol8;'>\n"                                 \
    "]>\n"

/* Runs f with stderr sent to a temporary file; returns how many bytes were printed. */
static long stderr_bytes_during(void (*f)(void))
{
    fflush(stderr);
    int saved = dup(2);
    FILE *tmp = tmpfile();
    if (saved < 0 || !tmp) {
        if (tmp) fclose(tmp);
        if (saved >= 0) close(saved);
        f();
        return 0;
    }
    dup2(fileno(tmp), 2);
    f();
    fflush(stderr);
    dup2(saved, 2);
    close(saved);
    fseek(tmp, 0, SEEK_END);
    long n = ftell(tmp);
    fclose(tmp);
    return n;
}

static void billion_laughs(void)
{
    static const char *bombs[2] = {LOL_DTD "<robot name='r'>" LINK_A "&lol9;</robot>",
                                   LOL_DTD "<robot name='&lol9;'>" LINK_A "</robot>"};
    for (int k = 0; k < 2; k++) {
        mbs_error err;
        double t0 = now();
        mbs_model *m = load_string(bombs[k], &FLOATING, &err);
        double dt = now() - t0;
        CHECK(m == NULL && err.code == MBS_ERR_PARSE, "bomb %d: loaded or wrong code %d (%s)", k, err.code, err.msg);
        CHECK(strncmp(err.msg, "t.urdf:", 7) == 0, "bomb %d: %s", k, err.msg);
        CHECK(dt < 1.0, "bomb %d took %.2f s", k, dt);
        mbs_model_free(m);
    }
}

static void parse_errors_quietly(void)
{
    mbs_error err;
    mbs_model *m = load_string("<robot name='r'><link name='a'></robot>", &FLOATING, &err);
    mbs_model_free(m);
    m = load_string(ROBOT("<link name='a'><inertial><mass value='1'/><inertia ixx='1' ixy='0' ixz='0' iyy='1' iyz='0' "
                          "izz='3'/></inertial></link>"),
                    &FLOATING, &err);
    mbs_model_free(m);
    mbs_error_free(&err);
}

static void test_entity_bomb(void)
{
    long printed = stderr_bytes_during(billion_laughs);
    CHECK(printed == 0, "the entity bomb printed %ld bytes on stderr", printed);
    printed = stderr_bytes_during(parse_errors_quietly);
    CHECK(printed == 0, "a parse error printed %ld bytes on stderr", printed);
}

static int entity_loads;
static xmlExternalEntityLoader default_loader;

/* Counts every attempt libxml2 makes to open an external resource. */
static xmlParserInputPtr counting_loader(const char *url, const char *id, xmlParserCtxtPtr ctxt)
{
    entity_loads++;
    return default_loader(url, id, ctxt);
}

static void test_external_entity(void)
{
    default_loader = xmlGetExternalEntityLoader();
    xmlSetExternalEntityLoader(counting_loader);
    mbs_error err;
    /* xxe.urdf gives link c (welded to the 1 kg root) an external entity holding a 1 kg <inertial> */
    mbs_model *m = mbs_model_from_urdf(BAD_DIR "xxe.urdf", NULL, &err);
    CHECK(m != NULL, "xxe.urdf: %s", err.msg);
    if (m) CHECK(fabs(mbs_model_mass(m) - 1) < 1e-15, "the external entity was expanded: mass %g", mbs_model_mass(m));
    mbs_model_free(m);
    /* the same from a string, with an absolute file:// URL */
    char xml[1024];
    snprintf(xml, sizeof xml,
             "<!DOCTYPE robot [<!ENTITY xxe SYSTEM 'file://%s'>]>\n<robot name='r'>" LINK_A "<link name='c'>&xxe;</link>"
             "<joint name='w' type='fixed'><parent link='a'/><child link='c'/></joint></robot>",
             BAD_DIR "xxe_payload.xml");
    m = load_string(xml, &FLOATING, &err);
    CHECK(m != NULL, "xxe string: %s", err.msg);
    if (m) CHECK(fabs(mbs_model_mass(m) - 1) < 1e-15, "the external entity was expanded: mass %g", mbs_model_mass(m));
    mbs_model_free(m);
    /* an external entity in an attribute is not well-formed XML */
    snprintf(xml, sizeof xml, "<!DOCTYPE robot [<!ENTITY xxe SYSTEM '/etc/hostname'>]>\n<robot name='&xxe;'>" LINK_A
             "</robot>");
    m = load_string(xml, &FLOATING, &err);
    CHECK(m == NULL && err.code == MBS_ERR_PARSE, "entity in attribute: %d %s", err.code, err.msg);
    mbs_model_free(m);
    CHECK(entity_loads == 0, "libxml2 tried to load %d external entities", entity_loads);
    xmlSetExternalEntityLoader(default_loader);
}

/* Internal entities in attributes are plain XML and expand. */
static void test_internal_entity(void)
{
    mbs_error err;
    mbs_model *m = load_string("<!DOCTYPE robot [<!ENTITY m '2.5'>]>\n"
                               ROBOT("<link name='a'><inertial><mass value='&m;'/></inertial></link>"),
                               &FLOATING, &err);
    CHECK(m != NULL && fabs(mbs_model_mass(m) - 2.5) < 1e-15, "entity mass: %s", err.msg);
    mbs_model_free(m);
}

/* <visual> shapes: kept in the body their link ends up on (a fixed joint's offset and rotation
 * composed with the visual's origin), colours inline or from a robot-level material, meshes by
 * file name; an unknown geometry is skipped, a bad number is an error naming the line. */
static void test_visuals(void)
{
    static const char xml[] =
        "<robot name=\"v\">\n"
        "  <material name=\"blue\"><color rgba=\"0 0 1 1\"/></material>\n"
        "  <link name=\"base\">\n"
        "    <inertial><mass value=\"1\"/><inertia ixx=\"1\" iyy=\"1\" izz=\"1\" ixy=\"0\" ixz=\"0\" iyz=\"0\"/></inertial>\n"
        "    <visual><origin xyz=\"0 0 0.1\"/><geometry><box size=\"0.4 0.2 0.1\"/></geometry>"
        "<material name=\"blue\"/></visual>\n"
        "    <visual><geometry><capsule radius=\"1\" length=\"1\"/></geometry></visual>\n"
        "  </link>\n"
        "  <link name=\"plate\">\n"
        "    <visual><origin xyz=\"0 0 -0.5\"/><geometry><cylinder radius=\"0.01\" length=\"1\"/></geometry>"
        "<material name=\"red\"><color rgba=\"1 0 0 0.5\"/></material></visual>\n"
        "  </link>\n"
        "  <link name=\"leg\">\n"
        "    <inertial><mass value=\"1\"/><inertia ixx=\"1\" iyy=\"1\" izz=\"1\" ixy=\"0\" ixz=\"0\" iyz=\"0\"/></inertial>\n"
        "    <visual><geometry><sphere radius=\"0.05\"/></geometry></visual>\n"
        "    <visual><geometry><mesh filename=\"package://x/leg.stl\" scale=\"2 2 2\"/></geometry></visual>\n"
        "  </link>\n"
        "  <joint name=\"weld\" type=\"fixed\"><parent link=\"base\"/><child link=\"plate\"/>"
        "<origin xyz=\"1 0 0\" rpy=\"0 1.5707963267948966 0\"/></joint>\n"
        "  <joint name=\"hinge\" type=\"revolute\"><parent link=\"base\"/><child link=\"leg\"/><axis xyz=\"0 1 0\"/>"
        "<limit lower=\"-1\" upper=\"1\" effort=\"1\" velocity=\"1\"/></joint>\n"
        "</robot>\n";
    mbs_error err;
    mbs_model *m = mbs_model_from_urdf_string(xml, "visuals.urdf", NULL, &err);
    CHECK(m != NULL, "visuals model: %s", err.msg);
    if (!m) return;
    CHECK(mbs_model_nvisuals(m) == 4, "%d visuals, want 4 (the capsule skipped)", mbs_model_nvisuals(m));
    /* one of each type; their order follows the loader's visit of the tree */
    const mbs_visual *of[4] = {NULL, NULL, NULL, NULL};
    for (int i = 0; i < mbs_model_nvisuals(m) && i < 4; i++) of[mbs_model_visual(m, i)->type] = mbs_model_visual(m, i);
    const mbs_visual *box = of[MBS_SHAPE_BOX], *cyl = of[MBS_SHAPE_CYLINDER], *ball = of[MBS_SHAPE_SPHERE],
                     *mesh = of[MBS_SHAPE_MESH];
    CHECK(mbs_model_visual(m, 4) == NULL && mbs_model_visual(m, -1) == NULL, "out of range visuals");
    if (box && cyl && ball && mesh) {
        CHECK(box->type == MBS_SHAPE_BOX && box->body == 0 && box->size[0] == 0.4 && box->size[2] == 0.1 &&
                  box->p[2] == 0.1 && box->rgba[2] == 1 && box->rgba[0] == 0,
              "box: type %d body %d size %g %g p_z %g rgba %g %g %g", box->type, box->body, box->size[0], box->size[2],
              box->p[2], box->rgba[0], box->rgba[1], box->rgba[2]);
        /* the plate is welded at x = 1, turned 90° about y: its -0.5 along z is -0.5 along x of the base */
        CHECK(cyl->type == MBS_SHAPE_CYLINDER && cyl->body == 0 && cyl->size[0] == 0.01 && cyl->size[1] == 1 &&
                  fabs(cyl->p[0] - 0.5) < 1e-12 && fabs(cyl->p[2]) < 1e-12 && fabs(cyl->R[6] - 1) < 1e-12 &&
                  cyl->rgba[0] == 1 && cyl->rgba[3] == 0.5,
              "welded cylinder: body %d p %g %g %g R[6] %g", cyl->body, cyl->p[0], cyl->p[1], cyl->p[2], cyl->R[6]);
        int leg = mbs_joint_id(m, "hinge");
        CHECK(ball->type == MBS_SHAPE_SPHERE && ball->body == leg && ball->size[0] == 0.05 && ball->rgba[3] == 0,
              "sphere: body %d (leg %d) r %g alpha %g", ball->body, leg, ball->size[0], ball->rgba[3]);
        CHECK(mesh->type == MBS_SHAPE_MESH && strcmp(mesh->mesh, "package://x/leg.stl") == 0 && mesh->size[1] == 2,
              "mesh: '%s' scale %g", mesh->mesh, mesh->size[1]);
    }
    mbs_model_free(m);
    static const char bad[] = "<robot name=\"b\"><link name=\"a\"><visual><geometry>\n<box size=\"1 x 1\"/>"
                              "</geometry></visual></link></robot>";
    m = mbs_model_from_urdf_string(bad, "bad_visual.urdf", NULL, &err);
    CHECK(!m && strstr(err.msg, "bad_visual.urdf:2") && strstr(err.msg, "size"), "bad box size: %s", err.msg);
    mbs_model_free(m);
}

int main(void)
{
    RUN(test_reference_layouts);
    RUN(test_visuals);
    RUN(test_solo12);
    RUN(test_romeo_warnings);
    RUN(test_drake_models);
    RUN(test_fixed_chain);
    RUN(test_world_links);
    RUN(test_io_and_xml_errors);
    RUN(test_structure_errors);
    RUN(test_value_errors);
    RUN(test_missing_attributes);
    RUN(test_triangle_inequality);
    RUN(test_many_warnings);
    RUN(test_zero_mass_inertia);
    RUN(test_welded_to_world);
    RUN(test_inertia_tolerance);
    RUN(test_massless_subtree);
    RUN(test_urdf_collection);
    RUN(test_entity_bomb);
    RUN(test_external_entity);
    RUN(test_internal_entity);
    return check_summary("test_urdf");
}
