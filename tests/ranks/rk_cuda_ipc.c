/*
 * rk_cuda_ipc.c - the real CUDA path's plumbing, end to end without a GPU:
 * "device memory" from a stand-in driver (fake_cuda_driver.c, loaded as
 * libcuda.so.1 in the ranks and, by dlopen, in the simulator) registered
 * with tcaCreateHandle(..., tcaMemoryGPU) exactly as real cudaMalloc memory
 * is (rt_cuda_ipc.c: driver queries, IPC handle, window space, the
 * P2_CHAN_GPU_REGISTER request; cuda_ipc.cc: the simulator's mapping), then
 * moved by PEACH2 DMA between two ranks, checked byte for byte through the
 * driver, at the same modelled time as the emulated runtime's GPU DMA.
 *
 *  1. rank 0 -> rank 1, 64 KiB, GPU memory to GPU memory, with a notification;
 *  2. the handle destroyed and made again on the same memory: the simulator
 *     must have ended the first registration (the window space is reused);
 *  3. two handles inside one allocation (one shared mapping in the
 *     simulator), DMA into the second, from host memory;
 *  4. refusals: a range past the allocation, freed memory, tcaFree of it.
 */
#include "rk_common.h"

typedef int CUresult;
typedef unsigned long long CUdeviceptr;
CUresult cuMemAlloc_v2(CUdeviceptr *dptr, size_t size);
CUresult cuMemFree_v2(CUdeviceptr dptr);
CUresult cuMemcpyHtoD_v2(CUdeviceptr dst, const void *src, size_t n);
CUresult cuMemcpyDtoH_v2(void *dst, CUdeviceptr src, size_t n);

#define BYTES (64 * 1024)
#define SLOT 4
#define TAG 0x77

static int rank;

#define CUDRV(call)                                                                    \
    do {                                                                               \
        if ((call) != 0)                                                               \
            rk_fail("%s failed", #call);                                               \
    } while (0)

static double dma(const tcaHandle *dst, size_t doff, const tcaHandle *src, size_t soff,
                  size_t len)
{
    tcaDesc *desc = tcaDescNew();
    if (!desc)
        rk_fail("tcaDescNew");
    RK_TCA(tcaDescSetMemcpy(desc, dst, doff, src, soff, len, tcaDMANotify, SLOT, TAG));
    RK_TCA(tcaDescSet(desc, 0));
    double t0 = p2_wtime();
    RK_TCA(tcaStartDMADesc(0));
    RK_TCA(tcaWaitDMAC(0));
    double t = p2_wtime() - t0;
    RK_TCA(tcaDescFree(desc));
    return t;
}

int main(void)
{
    rank = p2_rank();
    RK_TCA(tcaInit());
    uint8_t *h = malloc(BYTES);
    CUdeviceptr d;
    CUDRV(cuMemAlloc_v2(&d, 2 * BYTES));
    rk_fill(h, BYTES, 0x1dc + (unsigned)rank, 0);
    CUDRV(cuMemcpyHtoD_v2(d, h, BYTES));
    memset(h, 0, BYTES);
    CUDRV(cuMemcpyHtoD_v2(d + BYTES, h, BYTES));

    /* 1. GPU memory to GPU memory, rank 0 -> rank 1's second half. */
    tcaHandle mine, all[2];
    RK_TCA(tcaCreateHandle(&mine, (void *)(uintptr_t)d, 2 * BYTES, tcaMemoryGPU));
    RK_TCA(p2_exchange(&mine, all, sizeof mine));
    if (rank == 0) {
        double t = dma(&all[1], BYTES, &mine, 0, BYTES);
        printf("rank 0: GPU-to-GPU DMA of %d bytes between stand-in driver allocations in %.3f us\n",
               BYTES, t * 1e6);
    } else {
        RK_TCA(tcaWaitDMARecvDesc(&all[0], SLOT, TAG));
        CUDRV(cuMemcpyDtoH_v2(h, d + BYTES, BYTES));
        rk_check(h, BYTES, 0x1dc, 0, 0, "the DMA into registered driver memory");
        printf("rank 1: driver memory received by GPU-to-GPU DMA, all bytes right\n");
    }
    RK_TCA(p2_exchange(&mine, all, sizeof mine)); /* both done with the first handles */

    /* 2. Destroyed and made again: the same window space, so the simulator
     *    ended the first registration (else it refuses the overlap). */
    uint64_t first = mine.pcie_addr;
    RK_TCA(tcaDestroyHandle(&mine));
    RK_TCA(tcaCreateHandle(&mine, (void *)(uintptr_t)d, 2 * BYTES, tcaMemoryGPU));
    if (mine.pcie_addr != first)
        rk_fail("the second handle is at 0x%llx, the first was at 0x%llx",
                (unsigned long long)mine.pcie_addr, (unsigned long long)first);
    RK_TCA(tcaDestroyHandle(&mine));

    /* 3. Two handles in one allocation; DMA from host memory into the second. */
    tcaHandle lo, hi, his[2];
    RK_TCA(tcaCreateHandle(&lo, (void *)(uintptr_t)d, BYTES, tcaMemoryGPU));
    RK_TCA(tcaCreateHandle(&hi, (void *)(uintptr_t)(d + BYTES), BYTES, tcaMemoryGPU));
    uint8_t *host;
    RK_TCA(tcaMalloc((void **)&host, 4096, tcaMemoryCPU));
    rk_fill(host, 4096, 0x77, 0);
    tcaHandle hh;
    RK_TCA(tcaCreateHandle(&hh, host, 4096, tcaMemoryCPU));
    RK_TCA(p2_exchange(&hi, his, sizeof hi));
    if (rank == 0) {
        dma(&his[1], 100, &hh, 0, 4096 - 100);
    } else {
        RK_TCA(tcaWaitDMARecvDesc(&his[0], SLOT, TAG));
        CUDRV(cuMemcpyDtoH_v2(h, d + BYTES + 100, 4096 - 100));
        rk_check(h, 4096 - 100, 0x77, 0, 0, "host memory into the second handle");
        CUDRV(cuMemcpyDtoH_v2(h, d, BYTES));
        rk_check(h, BYTES, 0x1dc + 1, 0, 0, "the first handle's memory, untouched");
        printf("rank 1: two handles in one allocation, all bytes right\n");
    }
    RK_TCA(p2_exchange(&hi, his, sizeof hi));
    RK_TCA(tcaDestroyHandle(&lo));
    RK_TCA(tcaDestroyHandle(&hi));

    /* 4. Refusals. */
    tcaHandle x;
    RK_EXPECT(tcaCreateHandle(&x, (void *)(uintptr_t)(d + BYTES), BYTES + 1, tcaMemoryGPU),
              TCA_ERROR_NOT_REGISTERED);
    RK_EXPECT(tcaFree((void *)(uintptr_t)d, tcaMemoryGPU), TCA_ERROR_NOT_REGISTERED);
    /* A handle left registered is ended by tcaFinalize. */
    RK_TCA(tcaCreateHandle(&x, (void *)(uintptr_t)d, 64, tcaMemoryGPU));
    RK_TCA(tcaFinalize());
    CUDRV(cuMemFree_v2(d));
    RK_TCA(tcaInit());
    RK_EXPECT(tcaCreateHandle(&x, (void *)(uintptr_t)d, 64, tcaMemoryGPU),
              TCA_ERROR_NOT_REGISTERED); /* freed */
    RK_TCA(tcaFinalize());
    free(h);
    printf("rank %d: real CUDA path plumbing (stand-in driver) all right\n", rank);
    return 0;
}
