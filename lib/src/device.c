/*
 * device.c - picks the device backend this process runs under and keeps the
 * process-wide device the rest of the library drives.
 */
#include "device.h"

#include <pthread.h>
#include <stdio.h>
#include <stdlib.h>

#include "dev_emu.h"

int p2_dev_open(p2_dev *dev)
{
    const char *job = getenv("P2_JOB");
    if (job && *job)
        return p2_dev_emu_open(dev);
    /* A hardware backend (real boards) would be chosen here. */
    fprintf(stderr, "p2: not running under p2run (no P2_JOB in the environment)\n");
    return -1;
}

static p2_dev device;
static int device_ok;
static pthread_once_t device_once = PTHREAD_ONCE_INIT;

static void device_open_once(void)
{
    device_ok = p2_dev_open(&device) == 0;
}

p2_dev *p2_device(void)
{
    pthread_once(&device_once, device_open_once);
    return device_ok ? &device : NULL;
}

/* Under p2run every rank attaches as it starts, before main: the simulator
 * then knows every rank's clock from time 0, even of a rank that calls the
 * library only late (or never). Failures are reported here and again by the
 * first call that needs the device. */
__attribute__((constructor)) static void device_attach_early(void)
{
    const char *job = getenv("P2_JOB");
    if (job && *job)
        (void)p2_device();
}
