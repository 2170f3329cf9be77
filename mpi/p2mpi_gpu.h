/*
 * p2mpi_gpu.h - what the GPU unit (p2mpi_gpu.c) offers the units above it:
 * GPU buffers and the costs of reaching them, MVAPICH2-GDR's staging in
 * collectives, and the GPU's copy engines as timed events.
 */
#ifndef P2MPI_GPU_H
#define P2MPI_GPU_H

#include "p2mpi_datatype.h"

#pragma GCC visibility push(hidden)

/* Whether p lies in this node's GPU memory (cudaMalloc, tcaMalloc GPU);
 * pm_gpu_buf: the same for a buffer argument (NULL and MPI_IN_PLACE are not). */
int pm_gpu_mem(const void *p);
int pm_gpu_buf(const void *buf);
/* A GPU buffer the HCA reaches as one range of bus addresses (*bus). */
int pm_gpu_direct(const void *buf, MPI_Datatype t, size_t n, uint64_t *bus);
/* GDRCopy: the CPU reading n bytes of GPU memory, and writing them. */
uint64_t pm_gdr_d2h_ps(size_t n);
uint64_t pm_gdr_h2d_ps(size_t n);
/* A synchronous staging copy of n bytes between a GPU buffer and host
 * memory, as MVAPICH2-GDR's collectives make them (README: GPU buffers in
 * collectives): GDRCopy up to mpi_gdrcopy_bytes, cudaMemcpy above. */
void pm_charge_stage_d2h(size_t n);
void pm_charge_stage_h2d(size_t n);
/* A cudaMemcpy within the GPU (the CUDA runtime's device-to-device cost). */
void pm_charge_d2d(size_t n);
/* Collective costs (params.def mpi_coll_*): MVAPICH2's software per
 * collective call, and per blocking point-to-point step inside one. */
void pm_coll_call_cost(void);
void pm_coll_step_cost(void);
/* A local reduction of n bytes on the host (host_reduce_gbps): MVAPICH2
 * reduces GPU-buffer collectives' data in host staging, on the CPU. */
void pm_charge_reduce(size_t n);
/* MVAPICH2-GDR 2.x defaults (mv2 cuda parameters): staging buffers of this
 * size or more are registered (rdma_cuda_register_naive_buf); GPU
 * allgathers stage through host memory up to this block size and run on the
 * device buffers above it (rdma_cuda_allgather_naive_limit). */
#define MV2_REGISTER_NAIVE_BUF 524288u
#define MV2_ALLGATHER_NAIVE_LIMIT 1048576u
/* rdma_cuda_scatter_naive_limit (staged up to this many bytes per rank
 * times the communicator's size) and rdma_cuda_gather_naive_limit (staged
 * up to this many bytes divided by the size) */
#define MV2_SCATTER_NAIVE_LIMIT 2048u
#define MV2_GATHER_NAIVE_LIMIT 32768u

/* A copy on the GPU's copy engine finishing at `t` (a timed event). */
enum { EV_D2H = 1, EV_H2D = 2 };
typedef struct pm_event {
    uint64_t t, seq;
    int kind;
    uint64_t req, chunk;
} pm_event;
/* The timed events (E.ev, a heap by time): one more, and the earliest out. */
void pm_ev_push(uint64_t t, int kind, uint64_t req, uint64_t chunk);
pm_event pm_ev_pop(void);
/* A cudaMemcpyAsync of n bytes on the copy engine whose timeline is
 * *free_at: when it ends. */
uint64_t pm_gpu_copy(uint64_t *free_at, uint64_t lat_ps, double bps, uint64_t n);

#pragma GCC visibility pop

#endif /* P2MPI_GPU_H */
