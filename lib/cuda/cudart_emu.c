/*
 * cudart_emu.c - the emulated CUDA runtime: the CUDA runtime API's names and
 * signatures (compiled against the toolkit's own cuda_runtime_api.h), built
 * as libcudart.so.<major> with the toolkit's SONAME and symbol version, so
 * that a program linked against the real shared libcudart runs on it
 * unchanged when p2run puts its directory first on LD_LIBRARY_PATH
 * (README, CUDA).
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
 */
#define _GNU_SOURCE
#include <cuda_runtime_api.h>

#include <dlfcn.h>
#include <math.h>
#include <pthread.h>
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "rt/rt.h"
#include "rt/rt_alloc.h"

#define EMU_DEVICE_NAME "Tesla K20X (emulated)"

typedef struct emu_stream {
    struct emu_stream *next;
    unsigned flags;
    uint64_t tail_ps;
} emu_stream;

typedef struct emu_event {
    struct emu_event *next;
    unsigned flags;
    int recorded;
    uint64_t time_ps;
} emu_event;

typedef struct emu_host_block {
    struct emu_host_block *next;
    char *base;
    size_t size;
    int allocated; /* cudaMallocHost/HostAlloc (else cudaHostRegister) */
} emu_host_block;

typedef struct emu_kernel {
    struct emu_kernel *next;
    const void *host_fun;
    char name[160];
} emu_kernel;

static struct {
    pthread_mutex_t lock; /* the lists below and the stream tails */
    pthread_once_t once;
    p2_rt *rt;            /* NULL: no device */
    uint64_t default_tail_ps;
    emu_stream *streams;
    emu_event *events;
    emu_host_block *host;
    emu_kernel *kernels;
    dim3 cfg_grid, cfg_block;
    size_t cfg_shared;
    void *cfg_stream;
} emu = {.lock = PTHREAD_MUTEX_INITIALIZER, .once = PTHREAD_ONCE_INIT};

static __thread cudaError_t last_error = cudaSuccess;
static __thread int current_device = 0;

static void emu_init(void)
{
    p2_rt *rt = p2_rt_get();
    if (rt && rt->gpu.base && p2_rt_gpu_bind(rt->gpu.base, rt->gpu.size, P2_RT_GPU_USER_CUDA) ==
                                  P2_RT_ALLOC_OK)
        emu.rt = rt;
}

static p2_rt *device(void)
{
    pthread_once(&emu.once, emu_init);
    return emu.rt;
}

/* Every call returns through here: failures become the last error
 * (cudaErrorNotReady is a status, not an error, as in the real runtime). */
static cudaError_t ret(cudaError_t e)
{
    if (e != cudaSuccess && e != cudaErrorNotReady)
        last_error = e;
    return e;
}

#define NEED_DEVICE()                 \
    p2_rt *rt = device();             \
    if (!rt)                          \
        return ret(cudaErrorNoDevice);

/* ---- Pointers ------------------------------------------------------------ */

static int in_gpu(const p2_rt *rt, const void *p)
{
    const uint8_t *q = p;
    return q >= rt->gpu.base && q < rt->gpu.base + rt->gpu.size;
}

/* [p, p + n) in one live device allocation; *flags its block's flags. */
static int device_range(const p2_rt *rt, const void *p, size_t n, unsigned *flags)
{
    if (!in_gpu(rt, p))
        return 0;
    return p2_rt_gpu_find((uint64_t)((const uint8_t *)p - rt->gpu.base), n ? n : 1, NULL, NULL,
                          flags) == P2_RT_ALLOC_OK;
}

/* Under emu.lock. */
static emu_host_block *host_block(const void *p, size_t n)
{
    const char *q = p;
    for (emu_host_block *b = emu.host; b; b = b->next)
        if (q >= b->base && q < b->base + b->size && n <= (size_t)(b->base + b->size - q))
            return b;
    return NULL;
}

/* Host memory copies run at the pinned rate from: cudaMallocHost/HostAlloc,
 * cudaHostRegister, and the node's registered (tcaMalloc) host memory. */
static int host_pinned(const p2_rt *rt, const void *p, size_t n)
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

static uint64_t cost_ps(uint64_t latency_ps, double bytes, double bytes_per_s)
{
    return latency_ps + (uint64_t)llround(bytes * 1e12 / bytes_per_s);
}

#define STREAM_LEGACY ((cudaStream_t)0x1)
#define STREAM_PER_THREAD ((cudaStream_t)0x2)

/* Under emu.lock: the stream behind a handle (NULL for the default stream);
 * *ok = 0 for a handle that names no live stream. */
static emu_stream *stream_of(cudaStream_t s, int *ok)
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
static uint64_t stream_ready(const emu_stream *st, uint64_t now)
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

static void stream_set_tail(emu_stream *st, uint64_t t)
{
    if (st)
        st->tail_ps = t;
    else
        emu.default_tail_ps = t;
}

/* Queues `ps` of work on stream `s`; synchronous work also moves the rank's
 * clock to its end. cudaErrorInvalidResourceHandle for a dead stream. */
static cudaError_t run_work(p2_rt *rt, cudaStream_t s, uint64_t ps, int sync)
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

/* ---- Memory ---------------------------------------------------------------- */

cudaError_t cudaMalloc(void **devPtr, size_t size)
{
    NEED_DEVICE();
    if (!devPtr)
        return ret(cudaErrorInvalidValue);
    if (size == 0) {
        *devPtr = NULL;
        return cudaSuccess;
    }
    uint64_t off;
    if (p2_rt_gpu_alloc(size, P2_RT_GPU_BLOCK_CUDA, &off) != P2_RT_ALLOC_OK)
        return ret(cudaErrorMemoryAllocation);
    *devPtr = rt->gpu.base + off;
    return cudaSuccess;
}

cudaError_t cudaFree(void *devPtr)
{
    NEED_DEVICE();
    if (!devPtr)
        return cudaSuccess;
    uint64_t start;
    unsigned flags;
    if (!in_gpu(rt, devPtr) ||
        p2_rt_gpu_find((uint64_t)((uint8_t *)devPtr - rt->gpu.base), 1, &start, NULL, &flags) !=
            P2_RT_ALLOC_OK ||
        start != (uint64_t)((uint8_t *)devPtr - rt->gpu.base) || !(flags & P2_RT_GPU_BLOCK_CUDA))
        return ret(cudaErrorInvalidValue);
    cudaDeviceSynchronize(); /* cudaFree synchronises */
    p2_rt_gpu_free(start);
    return cudaSuccess;
}

static cudaError_t host_alloc(void **p, size_t size)
{
    NEED_DEVICE();
    (void)rt;
    if (!p)
        return ret(cudaErrorInvalidValue);
    if (size == 0) {
        *p = NULL;
        return cudaSuccess;
    }
    emu_host_block *b = calloc(1, sizeof *b);
    void *mem = NULL;
    if (!b || posix_memalign(&mem, 4096, size) != 0) {
        free(b);
        return ret(cudaErrorMemoryAllocation);
    }
    *b = (emu_host_block){.base = mem, .size = size, .allocated = 1};
    pthread_mutex_lock(&emu.lock);
    b->next = emu.host;
    emu.host = b;
    pthread_mutex_unlock(&emu.lock);
    *p = mem;
    return cudaSuccess;
}

cudaError_t cudaMallocHost(void **ptr, size_t size) { return host_alloc(ptr, size); }

cudaError_t cudaHostAlloc(void **pHost, size_t size, unsigned int flags)
{
    if (flags & ~(unsigned)(cudaHostAllocPortable | cudaHostAllocMapped |
                            cudaHostAllocWriteCombined))
        return ret(cudaErrorInvalidValue);
    return host_alloc(pHost, size);
}

/* Removes the host block starting at p of the given kind; 0 if none. */
static emu_host_block *host_take(const void *p, int allocated)
{
    pthread_mutex_lock(&emu.lock);
    emu_host_block **link = &emu.host, *b;
    while ((b = *link) && !(b->base == p && b->allocated == allocated))
        link = &b->next;
    if (b)
        *link = b->next;
    pthread_mutex_unlock(&emu.lock);
    return b;
}

cudaError_t cudaFreeHost(void *ptr)
{
    NEED_DEVICE();
    (void)rt;
    if (!ptr)
        return cudaSuccess;
    emu_host_block *b = host_take(ptr, 1);
    if (!b)
        return ret(cudaErrorInvalidValue);
    free(b->base);
    free(b);
    return cudaSuccess;
}

cudaError_t cudaHostRegister(void *ptr, size_t size, unsigned int flags)
{
    NEED_DEVICE();
    if (!ptr || size == 0 || in_gpu(rt, ptr) ||
        (flags & ~(unsigned)(cudaHostRegisterPortable | cudaHostRegisterMapped |
                             cudaHostRegisterIoMemory | cudaHostRegisterReadOnly)))
        return ret(cudaErrorInvalidValue);
    pthread_mutex_lock(&emu.lock);
    int overlap = 0;
    for (emu_host_block *b = emu.host; b; b = b->next)
        if ((char *)ptr < b->base + b->size && b->base < (char *)ptr + size)
            overlap = 1;
    emu_host_block *b = overlap ? NULL : calloc(1, sizeof *b);
    if (b) {
        *b = (emu_host_block){.next = emu.host, .base = ptr, .size = size};
        emu.host = b;
    }
    pthread_mutex_unlock(&emu.lock);
    if (overlap)
        return ret(cudaErrorHostMemoryAlreadyRegistered);
    return b ? cudaSuccess : ret(cudaErrorMemoryAllocation);
}

cudaError_t cudaHostUnregister(void *ptr)
{
    NEED_DEVICE();
    (void)rt;
    emu_host_block *b = ptr ? host_take(ptr, 0) : NULL;
    if (!b)
        return ret(cudaErrorHostMemoryNotRegistered);
    free(b);
    return cudaSuccess;
}

cudaError_t cudaPointerGetAttributes(struct cudaPointerAttributes *attributes, const void *ptr)
{
    NEED_DEVICE();
    if (!attributes)
        return ret(cudaErrorInvalidValue);
    memset(attributes, 0, sizeof *attributes);
    attributes->device = -2;
    uint64_t start;
    if (in_gpu(rt, ptr) &&
        p2_rt_gpu_find((uint64_t)((const uint8_t *)ptr - rt->gpu.base), 1, &start, NULL, NULL) ==
            P2_RT_ALLOC_OK) {
        attributes->type = cudaMemoryTypeDevice;
        attributes->device = 0;
        attributes->devicePointer = (void *)ptr;
        return cudaSuccess;
    }
    pthread_mutex_lock(&emu.lock);
    emu_host_block *b = host_block(ptr, 1);
    pthread_mutex_unlock(&emu.lock);
    if (b) {
        attributes->type = cudaMemoryTypeHost;
        attributes->device = 0;
        attributes->hostPointer = (void *)ptr;
        attributes->devicePointer = (void *)ptr;
    } else {
        attributes->type = cudaMemoryTypeUnregistered;
    }
    return cudaSuccess;
}

cudaError_t cudaMemGetInfo(size_t *free, size_t *total)
{
    NEED_DEVICE();
    if (!free || !total)
        return ret(cudaErrorInvalidValue);
    *total = rt->gpu.size;
    *free = rt->gpu.size - p2_rt_gpu_used();
    return cudaSuccess;
}

cudaError_t cudaHostGetDevicePointer(void **pDevice, void *pHost, unsigned int flags)
{
    NEED_DEVICE();
    (void)rt;
    if (!pDevice || flags != 0)
        return ret(cudaErrorInvalidValue);
    /* Unified addressing: mapped pinned memory has the same address on the device. */
    pthread_mutex_lock(&emu.lock);
    emu_host_block *b = host_block(pHost, 1);
    pthread_mutex_unlock(&emu.lock);
    if (!b)
        return ret(cudaErrorInvalidValue);
    *pDevice = pHost;
    return cudaSuccess;
}

/* What a copy of `bytes` between dst and src costs, after checking them like
 * the real runtime (count 0 is a no-op; cudaMemcpyDefault infers the kind). */
/* *waits says when the host waits for the copy (the real runtime's rules):
 * HOST_ALWAYS from or to pageable memory (staged, even asynchronously),
 * HOST_IF_SYNC for cudaMemcpy between host and device or on memory
 * registered for GPUDirect (whose sync-memops attribute makes its copies
 * synchronous), HOST_NEVER for cudaMemcpy device to device otherwise. */
enum { HOST_NEVER = 0, HOST_IF_SYNC = 1, HOST_ALWAYS = 2 };

static cudaError_t copy_cost(p2_rt *rt, void *dst, const void *src, size_t bytes,
                             enum cudaMemcpyKind kind, uint64_t *ps, int *waits)
{
    *waits = HOST_IF_SYNC;
    if ((unsigned)kind > cudaMemcpyDefault)
        return cudaErrorInvalidMemcpyDirection;
    *ps = 0;
    if (bytes == 0)
        return cudaSuccess;
    if (!dst || !src)
        return cudaErrorInvalidValue;
    int dst_dev = in_gpu(rt, dst), src_dev = in_gpu(rt, src);
    if (kind == cudaMemcpyDefault)
        kind = src_dev ? (dst_dev ? cudaMemcpyDeviceToDevice : cudaMemcpyDeviceToHost)
                       : (dst_dev ? cudaMemcpyHostToDevice : cudaMemcpyHostToHost);
    int want_dst = kind == cudaMemcpyHostToDevice || kind == cudaMemcpyDeviceToDevice;
    int want_src = kind == cudaMemcpyDeviceToHost || kind == cudaMemcpyDeviceToDevice;
    unsigned fd = 0, fs = 0;
    if ((want_dst && !device_range(rt, dst, bytes, &fd)) ||
        (want_src && !device_range(rt, src, bytes, &fs)) || (!want_dst && dst_dev) ||
        (!want_src && src_dev))
        return cudaErrorInvalidValue;
    const p2_rank_params *c = &rt->prm;
    switch (kind) {
    case cudaMemcpyHostToDevice:
        if (!host_pinned(rt, src, bytes))
            *waits = HOST_ALWAYS;
        *ps = cost_ps(p2_ns_ps(c->cuda_h2d_latency_ns), (double)bytes,
                      *waits == HOST_ALWAYS ? p2_gbps_Bps(c->cuda_pageable_gbps) : p2_gbps_Bps(c->cuda_h2d_gbps));
        break;
    case cudaMemcpyDeviceToHost:
        if (!host_pinned(rt, dst, bytes))
            *waits = HOST_ALWAYS;
        *ps = cost_ps(p2_ns_ps(c->cuda_d2h_latency_ns), (double)bytes,
                      *waits == HOST_ALWAYS ? p2_gbps_Bps(c->cuda_pageable_gbps) : p2_gbps_Bps(c->cuda_d2h_gbps));
        break;
    case cudaMemcpyDeviceToDevice: {
        int registered = ((fd | fs) & P2_RT_GPU_BLOCK_REGISTERED) != 0;
        *waits = registered ? HOST_IF_SYNC : HOST_NEVER;
        *ps = cost_ps(registered ? p2_ns_ps(c->cuda_d2d_reg_latency_ns) : p2_ns_ps(c->cuda_d2d_latency_ns), (double)bytes, p2_gbps_Bps(c->cuda_d2d_gbps));
        break;
    }
    default: /* host to host: the CPU's memcpy, not modelled */
        break;
    }
    return cudaSuccess;
}

static cudaError_t memcpy_on(void *dst, const void *src, size_t count, enum cudaMemcpyKind kind,
                             cudaStream_t stream, int sync)
{
    NEED_DEVICE();
    p2_rt_api_begin();
    uint64_t ps;
    int waits;
    cudaError_t e = copy_cost(rt, dst, src, count, kind, &ps, &waits);
    if (e == cudaSuccess)
        e = run_work(rt, stream, ps, waits == HOST_ALWAYS || (sync && waits == HOST_IF_SYNC));
    if (e == cudaSuccess && count)
        memmove(dst, src, count);
    p2_rt_api_end();
    return ret(e);
}

cudaError_t cudaMemcpy(void *dst, const void *src, size_t count, enum cudaMemcpyKind kind)
{
    return memcpy_on(dst, src, count, kind, NULL, 1);
}

cudaError_t cudaMemcpyAsync(void *dst, const void *src, size_t count, enum cudaMemcpyKind kind,
                            cudaStream_t stream)
{
    return memcpy_on(dst, src, count, kind, stream, 0);
}

static cudaError_t memcpy2d_on(void *dst, size_t dpitch, const void *src, size_t spitch,
                               size_t width, size_t height, enum cudaMemcpyKind kind,
                               cudaStream_t stream, int sync)
{
    NEED_DEVICE();
    if ((unsigned)kind > cudaMemcpyDefault)
        return ret(cudaErrorInvalidMemcpyDirection);
    if (width == 0 || height == 0)
        return cudaSuccess;
    if (dpitch < width || spitch < width)
        return ret(cudaErrorInvalidPitchValue);
    /* Charged as one copy of width * height bytes; every row checked; moved
     * row by row. */
    size_t dspan = dpitch * (height - 1) + width, sspan = spitch * (height - 1) + width;
    uint64_t ps;
    int waits;
    cudaError_t e = copy_cost(rt, dst, src, width * height, kind, &ps, &waits);
    if (e == cudaSuccess && ((in_gpu(rt, dst) && !device_range(rt, dst, dspan, NULL)) ||
                             (in_gpu(rt, src) && !device_range(rt, src, sspan, NULL))))
        e = cudaErrorInvalidValue;
    if (e != cudaSuccess)
        return ret(e);
    p2_rt_api_begin();
    e = run_work(rt, stream, ps, waits == HOST_ALWAYS || (sync && waits == HOST_IF_SYNC));
    for (size_t r = 0; e == cudaSuccess && r < height; r++)
        memmove((char *)dst + r * dpitch, (const char *)src + r * spitch, width);
    p2_rt_api_end();
    return ret(e);
}

cudaError_t cudaMemcpy2D(void *dst, size_t dpitch, const void *src, size_t spitch, size_t width,
                         size_t height, enum cudaMemcpyKind kind)
{
    return memcpy2d_on(dst, dpitch, src, spitch, width, height, kind, NULL, 1);
}

cudaError_t cudaMemcpy2DAsync(void *dst, size_t dpitch, const void *src, size_t spitch,
                              size_t width, size_t height, enum cudaMemcpyKind kind,
                              cudaStream_t stream)
{
    return memcpy2d_on(dst, dpitch, src, spitch, width, height, kind, stream, 0);
}

static cudaError_t memset_on(void *devPtr, int value, size_t count, cudaStream_t stream, int sync)
{
    NEED_DEVICE();
    if (count == 0)
        return cudaSuccess;
    unsigned flags;
    if (!device_range(rt, devPtr, count, &flags))
        return ret(cudaErrorInvalidValue);
    /* cudaMemset is asynchronous to the host, except on memory registered
     * for GPUDirect (sync memops). */
    p2_rt_api_begin();
    cudaError_t e = run_work(rt, stream,
                             cost_ps(p2_ns_ps(rt->prm.cuda_memset_latency_ns), (double)count, p2_gbps_Bps(rt->prm.cuda_memset_gbps)),
                             sync && (flags & P2_RT_GPU_BLOCK_REGISTERED));
    if (e == cudaSuccess)
        memset(devPtr, value, count);
    p2_rt_api_end();
    return ret(e);
}

cudaError_t cudaMemset(void *devPtr, int value, size_t count)
{
    return memset_on(devPtr, value, count, NULL, 1);
}

cudaError_t cudaMemsetAsync(void *devPtr, int value, size_t count, cudaStream_t stream)
{
    return memset_on(devPtr, value, count, stream, 0);
}

/* ---- Streams --------------------------------------------------------------- */

cudaError_t cudaStreamCreateWithFlags(cudaStream_t *pStream, unsigned int flags)
{
    NEED_DEVICE();
    (void)rt;
    if (!pStream || (flags & ~(unsigned)cudaStreamNonBlocking))
        return ret(cudaErrorInvalidValue);
    emu_stream *s = calloc(1, sizeof *s);
    if (!s)
        return ret(cudaErrorMemoryAllocation);
    s->flags = flags;
    pthread_mutex_lock(&emu.lock);
    s->next = emu.streams;
    emu.streams = s;
    pthread_mutex_unlock(&emu.lock);
    *pStream = (cudaStream_t)s;
    return cudaSuccess;
}

cudaError_t cudaStreamCreate(cudaStream_t *pStream)
{
    return cudaStreamCreateWithFlags(pStream, cudaStreamDefault);
}

cudaError_t cudaStreamDestroy(cudaStream_t stream)
{
    NEED_DEVICE();
    (void)rt;
    pthread_mutex_lock(&emu.lock);
    emu_stream **link = &emu.streams, *s;
    while ((s = *link) && (cudaStream_t)s != stream)
        link = &s->next;
    if (s)
        *link = s->next;
    pthread_mutex_unlock(&emu.lock);
    /* Its queued work still completes: the device's time keeps it (cudaDeviceSynchronize
     * no longer sees it, as the real runtime lets the work finish in the background). */
    free(s);
    return s ? cudaSuccess : ret(cudaErrorInvalidResourceHandle);
}

/* The time stream `s` is idle at; *ok = 0 for a dead handle. */
static uint64_t stream_tail(cudaStream_t s, int *ok)
{
    pthread_mutex_lock(&emu.lock);
    emu_stream *st = stream_of(s, ok);
    uint64_t t = 0;
    if (*ok)
        t = st ? st->tail_ps : stream_ready(NULL, 0);
    pthread_mutex_unlock(&emu.lock);
    return t;
}

cudaError_t cudaStreamSynchronize(cudaStream_t stream)
{
    NEED_DEVICE();
    p2_rt_enter(rt);
    int ok;
    uint64_t t = stream_tail(stream, &ok);
    if (ok)
        p2_rt_advance_to(rt, t);
    p2_rt_leave(rt);
    return ok ? cudaSuccess : ret(cudaErrorInvalidResourceHandle);
}

cudaError_t cudaStreamQuery(cudaStream_t stream)
{
    NEED_DEVICE();
    p2_rt_enter(rt);
    int ok;
    uint64_t t = stream_tail(stream, &ok);
    uint64_t now = p2_rt_clock_ps(rt);
    p2_rt_leave(rt);
    if (!ok)
        return ret(cudaErrorInvalidResourceHandle);
    return t <= now ? cudaSuccess : cudaErrorNotReady;
}

/* ---- Events ---------------------------------------------------------------- */

cudaError_t cudaEventCreateWithFlags(cudaEvent_t *event, unsigned int flags)
{
    NEED_DEVICE();
    (void)rt;
    if (!event || (flags & ~(unsigned)(cudaEventBlockingSync | cudaEventDisableTiming |
                                       cudaEventInterprocess)))
        return ret(cudaErrorInvalidValue);
    emu_event *e = calloc(1, sizeof *e);
    if (!e)
        return ret(cudaErrorMemoryAllocation);
    e->flags = flags;
    pthread_mutex_lock(&emu.lock);
    e->next = emu.events;
    emu.events = e;
    pthread_mutex_unlock(&emu.lock);
    *event = (cudaEvent_t)e;
    return cudaSuccess;
}

cudaError_t cudaEventCreate(cudaEvent_t *event)
{
    return cudaEventCreateWithFlags(event, cudaEventDefault);
}

/* Under emu.lock. */
static emu_event *event_of(cudaEvent_t ev)
{
    for (emu_event *x = emu.events; x; x = x->next)
        if ((cudaEvent_t)x == ev)
            return x;
    return NULL;
}

cudaError_t cudaEventRecord(cudaEvent_t event, cudaStream_t stream)
{
    NEED_DEVICE();
    cudaError_t r = cudaSuccess;
    p2_rt_enter(rt);
    pthread_mutex_lock(&emu.lock);
    emu_event *e = event_of(event);
    int ok;
    emu_stream *st = stream_of(stream, &ok);
    if (!e || !ok) {
        r = cudaErrorInvalidResourceHandle;
    } else {
        e->time_ps = stream_ready(st, p2_rt_clock_ps(rt));
        e->recorded = 1;
    }
    pthread_mutex_unlock(&emu.lock);
    p2_rt_leave(rt);
    return ret(r);
}

cudaError_t cudaStreamWaitEvent(cudaStream_t stream, cudaEvent_t event, unsigned int flags)
{
    NEED_DEVICE();
    if (flags & ~(unsigned)cudaEventWaitExternal)
        return ret(cudaErrorInvalidValue);
    cudaError_t r = cudaSuccess;
    p2_rt_enter(rt);
    pthread_mutex_lock(&emu.lock);
    emu_event *e = event_of(event);
    int ok;
    emu_stream *st = stream_of(stream, &ok);
    if (!e || !ok) {
        r = cudaErrorInvalidResourceHandle;
    } else if (e->recorded) {
        /* Later work on the stream starts after the event's time (an event
         * never recorded is complete: nothing to wait for). */
        uint64_t t = stream_ready(st, p2_rt_clock_ps(rt));
        if (e->time_ps > t)
            stream_set_tail(st, e->time_ps);
    }
    pthread_mutex_unlock(&emu.lock);
    p2_rt_leave(rt);
    return ret(r);
}

/* *t = the event's time; *ok = 0 (unknown event) or -1 (never recorded). */
static uint64_t event_time(cudaEvent_t event, int *ok, unsigned *flags)
{
    pthread_mutex_lock(&emu.lock);
    emu_event *e = event_of(event);
    *ok = !e ? 0 : e->recorded ? 1 : -1;
    uint64_t t = e ? e->time_ps : 0;
    if (flags)
        *flags = e ? e->flags : 0;
    pthread_mutex_unlock(&emu.lock);
    return t;
}

cudaError_t cudaEventSynchronize(cudaEvent_t event)
{
    NEED_DEVICE();
    int ok;
    uint64_t t = event_time(event, &ok, NULL);
    if (!ok)
        return ret(cudaErrorInvalidResourceHandle);
    if (ok > 0) { /* an event never recorded is complete */
        p2_rt_enter(rt);
        p2_rt_advance_to(rt, t);
        p2_rt_leave(rt);
    }
    return cudaSuccess;
}

cudaError_t cudaEventQuery(cudaEvent_t event)
{
    NEED_DEVICE();
    int ok;
    uint64_t t = event_time(event, &ok, NULL);
    if (!ok)
        return ret(cudaErrorInvalidResourceHandle);
    p2_rt_enter(rt);
    uint64_t now = p2_rt_clock_ps(rt);
    p2_rt_leave(rt);
    return ok < 0 || t <= now ? cudaSuccess : cudaErrorNotReady;
}

cudaError_t cudaEventElapsedTime(float *ms, cudaEvent_t start, cudaEvent_t end)
{
    NEED_DEVICE();
    if (!ms)
        return ret(cudaErrorInvalidValue);
    int ok0, ok1;
    unsigned f0, f1;
    uint64_t t0 = event_time(start, &ok0, &f0), t1 = event_time(end, &ok1, &f1);
    if (ok0 <= 0 || ok1 <= 0 || ((f0 | f1) & cudaEventDisableTiming))
        return ret(cudaErrorInvalidResourceHandle);
    p2_rt_enter(rt);
    uint64_t now = p2_rt_clock_ps(rt);
    p2_rt_leave(rt);
    if (t0 > now || t1 > now)
        return ret(cudaErrorNotReady);
    *ms = (float)(((double)t1 - (double)t0) * 1e-9);
    return cudaSuccess;
}

cudaError_t cudaEventDestroy(cudaEvent_t event)
{
    NEED_DEVICE();
    (void)rt;
    pthread_mutex_lock(&emu.lock);
    emu_event **link = &emu.events, *e;
    while ((e = *link) && (cudaEvent_t)e != event)
        link = &e->next;
    if (e)
        *link = e->next;
    pthread_mutex_unlock(&emu.lock);
    free(e);
    return e ? cudaSuccess : ret(cudaErrorInvalidResourceHandle);
}

/* ---- Kernels: registered by nvcc's generated code, never run --------------- */

void **__cudaRegisterFatBinary(void *fatCubin)
{
    static void *handle;
    (void)fatCubin;
    return &handle;
}

void __cudaRegisterFatBinaryEnd(void **fatCubinHandle) { (void)fatCubinHandle; }

void __cudaUnregisterFatBinary(void **fatCubinHandle) { (void)fatCubinHandle; }

char __cudaInitModule(void **fatCubinHandle)
{
    (void)fatCubinHandle;
    return 1;
}

void __cudaRegisterVar(void **h, char *hostVar, char *deviceAddress, const char *deviceName,
                       int ext, size_t size, int constant, int global)
{
    (void)h, (void)hostVar, (void)deviceAddress, (void)deviceName, (void)ext, (void)size,
        (void)constant, (void)global;
}

void __cudaRegisterManagedVar(void **h, void **hostVarPtrAddress, char *deviceAddress,
                              const char *deviceName, int ext, size_t size, int constant,
                              int global)
{
    (void)h, (void)hostVarPtrAddress, (void)deviceAddress, (void)deviceName, (void)ext,
        (void)size, (void)constant, (void)global;
}

void __cudaRegisterFunction(void **h, const char *hostFun, char *deviceFun,
                            const char *deviceName, int thread_limit, uint3 *tid, uint3 *bid,
                            dim3 *bDim, dim3 *gDim, int *wSize)
{
    (void)h, (void)deviceFun, (void)thread_limit, (void)tid, (void)bid, (void)bDim, (void)gDim,
        (void)wSize;
    emu_kernel *k = calloc(1, sizeof *k);
    if (!k)
        return;
    k->host_fun = hostFun;
    snprintf(k->name, sizeof k->name, "%s", deviceName ? deviceName : "?");
    /* A C++ kernel's name demangled, when the program carries the C++
     * runtime (nvcc's programs do): "scale(float*, float, int)". */
    typedef char *(*demangle_fn)(const char *, char *, size_t *, int *);
    demangle_fn demangle = (demangle_fn)dlsym(RTLD_DEFAULT, "__cxa_demangle");
    int status = -1;
    char *plain = demangle && deviceName ? demangle(deviceName, NULL, NULL, &status) : NULL;
    if (plain && status == 0)
        snprintf(k->name, sizeof k->name, "%s", plain);
    free(plain);
    pthread_mutex_lock(&emu.lock);
    k->next = emu.kernels;
    emu.kernels = k;
    pthread_mutex_unlock(&emu.lock);
}

static emu_kernel *kernel_of(const void *host_fun)
{
    pthread_mutex_lock(&emu.lock);
    emu_kernel *k = emu.kernels;
    while (k && k->host_fun != host_fun && (const void *)k != host_fun)
        k = k->next;
    pthread_mutex_unlock(&emu.lock);
    return k;
}

unsigned __cudaPushCallConfiguration(dim3 gridDim, dim3 blockDim, size_t sharedMem, void *stream)
{
    emu.cfg_grid = gridDim, emu.cfg_block = blockDim;
    emu.cfg_shared = sharedMem, emu.cfg_stream = stream;
    return 0;
}

cudaError_t __cudaPopCallConfiguration(dim3 *gridDim, dim3 *blockDim, size_t *sharedMem,
                                       void *stream)
{
    *gridDim = emu.cfg_grid, *blockDim = emu.cfg_block, *sharedMem = emu.cfg_shared;
    *(void **)stream = emu.cfg_stream;
    return cudaSuccess;
}

cudaError_t __cudaGetKernel(cudaKernel_t *kernel, const void *hostFun)
{
    emu_kernel *k = kernel_of(hostFun);
    if (!kernel || !k)
        return ret(cudaErrorInvalidDeviceFunction);
    *kernel = (cudaKernel_t)k;
    return cudaSuccess;
}

static cudaError_t launch(const void *func, dim3 g, dim3 b)
{
    NEED_DEVICE();
    emu_kernel *k = kernel_of(func);
    p2_rt_enter(rt);
    p2_rt_charge_ps(rt, p2_ns_ps(rt->prm.cuda_launch_ns));
    p2_rt_leave(rt);
    if (!k) {
        fprintf(stderr, "cuda (emulated): rank %d: kernel launch of %p <<<(%u,%u,%u), (%u,%u,%u)>>>: "
                        "not a kernel this program registered: cudaErrorInvalidDeviceFunction\n",
                rt->rank, func, g.x, g.y, g.z, b.x, b.y, b.z);
        return ret(cudaErrorInvalidDeviceFunction);
    }
    fprintf(stderr, "cuda (emulated): rank %d: kernel launch %s <<<(%u,%u,%u), (%u,%u,%u)>>> "
                    "cannot run: the emulated GPU runs no kernels "
                    "(cudaErrorNoKernelImageForDevice)\n",
            rt->rank, k->name, g.x, g.y, g.z, b.x, b.y, b.z);
    return ret(cudaErrorNoKernelImageForDevice);
}

cudaError_t __cudaLaunchKernel(cudaKernel_t kernel, dim3 gridDim, dim3 blockDim, void **args,
                               size_t sharedMem, cudaStream_t stream)
{
    (void)args, (void)sharedMem, (void)stream;
    return launch((const void *)kernel, gridDim, blockDim);
}

cudaError_t __cudaLaunchKernel_ptsz(cudaKernel_t kernel, dim3 gridDim, dim3 blockDim, void **args,
                                    size_t sharedMem, cudaStream_t stream)
{
    return __cudaLaunchKernel(kernel, gridDim, blockDim, args, sharedMem, stream);
}

cudaError_t cudaLaunchKernel(const void *func, dim3 gridDim, dim3 blockDim, void **args,
                             size_t sharedMem, cudaStream_t stream)
{
    (void)args, (void)sharedMem, (void)stream;
    return launch(func, gridDim, blockDim);
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
