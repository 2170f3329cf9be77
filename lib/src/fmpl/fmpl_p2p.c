/*
 * fmpl_p2p.c - FMPL's point-to-point calls: zero-copy send and receive on the
 * user's channel (the handshake: fmpl_sync.c), nonblocking variants, send
 * buffering with a timeout, and fmpl_finalize. Depends on fmpl_sync.c and
 * fmpl_core.c.
 */
#include <stdlib.h>
#include <string.h>

#include "fmpl/fmpl_sync.h"

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

/* ---- The public calls ------------------------------------------------------- */

static int size_ok(size_t size) { return size <= SR_TCW_MAX_SIZE && size < (1ull << 39); }

/* Send buffering: wait for the header at most the timeout, polling. */
static int send_or_spool(const void *buf, size_t size, int dst, int mai)
{
    fmpl_chan *ch = &fmpl_g.user;
    size_t i;
    int rc = fmpl_chan_start_send(ch, buf, size, dst, mai, &i);
    if (rc != FMPL_SUCCESS)
        return rc;
    const double poll = FMPL_POLL_S;
    double waited = 0;
    for (;;) {
        int h = fmpl_chan_header_here(ch, i, 0);
        if (h < 0)
            return FMPL_ERR_DEVICE;
        if (h == 1)
            return fmpl_chan_put(ch, buf, size, dst, mai);
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

void fmpl_last_steps(fmpl_steps_t *steps)
{
    if (steps)
        *steps = fmpl_g.steps;
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
        int h = fmpl_chan_header_here(ch, i, block);
        if (h == 1) {
            int r = fmpl_chan_put(ch, fmpl_g.spool + s.offset, s.size, s.dst, s.mai);
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
