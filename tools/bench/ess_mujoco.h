/* ess_mujoco.h — the MuJoCo side of tools/bench/bench_ess.c: the hopper and the plate on springs of
 * Anderson & Revzen 2024 (sec. 5) as MuJoCo models. Built and linked only when Debian's
 * libmujoco-dev is installed (the Makefile defines MBS_HAVE_MUJOCO); never part of libmbs.
 *
 * Spring contacts: frictionless contacts (condim 1) with solref = (-k', -b') ("direct"
 * stiffness and damping) and a flat impedance at MuJoCo's minimum, d = 0.0001. The contact
 * force is then (Todorov's soft-constraint model, engine_core_constraint.c)
 *     f = (-b' v - k' r) / ((1 - d) w) - d a1 / ((1 - d) w),
 * w the contact's inverse-weight approximation (body_invweight0 of the plate, read from the
 * compiled model), r the signed distance, a1 the contact acceleration. With
 * k' = (1 - d) w K and b' = (1 - d) w B this is the spring-damper K·pen + B·ṗen, clamped at
 * zero (MuJoCo's contacts only push), plus an added mass d/((1-d) w) = 1e-4 of the body's. */
#ifndef MBS_ESS_MUJOCO_H
#define MBS_ESS_MUJOCO_H

typedef struct essmj essmj;

/* A body of `mass` on a vertical slide joint carrying a sphere of radius L0 at its origin,
 * over the plane z = 0: z̈ = -g + K (L0 - z)/m below L0 (sec. 5.1). */
essmj *essmj_hopper_new(double mass, double K, double L0, double dt, char *msg, int msglen);
/* A plate (mass, inertia about y) on joints x, z, θ (θ > 0 raises the +x end) whose bottom
 * passes through its centre of mass, over a bed of ns springs of stiffness K and damping B.
 * Each spring is the contact between the plane z = L0 and a 1 mm sphere on the plate's bottom
 * at x = xs[i]: a plane contact measures any depth exactly and pushes vertically, as the
 * paper's vertical springs do, where a small sphere under a box saturates at its radius and
 * pushes along the plate's normal. The spring then rides with the plate (at x_s cos θ rather
 * than x_s, height z + x_s sin θ rather than z + x_s tan θ): O(θ²) <= 0.5 % differences. */
essmj *essmj_plate_new(int ns, const double *xs, double mass, double inertia, double L0, double K, double B,
                       double dt, char *msg, int msglen);
void essmj_free(essmj *s);
/* Resets to qpos0 at rest (qpos0 NULL: goes on from the current state) and takes nsteps steps;
 * when out is not NULL, qpos[comp] after each step goes to out[k] (out[0] is the start). */
void essmj_run(essmj *s, const double *qpos0, int nsteps, int comp, double *out);
const double *essmj_qpos(const essmj *s);
int essmj_ncontacts(const essmj *s);
const char *essmj_version(void);

#endif
