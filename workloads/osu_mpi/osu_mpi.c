/*
 * osu_mpi - MPI latency, bandwidth and collective latency in simulated time,
 * as the OSU micro-benchmarks measure them, for MPI over the modelled
 * InfiniBand rail (p2run preloads the virtual-time MPI layer into this
 * program; it is a plain MPI program and runs under mpirun too).
 *
 *   p2run -n 2 -- osu_mpi [-m latency|bw|bcast|allreduce|reduce|alltoall|allgather|
 *                             gather|scatter|barrier]
 *                         [-b MIN] [-e MAX] [-f FACTOR] [-n ITERS] [-w WARMUP]
 *                         [-d host|cuda] [-t int|double] [-c 1|0] [--csv FILE] [--json FILE]
 *
 *   latency    osu_latency: rank 0 sends, rank 1 echoes (MPI_Send/MPI_Recv);
 *              latency = half the round trip, averaged over the iterations
 *   bw         osu_bw: rank 0 posts a window of 64 MPI_Isend, rank 1 64
 *              MPI_Irecv, then a 4-byte acknowledgement; bandwidth = window
 *              bytes / time
 *   bcast, allreduce, reduce, alltoall, allgather, gather, scatter, barrier
 *              osu_<name>: the collective's average time over the ranks
 *              (each rank's mean per call, then the mean and max over ranks);
 *              rooted ones (bcast, reduce, gather, scatter) at rank 0
 * With -c 1 the received data is checked every iteration (pattern of the
 * sender and iteration, sums for the reductions); wrong bytes (elements for
 * the reductions) are counted in the table.
 * -t int|double: the element type of allreduce and reduce (MPI_INT32_T or
 * MPI_DOUBLE, MPI_SUM); the sizes stay in bytes, as OSU's.
 * -d cuda (OSU's "-d cuda D D"): every buffer comes from cudaMalloc, so the
 * MPI layer moves GPU buffers (its GDRCopy and GPUDirect RDMA paths, and
 * the collectives' staging). The pattern goes in and out with cudaMemcpy,
 * whose simulated time is taken out of the figures (collectives: before the
 * barrier that precedes each timed call, and after it). Needs the CUDA
 * runtime (p2run --gpu emulated; built only where the CUDA toolkit is found).
 */
#include <mpi.h>
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#ifdef OSU_HAVE_CUDA
#include <cuda_runtime_api.h>
#endif

#include "wl_options.h"
#include "wl_report.h"
#include "wl_sweep.h"
#include "wl_sweep_mpi.h"

#define PROGRAM "osu_mpi"
#define WINDOW 64

static unsigned char pat(int who, int it, size_t i) { return (unsigned char)(who * 31 + it * 7 + i * 13 + (i >> 10)); }

static void fill(unsigned char *b, size_t n, int who, int it)
{
    for (size_t i = 0; i < n; i++)
        b[i] = pat(who, it, i);
}

static int64_t wrong(const unsigned char *b, size_t n, int who, int it)
{
    int64_t w = 0;
    for (size_t i = 0; i < n; i++)
        w += b[i] != pat(who, it, i);
    return w;
}

/* Buffers on the host (malloc) or the GPU (cudaMalloc). For GPU buffers the
 * pattern is staged through `tmp` with cudaMemcpy; the simulated time those
 * copies take is added to *excluded, which the caller takes out of the
 * measurement (OSU validates outside its timed loop too). */
static int on_gpu;
static unsigned char *tmp;

static void *buf_alloc(size_t n)
{
    n = n ? n : 1;
#ifdef OSU_HAVE_CUDA
    if (on_gpu) {
        void *p = NULL;
        if (cudaMalloc(&p, n) != cudaSuccess) {
            fprintf(stderr, PROGRAM ": cudaMalloc(%zu) failed: %s\n", n,
                    cudaGetErrorString(cudaGetLastError()));
            MPI_Abort(MPI_COMM_WORLD, 1);
        }
        return p;
    }
#endif
    void *p = malloc(n);
    if (!p) {
        fprintf(stderr, PROGRAM ": out of memory (%zu bytes)\n", n);
        MPI_Abort(MPI_COMM_WORLD, 1);
    }
    return p;
}

static void buf_free(void *p)
{
#ifdef OSU_HAVE_CUDA
    if (on_gpu) {
        cudaFree(p);
        return;
    }
#endif
    free(p);
}

/* A collective's data into and out of its buffers: cudaMemcpy for GPU
 * buffers (outside the timed calls; a failure ends the job), nothing for
 * host ones (the image is the buffer). */
static void dev_copy(void *dst, const void *src, size_t n, int to_gpu)
{
#ifdef OSU_HAVE_CUDA
    if (on_gpu && n &&
        cudaMemcpy(dst, src, n, to_gpu ? cudaMemcpyHostToDevice : cudaMemcpyDeviceToHost) !=
            cudaSuccess) {
        fprintf(stderr, PROGRAM ": cudaMemcpy %s the GPU failed\n", to_gpu ? "to" : "from");
        MPI_Abort(MPI_COMM_WORLD, 1);
    }
#else
    (void)dst, (void)src, (void)n, (void)to_gpu;
#endif
}
static void to_dev(void *dev, const void *host, size_t n) { dev_copy(dev, host, n, 1); }
static void from_dev(void *host, const void *dev, size_t n) { dev_copy(host, dev, n, 0); }

static void buf_fill(unsigned char *b, size_t n, int who, int it, double *excluded)
{
    if (!on_gpu) {
        fill(b, n, who, it);
        return;
    }
#ifdef OSU_HAVE_CUDA
    double t = MPI_Wtime();
    fill(tmp, n, who, it);
    to_dev(b, tmp, n);
    *excluded += MPI_Wtime() - t;
#endif
}

static int64_t buf_wrong(const unsigned char *b, size_t n, int who, int it, double *excluded)
{
    if (!on_gpu)
        return wrong(b, n, who, it);
#ifdef OSU_HAVE_CUDA
    double t = MPI_Wtime();
    from_dev(tmp, b, n);
    *excluded += MPI_Wtime() - t;
    return wrong(tmp, n, who, it);
#else
    return 0;
#endif
}

/* ---- The sweep's callbacks (wl_sweep.h) ----------------------------------------- */

enum { C_BCAST, C_ALLREDUCE, C_ALLTOALL, C_ALLGATHER, C_BARRIER, C_REDUCE, C_GATHER, C_SCATTER };

typedef struct osu_sweep {
    int rank, size;
    int latency;     /* -m latency (else bw) */
    int coll;        /* C_*, or -1 for latency and bw */
    int dbl;         /* -t double */
    MPI_Datatype elem;
    size_t es;       /* bytes of an element of allreduce and reduce */
    int check;       /* -c */
    unsigned char *s, *r;   /* the buffers (host or GPU) */
    unsigned char *hs, *hr; /* the collectives' host images of s and r */
} osu_sweep;

static double clock_s(void) { return MPI_Wtime(); }

/* ---- latency and bw: ranks 0 and 1 -------------------------------------------- */

/* osu_latency: rank 0 sends, rank 1 echoes; osu_bw: a window of 64 messages,
 * then a 4-byte acknowledgement. The timed span covers every timed
 * iteration; the cudaMemcpy of GPU buffers' pattern goes to it->excluded. */
static int p2p_iteration(void *ctx, wl_sweep_iteration *it)
{
    osu_sweep *o = ctx;
    size_t n = (size_t)it->size->bytes;
    int peer = 1 - o->rank;
    unsigned char *s = o->s, *r = o->r;
    if (o->latency) {
        if (o->rank == 0) {
            if (o->check)
                buf_fill(s, n, 0, it->index, &it->excluded);
            MPI_Send(s, (int)n, MPI_BYTE, peer, 1, MPI_COMM_WORLD);
            MPI_Recv(r, (int)n, MPI_BYTE, peer, 1, MPI_COMM_WORLD, MPI_STATUS_IGNORE);
            if (it->check)
                it->wrong += (uint64_t)buf_wrong(r, n, 0, it->index, &it->excluded);
        } else {
            MPI_Recv(r, (int)n, MPI_BYTE, peer, 1, MPI_COMM_WORLD, MPI_STATUS_IGNORE);
            MPI_Send(r, (int)n, MPI_BYTE, peer, 1, MPI_COMM_WORLD);
        }
        return WL_SWEEP_RAN;
    }
    MPI_Request q[WINDOW];
    if (o->rank == 0) {
        if (o->check)
            buf_fill(s, n, 0, it->index, &it->excluded);
        for (int w = 0; w < WINDOW; w++)
            MPI_Isend(s, (int)n, MPI_BYTE, peer, 2, MPI_COMM_WORLD, &q[w]);
        MPI_Waitall(WINDOW, q, MPI_STATUSES_IGNORE);
        MPI_Recv(r, 4, MPI_BYTE, peer, 3, MPI_COMM_WORLD, MPI_STATUS_IGNORE);
    } else {
        for (int w = 0; w < WINDOW; w++)
            MPI_Irecv(r, (int)n, MPI_BYTE, peer, 2, MPI_COMM_WORLD, &q[w]);
        MPI_Waitall(WINDOW, q, MPI_STATUSES_IGNORE);
        /* GPU buffers: rank 1's copy-out would delay the acknowledgement
         * rank 0 times, so the last window is checked after the loop. */
        if (it->check && !on_gpu)
            it->wrong += (uint64_t)buf_wrong(r, n, 0, it->index, &it->excluded);
        MPI_Send(s, 4, MPI_BYTE, peer, 3, MPI_COMM_WORLD);
    }
    return WL_SWEEP_RAN;
}

/* bw on GPU buffers: rank 1 checks the last window now. */
static void p2p_after(void *ctx, wl_sweep_result *result)
{
    osu_sweep *o = ctx;
    const wl_sweep_size *size = &result->size;
    if (on_gpu && o->check && o->rank == 1 && !o->latency && size->iterations > 0) {
        double ignored = 0;
        result->wrong += (uint64_t)buf_wrong(o->r, (size_t)size->bytes, 0,
                                             size->warmup + size->iterations - 1, &ignored);
    }
}

/* Rank 1's wrong bytes to rank 0. */
static uint64_t p2p_sum_wrong(void *ctx, uint64_t wrong)
{
    osu_sweep *o = ctx;
    int64_t bad = (int64_t)wrong, allbad = 0;
    if (o->rank == 1)
        MPI_Send(&bad, 1, MPI_INT64_T, 0, 9, MPI_COMM_WORLD);
    else
        MPI_Recv(&allbad, 1, MPI_INT64_T, 1, 9, MPI_COMM_WORLD, MPI_STATUS_IGNORE);
    return (uint64_t)(bad + allbad);
}

/* Rank 0: latency half the round trip (bw: the time of a window), and the
 * bandwidth of the bytes it moved. */
static void p2p_row(void *ctx, const wl_sweep_result *res, wl_cell *c)
{
    osu_sweep *o = ctx;
    uint64_t n = res->size.bytes;
    int iters = res->size.iterations;
    double elapsed = res->total_s;
    double lat = o->latency ? elapsed / (2.0 * iters) : elapsed / iters;
    double bytes = o->latency ? (double)n : (double)n * WINDOW;
    c[0].integer = (int64_t)n;
    c[1].real = (o->latency ? lat : elapsed / iters) * WL_US_PER_S;
    c[2].real = bytes / lat / WL_BYTES_PER_GB;
    c[3].integer = (int64_t)res->wrong;
}

/* ---- The collectives: every rank ------------------------------------------------ */

static uint64_t mpi_sum_wrong(void *ctx, uint64_t wrong)
{
    (void)ctx;
    int64_t bad = (int64_t)wrong, allbad = 0;
    MPI_Reduce(&bad, &allbad, 1, MPI_INT64_T, MPI_SUM, 0, MPI_COMM_WORLD);
    return (uint64_t)allbad;
}

/* As OSU's collective tests: a barrier before every call and each call
 * timed on its own, so no call overlaps the next (an eager broadcast's root
 * would otherwise run ahead). The data goes in before the barrier and is
 * checked after the call, so GPU buffers' cudaMemcpy stays out of the
 * timing. */
static void coll_inputs(void *ctx, wl_sweep_iteration *iter)
{
    osu_sweep *o = ctx;
    size_t n = (size_t)iter->size->bytes, all = n * (size_t)o->size;
    int cnt = (int)(n / o->es), rank = o->rank, size = o->size, it = iter->index;
    unsigned char *s = o->s, *r = o->r, *hs = o->hs, *hr = o->hr;
    switch (o->coll) {
    case C_BCAST:
        if (rank == 0 && o->check) {
            fill(hr, n, 0, it);
            to_dev(r, hr, n);
        }
        break;
    case C_ALLREDUCE:
    case C_REDUCE:
        for (int i = 0; i < cnt; i++) {
            if (o->dbl)
                ((double *)hs)[i] = rank + it + i;
            else
                ((int32_t *)hs)[i] = rank + it + i;
        }
        to_dev(s, hs, (size_t)cnt * o->es);
        break;
    case C_ALLTOALL:
        for (int q = 0; q < size && o->check; q++)
            fill(hs + (size_t)q * n, n, rank * size + q, it);
        if (o->check)
            to_dev(s, hs, all);
        break;
    case C_ALLGATHER:
    case C_GATHER:
        if (o->check) {
            fill(hs, n, rank, it);
            to_dev(s, hs, n);
        }
        break;
    case C_SCATTER:
        for (int q = 0; q < size && rank == 0 && o->check; q++)
            fill(hs + (size_t)q * n, n, q, it);
        if (rank == 0 && o->check)
            to_dev(s, hs, all);
        break;
    }
}

static int coll_call(void *ctx, wl_sweep_iteration *iter)
{
    osu_sweep *o = ctx;
    size_t n = (size_t)iter->size->bytes;
    int cnt = (int)(n / o->es);
    unsigned char *s = o->s, *r = o->r;
    switch (o->coll) {
    case C_BCAST:
        MPI_Bcast(r, (int)n, MPI_BYTE, 0, MPI_COMM_WORLD);
        break;
    case C_ALLREDUCE:
        MPI_Allreduce(s, r, cnt, o->elem, MPI_SUM, MPI_COMM_WORLD);
        break;
    case C_REDUCE:
        MPI_Reduce(s, r, cnt, o->elem, MPI_SUM, 0, MPI_COMM_WORLD);
        break;
    case C_ALLTOALL:
        MPI_Alltoall(s, (int)n, MPI_BYTE, r, (int)n, MPI_BYTE, MPI_COMM_WORLD);
        break;
    case C_ALLGATHER:
        MPI_Allgather(s, (int)n, MPI_BYTE, r, (int)n, MPI_BYTE, MPI_COMM_WORLD);
        break;
    case C_GATHER:
        MPI_Gather(s, (int)n, MPI_BYTE, r, (int)n, MPI_BYTE, 0, MPI_COMM_WORLD);
        break;
    case C_SCATTER:
        MPI_Scatter(s, (int)n, MPI_BYTE, r, (int)n, MPI_BYTE, 0, MPI_COMM_WORLD);
        break;
    case C_BARRIER:
        MPI_Barrier(MPI_COMM_WORLD);
        break;
    }
    return WL_SWEEP_RAN;
}

/* The timed iterations' outputs: pattern of the sender and iteration, sums
 * for the reductions. */
static void coll_check(void *ctx, wl_sweep_iteration *iter)
{
    osu_sweep *o = ctx;
    if (!iter->check)
        return;
    size_t n = (size_t)iter->size->bytes, all = n * (size_t)o->size;
    int cnt = (int)(n / o->es), rank = o->rank, size = o->size, it = iter->index;
    unsigned char *r = o->r, *hr = o->hr;
    int64_t bad = 0;
    switch (o->coll) {
    case C_BCAST:
        from_dev(hr, r, n);
        bad += wrong(hr, n, 0, it);
        break;
    case C_ALLREDUCE:
    case C_REDUCE:
        if (o->coll == C_REDUCE && rank != 0)
            break;
        from_dev(hr, r, (size_t)cnt * o->es);
        for (int i = 0; i < cnt; i++) {
            double want = (double)size * (it + i) + size * (size - 1) / 2;
            bad += o->dbl ? ((double *)hr)[i] != want : ((int32_t *)hr)[i] != (int32_t)want;
        }
        break;
    case C_ALLTOALL:
        from_dev(hr, r, all);
        for (int q = 0; q < size; q++)
            bad += wrong(hr + (size_t)q * n, n, q * size + rank, it);
        break;
    case C_ALLGATHER:
    case C_GATHER:
        if (o->coll == C_GATHER && rank != 0)
            break;
        from_dev(hr, r, all);
        for (int q = 0; q < size; q++)
            bad += wrong(hr + (size_t)q * n, n, q, it);
        break;
    case C_SCATTER:
        from_dev(hr, r, n);
        bad += wrong(hr, n, rank, it);
        break;
    }
    iter->wrong += (uint64_t)bad;
}

/* Rank 0: the ranks' mean and the slowest rank's mean time per call. */
static void coll_row(void *ctx, const wl_sweep_result *res, wl_cell *c)
{
    (void)ctx;
    c[0].integer = (int64_t)res->size.bytes;
    c[1].real = res->avg_s * WL_US_PER_S;
    c[2].real = res->max_s * WL_US_PER_S;
    c[3].integer = (int64_t)res->wrong;
}

int main(int argc, char **argv)
{
    MPI_Init(&argc, &argv);
    int rank, size;
    MPI_Comm_rank(MPI_COMM_WORLD, &rank);
    MPI_Comm_size(MPI_COMM_WORLD, &size);
    const char *mode = "latency", *dev = "host", *type = "int";
    wl_option own[] = {{"-m", WL_OPTION_STRING, &mode, "MODE",
                        "latency, bw, bcast, allreduce, reduce, alltoall, allgather, gather, "
                        "scatter or barrier"},
                       {"-d", WL_OPTION_STRING, &dev, "host|cuda",
                        "buffers in host memory or GPU memory (cudaMalloc)"},
                       {"-t", WL_OPTION_STRING, &type, "int|double",
                        "element type of allreduce and reduce (MPI_INT32_T or MPI_DOUBLE)"}};
    wl_program prog = {PROGRAM, "MPI point-to-point and collectives over the modelled IB rail",
                       own, 3};
    wl_common_options o;
    wl_options_defaults(&o);
    char err[256];
    wl_parse_status ps = wl_parse(&prog, argc, argv, &o, err, sizeof err);
    if (ps != WL_PARSE_OK) {
        if (rank == 0) {
            if (ps == WL_PARSE_ERROR)
                wl_usage_error(&prog, err);
            else
                wl_usage(&prog, stdout);
        }
        MPI_Finalize();
        return ps == WL_PARSE_ERROR ? WL_EXIT_USAGE : WL_EXIT_OK;
    }
    int p2p = !strcmp(mode, "latency") || !strcmp(mode, "bw");
    static const char *const colls[] = {"bcast",   "allreduce", "alltoall", "allgather",
                                        "barrier", "reduce",    "gather",   "scatter"};
    int coll = -1;
    for (int i = 0; i < 8; i++)
        if (!strcmp(mode, colls[i]))
            coll = i;
    if (!p2p && coll < 0) {
        if (rank == 0)
            wl_usage_error(&prog, "-m: unknown mode");
        MPI_Finalize();
        return WL_EXIT_USAGE;
    }
    if (strcmp(dev, "host") && strcmp(dev, "cuda")) {
        if (rank == 0)
            wl_usage_error(&prog, "-d: neither host nor cuda");
        MPI_Finalize();
        return WL_EXIT_USAGE;
    }
    if (strcmp(type, "int") && strcmp(type, "double")) {
        if (rank == 0)
            wl_usage_error(&prog, "-t: neither int nor double");
        MPI_Finalize();
        return WL_EXIT_USAGE;
    }
    int dbl = !strcmp(type, "double");
    MPI_Datatype elem = dbl ? MPI_DOUBLE : MPI_INT32_T;
    size_t es = dbl ? sizeof(double) : sizeof(int32_t);
    on_gpu = !strcmp(dev, "cuda");
#ifndef OSU_HAVE_CUDA
    if (on_gpu) {
        if (rank == 0)
            wl_usage_error(&prog, "-d cuda: this osu_mpi was built without the CUDA toolkit");
        MPI_Finalize();
        return WL_EXIT_USAGE;
    }
#endif
    if (p2p && size < 2) {
        if (rank == 0)
            wl_usage_error(&prog, "-m latency and bw need 2 ranks");
        MPI_Finalize();
        return WL_EXIT_USAGE;
    }
    if (coll == C_BARRIER) /* one row */
        o.min_bytes = o.max_bytes = 0;
    int typed = coll == C_ALLREDUCE || coll == C_REDUCE;
    if (typed && o.min_bytes < es)
        o.min_bytes = es;
    static const wl_column lat_cols[] = {{"bytes", WL_COLUMN_INTEGER, 10, 0},
                                         {"latency_us", WL_COLUMN_REAL, 12, 3},
                                         {"bandwidth_GBps", WL_COLUMN_REAL, 14, 3},
                                         {"wrong", WL_COLUMN_INTEGER, 6, 0}};
    static const wl_column coll_cols[] = {{"bytes", WL_COLUMN_INTEGER, 10, 0},
                                          {"avg_us", WL_COLUMN_REAL, 12, 3},
                                          {"max_us", WL_COLUMN_REAL, 12, 3},
                                          {"wrong", WL_COLUMN_INTEGER, 6, 0}};
    wl_report *rep = NULL;
    if (rank == 0) {
        char title[64];
        snprintf(title, sizeof title, "osu_mpi %s", mode);
        rep = wl_report_open(title, p2p ? lat_cols : coll_cols, 4, o.csv_path, o.json_path, err,
                             sizeof err);
        if (!rep) {
            wl_usage_error(&prog, err);
            MPI_Abort(MPI_COMM_WORLD, WL_EXIT_USAGE);
        }
        wl_report_meta(rep, "ranks", "%d", size);
        wl_report_meta(rep, "network", "MPI (virtual-time layer) over the modelled dual-rail IB QDR");
        wl_report_meta(rep, "time", "simulated");
        wl_report_meta(rep, "buffers", "%s", on_gpu ? "GPU (cudaMalloc), D D" : "host (malloc)");
        if (typed)
            wl_report_meta(rep, "type", "%s", dbl ? "MPI_DOUBLE" : "MPI_INT32_T");
    }
    size_t maxb = (size_t)o.max_bytes;
    size_t bufsz = coll == C_ALLTOALL || coll == C_ALLGATHER || coll == C_GATHER ||
                           coll == C_SCATTER
                       ? maxb * (size_t)size
                       : maxb;
    unsigned char *s = buf_alloc(bufsz), *r = buf_alloc(bufsz);
    /* the collectives' host images of s and r (the buffers themselves on the host) */
    unsigned char *hs = s, *hr = r;
    if (on_gpu) {
        tmp = malloc(bufsz ? bufsz : 1);
        hs = malloc(bufsz ? bufsz : 1);
        hr = malloc(bufsz ? bufsz : 1);
        if (!tmp || !hs || !hr) {
            fprintf(stderr, PROGRAM ": out of memory (%zu bytes)\n", bufsz);
            MPI_Abort(MPI_COMM_WORLD, 1);
        }
    }
    /* Sizes o.min_bytes, times o.factor, up to o.max_bytes. latency and bw:
     * ranks 0 and 1 alone, each timing its timed iterations as one span;
     * the collectives: every rank times each call from a barrier, OSU's
     * way (each rank's mean; the ranks' mean and the slowest). */
    osu_sweep ctx = {.rank = rank, .size = size, .latency = !strcmp(mode, "latency"),
                     .coll = coll, .dbl = dbl, .elem = elem, .es = es, .check = o.check,
                     .s = s, .r = r, .hs = hs, .hr = hr};
    wl_sweep_config config = {.min_bytes = o.min_bytes, .max_bytes = o.max_bytes,
                              .factor = o.factor, .iterations = o.iterations,
                              .warmup = o.warmup, .timer = 1, .check = o.check};
    uint64_t total_wrong = 0;
    if (p2p && rank < 2) {
        const wl_sweep_transport transport = {.clock = clock_s, .sum_wrong = p2p_sum_wrong};
        const wl_sweep_ops ops = {.run = p2p_iteration, .after = p2p_after, .row = p2p_row};
        config.timing = WL_SWEEP_TIME_SPAN;
        config.across = WL_SWEEP_ACROSS_NONE;
        wl_sweep_run(&config, &transport, &ops, &ctx, rep, &total_wrong);
    } else if (coll >= 0) {
        const wl_sweep_transport transport = {clock_s, wl_sweep_mpi_barrier, wl_sweep_mpi_reduce,
                                                  mpi_sum_wrong};
        const wl_sweep_ops ops = {.prepare = coll_inputs, .run = coll_call, .check = coll_check,
                                  .row = coll_row};
        config.timing = WL_SWEEP_TIME_EACH;
        config.across = WL_SWEEP_ACROSS_MEAN_MAX;
        config.ranks = size;
        wl_sweep_run(&config, &transport, &ops, &ctx, rep, &total_wrong);
    }
    buf_free(s);
    buf_free(r);
    free(tmp);
    if (on_gpu) {
        free(hs);
        free(hr);
    }
    if (rank == 0 && wl_report_close(rep) != 0)
        total_wrong++;
    MPI_Finalize();
    return total_wrong ? WL_EXIT_FAILURE : WL_EXIT_OK;
}
