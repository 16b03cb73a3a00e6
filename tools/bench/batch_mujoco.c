/* batch_mujoco.c — Solo-12 in MuJoCo for bench_batch (see batch_mujoco.h). Compiled into
 * build/tools/bench_batch only when libmujoco-dev is installed. */
#include <pthread.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <time.h>
#include <unistd.h>

#include <mujoco/mujoco.h>

#include "batch_mujoco.h"

const char *const mjbatch_joints[12] = {"FL_HAA", "FL_HFE", "FL_KFE", "FR_HAA", "FR_HFE", "FR_KFE",
                                        "HL_HAA", "HL_HFE", "HL_KFE", "HR_HAA", "HR_HFE", "HR_KFE"};
static const char *const feet[4] = {"FL_FOOT", "FR_FOOT", "HL_FOOT", "HR_FOOT"};

struct mjbatch {
    mjModel *m;
    int n;
    mjData **d;
    int qadr[12], dadr[12];   /* each joint's qpos and dof address */
    double posture[12], kp, kd;
};

/* text with `ins` inserted at offset at (a new malloc'd string; the old one freed) */
static char *insert(char *text, size_t at, const char *ins)
{
    size_t n = strlen(text), k = strlen(ins);
    char *out = malloc(n + k + 1);
    if (!out) { free(text); return NULL; }
    memcpy(out, text, at);
    memcpy(out + at, ins, k);
    memcpy(out + at + k, text + at, n - at + 1);
    free(text);
    return out;
}

/* text with `ins` inserted right after the end of the first tag that starts with `tag` */
static char *insert_after_tag(char *text, const char *tag, const char *ins)
{
    char *p = text ? strstr(text, tag) : NULL;
    char *e = p ? strchr(p, '>') : NULL;
    if (!e) { free(text); return NULL; }
    return insert(text, (size_t)(e + 1 - text), ins);
}

static char *read_file(const char *path)
{
    FILE *f = fopen(path, "rb");
    if (!f) return NULL;
    fseek(f, 0, SEEK_END);
    long n = ftell(f);
    rewind(f);
    char *t = n >= 0 ? malloc((size_t)n + 1) : NULL;
    if (t && fread(t, 1, (size_t)n, f) != (size_t)n) { free(t); t = NULL; }
    if (t) t[n] = 0;
    fclose(f);
    return t;
}

static mjModel *load_text(const char *name, const char *text, char *msg, int msglen)
{
    mjVFS *vfs = malloc(sizeof *vfs);
    if (!vfs) { snprintf(msg, (size_t)msglen, "out of memory"); return NULL; }
    mj_defaultVFS(vfs);
    int len = (int)strlen(text);
    mjModel *m = NULL;
    if (mj_makeEmptyFileVFS(vfs, name, len) != 0) snprintf(msg, (size_t)msglen, "mj_makeEmptyFileVFS failed");
    else {
        memcpy(vfs->filedata[mj_findFileVFS(vfs, name)], text, (size_t)len);
        m = mj_loadXML(name, vfs, msg, msglen);
    }
    mj_deleteVFS(vfs);
    free(vfs);
    return m;
}

/* Solo as an MJCF model: the URDF through MuJoCo's importer with a free root and the FOOT bodies
 * kept, saved as MJCF, completed with the floor and the foot spheres, loaded again. */
static mjModel *solo_model(const char *urdf_path, double dt, char *msg, int msglen)
{
    char *urdf = read_file(urdf_path);
    if (!urdf) { snprintf(msg, (size_t)msglen, "%s: cannot read", urdf_path); return NULL; }
    urdf = insert_after_tag(urdf, "<robot",
                            "<mujoco><compiler fusestatic=\"false\" discardvisual=\"true\"/></mujoco>"
                            "<link name=\"world\"/><joint name=\"root\" type=\"floating\">"
                            "<parent link=\"world\"/><child link=\"base_link\"/></joint>");
    if (!urdf) { snprintf(msg, (size_t)msglen, "%s: no <robot>", urdf_path); return NULL; }
    mjModel *m = load_text("solo.urdf", urdf, msg, msglen);
    free(urdf);
    if (!m) return NULL;
    char tmp[] = "/tmp/mbs_bench_batch_XXXXXX";
    int fd = mkstemp(tmp);
    if (fd < 0) { mj_deleteModel(m); snprintf(msg, (size_t)msglen, "mkstemp failed"); return NULL; }
    close(fd);
    int saved = mj_saveLastXML(tmp, m, msg, msglen);
    mj_deleteModel(m);
    char *xml = saved ? read_file(tmp) : NULL;
    unlink(tmp);
    if (!xml) { if (saved) snprintf(msg, (size_t)msglen, "cannot read the saved MJCF"); return NULL; }
    char opt[256];
    /* room for the four foot contacts (pyramidal cones: 4 rows each) and little more */
    snprintf(opt, sizeof opt, "<option timestep=\"%.17g\"/><size njmax=\"64\" nconmax=\"16\"/>", dt);
    char *sz = strstr(xml, "<size ");
    if (sz) memset(sz, ' ', (size_t)(strchr(sz, '>') + 1 - sz));   /* the importer's defaults */
    xml = insert_after_tag(xml, "<mujoco", opt);
    xml = insert_after_tag(xml, "<worldbody",
                           "<geom name=\"floor\" type=\"plane\" size=\"0 0 1\" friction=\"1 0.005 0.0001\"/>");
    for (int f = 0; f < 4 && xml; f++) {
        char tag[64];
        snprintf(tag, sizeof tag, "<body name=\"%s\"", feet[f]);
        /* feet touch the floor, not each other: contype 0 */
        xml = insert_after_tag(xml, tag,
                               "<geom type=\"sphere\" size=\"0.0191\" mass=\"0\" contype=\"0\" conaffinity=\"1\" "
                               "friction=\"1 0.005 0.0001\"/>");
    }
    if (!xml) { snprintf(msg, (size_t)msglen, "unexpected MJCF from the URDF importer"); return NULL; }
    m = load_text("solo.xml", xml, msg, msglen);
    free(xml);
    return m;
}

mjbatch *mjbatch_new(const char *urdf_path, int n, double base_z, const double posture[12], const double *dq,
                     double dt, double kp, double kd, char *msg, int msglen)
{
    mjbatch *b = calloc(1, sizeof *b);
    if (!b) { snprintf(msg, (size_t)msglen, "out of memory"); return NULL; }
    b->m = solo_model(urdf_path, dt, msg, msglen);
    b->d = calloc((size_t)n, sizeof *b->d);
    if (!b->m || !b->d) { mjbatch_free(b); return NULL; }
    b->n = n;
    b->kp = kp;
    b->kd = kd;
    memcpy(b->posture, posture, sizeof b->posture);
    for (int j = 0; j < 12; j++) {
        int id = mj_name2id(b->m, mjOBJ_JOINT, mjbatch_joints[j]);
        if (id < 0) { snprintf(msg, (size_t)msglen, "no joint %s", mjbatch_joints[j]); mjbatch_free(b); return NULL; }
        b->qadr[j] = b->m->jnt_qposadr[id];
        b->dadr[j] = b->m->jnt_dofadr[id];
    }
    for (int i = 0; i < n; i++) {
        mjData *d = b->d[i] = mj_makeData(b->m);
        if (!d) { snprintf(msg, (size_t)msglen, "mj_makeData failed"); mjbatch_free(b); return NULL; }
        d->qpos[2] = base_z;   /* the free joint: x y z qw qx qy qz, upright */
        for (int j = 0; j < 12; j++) d->qpos[b->qadr[j]] = posture[j] + (dq ? dq[j + 12 * i] : 0);
        mj_forward(b->m, d);
    }
    return b;
}

void mjbatch_free(mjbatch *b)
{
    if (!b) return;
    for (int i = 0; b->d && i < b->n; i++) mj_deleteData(b->d[i]);
    free(b->d);
    if (b->m) mj_deleteModel(b->m);
    free(b);
}

static void step_one(mjbatch *b, int i)
{
    mjData *d = b->d[i];
    for (int j = 0; j < 12; j++)
        d->qfrc_applied[b->dadr[j]] = b->kp * (b->posture[j] - d->qpos[b->qadr[j]]) - b->kd * d->qvel[b->dadr[j]];
    mj_step(b->m, d);
}

typedef struct share {
    mjbatch *b;
    int begin, end, nsteps;
    pthread_barrier_t *barrier;
} share;

static void *run_share(void *arg)
{
    share *s = arg;
    for (int k = 0; k < s->nsteps; k++) {
        for (int i = s->begin; i < s->end; i++) step_one(s->b, i);
        pthread_barrier_wait(s->barrier);
    }
    return NULL;
}

static double now(void)
{
    struct timespec t;
    clock_gettime(CLOCK_MONOTONIC, &t);
    return (double)t.tv_sec + 1e-9 * (double)t.tv_nsec;
}

double mjbatch_run(mjbatch *b, int nthreads, int nsteps)
{
    if (nthreads > b->n) nthreads = b->n;   /* as the engine's pool: no thread without a system */
    if (nthreads > 64) nthreads = 64;
    if (nthreads <= 1) {
        double t0 = now();
        for (int k = 0; k < nsteps; k++)
            for (int i = 0; i < b->n; i++) step_one(b, i);
        return now() - t0;
    }
    pthread_barrier_t barrier;
    pthread_barrier_init(&barrier, NULL, (unsigned)nthreads);
    share sh[64];
    pthread_t th[64];
    for (int t = 0; t < nthreads; t++) {
        sh[t] = (share){b, (int)((long)b->n * t / nthreads), (int)((long)b->n * (t + 1) / nthreads), nsteps, &barrier};
    }
    double t0 = now();
    for (int t = 1; t < nthreads; t++) pthread_create(&th[t], NULL, run_share, &sh[t]);
    run_share(&sh[0]);
    for (int t = 1; t < nthreads; t++) pthread_join(th[t], NULL);
    double el = now() - t0;
    pthread_barrier_destroy(&barrier);
    return el;
}

double mjbatch_base_z(const mjbatch *b, int i) { return b->d[i]->qpos[2]; }
int mjbatch_ncon(const mjbatch *b, int i) { return b->d[i]->ncon; }
long mjbatch_data_bytes(const mjbatch *b) { return (long)b->m->nstack * (long)sizeof(mjtNum) + (long)b->m->nbuffer; }
const char *mjbatch_version(void) { return mj_versionString(); }
