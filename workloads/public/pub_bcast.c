/*
 * pub_bcast - a binomial-tree broadcast of a GPU buffer over TCA DMA, as the
 * public HA-PACS/TCA program mnakao/PEACH2-Benchmarks
 * misc/bcast/PEACH2/tca_bcast.c measures it on 16 ranks (its hardware output:
 * workloads/validation/public_hardware.csv). Written for this tree from that
 * program's calls, loop and timing; none of its code. It is the public
 * program in which no node sends and receives at once (a rank receives, then
 * sends), kept beside the allgather, in which every node does both.
 *
 * What it measures: the time of one broadcast from rank 0, the slowest
 * rank's, averaged over the calls, per size.
 *
 * How, per size (a whole number of doubles):
 *   - one GPU array per rank from tcaMalloc (tcaMemoryGPU), rank 0's holding
 *     the data; every rank's handle gathered with MPI_Allgather;
 *   - one chain per sending rank on DMAC channel 0, register-held: for each
 *     tree level where the rank is a root (rank % span == 0, span = ranks,
 *     ranks / 2, ...) one transfer of the whole array to rank + span / 2
 *     (tcaDMAUseInternal | tcaDMAUseNotifyInternal | tcaDMANotify |
 *     tcaDMANotifySelf, wait slot 0, tag 0x100); odd ranks load none;
 *   - each call: MPI_Barrier, MPI_Wtime; a rank that sends waits for its
 *     parent's data (rank 0 does not), starts its chain and waits for its own
 *     first notification; an odd rank waits for its parent's data; the
 *     rank's time, MPI_Allreduce MAX;
 *   - -w untimed calls, then -n timed ones; time = mean of the per-call
 *     maxima; every element is checked after the calls.
 * As the original, the whole measurement runs once untimed at the first size
 * before the sweep. Defaults: 8 B to 64 KB, 1000 timed calls after 50.
 *
 * usage: p2run -n R -- pub_bcast [-b MIN] [-e MAX] [-n ITERS] [-w WARMUP] [--csv FILE]
 * R a power of two from 2 to 16. Output: a table (bytes, iterations, time per
 * call in us, wrong elements of every rank) and the CSV columns
 * ranks,bytes,iters,time_us,wrong.
 * Exit status 0, 1 (a failed call, or wrong data), 2 (a bad argument).
 */
#include "pub_common.h"

#define WAIT_SLOT 0
#define WAIT_TAG 0x100
#define CHANNEL 0
#define FLAGS (tcaDMAUseInternal | tcaDMAUseNotifyInternal | tcaDMANotify | tcaDMANotifySelf)

static const pub_program program = {
    "pub_bcast",
    "usage: p2run -n R -- pub_bcast [-b MIN] [-e MAX] [-n ITERS] [-w WARMUP] [--csv FILE]\n"
    "  binomial broadcast of a GPU buffer from rank 0 as tca_bcast.c\n"
    "  (mnakao/PEACH2-Benchmarks) runs it, R = 2, 4, 8 or 16 ranks: MIN, 2*MIN, .. MAX\n"
    "  bytes (multiples of 8; default 8 to 64K), ITERS timed calls (default 1000)\n"
    "  after WARMUP untimed ones (default 50)\n",
    0};

static double element(size_t i) { return 3.0 * (double)i + 0.5; }

/* One size: *call_us (the mean over the timed calls of the slowest rank's
 * time), *wrong (this rank's wrong elements). */
static void measure(size_t bytes, const pub_options *o, int rank, int nprocs, double *call_us,
                    long *wrong)
{
    const size_t count = bytes / sizeof(double);
    double *host, *gpu;
    PUB_CHECK_CUDA(cudaMallocHost((void **)&host, bytes));
    PUB_CHECK_TCA(tcaMalloc((void **)&gpu, bytes, tcaMemoryGPU));
    for (size_t i = 0; i < count; i++)
        host[i] = rank == 0 ? element(i) : -1.0;
    PUB_CHECK_CUDA(cudaMemcpy(gpu, host, bytes, cudaMemcpyDefault));
    tcaHandle *of = pub_gather_handles(gpu, bytes, nprocs);

    /* The levels where I am a root, the largest span first; my parent is the
     * root of the first level at which I am one, one span below me. */
    tcaDesc *chain = tcaDescNew();
    if (!chain) {
        fprintf(stderr, "%s: tcaDescNew failed\n", program.name);
        exit(PUB_EXIT_FAILURE);
    }
    int parent = -1;
    for (int span = nprocs; span >= 2; span /= 2)
        if (rank % span == 0) {
            PUB_CHECK_TCA(tcaDescSetMemcpy(chain, &of[rank + span / 2], 0, &of[rank], 0, bytes,
                                           FLAGS, WAIT_SLOT, WAIT_TAG));
        } else if (parent < 0 && rank % (span / 2) == 0) {
            parent = rank - span / 2;
        }
    const int sends = rank % 2 == 0;
    if (sends)
        PUB_CHECK_TCA(tcaDescSet(chain, CHANNEL));

    double sum = 0.0;
    for (int it = 0; it < o->warmup + o->iters; it++) {
        MPI_Barrier(MPI_COMM_WORLD);
        const double t0 = MPI_Wtime();
        if (parent >= 0)
            PUB_CHECK_TCA(tcaWaitDMARecvDesc(&of[parent], WAIT_SLOT, WAIT_TAG));
        if (sends) {
            PUB_CHECK_TCA(tcaStartDMADesc(CHANNEL));
            PUB_CHECK_TCA(tcaWaitDMARecvDesc(&of[rank], WAIT_SLOT, WAIT_TAG));
        }
        if (it >= o->warmup) {
            double mine = MPI_Wtime() - t0, slowest;
            MPI_Allreduce(&mine, &slowest, 1, MPI_DOUBLE, MPI_MAX, MPI_COMM_WORLD);
            sum += slowest;
        }
    }
    *call_us = sum / o->iters * 1e6;

    /* The program relies on notifications alone; the chain's later transfers
     * may still run: wait for the channel before the data is checked. */
    if (sends)
        PUB_CHECK_TCA(tcaWaitDMAC(CHANNEL));
    MPI_Barrier(MPI_COMM_WORLD);
    PUB_CHECK_CUDA(cudaMemcpy(host, gpu, bytes, cudaMemcpyDefault));
    long bad = 0;
    for (size_t i = 0; i < count; i++)
        bad += host[i] != element(i);
    *wrong = bad;

    MPI_Barrier(MPI_COMM_WORLD);
    PUB_CHECK_TCA(tcaDescFree(chain));
    free(of);
    PUB_CHECK_CUDA(cudaFreeHost(host));
    PUB_CHECK_TCA(tcaFree(gpu, tcaMemoryGPU));
}

int main(int argc, char **argv)
{
    int rank, nprocs;
    pub_mpi_init(&argc, &argv, &rank, &nprocs);
    pub_options o = {.first = 8, .last = 64u << 10, .iters = 1000, .warmup = 50};
    int status = pub_parse_options(&program, argc, argv, &o, rank);
    if (status == 0) {
        status = pub_check_pow2_ranks(&program, rank, nprocs);
        if (status == 0)
            status = pub_check_doubles(&program, rank, &o);
    }
    const int stop = pub_start(status);
    if (stop >= 0)
        return stop;

    FILE *csv = NULL;
    if (rank == 0) {
        csv = pub_csv_open(&program, o.csv, "ranks,bytes,iters,time_us,wrong");
        printf("# %s: binomial broadcast of a GPU buffer as tca_bcast.c"
               " (mnakao/PEACH2-Benchmarks), %d ranks, %d timed calls after %d warm-ups\n",
               program.name, nprocs, o.iters, o.warmup);
    }
    double us;
    long mine, total_wrong = 0;
    measure((size_t)o.first, &o, rank, nprocs, &us, &mine); /* untimed first run */
    total_wrong += pub_sum_wrong(mine);
    if (rank == 0)
        printf("%12s %8s %14s %8s\n", "bytes", "iters", "time/call(us)", "wrong");
    for (uint64_t bytes = o.first; bytes <= o.last; bytes *= 2) {
        measure((size_t)bytes, &o, rank, nprocs, &us, &mine);
        long wrong = pub_sum_wrong(mine);
        total_wrong += wrong;
        if (rank == 0) {
            printf("%12llu %8d %14.3f %8ld\n", (unsigned long long)bytes, o.iters, us, wrong);
            if (csv) {
                fprintf(csv, "%d,%llu,%d,%.4f,%ld\n", nprocs, (unsigned long long)bytes, o.iters,
                        us, wrong);
                fflush(csv);
            }
        }
    }
    char job[32];
    snprintf(job, sizeof job, "%d ranks", nprocs);
    return pub_finish(&program, rank, csv, o.csv, total_wrong, job, status);
}
