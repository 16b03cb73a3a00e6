/* mbs/control.h — the control layer: controllers behind one interface, each one file registered
 * by name in one table (src/control/registry.c), like the steppers. A controller is created for
 * a system (whose model, contact points and environment it reads: the robot's sensing), a
 * posture q0 and a controller period, with options declared once in its table (mbs/options.h);
 * each period it turns the time and the measured state into joint torques.
 *
 * Controllers are a reference generator (squat, jump, trot, crawl, the walk's plan) driving a
 * feedback law (joint PD with feed-forward, evaluated at the measured state or, with the
 * option feedback = stable, at the state one period ahead), so a gait can drive another law.
 * A program can bring its own control as a callback (mbs_sim_set_control in mbs/sim.h). */
#ifndef MBS_CONTROL_H
#define MBS_CONTROL_H

#include "contact.h"
#include "options.h"

#ifdef __cplusplus
extern "C" {
#endif

/* what this header declares is the library's interface: exported from libmbs.so, where everything
 * else is hidden (the build compiles with -fvisibility=hidden) */
#if defined(__GNUC__)
#pragma GCC visibility push(default)
#endif

typedef struct mbs_controller mbs_controller;

#define MBS_CONTROLLER_DEFAULT "pd"   /* the controller a scenario runs when it names none */

/* Registered controllers (the table in src/control/registry.c). */
int mbs_controller_count(void);
/* The registered controller i (0 <= i < count), or NULL. */
const mbs_scheme_info *mbs_controller_at(int i);
/* The controller named `name`, or NULL when there is none. */
const mbs_scheme_info *mbs_controller_find(const char *name);

/* Creates the named controller for sys (not owned, must outlive it) holding the posture q0 (nq,
 * copied) at controller period dt (s), with its options (key = value text, checked against its
 * table). An error about one option starts its message with "key: ". */
mbs_controller *mbs_controller_new(const char *name, mbs_system *sys, const double *q0, double dt,
                                   const mbs_option *opts, int nopts, mbs_error *err);
/* τ (nv entries, every one written; zero on unactuated coordinates) at time t (s) for the
 * measured state (q, v). Allocates nothing. */
void mbs_controller_compute(mbs_controller *c, double t, const double *q, const double *v, double *tau);
/* Frees a controller (NULL is fine). */
void mbs_controller_free(mbs_controller *c);

/* A program's own control law, called once per controller period at time t with the state;
 * tau (nv) holds what the scenario's controller computed and may be overwritten or added to. */
typedef void (*mbs_control_callback)(void *user, double t, const double *q, const double *v, double *tau);

#if defined(__GNUC__)
#pragma GCC visibility pop
#endif

#ifdef __cplusplus
}
#endif
#endif
