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
 * leaves its table of functions in the environment
 * ("P2_RT_OWNER=pid:address:cookie", the pid and the exec's random cookie
 * keeping children and exec'd programs from trusting an inherited value); a
 * later copy finds it and forwards every call there.
 */
#define _GNU_SOURCE
#include "rt/rt.h"

#include <dlfcn.h>
#include <link.h>
#include <pthread.h>
#include <stdio.h>
#include <stdint.h>
#include <stdlib.h>
#include <string.h>
#include <sys/auxv.h>
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

/* 1 while this process has not attached because nothing of the program
 * needs the runtime (rt_attach_early): its clock calls read the host's. */
static int rt_deferred;

/* The table of another copy of the runtime in this process that owns the
 * rank's channel, or NULL. */
/* This process image's mark in P2_RT_OWNER: its pid and the random bytes
 * the kernel gives each exec (AT_RANDOM). A program that execs keeps its pid
 * and environment, and the old image's table address means nothing in the
 * new one. */
static void owner_mark(char *out, size_t outlen, const void *table)
{
    const unsigned char *r = (const unsigned char *)getauxval(AT_RANDOM);
    unsigned long long cookie = 0;
    for (int i = 0; r && i < 8; i++)
        cookie = cookie << 8 | r[i];
    snprintf(out, outlen, "%ld:%p:%llx", (long)getpid(), table, cookie);
}

static const rt_table *other_owner(void)
{
    const char *owner = getenv("P2_RT_OWNER");
    char want[96];
    void *table = NULL;
    if (!owner || sscanf(owner, "%*[0-9]:%p", &table) != 1 || !table ||
        table == (const void *)&own_table)
        return NULL;
    owner_mark(want, sizeof want, table);
    return strcmp(owner, want) == 0 ? (const rt_table *)table : NULL;
}

static void attach_once(void)
{
    __atomic_store_n(&rt_deferred, 0, __ATOMIC_RELAXED);
    const char *job = getenv("P2_JOB");
    if (!job || !*job) {
        snprintf(rt_error, sizeof rt_error, "not running under p2run (no P2_JOB in the environment)");
        return;
    }
    const rt_table *other = other_owner();
    if (other) {
        p2_rt_fwd = other;
        return;
    }
    rt.thread_exit = rt_thread_exit; /* the lanes' threads end through the threads unit */
    if (rt_attach(&rt, rt_error, sizeof rt_error) != 0) {
        fprintf(stderr, "p2: cannot attach to the p2run job: %s\n", rt_error);
        return;
    }
    char mine[96];
    owner_mark(mine, sizeof mine, &own_table);
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

static pthread_once_t deferral_once = PTHREAD_ONCE_INIT;
static int program_needs_runtime(void);

/* Decides, once, whether this process attaches at once or when it starts
 * MPI (rt_attach_early): before its constructor runs, another library's may
 * already read a clock. */
static void decide_deferral(void)
{
    const char *job = getenv("P2_JOB");
    if (job && *job && !program_needs_runtime() && !other_owner())
        __atomic_store_n(&rt_deferred, 1, __ATOMIC_RELAXED);
}

p2_rt *p2_rt_get_if_attached(void)
{
    pthread_once(&deferral_once, decide_deferral);
    if (__atomic_load_n(&rt_deferred, __ATOMIC_RELAXED) && !other_owner())
        return NULL;
    return p2_rt_get();
}

/* Whether `name` (a DT_NEEDED entry) is a library that carries or needs the
 * runtime: ours, or Open MPI's, under which p2run preloads the MPI layer. */
static int runtime_library(const char *name)
{
    return strncmp(name, "libp2tca", 8) == 0 || strncmp(name, "libp2mpi", 8) == 0 ||
           strncmp(name, "libmpi.so", 9) == 0 || strncmp(name, "libmpi_", 7) == 0;
}

/* Whether `name` is one of the files in LD_PRELOAD. */
static int preloaded(const char *name)
{
    const char *list = getenv("LD_PRELOAD");
    size_t n = strlen(name);
    while (list && *list && n) {
        size_t len = strcspn(list, ": ");
        if (len == n && strncmp(list, name, n) == 0)
            return 1;
        list += len;
        list += strspn(list, ": ");
    }
    return 0;
}

/* What program_needs_runtime looks for in each loaded object. */
typedef struct {
    uintptr_t self; /* an address of this copy of the runtime */
    int first;      /* the next object is the first: the executable */
    int found;
} needs_scan;

/* dl_iterate_phdr: sets `found` when this copy lies in the executable (a
 * static link) or a loaded object other than a preloaded one needs a
 * runtime library. */
static int needs_runtime(struct dl_phdr_info *info, size_t size, void *arg)
{
    (void)size;
    needs_scan *scan = arg;
    int executable = scan->first;
    scan->first = 0;
    if (!executable && info->dlpi_name && preloaded(info->dlpi_name))
        return 0;
    for (int i = 0; i < info->dlpi_phnum; i++) {
        const ElfW(Phdr) *ph = &info->dlpi_phdr[i];
        uintptr_t start = info->dlpi_addr + ph->p_vaddr;
        if (executable && ph->p_type == PT_LOAD && scan->self >= start &&
            scan->self - start < ph->p_memsz)
            scan->found = 1;
        if (ph->p_type != PT_DYNAMIC)
            continue;
        const ElfW(Dyn) *dyn = (const ElfW(Dyn) *)start;
        const char *strs = NULL;
        for (const ElfW(Dyn) *d = dyn; d->d_tag != DT_NULL; d++)
            if (d->d_tag == DT_STRTAB)
                /* The loader relocates the entry in place, except in objects
                 * whose dynamic section is read-only (the vDSO). */
                strs = (const char *)(d->d_un.d_ptr >= info->dlpi_addr
                                          ? d->d_un.d_ptr
                                          : d->d_un.d_ptr + info->dlpi_addr);
        for (const ElfW(Dyn) *d = dyn; strs && d->d_tag != DT_NULL; d++)
            if (d->d_tag == DT_NEEDED && runtime_library(strs + d->d_un.d_val))
                scan->found = 1;
    }
    return scan->found;
}

/* Whether the program needs the runtime, rather than only the MPI layer
 * p2run preloads into a program that may load MPI at run time (python3, a
 * shell script): this copy is linked into the executable, or a library
 * loaded without LD_PRELOAD needs ours or Open MPI's. */
static int program_needs_runtime(void)
{
    needs_scan scan = {(uintptr_t)&program_needs_runtime, 1, 0};
    dl_iterate_phdr(needs_runtime, &scan);
    return scan.found;
}

/* Under p2run every rank attaches as it starts, before main: the simulator
 * then knows every rank's clock from time 0, even of a rank that calls the
 * library only late (or never). A process that has the runtime only through
 * the preloaded MPI layer attaches when it starts MPI: in a shell script's
 * processes only the MPI program does (one process per rank may), and
 * python3 attaches when mpi4py starts MPI. Failures are reported here and
 * again by the first call that needs the runtime. */
__attribute__((constructor)) static void rt_attach_early(void)
{
    const char *job = getenv("P2_JOB");
    if (!job || !*job)
        return;
    pthread_once(&deferral_once, decide_deferral);
    if (!__atomic_load_n(&rt_deferred, __ATOMIC_RELAXED))
        (void)p2_rt_get();
}
