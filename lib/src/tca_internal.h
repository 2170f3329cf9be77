/*
 * tca_internal.h - the TCA library's private state and its pure helpers
 * (handle checks, descriptor building), factored out so they can be tested
 * without a device.
 */
#ifndef TCA_INTERNAL_H
#define TCA_INTERNAL_H

#include <pthread.h>
#include <stddef.h>
#include <stdint.h>

#include "tca-api.h"
#include "peach2_hw.h"
#include "tca_alloc.h"

#ifdef __cplusplus
extern "C" {
#endif

#include "dev/dev.h"
#include "rt/api.h"

/* The board's registers (BAR0) and PIO window (BAR2) through the device. */
static inline void tca_reg_write(p2_dev *dev, uint64_t reg, uint64_t value)
{
    dev->ops->mmio_write(dev, P2_BAR_REGS, reg, value);
}
static inline uint64_t tca_reg_read(p2_dev *dev, uint64_t reg)
{
    return dev->ops->mmio_read(dev, P2_BAR_REGS, reg);
}
static inline p2_wait_result tca_reg_wait(p2_dev *dev, uint64_t reg, uint64_t mask, uint64_t value)
{
    return dev->ops->wait_reg(dev, P2_BAR_REGS, reg, mask, value);
}

/* tca-api.h states the hardware's limits as numbers (it does not include the
 * register map); they must be the register map's. */
P2_STATIC_ASSERT(TCA_DMA_CHANNELS == P2_DMA_CHANNELS, "TCA_DMA_CHANNELS");
P2_STATIC_ASSERT(TCA_DMA_REG_DESCS == P2_DESC_REG_SLOTS, "TCA_DMA_REG_DESCS");
P2_STATIC_ASSERT(TCA_WAIT_SLOTS == P2_NOTIFY_SLOTS, "TCA_WAIT_SLOTS");
P2_STATIC_ASSERT(TCA_WAIT_TAG_MAX == P2_NOTIFY_TAG_MAX, "TCA_WAIT_TAG_MAX");
P2_STATIC_ASSERT(TCA_DMA_MAX_LENGTH == P2_DESC_MAX_LENGTH, "TCA_DMA_MAX_LENGTH");
P2_STATIC_ASSERT(TCA_PIO_NODE_SPAN == P2_PIO_NODE_SPAN, "TCA_PIO_NODE_SPAN");

#define TCA_MEMORY_KINDS 2 /* tcaMemoryCPU, tcaMemoryGPU */

/* How a channel's current chain was loaded (what tcaStartDMADesc starts). */
typedef enum tca_channel_mode {
    TCA_CHANNEL_UNSET = 0,
    TCA_CHANNEL_CHAIN = 1,    /* descriptors in host memory at P2_DMA_DESC_PTR */
    TCA_CHANNEL_REGISTERS = 2 /* descriptors in the channel's register slots */
} tca_channel_mode;

/* Notifications (slot, tag) this node's DMAC raises here: `left` of them
 * still to be read from the ring (0: none). */
typedef struct tca_notify_count {
    uint16_t slot, tag;
    uint32_t left;
} tca_notify_count;

/* What the library knows of a channel's run without reading its status
 * (tca_dma.c, "Is the channel idle?"). */
typedef struct tca_channel_run {
    int running;          /* started, and no sign of its end seen yet */
    tca_notify_count end; /* the run's last transfer's notifications here */
    tca_notify_count stale; /* of a run whose end tcaWaitDMAC saw first: still to
                               come, and not this run's */
} tca_channel_run;

typedef struct tca_channel {
    tca_channel_mode mode;
    const tcaDesc *chain;  /* chain mode: whose descriptor memory DESC_PTR names */
    p2_error last_error;   /* what the last tcaWaitDMAC saw */
    tca_notify_count loaded_end; /* the loaded chain's `end` (tca_channel_run) */
    tca_channel_run run;
    int end_wb;            /* the DMAC writes its ended runs to tca_g.end_wb[c] */
    uint64_t loads;        /* tca_desc_set calls that loaded the channel: the older
                              API (tca_legacy.c) knows from it whether the chain it
                              loaded last is still the channel's */
} tca_channel;

/* p2_exchange's progress (p2_exchange.c). It outlives tcaFinalize: the
 * mailboxes keep the generation words already written, so a later exchange
 * must go on counting from where this process left off. */
typedef struct tca_exchange_state {
    uint64_t generation;              /* exchanges completed by this process */
    uint64_t across;                  /* of them, across PEACH2 networks (far mailbox banks) */
    int nodes_known;                  /* rank_node is filled (after the first) */
    uint32_t rank_node[P2_MAX_NODES]; /* node of each rank, from the slots */
} tca_exchange_state;

/* The notification ring (peach2_hw.h, "Notifications"): tcaInit places it in
 * this node's host memory, after the p2_exchange mailbox; the board appends
 * (serial, node, slot, tag) entries, the library consumes them in order.
 * Entries read while waiting for another (node, slot, tag) are kept in
 * `pending` until a wait or test claims them. */
/* Sizes: TCA_NOTIFY_RING_ENTRIES and TCA_NOTIFY_BACKLOG_MAX (tca-api.h). */
P2_STATIC_ASSERT((TCA_NOTIFY_RING_ENTRIES & (TCA_NOTIFY_RING_ENTRIES - 1)) == 0 &&
                     TCA_NOTIFY_RING_ENTRIES >= 4,
                 "the ring holds a power of two of entries, TAIL moves every quarter");

typedef struct tca_notify_pending {
    uint8_t node, slot; /* node: whose DMAC raised it */
    uint16_t tag;
    uint32_t count;  /* arrivals read from the ring, not yet claimed; > 0 */
} tca_notify_pending;

typedef struct tca_notify_ring {
    volatile uint64_t *entries; /* NULL: no ring */
    uint64_t offset;            /* in the host arena */
    uint64_t read;              /* entries consumed since the ring was set */
    uint64_t tail_written;      /* the last value written to P2_REG_NOTIFY_TAIL */
    int table_on;               /* the board keeps notifications in its table (NOTIFY_POP) */
    unsigned npending;
    tca_notify_pending pending[TCA_NOTIFY_BACKLOG_MAX];
} tca_notify_ring;

/* Library state of this process; valid while dev != NULL. */
typedef struct tca_lib {
    pthread_mutex_t lock;  /* init, finalize and the arenas */
    pthread_mutex_t run_lock; /* the channels' `run`: a notification call may
                                 update it while another thread starts one */
    p2_dev *dev;
    unsigned generation;   /* counts attaches: descriptor memory of an older one is gone */
    int register_mode;     /* tcaDMADescInt_Init was called */
    tca_arena host_arena;  /* tcaMemoryCPU; GPU memory is the runtime's pool (rt/rt_alloc.h) */
    uint64_t end_wb_offset; /* host memory of the channels' P2_DMA_END_WB words, above the arena */
    volatile uint64_t *end_wb; /* those words, one per channel */
    tca_channel channel[P2_DMA_CHANNELS];
    tca_notify_ring notify;      /* set up by attach, unset by detach */
    tca_exchange_state exchange; /* not reset by detach (see the type) */
} tca_lib;

extern tca_lib tca_g;

/* The attached device, or NULL before tcaInit. */
static inline p2_dev *tca_dev(void)
{
    return tca_g.dev;
}

/* Attaches the library to `dev` (idempotent for the same device). */
tcaresult tca_lib_attach(p2_dev *dev);
/* Drops all state; tca_dev() is NULL afterwards. */
void tca_lib_detach(void);

/* Test hook: run the library against `dev` (a fake), as if tcaInit had opened
 * it; NULL detaches. Replaces any earlier device. */
void tca_set_device_for_testing(p2_dev *dev);

/* *room = the bytes from `addr` to the end of the live allocation of this
 * node's memory of `kind` that holds it (tcaMalloc's, cudaMalloc's, the
 * library's own). TCA_ERROR_NOT_INITIALIZED, _NOT_REGISTERED (none). */
tcaresult tca_region_room(const void *addr, tcaMemoryKind kind, uint64_t *room);

/* Allocates from the arena of `kind` (the host arena under the lock, or the
 * runtime's GPU pool); statuses mapped to tcaresult. */
tcaresult tca_arena_alloc_locked(tcaMemoryKind kind, uint64_t size, uint64_t *offset);
void tca_arena_free_locked(tcaMemoryKind kind, uint64_t offset);

/* --- handles -------------------------------------------------------------- */

/* The validity word over a handle's fields; never 0. */
uint32_t tca_handle_check_word(const tcaHandle *handle);

/* The handle as tcaCreateHandle makes it. */
tcaHandle tca_handle_make(uint64_t pcie_addr, uint64_t size, tcaMemoryKind kind,
                          unsigned node);

/* TCA_SUCCESS if `handle` is self-consistent and names a node below `nnodes`,
 * else TCA_ERROR_INVALID_HANDLE. */
tcaresult tca_handle_validate(const tcaHandle *handle, unsigned nnodes);

/* TCA_SUCCESS if this node's board reaches `node` (the same PEACH2 network:
 * p2_dev.network), else TCA_ERROR_UNREACHABLE with a message on stderr
 * naming `what` ("DMA", "PIO"), both nodes and their sub-clusters. */
tcaresult tca_node_reachable(const p2_dev *dev, unsigned node, const char *what);

/* TCA_SUCCESS if [offset, offset + extent) lies in the region, else
 * TCA_ERROR_OUT_OF_RANGE. */
tcaresult tca_handle_range(const tcaHandle *handle, uint64_t offset, uint64_t extent);

uint32_t tca_pio_check_word(const tcaPIOHandle *pio);

/* --- descriptors ---------------------------------------------------------- */

/* One tcaDescSetMemcpy / tcaDescSetMemcpy2D call. 1-D transfers have
 * block_stride = 0, count = 1 and pitches 0. */
typedef struct tca_transfer {
    const tcaHandle *dst;
    uint64_t dst_offset, dst_pitch;
    const tcaHandle *src;
    uint64_t src_offset, src_pitch;
    uint64_t width, count;
    int block_stride;
    int flags, wait_slot, wait_tag;
} tca_transfer;

#define TCA_DMA_FLAGS_ALL                                                    \
    (tcaDMAUseInternal | tcaDMAUseNotifyInternal | tcaDMANotify | tcaDMANotifySelf | \
     tcaDMAPipeline)

/* *desc = the hardware descriptor for `t` sent by node `self_node` of a
 * cluster of `nnodes` (next = 0), after every check tcaDescSetMemcpy documents. */
tcaresult tca_desc_build(const tca_transfer *t, unsigned self_node, unsigned nnodes,
                         p2_desc *desc);

/* tca_desc_build for a transfer this process's node sends
 * (TCA_ERROR_NOT_INITIALIZED before tcaInit). */
tcaresult tca_desc_build_here(const tca_transfer *t, p2_desc *desc);

/* Links descs[0 .. count) stored consecutively at PCIe address `base`:
 * each `next` names the following one, the last's is 0. */
void tca_desc_link(p2_desc *descs, size_t count, uint64_t base);

/* The chain object behind tcaDesc. */
struct tcaDesc {
    p2_desc *items;        /* transfers in order, next = 0 */
    size_t count, capacity;
    int wants_registers;   /* a transfer carried tcaDMAUseInternal */
    int wants_notify_table; /* a transfer carried tcaDMAUseNotifyInternal */
    /* Chain-mode descriptor memory in the host arena, kept across sets. */
    int has_memory;
    unsigned memory_generation;
    uint64_t memory_offset;
    size_t memory_slots;
};

/* tcaDescSet without its effect on the older API's tables: loads `desc`. */
tcaresult tca_desc_set(tcaDesc *desc, int dmac_channel);

/* The older API (tca_legacy.c): the channel was loaded by tcaDescSet, so the
 * positions numbered tables put there are gone. */

/* TCA_SUCCESS if the channel may be loaded or started, else
 * TCA_ERROR_CHANNEL_BUSY (tcaStartDMADesc says how the library knows). */
tcaresult tca_channel_idle(p2_dev *dev, int dmac_channel);

static inline int tca_channel_valid(int dmac_channel)
{
    return dmac_channel >= 0 && dmac_channel < P2_DMA_CHANNELS;
}

#ifdef __cplusplus
}
#endif

#endif /* TCA_INTERNAL_H */
