/*
 * coll_comm.c - communicators, the PIO exchange over their mailboxes, and the
 * public calls of p2coll.h: argument checks, the agreement between ranks
 * (one exchange carrying every rank's status, arguments and handles), plans,
 * persistent requests.
 *
 * A collective call:
 *   1. local checks (types, op, root, buffers: registered?), the algorithm
 *      choice, scratch allocation, a dry pass of the algorithm recording
 *      which ranks this rank writes into;
 *   2. one exchange over the comm: [status, arguments, algorithm, recv and
 *      scratch handles, targets]; every rank derives the same verdict (the
 *      status of the lowest rank with one, else INVALID_ARGUMENT if the
 *      arguments differ) and the ranks that write into it;
 *   3. the run (coll_transport.c: ready words on reruns).
 */
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "coll.h"
#include "rt/rt.h"
#include "tca_internal.h" /* tca_region_room */

struct p2_comm p2_comm_world;

/* ---- Mailbox exchange ----------------------------------------------------- */

static size_t exchange_slot(uint64_t seq, int rank)
{
    return COLL_MB_EXCHANGE + ((size_t)(seq % 2u) * P2_COLL_MAX_RANKS + (size_t)rank) *
                                  COLL_SLOT_BYTES;
}

/* As p2_exchange (two banks by sequence number; the word after the blob is
 * written last in the same PIO stream), over the comm's own mailboxes. */
tcaresult coll_comm_exchange(p2_comm_t c, const void *mine, void *all, size_t bytes)
{
    uint64_t seq = ++c->exchange_seq;
    size_t off = exchange_slot(seq, c->rank);
    for (int i = 1; i <= c->size; i++) {
        int q = (c->rank + i) % c->size;
        tcaPIOHandle pio;
        COLL_TRY(tcaSetPIORegion(&pio, &c->mailbox_h[q], off, COLL_SLOT_BYTES));
        COLL_TRY(tcaSendPIO(&pio, 0, mine, bytes));
        COLL_TRY(tcaSendPIO(&pio, COLL_SLOT_BYTES - 8u, &seq, sizeof seq));
    }
    COLL_TRY(tcaSendPIOCommit());
    for (int q = 0; q < c->size; q++) {
        const uint8_t *slot = c->mailbox + exchange_slot(seq, q);
        COLL_TRY(p2_wait_u64((const volatile uint64_t *)(slot + COLL_SLOT_BYTES - 8u), seq));
        memcpy((uint8_t *)all + (size_t)q * bytes, slot, bytes);
    }
    return TCA_SUCCESS;
}

static tcaresult mailbox_alloc(p2_comm_t c)
{
    void *mb = NULL;
    COLL_TRY(tcaMalloc(&mb, COLL_MB_BYTES, tcaMemoryCPU));
    memset(mb, 0, COLL_MB_BYTES);
    c->mailbox = mb;
    return TCA_SUCCESS;
}

/* Comms made by p2_comm_create and not yet freed. A handle is looked up here
 * before it is read, so a copy of a freed one is refused without touching
 * freed memory (a program has a few comms: the scan costs nothing). */
static struct p2_comm *live_comms;

static int comm_live(p2_comm_t comm)
{
    if (comm == P2_COMM_WORLD)
        return 1;
    for (const struct p2_comm *c = live_comms; c; c = c->next_live)
        if (c == comm)
            return 1;
    return 0;
}

tcaresult coll_comm_get(p2_comm_t comm, p2_comm_t *out)
{
    if (comm == P2_COMM_WORLD && !comm->ready) {
        COLL_TRY(tcaInit());
        coll_cost_load();
        int size = p2_size();
        if (size <= 0 || size > P2_COLL_MAX_RANKS)
            return TCA_ERROR_DEVICE;
        comm->rank = p2_rank();
        comm->size = size;
        for (int i = 0; i < size; i++)
            comm->world_rank[i] = i;
        COLL_TRY(mailbox_alloc(comm));
        tcaHandle h;
        COLL_TRY(tcaCreateHandle(&h, comm->mailbox, COLL_MB_BYTES, tcaMemoryCPU));
        COLL_TRY(p2_exchange(&h, comm->mailbox_h, sizeof h));
        comm->magic = COLL_COMM_MAGIC;
        comm->ready = 1;
    }
    if (!comm_live(comm) || comm->magic != COLL_COMM_MAGIC || !comm->ready)
        return TCA_ERROR_INVALID_HANDLE;
    *out = comm;
    return TCA_SUCCESS;
}

int p2_comm_rank(p2_comm_t comm)
{
    p2_comm_t c;
    return coll_comm_get(comm, &c) == TCA_SUCCESS ? c->rank : -1;
}

int p2_comm_size(p2_comm_t comm)
{
    p2_comm_t c;
    return coll_comm_get(comm, &c) == TCA_SUCCESS ? c->size : -1;
}

static void plan_cache_drop(p2_comm_t comm);

typedef struct comm_blob {
    int32_t status, n;
    uint64_t list_hash;
    tcaHandle mailbox;
} comm_blob;

tcaresult p2_comm_create(p2_comm_t parent, const int *ranks, int n, p2_comm_t *newcomm)
{
    p2_comm_t pc;
    COLL_TRY(coll_comm_get(parent, &pc));
    comm_blob mine = {0};
    int me = -1;
    uint64_t hash = 1469598103934665603ull;
    if (!ranks || !newcomm || n < 1 || n > pc->size)
        mine.status = TCA_ERROR_INVALID_ARGUMENT;
    else {
        uint64_t seen = 0;
        for (int i = 0; i < n; i++) {
            if (ranks[i] < 0 || ranks[i] >= pc->size || (seen >> ranks[i] & 1)) {
                mine.status = TCA_ERROR_INVALID_ARGUMENT;
                break;
            }
            seen |= 1ull << ranks[i];
            hash = (hash ^ (uint64_t)ranks[i]) * 1099511628211ull;
            if (ranks[i] == pc->rank)
                me = i;
        }
    }
    mine.n = n;
    mine.list_hash = hash;
    p2_comm_t c = NULL;
    if (mine.status == TCA_SUCCESS && me >= 0) {
        c = calloc(1, sizeof *c);
        if (!c)
            mine.status = TCA_ERROR_OUT_OF_MEMORY;
        else if ((mine.status = mailbox_alloc(c)) == TCA_SUCCESS)
            mine.status = tcaCreateHandle(&mine.mailbox, c->mailbox, COLL_MB_BYTES, tcaMemoryCPU);
    }
    comm_blob all[P2_COLL_MAX_RANKS];
    tcaresult r = coll_comm_exchange(pc, &mine, all, sizeof mine);
    for (int q = 0; r == TCA_SUCCESS && q < pc->size; q++) {
        if (all[q].status)
            r = (tcaresult)all[q].status;
        else if (all[q].n != n || all[q].list_hash != hash)
            r = TCA_ERROR_INVALID_ARGUMENT;
    }
    if (r != TCA_SUCCESS || me < 0) {
        if (c) {
            if (c->mailbox)
                tcaFree(c->mailbox, tcaMemoryCPU);
            free(c);
        }
        if (newcomm)
            *newcomm = P2_COMM_NULL;
        return r;
    }
    c->rank = me;
    c->size = n;
    for (int i = 0; i < n; i++) {
        c->world_rank[i] = pc->world_rank[ranks[i]];
        c->mailbox_h[i] = all[ranks[i]].mailbox;
    }
    c->magic = COLL_COMM_MAGIC;
    c->ready = 1;
    c->next_live = live_comms;
    live_comms = c;
    *newcomm = c;
    return TCA_SUCCESS;
}

tcaresult p2_comm_free(p2_comm_t *comm)
{
    if (!comm)
        return TCA_ERROR_INVALID_ARGUMENT;
    if (*comm == P2_COMM_NULL)
        return TCA_SUCCESS;
    if (*comm == P2_COMM_WORLD)
        return TCA_ERROR_INVALID_ARGUMENT;
    if (!comm_live(*comm) || (*comm)->magic != COLL_COMM_MAGIC)
        return TCA_ERROR_INVALID_HANDLE;
    /* Nobody writes into this mailbox once every member has left the last
     * collective on it; a barrier makes sure. */
    tcaresult r = p2_barrier(*comm);
    plan_cache_drop(*comm);
    tcaFree((*comm)->mailbox, tcaMemoryCPU);
    (*comm)->magic = 0;
    for (struct p2_comm **p = &live_comms; *p; p = &(*p)->next_live)
        if (*p == *comm) {
            *p = (*comm)->next_live;
            break;
        }
    free(*comm);
    *comm = P2_COMM_NULL;
    return r;
}

/* ---- Plans ------------------------------------------------------------------ */

/* A request handle outlives p2_request_free: the plan goes, the few bytes
 * of the handle stay, marked dead, so a copy of a freed handle is refused
 * without reading freed memory and can never name a newer request that
 * malloc placed at the same address. Dead handles stay on a list: memory
 * kept on purpose, not leaked. */
struct p2_request {
    uint32_t magic; /* REQUEST_LIVE until freed */
    int started;
    coll_plan *plan;
    struct p2_request *next_dead;
};
#define REQUEST_LIVE 0x70327271u
#define REQUEST_DEAD 0x64656164u
static struct p2_request *dead_requests;

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

static void plan_release(coll_plan *p)
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

static int rooted(coll_kind k)
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
    if (rooted(k) && (p->root < 0 || p->root >= p->size))
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

static tcaresult plan_prepare(coll_plan *p, coll_kind kind, const void *sendbuf, void *recvbuf,
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
    p->root = rooted(kind) ? root : 0;
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
        plan_release(p);
    return r;
}

static tcaresult plan_run(coll_plan *p, int after_exchange)
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

/* ---- Blocking calls ----------------------------------------------------------
 *
 * MPI exchanges nothing per call: the arguments must match, and the library
 * trusts them. So a blocking call reuses the plan of an earlier call with the
 * same (communicator, collective, count, type, op, root): its algorithm,
 * scratch and the peers' scratch handles. Only the first such call pays the
 * exchange; later ones are the algorithm alone, with the ready tokens that
 * carry each rank's current recv handle (every rank may pass other buffers
 * each time) and the arguments' signature (a rank whose call differs from its
 * peer's gets TCA_ERROR_INVALID_ARGUMENT). Every rank makes the same calls in
 * the same order, so every rank hits and misses this cache alike.
 * P2_COLL_CHECK=1 makes every call exchange and check its arguments as the
 * first does (a rank whose call differs so that the others hit while it
 * misses waits for them in the exchange: the simulator's deadlock diagnosis
 * names the calls). */
#define PLAN_CACHE 8

typedef struct cached_plan {
    int valid;
    uint64_t used; /* for least-recently-used replacement */
    coll_kind kind;
    size_t count;
    tcaDataType type;
    tcaOp op;
    int root;
    int kinds;       /* buffer_kinds */
    char forced[24]; /* P2_COLL_<COLLECTIVE> when the plan was made */
    const void *sendbuf, *recvbuf; /* as the plan's buffers were given */
    coll_plan plan;
} cached_plan;

static cached_plan plan_cache[PLAN_CACHE];
static uint64_t plan_cache_clock;

static int check_every_call(void)
{
    static int v = -1;
    if (v < 0) {
        const char *e = getenv("P2_COLL_CHECK");
        v = e && *e && strcmp(e, "0") != 0;
    }
    return v;
}

static void plan_cache_drop(p2_comm_t comm)
{
    for (int i = 0; i < PLAN_CACHE; i++)
        if (plan_cache[i].valid && plan_cache[i].plan.comm == comm) {
            plan_release(&plan_cache[i].plan);
            plan_cache[i].valid = 0;
        }
}

/* Points a cached plan at this call's buffers: new local handles, which
 * the next ready tokens announce. */
static tcaresult plan_rebind(coll_plan *p, const void *sendbuf, void *recvbuf)
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

/* Whether GPU memory is involved: a plan's algorithm was chosen for its
 * buffers (some run on host memory only), so a change makes a new plan, on
 * every rank alike when the program changes its buffers alike. (In place or
 * not may differ between ranks and calls: it is only a rebind.) */
static int buffer_kinds(const void *sendbuf, const void *recvbuf)
{
    int s = sendbuf && sendbuf != P2_IN_PLACE ? coll_memory_kind(sendbuf, 1) : -1;
    int r = recvbuf && recvbuf != P2_IN_PLACE ? coll_memory_kind(recvbuf, 1) : -1;
    return s == tcaMemoryGPU || r == tcaMemoryGPU;
}

static void set_activity(const char *call)
{
    p2_rt *rt = p2_rt_get();
    if (!rt || !rt->job)
        return;
    p2_job_rank *slot = &rt->job->ranks[rt->rank]; /* the diagnosis reads lane 0's */
    if (call) {
        snprintf(slot->mpi_wait, sizeof slot->mpi_wait, "%s", call);
        p2_st_sc(&slot->mpi_since_ps, p2_rt_clock_ps(rt));
    } else
        slot->mpi_wait[0] = '\0';
}

static tcaresult blocking(coll_kind kind, const void *sendbuf, void *recvbuf, size_t count,
                          tcaDataType type, tcaOp op, int root, p2_comm_t comm)
{
    p2_rt_api_begin();
    char call[40];
    snprintf(call, sizeof call, "p2_%s (count %zu, root %d)", coll_kind_names[kind], count, root);
    set_activity(call);
    tcaresult r = TCA_SUCCESS;
    p2_comm_t c;
    cached_plan *hit = NULL, *victim = NULL;
    if (kind == COLL_BARRIER)
        count = 0, type = TCA_BYTE, root = 0;
    if (!rooted(kind))
        root = 0;
    if (kind != COLL_REDUCE && kind != COLL_ALLREDUCE)
        op = TCA_OP_SUM;
    int kinds = buffer_kinds(sendbuf, recvbuf);
    char forced[24];
    coll_forced_name(kind, forced, sizeof forced);
    if (!check_every_call() && coll_comm_get(comm, &c) == TCA_SUCCESS) {
        for (int i = 0; i < PLAN_CACHE; i++) {
            cached_plan *e = &plan_cache[i];
            if (e->valid && e->plan.comm == c && e->kind == kind && e->count == count &&
                e->type == type && e->op == op && e->root == root && e->kinds == kinds &&
                strcmp(e->forced, forced) == 0)
                hit = e;
            if (!victim || (victim->valid && (!e->valid || e->used < victim->used)))
                victim = e;
        }
    }
    if (hit) {
        hit->used = ++plan_cache_clock;
        if (sendbuf != hit->sendbuf || recvbuf != hit->recvbuf) {
            r = plan_rebind(&hit->plan, sendbuf, recvbuf);
            hit->sendbuf = sendbuf;
            hit->recvbuf = recvbuf;
            if (r != TCA_SUCCESS)
                hit->sendbuf = hit->recvbuf = NULL; /* rebind again next time */
        }
        if (r == TCA_SUCCESS)
            r = plan_run(&hit->plan, 0);
    } else {
        coll_plan p;
        r = plan_prepare(&p, kind, sendbuf, recvbuf, count, type, op, root, comm, 0);
        if (r == TCA_SUCCESS) {
            r = plan_run(&p, 1);
            if (r == TCA_SUCCESS && victim) {
                if (victim->valid)
                    plan_release(&victim->plan);
                *victim = (cached_plan){1,     ++plan_cache_clock, kind, count, type, op, root,
                                        kinds, "",      sendbuf,           recvbuf, p};
                memcpy(victim->forced, forced, sizeof forced);
            } else
                plan_release(&p);
        }
    }
    set_activity(NULL);
    p2_rt_api_end();
    return r;
}

tcaresult p2_barrier(p2_comm_t comm)
{
    return blocking(COLL_BARRIER, NULL, NULL, 0, TCA_BYTE, TCA_OP_SUM, 0, comm);
}
tcaresult p2_bcast(void *buf, size_t count, tcaDataType type, int root, p2_comm_t comm)
{
    return blocking(COLL_BCAST, buf, buf, count, type, TCA_OP_SUM, root, comm);
}
tcaresult p2_scatter(const void *sendbuf, void *recvbuf, size_t count, tcaDataType type,
                     int root, p2_comm_t comm)
{
    return blocking(COLL_SCATTER, sendbuf, recvbuf, count, type, TCA_OP_SUM, root, comm);
}
tcaresult p2_gather(const void *sendbuf, void *recvbuf, size_t count, tcaDataType type,
                    int root, p2_comm_t comm)
{
    return blocking(COLL_GATHER, sendbuf, recvbuf, count, type, TCA_OP_SUM, root, comm);
}
tcaresult p2_reduce(const void *sendbuf, void *recvbuf, size_t count, tcaDataType type,
                    tcaOp op, int root, p2_comm_t comm)
{
    return blocking(COLL_REDUCE, sendbuf, recvbuf, count, type, op, root, comm);
}
tcaresult p2_allgather(const void *sendbuf, void *recvbuf, size_t count, tcaDataType type,
                       p2_comm_t comm)
{
    return blocking(COLL_ALLGATHER, sendbuf, recvbuf, count, type, TCA_OP_SUM, 0, comm);
}
tcaresult p2_allreduce(const void *sendbuf, void *recvbuf, size_t count, tcaDataType type,
                       tcaOp op, p2_comm_t comm)
{
    return blocking(COLL_ALLREDUCE, sendbuf, recvbuf, count, type, op, 0, comm);
}

/* ---- Persistent ------------------------------------------------------------- */

static tcaresult persistent(coll_kind kind, const void *sendbuf, void *recvbuf, size_t count,
                            tcaDataType type, tcaOp op, int root, p2_comm_t comm,
                            p2_request_t *req)
{
    if (!req)
        return TCA_ERROR_INVALID_ARGUMENT;
    *req = NULL;
    struct p2_request *q = calloc(1, sizeof *q);
    coll_plan *plan = calloc(1, sizeof *plan);
    if (!q || !plan) {
        free(q);
        free(plan);
        return TCA_ERROR_OUT_OF_MEMORY;
    }
    p2_rt_api_begin();
    tcaresult r = plan_prepare(plan, kind, sendbuf, recvbuf, count, type, op, root, comm, 1);
    p2_rt_api_end();
    if (r != TCA_SUCCESS) {
        free(plan);
        free(q);
        return r;
    }
    plan->status = TCA_ERROR_INVALID_HANDLE;
    plan->fixed_buffers = 1;
    *q = (struct p2_request){.magic = REQUEST_LIVE, .plan = plan};
    *req = q;
    return TCA_SUCCESS;
}

/* The request's plan; NULL for NULL or a freed request. */
static coll_plan *request_plan(p2_request_t req)
{
    return req && req->magic == REQUEST_LIVE ? req->plan : NULL;
}

tcaresult p2_barrier_init(p2_comm_t comm, p2_request_t *req)
{
    return persistent(COLL_BARRIER, NULL, NULL, 0, TCA_BYTE, TCA_OP_SUM, 0, comm, req);
}
tcaresult p2_bcast_init(void *buf, size_t count, tcaDataType type, int root, p2_comm_t comm,
                        p2_request_t *req)
{
    return persistent(COLL_BCAST, buf, buf, count, type, TCA_OP_SUM, root, comm, req);
}
tcaresult p2_scatter_init(const void *sendbuf, void *recvbuf, size_t count, tcaDataType type,
                          int root, p2_comm_t comm, p2_request_t *req)
{
    return persistent(COLL_SCATTER, sendbuf, recvbuf, count, type, TCA_OP_SUM, root, comm, req);
}
tcaresult p2_gather_init(const void *sendbuf, void *recvbuf, size_t count, tcaDataType type,
                         int root, p2_comm_t comm, p2_request_t *req)
{
    return persistent(COLL_GATHER, sendbuf, recvbuf, count, type, TCA_OP_SUM, root, comm, req);
}
tcaresult p2_reduce_init(const void *sendbuf, void *recvbuf, size_t count, tcaDataType type,
                         tcaOp op, int root, p2_comm_t comm, p2_request_t *req)
{
    return persistent(COLL_REDUCE, sendbuf, recvbuf, count, type, op, root, comm, req);
}
tcaresult p2_allgather_init(const void *sendbuf, void *recvbuf, size_t count,
                            tcaDataType type, p2_comm_t comm, p2_request_t *req)
{
    return persistent(COLL_ALLGATHER, sendbuf, recvbuf, count, type, TCA_OP_SUM, 0, comm, req);
}
tcaresult p2_allreduce_init(const void *sendbuf, void *recvbuf, size_t count,
                            tcaDataType type, tcaOp op, p2_comm_t comm, p2_request_t *req)
{
    return persistent(COLL_ALLREDUCE, sendbuf, recvbuf, count, type, op, 0, comm, req);
}

tcaresult p2_start(p2_request_t req)
{
    coll_plan *plan = request_plan(req);
    if (!plan || !plan->algo)
        return TCA_ERROR_INVALID_HANDLE;
    p2_rt_api_begin();
    plan->status = plan_run(plan, 0);
    p2_rt_api_end();
    req->started = 1;
    return plan->status;
}

tcaresult p2_wait(p2_request_t req)
{
    coll_plan *plan = request_plan(req);
    if (!plan || !plan->algo || !req->started)
        return TCA_ERROR_INVALID_HANDLE;
    return plan->status;
}

tcaresult p2_request_free(p2_request_t *req)
{
    if (!req)
        return TCA_ERROR_INVALID_ARGUMENT;
    if (!*req)
        return TCA_SUCCESS;
    coll_plan *plan = request_plan(*req);
    if (!plan)
        return TCA_ERROR_INVALID_HANDLE;
    plan_release(plan);
    free(plan);
    **req = (struct p2_request){.magic = REQUEST_DEAD, .next_dead = dead_requests};
    dead_requests = *req;
    *req = NULL;
    return TCA_SUCCESS;
}

const char *p2_request_algorithm(p2_request_t req)
{
    coll_plan *plan = request_plan(req);
    return plan && plan->algo ? plan->algo->name : "";
}
