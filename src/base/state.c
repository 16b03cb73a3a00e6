/* state.c — the state stream of checkpoints: one visitor per object type calls
 * mbsi_state_bytes for each field that persists, and the same call saves or loads it, so that
 * save and load cannot disagree. Each field is framed by a 32-bit hash of its name and its size
 * (64 bits): a load that meets another field than the one it expects stops there with a message
 * naming it. Native byte order: a checkpoint is read back on the machine (and build) that wrote it. */
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "base.h"

uint64_t mbsi_fnv1a(const void *p, size_t n, uint64_t h)
{
    const unsigned char *b = p;
    for (size_t i = 0; i < n; i++) {
        h ^= b[i];
        h *= 0x100000001b3ull;
    }
    return h;
}

void mbsi_state_begin_save(mbsi_state *s)
{
    s->load = 0;
    s->len = s->pos = 0;
    s->failed = 0;
    s->msg[0] = '\0';
}

void mbsi_state_begin_save_fixed(mbsi_state *s, unsigned char *buf, size_t n)
{
    memset(s, 0, sizeof *s);
    s->fixed = 1;
    s->buf = buf;
    s->cap = buf ? n : 0;
}

void mbsi_state_begin_load(mbsi_state *s, const unsigned char *buf, size_t n)
{
    memset(s, 0, sizeof *s);
    s->load = 1;
    s->buf = (unsigned char *)buf;
    s->len = n;
}

void mbsi_state_begin_snapshot(mbsi_state *s, unsigned char *buf, size_t n)
{
    mbsi_state_begin_save_fixed(s, buf, n);
    s->raw = 1;
}

void mbsi_state_begin_reload(mbsi_state *s, const unsigned char *buf, size_t n)
{
    mbsi_state_begin_load(s, buf, n);
    s->raw = 1;
}

void mbsi_state_free(mbsi_state *s)
{
    if (!s->load && !s->fixed) free(s->buf);
    s->buf = NULL;
    s->len = s->cap = s->pos = 0;
}

/* Appends n bytes (save). */
static void put(mbsi_state *s, const void *p, size_t n)
{
    if (s->failed) return;
    if (s->fixed) {
        /* the caller's bytes: counted without a buffer, refused beyond its room */
        if (s->buf && s->len + n > s->cap) {
            s->failed = 1;
            snprintf(s->msg, sizeof s->msg, "the state needs more than the %zu bytes given", s->cap);
            return;
        }
        if (s->buf && n) memcpy(s->buf + s->len, p, n);
        s->len += n;
        return;
    }
    if (s->len + n > s->cap) {
        size_t cap = s->cap ? s->cap : 4096;
        while (cap < s->len + n) cap *= 2;
        unsigned char *b = realloc(s->buf, cap);
        if (!b) {
            s->failed = 1;
            snprintf(s->msg, sizeof s->msg, "out of memory");
            return;
        }
        s->buf = b;
        s->cap = cap;
    }
    if (n) memcpy(s->buf + s->len, p, n);
    s->len += n;
}

/* Takes n bytes (load); 0 when there are not that many left. */
static int take(mbsi_state *s, void *p, size_t n, const char *name)
{
    if (s->failed) return 0;
    if (s->len - s->pos < n) {
        s->failed = 1;
        snprintf(s->msg, sizeof s->msg, "the state ends inside field '%s'", name);
        return 0;
    }
    if (n) memcpy(p, s->buf + s->pos, n);
    s->pos += n;
    return 1;
}

/* A field's tag: a hash of its name taken 8 bytes at a time. Every save and load hashes every
 * name (a controller saves its stepper at each knot of a plan), and a byte-wise hash's chain of
 * multiplies was most of a save's time. */
static uint32_t field_tag(const char *name)
{
    size_t n = strlen(name);
    uint64_t h = 0x9e3779b97f4a7c15ull ^ n, w;
    for (; n >= 8; n -= 8, name += 8) {
        memcpy(&w, name, 8);
        h = (h ^ w) * 0xff51afd7ed558ccdull;
        h ^= h >> 32;
    }
    w = 0;
    memcpy(&w, name, n);
    h = (h ^ w) * 0xc4ceb9fe1a85ec53ull;
    return (uint32_t)(h ^ (h >> 29));
}

void mbsi_state_bytes(mbsi_state *s, const char *name, void *p, size_t n)
{
    if (s->raw) {
        if (s->load) take(s, p, n, name);
        else put(s, p, n);
        return;
    }
    uint32_t tag = field_tag(name);
    uint64_t size = n;
    if (!s->load) {
        put(s, &tag, sizeof tag);
        put(s, &size, sizeof size);
        put(s, p, n);
        return;
    }
    uint32_t t;
    uint64_t z;
    if (!take(s, &t, sizeof t, name) || !take(s, &z, sizeof z, name)) return;
    if (t != tag) {
        s->failed = 1;
        snprintf(s->msg, sizeof s->msg, "field '%s' expected, another found (at byte %zu of the state)", name,
                 s->pos - sizeof t - sizeof z);
        return;
    }
    if (z != size) {
        s->failed = 1;
        snprintf(s->msg, sizeof s->msg, "field '%s' holds %llu bytes, %llu expected", name, (unsigned long long)z,
                 (unsigned long long)size);
        return;
    }
    take(s, p, n, name);
}
