/*
 * gather_linear.c - gather: every rank writes its block straight into the
 * root's receive buffer with one DMA (notifying the root); the root copies
 * its own block with the board (p2_memcpy_d2d's path) for GPU memory or the
 * CPU for host memory, then waits for the p - 1 notifications.
 *
 *   root 0, p = 4:   rank 1: b1 -> root recvbuf[1]
 *                    rank 2: b2 -> root recvbuf[2]    root: b0 -> recvbuf[0]
 *                    rank 3: b3 -> root recvbuf[3]
 *
 * Phase 1 (others): one transfer; wait for the channel.
 * Phase 1 (root): own block; Phase 2: a wait per rank.
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
    /* The root's link carries every block. */
    return coll_cost.dma_latency_s + (double)(size - 1) * (double)bytes / bw;
}

static size_t scratch(const coll_plan *p)
{
    (void)p;
    return 0;
}

static tcaresult run(coll_plan *p)
{
    if (p->rank != p->root) {
        COLL_TRY(coll_put(p, p->root, COLL_TO_RECV, (size_t)p->rank * p->bytes, COLL_FROM_SEND,
                          0, p->bytes, 0));
        COLL_TRY(coll_start(p));
        return coll_flush(p);
    }
    /* Its own block (a GPU copy by the board) while the others arrive. */
    COLL_TRY(coll_local_copy_chained(p, COLL_FROM_RECV, (size_t)p->rank * p->bytes, COLL_FROM_SEND,
                                     0, p->bytes));
    COLL_TRY(coll_start(p));
    for (int i = 1; i < p->size; i++)
        COLL_TRY(coll_wait(p, coll_mod(p->root + i, p->size), 0));
    return coll_flush(p);
}

const coll_algorithm coll_gather_linear = {COLL_GATHER, "linear", eligible, cost, scratch,
                                           run, 0, 0};
