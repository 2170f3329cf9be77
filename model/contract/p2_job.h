/*
 * p2_job.h - the layout of the job segment shared by p2run, the simulator
 * (p2sim) and the rank processes of one virtual-cluster job: part of the
 * contract every layer builds on. The code that creates, maps and moves
 * requests through it is emu/channel.h.
 *
 * One POSIX shared-memory object per job, "/p2-<jobid>-job", created by p2run;
 * the job id is p2run's pid and 64 random bits ("4711-9f86d081884c7d65"), so
 * that nobody can create a job's objects before it (and block every job).
 * It holds the job's configuration (filled by p2run and the simulator), the
 * simulator's doorbell, and one channel per rank:
 *
 *   rank -> simulator   a single-producer single-consumer ring of requests
 *                       (posted MMIO writes and PIO stores carry the rank's
 *                       virtual time; blocking requests carry it too)
 *   simulator -> rank   one response slot: the rank has at most one blocking
 *                       request outstanding, so one slot is enough
 *
 * Every field that two processes touch is accessed with the __atomic builtins
 * (the header is included from C11 and C++17, which spell _Atomic differently).
 *
 * Memory arenas (registered host memory and GPU memory of every node that runs a
 * rank) are separate shm objects, "/p2-<jobid>-n<node>-host" / "-gpu", created
 * by the simulator and mapped by the rank of that node (arena.c).
 * Every shm name of a job starts with "/p2-<jobid>-", so p2run removes all of
 * them by that prefix on every exit path.
 */
#ifndef P2_JOB_H
#define P2_JOB_H

#include <stddef.h>
#include <stdint.h>
#include <sys/types.h>

#include "p2_params.h"
#include "peach2_hw.h"

#ifdef __cplusplus
extern "C" {
#endif

/* ---- Runtime sizing (host-side mechanics, not model timing) -------------- */
#define P2_JOB_MAGIC 0x50324a4f42763134ULL /* "P2JOBv14" */
#define P2_JOB_MAX_RANKS P2_BUS_NODES      /* a mapping puts one rank per node */
#define P2_JOB_NAME_MAX 48                 /* "/p2-<jobid>" prefix of every shm name */
#define P2_CHAN_SLOTS 256                  /* requests a rank may have in flight */
/* Channels per rank: its own (lane 0, the thread that attached) and one per
 * further program thread that uses the libraries (rt_threads.c). */
#define P2_RANK_LANES 4
#define P2_CHAN_DATA_BYTES 448             /* PIO bytes carried by one request */
P2_STATIC_ASSERT(P2_CHAN_DATA_BYTES == (int)P2_MAX_PIO_STORE_BYTES, "a PIO store fits a request");

/* The latest virtual time a rank may reach (ps): about 53 days, far beyond
 * any job, and far enough below SystemC's 64-bit time (213 days at 1 ps)
 * that the model's own delays on top of it never wrap. A stamp or clock past
 * it comes from a broken or hostile rank. */
#define P2_CHAN_MAX_STAMP_PS (UINT64_C(1) << 62)

/* ---- Request operations ------------------------------------------------- */
/* Device requests name a device of the rank's node (`dev`, an index into the
 * job's device list) and one of its BARs (`bar`); `a` is the offset in that
 * BAR. The channel knows no device: what a BAR holds is the device's affair. */
typedef enum p2_chan_op {
    P2_CHAN_MMIO_WRITE = 1, /* posted: 64-bit store, a = offset, b = value */
    P2_CHAN_MMIO_READ = 2,  /* blocking: 64-bit load at offset a; answer value */
    P2_CHAN_BAR_WRITE = 3,  /* posted: CPU stores of len data bytes from offset a
                               (write-combined, in address order: PIO) */
    P2_CHAN_WAIT_REG = 4,   /* blocking: until (the register at offset a & mask c) == value b */
    /* 5 was WAIT_NOTIFY (notifications now arrive in a ring in host memory) */
    P2_CHAN_WAIT_MEM = 6,   /* blocking, no device: until (the 8-byte word at bus address a
                               of the node's memory & mask c) == value b;
                               flags P2_CHAN_WAIT_BLOCK, else a test */
    P2_CHAN_EXIT = 7,       /* posted: the rank is leaving at this stamp */
    P2_CHAN_GPU_REGISTER = 8,  /* blocking, no device: back [a, a + b) of the node's GPU
                                  window (offsets from its start) with real GPU memory;
                                  data holds a p2_chan_gpu_ipc (lib/cuda/README.md) */
    P2_CHAN_GPU_UNREGISTER = 9, /* blocking: end the range registered at window offset a
                                  (answered once the simulator closed its mapping, so
                                  that the rank may cudaFree the memory then) */
    P2_CHAN_UNPARK = 10,       /* posted, no device: lane a of this rank, parked for the
                                  b-th time (parked_seq), runs again from this stamp: the
                                  thread posting it woke that lane's thread */
    P2_CHAN_LOCK = 11,         /* blocking, no device: take the rank's lock a (0, the only
                                  one: the MPI layer's under MPI_THREAD_MULTIPLE), in (stamp,
                                  lane) order with the other lanes' requests; answered when
                                  it is this lane's, at that simulated time */
    P2_CHAN_UNLOCK = 12        /* posted, no device: give the rank's lock a back at this
                                  stamp; the next lane waiting for it gets it then */
} p2_chan_op;

/* P2_CHAN_GPU_REGISTER's data: the CUDA IPC handle of the allocation
 * (cudaIpcMemHandle_t / CUipcMemHandle bytes), where the range starts in it,
 * and the CUDA device ordinal the rank sees it on. */
typedef struct p2_chan_gpu_ipc {
    uint8_t handle[64];
    uint64_t alloc_offset;
    int32_t ordinal;
    uint32_t reserved;
} p2_chan_gpu_ipc;

/* Devices a node may have (the topology's `device` lines), each named by a
 * short word the library asks for ("peach2"). */
#define P2_JOB_MAX_DEVICES 4
#define P2_DEVICE_NAME_MAX 16
#define P2_JOB_NO_NETWORK 0xffu /* p2_job.device_network: no such node */

/* p2_chan_req.flags of WAIT_MEM: wait until the condition holds; without it,
 * a test answered at the request's stamp (OK or NOT_YET). With
 * P2_CHAN_WAIT_DEADLINE as well, data holds a uint64_t simulated time (ps):
 * if the condition still fails then, the answer is NOT_YET at that time (a
 * CPU that polls both a completion queue and a timer, e.g. a GPU copy's
 * event). */
#define P2_CHAN_WAIT_BLOCK 1u
#define P2_CHAN_WAIT_DEADLINE 2u
/* With P2_CHAN_WAIT_ALSO as well, the wait also ends when a second word, in
 * any rank's node memory, meets its condition (p2_chan_wait_data), and the
 * answer's value is then 1 (else 0). A CPU that polls its completion queue
 * and, between polls, retries something only another rank's write can let
 * succeed (a one-sided lock word): the retries are one wait, which a
 * deadlock can be seen in, not traffic that moves time forever. */
#define P2_CHAN_WAIT_ALSO 4u

/* The payload of a WAIT_MEM with P2_CHAN_WAIT_DEADLINE or P2_CHAN_WAIT_ALSO. */
typedef struct p2_chan_wait_data {
    uint64_t deadline_ps;           /* P2_CHAN_WAIT_DEADLINE */
    uint64_t also_a, also_b, also_c; /* P2_CHAN_WAIT_ALSO: bus address, value, mask */
    uint32_t also_rank;             /* ... in the memory of this rank's node */
    uint32_t reserved;
} p2_chan_wait_data;

static inline int p2_chan_op_blocks(uint32_t op)
{
    return op == P2_CHAN_MMIO_READ || op == P2_CHAN_WAIT_REG || op == P2_CHAN_WAIT_MEM ||
           op == P2_CHAN_GPU_REGISTER || op == P2_CHAN_GPU_UNREGISTER || op == P2_CHAN_LOCK;
}

typedef struct p2_chan_req {
    uint32_t op;        /* p2_chan_op */
    uint32_t len;       /* PIO: bytes in data */
    uint32_t seq;       /* blocking: echoed in the response */
    uint16_t flags;     /* WAIT_MEM: P2_CHAN_WAIT_* */
    uint8_t dev;        /* device requests: index in p2_job.device */
    uint8_t bar;        /* device requests: the BAR `a` is an offset in */
    uint64_t stamp_ps;  /* the rank's virtual time when it issued this */
    uint64_t a, b, c;
    uint8_t data[P2_CHAN_DATA_BYTES];
} p2_chan_req;
P2_STATIC_ASSERT(sizeof(p2_chan_req) == 48 + P2_CHAN_DATA_BYTES, "request layout");
P2_STATIC_ASSERT(sizeof(p2_chan_gpu_ipc) <= P2_CHAN_DATA_BYTES, "GPU registration fits a request");
P2_STATIC_ASSERT(sizeof(p2_chan_wait_data) <= P2_CHAN_DATA_BYTES, "a wait's payload fits a request");

/* Response status (the values of the library's p2_wait_result). */
typedef enum p2_chan_status {
    P2_CHAN_OK = 0,      /* the condition holds */
    P2_CHAN_NOT_YET = 1, /* a test found the condition false */
    P2_CHAN_FAILED = -1  /* a bad request, or the read completed with an error */
} p2_chan_status;

typedef struct p2_chan_resp {
    uint32_t seq;      /* futex word: the simulator stores the request's seq last */
    int32_t status;
    uint64_t value;    /* MMIO read: the register's value */
    uint64_t time_ps;  /* simulated time at which the answer became true */
} p2_chan_resp;

/* Rank life cycle as seen in the segment (a thread lane's too: NEW a lane
 * never taken, EXITING a thread that ended; the runtime takes such a lane
 * again at once, its EXIT run or not: requests after an EXIT on a lane's
 * ring are the next thread's). */
typedef enum p2_rank_state {
    P2_RANK_NEW = 0,      /* not attached yet */
    P2_RANK_ATTACHED = 1, /* channel in use */
    P2_RANK_EXITING = 2   /* sent P2_CHAN_EXIT */
} p2_rank_state;

/* The published clock of a running rank that has not told the simulator yet:
 * no bound beyond its last request's stamp. */
#define P2_CLOCK_UNKNOWN INT64_MIN

typedef struct p2_job_rank {
    /* written by the rank */
    uint64_t req_head;          /* requests pushed */
    int64_t clock_pub;          /* model clock: the rank's clock after its last
                                   call; cpu clock: clock minus its CPU time (ps) */
    int32_t pid;
    uint32_t state;             /* p2_rank_state */
    uint32_t producer_sleeping; /* the ring was full and the rank sleeps on req_tail */
    uint32_t resp_sleeping;     /* the rank sleeps on resp.seq */
    int64_t clock_floor;        /* written from outside the runtime: the rank's clock
                                   is at least this; the runtime adopts it when the
                                   program next calls it (unused by the MPI layer) */
    int32_t tid;                /* the lane's thread, whose CPU time --clock=cpu counts
                                   (never a thread of the libraries it uses) */
    uint32_t in_collective;     /* the MPI layer: 1 while the rank is inside Open MPI's
                                   own MPI_Finalize, a collective over every rank */
    char mpi_call[16];          /* ... which one ("MPI_Barrier"), for messages */
    char mpi_wait[80];          /* the MPI layer: the call the rank is blocked in and what
                                   it waits for ("MPI_Recv from rank 5 tag 7"), or "" */
    uint64_t mpi_since_ps;      /* ... since this time on the rank's clock */
    uint32_t parked_seq;        /* times the lane's thread parked: it sleeps until another
                                   thread of the rank wakes it (pthread_cond_wait,
                                   pthread_join) and sends nothing until a P2_CHAN_UNPARK
                                   naming this count has run */
    uint32_t lane_claims;       /* a thread lane: times a thread took it */
    /* The program's own work outside the libraries, as the lane's threads
     * measured it (lib/src/rt/rt_meter.c): reported at the job's end and in
     * the stall diagnosis, never believed for anything simulated */
    uint64_t program_cpu_ns;    /* host CPU time spent there, summed over the lane's threads */
    uint64_t program_instr;     /* --clock instructions: user-mode instructions retired there */
    int64_t left_cpu_ns;        /* the thread's CPU time when it last left the libraries
                                   (-1 while inside them) */
    char last_call[24];         /* the library call its thread entered last ("MPI_Recv"),
                                   "" when the call has no name */
    /* written by the simulator */
    uint64_t req_tail;          /* requests consumed; futex on its low word */
    p2_chan_resp resp;
    uint8_t pad1[32];
    /* written by p2run */
    uint32_t reaped;            /* the process is gone (p2run waited for it) */
    int32_t wait_status;        /* its waitpid status */
    uint8_t pad2[56];
    p2_chan_req ring[P2_CHAN_SLOTS];
} p2_job_rank;

typedef enum p2_sim_state {
    P2_SIM_STARTING = 0,
    P2_SIM_READY = 1, /* arenas exist and the rank parameters below are valid */
    P2_SIM_ENDED = 2  /* the simulator is gone or going: ranks must not wait */
} p2_sim_state;

/* What moves a rank's clock besides the modelled costs (emu/README.md,
 * "Clocks"): nothing (model), the program's CPU time (cpu), or its retired
 * user-mode instructions at instructions_per_ns (instructions). */
typedef enum p2_clock_mode {
    P2_CLOCK_MODEL = 0,
    P2_CLOCK_CPU = 1,
    P2_CLOCK_INSTRUCTIONS = 2
} p2_clock_mode;

typedef struct p2_job {
    /* written by p2run before anyone else starts */
    uint64_t magic;
    uint64_t segment_bytes;
    char name[P2_JOB_NAME_MAX]; /* "/p2-<jobid>": prefix of every shm name */
    uint32_t nranks;
    uint32_t clock_mode;        /* p2_clock_mode */
    int32_t launcher_pid;       /* p2run */
    uint32_t shutdown;          /* p2run: every rank is gone; finish */
    int32_t sim_verdict;        /* the simulator's exit status, stored before it
                                   exits (a deadlock outranks the ranks it fails) */
    uint32_t reserved0;

    /* written by the simulator before it sets sim_state = READY */
    uint32_t sim_state;         /* p2_sim_state; futex for ranks waiting to attach */
    int32_t sim_pid;
    uint32_t nnodes;
    uint32_t ndevices;          /* devices every node has, in topology order */
    char device[P2_JOB_MAX_DEVICES][P2_DEVICE_NAME_MAX]; /* their kinds */
    uint32_t rank_node[P2_JOB_MAX_RANKS];
    uint64_t host_bytes, gpu_bytes; /* arena sizes per node */
    /* The RANK-scope parameters (params.def), as the parameter file set
     * them: what the rank-side layers charge to a rank's clock */
    p2_rank_params rank_params;
    /* Derived from the model's parameters, for the collectives' cost model:
     * the path's rates in bytes per second (a link's payload rate with
     * MPS-sized TLPs, host_read_gbps, gpu_read_gbps) */
    double link_payload_Bps, host_read_Bps, gpu_read_Bps;
    /* The network's routes, for the collectives' cost model: route_port[n][d]
     * is the port (p2_port) a packet for node d leaves node n by (N at d
     * itself; 255: no route), port_peer[n][port] the node that port is
     * cabled to (255: none) */
    uint8_t route_port[P2_JOB_MAX_RANKS][P2_JOB_MAX_RANKS];
    uint8_t port_peer[P2_JOB_MAX_RANKS][4];
    /* Which network of each device each node is on: device_network[d][n],
     * numbered 0.. in the order of each network's lowest node. Several only
     * for PEACH2, whose topology may cable sub-clusters that are not joined
     * (topologies/README.md, `networks`); P2_JOB_NO_NETWORK past the nodes */
    uint8_t device_network[P2_JOB_MAX_DEVICES][P2_JOB_MAX_RANKS];
    /* the simulator's doorbell: rings after every push, attach and exit */
    uint32_t doorbell;
    uint32_t sim_sleeping;
    uint8_t pad[56];

    uint64_t sim_now_ps;        /* the simulator: the model's time, for a thread that
                                   wakes outside simulated causality (rt_lanes.c) */
    uint32_t lanes_taken;       /* the ranks: thread lanes taken so far (the simulator
                                   looks for new ones only when this moves) */
    uint32_t reserved1;

    /* nranks channels of the ranks themselves, then for each rank its
     * P2_RANK_LANES - 1 thread lanes (p2_job_lane) */
    p2_job_rank ranks[];
} p2_job;

static inline size_t p2_job_bytes(unsigned nranks)
{
    return sizeof(p2_job) + (size_t)nranks * P2_RANK_LANES * sizeof(p2_job_rank);
}

/* Channel `lane` of rank `rank` (lane 0: the rank's own, job->ranks[rank]). */
static inline p2_job_rank *p2_job_lane(p2_job *job, unsigned rank, unsigned lane)
{
    return lane == 0 ? &job->ranks[rank]
                     : &job->ranks[job->nranks + rank * (P2_RANK_LANES - 1) + (lane - 1)];
}

/* ---- Shared-memory access helpers --------------------------------------- */
#define p2_ld(p) __atomic_load_n((p), __ATOMIC_ACQUIRE)
#define p2_st(p, v) __atomic_store_n((p), (v), __ATOMIC_RELEASE)
#define p2_ld_sc(p) __atomic_load_n((p), __ATOMIC_SEQ_CST)
#define p2_st_sc(p, v) __atomic_store_n((p), (v), __ATOMIC_SEQ_CST)

/* Request `index` of a channel (the consumer keeps its own count: see
 * p2_chan_consumed, emu/channel.h). The rank may still scribble on the slot,
 * so read each field once. */
static inline const p2_chan_req *p2_chan_slot(const p2_job_rank *r, uint64_t index)
{
    return &r->ring[index % P2_CHAN_SLOTS];
}

#ifdef __cplusplus
}
#endif

#endif /* P2_JOB_H */
