/*
 * rt.h - the rank runtime: what every layer of a rank process shares (the
 * TCA library, the collectives, the device backends, FMPL, the MPI layer and
 * the emulated CUDA runtime): the rank's identity, its node's memory, the virtual clock with
 * the charging of modelled costs, and the channel to the simulator. One per
 * process; device-agnostic.
 *
 * Under p2run the clock is virtual (picoseconds): posted requests carry it,
 * blocking ones return at the simulated time of their answer. Costs charged
 * here are the RANK-scope parameters of params.def (model/contract), handed
 * over by the simulator at start. Without p2run there is no runtime: p2_rt_get()
 * returns NULL and p2_rt_wtime() reads the host's monotonic clock.
 *
 * Thread safety: the channel has one producer, so every exchange with the
 * simulator happens between p2_rt_enter and p2_rt_leave, which serialise
 * the threads of the process.
 */
#ifndef P2_RT_H
#define P2_RT_H

#include <pthread.h>
#include <stddef.h>
#include <stdint.h>
#include <sys/time.h>
#include <time.h>

#include "p2_job.h"

#ifdef __cplusplus
extern "C" {
#endif

/* Node memory a device may read and write: `base` in this process, `bus` the
 * bus address of base in the cluster's address map. */
typedef struct p2_rt_memory {
    uint8_t *base;
    uint64_t size;
    uint64_t bus;
} p2_rt_memory;

typedef struct p2_rt {
    int rank, size;          /* this process and the job */
    unsigned node, nnodes;   /* this rank's node and the cluster */
    p2_rt_memory host, gpu;  /* the node's registered host memory and GPU memory */
    unsigned ndevices;       /* devices every node has, as the topology lists them */
    const char *device[P2_JOB_MAX_DEVICES];
    /* The RANK-scope parameters of params.def (p2_params.h), as the
     * simulator handed them over, in the rows' units: each layer reads its
     * own (p2_ns_ps, p2_gbps_Bps convert) */
    p2_rank_params prm;
    /* The path's rates from the model's parameters, for cost models */
    double link_payload_Bps, host_read_Bps, gpu_read_Bps;
    /* The network's routes (channel.h: route_port, port_peer) and where
     * each rank runs, for cost models; NULL without p2run */
    const uint8_t (*route_port)[P2_JOB_MAX_RANKS];
    const uint8_t (*port_peer)[4];
    const uint32_t *rank_node;
    /* The MPI layer's share of host memory: the top mpi_host_bytes of
     * `host`, which tcaMalloc leaves alone (0 when host memory is too small
     * to give any) */
    uint64_t mpi_share_bytes;
    p2_job *job;             /* the job segment (ranks' nodes, diagnosis fields) */
    /* which library drives device d's queues (dev.h, p2_device_holder) */
    const char *holder[P2_JOB_MAX_DEVICES];
} p2_rt;

/* The runtime of this process, attached on first use; NULL (a message on
 * stderr, once) when the process was not started by p2run. */
p2_rt *p2_rt_get(void);
/* The runtime if this process has attached, or may attach now (NULL while
 * nothing of the program needs it: see rt_process.c). For calls a program
 * makes without meaning the runtime, its clocks. */
p2_rt *p2_rt_get_if_attached(void);

/* The node rank `rank` of the job runs on (the launcher's placement, which
 * every rank sees alike); -1 for a rank outside 0 .. size-1. */
int p2_rt_rank_node(const p2_rt *rt, int rank);

/* Seconds on the rank's clock (the host's monotonic clock without p2run). */
double p2_rt_wtime(void);
/* Charges `seconds` of modelled computation to the rank's clock. */
void p2_rt_compute(double seconds);

/* ---- For device backends and interposed runtimes ---------------------------
 * Between p2_rt_enter and p2_rt_leave the process holds the channel; enter
 * first adds (under --clock=cpu) the program's CPU time since it last left
 * the library. */
void p2_rt_enter(p2_rt *rt);
void p2_rt_leave(p2_rt *rt);
uint64_t p2_rt_clock_ps(const p2_rt *rt);
void p2_rt_charge_ps(p2_rt *rt, uint64_t ps);
/* Posts a request stamped with the rank's clock. Returns 0, or -1 once the
 * simulator is gone (then every later call fails too). */
int p2_rt_post(p2_rt *rt, p2_chan_req *req);
/* Posts a blocking request and waits for its answer; the clock is left as it
 * was (the caller decides what the answer's time costs). Returns 0 or -1. */
int p2_rt_call(p2_rt *rt, p2_chan_req *req, p2_chan_resp *resp);
/* The channel of the calling thread's lane (emu/channel.h; a thread that has
 * none takes one, as any call does), for a layer that names in its fields
 * what the thread waits for (the MPI layer: p2_job_rank.mpi_wait); NULL when
 * no lane is free. */
p2_job_rank *p2_rt_lane_channel(p2_rt *rt);
/* The rank's threads that have a lane (the thread that attached included):
 * for a layer that serves one thread at less cost than several (the MPI
 * layer under MPI_THREAD_MULTIPLE). A thread the program creates has its
 * lane before pthread_create returns; another takes one at its first call. */
int p2_rt_lanes_used(p2_rt *rt);
/* The calling thread is about to sleep until another thread of the rank
 * lets it go, in a wait no interposed call sees (a layer's own lock): from
 * p2_rt_sleep_begin to p2_rt_sleep_end its lane is parked and holds no
 * simulated time back; after, the thread runs no earlier than the model's
 * time (nobody's wake orders it: host timing decides). No-ops for a thread
 * without a lane (it holds no time). */
void p2_rt_sleep_begin(void);
void p2_rt_sleep_end(void);
/* The runtime's pthread interposers (lib/src/rt/rt_threads.c: lanes for the
 * program's threads, parking in pthread_cond_wait and pthread_join), with
 * the address the call came from, which says whether it is the program's:
 * for a preloaded layer that puts them ahead of the C library's in a
 * program that does not link this library (the MPI layer, under
 * MPI_THREAD_MULTIPLE). */
int p2_rt_pthread_create(pthread_t *t, const pthread_attr_t *attr, void *(*fn)(void *), void *arg,
                         const void *caller);
int p2_rt_pthread_join(pthread_t t, void **ret, const void *caller);
int p2_rt_pthread_cond_wait(pthread_cond_t *c, pthread_mutex_t *m, const void *caller);
int p2_rt_pthread_cond_wake(pthread_cond_t *c, int all);
/* Rings the simulator's doorbell: for a layer that changed a field of its
 * channel the simulator watches (p2_job_rank.in_collective), outside a request. */
void p2_rt_ring(p2_rt *rt);
/* Moves the clock forward to t_ps (never back). */
void p2_rt_advance_to(p2_rt *rt, uint64_t t_ps);

/* A wait for memory of this node: until (*addr & mask) == value, the clock
 * then at the simulated time it became true plus the polling delay. With
 * block == 0, a test at the rank's time. `addr` must lie in rt->host or
 * rt->gpu. Returns P2_CHAN_OK, P2_CHAN_NOT_YET or P2_CHAN_FAILED. */
int p2_rt_wait_mem(p2_rt *rt, const volatile uint64_t *addr, uint64_t mask, uint64_t value,
                   int block);

/* A blocking wait as p2_rt_wait_mem's that gives up at simulated time
 * deadline_ps: P2_CHAN_OK (the clock at the write plus the polling delay) or
 * P2_CHAN_NOT_YET (the clock at the deadline plus the polling delay; at once
 * if the clock has passed it), or P2_CHAN_FAILED. For a layer that polls a
 * completion queue while work of its own (a GPU copy) finishes at a known
 * time. */
int p2_rt_wait_mem_until(p2_rt *rt, const volatile uint64_t *addr, uint64_t mask, uint64_t value,
                         uint64_t deadline_ps);

/* A word in some rank's node memory, and the condition (word & mask) == value
 * on it. */
typedef struct p2_rt_word {
    int rank;
    uint64_t bus, mask, value;
} p2_rt_word;

/* A blocking wait as p2_rt_wait_mem_until's (deadline_ps UINT64_MAX: none)
 * that also ends when *also holds, at the simulated time it was written so;
 * *also_met says which ended it. For a layer that retries an operation only
 * another rank's write can let succeed (a one-sided lock), while it keeps
 * polling its completion queue: the retries become one wait, so that a lock
 * nobody will give back is a deadlock, not traffic that moves time for ever. */
int p2_rt_wait_mem_also(p2_rt *rt, const volatile uint64_t *addr, uint64_t mask, uint64_t value,
                        const p2_rt_word *also, uint64_t deadline_ps, int *also_met);

/* The public calls of the libraries (tca*, p2_*) bracket themselves with
 * these, so that under --clock=cpu only the program's CPU time between calls
 * reaches its clock, never the emulation's own work inside them. Nestable;
 * no-ops without a runtime. */
void p2_rt_api_begin(void);
void p2_rt_api_end(void);
/* p2_rt_api_begin naming the call, for the diagnosis of a job that stalls
 * ("rank 1: running since it left MPI_Recv at ..."). */
void p2_rt_api_begin_call(const char *call);

/* ---- The program's reads of the clock ----------------------------------------
 * A read of the rank's clock by the program (MPI_Wtime, gettimeofday...):
 * returns the clock (ps). Under --clock=model (and =instructions), from the
 * third read in a run of reads with no modelled work between them, cost_ps
 * is charged after the read, so a loop that waits for the clock to move by
 * reading it ends (mpi/README.md, "MPI_Wtime"). */
uint64_t p2_rt_read_clock(p2_rt *rt, uint64_t cost_ps);

/* The C library's clocks as the program sees them (rt_time.c): calls from
 * the program's own code (`caller`, the call's return address, in the
 * executable or a library outside the system's directories) read the rank's
 * virtual clock under --clock=model and =instructions; every other call gets
 * the host's. For interposers of these calls (the MPI layer, preloaded, has
 * its own that hand them here). */
int p2_rt_clock_gettime(clockid_t id, struct timespec *ts, const void *caller);
int p2_rt_gettimeofday(struct timeval *tv, void *tz, const void *caller);
time_t p2_rt_time(time_t *t, const void *caller);
int p2_rt_timespec_get(struct timespec *ts, int base, const void *caller);

#ifdef __cplusplus
}
#endif

#endif /* P2_RT_H */
