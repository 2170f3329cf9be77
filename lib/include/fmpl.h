/*
 * fmpl.h - FMPL, the fast message passing library of the Hitachi SR8000,
 * built on the NIA's remote DMA (model/sr8000/README.md, "Published
 * figures"; the NIA contract is
 * sr8000_hw.h). Every call of the published library, with its argument
 * order; every call reports FMPL_SUCCESS or an error code in its last
 * argument `ier` (fmpl_error_string names each code). Runs on a cluster whose
 * topology has a `device sr8000` line (topologies/sr8000-*.topo).
 *
 * Point to point, zero copy, one round trip: fmpl_recv writes a header (where
 * its buffer is, how large, a sequence number) by remote DMA into the
 * sender's matching-area slot; fmpl_send waits for that header, remote-writes
 * the data straight into the receive buffer and then the receiver's
 * completion flag. The slot index `mai` plays the role of a tag: no queues,
 * no searching, no ANY_SOURCE. Slots are per peer: the matching area and the
 * flag area passed to fmpl_init hold `count` slots for each rank of the job
 * (FMPL_AREA_SLOTS(count)); the pair (peer, mai) may have one live send and
 * one live receive at a time (a second is refused with FMPL_ERR_SLOT_BUSY).
 *
 * Memory. Buffers that FMPL moves must lie in memory the NIA reaches: the
 * node memory p2run gives each rank, which fmpl_malloc hands out (the
 * project's addition: on the SR8000 the kernel pinned any user buffer). A
 * buffer elsewhere gets FMPL_ERR_NOT_MAPPED.
 *
 * Progress: there is no progress thread; a nonblocking send moves its data
 * in fmpl_wait_isend (or at once if the receiver's header is already there),
 * a spooled send in fmpl_sendbuff_check.
 */
#ifndef FMPL_H
#define FMPL_H

#include <stddef.h>
#include <stdint.h>

#ifdef __cplusplus
extern "C" {
#endif

/* ---- Return codes (in `ier`) -------------------------------------------- */
enum {
    FMPL_SUCCESS = 0,
    FMPL_ERR_NOT_INIT = -1,      /* fmpl_init has not run (or fmpl_finalize has) */
    FMPL_ERR_INIT = -2,          /* fmpl_init called twice */
    FMPL_ERR_NO_DEVICE = -3,     /* no SR8000 NIA: not under p2run, or the topology has none */
    FMPL_ERR_ARG = -4,           /* a NULL pointer, a negative size or count, or counts
                                    that differ between ranks (fmpl_init, reductions) */
    FMPL_ERR_RANK = -5,          /* a rank outside the job or the communicator */
    FMPL_ERR_SLOT = -6,          /* mai outside 0 .. count-1 */
    FMPL_ERR_SLOT_BUSY = -7,     /* the (peer, mai) slot already has a live send or receive */
    FMPL_ERR_NOT_MAPPED = -8,    /* a buffer outside the memory the NIA reaches */
    FMPL_ERR_TRUNCATE = -9,      /* the message is larger than the receive buffer: nothing moved */
    FMPL_ERR_REQUEST = -10,      /* not a live request of this kind */
    FMPL_ERR_SPOOL_FULL = -11,   /* a timed-out send does not fit the send buffer */
    FMPL_ERR_COMM = -12,         /* not a communicator of this process */
    FMPL_ERR_KEY_MISMATCH = -13, /* members of a new communicator gave different keys or members */
    FMPL_ERR_HW_NOT_ALLOWED = -14, /* hardware broadcast/barrier outside the published conditions */
    FMPL_ERR_HBCAST_OFFSET = -15,  /* hardware broadcast: this node's offset or room differs from the root's */
    FMPL_ERR_FUNC = -16,         /* not one of the fmpl_?sum/max/min functions */
    FMPL_ERR_DEVICE = -17,       /* the NIA refused a transfer, or the simulator is gone */
    FMPL_ERR_NO_MEMORY = -18,    /* node memory for FMPL's own areas ran out */
    FMPL_ERR_TOO_MANY = -19      /* more communicators than FMPL_MAX_COMMS */
};
#define FMPL_ERR_LAST (-19)

/* The name and meaning of a code ("FMPL_ERR_TRUNCATE: ..."); never NULL. */
const char *fmpl_error_string(int ier);

/* ---- Setup ---------------------------------------------------------------- */
/* One matching-area slot: what a receiver tells the sender about its buffer. */
typedef struct fmpl_match {
    uint64_t area;   /* the receiver's remote-DMA area */
    uint64_t offset; /* the buffer's offset in it */
    uint64_t size;   /* its room in bytes */
    uint64_t seq;    /* which receive of this (peer, slot) it is; written last */
} fmpl_match_t;
typedef uint64_t fmpl_flag_t;

#define FMPL_MAX_PROCS 512 /* the largest SR8000 */
/* Slots for `count` tags per peer: what ma and fa must hold. */
#define FMPL_AREA_SLOTS(count, nprocs) ((size_t)(count) * (size_t)(nprocs))

/* Remote-DMA-able memory (the project's addition; see above): aligned to 64
 * bytes, NULL when none is left. fmpl_free(NULL) is a no-op. */
void *fmpl_malloc(size_t size);
void fmpl_free(void *ptr);
/* This process and the job, before or after fmpl_init. */
int fmpl_myrank(void);
int fmpl_nprocs(void);

/* `ma` and `fa`: FMPL_AREA_SLOTS(count, fmpl_nprocs()) entries each, in
 * fmpl_malloc memory; every rank passes the same count (ranks that do not
 * all get FMPL_ERR_ARG, with the range named on stderr). Sets up the NIA
 * (remote-DMA areas, the hardware barrier group of FMPL_COMM_WORLD) and
 * synchronises the job. */
void fmpl_init(fmpl_match_t *ma, fmpl_flag_t *fa, int count, int *ier);
/* Sends what is still spooled (blocking), synchronises, releases FMPL. */
void fmpl_finalize(int *ier);

/* ---- Point to point ------------------------------------------------------ */
void fmpl_send(const void *buf, size_t size, int dst, int mai, int *ier);
/* `size`: the room of `buf`; the sender's message may be shorter (see
 * fmpl_recv_size). A larger one fails both sides with FMPL_ERR_TRUNCATE. */
void fmpl_recv(void *buf, size_t size, int src, int mai, int *ier);
/* Bytes the last completed receive of (src, mai) got. */
size_t fmpl_recv_size(int src, int mai);

/* The steps of the last blocking fmpl_send and the last blocking fmpl_recv
 * this process completed (the project's addition), in seconds of the rank's
 * clock, as FMPL's published breakdown of the 8 B ping-pong splits them.
 * Sender: init (the call until it starts polling its matching slot), wait
 * (until the receiver's header is seen there), data (the data and flag
 * remote DMA until the NIA reports the send complete, the return). Receiver:
 * init (the call until its header's kick is posted), header (until the NIA
 * reports the header's remote DMA complete), data (until the completion flag
 * is seen and checked, the return). Zeroes before the first of each; a send
 * that spooled or failed, and fmpl_isend/irecv, record nothing. */
typedef struct fmpl_steps {
    double send_init, send_wait, send_data;
    double recv_init, recv_header, recv_data;
} fmpl_steps_t;
void fmpl_last_steps(fmpl_steps_t *steps);

typedef struct fmpl_request {
    int kind, peer, mai, live; /* FMPL's own */
} fmpl_request_t;
void fmpl_isend(const void *buf, size_t size, int dst, int mai, fmpl_request_t *req, int *ier);
void fmpl_irecv(void *buf, size_t size, int src, int mai, fmpl_request_t *req, int *ier);
void fmpl_wait_isend(fmpl_request_t *req, int *ier);
void fmpl_wait_irecv(fmpl_request_t *req, int *ier);

/* Send buffering: with a buffer set, a blocking send whose receiver has not
 * posted its header within `timeout` seconds (of the rank's clock) is copied
 * into `buf` and returns FMPL_SUCCESS; fmpl_sendbuff_check sends every
 * spooled message whose receiver is ready by now and reports how many it sent
 * (`nsend`) and how many stay spooled (`nspool`). size 0 turns buffering off
 * (refused while messages are spooled). */
void fmpl_sendbuff_set(void *buf, size_t size, double timeout, int *ier);
void fmpl_sendbuff_check(int *nsend, int *nspool, int *ier);

/* ---- Communicators --------------------------------------------------------- */
#define FMPL_MAX_COMMS 16
typedef struct fmpl_comm {
    int size;                   /* in: members */
    int ranks[FMPL_MAX_PROCS];  /* in: their ranks in the job, ascending, the caller among them */
    int key;                    /* out: the key */
    int handle;                 /* out: FMPL's own */
} fmpl_comm_t;
extern fmpl_comm_t fmpl_comm_world;
#define FMPL_COMM_WORLD (&fmpl_comm_world)

/* Collective over the members `comm` lists (size, ranks): every member
 * passes the same list and the same `key`; otherwise every member gets
 * FMPL_ERR_KEY_MISMATCH and no communicator. */
void fmpl_comm_create(fmpl_comm_t *comm, int key, int *ier);
void fmpl_comm_rank(const fmpl_comm_t *comm, int *rank, int *ier);

/* ---- Collectives (ranks are positions in the communicator) ------------------ */
/* Software broadcast, a binary tree of zero-copy sends, any communicator. */
void fmpl_bcast(void *buf, size_t size, int root, const fmpl_comm_t *comm, int *ier);
/* Hardware broadcast: FMPL_COMM_WORLD only, where the NIA allows it (one
 * process per node, the nodes a line, rectangle or box of the crossbar grid), and
 * `buf` at the same offset of fmpl_malloc memory, with the same size, on
 * every rank; else FMPL_ERR_HW_NOT_ALLOWED (nothing moved) or, on a rank
 * whose offset or size differs, FMPL_ERR_HBCAST_OFFSET (its buffer untouched). */
void fmpl_hbcast(void *buf, size_t size, int root, const fmpl_comm_t *comm, int *ier);

/* Reductions: `func` is one of the functions below; count elements of its
 * type. `work` (count elements, fmpl_malloc memory) receives the partners'
 * data. The result is in `buf` at the root (fmpl_reduce; other ranks' buf
 * holds partial results afterwards) or everywhere (fmpl_allreduce). Every
 * rank must pass the same count: where counts differ, fmpl_allreduce returns
 * FMPL_ERR_ARG on every rank, fmpl_reduce on the root and on the ranks
 * between it and a difference (both: `buf` undefined; the ranks that see a
 * difference name both counts on stderr). */
typedef void fmpl_func_t(void *inout, const void *in, int count);
void fmpl_reduce(void *buf, int count, fmpl_func_t *func, int root, const fmpl_comm_t *comm,
                 void *work, int *ier);
void fmpl_allreduce(void *buf, int count, fmpl_func_t *func, const fmpl_comm_t *comm, void *work,
                    int *ier);
/* sum; max of |x| (keeps the element); min of |x|. I int32_t, S float,
 * D double, C float complex, Z double complex (pairs of re, im). */
fmpl_func_t fmpl_isum, fmpl_ssum, fmpl_dsum, fmpl_csum, fmpl_zsum;
fmpl_func_t fmpl_imax, fmpl_smax, fmpl_dmax, fmpl_cmax, fmpl_zmax;
fmpl_func_t fmpl_imin, fmpl_smin, fmpl_dmin, fmpl_cmin, fmpl_zmin;

/* Hardware barrier on FMPL_COMM_WORLD where the NIA allows it, otherwise a
 * binary tree of light remote-DMA syncs (8-byte flag writes). */
void fmpl_barrier(const fmpl_comm_t *comm, int *ier);
/* 1 when fmpl_barrier / fmpl_hbcast on `comm` use the hardware. The
 * environment variable FMPL_HW_COLLECTIVES=0 (read by fmpl_init) turns the
 * hardware off, so the software algorithms can be compared on the same job. */
int fmpl_hw_collectives(const fmpl_comm_t *comm);

#ifdef __cplusplus
}
#endif

#endif /* FMPL_H */
