/*
 * qcomm_mpi.c - qcomm's two MPI transports, over the virtual-time MPI layer
 * (the modelled InfiniBand rail):
 *
 *   mpi      QUDA's own comm_mpi.cpp: a persistent request per handle
 *            (MPI_Send_init / MPI_Recv_init on a duplicate of
 *            MPI_COMM_WORLD), MPI_Start, MPI_Wait, MPI_Test.
 *   mpi-rma  the TCA protocol (qcomm_tca.c) on MPI one-sided communication:
 *            one dynamic window (MPI_Win_create_dynamic) holding each rank's
 *            remote address slots and completion flags (MPI_Alloc_mem,
 *            MPI_Win_attach; their base addresses allgathered at comm_init)
 *            and every receive buffer (attached at its declaration). A
 *            receive's start puts its notice {address, size, seq} into the
 *            sender's slot; a send, once its slot holds this start's seq,
 *            puts the data, flushes, and puts the seq into the receiver's
 *            flag, in one passive-target epoch (MPI_Win_lock/unlock).
 *            Every epoch is MPI_LOCK_SHARED with MPI_MODE_NOCHECK: each slot,
 *            flag and buffer has one writer and the protocol itself orders
 *            the writes, so no lock word need be taken (MPI-3.1 11.5.5).
 *            MPI has no progress thread here (nor does MVAPICH2 by default,
 *            and a dynamic window's operations are applied by the target
 *            inside its MPI calls): sends waiting for their notice move in
 *            comm_start, comm_query and comm_wait of any handle; each pass
 *            drives MPI's progress engine (MPI_Iprobe) and reads the rank's
 *            own slots and flags in an epoch on itself.
 *
 * Depends on qcomm_internal.h and MPI.
 */
#include <limits.h>
#include <mpi.h>
#include <stdlib.h>
#include <string.h>

#include "qcomm_internal.h"

static MPI_Comm comm = MPI_COMM_NULL;

static void mpi_check(const char *call, int rc)
{
    if (rc != MPI_SUCCESS) {
        char text[MPI_MAX_ERROR_STRING];
        int len = 0;
        MPI_Error_string(rc, text, &len);
        qc_fail(call, "%s", text);
    }
}

static void mpi_common_init(const char *call)
{
    int initialised = 0, rank = -1, size = 0;
    MPI_Initialized(&initialised);
    if (!initialised)
        mpi_check(call, MPI_Init(NULL, NULL));
    MPI_Comm_rank(MPI_COMM_WORLD, &rank);
    MPI_Comm_size(MPI_COMM_WORLD, &size);
    if (rank != qc.rank || size != qc.size)
        qc_fail(call, "MPI rank %d of %d is not p2run's rank %d of %d", rank, size, qc.rank,
                qc.size);
    mpi_check(call, MPI_Comm_dup(MPI_COMM_WORLD, &comm));
}

static void mpi_barrier(void) { mpi_check("comm_barrier (mpi)", MPI_Barrier(comm)); }

static int byte_count(const char *call, size_t nbytes)
{
    if (nbytes > INT_MAX)
        qc_fail(call, "%zu bytes: MPI counts stop at %d", nbytes, INT_MAX);
    return (int)nbytes;
}

/* ---- mpi: persistent requests ------------------------------------------------ */

static void p_init(void) { mpi_common_init("comm_init (mpi)"); }

static void p_finalize(void)
{
    mpi_check("comm_finalize (mpi)", MPI_Barrier(comm));
    MPI_Comm_free(&comm);
}

static void p_declare(MsgHandle *mh)
{
    const char *call = mh->send ? "comm_declare_send (mpi)" : "comm_declare_receive (mpi)";
    MPI_Request *req = malloc(sizeof *req);
    if (!req)
        qc_fail(call, "out of memory");
    int n = byte_count(call, mh->nbytes);
    if (mh->send)
        mpi_check(call, MPI_Send_init(mh->buffer, n, MPI_BYTE, mh->peer, mh->tag, comm, req));
    else
        mpi_check(call, MPI_Recv_init(mh->buffer, n, MPI_BYTE, mh->peer, mh->tag, comm, req));
    mh->impl = req;
}

static void p_start(MsgHandle *mh) { mpi_check("comm_start (mpi)", MPI_Start(mh->impl)); }

static void p_wait(MsgHandle *mh)
{
    mpi_check("comm_wait (mpi)", MPI_Wait(mh->impl, MPI_STATUS_IGNORE));
}

static int p_query(MsgHandle *mh)
{
    int flag = 0;
    mpi_check("comm_query (mpi)", MPI_Test(mh->impl, &flag, MPI_STATUS_IGNORE));
    return flag;
}

static void p_release(MsgHandle *mh)
{
    mpi_check("comm_free (mpi)", MPI_Request_free(mh->impl));
    free(mh->impl);
    mh->impl = NULL;
}

const qc_ops qc_mpi_ops = {p_init, p_finalize, mpi_barrier, p_declare,
                           p_start, p_wait, p_query, p_release};

/* ---- mpi-rma: the TCA protocol on a dynamic window ----------------------------- */

typedef struct rma_notice {
    int64_t addr;   /* the receive buffer's MPI_Aint */
    uint64_t nbytes;
    uint64_t reserved;
    uint64_t seq;
} rma_notice;

typedef struct rma_handle {
    MPI_Aint addr;            /* receive: the attached buffer */
    rma_notice got;           /* send: its notice, read in the epoch that found it */
    MsgHandle *mh;
    struct rma_handle *next;  /* started sends without their notice yet */
} rma_handle;

static struct {
    MPI_Win win;
    uint8_t *region;          /* notices [receiver][tag], flags [sender][tag] */
    size_t region_bytes;
    MPI_Aint *bases;          /* every rank's region */
    rma_handle *pending, **tail;
} R;

static size_t r_notice_at(int rank, int tag) { return qc_pair(rank, tag) * sizeof(rma_notice); }
static size_t r_flag_at(int rank, int tag)
{
    return (size_t)qc.size * QCOMM_TAGS * sizeof(rma_notice) + qc_pair(rank, tag) * 8u;
}

static void r_init(void)
{
    const char *call = "comm_init (mpi-rma)";
    mpi_common_init(call);
    R.region_bytes = (size_t)qc.size * QCOMM_TAGS * (sizeof(rma_notice) + 8u);
    mpi_check(call, MPI_Alloc_mem((MPI_Aint)R.region_bytes, MPI_INFO_NULL, &R.region));
    memset(R.region, 0, R.region_bytes);
    mpi_check(call, MPI_Win_create_dynamic(MPI_INFO_NULL, comm, &R.win));
    mpi_check(call, MPI_Win_attach(R.win, R.region, (MPI_Aint)R.region_bytes));
    R.bases = calloc((size_t)qc.size, sizeof *R.bases);
    if (!R.bases)
        qc_fail(call, "out of memory");
    MPI_Aint mine;
    mpi_check(call, MPI_Get_address(R.region, &mine));
    mpi_check(call, MPI_Allgather(&mine, 1, MPI_AINT, R.bases, 1, MPI_AINT, comm));
    R.pending = NULL;
    R.tail = &R.pending;
}

static void r_finalize(void)
{
    const char *call = "comm_finalize (mpi-rma)";
    mpi_check(call, MPI_Barrier(comm)); /* no rank writes into another's region now */
    mpi_check(call, MPI_Win_detach(R.win, R.region));
    mpi_check(call, MPI_Win_free(&R.win));
    mpi_check(call, MPI_Free_mem(R.region));
    free(R.bases);
    MPI_Comm_free(&comm);
    memset(&R, 0, sizeof R);
}

static void lock(const char *call, int rank)
{
    mpi_check(call, MPI_Win_lock(MPI_LOCK_SHARED, rank, MPI_MODE_NOCHECK, R.win));
}

static void unlock(const char *call, int rank) { mpi_check(call, MPI_Win_unlock(rank, R.win)); }

/* The data and the receiver's flag for a send whose notice is n. */
static void put_message(MsgHandle *mh, const rma_notice *n)
{
    const char *call = "comm_start (mpi-rma)";
    if (n->nbytes < mh->nbytes)
        qc_fail(call, "send of %zu bytes to rank %d (tag %d) into a receive buffer of %llu bytes",
                mh->nbytes, mh->peer, mh->tag, (unsigned long long)n->nbytes);
    uint64_t seq = mh->seq;
    lock(call, mh->peer);
    mpi_check(call, MPI_Put(mh->buffer, byte_count(call, mh->nbytes), MPI_BYTE, mh->peer,
                            (MPI_Aint)n->addr, byte_count(call, mh->nbytes), MPI_BYTE, R.win));
    mpi_check(call, MPI_Win_flush(mh->peer, R.win)); /* the data lands before the flag */
    mpi_check(call, MPI_Put(&seq, 8, MPI_BYTE, mh->peer,
                            R.bases[mh->peer] + (MPI_Aint)r_flag_at(qc.rank, mh->tag), 8,
                            MPI_BYTE, R.win));
    unlock(call, mh->peer);
    mh->done = 1;
}

/* One pass: this rank's epoch on itself (applying what others put meanwhile),
 * its pending sends' slots read there, the ready ones sent. If `flag` is not
 * NULL, *flag_value = the word at that offset of the region, read in the
 * same epoch. */
static void progress(const char *call, size_t flag, uint64_t *flag_value)
{
    /* Runs MPI's progress engine, which applies what others put into our
     * dynamic window: a self epoch under MPI_MODE_NOCHECK takes no lock and
     * so polls nothing (the layer's MPI_Win_lock/unlock/sync do not); an
     * MPI_Iprobe is the usual way to drive an MPI without asynchronous
     * progress. No message is ever sent on `comm` under mpi-rma. */
    int any = 0;
    mpi_check(call, MPI_Iprobe(MPI_ANY_SOURCE, MPI_ANY_TAG, comm, &any, MPI_STATUS_IGNORE));
    lock(call, qc.rank);
    if (flag_value)
        *flag_value = *(volatile uint64_t *)(R.region + flag);
    rma_handle *ready = NULL, **ready_tail = &ready;
    for (rma_handle **p = &R.pending; *p;) {
        rma_handle *h = *p;
        const rma_notice *n = (const rma_notice *)(R.region + r_notice_at(h->mh->peer, h->mh->tag));
        if (*(volatile const uint64_t *)&n->seq != h->mh->seq) {
            p = &h->next;
            continue;
        }
        *p = h->next;
        if (R.tail == &h->next)
            R.tail = p;
        h->next = NULL;
        memcpy(&h->got, (const void *)n, sizeof h->got);
        *ready_tail = h;
        ready_tail = &h->next;
    }
    unlock(call, qc.rank);
    /* Outside the epoch on ourselves: each send is an epoch on its receiver. */
    for (rma_handle *h = ready, *next; h; h = next) {
        next = h->next;
        h->next = NULL;
        put_message(h->mh, &h->got);
    }
}

static void r_declare(MsgHandle *mh)
{
    const char *call = mh->send ? "comm_declare_send (mpi-rma)" : "comm_declare_receive (mpi-rma)";
    rma_handle *h = calloc(1, sizeof *h);
    if (!h)
        qc_fail(call, "out of memory");
    h->mh = mh;
    byte_count(call, mh->nbytes);
    if (!mh->send) {
        mpi_check(call, MPI_Win_attach(R.win, mh->buffer, (MPI_Aint)mh->nbytes));
        mpi_check(call, MPI_Get_address(mh->buffer, &h->addr));
    }
    mh->impl = h;
}

static void r_start(MsgHandle *mh)
{
    const char *call = "comm_start (mpi-rma)";
    rma_handle *h = mh->impl;
    if (mh->send) {
        h->next = NULL;
        *R.tail = h;
        R.tail = &h->next;
        progress(call, 0, NULL);
        return;
    }
    rma_notice n = {.addr = (int64_t)h->addr, .nbytes = mh->nbytes, .seq = mh->seq};
    lock(call, mh->peer);
    mpi_check(call, MPI_Put(&n, (int)sizeof n, MPI_BYTE, mh->peer,
                            R.bases[mh->peer] + (MPI_Aint)r_notice_at(qc.rank, mh->tag),
                            (int)sizeof n, MPI_BYTE, R.win));
    unlock(call, mh->peer);
}

static int r_query(MsgHandle *mh)
{
    if (mh->send) {
        if (!mh->done)
            progress("comm_query (mpi-rma)", 0, NULL);
        return mh->done;
    }
    uint64_t v = 0;
    progress("comm_query (mpi-rma)", r_flag_at(mh->peer, mh->tag), &v);
    return v == mh->seq;
}

static void r_wait(MsgHandle *mh)
{
    while (!r_query(mh))
        ;
}

static void r_release(MsgHandle *mh)
{
    rma_handle *h = mh->impl;
    if (!mh->send)
        mpi_check("comm_free (mpi-rma)", MPI_Win_detach(R.win, mh->buffer));
    free(h);
    mh->impl = NULL;
}

const qc_ops qc_mpi_rma_ops = {r_init, r_finalize, mpi_barrier, r_declare,
                               r_start, r_wait, r_query, r_release};
