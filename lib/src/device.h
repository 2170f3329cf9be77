/*
 * device.h - the process-wide device the library drives (device.c).
 */
#ifndef P2_DEVICE_H
#define P2_DEVICE_H

#include "dev.h"

/* The device this process runs under, opened on first use; NULL, with a
 * message on stderr, when the process was not started under the emulator. */
p2_dev *p2_device(void);

#endif /* P2_DEVICE_H */
