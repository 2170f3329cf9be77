/*
 * p2mpi_nbc.c - the nonblocking collectives: MPI_Ibarrier, _Ibcast,
 * _Ireduce, _Iallreduce, _Igather, _Iscatter, _Iallgather, _Ialltoall, their
 * v-variants, _Ireduce_scatter(_block), _Iscan and _Iexscan. Depends on the
 * collective calls' bodies (p2mpi_coll.h), point-to-point and the
 * coroutines (p2mpi_coro.c); the waits and tests of p2mpi_p2p_calls.c reach
 * it through the hook E.nbc_run only.
 *
 * A nonblocking collective is a request holding its algorithm's rounds, as
 * MPICH's and Open MPI's (libnbc) schedules are, and the algorithm is the
 * blocking call's own (pm_coll_*: the same selection at the same sizes, GPU
 * buffers staged alike), run as a coroutine:
 *
 *   MPI_Iallreduce   start: the coroutine runs round 1 (posts its isend and
 *                    irecv) and yields at the wait for them; the call returns
 *   (computation)    the round's messages move in simulated time meanwhile
 *   MPI_Wait/Test    each completion the progress loop handles resumes the
 *                    coroutines in flight: a finished round posts the next
 *                    and yields again; the request is done when the
 *                    algorithm returns
 *
 * Progress happens inside MPI calls only (any wait or test, of any request,
 * and the probes), as with libnbc and MVAPICH2 without an asynchronous
 * progress thread: a round that finishes while the rank computes starts the
 * next one at the rank's next MPI call. Started and immediately waited for,
 * a nonblocking collective makes the blocking call's steps in the same order
 * and takes its simulated time: the coroutine switches cost nothing and no
 * call cost is added (the GPU path charges mpi_coll_call_ns once, in the
 * body, as the blocking call does).
 *
 * Each one's messages carry a context of their own, the communicator's
 * collective context with the bit NBC_CTX_BIT and its sequence number on
 * that communicator (every rank starts a communicator's collectives in the
 * same order, so they agree): they never match a blocking collective's
 * receive or another nonblocking collective's, whatever order the rounds of
 * several in flight reach the ranks in. Inside, matching is the blocking
 * collectives' (by source, in order).
 */
#define _GNU_SOURCE
#include "p2mpi_nbc.h"

#include "p2mpi_coro.h"

#include <stdio.h>
#include <stdlib.h>
#include <string.h>

/* A nonblocking collective's context: (ctx + 1) | NBC_CTX_BIT | seq << 20,
 * the sequence number modulo 2048 (that many in flight on one communicator
 * before a context repeats), communicator contexts below 2^20. */
#define NBC_CTX_BIT PM_NBC_CTX_BIT
#define NBC_SEQ_SHIFT 20
#define NBC_SEQ_MASK 0x7ffu

typedef struct nbc nbc;
struct nbc {
    pm_req *req; /* the request MPI_Wait and MPI_Test see (RQ_COLL) */
    pm_coro *co;
    const char *name;
    void (*run)(nbc *); /* the blocking call's body on the arguments below */
    pm_comm *comm;
    /* the call's arguments */
    const void *sbuf;
    void *rbuf;
    int scount, rcount, root, exclusive;
    MPI_Datatype stype, rtype;
    MPI_Op op;
    const int *scounts, *sdispls, *rcounts, *rdispls;
    /* another unit's collective (pm_nbc_start): fn(arg), arg freed at the end */
    void (*fn)(void *);
    void *arg;
    /* the layer's per-call state inside the coroutine, kept across switches */
    uint32_t ctx_bits, seq;
    pm_coll_sig sig;
    int depth, gpu_path;
    char what[sizeof E.what];
    nbc *next;
};

static nbc *active;   /* in start order */
static nbc *starting; /* the one whose first round start() runs, not yet in `active` */

/* ---- Running them ------------------------------------------------------------------ */

/* Runs n until its algorithm waits or ends, with the layer's per-call state
 * its own meanwhile (the call's name for errors, its collective context, the
 * GPU path's flag); returns whether the algorithm has ended. The caller's
 * description of its wait stays; without one, it becomes n's. */
static int resume(nbc *n)
{
    const char *call = E.call;
    int depth = E.depth;
    uint32_t bits = E.coll_ctx_bits, seq = E.coll_seq;
    pm_coll_sig sig = E.coll_sig;
    char what[sizeof E.what];
    memcpy(what, E.what, sizeof what);
    int gpu_path = pm_coll_gpu_path_swap(n->gpu_path);
    E.call = n->name;
    E.depth = n->depth;
    E.coll_ctx_bits = n->ctx_bits;
    E.coll_seq = n->seq;
    E.coll_sig = n->sig;
    E.what[0] = '\0';
    int done = pm_coro_resume(n->co);
    n->sig = E.coll_sig; /* set by the body, at its start */
    if (E.what[0])
        memcpy(n->what, E.what, sizeof n->what);
    n->depth = E.depth;
    n->gpu_path = pm_coll_gpu_path_swap(gpu_path);
    E.call = call;
    E.depth = depth;
    E.coll_ctx_bits = bits;
    E.coll_seq = seq;
    E.coll_sig = sig;
    if (what[0] || !n->what[0])
        memcpy(E.what, what, sizeof what);
    else
        snprintf(E.what, sizeof E.what, "(%.28s %.46s)", n->name, n->what);
    return done;
}

/* ---- Messages of a nonblocking collective that has ended here ----------------------
 * Every message a collective sends a rank is one that rank's call receives,
 * so its call cannot end before the message has arrived and been taken. One
 * still unexpected when the call ends here, or arriving after, means the
 * ranks' calls differed (roots that differ: each rank's tree sends where the
 * other's does not receive). A blocking collective's stray meets the next
 * collective on the context; a nonblocking one's context is its own, which
 * nothing else ever receives on: the check is made here. It compares what
 * the headers carry anyway: no simulated time. */

/* The last ones ended, to name this rank's call in a report. */
enum { ENDED = 64 };
static struct ended {
    const pm_comm *comm;
    uint32_t seq;
    const char *name;
    pm_coll_sig sig;
} ended[ENDED];
static unsigned nended;

static _Noreturn void stray(const pm_hdr *h, const pm_comm *c, uint32_t seq)
{
    const struct ended *e = NULL;
    for (unsigned i = 0; i < ENDED && i < nended && !e; i++) {
        const struct ended *x = &ended[(nended - 1 - i) % ENDED];
        if (x->comm == c && x->seq == seq)
            e = x;
    }
    pm_coll_sig theirs = pm_hdr_sig(h);
    char call[64], why[400] = "the ranks' collective calls differ", where[96];
    pm_sig_call(&theirs, 1, call, sizeof call);
    pm_comm_describe(c, where, sizeof where);
    if (!e)
        pm_fatal("a message of rank %d's %s on %s arrived after this rank's nonblocking "
                 "collective number %u there had ended: the ranks' collective calls differ",
                 h->src, call, where, seq + 1);
    pm_sig_differ(&e->sig, &theirs, 1, h->src, why, sizeof why);
    E.call = e->name;
    pm_fatal("a message of rank %d's %s on %s arrived after the call had ended here: %s", h->src,
             call, where, why);
}

/* The nonblocking collective number seq on c this rank has in flight, or NULL. */
static nbc *in_flight(const pm_comm *c, uint32_t seq)
{
    if (starting && starting->comm == c && starting->seq == seq)
        return starting;
    for (nbc *n = active; n; n = n->next)
        if (n->comm == c && n->seq == seq)
            return n;
    return NULL;
}

/* E.nbc_unexpected: a nonblocking collective's message no receive was
 * waiting for: one this rank has not reached yet; one whose call is in
 * flight here, which must have been made with the same arguments (its
 * tree may wait for another rank than this message's sender, forever: the
 * roots differ); or one that has ended here. */
static void unexpected(const void *hdr)
{
    const pm_hdr *h = hdr;
    const pm_comm *c = pm_comm_by_ctx((h->ctx & PM_NBC_CTX_BASE) - 1u);
    uint32_t seq = (uint32_t)h->rreq;
    if (!c || (int32_t)(seq - c->nbc_seq) >= 0)
        return;
    const nbc *n = in_flight(c, seq);
    if (!n)
        stray(h, c, seq);
    pm_coll_sig theirs = pm_hdr_sig(h);
    char why[400];
    /* n's sig is set once its body has started (zero before: not compared) */
    if (pm_sig_differ(&n->sig, &theirs, 1, h->src, why, sizeof why)) {
        E.call = n->name;
        pm_fatal("%s", why);
    }
}

static void finish(nbc *n)
{
    uint32_t ctx = (n->comm->ctx + 1u) | n->ctx_bits;
    ended[nended++ % ENDED] = (struct ended){n->comm, n->seq, n->name, n->sig};
    for (const pm_unexp *u = E.unexp; u; u = u->next)
        if (u->h.ctx == ctx && (uint32_t)u->h.rreq == n->seq)
            stray(&u->h, n->comm, n->seq);
    n->req->done = 1;
    free(n->arg);
    pm_coro_free(n->co);
    pm_comm_nbc_done(n->comm);
    free(n);
}

/* E.nbc_run: resumes each one in flight, in start order, until a whole pass
 * handles no completion (one handled inside a coroutine, waiting for a send
 * slot, may be another's). */
static void run_all(void)
{
    uint64_t seen;
    do {
        seen = E.handled;
        for (nbc **p = &active; *p;) {
            nbc *n = *p;
            if (resume(n)) {
                *p = n->next;
                finish(n);
            } else {
                p = &n->next;
            }
        }
    } while (seen != E.handled);
}

void pm_nbc_drain(void)
{
    if (!active)
        return;
    run_all();
    while (active) {
        pm_progress(PM_WAIT_OPEN);
        run_all();
    }
}

static void body(void *arg)
{
    nbc *n = arg;
    n->run(n);
}

static nbc *nbc_new(const char *name, void (*run)(nbc *), MPI_Comm comm)
{
    nbc *n = calloc(1, sizeof *n);
    if (!n)
        pm_fatal("out of memory");
    n->name = name;
    n->run = run;
    n->comm = pm_intra_of(comm, name);
    pm_coll_threads_check(n->comm);
    return n;
}

/* The request, the context, the first round. */
static int start(nbc *n, MPI_Request *req)
{
    pm_need_req(req, "request");
    pm_comm *c = n->comm;
    if (c->ctx + 1u >= 1u << NBC_SEQ_SHIFT)
        pm_fatal("too many communicators made for the nonblocking collectives' contexts");
    n->seq = c->nbc_seq++;
    c->nbc_pending++;
    n->ctx_bits = NBC_CTX_BIT | (n->seq & NBC_SEQ_MASK) << NBC_SEQ_SHIFT;
    pm_req *r = pm_req_new(RQ_COLL);
    r->active = 1;
    r->comm = c;
    r->peer = MPI_PROC_NULL;
    n->req = r;
    n->depth = 1;
    n->co = pm_coro_new(body, n);
    *req = as_handle(r);
    E.nbc_run = run_all;
    E.nbc_unexpected = unexpected;
    starting = n;
    int done = resume(n);
    starting = NULL;
    if (done) {
        finish(n);
        return MPI_SUCCESS;
    }
    nbc **t = &active;
    while (*t)
        t = &(*t)->next;
    *t = n;
    return MPI_SUCCESS;
}

/* ---- The calls ------------------------------------------------------------------------ */

static void run_barrier(nbc *n) { pm_coll_barrier(n->comm); }
static void run_bcast(nbc *n) { pm_coll_bcast(n->rbuf, n->rcount, n->rtype, n->root, n->comm); }
static void run_reduce(nbc *n)
{
    pm_coll_reduce(n->sbuf, n->rbuf, n->rcount, n->rtype, n->op, n->root, n->comm);
}
static void run_allreduce(nbc *n)
{
    pm_coll_allreduce(n->sbuf, n->rbuf, n->rcount, n->rtype, n->op, n->comm);
}
static void run_gather(nbc *n)
{
    pm_coll_gather(n->sbuf, n->scount, n->stype, n->rbuf, n->rcount, n->rtype, n->root, n->comm);
}
static void run_scatter(nbc *n)
{
    pm_coll_scatter(n->sbuf, n->scount, n->stype, n->rbuf, n->rcount, n->rtype, n->root, n->comm);
}
static void run_allgather(nbc *n)
{
    pm_coll_allgather(n->sbuf, n->scount, n->stype, n->rbuf, n->rcount, n->rtype, n->comm);
}
static void run_alltoall(nbc *n)
{
    pm_coll_alltoall(n->sbuf, n->scount, n->stype, n->rbuf, n->rcount, n->rtype, n->comm);
}
static void run_gatherv(nbc *n)
{
    pm_coll_gatherv(n->sbuf, n->scount, n->stype, n->rbuf, n->rcounts, n->rdispls, n->rtype,
                    n->root, n->comm);
}
static void run_scatterv(nbc *n)
{
    pm_coll_scatterv(n->sbuf, n->scounts, n->sdispls, n->stype, n->rbuf, n->rcount, n->rtype,
                     n->root, n->comm);
}
static void run_allgatherv(nbc *n)
{
    pm_coll_allgatherv(n->sbuf, n->scount, n->stype, n->rbuf, n->rcounts, n->rdispls, n->rtype,
                       n->comm);
}
static void run_alltoallv(nbc *n)
{
    pm_coll_alltoallv(n->sbuf, n->scounts, n->sdispls, n->stype, n->rbuf, n->rcounts, n->rdispls,
                      n->rtype, n->comm);
}
static void run_reduce_scatter(nbc *n)
{
    pm_coll_reduce_scatter(n->sbuf, n->rbuf, n->rcounts, n->rtype, n->op, n->comm);
}
static void run_reduce_scatter_block(nbc *n)
{
    pm_coll_reduce_scatter_block(n->sbuf, n->rbuf, n->rcount, n->rtype, n->op, n->comm);
}
static void run_scan(nbc *n)
{
    pm_coll_scan(n->sbuf, n->rbuf, n->rcount, n->rtype, n->op, n->comm, n->exclusive);
}

/* The bracket of a nonblocking collective call: NBC_BEGIN(name, run) makes
 * n on communicator `comm`; NBC_START() starts it into *req and returns. */
#define NBC_BEGIN(name, run) \
    CALL(name);              \
    nbc *n = nbc_new(name, run, comm)
#define NBC_START() RETURN(start(n, req))

int MPI_Ibarrier(MPI_Comm comm, MPI_Request *req)
{
    NBC_BEGIN("MPI_Ibarrier", run_barrier);
    NBC_START();
}

int MPI_Ibcast(void *buf, int count, MPI_Datatype type, int root, MPI_Comm comm, MPI_Request *req)
{
    NBC_BEGIN("MPI_Ibcast", run_bcast);
    n->rbuf = buf;
    n->rcount = count;
    n->rtype = type;
    n->root = root;
    NBC_START();
}

int MPI_Ireduce(const void *send, void *recv, int count, MPI_Datatype type, MPI_Op op, int root,
                MPI_Comm comm, MPI_Request *req)
{
    NBC_BEGIN("MPI_Ireduce", run_reduce);
    n->sbuf = send;
    n->rbuf = recv;
    n->rcount = count;
    n->rtype = type;
    n->op = op;
    n->root = root;
    NBC_START();
}

int MPI_Iallreduce(const void *send, void *recv, int count, MPI_Datatype type, MPI_Op op,
                   MPI_Comm comm, MPI_Request *req)
{
    NBC_BEGIN("MPI_Iallreduce", run_allreduce);
    n->sbuf = send;
    n->rbuf = recv;
    n->rcount = count;
    n->rtype = type;
    n->op = op;
    NBC_START();
}

/* The arguments of the calls that move blocks: the send side and the receive side. */
static void blocks(nbc *n, const void *send, int scount, MPI_Datatype stype, void *recv,
                   int rcount, MPI_Datatype rtype)
{
    n->sbuf = send;
    n->scount = scount;
    n->stype = stype;
    n->rbuf = recv;
    n->rcount = rcount;
    n->rtype = rtype;
}

int MPI_Igather(const void *send, int scount, MPI_Datatype stype, void *recv, int rcount,
                MPI_Datatype rtype, int root, MPI_Comm comm, MPI_Request *req)
{
    NBC_BEGIN("MPI_Igather", run_gather);
    blocks(n, send, scount, stype, recv, rcount, rtype);
    n->root = root;
    NBC_START();
}

int MPI_Iscatter(const void *send, int scount, MPI_Datatype stype, void *recv, int rcount,
                 MPI_Datatype rtype, int root, MPI_Comm comm, MPI_Request *req)
{
    NBC_BEGIN("MPI_Iscatter", run_scatter);
    blocks(n, send, scount, stype, recv, rcount, rtype);
    n->root = root;
    NBC_START();
}

int MPI_Iallgather(const void *send, int scount, MPI_Datatype stype, void *recv, int rcount,
                   MPI_Datatype rtype, MPI_Comm comm, MPI_Request *req)
{
    NBC_BEGIN("MPI_Iallgather", run_allgather);
    blocks(n, send, scount, stype, recv, rcount, rtype);
    NBC_START();
}

int MPI_Ialltoall(const void *send, int scount, MPI_Datatype stype, void *recv, int rcount,
                  MPI_Datatype rtype, MPI_Comm comm, MPI_Request *req)
{
    NBC_BEGIN("MPI_Ialltoall", run_alltoall);
    blocks(n, send, scount, stype, recv, rcount, rtype);
    NBC_START();
}

int MPI_Igatherv(const void *send, int scount, MPI_Datatype stype, void *recv,
                 const int rcounts[], const int displs[], MPI_Datatype rtype, int root,
                 MPI_Comm comm, MPI_Request *req)
{
    NBC_BEGIN("MPI_Igatherv", run_gatherv);
    blocks(n, send, scount, stype, recv, 0, rtype);
    n->rcounts = rcounts;
    n->rdispls = displs;
    n->root = root;
    NBC_START();
}

int MPI_Iscatterv(const void *send, const int scounts[], const int displs[], MPI_Datatype stype,
                  void *recv, int rcount, MPI_Datatype rtype, int root, MPI_Comm comm,
                  MPI_Request *req)
{
    NBC_BEGIN("MPI_Iscatterv", run_scatterv);
    blocks(n, send, 0, stype, recv, rcount, rtype);
    n->scounts = scounts;
    n->sdispls = displs;
    n->root = root;
    NBC_START();
}

int MPI_Iallgatherv(const void *send, int scount, MPI_Datatype stype, void *recv,
                    const int rcounts[], const int displs[], MPI_Datatype rtype, MPI_Comm comm,
                    MPI_Request *req)
{
    NBC_BEGIN("MPI_Iallgatherv", run_allgatherv);
    blocks(n, send, scount, stype, recv, 0, rtype);
    n->rcounts = rcounts;
    n->rdispls = displs;
    NBC_START();
}

int MPI_Ialltoallv(const void *send, const int scounts[], const int sdispls[], MPI_Datatype stype,
                   void *recv, const int rcounts[], const int rdispls[], MPI_Datatype rtype,
                   MPI_Comm comm, MPI_Request *req)
{
    NBC_BEGIN("MPI_Ialltoallv", run_alltoallv);
    blocks(n, send, 0, stype, recv, 0, rtype);
    n->scounts = scounts;
    n->sdispls = sdispls;
    n->rcounts = rcounts;
    n->rdispls = rdispls;
    NBC_START();
}

int MPI_Ireduce_scatter(const void *send, void *recv, const int rcounts[], MPI_Datatype type,
                        MPI_Op op, MPI_Comm comm, MPI_Request *req)
{
    NBC_BEGIN("MPI_Ireduce_scatter", run_reduce_scatter);
    n->sbuf = send;
    n->rbuf = recv;
    n->rcounts = rcounts;
    n->rtype = type;
    n->op = op;
    NBC_START();
}

int MPI_Ireduce_scatter_block(const void *send, void *recv, int rcount, MPI_Datatype type,
                              MPI_Op op, MPI_Comm comm, MPI_Request *req)
{
    NBC_BEGIN("MPI_Ireduce_scatter_block", run_reduce_scatter_block);
    n->sbuf = send;
    n->rbuf = recv;
    n->rcount = rcount;
    n->rtype = type;
    n->op = op;
    NBC_START();
}

int MPI_Iscan(const void *send, void *recv, int count, MPI_Datatype type, MPI_Op op, MPI_Comm comm,
              MPI_Request *req)
{
    NBC_BEGIN("MPI_Iscan", run_scan);
    n->sbuf = send;
    n->rbuf = recv;
    n->rcount = count;
    n->rtype = type;
    n->op = op;
    NBC_START();
}

int MPI_Iexscan(const void *send, void *recv, int count, MPI_Datatype type, MPI_Op op,
                MPI_Comm comm, MPI_Request *req)
{
    NBC_BEGIN("MPI_Iexscan", run_scan);
    n->sbuf = send;
    n->rbuf = recv;
    n->rcount = count;
    n->rtype = type;
    n->op = op;
    n->exclusive = 1;
    NBC_START();
}

/* ---- Other units' collectives ------------------------------------------------------------ */

static void run_fn(nbc *n) { n->fn(n->arg); }

int pm_nbc_start(const char *name, pm_comm *c, void (*fn)(void *), void *arg, MPI_Request *req)
{
    nbc *n = calloc(1, sizeof *n);
    if (!n)
        pm_fatal("out of memory");
    n->name = name;
    n->run = run_fn;
    n->comm = c;
    n->fn = fn;
    n->arg = arg;
    return start(n, req);
}
