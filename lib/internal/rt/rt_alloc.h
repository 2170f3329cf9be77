/*
 * rt_alloc.h - the allocator of this node's GPU memory, shared by every layer
 * of a rank process that hands out GPU memory: tcaMalloc(..., tcaMemoryGPU)
 * and the emulated CUDA runtime's cudaMalloc (lib/cuda). One pool per
 * process, so the two never hand out overlapping blocks, and
 * tcaCreateHandle(..., tcaMemoryGPU) can check that a cudaMalloc pointer's
 * range lies inside one live allocation.
 *
 * The pool works on offsets into the memory it is bound to (the node's GPU
 * arena under p2run, rt->gpu; a test's fake device memory otherwise); it is
 * first fit over tca_arena (tca_alloc.h), so the same calls give the same
 * offsets, and so the same PCIe addresses and timings, in every run.
 *
 * Users bind the pool (p2_rt_gpu_bind) before they allocate and unbind it
 * when they are done; binding to the memory it already serves keeps every
 * live block; the last unbind, or binding to other memory, empties it.
 * Thread-safe.
 */
#ifndef P2_RT_ALLOC_H
#define P2_RT_ALLOC_H

#include <stddef.h>
#include <stdint.h>

#ifdef __cplusplus
extern "C" {
#endif

/* Who binds the pool (a bit each). */
enum { P2_RT_GPU_USER_TCA = 1u, P2_RT_GPU_USER_CUDA = 2u };

/* Flags of a live block. */
enum {
    P2_RT_GPU_BLOCK_CUDA = 1u,      /* from cudaMalloc (else from tcaMalloc) */
    P2_RT_GPU_BLOCK_REGISTERED = 2u, /* registered for GPUDirect (tcaCreateHandle) */
    P2_RT_GPU_BLOCK_EXTERNAL = 4u    /* window space for real GPU memory (rt_cuda.h):
                                        no bytes of the arena are the program's */
};

typedef enum p2_rt_alloc_status {
    P2_RT_ALLOC_OK = 0,
    P2_RT_ALLOC_NO_SPACE = 1,      /* no free block large enough, or size 0 */
    P2_RT_ALLOC_NO_MEMORY = 2,     /* the process heap is full */
    P2_RT_ALLOC_NOT_ALLOCATED = 3, /* no live block there */
    P2_RT_ALLOC_UNBOUND = 4        /* the pool serves no memory */
} p2_rt_alloc_status;

/* Binds the pool to [base, base + size) for `user`. P2_RT_ALLOC_NO_MEMORY. */
p2_rt_alloc_status p2_rt_gpu_bind(uint8_t *base, uint64_t size, unsigned user);
/* `user` is done; the pool empties when no user is left. */
void p2_rt_gpu_unbind(unsigned user);

/* The memory the pool serves (NULL, 0 when unbound). */
uint8_t *p2_rt_gpu_base(void);
uint64_t p2_rt_gpu_size(void);
/* Bytes in live blocks (cudaMemGetInfo). */
uint64_t p2_rt_gpu_used(void);

/* *offset = a fresh block of `size` bytes (rounded up to 64) with `flags`. */
p2_rt_alloc_status p2_rt_gpu_alloc(uint64_t size, unsigned flags, uint64_t *offset);
/* Frees the block starting at `offset`. */
p2_rt_alloc_status p2_rt_gpu_free(uint64_t offset);
/* The live block containing [offset, offset + len): its start, size (the
 * rounded size) and flags (any output may be NULL). P2_RT_ALLOC_NOT_ALLOCATED
 * when the range is not inside one live block. */
p2_rt_alloc_status p2_rt_gpu_find(uint64_t offset, uint64_t len, uint64_t *start, uint64_t *size,
                                  unsigned *flags);
/* Sets `flags` on the live block containing `offset`. */
p2_rt_alloc_status p2_rt_gpu_set_flags(uint64_t offset, unsigned flags);
/* Frees every live block whose flags include all of `flags` (cudaDeviceReset). */
void p2_rt_gpu_free_all(unsigned flags);

#ifdef __cplusplus
}
#endif

#endif /* P2_RT_ALLOC_H */
