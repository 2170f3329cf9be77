/*
 * coll_transport.c - the transport the collective algorithms are written
 * against, implemented over the TCA API: chained DMA puts into the peers'
 * registered buffers with a notification per transfer (tcaDescSetMemcpy,
 * tcaDescSet, tcaStartDMADesc on P2_COLL_DMA_CHANNEL; tcaWaitDMARecvDesc on
 * P2_COLL_WAIT_SLOT), PIO messages with a trailing flag word for small CPU
 * data (tcaSendPIO), local copies and local reductions with their modelled
 * cost, and the barrier's PIO tokens.
 *
 * Ready tokens. A collective run again (persistent, or a blocking call that
 * reuses its plan) must not write into a rank's buffers before that rank has
 * started the same run (it may still be reading the previous result). So each
 * run but the first after the preparing exchange begins with every rank
 * writing a token into the slot it owns in the mailbox of each rank that
 * writes into it (its "sources", known from a dry pass of the algorithm at
 * prepare), and the first put to a rank waits for that rank's token. The
 * token also carries the rank's recv handle when it changed since the last
 * one (a blocking call may pass other buffers each time: MPI lets every rank
 * do so on its own), and a signature of the arguments, so that ranks whose
 * calls disagree get TCA_ERROR_INVALID_ARGUMENT instead of a wrong result.
 * Algorithms marked self_synced skip the tokens (coll.h), and so does a
 * persistent request's run when the comm's last collective was a barrier:
 * every rank entered it after leaving its earlier calls, and the buffers
 * are the ones the peers already know (coll_comm.c, plan_run).
 *
 * Tags: (run % 4, step, source rank), so that notifications of different
 * steps and senders are told apart; the run bits keep a late notification of
 * the previous run from being taken for this one.
 */
#include <stdio.h>
#include <string.h>

#include "coll.h"

/* The collectives' names, as every message about a call names it. */
const char *const coll_kind_names[COLL_KINDS] = {
    "barrier", "bcast", "scatter", "gather", "reduce", "allgather", "allreduce"};
#include "rt/rt.h"

static int coll_tag(uint64_t run, int step, int src)
{
    return (int)(((run & 3u) << 14) | (((unsigned)step & 0xffu) << 6) | ((unsigned)src & 0x3fu));
}

#define COLL_LOCAL_STEP 255 /* the tag step of local DMA copies */

static coll_buf *buf_of(coll_plan *p, coll_source which)
{
    switch (which) {
    case COLL_FROM_SEND: return &p->send;
    case COLL_FROM_RECV: return &p->recv;
    default: return &p->scratch;
    }
}

uint8_t *coll_ptr(coll_plan *p, coll_source which, size_t off)
{
    coll_buf *b = buf_of(p, which);
    return b->ptr ? b->ptr + off : NULL;
}

#define RUN_MASK ((1ull << COLL_READY_RUN_BITS) - 1u)
#define WITH_HANDLE (1ull << COLL_READY_RUN_BITS) /* the slot's handle is new */

static uint64_t ready_word(const coll_plan *p)
{
    return (uint64_t)p->sig << (COLL_READY_RUN_BITS + 1) | (p->run & RUN_MASK);
}

tcaresult coll_send_ready(coll_plan *p)
{
    if (!p->sources)
        return TCA_SUCCESS;
    /* The handle only when the sources do not have it yet: 8 stores less. */
    int with_handle = memcmp(&p->announced, &p->recv.h, sizeof p->announced) != 0 &&
                      p->recv.bytes;
    uint64_t word = ready_word(p) | (with_handle ? WITH_HANDLE : 0);
    for (int q = 0; q < p->size; q++) {
        if (!(p->sources >> q & 1))
            continue;
        tcaPIOHandle pio;
        COLL_TRY(tcaSetPIORegion(&pio, &p->comm->mailbox_h[q],
                                 COLL_MB_READY + COLL_READY_BYTES * (size_t)p->rank,
                                 COLL_READY_BYTES));
        if (with_handle)
            COLL_TRY(tcaSendPIO(&pio, 0, &p->recv.h, sizeof p->recv.h));
        COLL_TRY(tcaSendPIO(&pio, COLL_READY_WORD, &word, sizeof word));
    }
    if (with_handle)
        p->announced = p->recv.h;
    return tcaSendPIOCommit();
}

static tcaresult wait_ready(coll_plan *p, int dst)
{
    uint64_t bit = 1ull << dst;
    if (!p->use_ready || (p->ready_seen & bit))
        return TCA_SUCCESS;
    const uint8_t *slot = p->comm->mailbox + COLL_MB_READY + COLL_READY_BYTES * (unsigned)dst;
    const volatile uint64_t *word = (const volatile uint64_t *)(slot + COLL_READY_WORD);
    p2_rt *rt = p2_rt_get();
    if (!rt)
        return TCA_ERROR_DEVICE;
    p2_rt_api_begin();
    int w = p2_rt_wait_mem(rt, word, RUN_MASK, p->run & RUN_MASK, 1);
    p2_rt_api_end();
    if (w != P2_CHAN_OK)
        return TCA_ERROR_DEVICE;
    uint64_t got = *word;
    if ((got & ~WITH_HANDLE) != ready_word(p)) {
        /* The token carries a hash of dst's arguments, not the arguments. */
        char root[24] = "";
        if (p->kind == COLL_BCAST || p->kind == COLL_SCATTER || p->kind == COLL_GATHER ||
            p->kind == COLL_REDUCE)
            snprintf(root, sizeof root, ", root %d", p->root);
        fprintf(stderr,
                "p2coll: p2_%s (count %zu%s) at rank %d: rank %d called it with other arguments "
                "(count, type, op, root or algorithm; P2_COLL_CHECK=1 names which)\n",
                coll_kind_names[p->kind], p->count, root, p->comm->world_rank[p->rank],
                p->comm->world_rank[dst]);
        return TCA_ERROR_INVALID_ARGUMENT;
    }
    /* The slot is shared by every plan of the comm: its handle is this
     * plan's only when this token says so (it came before the word). */
    if (got & WITH_HANDLE)
        memcpy(&p->peer[dst].recv, slot, sizeof p->peer[dst].recv);
    p->ready_seen |= bit;
    return TCA_SUCCESS;
}

static tcaresult append(coll_plan *p, const struct coll_pending *t, int extra)
{
    return tcaDescSetMemcpy(p->chain, t->dh, t->dst_off, &t->src->h, t->src_off, t->bytes,
                            t->flags | extra, P2_COLL_WAIT_SLOT, t->tag);
}

/* Adds a transfer to the chain; the one before it goes in now, this one
 * waits (coll.h: pending). */
static tcaresult chain_append(coll_plan *p, const tcaHandle *dh, size_t dst_off, coll_buf *src,
                              size_t src_off, size_t bytes, int flags, int tag)
{
    if (!p->chain && !(p->chain = tcaDescNew()))
        return TCA_ERROR_OUT_OF_MEMORY;
    if (p->has_pending)
        COLL_TRY(append(p, &p->pending, 0));
    p->pending = (struct coll_pending){dh, dst_off, src, src_off, bytes, flags, tag};
    p->has_pending = 1;
    p->chain_len++;
    return TCA_SUCCESS;
}

tcaresult coll_put(coll_plan *p, int dst, coll_target target, size_t dst_off,
                   coll_source src, size_t src_off, size_t bytes, int step)
{
    if (bytes == 0)
        return TCA_SUCCESS;
    if (p->dry) {
        p->targets |= 1ull << dst;
        return TCA_SUCCESS;
    }
    COLL_TRY(wait_ready(p, dst));
    const tcaHandle *dh = target == COLL_TO_RECV ? &p->peer[dst].recv : &p->peer[dst].scratch;
    /* The transfers to peers in one chain are independent (different targets
     * or ranges, sources nobody writes meanwhile), so each lets the next
     * start once its reads are out, as a DMAC overlaps a chain. */
    return chain_append(p, dh, dst_off, buf_of(p, src), src_off, bytes,
                        tcaDMANotify | tcaDMAPipeline, coll_tag(p->run, step, p->rank));
}

#define COLL_CHAIN_LOCAL_STEP 254 /* the tag step of chained local copies */

tcaresult coll_local_copy_chained(coll_plan *p, coll_source dst, size_t dst_off, coll_source src,
                                  size_t src_off, size_t bytes)
{
    coll_buf *db = buf_of(p, dst), *sb = buf_of(p, src);
    if (p->dry || bytes == 0 || (!db->gpu && !sb->gpu) || db->ptr + dst_off == sb->ptr + src_off)
        return coll_local_copy(p, dst, dst_off, src, src_off, bytes); /* at once, or nothing */
    return chain_append(p, &db->h, dst_off, sb, src_off, bytes, 0,
                        coll_tag(p->run, COLL_CHAIN_LOCAL_STEP, p->rank));
}

static tcaDesc *running_chain;

tcaresult coll_flush(coll_plan *p)
{
    if (p->dry || !p->channel_busy)
        return TCA_SUCCESS;
    p->channel_busy = 0;
    /* The chain's last transfer raised this when its writes had left, and
     * its transfers complete in order: the channel is idle. */
    tcaresult r = tcaWaitDMARecvDesc(NULL, P2_COLL_WAIT_SLOT, p->flush_tag);
    if (running_chain) {
        tcaDescFree(running_chain);
        running_chain = NULL;
    }
    return r;
}

tcaresult coll_start(coll_plan *p)
{
    if (p->dry || !p->chain)
        return TCA_SUCCESS;
    if (p->has_pending) {
        tcaresult a = append(p, &p->pending, tcaDMANotifySelf);
        p->has_pending = 0;
        if (a != TCA_SUCCESS)
            return a;
    }
    COLL_TRY(coll_flush(p));
    p->flush_tag = p->pending.tag;
    tcaDesc *chain = p->chain;
    p->chain = NULL;
    p->chain_len = 0;
    tcaresult r = tcaDescSet(chain, P2_COLL_DMA_CHANNEL);
    if (r == TCA_SUCCESS)
        r = tcaStartDMADesc(P2_COLL_DMA_CHANNEL);
    if (r != TCA_SUCCESS) {
        tcaDescFree(chain);
        return r;
    }
    running_chain = chain;
    p->channel_busy = 1;
    return TCA_SUCCESS;
}

tcaresult coll_wait(coll_plan *p, int src, int step)
{
    if (p->dry)
        return TCA_SUCCESS;
    return tcaWaitDMARecvDesc(NULL, P2_COLL_WAIT_SLOT, coll_tag(p->run, step, src));
}

size_t coll_pio_slot(size_t bytes)
{
    return (bytes + 7u) / 8u * 8u + 8u;
}

tcaresult coll_pio_put(coll_plan *p, int dst, size_t dst_off, const void *data, size_t bytes)
{
    if (p->dry) {
        p->targets |= 1ull << dst;
        return TCA_SUCCESS;
    }
    COLL_TRY(wait_ready(p, dst));
    p2_compute(coll_cost.pio_step_s);
    size_t slot = coll_pio_slot(bytes);
    tcaPIOHandle pio;
    uint64_t flag = p->run;
    COLL_TRY(tcaSetPIORegion(&pio, &p->peer[dst].scratch, dst_off, slot));
    if (bytes)
        COLL_TRY(tcaSendPIO(&pio, 0, data, bytes));
    COLL_TRY(tcaSendPIO(&pio, slot - 8u, &flag, sizeof flag));
    return tcaSendPIOCommit();
}

tcaresult coll_pio_wait(coll_plan *p, size_t off, size_t bytes)
{
    if (p->dry)
        return TCA_SUCCESS;
    return p2_wait_u64((const volatile uint64_t *)(p->scratch.ptr + off + coll_pio_slot(bytes) - 8u),
                       p->run);
}

/* One DMA of the board from local memory to local memory, waited for. */
static tcaresult local_dma(const tcaHandle *dh, size_t doff, const tcaHandle *sh, size_t soff,
                           size_t bytes, int self_rank)
{
    tcaDesc *chain = tcaDescNew();
    if (!chain)
        return TCA_ERROR_OUT_OF_MEMORY;
    int tag = coll_tag(0, COLL_LOCAL_STEP, self_rank);
    tcaresult r = tcaDescSetMemcpy(chain, dh, doff, sh, soff, bytes, tcaDMANotify,
                                   P2_COLL_WAIT_SLOT, tag);
    if (r == TCA_SUCCESS)
        r = tcaDescSet(chain, P2_COLL_DMA_CHANNEL);
    if (r == TCA_SUCCESS)
        r = tcaStartDMADesc(P2_COLL_DMA_CHANNEL);
    if (r == TCA_SUCCESS)
        r = tcaWaitDMARecvDesc(NULL, P2_COLL_WAIT_SLOT, tag);
    tcaresult w = tcaWaitDMAC(P2_COLL_DMA_CHANNEL);
    if (r == TCA_SUCCESS)
        r = w;
    tcaDescFree(chain);
    return r;
}

tcaresult coll_local_copy(coll_plan *p, coll_source dst, size_t dst_off, coll_source src,
                          size_t src_off, size_t bytes)
{
    if (p->dry || bytes == 0)
        return TCA_SUCCESS;
    coll_buf *db = buf_of(p, dst), *sb = buf_of(p, src);
    if (db->ptr + dst_off == sb->ptr + src_off)
        return TCA_SUCCESS;
    if (db->gpu || sb->gpu) {
        COLL_TRY(coll_flush(p));
        return local_dma(&db->h, dst_off, &sb->h, src_off, bytes, p->rank);
    }
    memmove(db->ptr + dst_off, sb->ptr + src_off, bytes);
    p2_compute((double)bytes / coll_cost.memcpy_Bps);
    return TCA_SUCCESS;
}

tcaresult coll_reduce_local(coll_plan *p, coll_source dst, size_t dst_off, coll_source src,
                            size_t src_off, size_t count)
{
    if (p->dry || count == 0)
        return TCA_SUCCESS;
    coll_buf *db = buf_of(p, dst), *sb = buf_of(p, src);
    /* GPU memory is host memory in emulation: the kernel's result is computed
     * here, its time charged from the table. */
    coll_reduce_apply(db->ptr + dst_off, sb->ptr + src_off, count, p->type, p->op);
    double bytes = (double)(count * p->esize);
    if (db->gpu || sb->gpu)
        p2_compute(coll_cost.gpu_kernel_s + bytes / coll_cost.reduce_gpu_Bps);
    else
        p2_compute(bytes / coll_cost.reduce_cpu_Bps);
    return TCA_SUCCESS;
}

tcaresult coll_reduce_kernel(coll_plan *p, coll_source dst, size_t dst_off, coll_source src,
                             size_t src_off, size_t stride, int n, size_t count)
{
    if (p->dry || count == 0 || n < 1)
        return TCA_SUCCESS;
    uint8_t *d = buf_of(p, dst)->ptr + dst_off, *s = buf_of(p, src)->ptr + src_off;
    memmove(d, s, count * p->esize);
    for (int i = 1; i < n; i++)
        coll_reduce_apply(d, s + (size_t)i * stride, count, p->type, p->op);
    p2_compute(coll_cost.gpu_kernel_s +
               (double)(n - 1) * (double)(count * p->esize) / coll_cost.reduce_gpu_Bps);
    return TCA_SUCCESS;
}

static size_t barrier_word(uint64_t seq, int step)
{
    return COLL_MB_BARRIER + 8u * ((size_t)(seq % 2u) * COLL_BARRIER_STEPS + (size_t)step);
}

tcaresult coll_barrier_signal(coll_plan *p, int dst, int step, uint64_t seq)
{
    if (p->dry)
        return TCA_SUCCESS;
    tcaPIOHandle pio;
    COLL_TRY(tcaSetPIORegion(&pio, &p->comm->mailbox_h[dst], barrier_word(seq, step), 8));
    COLL_TRY(tcaSendPIO(&pio, 0, &seq, sizeof seq));
    return tcaSendPIOCommit();
}

tcaresult coll_barrier_wait(coll_plan *p, int step, uint64_t seq)
{
    if (p->dry)
        return TCA_SUCCESS;
    return p2_wait_u64((const volatile uint64_t *)(p->comm->mailbox + barrier_word(seq, step)), seq);
}

/* ---- p2_memcpy_d2d ------------------------------------------------------- */

/* The kind of registered local memory at [ptr, ptr + bytes), or -1. */
int coll_memory_kind(const void *ptr, size_t bytes)
{
    p2_rt *rt = p2_rt_get();
    if (!rt || !ptr)
        return -1;
    const uint8_t *a = ptr;
    const p2_rt_memory *m[2] = {&rt->host, &rt->gpu};
    for (int k = 0; k < 2; k++)
        if (m[k]->base && a >= m[k]->base && bytes <= m[k]->size &&
            (uint64_t)(a - m[k]->base) <= m[k]->size - bytes)
            return k == 0 ? tcaMemoryCPU : tcaMemoryGPU;
    return -1;
}

tcaresult p2_memcpy_d2d(void *dst, const void *src, size_t bytes)
{
    COLL_TRY(tcaInit());
    if (!dst || !src)
        return TCA_ERROR_INVALID_ARGUMENT;
    if (bytes == 0)
        return TCA_SUCCESS;
    int dk = coll_memory_kind(dst, bytes), sk = coll_memory_kind(src, bytes);
    if (dk < 0 || sk < 0)
        return TCA_ERROR_NOT_REGISTERED;
    tcaHandle dh, sh;
    COLL_TRY(tcaCreateHandle(&dh, dst, bytes, (tcaMemoryKind)dk));
    COLL_TRY(tcaCreateHandle(&sh, (void *)src, bytes, (tcaMemoryKind)sk));
    tcaresult r = local_dma(&dh, 0, &sh, 0, bytes, p2_rank());
    tcaDestroyHandle(&dh);
    tcaDestroyHandle(&sh);
    return r;
}
