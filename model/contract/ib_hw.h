/*
 * ib_hw.h - the InfiniBand HCA hardware contract.
 *
 * What a rank's library (an MPI layer) and the model agree on about each
 * node's dual-port QDR host channel adapter, exactly as a driver sees it: where
 * its BAR0 sits in the global address map, its registers, and the layouts of
 * the three queues it shares with the host in host memory (send queue of work
 * requests, receive queue of posted buffers, completion queue). The model
 * includes this header too, so a layout change breaks both at compile time.
 * Not installed: only the libraries and the model use it.
 *
 * Simplifications of verbs, each deliberate:
 *   - one send queue, one receive queue and one completion queue per HCA
 *     (verbs: one QP per peer); the destination node is in each work request,
 *     standing for the QP's address handle. Reliable connected semantics:
 *     packets of one rail arrive in order, every message is acknowledged and
 *     the send completion is written when its acknowledgement returns.
 *   - no memory registration keys: an RDMA write may target any of the
 *     destination node's host or GPU memory.
 *   - messages of one sender on different rails may overtake each other; the
 *     receive completion carries the sender's message serial (msn) so a layer
 *     above can restore the order, as MVAPICH2 does over several rails.
 *   - receive buffers are taken in arrival order; a SEND that finds none
 *     posted waits in the HCA (holding its link credits, so back-pressure
 *     reaches the sender) until one is: RNR retry with an infinite count.
 *   - RDMA READ and the two 8-byte atomics (FETCH_ADD, CMP_SWAP) are
 *     executed by the destination's HCA on its own memory, as verbs'; the
 *     initiator keeps at most ib_hca_max_rd_atomic of them outstanding (one
 *     QP's initiator depth) and the send queue waits behind one that would
 *     exceed it, as an RC QP's does.
 *
 * All multi-byte fields are little endian; registers are 64 bits wide.
 */
#ifndef IB_HW_H
#define IB_HW_H

#include <stdint.h>

#include "peach2_hw.h"

#ifdef __cplusplus
extern "C" {
#endif

/* ------------------------------------------------------------------------ */
/* Place in the global address map (peach2_hw.h)                              */
/* ------------------------------------------------------------------------ */
/*
 * The HCA's BAR0 lies in the hole of each node's 64 GiB window between
 * PEACH2's BAR0 and its PIO window:
 *
 *   +0x8_0000_0000  PEACH2 BAR0                                 (1 MiB)
 *   +0x9_0000_0000  IB HCA BAR0: the registers below            (1 MiB)
 *   +0xC_0000_0000  PEACH2 BAR2: the PIO window                 (16 GiB)
 *
 * The host's root complex sends CPU accesses in this window to the HCA's
 * root port (PCIe Gen3 x8 on the other socket), everything else to PEACH2's.
 * The HCA reaches the host and GPU memory of its own node only; other nodes'
 * memory only through the InfiniBand fabric.
 */
#define IB_REGS_OFFSET 0x900000000ULL
#define IB_REGS_SIZE (1ULL << 20)
#define IB_BAR_REGS 0

P2_STATIC_ASSERT(IB_REGS_OFFSET >= P2_REGS_OFFSET + P2_REGS_SIZE,
                 "the HCA's BAR0 lies above PEACH2's BAR0");
P2_STATIC_ASSERT(IB_REGS_OFFSET + IB_REGS_SIZE <= P2_PIO_OFFSET,
                 "the HCA's BAR0 lies below PEACH2's PIO window");
P2_STATIC_ASSERT(IB_REGS_OFFSET >= P2_GPU_OFFSET + P2_GPU_SIZE,
                 "the HCA's BAR0 lies above GPU memory");

static inline uint64_t ib_bar_addr(unsigned node, uint64_t offset)
{
    return p2_node_base(node) + IB_REGS_OFFSET + offset;
}

static inline int ib_addr_is_regs(uint64_t addr)
{
    uint64_t off = p2_addr_offset(addr);
    return off >= IB_REGS_OFFSET && off < IB_REGS_OFFSET + IB_REGS_SIZE;
}

/* 1 if a CPU access of `len` bytes at `offset` of BAR `bar` is one the HCA
 * decodes: one aligned 64-bit register of BAR0. */
static inline int ib_bar_access_ok(unsigned bar, uint64_t offset, uint64_t len)
{
    return bar == IB_BAR_REGS && len == 8 && offset % 8 == 0 && offset < IB_REGS_SIZE;
}

/* ------------------------------------------------------------------------ */
/* BAR0 registers                                                             */
/* ------------------------------------------------------------------------ */
#define IB_PORTS 2          /* rails: port r of every HCA is cabled to switch r */
#define IB_MAX_NODES 64     /* one crossbar per rail (a 108-port switch) */
#define IB_RAIL_ANY 0xff    /* a work request's rail: the HCA chooses */

#define IB_HCA_ID_VALUE 0x4942514452000001ULL /* "IBQDR", version 1 */

#define IB_REG_HCA_ID 0x0000     /* RO: IB_HCA_ID_VALUE */
#define IB_REG_NODE_ID 0x0008    /* RO: this node's number (destinations name nodes) */
#define IB_REG_NUM_NODES 0x0010  /* RO: nodes on the fabric */
#define IB_REG_PORTS 0x0018      /* RO: IB_PORTS */
#define IB_REG_LID 0x0020        /* RO: port LIDs: node + 1 on both rails */
#define IB_REG_MTU 0x0028        /* RO: path MTU in bytes (ib_mtu_bytes) */
#define IB_REG_ERROR 0x0030      /* RO: ib_status of the last failed work request, else 0 */

/* Send queue: SQ_SIZE entries of ib_wqe at SQ_BASE (host memory). The host
 * writes entries, then writes the total number it has posted since SQ_BASE
 * was set (a free-running producer count) to SQ_DOORBELL. SQ_CONSUMED counts
 * entries the HCA has fetched: their slots may be reused. */
#define IB_REG_SQ_BASE 0x0100     /* RW: writing resets the queue's counts */
#define IB_REG_SQ_SIZE 0x0108     /* RW: entries, a power of two */
#define IB_REG_SQ_DOORBELL 0x0110 /* WO: producer count */
#define IB_REG_SQ_CONSUMED 0x0118 /* RO: entries fetched */

/* Receive queue: the same shape, entries of ib_rqe. */
#define IB_REG_RQ_BASE 0x0200
#define IB_REG_RQ_SIZE 0x0208
#define IB_REG_RQ_DOORBELL 0x0210
#define IB_REG_RQ_CONSUMED 0x0218 /* RO: receive buffers used by arrived messages */

/* Completion queue: CQ_SIZE entries of ib_cqe at CQ_BASE. Entry i (counting
 * from 0 since CQ_BASE was set) lives at CQ_BASE + 32 * (i % CQ_SIZE) and
 * carries serial i + 1 (wrapping to 1 after 0xffffffff, as PEACH2's ring),
 * so a host waits for the 64-bit word at the entry's address with
 * (word & IB_CQE_SERIAL_MASK) == (uint64_t)serial << 32. The host advances
 * CQ_TAIL as it consumes; completions while full are dropped and counted. */
#define IB_REG_CQ_BASE 0x0300
#define IB_REG_CQ_SIZE 0x0308
#define IB_REG_CQ_HEAD 0x0310     /* RO: entries written */
#define IB_REG_CQ_TAIL 0x0318     /* RW: entries consumed */
#define IB_REG_CQ_OVERFLOW 0x0320 /* RO: completions dropped */

/* ------------------------------------------------------------------------ */
/* Work requests, receive buffers, completions                                */
/* ------------------------------------------------------------------------ */
typedef enum ib_opcode {
    IB_OP_SEND = 1,           /* into the destination's next posted receive buffer */
    IB_OP_RDMA_WRITE = 2,     /* to remote_addr; no completion at the destination */
    IB_OP_RDMA_WRITE_IMM = 3, /* to remote_addr, then a receive completion with imm
                                 (uses a receive buffer, writes nothing into it) */
    IB_OP_RDMA_READ = 4,      /* length bytes at remote_addr into local_addr: the
                                 destination's HCA reads its memory and returns them */
    IB_OP_ATOMIC_FETCH_ADD = 5, /* the 8-byte word at remote_addr += compare_add, at the
                                   destination's HCA; the old value into local_addr */
    IB_OP_ATOMIC_CMP_SWAP = 6   /* the 8-byte word at remote_addr becomes swap if it
                                   equals compare_add; the old value into local_addr */
} ib_opcode;

#define IB_WQE_SIGNALED (1u << 0) /* write a send completion when acknowledged */
#define IB_WQE_FLAGS_ALL IB_WQE_SIGNALED

/* A send queue entry, 64 bytes. local_addr lies in this node's host or GPU
 * memory; remote_addr (RDMA, atomics) is a global address in the destination
 * node's host or GPU memory. Plain RDMA writes and RDMA reads of at least
 * ib_stripe_min_bytes with rail IB_RAIL_ANY are striped over both rails
 * (ib_rail_policy). Atomics: length 8, both addresses 8-byte aligned. */
typedef struct ib_wqe {
    uint8_t opcode;       /* ib_opcode */
    uint8_t flags;        /* IB_WQE_* */
    uint8_t rail;         /* 0, 1 or IB_RAIL_ANY */
    uint8_t reserved0;
    uint16_t dest_node;   /* 0 .. nodes - 1; may be this node (loopback) */
    uint16_t reserved1;
    uint32_t length;      /* bytes, 0 .. IB_MAX_MESSAGE */
    uint32_t imm;         /* immediate data / tag, delivered with SEND and WRITE_IMM */
    uint64_t local_addr;
    uint64_t remote_addr;
    uint64_t wr_id;       /* returned in the completion */
    uint64_t compare_add; /* FETCH_ADD: the addend; CMP_SWAP: the value compared */
    uint64_t swap;        /* CMP_SWAP: the value written when equal */
    uint64_t reserved2;
} ib_wqe;

#define IB_WQE_SIZE 64
#define IB_MAX_MESSAGE 0x80000000u /* 2 GiB, as verbs */

P2_STATIC_ASSERT(sizeof(ib_wqe) == IB_WQE_SIZE, "a WQE is 64 bytes");
P2_STATIC_ASSERT(offsetof(ib_wqe, dest_node) == 4, "dest_node at 4");
P2_STATIC_ASSERT(offsetof(ib_wqe, length) == 8, "length at 8");
P2_STATIC_ASSERT(offsetof(ib_wqe, imm) == 12, "imm at 12");
P2_STATIC_ASSERT(offsetof(ib_wqe, local_addr) == 16, "local_addr at 16");
P2_STATIC_ASSERT(offsetof(ib_wqe, remote_addr) == 24, "remote_addr at 24");
P2_STATIC_ASSERT(offsetof(ib_wqe, wr_id) == 32, "wr_id at 32");
P2_STATIC_ASSERT(offsetof(ib_wqe, compare_add) == 40, "compare_add at 40");
P2_STATIC_ASSERT(offsetof(ib_wqe, swap) == 48, "swap at 48");
#define IB_ATOMIC_BYTES 8 /* the operand of FETCH_ADD and CMP_SWAP */

/* A receive queue entry, 32 bytes: a buffer in this node's host or GPU memory. */
typedef struct ib_rqe {
    uint64_t addr;
    uint32_t length;
    uint32_t reserved0;
    uint64_t wr_id;
    uint64_t reserved1;
} ib_rqe;

#define IB_RQE_SIZE 32
P2_STATIC_ASSERT(sizeof(ib_rqe) == IB_RQE_SIZE, "an RQE is 32 bytes");
P2_STATIC_ASSERT(offsetof(ib_rqe, wr_id) == 16, "wr_id at 16");

typedef enum ib_cqe_kind {
    IB_CQE_SEND = 1,        /* a signaled SEND acknowledged */
    IB_CQE_RDMA_WRITE = 2,  /* a signaled RDMA write (with or without imm) acknowledged */
    IB_CQE_RECV = 3,        /* a SEND arrived in a receive buffer */
    IB_CQE_RECV_IMM = 4,    /* an RDMA write with immediate finished arriving */
    IB_CQE_RDMA_READ = 5,   /* a signaled RDMA read's data all written into local_addr */
    IB_CQE_ATOMIC = 6       /* a signaled atomic's old value written into local_addr */
} ib_cqe_kind;

typedef enum ib_status {
    IB_OK = 0,
    IB_ERR_LOCAL = 1,       /* local_addr outside this node's memory, bad opcode, flags, rail;
                               an atomic whose length is not 8 or local_addr not aligned */
    IB_ERR_DEST = 2,        /* no such destination node */
    IB_ERR_REMOTE = 3,      /* remote_addr outside the destination's memory (an atomic's:
                               or not 8-byte aligned) */
    IB_ERR_LENGTH = 4,      /* a SEND longer than the receive buffer (bytes beyond dropped) */
    IB_ERR_RECV_BUFFER = 5  /* the receive buffer lies outside this node's memory */
} ib_status;

/* A completion queue entry, 32 bytes, written by one posted write. */
typedef struct ib_cqe {
    uint8_t kind;        /* ib_cqe_kind */
    uint8_t status;      /* ib_status */
    uint16_t src_node;   /* receive completions: the sender; send completions: the destination */
    uint32_t serial;     /* entry i carries i + 1 (see IB_REG_CQ_BASE) */
    uint32_t byte_len;   /* bytes delivered (receive) or sent */
    uint32_t imm;        /* the sender's imm (SEND, WRITE_IMM) */
    uint64_t wr_id;      /* the WQE's (send) or the RQE's (receive) */
    uint32_t msn;        /* the sender's message serial to this destination, from 1 */
    uint16_t rail;       /* the rail the message (its last part) came over */
    uint16_t reserved;
} ib_cqe;

#define IB_CQE_SIZE 32
#define IB_CQE_SERIAL_MASK 0xffffffff00000000ULL
P2_STATIC_ASSERT(sizeof(ib_cqe) == IB_CQE_SIZE, "a CQE is 32 bytes");
P2_STATIC_ASSERT(offsetof(ib_cqe, serial) == 4, "serial in the high half of the first word");
P2_STATIC_ASSERT(offsetof(ib_cqe, byte_len) == 8, "byte_len at 8");
P2_STATIC_ASSERT(offsetof(ib_cqe, wr_id) == 16, "wr_id at 16");
P2_STATIC_ASSERT(offsetof(ib_cqe, msn) == 24, "msn at 24");

static inline uint32_t ib_cqe_serial(uint64_t index)
{
    return (uint32_t)((index % 0xffffffffULL) + 1);
}

#ifdef __cplusplus
}
#endif

#endif /* IB_HW_H */
