/* coll_allreduce.c - allreduce: count elements in and out on every rank;
 * bus bandwidth 2(n-1)/n of the algorithm bandwidth (nccl-tests). */
#include "colls.h"

static size_t one(const cb_args *a) { return a->count; }
static tcaresult init(const cb_args *a, p2_request_t *req)
{
    return p2_allreduce_init(a->send, a->recv, a->count, a->type, a->op, P2_COMM_WORLD, req);
}
static void fill(const cb_args *a, int it)
{
    for (size_t i = 0; i < a->count; i++)
        cb_store(a->send, i, a->type, cb_value(a->rank, i, it));
}
static long long wrong(const cb_args *a, int it)
{
    long long w = 0;
    for (size_t i = 0; i < a->count; i++)
        w += cb_load(a->recv, i, a->type) !=
             cb_typed(cb_reduced(a->size, i, it, a->op), a->type);
    return w;
}
/* nccl-tests' AllReduceGetBw: algbw of count elements, busbw = algbw x 2(n-1)/n. */
static void bw(size_t count, size_t es, double sec, int ranks, double *algbw, double *busbw)
{
    *algbw = cb_algbw((double)count * (double)es, sec);
    *busbw = *algbw * (2.0 * (ranks - 1) / ranks);
}
#ifdef CB_HAVE_MPI
static int run_mpi(const cb_args *a)
{
    return MPI_Allreduce(a->send, a->recv, (int)a->count, cb_mpi_type(a->type),
                         cb_mpi_op(a->op), MPI_COMM_WORLD);
}
#endif
const cb_coll cb_allreduce = {"allreduce", "P2_COLL_ALLREDUCE", one, one, init, fill, wrong, bw,
                              CB_MPI_FN(run_mpi)};
