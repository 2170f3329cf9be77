/*
 * p2.c - rank identity and clock (p2.h), over the process-wide device.
 */
#include "p2.h"

#include <time.h>

#include "device.h"

int p2_rank(void)
{
    p2_dev *dev = p2_device();
    return dev ? dev->rank : -1;
}

int p2_size(void)
{
    p2_dev *dev = p2_device();
    return dev ? dev->size : 0;
}

double p2_wtime(void)
{
    p2_dev *dev = p2_device();
    if (dev)
        return dev->ops->wtime(dev);
    struct timespec ts;
    clock_gettime(CLOCK_MONOTONIC, &ts);
    return (double)ts.tv_sec + (double)ts.tv_nsec * 1e-9;
}

void p2_compute(double seconds)
{
    p2_dev *dev = p2_device();
    if (dev)
        dev->ops->compute(dev, seconds);
}

static int in_region(const volatile uint64_t *addr, const uint8_t *base, uint64_t size)
{
    const uint8_t *p = (const uint8_t *)addr;
    return base && p >= base && p + sizeof(uint64_t) <= base + size;
}

tcaresult p2_wait_u64(const volatile uint64_t *addr, uint64_t value)
{
    p2_dev *dev = p2_device();
    if (!dev)
        return TCA_ERROR_DEVICE;
    if (!addr || (uintptr_t)addr % sizeof(uint64_t) != 0)
        return TCA_ERROR_INVALID_ARGUMENT;
    if (!in_region(addr, dev->host_mem, dev->host_size) &&
        !in_region(addr, dev->gpu_mem, dev->gpu_size))
        return TCA_ERROR_NOT_REGISTERED;
    return dev->ops->wait_mem(dev, addr, ~0ull, value, 1) == P2_WAIT_OK ? TCA_SUCCESS
                                                                : TCA_ERROR_DEVICE;
}
