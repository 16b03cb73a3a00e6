/* expo.h — what the parts of bench_expo (tools/bench/bench_expo.c, one file per part in this
 * folder) share: the output, the scenarios and their overrides, the recorded ground truths and
 * their replay, and the runs as ./sim does them (defined in common.c). */
#ifndef MBS_BENCH_EXPO_H
#define MBS_BENCH_EXPO_H

#include <math.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "mbs.h"
/* a benchmark reads the system's contact state and sets its state directly, as the tests do */
#include "../../../src/contact/contact_internal.h"
#include "../bench_tool.h"
#include "../bench_doc.h"

#ifndef MBS_SOURCE_DIR
#define MBS_SOURCE_DIR "."
#endif

/* The names below are the program's own: hidden, so that none can stand for a shared library's. */
#pragma GCC visibility push(hidden)

/* ---------------------------------------------------------------- output */

/* The tables of docs/benchmarks.md this run writes (a full run only; tools/bench/bench_doc.py puts
 * them into the document). */
extern bench_doc doc;

/* The key: value lines, printed together at the end and written into the keys block. */
extern bench_keys keys;
#define key(...) bench_key(&keys, __VA_ARGS__)

void *xcalloc(size_t n, size_t sz);
double clock_overhead(void);
const char *num(char *buf, size_t n, const char *fmt, double x);
const char *fmt2(char *buf, size_t n, double x);

/* ---------------------------------------------------------------- scenarios and overrides */

/* the paper's four tests, in its order (parts b, f, h; c and d are on solo_trot only), the squat
 * under joint PD */
enum { MAXOV = 16, NSCEN = 4 };
extern const char *const SCEN[NSCEN];

/* the tests of figs. 2-3 (part a): the four, the squat twice — first under TSID, the paper's
 * controller (solo_squat_tsid), then under joint PD as SCEN's (solo_squat) */
enum { NFIG = 5 };
extern const char *const FIG_SCEN[NFIG];

/* --set style overrides, "section.key=value" each. */
typedef struct ovl {
    int n;
    char s[MAXOV][192];
    const char *p[MAXOV];
} ovl;

void ov_add(ovl *o, const char *fmt, ...) __attribute__((format(printf, 2, 3)));
void ov_copy(ovl *dst, const ovl *src);
void ov_pade(ovl *o, int mmm);
mbs_scenario *load(const char *scen, const ovl *o);

/* ---------------------------------------------------------------- ground truth: record */

/* The state at the start of every controller period of a run and the torque of every period. */
typedef struct traj {
    int nq, nv, nc;
    long n;                  /* controller periods; states 0..n */
    double cdt;
    double *q, *v, *tau;     /* (n+1) nq, (n+1) nv, n nv */
    mbs_contact *ct;         /* (n+1) nc */
    int diverged;
    char reason[MBS_ERROR_MSG_LEN + 128];
} traj;

void traj_free(traj *tr);
void restore(mbs_system *s, const traj *tr, long k);
void record(const char *scen, const ovl *o, const char *stepper, double dt, double horizon, traj *tr);

/* A system's state (q, v, contacts), kept to take one step again and again from the same start. */
typedef struct start_state {
    double *q, *v;
    mbs_contact *c;
} start_state;

void start_new(start_state *x, const mbs_system *s);
void start_keep(start_state *x, const mbs_system *s);
void start_put(const start_state *x, mbs_system *s);
void start_free(start_state *x);

/* Largest i with cdt / 2^i >= 1/64 ms: the ground truth's step is cdt / 2^i. */
int gt_level(double cdt);

/* ---------------------------------------------------------------- replay: local errors, timing */

typedef struct replay_res {
    double err_mean, err_max;     /* over periods; inf when a period diverged */
    double step_s, rtf;           /* time in the stepper, simulated time / step_s */
    long ndiv;                    /* periods that ended non-finite or with a stepper failure */
    long nonconverged, steps;
} replay_res;

/* A system for the scenario and a stepper of the named scheme on it, with the scenario's options
 * of that scheme (its [section] and --set overrides). */
typedef struct rig {
    mbs_scenario *sc;
    mbs_sim *sim;
    mbs_system *sys;
    mbs_stepper *st;
} rig;

void rig_new(rig *r, const char *scen, const ovl *o, const char *stepper);
void rig_free(rig *r);
void replay(const char *scen, const ovl *o, const char *stepper, double dt, const traj *gt, replay_res *res,
            double *times);

/* ---------------------------------------------------------------- contact kinematics (parts c, i, j) */

void touching_points_drift(const mbs_model *m, mbs_data *d, const mbs_system *s, const double *q, const double *v,
                           const double *zero, const int *act, int na, double *off, double *pdd);
void world_gain(const double n[3], double kn, double kt, double out[9]);
double contact_fn(const mbs_contact *c);

/* ---------------------------------------------------------------- runs as ./sim does them */

enum { MAXPTS = 16 };

/* Touch-downs per contact point (free at one controller period, touching at the next) and the
 * number of active points, sampled at every controller period by a control callback. */
typedef struct td_count {
    mbs_sim *sim;
    int n, started, touching[MAXPTS];
    long td[MAXPTS];
    long samples, active_sum;
    int active_min, active_max;
} td_count;

/* One case run reps times as ./sim runs it: the summary's us_per_step (stepper time only), median
 * and range over the runs; the summary and the counts of the last run. */
typedef struct case_res {
    double us_med, us_min, us_max;
    mbs_sim_summary sum;
    td_count td;
} case_res;

void run_case(const char *scen, const ovl *o, int reps, case_res *res);
const char *status_word(const mbs_sim_summary *s);
void touchdown_cell(const mbs_sim_summary *s, char *buf, size_t n);
long td_list(const td_count *td, char *buf, size_t n);

/* ---------------------------------------------------------------- the parts, one file each */

void part_a(const char *data, int quick);   /* a_accuracy.c */
void part_b(void);                          /* b_stability.c */
void part_c(int quick);                     /* c_step_time.c */
void part_d(const char *data, int quick);   /* d_stiffness.c */
void part_e(int quick);                     /* e_closed_form.c */
void part_f(int quick);                     /* f_touchdowns.c */
void part_g(const char *data, int quick);   /* g_contacts.c */
void part_h(int quick);                     /* h_variants.c */
void part_i(const char *data, int quick);   /* i_force_prediction.c */
void part_j(const char *data, int quick);   /* j_touchdown_force.c */
void part_k(const char *data, int quick);   /* k_implicit_euler.c */
void part_l(int quick);                     /* l_romeo_steps.c */

#pragma GCC visibility pop

#endif
