/*
 * rk_errors: the TCA API refuses what it must, with the documented status,
 * and nothing is written (p2run -n 2). Rank 0 makes the calls; rank 1 owns
 * a 4 KiB destination of guard bytes and checks, at the end, that exactly
 * the accepted transfers changed it and that no refused or failed transfer
 * raised a notification.
 *
 *  - ranges: offset + size beyond a handle (either side, off by one, and
 *    overflowing) -> TCA_ERROR_OUT_OF_RANGE; the exact fit is accepted;
 *  - handles: every field of a received handle edited, zeroed, NULL or
 *    destroyed -> TCA_ERROR_INVALID_HANDLE;
 *  - slots, tags, channels, flags, sizes, remote sources, empty chains,
 *    unset channels, memory calls, PIO regions;
 *  - a channel still running its chain: a start, a tcaDescSet and a
 *    tcaSetDMAChain on it -> TCA_ERROR_CHANNEL_BUSY (the DMAC would ignore
 *    the start: the chain would never run); once it is idle, the next chain
 *    runs, and restarts on its own end notification without tcaWaitDMAC;
 *  - self-consistent handles (made with the library's own tca_handle_make, as
 *    a buggy or hostile program could) to memory beyond what a node exposes,
 *    as source or destination: the library refuses them (TCA_ERROR_INVALID_HANDLE);
 *  - the same transfers as raw register-mode descriptors, past the library:
 *    a source beyond the arenas makes the DMAC's read complete Unsupported
 *    Request (P2_ERR_UNSUPPORTED); a destination beyond the peer's exposed
 *    memory, even by one byte, is refused by the DMAC before any byte moves
 *    (P2_ERR_DST_RANGE: a posted write would vanish unanswered). Each run
 *    fails (tcaWaitDMAC: TCA_ERROR_DMA_FAILED), nothing arrives, no
 *    notification is raised, and the channel works again afterwards.
 */
#include "dev/dev.h"
#include "peach2_hw.h"
#include "rk_common.h"
#include "tca_internal.h"

#define OWNER 1
#define BYTES 4096
#define CHANNEL 0
#define REFUSED_SLOT 10
#define REFUSED_TAG 10

typedef struct published {
    tcaHandle dst, signal;
} published;

static rk_buf src, gsrc, dst;
static published all[2];
static rk_link link;

/* The accepted transfers of the run, and where they land at rank 1. */
enum { EDGE_SLOT = 1, FORGED_SLOT = 2, AFTER_SLOT = 3, TAG = 0x42 };
#define AFTER_DST 2000
#define AFTER_SRC 100
#define AFTER_BYTES 33

/* One register-mode descriptor on CHANNEL, written and started by raw
 * register stores (no library checks); returns the run's error. */
static p2_error raw_dma(uint64_t src_addr, uint64_t dst_addr, uint32_t len, unsigned slot)
{
    p2_dev *dev = p2_device_get("peach2");
    p2_desc desc = {.src = src_addr, .dst = dst_addr, .length = len, .flags = P2_DESC_NOTIFY,
                    .block_count = 1, .wait_tag = TAG, .wait_slot = (uint16_t)slot};
    uint64_t words[P2_DESC_SIZE / 8];
    memcpy(words, &desc, sizeof words);
    for (unsigned i = 0; i < P2_DESC_SIZE / 8; i++)
        dev->ops->mmio_write(dev, P2_BAR_REGS, P2_REG_DESC(CHANNEL, 0) + 8u * i, words[i]);
    dev->ops->mmio_write(dev, P2_BAR_REGS, P2_REG_DMA(CHANNEL, P2_DMA_REG_COUNT), 1);
    dev->ops->mmio_write(dev, P2_BAR_REGS, P2_REG_DMA(CHANNEL, P2_DMA_START), P2_DMA_START_REGISTERS);
    RK_EXPECT(tcaWaitDMAC(CHANNEL), TCA_ERROR_DMA_FAILED);
    if (dev->ops->mmio_read(dev, P2_BAR_REGS, P2_REG_DMA(CHANNEL, P2_DMA_STATUS)) != P2_DMA_FAILED)
        rk_fail("raw DMA: channel status is not FAILED");
    p2_error e = P2_OK;
    RK_TCA(tcaGetDMAError(CHANNEL, &e));
    return e;
}

static void check_status_strings(void)
{
    const char *seen[32] = {0};
    const char *unknown = tcaGetErrorString((tcaresult)-999);
    if (!unknown)
        rk_fail("tcaGetErrorString(-999) is NULL");
    for (int r = TCA_ERROR_NOTIFY_BACKLOG; r <= TCA_NOT_YET; r++) {
        const char *s = tcaGetErrorString((tcaresult)r);
        if (!s || !*s || strcmp(s, unknown) == 0)
            rk_fail("tcaGetErrorString(%d) = '%s'", r, s ? s : "(null)");
        for (int q = 0; q < 32; q++)
            if (seen[q] && strcmp(seen[q], s) == 0)
                rk_fail("tcaGetErrorString(%d) repeats '%s'", r, s);
        seen[r - TCA_ERROR_NOTIFY_BACKLOG] = s;
    }
}

static void refuse_ranges(tcaDesc *d, const tcaHandle *peer)
{
    const int f = tcaDMANotify, s = REFUSED_SLOT, t = REFUSED_TAG;
    RK_EXPECT(tcaDescSetMemcpy(d, peer, BYTES, &src.handle, 0, 1, f, s, t), TCA_ERROR_OUT_OF_RANGE);
    RK_EXPECT(tcaDescSetMemcpy(d, peer, BYTES - 96, &src.handle, 0, 97, f, s, t),
              TCA_ERROR_OUT_OF_RANGE);
    RK_EXPECT(tcaDescSetMemcpy(d, peer, 0, &src.handle, 0, BYTES + 1, f, s, t),
              TCA_ERROR_OUT_OF_RANGE);
    RK_EXPECT(tcaDescSetMemcpy(d, peer, SIZE_MAX, &src.handle, 0, 2, f, s, t),
              TCA_ERROR_OUT_OF_RANGE);
    RK_EXPECT(tcaDescSetMemcpy(d, peer, 1, &src.handle, 0, SIZE_MAX, f, s, t),
              TCA_ERROR_TOO_LARGE); /* wider than one descriptor moves */
    RK_EXPECT(tcaDescSetMemcpy(d, peer, 0, &src.handle, BYTES, 1, f, s, t), TCA_ERROR_OUT_OF_RANGE);
    RK_EXPECT(tcaDescSetMemcpy(d, peer, 0, &src.handle, 1, BYTES, f, s, t), TCA_ERROR_OUT_OF_RANGE);
    RK_EXPECT(tcaDescSetMemcpy(d, peer, 0, &src.handle, SIZE_MAX - 1, 3, f, s, t),
              TCA_ERROR_OUT_OF_RANGE);
    RK_EXPECT(tcaDescSetMemcpy(d, peer, 0, &gsrc.handle, 0, BYTES + 1, f, s, t),
              TCA_ERROR_OUT_OF_RANGE);
}

static void refuse_handles(tcaDesc *d, const tcaHandle *peer)
{
    const int f = tcaDMANotify, s = REFUSED_SLOT, t = REFUSED_TAG;
    tcaHandle bad[10];
    for (int i = 0; i < 10; i++)
        bad[i] = *peer;
    bad[0].pcie_addr += 1;
    bad[1].size += 1; /* a bigger region than its owner registered */
    bad[2].size = 1ull << 40;
    bad[3].kind = tcaMemoryGPU;
    bad[4].node ^= 1;
    bad[5].node = 99;
    bad[6].check ^= 1;
    bad[7].check = 0;
    bad[8].reserved = 1;
    memset(&bad[9], 0, sizeof bad[9]);
    for (int i = 0; i < 10; i++) {
        tcaresult r = tcaDescSetMemcpy(d, &bad[i], 0, &src.handle, 0, 8, f, s, t);
        if (r != TCA_ERROR_INVALID_HANDLE)
            rk_fail("edited handle %d as destination: %s", i, tcaGetErrorString(r));
        r = tcaWaitDMARecvDesc(&bad[i], s, t);
        if (r != TCA_ERROR_INVALID_HANDLE)
            rk_fail("edited handle %d in tcaWaitDMARecvDesc: %s", i, tcaGetErrorString(r));
        RK_EXPECT(tcaSetPIORegion(&(tcaPIOHandle){0}, &bad[i], 0, 8), TCA_ERROR_INVALID_HANDLE);
    }
    RK_EXPECT(tcaDescSetMemcpy(d, NULL, 0, &src.handle, 0, 8, f, s, t), TCA_ERROR_INVALID_HANDLE);
    RK_EXPECT(tcaDescSetMemcpy(d, peer, 0, NULL, 0, 8, f, s, t), TCA_ERROR_INVALID_HANDLE);
    /* A source handle edited to reach further than its allocation. */
    tcaHandle wider = src.handle;
    wider.size *= 2;
    RK_EXPECT(tcaDescSetMemcpy(d, peer, 0, &wider, BYTES, 8, f, s, t), TCA_ERROR_INVALID_HANDLE);
    /* Destroyed: refused; destroying twice too. */
    tcaHandle gone;
    RK_TCA(tcaCreateHandle(&gone, src.bytes, 64, tcaMemoryCPU));
    RK_TCA(tcaDestroyHandle(&gone));
    RK_EXPECT(tcaDescSetMemcpy(d, peer, 0, &gone, 0, 8, f, s, t), TCA_ERROR_INVALID_HANDLE);
    RK_EXPECT(tcaDestroyHandle(&gone), TCA_ERROR_INVALID_HANDLE);
    RK_EXPECT(tcaDestroyHandle(NULL), TCA_ERROR_INVALID_HANDLE);
}

static void refuse_arguments(tcaDesc *d, const tcaHandle *peer)
{
    const int f = tcaDMANotify;
    /* Slots and tags, with and without a notify flag. */
    RK_EXPECT(tcaDescSetMemcpy(d, peer, 0, &src.handle, 0, 8, f, -1, 0), TCA_ERROR_INVALID_SLOT);
    RK_EXPECT(tcaDescSetMemcpy(d, peer, 0, &src.handle, 0, 8, 0, TCA_WAIT_SLOTS, 0),
              TCA_ERROR_INVALID_SLOT);
    RK_EXPECT(tcaDescSetMemcpy(d, peer, 0, &src.handle, 0, 8, f, 0, -1), TCA_ERROR_INVALID_TAG);
    RK_EXPECT(tcaDescSetMemcpy(d, peer, 0, &src.handle, 0, 8, 0, 0, TCA_WAIT_TAG_MAX + 1),
              TCA_ERROR_INVALID_TAG);
    RK_EXPECT(tcaWaitDMARecvDesc(NULL, -1, 0), TCA_ERROR_INVALID_SLOT);
    RK_EXPECT(tcaWaitDMARecvDesc(NULL, TCA_WAIT_SLOTS, 0), TCA_ERROR_INVALID_SLOT);
    RK_EXPECT(tcaWaitDMARecvDesc(NULL, 0, -1), TCA_ERROR_INVALID_TAG);
    RK_EXPECT(tcaWaitDMARecvDesc(NULL, 0, TCA_WAIT_TAG_MAX + 1), TCA_ERROR_INVALID_TAG);
    RK_EXPECT(tcaTestDMARecvDesc(NULL, TCA_WAIT_SLOTS, 0), TCA_ERROR_INVALID_SLOT);
    RK_EXPECT(tcaTestDMARecvDesc(NULL, 0, TCA_WAIT_TAG_MAX + 1), TCA_ERROR_INVALID_TAG);
    /* Flags, sizes, sources. */
    RK_EXPECT(tcaDescSetMemcpy(d, peer, 0, &src.handle, 0, 8, tcaDMAPipeline << 1, 0, 0),
              TCA_ERROR_INVALID_FLAGS);
    RK_EXPECT(tcaDescSetMemcpy(d, peer, 0, &src.handle, 0, 8, -1, 0, 0), TCA_ERROR_INVALID_FLAGS);
    RK_EXPECT(tcaDescSetMemcpy(d, peer, 0, &src.handle, 0, 0, f, 0, 0),
              TCA_ERROR_INVALID_ARGUMENT);
    RK_EXPECT(tcaDescSetMemcpy(NULL, peer, 0, &src.handle, 0, 8, f, 0, 0),
              TCA_ERROR_INVALID_ARGUMENT);
    RK_EXPECT(tcaDescSetMemcpy(d, &src.handle, 0, peer, 0, 8, f, REFUSED_SLOT, REFUSED_TAG),
              TCA_ERROR_REMOTE_SOURCE);
    /* Channels. */
    tcaDesc *empty = tcaDescNew();
    if (!empty)
        rk_fail("out of memory");
    p2_error e;
    RK_EXPECT(tcaDescSet(empty, 0), TCA_ERROR_EMPTY_CHAIN);
    RK_EXPECT(tcaDescSet(NULL, 0), TCA_ERROR_INVALID_ARGUMENT);
    RK_EXPECT(tcaDescFree(NULL), TCA_ERROR_INVALID_ARGUMENT);
    int table, next = 0;
    RK_EXPECT(tcaCreateDMADesc(&table, 4), TCA_SUCCESS);
    RK_EXPECT(tcaSetDMAChain(0, table), TCA_ERROR_EMPTY_CHAIN);
    RK_EXPECT(tcaSetDMADesc_Memcpy(table, 4, &next, peer, 0, &src.handle, 0, 8, 0, 0, 0),
              TCA_ERROR_INVALID_DESC);
    RK_EXPECT(tcaSetDMADesc_Memcpy(table, 0, &next, peer, 0, &src.handle, 0, 8, 0, 0, 0),
              TCA_SUCCESS);
    for (int c = -1; c <= TCA_DMA_CHANNELS; c += TCA_DMA_CHANNELS + 1) {
        RK_EXPECT(tcaDescSet(d, c), TCA_ERROR_INVALID_CHANNEL);
        RK_EXPECT(tcaSetDMAChain(c, table), TCA_ERROR_INVALID_CHANNEL);
        RK_EXPECT(tcaStartDMADesc(c), TCA_ERROR_INVALID_CHANNEL);
        RK_EXPECT(tcaWaitDMAC(c), TCA_ERROR_INVALID_CHANNEL);
        RK_EXPECT(tcaGetDMAError(c, &e), TCA_ERROR_INVALID_CHANNEL);
    }
    RK_EXPECT(tcaGetDMAError(0, NULL), TCA_ERROR_INVALID_ARGUMENT);
    RK_EXPECT(tcaDestroyDMADesc(table), TCA_SUCCESS);
    RK_EXPECT(tcaDestroyDMADesc(table), TCA_ERROR_INVALID_DESC);
    RK_EXPECT(tcaStartDMADesc(2), TCA_ERROR_CHANNEL_NOT_SET);
    /* A chain freed while loaded in chain mode leaves its channel unset. */
    tcaDesc *once = tcaDescNew();
    if (!once)
        rk_fail("out of memory");
    RK_TCA(tcaDescSetMemcpy(once, &src.handle, 0, &src.handle, 8, 8, 0, 0, 0));
    RK_TCA(tcaDescSet(once, 2));
    RK_TCA(tcaDescFree(once));
    RK_EXPECT(tcaStartDMADesc(2), TCA_ERROR_CHANNEL_NOT_SET);
    RK_TCA(tcaDescFree(empty));
    /* Memory. */
    void *p = NULL;
    uint8_t local[64];
    tcaHandle h;
    RK_EXPECT(tcaMalloc(NULL, 64, tcaMemoryCPU), TCA_ERROR_INVALID_ARGUMENT);
    RK_EXPECT(tcaMalloc(&p, 0, tcaMemoryCPU), TCA_ERROR_INVALID_ARGUMENT);
    RK_EXPECT(tcaMalloc(&p, 64, (tcaMemoryKind)7), TCA_ERROR_INVALID_ARGUMENT);
    RK_EXPECT(tcaMalloc(&p, (size_t)1 << 40, tcaMemoryCPU), TCA_ERROR_OUT_OF_MEMORY);
    RK_EXPECT(tcaCreateHandle(&h, local, sizeof local, tcaMemoryCPU), TCA_ERROR_NOT_REGISTERED);
    RK_EXPECT(tcaCreateHandle(&h, src.bytes, 64, tcaMemoryGPU), TCA_ERROR_NOT_REGISTERED);
    RK_EXPECT(tcaCreateHandle(&h, src.bytes, 0, tcaMemoryCPU), TCA_ERROR_INVALID_ARGUMENT);
    RK_EXPECT(tcaFree(src.bytes + 64, tcaMemoryCPU), TCA_ERROR_NOT_REGISTERED);
    RK_EXPECT(tcaFree(gsrc.bytes, tcaMemoryCPU), TCA_ERROR_NOT_REGISTERED);
    RK_EXPECT(tcaFree(local, tcaMemoryCPU), TCA_ERROR_NOT_REGISTERED);
    /* PIO. */
    tcaPIOHandle pio;
    RK_EXPECT(tcaSetPIORegion(&pio, &gsrc.handle, 0, 8), TCA_ERROR_NOT_SUPPORTED);
    RK_EXPECT(tcaSetPIORegion(&pio, peer, BYTES - 4, 8), TCA_ERROR_OUT_OF_RANGE);
    RK_EXPECT(tcaSetPIORegion(&pio, peer, 0, 0), TCA_ERROR_INVALID_ARGUMENT);
    RK_TCA(tcaSetPIORegion(&pio, peer, BYTES - 8, 8));
    RK_EXPECT(tcaSendPIO(&pio, 1, src.bytes, 8), TCA_ERROR_OUT_OF_RANGE);
    RK_EXPECT(tcaSendPIO(&pio, 8, src.bytes, 1), TCA_ERROR_OUT_OF_RANGE);
    RK_EXPECT(tcaSendPIO(&pio, 0, src.bytes, 0), TCA_ERROR_INVALID_ARGUMENT);
    tcaPIOHandle wide = pio;
    wide.size = 1 << 20;
    RK_EXPECT(tcaSendPIO(&wide, 0, src.bytes, 64), TCA_ERROR_INVALID_HANDLE);
    RK_TCA(tcaSendPIOCommit());
}

/* A channel still running: loads and starts refused until it is idle; then
 * the next chain runs. Rank 0's own buffers only (rank 1 sees nothing). */
#define BUSY_SLOT 4
#define BUSY_COPIES 8
static void refuse_busy(void)
{
    tcaDesc *running = tcaDescNew(), *next = tcaDescNew();
    if (!running || !next)
        rk_fail("out of memory");
    /* Long enough to be running still when the calls below come. */
    for (int i = 0; i < BUSY_COPIES; i++)
        RK_TCA(tcaDescSetMemcpy(running, &dst.handle, 0, &src.handle, 0, BYTES, 0, 0, 0));
    RK_TCA(tcaDescSetMemcpy(next, &dst.handle, 0, &gsrc.handle, 0, BYTES, tcaDMANotifySelf,
                            BUSY_SLOT, TAG));
    int table, index = 0;
    RK_TCA(tcaCreateDMADesc(&table, 1));
    RK_TCA(tcaSetDMADesc_Memcpy(table, 0, &index, &dst.handle, 0, &src.handle, 0, 8, 0, 0, 0));
    RK_TCA(tcaDescSet(running, CHANNEL));
    RK_TCA(tcaStartDMADesc(CHANNEL));
    RK_EXPECT(tcaStartDMADesc(CHANNEL), TCA_ERROR_CHANNEL_BUSY);
    RK_EXPECT(tcaDescSet(next, CHANNEL), TCA_ERROR_CHANNEL_BUSY);
    RK_EXPECT(tcaSetDMAChain(CHANNEL, table), TCA_ERROR_CHANNEL_BUSY);
    rk_wait_channel(CHANNEL);
    rk_check(dst.bytes, BYTES, 7, 0, 0, "the running chain");
    /* Idle: `next` loads and runs; its notification tells the library it
     * ended, so it starts again without tcaWaitDMAC. */
    RK_TCA(tcaDescSet(next, CHANNEL));
    for (int round = 0; round < 2; round++) {
        memset(dst.bytes, 0, BYTES);
        RK_TCA(tcaStartDMADesc(CHANNEL));
        RK_TCA(tcaWaitDMARecvDesc(&dst.handle, BUSY_SLOT, TAG));
        rk_check(dst.bytes, BYTES, 8, 0, 0, "the chain started after the refusals");
    }
    RK_TCA(tcaSetDMAChain(CHANNEL, table));
    RK_TCA(tcaStartDMADesc(CHANNEL));
    rk_wait_channel(CHANNEL);
    RK_TCA(tcaDestroyDMADesc(table));
    RK_TCA(tcaDescFree(next));
    RK_TCA(tcaDescFree(running));
}

/* Rank 0: every refusal, then the accepted transfers of the chain they were
 * tried on, then a DMA from outside registered memory, then one more. */
static void caller(void)
{
    const tcaHandle *peer = &all[OWNER].dst;
    rk_fill(src.bytes, BYTES, 7, 0);
    rk_fill(gsrc.bytes, BYTES, 8, 0);
    check_status_strings();
    rk_signal_wait(); /* rank 1's guard bytes are in place */

    tcaDesc *d = tcaDescNew();
    if (!d)
        rk_fail("out of memory");
    /* The exact fits, last byte to first and first to last. */
    RK_TCA(tcaDescSetMemcpy(d, peer, BYTES - 1, &src.handle, 0, 1, 0, 0, 0));
    refuse_ranges(d, peer);
    refuse_handles(d, peer);
    refuse_arguments(d, peer);
    RK_TCA(tcaDescSetMemcpy(d, peer, 0, &src.handle, BYTES - 1, 1, tcaDMANotify, EDGE_SLOT, TAG));
    RK_TCA(tcaDescSet(d, CHANNEL));
    RK_TCA(tcaStartDMADesc(CHANNEL));
    rk_wait_channel(CHANNEL);
    RK_TCA(tcaDescFree(d));
    refuse_busy();

    /* Self-consistent handles to memory beyond this node's arenas. */
    p2_dev *dev = p2_device_get("peach2");
    if (!dev)
        rk_fail("no device");
    const tcaHandle forged[2] = {
        tca_handle_make(p2_node_base(dev->node) + P2_HOST_OFFSET + dev->host_size, 64,
                        tcaMemoryCPU, dev->node),
        tca_handle_make(p2_node_base(dev->node) + P2_GPU_OFFSET + dev->gpu_size, 64,
                        tcaMemoryGPU, dev->node),
    };
    /* The peer's last 32 exposed bytes, as a forged 64-byte destination. */
    const uint64_t peer_end = p2_node_base(peer->node) + P2_HOST_OFFSET + dev->host_size;
    const tcaHandle forged_dst = tca_handle_make(peer_end - 32, 64, tcaMemoryCPU, peer->node);
    d = tcaDescNew();
    if (!d)
        rk_fail("out of memory");
    for (int i = 0; i < 2; i++) {
        RK_EXPECT(tcaDescSetMemcpy(d, peer, 100, &forged[i], 0, 64, tcaDMANotify, FORGED_SLOT,
                                   TAG), TCA_ERROR_INVALID_HANDLE);
        p2_error e = raw_dma(forged[i].pcie_addr, peer->pcie_addr + 100, 64, FORGED_SLOT);
        if (e != P2_ERR_UNSUPPORTED)
            rk_fail("DMA from beyond the %s arena: error '%s', expected '%s'",
                    i ? "GPU" : "host", p2_error_name(e), p2_error_name(P2_ERR_UNSUPPORTED));
    }
    RK_EXPECT(tcaDescSetMemcpy(d, &forged_dst, 0, &src.handle, 0, 64, tcaDMANotify, FORGED_SLOT,
                               TAG), TCA_ERROR_INVALID_HANDLE);
    RK_EXPECT(tcaSetPIORegion(&(tcaPIOHandle){0}, &forged_dst, 0, 8), TCA_ERROR_INVALID_HANDLE);
    RK_TCA(tcaDescFree(d));
    /* Past the library: one byte over, and wholly beyond, the peer's memory. */
    const struct {
        uint64_t dst;
        uint32_t len;
    } beyond[] = {{peer_end - 32, 33}, {peer_end, 8}, {peer_end + 4096, 4096}};
    for (int i = 0; i < 3; i++) {
        p2_error e = raw_dma(src.handle.pcie_addr, beyond[i].dst, beyond[i].len, FORGED_SLOT);
        if (e != P2_ERR_DST_RANGE)
            rk_fail("DMA to beyond the peer's memory (case %d): error '%s', expected '%s'", i,
                    p2_error_name(e), p2_error_name(P2_ERR_DST_RANGE));
    }

    /* The channel still works, and reports no error for a good run. */
    rk_dma_once(CHANNEL, peer, AFTER_DST, &src.handle, AFTER_SRC, AFTER_BYTES, tcaDMANotify,
                AFTER_SLOT, TAG);
    p2_error e = P2_ERR_BUSY;
    RK_TCA(tcaGetDMAError(CHANNEL, &e));
    if (e != P2_OK)
        rk_fail("tcaGetDMAError after a good run: '%s'", p2_error_name(e));
    rk_signal_wait(); /* rank 1 has checked */
    printf("rank 0: every refusal as documented; DMA from outside registered memory failed "
           "with '%s', to outside it with '%s'\n",
           p2_error_name(P2_ERR_UNSUPPORTED), p2_error_name(P2_ERR_DST_RANGE));
}

/* Rank 1: only the accepted transfers arrived. */
static void owner(void)
{
    rk_guard(dst.bytes, 0, BYTES);
    rk_signal(&link);
    const tcaHandle *sender = &all[1 - OWNER].dst; /* whose DMA raises them */
    RK_TCA(tcaWaitDMARecvDesc(sender, EDGE_SLOT, TAG));
    RK_TCA(tcaWaitDMARecvDesc(sender, AFTER_SLOT, TAG));
    /* Expected: src[0] at the last byte, src[BYTES - 1] at the first, and
     * AFTER_BYTES from AFTER_SRC at AFTER_DST; guard bytes elsewhere. */
    rk_check(dst.bytes, 1, 7, BYTES - 1, 0, "first byte");
    rk_check_guard(dst.bytes, 1, AFTER_DST, "after refusals");
    rk_check(dst.bytes + AFTER_DST, AFTER_BYTES, 7, AFTER_SRC, AFTER_DST, "after a failed DMA");
    rk_check_guard(dst.bytes, AFTER_DST + AFTER_BYTES, BYTES - 1, "after refusals");
    rk_check(dst.bytes + BYTES - 1, 1, 7, 0, BYTES - 1, "last byte");
    RK_EXPECT(tcaTestDMARecvDesc(NULL, FORGED_SLOT, TAG), TCA_NOT_YET);
    RK_EXPECT(tcaTestDMARecvDesc(NULL, REFUSED_SLOT, REFUSED_TAG), TCA_NOT_YET);
    RK_EXPECT(tcaTestDMARecvDesc(NULL, 0, 0), TCA_NOT_YET);
    rk_signal(&link);
    printf("rank 1: only the accepted transfers arrived\n");
}

int main(void)
{
    rk_init(2);
    const int rank = p2_rank();
    if (p2_size() != 2)
        rk_fail("run with p2run -n 2");
    published mine = {0};
    rk_alloc(&dst, BYTES, tcaMemoryCPU);
    rk_alloc(&src, BYTES, tcaMemoryCPU);
    rk_alloc(&gsrc, BYTES, tcaMemoryGPU);
    rk_link_alloc(&link);
    mine.dst = dst.handle;
    mine.signal = link.mine.handle;
    RK_TCA(p2_exchange(&mine, all, sizeof mine));
    rk_link_connect(&link, &all[1 - rank].signal);
    if (rank == OWNER)
        owner();
    else
        caller();
    rk_link_close(&link);
    rk_release(&gsrc);
    rk_release(&src);
    rk_release(&dst);
    return 0;
}
