/*
 * rt_emu.c - the core of the rank runtime of a p2run job: attaches to the
 * job segment, maps the node's memory arenas, keeps the virtual clock and
 * talks to the simulator over the rank's channel (emu/channel.h). Built on
 * the lanes (rt_lanes.c: a thread's lane, posting on it); the threads unit
 * (rt_threads.c) and the process's entry points (rt_process.c: p2_rt_get,
 * p2_rt_wtime, p2_rt_compute, which copy owns the channel) are built on it.
 *
 * The clock (picoseconds) starts at 0 when the rank attaches, before main.
 * Under --clock=model only modelled costs move it. Under --clock=cpu the CPU
 * time the program consumes outside the libraries is added too: the runtime
 * reads the process's CPU-time clock when the program enters a library call
 * (p2_rt_api_begin, or p2_rt_enter outside any call) and marks it when the
 * program leaves. While the rank is outside the libraries, it publishes
 * "clock minus CPU time", so the simulator can follow a rank spinning on
 * memory by reading that rank's CPU-time clock; while inside, it publishes
 * nothing newer than its last request, so the simulator never counts the
 * emulation's own work as the program's.
 */
#define _GNU_SOURCE
#include "rt/rt.h"

#include <errno.h>
#include <pthread.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <signal.h>
#include <time.h>
#include <sys/syscall.h>
#include <unistd.h>

#include "arena.h"
#include "channel.h"
#include "rt/rt_state.h"

#define rt p2_rt_self
#define tl_lane p2_rt_tl_lane

#define STATE(r) ((rt_state *)((char *)(r) - offsetof(rt_state, pub)))

/* Set when another copy of the runtime owns the channel (rt_process.c, "One
 * runtime per process"): then every call here forwards there (FORWARD). */
const rt_table *p2_rt_fwd;

/* ---- Clock ---------------------------------------------------------------- */

/* Tells the simulator how far this lane's clock has got. A thread leaving
 * the libraries (depth 0) is marked for the program's meters (rt_meter.c). */
static void publish(rt_state *s, rt_lane *l)
{
    if (!s->attached || s->failed)
        return;
    if (l->api_depth == 0)
        rt_meter_leave(s, l);
    if (s->clock_mode != P2_CLOCK_CPU) {
        p2_st_sc(&l->channel->clock_pub, (int64_t)l->clock_ps);
    } else if (l->api_depth == 0) {
        /* The simulator adds the CPU time it reads to this; the runtime will
         * not charge the read that ends the span, so neither may it, or its
         * view of this lane would run ahead of the lane's real clock. */
        p2_st_sc(&l->channel->clock_pub,
                 (int64_t)l->clock_ps - l->cpu_mark_ps - s->cpu_read_ps);
    } else {
        p2_st_sc(&l->channel->clock_pub, (int64_t)P2_CLOCK_UNKNOWN);
    }
}

/* What the program did outside the libraries that the runtime could not
 * see: CPU time (--clock=cpu), and MPI calls that ordered this rank after
 * others (a clock floor raised from outside, on the rank's own lane). */
static void catch_up(rt_state *s, rt_lane *l)
{
    uint64_t spent = rt_meter_enter(s, l); /* --clock=cpu or =instructions */
    if (spent > P2_CHAN_MAX_STAMP_PS - l->clock_ps)
        rt_clock_overflow(&s->pub, "the program's computation", (double)spent * 1e-12);
    l->clock_ps += spent;
    int64_t floor = p2_ld_sc(&l->channel->clock_floor);
    if (floor > 0 && (uint64_t)floor > l->clock_ps)
        l->clock_ps = (uint64_t)floor;
}

/* The calling thread's lane (rt_lanes.c claims one for a thread that has
 * none); NULL, with a message, when every lane is taken. */
static rt_lane *lane(rt_state *s)
{
    if (tl_lane)
        return tl_lane;
    return rt_claim_lane(s);
}

static rt_lane *enter_lane(rt_state *s)
{
    rt_lane *l = lane(s);
    if (!l)
        return NULL;
    if (l->parked)
        rt_unpark_self(s, l);
    return l;
}

void p2_rt_enter(p2_rt *r)
{
    FORWARD(enter, r);
    rt_state *s = STATE(r);
    rt_lane *l = enter_lane(s);
    if (l && l->api_depth == 0)
        catch_up(s, l);
}

void p2_rt_leave(p2_rt *r)
{
    FORWARD(leave, r);
    rt_state *s = STATE(r);
    if (tl_lane)
        publish(s, tl_lane);
}

void p2_rt_api_begin_call(const char *call)
{
    FORWARD(api_begin_call, call);
    if (!rt.attached)
        return;
    rt_lane *l = enter_lane(&rt);
    if (l && l->api_depth++ == 0) {
        rt_meter_call(l, call);
        catch_up(&rt, l);
        publish(&rt, l);
    }
}

void p2_rt_api_begin(void)
{
    FORWARD(api_begin);
    p2_rt_api_begin_call(NULL);
}

void p2_rt_api_end(void)
{
    FORWARD(api_end);
    rt_lane *l = tl_lane;
    if (!rt.attached || !l)
        return;
    if (l->api_depth > 0 && --l->api_depth == 0)
        publish(&rt, l);
}

uint64_t p2_rt_clock_ps(const p2_rt *r)
{
    FORWARD(clock_ps, r);
    rt_lane *l = lane(STATE(r));
    return l ? l->clock_ps : 0;
}

/* A clock past the simulator's limit would wrap or be refused there: end the
 * rank here, saying why, instead of sending a time that means nothing. */
void rt_clock_overflow(const p2_rt *r, const char *call, double seconds)
{
    fprintf(stderr, "p2: rank %d: %s(%g s) takes the rank's clock past the latest simulated "
                    "time a rank may reach (%.0f s); ending the rank\n",
            r->rank, call, seconds, (double)P2_CHAN_MAX_STAMP_PS * 1e-12);
    exit(EXIT_FAILURE);
}

void p2_rt_charge_ps(p2_rt *r, uint64_t ps)
{
    FORWARD(charge_ps, r, ps);
    rt_lane *l = lane(STATE(r));
    if (!l)
        return;
    if (ps > P2_CHAN_MAX_STAMP_PS - l->clock_ps)
        rt_clock_overflow(r, "charging", (double)ps * 1e-12);
    l->clock_ps += ps;
}

/* A read of the clock by the program. Under --clock=model only modelled work
 * moves the clock, so a program waiting for it to move by reading it
 * (STREAM's checktick: `while (MPI_Wtime() - t1 < 1e-6);`) would wait
 * forever: from the third read in a run of reads with no modelled work
 * between them, each read costs cost_ps, charged after it reads. The first
 * two reads of a run are free, as the program's other instructions are, so
 * a region timed between two reads measures the modelled work alone
 * (mpi/README.md, "MPI_Wtime"). Under --clock=cpu the program's own CPU time
 * moves the clock already; --clock=instructions charges the reads as model
 * does. */
uint64_t p2_rt_read_clock(p2_rt *r, uint64_t cost_ps)
{
    FORWARD(read_clock, r, cost_ps);
    rt_state *s = STATE(r);
    p2_rt_enter(r);
    rt_lane *l = tl_lane;
    uint64_t t = p2_rt_clock_ps(r);
    if (l && s->clock_mode != P2_CLOCK_CPU) {
        if (l->clock_ps != l->read_last_ps)
            l->read_run = 0;
        if (++l->read_run > 2) {
            p2_rt_charge_ps(r, cost_ps);
            l->read_run = 2;
        }
        l->read_last_ps = l->clock_ps;
    }
    p2_rt_leave(r);
    return t;
}

void p2_rt_advance_to(p2_rt *r, uint64_t t_ps)
{
    FORWARD(advance_to, r, t_ps);
    rt_lane *l = lane(STATE(r));
    if (l && t_ps > l->clock_ps)
        l->clock_ps = t_ps;
}

/* ---- Channel ---------------------------------------------------------------- */

int p2_rt_post(p2_rt *r, p2_chan_req *req)
{
    FORWARD(post, r, req);
    rt_state *s = STATE(r);
    rt_lane *l = lane(s);
    return l ? rt_post_on(s, l, req) : -1;
}

int p2_rt_call(p2_rt *r, p2_chan_req *req, p2_chan_resp *resp)
{
    FORWARD(call, r, req, resp);
    rt_state *s = STATE(r);
    rt_lane *l = lane(s);
    if (!l)
        return -1;
    if (++l->seq == 0)
        l->seq = 1; /* 0 is the response slot's initial value */
    req->seq = l->seq;
    if (rt_post_on(s, l, req) != 0)
        return -1;
    if (p2_chan_wait_resp(s->job, l->channel, req->seq, resp) != 0) {
        rt_fail(s);
        return -1;
    }
    return 0;
}

p2_job_rank *p2_rt_lane_channel(p2_rt *r)
{
    FORWARD(lane_channel, r);
    rt_lane *l = lane(STATE(r));
    return l ? l->channel : NULL;
}

int p2_rt_lanes_used(p2_rt *r)
{
    FORWARD(lanes_used, r);
    rt_state *s = STATE(r);
    pthread_mutex_lock(&s->lock);
    int n = 0;
    for (unsigned k = 0; k < P2_RANK_LANES; k++)
        n += s->lanes[k].used != 0;
    pthread_mutex_unlock(&s->lock);
    return n;
}

static int in_memory(const p2_rt_memory *m, const uint8_t *p, uint64_t *bus)
{
    if (!m->base || p < m->base || p + 8 > m->base + m->size)
        return 0;
    *bus = m->bus + (uint64_t)(p - m->base);
    return 1;
}

/* A wait (flags: P2_CHAN_WAIT_*) on the word at addr, its payload (the
 * deadline, the second word) in *data. Built on the forwarding calls only
 * (enter, call, advance_to...), so a second copy of the runtime needs no
 * table entry for it. *value gets the answer's value. */
static int wait_word(p2_rt *r, const volatile uint64_t *addr, uint64_t mask, uint64_t value,
                     uint16_t flags, const p2_chan_wait_data *data, uint64_t *answer)
{
    const uint8_t *p = (const uint8_t *)addr;
    uint64_t bus;
    if (!in_memory(&r->host, p, &bus) && !in_memory(&r->gpu, p, &bus)) {
        fprintf(stderr, "p2: rank %d: wait on %p, which is not in this rank's registered "
                        "host or GPU memory\n", r->rank, (const void *)p);
        return P2_CHAN_FAILED;
    }
    /* Even a test goes to the simulator: whether the word holds the value at
     * this rank's simulated time is the model's to say, not this process's
     * view of the shared arena (which may be ahead of or behind that time). */
    p2_chan_req req = {.op = P2_CHAN_WAIT_MEM, .flags = flags, .a = bus, .b = value, .c = mask};
    if (data) {
        req.len = sizeof *data;
        memcpy(req.data, data, sizeof *data);
    }
    p2_chan_resp resp;
    int result = P2_CHAN_FAILED;
    p2_rt_enter(r);
    p2_rt_charge_ps(r, p2_ns_ps(r->prm.lib_call_ns));
    if (p2_rt_call(r, &req, &resp) == 0) {
        result = resp.status;
        if (result != P2_CHAN_FAILED)
            p2_rt_advance_to(r, resp.time_ps + p2_ns_ps(r->prm.poll_detect_ns));
        if (answer)
            *answer = resp.value;
    }
    p2_rt_leave(r);
    return result;
}

int p2_rt_wait_mem(p2_rt *r, const volatile uint64_t *addr, uint64_t mask, uint64_t value,
                   int block)
{
    FORWARD(wait_mem, r, addr, mask, value, block);
    return wait_word(r, addr, mask, value, block ? P2_CHAN_WAIT_BLOCK : 0, NULL, NULL);
}

int p2_rt_wait_mem_until(p2_rt *r, const volatile uint64_t *addr, uint64_t mask, uint64_t value,
                         uint64_t deadline_ps)
{
    p2_chan_wait_data d = {.deadline_ps = deadline_ps};
    return wait_word(r, addr, mask, value, P2_CHAN_WAIT_BLOCK | P2_CHAN_WAIT_DEADLINE, &d, NULL);
}

int p2_rt_wait_mem_also(p2_rt *r, const volatile uint64_t *addr, uint64_t mask, uint64_t value,
                        const p2_rt_word *also, uint64_t deadline_ps, int *also_met)
{
    p2_chan_wait_data d = {.deadline_ps = deadline_ps,
                           .also_a = also->bus,
                           .also_b = also->value,
                           .also_c = also->mask,
                           .also_rank = (uint32_t)also->rank};
    uint16_t flags = P2_CHAN_WAIT_BLOCK | P2_CHAN_WAIT_ALSO |
                     (deadline_ps != UINT64_MAX ? P2_CHAN_WAIT_DEADLINE : 0);
    uint64_t v = 0;
    int result = wait_word(r, addr, mask, value, flags, &d, &v);
    *also_met = result == P2_CHAN_OK && v == 1;
    return result;
}

/* ---- Attaching ------------------------------------------------------------ */

/* Tells the simulator this rank is leaving, at its final clock, so that it
 * stops waiting for it. A rank that dies without this is noticed by p2run.
 * Posted on the rank's own lane, whichever thread exits the process. */
static void rt_at_exit(void)
{
    rt_state *s = &rt;
    rt_lane *l = &s->lanes[0];
    if (!s->attached || s->failed || l->exited)
        return;
    /* Another thread may be pushing on lane 0 (or blocked pushing into a full
     * ring): then leave without the message (p2run reports the process gone
     * instead) rather than hang in exit. */
    if (pthread_mutex_trylock(&l->post) != 0)
        return;
    pthread_mutex_unlock(&l->post);
    if (tl_lane == l && l->api_depth == 0)
        catch_up(s, l);
    /* Leaving before the goodbye: once the simulator has it, it may end the
     * job at once (a --stats file it cannot write), and p2run gives a rank
     * that is leaving time to finish its exit (flush its output) only if it
     * sees it so. */
    p2_st_sc(&l->channel->state, (uint32_t)P2_RANK_EXITING);
    p2_chan_req req = {.op = P2_CHAN_EXIT};
    rt_post_on(s, l, &req);
    l->exited = 1;
}

/* This process's rank: p2run sets P2_RANK; under mpirun, Open MPI's variables. */
static int rank_from_env(int nranks, char *err, size_t errlen)
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

/* Why rank `rank` cannot attach: process `pid` is or was the rank. */
static void attached_elsewhere(int rank, int32_t pid, char *err, size_t errlen)
{
    if (pid == (int32_t)getpid())
        snprintf(err, errlen, "rank %d attached in this process before it ran a new program "
                 "(exec): the runtime does not follow an exec", rank);
    else if (kill((pid_t)pid, 0) != 0 && errno == ESRCH)
        snprintf(err, errlen, "rank %d already ran a program of this job (pid %d, which has "
                 "ended): one process per rank attaches, so a script may start one MPI or TCA "
                 "program per rank", rank, (int)pid);
    else
        snprintf(err, errlen, "rank %d is already attached (pid %d)", rank, (int)pid);
}

/* Attaches this copy of the runtime to the job, the calling thread on lane
 * 0 (rt_process.c, once, when no other copy owns the channel). Returns 0, or
 * -1 with the reason in err. */
int rt_attach(rt_state *s, char *err, size_t errlen)
{
    p2_job_local local;
    p2_job *job = p2_job_attach(getenv("P2_JOB"), &local, err, errlen);
    if (!job)
        return -1;
    int rank = rank_from_env((int)local.nranks, err, errlen);
    if (rank < 0) {
        p2_job_detach(job, &local);
        return -1;
    }
    /* A rank another process has been (a script's first MPI program) is
     * refused as such, whether or not the simulator has ended since. */
    p2_job_rank *ch = &job->ranks[rank];
    int32_t expected = (int32_t)p2_ld_sc(&ch->pid);
    if (expected != 0) {
        attached_elsewhere(rank, expected, err, errlen);
        p2_job_detach(job, &local);
        return -1;
    }
    /* The simulator publishes the mapping and the costs before it is ready. */
    uint32_t state;
    while ((state = p2_ld_sc(&job->sim_state)) == P2_SIM_STARTING)
        p2_futex_wait(&job->sim_state, P2_SIM_STARTING, P2_CHAN_LIVENESS_US);
    if (state != P2_SIM_READY) {
        snprintf(err, errlen, "the simulator ended before rank %d could attach", rank);
        p2_job_detach(job, &local);
        return -1;
    }
    if (!__atomic_compare_exchange_n(&ch->pid, &expected, (int32_t)getpid(), 0, __ATOMIC_SEQ_CST,
                                     __ATOMIC_SEQ_CST)) {
        attached_elsewhere(rank, expected, err, errlen);
        p2_job_detach(job, &local);
        return -1;
    }
    unsigned node = job->rank_node[rank];
    if (p2_arena_map(local.name, node, P2_ARENA_HOST, job->host_bytes, &s->host, err, errlen) != 0 ||
        p2_arena_map(local.name, node, P2_ARENA_GPU, job->gpu_bytes, &s->gpu, err, errlen) != 0) {
        p2_arena_unmap(&s->host);
        p2_job_detach(job, &local);
        return -1;
    }
    p2_rt *r = &s->pub;
    r->rank = rank;
    r->size = (int)local.nranks;
    r->node = node;
    r->nnodes = job->nnodes;
    r->host = (p2_rt_memory){s->host.base, s->host.size, p2_arena_bus_base(node, P2_ARENA_HOST)};
    r->gpu = (p2_rt_memory){s->gpu.base, s->gpu.size, p2_arena_bus_base(node, P2_ARENA_GPU)};
    r->ndevices = job->ndevices < P2_JOB_MAX_DEVICES ? job->ndevices : P2_JOB_MAX_DEVICES;
    for (unsigned d = 0; d < r->ndevices; d++) {
        job->device[d][P2_DEVICE_NAME_MAX - 1] = '\0';
        r->device[d] = job->device[d];
    }
    r->prm = job->rank_params;
    const char *bad = p2_rank_params_invalid(&r->prm);
    if (bad) {
        /* Only another process of the job writes it so: the simulator checked
         * the parameter file at load. */
        snprintf(err, errlen, "the job segment's rank parameter %s is outside its range "
                 "(params.def): a process of the job overwrote it", bad);
        p2_arena_unmap(&s->gpu);
        p2_arena_unmap(&s->host);
        p2_job_detach(job, &local);
        return -1;
    }
    r->link_payload_Bps = job->link_payload_Bps;
    r->host_read_Bps = job->host_read_Bps;
    r->gpu_read_Bps = job->gpu_read_Bps;
    r->route_port = (const uint8_t(*)[P2_JOB_MAX_RANKS])job->route_port;
    r->port_peer = (const uint8_t(*)[4])job->port_peer;
    r->rank_node = job->rank_node;
    uint64_t mpi_bytes = (uint64_t)r->prm.mpi_host_bytes;
    r->mpi_share_bytes = mpi_bytes < r->host.size ? mpi_bytes : 0;
    r->job = job;
    s->job = job;
    s->clock_mode = (p2_clock_mode)job->clock_mode;
    for (unsigned k = 0; k < P2_RANK_LANES; k++) {
        rt_lane *l = &s->lanes[k];
        pthread_mutex_init(&l->post, NULL);
        l->channel = p2_job_lane(job, (unsigned)rank, k);
        l->index = k;
        l->instr_fd = -1;
        l->read_last_ps = UINT64_MAX;
    }
    /* The thread that attaches (before main) is the program's: lane 0. */
    rt_lane *l = &s->lanes[0];
    s->cpu_read_ps = rt_cpu_read_cost_ps();
    if (rt_meter_bind(s, l, err, errlen) != 0) {
        p2_st_sc(&ch->pid, 0);
        p2_arena_unmap(&s->gpu);
        p2_arena_unmap(&s->host);
        p2_job_detach(job, &local);
        return -1;
    }
    l->used = 1;
    l->thread = pthread_self();
    tl_lane = l;
    int32_t tid = (int32_t)syscall(SYS_gettid);
    p2_st_sc(&ch->tid, tid);
    s->attached = 1;
    p2_st_sc(&ch->clock_pub, s->clock_mode == P2_CLOCK_CPU ? -l->cpu_mark_ps : (int64_t)0);
    p2_st_sc(&ch->state, (uint32_t)P2_RANK_ATTACHED);
    p2_job_ring(job);
    atexit(rt_at_exit);
    return 0;
}

void p2_rt_ring(p2_rt *r)
{
    p2_job_ring(r->job);
}

int p2_rt_rank_node(const p2_rt *r, int rank)
{
    if (!r || rank < 0 || rank >= r->size)
        return -1;
    const rt_state *s = (const rt_state *)((const char *)r - offsetof(rt_state, pub));
    return (int)s->job->rank_node[rank];
}

/* The interposers of the copy that owns the channel, for rt_threads.c. */
const p2_rt_threads *rt_threads_forward(void)
{
    return p2_rt_fwd ? p2_rt_fwd->threads : NULL;
}
