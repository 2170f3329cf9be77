/*
 * coll_comm.c - communicators: the world's, the sub-cluster's and
 * p2_comm_create's, each
 * member's mailbox of registered host memory, and the PIO exchange over the
 * mailboxes (coll_comm_exchange) that every plan agrees through.
 *
 * Depends on the TCA API (memory, handles, PIO, p2_exchange) and the cost
 * model; p2_comm_free, a collective call (a barrier, then the comm's cached
 * plans dropped), is coll_blocking.c's and releases the comm here.
 */
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "coll.h"
#include "coll_plan.h"
#include "p2_mailbox.h"

struct p2_comm p2_comm_world;
struct p2_comm p2_comm_subcluster;

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
    if (comm == P2_COMM_WORLD || comm == P2_COMM_SUBCLUSTER)
        return 1;
    for (const struct p2_comm *c = live_comms; c; c = c->next_live)
        if (c == comm)
            return 1;
    return 0;
}

/* Sets up P2_COMM_WORLD or P2_COMM_SUBCLUSTER on first use: the job's
 * ranks (on this rank's PEACH2 network), their mailboxes' handles exchanged
 * by PIO. The world of a job spanning several networks cannot be: no PIO or
 * DMA crosses between them (TCA_ERROR_UNREACHABLE on every rank). */
static tcaresult predefined_setup(p2_comm_t comm)
{
    COLL_TRY(tcaInit());
    coll_cost_load();
    int size = p2_size(), me = p2_rank();
    if (size <= 0 || size > P2_COLL_MAX_RANKS || me < 0 || me >= size)
        return TCA_ERROR_DEVICE;
    const int mine = p2_subcluster(me);
    int n = 0, rank = -1, networks = 1;
    uint64_t seen = 1;
    for (int q = 0; q < size; q++) {
        int sc = p2_subcluster(q);
        if (sc == mine) {
            if (q == me)
                rank = n;
            comm->world_rank[n++] = q;
        } else if (sc >= 0 && sc < 64 && !(seen >> sc & 1)) {
            seen |= 1ull << sc;
            networks++;
        }
    }
    if (comm == P2_COMM_WORLD && n != size) {
        static int told;
        if (me == 0 && !told)
            fprintf(stderr, "p2coll: P2_COMM_WORLD: the job's ranks are on %d PEACH2 networks "
                            "(sub-clusters), which no cable joins: TCA_ERROR_UNREACHABLE (run TCA "
                            "collectives on P2_COMM_SUBCLUSTER, each sub-cluster's ranks, and "
                            "combine across sub-clusters with MPI)\n", networks);
        told = 1;
        return TCA_ERROR_UNREACHABLE;
    }
    comm->rank = rank;
    comm->size = n;
    COLL_TRY(mailbox_alloc(comm));
    tcaHandle h;
    COLL_TRY(tcaCreateHandle(&h, comm->mailbox, COLL_MB_BYTES, tcaMemoryCPU));
    /* On one network both are the exchange among every rank. */
    COLL_TRY(comm == P2_COMM_WORLD ? p2_exchange(&h, comm->mailbox_h, sizeof h)
                                   : tca_exchange_subcluster(&h, comm->mailbox_h, sizeof h));
    comm->magic = COLL_COMM_MAGIC;
    comm->ready = 1;
    return TCA_SUCCESS;
}

tcaresult coll_comm_get(p2_comm_t comm, p2_comm_t *out)
{
    if ((comm == P2_COMM_WORLD || comm == P2_COMM_SUBCLUSTER) && !comm->ready)
        COLL_TRY(predefined_setup(comm));
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

tcaresult coll_comm_check_free(p2_comm_t comm)
{
    if (comm == P2_COMM_WORLD || comm == P2_COMM_SUBCLUSTER)
        return TCA_ERROR_INVALID_ARGUMENT;
    if (!comm_live(comm) || comm->magic != COLL_COMM_MAGIC)
        return TCA_ERROR_INVALID_HANDLE;
    return TCA_SUCCESS;
}

void coll_comm_release(p2_comm_t comm)
{
    tcaFree(comm->mailbox, tcaMemoryCPU);
    comm->magic = 0;
    for (struct p2_comm **p = &live_comms; *p; p = &(*p)->next_live)
        if (*p == comm) {
            *p = comm->next_live;
            break;
        }
    free(comm);
}

