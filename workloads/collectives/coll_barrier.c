/* coll_barrier.c - barrier: no data (one row, size 0). */
#include "colls.h"

static size_t none(const cb_args *a) { (void)a; return 0; }
static tcaresult init(const cb_args *a, p2_request_t *req)
{
    (void)a;
    return p2_barrier_init(P2_COMM_WORLD, req);
}
static void fill(const cb_args *a, int it) { (void)a, (void)it; }
static long long wrong(const cb_args *a, int it) { (void)a, (void)it; return 0; }
/* No data (count 0): both bandwidths 0, by the formula of bcast. */
static void bw(size_t count, size_t es, double sec, int ranks, double *algbw, double *busbw)
{
    (void)ranks;
    *algbw = cb_algbw((double)count * (double)es, sec);
    *busbw = *algbw;
}
#ifdef CB_HAVE_MPI
static int run_mpi(const cb_args *a)
{
    (void)a;
    return MPI_Barrier(MPI_COMM_WORLD);
}
#endif
const cb_coll cb_barrier = {"barrier", "P2_COLL_BARRIER", none, none, init, fill, wrong, bw,
                            CB_MPI_FN(run_mpi)};
