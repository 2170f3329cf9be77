/*
 * p2mpi_nbc.h - what the nonblocking collectives (p2mpi_nbc.c) offer the
 * units above them (start-up and shutdown).
 */
#ifndef P2MPI_NBC_H
#define P2MPI_NBC_H

#include "p2mpi_coll.h"

#pragma GCC visibility push(hidden)

/* Runs every nonblocking collective still in flight to its end (MPI_Finalize:
 * a program that never waited for one). */
void pm_nbc_drain(void);
/* Starts fn(arg) as a nonblocking collective named `name` on c, as the
 * calls of p2mpi_nbc.c start the blocking calls' bodies: a coroutine with a
 * context of its own; the request in *req. arg is freed (free) when fn has
 * returned. For the collectives of the units above (the neighbourhood
 * collectives, MPI_Ialltoallw). */
int pm_nbc_start(const char *name, pm_comm *c, void (*fn)(void *), void *arg, MPI_Request *req);

#pragma GCC visibility pop

#endif /* P2MPI_NBC_H */
