/*
 * p2mpi_coro.c - coroutines of the MPI layer (ucontext, one thread): a
 * function on a stack of its own that yields where it would block and is
 * resumed later by the caller's progress loop. A nonblocking collective is
 * the blocking collective's algorithm run in one (p2mpi_nbc.c): each round
 * posts its nonblocking point-to-point steps and yields where the blocking
 * version would wait for them. Switching costs no simulated time. Depends on
 * p2mpi_core.c (errors) alone.
 *
 * Stacks: 1 MiB each, mapped without reserving memory (pages are touched
 * only as the algorithm goes deep: PMPI_Pack, PMPI_Reduce_local, a user
 * op's function), with a guard page below; the stacks of finished
 * coroutines are kept for the next (POOL).
 */
#define _GNU_SOURCE
#include "p2mpi_coro.h"

#include <stdlib.h>
#include <sys/mman.h>
#include <ucontext.h>
#include <unistd.h>

#define STACK_BYTES ((size_t)1 << 20)
#define POOL 16

struct pm_coro {
    ucontext_t ctx;  /* the coroutine where it stopped */
    ucontext_t back; /* the resume that runs it now */
    void *stack;
    void (*fn)(void *);
    void *arg;
    int done;
};

static pm_coro *running;
static void *pool[POOL];
static int npool;

static void *stack_take(void)
{
    if (npool)
        return pool[--npool];
    void *p = mmap(NULL, STACK_BYTES, PROT_READ | PROT_WRITE,
                   MAP_PRIVATE | MAP_ANONYMOUS | MAP_NORESERVE | MAP_STACK, -1, 0);
    if (p == MAP_FAILED)
        pm_fatal("out of memory for a nonblocking collective's stack");
    mprotect(p, (size_t)sysconf(_SC_PAGESIZE), PROT_NONE); /* overflow faults, never corrupts */
    return p;
}

/* The coroutine's first frame: fn, then back to the resume (uc_link). */
static void trampoline(void)
{
    pm_coro *co = running;
    co->fn(co->arg);
    co->done = 1;
}

pm_coro *pm_coro_new(void (*fn)(void *), void *arg)
{
    pm_coro *co = calloc(1, sizeof *co);
    if (!co)
        pm_fatal("out of memory");
    co->fn = fn;
    co->arg = arg;
    co->stack = stack_take();
    if (getcontext(&co->ctx) != 0)
        pm_fatal("getcontext failed (internal)");
    co->ctx.uc_stack.ss_sp = co->stack;
    co->ctx.uc_stack.ss_size = STACK_BYTES;
    co->ctx.uc_link = &co->back;
    makecontext(&co->ctx, trampoline, 0);
    return co;
}

int pm_coro_resume(pm_coro *co)
{
    if (running)
        pm_fatal("a coroutine resumed from inside another (internal)");
    if (co->done)
        return 1;
    running = co;
    swapcontext(&co->back, &co->ctx);
    running = NULL;
    return co->done;
}

void pm_coro_yield(void)
{
    pm_coro *co = running;
    if (!co)
        pm_fatal("a yield outside any coroutine (internal)");
    swapcontext(&co->ctx, &co->back);
}

pm_coro *pm_coro_self(void) { return running; }

void pm_coro_free(pm_coro *co)
{
    if (!co)
        return;
    if (npool < POOL)
        pool[npool++] = co->stack;
    else
        munmap(co->stack, STACK_BYTES);
    free(co);
}
