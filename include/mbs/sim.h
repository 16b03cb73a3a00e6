/* mbs/sim.h — scenarios and the simulation loop: a scenario file (INI, see docs/scenarios.md)
 * names a model, its initial posture, contact points and environment, a controller, a stepper
 * and a duration; the loop calls the controller every controller period and the stepper in
 * sub-steps of dt in between, watches for divergence (and for the base leaving the scenario's
 * box, a status of its own) and logs a CSV trajectory.
 *
 * Everything that can be wrong in a scenario is found by mbs_scenario_load and reported as
 * "file:line: [section] key: what is wrong" (or "file: --set section.key=value: ..." for an
 * override), so a user sees every mistake before a run starts. */
#ifndef MBS_SIM_H
#define MBS_SIM_H

#include <stddef.h>

#include "contact.h"
#include "control.h"
#include "step.h"

#ifdef __cplusplus
extern "C" {
#endif

/* what this header declares is the library's interface: exported from libmbs.so, where everything
 * else is hidden (the build compiles with -fvisibility=hidden) */
#if defined(__GNUC__)
#pragma GCC visibility push(default)
#endif

#define MBS_PATH_LEN 1024
#define MBS_SIM_MAX_CONTACTS 256
#define MBS_SIM_MAX_SCHEMES 16      /* scheme sections ([expo], [implicit_euler] ...) per scenario */
#define MBS_SIM_MAX_OPTIONS 64      /* stepper and controller options over all sections */
#define MBS_SIM_MAX_PUSHES 16       /* [run] push lines per scenario */

/* A scenario as loaded: opaque, read through the functions below. */
typedef struct mbs_scenario mbs_scenario;

/* Reads a scenario file, applies the overrides ("section.key=value" each, as `./sim --set`
 * takes them), checks every key, loads the model and resolves joint and frame names.
 * Returns NULL with err filled on any error; URDF warnings are left in err->warnings. */
mbs_scenario *mbs_scenario_load(const char *path, const char *const *overrides, int noverrides,
                                mbs_error *err);
/* Frees a scenario and its model (NULL is fine); free its sims first. */
void mbs_scenario_free(mbs_scenario *sc);
const mbs_model *mbs_scenario_model(const mbs_scenario *sc);     /* loaded; owned by the scenario */
const double *mbs_scenario_q0(const mbs_scenario *sc);           /* nq: the initial configuration */
/* nv: the initial velocity ([model] base_velocity in the root's body-frame coordinates, v.JOINT) */
const double *mbs_scenario_v0(const mbs_scenario *sc);
const char *mbs_scenario_controller(const mbs_scenario *sc);     /* [controller] type */
double mbs_scenario_controller_dt(const mbs_scenario *sc);       /* [controller] dt (s) */
const char *mbs_scenario_stepper(const mbs_scenario *sc);        /* [stepper] name */
double mbs_scenario_dt(const mbs_scenario *sc);                  /* [stepper] dt (s) */
double mbs_scenario_duration(const mbs_scenario *sc);            /* [run] duration (s) */
const char *mbs_scenario_csv(const mbs_scenario *sc);            /* [output] csv: "" none, "-" stdout */
const char *mbs_scenario_html(const mbs_scenario *sc);           /* [output] html: "" none */
const mbs_material *mbs_scenario_material(const mbs_scenario *sc);   /* [contact]: of every geometry */
/* The options of section `scheme` (a stepper's name, or "controller") as key/value pairs into
 * opts (room for max; the strings live as long as the scenario); returns how many there are. */
int mbs_scenario_options(const mbs_scenario *sc, const char *scheme, mbs_option *opts, int max);
/* Where a key was set: its line in the file, 0 for a --set override, -1 when absent. */
int mbs_scenario_line(const mbs_scenario *sc, const char *section, const char *key);
/* Writes "file:line: [section] key" (or "file: --set section.key" or "file: [section] key")
 * into buf, the prefix of every message about that key. */
void mbs_scenario_where(const mbs_scenario *sc, const char *section, const char *key, char *buf, size_t n);

/* Builds a system of the scenario's model as the scenario describes it: its contact points, the
 * planes and boxes of its environment, and its initial state (mbs_system_set_state with q0, v0, t = 0)
 * — what mbs_sim_new does, for a program (or a batch's setup callback) that makes its own systems.
 * sys must have room for mbs_scenario's contacts; its model is the scenario's or one with the same
 * joints (nq, nv, bodies: a variant whose inertias differ, as mbs_batch_config's models). MBS_OK or an error code with err filled. */
int mbs_scenario_setup_system(const mbs_scenario *sc, mbs_system *sys, mbs_error *err);

/* ---- the simulation ---- */
typedef struct mbs_sim mbs_sim;

/* The system (model, contacts, environment), the controller and the stepper of a scenario,
 * with every scheme section's options checked by its scheme. sc must outlive the sim. */
mbs_sim *mbs_sim_new(const mbs_scenario *sc, mbs_error *err);
/* Frees a sim, its system, controller and stepper (NULL is fine). */
void mbs_sim_free(mbs_sim *sim);
/* The system the sim advances (state, contacts), for callers that inspect it. */
mbs_system *mbs_sim_system(mbs_sim *sim);
/* The stepper the sim steps with (mbs_stepper_save / mbs_stepper_restore of its state). */
mbs_stepper *mbs_sim_stepper(mbs_sim *sim);
/* A program's own control, called each controller period after the scenario's controller (whose
 * τ it receives and may change), like MuJoCo's control callback; NULL removes it. */
void mbs_sim_set_control(mbs_sim *sim, mbs_control_callback cb, void *user);

/* Called once per controller period with the simulated time; a non-zero return stops the run
 * (an interrupt) at the end of that period: the CSV keeps every row up to then, the summary is
 * filled (summary->interrupted) and mbs_sim_run returns MBS_ERR_INTERRUPTED. */
typedef int (*mbs_sim_progress)(void *user, double t, double duration);

/* Called when a contact point starts (touching = 1) or stops (0) touching: at the end of the step,
 * or of the sub-step of a scheme that splits its steps at contact events (expo), that shows it, with
 * the system's time there (s). These are the events the summary's touchdowns count (a point touching
 * in the initial state is none); contact indexes mbs_system_contact. For a program that wants when
 * each point landed and left, finer than the once-per-period state a control callback sees. */
typedef void (*mbs_sim_contact_event)(void *user, double t, int contact, int touching);

typedef struct mbs_sim_run_options {
    const char *csv;                  /* NULL: the scenario's [output] csv; "": none; "-": stdout */
    mbs_sim_progress progress;        /* may be NULL */
    void *user;
    /* NULL: the scenario's [output] html; "": none; else the path of a self-contained HTML page that
     * replays the run in 3D with plots (one frame per controller period, at most 100 per simulated
     * second and MBS_REPLAY_MAX_FRAMES in all: mbs_sim_replay_interval), written when the run ends,
     * also when it diverged or was interrupted */
    const char *html;
    /* NULL or "": no checkpoints; else the file the run's complete state (system, stepper, controller,
     * the summary's figures, the CSV's length) is written to, as "<path>.tmp" renamed, at the end of
     * a controller period every checkpoint_every simulated seconds, and when the progress callback
     * stops the run */
    const char *checkpoint;
    double checkpoint_every;          /* s; 0: only when the run is stopped */
    /* NULL or "": the run starts from the scenario's initial state; else a checkpoint of the same
     * scenario (file, keys and overrides) to continue from: the run goes on bitwise as the one that
     * wrote it would have, its CSV truncated to the checkpoint's length and appended to. A truncated,
     * corrupted or mismatched file is an MBS_ERR_IO naming the file and what is wrong. */
    const char *resume;
    mbs_sim_contact_event contact_event;   /* may be NULL; called with user */
} mbs_sim_run_options;

typedef struct mbs_sim_summary {
    char model[MBS_NAME_LEN], stepper[MBS_NAME_LEN], controller[MBS_NAME_LEN];
    double dt, controller_dt;
    double sim_time;                  /* simulated time reached */
    double wall_time_s;               /* the whole loop: controller, steps, checks, logging */
    long steps;
    double us_per_step;               /* stepper time per step (controller and logging excluded) */
    double realtime_factor;           /* sim_time / wall_time_s */
    double max_penetration;           /* deepest contact penetration seen after a step (m) */
    double max_contact_force;         /* largest contact force norm seen after a step (N) */
    /* the base figures need a floating root (free flyer, or planar: y = roll = yaw = 0); 0 without */
    int has_base;                     /* 1: the model has a floating root, and the summary text shows them */
    double base_final[6];             /* x y z (m), roll pitch yaw (rad, R = Rz Ry Rx) */
    double distance_m;                /* horizontal base displacement from the start (m) */
    double base_z_min, base_z_max;    /* over the run, sampled every step (m) */
    double max_tilt_deg;              /* largest angle between the base z axis and the vertical (degrees) */
    double airborne_s;                /* time with no active contact (s) */
    long touchdowns;                  /* contact points going from free to touching after a step, or between
                                         the sub-steps of a scheme that splits its steps at contact events
                                         (expo); a point touching in the initial state is none */
    long foot_touchdowns;             /* feet going from no point touching to one touching, counted as
                                         touchdowns, a foot being the contact points on one frame (Romeo's four
                                         sole corners; one point per foot: equal to touchdowns); a link's
                                         capsules and boxes are not feet */
    long max_foot_touchdowns;         /* the most foot_touchdowns of one foot, and that foot's frame (the first
                                         such foot; "" without feet) */
    char max_foot[MBS_NAME_LEN];
    double energy_initial, energy_final;   /* kinetic + gravity's potential energy at the start and the
                                         end (J; the contact springs' energy is not counted) */
    long nonconverged;                /* steps whose solver reported non-convergence */
    double mean_iterations;           /* solver iterations per step (implicit schemes) */
    long substeps;                    /* sub-steps a sub-stepping scheme took (0: none reported) */
    double min_alpha;                 /* the smallest fraction of dt such a scheme stepped by (1: none) */
    /* schemes that choose their sub-steps (conservative advancement, error control) */
    double mean_dt;                   /* sim_time / substeps (s); 0 when no sub-steps were reported */
    double min_dt;                    /* the shortest sub-step (s); 0: no step reported one */
    long rejected;                    /* sub-steps tried and refused by error control */
    int diverged;                     /* 1: the run diverged (the stepper's error, e.g. a state that is
                                         not finite, or a velocity above the bound) and stopped, see reason */
    int left_box;                     /* 1: the base left the scenario's [run] box and the run stopped there
                                         (not a divergence); reason says which coordinate and the box */
    int interrupted;                  /* 1: the progress callback stopped the run (its figures up to then) */
    double diverged_t;                /* when the run stopped, diverged, left_box or interrupted */
    char reason[MBS_ERROR_MSG_LEN + 64];
    /* FNV-1a 64 of the bits of the final t, q and v: two runs ended in the same state when they agree
     * (a resumed run and an uninterrupted one); printed in hex */
    unsigned long long final_state_hash;
    /* the controller's own figures as "key: value" lines (an optimiser's iterations and time, ...);
     * "" for most controllers */
    char controller_report[1024];
    /* a link's geometry (capsules, boxes: mbs_system_add_capsule): its points going from free to
     * touching, and the longest time one of them stayed touching (s); shown when there is one */
    int has_link_geometry;
    long link_touchdowns;
    double link_contact_s;
    /* the largest slip of a contact while it touched: the tangential displacement of the body point
     * under it, summed controller period by period from the period after it touched down (so a
     * landing's own period is not counted) until it left (m): a stance foot that creeps or slides shows here */
    double max_slip;
} mbs_sim_summary;

/* Runs the scenario from its initial state (or from the checkpoint opt->resume names) for its
 * duration (once per sim), writing checkpoints as opt says. Returns MBS_OK when
 * the run ended — stable, diverged or out of the box, see summary->diverged and ->left_box — or
 * an error code when it could not run or was interrupted. The CSV path is checked and opened
 * before the first step (a directory or an unwritable path is an MBS_ERR_IO naming it). "-" is
 * stdout; a FIFO, a character device or a symlink is written through as it is (the link stays a
 * link, its target gets the rows); a regular file or a new path is written to "<csv>.tmp" and
 * renamed to <csv> when the run ends (a run that cannot finish writing never leaves a truncated
 * file under the requested name; an interrupted run ends cleanly at a period and keeps its rows). */
int mbs_sim_run(mbs_sim *sim, const mbs_sim_run_options *opt, mbs_sim_summary *summary, mbs_error *err);
/* Advances the sim by one controller period from its current state (the scenario's initial state
 * at first) for a program that steps it itself, e.g. a controller in Python: with use_controller the
 * scenario's controller computes τ first, then the callback of mbs_sim_set_control (if any); else τ
 * is what mbs_system_set_tau last set. Then the stepper's steps of dt. No CSV, summary or checks but
 * the stepper's own. Returns MBS_OK or the stepper's error (MBS_ERR_NUMERIC for a state that is not
 * finite). A sim is either run (mbs_sim_run) or stepped, not both. */
int mbs_sim_step(mbs_sim *sim, int use_controller, mbs_error *err);
/* The keys of a scenario section ("model", "contact", "environment", "controller", "stepper",
 * "run", "output") as the markdown table docs/scenarios.md holds: key, value (what it does,
 * range, unit), default. Writes into buf (n bytes), returns the length needed. */
int mbs_scenario_keys_markdown(const char *section, char *buf, size_t n);
/* Every controller's and every stepper's options, from their tables: markdown = 1 the block
 * docs/scenarios.md holds (a test checks they agree), 0 the text of ./sim --help. Writes into
 * buf (n bytes) and returns the length needed, as snprintf. */
int mbs_sim_options_text(int markdown, char *buf, size_t n);
/* The replay page (run option html) holds at most this many frames: over a long run it keeps
 * fewer frames per simulated second, so that the page stays small enough to open (Solo: about
 * 1 kB of page a frame, Romeo 2.5 kB) and the run never fails for the memory of its frames. */
#define MBS_REPLAY_MAX_FRAMES 20000
/* The simulated time (s) between two frames of the replay page of a run of sc: its controller
 * period, at least 0.01 s (100 frames per simulated second), into *unthinned (may be NULL); the
 * return value is that, or longer when a run of sc's duration would need more than
 * MBS_REPLAY_MAX_FRAMES frames at that rate (the page and `./sim` then say so). */
double mbs_sim_replay_interval(const mbs_scenario *sc, double *unthinned);
/* sizeof(mbs_sim_summary), for bindings that hold one as opaque bytes. */
size_t mbs_sim_summary_size(void);
/* The summary as "key: value" lines (the keys of ./sim's output); returns the length needed. */
int mbs_sim_summary_format(const mbs_sim_summary *s, char *buf, size_t n);

/* ---- parameter sweeps ---- */
/* The cartesian product of values of some scenario keys, one run per combination (./sim --sweep,
 * ./sim-mpi). Combination i is fixed by i alone (the last key varies fastest), and a run depends on
 * nothing else, so combinations can be run in any order, on threads or MPI ranks, and give the same
 * row (but for the wall-clock columns wall_time_s, us_per_step and realtime_factor). */
typedef struct mbs_sweep mbs_sweep;
/* A sweep of scenario `path` with fixed overrides `sets` (nsets, as --set takes them) and the swept
 * keys `sweeps` (nsweeps >= 1, each "section.key=V1,V2,..."). Every value is checked by loading the
 * scenario with it before anything runs: NULL with err naming the file, the line or the override. */
mbs_sweep *mbs_sweep_new(const char *path, const char *const *sets, int nsets, const char *const *sweeps, int nsweeps,
                         mbs_error *err);
void mbs_sweep_free(mbs_sweep *sw);   /* NULL is fine */
long mbs_sweep_size(const mbs_sweep *sw);   /* combinations */
/* The CSV header line (with its newline): the swept keys, then every summary key. Returns the length
 * needed, as snprintf. */
int mbs_sweep_header(const mbs_sweep *sw, char *buf, size_t n);
/* Runs combination i (0 <= i < size) and writes its CSV row (with its newline) into row (n bytes;
 * 8192 is plenty): the swept values, then the summary's values (empty for a key the run does not
 * print; quoted when they hold a comma). progress (may be NULL) is the run's, as in
 * mbs_sim_run_options. Thread-safe: one sweep may run several combinations at once. Returns MBS_OK,
 * or an error code (MBS_ERR_INTERRUPTED when progress stopped it) and no row. */
int mbs_sweep_run(const mbs_sweep *sw, long i, mbs_sim_progress progress, void *user, char *row, size_t n,
                  mbs_error *err);

#if defined(__GNUC__)
#pragma GCC visibility pop
#endif

#ifdef __cplusplus
}
#endif
#endif
