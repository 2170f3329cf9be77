/*
 * halo_loop18 - Livermore loop 18 (the 2-D explicit hydrodynamics fragment)
 * on an N x N grid split by rows over the ranks, in GPU memory: each step
 * exchanges one boundary row (zr and zz) with the rank above and the rank
 * below, then computes the loop's three kernels. Over TCA DMA or MPI (GPU
 * buffers), in simulated time, the result checked bit for bit against a
 * single-process computation of the same steps.
 *
 *   p2run -n P [--map FILE] -- halo_loop18 [-T tca,mpi,hybrid] [-b N] [-e N] [-f F]
 *       [-n STEPS] [-w WARMUP] [-c 1|0] [--csv FILE] [--json FILE]
 *
 * -b/-e/-f give the grid edge N (points; N, N*F, ... up to -e). Depends on
 * halo_common.h, halo_xchg.h, wl_gpu.h, wl_tca.h, wl_options.h, MPI.
 *
 * The loop (C form of the Livermore kernels, t = 0.0037, s = 0.0041), for
 * k = 1 .. kn-1, j = 1 .. jn-1 with kn = jn = N-1, each loop over all points
 * before the next:
 *   za[k][j] = (zp[k+1][j-1]+zq[k+1][j-1]-zp[k][j-1]-zq[k][j-1])
 *              * (zr[k][j]+zr[k][j-1]) / (zm[k][j-1]+zm[k+1][j-1]);
 *   zb[k][j] = (zp[k][j-1]+zq[k][j-1]-zp[k][j]-zq[k][j])
 *              * (zr[k][j]+zr[k-1][j]) / (zm[k][j]+zm[k][j-1]);
 *   zu[k][j] += s*(za[k][j]*(zz[k][j]-zz[k][j+1]) - za[k][j-1]*(zz[k][j]-zz[k][j-1])
 *                - zb[k][j]*(zz[k][j]-zz[k-1][j]) + zb[k+1][j]*(zz[k][j]-zz[k+1][j]));
 *   zv[k][j] += (the same with zr for zz);
 *   zr[k][j] += t*zu[k][j];  zz[k][j] += t*zv[k][j];
 * Rows k-1 and k+1 enter through zr, zz (updated every step: the exchanged
 * row), zp, zq, zm (constant: each rank holds its halo rows from the start)
 * and zb[k+1] (recomputed for the row below from the exchanged zr, so one
 * exchange per step suffices).
 */
#include <mpi.h>
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "halo_common.h"
#include "p2.h"
#include "wl_gpu.h"
#include "wl_options.h"
#include "wl_tca.h"

#define PROGRAM "halo_loop18"
#define L18_T 0.0037
#define L18_S 0.0041

/* The K20X cost of the three kernels per grid point (wl_gpu.h), counted from
 * the loop: each array read or written once from device memory (neighbours
 * come from cache), 8-byte doubles, a division counted as one flop.
 *  1 za, zb: reads zp zq zr zm, writes za zb: 6 x 8 = 48 B; 7 + 7 flops.
 *  2 zu, zv: reads za zb zz zr zu zv, writes zu zv: 8 x 8 = 64 B; 2 x 13 flops
 *    (4 differences, 4 products, 3 sums, x s, +=).
 *  3 zr, zz: reads zr zu zz zv, writes zr zz: 6 x 8 = 48 B; 2 x 2 flops.
 * 160 B and 44 flops a point: memory bound on a K20X. */
static const double k_bytes[3] = {48, 64, 48}, k_flops[3] = {14, 26, 4};

enum { F_ZP, F_ZQ, F_ZM, F_ZA, F_ZB, F_ZU, F_ZV, F_ZR, F_ZZ, NFIELDS };

/* Row pointers of every field for global rows base .. base + rows - 1. */
typedef struct l18_view {
    int base;
    double **row[NFIELDS];
} l18_view;

#define Z(f, k, j) (v->row[f][(k) - v->base][j])

/* The field's value before the first step at global (k, j). zm lies in
 * [1, 2), so no division by zero. */
static double initial(int f, int k, int j)
{
    uint32_t h = (uint32_t)k * 2654435761u ^ (uint32_t)j * 40503u ^ (uint32_t)(f + 1) * 97u;
    h ^= h >> 13;
    h *= 0x5bd1e995u;
    h ^= h >> 15;
    double x = (double)(h % 1000u) / 1000.0;
    return f == F_ZM ? 1.0 + x : x;
}

static inline double zb_at(const l18_view *v, int k, int j)
{
    return (Z(F_ZP, k, j - 1) + Z(F_ZQ, k, j - 1) - Z(F_ZP, k, j) - Z(F_ZQ, k, j)) *
           (Z(F_ZR, k, j) + Z(F_ZR, k - 1, j)) / (Z(F_ZM, k, j) + Z(F_ZM, k, j - 1));
}

/* One step over rows lo .. hi-1 of the grid whose rows 1 .. kn-1 are
 * updated; rows lo-1 and hi are the halo. zb of row hi is recomputed when
 * it is an updated row of the grid (another rank's, or outside a window). */
static void l18_step(const l18_view *v, int lo, int hi, int kn, int jn)
{
    for (int k = lo; k < hi; k++)
        for (int j = 1; j < jn; j++) {
            Z(F_ZA, k, j) = (Z(F_ZP, k + 1, j - 1) + Z(F_ZQ, k + 1, j - 1) - Z(F_ZP, k, j - 1) -
                             Z(F_ZQ, k, j - 1)) *
                            (Z(F_ZR, k, j) + Z(F_ZR, k, j - 1)) /
                            (Z(F_ZM, k, j - 1) + Z(F_ZM, k + 1, j - 1));
            Z(F_ZB, k, j) = zb_at(v, k, j);
        }
    if (hi < kn)
        for (int j = 1; j < jn; j++)
            Z(F_ZB, hi, j) = zb_at(v, hi, j);
    for (int k = lo; k < hi; k++)
        for (int j = 1; j < jn; j++) {
            Z(F_ZU, k, j) += L18_S * (Z(F_ZA, k, j) * (Z(F_ZZ, k, j) - Z(F_ZZ, k, j + 1)) -
                                      Z(F_ZA, k, j - 1) * (Z(F_ZZ, k, j) - Z(F_ZZ, k, j - 1)) -
                                      Z(F_ZB, k, j) * (Z(F_ZZ, k, j) - Z(F_ZZ, k - 1, j)) +
                                      Z(F_ZB, k + 1, j) * (Z(F_ZZ, k, j) - Z(F_ZZ, k + 1, j)));
            Z(F_ZV, k, j) += L18_S * (Z(F_ZA, k, j) * (Z(F_ZR, k, j) - Z(F_ZR, k, j + 1)) -
                                      Z(F_ZA, k, j - 1) * (Z(F_ZR, k, j) - Z(F_ZR, k, j - 1)) -
                                      Z(F_ZB, k, j) * (Z(F_ZR, k, j) - Z(F_ZR, k - 1, j)) +
                                      Z(F_ZB, k + 1, j) * (Z(F_ZR, k, j) - Z(F_ZR, k + 1, j)));
        }
    for (int k = lo; k < hi; k++)
        for (int j = 1; j < jn; j++) {
            Z(F_ZR, k, j) = Z(F_ZR, k, j) + L18_T * Z(F_ZU, k, j);
            Z(F_ZZ, k, j) = Z(F_ZZ, k, j) + L18_T * Z(F_ZV, k, j);
        }
}

/* ---- One rank's part ------------------------------------------------------------ */

enum { UP = 0, DOWN = 1 }; /* link ids: the rank above (k smaller), the rank below */

typedef struct l18_rank {
    int n, lo, hi, rows;       /* grid edge; owned rows lo .. hi-1; rows = hi - lo */
    double *data;              /* one GPU allocation: fields, state rows, halos */
    size_t data_bytes;
    tcaHandle handle;
    double *state;             /* (rows + 2) x 2n: row i = zr | zz of global row lo-1+i */
    double *halo;              /* [phase][side] x 2n */
    double **ptrs;             /* row pointers of both views */
    l18_view view[HX_PHASES];
    hx_plan *plan;
} l18_rank;

static double *halo_row(l18_rank *r, int phase, int side)
{
    return r->halo + ((size_t)phase * 2 + (size_t)side) * 2 * (size_t)r->n;
}

/* The rank's rows: interior rows 1 .. n-2 split as evenly as can be. */
static void split_rows(int n, int rank, int ranks, int *lo, int *hi)
{
    long interior = n - 2;
    *lo = 1 + (int)(interior * rank / ranks);
    *hi = 1 + (int)(interior * (rank + 1) / ranks);
}

static int l18_alloc(l18_rank *r, int n, int rank, int ranks)
{
    memset(r, 0, sizeof *r);
    r->n = n;
    split_rows(n, rank, ranks, &r->lo, &r->hi);
    r->rows = r->hi - r->lo;
    size_t rows = (size_t)r->rows + 2, cols = (size_t)n;
    size_t doubles = 7 * rows * cols + rows * 2 * cols + HX_PHASES * 2 * 2 * cols;
    r->data_bytes = doubles * sizeof(double);
    WL_TCA(tcaMalloc((void **)&r->data, r->data_bytes, tcaMemoryGPU));
    WL_TCA(tcaCreateHandle(&r->handle, r->data, r->data_bytes, tcaMemoryGPU));
    r->state = r->data + 7 * rows * cols;
    r->halo = r->state + rows * 2 * cols;
    r->ptrs = malloc(sizeof(double *) * HX_PHASES * NFIELDS * rows);
    if (!r->ptrs)
        return -1;
    for (int ph = 0; ph < HX_PHASES; ph++) {
        l18_view *v = &r->view[ph];
        v->base = r->lo - 1;
        for (int f = 0; f < NFIELDS; f++) {
            double **p = r->ptrs + ((size_t)ph * NFIELDS + (size_t)f) * rows;
            v->row[f] = p;
            for (size_t i = 0; i < rows; i++) {
                if (f < F_ZR)
                    p[i] = r->data + ((size_t)f * rows + i) * cols;
                else
                    p[i] = r->state + i * 2 * cols + (f == F_ZZ ? cols : 0);
            }
            if (f >= F_ZR) { /* the halo rows of this phase */
                size_t off = f == F_ZZ ? cols : 0;
                p[0] = halo_row(r, ph, UP) + off;
                p[rows - 1] = halo_row(r, ph, DOWN) + off;
            }
        }
    }
    return 0;
}

/* Every value as before the first step (the halos of both phases too). */
static void l18_init(l18_rank *r)
{
    for (int f = 0; f < NFIELDS; f++)
        for (int i = 0; i < r->rows + 2; i++)
            for (int j = 0; j < r->n; j++)
                r->view[0].row[f][i][j] = initial(f, r->lo - 1 + i, j);
    /* Phase 1's views differ only in the halo rows of zr and zz. */
    for (int f = F_ZR; f <= F_ZZ; f++)
        for (int i = 0; i < r->rows + 2; i += r->rows + 1)
            for (int j = 0; j < r->n; j++)
                r->view[1].row[f][i][j] = initial(f, r->lo - 1 + i, j);
}

static void l18_free(l18_rank *r)
{
    hx_plan_free(r->plan);
    free(r->ptrs);
    WL_TCA(tcaDestroyHandle(&r->handle));
    WL_TCA(tcaFree(r->data, tcaMemoryGPU));
}

static size_t offset_of(const l18_rank *r, const double *p)
{
    return (size_t)(p - r->data) * sizeof(double);
}

/* The links: one row of zr | zz each way, received into the phase's halo. */
static hx_plan *l18_plan(l18_rank *r, int rank, int ranks, halo_mode mode, char *error,
                         size_t error_size)
{
    hx_link links[2];
    int count = 0;
    size_t row_bytes = 2 * (size_t)r->n * sizeof(double);
    for (int side = UP; side <= DOWN; side++) {
        int peer = side == UP ? rank - 1 : rank + 1;
        if (peer < 0 || peer >= ranks)
            continue;
        hx_link *l = &links[count++];
        memset(l, 0, sizeof *l);
        l->peer = peer;
        l->id = side;
        l->peer_id = side == UP ? DOWN : UP;
        l->transport = halo_link_transport(mode, peer);
        const double *first = r->state + (side == UP ? 1 : (size_t)r->rows) * 2 * (size_t)r->n;
        for (int ph = 0; ph < HX_PHASES; ph++) {
            l->send[ph] = (hx_region){offset_of(r, first), row_bytes, 1, row_bytes};
            l->recv[ph] = (hx_region){offset_of(r, halo_row(r, ph, side)), row_bytes, 1,
                                      row_bytes};
        }
    }
    return hx_plan_create(links, count, r->data, &r->handle, 0, error, error_size);
}

static void l18_exchange(void *ctx, int phase)
{
    l18_rank *r = ctx;
    hx_exchange(r->plan, phase);
}

static void l18_compute(void *ctx, int phase)
{
    l18_rank *r = ctx;
    int kn = r->n - 1;
    l18_step(&r->view[phase], r->lo, r->hi, kn, kn);
    double points = (double)r->rows * (r->n - 2);
    double first = points + (r->hi < kn ? r->n - 2 : 0); /* zb of the row below too */
    wl_gpu_kernel(k_bytes[0] * first, k_flops[0] * first);
    wl_gpu_kernel(k_bytes[1] * points, k_flops[1] * points);
    wl_gpu_kernel(k_bytes[2] * points, k_flops[2] * points);
}

/* ---- The check: the same steps in one process ------------------------------------ */

/* Runs `steps` steps of the whole grid, restricted to the rows the rank's
 * result depends on (each step reaches one row further: rows lo - steps - 1
 * .. hi + steps, within the grid), and counts the rank's zr, zz, zu, zv
 * values that differ in any bit. */
static uint64_t l18_check(const l18_rank *r, int steps)
{
    int kn = r->n - 1, margin = steps + 1;
    int wlo = r->lo - margin < 1 ? 1 : r->lo - margin;
    int whi = r->hi + margin > kn ? kn : r->hi + margin;
    size_t rows = (size_t)(whi - wlo) + 2, cols = (size_t)r->n;
    double *mem = malloc(sizeof(double) * NFIELDS * rows * cols);
    double **ptrs = malloc(sizeof(double *) * NFIELDS * rows);
    if (!mem || !ptrs) {
        fprintf(stderr, "%s: out of memory for the check\n", PROGRAM);
        exit(WL_EXIT_FAILURE);
    }
    l18_view v = {.base = wlo - 1};
    for (int f = 0; f < NFIELDS; f++) {
        v.row[f] = ptrs + (size_t)f * rows;
        for (size_t i = 0; i < rows; i++) {
            v.row[f][i] = mem + ((size_t)f * rows + i) * cols;
            for (size_t j = 0; j < cols; j++)
                v.row[f][i][j] = initial(f, wlo - 1 + (int)i, (int)j);
        }
    }
    for (int s = 0; s < steps; s++)
        l18_step(&v, wlo, whi, kn, kn);
    static const int state[] = {F_ZR, F_ZZ, F_ZU, F_ZV};
    uint64_t wrong = 0;
    for (int k = r->lo; k < r->hi; k++)
        for (size_t f = 0; f < sizeof state / sizeof state[0]; f++)
            for (int j = 0; j < r->n; j++) {
                double want = v.row[state[f]][k - v.base][j];
                double got = r->view[0].row[state[f]][k - r->view[0].base][j];
                wrong += memcmp(&want, &got, sizeof want) != 0;
            }
    free(ptrs);
    free(mem);
    return wrong;
}

/* ---- main ------------------------------------------------------------------------ */

static int usage_failure(const wl_program *program, const char *message)
{
    /* Every rank finds the same fault; rank 0 (or a process p2run did not
     * start) names it and gives the job its status. */
    if (p2_rank() > 0)
        return WL_EXIT_OK;
    wl_usage_error(program, message);
    return WL_EXIT_USAGE;
}

int main(int argc, char **argv)
{
    wl_set_program_name(PROGRAM);
    wl_common_options o;
    wl_options_defaults(&o);
    o.min_bytes = 256;
    o.max_bytes = 1024;
    const char *mode_text = "tca,mpi";
    const wl_option own[] = {
        {"-T", WL_OPTION_STRING, &mode_text, "LIST",
         "transports, in order: tca, mpi, hybrid (TCA inside a PEACH2 sub-cluster, MPI "
         "between)"},
    };
    const wl_program program = {PROGRAM,
                                "Livermore loop 18 split by rows, halo rows over TCA or MPI "
                                "(-b/-e/-f: the grid edge N in points)",
                                own, sizeof own / sizeof own[0]};
    char error[256];
    switch (wl_parse(&program, argc, argv, &o, error, sizeof error)) {
    case WL_PARSE_HELP: wl_usage(&program, stdout); return WL_EXIT_OK;
    case WL_PARSE_ERROR: return usage_failure(&program, error);
    case WL_PARSE_OK: break;
    }
    halo_mode modes[HALO_MODES];
    int nmodes = 0;
    if (halo_parse_modes(mode_text, modes, &nmodes, error, sizeof error) != 0)
        return usage_failure(&program, error);
    int ranks = p2_size();
    if (ranks < 1)
        return usage_failure(&program, "not started by p2run (p2run -n P -- halo_loop18)");
    if (o.min_bytes < (uint64_t)ranks + 2 || o.max_bytes > 1u << 20) {
        snprintf(error, sizeof error,
                 "-b/-e: the grid edge must be at least ranks + 2 = %d (a row per rank) and "
                 "at most 1M, not %llu .. %llu", ranks + 2, (unsigned long long)o.min_bytes,
                 (unsigned long long)o.max_bytes);
        return usage_failure(&program, error);
    }
    MPI_Init(&argc, &argv);
    WL_TCA(tcaInit());
    int rank = p2_rank();
    wl_report *report = NULL;
    if (rank == 0) {
        report = halo_report_open("Livermore loop 18 split by rows: halo exchange and compute "
                                  "per step, simulated time", o.csv_path, o.json_path, ranks,
                                  o.warmup, o.iterations, error, sizeof error);
        if (!report) {
            wl_usage_error(&program, error);
            MPI_Abort(MPI_COMM_WORLD, WL_EXIT_USAGE);
        }
        wl_report_meta(report, "problem", "N x N grid, rows 1 .. N-2 split over the ranks; a "
                                          "halo row is zr | zz (16 N bytes), GPU memory");
        wl_report_meta(report, "check", "zr zz zu zv bit for bit against one process (-c 1)");
    }
    uint64_t total_wrong = 0;
    char layout[32];
    snprintf(layout, sizeof layout, "%dx1", ranks);
    for (uint64_t n = o.min_bytes; n <= o.max_bytes; n *= (uint64_t)o.factor) {
        for (int m = 0; m < nmodes; m++) {
            l18_rank r;
            if (l18_alloc(&r, (int)n, rank, ranks) != 0) {
                fprintf(stderr, "%s: out of memory\n", PROGRAM);
                return WL_EXIT_FAILURE;
            }
            l18_init(&r);
            r.plan = l18_plan(&r, rank, ranks, modes[m], error, sizeof error);
            if (!r.plan) {
                fprintf(stderr, "%s: rank %d: %s\n", PROGRAM, rank, error);
                return WL_EXIT_FAILURE;
            }
            const halo_step_ops ops = {l18_exchange, l18_compute};
            halo_row_values row = {.n = (int)n, .ranks = ranks, .layout = layout,
                                   .mode = modes[m]};
            halo_run_steps(&ops, &r, o.warmup, o.iterations, &row.times);
            row.halo_bytes = halo_max_u64(hx_send_bytes(r.plan));
            uint64_t wrong = o.check ? l18_check(&r, o.warmup + o.iterations) : 0;
            row.wrong = halo_sum_u64(wrong);
            total_wrong += row.wrong;
            halo_report_row(report, &row);
            halo_note_links(report, &row, r.plan);
            l18_free(&r);
        }
    }
    return halo_finish(PROGRAM, report, total_wrong, "values");
}
