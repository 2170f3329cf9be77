/*
 * coll_persistent.c - persistent requests of p2coll.h: p2_<collective>_init
 * prepares a plan once, p2_start runs it, p2_wait returns its status,
 * p2_request_free releases it.
 *
 * Depends on the plans (coll_plan.c) and the rank runtime.
 */
#include <stdlib.h>

#include "coll.h"
#include "coll_plan.h"
#include "rt/rt.h"

/* A request handle outlives p2_request_free: the plan goes, the few bytes
 * of the handle stay, marked dead, so a copy of a freed handle is refused
 * without reading freed memory and can never name a newer request that
 * malloc placed at the same address. Dead handles stay on a list: memory
 * kept on purpose, not leaked. */
struct p2_request {
    uint32_t magic; /* REQUEST_LIVE until freed */
    int started;
    coll_plan *plan;
    struct p2_request *next_dead;
};
#define REQUEST_LIVE 0x70327271u
#define REQUEST_DEAD 0x64656164u
static struct p2_request *dead_requests;

static tcaresult persistent(coll_kind kind, const void *sendbuf, void *recvbuf, size_t count,
                            tcaDataType type, tcaOp op, int root, p2_comm_t comm,
                            p2_request_t *req)
{
    if (!req)
        return TCA_ERROR_INVALID_ARGUMENT;
    *req = NULL;
    struct p2_request *q = calloc(1, sizeof *q);
    coll_plan *plan = calloc(1, sizeof *plan);
    if (!q || !plan) {
        free(q);
        free(plan);
        return TCA_ERROR_OUT_OF_MEMORY;
    }
    p2_rt_api_begin();
    tcaresult r = coll_plan_prepare(plan, kind, sendbuf, recvbuf, count, type, op, root, comm, 1);
    p2_rt_api_end();
    if (r != TCA_SUCCESS) {
        free(plan);
        free(q);
        return r;
    }
    plan->status = TCA_ERROR_INVALID_HANDLE;
    plan->fixed_buffers = 1;
    *q = (struct p2_request){.magic = REQUEST_LIVE, .plan = plan};
    *req = q;
    return TCA_SUCCESS;
}

/* The request's plan; NULL for NULL or a freed request. */
static coll_plan *request_plan(p2_request_t req)
{
    return req && req->magic == REQUEST_LIVE ? req->plan : NULL;
}

tcaresult p2_barrier_init(p2_comm_t comm, p2_request_t *req)
{
    return persistent(COLL_BARRIER, NULL, NULL, 0, TCA_BYTE, TCA_OP_SUM, 0, comm, req);
}
tcaresult p2_bcast_init(void *buf, size_t count, tcaDataType type, int root, p2_comm_t comm,
                        p2_request_t *req)
{
    return persistent(COLL_BCAST, buf, buf, count, type, TCA_OP_SUM, root, comm, req);
}
tcaresult p2_scatter_init(const void *sendbuf, void *recvbuf, size_t count, tcaDataType type,
                          int root, p2_comm_t comm, p2_request_t *req)
{
    return persistent(COLL_SCATTER, sendbuf, recvbuf, count, type, TCA_OP_SUM, root, comm, req);
}
tcaresult p2_gather_init(const void *sendbuf, void *recvbuf, size_t count, tcaDataType type,
                         int root, p2_comm_t comm, p2_request_t *req)
{
    return persistent(COLL_GATHER, sendbuf, recvbuf, count, type, TCA_OP_SUM, root, comm, req);
}
tcaresult p2_reduce_init(const void *sendbuf, void *recvbuf, size_t count, tcaDataType type,
                         tcaOp op, int root, p2_comm_t comm, p2_request_t *req)
{
    return persistent(COLL_REDUCE, sendbuf, recvbuf, count, type, op, root, comm, req);
}
tcaresult p2_allgather_init(const void *sendbuf, void *recvbuf, size_t count,
                            tcaDataType type, p2_comm_t comm, p2_request_t *req)
{
    return persistent(COLL_ALLGATHER, sendbuf, recvbuf, count, type, TCA_OP_SUM, 0, comm, req);
}
tcaresult p2_allreduce_init(const void *sendbuf, void *recvbuf, size_t count,
                            tcaDataType type, tcaOp op, p2_comm_t comm, p2_request_t *req)
{
    return persistent(COLL_ALLREDUCE, sendbuf, recvbuf, count, type, op, 0, comm, req);
}

tcaresult p2_start(p2_request_t req)
{
    coll_plan *plan = request_plan(req);
    if (!plan || !plan->algo)
        return TCA_ERROR_INVALID_HANDLE;
    p2_rt_api_begin();
    plan->status = coll_plan_run(plan, 0);
    p2_rt_api_end();
    req->started = 1;
    return plan->status;
}

tcaresult p2_wait(p2_request_t req)
{
    coll_plan *plan = request_plan(req);
    if (!plan || !plan->algo || !req->started)
        return TCA_ERROR_INVALID_HANDLE;
    return plan->status;
}

tcaresult p2_request_free(p2_request_t *req)
{
    if (!req)
        return TCA_ERROR_INVALID_ARGUMENT;
    if (!*req)
        return TCA_SUCCESS;
    coll_plan *plan = request_plan(*req);
    if (!plan)
        return TCA_ERROR_INVALID_HANDLE;
    coll_plan_release(plan);
    free(plan);
    **req = (struct p2_request){.magic = REQUEST_DEAD, .next_dead = dead_requests};
    dead_requests = *req;
    *req = NULL;
    return TCA_SUCCESS;
}

const char *p2_request_algorithm(p2_request_t req)
{
    coll_plan *plan = request_plan(req);
    return plan && plan->algo ? plan->algo->name : "";
}
