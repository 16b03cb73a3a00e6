/* summary.c — the run's summary: its header, the figures each step adds (contact forces and
 * penetration, touch-downs, airborne time, base height and tilt), the closing figures (rates,
 * means, where the base ended, energies, the final state's hash) and its key: value text. */
#include <stdio.h>

#include "run.h"

/* The summary's header: what runs, at which periods. */
void mbsi_summary_begin(const mbs_sim *sim, mbs_sim_summary *out)
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

/* Touch-downs of points and feet since the flags were last recorded, into out; the flags recorded,
 * each change told to the caller's contact_event. */
static void count_touchdowns(mbs_sim *sim, mbs_sim_summary *out, double t)
{
    const mbs_system *s = sim->sys;
    const mbs_sim_run_options *opt = sim->opt;
    /* a foot (the points on one frame) touches down when one of its points touches and none did */
    for (int f = 0; f < s->nfeet; f++) {
        if (sim->foot[f] != f) continue;
        int was = 0, is = 0;
        for (int c = f; c < s->nfeet; c++)
            if (sim->foot[c] == f) {
                was |= sim->touching[c];
                is |= s->contacts[c].active != 0;
            }
        out->foot_touchdowns += is && !was;
        sim->foot_touchdowns[f] += is && !was;
    }
    for (int c = 0; c < s->ncontacts; c++) {
        int touching = s->contacts[c].active != 0;
        if (opt && opt->contact_event && touching != sim->touching[c]) opt->contact_event(opt->user, t, c, touching);
        out->touchdowns += touching && !sim->touching[c];
        if (c >= s->nfeet) out->link_touchdowns += touching && !sim->touching[c];
        sim->touching[c] = touching;
    }
}

/* The system's substep callback, installed only while mbs_sim_run counts into sim->counting: a
 * scheme that splits its step shows the contacts between its sub-steps, so that a touch-down that
 * begins and ends inside one step counts. */
void mbsi_summary_substep_touchdowns(void *user, const mbs_system *s, double t_sub)
{
    (void)s;
    mbs_sim *sim = user;
    count_touchdowns(sim, sim->counting, t_sub);
}

void mbsi_summary_period(mbs_sim *sim, mbs_sim_summary *out)
{
    const mbs_system *s = sim->sys;
    const mbs_model *m = s->model;
    int kin = 0;
    for (int c = 0; c < s->ncontacts; c++) {
        const mbs_contact *ct = &s->contacts[c];
        double *loc = sim->slip_local + 3 * c, *was = sim->slip_world + 3 * c, *sum = sim->slip_sum + 3 * c;
        if (!ct->active) {
            was[0] = NAN;
            sum[0] = sum[1] = sum[2] = 0;
            continue;
        }
        if (!kin) { mbs_forward_kinematics(m, sim->energy, s->q, NULL, NULL); kin = 1; }
        double R[9], pf[3], now[3], d[3];
        mbs_frame_placement(m, sim->energy, ct->frame, R, pf);
        if (!isnan(was[0])) {
            for (int k = 0; k < 3; k++) now[k] = pf[k] + R[k] * loc[0] + R[k + 3] * loc[1] + R[k + 6] * loc[2];
            for (int k = 0; k < 3; k++) d[k] = now[k] - was[k];
            double dn = d[0] * ct->normal[0] + d[1] * ct->normal[1] + d[2] * ct->normal[2];
            for (int k = 0; k < 3; k++) sum[k] += d[k] - dn * ct->normal[k];
            double l = sqrt(sum[0] * sum[0] + sum[1] * sum[1] + sum[2] * sum[2]);
            if (l > out->max_slip) out->max_slip = l;
        }
        /* the body point under the contact now, for the next step */
        for (int k = 0; k < 3; k++) d[k] = ct->p[k] - pf[k];
        for (int k = 0; k < 3; k++) loc[k] = R[3 * k] * d[0] + R[3 * k + 1] * d[1] + R[3 * k + 2] * d[2];
        memcpy(was, ct->p, 3 * sizeof(double));
    }
}

/* The summary's figures of the state a step left: contacts, touchdowns, airborne time, base height
 * and tilt. */
void mbsi_summary_step(mbs_sim *sim, double dt, mbs_sim_summary *out)
{
    const mbs_system *s = sim->sys;
    int any = 0;
    count_touchdowns(sim, out, s->t);
    int link_touching = 0;
    for (int c = 0; c < s->ncontacts; c++) {
        const mbs_contact *ct = &s->contacts[c];
        if (!ct->active) continue;
        any = 1;
        link_touching |= c >= s->nfeet;
        double fn = sqrt(ct->lambda[0] * ct->lambda[0] + ct->lambda[1] * ct->lambda[1] + ct->lambda[2] * ct->lambda[2]);
        if (ct->depth > out->max_penetration) out->max_penetration = ct->depth;
        if (fn > out->max_contact_force) out->max_contact_force = fn;
    }
    if (!any && s->ncontacts) out->airborne_s += dt;
    out->has_link_geometry = s->nfeet < s->ncontacts;
    sim->link_run_s = link_touching ? sim->link_run_s + dt : 0;
    if (sim->link_run_s > out->link_contact_s) out->link_contact_s = sim->link_run_s;
    double p[3];
    if (mbsi_base_pose(sim->root, s->q, p, NULL)) {
        double tilt = mbsi_base_tilt_deg(sim->root, s->q);
        if (tilt > out->max_tilt_deg) out->max_tilt_deg = tilt;
        if (p[2] < out->base_z_min) out->base_z_min = p[2];
        if (p[2] > out->base_z_max) out->base_z_max = p[2];
    }
}

/* The summary's closing figures: rates, means, where the base ended. */
void mbsi_summary_end(const mbs_sim *sim, double x0, double y0, double t_step, long iters, mbs_sim_summary *out)
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
    mbsi_controller_report(sim->ctrl, out->controller_report, sizeof out->controller_report);
    /* the foot that touched down most often: a gait's cycles bound each foot's count, which the
     * total cannot show */
    out->max_foot_touchdowns = 0;
    out->max_foot[0] = 0;
    for (int f = 0; f < s->nfeet; f++)
        if (sim->foot[f] == f && (!out->max_foot[0] || sim->foot_touchdowns[f] > out->max_foot_touchdowns)) {
            out->max_foot_touchdowns = sim->foot_touchdowns[f];
            const char *name = mbs_frame_name(sim->sc->model, s->contacts[f].frame);
            snprintf(out->max_foot, sizeof out->max_foot, "%s", name ? name : "?");
        }
    const mbs_model *m = sim->sc->model;
    out->energy_final = mbs_kinetic_energy(m, sim->energy, s->q, s->v) + mbs_potential_energy(m, sim->energy, s->q);
}

size_t mbs_sim_summary_size(void) { return sizeof(mbs_sim_summary); }

/* ---- the text ---- */

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
    mbsi_textf(&b, "max_slip_m: %.4g\n", s->max_slip);
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
    if (s->max_foot[0]) {
        mbsi_textf(&b, "max_foot_touchdowns: %ld\n", s->max_foot_touchdowns);
        mbsi_textf(&b, "max_foot_touchdowns_foot: %s\n", s->max_foot);
    }
    if (s->has_link_geometry) {
        mbsi_textf(&b, "link_touchdowns: %ld\n", s->link_touchdowns);
        mbsi_textf(&b, "link_contact_s: %.4g\n", s->link_contact_s);
    }
    mbsi_textf(&b, "energy_initial_J: %.6g\n", s->energy_initial);
    mbsi_textf(&b, "energy_final_J: %.6g\n", s->energy_final);
    mbsi_textf(&b, "energy_change_J: %.4g\n", s->energy_final - s->energy_initial);
    mbsi_textf(&b, "nonconverged_steps: %ld\n", s->nonconverged);
    mbsi_textf(&b, "iterations_per_step: %.3g\n", s->mean_iterations);
    mbsi_textf(&b, "final_state_hash: %016llx\n", s->final_state_hash);
    mbsi_textf(&b, "%s", s->controller_report);
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
    /* the word alone, so that a script compares it; what happened when, apart */
    if (s->diverged) mbsi_textf(&b, "status: diverged\nstatus_detail: at t = %.6g (%s)\n", s->diverged_t, s->reason);
    else if (s->left_box) mbsi_textf(&b, "status: left_box\nstatus_detail: at t = %.6g (%s)\n", s->diverged_t, s->reason);
    else if (s->interrupted) mbsi_textf(&b, "status: interrupted\nstatus_detail: at t = %.6g\n", s->diverged_t);
    else mbsi_textf(&b, "status: stable\n");
    return (int)b.len;
}
