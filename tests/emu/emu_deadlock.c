/* emu_deadlock: every rank waits for a DMA notification nobody sends. p2run
 * must end the job (status 3) and print each rank's wait: the first entry of
 * its node's notification ring. */
#include <stdio.h>
#include <stdlib.h>

#include "p2.h"

int main(void)
{
    tcaresult r;
    if ((r = tcaInit()) != TCA_SUCCESS) {
        fprintf(stderr, "tcaInit: %s\n", tcaGetErrorString(r));
        return 1;
    }
    /* Different "since" times per rank: 2 us and 4 us, whatever tcaInit cost. */
    p2_compute(2e-6 * (p2_rank() + 1) - p2_wtime());
    r = tcaWaitDMARecvDesc(NULL, 3, 0x100);
    printf("rank %d: wait returned %s (it should never return)\n", p2_rank(),
           tcaGetErrorString(r));
    return 0;
}
