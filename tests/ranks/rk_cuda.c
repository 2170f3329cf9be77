/*
 * rk_cuda.c - a CUDA + TCA program written the way public clients write
 * them, built against the toolkit's cuda_runtime.h and linked against the
 * shared libcudart: under p2run (--gpu emulated, or auto without a GPU) the
 * emulated runtime replaces it; with --gpu real on a GPU machine the real one
 * runs it (the GPU DMA then reaches real GPU memory through CUDA IPC). Two
 * ranks:
 *
 *  1. device: one K20X-like device, cudaSetDevice(0);
 *  2. data: rank 0 cudaMallocs a buffer, fills it by cudaMemcpy from pinned
 *     host memory, registers the cudaMalloc pointer with tcaCreateHandle
 *     (tcaMemoryGPU), and DMAs it GPU to GPU into rank 1's cudaMalloc buffer
 *     with a notification; rank 1 copies it back with cudaMemcpyDefault and
 *     checks every byte;
 *  3. more calls (HostAlloc, Memcpy2D(Async), MemsetAsync, MemGetInfo,
 *     StreamWaitEvent), each checked by what it does;
 *  4. time (emulated runtime): events and the rank's clock around copies
 *     equal latency + bytes / rate of the parameters (model/core/params.def,
 *     cuda_*; arguments d2d=US d2d_reg=US when --params moved them), the host
 *     waiting exactly where a real runtime's does; the copy within one GPU,
 *     PEACH2 against cudaMemcpy;
 *  5. errors: each wrong call returns what the real runtime returns; a
 *     kernel launch fails cleanly.
 */
#include <cuda_runtime.h>
#include <math.h>

#include "rk_common.h"

#define BYTES (64 * 1024)
#define SLOT 3
#define TAG 0x100

static int rank;
/* The D2D latencies the run's parameters give (params.def cuda_d2d_latency_ns,
 * cuda_d2d_reg_latency_ns), in us; "d2d=US" and "d2d_reg=US" arguments say
 * what a --params file set. */
static double d2d_us = 6.0, d2d_reg_us = 13.0;

static void cu_check(cudaError_t got, cudaError_t want, const char *call, int line)
{
    if (got != want)
        rk_fail("line %d: %s returned %d (%s: %s), expected %d (%s)", line, call, (int)got,
                cudaGetErrorName(got), cudaGetErrorString(got), (int)want,
                cudaGetErrorName(want));
}
#define CU(call) cu_check((call), cudaSuccess, #call, __LINE__)
#define CU_EXPECT(call, want) cu_check((call), (want), #call, __LINE__)

/* Default parameters (params.def cuda_*_gbps): pinned and pageable
 * host-device rates, GB/s. */
static const double pinned_gbps = 5.08, pageable_gbps = 3.0;

/* Default parameters (params.def): latency in us, rate in GB/s. */
static double copy_s(double latency_us, double bytes, double gbps)
{
    return latency_us * 1e-6 + bytes / (gbps * 1e9);
}

static void expect_time(double got_s, double want_s, const char *what)
{
    if (fabs(got_s - want_s) > 1e-12)
        rk_fail("%s took %.6f us, expected %.6f us", what, got_s * 1e6, want_s * 1e6);
    printf("rank %d: time: %s %.4f us\n", rank, what, got_s * 1e6);
}

/* 1 when the runtime is the emulated one (the device's name says so), 0 on
 * a real GPU; -1 when the real runtime finds no GPU (the test is skipped). */
static int device_checks(void)
{
    int n = 0, dev = -1;
    cudaError_t e = cudaGetDeviceCount(&n);
    if (e != cudaSuccess || n < 1) {
        printf("rank %d: cuda: SKIP: no usable GPU for the real CUDA runtime "
               "(cudaGetDeviceCount: %s, %s)\n",
               rank, cudaGetErrorName(e), cudaGetErrorString(e));
        return -1;
    }
    CU(cudaSetDevice(0));
    CU(cudaGetDevice(&dev));
    struct cudaDeviceProp prop;
    CU(cudaGetDeviceProperties(&prop, 0));
    if (strstr(prop.name, "(emulated)") == NULL) {
        if (rank == 0)
            printf("rank 0: device: %s (real), cc %d.%d, %d SMs, %zu MiB, %d device(s)\n",
                   prop.name, prop.major, prop.minor, prop.multiProcessorCount,
                   prop.totalGlobalMem >> 20, n);
        return 0;
    }
    if (n != 1)
        rk_fail("cudaGetDeviceCount gave %d devices", n);
    if (strstr(prop.name, "K20X") == NULL || prop.major != 3 || prop.minor != 5 ||
        prop.multiProcessorCount != 14 || dev != 0)
        rk_fail("device %d is '%s' cc %d.%d with %d SMs", dev, prop.name, prop.major, prop.minor,
                prop.multiProcessorCount);
    if (rank == 0)
        printf("rank 0: device: %s, cc %d.%d, %d SMs, %zu MiB\n", prop.name, prop.major,
               prop.minor, prop.multiProcessorCount, prop.totalGlobalMem >> 20);
    return 1;
}

static void data_checks(void)
{
    uint8_t *d = NULL, *h = NULL;
    CU(cudaMalloc((void **)&d, BYTES));
    CU(cudaMallocHost((void **)&h, BYTES));
    uint8_t *d_small, *d_next;
    CU(cudaMalloc((void **)&d_small, 1));
    CU(cudaMalloc((void **)&d_next, 1));
    if ((uintptr_t)d % 256 || (uintptr_t)d_small % 256 || (uintptr_t)d_next % 256)
        rk_fail("cudaMalloc pointers %p %p %p are not 256-byte aligned", (void *)d,
                (void *)d_small, (void *)d_next);
    CU(cudaFree(d_small));
    CU(cudaFree(d_next));
    /* tcaMalloc'd GPU memory and cudaMalloc'd memory come from one pool. */
    void *t = NULL;
    RK_TCA(tcaMalloc(&t, BYTES, tcaMemoryGPU));
    if ((uint8_t *)t < d + BYTES && d < (uint8_t *)t + BYTES)
        rk_fail("tcaMalloc(GPU) %p overlaps cudaMalloc %p", t, (void *)d);
    struct cudaPointerAttributes a;
    CU(cudaPointerGetAttributes(&a, d));
    if (a.type != cudaMemoryTypeDevice || a.device != 0)
        rk_fail("cudaPointerGetAttributes(cudaMalloc pointer): type %d", (int)a.type);
    CU(cudaPointerGetAttributes(&a, h));
    if (a.type != cudaMemoryTypeHost)
        rk_fail("cudaPointerGetAttributes(cudaMallocHost pointer): type %d", (int)a.type);

    tcaHandle mine, all[2];
    if (rank == 0) {
        rk_fill(h, BYTES, 0xc0da, 0);
        CU(cudaMemcpy(d, h, BYTES, cudaMemcpyHostToDevice));
        memset(h, 0, BYTES);
    } else {
        CU(cudaMemset(d, 0xee, BYTES));
        CU(cudaDeviceSynchronize()); /* asynchronous on a real GPU: done before the DMA lands */
    }
    RK_TCA(tcaCreateHandle(&mine, d, BYTES, tcaMemoryGPU));
    RK_TCA(p2_exchange(&mine, all, sizeof mine));
    if (rank == 0) {
        tcaDesc *desc = tcaDescNew();
        if (!desc)
            rk_fail("tcaDescNew");
        RK_TCA(tcaDescSetMemcpy(desc, &all[1], 0, &mine, 0, BYTES, tcaDMANotify, SLOT, TAG));
        RK_TCA(tcaDescSet(desc, 0));
        double t0 = p2_wtime();
        RK_TCA(tcaStartDMADesc(0));
        RK_TCA(tcaWaitDMAC(0));
        double t1 = p2_wtime();
        RK_TCA(tcaDescFree(desc));
        /* Modelled time: the same on the emulated and the real runtime. */
        printf("rank 0: GPU-to-GPU DMA of %d bytes from cudaMalloc memory sent in %.3f us\n",
               BYTES, (t1 - t0) * 1e6);
    } else {
        RK_TCA(tcaWaitDMARecvDesc(&all[0], SLOT, TAG));
        CU(cudaMemcpy(h, d, BYTES, cudaMemcpyDefault));
        rk_check(h, BYTES, 0xc0da, 0, 0, "cudaMemcpy D2H after the DMA");
        printf("rank 1: cudaMalloc memory received by GPU-to-GPU DMA, all bytes right\n");
    }
    RK_TCA(tcaDestroyHandle(&mine));
    RK_TCA(tcaFree(t, tcaMemoryGPU));
    CU(cudaFreeHost(h));
    CU(cudaFree(d));
}

static void time_checks(void)
{
    const size_t big = 1 << 20, small = 4096;
    uint8_t *h, *d, *d2, *d3, *pageable = malloc(small);
    CU(cudaMallocHost((void **)&h, big));
    CU(cudaMalloc((void **)&d, big));
    CU(cudaMalloc((void **)&d2, small));
    CU(cudaMalloc((void **)&d3, small));

    /* Events around an async copy on a stream: exactly its modelled time. */
    cudaStream_t s;
    cudaEvent_t e0, e1;
    CU(cudaStreamCreate(&s));
    CU(cudaEventCreate(&e0));
    CU(cudaEventCreate(&e1));
    CU(cudaEventRecord(e0, s));
    CU(cudaMemcpyAsync(d, h, big, cudaMemcpyHostToDevice, s));
    CU(cudaEventRecord(e1, s));
    CU_EXPECT(cudaStreamQuery(s), cudaErrorNotReady);
    CU_EXPECT(cudaEventQuery(e1), cudaErrorNotReady);
    CU_EXPECT(cudaGetLastError(), cudaSuccess); /* not-ready is no error */
    CU(cudaEventSynchronize(e1));
    CU(cudaEventQuery(e1));
    float ms = 0;
    CU(cudaEventElapsedTime(&ms, e0, e1));
    double want = copy_s(8.0, (double)big, pinned_gbps);
    if (fabs(ms * 1e-3 - want) > want * 1e-6)
        rk_fail("cudaEventElapsedTime gave %.6f ms for a 1 MiB H2D copy, expected %.6f ms", ms,
                want * 1e3);
    printf("rank %d: time: events around 1 MiB cudaMemcpyAsync H2D: %.4f us\n", rank,
           ms * 1e3);
    CU(cudaStreamSynchronize(s));

    /* Synchronous copies move the rank's clock by their modelled time. */
    double t0 = p2_wtime();
    CU(cudaMemcpy(h, d, big, cudaMemcpyDeviceToHost));
    double t1 = p2_wtime();
    expect_time(t1 - t0, copy_s(8.0, (double)big, pinned_gbps), "cudaMemcpy D2H 1 MiB pinned");
    CU(cudaMemcpy(pageable, d, small, cudaMemcpyDeviceToHost));
    double t2 = p2_wtime();
    expect_time(t2 - t1, copy_s(8.0, (double)small, pageable_gbps), "cudaMemcpy D2H 4 KiB pageable");
    /* Device to device, unregistered: no host synchronisation (the real
     * runtime's rule); the copy's time shows at the next synchronisation. */
    CU(cudaMemcpy(d3, d2, small, cudaMemcpyDeviceToDevice));
    expect_time(p2_wtime() - t2, 0.0, "cudaMemcpy D2D 4 KiB unregistered, returning");
    CU(cudaDeviceSynchronize());
    double t3 = p2_wtime();
    expect_time(t3 - t2, copy_s(d2d_us, (double)small, 90.0), "cudaMemcpy D2D 4 KiB unregistered");
    tcaHandle reg;
    RK_TCA(tcaCreateHandle(&reg, d2, small, tcaMemoryGPU)); /* GPUDirect-registered now */
    double t4 = p2_wtime();
    CU(cudaMemcpy(d3, d2, small, cudaMemcpyDefault));
    double t5 = p2_wtime();
    expect_time(t5 - t4, copy_s(d2d_reg_us, (double)small, 90.0), "cudaMemcpy D2D 4 KiB registered");
    CU(cudaMemset(d, 0, big)); /* asynchronous to the host */
    expect_time(p2_wtime() - t5, 0.0, "cudaMemset 1 MiB, returning");
    CU(cudaDeviceSynchronize());
    double t6 = p2_wtime();
    expect_time(t6 - t5, copy_s(5.0, (double)big, 180.0), "cudaMemset 1 MiB");
    /* Asynchronous from pageable memory: returns when done, as a real runtime's
     * staged copy does; from pinned memory at once. */
    CU(cudaMemcpyAsync(d, pageable, small, cudaMemcpyHostToDevice, s));
    double t7 = p2_wtime();
    expect_time(t7 - t6, copy_s(8.0, (double)small, pageable_gbps), "cudaMemcpyAsync H2D 4 KiB pageable");
    CU(cudaMemcpyAsync(d, h, small, cudaMemcpyHostToDevice, s));
    expect_time(p2_wtime() - t7, 0.0, "cudaMemcpyAsync H2D 4 KiB pinned (queued)");
    CU(cudaStreamSynchronize(s));
    RK_TCA(tcaDestroyHandle(&reg));

    CU(cudaEventDestroy(e0));
    CU(cudaEventDestroy(e1));
    CU(cudaStreamDestroy(s));
    CU(cudaFree(d3));
    CU(cudaFree(d2));
    CU(cudaFree(d));
    CU(cudaFreeHost(h));
    free(pageable);
}

/* The other listed calls, each checked by what it does: cudaHostAlloc and
 * cudaHostGetDevicePointer, cudaMemcpy2D (a strided block, byte for byte),
 * cudaMemsetAsync, cudaMemGetInfo, cudaSetDeviceFlags, cudaDeviceSynchronize,
 * and two streams ordered by cudaStreamWaitEvent: with the emulated runtime
 * the waiting stream's copy starts exactly when the event's copy ends. */
static void more_calls(int emulated)
{
    enum { W = 48, H = 20, SP = 64, DP = 80 };
    uint8_t *h, *back, *d, *dev_view;
    CU(cudaSetDeviceFlags(cudaDeviceScheduleAuto));
    CU(cudaHostAlloc((void **)&h, SP * H, cudaHostAllocMapped | cudaHostAllocPortable));
    CU(cudaHostGetDevicePointer((void **)&dev_view, h, 0));
    if (!dev_view)
        rk_fail("cudaHostGetDevicePointer gave NULL");
    CU(cudaMallocHost((void **)&back, DP * H));
    CU(cudaMalloc((void **)&d, DP * H));
    size_t free0, total;
    CU(cudaMemGetInfo(&free0, &total));
    if (free0 > total || total == 0)
        rk_fail("cudaMemGetInfo: %zu free of %zu", free0, total);
    rk_fill(h, SP * H, 0x2d, (unsigned)rank);
    CU(cudaMemsetAsync(d, 0x5a, DP * H, 0));
    CU(cudaMemcpy2D(d, DP, h, SP, W, H, cudaMemcpyHostToDevice));
    CU(cudaDeviceSynchronize());
    CU(cudaMemcpy(back, d, DP * H, cudaMemcpyDeviceToHost));
    for (int r = 0; r < H; r++)
        for (int c = 0; c < DP; c++) {
            uint8_t want = c < W ? h[r * SP + c] : 0x5a;
            if (back[r * DP + c] != want)
                rk_fail("cudaMemcpy2D: row %d byte %d is 0x%02x, want 0x%02x", r, c,
                        back[r * DP + c], want);
        }
    CU(cudaMemcpy2D(back, W, d, DP, W, H, cudaMemcpyDefault)); /* and back, packed */
    for (int r = 0; r < H; r++)
        if (memcmp(back + r * W, h + r * SP, W) != 0)
            rk_fail("cudaMemcpy2D device to host: row %d differs", r);

    if (emulated) {
        const size_t big = 1 << 20, small = 4096;
        uint8_t *hb, *db;
        CU(cudaMallocHost((void **)&hb, big));
        CU(cudaMalloc((void **)&db, big));
        cudaStream_t s1, s2;
        cudaEvent_t start, copied, done;
        CU(cudaStreamCreateWithFlags(&s1, cudaStreamNonBlocking));
        CU(cudaStreamCreateWithFlags(&s2, cudaStreamNonBlocking));
        CU(cudaEventCreate(&start));
        CU(cudaEventCreate(&copied));
        CU(cudaEventCreate(&done));
        CU(cudaEventRecord(start, s1));
        CU(cudaMemcpyAsync(db, hb, big, cudaMemcpyHostToDevice, s1));
        CU(cudaEventRecord(copied, s1));
        CU(cudaStreamWaitEvent(s2, copied, 0));
        CU(cudaMemcpy2DAsync(hb, small, db, small, small, 1, cudaMemcpyDeviceToHost, s2));
        CU(cudaEventRecord(done, s2));
        CU(cudaStreamSynchronize(s2));
        CU(cudaStreamQuery(s1)); /* s1 ended before s2's copy began */
        float ms = 0;
        CU(cudaEventElapsedTime(&ms, start, done));
        double want = copy_s(8.0, (double)big, pinned_gbps) + copy_s(8.0, (double)small, pinned_gbps);
        if (fabs(ms * 1e-3 - want) > want * 1e-6)
            rk_fail("cudaStreamWaitEvent: the two copies took %.4f us, expected %.4f us",
                    ms * 1e3, want * 1e6);
        printf("rank %d: time: 1 MiB H2D then, after cudaStreamWaitEvent, 4 KiB D2H: %.4f us\n",
               rank, ms * 1e3);
        CU(cudaEventDestroy(start));
        CU(cudaEventDestroy(copied));
        CU(cudaEventDestroy(done));
        CU(cudaStreamDestroy(s1));
        CU(cudaStreamDestroy(s2));
        CU(cudaFree(db));
        CU(cudaFreeHost(hb));
    }
    size_t free1;
    CU(cudaMemGetInfo(&free1, &total));
    CU(cudaFree(d));
    size_t free2;
    CU(cudaMemGetInfo(&free2, &total));
    if (emulated && free2 != free1 + DP * H + (64 - DP * H % 64) % 64)
        rk_fail("cudaMemGetInfo: %zu free after cudaFree of %d bytes, %zu before", free2, DP * H,
                free1);
    CU(cudaFreeHost(back));
    CU(cudaFreeHost(h));
    printf("rank %d: more calls: HostAlloc, Memcpy2D(Async), MemsetAsync, MemGetInfo, "
           "StreamWaitEvent all right\n", rank);
}

/* A copy within one GPU's memory: PEACH2 DMA from the node to itself against
 * cudaMemcpy device to device on registered memory (model/README.md,
 * "Published figures": PEACH2 is faster up to 8 KB; cudaMemcpy's minimum is
 * 13.0 us there). The model's
 * PEACH2 side is its GPU DMA (gpu_read_gbps and the rest), the CUDA side the
 * cuda_* parameters: the crossover follows from both and is printed. */
static void crossover_checks(void)
{
    const size_t max = 64 * 1024;
    uint8_t *d, *h;
    CU(cudaMalloc((void **)&d, 2 * max));
    CU(cudaMallocHost((void **)&h, max));
    rk_fill(h, max, 0x9e, 0);
    CU(cudaMemcpy(d, h, max, cudaMemcpyHostToDevice));
    tcaHandle g;
    RK_TCA(tcaCreateHandle(&g, d, 2 * max, tcaMemoryGPU));
    size_t faster_up_to = 0; /* PEACH2 faster at every size up to this */
    int slower_seen = 0;
    printf("rank 0: copy within one GPU (bytes, PEACH2 DMA us, cudaMemcpy D2D registered us)\n");
    for (size_t n = 8; n <= max; n *= 2) {
        tcaDesc *desc = tcaDescNew(); /* one transfer (SetMemcpy appends to a chain) */
        if (!desc)
            rk_fail("tcaDescNew");
        RK_TCA(tcaDescSetMemcpy(desc, &g, max, &g, 0, n, 0, 0, 0));
        RK_TCA(tcaDescSet(desc, 0));
        double t0 = p2_wtime();
        RK_TCA(tcaStartDMADesc(0));
        RK_TCA(tcaWaitDMAC(0));
        double t1 = p2_wtime();
        RK_TCA(tcaDescFree(desc));
        CU(cudaMemcpy(d + max, d, n, cudaMemcpyDeviceToDevice));
        double t2 = p2_wtime();
        expect_time(t2 - t1, copy_s(d2d_reg_us, (double)n, 90.0), "cudaMemcpy D2D registered");
        printf("rank 0: within-GPU %6zu %9.3f %9.3f\n", n, (t1 - t0) * 1e6, (t2 - t1) * 1e6);
        if (t1 - t0 < t2 - t1 && !slower_seen)
            faster_up_to = n;
        else
            slower_seen = 1;
    }
    CU(cudaMemcpy(h, d + max, max, cudaMemcpyDeviceToHost));
    rk_check(h, max, 0x9e, 0, 0, "the copy within one GPU");
    if (faster_up_to < 8192)
        rk_fail("PEACH2's copy within one GPU is faster only up to %zu bytes, not 8 KB",
                faster_up_to);
    printf("rank 0: copy within one GPU: PEACH2 faster up to %zu bytes (published: 8 KB)\n",
           faster_up_to);
    RK_TCA(tcaDestroyHandle(&g));
    CU(cudaFreeHost(h));
    CU(cudaFree(d));
}

static void not_a_kernel(void) {}

static void error_checks(int emulated)
{
    uint8_t *d, *h = malloc(256), *gone;
    CU(cudaMalloc((void **)&d, 256));
    CU(cudaMalloc((void **)&gone, 256));
    CU(cudaFree(gone));

    CU_EXPECT(cudaMalloc(NULL, 64), cudaErrorInvalidValue);
    CU_EXPECT(cudaGetLastError(), cudaErrorInvalidValue);
    CU_EXPECT(cudaGetLastError(), cudaSuccess); /* read and reset */
    CU_EXPECT(cudaSetDevice(1), cudaErrorInvalidDevice);
    CU_EXPECT(cudaPeekAtLastError(), cudaErrorInvalidDevice);
    CU_EXPECT(cudaPeekAtLastError(), cudaErrorInvalidDevice); /* peek keeps it */
    (void)cudaGetLastError();
    /* bad kind */
    CU_EXPECT(cudaMemcpy(d, h, 64, (enum cudaMemcpyKind)7), cudaErrorInvalidMemcpyDirection);
    /* bad pointers: host memory as a device, a range past the allocation, NULL */
    CU_EXPECT(cudaMemcpy(h, h, 64, cudaMemcpyHostToDevice), cudaErrorInvalidValue);
    if (emulated) /* a real runtime checks only the allocation it sub-allocates from */
        CU_EXPECT(cudaMemcpy(h, d, 512, cudaMemcpyDeviceToHost), cudaErrorInvalidValue);
    CU_EXPECT(cudaMemcpy(NULL, d, 64, cudaMemcpyDeviceToHost), cudaErrorInvalidValue);
    CU_EXPECT(cudaMemset(h, 0, 64), cudaErrorInvalidValue);
    /* freed memory */
    CU_EXPECT(cudaMemcpy(gone, h, 64, cudaMemcpyHostToDevice), cudaErrorInvalidValue);
    CU_EXPECT(cudaFree(gone), cudaErrorInvalidValue);
    CU_EXPECT(cudaFree(h), cudaErrorInvalidValue);
    CU_EXPECT(cudaFree(d + 64), cudaErrorInvalidValue);
    CU_EXPECT(cudaFreeHost(h), cudaErrorInvalidValue);
    tcaHandle th;
    RK_EXPECT(tcaCreateHandle(&th, gone, 64, tcaMemoryGPU), TCA_ERROR_NOT_REGISTERED);
    if (emulated)
        RK_EXPECT(tcaCreateHandle(&th, d, 512, tcaMemoryGPU), TCA_ERROR_NOT_REGISTERED);
    RK_EXPECT(tcaFree(d, tcaMemoryGPU), TCA_ERROR_NOT_REGISTERED); /* cudaFree's */
    /* pitches */
    CU_EXPECT(cudaMemcpy2D(d, 8, h, 16, 16, 4, cudaMemcpyHostToDevice), cudaErrorInvalidPitchValue);
    CU(cudaMemcpy2D(d, 32, h, 16, 16, 4, cudaMemcpyHostToDevice));
    /* host registration */
    CU(cudaHostRegister(h, 256, cudaHostRegisterDefault));
    CU_EXPECT(cudaHostRegister(h, 256, cudaHostRegisterDefault),
              cudaErrorHostMemoryAlreadyRegistered);
    CU(cudaHostUnregister(h));
    CU_EXPECT(cudaHostUnregister(h), cudaErrorHostMemoryNotRegistered);
    /* events */
    cudaEvent_t e0, e1, nt;
    float ms;
    CU(cudaEventCreate(&e0));
    CU(cudaEventCreate(&e1));
    CU(cudaEventCreateWithFlags(&nt, cudaEventDisableTiming));
    CU_EXPECT(cudaEventElapsedTime(&ms, e0, e1), cudaErrorInvalidResourceHandle); /* unrecorded */
    CU(cudaEventRecord(e0, 0));
    CU(cudaEventRecord(nt, 0));
    CU_EXPECT(cudaEventElapsedTime(&ms, e0, nt), cudaErrorInvalidResourceHandle);
    CU(cudaEventDestroy(nt));
    CU(cudaEventDestroy(e1));
    CU(cudaEventDestroy(e0));
    /* freed memory through the other copy calls, and host memory nobody pinned */
    CU_EXPECT(cudaMemsetAsync(gone, 0, 64, 0), cudaErrorInvalidValue);
    CU_EXPECT(cudaMemcpy2D(gone, 16, h, 16, 16, 2, cudaMemcpyHostToDevice), cudaErrorInvalidValue);
    CU_EXPECT(cudaMemcpyAsync(h, gone, 64, cudaMemcpyDeviceToHost, 0), cudaErrorInvalidValue);
    void *view;
    CU_EXPECT(cudaHostGetDevicePointer(&view, h, 0), cudaErrorInvalidValue);
    size_t total;
    CU_EXPECT(cudaMemGetInfo(NULL, &total), cudaErrorInvalidValue);
    if (emulated) {
        /* Handles used after destruction: undefined on a real runtime (it may
         * crash), an error here. */
        cudaStream_t dead;
        cudaEvent_t dead_ev;
        CU(cudaStreamCreate(&dead));
        CU(cudaEventCreate(&dead_ev));
        CU(cudaStreamDestroy(dead));
        CU(cudaEventDestroy(dead_ev));
        CU_EXPECT(cudaMemcpyAsync(d, h, 64, cudaMemcpyHostToDevice, dead),
                  cudaErrorInvalidResourceHandle);
        CU_EXPECT(cudaStreamSynchronize(dead), cudaErrorInvalidResourceHandle);
        CU_EXPECT(cudaEventRecord(dead_ev, 0), cudaErrorInvalidResourceHandle);
        CU_EXPECT(cudaStreamWaitEvent(0, dead_ev, 0), cudaErrorInvalidResourceHandle);
    }
    /* kernels: the emulated GPU runs none */
    void *args[1] = {NULL};
    CU_EXPECT(cudaLaunchKernel((const void *)not_a_kernel, (dim3){1, 1, 1}, (dim3){32, 1, 1},
                               args, 0, 0),
              cudaErrorInvalidDeviceFunction);
    CU_EXPECT(cudaGetLastError(), cudaErrorInvalidDeviceFunction);
    if (strcmp(cudaGetErrorName(cudaErrorInvalidMemcpyDirection),
               "cudaErrorInvalidMemcpyDirection") != 0)
        rk_fail("cudaGetErrorName");
    CU(cudaFree(d));
    free(h);
}

int main(int argc, char **argv)
{
    rank = p2_rank();
    for (int i = 1; i < argc; i++)
        if (sscanf(argv[i], "d2d=%lf", &d2d_us) != 1 &&
            sscanf(argv[i], "d2d_reg=%lf", &d2d_reg_us) != 1)
            rk_fail("unknown argument '%s' (d2d=US, d2d_reg=US)", argv[i]);
    /* On a GPU machine (p2run --gpu real, or auto there) the same program runs
     * on the real runtime: the GPU DMA then reaches real cudaMalloc memory
     * through CUDA IPC (lib/cuda/README.md), and every error path must answer as
     * the emulated runtime does. Copy timings are the emulated runtime's. */
    int emulated = device_checks();
    if (emulated < 0)
        return 0;
    RK_TCA(tcaInit());
    data_checks();
    more_calls(emulated);
    if (emulated)
        time_checks();
    if (emulated && rank == 0)
        crossover_checks();
    error_checks(emulated);
    RK_TCA(tcaFinalize());
    CU(cudaDeviceReset());
    printf("rank %d: cuda: every call as the CUDA runtime answers, all right (%s runtime)\n", rank,
           emulated ? "emulated" : "real");
    return 0;
}
