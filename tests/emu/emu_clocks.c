/* emu_clocks: a TCA program (the static libp2tca) that reads the C library's
 * clocks as programs time themselves: gettimeofday, clock_gettime
 * (CLOCK_MONOTONIC, _RAW, _COARSE, CLOCK_BOOTTIME, CLOCK_REALTIME, _COARSE),
 * time and timespec_get, around a modelled computation (p2_compute) and a
 * loop that waits for the clock to move by reading it. Prints what it read.
 *   emu_clocks          under --clock model: every clock is the rank's
 *                       virtual one (REALTIME from 2014-01-01), and checks it
 *   emu_clocks cpu      under --clock cpu: every clock is still the rank's
 *                       (which then holds the CPU time the rank spent too)
 * Exit 0 when every check holds; each failure is named on stderr. */
#define _GNU_SOURCE
#include <stdint.h>
#include <stdio.h>
#include <string.h>
#include <sys/syscall.h>
#include <sys/time.h>
#include <time.h>
#include <unistd.h>

#include "p2.h"

#define EPOCH_S 1388534400LL /* 2014-01-01 00:00:00 UTC (lib/src/rt/rt_time.c) */
#define READ_NS 25           /* mpi_wtime_ns: a read in a run of reads */

static int failures;
#define CHECK(cond, ...)                                   \
    do {                                                   \
        if (!(cond)) {                                     \
            fprintf(stderr, "emu_clocks: rank %d: ", p2_rank()); \
            fprintf(stderr, __VA_ARGS__);                  \
            fprintf(stderr, "\n");                         \
            failures++;                                    \
        }                                                  \
    } while (0)

static int64_t ns_of(const struct timespec *ts)
{
    return (int64_t)ts->tv_sec * 1000000000LL + ts->tv_nsec;
}

int main(int argc, char **argv)
{
    const int cpu = argc > 1 && strcmp(argv[1], "cpu") == 0;
    const int rank = p2_rank();
    if (rank < 0)
        return 1;
    if (cpu) {
        /* --clock cpu: the rank's clock still, the CPU time it spent added,
         * so reads agree with p2_wtime to that time (well under a second)
         * and modelled work moves them by at least its cost. */
        const double w0 = p2_wtime();
        struct timespec m0, m1, r;
        struct timeval tv0, tv1;
        clock_gettime(CLOCK_MONOTONIC, &m0);
        clock_gettime(CLOCK_REALTIME, &r);
        gettimeofday(&tv0, NULL);
        p2_compute(2.5e-3);
        clock_gettime(CLOCK_MONOTONIC, &m1);
        gettimeofday(&tv1, NULL);
        const int64_t t0 = (int64_t)(w0 * 1e9 + 0.5), moved = ns_of(&m1) - ns_of(&m0);
        CHECK(ns_of(&m0) >= t0 && ns_of(&m0) < t0 + 1000000000LL,
              "CLOCK_MONOTONIC %lld ns where p2_wtime read %lld ns", (long long)ns_of(&m0),
              (long long)t0);
        CHECK(r.tv_sec >= EPOCH_S && r.tv_sec < EPOCH_S + 60,
              "CLOCK_REALTIME %lld s: not the virtual epoch plus the rank's clock",
              (long long)r.tv_sec);
        CHECK(tv0.tv_sec >= EPOCH_S && tv0.tv_sec < EPOCH_S + 60,
              "gettimeofday %lld s: not the virtual epoch plus the rank's clock",
              (long long)tv0.tv_sec);
        CHECK(moved >= 2500000 && moved < 1000000000LL,
              "CLOCK_MONOTONIC moved %lld ns over 2.5 ms of compute", (long long)moved);
        const int64_t dus = ((int64_t)tv1.tv_sec - tv0.tv_sec) * 1000000 + (tv1.tv_usec - tv0.tv_usec);
        CHECK(dus >= 2500 && dus < 1000000, "gettimeofday moved %lld us over 2.5 ms of compute",
              (long long)dus);
        printf("rank %d: the rank's clocks under --clock cpu: %s\n", rank, failures ? "wrong" : "right");
        return failures ? 1 : 0;
    }

    /* Virtual: the run of reads starts with the clock at t0. */
    double w0 = p2_wtime();
    struct timespec mono, raw, coarse, boot, real, real_coarse, utc;
    clock_gettime(CLOCK_MONOTONIC, &mono);         /* 1st read of the run: free */
    clock_gettime(CLOCK_MONOTONIC_RAW, &raw);      /* 2nd: free */
    clock_gettime(CLOCK_MONOTONIC_COARSE, &coarse); /* 3rd: read, then 25 ns */
    clock_gettime(CLOCK_BOOTTIME, &boot);          /* 4th: 25 ns later, then 25 ns */
    clock_gettime(CLOCK_REALTIME, &real);
    clock_gettime(CLOCK_REALTIME_COARSE, &real_coarse);
    timespec_get(&utc, TIME_UTC);
    struct timeval tv;
    gettimeofday(&tv, NULL);
    time_t now = time(NULL);
    const int64_t t0 = (int64_t)(w0 * 1e9 + 0.5);
    CHECK(ns_of(&mono) == t0, "CLOCK_MONOTONIC %lld ns, p2_wtime %lld ns",
          (long long)ns_of(&mono), (long long)t0);
    CHECK(ns_of(&raw) == t0, "CLOCK_MONOTONIC_RAW %lld ns, expected %lld", (long long)ns_of(&raw),
          (long long)t0);
    CHECK(ns_of(&coarse) == t0, "CLOCK_MONOTONIC_COARSE %lld ns, expected %lld",
          (long long)ns_of(&coarse), (long long)t0);
    CHECK(ns_of(&boot) == t0 + READ_NS, "CLOCK_BOOTTIME %lld ns, expected %lld",
          (long long)ns_of(&boot), (long long)t0 + READ_NS);
    CHECK(ns_of(&real) == EPOCH_S * 1000000000LL + t0 + 2 * READ_NS,
          "CLOCK_REALTIME %lld ns, expected the epoch plus %lld", (long long)ns_of(&real),
          (long long)t0 + 2 * READ_NS);
    CHECK(ns_of(&real_coarse) == ns_of(&real) + READ_NS, "CLOCK_REALTIME_COARSE %lld ns",
          (long long)ns_of(&real_coarse));
    CHECK(ns_of(&utc) == ns_of(&real) + 2 * READ_NS, "timespec_get %lld ns", (long long)ns_of(&utc));
    CHECK((int64_t)tv.tv_sec * 1000000 + tv.tv_usec == (ns_of(&real) + 3 * READ_NS) / 1000,
          "gettimeofday %lld.%06ld", (long long)tv.tv_sec, (long)tv.tv_usec);
    CHECK(now == EPOCH_S, "time() %lld, expected %lld", (long long)now, EPOCH_S);

    /* Modelled work moves every clock by what it costs, exactly. */
    struct timespec a, b;
    struct timeval ta, tb;
    p2_compute(1e-3);
    clock_gettime(CLOCK_MONOTONIC, &a);
    gettimeofday(&ta, NULL);
    p2_compute(2.5e-3);
    clock_gettime(CLOCK_MONOTONIC, &b);
    gettimeofday(&tb, NULL);
    CHECK(ns_of(&b) - ns_of(&a) == 2500000, "CLOCK_MONOTONIC moved %lld ns over 2.5 ms of compute",
          (long long)(ns_of(&b) - ns_of(&a)));
    int64_t dus = ((int64_t)tb.tv_sec - ta.tv_sec) * 1000000 + (tb.tv_usec - ta.tv_usec);
    CHECK(dus == 2500, "gettimeofday moved %lld us over 2.5 ms of compute", (long long)dus);

    /* A loop waiting for the clock to move (STREAM's checktick, on
     * gettimeofday) ends: each read costs 25 ns after the first two. */
    struct timeval t1, t2;
    gettimeofday(&t1, NULL);
    long reads = 1;
    do {
        gettimeofday(&t2, NULL);
        reads++;
    } while ((t2.tv_sec - t1.tv_sec) * 1000000 + (t2.tv_usec - t1.tv_usec) < 1);
    CHECK(reads < 200, "%ld reads to see the clock move by 1 us", reads);

    double w1 = p2_wtime();
    printf("rank %d: monotonic %lld ns, realtime %lld.%09ld, gettimeofday %lld.%06ld, time %lld; "
           "2.5 ms of compute: %lld ns and %lld us; a 1 us tick after %ld reads; p2_wtime %.6f us\n",
           rank, (long long)ns_of(&mono), (long long)real.tv_sec, real.tv_nsec,
           (long long)tv.tv_sec, (long)tv.tv_usec, (long long)now,
           (long long)(ns_of(&b) - ns_of(&a)), (long long)dus, reads, w1 * 1e6);
    return failures ? 1 : 0;
}
