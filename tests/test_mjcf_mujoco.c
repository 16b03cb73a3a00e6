/* test_mjcf_mujoco.c — MuJoCo 2.2 as the oracle of the MJCF loader: MuJoCo and mbs load the same
 * file, and at random states (q from mbs_random_configuration, v uniform) the mass matrix, the
 * bias forces, the free acceleration (no contacts, limits, frictionloss, equality constraints,
 * actuators or joint springs; the passive damping force on both sides), every body's and site's
 * world placement and every keyframe agree after the conversion of coordinates:
 *   free joint  qpos = [x y z qw qx qy qz],  qvel = [R v, w]   (mbs: q = [x y z qx qy qz qw], v = [v w] body frame)
 *   ball joint  qpos = [qw qx qy qz],        qvel = w
 *   hinge/slide qpos = q + ref,              qvel = v
 * With qvel = T v (T = R on a free joint's linear block), M_mbs = Tᵀ M_mj T, bias_mbs = Tᵀ (M_mj Ṫv +
 * bias_mj) and a_mbs = Tᵀ (qacc − Ṫv), where Ṫv = R (w × v) on that block.
 * Models: every .xml of tests/models/mjcf/ and the Menagerie robots of ../shared/reference/mjcf/
 * (skipped when absent). A developer's held-out check: MBS_MJCF_EXTRA=a.xml:b.xml (colon-separated
 * paths) adds those models to the same comparisons; unset, the test is as above. MuJoCo is a test-only dependency: without its header the Makefile builds
 * this test without it, and it says so. */
#include <dirent.h>
#include <math.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/stat.h>

#include "check.h"
#include "mbs.h"
#include "../src/model/model_internal.h"   /* white-box: MuJoCo's compiled inertias put in a model */
#include "../src/spatial/spatial.h"

#define MJCF_DIR MBS_SOURCE_DIR "/tests/models/mjcf"
#define REF_DIR MBS_SOURCE_DIR "/../shared/reference/mjcf"
#define TOL 1e-9

#ifdef MBS_HAVE_MUJOCO
#include <mujoco/mujoco.h>

/* max |a − b| / max |b| over n entries (b = the oracle) */
static double rel_err(const double *a, const double *b, int n)
{
    double e = 0, s = 0;
    for (int k = 0; k < n; k++) {
        e = check_worst(e, fabs(a[k] - b[k]));
        s = fmax(s, fabs(b[k]));
    }
    return s > 0 ? e / s : e;
}

typedef struct worst {
    double M, bias, acc, kin, key;
} worst;

/* mbs (q, v) -> MuJoCo (qpos, qvel); T (nv x nv, column-major) and Tdv (nv) as in the header. */
static void to_mujoco(const mbs_model *m, const mjModel *mm, const double *q, const double *v, double *qpos,
                      double *qvel, double *T, double *Tdv)
{
    int nv = mbs_model_nv(m);
    if (T) {
        memset(T, 0, sizeof(double) * (size_t)nv * nv);
        for (int k = 0; k < nv; k++) T[k + nv * k] = 1;
        memset(Tdv, 0, sizeof(double) * (size_t)nv);
    }
    for (int j = 0; j < mbs_model_njoints(m); j++) {
        int iq = mbs_joint_idx_q(m, j), iv = mbs_joint_idx_v(m, j);
        int aq = mm->jnt_qposadr[j], av = mm->jnt_dofadr[j];
        switch (mm->jnt_type[j]) {
        case mjJNT_FREE: {
            double R[9];
            const double *qt = q + iq + 3;
            double x = qt[0], y = qt[1], z = qt[2], w = qt[3];
            R[0] = 1 - 2 * (y * y + z * z); R[3] = 2 * (x * y - z * w);     R[6] = 2 * (x * z + y * w);
            R[1] = 2 * (x * y + z * w);     R[4] = 1 - 2 * (x * x + z * z); R[7] = 2 * (y * z - x * w);
            R[2] = 2 * (x * z - y * w);     R[5] = 2 * (y * z + x * w);     R[8] = 1 - 2 * (x * x + y * y);
            for (int k = 0; k < 3; k++) qpos[aq + k] = q[iq + k];
            qpos[aq + 3] = w; qpos[aq + 4] = x; qpos[aq + 5] = y; qpos[aq + 6] = z;
            const double *lin = v + iv, *ang = v + iv + 3;
            double wxv[3] = {ang[1] * lin[2] - ang[2] * lin[1], ang[2] * lin[0] - ang[0] * lin[2],
                             ang[0] * lin[1] - ang[1] * lin[0]};
            for (int r = 0; r < 3; r++) {
                qvel[av + r] = R[r] * lin[0] + R[r + 3] * lin[1] + R[r + 6] * lin[2];
                qvel[av + 3 + r] = ang[r];
                if (T) {
                    for (int col = 0; col < 3; col++) T[(iv + r) + nv * (iv + col)] = R[r + 3 * col];
                    Tdv[iv + r] = R[r] * wxv[0] + R[r + 3] * wxv[1] + R[r + 6] * wxv[2];
                }
            }
            break;
        }
        case mjJNT_BALL:
            qpos[aq] = q[iq + 3];
            for (int k = 0; k < 3; k++) { qpos[aq + 1 + k] = q[iq + k]; qvel[av + k] = v[iv + k]; }
            break;
        default:
            qpos[aq] = q[iq] + mm->qpos0[aq];
            qvel[av] = v[iv];
        }
    }
}

/* y = Tᵀ x */
static void tt_mul(const double *T, int nv, const double *x, double *y)
{
    for (int i = 0; i < nv; i++) {
        double s = 0;
        for (int k = 0; k < nv; k++) s += T[k + nv * i] * x[k];
        y[i] = s;
    }
}

/* World placements of every named body and site: mbs frames against xpos/xmat (row-major). */
static double compare_placements(const mbs_model *m, mbs_data *d, const mjModel *mm, const mjData *md, const char *path)
{
    double e = 0;
    for (int b = 1; b < mm->nbody + mm->nsite; b++) {
        int site = b >= mm->nbody, id = site ? b - mm->nbody : b;
        const char *nm = mj_id2name(mm, site ? mjOBJ_SITE : mjOBJ_BODY, id);
        char gen[32];
        if (!nm && site) continue;
        if (!nm) { snprintf(gen, sizeof gen, "body%d", id); nm = gen; }
        int f = mbs_frame_id(m, nm);
        CHECK(f >= 0, "%s: no frame '%s'", path, nm);
        if (f < 0) continue;
        double R[9], p[3], Rmj[9];
        mbs_frame_placement(m, d, f, R, p);
        const double *xp = site ? md->site_xpos + 3 * id : md->xpos + 3 * id;
        const double *xm = site ? md->site_xmat + 9 * id : md->xmat + 9 * id;
        for (int r = 0; r < 3; r++)
            for (int c = 0; c < 3; c++) Rmj[r + 3 * c] = xm[3 * r + c];
        e = check_worst(e, rel_err(p, xp, 3));
        e = check_worst(e, rel_err(R, Rmj, 9));
    }
    return e;
}

/* Every keyframe: mbs's (q, v) turned back into MuJoCo's equals MuJoCo's key. */
static double compare_keys(const mbs_model *m, const mjModel *mm, const char *path)
{
    CHECK(mbs_model_nkeyframes(m) == mm->nkey, "%s: %d keyframes, MuJoCo %d", path, mbs_model_nkeyframes(m), mm->nkey);
    double e = 0, *qpos = calloc((size_t)mm->nq + 1, sizeof *qpos), *qvel = calloc((size_t)mm->nv + 1, sizeof *qvel);
    for (int k = 0; k < mm->nkey && k < mbs_model_nkeyframes(m); k++) {
        const double *q, *v;
        mbs_model_keyframe(m, k, &q, &v);
        to_mujoco(m, mm, q, v, qpos, qvel, NULL, NULL);
        e = check_worst(e, rel_err(qpos, mm->key_qpos + (size_t)k * mm->nq, mm->nq));
        e = check_worst(e, rel_err(qvel, mm->key_qvel + (size_t)k * mm->nv, mm->nv));
    }
    free(qpos);
    free(qvel);
    return e;
}

/* MuJoCo's compiled inertias (body_mass, body_ipos, body_iquat, body_inertia: what its compiler
 * made of the file's) in place of the file's in m, each MuJoCo body through the frame of its name
 * (its mbs body and placement there). 0 when a body has no frame of its name (then m is unchanged). */
static int take_mujoco_inertias(mbs_model *m, const mjModel *mm)
{
    for (int b = 1; b < mm->nbody; b++) {
        const char *name = mj_id2name(mm, mjOBJ_BODY, b);
        if (!name || mbs_frame_id(m, name) < 0) return 0;
    }
    for (int i = 0; i < m->nbodies; i++) {
        m->bodies[i].mass = 0;
        memset(m->bodies[i].h, 0, sizeof m->bodies[i].h);
        memset(m->bodies[i].Io, 0, sizeof m->bodies[i].Io);
    }
    for (int b = 1; b < mm->nbody; b++) {
        int f = mbs_frame_id(m, mj_id2name(mm, mjOBJ_BODY, b)), ib = mbs_frame_body(m, f);
        if (ib < 0) continue;   /* welded to the world: no part of the dynamics */
        double R[9], p[3], Q[9], Rc[9], c[3], Ic[9], D[9] = {0};
        mbs_frame_local_placement(m, f, R, p);
        const mjtNum *iq = mm->body_iquat + 4 * b, *ip = mm->body_ipos + 3 * b;
        double qt[4] = {iq[1], iq[2], iq[3], iq[0]}, mass = mm->body_mass[b];
        for (int k = 0; k < 3; k++) D[4 * k] = mm->body_inertia[3 * b + k];
        m3_from_quat(qt, Q);
        m3_mul(R, Q, Rc);   /* principal axes -> mbs body */
        for (int i = 0; i < 3; i++) {
            c[i] = p[i];
            for (int k = 0; k < 3; k++) c[i] += R[i + 3 * k] * ip[k];
        }
        for (int j = 0; j < 3; j++)
            for (int i = 0; i < 3; i++) {
                double x = 0;
                for (int k = 0; k < 3; k++) x += Rc[i + 3 * k] * D[4 * k] * Rc[j + 3 * k];
                Ic[i + 3 * j] = x;
            }
        mbs_body *bd = &m->bodies[ib];
        double cc = c[0] * c[0] + c[1] * c[1] + c[2] * c[2];
        bd->mass += mass;
        for (int i = 0; i < 3; i++) {
            bd->h[i] += mass * c[i];
            for (int j = 0; j < 3; j++) bd->Io[i + 3 * j] += Ic[i + 3 * j] + mass * ((i == j ? cc : 0.0) - c[i] * c[j]);
        }
    }
    return 1;
}

static void compare_model(const char *path, int mujoco_inertias, worst *w)
{
    memset(w, 0, sizeof *w);
    char msg[1000] = "";
    mjModel *mm = mj_loadXML(path, NULL, msg, sizeof msg);
    CHECK(mm != NULL, "%s: MuJoCo: %s", path, msg);
    mbs_error err;
    mbs_model *m = mbs_model_from_mjcf(path, NULL, &err);
    CHECK(m != NULL, "%s: mbs: %s", path, err.msg);
    mbs_error_free(&err);
    if (!mm || !m) { mj_deleteModel(mm); mbs_model_free(m); w->M = NAN; return; }
    int nq = mbs_model_nq(m), nv = mbs_model_nv(m), same = nq == mm->nq && nv == mm->nv && mbs_model_njoints(m) == mm->njnt;
    CHECK(same, "%s: nq %d nv %d joints %d, MuJoCo %d %d %d", path, nq, nv, mbs_model_njoints(m), mm->nq, mm->nv, mm->njnt);
    for (int j = 0; same && j < mm->njnt; j++) {
        static const mbs_joint_type types[4] = {MBS_JOINT_FREEFLYER, MBS_JOINT_BALL, MBS_JOINT_PRISMATIC, MBS_JOINT_REVOLUTE};
        same = mbs_joint_type_of(m, j) == types[mm->jnt_type[j]];
        CHECK(same, "%s: joint %d has another type than MuJoCo's", path, j);
    }
    if (!same) { mj_deleteModel(mm); mbs_model_free(m); w->M = NAN; return; }
    CHECK(fabs(mbs_model_mass(m) - mj_getTotalmass(mm)) <= 1e-12 * mj_getTotalmass(mm), "%s: mass %.15g, MuJoCo %.15g",
          path, mbs_model_mass(m), mj_getTotalmass(mm));
    if (mujoco_inertias && !take_mujoco_inertias(m, mm)) {
        mj_deleteModel(mm); mbs_model_free(m); w->M = NAN; return;
    }
    mm->opt.disableflags |= mjDSBL_CONSTRAINT | mjDSBL_ACTUATION;
    /* joint springs are not modelled by mbs (the loader warns): compared without them */
    int springs = 0;
    for (int j = 0; j < mm->njnt; j++) springs += mm->jnt_stiffness[j] != 0;
    for (int j = 0; j < mm->njnt; j++) mm->jnt_stiffness[j] = 0;
    if (springs) printf("%s: %d joint springs (stiffness) left out of MuJoCo's acceleration\n", path, springs);
    mjData *md = mj_makeData(mm);
    mbs_data *d = mbs_data_new(m);
    size_t n2 = (size_t)nv * nv;
    double *buf = calloc(4 * n2 + 12 * (size_t)(nq + nv) + 8, sizeof *buf);
    double *T = buf, *Mmj = T + n2, *Mb = Mmj + n2, *Mc = Mb + n2, *q = Mc + n2, *v = q + nq + 1, *Tdv = v + nv + 1;
    double *x = Tdv + nv + 1, *y = x + nv + 1, *zero = y + nv + 1, *tau = zero + nv + 1, *ddq = tau + nv + 1,
           *ref = ddq + nv + 1;
    unsigned long long seed = 12345;
    const double *damping = mbs_model_damping(m);
    for (int trial = 0; trial < 5; trial++) {
        mbs_random_configuration(m, &seed, q);
        for (int k = 0; k < nv; k++) v[k] = 2.0 * rand() / RAND_MAX - 1;
        to_mujoco(m, mm, q, v, md->qpos, md->qvel, T, Tdv);
        mju_zero(md->ctrl, mm->nu);
        mj_forward(mm, md);
        mj_fullM(mm, Mmj, md->qM);
        /* M: Tᵀ M_mj T */
        for (int c = 0; c < nv; c++) {
            tt_mul(T, nv, Mmj + (size_t)nv * c, x);   /* (Tᵀ M_mj) column c */
            for (int r = 0; r < nv; r++) Mc[r + (size_t)nv * c] = x[r];
        }
        for (int r = 0; r < nv; r++) {   /* (Tᵀ M_mj) T, row by row */
            for (int k = 0; k < nv; k++) x[k] = Mc[r + (size_t)nv * k];
            tt_mul(T, nv, x, y);
            for (int c = 0; c < nv; c++) Mb[r + (size_t)nv * c] = y[c];
        }
        mbs_crba(m, d, q, Mc);
        w->M = check_worst(w->M, rel_err(Mc, Mb, (int)n2));
        /* bias: Tᵀ (M_mj Ṫv + qfrc_bias) */
        for (int r = 0; r < nv; r++) {
            double s = md->qfrc_bias[r];
            for (int k = 0; k < nv; k++) s += Mmj[r + (size_t)nv * k] * Tdv[k];
            x[r] = s;
        }
        tt_mul(T, nv, x, ref);
        mbs_rnea(m, d, q, v, zero, tau);
        w->bias = check_worst(w->bias, rel_err(tau, ref, nv));
        /* acceleration under the damping force: Tᵀ (qacc − Ṫv) */
        for (int k = 0; k < nv; k++) { x[k] = md->qacc[k] - Tdv[k]; tau[k] = -damping[k] * v[k]; }
        tt_mul(T, nv, x, ref);
        mbs_aba(m, d, q, v, tau, ddq);
        w->acc = check_worst(w->acc, rel_err(ddq, ref, nv));
        mbs_forward_kinematics(m, d, q, NULL, NULL);
        w->kin = check_worst(w->kin, compare_placements(m, d, mm, md, path));
    }
    w->key = compare_keys(m, mm, path);
    free(buf);
    mbs_data_free(d);
    mj_deleteData(md);
    mj_deleteModel(mm);
    mbs_model_free(m);
}

/* Models whose inertias MuJoCo diagonalises itself (<inertial fullinertia>, several geoms in one
 * body): its compiler finds the principal axes iteratively (mju_eig3) and keeps the inertia only to
 * about 1e-8 of its size (its diagonal and axes turned back into a tensor differ from the file's by
 * that), where mbs keeps the tensor as given. Everything else agrees to round-off. */
static const char *const eig_models = "full_tensor.xml inertia_full.xml panda_nomesh.xml";
#define TOL_EIG 1e-7

/* Whether the file at path has a fullinertia (a held-out model's reason for TOL_EIG). */
static int has_fullinertia(const char *path)
{
    FILE *f = fopen(path, "rb");
    if (!f) return 0;
    char *buf = NULL;
    long n = fseek(f, 0, SEEK_END) == 0 ? ftell(f) : -1;
    int found = 0;
    if (n > 0 && fseek(f, 0, SEEK_SET) == 0 && (buf = malloc((size_t)n + 1)) && fread(buf, 1, (size_t)n, f) == (size_t)n) {
        buf[n] = 0;
        found = strstr(buf, "fullinertia") != NULL;
    }
    free(buf);
    fclose(f);
    return found;
}

static void check_one(const char *path, int extra)
{
    worst w;
    compare_model(path, 0, &w);
    const char *base = strrchr(path, '/') ? strrchr(path, '/') + 1 : path;
    int eig = strstr(eig_models, base) || (extra && has_fullinertia(path));
    double tol = eig ? TOL_EIG : TOL;
    printf("%s: M %.1e  bias %.1e  acc %.1e  placements %.1e  keys %.1e\n", base, w.M, w.bias, w.acc, w.kin, w.key);
    CHECK(w.M <= tol && w.bias <= tol && w.acc <= tol && w.kin <= TOL && w.key <= TOL,
          "%s: relative errors M %.1e bias %.1e acc %.1e placements %.1e keys %.1e above %.0e", path, w.M, w.bias, w.acc,
          w.kin, w.key, tol);
    if (!eig) return;
    /* the same model with MuJoCo's compiled inertias in place of the file's: what is left of the
     * difference above is its compiler's rounding of the inertia, not the dynamics (1e-9) */
    compare_model(path, 1, &w);
    printf("%s with MuJoCo's compiled inertias: M %.1e  bias %.1e  acc %.1e\n", base, w.M, w.bias, w.acc);
    CHECK(w.M <= TOL && w.bias <= TOL && w.acc <= TOL,
          "%s with MuJoCo's inertias: relative errors M %.1e bias %.1e acc %.1e above %.0e", path, w.M, w.bias, w.acc, TOL);
}

/* The project's own small models, each feature of the loader. */
static void test_own_models(void)
{
    DIR *dir = opendir(MJCF_DIR);
    CHECK(dir != NULL, "no %s", MJCF_DIR);
    if (!dir) return;
    char names[64][256];
    int n = 0;
    for (struct dirent *e; (e = readdir(dir)) && n < 64;) {
        size_t len = strlen(e->d_name);
        if (len > 4 && strcmp(e->d_name + len - 4, ".xml") == 0) snprintf(names[n++], 256, "%s", e->d_name);
    }
    closedir(dir);
    CHECK(n >= 7, "only %d models in %s", n, MJCF_DIR);
    qsort(names, (size_t)n, sizeof names[0], (int (*)(const void *, const void *))strcmp);
    for (int i = 0; i < n; i++) {
        char path[512];
        snprintf(path, sizeof path, "%s/%.255s", MJCF_DIR, names[i]);
        check_one(path, 0);
    }
}

/* The Menagerie robots (third-party files, read in place). */
static void test_menagerie(void)
{
    struct stat st;
    if (stat(REF_DIR, &st) != 0) {
        printf("skipped: ../shared/reference not found\n");
        return;
    }
    static const char *const robots[] = {"go2_nomesh.xml", "anymal_c_nomesh.xml", "h1_nomesh.xml", "panda_nomesh.xml"};
    for (size_t i = 0; i < sizeof robots / sizeof robots[0]; i++) {
        char path[512];
        snprintf(path, sizeof path, "%s/%s", REF_DIR, robots[i]);
        check_one(path, 0);
    }
}

/* Models named by MBS_MJCF_EXTRA (colon-separated paths), for a held-out check by hand. */
static void test_extra(void)
{
    const char *env = getenv("MBS_MJCF_EXTRA");
    if (!env || !*env) return;
    char *list = strdup(env);
    CHECK(list != NULL, "out of memory");
    for (char *save = NULL, *p = list ? strtok_r(list, ":", &save) : NULL; p; p = strtok_r(NULL, ":", &save))
        check_one(p, 1);
    free(list);
}

int main(void)
{
    RUN(test_own_models);
    RUN(test_menagerie);
    RUN(test_extra);
    return check_summary("test_mjcf_mujoco");
}
#else
int main(void)
{
    printf("skipped: MuJoCo not installed (no /usr/include/mujoco/mujoco.h; apt-get install libmujoco-dev)\n");
    return check_summary("test_mjcf_mujoco");
}
#endif
