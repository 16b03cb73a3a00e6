/* urdf.c — loads a URDF robot description into an mbs_model through the model builder.
 *
 * Three phases: read every <link> and <joint> into plain records (numbers checked on the
 * way), connect them into a tree (unknown names, second parents, cycles, roots), then walk
 * the tree depth-first and call the builder: moving joints become bodies, fixed joints are
 * merged into the parent body, every link and joint becomes a named frame.
 *
 * Sibling joints are visited in strcmp order of their names, not file order: that is the
 * order Pinocchio gets from urdfdom (its joints live in a std::map), and matching it keeps
 * the q and v layout identical to the reference vectors. */
#include <errno.h>
#include <math.h>
#include <stdarg.h>
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

typedef enum urdf_joint_kind {
    URDF_REVOLUTE, URDF_CONTINUOUS, URDF_PRISMATIC, URDF_PLANAR, URDF_FLOATING, URDF_FIXED
} urdf_joint_kind;

static const struct {
    const char *name;
    urdf_joint_kind kind;
    mbs_joint_type type;
} joint_kinds[] = {
    {"revolute", URDF_REVOLUTE, MBS_JOINT_REVOLUTE},   {"continuous", URDF_CONTINUOUS, MBS_JOINT_REVOLUTE},
    {"prismatic", URDF_PRISMATIC, MBS_JOINT_PRISMATIC}, {"planar", URDF_PLANAR, MBS_JOINT_PLANAR},
    {"floating", URDF_FLOATING, MBS_JOINT_FREEFLYER},  {"fixed", URDF_FIXED, MBS_JOINT_REVOLUTE}, /* type unused */
};

typedef struct urdf_link {
    xmlChar *name;
    const xmlNode *node;
    int parent_joint;           /* -1 for the root */
    int first_child;            /* first child joint in visiting order, -1 for a leaf */
    int has_inertia;
    double mass, com[3], Ic[9]; /* centre of mass and inertia about it, in the link frame */
    const xmlNode *inertia_node; /* its <inertia>, NULL when absent (zero inertia) */
    double ev[3];               /* its principal moments, increasing */
    int body;                   /* where the link ends up: body (-1 world) ... */
    double R[9], p[3];          /* ... and its placement in that body's frame */
} urdf_link;

typedef struct urdf_joint {
    xmlChar *name, *parent_name, *child_name;
    const xmlNode *node;
    urdf_joint_kind kind;
    mbs_joint_type type;
    int parent, child;          /* link indices */
    int next_sibling;           /* next child joint of the same parent link, -1 at the end */
    double R[9], p[3];          /* joint frame (= child link frame) in the parent link frame */
    double axis[3];
    double lower, upper, velocity, effort, damping, friction;
} urdf_joint;

typedef struct urdf_ctx {
    mbsi_xml_src x;             /* file, record, and the element messages talk about */
    const mbs_urdf_options *opt;
    xmlDoc *doc;
    xmlChar *robot_name;
    urdf_link *links;
    urdf_joint *joints;
    int nlinks, njoints;
    xmlHashTable *link_ids, *joint_ids; /* name -> index + 1 */
    mbs_model *m;
} urdf_ctx;

/* ---- messages ---- */

static void set_owner(urdf_ctx *c, const char *kind, const xmlChar *name)
{
    c->x.kind = kind;
    c->x.owner = (const char *)name;
}

/* ---- reading elements and attributes ---- */

/* A required string attribute (caller frees with xmlFree), NULL with the error filled. */
static xmlChar *required_attr(urdf_ctx *c, const xmlNode *n, const char *key)
{
    xmlChar *s = xmlGetProp(n, BAD_CAST key);
    if (!s) mbsi_xml_fail(&c->x, n, MBS_ERR_MODEL, "<%s> is missing attribute '%s'", (const char *)n->name, key);
    return s;
}

/* <origin xyz rpy> under n (both default to zero): R = Rz(yaw) Ry(pitch) Rx(roll). */
static int read_origin(urdf_ctx *c, const xmlNode *n, double R[9], double p[3])
{
    double rpy[3] = {0, 0, 0};
    memset(p, 0, 3 * sizeof(double));
    const xmlNode *o = mbsi_xml_child(n, "origin");
    if (o && (mbsi_xml_numbers(&c->x, o, "xyz", 3, p, 0) < 0 || mbsi_xml_numbers(&c->x, o, "rpy", 3, rpy, 0) < 0)) return -1;
    m3_from_rpy(rpy[0], rpy[1], rpy[2], R);
    return 0;
}

/* ---- inertia checks ---- */

/* ---- links ---- */

/* <inertial>: <origin> (com, and the axes the inertia is given in), <mass value>,
 * optional <inertia ixx ixy ixz iyy iyz izz> (zero by default, as in Drake's files). */
static int read_inertial(urdf_ctx *c, urdf_link *l, const xmlNode *n)
{
    double R[9], I[9] = {0};
    if (read_origin(c, n, R, l->com) < 0) return -1;
    const xmlNode *mass = mbsi_xml_child(n, "mass");
    if (!mass) return mbsi_xml_fail(&c->x, n, MBS_ERR_MODEL, "<inertial> has no <mass>");
    if (mbsi_xml_numbers(&c->x, mass, "value", 1, &l->mass, 1) < 0) return -1;
    if (l->mass < 0) return mbsi_xml_fail(&c->x, mass, MBS_ERR_MODEL, "negative mass %g", l->mass);
    const xmlNode *in = mbsi_xml_child(n, "inertia");
    if (in) {
        static const char *keys[6] = {"ixx", "ixy", "ixz", "iyy", "iyz", "izz"};
        static const int at[6][2] = {{0, 0}, {0, 1}, {0, 2}, {1, 1}, {1, 2}, {2, 2}};
        for (int k = 0; k < 6; k++) {
            double x;
            if (mbsi_xml_numbers(&c->x, in, keys[k], 1, &x, 1) < 0) return -1;
            I[at[k][0] + 3 * at[k][1]] = I[at[k][1] + 3 * at[k][0]] = x;
        }
        l->inertia_node = in;
        mbsi_sym3_eigenvalues(I, l->ev);   /* checked once the tree is built: check_inertias */
    }
    mbsi_rotate_inertia(R, I, l->Ic);
    l->has_inertia = 1;
    return 0;
}

static int read_link(urdf_ctx *c, const xmlNode *n, int i)
{
    urdf_link *l = &c->links[i];
    l->node = n;
    l->parent_joint = l->first_child = -1;
    set_owner(c, "link", NULL);
    if (!(l->name = required_attr(c, n, "name"))) return -1;
    set_owner(c, "link", l->name);
    if (xmlHashLookup(c->link_ids, l->name)) return mbsi_xml_fail(&c->x, n, MBS_ERR_MODEL, "duplicate link name");
    if (xmlHashAddEntry(c->link_ids, l->name, (void *)(intptr_t)(i + 1)) != 0)
        return mbsi_xml_fail(&c->x, n, MBS_ERR_NOMEM, "out of memory");
    const xmlNode *inertial = mbsi_xml_child(n, "inertial");
    return inertial ? read_inertial(c, l, inertial) : 0;
}

/* ---- joints ---- */

static int read_joint_type(urdf_ctx *c, urdf_joint *j, const xmlNode *n)
{
    xmlChar *type = required_attr(c, n, "type");
    if (!type) return -1;
    int found = 0;
    for (size_t k = 0; k < sizeof joint_kinds / sizeof joint_kinds[0]; k++)
        if (strcmp((const char *)type, joint_kinds[k].name) == 0) {
            j->kind = joint_kinds[k].kind;
            j->type = joint_kinds[k].type;
            found = 1;
        }
    if (!found) mbsi_xml_fail(&c->x, n, MBS_ERR_MODEL, "unknown joint type '%s'", (const char *)type);
    xmlFree(type);
    return found ? 0 : -1;
}

/* <parent link="..."/> or <child link="..."/>: the link name, resolved once all links are read. */
static xmlChar *read_link_ref(urdf_ctx *c, const xmlNode *n, const char *which)
{
    const xmlNode *e = mbsi_xml_child(n, which);
    if (!e) {
        mbsi_xml_fail(&c->x, n, MBS_ERR_MODEL, "missing <%s> element", which);
        return NULL;
    }
    return required_attr(c, e, "link");
}

/* <axis xyz> (default x), which must not be zero for the joints that use it. */
static int read_axis(urdf_ctx *c, urdf_joint *j, const xmlNode *n)
{
    j->axis[0] = 1; j->axis[1] = j->axis[2] = 0;
    const xmlNode *a = mbsi_xml_child(n, "axis");
    if (!a || j->kind == URDF_FIXED || j->kind == URDF_FLOATING) return 0;
    if (mbsi_xml_numbers(&c->x, a, "xyz", 3, j->axis, 0) < 0) return -1;
    /* The same threshold as mbs_model_add_joint, so the file-and-line message wins. */
    if (!(sqrt(v3_dot(j->axis, j->axis)) > 1e-12)) return mbsi_xml_fail(&c->x, a, MBS_ERR_MODEL, "axis has zero length");
    return 0;
}

/* <limit lower upper velocity effort> and <dynamics damping friction>. Following the URDF
 * spec, lower and upper default to 0 when <limit> is given; without <limit>, or on a
 * continuous joint, the position is unbounded. Absent velocity and effort mean no limit. */
static int read_limits(urdf_ctx *c, urdf_joint *j, const xmlNode *n)
{
    j->lower = -INFINITY; j->upper = INFINITY;
    j->velocity = j->effort = INFINITY;
    j->damping = j->friction = 0;
    const xmlNode *lim = mbsi_xml_child(n, "limit");
    if (lim) {
        double lo = 0, up = 0;
        if (mbsi_xml_numbers(&c->x, lim, "lower", 1, &lo, 0) < 0 || mbsi_xml_numbers(&c->x, lim, "upper", 1, &up, 0) < 0 ||
            mbsi_xml_numbers(&c->x, lim, "velocity", 1, &j->velocity, 0) < 0 ||
            mbsi_xml_numbers(&c->x, lim, "effort", 1, &j->effort, 0) < 0)
            return -1;
        if (j->kind == URDF_REVOLUTE || j->kind == URDF_PRISMATIC) {
            if (lo > up) return mbsi_xml_fail(&c->x, lim, MBS_ERR_MODEL, "lower limit %g is above upper limit %g", lo, up);
            j->lower = lo;
            j->upper = up;
        }
    }
    const xmlNode *dyn = mbsi_xml_child(n, "dynamics");
    if (dyn && (mbsi_xml_numbers(&c->x, dyn, "damping", 1, &j->damping, 0) < 0 ||
                mbsi_xml_numbers(&c->x, dyn, "friction", 1, &j->friction, 0) < 0))
        return -1;
    return 0;
}

static int read_joint(urdf_ctx *c, const xmlNode *n, int i)
{
    urdf_joint *j = &c->joints[i];
    j->node = n;
    j->parent = j->child = j->next_sibling = -1;
    set_owner(c, "joint", NULL);
    if (!(j->name = required_attr(c, n, "name"))) return -1;
    set_owner(c, "joint", j->name);
    if (xmlHashLookup(c->joint_ids, j->name)) return mbsi_xml_fail(&c->x, n, MBS_ERR_MODEL, "duplicate joint name");
    if (xmlHashAddEntry(c->joint_ids, j->name, (void *)(intptr_t)(i + 1)) != 0)
        return mbsi_xml_fail(&c->x, n, MBS_ERR_NOMEM, "out of memory");
    if (read_joint_type(c, j, n) < 0 || read_origin(c, n, j->R, j->p) < 0) return -1;
    if (!(j->parent_name = read_link_ref(c, n, "parent")) || !(j->child_name = read_link_ref(c, n, "child")))
        return -1;
    if (read_axis(c, j, n) < 0 || read_limits(c, j, n) < 0) return -1;
    return 0;
}

/* ---- the tree ---- */

static int link_index(const urdf_ctx *c, const xmlChar *name)
{
    return (int)(intptr_t)xmlHashLookup(c->link_ids, name) - 1;
}

/* Inserts joint k among the children of link l, keeping strcmp order of names (Pinocchio's). */
static void insert_child(urdf_ctx *c, int l, int k)
{
    int *at = &c->links[l].first_child;
    while (*at != -1 && xmlStrcmp(c->joints[*at].name, c->joints[k].name) < 0) at = &c->joints[*at].next_sibling;
    c->joints[k].next_sibling = *at;
    *at = k;
}

/* Resolves link names and gives each child link its (single) parent joint. */
static int connect_joints(urdf_ctx *c)
{
    for (int k = 0; k < c->njoints; k++) {
        urdf_joint *j = &c->joints[k];
        set_owner(c, "joint", j->name);
        j->parent = link_index(c, j->parent_name);
        j->child = link_index(c, j->child_name);
        if (j->parent < 0)
            return mbsi_xml_fail(&c->x, j->node, MBS_ERR_MODEL, "unknown link '%s' in <parent>", (const char *)j->parent_name);
        if (j->child < 0)
            return mbsi_xml_fail(&c->x, j->node, MBS_ERR_MODEL, "unknown link '%s' in <child>", (const char *)j->child_name);
        urdf_link *l = &c->links[j->child];
        if (l->parent_joint >= 0)
            return mbsi_xml_fail(&c->x, j->node, MBS_ERR_MODEL, "link '%s' has two parent joints ('%s' and '%s')",
                        (const char *)l->name, (const char *)c->joints[l->parent_joint].name, (const char *)j->name);
        l->parent_joint = k;
        insert_child(c, j->parent, k);
    }
    return 0;
}

static int parent_link(const urdf_ctx *c, int l)
{
    int j = c->links[l].parent_joint;
    return j < 0 ? -1 : c->joints[j].parent;
}

/* Every link has at most one parent, so walking up from any link either reaches a root or
 * loops. state: 0 unseen, 1 on the current walk, 2 known to reach a root. */
static int check_cycles(urdf_ctx *c)
{
    char *state = calloc((size_t)c->nlinks + 1, 1);
    if (!state) return mbsi_xml_fail(&c->x, NULL, MBS_ERR_NOMEM, "out of memory");
    int status = 0;
    for (int l = 0; l < c->nlinks && status == 0; l++) {
        int x = l;
        while (x != -1 && state[x] == 0) {
            state[x] = 1;
            x = parent_link(c, x);
        }
        if (x != -1 && state[x] == 1) {
            const urdf_joint *j = &c->joints[c->links[x].parent_joint];
            set_owner(c, "joint", j->name);
            status = mbsi_xml_fail(&c->x, j->node, MBS_ERR_MODEL, "the joints form a cycle through link '%s'",
                          (const char *)c->links[x].name);
        }
        for (int y = l; y != -1 && state[y] == 1; y = parent_link(c, y)) state[y] = 2;
    }
    free(state);
    return status;
}

/* The single link that is nobody's child, or -1 with the error filled. */
static int find_root(urdf_ctx *c, const xmlNode *robot)
{
    int root = -1;
    for (int l = 0; l < c->nlinks; l++) {
        if (c->links[l].parent_joint >= 0) continue;
        if (root >= 0) {
            set_owner(c, "link", c->links[l].name);
            return mbsi_xml_fail(&c->x, c->links[l].node, MBS_ERR_MODEL, "two root links '%s' and '%s' (links that are no joint's child)",
                        (const char *)c->links[root].name, (const char *)c->links[l].name);
        }
        root = l;
    }
    if (root < 0) {
        set_owner(c, "robot", c->robot_name);
        return mbsi_xml_fail(&c->x, robot, MBS_ERR_MODEL, "no root link (the robot has no <link>)");
    }
    return root;
}

/* ---- building the model ---- */

/* Adds link l's inertia to the body it ended on, expressed in that body's frame. */
static int add_link_inertia(urdf_ctx *c, const urdf_link *l)
{
    if (!l->has_inertia) return 0;
    double com[3], Ic[9];
    m3_mulv(l->R, l->com, com);
    for (int k = 0; k < 3; k++) com[k] += l->p[k];
    mbsi_rotate_inertia(l->R, l->Ic, Ic);
    if (mbs_model_add_inertia(c->m, l->body, l->mass, com, Ic, c->x.err) != MBS_OK) return mbsi_xml_builder_failed(&c->x, l->node);
    return 0;
}

/* The colour of a <visual>'s <material>: its own <color rgba>, else the robot-level material of
 * the same name; alpha 0 (none) when neither gives one. */
static int read_visual_color(urdf_ctx *c, const xmlNode *material, double rgba[4])
{
    memset(rgba, 0, 4 * sizeof(double));
    if (!material) return 0;
    const xmlNode *color = mbsi_xml_child(material, "color");
    if (!color) {
        xmlChar *name = xmlGetProp(material, BAD_CAST "name");
        const xmlNode *robot = xmlDocGetRootElement(c->doc);
        for (const xmlNode *k = robot->children; name && k && !color; k = k->next) {
            if (!mbsi_xml_is(k, "material")) continue;
            xmlChar *kn = xmlGetProp(k, BAD_CAST "name");
            if (kn && xmlStrEqual(kn, name)) color = mbsi_xml_child(k, "color");
            xmlFree(kn);
        }
        xmlFree(name);
    }
    return color ? mbsi_xml_numbers(&c->x, color, "rgba", 4, rgba, 1) : 0;
}

/* The <geometry> and <origin> of a <visual> or <collision> n of link l: box, cylinder, sphere, mesh
 * (the file name into mesh, n_mesh bytes), with its placement (R, p) in the body the link ended up on.
 * 1 for a shape, 0 when there is none this reads (skipped), -1 with the error filled. */
static int read_geometry(urdf_ctx *c, const urdf_link *l, const xmlNode *n, mbs_shape_type *type, double size[3],
                         char *mesh, size_t n_mesh, double R[9], double p[3])
{
    const xmlNode *geometry = mbsi_xml_child(n, "geometry");
    const xmlNode *g = NULL;
    for (const xmlNode *k = geometry ? geometry->children : NULL; k && !g; k = k->next)
        if (k->type == XML_ELEMENT_NODE) g = k;
    if (!g) return 0;
    memset(size, 0, 3 * sizeof(double));
    mesh[0] = '\0';
    int rc;
    if (mbsi_xml_is(g, "box")) {
        *type = MBS_SHAPE_BOX;
        rc = mbsi_xml_numbers(&c->x, g, "size", 3, size, 1);
    } else if (mbsi_xml_is(g, "cylinder")) {
        *type = MBS_SHAPE_CYLINDER;
        rc = mbsi_xml_numbers(&c->x, g, "radius", 1, size, 1) < 0 ? -1 : mbsi_xml_numbers(&c->x, g, "length", 1, size + 1, 1);
    } else if (mbsi_xml_is(g, "sphere")) {
        *type = MBS_SHAPE_SPHERE;
        rc = mbsi_xml_numbers(&c->x, g, "radius", 1, size, 1);
    } else if (mbsi_xml_is(g, "mesh")) {
        *type = MBS_SHAPE_MESH;
        size[0] = size[1] = size[2] = 1;
        rc = mbsi_xml_numbers(&c->x, g, "scale", 3, size, 0);
        xmlChar *file = xmlGetProp(g, BAD_CAST "filename");
        if (file) snprintf(mesh, n_mesh, "%s", (const char *)file);
        xmlFree(file);
    } else {
        return 0;
    }
    double Ro[9], po[3];
    if (rc < 0 || read_origin(c, n, Ro, po) < 0) return -1;
    se3_compose(l->R, l->p, Ro, po, R, p);
    return 1;
}

/* One <visual> (with its colour) or, with collision, one <collision> (with the link's name and its
 * own): its geometry (read_geometry), added to the model. */
static int add_shape(urdf_ctx *c, const urdf_link *l, const xmlNode *n, int collision)
{
    mbs_visual v;
    mbs_collision k;
    memset(&v, 0, sizeof v);
    memset(&k, 0, sizeof k);
    v.body = k.body = l->body;
    int rc = collision ? read_geometry(c, l, n, &k.type, k.size, k.mesh, sizeof k.mesh, k.R, k.p)
                       : read_geometry(c, l, n, &v.type, v.size, v.mesh, sizeof v.mesh, v.R, v.p);
    if (rc <= 0) return rc;
    if (collision) {
        snprintf(k.link, sizeof k.link, "%s", (const char *)l->name);
        xmlChar *name = xmlGetProp(n, BAD_CAST "name");
        if (name) snprintf(k.name, sizeof k.name, "%s", (const char *)name);
        xmlFree(name);
        rc = mbs_model_add_collision(c->m, &k, c->x.err);
    } else {
        if (read_visual_color(c, mbsi_xml_child(n, "material"), v.rgba) < 0) return -1;
        rc = mbs_model_add_visual(c->m, &v, c->x.err);
    }
    if (rc != MBS_OK) return mbsi_xml_builder_failed(&c->x, n);
    return 0;
}

/* A link's inertia, visual and collision shapes, in the body it ended up on. */
static int add_link(urdf_ctx *c, const urdf_link *l)
{
    if (add_link_inertia(c, l) < 0) return -1;
    for (const xmlNode *k = l->node->children; k; k = k->next) {
        int collision = mbsi_xml_is(k, "collision");
        if ((collision || mbsi_xml_is(k, "visual")) && add_shape(c, l, k, collision) < 0) return -1;
    }
    return 0;
}

static int add_frame(urdf_ctx *c, const xmlChar *name, int body, const double R[9], const double p[3],
                     mbs_frame_type type, const xmlNode *n)
{
    if (mbs_model_add_frame(c->m, (const char *)name, body, R, p, type, c->x.err) < 0) return mbsi_xml_builder_failed(&c->x, n);
    return 0;
}

/* The root link: on a free-flyer or planar "root_joint" (floating base) or on the world. */
static int attach_root(urdf_ctx *c, int root)
{
    urdf_link *l = &c->links[root];
    m3_identity(l->R);
    memset(l->p, 0, sizeof l->p);
    l->body = -1;
    set_owner(c, "link", l->name);
    if (c->opt->floating_base) {
        if (xmlHashLookup(c->joint_ids, BAD_CAST "root_joint"))
            return mbsi_xml_fail(&c->x, l->node, MBS_ERR_MODEL, "a joint is already named 'root_joint', the floating base's name");
        static const double normal_y[3] = {0, 1, 0};
        int planar = c->opt->floating_base == MBS_ROOT_PLANAR;
        l->body = mbs_model_add_joint(c->m, -1, planar ? MBS_JOINT_PLANAR : MBS_JOINT_FREEFLYER, "root_joint", NULL, NULL,
                                      planar ? normal_y : NULL, c->x.err);
        if (l->body < 0) return mbsi_xml_builder_failed(&c->x, l->node);
        if (mbs_model_set_body_name(c->m, l->body, (const char *)l->name) != MBS_OK)
            return mbsi_xml_fail(&c->x, l->node, MBS_ERR_NOMEM, "out of memory");
        if (add_frame(c, BAD_CAST "root_joint", l->body, NULL, NULL, MBS_FRAME_JOINT, l->node) < 0) return -1;
    }
    mbs_frame_type type = c->opt->floating_base ? MBS_FRAME_BODY : MBS_FRAME_FIXED_LINK;
    if (add_frame(c, l->name, l->body, NULL, NULL, type, l->node) < 0) return -1;
    return add_link(c, l);
}

/* A moving joint: a new body under the parent link's body. */
static int attach_moving(urdf_ctx *c, const urdf_joint *j, urdf_link *l, int parent_body, const double R[9],
                         const double p[3])
{
    l->body = mbs_model_add_joint(c->m, parent_body, j->type, (const char *)j->name, R, p, j->axis, c->x.err);
    if (l->body < 0) return mbsi_xml_builder_failed(&c->x, j->node);
    if (mbs_model_set_body_name(c->m, l->body, (const char *)l->name) != MBS_OK)
        return mbsi_xml_fail(&c->x, j->node, MBS_ERR_NOMEM, "out of memory");
    double lower[7], upper[7], vel[6], eff[6], damp[6], fric[6];
    for (int k = 0; k < 7; k++) { lower[k] = j->lower; upper[k] = j->upper; }
    for (int k = 0; k < 6; k++) { vel[k] = j->velocity; eff[k] = j->effort; damp[k] = j->damping; fric[k] = j->friction; }
    /* Multi-coordinate joints (planar, floating) keep unbounded positions. */
    int one = j->type == MBS_JOINT_REVOLUTE || j->type == MBS_JOINT_PRISMATIC;
    mbs_model_set_limits(c->m, l->body, one ? lower : NULL, one ? upper : NULL, vel, eff, damp, fric);
    m3_identity(l->R);
    memset(l->p, 0, sizeof l->p);
    if (add_frame(c, j->name, l->body, NULL, NULL, MBS_FRAME_JOINT, j->node) < 0) return -1;
    return add_frame(c, l->name, l->body, NULL, NULL, MBS_FRAME_BODY, l->node);
}

/* Joint k and its child link, the parent link being placed already. */
static int attach_joint(urdf_ctx *c, int k)
{
    const urdf_joint *j = &c->joints[k];
    const urdf_link *pl = &c->links[j->parent];
    urdf_link *l = &c->links[j->child];
    double R[9], p[3];
    /* The joint frame in the parent body = the parent link's placement ∘ the joint origin. */
    se3_compose(pl->R, pl->p, j->R, j->p, R, p);
    set_owner(c, "joint", j->name);
    if (j->kind != URDF_FIXED) {
        if (attach_moving(c, j, l, pl->body, R, p) < 0) return -1;
    } else {
        l->body = pl->body;
        memcpy(l->R, R, sizeof l->R);
        memcpy(l->p, p, sizeof l->p);
        if (add_frame(c, j->name, l->body, R, p, MBS_FRAME_FIXED_JOINT, j->node) < 0 ||
            add_frame(c, l->name, l->body, R, p, MBS_FRAME_FIXED_LINK, l->node) < 0)
            return -1;
    }
    set_owner(c, "link", l->name);
    return add_link(c, l);
}

/* Depth-first, parents before children as the builder requires; iterative (climbing back
 * through parent joints) so that a very deep chain cannot overflow the stack. */
static int attach_tree(urdf_ctx *c, int root)
{
    int k = c->links[root].first_child;
    while (k != -1) {
        if (attach_joint(c, k) < 0) return -1;
        int below = c->links[c->joints[k].child].first_child;
        if (below != -1) {
            k = below;
            continue;
        }
        while (k != -1 && c->joints[k].next_sibling == -1) k = c->links[c->joints[k].parent].parent_joint;
        if (k != -1) k = c->joints[k].next_sibling;
    }
    return 0;
}

/* Tolerance of the inertia checks, relative to the inertia scale S of the link (below).
 * A link's inertia is physically possible when its principal moments are >= 0 (positive
 * semi-definite) and each is at most the sum of the two others (the triangle inequality; a
 * point mass or a thin rod sits on the boundary). Files written by CAD exporters and xacro land
 * on that boundary with round-off on either side: a point mass whose rotated zero inertia keeps
 * ixz = 2.4e-35 (iCub's head, 1.3 kg), placeholder links of 1e-6 kg with a 1e-8 kg m² tensor
 * (TIAGo's antennas), zeros printed as 1e-19. A defect is what the inertia misses of being
 * possible (-λmin, or λmax - λmid - λmin); it is judged against
 *   S = max(trace of the link's inertia about its own frame origin,
 *           trace of the inertia about the body origin of the rigid body the link is merged into),
 * the second being the inertia the dynamics actually use: a link's defect can only matter
 * through the body that carries it. URDF numbers are decimal strings of about six significant
 * digits (%g), so a body's inertia is known to about 1e-6 of its scale; a defect below that is
 * within the precision of the file's own numbers, i.e. round-off at that scale, and is accepted
 * silently. Larger defects are real: a negative moment is an error (no dynamics for it), a
 * broken triangle inequality a warning, or an error in strict mode. On 21 published robot
 * descriptions (example-robot-data's, iCub's, TIAGo's ...; tests/test_urdf.c loads them when the
 * project's reference folder is present) the accepted defects are below 1.5e-7 of S (most near
 * 1e-16) and the reported ones above 1e-6 of S. */
#define INERTIA_RTOL 1e-6

/* Trace of the inertia about the frame origin of a mass m with centre c and inertia Ic about it. */
static double trace_about_origin(double m, const double c[3], const double Ic[9])
{
    return Ic[0] + Ic[4] + Ic[8] + 2 * m * (c[0] * c[0] + c[1] * c[1] + c[2] * c[2]);
}

/* Checks every link's inertia against the tolerance above, once every link is merged. */
static int check_inertias(urdf_ctx *c)
{
    for (int i = 0; i < c->nlinks; i++) {
        const urdf_link *l = &c->links[i];
        if (!l->inertia_node) continue;
        const double *ev = l->ev;
        if (l->mass == 0 && (ev[0] != 0 || ev[1] != 0 || ev[2] != 0))   /* rotational inertia is carried by mass */
            mbsi_warn(c->x.err, "%s:%ld: link '%s': mass 0 with a non-zero inertia (principal moments %g %g %g)", c->x.file,
                      xmlGetLineNo(l->inertia_node), (const char *)l->name, ev[0], ev[1], ev[2]);
        double not_psd = -ev[0], triangle = ev[2] - ev[0] - ev[1];
        if (!(not_psd > 0) && !(triangle > 0)) continue;
        double S = fabs(ev[0] + ev[1] + ev[2]) + 2 * l->mass * (l->com[0] * l->com[0] + l->com[1] * l->com[1] +
                                                                l->com[2] * l->com[2]);
        if (l->body >= 0) {
            double bm, bc[3], bI[9];
            mbs_body_inertia(c->m, l->body, &bm, bc, bI);
            double Sb = trace_about_origin(bm, bc, bI);
            if (Sb > S) S = Sb;
        }
        double tol = INERTIA_RTOL * S;
        set_owner(c, "link", l->name);
        if (l->body < 0) {   /* welded to the world through fixed joints: its inertia never enters the dynamics */
            if (not_psd > tol || triangle > tol)
                mbsi_warn(c->x.err, "%s:%ld: link '%s': inertia is not physically possible (principal moments %g %g %g); "
                          "ignored, the link is welded to the world", c->x.file, xmlGetLineNo(l->inertia_node), c->x.owner,
                          ev[0], ev[1], ev[2]);
            continue;
        }
        if (not_psd > tol)
            return mbsi_xml_fail(&c->x, l->inertia_node, MBS_ERR_MODEL,
                        "inertia is not positive semi-definite (principal moments %g %g %g)", ev[0], ev[1], ev[2]);
        if (triangle > tol) {
            if (c->opt->strict)
                return mbsi_xml_fail(&c->x, l->inertia_node, MBS_ERR_MODEL,
                            "inertia violates the triangle inequality by %g (principal moments %g %g %g)", triangle, ev[0],
                            ev[1], ev[2]);
            mbsi_warn(c->x.err,
                      "%s:%ld: link '%s': inertia violates the triangle inequality by %g (principal moments %g %g %g)",
                      c->x.file, xmlGetLineNo(l->inertia_node), c->x.owner, triangle, ev[0], ev[1], ev[2]);
        }
    }
    return 0;
}

/* The options' bounds (MuJoCo's compiler boundmass / boundinertia): every moving body gets at
 * least bound_mass (added at its centre of mass, at its origin when it has none) and principal
 * moments about its centre of mass of at least bound_inertia (an isotropic bound_inertia − λmin
 * added, which keeps the triangle inequality of a possible inertia). */
static int apply_bounds(urdf_ctx *c)
{
    double bm = c->opt->bound_mass, bi = c->opt->bound_inertia;
    if (!(bm > 0) && !(bi > 0)) return 0;
    if (!isfinite(bm) || !isfinite(bi)) {
        mbsi_fail(c->x.err, MBS_ERR_ARG, "%s: the bounds on mass %g and inertia %g must be finite", c->x.file, bm, bi);
        return -1;
    }
    for (int b = 0; b < mbs_model_nbodies(c->m); b++) {
        double mass, com[3], Ic[9], ev[3];
        mbs_body_inertia(c->m, b, &mass, com, Ic);
        if (mass < bm && mbs_model_add_inertia(c->m, b, bm - mass, com, NULL, c->x.err) != MBS_OK) return mbsi_xml_builder_failed(&c->x, NULL);
        mbsi_sym3_eigenvalues(Ic, ev);
        if (ev[0] < bi) {
            double d = bi - ev[0], D[9] = {d, 0, 0, 0, d, 0, 0, 0, d};
            if (mbs_model_add_inertia(c->m, b, 0, com, D, c->x.err) != MBS_OK) return mbsi_xml_builder_failed(&c->x, NULL);
        }
    }
    return 0;
}

/* A moving body whose whole subtree has no mass makes the mass matrix singular. It loads, with
 * a warning at the joint that moves the top of each such subtree (the dynamics then need the
 * bounds of mbs_urdf_options, or fail: mbs_ltdl returns an error on the zero pivot).
 * Returns the number of such subtrees. */
static int warn_massless(urdf_ctx *c, int root)
{
    int nb = mbs_model_nbodies(c->m), found = 0;
    double *sub = calloc((size_t)nb + 1, sizeof *sub);
    if (!sub) return mbsi_xml_fail(&c->x, NULL, MBS_ERR_NOMEM, "out of memory");
    for (int b = nb - 1; b >= 0; b--) {   /* parents have smaller indices than their children */
        double mass;
        mbs_body_inertia(c->m, b, &mass, NULL, NULL);
        sub[b] += mass;
        if (mbs_joint_parent(c->m, b) >= 0) sub[mbs_joint_parent(c->m, b)] += sub[b];
    }
    for (int i = 0; i < c->nlinks; i++) {
        const urdf_link *l = &c->links[i];
        int moving = l->parent_joint >= 0 ? c->joints[l->parent_joint].kind != URDF_FIXED : i == root && l->body >= 0;
        if (!moving || sub[l->body] > 0) continue;
        int parent = mbs_joint_parent(c->m, l->body);
        if (parent >= 0 && !(sub[parent] > 0)) continue;   /* reported at the top of the subtree */
        const xmlNode *n = l->parent_joint >= 0 ? c->joints[l->parent_joint].node : l->node;
        mbsi_warn(c->x.err, "%s:%ld: link '%s': joint '%s' moves a massless subtree, so the mass matrix is singular "
                  "(the loader options bound_mass and bound_inertia give such bodies a minimal inertia)",
                  c->x.file, xmlGetLineNo(n), (const char *)l->name, mbs_joint_name(c->m, l->body));
        found++;
    }
    free(sub);
    return found;
}

static int build_model(urdf_ctx *c, int root)
{
    c->m = mbs_model_new(c->robot_name ? (const char *)c->robot_name : NULL);
    if (!c->m) return mbsi_xml_fail(&c->x, NULL, MBS_ERR_NOMEM, "out of memory");
    if (attach_root(c, root) < 0 || attach_tree(c, root) < 0 || check_inertias(c) < 0 || apply_bounds(c) < 0)
        return -1;
    int massless = warn_massless(c, root);
    if (massless < 0) return -1;
    /* finalize's warnings are passed on unless they can only repeat the massless subtrees reported
     * above with file and line */
    if (mbsi_xml_finalize(&c->x, c->m, !massless) < 0) return -1;
    return 0;
}

/* ---- the document ---- */

static int count_elements(const xmlNode *robot, const char *name)
{
    int n = 0;
    for (const xmlNode *k = robot->children; k; k = k->next) n += mbsi_xml_is(k, name);
    return n;
}

/* Reads every <link>, then every <joint>; anything else (transmission, gazebo ...) is ignored;
 * a link's <visual> and <collision> shapes are read when the link is placed (add_link). */
static int read_robot(urdf_ctx *c, const xmlNode *robot)
{
    c->nlinks = count_elements(robot, "link");
    c->njoints = count_elements(robot, "joint");
    c->links = calloc((size_t)c->nlinks + 1, sizeof *c->links);
    c->joints = calloc((size_t)c->njoints + 1, sizeof *c->joints);
    c->link_ids = xmlHashCreate(c->nlinks + 1);
    c->joint_ids = xmlHashCreate(c->njoints + 1);
    if (!c->links || !c->joints || !c->link_ids || !c->joint_ids) return mbsi_xml_fail(&c->x, robot, MBS_ERR_NOMEM, "out of memory");
    int nl = 0, nj = 0;
    for (const xmlNode *k = robot->children; k; k = k->next)
        if (mbsi_xml_is(k, "link") && read_link(c, k, nl++) < 0) return -1;
    for (const xmlNode *k = robot->children; k; k = k->next)
        if (mbsi_xml_is(k, "joint") && read_joint(c, k, nj++) < 0) return -1;
    return 0;
}

static int load(urdf_ctx *c, const char *buf, int len)
{
    if (!(c->doc = mbsi_xml_parse(buf, len, c->x.file, c->x.err))) return -1;
    const xmlNode *robot = xmlDocGetRootElement(c->doc);
    set_owner(c, "robot", NULL);
    if (!robot || !mbsi_xml_is(robot, "robot"))
        return mbsi_xml_fail(&c->x, robot, MBS_ERR_MODEL, "no <robot> root element (found <%s>)",
                    robot ? (const char *)robot->name : "nothing");
    c->robot_name = xmlGetProp(robot, BAD_CAST "name");
    set_owner(c, "robot", c->robot_name);
    if (read_robot(c, robot) < 0 || connect_joints(c) < 0 || check_cycles(c) < 0) return -1;
    int root = find_root(c, robot);
    if (root < 0) return -1;
    return build_model(c, root);
}

static void free_ctx(urdf_ctx *c)
{
    for (int i = 0; c->links && i < c->nlinks; i++) xmlFree(c->links[i].name);
    for (int i = 0; c->joints && i < c->njoints; i++) {
        xmlFree(c->joints[i].name);
        xmlFree(c->joints[i].parent_name);
        xmlFree(c->joints[i].child_name);
    }
    free(c->links);
    free(c->joints);
    if (c->link_ids) xmlHashFree(c->link_ids, NULL);
    if (c->joint_ids) xmlHashFree(c->joint_ids, NULL);
    xmlFree(c->robot_name);
    if (c->doc) xmlFreeDoc(c->doc);
}

/* The loader's body (mbsi_xml_load runs it in the C locale). */
static mbs_model *load_urdf(const void *opt, const char *buf, int len, const char *file, mbs_error *err)
{
    static const mbs_urdf_options defaults = {.floating_base = 1};   /* NULL options: a free-flyer root, lenient inertias */
    urdf_ctx c;
    memset(&c, 0, sizeof c);
    c.x.file = file;
    c.opt = opt ? opt : &defaults;
    c.x.err = err;
    if (load(&c, buf, len) < 0) {
        mbs_model_free(c.m);
        c.m = NULL;
    }
    free_ctx(&c);
    return c.m;
}

mbs_model *mbs_model_from_urdf(const char *path, const mbs_urdf_options *opt, mbs_error *err)
{
    return mbsi_xml_load(1, path, NULL, "mbs_model_from_urdf", "a URDF file", load_urdf, opt, err);
}

mbs_model *mbs_model_from_urdf_string(const char *xml, const char *name, const mbs_urdf_options *opt,
                                      mbs_error *err)
{
    return mbsi_xml_load(0, xml, name, "mbs_model_from_urdf_string", "a URDF file", load_urdf, opt, err);
}
