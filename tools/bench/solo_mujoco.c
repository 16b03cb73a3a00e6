/* solo_mujoco.c — Solo-12 as a MuJoCo model (see solo_mujoco.h). Compiled into the benchmarks that
 * put MuJoCo beside the engine only when libmujoco-dev is installed. */
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <unistd.h>

#include "solo_mujoco.h"

static const char *const feet[4] = {"FL_FOOT", "FR_FOOT", "HL_FOOT", "HR_FOOT"};

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
 * kept, saved as MJCF, completed with the floor, the foot spheres and the motors, loaded again. */
mjModel *solo_mujoco_model(const char *urdf_path, double dt, const char *const *motors, int nmotors, char *msg,
                           int msglen)
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
    char tmp[] = "/tmp/mbs_bench_solo_XXXXXX";
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
    if (nmotors > 0 && xml) {
        /* the motors go last: an <actuator> section of their own at the end of <mujoco> */
        size_t len = 32;
        for (int j = 0; j < nmotors; j++) len += strlen(motors[j]) + 24;
        char *act = malloc(len), *end = strstr(xml, "</mujoco>");
        if (act && end) {
            size_t k = (size_t)snprintf(act, len, "<actuator>");
            for (int j = 0; j < nmotors; j++) k += (size_t)snprintf(act + k, len - k, "<motor joint=\"%s\"/>", motors[j]);
            snprintf(act + k, len - k, "</actuator>");
            xml = insert(xml, (size_t)(end - xml), act);
        } else {
            free(xml);
            xml = NULL;
        }
        free(act);
    }
    if (!xml) { snprintf(msg, (size_t)msglen, "unexpected MJCF from the URDF importer"); return NULL; }
    m = load_text("solo.xml", xml, msg, msglen);
    free(xml);
    return m;
}
