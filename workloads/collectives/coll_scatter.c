/* coll_scatter.c - scatter from the root: size * count in at the root, count out. */
#include "colls.h"

static size_t one(const cb_args *a) { return a->count; }
static size_t all(const cb_args *a) { return a->count * (size_t)a->size; }
static tcaresult init(const cb_args *a, p2_request_t *req)
{
    return p2_scatter_init(a->send, a->recv, a->count, a->type, a->root, P2_COMM_WORLD, req);
}
static void fill(const cb_args *a, int it)
{
    for (int q = 0; a->rank == a->root && q < a->size; q++)
        for (size_t i = 0; i < a->count; i++)
            cb_store(a->send, (size_t)q * a->count + i, a->type, cb_value(q, i, it));
}
static long long wrong(const cb_args *a, int it)
{
    long long w = 0;
    for (size_t i = 0; i < a->count; i++)
        w += cb_load(a->recv, i, a->type) != cb_value(a->rank, i, it);
    return w;
}
/* nccl-tests' ScatterGetBw: algbw of the gathered size (ranks x count elements),
 * busbw = algbw x (n-1)/n. */
static void bw(size_t count, size_t es, double sec, int ranks, double *algbw, double *busbw)
{
    *algbw = cb_algbw((double)(count * (size_t)ranks) * (double)es, sec);
    *busbw = *algbw * ((double)(ranks - 1) / ranks);
}
#ifdef CB_HAVE_MPI
static int run_mpi(const cb_args *a)
{
    return MPI_Scatter(a->send, (int)a->count, cb_mpi_type(a->type), a->recv, (int)a->count,
                       cb_mpi_type(a->type), a->root, MPI_COMM_WORLD);
}
#endif
const cb_coll cb_scatter = {"scatter", "P2_COLL_SCATTER", all, one, init, fill, wrong, bw,
                            CB_MPI_FN(run_mpi)};
