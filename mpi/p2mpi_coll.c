/*
 * p2mpi_coll.c - collectives of the virtual-time MPI layer, built on its
 * modelled point-to-point (p2mpi.c) on the communicator's collective
 * context, so they take the simulated time their messages take.
 *
 * Algorithms (MVAPICH2 2.x inter-node defaults, one rank per node, after
 * MPICH's; README.md says where the layer differs):
 *   Barrier        dissemination: ceil(log2 p) rounds of 0-byte messages
 *   Bcast          binomial tree up to mpi_eager_bytes; above, scatter
 *                  (binomial) + ring allgather (van de Geijn)
 *   Reduce         Rabenseifner (reduce-scatter by recursive halving +
 *                  binomial gather) above 2 KiB for commutative ops with
 *                  count >= pof2; binomial tree otherwise (non-commutative
 *                  ops: to rank 0 in rank order, then to the root)
 *   Allreduce      recursive doubling (extra ranks of a non-power-of-two
 *                  folded into their neighbours first) up to 2 KiB;
 *                  Rabenseifner (reduce-scatter + allgather) above, for
 *                  commutative ops
 *   Gather/Scatter binomial tree over packed blocks; direct (the root posts
 *                  a message per rank) above MVAPICH2's CUDA naive limits,
 *                  where they run on the buffers themselves
 *   Allgather      recursive doubling for a power of two below 512 KiB in
 *                  all; Bruck for other sizes of communicator below 80 KiB;
 *                  ring otherwise
 *   Alltoall       Bruck for blocks up to 256 B at 8 ranks or more; every
 *                  isend/irecv posted at once up to 32 KiB blocks (in
 *                  (rank + i) order), pairwise exchange above
 *   Gatherv/Scatterv linear; Allgatherv ring; Alltoallv isend/irecv
 *   Reduce_scatter(_block)  commutative ops: recursive halving below 512 KiB
 *                  in all, pairwise exchange above; non-commutative: MPICH's
 *                  bit-reversed halving for a power of two with equal
 *                  blocks, recursive doubling otherwise
 *   Scan/Exscan    recursive doubling
 *
 *   Data is packed to bytes (PMPI_Pack for derived types) where it only moves;
 *   reductions keep the type's layout and use PMPI_Reduce_local.
 */
#define _GNU_SOURCE
#include "p2mpi.h"

#include <stdlib.h>
#include <string.h>

#define TAG PM_TAG_COLL /* collectives are ordered per communicator (MPI_Bcast's differ) */
#define ALLTOALL_SHORT 32768

static void *xmalloc(size_t n)
{
    void *p = malloc(n ? n : 1);
    if (!p)
        pm_fatal("out of memory for a %zu-byte buffer", n);
    return p;
}

static int pof2_below(int n)
{
    int p = 1;
    while (p * 2 <= n)
        p *= 2;
    return p;
}

/* A type whose data is one dense run of bytes from the buffer's start. */
static int dense(MPI_Datatype t)
{
    int size;
    MPI_Aint lb, extent;
    PMPI_Type_size(t, &size);
    PMPI_Type_get_extent(t, &lb, &extent);
    return lb == 0 && (MPI_Aint)size == extent;
}

/* Set while a collective on GPU buffers runs MVAPICH2-GDR's staged path:
 * the call and each blocking point-to-point step of its host algorithm (and
 * each wait for a burst of nonblocking ones) cost its collective software
 * (mpi_coll_call_ns, mpi_coll_step_ns) on top of the messages. The costs
 * are fitted to GPU-buffer figures; no published host-buffer collective
 * pins them there, so host-buffer collectives keep the point-to-point
 * costs alone. */
static int gpu_path;

static void gpu_path_begin(int gpu)
{
    if (gpu && !gpu_path) {
        gpu_path = 1;
        pm_coll_call_cost();
    }
}

static void c_send(const void *b, int n, MPI_Datatype t, int dest, int tag, pm_comm *c, int coll)
{
    if (gpu_path)
        pm_coll_step_cost();
    pm_send(b, n, t, dest, tag, c, coll);
}
static void c_recv(void *b, int n, MPI_Datatype t, int src, int tag, pm_comm *c, int coll,
                   MPI_Status *st)
{
    if (gpu_path)
        pm_coll_step_cost();
    pm_recv(b, n, t, src, tag, c, coll, st);
}
static void c_sendrecv(const void *sb, int sn, MPI_Datatype st, int dest, int stag, void *rb,
                       int rn, MPI_Datatype rt, int src, int rtag, pm_comm *c, int coll,
                       MPI_Status *status)
{
    if (gpu_path)
        pm_coll_step_cost();
    pm_sendrecv(sb, sn, st, dest, stag, rb, rn, rt, src, rtag, c, coll, status);
}
static void c_waitall(int n, MPI_Request r[], MPI_Status sts[])
{
    if (gpu_path)
        pm_coll_step_cost();
    pm_waitall(n, r, sts);
}
/* MVAPICH2 reduces GPU buffers' data on the host, in its staging (charged
 * on that path; host-buffer collectives keep their uncharged reductions,
 * which the point-to-point calibration and the TCA clients' golden figures
 * assume). */
static void c_reduce_local(const void *in, void *inout, int count, MPI_Datatype t, MPI_Op op)
{
    if (gpu_path)
        pm_charge_reduce(pm_type_size(t) * (size_t)(count > 0 ? count : 0));
    PMPI_Reduce_local(in, inout, count, t, op);
}

/* Moves bytes on the collective context; the _t forms with a tag other than TAG. */
static void bsend_t(const void *b, size_t n, int dest, int tag, pm_comm *c)
{
    c_send(b, (int)n, MPI_BYTE, dest, tag, c, 1);
}
static void brecv_t(void *b, size_t n, int src, int tag, pm_comm *c)
{
    c_recv(b, (int)n, MPI_BYTE, src, tag, c, 1, MPI_STATUS_IGNORE);
}
static void bsendrecv_t(const void *s, size_t sn, int dest, void *r, size_t rn, int src, int tag,
                        pm_comm *c)
{
    c_sendrecv(s, (int)sn, MPI_BYTE, dest, tag, r, (int)rn, MPI_BYTE, src, tag, c, 1,
               MPI_STATUS_IGNORE);
}
static void bsend(const void *b, size_t n, int dest, pm_comm *c)
{
    bsend_t(b, n, dest, TAG, c);
}
static void brecv(void *b, size_t n, int src, pm_comm *c)
{
    brecv_t(b, n, src, TAG, c);
}
static void bsendrecv(const void *s, size_t sn, int dest, void *r, size_t rn, int src, pm_comm *c)
{
    bsendrecv_t(s, sn, dest, r, rn, src, TAG, c);
}

_Noreturn void pm_coll_tag_mismatch(int want, int got, int src_world)
{
    if (want != TAG && got != TAG)
        pm_fatal("the ranks' roots differ: %d here, %d at rank %d (MPI_ERR_ROOT)",
                 want - PM_TAG_BCAST(0), got - PM_TAG_BCAST(0), src_world);
    if (got != TAG)
        pm_fatal("a message of rank %d's MPI_Bcast (root %d) arrived: the ranks' collective "
                 "calls differ (roots that differ between ranks in an earlier MPI_Bcast?)",
                 src_world, got - PM_TAG_BCAST(0));
    pm_fatal("rank %d's message is not of an MPI_Bcast: the ranks' collective calls differ",
             src_world);
}

/* count elements of t at buf as n packed bytes (local work, uncharged: it
 * stands for the zero-copy paths of a real MPI). */
static void pack_to(const void *buf, int count, MPI_Datatype t, void *out)
{
    int pos = 0, n = (int)(pm_type_size(t) * (size_t)count);
    if (n)
        PMPI_Pack(buf, count, t, out, n, &pos, MPI_COMM_SELF);
}
static void unpack_from(const void *in, void *buf, int count, MPI_Datatype t)
{
    int pos = 0, n = (int)(pm_type_size(t) * (size_t)count);
    if (n)
        PMPI_Unpack(in, n, &pos, buf, count, t, MPI_COMM_SELF);
}

/* The bytes count elements of t span (true extent), from src to dst: the
 * emulator moving a GPU buffer to its host stand-in, whose cost the staging
 * charges stand for. */
static void span_copy(void *dst, const void *src, int count, MPI_Datatype t)
{
    MPI_Aint tlb, text, lb, ext;
    PMPI_Type_get_true_extent(t, &tlb, &text);
    PMPI_Type_get_extent(t, &lb, &ext);
    if (count > 0)
        memcpy((char *)dst + tlb, (const char *)src + tlb,
               (size_t)text + (size_t)(count - 1) * (size_t)ext);
}

static char *at(const void *buf, MPI_Datatype t, size_t elems)
{
    return (char *)buf + (MPI_Aint)elems * pm_type_extent(t);
}

/* ---- Barrier ---------------------------------------------------------------- */

static void barrier(pm_comm *c)
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

static void bcast_bytes(char *b, size_t n, int root, pm_comm *c)
{
    if (c->size == 1)
        return;
    if (n <= pm_eager_bytes || n < (size_t)c->size)
        bcast_binomial(b, n, root, c);
    else
        bcast_scatter_ring(b, n, root, c);
}

/* ---- Reduce, Allreduce (typed) ------------------------------------------------- */

static int commutative(MPI_Op op)
{
    int cm = 1;
    PMPI_Op_commutative(op, &cm);
    return cm;
}

/* acc = (lower-ranked data) op acc, as MPI orders non-commutative reductions:
 * `mine_first` says acc holds the lower ranks' part. */
static void combine(void *in, void *acc, int count, MPI_Datatype t, MPI_Op op, int in_is_lower)
{
    if (in_is_lower) {
        c_reduce_local(in, acc, count, t, op); /* acc = in op acc */
    } else {
        c_reduce_local(acc, in, count, t, op); /* in = acc op in */
        pm_local_copy(in, count, t, acc, count, t);
    }
}

/* Binomial reduce of acc (count of t, typed layout) to `root`. */
static void reduce_binomial(void *acc, int count, MPI_Datatype t, MPI_Op op, int root, pm_comm *c)
{
    int p = c->size;
    int cm = commutative(op);
    int r0 = cm ? root : 0;
    int rel = (c->rank - r0 + p) % p;
    void *tmp_s;
    void *tmp = pm_type_buffer(t, count, &tmp_s);
    for (int mask = 1; mask < p; mask <<= 1) {
        if ((rel & mask) == 0) {
            int src = rel | mask;
            if (src < p) {
                c_recv(tmp_s, count, t, (src + r0) % p, TAG, c, 1, MPI_STATUS_IGNORE);
                combine(tmp_s, acc, count, t, op, cm); /* higher ranks' part */
            }
        } else {
            c_send(acc, count, t, ((rel & ~mask) + r0) % p, TAG, c, 1);
            break;
        }
    }
    if (!cm && root != 0) {
        if (c->rank == 0)
            c_send(acc, count, t, root, TAG, c, 1);
        else if (c->rank == root)
            c_recv(acc, count, t, 0, TAG, c, 1, MPI_STATUS_IGNORE);
    }
    free(tmp);
}

static void allreduce_rd(void *acc, int count, MPI_Datatype t, MPI_Op op, pm_comm *c)
{
    int p = c->size, rank = c->rank;
    if (p == 1)
        return;
    void *tmp_s;
    void *tmp = pm_type_buffer(t, count, &tmp_s);
    int pof2 = pof2_below(p), rem = p - pof2, newrank;
    if (rank < 2 * rem) {
        if (rank % 2 == 0) {
            c_send(acc, count, t, rank + 1, TAG, c, 1);
            newrank = -1;
        } else {
            c_recv(tmp_s, count, t, rank - 1, TAG, c, 1, MPI_STATUS_IGNORE);
            c_reduce_local(tmp_s, acc, count, t, op); /* lower rank first */
            newrank = rank / 2;
        }
    } else {
        newrank = rank - rem;
    }
    if (newrank != -1) {
        for (int mask = 1; mask < pof2; mask <<= 1) {
            int newdst = newrank ^ mask;
            int dst = newdst < rem ? newdst * 2 + 1 : newdst + rem;
            c_sendrecv(acc, count, t, dst, TAG, tmp_s, count, t, dst, TAG, c, 1,
                       MPI_STATUS_IGNORE);
            combine(tmp_s, acc, count, t, op, dst < rank);
        }
    }
    if (rank < 2 * rem) {
        if (rank % 2)
            c_send(acc, count, t, rank - 1, TAG, c, 1);
        else
            c_recv(acc, count, t, rank + 1, TAG, c, 1, MPI_STATUS_IGNORE);
    }
    free(tmp);
}

/* The first 2 * rem ranks of a non-power-of-two fold in pairs: an even one
 * sends its vector to the next and drops out (-1); the odd one reduces it
 * into acc. The rest renumber; returns the rank among the pof2 survivors. */
static int fold_in(void *acc, void *tmp_s, int count, MPI_Datatype t, MPI_Op op, int rem,
                   pm_comm *c)
{
    int rank = c->rank;
    if (rank >= 2 * rem)
        return rank - rem;
    if (rank % 2 == 0) {
        c_send(acc, count, t, rank + 1, TAG, c, 1);
        return -1;
    }
    c_recv(tmp_s, count, t, rank - 1, TAG, c, 1, MPI_STATUS_IGNORE);
    c_reduce_local(tmp_s, acc, count, t, op);
    return rank / 2;
}

/* Rabenseifner (MVAPICH2's and MPICH's long-message allreduce, commutative
 * ops): the extra ranks of a non-power-of-two fold in as above, then a
 * reduce-scatter by recursive halving leaves each of the pof2 ranks one
 * reduced block, an allgather by recursive doubling spreads them, and the
 * folded ranks get the result back.
 *
 *   pof2 = 4, blocks b0..b3:  step 1: 0<->2, 1<->3 swap halves (0,1 keep
 *   b0b1; 2,3 keep b2b3);  step 2: 0<->1, 2<->3 swap quarters (rank r keeps
 *   b_r); then the same pairs in reverse order exchange what they hold. */
static void allreduce_rabenseifner(void *acc, int count, MPI_Datatype t, MPI_Op op, pm_comm *c)
{
    int p = c->size, rank = c->rank;
    int pof2 = pof2_below(p), rem = p - pof2, newrank;
    void *tmp_s;
    void *tmp = pm_type_buffer(t, count, &tmp_s);
    newrank = fold_in(acc, tmp_s, count, t, op, rem, c);
    if (newrank != -1) {
        int *cnts = calloc((size_t)pof2, sizeof(int)), *disps = calloc((size_t)pof2, sizeof(int));
        for (int i = 0; i < pof2; i++)
            cnts[i] = count / pof2;
        cnts[pof2 - 1] += count % pof2;
        disps[0] = 0;
        for (int i = 1; i < pof2; i++)
            disps[i] = disps[i - 1] + cnts[i - 1];
#define REAL(nr) ((nr) < rem ? (nr) * 2 + 1 : (nr) + rem)
        int send_idx = 0, recv_idx = 0, last_idx = pof2;
        int mask = 1;
        while (mask < pof2) {
            int newdst = newrank ^ mask, dst = REAL(newdst);
            int send_cnt = 0, recv_cnt = 0;
            if (newrank < newdst) {
                send_idx = recv_idx + pof2 / (mask * 2);
                for (int i = send_idx; i < last_idx; i++)
                    send_cnt += cnts[i];
                for (int i = recv_idx; i < send_idx; i++)
                    recv_cnt += cnts[i];
            } else {
                recv_idx = send_idx + pof2 / (mask * 2);
                for (int i = send_idx; i < recv_idx; i++)
                    send_cnt += cnts[i];
                for (int i = recv_idx; i < last_idx; i++)
                    recv_cnt += cnts[i];
            }
            c_sendrecv(at(acc, t, (size_t)disps[send_idx]), send_cnt, t, dst, TAG,
                       at(tmp_s, t, (size_t)disps[recv_idx]), recv_cnt, t, dst, TAG, c, 1,
                       MPI_STATUS_IGNORE);
            c_reduce_local(at(tmp_s, t, (size_t)disps[recv_idx]), at(acc, t, (size_t)disps[recv_idx]),
                           recv_cnt, t, op);
            send_idx = recv_idx;
            mask <<= 1;
            if (mask < pof2)
                last_idx = recv_idx + pof2 / mask;
        }
        /* allgather: the pairs again, in reverse */
        for (mask = pof2 >> 1; mask > 0; mask >>= 1) {
            int newdst = newrank ^ mask, dst = REAL(newdst);
            int send_cnt = 0, recv_cnt = 0;
            if (newrank < newdst) {
                if (mask != pof2 / 2)
                    last_idx = last_idx + pof2 / (mask * 2);
                recv_idx = send_idx + pof2 / (mask * 2);
                for (int i = send_idx; i < recv_idx; i++)
                    send_cnt += cnts[i];
                for (int i = recv_idx; i < last_idx; i++)
                    recv_cnt += cnts[i];
            } else {
                recv_idx = send_idx - pof2 / (mask * 2);
                for (int i = send_idx; i < last_idx; i++)
                    send_cnt += cnts[i];
                for (int i = recv_idx; i < send_idx; i++)
                    recv_cnt += cnts[i];
            }
            c_sendrecv(at(acc, t, (size_t)disps[send_idx]), send_cnt, t, dst, TAG,
                       at(acc, t, (size_t)disps[recv_idx]), recv_cnt, t, dst, TAG, c, 1,
                       MPI_STATUS_IGNORE);
            if (newrank > newdst)
                send_idx = recv_idx;
        }
#undef REAL
        free(cnts);
        free(disps);
    }
    if (rank < 2 * rem) {
        if (rank % 2)
            c_send(acc, count, t, rank - 1, TAG, c, 1);
        else
            c_recv(acc, count, t, rank + 1, TAG, c, 1, MPI_STATUS_IGNORE);
    }
    free(tmp);
}

/* MPICH's switch: Rabenseifner above 2 KiB when the op commutes and every
 * one of the pof2 ranks gets at least one element. */
#define ALLREDUCE_SHORT 2048
static void allreduce(void *acc, int count, MPI_Datatype t, MPI_Op op, pm_comm *c)
{
    if (c->size > 1 && pm_type_size(t) * (size_t)count > ALLREDUCE_SHORT && commutative(op) &&
        count >= pof2_below(c->size))
        allreduce_rabenseifner(acc, count, t, op, c);
    else
        allreduce_rd(acc, count, t, op, c);
}

/* ---- Gather / Scatter (bytes, blocks in relative-rank order) ---------------------- */

/* Root gets all p blocks of `blk` bytes in rank order in `all`. */
static void gather_bytes(const void *mine, size_t blk, void *all, int root, pm_comm *c)
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
static void scatter_bytes(const void *all, size_t blk, void *mine, int root, pm_comm *c)
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
static void allgather_bytes(char *all, size_t blk, pm_comm *c)
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

/* ---- Internal helpers for communicator creation ------------------------------------- */

void pm_coll_barrier(pm_comm *c) { barrier(c); }

void pm_coll_allreduce_int_max(const int *mine, int *out, pm_comm *c)
{
    *out = *mine;
    allreduce_rd(out, 1, MPI_INT, MPI_MAX, c);
}

void pm_coll_allgather_ints(const int *mine, int n, int *all, pm_comm *c)
{
    memcpy(all + (size_t)c->rank * (size_t)n, mine, sizeof(int) * (size_t)n);
    allgather_bytes((char *)all, sizeof(int) * (size_t)n, c);
}

/* ---- The MPI calls ------------------------------------------------------------------- */

#define BEGIN(name)                       \
    pm_enter(name);                       \
    pm_comm *c = pm_comm_of(comm, name)
#define END()           \
    gpu_path = 0;       \
    pm_leave();         \
    return MPI_SUCCESS

static void check_root(int root, pm_comm *c)
{
    if (root < 0 || root >= c->size)
        pm_fatal("root %d is not in the communicator (size %d) (MPI_ERR_ROOT)", root, c->size);
}

int MPI_Barrier(MPI_Comm comm)
{
    BEGIN("MPI_Barrier");
    barrier(c);
    END();
}

int MPI_Bcast(void *buf, int count, MPI_Datatype type, int root, MPI_Comm comm)
{
    BEGIN("MPI_Bcast");
    check_root(root, c);
    size_t n = pm_type_size(type) * (size_t)count;
    /* MVAPICH2 (naive CUDA path): every rank stages the buffer out of the
     * GPU and back in, the root too */
    int gpu = pm_gpu_buf(buf);
    gpu_path_begin(gpu);
    if (gpu)
        pm_charge_stage_d2h(n);
    char *b = xmalloc(n);
    if (c->rank == root)
        pack_to(buf, count, type, b);
    bcast_bytes(b, n, root, c);
    if (c->rank != root)
        unpack_from(b, buf, count, type);
    free(b);
    if (gpu)
        pm_charge_stage_h2d(n);
    END();
}

/* MPICH's (MVAPICH2 2.x's inter-node) switch to Rabenseifner's reduce
 * (MPIR_CVAR_REDUCE_SHORT_MSG_SIZE): above 2 KiB, commutative op, count >= pof2. */
#define REDUCE_SHORT 2048
static void reduce_rabenseifner(void *acc, int count, MPI_Datatype t, MPI_Op op, int root,
                                pm_comm *c);

/* MVAPICH2's reductions copy a GPU input and a GPU receive buffer (even one
 * about to be overwritten) to host memory first; returns whether the receive
 * buffer is GPU memory (the result then goes back). */
static int stage_reduce_inputs(const void *send, const void *recv, size_t n)
{
    int gpu_recv = pm_gpu_buf(recv);
    gpu_path_begin(gpu_recv || pm_gpu_buf(send));
    if (pm_gpu_buf(send))
        pm_charge_stage_d2h(n);
    if (gpu_recv)
        pm_charge_stage_d2h(n);
    return gpu_recv;
}

int MPI_Reduce(const void *send, void *recv, int count, MPI_Datatype type, MPI_Op op, int root,
               MPI_Comm comm)
{
    BEGIN("MPI_Reduce");
    check_root(root, c);
    /* MVAPICH2 stages GPU buffers through host memory: the input and the
     * receive buffer (at every rank that passes one) out, the result back
     * in at the root */
    size_t n = pm_type_size(type) * (size_t)count;
    int gpu_recv = stage_reduce_inputs(send, recv, n);
    void *acc_s;
    void *acc = pm_type_buffer(type, count, &acc_s);
    pm_local_copy(send == MPI_IN_PLACE ? recv : send, count, type, acc_s, count, type);
    if (c->size > 1 && n > REDUCE_SHORT && commutative(op) && count >= pof2_below(c->size))
        reduce_rabenseifner(acc_s, count, type, op, root, c);
    else
        reduce_binomial(acc_s, count, type, op, root, c);
    if (c->rank == root)
        pm_local_copy(acc_s, count, type, recv, count, type);
    if (c->rank == root && gpu_recv)
        pm_charge_stage_h2d(n);
    free(acc);
    END();
}

int MPI_Allreduce(const void *send, void *recv, int count, MPI_Datatype type, MPI_Op op,
                  MPI_Comm comm)
{
    BEGIN("MPI_Allreduce");
    /* MVAPICH2 copies a GPU input and the GPU receive buffer (both, even
     * when the receive buffer is about to be overwritten) to host memory,
     * runs the host algorithm and copies the result back */
    size_t n = pm_type_size(type) * (size_t)count;
    int gpu_recv = stage_reduce_inputs(send, recv, n);
    /* the algorithm runs on the host copy (its staging is charged above) */
    void *host_s = recv, *host = NULL;
    if (gpu_recv) {
        host = pm_type_buffer(type, count, &host_s);
        span_copy(host_s, recv, count, type);
    }
    if (send != MPI_IN_PLACE)
        pm_local_copy(send, count, type, host_s, count, type);
    allreduce(host_s, count, type, op, c);
    if (gpu_recv) {
        span_copy(recv, host_s, count, type);
        pm_charge_stage_h2d(n);
        free(host);
    }
    END();
}

/* MVAPICH2's direct gather and scatter (its inter-node choice at one rank
 * per node from a few hundred bytes): the root posts a nonblocking message
 * per rank and waits for them all; the others send or receive one block.
 * Run on device buffers, every message takes the point-to-point GPU path. */
static void gather_direct(const char *mine, size_t blk, char *all, int root, pm_comm *c)
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

static void scatter_direct(const char *all, size_t blk, char *mine, int root, pm_comm *c)
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

int MPI_Gather(const void *send, int scount, MPI_Datatype stype, void *recv, int rcount,
               MPI_Datatype rtype, int root, MPI_Comm comm)
{
    BEGIN("MPI_Gather");
    check_root(root, c);
    int is_root = c->rank == root;
    size_t blk = is_root ? pm_type_size(rtype) * (size_t)rcount : pm_type_size(stype) * (size_t)scount;
    if (blk > MV2_GATHER_NAIVE_LIMIT / (size_t)c->size) {
        /* above the naive limit: no staging, the blocks go where they are
         * (dense buffers in place; a derived type packed, uncharged) */
        gpu_path_begin(pm_gpu_buf(send) || (is_root && pm_gpu_buf(recv)));
        int in_place = send == MPI_IN_PLACE;
        int out_dense = !is_root || dense(rtype);
        char *all = !is_root ? NULL : out_dense ? recv : xmalloc(blk * (size_t)c->size);
        const char *mine;
        char *packed = NULL;
        if (in_place)
            mine = all + (size_t)root * blk;
        else if (dense(stype))
            mine = send;
        else
            pack_to(send, scount, stype, packed = xmalloc(blk)), mine = packed;
        if (in_place && !out_dense)
            pack_to(at(recv, rtype, (size_t)rcount * (size_t)root), rcount, rtype,
                    all + (size_t)root * blk);
        gather_direct(mine, blk, all, root, c);
        if (is_root && !out_dense) {
            for (int i = 0; i < c->size; i++)
                unpack_from(all + (size_t)i * blk, at(recv, rtype, (size_t)rcount * (size_t)i),
                            rcount, rtype);
            free(all);
        }
        free(packed);
        END();
    }
    /* MVAPICH2's naive CUDA gather: each rank's block leaves the GPU (the
     * root's own too, into its staged receive buffer); the root copies the
     * gathered blocks back in */
    gpu_path_begin(pm_gpu_buf(send) || (is_root && pm_gpu_buf(recv)));
    if (send == MPI_IN_PLACE ? is_root && pm_gpu_buf(recv) : pm_gpu_buf(send))
        pm_charge_stage_d2h(blk);
    int gpu_out = is_root && pm_gpu_buf(recv);
    char *mine = xmalloc(blk), *all = is_root ? xmalloc(blk * (size_t)c->size) : NULL;
    if (send == MPI_IN_PLACE)
        pack_to(at(recv, rtype, (size_t)rcount * (size_t)root), rcount, rtype, mine);
    else
        pack_to(send, scount, stype, mine);
    gather_bytes(mine, blk, all, root, c);
    if (is_root)
        for (int i = 0; i < c->size; i++)
            unpack_from(all + (size_t)i * blk, at(recv, rtype, (size_t)rcount * (size_t)i), rcount,
                        rtype);
    if (gpu_out)
        pm_charge_stage_h2d(blk * (size_t)c->size);
    free(mine);
    free(all);
    END();
}

int MPI_Scatter(const void *send, int scount, MPI_Datatype stype, void *recv, int rcount,
                MPI_Datatype rtype, int root, MPI_Comm comm)
{
    BEGIN("MPI_Scatter");
    check_root(root, c);
    int is_root = c->rank == root;
    size_t blk = is_root ? pm_type_size(stype) * (size_t)scount : pm_type_size(rtype) * (size_t)rcount;
    if (blk > MV2_SCATTER_NAIVE_LIMIT * (size_t)c->size) {
        /* above the naive limit: no staging (as the gather above) */
        gpu_path_begin((is_root && pm_gpu_buf(send)) || pm_gpu_buf(recv));
        int in_place = is_root && recv == MPI_IN_PLACE;
        int in_dense = !is_root || dense(stype);
        const char *all = (const char *)send;
        char *packed_all = NULL, *packed = NULL;
        if (is_root && !in_dense) {
            packed_all = xmalloc(blk * (size_t)c->size);
            for (int i = 0; i < c->size; i++)
                pack_to(at(send, stype, (size_t)scount * (size_t)i), scount, stype,
                        packed_all + (size_t)i * blk);
            all = packed_all;
        }
        char *mine = in_place ? (char *)all + (size_t)root * blk
                     : dense(rtype) ? recv : (packed = xmalloc(blk));
        scatter_direct(all, blk, mine, root, c);
        if (packed)
            unpack_from(packed, recv, rcount, rtype);
        free(packed);
        free(packed_all);
        END();
    }
    /* MVAPICH2's naive CUDA scatter: the root stages all blocks out of the
     * GPU; each rank copies its block into its GPU buffer */
    gpu_path_begin((is_root && pm_gpu_buf(send)) || pm_gpu_buf(recv));
    if (is_root && pm_gpu_buf(send))
        pm_charge_stage_d2h(blk * (size_t)c->size);
    int gpu_out = !(is_root && recv == MPI_IN_PLACE) && pm_gpu_buf(recv);
    char *mine = xmalloc(blk), *all = is_root ? xmalloc(blk * (size_t)c->size) : NULL;
    if (is_root)
        for (int i = 0; i < c->size; i++)
            pack_to(at(send, stype, (size_t)scount * (size_t)i), scount, stype, all + (size_t)i * blk);
    scatter_bytes(all, blk, mine, root, c);
    if (!(is_root && recv == MPI_IN_PLACE))
        unpack_from(mine, recv, rcount, rtype);
    if (gpu_out)
        pm_charge_stage_h2d(blk);
    free(mine);
    free(all);
    END();
}

int MPI_Allgather(const void *send, int scount, MPI_Datatype stype, void *recv, int rcount,
                  MPI_Datatype rtype, MPI_Comm comm)
{
    BEGIN("MPI_Allgather");
    size_t blk = pm_type_size(rtype) * (size_t)rcount;
    if (pm_gpu_buf(recv) && blk > MV2_ALLGATHER_NAIVE_LIMIT && dense(rtype) &&
        (send == MPI_IN_PLACE || (pm_gpu_buf(send) && dense(stype)))) {
        /* Above its staging limit MVAPICH2-GDR runs the algorithm on the
         * device buffers: the own block copied within the GPU, every step a
         * GPU-to-GPU message (the point-to-point GPU protocols). */
        gpu_path_begin(1);
        char *own = (char *)recv + (size_t)c->rank * blk;
        if (send != MPI_IN_PLACE && send != own) {
            memmove(own, send, blk);
            pm_charge_d2d(blk);
        }
        allgather_bytes((char *)recv, blk, c);
        END();
    }
    /* MVAPICH2's naive CUDA allgather: this rank's block out of the GPU,
     * the gathered blocks back in */
    gpu_path_begin(pm_gpu_buf(send) || pm_gpu_buf(recv));
    if (send == MPI_IN_PLACE ? pm_gpu_buf(recv) : pm_gpu_buf(send))
        pm_charge_stage_d2h(blk);
    char *all = xmalloc(blk * (size_t)c->size);
    if (send == MPI_IN_PLACE)
        pack_to(at(recv, rtype, (size_t)rcount * (size_t)c->rank), rcount, rtype,
                all + (size_t)c->rank * blk);
    else
        pack_to(send, scount, stype, all + (size_t)c->rank * blk);
    allgather_bytes(all, blk, c);
    for (int i = 0; i < c->size; i++)
        unpack_from(all + (size_t)i * blk, at(recv, rtype, (size_t)rcount * (size_t)i), rcount, rtype);
    if (pm_gpu_buf(recv))
        pm_charge_stage_h2d(blk * (size_t)c->size);
    free(all);
    END();
}

/* MPICH's alltoall thresholds: one block's bytes <= MPIR_CVAR_ALLTOALL_SHORT_MSG_SIZE
 * (256) with at least 8 ranks takes Bruck; <= _MEDIUM_MSG_SIZE (32 KiB) the
 * isend/irecv burst; pairwise above. */
#define ALLTOALL_BRUCK 256
#define ALLTOALL_BRUCK_MIN_RANKS 8

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

static void alltoall_bytes(const char *sb, char *rb, size_t blk, pm_comm *c)
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

int MPI_Alltoall(const void *send, int scount, MPI_Datatype stype, void *recv, int rcount,
                 MPI_Datatype rtype, MPI_Comm comm)
{
    BEGIN("MPI_Alltoall");
    if (send == MPI_IN_PLACE) {
        send = recv;
        scount = rcount;
        stype = rtype;
    }
    size_t blk = pm_type_size(stype) * (size_t)scount;
    if (blk != pm_type_size(rtype) * (size_t)rcount)
        pm_fatal("send and receive blocks differ in size (MPI_ERR_TRUNCATE)");
    /* MVAPICH2's naive CUDA alltoall: all blocks out of the GPU and back */
    gpu_path_begin(pm_gpu_buf(send) || pm_gpu_buf(recv));
    if (pm_gpu_buf(send))
        pm_charge_stage_d2h(blk * (size_t)c->size);
    char *sb = xmalloc(blk * (size_t)c->size), *rb = xmalloc(blk * (size_t)c->size);
    for (int i = 0; i < c->size; i++)
        pack_to(at(send, stype, (size_t)scount * (size_t)i), scount, stype, sb + (size_t)i * blk);
    alltoall_bytes(sb, rb, blk, c);
    for (int i = 0; i < c->size; i++)
        unpack_from(rb + (size_t)i * blk, at(recv, rtype, (size_t)rcount * (size_t)i), rcount, rtype);
    if (pm_gpu_buf(recv))
        pm_charge_stage_h2d(blk * (size_t)c->size);
    free(sb);
    free(rb);
    END();
}

/* ---- v-variants ---------------------------------------------------------------------- */

int MPI_Gatherv(const void *send, int scount, MPI_Datatype stype, void *recv,
                const int rcounts[], const int displs[], MPI_Datatype rtype, int root,
                MPI_Comm comm)
{
    BEGIN("MPI_Gatherv");
    check_root(root, c);
    if (c->rank != root) {
        c_send(send, scount, stype, root, TAG, c, 1);
        END();
    }
    MPI_Request *r = xmalloc(sizeof(MPI_Request) * (size_t)c->size);
    for (int i = 0; i < c->size; i++) {
        void *dst = at(recv, rtype, (size_t)displs[i]);
        if (i == root) {
            r[i] = MPI_REQUEST_NULL;
            if (send != MPI_IN_PLACE)
                pm_local_copy(send, scount, stype, dst, rcounts[i], rtype);
        } else {
            pm_irecv(dst, rcounts[i], rtype, i, TAG, c, 1, &r[i]);
        }
    }
    c_waitall(c->size, r, MPI_STATUSES_IGNORE);
    free(r);
    END();
}

int MPI_Scatterv(const void *send, const int scounts[], const int displs[], MPI_Datatype stype,
                 void *recv, int rcount, MPI_Datatype rtype, int root, MPI_Comm comm)
{
    BEGIN("MPI_Scatterv");
    check_root(root, c);
    if (c->rank != root) {
        c_recv(recv, rcount, rtype, root, TAG, c, 1, MPI_STATUS_IGNORE);
        END();
    }
    MPI_Request *r = xmalloc(sizeof(MPI_Request) * (size_t)c->size);
    for (int i = 0; i < c->size; i++) {
        const void *src = at(send, stype, (size_t)displs[i]);
        if (i == root) {
            r[i] = MPI_REQUEST_NULL;
            if (recv != MPI_IN_PLACE)
                pm_local_copy(src, scounts[i], stype, recv, rcount, rtype);
        } else {
            pm_isend(src, scounts[i], stype, i, TAG, c, 1, 0, &r[i]);
        }
    }
    c_waitall(c->size, r, MPI_STATUSES_IGNORE);
    free(r);
    END();
}

int MPI_Allgatherv(const void *send, int scount, MPI_Datatype stype, void *recv,
                   const int rcounts[], const int displs[], MPI_Datatype rtype, MPI_Comm comm)
{
    BEGIN("MPI_Allgatherv");
    int p = c->size, rank = c->rank;
    size_t sz = pm_type_size(rtype), total = 0;
    size_t *off = xmalloc(sizeof(size_t) * (size_t)(p + 1));
    for (int i = 0; i < p; i++) {
        off[i] = total;
        total += sz * (size_t)rcounts[i];
    }
    off[p] = total;
    char *all = xmalloc(total);
    if (send == MPI_IN_PLACE)
        pack_to(at(recv, rtype, (size_t)displs[rank]), rcounts[rank], rtype, all + off[rank]);
    else
        pack_to(send, scount, stype, all + off[rank]);
    int left = (rank - 1 + p) % p, right = (rank + 1) % p;
    for (int i = 0; i < p - 1; i++) {
        int sb = (rank - i + p) % p, rb = (rank - i - 1 + p) % p;
        bsendrecv(all + off[sb], off[sb + 1] - off[sb], right, all + off[rb],
                  off[rb + 1] - off[rb], left, c);
    }
    for (int i = 0; i < p; i++)
        unpack_from(all + off[i], at(recv, rtype, (size_t)displs[i]), rcounts[i], rtype);
    free(all);
    free(off);
    END();
}

int MPI_Alltoallv(const void *send, const int scounts[], const int sdispls[], MPI_Datatype stype,
                  void *recv, const int rcounts[], const int rdispls[], MPI_Datatype rtype,
                  MPI_Comm comm)
{
    BEGIN("MPI_Alltoallv");
    if (send == MPI_IN_PLACE)
        pm_fatal("MPI_IN_PLACE is not modelled for MPI_Alltoallv");
    int p = c->size, rank = c->rank;
    MPI_Request *r = xmalloc(sizeof(MPI_Request) * 2 * (size_t)p);
    int k = 0;
    pm_local_copy(at(send, stype, (size_t)sdispls[rank]), scounts[rank], stype,
                  at(recv, rtype, (size_t)rdispls[rank]), rcounts[rank], rtype);
    for (int i = 1; i < p; i++) {
        int src = (rank - i + p) % p;
        pm_irecv(at(recv, rtype, (size_t)rdispls[src]), rcounts[src], rtype, src, TAG, c, 1, &r[k++]);
    }
    for (int i = 1; i < p; i++) {
        int dst = (rank + i) % p;
        pm_isend(at(send, stype, (size_t)sdispls[dst]), scounts[dst], stype, dst, TAG, c, 1, 0,
                 &r[k++]);
    }
    c_waitall(k, r, MPI_STATUSES_IGNORE);
    free(r);
    END();
}

/* ---- Reduce_scatter (typed) ---------------------------------------------------------- */

/* MPICH's (MVAPICH2 2.x's) switch on the total bytes for commutative ops
 * (MPIR_CVAR_REDSCAT_COMMUTATIVE_LONG_MSG_SIZE). */
#define REDSCAT_LONG 524288

/* Reduce-scatter by recursive halving over pof2 ranks (commutative ops):
 * newrank i owns block i, elements [disps[i], disps[i + 1]) of t in acc; at each
 * step (mask pof2/2 down to 1) a rank keeps the half of its current range
 * that holds its own block, sends the other half to newrank ^ mask and
 * reduces the half it gets into acc. Ends with acc's block newrank reduced
 * over all pof2 ranks. tmp is scratch of acc's size. */
static void rs_halving(void *acc, void *tmp, MPI_Datatype t, MPI_Op op, const int *disps,
                       int pof2, int newrank, int rem, pm_comm *c)
{
    int send_idx = 0, recv_idx = 0, last_idx = pof2;
    for (int mask = pof2 >> 1; mask > 0; mask >>= 1) {
        int newdst = newrank ^ mask, dst = newdst < rem ? newdst * 2 + 1 : newdst + rem;
        int send_end, recv_end;
        if (newrank < newdst) {
            send_idx = recv_idx + mask;
            send_end = last_idx;
            recv_end = send_idx;
        } else {
            recv_idx = send_idx + mask;
            send_end = recv_idx;
            recv_end = last_idx;
        }
        int send_cnt = disps[send_end] - disps[send_idx], recv_cnt = disps[recv_end] - disps[recv_idx];
        c_sendrecv(at(acc, t, (size_t)disps[send_idx]), send_cnt, t, dst, TAG,
                   at(tmp, t, (size_t)disps[recv_idx]), recv_cnt, t, dst, TAG, c, 1,
                   MPI_STATUS_IGNORE);
        c_reduce_local(at(tmp, t, (size_t)disps[recv_idx]), at(acc, t, (size_t)disps[recv_idx]),
                       recv_cnt, t, op);
        send_idx = recv_idx;
        last_idx = recv_idx + mask;
    }
}

/* Rabenseifner's reduce (MPICH's "reduce-scatter + gather", commutative ops,
 * above REDUCE_SHORT bytes and at least pof2 elements): the extra ranks of a
 * non-power-of-two fold in as in the allreduce, a reduce-scatter by
 * recursive halving leaves newrank i with block i of count / pof2 elements
 * (the last takes the remainder), and a binomial gather towards the root's
 * newrank doubles the contiguous run of blocks each survivor holds at each
 * step. A folded-out root takes its partner's place in the gather. MPICH pairs the
 * other way round (odd ranks fold into even ones; halving starts at distance
 * 1): the same messages and sizes per step between other partners, which
 * with one IB switch per rail changes no step's path. */
static void reduce_rabenseifner(void *acc, int count, MPI_Datatype t, MPI_Op op, int root,
                                pm_comm *c)
{
    int p = c->size, rank = c->rank;
    int pof2 = pof2_below(p), rem = p - pof2, newrank;
    void *tmp_s;
    void *tmp = pm_type_buffer(t, count, &tmp_s);
    newrank = fold_in(acc, tmp_s, count, t, op, rem, c);
    int newroot = root < 2 * rem ? root / 2 : root - rem;
    int root_out = root < 2 * rem && root % 2 == 0; /* folded out: root + 1 stands for it */
    int *disps = xmalloc(sizeof(int) * (size_t)(pof2 + 1));
    for (int i = 0; i < pof2; i++)
        disps[i] = i * (count / pof2);
    disps[pof2] = count; /* the last block takes the remainder */
    if (newrank != -1)
        rs_halving(acc, tmp_s, t, op, disps, pof2, newrank, rem, c);
    /* A folded-out root takes over its partner's role in the gather once it
     * has the partner's reduced block (MPICH does the same with newrank 0). */
    if (root_out && rank == root + 1) {
        c_send(at(acc, t, (size_t)disps[newroot]), disps[newroot + 1] - disps[newroot], t, root,
               TAG, c, 1);
        newrank = -1;
    } else if (root_out && rank == root) {
        c_recv(at(acc, t, (size_t)disps[newroot]), disps[newroot + 1] - disps[newroot], t,
               root + 1, TAG, c, 1, MPI_STATUS_IGNORE);
        newrank = newroot;
    }
    /* gather: before step mask each survivor holds the blocks of its aligned
     * run of mask newranks */
    for (int mask = 1; newrank != -1 && mask < pof2; mask <<= 1) {
        int newdst = newrank ^ mask, dst = newdst < rem ? newdst * 2 + 1 : newdst + rem;
        if (newdst == newroot && root_out)
            dst = root;
        if ((newrank & mask) != (newroot & mask)) {
            int lo = newrank & ~(mask - 1);
            c_send(at(acc, t, (size_t)disps[lo]), disps[lo + mask] - disps[lo], t, dst, TAG, c, 1);
            break;
        }
        int lo = newdst & ~(mask - 1);
        c_recv(at(acc, t, (size_t)disps[lo]), disps[lo + mask] - disps[lo], t, dst, TAG, c, 1,
               MPI_STATUS_IGNORE);
    }
    free(disps);
    free(tmp);
}

/* Commutative, total below REDSCAT_LONG. Non-power-of-two: the first 2 * rem
 * ranks pair up, the even one hands its whole vector to the odd one, which
 * stands for both in the halving and hands the even one its block at the end. */
static void redscat_halving(void *acc, void *tmp, void *recv, const int counts[],
                            const int displs[], MPI_Datatype t, MPI_Op op, pm_comm *c)
{
    int p = c->size, rank = c->rank, total = displs[p - 1] + counts[p - 1];
    int pof2 = pof2_below(p), rem = p - pof2, newrank;
    if (rank < 2 * rem) {
        if (rank % 2 == 0) {
            c_send(acc, total, t, rank + 1, TAG, c, 1);
            c_recv(recv, counts[rank], t, rank + 1, TAG, c, 1, MPI_STATUS_IGNORE);
            return;
        }
        c_recv(tmp, total, t, rank - 1, TAG, c, 1, MPI_STATUS_IGNORE);
        c_reduce_local(tmp, acc, total, t, op);
        newrank = rank / 2;
    } else {
        newrank = rank - rem;
    }
    int *disps = xmalloc(sizeof(int) * (size_t)(pof2 + 1));
    for (int i = 0; i < pof2; i++)
        disps[i] = displs[i < rem ? 2 * i : i + rem]; /* the lowest real rank newrank i stands for */
    disps[pof2] = total;
    rs_halving(acc, tmp, t, op, disps, pof2, newrank, rem, c);
    if (rank < 2 * rem) {
        c_send(at(acc, t, (size_t)displs[rank - 1]), counts[rank - 1], t, rank - 1, TAG, c, 1);
    }
    pm_local_copy(at(acc, t, (size_t)displs[rank]), counts[rank], t, recv, counts[rank], t);
    free(disps);
}

/* Commutative, total at or above REDSCAT_LONG: p - 1 steps; at step i a rank
 * sends its input's block for rank + i straight to it and reduces the block
 * it gets from rank - i into its own. With MPI_IN_PLACE (in == recv) the
 * result builds up in the input's own block, which is never sent, and moves
 * to the front at the end. */
static void redscat_pairwise(const void *in, void *tmp, void *recv, const int counts[],
                             const int displs[], MPI_Datatype t, MPI_Op op, pm_comm *c)
{
    int p = c->size, rank = c->rank;
    void *res = recv;
    if (in == recv)
        res = at(recv, t, (size_t)displs[rank]);
    else
        pm_local_copy(at(in, t, (size_t)displs[rank]), counts[rank], t, recv, counts[rank], t);
    for (int i = 1; i < p; i++) {
        int dst = (rank + i) % p, src = (rank - i + p) % p;
        c_sendrecv(at(in, t, (size_t)displs[dst]), counts[dst], t, dst, TAG, tmp, counts[rank], t,
                   src, TAG, c, 1, MPI_STATUS_IGNORE);
        c_reduce_local(tmp, res, counts[rank], t, op);
    }
    if (res != recv)
        pm_local_copy(res, counts[rank], t, recv, counts[rank], t);
}

/* Non-commutative, power of two, equal blocks (MPICH's "noncomm" variant):
 * the blocks are laid out in bit-reversed order so that recursive halving
 * with partners rank ^ 1, ^ 2, ... keeps each step's partial result a
 * reduction over a contiguous run of ranks, combined in rank order. Two
 * buffers alternate as input and output. */
static int mirror(int x, int bits)
{
    int r = 0;
    for (int i = 0; i < bits; i++)
        if (x & (1 << i))
            r |= 1 << (bits - 1 - i);
    return r;
}

static void redscat_noncomm(const void *in, void *tmp, void *recv, int blkcnt, MPI_Datatype t,
                            MPI_Op op, pm_comm *c)
{
    int p = c->size, rank = c->rank, bits = 0;
    while ((1 << bits) < p)
        bits++;
    void *b0_s, *b0 = pm_type_buffer(t, blkcnt * p, &b0_s);
    void *bufs[2] = {b0_s, tmp};
    for (int i = 0; i < p; i++)
        pm_local_copy(at(in, t, (size_t)i * (size_t)blkcnt), blkcnt, t,
                      at(b0_s, t, (size_t)mirror(i, bits) * (size_t)blkcnt), blkcnt, t);
    int inout = 0; /* bufs[inout] holds this rank's partial result */
    size_t send_off = 0, recv_off = 0, size = (size_t)blkcnt * (size_t)p;
    for (int k = 0; k < bits; k++) {
        void *out = bufs[inout], *in = bufs[!inout];
        int peer = rank ^ (1 << k);
        size /= 2;
        if (rank > peer)
            recv_off += size; /* keep the top half */
        else
            send_off += size;
        c_sendrecv(at(out, t, send_off), (int)size, t, peer, TAG, at(in, t, recv_off), (int)size, t,
                   peer, TAG, c, 1, MPI_STATUS_IGNORE);
        if (rank > peer) {
            c_reduce_local(at(in, t, recv_off), at(out, t, recv_off), (int)size, t, op);
        } else {
            c_reduce_local(at(out, t, recv_off), at(in, t, recv_off), (int)size, t, op);
            inout = !inout;
        }
        send_off = recv_off;
    }
    pm_local_copy(at(bufs[inout], t, recv_off), (int)size, t, recv, (int)size, t);
    free(b0);
}

/* An indexed type of two runs of t: [0, a) and [b, total) in elements. */
static MPI_Datatype two_runs(int a, int b, int total, MPI_Datatype t)
{
    MPI_Datatype nt;
    int lens[2] = {a, total - b}, disps[2] = {0, b};
    PMPI_Type_indexed(2, lens, disps, t, &nt);
    PMPI_Type_commit(&nt);
    return nt;
}

/* Non-commutative otherwise (MPICH's recursive doubling): at step mask a rank
 * swaps with rank ^ mask everything but the blocks of its own subtree of
 * size mask (it receives all but the partner's subtree's) and combines in
 * subtree order. With a non-power-of-two the ranks whose partner does not
 * exist get the partner subtree's data from a rank of their own subtree
 * that has it, down a binomial tree. acc is the rank's full vector. */
static void redscat_doubling(void *acc, void *tmp, void *recv, const int counts[],
                             const int displs[], MPI_Datatype t, MPI_Op op, pm_comm *c)
{
    int p = c->size, rank = c->rank, total = displs[p - 1] + counts[p - 1];
#define DISP(r) ((r) < p ? displs[r] : total)
    for (int mask = 1, i = 0; mask < p; mask <<= 1, i++) {
        int dst = rank ^ mask;
        int dst_root = dst >> i << i, my_root = rank >> i << i;
        int s_a = DISP(my_root), s_b = DISP(my_root + mask);
        int r_a = DISP(dst_root), r_b = DISP(dst_root + mask);
        MPI_Datatype st = two_runs(s_a, s_b, total, t), rt = two_runs(r_a, r_b, total, t);
        int got = 0;
        if (dst < p) {
            c_sendrecv(acc, 1, st, dst, TAG, tmp, 1, rt, dst, TAG, c, 1, MPI_STATUS_IGNORE);
            got = 1;
        }
        if (dst_root + mask > p) {
            /* ranks [my_root, my_root + done) have the partner subtree's data */
            int done = p - my_root - mask, k = 0;
            for (int j = mask; j > 1; j >>= 1)
                k++;
            for (int m = mask >> 1; m > 0; m >>= 1, k--) {
                int d = rank ^ m, root = rank >> k << k;
                if (d > rank && rank < root + done && d >= root + done && d < p)
                    c_send(tmp, 1, rt, d, TAG, c, 1);
                else if (d < rank && d < root + done && rank >= root + done) {
                    c_recv(tmp, 1, rt, d, TAG, c, 1, MPI_STATUS_IGNORE);
                    got = 1;
                }
            }
        }
        if (got) {
            if (dst_root < my_root) { /* theirs are the lower ranks: acc = tmp op acc */
                c_reduce_local(tmp, acc, r_a, t, op);
                c_reduce_local(at(tmp, t, (size_t)r_b), at(acc, t, (size_t)r_b), total - r_b, t, op);
            } else {
                c_reduce_local(acc, tmp, r_a, t, op);
                c_reduce_local(at(acc, t, (size_t)r_b), at(tmp, t, (size_t)r_b), total - r_b, t, op);
                pm_local_copy(tmp, 1, rt, acc, 1, rt);
            }
        }
        PMPI_Type_free(&st);
        PMPI_Type_free(&rt);
    }
#undef DISP
    pm_local_copy(at(acc, t, (size_t)displs[rank]), counts[rank], t, recv, counts[rank], t);
}

/* MPICH's selection (MVAPICH2 2.x inter-node): commutative ops by recursive
 * halving below REDSCAT_LONG total bytes, pairwise exchange at or above;
 * non-commutative ops by the bit-reversed halving for a power of two with
 * equal blocks, recursive doubling otherwise. */
static void reduce_scatter(const void *send, void *recv, const int counts[], MPI_Datatype t,
                           MPI_Op op, pm_comm *c)
{
    int p = c->size, total = 0, regular = 1;
    int *displs = xmalloc(sizeof(int) * (size_t)p);
    for (int i = 0; i < p; i++) {
        if (counts[i] < 0)
            pm_fatal("recvcounts[%d] is %d (MPI_ERR_COUNT)", i, counts[i]);
        displs[i] = total;
        total += counts[i];
        regular &= counts[i] == counts[0];
    }
    const void *in = send == MPI_IN_PLACE ? recv : send;
    if (p == 1) {
        if (send != MPI_IN_PLACE)
            pm_local_copy(in, total, t, recv, total, t);
        free(displs);
        return;
    }
    void *tmp_s, *acc_s;
    void *tmp = pm_type_buffer(t, total, &tmp_s), *acc = NULL;
    int cm = commutative(op);
    if (cm && pm_type_size(t) * (size_t)total >= REDSCAT_LONG) {
        redscat_pairwise(in, tmp_s, recv, counts, displs, t, op, c);
    } else if (!cm && (p & (p - 1)) == 0 && regular) {
        redscat_noncomm(in, tmp_s, recv, counts[0], t, op, c);
    } else {
        acc = pm_type_buffer(t, total, &acc_s);
        pm_local_copy(in, total, t, acc_s, total, t);
        if (cm)
            redscat_halving(acc_s, tmp_s, recv, counts, displs, t, op, c);
        else
            redscat_doubling(acc_s, tmp_s, recv, counts, displs, t, op, c);
    }
    free(acc);
    free(tmp);
    free(displs);
}

int MPI_Reduce_scatter(const void *send, void *recv, const int rcounts[], MPI_Datatype type,
                       MPI_Op op, MPI_Comm comm)
{
    BEGIN("MPI_Reduce_scatter");
    reduce_scatter(send, recv, rcounts, type, op, c);
    END();
}

int MPI_Reduce_scatter_block(const void *send, void *recv, int rcount, MPI_Datatype type,
                             MPI_Op op, MPI_Comm comm)
{
    BEGIN("MPI_Reduce_scatter_block");
    int *counts = xmalloc(sizeof(int) * (size_t)c->size);
    for (int i = 0; i < c->size; i++)
        counts[i] = rcount;
    reduce_scatter(send, recv, counts, type, op, c);
    free(counts);
    END();
}

/* Recursive doubling scan: partial = the ranks below and this one. */
static void scan(const void *send, void *recv, int count, MPI_Datatype t, MPI_Op op, pm_comm *c,
                 int exclusive)
{
    void *part_s, *tmp_s;
    void *part = pm_type_buffer(t, count, &part_s), *tmp = pm_type_buffer(t, count, &tmp_s);
    pm_local_copy(send == MPI_IN_PLACE ? recv : send, count, t, part_s, count, t);
    int have = !exclusive; /* recv holds something yet */
    if (!exclusive)
        pm_local_copy(part_s, count, t, recv, count, t);
    for (int mask = 1; mask < c->size; mask <<= 1) {
        int dst = c->rank ^ mask;
        if (dst >= c->size)
            continue;
        c_sendrecv(part_s, count, t, dst, TAG, tmp_s, count, t, dst, TAG, c, 1, MPI_STATUS_IGNORE);
        if (dst < c->rank) {
            c_reduce_local(tmp_s, part_s, count, t, op); /* part = lower op part */
            if (have)
                c_reduce_local(tmp_s, recv, count, t, op);
            else
                pm_local_copy(tmp_s, count, t, recv, count, t);
            have = 1;
        } else {
            combine(tmp_s, part_s, count, t, op, 0); /* part = part op higher */
        }
    }
    free(part);
    free(tmp);
}

int MPI_Scan(const void *send, void *recv, int count, MPI_Datatype type, MPI_Op op, MPI_Comm comm)
{
    BEGIN("MPI_Scan");
    scan(send, recv, count, type, op, c, 0);
    END();
}

int MPI_Exscan(const void *send, void *recv, int count, MPI_Datatype type, MPI_Op op,
               MPI_Comm comm)
{
    BEGIN("MPI_Exscan");
    scan(send, recv, count, type, op, c, 1);
    END();
}
