/* error_internal.h — filling an mbs_error from inside the library. */
#ifndef MBS_ERROR_INTERNAL_H
#define MBS_ERROR_INTERNAL_H

#include "mbs/error.h"

/* Sets err (when not NULL) to code and a printf-style message; returns code. */
int mbs_fail(mbs_error *err, int code, const char *fmt, ...) __attribute__((format(printf, 3, 4)));
/* Appends one warning line to err (when not NULL). */
void mbs_warn(mbs_error *err, const char *fmt, ...) __attribute__((format(printf, 2, 3)));

#endif
