/*
 * device.c - the process's devices, one per kind, opened on first use from
 * the backend this process runs under (the emulator when started by p2run).
 */
#include "dev/dev.h"

#include <pthread.h>
#include <stdio.h>
#include <string.h>

#include "channel.h"
#include "dev/dev_emu.h"
#include "rt/rt.h"

static struct {
    pthread_mutex_t lock;
    p2_dev dev[P2_JOB_MAX_DEVICES];
    const char *kind[P2_JOB_MAX_DEVICES];
    unsigned opened;
} devices = {.lock = PTHREAD_MUTEX_INITIALIZER};

p2_dev *p2_device_get(const char *kind)
{
    p2_dev *found = NULL;
    pthread_mutex_lock(&devices.lock);
    for (unsigned i = 0; i < devices.opened && !found; i++)
        if (strcmp(devices.kind[i], kind) == 0)
            found = &devices.dev[i];
    if (!found && devices.opened < P2_JOB_MAX_DEVICES) {
        /* A hardware backend (real boards) would be chosen here when no
         * runtime of p2run is present. */
        if (!p2_rt_get()) {
            fprintf(stderr, "p2: no %s device: not running under p2run\n", kind);
        } else if (p2_dev_emu_open(&devices.dev[devices.opened], kind) == 0) {
            found = &devices.dev[devices.opened];
            devices.kind[devices.opened++] = found->kind;
        }
    }
    pthread_mutex_unlock(&devices.lock);
    return found;
}

const char *p2_device_holder(const p2_dev *dev)
{
    p2_rt *rt = p2_rt_get();
    return rt && dev->id < P2_JOB_MAX_DEVICES ? rt->holder[dev->id] : NULL;
}

void p2_device_set_holder(p2_dev *dev, const char *who)
{
    p2_rt *rt = p2_rt_get();
    if (rt && dev->id < P2_JOB_MAX_DEVICES)
        rt->holder[dev->id] = who;
}
