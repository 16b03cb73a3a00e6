/* fuzz_scenario.c — libFuzzer target for the scenario parser (make fuzz; clang only).
 *
 * Each input is the text of a scenario file, handed to mbsi_scenario_load_text (which
 * mbs_scenario_load calls after reading the file) under the name scenarios/fuzz.ini of the
 * source tree, so that a seed's "urdf = ../urdf/solo12.urdf" finds the project's models. A
 * scenario that loads is also turned into a sim (the stepper checks its scheme options there)
 * and everything is freed, so that a leak is reported as one. Nothing is run. */
#include <stddef.h>
#include <stdint.h>

#include "mbs.h"
#include "../../src/sim/sim_internal.h"

#ifndef MBS_SOURCE_DIR
#define MBS_SOURCE_DIR "."
#endif

int LLVMFuzzerTestOneInput(const uint8_t *data, size_t size);

int LLVMFuzzerTestOneInput(const uint8_t *data, size_t size)
{
    mbs_error err;
    mbs_scenario *sc = mbsi_scenario_load_text(MBS_SOURCE_DIR "/scenarios/fuzz.ini", (const char *)data, size, NULL, 0, &err);
    if (sc) mbs_sim_free(mbs_sim_new(sc, &err));
    mbs_scenario_free(sc);
    mbs_error_free(&err);
    return 0;
}
