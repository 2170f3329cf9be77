/*
 * p2mpi_rma_mem.c - the program's memory under one-sided communication:
 * whether a range handed to MPI_Win_create or MPI_Win_attach is mapped
 * writable for its whole length, and the layer's accesses to window memory
 * under a guard that turns a fault (memory unmapped after it was handed
 * over) into an error the layer can name. Depends on nothing of the layer.
 */
#define _GNU_SOURCE
#include "p2mpi_rma.h"

#include <inttypes.h>
#include <setjmp.h>
#include <signal.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

/* Read from the kernel's list of the process's mappings, in address order with
 * their permissions. A probe would say less or cost more: write()ing the
 * range to a pipe or process_vm_readv prove it readable only (a read-only
 * mapping passes), mincore() says mapped but not writable, writing the bytes
 * back (process_vm_writev) races with the program's other threads and is
 * refused by some containers' seccomp filters, and a store under a SIGSEGV
 * handler would change the memory. The list costs one read of a small file
 * per window creation or attach (rare calls) and cannot fault. */
int pm_rma_writable(const void *p, uint64_t n)
{
    uint64_t at = (uint64_t)(uintptr_t)p, end;
    if (!n)
        return 1;
    if (__builtin_add_overflow(at, n, &end))
        return 0;
    FILE *f = fopen("/proc/self/maps", "re");
    if (!f)
        return 1; /* no procfs: nothing to tell by, as before the check */
    char *line = NULL;
    size_t cap = 0;
    while (at < end && getline(&line, &cap, f) > 0) {
        uint64_t lo, hi;
        char perm[5];
        if (sscanf(line, "%" SCNx64 "-%" SCNx64 " %4s", &lo, &hi, perm) != 3 || hi <= at)
            continue;
        if (lo > at || perm[1] != 'w')
            break; /* a hole, or a mapping the process cannot write */
        at = hi;
    }
    free(line);
    fclose(f);
    return at >= end;
}

/* The access under guard: a fault there (memory the program unmapped after
 * handing it over) jumps back instead of killing the process, so the layer
 * can name the window and address. The handler is installed around each
 * guarded access only and the program's own put back after it, so the
 * program's SIGSEGV handling is untouched elsewhere; a fault of another
 * thread meanwhile goes to the program's handler (guard_on is per thread). */
static __thread sigjmp_buf guard_env;
static __thread volatile sig_atomic_t guard_on;
static struct sigaction guard_prev[2];

static void guard_fault(int sig, siginfo_t *si, void *uc)
{
    (void)si;
    (void)uc;
    if (guard_on)
        siglongjmp(guard_env, sig);
    /* not ours: the program's disposition again, and the access re-runs into it */
    sigaction(sig, &guard_prev[sig == SIGBUS], NULL);
}

int pm_rma_guarded(void (*fn)(void *), void *arg)
{
    struct sigaction sa;
    memset(&sa, 0, sizeof sa);
    sa.sa_sigaction = guard_fault;
    sa.sa_flags = SA_SIGINFO;
    sigemptyset(&sa.sa_mask);
    sigaction(SIGSEGV, &sa, &guard_prev[0]);
    sigaction(SIGBUS, &sa, &guard_prev[1]);
    int sig = sigsetjmp(guard_env, 1);
    if (!sig) {
        guard_on = 1;
        fn(arg);
    }
    guard_on = 0;
    sigaction(SIGSEGV, &guard_prev[0], NULL);
    sigaction(SIGBUS, &guard_prev[1], NULL);
    return sig;
}
