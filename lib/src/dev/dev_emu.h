/*
 * dev_emu.h - the emulator backend of the device interface (dev_emu.c).
 */
#ifndef P2_DEV_EMU_H
#define P2_DEV_EMU_H

#include "dev/dev.h"

/* Opens the node's device of `kind` in the p2run job this process runs in.
 * Returns 0, or -1 with a message on stderr. */
int p2_dev_emu_open(p2_dev *dev, const char *kind);

#endif /* P2_DEV_EMU_H */
