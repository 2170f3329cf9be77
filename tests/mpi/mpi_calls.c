/* mpi_calls: data correctness of every MPI call the virtual-time layer models,
 * for any number of ranks (1 to 16), built with mpicc and run by p2run with
 * the layer preloaded. Sizes are odd and straddle the eager threshold
 * (12 KiB) so both protocols run; ANY_SOURCE, ANY_TAG, derived datatypes,
 * user ops, communicators. Prints one line per check group and "mpi_calls:
 * all N checks passed" at rank 0; any wrong byte fails the rank (exit 1). */
#include <mpi.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

/* The MPI rank; p2_check.h names it in its messages (this program is built
 * without the TCA library). */
static int rank, size;
#define P2_CHECK_RANK() rank
#include "p2_check.h"

static unsigned char pat(int who, int tag, size_t i) { return (unsigned char)(who * 37 + tag * 11 + i * 7 + (i >> 9)); }

static void fill(unsigned char *b, size_t n, int who, int tag)
{
    for (size_t i = 0; i < n; i++)
        b[i] = pat(who, tag, i);
}

static int ok(const unsigned char *b, size_t n, int who, int tag)
{
    for (size_t i = 0; i < n; i++)
        if (b[i] != pat(who, tag, i))
            return 0;
    return 1;
}

static const int sizes[] = {0, 1, 7, 4093, 12288, 12289, 100003};
#define NSIZES (int)(sizeof sizes / sizeof sizes[0])

/* Ring: each rank sends to the right, receives from the left, every size,
 * blocking and nonblocking, plus Sendrecv and Ssend. */
static void point_to_point(void)
{
    int right = (rank + 1) % size, left = (rank - 1 + size) % size;
    unsigned char *s = malloc(100003), *r = malloc(100003);
    for (int k = 0; k < NSIZES; k++) {
        int n = sizes[k];
        fill(s, (size_t)n, rank, k);
        memset(r, 0, (size_t)n);
        MPI_Request q[2];
        MPI_Status st;
        MPI_Irecv(r, n, MPI_BYTE, left, k, MPI_COMM_WORLD, &q[0]);
        MPI_Isend(s, n, MPI_BYTE, right, k, MPI_COMM_WORLD, &q[1]);
        MPI_Wait(&q[1], MPI_STATUS_IGNORE);
        MPI_Wait(&q[0], &st);
        int cnt;
        MPI_Get_count(&st, MPI_BYTE, &cnt);
        REQUIRE(cnt == n && st.MPI_SOURCE == left && st.MPI_TAG == k);
        REQUIRE(ok(r, (size_t)n, left, k));
        /* Sendrecv, the other direction */
        memset(r, 0, (size_t)n);
        MPI_Sendrecv(s, n, MPI_BYTE, left, 100 + k, r, n, MPI_BYTE, right, 100 + k, MPI_COMM_WORLD, &st);
        REQUIRE(ok(r, (size_t)n, right, k) && st.MPI_SOURCE == right);
    }
    /* Ssend/Recv in a ring: even ranks send first */
    if (size > 1) {
        fill(s, 333, rank, 9);
        if (rank % 2 == 0) {
            MPI_Ssend(s, 333, MPI_BYTE, right, 9, MPI_COMM_WORLD);
            MPI_Recv(r, 333, MPI_BYTE, left, 9, MPI_COMM_WORLD, MPI_STATUS_IGNORE);
        } else {
            MPI_Recv(r, 333, MPI_BYTE, left, 9, MPI_COMM_WORLD, MPI_STATUS_IGNORE);
            MPI_Ssend(s, 333, MPI_BYTE, right, 9, MPI_COMM_WORLD);
        }
        REQUIRE(ok(r, 333, left, 9));
    }
    /* Sendrecv_replace */
    fill(s, 5001, rank, 3);
    MPI_Sendrecv_replace(s, 5001, MPI_BYTE, right, 3, left, 3, MPI_COMM_WORLD, MPI_STATUS_IGNORE);
    REQUIRE(ok(s, 5001, left, 3));
    free(s);
    free(r);
    if (rank == 0)
        printf("point-to-point: ring of %d ranks, sizes 0..100003 B, eager and rendezvous: ok\n", size);
}

/* Everyone sends to rank 0 with its rank as tag; rank 0 receives with
 * ANY_SOURCE / ANY_TAG, probes first, and checks it got each exactly once. */
static void wildcards(void)
{
    int n = 20011;
    unsigned char *b = malloc((size_t)n);
    if (rank != 0) {
        fill(b, (size_t)(n - rank), rank, rank);
        MPI_Send(b, n - rank, MPI_BYTE, 0, rank, MPI_COMM_WORLD);
        /* a small one after, same tag: must not overtake */
        fill(b, 5, rank, rank + 1);
        MPI_Send(b, 5, MPI_BYTE, 0, rank, MPI_COMM_WORLD);
    } else {
        int *seen = calloc((size_t)size, sizeof(int));
        for (int i = 0; i < 2 * (size - 1); i++) {
            MPI_Status st;
            MPI_Probe(MPI_ANY_SOURCE, MPI_ANY_TAG, MPI_COMM_WORLD, &st);
            int cnt;
            MPI_Get_count(&st, MPI_BYTE, &cnt);
            int src = st.MPI_SOURCE;
            REQUIRE(src > 0 && src < size && st.MPI_TAG == src);
            REQUIRE(cnt == (seen[src] ? 5 : n - src));
            MPI_Recv(b, n, MPI_BYTE, MPI_ANY_SOURCE, MPI_ANY_TAG, MPI_COMM_WORLD, &st);
            REQUIRE(st.MPI_SOURCE == src); /* the probed message is the next one matched */
            REQUIRE(ok(b, (size_t)cnt, src, seen[src] ? src + 1 : src));
            seen[src]++;
        }
        for (int i = 1; i < size; i++)
            REQUIRE(seen[i] == 2);
        int flag;
        MPI_Iprobe(MPI_ANY_SOURCE, 1, MPI_COMM_WORLD, &flag, MPI_STATUS_IGNORE); /* rank 1 sent two, both taken */
        REQUIRE(!flag);
        free(seen);
        printf("wildcards: ANY_SOURCE/ANY_TAG with Probe/Iprobe/Get_count, per-sender order: ok\n");
    }
    free(b);
    /* Nobody's later messages may reach rank 0's wildcards. */
    MPI_Barrier(MPI_COMM_WORLD);
}

/* Waitany, Waitsome, Testall, Testany, persistent requests. */
static void requests(void)
{
    int right = (rank + 1) % size, left = (rank - 1 + size) % size;
    int sv[4], rv[4];
    MPI_Request q[8];
    for (int i = 0; i < 4; i++) {
        sv[i] = rank * 100 + i;
        MPI_Irecv(&rv[i], 1, MPI_INT, left, 50 + i, MPI_COMM_WORLD, &q[i]);
    }
    for (int i = 0; i < 4; i++)
        MPI_Isend(&sv[i], 1, MPI_INT, right, 50 + i, MPI_COMM_WORLD, &q[4 + i]);
    int done = 0, idx, out, ids[8];
    MPI_Waitany(8, q, &idx, MPI_STATUS_IGNORE);
    REQUIRE(idx >= 0 && idx < 8 && q[idx] == MPI_REQUEST_NULL);
    done++;
    while (done < 8) {
        MPI_Waitsome(8, q, &out, ids, MPI_STATUSES_IGNORE);
        REQUIRE(out >= 1);
        done += out;
    }
    for (int i = 0; i < 4; i++)
        REQUIRE(rv[i] == left * 100 + i);
    int flag;
    MPI_Testall(8, q, &flag, MPI_STATUSES_IGNORE);
    REQUIRE(flag);
    MPI_Testany(8, q, &idx, &flag, MPI_STATUS_IGNORE);
    REQUIRE(flag && idx == MPI_UNDEFINED);
    /* Test until done */
    MPI_Irecv(&rv[0], 1, MPI_INT, left, 60, MPI_COMM_WORLD, &q[0]);
    MPI_Send(&sv[1], 1, MPI_INT, right, 60, MPI_COMM_WORLD);
    flag = 0;
    while (!flag)
        MPI_Test(&q[0], &flag, MPI_STATUS_IGNORE);
    REQUIRE(rv[0] == left * 100 + 1);
    /* persistent: three rounds */
    int ps, pr;
    MPI_Request p[2];
    MPI_Recv_init(&pr, 1, MPI_INT, left, 70, MPI_COMM_WORLD, &p[0]);
    MPI_Send_init(&ps, 1, MPI_INT, right, 70, MPI_COMM_WORLD, &p[1]);
    for (int round = 0; round < 3; round++) {
        ps = rank * 1000 + round;
        MPI_Startall(2, p);
        MPI_Waitall(2, p, MPI_STATUSES_IGNORE);
        REQUIRE(pr == left * 1000 + round && p[0] != MPI_REQUEST_NULL);
    }
    MPI_Request_free(&p[0]);
    MPI_Request_free(&p[1]);
    if (rank == 0)
        printf("requests: Waitany/Waitsome/Testall/Testany/Test, persistent Send_init/Recv_init/Startall: ok\n");
}

/* A strided vector of doubles sent as one derived type, received contiguous. */
static void datatypes(void)
{
    int right = (rank + 1) % size, left = (rank - 1 + size) % size;
    enum { COUNT = 1001, STRIDE = 3 };
    double *m = malloc(sizeof(double) * COUNT * STRIDE), *r = malloc(sizeof(double) * COUNT);
    for (int i = 0; i < COUNT * STRIDE; i++)
        m[i] = rank * 1e6 + i;
    MPI_Datatype vec;
    MPI_Type_vector(COUNT, 1, STRIDE, MPI_DOUBLE, &vec);
    MPI_Type_commit(&vec);
    MPI_Sendrecv(m, 1, vec, right, 80, r, COUNT, MPI_DOUBLE, left, 80, MPI_COMM_WORLD, MPI_STATUS_IGNORE);
    for (int i = 0; i < COUNT; i++)
        REQUIRE(r[i] == left * 1e6 + i * STRIDE);
    /* and back into the strided layout (rendezvous: 8 KB is eager, make it big) */
    double *m2 = calloc(COUNT * STRIDE, sizeof(double));
    MPI_Sendrecv(r, COUNT, MPI_DOUBLE, left, 81, m2, 1, vec, right, 81, MPI_COMM_WORLD, MPI_STATUS_IGNORE);
    for (int i = 0; i < COUNT; i++)
        REQUIRE(m2[i * STRIDE] == rank * 1e6 + i * STRIDE && (STRIDE < 2 || m2[i * STRIDE + 1] == 0));
    /* a struct type, in a broadcast */
    struct { int a; double b; char c; } rec[3];
    int bl[3] = {1, 1, 1};
    MPI_Aint disp[3] = {offsetof(__typeof__(rec[0]), a), offsetof(__typeof__(rec[0]), b),
                        offsetof(__typeof__(rec[0]), c)};
    MPI_Datatype types[3] = {MPI_INT, MPI_DOUBLE, MPI_CHAR}, st, sr;
    MPI_Type_create_struct(3, bl, disp, types, &st);
    MPI_Type_create_resized(st, 0, sizeof rec[0], &sr);
    MPI_Type_commit(&sr);
    memset(rec, 0, sizeof rec);
    if (rank == size - 1)
        for (int i = 0; i < 3; i++)
            rec[i].a = i + 5, rec[i].b = i * 0.5, rec[i].c = (char)('x' + i);
    MPI_Bcast(rec, 3, sr, size - 1, MPI_COMM_WORLD);
    for (int i = 0; i < 3; i++)
        REQUIRE(rec[i].a == i + 5 && rec[i].b == i * 0.5 && rec[i].c == (char)('x' + i));
    MPI_Type_free(&vec);
    MPI_Type_free(&st);
    MPI_Type_free(&sr);
    free(m);
    free(m2);
    free(r);
    if (rank == 0)
        printf("datatypes: vector both ways, resized struct in Bcast: ok\n");
}

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
static void algorithms(MPI_Comm comm, const char *name)
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

static void collectives(MPI_Comm comm, const char *name)
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

static void communicators(void)
{
    MPI_Comm dup, half;
    MPI_Comm_dup(MPI_COMM_WORLD, &dup);
    int r, s;
    MPI_Comm_rank(dup, &r);
    MPI_Comm_size(dup, &s);
    REQUIRE(r == rank && s == size);
    /* a message on dup is not matched by a receive on world */
    int v = rank, w = -1, flag;
    MPI_Request q;
    MPI_Irecv(&w, 1, MPI_INT, MPI_ANY_SOURCE, MPI_ANY_TAG, MPI_COMM_WORLD, &q);
    MPI_Sendrecv(&v, 1, MPI_INT, (rank + 1) % size, 5, &flag, 1, MPI_INT, (rank - 1 + size) % size, 5, dup,
                 MPI_STATUS_IGNORE);
    REQUIRE(flag == (rank - 1 + size) % size && w == -1);
    MPI_Send(&v, 1, MPI_INT, (rank + 1) % size, 6, MPI_COMM_WORLD);
    MPI_Wait(&q, MPI_STATUS_IGNORE);
    REQUIRE(w == (rank - 1 + size) % size);
    /* split: odd and even ranks, reversed order by key */
    MPI_Comm_split(MPI_COMM_WORLD, rank % 2, size - rank, &half);
    MPI_Comm_rank(half, &r);
    MPI_Comm_size(half, &s);
    REQUIRE(s == (size + 1 - rank % 2) / 2 && r == s - 1 - rank / 2);
    collectives(half, rank % 2 ? "the odd ranks" : "the even ranks");
    algorithms(half, rank % 2 ? "the odd ranks" : "the even ranks");
    /* groups: the first half of world, by Comm_create */
    MPI_Group wg, g;
    MPI_Comm_group(MPI_COMM_WORLD, &wg);
    int nfirst = (size + 1) / 2, *ids = malloc(sizeof(int) * (size_t)nfirst);
    for (int i = 0; i < nfirst; i++)
        ids[i] = nfirst - 1 - i;
    MPI_Group_incl(wg, nfirst, ids, &g);
    int gr, gs, tr;
    MPI_Group_rank(g, &gr);
    MPI_Group_size(g, &gs);
    REQUIRE(gs == nfirst && gr == (rank < nfirst ? nfirst - 1 - rank : MPI_UNDEFINED));
    MPI_Group_translate_ranks(g, 1, &(int){0}, wg, &tr);
    REQUIRE(tr == nfirst - 1);
    MPI_Comm sub;
    MPI_Comm_create(MPI_COMM_WORLD, g, &sub);
    if (rank < nfirst) {
        MPI_Comm_rank(sub, &r);
        REQUIRE(r == nfirst - 1 - rank);
        int sum = 0;
        MPI_Allreduce(&rank, &sum, 1, MPI_INT, MPI_SUM, sub);
        REQUIRE(sum == nfirst * (nfirst - 1) / 2);
        MPI_Comm_free(&sub);
    } else {
        REQUIRE(sub == MPI_COMM_NULL);
    }
    MPI_Group_free(&g);
    MPI_Group_free(&wg);
    free(ids);
    MPI_Comm_free(&half);
    MPI_Comm_free(&dup);
    REQUIRE(dup == MPI_COMM_NULL);
    if (rank == 0)
        printf("communicators: dup isolates traffic, split by color and key, Comm_create from a group: ok\n");
}

int main(int argc, char **argv)
{
    MPI_Init(&argc, &argv);
    MPI_Comm_rank(MPI_COMM_WORLD, &rank);
    MPI_Comm_size(MPI_COMM_WORLD, &size);
    double t0 = MPI_Wtime();
    point_to_point();
    wildcards();
    requests();
    datatypes();
    collectives(MPI_COMM_WORLD, "MPI_COMM_WORLD");
    algorithms(MPI_COMM_WORLD, "MPI_COMM_WORLD");
    if (size >= 10) {
        /* 13 of 16: a non-power-of-two of at least 8 ranks (Alltoall's Bruck),
         * with several levels of recursive doubling's forwarding */
        MPI_Comm most;
        MPI_Comm_split(MPI_COMM_WORLD, rank < size - 3 ? 0 : MPI_UNDEFINED, rank, &most);
        if (most != MPI_COMM_NULL) {
            algorithms(most, "the first size - 3 ranks");
            MPI_Comm_free(&most);
        }
    }
    communicators();
    double t = MPI_Wtime() - t0, tmax;
    MPI_Reduce(&t, &tmax, 1, MPI_DOUBLE, MPI_MAX, 0, MPI_COMM_WORLD);
    int all;
    MPI_Reduce(&p2_check_count, &all, 1, MPI_INT, MPI_SUM, 0, MPI_COMM_WORLD);
    if (rank == 0)
        printf("mpi_calls: all %d checks passed on %d ranks; simulated time %.3f us\n", all, size, tmax * 1e6);
    MPI_Finalize();
    return 0;
}
