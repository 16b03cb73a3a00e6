/* error.c — the error record every fallible call can fill. */
#include <stdarg.h>
#include <stdio.h>
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

void mbsi_warn(mbs_error *err, const char *fmt, ...)
{
    if (!err) return;
    size_t used = strlen(err->warnings);
    if (used + 2 < sizeof err->warnings) {
        va_list ap;
        va_start(ap, fmt);
        int n = vsnprintf(err->warnings + used, sizeof err->warnings - used - 1, fmt, ap);
        va_end(ap);
        used = strlen(err->warnings);
        if (n >= 0 && used + 1 < sizeof err->warnings) { err->warnings[used] = '\n'; err->warnings[used + 1] = 0; }
    }
    err->nwarnings++;
}
