/*
 * fmpl_internal.h - FMPL's state and what its lowest unit (fmpl_core.c)
 * offers the others: the NIA's remote-DMA areas, TCWs that are only
 * rewritten (and re-versioned) when they change, and "channels" of
 * zero-copy send/recv slots (the user's matching and flag areas; FMPL's own
 * for collectives), whose handshake is fmpl_sync.h's. The units, each using
 * only those before it: fmpl_core.c, fmpl_ops.c (reduction functions) <
 * fmpl_sync.c (channel, barriers) < fmpl_p2p.c, fmpl_coll.c < fmpl_init.c.
 *
 * Remote-DMA areas every rank registers alike, so a sender names the place
 * at the receiver by (area, offset) without knowing its addresses:
 *   0  the whole node memory p2run gives the rank (user buffers)
 *   1  the user's matching area (fmpl_init's ma)   2  the user's flag area (fa)
 *   3  FMPL's matching area for collectives        4  FMPL's flags for them
 *   5  light-sync words (software barrier)
 * Areas 0, 3, 4 and 5 lie at the same offsets on every rank (FMPL reserves
 * the top of node memory for 3..5) and are registered when the process
 * starts, so no write from a faster rank can ever find them unmapped; 1 and 2
 * are registered by fmpl_init before its closing barrier.
 *
 * Flag word (what a send writes at the receiver's flag slot): bits 0..23 the
 * sequence number of the receive it completes, 24..62 the bytes sent, bit 63
 * set when the message did not fit (nothing was sent).
 */
#ifndef FMPL_INTERNAL_H
#define FMPL_INTERNAL_H

#include <stddef.h>
#include <stdint.h>

#include "dev/dev.h"
#include "fmpl.h"
#include "rt/rt.h"
#include "sr8000_hw.h"
#include "tca_alloc.h"

#define FMPL_AREA_USER 0u
#define FMPL_AREA_MA 1u
#define FMPL_AREA_FA 2u
#define FMPL_AREA_IMA 3u
#define FMPL_AREA_IFA 4u
#define FMPL_AREA_SYNC 5u

/* Collective slots of FMPL's own channel. */
enum { FMPL_SLOT_BCAST = 0, FMPL_SLOT_REDUCE = 1, FMPL_SLOT_COMM = 2, FMPL_ISLOTS = 3 };

#define FMPL_FLAG_SEQ_MASK 0xFFFFFFull
#define FMPL_FLAG_SIZE_SHIFT 24
#define FMPL_FLAG_TRUNC (1ull << 63)
#define FMPL_FLAG(seq, size) (((uint64_t)(seq) & FMPL_FLAG_SEQ_MASK) | ((uint64_t)(size) << FMPL_FLAG_SIZE_SHIFT))
#define FMPL_FLAG_SIZE(f) (((f) & ~FMPL_FLAG_TRUNC) >> FMPL_FLAG_SIZE_SHIFT)

/* The colour FMPL_COMM_WORLD's hardware barrier and broadcast use. */
#define FMPL_HW_COLOR 0u

typedef struct fmpl_chan {
    unsigned area_ma, area_fa;
    fmpl_match_t *ma;   /* [peer * count + slot]: headers receivers wrote here */
    fmpl_flag_t *fa;    /* [peer * count + slot]: flags senders wrote here */
    int count;
    uint64_t *send_seq, *recv_seq;
    uint8_t *send_live, *recv_live, *send_started;
    uint64_t *recv_got;            /* bytes of the last completed receive */
    const void **send_buf;         /* nonblocking sends waiting for their header */
    size_t *send_size;
    fmpl_match_t *hdr;             /* staging of the headers this rank sends */
    sr_tcw *hdr_tcw, *data_tcw;    /* one each per (peer, slot), reused */
} fmpl_chan;

typedef struct fmpl_spooled {
    int dst, mai;
    uint64_t seq;
    uint64_t offset, size;  /* in the send buffer */
} fmpl_spooled;

typedef struct fmpl_comm_state {
    int used, key, size, me;
    int ranks[FMPL_MAX_PROCS];
    uint64_t barriers;
} fmpl_comm_state;

typedef struct fmpl_state {
    int started, init;
    p2_rt *rt;
    p2_dev *dev;
    int rank, size;
    int node_of[FMPL_MAX_PROCS];
    tca_arena arena;          /* fmpl_malloc, below the reserved top */
    uint64_t reserved_at;     /* offset of FMPL's fixed areas in node memory */
    fmpl_chan user, coll;
    uint64_t *sync;           /* [comm][peer][2]: up (from a child), down (from the parent) */
    sr_tcw *sync_tcw;         /* [peer][2] */
    uint64_t *sync_src;       /* [peer][2]: the value a sync write carries */
    int hw_ok;                /* FMPL_COMM_WORLD may use the hardware barrier and broadcast */
    uint64_t hw_barriers, hw_bcasts;
    fmpl_comm_state comm[FMPL_MAX_COMMS];
    /* send buffering */
    uint8_t *spool;
    size_t spool_size, spool_used;
    double spool_timeout;
    fmpl_spooled spooled[256];
    int nspooled;
    sr_tcw *bcast_tcw;
    /* The step boundaries (ps of the rank's clock) of the blocking send and
     * receive in progress on the user's channel, and the steps of the last
     * completed ones (fmpl_last_steps). */
    uint64_t send_mark[4], recv_mark[4];
    fmpl_steps_t steps;
} fmpl_state;

extern fmpl_state fmpl_g;

/* Checks shared by every call: initialised (else sets *ier). */
int fmpl_ready(int *ier);
/* Whether [p, p+len) lies in node memory (the NIA reaches it). */
int fmpl_mapped(const void *p, size_t len);
/* The bus address of p, which lies in node memory. */
uint64_t fmpl_bus(const void *p, size_t len);
/* Kicks a TCW (fields set through fmpl_tcw_set) and waits until the NIA wrote
 * its status; returns its sr_status. */
unsigned fmpl_tcw_run(sr_tcw *t, uint64_t kick_reg);
void fmpl_tcw_kick(sr_tcw *t, uint64_t kick_reg);
unsigned fmpl_tcw_wait(sr_tcw *t);
/* Sets a TCW's fields; bumps its version only when one changed, and then
 * returns 1 (the NIA will take the modified-TCW path), else 0. */
int fmpl_tcw_set(sr_tcw *t, uint16_t flags, unsigned dst_node, uint64_t src, uint64_t size,
                  unsigned dst_area, uint64_t dst_offset, unsigned flag_area,
                  uint64_t flag_offset, uint64_t flag_value);
/* A look at (block: a wait for) a word of node memory the NIA writes, until
 * (*addr & mask) == value; each costs the rank a main-memory read
 * (fmpl_poll_read_ns) besides the device's poll_detect_ns. fmpl_wait_word:
 * blocking, 0 or -1 when the device failed. */
p2_wait_result fmpl_poll_word(const volatile uint64_t *addr, uint64_t mask, uint64_t value, int block);
int fmpl_wait_word(const volatile uint64_t *addr, uint64_t mask, uint64_t value);
/* Charges `ps` of the library's own software to the rank's clock (the
 * fmpl_* step costs of params.def, in fmpl_g.rt->fmpl). */
void fmpl_charge(uint64_t ps);
/* The rank's clock, in ps (a step boundary of fmpl_last_steps). */
uint64_t fmpl_clock_ps(void);
void fmpl_mmio_write(uint64_t reg, uint64_t value);
uint64_t fmpl_mmio_read(uint64_t reg);

/* fmpl_init's setup in this process (fmpl_core.c): 1 when done, else 0
 * with *ier set. */
int fmpl_setup(fmpl_match_t *ma, fmpl_flag_t *fa, int count, int *ier);

/* API bracketing (clock attribution under --clock cpu). */
#define FMPL_BEGIN() p2_rt_api_begin_call(__func__)
#define FMPL_END() p2_rt_api_end()

#endif /* FMPL_INTERNAL_H */
