/* tool.h — what the programs in tools/ share (./sim, ./sim-mpi and the benchmarks of tools/bench/): process set-up. */
#ifndef MBS_TOOL_H
#define MBS_TOOL_H

#include <stdlib.h>
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

#endif
