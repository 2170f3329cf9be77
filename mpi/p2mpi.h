/*
 * p2mpi.h - internals shared by the files of the virtual-time MPI layer
 * (libp2mpi.so, preloaded by p2run into MPI programs; README.md).
 *
 * The layer defines the MPI functions itself. Messages move as modelled
 * InfiniBand transfers through the node's HCA (ib_hw.h, p2_device_get("ib")),
 * so they take simulated time and are matched in the order their completions
 * reach the rank's completion queue, which is simulated-time order. The real
 * Open MPI serves only local work through PMPI: datatype packing, reductions
 * (PMPI_Reduce_local), communicator handles.
 *
 * Single-threaded: MPI_Init_thread grants at most MPI_THREAD_FUNNELED.
 */
#ifndef P2MPI_H
#define P2MPI_H

#include <mpi.h>
#include <stddef.h>
#include <stdint.h>

/* A communicator: its members as world ranks, in comm-rank order. The handle
 * is a real Open MPI communicator (a dup of MPI_COMM_SELF for the ones the
 * layer makes) so handle-only calls passed to Open MPI still work. */
typedef struct pm_comm {
    MPI_Comm handle;
    int size, rank;
    int *world;         /* world[comm rank] */
    uint32_t ctx;       /* point-to-point context; collectives use ctx + 1 */
    struct pm_comm *next;
} pm_comm;

/* A group: world ranks, in group-rank order. MPI_Group handles are these. */
typedef struct pm_group {
    int size, rank; /* rank: this process's, or MPI_UNDEFINED */
    int *world;
} pm_group;

pm_comm *pm_comm_of(MPI_Comm c, const char *call);
/* The comm rank of world rank w in c, or -1. */
int pm_comm_rank_of(const pm_comm *c, int w);

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

/* The tags of collective messages say which call sent them: PM_TAG_BCAST of
 * its root for MPI_Bcast, PM_TAG_COLL for the others. A collective receive
 * matches by source alone (the calls on a communicator are ordered), then a
 * tag other than its own means the ranks' calls differ:
 * pm_coll_tag_mismatch ends the job naming both (the header carries the tag
 * anyway: no cost). */
#define PM_TAG_COLL 0
#define PM_TAG_BCAST(root) (1 + (root))
_Noreturn void pm_coll_tag_mismatch(int want, int got, int src_world);

/* Marks the start of an MPI call: its name for messages and the deadlock
 * diagnosis, and the layer's per-call cost. pm_leave ends it. */
void pm_enter(const char *call);
void pm_leave(void);
/* Charges `ps` to the rank's clock. */
void pm_charge(uint64_t ps);
/* Ends the job: "p2mpi: rank R: <call>: <message>", exit status 1. */
_Noreturn void pm_fatal(const char *fmt, ...) __attribute__((format(printf, 1, 2)));
/* Bytes of one element, and whether count elements are one contiguous run
 * starting at the buffer. */
size_t pm_type_size(MPI_Datatype t);
MPI_Aint pm_type_extent(MPI_Datatype t);
/* A buffer for count elements of t laid out as t says (true extent); free
 * with free(base). *shifted is the address to pass as the buffer. */
void *pm_type_buffer(MPI_Datatype t, int count, void **shifted);
/* Copies count elements of stype at src into rcount of rtype at dst (local). */
void pm_local_copy(const void *src, int scount, MPI_Datatype stype, void *dst, int rcount,
                   MPI_Datatype rtype);
/* Charges a local copy of n bytes (mpi_copy_gbps), as pm_local_copy does:
 * for collectives that move blocks with memcpy (Bruck's packing, rotations). */
void pm_charge_copy(size_t n);
/* Collective costs (params.def mpi_coll_*): MVAPICH2's software per
 * collective call, and per blocking point-to-point step inside one. */
void pm_coll_call_cost(void);
void pm_coll_step_cost(void);
/* A local reduction of n bytes on the host (host_reduce_gbps): MVAPICH2
 * reduces GPU-buffer collectives' data in host staging, on the CPU. */
void pm_charge_reduce(size_t n);
/* Whether buf lies in this node's GPU memory (cudaMalloc, tcaMalloc GPU). */
int pm_gpu_buf(const void *buf);
/* A synchronous staging copy of n bytes between a GPU buffer and host
 * memory, as MVAPICH2-GDR's collectives make them (README: GPU buffers in
 * collectives): GDRCopy up to mpi_gdrcopy_bytes, cudaMemcpy above. */
void pm_charge_stage_d2h(size_t n);
void pm_charge_stage_h2d(size_t n);
/* A cudaMemcpy within the GPU (the CUDA runtime's device-to-device cost). */
void pm_charge_d2d(size_t n);
/* MVAPICH2-GDR 2.x defaults (mv2 cuda parameters): staging buffers of this
 * size or more are registered (rdma_cuda_register_naive_buf); GPU
 * allgathers stage through host memory up to this block size and run on the
 * device buffers above it (rdma_cuda_allgather_naive_limit). */
#define MV2_REGISTER_NAIVE_BUF 524288u
#define MV2_ALLGATHER_NAIVE_LIMIT 1048576u
/* rdma_cuda_scatter_naive_limit (staged up to this many bytes per rank
 * times the communicator's size) and rdma_cuda_gather_naive_limit (staged
 * up to this many bytes divided by the size) */
#define MV2_SCATTER_NAIVE_LIMIT 2048u
#define MV2_GATHER_NAIVE_LIMIT 32768u
/* Collectives the layer itself needs (communicator creation). */
void pm_coll_barrier(pm_comm *c);
void pm_coll_allreduce_int_max(const int *mine, int *out, pm_comm *c);
void pm_coll_allgather_ints(const int *mine, int n, int *all, pm_comm *c);
extern int pm_world_rank, pm_world_size;
extern uint64_t pm_eager_bytes;

#endif /* P2MPI_H */
