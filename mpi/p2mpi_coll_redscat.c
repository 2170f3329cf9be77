/*
 * p2mpi_coll_redscat.c - MPI_Reduce_scatter and _Reduce_scatter_block
 * (recursive halving, pairwise exchange, MPICH's non-commutative variants)
 * and MPI_Scan and _Exscan (recursive doubling). Depends on
 * p2mpi_coll_reduce.c (the halving) and the units below it.
 */
#define _GNU_SOURCE
#include "p2mpi_coll_internal.h"

#include <stdlib.h>

/* ---- Reduce_scatter (typed) ---------------------------------------------------------- */

/* MPICH's (MVAPICH2 2.x's) switch on the total bytes for commutative ops
 * (MPIR_CVAR_REDSCAT_COMMUTATIVE_LONG_MSG_SIZE). */
#define REDSCAT_LONG 524288

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

void pm_coll_reduce_scatter(const void *send, void *recv, const int counts[], MPI_Datatype t,
                            MPI_Op op, pm_comm *c)
{
    pm_need_counts(counts, c->size, "recvcounts");
    sig_set_counts(counts, c->size, t, op);
    reduce_scatter(send, recv, counts, t, op, c);
}

int MPI_Reduce_scatter(const void *send, void *recv, const int rcounts[], MPI_Datatype type,
                       MPI_Op op, MPI_Comm comm)
{
    BEGIN("MPI_Reduce_scatter");
    pm_coll_reduce_scatter(send, recv, rcounts, type, op, c);
    END();
}

void pm_coll_reduce_scatter_block(const void *send, void *recv, int rcount, MPI_Datatype type,
                                  MPI_Op op, pm_comm *c)
{
    pm_need_count(rcount, "recvcount");
    sig_set(PM_SIG_REDSCAT_BLOCK, -1, type, rcount, op);
    int *counts = xmalloc(sizeof(int) * (size_t)c->size);
    for (int i = 0; i < c->size; i++)
        counts[i] = rcount;
    reduce_scatter(send, recv, counts, type, op, c);
    free(counts);
}

int MPI_Reduce_scatter_block(const void *send, void *recv, int rcount, MPI_Datatype type,
                             MPI_Op op, MPI_Comm comm)
{
    BEGIN("MPI_Reduce_scatter_block");
    pm_coll_reduce_scatter_block(send, recv, rcount, type, op, c);
    END();
}

/* ---- Scan, Exscan (typed) ------------------------------------------------------------ */

/* Recursive doubling scan: partial = the ranks below and this one. */
void pm_coll_scan(const void *send, void *recv, int count, MPI_Datatype t, MPI_Op op, pm_comm *c,
                  int exclusive)
{
    pm_need_count(count, "count");
    sig_set(exclusive ? PM_SIG_EXSCAN : PM_SIG_SCAN, -1, t, count, op);
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
    pm_coll_scan(send, recv, count, type, op, c, 0);
    END();
}

int MPI_Exscan(const void *send, void *recv, int count, MPI_Datatype type, MPI_Op op,
               MPI_Comm comm)
{
    BEGIN("MPI_Exscan");
    pm_coll_scan(send, recv, count, type, op, c, 1);
    END();
}
