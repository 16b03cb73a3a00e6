/* testmodels.c — models and random states shared by the tests. */
#include <math.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/stat.h>

#include <cjson/cJSON.h>

#include "testmodels.h"
/* builds systems field by field (the standing posture written into q before any step) */
#include "../src/contact/contact_internal.h"

#ifndef MBS_SOURCE_DIR
#define MBS_SOURCE_DIR "."
#endif

double tm_uniform(unsigned long long *seed, double lo, double hi)
{
    /* splitmix64 */
    unsigned long long z = (*seed += 0x9e3779b97f4a7c15ULL);
    z = (z ^ (z >> 30)) * 0xbf58476d1ce4e5b9ULL;
    z = (z ^ (z >> 27)) * 0x94d049bb133111ebULL;
    z ^= z >> 31;
    return lo + (hi - lo) * (double)(z >> 11) * (1.0 / 9007199254740992.0);
}

/* A random rotation from a random unit quaternion. */
void tm_random_rotation(unsigned long long *s, double R[9])
{
    double q[4], n = 0;
    for (int k = 0; k < 4; k++) { q[k] = tm_uniform(s, -1, 1); n += q[k] * q[k]; }
    n = sqrt(n);
    double x = q[0] / n, y = q[1] / n, z = q[2] / n, w = q[3] / n;
    R[0] = 1 - 2 * (y * y + z * z); R[3] = 2 * (x * y - z * w);     R[6] = 2 * (x * z + y * w);
    R[1] = 2 * (x * y + z * w);     R[4] = 1 - 2 * (x * x + z * z); R[7] = 2 * (y * z - x * w);
    R[2] = 2 * (x * z - y * w);     R[5] = 2 * (y * z + x * w);     R[8] = 1 - 2 * (x * x + y * y);
}

void tm_random_inertia(mbs_model *m, int b, unsigned long long *s, double com_range, double scale)
{
    double Rc[9], com[3], Ic[9], d[3];
    tm_random_rotation(s, Rc);
    for (int k = 0; k < 3; k++) { com[k] = tm_uniform(s, -com_range, com_range); d[k] = tm_uniform(s, 0.2, 1.0); }
    /* principal moments from a positive mass distribution satisfy the triangle inequality */
    double pm[3] = {d[1] + d[2], d[0] + d[2], d[0] + d[1]};
    for (int c = 0; c < 3; c++)
        for (int r = 0; r < 3; r++) {
            double x = 0;
            for (int k = 0; k < 3; k++) x += Rc[r + 3 * k] * pm[k] * scale * Rc[c + 3 * k];
            Ic[r + 3 * c] = x;
        }
    mbs_model_add_inertia(m, b, tm_uniform(s, 0.5, 2.0), com, Ic, NULL);
}

mbs_model *tm_random_tree(int n, int floating, unsigned long long seed)
{
    unsigned long long s = seed;
    mbs_model *m = mbs_model_new("random_tree");
    int *par = malloc((size_t)n * sizeof(int));
    int planar_done = 0, ball_done = 0;
    for (int i = 0; i < n; i++) {
        int parent = -1;
        if (i > 0) {
            /* any ancestor-or-self of the last body keeps the depth-first order */
            int depth = 0;
            for (int a = i - 1; a >= 0; a = par[a]) depth++;
            int up = (int)tm_uniform(&s, 0, depth * 0.6);
            parent = i - 1;
            while (up-- > 0 && par[parent] >= 0) parent = par[parent];
        }
        par[i] = parent;
        double R[9], p[3], axis[3];
        tm_random_rotation(&s, R);
        for (int k = 0; k < 3; k++) { p[k] = tm_uniform(&s, -0.5, 0.5); axis[k] = tm_uniform(&s, -1, 1); }
        mbs_joint_type t = MBS_JOINT_REVOLUTE;
        double r = tm_uniform(&s, 0, 1);
        if (i == 0 && floating) t = MBS_JOINT_FREEFLYER;
        else if (!planar_done && i == n / 2) { t = MBS_JOINT_PLANAR; planar_done = 1; }
        else if (!ball_done && n >= 5 && i == n / 4 + 1) { t = MBS_JOINT_BALL; ball_done = 1; }
        else if (r < 0.15) t = MBS_JOINT_PRISMATIC;
        else if (r < 0.6) {
            /* about ±x, ±y or ±z, half of them behind an identity rotation: the plane-rotation
             * paths of the algorithms (Robosimian's pitch joints turn about -y) */
            axis[0] = axis[1] = axis[2] = 0;
            axis[(int)tm_uniform(&s, 0, 3)] = tm_uniform(&s, 0, 1) < 0.3 ? -1 : 1;
            if (tm_uniform(&s, 0, 1) < 0.5) { memset(R, 0, sizeof R); R[0] = R[4] = R[8] = 1; }
        }
        char name[32];
        snprintf(name, sizeof name, "joint%d", i);
        int b = mbs_model_add_joint(m, parent, t, name, R, p, axis, NULL);
        tm_random_inertia(m, b, &s, 0.3, 0.05);
        snprintf(name, sizeof name, "body%d", i);
        double Rf[9], pf[3];
        tm_random_rotation(&s, Rf);
        for (int k = 0; k < 3; k++) pf[k] = tm_uniform(&s, -0.2, 0.2);
        mbs_model_add_frame(m, name, b, Rf, pf, MBS_FRAME_OP, NULL);
    }
    free(par);
    mbs_error err;
    if (mbs_model_finalize(m, &err) != MBS_OK) {
        fprintf(stderr, "tm_random_tree: %s\n", err.msg);
        mbs_model_free(m);
        return NULL;
    }
    /* rotor inertias on about a third of the joints (drawn after the tree, whose draws stay as
     * they were): every algorithm and derivative sees M + diag(armature) */
    for (int j = 0; j < n; j++) {
        double arm[6] = {0};
        if (tm_uniform(&s, 0, 1) < 0.3)
            for (int k = 0; k < mbs_joint_nv(m, j); k++) arm[k] = tm_uniform(&s, 0, 0.05);
        mbs_model_set_armature(m, j, arm);
    }
    return m;
}

void tm_random_state(const mbs_model *m, unsigned long long *seed, double *q, double *v, double *a, double *tau)
{
    int nv = mbs_model_nv(m);
    if (q) mbs_random_configuration(m, seed, q);
    for (int k = 0; k < nv; k++) {
        if (v) v[k] = tm_uniform(seed, -1, 1);
        if (a) a[k] = tm_uniform(seed, -1, 1);
        if (tau) tau[k] = tm_uniform(seed, -1, 1);
    }
}

const char *tm_path(const char *rel)
{
    static char buf[4096];
    snprintf(buf, sizeof buf, "%s/%s", MBS_SOURCE_DIR, rel);
    return buf;
}

const char *tm_shared_reference(const char *rel)
{
    static char buf[4096 + 512];
    static int said;
    const char *env = getenv("MBS_SHARED_REFERENCE");
    char dir[4096];
    if (env && *env) snprintf(dir, sizeof dir, "%s", env);
    else snprintf(dir, sizeof dir, "%s/../shared/reference", MBS_SOURCE_DIR);
    struct stat st;
    if (stat(dir, &st) != 0 || !S_ISDIR(st.st_mode)) {
        if (!said) printf("skipped: ../shared/reference not found\n");
        said = 1;
        return NULL;
    }
    if ((size_t)snprintf(buf, sizeof buf, "%s/%.500s", dir, rel) >= sizeof buf) return NULL;
    return buf;
}

cJSON *tm_reference_vectors(const char *robot)
{
    char path[4096];
    snprintf(path, sizeof path, "%s/tests/data/reference/vectors/%s.json", MBS_SOURCE_DIR, robot);
    FILE *f = fopen(path, "rb");
    if (!f) return NULL;
    fseek(f, 0, SEEK_END);
    long n = ftell(f);
    fseek(f, 0, SEEK_SET);
    char *buf = n > 0 ? malloc((size_t)n + 1) : NULL;
    cJSON *root = NULL;
    if (buf && fread(buf, 1, (size_t)n, f) == (size_t)n) {
        buf[n] = 0;
        root = cJSON_Parse(buf);
    }
    free(buf);
    fclose(f);
    return root;
}

static const char *const solo_feet[4] = {"FL_FOOT", "FR_FOOT", "HL_FOOT", "HR_FOOT"};
static const char *const solo_joints[12] = {"FL_HAA", "FL_HFE", "FL_KFE", "FR_HAA", "FR_HFE", "FR_KFE",
                                            "HL_HAA", "HL_HFE", "HL_KFE", "HR_HAA", "HR_HFE", "HR_KFE"};
static const double solo_posture[12] = {0.1, 0.8, -1.6, -0.1, 0.8, -1.6, 0.1, -0.8, 1.6, -0.1, -0.8, 1.6};

mbs_system *tm_solo_standing(const mbs_model *m, double height, double K, double B, double mu)
{
    mbs_error err;
    mbs_system *s = mbs_system_new(m, 4, &err);
    if (!s) return NULL;
    const double n[3] = {0, 0, 1};
    mbs_material mat = {K, K, B, B, mu};
    mbs_system_add_plane(s, n, 0, &mat, &err);
    for (int f = 0; f < 4; f++) mbs_system_add_contact(s, solo_feet[f], NULL, 0, &err);
    for (int j = 0; j < 12; j++) s->q[mbs_joint_idx_q(m, mbs_joint_id(m, solo_joints[j]))] = solo_posture[j];
    s->q[2] = 0.235 - 0.019103 + height;   /* the FOOT frames are 0.019103 m above z = 0 at base 0.235 */
    return s;
}

void tm_solo_hold(const mbs_model *m, mbs_system *s, double kp, double kd)
{
    for (int j = 0; j < 12; j++) {
        int id = mbs_joint_id(m, solo_joints[j]);
        int iq = mbs_joint_idx_q(m, id), iv = mbs_joint_idx_v(m, id);
        s->tau[iv] = kp * (solo_posture[j] - s->q[iq]) - kd * s->v[iv];
    }
}

void tm_base_world_velocity(mbs_system *s, double w[3])
{
    double R[9], p[3];
    mbs_forward_kinematics(s->model, s->data, s->q, NULL, NULL);
    mbs_body_placement(s->model, s->data, 0, R, p);
    for (int r = 0; r < 3; r++) w[r] = R[r] * s->v[0] + R[r + 3] * s->v[1] + R[r + 6] * s->v[2];
}

int tm_forces_in_cones(const mbs_system *s, double tol)
{
    for (int i = 0; i < s->ncontacts; i++) {
        const mbs_contact *c = &s->contacts[i];
        double ln = c->lambda[0] * c->normal[0] + c->lambda[1] * c->normal[1] + c->lambda[2] * c->normal[2];
        double t2 = 0;
        for (int k = 0; k < 3; k++) { double t = c->lambda[k] - ln * c->normal[k]; t2 += t * t; }
        if (ln < -1e-12 || sqrt(t2) > mbsi_contact_material(s, c)->mu * ln * (1 + tol) + 1e-12) return 0;
    }
    return 1;
}

double tm_incline_acceleration(mbs_system *s, mbs_stepper *st, double theta, double dt, double tol, int *cone)
{
    const double down[3] = {0, -cos(theta), -sin(theta)}, t1 = 0.3, t2 = 0.6;
    double w[3], v1 = 0;
    int n = (int)lround(t2 / dt);
    *cone = 1;
    for (int k = 1; k <= n; k++) {
        mbs_stepper_step(st, dt, NULL);
        *cone &= tm_forces_in_cones(s, tol);
        if (k == (int)lround(t1 / dt)) {
            tm_base_world_velocity(s, w);
            v1 = w[0] * down[0] + w[1] * down[1] + w[2] * down[2];
        }
    }
    tm_base_world_velocity(s, w);
    return (w[0] * down[0] + w[1] * down[1] + w[2] * down[2] - v1) / (t2 - t1);
}

int tm_run_scenario(const char *path, const char *const *sets, int nsets, mbs_sim_summary *sum, mbs_error *err)
{
    mbs_scenario *sc = mbs_scenario_load(path, sets, nsets, err);
    if (!sc) return err->code ? err->code : MBS_ERR_ARG;
    mbs_sim *sim = mbs_sim_new(sc, err);
    mbs_sim_run_options o = {.csv = "", .html = ""};
    int rc = sim ? mbs_sim_run(sim, &o, sum, err) : (err->code ? err->code : MBS_ERR_ARG);
    mbs_sim_free(sim);
    mbs_scenario_free(sc);
    return rc;
}

mbs_option tm_opt(const char *key, const char *text)
{
    char *end = NULL;
    double x = text && text[0] ? strtod(text, &end) : 0;
    if (text && text[0] && end && !*end) return (mbs_option)MBS_OPTION(key, x);
    return (mbs_option)MBS_OPTION_WORD(key, text);
}
