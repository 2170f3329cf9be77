/*
 * cl_legacy_stencil: the older TCA API (numbered descriptor tables) driven as
 * the public HA-PACS/TCA block-stride and stencil programs drive it, on GPU
 * memory from tcaMalloc filled and read back with cudaMemcpy.
 *
 *  halo (2 ranks): each rank's cube has one face sent to the other rank's
 *    last column with one block-stride transfer (tcaSetDMADesc_Memcpy2D into
 *    a 1024-entry table, tcaSetDMAChain). Rank 0 starts, waits for its own
 *    completion (its own handle) and for rank 1's data (rank 1's handle);
 *    rank 1 waits for rank 0's data, starts, waits for its own completion:
 *    one (slot, tag) for all four notifications.
 *  stencil (5 ranks): rank 0 fills two tables from one index counter (entry
 *    0 to rank 2, entry 1 to rank 4) and sets both on one channel; one start
 *    sends both faces; ranks 2 and 4 wait with rank 0's handle.
 *
 * Every size checks every element; then tcaReset unloads the channels.
 * Usage: cl_legacy_stencil halo|stencil [MAX_N [TIMES]] (N = 2, 4, .. MAX_N,
 * default 64; TIMES default 20).
 */
#include <string.h>

#include "cl_common.h"

#define WAIT_TAG 0x100
#define DMA_CH 0
#define LAST_FLAG (tcaDMAUseInternal | tcaDMAUseNotifyInternal | tcaDMANotify | \
                   tcaDMAPipeline | tcaDMANotifySelf)
#define WARMUP 2

static int my_rank;

static double value(int rank, size_t i) { return (double)((rank + 1) * 1000000.0 + (double)i); }

static long halo(int n, int times, double *us)
{
    const int other = (my_rank + 1) % 2;
    const size_t cube_byte = (size_t)n * n * n * sizeof(double);
    double *host_cube, *device_cube;
    tcaHandle *cube_handle;
    CUDA_SAFE_CALL(cudaMallocHost((void **)&host_cube, cube_byte));
    TCA_SAFE_CALL(tcaMalloc((void **)&device_cube, cube_byte, tcaMemoryGPU));
    tcaCreateHandleList(&cube_handle, 2, device_cube, cube_byte);
    for (size_t i = 0; i < (size_t)n * n * n; i++)
        host_cube[i] = value(my_rank, i);
    CUDA_SAFE_CALL(cudaMemcpy(device_cube, host_cube, cube_byte, cudaMemcpyDefault));

    int desc_tag = 0, dma_slot = 0;
    TCA_SAFE_CALL(tcaCreateDMADesc(&desc_tag, 1024));
    const size_t pitch = (size_t)n * n * sizeof(double), width = (size_t)n * sizeof(double);
    TCA_SAFE_CALL(tcaSetDMADesc_Memcpy2D(desc_tag, dma_slot, &dma_slot, &cube_handle[other],
                                         (size_t)(n - 1) * n * sizeof(double), pitch,
                                         &cube_handle[my_rank], 0, pitch, width, n, LAST_FLAG,
                                         0, WAIT_TAG));
    TCA_SAFE_CALL(tcaSetDMAChain(DMA_CH, desc_tag));
    MPI_Barrier(MPI_COMM_WORLD);
    double start = 0;
    for (int t = 0; t < WARMUP + times; t++) {
        if (t == WARMUP) {
            MPI_Barrier(MPI_COMM_WORLD);
            start = MPI_Wtime();
        }
        if (my_rank == 0) {
            TCA_SAFE_CALL(tcaStartDMADesc(DMA_CH));
            TCA_SAFE_CALL(tcaWaitDMARecvDesc(&cube_handle[my_rank], 0, WAIT_TAG));
            TCA_SAFE_CALL(tcaWaitDMARecvDesc(&cube_handle[other], 0, WAIT_TAG));
        } else {
            TCA_SAFE_CALL(tcaWaitDMARecvDesc(&cube_handle[other], 0, WAIT_TAG));
            TCA_SAFE_CALL(tcaStartDMADesc(DMA_CH));
            TCA_SAFE_CALL(tcaWaitDMARecvDesc(&cube_handle[my_rank], 0, WAIT_TAG));
        }
    }
    MPI_Barrier(MPI_COMM_WORLD);
    *us = (MPI_Wtime() - start) / times / 2 * 1e6;
    TCA_SAFE_CALL(tcaWaitDMAC(DMA_CH));
    MPI_Barrier(MPI_COMM_WORLD);
    CUDA_SAFE_CALL(cudaMemcpy(host_cube, device_cube, cube_byte, cudaMemcpyDefault));
    long wrong = 0;
    for (size_t z = 0; z < (size_t)n; z++)
        for (size_t y = 0; y < (size_t)n; y++)
            for (size_t x = 0; x < (size_t)n; x++) {
                size_t i = (z * n + y) * n + x;
                /* Face y = n-1 holds the other rank's face y = 0. */
                double want = y == (size_t)n - 1 ? value(other, z * n * n + x) : value(my_rank, i);
                wrong += host_cube[i] != want;
            }
    TCA_SAFE_CALL(tcaDestroyDMADesc(desc_tag));
    free(cube_handle);
    CUDA_SAFE_CALL(cudaFreeHost(host_cube));
    TCA_SAFE_CALL(tcaFree(device_cube, tcaMemoryGPU));
    return wrong;
}

static long stencil(int n, int times, double *us)
{
    const size_t cube_byte = (size_t)n * n * n * sizeof(double);
    double *host_cube, *device_cube;
    tcaHandle *cube_handle;
    int desc_tag[2] = {0, 0}, dma_slot = 0;
    CUDA_SAFE_CALL(cudaMallocHost((void **)&host_cube, cube_byte));
    TCA_SAFE_CALL(tcaMalloc((void **)&device_cube, cube_byte, tcaMemoryGPU));
    tcaCreateHandleList(&cube_handle, 5, device_cube, cube_byte);
    TCA_SAFE_CALL(tcaCreateDMADesc(&desc_tag[0], 1024));
    TCA_SAFE_CALL(tcaCreateDMADesc(&desc_tag[1], 1024));
    const size_t pitch = (size_t)n * n * sizeof(double), width = (size_t)n * sizeof(double);
    const size_t lo = (size_t)(n - 1) * n * sizeof(double);
    if (my_rank == 0) {
        /* Face y = n-1 to rank 2's face y = 0, face y = 0 to rank 4's y = n-1. */
        TCA_SAFE_CALL(tcaSetDMADesc_Memcpy2D(desc_tag[0], dma_slot, &dma_slot, &cube_handle[2],
                                             0, pitch, &cube_handle[my_rank], lo, pitch, width,
                                             n, LAST_FLAG, 0, WAIT_TAG));
        TCA_SAFE_CALL(tcaSetDMADesc_Memcpy2D(desc_tag[1], dma_slot, &dma_slot, &cube_handle[4],
                                             lo, pitch, &cube_handle[my_rank], 0, pitch, width,
                                             n, LAST_FLAG, 0, WAIT_TAG));
        TCA_SAFE_CALL(tcaSetDMAChain(DMA_CH, desc_tag[0]));
        TCA_SAFE_CALL(tcaSetDMAChain(DMA_CH, desc_tag[1]));
    }
    for (size_t i = 0; i < (size_t)n * n * n; i++)
        host_cube[i] = value(my_rank, i);
    CUDA_SAFE_CALL(cudaMemcpy(device_cube, host_cube, cube_byte, cudaMemcpyDefault));
    MPI_Barrier(MPI_COMM_WORLD);
    double start = 0;
    for (int t = 0; t < WARMUP + times; t++) {
        if (t == WARMUP) {
            MPI_Barrier(MPI_COMM_WORLD);
            start = MPI_Wtime();
        }
        if (my_rank == 0) {
            TCA_SAFE_CALL(tcaStartDMADesc(DMA_CH));
            /* Both transfers raise (0, WAIT_TAG) here: claim both. */
            TCA_SAFE_CALL(tcaWaitDMARecvDesc(&cube_handle[my_rank], 0, WAIT_TAG));
            TCA_SAFE_CALL(tcaWaitDMARecvDesc(&cube_handle[my_rank], 0, WAIT_TAG));
        } else if (my_rank == 2 || my_rank == 4) {
            TCA_SAFE_CALL(tcaWaitDMARecvDesc(&cube_handle[0], 0, WAIT_TAG));
        }
        /* The next start may overwrite the faces: everyone has them first. */
        MPI_Barrier(MPI_COMM_WORLD);
    }
    *us = (MPI_Wtime() - start) / times * 1e6;
    CUDA_SAFE_CALL(cudaMemcpy(host_cube, device_cube, cube_byte, cudaMemcpyDefault));
    long wrong = 0;
    for (size_t z = 0; z < (size_t)n; z++)
        for (size_t y = 0; y < (size_t)n; y++)
            for (size_t x = 0; x < (size_t)n; x++) {
                size_t i = (z * n + y) * n + x;
                double want = value(my_rank, i);
                if (my_rank == 2 && y == 0)
                    want = value(0, (z * n + n - 1) * n + x);
                if (my_rank == 4 && y == (size_t)n - 1)
                    want = value(0, z * n * n + x);
                wrong += host_cube[i] != want;
            }
    TCA_SAFE_CALL(tcaDestroyDMADesc(desc_tag[0]));
    TCA_SAFE_CALL(tcaDestroyDMADesc(desc_tag[1]));
    free(cube_handle);
    CUDA_SAFE_CALL(cudaFreeHost(host_cube));
    TCA_SAFE_CALL(tcaFree(device_cube, tcaMemoryGPU));
    return wrong;
}

int main(int argc, char **argv)
{
    int num_proc;
    setvbuf(stdout, NULL, _IOLBF, 0);
    MPI_Init(&argc, &argv);
    TCA_SAFE_CALL(tcaInit());
    MPI_Comm_rank(MPI_COMM_WORLD, &my_rank);
    MPI_Comm_size(MPI_COMM_WORLD, &num_proc);
    const int is_halo = argc > 1 && !strcmp(argv[1], "halo");
    const int max_n = argc > 2 ? atoi(argv[2]) : 64;
    const int times = argc > 3 ? atoi(argv[3]) : 20;
    if ((argc < 2 || (!is_halo && strcmp(argv[1], "stencil"))) ||
        num_proc != (is_halo ? 2 : 5) || max_n < 2 || times < 1) {
        if (my_rank == 0)
            fprintf(stderr, "usage: cl_legacy_stencil halo|stencil [MAX_N [TIMES]] "
                            "(halo: 2 ranks, stencil: 5)\n");
        MPI_Abort(MPI_COMM_WORLD, 2);
    }
    CUDA_SAFE_CALL(cudaSetDevice(0));
    long total = 0;
    for (int n = 2; n <= max_n; n *= 2) {
        double us = 0;
        long wrong = is_halo ? halo(n, times, &us) : stencil(n, times, &us), all;
        MPI_Allreduce(&wrong, &all, 1, MPI_LONG, MPI_SUM, MPI_COMM_WORLD);
        total += all;
        if (my_rank == 0)
            printf("%s N = %d: %s %.3f us, face %zu bytes, %ld wrong elements\n", argv[1], n,
                   is_halo ? "one way" : "per start", us, (size_t)n * n * sizeof(double), all);
    }
    /* tcaReset unloads the channel: a start needs a chain again. */
    TCA_SAFE_CALL(tcaReset());
    tcaresult r = tcaStartDMADesc(DMA_CH);
    if (r != TCA_ERROR_CHANNEL_NOT_SET) {
        fprintf(stderr, "rank %d: start after tcaReset: %s\n", my_rank, tcaGetErrorString(r));
        total++;
    }
    if (my_rank == 0)
        printf("cl_legacy_stencil %s: %s\n", argv[1], total ? "WRONG DATA" : "all data right");
    MPI_Finalize();
    return total ? 1 : 0;
}
