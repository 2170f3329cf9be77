/*
 * pub_allgather - a recursive-doubling allgather of GPU buffers over TCA DMA,
 * as the public HA-PACS/TCA program mnakao/PEACH2-Benchmarks
 * misc/allgather/PEACH2/tca_allgather.c measures it on 16 ranks (its
 * hardware output: workloads/validation/figures.txt, "Public programs
 * measured on HA-PACS/TCA (2018)"). Written for this tree from that program's
 * calls, loop and timing; none of its code.
 *
 * What it measures: the time of one allgather call, the slowest rank's,
 * averaged over the calls, per size (bytes per rank).
 *
 * How, per size (a whole number of doubles per rank):
 *   - a GPU send array and a GPU array of the whole result (ranks x bytes),
 *     both from tcaMalloc (tcaMemoryGPU); every rank's handle of its whole
 *     array gathered with MPI_Allgather;
 *   - log2(ranks) steps, step i a chain of its own loaded into DMAC channel
 *     i (register-held descriptors; tcaDMAUseInternal |
 *     tcaDMAUseNotifyInternal | tcaDMANotify | tcaDMANotifySelf, wait slot 0,
 *     tag 0x100 for every transfer). Step 0's chain first copies my send
 *     array into my own block of my whole array; then, with partner
 *     = rank ^ 2^i, step i sends the 2^i blocks I hold (from block `first`,
 *     the lowest rank of my group) into the same place of the partner's
 *     whole array; after step i, first -= 2^i if rank >= partner;
 *   - each call: MPI_Barrier, MPI_Wtime, then per step: start the channel,
 *     wait for a notification raised by my own DMA (my handle), then for the
 *     partner's data (its handle); the rank's time, MPI_Allreduce MAX;
 *   - -w untimed calls, then -n timed ones; time = mean of the per-call
 *     maxima; every element of the whole array is checked after the calls.
 * As the original, the whole measurement runs once untimed at the first size
 * before the sweep. Defaults are the original's: 16 B to 512 KB per rank, 100
 * timed calls after 50 warm-ups.
 *
 * usage: p2run -n R -- pub_allgather [-b MIN] [-e MAX] [-n ITERS] [-w WARMUP] [--csv FILE]
 * R a power of two from 2 to 16 (one DMAC channel per step). Output: a table
 * (bytes per rank, doubles per rank, iterations, time per call in us, wrong
 * elements of every rank) and the CSV columns
 * ranks,bytes,count,iters,time_us,wrong.
 * Exit status 0, 1 (a failed call, or wrong data), 2 (a bad argument).
 */
#include "pub_common.h"

#define WAIT_SLOT 0
#define WAIT_TAG 0x100
#define FLAGS (tcaDMAUseInternal | tcaDMAUseNotifyInternal | tcaDMANotify | tcaDMANotifySelf)

static const pub_program program = {
    "pub_allgather",
    "usage: p2run -n R -- pub_allgather [-b MIN] [-e MAX] [-n ITERS] [-w WARMUP] [--csv FILE]\n"
    "  recursive-doubling allgather of GPU buffers as tca_allgather.c\n"
    "  (mnakao/PEACH2-Benchmarks) runs it, R = 2, 4, 8 or 16 ranks: MIN, 2*MIN, .. MAX\n"
    "  bytes per rank (multiples of 8; default 16 to 512K), ITERS timed calls\n"
    "  (default 100) after WARMUP untimed ones (default 50)\n",
    0};

/* Element i of rank r's send array. */
static double element(int r, size_t i) { return (double)(r + 1) * 4294967296.0 + (double)i; }

/* One size: *call_us (the mean over the timed calls of the slowest rank's
 * time), *wrong (this rank's wrong elements). */
static void measure(size_t bytes, const pub_options *o, int rank, int nprocs, int steps,
                    double *call_us, long *wrong)
{
    const size_t count = bytes / sizeof(double), whole_bytes = bytes * (size_t)nprocs;
    double *host, *gpu_send, *gpu_whole;
    PUB_CHECK_CUDA(cudaMallocHost((void **)&host, whole_bytes));
    PUB_CHECK_TCA(tcaMalloc((void **)&gpu_send, bytes, tcaMemoryGPU));
    PUB_CHECK_TCA(tcaMalloc((void **)&gpu_whole, whole_bytes, tcaMemoryGPU));
    for (size_t i = 0; i < count; i++)
        host[i] = element(rank, i);
    PUB_CHECK_CUDA(cudaMemcpy(gpu_send, host, bytes, cudaMemcpyDefault));
    for (size_t i = 0; i < count * (size_t)nprocs; i++)
        host[i] = -1.0;
    PUB_CHECK_CUDA(cudaMemcpy(gpu_whole, host, whole_bytes, cudaMemcpyDefault));

    tcaHandle send_handle;
    PUB_CHECK_TCA(tcaCreateHandle(&send_handle, gpu_send, bytes, tcaMemoryGPU));
    tcaHandle *whole_of = pub_gather_handles(gpu_whole, whole_bytes, nprocs);

    _Static_assert(TCA_DMA_CHANNELS >= 4, "16 ranks take 4 steps, one channel each");
    tcaDesc *step_chain[TCA_DMA_CHANNELS];
    for (int s = 0; s < steps; s++) {
        step_chain[s] = tcaDescNew();
        if (!step_chain[s]) {
            fprintf(stderr, "%s: tcaDescNew failed\n", program.name);
            exit(PUB_EXIT_FAILURE);
        }
    }
    /* Step 0 begins with the copy of my own block into place. */
    PUB_CHECK_TCA(tcaDescSetMemcpy(step_chain[0], &whole_of[rank], (size_t)rank * bytes,
                                   &send_handle, 0, bytes, FLAGS, WAIT_SLOT, WAIT_TAG));
    PUB_CHECK_TCA(tcaDescSet(step_chain[0], 0));
    int first = rank; /* the lowest rank whose block I hold */
    for (int s = 0; s < steps; s++) {
        const int partner = rank ^ (1 << s);
        const size_t at = (size_t)first * bytes;
        PUB_CHECK_TCA(tcaDescSetMemcpy(step_chain[s], &whole_of[partner], at, &whole_of[rank], at,
                                       ((size_t)1 << s) * bytes, FLAGS, WAIT_SLOT, WAIT_TAG));
        PUB_CHECK_TCA(tcaDescSet(step_chain[s], s));
        if (rank >= partner)
            first -= 1 << s;
    }

    double sum = 0.0;
    for (int it = 0; it < o->warmup + o->iters; it++) {
        MPI_Barrier(MPI_COMM_WORLD);
        const double t0 = MPI_Wtime();
        for (int s = 0; s < steps; s++) {
            PUB_CHECK_TCA(tcaStartDMADesc(s));
            PUB_CHECK_TCA(tcaWaitDMARecvDesc(&whole_of[rank], WAIT_SLOT, WAIT_TAG));
            PUB_CHECK_TCA(tcaWaitDMARecvDesc(&whole_of[rank ^ (1 << s)], WAIT_SLOT, WAIT_TAG));
        }
        if (it >= o->warmup) {
            double mine = MPI_Wtime() - t0, slowest;
            MPI_Allreduce(&mine, &slowest, 1, MPI_DOUBLE, MPI_MAX, MPI_COMM_WORLD);
            sum += slowest;
        }
    }
    *call_us = sum / o->iters * 1e6;

    PUB_CHECK_CUDA(cudaMemcpy(host, gpu_whole, whole_bytes, cudaMemcpyDefault));
    long bad = 0;
    for (int r = 0; r < nprocs; r++)
        for (size_t i = 0; i < count; i++)
            bad += host[(size_t)r * count + i] != element(r, i);
    *wrong = bad;

    MPI_Barrier(MPI_COMM_WORLD);
    for (int s = 0; s < steps; s++)
        PUB_CHECK_TCA(tcaDescFree(step_chain[s]));
    free(whole_of);
    PUB_CHECK_CUDA(cudaFreeHost(host));
    PUB_CHECK_TCA(tcaFree(gpu_send, tcaMemoryGPU));
    PUB_CHECK_TCA(tcaFree(gpu_whole, tcaMemoryGPU));
}

int main(int argc, char **argv)
{
    int rank, nprocs;
    pub_mpi_init(&argc, &argv, &rank, &nprocs);
    pub_options o = {.first = 16, .last = 512u << 10, .iters = 100, .warmup = 50};
    int status = pub_parse_options(&program, argc, argv, &o, rank);
    int steps = 0;
    while ((1 << steps) < nprocs)
        steps++;
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
        csv = pub_csv_open(&program, o.csv, "ranks,bytes,count,iters,time_us,wrong");
        printf("# %s: recursive-doubling allgather of GPU buffers as tca_allgather.c"
               " (mnakao/PEACH2-Benchmarks), %d ranks, %d timed calls after %d warm-ups\n",
               program.name, nprocs, o.iters, o.warmup);
    }
    double us;
    long mine, total_wrong = 0;
    measure((size_t)o.first, &o, rank, nprocs, steps, &us, &mine); /* untimed first run */
    total_wrong += pub_sum_wrong(mine);
    if (rank == 0)
        printf("%12s %10s %8s %14s %8s\n", "bytes", "count", "iters", "time/call(us)", "wrong");
    for (uint64_t bytes = o.first; bytes <= o.last; bytes *= 2) {
        measure((size_t)bytes, &o, rank, nprocs, steps, &us, &mine);
        long wrong = pub_sum_wrong(mine);
        total_wrong += wrong;
        if (rank == 0) {
            printf("%12llu %10llu %8d %14.3f %8ld\n", (unsigned long long)bytes,
                   (unsigned long long)(bytes / sizeof(double)), o.iters, us, wrong);
            if (csv) {
                fprintf(csv, "%d,%llu,%llu,%d,%.4f,%ld\n", nprocs, (unsigned long long)bytes,
                        (unsigned long long)(bytes / sizeof(double)), o.iters, us, wrong);
                fflush(csv);
            }
        }
    }
    char job[32];
    snprintf(job, sizeof job, "%d ranks", nprocs);
    return pub_finish(&program, rank, csv, o.csv, total_wrong, job, status);
}
