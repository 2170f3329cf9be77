/*
 * fmpl_coll - FMPL collectives on an SR8000 cluster, in simulated time:
 * barrier, broadcast (software binary tree, and hardware where allowed) and
 * reduce / allreduce of doubles, the root changing every iteration.
 *
 *   p2run --topology sr8000-2x8.topo -n P -- fmpl_coll [-o LIST]
 *         [-b MIN] [-e MAX] [-f FACTOR] [-n ITERS] [-w WARMUP] [-c 1|0]
 *         [--csv FILE] [--json FILE]
 *
 * -o: barrier,bcast,hbcast,reduce,allreduce or all (default). Sizes default
 * to 8 KB only (-b 8K -e 8K). Each row: the mean time per call over the
 * timed iterations, the largest over the ranks (each rank times its own
 * calls; the maximum is taken with fmpl_allreduce(fmpl_dmax)). Iteration i
 * uses root i mod P. With -c 1 every broadcast is checked on every rank and
 * every reduction at its root (allreduce: everywhere); wrong elements are
 * counted over the ranks. hbcast on a job that is no line, rectangle or box of
 * the crossbar grid (an odd count on sr8000-2x8) is reported as refused.
 */
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "fmpl.h"
#include "p2.h"
#include "wl_options.h"
#include "wl_report.h"
#include "wl_sweep.h"

#define PROGRAM "fmpl_coll"

static const char *ops_text = "all";
static const wl_option options[] = {
    {"-o", WL_OPTION_STRING, &ops_text, "LIST",
     "collectives: barrier,bcast,hbcast,reduce,allreduce or all (default)"},
};
static const wl_program program = {PROGRAM, "FMPL collectives on the SR8000 (simulated time)", options,
                                   sizeof options / sizeof options[0]};

enum { OP_BARRIER, OP_BCAST, OP_HBCAST, OP_REDUCE, OP_ALLREDUCE, OP_COUNT };
static const char *op_names[OP_COUNT] = {"barrier", "bcast", "hbcast", "reduce", "allreduce"};

enum { COL_OP, COL_ALGO, COL_RANKS, COL_BYTES, COL_ITERS, COL_TIME, COL_BW, COL_ERRORS, COL_WALL, COLUMN_COUNT };
static const wl_column columns[COLUMN_COUNT] = {
    [COL_OP] = {"op", WL_COLUMN_TEXT, 9, 0},
    [COL_ALGO] = {"algorithm", WL_COLUMN_TEXT, 9, 0},
    [COL_RANKS] = {"ranks", WL_COLUMN_INTEGER, 5, 0},
    [COL_BYTES] = {"bytes", WL_COLUMN_INTEGER, 9, 0},
    [COL_ITERS] = {"iters", WL_COLUMN_INTEGER, 5, 0},
    [COL_TIME] = {"time_us", WL_COLUMN_REAL, 9, 3},
    [COL_BW] = {"algbw_MBps", WL_COLUMN_REAL, 10, 1},
    [COL_ERRORS] = {"errors", WL_COLUMN_INTEGER, 6, 0},
    [COL_WALL] = {"wall_s", WL_COLUMN_REAL, 7, 3},
};

static int me, np;

static int fail(const char *what, int ier)
{
    fprintf(stderr, "%s: rank %d: %s: %s\n", PROGRAM, me, what, fmpl_error_string(ier));
    exit(WL_EXIT_FAILURE);
}

/* Element k of rank r's contribution in iteration it: small integers, exact as doubles. */
static double val(int r, size_t k, int it) { return (double)((r * 3 + (int)(k % 97) + it) % 50); }
static uint8_t bpat(int root, size_t k, int it) { return (uint8_t)(root * 29 + (int)k * 13 + it * 3 + 1); }

static int parse_ops(int *run, char *error, size_t size)
{
    if (strcmp(ops_text, "all") == 0) {
        for (int o = 0; o < OP_COUNT; o++)
            run[o] = 1;
        return 0;
    }
    char text[256];
    snprintf(text, sizeof text, "%s", ops_text);
    for (char *tok = strtok(text, ","); tok; tok = strtok(NULL, ",")) {
        int found = 0;
        for (int o = 0; o < OP_COUNT; o++)
            if (strcmp(tok, op_names[o]) == 0)
                run[o] = found = 1;
        if (!found) {
            snprintf(error, size, "-o: '%s' is not barrier, bcast, hbcast, reduce, allreduce or all", tok);
            return -1;
        }
    }
    return 0;
}

/* One collective call of iteration `it`; returns wrong elements seen here. */
static uint64_t run_once(int op, uint8_t *buf, double *dbuf, double *work, size_t bytes, int it, int check,
                         int *ier)
{
    const int root = it % np;
    const size_t n = bytes / sizeof(double);
    uint64_t bad = 0;
    switch (op) {
    case OP_BARRIER:
        fmpl_barrier(FMPL_COMM_WORLD, ier);
        break;
    case OP_BCAST:
    case OP_HBCAST:
        if (check) {
            for (size_t k = 0; k < bytes; k++)
                buf[k] = me == root ? bpat(root, k, it) : 0;
        }
        if (op == OP_BCAST)
            fmpl_bcast(buf, bytes, root, FMPL_COMM_WORLD, ier);
        else
            fmpl_hbcast(buf, bytes, root, FMPL_COMM_WORLD, ier);
        if (check && *ier == FMPL_SUCCESS)
            for (size_t k = 0; k < bytes; k++)
                bad += buf[k] != bpat(root, k, it);
        break;
    case OP_REDUCE:
    case OP_ALLREDUCE:
        for (size_t k = 0; k < n; k++)
            dbuf[k] = val(me, k, it);
        if (op == OP_REDUCE)
            fmpl_reduce(dbuf, (int)n, fmpl_dsum, root, FMPL_COMM_WORLD, work, ier);
        else
            fmpl_allreduce(dbuf, (int)n, fmpl_dsum, FMPL_COMM_WORLD, work, ier);
        if (check && *ier == FMPL_SUCCESS && (op == OP_ALLREDUCE || me == root))
            for (size_t k = 0; k < n; k++) {
                double want = 0;
                for (int r = 0; r < np; r++)
                    want += val(r, k, it);
                bad += dbuf[k] != want;
            }
        break;
    }
    return bad;
}

/* ---- The sweep's callbacks (wl_sweep.h) ----------------------------------------- */

typedef struct fc_sweep {
    int op;
    int hw; /* hardware collectives allowed */
    uint8_t *buf;
    double *dbuf, *work;
    double *stat, *swork; /* the reductions of the times and the wrong elements */
} fc_sweep;

static double clock_s(void) { return p2_wtime(); }

/* Before the timed span: every rank starts it together. */
static void barrier(void *ctx)
{
    (void)ctx;
    int ier;
    fmpl_barrier(FMPL_COMM_WORLD, &ier);
}

/* The slowest rank's mean time (fmpl_allreduce with fmpl_dmax). */
static double reduce_max(void *ctx, double value, wl_sweep_op op)
{
    fc_sweep *s = ctx;
    (void)op;
    int ier;
    s->stat[0] = value;
    fmpl_allreduce(s->stat, 1, fmpl_dmax, FMPL_COMM_WORLD, s->swork, &ier);
    return s->stat[0];
}

static uint64_t sum_wrong(void *ctx, uint64_t wrong)
{
    fc_sweep *s = ctx;
    int ier;
    s->stat[0] = (double)wrong;
    fmpl_allreduce(s->stat, 1, fmpl_dsum, FMPL_COMM_WORLD, s->swork, &ier);
    return (uint64_t)s->stat[0];
}

/* One call; a refused hardware broadcast ends the size. */
static int call_once(void *ctx, wl_sweep_iteration *it)
{
    fc_sweep *s = ctx;
    int ier = FMPL_SUCCESS;
    it->wrong += run_once(s->op, s->buf, s->dbuf, s->work, (size_t)it->size->bytes, it->index,
                          it->check, &ier);
    if (s->op == OP_HBCAST && ier == FMPL_ERR_HW_NOT_ALLOWED)
        return WL_SWEEP_REFUSED;
    if (ier != FMPL_SUCCESS)
        fail(op_names[s->op], ier);
    return WL_SWEEP_RAN;
}

static void report_size(void *ctx, const wl_sweep_result *r, wl_cell *row)
{
    const fc_sweep *s = ctx;
    const uint64_t b = r->size.bytes;
    const double t = r->max_s;
    const char *algo = s->op == OP_HBCAST ? (r->refused ? "refused" : "hardware")
                       : s->op == OP_BARRIER ? (s->hw ? "hardware" : "tree")
                                             : "tree";
    row[COL_OP].text = op_names[s->op];
    row[COL_ALGO].text = algo;
    row[COL_RANKS].integer = np;
    row[COL_BYTES].integer = (int64_t)b;
    row[COL_ITERS].integer = r->refused ? 0 : r->size.iterations;
    row[COL_TIME].real = t * 1e6;
    row[COL_BW].real = t > 0 && b ? (double)b / t / 1e6 : 0;
    row[COL_ERRORS].integer = (int64_t)r->wrong;
    row[COL_WALL].real = r->wall_s;
}

int main(int argc, char **argv)
{
    wl_common_options o;
    wl_options_defaults(&o);
    o.min_bytes = o.max_bytes = 8192;
    char error[256];
    switch (wl_parse(&program, argc, argv, &o, error, sizeof error)) {
    case WL_PARSE_HELP: wl_usage(&program, stdout); return WL_EXIT_OK;
    case WL_PARSE_ERROR: wl_usage_error(&program, error); return WL_EXIT_USAGE;
    default: break;
    }
    int run[OP_COUNT] = {0};
    if (parse_ops(run, error, sizeof error) != 0) {
        wl_usage_error(&program, error);
        return WL_EXIT_USAGE;
    }
    me = fmpl_myrank();
    np = fmpl_nprocs();
    int ier;
    if (np == 0) { /* no NIA: fmpl_init says why */
        fmpl_init(NULL, NULL, 1, &ier);
        fail("fmpl_init", ier);
    }
    fmpl_match_t *ma = fmpl_malloc(FMPL_AREA_SLOTS(1, np) * sizeof *ma);
    fmpl_flag_t *fa = fmpl_malloc(FMPL_AREA_SLOTS(1, np) * sizeof *fa);
    uint8_t *buf = fmpl_malloc(o.max_bytes);
    double *dbuf = fmpl_malloc(o.max_bytes), *work = fmpl_malloc(o.max_bytes);
    double *stat = fmpl_malloc(4 * sizeof(double)), *swork = fmpl_malloc(4 * sizeof(double));
    if (!ma || !fa || !buf || !dbuf || !work || !stat || !swork)
        fail("fmpl_malloc", FMPL_ERR_NO_MEMORY);
    fmpl_init(ma, fa, 1, &ier);
    if (ier != FMPL_SUCCESS)
        fail("fmpl_init", ier);
    const int hw = fmpl_hw_collectives(FMPL_COMM_WORLD);
    wl_report *report = NULL;
    if (me == 0) {
        report = wl_report_open("FMPL collectives on the SR8000, simulated time (root changes every iteration)",
                                columns, COLUMN_COUNT, o.csv_path, o.json_path, error, sizeof error);
        if (!report) {
            wl_usage_error(&program, error);
            return WL_EXIT_USAGE;
        }
        wl_report_meta(report, "ranks", "%d", np);
        wl_report_meta(report, "hardware collectives", "%s",
                       hw ? "allowed (one process per node, a line, rectangle or box of the crossbar grid)" : "not allowed (not one process per node of a line, rectangle or box of the crossbar grid): software barrier, hbcast refused");
        wl_report_meta(report, "iterations", "%d timed + %d warm-up", o.iterations, o.warmup);
        wl_report_meta(report, "time", "mean per call, the largest over the ranks (simulated)");
    }
    /* Each collective a sweep (a barrier: one size, no data). Each rank
     * times its timed calls as one span after a barrier; the row has the
     * largest mean over the ranks and the wrong elements of all. */
    const wl_sweep_transport transport = {clock_s, barrier, reduce_max, sum_wrong};
    const wl_sweep_ops ops = {.run = call_once, .row = report_size};
    fc_sweep sweep = {.hw = hw, .buf = buf, .dbuf = dbuf, .work = work, .stat = stat,
                      .swork = swork};
    uint64_t wrong_total = 0;
    for (int op = 0; op < OP_COUNT; op++) {
        if (!run[op])
            continue;
        const wl_sweep_config config = {
            .min_bytes = op == OP_BARRIER ? 0 : o.min_bytes,
            .max_bytes = op == OP_BARRIER ? 0 : o.max_bytes, .factor = o.factor,
            .iterations = o.iterations, .warmup = o.warmup, .timing = WL_SWEEP_TIME_SPAN,
            .across = WL_SWEEP_ACROSS_MAX, .timer = 1, .check = o.check, .check_warmup = 1};
        sweep.op = op;
        wl_sweep_run(&config, &transport, &ops, &sweep, report, &wrong_total);
    }
    fmpl_finalize(&ier);
    if (ier != FMPL_SUCCESS)
        fail("fmpl_finalize", ier);
    int status = WL_EXIT_OK;
    if (me == 0) {
        if (wl_report_close(report) != 0)
            status = WL_EXIT_FAILURE;
        if (wrong_total) {
            fprintf(stderr, "%s: %llu wrong elements\n", PROGRAM, (unsigned long long)wrong_total);
            status = WL_EXIT_FAILURE;
        }
    }
    return status;
}
