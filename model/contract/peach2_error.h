/*
 * peach2_error.h - the PEACH2 DMA error codes: the part of the hardware
 * contract (peach2_hw.h) that programs see, since tcaGetDMAError returns them.
 * Public: installed with tca-api.h, which includes it; the register map and
 * address layout in peach2_hw.h are not.
 */
#ifndef PEACH2_ERROR_H
#define PEACH2_ERROR_H

#ifdef __cplusplus
#define P2_STATIC_ASSERT(c, m) static_assert(c, m)
extern "C" {
#else
#define P2_STATIC_ASSERT(c, m) _Static_assert(c, m)
#endif

/* Why a DMAC channel stopped (its P2_DMA_ERROR register).
 *
 * Destination checks. A write is posted: no completion tells its initiator
 * that the target dropped it. So the DMAC checks every descriptor's
 * destination, before any byte moves, against what it knows of the target:
 * a host or GPU window of an existing node (P2_ERR_DST_UNMAPPED) and, inside
 * it, the memory every node exposes there (host_memory_bytes /
 * gpu_memory_bytes, the same on every node: P2_ERR_DST_RANGE), and that
 * its routing table reaches the node (a node of another PEACH2 network, which
 * no cable path joins: P2_ERR_DST_UNREACHABLE). A failed
 * descriptor writes nothing and raises no notification. */
typedef enum p2_error {
    P2_OK = 0,
    P2_ERR_SRC_UNMAPPED = 1,   /* source outside any mapped window */
    P2_ERR_DST_UNMAPPED = 2,   /* destination outside any mapped window */
    P2_ERR_SRC_REMOTE = 3,     /* source not in this node's host or GPU memory */
    P2_ERR_BAD_DESC = 4,       /* zero length, zero blocks, unknown flag bits */
    P2_ERR_BAD_NOTIFY = 5,     /* wait slot or tag out of range */
    P2_ERR_REG_COUNT = 6,      /* register mode with REG_COUNT outside 1..16 */
    P2_ERR_DESC_FETCH = 7,     /* descriptor read completed with an error */
    P2_ERR_UNSUPPORTED = 8,    /* a read completed Unsupported Request */
    P2_ERR_COMPLETER_ABORT = 9, /* a read completed Completer Abort */
    P2_ERR_BUSY = 10,          /* start written while the channel was busy */
    P2_ERR_DST_RANGE = 11,     /* destination beyond the target node's exposed memory */
    P2_ERR_DST_UNREACHABLE = 12 /* destination node on another PEACH2 network (no route) */
} p2_error;

P2_STATIC_ASSERT(P2_ERR_BUSY == 10 && P2_ERR_DST_RANGE == 11 && P2_ERR_DST_UNREACHABLE == 12,
                 "error codes are read from P2_DMA_ERROR: never renumber them");

static inline const char *p2_error_name(p2_error e)
{
    switch (e) {
    case P2_OK: return "ok";
    case P2_ERR_SRC_UNMAPPED: return "source address outside any mapped window";
    case P2_ERR_DST_UNMAPPED: return "destination address outside any mapped window";
    case P2_ERR_SRC_REMOTE: return "source is not this node's host or GPU memory";
    case P2_ERR_BAD_DESC: return "malformed descriptor";
    case P2_ERR_BAD_NOTIFY: return "notification slot or tag out of range";
    case P2_ERR_REG_COUNT: return "register-mode descriptor count out of range";
    case P2_ERR_DESC_FETCH: return "descriptor fetch failed";
    case P2_ERR_UNSUPPORTED: return "read completed with Unsupported Request";
    case P2_ERR_COMPLETER_ABORT: return "read completed with Completer Abort";
    case P2_ERR_BUSY: return "start while the channel was busy";
    case P2_ERR_DST_RANGE: return "destination beyond the target node's exposed memory";
    case P2_ERR_DST_UNREACHABLE: return "destination node is on another PEACH2 network (no route)";
    }
    return "unknown PEACH2 error";
}

#ifdef __cplusplus
}
#endif

#endif /* PEACH2_ERROR_H */
