/* run.h — what the files of a run share: the sim object, the CSV's handle, the loop's locals that
 * a checkpoint holds, and the stages run.c calls in csv.c, summary.c and checkpoint.c.
 * Folder-private. */
#ifndef MBS_SIM_RUN_H
#define MBS_SIM_RUN_H

#include <stdio.h>

#include "sim_internal.h"

/* The opaque mbs_sim of mbs/sim.h: a scenario's system, stepper and controller, and what a run
 * keeps between steps. */
struct mbs_sim {
    const mbs_scenario *sc;
    mbs_system *sys;
    mbs_stepper *st;
    mbs_controller *ctrl;
    mbs_control_callback user_control;
    void *user;
    int root;          /* MBS_ROOT_FIXED, _FREE or _PLANAR: the base's box and the summary's base figures */
    int *touching;     /* ncontacts: each contact's active flag after the last step, for touchdowns */
    int *foot;         /* ncontacts: the first contact on the same frame (a foot's points share one) */
    int *foot_touchdowns;  /* ncontacts: at a foot's first contact, its touch-downs in this run */
    double link_run_s; /* how long a point of a link's geometry has touched without a break (s) */
    /* each contact's slip while it touches (max_slip_m): the body point under it after the last
     * step (frame coordinates) and its world place then, and the tangential slip summed since it
     * touched (3 each per contact); NULL without contacts */
    double *slip_local, *slip_world, *slip_sum;
    mbs_data *energy;  /* the summary's energies, apart from the stepper's data */
    mbs_sim_summary *counting;   /* during mbs_sim_run: the summary the substep callback counts into */
    const mbs_sim_run_options *opt;   /* during mbs_sim_run: the caller's options (contact_event) */
    int nsub;          /* steps per controller period */
    /* [run] push (none: NULL): the controller's τ of the period, to which each step adds the
     * pushes' generalised force Jᵀf, J (6 x nv) the base origin's Jacobian at the root's frame */
    double *tau_held, *push_J;
    int push_frame;
    int ran;
};

/* Where the CSV goes. */
typedef struct csv_out {
    FILE *f;                          /* NULL: no CSV */
    const char *path;                 /* as the caller gave it, for messages */
    char tmp[MBS_PATH_LEN + 8];       /* "<path>.tmp", renamed at the end; "" when written through */
    int std;                          /* "-": stdout, which is flushed, never closed */
} csv_out;

/* What of mbs_sim_run's own locals a checkpoint holds. */
typedef struct run_state {
    long k;                /* the controller period the run goes on with */
    long long csv_offset;  /* the CSV's length then (bytes); -1: not measurable */
    double x0, y0;         /* where the base started */
    long iters;            /* solver iterations so far */
} run_state;

/* The sum of the scenario's pushes acting at time t (N, world axes). */
void mbsi_push_force(const mbs_scenario *sc, double t, double f[3]);

/* ---- csv.c ---- */
/* One row: t, q, v, the actuated joints' τ, each contact's force and state, and the push acting
 * (push NULL: a scenario without pushes, no columns). */
void mbsi_csv_row(FILE *f, const mbs_system *s, double t, const double *push);
/* Opens the CSV before the run and writes its header ("" or NULL: no CSV; "-": stdout); push:
 * the scenario has pushes, whose columns end each row. */
int mbsi_csv_open(const mbs_system *s, const char *csv, int push, csv_out *c, mbs_error *err);
/* Reopens a resumed run's CSV, cut to `offset` bytes, to append to. */
int mbsi_csv_resume(const char *csv, long long offset, csv_out *c, mbs_error *err);
/* Closes the CSV and gives it its name; keep = 0 removes the temporary file. */
int mbsi_csv_close(csv_out *c, int keep, mbs_error *err);

/* ---- summary.c ---- */
/* The summary's header: what runs, at which periods. */
void mbsi_summary_begin(const mbs_sim *sim, mbs_sim_summary *out);
/* The system's substep callback while mbs_sim_run counts into sim->counting: touch-downs. */
void mbsi_summary_substep_touchdowns(void *user, const mbs_system *s, double t_sub);
/* The summary's figures of the state a step left. */
void mbsi_summary_step(mbs_sim *sim, double dt, mbs_sim_summary *out);
/* Each touching contact's slip over the last controller period (max_slip): where the body point that
 * was under it at the end of the period before is now, less where it was, along the surface; summed
 * while it touches. A contact that does not touch is untracked (NaN). Once per period, not per step:
 * it needs the kinematics of the state, one pass of its own (a rolling sphere's old touching point
 * moves along the surface by r (θ − sin θ), third order in the period's rolling angle θ). */
void mbsi_summary_period(mbs_sim *sim, mbs_sim_summary *out);
/* The summary's closing figures: rates, means, where the base ended, the state's hash. */
void mbsi_summary_end(const mbs_sim *sim, double x0, double y0, double t_step, long iters, mbs_sim_summary *out);

/* ---- checkpoint.c ---- */
/* Writes the run's checkpoint at the start of period r->k. */
int mbsi_write_checkpoint(mbs_sim *sim, const char *path, run_state *r, mbs_sim_summary *out, csv_out *c,
                     mbsi_state *st, mbs_error *err);
/* Loads checkpoint path into the sim, r and out. */
int mbsi_read_checkpoint(mbs_sim *sim, const char *path, run_state *r, mbs_sim_summary *out, mbs_error *err);

#endif
