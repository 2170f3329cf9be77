/*
 * mpi_calls_coll.c - mpi_calls' collectives: every collective call on a
 * communicator with user ops (commutative and not), and each algorithm the
 * layer selects on both sides of its thresholds, every result checked.
 */
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "mpi_calls.h"

/* A non-commutative user op: 2x2 matrix product (order matters). */
static void matmul(void *in, void *inout, int *len, MPI_Datatype *t)
{
    (void)t;
    long *a = in, *b = inout;
    for (int k = 0; k < *len; k++, a += 4, b += 4) {
        long c[4] = {a[0] * b[0] + a[1] * b[2], a[0] * b[1] + a[1] * b[3],
                     a[2] * b[0] + a[3] * b[2], a[2] * b[1] + a[3] * b[3]};
        memcpy(b, c, sizeof c);
    }
}

/* A non-commutative op on 2x2 matrices of unsigned long (wrapping, so long
 * products stay defined): inout = in * inout. */
static void umatmul(void *in, void *inout, int *len, MPI_Datatype *t)
{
    (void)t;
    unsigned long *a = in, *b = inout;
    for (int k = 0; k < *len; k++, a += 4, b += 4) {
        unsigned long c[4] = {a[0] * b[0] + a[1] * b[2], a[0] * b[1] + a[1] * b[3],
                              a[2] * b[0] + a[3] * b[2], a[2] * b[1] + a[3] * b[3]};
        memcpy(b, c, sizeof c);
    }
}

/* A commutative user op: element-wise max of longs over any contiguous type. */
static void lmax(void *in, void *inout, int *len, MPI_Datatype *t)
{
    int sz;
    MPI_Type_size(*t, &sz);
    long *a = in, *b = inout;
    for (long k = 0; k < (long)*len * sz / (long)sizeof(long); k++)
        if (a[k] > b[k])
            b[k] = a[k];
}

/* rank r's matrix for element j */
static void umat(int r, int j, unsigned long m[4])
{
    m[0] = (unsigned long)r + 2, m[1] = (unsigned long)(j % 5) + 1, m[2] = 1, m[3] = (unsigned long)(j % 3);
}

/* The product over ranks 0..p-1 in order of umat(r, j). */
static void uexpect(int p, int j, unsigned long e[4])
{
    e[0] = 1, e[1] = 0, e[2] = 0, e[3] = 1;
    for (int r = 0; r < p; r++) {
        unsigned long m[4];
        umat(r, j, m);
        umatmul(e, m, &(int){1}, NULL); /* m = e * m */
        memcpy(e, m, sizeof m);
    }
}

/* Each collective algorithm the layer selects, on both sides of each MPICH
 * threshold (README.md's table): Reduce_scatter(_block) by recursive halving
 * (< 512 KiB total), pairwise (>= 512 KiB), the non-commutative halving
 * (power of two, equal blocks) and recursive doubling (otherwise);
 * Allgather by recursive doubling, Bruck and ring (81920 / 524288 B total);
 * Alltoall by Bruck (<= 256 B blocks at >= 8 ranks), isend/irecv and
 * pairwise; Reduce by Rabenseifner (> 2 KiB, count >= pof2) and binomial,
 * every root. MPI_IN_PLACE where MPI allows it. */
void algorithms(MPI_Comm comm, const char *name)
{
    int me, p, pof2 = 1;
    MPI_Comm_rank(comm, &me);
    MPI_Comm_size(comm, &p);
    while (pof2 * 2 <= p)
        pof2 *= 2;
    /* Reduce_scatter_block / Reduce_scatter, commutative: n ints per rank just
     * below and just above 512 KiB in all, and odd irregular counts */
    int below = 131072 / p - 1, above = 131072 / p + 5;
    for (int n = below; n <= above; n += above - below) {
        int *v = malloc(sizeof(int) * (size_t)n * (size_t)p), *r = malloc(sizeof(int) * (size_t)n);
        for (int i = 0; i < n * p; i++)
            v[i] = i * 3 + me;
        MPI_Reduce_scatter_block(v, r, n, MPI_INT, MPI_SUM, comm);
        for (int i = 0; i < n; i++)
            REQUIRE(r[i] == p * ((me * n + i) * 3) + p * (p - 1) / 2);
        int *counts = malloc(sizeof(int) * (size_t)p);
        for (int q = 0; q < p; q++)
            counts[q] = n - (q % 3) * 2; /* odd, irregular, total still on its side */
        int off = 0;
        for (int q = 0; q < me; q++)
            off += counts[q];
        MPI_Reduce_scatter(MPI_IN_PLACE, v, counts, MPI_INT, MPI_MAX, comm);
        for (int i = 0; i < counts[me]; i++)
            REQUIRE(v[i] == (off + i) * 3 + p - 1);
        free(counts);
        free(v);
        free(r);
    }
    /* non-commutative: equal blocks (the bit-reversed halving at a power of
     * two, recursive doubling otherwise) and irregular counts (doubling) */
    MPI_Op uop;
    MPI_Op_create(umatmul, 0, &uop);
    MPI_Datatype m4;
    MPI_Type_contiguous(4, MPI_UNSIGNED_LONG, &m4);
    MPI_Type_commit(&m4);
    for (int irregular = 0; irregular <= 1; irregular++) {
        int *counts = malloc(sizeof(int) * (size_t)p), total = 0, off = 0;
        for (int q = 0; q < p; q++) {
            counts[q] = irregular ? q % 3 + 1 : 3;
            if (q < me)
                off += counts[q];
            total += counts[q];
        }
        unsigned long *v = malloc(sizeof(unsigned long) * 4 * (size_t)total);
        unsigned long *r = malloc(sizeof(unsigned long) * 4 * (size_t)counts[me]);
        for (int j = 0; j < total; j++)
            umat(me, j, v + 4 * j);
        if (irregular)
            MPI_Reduce_scatter(v, r, counts, m4, uop, comm);
        else
            MPI_Reduce_scatter_block(v, r, 3, m4, uop, comm);
        for (int i = 0; i < counts[me]; i++) {
            unsigned long e[4];
            uexpect(p, off + i, e);
            REQUIRE(memcmp(r + 4 * i, e, sizeof e) == 0);
        }
        /* in place */
        MPI_Reduce_scatter(MPI_IN_PLACE, v, counts, m4, uop, comm);
        for (int i = 0; i < counts[me]; i++) {
            unsigned long e[4];
            uexpect(p, off + i, e);
            REQUIRE(memcmp(v + 4 * i, e, sizeof e) == 0);
        }
        free(v);
        free(r);
        free(counts);
    }
    /* Reduce: longs, 2048 B (binomial) and 2056 B (Rabenseifner), an odd
     * count (1001, not a multiple of pof2), every root, in place at the
     * root; then a 2400-byte type with count < pof2 (binomial; a commutative
     * user op, as Open MPI's MPI_MAX refuses derived types) */
    int rn[] = {256, 257, 1001};
    for (int k = 0; k < 3; k++) {
        int n = rn[k];
        long *v = malloc(sizeof(long) * (size_t)n), *out = malloc(sizeof(long) * (size_t)n);
        for (int root = 0; root < p; root++) {
            for (int i = 0; i < n; i++)
                v[i] = (long)me * 1000 + i + root;
            if (me == root && root % 2) {
                memcpy(out, v, sizeof(long) * (size_t)n);
                MPI_Reduce(MPI_IN_PLACE, out, n, MPI_LONG, MPI_SUM, root, comm);
            } else {
                MPI_Reduce(v, out, n, MPI_LONG, MPI_SUM, root, comm);
            }
            if (me == root)
                for (int i = 0; i < n; i++)
                    REQUIRE(out[i] == (long)p * (p - 1) / 2 * 1000 + (long)p * (i + root));
        }
        free(v);
        free(out);
    }
    MPI_Datatype big;
    MPI_Type_contiguous(300, MPI_LONG, &big);
    MPI_Type_commit(&big);
    long *bv = malloc(sizeof(long) * 300 * 3), *bo = malloc(sizeof(long) * 300 * 3);
    for (int i = 0; i < 900; i++)
        bv[i] = me + i;
    int bc = pof2 > 1 ? pof2 - 1 : 1;
    MPI_Op maxop;
    MPI_Op_create(lmax, 1, &maxop);
    MPI_Reduce(bv, bo, bc > 3 ? 3 : bc, big, maxop, p - 1, comm);
    MPI_Op_free(&maxop);
    if (me == p - 1)
        for (int i = 0; i < 300 * (bc > 3 ? 3 : bc); i++)
            REQUIRE(bo[i] == p - 1 + i);
    free(bv);
    free(bo);
    /* Allgather: bytes per rank so the total lies just below and above
     * 81920 and 524288; in place for odd sizes */
    int ag[] = {1, 81919 / p, 81920 / p + 1, 524287 / p, 524288 / p + 1};
    for (int k = 0; k < 5; k++) {
        int n = ag[k];
        unsigned char *all = malloc((size_t)n * (size_t)p);
        memset(all, 0, (size_t)n * (size_t)p);
        if (n % 2) {
            fill(all + (size_t)me * (size_t)n, (size_t)n, me, 21);
            MPI_Allgather(MPI_IN_PLACE, 0, MPI_DATATYPE_NULL, all, n, MPI_BYTE, comm);
        } else {
            unsigned char *mine = malloc((size_t)n);
            fill(mine, (size_t)n, me, 21);
            MPI_Allgather(mine, n, MPI_BYTE, all, n, MPI_BYTE, comm);
            free(mine);
        }
        for (int q = 0; q < p; q++)
            REQUIRE(ok(all + (size_t)q * (size_t)n, (size_t)n, q, 21));
        free(all);
    }
    /* Alltoall: blocks of 1, 255, 256, 257 (Bruck up to 256 at >= 8 ranks),
     * 32768, 32769 bytes (isend/irecv, then pairwise); in place at 257 */
    int aa[] = {1, 255, 256, 257, 32768, 32769};
    for (int k = 0; k < 6; k++) {
        size_t n = (size_t)aa[k];
        unsigned char *sb = malloc(n * (size_t)p), *rb = malloc(n * (size_t)p);
        for (int q = 0; q < p; q++)
            fill(sb + (size_t)q * n, n, me * 16 + q, 22);
        memset(rb, 0, n * (size_t)p);
        if (n == 257)
            MPI_Alltoall(MPI_IN_PLACE, 0, MPI_DATATYPE_NULL, sb, (int)n, MPI_BYTE, comm);
        else
            MPI_Alltoall(sb, (int)n, MPI_BYTE, rb, (int)n, MPI_BYTE, comm);
        unsigned char *got = n == 257 ? sb : rb;
        for (int q = 0; q < p; q++)
            REQUIRE(ok(got + (size_t)q * n, n, q * 16 + me, 22));
        free(sb);
        free(rb);
    }
    MPI_Type_free(&big);
    MPI_Type_free(&m4);
    MPI_Op_free(&uop);
    if (me == 0)
        printf("collective algorithms on %s (%d ranks): Reduce_scatter(_block) halving, pairwise, "
               "non-commutative halving and doubling, in place; Allgather recursive doubling, "
               "Bruck, ring; Alltoall Bruck, isend/irecv, pairwise; Reduce Rabenseifner and "
               "binomial, every root: ok\n", name, p);
}

void collectives(MPI_Comm comm, const char *name)
{
    int me, p;
    MPI_Comm_rank(comm, &me);
    MPI_Comm_size(comm, &p);
    MPI_Barrier(comm);
    /* Bcast: small (binomial) and large (scatter + ring allgather), each root */
    int big = 50001;
    unsigned char *b = malloc((size_t)big);
    for (int root = 0; root < p; root++) {
        for (int n = 13; n <= big; n += big - 13) {
            if (me == root)
                fill(b, (size_t)n, root, 1);
            else
                memset(b, 0, (size_t)n);
            MPI_Bcast(b, n, MPI_BYTE, root, comm);
            REQUIRE(ok(b, (size_t)n, root, 1));
        }
    }
    /* Reduce / Allreduce: sums of odd counts, both sizes */
    for (int n = 3; n <= 5003; n += 5000) {
        long *v = malloc(sizeof(long) * (size_t)n), *out = malloc(sizeof(long) * (size_t)n);
        for (int i = 0; i < n; i++)
            v[i] = me * 1000 + i;
        MPI_Allreduce(v, out, n, MPI_LONG, MPI_SUM, comm);
        for (int i = 0; i < n; i++)
            REQUIRE(out[i] == (long)p * (p - 1) / 2 * 1000 + (long)p * i);
        int root = p / 2;
        memset(out, 0, sizeof(long) * (size_t)n);
        MPI_Reduce(v, out, n, MPI_LONG, MPI_MAX, root, comm);
        if (me == root)
            for (int i = 0; i < n; i++)
                REQUIRE(out[i] == (long)(p - 1) * 1000 + i);
        memcpy(out, v, sizeof(long) * (size_t)n);
        MPI_Allreduce(MPI_IN_PLACE, out, n, MPI_LONG, MPI_MIN, comm);
        REQUIRE(out[n - 1] == n - 1);
        free(v);
        free(out);
    }
    /* non-commutative user op: product of [[1,r],[0,1]] matrices in rank order */
    MPI_Op op;
    MPI_Op_create(matmul, 0, &op);
    MPI_Datatype m4;
    MPI_Type_contiguous(4, MPI_LONG, &m4);
    MPI_Type_commit(&m4);
    long mat[4] = {1, me + 1, 0, 1}, prod[4];
    MPI_Allreduce(mat, prod, 1, m4, op, comm);
    REQUIRE(prod[0] == 1 && prod[1] == (long)p * (p + 1) / 2 && prod[2] == 0 && prod[3] == 1);
    long matb[4] = {me + 2, 1, 1, 0}, prodb[4], expect[4] = {1, 0, 0, 1};
    for (int r = 0; r < p; r++) {
        long m[4] = {r + 2, 1, 1, 0};
        matmul(expect, m, &(int){1}, NULL); /* m = expect * m */
        memcpy(expect, m, sizeof m);
    }
    MPI_Reduce(matb, prodb, 1, m4, op, p - 1, comm);
    if (me == p - 1)
        REQUIRE(memcmp(prodb, expect, sizeof expect) == 0);
    MPI_Allreduce(matb, prodb, 1, m4, op, comm);
    REQUIRE(memcmp(prodb, expect, sizeof expect) == 0);
    /* Scan and Exscan of the same op */
    long partial[4] = {1, 0, 0, 1};
    for (int r = 0; r <= me; r++) {
        long m[4] = {r + 2, 1, 1, 0};
        matmul(partial, m, &(int){1}, NULL);
        memcpy(partial, m, sizeof m);
    }
    MPI_Scan(matb, prodb, 1, m4, op, comm);
    REQUIRE(memcmp(prodb, partial, sizeof partial) == 0);
    int x = me + 1, ex = -1;
    MPI_Exscan(&x, &ex, 1, MPI_INT, MPI_SUM, comm);
    if (me > 0)
        REQUIRE(ex == me * (me + 1) / 2);
    MPI_Op_free(&op);
    MPI_Type_free(&m4);
    /* Gather / Scatter / Allgather / Alltoall with 3 ints per rank, and
     * bigger blocks for the long-message paths */
    for (int per = 3; per <= 9001; per += 8998) {
        int *mine = malloc(sizeof(int) * (size_t)per), *all = malloc(sizeof(int) * (size_t)per * (size_t)p);
        int *all2 = malloc(sizeof(int) * (size_t)per * (size_t)p);
        for (int i = 0; i < per; i++)
            mine[i] = me * 100000 + i;
        int root = (p - 1) / 2;
        MPI_Gather(mine, per, MPI_INT, all, per, MPI_INT, root, comm);
        if (me == root)
            for (int q = 0; q < p; q++)
                for (int i = 0; i < per; i++)
                    REQUIRE(all[q * per + i] == q * 100000 + i);
        memset(mine, 0, sizeof(int) * (size_t)per);
        MPI_Scatter(all, per, MPI_INT, mine, per, MPI_INT, root, comm);
        for (int i = 0; i < per; i++)
            REQUIRE(mine[i] == me * 100000 + i);
        memset(all, 0, sizeof(int) * (size_t)per * (size_t)p);
        MPI_Allgather(mine, per, MPI_INT, all, per, MPI_INT, comm);
        for (int q = 0; q < p; q++)
            REQUIRE(all[q * per] == q * 100000 && all[q * per + per - 1] == q * 100000 + per - 1);
        for (int q = 0; q < p; q++)
            for (int i = 0; i < per; i++)
                all[q * per + i] = me * 1000 + q * 10 + (i % 7);
        MPI_Alltoall(all, per, MPI_INT, all2, per, MPI_INT, comm);
        for (int q = 0; q < p; q++)
            for (int i = 0; i < per; i++)
                REQUIRE(all2[q * per + i] == q * 1000 + me * 10 + (i % 7));
        free(mine);
        free(all);
        free(all2);
    }
    /* Gather / Scatter in place at the root, whose blocks are every other
     * int (a resized type: not one dense run), at a block size above
     * MVAPICH2's CUDA naive limits too (the direct algorithm) */
    for (int per = 3; per <= 9001; per += 8998) {
        MPI_Datatype gap;
        MPI_Type_create_resized(MPI_INT, 0, 2 * (MPI_Aint)sizeof(int), &gap);
        MPI_Type_commit(&gap);
        int root = p / 2;
        int *mine = malloc(sizeof(int) * (size_t)per);
        int *all = calloc((size_t)per * (size_t)p * 2, sizeof(int));
        for (int i = 0; i < per; i++)
            mine[i] = me * 100000 + i;
        if (me == root) {
            for (int i = 0; i < per; i++)
                all[2 * ((size_t)root * (size_t)per + (size_t)i)] = root * 100000 + i;
            MPI_Gather(MPI_IN_PLACE, per, MPI_INT, all, per, gap, root, comm);
            for (int q = 0; q < p; q++)
                for (int i = 0; i < per; i++)
                    REQUIRE(all[2 * ((size_t)q * (size_t)per + (size_t)i)] == q * 100000 + i &&
                          all[2 * ((size_t)q * (size_t)per + (size_t)i) + 1] == 0);
            for (int q = 0; q < p; q++)
                for (int i = 0; i < per; i++)
                    all[2 * ((size_t)q * (size_t)per + (size_t)i)] = q * 7 + i;
            MPI_Scatter(all, per, gap, MPI_IN_PLACE, per, MPI_INT, root, comm);
            REQUIRE(all[2 * (size_t)root * (size_t)per] == root * 7);
        } else {
            MPI_Gather(mine, per, MPI_INT, NULL, 0, MPI_INT, root, comm);
            memset(mine, 0, sizeof(int) * (size_t)per);
            MPI_Scatter(NULL, 0, MPI_INT, mine, per, MPI_INT, root, comm);
            for (int i = 0; i < per; i++)
                REQUIRE(mine[i] == me * 7 + i);
        }
        MPI_Type_free(&gap);
        free(mine);
        free(all);
    }
    /* v-variants: rank q contributes q + 1 ints */
    int *counts = malloc(sizeof(int) * (size_t)p), *displs = malloc(sizeof(int) * (size_t)p), total = 0;
    for (int q = 0; q < p; q++) {
        counts[q] = q + 1;
        displs[q] = total;
        total += q + 1;
    }
    int *mine = malloc(sizeof(int) * (size_t)(me + 1)), *all = malloc(sizeof(int) * (size_t)total);
    for (int i = 0; i <= me; i++)
        mine[i] = me * 10 + i;
    MPI_Gatherv(mine, me + 1, MPI_INT, all, counts, displs, MPI_INT, 0, comm);
    if (me == 0)
        for (int q = 0; q < p; q++)
            for (int i = 0; i <= q; i++)
                REQUIRE(all[displs[q] + i] == q * 10 + i);
    memset(all, 0, sizeof(int) * (size_t)total);
    MPI_Allgatherv(mine, me + 1, MPI_INT, all, counts, displs, MPI_INT, comm);
    for (int q = 0; q < p; q++)
        REQUIRE(all[displs[q] + q] == q * 10 + q);
    memset(mine, 0, sizeof(int) * (size_t)(me + 1));
    MPI_Scatterv(all, counts, displs, MPI_INT, mine, me + 1, MPI_INT, p - 1, comm);
    for (int i = 0; i <= me; i++)
        REQUIRE(mine[i] == me * 10 + i);
    /* Alltoallv: rank me sends q + 1 ints to q */
    int *sc = malloc(sizeof(int) * (size_t)p), *sd = malloc(sizeof(int) * (size_t)p);
    int *rc = malloc(sizeof(int) * (size_t)p), *rd = malloc(sizeof(int) * (size_t)p), st = 0, rt = 0;
    for (int q = 0; q < p; q++) {
        sc[q] = q + 1, sd[q] = st, st += q + 1;
        rc[q] = me + 1, rd[q] = rt, rt += me + 1;
    }
    int *sb = malloc(sizeof(int) * (size_t)st), *rb = malloc(sizeof(int) * (size_t)rt);
    for (int q = 0; q < p; q++)
        for (int i = 0; i <= q; i++)
            sb[sd[q] + i] = me * 100 + q;
    MPI_Alltoallv(sb, sc, sd, MPI_INT, rb, rc, rd, MPI_INT, comm);
    for (int q = 0; q < p; q++)
        for (int i = 0; i <= me; i++)
            REQUIRE(rb[rd[q] + i] == q * 100 + me);
    /* Reduce_scatter (q + 1 ints to q) and _block */
    int *vals = malloc(sizeof(int) * (size_t)total), *res = malloc(sizeof(int) * (size_t)(me + 1));
    for (int i = 0; i < total; i++)
        vals[i] = i + me;
    MPI_Reduce_scatter(vals, res, counts, MPI_INT, MPI_SUM, comm);
    for (int i = 0; i <= me; i++)
        REQUIRE(res[i] == p * (displs[me] + i) + p * (p - 1) / 2);
    int blk[2 * 16], rblk[2];
    for (int i = 0; i < 2 * p; i++)
        blk[i] = i * me;
    MPI_Reduce_scatter_block(blk, rblk, 2, MPI_INT, MPI_SUM, comm);
    REQUIRE(rblk[0] == 2 * me * p * (p - 1) / 2 && rblk[1] == (2 * me + 1) * p * (p - 1) / 2);
    free(counts); free(displs); free(mine); free(all); free(sc); free(sd); free(rc); free(rd);
    free(sb); free(rb); free(vals); free(res); free(b);
    if (me == 0)
        printf("collectives on %s (%d ranks): Barrier, Bcast, Reduce, Allreduce (user op, "
               "non-commutative), Scan, Exscan, Gather(v), Scatter(v), Allgather(v), Alltoall(v), "
               "Reduce_scatter(_block): ok\n", name, p);
}
