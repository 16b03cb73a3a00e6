/* fuzz_exercise.h — what the model fuzzers share: the input as a C string, and what they do with a
 * model that loads: mbs_data_new, one RNEA and
 * one ABA at the neutral configuration, one RNEA at each keyframe; everything freed, so that a
 * leak is reported as one. */
#ifndef MBS_FUZZ_EXERCISE_H
#define MBS_FUZZ_EXERCISE_H

#include <stdint.h>
#include <stdlib.h>
#include <string.h>

#include "mbs.h"

/* The input as a C string (the string entry points want a terminating NUL; bytes after an
 * embedded NUL are not read); free it. NULL when out of memory. */
static char *fuzz_cstring(const uint8_t *data, size_t size)
{
    char *s = malloc(size + 1);
    if (!s) return NULL;
    memcpy(s, data, size);
    s[size] = '\0';
    return s;
}

static void fuzz_exercise(const mbs_model *m)
{
    int nq = mbs_model_nq(m), nv = mbs_model_nv(m);
    double *q = calloc((size_t)nq + 1, sizeof *q);
    double *zero = calloc((size_t)nv + 1, sizeof *zero);
    double *tau = calloc((size_t)nv + 1, sizeof *tau);
    double *ddq = calloc((size_t)nv + 1, sizeof *ddq);
    mbs_data *d = mbs_data_new(m);
    if (q && zero && tau && ddq && d) {
        mbs_neutral(m, q);
        mbs_rnea(m, d, q, zero, zero, tau);   /* τ = g(q) */
        mbs_aba(m, d, q, zero, tau, ddq);     /* and back: ddq ≈ 0 */
        for (int k = 0; k < mbs_model_nkeyframes(m); k++) {
            const double *kq, *kv;
            if (mbs_model_keyframe(m, k, &kq, &kv)) mbs_rnea(m, d, kq, kv, zero, tau);
        }
    }
    mbs_data_free(d);
    free(ddq);
    free(tau);
    free(zero);
    free(q);
}

#endif
