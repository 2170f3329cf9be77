/*
 * p2mpi_clocks.c - the program's clocks in an MPI program: p2run preloads
 * the layer, so these definitions of gettimeofday, clock_gettime, time and
 * timespec_get come before the C library's (an MPI program need not link
 * libp2tca, whose own definitions would come after it). Each hands the call
 * and its caller to the rank runtime (lib/src/rt/rt_time.c), which gives the
 * program's own calls the rank's virtual clock under --clock=model and every
 * other call (Open MPI's, its libraries', the layer's) the host's
 * (README.md, "The program's clocks"). Depends on the rank runtime alone.
 */
#define _GNU_SOURCE
#include <sys/time.h>
#include <time.h>

#include "rt/rt.h"

int clock_gettime(clockid_t id, struct timespec *ts)
{
    return p2_rt_clock_gettime(id, ts, __builtin_return_address(0));
}

int gettimeofday(struct timeval *restrict tv, void *restrict tz)
{
    return p2_rt_gettimeofday(tv, tz, __builtin_return_address(0));
}

time_t time(time_t *t)
{
    return p2_rt_time(t, __builtin_return_address(0));
}

int timespec_get(struct timespec *ts, int base)
{
    return p2_rt_timespec_get(ts, base, __builtin_return_address(0));
}
