/*
 * fmpl_core.c - FMPL's state and setup, memory, the NIA transport (TCWs,
 * waits) and error names: FMPL's lowest unit, under the synchronisation
 * (fmpl_sync.c) and the calls. Layout of areas and flags: fmpl_internal.h.
 * fmpl_init (fmpl_init.c) is this setup, then a barrier and an agreement on
 * count.
 */
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "fmpl/fmpl_internal.h"

fmpl_state fmpl_g;
fmpl_comm_t fmpl_comm_world;

const char *fmpl_error_string(int ier)
{
    switch (ier) {
    case FMPL_SUCCESS: return "FMPL_SUCCESS: no error";
    case FMPL_ERR_NOT_INIT: return "FMPL_ERR_NOT_INIT: fmpl_init has not run";
    case FMPL_ERR_INIT: return "FMPL_ERR_INIT: fmpl_init called twice";
    case FMPL_ERR_NO_DEVICE: return "FMPL_ERR_NO_DEVICE: no SR8000 NIA (not under p2run, or no 'device sr8000' in the topology)";
    case FMPL_ERR_ARG:
        return "FMPL_ERR_ARG: a NULL pointer, a negative size or count, or counts that differ "
               "between ranks";
    case FMPL_ERR_RANK: return "FMPL_ERR_RANK: a rank outside the job or the communicator";
    case FMPL_ERR_SLOT: return "FMPL_ERR_SLOT: matching-area index outside 0 .. count-1";
    case FMPL_ERR_SLOT_BUSY: return "FMPL_ERR_SLOT_BUSY: this (peer, slot) already has a live send or receive";
    case FMPL_ERR_NOT_MAPPED: return "FMPL_ERR_NOT_MAPPED: buffer outside the memory the NIA reaches (use fmpl_malloc)";
    case FMPL_ERR_TRUNCATE: return "FMPL_ERR_TRUNCATE: message larger than the receive buffer; nothing moved";
    case FMPL_ERR_REQUEST: return "FMPL_ERR_REQUEST: not a live request of this kind";
    case FMPL_ERR_SPOOL_FULL: return "FMPL_ERR_SPOOL_FULL: a timed-out send does not fit the send buffer";
    case FMPL_ERR_COMM: return "FMPL_ERR_COMM: not a communicator of this process";
    case FMPL_ERR_KEY_MISMATCH: return "FMPL_ERR_KEY_MISMATCH: members gave different keys or member lists";
    case FMPL_ERR_HW_NOT_ALLOWED: return "FMPL_ERR_HW_NOT_ALLOWED: hardware broadcast/barrier not allowed here (FMPL_COMM_WORLD on a line, rectangle or box of nodes only)";
    case FMPL_ERR_HBCAST_OFFSET: return "FMPL_ERR_HBCAST_OFFSET: this node's broadcast offset or size differs from the root's; nothing landed";
    case FMPL_ERR_FUNC: return "FMPL_ERR_FUNC: not an fmpl_?sum/?max/?min function";
    case FMPL_ERR_DEVICE: return "FMPL_ERR_DEVICE: the NIA refused a transfer, or the simulator is gone";
    case FMPL_ERR_NO_MEMORY: return "FMPL_ERR_NO_MEMORY: node memory for FMPL's areas ran out";
    case FMPL_ERR_TOO_MANY: return "FMPL_ERR_TOO_MANY: more than FMPL_MAX_COMMS communicators";
    default: return "unknown FMPL error code";
    }
}

/* ---- The device ------------------------------------------------------------ */

void fmpl_mmio_write(uint64_t reg, uint64_t value)
{
    fmpl_g.dev->ops->mmio_write(fmpl_g.dev, SR_BAR_REGS, reg, value);
}

uint64_t fmpl_mmio_read(uint64_t reg)
{
    return fmpl_g.dev->ops->mmio_read(fmpl_g.dev, SR_BAR_REGS, reg);
}

p2_wait_result fmpl_poll_word(const volatile uint64_t *addr, uint64_t mask, uint64_t value, int block)
{
    p2_wait_result r = fmpl_g.dev->ops->wait_mem(fmpl_g.dev, addr, mask, value, block);
    /* The NIA does not snoop the CPU's cache: the look that sees the word is
     * a main-memory read (params.def fmpl_poll_read_ns). */
    if (r != P2_WAIT_FAILED)
        fmpl_charge(p2_ns_ps(fmpl_g.rt->prm.fmpl_poll_read_ns));
    return r;
}

int fmpl_wait_word(const volatile uint64_t *addr, uint64_t mask, uint64_t value)
{
    return fmpl_poll_word(addr, mask, value, 1) == P2_WAIT_OK ? 0 : -1;
}

int fmpl_mapped(const void *p, size_t len)
{
    const p2_rt_memory *m = &fmpl_g.rt->host;
    const uint8_t *b = p;
    return p && b >= m->base && (uint64_t)(b - m->base) <= m->size && len <= m->size - (uint64_t)(b - m->base);
}

uint64_t fmpl_bus(const void *p, size_t len)
{
    (void)len;
    return fmpl_g.rt->host.bus + (uint64_t)((const uint8_t *)p - fmpl_g.rt->host.base);
}

int fmpl_tcw_set(sr_tcw *t, uint16_t flags, unsigned dst_node, uint64_t src, uint64_t size,
                  unsigned dst_area, uint64_t dst_offset, unsigned flag_area, uint64_t flag_offset,
                  uint64_t flag_value)
{
    sr_tcw n = *t;
    n.flags = flags;
    n.dst_node = (uint16_t)dst_node;
    n.src = src;
    n.size = size;
    n.dst_area = dst_area;
    n.dst_offset = dst_offset;
    n.flag_area = flag_area;
    n.flag_offset = flag_offset;
    n.flag_value = flag_value;
    /* Unchanged: the NIA re-kicks it from its cache (the fast path). */
    if (memcmp(&n, t, SR_TCW_DESC_BYTES) == 0)
        return 0;
    n.version = t->version + 1;
    memcpy(t, &n, SR_TCW_DESC_BYTES);
    return 1;
}

void fmpl_charge(uint64_t ps)
{
    if (!ps)
        return;
    p2_rt_enter(fmpl_g.rt);
    p2_rt_charge_ps(fmpl_g.rt, ps);
    p2_rt_leave(fmpl_g.rt);
}

uint64_t fmpl_clock_ps(void)
{
    p2_rt_enter(fmpl_g.rt);
    uint64_t t = p2_rt_clock_ps(fmpl_g.rt);
    p2_rt_leave(fmpl_g.rt);
    return t;
}

void fmpl_tcw_kick(sr_tcw *t, uint64_t kick_reg)
{
    t->status = 0;
    fmpl_mmio_write(kick_reg, fmpl_bus(t, sizeof *t));
}

unsigned fmpl_tcw_wait(sr_tcw *t)
{
    if (fmpl_wait_word(&t->status, SR_TCW_DONE, SR_TCW_DONE) != 0)
        return SR_ERR_LAST;
    return SR_TCW_STATUS_CODE(t->status);
}

unsigned fmpl_tcw_run(sr_tcw *t, uint64_t kick_reg)
{
    fmpl_tcw_kick(t, kick_reg);
    return fmpl_tcw_wait(t);
}

int fmpl_ready(int *ier)
{
    if (!fmpl_g.init) {
        if (ier)
            *ier = FMPL_ERR_NOT_INIT;
        return 0;
    }
    return 1;
}

/* ---- Memory and the fixed areas ------------------------------------------------ */

/* FMPL's fixed areas at the top of node memory: collective matching slots
 * and flags, and the light-sync words. */
#define FMPL_IMA_BYTES ((uint64_t)FMPL_MAX_PROCS * FMPL_ISLOTS * sizeof(fmpl_match_t))
#define FMPL_IFA_BYTES ((uint64_t)FMPL_MAX_PROCS * FMPL_ISLOTS * sizeof(fmpl_flag_t))
#define FMPL_SYNC_BYTES ((uint64_t)FMPL_MAX_COMMS * FMPL_MAX_PROCS * 2 * sizeof(uint64_t))
#define FMPL_RESERVED_BYTES (FMPL_IMA_BYTES + FMPL_IFA_BYTES + FMPL_SYNC_BYTES)

static int has_nia(p2_rt *rt)
{
    for (unsigned d = 0; d < rt->ndevices; d++)
        if (strcmp(rt->device[d], "sr8000") == 0)
            return 1;
    return 0;
}

static void map_area(unsigned area, const void *base, uint64_t size)
{
    fmpl_mmio_write(SR_REG_AREA_BASE(area), fmpl_bus(base, size));
    fmpl_mmio_write(SR_REG_AREA_SIZE(area), size);
}

/* Process start: the areas every rank has alike, before any rank can write. */
static int fmpl_start(void)
{
    if (fmpl_g.started)
        return fmpl_g.dev ? 0 : -1;
    fmpl_g.started = 1;
    p2_rt *rt = p2_rt_get();
    if (!rt || !has_nia(rt) || rt->host.size < FMPL_RESERVED_BYTES + 4096)
        return -1;
    p2_dev *dev = p2_device_get("sr8000");
    if (!dev)
        return -1;
    fmpl_g.rt = rt;
    fmpl_g.dev = dev;
    fmpl_g.rank = rt->rank;
    fmpl_g.size = rt->size;
    for (int r = 0; r < rt->size && r < FMPL_MAX_PROCS; r++)
        fmpl_g.node_of[r] = p2_rt_rank_node(rt, r);
    fmpl_g.reserved_at = (rt->host.size - FMPL_RESERVED_BYTES) & ~(uint64_t)(SR_TCW_ALIGN - 1);
    uint8_t *top = rt->host.base + fmpl_g.reserved_at;
    fmpl_g.coll.ma = (fmpl_match_t *)top;
    fmpl_g.coll.fa = (fmpl_flag_t *)(top + FMPL_IMA_BYTES);
    fmpl_g.sync = (uint64_t *)(top + FMPL_IMA_BYTES + FMPL_IFA_BYTES);
    if (tca_arena_init(&fmpl_g.arena, fmpl_g.reserved_at) != TCA_ARENA_OK)
        return -1;
    p2_rt_api_begin();
    map_area(FMPL_AREA_USER, rt->host.base, rt->host.size);
    map_area(FMPL_AREA_IMA, fmpl_g.coll.ma, FMPL_IMA_BYTES);
    map_area(FMPL_AREA_IFA, fmpl_g.coll.fa, FMPL_IFA_BYTES);
    map_area(FMPL_AREA_SYNC, fmpl_g.sync, FMPL_SYNC_BYTES);
    p2_rt_api_end();
    return 0;
}

/* Only in a process that attaches as it starts: one that has the runtime
 * only through the preloaded MPI layer (a shell script's) leaves the rank
 * to the program that starts MPI (rt_process.c). */
__attribute__((constructor)) static void fmpl_start_early(void)
{
    const char *job = getenv("P2_JOB");
    if (job && *job && p2_rt_get_if_attached())
        (void)fmpl_start();
}

void *fmpl_malloc(size_t size)
{
    if (fmpl_start() != 0 || size == 0)
        return NULL;
    uint64_t off;
    if (tca_arena_alloc(&fmpl_g.arena, size, &off) != TCA_ARENA_OK)
        return NULL;
    return fmpl_g.rt->host.base + off;
}

void fmpl_free(void *ptr)
{
    if (!ptr || !fmpl_g.dev)
        return;
    (void)tca_arena_free(&fmpl_g.arena, (uint64_t)((uint8_t *)ptr - fmpl_g.rt->host.base));
}

int fmpl_myrank(void)
{
    return fmpl_start() == 0 ? fmpl_g.rank : -1;
}

int fmpl_nprocs(void)
{
    return fmpl_start() == 0 ? fmpl_g.size : 0;
}

/* ---- Channels ------------------------------------------------------------------ */

static void *zalloc(size_t bytes)
{
    void *p = fmpl_malloc(bytes);
    if (p)
        memset(p, 0, bytes);
    return p;
}

static int chan_setup(fmpl_chan *ch, unsigned area_ma, unsigned area_fa, int count)
{
    size_t n = (size_t)count * (size_t)fmpl_g.size;
    ch->area_ma = area_ma;
    ch->area_fa = area_fa;
    ch->count = count;
    ch->send_seq = calloc(n, sizeof(uint64_t));
    ch->recv_seq = calloc(n, sizeof(uint64_t));
    ch->recv_got = calloc(n, sizeof(uint64_t));
    ch->send_live = calloc(n, 1);
    ch->recv_live = calloc(n, 1);
    ch->send_started = calloc(n, 1);
    ch->send_buf = calloc(n, sizeof(void *));
    ch->send_size = calloc(n, sizeof(size_t));
    ch->hdr = zalloc(n * sizeof(fmpl_match_t));
    ch->hdr_tcw = zalloc(n * sizeof(sr_tcw));
    ch->data_tcw = zalloc(n * sizeof(sr_tcw));
    if (!ch->send_seq || !ch->recv_seq || !ch->recv_got || !ch->send_live || !ch->recv_live ||
        !ch->send_started || !ch->send_buf || !ch->send_size || !ch->hdr || !ch->hdr_tcw ||
        !ch->data_tcw)
        return FMPL_ERR_NO_MEMORY;
    return FMPL_SUCCESS;
}

/* fmpl_init's work in this process: the arguments checked, the channels,
 * the user's areas mapped, FMPL_COMM_WORLD, and whether it may use the
 * hardware collectives. 1 with fmpl_g.init set, else 0 with *ier set. */
/* The hardware group of FMPL_COMM_WORLD: the box of the crossbar grid its
 * nodes span (SR_GROUP_BOX). The crossbars only combine and fan out whole
 * boxes and one process per node, so fmpl_g.hw_ok says whether the world's
 * nodes are exactly the box's, each once; the NIA checks the box itself. */
static uint64_t world_box(void)
{
    const uint64_t shape = fmpl_mmio_read(SR_REG_SHAPE);
    const unsigned ext[3] = {SR_SHAPE_X(shape), SR_SHAPE_Y(shape), SR_SHAPE_Z(shape)};
    unsigned lo[3] = {~0u, ~0u, ~0u}, hi[3] = {0, 0, 0};
    for (int r = 0; r < fmpl_g.size; r++) {
        unsigned n = (unsigned)fmpl_g.node_of[r];
        const unsigned at[3] = {n % ext[0], n / ext[0] % ext[1], n / (ext[0] * ext[1])};
        for (int d = 0; d < 3; d++) {
            lo[d] = at[d] < lo[d] ? at[d] : lo[d];
            hi[d] = at[d] > hi[d] ? at[d] : hi[d];
        }
    }
    /* Distinct nodes inside the box, and as many as it holds: exactly it. */
    uint64_t volume = 1;
    for (int d = 0; d < 3; d++)
        volume *= hi[d] - lo[d] + 1;
    int distinct = 1;
    for (int r = 0; r < fmpl_g.size && distinct; r++)
        for (int q = 0; q < r && distinct; q++)
            distinct = fmpl_g.node_of[q] != fmpl_g.node_of[r];
    fmpl_g.hw_ok = distinct && volume == (uint64_t)fmpl_g.size;
    return SR_GROUP_BOX(lo[0], hi[0] - lo[0] + 1, lo[1], hi[1] - lo[1] + 1, lo[2], hi[2] - lo[2] + 1);
}

int fmpl_setup(fmpl_match_t *ma, fmpl_flag_t *fa, int count, int *ier)
{
    if (fmpl_g.init) {
        *ier = FMPL_ERR_INIT;
        return 0;
    }
    if (fmpl_start() != 0) {
        fprintf(stderr, "fmpl_init: %s\n", fmpl_error_string(FMPL_ERR_NO_DEVICE));
        *ier = FMPL_ERR_NO_DEVICE;
        return 0;
    }
    if (!ma || !fa || count <= 0) {
        *ier = FMPL_ERR_ARG;
        return 0;
    }
    if (fmpl_g.size > FMPL_MAX_PROCS) {
        *ier = FMPL_ERR_RANK;
        return 0;
    }
    size_t slots = FMPL_AREA_SLOTS(count, fmpl_g.size);
    if (!fmpl_mapped(ma, slots * sizeof *ma) || !fmpl_mapped(fa, slots * sizeof *fa)) {
        *ier = FMPL_ERR_NOT_MAPPED;
        return 0;
    }
    memset(ma, 0, slots * sizeof *ma);
    memset(fa, 0, slots * sizeof *fa);
    fmpl_g.user.ma = ma;
    fmpl_g.user.fa = fa;
    int rc = chan_setup(&fmpl_g.user, FMPL_AREA_MA, FMPL_AREA_FA, count);
    if (rc == FMPL_SUCCESS)
        rc = chan_setup(&fmpl_g.coll, FMPL_AREA_IMA, FMPL_AREA_IFA, FMPL_ISLOTS);
    fmpl_g.sync_tcw = zalloc((size_t)fmpl_g.size * 2 * sizeof(sr_tcw));
    fmpl_g.sync_src = zalloc((size_t)fmpl_g.size * 2 * sizeof(uint64_t));
    fmpl_g.bcast_tcw = zalloc(sizeof(sr_tcw));
    if (rc != FMPL_SUCCESS || !fmpl_g.sync_tcw || !fmpl_g.sync_src || !fmpl_g.bcast_tcw) {
        *ier = FMPL_ERR_NO_MEMORY;
        return 0;
    }
    map_area(FMPL_AREA_MA, ma, slots * sizeof *ma);
    map_area(FMPL_AREA_FA, fa, slots * sizeof *fa);

    /* FMPL_COMM_WORLD: every rank, in rank order. */
    fmpl_comm_world.size = fmpl_g.size;
    for (int r = 0; r < fmpl_g.size; r++)
        fmpl_comm_world.ranks[r] = r;
    fmpl_comm_world.key = 0;
    fmpl_comm_world.handle = 0;
    fmpl_comm_state *w = &fmpl_g.comm[0];
    memset(w, 0, sizeof *w);
    w->used = 1;
    w->size = fmpl_g.size;
    w->me = fmpl_g.rank;
    memcpy(w->ranks, fmpl_comm_world.ranks, sizeof w->ranks);

    fmpl_mmio_write(SR_REG_GROUP(FMPL_HW_COLOR), world_box());
    fmpl_g.hw_ok = fmpl_mmio_read(SR_REG_GROUP_STATUS(FMPL_HW_COLOR)) == SR_OK && fmpl_g.hw_ok;
    /* Forcing the software algorithms (comparisons, tests). */
    const char *force = getenv("FMPL_HW_COLLECTIVES");
    if (force && strcmp(force, "0") == 0)
        fmpl_g.hw_ok = 0;
    fmpl_g.init = 1;
    return 1;
}
