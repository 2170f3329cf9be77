/* machine: the whole HA-PACS/TCA machine from a program's side, as
 * applications at 64 ranks use it (topologies/hapacs-tca-64.topo: four 2x8
 * PEACH2 sub-clusters, every node on InfiniBand). An MPI + TCA program
 * (MPI start-up; handles over MPI_Allgather on a communicator split by
 * sub-cluster). Each rank checks:
 *
 *   1. p2_subcluster of every rank: rank q on node q is on sub-cluster
 *      q / PER (PER = 16, the argument), -1 out of range; the same as every
 *      rank says of itself (MPI_Allgather); its own before tcaInit too;
 *   2. P2_COMM_SUBCLUSTER: its size and this rank's rank in it (the
 *      sub-cluster's ranks in job-rank order); a communicator made from it
 *      (p2_comm_create, its even ranks) with an allreduce; it cannot be freed;
 *   3. p2_allreduce (double, sum) and p2_allgather (int) on
 *      P2_COMM_SUBCLUSTER, host and GPU buffers, every element checked; the
 *      four sub-clusters run theirs at the same time;
 *   4. a TCA DMA to the next rank of its sub-cluster (data and notification
 *      checked);
 *   5. what cannot cross sub-clusters fails clearly on a job spanning
 *      several: a DMA and a PIO region to a rank of the next sub-cluster
 *      (TCA_ERROR_UNREACHABLE at tcaDescSetMemcpy / tcaSetPIORegion), a
 *      collective on P2_COMM_WORLD and p2_exchange (the same status);
 *   6. MPI_Allreduce over every rank (InfiniBand), checked.
 *
 * Rank 0 prints the mean time of one sub-cluster allreduce and allgather
 * (simulated, the slowest sub-cluster's): at 64 ranks each sub-cluster runs on
 * its own cables, so the figures equal those of a 16-rank job on one 2x8 torus
 * (tests/machine/machine_cases.sh compares them). */
#include <mpi.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "p2.h"
#include "p2coll.h"
#include "tca-api.h"
/* A failed CHECK ends the whole job, under mpirun too. */
#define P2_CHECK_END() MPI_Abort(MPI_COMM_WORLD, 1)
#include "p2_check.h"

#define COUNT 32   /* elements per rank: small, the test is about the machine */
#define DMA_BYTES 256
#define ITERS 4
#define SLOT 5
#define TAG 0x64

static int rank, size, per;

static void *alloc(size_t bytes, tcaMemoryKind kind)
{
    void *p = NULL;
    CHECK(tcaMalloc(&p, bytes, kind));
    return p;
}

/* 1 and 2: who is where. */
static void where(int *members, int *nmembers)
{
    const int mine = p2_subcluster(rank);
    int *said = malloc((size_t)size * sizeof *said);
    REQUIRE(said != NULL);
    MPI_Allgather(&mine, 1, MPI_INT, said, 1, MPI_INT, MPI_COMM_WORLD);
    *nmembers = 0;
    int my_index = -1;
    for (int q = 0; q < size; q++) {
        EXPECT(p2_subcluster(q) == q / per, "p2_subcluster(%d) = %d, expected %d", q,
               p2_subcluster(q), q / per);
        EXPECT(said[q] == p2_subcluster(q), "rank %d says %d, rank %d says %d of it", q, said[q],
               rank, p2_subcluster(q));
        if (q / per == rank / per) {
            if (q == rank)
                my_index = *nmembers;
            members[(*nmembers)++] = q;
        }
    }
    EXPECT(p2_subcluster(-1) == -1 && p2_subcluster(size) == -1,
           "p2_subcluster out of range: %d, %d", p2_subcluster(-1), p2_subcluster(size));
    EXPECT(p2_comm_size(P2_COMM_SUBCLUSTER) == *nmembers, "P2_COMM_SUBCLUSTER has %d ranks, not %d",
           p2_comm_size(P2_COMM_SUBCLUSTER), *nmembers);
    EXPECT(p2_comm_rank(P2_COMM_SUBCLUSTER) == my_index, "rank %d in P2_COMM_SUBCLUSTER, not %d",
           p2_comm_rank(P2_COMM_SUBCLUSTER), my_index);
    free(said);
}

/* Every rank's clock to the same simulated time, a whole microsecond at
 * least ALIGN_US past the latest rank's before the MPI_Allreduce that finds
 * it (which takes less): the sub-clusters then start their collectives
 * together, with no skew left from MPI (whose calls end at different times on
 * a job of 64 ranks and on one of 16). */
#define ALIGN_US 200
static void align(void)
{
    double now = p2_wtime(), latest;
    MPI_Allreduce(&now, &latest, 1, MPI_DOUBLE, MPI_MAX, MPI_COMM_WORLD);
    const long long start_ps = ((long long)(latest * 1e6) + ALIGN_US) * 1000000LL;
    const long long left_ps = start_ps - (long long)(p2_wtime() * 1e12 + 0.5);
    REQUIRE(left_ps > 0);
    p2_compute((double)left_ps * 1e-12);
}

/* 3: allreduce and allgather on P2_COMM_SUBCLUSTER; returns the mean
 * seconds of one allreduce [0] and one allgather [1]. */
static void collectives(const int *members, int n, tcaMemoryKind kind, double t[2])
{
    double *in = alloc(COUNT * sizeof(double), kind), *sum = alloc(COUNT * sizeof(double), kind);
    int *block = alloc(COUNT * sizeof(int), kind);
    int *all = alloc((size_t)n * COUNT * sizeof(int), kind);
    for (int i = 0; i < COUNT; i++) {
        in[i] = rank * 1000.0 + i;
        block[i] = rank * 1000 + i;
    }
    align();
    double t0 = p2_wtime();
    for (int k = 0; k < ITERS; k++)
        CHECK(p2_allreduce(in, sum, COUNT, TCA_DOUBLE, TCA_OP_SUM, P2_COMM_SUBCLUSTER));
    double t1 = p2_wtime();
    for (int k = 0; k < ITERS; k++)
        CHECK(p2_allgather(block, all, COUNT, TCA_INT, P2_COMM_SUBCLUSTER));
    double t2 = p2_wtime();
    t[0] = (t1 - t0) / ITERS;
    t[1] = (t2 - t1) / ITERS;
    long wrong = 0;
    for (int i = 0; i < COUNT; i++) {
        double want = 0;
        for (int q = 0; q < n; q++)
            want += members[q] * 1000.0 + i;
        wrong += sum[i] != want;
        for (int q = 0; q < n; q++)
            wrong += all[q * COUNT + i] != members[q] * 1000 + i;
    }
    EXPECT(wrong == 0, "%s buffers: %ld wrong elements in the sub-cluster's allreduce/allgather",
           kind == tcaMemoryGPU ? "GPU" : "host", wrong);
    CHECK(tcaFree(in, kind));
    CHECK(tcaFree(sum, kind));
    CHECK(tcaFree(block, kind));
    CHECK(tcaFree(all, kind));
}

/* A communicator made from P2_COMM_SUBCLUSTER (its even ranks), an
 * allreduce on it, and its release. */
static void sub_communicator(const int *members, int n)
{
    int ranks[P2_COLL_MAX_RANKS], k = 0;
    for (int i = 0; i < n; i += 2)
        ranks[k++] = i;
    p2_comm_t even;
    CHECK(p2_comm_create(P2_COMM_SUBCLUSTER, ranks, k, &even));
    const int me = p2_comm_rank(P2_COMM_SUBCLUSTER);
    EXPECT((even != P2_COMM_NULL) == (me % 2 == 0), "rank %d: in the even ranks' communicator: %d",
           rank, even != P2_COMM_NULL);
    if (even != P2_COMM_NULL) {
        long *v = alloc(2 * sizeof(long), tcaMemoryCPU), want = 0;
        v[0] = rank;
        CHECK(p2_allreduce(v, v + 1, 1, TCA_LONG, TCA_OP_SUM, even));
        for (int i = 0; i < n; i += 2)
            want += members[i];
        EXPECT(v[1] == want, "allreduce on the sub-cluster's even ranks: %ld, expected %ld", v[1], want);
        CHECK(tcaFree(v, tcaMemoryCPU));
        CHECK(p2_comm_free(&even));
    }
    EXPECT(p2_comm_free(&(p2_comm_t){P2_COMM_SUBCLUSTER}) == TCA_ERROR_INVALID_ARGUMENT,
           "P2_COMM_SUBCLUSTER could be freed");
}

/* 4 and 5: DMA inside the sub-cluster, and what must fail across. */
static void point_to_point(const int *members, int n, MPI_Comm sub)
{
    unsigned char *src = alloc(DMA_BYTES, tcaMemoryGPU), *dst = alloc(DMA_BYTES, tcaMemoryGPU);
    unsigned char *host = alloc(64, tcaMemoryCPU);
    tcaHandle hs, hd, hh;
    CHECK(tcaCreateHandle(&hs, src, DMA_BYTES, tcaMemoryGPU));
    CHECK(tcaCreateHandle(&hd, dst, DMA_BYTES, tcaMemoryGPU));
    CHECK(tcaCreateHandle(&hh, host, 64, tcaMemoryCPU));
    /* Handles of the sub-cluster's ranks over MPI on the split communicator,
     * and every rank's host handle over MPI_COMM_WORLD (only data: a handle
     * of another sub-cluster can be held, not used). */
    tcaHandle *sub_dst = malloc((size_t)n * sizeof *sub_dst);
    tcaHandle *world_host = malloc((size_t)size * sizeof *world_host);
    tcaHandle *world_dst = malloc((size_t)size * sizeof *world_dst);
    REQUIRE(sub_dst && world_host && world_dst);
    MPI_Allgather(&hd, sizeof hd, MPI_BYTE, sub_dst, sizeof hd, MPI_BYTE, sub);
    MPI_Allgather(&hh, sizeof hh, MPI_BYTE, world_host, sizeof hh, MPI_BYTE, MPI_COMM_WORLD);
    MPI_Allgather(&hd, sizeof hd, MPI_BYTE, world_dst, sizeof hd, MPI_BYTE, MPI_COMM_WORLD);
    int me = 0;
    while (members[me] != rank)
        me++;
    const int right = (me + 1) % n, left = (me + n - 1) % n;
    for (int i = 0; i < DMA_BYTES; i++)
        src[i] = (unsigned char)(rank * 7 + i);
    memset(dst, 0, DMA_BYTES);
    MPI_Barrier(sub);
    tcaDesc *d = tcaDescNew();
    REQUIRE(d != NULL);
    CHECK(tcaDescSetMemcpy(d, &sub_dst[right], 0, &hs, 0, DMA_BYTES, tcaDMANotify, SLOT, TAG));
    CHECK(tcaDescSet(d, 0));
    CHECK(tcaStartDMADesc(0));
    CHECK(tcaWaitDMARecvDesc(&sub_dst[left], SLOT, TAG));
    CHECK(tcaWaitDMAC(0));
    long wrong = 0;
    for (int i = 0; i < DMA_BYTES; i++)
        wrong += dst[i] != (unsigned char)(members[left] * 7 + i);
    EXPECT(wrong == 0, "DMA from rank %d: %ld wrong bytes", members[left], wrong);
    CHECK(tcaDescFree(d));

    /* 5: only on a job that spans several sub-clusters. */
    if (size > per) {
        /* A rank of another sub-cluster: sub-cluster 0's from the others,
         * the next one's from sub-cluster 0. */
        const int far = rank >= per ? rank % per : rank + per < size ? rank + per : per;
        tcaDesc *x = tcaDescNew();
        REQUIRE(x != NULL);
        tcaresult r = tcaDescSetMemcpy(x, &world_dst[far], 0, &hs, 0, DMA_BYTES, tcaDMANotify, SLOT,
                                       TAG);
        EXPECT(r == TCA_ERROR_UNREACHABLE, "DMA to rank %d (sub-cluster %d): %s", far,
               p2_subcluster(far), tcaGetErrorString(r));
        EXPECT(tcaDescSet(x, 1) == TCA_ERROR_EMPTY_CHAIN, "the refused transfer was added");
        CHECK(tcaDescFree(x));
        tcaPIOHandle pio;
        r = tcaSetPIORegion(&pio, &world_host[far], 0, 8);
        EXPECT(r == TCA_ERROR_UNREACHABLE, "PIO to rank %d: %s", far, tcaGetErrorString(r));
        double one = 1, out = 0;
        double *h = alloc(2 * sizeof(double), tcaMemoryCPU);
        h[0] = one;
        r = p2_allreduce(h, h + 1, 1, TCA_DOUBLE, TCA_OP_SUM, P2_COMM_WORLD);
        EXPECT(r == TCA_ERROR_UNREACHABLE, "p2_allreduce on P2_COMM_WORLD: %s", tcaGetErrorString(r));
        EXPECT(p2_comm_size(P2_COMM_WORLD) == -1, "P2_COMM_WORLD has a size");
        r = p2_exchange(&one, &out, sizeof one);
        EXPECT(r == TCA_ERROR_UNREACHABLE, "p2_exchange: %s", tcaGetErrorString(r));
        CHECK(tcaFree(h, tcaMemoryCPU));
    }
    MPI_Barrier(sub);
    free(sub_dst);
    free(world_host);
    free(world_dst);
    CHECK(tcaFree(src, tcaMemoryGPU));
    CHECK(tcaFree(dst, tcaMemoryGPU));
    CHECK(tcaFree(host, tcaMemoryCPU));
}

int main(int argc, char **argv)
{
    MPI_Init(&argc, &argv);
    MPI_Comm_rank(MPI_COMM_WORLD, &rank);
    MPI_Comm_size(MPI_COMM_WORLD, &size);
    per = argc > 1 ? atoi(argv[1]) : 16;
    REQUIRE(per > 0 && size <= P2_COLL_MAX_RANKS);
    /* Known before tcaInit. */
    EXPECT(p2_subcluster(rank) == rank / per, "before tcaInit: p2_subcluster(%d) = %d", rank,
           p2_subcluster(rank));
    CHECK(tcaInit());
    int members[P2_COLL_MAX_RANKS], n;
    where(members, &n);
    MPI_Comm sub;
    MPI_Comm_split(MPI_COMM_WORLD, p2_subcluster(rank), rank, &sub);
    double th[2], tg[2];
    collectives(members, n, tcaMemoryCPU, th);
    collectives(members, n, tcaMemoryGPU, tg);
    sub_communicator(members, n);
    point_to_point(members, n, sub);

    /* 6: every rank over InfiniBand. */
    long mine[2] = {rank, 1}, total[2] = {0, 0};
    MPI_Allreduce(mine, total, 2, MPI_LONG, MPI_SUM, MPI_COMM_WORLD);
    EXPECT(total[0] == (long)size * (size - 1) / 2 && total[1] == size,
           "MPI_Allreduce over %d ranks: %ld, %ld", size, total[0], total[1]);

    double t[4] = {th[0], th[1], tg[0], tg[1]}, tmax[4];
    MPI_Reduce(t, tmax, 4, MPI_DOUBLE, MPI_MAX, 0, MPI_COMM_WORLD);
    int failed = p2_check_failures, any = 0;
    MPI_Reduce(&failed, &any, 1, MPI_INT, MPI_SUM, 0, MPI_COMM_WORLD);
    if (rank == 0) {
        printf("machine: %d ranks, %d sub-cluster%s of %d ranks\n", size, (size + per - 1) / per,
               size > per ? "s" : "", n);
        printf("P2_COMM_SUBCLUSTER allreduce %d doubles: host %.3f us, GPU %.3f us\n", COUNT,
               tmax[0] * 1e6, tmax[2] * 1e6);
        printf("P2_COMM_SUBCLUSTER allgather %d ints: host %.3f us, GPU %.3f us\n", COUNT,
               tmax[1] * 1e6, tmax[3] * 1e6);
        printf(any ? "machine: %d failed checks\n" : "machine: all checks passed\n", any);
    }
    MPI_Comm_free(&sub);
    MPI_Finalize();
    return failed ? 1 : 0;
}
