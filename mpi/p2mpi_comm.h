/*
 * p2mpi_comm.h - what communicators and groups (p2mpi_comm.c) offer the
 * units above them (topologies, intercommunicators): making communicators
 * on agreed contexts, and the groups' members.
 */
#ifndef P2MPI_COMM_H
#define P2MPI_COMM_H

#include "p2mpi_coll.h"

#pragma GCC visibility push(hidden)

/* Contexts: the next free one at this rank; n pairs from ctx on taken by an
 * agreement made elsewhere (the next free one goes past them). A context id
 * every member of parent agrees on (collective over parent). */
uint32_t pm_ctx_next(void);
void pm_ctx_taken(uint32_t ctx, uint32_t n);
uint32_t pm_comm_agree_ctx(pm_comm *parent);
/* A communicator with a handle of its own, in the table: `size` members
 * world[] (taken over), this rank `rank`, context ctx. */
pm_comm *pm_comm_new(int size, int rank, int *world, uint32_t ctx);
/* Collective over p: a duplicate (attrs: with p's attributes and topology,
 * as MPI_Comm_dup; else neither); the split by (color, key), NULL for
 * MPI_UNDEFINED. */
pm_comm *pm_comm_dup(pm_comm *p, int attrs);
pm_comm *pm_comm_split(pm_comm *p, int color, int key);
/* A group handle of n world ranks (taken over); a group's world ranks (its
 * size returned). */
MPI_Group pm_group_new(int n, int *world);
int pm_group_members(MPI_Group g, const int **world);

#pragma GCC visibility pop

#endif /* P2MPI_COMM_H */
