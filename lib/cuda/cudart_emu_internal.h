/*
 * cudart_emu_internal.h - what the parts of the emulated CUDA runtime share:
 * its state (streams, events, host blocks, kernels, the launch
 * configuration), the device and the last error, the pointers' kinds and the
 * streams' timelines, all defined in the common part (cudart_emu.c). None of
 * it is exported: the version script (libcudart.map.in) exports only cuda*
 * and __cuda*. Depends on the toolkit's cuda_runtime_api.h and the rank
 * runtime (rt/rt.h).
 */
#ifndef CUDART_EMU_INTERNAL_H
#define CUDART_EMU_INTERNAL_H

#include <cuda_runtime_api.h>

#include <pthread.h>
#include <stddef.h>
#include <stdint.h>

#include "rt/rt.h"

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

typedef struct emu_state {
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
} emu_state;

extern emu_state emu;

/* The rank's runtime once bound to the GPU pool, or NULL: no device. */
p2_rt *device(void);

/* Every call returns through here: failures become the last error
 * (cudaErrorNotReady is a status, not an error, as in the real runtime). */
cudaError_t ret(cudaError_t e);

#define NEED_DEVICE()                 \
    p2_rt *rt = device();             \
    if (!rt)                          \
        return ret(cudaErrorNoDevice);

/* ---- Pointers ------------------------------------------------------------ */

int in_gpu(const p2_rt *rt, const void *p);
/* [p, p + n) in one live device allocation; *flags its block's flags. */
int device_range(const p2_rt *rt, const void *p, size_t n, unsigned *flags);
/* Under emu.lock. */
emu_host_block *host_block(const void *p, size_t n);
/* Host memory copies run at the pinned rate from: cudaMallocHost/HostAlloc,
 * cudaHostRegister, and the node's registered (tcaMalloc) host memory. */
int host_pinned(const p2_rt *rt, const void *p, size_t n);

/* ---- Time ------------------------------------------------------------------ */

/* A copy or memset of `bytes`: latency_ns + bytes / gbps (params.def's
 * cuda_* rows, in their units), in picoseconds. */
uint64_t cost_ps(double latency_ns, double bytes, double gbps);
/* Under emu.lock: the stream behind a handle (NULL for the default stream);
 * *ok = 0 for a handle that names no live stream. */
emu_stream *stream_of(cudaStream_t s, int *ok);
/* Under emu.lock: when work queued on `st` (NULL: the default stream) now may
 * start, given the rank's clock. */
uint64_t stream_ready(const emu_stream *st, uint64_t now);
void stream_set_tail(emu_stream *st, uint64_t t);
/* Queues `ps` of work on stream `s`; synchronous work also moves the rank's
 * clock to its end. cudaErrorInvalidResourceHandle for a dead stream. */
cudaError_t run_work(p2_rt *rt, cudaStream_t s, uint64_t ps, int sync);

#endif /* CUDART_EMU_INTERNAL_H */
