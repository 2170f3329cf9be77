/*
 * p2mpi_coll_move.c - the collective algorithms that move data without
 * reducing it: barrier, bcast, gather and scatter (binomial and direct),
 * allgather, alltoall (selection and thresholds: p2mpi_coll_internal.h).
 * Depends on p2mpi_coll_base.c and the units below it.
 */
#define _GNU_SOURCE
#include "p2mpi_coll_internal.h"

#include <stdlib.h>
#include <string.h>

/* ---- Barrier ---------------------------------------------------------------- */

void barrier(pm_comm *c)
{
    char x = 0, y;
    for (int mask = 1; mask < c->size; mask <<= 1)
        bsendrecv(&x, 0, (c->rank + mask) % c->size, &y, 0,
                  (c->rank - mask + c->size) % c->size, c);
}

/* ---- Bcast (bytes) -------------------------------------------------------------- */

static void bcast_binomial(char *b, size_t n, int root, pm_comm *c)
{
    int p = c->size, rel = (c->rank - root + p) % p, mask = 1;
    while (mask < p) {
        if (rel & mask) {
            brecv_t(b, n, (c->rank - mask + p) % p, PM_TAG_BCAST(root), c);
            break;
        }
        mask <<= 1;
    }
    for (mask >>= 1; mask > 0; mask >>= 1)
        if (rel + mask < p)
            bsend_t(b, n, (c->rank + mask) % p, PM_TAG_BCAST(root), c);
}

/* van de Geijn: the root scatters n/p pieces down a binomial tree, then a
 * ring allgather completes every rank's copy. */
static void bcast_scatter_ring(char *b, size_t n, int root, pm_comm *c)
{
    int p = c->size, rel = (c->rank - root + p) % p;
    size_t piece = (n + (size_t)p - 1) / (size_t)p;
#define LO(r) ((size_t)(r) * piece < n ? (size_t)(r) * piece : n)
#define HI(r, k) (LO((r) + (k)))
    /* scatter: relative rank r ends with pieces [r, r + subtree) */
    int mask = 1;
    while (mask < p) {
        if (rel & mask) {
            int src = (c->rank - mask + p) % p;
            int span = mask < p - rel ? mask : p - rel;
            brecv_t(b + LO(rel), HI(rel, span) - LO(rel), src, PM_TAG_BCAST(root), c);
            break;
        }
        mask <<= 1;
    }
    for (mask >>= 1; mask > 0; mask >>= 1)
        if (rel + mask < p) {
            int child = rel + mask;
            int span = mask < p - child ? mask : p - child;
            bsend_t(b + LO(child), HI(child, span) - LO(child), (c->rank + mask) % p,
                    PM_TAG_BCAST(root), c);
        }
    /* ring allgather of the pieces, in relative ranks */
    int left = (c->rank - 1 + p) % p, right = (c->rank + 1) % p;
    for (int i = 0; i < p - 1; i++) {
        int sp = (rel - i + p) % p, rp = (rel - i - 1 + p) % p;
        bsendrecv_t(b + LO(sp), HI(sp, 1) - LO(sp), right, b + LO(rp), HI(rp, 1) - LO(rp), left,
                    PM_TAG_BCAST(root), c);
    }
#undef LO
#undef HI
}

void bcast_bytes(char *b, size_t n, int root, pm_comm *c)
{
    if (c->size == 1)
        return;
    if (n <= pm_eager_bytes || n < (size_t)c->size)
        bcast_binomial(b, n, root, c);
    else
        bcast_scatter_ring(b, n, root, c);
}

/* ---- Gather / Scatter (bytes, blocks in relative-rank order) ---------------------- */

/* Root gets all p blocks of `blk` bytes in rank order in `all`. */
void gather_bytes(const void *mine, size_t blk, void *all, int root, pm_comm *c)
{
    int p = c->size, rel = (c->rank - root + p) % p;
    char *tmp = xmalloc(blk * (size_t)p);
    memcpy(tmp, mine, blk);
    for (int mask = 1; mask < p; mask <<= 1) {
        if ((rel & mask) == 0) {
            int src = rel | mask;
            if (src < p) {
                int span = mask < p - src ? mask : p - src;
                brecv(tmp + (size_t)mask * blk, (size_t)span * blk, (src + root) % p, c);
            }
        } else {
            int span = mask < p - rel ? mask : p - rel;
            bsend(tmp, (size_t)span * blk, ((rel & ~mask) + root) % p, c);
            break;
        }
    }
    if (c->rank == root)
        for (int i = 0; i < p; i++)
            memcpy((char *)all + (size_t)((i + root) % p) * blk, tmp + (size_t)i * blk, blk);
    free(tmp);
}

/* Root's `all` (p blocks in rank order) scattered: each rank's block to mine. */
void scatter_bytes(const void *all, size_t blk, void *mine, int root, pm_comm *c)
{
    int p = c->size, rel = (c->rank - root + p) % p;
    char *tmp = xmalloc(blk * (size_t)p);
    int mask = 1;
    if (c->rank == root) {
        for (int i = 0; i < p; i++)
            memcpy(tmp + (size_t)i * blk, (const char *)all + (size_t)((i + root) % p) * blk, blk);
        while (mask < p)
            mask <<= 1;
    } else {
        while (mask < p) {
            if (rel & mask) {
                int span = mask < p - rel ? mask : p - rel;
                brecv(tmp, (size_t)span * blk, ((rel - mask) + root) % p, c);
                break;
            }
            mask <<= 1;
        }
    }
    for (mask >>= 1; mask > 0; mask >>= 1)
        if (rel + mask < p) {
            int child = rel + mask;
            int span = mask < p - child ? mask : p - child;
            bsend(tmp + (size_t)mask * blk, (size_t)span * blk, (child + root) % p, c);
        }
    memcpy(mine, tmp, blk);
    free(tmp);
}

/* MVAPICH2's direct gather and scatter (its inter-node choice at one rank
 * per node from a few hundred bytes): the root posts a nonblocking message
 * per rank and waits for them all; the others send or receive one block.
 * Run on device buffers, every message takes the point-to-point GPU path. */
void gather_direct(const char *mine, size_t blk, char *all, int root, pm_comm *c)
{
    if (c->rank != root) {
        bsend(mine, blk, root, c);
        return;
    }
    MPI_Request *r = xmalloc(sizeof *r * (size_t)c->size);
    int n = 0;
    for (int i = 0; i < c->size; i++)
        if (i != root)
            pm_irecv(all + (size_t)i * blk, (int)blk, MPI_BYTE, i, TAG, c, 1, &r[n++]);
    char *own = all + (size_t)root * blk;
    if (mine != own) {
        memmove(own, mine, blk);
        if (pm_gpu_buf(own)) /* host collectives' local copies are uncharged */
            pm_charge_d2d(blk);
    }
    c_waitall(n, r, MPI_STATUSES_IGNORE);
    free(r);
}

void scatter_direct(const char *all, size_t blk, char *mine, int root, pm_comm *c)
{
    if (c->rank != root) {
        brecv(mine, blk, root, c);
        return;
    }
    MPI_Request *r = xmalloc(sizeof *r * (size_t)c->size);
    int n = 0;
    for (int i = 0; i < c->size; i++)
        if (i != root)
            pm_isend(all + (size_t)i * blk, (int)blk, MPI_BYTE, i, TAG, c, 1, 0, &r[n++]);
    const char *own = all + (size_t)root * blk;
    if (mine != own) {
        memmove(mine, own, blk);
        if (pm_gpu_buf(mine))
            pm_charge_d2d(blk);
    }
    c_waitall(n, r, MPI_STATUSES_IGNORE);
    free(r);
}

/* ---- Allgather (bytes) ------------------------------------------------------------ */

/* MPICH's (and MVAPICH2 2.x's inter-node) allgather thresholds, on the total
 * gathered bytes (MPIR_CVAR_ALLGATHER_SHORT_MSG_SIZE, _LONG_MSG_SIZE). */
#define ALLGATHER_SHORT 81920
#define ALLGATHER_LONG 524288

/* Bruck: ceil(log2 p) steps; at step k each rank sends the 2^k blocks it has
 * to rank - 2^k and gets 2^k more from rank + 2^k (the last step only the
 * blocks still missing). Block i of tmp is rank + i's, so a final rotation
 * (a real local copy, charged) puts them in rank order. */
static void allgather_bruck(char *all, size_t blk, pm_comm *c)
{
    int p = c->size, rank = c->rank;
    char *tmp = xmalloc(blk * (size_t)p);
    memcpy(tmp, all + (size_t)rank * blk, blk);
    int have = 1;
    while (have < p) {
        int n = have <= p - have ? have : p - have;
        int dst = (rank - have + p) % p, src = (rank + have) % p;
        bsendrecv(tmp, (size_t)n * blk, dst, tmp + (size_t)have * blk, (size_t)n * blk, src, c);
        have += n;
    }
    /* tmp[i] is rank + i's block: rotate down by rank */
    size_t hi = (size_t)(p - rank) * blk, lo = (size_t)rank * blk;
    pm_local_copy(tmp, (int)hi, MPI_BYTE, all + lo, (int)hi, MPI_BYTE);
    pm_local_copy(tmp + hi, (int)lo, MPI_BYTE, all, (int)lo, MPI_BYTE);
    free(tmp);
}

/* all holds p blocks of blk bytes; this rank's is in place. */
void allgather_bytes(char *all, size_t blk, pm_comm *c)
{
    int p = c->size, rank = c->rank;
    size_t total = blk * (size_t)p;
    if (p == 1)
        return;
    if ((p & (p - 1)) == 0 && total < ALLGATHER_LONG) {
        for (int mask = 1; mask < p; mask <<= 1) {
            int dst = rank ^ mask;
            size_t mine = (size_t)(rank & ~(mask - 1)), theirs = (size_t)(dst & ~(mask - 1));
            bsendrecv(all + mine * blk, (size_t)mask * blk, dst, all + theirs * blk,
                      (size_t)mask * blk, dst, c);
        }
        return;
    }
    if ((p & (p - 1)) != 0 && total < ALLGATHER_SHORT) {
        allgather_bruck(all, blk, c);
        return;
    }
    int left = (rank - 1 + p) % p, right = (rank + 1) % p;
    for (int i = 0; i < p - 1; i++) {
        int sb = (rank - i + p) % p, rb = (rank - i - 1 + p) % p;
        bsendrecv(all + (size_t)sb * blk, blk, right, all + (size_t)rb * blk, blk, left, c);
    }
}

/* ---- Alltoall (bytes) ------------------------------------------------------------- */

/* MPICH's alltoall thresholds: one block's bytes <= MPIR_CVAR_ALLTOALL_SHORT_MSG_SIZE
 * (256) with at least 8 ranks takes Bruck; <= _MEDIUM_MSG_SIZE (32 KiB) the
 * isend/irecv burst; pairwise above. */
#define ALLTOALL_BRUCK 256
#define ALLTOALL_BRUCK_MIN_RANKS 8
#define ALLTOALL_SHORT 32768

/* Bruck: tmp[i] starts as the block for rank + i; at step k the blocks whose
 * index has bit k set go (packed into one message) to rank + 2^k and are
 * replaced by the same indices from rank - 2^k, so tmp[i] ends as the block
 * from rank - i. Rotations and packing are real local copies, charged. */
static void alltoall_bruck(const char *sb, char *rb, size_t blk, pm_comm *c)
{
    int p = c->size, rank = c->rank;
    char *tmp = xmalloc(blk * (size_t)p), *out = xmalloc(blk * (size_t)p),
         *in = xmalloc(blk * (size_t)p);
    size_t hi = (size_t)(p - rank) * blk, lo = (size_t)rank * blk;
    pm_local_copy(sb + lo, (int)hi, MPI_BYTE, tmp, (int)hi, MPI_BYTE);
    pm_local_copy(sb, (int)lo, MPI_BYTE, tmp + hi, (int)lo, MPI_BYTE);
    for (int bit = 1; bit < p; bit <<= 1) {
        size_t n = 0;
        for (int i = 0; i < p; i++)
            if (i & bit) {
                memcpy(out + n, tmp + (size_t)i * blk, blk);
                n += blk;
            }
        pm_charge_copy(n); /* MPICH packs the blocks into one buffer */
        bsendrecv(out, n, (rank + bit) % p, in, n, (rank - bit + p) % p, c);
        n = 0;
        for (int i = 0; i < p; i++)
            if (i & bit) {
                memcpy(tmp + (size_t)i * blk, in + n, blk);
                n += blk;
            }
        pm_charge_copy(n);
    }
    for (int i = 0; i < p; i++)
        memcpy(rb + (size_t)((rank - i + p) % p) * blk, tmp + (size_t)i * blk, blk);
    pm_charge_copy(blk * (size_t)p);
    free(tmp);
    free(out);
    free(in);
}

void alltoall_bytes(const char *sb, char *rb, size_t blk, pm_comm *c)
{
    int p = c->size, rank = c->rank;
    if (blk <= ALLTOALL_BRUCK && p >= ALLTOALL_BRUCK_MIN_RANKS) {
        alltoall_bruck(sb, rb, blk, c);
        return;
    }
    memcpy(rb + (size_t)rank * blk, sb + (size_t)rank * blk, blk);
    if (blk <= ALLTOALL_SHORT) {
        MPI_Request *r = xmalloc(sizeof(MPI_Request) * 2 * (size_t)p);
        int k = 0;
        for (int i = 1; i < p; i++) {
            int src = (rank - i + p) % p;
            pm_irecv(rb + (size_t)src * blk, (int)blk, MPI_BYTE, src, TAG, c, 1, &r[k++]);
        }
        for (int i = 1; i < p; i++) {
            int dst = (rank + i) % p;
            pm_isend(sb + (size_t)dst * blk, (int)blk, MPI_BYTE, dst, TAG, c, 1, 0, &r[k++]);
        }
        c_waitall(k, r, MPI_STATUSES_IGNORE);
        free(r);
        return;
    }
    int pof2 = (p & (p - 1)) == 0;
    for (int i = 1; i < p; i++) {
        int dst = pof2 ? rank ^ i : (rank + i) % p;
        int src = pof2 ? rank ^ i : (rank - i + p) % p;
        bsendrecv(sb + (size_t)dst * blk, blk, dst, rb + (size_t)src * blk, blk, src, c);
    }
}

/* ---- Internal helpers for start-up and communicator creation ------------------------- */

void pm_coll_barrier(pm_comm *c) { barrier(c); }

void pm_coll_allgather_ints(const int *mine, int n, int *all, pm_comm *c)
{
    memcpy(all + (size_t)c->rank * (size_t)n, mine, sizeof(int) * (size_t)n);
    allgather_bytes((char *)all, sizeof(int) * (size_t)n, c);
}
