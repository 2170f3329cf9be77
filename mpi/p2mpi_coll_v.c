/*
 * p2mpi_coll_v.c - the v-variants of the MPI collective calls:
 * MPI_Gatherv and _Scatterv (linear), _Allgatherv (ring), _Alltoallv
 * (isend/irecv). Depends on p2mpi_coll_base.c and the units below it.
 */
#define _GNU_SOURCE
#include "p2mpi_coll_internal.h"

#include <stdlib.h>

/* ---- v-variants ---------------------------------------------------------------------- */

void pm_coll_gatherv(const void *send, int scount, MPI_Datatype stype, void *recv,
                     const int rcounts[], const int displs[], MPI_Datatype rtype, int root,
                     pm_comm *c)
{
    if (c->rank != root || send != MPI_IN_PLACE)
        pm_need_count(scount, "sendcount");
    if (c->rank == root)
        pm_need_counts(rcounts, c->size, "recvcounts");
    check_root(root, c);
    sig_set(PM_SIG_GATHERV, root, MPI_DATATYPE_NULL, 0, MPI_OP_NULL);
    if (c->rank != root) {
        c_send(send, scount, stype, root, TAG, c, 1);
        return;
    }
    MPI_Request *r = xmalloc(sizeof(MPI_Request) * (size_t)c->size);
    for (int i = 0; i < c->size; i++) {
        void *dst = at(recv, rtype, (size_t)displs[i]);
        if (i == root) {
            r[i] = MPI_REQUEST_NULL;
            if (send != MPI_IN_PLACE)
                pm_local_copy(send, scount, stype, dst, rcounts[i], rtype);
        } else {
            pm_irecv(dst, rcounts[i], rtype, i, TAG, c, 1, &r[i]);
        }
    }
    c_waitall(c->size, r, MPI_STATUSES_IGNORE);
    free(r);
}

int MPI_Gatherv(const void *send, int scount, MPI_Datatype stype, void *recv,
                const int rcounts[], const int displs[], MPI_Datatype rtype, int root,
                MPI_Comm comm)
{
    BEGIN("MPI_Gatherv");
    pm_coll_gatherv(send, scount, stype, recv, rcounts, displs, rtype, root, c);
    END();
}

void pm_coll_scatterv(const void *send, const int scounts[], const int displs[], MPI_Datatype stype,
                      void *recv, int rcount, MPI_Datatype rtype, int root, pm_comm *c)
{
    if (c->rank == root)
        pm_need_counts(scounts, c->size, "sendcounts");
    if (c->rank != root || recv != MPI_IN_PLACE)
        pm_need_count(rcount, "recvcount");
    check_root(root, c);
    sig_set(PM_SIG_SCATTERV, root, MPI_DATATYPE_NULL, 0, MPI_OP_NULL);
    if (c->rank != root) {
        c_recv(recv, rcount, rtype, root, TAG, c, 1, MPI_STATUS_IGNORE);
        return;
    }
    MPI_Request *r = xmalloc(sizeof(MPI_Request) * (size_t)c->size);
    for (int i = 0; i < c->size; i++) {
        const void *src = at(send, stype, (size_t)displs[i]);
        if (i == root) {
            r[i] = MPI_REQUEST_NULL;
            if (recv != MPI_IN_PLACE)
                pm_local_copy(src, scounts[i], stype, recv, rcount, rtype);
        } else {
            pm_isend(src, scounts[i], stype, i, TAG, c, 1, 0, &r[i]);
        }
    }
    c_waitall(c->size, r, MPI_STATUSES_IGNORE);
    free(r);
}

int MPI_Scatterv(const void *send, const int scounts[], const int displs[], MPI_Datatype stype,
                 void *recv, int rcount, MPI_Datatype rtype, int root, MPI_Comm comm)
{
    BEGIN("MPI_Scatterv");
    pm_coll_scatterv(send, scounts, displs, stype, recv, rcount, rtype, root, c);
    END();
}

void pm_coll_allgatherv(const void *send, int scount, MPI_Datatype stype, void *recv,
                        const int rcounts[], const int displs[], MPI_Datatype rtype, pm_comm *c)
{
    if (send != MPI_IN_PLACE)
        pm_need_count(scount, "sendcount");
    pm_need_counts(rcounts, c->size, "recvcounts");
    int p = c->size, rank = c->rank;
    size_t sz = pm_type_size(rtype), total = 0;
    size_t *off = xmalloc(sizeof(size_t) * (size_t)(p + 1));
    for (int i = 0; i < p; i++) {
        off[i] = total;
        total += sz * (size_t)rcounts[i];
    }
    off[p] = total;
    char *all = xmalloc(total);
    if (send == MPI_IN_PLACE)
        pack_to(at(recv, rtype, (size_t)displs[rank]), rcounts[rank], rtype, all + off[rank]);
    else
        pack_to(send, scount, stype, all + off[rank]);
    int left = (rank - 1 + p) % p, right = (rank + 1) % p;
    for (int i = 0; i < p - 1; i++) {
        int sb = (rank - i + p) % p, rb = (rank - i - 1 + p) % p;
        bsendrecv(all + off[sb], off[sb + 1] - off[sb], right, all + off[rb],
                  off[rb + 1] - off[rb], left, c);
    }
    for (int i = 0; i < p; i++)
        unpack_from(all + off[i], at(recv, rtype, (size_t)displs[i]), rcounts[i], rtype);
    free(all);
    free(off);
}

int MPI_Allgatherv(const void *send, int scount, MPI_Datatype stype, void *recv,
                   const int rcounts[], const int displs[], MPI_Datatype rtype, MPI_Comm comm)
{
    BEGIN("MPI_Allgatherv");
    pm_coll_allgatherv(send, scount, stype, recv, rcounts, displs, rtype, c);
    END();
}

void pm_coll_alltoallv(const void *send, const int scounts[], const int sdispls[],
                       MPI_Datatype stype, void *recv, const int rcounts[], const int rdispls[],
                       MPI_Datatype rtype, pm_comm *c)
{
    if (send == MPI_IN_PLACE)
        pm_fatal("MPI_IN_PLACE is not modelled for MPI_Alltoallv");
    pm_need_counts(scounts, c->size, "sendcounts");
    pm_need_counts(rcounts, c->size, "recvcounts");
    int p = c->size, rank = c->rank;
    MPI_Request *r = xmalloc(sizeof(MPI_Request) * 2 * (size_t)p);
    int k = 0;
    pm_local_copy(at(send, stype, (size_t)sdispls[rank]), scounts[rank], stype,
                  at(recv, rtype, (size_t)rdispls[rank]), rcounts[rank], rtype);
    for (int i = 1; i < p; i++) {
        int src = (rank - i + p) % p;
        pm_irecv(at(recv, rtype, (size_t)rdispls[src]), rcounts[src], rtype, src, TAG, c, 1, &r[k++]);
    }
    for (int i = 1; i < p; i++) {
        int dst = (rank + i) % p;
        pm_isend(at(send, stype, (size_t)sdispls[dst]), scounts[dst], stype, dst, TAG, c, 1, 0,
                 &r[k++]);
    }
    c_waitall(k, r, MPI_STATUSES_IGNORE);
    free(r);
}

int MPI_Alltoallv(const void *send, const int scounts[], const int sdispls[], MPI_Datatype stype,
                  void *recv, const int rcounts[], const int rdispls[], MPI_Datatype rtype,
                  MPI_Comm comm)
{
    BEGIN("MPI_Alltoallv");
    pm_coll_alltoallv(send, scounts, sdispls, stype, recv, rcounts, rdispls, rtype, c);
    END();
}

