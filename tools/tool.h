/* tool.h — what the programs in tools/ share: process set-up, timing, medians, output files. */
#ifndef MBS_TOOL_H
#define MBS_TOOL_H

#include <errno.h>
#include <math.h>
#include <stdio.h>
#include <stdlib.h>
#include <sys/stat.h>
#include <time.h>
#include <unistd.h>

/* Runs the program with OPENBLAS_NUM_THREADS=1, re-executing it once when the variable is
 * unset. OpenBLAS reads it when it loads; a thread pool started later (even one asked for a
 * single thread) leaves worker threads spinning that slow the scalar code on a small machine,
 * and the small matrices here gain nothing from threads. */
static inline void tool_single_thread_blas(char **argv)
{
    if (getenv("OPENBLAS_NUM_THREADS")) return;
    char self[4096];
    ssize_t n = readlink("/proc/self/exe", self, sizeof self - 1);
    if (n <= 0 || setenv("OPENBLAS_NUM_THREADS", "1", 1) != 0) return;
    self[n] = 0;
    execv(self, argv);   /* returns only on failure: carry on as we are */
}

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

/* Runs tools/<script> with gnuplot, when installed, on the data in data into images; extra
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
    snprintf(cmd, sizeof cmd, "gnuplot -e \"datadir='%s'; imgdir='%s'; %s\" '%s/tools/%s'", data, images, extra,
             source_dir, script);
    if (system(cmd) == 0) printf("# plots: %s/%s\n", images, produced);
    else printf("# plots: gnuplot failed, data left in %s\n", data);
}

#endif
