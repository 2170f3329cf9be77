/*
 * rt_cuda.h - the real CUDA path of the rank runtime (lib/cuda/README.md): GPU
 * memory that the real CUDA runtime allocated (cudaMalloc on a real GPU)
 * registered with the simulator, so that PEACH2 DMA reads and writes the real
 * bytes at modelled times.
 *
 * Registering [p, p + len) reserves as many bytes of the node's GPU window
 * from the GPU pool (rt_alloc.h, flag P2_RT_GPU_BLOCK_EXTERNAL: no arena
 * bytes are the program's there) and sends the simulator the CUDA IPC handle
 * of p's allocation (P2_CHAN_GPU_REGISTER), which it opens with
 * cuIpcOpenMemHandle; the range's bus address is then the reserved window
 * offset's. The driver API is reached with dlopen(RTLD_NOLOAD): only a
 * process that already holds the real driver (the real libcudart loaded it)
 * can have such memory, and libp2tca needs no CUDA to build or run.
 * Thread-safe.
 */
#ifndef P2_RT_CUDA_H
#define P2_RT_CUDA_H

#include <stddef.h>
#include <stdint.h>

#include "rt/rt.h"

#ifdef __cplusplus
extern "C" {
#endif

typedef enum p2_rt_cuda_status {
    P2_RT_CUDA_OK = 0,
    P2_RT_CUDA_NOT_DEVICE = 1, /* no real CUDA driver in this process, or p is not GPU memory */
    P2_RT_CUDA_FAILED = 2      /* GPU memory that cannot be registered (a message on stderr) */
} p2_rt_cuda_status;

/* Registers [p, p + len) of real GPU memory; *window_off = its offset in the
 * node's GPU window. The range must lie inside one allocation. */
p2_rt_cuda_status p2_rt_cuda_register(p2_rt *rt, const void *p, uint64_t len,
                                      uint64_t *window_off);
/* Ends the registration of exactly [window_off, window_off + len); 0 if there
 * was one, -1 if none (nothing happens). */
int p2_rt_cuda_unregister(p2_rt *rt, uint64_t window_off, uint64_t len);
/* Ends every registration (tcaFinalize). */
void p2_rt_cuda_unregister_all(p2_rt *rt);

#ifdef __cplusplus
}
#endif

#endif /* P2_RT_CUDA_H */
