/*
 * qcomm_tca.c - qcomm's TCA transport: QUDA's point-to-point over PEACH2
 * one-sided writes, as the QUDA port to HA-PACS/TCA built it.
 *
 *   receiver                                 sender
 *   comm_start(recv):                        comm_start(send): queued for the
 *     notice {buffer's tcaHandle, offset,      progress thread
 *     size, seq} --PIO--> remote address     progress thread: polls the slots of
 *     slot [receiver][tag] at the sender       its started sends (p2_test_u64 on
 *                                              the notice's seq word); once a
 *                                              slot holds this start's seq:
 *                                              one chain on a DMAC channel:
 *                    <--DMA-- data             1. data, send buffer -> notice's
 *     flag [sender][tag] = seq <--DMA--        2. seq -> receiver's flag word
 *   comm_wait(recv): p2_wait_u64(flag, seq)    3. seq -> own "sent" word, with a
 *                                                 notification (channel idle)
 *                                            comm_wait(send): p2_wait_u64(sent, seq)
 *
 * The slots, flags and "sent" words are CPU memory (tcaMalloc), one region
 * per rank whose handle every rank learns at comm_init (p2_exchange); slots
 * are per (receiver, tag), so every receive can be announced before its
 * send starts. Data moves between the buffers the handles were declared on
 * (GPU memory from tcaMalloc(tcaMemoryGPU) or cudaMalloc, or host memory).
 * The notice is 64 bytes of PIO (its seq word last: PIO lands in address
 * order); the chain is built once per destination and stays loaded on its
 * channel while no other send uses it (persistent, as the published code).
 * Its three descriptors are held in the chip's registers (tcaDMAUseInternal,
 * "register mode", which TCA programs choose for latency: no descriptor
 * fetch from host memory); QCOMM_TCA_REGISTERS=0 keeps them in host memory.
 *
 * The progress thread owns every DMAC channel and the notification calls.
 * It and the program's threads share only the queue of started sends, under
 * p2_lock (the simulator hands it out in simulated-time order, so the thread
 * picks up a start at the same simulated time on every run); with nothing to
 * serve it sleeps in pthread_cond_wait (its lane parked) until a start wakes
 * it. Its poll is a loop of p2_test_u64, each costing what a CPU's poll of a
 * word costs (lib_call_ns + poll_detect_ns).
 *
 * Depends on qcomm_internal.h, tca-api.h and p2.h.
 */
#include <pthread.h>
#include <stdlib.h>
#include <string.h>

#include "p2.h"
#include "qcomm_internal.h"
#include "tca-api.h"

/* The remote address notice a receiver writes into the sender's slot. */
typedef struct qt_notice {
    tcaHandle dst;       /* the receive buffer's region */
    uint64_t dst_offset; /* where in it the data goes */
    uint64_t nbytes;     /* the receive buffer's size */
    uint64_t reserved;
    uint64_t seq;        /* the receive's start number; written last */
} qt_notice;
_Static_assert(sizeof(qt_notice) == 64, "a notice is 64 bytes of PIO");

/* The chain's last transfer notifies this node (slot QT_SLOT + channel,
 * QT_TAG): the sign that the channel is idle again. High slots, so programs'
 * own usual small ones stay theirs. */
#define QT_SLOT (TCA_WAIT_SLOTS - TCA_DMA_CHANNELS)
#define QT_TAG 0x9c0

typedef struct qt_handle {
    tcaHandle buf;          /* the declared buffer */
    tcaPIOHandle pio;       /* receive: onto the sender's slot [me][tag] */
    tcaDesc *chain;         /* send: built for chain_dst + chain_offset */
    tcaHandle chain_dst;
    uint64_t chain_offset;
    uint64_t chain_id;      /* which chain a channel holds (never reused) */
    int channel;
    MsgHandle *mh;
    struct qt_handle *next; /* the queue, the thread's pending list, the graveyard */
} qt_handle;

static struct {
    uint8_t *region;        /* this rank's slots and flags */
    size_t region_bytes;
    tcaHandle mine;
    tcaHandle *regions;     /* every rank's */
    /* Under p2_lock: */
    qt_handle *queue, **queue_tail, *graveyard;
    int sleeping, stop;
    /* The thread's wake-up (its lane parks in pthread_cond_wait). */
    pthread_mutex_t mutex;
    pthread_cond_t cond;
    int wake;
    pthread_t thread;
    /* The thread's own. */
    uint64_t loaded[TCA_DMA_CHANNELS]; /* chain_id loaded on each channel */
    int busy[TCA_DMA_CHANNELS];
    uint64_t chains;
    int sends;
    int registers;          /* descriptors in the chip's registers (QCOMM_TCA_REGISTERS, default 1) */
} T;

/* The region: notices [receiver][tag], then flags [sender][tag], "sent"
 * words [receiver][tag] and the seq each send's chain copies [receiver][tag]. */
static size_t notice_at(int rank, int tag) { return qc_pair(rank, tag) * sizeof(qt_notice); }
static size_t words_base(void) { return (size_t)qc.size * QCOMM_TAGS * sizeof(qt_notice); }
static size_t flag_at(int rank, int tag) { return words_base() + qc_pair(rank, tag) * 8u; }
static size_t sent_at(int rank, int tag)
{
    return words_base() + ((size_t)qc.size * QCOMM_TAGS + qc_pair(rank, tag)) * 8u;
}
static size_t seq_at(int rank, int tag)
{
    return words_base() + ((size_t)2 * qc.size * QCOMM_TAGS + qc_pair(rank, tag)) * 8u;
}
static volatile uint64_t *word(size_t offset) { return (volatile uint64_t *)(T.region + offset); }

static void check(const char *call, tcaresult r)
{
    if (r != TCA_SUCCESS)
        qc_fail(call, "%s", tcaGetErrorString(r));
}

/* ---- The progress thread ---------------------------------------------------- */

static void channel_idle(int ch)
{
    if (T.busy[ch]) {
        check("progress thread: tcaWaitDMARecvDesc",
              tcaWaitDMARecvDesc(&T.mine, QT_SLOT + ch, QT_TAG));
        T.busy[ch] = 0;
    }
}

/* The chain for h's destination: data, the receiver's flag, our "sent"
 * word (notifying us). */
static void build_chain(qt_handle *h, const qt_notice *n)
{
    const char *call = "progress thread: chain";
    MsgHandle *mh = h->mh;
    if (h->chain) {
        for (int ch = 0; ch < TCA_DMA_CHANNELS; ch++)
            if (T.loaded[ch] == h->chain_id)
                channel_idle(ch), T.loaded[ch] = 0;
        check(call, tcaDescFree(h->chain));
    }
    h->chain = tcaDescNew();
    if (!h->chain)
        qc_fail(call, "out of memory");
    size_t seq = seq_at(mh->peer, mh->tag);
    int mode = T.registers ? tcaDMAUseInternal : 0;
    check(call, tcaDescSetMemcpy(h->chain, &n->dst, n->dst_offset, &h->buf, 0, mh->nbytes, mode,
                                 0, 0));
    check(call, tcaDescSetMemcpy(h->chain, &T.regions[mh->peer], flag_at(qc.rank, mh->tag),
                                 &T.mine, seq, 8, mode, 0, 0));
    check(call, tcaDescSetMemcpy(h->chain, &T.mine, sent_at(mh->peer, mh->tag), &T.mine, seq, 8,
                                 mode | tcaDMANotify, QT_SLOT + h->channel, QT_TAG));
    h->chain_dst = n->dst;
    h->chain_offset = n->dst_offset;
    h->chain_id = ++T.chains;
}

/* A started send whose receiver's notice has arrived: its chain runs. */
static void serve(qt_handle *h)
{
    MsgHandle *mh = h->mh;
    qt_notice n;
    memcpy(&n, T.region + notice_at(mh->peer, mh->tag), sizeof n);
    if (n.nbytes < mh->nbytes)
        qc_fail("comm_start", "send of %zu bytes to rank %d (tag %d) into a receive buffer of "
                "%llu bytes", mh->nbytes, mh->peer, mh->tag, (unsigned long long)n.nbytes);
    if (!h->chain || memcmp(&n.dst, &h->chain_dst, sizeof n.dst) != 0 ||
        n.dst_offset != h->chain_offset)
        build_chain(h, &n);
    int ch = h->channel;
    channel_idle(ch);
    *word(seq_at(mh->peer, mh->tag)) = mh->seq; /* what steps 2 and 3 copy */
    if (T.loaded[ch] != h->chain_id) {
        check("progress thread: tcaDescSet", tcaDescSet(h->chain, ch));
        T.loaded[ch] = h->chain_id;
    }
    check("progress thread: tcaStartDMADesc", tcaStartDMADesc(ch));
    T.busy[ch] = 1;
}

static void park(void)
{
    pthread_mutex_lock(&T.mutex);
    while (!T.wake)
        pthread_cond_wait(&T.cond, &T.mutex);
    T.wake = 0;
    pthread_mutex_unlock(&T.mutex);
}

static void wake_thread(void)
{
    pthread_mutex_lock(&T.mutex);
    T.wake = 1;
    pthread_cond_signal(&T.cond);
    pthread_mutex_unlock(&T.mutex);
}

static void *progress(void *unused)
{
    (void)unused;
    qt_handle *pending = NULL, **tail = &pending;
    for (;;) {
        check("progress thread: p2_lock", p2_lock());
        if (T.queue) {
            *tail = T.queue;
            tail = T.queue_tail;
            T.queue = NULL;
            T.queue_tail = &T.queue;
        }
        int stop = T.stop && !pending, idle = !pending && !T.stop;
        T.sleeping = idle;
        check("progress thread: p2_unlock", p2_unlock());
        if (stop)
            break;
        if (idle) {
            park();
            continue;
        }
        /* One pass of the poll over the started sends, oldest first. */
        for (qt_handle **p = &pending; *p;) {
            qt_handle *h = *p;
            const volatile uint64_t *seq = word(notice_at(h->mh->peer, h->mh->tag) +
                                                offsetof(qt_notice, seq));
            tcaresult r = p2_test_u64(seq, h->mh->seq);
            if (r == TCA_NOT_YET) {
                p = &h->next;
                continue;
            }
            check("progress thread: p2_test_u64", r);
            *p = h->next;
            h->next = NULL;
            if (tail == &h->next)
                tail = p;
            serve(h);
        }
    }
    for (int ch = 0; ch < TCA_DMA_CHANNELS; ch++)
        channel_idle(ch);
    return NULL;
}

/* ---- The transport's operations -------------------------------------------------- */

static void tca_init(void)
{
    const char *call = "comm_init (tca)";
    check(call, tcaInit());
    const char *registers = getenv("QCOMM_TCA_REGISTERS");
    if (registers && strcmp(registers, "0") != 0 && strcmp(registers, "1") != 0)
        qc_fail(call, "QCOMM_TCA_REGISTERS='%s': 1 (descriptors in the chip's registers, "
                "tcaDMAUseInternal: the default) or 0 (in host memory)", registers);
    T.registers = !registers || strcmp(registers, "1") == 0;
    T.region_bytes = words_base() + (size_t)3 * qc.size * QCOMM_TAGS * 8u;
    check(call, tcaMalloc((void **)&T.region, T.region_bytes, tcaMemoryCPU));
    memset(T.region, 0, T.region_bytes);
    check(call, tcaCreateHandle(&T.mine, T.region, T.region_bytes, tcaMemoryCPU));
    T.regions = calloc((size_t)qc.size, sizeof *T.regions);
    if (!T.regions)
        qc_fail(call, "out of memory");
    check(call, p2_exchange(&T.mine, T.regions, sizeof T.mine));
    T.queue = NULL;
    T.queue_tail = &T.queue;
    pthread_mutex_init(&T.mutex, NULL);
    pthread_cond_init(&T.cond, NULL);
    if (pthread_create(&T.thread, NULL, progress, NULL) != 0)
        qc_fail(call, "cannot start the progress thread");
}

static void free_graveyard(void)
{
    while (T.graveyard) {
        qt_handle *h = T.graveyard;
        T.graveyard = h->next;
        if (h->chain)
            tcaDescFree(h->chain);
        tcaDestroyHandle(&h->buf);
        free(h);
    }
}

static void tca_finalize(void)
{
    const char *call = "comm_finalize (tca)";
    check(call, p2_lock());
    T.stop = 1;
    int sleeping = T.sleeping;
    T.sleeping = 0;
    check(call, p2_unlock());
    if (sleeping)
        wake_thread();
    pthread_join(T.thread, NULL);
    free_graveyard();
    /* No rank's region goes before every rank is done writing into others'. */
    check(call, p2_exchange_barrier());
    check(call, tcaDestroyHandle(&T.mine));
    check(call, tcaFree(T.region, tcaMemoryCPU));
    free(T.regions);
    pthread_cond_destroy(&T.cond);
    pthread_mutex_destroy(&T.mutex);
    memset(&T, 0, sizeof T);
}

static void tca_barrier(void) { check("comm_barrier (tca)", p2_exchange_barrier()); }

static void tca_declare(MsgHandle *mh)
{
    const char *call = mh->send ? "comm_declare_send (tca)" : "comm_declare_receive (tca)";
    qt_handle *h = calloc(1, sizeof *h);
    if (!h)
        qc_fail(call, "out of memory");
    h->mh = mh;
    /* GPU memory or host memory, whichever the library registered. */
    tcaresult r = tcaCreateHandle(&h->buf, mh->buffer, mh->nbytes, tcaMemoryGPU);
    if (r == TCA_ERROR_NOT_REGISTERED)
        r = tcaCreateHandle(&h->buf, mh->buffer, mh->nbytes, tcaMemoryCPU);
    if (r == TCA_ERROR_NOT_REGISTERED)
        qc_fail(call, "the buffer (%zu bytes) is not memory from tcaMalloc or cudaMalloc",
                mh->nbytes);
    check(call, r);
    if (mh->send)
        h->channel = T.sends++ % TCA_DMA_CHANNELS;
    else
        check(call, tcaSetPIORegion(&h->pio, &T.regions[mh->peer], notice_at(qc.rank, mh->tag),
                                    sizeof(qt_notice)));
    mh->impl = h;
}

static void tca_start(MsgHandle *mh)
{
    qt_handle *h = mh->impl;
    if (!mh->send) {
        qt_notice n = {.dst = h->buf, .dst_offset = 0, .nbytes = mh->nbytes, .seq = mh->seq};
        check("comm_start (tca)", tcaSendPIO(&h->pio, 0, &n, sizeof n));
        check("comm_start (tca)", tcaSendPIOCommit());
        return;
    }
    check("comm_start (tca)", p2_lock());
    h->next = NULL;
    *T.queue_tail = h;
    T.queue_tail = &h->next;
    int sleeping = T.sleeping;
    T.sleeping = 0;
    check("comm_start (tca)", p2_unlock());
    if (sleeping)
        wake_thread();
}

/* A receive is complete when its flag holds this start's seq, a send when
 * its "sent" word does (the chain's last write, after the receiver's flag). */
static const volatile uint64_t *done_word(const MsgHandle *mh)
{
    return word(mh->send ? sent_at(mh->peer, mh->tag) : flag_at(mh->peer, mh->tag));
}

static void tca_wait(MsgHandle *mh)
{
    check("comm_wait (tca)", p2_wait_u64(done_word(mh), mh->seq));
}

static int tca_query(MsgHandle *mh)
{
    tcaresult r = p2_test_u64(done_word(mh), mh->seq);
    if (r == TCA_NOT_YET)
        return 0;
    check("comm_query (tca)", r);
    return 1;
}

/* The thread may hold the chain loaded: it goes to the graveyard, which
 * comm_finalize empties once the thread has ended. */
static void tca_release(MsgHandle *mh)
{
    qt_handle *h = mh->impl;
    check("comm_free (tca)", p2_lock());
    h->next = T.graveyard;
    T.graveyard = h;
    check("comm_free (tca)", p2_unlock());
    mh->impl = NULL;
}

const qc_ops qc_tca_ops = {tca_init, tca_finalize, tca_barrier, tca_declare,
                           tca_start, tca_wait,    tca_query,   tca_release};
