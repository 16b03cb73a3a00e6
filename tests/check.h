/* check.h — the project's small test harness. A test is a function; it passes when none
 * of its CHECKs fails. Each test program ends with "<name>: N passed, N failed". */
#ifndef MBS_CHECK_H
#define MBS_CHECK_H

#include <math.h>
#include <stdio.h>
#include <string.h>

static int check_failed_here, check_tests_passed, check_tests_failed;
/* 1: failing CHECKs are counted but not printed (the harness's self-test, tests/test_check.c) */
static int check_quiet;

#define CHECK(cond, ...)                                                            \
    do {                                                                            \
        if (!(cond)) {                                                              \
            check_failed_here++;                                                    \
            if (check_failed_here <= 5 && !check_quiet) {                           \
                fprintf(stderr, "%s:%d: FAIL: ", __FILE__, __LINE__);               \
                fprintf(stderr, __VA_ARGS__);                                       \
                fputc('\n', stderr);                                                \
            }                                                                       \
        }                                                                           \
    } while (0)

/* |a - b| <= tol * max(1, |b|) for every element, every element of both finite. The first
 * non-finite element fails the check whatever follows (a NaN's error compares false with
 * everything, so a running maximum alone would let a later finite element overwrite it). */
#define CHECK_CLOSE(a, b, n, tol, what)                                             \
    do {                                                                            \
        double worst_ = 0; int at_ = -1, bad_ = -1;                                 \
        for (int k_ = 0; k_ < (n); k_++) {                                          \
            if (!isfinite((a)[k_]) || !isfinite((b)[k_])) { if (bad_ < 0) bad_ = k_; continue; } \
            double e_ = fabs((a)[k_] - (b)[k_]) / fmax(1.0, fabs((b)[k_]));         \
            if (e_ > worst_ || at_ < 0) { worst_ = e_; at_ = k_; }                  \
        }                                                                           \
        if (bad_ >= 0)                                                              \
            CHECK(0, "%s: not finite at [%d] (%.12g vs %.12g)", what, bad_, (double)(a)[bad_], (double)(b)[bad_]); \
        else                                                                        \
            CHECK(worst_ <= (tol), "%s: error %.3e at [%d] (%.12g vs %.12g) > %.1e",\
                  what, worst_, at_, at_ >= 0 ? (a)[at_] : 0.0, at_ >= 0 ? (b)[at_] : 0.0, (double)(tol)); \
    } while (0)

/* The larger of a running worst error w and x, NaN as soon as either is: fmax drops a NaN, so a
 * worst error kept with it passes a check of a state that is no longer finite. */
static inline double check_worst(double w, double x) { return isnan(w) || isnan(x) ? NAN : x > w ? x : w; }

#define RUN(test)                                                                   \
    do {                                                                            \
        check_failed_here = 0;                                                      \
        test();                                                                     \
        if (check_failed_here) { check_tests_failed++; fprintf(stderr, "FAIL %s\n", #test); } \
        else check_tests_passed++;                                                  \
    } while (0)

static inline int check_summary(const char *name)
{
    printf("%s: %d passed, %d failed\n", name, check_tests_passed, check_tests_failed);
    return check_tests_failed != 0;
}

#ifndef MBS_SOURCE_DIR
#define MBS_SOURCE_DIR "."
#endif

#endif
