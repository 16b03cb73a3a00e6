/* tool.h — what the programs in tools/ share (./sim, ./sim-mpi and the benchmarks of tools/bench/): process
 * set-up, and the run and sweep options of ./sim and ./sim-mpi. */
#ifndef MBS_TOOL_H
#define MBS_TOOL_H

#include <stdio.h>
#include <stdlib.h>
#include <string.h>
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

/* The options of a scenario run and its sweeps that ./sim and ./sim-mpi share, parsed by one
 * function so that the two programs cannot drift apart. sets and sweeps hold argc pointers. */
typedef struct tool_sweep_args {
    const char **sets, **sweeps;
    int nsets, nsweeps;
    const char *out;   /* --out: the sweep's CSV, NULL: stdout */
    int jobs;          /* --jobs: runs at once (1 unless given) */
    int quiet;         /* --quiet, -q */
} tool_sweep_args;

/* Takes argv[*i] (and its value, advancing *i) when it is one of those options: returns 1, or 0
 * when it is not one of them (nor a complete one), or -1 when its value is refused, after saying
 * why as `prog` (nothing said when prog is NULL). */
static inline int tool_sweep_arg(const char *prog, int argc, char **argv, int *i, tool_sweep_args *a)
{
    const char *s = argv[*i];
    int more = *i + 1 < argc;
    if (strcmp(s, "--set") == 0 && more) a->sets[a->nsets++] = argv[++*i];
    else if (strncmp(s, "--set=", 6) == 0) a->sets[a->nsets++] = s + 6;
    else if (strcmp(s, "--sweep") == 0 && more) a->sweeps[a->nsweeps++] = argv[++*i];
    else if (strcmp(s, "--out") == 0 && more) a->out = argv[++*i];
    else if (strcmp(s, "--quiet") == 0 || strcmp(s, "-q") == 0) a->quiet = 1;
    else if (strcmp(s, "--jobs") == 0 && more) {
        char *end;
        long n = strtol(argv[++*i], &end, 10);
        if (*end || end == argv[*i] || n < 1 || n > 1024) {
            if (prog) fprintf(stderr, "%s: --jobs %s: a whole number of threads in [1, 1024]\n", prog, argv[*i]);
            return -1;
        }
        a->jobs = (int)n;
    } else {
        return 0;
    }
    return 1;
}

#endif
