/* emu_deadline: waits with a deadline (p2_rt_wait_mem_until, the simulator's
 * P2_CHAN_WAIT_DEADLINE), which the MPI layer's progress loop uses to wait for
 * its CQ or a GPU copy's end, whichever comes first. Rank 1 computes 10 us,
 * then PIO-stores 1 into a word of rank 0's memory. Rank 0 waits for that
 * word three times:
 *   until 5 us: not yet, resuming at the deadline (plus the polling delay);
 *   until 50 us: the store, resuming when it lands (not at the deadline);
 *   for the value 2 until 1 us, a deadline already past: not yet, at once.
 * It prints each answer with its clock, for the test to pin. */
#include <inttypes.h>
#include <stdio.h>
#include <string.h>

#include "dev/dev.h"
#include "p2.h"
#include "peach2_hw.h"
#include "rt/rt.h"

#define WORD_OFFSET 0x0

static const char *said(int r)
{
    return r == P2_CHAN_OK ? "ok" : r == P2_CHAN_NOT_YET ? "not yet" : "failed";
}

int main(void)
{
    p2_dev *dev = p2_device_get("peach2");
    p2_rt *rt = p2_rt_get();
    if (!dev || !rt || dev->size != 2)
        return 1;
    volatile uint64_t *word = (volatile uint64_t *)(dev->host_mem + WORD_OFFSET);
    /* The store lands at about 11 us of simulated time, which the model
     * cannot reach before rank 0 (at 0 us now) waits: no race with this. */
    *word = 0;
    if (dev->rank == 1) {
        p2_compute(10e-6);
        uint64_t one = 1;
        dev->ops->bar_write(dev, P2_BAR_PIO, p2_pio_offset(0, WORD_OFFSET), &one, sizeof one);
        dev->ops->bar_flush(dev);
        return 0;
    }
    double t0 = p2_wtime();
    int r = p2_rt_wait_mem_until(rt, word, ~0ull, 1, (uint64_t)((t0 + 5e-6) * 1e12));
    printf("rank 0: until +5 us: %s after %.3f us\n", said(r), (p2_wtime() - t0) * 1e6);
    r = p2_rt_wait_mem_until(rt, word, ~0ull, 1, (uint64_t)((t0 + 50e-6) * 1e12));
    printf("rank 0: until +50 us: %s after %.3f us\n", said(r), (p2_wtime() - t0) * 1e6);
    double t1 = p2_wtime();
    r = p2_rt_wait_mem_until(rt, word, ~0ull, 2, (uint64_t)(1e-6 * 1e12));
    printf("rank 0: until 1 us (past): %s after %.3f us\n", said(r), (p2_wtime() - t1) * 1e6);
    return 0;
}
