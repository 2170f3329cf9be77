/*
 * dev.h - the device interface the libraries drive: one table of operations
 * per backend, device-agnostic. A device is addressed as the host's CPU sees
 * it, by (BAR, offset); what the BARs hold is the device's own contract
 * (peach2_hw.h for PEACH2). The emulator backend (dev_emu.c) serves every
 * device over the rank runtime's channel; a hardware backend would map the
 * BARs of the real board.
 */
#ifndef P2_DEV_H
#define P2_DEV_H

#include <stddef.h>
#include <stdint.h>

#ifdef __cplusplus
extern "C" {
#endif

typedef struct p2_dev p2_dev;

typedef enum p2_wait_result {
    P2_WAIT_OK = 0,       /* the condition holds (and, for notify, was consumed) */
    P2_WAIT_NOT_YET = 1,  /* a test (block == 0) found the condition false */
    P2_WAIT_FAILED = -1   /* the device or simulator is gone */
} p2_wait_result;

typedef struct p2_dev_ops {
    const char *name;
    void (*close)(p2_dev *dev);
    /* Posted 64-bit store to the register at `offset` of BAR `bar`. */
    void (*mmio_write)(p2_dev *dev, unsigned bar, uint64_t offset, uint64_t value);
    /* 64-bit load of a register; a round trip to the device. */
    uint64_t (*mmio_read)(p2_dev *dev, unsigned bar, uint64_t offset);
    /* Write-combined CPU stores of `len` bytes into a BAR window, in address
     * order (PEACH2's PIO). */
    void (*bar_write)(p2_dev *dev, unsigned bar, uint64_t offset, const void *src, size_t len);
    /* Makes posted BAR stores visible (a store fence). */
    void (*bar_flush)(p2_dev *dev);
    /* Until (register & mask) == value. */
    p2_wait_result (*wait_reg)(p2_dev *dev, unsigned bar, uint64_t offset, uint64_t mask,
                               uint64_t value);
    /* Until (the 64-bit word at `addr` & mask) == value; `addr` lies in memory
     * the device reaches (host_mem or gpu_mem below). With block == 0, a
     * test: P2_WAIT_NOT_YET at once if the condition does not hold now. */
    p2_wait_result (*wait_mem)(p2_dev *dev, const volatile uint64_t *addr, uint64_t mask,
                               uint64_t value, int block);
} p2_dev_ops;

struct p2_dev {
    const p2_dev_ops *ops;
    const char *kind;        /* "peach2" */
    unsigned id;             /* which of the node's devices */
    int rank, size;          /* this process and the job */
    unsigned node, nnodes;   /* this rank's node and the cluster */
    uint8_t *host_mem;       /* host memory the device reaches: bus address */
    uint64_t host_size;      /*   p2_node_base(node) + P2_HOST_OFFSET + off  */
    uint8_t *gpu_mem;        /* GPU memory (emulated where no GPU):          */
    uint64_t gpu_size;       /*   p2_node_base(node) + P2_GPU_OFFSET + off   */
    /* network[n]: which of this device's networks node n is on (p2_job.h,
     * device_network): PEACH2's sub-clusters, whose nodes no cable joins to
     * another's; NULL: one network joins every node */
    const uint8_t *network;
    void *priv;              /* backend state */
};

/* The node's device of `kind` ("peach2"), opened on first use; NULL, with a
 * message on stderr, when the process runs under no backend or its node has
 * no such device. */
p2_dev *p2_device_get(const char *kind);

/* Which library drives the device's queues in this process ("the MPI
 * layer" the HCA's once MPI has started; "p2_exchange" before), or NULL;
 * and the claim. Kept in the process's runtime, which every copy of the
 * libraries shares (a program linked with the static library has its own
 * p2_dev beside the MPI layer's). */
const char *p2_device_holder(const p2_dev *dev);
void p2_device_set_holder(p2_dev *dev, const char *who);

#ifdef __cplusplus
}
#endif

#endif /* P2_DEV_H */
