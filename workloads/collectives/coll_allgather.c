/* coll_allgather.c - allgather: count elements in, size * count out; bus
 * bandwidth (n-1)/n of the algorithm bandwidth of the gathered size. */
#include "colls.h"

static size_t one(const cb_args *a) { return a->count; }
static size_t all(const cb_args *a) { return a->count * (size_t)a->size; }
static tcaresult init(const cb_args *a, p2_request_t *req)
{
    return p2_allgather_init(a->send, a->recv, a->count, a->type, P2_COMM_WORLD, req);
}
static void fill(const cb_args *a, int it)
{
    for (size_t i = 0; i < a->count; i++)
        cb_store(a->send, i, a->type, cb_value(a->rank, i, it));
}
static long long wrong(const cb_args *a, int it)
{
    long long w = 0;
    for (int q = 0; q < a->size; q++)
        for (size_t i = 0; i < a->count; i++)
            w += cb_load(a->recv, (size_t)q * a->count + i, a->type) != cb_value(q, i, it);
    return w;
}
/* nccl-tests' AllGatherGetBw: algbw of the gathered size (ranks x count elements),
 * busbw = algbw x (n-1)/n. */
static void bw(size_t count, size_t es, double sec, int ranks, double *algbw, double *busbw)
{
    *algbw = cb_algbw((double)(count * (size_t)ranks) * (double)es, sec);
    *busbw = *algbw * ((double)(ranks - 1) / ranks);
}
#ifdef CB_HAVE_MPI
static int run_mpi(const cb_args *a)
{
    return MPI_Allgather(a->send, (int)a->count, cb_mpi_type(a->type), a->recv, (int)a->count,
                         cb_mpi_type(a->type), MPI_COMM_WORLD);
}
#endif
const cb_coll cb_allgather = {"allgather", "P2_COLL_ALLGATHER", one, all, init, fill, wrong, bw,
                              CB_MPI_FN(run_mpi)};
