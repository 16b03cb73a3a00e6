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
#include "fuzz_exercise.h"

int LLVMFuzzerTestOneInput(const uint8_t *data, size_t size);

int LLVMFuzzerTestOneInput(const uint8_t *data, size_t size)
{
    char *xml = fuzz_cstring(data, size);
    if (!xml) return 0;
    static const mbs_urdf_options opts[2] = {{.floating_base = 1}, {.strict = 1}};
    for (int k = 0; k < 2; k++) {
        mbs_error err;
        mbs_model *m = mbs_model_from_urdf_string(xml, "fuzz.urdf", &opts[k], &err);
        if (m) fuzz_exercise(m);
        mbs_model_free(m);
        mbs_error_free(&err);
    }
    free(xml);
    return 0;
}
