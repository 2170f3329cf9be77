/*
 * sr8000_hw.h - the hardware contract of the Hitachi SR8000 Network Interface
 * Adapter (NIA), as the FMPL library and the model see it.
 *
 * Everything the library and the model agree on: the NIA's register map (its
 * BAR0 as the node's CPU addresses it), the transfer control word (TCW) in
 * node memory, the remote-DMA area table, the barrier and broadcast registers
 * and the status and error codes. The model includes this header too, so a
 * layout change breaks both at compile time, never silently.
 *
 * Memory. The NIA reads and writes the node's memory by the cluster's bus
 * addresses (peach2_hw.h's global address map: node window + P2_HOST_OFFSET;
 * p2_rt_memory.bus). A remote write never names a remote address: it names a
 * remote-DMA area (an index into the destination NIA's area table, set up by
 * its own node) and an offset in it, as the SR8000's kernel mapped pinned
 * user buffers one-to-one to remote-DMA areas.
 *
 * All registers are 64 bits wide and 8-byte aligned; all fields little endian.
 */
#ifndef SR8000_HW_H
#define SR8000_HW_H

#include <stdint.h>

#ifdef __cplusplus
#include <cstddef>
extern "C" {
#else
#include <assert.h>
#include <stddef.h>
#endif

#ifdef __cplusplus
#define SR_STATIC_ASSERT(c, m) static_assert(c, m)
#else
#define SR_STATIC_ASSERT(c, m) _Static_assert(c, m)
#endif

/* ------------------------------------------------------------------------ */
/* Machine limits                                                            */
/* ------------------------------------------------------------------------ */
/* A crossbar has 8 node ports; the largest (3D) machine is 8 x 8 x 8. */
#define SR_XBAR_PORTS 8
#define SR_MAX_NODES 512
#define SR_AREAS 16          /* remote-DMA areas per NIA */
#define SR_COLORS 8          /* hardware barrier / broadcast colours 0..7 */

/* ------------------------------------------------------------------------ */
/* BAR0: the NIA registers                                                   */
/* ------------------------------------------------------------------------ */
#define SR_BAR_REGS 0u
#define SR_REGS_SIZE 0x1000u

#define SR_REG_ID 0x000          /* RO: SR_NIA_ID */
#define SR_REG_NODE_ID 0x008     /* RO: this node, 0..nodes-1 */
#define SR_REG_NUM_NODES 0x010   /* RO: nodes of the machine */
#define SR_REG_SHAPE 0x018       /* RO: SR_SHAPE_X/Y/Z(v): the crossbar grid (see SR_GROUP_BOX) */
#define SR_REG_ERROR 0x020       /* RO: the last receive-side error (sr_status), 0 if none */
#define SR_REG_ERRORS 0x028      /* RO: received packets dropped for an error */
#define SR_REG_KICKS 0x030       /* RO: TCW kicks accepted */
#define SR_REG_KICKS_REUSED 0x038 /* RO: ... of which took the cached (unchanged) path */

#define SR_NIA_ID 0x5352384E49410001ULL /* "SR8NIA" v1 */
/* Node n sits at column n % X, row n / X % Y, plane n / (X * Y): X nodes per
 * x-crossbar, Y x-crossbars per plane, Z planes (1 and 1 for smaller machines). */
#define SR_SHAPE_X(v) ((unsigned)((v) & 0xff))
#define SR_SHAPE_Y(v) ((unsigned)(((v) >> 8) & 0xff))
#define SR_SHAPE_Z(v) ((unsigned)(((v) >> 16) & 0xff))
#define SR_SHAPE(x, y, z) ((uint64_t)(x) | ((uint64_t)(y) << 8) | ((uint64_t)(z) << 16))

/* Remote-DMA area table: area a covers [BASE, BASE + SIZE) of node memory
 * (bus addresses). SIZE 0: unmapped. Writing SIZE validates the entry: an
 * area outside the node's memory reads back SIZE 0 and sets SR_REG_ERROR. */
#define SR_REG_AREA_BASE(a) (0x100 + 0x10 * (uint64_t)(a))
#define SR_REG_AREA_SIZE(a) (0x108 + 0x10 * (uint64_t)(a))

/* Kick: a store of a TCW's bus address starts it. The NIA keeps the last
 * SR8000 TCWs it translated (sr8000_tcw_cache_entries); a kicked TCW whose
 * address and version word match a cached one is sent from the cache (fast
 * path); otherwise it is fetched, validated and translated (slow path). */
#define SR_REG_KICK 0x200
/* Hardware broadcast: a store of a TCW's address; the TCW's dst_node holds
 * the colour whose group receives it (see SR_REG_GROUP). */
#define SR_REG_BCAST_KICK 0x208

/* Per colour c: the group that barriers and broadcasts of colour c span. The
 * crossbars can only combine and fan out whole lines, rectangles or boxes of
 * the grid, so a group is one: columns x0..x0+nx-1 of rows y0..y0+ny-1 of
 * planes z0..z0+nz-1 (SR_GROUP_BOX); every member stores the same box.
 * Writing GROUP checks it and sets GROUP_STATUS: SR_OK, or SR_ERR_GROUP_EMPTY
 * (an extent of 0), SR_ERR_GROUP_SHAPE (the box reaches past the grid),
 * SR_ERR_GROUP_SELF (this node not in it). */
#define SR_REG_GROUP(c) (0x400 + 0x40 * (uint64_t)(c))
#define SR_REG_GROUP_STATUS(c) (0x408 + 0x40 * (uint64_t)(c))
/* Barrier: a store (any value) says this node arrived. BAR_STATE counts the
 * barriers of colour c completed at this node (SR_STATE_COUNT) and holds the
 * error of the last one (SR_STATE_ERROR): an arrival refused is completed at
 * once with the error, so no waiter hangs. */
#define SR_REG_BAR_ARRIVE(c) (0x410 + 0x40 * (uint64_t)(c))
#define SR_REG_BAR_STATE(c) (0x418 + 0x40 * (uint64_t)(c))
/* Broadcast receive: a member arms colour c with the area and offset its data
 * must land at and the room there; a broadcast arriving at a member that is
 * not armed with the root's area and offset, or with less room than the
 * broadcast's size, is refused (SR_ERR_BCAST_OFFSET, SR_ERR_BCAST_SIZE,
 * SR_ERR_BCAST_NOT_ARMED): no byte lands. BCAST_STATE counts the broadcasts
 * of colour c received (or refused) at this node, as BAR_STATE. */
#define SR_REG_BCAST_ARM(c) (0x420 + 0x40 * (uint64_t)(c))       /* SR_ARM(area, offset) */
#define SR_REG_BCAST_ARM_SIZE(c) (0x428 + 0x40 * (uint64_t)(c))  /* bytes of room */
#define SR_REG_BCAST_STATE(c) (0x430 + 0x40 * (uint64_t)(c))

#define SR_GROUP_BOX(x0, nx, y0, ny, z0, nz)                                        \
    ((uint64_t)(x0) | ((uint64_t)(nx) << 8) | ((uint64_t)(y0) << 16) |                \
     ((uint64_t)(ny) << 24) | ((uint64_t)(z0) << 32) | ((uint64_t)(nz) << 40))
/* dim 0, 1, 2: x, y, z; the first member's coordinate and the extent. */
#define SR_GROUP_FIRST(g, dim) ((unsigned)(((g) >> (16 * (dim))) & 0xff))
#define SR_GROUP_COUNT(g, dim) ((unsigned)(((g) >> (16 * (dim) + 8)) & 0xff))

#define SR_ARM(area, offset) (((uint64_t)(area) << 48) | ((uint64_t)(offset) & 0xFFFFFFFFFFFFULL))
#define SR_ARM_AREA(v) ((unsigned)((v) >> 48))
#define SR_ARM_OFFSET(v) ((v) & 0xFFFFFFFFFFFFULL)
#define SR_STATE_COUNT(v) ((uint32_t)(v))
#define SR_STATE_ERROR(v) ((unsigned)(((v) >> 32) & 0xff))
#define SR_STATE_COUNT_MASK 0xFFFFFFFFULL

/* ------------------------------------------------------------------------ */
/* Transfer control word (in node memory, 64-byte aligned)                   */
/* ------------------------------------------------------------------------ */
/*
 * One remote DMA: `size` bytes from local bus address `src` to offset
 * `dst_offset` of area `dst_area` at node `dst_node`; then, with
 * SR_TCW_FLAG, the 8-byte `flag_value` to offset `flag_offset` of area
 * `flag_area` there, visible after every byte of the data. size 0 with
 * SR_TCW_FLAG sends the flag alone (a light sync).
 *
 * `version` is the software's promise: a TCW whose bytes change gets a new
 * version; the NIA re-kicks a TCW with the version it cached without reading
 * it again. `status` is written by the NIA: SR_TCW_DONE | sr_status once the
 * last byte has left the node (or the TCW was refused); software zeroes it
 * before a kick. It is not part of what the version covers.
 */
typedef struct sr_tcw {
    uint32_t version;
    uint16_t flags;      /* SR_TCW_* */
    uint16_t dst_node;   /* broadcast: the colour */
    uint64_t src;        /* bus address of the data */
    uint64_t size;
    uint32_t dst_area;
    uint32_t flag_area;
    uint64_t dst_offset;
    uint64_t flag_offset;
    uint64_t flag_value;
    uint64_t status;     /* written by the NIA */
} sr_tcw;

#define SR_TCW_BYTES 64u
#define SR_TCW_ALIGN 64u
#define SR_TCW_FLAG 0x0001u       /* write flag_value after the data */
#define SR_TCW_FLAGS_KNOWN 0x0001u
#define SR_TCW_DONE (1ULL << 63)
#define SR_TCW_STATUS_CODE(s) ((unsigned)((s) & 0xff))
/* The part of the TCW the version covers (everything before `status`). */
#define SR_TCW_DESC_BYTES 56u

SR_STATIC_ASSERT(sizeof(sr_tcw) == SR_TCW_BYTES, "a TCW is 64 bytes");
SR_STATIC_ASSERT(offsetof(sr_tcw, version) == 0, "TCW layout");
SR_STATIC_ASSERT(offsetof(sr_tcw, flags) == 4, "TCW layout");
SR_STATIC_ASSERT(offsetof(sr_tcw, dst_node) == 6, "TCW layout");
SR_STATIC_ASSERT(offsetof(sr_tcw, src) == 8, "TCW layout");
SR_STATIC_ASSERT(offsetof(sr_tcw, size) == 16, "TCW layout");
SR_STATIC_ASSERT(offsetof(sr_tcw, dst_area) == 24, "TCW layout");
SR_STATIC_ASSERT(offsetof(sr_tcw, flag_area) == 28, "TCW layout");
SR_STATIC_ASSERT(offsetof(sr_tcw, dst_offset) == 32, "TCW layout");
SR_STATIC_ASSERT(offsetof(sr_tcw, flag_offset) == 40, "TCW layout");
SR_STATIC_ASSERT(offsetof(sr_tcw, flag_value) == 48, "TCW layout");
SR_STATIC_ASSERT(offsetof(sr_tcw, status) == SR_TCW_DESC_BYTES, "status follows the described part");

/* Largest TCW transfer: the NIA's size field is 32 bits wide in hardware. */
#define SR_TCW_MAX_SIZE 0xFFFFFFFFULL

/* ------------------------------------------------------------------------ */
/* Status and error codes (TCW status, GROUP_STATUS, *_STATE, SR_REG_ERROR)  */
/* ------------------------------------------------------------------------ */
typedef enum sr_status {
    SR_OK = 0,
    SR_ERR_TCW_ADDR = 1,        /* the kicked address is no aligned TCW in node memory */
    SR_ERR_TCW_FLAGS = 2,       /* unknown flag bits */
    SR_ERR_NODE = 3,            /* dst_node is no node of the machine */
    SR_ERR_SRC = 4,             /* source range outside node memory, or size too large */
    SR_ERR_AREA = 5,            /* receive side: area unmapped, or the range outside it */
    SR_ERR_GROUP_EMPTY = 6,
    SR_ERR_GROUP_SELF = 7,
    SR_ERR_GROUP_SHAPE = 8,     /* the group's box reaches past the crossbar grid */
    SR_ERR_GROUP_UNSET = 9,     /* barrier or broadcast on a colour with no valid group */
    SR_ERR_GROUP_MISMATCH = 10, /* members arrived with different groups */
    SR_ERR_BCAST_NOT_ARMED = 11,
    SR_ERR_BCAST_OFFSET = 12,   /* a member's area/offset differs from the root's */
    SR_ERR_BCAST_SIZE = 13,     /* more data than the member armed room for */
    SR_ERR_COLOR = 14,          /* broadcast colour outside 0..7 */
    SR_ERR_LAST = 15
} sr_status;

/* ------------------------------------------------------------------------ */
/* Packets on the crossbar links                                             */
/* ------------------------------------------------------------------------ */
/* A packet is a header (destination node, size, remote-DMA area and offset,
 * flag fields) followed by at most the NIA's packet payload of data; the
 * model charges sr8000_packet_header_bytes of header on every link. */

#ifdef __cplusplus
}
#endif

#endif /* SR8000_HW_H */
