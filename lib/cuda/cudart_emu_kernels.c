/*
 * cudart_emu_kernels.c - the emulated runtime's kernels (cudart_emu.c): the
 * entry points nvcc's generated code calls to register fat binaries,
 * variables and functions and to launch; no kernel runs, and a launch fails
 * with a line on stderr naming the kernel. Depends on the common part
 * (cudart_emu_internal.h).
 */
#define _GNU_SOURCE
#include "cudart_emu_internal.h"

#include <dlfcn.h>
#include <pthread.h>
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>

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
