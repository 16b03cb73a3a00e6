/* checkpoint.c — a run's checkpoints: the one visitor of its whole state (at the end), written
 * every checkpoint_every and when the run is stopped, read back by resume; and the checkpoint
 * file: a header naming what wrote it, the state stream the run's visitors saved
 * (src/base/state.c), and a checksum. Layout (native byte order):
 *   "MBS-CKPT"  8 bytes     magic
 *   version     u32         CKPT_VERSION
 *   order       u32         0x01020304, as the writer stored it (another byte order is refused)
 *   identity    u64         mbsi_scenario_identity (every entry but the duration and the output files)
 *   nq, nv      i32, i32    the model's
 *   stepper     64 bytes    its name, NUL-padded
 *   controller  64 bytes
 *   length      u64         of the payload
 *   payload     length bytes
 *   checksum    u64         FNV-1a 64 of every byte before it
 * Written to "<path>.tmp" and renamed, so that a crash while writing leaves the previous
 * checkpoint in place. */
#include <errno.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "../step/step_internal.h"
#include "ini.h"
#include "run.h"

#define CKPT_MAGIC "MBS-CKPT"
#define CKPT_VERSION 3u   /* 3: the clock's count and each contact's solid are state; the identity leaves out
                             * run.duration, output.csv and output.html */
#define CKPT_ORDER 0x01020304u
#define CKPT_NAME 64
#define CKPT_HEADER (8 + 4 + 4 + 8 + 4 + 4 + CKPT_NAME + CKPT_NAME + 8)

/* Keys that change neither the dynamics nor the state a checkpoint holds: how long the run goes on
 * and where its files go, so that a checkpointed run can be resumed to a longer duration. */
static int outside_identity(const mbs_scenario_entry *e)
{
    return (strcmp(e->section, "run") == 0 && strcmp(e->key, "duration") == 0) ||
           (strcmp(e->section, "output") == 0 && (strcmp(e->key, "csv") == 0 || strcmp(e->key, "html") == 0));
}

uint64_t mbsi_scenario_identity(const mbs_scenario *sc)
{
    /* the sum of the entries' hashes: the same entries in another order (overrides given in
     * another order) are the same scenario */
    uint64_t sum = 0;
    for (int i = 0; i < sc->nentries; i++) {
        const mbs_scenario_entry *e = &sc->entries[i];
        if (e->dead || outside_identity(e)) continue;
        uint64_t h = MBSI_FNV_INIT;
        h = mbsi_fnv1a(e->section, strlen(e->section) + 1, h);
        h = mbsi_fnv1a(e->key, strlen(e->key) + 1, h);
        h = mbsi_fnv1a(e->value, strlen(e->value) + 1, h);
        sum += h;
    }
    return mbsi_fnv1a(&sum, sizeof sum, MBSI_FNV_INIT);
}

static void put(unsigned char **p, const void *x, size_t n)
{
    memcpy(*p, x, n);
    *p += n;
}

static void header(const mbs_scenario *sc, uint64_t length, unsigned char h[CKPT_HEADER])
{
    unsigned char *p = h;
    uint32_t version = CKPT_VERSION, order = CKPT_ORDER;
    uint64_t id = mbsi_scenario_identity(sc);
    int32_t nq = mbs_model_nq(sc->model), nv = mbs_model_nv(sc->model);
    char st[CKPT_NAME] = {0}, ct[CKPT_NAME] = {0};
    snprintf(st, sizeof st, "%s", sc->stepper);
    snprintf(ct, sizeof ct, "%s", sc->controller);
    put(&p, CKPT_MAGIC, 8);
    put(&p, &version, 4);
    put(&p, &order, 4);
    put(&p, &id, 8);
    put(&p, &nq, 4);
    put(&p, &nv, 4);
    put(&p, st, CKPT_NAME);
    put(&p, ct, CKPT_NAME);
    put(&p, &length, 8);
}

int mbsi_checkpoint_write(const char *path, const mbs_scenario *sc, const unsigned char *payload, size_t n,
                          mbs_error *err)
{
    char tmp[MBS_PATH_LEN + 8];
    if ((size_t)snprintf(tmp, sizeof tmp, "%s.tmp", path) >= sizeof tmp)
        return mbsi_fail(err, MBS_ERR_ARG, "cannot write the checkpoint '%s': path too long", path);
    unsigned char h[CKPT_HEADER];
    header(sc, n, h);
    uint64_t sum = mbsi_fnv1a(payload, n, mbsi_fnv1a(h, sizeof h, MBSI_FNV_INIT));
    FILE *f = fopen(tmp, "wb");
    if (!f) return mbsi_fail(err, MBS_ERR_IO, "cannot write the checkpoint '%s': %s", path, strerror(errno));
    int bad = fwrite(h, 1, sizeof h, f) != sizeof h;
    bad |= fwrite(payload, 1, n, f) != n;
    bad |= fwrite(&sum, 1, sizeof sum, f) != sizeof sum;
    bad |= fclose(f) != 0;
    if (bad) {
        remove(tmp);
        return mbsi_fail(err, MBS_ERR_IO, "error writing the checkpoint '%s' (to '%s')", path, tmp);
    }
    if (rename(tmp, path) != 0) {
        int e = errno;
        remove(tmp);
        return mbsi_fail(err, MBS_ERR_IO, "cannot rename '%s' to '%s': %s", tmp, path, strerror(e));
    }
    return MBS_OK;
}

int mbsi_checkpoint_read(const char *path, const mbs_scenario *sc, unsigned char **payload, size_t *n, mbs_error *err)
{
    *payload = NULL;
    *n = 0;
    FILE *f = fopen(path, "rb");
    if (!f) return mbsi_fail(err, MBS_ERR_IO, "cannot read the checkpoint '%s': %s", path, strerror(errno));
    unsigned char *buf = NULL;
    size_t len = 0, cap = 0;
    for (;;) {
        if (len == cap) {
            size_t c = cap ? 2 * cap : 65536;
            unsigned char *b = realloc(buf, c);
            if (!b) {
                free(buf);
                fclose(f);
                return mbsi_fail(err, MBS_ERR_NOMEM, "checkpoint '%s': out of memory", path);
            }
            buf = b;
            cap = c;
        }
        size_t k = fread(buf + len, 1, cap - len, f);
        len += k;
        if (k == 0) break;
    }
    int rerr = ferror(f);
    fclose(f);
    int rc = MBS_ERR_IO;
    if (rerr) {
        mbsi_fail(err, rc, "cannot read the checkpoint '%s': read error", path);
        goto fail;
    }
    if (len < 8 || memcmp(buf, CKPT_MAGIC, 8) != 0) {
        mbsi_fail(err, rc, "checkpoint '%s': not an mbs checkpoint (%s)", path,
                  len < 8 ? "shorter than its magic" : "no MBS-CKPT magic at its start");
        goto fail;
    }
    if (len < CKPT_HEADER + 8) {
        mbsi_fail(err, rc, "checkpoint '%s': truncated: %zu bytes, shorter than its header", path, len);
        goto fail;
    }
    uint32_t version, order;
    memcpy(&version, buf + 8, 4);
    memcpy(&order, buf + 12, 4);
    if (order != CKPT_ORDER) {
        mbsi_fail(err, rc, "checkpoint '%s': written on a machine of another byte order", path);
        goto fail;
    }
    if (version != CKPT_VERSION) {
        mbsi_fail(err, rc, "checkpoint '%s': format version %u, this build reads version %u", path, version, CKPT_VERSION);
        goto fail;
    }
    uint64_t length;
    memcpy(&length, buf + CKPT_HEADER - 8, 8);
    if (length > len || len - CKPT_HEADER - 8 != length) {
        mbsi_fail(err, rc, "checkpoint '%s': truncated or extended: %zu bytes, its header announces %llu", path, len,
                  (unsigned long long)length + CKPT_HEADER + 8);
        goto fail;
    }
    uint64_t sum, want = mbsi_fnv1a(buf, len - 8, MBSI_FNV_INIT);
    memcpy(&sum, buf + len - 8, 8);
    if (sum != want) {
        mbsi_fail(err, rc, "checkpoint '%s': corrupted: its checksum does not match its contents", path);
        goto fail;
    }
    /* what wrote it, from the clearest difference to the least */
    unsigned char h[CKPT_HEADER];
    header(sc, length, h);
    uint64_t id;
    int32_t nq, nv;
    char st[CKPT_NAME + 1] = {0}, ct[CKPT_NAME + 1] = {0};
    memcpy(&id, buf + 16, 8);
    memcpy(&nq, buf + 24, 4);
    memcpy(&nv, buf + 28, 4);
    memcpy(st, buf + 32, CKPT_NAME);
    memcpy(ct, buf + 32 + CKPT_NAME, CKPT_NAME);
    if (nq != mbs_model_nq(sc->model) || nv != mbs_model_nv(sc->model)) {
        mbsi_fail(err, rc, "checkpoint '%s': of a model with nq = %d, nv = %d; this scenario's '%s' has nq = %d, nv = %d", path,
                  (int)nq, (int)nv, mbs_model_name(sc->model), mbs_model_nq(sc->model), mbs_model_nv(sc->model));
        goto fail;
    }
    if (strcmp(st, sc->stepper) != 0 || strcmp(ct, sc->controller) != 0) {
        mbsi_fail(err, rc, "checkpoint '%s': written by stepper '%s' and controller '%s'; this scenario runs '%s' and '%s'",
                  path, st, ct, sc->stepper, sc->controller);
        goto fail;
    }
    if (memcmp(buf + 16, h + 16, 8) != 0) {
        mbsi_fail(err, rc, "checkpoint '%s': written by another scenario or other options (identity %016llx; %s with its "
                  "overrides has %016llx): resume with the same scenario file and --set overrides", path,
                  (unsigned long long)id, sc->path, (unsigned long long)mbsi_scenario_identity(sc));
        goto fail;
    }
    *n = (size_t)length;
    *payload = malloc(*n + 1);
    if (!*payload) {
        mbsi_fail(err, MBS_ERR_NOMEM, "checkpoint '%s': out of memory", path);
        rc = MBS_ERR_NOMEM;
        goto fail;
    }
    memcpy(*payload, buf + CKPT_HEADER, *n);
    free(buf);
    return MBS_OK;
fail:
    free(buf);
    return rc;
}

/* ---- the run's checkpoints ---- */

/* The one visitor of a run's complete state: the loop's position, the summary's accumulators and
 * touchdown flags, then the system, the stepper and the controller, each through its own visitor.
 * Saves or loads, as s says. The wall-clock figures are not state. */
static void sim_state(mbs_sim *sim, run_state *r, mbs_sim_summary *out, mbsi_state *s)
{
    mbsi_state_bytes(s, "run.period", &r->k, sizeof r->k);
    mbsi_state_bytes(s, "run.csv_offset", &r->csv_offset, sizeof r->csv_offset);
    mbsi_state_doubles(s, "run.x0", &r->x0, 1);
    mbsi_state_doubles(s, "run.y0", &r->y0, 1);
    mbsi_state_bytes(s, "run.iterations", &r->iters, sizeof r->iters);
    mbsi_state_bytes(s, "summary.steps", &out->steps, sizeof out->steps);
    mbsi_state_doubles(s, "summary.max_penetration", &out->max_penetration, 1);
    mbsi_state_doubles(s, "summary.max_contact_force", &out->max_contact_force, 1);
    mbsi_state_doubles(s, "summary.base_z_min", &out->base_z_min, 1);
    mbsi_state_doubles(s, "summary.base_z_max", &out->base_z_max, 1);
    mbsi_state_doubles(s, "summary.max_tilt_deg", &out->max_tilt_deg, 1);
    mbsi_state_doubles(s, "summary.airborne_s", &out->airborne_s, 1);
    mbsi_state_bytes(s, "summary.touchdowns", &out->touchdowns, sizeof out->touchdowns);
    mbsi_state_bytes(s, "summary.foot_touchdowns", &out->foot_touchdowns, sizeof out->foot_touchdowns);
    mbsi_state_bytes(s, "summary.link_touchdowns", &out->link_touchdowns, sizeof out->link_touchdowns);
    mbsi_state_bytes(s, "summary.link_contact_s", &out->link_contact_s, sizeof out->link_contact_s);
    mbsi_state_bytes(s, "run.link_run_s", &sim->link_run_s, sizeof sim->link_run_s);
    mbsi_state_doubles(s, "summary.max_slip", &out->max_slip, 1);
    mbsi_state_doubles(s, "run.slip", sim->slip_local, 9 * (size_t)sim->sc->ncontacts);
    mbsi_state_doubles(s, "summary.energy_initial", &out->energy_initial, 1);
    mbsi_state_bytes(s, "summary.nonconverged", &out->nonconverged, sizeof out->nonconverged);
    mbsi_state_bytes(s, "summary.substeps", &out->substeps, sizeof out->substeps);
    mbsi_state_doubles(s, "summary.min_alpha", &out->min_alpha, 1);
    mbsi_state_doubles(s, "summary.min_dt", &out->min_dt, 1);
    mbsi_state_bytes(s, "summary.rejected", &out->rejected, sizeof out->rejected);
    mbsi_state_ints(s, "run.touching", sim->touching, (size_t)sim->sc->ncontacts);
    mbsi_state_ints(s, "run.foot_touchdowns", sim->foot_touchdowns, (size_t)sim->sc->ncontacts);
    mbsi_system_state(sim->sys, s);
    mbsi_stepper_state(sim->st, s);
    mbsi_controller_state(sim->ctrl, s);
}

/* Writes the run's checkpoint at the start of period r->k (the CSV flushed and measured first). */
int mbsi_write_checkpoint(mbs_sim *sim, const char *path, run_state *r, mbs_sim_summary *out, csv_out *c,
                     mbsi_state *st, mbs_error *err)
{
    r->csv_offset = -1;
    if (c->f) {
        fflush(c->f);
        if (!c->std) {
            long o = ftell(c->f);
            r->csv_offset = o >= 0 ? o : -1;
        }
    }
    mbsi_state_begin_save(st);
    sim_state(sim, r, out, st);
    if (st->failed) return mbsi_fail(err, MBS_ERR_NOMEM, "cannot write the checkpoint '%s': %s", path, st->msg);
    return mbsi_checkpoint_write(path, sim->sc, st->buf, st->len, err);
}

/* Loads checkpoint path into the sim, r and out (the sim just set to its initial state). */
int mbsi_read_checkpoint(mbs_sim *sim, const char *path, run_state *r, mbs_sim_summary *out, mbs_error *err)
{
    unsigned char *payload;
    size_t n;
    int rc = mbsi_checkpoint_read(path, sim->sc, &payload, &n, err);
    if (rc != MBS_OK) return rc;
    mbsi_state st;
    mbsi_state_begin_load(&st, payload, n);
    sim_state(sim, r, out, &st);
    if (!st.failed && st.pos != st.len) {
        st.failed = 1;
        snprintf(st.msg, sizeof st.msg, "%zu bytes of state left over", st.len - st.pos);
    }
    free(payload);
    if (st.failed) return mbsi_fail(err, MBS_ERR_IO, "checkpoint '%s': does not fit this run: %s", path, st.msg);
    return MBS_OK;
}
