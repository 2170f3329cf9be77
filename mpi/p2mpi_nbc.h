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

#pragma GCC visibility pop

#endif /* P2MPI_NBC_H */
