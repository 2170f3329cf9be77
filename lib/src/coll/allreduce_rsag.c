/*
 * allreduce_rsag.c - the bandwidth allreduce: a ring reduce-scatter then a
 * ring allgather (Patarasuk and Yuan). The data is cut into p chunks (the
 * first count % p one element longer); each link carries 2 (p - 1) / p of
 * the data instead of log2 p times all of it.
 *
 *   p = 3, chunks A B C:
 *   reduce-scatter  step 0: r sends chunk r to r+1, which reduces it in
 *                   step 1: r sends chunk r-1 (now partial) to r+1
 *                   -> rank r holds the full chunk r+1
 *   allgather       step 0: r sends chunk r+1 to r+1; step 1: forwards
 *
 * Phase 0: recvbuf = sendbuf (unless in place).
 * Phase 1 (s = 0 .. p-2): chunk r-s -> scratch rs[s] of r+1; wait rs[s] from
 *          r-1, recvbuf[chunk r-1-s] op= rs[s].
 * Phase 2 (s = 0 .. p-2): chunk r+1-s (from recvbuf at s = 0, else ag[s-1])
 *          -> scratch ag[s] of r+1; wait ag[s], copy it to recvbuf[chunk r-s].
 * The allgather lands in scratch, not in the peer's recvbuf: the peer may
 * still be reducing that chunk of its recvbuf in phase 1.
 */
#include "coll.h"

static size_t chunk_count(const coll_plan *p, int c)
{
    return p->count / (size_t)p->size + ((size_t)c < p->count % (size_t)p->size);
}

static size_t chunk_first(const coll_plan *p, int c)
{
    size_t base = p->count / (size_t)p->size, extra = p->count % (size_t)p->size;
    return (size_t)c * base + ((size_t)c < extra ? (size_t)c : extra);
}

static size_t slot(const coll_plan *p)
{
    return (chunk_count(p, 0) * p->esize + 63u) / 64u * 64u;
}

static int eligible(const coll_plan *p)
{
    (void)p;
    return 1;
}

static double cost(int size, size_t bytes, int gpu)
{
    double bw = gpu ? coll_cost.dma_gpu_Bps : coll_cost.dma_cpu_Bps;
    double chunk = (double)bytes / size;
    double red = gpu ? coll_cost.gpu_kernel_s + chunk / coll_cost.reduce_gpu_Bps
                     : chunk / coll_cost.reduce_cpu_Bps;
    return (double)(size - 1) *
           (2.0 * (coll_cost.dma_latency_s + coll_step_bytes_s(1, size, COLL_ADD, chunk, bw)) +
            red + chunk / coll_cost.memcpy_Bps);
}

static size_t scratch(const coll_plan *p)
{
    return 2u * (size_t)(p->size - 1) * slot(p);
}

static tcaresult run(coll_plan *p)
{
    int n = p->size, r = p->rank, next = coll_mod(r + 1, n), prev = coll_mod(r - 1, n);
    size_t e = p->esize, sl = slot(p), ag = (size_t)(n - 1) * sl;
    COLL_TRY(coll_local_copy(p, COLL_FROM_RECV, 0, COLL_FROM_SEND, 0, p->bytes));
    /* Phase 1: reduce-scatter. */
    for (int s = 0; s < n - 1; s++) {
        int c = coll_mod(r - s, n), in = coll_mod(r - 1 - s, n);
        COLL_TRY(coll_put(p, next, COLL_TO_SCRATCH, (size_t)s * sl, COLL_FROM_RECV,
                          chunk_first(p, c) * e, chunk_count(p, c) * e, s));
        COLL_TRY(coll_start(p));
        if (chunk_count(p, in))
            COLL_TRY(coll_wait(p, prev, s));
        COLL_TRY(coll_reduce_local(p, COLL_FROM_RECV, chunk_first(p, in) * e, COLL_FROM_SCRATCH,
                                   (size_t)s * sl, chunk_count(p, in)));
    }
    /* Phase 2: allgather through scratch. */
    for (int s = 0; s < n - 1; s++) {
        int c = coll_mod(r + 1 - s, n), in = coll_mod(r - s, n);
        if (s == 0)
            COLL_TRY(coll_put(p, next, COLL_TO_SCRATCH, ag, COLL_FROM_RECV,
                              chunk_first(p, c) * e, chunk_count(p, c) * e, 64));
        else
            COLL_TRY(coll_put(p, next, COLL_TO_SCRATCH, ag + (size_t)s * sl, COLL_FROM_SCRATCH,
                              ag + (size_t)(s - 1) * sl, chunk_count(p, c) * e, 64 + s));
        COLL_TRY(coll_start(p));
        if (chunk_count(p, in))
            COLL_TRY(coll_wait(p, prev, 64 + s));
        COLL_TRY(coll_local_copy(p, COLL_FROM_RECV, chunk_first(p, in) * e, COLL_FROM_SCRATCH,
                                 ag + (size_t)s * sl, chunk_count(p, in) * e));
    }
    return coll_flush(p);
}

const coll_algorithm coll_allreduce_rsag = {COLL_ALLREDUCE, "rsag", eligible, cost, scratch,
                                            run, 0, 0};
