/*
 * p2mpi_gpu.c - GPU buffers in the MPI layer: which buffers are GPU memory
 * and which the HCA reaches directly, the CPU's GDRCopy costs, the staging
 * copies of MVAPICH2-GDR's collectives and their software costs, and the
 * GPU's copy engines (a timeline per direction) whose copies end as timed
 * events of the engine's progress loop. Depends on p2mpi_core.c and
 * p2mpi_datatype.c.
 */
#define _GNU_SOURCE
#include "p2mpi_gpu.h"

#include <stdlib.h>

/* ---- GPU buffers ----------------------------------------------------------------- */

/* A buffer in this node's GPU memory (cudaMalloc, tcaMalloc GPU): the
 * arena the model serves at the GPU window, mapped into this process. */
int pm_gpu_mem(const void *p)
{
    const uint8_t *q = p, *b = E.rt->gpu.base;
    return b && q >= b && q < b + E.rt->gpu.size;
}

/* A GPU buffer the HCA can reach as one range of bus addresses: contiguous
 * type and [buf, buf + n) inside the arena. 0 otherwise (pack via staging). */
int pm_gpu_direct(const void *buf, MPI_Datatype t, size_t n, uint64_t *bus)
{
    if (!pm_gpu_mem(buf) || !pm_type_contig(t))
        return 0;
    uint64_t off = (uint64_t)((const uint8_t *)buf - E.rt->gpu.base);
    if (n > E.rt->gpu.size - off)
        return 0;
    *bus = E.rt->gpu.bus + off;
    return 1;
}

/* The sender's CPU reading n bytes of GPU memory into an eager buffer
 * (GDRCopy, device to host): single uncached loads for the smallest
 * messages, the library's copy above (README: the 8 B / 16 B step). */
uint64_t pm_gdr_d2h_ps(size_t n)
{
    if (n == 0)
        return 0;
    if (n <= (uint64_t)E.rt->prm.mpi_gdr_small_bytes)
        return p2_ns_ps(E.rt->prm.mpi_gdr_load_ns);
    return p2_ns_ps(E.rt->prm.mpi_gdrcopy_d2h_ns) +
           (uint64_t)((double)n * 1000.0 / E.rt->prm.mpi_gdrcopy_d2h_gbps);
}

/* The receiver's CPU writing n bytes from an eager buffer into GPU memory
 * (GDRCopy, host to device: write-combined stores, posted). */
uint64_t pm_gdr_h2d_ps(size_t n)
{
    if (n == 0)
        return 0;
    if (n <= (uint64_t)E.rt->prm.mpi_gdr_small_bytes) {
        uint64_t per = (uint64_t)E.rt->prm.pio_store_bytes; /* at least 1 (params.def) */
        return (n + per - 1) / per * p2_ns_ps(E.rt->prm.pio_store_ns);
    }
    return p2_ns_ps(E.rt->prm.mpi_gdrcopy_h2d_ns) +
           (uint64_t)((double)n * 1000.0 / E.rt->prm.mpi_gdrcopy_h2d_gbps);
}

int pm_gpu_buf(const void *buf) { return buf && buf != MPI_IN_PLACE && pm_gpu_mem(buf); }

/* MVAPICH2's collectives move a GPU buffer to and from host staging with
 * synchronous copies (MPIU_Memcpy_CUDA). In MVAPICH2-GDR small ones cannot
 * be cudaMemcpy calls: three of those (6-8 us each) would exceed the
 * published 8 B allreduce at 2 ranks (5.2 us) on their own, so they are
 * taken as GDRCopy copies, the mechanism its point-to-point uses up to the
 * same limit; larger ones are cudaMemcpy, on unregistered host memory below
 * MV2_REGISTER_NAIVE_BUF and on memory MVAPICH2 registers (pinned: the CUDA
 * runtime's pinned rate) at or above it. */
static void charge_stage(size_t n, uint64_t (*gdrcopy_ps)(size_t), uint64_t call_ps,
                         double pinned_bps)
{
    if (n == 0)
        return;
    if (n <= (uint64_t)E.rt->prm.mpi_gdrcopy_bytes) {
        pm_charge(gdrcopy_ps(n));
        return;
    }
    double bps = n >= MV2_REGISTER_NAIVE_BUF ? pinned_bps
                                             : p2_gbps_Bps(E.rt->prm.cuda_pageable_gbps);
    pm_charge(call_ps + (uint64_t)((double)n * 1e12 / bps));
}

void pm_charge_stage_d2h(size_t n)
{
    charge_stage(n, pm_gdr_d2h_ps, p2_ns_ps(E.rt->prm.cuda_d2h_latency_ns),
                 p2_gbps_Bps(E.rt->prm.cuda_d2h_gbps));
}

void pm_charge_stage_h2d(size_t n)
{
    charge_stage(n, pm_gdr_h2d_ps, p2_ns_ps(E.rt->prm.cuda_h2d_latency_ns),
                 p2_gbps_Bps(E.rt->prm.cuda_h2d_gbps));
}

void pm_charge_d2d(size_t n)
{
    if (n)
        pm_charge(p2_ns_ps(E.rt->prm.cuda_d2d_latency_ns) +
                  (uint64_t)((double)n * 1e12 / p2_gbps_Bps(E.rt->prm.cuda_d2d_gbps)));
}

void pm_coll_call_cost(void) { pm_charge(p2_ns_ps(E.rt->prm.mpi_coll_call_ns)); }
void pm_coll_step_cost(void) { pm_charge(p2_ns_ps(E.rt->prm.mpi_coll_step_ns)); }

void pm_charge_reduce(size_t n)
{
    if (n)
        pm_charge((uint64_t)((double)n * 1e12 / p2_gbps_Bps(E.rt->prm.host_reduce_gbps)));
}

/* ---- The GPU's copy engines: timed events ---------------------------------------- */

static int ev_before(const pm_event *a, const pm_event *b)
{
    return a->t != b->t ? a->t < b->t : a->seq < b->seq;
}

void pm_ev_push(uint64_t t, int kind, uint64_t req, uint64_t chunk)
{
    if (E.nev == E.ev_cap) {
        size_t cap = E.ev_cap ? E.ev_cap * 2 : 64;
        pm_event *v = realloc(E.ev, cap * sizeof *v);
        if (!v)
            pm_fatal("out of memory");
        E.ev = v;
        E.ev_cap = cap;
    }
    size_t i = E.nev++;
    E.ev[i] = (pm_event){.t = t, .seq = E.ev_seq++, .kind = kind, .req = req, .chunk = chunk};
    while (i && ev_before(&E.ev[i], &E.ev[(i - 1) / 2])) {
        pm_event x = E.ev[i];
        E.ev[i] = E.ev[(i - 1) / 2];
        E.ev[(i - 1) / 2] = x;
        i = (i - 1) / 2;
    }
}

pm_event pm_ev_pop(void)
{
    pm_event top = E.ev[0];
    E.ev[0] = E.ev[--E.nev];
    for (size_t i = 0;;) {
        size_t l = 2 * i + 1, r = l + 1, m = i;
        if (l < E.nev && ev_before(&E.ev[l], &E.ev[m]))
            m = l;
        if (r < E.nev && ev_before(&E.ev[r], &E.ev[m]))
            m = r;
        if (m == i)
            break;
        pm_event x = E.ev[i];
        E.ev[i] = E.ev[m];
        E.ev[m] = x;
        i = m;
    }
    return top;
}

/* A cudaMemcpyAsync of n bytes queued on an engine at the rank's time: it
 * starts when the engine is idle and takes the CUDA runtime's copy cost. */
uint64_t pm_gpu_copy(uint64_t *free_at, uint64_t lat_ps, double bps, uint64_t n)
{
    uint64_t now = pm_now_ps(), start = *free_at > now ? *free_at : now;
    *free_at = start + lat_ps + (uint64_t)((double)n * 1e12 / bps);
    return *free_at;
}
