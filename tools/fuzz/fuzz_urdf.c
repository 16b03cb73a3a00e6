/* fuzz_urdf.c — libFuzzer target for the URDF loader (make fuzz; clang only).
 *
 * Each input is a URDF document handed to mbs_model_from_urdf_string, which shares every
 * step after reading the file with mbs_model_from_urdf. It is loaded twice, with a floating
 * base and with the root fixed to the world under strict inertia checks, since the two build
 * different trees. A model that loads must also survive mbs_data_new and one RNEA and one ABA
 * at the neutral configuration; everything is freed, so that a leak is reported as one. */
#include <stddef.h>
#include <stdint.h>
#include <stdlib.h>
#include <string.h>

#include "mbs.h"

int LLVMFuzzerTestOneInput(const uint8_t *data, size_t size);

static void exercise(const mbs_model *m)
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
    }
    mbs_data_free(d);
    free(ddq);
    free(tau);
    free(zero);
    free(q);
}

int LLVMFuzzerTestOneInput(const uint8_t *data, size_t size)
{
    /* the string entry point wants a terminating NUL; bytes after an embedded NUL are not read */
    char *xml = malloc(size + 1);
    if (!xml) return 0;
    memcpy(xml, data, size);
    xml[size] = '\0';
    static const mbs_urdf_options opts[2] = {{.floating_base = 1}, {.strict = 1}};
    for (int k = 0; k < 2; k++) {
        mbs_error err;
        mbs_model *m = mbs_model_from_urdf_string(xml, "fuzz.urdf", &opts[k], &err);
        if (m) exercise(m);
        mbs_model_free(m);
        mbs_error_free(&err);
    }
    free(xml);
    return 0;
}
