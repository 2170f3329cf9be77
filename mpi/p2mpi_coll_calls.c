/*
 * p2mpi_coll_calls.c - the MPI collective calls: MPI_Barrier, _Bcast,
 * _Reduce, _Allreduce, _Gather, _Scatter, _Allgather, _Alltoall, with
 * MVAPICH2-GDR's staging of GPU buffers around the algorithms (each call's
 * body a pm_coll_* function the nonblocking collectives run too), and
 * MPI_Reduce_local. Depends on the algorithms (p2mpi_coll_move.c,
 * p2mpi_coll_reduce.c) and the units below them.
 */
#define _GNU_SOURCE
#include "p2mpi_coll_internal.h"

#include <stdlib.h>
#include <string.h>

/* ---- The MPI calls ------------------------------------------------------------------- */

int MPI_Barrier(MPI_Comm comm)
{
    BEGIN("MPI_Barrier");
    barrier(c);
    END();
}

void pm_coll_bcast(void *buf, int count, MPI_Datatype type, int root, pm_comm *c)
{
    pm_need_count(count, "count");
    check_root(root, c);
    sig_set(PM_SIG_BCAST, root, MPI_DATATYPE_NULL, 0, MPI_OP_NULL);
    size_t n = pm_type_size(type) * (size_t)count;
    /* MVAPICH2 (naive CUDA path): every rank stages the buffer out of the
     * GPU and back in, the root too */
    int gpu = pm_gpu_buf(buf);
    gpu_path_begin(gpu);
    if (gpu)
        pm_charge_stage_d2h(n);
    char *b = xmalloc(n);
    if (c->rank == root)
        pack_to(buf, count, type, b);
    bcast_bytes(b, n, root, c);
    if (c->rank != root)
        unpack_from(b, buf, count, type);
    free(b);
    if (gpu)
        pm_charge_stage_h2d(n);
}

int MPI_Bcast(void *buf, int count, MPI_Datatype type, int root, MPI_Comm comm)
{
    BEGIN("MPI_Bcast");
    pm_coll_bcast(buf, count, type, root, c);
    END();
}

/* MPICH's (MVAPICH2 2.x's inter-node) switch to Rabenseifner's reduce
 * (MPIR_CVAR_REDUCE_SHORT_MSG_SIZE): above 2 KiB, commutative op, count >= pof2. */
#define REDUCE_SHORT 2048

/* MVAPICH2's reductions copy a GPU input and a GPU receive buffer (even one
 * about to be overwritten) to host memory first; returns whether the receive
 * buffer is GPU memory (the result then goes back). */
static int stage_reduce_inputs(const void *send, const void *recv, size_t n)
{
    int gpu_recv = pm_gpu_buf(recv);
    gpu_path_begin(gpu_recv || pm_gpu_buf(send));
    if (pm_gpu_buf(send))
        pm_charge_stage_d2h(n);
    if (gpu_recv)
        pm_charge_stage_d2h(n);
    return gpu_recv;
}

void pm_coll_reduce(const void *send, void *recv, int count, MPI_Datatype type, MPI_Op op, int root,
                    pm_comm *c)
{
    pm_need_count(count, "count");
    check_root(root, c);
    sig_set(PM_SIG_REDUCE, root, type, count, op);
    /* MVAPICH2 stages GPU buffers through host memory: the input and the
     * receive buffer (at every rank that passes one) out, the result back
     * in at the root */
    size_t n = pm_type_size(type) * (size_t)count;
    int gpu_recv = stage_reduce_inputs(send, recv, n);
    void *acc_s;
    void *acc = pm_type_buffer(type, count, &acc_s);
    pm_local_copy(send == MPI_IN_PLACE ? recv : send, count, type, acc_s, count, type);
    if (c->size > 1 && n > REDUCE_SHORT && commutative(op) && count >= pof2_below(c->size))
        reduce_rabenseifner(acc_s, count, type, op, root, c);
    else
        reduce_binomial(acc_s, count, type, op, root, c);
    if (c->rank == root)
        pm_local_copy(acc_s, count, type, recv, count, type);
    if (c->rank == root && gpu_recv)
        pm_charge_stage_h2d(n);
    free(acc);
}

int MPI_Reduce(const void *send, void *recv, int count, MPI_Datatype type, MPI_Op op, int root,
               MPI_Comm comm)
{
    BEGIN("MPI_Reduce");
    pm_coll_reduce(send, recv, count, type, op, root, c);
    END();
}

void pm_coll_allreduce(const void *send, void *recv, int count, MPI_Datatype type, MPI_Op op,
                       pm_comm *c)
{
    pm_need_count(count, "count");
    sig_set(PM_SIG_ALLREDUCE, -1, type, count, op);
    /* MVAPICH2 copies a GPU input and the GPU receive buffer (both, even
     * when the receive buffer is about to be overwritten) to host memory,
     * runs the host algorithm and copies the result back */
    size_t n = pm_type_size(type) * (size_t)count;
    int gpu_recv = stage_reduce_inputs(send, recv, n);
    /* the algorithm runs on the host copy (its staging is charged above) */
    void *host_s = recv, *host = NULL;
    if (gpu_recv) {
        host = pm_type_buffer(type, count, &host_s);
        span_copy(host_s, recv, count, type);
    }
    if (send != MPI_IN_PLACE)
        pm_local_copy(send, count, type, host_s, count, type);
    allreduce(host_s, count, type, op, c);
    if (gpu_recv) {
        span_copy(recv, host_s, count, type);
        pm_charge_stage_h2d(n);
        free(host);
    }
}

int MPI_Allreduce(const void *send, void *recv, int count, MPI_Datatype type, MPI_Op op,
                  MPI_Comm comm)
{
    BEGIN("MPI_Allreduce");
    pm_coll_allreduce(send, recv, count, type, op, c);
    END();
}

void pm_coll_gather(const void *send, int scount, MPI_Datatype stype, void *recv, int rcount,
                    MPI_Datatype rtype, int root, pm_comm *c)
{
    /* significant: the root's receive side, every other rank's send side,
     * the root's send side unless in place */
    if (c->rank != root || send != MPI_IN_PLACE)
        pm_need_count(scount, "sendcount");
    if (c->rank == root)
        pm_need_count(rcount, "recvcount");
    check_root(root, c);
    sig_set(PM_SIG_GATHER, root, MPI_DATATYPE_NULL, 0, MPI_OP_NULL);
    int is_root = c->rank == root;
    size_t blk = is_root ? pm_type_size(rtype) * (size_t)rcount : pm_type_size(stype) * (size_t)scount;
    if (blk > MV2_GATHER_NAIVE_LIMIT / (size_t)c->size) {
        /* above the naive limit: no staging, the blocks go where they are
         * (dense buffers in place; a derived type packed, uncharged) */
        gpu_path_begin(pm_gpu_buf(send) || (is_root && pm_gpu_buf(recv)));
        int in_place = send == MPI_IN_PLACE;
        int out_dense = !is_root || dense(rtype);
        char *all = !is_root ? NULL : out_dense ? recv : xmalloc(blk * (size_t)c->size);
        const char *mine;
        char *packed = NULL;
        if (in_place)
            mine = all + (size_t)root * blk;
        else if (dense(stype))
            mine = send;
        else
            pack_to(send, scount, stype, packed = xmalloc(blk)), mine = packed;
        if (in_place && !out_dense)
            pack_to(at(recv, rtype, (size_t)rcount * (size_t)root), rcount, rtype,
                    all + (size_t)root * blk);
        gather_direct(mine, blk, all, root, c);
        if (is_root && !out_dense) {
            for (int i = 0; i < c->size; i++)
                unpack_from(all + (size_t)i * blk, at(recv, rtype, (size_t)rcount * (size_t)i),
                            rcount, rtype);
            free(all);
        }
        free(packed);
        return;
    }
    /* MVAPICH2's naive CUDA gather: each rank's block leaves the GPU (the
     * root's own too, into its staged receive buffer); the root copies the
     * gathered blocks back in */
    gpu_path_begin(pm_gpu_buf(send) || (is_root && pm_gpu_buf(recv)));
    if (send == MPI_IN_PLACE ? is_root && pm_gpu_buf(recv) : pm_gpu_buf(send))
        pm_charge_stage_d2h(blk);
    int gpu_out = is_root && pm_gpu_buf(recv);
    char *mine = xmalloc(blk), *all = is_root ? xmalloc(blk * (size_t)c->size) : NULL;
    if (send == MPI_IN_PLACE)
        pack_to(at(recv, rtype, (size_t)rcount * (size_t)root), rcount, rtype, mine);
    else
        pack_to(send, scount, stype, mine);
    gather_bytes(mine, blk, all, root, c);
    if (is_root)
        for (int i = 0; i < c->size; i++)
            unpack_from(all + (size_t)i * blk, at(recv, rtype, (size_t)rcount * (size_t)i), rcount,
                        rtype);
    if (gpu_out)
        pm_charge_stage_h2d(blk * (size_t)c->size);
    free(mine);
    free(all);
}

int MPI_Gather(const void *send, int scount, MPI_Datatype stype, void *recv, int rcount,
               MPI_Datatype rtype, int root, MPI_Comm comm)
{
    BEGIN("MPI_Gather");
    pm_coll_gather(send, scount, stype, recv, rcount, rtype, root, c);
    END();
}

void pm_coll_scatter(const void *send, int scount, MPI_Datatype stype, void *recv, int rcount,
                     MPI_Datatype rtype, int root, pm_comm *c)
{
    if (c->rank == root)
        pm_need_count(scount, "sendcount");
    if (c->rank != root || recv != MPI_IN_PLACE)
        pm_need_count(rcount, "recvcount");
    check_root(root, c);
    sig_set(PM_SIG_SCATTER, root, MPI_DATATYPE_NULL, 0, MPI_OP_NULL);
    int is_root = c->rank == root;
    size_t blk = is_root ? pm_type_size(stype) * (size_t)scount : pm_type_size(rtype) * (size_t)rcount;
    if (blk > MV2_SCATTER_NAIVE_LIMIT * (size_t)c->size) {
        /* above the naive limit: no staging (as the gather above) */
        gpu_path_begin((is_root && pm_gpu_buf(send)) || pm_gpu_buf(recv));
        int in_place = is_root && recv == MPI_IN_PLACE;
        int in_dense = !is_root || dense(stype);
        const char *all = (const char *)send;
        char *packed_all = NULL, *packed = NULL;
        if (is_root && !in_dense) {
            packed_all = xmalloc(blk * (size_t)c->size);
            for (int i = 0; i < c->size; i++)
                pack_to(at(send, stype, (size_t)scount * (size_t)i), scount, stype,
                        packed_all + (size_t)i * blk);
            all = packed_all;
        }
        char *mine = in_place ? (char *)all + (size_t)root * blk
                     : dense(rtype) ? recv : (packed = xmalloc(blk));
        scatter_direct(all, blk, mine, root, c);
        if (packed)
            unpack_from(packed, recv, rcount, rtype);
        free(packed);
        free(packed_all);
        return;
    }
    /* MVAPICH2's naive CUDA scatter: the root stages all blocks out of the
     * GPU; each rank copies its block into its GPU buffer */
    gpu_path_begin((is_root && pm_gpu_buf(send)) || pm_gpu_buf(recv));
    if (is_root && pm_gpu_buf(send))
        pm_charge_stage_d2h(blk * (size_t)c->size);
    int gpu_out = !(is_root && recv == MPI_IN_PLACE) && pm_gpu_buf(recv);
    char *mine = xmalloc(blk), *all = is_root ? xmalloc(blk * (size_t)c->size) : NULL;
    if (is_root)
        for (int i = 0; i < c->size; i++)
            pack_to(at(send, stype, (size_t)scount * (size_t)i), scount, stype, all + (size_t)i * blk);
    scatter_bytes(all, blk, mine, root, c);
    if (!(is_root && recv == MPI_IN_PLACE))
        unpack_from(mine, recv, rcount, rtype);
    if (gpu_out)
        pm_charge_stage_h2d(blk);
    free(mine);
    free(all);
}

int MPI_Scatter(const void *send, int scount, MPI_Datatype stype, void *recv, int rcount,
                MPI_Datatype rtype, int root, MPI_Comm comm)
{
    BEGIN("MPI_Scatter");
    pm_coll_scatter(send, scount, stype, recv, rcount, rtype, root, c);
    END();
}

void pm_coll_allgather(const void *send, int scount, MPI_Datatype stype, void *recv, int rcount,
                       MPI_Datatype rtype, pm_comm *c)
{
    if (send != MPI_IN_PLACE)
        pm_need_count(scount, "sendcount");
    pm_need_count(rcount, "recvcount");
    size_t blk = pm_type_size(rtype) * (size_t)rcount;
    if (pm_gpu_buf(recv) && blk > MV2_ALLGATHER_NAIVE_LIMIT && dense(rtype) &&
        (send == MPI_IN_PLACE || (pm_gpu_buf(send) && dense(stype)))) {
        /* Above its staging limit MVAPICH2-GDR runs the algorithm on the
         * device buffers: the own block copied within the GPU, every step a
         * GPU-to-GPU message (the point-to-point GPU protocols). */
        gpu_path_begin(1);
        char *own = (char *)recv + (size_t)c->rank * blk;
        if (send != MPI_IN_PLACE && send != own) {
            memmove(own, send, blk);
            pm_charge_d2d(blk);
        }
        allgather_bytes((char *)recv, blk, c);
        return;
    }
    /* MVAPICH2's naive CUDA allgather: this rank's block out of the GPU,
     * the gathered blocks back in */
    gpu_path_begin(pm_gpu_buf(send) || pm_gpu_buf(recv));
    if (send == MPI_IN_PLACE ? pm_gpu_buf(recv) : pm_gpu_buf(send))
        pm_charge_stage_d2h(blk);
    char *all = xmalloc(blk * (size_t)c->size);
    if (send == MPI_IN_PLACE)
        pack_to(at(recv, rtype, (size_t)rcount * (size_t)c->rank), rcount, rtype,
                all + (size_t)c->rank * blk);
    else
        pack_to(send, scount, stype, all + (size_t)c->rank * blk);
    allgather_bytes(all, blk, c);
    for (int i = 0; i < c->size; i++)
        unpack_from(all + (size_t)i * blk, at(recv, rtype, (size_t)rcount * (size_t)i), rcount, rtype);
    if (pm_gpu_buf(recv))
        pm_charge_stage_h2d(blk * (size_t)c->size);
    free(all);
}

int MPI_Allgather(const void *send, int scount, MPI_Datatype stype, void *recv, int rcount,
                  MPI_Datatype rtype, MPI_Comm comm)
{
    BEGIN("MPI_Allgather");
    pm_coll_allgather(send, scount, stype, recv, rcount, rtype, c);
    END();
}

void pm_coll_alltoall(const void *send, int scount, MPI_Datatype stype, void *recv, int rcount,
                      MPI_Datatype rtype, pm_comm *c)
{
    if (send != MPI_IN_PLACE)
        pm_need_count(scount, "sendcount");
    pm_need_count(rcount, "recvcount");
    if (send == MPI_IN_PLACE) {
        send = recv;
        scount = rcount;
        stype = rtype;
    }
    size_t blk = pm_type_size(stype) * (size_t)scount;
    if (blk != pm_type_size(rtype) * (size_t)rcount)
        pm_fatal("send and receive blocks differ in size (MPI_ERR_TRUNCATE)");
    /* MVAPICH2's naive CUDA alltoall: all blocks out of the GPU and back */
    gpu_path_begin(pm_gpu_buf(send) || pm_gpu_buf(recv));
    if (pm_gpu_buf(send))
        pm_charge_stage_d2h(blk * (size_t)c->size);
    char *sb = xmalloc(blk * (size_t)c->size), *rb = xmalloc(blk * (size_t)c->size);
    for (int i = 0; i < c->size; i++)
        pack_to(at(send, stype, (size_t)scount * (size_t)i), scount, stype, sb + (size_t)i * blk);
    alltoall_bytes(sb, rb, blk, c);
    for (int i = 0; i < c->size; i++)
        unpack_from(rb + (size_t)i * blk, at(recv, rtype, (size_t)rcount * (size_t)i), rcount, rtype);
    if (pm_gpu_buf(recv))
        pm_charge_stage_h2d(blk * (size_t)c->size);
    free(sb);
    free(rb);
}

int MPI_Alltoall(const void *send, int scount, MPI_Datatype stype, void *recv, int rcount,
                 MPI_Datatype rtype, MPI_Comm comm)
{
    BEGIN("MPI_Alltoall");
    pm_coll_alltoall(send, scount, stype, recv, rcount, rtype, c);
    END();
}

/* A local reduction (Open MPI's op through PMPI), charged as the layer
 * charges the reductions it makes on the host: n bytes at host_reduce_gbps
 * (MVAPICH2's staged GPU collectives, p2mpi_gpu.h). */
int MPI_Reduce_local(const void *in, void *inout, int count, MPI_Datatype type, MPI_Op op)
{
    CALL("MPI_Reduce_local");
    pm_need_count(count, "count");
    pm_charge_reduce(pm_type_size(type) * (size_t)count);
    int rc = PMPI_Reduce_local(in, inout, count, type, op);
    if (rc != MPI_SUCCESS)
        pm_fatal("Open MPI refused the reduction (error %d)", rc);
    RETURN(MPI_SUCCESS);
}
