/*
 * coll_cost.c - the collectives' cost model: its figures (one table, loaded
 * from the model's parameters) and cable sharing along the network's routes
 * (coll_share), from which each algorithm predicts its time (its `cost`).
 *
 * Depends on the rank runtime alone (rt.h: parameters and routes); the
 * algorithms and the choice (coll_select.c) use it.
 */
#include <string.h>

#include "coll.h"
#include "rt/rt.h"

/*
 * The cost model's figures. Rates come from the model's parameters as the
 * simulator hands them to the ranks (rt.h; params.def): a DMA streams at the
 * lower of a link's payload rate (lanes, GT/s, encoding, MPS and TLP
 * overhead) and the source memory's read rate (host_read_gbps,
 * gpu_read_gbps); a PIO store costs pio_store_ns per pio_store_bytes; host
 * copies and reductions and the GPU kernel cost host_memcpy_gbps,
 * host_reduce_gbps, gpu_kernel_ns and gpu_reduce_gbps, the same figures
 * coll_transport.c charges to the rank's clock for that work. The two
 * latencies are end-to-end figures of the model with the default parameters
 * (the golden tests pin them: DMA 8 B 1.896 us, PIO 8 B 1.000 us); a
 * parameter file that changes them leaves the cost model's choice slightly
 * off, never the simulated times. The initial values are params.def's
 * defaults, used until coll_cost_load runs.
 */
coll_cost_params coll_cost = {
    .dma_latency_s = 1.896e-6, /* DMA 8 B CPU-CPU one way, model (published 1.9 us) */
    .pio_latency_s = 1.000e-6, /* PIO 8 B CPU-CPU one way, model (published 1.0 us) */
    .pio_store_s = 62e-9,      /* pio_store_ns per 8-byte store */
    .pio_step_s = 230e-9,      /* coll_pio_step_ns */
    .dma_cpu_Bps = 3.657e9,    /* min(link payload 4 GB/s x 256/280, host_read_gbps 12) */
    .dma_gpu_Bps = 2.85e9,     /* gpu_read_gbps */
    .memcpy_Bps = 10e9,        /* host_memcpy_gbps */
    .reduce_cpu_Bps = 4e9,     /* host_reduce_gbps */
    .gpu_kernel_s = 5e-6,      /* gpu_kernel_ns */
    .reduce_gpu_Bps = 80e9,    /* gpu_reduce_gbps */
};

void coll_cost_load(void)
{
    const p2_rt *rt = p2_rt_get();
    if (!rt || rt->link_payload_Bps <= 0)
        return;
    double link = rt->link_payload_Bps;
    coll_cost.dma_cpu_Bps = rt->host_read_Bps < link ? rt->host_read_Bps : link;
    coll_cost.dma_gpu_Bps = rt->gpu_read_Bps < link ? rt->gpu_read_Bps : link;
    coll_cost.pio_store_s = (double)p2_ns_ps(rt->prm.pio_store_ns) * 1e-12 * 8.0 / (double)(uint64_t)rt->prm.pio_store_bytes;
    coll_cost.pio_step_s = (double)p2_ns_ps(rt->prm.coll_pio_step_ns) * 1e-12;
    coll_cost.memcpy_Bps = p2_gbps_Bps(rt->prm.host_memcpy_gbps);
    coll_cost.reduce_cpu_Bps = p2_gbps_Bps(rt->prm.host_reduce_gbps);
    coll_cost.gpu_kernel_s = (double)p2_ns_ps(rt->prm.gpu_kernel_ns) * 1e-12;
    coll_cost.reduce_gpu_Bps = p2_gbps_Bps(rt->prm.gpu_reduce_gbps);
}

/* The comm whose ranks coll_share measures: the one being planned. */
static p2_comm_t share_comm;

void coll_share_comm(p2_comm_t comm)
{
    share_comm = comm;
}

/* Walks the route from node a to node b, storing in `cables` (room for
 * `max`) every cable on the way, as node * 4 + port; returns how many, or -1
 * without a route. */
static int route_cables(const p2_rt *rt, unsigned a, unsigned b, int *cables, int max)
{
    int k = 0;
    while (a != b) {
        if (a >= P2_JOB_MAX_RANKS || b >= P2_JOB_MAX_RANKS || k >= max)
            return -1;
        unsigned port = rt->route_port[a][b];
        if (port >= 4 || rt->port_peer[a][port] == 0xff)
            return -1;
        cables[k++] = (int)(a * 4u + port);
        a = rt->port_peer[a][port];
    }
    return k;
}

#define NCABLES (P2_JOB_MAX_RANKS * 4)

/* Without routes: ranks in order along one ring. */
static double ring_share(int d, int n)
{
    int dd = d % n, h = dd < n - dd ? dd : n - dd;
    return h > 1 ? (double)h : 1.0;
}

double coll_share(int d, int n, coll_pattern pat)
{
    const p2_rt *rt = p2_rt_get();
    if (!rt || !rt->route_port || !share_comm || share_comm->size != n)
        return ring_share(d, n);
    static uint16_t load[NCABLES];
    memset(load, 0, sizeof load);
    int cables[P2_JOB_MAX_RANKS];
    for (int r = 0; r < n; r++) {
        int q = pat == COLL_XOR ? r ^ d : (r + d) % n;
        if (q >= n || q == r)
            continue;
        int k = route_cables(rt, rt->rank_node[share_comm->world_rank[r]],
                             rt->rank_node[share_comm->world_rank[q]], cables, P2_JOB_MAX_RANKS);
        if (k < 0) /* no PEACH2 route between them */
            return ring_share(d, n);
        for (int i = 0; i < k; i++)
            load[cables[i]]++;
    }
    int h = 0;
    for (int c = 0; c < NCABLES; c++)
        if (load[c] > h)
            h = load[c];
    return h > 1 ? (double)h : 1.0;
}
