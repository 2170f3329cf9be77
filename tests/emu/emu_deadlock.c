/* emu_deadlock: every rank waits for a notification nobody sends. p2run must
 * end the job (status 3) and print each rank's wait. */
#include <stdio.h>

#include "device.h"
#include "p2.h"

int main(void)
{
    p2_dev *dev = p2_device();
    if (!dev)
        return 1;
    p2_compute(2e-6 * (dev->rank + 1)); /* different "since" times per rank */
    p2_wait_result r = dev->ops->wait_notify(dev, 3, 0x100, 1);
    printf("rank %d: wait returned %d (it should never return)\n", dev->rank, (int)r);
    return 0;
}
