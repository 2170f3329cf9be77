/*
 * qb_halo.c - qcomm_bench -m halo: the communication pattern of a 4D
 * lattice QCD stencil (QUDA's Wilson dslash) on a 4D process grid.
 *
 * Each rank holds an L^4 local lattice. Per iteration, in every partitioned
 * dimension (extent above 1, as QUDA communicates only those) it sends its
 * two faces, forward and back, to its neighbours and receives theirs:
 * receives started first (their address notices go out), then the sends,
 * then every wait; then the stencil over the local lattice, charged to the
 * rank's clock by the K20X cost model (workloads/common/wl_gpu.h).
 *
 * Sizes, as QUDA's double-precision Wilson dslash has them: a face is L^3
 * sites of a spin-projected half spinor, 12 reals (96 bytes); the stencil
 * reads 8 neighbour spinors (24 reals) and 8 gauge links (18 reals) and
 * writes one spinor per site, (8 x 24 + 8 x 18 + 24) x 8 = 2880 bytes, and
 * does 1320 flops per site (QUDA's count for the Wilson dslash).
 *
 * Every face carries a pattern of (sender, dimension, direction, iteration),
 * checked byte for byte at its receiver (-c 1; -c 0: the last iteration).
 * Row per (transport, L): the slowest rank's mean time per iteration for
 * the exchange and for the stencil, and their sum.
 *
 * Depends on qb.h (qcomm, the report), wl_gpu.h, wl_pattern.h, p2.h.
 */
#include <stdlib.h>

#include "p2.h"
#include "qb.h"
#include "wl_gpu.h"
#include "wl_pattern.h"
#include "wl_tca.h"

#define FACE_BYTES_PER_SITE 96.0  /* 12 doubles: the spin-projected half spinor */
#define STENCIL_BYTES_PER_SITE 2880.0
#define STENCIL_FLOPS_PER_SITE 1320.0

enum { H_TRANSPORT, H_L, H_FACE, H_MESSAGES, H_ITERS, H_COMM, H_COMPUTE, H_TOTAL, H_WRONG,
       H_COLUMNS };
const wl_column qb_halo_columns[H_COLUMNS] = {
    {"transport", WL_COLUMN_TEXT, 9, 0},    {"L", WL_COLUMN_INTEGER, 3, 0},
    {"face_bytes", WL_COLUMN_INTEGER, 10, 0}, {"messages", WL_COLUMN_INTEGER, 8, 0},
    {"iters", WL_COLUMN_INTEGER, 5, 0},     {"exchange_us", WL_COLUMN_REAL, 11, 2},
    {"stencil_us", WL_COLUMN_REAL, 10, 2},  {"total_us", WL_COLUMN_REAL, 9, 2},
    {"wrong", WL_COLUMN_INTEGER, 5, 0}};
const int qb_halo_column_count = H_COLUMNS;

/* Face sent by `rank` in `dim` towards `dir` (0 back, 1 forward). */
static uint64_t face_seed(int rank, int dim, int dir, int iteration)
{
    return ((uint64_t)iteration * 64u + (uint64_t)rank) * 8u + (uint64_t)dim * 2u + (uint64_t)dir;
}

typedef struct halo_face {
    uint8_t *send, *recv;
    MsgHandle *to, *from; /* to the neighbour at dir, from the neighbour at dir */
    int dim, dir, neighbour;
} halo_face;

static void one_lattice(const qb_config *c, qcomm_transport t, int L, wl_report *report,
                        uint64_t *wrong)
{
    double sites = (double)L * L * L * L;
    size_t face = (size_t)((double)L * L * L * FACE_BYTES_PER_SITE);
    halo_face faces[2 * QCOMM_MAX_DIM];
    int n = 0;
    for (int d = 0; d < QCOMM_MAX_DIM; d++) {
        if (comm_dim(d) == 1)
            continue;
        for (int dir = 0; dir < 2; dir++) {
            halo_face *f = &faces[n++];
            f->dim = d;
            f->dir = dir;
            f->neighbour = comm_neighbor_rank(dir, d);
            f->send = qb_alloc(c, face);
            f->recv = qb_alloc(c, face);
            f->to = comm_declare_send_relative(f->send, d, dir ? 1 : -1, face);
            f->from = comm_declare_receive_relative(f->recv, d, dir ? 1 : -1, face);
        }
    }
    int total = c->common.warmup + c->common.iterations;
    double exchange = 0, stencil = 0;
    uint64_t bad = 0;
    comm_barrier();
    for (int k = 0; k < total; k++) {
        int timed = k >= c->common.warmup, check = c->common.check || k + 1 == total;
        for (int i = 0; i < n; i++)
            wl_pattern_fill(faces[i].send, face, face_seed(comm_rank(), faces[i].dim, faces[i].dir, k));
        double t0 = p2_wtime();
        for (int i = 0; i < n; i++)
            comm_start(faces[i].from);
        for (int i = 0; i < n; i++)
            comm_start(faces[i].to);
        for (int i = 0; i < n; i++) {
            comm_wait(faces[i].from);
            comm_wait(faces[i].to);
        }
        double t1 = p2_wtime();
        wl_gpu_kernel(sites * STENCIL_BYTES_PER_SITE, sites * STENCIL_FLOPS_PER_SITE);
        double t2 = p2_wtime();
        if (timed) {
            exchange += t1 - t0;
            stencil += t2 - t1;
        }
        /* The face from the neighbour at dir was sent by it towards 1 - dir. */
        for (int i = 0; check && i < n; i++)
            bad += wl_pattern_count_wrong(
                faces[i].recv, face, face_seed(faces[i].neighbour, faces[i].dim, 1 - faces[i].dir, k));
    }
    int iters = c->common.iterations;
    double ex = qb_max_over_ranks(exchange / iters), st = qb_max_over_ranks(stencil / iters);
    double tot = qb_max_over_ranks((exchange + stencil) / iters);
    bad = (uint64_t)qb_sum_over_ranks((double)bad);
    *wrong += comm_rank() == 0 ? bad : 0;
    for (int i = 0; i < n; i++) {
        comm_free(&faces[i].to);
        comm_free(&faces[i].from);
    }
    comm_barrier();
    for (int i = 0; i < n; i++) {
        qb_free(c, faces[i].send);
        qb_free(c, faces[i].recv);
    }
    if (report) {
        wl_cell row[H_COLUMNS] = {0};
        row[H_TRANSPORT].text = qcomm_transport_name(t);
        row[H_L].integer = L;
        row[H_FACE].integer = (int64_t)face;
        row[H_MESSAGES].integer = 2 * n;
        row[H_ITERS].integer = iters;
        row[H_COMM].real = ex * WL_US_PER_S;
        row[H_COMPUTE].real = st * WL_US_PER_S;
        row[H_TOTAL].real = tot * WL_US_PER_S;
        row[H_WRONG].integer = (int64_t)bad;
        wl_report_row(report, row);
    }
}

void qb_halo(const qb_config *c, qcomm_transport t, wl_report *report, uint64_t *wrong)
{
    for (int i = 0; i < c->lattice_count; i++)
        one_lattice(c, t, c->lattices[i], report, wrong);
}
