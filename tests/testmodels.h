/* testmodels.h — models and random states shared by the tests. */
#ifndef MBS_TESTMODELS_H
#define MBS_TESTMODELS_H

#include "mbs.h"

/* Deterministic uniform draw in [lo, hi). */
double tm_uniform(unsigned long long *seed, double lo, double hi);
/* A uniformly random rotation (column-major). */
void tm_random_rotation(unsigned long long *seed, double R[9]);
/* A valid random inertia for body b of m: mass in [0.5, 2), centre of mass in ±com_range, principal
 * moments scale·(d_j + d_k), d in [0.2, 1), about random axes. */
void tm_random_inertia(mbs_model *m, int b, unsigned long long *seed, double com_range, double scale);
/* A random tree of n bodies built with the builder API: optional free-flyer root, then a
 * mix of revolute (aligned and oblique axes), prismatic and one planar joint, random
 * placements and valid random inertias; every body gets a frame named "body<i>". */
mbs_model *tm_random_tree(int n, int floating, unsigned long long seed);
/* Random q (via mbs_random_configuration) and v, a, tau uniform in [-1, 1]. */
void tm_random_state(const mbs_model *m, unsigned long long *seed, double *q, double *v, double *a, double *tau);
/* The Pinocchio reference vectors of a robot (tests/data/reference/vectors/<robot>.json),
 * parsed; NULL when missing or malformed. Free with cJSON_Delete. */
struct cJSON *tm_reference_vectors(const char *robot);
/* Solo-12 (model m, floating) on the ground z = 0 with a point contact at each FOOT frame
 * (material K, B in every direction, mu), joints in the SRDF standing posture and the base
 * at the posture's height plus `height` (negative: feet in the ground). */
mbs_system *tm_solo_standing(const mbs_model *m, double height, double K, double B, double mu);
/* A joint PD (gains kp, kd) that holds that posture: writes s->tau. */
void tm_solo_hold(const mbs_model *m, mbs_system *s, double kp, double kd);
/* Linear velocity of body 0's origin in world axes (a free-flyer's v is in its own frame). */
void tm_base_world_velocity(mbs_system *s, double w[3]);
/* 1 when every contact force of s is in its friction cone, up to a relative tolerance tol (and
 * an absolute 1e-12 N); the normal force may dip to -1e-12 N. */
int tm_forces_in_cones(const mbs_system *s, double tol);
/* A body sliding or resting on a plane tilted by theta about x (its normal (0, -sin, cos)): st
 * steps s from its state by dt until t = 0.6 s; returns the acceleration of body 0 down the slope
 * between 0.3 and 0.6 s; *cone = 0 when a force left its cone (tm_forces_in_cones, tol) after a step. */
double tm_incline_acceleration(mbs_system *s, mbs_stepper *st, double theta, double dt, double tol, int *cone);
/* An option from a test's text, as a user of the typed API writes it: a number when the text is one
 * (strtod takes all of it), else a word ({key, 0, text}); text must outlive it. */
mbs_option tm_opt(const char *key, const char *text);
/* Runs the scenario at path with the overrides sets (nsets of them, "section.key=value"), writing
 * no file, into *sum; returns MBS_OK or the error of the load, the set-up or the run (in *err, whose
 * warnings the caller frees with mbs_error_free). */
int tm_run_scenario(const char *path, const char *const *sets, int nsets, mbs_sim_summary *sum, mbs_error *err);
/* Path to a file of the source tree. */
const char *tm_path(const char *rel);
/* Path to a file of the project's shared reference folder (third-party robot descriptions, which
 * stay out of the repository): ../shared/reference/<rel> beside the repository root, or the folder
 * named by the environment variable MBS_SHARED_REFERENCE. NULL when the folder is absent, after
 * printing "skipped: ../shared/reference not found" (once per program), so that a clone alone
 * passes; a caller skips what needs the file. The path lives until the next call. */
const char *tm_shared_reference(const char *rel);

#endif
