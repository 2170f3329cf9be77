/*
 * p2mpi_core.c - the lowest unit of the virtual-time MPI layer: the rank's
 * state E (p2mpi.h), the clock, the bracket of an MPI call with the rank's
 * lock under MPI_THREAD_MULTIPLE, fatal errors, and the communicator table
 * (the communicators the rank has, by handle). Depends on the rank runtime
 * (rt/rt.h) and the channel's requests (p2_job.h) alone; every other unit of
 * the layer is above it.
 */
#define _GNU_SOURCE
#include "p2mpi_core.h"

#include <stdarg.h>
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

pm_state E;
int pm_world_rank, pm_world_size;
uint64_t pm_eager_bytes;
static pm_comm world_comm, self_comm, *comms;
/* MPI_THREAD_MULTIPLE: the table is read by calls outside the rank's lock
 * (MPI_Comm_rank, MPI_Comm_size) */
static pthread_mutex_t table_lock = PTHREAD_MUTEX_INITIALIZER;

/* ---- Clock, calls, errors -------------------------------------------------- */

void pm_charge(uint64_t ps)
{
    if (!E.rt || !ps)
        return;
    p2_rt_enter(E.rt);
    p2_rt_charge_ps(E.rt, ps);
    p2_rt_leave(E.rt);
}

uint64_t pm_now_ps(void)
{
    p2_rt_enter(E.rt);
    uint64_t t = p2_rt_clock_ps(E.rt);
    p2_rt_leave(E.rt);
    return t;
}

void pm_need_init(const char *call)
{
    if (!E.inited)
        pm_fatal("%s before MPI_Init", call);
    if (E.finalized)
        pm_fatal("%s after MPI_Finalize", call);
}

/* ---- Threads (MPI_THREAD_MULTIPLE) ----------------------------------------------
 * The layer's state is the rank's, one engine and one set of queues: under
 * MPI_THREAD_MULTIPLE each call holds a lock from its start to its end.
 *
 * While the rank has one thread (the runtime gives a lane, a channel with a
 * clock of its own, to each thread the program creates, before
 * pthread_create returns: p2_rt_lanes_used), the lock is a mutex here, which
 * costs nothing in simulated time and next to nothing in host time. From
 * the first call that finds a second thread on, for the rest of the run, it
 * is the rank's lock in the simulator (P2_CHAN_LOCK, P2_CHAN_UNLOCK;
 * model/sim/frontend.h), which hands it out in simulated-time order, (stamp,
 * lane), as it runs every request; a thread waiting for it is blocked there
 * and holds no time back. So the threads' calls run one at a time, one after
 * the other on the rank's timeline (a call that starts while another
 * thread's holds the lock starts when that one gives it back), and whichever
 * thread the host schedules first, the order and every simulated time are
 * the same each run. A free lock is taken at the thread's own clock: a
 * thread's calls take the times they take alone.
 *
 * The switch is safe: the mutex decides it, so no call runs under the mutex
 * once one runs under the simulator's lock; and a thread that has to wait
 * for the mutex (only one that takes its lane in an MPI call, a thread the
 * program did not create itself, can meet a call running under it) sleeps
 * parked, holding no time back (p2_rt_sleep_begin).
 *
 * A blocking wait gives the lock back while it waits for the simulator
 * (pm_let_others_in): the message it waits for may need another thread's
 * call first. */
enum { HELD_NONE, HELD_SOLO, HELD_RANK };
static __thread int held;                    /* this thread holds the lock: how */
static pthread_mutex_t solo = PTHREAD_MUTEX_INITIALIZER;
static int shared_lock;                      /* the simulator's lock from now on */

static void lock_lost(void)
{
    fprintf(stderr, "p2mpi: rank %d: %s: the rank's MPI lock cannot be taken: this thread has "
                    "no channel to the simulator (more than %d threads use the simulator's "
                    "libraries at once), or the simulator is gone\n",
            pm_world_rank, E.call ? E.call : "an MPI call", P2_RANK_LANES - 1);
    fflush(stderr);
    exit(1);
}

static void now_inside(int how)
{
    if (__atomic_exchange_n(&E.inside, 1, __ATOMIC_ACQ_REL))
        pm_fatal("two threads inside the layer at once (internal)");
    held = how;
}

static void rank_lock(void)
{
    if (!__atomic_load_n(&shared_lock, __ATOMIC_ACQUIRE)) {
        if (pthread_mutex_trylock(&solo) != 0) {
            p2_rt_sleep_begin();
            pthread_mutex_lock(&solo);
            p2_rt_sleep_end();
        }
        if (!shared_lock && p2_rt_lanes_used(E.rt) <= 1) {
            now_inside(HELD_SOLO);
            return;
        }
        __atomic_store_n(&shared_lock, 1, __ATOMIC_RELEASE);
        pthread_mutex_unlock(&solo);
    }
    p2_chan_req req = {.op = P2_CHAN_LOCK};
    p2_chan_resp resp;
    p2_rt_enter(E.rt);
    int rc = p2_rt_call(E.rt, &req, &resp);
    if (rc == 0 && resp.status == P2_CHAN_OK)
        p2_rt_advance_to(E.rt, resp.time_ps); /* it waited for another thread's call */
    p2_rt_leave(E.rt);
    if (rc != 0 || resp.status != P2_CHAN_OK)
        lock_lost();
    now_inside(HELD_RANK);
}

static void rank_unlock(void)
{
    int how = held;
    held = HELD_NONE;
    __atomic_store_n(&E.inside, 0, __ATOMIC_RELEASE);
    if (how == HELD_SOLO) {
        pthread_mutex_unlock(&solo);
        return;
    }
    p2_chan_req req = {.op = P2_CHAN_UNLOCK};
    p2_rt_enter(E.rt);
    p2_rt_post(E.rt, &req);
    p2_rt_leave(E.rt);
}

int pm_let_others_in(pm_call_state *s)
{
    if (!held)
        return 0;
    s->call = E.call;
    memcpy(s->what, E.what, sizeof s->what);
    s->call_start = E.call_start;
    s->depth = E.depth;
    s->coll_ctx_bits = E.coll_ctx_bits;
    s->coll_seq = E.coll_seq;
    s->coll_sig = E.coll_sig;
    s->coll_gpu_path = E.coll_gpu_path;
    E.call = NULL;
    E.what[0] = '\0';
    E.depth = 0;
    E.coll_ctx_bits = 0;
    E.coll_seq = 0;
    E.coll_sig = (pm_coll_sig){0};
    E.coll_gpu_path = 0;
    rank_unlock();
    return 1;
}

void pm_take_back(const pm_call_state *s)
{
    rank_lock();
    E.call = s->call;
    memcpy(E.what, s->what, sizeof E.what);
    E.call_start = s->call_start;
    E.depth = s->depth;
    E.coll_ctx_bits = s->coll_ctx_bits;
    E.coll_seq = s->coll_seq;
    E.coll_sig = s->coll_sig;
    E.coll_gpu_path = s->coll_gpu_path;
}

p2_job_rank *pm_wait_channel(void)
{
    if (E.thread_level < MPI_THREAD_SERIALIZED)
        return E.chan;
    p2_job_rank *ch = p2_rt_lane_channel(E.rt);
    return ch ? ch : E.chan;
}

void pm_enter(const char *call)
{
    if (E.multi && !held)
        rank_lock();
    if (E.depth++ == 0) {
        p2_rt_api_begin_call(call);
        E.call = call;
        E.what[0] = '\0';
        if (E.inited && !E.finalized)
            E.call_start = pm_now_ps();
    }
}

void pm_leave(void)
{
    if (--E.depth == 0) {
        E.call = NULL;
        E.coll_sig = (pm_coll_sig){0}; /* a later call's messages are not this collective's */
        p2_rt_api_end();
        if (E.multi && held)
            rank_unlock();
    }
}

_Noreturn void pm_fatal(const char *fmt, ...)
{
    char msg[512];
    va_list ap;
    va_start(ap, fmt);
    vsnprintf(msg, sizeof msg, fmt, ap);
    va_end(ap);
    if (E.call && strstr(msg, E.call) != msg)
        fprintf(stderr, "p2mpi: rank %d: %s: %s\n", pm_world_rank, E.call, msg);
    else
        fprintf(stderr, "p2mpi: rank %d: %s\n", pm_world_rank, msg);
    fflush(stderr);
    exit(1);
}

void pm_need_count(int count, const char *arg)
{
    if (count < 0)
        pm_fatal("%s = %d is negative (MPI_ERR_COUNT)", arg, count);
}

void pm_need_counts(const int counts[], int n, const char *arg)
{
    if (n > 0 && !counts)
        pm_fatal("%s is NULL where %d counts are read (MPI_ERR_ARG)", arg, n);
    for (int i = 0; i < n; i++)
        if (counts[i] < 0)
            pm_fatal("%s[%d] = %d is negative (MPI_ERR_COUNT)", arg, i, counts[i]);
}

void pm_need_req(const MPI_Request *req, const char *arg)
{
    if (!req)
        pm_fatal("%s is NULL (MPI_ERR_REQUEST)", arg);
}

void pm_need_reqs(const MPI_Request reqs[], int n)
{
    pm_need_count(n, "count");
    if (n > 0 && !reqs)
        pm_fatal("array_of_requests is NULL where %d requests are read (MPI_ERR_REQUEST)", n);
}

/* Called by the generated stubs (unsupported.c) for calls the layer does not
 * model: never run them untimed. */
_Noreturn void p2mpi_unsupported(const char *name)
{
    fprintf(stderr,
            "p2mpi: rank %d: %s is not modelled by the virtual-time MPI layer (mpi/README.md "
            "lists the calls it models); stopping rather than running it untimed\n",
            pm_world_rank, name);
    fflush(stderr);
    exit(1);
}

/* ---- The communicator table ------------------------------------------------------- */

pm_comm *pm_comm_of(MPI_Comm h, const char *call)
{
    (void)call;
    if (h == MPI_COMM_WORLD)
        return &world_comm;
    if (h == MPI_COMM_SELF)
        return &self_comm;
    /* before the table: a freed communicator still in it has no handle */
    if (h == MPI_COMM_NULL)
        pm_fatal("MPI_COMM_NULL passed as a communicator (MPI_ERR_COMM)");
    if (E.multi)
        pthread_mutex_lock(&table_lock);
    pm_comm *c = comms;
    while (c && c->handle != h)
        c = c->next;
    if (E.multi)
        pthread_mutex_unlock(&table_lock);
    if (c)
        return c;
    pm_fatal("a communicator the layer did not make (MPI_ERR_COMM)");
}

pm_comm *pm_intra_of(MPI_Comm h, const char *call)
{
    pm_comm *c = pm_comm_of(h, call);
    if (c->local)
        pm_fatal("%s on an intercommunicator is not modelled (the layer's intercommunicators "
                 "carry point-to-point messages, MPI_Intercomm_merge and the group queries)",
                 call);
    return c;
}

pm_comm *pm_comm_by_ctx(uint32_t ctx)
{
    if (ctx == world_comm.ctx)
        return &world_comm;
    if (ctx == self_comm.ctx)
        return &self_comm;
    if (E.multi)
        pthread_mutex_lock(&table_lock);
    pm_comm *c = comms;
    while (c && c->ctx != ctx)
        c = c->next;
    if (E.multi)
        pthread_mutex_unlock(&table_lock);
    return c;
}

void pm_comm_describe(const pm_comm *c, char *out, size_t n)
{
    if (c == &world_comm)
        snprintf(out, n, "MPI_COMM_WORLD");
    else if (c == &self_comm)
        snprintf(out, n, "MPI_COMM_SELF");
    else
        snprintf(out, n, "the communicator of %d ranks with context %u", c->size, c->ctx);
}

int pm_comm_rank_of(const pm_comm *c, int w)
{
    if (c == &world_comm)
        return w;
    for (int i = 0; i < c->size; i++)
        if (c->world[i] == w)
            return i;
    return -1;
}

/* The predefined communicators (at MPI_Init, once the engine runs). */
void pm_comms_start(void)
{
    world_comm.handle = MPI_COMM_WORLD;
    world_comm.size = pm_world_size;
    world_comm.rank = pm_world_rank;
    world_comm.world = malloc(sizeof(int) * (size_t)pm_world_size);
    for (int i = 0; i < pm_world_size; i++)
        world_comm.world[i] = i;
    world_comm.ctx = 0;
    self_comm.handle = MPI_COMM_SELF;
    self_comm.size = 1;
    self_comm.rank = 0;
    self_comm.world = malloc(sizeof(int));
    self_comm.world[0] = pm_world_rank;
    self_comm.ctx = 2;
}

/* A communicator the layer made (p2mpi_comm.c) joins the table, or leaves it. */
void pm_comm_link(pm_comm *c)
{
    pthread_mutex_lock(&table_lock);
    c->next = comms;
    comms = c;
    pthread_mutex_unlock(&table_lock);
}

void pm_comm_unlink(pm_comm *c)
{
    pthread_mutex_lock(&table_lock);
    for (pm_comm **q = &comms; *q; q = &(*q)->next)
        if (*q == c) {
            *q = c->next;
            break;
        }
    pthread_mutex_unlock(&table_lock);
}

static void comm_destroy(pm_comm *c)
{
    pm_comm_unlink(c);
    free(c->world);
    free(c->topo);
    if (c->local) { /* an intercommunicator's local group */
        free(c->local->world);
        free(c->local);
    }
    free(c);
}

/* A pending nonblocking collective still runs its rounds on c (its
 * members, its context, which pm_comm_by_ctx finds for the rounds'
 * messages): c stays, handle-less, until the last one completes. */
void pm_comm_drop(pm_comm *c)
{
    c->handle = MPI_COMM_NULL;
    if (c->nbc_pending)
        c->freed = 1;
    else
        comm_destroy(c);
}

void pm_comm_nbc_done(pm_comm *c)
{
    if (--c->nbc_pending == 0 && c->freed)
        comm_destroy(c);
}
