/* exchange: p2_exchange and p2_exchange_barrier over the whole job, as a
 * TCA program without MPI uses them to swap tcaHandles: on the 64-node
 * machine (topologies/hapacs-tca-64.topo) its ranks are on four PEACH2
 * sub-clusters that no cable joins, and the exchange crosses them over
 * InfiniBand. Each rank checks:
 *
 *   1. ROUNDS exchanges of 8, 64 and 240 bytes, every byte of every rank's
 *      blob (a function of rank, round and offset, so a stale or crossed
 *      slot shows);
 *   2. between them, collectives on P2_COMM_SUBCLUSTER (its exchanges among
 *      the sub-cluster's ranks only) and p2_exchange_barrier, so that
 *      crossings and sub-cluster exchanges interleave;
 *   3. a tcaHandle learnt through the exchange works: a DMA to the next rank
 *      of its sub-cluster, data checked.
 *
 * Rank 0 prints the simulated time of one 8-byte exchange and of one
 * barrier (the mean over the rounds, the slowest rank's).
 *
 * exchange sizes: the last rank passes 16 bytes where the others pass 8
 * (erroneous: an exchange is a collective); every rank must get
 * TCA_ERROR_INVALID_ARGUMENT (each printing what it got), and the next
 * exchange, made right, must work. Exit 0 when both hold. */
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <unistd.h>

#include "p2.h"
#include "p2coll.h"
#include "tca-api.h"
#include "p2_check.h"

#define ROUNDS 12
#define MAX_RANKS 64
#define DMA_BYTES 4096

static int rank, size;

static unsigned char pattern(int owner, int round, size_t i)
{
    return (unsigned char)(owner * 31 + round * 7 + i * 13 + 1);
}

/* The slowest rank's value of `v`. */
static double slowest(double v)
{
    double all[MAX_RANKS], m = 0;
    CHECK(p2_exchange(&v, all, sizeof v));
    for (int q = 0; q < size; q++)
        m = all[q] > m ? all[q] : m;
    return m;
}

/* exchange sizes (above). */
static int sizes(void)
{
    uint64_t mine[2] = {1000u + (unsigned)rank, 7}, all[2 * MAX_RANKS];
    memset(all, 0, sizeof all);
    size_t bytes = rank == size - 1 ? 16 : 8;
    tcaresult r = p2_exchange(mine, all, bytes);
    printf("rank %d: p2_exchange of %zu bytes: %s\n", rank, bytes,
           r == TCA_ERROR_INVALID_ARGUMENT ? "TCA_ERROR_INVALID_ARGUMENT"
           : r == TCA_SUCCESS              ? "success"
                                           : "another error");
    int refused = r == TCA_ERROR_INVALID_ARGUMENT, bad = 0;
    r = p2_exchange(mine, all, 8);
    for (int q = 0; q < size; q++)
        bad += all[q] != 1000u + (unsigned)q;
    bad += r != TCA_SUCCESS;
    printf("rank %d: the next exchange %s\n", rank, bad ? "WRONG" : "ok");
    return refused && !bad ? 0 : 1;
}

int main(int argc, char **argv)
{
    CHECK(tcaInit());
    rank = p2_rank();
    size = p2_size();
    REQUIRE(size >= 2 && size <= MAX_RANKS);
    if (argc > 1 && strcmp(argv[1], "sizes") == 0)
        return sizes();
    static unsigned char mine[240], all[MAX_RANKS * 240];
    /* A job the exchange cannot cross: rank 0, which says why on stderr,
     * ends it; the others wait for that, lest one ends the job first and
     * takes rank 0's line with it. */
    tcaresult first = p2_exchange(mine, all, 8);
    if (first != TCA_SUCCESS) {
        if (rank == 0) {
            fprintf(stderr, "exchange: p2_exchange: %s\n", tcaGetErrorString(first));
            return 1;
        }
        for (;;)
            pause();
    }
    static const size_t sizes[3] = {8, 64, 240};
    double t_exchange = 0, t_barrier = 0;
    long wrong = 0, *red = NULL; /* a collective's buffers: registered memory */
    CHECK(tcaMalloc((void **)&red, 2 * sizeof *red, tcaMemoryCPU));
    for (int round = 0; round < ROUNDS; round++) {
        size_t bytes = sizes[round % 3];
        for (size_t i = 0; i < bytes; i++)
            mine[i] = pattern(rank, round, i);
        memset(all, 0, sizeof all);
        double t0 = p2_wtime();
        CHECK(p2_exchange(mine, all, bytes));
        if (bytes == 8)
            t_exchange += p2_wtime() - t0;
        for (int q = 0; q < size; q++)
            for (size_t i = 0; i < bytes; i++)
                wrong += all[(size_t)q * bytes + i] != pattern(q, round, i);
        if (round % 4 == 1) { /* a sub-cluster collective between two crossings */
            red[0] = rank + round;
            CHECK(p2_allreduce(&red[0], &red[1], 1, TCA_LONG, TCA_OP_SUM, P2_COMM_SUBCLUSTER));
            const long sum = red[1];
            long want = 0;
            for (int q = 0; q < size; q++)
                if (p2_subcluster(q) == p2_subcluster(rank))
                    want += q + round;
            EXPECT(sum == want, "round %d: sub-cluster allreduce %ld, expected %ld", round, sum,
                   want);
        }
        t0 = p2_wtime();
        CHECK(p2_exchange_barrier());
        t_barrier += p2_wtime() - t0;
    }
    EXPECT(wrong == 0, "%ld wrong bytes in %d exchanges", wrong, ROUNDS);

    /* 3: a handle learnt through the exchange, used within the sub-cluster. */
    unsigned char *dst = NULL, *src = NULL;
    CHECK(tcaMalloc((void **)&dst, DMA_BYTES, tcaMemoryCPU));
    CHECK(tcaMalloc((void **)&src, DMA_BYTES, tcaMemoryCPU));
    memset(dst, 0, DMA_BYTES);
    for (int i = 0; i < DMA_BYTES; i++)
        src[i] = (unsigned char)(rank * 3 + i);
    tcaHandle own, handles[MAX_RANKS], hs;
    CHECK(tcaCreateHandle(&own, dst, DMA_BYTES, tcaMemoryCPU));
    CHECK(tcaCreateHandle(&hs, src, DMA_BYTES, tcaMemoryCPU));
    REQUIRE(sizeof own <= 240);
    CHECK(p2_exchange(&own, handles, sizeof own));
    int members[MAX_RANKS], n = 0, me = 0;
    for (int q = 0; q < size; q++)
        if (p2_subcluster(q) == p2_subcluster(rank)) {
            if (q == rank)
                me = n;
            members[n++] = q;
        }
    if (n > 1) {
        const int next = members[(me + 1) % n], prev = members[(me + n - 1) % n];
        tcaDesc *d = tcaDescNew();
        REQUIRE(d != NULL);
        CHECK(tcaDescSetMemcpy(d, &handles[next], 0, &hs, 0, DMA_BYTES, tcaDMANotify, 1, 7));
        CHECK(tcaDescSet(d, 1));
        CHECK(tcaStartDMADesc(1));
        CHECK(tcaWaitDMARecvDesc(&handles[prev], 1, 7));
        long bad = 0;
        for (int i = 0; i < DMA_BYTES; i++)
            bad += dst[i] != (unsigned char)(prev * 3 + i);
        EXPECT(bad == 0, "DMA from rank %d: %ld wrong bytes", prev, bad);
        CHECK(tcaWaitDMAC(1));
        CHECK(tcaDescFree(d));
    }
    CHECK(p2_exchange_barrier());
    double te = slowest(t_exchange / (ROUNDS / 3)), tb = slowest(t_barrier / ROUNDS);
    int failed = p2_check_failures, fails[MAX_RANKS], any = 0;
    CHECK(p2_exchange(&failed, fails, sizeof failed));
    for (int q = 0; q < size; q++)
        any += fails[q];
    if (rank == 0) {
        printf("exchange: %d ranks on %d sub-cluster(s)\n", size, p2_subcluster(size - 1) + 1);
        printf("p2_exchange 8 B: %.3f us, p2_exchange_barrier: %.3f us\n", te * 1e6, tb * 1e6);
        printf(any ? "exchange: %d failed checks\n" : "exchange: all checks passed\n", any);
    }
    return failed ? 1 : 0;
}
