/*
 * chol_tca.c - the Cholesky's TCA transport (chol_transport_ops): a final
 * tile goes from the GPU frame it was computed in straight to each
 * receiver's landing slot by PEACH2 DMA, followed by a completion message.
 *
 * Receive side, set up once: each rank registers one host region (tcaMalloc)
 *   [wake word, 64 B][inbox: 8-byte entries][landing slots]
 * and the ranks exchange its handle (MPI_Allgather) before the run. The
 * layout (chol_layout.c) gives every (tile, receiver) its own landing slot,
 * and every (receiver, sender, DMAC channel) a run of inbox entries as long
 * as all the sender's messages to that receiver; so a sender knows where to
 * write without asking and nothing is written twice: no flow control.
 *
 * One send is one chain on a free DMAC channel ch (0 .. CHOL_TCA_CHANNELS-1;
 * channel 3 and slot 63 stay the collectives'), per receiver:
 *   1. the tile, GPU frame -> landing slot
 *   2. its id (8 B) -> the next entry of (receiver, this sender, ch)'s run,
 *      tcaDMANotify (CHOL_TCA_SLOT, MSG_TAG + ch)
 *   3. 8 B -> the wake word, tcaDMANotify (CHOL_TCA_SLOT, WAKE_TAG)
 * and last, 8 B within this node, tcaDMANotify (CHOL_TCA_SLOT, SELF_TAG + ch):
 * the chain has read the frame (descriptors take effect in order), so the
 * frame is unpinned when that notification is claimed.
 *
 * Waiting for whichever tile comes first: tcaWaitDMARecvDesc(NULL, slot,
 * WAKE_TAG) returns at the oldest wake from any node; every message
 * notification before it in the ring is then kept by the library, and
 * tcaTestDMARecvDesc(&handle of s, slot, MSG_TAG + ch) claims sender s's on
 * channel ch, one per message. Chains on one channel run one after the
 * other, so the n-th claim of (s, ch) is the n-th entry of its run (chains on
 * different channels overtake each other: hence a run per channel; the
 * entries themselves are never read before their notification, since the
 * rank's view of memory may be ahead of its simulated time). A wake whose
 * message was taken earlier finds nothing (the loop goes on). The library
 * keeps unclaimed notifications per (node, slot, tag), at most
 * TCA_NOTIFY_BACKLOG_MAX (256) distinct triples: here at most 4 per sender
 * plus 3, so up to 63 senders on one PEACH2 network.
 * Depends on tca-api.h, MPI (the handle exchange) and chol_cache.c.
 */
#include <mpi.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "chol.h"
#include "tca-api.h"

#define CHOL_TCA_CHANNELS 3 /* DMAC channels 0..2 */
#define CHOL_TCA_SLOT 1     /* notification slot of every tag below */
#define MSG_TAG 0x100  /* + channel */
#define WAKE_TAG 0x10f
#define SELF_TAG 0x110 /* + channel */
#define WAKE_BYTES 64
#define WORD 8

typedef struct chan {
    int busy, frame, tile;
    long started; /* order of start, for wait_send */
    tcaDesc *desc;
} chan;

typedef struct tca_tp {
    const chol_layout *l;
    chol_cache *c;
    unsigned char *recv; /* wake, inbox, landing */
    uint64_t *send;      /* [tile]: tile id + 1 (the message); then a word per channel */
    tcaHandle recv_h, send_h, frames_h;
    tcaHandle *peer;     /* [rank]: each rank's recv region */
    size_t landing_off;  /* landing slots' offset in recv */
    int *next;           /* [sender * channels + channel]: its next inbox entry here */
    int *left;           /* [sender]: messages still to come from it */
    int *seq;            /* [receiver * channels + channel]: inbox entries written there */
    int expected;
    long starts;
    chan ch[CHOL_TCA_CHANNELS];
    uint64_t sent_bytes;
} tca_tp;

static int check(tcaresult r, const char *call)
{
    if (r == TCA_SUCCESS)
        return 0;
    int rank = 0;
    MPI_Comm_rank(MPI_COMM_WORLD, &rank);
    fprintf(stderr, CHOL_PROGRAM ": rank %d: %s failed: %s\n", rank, call,
            tcaGetErrorString(r));
    return -1;
}
#define TCA(call) check((call), #call)

static size_t align64(size_t n)
{
    return (n + 63) & ~(size_t)63;
}

/* Receiver r's inbox: per sender s a run of entries for each channel, each
 * run as long as all of s's messages to r (they may all take one channel). */
static size_t run_start(const chol_layout *l, int r, int s, int ch)
{
    const size_t sz = (size_t)l->size;
    size_t first = (size_t)l->inbox[(size_t)r * sz + (size_t)s];
    size_t end = s + 1 < l->size ? (size_t)l->inbox[(size_t)r * sz + (size_t)s + 1]
                                 : (size_t)l->inbox_total[r];
    return first * CHOL_TCA_CHANNELS + (size_t)ch * (end - first);
}

static size_t landing_offset(const chol_layout *l, int r)
{
    return align64(WAKE_BYTES + (size_t)l->inbox_total[r] * CHOL_TCA_CHANNELS * WORD);
}

void *chol_tca_create(const chol_layout *l, chol_cache *c)
{
    tca_tp *tp = calloc(1, sizeof *tp);
    if (!tp)
        return NULL;
    tp->l = l, tp->c = c;
    const int me = l->rank;
    const size_t tb = chol_tile_bytes(l);
    tp->landing_off = landing_offset(l, me);
    size_t recv_bytes = tp->landing_off + (size_t)l->nland[me] * tb;
    size_t send_bytes = ((size_t)l->ntiles + CHOL_TCA_CHANNELS) * WORD;
    tp->peer = calloc((size_t)l->size, sizeof *tp->peer);
    tp->next = calloc((size_t)l->size * CHOL_TCA_CHANNELS, sizeof *tp->next);
    tp->left = calloc((size_t)l->size, sizeof *tp->left);
    tp->seq = calloc((size_t)l->size * CHOL_TCA_CHANNELS, sizeof *tp->seq);
    int ok = tp->peer && tp->next && tp->left && tp->seq;
    if (ok && tcaMalloc((void **)&tp->recv, recv_bytes, tcaMemoryCPU) != TCA_SUCCESS) {
        fprintf(stderr, CHOL_PROGRAM ": rank %d: tcaMalloc of %zu bytes of landing slots failed: "
                        "%d tiles to receive do not fit in the node's registered host memory "
                        "(p2run --params with a larger host_memory_bytes)\n",
                me, recv_bytes, l->nland[me]);
        ok = 0;
    }
    ok = ok && TCA(tcaMalloc((void **)&tp->send, send_bytes, tcaMemoryCPU)) == 0 &&
         TCA(tcaCreateHandle(&tp->recv_h, tp->recv, recv_bytes, tcaMemoryCPU)) == 0 &&
         TCA(tcaCreateHandle(&tp->send_h, tp->send, send_bytes, tcaMemoryCPU)) == 0 &&
         TCA(tcaCreateHandle(&tp->frames_h, c->frames, tb * (size_t)c->nframes,
                             tcaMemoryGPU)) == 0;
    /* Every rank reaches the exchange, so one that failed cannot hang the others. */
    int bad = !ok, any_bad = 0;
    MPI_Allreduce(&bad, &any_bad, 1, MPI_INT, MPI_MAX, MPI_COMM_WORLD);
    if (any_bad) {
        chol_tca_destroy(tp);
        return NULL;
    }
    MPI_Allgather(&tp->recv_h, sizeof(tcaHandle), MPI_BYTE, tp->peer, sizeof(tcaHandle),
                  MPI_BYTE, MPI_COMM_WORLD);
    memset(tp->recv, 0, tp->landing_off);
    for (int t = 0; t < l->ntiles; t++) {
        tp->send[t] = (uint64_t)t + 1;
        int slot = l->land[(size_t)t * l->size + me];
        if (slot >= 0) {
            c->home[t] = (double *)(tp->recv + tp->landing_off + (size_t)slot * tb);
            tp->left[l->owner[t]]++;
            tp->expected++;
        }
    }
    return tp;
}

void chol_tca_destroy(void *p)
{
    tca_tp *tp = p;
    if (!tp)
        return;
    for (int i = 0; i < CHOL_TCA_CHANNELS; i++)
        if (tp->ch[i].desc)
            tcaDescFree(tp->ch[i].desc);
    if (tp->frames_h.check)
        tcaDestroyHandle(&tp->frames_h);
    if (tp->recv_h.check)
        tcaDestroyHandle(&tp->recv_h);
    if (tp->send_h.check)
        tcaDestroyHandle(&tp->send_h);
    if (tp->recv)
        tcaFree(tp->recv, tcaMemoryCPU);
    if (tp->send)
        tcaFree(tp->send, tcaMemoryCPU);
    free(tp->peer);
    free(tp->next);
    free(tp->left);
    free(tp->seq);
    free(tp);
}

/* A channel's chain has read its frame: unpin, free the chain. */
static void finished(tca_tp *tp, chan *ch)
{
    chol_cache_unpin(tp->c, ch->frame);
    tcaDescFree(ch->desc);
    ch->desc = NULL;
    ch->busy = 0;
}

static int wait_channel(tca_tp *tp, int i)
{
    if (TCA(tcaWaitDMARecvDesc(&tp->send_h, CHOL_TCA_SLOT, SELF_TAG + i)) != 0)
        return -1;
    finished(tp, &tp->ch[i]);
    return 0;
}

static int tca_wait_send(void *p)
{
    tca_tp *tp = p;
    int oldest = -1;
    for (int i = 0; i < CHOL_TCA_CHANNELS; i++)
        if (tp->ch[i].busy && (oldest < 0 || tp->ch[i].started < tp->ch[oldest].started))
            oldest = i;
    return oldest < 0 ? 1 : wait_channel(tp, oldest);
}

static int tca_send(void *p, int tile, int frame)
{
    tca_tp *tp = p;
    const chol_layout *l = tp->l;
    const size_t tb = chol_tile_bytes(l), sz = (size_t)l->size;
    int i = 0;
    while (i < CHOL_TCA_CHANNELS && tp->ch[i].busy)
        i++;
    if (i == CHOL_TCA_CHANNELS) {
        if (tca_wait_send(tp) != 0)
            return -1;
        for (i = 0; tp->ch[i].busy; i++)
            ;
    }
    chan *ch = &tp->ch[i];
    ch->desc = tcaDescNew();
    if (!ch->desc)
        return TCA(TCA_ERROR_OUT_OF_MEMORY);
    const size_t msg = (size_t)tile * WORD;
    for (int r = 0; r < l->size; r++) {
        int slot = l->land[(size_t)tile * sz + r];
        if (slot < 0)
            continue;
        const tcaHandle *dst = &tp->peer[r];
        size_t land = landing_offset(l, r) + (size_t)slot * tb;
        size_t entry = WAKE_BYTES +
                       (run_start(l, r, l->rank, i) + (size_t)tp->seq[r * CHOL_TCA_CHANNELS + i]++) *
                           WORD;
        if (TCA(tcaDescSetMemcpy(ch->desc, dst, land, &tp->frames_h, (size_t)frame * tb, tb, 0,
                                 CHOL_TCA_SLOT, 0)) ||
            TCA(tcaDescSetMemcpy(ch->desc, dst, entry, &tp->send_h, msg, WORD, tcaDMANotify,
                                 CHOL_TCA_SLOT, MSG_TAG + i)) ||
            TCA(tcaDescSetMemcpy(ch->desc, dst, 0, &tp->send_h, msg, WORD, tcaDMANotify,
                                 CHOL_TCA_SLOT, WAKE_TAG)))
            return -1;
        tp->sent_bytes += tb;
    }
    size_t done = ((size_t)l->ntiles + (size_t)i) * WORD;
    if (TCA(tcaDescSetMemcpy(ch->desc, &tp->send_h, done, &tp->send_h, msg, WORD, tcaDMANotify,
                             CHOL_TCA_SLOT, SELF_TAG + i)) ||
        TCA(tcaDescSet(ch->desc, i)) || TCA(tcaStartDMADesc(i)))
        return -1;
    chol_cache_pin(tp->c, frame);
    ch->busy = 1, ch->frame = frame, ch->tile = tile, ch->started = tp->starts++;
    return 0;
}

/* Sender s's messages that have arrived, channel by channel, each
 * channel's in the order s sent them. */
static int take_messages(tca_tp *tp, int s, int ch, int *arrived, int n, int max)
{
    const chol_layout *l = tp->l;
    const uint64_t *inbox = (const uint64_t *)(tp->recv + WAKE_BYTES);
    while (tp->left[s] > 0 && n < max) {
        tcaresult r = tcaTestDMARecvDesc(&tp->peer[s], CHOL_TCA_SLOT, MSG_TAG + ch);
        if (r == TCA_NOT_YET)
            break;
        if (TCA(r) != 0)
            return -1;
        uint64_t id = inbox[run_start(l, l->rank, s, ch) + (size_t)tp->next[s * CHOL_TCA_CHANNELS + ch]++];
        int t = (int)id - 1;
        if (id == 0 || t >= l->ntiles || l->owner[t] != s ||
            l->land[(size_t)t * l->size + l->rank] < 0) {
            fprintf(stderr, CHOL_PROGRAM ": rank %d: inbox entry from rank %d names no tile "
                            "it sends here (%llu)\n", l->rank, s, (unsigned long long)id);
            return -1;
        }
        tp->left[s]--;
        tp->expected--;
        arrived[n++] = t;
    }
    return n;
}

static int tca_progress(void *p, int block, int *arrived, int max)
{
    tca_tp *tp = p;
    for (int i = 0; i < CHOL_TCA_CHANNELS; i++) {
        if (!tp->ch[i].busy)
            continue;
        tcaresult r = tcaTestDMARecvDesc(&tp->send_h, CHOL_TCA_SLOT, SELF_TAG + i);
        if (r == TCA_SUCCESS)
            finished(tp, &tp->ch[i]);
        else if (r != TCA_NOT_YET)
            return TCA(r);
    }
    if (tp->expected == 0)
        return 0;
    tcaresult r = block ? tcaWaitDMARecvDesc(NULL, CHOL_TCA_SLOT, WAKE_TAG)
                        : tcaTestDMARecvDesc(NULL, CHOL_TCA_SLOT, WAKE_TAG);
    if (r == TCA_NOT_YET)
        return 0;
    if (TCA(r) != 0)
        return -1;
    int n = 0;
    for (int s = 0; s < tp->l->size && n >= 0; s++)
        for (int ch = 0; ch < CHOL_TCA_CHANNELS && n >= 0; ch++)
            n = take_messages(tp, s, ch, arrived, n, max);
    return n;
}

static int tca_drain(void *p)
{
    tca_tp *tp = p;
    for (int i = 0; i < CHOL_TCA_CHANNELS; i++)
        if (tp->ch[i].busy && wait_channel(tp, i) != 0)
            return -1;
    return 0;
}

static int tca_expected(void *p)
{
    return ((tca_tp *)p)->expected;
}

uint64_t chol_tca_sent_bytes(void *p)
{
    return ((tca_tp *)p)->sent_bytes;
}

const chol_transport_ops chol_tca_ops = {
    .name = "tca",
    .send = tca_send,
    .progress = tca_progress,
    .wait_send = tca_wait_send,
    .drain = tca_drain,
    .expected = tca_expected,
};
