/*
 * p2mpi.c - the virtual-time MPI layer: start-up, the message engine over the
 * node's InfiniBand HCA, point-to-point calls, requests, communicators and
 * groups (collectives: p2mpi_coll.c). README.md has the design.
 *
 * Engine, per rank (all queues in the top mpi_host_bytes of the node's
 * registered host memory, which tcaMalloc leaves alone):
 *   SQ, RQ, CQ of the HCA (ib_hw.h); RECV_SLOTS eager receive buffers kept
 *   posted; SEND_SLOTS eager send buffers; the rest a staging arena for
 *   rendezvous data.
 * Every message starts with a SEND on rail 0 carrying a header (pm_hdr):
 *   EAGER  header + data (at most mpi_eager_bytes): the sender copies the
 *          data into a send buffer (charged at mpi_copy_gbps) and is done.
 *   RTS    rendezvous request; the receiver, once the message is matched,
 *          takes staging memory and answers CTS with its address; the
 *          sender RDMA-writes the data over both rails (striped) and sends
 *          a FIN on each rail right behind it (MVAPICH2's RPUT finish: a
 *          rail delivers in order); it is done when the write is
 *          acknowledged; the receiver copies out at the last FIN. The
 *          staging copies are the emulator's (user buffers are process
 *          memory, which the model cannot reach) and are not charged: they
 *          stand for MVAPICH2's zero-copy RDMA from registered user buffers.
 * GPU buffers (pointers into the node's GPU arena, the memory cudaMalloc and
 * tcaMalloc GPU hand out) take MVAPICH2-GDR's paths: up to mpi_gdrcopy_bytes
 * eagerly, the CPU copying between GPU memory and the eager buffers as
 * GDRCopy does (single uncached loads up to mpi_gdr_small_bytes, the full
 * GDRCopy copy above; charged with the mpi_gdr* parameters); larger ones by
 * rendezvous. There a GPU side up to its GPUDirect limit (mpi_gdr_send_bytes,
 * mpi_gdr_recv_bytes) is read or written by the HCA itself at the GPU
 * arena's bus addresses (the IB model's ib_gpu_* costs); above, it goes
 * through host staging in chunks of mpi_cuda_block_bytes, each chunk a
 * cudaMemcpyAsync on the GPU's copy engine (a timeline per direction, the
 * CUDA runtime's cuda_d2h_* / cuda_h2d_* costs): the sender writes a chunk
 * when its copy has finished, the receiver copies a chunk in when CHUNK
 * says it has landed. The engine's completions are timed events of the
 * progress loop, which waits for the CQ or the next of them, whichever
 * comes first.
 * One rail for headers keeps each sender's messages in order (MPI's
 * non-overtaking rule); completions are handled in the order they reach the
 * CQ, i.e. simulated-time order, so MPI_ANY_SOURCE matches deterministically.
 */
#define _GNU_SOURCE
#include "p2mpi.h"

#include <inttypes.h>
#include <stdarg.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <unistd.h>

#include "p2_job.h"
#include "dev/dev.h"
#include "ib_hw.h"
#include "rt/rt.h"
#include "tca_alloc.h"
#include "p2mpi_layout.h"

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

enum { H_EAGER = 1, H_RTS = 2, H_CTS = 3, H_FIN = 4, H_CHUNK = 5 };
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

/* wr_id of send work requests: kind in the top byte */
enum { WR_SLOT = 1, WR_WRITE = 2, WR_CHUNK = 3 };
#define WR(kind, v) (((uint64_t)(kind) << 56) | (uint64_t)(v))
#define CHUNK_BITS 20 /* WR_CHUNK: request id << CHUNK_BITS | chunk index */

/* ---- Requests --------------------------------------------------------------- */
enum { RQ_SEND = 1, RQ_RECV = 2 };
typedef struct pm_req {
    int kind, done, active, persistent, coll, sync;
    uint64_t id;
    /* the call's arguments */
    void *buf;
    int count;
    MPI_Datatype type;
    int peer, tag; /* comm ranks; peer may be MPI_ANY_SOURCE or MPI_PROC_NULL */
    pm_comm *comm;
    uint32_t ctx;
    /* rendezvous state */
    uint64_t staging; /* offset in the staging arena + 1, 0 = none */
    int direct;       /* rendezvous straight from/to GPU memory (no staging) */
    int piped;        /* the GPU side of this end goes through host staging in chunks */
    int notify;       /* send: the receiver wants a CHUNK per chunk (CTS_CHUNKS) */
    uint64_t local, remote; /* send: bus addresses the data comes from and goes to */
    uint64_t chunks, chunks_left; /* chunked: how many, how many not yet acknowledged/copied in */
    uint64_t bytes;
    uint64_t rreq;    /* send: the receiver's request, named by the FIN */
    int fins_left;    /* receive: FINs still to come, one per rail */
    /* receive: result */
    MPI_Status status;
    struct pm_req *next; /* posted-receive queue */
} pm_req;

typedef struct pm_unexp {
    pm_hdr h;
    uint8_t *data; /* eager: a copy of the data */
    struct pm_unexp *next;
} pm_unexp;

/* A copy on the GPU's copy engine finishing at `t` (a timed event). */
enum { EV_D2H = 1, EV_H2D = 2 };
typedef struct pm_event {
    uint64_t t, seq;
    int kind;
    uint64_t req, chunk;
} pm_event;

/* A rendezvous step waiting for staging memory. */
typedef struct pm_pending {
    int cts; /* 1: receiver must answer an RTS; 0: sender must write after CTS */
    pm_req *req;
    pm_hdr h;
    struct pm_pending *next;
} pm_pending;

static struct {
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
    const char *call;
    char what[80];
    uint64_t call_start;
    int depth;
} E;

int pm_world_rank, pm_world_size;
uint64_t pm_eager_bytes;
static pm_comm world_comm, self_comm, *comms;
static uint32_t next_ctx = 4;

/* ---- Clock, calls, errors -------------------------------------------------- */

void pm_charge(uint64_t ps)
{
    if (!E.rt || !ps)
        return;
    p2_rt_enter(E.rt);
    p2_rt_charge_ps(E.rt, ps);
    p2_rt_leave(E.rt);
}

static uint64_t now_ps(void)
{
    p2_rt_enter(E.rt);
    uint64_t t = p2_rt_clock_ps(E.rt);
    p2_rt_leave(E.rt);
    return t;
}

static void need_init(const char *call)
{
    if (!E.inited)
        pm_fatal("%s before MPI_Init", call);
    if (E.finalized)
        pm_fatal("%s after MPI_Finalize", call);
}

void pm_enter(const char *call)
{
    if (E.depth++ == 0) {
        p2_rt_api_begin();
        E.call = call;
        E.what[0] = '\0';
        if (E.inited && !E.finalized)
            E.call_start = now_ps();
    }
}

void pm_leave(void)
{
    if (--E.depth == 0) {
        E.call = NULL;
        p2_rt_api_end();
    }
}

_Noreturn void pm_fatal(const char *fmt, ...)
{
    char msg[512];
    va_list ap;
    va_start(ap, fmt);
    vsnprintf(msg, sizeof msg, fmt, ap);
    va_end(ap);
    if (E.call && strstr(msg, E.call) != msg)
        fprintf(stderr, "p2mpi: rank %d: %s: %s\n", pm_world_rank, E.call, msg);
    else
        fprintf(stderr, "p2mpi: rank %d: %s\n", pm_world_rank, msg);
    fflush(stderr);
    exit(1);
}

/* Called by the generated stubs (unsupported.c) for calls the layer does not
 * model: never run them untimed. */
_Noreturn void p2mpi_unsupported(const char *name)
{
    fprintf(stderr,
            "p2mpi: rank %d: %s is not modelled by the virtual-time MPI layer (mpi/README.md "
            "lists the calls it models); stopping rather than running it untimed\n",
            pm_world_rank, name);
    fflush(stderr);
    exit(1);
}

/* ---- Datatypes -------------------------------------------------------------- */

size_t pm_type_size(MPI_Datatype t)
{
    int sz = 0;
    if (t == MPI_DATATYPE_NULL || PMPI_Type_size(t, &sz) != MPI_SUCCESS)
        pm_fatal("invalid datatype");
    return (size_t)sz;
}

MPI_Aint pm_type_extent(MPI_Datatype t)
{
    MPI_Aint lb, ext;
    PMPI_Type_get_extent(t, &lb, &ext);
    return ext;
}

static int type_contig(MPI_Datatype t)
{
    MPI_Aint lb, ext, tlb, text;
    PMPI_Type_get_extent(t, &lb, &ext);
    PMPI_Type_get_true_extent(t, &tlb, &text);
    return lb == 0 && tlb == 0 && ext == text && (size_t)ext == pm_type_size(t);
}

void *pm_type_buffer(MPI_Datatype t, int count, void **shifted)
{
    MPI_Aint tlb, text, lb, ext;
    PMPI_Type_get_true_extent(t, &tlb, &text);
    PMPI_Type_get_extent(t, &lb, &ext);
    size_t n = count > 0 ? (size_t)text + (size_t)(count - 1) * (size_t)ext : 1;
    char *base = malloc(n ? n : 1);
    if (!base)
        pm_fatal("out of memory for a %zu-byte temporary", n);
    *shifted = base - tlb;
    return base;
}

/* count elements of t at buf into n contiguous bytes at out. */
static void pack(const void *buf, int count, MPI_Datatype t, void *out, size_t n)
{
    if (!n)
        return;
    if (type_contig(t)) {
        memcpy(out, buf, n);
        return;
    }
    int pos = 0;
    if (PMPI_Pack(buf, count, t, out, (int)n, &pos, MPI_COMM_SELF) != MPI_SUCCESS)
        pm_fatal("packing a derived datatype failed");
}

/* n bytes into buf as elements of t (n may be short of count elements). */
static void unpack(const void *in, size_t n, void *buf, int count, MPI_Datatype t)
{
    if (!n)
        return;
    if (type_contig(t)) {
        memcpy(buf, in, n);
        return;
    }
    size_t sz = pm_type_size(t);
    int whole = (int)(n / sz);
    if (whole > count)
        whole = count;
    int pos = 0;
    if (PMPI_Unpack(in, (int)n, &pos, buf, whole, t, MPI_COMM_SELF) != MPI_SUCCESS)
        pm_fatal("unpacking a derived datatype failed");
}

void pm_local_copy(const void *src, int scount, MPI_Datatype stype, void *dst, int rcount,
                   MPI_Datatype rtype)
{
    size_t n = pm_type_size(stype) * (size_t)scount;
    if (n > pm_type_size(rtype) * (size_t)rcount)
        pm_fatal("message of %zu bytes truncated (the buffer holds %zu)", n,
                 pm_type_size(rtype) * (size_t)rcount);
    uint8_t *tmp = malloc(n ? n : 1);
    pack(src, scount, stype, tmp, n);
    unpack(tmp, n, dst, rcount, rtype);
    free(tmp);
    pm_charge_copy(n);
}

void pm_charge_copy(size_t n) { pm_charge((uint64_t)((double)n * 1000.0 / E.rt->prm.mpi_copy_gbps)); }

/* ---- The HCA ------------------------------------------------------------------ */

static int progress(int block);

static void reg(uint64_t r, uint64_t v) { E.dev->ops->mmio_write(E.dev, IB_BAR_REGS, r, v); }

static uint64_t bus_of(uint64_t off) { return E.bus + off; }

static uint8_t *recv_slot(int i) { return E.base + E.recv_off + (uint64_t)i * E.slot_bytes; }
static uint8_t *send_slot(int i) { return E.base + E.send_off + (uint64_t)i * E.slot_bytes; }

static void post_wqe(uint8_t op, int wdest, uint8_t rail, uint64_t local_bus, uint64_t len,
                     uint64_t remote, uint64_t wr_id)
{
    while (E.sq_posted - E.sq_done >= SQ_ENTRIES)
        progress(1); /* the HCA frees entries as it completes them */
    ib_wqe w;
    memset(&w, 0, sizeof w);
    w.opcode = op;
    w.flags = IB_WQE_SIGNALED;
    w.rail = rail;
    w.dest_node = (uint16_t)E.rt->job->rank_node[wdest];
    w.length = (uint32_t)len;
    w.local_addr = local_bus;
    w.remote_addr = remote;
    w.wr_id = wr_id;
    memcpy(E.base + E.sq_off + IB_WQE_SIZE * (E.sq_posted % SQ_ENTRIES), &w, sizeof w);
    reg(IB_REG_SQ_DOORBELL, ++E.sq_posted);
}

static void post_recvs(const int *slots, int n)
{
    for (int k = 0; k < n; k++) {
        ib_rqe e;
        memset(&e, 0, sizeof e);
        e.addr = bus_of(E.recv_off + (uint64_t)slots[k] * E.slot_bytes);
        e.length = (uint32_t)E.slot_bytes;
        e.wr_id = (uint64_t)slots[k];
        memcpy(E.base + E.rq_off + IB_RQE_SIZE * (E.rq_posted % RQ_ENTRIES), &e, sizeof e);
        E.rq_posted++;
    }
    reg(IB_REG_RQ_DOORBELL, E.rq_posted);
}

static int take_send_slot(void)
{
    while (E.nsend_free == 0)
        progress(1);
    return E.send_free[--E.nsend_free];
}

/* A SEND of a header (and `n` bytes of data after it) on `rail`. */
static void send_hdr_on(int wdest, uint8_t rail, const pm_hdr *h, const void *data, size_t n)
{
    int s = take_send_slot();
    uint8_t *p = send_slot(s);
    memcpy(p, h, HDR_BYTES);
    if (n)
        memcpy(p + HDR_BYTES, data, n);
    post_wqe(IB_OP_SEND, wdest, rail, bus_of(E.send_off + (uint64_t)s * E.slot_bytes),
             HDR_BYTES + n, 0, WR(WR_SLOT, s));
}

/* Headers go on rail 0: one rail keeps each sender's messages in order. */
static void send_hdr(int wdest, const pm_hdr *h, const void *data, size_t n)
{
    send_hdr_on(wdest, 0, h, data, n);
}

/* A rendezvous send's FIN on every rail (MVAPICH2's RPUT finish): each rail
 * delivers in order, so the receiver has the data once it has them all. */
static void send_fins(const pm_req *s)
{
    pm_hdr f = {.type = H_FIN, .src = pm_world_rank, .rreq = s->rreq};
    for (uint8_t rail = 0; rail < IB_PORTS; rail++)
        send_hdr_on(s->comm->world[s->peer], rail, &f, NULL, 0);
}

/* ---- Requests ----------------------------------------------------------------- */

static pm_req *req_new(int kind)
{
    pm_req *r = calloc(1, sizeof *r);
    if (!r)
        pm_fatal("out of memory");
    r->kind = kind;
    r->id = ++E.next_id;
    if (E.next_id >= E.reqs_cap) {
        size_t cap = E.reqs_cap ? E.reqs_cap * 2 : 1024;
        pm_req **t = realloc(E.reqs, cap * sizeof *t);
        if (!t)
            pm_fatal("out of memory");
        memset(t + E.reqs_cap, 0, (cap - E.reqs_cap) * sizeof *t);
        E.reqs = t;
        E.reqs_cap = cap;
    }
    E.reqs[r->id] = r;
    return r;
}

static pm_req *req_by_id(uint64_t id)
{
    if (id == 0 || id >= E.reqs_cap || !E.reqs[id])
        pm_fatal("a message names request %" PRIu64 ", which does not exist (internal)", id);
    return E.reqs[id];
}

static void req_free(pm_req *r)
{
    E.reqs[r->id] = NULL;
    free(r);
}

static pm_req *as_req(MPI_Request h) { return (pm_req *)(void *)h; }
static MPI_Request as_handle(pm_req *r) { return (MPI_Request)(void *)r; }

static uint64_t copy_ps(size_t n) { return (uint64_t)((double)n * 1000.0 / E.rt->prm.mpi_copy_gbps); }

/* ---- GPU buffers ----------------------------------------------------------------- */

/* A buffer in this node's GPU memory (cudaMalloc, tcaMalloc GPU): the
 * arena the model serves at the GPU window, mapped into this process. */
static int gpu_buf(const void *p)
{
    const uint8_t *q = p, *b = E.rt->gpu.base;
    return b && q >= b && q < b + E.rt->gpu.size;
}

/* A GPU buffer the HCA can reach as one range of bus addresses: contiguous
 * type and [buf, buf + n) inside the arena. 0 otherwise (pack via staging). */
static int gpu_direct(const void *buf, MPI_Datatype t, size_t n, uint64_t *bus)
{
    if (!gpu_buf(buf) || !type_contig(t))
        return 0;
    uint64_t off = (uint64_t)((const uint8_t *)buf - E.rt->gpu.base);
    if (n > E.rt->gpu.size - off)
        return 0;
    *bus = E.rt->gpu.bus + off;
    return 1;
}

/* The sender's CPU reading n bytes of GPU memory into an eager buffer
 * (GDRCopy, device to host): single uncached loads for the smallest
 * messages, the library's copy above (README: the 8 B / 16 B step). */
static uint64_t gdr_d2h_ps(size_t n)
{
    if (n == 0)
        return 0;
    if (n <= (uint64_t)E.rt->prm.mpi_gdr_small_bytes)
        return p2_ns_ps(E.rt->prm.mpi_gdr_load_ns);
    return p2_ns_ps(E.rt->prm.mpi_gdrcopy_d2h_ns) + (uint64_t)((double)n * 1000.0 / E.rt->prm.mpi_gdrcopy_d2h_gbps);
}

/* The receiver's CPU writing n bytes from an eager buffer into GPU memory
 * (GDRCopy, host to device: write-combined stores, posted). */
static uint64_t gdr_h2d_ps(size_t n)
{
    if (n == 0)
        return 0;
    if (n <= (uint64_t)E.rt->prm.mpi_gdr_small_bytes) {
        uint64_t per = (uint64_t)E.rt->prm.pio_store_bytes ? (uint64_t)E.rt->prm.pio_store_bytes : 1;
        return (n + per - 1) / per * p2_ns_ps(E.rt->prm.pio_store_ns);
    }
    return p2_ns_ps(E.rt->prm.mpi_gdrcopy_h2d_ns) + (uint64_t)((double)n * 1000.0 / E.rt->prm.mpi_gdrcopy_h2d_gbps);
}

int pm_gpu_buf(const void *buf) { return buf && buf != MPI_IN_PLACE && gpu_buf(buf); }

/* MVAPICH2's collectives move a GPU buffer to and from host staging with
 * synchronous copies (MPIU_Memcpy_CUDA). In MVAPICH2-GDR small ones cannot
 * be cudaMemcpy calls: three of those (6-8 us each) would exceed the
 * published 8 B allreduce at 2 ranks (5.2 us) on their own, so they are
 * taken as GDRCopy copies, the mechanism its point-to-point uses up to the
 * same limit; larger ones are cudaMemcpy, on unregistered host memory below
 * MV2_REGISTER_NAIVE_BUF and on memory MVAPICH2 registers (pinned: the CUDA
 * runtime's pinned rate) at or above it. */
static void charge_stage(size_t n, uint64_t (*gdrcopy_ps)(size_t), uint64_t call_ps,
                         double pinned_bps)
{
    if (n == 0)
        return;
    if (n <= (uint64_t)E.rt->prm.mpi_gdrcopy_bytes)
        pm_charge(gdrcopy_ps(n));
    else
        pm_charge(call_ps + (uint64_t)((double)n * 1e12 /
                                       (n >= MV2_REGISTER_NAIVE_BUF ? pinned_bps
                                                                    : p2_gbps_Bps(E.rt->prm.cuda_pageable_gbps))));
}

void pm_charge_stage_d2h(size_t n)
{
    charge_stage(n, gdr_d2h_ps, p2_ns_ps(E.rt->prm.cuda_d2h_latency_ns), p2_gbps_Bps(E.rt->prm.cuda_d2h_gbps));
}

void pm_charge_stage_h2d(size_t n)
{
    charge_stage(n, gdr_h2d_ps, p2_ns_ps(E.rt->prm.cuda_h2d_latency_ns), p2_gbps_Bps(E.rt->prm.cuda_h2d_gbps));
}

void pm_charge_d2d(size_t n)
{
    if (n)
        pm_charge(p2_ns_ps(E.rt->prm.cuda_d2d_latency_ns) + (uint64_t)((double)n * 1e12 / p2_gbps_Bps(E.rt->prm.cuda_d2d_gbps)));
}

void pm_coll_call_cost(void) { pm_charge(p2_ns_ps(E.rt->prm.mpi_coll_call_ns)); }
void pm_coll_step_cost(void) { pm_charge(p2_ns_ps(E.rt->prm.mpi_coll_step_ns)); }

void pm_charge_reduce(size_t n)
{
    if (n && p2_gbps_Bps(E.rt->prm.host_reduce_gbps) > 0)
        pm_charge((uint64_t)((double)n * 1e12 / p2_gbps_Bps(E.rt->prm.host_reduce_gbps)));
}

static int matches(const pm_req *r, const pm_hdr *h)
{
    if (r->ctx != h->ctx)
        return 0;
    if (!r->coll && r->tag != MPI_ANY_TAG && r->tag != h->tag)
        return 0;
    return r->peer == MPI_ANY_SOURCE || r->comm->world[r->peer] == h->src;
}

static void set_status(pm_req *r, const pm_hdr *h)
{
    if (r->coll && h->tag != r->tag)
        pm_coll_tag_mismatch(r->tag, h->tag, h->src);
    r->status.MPI_SOURCE = pm_comm_rank_of(r->comm, h->src);
    r->status.MPI_TAG = h->tag;
    r->status.MPI_ERROR = MPI_SUCCESS;
    r->status._cancelled = 0;
    r->status._ucount = (size_t)h->bytes;
    size_t cap = pm_type_size(r->type) * (size_t)r->count;
    if (h->bytes > cap)
        pm_fatal("message of %" PRIu64 " bytes from rank %d tag %d truncated: the receive "
                 "buffer holds %zu (MPI_ERR_TRUNCATE)",
                 h->bytes, h->src, h->tag, cap);
}

/* ---- The GPU's copy engines: timed events ---------------------------------------- */

static int ev_before(const pm_event *a, const pm_event *b)
{
    return a->t != b->t ? a->t < b->t : a->seq < b->seq;
}

static void ev_push(uint64_t t, int kind, uint64_t req, uint64_t chunk)
{
    if (E.nev == E.ev_cap) {
        size_t cap = E.ev_cap ? E.ev_cap * 2 : 64;
        pm_event *v = realloc(E.ev, cap * sizeof *v);
        if (!v)
            pm_fatal("out of memory");
        E.ev = v;
        E.ev_cap = cap;
    }
    size_t i = E.nev++;
    E.ev[i] = (pm_event){.t = t, .seq = E.ev_seq++, .kind = kind, .req = req, .chunk = chunk};
    while (i && ev_before(&E.ev[i], &E.ev[(i - 1) / 2])) {
        pm_event x = E.ev[i];
        E.ev[i] = E.ev[(i - 1) / 2];
        E.ev[(i - 1) / 2] = x;
        i = (i - 1) / 2;
    }
}

static pm_event ev_pop(void)
{
    pm_event top = E.ev[0];
    E.ev[0] = E.ev[--E.nev];
    for (size_t i = 0;;) {
        size_t l = 2 * i + 1, r = l + 1, m = i;
        if (l < E.nev && ev_before(&E.ev[l], &E.ev[m]))
            m = l;
        if (r < E.nev && ev_before(&E.ev[r], &E.ev[m]))
            m = r;
        if (m == i)
            break;
        pm_event x = E.ev[i];
        E.ev[i] = E.ev[m];
        E.ev[m] = x;
        i = m;
    }
    return top;
}

/* A cudaMemcpyAsync of n bytes queued on an engine at the rank's time: it
 * starts when the engine is idle and takes the CUDA runtime's copy cost. */
static uint64_t engine_copy(uint64_t *free_at, uint64_t lat_ps, double bps, uint64_t n)
{
    uint64_t now = now_ps(), start = *free_at > now ? *free_at : now;
    *free_at = start + lat_ps + (uint64_t)((double)n * 1e12 / bps);
    return *free_at;
}

static uint64_t chunk_len(const pm_req *r, uint64_t k)
{
    uint64_t b = (uint64_t)E.rt->prm.mpi_cuda_block_bytes, off = k * b;
    return r->bytes - off < b ? r->bytes - off : b;
}

/* The receiver answers an RTS: where the data goes, then CTS. A GPU buffer up
 * to the receive limit is written by the HCA itself; any other buffer gets
 * staging (0 if no staging memory is free yet). */
static int answer_rts(pm_req *r, const pm_hdr *h)
{
    uint64_t off = 0, addr = 0;
    uint32_t flags = 0;
    r->bytes = h->bytes;
    if (h->bytes && h->bytes <= (uint64_t)E.rt->prm.mpi_gdr_recv_bytes &&
        gpu_direct(r->buf, r->type, h->bytes, &addr)) {
        r->direct = 1; /* GPUDirect RDMA: the HCA writes the GPU buffer itself */
    } else {
        if (h->bytes && tca_arena_alloc(&E.stage, h->bytes, &off) != TCA_ARENA_OK)
            return 0;
        r->staging = off + 1;
        addr = bus_of(E.stage_off + off);
        if (h->bytes && gpu_buf(r->buf)) { /* copied in chunk by chunk as CHUNKs arrive */
            r->piped = 1;
            r->chunks = r->chunks_left =
                (h->bytes + (uint64_t)E.rt->prm.mpi_cuda_block_bytes - 1) / (uint64_t)E.rt->prm.mpi_cuda_block_bytes;
            flags = CTS_CHUNKS;
        }
    }
    r->fins_left = flags & CTS_CHUNKS ? 0 : IB_PORTS;
    pm_hdr c = {.type = H_CTS, .src = pm_world_rank, .sreq = h->sreq, .rreq = r->id,
                .addr = addr, .bytes = h->bytes, .flags = flags};
    send_hdr(h->src, &c, NULL, 0);
    return 1;
}

static void write_chunk(pm_req *s, uint64_t k)
{
    uint64_t off = k * (uint64_t)E.rt->prm.mpi_cuda_block_bytes;
    post_wqe(IB_OP_RDMA_WRITE, s->comm->world[s->peer], IB_RAIL_ANY, s->local + off,
             chunk_len(s, k), s->remote + off, WR(WR_CHUNK, (s->id << CHUNK_BITS) | k));
}

/* The sender answers a CTS. A GPU buffer up to the send limit is read by the
 * HCA itself: one RDMA write. Any other buffer is packed into staging; a GPU
 * one is then copied out chunk by chunk on the copy engine, each chunk
 * written when its copy is done; a host one is written at once, in chunks
 * if the receiver wants CHUNKs. 0 if no staging memory is free yet. */
static int answer_cts(pm_req *s, const pm_hdr *h)
{
    uint64_t off = 0, local = 0, b = (uint64_t)E.rt->prm.mpi_cuda_block_bytes;
    int direct = s->bytes && s->bytes <= (uint64_t)E.rt->prm.mpi_gdr_send_bytes &&
                 gpu_direct(s->buf, s->type, s->bytes, &local);
    if (!direct && s->bytes) {
        if (tca_arena_alloc(&E.stage, s->bytes, &off) != TCA_ARENA_OK)
            return 0;
        s->staging = off + 1;
        pack(s->buf, s->count, s->type, E.base + E.stage_off + off, s->bytes);
        local = bus_of(E.stage_off + off);
    }
    s->direct = direct;
    s->rreq = h->rreq;
    s->local = local;
    s->remote = h->addr;
    s->notify = (h->flags & CTS_CHUNKS) != 0;
    s->piped = !direct && s->bytes && gpu_buf(s->buf);
    if (!s->piped && !s->notify) {
        post_wqe(IB_OP_RDMA_WRITE, s->comm->world[s->peer], IB_RAIL_ANY, local, s->bytes, h->addr,
                 WR(WR_WRITE, s->id));
        send_fins(s); /* right behind the write, not after its acknowledgement */
        return 1;
    }
    s->chunks = s->chunks_left = (s->bytes + b - 1) / b;
    if (s->chunks >= (1u << CHUNK_BITS))
        pm_fatal("a %" PRIu64 "-byte GPU message is more than %u chunks of mpi_cuda_block_bytes",
                 s->bytes, 1u << CHUNK_BITS);
    for (uint64_t k = 0; k < s->chunks; k++) {
        if (s->piped) /* written when its copy out of the GPU ends */
            ev_push(engine_copy(&E.d2h_free, p2_ns_ps(E.rt->prm.cuda_d2h_latency_ns), p2_gbps_Bps(E.rt->prm.cuda_d2h_gbps),
                                chunk_len(s, k)),
                    EV_D2H, s->id, k);
        else
            write_chunk(s, k);
    }
    return 1;
}

static void defer(int cts, pm_req *r, const pm_hdr *h)
{
    pm_pending *p = calloc(1, sizeof *p), **t = &E.pending;
    p->cts = cts;
    p->req = r;
    p->h = *h;
    while (*t)
        t = &(*t)->next;
    *t = p;
}

static void retry_pending(void)
{
    while (E.pending) {
        pm_pending *p = E.pending;
        if (!(p->cts ? answer_rts(p->req, &p->h) : answer_cts(p->req, &p->h)))
            return; /* in order: the first must go first */
        E.pending = p->next;
        free(p);
    }
}

/* A matched message: eager data into the buffer, or start the rendezvous. */
static void deliver(pm_req *r, const pm_hdr *h, const uint8_t *data)
{
    set_status(r, h);
    if (h->type == H_EAGER) {
        unpack(data, h->bytes, r->buf, r->count, r->type);
        pm_charge(gpu_buf(r->buf) ? gdr_h2d_ps(h->bytes) : copy_ps(h->bytes));
        r->done = 1;
    } else if (!answer_rts(r, h)) {
        defer(1, r, h);
    }
}

static void arrived(const pm_hdr *h, const uint8_t *data)
{
    switch (h->type) {
    case H_EAGER:
    case H_RTS: {
        pm_req **pp = &E.posted, *prev = NULL;
        for (pm_req *r = E.posted; r; prev = r, pp = &r->next, r = r->next)
            if (matches(r, h)) {
                *pp = r->next;
                if (E.posted_tail == r)
                    E.posted_tail = prev;
                deliver(r, h, data);
                return;
            }
        pm_unexp *u = calloc(1, sizeof *u);
        u->h = *h;
        if (h->type == H_EAGER && h->bytes) {
            u->data = malloc(h->bytes);
            memcpy(u->data, data, h->bytes);
        }
        if (E.unexp_tail)
            E.unexp_tail->next = u;
        else
            E.unexp = u;
        E.unexp_tail = u;
        return;
    }
    case H_CTS: {
        pm_req *s = req_by_id(h->sreq);
        if (!answer_cts(s, h))
            defer(0, s, h);
        return;
    }
    case H_CHUNK: { /* a chunk is in staging: copy it into the GPU buffer */
        pm_req *r = req_by_id(h->rreq);
        ev_push(engine_copy(&E.h2d_free, p2_ns_ps(E.rt->prm.cuda_h2d_latency_ns), p2_gbps_Bps(E.rt->prm.cuda_h2d_gbps), h->len), EV_H2D,
                r->id, h->off / (uint64_t)E.rt->prm.mpi_cuda_block_bytes);
        return;
    }
    case H_FIN: {
        pm_req *r = req_by_id(h->rreq);
        if (--r->fins_left > 0)
            return;
        if (r->direct) { /* the data is already in the GPU buffer */
            r->direct = 0;
        } else {
            uint64_t off = r->staging - 1;
            unpack(E.base + E.stage_off + off, r->bytes, r->buf, r->count, r->type);
            if (r->bytes)
                tca_arena_free(&E.stage, off);
        }
        r->staging = 0;
        r->done = 1;
        retry_pending();
        return;
    }
    }
    pm_fatal("unknown message type %u (internal)", h->type);
}

static void completed_send(const ib_cqe *c)
{
    uint64_t kind = c->wr_id >> 56, v = c->wr_id & ((1ULL << 56) - 1);
    E.sq_done++;
    if (c->status != IB_OK)
        pm_fatal("the HCA failed a work request (ib_status %u)", c->status);
    if (kind == WR_SLOT) {
        E.send_free[E.nsend_free++] = (int)v;
        return;
    }
    if (kind == WR_CHUNK) { /* one chunk is at the receiver */
        pm_req *s = req_by_id(v >> CHUNK_BITS);
        uint64_t k = v & ((1u << CHUNK_BITS) - 1);
        if (s->notify) {
            pm_hdr c = {.type = H_CHUNK, .src = pm_world_rank, .rreq = s->rreq,
                        .off = k * (uint64_t)E.rt->prm.mpi_cuda_block_bytes, .len = (uint32_t)chunk_len(s, k)};
            send_hdr(s->comm->world[s->peer], &c, NULL, 0);
        }
        if (--s->chunks_left)
            return;
        if (s->staging)
            tca_arena_free(&E.stage, s->staging - 1);
        s->staging = 0;
        s->direct = s->piped = 0;
        s->done = 1;
        if (!s->notify) /* every chunk acknowledged: the receiver counts a FIN per rail */
            send_fins(s);
        retry_pending();
        return;
    }
    /* WR_WRITE: acknowledged (its FINs went right behind it): the send is done. */
    pm_req *s = req_by_id(v);
    if (s->staging)
        tca_arena_free(&E.stage, s->staging - 1);
    s->staging = 0;
    s->direct = 0;
    s->done = 1;
    retry_pending();
}

/* The earliest timed event, if it is due at the rank's time. */
static int run_due_event(void)
{
    if (!E.nev || E.ev[0].t > now_ps())
        return 0;
    pm_event e = ev_pop();
    pm_req *r = req_by_id(e.req);
    if (e.kind == EV_D2H) { /* the chunk is in host staging: write it */
        write_chunk(r, e.chunk);
    } else if (--r->chunks_left == 0) { /* the last chunk is in the GPU buffer */
        uint64_t off = r->staging - 1;
        unpack(E.base + E.stage_off + off, r->bytes, r->buf, r->count, r->type);
        tca_arena_free(&E.stage, off);
        r->staging = 0;
        r->piped = 0;
        r->done = 1;
        retry_pending();
    }
    return 1;
}

/* Handles the next completion or timed event. block: wait for one (the
 * rank's clock jumps to when the completion was written, or to the event);
 * else only one there at the rank's time. */
static int progress(int block)
{
    if (run_due_event())
        return 1;
    uint64_t i = E.cq_seen;
    volatile uint64_t *word =
        (volatile uint64_t *)(E.base + E.cq_off + IB_CQE_SIZE * (i % CQ_ENTRIES));
    if (block && E.chan) {
        snprintf(E.chan->mpi_wait, sizeof E.chan->mpi_wait, "%.24s%s%.54s", E.call ? E.call : "MPI",
                 E.what[0] ? " " : "", E.what);
        p2_st_sc(&E.chan->mpi_since_ps, E.call_start);
    }
    uint64_t serial = (uint64_t)ib_cqe_serial(i) << 32;
    p2_wait_result w =
        block && E.nev
            ? (p2_wait_result)p2_rt_wait_mem_until(E.rt, word, IB_CQE_SERIAL_MASK, serial, E.ev[0].t)
            : E.dev->ops->wait_mem(E.dev, word, IB_CQE_SERIAL_MASK, serial, block);
    if (block && E.chan)
        E.chan->mpi_wait[0] = '\0';
    if (w == P2_WAIT_NOT_YET)
        return block ? run_due_event() : 0;
    if (w != P2_WAIT_OK)
        pm_fatal("the simulator is gone");
    ib_cqe c;
    memcpy(&c, (const void *)word, sizeof c);
    E.cq_seen++;
    /* The consumer index goes to the HCA in batches (as a verbs provider
     * updates its CQ doorbell record), not one MMIO per completion. */
    if (E.cq_seen % CQ_TAIL_BATCH == 0)
        reg(IB_REG_CQ_TAIL, E.cq_seen);
    if (c.kind == IB_CQE_RECV) {
        if (c.status != IB_OK)
            pm_fatal("a message arrived with ib_status %u", c.status);
        int slot = (int)c.wr_id;
        const uint8_t *p = recv_slot(slot);
        pm_hdr h;
        memcpy(&h, p, sizeof h);
        pm_charge(p2_ns_ps(E.rt->prm.mpi_call_ns));
        arrived(&h, p + HDR_BYTES);
        E.repost[E.nrepost++] = slot;
        if (E.nrepost >= REPOST_BATCH) {
            post_recvs(E.repost, E.nrepost);
            E.nrepost = 0;
        }
    } else if (c.kind == IB_CQE_SEND || c.kind == IB_CQE_RDMA_WRITE) {
        completed_send(&c);
    } else {
        pm_fatal("unexpected completion kind %u (internal)", c.kind);
    }
    return 1;
}

/* ---- Point-to-point ------------------------------------------------------------ */

static void describe(const char *dir, int peer, int tag, pm_comm *c)
{
    char p[24], t[24];
    if (peer == MPI_ANY_SOURCE)
        snprintf(p, sizeof p, "any rank");
    else
        snprintf(p, sizeof p, "rank %d", c->world[peer]);
    if (tag == MPI_ANY_TAG)
        snprintf(t, sizeof t, "any tag");
    else
        snprintf(t, sizeof t, "tag %d", tag);
    if (!E.what[0])
        snprintf(E.what, sizeof E.what, "%s %s %s", dir, p, t);
}

static void check_peer(pm_comm *c, int peer, int any_ok)
{
    if (peer == MPI_PROC_NULL || (any_ok && peer == MPI_ANY_SOURCE))
        return;
    if (peer < 0 || peer >= c->size)
        pm_fatal("rank %d is not in the communicator (size %d) (MPI_ERR_RANK)", peer, c->size);
}

/* A new active point-to-point request with the call's arguments, handed out
 * in *h; the call's cost is charged here. */
static pm_req *req_start(int kind, void *buf, int count, MPI_Datatype type, int peer, int tag,
                         pm_comm *c, int coll, MPI_Request *h)
{
    pm_req *r = req_new(kind);
    r->buf = buf;
    r->count = count;
    r->type = type;
    r->peer = peer;
    r->tag = tag;
    r->comm = c;
    r->coll = coll;
    r->ctx = c->ctx + (coll ? 1u : 0u);
    r->active = 1;
    *h = as_handle(r);
    describe(kind == RQ_SEND ? "to" : "from", peer, tag, c);
    pm_charge(p2_ns_ps(E.rt->prm.mpi_call_ns));
    return r;
}

int pm_isend(const void *buf, int count, MPI_Datatype type, int dest, int tag, pm_comm *c,
             int coll, int sync, MPI_Request *req)
{
    check_peer(c, dest, 0);
    if (count < 0)
        pm_fatal("negative count %d (MPI_ERR_COUNT)", count);
    if (!coll && tag < 0)
        pm_fatal("negative tag %d (MPI_ERR_TAG)", tag);
    pm_req *r = req_start(RQ_SEND, (void *)buf, count, type, dest, tag, c, coll, req);
    r->sync = sync;
    if (dest == MPI_PROC_NULL) {
        r->done = 1;
        return MPI_SUCCESS;
    }
    size_t n = pm_type_size(type) * (size_t)count;
    r->bytes = n;
    pm_hdr h = {.src = pm_world_rank, .tag = tag, .ctx = r->ctx, .bytes = n, .sreq = r->id};
    /* GPU buffers: eager only up to the GDRCopy limit (MVAPICH2-GDR). */
    int gpu = gpu_buf(buf);
    if (n <= (gpu && (uint64_t)E.rt->prm.mpi_gdrcopy_bytes < pm_eager_bytes ? (uint64_t)E.rt->prm.mpi_gdrcopy_bytes
                                                                : pm_eager_bytes) &&
        !sync) {
        h.type = H_EAGER;
        int s = take_send_slot();
        uint8_t *p = send_slot(s);
        memcpy(p, &h, HDR_BYTES);
        pack(buf, count, type, p + HDR_BYTES, n);
        pm_charge(gpu ? gdr_d2h_ps(n) : copy_ps(n));
        post_wqe(IB_OP_SEND, c->world[dest], 0, bus_of(E.send_off + (uint64_t)s * E.slot_bytes),
                 HDR_BYTES + n, 0, WR(WR_SLOT, s));
        r->done = 1;
    } else {
        h.type = H_RTS; /* MPI_Ssend: always, so it completes only once matched */
        send_hdr(c->world[dest], &h, NULL, 0);
    }
    return MPI_SUCCESS;
}

int pm_irecv(void *buf, int count, MPI_Datatype type, int src, int tag, pm_comm *c, int coll,
             MPI_Request *req)
{
    check_peer(c, src, 1);
    if (count < 0)
        pm_fatal("negative count %d (MPI_ERR_COUNT)", count);
    pm_req *r = req_start(RQ_RECV, buf, count, type, src, tag, c, coll, req);
    if (src == MPI_PROC_NULL) {
        r->status.MPI_SOURCE = MPI_PROC_NULL;
        r->status.MPI_TAG = MPI_ANY_TAG;
        r->status._ucount = 0;
        r->done = 1;
        return MPI_SUCCESS;
    }
    /* Earliest unexpected message first: arrival (simulated-time) order. */
    pm_unexp **pp = &E.unexp, *prev = NULL;
    for (pm_unexp *u = E.unexp; u; prev = u, pp = &u->next, u = u->next)
        if (matches(r, &u->h)) {
            *pp = u->next;
            if (E.unexp_tail == u)
                E.unexp_tail = prev;
            deliver(r, &u->h, u->data);
            free(u->data);
            free(u);
            return MPI_SUCCESS;
        }
    if (E.posted_tail)
        E.posted_tail->next = r;
    else
        E.posted = r;
    E.posted_tail = r;
    r->next = NULL;
    return MPI_SUCCESS;
}

/* Finishes a done request: status out; a persistent one goes inactive, any
 * other is freed and its handle nulled. */
static void finish(MPI_Request *h, MPI_Status *st)
{
    pm_req *r = as_req(*h);
    if (st != MPI_STATUS_IGNORE) {
        if (r->kind == RQ_RECV) {
            *st = r->status;
        } else {
            st->MPI_ERROR = MPI_SUCCESS;
            st->_cancelled = 0;
            st->_ucount = 0;
        }
    }
    if (r->persistent) {
        r->active = 0;
        return;
    }
    req_free(r);
    *h = MPI_REQUEST_NULL;
}

static void empty_status(MPI_Status *st)
{
    if (st == MPI_STATUS_IGNORE)
        return;
    st->MPI_SOURCE = MPI_ANY_SOURCE;
    st->MPI_TAG = MPI_ANY_TAG;
    st->MPI_ERROR = MPI_SUCCESS;
    st->_cancelled = 0;
    st->_ucount = 0;
}

static int inactive(MPI_Request h) { return h == MPI_REQUEST_NULL || !as_req(h)->active; }

int pm_wait(MPI_Request *h, MPI_Status *st)
{
    if (inactive(*h)) {
        empty_status(st);
        return MPI_SUCCESS;
    }
    pm_req *r = as_req(*h);
    if (!E.what[0])
        describe(r->kind == RQ_SEND ? "to" : "from", r->peer, r->tag, r->comm);
    while (!r->done)
        progress(1);
    finish(h, st);
    return MPI_SUCCESS;
}

int pm_waitall(int n, MPI_Request reqs[], MPI_Status sts[])
{
    for (int i = 0; i < n; i++)
        pm_wait(&reqs[i], sts == MPI_STATUSES_IGNORE ? MPI_STATUS_IGNORE : &sts[i]);
    return MPI_SUCCESS;
}

int pm_send(const void *buf, int count, MPI_Datatype type, int dest, int tag, pm_comm *c, int coll)
{
    MPI_Request r;
    pm_isend(buf, count, type, dest, tag, c, coll, 0, &r);
    return pm_wait(&r, MPI_STATUS_IGNORE);
}

int pm_recv(void *buf, int count, MPI_Datatype type, int src, int tag, pm_comm *c, int coll,
            MPI_Status *st)
{
    MPI_Request r;
    pm_irecv(buf, count, type, src, tag, c, coll, &r);
    return pm_wait(&r, st);
}

int pm_sendrecv(const void *sbuf, int scount, MPI_Datatype stype, int dest, int stag, void *rbuf,
                int rcount, MPI_Datatype rtype, int src, int rtag, pm_comm *c, int coll,
                MPI_Status *st)
{
    MPI_Request r[2];
    pm_irecv(rbuf, rcount, rtype, src, rtag, c, coll, &r[0]);
    pm_isend(sbuf, scount, stype, dest, stag, c, coll, 0, &r[1]);
    pm_wait(&r[1], MPI_STATUS_IGNORE);
    return pm_wait(&r[0], st);
}

/* ---- Communicators and groups --------------------------------------------------- */

pm_comm *pm_comm_of(MPI_Comm h, const char *call)
{
    (void)call;
    if (h == MPI_COMM_WORLD)
        return &world_comm;
    if (h == MPI_COMM_SELF)
        return &self_comm;
    for (pm_comm *c = comms; c; c = c->next)
        if (c->handle == h)
            return c;
    if (h == MPI_COMM_NULL)
        pm_fatal("MPI_COMM_NULL passed as a communicator (MPI_ERR_COMM)");
    pm_fatal("a communicator the layer did not make (MPI_ERR_COMM)");
}

int pm_comm_rank_of(const pm_comm *c, int w)
{
    if (c == &world_comm)
        return w;
    for (int i = 0; i < c->size; i++)
        if (c->world[i] == w)
            return i;
    return -1;
}

/* ---- Start-up and shutdown -------------------------------------------------------- */

static void engine_start(void)
{
    p2_rt *rt = p2_rt_get();
    if (!rt) {
        fprintf(stderr, "p2mpi: this program has the virtual-time MPI layer preloaded but was "
                        "not started by p2run\n");
        exit(1);
    }
    E.rt = rt;
    pm_world_rank = rt->rank;
    pm_world_size = rt->size;
    E.chan = &rt->job->ranks[rt->rank];
    pm_eager_bytes = (uint64_t)rt->prm.mpi_eager_bytes;
    E.dev = p2_device_get("ib");
    if (!E.dev) {
        fprintf(stderr, "p2mpi: rank %d: MPI messages move over the modelled InfiniBand rail, "
                        "and this job's topology has no `device ib` line: run with a topology "
                        "that has one (e.g. --topology topologies/hapacs-tca-2x8-ib.topo)\n",
                rt->rank);
        exit(1);
    }
    E.slot_bytes = p2mpi_slot_bytes(pm_eager_bytes);
    uint64_t fixed = p2mpi_fixed_bytes(pm_eager_bytes);
    if (rt->mpi_share_bytes < fixed + P2MPI_MIN_STAGING_BYTES) {
        fprintf(stderr, "p2mpi: rank %d: mpi_host_bytes (%" PRIu64 ") is too small: the layer "
                        "needs %" PRIu64 " bytes for its queues and eager buffers and 1 MiB of "
                        "staging (host_memory_bytes %" PRIu64 ")\n",
                rt->rank, rt->mpi_share_bytes, fixed + P2MPI_MIN_STAGING_BYTES, rt->host.size);
        exit(1);
    }
    uint64_t top = rt->host.size - rt->mpi_share_bytes;
    E.base = rt->host.base + top;
    E.bus = rt->host.bus + top;
    E.sq_off = 0;
    E.rq_off = E.sq_off + SQ_ENTRIES * IB_WQE_SIZE;
    E.cq_off = E.rq_off + RQ_ENTRIES * IB_RQE_SIZE;
    E.recv_off = E.cq_off + CQ_ENTRIES * IB_CQE_SIZE;
    E.send_off = E.recv_off + RECV_SLOTS * E.slot_bytes;
    E.stage_off = E.send_off + SEND_SLOTS * E.slot_bytes;
    if (tca_arena_init(&E.stage, rt->mpi_share_bytes - E.stage_off) != TCA_ARENA_OK)
        pm_fatal("out of memory");
    memset(E.base + E.cq_off, 0, CQ_ENTRIES * IB_CQE_SIZE);
    reg(IB_REG_SQ_SIZE, SQ_ENTRIES);
    reg(IB_REG_SQ_BASE, bus_of(E.sq_off));
    reg(IB_REG_CQ_SIZE, CQ_ENTRIES);
    reg(IB_REG_CQ_BASE, bus_of(E.cq_off));
    reg(IB_REG_RQ_SIZE, RQ_ENTRIES);
    reg(IB_REG_RQ_BASE, bus_of(E.rq_off));
    int slots[RECV_SLOTS];
    for (int i = 0; i < RECV_SLOTS; i++)
        slots[i] = i;
    post_recvs(slots, RECV_SLOTS);
    for (int i = 0; i < SEND_SLOTS; i++)
        E.send_free[i] = SEND_SLOTS - 1 - i;
    E.nsend_free = SEND_SLOTS;

    world_comm.handle = MPI_COMM_WORLD;
    world_comm.size = pm_world_size;
    world_comm.rank = pm_world_rank;
    world_comm.world = malloc(sizeof(int) * (size_t)pm_world_size);
    for (int i = 0; i < pm_world_size; i++)
        world_comm.world[i] = i;
    world_comm.ctx = 0;
    self_comm.handle = MPI_COMM_SELF;
    self_comm.size = 1;
    self_comm.rank = 0;
    self_comm.world = malloc(sizeof(int));
    self_comm.world[0] = pm_world_rank;
    self_comm.ctx = 2;
    E.inited = 1;
}

static int init_common(int *argc, char ***argv, int required, int *provided, int thread)
{
    pm_enter(thread ? "MPI_Init_thread" : "MPI_Init");
    if (E.inited)
        pm_fatal("called twice (MPI_ERR_OTHER)");
    /* Open MPI serves local work only (a singleton when p2run starts the
     * ranks itself); the job's ranks come from p2run. */
    /* Open MPI's singleton start forks helpers: they must not attach to the
     * job as this rank nor load the layer. */
    char *saved[3] = {NULL, NULL, NULL};
    static const char *const hide[3] = {"P2_JOB", "LD_PRELOAD", "P2_RT_OWNER"};
    for (int i = 0; i < 3; i++) {
        const char *v = getenv(hide[i]);
        saved[i] = v ? strdup(v) : NULL;
        unsetenv(hide[i]);
    }
    int rc = thread ? PMPI_Init_thread(argc, argv, required < MPI_THREAD_FUNNELED ? required
                                                                                   : MPI_THREAD_FUNNELED,
                                       provided)
                    : PMPI_Init(argc, argv);
    for (int i = 0; i < 3; i++)
        if (saved[i]) {
            setenv(hide[i], saved[i], 1);
            free(saved[i]);
        }
    if (rc != MPI_SUCCESS)
        pm_fatal("Open MPI's own initialisation failed (%d)", rc);
    engine_start();
    pm_charge(p2_ns_ps(E.rt->prm.mpi_call_ns));
    pm_leave();
    return MPI_SUCCESS;
}

int MPI_Init(int *argc, char ***argv) { return init_common(argc, argv, 0, NULL, 0); }

int MPI_Init_thread(int *argc, char ***argv, int required, int *provided)
{
    int rc = init_common(argc, argv, required, provided, 1);
    if (provided)
        *provided = required < MPI_THREAD_FUNNELED ? required : MPI_THREAD_FUNNELED;
    return rc;
}

int MPI_Finalize(void)
{
    pm_enter("MPI_Finalize");
    need_init("MPI_Finalize");
    /* Every message this rank started is out of its hands before it goes. */
    snprintf(E.what, sizeof E.what, "draining its sends");
    while (E.sq_done < E.sq_posted || E.pending || E.nev)
        progress(1);
    /* MPI_Finalize is collective: a barrier, so that no rank sits in Open
     * MPI's own finalize (a wall-clock fence under mpirun) while another
     * still waits for one of its messages in simulated time. */
    E.what[0] = '\0';
    pm_coll_barrier(pm_comm_of(MPI_COMM_WORLD, "MPI_Finalize"));
    while (E.sq_done < E.sq_posted)
        progress(1);
    E.finalized = 1;
    pm_leave();
    /* Under mpirun Open MPI's finalize is a wall-clock fence: while this rank
     * waits in it, it must not hold simulated time back from a rank that
     * still waits for the last barrier message (the frontend skips ranks
     * flagged in_collective while any rank is outside). Device calls after
     * MPI_Finalize are not ordered after the others' (README.md). */
    snprintf(E.chan->mpi_call, sizeof E.chan->mpi_call, "MPI_Finalize");
    p2_st_sc(&E.chan->in_collective, 1u);
    p2_job_ring(E.rt->job);
    int rc = PMPI_Finalize();
    p2_st_sc(&E.chan->in_collective, 0u);
    p2_job_ring(E.rt->job);
    return rc;
}

int MPI_Abort(MPI_Comm comm, int code)
{
    (void)comm;
    fprintf(stderr, "p2mpi: rank %d: MPI_Abort(%d): the job stops\n", pm_world_rank, code);
    fflush(stderr);
    _exit(code ? (code & 0xff ? code & 0xff : 1) : 1);
}

int MPI_Comm_rank(MPI_Comm comm, int *rank)
{
    need_init("MPI_Comm_rank");
    *rank = pm_comm_of(comm, "MPI_Comm_rank")->rank;
    return MPI_SUCCESS;
}

int MPI_Comm_size(MPI_Comm comm, int *size)
{
    need_init("MPI_Comm_size");
    *size = pm_comm_of(comm, "MPI_Comm_size")->size;
    return MPI_SUCCESS;
}

double MPI_Wtime(void) { return p2_rt_wtime(); }
double MPI_Wtick(void) { return 1e-12; }

/* ---- The point-to-point calls ------------------------------------------------------- */

#define CALL(name)       \
    pm_enter(name);      \
    need_init(name)
#define RETURN(v)        \
    do {                 \
        int rv_ = (v);   \
        pm_leave();      \
        return rv_;      \
    } while (0)

int MPI_Send(const void *buf, int count, MPI_Datatype type, int dest, int tag, MPI_Comm comm)
{
    CALL("MPI_Send");
    RETURN(pm_send(buf, count, type, dest, tag, pm_comm_of(comm, "MPI_Send"), 0));
}

int MPI_Ssend(const void *buf, int count, MPI_Datatype type, int dest, int tag, MPI_Comm comm)
{
    CALL("MPI_Ssend");
    MPI_Request r;
    pm_isend(buf, count, type, dest, tag, pm_comm_of(comm, "MPI_Ssend"), 0, 1, &r);
    RETURN(pm_wait(&r, MPI_STATUS_IGNORE));
}

int MPI_Isend(const void *buf, int count, MPI_Datatype type, int dest, int tag, MPI_Comm comm,
              MPI_Request *req)
{
    CALL("MPI_Isend");
    RETURN(pm_isend(buf, count, type, dest, tag, pm_comm_of(comm, "MPI_Isend"), 0, 0, req));
}

int MPI_Issend(const void *buf, int count, MPI_Datatype type, int dest, int tag, MPI_Comm comm,
               MPI_Request *req)
{
    CALL("MPI_Issend");
    RETURN(pm_isend(buf, count, type, dest, tag, pm_comm_of(comm, "MPI_Issend"), 0, 1, req));
}

int MPI_Recv(void *buf, int count, MPI_Datatype type, int src, int tag, MPI_Comm comm,
             MPI_Status *st)
{
    CALL("MPI_Recv");
    RETURN(pm_recv(buf, count, type, src, tag, pm_comm_of(comm, "MPI_Recv"), 0, st));
}

int MPI_Irecv(void *buf, int count, MPI_Datatype type, int src, int tag, MPI_Comm comm,
              MPI_Request *req)
{
    CALL("MPI_Irecv");
    RETURN(pm_irecv(buf, count, type, src, tag, pm_comm_of(comm, "MPI_Irecv"), 0, req));
}

int MPI_Sendrecv(const void *sbuf, int scount, MPI_Datatype stype, int dest, int stag, void *rbuf,
                 int rcount, MPI_Datatype rtype, int src, int rtag, MPI_Comm comm, MPI_Status *st)
{
    CALL("MPI_Sendrecv");
    RETURN(pm_sendrecv(sbuf, scount, stype, dest, stag, rbuf, rcount, rtype, src, rtag,
                       pm_comm_of(comm, "MPI_Sendrecv"), 0, st));
}

int MPI_Sendrecv_replace(void *buf, int count, MPI_Datatype type, int dest, int stag, int src,
                         int rtag, MPI_Comm comm, MPI_Status *st)
{
    CALL("MPI_Sendrecv_replace");
    void *tmp_shift;
    void *tmp = pm_type_buffer(type, count, &tmp_shift);
    pm_sendrecv(buf, count, type, dest, stag, tmp_shift, count, type, src, rtag,
                pm_comm_of(comm, "MPI_Sendrecv_replace"), 0, st);
    size_t got = st != MPI_STATUS_IGNORE ? (size_t)st->_ucount : pm_type_size(type) * (size_t)count;
    int n = (int)(got / (pm_type_size(type) ? pm_type_size(type) : 1));
    pm_local_copy(tmp_shift, n, type, buf, count, type);
    free(tmp);
    RETURN(MPI_SUCCESS);
}

int MPI_Wait(MPI_Request *req, MPI_Status *st)
{
    CALL("MPI_Wait");
    RETURN(pm_wait(req, st));
}

int MPI_Waitall(int n, MPI_Request reqs[], MPI_Status sts[])
{
    CALL("MPI_Waitall");
    RETURN(pm_waitall(n, reqs, sts));
}

/* Processes every completion already there at the rank's time. */
static void poll_all(void)
{
    while (progress(0))
        ;
}

int MPI_Test(MPI_Request *req, int *flag, MPI_Status *st)
{
    CALL("MPI_Test");
    if (inactive(*req)) {
        *flag = 1;
        empty_status(st);
        RETURN(MPI_SUCCESS);
    }
    if (!as_req(*req)->done)
        poll_all();
    *flag = as_req(*req)->done;
    if (*flag)
        finish(req, st);
    RETURN(MPI_SUCCESS);
}

int MPI_Testall(int n, MPI_Request reqs[], int *flag, MPI_Status sts[])
{
    CALL("MPI_Testall");
    poll_all();
    int all = 1;
    for (int i = 0; i < n; i++)
        if (!inactive(reqs[i]) && !as_req(reqs[i])->done)
            all = 0;
    *flag = all;
    if (all)
        for (int i = 0; i < n; i++) {
            MPI_Status *s = sts == MPI_STATUSES_IGNORE ? MPI_STATUS_IGNORE : &sts[i];
            if (inactive(reqs[i]))
                empty_status(s);
            else
                finish(&reqs[i], s);
        }
    RETURN(MPI_SUCCESS);
}

/* The first done request among reqs, lowest index; -1 if none; -2 if every
 * one is inactive. */
static int first_done(int n, MPI_Request reqs[])
{
    int any_active = 0;
    for (int i = 0; i < n; i++) {
        if (inactive(reqs[i]))
            continue;
        any_active = 1;
        if (as_req(reqs[i])->done)
            return i;
    }
    return any_active ? -1 : -2;
}

int MPI_Waitany(int n, MPI_Request reqs[], int *index, MPI_Status *st)
{
    CALL("MPI_Waitany");
    int i;
    while ((i = first_done(n, reqs)) == -1)
        progress(1);
    if (i == -2) {
        *index = MPI_UNDEFINED;
        empty_status(st);
        RETURN(MPI_SUCCESS);
    }
    *index = i;
    finish(&reqs[i], st);
    RETURN(MPI_SUCCESS);
}

int MPI_Testany(int n, MPI_Request reqs[], int *index, int *flag, MPI_Status *st)
{
    CALL("MPI_Testany");
    poll_all();
    int i = first_done(n, reqs);
    *flag = i != -1;
    *index = MPI_UNDEFINED;
    if (i == -2)
        empty_status(st);
    else if (i >= 0) {
        *index = i;
        finish(&reqs[i], st);
    }
    RETURN(MPI_SUCCESS);
}

static int some_done(int n, MPI_Request reqs[], int *outcount, int idx[], MPI_Status sts[])
{
    int k = 0, any_active = 0;
    for (int i = 0; i < n; i++) {
        if (inactive(reqs[i]))
            continue;
        any_active = 1;
        if (as_req(reqs[i])->done) {
            idx[k] = i;
            finish(&reqs[i], sts == MPI_STATUSES_IGNORE ? MPI_STATUS_IGNORE : &sts[k]);
            k++;
        }
    }
    *outcount = any_active ? k : MPI_UNDEFINED;
    return k;
}

int MPI_Waitsome(int n, MPI_Request reqs[], int *outcount, int idx[], MPI_Status sts[])
{
    CALL("MPI_Waitsome");
    while (first_done(n, reqs) == -1)
        progress(1);
    some_done(n, reqs, outcount, idx, sts);
    RETURN(MPI_SUCCESS);
}

int MPI_Testsome(int n, MPI_Request reqs[], int *outcount, int idx[], MPI_Status sts[])
{
    CALL("MPI_Testsome");
    poll_all();
    some_done(n, reqs, outcount, idx, sts);
    RETURN(MPI_SUCCESS);
}

int MPI_Request_free(MPI_Request *req)
{
    CALL("MPI_Request_free");
    if (*req == MPI_REQUEST_NULL)
        RETURN(MPI_SUCCESS);
    pm_req *r = as_req(*req);
    /* An active request finishes on its own; only then may it go. */
    while (r->active && !r->done)
        progress(1);
    req_free(r);
    *req = MPI_REQUEST_NULL;
    RETURN(MPI_SUCCESS);
}

/* Persistent requests: the arguments kept, each MPI_Start posts them anew. */
static int persist(int kind, const void *buf, int count, MPI_Datatype type, int peer, int tag,
                   MPI_Comm comm, int sync, MPI_Request *req, const char *call)
{
    pm_comm *c = pm_comm_of(comm, call);
    check_peer(c, peer, kind == RQ_RECV);
    pm_req *r = req_new(kind);
    r->persistent = 1;
    r->buf = (void *)buf;
    r->count = count;
    r->type = type;
    r->peer = peer;
    r->tag = tag;
    r->comm = c;
    r->sync = sync;
    *req = as_handle(r);
    return MPI_SUCCESS;
}

int MPI_Send_init(const void *buf, int count, MPI_Datatype type, int dest, int tag, MPI_Comm comm,
                  MPI_Request *req)
{
    CALL("MPI_Send_init");
    RETURN(persist(RQ_SEND, buf, count, type, dest, tag, comm, 0, req, "MPI_Send_init"));
}

int MPI_Ssend_init(const void *buf, int count, MPI_Datatype type, int dest, int tag, MPI_Comm comm,
                   MPI_Request *req)
{
    CALL("MPI_Ssend_init");
    RETURN(persist(RQ_SEND, buf, count, type, dest, tag, comm, 1, req, "MPI_Ssend_init"));
}

int MPI_Recv_init(void *buf, int count, MPI_Datatype type, int src, int tag, MPI_Comm comm,
                  MPI_Request *req)
{
    CALL("MPI_Recv_init");
    RETURN(persist(RQ_RECV, buf, count, type, src, tag, comm, 0, req, "MPI_Recv_init"));
}

/* Starting a persistent request posts an ordinary one and lets the persistent
 * handle follow it: the ordinary one's state moves into the persistent one. */
static void start_one(MPI_Request *h)
{
    pm_req *p = as_req(*h);
    if (p->active)
        pm_fatal("MPI_Start of a request that is still active (MPI_ERR_REQUEST)");
    MPI_Request tmp;
    if (p->kind == RQ_SEND)
        pm_isend(p->buf, p->count, p->type, p->peer, p->tag, p->comm, 0, p->sync, &tmp);
    else
        pm_irecv(p->buf, p->count, p->type, p->peer, p->tag, p->comm, 0, &tmp);
    pm_req *r = as_req(tmp);
    /* Take over r's identity: messages in flight name r->id. */
    uint64_t old = p->id;
    pm_req *posted_next = r->next;
    *p = *r;
    p->persistent = 1;
    p->next = posted_next;
    E.reqs[r->id] = p;
    E.reqs[old] = NULL;
    for (pm_req **q = &E.posted; *q; q = &(*q)->next)
        if (*q == r) {
            *q = p;
            break;
        }
    if (E.posted_tail == r)
        E.posted_tail = p;
    for (pm_pending *d = E.pending; d; d = d->next)
        if (d->req == r)
            d->req = p;
    free(r);
}

int MPI_Start(MPI_Request *req)
{
    CALL("MPI_Start");
    start_one(req);
    RETURN(MPI_SUCCESS);
}

int MPI_Startall(int n, MPI_Request reqs[])
{
    CALL("MPI_Startall");
    for (int i = 0; i < n; i++)
        start_one(&reqs[i]);
    RETURN(MPI_SUCCESS);
}

/* Probe: the earliest unexpected message that matches, waiting for more
 * arrivals (blocking) or only those there at the rank's time. */
static pm_unexp *probe(int src, int tag, pm_comm *c, int block)
{
    pm_req key = {.peer = src, .tag = tag, .comm = c, .ctx = c->ctx, .type = MPI_BYTE};
    for (;;) {
        for (pm_unexp *u = E.unexp; u; u = u->next)
            if (matches(&key, &u->h))
                return u;
        if (!progress(block))
            return NULL;
    }
}

static void probe_status(pm_unexp *u, pm_comm *c, MPI_Status *st)
{
    if (st == MPI_STATUS_IGNORE)
        return;
    st->MPI_SOURCE = pm_comm_rank_of(c, u->h.src);
    st->MPI_TAG = u->h.tag;
    st->MPI_ERROR = MPI_SUCCESS;
    st->_cancelled = 0;
    st->_ucount = (size_t)u->h.bytes;
}

int MPI_Probe(int src, int tag, MPI_Comm comm, MPI_Status *st)
{
    CALL("MPI_Probe");
    pm_comm *c = pm_comm_of(comm, "MPI_Probe");
    check_peer(c, src, 1);
    if (src == MPI_PROC_NULL) {
        empty_status(st);
        if (st != MPI_STATUS_IGNORE)
            st->MPI_SOURCE = MPI_PROC_NULL;
        RETURN(MPI_SUCCESS);
    }
    describe("from", src, tag, c);
    pm_charge(p2_ns_ps(E.rt->prm.mpi_call_ns));
    probe_status(probe(src, tag, c, 1), c, st);
    RETURN(MPI_SUCCESS);
}

int MPI_Iprobe(int src, int tag, MPI_Comm comm, int *flag, MPI_Status *st)
{
    CALL("MPI_Iprobe");
    pm_comm *c = pm_comm_of(comm, "MPI_Iprobe");
    check_peer(c, src, 1);
    if (src == MPI_PROC_NULL) {
        *flag = 1;
        empty_status(st);
        if (st != MPI_STATUS_IGNORE)
            st->MPI_SOURCE = MPI_PROC_NULL;
        RETURN(MPI_SUCCESS);
    }
    pm_charge(p2_ns_ps(E.rt->prm.mpi_call_ns));
    pm_unexp *u = probe(src, tag, c, 0);
    *flag = u != NULL;
    if (u)
        probe_status(u, c, st);
    RETURN(MPI_SUCCESS);
}

int MPI_Get_count(const MPI_Status *st, MPI_Datatype type, int *count)
{
    size_t sz = pm_type_size(type);
    size_t n = (size_t)st->_ucount;
    if (sz == 0)
        *count = n == 0 ? 0 : MPI_UNDEFINED;
    else
        *count = n % sz ? MPI_UNDEFINED : (int)(n / sz);
    return MPI_SUCCESS;
}

/* ---- Communicator management ------------------------------------------------------ */

/* A context id every member of `parent` agrees on: the largest next one any
 * of them has (a max-allreduce over the parent's collective context). */
static uint32_t agree_ctx(pm_comm *parent)
{
    int mine = (int)next_ctx, all = 0;
    pm_coll_allreduce_int_max(&mine, &all, parent);
    next_ctx = (uint32_t)all + 2;
    return (uint32_t)all;
}

static pm_comm *comm_new(int size, int rank, int *world, uint32_t ctx)
{
    pm_comm *c = calloc(1, sizeof *c);
    c->size = size;
    c->rank = rank;
    c->world = world;
    c->ctx = ctx;
    if (PMPI_Comm_dup(MPI_COMM_SELF, &c->handle) != MPI_SUCCESS)
        pm_fatal("Open MPI could not make a communicator handle");
    c->next = comms;
    comms = c;
    return c;
}

int MPI_Comm_dup(MPI_Comm comm, MPI_Comm *out)
{
    CALL("MPI_Comm_dup");
    pm_comm *p = pm_comm_of(comm, "MPI_Comm_dup");
    uint32_t ctx = agree_ctx(p);
    int *w = malloc(sizeof(int) * (size_t)p->size);
    memcpy(w, p->world, sizeof(int) * (size_t)p->size);
    *out = comm_new(p->size, p->rank, w, ctx)->handle;
    RETURN(MPI_SUCCESS);
}

/* Members with the same color, ordered by (key, parent rank). */
static MPI_Comm split(pm_comm *p, int color, int key)
{
    int mine[2] = {color, key};
    int *all = malloc(sizeof(int) * 2 * (size_t)p->size);
    pm_coll_allgather_ints(mine, 2, all, p);
    uint32_t ctx = agree_ctx(p);
    if (color == MPI_UNDEFINED) {
        free(all);
        return MPI_COMM_NULL;
    }
    int n = 0;
    int *members = malloc(sizeof(int) * (size_t)p->size);
    for (int i = 0; i < p->size; i++)
        if (all[2 * i] == color)
            members[n++] = i;
    for (int i = 1; i < n; i++) /* insertion sort by (key, parent rank): stable */
        for (int j = i; j > 0 && all[2 * members[j - 1] + 1] > all[2 * members[j] + 1]; j--) {
            int t = members[j];
            members[j] = members[j - 1];
            members[j - 1] = t;
        }
    int *w = malloc(sizeof(int) * (size_t)n), rank = -1;
    for (int i = 0; i < n; i++) {
        w[i] = p->world[members[i]];
        if (members[i] == p->rank)
            rank = i;
    }
    free(members);
    free(all);
    return comm_new(n, rank, w, ctx)->handle;
}

int MPI_Comm_split(MPI_Comm comm, int color, int key, MPI_Comm *out)
{
    CALL("MPI_Comm_split");
    if (color < 0 && color != MPI_UNDEFINED)
        pm_fatal("color %d is negative (MPI_ERR_ARG)", color);
    *out = split(pm_comm_of(comm, "MPI_Comm_split"), color, key);
    RETURN(MPI_SUCCESS);
}

int MPI_Comm_free(MPI_Comm *comm)
{
    CALL("MPI_Comm_free");
    if (*comm == MPI_COMM_WORLD || *comm == MPI_COMM_SELF)
        pm_fatal("freeing a predefined communicator (MPI_ERR_COMM)");
    pm_comm *c = pm_comm_of(*comm, "MPI_Comm_free");
    for (pm_comm **q = &comms; *q; q = &(*q)->next)
        if (*q == c) {
            *q = c->next;
            break;
        }
    PMPI_Comm_free(&c->handle);
    free(c->world);
    free(c);
    *comm = MPI_COMM_NULL;
    RETURN(MPI_SUCCESS);
}

int MPI_Comm_compare(MPI_Comm a, MPI_Comm b, int *result)
{
    CALL("MPI_Comm_compare");
    pm_comm *x = pm_comm_of(a, "MPI_Comm_compare"), *y = pm_comm_of(b, "MPI_Comm_compare");
    if (x == y)
        *result = MPI_IDENT;
    else if (x->size != y->size)
        *result = MPI_UNEQUAL;
    else {
        int same_order = 1, same_set = 1;
        for (int i = 0; i < x->size; i++) {
            if (x->world[i] != y->world[i])
                same_order = 0;
            int found = 0;
            for (int j = 0; j < y->size; j++)
                found |= x->world[i] == y->world[j];
            same_set &= found;
        }
        *result = same_order ? MPI_CONGRUENT : same_set ? MPI_SIMILAR : MPI_UNEQUAL;
    }
    RETURN(MPI_SUCCESS);
}

static pm_group *group_new(int n, int *world)
{
    pm_group *g = calloc(1, sizeof *g);
    g->size = n;
    g->world = world;
    g->rank = MPI_UNDEFINED;
    for (int i = 0; i < n; i++)
        if (world[i] == pm_world_rank)
            g->rank = i;
    return g;
}

static pm_group *as_group(MPI_Group h)
{
    if (h == MPI_GROUP_NULL)
        pm_fatal("MPI_GROUP_NULL passed as a group (MPI_ERR_GROUP)");
    if (h == MPI_GROUP_EMPTY) {
        static pm_group empty = {0, MPI_UNDEFINED, NULL};
        return &empty;
    }
    return (pm_group *)(void *)h;
}

int MPI_Comm_group(MPI_Comm comm, MPI_Group *group)
{
    CALL("MPI_Comm_group");
    pm_comm *c = pm_comm_of(comm, "MPI_Comm_group");
    int *w = malloc(sizeof(int) * (size_t)c->size);
    memcpy(w, c->world, sizeof(int) * (size_t)c->size);
    *group = (MPI_Group)(void *)group_new(c->size, w);
    RETURN(MPI_SUCCESS);
}

int MPI_Group_size(MPI_Group group, int *size)
{
    *size = as_group(group)->size;
    return MPI_SUCCESS;
}

int MPI_Group_rank(MPI_Group group, int *rank)
{
    *rank = as_group(group)->rank;
    return MPI_SUCCESS;
}

int MPI_Group_incl(MPI_Group group, int n, const int ranks[], MPI_Group *out)
{
    CALL("MPI_Group_incl");
    pm_group *g = as_group(group);
    int *w = malloc(sizeof(int) * (size_t)(n ? n : 1));
    for (int i = 0; i < n; i++) {
        if (ranks[i] < 0 || ranks[i] >= g->size)
            pm_fatal("rank %d is not in the group (size %d) (MPI_ERR_RANK)", ranks[i], g->size);
        w[i] = g->world[ranks[i]];
    }
    *out = (MPI_Group)(void *)group_new(n, w);
    RETURN(MPI_SUCCESS);
}

int MPI_Group_excl(MPI_Group group, int n, const int ranks[], MPI_Group *out)
{
    CALL("MPI_Group_excl");
    pm_group *g = as_group(group);
    int *w = malloc(sizeof(int) * (size_t)(g->size ? g->size : 1)), k = 0;
    for (int i = 0; i < g->size; i++) {
        int drop = 0;
        for (int j = 0; j < n; j++)
            drop |= ranks[j] == i;
        if (!drop)
            w[k++] = g->world[i];
    }
    *out = (MPI_Group)(void *)group_new(k, w);
    RETURN(MPI_SUCCESS);
}

int MPI_Group_translate_ranks(MPI_Group a, int n, const int ranks[], MPI_Group b, int out[])
{
    pm_group *x = as_group(a), *y = as_group(b);
    for (int i = 0; i < n; i++) {
        out[i] = MPI_UNDEFINED;
        if (ranks[i] == MPI_PROC_NULL) {
            out[i] = MPI_PROC_NULL;
            continue;
        }
        for (int j = 0; j < y->size; j++)
            if (ranks[i] >= 0 && ranks[i] < x->size && y->world[j] == x->world[ranks[i]])
                out[i] = j;
    }
    return MPI_SUCCESS;
}

int MPI_Group_free(MPI_Group *group)
{
    if (*group != MPI_GROUP_EMPTY && *group != MPI_GROUP_NULL) {
        pm_group *g = as_group(*group);
        free(g->world);
        free(g);
    }
    *group = MPI_GROUP_NULL;
    return MPI_SUCCESS;
}

int MPI_Comm_create(MPI_Comm comm, MPI_Group group, MPI_Comm *out)
{
    CALL("MPI_Comm_create");
    pm_comm *p = pm_comm_of(comm, "MPI_Comm_create");
    pm_group *g = as_group(group);
    /* Every member of the parent passes the same group: its order is the
     * new communicator's; a split keyed by group rank gives it. */
    int color = g->rank == MPI_UNDEFINED ? MPI_UNDEFINED : 0;
    *out = split(p, color, g->rank);
    RETURN(MPI_SUCCESS);
}
