/*
 * p2mpi_engine.h - what the message engine (p2mpi_engine.c) offers the
 * units above it: the message header and the HCA's send side, matching, the
 * progress loop, the engine's start.
 */
#ifndef P2MPI_ENGINE_H
#define P2MPI_ENGINE_H

#include "ib_hw.h"
#include "p2mpi_gpu.h"
#include "p2mpi_request.h"

#pragma GCC visibility push(hidden)

/* ---- Messages ------------------------------------------------------------------ */
enum { H_EAGER = 1, H_RTS = 2, H_CTS = 3, H_FIN = 4, H_CHUNK = 5 };
/* Message types from H_HOOK on are one-sided communication's (E.rma_arrived). */
#define H_HOOK 16
#define CTS_CHUNKS 1u /* CTS flags: the receiver stages GPU data: CHUNK per chunk, no FIN */

typedef struct pm_hdr {
    uint32_t type;
    int32_t src;      /* sender's world rank */
    int32_t tag;
    uint32_t ctx;
    uint64_t bytes;   /* message bytes */
    uint64_t sreq;    /* sender's request id (RTS, CTS) */
    uint64_t rreq;    /* receiver's request id (CTS, FIN) */
    uint64_t addr;    /* CTS: bus address of the receiver's staging */
    uint64_t off;     /* CHUNK: where the chunk starts in the message */
    uint32_t len;     /* CHUNK: its bytes */
    uint32_t flags;   /* CTS: CTS_CHUNKS */
} pm_hdr;
_Static_assert(sizeof(pm_hdr) == HDR_BYTES, "header size");

/* wr_id of send work requests: kind in the top byte; WR_RMA: one-sided
 * communication's (E.rma_completed) */
enum { WR_SLOT = 1, WR_WRITE = 2, WR_CHUNK = 3, WR_RMA = 4 };
#define WR(kind, v) (((uint64_t)(kind) << 56) | (uint64_t)(v))
#define CHUNK_BITS 20 /* WR_CHUNK: request id << CHUNK_BITS | chunk index */

/* A message that arrived before a receive matched it (in arrival order). */
typedef struct pm_unexp {
    pm_hdr h;
    uint8_t *data; /* eager: a copy of the data */
    struct pm_unexp *next;
} pm_unexp;

/* A rendezvous step waiting for staging memory. */
typedef struct pm_pending {
    int cts; /* 1: receiver must answer an RTS; 0: sender must write after CTS */
    pm_req *req;
    pm_hdr h;
    struct pm_pending *next;
} pm_pending;

/* The tags of collective messages say which call sent them: PM_TAG_BCAST of
 * its root for MPI_Bcast, PM_TAG_COLL for the others. A collective receive
 * matches by source alone (the calls on a communicator are ordered), then a
 * tag other than its own means the ranks' calls differ: the engine ends the
 * job naming both (the header carries the tag anyway: no cost). */
#define PM_TAG_COLL 0
#define PM_TAG_BCAST(root) (1 + (root))

/* A nonblocking collective's messages have a context of their own
 * (p2mpi_nbc.c): the communicator's collective context (ctx + 1, below
 * 2^20) with this bit and the collective's number modulo 2048 above. */
#define PM_NBC_CTX_BIT 0x80000000u
#define PM_NBC_CTX_BASE 0xfffffu

/* The calls a pm_coll_sig names (its kind). */
enum {
    PM_SIG_NONE, PM_SIG_BCAST, PM_SIG_REDUCE, PM_SIG_ALLREDUCE, PM_SIG_REDSCAT,
    PM_SIG_REDSCAT_BLOCK, PM_SIG_SCAN, PM_SIG_EXSCAN, PM_SIG_GATHER, PM_SIG_GATHERV,
    PM_SIG_SCATTER, PM_SIG_SCATTERV
};

/* A collective message (EAGER or RTS) carries what the call's arguments must
 * agree on (E.coll_sig) and the nonblocking collective's number (E.coll_seq)
 * in fields these types leave unused (addr, off, len, rreq): the 64-byte
 * header goes anyway, so the check costs no simulated time. */
static inline void pm_hdr_put_sig(pm_hdr *h, const pm_coll_sig *s, uint32_t seq)
{
    h->addr = (uint64_t)s->kind << 56 | (uint64_t)(uint8_t)(s->op + 2) << 48 |
              (uint64_t)(uint16_t)(s->type + 2) << 32 | (uint32_t)(s->root + 1);
    h->off = s->count;
    h->len = s->counts_hash;
    h->rreq = seq;
}
static inline pm_coll_sig pm_hdr_sig(const pm_hdr *h)
{
    pm_coll_sig s = {.kind = (uint8_t)(h->addr >> 56),
                     .op = (int16_t)((int)(uint8_t)(h->addr >> 48) - 2),
                     .type = (int16_t)((int)(uint16_t)(h->addr >> 32) - 2),
                     .root = (int32_t)((int64_t)(uint32_t)h->addr - 1),
                     .count = h->off,
                     .counts_hash = h->len};
    return s;
}
/* The call a signature names ("MPI_Ireduce (root 0)"); whether two differ,
 * and how ("the ranks' ops differ: MPI_SUM here, MPI_PROD at rank 1
 * (MPI_ERR_OP)", rank `src` the other's world rank); nbc: nonblocking. */
void pm_sig_call(const pm_coll_sig *s, int nbc, char *out, size_t n);
int pm_sig_differ(const pm_coll_sig *mine, const pm_coll_sig *theirs, int nbc, int src, char *out,
                  size_t n);

/* ---- The HCA ------------------------------------------------------------------- */
/* The bus address of an offset in the layer's host memory; send slot i. */
uint64_t pm_bus_of(uint64_t off);
uint8_t *pm_send_slot(int i);
/* A work request on the SQ (waits for a free entry); a free send slot
 * (waits for one); a header (and n bytes of data after it) SENT on rail 0. */
void pm_post_wqe(uint8_t op, int wdest, uint8_t rail, uint64_t local_bus, uint64_t len,
                 uint64_t remote, uint64_t wr_id);
/* The same for a work request the caller filled (dest_node is set from the
 * world rank wdest; signaled): atomics' operands. */
void pm_post(ib_wqe *w, int wdest);
int pm_take_send_slot(void);
void pm_send_hdr(int wdest, const pm_hdr *h, const void *data, size_t n);

/* ---- Matching and progress ------------------------------------------------------- */
/* Whether a message with header h is for receive r; a matched message into
 * r: eager data into its buffer, or the rendezvous started. */
int pm_matches(const pm_req *r, const pm_hdr *h);
void pm_deliver(pm_req *r, const pm_hdr *h, const uint8_t *data);
/* Handles the next completion or timed event. block: wait for one (the
 * rank's clock jumps to when the completion was written, or to the event);
 * else only one there at the rank's time. Returns whether it handled one.
 * PM_WAIT_OPEN: a wait for what a call waits for (a request, a probed
 * message), which lets the rank's other threads' calls in meanwhile under
 * MPI_THREAD_MULTIPLE, and then may return 1 having handled nothing (the
 * caller looks again); PM_WAIT, for the HCA's own resources (an SQ entry,
 * a send slot), keeps the layer: the HCA frees them by itself. */
#define PM_TEST 0
#define PM_WAIT 1
#define PM_WAIT_OPEN 2
int pm_progress(int block);
/* pm_progress(block) for a blocking caller that also waits for *also, a word
 * in some rank's node memory (a one-sided lock word, to retry on): the wait
 * ends at whichever comes first, and *also_met says that it was the word (1,
 * having handled nothing). */
int pm_progress_also(int block, const p2_rt_word *also, int *also_met);
/* MPI_Init's: the HCA's queues in the top mpi_host_bytes of node memory,
 * the receive slots posted, the predefined communicators. */
void pm_engine_start(void);

#pragma GCC visibility pop

#endif /* P2MPI_ENGINE_H */
