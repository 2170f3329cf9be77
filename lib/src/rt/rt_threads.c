/*
 * rt_threads.c - the program's threads in virtual time.
 *
 * Every program thread that uses the libraries runs on a lane of its own: a
 * channel to the simulator with its own clock (emu/channel.h), so that one
 * thread blocked in a wait (tcaWaitDMARecvDesc, MPI_Recv) never stops another
 * (a progress thread polling for data while the main thread waits). The
 * simulator orders the requests of all lanes by (stamp, lane) and never runs
 * past the clock of a lane that may still send something.
 *
 * So it must know when a thread will send nothing: a thread asleep until
 * another thread of the rank wakes it. The calls that put a thread to sleep
 * that way are interposed here, and the thread "parks" its lane:
 *   pthread_cond_wait      parks until pthread_cond_signal/broadcast on the
 *                          same condition variable by another lane's thread;
 *   pthread_join           parks until the joined thread ends.
 * A layer that makes a thread sleep in a wait of its own (the MPI layer's
 * lock) parks it with p2_rt_sleep_begin; nobody's wake orders its end
 * (p2_rt_sleep_end), as after a recheck below.
 * The waking thread posts P2_CHAN_UNPARK for the parked lane on its own lane,
 * stamped with its own clock, and the woken thread's clock becomes at least
 * that: the wake is ordered in virtual time as it was caused, so runs give the
 * same times whatever the host's scheduling. Timed waits (pthread_cond_timedwait,
 * sleep) do not park: the thread holds its rank's time until it goes on.
 *
 * A thread gets its lane when it is created by the program (pthread_create
 * from the program or its own libraries, not from the MPI, CUDA or system
 * libraries, whose threads never use ours), at its creator's clock: the lane
 * exists before the creator can go on. A thread created otherwise that calls
 * the libraries takes a free lane then, at the latest clock of the rank's
 * threads or the model's time. P2_RANK_LANES - 1 such threads may use the
 * libraries at a time.
 *
 * Built on the lanes (rt_lanes.c: claiming, binding, posting) and the core
 * (rt_emu.c: p2_rt_enter/leave, and whether another copy of the runtime owns
 * the channel, whose interposers then run instead). rt_process.c puts this
 * copy's interposers in the table other copies forward to, and hands the
 * lanes rt_thread_exit for the end of a bound thread.
 */
#define _GNU_SOURCE
#include <dlfcn.h>
#include <errno.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <time.h>

#include "channel.h"
#include "rt/rt_state.h"

#define rt p2_rt_self
#define tl_lane p2_rt_tl_lane

/* A thread sleeping in an interposed wait looks again this often (host
 * time): a wakeup meant for another waiter of a condition variable (signal
 * wakes one, every parked waiter is told) then ends as a spurious one. */
#define PARK_RECHECK_NS 20000000L

/* Threads that ended, for a join that comes after: their final clocks, and
 * the lane and its claim count (lane_claims) they ran on. The C library
 * reuses a pthread_t once its thread is joined (or, detached, has ended): a
 * join forgets the record it used, and a creator forgets any record of the
 * new thread's pthread_t that another lane session left (forget_exits_locked). */
#define EXITS_KEPT 32
static struct {
    pthread_t thread;
    uint64_t clock_ps;
    const rt_lane *lane;
    uint32_t claims;
    int valid;
} exits[EXITS_KEPT];
static unsigned exits_next;

/* ---- The real calls ---------------------------------------------------- */

/* From the C library itself: RTLD_NEXT finds nothing when this copy of the
 * library was loaded after libc (libp2tca.so under the preloaded MPI layer). */
static void *real(const char *name)
{
    static void *libc;
    if (!libc)
        libc = dlopen("libc.so.6", RTLD_LAZY | RTLD_NOLOAD);
    void *f = libc ? dlsym(libc, name) : NULL;
    if (!f)
        f = dlsym(RTLD_NEXT, name);
    if (!f) {
        fprintf(stderr, "p2: cannot find the C library's %s: %s\n", name, dlerror());
        abort();
    }
    return f;
}

#define REAL(name, type) ((type)real_fn(&real_##name, #name))
static void *real_fn(void **slot, const char *name)
{
    void *f = __atomic_load_n(slot, __ATOMIC_ACQUIRE);
    if (!f) {
        f = real(name);
        __atomic_store_n(slot, f, __ATOMIC_RELEASE);
    }
    return f;
}
static void *real_pthread_create, *real_pthread_cond_wait, *real_pthread_cond_signal,
    *real_pthread_cond_broadcast, *real_pthread_join;
typedef int (*create_fn)(pthread_t *, const pthread_attr_t *, void *(*)(void *), void *);
typedef int (*cond_wait_fn)(pthread_cond_t *, pthread_mutex_t *);
typedef int (*cond_wake_fn)(pthread_cond_t *);
typedef int (*join_fn)(pthread_t, void **);

/* ---- Parking ------------------------------------------------------------ */

static void park_locked(rt_state *s, rt_lane *l, int kind, const void *obj)
{
    l->parks++;
    l->parked = 1;
    l->woken = 0;
    l->park_kind = kind;
    l->park_obj = obj;
    p2_st_sc(&l->channel->parked_seq, l->parks);
    p2_job_ring(s->job);
}

/* Back from the real wait. Woken by a lane's thread: running again from the
 * waker's clock (the UNPARK is in the waker's ring). Not woken (the recheck
 * timeout, a spurious wakeup, a join of a thread that ended unseen): still
 * parked for the simulator until the thread parks again or calls the
 * libraries (rt_unpark_self, rt_lanes.c). */
static void unpark(rt_state *s, rt_lane *l)
{
    pthread_mutex_lock(&s->lock);
    l->park_kind = PARK_NONE;
    if (l->woken) {
        l->parked = 0;
        if (l->wake_ps > l->clock_ps)
            l->clock_ps = l->wake_ps;
    }
    pthread_mutex_unlock(&s->lock);
}

/* The calling thread (lane w, inside p2_rt_enter) wakes the lanes parked on
 * (kind, obj): each runs again from w's clock. */
static void wake_locked(rt_state *s, int kind, const void *obj, rt_lane *w)
{
    for (unsigned k = 0; k < P2_RANK_LANES; k++) {
        rt_lane *t = &s->lanes[k];
        if (t == w || !t->used || !t->parked || t->woken || t->park_kind != kind ||
            t->park_obj != obj)
            continue;
        p2_chan_req req = {.op = P2_CHAN_UNPARK, .a = t->index, .b = t->parks};
        if (rt_post_on(s, w, &req) != 0)
            continue;
        t->woken = 1;
        t->wake_ps = w->clock_ps;
    }
}

static int anyone_parked(rt_state *s)
{
    for (unsigned k = 0; k < P2_RANK_LANES; k++)
        if (__atomic_load_n(&s->lanes[k].parked, __ATOMIC_ACQUIRE))
            return 1;
    return 0;
}

/* ---- Thread ends -------------------------------------------------------- */

/* A thread bound to a lane ended (rt_state.thread_exit: its lane's
 * thread-specific destructor). */
void rt_thread_exit(void *arg)
{
    rt_state *s = &rt;
    rt_lane *l = arg, *mine = tl_lane;
    if (!s->attached || l->exited)
        return;
    /* Posted from the ending lane: its thread's own end (thread-locals may be
     * gone before this destructor runs), or a creator whose new thread could
     * not start (its own lane is put back after). */
    tl_lane = l;
    p2_rt_enter(&s->pub);
    /* One lock with a joiner's check-and-park: it saw the end, or is woken. */
    pthread_mutex_lock(&s->lock);
    exits[exits_next % EXITS_KEPT].thread = l->thread;
    exits[exits_next % EXITS_KEPT].clock_ps = l->clock_ps;
    exits[exits_next % EXITS_KEPT].lane = l;
    exits[exits_next % EXITS_KEPT].claims = p2_ld(&l->channel->lane_claims);
    exits[exits_next % EXITS_KEPT].valid = 1;
    exits_next++;
    wake_locked(s, PARK_JOIN, (const void *)l->thread, l);
    p2_chan_req req = {.op = P2_CHAN_EXIT};
    rt_post_on(s, l, &req);
    l->exited = 1;
    l->used = 0;
    rt_meter_unbind(l);
    p2_st_sc(&l->channel->state, (uint32_t)P2_RANK_EXITING);
    pthread_mutex_unlock(&s->lock);
    p2_job_ring(s->job);
    tl_lane = mine == l ? NULL : mine;
}

/* Forgets the records of `t` other than of its run on lane `keep` (NULL:
 * every record), under rt.lock. */
static void forget_exits_locked(pthread_t t, const rt_lane *keep)
{
    for (unsigned i = 0; i < EXITS_KEPT; i++)
        if (exits[i].valid && pthread_equal(exits[i].thread, t) &&
            (!keep || exits[i].lane != keep ||
             exits[i].claims != p2_ld(&keep->channel->lane_claims)))
            exits[i].valid = 0;
}

/* The final clock of `t` if it ended (0 and *found = 0 if not). */
static uint64_t ended_locked(pthread_t t, int *found)
{
    for (unsigned i = 0; i < EXITS_KEPT; i++)
        if (exits[i].valid && pthread_equal(exits[i].thread, t)) {
            *found = 1;
            return exits[i].clock_ps;
        }
    *found = 0;
    return 0;
}

/* ---- The interposed calls, as the owning copy runs them ------------------ */

typedef struct start {
    void *(*fn)(void *);
    void *arg;
    rt_lane *lane;
} start;

static void *trampoline(void *p)
{
    start st = *(start *)p;
    free(p);
    rt_bind_lane(&rt, st.lane);
    return st.fn(st.arg);
}

/* Whether a thread created from `caller` is the program's: not one of the
 * MPI, CUDA, network or system libraries, whose threads never use ours. */
static int program_site(const void *caller)
{
    static const char *const theirs[] = {"libmpi", "libopen-", "libpmix", "libevent", "libuc",
                                         "libhwloc", "libcuda", "libnvidia", "libfabric",
                                         "libpsm", "libibverbs", "librdmacm", "libgomp",
                                         "libc.so", "libpthread", "libp2mpi", "mca_", "libmca"};
    Dl_info info;
    if (!dladdr(caller, &info) || !info.dli_fname)
        return 1;
    const char *base = strrchr(info.dli_fname, '/');
    base = base ? base + 1 : info.dli_fname;
    for (size_t i = 0; i < sizeof theirs / sizeof theirs[0]; i++)
        if (!strncmp(base, theirs[i], strlen(theirs[i])))
            return 0;
    return 1;
}

static int own_create(pthread_t *t, const pthread_attr_t *attr, void *(*fn)(void *), void *arg,
                      const void *caller)
{
    rt_state *s = &rt;
    create_fn create = REAL(pthread_create, create_fn);
    if (!s->attached || !tl_lane || !program_site(caller))
        return create(t, attr, fn, arg);
    start *st = malloc(sizeof *st);
    if (!st)
        return EAGAIN;
    p2_rt_enter(&s->pub);
    pthread_mutex_lock(&s->lock);
    rt_lane *l = rt_take_lane_locked(s, tl_lane->clock_ps);
    pthread_mutex_unlock(&s->lock);
    p2_rt_leave(&s->pub);
    if (!l) {
        free(st);
        return create(t, attr, fn, arg); /* it takes a lane if one is free when it needs one */
    }
    *st = (start){fn, arg, l};
    int r = create(t, attr, trampoline, st);
    if (r != 0) {
        free(st);
        rt_thread_exit(l);
        return r;
    }
    /* *t may be an ended thread's: its record is not this thread's end */
    pthread_mutex_lock(&s->lock);
    forget_exits_locked(*t, l);
    pthread_mutex_unlock(&s->lock);
    return r;
}

static int own_cond_wait(pthread_cond_t *c, pthread_mutex_t *m, const void *caller)
{
    rt_state *s = &rt;
    rt_lane *l = tl_lane;
    /* Only the program's own waits park: inside MPI or CUDA a thread waits
     * for those libraries' threads, which wake nobody in virtual time. */
    if (!s->attached || !l || l->exited || !program_site(caller))
        return REAL(pthread_cond_wait, cond_wait_fn)(c, m);
    pthread_mutex_lock(&s->lock);
    park_locked(s, l, PARK_COND, c);
    pthread_mutex_unlock(&s->lock);
    struct timespec until;
    rt_host_clock(CLOCK_MONOTONIC, &until);
    until.tv_nsec += PARK_RECHECK_NS;
    if (until.tv_nsec >= 1000000000L) {
        until.tv_sec++;
        until.tv_nsec -= 1000000000L;
    }
    int r = pthread_cond_clockwait(c, m, CLOCK_MONOTONIC, &until);
    unpark(s, l);
    return r == ETIMEDOUT ? 0 : r; /* a recheck is a spurious wakeup */
}

static int own_cond_wake(pthread_cond_t *c, int all)
{
    rt_state *s = &rt;
    if (s->attached && tl_lane && anyone_parked(s)) {
        p2_rt_enter(&s->pub); /* --clock=cpu: the waker's clock is up to date */
        pthread_mutex_lock(&s->lock);
        wake_locked(s, PARK_COND, c, tl_lane);
        pthread_mutex_unlock(&s->lock);
        p2_rt_leave(&s->pub);
    }
    return all ? REAL(pthread_cond_broadcast, cond_wake_fn)(c)
               : REAL(pthread_cond_signal, cond_wake_fn)(c);
}

static int own_join(pthread_t t, void **ret, const void *caller)
{
    rt_state *s = &rt;
    rt_lane *l = tl_lane;
    join_fn join = REAL(pthread_join, join_fn);
    if (!s->attached || !l || l->exited || !program_site(caller))
        return join(t, ret);
    /* Checked and parked under one lock with the thread's end: either it had
     * ended (its final clock is known), or its end finds this one parked. */
    pthread_mutex_lock(&s->lock);
    int ended;
    uint64_t final = ended_locked(t, &ended);
    if (!ended)
        park_locked(s, l, PARK_JOIN, (const void *)t);
    pthread_mutex_unlock(&s->lock);
    int r = join(t, ret);
    if (!ended)
        unpark(s, l);
    else if (final > l->clock_ps)
        l->clock_ps = final;
    pthread_mutex_lock(&s->lock);
    forget_exits_locked(t, NULL); /* t may name another thread from now on */
    pthread_mutex_unlock(&s->lock);
    return r;
}

/* p2_rt_sleep_begin / _end (rt.h): a wait of a layer's own, which nobody
 * wakes through the runtime. */
static void own_sleep(int begin)
{
    rt_state *s = &rt;
    rt_lane *l = tl_lane;
    if (!s->attached || !l || l->exited)
        return;
    if (!begin) {
        rt_unpark_self(s, l); /* not woken: no earlier than the model's time */
        return;
    }
    pthread_mutex_lock(&s->lock);
    park_locked(s, l, PARK_SLEEP, NULL);
    pthread_mutex_unlock(&s->lock);
}

const p2_rt_threads p2_rt_threads_own = {own_create, own_cond_wait, own_cond_wake, own_join,
                                         own_sleep};

/* ---- The symbols programs call ----------------------------------------- */

static const p2_rt_threads *owner(void)
{
    const p2_rt_threads *f = rt_threads_forward();
    return f ? f : &p2_rt_threads_own;
}

int pthread_create(pthread_t *t, const pthread_attr_t *attr, void *(*fn)(void *), void *arg)
{
    return owner()->create(t, attr, fn, arg, __builtin_return_address(0));
}

int pthread_cond_wait(pthread_cond_t *c, pthread_mutex_t *m)
{
    return owner()->cond_wait(c, m, __builtin_return_address(0));
}

int pthread_cond_signal(pthread_cond_t *c)
{
    return owner()->cond_wake(c, 0);
}

int pthread_cond_broadcast(pthread_cond_t *c)
{
    return owner()->cond_wake(c, 1);
}

int pthread_join(pthread_t t, void **ret)
{
    return owner()->join(t, ret, __builtin_return_address(0));
}

/* The same for a preloaded layer's own pthread_* (rt.h). */
int p2_rt_pthread_create(pthread_t *t, const pthread_attr_t *attr, void *(*fn)(void *), void *arg,
                         const void *caller)
{
    return owner()->create(t, attr, fn, arg, caller);
}

int p2_rt_pthread_join(pthread_t t, void **ret, const void *caller)
{
    return owner()->join(t, ret, caller);
}

int p2_rt_pthread_cond_wait(pthread_cond_t *c, pthread_mutex_t *m, const void *caller)
{
    return owner()->cond_wait(c, m, caller);
}

int p2_rt_pthread_cond_wake(pthread_cond_t *c, int all) { return owner()->cond_wake(c, all); }

void p2_rt_sleep_begin(void) { owner()->sleep(1); }
void p2_rt_sleep_end(void) { owner()->sleep(0); }
