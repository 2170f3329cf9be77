/*
 * p2mpi_coll.h - what the collectives offer the units above them
 * (nonblocking collectives, communicators, start-up): the collectives the
 * layer itself needs, and the bodies of the MPI collective calls.
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

/* The MPI collective calls on communicator c without their bracket (the
 * call's name, its end: the calls are these inside BEGIN and END): the
 * algorithm the blocking call selects, GPU buffers staged as it stages
 * them. The nonblocking collectives run these in their coroutines. */
void pm_coll_bcast(void *buf, int count, MPI_Datatype type, int root, pm_comm *c);
void pm_coll_reduce(const void *send, void *recv, int count, MPI_Datatype type, MPI_Op op,
                    int root, pm_comm *c);
void pm_coll_allreduce(const void *send, void *recv, int count, MPI_Datatype type, MPI_Op op,
                       pm_comm *c);
void pm_coll_gather(const void *send, int scount, MPI_Datatype stype, void *recv, int rcount,
                    MPI_Datatype rtype, int root, pm_comm *c);
void pm_coll_scatter(const void *send, int scount, MPI_Datatype stype, void *recv, int rcount,
                     MPI_Datatype rtype, int root, pm_comm *c);
void pm_coll_allgather(const void *send, int scount, MPI_Datatype stype, void *recv, int rcount,
                       MPI_Datatype rtype, pm_comm *c);
void pm_coll_alltoall(const void *send, int scount, MPI_Datatype stype, void *recv, int rcount,
                      MPI_Datatype rtype, pm_comm *c);
void pm_coll_gatherv(const void *send, int scount, MPI_Datatype stype, void *recv,
                     const int rcounts[], const int displs[], MPI_Datatype rtype, int root,
                     pm_comm *c);
void pm_coll_scatterv(const void *send, const int scounts[], const int displs[],
                      MPI_Datatype stype, void *recv, int rcount, MPI_Datatype rtype, int root,
                      pm_comm *c);
void pm_coll_allgatherv(const void *send, int scount, MPI_Datatype stype, void *recv,
                        const int rcounts[], const int displs[], MPI_Datatype rtype, pm_comm *c);
void pm_coll_alltoallv(const void *send, const int scounts[], const int sdispls[],
                       MPI_Datatype stype, void *recv, const int rcounts[], const int rdispls[],
                       MPI_Datatype rtype, pm_comm *c);
void pm_coll_reduce_scatter(const void *send, void *recv, const int counts[], MPI_Datatype t,
                            MPI_Op op, pm_comm *c);
void pm_coll_reduce_scatter_block(const void *send, void *recv, int rcount, MPI_Datatype type,
                                  MPI_Op op, pm_comm *c);
/* exclusive: MPI_Exscan's */
void pm_coll_scan(const void *send, void *recv, int count, MPI_Datatype t, MPI_Op op, pm_comm *c,
                  int exclusive);
/* The GPU path's flag (p2mpi_coll_base.c) is the running collective's: a
 * nonblocking collective keeps its own across its coroutine's switches.
 * Sets it to v; returns what it was. */
int pm_coll_gpu_path_swap(int v);
/* MPI_THREAD_MULTIPLE: ends the job if a thread of this rank other than the
 * caller is inside a blocking collective on c (the nonblocking collectives'
 * start; the blocking ones check as they enter). */
void pm_coll_threads_check(pm_comm *c);

#pragma GCC visibility pop

#endif /* P2MPI_COLL_H */
