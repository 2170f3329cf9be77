/*
 * fmpl_coll.c - communicators, barrier (hardware / binary tree of light
 * syncs, both fmpl_sync.c's), broadcast (binary tree / hardware) and
 * reductions (binary tree; the functions: fmpl_ops.c). Depends on
 * fmpl_sync.c and the units below it.
 *
 * Trees are over positions v relative to the root (v = (pos - root) mod p):
 * the parent of v is (v - 1) / 2, its children 2v + 1 and 2v + 2. E.g. p = 6:
 *
 *            0             broadcast: each node receives from its parent,
 *          /   \           then sends to both children (both kicked, then
 *         1     2          waited for); reduce: the other way round.
 *        / \   /
 *       3   4 5            depth ceil(log2(p + 1)) - 1
 */
#include <stdio.h>
#include <string.h>

#include "fmpl/fmpl_sync.h"

static int pos_rank(const fmpl_comm_state *c, int v, int root) { return c->ranks[(v + root) % c->size]; }

/* A communicator of this process (NULL and *ier set when not). */
static fmpl_comm_state *fmpl_comm_of(const fmpl_comm_t *comm, int *ier)
{
    if (!comm || comm->handle < 0 || comm->handle >= FMPL_MAX_COMMS || !fmpl_g.comm[comm->handle].used ||
        fmpl_g.comm[comm->handle].key != comm->key || fmpl_g.comm[comm->handle].size != comm->size) {
        *ier = FMPL_ERR_COMM;
        return NULL;
    }
    return &fmpl_g.comm[comm->handle];
}

/* ---- Barrier ---------------------------------------------------------------------- */

int fmpl_hw_collectives(const fmpl_comm_t *comm)
{
    return fmpl_g.init && comm == FMPL_COMM_WORLD && fmpl_g.hw_ok;
}

void fmpl_barrier(const fmpl_comm_t *comm, int *ier)
{
    int dummy;
    if (!ier)
        ier = &dummy;
    FMPL_BEGIN();
    fmpl_comm_state *c;
    if (fmpl_ready(ier) && (c = fmpl_comm_of(comm, ier)) != NULL) {
        if (fmpl_hw_collectives(comm)) {
            *ier = fmpl_hw_barrier();
            if (*ier == FMPL_SUCCESS) {
                uint64_t st = fmpl_mmio_read(SR_REG_BAR_STATE(FMPL_HW_COLOR));
                if (SR_STATE_ERROR(st) != SR_OK)
                    *ier = FMPL_ERR_DEVICE;
            }
        } else {
            *ier = fmpl_sw_barrier(c, comm->handle);
        }
    }
    FMPL_END();
}

/* ---- Broadcast ------------------------------------------------------------------------ */

/* `mismatch` (allreduce; NULL otherwise): in, this rank knows the call
 * failed; out, it learned so from its parent (a refusal, or a message of
 * another size than its own), and either way it passed a refusal on to its
 * children instead of the data, so every rank below learns it too. */
static int bcast_tree(void *buf, size_t size, int root, fmpl_comm_state *c, int *mismatch)
{
    const int p = c->size, v = (c->me - root + p) % p;
    fmpl_chan *ch = &fmpl_g.coll;
    int rc = FMPL_SUCCESS;
    if (v > 0) {
        const int parent = pos_rank(c, parent_of(v), root);
        rc = fmpl_chan_recv(ch, buf, size, parent, FMPL_SLOT_BCAST);
        const int other_size =
            rc == FMPL_SUCCESS && fmpl_chan_got(ch, parent, FMPL_SLOT_BCAST) != size;
        if (mismatch && (rc == FMPL_ERR_TRUNCATE || other_size)) {
            *mismatch = 1;
            rc = FMPL_SUCCESS;
        }
    }
    if (mismatch && *mismatch) {
        for (int k = 1; k <= 2 && rc == FMPL_SUCCESS; k++)
            if (2 * v + k < p) {
                int r = fmpl_chan_refuse(ch, pos_rank(c, 2 * v + k, root), FMPL_SLOT_BCAST);
                if (r != FMPL_ERR_TRUNCATE)
                    rc = r;
            }
        return rc;
    }
    int started[2] = {-1, -1};
    for (int k = 1; k <= 2 && rc == FMPL_SUCCESS; k++)
        if (2 * v + k < p) {
            int child = pos_rank(c, 2 * v + k, root);
            rc = fmpl_chan_isend(ch, buf, size, child, FMPL_SLOT_BCAST);
            if (rc == FMPL_SUCCESS)
                started[k - 1] = child;
        }
    for (int k = 0; k < 2; k++)
        if (started[k] >= 0) {
            int r = fmpl_chan_wait_send(ch, started[k], FMPL_SLOT_BCAST);
            if (rc == FMPL_SUCCESS)
                rc = r;
        }
    return rc;
}

static int coll_args(const void *buf, size_t size, int root, const fmpl_comm_t *comm,
                     fmpl_comm_state **c, int *ier)
{
    if (!fmpl_ready(ier) || !(*c = fmpl_comm_of(comm, ier)))
        return 0;
    if (!buf && size) {
        *ier = FMPL_ERR_ARG;
        return 0;
    }
    if (root < 0 || root >= (*c)->size) {
        *ier = FMPL_ERR_RANK;
        return 0;
    }
    if (size && !fmpl_mapped(buf, size)) {
        *ier = FMPL_ERR_NOT_MAPPED;
        return 0;
    }
    return 1;
}

void fmpl_bcast(void *buf, size_t size, int root, const fmpl_comm_t *comm, int *ier)
{
    int dummy;
    if (!ier)
        ier = &dummy;
    FMPL_BEGIN();
    fmpl_comm_state *c;
    if (coll_args(buf, size, root, comm, &c, ier))
        *ier = bcast_tree(buf, size, root, c, NULL);
    FMPL_END();
}

void fmpl_hbcast(void *buf, size_t size, int root, const fmpl_comm_t *comm, int *ier)
{
    int dummy;
    if (!ier)
        ier = &dummy;
    FMPL_BEGIN();
    fmpl_comm_state *c;
    if (!coll_args(buf, size, root, comm, &c, ier))
        goto out;
    if (!fmpl_hw_collectives(comm)) {
        *ier = FMPL_ERR_HW_NOT_ALLOWED;
        goto out;
    }
    uint64_t off = buf ? fmpl_bus(buf, size) - fmpl_g.rt->host.bus : 0;
    const int me = c->me;
    if (me != root) {
        fmpl_mmio_write(SR_REG_BCAST_ARM(FMPL_HW_COLOR), SR_ARM(FMPL_AREA_USER, off));
        fmpl_mmio_write(SR_REG_BCAST_ARM_SIZE(FMPL_HW_COLOR), size);
    }
    /* Every member armed before the root sends. */
    *ier = fmpl_hw_barrier();
    if (*ier != FMPL_SUCCESS)
        goto out;
    if (me == root) {
        sr_tcw *t = fmpl_g.bcast_tcw;
        fmpl_tcw_set(t, 0, FMPL_HW_COLOR, size ? fmpl_bus(buf, size) : 0, size, FMPL_AREA_USER, off, 0,
                     0, 0);
        *ier = fmpl_tcw_run(t, SR_REG_BCAST_KICK) == SR_OK ? FMPL_SUCCESS : FMPL_ERR_DEVICE;
    } else {
        uint64_t n = ++fmpl_g.hw_bcasts;
        if (fmpl_g.dev->ops->wait_reg(fmpl_g.dev, SR_BAR_REGS, SR_REG_BCAST_STATE(FMPL_HW_COLOR),
                                      SR_STATE_COUNT_MASK, n & SR_STATE_COUNT_MASK) != P2_WAIT_OK) {
            *ier = FMPL_ERR_DEVICE;
            goto out;
        }
        uint64_t st = fmpl_mmio_read(SR_REG_BCAST_STATE(FMPL_HW_COLOR));
        switch (SR_STATE_ERROR(st)) {
        case SR_OK: *ier = FMPL_SUCCESS; break;
        case SR_ERR_BCAST_OFFSET:
        case SR_ERR_BCAST_SIZE: *ier = FMPL_ERR_HBCAST_OFFSET; break;
        default: *ier = FMPL_ERR_DEVICE; break;
        }
    }
out:
    FMPL_END();
}

/* ---- Reductions --------------------------------------------------------------------------- */

/* The element size of one of the published functions, 0 for anything else. */
size_t fmpl_func_elem(fmpl_func_t *f);

/*
 * Counts that differ between ranks. Every edge of the tree compares the two
 * ranks' sizes at no cost: the parent's receive has room for its own count,
 * so a larger message is refused on both sides (FMPL_ERR_TRUNCATE) and a
 * smaller one shows in the bytes received. A rank that sees a difference, or
 * learns of one from a child, still takes every step, but sends its parent a
 * refusal instead of data; the refusals reach the root, and the broadcast of
 * an allreduce carries them down to every rank (bcast_tree). So every rank
 * of an allreduce, and of a reduce the root and the ranks between it and a
 * difference, return FMPL_ERR_ARG; nobody waits for a message that never
 * comes. The rank that sees a difference names both counts on stderr.
 */
static void report_counts(const char *call, int other, size_t other_bytes, size_t elem, int count)
{
    fprintf(stderr, "%s: rank %d: the ranks passed different counts: %d here, %zu%s at rank %d\n",
            call, fmpl_g.rank, count, other_bytes / elem, other_bytes % elem ? "+" : "", other);
}

static int reduce_tree(const char *call, void *buf, int count, fmpl_func_t *func, size_t elem,
                       int root, fmpl_comm_state *c, void *work, int *mismatch)
{
    const int p = c->size, v = (c->me - root + p) % p;
    const size_t bytes = (size_t)count * elem;
    fmpl_chan *ch = &fmpl_g.coll;
    int rc = FMPL_SUCCESS;
    for (int k = 1; k <= 2 && rc == FMPL_SUCCESS; k++)
        if (2 * v + k < p) {
            const int child = pos_rank(c, 2 * v + k, root);
            rc = fmpl_chan_recv(ch, work, bytes, child, FMPL_SLOT_REDUCE);
            if (rc == FMPL_ERR_TRUNCATE) {
                *mismatch = 1; /* the child said so: it named the counts, or heard of them */
                rc = FMPL_SUCCESS;
            } else if (rc == FMPL_SUCCESS && fmpl_chan_got(ch, child, FMPL_SLOT_REDUCE) != bytes) {
                report_counts(call, child, fmpl_chan_got(ch, child, FMPL_SLOT_REDUCE), elem, count);
                *mismatch = 1;
            } else if (rc == FMPL_SUCCESS && !*mismatch) {
                func(buf, work, count);
            }
        }
    if (v > 0 && rc == FMPL_SUCCESS) {
        const int parent = pos_rank(c, parent_of(v), root);
        if (*mismatch) {
            rc = fmpl_chan_refuse(ch, parent, FMPL_SLOT_REDUCE);
        } else {
            rc = fmpl_chan_send(ch, buf, bytes, parent, FMPL_SLOT_REDUCE);
            if (rc == FMPL_ERR_TRUNCATE) {
                size_t i = (size_t)parent * (size_t)ch->count + FMPL_SLOT_REDUCE;
                report_counts(call, parent, ch->ma[i].size, elem, count);
                *mismatch = 1;
            }
        }
        if (rc == FMPL_ERR_TRUNCATE)
            rc = FMPL_SUCCESS;
    }
    return rc;
}

static int reduce_args(void *buf, int count, fmpl_func_t *func, int root, const fmpl_comm_t *comm,
                       void *work, fmpl_comm_state **c, size_t *elem, int *ier)
{
    if (!fmpl_ready(ier) || !(*c = fmpl_comm_of(comm, ier)))
        return 0;
    if (count < 0 || !buf || !work) {
        *ier = FMPL_ERR_ARG;
        return 0;
    }
    if (!(*elem = fmpl_func_elem(func))) {
        *ier = FMPL_ERR_FUNC;
        return 0;
    }
    if (root < 0 || root >= (*c)->size) {
        *ier = FMPL_ERR_RANK;
        return 0;
    }
    size_t bytes = (size_t)count * *elem;
    if (bytes && (!fmpl_mapped(buf, bytes) || !fmpl_mapped(work, bytes))) {
        *ier = FMPL_ERR_NOT_MAPPED;
        return 0;
    }
    return 1;
}

void fmpl_reduce(void *buf, int count, fmpl_func_t *func, int root, const fmpl_comm_t *comm,
                 void *work, int *ier)
{
    int dummy;
    if (!ier)
        ier = &dummy;
    FMPL_BEGIN();
    fmpl_comm_state *c;
    size_t elem;
    int mismatch = 0;
    if (reduce_args(buf, count, func, root, comm, work, &c, &elem, ier)) {
        *ier = reduce_tree("fmpl_reduce", buf, count, func, elem, root, c, work, &mismatch);
        if (*ier == FMPL_SUCCESS && mismatch)
            *ier = FMPL_ERR_ARG;
    }
    FMPL_END();
}

void fmpl_allreduce(void *buf, int count, fmpl_func_t *func, const fmpl_comm_t *comm, void *work,
                    int *ier)
{
    int dummy;
    if (!ier)
        ier = &dummy;
    FMPL_BEGIN();
    fmpl_comm_state *c;
    size_t elem;
    int mismatch = 0;
    if (reduce_args(buf, count, func, 0, comm, work, &c, &elem, ier)) {
        *ier = reduce_tree("fmpl_allreduce", buf, count, func, elem, 0, c, work, &mismatch);
        if (*ier == FMPL_SUCCESS)
            *ier = bcast_tree(buf, (size_t)count * elem, 0, c, &mismatch);
        if (*ier == FMPL_SUCCESS && mismatch)
            *ier = FMPL_ERR_ARG;
    }
    FMPL_END();
}

/* ---- Communicators -------------------------------------------------------------------------- */

void fmpl_comm_rank(const fmpl_comm_t *comm, int *rank, int *ier)
{
    int dummy;
    if (!ier)
        ier = &dummy;
    fmpl_comm_state *c;
    if (!fmpl_ready(ier) || !(c = fmpl_comm_of(comm, ier)))
        return;
    if (!rank) {
        *ier = FMPL_ERR_ARG;
        return;
    }
    *rank = c->me;
    *ier = FMPL_SUCCESS;
}

/* What a member tells the first member: its key, a digest of its member
 * list, and which communicator handles it has free. */
typedef struct comm_vote {
    int64_t key;
    uint64_t digest;
    uint64_t free_handles;
    int64_t verdict; /* the first member's answer: a handle, or an error */
} comm_vote;

void fmpl_comm_create(fmpl_comm_t *comm, int key, int *ier)
{
    int dummy;
    if (!ier)
        ier = &dummy;
    FMPL_BEGIN();
    if (!fmpl_ready(ier))
        goto out;
    if (!comm || comm->size < 1 || comm->size > fmpl_g.size) {
        *ier = FMPL_ERR_ARG;
        goto out;
    }
    int me = -1;
    for (int i = 0; i < comm->size; i++) {
        if (comm->ranks[i] < 0 || comm->ranks[i] >= fmpl_g.size || (i && comm->ranks[i] <= comm->ranks[i - 1])) {
            *ier = FMPL_ERR_RANK;
            goto out;
        }
        if (comm->ranks[i] == fmpl_g.rank)
            me = i;
    }
    if (me < 0) {
        *ier = FMPL_ERR_RANK;
        goto out;
    }
    uint64_t digest = 1469598103934665603ull;
    for (int i = 0; i < comm->size; i++)
        digest = (digest ^ (uint64_t)comm->ranks[i]) * 1099511628211ull;
    uint64_t free_handles = 0;
    for (int h = 1; h < FMPL_MAX_COMMS; h++)
        if (!fmpl_g.comm[h].used)
            free_handles |= 1ull << h;
    /* The vote travels in node memory: the channel moves it zero copy. */
    comm_vote *v = fmpl_malloc(sizeof(comm_vote) * 2);
    if (!v) {
        *ier = FMPL_ERR_NO_MEMORY;
        goto out;
    }
    v[0] = (comm_vote){key, digest, free_handles, 0};
    fmpl_chan *ch = &fmpl_g.coll;
    int rc = FMPL_SUCCESS;
    fmpl_comm_state tmp = {.used = 1, .key = key, .size = comm->size, .me = me};
    memcpy(tmp.ranks, comm->ranks, sizeof tmp.ranks);
    if (me == 0) {
        int64_t verdict = 0;
        uint64_t common = free_handles;
        for (int i = 1; i < comm->size && rc == FMPL_SUCCESS; i++) {
            rc = fmpl_chan_recv(ch, &v[1], sizeof v[1], comm->ranks[i], FMPL_SLOT_COMM);
            if (rc == FMPL_SUCCESS) {
                if (v[1].key != key || v[1].digest != digest)
                    verdict = FMPL_ERR_KEY_MISMATCH;
                common &= v[1].free_handles;
            }
        }
        if (verdict == 0) {
            verdict = FMPL_ERR_TOO_MANY;
            for (int h = 1; h < FMPL_MAX_COMMS; h++)
                if (common & (1ull << h)) {
                    verdict = h;
                    break;
                }
        }
        v[0].verdict = verdict;
    } else {
        rc = fmpl_chan_send(ch, &v[0], sizeof v[0], comm->ranks[0], FMPL_SLOT_COMM);
    }
    if (rc == FMPL_SUCCESS)
        rc = bcast_tree(&v[0].verdict, sizeof v[0].verdict, 0, &tmp, NULL);
    int64_t verdict = v[0].verdict;
    fmpl_free(v);
    if (rc != FMPL_SUCCESS) {
        *ier = rc;
    } else if (verdict < 0) {
        *ier = (int)verdict;
    } else {
        fmpl_g.comm[verdict] = tmp;
        comm->key = key;
        comm->handle = (int)verdict;
        *ier = FMPL_SUCCESS;
    }
out:
    FMPL_END();
}
