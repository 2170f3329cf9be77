/*
 * rt_state.h - the rank runtime's private state and the calls its units make
 * of each other. The units call one way, each only those below it:
 *   rt_lanes.c    the state, a thread's lane (claiming, binding, unparking
 *                 itself) and posting on a lane's ring
 *   rt_meter.c    the host's clocks, and the program's own work between
 *                 library calls (CPU time, instructions) on a lane
 *   rt_emu.c      the core: attaching, the clock, enter/leave, requests
 *   rt_threads.c  the program's threads: the pthread_* interposers, parking
 *                 and waking, thread ends, joins
 *   rt_process.c  one runtime per process: attaching on first use, or
 *                 forwarding to the copy that owns the channel
 *   rt_time.c     the program's clocks (gettimeofday, clock_gettime, time,
 *                 timespec_get): the rank's virtual clock for the program's
 *                 own calls
 * (rt_meter.c is used by the lanes and everything above them.)
 */
#ifndef P2_RT_STATE_H
#define P2_RT_STATE_H

#include <pthread.h>
#include <stdint.h>
#include <time.h>

#include "arena.h"
#include "rt/rt.h"

/* What a parked lane sleeps on (rt_threads.c) */
enum { PARK_NONE = 0, PARK_COND = 1, PARK_JOIN = 2, PARK_SLEEP = 3 };

/* One channel of the rank (emu/channel.h, "lanes"): lane 0 is the thread
 * that attached, before main; every further program thread that uses the
 * libraries gets a lane of its own (rt_lanes.c, rt_threads.c), with its own
 * clock, so that one thread blocked in a wait never stops another. Lane state
 * is the lane's thread's alone, except what the parking calls touch under
 * rt.lock. */
typedef struct rt_lane {
    p2_job_rank *channel;
    unsigned index;
    int used;                /* bound to a thread (or reserved for a new one) */
    uint64_t clock_ps;       /* the thread's virtual clock */
    int64_t cpu_mark_ps;     /* CPU time when the thread last left the libraries */
    int instr_fd;            /* --clock=instructions: the thread's counter (emu/instr_counter.h) */
    uint64_t instr_mark;     /* ... its count when the thread last left the libraries */
    uint64_t read_last_ps;   /* the clock the program's last read of it left (p2_rt_read_clock) */
    unsigned read_run;       /* reads of the clock since modelled work last moved it */
    int api_depth;           /* library calls in progress (nesting) */
    uint32_t seq;            /* of the last blocking request */
    int exited;
    pthread_mutex_t post;    /* the ring's one producer: this thread, or exit/wake paths */
    /* Parking (rt_threads.c), under rt.lock: */
    uint32_t parks;          /* times parked: the channel's parked_seq */
    int parked, woken;       /* parked now; an UNPARK ended this parking */
    uint64_t wake_ps;        /* the clock of the thread that woke it */
    int park_kind;           /* what it sleeps on (PARK_*) */
    const void *park_obj;
    pthread_t thread;        /* the thread bound to it */
} rt_lane;

typedef struct rt_state {
    pthread_mutex_t lock;    /* lanes: claiming, parking */
    p2_rt pub;               /* what p2_rt_get hands out */
    p2_job *job;
    p2_arena host, gpu;
    p2_clock_mode clock_mode;
    int64_t cpu_read_ps;     /* what one read of the CPU-time clock costs */
    uint64_t instr_read;     /* --clock=instructions: one read of the counter's own instructions */
    rt_lane lanes[P2_RANK_LANES];
    int attached, failed;
    /* A thread bound to a lane ended (the destructor of its thread-specific
     * lane, rt_threads.c): set before attaching (rt_process.c) */
    void (*thread_exit)(void *lane);
} rt_state;

/* The calls rt_threads.c interposes, as the channel's owning copy of the
 * runtime runs them (a second copy forwards, rt_process.c "One runtime per
 * process"). */
typedef struct p2_rt_threads {
    int (*create)(pthread_t *, const pthread_attr_t *, void *(*)(void *), void *,
                  const void *caller);
    int (*cond_wait)(pthread_cond_t *, pthread_mutex_t *, const void *caller);
    int (*cond_wake)(pthread_cond_t *, int all);
    int (*join)(pthread_t, void **, const void *caller);
    void (*sleep)(int begin); /* p2_rt_sleep_begin (1), p2_rt_sleep_end (0) */
} p2_rt_threads;

/* The owning copy's functions, which a second copy forwards to (rt_process.c). */
typedef struct rt_table {
    p2_rt *(*get)(void);
    double (*wtime)(void);
    void (*compute)(double);
    void (*enter)(p2_rt *);
    void (*leave)(p2_rt *);
    void (*api_begin)(void);
    void (*api_begin_call)(const char *);
    void (*api_end)(void);
    uint64_t (*read_clock)(p2_rt *, uint64_t);
    uint64_t (*clock_ps)(const p2_rt *);
    void (*charge_ps)(p2_rt *, uint64_t);
    void (*advance_to)(p2_rt *, uint64_t);
    int (*post)(p2_rt *, p2_chan_req *);
    int (*call)(p2_rt *, p2_chan_req *, p2_chan_resp *);
    int (*wait_mem)(p2_rt *, const volatile uint64_t *, uint64_t, uint64_t, int);
    const p2_rt_threads *threads;
    p2_job_rank *(*lane_channel)(p2_rt *);
    int (*lanes_used)(p2_rt *);
} rt_table;

/* rt_lanes.c */
extern rt_state p2_rt_self;
extern __thread rt_lane *p2_rt_tl_lane;       /* this thread's lane, once it has one */
rt_lane *rt_take_lane_locked(rt_state *s, uint64_t clock_ps); /* under rt.lock; NULL: none free */
void rt_bind_lane(rt_state *s, rt_lane *l);   /* the calling thread runs on l */
rt_lane *rt_claim_lane(rt_state *s);           /* for a thread that has none */
void rt_unpark_self(rt_state *s, rt_lane *l);  /* a parked thread calls the libraries */
void rt_fail(rt_state *s);                     /* the simulator is gone */
int rt_post_on(rt_state *s, rt_lane *l, p2_chan_req *req);

/* rt_meter.c */
int rt_host_clock(clockid_t id, struct timespec *ts); /* the C library's, never the program's */
int64_t rt_thread_cpu_ps(void);                /* the calling thread's CPU time */
int64_t rt_cpu_read_cost_ps(void);             /* what one read of it costs */
/* The calling thread starts metering on l (its counter opened under
 * --clock=instructions): 0, or -1 with the reason in err. */
int rt_meter_bind(rt_state *s, rt_lane *l, char *err, size_t errlen);
void rt_meter_unbind(rt_lane *l);              /* the lane's thread ended */
/* The thread enters the libraries: the span since it left is the program's;
 * returns what the clock mode charges for it (ps). */
uint64_t rt_meter_enter(rt_state *s, rt_lane *l);
void rt_meter_leave(rt_state *s, rt_lane *l);  /* ... and leaves them */
void rt_meter_call(rt_lane *l, const char *call); /* the call it entered, for messages */

/* rt_emu.c */
extern const rt_table *p2_rt_fwd;              /* set: another copy owns the channel */
#define FORWARD(fn, ...)                    \
    do {                                    \
        if (p2_rt_fwd)                      \
            return p2_rt_fwd->fn(__VA_ARGS__); \
    } while (0)
int rt_attach(rt_state *s, char *err, size_t errlen);
void rt_clock_overflow(const p2_rt *r, const char *call, double seconds); /* ends the rank */
const p2_rt_threads *rt_threads_forward(void); /* NULL: this copy owns the channel */

/* rt_threads.c */
extern const p2_rt_threads p2_rt_threads_own;
void rt_thread_exit(void *lane);               /* rt_state.thread_exit */

#endif /* P2_RT_STATE_H */
