/* ess_mujoco.c — MuJoCo models of the hopper and of the plate on springs (see ess_mujoco.h).
 * Compiled into bench_ess (build/tools/bench_ess) only when libmujoco-dev is installed. */
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include <mujoco/mujoco.h>

#include "ess_mujoco.h"

struct essmj {
    mjModel *m;
    mjData *d;
};

/* Flat impedance at MuJoCo's minimum: the constraint is all regulariser, so its force is
 * the reference spring-damper itself (ess_mujoco.h). */
#define SOLIMP "0.0001 0.0001 0.001 0.5 2"

static essmj *load(const char *xml, char *msg, int msglen)
{
    mjVFS *vfs = malloc(sizeof *vfs);
    essmj *s = calloc(1, sizeof *s);
    if (!vfs || !s) {
        snprintf(msg, (size_t)msglen, "out of memory");
        free(vfs); free(s);
        return NULL;
    }
    mj_defaultVFS(vfs);
    int len = (int)strlen(xml);
    if (mj_makeEmptyFileVFS(vfs, "model.xml", len) != 0) {
        snprintf(msg, (size_t)msglen, "mj_makeEmptyFileVFS failed");
        free(vfs); free(s);
        return NULL;
    }
    memcpy(vfs->filedata[mj_findFileVFS(vfs, "model.xml")], xml, (size_t)len);
    s->m = mj_loadXML("model.xml", vfs, msg, msglen);
    mj_deleteVFS(vfs);
    free(vfs);
    if (!s->m) { free(s); return NULL; }
    s->d = mj_makeData(s->m);
    if (!s->d) {
        snprintf(msg, (size_t)msglen, "mj_makeData failed");
        mj_deleteModel(s->m);
        free(s);
        return NULL;
    }
    return s;
}

/* solref = (-k', -b') with k' = (1 - d) w K, b' = (1 - d) w B on every geom (the contact
 * mixes the two geoms' values, which are then equal), w the body's translational inverse
 * weight as MuJoCo computed it at qpos0. */
static void set_springs(essmj *s, int body, double K, double B)
{
    const double d = mjMINIMP, w = s->m->body_invweight0[2 * body];
    for (int g = 0; g < s->m->ngeom; g++) {
        s->m->geom_solref[mjNREF * g] = -(1 - d) * w * K;
        s->m->geom_solref[mjNREF * g + 1] = -(1 - d) * w * B;
    }
}

essmj *essmj_hopper_new(double mass, double K, double L0, double dt, char *msg, int msglen)
{
    char xml[2048];
    snprintf(xml, sizeof xml,
             "<mujoco model='hopper'>"
             "<option timestep='%.17g' gravity='0 0 -9.81' integrator='Euler'/>"
             "<default><geom condim='1' solimp='" SOLIMP "'/></default>"
             "<worldbody>"
             "<geom name='floor' type='plane' size='5 5 0.1'/>"
             "<body name='hopper' pos='0 0 0'>"
             "<joint name='z' type='slide' axis='0 0 1'/>"
             "<inertial pos='0 0 0' mass='%.17g' diaginertia='0.01 0.01 0.01'/>"
             "<geom name='leg' type='sphere' size='%.17g' mass='0'/>"
             "</body></worldbody></mujoco>",
             dt, mass, L0);
    essmj *s = load(xml, msg, msglen);
    if (s) set_springs(s, mj_name2id(s->m, mjOBJ_BODY, "hopper"), K, 0);
    return s;
}

essmj *essmj_plate_new(int ns, const double *xs, double mass, double inertia, double L0, double K, double B,
                       double dt, char *msg, int msglen)
{
    size_t cap = 2048 + (size_t)ns * 160;
    char *xml = malloc(cap);
    if (!xml) { snprintf(msg, (size_t)msglen, "out of memory"); return NULL; }
    int len = snprintf(xml, cap,
                       "<mujoco model='plate'>"
                       "<option timestep='%.17g' gravity='0 0 -9.81' integrator='Euler'/>"
                       "<size nconmax='%d' njmax='%d'/>"
                       "<default><geom condim='1' solimp='" SOLIMP "'/></default>"
                       "<worldbody>"
                       "<geom name='bed' type='plane' size='5 5 0.1' pos='0 0 %.17g'/>"
                       "<body name='plate' pos='0 0 0'>"
                       "<joint name='x' type='slide' axis='1 0 0'/>"
                       "<joint name='z' type='slide' axis='0 0 1'/>"
                       "<joint name='th' type='hinge' axis='0 -1 0'/>"
                       "<inertial pos='0 0 0' mass='%.17g' diaginertia='0.001 %.17g %.17g'/>",
                       dt, ns + 8, ns + 8, L0, mass, inertia, inertia);
    for (int i = 0; i < ns; i++)
        len += snprintf(xml + len, cap - (size_t)len,
                        "<geom name='s%d' type='sphere' size='0.001' pos='%.17g 0 0.001' mass='0'/>", i, xs[i]);
    snprintf(xml + len, cap - (size_t)len, "</body></worldbody></mujoco>");
    essmj *s = load(xml, msg, msglen);
    free(xml);
    if (s) set_springs(s, mj_name2id(s->m, mjOBJ_BODY, "plate"), K, B);
    return s;
}

void essmj_free(essmj *s)
{
    if (!s) return;
    mj_deleteData(s->d);
    mj_deleteModel(s->m);
    free(s);
}

void essmj_run(essmj *s, const double *qpos0, int nsteps, int comp, double *out)
{
    if (qpos0) {
        mj_resetData(s->m, s->d);
        for (int i = 0; i < s->m->nq; i++) s->d->qpos[i] = qpos0[i];
    }
    if (out) out[0] = s->d->qpos[comp];
    for (int k = 0; k < nsteps; k++) {
        mj_step(s->m, s->d);
        if (out) out[k + 1] = s->d->qpos[comp];
    }
}

const double *essmj_qpos(const essmj *s) { return s->d->qpos; }
int essmj_ncontacts(const essmj *s) { return s->d->ncon; }

const char *essmj_version(void)
{
    static char v[32];
    snprintf(v, sizeof v, "%s", mj_versionString());
    return v;
}
