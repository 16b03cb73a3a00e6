/* model.c — building, finalising and querying the immutable model. */
#include <math.h>
#include <stdlib.h>
#include <string.h>

#include "model_internal.h"
#include "../spatial/spatial.h"
#include "../base/base.h"

mbs_model *mbs_model_new(const char *name)
{
    mbs_model *m = calloc(1, sizeof *m);
    if (!m) return NULL;
    m->name = mbsi_strdup(name ? name : "model");
    m->gravity[2] = -9.81;
    if (!m->name) { free(m); return NULL; }
    return m;
}

void mbs_model_free(mbs_model *m)
{
    if (!m) return;
    for (int i = 0; i < m->nbodies; i++) {
        free(m->bodies[i].joint_name);
        free(m->bodies[i].link_name);
    }
    for (int i = 0; i < m->nframes; i++) free(m->frames[i].name);
    free(m->bodies);
    free(m->frames);
    free(m->visuals);
    free(m->collisions);
    free(m->S);
    free(m->dof_body);
    free(m->dof_parent);
    free(m->dof_anc);
    free(m->dof_anc_at);
    free(m->dof_end);
    free(m->lower);
    free(m->upper);
    free(m->vlimit);
    free(m->effort);
    free(m->damping);
    free(m->friction);
    free(m->armature);
    for (int k = 0; k < m->nkeyframes; k++) {
        free(m->keyframes[k].name);
        free(m->keyframes[k].q);
        free(m->keyframes[k].v);
    }
    free(m->keyframes);
    free(m->name);
    free(m);
}

static int finite_n(const double *x, int n)
{
    for (int i = 0; i < n; i++)
        if (!isfinite(x[i])) return 0;
    return 1;
}

int mbs_model_add_joint(mbs_model *m, int parent, mbs_joint_type type, const char *name,
                        const double R[9], const double p[3], const double axis[3], mbs_error *err)
{
    if (!m || !name) { mbsi_fail(err, MBS_ERR_ARG, "mbs_model_add_joint: NULL model or name"); return -1; }
    if (m->finalized) { mbsi_fail(err, MBS_ERR_ARG, "joint '%s': the model is already finalized", name); return -1; }
    if (parent < -1 || parent >= m->nbodies) {
        mbsi_fail(err, MBS_ERR_ARG, "joint '%s': parent body %d does not exist", name, parent);
        return -1;
    }
    /* Subtrees must stay contiguous: the parent is the last body or one of its ancestors. */
    if (m->nbodies > 0 && parent != -1) {
        int a = m->nbodies - 1;
        while (a != -1 && a != parent) a = m->bodies[a].parent;
        if (a != parent) {
            mbsi_fail(err, MBS_ERR_ARG, "joint '%s': joints must be added depth-first (parent %d is not on the current branch)",
                     name, parent);
            return -1;
        }
    }
    if ((R && !finite_n(R, 9)) || (p && !finite_n(p, 3))) {
        mbsi_fail(err, MBS_ERR_MODEL, "joint '%s': placement is not finite", name);
        return -1;
    }
    int nq, nv;
    switch (type) {
    case MBS_JOINT_REVOLUTE: case MBS_JOINT_PRISMATIC: nq = nv = 1; break;
    case MBS_JOINT_FREEFLYER: nq = 7; nv = 6; break;
    case MBS_JOINT_PLANAR: nq = 4; nv = 3; break;
    case MBS_JOINT_BALL: nq = 4; nv = 3; break;
    default: mbsi_fail(err, MBS_ERR_ARG, "joint '%s': unknown joint type %d", name, (int)type); return -1;
    }
    double ax[3] = {0, 0, 1};
    if (type != MBS_JOINT_FREEFLYER && type != MBS_JOINT_BALL && axis) {
        if (!finite_n(axis, 3)) { mbsi_fail(err, MBS_ERR_MODEL, "joint '%s': axis is not finite", name); return -1; }
        double n = sqrt(v3_dot(axis, axis));
        if (!(n > 1e-12)) { mbsi_fail(err, MBS_ERR_MODEL, "joint '%s': axis has zero length", name); return -1; }
        ax[0] = axis[0] / n; ax[1] = axis[1] / n; ax[2] = axis[2] / n;
    }
    if (m->nbodies == m->cap_bodies) {
        int cap = m->cap_bodies ? 2 * m->cap_bodies : 16;
        mbs_body *nb = realloc(m->bodies, (size_t)cap * sizeof *nb);
        if (!nb) { mbsi_fail(err, MBS_ERR_NOMEM, "out of memory"); return -1; }
        m->bodies = nb;
        m->cap_bodies = cap;
    }
    mbs_body *b = &m->bodies[m->nbodies];
    memset(b, 0, sizeof *b);
    b->joint_name = mbsi_strdup(name);
    if (!b->joint_name) { mbsi_fail(err, MBS_ERR_NOMEM, "out of memory"); return -1; }
    b->parent = parent;
    b->type = type;
    b->nq = nq;
    b->nv = nv;
    memcpy(b->axis, ax, sizeof ax);
    b->axis_id = b->axis_neg_id = -1;
    for (int k = 0; k < 3; k++) {
        if (ax[k] == 1.0) b->axis_id = k;
        if (ax[k] == -1.0) b->axis_neg_id = k;
    }
    if (type == MBS_JOINT_PLANAR) {
        /* t1 is the unit vector most orthogonal to the normal among x, y, z after projection;
         * the choice makes a z normal give t1 = x, t2 = y, and a y normal t1 = z, t2 = x. */
        int k = fabs(ax[2]) < 0.9 ? 2 : 0;
        double e[3] = {0, 0, 0};
        e[k] = 1;
        if (fabs(ax[2]) >= 0.9) { e[0] = 1; e[2] = 0; }
        double d = v3_dot(e, ax);
        double t1[3] = {e[0] - d * ax[0], e[1] - d * ax[1], e[2] - d * ax[2]};
        double n = sqrt(v3_dot(t1, t1));
        t1[0] /= n; t1[1] /= n; t1[2] /= n;
        double t2[3];
        v3_cross(ax, t1, t2);
        memcpy(b->plane, t1, sizeof t1);
        memcpy(b->plane + 3, t2, sizeof t2);
    }
    if (R) memcpy(b->Rt, R, sizeof b->Rt); else m3_identity(b->Rt);
    if (p) memcpy(b->pt, p, sizeof b->pt);
    for (int k = 0; k < 7; k++) { b->lower[k] = -INFINITY; b->upper[k] = INFINITY; }
    for (int k = 0; k < 6; k++) { b->vlimit[k] = INFINITY; b->effort[k] = INFINITY; }
    m->nbodies++;
    return m->nbodies - 1;
}

int mbs_model_add_inertia(mbs_model *m, int bi, double mass, const double com[3], const double Ic[9],
                          mbs_error *err)
{
    if (!m || bi < -1 || bi >= m->nbodies)
        return mbsi_fail(err, MBS_ERR_ARG, "mbs_model_add_inertia: body %d does not exist", bi);
    if (!isfinite(mass) || mass < 0) return mbsi_fail(err, MBS_ERR_MODEL, "mass %g is negative or not finite", mass);
    double c[3] = {0, 0, 0}, I[9] = {0};
    if (com) memcpy(c, com, sizeof c);
    if (Ic) memcpy(I, Ic, sizeof I);
    if (!finite_n(c, 3) || !finite_n(I, 9)) return mbsi_fail(err, MBS_ERR_MODEL, "inertia is not finite");
    if (bi == -1) { m->world_mass += mass; return MBS_OK; }
    mbs_body *b = &m->bodies[bi];
    /* Io = Ic + m (|c|² 1 - c cᵀ): the parallel-axis theorem, so inertias add exactly. */
    double cc = v3_dot(c, c), sum[13];
    sum[0] = b->mass + mass;
    for (int k = 0; k < 3; k++) sum[1 + k] = b->h[k] + mass * c[k];
    for (int j = 0; j < 3; j++)
        for (int i = 0; i < 3; i++)
            sum[4 + i + 3 * j] = b->Io[i + 3 * j] + 0.5 * (I[i + 3 * j] + I[j + 3 * i])
                               + mass * ((i == j ? cc : 0.0) - c[i] * c[j]);
    /* finite inputs can still overflow here (a mass of 1e300 one metre off the origin) */
    if (!finite_n(sum, 13))
        return mbsi_fail(err, MBS_ERR_MODEL, "inertia overflows: mass %g with centre of mass at distance %g", mass,
                        sqrt(cc));
    b->mass = sum[0];
    memcpy(b->h, sum + 1, sizeof b->h);
    memcpy(b->Io, sum + 4, sizeof b->Io);
    return MBS_OK;
}

int mbs_model_add_frame(mbs_model *m, const char *name, int bi, const double R[9], const double p[3],
                        mbs_frame_type type, mbs_error *err)
{
    if (!m || !name || bi < -1 || bi >= m->nbodies) {
        mbsi_fail(err, MBS_ERR_ARG, "mbs_model_add_frame: bad frame '%s' or body %d", name ? name : "(null)", bi);
        return -1;
    }
    if ((R && !finite_n(R, 9)) || (p && !finite_n(p, 3))) {
        mbsi_fail(err, MBS_ERR_MODEL, "frame '%s': placement is not finite", name);
        return -1;
    }
    if (m->nframes == m->cap_frames) {
        int cap = m->cap_frames ? 2 * m->cap_frames : 32;
        mbs_frame *nf = realloc(m->frames, (size_t)cap * sizeof *nf);
        if (!nf) { mbsi_fail(err, MBS_ERR_NOMEM, "out of memory"); return -1; }
        m->frames = nf;
        m->cap_frames = cap;
    }
    mbs_frame *f = &m->frames[m->nframes];
    f->name = mbsi_strdup(name);
    if (!f->name) { mbsi_fail(err, MBS_ERR_NOMEM, "out of memory"); return -1; }
    f->body = bi;
    f->type = type;
    if (R) memcpy(f->R, R, sizeof f->R); else m3_identity(f->R);
    if (p) memcpy(f->p, p, sizeof f->p); else memset(f->p, 0, sizeof f->p);
    m->nframes++;
    return m->nframes - 1;
}

/* Room for one more item in an array of n items of `size` bytes with room for *cap: the array, moved
 * when it grew, or NULL when out of memory (the old one kept). For the visuals and collision shapes. */
static void *reserve_one(void *items, int n, int *cap, size_t size)
{
    if (n < *cap) return items;
    int c = *cap ? 2 * *cap : 16;
    void *grown = realloc(items, (size_t)c * size);
    if (grown) *cap = c;
    return grown;
}

int mbs_model_add_visual(mbs_model *m, const mbs_visual *v, mbs_error *err)
{
    if (!m || !v || v->body < -1 || v->body >= m->nbodies || (unsigned)v->type > MBS_SHAPE_MESH)
        return mbsi_fail(err, MBS_ERR_ARG, "mbs_model_add_visual: bad shape or body %d", v ? v->body : 0);
    if (!finite_n(v->size, 3) || !finite_n(v->R, 9) || !finite_n(v->p, 3) || !finite_n(v->rgba, 4))
        return mbsi_fail(err, MBS_ERR_MODEL, "visual of body %d: a size, placement or colour is not finite", v->body);
    mbs_visual *all = reserve_one(m->visuals, m->nvisuals, &m->cap_visuals, sizeof *all);
    if (!all) return mbsi_fail(err, MBS_ERR_NOMEM, "out of memory");
    m->visuals = all;
    all[m->nvisuals++] = *v;
    return MBS_OK;
}

int mbs_model_add_collision(mbs_model *m, const mbs_collision *c, mbs_error *err)
{
    if (!m || !c || c->body < -1 || c->body >= m->nbodies || (unsigned)c->type > MBS_SHAPE_CAPSULE)
        return mbsi_fail(err, MBS_ERR_ARG, "mbs_model_add_collision: bad shape or body %d", c ? c->body : 0);
    if (!finite_n(c->size, 3) || !finite_n(c->R, 9) || !finite_n(c->p, 3))
        return mbsi_fail(err, MBS_ERR_MODEL, "collision shape of link '%.64s': a size or the placement is not finite",
                         c->link);
    if (c->type != MBS_SHAPE_MESH && (c->size[0] < 0 || c->size[1] < 0 || c->size[2] < 0))
        return mbsi_fail(err, MBS_ERR_MODEL, "collision shape of link '%.64s': negative size", c->link);
    mbs_collision *all = reserve_one(m->collisions, m->ncollisions, &m->cap_collisions, sizeof *all);
    if (!all) return mbsi_fail(err, MBS_ERR_NOMEM, "out of memory");
    m->collisions = all;
    all[m->ncollisions++] = *c;
    return MBS_OK;
}

int mbs_model_set_body_name(mbs_model *m, int j, const char *name)
{
    if (!m || j < 0 || j >= m->nbodies || !name) return MBS_ERR_ARG;
    char *c = mbsi_strdup(name);
    if (!c) return MBS_ERR_NOMEM;
    free(m->bodies[j].link_name);
    m->bodies[j].link_name = c;
    return MBS_OK;
}

void mbs_model_set_limits(mbs_model *m, int j, const double *lower, const double *upper,
                          const double *velocity, const double *effort, const double *damping,
                          const double *friction)
{
    if (!m || j < 0 || j >= m->nbodies) return;
    mbs_body *b = &m->bodies[j];
    for (int k = 0; k < b->nq; k++) {
        if (lower) b->lower[k] = lower[k];
        if (upper) b->upper[k] = upper[k];
    }
    for (int k = 0; k < b->nv; k++) {
        if (velocity) b->vlimit[k] = velocity[k];
        if (effort) b->effort[k] = effort[k];
        if (damping) b->damping[k] = damping[k];
        if (friction) b->friction[k] = friction[k];
    }
}

void mbs_model_set_armature(mbs_model *m, int j, const double *armature)
{
    if (!m || j < 0 || j >= m->nbodies) return;
    mbs_body *b = &m->bodies[j];
    for (int k = 0; k < b->nv; k++) b->armature[k] = armature ? armature[k] : 0;
    /* after finalize (a URDF model's rotors), the per-dof copy follows */
    if (!m->finalized) return;
    m->any_armature = 0;
    for (int i = 0; i < m->nbodies; i++)
        for (int k = 0; k < m->bodies[i].nv; k++) {
            m->armature[m->bodies[i].idx_v + k] = m->bodies[i].armature[k];
            if (m->bodies[i].armature[k] != 0) m->any_armature = 1;
        }
}

/* Motion subspace of joint b in its body frame, constant for every joint type here. */
static void joint_subspace(const mbs_body *b, double *S)
{
    memset(S, 0, 6 * (size_t)b->nv * sizeof(double));
    switch (b->type) {
    case MBS_JOINT_REVOLUTE: memcpy(S + 3, b->axis, 3 * sizeof(double)); break;
    case MBS_JOINT_PRISMATIC: memcpy(S, b->axis, 3 * sizeof(double)); break;
    case MBS_JOINT_FREEFLYER:
        for (int k = 0; k < 6; k++) S[k + 6 * k] = 1;
        break;
    case MBS_JOINT_PLANAR:
        memcpy(S, b->plane, 3 * sizeof(double));
        memcpy(S + 6, b->plane + 3, 3 * sizeof(double));
        memcpy(S + 15, b->axis, 3 * sizeof(double));
        break;
    case MBS_JOINT_BALL:
        S[3] = S[6 + 4] = S[12 + 5] = 1;
        break;
    }
}

int mbs_model_finalize(mbs_model *m, mbs_error *err)
{
    mbs_error_clear(err);   /* it collects warnings, so like the loaders it starts from an empty record */
    if (!m) return mbsi_fail(err, MBS_ERR_ARG, "mbs_model_finalize: NULL model");
    if (m->finalized) return MBS_OK;
    int nq = 0, nv = 0;
    for (int i = 0; i < m->nbodies; i++) {
        mbs_body *b = &m->bodies[i];
        b->idx_q = nq;
        b->idx_v = nv;
        nq += b->nq;
        nv += b->nv;
        b->last = i;
    }
    m->nq = nq;
    m->nv = nv;
    static const double I3[9] = {1, 0, 0, 0, 1, 0, 0, 0, 1};
    for (int i = 0; i < m->nbodies; i++) {
        mbs_body *b = &m->bodies[i];
        b->turn_sign = b->axis_id < 0 && b->axis_neg_id >= 0 ? -1 : 1;
        b->turn_axis = -1;
        if (b->type == MBS_JOINT_REVOLUTE && memcmp(b->Rt, I3, sizeof I3) == 0)
            b->turn_axis = b->axis_id >= 0 ? b->axis_id : b->axis_neg_id;
    }
    /* Subtree extents and subtree masses, leaves first. */
    double *sub_mass = calloc((size_t)m->nbodies + 1, sizeof(double));
    if (!sub_mass) return mbsi_fail(err, MBS_ERR_NOMEM, "out of memory");
    for (int i = m->nbodies - 1; i >= 0; i--) {
        mbs_body *b = &m->bodies[i];
        sub_mass[i] += b->mass;
        b->nv_subtree = m->bodies[b->last].idx_v + m->bodies[b->last].nv - b->idx_v;
        if (b->parent >= 0) {
            sub_mass[b->parent] += sub_mass[i];
            if (b->last > m->bodies[b->parent].last) m->bodies[b->parent].last = b->last;
        }
    }
    /* A massless moving subtree makes M singular (a zero pivot: mbs_ltdl fails on it); the model
     * is still well defined, so it is a warning, once at the top of each such subtree. */
    for (int i = 0; i < m->nbodies; i++) {
        const mbs_body *b = &m->bodies[i];
        if (!(sub_mass[i] > 0) && (b->parent < 0 || sub_mass[b->parent] > 0))
            mbsi_warn(err, "joint '%s' moves body '%s' whose whole subtree is massless (the mass matrix is singular)",
                      b->joint_name, b->link_name ? b->link_name : b->joint_name);
    }
    free(sub_mass);
    m->S = calloc(6 * (size_t)(nv ? nv : 1), sizeof(double));
    m->dof_body = calloc((size_t)(nv ? nv : 1), sizeof(int));
    m->dof_parent = calloc((size_t)(nv ? nv : 1), sizeof(int));
    m->lower = calloc((size_t)(nq ? nq : 1), sizeof(double));
    m->upper = calloc((size_t)(nq ? nq : 1), sizeof(double));
    m->vlimit = calloc((size_t)(nv ? nv : 1), sizeof(double));
    m->effort = calloc((size_t)(nv ? nv : 1), sizeof(double));
    m->damping = calloc((size_t)(nv ? nv : 1), sizeof(double));
    m->friction = calloc((size_t)(nv ? nv : 1), sizeof(double));
    m->armature = calloc((size_t)(nv ? nv : 1), sizeof(double));
    if (!m->S || !m->dof_body || !m->dof_parent || !m->lower || !m->upper || !m->vlimit || !m->effort ||
        !m->damping || !m->friction || !m->armature)
        return mbsi_fail(err, MBS_ERR_NOMEM, "out of memory");
    for (int i = 0; i < m->nbodies; i++) {
        const mbs_body *b = &m->bodies[i];
        joint_subspace(b, m->S + 6 * b->idx_v);
        for (int k = 0; k < b->nv; k++) {
            int dof = b->idx_v + k;
            m->dof_body[dof] = i;
            if (k > 0) m->dof_parent[dof] = dof - 1;
            else if (b->parent >= 0) {
                const mbs_body *pb = &m->bodies[b->parent];
                m->dof_parent[dof] = pb->idx_v + pb->nv - 1;
            } else
                m->dof_parent[dof] = -1;
            m->vlimit[dof] = b->vlimit[k];
            m->effort[dof] = b->effort[k];
            m->damping[dof] = b->damping[k];
            m->friction[dof] = b->friction[k];
            m->armature[dof] = b->armature[k];
            if (b->armature[k] != 0) m->any_armature = 1;
        }
        for (int k = 0; k < b->nq; k++) {
            m->lower[b->idx_q + k] = b->lower[k];
            m->upper[b->idx_q + k] = b->upper[k];
        }
    }
    /* the ancestor lists: a dof's parent precedes it, so its list is its parent's after the parent */
    m->dof_anc_at = calloc((size_t)nv + 1, sizeof(int));
    if (!m->dof_anc_at) return mbsi_fail(err, MBS_ERR_NOMEM, "out of memory");
    for (int k = 0; k < nv; k++) {
        int p = m->dof_parent[k];
        m->dof_anc_at[k + 1] = m->dof_anc_at[k] + (p < 0 ? 0 : 1 + m->dof_anc_at[p + 1] - m->dof_anc_at[p]);
    }
    m->dof_anc = calloc((size_t)(m->dof_anc_at[nv] ? m->dof_anc_at[nv] : 1), sizeof(int));
    if (!m->dof_anc) return mbsi_fail(err, MBS_ERR_NOMEM, "out of memory");
    for (int k = 0; k < nv; k++) {
        int p = m->dof_parent[k], *a = m->dof_anc + m->dof_anc_at[k];
        if (p < 0) continue;
        a[0] = p;
        memcpy(a + 1, m->dof_anc + m->dof_anc_at[p], sizeof(int) * (size_t)(m->dof_anc_at[p + 1] - m->dof_anc_at[p]));
    }
    m->dof_end = calloc((size_t)(nv ? nv : 1), sizeof(int));
    if (!m->dof_end) return mbsi_fail(err, MBS_ERR_NOMEM, "out of memory");
    for (int k = 0; k < nv; k++) {
        const mbs_body *b = &m->bodies[m->dof_body[k]];
        m->dof_end[k] = b->idx_v + b->nv_subtree;
    }
    m->finalized = 1;
    return MBS_OK;
}

/* ---- queries ---- */
const char *mbs_model_name(const mbs_model *m) { return m->name; }
int mbs_model_nq(const mbs_model *m) { return m->nq; }
int mbs_model_nv(const mbs_model *m) { return m->nv; }
int mbs_model_njoints(const mbs_model *m) { return m->nbodies; }
int mbs_model_nbodies(const mbs_model *m) { return m->nbodies; }
static int valid_joint(const mbs_model *m, int j) { return m && j >= 0 && j < m->nbodies; }
const char *mbs_joint_name(const mbs_model *m, int j) { return valid_joint(m, j) ? m->bodies[j].joint_name : NULL; }
const char *mbs_body_name(const mbs_model *m, int j)
{
    if (!valid_joint(m, j)) return NULL;
    return m->bodies[j].link_name ? m->bodies[j].link_name : m->bodies[j].joint_name;
}
int mbs_joint_id(const mbs_model *m, const char *name)
{
    for (int j = 0; m && name && j < m->nbodies; j++)
        if (strcmp(m->bodies[j].joint_name, name) == 0) return j;
    return -1;
}
mbs_joint_type mbs_joint_type_of(const mbs_model *m, int j) { return m->bodies[j].type; }
int mbs_joint_parent(const mbs_model *m, int j) { return valid_joint(m, j) ? m->bodies[j].parent : -1; }
int mbs_joint_idx_q(const mbs_model *m, int j) { return valid_joint(m, j) ? m->bodies[j].idx_q : -1; }
int mbs_joint_idx_v(const mbs_model *m, int j) { return valid_joint(m, j) ? m->bodies[j].idx_v : -1; }
int mbs_joint_nq(const mbs_model *m, int j) { return valid_joint(m, j) ? m->bodies[j].nq : 0; }
int mbs_joint_nv(const mbs_model *m, int j) { return valid_joint(m, j) ? m->bodies[j].nv : 0; }
const double *mbs_model_lower_limits(const mbs_model *m) { return m->lower; }
const double *mbs_model_upper_limits(const mbs_model *m) { return m->upper; }
const double *mbs_model_velocity_limits(const mbs_model *m) { return m->vlimit; }
const double *mbs_model_effort_limits(const mbs_model *m) { return m->effort; }
const double *mbs_model_damping(const mbs_model *m) { return m->damping; }
const double *mbs_model_friction(const mbs_model *m) { return m->friction; }
const double *mbs_model_armature(const mbs_model *m) { return m->armature; }

int mbs_model_add_keyframe(mbs_model *m, const char *name, const double *q, const double *v, mbs_error *err)
{
    if (!m || !name || !q) { mbsi_fail(err, MBS_ERR_ARG, "mbs_model_add_keyframe: NULL model, name or q"); return -1; }
    if (!m->finalized) { mbsi_fail(err, MBS_ERR_ARG, "keyframe '%s': finalize the model first", name); return -1; }
    if (mbs_model_keyframe_id(m, name) >= 0) {
        mbsi_fail(err, MBS_ERR_MODEL, "keyframe '%s' is given twice: keyframe names must be unique", name);
        return -1;
    }
    if (!finite_n(q, m->nq) || (v && !finite_n(v, m->nv))) {
        mbsi_fail(err, MBS_ERR_MODEL, "keyframe '%s': q or v is not finite", name);
        return -1;
    }
    if (m->nkeyframes == m->cap_keyframes) {
        int cap = m->cap_keyframes ? 2 * m->cap_keyframes : 4;
        struct mbs_keyframe *k = realloc(m->keyframes, (size_t)cap * sizeof *k);
        if (!k) { mbsi_fail(err, MBS_ERR_NOMEM, "out of memory"); return -1; }
        m->keyframes = k;
        m->cap_keyframes = cap;
    }
    struct mbs_keyframe *k = &m->keyframes[m->nkeyframes];
    k->name = mbsi_strdup(name);
    k->q = malloc(sizeof(double) * (size_t)(m->nq ? m->nq : 1));
    k->v = calloc((size_t)(m->nv ? m->nv : 1), sizeof(double));
    if (!k->name || !k->q || !k->v) {
        free(k->name); free(k->q); free(k->v);
        mbsi_fail(err, MBS_ERR_NOMEM, "out of memory");
        return -1;
    }
    memcpy(k->q, q, sizeof(double) * (size_t)m->nq);
    if (v) memcpy(k->v, v, sizeof(double) * (size_t)m->nv);
    return m->nkeyframes++;
}

int mbs_model_nkeyframes(const mbs_model *m) { return m ? m->nkeyframes : 0; }

int mbs_model_keyframe_id(const mbs_model *m, const char *name)
{
    for (int k = 0; m && name && k < m->nkeyframes; k++)
        if (strcmp(m->keyframes[k].name, name) == 0) return k;
    return -1;
}

const char *mbs_model_keyframe(const mbs_model *m, int k, const double **q, const double **v)
{
    if (!m || k < 0 || k >= m->nkeyframes) return NULL;
    if (q) *q = m->keyframes[k].q;
    if (v) *v = m->keyframes[k].v;
    return m->keyframes[k].name;
}
int mbs_model_nframes(const mbs_model *m) { return m->nframes; }
int mbs_model_nvisuals(const mbs_model *m) { return m->nvisuals; }
const mbs_visual *mbs_model_visual(const mbs_model *m, int i) { return (i >= 0 && i < m->nvisuals) ? &m->visuals[i] : NULL; }
int mbs_model_ncollisions(const mbs_model *m) { return m->ncollisions; }
const mbs_collision *mbs_model_collision(const mbs_model *m, int i)
{
    return (i >= 0 && i < m->ncollisions) ? &m->collisions[i] : NULL;
}
int mbs_frame_id(const mbs_model *m, const char *name)
{
    if (!m || !name) return -1;
    for (int pass = 0; pass < 2; pass++)
        for (int f = 0; f < m->nframes; f++) {
            int is_link = m->frames[f].type == MBS_FRAME_BODY || m->frames[f].type == MBS_FRAME_FIXED_LINK;
            if ((pass == 0) == is_link && strcmp(m->frames[f].name, name) == 0) return f;
        }
    return -1;
}
const char *mbs_frame_name(const mbs_model *m, int f) { return (f >= 0 && f < m->nframes) ? m->frames[f].name : NULL; }
int mbs_frame_body(const mbs_model *m, int f) { return (f >= 0 && f < m->nframes) ? m->frames[f].body : -1; }
mbs_frame_type mbs_frame_type_of(const mbs_model *m, int f) { return m->frames[f].type; }
void mbs_frame_local_placement(const mbs_model *m, int f, double R[9], double p[3])
{
    memcpy(R, m->frames[f].R, 9 * sizeof(double));
    memcpy(p, m->frames[f].p, 3 * sizeof(double));
}
double mbs_model_mass(const mbs_model *m)
{
    double s = m->world_mass;
    for (int i = 0; i < m->nbodies; i++) s += m->bodies[i].mass;
    return s;
}
void mbs_body_inertia(const mbs_model *m, int bi, double *mass, double com[3], double Ic[9])
{
    static const mbs_body none;   /* the world, or a body out of range: nothing moves with it */
    const mbs_body *b = (m && bi >= 0 && bi < m->nbodies) ? &m->bodies[bi] : &none;
    double c[3] = {0, 0, 0};
    if (b->mass > 0) for (int k = 0; k < 3; k++) c[k] = b->h[k] / b->mass;
    if (mass) *mass = b->mass;
    if (com) memcpy(com, c, sizeof c);
    if (Ic) {
        double cc = v3_dot(c, c);
        for (int j = 0; j < 3; j++)
            for (int i = 0; i < 3; i++)
                Ic[i + 3 * j] = b->Io[i + 3 * j] - b->mass * ((i == j ? cc : 0.0) - c[i] * c[j]);
    }
}
const double *mbs_model_gravity(const mbs_model *m) { return m->gravity; }
void mbs_model_set_gravity(mbs_model *m, const double g[3]) { memcpy(m->gravity, g, 3 * sizeof(double)); }
