/*
 * rt_lanes.c - the rank runtime's state and its threads' lanes: what both
 * the core (rt_emu.c) and the threads unit (rt_threads.c) need of a lane.
 *
 * A thread that uses the libraries runs on a lane of its own (emu/channel.h):
 * a channel to the simulator with its own clock. Here a free lane is claimed
 * at the clock its thread starts from and bound to the calling thread, a
 * parked thread that calls the libraries unparks itself, and requests are
 * posted on a lane's ring. Depends on emu's channel and the meters
 * (rt_meter.c, which a bound thread starts); what ends a bound
 * thread's lane is the threads unit's (rt_state.thread_exit, set before the
 * runtime attaches).
 */
#define _GNU_SOURCE
#include <stdio.h>
#include <stdlib.h>
#include <sys/syscall.h>
#include <unistd.h>

#include "channel.h"
#include "rt/rt_state.h"

rt_state p2_rt_self = {.lock = PTHREAD_MUTEX_INITIALIZER};
__thread rt_lane *p2_rt_tl_lane; /* this thread's lane, once it has one */
#define tl_lane p2_rt_tl_lane

static pthread_key_t exit_key;
static pthread_once_t exit_key_once = PTHREAD_ONCE_INIT;

/* ---- Lanes -------------------------------------------------------------- */

/* Takes a free lane (under rt.lock) for a thread starting at clock_ps: the
 * simulator holds the rank's time there until the thread sends something,
 * parks or ends. A lane is free once its last thread's EXIT is on its ring
 * (rt_thread_exit), whether or not the simulator has run it: what follows
 * in the ring is the new thread's session (model/sim/frontend_admit.cc), so
 * no thread waits for a lane on the model's progress or the host's timing. */
rt_lane *rt_take_lane_locked(rt_state *s, uint64_t clock_ps)
{
    for (unsigned k = 1; k < P2_RANK_LANES; k++) {
        rt_lane *l = &s->lanes[k];
        if (l->used)
            continue;
        l->used = 1;
        l->clock_ps = clock_ps;
        l->api_depth = 0;
        l->exited = 0;
        l->parked = l->woken = 0;
        l->park_kind = PARK_NONE;
        l->read_last_ps = UINT64_MAX;
        l->read_run = 0;
        l->parks = p2_ld(&l->channel->parked_seq);
        p2_st_sc(&l->channel->tid, 0);
        p2_st_sc(&l->channel->clock_floor, (int64_t)clock_ps);
        p2_st_sc(&l->channel->clock_pub, s->clock_mode != P2_CLOCK_CPU
                                             ? (int64_t)clock_ps
                                             : (int64_t)P2_CLOCK_UNKNOWN);
        p2_st_sc(&l->channel->lane_claims, p2_ld(&l->channel->lane_claims) + 1);
        p2_st_sc(&l->channel->state, (uint32_t)P2_RANK_ATTACHED);
        __atomic_fetch_add(&s->job->lanes_taken, 1, __ATOMIC_SEQ_CST);
        p2_job_ring(s->job);
        return l;
    }
    return NULL;
}

static void make_exit_key(void) { pthread_key_create(&exit_key, p2_rt_self.thread_exit); }

/* The calling thread runs on `l` from now on. */
void rt_bind_lane(rt_state *s, rt_lane *l)
{
    tl_lane = l;
    l->thread = pthread_self();
    char err[600];
    if (rt_meter_bind(s, l, err, sizeof err) != 0) {
        /* p2run checked the counter before the job: only a limit (open
         * files) fails here, and a thread whose work went uncharged would
         * give wrong times silently */
        fprintf(stderr, "p2: rank %d: a thread's %s\n", s->pub.rank, err);
        exit(EXIT_FAILURE);
    }
    p2_st_sc(&l->channel->tid, (int32_t)syscall(SYS_gettid));
    if (s->clock_mode == P2_CLOCK_CPU)
        p2_st_sc(&l->channel->clock_pub,
                 (int64_t)l->clock_ps - l->cpu_mark_ps - s->cpu_read_ps);
    pthread_once(&exit_key_once, make_exit_key);
    pthread_setspecific(exit_key, l);
}

/* The latest clock any thread of the rank has reached, or the model's time. */
static uint64_t rank_time_locked(rt_state *s)
{
    uint64_t t = (uint64_t)p2_ld(&s->job->sim_now_ps);
    for (unsigned k = 0; k < P2_RANK_LANES; k++)
        if (s->lanes[k].used && s->lanes[k].clock_ps > t)
            t = s->lanes[k].clock_ps;
    return t;
}

rt_lane *rt_claim_lane(rt_state *s)
{
    if (!s->attached)
        return NULL;
    pthread_mutex_lock(&s->lock);
    rt_lane *l = rt_take_lane_locked(s, rank_time_locked(s));
    pthread_mutex_unlock(&s->lock);
    if (!l) {
        static int told;
        if (!__atomic_exchange_n(&told, 1, __ATOMIC_RELAXED))
            fprintf(stderr, "p2: rank %d: more than %d threads use the simulator's libraries "
                            "at once (P2_RANK_LANES); the calls of the others fail\n",
                    s->pub.rank, P2_RANK_LANES);
        return NULL;
    }
    rt_bind_lane(s, l);
    return l;
}

/* A parked thread (rt_threads.c) that calls the libraries: woken by a lane's
 * thread, it runs again from the waker's clock; not woken, it tells the
 * simulator it runs again itself. */
void rt_unpark_self(rt_state *s, rt_lane *l)
{
    pthread_mutex_lock(&s->lock);
    if (l->parked && l->woken) {
        l->parked = 0;
        if (l->wake_ps > l->clock_ps)
            l->clock_ps = l->wake_ps;
    } else if (l->parked) {
        /* Nobody's wake ordered this thread: it goes on no earlier than the
         * model has run meanwhile. */
        uint64_t now = (uint64_t)p2_ld(&s->job->sim_now_ps);
        if (now > l->clock_ps)
            l->clock_ps = now;
        p2_chan_req req = {.op = P2_CHAN_UNPARK, .a = l->index, .b = l->parks};
        rt_post_on(s, l, &req);
        l->parked = 0;
    }
    pthread_mutex_unlock(&s->lock);
}

/* ---- Posting ------------------------------------------------------------ */

void rt_fail(rt_state *s)
{
    if (!s->failed)
        fprintf(stderr, "p2: rank %d: the simulator is gone; device calls fail from now on\n",
                s->pub.rank);
    s->failed = 1;
}

/* Pushes `req`, stamped with the lane's clock, onto the lane's ring. */
int rt_post_on(rt_state *s, rt_lane *l, p2_chan_req *req)
{
    if (s->failed || l->exited)
        return -1;
    req->stamp_ps = l->clock_ps;
    pthread_mutex_lock(&l->post);
    int r = p2_chan_push(s->job, l->channel, req);
    pthread_mutex_unlock(&l->post);
    if (r != 0) {
        rt_fail(s);
        return -1;
    }
    return 0;
}
