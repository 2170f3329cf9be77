/*
 * peach2_hw.h - the PEACH2 hardware contract.
 *
 * Everything the communication library and the model agree on, exactly as a
 * driver sees the board: the global PCIe address map, the BAR0 register map,
 * the DMA descriptor layout in memory, and the status and error codes.
 * Nothing else passes between library and model. The model includes this
 * header too, so a layout change breaks both at compile time, never silently.
 *
 * All multi-byte fields are little endian. All registers are 64 bits wide and
 * 8-byte aligned.
 */
#ifndef PEACH2_HW_H
#define PEACH2_HW_H

#include <stdint.h>

/* P2_STATIC_ASSERT and the DMA error codes (p2_error): the part of this
 * contract that programs see through tca-api.h. */
#include "peach2_error.h"

#ifdef __cplusplus
#include <cstddef>
extern "C" {
#else
#include <assert.h>
#include <stddef.h>
#endif

/* ------------------------------------------------------------------------ */
/* Global PCIe address map                                                   */
/* ------------------------------------------------------------------------ */
/*
 * Every node owns one 64 GiB window of the global PCIe address space; the
 * window's top bits are the node number, so a router finds the destination
 * node of any address with one shift. Inside a node's window:
 *
 *   +0x0_0000_0000  host memory registered with the library   (16 GiB)
 *   +0x4_0000_0000  GPU memory exposed by GPUDirect RDMA       (16 GiB)
 *   +0x8_0000_0000  PEACH2 BAR0: the registers below           (1 MiB)
 *   +0x9_0000_0000  InfiniBand HCA BAR0 (ib_hw.h)               (1 MiB)
 *   +0xC_0000_0000  PEACH2 BAR2: the PIO window                (16 GiB)
 *
 * The PIO window is an aperture onto the host memory of every node: a CPU
 * store at window offset o is forwarded as a write to node (o / 256 MiB),
 * host offset (o % 256 MiB). PIO therefore reaches the first 256 MiB of each
 * node's registered host memory.
 */
#define P2_NODE_SHIFT 36
/* Nodes a PEACH2 cluster may have (its route table has one entry each). */
#define P2_MAX_NODES 64
/* Nodes the address map has windows for: the SR8000's NIAs use the same
 * map, and its largest machine has 512 nodes (sr8000_hw.h). */
#define P2_BUS_NODES 512
#define P2_NODE_WINDOW_SIZE (1ULL << P2_NODE_SHIFT)

#define P2_HOST_OFFSET 0x000000000ULL
#define P2_HOST_SIZE (1ULL << 34)
#define P2_GPU_OFFSET 0x400000000ULL
#define P2_GPU_SIZE (1ULL << 34)
#define P2_REGS_OFFSET 0x800000000ULL
#define P2_REGS_SIZE (1ULL << 20)
#define P2_PIO_OFFSET 0xC00000000ULL
#define P2_PIO_SIZE (1ULL << 34)
#define P2_PIO_NODE_SPAN (1ULL << 28)

/* Which part of a node's window an address falls in. */
typedef enum p2_window {
    P2_WIN_HOST = 0,
    P2_WIN_GPU = 1,
    P2_WIN_REGS = 2,
    P2_WIN_PIO = 3,
    P2_WIN_NONE = 4 /* a hole, or a node beyond P2_BUS_NODES */
} p2_window;

static inline uint64_t p2_node_base(unsigned node)
{
    return (uint64_t)node << P2_NODE_SHIFT;
}

static inline unsigned p2_addr_node(uint64_t addr)
{
    return (unsigned)(addr >> P2_NODE_SHIFT);
}

static inline uint64_t p2_addr_offset(uint64_t addr)
{
    return addr & (P2_NODE_WINDOW_SIZE - 1);
}

static inline p2_window p2_addr_window(uint64_t addr)
{
    uint64_t off = p2_addr_offset(addr);
    if (p2_addr_node(addr) >= P2_BUS_NODES)
        return P2_WIN_NONE;
    if (off < P2_HOST_OFFSET + P2_HOST_SIZE)
        return P2_WIN_HOST;
    if (off >= P2_GPU_OFFSET && off < P2_GPU_OFFSET + P2_GPU_SIZE)
        return P2_WIN_GPU;
    if (off >= P2_REGS_OFFSET && off < P2_REGS_OFFSET + P2_REGS_SIZE)
        return P2_WIN_REGS;
    if (off >= P2_PIO_OFFSET && off < P2_PIO_OFFSET + P2_PIO_SIZE)
        return P2_WIN_PIO;
    return P2_WIN_NONE;
}

/* The board's BARs as the host sees them. The library addresses the device
 * by (BAR, offset), the channel carries that pair, and the model turns it into
 * a global address with p2_bar_addr: this is the only BAR decoding there is. */
typedef enum p2_bar {
    P2_BAR_REGS = 0, /* BAR0: the registers below, 64-bit accesses */
    P2_BAR_PIO = 2   /* BAR2: the PIO window, stores of any size */
} p2_bar;

static inline uint64_t p2_bar_size(unsigned bar)
{
    return bar == P2_BAR_REGS ? P2_REGS_SIZE : bar == P2_BAR_PIO ? P2_PIO_SIZE : 0;
}

/* 1 if `len` bytes at `offset` lie inside BAR `bar` (no wrap-around) and the
 * access has the BAR's shape (BAR0: one aligned 64-bit register). */
static inline int p2_bar_access_ok(unsigned bar, uint64_t offset, uint64_t len)
{
    uint64_t size = p2_bar_size(bar);
    if (len == 0 || len > size || offset > size - len)
        return 0;
    return bar != P2_BAR_REGS || (len == 8 && offset % 8 == 0);
}

/* The global address of `offset` in BAR `bar` of `node`'s board. */
static inline uint64_t p2_bar_addr(unsigned node, unsigned bar, uint64_t offset)
{
    return p2_node_base(node) + (bar == P2_BAR_REGS ? P2_REGS_OFFSET : P2_PIO_OFFSET) + offset;
}

/* The BAR offset of global address `addr`, which must lie in window `w`
 * (P2_WIN_REGS or P2_WIN_PIO) of its node. */
static inline uint64_t p2_bar_offset(uint64_t addr, p2_window w)
{
    return p2_addr_offset(addr) - (w == P2_WIN_REGS ? P2_REGS_OFFSET : P2_PIO_OFFSET);
}

/* The global address a PIO-window offset is forwarded to. */
static inline uint64_t p2_pio_target(uint64_t pio_window_offset)
{
    return p2_node_base((unsigned)(pio_window_offset / P2_PIO_NODE_SPAN)) +
           P2_HOST_OFFSET + pio_window_offset % P2_PIO_NODE_SPAN;
}

/* The PIO-window offset that reaches host offset `host_off` of `node`. */
static inline uint64_t p2_pio_offset(unsigned node, uint64_t host_off)
{
    return (uint64_t)node * P2_PIO_NODE_SPAN + host_off;
}

/* ------------------------------------------------------------------------ */
/* Ports                                                                     */
/* ------------------------------------------------------------------------ */
/* N is an Endpoint to the host; E is an Endpoint; W is a Root Complex; S is
 * either, chosen per board. Routing-table entries hold these values. */
typedef enum p2_port {
    P2_PORT_N = 0,
    P2_PORT_E = 1,
    P2_PORT_W = 2,
    P2_PORT_S = 3,
    P2_PORT_COUNT = 4
} p2_port;

/* ------------------------------------------------------------------------ */
/* BAR0 register map (offsets from the node's P2_REGS_OFFSET)               */
/* ------------------------------------------------------------------------ */
#define P2_DMA_CHANNELS 4
#define P2_DESC_REG_SLOTS 16 /* register-mode descriptors per channel */
#define P2_NOTIFY_SLOTS 64   /* wait slots 0 .. 63 */
#define P2_NOTIFY_TAG_MAX 0xffffu /* wait tags 0 .. 0xffff */

#define P2_CHIP_ID_VALUE 0x5045414348320002ULL /* "PEACH2", version 2 */

#define P2_REG_CHIP_ID 0x0000   /* RO: P2_CHIP_ID_VALUE */
#define P2_REG_NODE_ID 0x0008   /* RO: this board's node number */
#define P2_REG_NUM_NODES 0x0010 /* RO: nodes in the cluster */
#define P2_REG_CYCLES 0x0018    /* RO: free-running 250 MHz cycle counter */
#define P2_REG_PORT_MODE 0x0020 /* RO: bit p set = port p is a Root Complex */

/* Routing table: entry n names the output port (p2_port) for packets whose
 * destination node is n; the entry for the board's own node is P2_PORT_N.
 * P2_ROUTE_NONE: node n is on another PEACH2 network (no cable path joins
 * them); the board refuses packets for it (writes dropped, reads answered
 * Unsupported Request, DMA descriptors failed with P2_ERR_DST_UNREACHABLE).
 * Software cannot write it (the entry keeps its value). */
#define P2_ROUTE_NONE P2_PORT_COUNT
#define P2_REG_ROUTE_BASE 0x0100
#define P2_REG_ROUTE(n) (P2_REG_ROUTE_BASE + 8u * (unsigned)(n))

/* DMA controller channel c, c in 0 .. P2_DMA_CHANNELS-1. */
#define P2_REG_DMA_BASE 0x1000
#define P2_REG_DMA_STRIDE 0x100
#define P2_REG_DMA(c, r) (P2_REG_DMA_BASE + P2_REG_DMA_STRIDE * (unsigned)(c) + (r))
#define P2_DMA_DESC_PTR 0x00 /* RW: PCIe address of the chain's first descriptor */
#define P2_DMA_START 0x08    /* WO: a p2_dma_start command in bits 7..0; bits 63..32 a
                                 run tag the DMAC writes to END_WB as that run ends */
#define P2_DMA_STATUS 0x10   /* RO: p2_dma_status */
#define P2_DMA_ERROR 0x18    /* RO: p2_error of the last failed run, else 0 */
#define P2_DMA_REG_COUNT 0x20 /* RW: register-mode descriptors to run, 1..16 */
#define P2_DMA_DONE 0x28      /* RO: descriptors completed by the current run */
#define P2_DMA_RUNS 0x30      /* RO: runs completed since reset */
/* RW: PCIe address of an 8-byte word in this node's host memory, 0: none.
 * As each run of the channel ends (idle or failed) the DMAC writes there the
 * run tag its start carried, so the host learns that the run it started is
 * over from its own memory instead of by a register read. */
#define P2_DMA_END_WB 0x38

/* Register-mode descriptor slots: slot i of channel c holds one p2_desc. */
#define P2_REG_DESC_BASE 0x2000
#define P2_REG_DESC(c, i)                                                   \
    (P2_REG_DESC_BASE + (unsigned)(c) * (P2_DESC_REG_SLOTS * 64u) + 64u * (unsigned)(i))

/* Notifications. A DMAC raises (slot, tag) at a node by a posted write of
 * p2_notify_word(slot, tag, node) to that node's P2_REG_NOTIFY_RAISE, `node`
 * being the raising DMAC's own: the receiver tells whose DMA a notification
 * comes from (tcaWaitDMARecvDesc matches the handle's node against it). The
 * board then appends an entry to the notification ring in its host's memory
 * (a posted write, so it lands behind the data that preceded the notification
 * on the same path). The host consumes entries in order and advances
 * NOTIFY_TAIL; the board drops (and counts) notifications while the ring is
 * full or unset. */
#define P2_REG_NOTIFY_RAISE 0x3000     /* WO (by TLP from any DMAC) */
#define P2_REG_NOTIFY_RING 0x3008      /* RW: PCIe address of the ring in this node's host memory, 0: none; writing resets HEAD and TAIL */
#define P2_REG_NOTIFY_RING_SIZE 0x3010 /* RW: ring entries, a power of two */
#define P2_REG_NOTIFY_HEAD 0x3018      /* RO: entries written since the ring was set */
#define P2_REG_NOTIFY_TAIL 0x3020      /* RW: entries the host has consumed */
#define P2_REG_NOTIFY_OVERFLOW 0x3028  /* RO: notifications dropped */

/* The notification table: the chip's own memory for notifications
 * (tcaDMAUseNotifyInternal). While NOTIFY_TABLE_ON is 1 the board keeps each
 * notification for this node as an entry (the ring's format, its own serials)
 * in a FIFO of notify_table_entries entries instead of writing it to the ring;
 * a full table sends it to the ring as before. The host polls the table with
 * MMIO reads of NOTIFY_POP, each of which removes and returns the oldest entry,
 * or, when the table is empty, 0 in the serial field and the ring's HEAD in the
 * low 32 bits (so the host learns of entries that went to the ring). The
 * completion of such a read leaves the board behind every write the board
 * sent to its host before it (PCIe ordering), so the data of a popped
 * notification has landed before the host sees the entry. */
#define P2_REG_NOTIFY_TABLE_ON 0x3030  /* RW: 1 = keep notifications in the table; writing empties it */
#define P2_REG_NOTIFY_POP 0x3038       /* RO, reading removes: oldest table entry */
#define P2_REG_NOTIFY_PEEK 0x3040      /* RO: what NOTIFY_POP would return, nothing removed */

P2_STATIC_ASSERT(P2_NOTIFY_SLOTS <= 0x100 && P2_MAX_NODES <= 0x100,
                 "a ring entry holds a slot and a node in 8 bits each");

/* The raise word: bits 15..0 the slot, 31..16 the raising node, 47..32 the tag. */
static inline uint64_t p2_notify_word(unsigned slot, unsigned tag, unsigned node)
{
    return (uint64_t)(slot & 0xffffu) | ((uint64_t)(node & 0xffffu) << 16) |
           ((uint64_t)(tag & 0xffffu) << 32);
}
static inline unsigned p2_notify_word_slot(uint64_t w) { return (unsigned)(w & 0xffffu); }
static inline unsigned p2_notify_word_node(uint64_t w) { return (unsigned)((w >> 16) & 0xffffu); }
static inline unsigned p2_notify_word_tag(uint64_t w) { return (unsigned)((w >> 32) & 0xffffu); }

/* A ring entry: bits 63..32 the entry's serial (1 for the first entry after
 * the ring was set, counting up, wrapping to 1 after 0xffffffff), 31..16 the
 * tag, 15..8 the raising node, 7..0 the slot. Entry i lives at
 * ring + 8 * (i % size); its serial is i + 1, so a host knows a fresh entry
 * from a stale one. */
#define P2_NOTIFY_SERIAL_MASK 0xffffffff00000000ULL

static inline uint32_t p2_notify_serial(uint64_t index)
{
    uint32_t s = (uint32_t)((index % 0xffffffffULL) + 1);
    return s;
}

static inline uint64_t p2_notify_entry(uint32_t serial, unsigned slot, unsigned tag, unsigned node)
{
    return ((uint64_t)serial << 32) | ((uint64_t)(tag & 0xffffu) << 16) |
           ((uint64_t)(node & 0xffu) << 8) | (slot & 0xffu);
}

static inline unsigned p2_notify_entry_slot(uint64_t e) { return (unsigned)(e & 0xffu); }
static inline unsigned p2_notify_entry_node(uint64_t e) { return (unsigned)((e >> 8) & 0xffu); }
static inline unsigned p2_notify_entry_tag(uint64_t e) { return (unsigned)((e >> 16) & 0xffffu); }

/* ------------------------------------------------------------------------ */
/* DMA                                                                       */
/* ------------------------------------------------------------------------ */
typedef enum p2_dma_start {
    P2_DMA_START_CHAIN = 1,    /* fetch descriptors from memory at DESC_PTR */
    P2_DMA_START_REGISTERS = 2 /* run REG_COUNT descriptors held in registers */
} p2_dma_start;
#define P2_DMA_START_COMMAND(v) ((v) & 0xffu)
#define P2_DMA_START_TAG(v) ((v) >> 32)

typedef enum p2_dma_status {
    P2_DMA_IDLE = 0,
    P2_DMA_BUSY = 1,
    P2_DMA_FAILED = 2 /* stopped on an error; P2_DMA_ERROR says which */
} p2_dma_status;

/* Descriptor flags. */
#define P2_DESC_NOTIFY (1u << 0)       /* raise (wait_slot, wait_tag) at the destination */
#define P2_DESC_NOTIFY_SELF (1u << 1)  /* also raise it at the sending node */
#define P2_DESC_BLOCK_STRIDE (1u << 2) /* block_count blocks of length bytes */
/* The next descriptor may start (fetch, reads) once this one has issued its
 * last read, before its writes have left the DMAC. Without it the next one
 * starts only after this one's last write has entered the crossbar, so it
 * reads what this one wrote (a read never passes an older posted write). */
#define P2_DESC_PIPELINE (1u << 3)
#define P2_DESC_FLAGS_ALL \
    (P2_DESC_NOTIFY | P2_DESC_NOTIFY_SELF | P2_DESC_BLOCK_STRIDE | P2_DESC_PIPELINE)

/*
 * One DMA descriptor, 64 bytes, in host memory (chain mode, linked by `next`)
 * or in a register slot (register mode, `next` ignored).
 *
 * Plain transfer: length bytes from src to dst. Block-stride transfer
 * (P2_DESC_BLOCK_STRIDE): block_count blocks of length bytes; block k is read
 * at src + k * src_stride and written at dst + k * dst_stride.
 * src must be this node's host or GPU memory; dst may be any node's host or
 * GPU memory.
 */
typedef struct p2_desc {
    uint64_t src;         /* PCIe address read from */
    uint64_t dst;         /* PCIe address written to */
    uint32_t length;      /* bytes per block; 1 .. P2_DESC_MAX_LENGTH */
    uint32_t flags;       /* P2_DESC_* */
    uint32_t block_count; /* blocks (block-stride), else 1 */
    uint32_t wait_tag;    /* notification tag, 0 .. P2_NOTIFY_TAG_MAX */
    uint64_t src_stride;  /* bytes between source blocks */
    uint64_t dst_stride;  /* bytes between destination blocks */
    uint16_t wait_slot;   /* notification slot, 0 .. P2_NOTIFY_SLOTS-1 */
    uint16_t reserved0;
    uint32_t reserved1;
    uint64_t next;        /* PCIe address of the next descriptor; 0 ends the chain */
} p2_desc;

#define P2_DESC_SIZE 64
#define P2_DESC_MAX_LENGTH 0xffffffffu

P2_STATIC_ASSERT(sizeof(p2_desc) == P2_DESC_SIZE, "descriptor is 64 bytes");
P2_STATIC_ASSERT(offsetof(p2_desc, src) == 0, "src at 0");
P2_STATIC_ASSERT(offsetof(p2_desc, dst) == 8, "dst at 8");
P2_STATIC_ASSERT(offsetof(p2_desc, length) == 16, "length at 16");
P2_STATIC_ASSERT(offsetof(p2_desc, flags) == 20, "flags at 20");
P2_STATIC_ASSERT(offsetof(p2_desc, block_count) == 24, "block_count at 24");
P2_STATIC_ASSERT(offsetof(p2_desc, wait_tag) == 28, "wait_tag at 28");
P2_STATIC_ASSERT(offsetof(p2_desc, src_stride) == 32, "src_stride at 32");
P2_STATIC_ASSERT(offsetof(p2_desc, dst_stride) == 40, "dst_stride at 40");
P2_STATIC_ASSERT(offsetof(p2_desc, wait_slot) == 48, "wait_slot at 48");
P2_STATIC_ASSERT(offsetof(p2_desc, next) == 56, "next at 56");
P2_STATIC_ASSERT(P2_REG_DESC(P2_DMA_CHANNELS, 0) <= P2_REG_NOTIFY_RAISE,
                 "descriptor registers end before the notification registers");
P2_STATIC_ASSERT(P2_REG_DMA(P2_DMA_CHANNELS, 0) <= P2_REG_DESC_BASE,
                 "channel registers end before the descriptor registers");
P2_STATIC_ASSERT(P2_REG_ROUTE(P2_MAX_NODES) <= P2_REG_DMA_BASE,
                 "routing table ends before the channel registers");

#ifdef __cplusplus
}
#endif

#endif /* PEACH2_HW_H */
