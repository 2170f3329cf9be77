/*
 * rt_process.c - the rank runtime of this process: attaches on first use
 * (or before main, under p2run), or finds another copy of the runtime that
 * owns the rank's channel and forwards every call to it. Holds the calls
 * that attach when they need to (p2_rt_get, p2_rt_wtime, p2_rt_compute) and
 * assembles the table the copies share from the core (rt_emu.c) and the
 * threads unit (rt_threads.c), the top of the runtime's units.
 *
 * One runtime per process. A program linked with the static library may
 * also load libp2tca.so (the preloaded MPI layer needs it): two copies of
 * the runtime, one channel. The copy that attaches first owns the channel and
 * leaves its table of functions in the environment ("P2_RT_OWNER=pid:address",
 * the pid keeping children from trusting an inherited value); a later copy
 * finds it and forwards every call there.
 */
#define _GNU_SOURCE
#include "rt/rt.h"

#include <pthread.h>
#include <stdio.h>
#include <stdlib.h>
#include <time.h>
#include <unistd.h>

#include "rt/rt_state.h"

#define rt p2_rt_self
static pthread_once_t rt_once = PTHREAD_ONCE_INIT;
static char rt_error[256];
static const rt_table own_table;

/* ---- The clock, for a caller without the runtime in hand --------------- */

double p2_rt_wtime(void)
{
    FORWARD(wtime);
    p2_rt *r = p2_rt_get();
    if (!r) {
        struct timespec ts;
        rt_host_clock(CLOCK_MONOTONIC, &ts);
        return (double)ts.tv_sec + (double)ts.tv_nsec * 1e-9;
    }
    p2_rt_enter(r);
    double t = (double)p2_rt_clock_ps(r) * 1e-12;
    p2_rt_leave(r);
    return t;
}

void p2_rt_compute(double seconds)
{
    FORWARD(compute, seconds);
    p2_rt *r = p2_rt_get();
    if (!r)
        return;
    /* NaN and infinity are no duration; anything past the limit would wrap. */
    if (seconds != seconds || seconds * 1e12 >= (double)P2_CHAN_MAX_STAMP_PS)
        rt_clock_overflow(r, "p2_compute", seconds);
    p2_rt_enter(r);
    if (seconds > 0)
        p2_rt_charge_ps(r, (uint64_t)(seconds * 1e12 + 0.5)); /* nearest ps */
    p2_rt_leave(r);
}

/* ---- Attaching ------------------------------------------------------------ */

static void attach_once(void)
{
    const char *job = getenv("P2_JOB");
    if (!job || !*job) {
        snprintf(rt_error, sizeof rt_error, "not running under p2run (no P2_JOB in the environment)");
        return;
    }
    const char *owner = getenv("P2_RT_OWNER");
    long pid = 0;
    void *table = NULL;
    if (owner && sscanf(owner, "%ld:%p", &pid, &table) == 2 && pid == (long)getpid() && table &&
        table != (const void *)&own_table) {
        p2_rt_fwd = (const rt_table *)table;
        return;
    }
    rt.thread_exit = rt_thread_exit; /* the lanes' threads end through the threads unit */
    if (rt_attach(&rt, rt_error, sizeof rt_error) != 0) {
        fprintf(stderr, "p2: cannot attach to the p2run job: %s\n", rt_error);
        return;
    }
    char mine[64];
    snprintf(mine, sizeof mine, "%ld:%p", (long)getpid(), (const void *)&own_table);
    setenv("P2_RT_OWNER", mine, 1);
}

p2_rt *p2_rt_get(void)
{
    pthread_once(&rt_once, attach_once);
    FORWARD(get);
    return rt.attached ? &rt.pub : NULL;
}

static const rt_table own_table = {
    p2_rt_get,        p2_rt_wtime,      p2_rt_compute,  p2_rt_enter,     p2_rt_leave,
    p2_rt_api_begin,  p2_rt_api_begin_call, p2_rt_api_end, p2_rt_read_clock, p2_rt_clock_ps,
    p2_rt_charge_ps,  p2_rt_advance_to, p2_rt_post,     p2_rt_call,      p2_rt_wait_mem,
    &p2_rt_threads_own, p2_rt_lane_channel, p2_rt_lanes_used};

/* Under p2run every rank attaches as it starts, before main: the simulator
 * then knows every rank's clock from time 0, even of a rank that calls the
 * library only late (or never). Failures are reported here and again by the
 * first call that needs the runtime. */
__attribute__((constructor)) static void rt_attach_early(void)
{
    const char *job = getenv("P2_JOB");
    if (job && *job)
        (void)p2_rt_get();
}
