/*
 * p2mpi_request.h - what the request unit (p2mpi_request.c) offers the units
 * above it: the request of a point-to-point operation, from the call's
 * arguments to the rendezvous state and the result.
 */
#ifndef P2MPI_REQUEST_H
#define P2MPI_REQUEST_H

#include "p2mpi_core.h"

#pragma GCC visibility push(hidden)

/* RQ_COLL: a nonblocking collective's (p2mpi_nbc.c), done when its algorithm
 * ends; RQ_GREQ: a generalized request (MPI_Grequest_start,
 * p2mpi_p2p_modes.c), done when the program says so */
enum { RQ_SEND = 1, RQ_RECV = 2, RQ_COLL = 3, RQ_GREQ = 4 };
typedef struct pm_req pm_req;
/* A generalized request's own status, cancel and end (the program's
 * callbacks), which the waits and tests, MPI_Cancel and pm_req_free call. */
typedef struct pm_req_hooks {
    void (*status)(pm_req *r, MPI_Status *st);
    void (*cancel)(pm_req *r);
    void (*release)(pm_req *r);
} pm_req_hooks;
struct pm_req {
    int kind, done, active, persistent, coll, sync;
    uint64_t id;
    /* the call's arguments */
    void *buf;
    int count;
    MPI_Datatype type;
    int peer, tag; /* comm ranks; peer may be MPI_ANY_SOURCE or MPI_PROC_NULL */
    pm_comm *comm;
    uint32_t ctx;
    /* a collective's receive: its call, and what the sender's arguments
     * must agree with */
    const char *call;
    pm_coll_sig sig;
    /* rendezvous state */
    uint64_t staging; /* offset in the staging arena + 1, 0 = none */
    int direct;       /* rendezvous straight from/to GPU memory (no staging) */
    int piped;        /* the GPU side of this end goes through host staging in chunks */
    int notify;       /* send: the receiver wants a CHUNK per chunk (CTS_CHUNKS) */
    uint64_t local, remote; /* send: bus addresses the data comes from and goes to */
    uint64_t chunks, chunks_left; /* chunked: how many, how many not yet acknowledged/copied in */
    uint64_t bytes;
    uint64_t rreq;    /* send: the receiver's request, named by the FIN */
    int fins_left;    /* receive: FINs still to come, one per rail */
    /* receive: result */
    MPI_Status status;
    struct pm_req *next; /* posted-receive queue */
    /* RQ_GREQ: its hooks and their state; freed: MPI_Request_free came first */
    const pm_req_hooks *hooks;
    void *hook_arg;
    int freed;
};

/* A new request of `kind` with the next id; the request an id names (the job
 * ends if none: a message names it); a request's end. */
pm_req *pm_req_new(int kind);
pm_req *pm_req_by_id(uint64_t id);
void pm_req_free(pm_req *r);
/* The request an id names, or NULL (a Fortran request handle is the id:
 * p2mpi_fortran.c). */
pm_req *pm_req_find(uint64_t id);

/* MPI_Request handles are the requests themselves. */
static inline pm_req *as_req(MPI_Request h) { return (pm_req *)(void *)h; }
static inline MPI_Request as_handle(pm_req *r) { return (MPI_Request)(void *)r; }

#pragma GCC visibility pop

#endif /* P2MPI_REQUEST_H */
