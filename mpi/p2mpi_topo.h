/*
 * p2mpi_topo.h - what the process topologies (p2mpi_topo.c) offer the units
 * above them (the neighbourhood collectives): a communicator's topology and
 * this rank's neighbours in it.
 */
#ifndef P2MPI_TOPO_H
#define P2MPI_TOPO_H

#include "p2mpi_comm.h"

#pragma GCC visibility push(hidden)

/* A communicator's topology, one block (pm_comm.topo, topo_bytes long):
 *   MPI_CART        n1 dimensions: v = dims[n1], periods[n1]
 *   MPI_GRAPH       n1 nodes, n2 edges: v = index[n1], edges[n2]
 *   MPI_DIST_GRAPH  n1 sources, n2 destinations: v = sources[n1],
 *                   source weights[n1], destinations[n2], weights[n2]
 *                   (weighted: whether weights were given) */
typedef struct pm_topo {
    int kind;
    int n1, n2;
    int weighted;
    int v[];
} pm_topo;

/* This rank's neighbours in c's topology, in MPI's order (comm ranks,
 * malloc'd): the in-neighbours (sources) and the out-neighbours
 * (destinations). A Cartesian topology's are the two neighbours of each
 * dimension, the negative direction first, MPI_PROC_NULL where there is
 * none; *cart is then 1: block s sent lands in block s ^ 1 at the receiver
 * (MPI-4.0's errata for periodic dimensions of one or two processes), else
 * 0: the k-th edge from a process matches the k-th edge to it. The job ends,
 * naming `call`, if c has no topology (MPI_ERR_TOPOLOGY). */
void pm_topo_neighbors(pm_comm *c, const char *call, int *nin, int **in, int *nout, int **out,
                       int *cart);

#pragma GCC visibility pop

#endif /* P2MPI_TOPO_H */
