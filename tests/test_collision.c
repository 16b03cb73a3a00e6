/* test_collision.c — a model's collision shapes and the scenario's [contact] from_collision:
 *   - the URDF loader reads <collision> (sphere, box, cylinder, mesh by name), placed in the body the
 *     link ended on through a fixed joint exactly as visuals are (to 1e-15);
 *   - the MJCF loader keeps the geoms that collide (contype or conaffinity not 0, classes applied),
 *     capsules as capsules, and leaves out ellipsoids with a warning, planes silently;
 *   - from_collision turns them into contact geometry after the feet: counts and offsets in the
 *     link's frame, the collision_links filter (globs), one warning for the meshes, bad values and
 *     too many contacts refused with file, line and key;
 *   - a body dropped with from_collision lands on its box's four bottom corners in one step (expo);
 *   - a real robot of ../shared/reference with collision elements runs on them. */
#include <math.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <unistd.h>

#include "check.h"
#include "testmodels.h"
#include "../src/sim/sim_internal.h"   /* white-box: the scenario's contacts */

/* C = A B (3 x 3, column-major) */
static void mul3(const double A[9], const double B[9], double C[9])
{
    for (int j = 0; j < 3; j++)
        for (int i = 0; i < 3; i++)
            C[i + 3 * j] = A[i] * B[3 * j] + A[i + 3] * B[3 * j + 1] + A[i + 6] * B[3 * j + 2];
}

/* R = Rz(y) Ry(p) Rx(r), column-major, written out by hand */
static void rpy(double r, double p, double y, double R[9])
{
    double X[9] = {1, 0, 0, 0, cos(r), sin(r), 0, -sin(r), cos(r)};
    double Y[9] = {cos(p), 0, -sin(p), 0, 1, 0, sin(p), 0, cos(p)};
    double Z[9] = {cos(y), sin(y), 0, -sin(y), cos(y), 0, 0, 0, 1};
    double ZY[9];
    mul3(Z, Y, ZY);
    mul3(ZY, X, R);
}

/* The collision shape of m on link with name ("" for an unnamed one; the first such), NULL when none. */
static const mbs_collision *shape(const mbs_model *m, const char *link, const char *name)
{
    for (int i = 0; i < mbs_model_ncollisions(m); i++) {
        const mbs_collision *k = mbs_model_collision(m, i);
        if (strcmp(k->link, link) == 0 && strcmp(k->name, name) == 0) return k;
    }
    return NULL;
}

static double max_diff(const double *a, const double *b, int n)
{
    double worst = 0;
    for (int i = 0; i < n; i++) worst = fmax(worst, fabs(a[i] - b[i]));
    return worst;
}

static void test_urdf_shapes(void)
{
    mbs_error err;
    mbs_model *m = mbs_model_from_urdf(tm_path("tests/models/collision_shapes.urdf"), NULL, &err);
    CHECK(m != NULL, "collision_shapes.urdf: %s", err.msg);
    if (!m) return;
    CHECK(mbs_model_ncollisions(m) == 8, "%d collision shapes, 8 expected", mbs_model_ncollisions(m));
    CHECK(mbs_model_nvisuals(m) == 1, "%d visuals: the collision shapes are not visuals", mbs_model_nvisuals(m));
    CHECK(mbs_model_collision(m, -1) == NULL && mbs_model_collision(m, 8) == NULL, "out of range is NULL");
    static const double I[9] = {1, 0, 0, 0, 1, 0, 0, 0, 1};

    const mbs_collision *box = shape(m, "base", "base_box"), *ball = shape(m, "base", "");
    CHECK(box && box->body == 0 && box->type == MBS_SHAPE_BOX && box->size[0] == 0.4 && box->size[1] == 0.2 &&
              box->size[2] == 0.1 && box->p[0] == 0 && box->p[2] == -0.05 && max_diff(box->R, I, 9) == 0,
          "the base's box");
    CHECK(ball && ball->body == 0 && ball->type == MBS_SHAPE_SPHERE && ball->size[0] == 0.03 && ball->p[0] == 0.1 &&
              ball->p[2] == 0.1 && !ball->mesh[0],
          "the base's sphere");

    /* the plate is merged into the base: its shapes are the joint's placement ∘ their origin */
    double Rj[9], pj[3] = {0.05, -0.02, 0.12};
    rpy(0.1, 0.2, 0.3, Rj);
    const mbs_collision *rod = shape(m, "plate", "plate_rod"), *mesh = shape(m, "plate", "plate_mesh");
    CHECK(rod && mesh, "the plate's shapes");
    if (rod && mesh) {
        struct { const mbs_collision *k; double o[3], r[3]; } want[2] = {
            {rod, {0.01, 0.02, 0.03}, {1.5707963267948966, 0, 0}}, {mesh, {0.001, 0.002, 0.003}, {0, 0, 0.4}}};
        for (int w = 0; w < 2; w++) {
            double Ro[9], R[9], p[3];
            rpy(want[w].r[0], want[w].r[1], want[w].r[2], Ro);
            mul3(Rj, Ro, R);
            for (int i = 0; i < 3; i++)
                p[i] = pj[i] + Rj[i] * want[w].o[0] + Rj[i + 3] * want[w].o[1] + Rj[i + 6] * want[w].o[2];
            double eR = max_diff(want[w].k->R, R, 9), ep = max_diff(want[w].k->p, p, 3);
            printf("  %s on the merged plate: placement off by %.1e (R), %.1e m (p)\n", want[w].k->name, eR, ep);
            CHECK(want[w].k->body == 0 && eR <= 1e-15 && ep <= 1e-15, "%s: R off by %g, p by %g", want[w].k->name, eR, ep);
        }
        CHECK(rod->type == MBS_SHAPE_CYLINDER && rod->size[0] == 0.02 && rod->size[1] == 0.09, "the rod's size");
        CHECK(mesh->type == MBS_SHAPE_MESH && strcmp(mesh->mesh, "package://collision_shapes/meshes/plate.stl") == 0 &&
                  mesh->size[0] == 0.001 && mesh->size[2] == 0.001,
              "the mesh by name '%s' and its scale", mesh->mesh);
    }
    const mbs_collision *shin = shape(m, "FL_LOWER_LEG", ""), *foot = shape(m, "HR_LOWER_LEG", "HR_FOOT");
    int fl = mbs_joint_id(m, "FL_KNEE"), hr = mbs_joint_id(m, "HR_KNEE");
    CHECK(shin && shin->body == fl && shin->type == MBS_SHAPE_CYLINDER && shin->p[2] == -0.08, "FL's shin");
    CHECK(foot && foot->body == hr && foot->type == MBS_SHAPE_SPHERE && foot->p[2] == -0.16, "HR's foot");

    /* a fixed root: the shapes sit on the world (body -1) */
    mbs_urdf_options fixed = {.floating_base = MBS_ROOT_FIXED};
    mbs_model *f = mbs_model_from_urdf(tm_path("tests/models/collision_shapes.urdf"), &fixed, &err);
    CHECK(f && shape(f, "plate", "plate_rod") && shape(f, "plate", "plate_rod")->body == -1, "fixed root: the world's");
    mbs_model_free(f);

    /* the builder refuses what no shape is */
    mbs_collision bad = *box;
    bad.size[1] = -1;
    CHECK(mbs_model_add_collision(m, &bad, &err) != MBS_OK && strstr(err.msg, "negative"), "negative size: %s", err.msg);
    bad = *box;
    bad.p[0] = NAN;
    CHECK(mbs_model_add_collision(m, &bad, &err) != MBS_OK && strstr(err.msg, "finite"), "NaN: %s", err.msg);
    bad = *box;
    bad.body = 17;
    CHECK(mbs_model_add_collision(m, &bad, &err) == MBS_ERR_ARG, "no body 17");
    bad = *box;
    bad.type = (mbs_shape_type)9;
    CHECK(mbs_model_add_collision(m, &bad, &err) == MBS_ERR_ARG, "no shape type 9");
    CHECK(mbs_model_add_visual(m, &(mbs_visual){.type = MBS_SHAPE_CAPSULE, .R = {1, 0, 0, 0, 1, 0, 0, 0, 1}}, &err) ==
              MBS_ERR_ARG,
          "a capsule is no visual");
    mbs_model_free(m);

    /* a bad number in a <collision> is the file's error at its line */
    const char *xml = "<robot name=\"r\">\n<link name=\"a\">\n<collision>\n<geometry><sphere radius=\"x\"/></geometry>\n"
                      "</collision>\n</link>\n</robot>\n";
    m = mbs_model_from_urdf_string(xml, "t.urdf", NULL, &err);
    CHECK(!m && strstr(err.msg, "t.urdf:4") && strstr(err.msg, "radius"), "bad radius: %s", m ? "accepted" : err.msg);
    mbs_model_free(m);
}

static void test_mjcf_shapes(void)
{
    const char *xml =
        "<mujoco model=\"m\">\n"
        "  <default>\n"
        "    <default class=\"look\"><geom contype=\"0\" conaffinity=\"0\"/></default>\n"
        "    <default class=\"touched\"><geom contype=\"0\" conaffinity=\"1\"/></default>\n"
        "  </default>\n"
        "  <worldbody>\n"
        "    <geom name=\"floor\" type=\"plane\" size=\"1 1 0.1\"/>\n"
        "    <body name=\"torso\" pos=\"0 0 1\">\n"
        "      <freejoint/>\n"
        "      <geom name=\"torso_box\" type=\"box\" size=\"0.1 0.2 0.3\" pos=\"0.01 0.02 0.03\"/>\n"
        "      <geom name=\"shell\" class=\"look\" type=\"sphere\" size=\"0.5\"/>\n"
        "      <geom name=\"hidden\" type=\"sphere\" size=\"0.1\" contype=\"0\" conaffinity=\"0\"/>\n"
        "      <geom name=\"shin\" class=\"touched\" type=\"capsule\" fromto=\"0 0 0 0 0 -0.4\" size=\"0.03\"/>\n"
        "      <geom name=\"egg\" type=\"ellipsoid\" size=\"0.1 0.2 0.3\"/>\n"
        "      <geom name=\"can\" type=\"cylinder\" size=\"0.05 0.1\"/>\n"
        "      <body name=\"tail\" pos=\"0.3 0 0\">\n"
        "        <geom name=\"tail_ball\" type=\"sphere\" size=\"0.04\"/>\n"
        "      </body>\n"
        "    </body>\n"
        "  </worldbody>\n"
        "</mujoco>\n";
    mbs_error err;
    mbs_model *m = mbs_model_from_mjcf_string(xml, "t.xml", NULL, &err);
    int n = m ? mbs_model_ncollisions(m) : -1;
    printf("  MJCF: %d collision shapes of %d geoms\n", n, 9);
    CHECK(n == 4, "%d collision shapes: box, capsule, cylinder, the tail's sphere expected (%s)", n, m ? "" : err.msg);
    if (!m) return;
    CHECK(!shape(m, "torso", "shell") && !shape(m, "torso", "hidden") && !shape(m, "torso", "egg") &&
              !shape(m, "world", "floor"),
          "contype = conaffinity = 0, an ellipsoid and the floor plane are left out");
    CHECK(err.warnings && strstr(err.warnings, "t.xml:14") && strstr(err.warnings, "ellipsoid"),
          "the ellipsoid's warning: %s", err.warnings ? err.warnings : "none");
    const mbs_collision *box = shape(m, "torso", "torso_box"), *shin = shape(m, "torso", "shin"),
                        *can = shape(m, "torso", "can"), *tail = shape(m, "tail", "tail_ball");
    CHECK(box && box->type == MBS_SHAPE_BOX && box->size[0] == 0.2 && box->size[1] == 0.4 && box->size[2] == 0.6 &&
              box->p[0] == 0.01 && box->p[2] == 0.03 && box->body == 0,
          "the box: full sizes");
    CHECK(shin && shin->type == MBS_SHAPE_CAPSULE && shin->size[0] == 0.03 && fabs(shin->size[1] - 0.4) < 1e-15 &&
              fabs(shin->p[2] + 0.2) < 1e-15 && fabs(fabs(shin->R[8]) - 1) < 1e-15,
          "the capsule from fromto: its segment 0.4 m along z about z = -0.2");
    CHECK(can && can->type == MBS_SHAPE_CYLINDER && can->size[0] == 0.05 && can->size[1] == 0.2, "the cylinder");
    CHECK(tail && tail->body == 0 && tail->p[0] == 0.3 && tail->size[0] == 0.04, "a welded body's sphere on its parent");
    mbs_model_free(m);
    mbs_error_free(&err);
}

/* A scenario of the collision test model in a file of its own, with `extra` lines in [contact]. */
static const char *write_scenario(const char *extra)
{
    static char path[64];
    snprintf(path, sizeof path, "/tmp/mbs_test_collision_%d.ini", (int)getpid());
    FILE *f = fopen(path, "w");
    fprintf(f, "[model]\nurdf = %s\nbase_position = 0 0 0.15\n[contact]\n%s\n[controller]\ntype = none\ndt = 0.001\n"
               "[stepper]\nname = expo\ndt = 0.001\n[run]\nduration = 0.3\n",
            tm_path("tests/models/collision_shapes.urdf"), extra);
    fclose(f);
    return path;
}

/* How many of sc's contacts are on frame. */
static int on_frame(const mbs_scenario *sc, const char *frame)
{
    int n = 0;
    for (int i = 0; i < sc->ncontacts; i++) n += strcmp(sc->contacts[i].frame, frame) == 0;
    return n;
}

static void test_scenario_expansion(void)
{
    mbs_error err;
    const char *path = write_scenario("frames = FL_LOWER_LEG\nfrom_collision = 1");
    mbs_scenario *sc = mbs_scenario_load(path, NULL, 0, &err);
    CHECK(sc != NULL, "from_collision: %s", err.msg);
    if (!sc) return;
    /* 1 foot; the base's box 8 + sphere 1; each shin 12 spheres (0.16 / 0.015) + a foot; the plate's
     * rod 6 (0.09 / 0.02); the mesh none */
    printf("  from_collision: %d contacts (1 foot)\n", sc->ncontacts);
    CHECK(sc->ncontacts == 1 + 9 + 2 * 13 + 6, "%d contacts, 42 expected", sc->ncontacts);
    CHECK(!sc->contacts[0].link && sc->contacts[1].link && sc->contacts[sc->ncontacts - 1].link,
          "the foot first, the collision shapes after it as link geometry");
    CHECK(on_frame(sc, "base") == 9 && on_frame(sc, "plate") == 6 && on_frame(sc, "FL_LOWER_LEG") == 14 &&
              on_frame(sc, "HR_LOWER_LEG") == 13,
          "contacts per frame: base %d, plate %d, FL %d, HR %d", on_frame(sc, "base"), on_frame(sc, "plate"),
          on_frame(sc, "FL_LOWER_LEG"), on_frame(sc, "HR_LOWER_LEG"));
    CHECK(err.warnings && strstr(err.warnings, ":6: [contact] from_collision: 1 mesh collision shape skipped") &&
              strstr(err.warnings, "plate.stl"),
          "the mesh warning: %s", err.warnings ? err.warnings : "none");
    double worst_box = 0, worst_rod = 0;
    int rods = 0, inner = 0;
    for (int i = 0; i < sc->ncontacts; i++) {
        const mbs_scenario_contact *c = &sc->contacts[i];
        if (strcmp(c->frame, "base") == 0 && c->radius == 0)   /* a corner of the box (0, 0, -0.05) ± (0.2, 0.1, 0.05) */
            worst_box = fmax(worst_box, fabs(fabs(c->offset[0]) - 0.2) + fabs(fabs(c->offset[1]) - 0.1) +
                                            fabs(fabs(c->offset[2] + 0.05) - 0.05));
        if (strcmp(c->frame, "plate") == 0) {
            /* the rod in the plate's own frame: its origin, its axis (z) turned to −y by rpy π/2 about x,
             * so its spheres run from y = 0.02 + 0.045 down */
            double y = 0.065 - 0.09 * rods / 5;
            worst_rod = fmax(worst_rod, fabs(c->offset[0] - 0.01) + fabs(c->offset[1] - y) + fabs(c->offset[2] - 0.03));
            CHECK(c->radius == 0.02, "the rod's radius %g", c->radius);
            inner += c->boxes_only;
            rods++;
        }
    }
    printf("  offsets: box corners off by %.1e m, the rod's spheres by %.1e m in the plate's frame\n", worst_box, worst_rod);
    CHECK(worst_box < 1e-15 && worst_rod < 1e-14, "offsets: box %g, rod %g", worst_box, worst_rod);
    CHECK(inner == 4, "the rod's 4 inner spheres meet boxes only (%d)", inner);
    mbs_scenario_free(sc);
    mbs_error_free(&err);

    /* the filter: globs, several words, over lines */
    struct { const char *links; int n, warn; } filters[] = {
        {"*_LOWER_LEG", 26, 0}, {"FL_* plate", 13 + 6, 1}, {"base\ncollision_links = *LEG", 9 + 26, 0}, {"*", 41, 1},
        {"pla*e", 6, 1}};
    for (int k = 0; k < 5; k++) {
        char extra[128];
        snprintf(extra, sizeof extra, "from_collision = 1\ncollision_links = %s", filters[k].links);
        sc = mbs_scenario_load(write_scenario(extra), NULL, 0, &err);
        CHECK(sc && sc->ncontacts == filters[k].n, "collision_links = %s: %d contacts, %d expected (%s)", filters[k].links,
              sc ? sc->ncontacts : -1, filters[k].n, sc ? "" : err.msg);
        CHECK((err.warnings && strstr(err.warnings, "mesh") ? 1 : 0) == filters[k].warn, "collision_links = %s: mesh warning %s",
              filters[k].links, err.warnings ? err.warnings : "none");
        mbs_scenario_free(sc);
        mbs_error_free(&err);
    }

    /* from_collision = 0 (the default): nothing from the model */
    sc = mbs_scenario_load(write_scenario("frames = FL_LOWER_LEG"), NULL, 0, &err);
    CHECK(sc && sc->ncontacts == 1, "without from_collision: the foot only");
    mbs_scenario_free(sc);

    /* refused, with file, line and key */
    char at[160];
    struct { const char *extra, *override, *line, *why; } bad[] = {
        {"from_collision = 2", NULL, ":5: [contact] from_collision", "0 or 1"},
        {"from_collision = 1\ncollision_links = FR_*", NULL, ":6: [contact] collision_links", "'FR_*'"},
        {"collision_links = base", NULL, ":5: [contact] collision_links", "from_collision = 1"},
        {"from_collision = 1\ncapsule = base 0 0 0 9 0 0 0.04", NULL, ":5: [contact] from_collision",
         "41 contact points, and with the 226 before them that is more than 256"},
        {"from_collision = 1", "contact.collision_links=", ": --set contact.collision_links", "empty"},
    };
    for (int k = 0; k < 5; k++) {
        path = write_scenario(bad[k].extra);
        const char *ov[1] = {bad[k].override};
        sc = mbs_scenario_load(path, ov, bad[k].override ? 1 : 0, &err);
        snprintf(at, sizeof at, "%s%s", path, bad[k].line);
        CHECK(!sc && strstr(err.msg, at) && strstr(err.msg, bad[k].why), "'%s': %s", bad[k].extra,
              sc ? "accepted" : err.msg);
        mbs_scenario_free(sc);
        mbs_error_free(&err);
    }
    unlink(path);
}

/* Dropped 5 cm with the base's shapes only (collision_links = base): the box's four bottom corners
 * land in the same step under expo, its top corners and the sphere above never touch. */
static void test_drop(void)
{
    mbs_error err;
    const char *path = write_scenario("from_collision = 1\ncollision_links = base");
    mbs_scenario *sc = mbs_scenario_load(path, NULL, 0, &err);
    unlink(path);
    CHECK(sc != NULL, "drop: %s", err.msg);
    if (!sc) return;
    const mbs_model *m = mbs_scenario_model(sc);
    mbs_system *s = mbs_system_new(m, sc->ncontacts, &err);
    CHECK(mbs_scenario_setup_system(sc, s, &err) == MBS_OK, "setup: %s", err.msg);
    CHECK(mbs_system_ncontacts(s) == 9 && mbs_system_nfeet(s) == 0, "9 contacts of link geometry, no feet");
    mbs_stepper *st = mbs_stepper_new("expo", s, NULL, 0, &err);
    CHECK(st != NULL, "expo: %s", err.msg);
    if (!st) {
        mbs_system_free(s);
        mbs_scenario_free(sc);
        return;
    }
    int first[9];
    for (int i = 0; i < 9; i++) first[i] = -1;
    for (int k = 0; k < 300; k++) {
        mbs_stepper_step(st, 1e-3, NULL);
        for (int i = 0; i < 9; i++) {
            mbs_contact_info ci;
            mbs_system_contact(s, i, &ci);
            if (ci.active && first[i] < 0) first[i] = k;
        }
    }
    /* corners 0..7 (bit 2: the sign along z), then the sphere */
    int bottom = first[8] < 0;
    for (int i = 0; i < 8; i++) bottom &= (i & 4) ? first[i] < 0 : first[i] == first[0] && first[0] >= 0;
    printf("  dropped on its collision box: bottom corners land at step %d, z at rest %.5f m\n", first[0],
           mbs_system_q(s)[2]);
    CHECK(bottom, "the four bottom corners land together (%d %d %d %d), the top ones and the sphere never", first[0],
          first[1], first[2], first[3]);
    CHECK(fabs(mbs_system_q(s)[2] - 0.1) < 2e-3, "at rest on the box's bottom at z %g", mbs_system_q(s)[2]);
    mbs_stepper_free(st);
    mbs_system_free(s);
    mbs_scenario_free(sc);
    mbs_error_free(&err);
}

/* Unitree's A1 of ../shared/reference (boxes, cylinders and sphere feet as collision shapes),
 * dropped with from_collision and no controller: it runs, lands on its shapes and stays above the
 * ground; Solo-12's published description collides with meshes only: all skipped, one warning. */
static void test_reference_robot(void)
{
    const char *a1 = tm_shared_reference("urdf/collection/a1.urdf");
    if (!a1) return;
    char path[64], text[1024];
    snprintf(path, sizeof path, "/tmp/mbs_test_collision_a1_%d.ini", (int)getpid());
    snprintf(text, sizeof text,
             "[model]\nurdf = %s\nbase_position = 0 0 0.5\n[contact]\nfrom_collision = 1\n[controller]\ntype = none\n"
             "dt = 0.001\n[stepper]\nname = expo\ndt = 0.001\n[run]\nduration = 0.5\n",
             a1);
    FILE *f = fopen(path, "w");
    fputs(text, f);
    fclose(f);
    mbs_error err;
    mbs_scenario *sc = mbs_scenario_load(path, NULL, 0, &err);
    CHECK(sc != NULL, "a1: %s", err.msg);
    if (sc) {
        mbs_sim *sim = mbs_sim_new(sc, &err);
        CHECK(sim != NULL, "a1 sim: %s", err.msg);
        mbs_sim_summary sum;
        mbs_sim_run_options o = {.csv = "", .html = ""};
        int rc = sim ? mbs_sim_run(sim, &o, &sum, &err) : -1;
        CHECK(rc == MBS_OK, "a1 run: %s", err.msg);
        if (rc == MBS_OK) {
            const mbs_system *s = mbs_sim_system(sim);
            int active = 0;
            for (int i = 0; i < mbs_system_ncontacts(s); i++) {
                mbs_contact_info ci;
                mbs_system_contact(s, i, &ci);
                active += ci.active;
            }
            printf("  a1 dropped on its %d collision contacts: %d touching after %.1f s, base at z %.3f m, "
                   "penetration <= %.1f mm\n",
                   sc->ncontacts, active, sum.sim_time, sum.base_final[2], 1e3 * sum.max_penetration);
            CHECK(!sum.diverged && active >= 3 && sum.base_final[2] > 0.03 && sum.max_penetration < 0.01,
                  "a1: diverged %d, %d touching, base z %g, penetration %g", sum.diverged, active, sum.base_final[2],
                  sum.max_penetration);
        }
        mbs_sim_free(sim);
    }
    mbs_scenario_free(sc);
    mbs_error_free(&err);

    const char *solo = tm_shared_reference("urdf/solo12.urdf");
    snprintf(text, sizeof text, "[model]\nurdf = %s\n[contact]\nfrom_collision = 1\n[controller]\ntype = none\n"
             "dt = 0.001\n[stepper]\ndt = 0.001\n[run]\nduration = 0.01\n", solo);
    f = fopen(path, "w");
    fputs(text, f);
    fclose(f);
    sc = mbs_scenario_load(path, NULL, 0, &err);
    CHECK(sc && sc->ncontacts == 0 && err.warnings && strstr(err.warnings, "17 mesh collision shapes skipped"),
          "solo12: %s", sc ? (err.warnings ? err.warnings : "no warning") : err.msg);
    mbs_scenario_free(sc);
    mbs_error_free(&err);
    unlink(path);
}

int main(void)
{
    RUN(test_urdf_shapes);
    RUN(test_mjcf_shapes);
    RUN(test_scenario_expansion);
    RUN(test_drop);
    RUN(test_reference_robot);
    return check_summary("test_collision");
}
