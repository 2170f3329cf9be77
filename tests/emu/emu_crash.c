/* emu_crash MODE [CRASHER]: rank CRASHER (default 1) leaves early (MODE
 * "abort": abort(); "exit7": exit(7); "segv": SIGSEGV) while the other rank
 * waits for a notification. p2run must end the job with the crashing rank's
 * status, not with the simulator's deadlock verdict, and leave nothing behind. */
#include <signal.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "dev/dev.h"
#include "peach2_hw.h"
#include "p2.h"

int main(int argc, char **argv)
{
    const char *mode = argc > 1 ? argv[1] : "exit7";
    p2_dev *dev = p2_device_get("peach2");
    if (!dev)
        return 1;
    int crasher = argc > 2 ? atoi(argv[2]) : 1;
    if (dev->rank != crasher) {
        if (tcaInit() == TCA_SUCCESS)
            tcaWaitDMARecvDesc(NULL, 0, 1);
        return 0;
    }
    p2_compute(1e-6);
    /* A posted store still in flight when the rank dies. */
    dev->ops->mmio_write(dev, P2_BAR_REGS, P2_REG_DMA(0, P2_DMA_REG_COUNT), 1);
    if (strcmp(mode, "abort") == 0)
        abort();
    if (strcmp(mode, "segv") == 0)
        raise(SIGSEGV);
    exit(7);
}
