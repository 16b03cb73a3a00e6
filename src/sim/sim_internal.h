/* sim_internal.h — the sim layer's private pieces: loading a scenario from text in memory (for
 * the fuzzer) and where a scenario key was set. */
#ifndef MBS_SIM_INTERNAL_H
#define MBS_SIM_INTERNAL_H

#include <stddef.h>

#include "../base/base.h"
#include "../control/control_internal.h"
#include "../model/model_internal.h"
#include "../contact/contact_internal.h"
#include "mbs/contact.h"
#include "mbs/control.h"
#include "mbs/dynamics.h"
#include "mbs/liegroup.h"
#include "mbs/sim.h"
#include "mbs/step.h"

/* mbs_scenario_load on a text already in memory (len bytes, no NUL needed at the end): `path`
 * names it in messages and the [model] urdf is resolved against its folder, as for a file.
 * mbs_scenario_load reads the file and calls this; the fuzzer (tools/fuzz_scenario.c) calls it
 * directly. */
mbs_scenario *mbsi_scenario_load_text(const char *path, const char *text, size_t len, const char *const *overrides,
                                     int noverrides, mbs_error *err);

/* The options of section `scheme` (a stepper's name or "controller") as key/value pairs into
 * opts (at most MBS_SIM_MAX_OPTIONS), with each one's index into sc->options in idx (may be
 * NULL); returns how many. */
int mbsi_scenario_scheme_options(const mbs_scenario *sc, const char *scheme, mbs_option *opts, int *idx);
/* Writes into buf the prefix of a message about option i of sc->options: "file:line: [section]
 * key" or "file: --set section.key=value". */
void mbsi_scenario_option_where(const mbs_scenario *sc, int i, char *buf, size_t n);

#endif
