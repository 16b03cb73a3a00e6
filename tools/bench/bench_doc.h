/* bench_doc.h — the tables a benchmark writes for docs/benchmarks.md.
 *
 * A benchmark's full run (not --quick) writes, besides its output, the markdown tables its section
 * of docs/benchmarks.md shows into <data>/tables.md, each between the lines
 *     <!-- begin NAME: ... -->   and   <!-- end NAME -->
 * and tools/bench/bench_doc.py replaces the block of the same NAME in docs/benchmarks.md with it (the
 * Makefile's bench targets run it after the benchmark). Every table of a section thus comes from
 * one run of the command the section names, never from figures copied by hand; each block ends
 * with a line naming the command, the run (UTC time) and the machine. */
#ifndef MBS_BENCH_DOC_H
#define MBS_BENCH_DOC_H

#include <math.h>
#include <stdarg.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <time.h>
#include <unistd.h>

typedef struct bench_doc {
    FILE *f;               /* NULL: no tables written (a --quick run, or the file could not be opened) */
    const char *command;   /* the command the section names, e.g. "make bench-expo" */
    char stamp[64];        /* the run: its UTC start time */
    char machine[256];     /* CPU model, CPUs online, compiler */
} bench_doc;

/* The first processor's model name (or "unknown CPU"), family, model (-1 where not given) and
 * clock in MHz (0 where not given), from /proc/cpuinfo. */
static inline void bench_doc_cpu(char *name, size_t n, int *family, int *model, double *mhz)
{
    snprintf(name, n, "unknown CPU");
    *family = *model = -1;
    *mhz = 0;
    FILE *f = fopen("/proc/cpuinfo", "r");
    if (!f) return;
    char line[512];
    /* the first processor's block: its fields up to the first blank line */
    while (fgets(line, sizeof line, f) && line[0] != '\n') {
        const char *c = strchr(line, ':');
        if (!c) continue;
        c++;
        while (*c == ' ' || *c == '\t') c++;
        if (strncmp(line, "model name", 10) == 0) {
            snprintf(name, n, "%s", c);
            name[strcspn(name, "\n")] = 0;
        } else if (strncmp(line, "cpu family", 10) == 0) {
            *family = atoi(c);
        } else if (strncmp(line, "model", 5) == 0 && (line[5] == ' ' || line[5] == '\t')) {
            *model = atoi(c);
        } else if (strncmp(line, "cpu MHz", 7) == 0) {
            *mhz = atof(c);
        }
    }
    fclose(f);
}

/* The machine class on which the peers' recorded figures were measured (peer_timings.md: AMD
 * EPYC, family 26 model 2, Zen 5, at 2.6 GHz). A ratio of a live figure to a recorded one is a
 * comparison of code only on that class and clock: Zen 4 (family 25) machines of the same name run
 * this code about a third slower, and a family 26 model 2 machine whose /proc/cpuinfo gave 2096 MHz
 * (2026-11-29) ran the dynamics of the code of 2026-11-25 (8e9529f) 1.3-1.45 times slower than the
 * 2.6 GHz one had that day: the clock, and what else a virtual machine's host shares, counts. */
enum { BENCH_PEER_FAMILY = 26, BENCH_PEER_MODEL = 2 };
static const double BENCH_PEER_MHZ = 2600, BENCH_PEER_MHZ_TOLERANCE = 0.05;

/* 0 when this machine is of the class and clock the recorded peer figures were measured on; else 1,
 * with why (a phrase, e.g. "its clock is 2.10 GHz against the records' 2.6 GHz") in why. */
static inline int bench_doc_peer_mismatch(char *why, size_t n)
{
    char name[160];
    int family, model;
    double mhz;
    bench_doc_cpu(name, sizeof name, &family, &model, &mhz);
    if (family != BENCH_PEER_FAMILY || model != BENCH_PEER_MODEL) {
        snprintf(why, n, "its CPU is family %d model %d, the records' family %d model %d", family, model,
                 BENCH_PEER_FAMILY, BENCH_PEER_MODEL);
        return 1;
    }
    if (!(fabs(mhz - BENCH_PEER_MHZ) <= BENCH_PEER_MHZ_TOLERANCE * BENCH_PEER_MHZ)) {
        snprintf(why, n, "its clock is %.2f GHz against the records' %.1f GHz", mhz / 1000, BENCH_PEER_MHZ / 1000);
        return 1;
    }
    snprintf(why, n, "of the records' class and clock");
    return 0;
}

/* "AMD EPYC (family 26 model 2, 2.10 GHz), 2 CPUs, gcc 12.2.0": the model name with the CPU family, model and clock
 * (a virtual machine's model name, "AMD EPYC", does not tell one generation from another), the
 * CPUs online, the compiler. */
static inline void bench_doc_machine(char *buf, size_t n)
{
    char name[160], fam[64] = "";
    int family, model;
    double mhz;
    bench_doc_cpu(name, sizeof name, &family, &model, &mhz);
    if (family >= 0 && model >= 0 && mhz > 0)
        snprintf(fam, sizeof fam, " (family %d model %d, %.2f GHz)", family, model, mhz / 1000);
    else if (family >= 0 && model >= 0) snprintf(fam, sizeof fam, " (family %d model %d)", family, model);
    long ncpu = sysconf(_SC_NPROCESSORS_ONLN);
#ifdef __VERSION__
    const char *cc = "gcc " __VERSION__;
#else
    const char *cc = "unknown compiler";
#endif
    snprintf(buf, n, "%s%s, %ld CPU%s, %s", name, fam, ncpu, ncpu == 1 ? "" : "s", cc);
}

/* 1 when the benchmark including this was built with MuJoCo, its peer (MBS_HAVE_MUJOCO). Without
 * it MuJoCo's columns print as n/a, so it says that the document's tables, those of a run with
 * MuJoCo, are left as they are, and the caller (a full run) opens no tables. */
static inline int bench_doc_with_mujoco(void)
{
#ifdef MBS_HAVE_MUJOCO
    return 1;
#else
    printf("# MuJoCo not built in: the tables of docs/benchmarks.md are not rewritten (apt-get install "
           "libmujoco-dev, then run this again)\n");
    return 0;
#endif
}

/* Opens <data>/tables.md when enabled (a full run); d->f stays NULL otherwise. The stamp and the
 * machine are filled either way, for the run's header line. */
static inline void bench_doc_open(bench_doc *d, const char *data, const char *command, int enabled)
{
    memset(d, 0, sizeof *d);
    d->command = command;
    time_t now = time(NULL);
    struct tm tm;
    gmtime_r(&now, &tm);
    strftime(d->stamp, sizeof d->stamp, "%Y-%m-%d %H:%M:%S UTC", &tm);
    bench_doc_machine(d->machine, sizeof d->machine);
    char path[1200];
    if (snprintf(path, sizeof path, "%.1024s/tables.md", data) >= (int)sizeof path) return;
    if (!enabled) {   /* no tables of an earlier full run left behind for tools/bench/bench_doc.py */
        remove(path);
        return;
    }
    d->f = fopen(path, "w");
    if (!d->f) fprintf(stderr, "%s: cannot write %s (the tables for docs/benchmarks.md)\n", command, path);
}

static inline void bench_doc_close(bench_doc *d)
{
    if (d->f) fclose(d->f);
    d->f = NULL;
}

/* Starts block `name` (e.g. "expo-touchdowns"). */
static inline void bench_doc_begin(bench_doc *d, const char *name)
{
    if (d->f) fprintf(d->f, "<!-- begin %s: written by `%s`, run %s; do not edit by hand -->\n", name, d->command, d->stamp);
}

/* Ends block `name` with the line naming the command, the run and the machine. */
static inline void bench_doc_end(bench_doc *d, const char *name)
{
    if (!d->f) return;
    fprintf(d->f, "\n<sub>Written by `%s`, run of %s on %s.</sub>\n<!-- end %s -->\n\n", d->command, d->stamp, d->machine,
            name);
    fflush(d->f);
}

/* Ends a block that holds a code block (no caption inside it). */
static inline void bench_doc_end_plain(bench_doc *d, const char *name)
{
    if (!d->f) return;
    fprintf(d->f, "<!-- end %s -->\n\n", name);
    fflush(d->f);
}

static inline void bench_doc_printf(bench_doc *d, const char *fmt, ...) __attribute__((format(printf, 2, 3)));
static inline void bench_doc_printf(bench_doc *d, const char *fmt, ...)
{
    if (!d->f) return;
    va_list ap;
    va_start(ap, fmt);
    vfprintf(d->f, fmt, ap);
    va_end(ap);
}

/* Block <prefix>-keys: the run's key: value lines, as a code block. */
static inline void bench_doc_keys(bench_doc *d, const char *prefix, const char *keys)
{
    if (!d->f) return;
    char name[64];
    snprintf(name, sizeof name, "%s-keys", prefix);
    bench_doc_begin(d, name);
    bench_doc_printf(d, "```\n%s```\n", keys);
    bench_doc_end_plain(d, name);
}

/* Block <prefix>-output: its place holder, which tools/bench/bench_doc.py replaces with the run's whole
 * output (the Makefile tees it into <data>/output.txt). */
static inline void bench_doc_output(bench_doc *d, const char *prefix)
{
    if (!d->f) return;
    char name[64];
    snprintf(name, sizeof name, "%s-output", prefix);
    bench_doc_begin(d, name);
    bench_doc_printf(d, "@@OUTPUT@@\n");
    bench_doc_end_plain(d, name);
}

/* The key: value lines of a run, collected as it goes and printed together at its end (and
 * written into its keys block): bench_key(&keys, "name_unit: %g\n", x). */
typedef struct bench_keys {
    char text[32768];
    size_t len;
} bench_keys;

static inline void bench_key(bench_keys *k, const char *fmt, ...) __attribute__((format(printf, 2, 3)));
static inline void bench_key(bench_keys *k, const char *fmt, ...)
{
    va_list ap;
    va_start(ap, fmt);
    int w = vsnprintf(k->text + k->len, sizeof k->text - k->len, fmt, ap);
    va_end(ap);
    if (w > 0 && k->len + (size_t)w < sizeof k->text) k->len += (size_t)w;
}

/* The end of a run that collects its key lines: them on stdout, then its keys and output blocks
 * (<prefix>-keys, <prefix>-output), the tables closed. */
static inline void bench_doc_finish(bench_doc *d, const char *prefix, const bench_keys *k)
{
    fputs(k->text, stdout);
    bench_doc_keys(d, prefix, k->text);
    bench_doc_output(d, prefix);
    bench_doc_close(d);
}

#endif
