/* base.h — what every layer of the library may use: filling an mbs_error, π, a string copy,
 * and the one buffer carver that lays out every allocation of the library. Includes nothing
 * of the library but the public error record. */
#ifndef MBS_BASE_H
#define MBS_BASE_H

#include <stddef.h>

#include "mbs/error.h"

#define MBS_PI 3.14159265358979323846   /* M_PI is not ISO C */

/* Sets err (when not NULL) to code and a printf-style message; returns code. */
int mbs_fail(mbs_error *err, int code, const char *fmt, ...) __attribute__((format(printf, 3, 4)));
/* Appends one warning line to err (when not NULL). */
void mbs_warn(mbs_error *err, const char *fmt, ...) __attribute__((format(printf, 2, 3)));

/* A copy of s from malloc, NULL when out of memory (the caller reports). */
char *mbs_strdup(const char *s);

/* The buffer carver: a layout function asks for its arrays one by one from a carver; run
 * once with no block it only adds up the size (mbs_carver_size), run again on the block
 * from mbs_carver_alloc it hands out the arrays, each 64-byte aligned and zeroed. One block
 * per object, so that create and free are one call each and nothing is allocated later. */
typedef struct mbs_carver {
    char *base;       /* NULL while counting */
    size_t used;      /* bytes handed out so far */
} mbs_carver;

void *mbs_carve(mbs_carver *c, size_t bytes);
static inline double *mbs_carve_doubles(mbs_carver *c, size_t n) { return (double *)mbs_carve(c, n * sizeof(double)); }
static inline int *mbs_carve_ints(mbs_carver *c, size_t n) { return (int *)mbs_carve(c, n * sizeof(int)); }
/* A zeroed, 64-byte aligned block of the size the counting pass found (c->used), and c
 * rewound onto it for the second pass; NULL when out of memory. Free it with free(). */
void *mbs_carver_alloc(mbs_carver *c);

#endif
