/*
 * p2mpi.h - the types and the per-rank state shared by the units of the
 * virtual-time MPI layer (libp2mpi.so, preloaded by p2run into MPI programs;
 * README.md).
 *
 * The layer defines the MPI functions itself. Messages move as modelled
 * InfiniBand transfers through the node's HCA (ib_hw.h, p2_device_get("ib")),
 * so they take simulated time and are matched in the order their completions
 * reach the rank's completion queue, which is simulated-time order. The real
 * Open MPI serves only local work through PMPI: datatype packing, reductions
 * (PMPI_Reduce_local), communicator handles.
 *
 * The units, each using only those listed before it (its header says what it
 * offers to the units above it):
 *   p2mpi_core.c        the rank's state E; the clock, the bracket of an MPI
 *                       call (with its lock under MPI_THREAD_MULTIPLE),
 *                       errors; the communicator table
 *   p2mpi_pthread.c     the program's pthread calls handed to the runtime
 *                       under MPI_THREAD_MULTIPLE (the layer is preloaded)
 *   p2mpi_coro.c        coroutines (a function that yields where it would block)
 *   p2mpi_datatype.c    datatypes: sizes, packing, local copies
 *   p2mpi_gpu.c         GPU buffers: staging costs, the copy engines' timed events
 *   p2mpi_request.c     requests
 *   p2mpi_engine.c      the message engine over the HCA: protocols, progress
 *   p2mpi_p2p.c         point-to-point on a context (pm_isend ... pm_sendrecv)
 *   p2mpi_p2p_calls.c   the MPI point-to-point calls
 *   p2mpi_p2p_modes.c   buffered and ready sends, matched probes, generalized
 *                       requests
 *   p2mpi_coll_base.c   what the collective algorithms are written against
 *   p2mpi_coll_move.c   the algorithms that move data (barrier, bcast, gather,
 *                       scatter, allgather, alltoall)
 *   p2mpi_coll_reduce.c the algorithms that reduce (reduce, allreduce)
 *   p2mpi_coll_calls.c  the MPI collective calls; p2mpi_coll_v.c their
 *                       v-variants; p2mpi_coll_redscat.c reduce-scatter, scan
 *   p2mpi_nbc.c         the nonblocking collectives: the blocking calls'
 *                       algorithms run as coroutines the progress loop resumes
 *   p2mpi_comm.c        communicators and groups
 *   p2mpi_topo.c        process topologies (Cartesian, graph, distributed graph)
 *   p2mpi_intercomm.c   intercommunicators
 *   p2mpi_neighbor.c    the neighbourhood collectives and MPI_Alltoallw
 *   p2mpi_rma_dt.c      one-sided communication's datatypes: predefined types
 *                       and ops by number, a datatype's runs of memory
 *   p2mpi_rma_mem.c     the program's memory: writable ranges, guarded access
 *   p2mpi_rma.c         one-sided operations: windows' table, RDMA puts and
 *                       gets, the target's side of accumulates (p2mpi_rma.h)
 *   p2mpi_rma_calls.c   the MPI one-sided communication calls (MPI_Put ...)
 *   p2mpi_win.c         windows: creation, memory models, synchronisation
 *   p2mpi_init.c        start-up and shutdown
 *   p2mpi_fortran.c     the Fortran bindings' conversions (the bindings,
 *                       fortran_calls.c, are generated: gen_fortran.py)
 * Every declaration of the layer's headers is hidden: the library exports
 * the MPI calls only, so a program's own symbol of the same name never
 * stands in for one of the layer's.
 *
 * Threads: MPI_Init_thread grants the level asked for. Under
 * MPI_THREAD_MULTIPLE every call holds the rank's lock in the simulator
 * (p2mpi_core.c, "Threads"), so one thread at a time runs in the layer, in
 * simulated-time order; a call's blocking wait lets the others in.
 */
#ifndef P2MPI_H
#define P2MPI_H

#include <mpi.h>
#include <pthread.h>
#include <stddef.h>
#include <stdint.h>

#include "p2_job.h"
#include "dev/dev.h"
#include "rt/rt.h"
#include "tca_alloc.h"
#include "p2mpi_layout.h"

#pragma GCC visibility push(hidden)

/* ---- Sizing (host-side mechanics; the timing lives in params.def) --------- */
/* The layout of mpi_host_bytes is shared with the simulator's load-time
 * check (p2mpi_layout.h). */
#define SQ_ENTRIES P2MPI_SQ_ENTRIES
#define RQ_ENTRIES P2MPI_RQ_ENTRIES
#define CQ_ENTRIES P2MPI_CQ_ENTRIES
#define RECV_SLOTS P2MPI_RECV_SLOTS
#define SEND_SLOTS P2MPI_SEND_SLOTS
#define REPOST_BATCH 16 /* receive buffers reposted per doorbell */
#define CQ_TAIL_BATCH 256 /* completions consumed per CQ_TAIL update (CQ_ENTRIES / 16) */
#define HDR_BYTES P2MPI_HDR_BYTES

/* What a collective call's arguments must agree on between the ranks (MPI
 * requires it and does not check it): its messages carry this in header
 * fields their message types leave unused (p2mpi_engine.h), so the check
 * costs no simulated time. kind 0: not compared. */
typedef struct pm_coll_sig {
    uint8_t kind;          /* PM_SIG_*: the call */
    int16_t op;            /* pm_op_to_code: -1 a user-defined op; -2 none */
    int16_t type;          /* the basic type's code: -1 of several; -2 none */
    int32_t root;          /* -1 none */
    uint64_t count;        /* elements of the basic type (bytes if several) */
    uint32_t counts_hash;  /* MPI_Reduce_scatter: its recvcounts */
} pm_coll_sig;

/* A communicator: its members as world ranks, in comm-rank order. The handle
 * is a real Open MPI communicator (a dup of MPI_COMM_SELF for the ones the
 * layer makes) so handle-only calls passed to Open MPI still work. */
typedef struct pm_comm {
    MPI_Comm handle;
    int size, rank;
    int *world;         /* world[comm rank] */
    uint32_t ctx;       /* point-to-point context; collectives use ctx + 1 */
    uint32_t nbc_seq;   /* nonblocking collectives started on it (their contexts) */
    /* Nonblocking collectives on it not yet complete; MPI_Comm_free while
     * some are marks it `freed`, and the last one to complete frees it
     * (MPI-3.1 6.4.3: the free waits for pending operations). */
    unsigned nbc_pending;
    int freed;
    /* MPI_THREAD_MULTIPLE: the blocking collective a thread of this rank is
     * inside on it (NULL: none), and that thread */
    const char *coll_call;
    pthread_t coll_thread;
    /* Process topology (p2mpi_topo.c): one block of topo_bytes, which
     * MPI_Comm_dup copies and MPI_Comm_free frees; NULL: none. */
    struct pm_topo *topo;
    size_t topo_bytes;
    /* An intercommunicator (p2mpi_intercomm.c): size and world are the
     * remote group's (point-to-point reaches it), rank the local rank, and
     * local the local group as an intracommunicator of its own (no handle);
     * NULL for an intracommunicator. */
    struct pm_comm *local;
    struct pm_comm *next;
} pm_comm;

/* Requests (p2mpi_request.h), messages that arrived before their receive
 * and rendezvous steps waiting for staging (p2mpi_engine.h), the copy
 * engines' timed events (p2mpi_gpu.h). */
typedef struct pm_req pm_req;
typedef struct pm_unexp pm_unexp;
typedef struct pm_pending pm_pending;
typedef struct pm_event pm_event;

/* The rank's state, one struct for every unit: it is defined in the lowest
 * one (p2mpi_core.c), so each unit reaches it without a call upward. The
 * runtime and the MPI call being made are p2mpi_core.c's; the queues, slots
 * and staging p2mpi_engine.c's; the request table p2mpi_request.c's; the
 * timed events p2mpi_gpu.c's. */
typedef struct pm_state {
    p2_rt *rt;
    p2_dev *dev;
    p2_job_rank *chan;
    int inited, finalized;
    uint8_t *base;     /* the layer's host memory in this process */
    uint64_t bus;      /* ... its bus address */
    uint64_t sq_off, rq_off, cq_off, recv_off, send_off, stage_off, slot_bytes;
    uint64_t sq_posted, sq_done, rq_posted, cq_seen;
    int send_free[SEND_SLOTS], nsend_free;
    int repost[RECV_SLOTS], nrepost;
    tca_arena stage;
    uint64_t next_id;
    pm_req **reqs; /* by id % cap, for CTS/FIN/write completions */
    size_t reqs_cap;
    pm_req *posted, *posted_tail;
    pm_unexp *unexp, *unexp_tail;
    pm_pending *pending;
    pm_event *ev;        /* timed events, a binary heap by (t, seq) */
    size_t nev, ev_cap;
    uint64_t ev_seq;
    uint64_t d2h_free, h2d_free; /* when the GPU's copy engines are next idle */
    uint64_t handled;    /* completions and timed events the progress loop has handled */
    /* The nonblocking collectives (p2mpi_nbc.c): resumes every one in flight,
     * set at the first; and the context bits of the one running now, which
     * its collective messages carry (0 outside: blocking collectives) */
    void (*nbc_run)(void);
    uint32_t coll_ctx_bits;
    /* the collective running now: what its arguments must agree on, and the
     * nonblocking one's number on its communicator (both in its messages'
     * headers); a collective message nothing was waiting for, of a
     * nonblocking collective (set by p2mpi_nbc.c: one that has ended here
     * is the ranks' calls differing) */
    pm_coll_sig coll_sig;
    uint32_t coll_seq;
    void (*nbc_unexpected)(const void *hdr);
    /* One-sided communication (p2mpi_rma.c): the engine hands it the
     * messages of types from H_HOOK on (its active messages) and the
     * completions of its work requests (RDMA reads, atomics, WR_RMA
     * writes), set at the first window */
    void (*rma_arrived)(const void *hdr, const uint8_t *data);
    void (*rma_completed)(const void *cqe);
    /* The collective running now is on the GPU path (p2mpi_coll_base.c) */
    int coll_gpu_path;
    const char *call;
    char what[80];
    uint64_t call_start;
    int depth;
    /* Threads (p2mpi_core.c): the level MPI_Init_thread granted; under
     * MPI_THREAD_MULTIPLE (multi) calls take the rank's lock; the thread
     * that initialised MPI (MPI_Is_thread_main); a check that the lock
     * keeps one thread at a time in the layer */
    int thread_level, multi;
    pthread_t main_thread;
    int inside;
} pm_state;

extern pm_state E;
extern int pm_world_rank, pm_world_size;
extern uint64_t pm_eager_bytes;

#pragma GCC visibility pop

#endif /* P2MPI_H */
