/* csv.c — the run's trajectory CSV: a header naming every column with its unit, then one row
 * per controller period. The CSV goes to stdout ("-"), through a FIFO, a character device or a
 * symlink as it is, or to "<csv>.tmp" renamed when the run ends; a resumed run's is cut to the
 * checkpoint's length and appended to. */
#include <errno.h>
#include <stdio.h>
#include <sys/stat.h>
#include <unistd.h>

#include "run.h"


/* 'x', 'y' or 'z' when e is that unit axis, else 0. */
static char axis_letter(const double e[3])
{
    for (int k = 0; k < 3; k++)
        if (e[k] == 1 && e[(k + 1) % 3] == 0 && e[(k + 2) % 3] == 0) return "xyz"[k];
    return 0;
}

/* A planar joint's column suffixes, named after the axes its plane and normal are (a planar root:
 * q [z x c s], v [vz vx wy], its first coordinate being world z); x, y, wz when they are no axes. */
static void planar_names(const mbs_body *b, char q[4][4], char v[3][4])
{
    char t1 = axis_letter(b->plane), t2 = axis_letter(b->plane + 3), n = axis_letter(b->axis);
    if (!t1 || !t2 || !n) { t1 = 'x'; t2 = 'y'; n = 'z'; }
    snprintf(q[0], 4, "%c", t1);
    snprintf(q[1], 4, "%c", t2);
    snprintf(q[2], 4, "c");
    snprintf(q[3], 4, "s");
    snprintf(v[0], 4, "v%c", t1);
    snprintf(v[1], 4, "v%c", t2);
    snprintf(v[2], 4, "w%c", n);
}

/* Joint j moves a floating root (free flyer, planar): its τ is no actuator's and has no column. */
static int unactuated(const mbs_model *m, int j)
{
    mbs_joint_type t = mbs_joint_type_of(m, j);
    return t == MBS_JOINT_FREEFLYER || t == MBS_JOINT_PLANAR;
}

/* The columns of q (what = 0), v (1) or τ (2), each name ending in its unit: _m, _rad, _m_s,
 * _rad_s, _N, _Nm; a quaternion's and a planar angle's cos/sin have none. */
static void csv_names(FILE *f, const mbs_model *m, int what)
{
    static const char *const prefix[] = {"q", "v", "tau"};
    static const char *const ffq[] = {"x_m", "y_m", "z_m", "qx", "qy", "qz", "qw"},
                             *const ffv[] = {"vx_m_s", "vy_m_s", "vz_m_s", "wx_rad_s", "wy_rad_s", "wz_rad_s"};
    for (int j = 0; j < mbs_model_njoints(m); j++) {
        const char *name = mbs_joint_name(m, j);
        mbs_joint_type t = mbs_joint_type_of(m, j);
        if (what == 2 && unactuated(m, j)) continue;
        int n = what ? mbs_joint_nv(m, j) : mbs_joint_nq(m, j);
        if (t == MBS_JOINT_FREEFLYER) {
            for (int k = 0; k < n; k++) fprintf(f, ",%s_%s_%s", prefix[what], name, what ? ffv[k] : ffq[k]);
        } else if (t == MBS_JOINT_BALL) {
            static const char *const bq[] = {"qx", "qy", "qz", "qw"}, *const bv[] = {"wx_rad_s", "wy_rad_s", "wz_rad_s"},
                                     *const bt[] = {"x_Nm", "y_Nm", "z_Nm"};
            const char *const *sfx = what == 0 ? bq : what == 1 ? bv : bt;
            for (int k = 0; k < n; k++) fprintf(f, ",%s_%s_%s", prefix[what], name, sfx[k]);
        } else if (t == MBS_JOINT_PLANAR) {
            char plq[4][4], plv[3][4];
            planar_names(&m->bodies[j], plq, plv);
            static const char *const uq[] = {"_m", "_m", "", ""}, *const uv[] = {"_m_s", "_m_s", "_rad_s"};
            for (int k = 0; k < n; k++)
                fprintf(f, ",%s_%s_%s%s", prefix[what], name, what ? plv[k] : plq[k], what ? uv[k] : uq[k]);
        } else {
            static const char *const rev[] = {"rad", "rad_s", "Nm"}, *const pri[] = {"m", "m_s", "N"};
            fprintf(f, ",%s_%s_%s", prefix[what], name, t == MBS_JOINT_PRISMATIC ? pri[what] : rev[what]);
        }
    }
}

static void csv_header(FILE *f, const mbs_system *s, int push)
{
    fprintf(f, "t_s");
    for (int what = 0; what < 3; what++) csv_names(f, s->model, what);
    for (int i = 0; i < s->ncontacts; i++) {
        char n[MBS_NAME_LEN + 16];
        mbs_system_contact_label(s, i, n, sizeof n);
        fprintf(f, ",%s_fx_N,%s_fy_N,%s_fz_N,%s_active", n, n, n, n);
    }
    if (push) fprintf(f, ",push_fx_N,push_fy_N,push_fz_N");
    fputc('\n', f);
}

void mbsi_csv_row(FILE *f, const mbs_system *s, double t, const double *push)
{
    fprintf(f, "%.9g", t);
    for (int k = 0; k < s->nq; k++) fprintf(f, ",%.12g", s->q[k]);
    for (int k = 0; k < s->nv; k++) fprintf(f, ",%.12g", s->v[k]);
    for (int j = 0; j < mbs_model_njoints(s->model); j++) {
        if (unactuated(s->model, j)) continue;
        int v0 = mbs_joint_idx_v(s->model, j);
        for (int k = v0; k < v0 + mbs_joint_nv(s->model, j); k++) fprintf(f, ",%.9g", s->tau[k]);
    }
    for (int i = 0; i < s->ncontacts; i++) {
        const mbs_contact *c = &s->contacts[i];
        fprintf(f, ",%.9g,%.9g,%.9g,%d", c->lambda[0], c->lambda[1], c->lambda[2], c->active);
    }
    if (push) fprintf(f, ",%.9g,%.9g,%.9g", push[0], push[1], push[2]);
    fputc('\n', f);
}

/* Opens the CSV before the run and writes its header, so that a path that cannot be written is
 * refused before any step. "-" is stdout. A FIFO, a character device or a symlink is opened as it
 * is ("written through"): a reader at the other end, the device or the link's target gets the rows,
 * and the link stays a link. A regular file or a new path gets "<path>.tmp", renamed when the run
 * ends, so that no truncated file ever has the requested name. A directory, a block device, a
 * socket, a file without write permission or a folder that cannot be written is refused. */
int mbsi_csv_open(const mbs_system *s, const char *csv, int push, csv_out *c, mbs_error *err)
{
    memset(c, 0, sizeof *c);
    if (!csv || !csv[0]) return MBS_OK;
    c->path = csv;
    if (strcmp(csv, "-") == 0) {
        c->f = stdout;
        c->std = 1;
    } else {
        struct stat st;
        int exists = lstat(csv, &st) == 0;
        if (!exists && errno != ENOENT) return mbsi_fail(err, MBS_ERR_IO, "cannot write the CSV '%s': %s", csv, strerror(errno));
        if (exists && S_ISDIR(st.st_mode)) return mbsi_fail(err, MBS_ERR_IO, "cannot write the CSV '%s': it is a directory", csv);
        if (exists && (S_ISLNK(st.st_mode) || S_ISFIFO(st.st_mode) || S_ISCHR(st.st_mode))) {
            c->f = fopen(csv, "w");
            if (!c->f) return mbsi_fail(err, MBS_ERR_IO, "cannot write the CSV '%s': %s", csv, strerror(errno));
        } else if (exists && !S_ISREG(st.st_mode)) {
            return mbsi_fail(err, MBS_ERR_IO, "cannot write the CSV '%s': it is a %s", csv,
                             S_ISBLK(st.st_mode) ? "block device" : S_ISSOCK(st.st_mode) ? "socket" : "special file");
        } else {
            if (exists && access(csv, W_OK) != 0)
                return mbsi_fail(err, MBS_ERR_IO, "cannot write the CSV '%s': %s", csv, strerror(errno));
            if ((size_t)snprintf(c->tmp, sizeof c->tmp, "%s.tmp", csv) >= sizeof c->tmp)
                return mbsi_fail(err, MBS_ERR_ARG, "cannot write the CSV '%s': path too long", csv);
            c->f = fopen(c->tmp, "w");
            if (!c->f) return mbsi_fail(err, MBS_ERR_IO, "cannot write the CSV '%s': %s", csv, strerror(errno));
        }
    }
    csv_header(c->f, s, push);
    return MBS_OK;
}

/* Reopens the CSV of a resumed run, its rows after `offset` bytes (where the checkpoint left it)
 * cut, to append to: a regular file (or, after a crash, its "<csv>.tmp") becomes "<csv>.tmp" again
 * and is renamed when the run ends; a symlink's target is cut and appended to; stdout, a FIFO or
 * a character device get the rows from the checkpoint on, without a header. offset < 0: the
 * checkpoint's CSV could not be measured (stdout, a FIFO): nothing is cut. */
int mbsi_csv_resume(const char *csv, long long offset, csv_out *c, mbs_error *err)
{
    memset(c, 0, sizeof *c);
    if (!csv || !csv[0]) return MBS_OK;
    c->path = csv;
    if (strcmp(csv, "-") == 0) {
        c->f = stdout;
        c->std = 1;
        return MBS_OK;
    }
    struct stat st;
    int exists = lstat(csv, &st) == 0;
    if (exists && S_ISDIR(st.st_mode)) return mbsi_fail(err, MBS_ERR_IO, "cannot write the CSV '%s': it is a directory", csv);
    if (exists && (S_ISFIFO(st.st_mode) || S_ISCHR(st.st_mode))) {
        c->f = fopen(csv, "w");
        if (!c->f) return mbsi_fail(err, MBS_ERR_IO, "cannot write the CSV '%s': %s", csv, strerror(errno));
        return MBS_OK;
    }
    const char *name = csv;
    if (!exists || !S_ISLNK(st.st_mode)) {
        if ((size_t)snprintf(c->tmp, sizeof c->tmp, "%s.tmp", csv) >= sizeof c->tmp)
            return mbsi_fail(err, MBS_ERR_ARG, "cannot write the CSV '%s': path too long", csv);
        if (exists && rename(csv, c->tmp) != 0)
            return mbsi_fail(err, MBS_ERR_IO, "cannot rename '%s' to '%s': %s", csv, c->tmp, strerror(errno));
        if (!exists && access(c->tmp, F_OK) != 0)
            return mbsi_fail(err, MBS_ERR_IO, "cannot resume the CSV '%s': neither it nor '%s' exists", csv, c->tmp);
        name = c->tmp;
    }
    c->f = fopen(name, "r+");
    if (!c->f) {
        int e = errno;
        if (c->tmp[0] && exists) rename(c->tmp, csv);
        return mbsi_fail(err, MBS_ERR_IO, "cannot resume the CSV '%s': %s", csv, strerror(e));
    }
    struct stat fs;
    if (offset >= 0 && (fstat(fileno(c->f), &fs) != 0 || (long long)fs.st_size < offset)) {
        long long size = (long long)fs.st_size;
        fclose(c->f);
        c->f = NULL;
        if (c->tmp[0] && exists) rename(c->tmp, csv);
        return mbsi_fail(err, MBS_ERR_IO, "cannot resume the CSV '%s': it has %lld bytes, the checkpoint was written after %lld",
                         csv, size, offset);
    }
    if ((offset >= 0 && ftruncate(fileno(c->f), (off_t)offset) != 0) || fseek(c->f, 0, SEEK_END) != 0) {
        int e = errno;
        fclose(c->f);
        c->f = NULL;
        if (c->tmp[0] && exists) rename(c->tmp, csv);
        return mbsi_fail(err, MBS_ERR_IO, "cannot resume the CSV '%s': %s", csv, strerror(e));
    }
    return MBS_OK;
}

/* Closes the CSV and gives it its name; keep = 0 removes the temporary file (a file written
 * through keeps the rows written so far: it cannot be taken back). */
int mbsi_csv_close(csv_out *c, int keep, mbs_error *err)
{
    if (!c->f) return MBS_OK;
    int bad = ferror(c->f);
    if (c->std) bad |= fflush(c->f) != 0;
    else bad |= fclose(c->f) != 0;
    c->f = NULL;
    if (!c->tmp[0]) {
        if (bad && keep) return mbsi_fail(err, MBS_ERR_IO, "error writing the CSV '%s'", c->path);
        return MBS_OK;
    }
    if (!keep) { remove(c->tmp); return MBS_OK; }
    if (bad) { remove(c->tmp); return mbsi_fail(err, MBS_ERR_IO, "error writing the CSV '%s' (to '%s')", c->path, c->tmp); }
    if (rename(c->tmp, c->path) != 0) {
        int e = errno;
        remove(c->tmp);
        return mbsi_fail(err, MBS_ERR_IO, "cannot rename '%s' to '%s': %s", c->tmp, c->path, strerror(e));
    }
    return MBS_OK;
}
