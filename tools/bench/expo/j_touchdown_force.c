/* j_touchdown_force.c — part (j) of bench_expo, fig. 6 of Hammoud et al. 2022: a contact point's
 * normal force over time in the trot and Romeo's walk as shipped and at ≈ 1/64 ms, per touch-down
 * the contact velocity, the jump and b·v. */
#include "expo.h"

/* A touch-down of a contact point: free after one step, touching after the next. */
typedef struct touchdown {
    int point;
    long step;      /* index of the step that found it touching */
    double t;       /* the (sub-)step's start at which it was found touching (s) */
    double vn;      /* the point's velocity along the normal when the step put it on its spring (m/s) */
    double f0;      /* the spring-damper force then, −k_n nᵀΔp − b_n nᵀΔṗ (N) */
    double f1;      /* the step's force as the stepper reports it (its average over the step) (N) */
    double fpk;     /* the largest force the run reports in the 2 ms from the step on (N) */
    double b;       /* the damping b_n of the material touched (N s/m) */
} touchdown;

enum { MAXTD = 128 };

/* The normal force of every contact point after every step of a run of the scenario as shipped but
 * for the step dt: a recorded run (the controller's torque per period), replayed period by period
 * from its recorded states with a stepper of its own, every step sampled. The replay is the run:
 * the largest difference to the recorded states is returned in replay_dev (0 when bitwise). */
typedef struct force_trace {
    long n;
    int nc;
    double *t, *f;    /* n; n x nc (the points of step i at f + nc i) */
    int ntd;
    touchdown td[MAXTD];
    double replay_dev;
    char name[MAXPTS][MBS_NAME_LEN];
} force_trace;

/* The system's substep callback during force_trace_run: at the start of every step and of every
 * sub-step of a split one, a point found touching that was free is a touch-down, recorded with its
 * state there (the state a step leaves is that at the start of its last sub-step, which after a
 * landing taken in sub-steps is no longer the touch-down). */
typedef struct trace_ctx {
    force_trace *ft;
    int was[MAXPTS];
    int first, nnew;   /* the first touch-down of the step under way, how many it has */
} trace_ctx;

static void trace_substep(void *user, const mbs_system *s, double t_sub)
{
    trace_ctx *x = user;
    force_trace *ft = x->ft;
    for (int p = 0; p < ft->nc; p++) {
        const mbs_contact *c = &s->contacts[p];
        int on = c->active != 0, was = x->was[p];
        x->was[p] = on;
        if (was || !on || ft->ntd >= MAXTD) continue;
        touchdown *td = &ft->td[ft->ntd++];
        double dpn = 0, dvn = 0, vn = 0;
        for (int j = 0; j < 3; j++) {
            dpn += (c->p[j] - c->p0[j]) * c->normal[j];
            dvn += (c->dp[j] - c->dp0[j]) * c->normal[j];
            vn += c->dp[j] * c->normal[j];
        }
        td->point = p;
        td->step = ft->n;
        td->t = t_sub;
        td->vn = vn;
        td->b = mbsi_contact_material(s, c)->b_normal;
        td->f0 = -mbsi_contact_material(s, c)->k_normal * dpn - mbsi_contact_material(s, c)->b_normal * dvn;
        x->nnew++;
    }
}

static void force_trace_run(const char *scen, double dt, force_trace *ft)
{
    memset(ft, 0, sizeof *ft);
    mbs_scenario *sc0 = load(scen, NULL);
    double cdt = mbs_scenario_controller_dt(sc0), dur = mbs_scenario_duration(sc0);
    mbs_scenario_free(sc0);
    traj tr;
    record(scen, NULL, "expo", dt, dur, &tr);
    if (tr.diverged) { fprintf(stderr, "bench_expo: %s at dt %g: %s\n", scen, dt, tr.reason); exit(1); }
    ovl o = {0};
    ov_add(&o, "stepper.dt=%.17g", dt);
    rig r;
    rig_new(&r, scen, &o, "expo");
    mbs_system *s = r.sys;
    long nsub = lround(cdt / dt);
    int nc = s->ncontacts < MAXPTS ? s->ncontacts : MAXPTS;
    ft->nc = nc;
    ft->t = xcalloc((size_t)(tr.n * nsub + 1), sizeof(double));
    ft->f = xcalloc((size_t)(tr.n * nsub + 1) * (size_t)nc, sizeof(double));
    for (int i = 0; i < nc; i++) snprintf(ft->name[i], sizeof ft->name[i], "%s", s->contacts[i].name);
    trace_ctx x = {ft, {0}, 0, 0};
    s->substep = trace_substep;
    s->substep_user = &x;
    for (long k = 0; k < tr.n; k++) {
        restore(s, &tr, k);
        for (long i = 0; i < nsub; i++) {
            /* the flags as the last step left them (a restored period may start from other ones) */
            for (int p = 0; p < nc; p++) x.was[p] = s->contacts[p].active;
            x.first = ft->ntd;
            x.nnew = 0;
            if (mbs_stepper_step(r.st, dt, NULL) != MBS_OK) { fprintf(stderr, "bench_expo: %s: step failed\n", scen); exit(1); }
            s->t = (double)k * cdt + (double)(i + 1) * dt;
            ft->t[ft->n] = s->t;
            for (int p = 0; p < nc; p++) ft->f[(size_t)nc * ft->n + p] = contact_fn(&s->contacts[p]);
            for (int j = x.first; j < x.first + x.nnew; j++) ft->td[j].f1 = ft->f[(size_t)nc * ft->n + ft->td[j].point];
            ft->n++;
        }
        for (int j = 0; j < s->nq; j++) ft->replay_dev = fmax(ft->replay_dev, fabs(s->q[j] - tr.q[(size_t)tr.nq * (k + 1) + j]));
        for (int j = 0; j < s->nv; j++) ft->replay_dev = fmax(ft->replay_dev, fabs(s->v[j] - tr.v[(size_t)tr.nv * (k + 1) + j]));
    }
    s->substep = NULL;
    for (int k = 0; k < ft->ntd; k++) {
        touchdown *td = &ft->td[k];
        td->fpk = 0;
        for (long i = td->step; i < ft->n && ft->t[i] <= td->t + 2e-3 + 1e-12; i++)
            td->fpk = fmax(td->fpk, ft->f[(size_t)nc * i + td->point]);
    }
    rig_free(&r);
    traj_free(&tr);
}

static void force_trace_free(force_trace *ft)
{
    free(ft->t);
    free(ft->f);
    memset(ft, 0, sizeof *ft);
}

/* Fig. 6: the normal force of one contact point over time in the default trot and in Romeo's walk,
 * as shipped (expo, closed form, touch-down splitting, at the scenario's step), beside the same
 * scenario at ≈ 1/64 ms (the paper plots its ground truth's force, at that step): a linear
 * spring-damper jumps at a touch-down to b_n times the velocity there (Δp is still zero). Per
 * touch-down (trot: of the plotted foot in the window; Romeo: of every sole corner): that velocity,
 * b_n |v_n|, the force when the step put the point on its spring (from its state), the step's
 * reported force (its average over the step), and the fine run's velocity, jump and largest force
 * in the 2 ms after (its steps' averages over 1/64 ms are the force to a few percent). */
void part_j(const char *data, int quick)
{
    printf("\n## (j) normal force of one contact point at touch-down: solo_trot and romeo_walk as shipped (fig. 6)\n");
    static const struct { const char *scen; int ci, all; double w0, w1; } S[2] = {
        {"solo_trot", 0, 0, 0.3, 1.8}, {"romeo_walk", 0, 1, 0, 5}};
    bench_doc_begin(&doc, "expo-touchdown-force");
    for (int c = 0; c < 2; c++) {
        mbs_scenario *sc0 = load(S[c].scen, NULL);
        double dt0 = mbs_scenario_dt(sc0), cdt = mbs_scenario_controller_dt(sc0);
        mbs_scenario_free(sc0);
        /* ≈ 1/64 ms, a step that divides the controller period (2 ms / 128, 40 ms / 2048) */
        double dtf = cdt / (double)(1 << gt_level(cdt));
        if (quick) dtf = cdt / (double)(1 << (gt_level(cdt) - 3));
        force_trace sh, fi;
        double t0 = tool_now();
        force_trace_run(S[c].scen, dt0, &sh);
        force_trace_run(S[c].scen, dtf, &fi);
        int ci = S[c].ci;
        printf("# %s, plotted point %d (%s): as shipped at %g ms (the replay's largest deviation from the run %.3g), "
               "fine run at %.5g ms (%.3g); %.1f s\n", S[c].scen, ci, sh.name[ci], dt0 * 1e3, sh.replay_dev, dtf * 1e3,
               fi.replay_dev, tool_now() - t0);
        printf("#   %-10s %8s %8s %8s %9s %9s   fine: %8s %8s %8s %9s %9s\n", "point", "t_s", "v_n_m/s", "b|v_n|", "f_start_N",
               "f_step_N", "t_s", "v_n_m/s", "b|v_n|", "f_start_N", "peak2ms_N");
        char name[128];
        snprintf(name, sizeof name, "normal_force_%s.dat", S[c].scen);
        FILE *f = tool_open_data("bench_expo", data, name);
        if (f) {
            fprintf(f, "# t_s  normal force of %s (N); block 0: as shipped (dt %g ms, the step's average force), block 1: "
                       "dt %.5g ms (every 4th step, every step in the 5 ms after a touch-down); block 2: its touch-downs as shipped (t, b|v_n|, force at the start of "
                       "contact)\n", sh.name[ci], dt0 * 1e3, dtf * 1e3);
            fprintf(f, "\"expo as shipped, %g ms (the step's average)\"\n", dt0 * 1e3);
            for (long i = 0; i < sh.n; i++) fprintf(f, "%.6f %.6g\n", sh.t[i], sh.f[(size_t)sh.nc * i + ci]);
            fprintf(f, "\n\n\"expo at %.3g ms\"\n", dtf * 1e3);
            /* every 4th step, and every step in the 5 ms after a touch-down of the point (the jump) */
            for (long i = 0, next = 0; i < fi.n; i++) {
                int near = 0;
                for (int k = 0; k < fi.ntd && !near; k++)
                    near = fi.td[k].point == ci && fi.t[i] >= fi.td[k].t - 1e-4 && fi.t[i] <= fi.td[k].t + 5e-3;
                if (near || i >= next) {
                    fprintf(f, "%.6f %.6g\n", fi.t[i], fi.f[(size_t)fi.nc * i + ci]);
                    next = i + 4;
                }
            }
            fprintf(f, "\n\n\"b |v_n| at touch-down (as shipped)\"\n");
            for (int k = 0; k < sh.ntd; k++)
                if (sh.td[k].point == ci)
                    fprintf(f, "%.6f %.6g %.6g\n", sh.td[k].t, sh.td[k].b * fabs(sh.td[k].vn), sh.td[k].f0);
            fclose(f);
        }
        bench_doc_printf(&doc, "%s**%s** (`./sim scenarios/%s.ini`, expo at %g ms; fine run at %.3g ms), touch-downs in %g–%g s "
                               "of %s\n\n| point | touch-down (s) | v_n at contact (m/s) | b·\\|v_n\\| (N) | force when put on its spring (N) | "
                               "the step's force, its average over %g ms (N) | fine run: touch-down (s), v_n (m/s), b·\\|v_n\\| (N), force "
                               "when put on its spring (N), largest force in the 2 ms after (N) |\n|---|---|---|---|---|---|---|\n",
                         c ? "\n" : "", S[c].scen, S[c].scen, dt0 * 1e3, dtf * 1e3, S[c].w0, S[c].w1,
                         S[c].all ? "every contact point" : sh.name[ci], dt0 * 1e3);
        int nrow = 0;
        double worst = 0;
        for (int k = 0; k < sh.ntd; k++) {
            const touchdown *a = &sh.td[k];
            if (a->t < S[c].w0 || a->t > S[c].w1 || (!S[c].all && a->point != ci)) continue;
            /* the fine run's touch-down of the same point nearest in time */
            const touchdown *b = NULL;
            for (int j = 0; j < fi.ntd; j++)
                if (fi.td[j].point == a->point && (!b || fabs(fi.td[j].t - a->t) < fabs(b->t - a->t))) b = &fi.td[j];
            char pn[MBS_NAME_LEN + 8];
            snprintf(pn, sizeof pn, "%d %s", a->point, sh.name[a->point]);
            printf("#   %-10s %8.4f %8.4f %8.2f %9.2f %9.2f   fine: %8.4f %8.4f %8.2f %9.2f %9.2f\n", pn, a->t,
                   a->vn, a->b * fabs(a->vn), a->f0, a->f1, b ? b->t : NAN, b ? b->vn : NAN, b ? b->b * fabs(b->vn) : NAN,
                   b ? b->f0 : NAN, b ? b->fpk : NAN);
            bench_doc_printf(&doc, "| %d `%s` | %.3f | %.3f | %.1f | %.1f | %.1f |", a->point, sh.name[a->point], a->t, a->vn,
                             a->b * fabs(a->vn), a->f0, a->f1);
            if (b) bench_doc_printf(&doc, " %.4f, %.3f, %.1f, %.1f, %.1f |\n", b->t, b->vn, b->b * fabs(b->vn), b->f0, b->fpk);
            else bench_doc_printf(&doc, " — |\n");
            if (b && b->b * fabs(b->vn) > 1) worst = fmax(worst, fabs(b->f0 / (b->b * fabs(b->vn)) - 1));
            nrow++;
        }
        if (!nrow) bench_doc_printf(&doc, "| (none in the window) | | | | | | |\n");
        key("expo_touchdowns_%s_in_table: %d\n", S[c].scen, nrow);
        key("expo_touchdown_fine_jump_over_bv_worst_dev_%s: %.3f\n", S[c].scen, worst);
        force_trace_free(&sh);
        force_trace_free(&fi);
        fflush(stdout);
    }
    bench_doc_end(&doc, "expo-touchdown-force");
}
