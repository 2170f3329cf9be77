/*
 * rk_coll_timing.c - rk_coll's modes that print simulated times: the
 * board's copies (d2d), golden times of a few cases (golden), blocking calls
 * that reuse their plans (blocking).
 */
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "p2_check.h"
#include "rk_coll.h"

/* p2_memcpy_d2d: the board copies within this node (GPU to GPU, and host
 * to and from GPU), every byte checked; its refusals; the simulated time of
 * an 8-byte and a 4 KiB GPU-to-GPU copy. */
void d2d(void)
{
    size_t sizes[] = {1, 8, 4097, 1u << 20};
    const size_t max = 1u << 20;
    unsigned char *g1 = alloc(max + 64, tcaMemoryGPU), *g2 = alloc(max + 64, tcaMemoryGPU);
    unsigned char *h = alloc(max + 64, tcaMemoryCPU);
    struct { unsigned char *dst, *src; const char *what; } pairs[] = {
        {g2, g1, "gpu->gpu"}, {h, g1, "gpu->host"}, {g2, h, "host->gpu"}};
    for (size_t pi = 0; pi < 3; pi++)
        for (size_t si = 0; si < 4; si++) {
            size_t n = sizes[si], off = 3; /* unaligned on both sides */
            for (size_t i = 0; i < n; i++)
                pairs[pi].src[off + i] = (unsigned char)(i * 7 + si + pi);
            memset(pairs[pi].dst, 0, n + 2 * off);
            CHECK(p2_memcpy_d2d(pairs[pi].dst + off, pairs[pi].src + off, n));
            size_t bad = 0;
            for (size_t i = 0; i < n; i++)
                bad += pairs[pi].dst[off + i] != (unsigned char)(i * 7 + si + pi);
            bad += pairs[pi].dst[off - 1] != 0 || pairs[pi].dst[off + n] != 0;
            if (bad && failures++ < 10)
                fprintf(stderr, "rank %d: d2d %s %zu B: %zu wrong bytes\n", rank, pairs[pi].what, n, bad);
        }
    static unsigned char unregistered[64];
    tcaresult e[4] = {p2_memcpy_d2d(NULL, g1, 8), p2_memcpy_d2d(g2, unregistered, 8),
                      p2_memcpy_d2d(g2, g1, 0), p2_memcpy_d2d(g2, g1, (size_t)1 << 40)};
    tcaresult want[4] = {TCA_ERROR_INVALID_ARGUMENT, TCA_ERROR_NOT_REGISTERED, TCA_SUCCESS,
                         TCA_ERROR_NOT_REGISTERED};
    for (int i = 0; i < 4; i++)
        if (e[i] != want[i] && failures++ < 10)
            fprintf(stderr, "rank %d: d2d refusal %d: %s, want %s\n", rank, i, tcaGetErrorString(e[i]),
                    tcaGetErrorString(want[i]));
    double t0 = p2_wtime();
    CHECK(p2_memcpy_d2d(g2, g1, 8));
    double t8 = (p2_wtime() - t0) * 1e6;
    t0 = p2_wtime();
    CHECK(p2_memcpy_d2d(g2, g1, 4096));
    double t4k = (p2_wtime() - t0) * 1e6;
    if (rank == 0)
        printf("rank 0: d2d: gpu->gpu 8 B %.3f us, 4 KB %.3f us\n", t8, t4k);
    printf("rank %d: d2d: %s\n", rank, failures ? "WRONG" : "all right");
}

/* Simulated microseconds of one persistent run (after a warm-up run). */
static double timed_on(kind c, const char *a, size_t bytes, tcaMemoryKind mk)
{
    size_t n = bytes / sizeof(int);
    int *send = alloc(bytes * (size_t)size, mk), *recv = alloc(bytes * (size_t)size, mk);
    setenv(envs[c], a, 1);
    p2_request_t req;
    CHECK(init(c, send, recv, n, 0, P2_COMM_WORLD, &req));
    CHECK(p2_start(req));
    CHECK(p2_barrier(P2_COMM_WORLD));
    double t0 = p2_wtime();
    CHECK(p2_start(req));
    double t = (p2_wtime() - t0) * 1e6;
    CHECK(p2_request_free(&req));
    unsetenv(envs[c]);
    tcaFree(send, mk);
    tcaFree(recv, mk);
    return t;
}

static double timed(kind c, const char *a, size_t bytes)
{
    return timed_on(c, a, bytes, tcaMemoryCPU);
}

void golden(void)
{
    double t[4] = {timed(BARRIER, "dissemination", 0), timed(ALLREDUCE, "dissemination_pio", 8),
                   timed(ALLGATHER, "recursive_doubling", 1024), timed(BCAST, "binomial", 65536)};
    if (rank == 0)
        printf("rank 0: golden: barrier %.3f us, allreduce 8 B pio %.3f us, allgather 1 KB %.3f us, "
               "bcast 64 KB %.3f us\n", t[0], t[1], t[2], t[3]);
    choices();
    /* GPU buffers: the reduce's two paths (the kernel's time is gpu_kernel_ns
     * + bytes / gpu_reduce_gbps), an allreduce and an allgather. */
    double g[4] = {timed_on(REDUCE, "gather_gpu", 65536, tcaMemoryGPU),
                   timed_on(REDUCE, "gather", 65536, tcaMemoryGPU),
                   timed_on(ALLREDUCE, "rsag", 65536, tcaMemoryGPU),
                   timed_on(ALLGATHER, "ring", 1024, tcaMemoryGPU)};
    if (rank == 0)
        printf("rank 0: golden gpu: reduce 64 KB kernel %.3f us, reduce 64 KB cpu %.3f us, "
               "allreduce 64 KB rsag %.3f us, allgather 1 KB ring %.3f us\n", g[0], g[1], g[2], g[3]);
}

/* Blocking calls reuse the plan of an earlier call with the same arguments:
 * only the first pays the exchange. Ranks change buffers independently (even
 * ranks alternate between two, odd ones keep theirs; MPI allows it), and
 * every result is checked. Prints the first and a later 8-byte allreduce. */
void blocking_reuse(void)
{
    double *a[2] = {alloc(64, tcaMemoryCPU), alloc(64, tcaMemoryCPU)};
    double *r[2] = {alloc(64, tcaMemoryCPU), alloc(64, tcaMemoryCPU)};
    int *ga[2] = {alloc(4 * sizeof(int), tcaMemoryCPU), alloc(4 * sizeof(int), tcaMemoryCPU)};
    int *gr[2] = {alloc(4 * sizeof(int) * (size_t)size, tcaMemoryCPU),
                  alloc(4 * sizeof(int) * (size_t)size, tcaMemoryCPU)};
    double first = 0, later = 0;
    for (int it = 0; it < 6; it++) {
        int b = rank % 2 == 0 ? it % 2 : 0;
        a[b][0] = rank + it;
        CHECK(p2_barrier(P2_COMM_WORLD));
        double t0 = p2_wtime();
        CHECK(p2_allreduce(a[b], r[b], 1, TCA_DOUBLE, TCA_OP_SUM, P2_COMM_WORLD));
        double t = (p2_wtime() - t0) * 1e6;
        if (it == 0)
            first = t;
        if (it == 4)
            later = t;
        double want = (double)size * (size - 1) / 2 + (double)size * it;
        if (r[b][0] != want) {
            fprintf(stderr, "rank %d: blocking allreduce %d: %g, want %g\n", rank, it, r[b][0], want);
            failures++;
        }
        for (int i = 0; i < 4; i++)
            ga[b][i] = value(rank, (size_t)i) + it;
        CHECK(p2_allgather(ga[b], gr[b], 4, TCA_INT, P2_COMM_WORLD));
        for (int q = 0; q < size; q++)
            for (int i = 0; i < 4; i++)
                if (gr[b][q * 4 + i] != value(q, (size_t)i) + it) {
                    fprintf(stderr, "rank %d: blocking allgather %d: block %d element %d wrong\n",
                            rank, it, q, i);
                    failures++;
                }
        int root = 1 % size;
        for (int i = 0; i < 4; i++)
            ga[b][i] = rank == root ? 7 * it + i : -1;
        CHECK(p2_bcast(ga[b], 4, TCA_INT, root, P2_COMM_WORLD));
        for (int i = 0; i < 4; i++)
            if (ga[b][i] != 7 * it + i) {
                fprintf(stderr, "rank %d: blocking bcast %d: element %d wrong\n", rank, it, i);
                failures++;
            }
    }
    if (rank == 0)
        printf("rank 0: blocking: allreduce 8 B first call %.3f us, fifth %.3f us\n", first, later);
    if (!failures)
        printf("rank %d: blocking: all right\n", rank);
}
