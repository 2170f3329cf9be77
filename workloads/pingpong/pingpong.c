/*
 * pingpong - latency and bandwidth between two ranks of a TCA cluster, in
 * simulated time: PIO CPU to CPU, DMA CPU to CPU, DMA GPU to GPU.
 *
 *   p2run -n 2 -- pingpong [-p A,B] [-m pio|dma|dma-gpu|all] [-i] [--pio-max SIZE]
 *                          [-b MIN] [-e MAX] [-f FACTOR] [-n ITERS] [-w WARMUP]
 *                          [-c 1|0] [--csv FILE] [--json FILE]
 *
 * Rank A pings, rank B echoes: each iteration A sends `size` bytes to B and,
 * once they have arrived, B sends the same bytes back from where they landed.
 * A times the round trip with p2_wtime() (simulated seconds); latency is half
 * of it averaged over the timed iterations (as OSU defines it), bandwidth is
 * size / latency. With -c 1 A fills its send buffer with a pattern that
 * changes every iteration and checks what comes back, so corruption on either
 * leg is counted.
 *
 * How each mode moves a message and detects its arrival:
 *   pio      [data | padding to 8 bytes | flag word] goes through the PIO
 *            window in one stream of CPU stores, the flag last, then a commit;
 *            the receiver waits (p2_wait_u64) for the flag word to hold this
 *            message's sequence number. B echoes the message, flag included,
 *            straight from its receive buffer.
 *   dma      per size, one chain of one transfer, built and loaded
 *            (tcaDescSet) once, started every iteration (tcaStartDMADesc); the
 *            transfer raises (slot, tag) at the destination (tcaDMANotify),
 *            which the receiver waits for (tcaWaitDMARecvDesc). B's chain
 *            copies its receive buffer into A's.
 *   dma-gpu  the same between GPU memory buffers.
 *
 * Ranks swap their receive buffers' handles with p2_exchange (no MPI needed);
 * ranks other than A and B take part in that exchange only, then exit 0.
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
#include "wl_sweep.h"
#include "wl_tca.h"

#define PROGRAM "pingpong"

/* PIO stops at this size by default: a PIO message is simulated store by
 * store (one packet per CPU store), so megabytes would take very long. */
#define PIO_MAX_DEFAULT (64u << 10)
/* Above this size, fewer iterations: OSU's large-message treatment. */
#define LARGE_MESSAGE_BYTES (1u << 20)
#define LARGE_MESSAGE_DIVISOR 10

/* The PIO flag word that follows a message (8-byte aligned, so p2_wait_u64
 * can watch it). */
#define FLAG_BYTES sizeof(uint64_t)

/* DMA resources: one channel per rank; each direction its own notification
 * slot; a tag of the kind TCA clients use. */
#define DMA_CHANNEL 0
#define PING_SLOT 0
#define PONG_SLOT 1
#define NOTIFY_TAG 0x100

typedef enum pp_mode { MODE_PIO, MODE_DMA, MODE_DMA_GPU, MODE_COUNT } pp_mode;

static const char *const mode_names[MODE_COUNT] = {"pio", "dma", "dma-gpu"};

/* What every rank publishes through p2_exchange: its receive buffer of each
 * mode (zeroed handles where a mode does not run). */
typedef struct pp_published {
    tcaHandle recv[MODE_COUNT];
} pp_published;

#define EXCHANGE_BLOB_MAX 240 /* p2_exchange's limit (p2.h) */
_Static_assert(sizeof(pp_published) <= EXCHANGE_BLOB_MAX, "fits one p2_exchange blob");

typedef struct pp_buffer {
    uint8_t *bytes;
    size_t size;
    tcaHandle handle;
} pp_buffer;

/* One mode's buffers on this rank. */
typedef struct pp_lane {
    tcaMemoryKind kind;
    pp_buffer send;      /* rank A's outgoing messages */
    pp_buffer recv;      /* where the peer's messages land */
    tcaHandle peer_recv; /* the peer's receive buffer */
} pp_lane;

typedef struct pp_config {
    wl_common_options common;
    const char *pair_text; /* -p */
    const char *mode_text; /* -m */
    int register_mode;     /* -i */
    int notify_table;      /* --notify-internal */
    uint64_t pio_max;      /* --pio-max */
    int rank_a, rank_b;
    int runs[MODE_COUNT];
} pp_config;

typedef struct pp_state {
    const pp_config *config;
    int pinger;        /* this rank is A */
    uint64_t sequence; /* messages sent so far, by A and B alike: the PIO flag */
    pp_lane lanes[MODE_COUNT];
    uint64_t wrong_bytes;
    /* The mode being swept, and its size's transfer: a PIO window or a
     * chain of one DMA. */
    pp_mode mode;
    tcaPIOHandle window;
    tcaDesc *chain;
} pp_state;

/* ---- Sizes ----------------------------------------------------------------- */

/* The largest size a mode runs (0: none). */
static uint64_t mode_max_size(const pp_config *c, pp_mode mode)
{
    if (!c->runs[mode])
        return 0;
    uint64_t max = c->common.max_bytes;
    if (mode == MODE_PIO && c->pio_max < max)
        max = c->pio_max;
    return max >= c->common.min_bytes ? max : 0;
}

/* Where the flag word of a PIO message of `size` bytes sits. */
static size_t flag_offset(uint64_t size)
{
    return (size_t)((size + FLAG_BYTES - 1) / FLAG_BYTES * FLAG_BYTES);
}

/* ---- Transfers ------------------------------------------------------------- */

/* [message | padding | flag = sequence] into the peer's buffer, flag last. */
static void pio_send(const tcaPIOHandle *window, uint8_t *message, uint64_t size,
                     uint64_t sequence)
{
    size_t flag_at = flag_offset(size);
    memcpy(message + flag_at, &sequence, FLAG_BYTES);
    WL_TCA(tcaSendPIO(window, 0, message, flag_at + FLAG_BYTES));
    WL_TCA(tcaSendPIOCommit());
}

static void pio_wait(const uint8_t *buffer, uint64_t size, uint64_t sequence)
{
    WL_TCA(p2_wait_u64((const volatile uint64_t *)(buffer + flag_offset(size)), sequence));
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

/* ---- One size (the sweep's callbacks, wl_sweep.h) ---------------------------- */

/* A chain of one transfer from `src` to `dst` raising `slot` there. */
static tcaDesc *one_transfer_chain(const pp_config *c, const tcaHandle *dst,
                                   const tcaHandle *src, uint64_t size, int slot)
{
    tcaDesc *chain = tcaDescNew();
    if (!chain)
        WL_TCA(TCA_ERROR_OUT_OF_MEMORY);
    int flags = tcaDMANotify | (c->register_mode ? tcaDMAUseInternal : 0) |
                (c->notify_table ? tcaDMAUseNotifyInternal : 0);
    WL_TCA(tcaDescSetMemcpy(chain, dst, 0, src, 0, size, flags, slot, NOTIFY_TAG));
    WL_TCA(tcaDescSet(chain, DMA_CHANNEL));
    return chain;
}

static double clock_s(void) { return p2_wtime(); }

/* The size's transfer: A's chain sends its send buffer, B's echoes what
 * landed in its receive buffer. */
static int setup_size(void *ctx, const wl_sweep_size *size)
{
    pp_state *s = ctx;
    pp_lane *lane = &s->lanes[s->mode];
    s->chain = NULL;
    if (s->mode == MODE_PIO) {
        WL_TCA(tcaSetPIORegion(&s->window, &lane->peer_recv, 0,
                               flag_offset(size->bytes) + FLAG_BYTES));
    } else if (s->pinger) {
        s->chain = one_transfer_chain(s->config, &lane->peer_recv, &lane->send.handle,
                                      size->bytes, PING_SLOT);
    } else {
        s->chain = one_transfer_chain(s->config, &lane->peer_recv, &lane->recv.handle,
                                      size->bytes, PONG_SLOT);
    }
    return 0;
}

/* A and B count `sequence` alike; with -c A's message changes every time. */
static void next_message(void *ctx, wl_sweep_iteration *it)
{
    pp_state *s = ctx;
    uint64_t sequence = ++s->sequence;
    if (s->pinger && s->config->common.check)
        wl_pattern_fill(s->lanes[s->mode].send.bytes, it->size->bytes, sequence);
}

/* One round trip: A sends and waits for the echo (what A times); B waits
 * and echoes. */
static int round_trip(void *ctx, wl_sweep_iteration *it)
{
    pp_state *s = ctx;
    pp_lane *lane = &s->lanes[s->mode];
    uint64_t size = it->size->bytes, sequence = s->sequence;
    if (s->pinger) {
        if (s->mode == MODE_PIO) {
            pio_send(&s->window, lane->send.bytes, size, sequence);
            pio_wait(lane->recv.bytes, size, sequence);
        } else {
            WL_TCA(tcaStartDMADesc(DMA_CHANNEL));
            WL_TCA(tcaWaitDMARecvDesc(&lane->peer_recv, PONG_SLOT, NOTIFY_TAG));
        }
    } else if (s->mode == MODE_PIO) {
        pio_wait(lane->recv.bytes, size, sequence);
        pio_send(&s->window, lane->recv.bytes, size, sequence);
    } else {
        WL_TCA(tcaWaitDMARecvDesc(&lane->peer_recv, PING_SLOT, NOTIFY_TAG));
        WL_TCA(tcaStartDMADesc(DMA_CHANNEL));
    }
    return WL_SWEEP_RAN;
}

/* Outside the timed span: the channel must be idle before the next start
 * (at A it has long finished by the time the echo came); A counts the wrong
 * bytes of the echo. */
static void after_round_trip(void *ctx, wl_sweep_iteration *it)
{
    pp_state *s = ctx;
    if (s->mode != MODE_PIO)
        wait_channel(DMA_CHANNEL);
    if (s->pinger && it->check)
        it->wrong += wl_pattern_count_wrong(s->lanes[s->mode].recv.bytes, it->size->bytes,
                                            s->sequence);
}

static void free_chain(void *ctx, const wl_sweep_size *size)
{
    pp_state *s = ctx;
    (void)size;
    if (s->chain)
        WL_TCA(tcaDescFree(s->chain));
    s->chain = NULL;
}

/* ---- Set-up ------------------------------------------------------------------ */

static void allocate(pp_buffer *b, size_t size, tcaMemoryKind kind)
{
    void *p = NULL;
    WL_TCA(tcaMalloc(&p, size, kind));
    memset(p, 0, size);
    WL_TCA(tcaCreateHandle(&b->handle, p, size, kind));
    b->bytes = p;
    b->size = size;
}

/* This rank's buffers of every mode that runs; the PIO receive buffer first,
 * so that it lies early in host memory, where the PIO window reaches. */
static void allocate_lanes(pp_state *s)
{
    for (int m = 0; m < MODE_COUNT; m++) {
        pp_lane *lane = &s->lanes[m];
        lane->kind = m == MODE_DMA_GPU ? tcaMemoryGPU : tcaMemoryCPU;
        uint64_t max = mode_max_size(s->config, (pp_mode)m);
        if (!max)
            continue;
        size_t size = m == MODE_PIO ? flag_offset(max) + FLAG_BYTES : (size_t)max;
        allocate(&lane->recv, size, lane->kind);
        if (s->pinger)
            allocate(&lane->send, size, lane->kind);
    }
}

static void free_lanes(pp_state *s)
{
    for (int m = 0; m < MODE_COUNT; m++) {
        pp_buffer *buffers[] = {&s->lanes[m].send, &s->lanes[m].recv};
        for (size_t b = 0; b < sizeof buffers / sizeof buffers[0]; b++) {
            if (!buffers[b]->bytes)
                continue;
            WL_TCA(tcaDestroyHandle(&buffers[b]->handle));
            WL_TCA(tcaFree(buffers[b]->bytes, s->lanes[m].kind));
        }
    }
}

/* ---- Options ----------------------------------------------------------------- */

/* A usage error, found alike by every rank, is printed and returned by rank 0
 * (or by a process outside p2run) alone: the others leave quietly with 0, so
 * the job's status is rank 0's and it cannot end before rank 0 has spoken. */
static int usage_failure(const wl_program *program, const char *message)
{
    if (p2_rank() > 0)
        return WL_EXIT_OK;
    wl_usage_error(program, message);
    return WL_EXIT_USAGE;
}

/* -p A,B into the config. Returns 0, or -1 with `error` set. */
static int parse_pair(pp_config *c, char *error, size_t error_size)
{
    int a, b, end = 0;
    if (sscanf(c->pair_text, "%d,%d%n", &a, &b, &end) != 2 || c->pair_text[end] != '\0' ||
        a < 0 || b < 0) {
        snprintf(error, error_size, "-p: '%s' is not two ranks A,B", c->pair_text);
        return -1;
    }
    if (a == b) {
        snprintf(error, error_size, "-p: '%s' names rank %d twice", c->pair_text, a);
        return -1;
    }
    c->rank_a = a;
    c->rank_b = b;
    return 0;
}

/* -m into the config. Returns 0, or -1 with `error` set. */
static int parse_mode(pp_config *c, char *error, size_t error_size)
{
    if (strcmp(c->mode_text, "all") == 0) {
        for (int m = 0; m < MODE_COUNT; m++)
            c->runs[m] = 1;
        return 0;
    }
    for (int m = 0; m < MODE_COUNT; m++) {
        if (strcmp(c->mode_text, mode_names[m]) == 0) {
            c->runs[m] = 1;
            return 0;
        }
    }
    snprintf(error, error_size, "-m: '%s' is not pio, dma, dma-gpu or all", c->mode_text);
    return -1;
}

/* ---- Report ------------------------------------------------------------------ */

enum { COL_MODE, COL_BYTES, COL_ITERS, COL_LATENCY, COL_BANDWIDTH, COL_ERRORS, COL_WALL,
       COLUMN_COUNT };

static const wl_column columns[COLUMN_COUNT] = {
    [COL_MODE] = {"mode", WL_COLUMN_TEXT, 7, 0},
    [COL_BYTES] = {"bytes", WL_COLUMN_INTEGER, 10, 0},
    [COL_ITERS] = {"iters", WL_COLUMN_INTEGER, 5, 0},
    [COL_LATENCY] = {"latency_us", WL_COLUMN_REAL, 10, 3},
    [COL_BANDWIDTH] = {"bandwidth_GBps", WL_COLUMN_REAL, 14, 3},
    [COL_ERRORS] = {"errors", WL_COLUMN_INTEGER, 6, 0},
    [COL_WALL] = {"wall_s", WL_COLUMN_REAL, 8, 3},
};

static void describe_run(wl_report *report, const pp_config *c, int size)
{
    const wl_common_options *o = &c->common;
    char text[64];
    wl_report_meta(report, "ranks", "%d", size);
    wl_report_meta(report, "pair", "%d <-> %d (rank %d pings and times, rank %d echoes)",
                   c->rank_a, c->rank_b, c->rank_a, c->rank_b);
    wl_report_meta(report, "iterations", "%d timed + %d warm-up per size; above %s: %d + %d",
                   o->iterations, o->warmup,
                   wl_format_size(LARGE_MESSAGE_BYTES, text, sizeof text),
                   wl_sweep_scaled(o->iterations, WL_SWEEP_SCALE_DOWN, LARGE_MESSAGE_DIVISOR),
                   wl_sweep_scaled(o->warmup, WL_SWEEP_SCALE_DOWN, LARGE_MESSAGE_DIVISOR));
    wl_report_meta(report, "check", "%s", o->check ? "on (wrong bytes of the echo counted)"
                                                   : "off");
    wl_report_meta(report, "dma descriptors", "%s",
                   c->register_mode ? "chip registers (-i)" : "host memory (chain mode)");
    wl_report_meta(report, "notifications", "%s",
                   c->notify_table ? "the chip's table, polled by MMIO reads (--notify-internal)"
                                   : "the ring in host memory");
    wl_report_meta(report, "time", "p2_wtime(), simulated; wall_s is host time per row");
    wl_report_meta(report, "gpu memory", "the node's GPU arena, timed by the model");
    if (c->runs[MODE_PIO])
        wl_report_note(report,
                       "PIO runs only up to --pio-max %s: a PIO message is simulated store by "
                       "store, so megabytes would simulate millions of 8-byte stores",
                       wl_format_size(c->pio_max, text, sizeof text));
}

/* A's row: latency half the mean round trip (OSU), bandwidth size / latency. */
static void report_size(void *ctx, const wl_sweep_result *r, wl_cell *row)
{
    const pp_state *s = ctx;
    uint64_t bytes = r->size.bytes;
    double latency_s = r->total_s / (2.0 * r->size.iterations);
    row[COL_MODE].text = mode_names[s->mode];
    row[COL_BYTES].integer = (int64_t)bytes;
    row[COL_ITERS].integer = r->size.iterations;
    row[COL_LATENCY].real = latency_s * WL_US_PER_S;
    row[COL_BANDWIDTH].real = (double)bytes / latency_s / WL_BYTES_PER_GB;
    row[COL_ERRORS].integer = (int64_t)r->wrong;
    row[COL_WALL].real = r->wall_s;
}

/* ---- Main -------------------------------------------------------------------- */

int main(int argc, char **argv)
{
    wl_set_program_name(PROGRAM);
    pp_config config = {.pair_text = "0,1", .mode_text = "all", .pio_max = PIO_MAX_DEFAULT};
    wl_options_defaults(&config.common);
    const wl_option own_options[] = {
        {"-p", WL_OPTION_STRING, &config.pair_text, "A,B", "the two ranks: A pings, B echoes"},
        {"-m", WL_OPTION_STRING, &config.mode_text, "MODE", "pio, dma, dma-gpu or all"},
        {"-i", WL_OPTION_FLAG, &config.register_mode, "",
         "DMA descriptors in chip registers (tcaDMAUseInternal)"},
        {"--notify-internal", WL_OPTION_FLAG, &config.notify_table, "",
         "notifications in the chip's table, polled by MMIO reads (tcaDMAUseNotifyInternal)"},
        {"--pio-max", WL_OPTION_SIZE, &config.pio_max, "SIZE",
         "largest PIO message (PIO is simulated store by store)"},
    };
    const wl_program program = {
        PROGRAM, "ping-pong latency and bandwidth between two ranks, in simulated time",
        own_options, sizeof own_options / sizeof own_options[0]};

    char error[256];
    switch (wl_parse(&program, argc, argv, &config.common, error, sizeof error)) {
    case WL_PARSE_HELP: wl_usage(&program, stdout); return WL_EXIT_OK;
    case WL_PARSE_ERROR: return usage_failure(&program, error);
    case WL_PARSE_OK: break;
    }
    if (parse_pair(&config, error, sizeof error) != 0 ||
        parse_mode(&config, error, sizeof error) != 0)
        return usage_failure(&program, error);

    WL_TCA(tcaInit());
    int rank = p2_rank(), size = p2_size();
    if (config.rank_a >= size || config.rank_b >= size) {
        snprintf(error, sizeof error, "-p: the job has %d rank%s, so no rank %d", size,
                 size == 1 ? "" : "s", config.rank_a >= size ? config.rank_a : config.rank_b);
        return usage_failure(&program, error);
    }

    pp_state state = {.config = &config, .pinger = rank == config.rank_a};
    int in_pair = rank == config.rank_a || rank == config.rank_b;
    if (in_pair)
        allocate_lanes(&state);

    /* Everyone publishes; the pair picks out the other's buffers. */
    pp_published mine = {0};
    for (int m = 0; m < MODE_COUNT; m++)
        mine.recv[m] = state.lanes[m].recv.handle;
    pp_published *all = calloc((size_t)size, sizeof *all);
    if (!all)
        WL_TCA(TCA_ERROR_OUT_OF_MEMORY);
    WL_TCA(p2_exchange(&mine, all, sizeof mine));
    if (!in_pair) {
        free(all);
        return WL_EXIT_OK;
    }
    int peer = state.pinger ? config.rank_b : config.rank_a;
    for (int m = 0; m < MODE_COUNT; m++)
        state.lanes[m].peer_recv = all[peer].recv[m];
    free(all);

    wl_report *report = NULL;
    if (state.pinger) {
        report = wl_report_open("TCA ping-pong, simulated time (latency = half the round trip)",
                                columns, COLUMN_COUNT, config.common.csv_path,
                                config.common.json_path, error, sizeof error);
        if (!report) {
            wl_usage_error(&program, error); /* rank A is the only one that knows */
            return WL_EXIT_USAGE;
        }
        describe_run(report, &config, size);
    }

    /* Each mode a sweep: A times every round trip on its own; above 1 MiB
     * a tenth of the iterations and warm-ups (at least one of each). */
    const wl_sweep_transport transport = {.clock = clock_s};
    const wl_sweep_ops ops = {.setup = setup_size, .prepare = next_message, .run = round_trip,
                              .check = after_round_trip, .row = report_size,
                              .teardown = free_chain};
    for (int m = 0; m < MODE_COUNT; m++) {
        uint64_t max = mode_max_size(&config, (pp_mode)m);
        if (!max)
            continue;
        const wl_common_options *o = &config.common;
        const wl_sweep_config sweep = {
            .min_bytes = o->min_bytes, .max_bytes = max, .factor = o->factor,
            .iterations = o->iterations, .warmup = o->warmup,
            .large_bytes = LARGE_MESSAGE_BYTES, .large_divisor = LARGE_MESSAGE_DIVISOR,
            .large_iterations = WL_SWEEP_SCALE_DOWN, .large_warmup = WL_SWEEP_SCALE_DOWN,
            .timing = WL_SWEEP_TIME_EACH, .across = WL_SWEEP_ACROSS_NONE,
            .timer = state.pinger, .check = o->check, .check_warmup = 1};
        state.mode = (pp_mode)m;
        wl_sweep_run(&sweep, &transport, &ops, &state, report, &state.wrong_bytes);
    }

    free_lanes(&state);
    int status = WL_EXIT_OK;
    if (state.pinger) {
        if (wl_report_close(report) != 0)
            status = WL_EXIT_FAILURE;
        if (state.wrong_bytes) {
            fprintf(stderr, "%s: %llu wrong bytes received\n", PROGRAM,
                    (unsigned long long)state.wrong_bytes);
            status = WL_EXIT_FAILURE;
        }
    }
    return status;
}
