/* checkpoint.c — the checkpoint file: a header naming what wrote it, the state stream the run's
 * visitors saved (src/base/state.c), and a checksum. Layout (native byte order):
 *   "MBS-CKPT"  8 bytes     magic
 *   version     u32         CKPT_VERSION
 *   order       u32         0x01020304, as the writer stored it (another byte order is refused)
 *   identity    u64         mbsi_scenario_identity
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

#include "ini.h"
#include "sim_internal.h"

#define CKPT_MAGIC "MBS-CKPT"
#define CKPT_VERSION 2u
#define CKPT_ORDER 0x01020304u
#define CKPT_NAME 64
#define CKPT_HEADER (8 + 4 + 4 + 8 + 4 + 4 + CKPT_NAME + CKPT_NAME + 8)

uint64_t mbsi_scenario_identity(const mbs_scenario *sc)
{
    /* the sum of the entries' hashes: the same entries in another order (overrides given in
     * another order) are the same scenario */
    uint64_t sum = 0;
    for (int i = 0; i < sc->nentries; i++) {
        const mbs_scenario_entry *e = &sc->entries[i];
        if (e->dead) continue;
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
