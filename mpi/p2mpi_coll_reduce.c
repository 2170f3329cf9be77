/*
 * p2mpi_coll_reduce.c - the collective algorithms that reduce: binomial
 * reduce, Rabenseifner's reduce, allreduce by recursive doubling and by
 * Rabenseifner, and the reduce-scatter by recursive halving they share with
 * MPI_Reduce_scatter (selection and thresholds: p2mpi_coll_internal.h).
 * Depends on p2mpi_coll_base.c and the units below it.
 */
#define _GNU_SOURCE
#include "p2mpi_coll_internal.h"

#include <stdlib.h>

/* ---- Reduce, Allreduce (typed) ------------------------------------------------- */

/* Binomial reduce of acc (count of t, typed layout) to `root`. */
void reduce_binomial(void *acc, int count, MPI_Datatype t, MPI_Op op, int root, pm_comm *c)
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
void allreduce(void *acc, int count, MPI_Datatype t, MPI_Op op, pm_comm *c)
{
    if (c->size > 1 && pm_type_size(t) * (size_t)count > ALLREDUCE_SHORT && commutative(op) &&
        count >= pof2_below(c->size))
        allreduce_rabenseifner(acc, count, t, op, c);
    else
        allreduce_rd(acc, count, t, op, c);
}

/* ---- Rabenseifner's reduce (reduce-scatter + gather) ------------------------------- */

/* Reduce-scatter by recursive halving over pof2 ranks (commutative ops):
 * newrank i owns block i, elements [disps[i], disps[i + 1]) of t in acc; at each
 * step (mask pof2/2 down to 1) a rank keeps the half of its current range
 * that holds its own block, sends the other half to newrank ^ mask and
 * reduces the half it gets into acc. Ends with acc's block newrank reduced
 * over all pof2 ranks. tmp is scratch of acc's size. */
void rs_halving(void *acc, void *tmp, MPI_Datatype t, MPI_Op op, const int *disps,
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
void reduce_rabenseifner(void *acc, int count, MPI_Datatype t, MPI_Op op, int root,
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

/* ---- Internal helper for communicator creation ------------------------------------- */

void pm_coll_allreduce_int_max(const int *mine, int *out, pm_comm *c)
{
    *out = *mine;
    allreduce_rd(out, 1, MPI_INT, MPI_MAX, c);
}
