/*
 * p2mpi_neighbor.c - the neighbourhood collectives (MPI_Neighbor_allgather,
 * _allgatherv, _alltoall, _alltoallv, _alltoallw and their nonblocking
 * MPI_Ineighbor_ forms) and MPI_Alltoallw / MPI_Ialltoallw. Depends on the
 * topologies (p2mpi_topo.c: each rank's neighbours), the nonblocking
 * collectives' coroutines (p2mpi_nbc.c) and the units below them.
 *
 * Algorithm (Open MPI's coll/basic, MPICH's linear schedule): every receive
 * from an in-neighbour posted, then every send to an out-neighbour, then a
 * wait for them all: one message per edge, each a point-to-point message of
 * the modelled protocols (eager or rendezvous, GPU buffers on the
 * point-to-point GPU paths), with no collective software cost, as the other
 * host-buffer collectives. The messages go on the communicator's collective
 * context, matched by tag: in a Cartesian topology block s of the sender
 * lands in block s ^ 1 of the receiver (the negative direction's block in
 * the positive direction's slot), which MPI-4.0's errata require for
 * periodic dimensions of one or two processes, where both neighbours are
 * the same process (or this one); in the graph topologies the k-th edge to a
 * process matches its k-th edge from this one (one tag, posted in order).
 * MPI_PROC_NULL neighbours (a non-periodic grid's edge) exchange nothing:
 * their blocks stay as they are.
 *
 * MPI_Alltoallw moves each pair's block with its own datatypes and byte
 * displacements, as MPI_Alltoallv's isend/irecv burst does (p2mpi_coll_v.c):
 * the rank's own block copied locally (charged), receives from rank - i and
 * sends to rank + i.
 *
 * The nonblocking forms run the same bodies as nonblocking collectives
 * (pm_nbc_start: a coroutine on a context of its own, progressed by every
 * wait and test): started and waited at once they take the blocking call's
 * time.
 */
#define _GNU_SOURCE
#include "p2mpi_nbc.h"
#include "p2mpi_topo.h"

#include <stdlib.h>

/* ---- The calls' arguments ---------------------------------------------------------------- */

enum { NB_ALLGATHER, NB_ALLGATHERV, NB_ALLTOALL, NB_ALLTOALLV, NB_ALLTOALLW, A2A_W };

typedef struct nb_args {
    int kind;
    const char *call;
    pm_comm *c;
    const void *sbuf;
    int scount;
    MPI_Datatype stype;
    const int *scounts, *sdispls;
    const MPI_Aint *sbytes; /* the w forms' byte displacements */
    const MPI_Datatype *stypes;
    void *rbuf;
    int rcount;
    MPI_Datatype rtype;
    const int *rcounts, *rdispls;
    const MPI_Aint *rbytes;
    const MPI_Datatype *rtypes;
} nb_args;

static char *elems(const void *buf, MPI_Datatype t, long n)
{
    return (char *)buf + pm_type_extent(t) * (MPI_Aint)n;
}

/* The block sent to out-neighbour (or rank) s. */
static const void *sblock(const nb_args *a, int s, int *count, MPI_Datatype *type)
{
    switch (a->kind) {
    case NB_ALLGATHER:
    case NB_ALLGATHERV:
        *count = a->scount;
        *type = a->stype;
        return a->sbuf;
    case NB_ALLTOALL:
        *count = a->scount;
        *type = a->stype;
        return elems(a->sbuf, a->stype, (long)s * a->scount);
    case NB_ALLTOALLV:
        *count = a->scounts[s];
        *type = a->stype;
        return elems(a->sbuf, a->stype, a->sdispls[s]);
    default:
        *count = a->scounts[s];
        *type = a->stypes[s];
        return (const char *)a->sbuf + (a->kind == A2A_W ? a->sdispls[s] : a->sbytes[s]);
    }
}

/* The block received from in-neighbour (or rank) j. */
static void *rblock(const nb_args *a, int j, int *count, MPI_Datatype *type)
{
    switch (a->kind) {
    case NB_ALLGATHER:
    case NB_ALLTOALL:
        *count = a->rcount;
        *type = a->rtype;
        return elems(a->rbuf, a->rtype, (long)j * a->rcount);
    case NB_ALLGATHERV:
    case NB_ALLTOALLV:
        *count = a->rcounts[j];
        *type = a->rtype;
        return elems(a->rbuf, a->rtype, a->rdispls[j]);
    default:
        *count = a->rcounts[j];
        *type = a->rtypes[j];
        return (char *)a->rbuf + (a->kind == A2A_W ? a->rdispls[j] : a->rbytes[j]);
    }
}

/* ---- The bodies --------------------------------------------------------------------------------- */

static void neighbor_body(nb_args *a)
{
    int nin, nout, cart, *in, *out, count, k = 0;
    MPI_Datatype type;
    pm_topo_neighbors(a->c, a->call, &nin, &in, &nout, &out, &cart);
    if (a->kind == NB_ALLTOALLV || a->kind == NB_ALLTOALLW)
        pm_need_counts(a->scounts, nout, "sendcounts");
    else
        pm_need_count(a->scount, "sendcount");
    if (a->kind == NB_ALLGATHER || a->kind == NB_ALLTOALL)
        pm_need_count(a->rcount, "recvcount");
    else
        pm_need_counts(a->rcounts, nin, "recvcounts");
    /* the communicator on its collective context (a nonblocking one's own),
     * matched by tag */
    pm_comm on = *a->c;
    on.ctx = (a->c->ctx + 1u) | E.coll_ctx_bits;
    on.next = NULL;
    MPI_Request *r = malloc(sizeof(MPI_Request) * (size_t)(nin + nout + 1));
    if (!r)
        pm_fatal("out of memory");
    for (int j = 0; j < nin; j++)
        if (in[j] != MPI_PROC_NULL) {
            void *b = rblock(a, j, &count, &type);
            pm_irecv(b, count, type, in[j], cart ? j ^ 1 : 0, &on, 0, &r[k++]);
        }
    for (int s = 0; s < nout; s++)
        if (out[s] != MPI_PROC_NULL) {
            const void *b = sblock(a, s, &count, &type);
            pm_isend(b, count, type, out[s], cart ? s : 0, &on, 0, 0, &r[k++]);
        }
    pm_waitall(k, r, MPI_STATUSES_IGNORE);
    free(r);
    free(in);
    free(out);
}

static void alltoallw_body(nb_args *a)
{
    if (a->sbuf == MPI_IN_PLACE)
        pm_fatal("MPI_IN_PLACE is not modelled for %s", a->call);
    pm_comm *c = a->c;
    pm_need_counts(a->scounts, c->size, "sendcounts");
    pm_need_counts(a->rcounts, c->size, "recvcounts");
    int p = c->size, rank = c->rank, sc, rc, k = 0;
    MPI_Datatype st, rt;
    const void *sb = sblock(a, rank, &sc, &st);
    void *rb = rblock(a, rank, &rc, &rt);
    pm_local_copy(sb, sc, st, rb, rc, rt);
    MPI_Request *r = malloc(sizeof(MPI_Request) * 2 * (size_t)p);
    if (!r)
        pm_fatal("out of memory");
    for (int i = 1; i < p; i++) {
        int src = (rank - i + p) % p;
        rb = rblock(a, src, &rc, &rt);
        pm_irecv(rb, rc, rt, src, PM_TAG_COLL, c, 1, &r[k++]);
    }
    for (int i = 1; i < p; i++) {
        int dst = (rank + i) % p;
        sb = sblock(a, dst, &sc, &st);
        pm_isend(sb, sc, st, dst, PM_TAG_COLL, c, 1, 0, &r[k++]);
    }
    pm_waitall(k, r, MPI_STATUSES_IGNORE);
    free(r);
}

static void body(void *arg)
{
    nb_args *a = arg;
    if (a->kind == A2A_W)
        alltoallw_body(a);
    else
        neighbor_body(a);
}

/* Runs the call: blocking (req NULL) at once, else started as a
 * nonblocking collective. */
static int run(nb_args *a, MPI_Comm comm, MPI_Request *req)
{
    a->c = pm_intra_of(comm, a->call);
    if (!req) {
        body(a);
        return MPI_SUCCESS;
    }
    nb_args *copy = malloc(sizeof *copy);
    if (!copy)
        pm_fatal("out of memory");
    *copy = *a;
    return pm_nbc_start(a->call, a->c, body, copy, req);
}

/* ---- The calls ----------------------------------------------------------------------------------- */

static int allgather(const char *call, const void *sbuf, int scount, MPI_Datatype stype,
                     void *rbuf, int rcount, MPI_Datatype rtype, MPI_Comm comm, MPI_Request *req)
{
    nb_args a = {.kind = NB_ALLGATHER, .call = call, .sbuf = sbuf, .scount = scount,
                 .stype = stype, .rbuf = rbuf, .rcount = rcount, .rtype = rtype};
    return run(&a, comm, req);
}

int MPI_Neighbor_allgather(const void *sbuf, int scount, MPI_Datatype stype, void *rbuf,
                           int rcount, MPI_Datatype rtype, MPI_Comm comm)
{
    CALL("MPI_Neighbor_allgather");
    RETURN(allgather(E.call, sbuf, scount, stype, rbuf, rcount, rtype, comm, NULL));
}

int MPI_Ineighbor_allgather(const void *sbuf, int scount, MPI_Datatype stype, void *rbuf,
                            int rcount, MPI_Datatype rtype, MPI_Comm comm, MPI_Request *req)
{
    CALL("MPI_Ineighbor_allgather");
    pm_need_req(req, "request");
    RETURN(allgather(E.call, sbuf, scount, stype, rbuf, rcount, rtype, comm, req));
}

static int allgatherv(const char *call, const void *sbuf, int scount, MPI_Datatype stype,
                      void *rbuf, const int rcounts[], const int displs[], MPI_Datatype rtype,
                      MPI_Comm comm, MPI_Request *req)
{
    nb_args a = {.kind = NB_ALLGATHERV, .call = call, .sbuf = sbuf, .scount = scount,
                 .stype = stype, .rbuf = rbuf, .rcounts = rcounts, .rdispls = displs,
                 .rtype = rtype};
    return run(&a, comm, req);
}

int MPI_Neighbor_allgatherv(const void *sbuf, int scount, MPI_Datatype stype, void *rbuf,
                            const int rcounts[], const int displs[], MPI_Datatype rtype,
                            MPI_Comm comm)
{
    CALL("MPI_Neighbor_allgatherv");
    RETURN(allgatherv(E.call, sbuf, scount, stype, rbuf, rcounts, displs, rtype, comm, NULL));
}

int MPI_Ineighbor_allgatherv(const void *sbuf, int scount, MPI_Datatype stype, void *rbuf,
                             const int rcounts[], const int displs[], MPI_Datatype rtype,
                             MPI_Comm comm, MPI_Request *req)
{
    CALL("MPI_Ineighbor_allgatherv");
    pm_need_req(req, "request");
    RETURN(allgatherv(E.call, sbuf, scount, stype, rbuf, rcounts, displs, rtype, comm, req));
}

static int alltoall(const char *call, const void *sbuf, int scount, MPI_Datatype stype, void *rbuf,
                    int rcount, MPI_Datatype rtype, MPI_Comm comm, MPI_Request *req)
{
    nb_args a = {.kind = NB_ALLTOALL, .call = call, .sbuf = sbuf, .scount = scount,
                 .stype = stype, .rbuf = rbuf, .rcount = rcount, .rtype = rtype};
    return run(&a, comm, req);
}

int MPI_Neighbor_alltoall(const void *sbuf, int scount, MPI_Datatype stype, void *rbuf, int rcount,
                          MPI_Datatype rtype, MPI_Comm comm)
{
    CALL("MPI_Neighbor_alltoall");
    RETURN(alltoall(E.call, sbuf, scount, stype, rbuf, rcount, rtype, comm, NULL));
}

int MPI_Ineighbor_alltoall(const void *sbuf, int scount, MPI_Datatype stype, void *rbuf,
                           int rcount, MPI_Datatype rtype, MPI_Comm comm, MPI_Request *req)
{
    CALL("MPI_Ineighbor_alltoall");
    pm_need_req(req, "request");
    RETURN(alltoall(E.call, sbuf, scount, stype, rbuf, rcount, rtype, comm, req));
}

static int alltoallv(const char *call, const void *sbuf, const int scounts[], const int sdispls[],
                     MPI_Datatype stype, void *rbuf, const int rcounts[], const int rdispls[],
                     MPI_Datatype rtype, MPI_Comm comm, MPI_Request *req)
{
    nb_args a = {.kind = NB_ALLTOALLV, .call = call, .sbuf = sbuf, .scounts = scounts,
                 .sdispls = sdispls, .stype = stype, .rbuf = rbuf, .rcounts = rcounts,
                 .rdispls = rdispls, .rtype = rtype};
    return run(&a, comm, req);
}

int MPI_Neighbor_alltoallv(const void *sbuf, const int scounts[], const int sdispls[],
                           MPI_Datatype stype, void *rbuf, const int rcounts[],
                           const int rdispls[], MPI_Datatype rtype, MPI_Comm comm)
{
    CALL("MPI_Neighbor_alltoallv");
    RETURN(alltoallv(E.call, sbuf, scounts, sdispls, stype, rbuf, rcounts, rdispls, rtype, comm,
                     NULL));
}

int MPI_Ineighbor_alltoallv(const void *sbuf, const int scounts[], const int sdispls[],
                            MPI_Datatype stype, void *rbuf, const int rcounts[],
                            const int rdispls[], MPI_Datatype rtype, MPI_Comm comm,
                            MPI_Request *req)
{
    CALL("MPI_Ineighbor_alltoallv");
    pm_need_req(req, "request");
    RETURN(alltoallv(E.call, sbuf, scounts, sdispls, stype, rbuf, rcounts, rdispls, rtype, comm,
                     req));
}

static int alltoallw(const char *call, const void *sbuf, const int scounts[],
                     const MPI_Aint sdispls[], const MPI_Datatype stypes[], void *rbuf,
                     const int rcounts[], const MPI_Aint rdispls[], const MPI_Datatype rtypes[],
                     MPI_Comm comm, MPI_Request *req)
{
    nb_args a = {.kind = NB_ALLTOALLW, .call = call, .sbuf = sbuf, .scounts = scounts,
                 .sbytes = sdispls, .stypes = stypes, .rbuf = rbuf, .rcounts = rcounts,
                 .rbytes = rdispls, .rtypes = rtypes};
    return run(&a, comm, req);
}

int MPI_Neighbor_alltoallw(const void *sbuf, const int scounts[], const MPI_Aint sdispls[],
                           const MPI_Datatype stypes[], void *rbuf, const int rcounts[],
                           const MPI_Aint rdispls[], const MPI_Datatype rtypes[], MPI_Comm comm)
{
    CALL("MPI_Neighbor_alltoallw");
    RETURN(alltoallw(E.call, sbuf, scounts, sdispls, stypes, rbuf, rcounts,
                     rdispls, rtypes, comm, NULL));
}

int MPI_Ineighbor_alltoallw(const void *sbuf, const int scounts[], const MPI_Aint sdispls[],
                            const MPI_Datatype stypes[], void *rbuf, const int rcounts[],
                            const MPI_Aint rdispls[], const MPI_Datatype rtypes[], MPI_Comm comm,
                            MPI_Request *req)
{
    CALL("MPI_Ineighbor_alltoallw");
    pm_need_req(req, "request");
    RETURN(alltoallw(E.call, sbuf, scounts, sdispls, stypes, rbuf, rcounts,
                     rdispls, rtypes, comm, req));
}

/* MPI_Alltoallw's displacements are bytes, as the neighbourhood w form's
 * (int here, MPI_Aint there). */
static int alltoallw_int(const char *call, const void *sbuf, const int scounts[],
                         const int sdispls[], const MPI_Datatype stypes[], void *rbuf,
                         const int rcounts[], const int rdispls[], const MPI_Datatype rtypes[],
                         MPI_Comm comm, MPI_Request *req)
{
    nb_args a = {.kind = A2A_W, .call = call, .sbuf = sbuf, .scounts = scounts,
                 .sdispls = sdispls, .stypes = stypes, .rbuf = rbuf, .rcounts = rcounts,
                 .rdispls = rdispls, .rtypes = rtypes};
    return run(&a, comm, req);
}

int MPI_Alltoallw(const void *sbuf, const int scounts[], const int sdispls[],
                  const MPI_Datatype stypes[], void *rbuf, const int rcounts[], const int rdispls[],
                  const MPI_Datatype rtypes[], MPI_Comm comm)
{
    CALL("MPI_Alltoallw");
    RETURN(alltoallw_int(E.call, sbuf, scounts, sdispls, stypes, rbuf, rcounts, rdispls, rtypes,
                         comm, NULL));
}

int MPI_Ialltoallw(const void *sbuf, const int scounts[], const int sdispls[],
                   const MPI_Datatype stypes[], void *rbuf, const int rcounts[],
                   const int rdispls[], const MPI_Datatype rtypes[], MPI_Comm comm,
                   MPI_Request *req)
{
    CALL("MPI_Ialltoallw");
    pm_need_req(req, "request");
    RETURN(alltoallw_int(E.call, sbuf, scounts, sdispls, stypes, rbuf, rcounts, rdispls, rtypes,
                         comm, req));
}
