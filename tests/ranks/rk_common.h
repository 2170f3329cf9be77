/*
 * rk_common.h - helpers shared by the real-rank tests (tests/ranks): rank
 * programs run by p2run that drive the TCA API and check every byte.
 *
 *  - dying on an error: RK_TCA(call) (the call must succeed), RK_EXPECT(call,
 *    status) (the call must return exactly `status`), rk_fail(...). A failure
 *    prints "rank R: FAIL: ..." on stderr and exits 1, which ends the job.
 *  - data: rk_pattern(seed, i) is byte i of pattern `seed`, a hash of both
 *    (so a copy shifted by any distance, or a stale copy, shows); guard bytes
 *    are pattern RK_GUARD_SEED. rk_fill / rk_check over ranges of buffers.
 *  - a simple point-to-point signal between two ranks (rk_link): an 8-byte DMA
 *    with a notification on RK_SIGNAL_SLOT, on channel RK_SIGNAL_CHANNEL.
 *
 * All functions are static: each test is one C file including this header.
 */
#ifndef RK_COMMON_H
#define RK_COMMON_H

#include <inttypes.h>
#include <stdarg.h>
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "p2.h"
#include "tca-api.h"

/* ---- Failing ----------------------------------------------------------------- */

static inline void rk_fail(const char *fmt, ...) __attribute__((format(printf, 1, 2), noreturn));
static inline void rk_fail(const char *fmt, ...)
{
    va_list ap;
    va_start(ap, fmt);
    fprintf(stderr, "rank %d: FAIL: ", p2_rank());
    vfprintf(stderr, fmt, ap);
    fputc('\n', stderr);
    va_end(ap);
    fflush(stdout);
    exit(1);
}

static inline void rk_tca_check(tcaresult got, tcaresult want, const char *call, const char *file,
                         int line)
{
    if (got != want)
        rk_fail("%s:%d: %s returned %d (%s), expected %d (%s)", file, line, call, (int)got,
                tcaGetErrorString(got), (int)want, tcaGetErrorString(want));
}

/* The call must succeed. */
#define RK_TCA(call) rk_tca_check((call), TCA_SUCCESS, #call, __FILE__, __LINE__)
/* The call must return exactly `want`. */
#define RK_EXPECT(call, want) rk_tca_check((call), (want), #call, __FILE__, __LINE__)

/* ---- Data -------------------------------------------------------------------- */

#define RK_GUARD_SEED 0x6a09e667u

static inline uint8_t rk_pattern(uint32_t seed, uint64_t i)
{
    uint64_t x = i * 0x9e3779b97f4a7c15ULL + (uint64_t)seed * 0xc2b2ae3d27d4eb4fULL;
    x ^= x >> 29;
    x *= 0xbf58476d1ce4e5b9ULL;
    x ^= x >> 32;
    return (uint8_t)x;
}

/* bytes[i] = pattern(seed, base + i) for i in [0, n). */
static inline void rk_fill(uint8_t *bytes, uint64_t n, uint32_t seed, uint64_t base)
{
    for (uint64_t i = 0; i < n; i++)
        bytes[i] = rk_pattern(seed, base + i);
}

/* Guard bytes over [from, to) of a buffer (indexed by buffer position). */
static inline void rk_guard(uint8_t *buf, uint64_t from, uint64_t to)
{
    for (uint64_t i = from; i < to; i++)
        buf[i] = rk_pattern(RK_GUARD_SEED, i);
}

/* Checks bytes[i] == pattern(seed, base + i) for i in [0, n); on a mismatch
 * fails naming `what`, the first wrong byte and how many are wrong. `at` is
 * the position of bytes[0] in its buffer, for the message. */
static inline void rk_check(const uint8_t *bytes, uint64_t n, uint32_t seed, uint64_t base,
                     uint64_t at, const char *what)
{
    uint64_t wrong = 0, first = 0;
    for (uint64_t i = 0; i < n; i++) {
        if (bytes[i] != rk_pattern(seed, base + i) && wrong++ == 0)
            first = i;
    }
    if (wrong)
        rk_fail("%s: %" PRIu64 " of %" PRIu64 " bytes wrong, first at buffer offset %" PRIu64
                " (got 0x%02x, want 0x%02x)",
                what, wrong, n, at + first, bytes[first], rk_pattern(seed, base + first));
}

/* Checks that [from, to) of buf still holds its guard bytes. */
static inline void rk_check_guard(const uint8_t *buf, uint64_t from, uint64_t to, const char *what)
{
    uint64_t wrong = 0, first = 0;
    for (uint64_t i = from; i < to; i++) {
        if (buf[i] != rk_pattern(RK_GUARD_SEED, i) && wrong++ == 0)
            first = i;
    }
    if (wrong)
        rk_fail("%s: guard bytes [%" PRIu64 ", %" PRIu64 ") overwritten: %" PRIu64
                " wrong, first at buffer offset %" PRIu64,
                what, from, to, wrong, first);
}

/* ---- Memory ------------------------------------------------------------------ */

typedef struct rk_buf {
    uint8_t *bytes;
    size_t size;
    tcaMemoryKind kind;
    tcaHandle handle;
} rk_buf;

static inline void rk_alloc(rk_buf *b, size_t size, tcaMemoryKind kind)
{
    void *p = NULL;
    RK_TCA(tcaMalloc(&p, size, kind));
    RK_TCA(tcaCreateHandle(&b->handle, p, size, kind));
    b->bytes = p;
    b->size = size;
    b->kind = kind;
}

static inline void rk_release(rk_buf *b)
{
    if (!b->bytes)
        return;
    RK_TCA(tcaDestroyHandle(&b->handle));
    RK_TCA(tcaFree(b->bytes, b->kind));
    b->bytes = NULL;
}

static inline const char *rk_kind_name(tcaMemoryKind kind)
{
    return kind == tcaMemoryGPU ? "gpu" : "cpu";
}

/* ---- DMA --------------------------------------------------------------------- */

/* Waits for the channel to go idle; names the hardware error if it failed. */
static inline void rk_wait_channel(int channel)
{
    tcaresult r = tcaWaitDMAC(channel);
    if (r == TCA_ERROR_DMA_FAILED) {
        p2_error e = P2_OK;
        tcaGetDMAError(channel, &e);
        rk_fail("DMA channel %d failed: %s", channel, p2_error_name(e));
    }
    RK_TCA(r);
}

/* One transfer, as its own chain on `channel`: set, start, wait idle, free. */
static inline void rk_dma_once(int channel, const tcaHandle *dst, size_t dst_off, const tcaHandle *src,
                        size_t src_off, size_t size, int flags, int slot, int tag)
{
    tcaDesc *d = tcaDescNew();
    if (!d)
        rk_fail("tcaDescNew: out of memory");
    RK_TCA(tcaDescSetMemcpy(d, dst, dst_off, src, src_off, size, flags, slot, tag));
    RK_TCA(tcaDescSet(d, channel));
    RK_TCA(tcaStartDMADesc(channel));
    rk_wait_channel(channel);
    RK_TCA(tcaDescFree(d));
}

/* ---- Signals between two ranks ----------------------------------------------- */

#define RK_SIGNAL_CHANNEL (TCA_DMA_CHANNELS - 1)
#define RK_SIGNAL_SLOT (TCA_WAIT_SLOTS - 1)
#define RK_SIGNAL_TAG 0x5157
#define RK_SIGNAL_BYTES 64

/* This rank's end of a signal link to one peer: a small host buffer each side
 * (published with p2_exchange), and a persistent one-transfer chain to the peer's. */
typedef struct rk_link {
    rk_buf mine;
    tcaHandle peer;
    tcaDesc *chain;
} rk_link;

/* Allocates the link's buffer; publish link->mine.handle, then rk_link_connect. */
static inline void rk_link_alloc(rk_link *l)
{
    rk_alloc(&l->mine, RK_SIGNAL_BYTES, tcaMemoryCPU);
    memset(l->mine.bytes, 0, RK_SIGNAL_BYTES);
}

static inline void rk_link_connect(rk_link *l, const tcaHandle *peer)
{
    l->peer = *peer;
    l->chain = tcaDescNew();
    if (!l->chain)
        rk_fail("tcaDescNew: out of memory");
    RK_TCA(tcaDescSetMemcpy(l->chain, &l->peer, 0, &l->mine.handle, 0, 8, tcaDMANotify,
                            RK_SIGNAL_SLOT, RK_SIGNAL_TAG));
}

/* Tells the peer "go on" (its rk_signal_wait returns). */
static inline void rk_signal(rk_link *l)
{
    RK_TCA(tcaDescSet(l->chain, RK_SIGNAL_CHANNEL));
    RK_TCA(tcaStartDMADesc(RK_SIGNAL_CHANNEL));
    rk_wait_channel(RK_SIGNAL_CHANNEL);
}

static inline void rk_signal_wait(void)
{
    RK_TCA(tcaWaitDMARecvDesc(NULL, RK_SIGNAL_SLOT, RK_SIGNAL_TAG));
}

static inline void rk_link_close(rk_link *l)
{
    if (l->chain)
        RK_TCA(tcaDescFree(l->chain));
    l->chain = NULL;
    rk_release(&l->mine);
}

/* ---- Start-up ------------------------------------------------------------------ */

/* tcaInit, and the job must have at least `min_ranks` ranks. */
static inline void rk_init(int min_ranks)
{
    if (p2_rank() < 0)
        rk_fail("run me under p2run");
    RK_TCA(tcaInit());
    if (p2_size() < min_ranks)
        rk_fail("needs at least %d ranks (p2run -n %d), got %d", min_ranks, min_ranks,
                p2_size());
}

/* "A,B" into two distinct ranks of the job. */
static inline void rk_parse_pair(const char *text, int *a, int *b)
{
    int end = 0;
    if (sscanf(text, "%d,%d%n", a, b, &end) != 2 || text[end] || *a == *b || *a < 0 ||
        *b < 0 || *a >= p2_size() || *b >= p2_size())
        rk_fail("bad pair '%s' for a job of %d ranks", text, p2_size());
}

#endif /* RK_COMMON_H */
