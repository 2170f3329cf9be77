/*
 * p2mpi_coll.h - what the collectives offer the units above them
 * (communicators, start-up): the collectives the layer itself needs.
 */
#ifndef P2MPI_COLL_H
#define P2MPI_COLL_H

#include "p2mpi_p2p.h"

#pragma GCC visibility push(hidden)

/* A barrier (MPI_Finalize), the max of one int and an allgather of n ints
 * per rank (communicator creation), on c's collective context. */
void pm_coll_barrier(pm_comm *c);
void pm_coll_allreduce_int_max(const int *mine, int *out, pm_comm *c);
void pm_coll_allgather_ints(const int *mine, int n, int *all, pm_comm *c);

#pragma GCC visibility pop

#endif /* P2MPI_COLL_H */
