/*
 * rk_pio: PIO through the TCA API, p2run -n 2. Rank 0 writes messages of odd
 * sizes (1 .. 4096 bytes) at odd offsets into rank 1's host memory with
 * tcaSendPIO, then a flag word, then tcaSendPIOCommit; rank 1 waits for the
 * flag, checks the message and the guard bytes around it, restores them and
 * acknowledges by PIO the other way.
 *
 *   rk_pio        receivers wait with p2_wait_u64 (any --clock);
 *   rk_pio spin   the receiver spins on the flag with plain volatile loads,
 *                 as clients do, never calling the library while it waits
 *                 (needs p2run --clock=cpu: under the model clock such a loop
 *                 holds simulated time still). The sender still waits for the
 *                 acknowledgement with p2_wait_u64: with both ranks spinning,
 *                 the simulator shares two cores with two busy loops and
 *                 each message took about 0.3 s of wall time.
 * Two ways of sending each message: the flag at a fixed place in a second
 * tcaSendPIO call, and [message | padding | flag] in one call with the flag
 * right after the message (as the ping-pong does).
 */
#include <string.h>

#include "rk_common.h"

#define SENDER 0
#define RECEIVER 1
#define DATA_BYTES 8192  /* message area, guarded */
#define FLAG_OFF DATA_BYTES
#define BUF_BYTES (DATA_BYTES + 64)

static const size_t sizes[] = {1,  2,   3,   5,   7,   8,    9,    15,   16,   17,   63,
                               64, 65,  127, 255, 256, 257,  1000, 1023, 2049, 4095, 4096};
#define NSIZES (sizeof sizes / sizeof sizes[0])
static const size_t offsets[] = {0, 1, 3, 13};
#define NOFFSETS (sizeof offsets / sizeof offsets[0])

typedef struct published {
    tcaHandle buf;
} published;

static int spin;

static size_t align8(size_t x) { return (x + 7) & ~(size_t)7; }

/* The receiver's wait for a message's flag word. */
static void wait_word(volatile uint64_t *word, uint64_t value)
{
    if (spin) {
        while (*word != value) {
            /* plain loads only */
        }
    } else {
        RK_TCA(p2_wait_u64(word, value));
    }
}

int main(int argc, char **argv)
{
    spin = argc > 1 && strcmp(argv[1], "spin") == 0;
    if (argc > 1 && !spin)
        rk_fail("usage: rk_pio [spin]");
    rk_init(2);
    const int rank = p2_rank();
    if (p2_size() != 2)
        rk_fail("run with p2run -n 2");
    rk_buf buf;
    rk_alloc(&buf, BUF_BYTES, tcaMemoryCPU);
    rk_guard(buf.bytes, 0, BUF_BYTES);
    memset(buf.bytes + FLAG_OFF, 0, 8);
    published mine = {buf.handle}, all[2];
    RK_TCA(p2_exchange(&mine, all, sizeof mine));
    tcaPIOHandle win;
    RK_TCA(tcaSetPIORegion(&win, &all[1 - rank].buf, 0, BUF_BYTES));

    uint8_t msg[BUF_BYTES];
    uint64_t seq = 0;
    unsigned cases = 0;
    volatile uint64_t *flag = (volatile uint64_t *)(buf.bytes + FLAG_OFF);
    for (int inline_flag = 0; inline_flag < 2; inline_flag++) {
        for (size_t s = 0; s < NSIZES; s++) {
            for (size_t o = 0; o < NOFFSETS; o++) {
                const size_t n = sizes[s], off = offsets[o];
                const size_t at = inline_flag ? align8(off + n) : FLAG_OFF;
                seq++;
                cases++;
                char what[96];
                snprintf(what, sizeof what, "PIO of %zu bytes at +%zu, flag %s (message %" PRIu64 ")",
                         n, off, inline_flag ? "inline" : "apart", seq);
                if (rank == SENDER) {
                    rk_fill(msg + off, n, (uint32_t)seq, 0);
                    if (inline_flag) {
                        /* The padding carries the receiver's guard bytes. */
                        for (size_t i = off + n; i < at; i++)
                            msg[i] = rk_pattern(RK_GUARD_SEED, i);
                        memcpy(msg + at, &seq, 8);
                        RK_TCA(tcaSendPIO(&win, off, msg + off, at + 8 - off));
                    } else {
                        RK_TCA(tcaSendPIO(&win, off, msg + off, n));
                        RK_TCA(tcaSendPIO(&win, FLAG_OFF, &seq, 8));
                    }
                    RK_TCA(tcaSendPIOCommit());
                    /* The acknowledgement; the sender never spins (see above). */
                    RK_TCA(p2_wait_u64(flag, seq));
                } else {
                    volatile uint64_t *arrived = (volatile uint64_t *)(buf.bytes + at);
                    wait_word(arrived, seq);
                    rk_check_guard(buf.bytes, 0, off, what);
                    rk_check(buf.bytes + off, n, (uint32_t)seq, 0, off, what);
                    rk_check_guard(buf.bytes, off + n, at, what);
                    if (inline_flag)
                        rk_check_guard(buf.bytes, at + 8, DATA_BYTES, what);
                    rk_guard(buf.bytes, 0, inline_flag ? at + 8 : off + n);
                    RK_TCA(tcaSendPIO(&win, FLAG_OFF, &seq, 8));
                    RK_TCA(tcaSendPIOCommit());
                }
            }
        }
    }
    printf("rank %d: %u PIO messages%s, all bytes right\n", rank, cases,
           spin ? " (spinning receiver)" : "");
    rk_release(&buf);
    return 0;
}
