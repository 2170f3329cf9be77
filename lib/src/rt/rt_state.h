/*
 * rt_state.h - the rank runtime's private state, shared by rt_emu.c (the
 * clock and the channel) and rt_threads.c (threads: their lanes, parking).
 */
#ifndef P2_RT_STATE_H
#define P2_RT_STATE_H

#include <pthread.h>
#include <stdint.h>

#include "arena.h"
#include "rt/rt.h"

/* One channel of the rank (emu/channel.h, "lanes"): lane 0 is the thread
 * that attached, before main; every further program thread that uses the
 * libraries gets a lane of its own (rt_threads.c), with its own clock, so
 * that one thread blocked in a wait never stops another. Lane state is the
 * lane's thread's alone, except what the parking calls touch under rt.lock. */
typedef struct rt_lane {
    p2_job_rank *channel;
    unsigned index;
    int used;                /* bound to a thread (or reserved for a new one) */
    uint64_t clock_ps;       /* the thread's virtual clock */
    int64_t cpu_mark_ps;     /* --clock=cpu: CPU time when the thread last left the libraries */
    int api_depth;           /* library calls in progress (nesting) */
    uint32_t seq;            /* of the last blocking request */
    int exited;
    pthread_mutex_t post;    /* the ring's one producer: this thread, or exit/wake paths */
    /* Parking (rt_threads.c), under rt.lock: */
    uint32_t parks;          /* times parked: the channel's parked_seq */
    int parked, woken;       /* parked now; an UNPARK ended this parking */
    uint64_t wake_ps;        /* the clock of the thread that woke it */
    int park_kind;           /* what it sleeps on (rt_threads.c) */
    const void *park_obj;
    pthread_t thread;        /* the thread bound to it */
} rt_lane;

typedef struct rt_state {
    pthread_mutex_t lock;    /* lanes: claiming, parking */
    p2_rt pub;               /* what p2_rt_get hands out */
    p2_job *job;
    p2_arena host, gpu;
    p2_clock_mode clock_mode;
    int64_t cpu_read_ps;     /* --clock=cpu: what one read of the CPU-time clock costs */
    rt_lane lanes[P2_RANK_LANES];
    int attached, failed;
} rt_state;


/* The calls rt_threads.c interposes, as the channel's owning copy of the
 * runtime runs them (a second copy forwards, rt_emu.c "One runtime per
 * process"). */
typedef struct p2_rt_threads {
    int (*create)(pthread_t *, const pthread_attr_t *, void *(*)(void *), void *,
                  const void *caller);
    int (*cond_wait)(pthread_cond_t *, pthread_mutex_t *, const void *caller);
    int (*cond_wake)(pthread_cond_t *, int all);
    int (*join)(pthread_t, void **, const void *caller);
} p2_rt_threads;

extern rt_state p2_rt_self;
extern __thread rt_lane *p2_rt_tl_lane;
extern const p2_rt_threads p2_rt_threads_own;

/* rt_emu.c */
int rt_post_on(rt_state *s, rt_lane *l, p2_chan_req *req);
const p2_rt_threads *rt_threads_forward(void); /* NULL: this copy owns the channel */

/* rt_threads.c */
rt_lane *rt_claim_lane(rt_state *s);           /* for a thread that has none */
void rt_unpark_self(rt_state *s, rt_lane *l);  /* a parked thread calls the libraries */

#endif /* P2_RT_STATE_H */
