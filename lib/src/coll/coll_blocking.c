/*
 * coll_blocking.c - the blocking calls of p2coll.h (p2_barrier ...
 * p2_allreduce), the cache of plans they reuse, and p2_comm_free, which is
 * collective too.
 *
 * Depends on the plans (coll_plan.c), the communicators and the rank
 * runtime (the activity the deadlock diagnosis names).
 */
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "coll.h"
#include "coll_plan.h"
#include "rt/rt.h"

/*
 * MPI exchanges nothing per call: the arguments must match, and the library
 * trusts them. So a blocking call reuses the plan of an earlier call with the
 * same (communicator, collective, count, type, op, root): its algorithm,
 * scratch and the peers' scratch handles. Only the first such call pays the
 * exchange; later ones are the algorithm alone, with the ready tokens that
 * carry each rank's current recv handle (every rank may pass other buffers
 * each time) and the arguments' signature (a rank whose call differs from its
 * peer's gets TCA_ERROR_INVALID_ARGUMENT). Every rank makes the same calls in
 * the same order, so every rank hits and misses this cache alike.
 * P2_COLL_CHECK=1 makes every call exchange and check its arguments as the
 * first does (a rank whose call differs so that the others hit while it
 * misses waits for them in the exchange: the simulator's deadlock diagnosis
 * names the calls). */
#define PLAN_CACHE 8

typedef struct cached_plan {
    int valid;
    uint64_t used; /* for least-recently-used replacement */
    coll_kind kind;
    size_t count;
    tcaDataType type;
    tcaOp op;
    int root;
    int kinds;       /* buffer_kinds */
    char forced[24]; /* P2_COLL_<COLLECTIVE> when the plan was made */
    const void *sendbuf, *recvbuf; /* as the plan's buffers were given */
    coll_plan plan;
} cached_plan;

static cached_plan plan_cache[PLAN_CACHE];
static uint64_t plan_cache_clock;

static int check_every_call(void)
{
    static int v = -1;
    if (v < 0) {
        const char *e = getenv("P2_COLL_CHECK");
        v = e && *e && strcmp(e, "0") != 0;
    }
    return v;
}

/* Releases the cached plans on `comm`, which is being freed. */
static void plan_cache_drop(p2_comm_t comm)
{
    for (int i = 0; i < PLAN_CACHE; i++)
        if (plan_cache[i].valid && plan_cache[i].plan.comm == comm) {
            coll_plan_release(&plan_cache[i].plan);
            plan_cache[i].valid = 0;
        }
}

/* Whether GPU memory is involved: a plan's algorithm was chosen for its
 * buffers (some run on host memory only), so a change makes a new plan, on
 * every rank alike when the program changes its buffers alike. (In place or
 * not may differ between ranks and calls: it is only a rebind.) */
static int buffer_kinds(const void *sendbuf, const void *recvbuf)
{
    int s = sendbuf && sendbuf != P2_IN_PLACE ? coll_memory_kind(sendbuf, 1) : -1;
    int r = recvbuf && recvbuf != P2_IN_PLACE ? coll_memory_kind(recvbuf, 1) : -1;
    return s == tcaMemoryGPU || r == tcaMemoryGPU;
}

static void set_activity(const char *call)
{
    p2_rt *rt = p2_rt_get();
    if (!rt || !rt->job)
        return;
    p2_job_rank *slot = &rt->job->ranks[rt->rank]; /* the diagnosis reads lane 0's */
    if (call) {
        snprintf(slot->mpi_wait, sizeof slot->mpi_wait, "%s", call);
        p2_st_sc(&slot->mpi_since_ps, p2_rt_clock_ps(rt));
    } else
        slot->mpi_wait[0] = '\0';
}

static tcaresult blocking(coll_kind kind, const void *sendbuf, void *recvbuf, size_t count,
                          tcaDataType type, tcaOp op, int root, p2_comm_t comm)
{
    p2_rt_api_begin();
    char call[40];
    snprintf(call, sizeof call, "p2_%s (count %zu, root %d)", coll_kind_names[kind], count, root);
    set_activity(call);
    tcaresult r = TCA_SUCCESS;
    p2_comm_t c;
    cached_plan *hit = NULL, *victim = NULL;
    if (kind == COLL_BARRIER)
        count = 0, type = TCA_BYTE, root = 0;
    if (!coll_rooted(kind))
        root = 0;
    if (kind != COLL_REDUCE && kind != COLL_ALLREDUCE)
        op = TCA_OP_SUM;
    int kinds = buffer_kinds(sendbuf, recvbuf);
    char forced[24];
    coll_forced_name(kind, forced, sizeof forced);
    if (!check_every_call() && coll_comm_get(comm, &c) == TCA_SUCCESS) {
        for (int i = 0; i < PLAN_CACHE; i++) {
            cached_plan *e = &plan_cache[i];
            if (e->valid && e->plan.comm == c && e->kind == kind && e->count == count &&
                e->type == type && e->op == op && e->root == root && e->kinds == kinds &&
                strcmp(e->forced, forced) == 0)
                hit = e;
            if (!victim || (victim->valid && (!e->valid || e->used < victim->used)))
                victim = e;
        }
    }
    if (hit) {
        hit->used = ++plan_cache_clock;
        if (sendbuf != hit->sendbuf || recvbuf != hit->recvbuf) {
            r = coll_plan_rebind(&hit->plan, sendbuf, recvbuf);
            hit->sendbuf = sendbuf;
            hit->recvbuf = recvbuf;
            if (r != TCA_SUCCESS)
                hit->sendbuf = hit->recvbuf = NULL; /* rebind again next time */
        }
        if (r == TCA_SUCCESS)
            r = coll_plan_run(&hit->plan, 0);
    } else {
        coll_plan p;
        r = coll_plan_prepare(&p, kind, sendbuf, recvbuf, count, type, op, root, comm, 0);
        if (r == TCA_SUCCESS) {
            r = coll_plan_run(&p, 1);
            if (r == TCA_SUCCESS && victim) {
                if (victim->valid)
                    coll_plan_release(&victim->plan);
                *victim = (cached_plan){1,     ++plan_cache_clock, kind, count, type, op, root,
                                        kinds, "",      sendbuf,           recvbuf, p};
                memcpy(victim->forced, forced, sizeof forced);
            } else
                coll_plan_release(&p);
        }
    }
    set_activity(NULL);
    p2_rt_api_end();
    return r;
}

tcaresult p2_barrier(p2_comm_t comm)
{
    return blocking(COLL_BARRIER, NULL, NULL, 0, TCA_BYTE, TCA_OP_SUM, 0, comm);
}
tcaresult p2_bcast(void *buf, size_t count, tcaDataType type, int root, p2_comm_t comm)
{
    return blocking(COLL_BCAST, buf, buf, count, type, TCA_OP_SUM, root, comm);
}
tcaresult p2_scatter(const void *sendbuf, void *recvbuf, size_t count, tcaDataType type,
                     int root, p2_comm_t comm)
{
    return blocking(COLL_SCATTER, sendbuf, recvbuf, count, type, TCA_OP_SUM, root, comm);
}
tcaresult p2_gather(const void *sendbuf, void *recvbuf, size_t count, tcaDataType type,
                    int root, p2_comm_t comm)
{
    return blocking(COLL_GATHER, sendbuf, recvbuf, count, type, TCA_OP_SUM, root, comm);
}
tcaresult p2_reduce(const void *sendbuf, void *recvbuf, size_t count, tcaDataType type,
                    tcaOp op, int root, p2_comm_t comm)
{
    return blocking(COLL_REDUCE, sendbuf, recvbuf, count, type, op, root, comm);
}
tcaresult p2_allgather(const void *sendbuf, void *recvbuf, size_t count, tcaDataType type,
                       p2_comm_t comm)
{
    return blocking(COLL_ALLGATHER, sendbuf, recvbuf, count, type, TCA_OP_SUM, 0, comm);
}
tcaresult p2_allreduce(const void *sendbuf, void *recvbuf, size_t count, tcaDataType type,
                       tcaOp op, p2_comm_t comm)
{
    return blocking(COLL_ALLREDUCE, sendbuf, recvbuf, count, type, op, 0, comm);
}

tcaresult p2_comm_free(p2_comm_t *comm)
{
    if (!comm)
        return TCA_ERROR_INVALID_ARGUMENT;
    if (*comm == P2_COMM_NULL)
        return TCA_SUCCESS;
    tcaresult r = coll_comm_check_free(*comm);
    if (r != TCA_SUCCESS)
        return r;
    /* Nobody writes into this mailbox once every member has left the last
     * collective on it; a barrier makes sure. */
    r = p2_barrier(*comm);
    plan_cache_drop(*comm);
    coll_comm_release(*comm);
    *comm = P2_COMM_NULL;
    return r;
}
