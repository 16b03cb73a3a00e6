/* clock.c — the one wall clock of the library: run timing (the summary's wall_time_s) and the
 * optimising controllers' own solve times. */
#include <time.h>

#include "base.h"

double mbsi_wall_seconds(void)
{
    struct timespec ts;
    clock_gettime(CLOCK_MONOTONIC, &ts);
    return (double)ts.tv_sec + 1e-9 * (double)ts.tv_nsec;
}
