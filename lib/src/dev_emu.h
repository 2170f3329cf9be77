/*
 * dev_emu.h - the emulator backend of the device interface (dev_emu.c): the
 * rank's end of its channel to the simulator started by p2run.
 */
#ifndef P2_DEV_EMU_H
#define P2_DEV_EMU_H

#include "dev.h"

/* Attaches this process to the job named by $P2_JOB (once per process) and
 * fills `dev`. Returns 0, or -1 with a message on stderr. */
int p2_dev_emu_open(p2_dev *dev);

#endif /* P2_DEV_EMU_H */
