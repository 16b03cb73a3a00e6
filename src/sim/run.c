/* run.c — the simulation loop: the controller every controller period (its torque held in
 * between), the stepper in sub-steps of dt, checks after every step (the stepper's error, which
 * a state that is not finite is, a velocity beyond the bound: divergence; the base leaving the
 * scenario's box: a status of its own), a CSV row per controller period (csv.c), and the figures
 * of the summary (summary.c); checkpoint.c writes and reads the run's checkpoints. */
#include <limits.h>
#include <stdio.h>
#include <stdlib.h>

#include "replay.h"
#include "run.h"


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
    /* the scenario's model, or a variant of it (same joints, other inertias: a batch's per-system models) */
    if (!sc || !sys ||
        (sys->model != sc->model &&
         (mbs_model_nq(sys->model) != mbs_model_nq(sc->model) || mbs_model_nv(sys->model) != mbs_model_nv(sc->model) ||
          mbs_model_nbodies(sys->model) != mbs_model_nbodies(sc->model))))
        return mbsi_fail(err, MBS_ERR_ARG, "mbs_scenario_setup_system: no scenario, or a system of another model");
    if (sys->max_contacts - sys->ncontacts < sc->ncontacts)
        return mbsi_fail(err, MBS_ERR_ARG, "mbs_scenario_setup_system: the system has room for %d more contacts, the scenario has %d",
                         sys->max_contacts - sys->ncontacts, sc->ncontacts);
    for (int i = 0; i < sc->ncontacts; i++) {
        const mbs_scenario_contact *c = &sc->contacts[i];
        int rim = c->axis[0] != 0 || c->axis[1] != 0 || c->axis[2] != 0;
        if ((c->link ? mbsi_system_add_link_point(sys, c->frame, c->offset, c->radius, c->boxes_only, err)
             : rim   ? mbs_system_add_rim(sys, c->frame, c->offset, c->axis, c->radius, err)
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
    for (int i = 0; i < sc->env.nheightfields; i++) {
        int rc = mbs_system_add_heightfield(sys, &sc->env.heightfields[i], err);
        if (rc) return rc;
    }
    int rc = mbs_system_finalize(sys, err);
    if (rc) return rc;
    mbs_system_set_state(sys, sc->q0, sc->v0, 0);
    if (sc->joint_damping) mbs_system_set_joint_damping(sys, mbs_model_damping(sc->model));
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
    sim->touching = calloc(3 * (size_t)sc->ncontacts + 1, sizeof *sim->touching);
    sim->energy = mbs_data_new(sc->model);
    sim->slip_local = calloc(9 * (size_t)sc->ncontacts + 1, sizeof(double));
    if (!sim->touching || !sim->energy || !sim->slip_local) { mbsi_fail(err, MBS_ERR_NOMEM, "out of memory"); goto fail; }
    sim->slip_world = sim->slip_local + 3 * (size_t)sc->ncontacts;
    sim->slip_sum = sim->slip_world + 3 * (size_t)sc->ncontacts;
    for (int c = 0; c < sc->ncontacts; c++) sim->slip_world[3 * c] = NAN;   /* untracked until it touches */
    sim->foot = sim->touching + sc->ncontacts;
    sim->foot_touchdowns = sim->foot + sc->ncontacts;
    for (int c = 0; c < sim->sys->ncontacts; c++) {
        int f = 0;
        while (f < c && (f >= sim->sys->nfeet || sim->sys->contacts[f].frame != sim->sys->contacts[c].frame)) f++;
        sim->foot[c] = c < sim->sys->nfeet ? f : c;   /* a link's points are not feet */
    }
    if (sc->npushes) {
        int nv = mbs_model_nv(sc->model);
        sim->tau_held = calloc((size_t)nv, sizeof(double));
        sim->push_J = calloc(6 * (size_t)nv, sizeof(double));
        if (!sim->tau_held || !sim->push_J) { mbsi_fail(err, MBS_ERR_NOMEM, "out of memory"); goto fail; }
        /* the root body's own frame (its origin is where the push acts) */
        for (int f = 0; f < mbs_model_nframes(sc->model); f++)
            if (sc->model->frames[f].body == 0 && sc->model->frames[f].type == MBS_FRAME_BODY) {
                sim->push_frame = f;
                break;
            }
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
    free(sim->slip_local);
    free(sim->tau_held);
    free(sim->push_J);
    mbs_data_free(sim->energy);
    free(sim);
}

mbs_system *mbs_sim_system(mbs_sim *sim) { return sim ? sim->sys : NULL; }

mbs_stepper *mbs_sim_stepper(mbs_sim *sim) { return sim ? sim->st : NULL; }

void mbs_sim_set_control(mbs_sim *sim, mbs_control_callback cb, void *user)
{
    if (!sim) return;
    sim->user_control = cb;
    sim->user = user;
}

/* ---- the run ---- */

void mbsi_push_force(const mbs_scenario *sc, double t, double f[3])
{
    f[0] = f[1] = f[2] = 0;
    for (int i = 0; i < sc->npushes; i++) {
        const mbs_scenario_push *p = &sc->pushes[i];
        if (t >= p->t && t < p->t + p->duration)
            for (int k = 0; k < 3; k++) f[k] += p->force[k];
    }
}

/* Before a step from the state's time: τ = the controller's τ + Jᵀf, f the pushes acting then
 * (held over the step, as the controller's τ is over its period) and J the linear rows of the base
 * origin's Jacobian in world axes, so that the force does the work f·ṗ whatever the root's
 * coordinates (a free flyer's v in the base frame, a planar root's). */
static void apply_pushes(mbs_sim *sim)
{
    if (!sim->tau_held) return;
    mbs_system *s = sim->sys;
    const mbs_model *m = sim->sc->model;
    int nv = s->nv;
    double f[3];
    memcpy(s->tau, sim->tau_held, (size_t)nv * sizeof(double));
    mbsi_push_force(sim->sc, s->t, f);
    if (f[0] == 0 && f[1] == 0 && f[2] == 0) return;
    mbs_compute_frame_jacobian(m, sim->energy, s->q, sim->push_frame, NULL, MBS_LOCAL_WORLD_ALIGNED, sim->push_J, 6);
    for (int k = 0; k < nv; k++) {
        const double *Jk = sim->push_J + 6 * (size_t)k;
        s->tau[k] += Jk[0] * f[0] + Jk[1] * f[1] + Jk[2] * f[2];
    }
}

/* The controller's τ of the period, kept for apply_pushes to add to (no pushes: nothing). */
static void hold_tau(mbs_sim *sim)
{
    if (sim->tau_held) memcpy(sim->tau_held, sim->sys->tau, (size_t)sim->sys->nv * sizeof(double));
}

/* After the period's steps: the system's τ is the controller's again, without the last push. */
static void hold_tau_restore(mbs_sim *sim)
{
    if (sim->tau_held) memcpy(sim->sys->tau, sim->tau_held, (size_t)sim->sys->nv * sizeof(double));
}

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

/* The initial state, and the contacts' state in it (anchors of feet already touching). */
static void initial_state(mbs_sim *sim)
{
    mbs_system *s = sim->sys;
    memset(s->tau, 0, (size_t)s->nv * sizeof(double));
    mbs_system_set_state(s, sim->sc->q0, sim->sc->v0, 0);
}

/* n steps of dt (one controller period, or what is left of the run); stops at divergence. The
 * stepper keeps the time. Returns the iterations the stepper reported. */
static long steps(mbs_sim *sim, long n, double dt, mbs_sim_summary *out)
{
    mbs_system *s = sim->sys;
    long iters = 0;
    for (long i = 0; i < n; i++) {
        mbs_step_stats st;
        apply_pushes(sim);
        int rc = mbs_stepper_step(sim->st, dt, &st);
        out->steps++;
        iters += st.iterations;
        out->nonconverged += st.nonconverged != 0;
        out->substeps += st.substeps;
        if (st.alpha < out->min_alpha) out->min_alpha = st.alpha;
        /* 0: a scheme that does not choose its sub-steps */
        if (st.min_dt > 0 && (out->min_dt == 0 || st.min_dt < out->min_dt)) out->min_dt = st.min_dt;
        out->rejected += st.rejected;
        int stop = diverged(sim, rc, out->reason, sizeof out->reason);
        if (stop) {
            out->diverged = stop == 1;
            out->left_box = stop == 2;
            out->diverged_t = s->t;
            break;
        }
        mbsi_summary_step(sim, dt, out);
    }
    if (!out->diverged && !out->left_box) mbsi_summary_period(sim, out);
    hold_tau_restore(sim);
    return iters;
}

int mbs_sim_run(mbs_sim *sim, const mbs_sim_run_options *opt, mbs_sim_summary *out, mbs_error *err)
{
    if (!sim || !out) return mbsi_fail(err, MBS_ERR_ARG, "mbs_sim_run: bad arguments");
    if (sim->ran) return mbsi_fail(err, MBS_ERR_ARG, "mbs_sim_run: a sim runs once (and not after mbs_sim_step); make a new one");
    sim->ran = 1;
    const mbs_scenario *sc = sim->sc;
    mbs_system *s = sim->sys;
    mbsi_summary_begin(sim, out);
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
    for (int i = 0; i < s->ncontacts; i++) {
        sim->touching[i] = s->contacts[i].active != 0;
        sim->foot_touchdowns[i] = 0;
    }
    out->min_alpha = 1;
    int rc;
    if (resume && (rc = mbsi_read_checkpoint(sim, resume, &r, out, err)) != MBS_OK) return rc;
    long k0 = r.k, iters = r.iters;
    long nperiods = (long)ceil(sc->duration / cdt - 1e-9);
    if (k0 > nperiods)
        return mbsi_fail(err, MBS_ERR_ARG, "checkpoint '%s': taken at t = %g s, after this run's end (run.duration = %g s)",
                         resume, (double)k0 * cdt, sc->duration);

    const char *csv = opt && opt->csv ? opt->csv : sc->csv;
    csv_out c;
    rc = resume ? mbsi_csv_resume(csv, r.csv_offset, &c, err) : mbsi_csv_open(s, csv, sc->npushes > 0, &c, err);
    if (rc != MBS_OK) return rc;
    FILE *f = c.f;
    mbsi_state saved = {0};
    /* the replay: a frame every `every` periods, at most 100 per simulated second and
     * MBS_REPLAY_MAX_FRAMES in all */
    const char *html = opt && opt->html ? opt->html : sc->html;
    mbsi_replay *replay = NULL;
    long every = mbsi_replay_every(cdt, nperiods, MBS_REPLAY_MAX_FRAMES);
    if (html && html[0]) {
        rc = mbsi_replay_check_path(html, err);
        if (rc == MBS_OK && !(replay = mbsi_replay_new(s, nperiods / every + 2, err))) rc = err->code;
        if (rc != MBS_OK) {
            mbsi_csv_close(&c, 0, NULL);
            return rc;
        }
    }

    double t_step = 0, t0 = mbsi_wall_seconds(), t = 0;
    int interrupted = 0, whole = 1;   /* whole: the last period was not cut short */
    sim->counting = out;
    sim->opt = opt;
    s->substep = mbsi_summary_substep_touchdowns;
    s->substep_user = sim;
    for (long k = k0; k < nperiods && !out->diverged && !out->left_box; k++) {
        t = (double)k * cdt;
        r.k = k;
        r.iters = iters;
        if (ckpt && pe && k > k0 && k % pe == 0 && (rc = mbsi_write_checkpoint(sim, ckpt, &r, out, &c, &saved, err)) != MBS_OK)
            break;
        if (opt && opt->progress && opt->progress(opt->user, t, sc->duration)) {
            interrupted = 1;
            /* the state of this period's start: a resumed run goes on from here */
            if (ckpt) rc = mbsi_write_checkpoint(sim, ckpt, &r, out, &c, &saved, err);
            break;
        }
        mbs_controller_compute(sim->ctrl, t, s->q, s->v, s->tau);
        if (sim->user_control) sim->user_control(sim->user, t, s->q, s->v, s->tau);
        hold_tau(sim);
        double push[3];
        mbsi_push_force(sc, t, push);
        if (f && k % sc->csv_every == 0) mbsi_csv_row(f, s, t, sc->npushes ? push : NULL);
        if (replay && k % every == 0) mbsi_replay_record(replay, s, t);
        /* the last period may be cut short when the duration is not a whole number of them */
        long n = sim->nsub;
        double left = sc->duration - t;
        if (left < n * dt) n = (long)ceil(left / dt - 1e-9);
        whole = n == sim->nsub;
        double ts = mbsi_wall_seconds();
        iters += steps(sim, n, dt, out);
        t_step += mbsi_wall_seconds() - ts;
    }
    /* a run that ends on a period's boundary leaves its end as a checkpoint too (before the CSV's
     * last row, which a resumed run writes again), so that it can be resumed to a longer duration */
    if (rc == MBS_OK && ckpt && !interrupted && !out->diverged && !out->left_box && whole && nperiods > k0) {
        r.k = nperiods;
        r.iters = iters;
        rc = mbsi_write_checkpoint(sim, ckpt, &r, out, &c, &saved, err);
    }
    out->wall_time_s = mbsi_wall_seconds() - t0;
    out->sim_time = s->t;
    s->substep = NULL;
    sim->counting = NULL;
    sim->opt = NULL;
    mbsi_state_free(&saved);
    if (rc != MBS_OK) {
        /* a checkpoint could not be written: the rows so far are kept */
        mbsi_csv_close(&c, 1, NULL);
        mbsi_replay_free(replay);
        return rc;
    }
    if (f) {
        double push[3];
        mbsi_push_force(sc, s->t, push);
        mbsi_csv_row(f, s, s->t, sc->npushes ? push : NULL);
    }
    if (replay) mbsi_replay_record(replay, s, s->t);
    /* an interrupted run keeps what it computed: the CSV up to the last period and the summary */
    rc = mbsi_csv_close(&c, 1, err);
    mbsi_summary_end(sim, r.x0, r.y0, t_step, iters, out);
    if (replay) {
        if (interrupted) {
            out->interrupted = 1;
            out->diverged_t = s->t;
        }
        char text[4096];
        mbs_sim_summary_format(out, text, sizeof text);
        double unthinned = (double)mbsi_replay_every(cdt, nperiods, LONG_MAX) * cdt;
        int wrc = mbsi_replay_write(replay, s, html, sc, text, (double)every * cdt, unthinned, rc == MBS_OK ? err : NULL);
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

double mbs_sim_replay_interval(const mbs_scenario *sc, double *unthinned)
{
    long nperiods = (long)ceil(sc->duration / sc->controller_dt - 1e-9);
    if (unthinned) *unthinned = (double)mbsi_replay_every(sc->controller_dt, nperiods, LONG_MAX) * sc->controller_dt;
    return (double)mbsi_replay_every(sc->controller_dt, nperiods, MBS_REPLAY_MAX_FRAMES) * sc->controller_dt;
}

int mbs_sim_step(mbs_sim *sim, int use_controller, mbs_error *err)
{
    if (!sim) return mbsi_fail(err, MBS_ERR_ARG, "mbs_sim_step: no sim");
    if (sim->ran == 1) return mbsi_fail(err, MBS_ERR_ARG, "mbs_sim_step: this sim was run by mbs_sim_run; make a new one");
    sim->ran = 2;
    mbs_system *s = sim->sys;
    double t = s->t;
    if (use_controller) mbs_controller_compute(sim->ctrl, t, s->q, s->v, s->tau);
    if (sim->user_control) sim->user_control(sim->user, t, s->q, s->v, s->tau);
    hold_tau(sim);
    for (int i = 0; i < sim->nsub; i++) {
        apply_pushes(sim);
        int rc = mbs_stepper_step(sim->st, sim->sc->dt, NULL);
        if (rc != MBS_OK) {
            const mbs_error *e = mbs_stepper_last_error(sim->st);
            hold_tau_restore(sim);
            return mbsi_fail(err, rc, "%s", e->msg);
        }
    }
    hold_tau_restore(sim);
    return MBS_OK;
}
