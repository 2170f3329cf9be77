/*
 * scatter_linear.c - scatter: the root writes each rank's block in turn with
 * ONE chained DMA (p - 1 transfers, each notifying its rank), and copies its
 * own block locally (a DMA of the board when GPU memory is involved).
 *
 *   root 0, p = 4:  sendbuf [b0 b1 b2 b3]
 *     chain: b1 -> rank 1, b2 -> rank 2, b3 -> rank 3;   b0 -> own recvbuf
 *
 * Phase 1 (root): the chain, starting after the root so ranks are served in
 *          ring order; its own block; wait for the channel.
 * Phase 1 (others): wait for the root's notification.
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
    return coll_cost.dma_latency_s + (double)(size - 1) * (double)bytes / bw;
}

static size_t scratch(const coll_plan *p)
{
    (void)p;
    return 0;
}

static tcaresult run(coll_plan *p)
{
    if (p->rank != p->root)
        return coll_wait(p, p->root, 0);
    for (int i = 1; i < p->size; i++) {
        int q = coll_mod(p->root + i, p->size);
        COLL_TRY(coll_put(p, q, COLL_TO_RECV, 0, COLL_FROM_SEND, (size_t)q * p->bytes, p->bytes,
                          0));
    }
    /* Its own block: a GPU copy needs the board and rides the same chain; a
     * host copy is the CPU's, while the chain runs. */
    size_t own = (size_t)p->root * p->bytes;
    int board = !p->in_place && (p->send.gpu || p->recv.gpu);
    if (board)
        COLL_TRY(coll_local_copy_chained(p, COLL_FROM_RECV, 0, COLL_FROM_SEND, own, p->bytes));
    COLL_TRY(coll_start(p));
    if (!p->in_place && !board)
        COLL_TRY(coll_local_copy(p, COLL_FROM_RECV, 0, COLL_FROM_SEND, own, p->bytes));
    return coll_flush(p);
}

const coll_algorithm coll_scatter_linear = {COLL_SCATTER, "linear", eligible, cost, scratch,
                                            run, 0, 0};
