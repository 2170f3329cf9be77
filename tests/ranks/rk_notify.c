/*
 * rk_notify: DMA notifications by (slot, tag), p2run -n 2. Rank 0 sends,
 * rank 1 receives.
 *
 *  1. tcaTestDMARecvDesc says TCA_NOT_YET before anything is sent, then
 *     TCA_SUCCESS once the transfer has arrived (polled while the clock
 *     advances), then TCA_NOT_YET again (the notification was consumed). A
 *     test with the receiver's own handle never claims it: the handle names
 *     the node whose DMA raised the notification, the sender's.
 *  2. Transfers with different (slot, tag) pairs, one pair three times, are
 *     sent in one order and claimed in another (the last first), by waits and
 *     by tests, with different handles of the sender's node and NULL. Every
 *     pair then tests TCA_NOT_YET.
 *  3. tcaDMANotifySelf: the sender gets the notification (waited for with
 *     its own handle; the receiver's does not match), the receiver not; with
 *     tcaDMANotify | tcaDMANotifySelf both do.
 *  4. The pending table: TCA_NOTIFY_BACKLOG_MAX + 2 distinct pairs arrive;
 *     waiting for the last returns TCA_ERROR_NOTIFY_BACKLOG, and succeeds
 *     once a kept pair has been claimed; all the others are then claimed.
 * The data of every transfer is checked, and the guard bytes between them.
 *
 * With the argument `table` every transfer also carries
 * tcaDMAUseNotifyInternal, and the receiver turns its board's table on as the
 * out-of-order phase begins, while the sender's notifications are on their
 * way: some of them land in the ring, the rest in the table, and every wait
 * and test after that polls the table (NOTIFY_POP) and finds both. The
 * backlog phase then fills the table (256 entries) and spills into the ring.
 */
#include "rk_common.h"

#define SENDER 0
#define RECEIVER 1
#define CHANNEL 1
#define BUF_BYTES (64u << 10)
#define TEST_POLL_S 1e-7     /* clock advance between two tests */
#define TEST_POLL_MAX 100000 /* tests before giving up */

typedef struct published {
    tcaHandle dst, signal;
} published;

static rk_buf src, dst, other;
static published all[2];
static rk_link link;
static int rank;
static int table_flag; /* tcaDMAUseNotifyInternal with `table`, else 0 */

typedef struct pair {
    int slot, tag;
} pair;

/* Phase 2: sent in this order; (9, 0x200) three times; the last pair is
 * unique, so waiting for it first reads every earlier entry. */
static const pair pairs[] = {
    {0, 0},      {1, 0x100},          {9, 0x200},           {1, 0x101},
    {TCA_WAIT_SLOTS - 1, TCA_WAIT_TAG_MAX}, {9, 0x200},   {2, 0},
    {0, TCA_WAIT_TAG_MAX}, {9, 0x200}, {7, 7},
};
#define NPAIRS (sizeof pairs / sizeof pairs[0])

static size_t region_off(size_t i) { return 1 + 300 * i; }
static size_t region_len(size_t i) { return 100 + 17 * i; }

/* Sender: transfer i of a phase (seed), alone, flagged as asked. */
static void send(size_t i, uint32_t seed, int flags, int slot, int tag)
{
    rk_fill(src.bytes + region_off(i), region_len(i), seed, i * 1000);
    rk_dma_once(CHANNEL, &all[RECEIVER].dst, region_off(i), &src.handle, region_off(i),
                region_len(i), flags | table_flag, slot, tag);
}

/* Receiver: transfers [0, n) of a phase have landed, the rest is guard. */
static void check_regions(size_t n, uint32_t seed, const char *what)
{
    size_t at = 0;
    for (size_t i = 0; i < n; i++) {
        rk_check_guard(dst.bytes, at, region_off(i), what);
        rk_check(dst.bytes + region_off(i), region_len(i), seed, i * 1000, region_off(i), what);
        at = region_off(i) + region_len(i);
    }
    rk_check_guard(dst.bytes, at, BUF_BYTES, what);
}

static void phase_test_before_after(void)
{
    const int slot = 5, tag = 0x100;
    if (rank == RECEIVER) {
        rk_guard(dst.bytes, 0, BUF_BYTES);
        RK_EXPECT(tcaTestDMARecvDesc(&all[SENDER].dst, slot, tag), TCA_NOT_YET);
        RK_EXPECT(tcaTestDMARecvDesc(NULL, slot, tag), TCA_NOT_YET);
        rk_signal(&link); /* only now does the sender send */
        int polls = 0;
        tcaresult r;
        while ((r = tcaTestDMARecvDesc(&all[SENDER].dst, slot, tag)) == TCA_NOT_YET) {
            if (++polls == TEST_POLL_MAX)
                rk_fail("tcaTestDMARecvDesc: nothing after %d polls", polls);
            p2_compute(TEST_POLL_S);
        }
        RK_TCA(r);
        check_regions(1, 1, "test before and after");
        RK_EXPECT(tcaTestDMARecvDesc(&all[SENDER].dst, slot, tag), TCA_NOT_YET);
        printf("rank 1: TCA_NOT_YET before the send, TCA_SUCCESS after %d polls, then "
               "TCA_NOT_YET\n", polls);
    } else {
        rk_signal_wait();
        send(0, 1, tcaDMANotify, slot, tag);
    }
}

static void phase_out_of_order(void)
{
    if (rank == SENDER) {
        rk_signal_wait(); /* the receiver has reset its buffer */
        for (size_t i = 0; i < NPAIRS; i++)
            send(i, 2, tcaDMANotify, pairs[i].slot, pairs[i].tag);
        return;
    }
    rk_guard(dst.bytes, 0, BUF_BYTES);
    rk_signal(&link);
    if (table_flag) {
        /* Loading a chain that asks for the table turns it on: the sender's
         * first notifications are in the ring by now, the others go to the
         * table. The chain is never started. */
        tcaDesc *d = tcaDescNew();
        if (!d)
            rk_fail("out of memory");
        RK_TCA(tcaDescSetMemcpy(d, &other.handle, 0, &other.handle, 0, 8, tcaDMAUseNotifyInternal,
                                0, 0));
        RK_TCA(tcaDescSet(d, CHANNEL + 1));
        RK_TCA(tcaDescFree(d));
    }
    /* The last sent first: every earlier entry is read and kept meanwhile. */
    RK_TCA(tcaWaitDMARecvDesc(&all[SENDER].dst, pairs[NPAIRS - 1].slot, pairs[NPAIRS - 1].tag));
    check_regions(NPAIRS, 2, "out-of-order claims");
    /* This node's handles name this node's DMAs: none of the kept ones. */
    for (size_t i = 0; i + 1 < NPAIRS; i++) {
        RK_EXPECT(tcaTestDMARecvDesc(&dst.handle, pairs[i].slot, pairs[i].tag), TCA_NOT_YET);
        RK_EXPECT(tcaTestDMARecvDesc(&other.handle, pairs[i].slot, pairs[i].tag), TCA_NOT_YET);
    }
    /* Then from the end backwards, alternating waits and tests, with either
     * of the sender's handles or NULL. */
    for (size_t i = NPAIRS - 1; i-- > 0;) {
        const tcaHandle *h = i % 3 == 0   ? NULL
                             : i % 3 == 1 ? &all[SENDER].dst
                                          : &all[SENDER].signal;
        if (i % 2)
            RK_TCA(tcaWaitDMARecvDesc(h, pairs[i].slot, pairs[i].tag));
        else
            RK_TCA(tcaTestDMARecvDesc(h, pairs[i].slot, pairs[i].tag));
    }
    /* All consumed, the thrice-sent pair included. */
    for (size_t i = 0; i < NPAIRS; i++)
        RK_EXPECT(tcaTestDMARecvDesc(NULL, pairs[i].slot, pairs[i].tag), TCA_NOT_YET);
    printf("rank 1: %zu notifications claimed in reverse order\n", NPAIRS);
}

static void phase_notify_self(void)
{
    const pair self_only = {20, 0x100}, both = {21, 0x101};
    if (rank == SENDER) {
        rk_signal_wait();
        send(0, 3, tcaDMANotifySelf, self_only.slot, self_only.tag);
        /* As clients do: wait for the own completion with an own handle. */
        RK_EXPECT(tcaTestDMARecvDesc(&all[RECEIVER].dst, self_only.slot, self_only.tag),
                  TCA_NOT_YET);
        RK_TCA(tcaWaitDMARecvDesc(&src.handle, self_only.slot, self_only.tag));
        RK_EXPECT(tcaTestDMARecvDesc(NULL, self_only.slot, self_only.tag), TCA_NOT_YET);
        send(1, 3, tcaDMANotify | tcaDMANotifySelf, both.slot, both.tag);
        RK_TCA(tcaWaitDMARecvDesc(&all[SENDER].dst, both.slot, both.tag));
        RK_EXPECT(tcaTestDMARecvDesc(NULL, both.slot, both.tag), TCA_NOT_YET);
        rk_signal(&link); /* behind both transfers on the same path */
        printf("rank 0: self notifications received\n");
        return;
    }
    rk_guard(dst.bytes, 0, BUF_BYTES);
    rk_signal(&link);
    RK_TCA(tcaWaitDMARecvDesc(&all[SENDER].dst, both.slot, both.tag));
    rk_signal_wait();
    check_regions(2, 3, "notify-self");
    /* Self-only raised nothing here. */
    RK_EXPECT(tcaTestDMARecvDesc(NULL, self_only.slot, self_only.tag), TCA_NOT_YET);
    RK_EXPECT(tcaTestDMARecvDesc(NULL, both.slot, both.tag), TCA_NOT_YET);
}

#define NBACKLOG (TCA_NOTIFY_BACKLOG_MAX + 2)
static pair backlog_pair(size_t i) { return (pair){(int)(i % 50), 0x3000 + (int)i}; }

static void phase_backlog(void)
{
    if (rank == SENDER) {
        rk_signal_wait();
        /* One chain of NBACKLOG 8-byte transfers, each its own pair. */
        rk_fill(src.bytes, NBACKLOG * 8, 4, 0);
        tcaDesc *d = tcaDescNew();
        if (!d)
            rk_fail("out of memory");
        for (size_t i = 0; i < NBACKLOG; i++)
            RK_TCA(tcaDescSetMemcpy(d, &all[RECEIVER].dst, 8 * i, &src.handle, 8 * i, 8,
                                    tcaDMANotify, backlog_pair(i).slot, backlog_pair(i).tag));
        RK_TCA(tcaDescSet(d, CHANNEL));
        RK_TCA(tcaStartDMADesc(CHANNEL));
        rk_wait_channel(CHANNEL);
        RK_TCA(tcaDescFree(d));
        rk_signal_wait(); /* the receiver is done */
        return;
    }
    rk_guard(dst.bytes, 0, BUF_BYTES);
    rk_signal(&link);
    const pair last = backlog_pair(NBACKLOG - 1);
    /* Keeps NBACKLOG - 2 = TCA_NOTIFY_BACKLOG_MAX pairs, then meets one more. */
    RK_EXPECT(tcaWaitDMARecvDesc(NULL, last.slot, last.tag), TCA_ERROR_NOTIFY_BACKLOG);
    RK_TCA(tcaTestDMARecvDesc(NULL, backlog_pair(0).slot, backlog_pair(0).tag));
    RK_TCA(tcaWaitDMARecvDesc(NULL, last.slot, last.tag));
    rk_check(dst.bytes, NBACKLOG * 8, 4, 0, 0, "backlog transfers");
    rk_check_guard(dst.bytes, NBACKLOG * 8, BUF_BYTES, "backlog transfers");
    for (size_t i = 1; i < NBACKLOG - 1; i++)
        RK_TCA(tcaTestDMARecvDesc(NULL, backlog_pair(i).slot, backlog_pair(i).tag));
    for (size_t i = 0; i < NBACKLOG; i++)
        RK_EXPECT(tcaTestDMARecvDesc(NULL, backlog_pair(i).slot, backlog_pair(i).tag),
                  TCA_NOT_YET);
    rk_signal(&link);
    printf("rank 1: %d pending pairs kept, one more refused until a claim\n",
           TCA_NOTIFY_BACKLOG_MAX);
}

/* `lost`: both ranks turn their tables on and wait for a notification no one
 * sends. The job must end (--stall), not poll for ever. */
static void wait_for_nothing(void)
{
    tcaDesc *d = tcaDescNew();
    if (!d)
        rk_fail("out of memory");
    RK_TCA(tcaDescSetMemcpy(d, &other.handle, 0, &other.handle, 0, 8, tcaDMAUseNotifyInternal, 0,
                            0));
    RK_TCA(tcaDescSet(d, CHANNEL));
    printf("rank %d: waiting for a notification no one sends\n", rank);
    fflush(stdout); /* the job ends while this rank waits */
    tcaresult r = tcaWaitDMARecvDesc(&all[1 - rank].dst, 3, 7);
    rk_fail("the wait for nothing returned %d", (int)r);
}

int main(int argc, char **argv)
{
    table_flag = argc > 1 && !strcmp(argv[1], "table") ? tcaDMAUseNotifyInternal : 0;
    const int lost = argc > 1 && !strcmp(argv[1], "lost");
    rk_init(2);
    rank = p2_rank();
    if (p2_size() != 2)
        rk_fail("run with p2run -n 2");
    published mine = {0};
    if (rank == SENDER)
        rk_alloc(&src, BUF_BYTES, tcaMemoryCPU);
    rk_alloc(&dst, BUF_BYTES, tcaMemoryCPU);
    rk_alloc(&other, 64, tcaMemoryGPU);
    rk_link_alloc(&link);
    mine.dst = dst.handle;
    mine.signal = link.mine.handle;
    RK_TCA(p2_exchange(&mine, all, sizeof mine));
    rk_link_connect(&link, &all[1 - rank].signal);
    if (lost)
        wait_for_nothing();

    phase_test_before_after();
    phase_out_of_order();
    phase_notify_self();
    phase_backlog();

    printf("rank %d: notifications all right\n", rank);
    rk_link_close(&link);
    rk_release(&other);
    rk_release(&dst);
    rk_release(&src);
    return 0;
}
