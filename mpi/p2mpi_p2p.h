/*
 * p2mpi_p2p.h - what point-to-point (p2mpi_p2p.c) offers the units above
 * it: the MPI point-to-point calls and the collectives.
 */
#ifndef P2MPI_P2P_H
#define P2MPI_P2P_H

#include "p2mpi_engine.h"

#pragma GCC visibility push(hidden)

/* Point-to-point on a context (comm ctx for user traffic, ctx + 1 for the
 * collectives); ranks are comm ranks. Blocking forms return MPI_SUCCESS or
 * end the job with a message (errors are fatal, MPI's default). */
int pm_isend(const void *buf, int count, MPI_Datatype type, int dest, int tag, pm_comm *c,
             int coll, int sync, MPI_Request *req);
int pm_irecv(void *buf, int count, MPI_Datatype type, int src, int tag, pm_comm *c, int coll,
             MPI_Request *req);
int pm_wait(MPI_Request *req, MPI_Status *st);
int pm_waitall(int n, MPI_Request reqs[], MPI_Status sts[]);
int pm_send(const void *buf, int count, MPI_Datatype type, int dest, int tag, pm_comm *c, int coll);
int pm_recv(void *buf, int count, MPI_Datatype type, int src, int tag, pm_comm *c, int coll,
            MPI_Status *st);
int pm_sendrecv(const void *sbuf, int scount, MPI_Datatype stype, int dest, int stag, void *rbuf,
                int rcount, MPI_Datatype rtype, int src, int rtag, pm_comm *c, int coll,
                MPI_Status *st);

/* What the call is waiting for ("to rank R tag T"), for the deadlock
 * diagnosis: the first description of a call stands. */
void pm_describe(const char *dir, int peer, int tag, pm_comm *c);
/* Ends the job unless peer is a rank of c (MPI_PROC_NULL is; MPI_ANY_SOURCE
 * when any_ok). */
void pm_check_peer(pm_comm *c, int peer, int any_ok);
/* Waiting. pm_block: one step of a wait, outside a coroutine the next
 * completion (pm_progress(1)) and then the nonblocking collectives in flight
 * (pm_nbc_run), inside one (a nonblocking collective's algorithm) a yield to
 * the call that resumed it. pm_poll: everything there at the rank's time,
 * the nonblocking collectives resumed after each. pm_nbc_run: resumes them
 * (not from inside one). */
void pm_block(void);
void pm_poll(void);
void pm_nbc_run(void);
/* A done request's status, as MPI_Wait returns it (st may be
 * MPI_STATUS_IGNORE; a generalized request's query runs either way). */
void pm_status_of(const pm_req *r, MPI_Status *st);
/* A done request finished: status out; a persistent one goes inactive, any
 * other is freed and its handle nulled. */
void pm_finish(MPI_Request *h, MPI_Status *st);
/* The status of a request that was null or inactive. */
void pm_empty_status(MPI_Status *st);
/* Whether a handle is null or an inactive persistent request. */
int pm_inactive(MPI_Request h);

/* Probes: the earliest message that arrived unmatched and matches (src,
 * tag) on c's point-to-point context, waiting for arrivals (block) or only
 * those there at the rank's time (NULL if none); its status. A probed
 * message taken out of the queue (MPI_Mprobe) and received by a new request
 * with the cost of a receive (MPI_Mrecv). */
pm_unexp *pm_probe(int src, int tag, pm_comm *c, int block);
void pm_probe_status(const pm_unexp *u, pm_comm *c, MPI_Status *st);
void pm_unexp_take(pm_unexp *u);
int pm_imrecv(void *buf, int count, MPI_Datatype type, pm_unexp *u, pm_comm *c, MPI_Request *req);

/* Buffered sends (README.md): the attached buffer, and a send copied into it
 * (charged as the eager copy) that leaves from there as a standard send; it
 * is complete at once (*req a done request; req may be NULL). The job ends
 * (MPI_ERR_BUFFER) when no buffer is attached or the message does not fit.
 * Detaching waits until every buffered message has left. */
void pm_buffer_attach(void *buf, int size);
void pm_buffer_detach(void **buf, int *size);
int pm_ibsend(const void *buf, int count, MPI_Datatype type, int dest, int tag, pm_comm *c,
              MPI_Request *req);

#pragma GCC visibility pop

#endif /* P2MPI_P2P_H */
