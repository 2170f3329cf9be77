/*
 * coll.h - the collectives' internals: communicators, plans (a prepared
 * collective: buffers, every rank's handles, the algorithm), the transport
 * interface the algorithms are written against, the reduction kernels, the
 * cost model, the algorithm table and the selection.
 *
 * Algorithms (<collective>_<algorithm>.c) see only coll_plan's fields and
 * the coll_* transport calls below; they never call the TCA API directly.
 */
#ifndef P2_COLL_INTERNAL_H
#define P2_COLL_INTERNAL_H

#include <stddef.h>
#include <stdint.h>

#include "p2coll.h"
#include "tca-api.h"

/* Collectives. */
typedef enum coll_kind {
    COLL_BARRIER,
    COLL_BCAST,
    COLL_SCATTER,
    COLL_GATHER,
    COLL_REDUCE,
    COLL_ALLGATHER,
    COLL_ALLREDUCE,
    COLL_KINDS
} coll_kind;

extern const char *const coll_kind_names[COLL_KINDS]; /* "barrier", ... */

/* ---- Communicators ---------------------------------------------------------
 * Each member owns a mailbox of registered host memory (PIO-reachable), whose
 * handle every member knows:
 *   [ready tokens: one per rank][barrier flags: 2 banks x 8 steps][exchange:
 *    2 banks x P2_COLL_MAX_RANKS slots of COLL_SLOT_BYTES]
 * A ready token (coll_transport.c) is [the sender's recv handle][word]: the
 * word, written last, holds the run (low COLL_READY_RUN_BITS), a bit saying
 * whether the handle is new, and the signature of the call's arguments (the
 * 23 bits above).
 */
#define COLL_SLOT_BYTES 256u
#define COLL_BLOB_MAX (COLL_SLOT_BYTES - 8u)
#define COLL_BARRIER_STEPS 8
#define COLL_READY_BYTES 64u
#define COLL_READY_WORD 56u /* offset of the word in a token */
#define COLL_READY_RUN_BITS 40
#define COLL_MB_READY 0u
#define COLL_MB_BARRIER (COLL_MB_READY + COLL_READY_BYTES * P2_COLL_MAX_RANKS)
#define COLL_MB_EXCHANGE (COLL_MB_BARRIER + 8u * 2u * COLL_BARRIER_STEPS)
#define COLL_MB_BYTES (COLL_MB_EXCHANGE + 2u * P2_COLL_MAX_RANKS * COLL_SLOT_BYTES)

struct p2_comm {
    uint32_t magic; /* COLL_COMM_MAGIC while valid */
    int ready;      /* set up */
    int rank, size;
    int world_rank[P2_COLL_MAX_RANKS];
    uint8_t *mailbox; /* this rank's */
    tcaHandle mailbox_h[P2_COLL_MAX_RANKS];
    uint64_t exchange_seq, barrier_seq, run_seq;
    int after_barrier; /* the last collective run on it was a barrier */
    struct p2_comm *next_live; /* the comms p2_comm_create made and nobody freed */
};
#define COLL_COMM_MAGIC 0x70326363u

/* An allgather of `bytes` (<= COLL_BLOB_MAX) over the comm's mailboxes, by
 * PIO: all[q * bytes] = rank q's mine. */
tcaresult coll_comm_exchange(p2_comm_t comm, const void *mine, void *all, size_t bytes);
/* The comm, set up (P2_COMM_WORLD on first use); NULL if invalid. */
tcaresult coll_comm_get(p2_comm_t comm, p2_comm_t *out);
/* Whether p2_comm_free may free `comm` (TCA_SUCCESS), and its release once
 * every member has left its last collective (coll_blocking.c). */
tcaresult coll_comm_check_free(p2_comm_t comm);
void coll_comm_release(p2_comm_t comm);

/* ---- Plans ---------------------------------------------------------------- */
typedef struct coll_peer {
    tcaHandle recv;    /* its recvbuf (or bcast buf), zero if none */
    tcaHandle scratch; /* its scratch, zero if none */
} coll_peer;

typedef struct coll_buf {
    uint8_t *ptr;
    size_t bytes;
    int gpu;          /* GPU memory */
    tcaHandle h;      /* over [ptr, ptr + bytes); valid when bytes > 0 */
} coll_buf;

typedef struct coll_algorithm coll_algorithm;

typedef struct coll_plan {
    p2_comm_t comm;
    int rank, size;
    coll_kind kind;
    const coll_algorithm *algo;
    size_t count, esize, bytes; /* bytes = count * esize: one rank's block */
    tcaDataType type;
    tcaOp op;
    int root;
    int in_place;
    coll_buf send, recv, scratch;
    coll_peer *peer; /* [size] */
    /* Transport state */
    int dry;                 /* recording targets only (prepare) */
    uint64_t targets;        /* ranks this rank writes into */
    uint64_t sources;        /* ranks that write into this rank */
    uint64_t ready_seen;     /* targets whose ready word this run was seen */
    int use_ready;           /* this run waits for ready words */
    uint64_t run;            /* comm->run_seq of this run */
    uint64_t runs;           /* runs of this plan so far, this one included */
    uint32_t sig;            /* hash of the arguments every rank must agree on */
    tcaHandle announced;     /* the recv handle the last ready tokens carried */
    tcaDesc *chain;          /* being built */
    int chain_len;
    /* The chain's last transfer is held back until the start, which adds
     * tcaDMANotifySelf to it: the flush then waits for that notification in
     * memory, not for a read of the channel's status register. */
    struct coll_pending {
        const tcaHandle *dh;
        size_t dst_off;
        coll_buf *src;
        size_t src_off, bytes;
        int flags, tag;
    } pending;
    int has_pending;
    int flush_tag;           /* the running chain's self-notification */
    int channel_busy;
    tcaresult status;        /* of the last start */
    int forced;              /* the algorithm came from the variable or a rule */
    int fixed_buffers;       /* persistent: the buffers of the preparing exchange */
} coll_plan;

/* ---- Transport (coll_transport.c) -----------------------------------------
 * Tags: a DMA notification is raised at the destination in
 * (P2_COLL_WAIT_SLOT, coll_tag(run, step, src)). */
typedef enum coll_target {
    COLL_TO_RECV,   /* the peer's recvbuf */
    COLL_TO_SCRATCH /* the peer's scratch */
} coll_target;

typedef enum coll_source {
    COLL_FROM_SEND,
    COLL_FROM_RECV,
    COLL_FROM_SCRATCH
} coll_source;

/* Appends one transfer to the current chain: bytes from this rank's `src`
 * buffer + src_off to rank dst's `target` + dst_off, notifying dst with
 * `step`. Zero bytes: nothing. */
tcaresult coll_put(coll_plan *p, int dst, coll_target target, size_t dst_off,
                   coll_source src, size_t src_off, size_t bytes, int step);
/* Appends a copy between this rank's own buffers to the current chain, in
 * order (the transfers after it read what it wrote); host to host is a
 * memmove at once. For the first block of allgather, scatter and gather,
 * so that GPU copies ride the first chain instead of a DMA of their own. */
tcaresult coll_local_copy_chained(coll_plan *p, coll_source dst, size_t dst_off, coll_source src,
                                  size_t src_off, size_t bytes);
/* Starts the chain built since the last start (one chained DMA); waits for
 * the previous one's channel first. No transfers: nothing. */
tcaresult coll_start(coll_plan *p);
/* The ready tokens of a run to this rank's sources (see coll_transport.c). */
tcaresult coll_send_ready(coll_plan *p);
/* Waits for the notification of `step` from rank src. */
tcaresult coll_wait(coll_plan *p, int src, int step);
/* Waits until this rank's started chains are done. */
tcaresult coll_flush(coll_plan *p);
/* PIO: [data, bytes][pad to 8][flag word = run] into rank dst's scratch at
 * dst_off (which must leave room for the flag), one stream, then commit. */
tcaresult coll_pio_put(coll_plan *p, int dst, size_t dst_off, const void *data, size_t bytes);
/* Waits until this rank's scratch + off holds the flag of this run for a
 * PIO message of `bytes`. */
tcaresult coll_pio_wait(coll_plan *p, size_t off, size_t bytes);
/* The padded size of a PIO message with its flag word. */
size_t coll_pio_slot(size_t bytes);
/* Local copy of bytes between this rank's buffers (memcpy on the host with
 * its modelled cost, or a DMA of the board when GPU memory is involved). */
tcaresult coll_local_copy(coll_plan *p, coll_source dst, size_t dst_off, coll_source src,
                          size_t src_off, size_t bytes);
/* dst[i] = dst[i] op src[i] for `count` elements of the plan's type, with the
 * modelled cost (host or GPU kernel, coll_cost.c's table). */
tcaresult coll_reduce_local(coll_plan *p, coll_source dst, size_t dst_off, coll_source src,
                            size_t src_off, size_t count);
/* One GPU kernel: dst = block[0] op block[1] op ... op block[n-1], blocks of
 * `count` elements at src + src_off + i * stride. Charged once as a kernel
 * (gpu_kernel_ns + the bytes reduced / gpu_reduce_gbps); in emulation the
 * reduction is computed on the host, so results are exact. */
tcaresult coll_reduce_kernel(coll_plan *p, coll_source dst, size_t dst_off, coll_source src,
                             size_t src_off, size_t stride, int n, size_t count);
/* The address of a local buffer + off (NULL-safe for 0-sized buffers). */
uint8_t *coll_ptr(coll_plan *p, coll_source which, size_t off);
/* Barrier tokens (dissemination barrier): flag word `step` of bank
 * barrier_seq % 2 at rank dst := barrier_seq; wait for our own. */
tcaresult coll_barrier_signal(coll_plan *p, int dst, int step, uint64_t seq);
tcaresult coll_barrier_wait(coll_plan *p, int step, uint64_t seq);

/* The kind (tcaMemoryCPU/GPU) of this node's registered memory holding
 * [ptr, ptr + bytes), or -1. */
int coll_memory_kind(const void *ptr, size_t bytes);

/* ---- Reduction kernels (coll_reduce.c) ------------------------------------ */
/* TCA_SUCCESS, TCA_ERROR_INVALID_ARGUMENT (unknown type or op),
 * TCA_ERROR_NOT_SUPPORTED (pair without meaning). */
tcaresult coll_op_check(tcaDataType type, tcaOp op);
int coll_type_valid(tcaDataType type);
/* "TCA_INT", "TCA_OP_SUM" (or the number of an unknown one), for messages. */
void coll_type_name(tcaDataType type, char *out, size_t size);
void coll_op_name(tcaOp op, char *out, size_t size);
void coll_reduce_apply(void *dst, const void *src, size_t count, tcaDataType type, tcaOp op);

/* ---- Cost model (coll_cost.c) ------------------------------------------------ */
typedef struct coll_cost_params {
    double dma_latency_s, pio_latency_s, pio_store_s, pio_step_s;
    double dma_cpu_Bps, dma_gpu_Bps;
    double memcpy_Bps, reduce_cpu_Bps;
    double gpu_kernel_s, reduce_gpu_Bps;
} coll_cost_params;
/* Filled from the rank runtime (the model's parameters) when the world
 * communicator is set up; coll_cost.c says where each figure comes from. */
extern coll_cost_params coll_cost;
void coll_cost_load(void);
/* The comm whose ranks coll_share (below) measures: the one being planned,
 * set before the algorithms' costs are asked. */
void coll_share_comm(p2_comm_t comm);

/* ---- Algorithm table (coll_algorithms.c) -------------------------------------- */
struct coll_algorithm {
    coll_kind kind;
    const char *name;
    /* Can it run this plan? (e.g. recursive doubling: power-of-two size) */
    int (*eligible)(const coll_plan *p);
    /* Predicted seconds for `size` ranks and `bytes` per rank. */
    double (*cost)(int size, size_t bytes, int gpu);
    /* Scratch bytes this rank needs. */
    size_t (*scratch)(const coll_plan *p);
    /* Runs the algorithm (also in the dry pass: transfers only recorded). */
    tcaresult (*run)(coll_plan *p);
    /* Its scratch is GPU memory (else host memory). */
    int scratch_gpu;
    /* Runs again without ready tokens: it writes only into the peers'
     * scratch, in two banks by run parity, and no rank can finish a run
     * before every rank has started it (each result depends on every rank's
     * input), so a rank two runs ahead cannot exist. */
    int self_synced;
};

extern const coll_algorithm coll_barrier_dissemination, coll_bcast_binomial,
    coll_scatter_linear, coll_gather_linear, coll_reduce_gather, coll_reduce_gather_gpu,
    coll_allgather_recursive_doubling, coll_allgather_ring, coll_allgather_bruck,
    coll_allreduce_dissemination, coll_allreduce_dissemination_pio, coll_allreduce_rsag;

/* Every algorithm of every collective, in the order of preference on a tie. */
extern const coll_algorithm *const coll_algorithms[];
extern const size_t coll_algorithm_count;
/* The algorithm of that collective by that name; NULL if none. */
const coll_algorithm *coll_algorithm_find(coll_kind kind, const char *name);
/* Bit i: the i-th algorithm of the table can run this plan here. */
uint32_t coll_eligible_mask(const coll_plan *p);

/* ---- Selection (coll_select.c; the rules file: coll_rules.h) ------------------ */
/* Picks the algorithm for a plan whose fields but algo are set.
 * TCA_ERROR_NOT_SUPPORTED (forced algorithm not eligible, or unknown name),
 * TCA_ERROR_INVALID_ARGUMENT (bad rules file). */
tcaresult coll_select(coll_plan *p);
/* The algorithm P2_COLL_<KIND> forces ("" for none), for plan reuse. */
void coll_forced_name(coll_kind kind, char *out, size_t size);
/* The cheapest algorithm of the plan's collective among `mask`; NULL if none. */
const coll_algorithm *coll_cheapest(const coll_plan *p, uint32_t mask, int gpu);

/* Helpers for algorithms. */
static inline int coll_mod(int a, int n)
{
    return ((a % n) + n) % n;
}
static inline int coll_ceil_log2(int n)
{
    int k = 0;
    while ((1 << k) < n)
        k++;
    return k;
}
static inline int coll_floor_log2(int n)
{
    int k = 0;
    while ((2 << k) <= n)
        k++;
    return k;
}
/* Cable sharing in the cost model. In a step where every rank r of the comm
 * writes to rank r + d (COLL_ADD) or r ^ d (COLL_XOR), coll_share follows
 * every transfer along the network's routes (handed over by the simulator,
 * so the topology, the routing policy and the mapping count) and returns the
 * most transfers any one cable carries (at least 1). Without routes (no
 * p2run) the ranks are taken to sit in order along one ring: min(d, p - d).
 * (The boards' bubble flow control keeps such steps from deadlocking a ring
 * at any size: topologies/README.md, "Deadlock freedom".) */
typedef enum { COLL_ADD, COLL_XOR } coll_pattern;
double coll_share(int d, int n, coll_pattern pat);
/* Seconds of a step moving `bytes` per rank to the rank d away, at bw. */
static inline double coll_step_bytes_s(int d, int n, coll_pattern pat, double bytes, double bw)
{
    return coll_share(d, n, pat) * bytes / bw;
}
static inline int coll_is_pow2(int n)
{
    return n > 0 && (n & (n - 1)) == 0;
}

#define COLL_TRY(call)                                                                   \
    do {                                                                                 \
        tcaresult coll_try_r_ = (call);                                                  \
        if (coll_try_r_ != TCA_SUCCESS)                                                  \
            return coll_try_r_;                                                          \
    } while (0)

#endif /* P2_COLL_INTERNAL_H */
