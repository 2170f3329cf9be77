/*
 * cudart_emu_memory.c - the emulated runtime's memory (cudart_emu.c): device
 * allocations from the rank runtime's GPU pool, pinned host memory
 * (cudaMallocHost, cudaHostAlloc, cudaHostRegister), pointer attributes, and
 * copies and fills that move their bytes at once and cost latency + bytes /
 * rate on the rank's clock or a stream's timeline. Depends on the common part
 * (cudart_emu_internal.h).
 */
#define _GNU_SOURCE
#include "cudart_emu_internal.h"

#include <pthread.h>
#include <stdint.h>
#include <stdlib.h>
#include <string.h>

#include "rt/rt.h"
#include "rt/rt_alloc.h"

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
        *ps = cost_ps(c->cuda_h2d_latency_ns, (double)bytes,
                      *waits == HOST_ALWAYS ? c->cuda_pageable_gbps : c->cuda_h2d_gbps);
        break;
    case cudaMemcpyDeviceToHost:
        if (!host_pinned(rt, dst, bytes))
            *waits = HOST_ALWAYS;
        *ps = cost_ps(c->cuda_d2h_latency_ns, (double)bytes,
                      *waits == HOST_ALWAYS ? c->cuda_pageable_gbps : c->cuda_d2h_gbps);
        break;
    case cudaMemcpyDeviceToDevice: {
        int registered = ((fd | fs) & P2_RT_GPU_BLOCK_REGISTERED) != 0;
        *waits = registered ? HOST_IF_SYNC : HOST_NEVER;
        *ps = cost_ps(registered ? c->cuda_d2d_reg_latency_ns : c->cuda_d2d_latency_ns,
                      (double)bytes, c->cuda_d2d_gbps);
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
                             cost_ps(rt->prm.cuda_memset_latency_ns, (double)count,
                                     rt->prm.cuda_memset_gbps),
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
