/* coll_bcast.c - broadcast from the root: count elements; busbw = algbw. */
#include "colls.h"

static size_t one(const cb_args *a) { return a->count; }
static tcaresult init(const cb_args *a, p2_request_t *req)
{
    return p2_bcast_init(a->recv, a->count, a->type, a->root, P2_COMM_WORLD, req);
}
static void fill(const cb_args *a, int it)
{
    for (size_t i = 0; i < a->count; i++)
        cb_store(a->recv, i, a->type, a->rank == a->root ? cb_value(a->root, i, it) : 0);
}
static long long wrong(const cb_args *a, int it)
{
    long long w = 0;
    for (size_t i = 0; i < a->count; i++)
        w += cb_load(a->recv, i, a->type) != cb_value(a->root, i, it);
    return w;
}
/* nccl-tests' BroadcastGetBw: algbw of count elements, busbw = algbw. */
static void bw(size_t count, size_t es, double sec, int ranks, double *algbw, double *busbw)
{
    (void)ranks;
    *algbw = cb_algbw((double)count * (double)es, sec);
    *busbw = *algbw;
}
#ifdef CB_HAVE_MPI
static int run_mpi(const cb_args *a)
{
    return MPI_Bcast(a->recv, (int)a->count, cb_mpi_type(a->type), a->root, MPI_COMM_WORLD);
}
#endif
const cb_coll cb_bcast = {"bcast", "P2_COLL_BCAST", one, one, init, fill, wrong, bw,
                          CB_MPI_FN(run_mpi)};
