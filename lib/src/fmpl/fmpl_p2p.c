/*
 * fmpl_p2p.c - zero-copy send and receive (one round trip), nonblocking
 * variants, and send buffering with a timeout.
 *
 *   receiver                                  sender
 *   recv: header {area 0, offset, room, seq}
 *         --- remote DMA into ma[me][slot] --->
 *                                             send: waits for ma[dst][slot].seq
 *                                                   data straight into the buffer,
 *         <--- remote DMA, then the flag ------     then flag {seq, size}
 *   waits for fa[src][slot] == seq
 *
 * A message larger than the room: the sender writes the flag alone with
 * FMPL_FLAG_TRUNC; both sides return FMPL_ERR_TRUNCATE and no byte moves.
 */
#include <stdlib.h>
#include <string.h>

#include "fmpl/fmpl_internal.h"

/* Seconds between two looks at a header while a send may time out, and the
 * rate a timed-out send is copied into the send buffer: the library's own
 * costs, charged to the rank's clock (FMPL_POLL_US, FMPL_COPY_GBPS override). */
static double env_or(const char *name, double fallback)
{
    const char *v = getenv(name);
    char *end;
    double d = v ? strtod(v, &end) : 0;
    return v && end != v && d > 0 ? d : fallback;
}
#define FMPL_POLL_S (env_or("FMPL_POLL_US", 1.0) * 1e-6)
#define FMPL_COPY_BYTES_PER_S (env_or("FMPL_COPY_GBPS", 2.0) * 1e9)

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

static int put_data(fmpl_chan *ch, const void *buf, size_t size, int dst, int slot)
{
    return finish_data(ch, dst, slot, kick_data(ch, buf, size, dst, slot));
}

static int header_here(fmpl_chan *ch, size_t i, int block)
{
    p2_wait_result r = fmpl_g.dev->ops->wait_mem(fmpl_g.dev, &ch->ma[i].seq, ~0ull, ch->send_seq[i], block);
    return r == P2_WAIT_OK ? 1 : r == P2_WAIT_NOT_YET ? 0 : -1;
}

static int start_send(fmpl_chan *ch, const void *buf, size_t size, int dst, int slot, size_t *index)
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
    return FMPL_SUCCESS;
}

int fmpl_chan_send(fmpl_chan *ch, const void *buf, size_t size, int dst, int slot)
{
    size_t i;
    int rc = start_send(ch, buf, size, dst, slot, &i);
    if (rc != FMPL_SUCCESS)
        return rc;
    if (header_here(ch, i, 1) < 0)
        return FMPL_ERR_DEVICE;
    return put_data(ch, buf, size, dst, slot);
}

int fmpl_chan_refuse(fmpl_chan *ch, int dst, int slot)
{
    size_t i;
    int rc = start_send(ch, NULL, 0, dst, slot, &i);
    if (rc != FMPL_SUCCESS)
        return rc;
    if (header_here(ch, i, 1) < 0)
        return FMPL_ERR_DEVICE;
    return finish_data(ch, dst, slot, kick(ch, NULL, 0, dst, slot, 1));
}

int fmpl_chan_isend(fmpl_chan *ch, const void *buf, size_t size, int dst, int slot)
{
    size_t i;
    int rc = start_send(ch, buf, size, dst, slot, &i);
    if (rc != FMPL_SUCCESS)
        return rc;
    ch->send_buf[i] = buf;
    ch->send_size[i] = size;
    /* The receiver was first: the data goes now. */
    if (header_here(ch, i, 0) == 1)
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
    if (header_here(ch, i, 1) < 0)
        return FMPL_ERR_DEVICE;
    return put_data(ch, ch->send_buf[i], ch->send_size[i], dst, slot);
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

int fmpl_chan_wait_recv(fmpl_chan *ch, int src, int slot)
{
    int rc = check_peer(ch, src, slot);
    if (rc != FMPL_SUCCESS)
        return rc;
    size_t i = (size_t)src * (size_t)ch->count + (size_t)slot;
    if (!ch->recv_live[i])
        return FMPL_ERR_REQUEST;
    uint64_t seq = ch->recv_seq[i];
    int ok = fmpl_wait_word(&ch->fa[i], FMPL_FLAG_SEQ_MASK, seq & FMPL_FLAG_SEQ_MASK) == 0;
    /* What the receive does once the flag is seen: the checks below. */
    fmpl_charge(p2_ns_ps(fmpl_g.rt->prm.fmpl_flag_check_ns));
    unsigned st = fmpl_tcw_wait(&ch->hdr_tcw[i]);
    ch->recv_live[i] = 0;
    if (!ok || st != SR_OK)
        return FMPL_ERR_DEVICE;
    uint64_t f = ch->fa[i];
    if (f & FMPL_FLAG_TRUNC)
        return FMPL_ERR_TRUNCATE;
    ch->recv_got[i] = FMPL_FLAG_SIZE(f);
    return FMPL_SUCCESS;
}

int fmpl_chan_recv(fmpl_chan *ch, void *buf, size_t size, int src, int slot)
{
    int rc = fmpl_chan_irecv(ch, buf, size, src, slot);
    return rc != FMPL_SUCCESS ? rc : fmpl_chan_wait_recv(ch, src, slot);
}

/* ---- The public calls ------------------------------------------------------- */

static int size_ok(size_t size) { return size <= SR_TCW_MAX_SIZE && size < (1ull << 39); }

/* Send buffering: wait for the header at most the timeout, polling. */
static int send_or_spool(const void *buf, size_t size, int dst, int mai)
{
    fmpl_chan *ch = &fmpl_g.user;
    size_t i;
    int rc = start_send(ch, buf, size, dst, mai, &i);
    if (rc != FMPL_SUCCESS)
        return rc;
    const double poll = FMPL_POLL_S;
    double waited = 0;
    for (;;) {
        int h = header_here(ch, i, 0);
        if (h < 0)
            return FMPL_ERR_DEVICE;
        if (h == 1)
            return put_data(ch, buf, size, dst, mai);
        if (waited >= fmpl_g.spool_timeout)
            break;
        p2_rt_compute(poll);
        waited += poll;
    }
    /* Timed out: copy it aside; fmpl_sendbuff_check sends it later. */
    uint64_t at = (fmpl_g.spool_used + SR_TCW_ALIGN - 1) / SR_TCW_ALIGN * SR_TCW_ALIGN;
    if (at + size > fmpl_g.spool_size || fmpl_g.nspooled == (int)(sizeof fmpl_g.spooled / sizeof fmpl_g.spooled[0])) {
        ch->send_live[i] = 0;
        ch->send_seq[i]--;
        return FMPL_ERR_SPOOL_FULL;
    }
    memcpy(fmpl_g.spool + at, buf, size);
    p2_rt_compute((double)size / FMPL_COPY_BYTES_PER_S);
    fmpl_g.spool_used = at + size;
    fmpl_g.spooled[fmpl_g.nspooled++] = (fmpl_spooled){dst, mai, ch->send_seq[i], at, size};
    return FMPL_SUCCESS;
}

void fmpl_send(const void *buf, size_t size, int dst, int mai, int *ier)
{
    int dummy;
    if (!ier)
        ier = &dummy;
    FMPL_BEGIN();
    if (fmpl_ready(ier)) {
        if (!size_ok(size))
            *ier = FMPL_ERR_ARG;
        else if (fmpl_g.spool_size)
            *ier = send_or_spool(buf, size, dst, mai);
        else
            *ier = fmpl_chan_send(&fmpl_g.user, buf, size, dst, mai);
    }
    FMPL_END();
}

void fmpl_recv(void *buf, size_t size, int src, int mai, int *ier)
{
    int dummy;
    if (!ier)
        ier = &dummy;
    FMPL_BEGIN();
    if (fmpl_ready(ier))
        *ier = size_ok(size) ? fmpl_chan_recv(&fmpl_g.user, buf, size, src, mai) : FMPL_ERR_ARG;
    FMPL_END();
}

size_t fmpl_recv_size(int src, int mai)
{
    fmpl_chan *ch = &fmpl_g.user;
    if (!fmpl_g.init || src < 0 || src >= fmpl_g.size || mai < 0 || mai >= ch->count)
        return 0;
    return ch->recv_got[(size_t)src * (size_t)ch->count + (size_t)mai];
}

enum { REQ_SEND = 1, REQ_RECV = 2 };

void fmpl_isend(const void *buf, size_t size, int dst, int mai, fmpl_request_t *req, int *ier)
{
    int dummy;
    if (!ier)
        ier = &dummy;
    FMPL_BEGIN();
    if (fmpl_ready(ier)) {
        if (!req || !size_ok(size))
            *ier = FMPL_ERR_ARG;
        else if ((*ier = fmpl_chan_isend(&fmpl_g.user, buf, size, dst, mai)) == FMPL_SUCCESS)
            *req = (fmpl_request_t){REQ_SEND, dst, mai, 1};
    }
    FMPL_END();
}

void fmpl_irecv(void *buf, size_t size, int src, int mai, fmpl_request_t *req, int *ier)
{
    int dummy;
    if (!ier)
        ier = &dummy;
    FMPL_BEGIN();
    if (fmpl_ready(ier)) {
        if (!req || !size_ok(size))
            *ier = FMPL_ERR_ARG;
        else if ((*ier = fmpl_chan_irecv(&fmpl_g.user, buf, size, src, mai)) == FMPL_SUCCESS)
            *req = (fmpl_request_t){REQ_RECV, src, mai, 1};
    }
    FMPL_END();
}

void fmpl_wait_isend(fmpl_request_t *req, int *ier)
{
    int dummy;
    if (!ier)
        ier = &dummy;
    FMPL_BEGIN();
    if (fmpl_ready(ier)) {
        if (!req || !req->live || req->kind != REQ_SEND) {
            *ier = FMPL_ERR_REQUEST;
        } else {
            *ier = fmpl_chan_wait_send(&fmpl_g.user, req->peer, req->mai);
            req->live = 0;
        }
    }
    FMPL_END();
}

void fmpl_wait_irecv(fmpl_request_t *req, int *ier)
{
    int dummy;
    if (!ier)
        ier = &dummy;
    FMPL_BEGIN();
    if (fmpl_ready(ier)) {
        if (!req || !req->live || req->kind != REQ_RECV) {
            *ier = FMPL_ERR_REQUEST;
        } else {
            *ier = fmpl_chan_wait_recv(&fmpl_g.user, req->peer, req->mai);
            req->live = 0;
        }
    }
    FMPL_END();
}

void fmpl_sendbuff_set(void *buf, size_t size, double timeout, int *ier)
{
    int dummy;
    if (!ier)
        ier = &dummy;
    FMPL_BEGIN();
    if (fmpl_ready(ier)) {
        if (fmpl_g.nspooled)
            *ier = FMPL_ERR_SLOT_BUSY;
        else if ((size && !buf) || timeout < 0)
            *ier = FMPL_ERR_ARG;
        else if (size && !fmpl_mapped(buf, size))
            *ier = FMPL_ERR_NOT_MAPPED;
        else {
            fmpl_g.spool = buf;
            fmpl_g.spool_size = size;
            fmpl_g.spool_used = 0;
            fmpl_g.spool_timeout = timeout;
            *ier = FMPL_SUCCESS;
        }
    }
    FMPL_END();
}

/* Sends spooled messages whose receivers are ready (`block`: waits for each). */
static int flush_spool(int block, int *nsend)
{
    fmpl_chan *ch = &fmpl_g.user;
    int sent = 0, kept = 0, rc = FMPL_SUCCESS;
    for (int k = 0; k < fmpl_g.nspooled; k++) {
        fmpl_spooled s = fmpl_g.spooled[k];
        size_t i = (size_t)s.dst * (size_t)ch->count + (size_t)s.mai;
        int h = header_here(ch, i, block);
        if (h == 1) {
            int r = put_data(ch, fmpl_g.spool + s.offset, s.size, s.dst, s.mai);
            if (r != FMPL_SUCCESS && rc == FMPL_SUCCESS)
                rc = r;
            sent++;
        } else {
            if (h < 0)
                rc = FMPL_ERR_DEVICE;
            fmpl_g.spooled[kept++] = s;
        }
    }
    fmpl_g.nspooled = kept;
    if (!kept)
        fmpl_g.spool_used = 0;
    if (nsend)
        *nsend = sent;
    return rc;
}

void fmpl_sendbuff_check(int *nsend, int *nspool, int *ier)
{
    int dummy;
    if (!ier)
        ier = &dummy;
    FMPL_BEGIN();
    if (fmpl_ready(ier)) {
        int sent = 0;
        *ier = flush_spool(0, &sent);
        if (nsend)
            *nsend = sent;
        if (nspool)
            *nspool = fmpl_g.nspooled;
    }
    FMPL_END();
}

void fmpl_finalize(int *ier)
{
    int dummy;
    if (!ier)
        ier = &dummy;
    FMPL_BEGIN();
    if (fmpl_ready(ier)) {
        int rc = flush_spool(1, NULL);
        int b = fmpl_g.hw_ok ? fmpl_hw_barrier() : fmpl_sw_barrier(&fmpl_g.comm[0], 0);
        fmpl_g.init = 0;
        *ier = rc != FMPL_SUCCESS ? rc : b;
    }
    FMPL_END();
}
