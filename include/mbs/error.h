/* mbs/error.h — how the library reports failure.
 * The library never prints, exits or aborts on bad input: a function that can fail returns
 * a non-zero code and, when the caller passes an mbs_error, fills it with a message that
 * names the file, the line and the element or field at fault. */
#ifndef MBS_ERROR_H
#define MBS_ERROR_H

#include <stddef.h>

#ifdef __cplusplus
extern "C" {
#endif

/* what this header declares is the library's interface: exported from libmbs.so, where everything
 * else is hidden (the build compiles with -fvisibility=hidden) */
#if defined(__GNUC__)
#pragma GCC visibility push(default)
#endif

enum {
    MBS_OK = 0,
    MBS_ERR_IO = 1,        /* file missing or unreadable */
    MBS_ERR_PARSE = 2,     /* not well-formed input */
    MBS_ERR_MODEL = 3,     /* well-formed but physically or structurally invalid */
    MBS_ERR_ARG = 4,       /* bad argument from the caller */
    MBS_ERR_NOMEM = 5,
    MBS_ERR_INTERRUPTED = 6, /* the caller asked a run to stop (a progress callback) */
    MBS_ERR_NUMERIC = 7,     /* a computation met or produced NaN or infinity, or a factorisation failed */
    MBS_ERR_INFEASIBLE = 8   /* the constraints of a problem admit no solution (the QP solver) */
};

#define MBS_ERROR_MSG_LEN 512

/* On failure a call fills code and msg. Warnings (a model that loads but is suspect) are
 * collected whole, one line each, in a text on the heap that the record owns: call
 * mbs_error_free(&err) once done with a record that may hold some. The calls that collect
 * warnings (the URDF loaders, mbs_model_finalize, mbs_scenario_load, the sweeps) start by
 * resetting the record, so it may be uninitialised, and forget without freeing what it held. */
typedef struct mbs_error {
    int code;                          /* MBS_OK when nothing went wrong */
    char msg[MBS_ERROR_MSG_LEN];       /* "file:line: element: what is wrong" */
    int nwarnings;                     /* warnings collected (e.g. inertia triangle inequality) */
    char *warnings;                    /* one warning per line, each ending in '\n'; NULL when none */
    size_t warnings_len;               /* strlen(warnings), 0 when none */
} mbs_error;

/* Resets an error record to "no error, no warnings" without freeing anything (safe on an uninitialised one). */
void mbs_error_clear(mbs_error *err);

/* Frees the warnings of a record and resets it. Only for a record that a warning-collecting call
 * above filled, or that mbs_error_clear (or zeroing) prepared: a record another call merely failed
 * into may hold an uninitialised pointer, which this would free. */
void mbs_error_free(mbs_error *err);

#if defined(__GNUC__)
#pragma GCC visibility pop
#endif

#ifdef __cplusplus
}
#endif
#endif
