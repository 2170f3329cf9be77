/*
 * dev.h - the device interface the library drives, one table of operations
 * per backend. The emulator backend (dev_emu.c) serves it over the rank's
 * channel to the simulator; a hardware backend would map the board's BARs.
 *
 * Addresses: `reg` is an offset into the board's BAR0 (peach2_hw.h);
 * `pio_offset` is an offset into the board's PIO window (BAR2).
 */
#ifndef P2_DEV_H
#define P2_DEV_H

#include <stddef.h>
#include <stdint.h>

#include "peach2_hw.h"

typedef struct p2_dev p2_dev;

typedef enum p2_wait_result {
    P2_WAIT_OK = 0,       /* the condition holds (and, for notify, was consumed) */
    P2_WAIT_NOT_YET = 1,  /* a test (block == 0) found the condition false */
    P2_WAIT_FAILED = -1   /* the device or simulator is gone */
} p2_wait_result;

typedef struct p2_dev_ops {
    const char *name;
    void (*close)(p2_dev *dev);
    /* Posted 64-bit store to a BAR0 register. */
    void (*mmio_write)(p2_dev *dev, uint64_t reg, uint64_t value);
    /* 64-bit load of a BAR0 register; a round trip to the board. */
    uint64_t (*mmio_read)(p2_dev *dev, uint64_t reg);
    /* CPU stores of `len` bytes into the PIO window, in address order. */
    void (*pio_write)(p2_dev *dev, uint64_t pio_offset, const void *src, size_t len);
    /* Make posted PIO stores visible (a store fence). */
    void (*pio_commit)(p2_dev *dev);
    /* Until (reg & mask) == value. */
    p2_wait_result (*wait_reg)(p2_dev *dev, uint64_t reg, uint64_t mask, uint64_t value);
    /* Until (the 64-bit word at `addr` & mask) == value; `addr` lies in this
     * rank's registered host or GPU memory. With block == 0, a test: returns
     * P2_WAIT_NOT_YET at once if the condition does not hold now. */
    p2_wait_result (*wait_mem)(p2_dev *dev, const volatile uint64_t *addr, uint64_t mask,
                               uint64_t value, int block);
    /* Seconds: simulated time in emulation, wall time on hardware. */
    double (*wtime)(p2_dev *dev);
    /* Charge modelled compute time to this rank. */
    void (*compute)(p2_dev *dev, double seconds);
} p2_dev_ops;

struct p2_dev {
    const p2_dev_ops *ops;
    int rank, size;          /* this process and the job */
    unsigned node, nnodes;   /* this rank's board and the cluster */
    uint8_t *host_mem;       /* registered host memory: PCIe address        */
    uint64_t host_size;      /*   p2_node_base(node) + P2_HOST_OFFSET + off  */
    uint8_t *gpu_mem;        /* GPU memory (emulated where no GPU):          */
    uint64_t gpu_size;       /*   p2_node_base(node) + P2_GPU_OFFSET + off   */
    void *priv;              /* backend state */
};

/* Opens the backend this process runs under (the emulator when started by
 * p2run). Returns 0, or -1 with a message on stderr. */
int p2_dev_open(p2_dev *dev);

#endif /* P2_DEV_H */
