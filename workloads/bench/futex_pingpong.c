/*
 * futex_pingpong - what a bare hand-over between two processes costs on this
 * machine, the floor of p2sim's hand-over to a rank and back (issue 38:
 * p2bench's answers per CPU second set against it).
 *
 *   futex_pingpong [-n ROUND_TRIPS] [-r RUNS]
 *
 * Two processes share one word; each waits (FUTEX_WAIT) until the word is
 * its turn, flips it and wakes the other (FUTEX_WAKE): one round trip is two
 * hand-overs, each a wake-up and a switch, as between a rank and p2sim when
 * neither spins. Measured with both pinned to one CPU and with each on its
 * own (where the machine has two), RUNS times each, alternated; the table
 * gives each placement's median and fastest wall time per hand-over and the
 * CPU time both processes used per hand-over.
 */
#define _GNU_SOURCE
#include <errno.h>
#include <linux/futex.h>
#include <sched.h>
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/mman.h>
#include <sys/resource.h>
#include <sys/syscall.h>
#include <sys/wait.h>
#include <time.h>
#include <unistd.h>

#define MAX_RUNS 101

static double now_s(void)
{
    struct timespec ts;
    clock_gettime(CLOCK_MONOTONIC, &ts);
    return (double)ts.tv_sec + (double)ts.tv_nsec * 1e-9;
}

/* Sleeps while the word still holds `value`. */
static void futex_wait(uint32_t *word, uint32_t value)
{
    syscall(SYS_futex, word, FUTEX_WAIT, value, NULL, NULL, 0);
}

static void futex_wake(uint32_t *word) { syscall(SYS_futex, word, FUTEX_WAKE, 1, NULL, NULL, 0); }

static void pin(int cpu)
{
    cpu_set_t set;
    CPU_ZERO(&set);
    CPU_SET(cpu, &set);
    if (sched_setaffinity(0, sizeof set, &set) != 0) {
        fprintf(stderr, "futex_pingpong: cannot pin to CPU %d: %s\n", cpu, strerror(errno));
        exit(1);
    }
}

/* The word is 2i while it is the parent's turn in round i, 2i + 1 while
 * the child's: each waits for its value, then passes the turn on. */
static void play(uint32_t *word, int me, long rounds)
{
    for (long i = 0; i < rounds; i++) {
        const uint32_t mine = (uint32_t)(2 * i + me);
        uint32_t v;
        while ((v = __atomic_load_n(word, __ATOMIC_ACQUIRE)) != mine)
            futex_wait(word, v);
        __atomic_store_n(word, mine + 1, __ATOMIC_RELEASE);
        futex_wake(word);
    }
}

/* One run: `rounds` round trips; wall and CPU seconds of both processes. */
static int run(int cpu_parent, int cpu_child, long rounds, double *wall, double *cpu)
{
    uint32_t *word = mmap(NULL, sizeof *word, PROT_READ | PROT_WRITE, MAP_SHARED | MAP_ANONYMOUS, -1, 0);
    if (word == MAP_FAILED)
        return -1;
    *word = 0;
    struct rusage before, after, child;
    getrusage(RUSAGE_SELF, &before);
    double start = now_s();
    pid_t pid = fork();
    if (pid < 0)
        return -1;
    if (pid == 0) {
        pin(cpu_child);
        play(word, 1, rounds);
        _exit(0);
    }
    pin(cpu_parent);
    play(word, 0, rounds);
    int status;
    if (wait4(pid, &status, 0, &child) != pid || !WIFEXITED(status) || WEXITSTATUS(status) != 0)
        return -1;
    *wall = now_s() - start;
    getrusage(RUSAGE_SELF, &after);
    double self = (double)(after.ru_utime.tv_sec - before.ru_utime.tv_sec) +
                  (double)(after.ru_utime.tv_usec - before.ru_utime.tv_usec) * 1e-6 +
                  (double)(after.ru_stime.tv_sec - before.ru_stime.tv_sec) +
                  (double)(after.ru_stime.tv_usec - before.ru_stime.tv_usec) * 1e-6;
    *cpu = self + (double)child.ru_utime.tv_sec + (double)child.ru_utime.tv_usec * 1e-6 +
           (double)child.ru_stime.tv_sec + (double)child.ru_stime.tv_usec * 1e-6;
    munmap(word, sizeof *word);
    return 0;
}

static int by_value(const void *a, const void *b)
{
    double x = *(const double *)a, y = *(const double *)b;
    return x < y ? -1 : x > y;
}

int main(int argc, char **argv)
{
    long rounds = 20000;
    int runs = 5;
    for (int i = 1; i < argc; i++) {
        char *end = NULL;
        long v = i + 1 < argc ? strtol(argv[i + 1], &end, 10) : 0;
        if (strcmp(argv[i], "-n") == 0 && end && !*end && v > 0) {
            rounds = v;
            i++;
        } else if (strcmp(argv[i], "-r") == 0 && end && !*end && v > 0 && v <= MAX_RUNS) {
            runs = (int)v;
            i++;
        } else {
            fprintf(stderr, "usage: futex_pingpong [-n ROUND_TRIPS] [-r RUNS (1..%d)]: bad '%s'\n",
                    MAX_RUNS, argv[i]);
            return 2;
        }
    }
    long cpus = sysconf(_SC_NPROCESSORS_ONLN);
    const char *names[2] = {"same CPU", "two CPUs"};
    int placements = cpus >= 2 ? 2 : 1;
    double wall[2][MAX_RUNS], cpu[2][MAX_RUNS];
    for (int k = 0; k < runs; k++)
        for (int p = 0; p < placements; p++)
            if (run(0, p, rounds, &wall[p][k], &cpu[p][k]) != 0) {
                fprintf(stderr, "futex_pingpong: a run failed\n");
                return 1;
            }
    printf("# futex hand-over between two processes: %ld round trips x %d runs, %ld CPUs online\n",
           rounds, runs, cpus);
    printf("%-9s %14s %14s %14s\n", "placement", "median_us", "fastest_us", "cpu_us");
    for (int p = 0; p < placements; p++) {
        double w[MAX_RUNS], c[MAX_RUNS];
        memcpy(w, wall[p], sizeof(double) * (size_t)runs);
        memcpy(c, cpu[p], sizeof(double) * (size_t)runs);
        qsort(w, (size_t)runs, sizeof *w, by_value);
        qsort(c, (size_t)runs, sizeof *c, by_value);
        const double per = 1e6 / (2.0 * (double)rounds); /* two hand-overs per round trip */
        printf("%-9s %14.3f %14.3f %14.3f\n", names[p], w[runs / 2] * per, w[0] * per, c[runs / 2] * per);
    }
    return 0;
}
