/*
 * allgather_ring.c - allgather around a ring: p - 1 steps; at step s rank r
 * writes block (r - s) mod p to rank r + 1 and receives block (r - 1 - s)
 * mod p from rank r - 1, which it forwards at the next step. Every link of
 * the ring carries (p - 1) blocks: bandwidth-optimal, but p - 1 latencies.
 *
 *   p = 4, step 0: 0:[0]->1  1:[1]->2  2:[2]->3  3:[3]->0
 *          step 1: 0:[3]->1  1:[0]->2  2:[1]->3  3:[2]->0
 *          step 2: 0:[2]->1  1:[3]->2  2:[0]->3  3:[1]->0
 *
 * Phase 0: own block into recvbuf. Phase s+1: put, start, wait.
 */
#include "coll.h"

static int eligible(const coll_plan *p)
{
    (void)p;
    return 1;
}

static double cost(int size, size_t bytes, int gpu)
{
    double bw = gpu ? coll_cost.dma_gpu_Bps : coll_cost.dma_cpu_Bps;
    /* Every step writes one block to the next rank (coll_share: the routes
     * between rank-order neighbours depend on the mapping). */
    return (double)(size - 1) *
           (coll_cost.dma_latency_s + coll_step_bytes_s(1, size, COLL_ADD, (double)bytes, bw));
}

static size_t scratch(const coll_plan *p)
{
    (void)p;
    return 0;
}

static tcaresult run(coll_plan *p)
{
    size_t b = p->bytes;
    int n = p->size, next = coll_mod(p->rank + 1, n), prev = coll_mod(p->rank - 1, n);
    /* Own block first, in the first step's chain (which sends it on). */
    COLL_TRY(coll_local_copy_chained(p, COLL_FROM_RECV, (size_t)p->rank * b, COLL_FROM_SEND, 0, b));
    for (int s = 0; s < n - 1; s++) {
        size_t off = (size_t)coll_mod(p->rank - s, n) * b;
        COLL_TRY(coll_put(p, next, COLL_TO_RECV, off, COLL_FROM_RECV, off, b, s));
        COLL_TRY(coll_start(p));
        COLL_TRY(coll_wait(p, prev, s));
    }
    COLL_TRY(coll_start(p)); /* one rank: the own block's copy alone */
    return coll_flush(p);
}

const coll_algorithm coll_allgather_ring = {COLL_ALLGATHER, "ring", eligible, cost, scratch,
                                            run, 0, 0};
