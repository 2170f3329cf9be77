/*
 * p2mpi_p2p.c - point-to-point on a context, the machinery of the MPI
 * point-to-point calls and of the collectives: a request per call, eager
 * data into a send slot or an RTS, receives matched against the messages
 * that arrived first, waits that run the engine's progress loop. A wait
 * inside a nonblocking collective's coroutine yields instead (the progress
 * loop of the call that resumed it goes on), and a wait outside any resumes
 * the nonblocking collectives in flight after each completion (E.nbc_run,
 * which p2mpi_nbc.c sets: a hook, as MPI's progress engine calls its
 * collectives' schedules). Depends on the engine (p2mpi_engine.c), the
 * coroutines (p2mpi_coro.c) and the units below them.
 */
#define _GNU_SOURCE
#include "p2mpi_p2p.h"

#include "p2mpi_coro.h"

#include <stdio.h>
#include <stdlib.h>
#include <string.h>

/* ---- Point-to-point ------------------------------------------------------------ */

void pm_describe(const char *dir, int peer, int tag, pm_comm *c)
{
    char p[24], t[24];
    if (peer == MPI_ANY_SOURCE)
        snprintf(p, sizeof p, "any rank");
    else
        snprintf(p, sizeof p, "rank %d", c->world[peer]);
    if (tag == MPI_ANY_TAG)
        snprintf(t, sizeof t, "any tag");
    else
        snprintf(t, sizeof t, "tag %d", tag);
    if (!E.what[0])
        snprintf(E.what, sizeof E.what, "%s %s %s", dir, p, t);
}

/* A collective's wait names its root rather than its tag: where the ranks'
 * roots differ and no message between them says so, the deadlock diagnosis
 * then shows them. */
static void describe_req(const char *dir, int peer, int tag, pm_comm *c, int coll,
                         const pm_coll_sig *sig)
{
    if (coll && sig->kind != PM_SIG_NONE && sig->root >= 0 && peer >= 0 && !E.what[0])
        snprintf(E.what, sizeof E.what, "%s rank %d (root %d)", dir, c->world[peer], sig->root);
    else
        pm_describe(dir, peer, tag, c);
}

void pm_check_peer(pm_comm *c, int peer, int any_ok)
{
    if (peer == MPI_PROC_NULL || (any_ok && peer == MPI_ANY_SOURCE))
        return;
    if (peer < 0 || peer >= c->size)
        pm_fatal("rank %d is not in the communicator (size %d) (MPI_ERR_RANK)", peer, c->size);
}

/* A new active point-to-point request with the call's arguments, handed out
 * in *h; the call's cost is charged here. */
static pm_req *req_start(int kind, void *buf, int count, MPI_Datatype type, int peer, int tag,
                         pm_comm *c, int coll, MPI_Request *h)
{
    pm_req *r = pm_req_new(kind);
    r->buf = buf;
    r->count = count;
    r->type = type;
    r->peer = peer;
    r->tag = tag;
    r->comm = c;
    r->coll = coll;
    /* a nonblocking collective's messages: a context of their own */
    r->ctx = coll ? (c->ctx + 1u) | E.coll_ctx_bits : c->ctx;
    if (coll) {
        r->call = E.call;
        r->sig = E.coll_sig;
    }
    r->active = 1;
    *h = as_handle(r);
    describe_req(kind == RQ_SEND ? "to" : "from", peer, tag, c, coll, &E.coll_sig);
    pm_charge(p2_ns_ps(E.rt->prm.mpi_call_ns));
    return r;
}

int pm_isend(const void *buf, int count, MPI_Datatype type, int dest, int tag, pm_comm *c,
             int coll, int sync, MPI_Request *req)
{
    pm_check_peer(c, dest, 0);
    pm_need_count(count, "count");
    if (!coll && tag < 0)
        pm_fatal("negative tag %d (MPI_ERR_TAG)", tag);
    pm_req *r = req_start(RQ_SEND, (void *)buf, count, type, dest, tag, c, coll, req);
    r->sync = sync;
    if (dest == MPI_PROC_NULL) {
        r->done = 1;
        return MPI_SUCCESS;
    }
    size_t n = pm_type_size(type) * (size_t)count;
    r->bytes = n;
    pm_hdr h = {.src = pm_world_rank, .tag = tag, .ctx = r->ctx, .bytes = n, .sreq = r->id};
    if (coll)
        pm_hdr_put_sig(&h, &E.coll_sig, E.coll_seq);
    /* GPU buffers: eager only up to the GDRCopy limit (MVAPICH2-GDR). */
    int gpu = pm_gpu_mem(buf);
    uint64_t gdrcopy = (uint64_t)E.rt->prm.mpi_gdrcopy_bytes;
    if (n <= (gpu && gdrcopy < pm_eager_bytes ? gdrcopy : pm_eager_bytes) && !sync) {
        h.type = H_EAGER;
        int s = pm_take_send_slot();
        uint8_t *p = pm_send_slot(s);
        memcpy(p, &h, HDR_BYTES);
        pm_pack(buf, count, type, p + HDR_BYTES, n);
        pm_charge(gpu ? pm_gdr_d2h_ps(n) : pm_copy_ps(n));
        pm_post_wqe(IB_OP_SEND, c->world[dest], 0,
                    pm_bus_of(E.send_off + (uint64_t)s * E.slot_bytes), HDR_BYTES + n, 0,
                    WR(WR_SLOT, s));
        r->done = 1;
    } else {
        h.type = H_RTS; /* MPI_Ssend: always, so it completes only once matched */
        pm_send_hdr(c->world[dest], &h, NULL, 0);
    }
    return MPI_SUCCESS;
}

int pm_irecv(void *buf, int count, MPI_Datatype type, int src, int tag, pm_comm *c, int coll,
             MPI_Request *req)
{
    pm_check_peer(c, src, 1);
    pm_need_count(count, "count");
    pm_req *r = req_start(RQ_RECV, buf, count, type, src, tag, c, coll, req);
    if (src == MPI_PROC_NULL) {
        r->status.MPI_SOURCE = MPI_PROC_NULL;
        r->status.MPI_TAG = MPI_ANY_TAG;
        r->status._ucount = 0;
        r->done = 1;
        return MPI_SUCCESS;
    }
    /* Earliest unexpected message first: arrival (simulated-time) order. */
    pm_unexp **pp = &E.unexp, *prev = NULL;
    for (pm_unexp *u = E.unexp; u; prev = u, pp = &u->next, u = u->next)
        if (pm_matches(r, &u->h)) {
            *pp = u->next;
            if (E.unexp_tail == u)
                E.unexp_tail = prev;
            pm_deliver(r, &u->h, u->data);
            free(u->data);
            free(u);
            return MPI_SUCCESS;
        }
    if (E.posted_tail)
        E.posted_tail->next = r;
    else
        E.posted = r;
    E.posted_tail = r;
    r->next = NULL;
    return MPI_SUCCESS;
}

/* ---- Waiting ------------------------------------------------------------------- */

void pm_nbc_run(void)
{
    if (E.nbc_run && !pm_coro_self())
        E.nbc_run();
}

void pm_block(void)
{
    if (pm_coro_self()) {
        pm_coro_yield();
        return;
    }
    pm_progress(PM_WAIT_OPEN);
    pm_nbc_run();
}

void pm_poll(void)
{
    pm_nbc_run();
    while (pm_progress(PM_TEST))
        pm_nbc_run();
}

void pm_status_of(const pm_req *r, MPI_Status *st)
{
    if (r->hooks) { /* a generalized request: the program's query */
        MPI_Status ignored;
        r->hooks->status((pm_req *)r, st == MPI_STATUS_IGNORE ? &ignored : st);
        return;
    }
    if (st == MPI_STATUS_IGNORE)
        return;
    if (r->kind == RQ_RECV) {
        *st = r->status;
    } else {
        st->MPI_ERROR = MPI_SUCCESS;
        st->_cancelled = 0;
        st->_ucount = 0;
    }
}

/* Finishes a done request: status out; a persistent one goes inactive, any
 * other is freed and its handle nulled. */
void pm_finish(MPI_Request *h, MPI_Status *st)
{
    pm_req *r = as_req(*h);
    pm_status_of(r, st);
    if (r->persistent) {
        r->active = 0;
        return;
    }
    pm_req_free(r);
    *h = MPI_REQUEST_NULL;
}

void pm_empty_status(MPI_Status *st)
{
    if (st == MPI_STATUS_IGNORE)
        return;
    st->MPI_SOURCE = MPI_ANY_SOURCE;
    st->MPI_TAG = MPI_ANY_TAG;
    st->MPI_ERROR = MPI_SUCCESS;
    st->_cancelled = 0;
    st->_ucount = 0;
}

int pm_inactive(MPI_Request h) { return h == MPI_REQUEST_NULL || !as_req(h)->active; }

int pm_wait(MPI_Request *h, MPI_Status *st)
{
    if (pm_inactive(*h)) {
        pm_empty_status(st);
        return MPI_SUCCESS;
    }
    pm_req *r = as_req(*h);
    if (!E.what[0] && (r->kind == RQ_SEND || r->kind == RQ_RECV))
        describe_req(r->kind == RQ_SEND ? "to" : "from", r->peer, r->tag, r->comm, r->coll,
                     &r->sig);
    pm_nbc_run();
    while (!r->done)
        pm_block();
    pm_finish(h, st);
    return MPI_SUCCESS;
}

int pm_waitall(int n, MPI_Request reqs[], MPI_Status sts[])
{
    for (int i = 0; i < n; i++)
        pm_wait(&reqs[i], sts == MPI_STATUSES_IGNORE ? MPI_STATUS_IGNORE : &sts[i]);
    return MPI_SUCCESS;
}

int pm_send(const void *buf, int count, MPI_Datatype type, int dest, int tag, pm_comm *c, int coll)
{
    MPI_Request r;
    pm_isend(buf, count, type, dest, tag, c, coll, 0, &r);
    return pm_wait(&r, MPI_STATUS_IGNORE);
}

int pm_recv(void *buf, int count, MPI_Datatype type, int src, int tag, pm_comm *c, int coll,
            MPI_Status *st)
{
    MPI_Request r;
    pm_irecv(buf, count, type, src, tag, c, coll, &r);
    return pm_wait(&r, st);
}

int pm_sendrecv(const void *sbuf, int scount, MPI_Datatype stype, int dest, int stag, void *rbuf,
                int rcount, MPI_Datatype rtype, int src, int rtag, pm_comm *c, int coll,
                MPI_Status *st)
{
    MPI_Request r[2];
    pm_irecv(rbuf, rcount, rtype, src, rtag, c, coll, &r[0]);
    pm_isend(sbuf, scount, stype, dest, stag, c, coll, 0, &r[1]);
    pm_wait(&r[1], MPI_STATUS_IGNORE);
    return pm_wait(&r[0], st);
}

/* ---- Probes and matched receives ------------------------------------------------ */

pm_unexp *pm_probe(int src, int tag, pm_comm *c, int block)
{
    pm_req key = {.peer = src, .tag = tag, .comm = c, .ctx = c->ctx, .type = MPI_BYTE};
    for (;;) {
        for (pm_unexp *u = E.unexp; u; u = u->next)
            if (pm_matches(&key, &u->h))
                return u;
        if (!pm_progress(block ? PM_WAIT_OPEN : PM_TEST))
            return NULL;
        pm_nbc_run();
    }
}

void pm_probe_status(const pm_unexp *u, pm_comm *c, MPI_Status *st)
{
    if (st == MPI_STATUS_IGNORE)
        return;
    st->MPI_SOURCE = pm_comm_rank_of(c, u->h.src);
    st->MPI_TAG = u->h.tag;
    st->MPI_ERROR = MPI_SUCCESS;
    st->_cancelled = 0;
    st->_ucount = (size_t)u->h.bytes;
}

void pm_unexp_take(pm_unexp *u)
{
    pm_unexp *prev = NULL;
    for (pm_unexp **pp = &E.unexp; *pp; prev = *pp, pp = &(*pp)->next)
        if (*pp == u) {
            *pp = u->next;
            if (E.unexp_tail == u)
                E.unexp_tail = prev;
            u->next = NULL;
            return;
        }
}

int pm_imrecv(void *buf, int count, MPI_Datatype type, pm_unexp *u, pm_comm *c, MPI_Request *req)
{
    pm_need_count(count, "count");
    pm_req *r = req_start(RQ_RECV, buf, count, type, pm_comm_rank_of(c, u->h.src), u->h.tag, c, 0,
                          req);
    pm_deliver(r, &u->h, u->data);
    free(u->data);
    free(u);
    return MPI_SUCCESS;
}

/* ---- Buffered sends ------------------------------------------------------------- */

/* The buffer MPI_Buffer_attach gave: each buffered message takes
 * MPI_BSEND_OVERHEAD bytes and its packed data, first fit in address order,
 * until the send from it completes. */
typedef struct pm_bseg {
    size_t off, len;
    pm_req *send; /* the send from the buffer */
    struct pm_bseg *next;
} pm_bseg;

static struct {
    char *base;
    size_t size;
    pm_bseg *segs; /* by offset */
} B;

/* Frees the space of messages whose sends have completed. */
static void bsend_reclaim(void)
{
    for (pm_bseg **q = &B.segs; *q;) {
        pm_bseg *s = *q;
        if (s->send->done) {
            *q = s->next;
            pm_req_free(s->send);
            free(s);
        } else {
            q = &s->next;
        }
    }
}

/* A gap of len bytes (first fit); the link to insert it at, or NULL. */
static pm_bseg **bsend_fit(size_t len, size_t *off)
{
    size_t at = 0;
    pm_bseg **q = &B.segs;
    for (; *q; q = &(*q)->next) {
        if ((*q)->off - at >= len)
            break;
        at = (*q)->off + (*q)->len;
    }
    if (at > B.size || B.size - at < len)
        return NULL;
    *off = at;
    return q;
}

static size_t bsend_used(void)
{
    size_t n = 0;
    for (pm_bseg *s = B.segs; s; s = s->next)
        n += s->len;
    return n;
}

void pm_buffer_attach(void *buf, int size)
{
    if (B.base)
        pm_fatal("a buffer is attached already (MPI_ERR_BUFFER)");
    if (size < 0)
        pm_fatal("negative size %d (MPI_ERR_ARG)", size);
    B.base = buf;
    B.size = (size_t)size;
}

void pm_buffer_detach(void **buf, int *size)
{
    pm_nbc_run();
    for (pm_bseg *s = B.segs; s; s = s->next)
        while (!s->send->done)
            pm_block();
    bsend_reclaim();
    *buf = B.base;
    *size = (int)B.size;
    B.base = NULL;
    B.size = 0;
}

int pm_ibsend(const void *buf, int count, MPI_Datatype type, int dest, int tag, pm_comm *c,
              MPI_Request *req)
{
    pm_check_peer(c, dest, 0);
    pm_need_count(count, "count");
    if (tag < 0)
        pm_fatal("negative tag %d (MPI_ERR_TAG)", tag);
    if (dest == MPI_PROC_NULL) {
        MPI_Request r;
        pm_isend(buf, count, type, dest, tag, c, 0, 0, req ? req : &r);
        if (!req)
            pm_req_free(as_req(r));
        return MPI_SUCCESS;
    }
    int packed = 0;
    PMPI_Pack_size(count, type, MPI_COMM_SELF, &packed);
    size_t n = pm_type_size(type) * (size_t)count, need = (size_t)packed + MPI_BSEND_OVERHEAD, off;
    if (!B.base)
        pm_fatal("no buffer is attached (MPI_Buffer_attach) for a buffered send of %zu bytes "
                 "(MPI_ERR_BUFFER)",
                 n);
    bsend_reclaim();
    pm_bseg **at = bsend_fit(need, &off);
    if (!at) { /* sends that completed by now free their space */
        pm_poll();
        bsend_reclaim();
        at = bsend_fit(need, &off);
    }
    if (!at)
        pm_fatal("a buffered send of %zu bytes needs %zu bytes of the attached buffer "
                 "(MPI_BSEND_OVERHEAD %d included): %zu of its %zu bytes are held by messages "
                 "not yet sent, and no free run is that long (MPI_ERR_BUFFER)",
                 n, need, MPI_BSEND_OVERHEAD, bsend_used(), B.size);
    pm_bseg *s = calloc(1, sizeof *s);
    if (!s)
        pm_fatal("out of memory");
    s->off = off;
    s->len = need;
    s->next = *at;
    *at = s;
    /* The copy into the attached buffer, charged as the eager copy is; the
     * message then leaves from there as a standard send. */
    char *data = B.base + off + MPI_BSEND_OVERHEAD;
    pm_pack(buf, count, type, data, n);
    pm_charge(pm_gpu_mem(buf) ? pm_gdr_d2h_ps(n) : pm_copy_ps(n));
    MPI_Request h;
    pm_isend(data, (int)n, MPI_BYTE, dest, tag, c, 0, 0, &h);
    s->send = as_req(h);
    if (req) { /* complete already: the data is in the buffer */
        pm_req *r = pm_req_new(RQ_SEND);
        r->active = 1;
        r->done = 1;
        r->buf = (void *)buf;
        r->count = count;
        r->type = type;
        r->peer = dest;
        r->tag = tag;
        r->comm = c;
        r->ctx = c->ctx;
        *req = as_handle(r);
    }
    return MPI_SUCCESS;
}
