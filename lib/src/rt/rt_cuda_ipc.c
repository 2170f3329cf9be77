/*
 * rt_cuda_ipc.c - registering real GPU memory with the simulator (rt_cuda.h).
 */
#define _GNU_SOURCE
#include "rt/rt_cuda.h"

#include <dlfcn.h>
#include <pthread.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "rt/rt_alloc.h"

/* The driver API's ABI (cuda.h), declared here so that the library builds
 * without the toolkit; the names are the ones cuda.h maps the plain ones to. */
typedef int cu_result;
typedef unsigned long long cu_deviceptr;
typedef struct {
    char reserved[64];
} cu_ipc_mem_handle;
enum {
    CU_POINTER_ATTRIBUTE_MEMORY_TYPE_ = 2,
    CU_POINTER_ATTRIBUTE_DEVICE_ORDINAL_ = 9,
    CU_MEMORYTYPE_DEVICE_ = 2
};

static struct {
    pthread_mutex_t lock;
    int loaded;
    cu_result (*pointer_get_attribute)(void *, int, cu_deviceptr);
    cu_result (*mem_get_address_range)(cu_deviceptr *, size_t *, cu_deviceptr);
    cu_result (*ipc_get_mem_handle)(cu_ipc_mem_handle *, cu_deviceptr);
    cu_result (*get_error_string)(cu_result, const char **);
} cu = {.lock = PTHREAD_MUTEX_INITIALIZER};

/* The driver, if this process already holds it: the real libcudart loads it
 * at its first call; the emulated one never does. Tried again on every call
 * until found, since the program may start CUDA after its first handle. */
static int cu_load(void)
{
    pthread_mutex_lock(&cu.lock);
    if (cu.loaded) {
        pthread_mutex_unlock(&cu.lock);
        return 1;
    }
    void *h = dlopen("libcuda.so.1", RTLD_NOW | RTLD_NOLOAD);
    if (!h) {
        pthread_mutex_unlock(&cu.lock);
        return 0;
    }
    cu.pointer_get_attribute = (cu_result(*)(void *, int, cu_deviceptr))dlsym(h, "cuPointerGetAttribute");
    cu.mem_get_address_range =
        (cu_result(*)(cu_deviceptr *, size_t *, cu_deviceptr))dlsym(h, "cuMemGetAddressRange_v2");
    cu.ipc_get_mem_handle =
        (cu_result(*)(cu_ipc_mem_handle *, cu_deviceptr))dlsym(h, "cuIpcGetMemHandle");
    cu.get_error_string = (cu_result(*)(cu_result, const char **))dlsym(h, "cuGetErrorString");
    cu.loaded = cu.pointer_get_attribute && cu.mem_get_address_range && cu.ipc_get_mem_handle;
    pthread_mutex_unlock(&cu.lock);
    return cu.loaded;
}

static const char *cu_error(cu_result r)
{
    const char *s = NULL;
    if (cu.get_error_string)
        cu.get_error_string(r, &s);
    return s ? s : "unknown CUDA driver error";
}

/* The registrations of this process, so that destroying a handle or
 * finalising ends them. */
typedef struct registration {
    struct registration *next;
    uint64_t window_off, len;
} registration;

static pthread_mutex_t reg_lock = PTHREAD_MUTEX_INITIALIZER;
static registration *regs;

p2_rt_cuda_status p2_rt_cuda_register(p2_rt *rt, const void *p, uint64_t len,
                                      uint64_t *window_off)
{
    if (!rt || !p || len == 0 || !cu_load())
        return P2_RT_CUDA_NOT_DEVICE;
    cu_deviceptr dp = (cu_deviceptr)(uintptr_t)p;
    unsigned int type = 0;
    if (cu.pointer_get_attribute(&type, CU_POINTER_ATTRIBUTE_MEMORY_TYPE_, dp) != 0 ||
        type != CU_MEMORYTYPE_DEVICE_)
        return P2_RT_CUDA_NOT_DEVICE;
    int ordinal = 0;
    cu_deviceptr base = 0;
    size_t size = 0;
    cu_ipc_mem_handle handle;
    cu_result r;
    if ((r = cu.pointer_get_attribute(&ordinal, CU_POINTER_ATTRIBUTE_DEVICE_ORDINAL_, dp)) != 0 ||
        (r = cu.mem_get_address_range(&base, &size, dp)) != 0) {
        fprintf(stderr, "p2: rank %d: GPU memory %p: the CUDA driver cannot describe it: %s\n",
                rt->rank, p, cu_error(r));
        return P2_RT_CUDA_FAILED;
    }
    if (len > size - (dp - base)) {
        /* Not an error to report: tcaCreateHandle answers NOT_REGISTERED, as
         * for a range past an emulated allocation. */
        return P2_RT_CUDA_NOT_DEVICE;
    }
    if ((r = cu.ipc_get_mem_handle(&handle, base)) != 0) {
        fprintf(stderr, "p2: rank %d: GPU memory %p: cuIpcGetMemHandle: %s (memory from "
                        "cudaMallocManaged or a VMM allocation cannot be shared with the "
                        "simulator; use cudaMalloc)\n",
                rt->rank, p, cu_error(r));
        return P2_RT_CUDA_FAILED;
    }
    registration *reg = calloc(1, sizeof *reg);
    uint64_t off = 0;
    if (!reg || p2_rt_gpu_alloc(len, P2_RT_GPU_BLOCK_EXTERNAL, &off) != P2_RT_ALLOC_OK) {
        fprintf(stderr, "p2: rank %d: GPU memory %p: no room for %llu more bytes in the node's "
                        "GPU window (gpu_memory_bytes)\n",
                rt->rank, p, (unsigned long long)len);
        free(reg);
        return P2_RT_CUDA_FAILED;
    }
    p2_chan_req req = {.op = P2_CHAN_GPU_REGISTER, .a = off, .b = len};
    p2_chan_gpu_ipc ipc = {.alloc_offset = dp - base, .ordinal = ordinal};
    memcpy(ipc.handle, handle.reserved, sizeof ipc.handle);
    memcpy(req.data, &ipc, sizeof ipc);
    req.len = sizeof ipc;
    p2_chan_resp resp;
    p2_rt_enter(rt);
    int ok = p2_rt_call(rt, &req, &resp) == 0 && resp.status == P2_CHAN_OK;
    if (ok)
        p2_rt_advance_to(rt, resp.time_ps);
    p2_rt_leave(rt);
    if (!ok) { /* the simulator said why */
        p2_rt_gpu_free(off);
        free(reg);
        return P2_RT_CUDA_FAILED;
    }
    *reg = (registration){.window_off = off, .len = len};
    pthread_mutex_lock(&reg_lock);
    reg->next = regs;
    regs = reg;
    pthread_mutex_unlock(&reg_lock);
    *window_off = off;
    return P2_RT_CUDA_OK;
}

static void unregister(p2_rt *rt, registration *reg)
{
    /* Blocking: once answered, the simulator holds no mapping of the memory,
     * which the program may then cudaFree (CUDA IPC requires that order). */
    p2_chan_req req = {.op = P2_CHAN_GPU_UNREGISTER, .a = reg->window_off};
    p2_chan_resp resp;
    if (rt) {
        p2_rt_enter(rt);
        if (p2_rt_call(rt, &req, &resp) == 0)
            p2_rt_advance_to(rt, resp.time_ps);
        p2_rt_leave(rt);
    }
    p2_rt_gpu_free(reg->window_off);
    free(reg);
}

int p2_rt_cuda_unregister(p2_rt *rt, uint64_t window_off, uint64_t len)
{
    pthread_mutex_lock(&reg_lock);
    registration **link = &regs, *reg;
    while ((reg = *link) && !(reg->window_off == window_off && reg->len == len))
        link = &reg->next;
    if (reg)
        *link = reg->next;
    pthread_mutex_unlock(&reg_lock);
    if (!reg)
        return -1;
    unregister(rt, reg);
    return 0;
}

void p2_rt_cuda_unregister_all(p2_rt *rt)
{
    pthread_mutex_lock(&reg_lock);
    registration *all = regs;
    regs = NULL;
    pthread_mutex_unlock(&reg_lock);
    while (all) {
        registration *next = all->next;
        unregister(rt, all);
        all = next;
    }
}
