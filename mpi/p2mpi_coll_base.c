/*
 * p2mpi_coll_base.c - what the collective algorithms of the MPI layer are
 * written against: blocking and nonblocking steps on the communicator's
 * collective context, each also a step of MVAPICH2's collective software
 * while a collective on GPU buffers runs (the GPU path); local reductions;
 * packing blocks to bytes; small helpers. Depends on point-to-point
 * (p2mpi_p2p.c) and the units below it.
 */
#define _GNU_SOURCE
#include "p2mpi_coll_internal.h"

#include <stdlib.h>
#include <string.h>

void *xmalloc(size_t n)
{
    void *p = malloc(n ? n : 1);
    if (!p)
        pm_fatal("out of memory for a %zu-byte buffer", n);
    return p;
}

int pof2_below(int n)
{
    int p = 1;
    while (p * 2 <= n)
        p *= 2;
    return p;
}

/* A type whose data is one dense run of bytes from the buffer's start. */
int dense(MPI_Datatype t)
{
    int size;
    MPI_Aint lb, extent;
    PMPI_Type_size(t, &size);
    PMPI_Type_get_extent(t, &lb, &extent);
    return lb == 0 && (MPI_Aint)size == extent;
}

/* Set while a collective on GPU buffers runs MVAPICH2-GDR's staged path:
 * the call and each blocking point-to-point step of its host algorithm (and
 * each wait for a burst of nonblocking ones) cost its collective software
 * (mpi_coll_call_ns, mpi_coll_step_ns) on top of the messages. The costs
 * are fitted to GPU-buffer figures; no published host-buffer collective
 * pins them there, so host-buffer collectives keep the point-to-point
 * costs alone. */
/* (E.coll_gpu_path: in the rank's state, so that a thread's call keeps it
 * across a wait in which another thread's call runs, p2mpi_core.c) */

void gpu_path_begin(int gpu)
{
    if (gpu && !E.coll_gpu_path) {
        E.coll_gpu_path = 1;
        pm_coll_call_cost();
    }
}

/* The end of every collective call (END). */
void gpu_path_end(void) { E.coll_gpu_path = 0; }

int pm_coll_gpu_path_swap(int v)
{
    int was = E.coll_gpu_path;
    E.coll_gpu_path = v;
    return was;
}

void c_send(const void *b, int n, MPI_Datatype t, int dest, int tag, pm_comm *c, int coll)
{
    if (E.coll_gpu_path)
        pm_coll_step_cost();
    pm_send(b, n, t, dest, tag, c, coll);
}
void c_recv(void *b, int n, MPI_Datatype t, int src, int tag, pm_comm *c, int coll,
            MPI_Status *st)
{
    if (E.coll_gpu_path)
        pm_coll_step_cost();
    pm_recv(b, n, t, src, tag, c, coll, st);
}
void c_sendrecv(const void *sb, int sn, MPI_Datatype st, int dest, int stag, void *rb,
                int rn, MPI_Datatype rt, int src, int rtag, pm_comm *c, int coll,
                MPI_Status *status)
{
    if (E.coll_gpu_path)
        pm_coll_step_cost();
    pm_sendrecv(sb, sn, st, dest, stag, rb, rn, rt, src, rtag, c, coll, status);
}
void c_waitall(int n, MPI_Request r[], MPI_Status sts[])
{
    if (E.coll_gpu_path)
        pm_coll_step_cost();
    pm_waitall(n, r, sts);
}
/* MVAPICH2 reduces GPU buffers' data on the host, in its staging (charged
 * on that path; host-buffer collectives keep their uncharged reductions,
 * which the point-to-point calibration and the TCA clients' golden figures
 * assume). */
void c_reduce_local(const void *in, void *inout, int count, MPI_Datatype t, MPI_Op op)
{
    if (E.coll_gpu_path)
        pm_charge_reduce(pm_type_size(t) * (size_t)(count > 0 ? count : 0));
    PMPI_Reduce_local(in, inout, count, t, op);
}

/* Moves bytes on the collective context; the _t forms with a tag other than TAG. */
void bsend_t(const void *b, size_t n, int dest, int tag, pm_comm *c)
{
    c_send(b, (int)n, MPI_BYTE, dest, tag, c, 1);
}
void brecv_t(void *b, size_t n, int src, int tag, pm_comm *c)
{
    c_recv(b, (int)n, MPI_BYTE, src, tag, c, 1, MPI_STATUS_IGNORE);
}
void bsendrecv_t(const void *s, size_t sn, int dest, void *r, size_t rn, int src, int tag,
                 pm_comm *c)
{
    c_sendrecv(s, (int)sn, MPI_BYTE, dest, tag, r, (int)rn, MPI_BYTE, src, tag, c, 1,
               MPI_STATUS_IGNORE);
}
void bsend(const void *b, size_t n, int dest, pm_comm *c)
{
    bsend_t(b, n, dest, TAG, c);
}
void brecv(void *b, size_t n, int src, pm_comm *c)
{
    brecv_t(b, n, src, TAG, c);
}
void bsendrecv(const void *s, size_t sn, int dest, void *r, size_t rn, int src, pm_comm *c)
{
    bsendrecv_t(s, sn, dest, r, rn, src, TAG, c);
}

/* count elements of t at buf as n packed bytes (local work, uncharged: it
 * stands for the zero-copy paths of a real MPI). */
void pack_to(const void *buf, int count, MPI_Datatype t, void *out)
{
    int pos = 0, n = (int)(pm_type_size(t) * (size_t)count);
    if (n)
        PMPI_Pack(buf, count, t, out, n, &pos, MPI_COMM_SELF);
}
void unpack_from(const void *in, void *buf, int count, MPI_Datatype t)
{
    int pos = 0, n = (int)(pm_type_size(t) * (size_t)count);
    if (n)
        PMPI_Unpack(in, n, &pos, buf, count, t, MPI_COMM_SELF);
}

/* The bytes count elements of t span (true extent), from src to dst: the
 * emulator moving a GPU buffer to its host stand-in, whose cost the staging
 * charges stand for. */
void span_copy(void *dst, const void *src, int count, MPI_Datatype t)
{
    MPI_Aint tlb, text, lb, ext;
    PMPI_Type_get_true_extent(t, &tlb, &text);
    PMPI_Type_get_extent(t, &lb, &ext);
    if (count > 0)
        memcpy((char *)dst + tlb, (const char *)src + tlb,
               (size_t)text + (size_t)(count - 1) * (size_t)ext);
}

char *at(const void *buf, MPI_Datatype t, size_t elems)
{
    return (char *)buf + (MPI_Aint)elems * pm_type_extent(t);
}

int commutative(MPI_Op op)
{
    int cm = 1;
    PMPI_Op_commutative(op, &cm);
    return cm;
}

/* acc = (lower-ranked data) op acc, as MPI orders non-commutative reductions:
 * `mine_first` says acc holds the lower ranks' part. */
void combine(void *in, void *acc, int count, MPI_Datatype t, MPI_Op op, int in_is_lower)
{
    if (in_is_lower) {
        c_reduce_local(in, acc, count, t, op); /* acc = in op acc */
    } else {
        c_reduce_local(acc, in, count, t, op); /* in = acc op in */
        pm_local_copy(in, count, t, acc, count, t);
    }
}

void check_root(int root, pm_comm *c)
{
    if (root < 0 || root >= c->size)
        pm_fatal("root %d is not in the communicator (size %d) (MPI_ERR_ROOT)", root, c->size);
}

/* ---- What the ranks' arguments must agree on ---------------------------------------
 * MPI requires a collective's root, op, datatype signature and counts to be
 * the same at every rank and does not check them: ranks that differ end
 * with different answers. Each message of the call carries this rank's in
 * its header (p2mpi_engine.h), and the receiving rank compares them with
 * its own: no message is added, no simulated time taken. A type is
 * compared as its basic type and a count of its elements, as MPI's type
 * signatures are (2 MPI_INT agree with 1 contiguous pair of them). */
void sig_set(int kind, int root, MPI_Datatype t, int count, MPI_Op op)
{
    pm_coll_sig s = {.kind = (uint8_t)kind, .root = root, .op = -2, .type = -2};
    if (op != MPI_OP_NULL)
        s.op = (int16_t)pm_op_to_code(op);
    if (t != MPI_DATATYPE_NULL) {
        size_t bytes = pm_type_size(t) * (size_t)count;
        MPI_Datatype b = pm_basic_type(t);
        size_t bsize = b == MPI_DATATYPE_NULL ? 1 : pm_type_size(b);
        s.type = (int16_t)(b == MPI_DATATYPE_NULL ? -1 : pm_type_to_code(b));
        s.count = bsize ? bytes / bsize : bytes;
    }
    E.coll_sig = s;
}

void sig_set_counts(const int counts[], int n, MPI_Datatype t, MPI_Op op)
{
    uint64_t total = 0;
    uint32_t h = 2166136261u; /* FNV-1a over the counts */
    for (int i = 0; i < n; i++) {
        total += (uint64_t)counts[i];
        for (int k = 0; k < 4; k++) {
            h ^= (uint32_t)counts[i] >> (8 * k) & 0xffu;
            h *= 16777619u;
        }
    }
    sig_set(PM_SIG_REDSCAT, -1, t, total > INT32_MAX ? INT32_MAX : (int)total, op);
    E.coll_sig.counts_hash = h;
}

/* ---- Threads ------------------------------------------------------------------------
 * Collectives on one communicator must be called in the same order at every
 * rank; two threads of a rank in collectives on one communicator at once
 * have no order, and the ranks' messages then cross-match (each thread's
 * MPI_Allreduce reducing with the other thread's data elsewhere). A thread
 * that enters one while another thread is inside one is the error made
 * visible; the communicator notes who is inside (host memory: no
 * simulated time). */
static _Noreturn void threads_clash(const pm_comm *c)
{
    char where[96];
    pm_comm_describe(c, where, sizeof where);
    pthread_t self = pthread_self();
    pm_fatal("called on %s from %s while %s of this rank is inside %s on it: collectives on one "
             "communicator from two threads at once have no order the ranks can match "
             "(MPI_ERR_OTHER)",
             where, pthread_equal(self, E.main_thread) ? "the main thread" : "a helper thread",
             pthread_equal(c->coll_thread, E.main_thread) ? "the main thread" : "another thread",
             c->coll_call);
}

void pm_coll_threads_check(pm_comm *c)
{
    if (E.multi && c->coll_call && !pthread_equal(c->coll_thread, pthread_self()))
        threads_clash(c);
}

void coll_enter(pm_comm *c)
{
    if (!E.multi)
        return;
    pm_coll_threads_check(c);
    c->coll_call = E.call;
    c->coll_thread = pthread_self();
}

void coll_leave(pm_comm *c)
{
    if (E.multi)
        c->coll_call = NULL;
}
