/*
 * allgather_recursive_doubling.c - allgather by recursive doubling (p a power
 * of two): at step k rank r exchanges with partner r ^ 2^k the 2^k blocks it
 * holds (the aligned group of 2^k blocks containing its own), writing them at
 * their place in the partner's recvbuf. Data received at one step is
 * forwarded at the next, so there is no single chain: one start and one wait
 * per step.
 *
 *   p = 4:            step 0 (^1)          step 1 (^2)
 *     rank 0 holds    [0]      -> 1        [0 1]  -> 2
 *     rank 1 holds    [1]      -> 0        [0 1]  -> 3
 *     rank 2 holds    [2]      -> 3        [2 3]  -> 0
 *     rank 3 holds    [3]      -> 2        [2 3]  -> 1
 *
 * Phase 0: own block into recvbuf (the board's copy for GPU memory).
 * Phase k+1: put the group to the partner, start, wait for its group.
 */
#include "coll.h"

static int eligible(const coll_plan *p)
{
    return coll_is_pow2(p->size);
}

static double cost(int size, size_t bytes, int gpu)
{
    double bw = gpu ? coll_cost.dma_gpu_Bps : coll_cost.dma_cpu_Bps;
    /* Step k moves 2^k blocks to the rank 2^k away (coll_share). */
    double t = 0;
    for (int d = 1; d < size; d *= 2)
        t += coll_cost.dma_latency_s + coll_step_bytes_s(d, size, COLL_XOR, (double)d * (double)bytes, bw);
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
    /* Own block first, in the first step's chain (which sends it on). */
    COLL_TRY(coll_local_copy_chained(p, COLL_FROM_RECV, (size_t)p->rank * b, COLL_FROM_SEND, 0, b));
    for (int k = 0; (1 << k) < p->size; k++) {
        int d = 1 << k, partner = p->rank ^ d;
        size_t mine = (size_t)(p->rank & ~(d - 1)) * b, theirs = (size_t)(partner & ~(d - 1)) * b;
        (void)theirs;
        COLL_TRY(coll_put(p, partner, COLL_TO_RECV, mine, COLL_FROM_RECV, mine, (size_t)d * b, k));
        COLL_TRY(coll_start(p));
        COLL_TRY(coll_wait(p, partner, k));
    }
    COLL_TRY(coll_start(p)); /* one rank: the own block's copy alone */
    return coll_flush(p);
}

const coll_algorithm coll_allgather_recursive_doubling = {
    COLL_ALLGATHER, "recursive_doubling", eligible, cost, scratch, run, 0, 0};
