/* mpi_nbc: the nonblocking collectives of the virtual-time MPI layer, built
 * with mpicc (and libp2tca for p2_compute) and run by p2run with the layer
 * preloaded. Every result is checked element by element:
 *   sums       MPI_Iallreduce (also in place), _Ireduce, _Ibcast, _Iallgather
 *              of ints and doubles at counts on both sides of the
 *              algorithms' thresholds (2 KiB) and of the eager limit (12 KiB)
 *   twins      every nonblocking collective against its blocking call on
 *              the same data, byte for byte
 *   in flight  several at once on MPI_COMM_WORLD, a dup of it, a dup of the
 *              dup and its even/odd halves (two on one communicator too),
 *              with a blocking collective and point-to-point in between,
 *              completed by Waitany, Testall, Test and Wait in other orders
 *              than they started
 *   timing     started and waited for at once, each takes the blocking
 *              call's simulated time (within 1%; exactly, run with the
 *              argument "blocking", which makes the blocking call there and
 *              must print the same); with computation between start and wait
 *              (p2_compute, a loop reading MPI_Wtime, p2_compute with
 *              MPI_Test between its parts) the whole is shorter than the
 *              computation plus the blocking call at every rank
 * Prints a line per group and "mpi_nbc: all N checks passed on P ranks"
 * (rank 0); any failure exits 1. Any rank count. */
#include <mpi.h>
#include <p2.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

static int rank, size, checks;

#define CHECK(c)                                                                   \
    do {                                                                           \
        checks++;                                                                  \
        if (!(c)) {                                                                \
            fprintf(stderr, "rank %d: FAIL %s (line %d)\n", rank, #c, __LINE__);   \
            exit(1);                                                               \
        }                                                                          \
    } while (0)

static void *xcalloc(size_t n, size_t sz)
{
    void *p = calloc(n ? n : 1, sz);
    if (!p)
        exit(2);
    return p;
}

/* ---- Sums over the ranks -------------------------------------------------------- */

/* Element counts: 8 B .. 2 KiB (recursive doubling), above (Rabenseifner),
 * the eager limit 12288 B and one element past it, and rendezvous. */
static const int counts[] = {1, 7, 700, 3072, 3073, 40000};
#define NCOUNTS (int)(sizeof counts / sizeof counts[0])

static void sums(MPI_Comm comm)
{
    int r, p;
    MPI_Comm_rank(comm, &r);
    MPI_Comm_size(comm, &p);
    for (int k = 0; k < NCOUNTS; k++) {
        int n = counts[k];
        int *si = xcalloc((size_t)n, sizeof(int)), *ri = xcalloc((size_t)n, sizeof(int));
        int *ii = xcalloc((size_t)n, sizeof(int));
        double *sd = xcalloc((size_t)n, sizeof(double)), *rd = xcalloc((size_t)n, sizeof(double));
        for (int i = 0; i < n; i++) {
            si[i] = ii[i] = r * 7 + i;
            sd[i] = (r + 1) * 0.5 + i;
        }
        /* three at once: int, double, int in place */
        MPI_Request q[3];
        MPI_Iallreduce(si, ri, n, MPI_INT, MPI_SUM, comm, &q[0]);
        MPI_Iallreduce(sd, rd, n, MPI_DOUBLE, MPI_SUM, comm, &q[1]);
        MPI_Iallreduce(MPI_IN_PLACE, ii, n, MPI_INT, MPI_SUM, comm, &q[2]);
        MPI_Waitall(3, q, MPI_STATUSES_IGNORE);
        int bad = 0;
        for (int i = 0; i < n; i++) {
            int want = 7 * p * (p - 1) / 2 + p * i;
            bad += ri[i] != want || ii[i] != want || rd[i] != 0.25 * p * (p + 1) + (double)p * i;
        }
        CHECK(bad == 0);
        /* Ireduce to the last rank, the doubles */
        memset(rd, 0, sizeof(double) * (size_t)n);
        MPI_Ireduce(sd, rd, n, MPI_DOUBLE, MPI_SUM, p - 1, comm, &q[0]);
        MPI_Wait(&q[0], MPI_STATUS_IGNORE);
        for (int i = 0; i < n && r == p - 1; i++)
            bad += rd[i] != 0.25 * p * (p + 1) + (double)p * i;
        CHECK(bad == 0);
        /* Ibcast from the middle rank */
        int root = p / 2;
        for (int i = 0; i < n; i++)
            sd[i] = r == root ? i * 0.25 - 3 : -1;
        MPI_Ibcast(sd, n, MPI_DOUBLE, root, comm, &q[0]);
        int flag = 0;
        while (!flag) /* completed by MPI_Test */
            MPI_Test(&q[0], &flag, MPI_STATUS_IGNORE);
        for (int i = 0; i < n; i++)
            bad += sd[i] != i * 0.25 - 3;
        CHECK(bad == 0);
        /* Iallgather: block j is rank j's */
        int *all = xcalloc((size_t)n * (size_t)p, sizeof(int));
        for (int i = 0; i < n; i++)
            si[i] = r * 100003 + i;
        MPI_Iallgather(si, n, MPI_INT, all, n, MPI_INT, comm, &q[0]);
        MPI_Wait(&q[0], MPI_STATUS_IGNORE);
        for (int j = 0; j < p; j++)
            for (int i = 0; i < n; i++)
                bad += all[(size_t)j * (size_t)n + (size_t)i] != j * 100003 + i;
        CHECK(bad == 0);
        free(all);
        free(si);
        free(ri);
        free(ii);
        free(sd);
        free(rd);
    }
}

/* ---- Each nonblocking call against its blocking twin ------------------------------ */

static void fill_ints(int *b, size_t n, int seed)
{
    for (size_t i = 0; i < n; i++)
        b[i] = (int)((seed * 2654435761u + i * 40503u) % 100000) - 50000;
}

/* The blocking call's result into a, the nonblocking call's into b, both from
 * the same inputs: equal. n elements a block, v-variants n + rank. */
static void twins(MPI_Comm comm, int n)
{
    int r, p;
    MPI_Comm_rank(comm, &r);
    MPI_Comm_size(comm, &p);
    size_t big = (size_t)(n + p) * (size_t)p;
    int *in = xcalloc(big, sizeof(int)), *a = xcalloc(big, sizeof(int));
    int *b = xcalloc(big, sizeof(int));
    int *cnt = xcalloc((size_t)p, sizeof(int)), *dsp = xcalloc((size_t)p, sizeof(int));
    int *rcnt = xcalloc((size_t)p, sizeof(int)), *rdsp = xcalloc((size_t)p, sizeof(int));
    int off = 0;
    for (int j = 0; j < p; j++) {
        cnt[j] = n + j;
        dsp[j] = off;
        off += cnt[j] + 1; /* a gap between blocks */
        rcnt[j] = n + r;   /* alltoallv: what rank j sends me */
    }
    for (int j = 0, o = 0; j < p; j++, o += n + p)
        rdsp[j] = o;
    MPI_Request q;
#define TWIN(call_a, call_b, bytes)                                                     \
    do {                                                                                \
        memset(a, 0x5a, big * sizeof(int));                                             \
        memset(b, 0x5a, big * sizeof(int));                                             \
        call_a;                                                                         \
        call_b;                                                                         \
        MPI_Wait(&q, MPI_STATUS_IGNORE);                                                \
        CHECK(memcmp(a, b, (bytes)) == 0);                                              \
    } while (0)
    size_t all = big * sizeof(int);
    fill_ints(in, big, r + 1);
    TWIN(MPI_Barrier(comm), MPI_Ibarrier(comm, &q), 0);
    fill_ints(a, (size_t)n, 7);
    memcpy(b, a, sizeof(int) * (size_t)n);
    MPI_Bcast(a, n, MPI_INT, p - 1, comm);
    MPI_Ibcast(b, n, MPI_INT, p - 1, comm, &q);
    MPI_Wait(&q, MPI_STATUS_IGNORE);
    CHECK(memcmp(a, b, sizeof(int) * (size_t)n) == 0);
    TWIN(MPI_Reduce(in, a, n, MPI_INT, MPI_MAX, 0, comm),
         MPI_Ireduce(in, b, n, MPI_INT, MPI_MAX, 0, comm, &q), all);
    TWIN(MPI_Allreduce(in, a, n, MPI_INT, MPI_BXOR, comm),
         MPI_Iallreduce(in, b, n, MPI_INT, MPI_BXOR, comm, &q), all);
    TWIN(MPI_Gather(in, n, MPI_INT, a, n, MPI_INT, p / 2, comm),
         MPI_Igather(in, n, MPI_INT, b, n, MPI_INT, p / 2, comm, &q), all);
    TWIN(MPI_Scatter(in, n, MPI_INT, a, n, MPI_INT, p - 1, comm),
         MPI_Iscatter(in, n, MPI_INT, b, n, MPI_INT, p - 1, comm, &q), all);
    TWIN(MPI_Allgather(in, n, MPI_INT, a, n, MPI_INT, comm),
         MPI_Iallgather(in, n, MPI_INT, b, n, MPI_INT, comm, &q), all);
    TWIN(MPI_Alltoall(in, n, MPI_INT, a, n, MPI_INT, comm),
         MPI_Ialltoall(in, n, MPI_INT, b, n, MPI_INT, comm, &q), all);
    TWIN(MPI_Gatherv(in, cnt[r], MPI_INT, a, cnt, dsp, MPI_INT, 0, comm),
         MPI_Igatherv(in, cnt[r], MPI_INT, b, cnt, dsp, MPI_INT, 0, comm, &q), all);
    TWIN(MPI_Scatterv(in, cnt, dsp, MPI_INT, a, cnt[r], MPI_INT, p / 2, comm),
         MPI_Iscatterv(in, cnt, dsp, MPI_INT, b, cnt[r], MPI_INT, p / 2, comm, &q), all);
    TWIN(MPI_Allgatherv(in, cnt[r], MPI_INT, a, cnt, dsp, MPI_INT, comm),
         MPI_Iallgatherv(in, cnt[r], MPI_INT, b, cnt, dsp, MPI_INT, comm, &q), all);
    /* alltoallv: rank j's block for me holds n + r ints (my rcnt[j]); mine for
     * rank j, n + j */
    TWIN(MPI_Alltoallv(in, cnt, rdsp, MPI_INT, a, rcnt, rdsp, MPI_INT, comm),
         MPI_Ialltoallv(in, cnt, rdsp, MPI_INT, b, rcnt, rdsp, MPI_INT, comm, &q), all);
    TWIN(MPI_Reduce_scatter(in, a, cnt, MPI_INT, MPI_SUM, comm),
         MPI_Ireduce_scatter(in, b, cnt, MPI_INT, MPI_SUM, comm, &q), all);
    TWIN(MPI_Reduce_scatter_block(in, a, n, MPI_INT, MPI_MIN, comm),
         MPI_Ireduce_scatter_block(in, b, n, MPI_INT, MPI_MIN, comm, &q), all);
    TWIN(MPI_Scan(in, a, n, MPI_INT, MPI_SUM, comm),
         MPI_Iscan(in, b, n, MPI_INT, MPI_SUM, comm, &q), all);
    TWIN(MPI_Exscan(in, a, n, MPI_INT, MPI_SUM, comm),
         MPI_Iexscan(in, b, n, MPI_INT, MPI_SUM, comm, &q), r ? all : 0);
#undef TWIN
    free(in);
    free(a);
    free(b);
    free(cnt);
    free(dsp);
    free(rcnt);
    free(rdsp);
}

/* ---- Several in flight --------------------------------------------------------------- */

static void in_flight(void)
{
    MPI_Comm dup, dup2, half;
    MPI_Comm_dup(MPI_COMM_WORLD, &dup);
    MPI_Comm_dup(dup, &dup2);
    MPI_Comm_split(MPI_COMM_WORLD, rank % 2, rank, &half);
    int hr, hp;
    MPI_Comm_rank(half, &hr);
    MPI_Comm_size(half, &hp);
    enum { BIG = 300000, MID = 3000, SMALL = 5 };
    double *bc = xcalloc(BIG, sizeof(double)), *ar = xcalloc(MID, sizeof(double));
    int *ag = xcalloc((size_t)SMALL * (size_t)hp, sizeof(int)), mine[SMALL];
    long *a1 = xcalloc(BIG / 8, sizeof(long)), *a2 = xcalloc(BIG / 8, sizeof(long));
    long *s1 = xcalloc(BIG / 8, sizeof(long));
    for (int i = 0; i < BIG; i++)
        bc[i] = rank == 0 ? i * 0.5 : 0;
    for (int i = 0; i < MID; i++)
        ar[i] = rank + i;
    for (int i = 0; i < SMALL; i++)
        mine[i] = hr * 10 + i;
    for (int i = 0; i < BIG / 8; i++)
        s1[i] = (long)rank * i;
    MPI_Request q[6];
    MPI_Ibcast(bc, BIG, MPI_DOUBLE, 0, dup, &q[0]);                      /* rendezvous */
    MPI_Iallreduce(MPI_IN_PLACE, ar, MID, MPI_DOUBLE, MPI_SUM, MPI_COMM_WORLD, &q[1]);
    MPI_Iallgather(mine, SMALL, MPI_INT, ag, SMALL, MPI_INT, half, &q[2]);
    MPI_Ibarrier(MPI_COMM_WORLD, &q[3]);                                 /* two on the world */
    MPI_Iallreduce(s1, a1, BIG / 8, MPI_LONG, MPI_SUM, dup2, &q[4]);
    MPI_Iallreduce(s1, a2, BIG / 8, MPI_LONG, MPI_MAX, dup2, &q[5]);     /* two on dup2 */
    /* a blocking collective and a ring of point-to-point meanwhile */
    int one = 1, n = 0;
    MPI_Allreduce(&one, &n, 1, MPI_INT, MPI_SUM, MPI_COMM_WORLD);
    CHECK(n == size);
    int token = rank, got = -1;
    MPI_Sendrecv(&token, 1, MPI_INT, (rank + 1) % size, 77, &got, 1, MPI_INT,
                 (rank - 1 + size) % size, 77, MPI_COMM_WORLD, MPI_STATUS_IGNORE);
    CHECK(got == (rank - 1 + size) % size);
    /* completed out of order: Waitany for the last three, Testall, Test, Wait */
    for (int k = 0; k < 3; k++) {
        int idx;
        MPI_Waitany(3, &q[3], &idx, MPI_STATUS_IGNORE);
        CHECK(idx >= 0 && idx < 3);
    }
    int flag = 0;
    while (!flag)
        MPI_Testall(2, &q[1], &flag, MPI_STATUSES_IGNORE);
    MPI_Wait(&q[0], MPI_STATUS_IGNORE);
    int bad = 0;
    for (int i = 0; i < BIG; i++)
        bad += bc[i] != i * 0.5;
    for (int i = 0; i < MID; i++)
        bad += ar[i] != (double)size * (size - 1) / 2 + (double)size * i;
    for (int j = 0; j < hp; j++)
        for (int i = 0; i < SMALL; i++)
            bad += ag[j * SMALL + i] != j * 10 + i;
    for (int i = 0; i < BIG / 8; i++)
        bad += a1[i] != (long)size * (size - 1) / 2 * i || a2[i] != (long)(size - 1) * i;
    CHECK(bad == 0);
    free(bc);
    free(ar);
    free(ag);
    free(a1);
    free(a2);
    free(s1);
    MPI_Comm_free(&half);
    MPI_Comm_free(&dup2);
    MPI_Comm_free(&dup);
}

/* ---- Timing ----------------------------------------------------------------------------- */

typedef enum { OP_BARRIER, OP_ALLREDUCE, OP_BCAST, OP_ALLGATHER } op_t;
static const char *const op_name[] = {"barrier", "allreduce", "bcast", "allgather"};
static char *sbuf, *rbuf;
/* argv[1] "blocking": the blocking call where the nonblocking one is waited at once */
static int blocking_twin;

static void start(op_t op, size_t bytes, int nonblocking, MPI_Request *q)
{
    int n = (int)(bytes / sizeof(double));
    *q = MPI_REQUEST_NULL;
    switch (op) {
    case OP_BARRIER:
        nonblocking ? MPI_Ibarrier(MPI_COMM_WORLD, q) : MPI_Barrier(MPI_COMM_WORLD);
        break;
    case OP_ALLREDUCE:
        nonblocking ? MPI_Iallreduce(sbuf, rbuf, n, MPI_DOUBLE, MPI_SUM, MPI_COMM_WORLD, q)
                    : MPI_Allreduce(sbuf, rbuf, n, MPI_DOUBLE, MPI_SUM, MPI_COMM_WORLD);
        break;
    case OP_BCAST:
        nonblocking ? MPI_Ibcast(rbuf, (int)bytes, MPI_BYTE, 0, MPI_COMM_WORLD, q)
                    : MPI_Bcast(rbuf, (int)bytes, MPI_BYTE, 0, MPI_COMM_WORLD);
        break;
    case OP_ALLGATHER:
        nonblocking ? MPI_Iallgather(sbuf, (int)bytes, MPI_BYTE, rbuf, (int)bytes, MPI_BYTE,
                                     MPI_COMM_WORLD, q)
                    : MPI_Allgather(sbuf, (int)bytes, MPI_BYTE, rbuf, (int)bytes, MPI_BYTE,
                                    MPI_COMM_WORLD);
        break;
    }
}

/* Simulated seconds of: the blocking call; the nonblocking one waited for at
 * once; started, `compute` seconds of work (p2_compute, or reading MPI_Wtime
 * until that much has passed), then waited for. Every rank starts at the
 * same simulated time, 20 us after the last one is out of an agreement on it
 * (the clock is one timeline for all ranks): the ranks' times compare from
 * one measurement to the next. */
static double timed(op_t op, size_t bytes, int mode, double compute)
{
    MPI_Request q;
    MPI_Barrier(MPI_COMM_WORLD);
    double now = MPI_Wtime(), latest;
    MPI_Allreduce(&now, &latest, 1, MPI_DOUBLE, MPI_MAX, MPI_COMM_WORLD);
    p2_compute(latest + 20e-6 - MPI_Wtime());
    double t0 = MPI_Wtime();
    start(op, bytes, mode != 0, &q);
    if (mode == 2)
        p2_compute(compute);
    if (mode == 3) {
        double s = MPI_Wtime();
        while (MPI_Wtime() - s < compute)
            ;
    }
    for (int k = 0; mode == 4 && k < 16; k++) { /* progress calls in the computation */
        int flag;
        p2_compute(compute / 16);
        MPI_Test(&q, &flag, MPI_STATUS_IGNORE);
    }
    MPI_Wait(&q, MPI_STATUS_IGNORE);
    return MPI_Wtime() - t0;
}

static void timing(void)
{
    static const struct {
        op_t op;
        size_t bytes;
    } cases[] = {{OP_BARRIER, 0},           {OP_ALLREDUCE, 8},      {OP_ALLREDUCE, 65536},
                 {OP_BCAST, 1048576},       {OP_ALLGATHER, 4096},   {OP_ALLGATHER, 65536}};
    sbuf = xcalloc(1 << 21, 1);
    rbuf = xcalloc((size_t)size << 20, 1);
    for (size_t k = 0; k < sizeof cases / sizeof cases[0]; k++) {
        op_t op = cases[k].op;
        size_t bytes = cases[k].bytes;
        double tb = timed(op, bytes, 0, 0), ti = timed(op, bytes, !blocking_twin, 0), tbmax;
        MPI_Allreduce(&tb, &tbmax, 1, MPI_DOUBLE, MPI_MAX, MPI_COMM_WORLD);
        /* at once: the blocking call's time; the next blocking call's may
         * differ by a little (the layer's batched bookkeeping, a CQ doorbell
         * record every 256 completions, receive buffers reposted 16 at a
         * time, falls elsewhere): run with "blocking", this program makes
         * the blocking call here and prints the same, byte for byte */
        CHECK(ti <= tb * 1.01 + 0.1e-6 && ti >= tb * 0.99 - 0.1e-6);
        double c = tbmax + 2e-6;
        double tc = timed(op, bytes, 2, c), tw = timed(op, bytes, 3, c);
        double tt = timed(op, bytes, 4, c);
        CHECK(size == 1 || tc < c + tb);
        CHECK(size == 1 || tw < c + tb);
        CHECK(size == 1 || tt < c + tb);
        double row[5] = {tb, ti, tc, tw, tt}, mx[5];
        MPI_Reduce(row, mx, 5, MPI_DOUBLE, MPI_MAX, 0, MPI_COMM_WORLD);
        if (rank == 0)
            printf("timing: %s %zu B: blocking %.3f us, started and waited %.3f us; with %.3f us "
                   "of p2_compute between %.3f us, of MPI_Wtime reads %.3f us, of p2_compute "
                   "and 16 MPI_Test %.3f us (longest rank)\n",
                   op_name[op], bytes, mx[0] * 1e6, mx[1] * 1e6, c * 1e6, mx[2] * 1e6,
                   mx[3] * 1e6, mx[4] * 1e6);
    }
    free(sbuf);
    free(rbuf);
}

int main(int argc, char **argv)
{
    MPI_Init(&argc, &argv);
    MPI_Comm_rank(MPI_COMM_WORLD, &rank);
    MPI_Comm_size(MPI_COMM_WORLD, &size);
    blocking_twin = argc > 1 && !strcmp(argv[1], "blocking");
    sums(MPI_COMM_WORLD);
    MPI_Comm dup;
    MPI_Comm_dup(MPI_COMM_WORLD, &dup);
    sums(dup);
    if (rank == 0)
        printf("sums: Iallreduce (in place too), Ireduce, Ibcast, Iallgather of int and double, "
               "1..40000 elements, on MPI_COMM_WORLD and a dup: ok\n");
    twins(MPI_COMM_WORLD, 5);
    twins(dup, 5000);
    MPI_Comm_free(&dup);
    if (rank == 0)
        printf("twins: every nonblocking collective equals its blocking call, 5 and 5000 "
               "ints a block: ok\n");
    in_flight();
    if (rank == 0)
        printf("in flight: six at once on four communicators, completed out of order: ok\n");
    timing();
    int all;
    MPI_Reduce(&checks, &all, 1, MPI_INT, MPI_SUM, 0, MPI_COMM_WORLD);
    if (rank == 0)
        printf("mpi_nbc: all %d checks passed on %d ranks\n", all, size);
    MPI_Finalize();
    return 0;
}
