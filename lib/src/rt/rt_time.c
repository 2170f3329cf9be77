/*
 * rt_time.c - the program's clocks: gettimeofday, clock_gettime, time and
 * timespec_get give the rank's virtual clock to the program's own calls.
 *
 * Programs time themselves with the C library's clocks as often as with
 * MPI_Wtime (NetPIPE, prebuilt, with gettimeofday). Under every --clock (model,
 * cpu, instructions: one rule, so a program's own timers and its simulated
 * time never disagree) a call from the program's own code reads the rank's
 * clock as MPI_Wtime does (p2_rt_read_clock: reads in a loop with no modelled
 * work between them cost mpi_wtime_ns, so a loop that waits for the clock to
 * move ends; under cpu the clock also holds the CPU time the rank spent):
 *   CLOCK_MONOTONIC, _RAW, _COARSE, CLOCK_BOOTTIME   the rank's clock, from
 *                      0 when it attached (what MPI_Wtime returns);
 *   CLOCK_REALTIME, _COARSE, gettimeofday, time, timespec_get(TIME_UTC)
 *                      the same plus a fixed epoch, P2_REALTIME_EPOCH_S
 *                      (2014-01-01 00:00:00 UTC), alike on every run.
 * Every other clock (CPU-time clocks, CLOCK_TAI, ...), every call without
 * p2run, and every call from code that is not the
 * program's get the host's clocks: the emulator's runtime and layers time
 * their own waits and timeouts in host time (and read it through rt_meter.c's
 * pointer, never these symbols), and so do Open MPI, its libraries and the
 * system's. The program's code is where the call returns to: the executable,
 * or a shared library that lies outside the system's library directories and
 * is not one of the runtimes named below (the emulator's own libraries, MPI,
 * CUDA, the network libraries). C++'s std::chrono and Fortran's SYSTEM_CLOCK
 * call from libstdc++ and libgfortran, system libraries: host time.
 *
 * A program linked with libp2tca gets these definitions (they come before the
 * C library's); an MPI program gets the MPI layer's, which p2run preloads and
 * which hand their calls here with the caller (mpi/p2mpi_clocks.c).
 *
 * Depends on the process's runtime (rt_process.c: p2_rt_get), the core
 * (rt_emu.c: p2_rt_read_clock) and the host clocks (rt_meter.c); the top
 * unit of the runtime.
 */
#define _GNU_SOURCE
#include <dlfcn.h>
#include <link.h>
#include <string.h>
#include <sys/time.h>
#include <time.h>

#include "rt/rt_state.h"

/* REALTIME's virtual epoch: 2014-01-01 00:00:00 UTC, HA-PACS/TCA's first year
 * in service; any fixed value would do, one alike on every run. */
#define P2_REALTIME_EPOCH_S 1388534400LL

/* ---- Whose call it is ------------------------------------------------------ */

/* Runtimes whose clock reads are theirs, wherever they are installed. */
static const char *const runtimes[] = {
    "libp2",     "libmpi",     "libopen-",  "libpmix", "libprrte", "libevent", "libhwloc",
    "libuc",     "libfabric",  "libpsm",    "libibverbs", "librdmacm", "libcuda",
    "libcudart", "libnvidia",  "libnccl",   "libgomp", "mca_",     "libmca"};

/* The system's library directories: what lies there is not the program's. */
static const char *const system_dirs[] = {"/lib/", "/lib64/", "/usr/lib/", "/usr/lib64/",
                                          "/usr/libexec/"};

static int program_object(const char *path)
{
    if (!path || !*path)
        return 1; /* the executable itself (the link map's first entry has no name) */
    for (size_t i = 0; i < sizeof system_dirs / sizeof system_dirs[0]; i++)
        if (!strncmp(path, system_dirs[i], strlen(system_dirs[i])))
            return 0;
    const char *base = strrchr(path, '/');
    base = base ? base + 1 : path;
    for (size_t i = 0; i < sizeof runtimes / sizeof runtimes[0]; i++)
        if (!strncmp(base, runtimes[i], strlen(runtimes[i])))
            return 0;
    return 1;
}

/* Whether the code at `caller` is the program's. Looked up once per call
 * site (dladdr takes the loader's lock and searches symbols): a direct-mapped
 * cache of call sites, each entry (address << 1 | verdict) in one word. */
#define SITES 1024
static uint64_t sites[SITES];

static int program_code(const void *caller)
{
    uint64_t a = (uint64_t)(uintptr_t)caller;
    uint64_t *slot = &sites[(a ^ (a >> 10)) % SITES];
    uint64_t e = __atomic_load_n(slot, __ATOMIC_RELAXED);
    if (e && e >> 1 == a)
        return (int)(e & 1);
    Dl_info info;
    struct link_map *map = NULL;
    int mine = 1; /* code no object holds (generated at run time) is the program's */
    if (dladdr1(caller, &info, (void **)&map, RTLD_DL_LINKMAP) && map)
        mine = program_object(map->l_name);
    __atomic_store_n(slot, a << 1 | (uint64_t)mine, __ATOMIC_RELAXED);
    return mine;
}

/* ---- The virtual clocks -------------------------------------------------------- */

/* Whether clock `id` is virtual, and its epoch (s). */
static int virtual_clock(clockid_t id, long long *epoch)
{
    switch (id) {
    case CLOCK_REALTIME:
    case CLOCK_REALTIME_COARSE:
        *epoch = P2_REALTIME_EPOCH_S;
        return 1;
    case CLOCK_MONOTONIC:
    case CLOCK_MONOTONIC_RAW:
    case CLOCK_MONOTONIC_COARSE:
    case CLOCK_BOOTTIME:
        *epoch = 0;
        return 1;
    default:
        return 0;
    }
}

/* Reads the rank's clock (ps) for a call of the program's: 1, or 0 when the
 * call gets the host's clock. */
static int read_virtual(clockid_t id, const void *caller, uint64_t *ps, long long *epoch)
{
    if (!virtual_clock(id, epoch) || !program_code(caller))
        return 0;
    p2_rt *r = p2_rt_get_if_attached();
    if (!r)
        return 0;
    *ps = p2_rt_read_clock(r, p2_ns_ps(r->prm.mpi_wtime_ns));
    return 1;
}

int p2_rt_clock_gettime(clockid_t id, struct timespec *ts, const void *caller)
{
    uint64_t ps;
    long long epoch;
    if (!ts || !read_virtual(id, caller, &ps, &epoch))
        return rt_host_clock(id, ts);
    uint64_t ns = ps / 1000;
    ts->tv_sec = (time_t)(epoch + (long long)(ns / 1000000000u));
    ts->tv_nsec = (long)(ns % 1000000000u);
    return 0;
}

int p2_rt_gettimeofday(struct timeval *tv, void *tz, const void *caller)
{
    struct timespec ts;
    if (tz) /* obsolete: the kernel's (zero) time zone, as the C library gives it */
        memset(tz, 0, sizeof(struct timezone));
    p2_rt_clock_gettime(CLOCK_REALTIME, &ts, caller);
    tv->tv_sec = ts.tv_sec;
    tv->tv_usec = (suseconds_t)(ts.tv_nsec / 1000);
    return 0;
}

time_t p2_rt_time(time_t *t, const void *caller)
{
    struct timespec ts;
    p2_rt_clock_gettime(CLOCK_REALTIME, &ts, caller);
    if (t)
        *t = ts.tv_sec;
    return ts.tv_sec;
}

int p2_rt_timespec_get(struct timespec *ts, int base, const void *caller)
{
    if (base != TIME_UTC || !ts)
        return 0;
    return p2_rt_clock_gettime(CLOCK_REALTIME, ts, caller) == 0 ? base : 0;
}

/* ---- The symbols programs call ---------------------------------------------------- */

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
