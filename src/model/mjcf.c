/* mjcf.c — loads a MuJoCo MJCF model into an mbs_model through the model builder.
 *
 * Phases: read the main file and every <include> (each a document of its own, so that messages
 * name the file a line is in), read <compiler> and <option> (global: they apply to the whole
 * model whatever their place), index the <default> classes, walk <worldbody> depth-first
 * calling the builder, then actuators (effort limits), limits, finalize, and the keyframes.
 *
 * MJCF semantics followed (MuJoCo 2.2): a body's joints act in order, each about its own anchor
 * in the body frame, so the body frame is parent · body pose · Tr(c1) R1 Tr(−c1) · Tr(c2) R2
 * Tr(−c2) ...; here joint k becomes an mbs body whose frame sits at c_k (axes of the MJCF body),
 * the joints before the last being massless intermediate bodies, and the MJCF body frame (a frame
 * named after the body) sits at −c_n in the last one. A free joint's body has the identity as its
 * tree transform, so that q holds the world pose as MuJoCo's qpos does. Bodies without joints are
 * welded into their parent's mbs body. */
#include <limits.h>
#include <math.h>
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include <libxml/hash.h>
#include <libxml/parser.h>
#include <libxml/tree.h>

#include "mbs/model.h"
#include "../spatial/spatial.h"
#include "../base/base.h"
#include "xml_load.h"

#define MJCF_MAX_INCLUDE 8      /* nesting depth of <include> (a file including itself stops here) */
#define MJCF_MAX_DEPTH 200      /* nesting depth of <body> (the recursion's bound) */

/* MuJoCo's joint types, in its numbering (mjtJoint) */
enum { MJ_FREE = 0, MJ_BALL = 1, MJ_SLIDE = 2, MJ_HINGE = 3 };

/* One MJCF joint (= one mbs joint, in the same order): what limits, actuators and keyframes need. */
typedef struct mj_joint {
    const xmlNode *node;
    char *name;
    int type, mbs;              /* MJ_*, mbs joint index */
    double ref;                 /* hinge, slide: qpos at the model's configuration (q = qpos − ref) */
    double qpos0[7];            /* MuJoCo's qpos0 of this joint (free: the body's pose in the file) */
    double lower, upper;        /* of qpos (hinge, slide), ±INFINITY when not limited */
    double damping, armature, frictionloss;
    double effort;              /* sum of the actuators' torque capacities, INFINITY when none */
    double frc;                 /* the joint's actuatorfrcrange bound on that sum, INFINITY when none */
} mj_joint;

/* A default class: its <default> element and its parent class (-1 for main). */
typedef struct mj_class {
    const xmlNode *node;
    int parent;
} mj_class;

/* Things that are not modelled, reported once per kind with the first place and a count. */
enum { NOTE_FRICTIONLOSS, NOTE_STIFFNESS, NOTE_BALL_RANGE, NOTE_ACTUATOR, NOTE_TRANSMISSION, NOTE_MESH_INERTIA,
       NOTE_ELLIPSOID_COLLISION, NNOTES };
static const char *const note_text[NNOTES] = {
    "frictionloss is not modelled by the dynamics (kept as the joint's friction)",
    "stiffness (a spring to springref) is not modelled",
    "a ball joint's range (a cone) is not modelled",
    "only <motor> actuators map to torques; this one gives an effort limit from its forcerange at most (use a "
    "controller for its gains)",
    "only joint transmissions of hinge and slide joints are read; this actuator is ignored",
    "a mesh geom's inertia needs the mesh file; the geom is left out of the body's inertia (give the body an "
    "<inertial>)",
    "an ellipsoid geom collides in MuJoCo but has no collision shape here; it is left out of the model's collision "
    "shapes",
};
typedef struct mj_note {
    int count;
    const xmlNode *node;
    const char *kind;           /* a string literal */
    char name[128];             /* a copy: the owner's name is gone by the time the notes are written */
    int has_name;
} mj_note;

/* A mass, centre of mass and rotational inertia about it, in one frame. */
typedef struct mj_inertia {
    double m, c[3], I[9];
    int parts;                  /* inertials and geoms added */
} mj_inertia;

typedef struct mjcf_ctx {
    mbsi_xml_src x;
    const mbs_mjcf_options *opt;
    const char *dir;            /* folder of the main file: where <include> files are looked for */
    xmlDoc *docs[64];           /* the main document, then one per include */
    int ndocs;
    const xmlNode *root;
    /* <compiler> */
    int degree, autolimits, inertiafromgeom, balanceinertia;   /* inertiafromgeom: 0 false, 1 true, 2 auto */
    char eulerseq[4];
    double boundmass, boundinertia;
    int igroup[2];
    double gravity[3];
    /* <default> classes; index 0 is main */
    mj_class *cls;
    int ncls, cap_cls;
    xmlHashTable *cls_ids;      /* class name -> index + 1 */
    /* <asset>: mesh name -> its <mesh>, material name -> its <material> */
    xmlHashTable *meshes, *materials;
    mj_joint *joints;
    int njoints, cap_joints;
    xmlHashTable *joint_ids;    /* joint name -> index + 1 */
    int nbodies_mj;             /* MJCF bodies seen (for the names of unnamed ones) */
    mj_note notes[NNOTES];
    mbs_model *m;
} mjcf_ctx;

/* ---- reading elements, across <include> ---- */

/* The element children of a node, with every <include> replaced by the children of the
 * included file's <mujoco> (its node's _private, set when the includes are read). */
typedef struct kids {
    const xmlNode *at[MJCF_MAX_INCLUDE + 2];
    int top;
} kids;

static void kids_begin(kids *k, const xmlNode *parent)
{
    k->top = 0;
    k->at[0] = parent ? parent->children : NULL;
}

static const xmlNode *kids_next(kids *k)
{
    for (;;) {
        const xmlNode *n = k->at[k->top];
        if (!n) {
            if (k->top == 0) return NULL;
            k->top--;
            continue;
        }
        k->at[k->top] = n->next;
        if (n->type != XML_ELEMENT_NODE) continue;
        if (mbsi_xml_is(n, "include")) {
            const xmlNode *r = n->_private;
            if (r && k->top + 1 < (int)(sizeof k->at / sizeof k->at[0])) k->at[++k->top] = r->children;
            continue;
        }
        return n;
    }
}

static void set_owner(mjcf_ctx *c, const char *kind, const char *name)
{
    c->x.kind = kind;
    c->x.owner = name;
}

static int fail_nomem(mjcf_ctx *c, const xmlNode *n)
{
    return mbsi_xml_fail(&c->x, n, MBS_ERR_NOMEM, "out of memory");
}

/* Reads every <include> below n (recursively) as a document of its own. */
static int read_includes(mjcf_ctx *c, const xmlNode *n, int depth)
{
    for (xmlNode *k = n->children; k; k = k->next) {
        if (k->type != XML_ELEMENT_NODE) continue;
        if (!mbsi_xml_is(k, "include")) {
            if (read_includes(c, k, depth) < 0) return -1;
            continue;
        }
        set_owner(c, "include", NULL);
        if (depth >= MJCF_MAX_INCLUDE)
            return mbsi_xml_fail(&c->x, k, MBS_ERR_MODEL, "includes nest deeper than %d (a file including itself?)",
                                 MJCF_MAX_INCLUDE);
        if (c->ndocs == (int)(sizeof c->docs / sizeof c->docs[0]))
            return mbsi_xml_fail(&c->x, k, MBS_ERR_MODEL, "more than %d included files", c->ndocs - 1);
        xmlChar *file = xmlGetProp(k, BAD_CAST "file");
        if (!file) return mbsi_xml_fail(&c->x, k, MBS_ERR_MODEL, "<include> is missing attribute 'file'");
        /* relative to the main file's folder, as MuJoCo resolves it */
        size_t need = strlen(c->dir) + strlen((const char *)file) + 2;
        char *path = malloc(need);
        if (!path) { xmlFree(file); return fail_nomem(c, k); }
        if (file[0] == '/' || !c->dir[0]) snprintf(path, need, "%s", (const char *)file);
        else snprintf(path, need, "%s/%s", c->dir, (const char *)file);
        xmlFree(file);
        mbs_error ie;
        mbs_error_clear(&ie);
        size_t len = 0;
        char *buf = mbsi_read_whole_file(path, &len, "an MJCF file", &ie);
        xmlDoc *doc = buf && len <= INT_MAX ? mbsi_xml_parse(buf, (int)len, path, &ie) : NULL;
        free(buf);
        free(path);
        if (!doc) {
            int rc = mbsi_xml_fail(&c->x, k, ie.code ? ie.code : MBS_ERR_IO, "cannot include: %s",
                                   ie.code ? ie.msg : "file too large");
            mbs_error_free(&ie);
            return rc;
        }
        mbs_error_free(&ie);
        c->docs[c->ndocs++] = doc;
        xmlNode *r = xmlDocGetRootElement(doc);
        if (!r || !mbsi_xml_is(r, "mujoco"))
            return mbsi_xml_fail(&c->x, r ? r : k, MBS_ERR_MODEL, "an included file's root element must be <mujoco>");
        k->_private = r;
        if (read_includes(c, r, depth + 1) < 0) return -1;
    }
    return 0;
}

/* ---- attributes and their defaults ---- */

static int is_actuator(const xmlNode *n)
{
    static const char *const kinds[] = {"motor", "position", "velocity", "general", "damper", "cylinder",
                                        "muscle", "adhesion", "intvelocity"};
    for (size_t i = 0; i < sizeof kinds / sizeof kinds[0]; i++)
        if (mbsi_xml_is(n, kinds[i])) return 1;
    return 0;
}

/* The node that gives attribute `key` of element e: e itself, else the <tag> of its class or of
 * the nearest ancestor class that sets it (tag "actuator": any actuator kind, as MuJoCo keeps one
 * actuator default per class); NULL when none does. */
static const xmlNode *holder(const mjcf_ctx *c, const xmlNode *e, const char *tag, const char *key, int cls)
{
    if (xmlHasProp(e, BAD_CAST key)) return e;
    if (!tag) return NULL;   /* an element without defaults (body, inertial) */
    int act = strcmp(tag, "actuator") == 0;
    for (; cls >= 0; cls = c->cls[cls].parent) {
        const xmlNode *found = NULL;
        kids k;
        kids_begin(&k, c->cls[cls].node);
        for (const xmlNode *d; (d = kids_next(&k));)
            if ((act ? is_actuator(d) : mbsi_xml_is(d, tag)) && xmlHasProp(d, BAD_CAST key)) found = d;
        if (found) return found;
    }
    return NULL;
}

/* Numbers of attribute key through the defaults: 1 read, 0 absent, -1 error (mbsi_xml_numbers). */
static int num(mjcf_ctx *c, const xmlNode *e, const char *tag, const char *key, int count, double *out, int cls)
{
    const xmlNode *h = holder(c, e, tag, key, cls);
    return h ? mbsi_xml_numbers(&c->x, h, key, count, out, 1) : 0;
}

/* One of `words` (space-separated) for attribute key through the defaults: its index, `dflt` when
 * absent, -1 with the error filled when it is none of them. */
static int keyword(mjcf_ctx *c, const xmlNode *e, const char *tag, const char *key, const char *words, int dflt, int cls)
{
    const xmlNode *h = holder(c, e, tag, key, cls);
    if (!h) return dflt;
    xmlChar *v = xmlGetProp(h, BAD_CAST key);
    int i = v ? mbsi_word_index(words, (const char *)v) : -1;
    if (i < 0)
        mbsi_xml_fail(&c->x, h, MBS_ERR_MODEL, "<%s> attribute %s=\"%s\": expected one of: %s", (const char *)h->name,
                      key, v ? (const char *)v : "", words);
    xmlFree(v);
    return i;
}

/* The class an element uses: its class attribute, else the inherited childclass; -1 on error. */
static int class_of(mjcf_ctx *c, const xmlNode *e, int inherited)
{
    xmlChar *name = xmlGetProp(e, BAD_CAST "class");
    if (!name) return inherited;
    int i = (int)(intptr_t)xmlHashLookup(c->cls_ids, name) - 1;
    if (i < 0) mbsi_xml_fail(&c->x, e, MBS_ERR_MODEL, "<%s>: unknown class '%s'", (const char *)e->name, (const char *)name);
    xmlFree(name);
    return i;
}

/* ---- <compiler>, <option> ---- */

static int read_compiler(mjcf_ctx *c, const xmlNode *n)
{
    set_owner(c, "compiler", NULL);
    int k;
    if ((k = keyword(c, n, "", "angle", "radian degree", c->degree, -1)) < 0) return -1;
    c->degree = k;
    if ((k = keyword(c, n, "", "autolimits", "false true", c->autolimits, -1)) < 0) return -1;
    c->autolimits = k;
    if ((k = keyword(c, n, "", "inertiafromgeom", "false true auto", c->inertiafromgeom, -1)) < 0) return -1;
    c->inertiafromgeom = k;
    if ((k = keyword(c, n, "", "balanceinertia", "false true", c->balanceinertia, -1)) < 0) return -1;
    c->balanceinertia = k;
    if ((k = keyword(c, n, "", "coordinate", "local global", 0, -1)) < 0) return -1;
    if (k == 1) return mbsi_xml_fail(&c->x, n, MBS_ERR_MODEL, "coordinate=\"global\" is not supported (use local)");
    xmlChar *seq = xmlGetProp(n, BAD_CAST "eulerseq");
    if (seq) {
        int ok = strlen((const char *)seq) == 3;
        for (int i = 0; ok && i < 3; i++) ok = strchr("xyzXYZ", seq[i]) != NULL;
        if (ok) memcpy(c->eulerseq, seq, 4);
        xmlFree(seq);
        if (!ok) return mbsi_xml_fail(&c->x, n, MBS_ERR_MODEL, "eulerseq must be three of x, y, z, X, Y, Z");
    }
    double g[2];
    if (mbsi_xml_numbers(&c->x, n, "boundmass", 1, &c->boundmass, 0) < 0 ||
        mbsi_xml_numbers(&c->x, n, "boundinertia", 1, &c->boundinertia, 0) < 0)
        return -1;
    int rc = mbsi_xml_numbers(&c->x, n, "inertiagrouprange", 2, g, 0);
    if (rc < 0) return -1;
    if (rc) {
        /* geom groups are small whole numbers (MuJoCo has 6); a cast of anything else is undefined */
        for (int j = 0; j < 2; j++)
            if (!(g[j] >= -1000 && g[j] <= 1000) || g[j] != floor(g[j]))
                return mbsi_xml_fail(&c->x, n, MBS_ERR_MODEL, "inertiagrouprange must be two whole numbers (geom groups), "
                                     "got %g", g[j]);
        c->igroup[0] = (int)g[0];
        c->igroup[1] = (int)g[1];
    }
    if (xmlHasProp(n, BAD_CAST "settotalmass"))
        mbsi_warn(c->x.err, "%s:%ld: compiler: settotalmass is not supported (ignored)", mbsi_xml_file(&c->x, n),
                  xmlGetLineNo(n));
    return 0;
}

static int read_option(mjcf_ctx *c, const xmlNode *n)
{
    set_owner(c, "option", NULL);
    if (mbsi_xml_numbers(&c->x, n, "gravity", 3, c->gravity, 0) < 0) return -1;
    kids k;
    kids_begin(&k, n);
    for (const xmlNode *f; (f = kids_next(&k));) {
        if (!mbsi_xml_is(f, "flag")) continue;
        int g = keyword(c, f, "", "gravity", "enable disable", 0, -1);
        if (g < 0) return -1;
        if (g == 1) memset(c->gravity, 0, sizeof c->gravity);
    }
    return 0;
}

/* ---- <default> classes ---- */

static int add_class(mjcf_ctx *c, const xmlNode *n, int parent)
{
    set_owner(c, "default", NULL);
    xmlChar *name = xmlGetProp(n, BAD_CAST "class");
    if (parent >= 0 && !name) return mbsi_xml_fail(&c->x, n, MBS_ERR_MODEL, "a nested <default> needs a class name");
    const xmlChar *key = name ? name : BAD_CAST "main";
    if (parent < 0 && !xmlStrEqual(key, BAD_CAST "main")) {
        xmlFree(name);
        return mbsi_xml_fail(&c->x, n, MBS_ERR_MODEL, "the top-level <default> is class 'main'");
    }
    if (xmlHashLookup(c->cls_ids, key)) {
        int rc = mbsi_xml_fail(&c->x, n, MBS_ERR_MODEL, "class '%s' is defined twice", (const char *)key);
        xmlFree(name);
        return rc;
    }
    if (c->ncls == c->cap_cls) {
        int cap = c->cap_cls ? 2 * c->cap_cls : 16;
        mj_class *bigger = realloc(c->cls, (size_t)cap * sizeof *bigger);
        if (!bigger) { xmlFree(name); return fail_nomem(c, n); }
        c->cls = bigger;
        c->cap_cls = cap;
    }
    int me = c->ncls++;
    c->cls[me].node = n;
    c->cls[me].parent = parent;
    int added = xmlHashAddEntry(c->cls_ids, key, (void *)(intptr_t)(me + 1));
    xmlFree(name);
    if (added != 0) return fail_nomem(c, n);
    kids k;
    kids_begin(&k, n);
    for (const xmlNode *d; (d = kids_next(&k));)
        if (mbsi_xml_is(d, "default") && add_class(c, d, me) < 0) return -1;
    return 0;
}

/* ---- orientations ---- */

/* R of a quaternion (w, x, y, z), normalised; -1 when it is zero. */
static int quat_wxyz(const double q[4], double R[9])
{
    double n = sqrt(q[0] * q[0] + q[1] * q[1] + q[2] * q[2] + q[3] * q[3]);
    if (!(n > 1e-12)) return -1;
    double xyzw[4] = {q[1] / n, q[2] / n, q[3] / n, q[0] / n};
    m3_from_quat(xyzw, R);
    return 0;
}

static void axis_rotation(const double axis[3], double angle, double R[9])
{
    double u[3], n = sqrt(v3_dot(axis, axis));
    for (int k = 0; k < 3; k++) u[k] = axis[k] / n;
    m3_axis_angle(u, cos(angle), sin(angle), R);
}

/* The rotation taking (0, 0, 1) onto the direction z (MuJoCo's zaxis and fromto); -1 when z is zero. */
static int z_to_vector(const double zin[3], double R[9])
{
    double n = sqrt(v3_dot(zin, zin));
    if (!(n > 1e-12)) return -1;
    double z[3] = {zin[0] / n, zin[1] / n, zin[2] / n}, e[3] = {0, 0, 1}, a[3];
    v3_cross(e, z, a);
    double s = sqrt(v3_dot(a, a));
    if (s < 1e-14) {   /* parallel: the identity, or half a turn about x */
        static const double flip[9] = {1, 0, 0, 0, -1, 0, 0, 0, -1};
        if (z[2] < 0) memcpy(R, flip, sizeof flip);
        else m3_identity(R);
        return 0;
    }
    axis_rotation(a, atan2(s, z[2]), R);
    return 0;
}

/* pos and the one orientation of an element (quat, axisangle, euler, xyaxes, zaxis; or fromto
 * when `fromto` is given), the element's own attributes first, then its class's (tag, cls; cls
 * -1: no defaults, as for bodies). half (may be NULL) receives fromto's half length, -1 when
 * fromto was not used. */
static int read_pose(mjcf_ctx *c, const xmlNode *e, const char *tag, int cls, double R[9], double p[3], double *half)
{
    static const char *const alts[] = {"quat", "axisangle", "euler", "xyaxes", "zaxis"};
    memset(p, 0, 3 * sizeof(double));
    m3_identity(R);
    if (half) *half = -1;
    double ft[6];
    int rc = half ? num(c, e, tag, "fromto", 6, ft, cls) : 0;
    if (rc < 0) return -1;
    if (rc == 1) {
        double d[3] = {ft[3] - ft[0], ft[4] - ft[1], ft[5] - ft[2]};
        for (int k = 0; k < 3; k++) p[k] = 0.5 * (ft[k] + ft[k + 3]);
        if (z_to_vector(d, R) < 0) return mbsi_xml_fail(&c->x, e, MBS_ERR_MODEL, "fromto has zero length");
        *half = 0.5 * sqrt(v3_dot(d, d));
        return 0;
    }
    if (num(c, e, tag, "pos", 3, p, cls) < 0) return -1;
    /* the element's own orientation wins over its class's */
    const xmlNode *src = NULL;
    int which = -1;
    for (int i = 0; i < 5; i++)
        if (xmlHasProp(e, BAD_CAST alts[i])) {
            if (which >= 0)
                return mbsi_xml_fail(&c->x, e, MBS_ERR_MODEL, "<%s> has both %s and %s (one orientation only)",
                                     (const char *)e->name, alts[which], alts[i]);
            which = i;
            src = e;
        }
    for (int i = 0; which < 0 && i < 5 && tag && cls >= 0; i++) {
        const xmlNode *h = holder(c, e, tag, alts[i], cls);
        if (h) { which = i; src = h; }
    }
    if (which < 0) return 0;
    const double unit = c->degree ? MBS_PI / 180 : 1;
    double v[6];
    static const int counts[5] = {4, 4, 3, 6, 3};
    if (mbsi_xml_numbers(&c->x, src, alts[which], counts[which], v, 1) < 0) return -1;
    switch (which) {
    case 0:
        if (quat_wxyz(v, R) < 0) return mbsi_xml_fail(&c->x, src, MBS_ERR_MODEL, "quat is zero");
        break;
    case 1:
        if (!(sqrt(v3_dot(v, v)) > 1e-12)) return mbsi_xml_fail(&c->x, src, MBS_ERR_MODEL, "axisangle's axis is zero");
        axis_rotation(v, v[3] * unit, R);
        break;
    case 2:
        /* lower case: about the rotated (intrinsic) axes, R = R Ri; upper case: fixed axes, R = Ri R */
        for (int i = 0; i < 3; i++) {
            char s = c->eulerseq[i];
            double ax[3] = {0, 0, 0}, Ri[9];
            ax[(s == 'x' || s == 'X') ? 0 : (s == 'y' || s == 'Y') ? 1 : 2] = 1;
            axis_rotation(ax, v[i] * unit, Ri);
            if (s >= 'a') m3_mul(R, Ri, R);
            else m3_mul(Ri, R, R);
        }
        break;
    case 3: {
        double *x = v, *y = v + 3, z[3];
        double nx = sqrt(v3_dot(x, x));
        if (!(nx > 1e-12)) return mbsi_xml_fail(&c->x, src, MBS_ERR_MODEL, "xyaxes: the x axis is zero");
        for (int k = 0; k < 3; k++) x[k] /= nx;
        double d = v3_dot(x, y);
        for (int k = 0; k < 3; k++) y[k] -= d * x[k];
        double ny = sqrt(v3_dot(y, y));
        if (!(ny > 1e-12)) return mbsi_xml_fail(&c->x, src, MBS_ERR_MODEL, "xyaxes: the y axis is parallel to x");
        for (int k = 0; k < 3; k++) y[k] /= ny;
        v3_cross(x, y, z);
        memcpy(R, x, 3 * sizeof(double));
        memcpy(R + 3, y, 3 * sizeof(double));
        memcpy(R + 6, z, 3 * sizeof(double));
        break;
    }
    default:
        if (z_to_vector(v, R) < 0) return mbsi_xml_fail(&c->x, src, MBS_ERR_MODEL, "zaxis is zero");
    }
    return 0;
}

/* ---- inertias ---- */

/* acc += (m, c, I), all in one frame. */
static void inertia_add(mj_inertia *acc, double m, const double com[3], const double I[9])
{
    double M = acc->m + m, c[3];
    /* no mass yet: the newest part's centre (MuJoCo's, for a body with one massless geom) */
    for (int k = 0; k < 3; k++) c[k] = M > 0 ? (acc->m * acc->c[k] + m * com[k]) / M : com[k];
    const double *cs[2] = {acc->c, com}, ms[2] = {acc->m, m};
    double sum[9];
    for (int k = 0; k < 9; k++) sum[k] = acc->I[k] + I[k];
    for (int s = 0; s < 2; s++) {   /* parallel axes: each part's inertia about the new centre */
        double d[3] = {cs[s][0] - c[0], cs[s][1] - c[1], cs[s][2] - c[2]}, dd = v3_dot(d, d);
        for (int j = 0; j < 3; j++)
            for (int i = 0; i < 3; i++) sum[i + 3 * j] += ms[s] * ((i == j ? dd : 0) - d[i] * d[j]);
    }
    acc->m = M;
    acc->parts++;
    memcpy(acc->c, c, sizeof c);
    memcpy(acc->I, sum, sizeof sum);
}

/* <inertial pos orientation mass diaginertia|fullinertia> into acc (MJCF body frame). */
static int read_inertial(mjcf_ctx *c, const xmlNode *n, mj_inertia *acc)
{
    double R[9], p[3], mass, d[6] = {0}, I[9] = {0};
    if (read_pose(c, n, NULL, -1, R, p, NULL) < 0 || mbsi_xml_numbers(&c->x, n, "mass", 1, &mass, 1) < 0) return -1;
    if (mass < 0) return mbsi_xml_fail(&c->x, n, MBS_ERR_MODEL, "negative mass %g", mass);
    int full = xmlHasProp(n, BAD_CAST "fullinertia") != NULL;
    if (full && xmlHasProp(n, BAD_CAST "diaginertia"))
        return mbsi_xml_fail(&c->x, n, MBS_ERR_MODEL, "<inertial> has both diaginertia and fullinertia");
    for (int i = 0; full && i < 5; i++)
        if (xmlHasProp(n, BAD_CAST (const char *[]){"quat", "axisangle", "euler", "xyaxes", "zaxis"}[i]))
            return mbsi_xml_fail(&c->x, n, MBS_ERR_MODEL, "fullinertia gives the axes: no orientation with it");
    if (full) {   /* ixx iyy izz ixy ixz iyz */
        if (mbsi_xml_numbers(&c->x, n, "fullinertia", 6, d, 1) < 0) return -1;
        I[0] = d[0]; I[4] = d[1]; I[8] = d[2];
        I[3] = I[1] = d[3]; I[6] = I[2] = d[4]; I[7] = I[5] = d[5];
    } else {
        if (mbsi_xml_numbers(&c->x, n, "diaginertia", 3, d, 1) < 0) return -1;
        I[0] = d[0]; I[4] = d[1]; I[8] = d[2];
    }
    double ev[3], Ib[9];
    mbsi_sym3_eigenvalues(I, ev);
    if (ev[0] < -1e-12 * fabs(ev[2]))
        return mbsi_xml_fail(&c->x, n, MBS_ERR_MODEL, "inertia is not positive semi-definite (principal moments %g %g %g)",
                             ev[0], ev[1], ev[2]);
    if (!c->balanceinertia && ev[2] - ev[0] - ev[1] > 1e-6 * (ev[0] + ev[1] + ev[2]))
        mbsi_warn(c->x.err, "%s:%ld: body '%s': inertia violates the triangle inequality (principal moments %g %g %g)",
                  mbsi_xml_file(&c->x, n), xmlGetLineNo(n), c->x.owner, ev[0], ev[1], ev[2]);
    mbsi_rotate_inertia(R, I, Ib);
    inertia_add(acc, mass, p, Ib);
    return 0;
}

/* Moments per unit mass of a body whose squared extents along x, y, z are a, b, c, scaled by 1/k
 * (k = 5: an ellipsoid of semi-axes √a, √b, √c; k = 3: a box of half sizes √a, √b, √c). */
static void moments_of_extents(double a, double b, double c, double k, double I[3])
{
    I[0] = (b + c) / k;
    I[1] = (a + c) / k;
    I[2] = (a + b) / k;
}

/* Volume and principal moments per unit mass of a primitive geom (MuJoCo's formulas; size as
 * MJCF gives it: radii and half lengths). Returns 0, or -1 for a shape without them. */
static int geom_unit_inertia(int type, const double s[3], double *volume, double I[3])
{
    const double pi = MBS_PI;
    switch (type) {
    case 2: {   /* sphere */
        *volume = 4.0 / 3 * pi * s[0] * s[0] * s[0];
        I[0] = I[1] = I[2] = 0.4 * s[0] * s[0];
        return 0;
    }
    case 3: {   /* capsule: a cylinder and two half spheres */
        double r = s[0], h = s[1], vc = pi * r * r * 2 * h, vs = 4.0 / 3 * pi * r * r * r, v = vc + vs;
        *volume = v;
        if (!(v > 0)) { I[0] = I[1] = I[2] = 0; return 0; }
        double wc = vc / v, ws = vs / v;
        I[0] = I[1] = wc * (4 * h * h / 12 + r * r / 4) + ws * (0.4 * r * r + h * h + 0.75 * h * r);
        I[2] = wc * r * r / 2 + ws * 0.4 * r * r;
        return 0;
    }
    case 4: {   /* ellipsoid */
        *volume = 4.0 / 3 * pi * s[0] * s[1] * s[2];
        moments_of_extents(s[0] * s[0], s[1] * s[1], s[2] * s[2], 5, I);
        return 0;
    }
    case 5: {   /* cylinder */
        double r = s[0], h = s[1];
        *volume = pi * r * r * 2 * h;
        I[0] = I[1] = (3 * r * r + 4 * h * h) / 12;
        I[2] = r * r / 2;
        return 0;
    }
    case 6: {   /* box */
        *volume = 8 * s[0] * s[1] * s[2];
        moments_of_extents(s[0] * s[0], s[1] * s[1], s[2] * s[2], 3, I);
        return 0;
    }
    default: return -1;
    }
}

/* A = V diag(w) Vᵀ for a symmetric 3x3 A (cyclic Jacobi rotations; V column-major, columns the
 * eigenvectors): exact to round-off after a handful of sweeps. */
static void sym3_eigen(const double Ain[9], double V[9], double w[3])
{
    double A[9];
    memcpy(A, Ain, sizeof A);
    m3_identity(V);
    for (int sweep = 0; sweep < 50; sweep++) {
        double off = A[3] * A[3] + A[6] * A[6] + A[7] * A[7], diag = A[0] * A[0] + A[4] * A[4] + A[8] * A[8];
        if (!(off > 1e-30 * diag)) break;
        for (int p = 0; p < 2; p++)
            for (int q = p + 1; q < 3; q++) {
                double apq = A[p + 3 * q];
                if (apq == 0) continue;
                double theta = (A[q + 3 * q] - A[p + 3 * p]) / (2 * apq);
                double t = (theta >= 0 ? 1 : -1) / (fabs(theta) + sqrt(theta * theta + 1));
                double cs = 1 / sqrt(t * t + 1), sn = t * cs;
                for (int k = 0; k < 3; k++) {   /* A = Jᵀ A J, V = V J */
                    double akp = A[k + 3 * p], akq = A[k + 3 * q];
                    A[k + 3 * p] = cs * akp - sn * akq;
                    A[k + 3 * q] = sn * akp + cs * akq;
                }
                for (int k = 0; k < 3; k++) {
                    double apk = A[p + 3 * k], aqk = A[q + 3 * k];
                    A[p + 3 * k] = cs * apk - sn * aqk;
                    A[q + 3 * k] = sn * apk + cs * aqk;
                }
                for (int k = 0; k < 3; k++) {
                    double vkp = V[k + 3 * p], vkq = V[k + 3 * q];
                    V[k + 3 * p] = cs * vkp - sn * vkq;
                    V[k + 3 * q] = sn * vkp + cs * vkq;
                }
            }
    }
    w[0] = A[0]; w[1] = A[4]; w[2] = A[8];
}

/* MuJoCo's compiler bounds and balanceinertia on one MJCF body's inertia: mass at least boundmass,
 * each principal moment at least boundinertia; a principal triple off the triangle inequality
 * replaced by its mean. */
static void bound_inertia(const mjcf_ctx *c, mj_inertia *in)
{
    double bm = c->boundmass, bi = c->boundinertia;
    if (c->opt->bound_mass > bm) bm = c->opt->bound_mass;
    if (c->opt->bound_inertia > bi) bi = c->opt->bound_inertia;
    if (in->m < bm) in->m = bm;
    if (!(bi > 0) && !c->balanceinertia) return;
    double A[9], w[3];
    sym3_eigen(in->I, A, w);
    int changed = 0;
    double hi = fmax(w[0], fmax(w[1], w[2]));
    if (c->balanceinertia && hi > w[0] + w[1] + w[2] - hi) {
        double mean = (w[0] + w[1] + w[2]) / 3;
        w[0] = w[1] = w[2] = mean;
        changed = 1;
    }
    for (int k = 0; k < 3; k++)
        if (w[k] < bi) { w[k] = bi; changed = 1; }
    if (!changed) return;
    for (int j = 0; j < 3; j++)   /* I = V diag(w) Vᵀ */
        for (int i = 0; i < 3; i++) {
            double s = 0;
            for (int k = 0; k < 3; k++) s += A[i + 3 * k] * w[k] * A[j + 3 * k];
            in->I[i + 3 * j] = s;
        }
}

/* ---- geoms and sites ---- */

static const char *const geom_types = "plane hfield sphere capsule ellipsoid cylinder box mesh sdf";

/* The colour of a geom: its rgba, else its material's, else MuJoCo's grey. */
static int geom_rgba(mjcf_ctx *c, const xmlNode *g, int cls, double rgba[4])
{
    static const double grey[4] = {0.5, 0.5, 0.5, 1};
    memcpy(rgba, grey, sizeof grey);
    if (xmlHasProp(g, BAD_CAST "rgba")) return num(c, g, "geom", "rgba", 4, rgba, cls) < 0 ? -1 : 0;
    const xmlNode *h = holder(c, g, "geom", "material", cls);
    xmlChar *name = h ? xmlGetProp(h, BAD_CAST "material") : NULL;
    const xmlNode *mat = name ? xmlHashLookup(c->materials, name) : NULL;
    xmlFree(name);
    if (mat) return mbsi_xml_numbers(&c->x, mat, "rgba", 4, rgba, 0) < 0 ? -1 : 0;
    return num(c, g, "geom", "rgba", 4, rgba, cls) < 0 ? -1 : 0;
}

static void note(mjcf_ctx *c, int kind, const xmlNode *n)
{
    mj_note *t = &c->notes[kind];
    if (t->count++ == 0) {
        t->node = n;
        t->kind = c->x.kind;
        t->has_name = c->x.owner != NULL;
        snprintf(t->name, sizeof t->name, "%s", c->x.owner ? c->x.owner : "");
    }
}

/* A mesh geom's file (its <mesh>'s file, else the mesh's name) into file (n bytes) and the mesh's
 * scale into scale. */
static int geom_mesh(mjcf_ctx *c, const xmlNode *g, int cls, double scale[3], char *file, size_t n)
{
    scale[0] = scale[1] = scale[2] = 1;
    const xmlNode *h = holder(c, g, "geom", "mesh", cls);
    xmlChar *name = h ? xmlGetProp(h, BAD_CAST "mesh") : NULL;
    const xmlNode *mesh = name ? xmlHashLookup(c->meshes, name) : NULL;
    xmlChar *path = mesh ? xmlGetProp(mesh, BAD_CAST "file") : NULL;
    snprintf(file, n, "%s", path ? (const char *)path : name ? (const char *)name : "");
    xmlFree(path);
    xmlFree(name);
    /* an asset takes its defaults from main, or from the class it names (never a childclass) */
    int mcls = mesh ? class_of(c, mesh, 0) : -1;
    if (mesh && (mcls < 0 || num(c, mesh, "mesh", "scale", 3, scale, mcls) < 0)) return -1;
    return 0;
}

static int add_shape(mjcf_ctx *c, const xmlNode *g, mbs_visual *v, const double R[9], const double p[3])
{
    memcpy(v->R, R, sizeof v->R);
    memcpy(v->p, p, sizeof v->p);
    if (mbs_model_add_visual(c->m, v, c->x.err) != MBS_OK) return mbsi_xml_builder_failed(&c->x, g);
    return 0;
}

/* A geom's visual shapes (a capsule: its cylinder and two spheres; planes, height fields and
 * ellipsoids have no shape of mbs_visual), placed by (R, p) in mbs body b. */
static int geom_visual(mjcf_ctx *c, const xmlNode *g, int cls, int type, const double s[3], int b, const double R[9],
                       const double p[3])
{
    mbs_visual v;
    memset(&v, 0, sizeof v);
    v.body = b;
    if (geom_rgba(c, g, cls, v.rgba) < 0) return -1;
    switch (type) {
    case 2: v.type = MBS_SHAPE_SPHERE; v.size[0] = s[0]; return add_shape(c, g, &v, R, p);
    case 6:
        v.type = MBS_SHAPE_BOX;
        for (int k = 0; k < 3; k++) v.size[k] = 2 * s[k];
        return add_shape(c, g, &v, R, p);
    case 3: case 5: {
        v.type = MBS_SHAPE_CYLINDER;
        v.size[0] = s[0];
        v.size[1] = 2 * s[1];
        if (add_shape(c, g, &v, R, p) < 0) return -1;
        if (type == 5) return 0;
        v.type = MBS_SHAPE_SPHERE;
        for (int end = -1; end <= 1; end += 2) {
            double q[3];
            for (int k = 0; k < 3; k++) q[k] = p[k] + end * s[1] * R[6 + k];
            if (add_shape(c, g, &v, R, q) < 0) return -1;
        }
        return 0;
    }
    case 7:
        v.type = MBS_SHAPE_MESH;
        if (geom_mesh(c, g, cls, v.size, v.mesh, sizeof v.mesh) < 0) return -1;
        return add_shape(c, g, &v, R, p);
    default: return 0;
    }
}

/* A geom that collides in MuJoCo (contype or conaffinity not 0) as a collision shape of the model, at
 * (R, p) in mbs body b, declared by MJCF body `body`. Sizes are MuJoCo's half lengths turned into
 * mbs_shape_type's full ones; an ellipsoid has no collision shape here (noted), planes, height fields
 * and SDFs are the world's, not a link's (skipped). */
static int geom_collision(mjcf_ctx *c, const xmlNode *g, int cls, int type, const double s[3], int b, const char *body,
                          const double R[9], const double p[3])
{
    double contype = 1, conaffinity = 1;
    if (num(c, g, "geom", "contype", 1, &contype, cls) < 0 || num(c, g, "geom", "conaffinity", 1, &conaffinity, cls) < 0)
        return -1;
    if (contype == 0 && conaffinity == 0) return 0;
    mbs_collision k;
    memset(&k, 0, sizeof k);
    k.body = b;
    switch (type) {
    case 2: k.type = MBS_SHAPE_SPHERE; k.size[0] = s[0]; break;
    case 3: k.type = MBS_SHAPE_CAPSULE; k.size[0] = s[0]; k.size[1] = 2 * s[1]; break;
    case 5: k.type = MBS_SHAPE_CYLINDER; k.size[0] = s[0]; k.size[1] = 2 * s[1]; break;
    case 6: k.type = MBS_SHAPE_BOX; for (int i = 0; i < 3; i++) k.size[i] = 2 * s[i]; break;
    case 7:
        k.type = MBS_SHAPE_MESH;
        if (geom_mesh(c, g, cls, k.size, k.mesh, sizeof k.mesh) < 0) return -1;
        break;
    case 4: note(c, NOTE_ELLIPSOID_COLLISION, g); return 0;
    default: return 0;
    }
    memcpy(k.R, R, sizeof k.R);
    memcpy(k.p, p, sizeof k.p);
    snprintf(k.link, sizeof k.link, "%s", body);
    xmlChar *name = xmlGetProp(g, BAD_CAST "name");
    if (name) snprintf(k.name, sizeof k.name, "%s", (const char *)name);
    xmlFree(name);
    if (mbs_model_add_collision(c->m, &k, c->x.err) != MBS_OK) return mbsi_xml_builder_failed(&c->x, g);
    return 0;
}

/* A <geom>: a visual and, when it collides, a collision shape in mbs body b (the MJCF body sits at
 * (RB, pB) in it), and its mass into acc
 * (MJCF body frame) when the body's inertia comes from its geoms. */
static int read_geom(mjcf_ctx *c, const xmlNode *g, int cls, int b, const double RB[9], const double pB[3],
                     mj_inertia *acc)
{
    if ((cls = class_of(c, g, cls)) < 0) return -1;
    int type = keyword(c, g, "geom", "type", geom_types, 2, cls);
    if (type < 0) return -1;
    double s[3] = {0, 0, 0}, R[9], p[3], half;
    if (num(c, g, "geom", "size", -3, s, cls) < 0 || read_pose(c, g, "geom", cls, R, p, &half) < 0) return -1;
    if (half >= 0) {
        if (type == 3 || type == 5) s[1] = half;
        else if (type == 4 || type == 6) s[2] = half;
        else return mbsi_xml_fail(&c->x, g, MBS_ERR_MODEL, "fromto is for capsules, cylinders, ellipsoids and boxes");
    }
    for (int k = 0; k < 3; k++)
        if (s[k] < 0) return mbsi_xml_fail(&c->x, g, MBS_ERR_MODEL, "negative size %g", s[k]);
    double Rb[9], pb[3];
    se3_compose(RB, pB, R, p, Rb, pb);
    if (geom_visual(c, g, cls, type, s, b, Rb, pb) < 0 ||
        geom_collision(c, g, cls, type, s, b, c->x.owner ? c->x.owner : "world", Rb, pb) < 0)
        return -1;
    /* a named geom is also a frame at its centre, as a site: where a scenario puts a contact
     * (Menagerie's quadrupeds name their foot spheres, not sites) */
    xmlChar *gname = xmlGetProp(g, BAD_CAST "name");
    if (gname) {
        int rc = mbs_model_add_frame(c->m, (const char *)gname, b, Rb, pb, MBS_FRAME_OP, c->x.err) < 0 ? -1 : 0;
        xmlFree(gname);
        if (rc < 0) return mbsi_xml_builder_failed(&c->x, g);
    }
    if (!acc) return 0;
    double group = 0;
    if (num(c, g, "geom", "group", 1, &group, cls) < 0) return -1;
    if (group < c->igroup[0] || group > c->igroup[1]) return 0;
    double vol, u[3], mass, density = 1000;
    if (geom_unit_inertia(type, s, &vol, u) < 0) {
        if (type == 7) note(c, NOTE_MESH_INERTIA, g);
        return 0;
    }
    int has_mass = num(c, g, "geom", "mass", 1, &mass, cls);
    if (has_mass < 0 || (!has_mass && num(c, g, "geom", "density", 1, &density, cls) < 0)) return -1;
    if (!has_mass) mass = density * vol;
    if (mass < 0) return mbsi_xml_fail(&c->x, g, MBS_ERR_MODEL, "negative mass %g", mass);
    double D[9] = {mass * u[0], 0, 0, 0, mass * u[1], 0, 0, 0, mass * u[2]}, I[9];
    mbsi_rotate_inertia(R, D, I);
    inertia_add(acc, mass, p, I);
    return 0;
}

/* A named <site>: a frame on mbs body b. */
static int read_site(mjcf_ctx *c, const xmlNode *n, int cls, int b, const double RB[9], const double pB[3])
{
    if ((cls = class_of(c, n, cls)) < 0) return -1;
    xmlChar *name = xmlGetProp(n, BAD_CAST "name");
    if (!name) return 0;   /* an unnamed site can never be looked up */
    double R[9], p[3], half, Rb[9], pb[3];
    int rc = read_pose(c, n, "site", cls, R, p, &half);
    if (rc == 0) {
        se3_compose(RB, pB, R, p, Rb, pb);
        if (mbs_model_add_frame(c->m, (const char *)name, b, Rb, pb, MBS_FRAME_OP, c->x.err) < 0)
            rc = mbsi_xml_builder_failed(&c->x, n);
    }
    xmlFree(name);
    return rc;
}

/* ---- joints ---- */

static int bool_or_auto(mjcf_ctx *c, const xmlNode *e, const char *tag, const char *key, int cls)
{
    return keyword(c, e, tag, key, "false true auto", 2, cls);
}

/* A <joint> or <freejoint> of a body: its record (limits and passive terms in MuJoCo's units
 * turned into SI radians). */
static int read_joint(mjcf_ctx *c, const xmlNode *n, int cls, const char *body, int index, mj_joint *j, double anchor[3],
                      double axis[3])
{
    memset(j, 0, sizeof *j);
    j->node = n;
    j->lower = -INFINITY;
    j->upper = INFINITY;
    j->effort = INFINITY;
    j->frc = INFINITY;
    j->mbs = -1;
    xmlChar *name = xmlGetProp(n, BAD_CAST "name");
    char gen[320];
    snprintf(gen, sizeof gen, "%.256s_joint%d", body, index);
    /* an unnamed free joint is the floating base: "root_joint", as the URDF loader names it */
    int is_free = mbsi_xml_is(n, "freejoint");
    if (!is_free && mbsi_xml_is(n, "joint") && !name) {
        xmlChar *t = xmlGetProp(n, BAD_CAST "type");
        is_free = t && xmlStrEqual(t, BAD_CAST "free");
        xmlFree(t);
    }
    if (!name && is_free && !xmlHashLookup(c->joint_ids, BAD_CAST "root_joint")) snprintf(gen, sizeof gen, "root_joint");
    j->name = mbsi_strdup(name ? (const char *)name : gen);
    xmlFree(name);
    if (!j->name) return fail_nomem(c, n);
    set_owner(c, "joint", j->name);
    memset(anchor, 0, 3 * sizeof(double));
    axis[0] = axis[1] = 0;
    axis[2] = 1;
    if (mbsi_xml_is(n, "freejoint")) {
        j->type = MJ_FREE;
        return 0;
    }
    if ((cls = class_of(c, n, cls)) < 0) return -1;
    int type = keyword(c, n, "joint", "type", "free ball slide hinge", MJ_HINGE, cls);
    if (type < 0) return -1;
    j->type = type;
    if (type == MJ_FREE) return 0;
    if (num(c, n, "joint", "pos", 3, anchor, cls) < 0 || num(c, n, "joint", "axis", 3, axis, cls) < 0) return -1;
    if ((type == MJ_HINGE || type == MJ_SLIDE) && !(sqrt(v3_dot(axis, axis)) > 1e-12))
        return mbsi_xml_fail(&c->x, n, MBS_ERR_MODEL, "axis has zero length");
    double unit = type == MJ_HINGE && c->degree ? MBS_PI / 180 : 1, range[2] = {0, 0}, stiff = 0, frc[2] = {0, 0};
    int has_range = num(c, n, "joint", "range", 2, range, cls);
    int limited = bool_or_auto(c, n, "joint", "limited", cls);
    /* MuJoCo 2.3's clamp of the total actuator force at the joint: an effort limit */
    int has_frc = num(c, n, "joint", "actuatorfrcrange", 2, frc, cls);
    int frc_limited = bool_or_auto(c, n, "joint", "actuatorfrclimited", cls);
    if (has_frc < 0 || frc_limited < 0) return -1;
    if (frc_limited == 2) {
        if (has_frc && !c->autolimits)
            return mbsi_xml_fail(&c->x, n, MBS_ERR_MODEL, "joint has an actuatorfrcrange but no 'actuatorfrclimited': "
                                 "set autolimits=\"true\" in <compiler>, or the limited flag");
        frc_limited = has_frc;
    }
    if (frc_limited) {
        if (frc[0] > 0 || frc[1] < 0 || frc[0] >= frc[1])
            return mbsi_xml_fail(&c->x, n, MBS_ERR_MODEL, "actuatorfrcrange %g %g must contain 0 (lower below upper)",
                                 frc[0], frc[1]);
        j->frc = fmax(-frc[0], frc[1]);
    }
    if (has_range < 0 || limited < 0 || num(c, n, "joint", "ref", 1, &j->ref, cls) < 0 ||
        num(c, n, "joint", "damping", 1, &j->damping, cls) < 0 ||
        num(c, n, "joint", "armature", 1, &j->armature, cls) < 0 ||
        num(c, n, "joint", "frictionloss", 1, &j->frictionloss, cls) < 0 ||
        num(c, n, "joint", "stiffness", 1, &stiff, cls) < 0)
        return -1;
    if (j->damping < 0 || j->armature < 0 || j->frictionloss < 0)
        return mbsi_xml_fail(&c->x, n, MBS_ERR_MODEL, "damping, armature and frictionloss must be >= 0");
    if (limited == 2) {
        if (has_range && !c->autolimits)
            return mbsi_xml_fail(&c->x, n, MBS_ERR_MODEL,
                                 "joint has a range but no 'limited': set autolimits=\"true\" in <compiler>, or "
                                 "limited=\"true\" or \"false\" on the joint, or remove the range");
        limited = has_range;
    }
    j->ref *= unit;
    if (limited && (type == MJ_HINGE || type == MJ_SLIDE)) {
        if (range[0] >= range[1])
            return mbsi_xml_fail(&c->x, n, MBS_ERR_MODEL, "range %g %g: the lower end must be below the upper", range[0],
                                 range[1]);
        j->lower = range[0] * unit;
        j->upper = range[1] * unit;
    }
    if (limited && type == MJ_BALL) note(c, NOTE_BALL_RANGE, n);
    if (stiff != 0) note(c, NOTE_STIFFNESS, n);
    if (j->frictionloss > 0) note(c, NOTE_FRICTIONLOSS, n);
    return 0;
}

static int push_joint(mjcf_ctx *c, const mj_joint *j)
{
    if (c->njoints == c->cap_joints) {
        int cap = c->cap_joints ? 2 * c->cap_joints : 32;
        mj_joint *bigger = realloc(c->joints, (size_t)cap * sizeof *bigger);
        if (!bigger) return fail_nomem(c, j->node);
        c->joints = bigger;
        c->cap_joints = cap;
    }
    if (xmlHashLookup(c->joint_ids, BAD_CAST j->name))
        return mbsi_xml_fail(&c->x, j->node, MBS_ERR_MODEL, "a second joint named '%s'", j->name);
    if (xmlHashAddEntry(c->joint_ids, BAD_CAST j->name, (void *)(intptr_t)(c->njoints + 1)) != 0)
        return fail_nomem(c, j->node);
    c->joints[c->njoints++] = *j;
    return 0;
}

/* ---- bodies ---- */

/* Where an MJCF body ended up: mbs body (-1 world) and its frame's placement in that body. */
typedef struct mj_place {
    int b;
    double R[9], p[3];
} mj_place;

static int read_body(mjcf_ctx *c, const xmlNode *n, const mj_place *parent, int cls, int depth, int top);

/* The children of a body (or of the worldbody) other than its joints and inertial. */
static int read_children(mjcf_ctx *c, const xmlNode *n, const mj_place *me, int cls, int depth, int is_world,
                         mj_inertia *acc, const char *name)
{
    static const char *const ignored = "camera light";
    static const char *const refused = "composite flexcomp plugin replicate attach frame";
    kids k;
    kids_begin(&k, n);
    for (const xmlNode *e; (e = kids_next(&k));) {
        set_owner(c, is_world ? "worldbody" : "body", is_world ? NULL : name);
        const char *t = (const char *)e->name;
        int rc = 0;
        if (mbsi_xml_is(e, "body")) rc = read_body(c, e, me, cls, depth + 1, is_world);
        else if (mbsi_xml_is(e, "geom")) rc = read_geom(c, e, cls, me->b, me->R, me->p, acc);
        else if (mbsi_xml_is(e, "site")) rc = read_site(c, e, cls, me->b, me->R, me->p);
        else if (mbsi_xml_is(e, "joint") || mbsi_xml_is(e, "freejoint") || mbsi_xml_is(e, "inertial")) {
            if (is_world) rc = mbsi_xml_fail(&c->x, e, MBS_ERR_MODEL, "<%s> cannot be in <worldbody>", t);
        } else if (mbsi_word_index(ignored, t) >= 0) {
            continue;
        } else if (mbsi_word_index(refused, t) >= 0) {
            rc = mbsi_xml_fail(&c->x, e, MBS_ERR_MODEL, "<%s> is not supported", t);
        } else {
            rc = mbsi_xml_fail(&c->x, e, MBS_ERR_MODEL, "unknown element <%s>", t);
        }
        if (rc < 0) return -1;
    }
    return 0;
}

/* The mbs joint of MJCF joint j, under `parent` at (R, p). */
static int add_mbs_joint(mjcf_ctx *c, mj_joint *j, int parent, const double R[9], const double p[3], const double axis[3])
{
    static const mbs_joint_type types[4] = {MBS_JOINT_FREEFLYER, MBS_JOINT_BALL, MBS_JOINT_PRISMATIC, MBS_JOINT_REVOLUTE};
    set_owner(c, "joint", j->name);
    j->mbs = mbs_model_add_joint(c->m, parent, types[j->type], j->name, R, p, axis, c->x.err);
    if (j->mbs < 0) return mbsi_xml_builder_failed(&c->x, j->node);
    if (mbs_model_add_frame(c->m, j->name, j->mbs, NULL, NULL, MBS_FRAME_JOINT, c->x.err) < 0)
        return mbsi_xml_builder_failed(&c->x, j->node);
    return push_joint(c, j);
}

static int read_body(mjcf_ctx *c, const xmlNode *n, const mj_place *parent, int cls, int depth, int top)
{
    int index = ++c->nbodies_mj;
    xmlChar *xname = xmlGetProp(n, BAD_CAST "name");
    char name[300];
    if (xname) snprintf(name, sizeof name, "%s", (const char *)xname);
    else snprintf(name, sizeof name, "body%d", index);
    xmlFree(xname);
    set_owner(c, "body", name);
    if (depth > MJCF_MAX_DEPTH) return mbsi_xml_fail(&c->x, n, MBS_ERR_MODEL, "bodies nest deeper than %d", MJCF_MAX_DEPTH);
    xmlChar *child = xmlGetProp(n, BAD_CAST "childclass");
    if (child) {
        int i = (int)(intptr_t)xmlHashLookup(c->cls_ids, child) - 1;
        if (i < 0) mbsi_xml_fail(&c->x, n, MBS_ERR_MODEL, "unknown childclass '%s'", (const char *)child);
        xmlFree(child);
        if (i < 0) return -1;
        cls = i;
    }
    double Rb[9], pb[3];
    if (read_pose(c, n, NULL, -1, Rb, pb, NULL) < 0) return -1;
    mj_place me = {parent->b, {0}, {0}};
    se3_compose(parent->R, parent->p, Rb, pb, me.R, me.p);
    /* the joints, in order */
    double prev[3] = {0, 0, 0};
    int nj = 0, has_inertial = 0;
    kids k;
    kids_begin(&k, n);
    for (const xmlNode *e; (e = kids_next(&k));) {
        has_inertial |= mbsi_xml_is(e, "inertial");
        if (!mbsi_xml_is(e, "joint") && !mbsi_xml_is(e, "freejoint")) continue;
        mj_joint j;
        double anchor[3], axis[3];
        if (read_joint(c, e, cls, name, nj, &j, anchor, axis) < 0) {
            free(j.name);
            return -1;
        }
        int rc;
        if (j.type == MJ_FREE) {
            /* the world pose of the body is q: identity tree transform, qpos0 from the file */
            if (!top || nj > 0 || parent->b != -1)
                rc = mbsi_xml_fail(&c->x, e, MBS_ERR_MODEL, "a free joint must be the only joint of a top-level body");
            else {
                double qxyzw[4];
                memcpy(j.qpos0, me.p, 3 * sizeof(double));
                m3_to_quat(me.R, qxyzw);
                j.qpos0[3] = qxyzw[3]; j.qpos0[4] = qxyzw[0]; j.qpos0[5] = qxyzw[1]; j.qpos0[6] = qxyzw[2];
                rc = add_mbs_joint(c, &j, -1, NULL, NULL, NULL);
                if (rc == 0) { me.b = j.mbs; m3_identity(me.R); memset(me.p, 0, sizeof me.p); }
            }
        } else {
            if (j.type == MJ_SLIDE) memcpy(anchor, prev, sizeof prev);   /* a translation has no anchor */
            if (j.type == MJ_BALL) j.qpos0[0] = 1;
            else j.qpos0[0] = j.ref;
            /* the joint frame: at the anchor, axes of the MJCF body */
            double R[9], p[3], d[3] = {anchor[0] - prev[0], anchor[1] - prev[1], anchor[2] - prev[2]}, I[9];
            m3_identity(I);
            if (nj == 0) se3_compose(me.R, me.p, I, anchor, R, p);
            else { m3_identity(R); memcpy(p, d, sizeof d); }
            rc = add_mbs_joint(c, &j, me.b, R, p, axis);
            if (rc == 0) {
                me.b = j.mbs;
                m3_identity(me.R);
                for (int i = 0; i < 3; i++) me.p[i] = -anchor[i];
                memcpy(prev, anchor, sizeof prev);
            }
        }
        if (rc < 0) {
            free(j.name);
            return -1;
        }
        nj++;
    }
    set_owner(c, "body", name);
    if (nj > 0 && mbs_model_set_body_name(c->m, me.b, name) != MBS_OK) return fail_nomem(c, n);
    if (mbs_model_add_frame(c->m, name, me.b, me.R, me.p, nj ? MBS_FRAME_BODY : MBS_FRAME_FIXED_LINK, c->x.err) < 0)
        return mbsi_xml_builder_failed(&c->x, n);
    /* the inertia: <inertial>, or the geoms' (inertiafromgeom) */
    mj_inertia acc = {0, {0, 0, 0}, {0}, 0};
    int from_geoms = c->inertiafromgeom == 1 || (c->inertiafromgeom == 2 && !has_inertial);
    kids_begin(&k, n);
    for (const xmlNode *e; !from_geoms && (e = kids_next(&k));)
        if (mbsi_xml_is(e, "inertial") && read_inertial(c, e, &acc) < 0) return -1;
    if (read_children(c, n, &me, cls, depth, 0, from_geoms ? &acc : NULL, name) < 0) return -1;
    set_owner(c, "body", name);
    /* a body with neither an inertial nor a geom: MuJoCo puts its (bounded) centre of mass at the
     * body's pos as the parent sees it, but in the body's frame (reproduced so the bounds agree) */
    if (!acc.parts) memcpy(acc.c, pb, sizeof pb);
    bound_inertia(c, &acc);
    double com[3], Ic[9];
    m3_mulv(me.R, acc.c, com);
    for (int i = 0; i < 3; i++) com[i] += me.p[i];
    mbsi_rotate_inertia(me.R, acc.I, Ic);
    if (mbs_model_add_inertia(c->m, me.b, acc.m, com, Ic, c->x.err) != MBS_OK) return mbsi_xml_builder_failed(&c->x, n);
    return 0;
}

/* ---- actuators ---- */

static int read_actuator(mjcf_ctx *c, const xmlNode *a)
{
    xmlChar *aname = xmlGetProp(a, BAD_CAST "name");
    set_owner(c, (const char *)a->name, NULL);
    int rc = 0, cls = class_of(c, a, 0);
    xmlChar *jname = xmlGetProp(a, BAD_CAST "joint");
    if (cls < 0) rc = -1;
    else if (!jname) note(c, NOTE_TRANSMISSION, a);
    else {
        int ji = (int)(intptr_t)xmlHashLookup(c->joint_ids, jname) - 1;
        mj_joint *j = ji >= 0 ? &c->joints[ji] : NULL;
        double gear[6] = {1, 0, 0, 0, 0, 0}, cr[2] = {0, 0}, fr[2] = {0, 0};
        int hc = 0, hf = 0, cl = 0, fl = 0;
        if (!j) rc = mbsi_xml_fail(&c->x, a, MBS_ERR_MODEL, "unknown joint '%s'", (const char *)jname);
        else if ((hc = num(c, a, "actuator", "ctrlrange", 2, cr, cls)) < 0 ||
                 (hf = num(c, a, "actuator", "forcerange", 2, fr, cls)) < 0 ||
                 (cl = bool_or_auto(c, a, "actuator", "ctrllimited", cls)) < 0 ||
                 (fl = bool_or_auto(c, a, "actuator", "forcelimited", cls)) < 0 ||
                 num(c, a, "actuator", "gear", -6, gear, cls) < 0)
            rc = -1;
        else if (j->type != MJ_HINGE && j->type != MJ_SLIDE)
            note(c, NOTE_TRANSMISSION, a);
        else {
            if ((cl == 2 && hc && !c->autolimits) || (fl == 2 && hf && !c->autolimits))
                rc = mbsi_xml_fail(&c->x, a, MBS_ERR_MODEL, "a ctrlrange or forcerange without ctrllimited or "
                                   "forcelimited: set autolimits=\"true\" in <compiler>, or the limited flag");
            cl = cl == 2 ? hc : cl;
            fl = fl == 2 ? hf : fl;
            /* a motor's force is its control; any actuator's force is clipped to forcerange */
            double cap = INFINITY;
            if (mbsi_xml_is(a, "motor") && cl) cap = fmax(fabs(cr[0]), fabs(cr[1]));
            if (fl) cap = fmin(cap, fmax(fabs(fr[0]), fabs(fr[1])));
            if (!mbsi_xml_is(a, "motor")) note(c, NOTE_ACTUATOR, a);
            double t = fabs(gear[0]) * cap;
            j->effort = isinf(j->effort) ? t : j->effort + t;
        }
    }
    (void)aname;
    xmlFree(aname);
    xmlFree(jname);
    return rc;
}

/* ---- keyframes ---- */

/* A <key>: MuJoCo's qpos and qvel turned into mbs's q and v (module comment of model.h). */
static int read_key(mjcf_ctx *c, const xmlNode *kn, int index, double *qpos, double *qvel, double *q, double *v)
{
    xmlChar *name = xmlGetProp(kn, BAD_CAST "name");
    char gen[32];
    snprintf(gen, sizeof gen, "key%d", index);
    const char *kname = name ? (const char *)name : gen;
    set_owner(c, "key", kname);
    int nq = 0, nv = 0, rc = 0;
    for (int i = 0; i < c->njoints; i++) {
        static const int nqs[4] = {7, 4, 1, 1}, nvs[4] = {6, 3, 1, 1};
        memcpy(qpos + nq, c->joints[i].qpos0, (size_t)nqs[c->joints[i].type] * sizeof(double));
        nq += nqs[c->joints[i].type];
        nv += nvs[c->joints[i].type];
    }
    memset(qvel, 0, (size_t)nv * sizeof(double));
    int gq = nq ? mbsi_xml_numbers(&c->x, kn, "qpos", nq, qpos, 0) : 0;
    int gv = gq >= 0 && nv ? mbsi_xml_numbers(&c->x, kn, "qvel", nv, qvel, 0) : 0;
    if (gq < 0 || gv < 0) rc = -1;
    for (int i = 0, iq = 0, iv = 0; rc == 0 && i < c->njoints; i++) {
        const mj_joint *j = &c->joints[i];
        int mq = mbs_joint_idx_q(c->m, j->mbs), mv = mbs_joint_idx_v(c->m, j->mbs);
        const double *a = qpos + iq, *w = qvel + iv;
        switch (j->type) {
        case MJ_FREE: {
            double n = sqrt(a[3] * a[3] + a[4] * a[4] + a[5] * a[5] + a[6] * a[6]), R[9];
            if (!(n > 0)) { rc = mbsi_xml_fail(&c->x, kn, MBS_ERR_MODEL, "joint '%s': zero quaternion", j->name); break; }
            double quat[4] = {a[4] / n, a[5] / n, a[6] / n, a[3] / n};
            memcpy(q + mq, a, 3 * sizeof(double));
            memcpy(q + mq + 3, quat, sizeof quat);
            m3_from_quat(quat, R);
            m3t_mulv(R, w, v + mv);   /* MuJoCo's linear velocity is in the world frame */
            memcpy(v + mv + 3, w + 3, 3 * sizeof(double));
            iq += 7; iv += 6;
            break;
        }
        case MJ_BALL: {
            double n = sqrt(a[0] * a[0] + a[1] * a[1] + a[2] * a[2] + a[3] * a[3]);
            if (!(n > 0)) { rc = mbsi_xml_fail(&c->x, kn, MBS_ERR_MODEL, "joint '%s': zero quaternion", j->name); break; }
            q[mq] = a[1] / n; q[mq + 1] = a[2] / n; q[mq + 2] = a[3] / n; q[mq + 3] = a[0] / n;
            memcpy(v + mv, w, 3 * sizeof(double));
            iq += 4; iv += 3;
            break;
        }
        default:
            q[mq] = a[0] - j->ref;
            v[mv] = w[0];
            iq++; iv++;
        }
    }
    if (rc == 0 && mbs_model_add_keyframe(c->m, kname, q, v, c->x.err) < 0) rc = mbsi_xml_builder_failed(&c->x, kn);
    xmlFree(name);
    return rc;
}

static int read_keyframes(mjcf_ctx *c, const xmlNode *section)
{
    int nq = mbs_model_nq(c->m), nv = mbs_model_nv(c->m), index = 0, rc = 0;
    double *buf = calloc(2 * ((size_t)nq + (size_t)nv) + 2, sizeof *buf);
    if (!buf) return fail_nomem(c, section);
    kids k;
    kids_begin(&k, section);
    for (const xmlNode *e; rc == 0 && (e = kids_next(&k));)
        if (mbsi_xml_is(e, "key")) rc = read_key(c, e, index++, buf, buf + nq, buf + nq + nv, buf + 2 * nq + nv);
    free(buf);
    return rc;
}

/* ---- the model ---- */

static void emit_notes(mjcf_ctx *c)
{
    for (int i = 0; i < NNOTES; i++) {
        const mj_note *t = &c->notes[i];
        if (!t->count) continue;
        char more[64] = "";
        if (t->count > 1) snprintf(more, sizeof more, " (and %d more like it)", t->count - 1);
        if (t->has_name)
            mbsi_warn(c->x.err, "%s:%ld: %s '%s': %s%s", mbsi_xml_file(&c->x, t->node), xmlGetLineNo(t->node), t->kind,
                      t->name, note_text[i], more);
        else
            mbsi_warn(c->x.err, "%s:%ld: <%s>: %s%s", mbsi_xml_file(&c->x, t->node), xmlGetLineNo(t->node),
                      (const char *)t->node->name, note_text[i], more);
    }
}

static void set_joint_limits(mjcf_ctx *c)
{
    for (int i = 0; i < c->njoints; i++) {
        const mj_joint *j = &c->joints[i];
        double lo = j->lower - j->ref, up = j->upper - j->ref, d[6], f[6], a[6], e[6];
        for (int k = 0; k < 6; k++) {
            d[k] = j->damping; f[k] = j->frictionloss; a[k] = j->armature; e[k] = fmin(j->effort, j->frc);
        }
        int one = j->type == MJ_HINGE || j->type == MJ_SLIDE;
        mbs_model_set_limits(c->m, j->mbs, one ? &lo : NULL, one ? &up : NULL, NULL, one ? e : NULL, d, f);
        if (j->armature > 0) mbs_model_set_armature(c->m, j->mbs, a);
    }
}

/* Sections of <mujoco> that carry nothing for the dynamics, and those noted as ignored. */
static const char *const silent_sections = "size statistic visual asset sensor custom extension";
static const char *const noted_sections = "tendon equality contact";

static int read_model(mjcf_ctx *c)
{
    const xmlNode *r = c->root;
    kids k;
    /* global first: compiler and option apply wherever they stand, defaults and assets are named */
    kids_begin(&k, r);
    for (const xmlNode *e; (e = kids_next(&k));) {
        int rc = 0;
        if (mbsi_xml_is(e, "compiler")) rc = read_compiler(c, e);
        else if (mbsi_xml_is(e, "option")) rc = read_option(c, e);
        else if (mbsi_xml_is(e, "default")) rc = add_class(c, e, -1);
        else if (mbsi_xml_is(e, "asset")) {
            kids a;
            kids_begin(&a, e);
            for (const xmlNode *s; (s = kids_next(&a));) {
                xmlHashTable *t = mbsi_xml_is(s, "mesh") ? c->meshes : mbsi_xml_is(s, "material") ? c->materials : NULL;
                xmlChar *name = t ? xmlGetProp(s, BAD_CAST (t == c->meshes && !xmlHasProp(s, BAD_CAST "name") ? "file" : "name")) : NULL;
                if (name && t == c->meshes && !xmlHasProp(s, BAD_CAST "name")) {   /* named after its file's stem */
                    char *slash = strrchr((char *)name, '/'), *dot = strrchr((char *)name, '.');
                    if (dot && (!slash || dot > slash)) *dot = 0;
                    if (slash) memmove(name, slash + 1, strlen(slash + 1) + 1);
                }
                if (name) xmlHashUpdateEntry(t, name, (void *)s, NULL);
                xmlFree(name);
            }
        }
        if (rc < 0) return -1;
    }
    if (!xmlHashLookup(c->cls_ids, BAD_CAST "main")) {   /* no <default>: an empty main class */
        c->cls = calloc(1, sizeof *c->cls);
        if (!c->cls) return fail_nomem(c, r);
        c->cls[0].parent = -1;
        c->ncls = c->cap_cls = 1;
    }
    xmlChar *mname = xmlGetProp(r, BAD_CAST "model");
    c->m = mbs_model_new(mname ? (const char *)mname : "MuJoCo Model");
    xmlFree(mname);
    if (!c->m) return fail_nomem(c, r);
    mbs_model_set_gravity(c->m, c->gravity);
    const mj_place world = {-1, {1, 0, 0, 0, 1, 0, 0, 0, 1}, {0, 0, 0}};
    const xmlNode *keys[16];
    int nkeys = 0;
    kids_begin(&k, r);
    for (const xmlNode *e; (e = kids_next(&k));) {
        const char *t = (const char *)e->name;
        int rc = 0;
        set_owner(c, "mujoco", NULL);
        if (mbsi_xml_is(e, "worldbody")) {
            rc = read_children(c, e, &world, 0, 0, 1, NULL, NULL);
        } else if (mbsi_xml_is(e, "actuator")) {
            kids a;
            kids_begin(&a, e);
            for (const xmlNode *s; rc == 0 && (s = kids_next(&a));) {
                if (is_actuator(s)) rc = read_actuator(c, s);
                else rc = mbsi_xml_fail(&c->x, s, MBS_ERR_MODEL, "unknown actuator <%s>", (const char *)s->name);
            }
        } else if (mbsi_xml_is(e, "keyframe")) {
            if (nkeys == (int)(sizeof keys / sizeof keys[0]))
                rc = mbsi_xml_fail(&c->x, e, MBS_ERR_MODEL, "more than %d <keyframe> sections", nkeys);
            else keys[nkeys++] = e;
        } else if (mbsi_word_index(noted_sections, t) >= 0) {
            if (e->children)
                mbsi_warn(c->x.err, "%s:%ld: <%s>: ignored (mbs models no %s)", mbsi_xml_file(&c->x, e), xmlGetLineNo(e),
                          t, mbsi_xml_is(e, "tendon") ? "tendons" : mbsi_xml_is(e, "equality") ? "equality constraints"
                                                                                         : "contact pairs or exclusions");
        } else if (mbsi_word_index(silent_sections, t) < 0 && !mbsi_xml_is(e, "compiler") && !mbsi_xml_is(e, "option") &&
                   !mbsi_xml_is(e, "default")) {
            rc = mbsi_xml_fail(&c->x, e, MBS_ERR_MODEL, "unknown or unsupported element <%s>", t);
        }
        if (rc < 0) return -1;
    }
    set_joint_limits(c);
    emit_notes(c);
    if (mbsi_xml_finalize(&c->x, c->m, 1) < 0) return -1;
    for (int i = 0; i < nkeys; i++)
        if (read_keyframes(c, keys[i]) < 0) return -1;
    return 0;
}

static int load(mjcf_ctx *c, const char *buf, int len)
{
    xmlDoc *doc = mbsi_xml_parse(buf, len, c->x.file, c->x.err);
    if (!doc) return -1;
    c->docs[c->ndocs++] = doc;
    c->root = xmlDocGetRootElement(doc);
    set_owner(c, "mujoco", NULL);
    if (!c->root || !mbsi_xml_is(c->root, "mujoco"))
        return mbsi_xml_fail(&c->x, c->root, MBS_ERR_MODEL, "no <mujoco> root element (found <%s>)",
                             c->root ? (const char *)c->root->name : "nothing");
    c->cls_ids = xmlHashCreate(16);
    c->joint_ids = xmlHashCreate(64);
    c->meshes = xmlHashCreate(16);
    c->materials = xmlHashCreate(16);
    if (!c->cls_ids || !c->joint_ids || !c->meshes || !c->materials) return fail_nomem(c, c->root);
    if (read_includes(c, c->root, 0) < 0) return -1;
    return read_model(c);
}

/* The loader's body (mbsi_xml_load runs it in the C locale). */
static mbs_model *load_mjcf(const void *opt, const char *buf, int len, const char *file, mbs_error *err)
{
    static const mbs_mjcf_options defaults = {0, 0};
    mjcf_ctx c;
    memset(&c, 0, sizeof c);
    c.x.file = file;
    c.x.err = err;
    c.opt = opt ? opt : &defaults;
    c.degree = 1;   /* MJCF's default unit of angles */
    /* MuJoCo 2.3 and later (the Menagerie files' target); 2.2 defaulted to false, but there a range
     * without 'limited' was an error, so no file valid for 2.2 reads differently */
    c.autolimits = 1;
    c.inertiafromgeom = 2;
    memcpy(c.eulerseq, "xyz", 4);
    c.igroup[1] = 5;
    c.gravity[2] = -9.81;
    /* includes are looked for in the main file's folder (MuJoCo's rule, for nested ones too) */
    char *dir = mbsi_strdup(file);
    char *slash = dir ? strrchr(dir, '/') : NULL;
    if (slash) *slash = 0;
    else if (dir) dir[0] = 0;
    c.dir = dir ? dir : "";
    if (!dir || load(&c, buf, len) < 0) {
        if (!dir) mbsi_fail(err, MBS_ERR_NOMEM, "%s: out of memory", file);
        mbs_model_free(c.m);
        c.m = NULL;
    }
    for (int i = 0; i < c.njoints; i++) free(c.joints[i].name);
    free(c.joints);
    free(c.cls);
    if (c.cls_ids) xmlHashFree(c.cls_ids, NULL);
    if (c.joint_ids) xmlHashFree(c.joint_ids, NULL);
    if (c.meshes) xmlHashFree(c.meshes, NULL);
    if (c.materials) xmlHashFree(c.materials, NULL);
    for (int i = 0; i < c.ndocs; i++) xmlFreeDoc(c.docs[i]);
    free(dir);
    return c.m;
}

mbs_model *mbs_model_from_mjcf(const char *path, const mbs_mjcf_options *opt, mbs_error *err)
{
    return mbsi_xml_load(1, path, NULL, "mbs_model_from_mjcf", "an MJCF file", load_mjcf, opt, err);
}

mbs_model *mbs_model_from_mjcf_string(const char *xml, const char *name, const mbs_mjcf_options *opt, mbs_error *err)
{
    return mbsi_xml_load(0, xml, name, "mbs_model_from_mjcf_string", "an MJCF file", load_mjcf, opt, err);
}
