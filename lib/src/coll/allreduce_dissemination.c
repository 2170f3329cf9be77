/*
 * allreduce_dissemination.c - allreduce by dissemination, for any p:
 * K = floor(log2 p) steps; at step j every rank sends its partial part[j]
 * (the reduction of the 2^j ranks ending at itself) to rank + 2^j and
 * receives part[j] of rank - 2^j: part[j+1] = part[j] op received. For p not
 * a power of two the result adds windows for the other set bits of p: with
 * the bits of p taken from the lowest, a window of 2^j ranks ending at
 * r - offset (offset = the bits already taken) is part[j] of rank r - offset,
 * sent to r as an extra message once that rank has it. For p = 2^K only
 * part[K] is needed: the classic log2 p steps.
 *
 *   p = 4 (sum):  step 0: r -> r+1      part1(r) = x[r-1] + x[r]
 *                 step 1: r -> r+2      part2(r) = part1(r-2) + part1(r) = all
 *   p = 3 (0b11): step 0: r -> r+1      part1(r) = x[r-1] + x[r]
 *                 extra : part1 -> r+1  result = x[r] + part1(r-1)
 *
 * Two transports, two algorithms:
 *   "dissemination_pio" - each message is CPU stores through the PIO window
 *       with a flag word after it (the published 8-byte allreduce between
 *       CPUs); host buffers of at most 240 bytes.
 *   "dissemination"     - each step is one chained DMA (the step's message
 *       and the extra one), notified at the receiver.
 * Reductions are on the host (coll_reduce_local: GPU data charged as a kernel).
 *
 * Scratch (host): std[0..K-1] (part[j+1] is std[j] once reduced), extra[0..K],
 * each one slot; the PIO variant has two such banks, used by turns, and runs
 * again without ready tokens (self_synced, coll.h): as the published code,
 * each call is its log2 p PIO messages and nothing else.
 * Phase j+1: send part[j] (and extra j), wait std[j], reduce.
 * Last phase: wait for the extras, flush, recvbuf = the windows' reduction.
 * Ranks reduce in different orders: floating results may differ by rounding.
 */
#include "coll.h"

static size_t slot_bytes(const coll_plan *p, int pio)
{
    return pio ? coll_pio_slot(p->bytes) : (p->bytes + 63u) / 64u * 64u;
}

static size_t bank_bytes(const coll_plan *p, int pio)
{
    return (size_t)(2 * coll_floor_log2(p->size) + 1) * slot_bytes(p, pio);
}

/* PIO runs alternate between two banks (self_synced: no ready tokens). */
static size_t bank_off(const coll_plan *p, int pio)
{
    return pio ? (size_t)(p->runs & 1u) * bank_bytes(p, pio) : 0;
}

static size_t std_off(const coll_plan *p, int pio, int j)
{
    return bank_off(p, pio) + (size_t)j * slot_bytes(p, pio);
}

static size_t extra_off(const coll_plan *p, int pio, int j)
{
    return bank_off(p, pio) + (size_t)(coll_floor_log2(p->size) + j) * slot_bytes(p, pio);
}

static size_t scratch_any(const coll_plan *p, int pio)
{
    return (pio ? 2u : 1u) * bank_bytes(p, pio);
}

/* part[j]: the send buffer for j = 0, else std[j-1]. */
static coll_source part_src(int j)
{
    return j == 0 ? COLL_FROM_SEND : COLL_FROM_SCRATCH;
}

static tcaresult send_part(coll_plan *p, int pio, int j, int dst, size_t dst_off, int step)
{
    size_t src_off = j == 0 ? 0 : std_off(p, pio, j - 1);
    if (pio)
        return coll_pio_put(p, dst, dst_off, coll_ptr(p, part_src(j), src_off), p->bytes);
    return coll_put(p, dst, COLL_TO_SCRATCH, dst_off, part_src(j), src_off, p->bytes, step);
}

static tcaresult recv_part(coll_plan *p, int pio, int src, size_t off, int step)
{
    return pio ? coll_pio_wait(p, off, p->bytes) : coll_wait(p, src, step);
}

static tcaresult run_any(coll_plan *p, int pio)
{
    int n = p->size, r = p->rank, K = coll_floor_log2(n);
    /* Extra sends: bit j of n (j < K, or j == K when lower bits exist). */
    int offset = 0;
    int extra_to[32], extra_from[32];
    for (int j = 0; j <= K; j++) {
        extra_to[j] = extra_from[j] = -1;
        if (!(n >> j & 1))
            continue;
        if (offset > 0) {
            extra_to[j] = coll_mod(r + offset, n);
            extra_from[j] = coll_mod(r - offset, n);
        }
        offset += 1 << j;
    }
    for (int j = 0; j <= K; j++) {
        /* Phase j+1: part[j] to r + 2^j and, for bit j, to r + offset_j. */
        if (j < K)
            COLL_TRY(send_part(p, pio, j, coll_mod(r + (1 << j), n), std_off(p, pio, j), j));
        if (extra_to[j] >= 0)
            COLL_TRY(send_part(p, pio, j, extra_to[j], extra_off(p, pio, j), 32 + j));
        COLL_TRY(coll_start(p));
        if (j < K) {
            COLL_TRY(recv_part(p, pio, coll_mod(r - (1 << j), n), std_off(p, pio, j), j));
            /* part[j+1] = received op part[j], in std[j]. */
            COLL_TRY(coll_reduce_local(p, COLL_FROM_SCRATCH, std_off(p, pio, j), part_src(j),
                                       j == 0 ? 0 : std_off(p, pio, j - 1), p->count));
        }
    }
    /* Last phase: recvbuf = the window of the lowest bit (local), op the
     * extras; the DMA reading part[] must be done before recvbuf changes. */
    COLL_TRY(coll_flush(p));
    int first = 1;
    for (int j = 0; j <= K; j++) {
        if (!(n >> j & 1))
            continue;
        if (first) {
            COLL_TRY(coll_local_copy(p, COLL_FROM_RECV, 0, part_src(j),
                                     j == 0 ? 0 : std_off(p, pio, j - 1), p->bytes));
            first = 0;
            continue;
        }
        COLL_TRY(recv_part(p, pio, extra_from[j], extra_off(p, pio, j), 32 + j));
        COLL_TRY(coll_reduce_local(p, COLL_FROM_RECV, 0, COLL_FROM_SCRATCH,
                                   extra_off(p, pio, j), p->count));
    }
    return TCA_SUCCESS;
}

static int steps(int size)
{
    int K = coll_floor_log2(size), ones = 0;
    for (int j = 0; j <= K; j++)
        ones += size >> j & 1;
    return K + ones - 1;
}

static double reduce_s(size_t bytes, int gpu)
{
    return gpu ? coll_cost.gpu_kernel_s + (double)bytes / coll_cost.reduce_gpu_Bps
               : (double)bytes / coll_cost.reduce_cpu_Bps;
}

static double cost_dma(int size, size_t bytes, int gpu)
{
    double bw = gpu ? coll_cost.dma_gpu_Bps : coll_cost.dma_cpu_Bps;
    /* Step j writes to the rank 2^j away (coll_share); the extra windows of
     * a p that is not a power of two add steps of about the same reach. */
    double t = 0;
    int K = coll_floor_log2(size);
    for (int j = 0; j < steps(size); j++)
        t += coll_cost.dma_latency_s + reduce_s(bytes, gpu) +
             coll_step_bytes_s(1 << (j < K ? j : (K > 0 ? K - 1 : 0)), size, COLL_ADD, (double)bytes, bw);
    return t;
}

static double cost_pio(int size, size_t bytes, int gpu)
{
    return steps(size) * (coll_cost.pio_latency_s + coll_cost.pio_step_s +
                          (double)((bytes + 7) / 8) * coll_cost.pio_store_s + reduce_s(bytes, gpu));
}

static int eligible_dma(const coll_plan *p)
{
    return coll_floor_log2(p->size) < 32;
}

/* PIO: CPU data, small (one PIO message per step), scratch within PIO reach. */
#define PIO_MAX_BYTES 240u

static int eligible_pio(const coll_plan *p)
{
    return !p->send.gpu && !p->recv.gpu && p->bytes <= PIO_MAX_BYTES;
}

static size_t scratch_dma(const coll_plan *p) { return scratch_any(p, 0); }
static size_t scratch_pio(const coll_plan *p) { return scratch_any(p, 1); }
static tcaresult run_dma(coll_plan *p) { return run_any(p, 0); }
static tcaresult run_pio(coll_plan *p) { return run_any(p, 1); }

const coll_algorithm coll_allreduce_dissemination = {
    COLL_ALLREDUCE, "dissemination", eligible_dma, cost_dma, scratch_dma, run_dma, 0, 0};
const coll_algorithm coll_allreduce_dissemination_pio = {
    COLL_ALLREDUCE, "dissemination_pio", eligible_pio, cost_pio, scratch_pio, run_pio, 0, 1};
