/*
 * cl_chain_order: read-after-write inside one DMA chain, as programs that
 * stage data through a buffer of their own write it. Rank 0 builds one chain
 * that copies src -> mid within its node and then sends mid -> rank 1's
 * buffer, and starts it once per round with new contents in src. Without
 * tcaDMAPipeline the second transfer must read what the first wrote, so rank
 * 1 must receive the round's contents at every size. With tcaDMAPipeline the
 * second transfer may start before the first one's writes have landed (the
 * program allows the overlap): what it delivers is reported, not checked, and
 * the chain must run faster than without at every size.
 *
 * Usage: cl_chain_order [cpu|gpu]: memory kind of the buffers (default cpu).
 */
#include <string.h>

#include "cl_common.h"

#define ROUNDS 8
#define SLOT 5
#define TAG 0x100

static const size_t sizes[] = {8, 16, 64, 256, 4096, 32768, 262144};
#define NSIZES (sizeof sizes / sizeof sizes[0])
#define MAXB 262144

int main(int argc, char **argv)
{
    int rank, size;
    MPI_Init(&argc, &argv);
    TCA_SAFE_CALL(tcaInit());
    MPI_Comm_rank(MPI_COMM_WORLD, &rank);
    MPI_Comm_size(MPI_COMM_WORLD, &size);
    const tcaMemoryKind kind = argc > 1 && !strcmp(argv[1], "gpu") ? tcaMemoryGPU : tcaMemoryCPU;
    if (size != 2)
        MPI_Abort(MPI_COMM_WORLD, 2);
    unsigned char *src, *mid, *dst, *host;
    TCA_SAFE_CALL(tcaMalloc((void **)&src, MAXB, kind));
    TCA_SAFE_CALL(tcaMalloc((void **)&mid, MAXB, kind));
    TCA_SAFE_CALL(tcaMalloc((void **)&dst, MAXB, kind));
    CUDA_SAFE_CALL(cudaMallocHost((void **)&host, MAXB));
    tcaHandle hsrc, hmid, hdst, peer_dst;
    TCA_SAFE_CALL(tcaCreateHandle(&hsrc, src, MAXB, kind));
    TCA_SAFE_CALL(tcaCreateHandle(&hmid, mid, MAXB, kind));
    TCA_SAFE_CALL(tcaCreateHandle(&hdst, dst, MAXB, kind));
    MPI_Sendrecv(&hdst, sizeof hdst, MPI_BYTE, 1 - rank, 0, &peer_dst, sizeof peer_dst, MPI_BYTE,
                 1 - rank, 0, MPI_COMM_WORLD, MPI_STATUS_IGNORE);
    long stale = 0, not_faster = 0;
    double ordered_us[NSIZES];
    for (int pipeline = 0; pipeline <= 1; pipeline++) {
        const int flags = tcaDMAUseInternal | (pipeline ? tcaDMAPipeline : 0);
        for (size_t s = 0; s < NSIZES; s++) {
            const size_t n = sizes[s];
            tcaDesc *chain = tcaDescNew();
            TCA_SAFE_CALL(tcaDescSetMemcpy(chain, &hmid, 0, &hsrc, 0, n, flags, SLOT, TAG));
            TCA_SAFE_CALL(tcaDescSetMemcpy(chain, &peer_dst, 0, &hmid, 0, n,
                                           flags | tcaDMANotify, SLOT, TAG));
            TCA_SAFE_CALL(tcaDescSet(chain, 0));
            long wrong_rounds = 0;
            double t_sum = 0;
            for (int round = 0; round < ROUNDS; round++) {
                const unsigned char mark = (unsigned char)(16 * pipeline + 2 * round + 1);
                if (rank == 0) {
                    memset(host, mark, n);
                    CUDA_SAFE_CALL(cudaMemcpy(src, host, n, cudaMemcpyDefault));
                }
                MPI_Barrier(MPI_COMM_WORLD);
                double t0 = MPI_Wtime();
                if (rank == 0) {
                    TCA_SAFE_CALL(tcaStartDMADesc(0));
                    TCA_SAFE_CALL(tcaWaitDMAC(0));
                    t_sum += MPI_Wtime() - t0;
                } else {
                    TCA_SAFE_CALL(tcaWaitDMARecvDesc(&peer_dst, SLOT, TAG));
                    CUDA_SAFE_CALL(cudaMemcpy(host, dst, n, cudaMemcpyDefault));
                    size_t bad = 0;
                    for (size_t b = 0; b < n; b++)
                        bad += host[b] != mark;
                    wrong_rounds += bad != 0;
                }
                MPI_Barrier(MPI_COMM_WORLD);
            }
            MPI_Bcast(&t_sum, 1, MPI_DOUBLE, 0, MPI_COMM_WORLD);
            MPI_Bcast(&wrong_rounds, 1, MPI_LONG, 1, MPI_COMM_WORLD);
            const double us = t_sum / ROUNDS * 1e6;
            if (!pipeline) {
                stale += wrong_rounds;
                ordered_us[s] = us;
            } else {
                not_faster += us >= ordered_us[s];
            }
            if (rank == 0)
                printf("%s %-8s %8zu B: chain %8.3f us, %ld of %d rounds delivered mid's old "
                       "contents\n", kind == tcaMemoryGPU ? "gpu" : "cpu",
                       pipeline ? "pipeline" : "ordered", n, us, wrong_rounds,
                       ROUNDS);
            TCA_SAFE_CALL(tcaDescFree(chain));
        }
    }
    if (rank == 0)
        printf("cl_chain_order: %s; %s\n",
               stale ? "ORDERED CHAIN DELIVERED OLD DATA" : "ordered chains delivered new data",
               not_faster ? "PIPELINED CHAIN NOT FASTER" : "pipelined chains faster at every size");
    MPI_Finalize();
    return stale || not_faster ? 1 : 0;
}
