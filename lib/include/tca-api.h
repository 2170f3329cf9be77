/*
 * tca-api.h - the TCA communication API for PEACH2 boards.
 *
 * The names, types and argument orders are those existing TCA programs call
 * (lib/README.md lists them); everything else here is documented where it
 * is declared. Every call returns a tcaresult: TCA_SUCCESS (0), TCA_NOT_YET
 * (a test found nothing, > 0) or an error (< 0); tcaGetErrorString names each.
 * Output arguments are written only on success.
 *
 * Memory: tcaMalloc returns DMA-able host memory (tcaMemoryCPU) or GPU memory
 * (tcaMemoryGPU; emulated host-side where the machine has no GPU, with GPU
 * timing because its PCIe address lies in the node's GPU window). Only such
 * memory can be wrapped in a tcaHandle. A handle is plain bytes: ranks may
 * copy it to each other (MPI_BYTE) and use the copy as a DMA or PIO target.
 *
 * DMA: build a chain (tcaDescNew + tcaDescSetMemcpy/2D, or the older
 * numbered tables), load it into one of TCA_DMA_CHANNELS channels
 * (tcaDescSet), start it (tcaStartDMADesc), wait at the sender (tcaWaitDMAC)
 * and at the receiver (tcaWaitDMARecvDesc, which tells notifications apart by
 * the node whose DMA raised them). A chain may be loaded and started any
 * number of times; its transfers take effect in order unless tcaDMAPipeline
 * lets them overlap.
 *
 * Threads: any thread may call the library (under p2run each has its own
 * virtual clock, and one blocked in a wait never stops another), but calls
 * that share state must not run at once: callers serialise the calls on one
 * DMAC channel, the notification calls (tcaWaitDMARecvDesc/Test), and
 * tcaInit/tcaFinalize against everything else; memory and handle calls are
 * thread safe where noted. A call whose device operation the backend lacks
 * returns TCA_ERROR_NOT_SUPPORTED (not repeated below).
 */
#ifndef TCA_API_H
#define TCA_API_H

#include <stddef.h>
#include <stdint.h>

#include "peach2_error.h" /* p2_error (tcaGetDMAError), P2_STATIC_ASSERT */
#include "tca_version.h"  /* TCA_LIB_VERSION */

#ifdef __cplusplus
extern "C" {
#endif

/* ------------------------------------------------------------------------ */
/* Status                                                                    */
/* ------------------------------------------------------------------------ */
typedef enum tcaresult {
    TCA_SUCCESS = 0,
    TCA_NOT_YET = 1,                    /* a test call found nothing yet; not an error */
    TCA_ERROR_INVALID_HANDLE = -1,      /* NULL, destroyed, corrupt or foreign handle */
    TCA_ERROR_OUT_OF_RANGE = -2,        /* offset + size beyond the handle's region */
    TCA_ERROR_INVALID_CHANNEL = -3,     /* DMAC channel outside 0 .. TCA_DMA_CHANNELS-1 */
    TCA_ERROR_CHAIN_TOO_LONG = -4,      /* register mode holds at most TCA_DMA_REG_DESCS */
    TCA_ERROR_INVALID_SLOT = -5,        /* wait slot outside 0 .. TCA_WAIT_SLOTS-1 */
    TCA_ERROR_INVALID_TAG = -6,         /* wait tag outside 0 .. TCA_WAIT_TAG_MAX */
    TCA_ERROR_NOT_INITIALIZED = -7,     /* tcaInit has not succeeded */
    TCA_ERROR_INVALID_ARGUMENT = -8,    /* NULL pointer, zero size, bad memory kind */
    TCA_ERROR_OUT_OF_MEMORY = -9,       /* the arena (or the process heap) is full */
    TCA_ERROR_NOT_REGISTERED = -10,     /* address not from tcaMalloc of that kind */
    TCA_ERROR_REMOTE_SOURCE = -11,      /* a DMA source must be this node's memory */
    TCA_ERROR_DMA_FAILED = -12,         /* the channel stopped on an error: tcaGetDMAError */
    TCA_ERROR_DEVICE = -13,             /* no device, or the simulator is gone */
    TCA_ERROR_NOT_SUPPORTED = -14,      /* e.g. PIO to GPU memory */
    TCA_ERROR_INVALID_FLAGS = -15,      /* unknown tcaDMA* flag bits */
    TCA_ERROR_TOO_LARGE = -16,          /* one transfer block beyond TCA_DMA_MAX_LENGTH */
    TCA_ERROR_CHANNEL_NOT_SET = -17,    /* start without a chain loaded (tcaDescSet) */
    TCA_ERROR_EMPTY_CHAIN = -18,        /* tcaDescSet of a chain with no transfers */
    TCA_ERROR_PIO_RANGE = -19,          /* region beyond the PIO window's reach of its node */
    TCA_ERROR_NOTIFY_BACKLOG = -20,     /* TCA_NOTIFY_BACKLOG_MAX distinct (node, slot, tag)
                                           triples arrived unclaimed (tcaWaitDMARecvDesc) */
    TCA_ERROR_INVALID_DESC = -21,       /* no such descriptor table (tcaCreateDMADesc), or
                                           an index outside it */
    TCA_ERROR_CHANNEL_BUSY = -22,       /* the channel still runs the chain it was started
                                           with (tcaWaitDMAC first) */
    TCA_ERROR_UNREACHABLE = -23,        /* the node is on another PEACH2 network (sub-cluster):
                                           no cable path joins them (p2.h, p2_subcluster) */
    /* The most negative status (not a status of its own): every value from
     * TCA_ERROR_LAST to TCA_NOT_YET is one of the above. A new error takes
     * TCA_ERROR_LAST - 1 and becomes TCA_ERROR_LAST; tests/lib/tca_api_test.cc
     * fails if this is not kept in sync. */
    TCA_ERROR_LAST = TCA_ERROR_UNREACHABLE
} tcaresult;

/* A static string naming `result`; never NULL, also for unknown values. */
const char *tcaGetErrorString(tcaresult result);

/* ------------------------------------------------------------------------ */
/* Limits: the hardware's (the library checks them against peach2_hw.h)      */
/* ------------------------------------------------------------------------ */
#define TCA_DMA_CHANNELS 4                /* DMAC channels */
#define TCA_DMA_REG_DESCS 16              /* transfers per chain in register mode */
#define TCA_WAIT_SLOTS 64                 /* wait slots 0 .. TCA_WAIT_SLOTS-1 */
#define TCA_WAIT_TAG_MAX 0xffffu          /* wait tags 0 .. TCA_WAIT_TAG_MAX */
#define TCA_DMA_MAX_LENGTH 0xffffffffu    /* bytes per transfer (per block in 2D) */
#define TCA_PIO_NODE_SPAN (1ULL << 28)    /* PIO reaches this much of each node */
#define TCA_NOTIFY_RING_ENTRIES 4096      /* notification ring (tcaInit); a power of two */
#define TCA_NOTIFY_BACKLOG_MAX 256        /* see tcaWaitDMARecvDesc */

/* ------------------------------------------------------------------------ */
/* Memory and handles                                                        */
/* ------------------------------------------------------------------------ */
typedef enum tcaMemoryKind {
    tcaMemoryCPU = 0, /* host memory from tcaMalloc */
    tcaMemoryGPU = 1  /* GPU memory (GPUDirect RDMA), emulated where no GPU */
} tcaMemoryKind;

/*
 * A registered region, as any node addresses it. Plain bytes, no pointers:
 * copy it between ranks freely. Fields are for reading only; `check` ties them
 * together so a corrupt or hand-made handle is refused (TCA_ERROR_INVALID_HANDLE).
 */
typedef struct tcaHandle {
    uint64_t pcie_addr; /* global PCIe address of the region's first byte */
    uint64_t size;      /* bytes */
    uint32_t kind;      /* tcaMemoryKind */
    uint32_t node;      /* the node whose memory this is */
    uint32_t check;     /* validity word over the fields above; 0 = destroyed */
    uint32_t reserved;  /* 0 */
} tcaHandle;

P2_STATIC_ASSERT(sizeof(tcaHandle) == 32, "tcaHandle is 32 plain bytes");

/* Opens the device (the emulator when started by p2run); later calls return
 * TCA_SUCCESS at once. Reserves the first 32 KiB of host memory as the
 * mailbox of p2_exchange (p2.h): tcaMalloc never hands them out.
 * TCA_ERROR_DEVICE if there is no device, TCA_ERROR_OUT_OF_MEMORY (also when
 * host memory cannot hold the mailbox). Thread safe. */
/* After the mailbox it allocates the notification ring, TCA_NOTIFY_RING_ENTRIES
 * words of host memory (tcaWaitDMARecvDesc), and hands it to the board. */
tcaresult tcaInit(void);

/* Releases the library's state: allocations and chains become invalid; the
 * board's notification ring is unset (notifications arriving later are
 * dropped). TCA_ERROR_NOT_INITIALIZED. Thread safe. */
tcaresult tcaFinalize(void);

/* Chains loaded by tcaDescSet from now on go into the channel's descriptor
 * registers ("internal memory") instead of host memory, as if every transfer
 * carried tcaDMAUseInternal; chains longer than TCA_DMA_REG_DESCS are then
 * refused (TCA_ERROR_CHAIN_TOO_LONG), never silently put in host memory.
 * TCA_ERROR_NOT_INITIALIZED. */
tcaresult tcaDMADescInt_Init(void);

/* *ptr = `size` bytes of DMA-able memory of `kind`, 64-byte aligned, from this
 * process's arena of that kind (first fit: deterministic).
 * TCA_ERROR_NOT_INITIALIZED, _INVALID_ARGUMENT (NULL, 0, unknown kind),
 * _OUT_OF_MEMORY. Thread safe. */
tcaresult tcaMalloc(void **ptr, size_t size, tcaMemoryKind kind);

/* Returns memory from tcaMalloc of the same kind. Handles over it become
 * dangling (DMA through them moves whatever is there now).
 * TCA_ERROR_NOT_INITIALIZED, _INVALID_ARGUMENT (NULL, unknown kind),
 * _NOT_REGISTERED (not the start of a live allocation of that kind). Thread safe. */
tcaresult tcaFree(void *ptr, tcaMemoryKind kind);

/* *handle = the region [addr, addr + size) of this node's memory of `kind`.
 * The region must lie within the arena of that kind (tcaMalloc memory, not
 * necessarily one allocation). TCA_ERROR_NOT_INITIALIZED, _INVALID_ARGUMENT
 * (NULL, size 0, unknown kind), _NOT_REGISTERED. */
tcaresult tcaCreateHandle(tcaHandle *handle, void *addr, size_t size, tcaMemoryKind kind);

/* Invalidates the handle (its copies on other ranks stay usable).
 * TCA_ERROR_INVALID_HANDLE. */
tcaresult tcaDestroyHandle(tcaHandle *handle);

/* ------------------------------------------------------------------------ */
/* DMA                                                                       */
/* ------------------------------------------------------------------------ */
/*
 * DMA flags, OR-ed, per transfer:
 *  tcaDMAUseInternal       the chain containing this transfer is loaded into
 *                          the channel's descriptor registers (register mode:
 *                          no descriptor fetch over PCIe; at most
 *                          TCA_DMA_REG_DESCS transfers). Same as
 *                          tcaDMADescInt_Init, for one chain.
 *  tcaDMAUseNotifyInternal notifications through the chip's own table: once a
 *                          chain with it is loaded (tcaDescSet), this node's
 *                          board keeps every notification for this node in its
 *                          table, and tcaWaitDMARecvDesc/Test poll it with MMIO
 *                          reads (each a round trip to the board, about 1 us)
 *                          instead of reading the ring in host memory. A wait
 *                          then costs at least one read, and sees an arrival
 *                          only when a read reaches the board after it.
 *  tcaDMANotify            raise (wait_slot, wait_tag) at the destination node
 *                          when this transfer's data has been written there
 *                          (a notification from this node: see
 *                          tcaWaitDMARecvDesc).
 *  tcaDMANotifySelf        raise (wait_slot, wait_tag) at the sending node when
 *                          the transfer's writes have left it (on its own, or
 *                          in addition to tcaDMANotify).
 *  tcaDMAPipeline          the transfer after this one in the chain may start
 *                          (descriptor fetch, reads) once this one has issued
 *                          its last read, while its writes are still leaving:
 *                          faster, but the next transfer may read memory this
 *                          one has not yet written. Without it, a chain's
 *                          transfers take effect in order: the next one starts
 *                          when this one's last write has left the DMAC, and
 *                          reads what this one wrote (PCIe never lets a read
 *                          pass an older posted write).
 */
enum {
    tcaDMAUseInternal = 1 << 0,
    tcaDMAUseNotifyInternal = 1 << 1,
    tcaDMANotify = 1 << 2,
    tcaDMANotifySelf = 1 << 3,
    tcaDMAPipeline = 1 << 4
};

/* An ordered list of transfers (opaque). Owned by the caller. */
typedef struct tcaDesc tcaDesc;

/* A new, empty chain; NULL if out of memory. Needs no tcaInit. */
tcaDesc *tcaDescNew(void);

/* Frees the chain; a channel it is loaded on in host-memory mode must be
 * loaded again before its next start (TCA_ERROR_CHANNEL_NOT_SET).
 * TCA_ERROR_INVALID_ARGUMENT (NULL). */
tcaresult tcaDescFree(tcaDesc *desc);

/*
 * Appends one transfer: `size` bytes from src_handle + src_offset to
 * dst_handle + dst_offset. src must be this node's memory; dst may be any
 * node's (a handle received from another rank). wait_slot and wait_tag name the
 * notification raised per the flags; they are range-checked even without a
 * notify flag. Takes effect at the next tcaDescSet.
 * TCA_ERROR_NOT_INITIALIZED, _INVALID_ARGUMENT (NULL desc, size 0),
 * _INVALID_HANDLE, _OUT_OF_RANGE, _REMOTE_SOURCE, _INVALID_FLAGS,
 * _INVALID_SLOT, _INVALID_TAG, _TOO_LARGE, _OUT_OF_MEMORY.
 */
tcaresult tcaDescSetMemcpy(tcaDesc *desc, const tcaHandle *dst_handle, size_t dst_offset,
                           const tcaHandle *src_handle, size_t src_offset, size_t size,
                           int flags, int wait_slot, int wait_tag);

/*
 * Appends one block-stride transfer: `count` blocks of `width` bytes; block k
 * is read at src_offset + k * src_pitch and written at dst_offset + k * dst_pitch.
 * The last block must lie within each region. Errors as tcaDescSetMemcpy
 * (width or count 0: _INVALID_ARGUMENT; count > 0xffffffff: _TOO_LARGE).
 */
tcaresult tcaDescSetMemcpy2D(tcaDesc *desc, const tcaHandle *dst_handle, size_t dst_offset,
                             size_t dst_pitch, const tcaHandle *src_handle,
                             size_t src_offset, size_t src_pitch, size_t width,
                             size_t count, int flags, int wait_slot, int wait_tag);

/*
 * Loads the chain into DMAC channel `dmac_channel`: into the channel's
 * registers in register mode (tcaDMADescInt_Init, or any transfer with
 * tcaDMAUseInternal), else into descriptor memory the library keeps in host
 * memory for this chain (reused across sets while the chain does not grow;
 * every channel loaded from the chain runs that memory). The channel must be
 * idle (see tcaStartDMADesc): loading a running channel would rewrite the
 * chain under the DMAC. TCA_ERROR_NOT_INITIALIZED,
 * _INVALID_ARGUMENT (NULL), _INVALID_CHANNEL, _EMPTY_CHAIN, _CHAIN_TOO_LONG,
 * _CHANNEL_BUSY, _OUT_OF_MEMORY (descriptor memory).
 */
tcaresult tcaDescSet(tcaDesc *desc, int dmac_channel);

/*
 * Starts the chain last loaded into the channel (posted; returns at once).
 * The channel must be idle: the DMAC ignores a start while it runs, so the
 * chain would never run. The library takes a channel it started as running
 * until tcaWaitDMAC returns, or until tcaWaitDMARecvDesc/Test has read
 * (claimed, or kept while looking for another) every notification of the
 * chain's last transfer's (slot, tag) that the chain raises at this node
 * (tcaDMANotifySelf, or tcaDMANotify of a copy within the node): the last
 * one comes as the channel goes idle. Without either sign, one read of the
 * channel's status register decides (the only case in which this call, or
 * tcaDescSet, reads a register). TCA_ERROR_NOT_INITIALIZED,
 * _INVALID_CHANNEL, _CHANNEL_NOT_SET, _CHANNEL_BUSY (nothing started).
 */
tcaresult tcaStartDMADesc(int dmac_channel);

/* Waits until the channel is idle. TCA_ERROR_DMA_FAILED if its last run
 * stopped on an error (tcaGetDMAError says which), TCA_ERROR_DEVICE,
 * _NOT_INITIALIZED, _INVALID_CHANNEL. */
tcaresult tcaWaitDMAC(int dmac_channel);

/* *error = the hardware error (P2_OK if none; p2_error_name describes it)
 * that the channel's last tcaWaitDMAC saw.
 * TCA_ERROR_NOT_INITIALIZED, _INVALID_ARGUMENT (NULL), _INVALID_CHANNEL. */
tcaresult tcaGetDMAError(int dmac_channel, p2_error *error);

/*
 * Waits until a notification (wait_slot, wait_tag) raised by the DMAC of
 * handle->node has arrived at this node, and consumes it. The handle names
 * whose DMA the caller waits for, as programs written for the hardware use
 * it: the peer's handle for the peer's data (a transfer with tcaDMANotify
 * that the peer started), one of this node's own handles for its own
 * transfers (tcaDMANotifySelf, or tcaDMANotify of a copy within the node).
 * So one (slot, tag) can serve a rank's own completion and its peers' data
 * at once, told apart by the handle. A NULL handle accepts the pair from any
 * node (the oldest arrival kept first).
 *
 * The board appends notifications, with the raising node, to a ring in this
 * node's host memory that tcaInit sets up (TCA_NOTIFY_RING_ENTRIES entries,
 * after the p2_exchange mailbox), or, once this process has loaded a chain
 * with tcaDMAUseNotifyInternal, keeps them in its own table, which the wait
 * polls with MMIO reads (entries already in the ring are still found). Notifications may be claimed in any order:
 * entries read while looking for another are kept, counted per
 * (node, slot, tag), until claimed. At most TCA_NOTIFY_BACKLOG_MAX distinct
 * triples can be kept that way; an entry of yet another one is then left in
 * the ring and the call returns TCA_ERROR_NOTIFY_BACKLOG (claim kept ones,
 * then call again). The board drops notifications while the ring is full,
 * that is when more than TCA_NOTIFY_RING_ENTRIES arrive faster than they are
 * read.
 * TCA_ERROR_NOT_INITIALIZED, _INVALID_HANDLE (non-NULL but invalid),
 * _INVALID_SLOT, _INVALID_TAG, _NOTIFY_BACKLOG, _DEVICE.
 */
tcaresult tcaWaitDMARecvDesc(const tcaHandle *handle, int wait_slot, int wait_tag);

/* As tcaWaitDMARecvDesc without blocking: TCA_SUCCESS if a notification was
 * pending (and is now consumed), TCA_NOT_YET if none is. Same errors. */
tcaresult tcaTestDMARecvDesc(const tcaHandle *handle, int wait_slot, int wait_tag);

/* ------------------------------------------------------------------------ */
/* PIO                                                                       */
/* ------------------------------------------------------------------------ */
/* A window of CPU stores onto a (usually remote) region. Plain bytes. */
typedef struct tcaPIOHandle {
    uint64_t window_offset; /* offset in the board's PIO window (BAR2) */
    uint64_t size;          /* bytes reachable from window_offset */
    uint32_t node;          /* the target node */
    uint32_t check;         /* validity word; 0 = not set */
} tcaPIOHandle;

P2_STATIC_ASSERT(sizeof(tcaPIOHandle) == 24, "tcaPIOHandle is 24 plain bytes");

/*
 * *pio_handle = a PIO window onto [offset, offset + size) of remote_handle's
 * region. The region must be host memory (tcaMemoryCPU) within the first
 * TCA_PIO_NODE_SPAN bytes of its node's registered memory, the reach of the
 * PIO window.
 * TCA_ERROR_NOT_INITIALIZED, _INVALID_ARGUMENT (NULL, size 0),
 * _INVALID_HANDLE, _OUT_OF_RANGE, _NOT_SUPPORTED (GPU memory), _PIO_RANGE.
 */
tcaresult tcaSetPIORegion(tcaPIOHandle *pio_handle, const tcaHandle *remote_handle,
                          size_t offset, size_t size);

/* CPU stores of `size` bytes from src to pio_handle's region + offset, posted:
 * visible remotely in order, and certainly after tcaSendPIOCommit.
 * TCA_ERROR_NOT_INITIALIZED, _INVALID_ARGUMENT (NULL, size 0),
 * _INVALID_HANDLE, _OUT_OF_RANGE. */
tcaresult tcaSendPIO(const tcaPIOHandle *pio_handle, size_t offset, const void *src,
                     size_t size);

/* Store fence: makes this process's posted PIO stores visible.
 * TCA_ERROR_NOT_INITIALIZED. */
tcaresult tcaSendPIOCommit(void);

/* ------------------------------------------------------------------------ */
/* The older API: descriptor tables named by an int                          */
/* ------------------------------------------------------------------------ */
/*
 * Programs written for the first TCA library build chains in numbered
 * descriptor tables and load them into channels by number:
 *
 *     int desc_tag, index = 0;
 *     tcaCreateDMADesc(&desc_tag, 1024);
 *     tcaSetDMADesc_Memcpy2D(desc_tag, index, &index, &dst_h, dst_offset, pitch,
 *                            &src_h, src_offset, pitch, width, height,
 *                            flags, wait_slot, wait_tag);
 *     tcaSetDMAChain(dmac_channel, desc_tag);
 *     tcaStartDMADesc(dmac_channel); ...
 *     tcaDestroyDMADesc(desc_tag);
 *
 * The index of an entry is its position in the channel's chain; the set calls
 * return the next position in *next_index, so one counter can run across
 * several tables. tcaSetDMAChain writes a table's entries at their positions
 * of the channel's chain and ends the chain at the table's last entry:
 * positions below its first entry keep what an earlier tcaSetDMAChain put
 * there. Two tables filled at positions 0 and 1 and set one after the other
 * on one channel thus run as one chain of two transfers per start. The
 * transfers behave as tcaDescSetMemcpy/2D ones (same checks and flags) but
 * for one thing: a table is host memory (1024 entries in the published
 * programs, where the chip's registers hold TCA_DMA_REG_DESCS), so the DMAC
 * fetches each descriptor over PCIe whatever tcaDMAUseInternal says (that
 * API accepted the flag without effect); after tcaDMADescInt_Init chains go
 * into the registers as for tcaDescSet. tcaDescSet on the channel replaces
 * everything the tables put there.
 */

/* *desc_tag = a new table of `count` empty entries (count >= 1; tags are
 * small integers, the lowest free first). Needs no tcaInit.
 * TCA_ERROR_INVALID_ARGUMENT (NULL, count < 1), _OUT_OF_MEMORY. */
tcaresult tcaCreateDMADesc(int *desc_tag, int count);

/* Writes one transfer at entry `index` of table desc_tag (replacing what was
 * there); *next_index = index + 1 (may point to `index`'s variable).
 * Arguments and errors as tcaDescSetMemcpy, and TCA_ERROR_INVALID_DESC (no
 * such table, or index outside 0 .. count-1). */
tcaresult tcaSetDMADesc_Memcpy(int desc_tag, int index, int *next_index,
                               const tcaHandle *dst_handle, size_t dst_offset,
                               const tcaHandle *src_handle, size_t src_offset, size_t size,
                               int flags, int wait_slot, int wait_tag);

/* The literature's spelling of tcaSetDMADesc_Memcpy (same arguments). */
tcaresult tcaSetDMADescMemcpy(int desc_tag, int index, int *next_index,
                              const tcaHandle *dst_handle, size_t dst_offset,
                              const tcaHandle *src_handle, size_t src_offset, size_t size,
                              int flags, int wait_slot, int wait_tag);

/* As tcaSetDMADesc_Memcpy for a block-stride transfer: `height` blocks of
 * `width` bytes, pitches as tcaDescSetMemcpy2D's. */
tcaresult tcaSetDMADesc_Memcpy2D(int desc_tag, int index, int *next_index,
                                 const tcaHandle *dst_handle, size_t dst_offset,
                                 size_t dst_pitch, const tcaHandle *src_handle,
                                 size_t src_offset, size_t src_pitch, size_t width,
                                 size_t height, int flags, int wait_slot, int wait_tag);

/* Loads table desc_tag's entries into channel dmac_channel at their positions
 * (see above) and loads the resulting chain as tcaDescSet does.
 * TCA_ERROR_NOT_INITIALIZED, _INVALID_CHANNEL, _INVALID_DESC,
 * _EMPTY_CHAIN (the table has no entry, or a position before its last entry
 * was never filled), _CHAIN_TOO_LONG, _CHANNEL_BUSY (positions unchanged),
 * _OUT_OF_MEMORY. */
tcaresult tcaSetDMAChain(int dmac_channel, int desc_tag);

/* Frees table desc_tag; chains already loaded from it stay loaded.
 * TCA_ERROR_INVALID_DESC. */
tcaresult tcaDestroyDMADesc(int desc_tag);

/* Returns the board's DMA side to its state after tcaInit: waits until every
 * channel is idle, unloads every channel (tcaStartDMADesc then needs a chain
 * loaded again), and discards every notification that has arrived and not
 * been claimed. Memory, handles and descriptor tables stay.
 * TCA_ERROR_NOT_INITIALIZED, _DEVICE. */
tcaresult tcaReset(void);

/* tcaTestDMARecvDesc is declared above with tcaWaitDMARecvDesc. */

/* ------------------------------------------------------------------------ */
/* Reductions: element types and operators                                   */
/* ------------------------------------------------------------------------ */
/* type >> 8 = element size in bytes; type & 0xff = dense index 0 .. 14,
 * TCA_LONG_DOUBLE last: tables are sized (TCA_LONG_DOUBLE & 0xff) + 1. */
#define TCA_TYPE_CODE(size, index) ((int)((size) << 8) | (index))
typedef enum tcaDataType {
    TCA_CHAR = TCA_TYPE_CODE(sizeof(char), 0),
    TCA_SIGNED_CHAR = TCA_TYPE_CODE(sizeof(signed char), 1),
    TCA_UNSIGNED_CHAR = TCA_TYPE_CODE(sizeof(unsigned char), 2),
    TCA_BYTE = TCA_TYPE_CODE(sizeof(unsigned char), 3),
    TCA_SHORT = TCA_TYPE_CODE(sizeof(short), 4),
    TCA_UNSIGNED_SHORT = TCA_TYPE_CODE(sizeof(unsigned short), 5),
    TCA_INT = TCA_TYPE_CODE(sizeof(int), 6),
    TCA_UNSIGNED = TCA_TYPE_CODE(sizeof(unsigned), 7),
    TCA_LONG = TCA_TYPE_CODE(sizeof(long), 8),
    TCA_UNSIGNED_LONG = TCA_TYPE_CODE(sizeof(unsigned long), 9),
    TCA_LONG_LONG = TCA_TYPE_CODE(sizeof(long long), 10),
    TCA_UNSIGNED_LONG_LONG = TCA_TYPE_CODE(sizeof(unsigned long long), 11),
    TCA_FLOAT = TCA_TYPE_CODE(sizeof(float), 12),
    TCA_DOUBLE = TCA_TYPE_CODE(sizeof(double), 13),
    TCA_LONG_DOUBLE = TCA_TYPE_CODE(sizeof(long double), 14)
} tcaDataType;

/* Element size in bytes and table index of a tcaDataType. */
#define TCA_TYPE_SIZE(type) ((size_t)((unsigned)(type) >> 8))
#define TCA_TYPE_INDEX(type) ((unsigned)(type) & 0xffu)

/* TCA_OP_NOOP is last: tables are sized TCA_OP_NOOP + 1. */
typedef enum tcaOp {
    TCA_OP_SUM = 0,
    TCA_OP_PROD,
    TCA_OP_BAND,
    TCA_OP_LAND,
    TCA_OP_BOR,
    TCA_OP_LOR,
    TCA_OP_BXOR,
    TCA_OP_LXOR,
    TCA_OP_MAX,
    TCA_OP_MIN,
    TCA_OP_NOOP
} tcaOp;

#ifdef __cplusplus
}
#endif

#endif /* TCA_API_H */
