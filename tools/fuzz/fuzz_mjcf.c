/* fuzz_mjcf.c — libFuzzer target for the MJCF loader (make fuzz; clang only).
 *
 * Each input is an MJCF document handed to mbs_model_from_mjcf_string, which shares every step
 * after reading the file with mbs_model_from_mjcf. Its name puts it in tests/models/mjcf/, so that
 * an <include> of the seeds' parts/ resolves (a file name the fuzzer invents fails like any
 * missing file). A model that loads must also survive mbs_data_new, one RNEA and one ABA at the
 * neutral configuration, and its keyframes; everything is freed, so that a leak is reported. */
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
    mbs_error err;
    mbs_model *m = mbs_model_from_mjcf_string(xml, MBS_SOURCE_DIR "/tests/models/mjcf/fuzz.xml", NULL, &err);
    if (m) fuzz_exercise(m);
    mbs_model_free(m);
    mbs_error_free(&err);
    free(xml);
    return 0;
}
