/*
 * p2mpi_p2p_modes.c - the point-to-point calls beyond the standard and
 * synchronous modes: buffered sends (MPI_Bsend, _Ibsend, the attached
 * buffer), ready sends (MPI_Rsend, _Irsend), matched probes (MPI_Mprobe,
 * _Improbe, _Mrecv, _Imrecv), generalized requests (MPI_Grequest_start,
 * _complete). The send modes' persistent forms (MPI_Bsend_init,
 * _Rsend_init) are with the others in p2mpi_p2p_calls.c. Depends on
 * point-to-point (p2mpi_p2p.c) and the units below it.
 *
 * Ready mode: a correct program has the receive posted before the send
 * starts, so the receiver never has to hold the message; MPI lets a ready
 * send be a standard one, and the layer's is (the same protocol, the same
 * costs: an 8-byte MPI_Rsend takes MPI_Send's time). A ready send whose
 * receive is not posted is erroneous, and is not detected (as in Open MPI
 * and MPICH).
 *
 * Buffered mode (p2mpi_p2p.c: pm_ibsend): the data is packed into the
 * attached buffer, charged as the eager copy is, and the call is complete;
 * the message leaves from the buffer as a standard send (eager or
 * rendezvous by its size) and its space is free again when that send
 * completes, as MPICH's MPIR_Bsend_isend does.
 *
 * Matched probes: MPI_Mprobe takes the message it finds out of the queue
 * of messages that arrived unmatched, so no other receive can match it; the
 * MPI_Message handle is the layer's own (MPI_MESSAGE_NO_PROC for
 * MPI_PROC_NULL, as MPI says). MPI_Mrecv receives it as a receive posted
 * after the message arrived would (eager: copied out; rendezvous: CTS).
 */
#define _GNU_SOURCE
#include "p2mpi_p2p.h"

#include <stdio.h>
#include <stdlib.h>

/* ---- Buffered and ready sends ------------------------------------------------------ */

int MPI_Buffer_attach(void *buf, int size)
{
    CALL("MPI_Buffer_attach");
    pm_buffer_attach(buf, size);
    RETURN(MPI_SUCCESS);
}

/* MPI_Buffer_detach's first argument is the address of a pointer. With no
 * buffer attached it gives NULL and 0 (as MPICH does). */
int MPI_Buffer_detach(void *buf, int *size)
{
    CALL("MPI_Buffer_detach");
    if (!buf || !size)
        pm_fatal("NULL argument (MPI_ERR_ARG)");
    snprintf(E.what, sizeof E.what, "its buffered sends");
    pm_buffer_detach((void **)buf, size);
    RETURN(MPI_SUCCESS);
}

/* Open MPI's `use mpi_f08` binding of MPI_Buffer_detach calls the C profiling
 * name directly (not through libmpi_mpifh.so, as its other calls do), so the
 * layer answers it too, or a Fortran 2008 program would detach Open MPI's
 * buffer instead of the layer's. */
int PMPI_Buffer_detach(void *buf, int *size)
{
    return MPI_Buffer_detach(buf, size);
}

int MPI_Bsend(const void *buf, int count, MPI_Datatype type, int dest, int tag, MPI_Comm comm)
{
    CALL("MPI_Bsend");
    RETURN(pm_ibsend(buf, count, type, dest, tag, pm_comm_of(comm, "MPI_Bsend"), NULL));
}

int MPI_Ibsend(const void *buf, int count, MPI_Datatype type, int dest, int tag, MPI_Comm comm,
               MPI_Request *req)
{
    CALL("MPI_Ibsend");
    pm_need_req(req, "request");
    RETURN(pm_ibsend(buf, count, type, dest, tag, pm_comm_of(comm, "MPI_Ibsend"), req));
}

int MPI_Rsend(const void *buf, int count, MPI_Datatype type, int dest, int tag, MPI_Comm comm)
{
    CALL("MPI_Rsend");
    RETURN(pm_send(buf, count, type, dest, tag, pm_comm_of(comm, "MPI_Rsend"), 0));
}

int MPI_Irsend(const void *buf, int count, MPI_Datatype type, int dest, int tag, MPI_Comm comm,
               MPI_Request *req)
{
    CALL("MPI_Irsend");
    pm_need_req(req, "request");
    RETURN(pm_isend(buf, count, type, dest, tag, pm_comm_of(comm, "MPI_Irsend"), 0, 0, req));
}

/* ---- Matched probes ------------------------------------------------------------------ */

/* An MPI_Message: a message taken out of the unmatched queue, and the
 * communicator it was probed on. */
typedef struct pm_msg {
    pm_unexp *u;
    pm_comm *c;
} pm_msg;

static MPI_Message msg_new(pm_unexp *u, pm_comm *c)
{
    pm_msg *m = malloc(sizeof *m);
    if (!m)
        pm_fatal("out of memory");
    pm_unexp_take(u);
    m->u = u;
    m->c = c;
    return (MPI_Message)(void *)m;
}

static void no_proc_status(MPI_Status *st)
{
    pm_empty_status(st);
    if (st != MPI_STATUS_IGNORE)
        st->MPI_SOURCE = MPI_PROC_NULL;
}

int MPI_Mprobe(int src, int tag, MPI_Comm comm, MPI_Message *msg, MPI_Status *st)
{
    CALL("MPI_Mprobe");
    pm_comm *c = pm_comm_of(comm, "MPI_Mprobe");
    pm_check_peer(c, src, 1);
    if (src == MPI_PROC_NULL) {
        *msg = MPI_MESSAGE_NO_PROC;
        no_proc_status(st);
        RETURN(MPI_SUCCESS);
    }
    pm_describe("from", src, tag, c);
    pm_charge(p2_ns_ps(E.rt->prm.mpi_call_ns));
    pm_unexp *u = pm_probe(src, tag, c, 1);
    pm_probe_status(u, c, st);
    *msg = msg_new(u, c);
    RETURN(MPI_SUCCESS);
}

int MPI_Improbe(int src, int tag, MPI_Comm comm, int *flag, MPI_Message *msg, MPI_Status *st)
{
    CALL("MPI_Improbe");
    pm_comm *c = pm_comm_of(comm, "MPI_Improbe");
    pm_check_peer(c, src, 1);
    if (src == MPI_PROC_NULL) {
        *flag = 1;
        *msg = MPI_MESSAGE_NO_PROC;
        no_proc_status(st);
        RETURN(MPI_SUCCESS);
    }
    pm_charge(p2_ns_ps(E.rt->prm.mpi_call_ns));
    pm_unexp *u = pm_probe(src, tag, c, 0);
    *flag = u != NULL;
    if (u) {
        pm_probe_status(u, c, st);
        *msg = msg_new(u, c);
    }
    RETURN(MPI_SUCCESS);
}

/* The receive of a matched message into *req; MPI_MESSAGE_NO_PROC: a
 * receive from MPI_PROC_NULL. The handle becomes MPI_MESSAGE_NULL. */
static void imrecv(void *buf, int count, MPI_Datatype type, MPI_Message *msg, MPI_Request *req)
{
    if (*msg == MPI_MESSAGE_NULL)
        pm_fatal("MPI_MESSAGE_NULL passed: no message to receive (MPI_ERR_REQUEST)");
    if (*msg == MPI_MESSAGE_NO_PROC) {
        pm_irecv(buf, count, type, MPI_PROC_NULL, MPI_ANY_TAG, pm_comm_of(MPI_COMM_SELF, E.call),
                 0, req);
    } else {
        pm_msg *m = (pm_msg *)(void *)*msg;
        pm_imrecv(buf, count, type, m->u, m->c, req);
        free(m);
    }
    *msg = MPI_MESSAGE_NULL;
}

int MPI_Mrecv(void *buf, int count, MPI_Datatype type, MPI_Message *msg, MPI_Status *st)
{
    CALL("MPI_Mrecv");
    MPI_Request r;
    imrecv(buf, count, type, msg, &r);
    RETURN(pm_wait(&r, st));
}

int MPI_Imrecv(void *buf, int count, MPI_Datatype type, MPI_Message *msg, MPI_Request *req)
{
    CALL("MPI_Imrecv");
    pm_need_req(req, "request");
    imrecv(buf, count, type, msg, req);
    RETURN(MPI_SUCCESS);
}

/* ---- Generalized requests ------------------------------------------------------------ */

/* The program's callbacks and their state. */
typedef struct pm_greq {
    MPI_Grequest_query_function *query;
    MPI_Grequest_free_function *free_fn;
    MPI_Grequest_cancel_function *cancel;
    void *extra;
} pm_greq;

static void greq_call(int rc, const char *what)
{
    if (rc != MPI_SUCCESS)
        pm_fatal("the generalized request's %s function returned error %d", what, rc);
}

static void greq_status(pm_req *r, MPI_Status *st)
{
    pm_greq *g = r->hook_arg;
    greq_call(g->query(g->extra, st), "query");
}

static void greq_cancel(pm_req *r)
{
    pm_greq *g = r->hook_arg;
    greq_call(g->cancel(g->extra, r->done), "cancel");
}

static void greq_release(pm_req *r)
{
    pm_greq *g = r->hook_arg;
    greq_call(g->free_fn(g->extra), "free");
    free(g);
}

static const pm_req_hooks greq_hooks = {greq_status, greq_cancel, greq_release};

/* A request the program completes itself (MPI_Grequest_complete): the
 * waits and tests see it done from then on, and then ask its query
 * function for the status and call its free function, as MPI says.
 * Waiting for one that nothing will complete is a deadlock, which p2sim
 * reports (the layer is single-threaded: no other thread can complete it). */
int MPI_Grequest_start(MPI_Grequest_query_function *query, MPI_Grequest_free_function *free_fn,
                       MPI_Grequest_cancel_function *cancel, void *extra, MPI_Request *req)
{
    CALL("MPI_Grequest_start");
    pm_need_req(req, "request");
    pm_greq *g = malloc(sizeof *g);
    if (!g)
        pm_fatal("out of memory");
    g->query = query;
    g->free_fn = free_fn;
    g->cancel = cancel;
    g->extra = extra;
    pm_req *r = pm_req_new(RQ_GREQ);
    r->active = 1;
    r->peer = MPI_PROC_NULL;
    r->hooks = &greq_hooks;
    r->hook_arg = g;
    *req = as_handle(r);
    RETURN(MPI_SUCCESS);
}

int MPI_Grequest_complete(MPI_Request req)
{
    CALL("MPI_Grequest_complete");
    if (req == MPI_REQUEST_NULL || as_req(req)->kind != RQ_GREQ)
        pm_fatal("not a generalized request (MPI_ERR_REQUEST)");
    pm_req *r = as_req(req);
    if (r->done)
        pm_fatal("the generalized request is complete already (MPI_ERR_REQUEST)");
    r->done = 1;
    if (r->freed) /* MPI_Request_free came first: it goes now */
        pm_req_free(r);
    RETURN(MPI_SUCCESS);
}
