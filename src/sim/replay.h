/* replay.h — the replay page of a run (./sim --html): frames recorded during the run into a
 * buffer sized before it, then one self-contained HTML file written at its end. */
#ifndef MBS_SIM_REPLAY_H
#define MBS_SIM_REPLAY_H

#include "sim_internal.h"

typedef struct mbsi_replay mbsi_replay;

/* Controller periods between two frames of the replay of a run of nperiods periods of cdt
 * seconds: 1, or enough for at most 100 frames per simulated second, and more when the run
 * would otherwise record more than max_frames frames (it records at most nperiods / every + 2:
 * every every-th period from the first, and the end). */
long mbsi_replay_every(double cdt, long nperiods, long max_frames);
/* A recorder for up to max_frames frames of system s (its model, contacts and environment).
 * Allocates everything it will use; NULL with err filled when out of memory. */
mbsi_replay *mbsi_replay_new(const mbs_system *s, long max_frames, mbs_error *err);
void mbsi_replay_free(mbsi_replay *r);
/* Records the state of s at time t: each body's world placement (forward kinematics), each
 * contact's point, force and state, the base's height and tilt and the energies. A frame
 * beyond max_frames is dropped. No allocation. */
void mbsi_replay_record(mbsi_replay *r, const mbs_system *s, double t);
/* Writes the page to path (through "<path>.tmp", renamed): the header figures (scenario path,
 * stepper, controller, dt, controller_dt), the shapes of the bodies, the environment and the
 * contacts of s (the system recorded), the frames and the summary text; interval is the simulated
 * time between frames, and when the frame budget made it longer than unthinned (the interval
 * without the budget), a note on the page says so. */
int mbsi_replay_write(const mbsi_replay *r, const mbs_system *s, const char *path, const mbs_scenario *sc,
                      const char *summary, double interval, double unthinned, mbs_error *err);
/* Checks before a run that path can be written (not a directory, its folder writable), so that a
 * bad path fails before the run rather than after it. */
int mbsi_replay_check_path(const char *path, mbs_error *err);

/* The page around the data (generated at build time from src/sim/replay.html and the libraries
 * of third_party/ by tools/gen/embed_replay.py): head, then the data as JSON, then tail. */
extern const char mbsi_replay_head[];
extern const char mbsi_replay_tail[];

#endif
