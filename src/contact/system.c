/* system.c — a model with its data, environment, contact points and state. */
#include <stdio.h>
#include <stdlib.h>

#include "../model/model_internal.h"
#include "mbs/dynamics.h"
#include "mbs/liegroup.h"
#include "../base/base.h"
#include "../spatial/spatial.h"
#include "contact_internal.h"

static void layout(mbs_carver *c, mbs_system *s, int max_contacts)
{
    s->contacts = mbsi_carve(c, (size_t)(max_contacts ? max_contacts : 1) * sizeof(mbs_contact));
    s->q = mbsi_carve_doubles(c, (size_t)s->nq + 1);
    s->v = mbsi_carve_doubles(c, (size_t)s->nv + 1);
    s->tau = mbsi_carve_doubles(c, (size_t)s->nv + 1);
    s->fext = mbsi_carve_doubles(c, 6 * (size_t)s->nbodies + 1);
    s->imp_kp = mbsi_carve_doubles(c, (size_t)s->nv + 1);
    s->imp_kd = mbsi_carve_doubles(c, (size_t)s->nv + 1);
    s->imp_qref = mbsi_carve_doubles(c, (size_t)s->nq + 1);
    s->imp_vref = mbsi_carve_doubles(c, (size_t)s->nv + 1);
    s->imp_tmp = mbsi_carve_doubles(c, (size_t)s->nv + 1);
    s->damp = mbsi_carve_doubles(c, (size_t)s->nv + 1);
}

mbs_system *mbs_system_new(const mbs_model *m, int max_contacts, mbs_error *err)
{
    if (!m) { mbsi_fail(err, MBS_ERR_ARG, "mbs_system_new: no model (NULL)"); return NULL; }
    if (max_contacts < 0) { mbsi_fail(err, MBS_ERR_ARG, "mbs_system_new: max_contacts %d < 0", max_contacts); return NULL; }
    /* whole cache lines of its own (the carver's block): threads stepping other systems never
     * share a line with the fields a step writes (mbs_batch) */
    mbs_carver sc = {NULL, 0};
    mbsi_carve(&sc, sizeof(mbs_system));
    mbs_system *s = mbsi_carver_alloc(&sc);
    if (!s) { mbsi_fail(err, MBS_ERR_NOMEM, "out of memory"); return NULL; }
    s->model = m;
    s->nq = m->nq;
    s->nv = m->nv;
    s->nbodies = m->nbodies;
    s->data = mbs_data_new(m);
    mbs_carver c = {NULL, 0};
    layout(&c, s, max_contacts);
    s->block = mbsi_carver_alloc(&c);
    if (!s->data || !s->block) {
        mbs_system_free(s);
        mbsi_fail(err, MBS_ERR_NOMEM, "out of memory");
        return NULL;
    }
    layout(&c, s, max_contacts);
    s->ncontacts = 0;
    s->max_contacts = max_contacts;
    mbs_neutral(m, s->q);
    return s;
}

mbs_system *mbs_system_clone(const mbs_system *s, mbs_error *err)
{
    if (!s) { mbsi_fail(err, MBS_ERR_ARG, "mbs_system_clone: no system (NULL)"); return NULL; }
    mbs_system *c = mbs_system_new(s->model, s->max_contacts, err);
    if (!c) return NULL;
    c->env = s->env;
    /* the heightfields' grids: the clone's own copies */
    for (int i = 0; i < s->env.nheightfields; i++) {
        const mbs_heightfield *f = &s->env.heightfields[i];
        size_t n = (size_t)f->nx * (size_t)f->ny;
        c->heights[i] = malloc(n * sizeof(double));
        if (!c->heights[i]) { mbs_system_free(c); mbsi_fail(err, MBS_ERR_NOMEM, "out of memory"); return NULL; }
        memcpy(c->heights[i], f->h, n * sizeof(double));
        c->env.heightfields[i].h = c->heights[i];
    }
    c->ncontacts = s->ncontacts;
    c->nfeet = s->nfeet;
    memcpy(c->contacts, s->contacts, sizeof(mbs_contact) * (size_t)s->ncontacts);
    c->finalized = s->finalized;
    c->damp_on = s->damp_on;
    memcpy(c->damp, s->damp, (size_t)s->nv * sizeof(double));
    mbs_system_copy_state(c, s);
    return c;
}

int mbs_system_copy_state(mbs_system *dst, const mbs_system *src)
{
    if (!dst || !src || dst->model != src->model || dst->ncontacts != src->ncontacts) return MBS_ERR_ARG;
    size_t nq = (size_t)src->nq, nv = (size_t)src->nv;
    dst->t = src->t;
    dst->clock_t0 = src->clock_t0;
    dst->clock_dt = src->clock_dt;
    dst->clock_k = src->clock_k;
    memcpy(dst->q, src->q, nq * sizeof(double));
    memcpy(dst->v, src->v, nv * sizeof(double));
    memcpy(dst->tau, src->tau, nv * sizeof(double));
    memcpy(dst->fext, src->fext, 6 * (size_t)src->nbodies * sizeof(double));
    /* every contact's state: the fields from `active` on */
    const size_t from = offsetof(mbs_contact, active);
    for (int i = 0; i < src->ncontacts; i++)
        memcpy((char *)&dst->contacts[i] + from, (const char *)&src->contacts[i] + from, sizeof(mbs_contact) - from);
    dst->resets = src->resets;
    dst->imp_on = src->imp_on;
    memcpy(dst->imp_kp, src->imp_kp, nv * sizeof(double));
    memcpy(dst->imp_kd, src->imp_kd, nv * sizeof(double));
    memcpy(dst->imp_qref, src->imp_qref, nq * sizeof(double));
    memcpy(dst->imp_vref, src->imp_vref, nv * sizeof(double));
    return MBS_OK;
}

void mbs_system_free(mbs_system *s)
{
    if (!s) return;
    mbs_data_free(s->data);
    for (int i = 0; i < MBS_MAX_HEIGHTFIELDS; i++) free(s->heights[i]);
    free(s->block);
    free(s);
}

const mbs_model *mbs_system_model(const mbs_system *s) { return s ? s->model : NULL; }
double mbs_system_time(const mbs_system *s) { return s ? s->t : NAN; }
const double *mbs_system_q(const mbs_system *s) { return s->q; }
const double *mbs_system_v(const mbs_system *s) { return s->v; }
const double *mbs_system_tau(const mbs_system *s) { return s->tau; }
int mbs_system_ncontacts(const mbs_system *s) { return s ? s->ncontacts : 0; }

void mbs_system_set_impedance(mbs_system *s, const double *kp, const double *kd, const double *q_ref,
                              const double *v_ref)
{
    const mbs_model *m = s->model;
    memset(s->imp_kp, 0, (size_t)s->nv * sizeof(double));
    memcpy(s->imp_kd, s->damp, (size_t)s->nv * sizeof(double));   /* the passive damping stays */
    memset(s->imp_vref, 0, (size_t)s->nv * sizeof(double));
    int on = kp != NULL && kd != NULL && q_ref != NULL;
    s->imp_on = on || s->damp_on;
    if (!on) {
        memcpy(s->imp_qref, s->q, (size_t)s->nq * sizeof(double));   /* kp = 0: any finite reference */
        return;
    }
    memcpy(s->imp_qref, q_ref, (size_t)s->nq * sizeof(double));
    if (v_ref) memcpy(s->imp_vref, v_ref, (size_t)s->nv * sizeof(double));
    for (int b = 0; b < m->nbodies; b++) {
        const mbs_body *bd = &m->bodies[b];
        if (bd->nv != 1 || bd->nq != 1) continue;   /* one-coordinate joints only */
        s->imp_kp[bd->idx_v] = kp[bd->idx_v];
        s->imp_kd[bd->idx_v] += kd[bd->idx_v];
    }
}

void mbs_system_set_joint_damping(mbs_system *s, const double *damping)
{
    const mbs_model *m = s->model;
    for (int k = 0; k < s->nv; k++) s->imp_kd[k] -= s->damp[k];
    memset(s->damp, 0, (size_t)s->nv * sizeof(double));
    s->damp_on = 0;
    (void)m;
    for (int k = 0; damping && k < s->nv; k++) {   /* every coordinate: a ball joint's too, as MuJoCo */
        s->damp[k] = damping[k];
        if (damping[k] != 0) s->damp_on = 1;
    }
    for (int k = 0; k < s->nv; k++) s->imp_kd[k] += s->damp[k];
    int controller = 0;   /* an impedance of the controller's, kept */
    for (int k = 0; k < s->nv; k++) controller |= s->imp_kp[k] != 0 || s->imp_kd[k] != s->damp[k];
    if (!s->imp_on && s->damp_on) memcpy(s->imp_qref, s->q, (size_t)s->nq * sizeof(double));
    s->imp_on = controller || s->damp_on;
}

void mbsi_system_impedance_torque(const mbs_system *s, const double *q, const double *v, double *tau)
{
    const mbs_model *m = s->model;
    for (int b = 0; b < m->nbodies; b++) {
        const mbs_body *bd = &m->bodies[b];
        int iq = bd->idx_q, iv = bd->idx_v;
        if (bd->nv != 1 || bd->nq != 1) {
            /* no position servo on a joint of several coordinates: its passive damping only */
            for (int k = 0; s->damp_on && k < bd->nv; k++) tau[iv + k] -= s->imp_kd[iv + k] * v[iv + k];
            continue;
        }
        tau[iv] += s->imp_kp[iv] * (s->imp_qref[iq] - q[iq]) + s->imp_kd[iv] * (s->imp_vref[iv] - v[iv]);
    }
}
const mbs_environment *mbs_system_environment(const mbs_system *s) { return &s->env; }

int mbs_system_set_material(mbs_system *s, int i, const mbs_material *mat, mbs_error *err)
{
    if (!s || !mat) return mbsi_fail(err, MBS_ERR_ARG, "mbs_system_set_material: no %s (NULL)", s ? "material" : "system");
    /* the scene's one copy of the material: every contact touching solid i reads it from there */
    mbs_material *to = (mbs_material *)mbsi_solid_material(&s->env, i);
    if (!to)
        return mbsi_fail(err, MBS_ERR_ARG, "mbs_system_set_material: no solid %d (the scene has %d)", i,
                         mbsi_environment_nsolids(&s->env));
    int rc = mbsi_material_check(mat, "mbs_system_set_material", err);
    if (rc != MBS_OK) return rc;
    *to = *mat;
    return MBS_OK;
}

void mbs_system_set_tau(mbs_system *s, const double *tau)
{
    memcpy(s->tau, tau, (size_t)s->nv * sizeof(double));
}

void mbs_system_set_state(mbs_system *s, const double *q, const double *v, double t)
{
    memcpy(s->q, q, (size_t)s->nq * sizeof(double));
    if (v) memcpy(s->v, v, (size_t)s->nv * sizeof(double));
    else memset(s->v, 0, (size_t)s->nv * sizeof(double));
    s->t = t;
    s->clock_t0 = t;
    s->clock_k = 0;
    s->clock_dt = 0;
    s->resets++;
    for (int i = 0; i < s->ncontacts; i++) mbsi_contact_release(&s->contacts[i]);
    mbs_contact_forces(s, s->q, s->v, 1);
}

int mbs_system_set_contact_off(mbs_system *s, int i, int off)
{
    if (!s || i < 0 || i >= s->ncontacts) return MBS_ERR_ARG;
    s->contacts[i].off = off != 0;
    return MBS_OK;
}

int mbs_system_contact(const mbs_system *s, int i, mbs_contact_info *out)
{
    if (!s || !out || i < 0 || i >= s->ncontacts) return MBS_ERR_ARG;
    const mbs_contact *c = &s->contacts[i];
    out->name = c->name;
    out->frame = c->frame;
    memcpy(out->offset, c->offset, sizeof out->offset);
    out->radius = c->radius;
    memcpy(out->axis, c->axis, sizeof out->axis);
    out->active = c->active;
    out->off = c->off;
    out->slipping = c->slipping;
    memcpy(out->position, c->p, sizeof out->position);
    memcpy(out->velocity, c->dp, sizeof out->velocity);
    memcpy(out->normal, c->normal, sizeof out->normal);
    out->depth = c->depth;
    memcpy(out->force, c->lambda, sizeof out->force);
    return MBS_OK;
}

int mbs_system_contact_label(const mbs_system *s, int i, char *buf, size_t n)
{
    if (!s || i < 0 || i >= s->ncontacts) return -1;
    /* the point's rank among those of the same name; none when its name is unique */
    int rank = 0, same = 0;
    for (int j = 0; j < s->ncontacts; j++)
        if (strcmp(s->contacts[j].name, s->contacts[i].name) == 0) {
            same++;
            if (j < i) rank++;
        }
    if (same > 1) return snprintf(buf, n, "%s_%d", s->contacts[i].name, rank);
    return snprintf(buf, n, "%s", s->contacts[i].name);
}

/* MBS_ERR_ARG naming the add call when s's scene is frozen: a stepper sized itself against it. */
static int frozen(const mbs_system *s, const char *call, mbs_error *err)
{
    if (!s->finalized) return MBS_OK;
    return mbsi_fail(err, MBS_ERR_ARG, "%s: the scene is finalized (mbs_system_finalize), so it can no longer change: "
                     "add every contact point, plane and box before finalizing it and creating steppers", call);
}

int mbs_system_finalize(mbs_system *s, mbs_error *err)
{
    if (!s) return mbsi_fail(err, MBS_ERR_ARG, "mbs_system_finalize: no system (NULL)");
    if (s->finalized) return MBS_OK;
    /* a contact reads its material from the solid it touches: with no solid it has none */
    if (s->ncontacts > 0 && mbsi_environment_nsolids(&s->env) == 0)
        return mbsi_fail(err, MBS_ERR_ARG, "mbs_system_finalize: contact '%s' has no material: the scene has no plane, "
                         "box or heightfield to touch (add one with mbs_system_add_plane, _box or _heightfield)",
                         s->contacts[0].name);
    s->finalized = 1;
    return MBS_OK;
}

int mbs_system_finalized(const mbs_system *s) { return s && s->finalized; }

/* Appends a sphere (radius 0: a point) on the named frame: a foot (link = 0), or a point of a link's
 * geometry (link = 1; boxes_only: a capsule's inner sphere, mbs_contact). `what` names the caller. */
static int add_point(mbs_system *s, const char *frame, const double offset[3], double radius, int link, int boxes_only,
                     const char *what, mbs_error *err)
{
    if (!s || !frame) {
        mbsi_fail(err, MBS_ERR_ARG, "%s: no %s (NULL)", what, s ? "frame name" : "system");
        return -1;
    }
    if (frozen(s, what, err) != MBS_OK) return -1;
    if (s->ncontacts >= s->max_contacts) {
        mbsi_fail(err, MBS_ERR_ARG, "contact '%s': more than the %d contacts the system was made for", frame,
                 s->max_contacts);
        return -1;
    }
    /* the feet come first: controllers take contacts 0 .. nfeet - 1 as their feet */
    if (!link && s->nfeet < s->ncontacts) {
        mbsi_fail(err, MBS_ERR_ARG, "contact '%s': add the feet (points, spheres, rims) before a link's capsules and "
                 "boxes", frame);
        return -1;
    }
    int f = mbs_frame_id(s->model, frame);
    if (f < 0) {
        mbsi_fail(err, MBS_ERR_ARG, "contact: frame '%s' is not in model '%s'", frame, mbs_model_name(s->model));
        return -1;
    }
    if (!(radius >= 0) || !isfinite(radius)) {
        mbsi_fail(err, MBS_ERR_ARG, "contact '%s': radius %g must be finite and >= 0", frame, radius);
        return -1;
    }
    if (offset && !(isfinite(offset[0]) && isfinite(offset[1]) && isfinite(offset[2]))) {
        mbsi_fail(err, MBS_ERR_ARG, "contact '%s': the offset must be finite", frame);
        return -1;
    }
    mbs_contact *c = &s->contacts[s->ncontacts];
    memset(c, 0, sizeof *c);
    snprintf(c->name, sizeof c->name, "%s", frame);
    c->frame = f;
    if (offset) memcpy(c->offset, offset, sizeof c->offset);
    c->radius = radius;
    c->link = link;
    c->boxes_only = boxes_only;
    c->normal[2] = 1;
    c->solid = -1;
    if (!link) s->nfeet++;
    return s->ncontacts++;
}

int mbs_system_add_contact(mbs_system *s, const char *frame, const double offset[3], double radius,
                           mbs_error *err)
{
    return add_point(s, frame, offset, radius, 0, 0, "mbs_system_add_contact", err);
}

int mbsi_system_add_link_point(mbs_system *s, const char *frame, const double offset[3], double radius, int boxes_only,
                               mbs_error *err)
{
    return add_point(s, frame, offset, radius, 1, boxes_only, "mbs_system_add_capsule", err);
}

/* The capsule's sphere count for radius r (0: not a capsule), and sphere i's centre among n. */
static int capsule_count(const double a[3], const double b[3], double radius)
{
    double d[3] = {b[0] - a[0], b[1] - a[1], b[2] - a[2]}, len = sqrt(v3_dot(d, d));
    if (!(radius > 0) || !isfinite(len) || !isfinite(radius)) return 0;
    /* spacing <= radius: between two neighbours the spheres' union dips at most (1 − √3/2) r,
     * 13 % of the radius, below the capsule's surface */
    double nf = ceil(len / radius) + 1;
    return nf > 1e6 ? 1000000 : nf < 2 ? 2 : (int)nf;
}

static void capsule_center(const double a[3], const double b[3], int i, int n, double c[3])
{
    for (int k = 0; k < 3; k++) c[k] = a[k] + (b[k] - a[k]) * i / (n - 1);
}

int mbs_capsule_spheres(const double a[3], const double b[3], double radius, double *centers, int max)
{
    int n = capsule_count(a, b, radius);
    for (int i = 0; i < n && i < max; i++) capsule_center(a, b, i, n, centers + 3 * i);
    return n;
}

int mbs_system_add_capsule(mbs_system *s, const char *frame, const double a[3], const double b[3], double radius,
                           mbs_error *err)
{
    if (!a || !b || !(radius > 0) || !isfinite(radius)) {
        mbsi_fail(err, MBS_ERR_ARG, "capsule on '%s': it needs both ends and a radius > 0 (got %g)",
                  frame ? frame : "(null)", radius);
        return -1;
    }
    int n = capsule_count(a, b, radius);
    if (n < 2) {
        mbsi_fail(err, MBS_ERR_ARG, "capsule on '%s': its ends must be finite", frame ? frame : "(null)");
        return -1;
    }
    if (s && s->ncontacts + n > s->max_contacts) {
        mbsi_fail(err, MBS_ERR_ARG, "capsule on '%s': its %d spheres do not fit in the %d contacts left of the system's %d",
                  frame ? frame : "(null)", n, s->max_contacts - s->ncontacts, s->max_contacts);
        return -1;
    }
    int first = -1;
    for (int i = 0; i < n; i++) {
        double c[3];
        capsule_center(a, b, i, n, c);
        int j = mbsi_system_add_link_point(s, frame, c, radius, i > 0 && i < n - 1, err);
        if (j < 0) return -1;
        if (i == 0) first = j;
    }
    return first;
}

void mbs_box_corners(const double center[3], const double R[9], const double half[3], double corners[24])
{
    for (int i = 0; i < 8; i++) {
        double l[3] = {(i & 1 ? 1 : -1) * half[0], (i & 2 ? 1 : -1) * half[1], (i & 4 ? 1 : -1) * half[2]}, w[3];
        if (R) m3_mulv(R, l, w);
        else memcpy(w, l, sizeof w);
        for (int k = 0; k < 3; k++) corners[3 * i + k] = center[k] + w[k];
    }
}

int mbs_system_add_link_box(mbs_system *s, const char *frame, const double center[3], const double R[9],
                            const double half[3], mbs_error *err)
{
    if (!center || !half || !(half[0] >= 0 && half[1] >= 0 && half[2] >= 0) ||
        !(isfinite(half[0]) && isfinite(half[1]) && isfinite(half[2]))) {
        mbsi_fail(err, MBS_ERR_ARG, "box on '%s': it needs a centre and finite half sizes >= 0", frame ? frame : "(null)");
        return -1;
    }
    if (s && s->ncontacts + 8 > s->max_contacts) {
        mbsi_fail(err, MBS_ERR_ARG, "box on '%s': its 8 corners do not fit in the %d contacts left of the system's %d",
                  frame ? frame : "(null)", s->max_contacts - s->ncontacts, s->max_contacts);
        return -1;
    }
    double corners[24];
    mbs_box_corners(center, R, half, corners);
    int first = -1;
    for (int i = 0; i < 8; i++) {
        int j = mbsi_system_add_link_point(s, frame, corners + 3 * i, 0, 0, err);
        if (j < 0) return -1;
        if (i == 0) first = j;
    }
    return first;
}

int mbs_system_nfeet(const mbs_system *s) { return s ? s->nfeet : 0; }

int mbs_system_add_rim(mbs_system *s, const char *frame, const double center[3], const double axis[3], double radius,
                       mbs_error *err)
{
    if (s && frozen(s, "mbs_system_add_rim", err) != MBS_OK) return -1;
    double n = axis ? sqrt(v3_dot(axis, axis)) : 0;
    if (!(n > 0) || !isfinite(n)) {
        mbsi_fail(err, MBS_ERR_ARG, "rim contact '%s': the axis must be a finite non-zero vector", frame ? frame : "(null)");
        return -1;
    }
    if (!(radius > 0)) {
        mbsi_fail(err, MBS_ERR_ARG, "rim contact '%s': radius %g must be > 0", frame ? frame : "(null)", radius);
        return -1;
    }
    int i = mbs_system_add_contact(s, frame, center, radius, err);
    if (i < 0) return -1;
    for (int k = 0; k < 3; k++) s->contacts[i].axis[k] = axis[k] / n;
    return i;
}

int mbsi_material_check(const mbs_material *mt, const char *what, mbs_error *err)
{
    const double x[5] = {mt->k_normal, mt->k_tangent, mt->b_normal, mt->b_tangent, mt->mu};
    for (int k = 0; k < 5; k++)
        if (!(x[k] >= 0) || !isfinite(x[k]))
            return mbsi_fail(err, MBS_ERR_ARG, "%s: stiffness, damping and friction must be finite and >= 0", what);
    return MBS_OK;
}

int mbs_system_add_plane(mbs_system *s, const double normal[3], double offset, const mbs_material *mat,
                         mbs_error *err)
{
    if (!s || !normal || !mat)
        return mbsi_fail(err, MBS_ERR_ARG, "mbs_system_add_plane: no %s (NULL)", !s ? "system" : !normal ? "normal" : "material");
    if (frozen(s, "mbs_system_add_plane", err) != MBS_OK) return MBS_ERR_ARG;
    if (s->env.nplanes >= MBS_MAX_PLANES) return mbsi_fail(err, MBS_ERR_ARG, "more than %d planes", MBS_MAX_PLANES);
    double n = sqrt(v3_dot(normal, normal));
    if (!(n > 0) || !isfinite(n) || !isfinite(offset)) return mbsi_fail(err, MBS_ERR_ARG, "plane: bad normal or offset");
    if (mbsi_material_check(mat, "plane", err)) return err ? err->code : MBS_ERR_ARG;
    mbs_plane *p = &s->env.planes[s->env.nplanes++];
    for (int k = 0; k < 3; k++) p->normal[k] = normal[k] / n;
    p->offset = offset;
    p->material = *mat;
    return MBS_OK;
}

int mbs_system_add_box(mbs_system *s, const double center[3], const double R[9], const double half[3],
                       const mbs_material *mat, mbs_error *err)
{
    if (!s || !center || !half || !mat)
        return mbsi_fail(err, MBS_ERR_ARG, "mbs_system_add_box: no %s (NULL)",
                         !s ? "system" : !center ? "centre" : !half ? "half sizes" : "material");
    if (frozen(s, "mbs_system_add_box", err) != MBS_OK) return MBS_ERR_ARG;
    if (s->env.nboxes >= MBS_MAX_BOXES) return mbsi_fail(err, MBS_ERR_ARG, "more than %d boxes", MBS_MAX_BOXES);
    for (int k = 0; k < 3; k++)
        if (!(half[k] > 0) || !isfinite(half[k]) || !isfinite(center[k]))
            return mbsi_fail(err, MBS_ERR_ARG, "box: half sizes must be > 0 and the centre finite");
    if (mbsi_material_check(mat, "box", err)) return err ? err->code : MBS_ERR_ARG;
    mbs_box *b = &s->env.boxes[s->env.nboxes++];
    memcpy(b->center, center, sizeof b->center);
    if (R) memcpy(b->R, R, sizeof b->R); else m3_identity(b->R);
    memcpy(b->half, half, sizeof b->half);
    b->material = *mat;
    return MBS_OK;
}

int mbs_system_add_heightfield(mbs_system *s, const mbs_heightfield *f, mbs_error *err)
{
    if (!s || !f || !f->h)
        return mbsi_fail(err, MBS_ERR_ARG, "mbs_system_add_heightfield: no %s (NULL)", !s ? "system" : !f ? "heightfield" : "heights");
    if (frozen(s, "mbs_system_add_heightfield", err) != MBS_OK) return MBS_ERR_ARG;
    if (s->env.nheightfields >= MBS_MAX_HEIGHTFIELDS)
        return mbsi_fail(err, MBS_ERR_ARG, "more than %d heightfields", MBS_MAX_HEIGHTFIELDS);
    if (f->nx < 2 || f->ny < 2 || f->nx > 100000 || f->ny > 100000)
        return mbsi_fail(err, MBS_ERR_ARG, "heightfield: %d x %d points (2 to 100000 along each axis)", f->nx, f->ny);
    if (!(f->dx > 0) || !(f->dy > 0) || !isfinite(f->dx) || !isfinite(f->dy) || !isfinite(f->x0) || !isfinite(f->y0))
        return mbsi_fail(err, MBS_ERR_ARG, "heightfield: spacing %g x %g m must be > 0 and the origin finite", f->dx, f->dy);
    size_t n = (size_t)f->nx * (size_t)f->ny;
    for (size_t k = 0; k < n; k++)
        if (!isfinite(f->h[k])) return mbsi_fail(err, MBS_ERR_ARG, "heightfield: height %zu is %g (must be finite)", k, f->h[k]);
    if (mbsi_material_check(&f->material, "heightfield", err)) return err ? err->code : MBS_ERR_ARG;
    int i = s->env.nheightfields;
    s->heights[i] = malloc(n * sizeof(double));
    if (!s->heights[i]) return mbsi_fail(err, MBS_ERR_NOMEM, "out of memory");
    memcpy(s->heights[i], f->h, n * sizeof(double));
    s->env.heightfields[i] = *f;
    s->env.heightfields[i].h = s->heights[i];
    s->env.nheightfields++;
    return MBS_OK;
}

void mbsi_system_state(mbs_system *s, mbsi_state *st)
{
    size_t nq = (size_t)s->nq, nv = (size_t)s->nv;
    mbsi_state_doubles(st, "system.t", &s->t, 1);
    mbsi_state_doubles(st, "system.clock_t0", &s->clock_t0, 1);
    mbsi_state_doubles(st, "system.clock_dt", &s->clock_dt, 1);
    mbsi_state_bytes(st, "system.clock_k", &s->clock_k, sizeof s->clock_k);
    mbsi_state_doubles(st, "system.q", s->q, nq);
    mbsi_state_doubles(st, "system.v", s->v, nv);
    mbsi_state_doubles(st, "system.tau", s->tau, nv);
    mbsi_state_doubles(st, "system.fext", s->fext, 6 * (size_t)s->nbodies);
    mbsi_state_bytes(st, "system.resets", &s->resets, sizeof s->resets);
    /* the number of contact points is the scene's: a state of another scene does not fit */
    int nc = s->ncontacts;
    mbsi_state_ints(st, "system.ncontacts", &nc, 1);
    if (st->load && !st->failed && nc != s->ncontacts) {
        st->failed = 1;
        snprintf(st->msg, sizeof st->msg, "the state has %d contact points, the scene %d", nc, s->ncontacts);
    }
    /* a contact's geometry is the scenario's; its state is every field from `active` on */
    const size_t from = offsetof(mbs_contact, active);
    for (int i = 0; i < s->ncontacts && i < s->max_contacts; i++)
        mbsi_state_bytes(st, "system.contact", (char *)&s->contacts[i] + from, sizeof(mbs_contact) - from);
    mbsi_state_ints(st, "system.imp_on", &s->imp_on, 1);
    mbsi_state_doubles(st, "system.imp_kp", s->imp_kp, nv);
    mbsi_state_doubles(st, "system.imp_kd", s->imp_kd, nv);
    mbsi_state_doubles(st, "system.imp_qref", s->imp_qref, nq);
    mbsi_state_doubles(st, "system.imp_vref", s->imp_vref, nv);
}
