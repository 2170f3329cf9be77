/*
 * p2mpi_coll_internal.h - what the collective units of the virtual-time MPI
 * layer offer one another. The collectives are built on the modelled
 * point-to-point (p2mpi_p2p.h) on the communicator's collective context, so
 * they take the simulated time their messages take:
 *   p2mpi_coll_base.c    the transport the algorithms are written against
 *   p2mpi_coll_move.c    algorithms that move data   } on p2mpi_coll_base.c
 *   p2mpi_coll_reduce.c  algorithms that reduce      }
 *   p2mpi_coll_calls.c   the MPI collective calls    } on the algorithms
 *   p2mpi_coll_v.c       their v-variants            } on p2mpi_coll_base.c
 *   p2mpi_coll_redscat.c reduce-scatter and scan     } on p2mpi_coll_reduce.c
 *
 * Algorithms (MVAPICH2 2.x inter-node defaults, one rank per node, after
 * MPICH's; README.md says where the layer differs):
 *   Barrier        dissemination: ceil(log2 p) rounds of 0-byte messages
 *   Bcast          binomial tree up to mpi_eager_bytes; above, scatter
 *                  (binomial) + ring allgather (van de Geijn)
 *   Reduce         Rabenseifner (reduce-scatter by recursive halving +
 *                  binomial gather) above 2 KiB for commutative ops with
 *                  count >= pof2; binomial tree otherwise (non-commutative
 *                  ops: to rank 0 in rank order, then to the root)
 *   Allreduce      recursive doubling (extra ranks of a non-power-of-two
 *                  folded into their neighbours first) up to 2 KiB;
 *                  Rabenseifner (reduce-scatter + allgather) above, for
 *                  commutative ops
 *   Gather/Scatter binomial tree over packed blocks; direct (the root posts
 *                  a message per rank) above MVAPICH2's CUDA naive limits,
 *                  where they run on the buffers themselves
 *   Allgather      recursive doubling for a power of two below 512 KiB in
 *                  all; Bruck for other sizes of communicator below 80 KiB;
 *                  ring otherwise
 *   Alltoall       Bruck for blocks up to 256 B at 8 ranks or more; every
 *                  isend/irecv posted at once up to 32 KiB blocks (in
 *                  (rank + i) order), pairwise exchange above
 *   Gatherv/Scatterv linear; Allgatherv ring; Alltoallv isend/irecv
 *   Reduce_scatter(_block)  commutative ops: recursive halving below 512 KiB
 *                  in all, pairwise exchange above; non-commutative: MPICH's
 *                  bit-reversed halving for a power of two with equal
 *                  blocks, recursive doubling otherwise
 *   Scan/Exscan    recursive doubling
 *
 *   Data is packed to bytes (PMPI_Pack for derived types) where it only moves;
 *   reductions keep the type's layout and use PMPI_Reduce_local.
 */
#ifndef P2MPI_COLL_INTERNAL_H
#define P2MPI_COLL_INTERNAL_H

#include "p2mpi_coll.h"

#pragma GCC visibility push(hidden)

#define TAG PM_TAG_COLL /* collectives are ordered per communicator (MPI_Bcast's differ) */

/* ---- The transport (p2mpi_coll_base.c) -------------------------------------------- */
void *xmalloc(size_t n);
int pof2_below(int n);
/* A type whose data is one dense run of bytes from the buffer's start. */
int dense(MPI_Datatype t);
/* The GPU path (p2mpi_coll_base.c): a collective on GPU buffers starts it
 * (its call cost charged once); every collective call ends it (END). */
void gpu_path_begin(int gpu);
void gpu_path_end(void);
/* Blocking steps and waits on the collective context: each also a step of
 * the collective software on the GPU path; local reductions, charged there. */
void c_send(const void *b, int n, MPI_Datatype t, int dest, int tag, pm_comm *c, int coll);
void c_recv(void *b, int n, MPI_Datatype t, int src, int tag, pm_comm *c, int coll,
            MPI_Status *st);
void c_sendrecv(const void *sb, int sn, MPI_Datatype st, int dest, int stag, void *rb, int rn,
                MPI_Datatype rt, int src, int rtag, pm_comm *c, int coll, MPI_Status *status);
void c_waitall(int n, MPI_Request r[], MPI_Status sts[]);
void c_reduce_local(const void *in, void *inout, int count, MPI_Datatype t, MPI_Op op);
/* Bytes on the collective context; the _t forms with a tag other than TAG. */
void bsend_t(const void *b, size_t n, int dest, int tag, pm_comm *c);
void brecv_t(void *b, size_t n, int src, int tag, pm_comm *c);
void bsendrecv_t(const void *s, size_t sn, int dest, void *r, size_t rn, int src, int tag,
                 pm_comm *c);
void bsend(const void *b, size_t n, int dest, pm_comm *c);
void brecv(void *b, size_t n, int src, pm_comm *c);
void bsendrecv(const void *s, size_t sn, int dest, void *r, size_t rn, int src, pm_comm *c);
/* count elements of t packed to bytes and back (uncharged); the bytes
 * count elements span, copied; element `elems` of t at buf. */
void pack_to(const void *buf, int count, MPI_Datatype t, void *out);
void unpack_from(const void *in, void *buf, int count, MPI_Datatype t);
void span_copy(void *dst, const void *src, int count, MPI_Datatype t);
char *at(const void *buf, MPI_Datatype t, size_t elems);
/* Whether op commutes; acc = (lower-ranked data) op acc. */
int commutative(MPI_Op op);
void combine(void *in, void *acc, int count, MPI_Datatype t, MPI_Op op, int in_is_lower);
/* Ends the job unless root is a rank of c. */
void check_root(int root, pm_comm *c);
/* What this call's arguments must agree on between the ranks (E.coll_sig,
 * which its messages carry): kind (PM_SIG_*), root (-1: none), count
 * elements of t (MPI_DATATYPE_NULL: not compared), op (MPI_OP_NULL: none);
 * MPI_Reduce_scatter's recvcounts as their sum and a hash of them. */
void sig_set(int kind, int root, MPI_Datatype t, int count, MPI_Op op);
void sig_set_counts(const int counts[], int n, MPI_Datatype t, MPI_Op op);
/* A thread enters and leaves a blocking collective on c (MPI_THREAD_MULTIPLE:
 * the job ends if another thread of the rank is inside one on c). */
void coll_enter(pm_comm *c);
void coll_leave(pm_comm *c);

/* The bracket of a collective call on communicator `comm` (c in the body). */
#define BEGIN(name)                         \
    pm_enter(name);                         \
    pm_comm *c = pm_intra_of(comm, name);   \
    coll_enter(c)
#define END()           \
    coll_leave(c);      \
    gpu_path_end();     \
    pm_leave();         \
    return MPI_SUCCESS

/* ---- Algorithms that move data (p2mpi_coll_move.c) -------------------------------- */
void barrier(pm_comm *c);
void bcast_bytes(char *b, size_t n, int root, pm_comm *c);
/* Blocks of blk bytes in rank order at the root's `all`: binomial trees ... */
void gather_bytes(const void *mine, size_t blk, void *all, int root, pm_comm *c);
void scatter_bytes(const void *all, size_t blk, void *mine, int root, pm_comm *c);
/* ... and direct (the root posts a message per rank). */
void gather_direct(const char *mine, size_t blk, char *all, int root, pm_comm *c);
void scatter_direct(const char *all, size_t blk, char *mine, int root, pm_comm *c);
/* all holds p blocks of blk bytes; this rank's is in place. */
void allgather_bytes(char *all, size_t blk, pm_comm *c);
void alltoall_bytes(const char *sb, char *rb, size_t blk, pm_comm *c);

/* ---- Algorithms that reduce (p2mpi_coll_reduce.c) --------------------------------- */
void reduce_binomial(void *acc, int count, MPI_Datatype t, MPI_Op op, int root, pm_comm *c);
void reduce_rabenseifner(void *acc, int count, MPI_Datatype t, MPI_Op op, int root, pm_comm *c);
void allreduce(void *acc, int count, MPI_Datatype t, MPI_Op op, pm_comm *c);
/* The reduce-scatter by recursive halving over pof2 ranks that Rabenseifner's
 * reduce and MPI_Reduce_scatter share. */
void rs_halving(void *acc, void *tmp, MPI_Datatype t, MPI_Op op, const int *disps, int pof2,
                int newrank, int rem, pm_comm *c);

#pragma GCC visibility pop

#endif /* P2MPI_COLL_INTERNAL_H */
