/*
 * cholesky.c - the data-driven tiled Cholesky factorisation on the virtual
 * cluster (workloads/cholesky/README.md): options, the layout, the matrix's
 * tiles in pinned host memory, the GPU tile cache, the transport (TCA DMA or
 * MPI over InfiniBand), the timed run of the scheduler, the check of
 * ||A - L L^T|| / ||A|| on rank 0, and the report.
 *
 *   p2run -n N -- cholesky [--nt NT] [--nb NB] [--grid PxQ] [-T tca|mpi]
 *                          [--gpu-tiles N] [-c 1|0] [--csv FILE] [--json FILE]
 *
 * Built with mpicc's MPI (the bootstrap: handle exchange, barrier, the
 * figures' reduction; and the MPI transport) and the CUDA runtime, which
 * p2run replaces by the emulated one (the kernels' numerics run on the host
 * in the frames' GPU memory, so the emulated runtime is required).
 * Depends on chol.h's units, wl_report.h, wl_options.h (p2emu), tca-api.h,
 * p2.h.
 */
#include <math.h>
#include <mpi.h>
#include <stdarg.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include <cuda_runtime_api.h>

#include "chol.h"
#include "p2.h"
#include "tca-api.h"
#include "wl_options.h"
#include "wl_report.h"

/* What a correct factorisation of the test matrix leaves: about 1e-16. */
#define CHOL_RESIDUAL_MAX 1e-12
#define CHOL_NT_MAX 255 /* tile ids are MPI tags: at most 32767 */

typedef struct opts {
    int nt, nb, gpu_tiles, check, p, q;
    const char *grid, *transport, *csv, *json;
} opts;

enum { OPT_NT, OPT_NB, OPT_GRID, OPT_T, OPT_GPU, OPT_C, OPT_CSV, OPT_JSON, OPT_COUNT };

static void usage(FILE *out)
{
    fprintf(out,
            "usage: p2run -n N -- " CHOL_PROGRAM " [options]\n"
            "Data-driven tiled Cholesky (lower) of an SPD matrix of NT x NT tiles of NB,\n"
            "2D block-cyclic over a P x Q grid, tiles sent by TCA DMA or MPI.\n"
            "  --nt NT          tiles per side (default 8; at most %d)\n"
            "  --nb NB          tile side (default 256); the matrix order is NT * NB\n"
            "  --grid PxQ       process grid (default: the most square P x Q of the ranks, P <= Q)\n"
            "  -T tca|mpi       transport (default tca)\n"
            "  --gpu-tiles N    tiles each rank's GPU memory holds (at least 3; default 0:\n"
            "                   every tile the rank uses)\n"
            "  -c 1|0           check ||A - L L^T|| / ||A|| on rank 0 (default 1)\n"
            "  --csv FILE, --json FILE   also write the table as CSV / JSON\n",
            CHOL_NT_MAX);
}

static int usage_error(int rank, const char *fmt, ...) __attribute__((format(printf, 2, 3)));
static int usage_error(int rank, const char *fmt, ...)
{
    if (rank == 0) {
        va_list ap;
        va_start(ap, fmt);
        fprintf(stderr, CHOL_PROGRAM ": ");
        vfprintf(stderr, fmt, ap);
        fprintf(stderr, " (" CHOL_PROGRAM " --help for usage)\n");
        va_end(ap);
    }
    return WL_EXIT_USAGE;
}

/* 0, WL_EXIT_USAGE after a message, or -1 for --help. */
static int parse(int argc, char **argv, int rank, int size, opts *o)
{
    *o = (opts){.nt = 8, .nb = 256, .check = 1, .transport = "tca"};
    const wl_option table[OPT_COUNT] = {
        [OPT_NT] = {"--nt", WL_OPTION_COUNT, &o->nt, "NT", NULL},
        [OPT_NB] = {"--nb", WL_OPTION_COUNT, &o->nb, "NB", NULL},
        [OPT_GRID] = {"--grid", WL_OPTION_STRING, &o->grid, "PxQ", NULL},
        [OPT_T] = {"-T", WL_OPTION_STRING, &o->transport, "tca|mpi", NULL},
        [OPT_GPU] = {"--gpu-tiles", WL_OPTION_INT, &o->gpu_tiles, "N", NULL},
        [OPT_C] = {"-c", WL_OPTION_INT, &o->check, "1|0", NULL},
        [OPT_CSV] = {"--csv", WL_OPTION_STRING, &o->csv, "FILE", NULL},
        [OPT_JSON] = {"--json", WL_OPTION_STRING, &o->json, "FILE", NULL},
    };
    const wl_args args = {.syntax = WL_SYNTAX_LONG_EQUALS | WL_SYNTAX_HELP | WL_SYNTAX_NO_EMPTY,
                          .options = table, .option_count = OPT_COUNT};
    wl_args_result r;
    switch (wl_parse_args(&args, argc, argv, &r)) {
    case WL_PARSE_HELP: return -1;
    case WL_PARSE_OK: break;
    default: {
        char msg[256];
        wl_args_message(&r, msg, sizeof msg);
        return usage_error(rank, "%s", msg);
    }
    }
    if (r.next < argc)
        return usage_error(rank, "unexpected argument '%s'", argv[r.next]);
    if (o->nt > CHOL_NT_MAX)
        return usage_error(rank, "--nt: at most %d tiles per side (tile ids are MPI tags)",
                           CHOL_NT_MAX);
    if (o->nb > 4096)
        return usage_error(rank, "--nb: at most 4096");
    if (strcmp(o->transport, "tca") && strcmp(o->transport, "mpi"))
        return usage_error(rank, "-T: '%s' is neither tca nor mpi", o->transport);
    if (o->gpu_tiles > 0 && o->gpu_tiles < 3)
        return usage_error(rank, "--gpu-tiles: a GEMM needs 3 tiles in GPU memory (at least 3, "
                                 "or 0 for every tile the rank uses)");
    if (o->check != 0 && o->check != 1)
        return usage_error(rank, "-c: 1 or 0");
    if (o->grid) {
        char tail;
        if (sscanf(o->grid, "%dx%d%c", &o->p, &o->q, &tail) != 2 || o->p < 1 || o->q < 1)
            return usage_error(rank, "--grid: '%s' is not PxQ (e.g. 2x4)", o->grid);
        if (o->p * o->q != size)
            return usage_error(rank, "--grid: %s is %d ranks, the job has %d", o->grid,
                               o->p * o->q, size);
    } else {
        for (o->p = 1; (o->p + 1) * (o->p + 1) <= size; o->p++)
            ;
        while (size % o->p)
            o->p--;
        o->q = size / o->p;
    }
    if (o->check && (double)o->nt * o->nb * o->nt * o->nb > 2e9)
        return usage_error(rank, "-c 1: a matrix above order 44000 is too large to check on "
                                 "one rank (-c 0)");
    return 0;
}

static int emulated_gpu(int rank)
{
    struct cudaDeviceProp prop;
    if (cudaSetDevice(0) != cudaSuccess || cudaGetDeviceProperties(&prop, 0) != cudaSuccess ||
        !strstr(prop.name, "emulated")) {
        if (rank == 0)
            fprintf(stderr, CHOL_PROGRAM ": needs the emulated CUDA runtime (p2run --gpu "
                            "emulated): the kernels' numerics run on the host in the tiles' "
                            "GPU memory\n");
        return 0;
    }
    return 1;
}

/* The owned tiles into one buffer in tile order; rank 0 assembles L. */
static double check_residual(const chol_layout *l, const chol_cache *c)
{
    const int me = l->rank, nb2 = l->nb * l->nb, n = l->nt * l->nb;
    double *mine = malloc((size_t)l->owned[me] * nb2 * sizeof *mine + 1);
    int *counts = calloc((size_t)l->size, sizeof *counts), *displs = calloc((size_t)l->size, sizeof *displs);
    double *all = NULL, *full = NULL, res = NAN;
    for (int t = 0, k = 0; t < l->ntiles; t++)
        if (l->owner[t] == me)
            memcpy(mine + (size_t)(k++) * nb2, c->home[t], (size_t)nb2 * sizeof *mine);
    for (int r = 0, d = 0; r < l->size; r++)
        counts[r] = l->owned[r] * nb2, displs[r] = d, d += counts[r];
    if (me == 0) {
        all = malloc((size_t)l->ntiles * nb2 * sizeof *all);
        full = calloc((size_t)n * n, sizeof *full);
    }
    MPI_Gatherv(mine, counts[me], MPI_DOUBLE, all, counts, displs, MPI_DOUBLE, 0, MPI_COMM_WORLD);
    if (me == 0 && all && full) {
        int *k = calloc((size_t)l->size, sizeof *k);
        for (int t = 0; t < l->ntiles; t++) {
            int r = l->owner[t];
            const double *src = all + displs[r] + (size_t)(k[r]++) * nb2;
            for (int i = 0; i < l->nb; i++)
                memcpy(full + (size_t)(l->ti[t] * l->nb + i) * n + (size_t)l->tj[t] * l->nb,
                       src + (size_t)i * l->nb, (size_t)l->nb * sizeof *full);
        }
        free(k);
        /* Diagonal tiles hold zeros above the diagonal (chol_potrf). */
        res = chol_residual(n, full);
    }
    free(mine), free(counts), free(displs), free(all), free(full);
    return res;
}

static const wl_column columns[] = {
    {"transport", WL_COLUMN_TEXT, 9, 0},  {"ranks", WL_COLUMN_INTEGER, 5, 0},
    {"grid", WL_COLUMN_TEXT, 5, 0},       {"n", WL_COLUMN_INTEGER, 6, 0},
    {"nb", WL_COLUMN_INTEGER, 4, 0},      {"gpu_tiles", WL_COLUMN_INTEGER, 9, 0},
    {"time_us", WL_COLUMN_REAL, 12, 3},   {"gflops", WL_COLUMN_REAL, 8, 1},
    {"h2d_bytes", WL_COLUMN_INTEGER, 11, 0}, {"d2h_bytes", WL_COLUMN_INTEGER, 11, 0},
    {"net_bytes", WL_COLUMN_INTEGER, 11, 0}, {"potrf", WL_COLUMN_INTEGER, 5, 0},
    {"trsm", WL_COLUMN_INTEGER, 5, 0},    {"syrk", WL_COLUMN_INTEGER, 5, 0},
    {"gemm", WL_COLUMN_INTEGER, 6, 0},    {"residual", WL_COLUMN_TEXT, 8, 0},
};
#define NCOLS (sizeof columns / sizeof columns[0])

int main(int argc, char **argv)
{
    MPI_Init(&argc, &argv);
    int rank, size;
    MPI_Comm_rank(MPI_COMM_WORLD, &rank);
    MPI_Comm_size(MPI_COMM_WORLD, &size);
    opts o;
    int pr = parse(argc, argv, rank, size, &o);
    if (pr != 0) {
        if (pr < 0 && rank == 0)
            usage(stdout);
        MPI_Finalize();
        return pr < 0 ? WL_EXIT_OK : pr;
    }
    if (!emulated_gpu(rank)) {
        MPI_Finalize();
        return WL_EXIT_USAGE;
    }
    const int tca = !strcmp(o.transport, "tca"), n = o.nt * o.nb;
    wl_report *rep = NULL;
    char err[256];
    if (rank == 0 && !(rep = wl_report_open("cholesky", columns, NCOLS, o.csv, o.json, err,
                                            sizeof err))) {
        fprintf(stderr, CHOL_PROGRAM ": %s\n", err);
        MPI_Abort(MPI_COMM_WORLD, WL_EXIT_USAGE);
    }
    if (tca && tcaInit() != TCA_SUCCESS) {
        fprintf(stderr, CHOL_PROGRAM ": rank %d: tcaInit failed\n", rank);
        MPI_Abort(MPI_COMM_WORLD, WL_EXIT_FAILURE);
    }
    chol_layout l;
    if (chol_layout_init(&l, o.nt, o.nb, o.p, o.q, rank) != 0) {
        fprintf(stderr, CHOL_PROGRAM ": rank %d: out of memory\n", rank);
        MPI_Abort(MPI_COMM_WORLD, WL_EXIT_FAILURE);
    }
    /* Frames: every tile the rank uses (owned and received), or --gpu-tiles;
     * one on a rank with no tile (more ranks than the grid's tiles need),
     * which still registers its frames with the others. */
    int uses = l.owned[rank] + l.nland[rank];
    int frames = o.gpu_tiles > 0 && o.gpu_tiles < uses ? o.gpu_tiles : uses > 0 ? uses : 1;
    chol_cache c;
    int bad = chol_cache_init(&c, frames, l.ntiles, o.nb) != 0, any = 0;
    /* The owned tiles of A, in pinned host memory. */
    double *owned = NULL;
    const size_t tb = chol_tile_bytes(&l);
    if (!bad && cudaMallocHost((void **)&owned, tb * (size_t)l.owned[rank] + 1) != cudaSuccess) {
        fprintf(stderr, CHOL_PROGRAM ": rank %d: cudaMallocHost of its tiles failed\n", rank);
        bad = 1;
    }
    MPI_Allreduce(&bad, &any, 1, MPI_INT, MPI_MAX, MPI_COMM_WORLD);
    if (any) {
        MPI_Finalize();
        return WL_EXIT_FAILURE;
    }
    for (int t = 0, k = 0; t < l.ntiles; t++)
        if (l.owner[t] == rank) {
            c.home[t] = owned + (size_t)(k++) * o.nb * o.nb;
            chol_matrix_tile(n, o.nb, l.ti[t], l.tj[t], c.home[t]);
        }
    const chol_transport_ops *ops = tca ? &chol_tca_ops : &chol_mpi_ops;
    void *tp = tca ? chol_tca_create(&l, &c) : chol_mpi_create(&l, &c);
    if (!tp) {
        MPI_Finalize();
        return WL_EXIT_FAILURE;
    }

    MPI_Barrier(MPI_COMM_WORLD);
    double t0 = p2_wtime();
    chol_stats st;
    int rc = chol_sched_run(&l, &c, ops, tp, &st);
    double t1 = p2_wtime();
    if (rc != 0)
        MPI_Abort(MPI_COMM_WORLD, WL_EXIT_FAILURE);

    /* The figures over the ranks. */
    double tmin, tmax, mine_s[3] = {st.kernel_s, c.copy_s, st.wait_s}, max_s[3];
    MPI_Reduce(&t0, &tmin, 1, MPI_DOUBLE, MPI_MIN, 0, MPI_COMM_WORLD);
    MPI_Reduce(&t1, &tmax, 1, MPI_DOUBLE, MPI_MAX, 0, MPI_COMM_WORLD);
    MPI_Reduce(mine_s, max_s, 3, MPI_DOUBLE, MPI_MAX, 0, MPI_COMM_WORLD);
    uint64_t sent = tca ? chol_tca_sent_bytes(tp) : chol_mpi_sent_bytes(tp);
    long long mine_n[9] = {(long long)c.h2d_bytes, (long long)c.d2h_bytes, (long long)sent,
                           st.tasks[0], st.tasks[1], st.tasks[2], st.tasks[3],
                           (long long)c.evictions, (long long)c.h2d_copies};
    long long sum_n[9];
    MPI_Reduce(mine_n, sum_n, 9, MPI_LONG_LONG, MPI_SUM, 0, MPI_COMM_WORLD);
    double res = o.check ? check_residual(&l, &c) : NAN;
    int status = WL_EXIT_OK;
    if (rank == 0) {
        double time_s = tmax - tmin, flops = (double)n * n * n / 3.0;
        char grid[32], resid[32];
        snprintf(grid, sizeof grid, "%dx%d", o.p, o.q);
        if (o.check)
            snprintf(resid, sizeof resid, "%.1e", res);
        else
            snprintf(resid, sizeof resid, "-");
        wl_report_meta(rep, "matrix", "order %d, %d x %d tiles of %d, test matrix: off-diagonal "
                       "in [-0.5, 0.5), %d on the diagonal", n, o.nt, o.nt, o.nb, n);
        wl_report_meta(rep, "layout", "2D block-cyclic over a %s grid of %d ranks", grid, size);
        wl_report_meta(rep, "transport", "%s", tca ? "TCA: PEACH2 DMA GPU frame -> landing slot, "
                       "8-byte message and wake with tcaDMANotify"
                       : "MPI_Isend from the GPU frame / MPI_Irecv into the landing slot, "
                         "over the modelled IB rail");
        wl_report_meta(rep, "gpu_tiles", "%d frames on rank 0 (%s)", frames,
                       frames < uses ? "bounded: tiles swap with cudaMemcpy"
                                     : "every tile it uses");
        wl_report_meta(rep, "policy", "panel tasks first, then fewest tiles not in GPU memory, "
                       "then lowest step; LRU eviction of unpinned frames");
        wl_report_meta(rep, "kernels", "K20X model, efficiency potrf %.2f trsm %.2f syrk %.2f "
                       "gemm %.2f of gpu_dp_gflops", chol_kernel_efficiency(CHOL_POTRF),
                       chol_kernel_efficiency(CHOL_TRSM), chol_kernel_efficiency(CHOL_SYRK),
                       chol_kernel_efficiency(CHOL_GEMM));
        wl_report_meta(rep, "time", "simulated; GFlop/s = n^3/3 over it");
        wl_report_note(rep, "slowest rank: %.3f ms kernels, %.3f ms cudaMemcpy, %.3f ms waiting; "
                       "%lld evictions, %lld tiles copied in", max_s[0] * 1e3, max_s[1] * 1e3,
                       max_s[2] * 1e3, sum_n[7], sum_n[8]);
        wl_cell cells[NCOLS] = {{.text = ops->name}, {.integer = size}, {.text = grid},
                                {.integer = n}, {.integer = o.nb},
                                {.integer = frames < uses ? frames : 0},
                                {.real = time_s * WL_US_PER_S}, {.real = flops / time_s / 1e9},
                                {.integer = sum_n[0]}, {.integer = sum_n[1]},
                                {.integer = sum_n[2]}, {.integer = sum_n[3]},
                                {.integer = sum_n[4]}, {.integer = sum_n[5]},
                                {.integer = sum_n[6]}, {.text = resid}};
        wl_report_row(rep, cells);
        if (wl_report_close(rep) != 0)
            status = WL_EXIT_FAILURE;
        if (o.check && !(res <= CHOL_RESIDUAL_MAX)) {
            fprintf(stderr, CHOL_PROGRAM ": ||A - L L^T|| / ||A|| = %.3e, above %.0e: the "
                            "factorisation is wrong\n", res, CHOL_RESIDUAL_MAX);
            status = WL_EXIT_FAILURE;
        }
    }
    MPI_Bcast(&status, 1, MPI_INT, 0, MPI_COMM_WORLD);
    if (tca)
        chol_tca_destroy(tp);
    else
        chol_mpi_destroy(tp);
    chol_cache_free(&c);
    cudaFreeHost(owned);
    chol_layout_free(&l);
    MPI_Finalize();
    return status;
}
