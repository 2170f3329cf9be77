/*
 * emu_mpi_cuda.c - a CUDA + MPI + TCA program written the way public TCA
 * clients are, built with mpicc against the toolkit's cuda_runtime.h and the
 * shared libcudart and libp2tca, with tca-api.h and no simulator header: MPI_Init, cudaSetDevice, cudaMalloc,
 * tcaCreateHandle(tcaMemoryGPU) on the cudaMalloc pointer, handles exchanged
 * with MPI_Allgather, MPI_Barrier, a GPU-to-GPU TCA DMA to the next rank in a
 * ring timed with MPI_Wtime, cudaMemcpy back and a byte-for-byte check.
 *
 * Under p2run it runs unchanged on the emulated runtime (no GPU) or on the
 * real one (a GPU; the simulator reaches the cudaMalloc memory through CUDA
 * IPC). Where the real runtime finds no GPU it says "SKIP" and exits 0.
 */
#include <cuda_runtime.h>
#include <mpi.h>
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "tca-api.h"

#define BYTES (256 * 1024)
#define SLOT 2
#define TAG 0x2a

#define TCA(call)                                                                      \
    do {                                                                               \
        tcaresult r_ = (call);                                                         \
        if (r_ != TCA_SUCCESS) {                                                       \
            fprintf(stderr, "rank %d: %s: %s\n", rank, #call, tcaGetErrorString(r_));  \
            MPI_Abort(MPI_COMM_WORLD, 1);                                              \
        }                                                                              \
    } while (0)
#define CUDA(call)                                                                     \
    do {                                                                               \
        cudaError_t e_ = (call);                                                       \
        if (e_ != cudaSuccess) {                                                       \
            fprintf(stderr, "rank %d: %s: %s (%s)\n", rank, #call, cudaGetErrorString(e_), \
                    cudaGetErrorName(e_));                                             \
            MPI_Abort(MPI_COMM_WORLD, 1);                                              \
        }                                                                              \
    } while (0)

static uint8_t pattern(int from, size_t i)
{
    return (uint8_t)(i * 7 + (i >> 9) + (size_t)from * 61 + 1);
}

int main(int argc, char **argv)
{
    int rank, size, ndev = 0;
    MPI_Init(&argc, &argv);
    MPI_Comm_rank(MPI_COMM_WORLD, &rank);
    MPI_Comm_size(MPI_COMM_WORLD, &size);
    cudaError_t e = cudaGetDeviceCount(&ndev);
    int have = e == cudaSuccess && ndev > 0, all_have = 0;
    MPI_Allreduce(&have, &all_have, 1, MPI_INT, MPI_MIN, MPI_COMM_WORLD);
    if (!all_have) {
        if (!have)
            printf("rank %d: SKIP: no CUDA device (%s)\n", rank, cudaGetErrorName(e));
        MPI_Finalize();
        return 0;
    }
    CUDA(cudaSetDevice(rank % ndev));
    struct cudaDeviceProp prop;
    CUDA(cudaGetDeviceProperties(&prop, rank % ndev));

    /* First half: what this rank sends; second half: what it receives. */
    uint8_t *dbuf, *hbuf;
    CUDA(cudaMalloc((void **)&dbuf, 2 * BYTES));
    CUDA(cudaMallocHost((void **)&hbuf, BYTES));
    for (size_t i = 0; i < BYTES; i++)
        hbuf[i] = pattern(rank, i);
    CUDA(cudaMemcpy(dbuf, hbuf, BYTES, cudaMemcpyHostToDevice));
    CUDA(cudaMemset(dbuf + BYTES, 0, BYTES));
    CUDA(cudaDeviceSynchronize()); /* the memset is asynchronous; done before peers write */

    TCA(tcaInit());
    tcaHandle mine, *all = malloc((size_t)size * sizeof *all);
    TCA(tcaCreateHandle(&mine, dbuf, 2 * BYTES, tcaMemoryGPU));
    MPI_Allgather(&mine, sizeof mine, MPI_BYTE, all, sizeof mine, MPI_BYTE, MPI_COMM_WORLD);
    const int next = (rank + 1) % size, prev = (rank + size - 1) % size;

    tcaDesc *d = tcaDescNew();
    TCA(tcaDescSetMemcpy(d, &all[next], BYTES, &mine, 0, BYTES, tcaDMANotify, SLOT, TAG));
    TCA(tcaDescSet(d, 0));
    MPI_Barrier(MPI_COMM_WORLD);
    double t0 = MPI_Wtime();
    TCA(tcaStartDMADesc(0));
    TCA(tcaWaitDMAC(0));
    double t_sent = MPI_Wtime();
    TCA(tcaWaitDMARecvDesc(&all[prev], SLOT, TAG)); /* prev's DMA raised it */
    double t_recv = MPI_Wtime();
    MPI_Barrier(MPI_COMM_WORLD);

    /* Back to the host on a stream, timed by events. */
    cudaStream_t s;
    cudaEvent_t e0, e1;
    CUDA(cudaStreamCreate(&s));
    CUDA(cudaEventCreate(&e0));
    CUDA(cudaEventCreate(&e1));
    memset(hbuf, 0, BYTES);
    CUDA(cudaEventRecord(e0, s));
    CUDA(cudaMemcpyAsync(hbuf, dbuf + BYTES, BYTES, cudaMemcpyDefault, s));
    CUDA(cudaEventRecord(e1, s));
    CUDA(cudaStreamSynchronize(s));
    float copy_ms = 0;
    CUDA(cudaEventElapsedTime(&copy_ms, e0, e1));
    long wrong = 0;
    for (size_t i = 0; i < BYTES; i++)
        wrong += hbuf[i] != pattern(prev, i);
    long wrong_all = 0;
    MPI_Reduce(&wrong, &wrong_all, 1, MPI_LONG, MPI_SUM, 0, MPI_COMM_WORLD);

    printf("rank %d: %s: %d bytes GPU-to-GPU from rank %d: sent in %.3f us, received at %.3f us "
           "(MPI_Wtime), copied back in %.3f us (events), %ld wrong bytes\n",
           rank, prop.name, BYTES, prev, (t_sent - t0) * 1e6, (t_recv - t0) * 1e6,
           copy_ms * 1e3, wrong);
    if (rank == 0)
        printf("all ranks: %ld wrong bytes\n", wrong_all);

    CUDA(cudaEventDestroy(e0));
    CUDA(cudaEventDestroy(e1));
    CUDA(cudaStreamDestroy(s));
    TCA(tcaDescFree(d));
    TCA(tcaDestroyHandle(&mine));
    TCA(tcaFinalize());
    CUDA(cudaFreeHost(hbuf));
    CUDA(cudaFree(dbuf));
    free(all);
    MPI_Finalize();
    return wrong ? 1 : 0;
}
