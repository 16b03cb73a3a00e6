/* alloc.c — the library's allocation and text helpers: a string copy, a word splitter, a text
 * appender and the buffer carver. */
#include <stdarg.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "base.h"

char *mbsi_strdup(const char *s)
{
    size_t n = strlen(s) + 1;
    char *c = malloc(n);
    if (c) memcpy(c, s, n);
    return c;
}

int mbsi_next_word(const char **p, char *word, size_t n)
{
    const char *s = *p;
    while (*s == ' ' || *s == '\t' || *s == ',') s++;
    const char *w = s;
    while (*s && *s != ' ' && *s != '\t' && *s != ',') s++;
    *p = s;
    size_t len = (size_t)(s - w);
    word[0] = '\0';
    if (len >= n) return -1;
    memcpy(word, w, len);
    word[len] = '\0';
    return (int)len;
}

void mbsi_textf(mbs_text *b, const char *fmt, ...)
{
    va_list ap;
    va_start(ap, fmt);
    int k = vsnprintf(b->len < b->n ? b->p + b->len : NULL, b->len < b->n ? b->n - b->len : 0, fmt, ap);
    va_end(ap);
    if (k > 0) b->len += (size_t)k;
}

#define CARVE_ALIGN 64

void *mbsi_carve(mbs_carver *c, size_t bytes)
{
    void *p = c->base ? c->base + c->used : NULL;
    /* every array starts on a cache line: no false sharing, aligned vector loads */
    c->used += (bytes + CARVE_ALIGN - 1) & ~(size_t)(CARVE_ALIGN - 1);
    return p;
}

void *mbsi_carver_alloc(mbs_carver *c)
{
    size_t n = c->used ? c->used : CARVE_ALIGN;
    char *b = aligned_alloc(CARVE_ALIGN, n);
    if (b) memset(b, 0, n);
    c->base = b;
    c->used = 0;
    return b;
}
