/*
 * rk_chain: descriptor chains and block-stride transfers from rank 0 to
 * ranks 0, 1 and 2 (p2run -n 3), every destination byte and the guard bytes
 * between the transfers checked.
 *
 *   rk_chain chain      one chain of transfers to several ranks, buffers and
 *                       offsets, started once: in chain mode (descriptors in
 *                       host memory), in register mode (tcaDMAUseInternal on
 *                       one transfer), a chain of exactly TCA_DMA_REG_DESCS
 *                       transfers in register mode, one of TCA_DMA_REG_DESCS + 1
 *                       refused (TCA_ERROR_CHAIN_TOO_LONG), and a 40-transfer
 *                       chain in chain mode; then the same under
 *                       tcaDMADescInt_Init.
 *   rk_chain persistent a chain built and loaded once and started many times,
 *                       the source changing between starts, in chain mode and
 *                       in register mode.
 *   rk_chain stride2d   tcaDescSetMemcpy2D: many width / count / pitch shapes
 *                       (gaps in the destination, in the source, zero source
 *                       pitch, one block), mixed with 1-D transfers in one
 *                       chain, both modes; and its argument checks.
 *
 * A "plan" is a list of transfers from rank 0. Each round, every destination
 * rank covers its destination buffers with guard bytes and says ready, rank 0
 * runs the chain, and every destination rank waits for its transfers'
 * notifications, then compares its buffers, up to a margin past the last
 * transfer, with the image they must hold: guard bytes except where a
 * transfer landed.
 */
#include <string.h>

#include "rk_common.h"

#define RANKS 3
#define SENDER 0
#define CHANNEL 0
#define BUF_BYTES (2u << 20)
#define MARGIN 256

typedef struct xfer {
    int dst_rank;
    tcaMemoryKind dk, sk;
    size_t doff, soff;
    size_t width;
    size_t count; /* 0: a 1-D transfer (tcaDescSetMemcpy) of `width` bytes */
    size_t dpitch, spitch;
} xfer;

typedef struct published {
    tcaHandle dst[2];
    tcaHandle signal;
} published;

static rk_buf src[2], dst[2];
static published all[RANKS];
static rk_link link;
static int rank;
static uint32_t round_no;

static int slot_of(size_t i) { return 1 + (int)(i % 8); }
static int tag_of(size_t i) { return 0x100 + (int)i; }

static size_t blocks(const xfer *x) { return x->count ? x->count : 1; }

/* One past the last destination byte of x. */
static size_t dst_end(const xfer *x)
{
    return x->doff + (blocks(x) - 1) * x->dpitch + x->width;
}

static uint32_t src_seed(tcaMemoryKind k) { return round_no * 2 + (uint32_t)k + 1; }

/* Appends the plan's transfers to a chain; `first_flags` go on the first. */
static tcaDesc *build(const xfer *plan, size_t n, int first_flags)
{
    tcaDesc *d = tcaDescNew();
    if (!d)
        rk_fail("tcaDescNew: out of memory");
    for (size_t i = 0; i < n; i++) {
        const xfer *x = &plan[i];
        int flags = tcaDMANotify | (i == 0 ? first_flags : 0);
        const tcaHandle *to = &all[x->dst_rank].dst[x->dk];
        if (x->count)
            RK_TCA(tcaDescSetMemcpy2D(d, to, x->doff, x->dpitch, &src[x->sk].handle, x->soff,
                                      x->spitch, x->width, x->count, flags, slot_of(i),
                                      tag_of(i)));
        else
            RK_TCA(tcaDescSetMemcpy(d, to, x->doff, &src[x->sk].handle, x->soff, x->width,
                                    flags, slot_of(i), tag_of(i)));
    }
    return d;
}

/* How far each of this rank's destination buffers is used by the plan. */
static void extents(const xfer *plan, size_t n, size_t ext[2])
{
    ext[0] = ext[1] = 0;
    for (size_t i = 0; i < n; i++) {
        if (plan[i].dst_rank != rank)
            continue;
        size_t e = dst_end(&plan[i]) + MARGIN;
        if (e > BUF_BYTES)
            rk_fail("plan transfer %zu ends beyond the buffer", i);
        if (e > ext[plan[i].dk])
            ext[plan[i].dk] = e;
    }
}

/* Before a round: guard bytes, then "ready" to the sender. */
static void prepare(const xfer *plan, size_t n)
{
    size_t ext[2];
    extents(plan, n, ext);
    for (int k = 0; k < 2; k++)
        rk_guard(dst[k].bytes, 0, ext[k]);
    if (rank == SENDER) {
        for (int k = 0; k < 2; k++)
            rk_fill(src[k].bytes, BUF_BYTES, src_seed((tcaMemoryKind)k), 0);
        for (int r = 0; r < RANKS; r++)
            if (r != SENDER)
                rk_signal_wait();
    } else {
        rk_signal(&link);
    }
}

/* After a round: this rank's notifications, raised by the sender's DMAC
 * (last first: the pending table keeps the others), then every byte of its
 * destination buffers. */
static void verify(const xfer *plan, size_t n, const char *what)
{
    for (size_t i = n; i-- > 0;)
        if (plan[i].dst_rank == rank)
            RK_TCA(tcaWaitDMARecvDesc(&all[SENDER].dst[plan[i].dk], slot_of(i), tag_of(i)));
    size_t ext[2];
    extents(plan, n, ext);
    for (int k = 0; k < 2; k++) {
        if (!ext[k])
            continue;
        /* The image: guard bytes, and the source bytes where blocks land. */
        uint8_t *want = malloc(ext[k]);
        if (!want)
            rk_fail("out of memory");
        rk_guard(want, 0, ext[k]);
        for (size_t i = 0; i < n; i++) {
            const xfer *x = &plan[i];
            if (x->dst_rank != rank || x->dk != (tcaMemoryKind)k)
                continue;
            for (size_t b = 0; b < blocks(x); b++)
                rk_fill(want + x->doff + b * x->dpitch, x->width, src_seed(x->sk),
                        x->soff + b * x->spitch);
        }
        for (size_t j = 0; j < ext[k]; j++) {
            if (dst[k].bytes[j] == want[j])
                continue;
            size_t wrong = 0;
            for (size_t m = j; m < ext[k]; m++)
                wrong += dst[k].bytes[m] != want[m];
            rk_fail("%s, round %u: %s buffer: %zu bytes wrong, first at offset %zu (got 0x%02x, "
                    "want 0x%02x)",
                    what, round_no, rk_kind_name((tcaMemoryKind)k), wrong, j, dst[k].bytes[j],
                    want[j]);
        }
        free(want);
    }
}

/* Runs the plan `starts` times from one chain, loaded once. Returns the
 * simulated time of the first start to idle at the sender (0 elsewhere). */
static double run(const xfer *plan, size_t n, int first_flags, int starts, const char *what)
{
    tcaDesc *d = rank == SENDER ? build(plan, n, first_flags) : NULL;
    double first = 0;
    for (int s = 0; s < starts; s++) {
        round_no++;
        prepare(plan, n);
        if (rank == SENDER) {
            if (s == 0)
                RK_TCA(tcaDescSet(d, CHANNEL));
            double t0 = p2_wtime();
            RK_TCA(tcaStartDMADesc(CHANNEL));
            rk_wait_channel(CHANNEL);
            if (s == 0)
                first = p2_wtime() - t0;
        }
        verify(plan, n, what);
    }
    if (d)
        RK_TCA(tcaDescFree(d));
    return first;
}

/* ---- Plans ---------------------------------------------------------------------- */

#define C tcaMemoryCPU
#define G tcaMemoryGPU

/* To three ranks (0 is a local copy), both kinds, odd offsets and sizes. */
static const xfer mixed[] = {
    {1, C, C, 5, 1, 1000, 0, 0, 0},
    {2, C, C, 7, 3, 4097, 0, 0, 0},
    {1, G, C, 3, 13, 65537, 0, 0, 0},
    {0, C, C, 9, 20001, 333, 0, 0, 0},
    {2, G, G, 1, 7, 8, 0, 0, 0},
    {1, C, G, 2000, 100, 17, 0, 0, 0},
    {2, C, G, 5000, 1, 1, 0, 0, 0},
    {0, G, C, 64, 70000, 4095, 0, 0, 0},
};
#define NMIXED (sizeof mixed / sizeof mixed[0])

/* n transfers of 3 + i bytes, round robin over ranks 1, 2 and 0, packed with
 * 5-byte gaps into the destination buffers. */
static xfer *packed(size_t n)
{
    xfer *p = calloc(n, sizeof *p);
    size_t next[RANKS] = {1, 1, 1};
    if (!p)
        rk_fail("out of memory");
    for (size_t i = 0; i < n; i++) {
        int r = (int)((i + 1) % RANKS);
        p[i] = (xfer){.dst_rank = r, .dk = i % 4 == 3 ? G : C, .sk = i % 5 == 4 ? G : C,
                      .doff = next[r], .soff = 11 * i + 1, .width = 3 + i};
        next[r] += p[i].width + 5;
    }
    return p;
}

static const xfer shapes[] = {
    /* one byte every 5, read one every 3 */
    {1, C, C, 3, 1, 1, 1000, 5, 3},
    /* contiguous source, 13-byte blocks spread 64 apart */
    {1, C, C, 5001, 0, 13, 17, 64, 13},
    /* one-byte gaps in the destination, wider ones in the source */
    {1, G, C, 1, 3, 100, 50, 101, 128},
    /* blocks above 4 KiB */
    {2, C, C, 7, 13, 4097, 3, 5000, 8192},
    /* many small blocks into GPU memory */
    {2, G, C, 9, 5, 8, 4096, 16, 8},
    /* a single block */
    {2, C, G, 20000, 3, 77, 1, 1000, 1000},
    /* source pitch 0: the same block, repeated */
    {1, C, G, 9000, 21, 32, 20, 40, 0},
    /* a local 2-D copy, destination pitch below the source's */
    {0, G, C, 1, 1, 7, 300, 9, 11},
    /* a 1-D transfer in the same chain */
    {1, C, C, 12000, 33, 999, 0, 0, 0},
    /* a megabyte in 16 blocks of 64 KiB, one byte apart */
    {2, G, G, 70001, 1, 65536, 16, 65537, 65536 + 3},
};
#define NSHAPES (sizeof shapes / sizeof shapes[0])

/* ---- Modes ---------------------------------------------------------------------- */

static void refused_too_long(size_t n, int flags)
{
    if (rank != SENDER)
        return;
    xfer *p = packed(n);
    tcaDesc *d = build(p, n, flags);
    RK_EXPECT(tcaDescSet(d, CHANNEL), TCA_ERROR_CHAIN_TOO_LONG);
    RK_TCA(tcaDescFree(d));
    free(p);
}

static void mode_chain(void)
{
    double chain_s = run(mixed, NMIXED, 0, 1, "mixed chain, chain mode");
    double reg_s = run(mixed, NMIXED, tcaDMAUseInternal, 1, "mixed chain, register mode");
    if (rank == SENDER) {
        printf("rank 0: %zu-transfer chain: %.3f us in chain mode, %.3f us in register mode\n",
               NMIXED, chain_s * 1e6, reg_s * 1e6);
        /* Register mode fetches no descriptors over PCIe. */
        if (!(reg_s < chain_s))
            rk_fail("register mode (%.3f us) is not faster than chain mode (%.3f us)",
                    reg_s * 1e6, chain_s * 1e6);
    }
    xfer *full = packed(TCA_DMA_REG_DESCS);
    run(full, TCA_DMA_REG_DESCS, tcaDMAUseInternal, 1, "16-transfer chain, register mode");
    free(full);
    refused_too_long(TCA_DMA_REG_DESCS + 1, tcaDMAUseInternal);
    xfer *longer = packed(40);
    run(longer, 40, 0, 1, "40-transfer chain, chain mode");

    /* From here on every chain goes into the registers. */
    RK_TCA(tcaDMADescInt_Init());
    run(mixed, NMIXED, 0, 1, "mixed chain, tcaDMADescInt_Init");
    refused_too_long(TCA_DMA_REG_DESCS + 1, 0);
    refused_too_long(40, 0);
    run(longer, TCA_DMA_REG_DESCS, 0, 1, "16-transfer chain, tcaDMADescInt_Init");
    free(longer);
}

static void mode_persistent(void)
{
    run(mixed, NMIXED, 0, 25, "persistent chain, chain mode");
    run(mixed, NMIXED, tcaDMAUseInternal, 25, "persistent chain, register mode");
}

/* tcaDescSetMemcpy2D's checks, on a handle of exactly 1000 bytes. */
static void stride2d_checks(void)
{
    if (rank != SENDER)
        return;
    tcaHandle h;
    RK_TCA(tcaCreateHandle(&h, src[C].bytes, 1000, C));
    const tcaHandle *to = &all[1].dst[C];
    tcaDesc *d = tcaDescNew();
    if (!d)
        rk_fail("out of memory");
    /* The last block ends exactly at the end: accepted. 10 blocks of 10 every 110. */
    RK_TCA(tcaDescSetMemcpy2D(d, to, 0, 100, &h, 0, 110, 10, 10, 0, 0, 0));
    RK_TCA(tcaDescSetMemcpy2D(d, &h, 0, 110, &h, 0, 110, 10, 10, 0, 0, 0));
    /* One byte further: refused, on either side. */
    RK_EXPECT(tcaDescSetMemcpy2D(d, to, 0, 100, &h, 1, 110, 10, 10, 0, 0, 0),
              TCA_ERROR_OUT_OF_RANGE);
    RK_EXPECT(tcaDescSetMemcpy2D(d, to, 0, 100, &h, 0, 111, 10, 10, 0, 0, 0),
              TCA_ERROR_OUT_OF_RANGE);
    RK_EXPECT(tcaDescSetMemcpy2D(d, &h, 1, 110, &h, 0, 1, 10, 10, 0, 0, 0),
              TCA_ERROR_OUT_OF_RANGE);
    /* (count - 1) * pitch overflows. */
    RK_EXPECT(tcaDescSetMemcpy2D(d, to, 0, SIZE_MAX / 2, &h, 0, 1, 1, 4, 0, 0, 0),
              TCA_ERROR_OUT_OF_RANGE);
    RK_EXPECT(tcaDescSetMemcpy2D(d, to, 0, 1, &h, 0, 1, 0, 3, 0, 0, 0),
              TCA_ERROR_INVALID_ARGUMENT);
    RK_EXPECT(tcaDescSetMemcpy2D(d, to, 0, 1, &h, 0, 1, 1, 0, 0, 0, 0),
              TCA_ERROR_INVALID_ARGUMENT);
    RK_EXPECT(tcaDescSetMemcpy2D(d, to, 0, 0, &h, 0, 0, 1, (size_t)UINT32_MAX + 1, 0, 0, 0),
              TCA_ERROR_TOO_LARGE);
    RK_EXPECT(tcaDescSetMemcpy2D(d, to, 0, 1, &h, 0, 1, 1, 1, 0, TCA_WAIT_SLOTS, 0),
              TCA_ERROR_INVALID_SLOT);
    RK_EXPECT(tcaDescSetMemcpy2D(d, to, 0, 1, &h, 0, 1, 1, 1, 0, 0, TCA_WAIT_TAG_MAX + 1),
              TCA_ERROR_INVALID_TAG);
    RK_EXPECT(tcaDescSetMemcpy2D(d, &h, 0, 1, to, 0, 1, 1, 1, 0, 0, 0),
              TCA_ERROR_REMOTE_SOURCE);
    RK_TCA(tcaDescFree(d));
    RK_TCA(tcaDestroyHandle(&h));
}

static void mode_stride2d(void)
{
    stride2d_checks();
    run(shapes, NSHAPES, 0, 1, "block-stride chain, chain mode");
    run(shapes, NSHAPES, tcaDMAUseInternal, 3, "block-stride chain, register mode");
    for (size_t i = 0; i < NSHAPES; i++) /* each shape on its own */
        run(&shapes[i], 1, 0, 1, "one block-stride transfer");
}

int main(int argc, char **argv)
{
    const char *mode = argc > 1 ? argv[1] : "";
    rk_init(RANKS);
    rank = p2_rank();
    if (p2_size() != RANKS)
        rk_fail("run with p2run -n %d", RANKS);
    published mine = {0};
    for (int k = 0; k < 2; k++) {
        if (rank == SENDER)
            rk_alloc(&src[k], BUF_BYTES, (tcaMemoryKind)k);
        rk_alloc(&dst[k], BUF_BYTES, (tcaMemoryKind)k);
        mine.dst[k] = dst[k].handle;
    }
    rk_link_alloc(&link);
    mine.signal = link.mine.handle;
    RK_TCA(p2_exchange(&mine, all, sizeof mine));
    if (rank != SENDER)
        rk_link_connect(&link, &all[SENDER].signal);

    if (strcmp(mode, "chain") == 0)
        mode_chain();
    else if (strcmp(mode, "persistent") == 0)
        mode_persistent();
    else if (strcmp(mode, "stride2d") == 0)
        mode_stride2d();
    else
        rk_fail("usage: rk_chain chain|persistent|stride2d");

    printf("rank %d: %s: %u rounds, all bytes right\n", rank, mode, round_no);
    rk_link_close(&link);
    for (int k = 0; k < 2; k++) {
        rk_release(&src[k]);
        rk_release(&dst[k]);
    }
    return 0;
}
