/* sim.c — the command-line front end, a thin shell over the library:
 *   sim FILE.ini [--set section.key=value ...] [--csv OUT.csv] [--html OUT.html] [--events OUT.csv] [--quiet]
 *                                                                                    run a scenario
 *            [--checkpoint PATH [--checkpoint-every SECONDS]] [--resume PATH]      save its state, continue it
 *   sim --info MODEL.urdf|MODEL.xml [--fixed] [--strict]                  inspect a model (URDF or MJCF)
 * Only this file prints: the summary as key: value lines on stdout (on stderr when the CSV goes to
 * stdout, `--csv -`), errors, warnings and the progress line (when stderr is a terminal) on stderr.
 * Exit codes: 0 run stable (or --info done), 1 error (bad scenario, model, CSV), 2 usage,
 * 3 the run diverged, 4 the base left the scenario's box, 130 interrupted by SIGINT, 143 by SIGTERM (the CSV and the summary up to then,
 * and the checkpoint with --checkpoint). */
#include <errno.h>
#include <pthread.h>
#include <signal.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <time.h>
#include <unistd.h>

#include "mbs.h"
#include "tool.h"

/* The help on `out`: stdout for --help (so that `./sim --help | less` works), stderr after a
 * usage error. Returns the exit status. */
static int usage(FILE *out, int status)
{
    fprintf(out,
            "usage: sim FILE.ini [--set section.key=value ...] [--csv OUT.csv] [--html OUT.html] [--events OUT.csv] [--quiet]\n"
            "       sim --checkpoint PATH [--checkpoint-every SECONDS] [--resume PATH] FILE.ini [--set ...] [--csv OUT.csv]\n"
            "       sim FILE.ini --sweep section.key=V1,V2,... [--sweep ...] [--set ...] [--jobs T] [--out sweep.csv]\n"
            "       sim --info MODEL.urdf|MODEL.xml [--fixed] [--strict]\n"
            "       sim --help | --version | --options-markdown\n"
            "  FILE.ini  run a scenario (format: docs/scenarios.md) and print its summary as key: value lines\n"
            "  --set     override one key of the scenario, e.g. --set stepper.name=euler --set stepper.dt=1e-4\n"
            "  --csv     write the trajectory (t, q, v, tau, contact forces) to OUT.csv; overrides [output] csv.\n"
            "            '-' is stdout (the summary then goes to stderr); a FIFO, a character device or a symlink\n"
            "            is written through; a directory or an unwritable path is refused before the run\n"
            "  --html    write a self-contained page that replays the run in 3D with plots (open it in a browser;\n"
            "            docs/replay.md); overrides [output] html\n"
            "  --events  write each contact point's touch-downs and lift-offs to OUT.csv (t_s, point, event),\n"
            "            at the time of the step or sub-step that shows them (points named as in --csv's\n"
            "            columns); the touch-downs are the summary's. Not with --resume\n"
            "  --checkpoint PATH\n"
            "            write the run's complete state to PATH (PATH.tmp, renamed) when SIGINT or SIGTERM stops\n"
            "            it, at its end and, with --checkpoint-every SECONDS, every SECONDS of simulated time (at\n"
            "            the end of a controller period)\n"
            "  --resume PATH\n"
            "            continue the run a checkpoint holds, with the same scenario and --set overrides (but\n"
            "            run.duration, which may be longer, and the output files): bitwise what the uninterrupted\n"
            "            run does (final_state_hash); its CSV is cut to where the checkpoint left it and appended\n"
            "            to. A truncated, corrupted or another run's file is refused\n"
            "  --sweep   run every combination of the values given (cartesian product); one CSV row per run:\n"
            "            the swept values, then every summary key; rows in combination order (the last key\n"
            "            varies fastest) whatever --jobs; an interrupted sweep keeps the rows it finished\n"
            "  --jobs    runs at once, on threads (default 1); every column but wall_time_s, us_per_step and\n"
            "            realtime_factor is the same for any T\n"
            "  --out     the sweep's CSV (default: stdout)\n"
            "  --quiet   no progress line and no warnings on stderr\n"
            "  --info    load a URDF, or a MuJoCo MJCF file (a <mujoco> root element), and print its summary\n"
            "            as key: value lines\n"
            "  --fixed   (URDF) attach the root link to the world instead of a free-flyer\n"
            "  --strict  (URDF) treat physically impossible inertias as errors\n"
            "  --options-markdown  print every controller's and stepper's option tables as docs/scenarios.md holds them\n"
            "exit status: 0 stable, 1 error (a checkpoint too), 2 usage, 3 diverged, 4 left the scenario's box, 130 SIGINT, 143 SIGTERM (interrupted: the CSV, the summary and the checkpoint up to then)\n\n");
    int n = mbs_sim_options_text(0, NULL, 0);
    char *text = malloc((size_t)n + 1);
    if (text) {
        mbs_sim_options_text(0, text, (size_t)n + 1);
        fputs(text, out);
        free(text);
    }
    return status;
}

/* The key and option tables of docs/scenarios.md, each between the markers by which a test
 * finds it and tools/gen/update_docs.py puts it in place. */
static int options_markdown(void)
{
    static const char *const sections[] = {"model", "contact", "environment", "controller", "stepper", "run", "output"};
    char buf[16384];
    for (size_t i = 0; i < sizeof sections / sizeof *sections; i++) {
        if (mbs_scenario_keys_markdown(sections[i], buf, sizeof buf) >= (int)sizeof buf) return 1;
        printf("<!-- keys [%s]: written by ./sim --options-markdown; do not edit -->\n%s<!-- end of keys -->\n",
               sections[i], buf);
    }
    int n = mbs_sim_options_text(1, NULL, 0);
    char *text = malloc((size_t)n + 1);
    if (!text) return 1;
    mbs_sim_options_text(1, text, (size_t)n + 1);
    printf("<!-- options: written by ./sim --options-markdown; do not edit -->\n%s<!-- end of options -->\n", text);
    free(text);
    return 0;
}

static const char *type_name(mbs_joint_type t)
{
    switch (t) {
    case MBS_JOINT_REVOLUTE: return "revolute";
    case MBS_JOINT_PRISMATIC: return "prismatic";
    case MBS_JOINT_FREEFLYER: return "free-flyer";
    case MBS_JOINT_PLANAR: return "planar";
    case MBS_JOINT_BALL: return "ball";
    }
    return "?";
}

/* 1 when the file is MJCF: its root element, the first one after the XML declaration and
 * comments, is <mujoco> (read from its first 64 KiB). */
static int is_mjcf(const char *path)
{
    FILE *f = fopen(path, "rb");
    if (!f) return 0;
    char buf[1 << 16];
    size_t n = fread(buf, 1, sizeof buf - 1, f);
    fclose(f);
    buf[n] = 0;
    for (const char *p = buf; (p = strchr(p, '<'));) {
        if (strncmp(p, "<?", 2) == 0 || strncmp(p, "<!", 2) == 0) {   /* declaration, comment, doctype */
            const char *end = strncmp(p, "<!--", 4) == 0 ? strstr(p, "-->") : strchr(p, '>');
            if (!end) return 0;
            p = end;
            continue;
        }
        return strncmp(p, "<mujoco", 7) == 0 && (p[7] == '>' || p[7] == ' ' || p[7] == '\t' || p[7] == '\n' ||
                                                  p[7] == '\r' || p[7] == '/');
    }
    return 0;
}

static int info(const char *path, int fixed, int strict)
{
    mbs_error err;
    mbs_error_clear(&err);
    mbs_urdf_options opt = {.floating_base = !fixed, .strict = strict};
    mbs_model *m = is_mjcf(path) ? mbs_model_from_mjcf(path, NULL, &err) : mbs_model_from_urdf(path, &opt, &err);
    if (err.nwarnings) fprintf(stderr, "%s", err.warnings);
    if (!m) {
        fprintf(stderr, "sim: %s\n", err.msg);
        mbs_error_free(&err);
        return 1;
    }
    printf("model: %s\nfile: %s\nnq: %d\nnv: %d\njoints: %d\nframes: %d\nmass_kg: %.6f\nkeyframes: %d\nwarnings: %d\n",
           mbs_model_name(m), path, mbs_model_nq(m), mbs_model_nv(m), mbs_model_njoints(m), mbs_model_nframes(m),
           mbs_model_mass(m), mbs_model_nkeyframes(m), err.nwarnings);
    for (int j = 0; j < mbs_model_njoints(m); j++) {
        int par = mbs_joint_parent(m, j);
        printf("joint_%d: %s %s idx_q=%d idx_v=%d parent=%s\n", j, mbs_joint_name(m, j),
               type_name(mbs_joint_type_of(m, j)), mbs_joint_idx_q(m, j), mbs_joint_idx_v(m, j),
               par < 0 ? "world" : mbs_joint_name(m, par));
    }
    mbs_model_free(m);
    mbs_error_free(&err);
    return 0;
}

/* ---- running a scenario ---- */

static volatile sig_atomic_t interrupted;   /* the signal that asked the run to stop, 0: none */
static void on_signal(int sig) { interrupted = sig; }

/* SIGINT and SIGTERM set `interrupted`; no SA_RESTART: Ctrl-C also ends a wait for a FIFO's reader
 * when the CSV is opened. */
static void catch_signals(void)
{
    struct sigaction sa;
    memset(&sa, 0, sizeof sa);
    sa.sa_handler = on_signal;
    sigemptyset(&sa.sa_mask);
    sigaction(SIGINT, &sa, NULL);
    sigaction(SIGTERM, &sa, NULL);
}

typedef struct progress_state {
    int show;
    double last;     /* wall clock of the last line drawn */
    FILE *events;    /* --events: the contact events' CSV, or NULL */
    const mbs_system *sys;
} progress_state;

static double wall(void)
{
    struct timespec ts;
    clock_gettime(CLOCK_MONOTONIC, &ts);
    return (double)ts.tv_sec + 1e-9 * (double)ts.tv_nsec;
}

/* Draws "t / duration" at most ten times a second; stops the run at the end of the current
 * controller period on SIGINT or SIGTERM (the library keeps the CSV rows and the summary). */
static int progress(void *user, double t, double duration)
{
    progress_state *p = user;
    if (interrupted) return 1;
    if (p->show) {
        double w = wall();
        if (w - p->last > 0.1) {
            fprintf(stderr, "\rsim: t = %.3f / %.3f s (%3.0f%%)", t, duration, 100 * t / duration);
            p->last = w;
        }
    }
    return 0;
}

/* --events: one row per contact event, "t_s,point,event" (touchdown or liftoff) */
static void write_event(void *user, double t, int contact, int touching)
{
    progress_state *p = user;
    char name[MBS_NAME_LEN + 16];
    mbs_system_contact_label(p->sys, contact, name, sizeof name);
    fprintf(p->events, "%.6f,%s,%s\n", t, name, touching ? "touchdown" : "liftoff");
}

/* Checkpoints of a run: where to write them, how often (simulated s), what to resume from. */
typedef struct ckpt_args {
    const char *path, *resume;
    double every;
} ckpt_args;

static int run(const char *path, const char **sets, int nsets, const char *csv, const char *html,
               const char *events, int quiet, const ckpt_args *ck)
{
    mbs_error err;
    mbs_scenario *sc = mbs_scenario_load(path, sets, nsets, &err);
    if (err.nwarnings && !quiet) fprintf(stderr, "%s", err.warnings);
    if (!sc) {
        fprintf(stderr, "sim: %s\n", err.msg);
        mbs_error_free(&err);
        return 1;
    }
    mbs_error_free(&err);   /* the warnings are printed; the record goes on to the run */
    const char *page = html ? html : mbs_scenario_html(sc);
    double unthinned, interval = mbs_sim_replay_interval(sc, &unthinned);
    if (page[0] && interval > unthinned && !quiet)
        fprintf(stderr, "sim: the replay page '%s' of this %g s run shows one frame every %g s of simulated time, "
                        "not every %g s: a page holds at most %d frames\n",
                page, mbs_scenario_duration(sc), interval, unthinned, MBS_REPLAY_MAX_FRAMES);
    mbs_sim *sim = mbs_sim_new(sc, &err);
    if (!sim) {
        fprintf(stderr, "sim: %s\n", err.msg);
        mbs_scenario_free(sc);
        return 1;
    }
    progress_state ps = {!quiet && isatty(2), 0, NULL, mbs_sim_system(sim)};
    if (events) {
        ps.events = fopen(events, "w");
        if (!ps.events) {
            fprintf(stderr, "sim: cannot write the contact events '%s': %s\n", events, strerror(errno));
            mbs_sim_free(sim);
            mbs_scenario_free(sc);
            return 1;
        }
        fputs("t_s,point,event\n", ps.events);
    }
    catch_signals();
    mbs_sim_run_options opt = {.csv = csv, .progress = progress, .user = &ps, .html = html, .checkpoint = ck->path,
                               .checkpoint_every = ck->every, .resume = ck->resume,
                               .contact_event = events ? write_event : NULL};
    mbs_sim_summary sum;
    int rc = mbs_sim_run(sim, &opt, &sum, &err);
    if (ps.show) fprintf(stderr, "\r%60s\r", "");
    int status;
    /* both evaluated: the file is closed whatever ferror says */
    if (ps.events && (ferror(ps.events) | fclose(ps.events)) && rc == MBS_OK) {
        snprintf(err.msg, sizeof err.msg, "error writing the contact events '%s'", events);
        rc = MBS_ERR_IO;
    }
    if (rc != MBS_OK && rc != MBS_ERR_INTERRUPTED) {
        fprintf(stderr, "sim: %s\n", err.msg);
        status = 1;
    } else {
        char buf[4096];
        mbs_sim_summary_format(&sum, buf, sizeof buf);
        /* the CSV on stdout: the summary goes to stderr, so that stdout is the CSV alone */
        const char *out_csv = csv ? csv : mbs_scenario_csv(sc);
        fputs(buf, strcmp(out_csv, "-") == 0 ? stderr : stdout);
        status = sum.interrupted ? 128 + (interrupted ? interrupted : SIGINT) : sum.diverged ? 3 : sum.left_box ? 4 : 0;
    }
    mbs_sim_free(sim);
    mbs_scenario_free(sc);
    return status;
}

/* ---- sweeps ---- */

/* A sweep's shared state: combinations are dealt one at a time to the workers; rows are kept until
 * every row before them is written, so the file is in combination order whatever finishes first. */
typedef struct sweep_state {
    const mbs_sweep *sw;
    long size, next, done, written;
    char **rows;                 /* size: NULL until finished */
    FILE *out;
    int show, failed;
    mbs_error err;               /* the first failure */
    long failed_at;
    pthread_mutex_t lock;
} sweep_state;

static int sweep_progress(void *user, double t, double duration)
{
    (void)user; (void)t; (void)duration;
    return interrupted != 0;
}

static void *sweep_worker(void *arg)
{
    sweep_state *st = arg;
    char *row = malloc(8192);
    for (;;) {
        pthread_mutex_lock(&st->lock);
        long i = interrupted || st->failed || !row ? st->size : st->next++;
        pthread_mutex_unlock(&st->lock);
        if (i >= st->size) break;
        mbs_error err;
        int rc = mbs_sweep_run(st->sw, i, sweep_progress, NULL, row, 8192, &err);
        pthread_mutex_lock(&st->lock);
        if (rc == MBS_OK) {
            st->rows[i] = strdup(row);
            st->done++;
            while (st->written < st->size && st->rows[st->written]) fputs(st->rows[st->written++], st->out);
            fflush(st->out);
            if (st->show) fprintf(stderr, "\rsim: sweep %ld / %ld runs done", st->done, st->size);
        } else if (rc != MBS_ERR_INTERRUPTED && !st->failed) {
            st->failed = 1;
            st->failed_at = i;
            st->err = err;
            st->err.warnings = NULL;   /* the message is kept; the warnings are freed with err */
            st->err.warnings_len = 0;
        }
        pthread_mutex_unlock(&st->lock);
        mbs_error_free(&err);
    }
    free(row);
    return NULL;
}

/* ./sim FILE.ini --sweep KEY=V1,V2 ... [--jobs T] [--out sweep.csv]: every combination, T at a time;
 * the CSV in combination order. SIGINT/SIGTERM: the runs under way stop, the rows finished stay. */
static int sweep(const char *path, const char **sets, int nsets, const char **sweeps, int nsweeps, int jobs,
                 const char *out_path, int quiet)
{
    mbs_error err;
    mbs_sweep *sw = mbs_sweep_new(path, sets, nsets, sweeps, nsweeps, &err);
    if (!sw) {
        fprintf(stderr, "sim: %s\n", err.msg);
        mbs_error_free(&err);
        return 1;
    }
    int to_stdout = !out_path || strcmp(out_path, "-") == 0;
    FILE *out = to_stdout ? stdout : fopen(out_path, "w");
    if (!out) {
        fprintf(stderr, "sim: cannot write the sweep '%s': %s\n", out_path, strerror(errno));
        mbs_sweep_free(sw);
        return 1;
    }
    sweep_state st;
    memset(&st, 0, sizeof st);
    st.sw = sw;
    st.size = mbs_sweep_size(sw);
    st.out = out;
    st.show = !quiet && isatty(2);
    st.rows = calloc((size_t)st.size, sizeof *st.rows);
    pthread_mutex_init(&st.lock, NULL);
    char header[8192];
    mbs_sweep_header(sw, header, sizeof header);
    fputs(header, out);
    catch_signals();
    if (jobs < 1) jobs = 1;
    if (jobs > st.size) jobs = (int)st.size;
    pthread_t *threads = calloc((size_t)jobs, sizeof *threads);
    int started = 0;
    for (int j = 1; threads && j < jobs; j++) started += pthread_create(&threads[j], NULL, sweep_worker, &st) == 0;
    sweep_worker(&st);   /* this thread is a worker too */
    for (int j = 1; j <= started; j++) pthread_join(threads[j], NULL);
    free(threads);
    if (st.show) fprintf(stderr, "\r%60s\r", "");
    /* rows finished after an unfinished one (interrupted, failed) are kept, in order */
    for (long i = st.written; i < st.size; i++)
        if (st.rows[i]) fputs(st.rows[i], out);
    int status = 0;
    if (st.failed) {
        fprintf(stderr, "sim: sweep run %ld failed: %s\n", st.failed_at, st.err.msg);
        status = 1;
    } else if (interrupted) {
        fprintf(stderr, "sim: sweep interrupted: %ld of %ld runs kept\n", st.done, st.size);
        status = 128 + interrupted;
    } else if (!quiet) {
        fprintf(stderr, "sim: sweep of %ld runs written to %s\n", st.size, to_stdout ? "stdout" : out_path);
    }
    if (!to_stdout && fclose(out) != 0) {
        fprintf(stderr, "sim: error writing the sweep '%s'\n", out_path);
        status = 1;
    }
    for (long i = 0; i < st.size; i++) free(st.rows[i]);
    free(st.rows);
    pthread_mutex_destroy(&st.lock);
    mbs_sweep_free(sw);
    return status;
}

int main(int argc, char **argv)
{
    tool_single_thread_blas(argv);
    const char *model = NULL, *scenario = NULL, *csv = NULL, *html = NULL, *events = NULL;
    int fixed = 0, strict = 0;
    tool_sweep_args sa = {.sets = calloc((size_t)argc + 1, sizeof(char *)),
                          .sweeps = calloc((size_t)argc + 1, sizeof(char *)), .jobs = 1};
    ckpt_args ck = {NULL, NULL, 0};
    if (!sa.sets || !sa.sweeps) return 1;
    int status = -1;
    for (int i = 1; i < argc && status < 0; i++) {
        const char *a = argv[i];
        int shared = tool_sweep_arg("sim", argc, argv, &i, &sa);
        if (shared < 0) status = usage(stderr, 2);
        else if (shared) continue;
        else if (strcmp(a, "--info") == 0 && i + 1 < argc) model = argv[++i];
        else if (strcmp(a, "--fixed") == 0) fixed = 1;
        else if (strcmp(a, "--strict") == 0) strict = 1;
        else if (strcmp(a, "--csv") == 0 && i + 1 < argc) csv = argv[++i];
        else if (strcmp(a, "--html") == 0 && i + 1 < argc) html = argv[++i];
        else if (strcmp(a, "--events") == 0 && i + 1 < argc) events = argv[++i];
        else if (strcmp(a, "--checkpoint") == 0 && i + 1 < argc) ck.path = argv[++i];
        else if (strcmp(a, "--resume") == 0 && i + 1 < argc) ck.resume = argv[++i];
        else if (strcmp(a, "--checkpoint-every") == 0 && i + 1 < argc) {
            char *end;
            ck.every = strtod(argv[++i], &end);
            if (*end || end == argv[i] || !(ck.every > 0) || ck.every > 1e300) {
                fprintf(stderr, "sim: --checkpoint-every %s: a number of simulated seconds > 0\n", argv[i]);
                status = usage(stderr, 2);
            }
        }
        else if (strcmp(a, "--help") == 0 || strcmp(a, "-h") == 0) status = usage(stdout, 0);
        else if (strcmp(a, "--version") == 0) status = printf("sim (mbs) %s\n", mbs_version()) < 0;
        else if (strcmp(a, "--options-markdown") == 0) status = options_markdown();
        else if (a[0] != '-' && !scenario) scenario = a;
        else {
            fprintf(stderr, "sim: unknown or incomplete argument '%s'\n", a);
            status = usage(stderr, 2);
        }
    }
    if (status < 0) {
        int running = scenario && !model && !fixed && !strict;
        int checkpoints = ck.path || ck.resume || ck.every > 0;
        if (model && !scenario && !sa.nsets && !csv && !html && !events && !sa.nsweeps && !checkpoints) status = info(model, fixed, strict);
        else if (ck.every > 0 && !ck.path) {
            fprintf(stderr, "sim: --checkpoint-every needs --checkpoint PATH\n");
            status = usage(stderr, 2);
        }
        else if (events && ck.resume) {
            /* the events before the checkpoint are in the first run's file, which a resumed run
             * would have to cut where the checkpoint was taken, as it does the CSV */
            fprintf(stderr, "sim: --events does not go with --resume: write the events of the whole run in one\n");
            status = usage(stderr, 2);
        }
        else if (running && sa.nsweeps && !csv && !html && !events && !checkpoints)
            status = sweep(scenario, sa.sets, sa.nsets, sa.sweeps, sa.nsweeps, sa.jobs, sa.out, sa.quiet);
        else if (running && !sa.nsweeps && !sa.out && sa.jobs == 1) status = run(scenario, sa.sets, sa.nsets, csv, html, events, sa.quiet, &ck);
        else {
            /* say which combination is wrong before the whole usage */
            if (running && !sa.nsweeps && (sa.out || sa.jobs != 1)) fprintf(stderr, "sim: --jobs and --out go with --sweep\n");
            else if (running && sa.nsweeps) fprintf(stderr, "sim: --sweep writes its own CSV (--out): no --csv, --html, --events or checkpoints\n");
            status = usage(stderr, 2);
        }
    }
    free(sa.sets);
    free(sa.sweeps);
    return status;
}
