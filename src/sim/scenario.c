/* scenario.c — what a scenario file means (ini.c reads it): every key is checked against one
 * table (its section, kind, count, range and default), a controller's and a stepper's options
 * against their own tables, so that an unknown key, a malformed number or an out-of-range
 * value is reported with the file, line and key; the model is loaded and joint and frame names
 * resolved here too, so that a scenario that loads can run. The format is documented in
 * docs/scenarios.md. */
#include <errno.h>
#include <stdarg.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "ini.h"
#include "mbs/control.h"
#include "../spatial/spatial.h"


/* ---- the key table ---- */


static const keyspec KEYS[] = {
    {"model", "urdf", K_STR, 0, 0, 0, 0, 0, 0, "", "",
     "path of the URDF, relative to the scenario file (this or `mjcf`: one of the two is required)"},
    {"model", "mjcf", K_STR, 0, 0, 0, 0, 0, 0, "", "",
     "path of a MuJoCo MJCF model, relative to the scenario file, in place of `urdf` (docs/design.md, MJCF: what is read; "
     "`floating` does not apply, the file says which bodies are free)"},
    {"model", "keyframe", K_STR, 0, 0, 0, 0, 0, 0, "", "",
     "start from the model's keyframe of this name (an MJCF `<key>`): its q and v, before base_position, base_rpy, "
     "q.JOINT, base_velocity and v.JOINT, which override it where given"},
    {"model", "floating", K_INT, 0, 0, 0, 2, 0, 0, "", "1",
     "1: free-flyer root `root_joint`; 0: root link fixed to the world; 2: planar root `root_joint` in the world x-z "
     "plane (q = [z x cos θ sin θ], θ the pitch about y; v = [vz vx ω_y] in the base frame)"},
    {"model", "gravity", K_VEC, 3, 3, -1e4, 1e4, 0, 0, "m/s²", "0 0 -9.81",
     "gx gy gz in the world frame (e.g. \\|g\\| = 1 for a nondimensional model, tilted for a slope)"},
    {"model", "joint_damping", K_INT, 0, 0, -1, 1, 0, 0, "", "-1",
     "the model's joint damping (URDF `<dynamics damping>`, MJCF `damping`) as a passive torque −d v: 1 on, 0 off, "
     "-1 as the file's format has it (on for MJCF, as MuJoCo; off for URDF, as Pinocchio and the papers' runs)"},
    {"model", "armature", K_NUM, 0, 0, -1, 10, 0, 0, "kg·m²", "-1",
     "rotor inertia added to M's diagonal for every revolute and prismatic joint (kg for prismatic); -1: the model's "
     "own (an MJCF `armature`; none for URDF)"},
    {"model", "bound_mass", K_NUM, 0, 0, 0, 1e3, 0, 0, "kg", "0",
     "least mass of every moving body (MuJoCo's boundmass): gives massless links a minimal mass; 0: off"},
    {"model", "bound_inertia", K_NUM, 0, 0, 0, 1e3, 0, 0, "kg·m²", "0",
     "least principal moment of every moving body about its centre of mass (MuJoCo's boundinertia); 0: off"},
    {"model", "base_position", K_VEC, 3, 3, -1e4, 1e4, 0, 0, "m", "0 0 0", "x y z of the base (a floating root: floating 1 or 2, or a URDF's own planar root in the x-z plane; y = 0 when planar)"},
    {"model", "base_rpy", K_VEC, 3, 3, -10, 10, 0, 0, "rad", "0 0 0",
     "roll pitch yaw of the base, R = Rz(yaw) Ry(pitch) Rx(roll) (a floating root; only the pitch when planar)"},
    {"model", "q.*", K_NUM, 0, 0, -1e4, 1e4, 0, 0, "rad or m", "",
     "initial position of the one-coordinate joint `JOINT` (default: the neutral 0)"},
    {"model", "base_velocity", K_VEC, 6, 6, -1e4, 1e4, 0, 0, "m/s, rad/s", "0 0 0 0 0 0",
     "vx vy vz wx wy wz: initial linear velocity of the base origin and angular velocity of the base, both in world "
     "axes (a floating root; only vx vz wy when planar; all 0 when fixed)"},
    {"model", "v.*", K_NUM, 0, 0, -1e4, 1e4, 0, 0, "rad/s or m/s", "",
     "initial velocity of the one-coordinate joint `JOINT` (default: 0)"},
    {"contact", "stiffness", K_NUM, 0, 0, 0, 1e12, 0, 0, "N/m", "1e5", "K along the normal"},
    {"contact", "damping", K_NUM, 0, 0, 0, 1e10, 0, 0, "N·s/m", "300", "B along the normal"},
    {"contact", "stiffness_tangent", K_NUM, 0, 0, 0, 1e12, 0, 0, "N/m", "", "K along the surface (default: `stiffness`)"},
    {"contact", "damping_tangent", K_NUM, 0, 0, 0, 1e10, 0, 0, "N·s/m", "", "B along the surface (default: `damping`)"},
    {"contact", "friction", K_NUM, 0, 0, 0, 100, 0, 0, "", "1", "Coulomb friction coefficient μ"},
    {"contact", "frames", K_NAMES, 0, 0, 0, 0, 0, 1, "", "",
     "model frames carrying a contact point, separated by spaces or commas (repeatable)"},
    {"contact", "radius", K_NUM, 0, 0, 0, 1, OPEN_HI, 0, "m", "0",
     "0: a point at the frame; > 0: a sphere centred there, touching at its lowest point, or a rim's radius (`rim_axis`) "
     "(every point)"},
    {"contact", "offset", K_VEC, 3, 3, -10, 10, 0, 0, "m", "0 0 0",
     "x y z of the point (sphere or rim centre) in the frame, for every point of `frames`"},
    {"contact", "rim_axis", K_VEC, 3, 3, -10, 10, 0, 0, "", "0 0 0",
     "non-zero: every point of `frames` is a circular rim of radius `radius` (> 0) centred at `offset`, in the frame's "
     "plane normal to this axis (frame coordinates; rigid-contact steppers only)"},
    {"contact", "points", K_POINT, 3, 3, -10, 10, 0, 1, "m", "",
     "`FRAME x y z`: one contact point with its own offset in FRAME; one per line (continuation lines), after the points of `frames`"},
    {"contact", "capsule", K_POINT, 7, 7, -10, 10, 0, 1, "m", "",
     "`FRAME ax ay az bx by bz r`: a capsule on FRAME, the segment from a to b (frame coordinates) swept by radius r "
     "(a shin, a knee): spheres no more than r apart, its ends meeting every solid, its inner spheres the boxes only "
     "(against a plane or a terrain's triangle a segment's deepest point is an end); one per line, after the feet"},
    {"contact", "box", K_POINT, 6, 6, -10, 10, 0, 1, "m", "",
     "`FRAME cx cy cz hx hy hz`: a box on FRAME (centre, half sizes, the frame's axes) touching at its 8 corners; "
     "one per line, after the feet"},
    {"contact", "from_collision", K_BOOL, 0, 0, 0, 1, 0, 0, "", "0",
     "1: the model's collision shapes (URDF `<collision>`, MJCF geoms with contype or conaffinity not 0) become "
     "contact geometry on their links, after the feet and the `capsule` and `box` lines: a sphere a contact sphere at "
     "its centre, a capsule as `capsule`, a cylinder the capsule of its axis segment with its radius (its flat ends "
     "rounded: it reaches r past each), a box its 8 corners; meshes (a warning counts them) and shapes on the world "
     "are skipped"},
    {"contact", "collision_links", K_NAMES, 0, 0, 0, 0, 0, 1, "", "",
     "with from_collision = 1: only the shapes of links (MJCF bodies) whose names match one of these words, `*` "
     "matching any run of characters (`*_LOWER_LEG`, `FL_*`); each word must match a shape (default: every link; "
     "repeatable)"},
    {"environment", "ground", K_BOOL, 0, 0, 0, 1, 0, 0, "", "1", "1: the plane z = `ground_height`"},
    {"environment", "ground_height", K_NUM, 0, 0, -1e4, 1e4, 0, 0, "m", "0", "height of the ground"},
    {"environment", "plane", K_VEC, 4, 4, -1e4, 1e4, 0, 1, "m", "", "nx ny nz d: the solid half-space n·x <= d (repeatable; slopes)"},
    {"environment", "box", K_VEC, 6, 7, -1e4, 1e4, 0, 1, "m, rad", "",
     "cx cy cz hx hy hz [yaw]: a solid box, centre, half sizes, turned by yaw about z (repeatable)"},
    {"environment", "stairs", K_VEC, 4, 5, -1e4, 1e4, 0, 0, "m, -, m", "",
     "x0 tread rise count [width]: a flight of stairs along +x from x0, built from boxes on the ground (whose plane is "
     "its lower end): rise > 0 climbs from the ground, `count` risers of `rise` m with treads `tread` m deep, the "
     "last a landing 10 m long; rise < 0 comes down to it, from a landing count·|rise| m up ending at x0 (a robot "
     "starting there stands that much higher); width 2 m about y = 0 unless given"},
    {"environment", "heightfield", K_STR, 0, 0, 0, 0, 0, 0, "", "",
     "terrain: `random` (value noise from the keys below), the path of a text grid (relative to the scenario file: "
     "rows of heights in m, the first row at the rectangle's lowest y, every row the same count; # comments) or of a PGM "
     "image (P2 or P5, seen from above: its first row at the highest y; heights heightfield_level + heightfield_scale "
     "value / maxval); the solid below z = h(x, y), two triangles per cell, the edges going on level outside (none by "
     "default)"},
    {"environment", "heightfield_scale", K_NUM, 0, 0, -1e3, 1e3, 0, 0, "m", "0.1",
     "a PGM heightfield: the height of its brightest value (maxval) above heightfield_level"},
    {"environment", "heightfield_size", K_VEC, 4, 4, -1e4, 1e4, 0, 0, "m", "-1 -1 5 1",
     "xmin ymin xmax ymax: the heightfield's rectangle"},
    {"environment", "heightfield_resolution", K_NUM, 0, 0, 1e-4, 10, 0, 0, "m", "0.02",
     "random: the grid's spacing along x and y"},
    {"environment", "heightfield_roughness", K_NUM, 0, 0, 0, 10, 0, 0, "m", "0.02",
     "random: the heights lie within ± this about heightfield_level (faded to the level over one wavelength from the "
     "rectangle's border: a patch in a level floor)"},
    {"environment", "heightfield_wavelength", K_NUM, 0, 0, 1e-3, 1e3, 0, 0, "m", "0.2",
     "random: twice the spacing of the noise's lattice, whose values are smoothly interpolated"},
    {"environment", "heightfield_level", K_NUM, 0, 0, -1e4, 1e4, 0, 0, "m", "0",
     "random: the mean height; a PGM image: the height of its value 0"},
    {"environment", "heightfield_seed", K_INT, 0, 0, 0, 4294967295.0, 0, 0, "", "1", "random: the noise's seed"},
    {"controller", "type", K_STR, 0, 0, 0, 0, 0, 0, "", MBS_CONTROLLER_DEFAULT,
     "a registered controller (its options below); `./sim --help` lists them"},
    {"controller", "dt", K_NUM, 0, 0, 0, 10, OPEN_LO, 0, "s", NULL, "controller period; a whole number of stepper steps"},
    {"stepper", "name", K_STR, 0, 0, 0, 0, 0, 0, "", MBS_STEPPER_DEFAULT, "a registered stepper (its options below); `./sim --help` lists them"},
    {"stepper", "dt", K_NUM, 0, 0, 0, 1, OPEN_LO, 0, "s", NULL, "step; divides `[controller] dt` into at most 10⁹ steps"},
    {"stepper", "dissipation", K_NUM, 0, 0, 0, 1, 0, 0, "", "0",
     "exponential velocity dissipation λ: v ← (1 − λ) v after every step (Zapolsky and Drumwright 2015, sec. IV-E); 0: none"},
    {"run", "duration", K_NUM, 0, 0, 0, 1e7, OPEN_LO, 0, "s", NULL, "simulated time, at least one controller period and at most 10¹⁵ of them"},
    {"run", "max_velocity", K_NUM, 0, 0, 0, BIG, OPEN_LO, 0, "m/s or rad/s", "1e3", "any \\|v_k\\| above it stops the run as diverged"},
    {"run", "push", K_VEC, 5, 5, -1e7, 1e7, 0, 1, "s, N, N, N, s", "",
     "t fx fy fz duration: a force in world axes on the base's origin from t for `duration` seconds, added to the "
     "base's generalised force at the start of every step in that window and written to the CSV (repeatable; a "
     "floating root)"},
    {"run", "box", K_VEC, 6, 6, -BIG, BIG, 0, 0, "m", "",
     "xmin ymin zmin xmax ymax zmax: the base leaving it stops the run with status `left_box` (default: no box)"},
    {"output", "csv", K_STR, 0, 0, 0, 0, 0, 0, "", "", "trajectory file, relative to the current directory (none by default); `-`: stdout"},
    {"output", "every", K_INT, 0, 0, 1, 1e9, 0, 0, "", "1", "one CSV row every this many controller periods"},
    {"output", "html", K_STR, 0, 0, 0, 0, 0, 0, "", "",
     "replay page: a self-contained HTML file replaying the run in 3D with plots (docs/replay.md); none by default"},
};
#define NKEYS ((int)(sizeof KEYS / sizeof *KEYS))
static const char *const SECTIONS[] = {"model", "contact", "environment", "controller", "stepper", "run", "output"};
#define NSECTIONS ((int)(sizeof SECTIONS / sizeof *SECTIONS))


/* ---- reading the file ---- */








/* ---- messages ---- */






/* ---- values ---- */

static const keyspec *spec_of(const char *section, const char *key)
{
    for (int i = 0; i < NKEYS; i++) {
        const keyspec *k = &KEYS[i];
        if (strcmp(k->section, section) != 0) continue;
        size_t n = strlen(k->key);
        if (n >= 2 && k->key[n - 1] == '*' ? strncmp(k->key, key, n - 1) == 0 && key[n - 1] : strcmp(k->key, key) == 0)
            return k;
    }
    return NULL;
}

/* The numbers of section.key: its value, else the table's default (left alone when neither). */
static void nums(const mbs_scenario *sc, const char *section, const char *key, double *out, int n)
{
    const keyspec *k = spec_of(section, key);
    if (k && k->def && k->def[0]) {
        char bad[128];
        double x[8];
        int got = mbsi_ini_numbers(k->def, x, 8, bad, sizeof bad);
        for (int i = 0; i < n && i < got; i++) out[i] = x[i];
    }
    mbsi_ini_nums(sc, section, key, out, n);
}

static double num(const mbs_scenario *sc, const char *section, const char *key)
{
    double x = 0;
    nums(sc, section, key, &x, 1);
    return x;
}










/* ---- --set overrides ---- */



/* ---- building the scenario ---- */

static void rpy_to_quat(const double rpy[3], double q[4])
{
    double cr = cos(rpy[0] / 2), sr = sin(rpy[0] / 2), cp = cos(rpy[1] / 2), sp = sin(rpy[1] / 2);
    double cy = cos(rpy[2] / 2), sy = sin(rpy[2] / 2);
    /* q = qz(yaw) qy(pitch) qx(roll): R = Rz Ry Rx, the URDF rpy convention */
    q[0] = sr * cp * cy - cr * sp * sy;
    q[1] = cr * sp * cy + sr * cp * sy;
    q[2] = cr * cp * sy - sr * sp * cy;
    q[3] = cr * cp * cy + sr * sp * sy;
}

static int known_section(const char *name)
{
    for (int s = 0; s < NSECTIONS; s++)
        if (strcmp(name, SECTIONS[s]) == 0) return 1;
    return mbs_stepper_find(name) != NULL;   /* a scheme's options: the scheme checks them */
}

/* "file:line: unknown section [name] (known: ...)"; where is "file:line" or the --set. */
static int unknown_section(const char *where_, const char *name, mbs_error *err)
{
    char names[256];
    mbsi_scheme_names(mbs_stepper_at, mbs_stepper_count(), ", ", names, sizeof names);
    return mbsi_fail(err, MBS_ERR_PARSE,
                    "%s: unknown section [%s] (known: model, contact, environment, controller, stepper, run, output, "
                    "or a stepper's name for its options: %s)", where_, name, names);
}

/* Entry i repeats a key given before it (not an override's replaced one): an error. */
static int given_twice(const mbs_scenario *sc, int i, mbs_error *err)
{
    const mbs_scenario_entry *e = &sc->entries[i];
    for (int j = 0; j < i; j++) {
        const mbs_scenario_entry *o = &sc->entries[j];
        if (!o->dead && strcmp(o->section, e->section) == 0 && strcmp(o->key, e->key) == 0)
            return mbsi_ini_fail_at(sc, e, err, MBS_ERR_PARSE, "given twice (first at line %d)", o->line);
    }
    return MBS_OK;
}

/* A stepper's or controller's option: its text parsed by its table, once, into e->typed. */
static int check_option(const mbs_scenario *sc, mbs_scenario_entry *e, const mbs_option_table *t, mbs_error *err)
{
    mbs_error e1;
    mbs_error_clear(&e1);
    if (mbs_option_parse(t, e->key, e->value, &e->typed, &e1) != MBS_OK)
        return mbsi_ini_fail_at(sc, e, err, e1.code, "%s", e1.msg);
    return MBS_OK;
}

/* A [controller] key other than type and dt: an option of the chosen controller, checked by its
 * table; an option of another controller only earns a warning (switching the type with --set
 * controller.type=pd should not force the user to delete the gait's keys), but its value is
 * still checked by the table that has it. */
static int check_controller_key(const mbs_scenario *sc, mbs_scenario_entry *e, const mbs_scheme_info *ctrl,
                                mbs_error *err)
{
    const mbs_option_table *t = ctrl->options;
    if (!mbs_options_find(t, e->key, NULL)) {
        t = NULL;
        for (int c = 0; !t && c < mbs_controller_count(); c++)
            if (mbs_options_find(mbs_controller_at(c)->options, e->key, NULL)) t = mbs_controller_at(c)->options;
        if (!t) return mbsi_ini_fail_at(sc, e, err, MBS_ERR_PARSE, "unknown key '%s' in section [controller] (controller '%s' "
                               "has no such option)", e->key, ctrl->name);
        char w[MBS_PATH_LEN + 256];
        mbsi_ini_where(sc, e, w, sizeof w);
        mbsi_warn(err, "%s: not used by controller type '%s' (ignored)", w, ctrl->name);
    }
    return check_option(sc, e, t, err);
}

/* Checks every entry: its section, its key (and controller type), its value. */
static int check_entries(mbs_scenario *sc, mbs_error *err)
{
    /* the controller first: its option table decides which [controller] keys exist */
    const mbs_scenario_entry *te = mbsi_ini_find(sc, "controller", "type");
    const char *type = te ? te->value : MBS_CONTROLLER_DEFAULT;
    const mbs_scheme_info *ctrl = mbs_controller_find(type);
    if (!ctrl) {
        char names[256];
        mbsi_scheme_names(mbs_controller_at, mbs_controller_count(), " ", names, sizeof names);
        return mbsi_ini_fail_at(sc, te, err, MBS_ERR_PARSE, "'%s' is not one of: %s", type, names);
    }
    snprintf(sc->controller, sizeof sc->controller, "%s", type);
    for (int i = 0; i < sc->nentries; i++) {
        mbs_scenario_entry *e = &sc->entries[i];
        if (e->dead) continue;
        if (!known_section(e->section)) {
            /* sections of the file were checked at their header lines: this is a --set */
            char w[MBS_PATH_LEN + 256];
            snprintf(w, sizeof w, "%s: --set %s.%s=%s", sc->path, e->section, e->key, e->value);
            return unknown_section(w, e->section, err);
        }
        const keyspec *k = spec_of(e->section, e->key);
        const mbs_scheme_info *scheme = mbs_stepper_find(e->section);
        if (!k && (scheme || strcmp(e->section, "controller") == 0)) {
            if (given_twice(sc, i, err)) return MBS_ERR_PARSE;
            int rc = scheme ? check_option(sc, e, scheme->options, err) : check_controller_key(sc, e, ctrl, err);
            if (rc != MBS_OK) return rc;
            continue;
        }
        if (!k) return mbsi_ini_fail_at(sc, e, err, MBS_ERR_PARSE, "unknown key '%s' in section [%s]", e->key, e->section);
        if (!k->multi && given_twice(sc, i, err)) return MBS_ERR_PARSE;
        double x[8];
        int n;
        if (mbsi_ini_check_value(sc, e, k, x, &n, err)) return err ? err->code : MBS_ERR_PARSE;
    }
    for (int r = 0; r < NKEYS; r++)
        if (!KEYS[r].def && !mbsi_ini_find(sc, KEYS[r].section, KEYS[r].key))
            return mbsi_fail(err, MBS_ERR_PARSE, "%s: [%s] %s: missing (every scenario must set it)", sc->path,
                            KEYS[r].section, KEYS[r].key);
    return MBS_OK;
}

static void read_controller(mbs_scenario *sc)
{
    sc->controller_dt = num(sc, "controller", "dt");
}

#define MAX_SUBSTEPS 1e9    /* stepper steps per controller period */
#define MAX_PERIODS 1e15    /* controller periods per run */

/* Checks that need several keys at once. */
static int check_together(mbs_scenario *sc, mbs_error *err)
{
    const mbs_scenario_entry *sdt = mbsi_ini_find(sc, "stepper", "dt");
    if (sc->dt > sc->controller_dt * (1 + 1e-9))
        return mbsi_ini_fail_at(sc, sdt, err, MBS_ERR_ARG, "out of range: %g is longer than the controller period [controller] dt = %g",
                       sc->dt, sc->controller_dt);
    double ratio = sc->controller_dt / sc->dt;
    /* the loop counts sub-steps per controller period in an int and controller periods in a
     * long: bounds far beyond any real run keep both conversions defined */
    if (!(ratio <= MAX_SUBSTEPS))
        return mbsi_ini_fail_at(sc, sdt, err, MBS_ERR_ARG,
                       "out of range: %g makes %.3g steps per controller period [controller] dt = %g (at most %g)",
                       sc->dt, ratio, sc->controller_dt, MAX_SUBSTEPS);
    double periods = sc->duration / sc->controller_dt;
    if (!(periods <= MAX_PERIODS))
        return mbsi_ini_fail_at(sc, mbsi_ini_find(sc, "run", "duration"), err, MBS_ERR_ARG,
                       "out of range: %g is %.3g controller periods of %g s (at most %g)", sc->duration, periods,
                       sc->controller_dt, MAX_PERIODS);
    if (fabs(ratio - floor(ratio + 0.5)) > 1e-6 * ratio)
        return mbsi_ini_fail_at(sc, sdt, err, MBS_ERR_ARG,
                       "out of range: %g does not divide the controller period [controller] dt = %g into whole steps",
                       sc->dt, sc->controller_dt);
    if (sc->duration < sc->controller_dt)
        return mbsi_ini_fail_at(sc, mbsi_ini_find(sc, "run", "duration"), err, MBS_ERR_ARG,
                       "out of range: %g is shorter than one controller period (%g)", sc->duration, sc->controller_dt);
    for (int k = 0; k < 3; k++)
        if (!(sc->box_min[k] < sc->box_max[k]))
            return mbsi_ini_fail_at(sc, mbsi_ini_find(sc, "run", "box"), err, MBS_ERR_ARG,
                           "out of range: the box is xmin ymin zmin xmax ymax zmax with each min < max");
    return MBS_OK;
}

static void scenario_dir(const char *path, char *dir, size_t n)
{
    const char *slash = strrchr(path, '/');
    if (!slash) snprintf(dir, n, ".");
    else if (slash == path) snprintf(dir, n, "/");
    else snprintf(dir, n, "%.*s", (int)(slash - path), path);
}

/* The path entry e names, resolved against the scenario file's folder (absolute paths as they
 * are), into out (n bytes). */
static int resolve_path(const mbs_scenario *sc, const mbs_scenario_entry *e, char *out, size_t n, mbs_error *err)
{
    char dir[MBS_PATH_LEN];
    scenario_dir(sc->path, dir, sizeof dir);
    if (e->value[0] == '/' || !strchr(sc->path, '/')) snprintf(out, n, "%s", e->value);
    else if ((size_t)snprintf(out, n, "%s/%s", dir, e->value) >= n) return mbsi_ini_fail_at(sc, e, err, MBS_ERR_ARG, "path too long");
    return MBS_OK;
}

static int load_model(mbs_scenario *sc, mbs_error *err)
{
    const mbs_scenario_entry *eu = mbsi_ini_find(sc, "model", "urdf"), *em = mbsi_ini_find(sc, "model", "mjcf");
    if (!eu && !em) return mbsi_fail(err, MBS_ERR_PARSE, "%s: [model] urdf or mjcf: missing (every scenario must set one)", sc->path);
    if (eu && em) return mbsi_ini_fail_at(sc, em, err, MBS_ERR_PARSE, "give [model] urdf or mjcf, not both");
    const mbs_scenario_entry *e = eu ? eu : em;
    if (resolve_path(sc, e, sc->urdf, sizeof sc->urdf, err) != MBS_OK) return err ? err->code : MBS_ERR_ARG;
    FILE *f = fopen(sc->urdf, "rb");
    if (!f) return mbsi_ini_fail_at(sc, e, err, MBS_ERR_IO, "cannot open '%s': %s", sc->urdf, strerror(errno));
    fclose(f);
    mbs_error merr;
    mbs_error_clear(&merr);
    mbs_urdf_options uo = {.floating_base = sc->floating, .bound_mass = num(sc, "model", "bound_mass"),
                           .bound_inertia = num(sc, "model", "bound_inertia")};
    mbs_mjcf_options mo = {.bound_mass = uo.bound_mass, .bound_inertia = uo.bound_inertia};
    sc->model = eu ? mbs_model_from_urdf(sc->urdf, &uo, &merr) : mbs_model_from_mjcf(sc->urdf, &mo, &merr);
    /* the model's warnings join the scenario's, one line each */
    for (char *line = merr.warnings, *nl; line && *line; line = nl + 1) {
        nl = strchr(line, '\n');
        if (!nl) { mbsi_warn(err, "%s", line); break; }
        *nl = '\0';
        mbsi_warn(err, "%s", line);
    }
    if (!sc->model) {
        int rc = mbsi_ini_fail_at(sc, e, err, merr.code ? merr.code : MBS_ERR_MODEL, "%s", merr.msg);
        mbs_error_free(&merr);
        return rc;
    }
    mbs_error_free(&merr);
    nums(sc, "model", "gravity", sc->gravity, 3);
    mbs_model_set_gravity(sc->model, sc->gravity);
    double arm = num(sc, "model", "armature");
    for (int j = 0; arm >= 0 && j < mbs_model_njoints(sc->model); j++) {
        mbs_joint_type t = mbs_joint_type_of(sc->model, j);
        if (t == MBS_JOINT_REVOLUTE || t == MBS_JOINT_PRISMATIC) mbs_model_set_armature(sc->model, j, &arm);
    }
    int damping = (int)num(sc, "model", "joint_damping");
    sc->joint_damping = damping < 0 ? em != NULL : damping;
    return MBS_OK;
}

/* The initial velocity v0 (nv): the keyframe's kv (NULL: zeros), [model] base_velocity, given in
 * world axes, turned into the root's body-frame coordinates at the base orientation of q0, and the
 * v.JOINT keys. */
static int initial_velocity(mbs_scenario *sc, int root_free, int root_planar, const double *kv, mbs_error *err)
{
    const mbs_model *m = sc->model;
    sc->v0 = calloc((size_t)mbs_model_nv(m) + 1, sizeof(double));
    if (!sc->v0) return mbsi_fail(err, MBS_ERR_NOMEM, "out of memory");
    if (kv) memcpy(sc->v0, kv, (size_t)mbs_model_nv(m) * sizeof(double));
    const mbs_scenario_entry *bv = mbsi_ini_find(sc, "model", "base_velocity");
    double w[6] = {0, 0, 0, 0, 0, 0};
    nums(sc, "model", "base_velocity", w, 6);
    int any = 0;
    for (int k = 0; k < 6; k++) any |= w[k] != 0;
    if (any && !root_free && !root_planar)
        return mbsi_ini_fail_at(sc, bv, err, MBS_ERR_ARG, "the model has no floating root (set floating = 1 or 2; a URDF's own planar root must move in the x-z plane) to give "
                                "a velocity");
    int iq = root_free || root_planar ? mbs_joint_idx_q(m, 0) : 0, iv = root_free || root_planar ? mbs_joint_idx_v(m, 0) : 0;
    if (kv && !bv) {
        /* the keyframe's base velocity stays */
    } else if (root_free) {
        /* the free-flyer's v is [v; ω] in the body frame: v_body = Rᵀ v_world, ω_body = Rᵀ ω_world */
        double R[9];
        m3_from_quat(sc->q0 + iq + 3, R);
        m3t_mulv(R, w, sc->v0 + iv);
        m3t_mulv(R, w + 3, sc->v0 + iv + 3);
    } else if (root_planar) {
        /* v = [vz vx ω_y] along the base's own z and x: v_b = R_y(θ)ᵀ v_world */
        if (w[1] != 0 || w[3] != 0 || w[5] != 0)
            return mbsi_ini_fail_at(sc, bv, err, MBS_ERR_ARG, "out of range: vy %g, wx %g and wz %g must be 0 for a planar "
                                    "root (floating = 2), which moves in the x-z plane and turns about y", w[1], w[3], w[5]);
        double c = sc->q0[iq + 2], s = sc->q0[iq + 3];
        sc->v0[iv] = w[0] * s + w[2] * c;
        sc->v0[iv + 1] = w[0] * c - w[2] * s;
        sc->v0[iv + 2] = w[4];
    }
    for (int i = 0; i < sc->nentries; i++) {
        const mbs_scenario_entry *e = &sc->entries[i];
        if (e->dead || strcmp(e->section, "model") != 0 || strncmp(e->key, "v.", 2) != 0) continue;
        int j = mbs_joint_id(m, e->key + 2);
        if (j < 0) return mbsi_ini_fail_at(sc, e, err, MBS_ERR_ARG, "no joint '%s' in model '%s'", e->key + 2, mbs_model_name(m));
        if (mbs_joint_nv(m, j) != 1)
            return mbsi_ini_fail_at(sc, e, err, MBS_ERR_ARG, "joint '%s' has %d velocity coordinates; only 1-coordinate "
                                    "joints are set this way (a floating root: base_velocity)", e->key + 2, mbs_joint_nv(m, j));
        sc->v0[mbs_joint_idx_v(m, j)] = mbsi_ini_num(sc, "model", e->key, 0);
    }
    return MBS_OK;
}

static int initial_posture(mbs_scenario *sc, mbs_error *err)
{
    const mbs_model *m = sc->model;
    sc->q0 = calloc((size_t)mbs_model_nq(m) + 1, sizeof(double));
    if (!sc->q0) return mbsi_fail(err, MBS_ERR_NOMEM, "out of memory");
    mbs_neutral(m, sc->q0);
    const double *kq = NULL, *kv = NULL;
    const mbs_scenario_entry *ek = mbsi_ini_find(sc, "model", "keyframe");
    if (ek) {
        int k = mbs_model_keyframe_id(m, ek->value);
        if (k < 0)
            return mbsi_ini_fail_at(sc, ek, err, MBS_ERR_ARG, "no keyframe '%s' in model '%s' (it has %d)", ek->value,
                                    mbs_model_name(m), mbs_model_nkeyframes(m));
        mbs_model_keyframe(m, k, &kq, &kv);
        memcpy(sc->q0, kq, (size_t)mbs_model_nq(m) * sizeof(double));
    }
    const mbs_scenario_entry *bp = mbsi_ini_find(sc, "model", "base_position"), *br = mbsi_ini_find(sc, "model", "base_rpy");
    int kind = mbsi_root_kind(m), root_free = kind == MBS_ROOT_FREE, root_planar = kind == MBS_ROOT_PLANAR;
    if ((bp || br) && !root_free && !root_planar)
        return mbsi_ini_fail_at(sc, bp ? bp : br, err, MBS_ERR_ARG, "the model has no floating root (set floating = 1 or 2; a URDF's own planar root must move in the x-z plane)");
    double pos[3] = {0, 0, 0}, rpy[3] = {0, 0, 0};
    nums(sc, "model", "base_position", pos, 3);
    nums(sc, "model", "base_rpy", rpy, 3);
    int iq = root_free || root_planar ? mbs_joint_idx_q(m, 0) : 0;
    if (root_free) {   /* a keyframe's base pose stays where these are not given */
        if (bp || !kq) memcpy(sc->q0 + iq, pos, sizeof pos);
        if (br || !kq) rpy_to_quat(rpy, sc->q0 + iq + 3);
    } else if (root_planar) {
        /* the planar root moves in the world x-z plane: its in-plane coordinates are (z, x) in
         * that order (src/model/model.c), its angle the pitch about y */
        if (pos[1] != 0)
            return mbsi_ini_fail_at(sc, bp, err, MBS_ERR_ARG, "out of range: y = %g, but a planar root (floating = 2) moves in "
                           "the plane y = 0", pos[1]);
        if (rpy[0] != 0 || rpy[2] != 0)
            return mbsi_ini_fail_at(sc, br, err, MBS_ERR_ARG, "out of range: roll %g and yaw %g must be 0 for a planar root "
                           "(floating = 2), which only pitches about y", rpy[0], rpy[2]);
        sc->q0[iq] = pos[2];
        sc->q0[iq + 1] = pos[0];
        sc->q0[iq + 2] = cos(rpy[1]);
        sc->q0[iq + 3] = sin(rpy[1]);
    }
    for (int i = 0; i < sc->nentries; i++) {
        const mbs_scenario_entry *e = &sc->entries[i];
        if (e->dead || strcmp(e->section, "model") != 0 || strncmp(e->key, "q.", 2) != 0) continue;
        int j = mbs_joint_id(m, e->key + 2);
        if (j < 0) return mbsi_ini_fail_at(sc, e, err, MBS_ERR_ARG, "no joint '%s' in model '%s'", e->key + 2, mbs_model_name(m));
        if (mbs_joint_nq(m, j) != 1)
            return mbsi_ini_fail_at(sc, e, err, MBS_ERR_ARG, "joint '%s' has %d coordinates; only 1-coordinate joints are set "
                           "this way", e->key + 2, mbs_joint_nq(m, j));
        sc->q0[mbs_joint_idx_q(m, j)] = mbsi_ini_num(sc, "model", e->key, 0);
    }
    return initial_velocity(sc, root_free, root_planar, kv, err);
}

/* Appends a contact point on frame name (checked to exist) from entry e; axis non-zero: a rim. */
static int add_contact(mbs_scenario *sc, const mbs_scenario_entry *e, const char *name, const double offset[3],
                       double radius, const double axis[3], int link, int boxes_only, mbs_error *err)
{
    if (!link && sc->ncontacts > 0 && sc->contacts[sc->ncontacts - 1].link)
        return mbsi_ini_fail_at(sc, e, err, MBS_ERR_ARG, "a foot after a link's capsule or box: the feet come first");
    if (mbs_frame_id(sc->model, name) < 0)
        return mbsi_ini_fail_at(sc, e, err, MBS_ERR_ARG, "no frame '%s' in model '%s'", name, mbs_model_name(sc->model));
    if (sc->ncontacts >= MBS_SIM_MAX_CONTACTS)
        return mbsi_ini_fail_at(sc, e, err, MBS_ERR_ARG, "out of range: more than %d contact points", MBS_SIM_MAX_CONTACTS);
    mbs_scenario_contact *c = &sc->contacts[sc->ncontacts++];
    snprintf(c->frame, sizeof c->frame, "%s", name);
    memcpy(c->offset, offset, sizeof c->offset);
    c->radius = radius;
    memcpy(c->axis, axis, sizeof c->axis);
    c->link = link;
    c->boxes_only = boxes_only;
    return MBS_OK;
}

/* [contact] points: one "FRAME x y z" per line, each point with its own offset in its frame
 * (after the points of `frames`, in file order). */
static int read_points(mbs_scenario *sc, double radius, mbs_error *err)
{
    for (int i = 0; i < sc->nentries; i++) {
        const mbs_scenario_entry *e = &sc->entries[i];
        if (e->dead || strcmp(e->section, "contact") != 0 || strcmp(e->key, "points") != 0) continue;
        char name[MBS_NAME_LEN], bad[128];
        const char *rest = NULL;
        double x[3] = {0, 0, 0};
        mbsi_ini_split_point(e->value, name, sizeof name, &rest);   /* checked by check_point */
        mbsi_ini_numbers(rest, x, 3, bad, sizeof bad);
        static const double no_rim[3] = {0, 0, 0};
        int rc = add_contact(sc, e, name, x, radius, no_rim, 0, 0, err);
        if (rc != MBS_OK) return rc;
    }
    return MBS_OK;
}

/* [contact] capsule and box: a link's geometry, after the feet, as the spheres and corners the
 * system is given (mbs_capsule_spheres, mbs_box_corners: one contact of the scenario per contact of
 * the system). */
static int read_link_geometry(mbs_scenario *sc, mbs_error *err)
{
    for (int i = 0; i < sc->nentries; i++) {
        const mbs_scenario_entry *e = &sc->entries[i];
        int capsule = strcmp(e->key, "capsule") == 0;
        if (e->dead || strcmp(e->section, "contact") != 0 || (!capsule && strcmp(e->key, "box") != 0)) continue;
        char name[MBS_NAME_LEN], bad[128];
        const char *rest = NULL;
        double x[7] = {0};
        mbsi_ini_split_point(e->value, name, sizeof name, &rest);   /* checked by check_point */
        mbsi_ini_numbers(rest, x, capsule ? 7 : 6, bad, sizeof bad);
        double pts[3 * MBS_SIM_MAX_CONTACTS];
        int n = 8;
        if (capsule) {
            if (!(x[6] > 0))
                return mbsi_ini_fail_at(sc, e, err, MBS_ERR_ARG, "out of range: the capsule's radius (7th number) %g m must "
                                        "be > 0", x[6]);
            n = mbs_capsule_spheres(x, x + 3, x[6], pts, MBS_SIM_MAX_CONTACTS);
        } else {
            if (!(x[3] >= 0 && x[4] >= 0 && x[5] >= 0))
                return mbsi_ini_fail_at(sc, e, err, MBS_ERR_ARG, "out of range: the box's half sizes must be >= 0");
            mbs_box_corners(x, NULL, x + 3, pts);
        }
        if (n > MBS_SIM_MAX_CONTACTS - sc->ncontacts)
            return mbsi_ini_fail_at(sc, e, err, MBS_ERR_ARG, "out of range: its %d %s and the %d contact points before "
                                    "them are more than %d", n, capsule ? "spheres" : "corners", sc->ncontacts,
                                    MBS_SIM_MAX_CONTACTS);
        static const double no_rim[3] = {0, 0, 0};
        for (int k = 0; k < n; k++) {
            int rc = add_contact(sc, e, name, pts + 3 * k, capsule ? x[6] : 0, no_rim, 1, capsule && k > 0 && k < n - 1, err);
            if (rc != MBS_OK) return rc;
        }
    }
    return MBS_OK;
}

/* 1 when name matches pattern, each '*' of which matches any run of characters (none included). */
static int glob_match(const char *pattern, const char *name)
{
    const char *star = NULL, *resume = NULL;
    while (*name) {
        if (*pattern == '*') {
            star = pattern++;
            resume = name;
        } else if (*pattern == *name) {
            pattern++;
            name++;
        } else if (star) {   /* let the last '*' swallow one more character and retry */
            pattern = star + 1;
            name = ++resume;
        } else {
            return 0;
        }
    }
    while (*pattern == '*') pattern++;
    return *pattern == '\0';
}

/* 1 when a collision shape on link is chosen by [contact] collision_links (every link when it is
 * not given). */
static int collision_link_chosen(const mbs_scenario *sc, const char *link)
{
    int any = 0, chosen = 0;
    for (int i = 0; i < sc->nentries; i++) {
        const mbs_scenario_entry *e = &sc->entries[i];
        if (e->dead || strcmp(e->section, "contact") != 0 || strcmp(e->key, "collision_links") != 0) continue;
        const char *p = e->value;
        char word[MBS_NAME_LEN];
        for (int len; (len = mbsi_next_word(&p, word, sizeof word)) != 0;) {
            any++;
            if (len > 0 && glob_match(word, link)) chosen = 1;
        }
    }
    return !any || chosen;
}

/* Checks every word of [contact] collision_links: not too long, and matching a collision shape's link
 * (a misspelt link would silently drop geometry). */
static int check_collision_links(const mbs_scenario *sc, mbs_error *err)
{
    const mbs_model *m = sc->model;
    for (int i = 0; i < sc->nentries; i++) {
        const mbs_scenario_entry *e = &sc->entries[i];
        if (e->dead || strcmp(e->section, "contact") != 0 || strcmp(e->key, "collision_links") != 0) continue;
        if (!num(sc, "contact", "from_collision"))
            return mbsi_ini_fail_at(sc, e, err, MBS_ERR_ARG, "has no effect without [contact] from_collision = 1");
        const char *p = e->value;
        char word[MBS_NAME_LEN];
        for (int len; (len = mbsi_next_word(&p, word, sizeof word)) != 0;) {
            if (len < 0) return mbsi_ini_fail_at(sc, e, err, MBS_ERR_ARG, "link name too long");
            int found = 0;
            for (int k = 0; k < mbs_model_ncollisions(m) && !found; k++)
                found = glob_match(word, mbs_model_collision(m, k)->link);
            if (!found)
                return mbsi_ini_fail_at(sc, e, err, MBS_ERR_ARG, "no collision shape of model '%s' is on a link matching "
                                        "'%s'", mbs_model_name(m), word);
        }
    }
    return MBS_OK;
}

/* The frame that carries collision shape k's contacts: its link's own frame (URDF link, MJCF body)
 * when that is on the shape's body, else the body's first frame that its name finds (a contact
 * names its frame, and mbs_frame_id returns the first of equal names); -1 when there is none. */
static int collision_frame(const mbs_model *m, const mbs_collision *k)
{
    int f = mbs_frame_id(m, k->link);
    if (f >= 0 && mbs_frame_body(m, f) == k->body) return f;
    for (f = 0; f < mbs_model_nframes(m); f++)
        if (mbs_frame_body(m, f) == k->body && mbs_frame_id(m, mbs_frame_name(m, f)) == f) return f;
    return -1;
}

/* Collision shape k as contact points in frame f (3 numbers each into pts, at most max of them):
 * its sphere, its capsule's spheres (a cylinder's: the capsule of its axis segment), its box's
 * corners; their radius into *radius. The count, 0 for a mesh, -1 for a capsule or cylinder
 * without a radius. */
static int collision_points(const mbs_model *m, const mbs_collision *k, int f, double *pts, int max, double *radius)
{
    double Rf[9], pf[3], d[3], c[3], R[9];
    mbs_frame_local_placement(m, f, Rf, pf);
    /* the shape's placement in the frame: Rfᵀ R and Rfᵀ (p − pf) */
    for (int i = 0; i < 3; i++) d[i] = k->p[i] - pf[i];
    m3t_mulv(Rf, d, c);
    m3t_mul(Rf, k->R, R);
    *radius = 0;
    switch (k->type) {
    case MBS_SHAPE_SPHERE:
        *radius = k->size[0];
        memcpy(pts, c, sizeof c);
        return 1;
    case MBS_SHAPE_CAPSULE: case MBS_SHAPE_CYLINDER: {
        double a[3], b[3], h = k->size[1] / 2;
        for (int i = 0; i < 3; i++) {   /* the axis segment: ± h along the shape's z */
            a[i] = c[i] - h * R[6 + i];
            b[i] = c[i] + h * R[6 + i];
        }
        *radius = k->size[0];
        int n = mbs_capsule_spheres(a, b, k->size[0], pts, max);
        return n > 0 ? n : -1;
    }
    case MBS_SHAPE_BOX: {
        double half[3] = {k->size[0] / 2, k->size[1] / 2, k->size[2] / 2};
        mbs_box_corners(c, R, half, pts);
        return 8;
    }
    default: return 0;
    }
}

/* [contact] from_collision: the model's collision shapes on the links collision_links chooses, as
 * link geometry after the feet (collision_points); meshes are counted in one warning, shapes on the
 * world are skipped (nothing moves them). All shapes are counted before any is added, so that a
 * model with too many says how many it needs. */
static int read_collision_geometry(mbs_scenario *sc, mbs_error *err)
{
    int rc = check_collision_links(sc, err);
    const mbs_scenario_entry *e = mbsi_ini_find(sc, "contact", "from_collision");
    if (rc != MBS_OK || !e || !num(sc, "contact", "from_collision")) return rc;
    const mbs_model *m = sc->model;
    double pts[3 * MBS_SIM_MAX_CONTACTS];
    int meshes = 0, first_mesh = -1, total = 0;
    for (int pass = 0; pass < 2; pass++) {
        for (int i = 0; i < mbs_model_ncollisions(m); i++) {
            const mbs_collision *k = mbs_model_collision(m, i);
            if (k->body < 0 || !collision_link_chosen(sc, k->link)) continue;
            int f = collision_frame(m, k);
            double r;
            int n = f < 0 ? 0 : collision_points(m, k, f, pts, MBS_SIM_MAX_CONTACTS, &r);
            if (n < 0)
                return mbsi_ini_fail_at(sc, e, err, MBS_ERR_ARG, "the %s of link '%s' has radius %g: no capsule stands "
                                        "for it", k->type == MBS_SHAPE_CAPSULE ? "capsule" : "cylinder", k->link, k->size[0]);
            if (pass == 0) {
                if (k->type == MBS_SHAPE_MESH && meshes++ == 0) first_mesh = i;
                total += n;
                continue;
            }
            static const double no_rim[3] = {0, 0, 0};
            int capsule = k->type == MBS_SHAPE_CAPSULE || k->type == MBS_SHAPE_CYLINDER;
            for (int j = 0; j < n; j++)
                if ((rc = add_contact(sc, e, mbs_frame_name(m, f), pts + 3 * j, r, no_rim, 1,
                                      capsule && j > 0 && j < n - 1, err)) != MBS_OK)
                    return rc;
        }
        if (pass == 0 && total > MBS_SIM_MAX_CONTACTS - sc->ncontacts)
            return mbsi_ini_fail_at(sc, e, err, MBS_ERR_ARG, "out of range: the collision shapes make %d contact points, "
                                    "and with the %d before them that is more than %d (choose links with "
                                    "[contact] collision_links)", total, sc->ncontacts, MBS_SIM_MAX_CONTACTS);
    }
    if (meshes) {
        char w[MBS_PATH_LEN + 256];
        mbsi_ini_where(sc, e, w, sizeof w);
        const mbs_collision *k = mbs_model_collision(m, first_mesh);
        mbsi_warn(err, "%s: %d mesh collision shape%s skipped (contacts have no mesh geometry), the first '%s' of "
                  "link '%s'", w, meshes, meshes > 1 ? "s" : "", k->mesh, k->link);
    }
    return MBS_OK;
}

static int read_contacts(mbs_scenario *sc, mbs_error *err)
{
    mbs_material *mt = &sc->material;
    mt->k_normal = num(sc, "contact", "stiffness");
    mt->b_normal = num(sc, "contact", "damping");
    mt->k_tangent = mbsi_ini_num(sc, "contact", "stiffness_tangent", mt->k_normal);
    mt->b_tangent = mbsi_ini_num(sc, "contact", "damping_tangent", mt->b_normal);
    mt->mu = num(sc, "contact", "friction");
    double offset[3] = {0, 0, 0}, axis[3] = {0, 0, 0}, radius = num(sc, "contact", "radius");
    nums(sc, "contact", "offset", offset, 3);
    nums(sc, "contact", "rim_axis", axis, 3);
    double axis_norm = sqrt(axis[0] * axis[0] + axis[1] * axis[1] + axis[2] * axis[2]);
    if (axis_norm != 0) {
        const mbs_scenario_entry *ra = mbsi_ini_find(sc, "contact", "rim_axis");
        /* a tiny axis would be normalised into noise: it is a mistake, not a direction */
        if (axis_norm < 1e-9)
            return mbsi_ini_fail_at(sc, ra, err, MBS_ERR_ARG, "out of range: the axis has length %g (0 for no rim, else a "
                           "direction)", axis_norm);
        if (!(radius > 0))
            return mbsi_ini_fail_at(sc, ra, err, MBS_ERR_ARG, "a rim needs a radius: set [contact] radius > 0 (it is %g)",
                           radius);
    }
    /* frames: names separated by spaces or commas, over one or more lines */
    for (int i = 0; i < sc->nentries; i++) {
        const mbs_scenario_entry *e = &sc->entries[i];
        if (e->dead || strcmp(e->section, "contact") != 0 || strcmp(e->key, "frames") != 0) continue;
        const char *p = e->value;
        char name[MBS_NAME_LEN];
        for (int len; (len = mbsi_next_word(&p, name, sizeof name)) != 0;) {
            if (len < 0) return mbsi_ini_fail_at(sc, e, err, MBS_ERR_ARG, "frame name too long");
            int rc = add_contact(sc, e, name, offset, radius, axis, 0, 0, err);
            if (rc != MBS_OK) return rc;
        }
    }
    int rc = read_points(sc, radius, err);
    if (rc == MBS_OK) rc = read_link_geometry(sc, err);
    return rc != MBS_OK ? rc : read_collision_geometry(sc, err);
}

/* [run] push: external forces on the base, in file order (a floating root only). */
static int read_pushes(mbs_scenario *sc, mbs_error *err)
{
    for (int i = 0; i < sc->nentries; i++) {
        const mbs_scenario_entry *e = &sc->entries[i];
        if (e->dead || strcmp(e->section, "run") != 0 || strcmp(e->key, "push") != 0) continue;
        if (mbsi_root_kind(sc->model) == MBS_ROOT_FIXED)
            return mbsi_ini_fail_at(sc, e, err, MBS_ERR_ARG, "a push acts on a floating base, and this model's root is "
                           "fixed (set [model] floating = 1 or 2)");
        if (sc->npushes >= MBS_SIM_MAX_PUSHES)
            return mbsi_ini_fail_at(sc, e, err, MBS_ERR_ARG, "out of range: more than %d pushes", MBS_SIM_MAX_PUSHES);
        double x[5] = {0};
        char bad[128];
        mbsi_ini_numbers(e->value, x, 5, bad, sizeof bad);
        if (!(x[0] >= 0)) return mbsi_ini_fail_at(sc, e, err, MBS_ERR_ARG, "out of range: the start t = %g s must be >= 0", x[0]);
        if (!(x[4] > 0))
            return mbsi_ini_fail_at(sc, e, err, MBS_ERR_ARG, "out of range: the duration (5th number) %g s must be > 0", x[4]);
        mbs_scenario_push *p = &sc->pushes[sc->npushes++];
        p->t = x[0];
        memcpy(p->force, x + 1, sizeof p->force);
        p->duration = x[4];
    }
    return MBS_OK;
}

/* A 64-bit hash of (seed, i, j) (splitmix64's finaliser over their mix): the noise's lattice
 * value at (i, j), the same whatever the grid's size. */
static uint64_t lattice_hash(uint64_t seed, long i, long j)
{
    uint64_t z = seed * 0x9E3779B97F4A7C15ull + (uint64_t)i * 0xBF58476D1CE4E5B9ull + (uint64_t)j * 0x94D049BB133111EBull;
    z = (z ^ (z >> 30)) * 0xBF58476D1CE4E5B9ull;
    z = (z ^ (z >> 27)) * 0x94D049BB133111EBull;
    return z ^ (z >> 31);
}

/* Smoothstep: 0 at x <= 0, 1 at x >= 1, continuous slope. */
static double smooth01(double x)
{
    x = fmin(fmax(x, 0), 1);
    return x * x * (3 - 2 * x);
}

/* The random terrain: value noise, a lattice of heights uniform in [−a, a] at half the wavelength's
 * spacing, interpolated by smoothstep weights (continuous slopes), about the level; faded to the
 * level over one wavelength from the rectangle's border, so that the patch sits in a level floor
 * (outside it the edge, at the level, goes on). */
static void random_heights(mbs_scenario *sc, mbs_heightfield *f)
{
    double a = num(sc, "environment", "heightfield_roughness"), L = 0.5 * num(sc, "environment", "heightfield_wavelength");
    double level = num(sc, "environment", "heightfield_level");
    uint64_t seed = (uint64_t)num(sc, "environment", "heightfield_seed");
    double wl = 2 * L, xmax = f->x0 + (f->nx - 1) * f->dx, ymax = f->y0 + (f->ny - 1) * f->dy;
    for (int j = 0; j < f->ny; j++)
        for (int i = 0; i < f->nx; i++) {
            double px = f->x0 + i * f->dx, py = f->y0 + j * f->dy;
            double fade = smooth01(fmin(px - f->x0, xmax - px) / wl) * smooth01(fmin(py - f->y0, ymax - py) / wl);
            double x = (f->x0 + i * f->dx) / L, y = (f->y0 + j * f->dy) / L;
            long ix = (long)floor(x), iy = (long)floor(y);
            double s = x - ix, t = y - iy, v[4];
            for (int c = 0; c < 4; c++)
                v[c] = a * (2 * (double)(lattice_hash(seed, ix + (c & 1), iy + (c >> 1)) >> 11) / 9007199254740992.0 - 1);
            s = smooth01(s);
            t = smooth01(t);
            sc->heights[i + (size_t)f->nx * j] =
                level + fade * ((1 - t) * ((1 - s) * v[0] + s * v[1]) + t * ((1 - s) * v[2] + s * v[3]));
        }
}

/* The next number of a PGM header (after whitespace and # comments), or -1. */
static long pgm_number(FILE *in)
{
    int ch;
    while ((ch = fgetc(in)) != EOF) {
        if (ch == '#') while ((ch = fgetc(in)) != EOF && ch != '\n') {}
        else if (ch != ' ' && ch != '\t' && ch != '\r' && ch != '\n') break;
    }
    long x = -1;
    while (ch >= '0' && ch <= '9') {
        x = (x < 0 ? 0 : 10 * x) + (ch - '0');
        if (x > 100000000) return -1;
        ch = fgetc(in);
    }
    return x;
}

/* A PGM image (P2 text or P5 binary, 8 or 16 bits) of heights: level + scale value / maxval, its
 * first row at the rectangle's highest y (an image seen from above), into sc->heights and f. */
static int pgm_heights(mbs_scenario *sc, FILE *in, const char *path, int binary, mbs_heightfield *f, mbs_error *err)
{
    long w = pgm_number(in), h = pgm_number(in), maxval = pgm_number(in);
    if (w < 2 || h < 2 || maxval < 1 || maxval > 65535 || (double)w * (double)h > 1e7)
        return mbsi_fail(err, MBS_ERR_ARG, "%s: a PGM header of %ld x %ld, maxval %ld (at least 2 x 2, at most 1e7 pixels, "
                         "maxval 1 to 65535)", path, w, h, maxval);
    double scale = num(sc, "environment", "heightfield_scale"), level = num(sc, "environment", "heightfield_level");
    sc->heights = malloc((size_t)w * (size_t)h * sizeof(double));
    if (!sc->heights) return mbsi_fail(err, MBS_ERR_NOMEM, "out of memory");
    for (long r = 0; r < h; r++)
        for (long c = 0; c < w; c++) {
            long v;
            if (!binary) v = pgm_number(in);
            else if (maxval < 256) v = fgetc(in);
            else {
                int hi = fgetc(in), lo = fgetc(in);
                v = hi == EOF || lo == EOF ? -1 : 256 * hi + lo;
            }
            if (v < 0 || v > maxval)
                return mbsi_fail(err, MBS_ERR_ARG, "%s: pixel %ld of row %ld is %s (0 to maxval %ld)", path, c + 1, r + 1,
                                 v < 0 ? "missing" : "above maxval", maxval);
            sc->heights[c + (size_t)w * (size_t)(h - 1 - r)] = level + scale * (double)v / (double)maxval;
        }
    f->nx = (int)w;
    f->ny = (int)h;
    return MBS_OK;
}

/* A text grid of heights (rows along x, the first at ymin), or a PGM image, into sc->heights, its
 * size into f. */
static int file_heights(mbs_scenario *sc, const mbs_scenario_entry *e, mbs_heightfield *f, mbs_error *err)
{
    char path[MBS_PATH_LEN];
    if (resolve_path(sc, e, path, sizeof path, err) != MBS_OK) return err ? err->code : MBS_ERR_ARG;
    FILE *in = fopen(path, "rb");
    if (!in) return mbsi_ini_fail_at(sc, e, err, MBS_ERR_IO, "cannot open the heightfield '%s': %s", path, strerror(errno));
    char magic[3] = {0};
    if (fread(magic, 1, 2, in) == 2 && magic[0] == 'P' && (magic[1] == '2' || magic[1] == '5')) {
        int rc = pgm_heights(sc, in, path, magic[1] == '5', f, err);
        fclose(in);
        return rc;
    }
    rewind(in);
    char line[65536];
    size_t cap = 0, n = 0;
    int rows = 0, cols = -1, lineno = 0, rc = MBS_OK;
    while (fgets(line, sizeof line, in)) {
        lineno++;
        char *hash = strchr(line, '#');
        if (hash) *hash = '\0';
        int count = 0;
        for (char *p = line, *end;; p = end) {
            double x = strtod(p, &end);
            if (end == p) {
                while (*end == ' ' || *end == '\t' || *end == '\r' || *end == '\n' || *end == ',') end++;
                if (*end == '\0') break;
                rc = mbsi_fail(err, MBS_ERR_ARG, "%s:%d: not a number: '%.20s' (heights in m, separated by spaces)", path, lineno, end);
                goto done;
            }
            if (n == cap) {
                cap = cap ? 2 * cap : 4096;
                double *h = realloc(sc->heights, cap * sizeof(double));
                if (!h) { rc = mbsi_fail(err, MBS_ERR_NOMEM, "out of memory"); goto done; }
                sc->heights = h;
            }
            sc->heights[n++] = x;
            count++;
        }
        if (count == 0) continue;
        if (cols >= 0 && count != cols) {
            rc = mbsi_fail(err, MBS_ERR_ARG, "%s:%d: %d heights, the rows before have %d (every row the same count)", path,
                           lineno, count, cols);
            goto done;
        }
        cols = count;
        rows++;
    }
    if (rows < 2 || cols < 2) rc = mbsi_fail(err, MBS_ERR_ARG, "%s: %d rows of %d heights (at least 2 x 2)", path, rows, cols < 0 ? 0 : cols);
    f->nx = cols;
    f->ny = rows;
done:
    fclose(in);
    return rc;
}

/* [environment] heightfield: its grid over heightfield_size, random or from a file. */
static int read_heightfield(mbs_scenario *sc, mbs_error *err)
{
    const mbs_scenario_entry *e = mbsi_ini_find(sc, "environment", "heightfield");
    if (!e) return MBS_OK;
    double box[4];
    nums(sc, "environment", "heightfield_size", box, 4);
    if (!(box[2] > box[0] && box[3] > box[1]))
        return mbsi_ini_fail_at(sc, mbsi_ini_find(sc, "environment", "heightfield_size"), err, MBS_ERR_ARG,
                                "out of range: xmax %g must be > xmin %g and ymax %g > ymin %g", box[2], box[0], box[3], box[1]);
    mbs_heightfield *f = &sc->env.heightfields[0];
    memset(f, 0, sizeof *f);
    f->x0 = box[0];
    f->y0 = box[1];
    f->material = sc->material;
    if (strcmp(e->value, "random") == 0) {
        double res = num(sc, "environment", "heightfield_resolution");
        f->nx = (int)ceil((box[2] - box[0]) / res - 1e-9) + 1;
        f->ny = (int)ceil((box[3] - box[1]) / res - 1e-9) + 1;
        if ((double)f->nx * f->ny > 1e7)
            return mbsi_ini_fail_at(sc, mbsi_ini_find(sc, "environment", "heightfield_resolution"), err, MBS_ERR_ARG,
                                    "out of range: %d x %d points (at most 1e7: a coarser resolution or a smaller size)", f->nx, f->ny);
        sc->heights = malloc((size_t)f->nx * (size_t)f->ny * sizeof(double));
        if (!sc->heights) return mbsi_fail(err, MBS_ERR_NOMEM, "out of memory");
        f->dx = (box[2] - box[0]) / (f->nx - 1);
        f->dy = (box[3] - box[1]) / (f->ny - 1);
        random_heights(sc, f);
    } else {
        int rc = file_heights(sc, e, f, err);
        if (rc != MBS_OK) return rc;
    }
    f->dx = (box[2] - box[0]) / (f->nx - 1);
    f->dy = (box[3] - box[1]) / (f->ny - 1);
    f->h = sc->heights;
    sc->env.nheightfields = 1;
    return MBS_OK;
}

/* [environment] stairs = x0 tread rise count [width]: one box per level above the ground (the flight's
 * lower end), each reaching 5 cm into it; the landing at the top runs 10 m on. */
static int add_stairs(mbs_scenario *sc, const mbs_scenario_entry *e, const double *x, int n, mbs_error *err)
{
    mbs_environment *env = &sc->env;
    double x0 = x[0], tread = x[1], rise = x[2], width = n > 4 ? x[4] : 2, g = num(sc, "environment", "ground_height");
    int count = (int)x[3];
    if (!(tread > 0) || !(rise != 0) || !((double)count == x[3] && count >= 1) || !(width > 0))
        return mbsi_ini_fail_at(sc, e, err, MBS_ERR_ARG, "out of range: the tread (2nd number) and the width (5th) must be "
                                "> 0, the rise (3rd) non-zero, the count (4th) a whole number >= 1");
    if (env->nboxes + count > MBS_MAX_BOXES)
        return mbsi_ini_fail_at(sc, e, err, MBS_ERR_ARG, "out of range: %d steps and the %d boxes before them are more "
                                "than %d boxes", count, env->nboxes, MBS_MAX_BOXES);
    const double landing = 10, below = 0.05;
    for (int k = 1; k <= count; k++) {
        /* going up, step k spans [x0 + (k − 1) tread, x0 + k tread) at k·rise, the last one the landing;
         * coming down, the landing ends at x0 and step k ends one tread after the one above it */
        double lo, hi, top;
        if (rise > 0) {
            lo = x0 + (k - 1) * tread;
            hi = k == count ? lo + landing : lo + tread;
            top = g + k * rise;
        } else {
            hi = x0 + (count - k) * tread;
            lo = k == count ? x0 - landing : hi - tread;
            top = g + k * -rise;
        }
        mbs_box *b = &env->boxes[env->nboxes++];
        double c[3] = {(lo + hi) / 2, 0, (top + g - below) / 2}, h[3] = {(hi - lo) / 2, width / 2, (top - g + below) / 2};
        static const double I[9] = {1, 0, 0, 0, 1, 0, 0, 0, 1};
        memcpy(b->center, c, sizeof c);
        memcpy(b->half, h, sizeof h);
        memcpy(b->R, I, sizeof I);
        b->material = sc->material;
    }
    return MBS_OK;
}

static int read_environment(mbs_scenario *sc, mbs_error *err)
{
    mbs_environment *env = &sc->env;
    if (num(sc, "environment", "ground") != 0) {
        mbs_plane *g = &env->planes[env->nplanes++];
        g->normal[0] = g->normal[1] = 0;
        g->normal[2] = 1;
        g->offset = num(sc, "environment", "ground_height");
        g->material = sc->material;
    }
    for (int i = 0; i < sc->nentries; i++) {
        const mbs_scenario_entry *e = &sc->entries[i];
        if (e->dead || strcmp(e->section, "environment") != 0) continue;
        double x[8] = {0};
        char bad[128];
        int n = mbsi_ini_numbers(e->value, x, 8, bad, sizeof bad);
        if (strcmp(e->key, "plane") == 0) {
            double nn = sqrt(x[0] * x[0] + x[1] * x[1] + x[2] * x[2]);
            if (!(nn > 1e-12)) return mbsi_ini_fail_at(sc, e, err, MBS_ERR_ARG, "out of range: the normal (first 3 numbers) is zero");
            if (env->nplanes >= MBS_MAX_PLANES) return mbsi_ini_fail_at(sc, e, err, MBS_ERR_ARG, "out of range: more than %d planes", MBS_MAX_PLANES);
            mbs_plane *p = &env->planes[env->nplanes++];
            for (int k = 0; k < 3; k++) p->normal[k] = x[k] / nn;
            p->offset = x[3];
            p->material = sc->material;
        } else if (strcmp(e->key, "box") == 0) {
            if (!(x[3] > 0 && x[4] > 0 && x[5] > 0))
                return mbsi_ini_fail_at(sc, e, err, MBS_ERR_ARG, "out of range: half sizes (numbers 4 to 6) must be > 0");
            if (env->nboxes >= MBS_MAX_BOXES) return mbsi_ini_fail_at(sc, e, err, MBS_ERR_ARG, "out of range: more than %d boxes", MBS_MAX_BOXES);
            mbs_box *b = &env->boxes[env->nboxes++];
            memcpy(b->center, x, 3 * sizeof(double));
            memcpy(b->half, x + 3, 3 * sizeof(double));
            double yaw = n > 6 ? x[6] : 0, c = cos(yaw), s = sin(yaw);
            double R[9] = {c, s, 0, -s, c, 0, 0, 0, 1};   /* about z, column-major */
            memcpy(b->R, R, sizeof R);
            b->material = sc->material;
        } else if (strcmp(e->key, "stairs") == 0) {
            int rc = add_stairs(sc, e, x, n, err);
            if (rc != MBS_OK) return rc;
        }
    }
    return read_heightfield(sc, err);
}

int mbs_scenario_keys_markdown(const char *section, char *buf, size_t n)
{
    size_t len = 0;
    char line[1024], what[900];
    if (buf && n) buf[0] = '\0';
    for (int i = -1; i < NKEYS; i++) {
        if (i < 0) snprintf(line, sizeof line, "| key | value | default |\n|---|---|---|\n");
        else {
            const keyspec *k = &KEYS[i];
            if (strcmp(k->section, section) != 0) continue;
            mbsi_ini_describe(k, what, sizeof what);
            const char *def = !k->def ? "required" : k->def[0] ? k->def : strstr(k->doc, "(default:") ? "see value" : "none";
            size_t kl = strlen(k->key);
            int any = kl >= 2 && k->key[kl - 1] == '*';   /* "q.*": q.JOINT, "v.*": v.JOINT */
            snprintf(line, sizeof line, "| `%.*s%s` | %s | %s |\n", (int)(any ? kl - 1 : kl), k->key, any ? "JOINT" : "", what, def);
        }
        if (buf && len < n) snprintf(buf + len, n - len, "%s", line);
        len += strlen(line);
    }
    return (int)len;
}

const mbs_model *mbs_scenario_model(const mbs_scenario *sc) { return sc->model; }
const double *mbs_scenario_q0(const mbs_scenario *sc) { return sc->q0; }
const double *mbs_scenario_v0(const mbs_scenario *sc) { return sc->v0; }
const char *mbs_scenario_controller(const mbs_scenario *sc) { return sc->controller; }
double mbs_scenario_controller_dt(const mbs_scenario *sc) { return sc->controller_dt; }
const char *mbs_scenario_stepper(const mbs_scenario *sc) { return sc->stepper; }
double mbs_scenario_dt(const mbs_scenario *sc) { return sc->dt; }
double mbs_scenario_duration(const mbs_scenario *sc) { return sc->duration; }
const char *mbs_scenario_csv(const mbs_scenario *sc) { return sc->csv; }
const char *mbs_scenario_html(const mbs_scenario *sc) { return sc->html; }
const mbs_material *mbs_scenario_material(const mbs_scenario *sc) { return &sc->material; }

int mbs_scenario_options(const mbs_scenario *sc, const char *scheme, mbs_option *opts, int max)
{
    int n = 0;
    for (int i = 0; i < sc->noptions; i++)
        if (strcmp(sc->options[i].scheme, scheme) == 0) {
            if (n < max) opts[n] = sc->options[i].typed;
            n++;
        }
    return n;
}

/* The controller's options against each other (the jump's phases within its period, say). */
static int check_controller(const mbs_scenario *sc, mbs_error *err)
{
    mbs_option opts[MBS_SIM_MAX_OPTIONS];
    int n = mbs_scenario_options(sc, "controller", opts, MBS_SIM_MAX_OPTIONS);
    const char *key = NULL;
    mbs_error e;
    mbs_error_clear(&e);
    if (mbsi_controller_check(sc->controller, opts, n, &key, &e) == MBS_OK) return MBS_OK;
    char w[MBS_PATH_LEN + 256];
    if (key && mbs_scenario_line(sc, "controller", key) >= 0) mbs_scenario_where(sc, "controller", key, w, sizeof w);
    else mbs_scenario_where(sc, "controller", "type", w, sizeof w);
    return mbsi_fail(err, e.code, "%s: %s", w, e.msg);
}


mbs_scenario *mbs_scenario_load(const char *path, const char *const *overrides, int noverrides, mbs_error *err)
{
    if (err) mbs_error_clear(err);
    if (!path) { mbsi_fail(err, MBS_ERR_ARG, "mbs_scenario_load: no file"); return NULL; }
    if (noverrides < 0 || (noverrides > 0 && !overrides)) {
        mbsi_fail(err, MBS_ERR_ARG, "mbs_scenario_load: %d overrides given at %s", noverrides, overrides ? "an array" : "NULL");
        return NULL;
    }
    size_t len = 0;
    char *text = mbsi_ini_read_file(path, &len, err);
    if (!text) return NULL;
    mbs_scenario *sc = mbsi_scenario_load_text(path, text, len, overrides, noverrides, err);
    free(text);
    return sc;
}

mbs_scenario *mbsi_scenario_load_text(const char *path, const char *text, size_t len, const char *const *overrides,
                                     int noverrides, mbs_error *err)
{
    if (err) mbs_error_clear(err);
    if (!path || (!text && len)) { mbsi_fail(err, MBS_ERR_ARG, "mbsi_scenario_load_text: no name or no text"); return NULL; }
    if (!text) text = "";
    mbs_scenario *sc = calloc(1, sizeof *sc);
    if (!sc) { mbsi_fail(err, MBS_ERR_NOMEM, "out of memory"); return NULL; }
    snprintf(sc->path, sizeof sc->path, "%s", path);
    if (len && memchr(text, '\0', len)) {
        mbsi_fail(err, MBS_ERR_PARSE, "%s: not a text file (NUL byte)", path);
        goto fail;
    }
    char (*names)[MBS_NAME_LEN] = NULL;
    int *lines = NULL, nheaders = 0;
    mbs_error syntax;
    mbs_error_clear(&syntax);
    if (mbsi_ini_read(sc, text, len, &names, &lines, &nheaders, &syntax, err)) goto fail;
    /* an unknown section, at its header line: reported before the keys in it */
    for (int i = 0; i < nheaders; i++) {
        if (known_section(names[i])) continue;
        char w[MBS_PATH_LEN + 16];
        snprintf(w, sizeof w, "%s:%d", path, lines[i]);
        unknown_section(w, names[i], err);
        break;
    }
    free(names);
    free(lines);
    if (err && err->code) goto fail;
    if (syntax.code) { mbsi_fail(err, syntax.code, "%s", syntax.msg); goto fail; }

    for (int i = 0; overrides && i < noverrides; i++)
        if (mbsi_ini_override(sc, overrides[i], err)) goto fail;
    if (check_entries(sc, err)) goto fail;

    /* every value is valid now: read them with their defaults */
    sc->floating = (int)num(sc, "model", "floating");
    read_controller(sc);
    const mbs_scenario_entry *name = mbsi_ini_find(sc, "stepper", "name");
    snprintf(sc->stepper, sizeof sc->stepper, "%s", name ? name->value : MBS_STEPPER_DEFAULT);
    if (!mbs_stepper_find(sc->stepper)) {
        char known[256];
        mbsi_scheme_names(mbs_stepper_at, mbs_stepper_count(), ", ", known, sizeof known);
        if (name) mbsi_ini_fail_at(sc, name, err, MBS_ERR_ARG, "unknown stepper '%s' (known: %s)", sc->stepper, known);
        else mbsi_fail(err, MBS_ERR_ARG, "%s: [stepper] name: unknown stepper '%s' (the default; known: %s)", path, sc->stepper, known);
        goto fail;
    }
    sc->dt = num(sc, "stepper", "dt");
    sc->dissipation = num(sc, "stepper", "dissipation");
    sc->duration = num(sc, "run", "duration");
    sc->max_velocity = num(sc, "run", "max_velocity");
    /* no box: infinite bounds, which the base never leaves */
    double box[6] = {-INFINITY, -INFINITY, -INFINITY, INFINITY, INFINITY, INFINITY};
    nums(sc, "run", "box", box, 6);
    memcpy(sc->box_min, box, sizeof sc->box_min);
    memcpy(sc->box_max, box + 3, sizeof sc->box_max);
    const mbs_scenario_entry *csv = mbsi_ini_find(sc, "output", "csv");
    if (csv) snprintf(sc->csv, sizeof sc->csv, "%s", csv->value);
    sc->csv_every = (int)num(sc, "output", "every");
    const mbs_scenario_entry *html = mbsi_ini_find(sc, "output", "html");
    if (html) snprintf(sc->html, sizeof sc->html, "%s", html->value);
    if (check_together(sc, err)) goto fail;

    /* scheme options: every section named after a stepper, and the controller's keys, for
     * mbs_sim_new to hand over */
    for (int i = 0; i < sc->nentries; i++) {
        const mbs_scenario_entry *e = &sc->entries[i];
        if (e->dead || spec_of(e->section, e->key)) continue;
        int ctrl = strcmp(e->section, "controller") == 0;
        if (!mbs_stepper_find(e->section) && !ctrl) continue;
        /* another controller's key was warned about and is left out */
        if (ctrl && !mbs_options_find(mbs_controller_find(sc->controller)->options, e->key, NULL)) continue;
        if (sc->noptions >= MBS_SIM_MAX_OPTIONS) { mbsi_ini_fail_at(sc, e, err, MBS_ERR_ARG, "out of range: too many scheme options"); goto fail; }
        mbs_scenario_option *o = &sc->options[sc->noptions++];
        if (strlen(e->key) >= sizeof o->key || strlen(e->value) >= sizeof o->value) {
            mbsi_ini_fail_at(sc, e, err, MBS_ERR_ARG, "key or value too long");
            goto fail;
        }
        snprintf(o->scheme, sizeof o->scheme, "%s", e->section);
        snprintf(o->key, sizeof o->key, "%s", e->key);
        snprintf(o->value, sizeof o->value, "%s", e->value);
        o->line = e->line;
        /* the value as check_entries parsed it, its key and word in o's own storage */
        o->typed = e->typed;
        o->typed.key = o->key;
        if (o->typed.word) o->typed.word = o->value;
    }

    if (check_controller(sc, err) || load_model(sc, err) || initial_posture(sc, err) || read_contacts(sc, err) ||
        read_environment(sc, err) || read_pushes(sc, err))
        goto fail;
    return sc;
fail:
    mbs_scenario_free(sc);
    return NULL;
}

void mbs_scenario_free(mbs_scenario *sc)
{
    if (!sc) return;
    for (int i = 0; i < sc->nentries; i++) {
        free(sc->entries[i].section);
        free(sc->entries[i].key);
        free(sc->entries[i].value);
    }
    free(sc->entries);
    free(sc->q0);
    free(sc->v0);
    free(sc->heights);
    mbs_model_free(sc->model);
    free(sc);
}
