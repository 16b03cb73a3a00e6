/* bench_doc.h — the tables a benchmark writes for docs/benchmarks.md.
 *
 * A benchmark's full run (not --quick) writes, besides its output, the markdown tables its section
 * of docs/benchmarks.md shows into <data>/tables.md, each between the lines
 *     <!-- begin NAME: ... -->   and   <!-- end NAME -->
 * and tools/bench_doc.py replaces the block of the same NAME in docs/benchmarks.md with it (the
 * Makefile's bench targets run it after the benchmark). Every table of a section thus comes from
 * one run of the command the section names, never from figures copied by hand; each block ends
 * with a line naming the command, the run (UTC time) and the machine. */
#ifndef MBS_BENCH_DOC_H
#define MBS_BENCH_DOC_H

#include <stdarg.h>
#include <stdio.h>
#include <string.h>
#include <time.h>
#include <unistd.h>

typedef struct bench_doc {
    FILE *f;               /* NULL: no tables written (a --quick run, or the file could not be opened) */
    const char *command;   /* the command the section names, e.g. "make bench-expo" */
    char stamp[64];        /* the run: its UTC start time */
    char machine[256];     /* CPU model, CPUs online, compiler */
} bench_doc;

/* "AMD EPYC, 2 CPUs, gcc 12.2.0": /proc/cpuinfo's model name, the CPUs online, the compiler. */
static inline void bench_doc_machine(char *buf, size_t n)
{
    char model[160] = "unknown CPU";
    FILE *f = fopen("/proc/cpuinfo", "r");
    if (f) {
        char line[512];
        while (fgets(line, sizeof line, f))
            if (strncmp(line, "model name", 10) == 0) {
                const char *c = strchr(line, ':');
                if (c) {
                    c++;
                    while (*c == ' ' || *c == '\t') c++;
                    snprintf(model, sizeof model, "%s", c);
                    model[strcspn(model, "\n")] = 0;
                }
                break;
            }
        fclose(f);
    }
    long ncpu = sysconf(_SC_NPROCESSORS_ONLN);
#ifdef __VERSION__
    const char *cc = "gcc " __VERSION__;
#else
    const char *cc = "unknown compiler";
#endif
    snprintf(buf, n, "%s, %ld CPU%s, %s", model, ncpu, ncpu == 1 ? "" : "s", cc);
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
    if (!enabled) {   /* no tables of an earlier full run left behind for tools/bench_doc.py */
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

/* Block <prefix>-output: its place holder, which tools/bench_doc.py replaces with the run's whole
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

#endif
