/*
 * rt_meter.c - what the rank runtime reads of the host, and the program's
 * own work between library calls measured with it.
 *
 * Host clocks. The runtime times its own waits and timeouts in host time:
 * it reads the C library's clock_gettime through a pointer from the C
 * library itself, never the symbol, which the program's clocks (rt_time.c,
 * the MPI layer) interpose with the rank's virtual clock.
 *
 * The program's meters. A thread of the program that leaves the libraries
 * is marked (rt_meter_leave); when it enters them again (rt_meter_enter) the
 * span between is the program's own work: its host CPU time (the thread's
 * CPU-time clock, less the cost of one read) is added to the lane's count of
 * the program's CPU time in the job segment under every clock, for the
 * end-of-job report and the stall diagnosis; under --clock=cpu it is charged
 * to the clock; under --clock=instructions the user-mode instructions the
 * thread retired in the span (emu/instr_counter.h), less a read's own, are
 * counted and charged at instructions_per_ns: the runtime's few dozen
 * instructions between the counter's read and the program's code count as
 * the program's. Under --clock=model nothing is charged.
 *
 * Depends on the lanes' state (rt_state.h) and emu's instruction counter;
 * the lowest unit of the runtime besides the lanes.
 */
#define _GNU_SOURCE
#include <dlfcn.h>
#include <stdio.h>
#include <stdlib.h>
#include <unistd.h>

#include "instr_counter.h"
#include "rt/rt_state.h"

/* ---- Host clocks ------------------------------------------------------------ */

typedef int (*clock_gettime_fn)(clockid_t, struct timespec *);
static clock_gettime_fn host_clock_gettime;

/* The C library's own: RTLD_NEXT finds nothing when this copy of the
 * library was loaded after libc, and the symbol itself may be the program's
 * virtual clock (rt_time.c). */
static clock_gettime_fn find_host_clock(void)
{
    void *libc = dlopen("libc.so.6", RTLD_LAZY | RTLD_NOLOAD);
    void *f = libc ? dlsym(libc, "clock_gettime") : NULL;
    if (!f)
        f = dlsym(RTLD_NEXT, "clock_gettime");
    if (!f) {
        fprintf(stderr, "p2: cannot find the C library's clock_gettime: %s\n", dlerror());
        abort();
    }
    return (clock_gettime_fn)f;
}

int rt_host_clock(clockid_t id, struct timespec *ts)
{
    clock_gettime_fn f = __atomic_load_n(&host_clock_gettime, __ATOMIC_ACQUIRE);
    if (!f) {
        f = find_host_clock();
        __atomic_store_n(&host_clock_gettime, f, __ATOMIC_RELEASE);
    }
    return f(id, ts);
}

int64_t rt_thread_cpu_ps(void)
{
    struct timespec ts;
    rt_host_clock(CLOCK_THREAD_CPUTIME_ID, &ts);
    return (int64_t)ts.tv_sec * 1000000000000LL + (int64_t)ts.tv_nsec * 1000LL;
}

/* Reading the CPU-time clock is a system call (about 1.2 us on a virtual
 * machine, 3.5 us on another): every span between a mark and the next read
 * holds one read. Its cost is the runtime's, not the program's: the least of
 * a few back-to-back reads. */
int64_t rt_cpu_read_cost_ps(void)
{
    int64_t best = INT64_MAX;
    for (int i = 0; i < 32; i++) {
        int64_t a = rt_thread_cpu_ps(), b = rt_thread_cpu_ps();
        if (b - a < best)
            best = b - a;
    }
    return best > 0 ? best : 0;
}

/* ---- The program's meters ------------------------------------------------------ */

static uint64_t instructions(rt_lane *l)
{
    uint64_t n = 0;
    if (l->instr_fd >= 0 && p2_instr_read(l->instr_fd, &n) != 0) {
        fprintf(stderr, "p2: the instruction counter of this thread cannot be read; ending "
                        "the rank rather than charging it nothing\n");
        exit(EXIT_FAILURE);
    }
    return n;
}

int rt_meter_bind(rt_state *s, rt_lane *l, char *err, size_t errlen)
{
    l->instr_fd = -1;
    if (s->clock_mode == P2_CLOCK_INSTRUCTIONS) {
        char why[512];
        l->instr_fd = p2_instr_open(why, sizeof why);
        if (l->instr_fd < 0) {
            snprintf(err, errlen, "--clock instructions: %s", why);
            return -1;
        }
        /* A read's own user-mode instructions (the system call's wrapper)
         * fall in every span: the least of a few back-to-back reads. */
        uint64_t best = UINT64_MAX;
        for (int i = 0; i < 16; i++) {
            uint64_t a = instructions(l), b = instructions(l);
            if (b - a < best)
                best = b - a;
        }
        s->instr_read = best == UINT64_MAX ? 0 : best;
    }
    l->cpu_mark_ps = rt_thread_cpu_ps();
    l->instr_mark = instructions(l);
    p2_st_sc(&l->channel->left_cpu_ns, l->cpu_mark_ps / 1000);
    return 0;
}

void rt_meter_unbind(rt_lane *l)
{
    if (l->instr_fd >= 0)
        close(l->instr_fd);
    l->instr_fd = -1;
}

uint64_t rt_meter_enter(rt_state *s, rt_lane *l)
{
    /* The instructions first and the CPU time after (and the other way round
     * when leaving): the CPU clock's reads stay outside the counted span. */
    uint64_t n = instructions(l);
    int64_t now = rt_thread_cpu_ps();
    int64_t used = now - l->cpu_mark_ps - s->cpu_read_ps;
    l->cpu_mark_ps = now;
    if (used < 0)
        used = 0;
    p2_st(&l->channel->program_cpu_ns, p2_ld(&l->channel->program_cpu_ns) + (uint64_t)used / 1000);
    p2_st(&l->channel->left_cpu_ns, (int64_t)-1);
    switch (s->clock_mode) {
    case P2_CLOCK_CPU:
        return (uint64_t)used;
    case P2_CLOCK_INSTRUCTIONS: {
        uint64_t spent = n - l->instr_mark;
        spent = spent > s->instr_read ? spent - s->instr_read : 0;
        l->instr_mark = n;
        p2_st(&l->channel->program_instr, p2_ld(&l->channel->program_instr) + spent);
        /* instructions_per_ns: picoseconds = instructions * 1000 / rate */
        return (uint64_t)((double)spent * 1000.0 / s->pub.prm.instructions_per_ns + 0.5);
    }
    default:
        return 0;
    }
}

void rt_meter_leave(rt_state *s, rt_lane *l)
{
    l->cpu_mark_ps = rt_thread_cpu_ps();
    p2_st(&l->channel->left_cpu_ns, l->cpu_mark_ps / 1000);
    if (s->clock_mode == P2_CLOCK_INSTRUCTIONS)
        l->instr_mark = instructions(l);
}

void rt_meter_call(rt_lane *l, const char *call)
{
    char *dst = l->channel->last_call;
    size_t n = 0;
    if (call)
        for (; n + 1 < sizeof l->channel->last_call && call[n]; n++)
            dst[n] = call[n];
    dst[n] = '\0';
}
