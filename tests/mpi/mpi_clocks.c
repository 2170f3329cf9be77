/* mpi_clocks: an MPI program that times itself as prebuilt benchmarks do
 * (NetPIPE: gettimeofday), built against Open MPI alone, run by p2run (which
 * preloads the MPI layer). Ranks 0 and 1 time ITER round trips of an 8 B
 * message with MPI_Wtime, gettimeofday, clock_gettime (CLOCK_MONOTONIC and
 * CLOCK_REALTIME) and a user library's gettimeofday (userclock.c), all at
 * once, and print each one-way latency.
 *   mpi_clocks          under --clock model: every clock reads the virtual
 *                       time; checks that they agree with MPI_Wtime to the
 *                       read costs, and that a system library's read
 *                       (libevent's, which Open MPI uses) gets the host's
 *   mpi_clocks cpu      under --clock cpu: the program's clocks are still the
 *                       rank's, agreeing with MPI_Wtime to the CPU time read
 *                       between them
 * Exit 0 when every check holds; a failure is named on stderr. */
#define _GNU_SOURCE
#include <dlfcn.h>
#include <math.h>
#include <mpi.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/syscall.h>
#include <sys/time.h>
#include <time.h>
#include <unistd.h>

#define ITER 1000
#define EPOCH_S 1388534400.0 /* 2014-01-01 00:00:00 UTC (lib/src/rt/rt_time.c) */
#define READ_S 25e-9          /* mpi_wtime_ns */

double userclock_now(void);

static int rank, failures;
#define CHECK(cond, ...)                                  \
    do {                                                  \
        if (!(cond)) {                                    \
            fprintf(stderr, "mpi_clocks: rank %d: ", rank); \
            fprintf(stderr, __VA_ARGS__);                 \
            fprintf(stderr, "\n");                        \
            failures++;                                   \
        }                                                 \
    } while (0)

static double tv_s(const struct timeval *tv) { return (double)tv->tv_sec + tv->tv_usec * 1e-6; }
static double ts_s(const struct timespec *ts) { return (double)ts->tv_sec + ts->tv_nsec * 1e-9; }
/* Differences in whole units first: REALTIME's seconds (2014) leave a double
 * only 0.24 us of resolution. */
static double tv_diff(const struct timeval *a, const struct timeval *b)
{
    return (double)(((long long)b->tv_sec - a->tv_sec) * 1000000 + (b->tv_usec - a->tv_usec)) * 1e-6;
}
static double ts_diff(const struct timespec *a, const struct timespec *b)
{
    return (double)(((long long)b->tv_sec - a->tv_sec) * 1000000000 + (b->tv_nsec - a->tv_nsec)) *
           1e-9;
}

/* libevent's monotonic timer (the system library Open MPI itself uses),
 * which calls clock_gettime from inside libevent: the host's time. Returns
 * its reading minus the host's monotonic time from the kernel (about 0), or
 * a huge value when it cannot be called. */
static double system_library_offset(void)
{
    void *lib = dlopen("libevent_core-2.1.so.7", RTLD_NOW);
    void *(*timer_new)(void) = lib ? (void *(*)(void))dlsym(lib, "evutil_monotonic_timer_new") : NULL;
    int (*configure)(void *, int) = lib ? (int (*)(void *, int))dlsym(lib, "evutil_configure_monotonic_time") : NULL;
    int (*gettime)(void *, struct timeval *) =
        lib ? (int (*)(void *, struct timeval *))dlsym(lib, "evutil_gettime_monotonic") : NULL;
    void *timer = timer_new ? timer_new() : NULL;
    struct timeval tv;
    if (!timer || !configure || !gettime || configure(timer, 1 /* EV_MONOT_PRECISE */) != 0 ||
        gettime(timer, &tv) != 0)
        return 1e9;
    struct timespec host;
    syscall(SYS_clock_gettime, CLOCK_MONOTONIC, &host);
    return tv_s(&tv) - ts_s(&host);
}

static void pingpong(char *buf, int iters)
{
    for (int i = 0; i < iters; i++) {
        if (rank == 0) {
            MPI_Send(buf, 8, MPI_BYTE, 1, 0, MPI_COMM_WORLD);
            MPI_Recv(buf, 8, MPI_BYTE, 1, 0, MPI_COMM_WORLD, MPI_STATUS_IGNORE);
        } else if (rank == 1) {
            MPI_Recv(buf, 8, MPI_BYTE, 0, 0, MPI_COMM_WORLD, MPI_STATUS_IGNORE);
            MPI_Send(buf, 8, MPI_BYTE, 0, 0, MPI_COMM_WORLD);
        }
    }
}

int main(int argc, char **argv)
{
    const int cpu = argc > 1 && strcmp(argv[1], "cpu") == 0;
    MPI_Init(&argc, &argv);
    int size;
    MPI_Comm_rank(MPI_COMM_WORLD, &rank);
    MPI_Comm_size(MPI_COMM_WORLD, &size);
    if (size < 2) {
        fprintf(stderr, "mpi_clocks: run on 2 or more ranks\n");
        MPI_Abort(MPI_COMM_WORLD, 2);
    }
    char buf[8] = "8 bytes";
    pingpong(buf, 10); /* warm-up */
    MPI_Barrier(MPI_COMM_WORLD);

    struct timeval g0, g1;
    struct timespec m0, m1, r0, r1;
    double w0 = MPI_Wtime();
    gettimeofday(&g0, NULL);
    clock_gettime(CLOCK_MONOTONIC, &m0);
    clock_gettime(CLOCK_REALTIME, &r0);
    double u0 = userclock_now();
    pingpong(buf, ITER);
    double w1 = MPI_Wtime();
    gettimeofday(&g1, NULL);
    clock_gettime(CLOCK_MONOTONIC, &m1);
    clock_gettime(CLOCK_REALTIME, &r1);
    double u1 = userclock_now();
    double sys = system_library_offset();
    time_t t = time(NULL);

    const double one_way = 0.5 / ITER;
    const double w = (w1 - w0) * one_way, g = tv_diff(&g0, &g1) * one_way,
                 m = ts_diff(&m0, &m1) * one_way, r = ts_diff(&r0, &r1) * one_way,
                 u = (u1 - u0) * one_way;
    if (cpu) {
        /* --clock cpu: the rank's clock, which holds the CPU time the rank
         * spent as well, so the clocks agree with MPI_Wtime to that time. */
        if (rank < 2) {
            CHECK(fabs(m - w) < 1e-6, "CLOCK_MONOTONIC %.6f us, MPI_Wtime %.6f us", m * 1e6, w * 1e6);
            CHECK(fabs(g - w) < 1e-6, "gettimeofday %.6f us, MPI_Wtime %.6f us", g * 1e6, w * 1e6);
            CHECK(fabs(r - w) < 1e-6, "CLOCK_REALTIME %.6f us, MPI_Wtime %.6f us", r * 1e6, w * 1e6);
            CHECK(tv_s(&g0) >= EPOCH_S && tv_s(&g0) < EPOCH_S + 60,
                  "gettimeofday %.6f s: not the virtual epoch plus the rank's clock", tv_s(&g0));
            CHECK(t >= (time_t)EPOCH_S && t < (time_t)EPOCH_S + 60, "time() %ld", (long)t);
        }
        if (rank == 0)
            printf("mpi_clocks: the rank's clocks under --clock cpu: %s\n", failures ? "wrong" : "right");
    } else if (rank < 2) {
        /* Reads in a run cost 25 ns each from the third on: the start reads
         * are at w0, w0, w0 + 25 ns, w0 + 50 ns, w0 + 75 ns (then the run
         * ends with the ping-pong); the end reads at w1, w1, w1 + 25 ns, ... */
        CHECK(w > 1e-6 && w < 5e-6, "MPI_Wtime: %.6f us one way", w * 1e6);
        CHECK(fabs(m - w) < 1e-12, "CLOCK_MONOTONIC %.9f us, MPI_Wtime %.9f us", m * 1e6, w * 1e6);
        CHECK(fabs(r - w) < 1e-12, "CLOCK_REALTIME %.9f us, MPI_Wtime %.9f us", r * 1e6, w * 1e6);
        CHECK(g * 2 * ITER > (w1 - w0) - 1.01e-6 && g * 2 * ITER < (w1 - w0) + 1.01e-6,
              "gettimeofday %.6f us, MPI_Wtime %.6f us (1 us resolution)", g * 1e6, w * 1e6);
        CHECK(u * 2 * ITER > (w1 - w0) - 1.01e-6 && u * 2 * ITER < (w1 - w0) + 1.01e-6,
              "a user library's gettimeofday %.6f us, MPI_Wtime %.6f us", u * 1e6, w * 1e6);
        CHECK(ts_s(&m0) > w0 - 1e-9 && ts_s(&m0) < w0 + 2 * READ_S + 1e-9,
              "CLOCK_MONOTONIC reads %.9f s where MPI_Wtime read %.9f s", ts_s(&m0), w0);
        CHECK(tv_s(&g0) >= EPOCH_S && tv_s(&g0) < EPOCH_S + 60,
              "gettimeofday %.6f s: not the virtual epoch (2014-01-01) plus the rank's clock",
              tv_s(&g0));
        CHECK(t >= (time_t)EPOCH_S && t < (time_t)EPOCH_S + 60, "time() %ld", (long)t);
        CHECK(fabs(sys) < 1.0, "a system library's clock_gettime read %.6f s off the host's", sys);
        printf("rank %d: 8 B one way: MPI_Wtime %.6f us, gettimeofday %.6f us, CLOCK_MONOTONIC "
               "%.6f us, CLOCK_REALTIME %.6f us, user library %.6f us; realtime at start "
               "%ld.%09ld; system library: host time\n",
               rank, w * 1e6, g * 1e6, m * 1e6, r * 1e6, u * 1e6, (long)r0.tv_sec, r0.tv_nsec);
    }
    int all = 0;
    MPI_Allreduce(&failures, &all, 1, MPI_INT, MPI_SUM, MPI_COMM_WORLD);
    if (rank == 0 && all == 0)
        printf("mpi_clocks: all clocks agree on %d ranks\n", size);
    MPI_Finalize();
    return all ? 1 : 0;
}
