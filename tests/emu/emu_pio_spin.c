/* emu_pio_spin: rank 0 stores a message and then a marker word into rank 1's
 * host memory through the PIO window; rank 1 spins on the marker with plain
 * loads, never calling the library, as real clients do. Under
 * `p2run --clock=cpu` the spin must end, and the message must be complete when
 * the marker is seen. */
#include <inttypes.h>
#include <stdio.h>
#include <string.h>

#include "dev/dev.h"
#include "peach2_hw.h"
#include "p2.h"

#define MSG_OFFSET 0x1000 /* in rank 1's (node 1's) registered host memory */
#define MSG_WORDS 8
#define MARK 0x5045414348324d4bULL

int main(void)
{
    p2_dev *dev = p2_device_get("peach2");
    if (!dev || dev->size != 2) {
        fprintf(stderr, "emu_pio_spin: run with p2run -n 2\n");
        return 1;
    }
    if (dev->rank == 0) {
        uint64_t msg[MSG_WORDS + 1];
        for (int i = 0; i < MSG_WORDS; i++)
            msg[i] = 0x1111111111111111ULL * (uint64_t)(i + 1);
        msg[MSG_WORDS] = MARK;
        dev->ops->bar_write(dev, P2_BAR_PIO, p2_pio_offset(1, MSG_OFFSET), msg, sizeof msg);
        dev->ops->bar_flush(dev);
        printf("rank 0: sent %zu bytes by PIO at %.3f us\n", sizeof msg, p2_wtime() * 1e6);
        return 0;
    }
    volatile uint64_t *words = (volatile uint64_t *)(dev->host_mem + MSG_OFFSET);
    while (words[MSG_WORDS] != MARK) {
        /* spin without calling the library */
    }
    int wrong = 0;
    for (int i = 0; i < MSG_WORDS; i++)
        wrong += words[i] != 0x1111111111111111ULL * (uint64_t)(i + 1);
    printf("rank 1: saw the marker at %.3f us, %d wrong words\n", p2_wtime() * 1e6, wrong);
    return wrong ? 1 : 0;
}
