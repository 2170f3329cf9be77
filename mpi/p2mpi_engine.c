/*
 * p2mpi_engine.c - the message engine of the virtual-time MPI layer over the
 * node's InfiniBand HCA: its queues and slots, matching, the eager and
 * rendezvous protocols, progress. README.md has the design. Depends on
 * p2mpi_core.c, p2mpi_datatype.c, p2mpi_gpu.c and p2mpi_request.c; the
 * point-to-point unit (p2mpi_p2p.c) starts messages on it.
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
#include "p2mpi_engine.h"

#include <inttypes.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

/* ---- The HCA ------------------------------------------------------------------ */

static void reg(uint64_t r, uint64_t v) { E.dev->ops->mmio_write(E.dev, IB_BAR_REGS, r, v); }

uint64_t pm_bus_of(uint64_t off) { return E.bus + off; }

static uint8_t *recv_slot(int i) { return E.base + E.recv_off + (uint64_t)i * E.slot_bytes; }
uint8_t *pm_send_slot(int i) { return E.base + E.send_off + (uint64_t)i * E.slot_bytes; }

void pm_post(ib_wqe *w, int wdest)
{
    while (E.sq_posted - E.sq_done >= SQ_ENTRIES)
        pm_progress(PM_WAIT); /* the HCA frees entries as it completes them */
    w->flags = IB_WQE_SIGNALED;
    w->dest_node = (uint16_t)E.rt->job->rank_node[wdest];
    memcpy(E.base + E.sq_off + IB_WQE_SIZE * (E.sq_posted % SQ_ENTRIES), w, sizeof *w);
    reg(IB_REG_SQ_DOORBELL, ++E.sq_posted);
}

void pm_post_wqe(uint8_t op, int wdest, uint8_t rail, uint64_t local_bus, uint64_t len,
                 uint64_t remote, uint64_t wr_id)
{
    ib_wqe w;
    memset(&w, 0, sizeof w);
    w.opcode = op;
    w.rail = rail;
    w.length = (uint32_t)len;
    w.local_addr = local_bus;
    w.remote_addr = remote;
    w.wr_id = wr_id;
    pm_post(&w, wdest);
}

static void post_recvs(const int *slots, int n)
{
    for (int k = 0; k < n; k++) {
        ib_rqe e;
        memset(&e, 0, sizeof e);
        e.addr = pm_bus_of(E.recv_off + (uint64_t)slots[k] * E.slot_bytes);
        e.length = (uint32_t)E.slot_bytes;
        e.wr_id = (uint64_t)slots[k];
        memcpy(E.base + E.rq_off + IB_RQE_SIZE * (E.rq_posted % RQ_ENTRIES), &e, sizeof e);
        E.rq_posted++;
    }
    reg(IB_REG_RQ_DOORBELL, E.rq_posted);
}

int pm_take_send_slot(void)
{
    while (E.nsend_free == 0)
        pm_progress(PM_WAIT);
    return E.send_free[--E.nsend_free];
}

/* A SEND of a header (and `n` bytes of data after it) on `rail`. */
static void send_hdr_on(int wdest, uint8_t rail, const pm_hdr *h, const void *data, size_t n)
{
    int s = pm_take_send_slot();
    uint8_t *p = pm_send_slot(s);
    memcpy(p, h, HDR_BYTES);
    if (n)
        memcpy(p + HDR_BYTES, data, n);
    pm_post_wqe(IB_OP_SEND, wdest, rail, pm_bus_of(E.send_off + (uint64_t)s * E.slot_bytes),
                HDR_BYTES + n, 0, WR(WR_SLOT, s));
}

/* Headers go on rail 0: one rail keeps each sender's messages in order. */
void pm_send_hdr(int wdest, const pm_hdr *h, const void *data, size_t n)
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

/* ---- Matching -------------------------------------------------------------------- */

static _Noreturn void coll_tag_mismatch(int want, int got, int src_world)
{
    if (want != PM_TAG_COLL && got != PM_TAG_COLL)
        pm_fatal("the ranks' roots differ: %d here, %d at rank %d (MPI_ERR_ROOT)",
                 want - PM_TAG_BCAST(0), got - PM_TAG_BCAST(0), src_world);
    if (got != PM_TAG_COLL)
        pm_fatal("a message of rank %d's MPI_Bcast (root %d) arrived: the ranks' collective "
                 "calls differ (roots that differ between ranks in an earlier MPI_Bcast?)",
                 src_world, got - PM_TAG_BCAST(0));
    pm_fatal("rank %d's message is not of an MPI_Bcast: the ranks' collective calls differ",
             src_world);
}

/* ---- What collective calls' arguments must agree on -------------------------------- */

static const char *const sig_calls[] = {
    "a collective",  "MPI_Bcast",   "MPI_Reduce",  "MPI_Allreduce", "MPI_Reduce_scatter",
    "MPI_Reduce_scatter_block", "MPI_Scan", "MPI_Exscan", "MPI_Gather", "MPI_Gatherv",
    "MPI_Scatter",   "MPI_Scatterv"};
#define NSIG_CALLS (sizeof sig_calls / sizeof sig_calls[0])

void pm_sig_call(const pm_coll_sig *s, int nbc, char *out, size_t n)
{
    const char *name = s->kind < NSIG_CALLS ? sig_calls[s->kind] : sig_calls[0];
    int len;
    if (nbc && s->kind != PM_SIG_NONE && s->kind < NSIG_CALLS) /* MPI_Bcast: MPI_Ibcast */
        len = snprintf(out, n, "MPI_I%c%s", name[4] + ('a' - 'A'), name + 5);
    else
        len = snprintf(out, n, "%s", name);
    if (s->kind != PM_SIG_NONE && s->root >= 0 && len >= 0 && (size_t)len < n)
        snprintf(out + len, n - (size_t)len, " (root %d)", s->root);
}

int pm_sig_differ(const pm_coll_sig *a, const pm_coll_sig *b, int nbc, int src, char *out,
                  size_t n)
{
    if (a->kind == PM_SIG_NONE || b->kind == PM_SIG_NONE) /* a call that is not compared */
        return 0;
    if (a->kind != b->kind) {
        char mine[64], theirs[64];
        pm_sig_call(a, nbc, mine, sizeof mine);
        pm_sig_call(b, nbc, theirs, sizeof theirs);
        snprintf(out, n, "the ranks' collective calls differ: %s here, %s at rank %d", mine,
                 theirs, src);
    } else if (a->root != b->root) {
        snprintf(out, n, "the ranks' roots differ: %d here, %d at rank %d (MPI_ERR_ROOT)", a->root,
                 b->root, src);
    } else if (a->op != b->op) {
        snprintf(out, n, "the ranks' ops differ: %s here, %s at rank %d (MPI_ERR_OP)",
                 pm_op_name(a->op), pm_op_name(b->op), src);
    } else if (a->type != b->type) {
        char mine[MPI_MAX_OBJECT_NAME + 40], theirs[MPI_MAX_OBJECT_NAME + 40];
        pm_type_name_of(a->type, mine, sizeof mine);
        pm_type_name_of(b->type, theirs, sizeof theirs);
        snprintf(out, n, "the ranks' datatypes differ: %s here, %s at rank %d (MPI_ERR_TYPE)",
                 mine, theirs, src);
    } else if (a->count != b->count && a->kind == PM_SIG_REDSCAT) {
        snprintf(out, n, "the ranks' recvcounts differ: they add up to %" PRIu64 " here, %" PRIu64
                 " at rank %d (MPI_ERR_COUNT)", a->count, b->count, src);
    } else if (a->count != b->count) {
        snprintf(out, n, "the ranks' counts differ: %s = %" PRIu64 " here, %" PRIu64
                 " at rank %d (MPI_ERR_COUNT)",
                 a->kind == PM_SIG_REDSCAT_BLOCK ? "recvcount" : "count", a->count, b->count, src);
    } else if (a->counts_hash != b->counts_hash) {
        snprintf(out, n, "the ranks' recvcounts differ: they add up to %" PRIu64 " here and at "
                 "rank %d, divided otherwise (MPI_ERR_COUNT)", a->count, src);
    } else {
        return 0;
    }
    return 1;
}

/* A collective receive's sender made another call, or the same with other
 * arguments: ends the job in the receive's call, naming both. */
static void check_sig(const pm_req *r, const pm_hdr *h)
{
    pm_coll_sig theirs = pm_hdr_sig(h);
    char why[400];
    if (!pm_sig_differ(&r->sig, &theirs, (h->ctx & PM_NBC_CTX_BIT) != 0, h->src, why, sizeof why))
        return;
    if (r->call)
        E.call = r->call;
    pm_fatal("%s", why);
}

int pm_matches(const pm_req *r, const pm_hdr *h)
{
    if (r->ctx != h->ctx)
        return 0;
    if (!r->coll && r->tag != MPI_ANY_TAG && r->tag != h->tag)
        return 0;
    return r->peer == MPI_ANY_SOURCE || r->comm->world[r->peer] == h->src;
}

static void set_status(pm_req *r, const pm_hdr *h)
{
    if (r->coll && h->tag != r->tag) {
        if (r->call) /* a nonblocking collective's, matched in the wait that runs it */
            E.call = r->call;
        coll_tag_mismatch(r->tag, h->tag, h->src);
    }
    if (r->coll)
        check_sig(r, h);
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

/* ---- Rendezvous, completions, progress -------------------------------------------- */

/* The GPU pipeline's chunk (mpi_cuda_block_bytes). */
static uint64_t block_bytes(void)
{
    return (uint64_t)E.rt->prm.mpi_cuda_block_bytes;
}

static uint64_t chunk_len(const pm_req *r, uint64_t k)
{
    uint64_t b = block_bytes(), off = k * b;
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
        pm_gpu_direct(r->buf, r->type, h->bytes, &addr)) {
        r->direct = 1; /* GPUDirect RDMA: the HCA writes the GPU buffer itself */
    } else {
        if (h->bytes && tca_arena_alloc(&E.stage, h->bytes, &off) != TCA_ARENA_OK)
            return 0;
        r->staging = off + 1;
        addr = pm_bus_of(E.stage_off + off);
        if (h->bytes && pm_gpu_mem(r->buf)) { /* copied in chunk by chunk as CHUNKs arrive */
            r->piped = 1;
            r->chunks = r->chunks_left = (h->bytes + block_bytes() - 1) / block_bytes();
            flags = CTS_CHUNKS;
        }
    }
    r->fins_left = flags & CTS_CHUNKS ? 0 : IB_PORTS;
    pm_hdr c = {.type = H_CTS, .src = pm_world_rank, .sreq = h->sreq, .rreq = r->id,
                .addr = addr, .bytes = h->bytes, .flags = flags};
    pm_send_hdr(h->src, &c, NULL, 0);
    return 1;
}

static void write_chunk(pm_req *s, uint64_t k)
{
    uint64_t off = k * block_bytes();
    pm_post_wqe(IB_OP_RDMA_WRITE, s->comm->world[s->peer], IB_RAIL_ANY, s->local + off,
                chunk_len(s, k), s->remote + off, WR(WR_CHUNK, (s->id << CHUNK_BITS) | k));
}

/* The sender answers a CTS. A GPU buffer up to the send limit is read by the
 * HCA itself: one RDMA write. Any other buffer is packed into staging; a GPU
 * one is then copied out chunk by chunk on the copy engine, each chunk
 * written when its copy is done; a host one is written at once, in chunks
 * if the receiver wants CHUNKs. 0 if no staging memory is free yet. */
static int answer_cts(pm_req *s, const pm_hdr *h)
{
    uint64_t off = 0, local = 0, b = block_bytes();
    int direct = s->bytes && s->bytes <= (uint64_t)E.rt->prm.mpi_gdr_send_bytes &&
                 pm_gpu_direct(s->buf, s->type, s->bytes, &local);
    if (!direct && s->bytes) {
        if (tca_arena_alloc(&E.stage, s->bytes, &off) != TCA_ARENA_OK)
            return 0;
        s->staging = off + 1;
        pm_pack(s->buf, s->count, s->type, E.base + E.stage_off + off, s->bytes);
        local = pm_bus_of(E.stage_off + off);
    }
    s->direct = direct;
    s->rreq = h->rreq;
    s->local = local;
    s->remote = h->addr;
    s->notify = (h->flags & CTS_CHUNKS) != 0;
    s->piped = !direct && s->bytes && pm_gpu_mem(s->buf);
    if (!s->piped && !s->notify) {
        pm_post_wqe(IB_OP_RDMA_WRITE, s->comm->world[s->peer], IB_RAIL_ANY, local, s->bytes,
                    h->addr, WR(WR_WRITE, s->id));
        send_fins(s); /* right behind the write, not after its acknowledgement */
        return 1;
    }
    s->chunks = s->chunks_left = (s->bytes + b - 1) / b;
    if (s->chunks >= (1u << CHUNK_BITS))
        pm_fatal("a %" PRIu64 "-byte GPU message is more than %u chunks of mpi_cuda_block_bytes",
                 s->bytes, 1u << CHUNK_BITS);
    for (uint64_t k = 0; k < s->chunks; k++) {
        if (s->piped) /* written when its copy out of the GPU ends */
            pm_ev_push(pm_gpu_copy(&E.d2h_free, p2_ns_ps(E.rt->prm.cuda_d2h_latency_ns),
                                   p2_gbps_Bps(E.rt->prm.cuda_d2h_gbps),
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
void pm_deliver(pm_req *r, const pm_hdr *h, const uint8_t *data)
{
    set_status(r, h);
    if (h->type == H_EAGER) {
        pm_unpack(data, h->bytes, r->buf, r->count, r->type);
        pm_charge(pm_gpu_mem(r->buf) ? pm_gdr_h2d_ps(h->bytes) : pm_copy_ps(h->bytes));
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
            if (pm_matches(r, h)) {
                *pp = r->next;
                if (E.posted_tail == r)
                    E.posted_tail = prev;
                pm_deliver(r, h, data);
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
        if ((h->ctx & PM_NBC_CTX_BIT) && E.nbc_unexpected)
            E.nbc_unexpected(h);
        return;
    }
    case H_CTS: {
        pm_req *s = pm_req_by_id(h->sreq);
        if (!answer_cts(s, h))
            defer(0, s, h);
        return;
    }
    case H_CHUNK: { /* a chunk is in staging: copy it into the GPU buffer */
        pm_req *r = pm_req_by_id(h->rreq);
        pm_ev_push(pm_gpu_copy(&E.h2d_free, p2_ns_ps(E.rt->prm.cuda_h2d_latency_ns),
                               p2_gbps_Bps(E.rt->prm.cuda_h2d_gbps), h->len),
                   EV_H2D, r->id, h->off / block_bytes());
        return;
    }
    case H_FIN: {
        pm_req *r = pm_req_by_id(h->rreq);
        if (--r->fins_left > 0)
            return;
        if (r->direct) { /* the data is already in the GPU buffer */
            r->direct = 0;
        } else {
            uint64_t off = r->staging - 1;
            pm_unpack(E.base + E.stage_off + off, r->bytes, r->buf, r->count, r->type);
            if (r->bytes)
                tca_arena_free(&E.stage, off);
        }
        r->staging = 0;
        r->done = 1;
        retry_pending();
        return;
    }
    }
    if (h->type >= H_HOOK && E.rma_arrived) { /* one-sided communication's */
        E.rma_arrived(h, data);
        return;
    }
    pm_fatal("unknown message type %u (internal)", h->type);
}

static void completed_send(const ib_cqe *c)
{
    uint64_t kind = c->wr_id >> 56, v = c->wr_id & ((1ULL << 56) - 1);
    E.sq_done++;
    if (kind == WR_RMA && E.rma_completed) { /* one-sided communication's (its own errors) */
        E.rma_completed(c);
        return;
    }
    if (c->status != IB_OK)
        pm_fatal("the HCA failed a work request (ib_status %u)", c->status);
    if (kind == WR_SLOT) {
        E.send_free[E.nsend_free++] = (int)v;
        return;
    }
    if (kind == WR_CHUNK) { /* one chunk is at the receiver */
        pm_req *s = pm_req_by_id(v >> CHUNK_BITS);
        uint64_t k = v & ((1u << CHUNK_BITS) - 1);
        if (s->notify) {
            pm_hdr c = {.type = H_CHUNK, .src = pm_world_rank, .rreq = s->rreq,
                        .off = k * block_bytes(), .len = (uint32_t)chunk_len(s, k)};
            pm_send_hdr(s->comm->world[s->peer], &c, NULL, 0);
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
    pm_req *s = pm_req_by_id(v);
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
    if (!E.nev || E.ev[0].t > pm_now_ps())
        return 0;
    pm_event e = pm_ev_pop();
    pm_req *r = pm_req_by_id(e.req);
    if (e.kind == EV_D2H) { /* the chunk is in host staging: write it */
        write_chunk(r, e.chunk);
    } else if (--r->chunks_left == 0) { /* the last chunk is in the GPU buffer */
        uint64_t off = r->staging - 1;
        pm_unpack(E.base + E.stage_off + off, r->bytes, r->buf, r->count, r->type);
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
 * else only one there at the rank's time. PM_WAIT_OPEN lets the rank's other
 * threads' calls in while it waits (MPI_THREAD_MULTIPLE, p2mpi_core.c): one
 * of them may take the completion first, and then this returns 1 having
 * handled nothing, for the caller to look again. */
int pm_progress(int block)
{
    return pm_progress_also(block, NULL, NULL);
}

int pm_progress_also(int block, const p2_rt_word *also, int *also_met)
{
    if (run_due_event()) {
        E.handled++;
        return 1;
    }
    uint64_t i = E.cq_seen;
    volatile uint64_t *word =
        (volatile uint64_t *)(E.base + E.cq_off + IB_CQE_SIZE * (i % CQ_ENTRIES));
    p2_job_rank *ch = block && E.chan ? pm_wait_channel() : NULL;
    if (ch) {
        snprintf(ch->mpi_wait, sizeof ch->mpi_wait, "%.24s%s%.54s", E.call ? E.call : "MPI",
                 E.what[0] ? " " : "", E.what);
        p2_st_sc(&ch->mpi_since_ps, E.call_start);
    }
    uint64_t serial = (uint64_t)ib_cqe_serial(i) << 32;
    int deadline = block && E.nev;
    uint64_t until = deadline ? E.ev[0].t : 0;
    pm_call_state call;
    int open = block == PM_WAIT_OPEN && pm_let_others_in(&call);
    int met = 0;
    p2_wait_result w;
    if (also && block)
        w = (p2_wait_result)p2_rt_wait_mem_also(E.rt, word, IB_CQE_SERIAL_MASK, serial, also,
                                                deadline ? until : UINT64_MAX, &met);
    else if (deadline)
        w = (p2_wait_result)p2_rt_wait_mem_until(E.rt, word, IB_CQE_SERIAL_MASK, serial, until);
    else
        w = E.dev->ops->wait_mem(E.dev, word, IB_CQE_SERIAL_MASK, serial, block != PM_TEST);
    if (ch)
        ch->mpi_wait[0] = '\0';
    if (met) {
        if (open)
            pm_take_back(&call);
        *also_met = 1;
        return 1;
    }
    if (open) {
        pm_take_back(&call);
        if (w == P2_WAIT_OK && E.cq_seen != i)
            return 1; /* another thread handled the completion */
        if (w == P2_WAIT_NOT_YET) {
            if (run_due_event())
                E.handled++;
            return 1; /* the layer may have moved meanwhile: look again */
        }
    }
    if (w == P2_WAIT_NOT_YET) {
        if (!block || !run_due_event())
            return 0;
        E.handled++;
        return 1;
    }
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
    } else if (c.kind == IB_CQE_SEND || c.kind == IB_CQE_RDMA_WRITE || c.kind == IB_CQE_RDMA_READ ||
               c.kind == IB_CQE_ATOMIC) {
        completed_send(&c);
    } else {
        pm_fatal("unexpected completion kind %u (internal)", c.kind);
    }
    E.handled++;
    return 1;
}

/* ---- Start ------------------------------------------------------------------------ */

void pm_engine_start(void)
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
    /* From here the layer's queues are the HCA's: p2_exchange, which may
     * have used it before, refuses from now on (lib/src/coll). */
    p2_device_set_holder(E.dev, "the MPI layer");
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
    reg(IB_REG_SQ_BASE, pm_bus_of(E.sq_off));
    reg(IB_REG_CQ_SIZE, CQ_ENTRIES);
    reg(IB_REG_CQ_BASE, pm_bus_of(E.cq_off));
    reg(IB_REG_RQ_SIZE, RQ_ENTRIES);
    reg(IB_REG_RQ_BASE, pm_bus_of(E.rq_off));
    int slots[RECV_SLOTS];
    for (int i = 0; i < RECV_SLOTS; i++)
        slots[i] = i;
    post_recvs(slots, RECV_SLOTS);
    for (int i = 0; i < SEND_SLOTS; i++)
        E.send_free[i] = SEND_SLOTS - 1 - i;
    E.nsend_free = SEND_SLOTS;

    pm_comms_start();
    E.inited = 1;
}
