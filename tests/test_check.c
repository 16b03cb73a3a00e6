/* test_check.c — the test harness tests itself: a CHECK_CLOSE over arrays that hold a NaN or an
 * infinity anywhere (first, last, in either array) fails, as does a finite error over the
 * tolerance; close arrays pass. Each planted case runs quietly and its failure count is read. */
#include <math.h>

#include "check.h"

/* The number of CHECKs that failed in CHECK_CLOSE(a, b) over n elements, run quietly. */
static int failures(const double *a, const double *b, int n, double tol)
{
    int saved = check_failed_here;
    check_failed_here = 0;
    check_quiet = 1;
    CHECK_CLOSE(a, b, n, tol, "planted");
    check_quiet = 0;
    int f = check_failed_here;
    check_failed_here = saved;
    return f;
}

static void test_planted_nonfinite_fails(void)
{
    const double good[3] = {1, 2, 3};
    const double cases[6][3] = {{NAN, 2, 3}, {1, 2, NAN}, {1, NAN, 3}, {INFINITY, 2, 3}, {1, 2, -INFINITY}, {NAN, NAN, NAN}};
    for (int k = 0; k < 6; k++) {
        CHECK(failures(cases[k], good, 3, 1e-12) == 1, "a non-finite element in case %d passed CHECK_CLOSE (as a)", k);
        CHECK(failures(good, cases[k], 3, 1e-12) == 1, "a non-finite element in case %d passed CHECK_CLOSE (as b)", k);
    }
}

static void test_error_over_tolerance_fails(void)
{
    const double a[3] = {1, 2, 3}, b[3] = {1, 2, 3 + 1e-6}, c[3] = {1 + 1e-6, 2, 3};
    CHECK(failures(a, b, 3, 1e-9) == 1, "an error of 3e-7 passed a tolerance of 1e-9 (last element)");
    CHECK(failures(c, a, 3, 1e-9) == 1, "an error of 1e-6 passed a tolerance of 1e-9 (first element)");
    CHECK(failures(a, b, 3, 1e-3) == 0, "an error of 3e-7 failed a tolerance of 1e-3");
    CHECK(failures(a, a, 3, 0) == 0, "equal arrays failed a tolerance of 0");
    CHECK(failures(a, a, 0, 0) == 0, "empty arrays failed");
}

int main(void)
{
    RUN(test_planted_nonfinite_fails);
    RUN(test_error_over_tolerance_fails);
    return check_summary("check");
}
