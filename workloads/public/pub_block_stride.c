/*
 * pub_block_stride - a block-stride (2D) DMA exchange between two ranks, as
 * the public HA-PACS/TCA program mnakao/PEACH2-Benchmarks
 * block-stride/PEACH2/tca-block-stride.c measures it, in either of its two
 * published versions (their hardware outputs: workloads/validation/
 * figures.txt, "Public programs measured on HA-PACS/TCA (2018)"). Written for
 * this tree from that program's calls, loop and timing; none of its code.
 *
 * What it measures: the one-way time of sending one face of a cube of
 * N x N x N doubles in GPU memory into the peer's cube with one block-stride
 * transfer (N blocks of N doubles, N*8 bytes wide, at a pitch of N*N doubles
 * on both sides: row 0 of every plane of mine into row N-1 of every plane of
 * the peer's), half a ping-pong round trip, and the bandwidth of the face.
 *
 * How, per N (N, 2N, .. while not above -e):
 *   - a GPU cube per rank (tcaMalloc, tcaMemoryGPU), every rank's handle of
 *     it gathered with MPI_Allgather;
 *   - one chain of one 2D transfer on DMAC channel 0, register-held, wait
 *     slot 0, tag 0x100, built with the API of the version chosen:
 *       current (the repository's head): tcaDescNew, tcaDescSetMemcpy2D,
 *         tcaDescSet; tcaDMAUseInternal | tcaDMAUseNotifyInternal |
 *         tcaDMANotify. Rank 0 starts and waits for the peer's face (the
 *         peer's handle); rank 1 waits for it, then starts. Before the sweep
 *         the whole measurement runs once untimed at the first N.
 *       first (its first commit, 0b1d9b7): the older numbered tables,
 *         tcaCreateDMADesc(.., 1024), tcaSetDMADesc_Memcpy2D at entry 0,
 *         tcaSetDMAChain, tcaDestroyDMADesc; the flags above and
 *         tcaDMAPipeline | tcaDMANotifySelf. Rank 0 starts, waits for its
 *         own completion (its own handle), then for the peer's face; rank 1
 *         waits for the peer's face, starts, waits for its own completion.
 *         No untimed first run.
 *   - -w untimed round trips, then -n timed ones between two MPI_Barrier +
 *     MPI_Wtime; one way = elapsed / n / 2;
 *   - every element of the cube is checked: the received rows hold the
 *     peer's row 0, the rest is untouched.
 * Defaults are the original's: N = 2 to 512, 100 timed round trips after 10
 * warm-ups. N = 512 takes a 1 GiB cube per rank, as on the K20X.
 *
 * usage: p2run -n 2 -- pub_block_stride [--variant current|first] [-b MIN_N] [-e MAX_N]
 *                                      [-n ITERS] [-w WARMUP] [--csv FILE]
 * -b and -e give the cube's edge N, not bytes. Output: a table (N, face
 * bytes, iterations, one-way time in us, bandwidth in MB/s, wrong elements of
 * both ranks) and the CSV columns variant,n,bytes,iters,time_us,
 * bandwidth_MBps,wrong (bytes = the face, N*N*8).
 * Exit status 0, 1 (a failed call, or wrong data), 2 (a bad argument).
 */
#include "pub_common.h"

#define CHANNEL 0
#define WAIT_SLOT 0
#define WAIT_TAG 0x100
#define FLAGS_CURRENT (tcaDMAUseInternal | tcaDMAUseNotifyInternal | tcaDMANotify)
#define FLAGS_FIRST (FLAGS_CURRENT | tcaDMAPipeline | tcaDMANotifySelf)
#define MAX_EDGE 1024

static const pub_program program = {
    "pub_block_stride",
    "usage: p2run -n 2 -- pub_block_stride [--variant current|first] [-b MIN_N] [-e MAX_N]\n"
    "                                      [-n ITERS] [-w WARMUP] [--csv FILE]\n"
    "  block-stride DMA exchange of a cube's face as tca-block-stride.c\n"
    "  (mnakao/PEACH2-Benchmarks) runs it: current = the repository's version\n"
    "  (tcaDescSetMemcpy2D, no wait for one's own completion; default), first = its\n"
    "  first commit (numbered tables, tcaDMANotifySelf and a wait on one's own handle);\n"
    "  cube edges N = MIN_N, 2*MIN_N, .. MAX_N (default 2 to 512), ITERS timed round\n"
    "  trips (default 100) after WARMUP untimed ones (default 10)\n",
    1};

typedef enum variant { CURRENT, FIRST } variant;

/* Element i of rank r's cube as filled. */
static double element(int r, size_t i) { return (double)(r + 1) * 2147483648.0 + (double)i; }

/* One N: *one_way_us (rank 0's), *wrong (this rank's wrong elements). */
static void measure(int n, variant v, const pub_options *o, int rank, double *one_way_us,
                    long *wrong)
{
    const int peer = 1 - rank;
    const size_t edge = (size_t)n, plane = edge * edge, total = plane * edge;
    const size_t cube_bytes = total * sizeof(double);
    double *host, *gpu_cube;
    PUB_CHECK_CUDA(cudaMallocHost((void **)&host, cube_bytes));
    PUB_CHECK_TCA(tcaMalloc((void **)&gpu_cube, cube_bytes, tcaMemoryGPU));
    for (size_t i = 0; i < total; i++)
        host[i] = element(rank, i);
    PUB_CHECK_CUDA(cudaMemcpy(gpu_cube, host, cube_bytes, cudaMemcpyDefault));
    tcaHandle *cube_of = pub_gather_handles(gpu_cube, cube_bytes, 2);

    /* Row 0 of each of my planes into row N-1 of the peer's. */
    const size_t pitch = plane * sizeof(double), width = edge * sizeof(double);
    const size_t src_at = 0, dst_at = (edge - 1) * edge * sizeof(double);
    tcaDesc *chain = NULL;
    int table = -1;
    if (v == CURRENT) {
        chain = tcaDescNew();
        if (!chain) {
            fprintf(stderr, "%s: tcaDescNew failed\n", program.name);
            exit(PUB_EXIT_FAILURE);
        }
        PUB_CHECK_TCA(tcaDescSetMemcpy2D(chain, &cube_of[peer], dst_at, pitch, &cube_of[rank],
                                         src_at, pitch, width, edge, FLAGS_CURRENT, WAIT_SLOT,
                                         WAIT_TAG));
        PUB_CHECK_TCA(tcaDescSet(chain, CHANNEL));
    } else {
        int entry = 0;
        PUB_CHECK_TCA(tcaCreateDMADesc(&table, 1024));
        PUB_CHECK_TCA(tcaSetDMADesc_Memcpy2D(table, entry, &entry, &cube_of[peer], dst_at, pitch,
                                             &cube_of[rank], src_at, pitch, width, edge,
                                             FLAGS_FIRST, WAIT_SLOT, WAIT_TAG));
        PUB_CHECK_TCA(tcaSetDMAChain(CHANNEL, table));
    }
    MPI_Barrier(MPI_COMM_WORLD);

    /* The first version also waits for its own completion (its own handle). */
    const tcaHandle *own = v == FIRST ? &cube_of[rank] : NULL;
    double t0 = 0.0;
    for (int it = 0; it < o->warmup + o->iters; it++) {
        if (it == o->warmup) {
            MPI_Barrier(MPI_COMM_WORLD);
            t0 = MPI_Wtime();
        }
        if (rank == 0) {
            PUB_CHECK_TCA(tcaStartDMADesc(CHANNEL));
            if (own)
                PUB_CHECK_TCA(tcaWaitDMARecvDesc(own, WAIT_SLOT, WAIT_TAG));
            PUB_CHECK_TCA(tcaWaitDMARecvDesc(&cube_of[peer], WAIT_SLOT, WAIT_TAG));
        } else {
            PUB_CHECK_TCA(tcaWaitDMARecvDesc(&cube_of[peer], WAIT_SLOT, WAIT_TAG));
            PUB_CHECK_TCA(tcaStartDMADesc(CHANNEL));
            if (own)
                PUB_CHECK_TCA(tcaWaitDMARecvDesc(own, WAIT_SLOT, WAIT_TAG));
        }
    }
    MPI_Barrier(MPI_COMM_WORLD);
    *one_way_us = (MPI_Wtime() - t0) / o->iters / 2.0 * 1e6;

    PUB_CHECK_CUDA(cudaMemcpy(host, gpu_cube, cube_bytes, cudaMemcpyDefault));
    long bad = 0;
    for (size_t p = 0; p < edge; p++)
        for (size_t row = 0; row < edge; row++) {
            const double *got = host + p * plane + row * edge;
            /* The last row of a plane is the peer's first row of that plane. */
            for (size_t k = 0; k < edge; k++)
                bad += got[k] != (row == edge - 1 ? element(peer, p * plane + k)
                                                  : element(rank, p * plane + row * edge + k));
        }
    *wrong = bad;

    MPI_Barrier(MPI_COMM_WORLD);
    if (chain)
        PUB_CHECK_TCA(tcaDescFree(chain));
    else
        PUB_CHECK_TCA(tcaDestroyDMADesc(table));
    free(cube_of);
    PUB_CHECK_CUDA(cudaFreeHost(host));
    PUB_CHECK_TCA(tcaFree(gpu_cube, tcaMemoryGPU));
}

int main(int argc, char **argv)
{
    int rank, nprocs;
    pub_mpi_init(&argc, &argv, &rank, &nprocs);
    pub_options o = {.first = 2, .last = 512, .iters = 100, .warmup = 10, .variant = "current"};
    int status = pub_parse_options(&program, argc, argv, &o, rank);
    variant v = CURRENT;
    if (status == 0 && !strcmp(o.variant, "first"))
        v = FIRST;
    else if (status == 0 && strcmp(o.variant, "current"))
        status = pub_usage_error(&program, rank, "--variant must be current or first");
    if (status == 0) {
        if (nprocs != 2)
            status = pub_usage_error(&program, rank, "runs on 2 ranks (p2run -n 2)");
        else if (o.first < 2 || o.first > MAX_EDGE)
            status = pub_usage_error(&program, rank, "-b (the cube's edge N) must be 2 to 1024");
        else if (o.last < o.first || o.last > MAX_EDGE)
            status = pub_usage_error(&program, rank, "-e (the cube's edge N) must be -b to 1024");
    }
    const int stop = pub_start(status);
    if (stop >= 0)
        return stop;

    FILE *csv = NULL;
    if (rank == 0) {
        csv = pub_csv_open(&program, o.csv, "variant,n,bytes,iters,time_us,bandwidth_MBps,wrong");
        printf("# %s: block-stride DMA exchange as tca-block-stride.c (mnakao/PEACH2-Benchmarks),"
               " %s version, %d timed round trips after %d warm-ups\n", program.name,
               v == CURRENT ? "current" : "first", o.iters, o.warmup);
    }
    double us;
    long mine, total_wrong = 0;
    if (v == CURRENT) { /* the current version's untimed first run */
        measure((int)o.first, v, &o, rank, &us, &mine);
        total_wrong += pub_sum_wrong(mine);
    }
    if (rank == 0)
        printf("%6s %10s %8s %12s %16s %8s\n", "N", "bytes", "iters", "time(us)",
               "bandwidth(MB/s)", "wrong");
    for (int n = (int)o.first; n <= (int)o.last; n *= 2) {
        measure(n, v, &o, rank, &us, &mine);
        long wrong = pub_sum_wrong(mine);
        total_wrong += wrong;
        const unsigned long long face = (unsigned long long)n * n * sizeof(double);
        if (rank == 0) {
            printf("%6d %10llu %8d %12.3f %16.2f %8ld\n", n, face, o.iters, us, face / us, wrong);
            if (csv) {
                fprintf(csv, "%s,%d,%llu,%d,%.4f,%.4f,%ld\n", v == CURRENT ? "current" : "first",
                        n, face, o.iters, us, face / us, wrong);
                fflush(csv);
            }
        }
    }
    return pub_finish(&program, rank, csv, o.csv, total_wrong,
                      v == CURRENT ? "current version, 2 ranks" : "first version, 2 ranks", status);
}
