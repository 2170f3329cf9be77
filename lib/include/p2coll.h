/*
 * p2coll.h - collectives over the TCA interconnect (barrier, broadcast,
 * scatter, gather, reduce, allgather, allreduce) for ranks started by p2run,
 * with the published TCA algorithms (lib/README.md "Collectives"; lib/src/coll/).
 *
 * Communicators. P2_COMM_WORLD is every rank of the job; P2_COMM_SUBCLUSTER
 * the job's ranks on this rank's PEACH2 network (p2_subcluster, p2.h), in
 * job-rank order; p2_comm_create makes a sub-communicator from a list of
 * ranks. Ranks passed to collectives (roots) are ranks of the communicator.
 *
 * Sub-clusters. TCA reaches only the nodes of one PEACH2 network. On a job
 * whose ranks are on several (HA-PACS/TCA's 64 nodes, four sub-clusters),
 * every collective on P2_COMM_WORLD, and p2_comm_create from it, returns
 * TCA_ERROR_UNREACHABLE on every rank (rank 0 says so on stderr): run the
 * collectives on P2_COMM_SUBCLUSTER (each sub-cluster at the same time, on
 * its own cables) and combine across sub-clusters with MPI. On a job on one
 * network P2_COMM_SUBCLUSTER has the same members as P2_COMM_WORLD (another
 * communicator, with its own mailboxes and plans).
 *
 * Buffers are registered memory of this node: host or GPU memory from
 * tcaMalloc (any address inside an allocation). Other memory is refused with
 * TCA_ERROR_NOT_REGISTERED. Counts are elements per rank. A count of 0 is a
 * valid collective that moves nothing (it still checks its arguments with
 * the other ranks). What the call reads or writes in a buffer must lie
 * within its allocation (from the address to the allocation's end): count
 * elements, times the communicator's size where the call gathers or scatters
 * (allgather's recvbuf, gather's recvbuf and scatter's sendbuf at the root);
 * else TCA_ERROR_OUT_OF_RANGE.
 *
 * In place: P2_IN_PLACE as sendbuf means the rank's own data is already where
 * the result goes: allgather and gather (root) take block `rank` of recvbuf,
 * reduce (root) and allreduce take recvbuf itself, scatter (root) leaves its
 * own block in sendbuf and ignores recvbuf. sendbuf == recvbuf means the
 * same for reduce and allreduce.
 *
 * Errors. Every call checks its arguments on every rank and then agrees with
 * the other ranks, so that argument errors (null or unregistered buffers,
 * counts, types, operators or roots that differ between ranks or are out of
 * range, unsupported (type, op) pairs) give the same status on every rank and
 * never a hang: the status of the lowest rank that found a problem.
 *   TCA_ERROR_INVALID_ARGUMENT  null buffer with count > 0, unknown type or op,
 *                               root out of range, arguments that differ
 *                               between ranks (the comm's rank 0 names the
 *                               argument and both values on stderr), bad
 *                               rules file (see below)
 *   TCA_ERROR_NOT_REGISTERED    a buffer that is not tcaMalloc memory
 *   TCA_ERROR_OUT_OF_RANGE      a buffer whose allocation ends before what the
 *                               call reads or writes there
 *   TCA_ERROR_NOT_SUPPORTED     (type, op) without meaning: bitwise ops on
 *                               floating types, TCA_OP_NOOP; an algorithm
 *                               forced (P2_COLL_<COLL>) that does not exist or
 *                               cannot run the call (named on stderr)
 *   TCA_ERROR_INVALID_HANDLE    a communicator or request that is not one, or
 *                               a request that p2_request_free has freed
 * What cannot be detected: a rank that does not call the collective at all,
 * or calls a different one on the same communicator with the same arguments;
 * failures of the device after the agreement (the status is then the local
 * one, e.g. TCA_ERROR_DEVICE). A blocking call that reuses its plan (below)
 * checks new buffers on its own rank only: a refused one there leaves the
 * others waiting for it (P2_COLL_CHECK=1 agrees on every call).
 *
 * Persistent form (as MPI 4's MPI_Allreduce_init): p2_<coll>_init checks
 * arguments with the other ranks, exchanges the buffers' handles and picks
 * the algorithm once; each p2_start runs the collective with those buffers;
 * p2_wait returns its status; p2_request_free releases it (collectively:
 * every rank frees its requests in the same order). Progress happens inside
 * p2_start (there is no progress thread), so p2_start returns when this
 * rank's part is done; p2_wait never blocks. A blocking call is init +
 * start the first time it is made with given arguments (communicator,
 * collective, count, type, op, root, host or GPU buffers, forced algorithm);
 * the library keeps that plan (the last 8), and a later call with the same
 * arguments is a start with this call's buffers: no exchange, as MPI's
 * calls. Ranks may pass other buffers each time. P2_COLL_CHECK=1 in the
 * environment makes every blocking call check with the others as the
 * first one does.
 *
 * Resources the collectives reserve (user programs must not use them while
 * a collective runs): DMAC channel P2_COLL_DMA_CHANNEL and notification slot
 * P2_COLL_WAIT_SLOT (every tag). Collectives run one at a time per process.
 *
 * Algorithms (names for P2_COLL_<COLLECTIVE> and rules files):
 *   barrier: dissemination         bcast: binomial
 *   scatter: linear                gather: linear
 *   reduce: gather (CPU reduction), gather_gpu (a GPU kernel)
 *   allgather: recursive_doubling (power-of-two sizes), bruck, ring
 *   allreduce: dissemination_pio (host buffers, <= 240 B), dissemination, rsag
 *
 * Algorithm selection: a cost model predicts each eligible algorithm's time
 * from the model's calibrated figures and the call picks the fastest; the
 * environment variable P2_COLL_<COLLECTIVE>=<algorithm> (e.g.
 * P2_COLL_ALLGATHER=ring) forces one, and P2_COLL_RULES=<file> names a rules
 * file read once (format in lib/README.md "Collectives"; a bad line is reported as
 * FILE:LINE on stderr, a path that is no regular file (a device, a FIFO) by
 * name; every collective then returns TCA_ERROR_INVALID_ARGUMENT).
 * Precedence: variable, rules file, cost model.
 *
 * Not thread safe.
 */
#ifndef P2COLL_H
#define P2COLL_H

#include <stddef.h>

#include "p2.h"
#include "tca-api.h"

#ifdef __cplusplus
extern "C" {
#endif

/* Reserved for the collectives (see above). */
#define P2_COLL_DMA_CHANNEL 3
#define P2_COLL_WAIT_SLOT 63

/* Largest communicator. */
#define P2_COLL_MAX_RANKS 64

typedef struct p2_comm *p2_comm_t;
extern struct p2_comm p2_comm_world;
#define P2_COMM_WORLD (&p2_comm_world)
extern struct p2_comm p2_comm_subcluster;
#define P2_COMM_SUBCLUSTER (&p2_comm_subcluster)
#define P2_COMM_NULL ((p2_comm_t)0)

#define P2_IN_PLACE ((const void *)-1)

/* This rank's rank in comm, and comm's size; -1 for P2_COMM_NULL or an
 * invalid comm (and before tcaInit can run). */
int p2_comm_rank(p2_comm_t comm);
int p2_comm_size(p2_comm_t comm);

/* *newcomm = the ranks ranks[0 .. n) of `parent` (new rank i = ranks[i]);
 * P2_COMM_NULL on ranks not in the list. Collective over `parent`: every rank
 * of parent calls it with the same list (distinct ranks, 1 .. size of parent).
 * TCA_ERROR_INVALID_ARGUMENT (list bad or different between ranks, NULL
 * newcomm), _INVALID_HANDLE, _OUT_OF_MEMORY, device errors. */
tcaresult p2_comm_create(p2_comm_t parent, const int *ranks, int n, p2_comm_t *newcomm);
/* Frees a communicator from p2_comm_create (collective over its ranks);
 * *comm = P2_COMM_NULL. Freeing P2_COMM_NULL is a no-op;
 * P2_COMM_WORLD, P2_COMM_SUBCLUSTER: TCA_ERROR_INVALID_ARGUMENT. */
tcaresult p2_comm_free(p2_comm_t *comm);

/* ---- Blocking collectives ------------------------------------------------ */
tcaresult p2_barrier(p2_comm_t comm);
tcaresult p2_bcast(void *buf, size_t count, tcaDataType type, int root, p2_comm_t comm);
tcaresult p2_scatter(const void *sendbuf, void *recvbuf, size_t count, tcaDataType type,
                     int root, p2_comm_t comm);
tcaresult p2_gather(const void *sendbuf, void *recvbuf, size_t count, tcaDataType type,
                    int root, p2_comm_t comm);
tcaresult p2_reduce(const void *sendbuf, void *recvbuf, size_t count, tcaDataType type,
                    tcaOp op, int root, p2_comm_t comm);
tcaresult p2_allgather(const void *sendbuf, void *recvbuf, size_t count, tcaDataType type,
                       p2_comm_t comm);
tcaresult p2_allreduce(const void *sendbuf, void *recvbuf, size_t count, tcaDataType type,
                       tcaOp op, p2_comm_t comm);

/* ---- Persistent collectives ---------------------------------------------- */
typedef struct p2_request *p2_request_t;

tcaresult p2_barrier_init(p2_comm_t comm, p2_request_t *req);
tcaresult p2_bcast_init(void *buf, size_t count, tcaDataType type, int root, p2_comm_t comm,
                        p2_request_t *req);
tcaresult p2_scatter_init(const void *sendbuf, void *recvbuf, size_t count, tcaDataType type,
                          int root, p2_comm_t comm, p2_request_t *req);
tcaresult p2_gather_init(const void *sendbuf, void *recvbuf, size_t count, tcaDataType type,
                         int root, p2_comm_t comm, p2_request_t *req);
tcaresult p2_reduce_init(const void *sendbuf, void *recvbuf, size_t count, tcaDataType type,
                         tcaOp op, int root, p2_comm_t comm, p2_request_t *req);
tcaresult p2_allgather_init(const void *sendbuf, void *recvbuf, size_t count,
                            tcaDataType type, p2_comm_t comm, p2_request_t *req);
tcaresult p2_allreduce_init(const void *sendbuf, void *recvbuf, size_t count,
                            tcaDataType type, tcaOp op, p2_comm_t comm, p2_request_t *req);

/* Runs the collective once (every rank of the comm starts it). */
tcaresult p2_start(p2_request_t req);
/* The status of the last p2_start; TCA_ERROR_INVALID_HANDLE if none. */
tcaresult p2_wait(p2_request_t req);
/* Releases the request; *req = NULL. NULL *req: no-op. A freed request
 * (any copy of its handle) is then refused by every call that takes one
 * (TCA_ERROR_INVALID_HANDLE, "" from p2_request_algorithm): the handle's
 * few bytes stay allocated for that, never to name another request. */
tcaresult p2_request_free(p2_request_t *req);
/* The algorithm the request runs ("binomial", "ring", ...); "" if invalid. */
const char *p2_request_algorithm(p2_request_t req);

/* ---- Same-GPU copy through PEACH2 ------------------------------------------ */
/* Copies `bytes` from src to dst, both registered memory of this node (GPU
 * or host), with one DMA of the board (reads and writes through PCIe, as the
 * published implementation copies a GPU's local block; faster than
 * cudaMemcpy up to about 8 KB). Uses P2_COLL_DMA_CHANNEL. Returns when the
 * data is written. bytes 0: nothing. TCA_ERROR_INVALID_ARGUMENT (NULL),
 * _NOT_REGISTERED, tcaInit's and the DMA's errors. */
tcaresult p2_memcpy_d2d(void *dst, const void *src, size_t bytes);

#ifdef __cplusplus
}
#endif

#endif /* P2COLL_H */
