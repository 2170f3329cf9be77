/*
 * pub_pingpong - GPU-to-GPU DMA ping-pong between two ranks, as the public
 * HA-PACS/TCA program mnakao/PEACH2-Benchmarks pingpong/PEACH2/tca-pingpong.c
 * measures it (its hardware output: workloads/validation/figures.txt, the
 * section "Public programs measured on HA-PACS/TCA (2018)"). Written for this
 * tree from that program's calls, loop and timing; none of its code.
 *
 * What it measures: the one-way time of a DMA write from one rank's GPU
 * buffer into the other rank's, half a round trip, and the bandwidth that
 * gives (bytes per microsecond, MB/s as the original prints it).
 *
 * How, per size (bytes, a whole number of doubles):
 *   - a send and a receive buffer of GPU memory (tcaMalloc, tcaMemoryGPU),
 *     every rank's handles of both gathered with MPI_Allgather;
 *   - one chain of one transfer, loaded once into DMAC channel 0: my send
 *     buffer into the peer's receive buffer, register-held descriptor,
 *     notification at the peer and at me (tcaDMAUseInternal |
 *     tcaDMAUseNotifyInternal | tcaDMANotify | tcaDMANotifySelf, wait slot 0,
 *     tag 0x100);
 *   - -w untimed round trips, then -n timed ones between two MPI_Barrier +
 *     MPI_Wtime: rank 0 starts, waits for its own completion (its own send
 *     handle), then for the peer's data (the peer's receive handle); rank 1
 *     waits for rank 0's data, starts, waits for its own completion;
 *   - one way = elapsed / n / 2; every received element is checked.
 * As the original, the whole measurement runs once untimed at the first size
 * before the sweep. Defaults are the original's: 8 B to 4 MB, 500 timed round
 * trips after 10 warm-ups.
 *
 * usage: p2run -n 2 -- pub_pingpong [-b MIN] [-e MAX] [-n ITERS] [-w WARMUP] [--csv FILE]
 * Output: a table (bytes, iterations, latency in us, bandwidth in MB/s, wrong
 * elements of both ranks) and the CSV columns
 * bytes,iters,latency_us,bandwidth_MBps,wrong.
 * Exit status 0, 1 (a failed call, or wrong data), 2 (a bad argument).
 */
#include "pub_common.h"

#define CHANNEL 0
#define WAIT_SLOT 0
#define WAIT_TAG 0x100
#define FLAGS (tcaDMAUseInternal | tcaDMAUseNotifyInternal | tcaDMANotify | tcaDMANotifySelf)

static const pub_program program = {
    "pub_pingpong",
    "usage: p2run -n 2 -- pub_pingpong [-b MIN] [-e MAX] [-n ITERS] [-w WARMUP] [--csv FILE]\n"
    "  GPU-to-GPU DMA ping-pong as tca-pingpong.c (mnakao/PEACH2-Benchmarks) runs it:\n"
    "  sizes MIN, 2*MIN, .. MAX bytes (multiples of 8; default 8 to 4M), ITERS timed\n"
    "  round trips (default 500) after WARMUP untimed ones (default 10)\n",
    0};

/* Element i of rank r's send buffer. */
static double element(int r, size_t i) { return (double)(r + 1) * 16777216.0 + (double)i; }

/* One size: *one_way_us (rank 0's), *wrong (this rank's wrong elements). */
static void measure(size_t bytes, const pub_options *o, int rank, double *one_way_us, long *wrong)
{
    const int peer = 1 - rank;
    const size_t count = bytes / sizeof(double);
    double *host, *gpu_send, *gpu_recv;
    PUB_CHECK_CUDA(cudaMallocHost((void **)&host, bytes));
    PUB_CHECK_TCA(tcaMalloc((void **)&gpu_send, bytes, tcaMemoryGPU));
    PUB_CHECK_TCA(tcaMalloc((void **)&gpu_recv, bytes, tcaMemoryGPU));
    for (size_t i = 0; i < count; i++)
        host[i] = element(rank, i);
    PUB_CHECK_CUDA(cudaMemcpy(gpu_send, host, bytes, cudaMemcpyDefault));
    for (size_t i = 0; i < count; i++)
        host[i] = -1.0;
    PUB_CHECK_CUDA(cudaMemcpy(gpu_recv, host, bytes, cudaMemcpyDefault));
    tcaHandle *send_of = pub_gather_handles(gpu_send, bytes, 2);
    tcaHandle *recv_of = pub_gather_handles(gpu_recv, bytes, 2);

    tcaDesc *chain = tcaDescNew();
    if (!chain) {
        fprintf(stderr, "%s: tcaDescNew failed\n", program.name);
        exit(PUB_EXIT_FAILURE);
    }
    PUB_CHECK_TCA(tcaDescSetMemcpy(chain, &recv_of[peer], 0, &send_of[rank], 0, bytes, FLAGS,
                                   WAIT_SLOT, WAIT_TAG));
    PUB_CHECK_TCA(tcaDescSet(chain, CHANNEL));
    MPI_Barrier(MPI_COMM_WORLD);

    double t0 = 0.0;
    for (int it = 0; it < o->warmup + o->iters; it++) {
        if (it == o->warmup) {
            MPI_Barrier(MPI_COMM_WORLD);
            t0 = MPI_Wtime();
        }
        if (rank == 0) {
            PUB_CHECK_TCA(tcaStartDMADesc(CHANNEL));
            PUB_CHECK_TCA(tcaWaitDMARecvDesc(&send_of[rank], WAIT_SLOT, WAIT_TAG));
            PUB_CHECK_TCA(tcaWaitDMARecvDesc(&recv_of[peer], WAIT_SLOT, WAIT_TAG));
        } else {
            PUB_CHECK_TCA(tcaWaitDMARecvDesc(&recv_of[peer], WAIT_SLOT, WAIT_TAG));
            PUB_CHECK_TCA(tcaStartDMADesc(CHANNEL));
            PUB_CHECK_TCA(tcaWaitDMARecvDesc(&send_of[rank], WAIT_SLOT, WAIT_TAG));
        }
    }
    MPI_Barrier(MPI_COMM_WORLD);
    *one_way_us = (MPI_Wtime() - t0) / o->iters / 2.0 * 1e6;

    PUB_CHECK_CUDA(cudaMemcpy(host, gpu_recv, bytes, cudaMemcpyDefault));
    long bad = 0;
    for (size_t i = 0; i < count; i++)
        bad += host[i] != element(peer, i);
    *wrong = bad;

    MPI_Barrier(MPI_COMM_WORLD);
    PUB_CHECK_TCA(tcaDescFree(chain));
    free(send_of);
    free(recv_of);
    PUB_CHECK_CUDA(cudaFreeHost(host));
    PUB_CHECK_TCA(tcaFree(gpu_send, tcaMemoryGPU));
    PUB_CHECK_TCA(tcaFree(gpu_recv, tcaMemoryGPU));
}

int main(int argc, char **argv)
{
    int rank, nprocs;
    pub_mpi_init(&argc, &argv, &rank, &nprocs);
    pub_options o = {.first = 8, .last = 4u << 20, .iters = 500, .warmup = 10};
    int status = pub_parse_options(&program, argc, argv, &o, rank);
    if (status == 0) {
        if (nprocs != 2)
            status = pub_usage_error(&program, rank, "runs on 2 ranks (p2run -n 2)");
        else
            status = pub_check_doubles(&program, rank, &o);
    }
    const int stop = pub_start(status);
    if (stop >= 0)
        return stop;

    FILE *csv = NULL;
    if (rank == 0) {
        csv = pub_csv_open(&program, o.csv, "bytes,iters,latency_us,bandwidth_MBps,wrong");
        printf("# %s: GPU-to-GPU DMA ping-pong as tca-pingpong.c (mnakao/PEACH2-Benchmarks),"
               " %d timed round trips after %d warm-ups\n", program.name, o.iters, o.warmup);
    }
    double us;
    long mine, total_wrong = 0;
    measure((size_t)o.first, &o, rank, &us, &mine); /* the original's untimed first run */
    total_wrong += pub_sum_wrong(mine);
    if (rank == 0)
        printf("%12s %8s %12s %16s %8s\n", "bytes", "iters", "latency(us)", "bandwidth(MB/s)",
               "wrong");
    for (uint64_t bytes = o.first; bytes <= o.last; bytes *= 2) {
        measure((size_t)bytes, &o, rank, &us, &mine);
        long wrong = pub_sum_wrong(mine);
        total_wrong += wrong;
        if (rank == 0) {
            printf("%12llu %8d %12.3f %16.2f %8ld\n", (unsigned long long)bytes, o.iters, us,
                   (double)bytes / us, wrong);
            if (csv) {
                fprintf(csv, "%llu,%d,%.4f,%.4f,%ld\n", (unsigned long long)bytes, o.iters, us,
                        (double)bytes / us, wrong);
                fflush(csv);
            }
        }
    }
    return pub_finish(&program, rank, csv, o.csv, total_wrong,
                      "2 ranks", status);
}
