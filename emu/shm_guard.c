/*
 * shm_guard.c - see shm_guard.h. The handler only compares addresses, calls
 * mmap and stores integers; the names are copied at registration.
 */
#define _GNU_SOURCE
#include "shm_guard.h"

#include <signal.h>
#include <stdint.h>
#include <stdio.h>
#include <string.h>
#include <sys/mman.h>
#include <sys/statvfs.h>

#include "channel.h"

/* The job segment and two arenas per node. */
#define GUARD_MAX (2 * P2_JOB_MAX_RANKS + 2)

typedef struct guard {
    uintptr_t base;
    size_t bytes;
    char name[P2_JOB_NAME_MAX + 24];
} guard;

static guard guards[GUARD_MAX];
static volatile sig_atomic_t nguards;
static volatile sig_atomic_t lost = -1;

static void on_sigbus(int sig, siginfo_t *info, void *context)
{
    (void)context;
    uintptr_t at = (uintptr_t)info->si_addr;
    for (int i = 0; i < nguards; i++) {
        if (at < guards[i].base || at - guards[i].base >= guards[i].bytes)
            continue;
        void *m = mmap((void *)guards[i].base, guards[i].bytes, PROT_READ | PROT_WRITE,
                       MAP_PRIVATE | MAP_ANONYMOUS | MAP_FIXED, -1, 0);
        if (m == MAP_FAILED)
            break;
        if (lost < 0)
            lost = i;
        return; /* the access is retried on the zero pages */
    }
    /* Not ours: die of it as if no handler were installed. */
    signal(sig, SIG_DFL);
}

int p2_shm_guard(void *base, size_t bytes, const char *name)
{
    if (nguards == GUARD_MAX)
        return -1;
    if (nguards == 0) {
        struct sigaction sa;
        memset(&sa, 0, sizeof sa);
        sa.sa_sigaction = on_sigbus;
        sa.sa_flags = SA_SIGINFO;
        sigemptyset(&sa.sa_mask);
        sigaction(SIGBUS, &sa, NULL);
    }
    guard *g = &guards[nguards];
    g->base = (uintptr_t)base;
    g->bytes = bytes;
    snprintf(g->name, sizeof g->name, "%s", name);
    __atomic_signal_fence(__ATOMIC_SEQ_CST); /* the entry is whole before it counts */
    nguards = nguards + 1;
    return 0;
}

const char *p2_shm_guard_lost(void)
{
    int i = lost;
    return i < 0 ? NULL : guards[i].name;
}

unsigned long long p2_shm_size(void)
{
    struct statvfs fs;
    if (statvfs("/dev/shm", &fs) != 0)
        return 0;
    return (unsigned long long)fs.f_blocks * fs.f_frsize;
}

int p2_shm_full(char *why, size_t whylen)
{
    struct statvfs fs;
    if (statvfs("/dev/shm", &fs) != 0)
        return 0;
    const unsigned long long avail = (unsigned long long)fs.f_bavail * fs.f_frsize;
    const unsigned long long size = (unsigned long long)fs.f_blocks * fs.f_frsize;
    /* A fault wants one page; what is left after it is less than a few. */
    if (avail >= (1ull << 20))
        return 0;
    snprintf(why, whylen, "/dev/shm is full (%llu KiB free of %llu MiB), so a page of the job's "
                          "memory could not be had: give it more room (docker run --shm-size) or "
                          "the nodes less memory (host_memory_bytes, gpu_memory_bytes in --params)",
             avail >> 10, size >> 20);
    return 1;
}
