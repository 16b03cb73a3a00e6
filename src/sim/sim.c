/* sim.c — the simulation loop: the controller every controller period (its torque held in
 * between), the stepper in sub-steps of dt, checks after every step (the stepper's error, which
 * a state that is not finite is, a velocity beyond the bound: divergence; the base leaving the
 * scenario's box: a status of its own), a CSV row per controller period, and the figures of the
 * summary. The CSV goes to stdout ("-"), through a FIFO, a character device or a symlink as it
 * is, or to "<csv>.tmp" renamed when the run ends. */
#include <errno.h>
#include <stdarg.h>
#include <stdio.h>
#include <stdlib.h>
#include <sys/stat.h>
#include <time.h>
#include <unistd.h>

#include "../step/step_internal.h"
#include "replay.h"
#include "sim_internal.h"

struct mbs_sim {
    const mbs_scenario *sc;
    mbs_system *sys;
    mbs_stepper *st;
    mbs_controller *ctrl;
    mbs_control_callback user_control;
    void *user;
    int root;          /* MBS_ROOT_FIXED, _FREE or _PLANAR: the base's box and the summary's base figures */
    int *touching;     /* ncontacts: each contact's active flag after the last step, for touchdowns */
    int *foot;         /* ncontacts: the first contact on the same frame (a foot's points share one) */
    mbs_data *energy;  /* the summary's energies, apart from the stepper's data */
    mbs_sim_summary *counting;   /* during mbs_sim_run: the summary the substep callback counts into */
    const mbs_sim_run_options *opt;   /* during mbs_sim_run: the caller's options (contact_event) */
    int nsub;          /* steps per controller period */
    int ran;
};

static double now(void)
{
    struct timespec ts;
    clock_gettime(CLOCK_MONOTONIC, &ts);
    return (double)ts.tv_sec + 1e-9 * (double)ts.tv_nsec;
}

/* err = e, located: a message about one of the options ("key: ...") gets that option's file and
 * line, any other the line of [section] key (the scheme's name). */
static void scheme_error(const mbs_scenario *sc, const char *section, const char *key, const char *scheme,
                         const mbs_option *opts, int n, const mbs_error *e, mbs_error *err)
{
    char w[MBS_PATH_LEN + 256];
    const char *msg = e->msg;
    mbs_scenario_where(sc, section, key, w, sizeof w);
    for (int i = 0; i < n; i++) {
        size_t k = strlen(opts[i].key);
        if (strncmp(e->msg, opts[i].key, k) == 0 && e->msg[k] == ':' && e->msg[k + 1] == ' ') {
            mbs_scenario_where(sc, scheme, opts[i].key, w, sizeof w);
            msg = e->msg + k + 2;
        }
    }
    mbsi_fail(err, e->code ? e->code : MBS_ERR_ARG, "%s: %s", w, msg);
}

/* Creates the scenario's stepper with its section's options (checked when the scenario was
 * loaded; a message about one option still gets its file and line). */
static mbs_stepper *make_stepper(const mbs_scenario *sc, mbs_system *sys, mbs_error *err)
{
    mbs_option opts[MBS_SIM_MAX_OPTIONS];
    int n = mbs_scenario_options(sc, sc->stepper, opts, MBS_SIM_MAX_OPTIONS);
    mbs_error e;
    mbs_error_clear(&e);
    mbs_stepper *st = mbs_stepper_new(sc->stepper, sys, opts, n, &e);
    if (!st) scheme_error(sc, "stepper", "name", sc->stepper, opts, n, &e, err);
    return st;
}

/* Creates the scenario's controller with its options, located like the stepper's errors. */
static mbs_controller *make_controller(const mbs_scenario *sc, mbs_system *sys, mbs_error *err)
{
    mbs_option opts[MBS_SIM_MAX_OPTIONS];
    int n = mbs_scenario_options(sc, "controller", opts, MBS_SIM_MAX_OPTIONS);
    mbs_error e;
    mbs_error_clear(&e);
    mbs_controller *c = mbs_controller_new(sc->controller, sys, sc->q0, sc->controller_dt, opts, n, &e);
    if (!c) scheme_error(sc, "controller", "type", "controller", opts, n, &e, err);
    return c;
}

int mbs_scenario_setup_system(const mbs_scenario *sc, mbs_system *sys, mbs_error *err)
{
    if (!sc || !sys || sys->model != sc->model)
        return mbsi_fail(err, MBS_ERR_ARG, "mbs_scenario_setup_system: no scenario, or a system of another model");
    if (sys->max_contacts - sys->ncontacts < sc->ncontacts)
        return mbsi_fail(err, MBS_ERR_ARG, "mbs_scenario_setup_system: the system has room for %d more contacts, the scenario has %d",
                         sys->max_contacts - sys->ncontacts, sc->ncontacts);
    for (int i = 0; i < sc->ncontacts; i++) {
        const mbs_scenario_contact *c = &sc->contacts[i];
        int rim = c->axis[0] != 0 || c->axis[1] != 0 || c->axis[2] != 0;
        if ((rim ? mbs_system_add_rim(sys, c->frame, c->offset, c->axis, c->radius, err)
                 : mbs_system_add_contact(sys, c->frame, c->offset, c->radius, err)) < 0)
            return err ? err->code : MBS_ERR_ARG;
    }
    for (int i = 0; i < sc->env.nplanes; i++) {
        int rc = mbs_system_add_plane(sys, sc->env.planes[i].normal, sc->env.planes[i].offset, &sc->env.planes[i].material, err);
        if (rc) return rc;
    }
    for (int i = 0; i < sc->env.nboxes; i++) {
        const mbs_box *b = &sc->env.boxes[i];
        int rc = mbs_system_add_box(sys, b->center, b->R, b->half, &b->material, err);
        if (rc) return rc;
    }
    mbs_system_set_state(sys, sc->q0, sc->v0, 0);
    return MBS_OK;
}

mbs_sim *mbs_sim_new(const mbs_scenario *sc, mbs_error *err)
{
    if (!sc || !sc->model) { mbsi_fail(err, MBS_ERR_ARG, "mbs_sim_new: no scenario"); return NULL; }
    mbs_sim *sim = calloc(1, sizeof *sim);
    if (!sim) { mbsi_fail(err, MBS_ERR_NOMEM, "out of memory"); return NULL; }
    sim->sc = sc;
    sim->sys = mbs_system_new(sc->model, sc->ncontacts, err);
    if (!sim->sys || mbs_scenario_setup_system(sc, sim->sys, err) != MBS_OK) goto fail;
    sim->st = make_stepper(sc, sim->sys, err);
    if (!sim->st) goto fail;
    if (mbs_stepper_set_dissipation(sim->st, sc->dissipation) != MBS_OK) {
        char w[MBS_PATH_LEN + 256];
        mbs_scenario_where(sc, "stepper", "dissipation", w, sizeof w);
        mbsi_fail(err, MBS_ERR_ARG, "%s: out of range: %g (must be in [0, 1])", w, sc->dissipation);
        goto fail;
    }
    /* allocated here, so that a step allocates nothing */
    sim->touching = calloc(2 * (size_t)sc->ncontacts + 1, sizeof *sim->touching);
    sim->energy = mbs_data_new(sc->model);
    if (!sim->touching || !sim->energy) { mbsi_fail(err, MBS_ERR_NOMEM, "out of memory"); goto fail; }
    sim->foot = sim->touching + sc->ncontacts;
    for (int c = 0; c < sim->sys->ncontacts; c++) {
        int f = 0;
        while (sim->sys->contacts[f].frame != sim->sys->contacts[c].frame) f++;
        sim->foot[c] = f;
    }
    sim->ctrl = make_controller(sc, sim->sys, err);
    if (!sim->ctrl) goto fail;
    sim->root = mbsi_root_kind(sc->model);
    sim->nsub = (int)floor(sc->controller_dt / sc->dt + 0.5);
    if (sim->nsub < 1) sim->nsub = 1;
    return sim;
fail:
    mbs_sim_free(sim);
    return NULL;
}

void mbs_sim_free(mbs_sim *sim)
{
    if (!sim) return;
    mbs_controller_free(sim->ctrl);
    mbs_stepper_free(sim->st);
    mbs_system_free(sim->sys);
    free(sim->touching);
    mbs_data_free(sim->energy);
    free(sim);
}

mbs_system *mbs_sim_system(mbs_sim *sim) { return sim ? sim->sys : NULL; }

void mbs_sim_set_control(mbs_sim *sim, mbs_control_callback cb, void *user)
{
    if (!sim) return;
    sim->user_control = cb;
    sim->user = user;
}

/* ---- CSV ---- */

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

static void csv_header(FILE *f, const mbs_system *s)
{
    fprintf(f, "t_s");
    for (int what = 0; what < 3; what++) csv_names(f, s->model, what);
    for (int i = 0; i < s->ncontacts; i++) {
        char n[MBS_NAME_LEN + 16];
        mbs_system_contact_label(s, i, n, sizeof n);
        fprintf(f, ",%s_fx_N,%s_fy_N,%s_fz_N,%s_active", n, n, n, n);
    }
    fputc('\n', f);
}

static void csv_row(FILE *f, const mbs_system *s, double t)
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
    fputc('\n', f);
}

/* ---- the run ---- */

/* Checks the state after a step: fills reason and returns 1 when the run diverged (the stepper's
 * error, e.g. a state that is not finite, which mbs_stepper_step reports, or a velocity above the
 * scenario's bound), 2 when the base left the scenario's box (a healthy run may walk out of it),
 * 0 when the run goes on. */
static int diverged(const mbs_sim *sim, int rc, char *reason, size_t n)
{
    const mbs_system *s = sim->sys;
    const mbs_scenario *sc = sim->sc;
    if (rc != MBS_OK) {
        const char *msg = mbs_stepper_last_error(sim->st)->msg;
        if (rc == MBS_ERR_NUMERIC) snprintf(reason, n, "%s", msg);
        else snprintf(reason, n, "the stepper failed: %s", msg);
        return 1;
    }
    for (int k = 0; k < s->nv; k++)
        if (fabs(s->v[k]) > sc->max_velocity) {
            snprintf(reason, n, "|v[%d]| = %.3g above max_velocity %g", k, fabs(s->v[k]), sc->max_velocity);
            return 1;
        }
    /* no [run] box: the bounds are infinite and never crossed */
    double p[3];
    if (mbsi_base_pose(sim->root, s->q, p, NULL))
        for (int k = 0; k < 3; k++)
            if (p[k] < sc->box_min[k] || p[k] > sc->box_max[k]) {
                snprintf(reason, n, "base %c = %.6g left [%g, %g]", "xyz"[k], p[k], sc->box_min[k], sc->box_max[k]);
                return 2;
            }
    return 0;
}

/* The summary's header: what runs, at which periods. */
static void summary_begin(const mbs_sim *sim, mbs_sim_summary *out)
{
    const mbs_scenario *sc = sim->sc;
    memset(out, 0, sizeof *out);
    snprintf(out->model, sizeof out->model, "%s", mbs_model_name(sc->model));
    snprintf(out->stepper, sizeof out->stepper, "%s", sc->stepper);
    snprintf(out->controller, sizeof out->controller, "%s", sc->controller);
    out->dt = sc->dt;
    out->has_base = sim->root != MBS_ROOT_FIXED;
    out->controller_dt = sc->controller_dt;
}

/* The initial state, and the contacts' state in it (anchors of feet already touching). */
static void initial_state(mbs_sim *sim)
{
    mbs_system *s = sim->sys;
    memset(s->tau, 0, (size_t)s->nv * sizeof(double));
    mbs_system_set_state(s, sim->sc->q0, sim->sc->v0, 0);
}

/* Where the CSV goes. */
typedef struct csv_out {
    FILE *f;                          /* NULL: no CSV */
    const char *path;                 /* as the caller gave it, for messages */
    char tmp[MBS_PATH_LEN + 8];       /* "<path>.tmp", renamed at the end; "" when written through */
    int std;                          /* "-": stdout, which is flushed, never closed */
} csv_out;

/* Opens the CSV before the run and writes its header, so that a path that cannot be written is
 * refused before any step. "-" is stdout. A FIFO, a character device or a symlink is opened as it
 * is ("written through"): a reader at the other end, the device or the link's target gets the rows,
 * and the link stays a link. A regular file or a new path gets "<path>.tmp", renamed when the run
 * ends, so that no truncated file ever has the requested name. A directory, a block device, a
 * socket, a file without write permission or a folder that cannot be written is refused. */
static int csv_open(const mbs_system *s, const char *csv, csv_out *c, mbs_error *err)
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
    csv_header(c->f, s);
    return MBS_OK;
}

/* Reopens the CSV of a resumed run, its rows after `offset` bytes (where the checkpoint left it)
 * cut, to append to: a regular file (or, after a crash, its "<csv>.tmp") becomes "<csv>.tmp" again
 * and is renamed when the run ends; a symlink's target is cut and appended to; stdout, a FIFO or
 * a character device get the rows from the checkpoint on, without a header. offset < 0: the
 * checkpoint's CSV could not be measured (stdout, a FIFO): nothing is cut. */
static int csv_resume(const char *csv, long long offset, csv_out *c, mbs_error *err)
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
static int csv_close(csv_out *c, int keep, mbs_error *err)
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

/* Touch-downs of points and feet since the flags were last recorded, into out; the flags recorded,
 * each change told to the caller's contact_event. */
static void count_touchdowns(mbs_sim *sim, mbs_sim_summary *out)
{
    const mbs_system *s = sim->sys;
    const mbs_sim_run_options *opt = sim->opt;
    /* a foot (the points on one frame) touches down when one of its points touches and none did */
    for (int f = 0; f < s->ncontacts; f++) {
        if (sim->foot[f] != f) continue;
        int was = 0, is = 0;
        for (int c = f; c < s->ncontacts; c++)
            if (sim->foot[c] == f) {
                was |= sim->touching[c];
                is |= s->contacts[c].active != 0;
            }
        out->foot_touchdowns += is && !was;
    }
    for (int c = 0; c < s->ncontacts; c++) {
        int touching = s->contacts[c].active != 0;
        if (opt && opt->contact_event && touching != sim->touching[c]) opt->contact_event(opt->user, s->t, c, touching);
        out->touchdowns += touching && !sim->touching[c];
        sim->touching[c] = touching;
    }
}

/* The system's substep callback, installed only while mbs_sim_run counts into sim->counting: a
 * scheme that splits its step shows the contacts between its sub-steps, so that a touch-down that
 * begins and ends inside one step counts. */
static void substep_touchdowns(void *user, const mbs_system *s)
{
    (void)s;
    mbs_sim *sim = user;
    count_touchdowns(sim, sim->counting);
}

/* The summary's figures of the state a step left: contacts, touchdowns, airborne time, base height
 * and tilt. */
static void summary_step(mbs_sim *sim, double dt, mbs_sim_summary *out)
{
    const mbs_system *s = sim->sys;
    int any = 0;
    count_touchdowns(sim, out);
    for (int c = 0; c < s->ncontacts; c++) {
        const mbs_contact *ct = &s->contacts[c];
        if (!ct->active) continue;
        any = 1;
        double fn = sqrt(ct->lambda[0] * ct->lambda[0] + ct->lambda[1] * ct->lambda[1] + ct->lambda[2] * ct->lambda[2]);
        if (ct->depth > out->max_penetration) out->max_penetration = ct->depth;
        if (fn > out->max_contact_force) out->max_contact_force = fn;
    }
    if (!any && s->ncontacts) out->airborne_s += dt;
    double p[3];
    if (mbsi_base_pose(sim->root, s->q, p, NULL)) {
        double tilt = mbsi_base_tilt_deg(sim->root, s->q);
        if (tilt > out->max_tilt_deg) out->max_tilt_deg = tilt;
        if (p[2] < out->base_z_min) out->base_z_min = p[2];
        if (p[2] > out->base_z_max) out->base_z_max = p[2];
    }
}

/* n steps of dt from time t (one controller period, or what is left of the run); stops at
 * divergence. Returns the iterations the stepper reported. */
static long steps(mbs_sim *sim, double t, long n, double dt, mbs_sim_summary *out)
{
    mbs_system *s = sim->sys;
    long iters = 0;
    for (long i = 0; i < n; i++) {
        mbs_step_stats st;
        int rc = mbs_stepper_step(sim->st, dt, &st);
        out->steps++;
        iters += st.iterations;
        out->nonconverged += st.nonconverged != 0;
        out->substeps += st.substeps;
        if (st.alpha < out->min_alpha) out->min_alpha = st.alpha;
        /* 0: a scheme that does not choose its sub-steps */
        if (st.min_dt > 0 && (out->min_dt == 0 || st.min_dt < out->min_dt)) out->min_dt = st.min_dt;
        out->rejected += st.rejected;
        /* time from the step count, not from accumulated dt, so that no drift creeps in */
        s->t = t + (double)(i + 1) * dt;
        int stop = diverged(sim, rc, out->reason, sizeof out->reason);
        if (stop) {
            out->diverged = stop == 1;
            out->left_box = stop == 2;
            out->diverged_t = s->t;
            break;
        }
        summary_step(sim, dt, out);
    }
    return iters;
}

/* The summary's closing figures: rates, means, where the base ended. */
static void summary_end(const mbs_sim *sim, double x0, double y0, double t_step, long iters, mbs_sim_summary *out)
{
    const mbs_system *s = sim->sys;
    out->us_per_step = out->steps ? 1e6 * t_step / (double)out->steps : 0;
    out->realtime_factor = out->wall_time_s > 0 ? out->sim_time / out->wall_time_s : 0;
    out->mean_iterations = out->steps ? (double)iters / (double)out->steps : 0;
    out->mean_dt = out->substeps ? out->sim_time / (double)out->substeps : 0;
    if (mbsi_base_pose(sim->root, s->q, out->base_final, out->base_final + 3))
        out->distance_m = hypot(out->base_final[0] - x0, out->base_final[1] - y0);
    uint64_t h = mbsi_fnv1a(&s->t, sizeof s->t, MBSI_FNV_INIT);
    h = mbsi_fnv1a(s->q, (size_t)s->nq * sizeof(double), h);
    out->final_state_hash = mbsi_fnv1a(s->v, (size_t)s->nv * sizeof(double), h);
    const mbs_model *m = sim->sc->model;
    out->energy_final = mbs_kinetic_energy(m, sim->energy, s->q, s->v) + mbs_potential_energy(m, sim->energy, s->q);
}

/* ---- checkpoints ---- */

/* What of mbs_sim_run's own locals a checkpoint holds. */
typedef struct run_state {
    long k;                /* the controller period the run goes on with */
    long long csv_offset;  /* the CSV's length then (bytes); -1: not measurable */
    double x0, y0;         /* where the base started */
    long iters;            /* solver iterations so far */
} run_state;

/* The one visitor of a run's complete state: the loop's position, the summary's accumulators and
 * touchdown flags, then the system, the stepper and the controller, each through its own visitor.
 * Saves or loads, as s says. The wall-clock figures are not state. */
static void sim_state(mbs_sim *sim, run_state *r, mbs_sim_summary *out, mbsi_state *s)
{
    mbsi_state_bytes(s, "run.period", &r->k, sizeof r->k);
    mbsi_state_bytes(s, "run.csv_offset", &r->csv_offset, sizeof r->csv_offset);
    mbsi_state_doubles(s, "run.x0", &r->x0, 1);
    mbsi_state_doubles(s, "run.y0", &r->y0, 1);
    mbsi_state_bytes(s, "run.iterations", &r->iters, sizeof r->iters);
    mbsi_state_bytes(s, "summary.steps", &out->steps, sizeof out->steps);
    mbsi_state_doubles(s, "summary.max_penetration", &out->max_penetration, 1);
    mbsi_state_doubles(s, "summary.max_contact_force", &out->max_contact_force, 1);
    mbsi_state_doubles(s, "summary.base_z_min", &out->base_z_min, 1);
    mbsi_state_doubles(s, "summary.base_z_max", &out->base_z_max, 1);
    mbsi_state_doubles(s, "summary.max_tilt_deg", &out->max_tilt_deg, 1);
    mbsi_state_doubles(s, "summary.airborne_s", &out->airborne_s, 1);
    mbsi_state_bytes(s, "summary.touchdowns", &out->touchdowns, sizeof out->touchdowns);
    mbsi_state_bytes(s, "summary.foot_touchdowns", &out->foot_touchdowns, sizeof out->foot_touchdowns);
    mbsi_state_doubles(s, "summary.energy_initial", &out->energy_initial, 1);
    mbsi_state_bytes(s, "summary.nonconverged", &out->nonconverged, sizeof out->nonconverged);
    mbsi_state_bytes(s, "summary.substeps", &out->substeps, sizeof out->substeps);
    mbsi_state_doubles(s, "summary.min_alpha", &out->min_alpha, 1);
    mbsi_state_doubles(s, "summary.min_dt", &out->min_dt, 1);
    mbsi_state_bytes(s, "summary.rejected", &out->rejected, sizeof out->rejected);
    mbsi_state_ints(s, "run.touching", sim->touching, (size_t)sim->sc->ncontacts);
    mbsi_system_state(sim->sys, s);
    mbsi_stepper_state(sim->st, s);
    mbsi_controller_state(sim->ctrl, s);
}

/* Writes the run's checkpoint at the start of period r->k (the CSV flushed and measured first). */
static int write_checkpoint(mbs_sim *sim, const char *path, run_state *r, mbs_sim_summary *out, csv_out *c,
                            mbsi_state *st, mbs_error *err)
{
    r->csv_offset = -1;
    if (c->f) {
        fflush(c->f);
        if (!c->std) {
            long o = ftell(c->f);
            r->csv_offset = o >= 0 ? o : -1;
        }
    }
    mbsi_state_begin_save(st);
    sim_state(sim, r, out, st);
    if (st->failed) return mbsi_fail(err, MBS_ERR_NOMEM, "cannot write the checkpoint '%s': %s", path, st->msg);
    return mbsi_checkpoint_write(path, sim->sc, st->buf, st->len, err);
}

/* Loads checkpoint path into the sim, r and out (the sim just set to its initial state). */
static int read_checkpoint(mbs_sim *sim, const char *path, run_state *r, mbs_sim_summary *out, mbs_error *err)
{
    unsigned char *payload;
    size_t n;
    int rc = mbsi_checkpoint_read(path, sim->sc, &payload, &n, err);
    if (rc != MBS_OK) return rc;
    mbsi_state st;
    mbsi_state_begin_load(&st, payload, n);
    sim_state(sim, r, out, &st);
    if (!st.failed && st.pos != st.len) {
        st.failed = 1;
        snprintf(st.msg, sizeof st.msg, "%zu bytes of state left over", st.len - st.pos);
    }
    free(payload);
    if (st.failed) return mbsi_fail(err, MBS_ERR_IO, "checkpoint '%s': does not fit this run: %s", path, st.msg);
    return MBS_OK;
}

int mbs_sim_run(mbs_sim *sim, const mbs_sim_run_options *opt, mbs_sim_summary *out, mbs_error *err)
{
    if (!sim || !out) return mbsi_fail(err, MBS_ERR_ARG, "mbs_sim_run: bad arguments");
    if (sim->ran) return mbsi_fail(err, MBS_ERR_ARG, "mbs_sim_run: a sim runs once (and not after mbs_sim_step); make a new one");
    sim->ran = 1;
    const mbs_scenario *sc = sim->sc;
    mbs_system *s = sim->sys;
    summary_begin(sim, out);
    initial_state(sim);
    const char *ckpt = opt && opt->checkpoint && opt->checkpoint[0] ? opt->checkpoint : NULL;
    const char *resume = opt && opt->resume && opt->resume[0] ? opt->resume : NULL;
    double ck_every = opt && ckpt ? opt->checkpoint_every : 0;
    if (!(ck_every >= 0) || !isfinite(ck_every))
        return mbsi_fail(err, MBS_ERR_ARG, "checkpoint_every %g: must be a number of seconds >= 0", ck_every);
    double cdt = sc->controller_dt, dt = sc->dt;
    /* checkpoints every `pe` periods (0: only when stopped) */
    long pe = ck_every > 0 ? (long)floor(ck_every / cdt + 0.5) : 0;
    if (ck_every > 0 && pe < 1) pe = 1;

    run_state r = {0, -1, 0, 0, 0};
    double p0[3] = {0, 0, 0};
    mbsi_base_pose(sim->root, s->q, p0, NULL);
    r.x0 = p0[0];
    r.y0 = p0[1];
    out->base_z_min = out->base_z_max = p0[2];
    out->energy_initial = mbs_kinetic_energy(sc->model, sim->energy, s->q, s->v) + mbs_potential_energy(sc->model, sim->energy, s->q);
    /* a contact touching in the initial state is no touchdown */
    for (int i = 0; i < s->ncontacts; i++) sim->touching[i] = s->contacts[i].active != 0;
    out->min_alpha = 1;
    int rc;
    if (resume && (rc = read_checkpoint(sim, resume, &r, out, err)) != MBS_OK) return rc;
    long k0 = r.k, iters = r.iters;

    const char *csv = opt && opt->csv ? opt->csv : sc->csv;
    csv_out c;
    rc = resume ? csv_resume(csv, r.csv_offset, &c, err) : csv_open(s, csv, &c, err);
    if (rc != MBS_OK) return rc;
    FILE *f = c.f;
    long nperiods = (long)ceil(sc->duration / cdt - 1e-9);
    mbsi_state saved = {0};
    /* the replay: a frame every `every` periods, at most 100 per simulated second */
    const char *html = opt && opt->html ? opt->html : sc->html;
    mbsi_replay *replay = NULL;
    long every = (long)ceil(0.01 / cdt - 1e-9);
    if (every < 1) every = 1;
    if (html && html[0]) {
        rc = mbsi_replay_check_path(html, err);
        if (rc == MBS_OK && !(replay = mbsi_replay_new(s, nperiods / every + 2, err))) rc = err->code;
        if (rc != MBS_OK) {
            csv_close(&c, 0, NULL);
            return rc;
        }
    }

    double t_step = 0, t0 = now(), t = 0;
    int interrupted = 0;
    sim->counting = out;
    sim->opt = opt;
    s->substep = substep_touchdowns;
    s->substep_user = sim;
    for (long k = k0; k < nperiods && !out->diverged && !out->left_box; k++) {
        t = (double)k * cdt;
        r.k = k;
        r.iters = iters;
        if (ckpt && pe && k > k0 && k % pe == 0 && (rc = write_checkpoint(sim, ckpt, &r, out, &c, &saved, err)) != MBS_OK)
            break;
        if (opt && opt->progress && opt->progress(opt->user, t, sc->duration)) {
            interrupted = 1;
            /* the state of this period's start: a resumed run goes on from here */
            if (ckpt) rc = write_checkpoint(sim, ckpt, &r, out, &c, &saved, err);
            break;
        }
        mbs_controller_compute(sim->ctrl, t, s->q, s->v, s->tau);
        if (sim->user_control) sim->user_control(sim->user, t, s->q, s->v, s->tau);
        if (f && k % sc->csv_every == 0) csv_row(f, s, t);
        if (replay && k % every == 0) mbsi_replay_record(replay, s, t);
        /* the last period may be cut short when the duration is not a whole number of them */
        long n = sim->nsub;
        double left = sc->duration - t;
        if (left < n * dt) n = (long)ceil(left / dt - 1e-9);
        double ts = now();
        iters += steps(sim, t, n, dt, out);
        t_step += now() - ts;
    }
    out->wall_time_s = now() - t0;
    out->sim_time = s->t;
    s->substep = NULL;
    sim->counting = NULL;
    sim->opt = NULL;
    mbsi_state_free(&saved);
    if (rc != MBS_OK) {
        /* a checkpoint could not be written: the rows so far are kept */
        csv_close(&c, 1, NULL);
        mbsi_replay_free(replay);
        return rc;
    }
    if (f) csv_row(f, s, s->t);
    if (replay) mbsi_replay_record(replay, s, s->t);
    /* an interrupted run keeps what it computed: the CSV up to the last period and the summary */
    rc = csv_close(&c, 1, err);
    summary_end(sim, r.x0, r.y0, t_step, iters, out);
    if (replay) {
        if (interrupted) {
            out->interrupted = 1;
            out->diverged_t = s->t;
        }
        char text[4096];
        mbs_sim_summary_format(out, text, sizeof text);
        int wrc = mbsi_replay_write(replay, s, html, sc, text, rc == MBS_OK ? err : NULL);
        if (rc == MBS_OK) rc = wrc;
        mbsi_replay_free(replay);
    }
    if (rc != MBS_OK) return rc;
    if (interrupted) {
        out->interrupted = 1;
        out->diverged_t = s->t;
        return mbsi_fail(err, MBS_ERR_INTERRUPTED, "interrupted at t = %g s", s->t);
    }
    return MBS_OK;
}

size_t mbs_sim_summary_size(void) { return sizeof(mbs_sim_summary); }

int mbs_sim_step(mbs_sim *sim, int use_controller, mbs_error *err)
{
    if (!sim) return mbsi_fail(err, MBS_ERR_ARG, "mbs_sim_step: no sim");
    if (sim->ran == 1) return mbsi_fail(err, MBS_ERR_ARG, "mbs_sim_step: this sim was run by mbs_sim_run; make a new one");
    sim->ran = 2;
    mbs_system *s = sim->sys;
    double t = s->t;
    if (use_controller) mbs_controller_compute(sim->ctrl, t, s->q, s->v, s->tau);
    if (sim->user_control) sim->user_control(sim->user, t, s->q, s->v, s->tau);
    for (int i = 0; i < sim->nsub; i++) {
        int rc = mbs_stepper_step(sim->st, sim->sc->dt, NULL);
        /* time from the step count, as mbs_sim_run keeps it */
        s->t = t + (double)(i + 1) * sim->sc->dt;
        if (rc != MBS_OK) {
            const mbs_error *e = mbs_stepper_last_error(sim->st);
            return mbsi_fail(err, rc, "%s", e->msg);
        }
    }
    return MBS_OK;
}

/* ---- the summary ---- */

int mbs_sim_summary_format(const mbs_sim_summary *s, char *buf, size_t n)
{
    mbs_text b = {buf, buf ? n : 0, 0};
    if (buf && n) buf[0] = '\0';
    mbsi_textf(&b, "model: %s\n", s->model);
    mbsi_textf(&b, "controller: %s\n", s->controller);
    mbsi_textf(&b, "stepper: %s\n", s->stepper);
    mbsi_textf(&b, "dt_s: %g\n", s->dt);
    mbsi_textf(&b, "controller_dt_s: %g\n", s->controller_dt);
    mbsi_textf(&b, "sim_time_s: %.6g\n", s->sim_time);
    mbsi_textf(&b, "wall_time_s: %.4g\n", s->wall_time_s);
    mbsi_textf(&b, "steps: %ld\n", s->steps);
    mbsi_textf(&b, "us_per_step: %.4g\n", s->us_per_step);
    mbsi_textf(&b, "realtime_factor: %.4g\n", s->realtime_factor);
    mbsi_textf(&b, "max_penetration_m: %.4g\n", s->max_penetration);
    mbsi_textf(&b, "max_contact_force_N: %.4g\n", s->max_contact_force);
    if (s->has_base) {
        /* a floating root: where the base went */
        mbsi_textf(&b, "base_final_x_m: %.4f\n", s->base_final[0]);
        mbsi_textf(&b, "base_final_y_m: %.4f\n", s->base_final[1]);
        mbsi_textf(&b, "base_final_z_m: %.4f\n", s->base_final[2]);
        mbsi_textf(&b, "base_final_roll_deg: %.3f\n", s->base_final[3] * (180 / MBS_PI));
        mbsi_textf(&b, "base_final_pitch_deg: %.3f\n", s->base_final[4] * (180 / MBS_PI));
        mbsi_textf(&b, "base_final_yaw_deg: %.3f\n", s->base_final[5] * (180 / MBS_PI));
        mbsi_textf(&b, "distance_m: %.4f\n", s->distance_m);
        mbsi_textf(&b, "base_z_min_m: %.4f\n", s->base_z_min);
        mbsi_textf(&b, "base_z_max_m: %.4f\n", s->base_z_max);
        mbsi_textf(&b, "max_tilt_deg: %.3g\n", s->max_tilt_deg);
    }
    mbsi_textf(&b, "airborne_s: %.4g\n", s->airborne_s);
    mbsi_textf(&b, "touchdowns: %ld\n", s->touchdowns);
    mbsi_textf(&b, "foot_touchdowns: %ld\n", s->foot_touchdowns);
    mbsi_textf(&b, "energy_initial_J: %.6g\n", s->energy_initial);
    mbsi_textf(&b, "energy_final_J: %.6g\n", s->energy_final);
    mbsi_textf(&b, "energy_change_J: %.4g\n", s->energy_final - s->energy_initial);
    mbsi_textf(&b, "nonconverged_steps: %ld\n", s->nonconverged);
    mbsi_textf(&b, "iterations_per_step: %.3g\n", s->mean_iterations);
    mbsi_textf(&b, "final_state_hash: %016llx\n", s->final_state_hash);
    if (s->min_dt > 0) {
        /* a scheme that chooses its sub-steps (conservative advancement, error control) */
        mbsi_textf(&b, "mean_dt_s: %g\n", s->mean_dt);
        mbsi_textf(&b, "min_dt_s: %g\n", s->min_dt);
        mbsi_textf(&b, "rejected_steps: %ld\n", s->rejected);
    } else if (s->substeps > 0) {
        /* the maximal-dissipation steppers: PGM's outer iterations and Algorithm 2's smallest step */
        mbsi_textf(&b, "mean_outer_iterations: %.3g\n", s->mean_iterations);
        mbsi_textf(&b, "min_alpha: %.6g\n", s->min_alpha);
    }
    if (s->diverged) mbsi_textf(&b, "status: diverged at t = %.6g (%s)\n", s->diverged_t, s->reason);
    else if (s->left_box) mbsi_textf(&b, "status: left_box at t = %.6g (%s)\n", s->diverged_t, s->reason);
    else if (s->interrupted) mbsi_textf(&b, "status: interrupted at t = %.6g\n", s->diverged_t);
    else mbsi_textf(&b, "status: stable\n");
    return (int)b.len;
}

/* ---- the options of every scheme ---- */

int mbs_sim_options_text(int markdown, char *buf, size_t n)
{
    mbs_text b = {buf, buf ? n : 0, 0};
    if (buf && n) buf[0] = '\0';
    for (int part = 0; part < 2; part++) {
        int count = part ? mbs_stepper_count() : mbs_controller_count();
        if (markdown) mbsi_textf(&b, part ? "### Stepper options (a section named after the stepper, e.g. `[expo]`)\n\n"
                                   : "### Controller options (`[controller]`, after `type` and `dt`)\n\n");
        else mbsi_textf(&b, part ? "steppers ([stepper] name; options in a section named after it):\n"
                          : "controllers ([controller] type; options in [controller]):\n");
        for (int i = 0; i < count; i++) {
            const mbs_scheme_info *info = part ? mbs_stepper_at(i) : mbs_controller_at(i);
            size_t room = b.len < b.n ? b.n - b.len : 0;
            int k = mbs_options_describe(info, markdown, room ? b.p + b.len : NULL, room);
            if (k > 0) b.len += (size_t)k;
            if (markdown) mbsi_textf(&b, "\n");
        }
    }
    return (int)b.len;
}
