/*
 * stream - every rank streams one large DMA into a partner's memory at once:
 * aggregate bandwidth of the interconnect under load, in simulated time.
 *
 *   p2run -n N -- stream [-s SIZE] [--partner xor1|half|next] [-c 1|0]
 *                        [--csv FILE] [--json FILE]
 *
 * Every rank owns a send buffer and a receive buffer of SIZE bytes (tcaMalloc
 * host memory) and sends its send buffer into its partner's receive buffer:
 *   xor1  rank ^ 1            (pairs swap; needs an even number of ranks)
 *   half  (rank + N/2) % N    (across the middle of the job)
 *   next  (rank + 1) % N      (a ring)
 * Each mapping is a permutation, so every rank receives exactly one stream.
 *
 * Per rank: the chain of one transfer (notify the destination) is built and
 * loaded before the start; after p2_exchange_barrier every rank starts its channel,
 * waits for its incoming notification (tcaWaitDMARecvDesc), then for its own
 * channel (tcaWaitDMAC, untimed: a rank's clock cannot see both events at
 * their own times). Times are p2_wtime() (simulated, one timeline for all
 * ranks). With -c 1 each rank checks the bytes it received against the
 * sender's pattern. Rank 0 gathers every rank's times (p2_exchange) and prints
 * one row per stream "A->B":
 *   start_us        when A started, after the earliest start
 *   deliver_us      A's start to B seeing the notification (the data is there)
 *   bandwidth_GBps  bytes / deliver_us
 *   errors          wrong bytes B received from A
 * and a row "all": every byte, over the span from the earliest start to the
 * last delivery (aggregate bandwidth).
 *
 * -b/-e/-f/-n/-w do not apply: one stream of SIZE bytes per rank.
 */
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "p2.h"
#include "tca-api.h"
#include "wl_options.h"
#include "wl_pattern.h"
#include "wl_report.h"
#include "wl_tca.h"

#define PROGRAM "stream"

#define SIZE_DEFAULT (16u << 20)

/* DMA resources: one channel, one notification slot, a tag of the kind TCA
 * clients use. */
#define DMA_CHANNEL 0
#define STREAM_SLOT 0
#define NOTIFY_TAG 0x200

typedef enum st_partner { PARTNER_XOR1, PARTNER_HALF, PARTNER_NEXT, PARTNER_COUNT } st_partner;

static const char *const partner_names[PARTNER_COUNT] = {"xor1", "half", "next"};

typedef struct st_config {
    wl_common_options common;
    uint64_t size;            /* -s */
    const char *partner_text; /* --partner */
    st_partner partner;
} st_config;

typedef struct st_buffer {
    uint8_t *bytes;
    tcaHandle handle;
} st_buffer;

/* What a rank tells rank 0 after the stream (simulated seconds). */
typedef struct st_times {
    double start;     /* just before tcaStartDMADesc */
    double received;  /* the incoming notification was seen */
    uint64_t wrong;   /* wrong bytes received */
} st_times;

/* ---- Partners and pattern ----------------------------------------------------- */

static int partner_of(st_partner p, int rank, int size)
{
    switch (p) {
    case PARTNER_XOR1: return rank ^ 1;
    case PARTNER_HALF: return (rank + size / 2) % size;
    case PARTNER_NEXT: return (rank + 1) % size;
    case PARTNER_COUNT: break;
    }
    return -1;
}

/* The rank whose partner is `rank` (the mappings are permutations). */
static int sender_to(st_partner p, int rank, int size)
{
    for (int q = 0; q < size; q++)
        if (partner_of(p, q, size) == rank)
            return q;
    return -1;
}

/* ---- Options ------------------------------------------------------------------ */

/* A usage error every rank finds alike: rank 0 (or a process outside p2run)
 * names it and exits WL_EXIT_USAGE, which becomes the job's status; the other
 * ranks leave quietly with 0, so that p2run cannot end the job on their status
 * before rank 0 has printed the reason. */
static int usage_failure(const wl_program *program, const char *message)
{
    if (p2_rank() > 0)
        return WL_EXIT_OK;
    wl_usage_error(program, message);
    return WL_EXIT_USAGE;
}

/* The common flags this workload has no use for must keep their defaults. */
static int check_unused_flags(const wl_common_options *o, char *error, size_t error_size)
{
    wl_common_options d;
    wl_options_defaults(&d);
    const char *flag = o->min_bytes != d.min_bytes   ? "-b"
                       : o->max_bytes != d.max_bytes ? "-e"
                       : o->factor != d.factor       ? "-f"
                       : o->iterations != d.iterations ? "-n"
                       : o->warmup != d.warmup       ? "-w"
                                                     : NULL;
    if (!flag)
        return 0;
    snprintf(error, error_size, "%s does not apply: one stream of -s SIZE bytes per rank", flag);
    return -1;
}

static int parse_partner(st_config *c, char *error, size_t error_size)
{
    for (int p = 0; p < PARTNER_COUNT; p++) {
        if (strcmp(c->partner_text, partner_names[p]) == 0) {
            c->partner = (st_partner)p;
            return 0;
        }
    }
    snprintf(error, error_size, "--partner: '%s' is not xor1, half or next", c->partner_text);
    return -1;
}

/* After tcaInit: the partner mapping must fit the job. */
static int check_job(const st_config *c, int size, char *error, size_t error_size)
{
    if (size < 2) {
        snprintf(error, error_size, "needs at least 2 ranks (the job has %d)", size);
        return -1;
    }
    if (c->partner == PARTNER_XOR1 && size % 2 != 0) {
        snprintf(error, error_size,
                 "--partner xor1 needs an even number of ranks (the job has %d)", size);
        return -1;
    }
    if (c->size > TCA_DMA_MAX_LENGTH) {
        char text[32];
        snprintf(error, error_size, "-s: %s is above one DMA transfer's limit",
                 wl_format_size(c->size, text, sizeof text));
        return -1;
    }
    return 0;
}

/* ---- Report ------------------------------------------------------------------- */

enum { COL_STREAM, COL_BYTES, COL_START, COL_DELIVER, COL_BANDWIDTH, COL_ERRORS, COLUMN_COUNT };

static const wl_column columns[COLUMN_COUNT] = {
    [COL_STREAM] = {"stream", WL_COLUMN_TEXT, 7, 0},
    [COL_BYTES] = {"bytes", WL_COLUMN_INTEGER, 10, 0},
    [COL_START] = {"start_us", WL_COLUMN_REAL, 9, 3},
    [COL_DELIVER] = {"deliver_us", WL_COLUMN_REAL, 10, 3},
    [COL_BANDWIDTH] = {"bandwidth_GBps", WL_COLUMN_REAL, 14, 3},
    [COL_ERRORS] = {"errors", WL_COLUMN_INTEGER, 6, 0},
};

static void report_row(wl_report *report, const char *stream, uint64_t bytes, double start_s,
                       double deliver_s, uint64_t errors)
{
    const wl_cell row[COLUMN_COUNT] = {
        [COL_STREAM] = {.text = stream},
        [COL_BYTES] = {.integer = (int64_t)bytes},
        [COL_START] = {.real = start_s * WL_US_PER_S},
        [COL_DELIVER] = {.real = deliver_s * WL_US_PER_S},
        [COL_BANDWIDTH] = {.real = deliver_s > 0 ? (double)bytes / deliver_s / WL_BYTES_PER_GB : 0},
        [COL_ERRORS] = {.integer = (int64_t)errors},
    };
    wl_report_row(report, row);
}

/* Rank 0: every stream's row, then the aggregate. Returns the wrong bytes. */
static uint64_t report_all(wl_report *report, const st_config *c, const st_times *t, int size)
{
    double first_start = t[0].start, last_received = t[0].received;
    uint64_t wrong = 0;
    for (int r = 0; r < size; r++) {
        if (t[r].start < first_start)
            first_start = t[r].start;
        if (t[r].received > last_received)
            last_received = t[r].received;
    }
    for (int r = 0; r < size; r++) {
        int to = partner_of(c->partner, r, size);
        char stream[32];
        snprintf(stream, sizeof stream, "%d->%d", r, to);
        report_row(report, stream, c->size, t[r].start - first_start,
                   t[to].received - t[r].start, t[to].wrong);
        wrong += t[to].wrong;
    }
    report_row(report, "all", c->size * (uint64_t)size, 0, last_received - first_start, wrong);
    return wrong;
}

static void describe_run(wl_report *report, const st_config *c, int size)
{
    char text[32];
    wl_report_meta(report, "ranks", "%d", size);
    wl_report_meta(report, "size", "%s per rank", wl_format_size(c->size, text, sizeof text));
    wl_report_meta(report, "partner", "%s (%s)", partner_names[c->partner],
                   c->partner == PARTNER_XOR1   ? "rank ^ 1"
                   : c->partner == PARTNER_HALF ? "(rank + N/2) % N"
                                                : "(rank + 1) % N");
    wl_report_meta(report, "check", "%s", c->common.check ? "on (wrong bytes received counted)"
                                                          : "off");
    wl_report_meta(report, "time", "p2_wtime(), simulated; every rank starts after p2_exchange_barrier");
    wl_report_note(report, "row A->B: start_us after the earliest start; deliver_us from A's "
                           "start to B's notification");
    wl_report_note(report, "row all: every byte over the earliest start to the last delivery");
}

/* ---- Main ----------------------------------------------------------------------- */

static void allocate(st_buffer *b, uint64_t size)
{
    void *p = NULL;
    WL_TCA(tcaMalloc(&p, (size_t)size, tcaMemoryCPU));
    WL_TCA(tcaCreateHandle(&b->handle, p, (size_t)size, tcaMemoryCPU));
    b->bytes = p;
}

static void release(st_buffer *b)
{
    WL_TCA(tcaDestroyHandle(&b->handle));
    WL_TCA(tcaFree(b->bytes, tcaMemoryCPU));
}

/* Waits until the channel is idle, and names the hardware error if its run
 * failed. */
static void wait_channel(int channel)
{
    tcaresult r = tcaWaitDMAC(channel);
    if (r == TCA_ERROR_DMA_FAILED) {
        p2_error error = P2_OK;
        WL_TCA(tcaGetDMAError(channel, &error));
        fprintf(stderr, "%s: rank %d: DMA channel %d failed: %s\n", PROGRAM, p2_rank(), channel,
                p2_error_name(error));
    }
    WL_TCA(r);
}

int main(int argc, char **argv)
{
    wl_set_program_name(PROGRAM);
    st_config config = {.size = SIZE_DEFAULT, .partner_text = "xor1"};
    wl_options_defaults(&config.common);
    const wl_option own_options[] = {
        {"-s", WL_OPTION_SIZE, &config.size, "SIZE", "bytes every rank sends"},
        {"--partner", WL_OPTION_STRING, &config.partner_text, "MAP",
         "xor1 (rank^1), half ((rank+N/2)%N) or next ((rank+1)%N)"},
    };
    const wl_program program = {
        PROGRAM,
        "every rank DMAs -s bytes to a partner at once; aggregate bandwidth, simulated "
        "(-b/-e/-f/-n/-w do not apply)",
        own_options, sizeof own_options / sizeof own_options[0]};

    char error[256];
    switch (wl_parse(&program, argc, argv, &config.common, error, sizeof error)) {
    case WL_PARSE_HELP: wl_usage(&program, stdout); return WL_EXIT_OK;
    case WL_PARSE_ERROR: return usage_failure(&program, error);
    case WL_PARSE_OK: break;
    }
    if (config.size == 0)
        return usage_failure(&program, "-s: the size must be at least 1 byte");
    if (check_unused_flags(&config.common, error, sizeof error) != 0 ||
        parse_partner(&config, error, sizeof error) != 0)
        return usage_failure(&program, error);

    WL_TCA(tcaInit());
    int rank = p2_rank(), size = p2_size();
    if (check_job(&config, size, error, sizeof error) != 0)
        return usage_failure(&program, error);
    int to = partner_of(config.partner, rank, size);
    int from = sender_to(config.partner, rank, size);

    /* Rank 0 opens the report first, so a bad --csv/--json path ends the job
     * before any data moves (its exit status is the job's). */
    wl_report *report = NULL;
    if (rank == 0) {
        report = wl_report_open("TCA stream: every rank DMAs to a partner at once, simulated time",
                                columns, COLUMN_COUNT, config.common.csv_path,
                                config.common.json_path, error, sizeof error);
        if (!report) {
            wl_usage_error(&program, error);
            return WL_EXIT_USAGE;
        }
        describe_run(report, &config, size);
    }

    st_buffer send, recv;
    allocate(&send, config.size);
    allocate(&recv, config.size);
    wl_pattern_fill(send.bytes, config.size, rank);
    memset(recv.bytes, 0, (size_t)config.size);

    tcaHandle *handles = calloc((size_t)size, sizeof *handles);
    st_times *times = calloc((size_t)size, sizeof *times);
    if (!handles || !times)
        WL_TCA(TCA_ERROR_OUT_OF_MEMORY);
    WL_TCA(p2_exchange(&recv.handle, handles, sizeof recv.handle));

    tcaDesc *chain = tcaDescNew();
    if (!chain)
        WL_TCA(TCA_ERROR_OUT_OF_MEMORY);
    WL_TCA(tcaDescSetMemcpy(chain, &handles[to], 0, &send.handle, 0, (size_t)config.size,
                            tcaDMANotify, STREAM_SLOT, NOTIFY_TAG));
    WL_TCA(tcaDescSet(chain, DMA_CHANNEL));

    WL_TCA(p2_exchange_barrier());
    st_times mine = {.start = p2_wtime()};
    WL_TCA(tcaStartDMADesc(DMA_CHANNEL));
    WL_TCA(tcaWaitDMARecvDesc(&handles[from], STREAM_SLOT, NOTIFY_TAG));
    mine.received = p2_wtime();
    wait_channel(DMA_CHANNEL);
    if (config.common.check)
        mine.wrong = wl_pattern_count_wrong(recv.bytes, config.size, from);

    WL_TCA(p2_exchange(&mine, times, sizeof mine));
    WL_TCA(tcaDescFree(chain));
    release(&send);
    release(&recv);

    int status = WL_EXIT_OK;
    if (rank == 0) {
        uint64_t wrong = report_all(report, &config, times, size);
        if (wl_report_close(report) != 0)
            status = WL_EXIT_FAILURE;
        if (wrong) {
            fprintf(stderr, "%s: %llu wrong bytes received\n", PROGRAM, (unsigned long long)wrong);
            status = WL_EXIT_FAILURE;
        }
    }
    free(handles);
    free(times);
    return status;
}
