/*
 * p2mpi_p2p_calls.c - the MPI point-to-point calls: send and receive in
 * the standard and synchronous modes, waits and tests (of any request, a
 * nonblocking collective's too), MPI_Request_get_status, MPI_Cancel,
 * persistent requests (of every mode), probes. The buffered and ready modes
 * and the matched probes are p2mpi_p2p_modes.c's.
 * Depends on p2mpi_p2p.c and the units below it.
 */
#define _GNU_SOURCE
#include "p2mpi_p2p.h"

#include <stdlib.h>

/* ---- The point-to-point calls ------------------------------------------------------- */

int MPI_Send(const void *buf, int count, MPI_Datatype type, int dest, int tag, MPI_Comm comm)
{
    CALL("MPI_Send");
    RETURN(pm_send(buf, count, type, dest, tag, pm_comm_of(comm, "MPI_Send"), 0));
}

int MPI_Ssend(const void *buf, int count, MPI_Datatype type, int dest, int tag, MPI_Comm comm)
{
    CALL("MPI_Ssend");
    MPI_Request r;
    pm_isend(buf, count, type, dest, tag, pm_comm_of(comm, "MPI_Ssend"), 0, 1, &r);
    RETURN(pm_wait(&r, MPI_STATUS_IGNORE));
}

int MPI_Isend(const void *buf, int count, MPI_Datatype type, int dest, int tag, MPI_Comm comm,
              MPI_Request *req)
{
    CALL("MPI_Isend");
    pm_need_req(req, "request");
    RETURN(pm_isend(buf, count, type, dest, tag, pm_comm_of(comm, "MPI_Isend"), 0, 0, req));
}

int MPI_Issend(const void *buf, int count, MPI_Datatype type, int dest, int tag, MPI_Comm comm,
               MPI_Request *req)
{
    CALL("MPI_Issend");
    pm_need_req(req, "request");
    RETURN(pm_isend(buf, count, type, dest, tag, pm_comm_of(comm, "MPI_Issend"), 0, 1, req));
}

int MPI_Recv(void *buf, int count, MPI_Datatype type, int src, int tag, MPI_Comm comm,
             MPI_Status *st)
{
    CALL("MPI_Recv");
    RETURN(pm_recv(buf, count, type, src, tag, pm_comm_of(comm, "MPI_Recv"), 0, st));
}

int MPI_Irecv(void *buf, int count, MPI_Datatype type, int src, int tag, MPI_Comm comm,
              MPI_Request *req)
{
    CALL("MPI_Irecv");
    pm_need_req(req, "request");
    RETURN(pm_irecv(buf, count, type, src, tag, pm_comm_of(comm, "MPI_Irecv"), 0, req));
}

int MPI_Sendrecv(const void *sbuf, int scount, MPI_Datatype stype, int dest, int stag, void *rbuf,
                 int rcount, MPI_Datatype rtype, int src, int rtag, MPI_Comm comm, MPI_Status *st)
{
    CALL("MPI_Sendrecv");
    pm_need_count(scount, "sendcount");
    pm_need_count(rcount, "recvcount");
    RETURN(pm_sendrecv(sbuf, scount, stype, dest, stag, rbuf, rcount, rtype, src, rtag,
                       pm_comm_of(comm, "MPI_Sendrecv"), 0, st));
}

int MPI_Sendrecv_replace(void *buf, int count, MPI_Datatype type, int dest, int stag, int src,
                         int rtag, MPI_Comm comm, MPI_Status *st)
{
    CALL("MPI_Sendrecv_replace");
    pm_need_count(count, "count");
    void *tmp_shift;
    void *tmp = pm_type_buffer(type, count, &tmp_shift);
    pm_sendrecv(buf, count, type, dest, stag, tmp_shift, count, type, src, rtag,
                pm_comm_of(comm, "MPI_Sendrecv_replace"), 0, st);
    size_t got = st != MPI_STATUS_IGNORE ? (size_t)st->_ucount : pm_type_size(type) * (size_t)count;
    int n = (int)(got / (pm_type_size(type) ? pm_type_size(type) : 1));
    pm_local_copy(tmp_shift, n, type, buf, count, type);
    free(tmp);
    RETURN(MPI_SUCCESS);
}

int MPI_Wait(MPI_Request *req, MPI_Status *st)
{
    CALL("MPI_Wait");
    pm_need_req(req, "request");
    RETURN(pm_wait(req, st));
}

int MPI_Waitall(int n, MPI_Request reqs[], MPI_Status sts[])
{
    CALL("MPI_Waitall");
    pm_need_reqs(reqs, n);
    RETURN(pm_waitall(n, reqs, sts));
}

int MPI_Test(MPI_Request *req, int *flag, MPI_Status *st)
{
    CALL("MPI_Test");
    pm_need_req(req, "request");
    if (pm_inactive(*req)) {
        *flag = 1;
        pm_empty_status(st);
        RETURN(MPI_SUCCESS);
    }
    if (!as_req(*req)->done)
        pm_poll();
    *flag = as_req(*req)->done;
    if (*flag)
        pm_finish(req, st);
    RETURN(MPI_SUCCESS);
}

int MPI_Testall(int n, MPI_Request reqs[], int *flag, MPI_Status sts[])
{
    CALL("MPI_Testall");
    pm_need_reqs(reqs, n);
    pm_poll();
    int all = 1;
    for (int i = 0; i < n; i++)
        if (!pm_inactive(reqs[i]) && !as_req(reqs[i])->done)
            all = 0;
    *flag = all;
    if (all)
        for (int i = 0; i < n; i++) {
            MPI_Status *s = sts == MPI_STATUSES_IGNORE ? MPI_STATUS_IGNORE : &sts[i];
            if (pm_inactive(reqs[i]))
                pm_empty_status(s);
            else
                pm_finish(&reqs[i], s);
        }
    RETURN(MPI_SUCCESS);
}

/* The first done request among reqs, lowest index; -1 if none; -2 if every
 * one is inactive. */
static int first_done(int n, MPI_Request reqs[])
{
    int any_active = 0;
    for (int i = 0; i < n; i++) {
        if (pm_inactive(reqs[i]))
            continue;
        any_active = 1;
        if (as_req(reqs[i])->done)
            return i;
    }
    return any_active ? -1 : -2;
}

int MPI_Waitany(int n, MPI_Request reqs[], int *index, MPI_Status *st)
{
    CALL("MPI_Waitany");
    pm_need_reqs(reqs, n);
    int i;
    pm_nbc_run();
    while ((i = first_done(n, reqs)) == -1)
        pm_block();
    if (i == -2) {
        *index = MPI_UNDEFINED;
        pm_empty_status(st);
        RETURN(MPI_SUCCESS);
    }
    *index = i;
    pm_finish(&reqs[i], st);
    RETURN(MPI_SUCCESS);
}

int MPI_Testany(int n, MPI_Request reqs[], int *index, int *flag, MPI_Status *st)
{
    CALL("MPI_Testany");
    pm_need_reqs(reqs, n);
    pm_poll();
    int i = first_done(n, reqs);
    *flag = i != -1;
    *index = MPI_UNDEFINED;
    if (i == -2)
        pm_empty_status(st);
    else if (i >= 0) {
        *index = i;
        pm_finish(&reqs[i], st);
    }
    RETURN(MPI_SUCCESS);
}

static int some_done(int n, MPI_Request reqs[], int *outcount, int idx[], MPI_Status sts[])
{
    int k = 0, any_active = 0;
    for (int i = 0; i < n; i++) {
        if (pm_inactive(reqs[i]))
            continue;
        any_active = 1;
        if (as_req(reqs[i])->done) {
            idx[k] = i;
            pm_finish(&reqs[i], sts == MPI_STATUSES_IGNORE ? MPI_STATUS_IGNORE : &sts[k]);
            k++;
        }
    }
    *outcount = any_active ? k : MPI_UNDEFINED;
    return k;
}

int MPI_Waitsome(int n, MPI_Request reqs[], int *outcount, int idx[], MPI_Status sts[])
{
    CALL("MPI_Waitsome");
    pm_need_reqs(reqs, n);
    pm_nbc_run();
    while (first_done(n, reqs) == -1)
        pm_block();
    some_done(n, reqs, outcount, idx, sts);
    RETURN(MPI_SUCCESS);
}

int MPI_Testsome(int n, MPI_Request reqs[], int *outcount, int idx[], MPI_Status sts[])
{
    CALL("MPI_Testsome");
    pm_need_reqs(reqs, n);
    pm_poll();
    some_done(n, reqs, outcount, idx, sts);
    RETURN(MPI_SUCCESS);
}

int MPI_Request_free(MPI_Request *req)
{
    CALL("MPI_Request_free");
    pm_need_req(req, "request");
    if (*req == MPI_REQUEST_NULL)
        RETURN(MPI_SUCCESS);
    pm_req *r = as_req(*req);
    if (r->kind == RQ_COLL && !r->done)
        pm_fatal("freeing an active nonblocking collective's request is erroneous "
                 "(MPI_ERR_REQUEST)");
    if (r->kind == RQ_GREQ && !r->done) { /* it goes at MPI_Grequest_complete */
        r->freed = 1;
        *req = MPI_REQUEST_NULL;
        RETURN(MPI_SUCCESS);
    }
    /* An active request finishes on its own; only then may it go. */
    pm_nbc_run();
    while (r->active && !r->done)
        pm_block();
    pm_req_free(r);
    *req = MPI_REQUEST_NULL;
    RETURN(MPI_SUCCESS);
}

/* MPI_Test without the end: the request stays as it is. */
int MPI_Request_get_status(MPI_Request req, int *flag, MPI_Status *st)
{
    CALL("MPI_Request_get_status");
    if (pm_inactive(req)) {
        *flag = 1;
        pm_empty_status(st);
        RETURN(MPI_SUCCESS);
    }
    pm_req *r = as_req(req);
    if (!r->done)
        pm_poll();
    *flag = r->done;
    if (r->done)
        pm_status_of(r, st);
    RETURN(MPI_SUCCESS);
}

/* A receive still in the posted queue (nothing matched it) is taken out and
 * completes cancelled; anything else cannot be cancelled any more (a matched
 * receive, any send: MPI lets a cancel fail) and completes as it would.
 * Either way the request must still be completed (MPI_Wait, MPI_Test). The
 * call looks through the posted queue: charged mpi_call_ns, as a probe. */
int MPI_Cancel(MPI_Request *req)
{
    CALL("MPI_Cancel");
    pm_need_req(req, "request");
    if (*req == MPI_REQUEST_NULL)
        pm_fatal("MPI_REQUEST_NULL passed (MPI_ERR_REQUEST)");
    pm_req *r = as_req(*req);
    if (r->kind == RQ_COLL)
        pm_fatal("cancelling a nonblocking collective's request is erroneous (MPI_ERR_REQUEST)");
    pm_charge(p2_ns_ps(E.rt->prm.mpi_call_ns));
    if (r->hooks) { /* a generalized request: the program's cancel */
        r->hooks->cancel(r);
        RETURN(MPI_SUCCESS);
    }
    if (r->kind != RQ_RECV || !r->active || r->done)
        RETURN(MPI_SUCCESS);
    pm_req *prev = NULL;
    for (pm_req **q = &E.posted; *q; prev = *q, q = &(*q)->next)
        if (*q == r) {
            *q = r->next;
            if (E.posted_tail == r)
                E.posted_tail = prev;
            r->next = NULL;
            pm_empty_status(&r->status);
            r->status._cancelled = 1;
            r->done = 1;
            break;
        }
    RETURN(MPI_SUCCESS);
}

int MPI_Test_cancelled(const MPI_Status *st, int *flag)
{
    *flag = st->_cancelled != 0;
    return MPI_SUCCESS;
}

/* Persistent requests: the arguments kept, each MPI_Start posts them anew.
 * A send's mode is its sync field: 0 standard (and ready: MPI lets a ready
 * send be a standard one), 1 synchronous, MODE_BUFFERED buffered. */
#define MODE_BUFFERED 2
static int persist(int kind, const void *buf, int count, MPI_Datatype type, int peer, int tag,
                   MPI_Comm comm, int sync, MPI_Request *req, const char *call)
{
    /* the erroneous call is this one, not a later MPI_Start */
    pm_need_count(count, "count");
    pm_need_req(req, "request");
    pm_comm *c = pm_comm_of(comm, call);
    pm_check_peer(c, peer, kind == RQ_RECV);
    pm_req *r = pm_req_new(kind);
    r->persistent = 1;
    r->buf = (void *)buf;
    r->count = count;
    r->type = type;
    r->peer = peer;
    r->tag = tag;
    r->comm = c;
    r->sync = sync;
    *req = as_handle(r);
    return MPI_SUCCESS;
}

int MPI_Send_init(const void *buf, int count, MPI_Datatype type, int dest, int tag, MPI_Comm comm,
                  MPI_Request *req)
{
    CALL("MPI_Send_init");
    RETURN(persist(RQ_SEND, buf, count, type, dest, tag, comm, 0, req, "MPI_Send_init"));
}

int MPI_Ssend_init(const void *buf, int count, MPI_Datatype type, int dest, int tag, MPI_Comm comm,
                   MPI_Request *req)
{
    CALL("MPI_Ssend_init");
    RETURN(persist(RQ_SEND, buf, count, type, dest, tag, comm, 1, req, "MPI_Ssend_init"));
}

int MPI_Bsend_init(const void *buf, int count, MPI_Datatype type, int dest, int tag, MPI_Comm comm,
                   MPI_Request *req)
{
    CALL("MPI_Bsend_init");
    RETURN(persist(RQ_SEND, buf, count, type, dest, tag, comm, MODE_BUFFERED, req,
                   "MPI_Bsend_init"));
}

int MPI_Rsend_init(const void *buf, int count, MPI_Datatype type, int dest, int tag, MPI_Comm comm,
                   MPI_Request *req)
{
    CALL("MPI_Rsend_init");
    RETURN(persist(RQ_SEND, buf, count, type, dest, tag, comm, 0, req, "MPI_Rsend_init"));
}

int MPI_Recv_init(void *buf, int count, MPI_Datatype type, int src, int tag, MPI_Comm comm,
                  MPI_Request *req)
{
    CALL("MPI_Recv_init");
    RETURN(persist(RQ_RECV, buf, count, type, src, tag, comm, 0, req, "MPI_Recv_init"));
}

/* Starting a persistent request posts an ordinary one and lets the persistent
 * handle follow it: the ordinary one's state moves into the persistent one. */
static void start_one(MPI_Request *h)
{
    pm_req *p = as_req(*h);
    if (p->active)
        pm_fatal("MPI_Start of a request that is still active (MPI_ERR_REQUEST)");
    MPI_Request tmp;
    int mode = p->sync;
    if (p->kind == RQ_SEND && mode == MODE_BUFFERED)
        pm_ibsend(p->buf, p->count, p->type, p->peer, p->tag, p->comm, &tmp);
    else if (p->kind == RQ_SEND)
        pm_isend(p->buf, p->count, p->type, p->peer, p->tag, p->comm, 0, p->sync, &tmp);
    else
        pm_irecv(p->buf, p->count, p->type, p->peer, p->tag, p->comm, 0, &tmp);
    pm_req *r = as_req(tmp);
    /* Take over r's identity: messages in flight name r->id. */
    uint64_t old = p->id;
    pm_req *posted_next = r->next;
    *p = *r;
    p->persistent = 1;
    p->sync = mode;
    p->next = posted_next;
    E.reqs[r->id] = p;
    E.reqs[old] = NULL;
    for (pm_req **q = &E.posted; *q; q = &(*q)->next)
        if (*q == r) {
            *q = p;
            break;
        }
    if (E.posted_tail == r)
        E.posted_tail = p;
    for (pm_pending *d = E.pending; d; d = d->next)
        if (d->req == r)
            d->req = p;
    free(r);
}

int MPI_Start(MPI_Request *req)
{
    CALL("MPI_Start");
    pm_need_req(req, "request");
    start_one(req);
    RETURN(MPI_SUCCESS);
}

int MPI_Startall(int n, MPI_Request reqs[])
{
    CALL("MPI_Startall");
    pm_need_reqs(reqs, n);
    for (int i = 0; i < n; i++)
        start_one(&reqs[i]);
    RETURN(MPI_SUCCESS);
}

int MPI_Probe(int src, int tag, MPI_Comm comm, MPI_Status *st)
{
    CALL("MPI_Probe");
    pm_comm *c = pm_comm_of(comm, "MPI_Probe");
    pm_check_peer(c, src, 1);
    if (src == MPI_PROC_NULL) {
        pm_empty_status(st);
        if (st != MPI_STATUS_IGNORE)
            st->MPI_SOURCE = MPI_PROC_NULL;
        RETURN(MPI_SUCCESS);
    }
    pm_describe("from", src, tag, c);
    pm_charge(p2_ns_ps(E.rt->prm.mpi_call_ns));
    pm_probe_status(pm_probe(src, tag, c, 1), c, st);
    RETURN(MPI_SUCCESS);
}

int MPI_Iprobe(int src, int tag, MPI_Comm comm, int *flag, MPI_Status *st)
{
    CALL("MPI_Iprobe");
    pm_comm *c = pm_comm_of(comm, "MPI_Iprobe");
    pm_check_peer(c, src, 1);
    if (src == MPI_PROC_NULL) {
        *flag = 1;
        pm_empty_status(st);
        if (st != MPI_STATUS_IGNORE)
            st->MPI_SOURCE = MPI_PROC_NULL;
        RETURN(MPI_SUCCESS);
    }
    pm_charge(p2_ns_ps(E.rt->prm.mpi_call_ns));
    pm_unexp *u = pm_probe(src, tag, c, 0);
    *flag = u != NULL;
    if (u)
        pm_probe_status(u, c, st);
    RETURN(MPI_SUCCESS);
}

int MPI_Get_count(const MPI_Status *st, MPI_Datatype type, int *count)
{
    size_t sz = pm_type_size(type);
    size_t n = (size_t)st->_ucount;
    if (sz == 0)
        *count = n == 0 ? 0 : MPI_UNDEFINED;
    else
        *count = n % sz ? MPI_UNDEFINED : (int)(n / sz);
    return MPI_SUCCESS;
}
