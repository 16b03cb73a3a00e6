/* bench_tool.h — what the benchmarks of tools/bench/ share beyond tools/tool.h: timing, medians,
 * output folders, their command line and their plots. */
#ifndef MBS_BENCH_TOOL_H
#define MBS_BENCH_TOOL_H

#include <errno.h>
#include <math.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/stat.h>
#include <time.h>
#include <unistd.h>

#include "../tool.h"

/* Seconds on a monotonic clock. */
static inline double tool_now(void)
{
    struct timespec t;
    clock_gettime(CLOCK_MONOTONIC, &t);
    return (double)t.tv_sec + 1e-9 * (double)t.tv_nsec;
}

static inline int tool_cmp_double(const void *a, const void *b)
{
    double x = *(const double *)a, y = *(const double *)b;
    return (x > y) - (x < y);
}

/* Median of x[0..n) (sorts x in place); NaN when n <= 0. */
static inline double tool_median(double *x, long n)
{
    if (n <= 0) return NAN;
    qsort(x, (size_t)n, sizeof *x, tool_cmp_double);
    return n % 2 ? x[n / 2] : 0.5 * (x[n / 2 - 1] + x[n / 2]);
}

/* mkdir -p; 0 on success. */
static inline int tool_mkdir_p(const char *path)
{
    char buf[1024];
    snprintf(buf, sizeof buf, "%s", path);
    for (char *p = buf + 1; *p; p++)
        if (*p == '/') {
            *p = 0;
            if (mkdir(buf, 0755) != 0 && errno != EEXIST) return -1;
            *p = '/';
        }
    return mkdir(buf, 0755) != 0 && errno != EEXIST ? -1 : 0;
}

/* Opens dir/name for writing; says so on stderr (as program) when it cannot. */
static inline FILE *tool_open_data(const char *program, const char *dir, const char *name)
{
    char path[1024];
    snprintf(path, sizeof path, "%s/%s", dir, name);
    FILE *f = fopen(path, "w");
    if (!f) fprintf(stderr, "%s: cannot write %s\n", program, path);
    return f;
}

/* The benchmarks' command line: [--quick] [--only PARTS] (when only_default is not NULL)
 * [--data DIR] [--images DIR], data defaulting to <source_dir>/build/<program> and images to
 * <source_dir>/docs/images, or with --quick to the data folder: a quick run writes no tables into
 * docs/benchmarks.md and so must not replace the figures beside them. Both folders are created.
 * Returns 0, or the exit status to leave with after a message on stderr. */
typedef struct tool_args { int quick; const char *only, *data, *images; } tool_args;
static inline int tool_parse_args(int argc, char **argv, const char *program, const char *source_dir,
                                  const char *only_default, tool_args *a)
{
    static char data[1024], images[1024];
    snprintf(data, sizeof data, "%s/build/%s", source_dir, program);
    snprintf(images, sizeof images, "%s/docs/images", source_dir);
    *a = (tool_args){0, only_default, data, images};
    int images_given = 0;
    for (int i = 1; i < argc; i++) {
        if (strcmp(argv[i], "--quick") == 0) a->quick = 1;
        else if (only_default && strcmp(argv[i], "--only") == 0 && i + 1 < argc) a->only = argv[++i];
        else if (strcmp(argv[i], "--data") == 0 && i + 1 < argc) a->data = argv[++i];
        else if (strcmp(argv[i], "--images") == 0 && i + 1 < argc) a->images = argv[++i], images_given = 1;
        else {
            fprintf(stderr, "usage: %s [--quick]%s [--data DIR] [--images DIR]\n", program,
                    only_default ? " [--only PARTS]" : "");
            return 2;
        }
    }
    if (a->quick && !images_given) a->images = a->data;
    if (tool_mkdir_p(a->data) != 0 || tool_mkdir_p(a->images) != 0) {
        fprintf(stderr, "%s: cannot create %s or %s\n", program, a->data, a->images);
        return 1;
    }
    return 0;
}

/* Runs tools/bench/<script> with gnuplot, when installed, on the data in data into images; extra
 * holds further gnuplot assignments ("name='value'; ...") or is "". Says on stdout what came
 * of it, naming the plots (produced) or where the data was left. */
static inline void tool_plot(const char *source_dir, const char *script, const char *data, const char *images,
                             const char *extra, const char *produced)
{
    char cmd[4096];
    if (system("command -v gnuplot >/dev/null 2>&1") != 0) {
        printf("# plots: gnuplot not installed (apt-get install gnuplot-nox), skipped; data in %s\n", data);
        return;
    }
    snprintf(cmd, sizeof cmd, "gnuplot -e \"datadir='%s'; imgdir='%s'; %s\" '%s/tools/bench/%s'", data, images, extra,
             source_dir, script);
    if (system(cmd) == 0) printf("# plots: %s/%s\n", images, produced);
    else printf("# plots: gnuplot failed, data left in %s\n", data);
}

#endif
