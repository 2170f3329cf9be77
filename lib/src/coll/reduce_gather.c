/*
 * reduce_gather.c - reduce as published for TCA: gather every block into the
 * root's scratch (host memory; GPU data travels GPU -> root host by DMA),
 * then reduce on the root's CPU, in rank order, into recvbuf (for a GPU
 * recvbuf the kernel's time is charged as the table's GPU reduction; in
 * emulation it is computed on the host so results stay exact).
 *
 *   root 0, p = 4:   rank q: sendbuf -> root scratch[q]   (q = 1, 2, 3)
 *                    root:   recvbuf = own; recvbuf op= scratch[1] op= ... [3]
 *
 * Phase 1 (others): one transfer, wait for the channel.
 * Phase 1 (root): copy its own block to recvbuf; Phase 2: for q = 0 .. p-1
 *          but the root, wait for q's block and reduce it in.
 * The result's order is rank order, the same on every run.
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
    double red = gpu ? coll_cost.gpu_kernel_s + (double)bytes / coll_cost.reduce_gpu_Bps
                     : (double)bytes / coll_cost.reduce_cpu_Bps;
    return coll_cost.dma_latency_s + (double)(size - 1) * ((double)bytes / bw + red);
}

static size_t scratch(const coll_plan *p)
{
    return p->rank == p->root ? (size_t)p->size * p->bytes : 0;
}

static tcaresult run(coll_plan *p)
{
    if (p->rank != p->root) {
        COLL_TRY(coll_put(p, p->root, COLL_TO_SCRATCH, (size_t)p->rank * p->bytes,
                          COLL_FROM_SEND, 0, p->bytes, 0));
        COLL_TRY(coll_start(p));
        return coll_flush(p);
    }
    COLL_TRY(coll_local_copy(p, COLL_FROM_RECV, 0, COLL_FROM_SEND, 0, p->bytes));
    for (int q = 0; q < p->size; q++) {
        if (q == p->root)
            continue;
        COLL_TRY(coll_wait(p, q, 0));
        COLL_TRY(coll_reduce_local(p, COLL_FROM_RECV, 0, COLL_FROM_SCRATCH,
                                   (size_t)q * p->bytes, p->count));
    }
    return TCA_SUCCESS;
}

const coll_algorithm coll_reduce_gather = {COLL_REDUCE, "gather", eligible, cost, scratch, run};
