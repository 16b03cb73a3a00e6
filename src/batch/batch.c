/* batch.c — N independent systems of one model stepped together on a thread pool (mbs/batch.h).
 *
 * Each system is a plain mbs_system with its own mbs_stepper, built exactly as a program builds
 * one (mbs_system_new, the caller's setup, mbs_stepper_new), so that stepping it here is stepping
 * it alone: mbs_batch_step hands each thread chunks of systems (pool.c), and for each system copies
 * its torque column in, calls mbs_stepper_step and copies q, v and the contact forces out. Nothing
 * is shared between two systems' steps but the model, which no step writes, so neither the number
 * of threads nor the order in which they take systems can change a bit of any result.
 *
 * Against false sharing: the per-system record the threads write (status, time) is one cache line
 * per system; the torque, state and force arrays keep one column per system padded to whole cache
 * lines (mbs_batch_q and friends pack them for the caller); and every object a step writes (the
 * system, its data, the stepper and their buffers) is a carver block, whole cache lines of its own,
 * wherever the heap puts it. */
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <unistd.h>

#include "../base/base.h"
#include "../contact/contact_internal.h"
#include "mbs/batch.h"
#include "mbs/step.h"
#include "pool.h"

#define LINE 64
#define LINE_DOUBLES (LINE / (int)sizeof(double))
#define MAX_THREADS 1024
#define MAX_SYSTEMS (1 << 24)

typedef struct batch_slot {
    _Alignas(LINE) mbs_system *sys;
    mbs_stepper *st;
    double t;               /* the system's time after its last step */
    int status;             /* MBS_OK, or the code of the step that failed */
    int failed_now;         /* 1: failed in the current mbs_batch_step */
} batch_slot;

struct mbs_batch {
    const mbs_model *m;
    int n, nq, nv, nc;
    int ldq, ldv, ldf;      /* column strides of the arrays: whole cache lines */
    batch_slot *slots;
    double *q, *v, *tau, *f;   /* ldq x N, ldv x N, ldv x N, ldf x N */
    double *kp, *kd, *qref;    /* the impedance of mbs_batch_set_impedance: ldv x N, ldv x N, ldq x N */
    int imp_pending;           /* 0: none to hand over; 1: kp, kd, qref; -1: remove it */
    mbsi_pool *pool;
    int chunk;              /* systems a thread takes at a time */
    double dt;              /* of the step running */
    int nsteps;             /* steps per system in the call running */
    int nfailed;
};

static int round_line(int n) { return (n + LINE_DOUBLES - 1) / LINE_DOUBLES * LINE_DOUBLES; }

/* Copies system i's state and contact forces into the batch's arrays. */
static void gather(mbs_batch *b, int i)
{
    batch_slot *sl = &b->slots[i];
    const mbs_system *s = sl->sys;
    memcpy(b->q + (size_t)b->ldq * i, s->q, (size_t)b->nq * sizeof(double));
    memcpy(b->v + (size_t)b->ldv * i, s->v, (size_t)b->nv * sizeof(double));
    double *f = b->f + (size_t)b->ldf * i;
    for (int c = 0; c < s->ncontacts; c++) memcpy(f + 3 * c, s->contacts[c].lambda, 3 * sizeof(double));
    sl->t = s->t;
}

/* The pool's work: steps systems [begin, end). */
static void step_range(void *ctx, int begin, int end)
{
    mbs_batch *b = ctx;
    for (int i = begin; i < end; i++) {
        batch_slot *sl = &b->slots[i];
        if (b->imp_pending > 0)
            mbs_system_set_impedance(sl->sys, b->kp + (size_t)b->ldv * i, b->kd + (size_t)b->ldv * i,
                                     b->qref + (size_t)b->ldq * i, NULL);
        else if (b->imp_pending < 0)
            mbs_system_set_impedance(sl->sys, NULL, NULL, NULL, NULL);
        if (sl->status != MBS_OK) continue;   /* failed earlier: waits for a new start */
        mbs_system_set_tau(sl->sys, b->tau + (size_t)b->ldv * i);
        int rc = MBS_OK;
        for (int k = 0; k < b->nsteps && rc == MBS_OK; k++) rc = mbs_stepper_step(sl->st, b->dt, NULL);
        gather(b, i);
        if (rc != MBS_OK) {
            sl->status = rc;
            sl->failed_now = 1;
        }
    }
}

static void layout(mbs_carver *c, mbs_batch *b)
{
    size_t n = (size_t)b->n;
    b->slots = mbsi_carve(c, n * sizeof(batch_slot));
    b->q = mbsi_carve_doubles(c, (size_t)b->ldq * n);
    b->v = mbsi_carve_doubles(c, (size_t)b->ldv * n);
    b->tau = mbsi_carve_doubles(c, (size_t)b->ldv * n);
    b->f = mbsi_carve_doubles(c, (size_t)b->ldf * n);
    b->kp = mbsi_carve_doubles(c, (size_t)b->ldv * n);
    b->kd = mbsi_carve_doubles(c, (size_t)b->ldv * n);
    b->qref = mbsi_carve_doubles(c, (size_t)b->ldq * n);
}

mbs_batch *mbs_batch_new(const mbs_model *m, int n, const mbs_batch_config *cfg, mbs_error *err)
{
    static const mbs_batch_config none = {0};
    if (!cfg) cfg = &none;
    if (!m) {
        mbsi_fail(err, MBS_ERR_ARG, "mbs_batch_new: no model");
        return NULL;
    }
    if (n < 1 || n > MAX_SYSTEMS) {
        mbsi_fail(err, MBS_ERR_ARG, "systems: %d, not in [1, %d]", n, MAX_SYSTEMS);
        return NULL;
    }
    int nthreads = cfg->nthreads;
    if (nthreads == 0) {
        long online = sysconf(_SC_NPROCESSORS_ONLN);
        nthreads = online < 1 ? 1 : online > MAX_THREADS ? MAX_THREADS : (int)online;
    }
    if (nthreads < 1 || nthreads > MAX_THREADS) {
        mbsi_fail(err, MBS_ERR_ARG, "threads: %d, not in [1, %d] (0: one per processor)", cfg->nthreads, MAX_THREADS);
        return NULL;
    }
    if (cfg->max_contacts < 0) {
        mbsi_fail(err, MBS_ERR_ARG, "max_contacts: %d, negative", cfg->max_contacts);
        return NULL;
    }
    const char *stepper = cfg->stepper ? cfg->stepper : MBS_STEPPER_DEFAULT;
    if (!mbs_stepper_find(stepper)) {
        mbsi_fail(err, MBS_ERR_ARG, "stepper: no scheme named '%s'", stepper);
        return NULL;
    }
    mbs_batch head = {0};
    head.m = m;
    head.n = n;
    head.nq = mbs_model_nq(m);
    head.nv = mbs_model_nv(m);
    head.ldq = round_line(head.nq);
    head.ldv = round_line(head.nv);
    head.ldf = round_line(3 * (cfg->max_contacts > 0 ? cfg->max_contacts : 1));
    mbs_carver c = {NULL, 0};
    mbsi_carve(&c, sizeof(mbs_batch));
    layout(&c, &head);
    mbs_batch *b = mbsi_carver_alloc(&c);
    if (!b) {
        mbsi_fail(err, MBS_ERR_NOMEM, "out of memory");
        return NULL;
    }
    *b = head;
    mbsi_carve(&c, sizeof(mbs_batch));
    layout(&c, b);
    /* every system as a program builds one: the system, the caller's setup, the stepper */
    for (int i = 0; i < n; i++) {
        batch_slot *sl = &b->slots[i];
        const mbs_model *mi = cfg->models ? cfg->models[i] : m;
        if (!mi || mbs_model_nq(mi) != head.nq || mbs_model_nv(mi) != head.nv ||
            mbs_model_nbodies(mi) != mbs_model_nbodies(m)) {
            mbsi_fail(err, MBS_ERR_ARG, "system %d: its model %s", i,
                      mi ? "has other joints than the batch's (nq, nv or bodies differ)" : "is NULL");
            mbs_batch_free(b);
            return NULL;
        }
        sl->sys = mbs_system_new(mi, cfg->max_contacts, err);
        if (!sl->sys) {
            mbs_batch_free(b);
            return NULL;
        }
        int rc = cfg->setup ? cfg->setup(sl->sys, i, cfg->user, err) : MBS_OK;
        /* the caller's setup described the scene: frozen here unless it did so itself */
        if (rc == MBS_OK) rc = mbs_system_finalize(sl->sys, err);
        if (rc == MBS_OK) sl->st = mbs_stepper_new(stepper, sl->sys, cfg->options, cfg->noptions, err);
        if (rc != MBS_OK || !sl->st) {
            if (err) {
                char msg[MBS_ERROR_MSG_LEN];
                snprintf(msg, sizeof msg, "%s", err->msg);
                mbsi_fail(err, rc != MBS_OK ? rc : err->code ? err->code : MBS_ERR_ARG, "system %d: %s", i, msg);
            }
            mbs_batch_free(b);
            return NULL;
        }
        int nc = mbs_system_ncontacts(sl->sys);
        if (nc > b->nc) b->nc = nc;
        memcpy(b->tau + (size_t)b->ldv * i, sl->sys->tau, (size_t)b->nv * sizeof(double));
        gather(b, i);
    }
    b->pool = mbsi_pool_new(nthreads, err);
    if (!b->pool) {
        mbs_batch_free(b);
        return NULL;
    }
    /* a dozen chunks or more per thread, so that a thread slowed by another program costs at
     * most a few systems' steps of waiting at the end; small enough that one atomic increment per
     * chunk is nothing next to the steps */
    b->chunk = n / (16 * nthreads);
    b->chunk = b->chunk < 1 ? 1 : b->chunk > 4 ? 4 : b->chunk;
    return b;
}

void mbs_batch_free(mbs_batch *b)
{
    if (!b) return;
    mbsi_pool_free(b->pool);
    for (int i = 0; i < b->n; i++) {
        mbs_stepper_free(b->slots[i].st);
        mbs_system_free(b->slots[i].sys);
    }
    free(b);
}

int mbs_batch_size(const mbs_batch *b) { return b->n; }
int mbs_batch_nthreads(const mbs_batch *b) { return mbsi_pool_nthreads(b->pool); }
int mbs_batch_ncontacts(const mbs_batch *b) { return b->nc; }

const mbs_system *mbs_batch_system(const mbs_batch *b, int i)
{
    return i >= 0 && i < b->n ? b->slots[i].sys : NULL;
}

void mbs_batch_set_tau(mbs_batch *b, const double *tau)
{
    for (int i = 0; i < b->n; i++)
        memcpy(b->tau + (size_t)b->ldv * i, tau + (size_t)b->nv * i, (size_t)b->nv * sizeof(double));
}

int mbs_batch_set_state(mbs_batch *b, int i, const double *q, const double *v, double t)
{
    if (i < 0 || i >= b->n || !q) return MBS_ERR_ARG;
    batch_slot *sl = &b->slots[i];
    mbs_system_set_state(sl->sys, q, v, t);
    gather(b, i);
    if (sl->status != MBS_OK) b->nfailed--;
    sl->status = MBS_OK;
    return MBS_OK;
}

void mbs_batch_set_impedance(mbs_batch *b, const double *kp, const double *kd, const double *q_ref)
{
    if (!kp || !kd || !q_ref) {
        b->imp_pending = -1;
        return;
    }
    for (int i = 0; i < b->n; i++) {
        memcpy(b->kp + (size_t)b->ldv * i, kp + (size_t)b->nv * i, (size_t)b->nv * sizeof(double));
        memcpy(b->kd + (size_t)b->ldv * i, kd + (size_t)b->nv * i, (size_t)b->nv * sizeof(double));
        memcpy(b->qref + (size_t)b->ldq * i, q_ref + (size_t)b->nq * i, (size_t)b->nq * sizeof(double));
    }
    b->imp_pending = 1;
}

int mbs_batch_set_material(mbs_batch *b, int i, int solid, const mbs_material *mat, mbs_error *err)
{
    if (i < 0 || i >= b->n) return mbsi_fail(err, MBS_ERR_ARG, "mbs_batch_set_material: no system %d", i);
    return mbs_system_set_material(b->slots[i].sys, solid, mat, err);
}

int mbs_batch_step(mbs_batch *b, double dt, mbs_error *err) { return mbs_batch_step_n(b, dt, 1, err); }

int mbs_batch_step_n(mbs_batch *b, double dt, int nsteps, mbs_error *err)
{
    if (nsteps < 1) return mbsi_fail(err, MBS_ERR_ARG, "mbs_batch_step_n: nsteps %d, not >= 1", nsteps);
    b->dt = dt;
    b->nsteps = nsteps;
    mbsi_pool_run(b->pool, b->n, b->chunk, step_range, b);
    b->imp_pending = 0;   /* every system took it */
    int first = -1, count = 0;
    for (int i = 0; i < b->n; i++) {
        batch_slot *sl = &b->slots[i];
        if (!sl->failed_now) continue;
        sl->failed_now = 0;
        if (first < 0) first = i;
        count++;
    }
    if (first < 0) return MBS_OK;
    b->nfailed += count;
    const mbs_error *e = mbs_stepper_last_error(b->slots[first].st);
    if (count == 1) return mbsi_fail(err, b->slots[first].status, "system %d: %s", first, e->msg);
    return mbsi_fail(err, b->slots[first].status, "system %d (and %d more): %s", first, count - 1, e->msg);
}

void mbs_batch_q(const mbs_batch *b, double *out)
{
    for (int i = 0; i < b->n; i++)
        memcpy(out + (size_t)b->nq * i, b->q + (size_t)b->ldq * i, (size_t)b->nq * sizeof(double));
}

void mbs_batch_v(const mbs_batch *b, double *out)
{
    for (int i = 0; i < b->n; i++)
        memcpy(out + (size_t)b->nv * i, b->v + (size_t)b->ldv * i, (size_t)b->nv * sizeof(double));
}

void mbs_batch_time(const mbs_batch *b, double *out)
{
    for (int i = 0; i < b->n; i++) out[i] = b->slots[i].t;
}

void mbs_batch_contact_forces(const mbs_batch *b, double *out)
{
    size_t w = 3 * (size_t)b->nc;
    for (int i = 0; i < b->n; i++) memcpy(out + w * i, b->f + (size_t)b->ldf * i, w * sizeof(double));
}

int mbs_batch_status(const mbs_batch *b, int i)
{
    return i >= 0 && i < b->n ? b->slots[i].status : MBS_ERR_ARG;
}

const mbs_error *mbs_batch_error(const mbs_batch *b, int i)
{
    return i >= 0 && i < b->n ? mbs_stepper_last_error(b->slots[i].st) : NULL;
}

int mbs_batch_nfailed(const mbs_batch *b) { return b->nfailed; }
