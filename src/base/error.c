/* error.c — the error record every fallible call can fill. */
#include <stdarg.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "base.h"

void mbs_error_clear(mbs_error *err)
{
    if (!err) return;
    memset(err, 0, sizeof *err);
}

int mbsi_fail(mbs_error *err, int code, const char *fmt, ...)
{
    if (err) {
        va_list ap;
        va_start(ap, fmt);
        vsnprintf(err->msg, sizeof err->msg, fmt, ap);
        va_end(ap);
        err->code = code;
    }
    return code;
}

void mbs_error_free(mbs_error *err)
{
    if (!err) return;
    free(err->warnings);
    memset(err, 0, sizeof *err);
}

void mbsi_warn(mbs_error *err, const char *fmt, ...)
{
    if (!err) return;
    err->nwarnings++;   /* counted even when its text cannot be kept (out of memory) */
    va_list ap;
    va_start(ap, fmt);
    int n = vsnprintf(NULL, 0, fmt, ap);
    va_end(ap);
    if (n < 0) return;
    size_t used = err->warnings ? err->warnings_len : 0, need = used + (size_t)n + 2;
    /* capacities are powers of two, derived from the length, so appending stays linear overall */
    size_t cap = 256;
    while (cap < used + 1) cap *= 2;
    char *w = err->warnings;
    if (!w || need > cap) {
        while (cap < need) cap *= 2;
        if (!(w = realloc(err->warnings, cap))) return;
        err->warnings = w;
    }
    va_start(ap, fmt);
    vsnprintf(w + used, (size_t)n + 1, fmt, ap);
    va_end(ap);
    w[used + (size_t)n] = '\n';
    w[used + (size_t)n + 1] = 0;
    err->warnings_len = used + (size_t)n + 1;
}
