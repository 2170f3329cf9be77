/*
 * bcast_binomial.c - broadcast down a binomial tree: the number of ranks
 * holding the data doubles each step (ceil(log2 p) steps). Each sender, once
 * its data has arrived, starts ONE chained DMA that writes the buffer to all
 * of its children, farthest subtree first, each transfer notifying its child.
 *
 *   p = 8, root 0 (relative ranks):
 *     0: chain [->4, ->2, ->1]
 *     4: chain [->6, ->5]        2: chain [->3]       6: chain [->7]
 *
 * Phase 1: wait for the parent's notification (not the root).
 * Phase 2: one chain to every child (relative rank v + 2^j, 2^j below v's
 *          lowest set bit), then wait for the channel.
 * Zero-copy: data goes straight from each rank's buffer into its children's.
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
    return coll_ceil_log2(size) * (coll_cost.dma_latency_s + (double)bytes / bw);
}

static size_t scratch(const coll_plan *p)
{
    (void)p;
    return 0;
}

static tcaresult run(coll_plan *p)
{
    int n = p->size, v = coll_mod(p->rank - p->root, n);
    int mask = 1;
    /* Phase 1: the parent is v with its lowest set bit cleared. */
    while (mask < n) {
        if (v & mask) {
            COLL_TRY(coll_wait(p, coll_mod(v - mask + p->root, n), 0));
            break;
        }
        mask <<= 1;
    }
    /* Phase 2: children v + mask/2, v + mask/4, ..., in one chain. */
    for (mask >>= 1; mask > 0; mask >>= 1)
        if (v + mask < n)
            COLL_TRY(coll_put(p, coll_mod(v + mask + p->root, n), COLL_TO_RECV, 0,
                              COLL_FROM_RECV, 0, p->bytes, 0));
    COLL_TRY(coll_start(p));
    return coll_flush(p);
}

const coll_algorithm coll_bcast_binomial = {COLL_BCAST, "binomial", eligible, cost, scratch,
                                            run, 0, 0};
