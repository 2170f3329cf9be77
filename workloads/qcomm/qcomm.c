/*
 * qcomm.c - QUDA's communication interface (qcomm.h): the process grid,
 * the tags QUDA gives displacements, handle bookkeeping and checks, and the
 * dispatch to the transport chosen at comm_init (qcomm_tca.c, qcomm_mpi.c).
 *
 * Depends on qcomm_internal.h and its transports' tables.
 */
#include <stdarg.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "p2.h"
#include "qcomm_internal.h"

qc_state qc;

static const char *const transport_names[QCOMM_TRANSPORTS] = {"tca", "mpi", "mpi-rma"};

const char *qcomm_transport_name(qcomm_transport t)
{
    return (unsigned)t < QCOMM_TRANSPORTS ? transport_names[t] : "?";
}

int qcomm_transport_parse(const char *name)
{
    for (int t = 0; t < QCOMM_TRANSPORTS; t++)
        if (name && strcmp(name, transport_names[t]) == 0)
            return t;
    return -1;
}

void qc_fail(const char *call, const char *format, ...)
{
    va_list ap;
    va_start(ap, format);
    fprintf(stderr, "qcomm: rank %d: %s: ", qc.rank, call);
    vfprintf(stderr, format, ap);
    fputc('\n', stderr);
    va_end(ap);
    exit(1);
}

static void need_init(const char *call)
{
    if (!qc.initialised)
        qc_fail(call, "comm_init has not been called");
}

void comm_init(int ndim, const int *dims, qcomm_transport transport)
{
    const char *call = "comm_init";
    if (qc.initialised)
        qc_fail(call, "called twice");
    qc.rank = p2_rank();
    qc.size = p2_size();
    if (qc.size <= 0)
        qc_fail(call, "not started by p2run (no rank runtime)");
    if (ndim < 1 || ndim > QCOMM_MAX_DIM || !dims)
        qc_fail(call, "ndim %d: must be 1 .. %d, with dims", ndim, QCOMM_MAX_DIM);
    long product = 1;
    for (int d = 0; d < ndim; d++) {
        if (dims[d] < 1)
            qc_fail(call, "dims[%d] = %d: must be at least 1", d, dims[d]);
        product *= dims[d];
    }
    if (product != qc.size)
        qc_fail(call, "the grid's %ld processes differ from the job's %d ranks", product, qc.size);
    if ((unsigned)transport >= QCOMM_TRANSPORTS)
        qc_fail(call, "transport %d: no such transport", (int)transport);
    qc.ndim = ndim;
    for (int d = 0, r = qc.rank; d < QCOMM_MAX_DIM; d++) {
        qc.dims[d] = d < ndim ? dims[d] : 1;
        qc.coords[d] = r % qc.dims[d];
        r /= qc.dims[d];
    }
    size_t pairs = (size_t)qc.size * QCOMM_TAGS;
    qc.send_used = calloc(pairs, 1);
    qc.recv_used = calloc(pairs, 1);
    qc.send_count = calloc(pairs, sizeof *qc.send_count);
    qc.recv_count = calloc(pairs, sizeof *qc.recv_count);
    if (!qc.send_used || !qc.recv_used || !qc.send_count || !qc.recv_count)
        qc_fail(call, "out of memory");
    qc.transport = transport;
    qc.ops = transport == QCOMM_TCA ? &qc_tca_ops
             : transport == QCOMM_MPI ? &qc_mpi_ops
                                      : &qc_mpi_rma_ops;
    qc.ops->init();
    qc.initialised = 1;
}

void comm_finalize(void)
{
    need_init("comm_finalize");
    if (qc.live)
        qc_fail("comm_finalize", "%d message handle%s not freed", qc.live, qc.live == 1 ? "" : "s");
    qc.ops->finalize();
    free(qc.send_used);
    free(qc.recv_used);
    free(qc.send_count);
    free(qc.recv_count);
    memset(&qc, 0, sizeof qc);
}

int comm_rank(void) { return qc.rank; }
int comm_size(void) { return qc.size; }
int comm_ndim(void) { return qc.ndim; }
int comm_dim(int dim) { return dim >= 0 && dim < QCOMM_MAX_DIM ? qc.dims[dim] : 1; }
int comm_coord(int dim) { return dim >= 0 && dim < QCOMM_MAX_DIM ? qc.coords[dim] : 0; }
qcomm_transport comm_transport(void) { return qc.transport; }

int comm_rank_displaced(const int displacement[])
{
    int rank = 0;
    for (int d = QCOMM_MAX_DIM - 1; d >= 0; d--) {
        int x = (qc.coords[d] + displacement[d]) % qc.dims[d];
        if (x < 0)
            x += qc.dims[d];
        rank = rank * qc.dims[d] + x;
    }
    return rank;
}

int comm_neighbor_rank(int dir, int dim)
{
    int disp[QCOMM_MAX_DIM] = {0};
    if (dim < 0 || dim >= QCOMM_MAX_DIM || (dir != 0 && dir != 1))
        qc_fail("comm_neighbor_rank", "dir %d, dim %d: dir 0 or 1, dim 0 .. %d", dir, dim,
                QCOMM_MAX_DIM - 1);
    disp[dim] = dir ? 1 : -1;
    return comm_rank_displaced(disp);
}

void comm_barrier(void)
{
    need_init("comm_barrier");
    qc.ops->barrier();
}

/* QUDA's tag of a displacement (comm_mpi.cpp), with max_displacement 1: one
 * hop per dimension, enough for a nearest-neighbour stencil (QUDA's 4 serves
 * the 3-hop Naik term), so that every tag fits QCOMM_TAGS slots. A receive
 * takes the tag of the negated displacement: it matches the send that went
 * the other way. */
#define MAX_DISPLACEMENT 1
static int displacement_tag(const char *call, const int displacement[], int sign)
{
    int tag = 0;
    for (int d = QCOMM_MAX_DIM - 1; d >= 0; d--) {
        if (displacement[d] < -MAX_DISPLACEMENT || displacement[d] > MAX_DISPLACEMENT)
            qc_fail(call, "displacement[%d] = %d: at most %d step%s per dimension", d,
                    displacement[d], MAX_DISPLACEMENT, MAX_DISPLACEMENT == 1 ? "" : "s");
        tag = tag * 4 * MAX_DISPLACEMENT + sign * displacement[d] + MAX_DISPLACEMENT;
    }
    return tag;
}

static MsgHandle *declare(const char *call, int send, void *buffer, int peer, int tag,
                          size_t nbytes)
{
    need_init(call);
    if (!buffer)
        qc_fail(call, "NULL buffer");
    if (nbytes == 0)
        qc_fail(call, "nbytes is 0");
    if (peer < 0 || peer >= qc.size)
        qc_fail(call, "rank %d: the job has ranks 0 .. %d", peer, qc.size - 1);
    if (tag < 0 || tag >= QCOMM_TAGS)
        qc_fail(call, "tag %d: must be 0 .. %d", tag, QCOMM_TAGS - 1);
    uint8_t *used = send ? qc.send_used : qc.recv_used;
    if (used[qc_pair(peer, tag)])
        qc_fail(call, "a live %s handle %s rank %d already has tag %d", send ? "send" : "receive",
                send ? "to" : "from", peer, tag);
    MsgHandle *mh = calloc(1, sizeof *mh);
    if (!mh)
        qc_fail(call, "out of memory");
    *mh = (MsgHandle){.send = send, .peer = peer, .tag = tag, .buffer = buffer,
                      .nbytes = nbytes, .index = qc.handles};
    qc.ops->declare(mh);
    used[qc_pair(peer, tag)] = 1;
    qc.handles++;
    qc.live++;
    return mh;
}

MsgHandle *comm_declare_send_displaced(void *buffer, const int displacement[], size_t nbytes)
{
    const char *call = "comm_declare_send_displaced";
    int tag = displacement_tag(call, displacement, 1);
    return declare(call, 1, buffer, comm_rank_displaced(displacement), tag, nbytes);
}

MsgHandle *comm_declare_receive_displaced(void *buffer, const int displacement[], size_t nbytes)
{
    const char *call = "comm_declare_receive_displaced";
    int tag = displacement_tag(call, displacement, -1);
    return declare(call, 0, buffer, comm_rank_displaced(displacement), tag, nbytes);
}

MsgHandle *comm_declare_send_rank(void *buffer, int rank, int tag, size_t nbytes)
{
    return declare("comm_declare_send_rank", 1, buffer, rank, tag, nbytes);
}

MsgHandle *comm_declare_recv_rank(void *buffer, int rank, int tag, size_t nbytes)
{
    return declare("comm_declare_recv_rank", 0, buffer, rank, tag, nbytes);
}

static void relative(const char *call, int dim, int dir, int disp[QCOMM_MAX_DIM])
{
    if (dim < 0 || dim >= QCOMM_MAX_DIM || (dir != -1 && dir != 1))
        qc_fail(call, "dim %d, dir %d: dim 0 .. %d, dir -1 or +1", dim, dir, QCOMM_MAX_DIM - 1);
    memset(disp, 0, QCOMM_MAX_DIM * sizeof *disp);
    disp[dim] = dir;
}

MsgHandle *comm_declare_send_relative(void *buffer, int dim, int dir, size_t nbytes)
{
    int disp[QCOMM_MAX_DIM];
    relative("comm_declare_send_relative", dim, dir, disp);
    return comm_declare_send_displaced(buffer, disp, nbytes);
}

MsgHandle *comm_declare_receive_relative(void *buffer, int dim, int dir, size_t nbytes)
{
    int disp[QCOMM_MAX_DIM];
    relative("comm_declare_receive_relative", dim, dir, disp);
    return comm_declare_receive_displaced(buffer, disp, nbytes);
}

void comm_start(MsgHandle *mh)
{
    need_init("comm_start");
    if (!mh)
        qc_fail("comm_start", "NULL handle");
    if (mh->active)
        qc_fail("comm_start", "handle %d started again before its wait", mh->index);
    uint64_t *count = mh->send ? qc.send_count : qc.recv_count;
    mh->seq = ++count[qc_pair(mh->peer, mh->tag)];
    mh->active = 1;
    mh->done = 0;
    qc.ops->start(mh);
}

void comm_wait(MsgHandle *mh)
{
    need_init("comm_wait");
    if (!mh)
        qc_fail("comm_wait", "NULL handle");
    if (!mh->active)
        return; /* QUDA: waiting for a handle not in flight returns */
    qc.ops->wait(mh);
    mh->active = 0;
}

int comm_query(MsgHandle *mh)
{
    need_init("comm_query");
    if (!mh)
        qc_fail("comm_query", "NULL handle");
    if (!mh->active)
        return 1;
    if (!qc.ops->query(mh))
        return 0;
    mh->active = 0;
    return 1;
}

void comm_free(MsgHandle **mhp)
{
    need_init("comm_free");
    if (!mhp || !*mhp)
        return;
    MsgHandle *mh = *mhp;
    if (mh->active)
        qc_fail("comm_free", "handle %d is in flight (comm_wait it first)", mh->index);
    qc.ops->release(mh);
    (mh->send ? qc.send_used : qc.recv_used)[qc_pair(mh->peer, mh->tag)] = 0;
    qc.live--;
    free(mh);
    *mhp = NULL;
}
