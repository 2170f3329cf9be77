/*
 * p2mpi_rma.c - one-sided communication's mechanism in the virtual-time MPI
 * layer: the table of windows, operations and their completion, the target's
 * side of active messages, the IB atomics of the lock words. README.md, "One-
 * sided communication", has the design. Depends on its datatypes
 * (p2mpi_rma_dt.c), the engine (its hooks: E.rma_arrived for messages of
 * types from H_HOOK on, E.rma_completed for WR_RMA work requests),
 * point-to-point's waiting, and the units below them.
 *
 * An operation on a target whose window the HCA reaches (MPI_Win_allocate,
 * MPI_Win_create) moves by RDMA: a Put is packed into staging and
 * RDMA-written to the target's public memory, one work request per
 * contiguous run of the target datatype; a Get RDMA-reads the runs into
 * staging and is unpacked into the origin buffer when the last read
 * completes. Accumulates (and every operation on a dynamic window, whose
 * memory only the target can resolve) are active messages: a SEND of at most
 * an eager buffer each, applied by the target's progress engine one at a
 * time (so atomic per element against each other) and answered with the old
 * data (fetching operations) or an acknowledgement. An operation on the
 * calling rank's own window is applied at once. Each operation counts as
 * pending on its target until its last work request or answer completes.
 */
#define _GNU_SOURCE
#include "p2mpi_rma.h"

#include <inttypes.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

/* ---- Messages -------------------------------------------------------------------- */
enum { H_RMA_OP = H_HOOK, H_RMA_REPLY = H_HOOK + 1, H_RMA_NOTE = H_HOOK + 2 };

/* The header of one-sided communication's messages (the engine's pm_hdr
 * shape: type first, payload bytes at 16). */
typedef struct pm_rma_hdr {
    uint32_t type;   /* H_RMA_* */
    int32_t src;     /* sender's world rank */
    uint32_t win;    /* window id */
    uint8_t kind;    /* PM_PUT ... (H_RMA_OP), PM_MSG_* (H_RMA_NOTE) */
    uint8_t dtype;   /* the basic type's code (accumulates) */
    uint8_t op;      /* the op's code (accumulates) */
    uint8_t status;  /* H_RMA_REPLY: MPI error class of the target's refusal, 0 = done */
    uint64_t bytes;  /* payload after the header */
    uint64_t id;     /* the origin's operation, echoed by the reply */
    uint64_t addr;   /* byte offset in the target's window (dynamic: the address) */
    uint64_t count;  /* elements of dtype (accumulates), else bytes */
    uint64_t roff;   /* where the reply's data goes in the operation's result */
    uint64_t spare;
} pm_rma_hdr;
_Static_assert(sizeof(pm_rma_hdr) == HDR_BYTES, "one-sided header size");
_Static_assert(offsetof(pm_rma_hdr, bytes) == offsetof(pm_hdr, bytes), "payload bytes where pm_hdr has them");

/* ---- Operations in flight ---------------------------------------------------------- */
typedef struct rma_op {
    int used, done, keep, local;
    pm_win *win;
    int target;             /* comm rank */
    unsigned parts;         /* work requests and messages not yet complete */
    uint64_t staging;       /* staging-arena offset + 1 */
    uint8_t *rbuf;          /* the packed result (in staging, or malloc'd when rbuf_heap) */
    int rbuf_heap;
    size_t rbytes;
    void *result;           /* unpacked into here at the end */
    int rcount;
    MPI_Datatype rtype;
    uint64_t req;           /* a request to complete with it, 0: none */
    uint64_t value;         /* an atomic's old value */
    int next_free;
} rma_op;

static rma_op *ops;
static size_t nops;
static int free_op = -1;
static pm_win *wins;

static void rma_arrived(const void *hdr, const uint8_t *data);
static void rma_completed(const void *cqe);

static uint64_t op_new(pm_win *w, int target)
{
    if (free_op < 0) {
        size_t cap = nops ? nops * 2 : 256;
        rma_op *t = realloc(ops, cap * sizeof *t);
        if (!t)
            pm_fatal("out of memory");
        memset(t + nops, 0, (cap - nops) * sizeof *t);
        for (size_t i = cap; i-- > nops;) {
            t[i].next_free = free_op;
            free_op = (int)i;
        }
        ops = t;
        nops = cap;
    }
    int i = free_op;
    rma_op *o = &ops[i];
    free_op = o->next_free;
    memset(o, 0, sizeof *o);
    o->used = 1;
    o->win = w;
    o->target = target;
    return (uint64_t)i + 1;
}

static rma_op *op_of(uint64_t id)
{
    if (id == 0 || id > nops || !ops[id - 1].used)
        pm_fatal("a completion names one-sided operation %" PRIu64 ", which does not exist (internal)", id);
    return &ops[id - 1];
}

static void op_free(uint64_t id)
{
    rma_op *o = &ops[id - 1];
    o->used = 0;
    o->next_free = free_op;
    free_op = (int)(id - 1);
}

/* Staging memory (the layer's registered memory) for n bytes: waits while
 * operations in flight hold it; the job ends if it can never fit. */
static uint64_t stage_alloc(uint64_t n)
{
    uint64_t off;
    while (tca_arena_alloc(&E.stage, n ? n : 1, &off) != TCA_ARENA_OK) {
        if (E.sq_done == E.sq_posted && !E.pending)
            pm_fatal("a one-sided operation needs %" PRIu64 " bytes of the layer's registered "
                     "memory, more than is free (%" PRIu64 " of %" PRIu64 " used): raise "
                     "mpi_host_bytes or move less at once",
                     n, tca_arena_used(&E.stage), E.stage.size);
        pm_progress(PM_WAIT); /* operations in flight free it as they complete */
    }
    return off;
}

/* The end of one work request or message of an operation. */
static void part_done(uint64_t id)
{
    rma_op *o = op_of(id);
    if (--o->parts)
        return;
    if (o->rbuf && o->result)
        pm_unpack(o->rbuf, o->rbytes, o->result, o->rcount, o->rtype);
    if (o->rbuf_heap)
        free(o->rbuf);
    if (o->staging) {
        if (!o->keep)
            tca_arena_free(&E.stage, o->staging - 1);
    }
    if (o->win && !o->keep) {
        o->win->pending[o->target]--;
        if (o->local)
            o->win->pending_local[o->target]--;
    }
    if (o->req && o->req < E.reqs_cap && E.reqs[o->req])
        E.reqs[o->req]->done = 1;
    o->done = 1;
    if (!o->keep)
        op_free(id);
}

static const char *kind_name(int kind)
{
    static const char *const names[] = {"", "MPI_Put", "MPI_Get", "MPI_Accumulate",
                                        "MPI_Get_accumulate", "MPI_Compare_and_swap"};
    return names[kind];
}

/* ---- The table of windows ----------------------------------------------------------- */

void pm_win_link(pm_win *w)
{
    E.rma_arrived = rma_arrived;
    E.rma_completed = rma_completed;
    w->next = wins;
    wins = w;
}

void pm_win_unlink(pm_win *w)
{
    for (pm_win **q = &wins; *q; q = &(*q)->next)
        if (*q == w) {
            *q = w->next;
            return;
        }
}

pm_win *pm_win_of(MPI_Win h)
{
    if (h == MPI_WIN_NULL)
        pm_fatal("MPI_WIN_NULL passed as a window (MPI_ERR_WIN)");
    for (pm_win *w = wins; w; w = w->next)
        if (w == as_win(h))
            return w;
    pm_fatal("a window the layer did not make, or one already freed (MPI_ERR_WIN)");
}

pm_win *pm_win_by_id(uint32_t id)
{
    for (pm_win *w = wins; w; w = w->next)
        if (w->id == id)
            return w;
    pm_fatal("a one-sided message names window %u, which this rank does not have (freed "
             "while operations on it were in flight?)",
             id);
}

/* ---- Applying an operation to memory (the target's side, or the origin's own) ---- */

/* mem op= in for count elements of b laid out as b (stride its extent); in is packed. */
static void accumulate(uint8_t *mem, const uint8_t *in, uint64_t count, MPI_Datatype b, MPI_Op op)
{
    size_t es = pm_type_size(b);
    if (op == MPI_NO_OP || !count)
        return;
    if ((MPI_Aint)es == pm_type_extent(b)) {
        if (op == MPI_REPLACE)
            memcpy(mem, in, es * count);
        else if (PMPI_Reduce_local(in, mem, (int)count, b, op) != MPI_SUCCESS)
            pm_fatal("Open MPI's reduction refused the accumulate's op on its datatype (MPI_ERR_OP)");
        return;
    }
    void *typed, *base = pm_type_buffer(b, (int)count, &typed); /* pair types: padded layout */
    pm_unpack(in, es * count, typed, (int)count, b);
    if (op == MPI_REPLACE)
        pm_unpack(in, es * count, mem, (int)count, b);
    else if (PMPI_Reduce_local(typed, mem, (int)count, b, op) != MPI_SUCCESS)
        pm_fatal("Open MPI's reduction refused the accumulate's op on its datatype (MPI_ERR_OP)");
    free(base);
}

/* Applies operation kind at mem: n bytes (PM_PUT, PM_GET) or count elements
 * of b; the old contents, packed, into old (fetching kinds). Charged as the
 * CPU's copy or reduction. */
static void apply(int kind, uint8_t *mem, uint64_t count, MPI_Datatype b, MPI_Op op,
                  const uint8_t *in, const uint8_t *cmp, uint8_t *old)
{
    size_t es = kind == PM_PUT || kind == PM_GET ? 1 : pm_type_size(b);
    size_t n = es * count;
    if (old)
        pm_pack(mem, (int)(es == 1 ? n : count), es == 1 ? MPI_BYTE : b, old, n);
    switch (kind) {
    case PM_PUT: memcpy(mem, in, n); break;
    case PM_GET: break;
    case PM_ACC:
    case PM_GET_ACC: accumulate(mem, in, count, b, op); break;
    case PM_CAS:
        if (memcmp(old, cmp, n) == 0)
            pm_unpack(in, n, mem, 1, b);
        break;
    }
    if (kind == PM_ACC || kind == PM_GET_ACC)
        pm_charge_reduce(n);
    else
        pm_charge_copy(n);
}

/* apply() on memory the program handed over: a dynamic window's attached
 * region may have been unmapped since MPI_Win_attach (erroneous, and
 * otherwise a SIGSEGV inside the layer at whatever call handles the
 * operation). Returns 0, or the signal the access took. */
typedef struct apply_args {
    int kind;
    uint8_t *mem;
    uint64_t count;
    MPI_Datatype b;
    MPI_Op op;
    const uint8_t *in, *cmp;
    uint8_t *old;
} apply_args;

static void apply_args_run(void *p)
{
    const apply_args *a = p;
    apply(a->kind, a->mem, a->count, a->b, a->op, a->in, a->cmp, a->old);
}

static int apply_guarded(const pm_win *w, int kind, uint8_t *mem, uint64_t count, MPI_Datatype b,
                         MPI_Op op, const uint8_t *in, const uint8_t *cmp, uint8_t *old)
{
    apply_args a = {kind, mem, count, b, op, in, cmp, old};
    if (w->flavor != MPI_WIN_FLAVOR_DYNAMIC) { /* the layer's memory or its registered copy */
        apply_args_run(&a);
        return 0;
    }
    return pm_rma_guarded(apply_args_run, &a);
}

/* How messages name a window: its id (the same at every member) and the
 * name MPI_Win_set_name gave it, if any. */
static const char *win_label(const pm_win *w, char *buf, size_t n)
{
    snprintf(buf, n, w->name[0] ? "window %u \"%s\"" : "window %u", w->id, w->name);
    return buf;
}

/* The bytes [addr, addr + span) of w at this rank: its public memory at that
 * offset, or (dynamic) an attached region holding them; NULL if none. */
static uint8_t *local_mem(pm_win *w, uint64_t addr, uint64_t span)
{
    if (w->flavor == MPI_WIN_FLAVOR_DYNAMIC) {
        for (pm_region *r = w->regions; r; r = r->next)
            if (addr >= (uint64_t)(uintptr_t)r->base && span <= r->size &&
                addr - (uint64_t)(uintptr_t)r->base <= r->size - span)
                return (uint8_t *)(uintptr_t)addr;
        return NULL;
    }
    if (addr > (uint64_t)w->size || span > (uint64_t)w->size - addr)
        return NULL;
    return w->pub + addr;
}

/* ---- Active messages ---------------------------------------------------------------- */

/* A message of w to target (comm rank) with n payload bytes made by fill. */
static void am_send(pm_win *w, int target, pm_rma_hdr *h, const void *a, size_t na, const void *b,
                    size_t nb)
{
    h->src = pm_world_rank;
    h->win = w->id;
    h->bytes = na + nb;
    int s = pm_take_send_slot();
    uint8_t *p = pm_send_slot(s);
    memcpy(p, h, HDR_BYTES);
    if (na)
        memcpy(p + HDR_BYTES, a, na);
    if (nb)
        memcpy(p + HDR_BYTES + na, b, nb);
    pm_charge_copy(na + nb);
    pm_post_wqe(IB_OP_SEND, w->comm->world[target], 0, pm_bus_of(E.send_off + (uint64_t)s * E.slot_bytes),
                HDR_BYTES + na + nb, 0, WR(WR_SLOT, s));
}

static size_t am_payload(void) { return (size_t)(E.slot_bytes - HDR_BYTES); }

/* The target's side: the operation applied to its memory, answered. */
static void target_apply(const pm_rma_hdr *h, const uint8_t *data)
{
    pm_win *w = pm_win_by_id(h->win);
    MPI_Datatype b = h->kind == PM_PUT || h->kind == PM_GET ? MPI_BYTE : pm_type_code[h->dtype];
    uint64_t span = h->kind == PM_PUT || h->kind == PM_GET
                        ? h->count
                        : (h->count ? (h->count - 1) * (uint64_t)pm_type_extent(b) + pm_type_size(b) : 0);
    pm_rma_hdr r = {.type = H_RMA_REPLY, .id = h->id, .roff = h->roff};
    uint8_t *mem = local_mem(w, h->addr, span);
    if (!mem) {
        r.status = MPI_ERR_RMA_RANGE;
        r.addr = h->addr;
        r.count = span;
        am_send(w, pm_comm_rank_of(w->comm, h->src), &r, NULL, 0, NULL, 0);
        return;
    }
    size_t n = h->kind == PM_PUT || h->kind == PM_GET ? h->count : h->count * pm_type_size(b);
    int fetch = h->kind == PM_GET || h->kind == PM_GET_ACC || h->kind == PM_CAS;
    uint8_t *old = fetch ? malloc(n ? n : 1) : NULL;
    if (apply_guarded(w, h->kind, mem, h->count, b, pm_op_code[h->op], data, data + n, old)) {
        /* the operation is the origin's: it reports it (this rank's memory
         * and state are as before the message) */
        r.status = MPI_ERR_RMA_ATTACH;
        r.kind = h->kind;
        r.addr = h->addr;
        r.count = span;
        fetch = 0;
    }
    am_send(w, pm_comm_rank_of(w->comm, h->src), &r, old, fetch ? n : 0, NULL, 0);
    free(old);
}

static void rma_arrived(const void *hdr, const uint8_t *data)
{
    pm_rma_hdr h;
    memcpy(&h, hdr, sizeof h);
    switch (h.type) {
    case H_RMA_OP: target_apply(&h, data); return;
    case H_RMA_REPLY: {
        rma_op *o = op_of(h.id);
        char label[MPI_MAX_OBJECT_NAME + 32];
        if (h.status == MPI_ERR_RMA_ATTACH)
            pm_fatal("%s to rank %d: %s (dynamic): the %" PRIu64 " bytes at 0x%" PRIx64
                     " are attached there but no longer mapped writable (freed after "
                     "MPI_Win_attach?) (MPI_ERR_RMA_ATTACH)",
                     kind_name(h.kind), h.src, win_label(o->win, label, sizeof label), h.count,
                     h.addr);
        if (h.status && o->win->flavor == MPI_WIN_FLAVOR_DYNAMIC)
            pm_fatal("rank %d refused a one-sided operation: the %" PRIu64 " bytes at 0x%" PRIx64
                     " are outside its window (no attached region holds them) (MPI_ERR_RMA_RANGE)",
                     h.src, h.count, h.addr);
        if (h.status)
            pm_fatal("rank %d refused a one-sided operation: bytes [%" PRIu64 ", +%" PRIu64
                     ") are outside its window (MPI_ERR_RMA_RANGE)",
                     h.src, h.addr, h.count);
        if (h.bytes)
            memcpy(o->rbuf + h.roff, data, h.bytes);
        part_done(h.id);
        return;
    }
    case H_RMA_NOTE: {
        pm_win *w = pm_win_by_id(h.win);
        int from = pm_comm_rank_of(w->comm, h.src);
        if (h.kind == PM_MSG_POST)
            w->posts[from]++;
        else
            w->dones[from]++;
        return;
    }
    }
    pm_fatal("unknown one-sided message type %u (internal)", h.type);
}

static void rma_completed(const void *cqe)
{
    const ib_cqe *c = cqe;
    uint64_t id = c->wr_id & ((1ULL << 56) - 1);
    rma_op *o = op_of(id);
    if (c->status != IB_OK)
        pm_fatal("a one-sided operation to rank %d failed in the HCA (ib_status %u)",
                 o->win ? o->win->comm->world[o->target] : -1, c->status);
    if (c->kind == IB_CQE_ATOMIC)
        memcpy(&o->value, E.base + E.stage_off + o->staging - 1, sizeof o->value);
    part_done(id);
}

void pm_rma_notify(pm_win *w, int target, int what)
{
    pm_rma_hdr h = {.type = H_RMA_NOTE, .kind = (uint8_t)what};
    am_send(w, target, &h, NULL, 0, NULL, 0);
}

/* ---- Operations ----------------------------------------------------------------------- */

/* RDMA: one work request per run of the target's bytes, out of or into staging. */
static void rdma_op(int kind, pm_win *w, int target, uint64_t id, const pm_run *r, size_t nr,
                    uint64_t tbase)
{
    rma_op *o = op_of(id);
    uint64_t packed = 0, stage_bus = pm_bus_of(E.stage_off + o->staging - 1);
    for (size_t i = 0; i < nr; i++) {
        for (uint64_t done = 0; done < r[i].n;) {
            uint64_t len = r[i].n - done < (1u << 30) ? r[i].n - done : (1u << 30);
            o->parts++;
            pm_post_wqe(kind == PM_PUT ? IB_OP_RDMA_WRITE : IB_OP_RDMA_READ, w->comm->world[target],
                        IB_RAIL_ANY, stage_bus + packed, len,
                        w->peer[target].bus + tbase + (uint64_t)r[i].off + done, WR(WR_RMA, id));
            done += len;
            packed += len;
        }
    }
}

/* Active messages: each run cut into messages of at most an eager buffer, on
 * element boundaries. */
static void am_op(int kind, pm_win *w, int target, uint64_t id, const pm_run *r, size_t nr,
                  uint64_t tbase, size_t es, int64_t stride, int dtype, int op, const uint8_t *in,
                  const uint8_t *cmp)
{
    rma_op *o = op_of(id);
    size_t per = am_payload() / (kind == PM_CAS ? 2 * es : es);
    if (!per)
        pm_fatal("%s: one element of %zu bytes does not fit an eager buffer (mpi_eager_bytes)",
                 kind_name(kind), es);
    uint64_t packed = 0;
    for (size_t i = 0; i < nr; i++)
        for (uint64_t done = 0; done < r[i].n;) {
            uint64_t k = r[i].n - done < per ? r[i].n - done : per;
            pm_rma_hdr h = {.type = H_RMA_OP, .kind = (uint8_t)kind, .dtype = (uint8_t)dtype,
                            .op = (uint8_t)op, .id = id, .count = k, .roff = packed,
                            .addr = tbase + (uint64_t)(r[i].off + (int64_t)done * stride)};
            int carries = in != NULL;
            o->parts++;
            am_send(w, target, &h, carries ? in + packed : NULL, carries ? k * es : 0, cmp,
                    kind == PM_CAS ? es : 0);
            done += k;
            packed += k * es;
        }
}

/* The byte where the target datatype starts in target's window (dynamic: the
 * address); the job ends if the datatype's runs from there leave the window
 * or cannot be computed. Displacement times unit, plus each run's
 * offset and span, are computed with overflow checks: in wrapping 64-bit
 * arithmetic a Get at 2^61 + 1 with unit 8 read bytes 8-15 and a Put at
 * 2^44 with unit 2^20 wrote byte 0, both in range once wrapped. A negative
 * displacement is refused outright (the standard's target_disp is
 * non-negative, and Open MPI's binding says MPI_ERR_DISP), even where a
 * datatype's offset would bring it back into the window. Dynamic windows
 * take addresses, which only the target can check against its regions; the
 * origin refuses only the ones whose runs would wrap. */
static uint64_t target_base(const char *call, const pm_win *w, int target, MPI_Aint tdisp,
                            const pm_run *r, size_t nr, size_t es, int64_t stride)
{
    int dynamic = w->flavor == MPI_WIN_FLAVOR_DYNAMIC;
    int64_t unit = dynamic ? 1 : w->peer[target].disp_unit, base;
    if (!dynamic && tdisp < 0)
        pm_fatal("%s: target_disp = %" PRId64 " is negative (MPI_ERR_DISP)", call, (int64_t)tdisp);
    if (__builtin_mul_overflow((int64_t)tdisp, unit, &base))
        pm_fatal("%s: target_disp = %" PRId64 " times rank %d's displacement unit %" PRId64
                 " overflows 64 bits (MPI_ERR_DISP)",
                 call, (int64_t)tdisp, target, unit);
    for (size_t i = 0; i < nr; i++) {
        int64_t lo, hi, span;
        if (__builtin_mul_overflow((int64_t)(r[i].n - 1), stride, &span) ||
            __builtin_add_overflow(span, (int64_t)es, &span) ||
            __builtin_add_overflow(base, r[i].off, &lo) || __builtin_add_overflow(lo, span, &hi))
            pm_fatal("%s: target_disp = %" PRId64 " with the target datatype's extent overflows "
                     "64 bits at rank %d (MPI_ERR_DISP)",
                     call, (int64_t)tdisp, target);
        if (dynamic)
            continue;
        /* the origin knows the target's size: range errors end the job here */
        if (lo < 0 || (uint64_t)hi > w->peer[target].size)
            pm_fatal("%s: bytes [%" PRId64 ", %" PRId64 ") of rank %d's window of %" PRIu64
                     " bytes (MPI_ERR_RMA_RANGE)",
                     call, lo, hi, target, w->peer[target].size);
    }
    return (uint64_t)base;
}

uint64_t pm_rma_op(int kind, pm_win *w, int target, const void *origin, int ocount,
                   MPI_Datatype otype, void *result, int rcount, MPI_Datatype rtype,
                   const void *compare, MPI_Aint tdisp, int tcount, MPI_Datatype ttype, MPI_Op op,
                   int want_req)
{
    const char *call = E.call ? E.call : kind_name(kind);
    pm_need_count(ocount, "origin_count");
    pm_need_count(rcount, "result_count");
    pm_need_count(tcount, "target_count");
    if (target < 0 || target >= w->comm->size)
        pm_fatal("%s: rank %d is not in the window's group (size %d) (MPI_ERR_RANK)", call, target,
                 w->comm->size);
    if (!w->fence_open && !w->lock_all && !w->locked[target]) {
        int in = 0;
        for (int i = 0; i < w->naccess; i++)
            in |= w->access[i] == target;
        if (!in)
            pm_fatal("%s to rank %d outside an access epoch: no MPI_Win_fence, MPI_Win_lock, "
                     "MPI_Win_lock_all or MPI_Win_start opened one (MPI_ERR_RMA_SYNC)",
                     call, target);
    }
    int accum = kind == PM_ACC || kind == PM_GET_ACC || kind == PM_CAS;
    size_t tbytes = pm_type_size(ttype) * (size_t)tcount;
    size_t obytes = kind == PM_GET_ACC && op == MPI_NO_OP ? tbytes
                                                          : pm_type_size(otype) * (size_t)ocount;
    if (obytes != tbytes)
        pm_fatal("%s: the origin's %zu bytes and the target's %zu differ (MPI_ERR_TYPE)", call,
                 obytes, tbytes);
    if ((kind == PM_GET_ACC || kind == PM_CAS) && pm_type_size(rtype) * (size_t)rcount != tbytes)
        pm_fatal("%s: the result buffer holds %zu bytes, the target %zu (MPI_ERR_TYPE)", call,
                 pm_type_size(rtype) * (size_t)rcount, tbytes);
    MPI_Datatype b = MPI_BYTE;
    int dtype = 0, opc = 0;
    if (accum) {
        b = pm_basic_type(ttype);
        dtype = pm_type_to_code(b);
        opc = pm_op_to_code(op);
        if (dtype < 0)
            pm_fatal("%s: the target datatype is not built of one predefined datatype (MPI_ERR_TYPE)",
                     call);
        if (opc < 0)
            pm_fatal("%s: the op is not a predefined one (MPI_ERR_OP)", call);
        if (!(kind == PM_GET_ACC && op == MPI_NO_OP) && pm_basic_type(otype) != b)
            pm_fatal("%s: the origin and target datatypes are built of different predefined "
                     "types (MPI_ERR_TYPE)",
                     call);
    }
    uint64_t id = op_new(w, target);
    rma_op *o = op_of(id);
    o->parts = 1; /* held while it is being issued: answers may come back meanwhile */
    if (want_req) {
        pm_req *rq = pm_req_new(RQ_SEND);
        rq->peer = target;
        rq->tag = MPI_ANY_TAG;
        rq->comm = w->comm;
        rq->active = 1;
        o->req = rq->id;
    }
    uint64_t req = o->req;
    int fetch = kind == PM_GET || kind == PM_GET_ACC || kind == PM_CAS;
    if (!tbytes) {
        if (req)
            E.reqs[req]->done = 1;
        op_free(id);
        return req;
    }
    o = op_of(id);
    size_t es = accum ? pm_type_size(b) : 1;
    int64_t stride = accum ? (int64_t)pm_type_extent(b) : 1;
    pm_run *r;
    size_t nr = pm_rma_runs(ttype, tcount, es, stride, &r);
    int dynamic = w->flavor == MPI_WIN_FLAVOR_DYNAMIC;
    uint64_t tbase = target_base(call, w, target, tdisp, r, nr, es, stride);
    w->pending[target]++;
    o->local = fetch;
    if (fetch)
        w->pending_local[target]++;
    o->result = kind == PM_GET ? (void *)origin : result;
    o->rcount = kind == PM_GET ? ocount : rcount;
    o->rtype = kind == PM_GET ? otype : rtype;
    o->rbytes = tbytes;
    uint8_t *in = NULL, *cmp = NULL;
    if (kind != PM_GET && !(kind == PM_GET_ACC && op == MPI_NO_OP)) {
        in = malloc(tbytes);
        pm_pack(origin, ocount, otype, in, tbytes);
    }
    if (kind == PM_CAS) {
        cmp = malloc(tbytes);
        pm_pack(compare, 1, otype, cmp, tbytes);
    }
    int rdma = !dynamic && (kind == PM_PUT || kind == PM_GET) && target != w->comm->rank;
    if (rdma) {
        o->staging = stage_alloc(tbytes) + 1;
        uint8_t *st = E.base + E.stage_off + o->staging - 1;
        if (kind == PM_PUT)
            memcpy(st, in, tbytes); /* the emulator's copy: stands for registered user memory */
        else
            o->rbuf = st;
        rdma_op(kind, w, target, id, r, nr, tbase);
    } else if (fetch) {
        o->rbuf = malloc(tbytes);
        o->rbuf_heap = 1;
    }
    if (target == w->comm->rank) { /* the own window: at once */
        uint64_t packed = 0;
        for (size_t i = 0; i < nr; i++) {
            uint64_t span = (r[i].n - 1) * (uint64_t)stride + es;
            uint8_t *mem = local_mem(w, tbase + (uint64_t)r[i].off, span);
            if (!mem)
                pm_fatal("%s: bytes [%" PRIu64 ", +%" PRIu64 ") are outside the own window (no "
                         "attached region holds them) (MPI_ERR_RMA_RANGE)",
                         call, tbase + (uint64_t)r[i].off, span);
            if (apply_guarded(w, kind, mem, r[i].n, b, op, in ? in + packed : NULL, cmp,
                              fetch ? o->rbuf + packed : NULL)) {
                char label[MPI_MAX_OBJECT_NAME + 32];
                pm_fatal("%s: %s (dynamic): the %" PRIu64 " bytes at %p are attached here but no "
                         "longer mapped writable (freed after MPI_Win_attach?) (MPI_ERR_RMA_ATTACH)",
                         call, win_label(w, label, sizeof label), span, (void *)mem);
            }
            packed += r[i].n * es;
        }
    } else if (!rdma) {
        am_op(kind, w, target, id, r, nr, tbase, es, stride, dtype, opc, in, cmp);
    }
    part_done(id); /* issued */
    free(in);
    free(cmp);
    free(r);
    return req;
}

void pm_rma_flush(pm_win *w, int target, int local)
{
    for (int t = target < 0 ? 0 : target; t < (target < 0 ? w->comm->size : target + 1); t++) {
        uint64_t *left = local ? w->pending_local : w->pending;
        if (left[t] && !E.what[0])
            snprintf(E.what, sizeof E.what, "for its one-sided operations to rank %d to complete",
                     w->comm->world[t]);
        while (left[t])
            pm_block();
    }
}

/* ---- The lock words ------------------------------------------------------------------- */

uint64_t pm_rma_atomic_post(pm_win *w, int target, uint8_t opcode, uint64_t compare_add,
                            uint64_t swap)
{
    uint64_t id = op_new(w, target);
    rma_op *o = op_of(id);
    o->keep = 1;
    o->parts = 1;
    o->staging = stage_alloc(IB_ATOMIC_BYTES) + 1;
    ib_wqe q;
    memset(&q, 0, sizeof q);
    q.opcode = opcode;
    q.rail = IB_RAIL_ANY;
    q.length = IB_ATOMIC_BYTES;
    q.local_addr = pm_bus_of(E.stage_off + o->staging - 1);
    q.remote_addr = w->peer[target].lock_bus;
    q.compare_add = compare_add;
    q.swap = swap;
    q.wr_id = WR(WR_RMA, id);
    pm_post(&q, w->comm->world[target]);
    return id;
}

uint64_t pm_rma_atomic_wait(uint64_t id)
{
    rma_op *o = op_of(id);
    if (!o->done && !E.what[0])
        snprintf(E.what, sizeof E.what, "for rank %d's lock word", o->win->comm->world[o->target]);
    while (!op_of(id)->done)
        pm_block();
    o = op_of(id);
    uint64_t v = o->value;
    tca_arena_free(&E.stage, o->staging - 1);
    op_free(id);
    return v;
}
