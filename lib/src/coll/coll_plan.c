/*
 * coll_plan.c - plans: a prepared collective (buffers, every rank's handles,
 * the algorithm). A collective call:
 *   1. local checks (types, op, root, buffers: registered?), the algorithm
 *      choice, scratch allocation, a dry pass of the algorithm recording
 *      which ranks this rank writes into;
 *   2. one exchange over the comm: [status, arguments, algorithm, recv and
 *      scratch handles, targets]; every rank derives the same verdict (the
 *      status of the lowest rank with one, else INVALID_ARGUMENT if the
 *      arguments differ) and the ranks that write into it;
 *   3. the run (coll_transport.c: ready words on reruns).
 *
 * Depends on the communicators (coll_comm.c: the exchange), the choice
 * (coll_select.c), the algorithms and the TCA API; the blocking and the
 * persistent calls (coll_blocking.c, coll_persistent.c) use it.
 */
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "coll.h"
#include "coll_plan.h"
#include "tca_internal.h" /* tca_region_room */

typedef struct plan_blob {
    int32_t status, kind, type, op, root, forced;
    uint32_t eligible, gpu;
    uint64_t count, targets;
    char algo[24];
    tcaHandle recv, scratch;
} plan_blob;
_Static_assert(sizeof(plan_blob) <= COLL_BLOB_MAX, "a plan blob fits a mailbox slot");

/* Local half of a buffer: checks and a handle. */
static tcaresult buf_setup(coll_buf *b, const void *ptr, size_t bytes)
{
    b->ptr = (uint8_t *)ptr;
    b->bytes = bytes;
    if (bytes == 0)
        return TCA_SUCCESS;
    if (!ptr || ptr == P2_IN_PLACE)
        return TCA_ERROR_INVALID_ARGUMENT;
    int kind = coll_memory_kind(ptr, 1);
    if (kind < 0)
        return TCA_ERROR_NOT_REGISTERED;
    /* tcaCreateHandle takes any range of the arena: a handle reaching past
     * the allocation would let the call write into the next one. */
    uint64_t room;
    if (tca_region_room(ptr, (tcaMemoryKind)kind, &room) != TCA_SUCCESS)
        return TCA_ERROR_NOT_REGISTERED;
    if (bytes > room)
        return TCA_ERROR_OUT_OF_RANGE;
    b->gpu = kind == tcaMemoryGPU;
    return tcaCreateHandle(&b->h, (void *)ptr, bytes, (tcaMemoryKind)kind);
}

static tcaresult plan_buffers(coll_plan *p, const void *sendbuf, void *recvbuf);

static void plan_release_buffers(coll_plan *p)
{
    if (p->send.bytes && p->send.h.check)
        tcaDestroyHandle(&p->send.h);
    if (p->recv.bytes && p->recv.h.check)
        tcaDestroyHandle(&p->recv.h);
    memset(&p->send, 0, sizeof p->send);
    memset(&p->recv, 0, sizeof p->recv);
}

void coll_plan_release(coll_plan *p)
{
    plan_release_buffers(p);
    if (p->scratch.ptr) {
        if (p->scratch.h.check)
            tcaDestroyHandle(&p->scratch.h);
        tcaFree(p->scratch.ptr, p->scratch.gpu ? tcaMemoryGPU : tcaMemoryCPU);
    }
    free(p->peer);
    memset(p, 0, sizeof *p);
}

int coll_rooted(coll_kind k)
{
    return k == COLL_BCAST || k == COLL_SCATTER || k == COLL_GATHER || k == COLL_REDUCE;
}

/* Scratch and the dry pass for the plan's algorithm (again after a change
 * of algorithm: the old scratch is released first). */
static tcaresult plan_algorithm(coll_plan *p)
{
    if (p->scratch.ptr) {
        if (p->scratch.h.check)
            tcaDestroyHandle(&p->scratch.h);
        tcaFree(p->scratch.ptr, p->scratch.gpu ? tcaMemoryGPU : tcaMemoryCPU);
        memset(&p->scratch, 0, sizeof p->scratch);
    }
    p->targets = 0;
    size_t sb = p->algo->scratch(p);
    if (sb) {
        void *s = NULL;
        tcaMemoryKind mk = p->algo->scratch_gpu ? tcaMemoryGPU : tcaMemoryCPU;
        COLL_TRY(tcaMalloc(&s, sb, mk));
        p->scratch.ptr = s;
        p->scratch.bytes = sb;
        p->scratch.gpu = mk == tcaMemoryGPU;
        if (!p->scratch.gpu)
            memset(s, 0, sb);
        COLL_TRY(tcaCreateHandle(&p->scratch.h, s, sb, mk));
    }
    if (p->kind == COLL_BARRIER || p->bytes) {
        p->dry = 1;
        tcaresult r = p->algo->run(p);
        p->dry = 0;
        COLL_TRY(r);
    }
    return TCA_SUCCESS;
}

/* Local checks, buffers, algorithm, scratch, dry pass: the status. */
static tcaresult plan_local(coll_plan *p, const void *sendbuf, void *recvbuf)
{
    coll_kind k = p->kind;
    if (k == COLL_BARRIER) {
        p->esize = 0;
    } else {
        if (!coll_type_valid(p->type))
            return TCA_ERROR_INVALID_ARGUMENT;
        p->esize = TCA_TYPE_SIZE(p->type);
        if (p->count > (SIZE_MAX / P2_COLL_MAX_RANKS) / p->esize)
            return TCA_ERROR_INVALID_ARGUMENT;
    }
    p->bytes = p->count * p->esize;
    if (k == COLL_REDUCE || k == COLL_ALLREDUCE)
        COLL_TRY(coll_op_check(p->type, p->op));
    if (coll_rooted(k) && (p->root < 0 || p->root >= p->size))
        return TCA_ERROR_INVALID_ARGUMENT;
    COLL_TRY(plan_buffers(p, sendbuf, recvbuf));
    COLL_TRY(coll_select(p));
    return plan_algorithm(p);
}

/* The local buffers' checks and handles (p->bytes set). */
static tcaresult plan_buffers(coll_plan *p, const void *sendbuf, void *recvbuf)
{
    coll_kind k = p->kind;
    int am_root = p->rank == p->root;
    size_t b = p->bytes, all = p->bytes * (size_t)p->size;
    switch (k) {
    case COLL_BARRIER: break;
    case COLL_BCAST:
        COLL_TRY(buf_setup(&p->recv, recvbuf, b));
        p->send = p->recv;
        p->send.h.check = 0; /* not owned twice */
        if (b) COLL_TRY(buf_setup(&p->send, recvbuf, b));
        break;
    case COLL_SCATTER:
        if (am_root) {
            COLL_TRY(buf_setup(&p->send, sendbuf, all));
            if (recvbuf == P2_IN_PLACE)
                p->in_place = 1;
            else
                COLL_TRY(buf_setup(&p->recv, recvbuf, b));
        } else
            COLL_TRY(buf_setup(&p->recv, recvbuf, b));
        break;
    case COLL_GATHER:
    case COLL_ALLGATHER:
        if (k == COLL_ALLGATHER || am_root)
            COLL_TRY(buf_setup(&p->recv, recvbuf, all));
        if (sendbuf == P2_IN_PLACE && (k == COLL_ALLGATHER || am_root)) {
            p->in_place = 1;
            COLL_TRY(buf_setup(&p->send, b ? (uint8_t *)recvbuf + (size_t)p->rank * b : NULL, b));
        } else
            COLL_TRY(buf_setup(&p->send, sendbuf, b));
        break;
    case COLL_REDUCE:
    case COLL_ALLREDUCE:
        if (k == COLL_ALLREDUCE || am_root) {
            COLL_TRY(buf_setup(&p->recv, recvbuf, b));
            if (sendbuf == P2_IN_PLACE || sendbuf == recvbuf) {
                p->in_place = 1;
                sendbuf = recvbuf;
            }
        }
        COLL_TRY(buf_setup(&p->send, sendbuf, b));
        break;
    default: return TCA_ERROR_INVALID_ARGUMENT;
    }
    return TCA_SUCCESS;
}

/* What every rank's call must agree on (FNV-1a, 23 bits: the ready word's
 * room above the run and the handle bit). */
static uint32_t plan_signature(const coll_plan *p)
{
    uint64_t f[] = {(uint64_t)p->kind, p->count, (uint64_t)p->type, (uint64_t)p->op,
                    (uint64_t)p->root};
    uint64_t h = 1469598103934665603ull;
    for (size_t i = 0; i < sizeof f / sizeof f[0]; i++)
        for (int b = 0; b < 8; b++)
            h = (h ^ (f[i] >> (8 * b) & 0xffu)) * 1099511628211ull;
    for (const char *c = p->algo->name; *c; c++)
        h = (h ^ (uint8_t)*c) * 1099511628211ull;
    return (uint32_t)((h ^ (h >> 23) ^ (h >> 46)) & 0x7fffffu);
}

static const char *kind_name(int32_t kind)
{
    return kind >= 0 && kind < COLL_KINDS ? coll_kind_names[kind] : "?";
}

/* The first argument in which two ranks' blobs differ ("count"), with both
 * values; NULL if none. The algorithm counts only with `algo` set: ranks
 * whose buffers differ in kind may choose differently and still agree. */
static const char *blob_difference(const plan_blob *a, const plan_blob *b, int algo, char *va,
                                   char *vb, size_t n)
{
    if (a->kind != b->kind) {
        snprintf(va, n, "p2_%s", kind_name(a->kind));
        snprintf(vb, n, "p2_%s", kind_name(b->kind));
        return "collective";
    }
    if (a->count != b->count) {
        snprintf(va, n, "%llu", (unsigned long long)a->count);
        snprintf(vb, n, "%llu", (unsigned long long)b->count);
        return "count";
    }
    if (a->type != b->type) {
        coll_type_name((tcaDataType)a->type, va, n);
        coll_type_name((tcaDataType)b->type, vb, n);
        return "type";
    }
    if (a->op != b->op) {
        coll_op_name((tcaOp)a->op, va, n);
        coll_op_name((tcaOp)b->op, vb, n);
        return "op";
    }
    if (a->root != b->root) {
        snprintf(va, n, "%d", (int)a->root);
        snprintf(vb, n, "%d", (int)b->root);
        return "root";
    }
    if (algo && strcmp(a->algo, b->algo) != 0) {
        snprintf(va, n, "%s", a->algo);
        snprintf(vb, n, "%s", b->algo);
        return "forced algorithm (P2_COLL_<COLLECTIVE> or P2_COLL_RULES)";
    }
    return NULL;
}

/* TCA_ERROR_INVALID_ARGUMENT names no argument: when the ranks' calls
 * differ, the comm's rank 0 says on stderr which one, with its own value and
 * the first other one (ranks as p2run numbers them). */
static void report_mismatch(const coll_plan *p, const plan_blob *all, int algo, int persistent)
{
    if (p->rank != 0)
        return;
    for (int q = 1; q < p->size; q++) {
        char va[40], vb[40];
        const char *what = blob_difference(&all[0], &all[q], algo, va, vb, sizeof va);
        if (what) {
            fprintf(stderr,
                    "p2coll: p2_%s%s: the %s differs between ranks: %s at rank %d, %s at rank %d\n",
                    coll_kind_names[p->kind], persistent ? "_init" : "", what, va,
                    p->comm->world_rank[0], vb, p->comm->world_rank[q]);
            return;
        }
    }
}

tcaresult coll_plan_prepare(coll_plan *p, coll_kind kind, const void *sendbuf, void *recvbuf,
                            size_t count, tcaDataType type, tcaOp op, int root, p2_comm_t comm,
                            int persistent)
{
    memset(p, 0, sizeof *p);
    p2_comm_t c;
    COLL_TRY(coll_comm_get(comm, &c));
    p->comm = c;
    p->rank = c->rank;
    p->size = c->size;
    p->kind = kind;
    p->count = kind == COLL_BARRIER ? 0 : count;
    p->type = kind == COLL_BARRIER ? TCA_BYTE : type;
    p->op = (kind == COLL_REDUCE || kind == COLL_ALLREDUCE) ? op : TCA_OP_SUM;
    p->root = coll_rooted(kind) ? root : 0;
    plan_blob mine = {0};
    mine.status = plan_local(p, sendbuf, recvbuf);
    mine.kind = kind;
    mine.type = p->type;
    mine.op = p->op;
    mine.root = p->root;
    mine.count = p->count;
    mine.targets = p->targets;
    if (p->algo)
        strncpy(mine.algo, p->algo->name, sizeof mine.algo - 1);
    mine.forced = p->forced;
    mine.eligible = mine.status == TCA_SUCCESS ? coll_eligible_mask(p) : 0;
    mine.gpu = p->send.gpu || p->recv.gpu;
    mine.recv = p->recv.bytes ? p->recv.h : (tcaHandle){0};
    mine.scratch = p->scratch.bytes ? p->scratch.h : (tcaHandle){0};
    plan_blob *all = calloc((size_t)p->size, sizeof *all);
    tcaresult r = all ? coll_comm_exchange(c, &mine, all, sizeof mine) : TCA_ERROR_OUT_OF_MEMORY;
    for (int q = 0; r == TCA_SUCCESS && q < p->size; q++)
        if (all[q].status)
            r = (tcaresult)all[q].status;
    int differ = 0, forced = 0;
    uint32_t common = ~0u, gpu = 0;
    for (int q = 0; r == TCA_SUCCESS && q < p->size; q++) {
        if (all[q].kind != mine.kind || all[q].type != mine.type || all[q].op != mine.op ||
            all[q].root != mine.root || all[q].count != mine.count) {
            r = TCA_ERROR_INVALID_ARGUMENT;
            report_mismatch(p, all, 0, persistent);
        }
        differ |= strcmp(all[q].algo, mine.algo) != 0;
        forced |= all[q].forced;
        common &= all[q].eligible;
        gpu |= all[q].gpu;
    }
    if (r == TCA_SUCCESS && differ) {
        /* The ranks' choices differ: their buffers differ in kind (CPU or
         * GPU), which changes costs and eligibility. A forced choice that
         * differs is an argument error; otherwise every rank takes the
         * cheapest algorithm eligible on all of them, with the GPU costs if
         * any rank has GPU buffers, and they exchange again for it. */
        const coll_algorithm *a = forced ? NULL : coll_cheapest(p, common, (int)gpu);
        if (forced) {
            r = TCA_ERROR_INVALID_ARGUMENT;
            report_mismatch(p, all, 1, persistent);
        } else {
            plan_blob again = {0};
            again.status = !a ? TCA_ERROR_NOT_SUPPORTED
                              : a == p->algo ? TCA_SUCCESS : (p->algo = a, plan_algorithm(p));
            again.targets = p->targets;
            again.recv = mine.recv;
            again.scratch = p->scratch.bytes ? p->scratch.h : (tcaHandle){0};
            r = coll_comm_exchange(c, &again, all, sizeof again);
            for (int q = 0; r == TCA_SUCCESS && q < p->size; q++)
                if (all[q].status)
                    r = (tcaresult)all[q].status;
        }
    }
    if (r == TCA_SUCCESS && !(p->peer = calloc((size_t)p->size, sizeof *p->peer)))
        r = TCA_ERROR_OUT_OF_MEMORY;
    if (r == TCA_SUCCESS) {
        for (int q = 0; q < p->size; q++) {
            p->peer[q].recv = all[q].recv;
            p->peer[q].scratch = all[q].scratch;
            if (all[q].targets >> p->rank & 1)
                p->sources |= 1ull << q;
        }
        p->sig = plan_signature(p);
        p->announced = p->recv.bytes ? p->recv.h : (tcaHandle){0};
    }
    free(all);
    if (r != TCA_SUCCESS)
        coll_plan_release(p);
    return r;
}

tcaresult coll_plan_run(coll_plan *p, int after_exchange)
{
    p2_comm_t c = p->comm;
    p->run = ++c->run_seq;
    p->runs++;
    p->has_pending = 0;
    p->ready_seen = 0;
    /* No ready tokens where no rank can still be in an earlier run: right
     * after the preparing exchange, or when the last collective on the comm
     * was a barrier (every rank entered it after leaving its earlier
     * calls) and the plan's buffers are still the exchanged ones, so the
     * peers' handles need no news. */
    int synced = after_exchange || (c->after_barrier && p->fixed_buffers);
    c->after_barrier = p->kind == COLL_BARRIER;
    p->use_ready = !synced && p->kind != COLL_BARRIER && !p->algo->self_synced;
    if (p->kind != COLL_BARRIER && p->bytes == 0)
        return TCA_SUCCESS;
    /* Tell every rank that writes into us that this run may begin. */
    if (p->use_ready)
        COLL_TRY(coll_send_ready(p));
    tcaresult r = p->algo->run(p);
    tcaresult f = coll_flush(p);
    if (p->chain) {
        tcaDescFree(p->chain);
        p->chain = NULL;
    }
    return r != TCA_SUCCESS ? r : f;
}

/* Points a cached plan at this call's buffers: new local handles, which
 * the next ready tokens announce. */
tcaresult coll_plan_rebind(coll_plan *p, const void *sendbuf, void *recvbuf)
{
    coll_plan probe = *p; /* the plan's own buffers stay until this succeeds */
    memset(&probe.send, 0, sizeof probe.send);
    memset(&probe.recv, 0, sizeof probe.recv);
    probe.in_place = 0;
    tcaresult r = plan_buffers(&probe, sendbuf, recvbuf);
    if (r == TCA_SUCCESS && !p->algo->eligible(&probe))
        r = TCA_ERROR_NOT_SUPPORTED; /* e.g. GPU buffers for a host-only algorithm */
    if (r != TCA_SUCCESS) {
        plan_release_buffers(&probe);
        return r;
    }
    plan_release_buffers(p);
    p->send = probe.send;
    p->recv = probe.recv;
    p->in_place = probe.in_place;
    return TCA_SUCCESS;
}

