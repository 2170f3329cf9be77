/*
 * cudart_emu.c - the emulated CUDA runtime: the CUDA runtime API's names and
 * signatures (compiled against the toolkit's own cuda_runtime_api.h), built
 * as libcudart.so.<major> with the toolkit's SONAME and symbol version, so
 * that a program linked against the real shared libcudart runs on it
 * unchanged when p2run puts its directory first on LD_LIBRARY_PATH
 * (lib/cuda/README.md).
 *
 * The device: one K20X-like GPU per rank ("Tesla K20X (emulated)"), whose
 * memory is the node's GPU arena, the memory the PEACH2 model serves at the
 * GPU window (P2_GPU_OFFSET). cudaMalloc allocates from the runtime's GPU
 * pool (rt_alloc.h), the same one tcaMalloc(..., tcaMemoryGPU) uses, so
 * tcaCreateHandle(..., tcaMemoryGPU) accepts cudaMalloc pointers. Pinned host
 * memory (cudaMallocHost, cudaHostAlloc) is plain page-aligned host memory:
 * PEACH2 cannot DMA it (tcaMalloc(..., tcaMemoryCPU) is the DMA-able host
 * memory, as on the hardware), but copies from it run at the pinned rate.
 *
 * Time: every copy and fill really moves its bytes, at once, and costs
 * latency + bytes / rate (params.def cuda_*) in virtual time. Synchronous
 * calls charge the rank's clock; asynchronous ones a stream's timeline: an
 * operation starts at max(rank clock, stream tail) and moves the tail;
 * synchronising moves the clock to the tail. The legacy default stream waits
 * for, and is waited for by, every blocking stream. Events take the time of
 * their stream's tail.
 *
 * Kernels cannot run: a launch fails with cudaErrorNoKernelImageForDevice (a
 * function nvcc registered) or cudaErrorInvalidDeviceFunction (one it did
 * not), with a line on stderr naming the kernel.
 *
 * Without p2run there is no device: calls fail with cudaErrorNoDevice.
 *
 * The runtime's parts share cudart_emu_internal.h and depend one way, each on
 * this common part only: cudart_emu_memory.c (allocations, copies, fills),
 * cudart_emu_streams.c (streams and events), cudart_emu_kernels.c (nvcc's
 * registration and launch entry points). This file holds the state, the
 * pointers' kinds, the streams' timelines, errors, devices and versions.
 */
#define _GNU_SOURCE
#include "cudart_emu_internal.h"

#include <math.h>
#include <pthread.h>
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "rt/rt.h"
#include "rt/rt_alloc.h"

#define EMU_DEVICE_NAME "Tesla K20X (emulated)"

emu_state emu = {.lock = PTHREAD_MUTEX_INITIALIZER, .once = PTHREAD_ONCE_INIT};

static __thread cudaError_t last_error = cudaSuccess;
static __thread int current_device = 0;

static void emu_init(void)
{
    p2_rt *rt = p2_rt_get();
    if (rt && rt->gpu.base && p2_rt_gpu_bind(rt->gpu.base, rt->gpu.size, P2_RT_GPU_USER_CUDA) ==
                                  P2_RT_ALLOC_OK)
        emu.rt = rt;
}

p2_rt *device(void)
{
    pthread_once(&emu.once, emu_init);
    return emu.rt;
}

/* Every call returns through here: failures become the last error
 * (cudaErrorNotReady is a status, not an error, as in the real runtime). */
cudaError_t ret(cudaError_t e)
{
    if (e != cudaSuccess && e != cudaErrorNotReady)
        last_error = e;
    return e;
}

/* ---- Pointers ------------------------------------------------------------ */

int in_gpu(const p2_rt *rt, const void *p)
{
    const uint8_t *q = p;
    return q >= rt->gpu.base && q < rt->gpu.base + rt->gpu.size;
}

/* [p, p + n) in one live device allocation; *flags its block's flags. */
int device_range(const p2_rt *rt, const void *p, size_t n, unsigned *flags)
{
    if (!in_gpu(rt, p))
        return 0;
    return p2_rt_gpu_find((uint64_t)((const uint8_t *)p - rt->gpu.base), n ? n : 1, NULL, NULL,
                          flags) == P2_RT_ALLOC_OK;
}

/* Under emu.lock. */
emu_host_block *host_block(const void *p, size_t n)
{
    const char *q = p;
    for (emu_host_block *b = emu.host; b; b = b->next)
        if (q >= b->base && q < b->base + b->size && n <= (size_t)(b->base + b->size - q))
            return b;
    return NULL;
}

/* Host memory copies run at the pinned rate from: cudaMallocHost/HostAlloc,
 * cudaHostRegister, and the node's registered (tcaMalloc) host memory. */
int host_pinned(const p2_rt *rt, const void *p, size_t n)
{
    const uint8_t *q = p;
    if (q >= rt->host.base && q < rt->host.base + rt->host.size)
        return 1;
    pthread_mutex_lock(&emu.lock);
    int pinned = host_block(p, n) != NULL;
    pthread_mutex_unlock(&emu.lock);
    return pinned;
}

/* ---- Time ------------------------------------------------------------------ */

uint64_t cost_ps(double latency_ns, double bytes, double gbps)
{
    return p2_ns_ps(latency_ns) + (uint64_t)llround(bytes * 1e12 / p2_gbps_Bps(gbps));
}

#define STREAM_LEGACY ((cudaStream_t)0x1)
#define STREAM_PER_THREAD ((cudaStream_t)0x2)

/* Under emu.lock: the stream behind a handle (NULL for the default stream);
 * *ok = 0 for a handle that names no live stream. */
emu_stream *stream_of(cudaStream_t s, int *ok)
{
    *ok = 1;
    if (!s || s == STREAM_LEGACY || s == STREAM_PER_THREAD)
        return NULL;
    for (emu_stream *x = emu.streams; x; x = x->next)
        if ((cudaStream_t)x == s)
            return x;
    *ok = 0;
    return NULL;
}

/* Under emu.lock: when work queued on `st` (NULL: the default stream) now may
 * start, given the rank's clock. */
uint64_t stream_ready(const emu_stream *st, uint64_t now)
{
    uint64_t t = now > emu.default_tail_ps ? now : emu.default_tail_ps;
    if (st) {
        if (st->tail_ps > t || (st->flags & cudaStreamNonBlocking))
            t = st->tail_ps > now ? st->tail_ps : now;
        if (!(st->flags & cudaStreamNonBlocking) && emu.default_tail_ps > t)
            t = emu.default_tail_ps;
    } else {
        for (emu_stream *x = emu.streams; x; x = x->next)
            if (!(x->flags & cudaStreamNonBlocking) && x->tail_ps > t)
                t = x->tail_ps;
    }
    return t;
}

void stream_set_tail(emu_stream *st, uint64_t t)
{
    if (st)
        st->tail_ps = t;
    else
        emu.default_tail_ps = t;
}

/* Queues `ps` of work on stream `s`; synchronous work also moves the rank's
 * clock to its end. cudaErrorInvalidResourceHandle for a dead stream. */
cudaError_t run_work(p2_rt *rt, cudaStream_t s, uint64_t ps, int sync)
{
    cudaError_t e = cudaSuccess;
    p2_rt_enter(rt);
    pthread_mutex_lock(&emu.lock);
    int ok;
    emu_stream *st = stream_of(s, &ok);
    if (!ok) {
        e = cudaErrorInvalidResourceHandle;
    } else {
        uint64_t end = stream_ready(st, p2_rt_clock_ps(rt)) + ps;
        stream_set_tail(st, end);
        if (sync)
            p2_rt_advance_to(rt, end);
    }
    pthread_mutex_unlock(&emu.lock);
    p2_rt_leave(rt);
    return e;
}

/* ---- Errors ---------------------------------------------------------------- */

static const struct {
    cudaError_t value;
    const char *name;
} error_names[] = {
#define N(x) {x, #x},
#include "cuda_error_names.inc"
#undef N
};

const char *cudaGetErrorName(cudaError_t error)
{
    for (size_t i = 0; i < sizeof error_names / sizeof error_names[0]; i++)
        if (error_names[i].value == error)
            return error_names[i].name;
    return "cudaErrorUnknown";
}

const char *cudaGetErrorString(cudaError_t error)
{
    switch (error) {
    case cudaSuccess: return "no error";
    case cudaErrorInvalidValue: return "invalid argument";
    case cudaErrorMemoryAllocation: return "out of memory";
    case cudaErrorInvalidPitchValue: return "invalid pitch argument";
    case cudaErrorInvalidMemcpyDirection: return "invalid copy direction for memcpy";
    case cudaErrorNoDevice: return "no CUDA-capable device is detected";
    case cudaErrorInvalidDevice: return "invalid device ordinal";
    case cudaErrorInvalidResourceHandle: return "invalid resource handle";
    case cudaErrorNotReady: return "device not ready";
    case cudaErrorHostMemoryAlreadyRegistered:
        return "part or all of the requested memory range is already mapped";
    case cudaErrorHostMemoryNotRegistered: return "pointer does not correspond to a registered memory region";
    case cudaErrorInvalidDeviceFunction: return "invalid device function";
    case cudaErrorNoKernelImageForDevice:
        return "no kernel image is available for execution on the device "
               "(the emulated CUDA runtime runs no kernels)";
    case cudaErrorNotSupported: return "operation not supported";
    default: break;
    }
    return cudaGetErrorName(error);
}

cudaError_t cudaGetLastError(void)
{
    cudaError_t e = last_error;
    last_error = cudaSuccess;
    return e;
}

cudaError_t cudaPeekAtLastError(void) { return last_error; }

/* ---- Devices --------------------------------------------------------------- */

cudaError_t cudaGetDeviceCount(int *count)
{
    if (!count)
        return ret(cudaErrorInvalidValue);
    *count = device() ? 1 : 0;
    return ret(*count ? cudaSuccess : cudaErrorNoDevice);
}

cudaError_t cudaSetDevice(int dev)
{
    NEED_DEVICE();
    (void)rt;
    if (dev != 0)
        return ret(cudaErrorInvalidDevice);
    current_device = dev;
    return cudaSuccess;
}

cudaError_t cudaGetDevice(int *dev)
{
    NEED_DEVICE();
    (void)rt;
    if (!dev)
        return ret(cudaErrorInvalidValue);
    *dev = current_device;
    return cudaSuccess;
}

cudaError_t cudaSetDeviceFlags(unsigned int flags)
{
    NEED_DEVICE();
    (void)rt;
    /* Scheduling and mapping hints: nothing to schedule on an emulated GPU. */
    if (flags & ~(unsigned)(cudaDeviceScheduleMask | cudaDeviceMapHost |
                            cudaDeviceLmemResizeToMax | cudaDeviceSyncMemops))
        return ret(cudaErrorInvalidValue);
    return cudaSuccess;
}

cudaError_t cudaGetDeviceProperties(struct cudaDeviceProp *prop, int dev)
{
    NEED_DEVICE();
    if (!prop)
        return ret(cudaErrorInvalidValue);
    if (dev != 0)
        return ret(cudaErrorInvalidDevice);
    memset(prop, 0, sizeof *prop);
    snprintf(prop->name, sizeof prop->name, "%s", EMU_DEVICE_NAME);
    /* Tesla K20X (GK110): what a program sizing its work would ask. Memory:
     * the node's emulated GPU memory (gpu_memory_bytes), at most the K20X's 6 GB. */
    prop->totalGlobalMem = rt->gpu.size < 6ull << 30 ? rt->gpu.size : 6ull << 30;
    prop->sharedMemPerBlock = 48 << 10;
    prop->regsPerBlock = 65536;
    prop->warpSize = 32;
    prop->memPitch = 2147483647;
    prop->maxThreadsPerBlock = 1024;
    prop->maxThreadsDim[0] = 1024, prop->maxThreadsDim[1] = 1024, prop->maxThreadsDim[2] = 64;
    prop->maxGridSize[0] = 2147483647, prop->maxGridSize[1] = 65535, prop->maxGridSize[2] = 65535;
    prop->totalConstMem = 65536;
    prop->major = 3;
    prop->minor = 5;
    prop->textureAlignment = 512;
    prop->texturePitchAlignment = 32;
    prop->multiProcessorCount = 14;
    prop->canMapHostMemory = 1;
    prop->concurrentKernels = 1;
    prop->ECCEnabled = 1;
    prop->pciBusID = (int)rt->node + 1;
    prop->asyncEngineCount = 2;
    prop->unifiedAddressing = 1;
    prop->memoryBusWidth = 384;
    prop->l2CacheSize = 1536 << 10;
    prop->maxThreadsPerMultiProcessor = 2048;
    prop->streamPrioritiesSupported = 1;
    prop->globalL1CacheSupported = 1;
    prop->localL1CacheSupported = 1;
    prop->sharedMemPerMultiprocessor = 48 << 10;
    prop->regsPerMultiprocessor = 65536;
    prop->managedMemory = 0;
    prop->maxBlocksPerMultiProcessor = 16;
    prop->sharedMemPerBlockOptin = 48 << 10;
    prop->hostRegisterSupported = 1;
    prop->gpuDirectRDMASupported = 1;
    return cudaSuccess;
}

cudaError_t cudaDeviceSynchronize(void)
{
    NEED_DEVICE();
    p2_rt_enter(rt);
    pthread_mutex_lock(&emu.lock);
    uint64_t t = emu.default_tail_ps;
    for (emu_stream *x = emu.streams; x; x = x->next)
        if (x->tail_ps > t)
            t = x->tail_ps;
    p2_rt_advance_to(rt, t);
    pthread_mutex_unlock(&emu.lock);
    p2_rt_leave(rt);
    return cudaSuccess;
}

cudaError_t cudaDeviceReset(void)
{
    NEED_DEVICE();
    cudaDeviceSynchronize();
    p2_rt_gpu_free_all(P2_RT_GPU_BLOCK_CUDA);
    pthread_mutex_lock(&emu.lock);
    while (emu.streams) {
        emu_stream *x = emu.streams;
        emu.streams = x->next;
        free(x);
    }
    while (emu.events) {
        emu_event *x = emu.events;
        emu.events = x->next;
        free(x);
    }
    pthread_mutex_unlock(&emu.lock);
    (void)rt;
    return cudaSuccess;
}

/* ---- Versions -------------------------------------------------------------- */

cudaError_t cudaRuntimeGetVersion(int *runtimeVersion)
{
    if (!runtimeVersion)
        return ret(cudaErrorInvalidValue);
    *runtimeVersion = CUDART_VERSION;
    return cudaSuccess;
}

cudaError_t cudaDriverGetVersion(int *driverVersion)
{
    if (!driverVersion)
        return ret(cudaErrorInvalidValue);
    *driverVersion = device() ? CUDART_VERSION : 0;
    return cudaSuccess;
}
