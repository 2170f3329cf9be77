/*
 * allgather_bruck.c - Bruck's allgather, for any p: ceil(log2 p) steps; at
 * step k (d = 2^k) rank r holds blocks r .. r + d - 1 (mod p) and writes
 * min(d, p - d) of them to rank r - d, at their own place in its recvbuf
 * (so the final rotation of the textbook version is not needed). A range
 * that wraps past block p - 1 is two transfers of one chain.
 *
 *   p = 3:   step 0 (d 1): r sends [r]          to r - 1
 *            step 1 (d 2): r sends [r+1]        to r - 2  (min(2, 1) = 1 block)
 *            after it rank r holds r, r+1, r+2: everything.
 *
 * Phase 0: own block into recvbuf. Phase k+1: one chain (1 or 2 transfers)
 * to r - d, start, wait for r + d's.
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
    /* Step k moves min(2^k, p - 2^k) blocks to the rank 2^k away (coll_share);
     * a wrapping range costs a second descriptor. */
    double t = 0;
    for (int d = 1; d < size; d *= 2) {
        int cnt = d < size - d ? d : size - d;
        t += coll_cost.dma_latency_s + 0.05e-6 +
             coll_step_bytes_s(size - d, size, COLL_ADD, (double)cnt * (double)bytes, bw);
    }
    return t;
}

static size_t scratch(const coll_plan *p)
{
    (void)p;
    return 0;
}

static tcaresult run(coll_plan *p)
{
    size_t b = p->bytes;
    int n = p->size;
    /* Own block first, in the first step's chain (which sends it on). */
    COLL_TRY(coll_local_copy_chained(p, COLL_FROM_RECV, (size_t)p->rank * b, COLL_FROM_SEND, 0, b));
    for (int k = 0; (1 << k) < n; k++) {
        int d = 1 << k, cnt = d < n - d ? d : n - d;
        int to = coll_mod(p->rank - d, n), from = coll_mod(p->rank + d, n);
        int first = p->rank, tail = n - first; /* blocks before the wrap */
        int a = cnt < tail ? cnt : tail;
        COLL_TRY(coll_put(p, to, COLL_TO_RECV, (size_t)first * b, COLL_FROM_RECV,
                          (size_t)first * b, (size_t)a * b, k));
        if (cnt > a)
            COLL_TRY(coll_put(p, to, COLL_TO_RECV, 0, COLL_FROM_RECV, 0, (size_t)(cnt - a) * b,
                              k + 32));
        COLL_TRY(coll_start(p));
        /* From r + d: its blocks r+d .. r+d+cnt-1, one or two transfers. */
        int ftail = n - from;
        COLL_TRY(coll_wait(p, from, k));
        if (cnt > ftail)
            COLL_TRY(coll_wait(p, from, k + 32));
    }
    COLL_TRY(coll_start(p)); /* one rank: the own block's copy alone */
    return coll_flush(p);
}

const coll_algorithm coll_allgather_bruck = {COLL_ALLGATHER, "bruck", eligible, cost, scratch,
                                             run, 0, 0};
