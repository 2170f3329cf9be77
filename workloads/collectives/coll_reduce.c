/* coll_reduce.c - reduce to the root: count elements; bus bandwidth = algbw. */
#include "colls.h"

static size_t one(const cb_args *a) { return a->count; }
static tcaresult init(const cb_args *a, p2_request_t *req)
{
    return p2_reduce_init(a->send, a->recv, a->count, a->type, a->op, a->root, P2_COMM_WORLD, req);
}
static void fill(const cb_args *a, int it)
{
    for (size_t i = 0; i < a->count; i++)
        cb_store(a->send, i, a->type, cb_value(a->rank, i, it));
}
static long long wrong(const cb_args *a, int it)
{
    long long w = 0;
    for (size_t i = 0; a->rank == a->root && i < a->count; i++)
        w += cb_load(a->recv, i, a->type) !=
             cb_typed(cb_reduced(a->size, i, it, a->op), a->type);
    return w;
}
/* nccl-tests' ReduceGetBw: algbw of count elements, busbw = algbw. */
static void bw(size_t count, size_t es, double sec, int ranks, double *algbw, double *busbw)
{
    (void)ranks;
    *algbw = cb_algbw((double)count * (double)es, sec);
    *busbw = *algbw;
}
#ifdef CB_HAVE_MPI
static int run_mpi(const cb_args *a)
{
    return MPI_Reduce(a->send, a->recv, (int)a->count, cb_mpi_type(a->type), cb_mpi_op(a->op),
                      a->root, MPI_COMM_WORLD);
}
#endif
const cb_coll cb_reduce = {"reduce", "P2_COLL_REDUCE", one, one, init, fill, wrong, bw,
                           CB_MPI_FN(run_mpi)};
