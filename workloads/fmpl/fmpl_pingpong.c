/*
 * fmpl_pingpong - FMPL latency and throughput between two ranks of an SR8000
 * cluster, in simulated time.
 *
 *   p2run --topology sr8000-8.topo -n 2 -- fmpl_pingpong [-p A,B]
 *         [-b MIN] [-e MAX] [-f FACTOR] [-n ITERS] [-w WARMUP] [-c 1|0]
 *         [--csv FILE] [--json FILE]
 *
 * Rank A sends `size` bytes with fmpl_send (zero copy, one round trip: B's
 * fmpl_recv posts its header into A's matching slot, A's NIA writes the data
 * straight into B's buffer, then B's flag); B sends them back the same way
 * from where they landed. Each side's receive is posted when its own send
 * returned (a blocking pair), so the header's trip is on the critical path
 * except where it overlaps the previous message's trip, and FMPL's software
 * per step (params.def fmpl_*) is in every trip. Latency is half the round
 * trip (OSU), throughput size / latency. The breakdown columns split A's
 * fmpl_send (send_init, send_wait for B's header, send_data until the NIA
 * reports it done) and its fmpl_recv (recv_init, recv_header until its
 * header's remote DMA is done, recv_data until the flag is seen and
 * checked) as FMPL's published breakdown does (fmpl_last_steps), each the
 * mean over the timed iterations; A's send and receive are its whole round
 * trip, so the six add up to twice the latency. Every rank calls fmpl_init;
 * ranks other than A and B only wait in fmpl_finalize. With -c 1 A's message
 * changes every iteration and the echo is checked byte for byte.
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

#define PROGRAM "fmpl_pingpong"
#define SLOT 0
#define LARGE_MESSAGE_BYTES (1u << 20)
#define LARGE_MESSAGE_DIVISOR 10

static const char *pair_text = "0,1";

static const wl_option options[] = {
    {"-p", WL_OPTION_STRING, &pair_text, "A,B", "the two ranks (A pings and times; default 0,1)"},
};
static const wl_program program = {PROGRAM, "FMPL ping-pong on the SR8000 NIA (simulated time)",
                                   options, sizeof options / sizeof options[0]};

/* The breakdown columns: A's blocking fmpl_send and fmpl_recv split into
 * FMPL's published steps (fmpl_last_steps), each the mean over the timed
 * iterations. */
enum {
    COL_BYTES, COL_ITERS, COL_LATENCY, COL_BANDWIDTH,
    COL_SEND_INIT, COL_SEND_WAIT, COL_SEND_DATA, COL_RECV_INIT, COL_RECV_HEADER, COL_RECV_DATA,
    COL_ERRORS, COL_WALL, COLUMN_COUNT
};
static const wl_column columns[COLUMN_COUNT] = {
    [COL_BYTES] = {"bytes", WL_COLUMN_INTEGER, 10, 0},
    [COL_ITERS] = {"iters", WL_COLUMN_INTEGER, 5, 0},
    [COL_LATENCY] = {"latency_us", WL_COLUMN_REAL, 10, 3},
    [COL_BANDWIDTH] = {"bandwidth_MBps", WL_COLUMN_REAL, 14, 1},
    [COL_SEND_INIT] = {"send_init_us", WL_COLUMN_REAL, 12, 3},
    [COL_SEND_WAIT] = {"send_wait_us", WL_COLUMN_REAL, 12, 3},
    [COL_SEND_DATA] = {"send_data_us", WL_COLUMN_REAL, 12, 3},
    [COL_RECV_INIT] = {"recv_init_us", WL_COLUMN_REAL, 12, 3},
    [COL_RECV_HEADER] = {"recv_header_us", WL_COLUMN_REAL, 14, 3},
    [COL_RECV_DATA] = {"recv_data_us", WL_COLUMN_REAL, 12, 3},
    [COL_ERRORS] = {"errors", WL_COLUMN_INTEGER, 6, 0},
    [COL_WALL] = {"wall_s", WL_COLUMN_REAL, 8, 3},
};

static int fail(const char *what, int ier)
{
    fprintf(stderr, "%s: rank %d: %s: %s\n", PROGRAM, fmpl_myrank(), what, fmpl_error_string(ier));
    return WL_EXIT_FAILURE;
}

static uint8_t pattern(uint64_t i, uint64_t iter) { return (uint8_t)(i * 131u + iter * 7u + 1u); }

/* ---- The sweep's callbacks (wl_sweep.h) ----------------------------------------- */

typedef struct fp_sweep {
    int pinger; /* this rank is A */
    int peer;
    uint8_t *buf;
    fmpl_steps_t steps; /* A: its steps summed over the size's timed iterations */
} fp_sweep;

static int size_setup(void *ctx, const wl_sweep_size *size)
{
    (void)size;
    fp_sweep *s = ctx;
    memset(&s->steps, 0, sizeof s->steps);
    return 0;
}

/* A: the steps of the send and receive it just completed, into the sums. */
static void add_steps(fp_sweep *s)
{
    fmpl_steps_t t;
    fmpl_last_steps(&t);
    s->steps.send_init += t.send_init;
    s->steps.send_wait += t.send_wait;
    s->steps.send_data += t.send_data;
    s->steps.recv_init += t.recv_init;
    s->steps.recv_header += t.recv_header;
    s->steps.recv_data += t.recv_data;
}

static double clock_s(void) { return p2_wtime(); }

/* One round trip; A's message changes every iteration and the echo is
 * checked byte for byte (in the timed span: it times all its iterations as
 * one). A failed call ends the rank. */
static int round_trip(void *ctx, wl_sweep_iteration *it)
{
    fp_sweep *s = ctx;
    uint64_t bytes = it->size->bytes;
    uint8_t *buf = s->buf;
    int ier;
    if (s->pinger) {
        if (it->check)
            for (uint64_t i = 0; i < bytes; i++)
                buf[i] = pattern(i, (uint64_t)it->index);
        fmpl_send(buf, bytes, s->peer, SLOT, &ier);
        if (ier != FMPL_SUCCESS)
            exit(fail("fmpl_send", ier));
        if (it->check)
            memset(buf, 0, bytes);
        fmpl_recv(buf, bytes, s->peer, SLOT, &ier);
        if (ier != FMPL_SUCCESS)
            exit(fail("fmpl_recv", ier));
        if (it->timed)
            add_steps(s);
        if (it->check)
            for (uint64_t i = 0; i < bytes; i++)
                it->wrong += buf[i] != pattern(i, (uint64_t)it->index);
    } else {
        fmpl_recv(buf, bytes, s->peer, SLOT, &ier);
        if (ier != FMPL_SUCCESS)
            exit(fail("fmpl_recv", ier));
        fmpl_send(buf, bytes, s->peer, SLOT, &ier);
        if (ier != FMPL_SUCCESS)
            exit(fail("fmpl_send", ier));
    }
    return WL_SWEEP_RAN;
}

/* A's row: latency half the mean round trip, throughput size / latency. */
static void report_size(void *ctx, const wl_sweep_result *r, wl_cell *row)
{
    const fp_sweep *s = ctx;
    uint64_t bytes = r->size.bytes;
    double lat = r->total_s / (2.0 * r->size.iterations);
    const double per = WL_US_PER_S / r->size.iterations;
    row[COL_BYTES].integer = (int64_t)bytes;
    row[COL_ITERS].integer = r->size.iterations;
    row[COL_LATENCY].real = lat * WL_US_PER_S;
    row[COL_BANDWIDTH].real = (double)bytes / lat / 1e6;
    row[COL_SEND_INIT].real = s->steps.send_init * per;
    row[COL_SEND_WAIT].real = s->steps.send_wait * per;
    row[COL_SEND_DATA].real = s->steps.send_data * per;
    row[COL_RECV_INIT].real = s->steps.recv_init * per;
    row[COL_RECV_HEADER].real = s->steps.recv_header * per;
    row[COL_RECV_DATA].real = s->steps.recv_data * per;
    row[COL_ERRORS].integer = (int64_t)r->wrong;
    row[COL_WALL].real = r->wall_s;
}

int main(int argc, char **argv)
{
    wl_common_options o;
    wl_options_defaults(&o);
    char error[256];
    switch (wl_parse(&program, argc, argv, &o, error, sizeof error)) {
    case WL_PARSE_HELP: wl_usage(&program, stdout); return WL_EXIT_OK;
    case WL_PARSE_ERROR: wl_usage_error(&program, error); return WL_EXIT_USAGE;
    default: break;
    }
    int a = 0, b = 1, end = 0, ier;
    int nprocs = fmpl_nprocs(), me = fmpl_myrank();
    if (nprocs == 0) { /* no NIA: fmpl_init says why */
        fmpl_init(NULL, NULL, 1, &ier);
        return fail("fmpl_init", ier);
    }
    if (sscanf(pair_text, "%d,%d%n", &a, &b, &end) != 2 || pair_text[end] != '\0' || a == b || a < 0 ||
        b < 0 || a >= nprocs || b >= nprocs) {
        snprintf(error, sizeof error, "-p: '%s' is not two different ranks below %d", pair_text, nprocs);
        wl_usage_error(&program, error);
        return WL_EXIT_USAGE;
    }
    fmpl_match_t *ma = fmpl_malloc(FMPL_AREA_SLOTS(1, nprocs) * sizeof *ma);
    fmpl_flag_t *fa = fmpl_malloc(FMPL_AREA_SLOTS(1, nprocs) * sizeof *fa);
    uint8_t *buf = fmpl_malloc(o.max_bytes);
    if (!ma || !fa || !buf)
        return fail("fmpl_malloc", FMPL_ERR_NO_MEMORY);
    fmpl_init(ma, fa, 1, &ier);
    if (ier != FMPL_SUCCESS)
        return fail("fmpl_init", ier);

    wl_report *report = NULL;
    if (me == a) {
        report = wl_report_open("FMPL ping-pong on the SR8000, simulated time (latency = half the round trip)",
                                columns, COLUMN_COUNT, o.csv_path, o.json_path, error, sizeof error);
        if (!report) {
            wl_usage_error(&program, error);
            return WL_EXIT_USAGE;
        }
        wl_report_meta(report, "ranks", "%d", nprocs);
        wl_report_meta(report, "pair", "%d <-> %d (rank %d pings and times)", a, b, a);
        wl_report_meta(report, "iterations", "%d timed + %d warm-up per size (a tenth above 1M)",
                       o.iterations, o.warmup);
        wl_report_meta(report, "check", "%s", o.check ? "on" : "off");
        wl_report_meta(report, "time", "p2_wtime(), simulated; wall_s is host time per row");
    }
    uint64_t wrong = 0;
    int status = WL_EXIT_OK;
    if (me == a || me == b) {
        /* A times the timed iterations as one span; above 1M a tenth of the
         * iterations (rounded up) and one warm-up. */
        const wl_sweep_config config = {
            .min_bytes = o.min_bytes, .max_bytes = o.max_bytes, .factor = o.factor,
            .iterations = o.iterations, .warmup = o.warmup,
            .large_bytes = LARGE_MESSAGE_BYTES, .large_divisor = LARGE_MESSAGE_DIVISOR,
            .large_iterations = WL_SWEEP_SCALE_UP, .large_warmup = WL_SWEEP_SCALE_ONE,
            .timing = WL_SWEEP_TIME_SPAN, .across = WL_SWEEP_ACROSS_NONE, .timer = me == a,
            .check = o.check, .check_warmup = 1};
        const wl_sweep_transport transport = {.clock = clock_s};
        const wl_sweep_ops ops = {.setup = size_setup, .run = round_trip, .row = report_size};
        fp_sweep sweep = {.pinger = me == a, .peer = me == a ? b : a, .buf = buf};
        wl_sweep_run(&config, &transport, &ops, &sweep, report, &wrong);
    }
    fmpl_finalize(&ier);
    if (ier != FMPL_SUCCESS)
        return fail("fmpl_finalize", ier);
    if (me == a) {
        if (wl_report_close(report) != 0)
            status = WL_EXIT_FAILURE;
        if (wrong) {
            fprintf(stderr, "%s: %llu wrong bytes received\n", PROGRAM, (unsigned long long)wrong);
            status = WL_EXIT_FAILURE;
        }
    }
    return status;
}
