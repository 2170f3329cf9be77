/*
 * p2mpi_coro.h - what the coroutine unit (p2mpi_coro.c) offers the units
 * above it: a function run on a stack of its own that can stop where it
 * would block (pm_coro_yield) and be resumed later, in the same thread. The
 * nonblocking collectives (p2mpi_nbc.c) run the blocking collectives'
 * algorithms in one each; point-to-point (p2mpi_p2p.c) yields where the
 * algorithm would wait.
 */
#ifndef P2MPI_CORO_H
#define P2MPI_CORO_H

#include "p2mpi_core.h"

#pragma GCC visibility push(hidden)

typedef struct pm_coro pm_coro;

/* A coroutine that will run fn(arg) from its first resume. */
pm_coro *pm_coro_new(void (*fn)(void *), void *arg);
/* Runs co until it yields or fn returns; returns 1 once fn has returned.
 * Never from inside a coroutine. */
int pm_coro_resume(pm_coro *co);
/* Inside a coroutine: back to the resume that ran it. */
void pm_coro_yield(void);
/* The coroutine running now, NULL outside any. */
pm_coro *pm_coro_self(void);
/* A coroutine whose function has returned: its stack goes back to the pool. */
void pm_coro_free(pm_coro *co);

#pragma GCC visibility pop

#endif /* P2MPI_CORO_H */
