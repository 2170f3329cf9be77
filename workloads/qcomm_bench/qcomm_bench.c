/*
 * qcomm_bench - QUDA's communication interface (workloads/qcomm) over its
 * three transports, in simulated time: ping-pong latency and bandwidth, and
 * a 4D halo exchange (qb_halo.c).
 *
 *   p2run -n N [--topology FILE] [--params FILE] -- qcomm_bench
 *       [-m pingpong|halo] [-t tca,mpi,mpi-rma|all] [-H] [-p A,B]
 *       [--grid X,Y,Z,T] [--lattice L[,L...]]
 *       [-b MIN] [-e MAX] [-f FACTOR] [-n ITERS] [-w WARMUP] [-c 1|0]
 *       [--csv FILE] [--json FILE]
 *
 * Ping-pong: rank A sends `size` bytes to rank B through a persistent send
 * handle, B answers with as many through its own; each side's receive for
 * the next round is started (announced) as soon as the last one's data has
 * been checked, as QUDA starts its receives ahead of its sends. Latency is
 * half the mean round trip (OSU), bandwidth size / latency. Every message
 * carries a pattern that changes per round and direction, checked byte for
 * byte at its receiver (-c 1; -c 0 checks only the last round). Buffers are
 * GPU memory (tcaMalloc(tcaMemoryGPU), which the MPI layer also takes as GPU
 * buffers); -H puts them in host memory.
 *
 * MPI is initialised only when an MPI transport runs, so `-t tca` runs on a
 * cluster without the InfiniBand rail (topologies/tcamini-ring8.topo).
 */
#define _GNU_SOURCE
#include <mpi.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/syscall.h>
#include <time.h>
#include <unistd.h>

#include "p2.h"
#include "qb.h"
#include "tca-api.h"
#include "wl_pattern.h"
#include "wl_tca.h"

#define LARGE_MESSAGE_BYTES (1u << 20) /* above: a tenth of the iterations (OSU) */
#define LARGE_MESSAGE_DIVISOR 10
#define TAG_PING 1
#define TAG_PONG 2

static int mpi_up;

/* Host time from the kernel (the C library's clocks read the virtual one). */
static double wall_seconds(void)
{
    struct timespec ts;
    syscall(SYS_clock_gettime, CLOCK_MONOTONIC, &ts);
    return (double)ts.tv_sec + (double)ts.tv_nsec * 1e-9;
}

/* ---- Ping-pong ---------------------------------------------------------------- */

enum { COL_TRANSPORT, COL_BYTES, COL_ITERS, COL_LATENCY, COL_BANDWIDTH, COL_WRONG, COL_WALL,
       PP_COLUMNS };
static const wl_column pp_columns[PP_COLUMNS] = {
    {"transport", WL_COLUMN_TEXT, 9, 0},      {"bytes", WL_COLUMN_INTEGER, 9, 0},
    {"iters", WL_COLUMN_INTEGER, 5, 0},       {"latency_us", WL_COLUMN_REAL, 10, 3},
    {"bandwidth_GBps", WL_COLUMN_REAL, 14, 4}, {"wrong", WL_COLUMN_INTEGER, 5, 0},
    {"wall_s", WL_COLUMN_REAL, 7, 2}};

/* Seed of round `round`'s message from A (ping) or B (pong). */
static uint64_t pp_seed(uint64_t bytes, int round, int pong)
{
    return bytes * 1000003u + (uint64_t)round * 2u + (uint64_t)pong;
}

/* One size: both ranks' rounds; A returns the timed rounds' total. */
static double pp_size(const qb_config *c, uint64_t bytes, int rounds, int warmup,
                      uint8_t *send, uint8_t *recv, uint64_t *wrong)
{
    int a = comm_rank() == c->rank_a;
    int peer = a ? c->rank_b : c->rank_a;
    MsgHandle *s = comm_declare_send_rank(send, peer, a ? TAG_PING : TAG_PONG, bytes);
    MsgHandle *r = comm_declare_recv_rank(recv, peer, a ? TAG_PONG : TAG_PING, bytes);
    int total = rounds + warmup;
    comm_start(r); /* the first round's receive, announced ahead */
    comm_barrier();
    double t0 = 0, spent = 0;
    for (int k = 0; k < total; k++) {
        int last = k + 1 == total, check = c->common.check || last;
        if (k == warmup)
            t0 = p2_wtime();
        if (a) {
            wl_pattern_fill(send, bytes, pp_seed(bytes, k, 0));
            comm_start(s);
            comm_wait(r);
            if (check)
                *wrong += wl_pattern_count_wrong(recv, bytes, pp_seed(bytes, k, 1));
            if (!last)
                comm_start(r);
            comm_wait(s);
        } else {
            comm_wait(r);
            if (check)
                *wrong += wl_pattern_count_wrong(recv, bytes, pp_seed(bytes, k, 0));
            wl_pattern_fill(send, bytes, pp_seed(bytes, k, 1));
            comm_start(s);
            if (!last)
                comm_start(r);
            comm_wait(s);
        }
    }
    spent = p2_wtime() - t0;
    comm_free(&s);
    comm_free(&r);
    return spent;
}

/* Every rank walks the sizes (the pair measures, all add up the wrong
 * bytes); rank A reports. */
static void pingpong(const qb_config *c, qcomm_transport t, wl_report *report, uint64_t *wrong)
{
    int rank = comm_rank(), pair = rank == c->rank_a || rank == c->rank_b;
    uint64_t max = c->common.max_bytes;
    uint8_t *send = pair ? qb_alloc(c, max) : NULL, *recv = pair ? qb_alloc(c, max) : NULL;
    for (uint64_t bytes = c->common.min_bytes; bytes <= max; bytes *= (uint64_t)c->common.factor) {
        int rounds = c->common.iterations, warmup = c->common.warmup;
        if (bytes > LARGE_MESSAGE_BYTES) {
            rounds = rounds / LARGE_MESSAGE_DIVISOR > 0 ? rounds / LARGE_MESSAGE_DIVISOR : 1;
            warmup = warmup / LARGE_MESSAGE_DIVISOR > 0 ? warmup / LARGE_MESSAGE_DIVISOR : 1;
        }
        double wall0 = wall_seconds(), spent = 0;
        uint64_t bad = 0;
        if (pair)
            spent = pp_size(c, bytes, rounds, warmup, send, recv, &bad);
        else
            comm_barrier(); /* pp_size's, which every rank joins */
        bad = (uint64_t)qb_sum_over_ranks((double)bad);
        *wrong += rank == c->rank_a ? bad : 0;
        if (report) {
            double latency = spent / (2.0 * rounds);
            wl_cell row[PP_COLUMNS] = {0};
            row[COL_TRANSPORT].text = qcomm_transport_name(t);
            row[COL_BYTES].integer = (int64_t)bytes;
            row[COL_ITERS].integer = rounds;
            row[COL_LATENCY].real = latency * WL_US_PER_S;
            row[COL_BANDWIDTH].real = (double)bytes / latency / WL_BYTES_PER_GB;
            row[COL_WRONG].integer = (int64_t)bad;
            row[COL_WALL].real = wall_seconds() - wall0;
            wl_report_row(report, row);
        }
        if (bytes > max / (uint64_t)c->common.factor)
            break;
    }
    if (pair) {
        qb_free(c, send);
        qb_free(c, recv);
    }
}

/* ---- Options ------------------------------------------------------------------ */

static int parse_ints(const char *text, int *out, int max, int min_value)
{
    int n = 0;
    const char *p = text;
    while (*p) {
        char *end;
        long v = strtol(p, &end, 10);
        if (end == p || v < min_value || v > 1000000 || n == max)
            return -1;
        out[n++] = (int)v;
        p = end;
        if (*p == ',')
            p++;
        else if (*p)
            return -1;
    }
    return n;
}

static int configure(qb_config *c, int size, char *error, size_t n)
{
    if (strcmp(c->mode_text, "pingpong") == 0)
        c->halo = 0;
    else if (strcmp(c->mode_text, "halo") == 0)
        c->halo = 1;
    else
        return snprintf(error, n, "-m: '%s': pingpong or halo", c->mode_text), -1;
    if (strcmp(c->transport_text, "all") == 0) {
        for (int t = 0; t < QCOMM_TRANSPORTS; t++)
            c->runs[t] = 1;
    } else {
        char copy[64];
        snprintf(copy, sizeof copy, "%s", c->transport_text);
        for (char *save = NULL, *w = strtok_r(copy, ",", &save); w; w = strtok_r(NULL, ",", &save)) {
            int t = qcomm_transport_parse(w);
            if (t < 0)
                return snprintf(error, n, "-t: '%s': tca, mpi, mpi-rma or all", w), -1;
            c->runs[t] = 1;
        }
    }
    int pair[2];
    if (parse_ints(c->pair_text, pair, 2, 0) != 2 || pair[0] == pair[1])
        return snprintf(error, n, "-p: '%s': two different ranks A,B", c->pair_text), -1;
    if (pair[0] >= size || pair[1] >= size)
        return snprintf(error, n, "-p: the job has %d ranks", size), -1;
    c->rank_a = pair[0];
    c->rank_b = pair[1];
    for (int d = 0; d < QCOMM_MAX_DIM; d++)
        c->grid[d] = 1;
    if (c->grid_text) {
        int k = parse_ints(c->grid_text, c->grid, QCOMM_MAX_DIM, 1);
        if (k < 1)
            return snprintf(error, n, "--grid: '%s': up to 4 extents X,Y,Z,T", c->grid_text), -1;
    } else { /* the job's size as 2 x 2 x ... from dim 0, the rest in the last dim */
        int left = size;
        for (int d = 0; d < QCOMM_MAX_DIM - 1 && left % 2 == 0 && left > 1; d++)
            c->grid[d] = 2, left /= 2;
        c->grid[QCOMM_MAX_DIM - 1] *= left;
    }
    long product = 1;
    for (int d = 0; d < QCOMM_MAX_DIM; d++)
        product *= c->grid[d];
    if (product != size)
        return snprintf(error, n, "--grid: %d x %d x %d x %d is not the job's %d ranks", c->grid[0],
                        c->grid[1], c->grid[2], c->grid[3], size), -1;
    c->lattice_count = parse_ints(c->lattice_text, c->lattices, QB_MAX_LATTICES, 2);
    if (c->lattice_count < 1)
        return snprintf(error, n, "--lattice: '%s': local extents L (2 or more), comma separated",
                        c->lattice_text), -1;
    return 0;
}

/* ---- Main --------------------------------------------------------------------- */

int main(int argc, char **argv)
{
    wl_set_program_name(QB_PROGRAM);
    qb_config c = {.mode_text = "pingpong", .transport_text = "all", .pair_text = "0,1",
                   .lattice_text = "8,16,24"};
    wl_options_defaults(&c.common);
    c.common.max_bytes = 4u << 20;
    const wl_option own[] = {
        {"-m", WL_OPTION_STRING, &c.mode_text, "MODE", "pingpong (latency, bandwidth) or halo"},
        {"-t", WL_OPTION_STRING, &c.transport_text, "LIST", "tca, mpi, mpi-rma (comma separated) or all"},
        {"-H", WL_OPTION_FLAG, &c.host, "", "buffers in host memory (default: GPU memory)"},
        {"-p", WL_OPTION_STRING, &c.pair_text, "A,B", "ping-pong: the two ranks"},
        {"--grid", WL_OPTION_STRING, &c.grid_text, "X,Y,Z,T", "halo: the 4D process grid"},
        {"--lattice", WL_OPTION_STRING, &c.lattice_text, "L,...", "halo: local lattice extents"},
    };
    const wl_program program = {QB_PROGRAM,
                                "QUDA's comm interface over TCA, MPI and MPI one-sided: "
                                "ping-pong and a 4D halo exchange, in simulated time",
                                own, sizeof own / sizeof own[0]};
    char error[256];
    switch (wl_parse(&program, argc, argv, &c.common, error, sizeof error)) {
    case WL_PARSE_HELP: wl_usage(&program, stdout); return 0;
    case WL_PARSE_ERROR: wl_usage_error(&program, error); return 2;
    case WL_PARSE_OK: break;
    }
    WL_TCA(tcaInit());
    int rank = p2_rank(), size = p2_size();
    if (size < 2) {
        wl_usage_error(&program, "needs at least 2 ranks (p2run -n N)");
        return 2;
    }
    if (configure(&c, size, error, sizeof error) != 0) {
        wl_usage_error(&program, error); /* every rank: p2run ends the job at the first exit */
        return 2;
    }
    if (c.runs[QCOMM_MPI] || c.runs[QCOMM_MPI_RMA]) {
        MPI_Init(&argc, &argv);
        mpi_up = 1;
    }
    int reporter = c.halo ? rank == 0 : rank == c.rank_a;
    wl_report *report = NULL;
    if (reporter) {
        report = wl_report_open(c.halo ? "QUDA comm: 4D halo exchange, then the stencil (simulated)"
                                       : "QUDA comm: ping-pong (latency = half the round trip, simulated)",
                                c.halo ? qb_halo_columns : pp_columns,
                                c.halo ? (size_t)qb_halo_column_count : PP_COLUMNS,
                                c.common.csv_path, c.common.json_path, error, sizeof error);
        if (!report) {
            wl_usage_error(&program, error);
            return 2;
        }
        wl_report_meta(report, "ranks", "%d", size);
        wl_report_meta(report, "buffers", "%s", c.host ? "host memory (tcaMalloc CPU)"
                                                       : "GPU memory (tcaMalloc GPU)");
        if (c.halo)
            wl_report_meta(report, "grid", "%d x %d x %d x %d", c.grid[0], c.grid[1], c.grid[2],
                           c.grid[3]);
        else
            wl_report_meta(report, "pair", "%d -> %d", c.rank_a, c.rank_b);
    }
    uint64_t wrong = 0;
    for (int t = 0; t < QCOMM_TRANSPORTS; t++) {
        if (!c.runs[t])
            continue;
        comm_init(QCOMM_MAX_DIM, c.grid, (qcomm_transport)t);
        if (c.halo)
            qb_halo(&c, (qcomm_transport)t, report, &wrong);
        else
            pingpong(&c, (qcomm_transport)t, report, &wrong);
        comm_finalize();
    }
    int status = 0;
    if (reporter) {
        if (wl_report_close(report) != 0)
            status = 1;
        if (wrong) {
            fprintf(stderr, "%s: %llu wrong bytes received\n", QB_PROGRAM, (unsigned long long)wrong);
            status = 1;
        }
    }
    if (mpi_up)
        MPI_Finalize();
    return status;
}
