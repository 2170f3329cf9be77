/*
 * dev_emu.c - the device interface served by the simulator of a p2run job.
 *
 * The rank keeps its own virtual clock (picoseconds). Every device call costs
 * lib_call_ns; an MMIO store cpu_mmio_write_ns; a PIO store of pio_store_bytes
 * pio_store_ns; a wait ends poll_detect_ns after the simulated time at which
 * its condition became true. Those RANK-scope parameters come from the
 * simulator through the job segment. With --clock=cpu the CPU time the process
 * consumed between calls is added as well.
 *
 * Posted requests (MMIO stores, PIO stores) carry the clock and return at once;
 * blocking ones (register reads, waits, tests) return when the simulator has
 * answered, and the clock jumps to the answer's time. wtime and compute are
 * clock operations, not device calls: they cost nothing.
 *
 * The channel has one producer, so calls from several threads are serialised.
 */
#define _GNU_SOURCE
#include "dev_emu.h"

#include <errno.h>
#include <limits.h>
#include <pthread.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <time.h>
#include <unistd.h>

#include "arena.h"
#include "channel.h"

_Static_assert(P2_CHAN_OK == (int)P2_WAIT_OK && P2_CHAN_NOT_YET == (int)P2_WAIT_NOT_YET &&
                   P2_CHAN_FAILED == (int)P2_WAIT_FAILED,
               "channel statuses are the device interface's wait results");

typedef struct emu_rank {
    pthread_mutex_t lock;
    p2_job *job;
    p2_job_rank *channel;
    int rank, size;
    unsigned node, nnodes;
    p2_arena host, gpu;
    p2_clock_mode clock_mode;
    uint64_t clock_ps;   /* this rank's virtual clock */
    int64_t cpu_mark_ps; /* --clock=cpu: process CPU time at the end of the last call */
    uint32_t seq;        /* of the last blocking request */
    uint64_t lib_call_ps, mmio_write_ps, pio_store_ps, pio_store_bytes, poll_detect_ps;
    int attached, failed, exited;
} emu_rank;

/* One channel per process: the rank's identity in the job. */
static emu_rank emu = {.lock = PTHREAD_MUTEX_INITIALIZER};
static pthread_once_t emu_once = PTHREAD_ONCE_INIT;

/* ---- Clock ---------------------------------------------------------------- */

static int64_t cpu_now_ps(void)
{
    struct timespec ts;
    clock_gettime(CLOCK_PROCESS_CPUTIME_ID, &ts);
    return (int64_t)ts.tv_sec * 1000000000000LL + (int64_t)ts.tv_nsec * 1000LL;
}

/* Entering a call: with --clock=cpu, the CPU time used since the last call. */
static void emu_enter(emu_rank *e)
{
    pthread_mutex_lock(&e->lock);
    if (e->clock_mode == P2_CLOCK_CPU) {
        int64_t now = cpu_now_ps();
        if (now > e->cpu_mark_ps)
            e->clock_ps += (uint64_t)(now - e->cpu_mark_ps);
        e->cpu_mark_ps = now;
    }
}

/* Leaving a call: publish the clock, so the simulator may run up to it (with
 * --clock=cpu, publish clock minus CPU time: the simulator adds the CPU time
 * the rank goes on to use, read from the rank's CPU-time clock). Time spent
 * inside the call (waiting for an answer) is not the program's. */
static void emu_leave(emu_rank *e)
{
    if (e->attached && !e->failed) {
        if (e->clock_mode == P2_CLOCK_CPU) {
            e->cpu_mark_ps = cpu_now_ps();
            p2_st_sc(&e->channel->clock_pub, (int64_t)e->clock_ps - e->cpu_mark_ps);
        } else {
            p2_st_sc(&e->channel->clock_pub, (int64_t)e->clock_ps);
        }
    }
    pthread_mutex_unlock(&e->lock);
}

static void emu_fail(emu_rank *e)
{
    if (!e->failed)
        fprintf(stderr, "p2: rank %d: the simulator is gone; device calls fail from now on\n",
                e->rank);
    e->failed = 1;
}

static int emu_push(emu_rank *e, p2_chan_req *req)
{
    if (e->failed || e->exited)
        return -1;
    req->stamp_ps = e->clock_ps;
    if (p2_chan_push(e->job, e->channel, req) != 0) {
        emu_fail(e);
        return -1;
    }
    return 0;
}

/* Sends a blocking request and waits for its answer. Returns 0 or -1. */
static int emu_call(emu_rank *e, p2_chan_req *req, p2_chan_resp *resp)
{
    if (++e->seq == 0)
        e->seq = 1; /* 0 is the response slot's initial value */
    req->seq = e->seq;
    if (emu_push(e, req) != 0)
        return -1;
    if (p2_chan_wait_resp(e->job, e->channel, req->seq, resp) != 0) {
        emu_fail(e);
        return -1;
    }
    return 0;
}

/* ---- Operations --------------------------------------------------------- */

static void emu_close(p2_dev *dev)
{
    (void)dev; /* the channel belongs to the process and closes at exit */
}

static void emu_mmio_write(p2_dev *dev, uint64_t reg, uint64_t value)
{
    emu_rank *e = dev->priv;
    emu_enter(e);
    /* The store leaves the CPU once posted. */
    e->clock_ps += e->lib_call_ps + e->mmio_write_ps;
    p2_chan_req req = {.op = P2_CHAN_MMIO_WRITE, .a = reg, .b = value};
    emu_push(e, &req);
    emu_leave(e);
}

static uint64_t emu_mmio_read(p2_dev *dev, uint64_t reg)
{
    emu_rank *e = dev->priv;
    emu_enter(e);
    e->clock_ps += e->lib_call_ps;
    p2_chan_req req = {.op = P2_CHAN_MMIO_READ, .a = reg};
    p2_chan_resp resp;
    uint64_t value = ~0ull; /* what a read of a dead device returns */
    if (emu_call(e, &req, &resp) == 0) {
        if (resp.time_ps > e->clock_ps)
            e->clock_ps = resp.time_ps;
        if (resp.status == P2_WAIT_OK)
            value = resp.value;
    }
    emu_leave(e);
    return value;
}

static void emu_pio_write(p2_dev *dev, uint64_t pio_offset, const void *src, size_t len)
{
    emu_rank *e = dev->priv;
    emu_enter(e);
    e->clock_ps += e->lib_call_ps;
    const uint8_t *bytes = src;
    /* One request per P2_CHAN_DATA_BYTES, cut at store boundaries; each is
     * stamped when its first store issues, and the stores follow pio_store_ns
     * apart (the host model paces them the same way). */
    size_t chunk_max = P2_CHAN_DATA_BYTES - P2_CHAN_DATA_BYTES % e->pio_store_bytes;
    while (len > 0) {
        size_t n = len < chunk_max ? len : chunk_max;
        p2_chan_req req = {.op = P2_CHAN_PIO, .len = (uint32_t)n, .a = pio_offset};
        memcpy(req.data, bytes, n);
        if (emu_push(e, &req) != 0)
            break;
        e->clock_ps += (n + e->pio_store_bytes - 1) / e->pio_store_bytes * e->pio_store_ps;
        bytes += n;
        pio_offset += n;
        len -= n;
    }
    emu_leave(e);
}

static void emu_pio_commit(p2_dev *dev)
{
    emu_rank *e = dev->priv;
    emu_enter(e);
    /* Stores reach the simulator in issue order already: nothing to flush. */
    e->clock_ps += e->lib_call_ps;
    emu_leave(e);
}

/* A wait or test: the clock moves to the answer plus the polling delay. */
static p2_wait_result emu_wait(emu_rank *e, p2_chan_req *req)
{
    emu_enter(e);
    e->clock_ps += e->lib_call_ps;
    p2_chan_resp resp;
    p2_wait_result result = P2_WAIT_FAILED;
    if (emu_call(e, req, &resp) == 0) {
        result = (p2_wait_result)resp.status;
        if (result != P2_WAIT_FAILED && resp.time_ps + e->poll_detect_ps > e->clock_ps)
            e->clock_ps = resp.time_ps + e->poll_detect_ps;
    }
    emu_leave(e);
    return result;
}

static p2_wait_result emu_wait_reg(p2_dev *dev, uint64_t reg, uint64_t mask, uint64_t value)
{
    p2_chan_req req = {.op = P2_CHAN_WAIT_REG, .a = reg, .b = value, .c = mask};
    return emu_wait(dev->priv, &req);
}

static p2_wait_result emu_wait_mem(p2_dev *dev, const volatile uint64_t *addr, uint64_t mask,
                                   uint64_t value, int block)
{
    emu_rank *e = dev->priv;
    const uint8_t *p = (const uint8_t *)addr;
    uint64_t pcie;
    if (e->host.base && p >= e->host.base && p + 8 <= e->host.base + e->host.size)
        pcie = p2_node_base(e->node) + P2_HOST_OFFSET + (uint64_t)(p - e->host.base);
    else if (e->gpu.base && p >= e->gpu.base && p + 8 <= e->gpu.base + e->gpu.size)
        pcie = p2_node_base(e->node) + P2_GPU_OFFSET + (uint64_t)(p - e->gpu.base);
    else {
        fprintf(stderr, "p2: rank %d: wait on %p, which is not in this rank's registered "
                        "host or GPU memory\n", e->rank, (const void *)p);
        return P2_WAIT_FAILED;
    }
    /* Even a test goes to the simulator: whether the word holds the value at
     * this rank's simulated time is the model's to say, not this process's
     * view of the shared arena (which may be ahead of or behind that time). */
    p2_chan_req req = {.op = P2_CHAN_WAIT_MEM, .flags = block ? P2_CHAN_WAIT_BLOCK : 0,
                       .a = pcie, .b = value, .c = mask};
    return emu_wait(e, &req);
}

static double emu_wtime(p2_dev *dev)
{
    emu_rank *e = dev->priv;
    emu_enter(e);
    double t = (double)e->clock_ps * 1e-12;
    emu_leave(e);
    return t;
}

static void emu_compute(p2_dev *dev, double seconds)
{
    emu_rank *e = dev->priv;
    emu_enter(e);
    if (seconds > 0)
        e->clock_ps += (uint64_t)(seconds * 1e12 + 0.5); /* nearest ps */
    emu_leave(e);
}

static const p2_dev_ops emu_ops = {
    .name = "emu",
    .close = emu_close,
    .mmio_write = emu_mmio_write,
    .mmio_read = emu_mmio_read,
    .pio_write = emu_pio_write,
    .pio_commit = emu_pio_commit,
    .wait_reg = emu_wait_reg,
    .wait_mem = emu_wait_mem,
    .wtime = emu_wtime,
    .compute = emu_compute,
};

/* ---- Attaching ------------------------------------------------------------ */

/* Tells the simulator this rank is leaving, at its final clock, so that it
 * stops waiting for it. A rank that dies without this is noticed by p2run. */
static void emu_at_exit(void)
{
    emu_rank *e = &emu;
    /* Another thread may be blocked inside a call, holding the lock: then
     * leave without the message (p2run reports the process gone instead)
     * rather than hang in exit. */
    if (pthread_mutex_trylock(&e->lock) != 0)
        return;
    if (e->attached && !e->failed && !e->exited) {
        if (e->clock_mode == P2_CLOCK_CPU) {
            int64_t now = cpu_now_ps();
            if (now > e->cpu_mark_ps)
                e->clock_ps += (uint64_t)(now - e->cpu_mark_ps);
        }
        p2_chan_req req = {.op = P2_CHAN_EXIT};
        emu_push(e, &req);
        e->exited = 1;
        p2_st_sc(&e->channel->state, (uint32_t)P2_RANK_EXITING);
    }
    pthread_mutex_unlock(&e->lock);
}

/* This process's rank: p2run sets P2_RANK; under mpirun, Open MPI's variables. */
static int emu_rank_from_env(int nranks, char *err, size_t errlen)
{
    static const char *const vars[] = {"P2_RANK", "OMPI_COMM_WORLD_RANK", "PMI_RANK",
                                       "PMIX_RANK"};
    for (size_t i = 0; i < sizeof vars / sizeof vars[0]; i++) {
        const char *v = getenv(vars[i]);
        if (!v || !*v)
            continue;
        char *end;
        errno = 0;
        long r = strtol(v, &end, 10);
        if (errno || *end || r < 0 || r >= nranks) {
            snprintf(err, errlen, "%s=%s is not a rank of this %d-rank job", vars[i], v, nranks);
            return -1;
        }
        const char *size = getenv("OMPI_COMM_WORLD_SIZE");
        if (i == 1 && size && atoi(size) != nranks) {
            snprintf(err, errlen, "mpirun started %s ranks but p2run -n says %d", size, nranks);
            return -1;
        }
        return (int)r;
    }
    snprintf(err, errlen, "cannot tell this process's rank (no P2_RANK or OMPI_COMM_WORLD_RANK)");
    return -1;
}

static int emu_attach(emu_rank *e, char *err, size_t errlen)
{
    const char *name = getenv("P2_JOB");
    p2_job *job = p2_job_attach(name, err, errlen);
    if (!job)
        return -1;
    int rank = emu_rank_from_env((int)job->nranks, err, errlen);
    if (rank < 0) {
        p2_job_detach(job);
        return -1;
    }
    /* The simulator publishes the mapping and the costs before it is ready. */
    uint32_t state;
    while ((state = p2_ld_sc(&job->sim_state)) == P2_SIM_STARTING)
        p2_futex_wait(&job->sim_state, P2_SIM_STARTING, P2_CHAN_LIVENESS_US);
    if (state != P2_SIM_READY) {
        snprintf(err, errlen, "the simulator ended before rank %d could attach", rank);
        p2_job_detach(job);
        return -1;
    }
    p2_job_rank *ch = &job->ranks[rank];
    int32_t expected = 0;
    if (!__atomic_compare_exchange_n(&ch->pid, &expected, (int32_t)getpid(), 0, __ATOMIC_SEQ_CST,
                                     __ATOMIC_SEQ_CST)) {
        snprintf(err, errlen, "rank %d is already attached (pid %d)", rank, (int)expected);
        p2_job_detach(job);
        return -1;
    }
    e->node = job->rank_node[rank];
    if (p2_arena_map(job->name, e->node, P2_ARENA_HOST, job->host_bytes, &e->host, err,
                     errlen) != 0 ||
        p2_arena_map(job->name, e->node, P2_ARENA_GPU, job->gpu_bytes, &e->gpu, err, errlen) !=
            0) {
        p2_arena_unmap(&e->host);
        p2_job_detach(job);
        return -1;
    }
    e->job = job;
    e->channel = ch;
    e->rank = rank;
    e->size = (int)job->nranks;
    e->nnodes = job->nnodes;
    e->clock_mode = (p2_clock_mode)job->clock_mode;
    e->lib_call_ps = job->lib_call_ps;
    e->mmio_write_ps = job->cpu_mmio_write_ps;
    e->pio_store_ps = job->pio_store_ps;
    e->pio_store_bytes = job->pio_store_bytes ? job->pio_store_bytes : 1;
    e->poll_detect_ps = job->poll_detect_ps;
    e->clock_ps = 0;
    e->cpu_mark_ps = cpu_now_ps();
    e->attached = 1;
    p2_st_sc(&ch->clock_pub,
             e->clock_mode == P2_CLOCK_CPU ? -e->cpu_mark_ps : (int64_t)0);
    p2_st_sc(&ch->state, (uint32_t)P2_RANK_ATTACHED);
    p2_job_ring(job);
    atexit(emu_at_exit);
    return 0;
}

static char emu_error[256];

static void emu_attach_once(void)
{
    if (emu_attach(&emu, emu_error, sizeof emu_error) != 0)
        fprintf(stderr, "p2: cannot attach to the p2run job: %s\n", emu_error);
}

int p2_dev_emu_open(p2_dev *dev)
{
    pthread_once(&emu_once, emu_attach_once);
    if (!emu.attached)
        return -1;
    memset(dev, 0, sizeof *dev);
    dev->ops = &emu_ops;
    dev->rank = emu.rank;
    dev->size = emu.size;
    dev->node = emu.node;
    dev->nnodes = emu.nnodes;
    dev->host_mem = emu.host.base;
    dev->host_size = emu.host.size;
    dev->gpu_mem = emu.gpu.base;
    dev->gpu_size = emu.gpu.size;
    dev->priv = &emu;
    return 0;
}
