/*
 * reduce_gather.c - reduce as published for TCA: gather every block to the
 * root, then reduce there. Two algorithms, by where the reduction runs:
 *
 * "gather" (CPU): the blocks land in the root's host scratch (GPU data
 *   travels GPU -> root host memory by DMA); the root's CPU reduces them in
 *   rank order; a GPU result goes back to the GPU by a DMA of the board.
 *   With host buffers at the root the reduction runs in recvbuf directly.
 *
 *   root 0, p = 4:   rank q: sendbuf -> root scratch[q]   (q = 1, 2, 3)
 *                    root:   acc = own; acc op= scratch[1] op= ... [3]
 *                            acc is recvbuf (host) or scratch[0] -> recvbuf
 *                            (GPU recvbuf: DMA back)
 *
 * "gather_gpu" (GPU kernel): the blocks land in the root's GPU scratch (the
 *   root's own block by the board's same-GPU copy, p2_memcpy_d2d's path);
 *   one CUDA kernel reduces the p blocks in rank order into recvbuf. In
 *   emulation without a GPU the reduction is computed on the host (exact
 *   results) and the kernel's time is the parameters gpu_kernel_ns +
 *   bytes / gpu_reduce_gbps (params.def).
 *
 *   root 0, p = 4:   rank q: sendbuf -> root GPU scratch[q] (q = 1, 2, 3)
 *                    root:   own -> GPU scratch[0] (board DMA);
 *                            kernel: recvbuf = scratch[0] op ... op scratch[3]
 *
 * Phase 1 (others): one transfer, wait for the channel.
 * Phase 1 (root): its own block; Phase 2: wait for every block (and reduce
 *          it in, CPU); Phase 3 (GPU): the kernel; (CPU) the result back.
 * The result's order is fixed, the same on every run.
 */
#include "coll.h"

static int eligible(const coll_plan *p)
{
    (void)p;
    return 1;
}

static double cost_cpu(int size, size_t bytes, int gpu)
{
    double bw = gpu ? coll_cost.dma_gpu_Bps : coll_cost.dma_cpu_Bps;
    double stage = gpu ? 2.0 * (coll_cost.dma_latency_s + (double)bytes / bw) : 0.0;
    return coll_cost.dma_latency_s + stage +
           (double)(size - 1) * ((double)bytes / bw + (double)bytes / coll_cost.reduce_cpu_Bps);
}

static double cost_gpu(int size, size_t bytes, int gpu)
{
    double bw = gpu ? coll_cost.dma_gpu_Bps : coll_cost.dma_cpu_Bps;
    return 2.0 * coll_cost.dma_latency_s + coll_cost.gpu_kernel_s +
           (double)(size - 1) * ((double)bytes / bw + (double)bytes / coll_cost.reduce_gpu_Bps);
}

static size_t scratch(const coll_plan *p)
{
    return p->rank == p->root ? (size_t)p->size * p->bytes : 0;
}

static tcaresult send_block(coll_plan *p)
{
    COLL_TRY(coll_put(p, p->root, COLL_TO_SCRATCH, (size_t)p->rank * p->bytes, COLL_FROM_SEND, 0,
                      p->bytes, 0));
    COLL_TRY(coll_start(p));
    return coll_flush(p);
}

static tcaresult run_cpu(coll_plan *p)
{
    if (p->rank != p->root)
        return send_block(p);
    size_t b = p->bytes, own = (size_t)p->root * b;
    /* The accumulator lives in host memory: recvbuf itself, or the root's
     * slot of scratch when recvbuf or sendbuf is GPU memory (staged by DMA). */
    int staged = p->recv.gpu || p->send.gpu;
    coll_source acc = staged ? COLL_FROM_SCRATCH : COLL_FROM_RECV;
    size_t acc_off = staged ? own : 0;
    COLL_TRY(coll_local_copy(p, acc, acc_off, COLL_FROM_SEND, 0, b));
    for (int q = 0; q < p->size; q++) {
        if (q == p->root)
            continue;
        COLL_TRY(coll_wait(p, q, 0));
        COLL_TRY(coll_reduce_local(p, acc, acc_off, COLL_FROM_SCRATCH, (size_t)q * b, p->count));
    }
    if (staged)
        COLL_TRY(coll_local_copy(p, COLL_FROM_RECV, 0, COLL_FROM_SCRATCH, own, b));
    return TCA_SUCCESS;
}

static tcaresult run_gpu(coll_plan *p)
{
    if (p->rank != p->root)
        return send_block(p);
    size_t b = p->bytes;
    COLL_TRY(coll_local_copy(p, COLL_FROM_SCRATCH, (size_t)p->root * b, COLL_FROM_SEND, 0, b));
    for (int q = 0; q < p->size; q++)
        if (q != p->root)
            COLL_TRY(coll_wait(p, q, 0));
    return coll_reduce_kernel(p, COLL_FROM_RECV, 0, COLL_FROM_SCRATCH, 0, b, p->size, p->count);
}

const coll_algorithm coll_reduce_gather = {COLL_REDUCE, "gather", eligible, cost_cpu, scratch,
                                           run_cpu, 0, 0};
const coll_algorithm coll_reduce_gather_gpu = {COLL_REDUCE, "gather_gpu", eligible, cost_gpu,
                                               scratch, run_gpu, 1, 0};
