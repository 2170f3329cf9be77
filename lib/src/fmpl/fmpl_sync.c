/*
 * fmpl_sync.c - FMPL's synchronisation, which both the point-to-point calls
 * (fmpl_p2p.c) and the collectives (fmpl_coll.c) are built on: the zero-copy
 * channel's handshake and the barriers. Depends on fmpl_core.c alone.
 *
 * Channel (one round trip per message):
 *
 *   receiver                                  sender
 *   recv: header {area 0, offset, room, seq}
 *         --- remote DMA into ma[me][slot] --->
 *                                             send: waits for ma[dst][slot].seq
 *                                                   data straight into the buffer,
 *         <--- remote DMA, then the flag ------     then flag {seq, size}
 *   waits for fa[src][slot] == seq
 *
 * Each remote DMA is done (its TCW's status) when the destination NIA's
 * acknowledgement is back: the send returns once the data and flag are in
 * the receiver's memory, the receive waits for its header's before the flag
 * (the steps fmpl_last_steps reports). Every look at a word the NIA writes
 * costs a main-memory read (fmpl_poll_word).
 *
 * A message larger than the room: the sender writes the flag alone with
 * FMPL_FLAG_TRUNC; both sides return FMPL_ERR_TRUNCATE and no byte moves.
 *
 * Barriers. Software: up the tree (a child's 8-byte sync write to its parent
 * once its own children arrived), then down (release writes), 2 log2 p one-way
 * latencies. Hardware: one arrival store and a wait, flat in p.
 */
#include "fmpl/fmpl_sync.h"

/* ---- The channel --------------------------------------------------------------- */

static int check_peer(fmpl_chan *ch, int peer, int slot)
{
    if (peer < 0 || peer >= fmpl_g.size)
        return FMPL_ERR_RANK;
    if (slot < 0 || slot >= ch->count)
        return FMPL_ERR_SLOT;
    return FMPL_SUCCESS;
}

/* Kicks the data (or, when it does not fit or `refuse` is set, the refusal)
 * of send (dst, slot), whose header is here. Returns FMPL_ERR_TRUNCATE for a
 * refusal. */
static int kick(fmpl_chan *ch, const void *buf, size_t size, int dst, int slot, int refuse)
{
    size_t i = (size_t)dst * (size_t)ch->count + (size_t)slot;
    const fmpl_match_t *h = &ch->ma[i];
    uint64_t seq = ch->send_seq[i];
    uint64_t flag_at = ((uint64_t)fmpl_g.rank * (uint64_t)ch->count + (uint64_t)slot) * sizeof(fmpl_flag_t);
    sr_tcw *t = &ch->data_tcw[i];
    int rc = FMPL_SUCCESS, modified;
    /* Reading the header the receiver wrote here is the sender's software
     * between seeing it and the kick; so is rewriting the TCW, which every
     * message does (its flag carries the new sequence number). */
    fmpl_charge(p2_ns_ps(fmpl_g.rt->prm.fmpl_header_check_ns));
    if (refuse || size > h->size) {
        modified = fmpl_tcw_set(t, SR_TCW_FLAG, (unsigned)fmpl_g.node_of[dst], 0, 0, 0, 0, ch->area_fa,
                                flag_at, FMPL_FLAG(seq, 0) | FMPL_FLAG_TRUNC);
        rc = FMPL_ERR_TRUNCATE;
    } else {
        modified = fmpl_tcw_set(t, SR_TCW_FLAG, (unsigned)fmpl_g.node_of[dst], size ? fmpl_bus(buf, size) : 0,
                                size, (unsigned)h->area, h->offset, ch->area_fa, flag_at, FMPL_FLAG(seq, size));
    }
    if (modified)
        fmpl_charge(p2_ns_ps(fmpl_g.rt->prm.fmpl_data_tcw_ns));
    fmpl_tcw_kick(t, SR_REG_KICK);
    ch->send_started[i] = 1;
    ch->send_size[i] = size;
    return rc;
}

static int kick_data(fmpl_chan *ch, const void *buf, size_t size, int dst, int slot)
{
    return kick(ch, buf, size, dst, slot, 0);
}

/* Waits until a kicked send's data has left; the slot is free again. */
static int finish_data(fmpl_chan *ch, int dst, int slot, int rc)
{
    size_t i = (size_t)dst * (size_t)ch->count + (size_t)slot;
    if (fmpl_tcw_wait(&ch->data_tcw[i]) != SR_OK)
        rc = FMPL_ERR_DEVICE;
    ch->send_live[i] = 0;
    ch->send_started[i] = 0;
    return rc;
}

int fmpl_chan_put(fmpl_chan *ch, const void *buf, size_t size, int dst, int slot)
{
    return finish_data(ch, dst, slot, kick_data(ch, buf, size, dst, slot));
}

int fmpl_chan_header_here(fmpl_chan *ch, size_t i, int block)
{
    p2_wait_result r = fmpl_poll_word(&ch->ma[i].seq, ~0ull, ch->send_seq[i], block);
    return r == P2_WAIT_OK ? 1 : r == P2_WAIT_NOT_YET ? 0 : -1;
}

int fmpl_chan_start_send(fmpl_chan *ch, const void *buf, size_t size, int dst, int slot,
                         size_t *index)
{
    int rc = check_peer(ch, dst, slot);
    if (rc != FMPL_SUCCESS)
        return rc;
    if (!buf && size)
        return FMPL_ERR_ARG;
    if (size && !fmpl_mapped(buf, size))
        return FMPL_ERR_NOT_MAPPED;
    size_t i = (size_t)dst * (size_t)ch->count + (size_t)slot;
    if (ch->send_live[i])
        return FMPL_ERR_SLOT_BUSY;
    ch->send_live[i] = 1;
    ch->send_seq[i]++;
    *index = i;
    /* The send's set-up before it looks at its matching slot. */
    fmpl_charge(p2_ns_ps(fmpl_g.rt->prm.fmpl_send_init_ns));
    return FMPL_SUCCESS;
}

/* Step boundaries of the blocking calls on the user's channel
 * (fmpl_last_steps): mark k of m, and the step from mark k to k + 1. */
static void mark(const fmpl_chan *ch, uint64_t *m, int k)
{
    if (ch == &fmpl_g.user)
        m[k] = fmpl_clock_ps();
}

static double step_s(const uint64_t *m, int k) { return (double)(m[k + 1] - m[k]) * 1e-12; }

int fmpl_chan_send(fmpl_chan *ch, const void *buf, size_t size, int dst, int slot)
{
    uint64_t *m = fmpl_g.send_mark;
    mark(ch, m, 0);
    size_t i;
    int rc = fmpl_chan_start_send(ch, buf, size, dst, slot, &i);
    if (rc != FMPL_SUCCESS)
        return rc;
    mark(ch, m, 1);
    if (fmpl_chan_header_here(ch, i, 1) < 0)
        return FMPL_ERR_DEVICE;
    mark(ch, m, 2);
    rc = fmpl_chan_put(ch, buf, size, dst, slot);
    mark(ch, m, 3);
    if (ch == &fmpl_g.user && rc == FMPL_SUCCESS) {
        fmpl_g.steps.send_init = step_s(m, 0);
        fmpl_g.steps.send_wait = step_s(m, 1);
        fmpl_g.steps.send_data = step_s(m, 2);
    }
    return rc;
}

int fmpl_chan_refuse(fmpl_chan *ch, int dst, int slot)
{
    size_t i;
    int rc = fmpl_chan_start_send(ch, NULL, 0, dst, slot, &i);
    if (rc != FMPL_SUCCESS)
        return rc;
    if (fmpl_chan_header_here(ch, i, 1) < 0)
        return FMPL_ERR_DEVICE;
    return finish_data(ch, dst, slot, kick(ch, NULL, 0, dst, slot, 1));
}

int fmpl_chan_isend(fmpl_chan *ch, const void *buf, size_t size, int dst, int slot)
{
    size_t i;
    int rc = fmpl_chan_start_send(ch, buf, size, dst, slot, &i);
    if (rc != FMPL_SUCCESS)
        return rc;
    ch->send_buf[i] = buf;
    ch->send_size[i] = size;
    /* The receiver was first: the data goes now. */
    if (fmpl_chan_header_here(ch, i, 0) == 1)
        (void)kick_data(ch, buf, size, dst, slot);
    return FMPL_SUCCESS;
}

int fmpl_chan_wait_send(fmpl_chan *ch, int dst, int slot)
{
    int rc = check_peer(ch, dst, slot);
    if (rc != FMPL_SUCCESS)
        return rc;
    size_t i = (size_t)dst * (size_t)ch->count + (size_t)slot;
    if (!ch->send_live[i])
        return FMPL_ERR_REQUEST;
    if (ch->send_started[i])
        return finish_data(ch, dst, slot, ch->send_size[i] > ch->ma[i].size ? FMPL_ERR_TRUNCATE : FMPL_SUCCESS);
    if (fmpl_chan_header_here(ch, i, 1) < 0)
        return FMPL_ERR_DEVICE;
    return fmpl_chan_put(ch, ch->send_buf[i], ch->send_size[i], dst, slot);
}

int fmpl_chan_irecv(fmpl_chan *ch, void *buf, size_t size, int src, int slot)
{
    int rc = check_peer(ch, src, slot);
    if (rc != FMPL_SUCCESS)
        return rc;
    if (!buf && size)
        return FMPL_ERR_ARG;
    if (size && !fmpl_mapped(buf, size))
        return FMPL_ERR_NOT_MAPPED;
    uint64_t bus = size ? fmpl_bus(buf, size) : fmpl_g.rt->host.bus;
    size_t i = (size_t)src * (size_t)ch->count + (size_t)slot;
    if (ch->recv_live[i])
        return FMPL_ERR_SLOT_BUSY;
    ch->recv_live[i] = 1;
    uint64_t seq = ++ch->recv_seq[i];
    fmpl_match_t *h = &ch->hdr[i];
    h->area = FMPL_AREA_USER;
    h->offset = bus - fmpl_g.rt->host.bus;
    h->size = size;
    h->seq = seq;
    uint64_t at = ((uint64_t)fmpl_g.rank * (uint64_t)ch->count + (uint64_t)slot) * sizeof(fmpl_match_t);
    (void)fmpl_tcw_set(&ch->hdr_tcw[i], 0, (unsigned)fmpl_g.node_of[src], fmpl_bus(h, sizeof *h), sizeof *h,
                       ch->area_ma, at, 0, 0, 0);
    /* The header's words and their write-back to memory, where the NIA reads
     * them; the TCW itself stays as the previous receive left it. */
    fmpl_charge(p2_ns_ps(fmpl_g.rt->prm.fmpl_header_post_ns));
    fmpl_tcw_kick(&ch->hdr_tcw[i], SR_REG_KICK);
    return FMPL_SUCCESS;
}

/* The receive's two waits: its header's remote DMA complete (the NIA's
 * report; then `m`'s mark 2, where given), then the completion flag. */
static int wait_recv(fmpl_chan *ch, int src, int slot, uint64_t *m)
{
    int rc = check_peer(ch, src, slot);
    if (rc != FMPL_SUCCESS)
        return rc;
    size_t i = (size_t)src * (size_t)ch->count + (size_t)slot;
    if (!ch->recv_live[i])
        return FMPL_ERR_REQUEST;
    uint64_t seq = ch->recv_seq[i];
    /* A header the NIA refused never reaches the sender: no flag will come. */
    if (fmpl_tcw_wait(&ch->hdr_tcw[i]) != SR_OK) {
        ch->recv_live[i] = 0;
        return FMPL_ERR_DEVICE;
    }
    if (m)
        mark(ch, m, 2);
    int ok = fmpl_wait_word(&ch->fa[i], FMPL_FLAG_SEQ_MASK, seq & FMPL_FLAG_SEQ_MASK) == 0;
    /* What the receive does once the flag is seen: the checks below. */
    fmpl_charge(p2_ns_ps(fmpl_g.rt->prm.fmpl_flag_check_ns));
    ch->recv_live[i] = 0;
    if (!ok)
        return FMPL_ERR_DEVICE;
    uint64_t f = ch->fa[i];
    if (f & FMPL_FLAG_TRUNC)
        return FMPL_ERR_TRUNCATE;
    ch->recv_got[i] = FMPL_FLAG_SIZE(f);
    return FMPL_SUCCESS;
}

int fmpl_chan_wait_recv(fmpl_chan *ch, int src, int slot) { return wait_recv(ch, src, slot, NULL); }

int fmpl_chan_recv(fmpl_chan *ch, void *buf, size_t size, int src, int slot)
{
    uint64_t *m = fmpl_g.recv_mark;
    mark(ch, m, 0);
    int rc = fmpl_chan_irecv(ch, buf, size, src, slot);
    if (rc != FMPL_SUCCESS)
        return rc;
    mark(ch, m, 1);
    rc = wait_recv(ch, src, slot, m);
    mark(ch, m, 3);
    if (ch == &fmpl_g.user && rc == FMPL_SUCCESS) {
        fmpl_g.steps.recv_init = step_s(m, 0);
        fmpl_g.steps.recv_header = step_s(m, 1);
        fmpl_g.steps.recv_data = step_s(m, 2);
    }
    return rc;
}

/* ---- Barrier ---------------------------------------------------------------------- */

int fmpl_hw_barrier(void)
{
    fmpl_mmio_write(SR_REG_BAR_ARRIVE(FMPL_HW_COLOR), 1);
    uint64_t n = ++fmpl_g.hw_barriers;
    if (fmpl_g.dev->ops->wait_reg(fmpl_g.dev, SR_BAR_REGS, SR_REG_BAR_STATE(FMPL_HW_COLOR),
                                  SR_STATE_COUNT_MASK, n & SR_STATE_COUNT_MASK) != P2_WAIT_OK)
        return FMPL_ERR_DEVICE;
    return FMPL_SUCCESS;
}

/* One light sync: `value` into word `dir` of the partner's sync slot for
 * (handle, this rank's position). */
static int sync_write(int peer, int handle, int me, int dir, uint64_t value)
{
    size_t k = (size_t)peer * 2 + (size_t)dir;
    uint64_t at = (((uint64_t)handle * FMPL_MAX_PROCS + (uint64_t)me) * 2 + (uint64_t)dir) * sizeof(uint64_t);
    fmpl_tcw_set(&fmpl_g.sync_tcw[k], SR_TCW_FLAG, (unsigned)fmpl_g.node_of[peer], 0, 0, 0, 0,
                 FMPL_AREA_SYNC, at, value);
    fmpl_tcw_kick(&fmpl_g.sync_tcw[k], SR_REG_KICK);
    return FMPL_SUCCESS;
}

static int sync_wait(int handle, int from_pos, int dir, uint64_t value)
{
    volatile uint64_t *w = &fmpl_g.sync[((size_t)handle * FMPL_MAX_PROCS + (size_t)from_pos) * 2 + (size_t)dir];
    return fmpl_wait_word(w, ~0ull, value) == 0 ? FMPL_SUCCESS : FMPL_ERR_DEVICE;
}

int fmpl_sw_barrier(fmpl_comm_state *c, int handle)
{
    const uint64_t b = ++c->barriers;
    const int v = c->me, p = c->size;
    int rc = FMPL_SUCCESS;
    /* Up: both children, then tell the parent. */
    for (int k = 1; k <= 2; k++)
        if (2 * v + k < p && rc == FMPL_SUCCESS)
            rc = sync_wait(handle, 2 * v + k, 0, b);
    if (v > 0 && rc == FMPL_SUCCESS) {
        sync_write(c->ranks[parent_of(v)], handle, v, 0, b);
        rc = sync_wait(handle, parent_of(v), 1, b);
    }
    /* Down: release both children. */
    int kicked[2] = {-1, -1};
    for (int k = 1; k <= 2; k++)
        if (2 * v + k < p && rc == FMPL_SUCCESS) {
            sync_write(c->ranks[2 * v + k], handle, v, 1, b);
            kicked[k - 1] = c->ranks[2 * v + k];
        }
    /* Each sync TCW is reused by the next barrier: it must have left. */
    if (v > 0 && fmpl_tcw_wait(&fmpl_g.sync_tcw[(size_t)c->ranks[parent_of(v)] * 2]) != SR_OK)
        rc = FMPL_ERR_DEVICE;
    for (int k = 0; k < 2; k++)
        if (kicked[k] >= 0 && fmpl_tcw_wait(&fmpl_g.sync_tcw[(size_t)kicked[k] * 2 + 1]) != SR_OK)
            rc = FMPL_ERR_DEVICE;
    return rc;
}

