/*
 * p2mpi_rma_calls.c - the MPI one-sided communication calls: MPI_Put, _Get,
 * _Accumulate, _Get_accumulate, _Fetch_and_op, _Compare_and_swap and the
 * request-based MPI_Rput, _Rget, _Raccumulate, _Rget_accumulate. Each costs
 * mpi_call_ns and hands its operation to the mechanism (p2mpi_rma.c), which
 * it depends on with the units below it.
 */
#define _GNU_SOURCE
#include "p2mpi_rma.h"

/* The bracket of a one-sided call: its name, the window, its cost. */
static pm_win *begin(const char *call, MPI_Win win)
{
    pm_enter(call);
    pm_need_init(call);
    pm_win *w = pm_win_of(win);
    pm_charge(p2_ns_ps(E.rt->prm.mpi_call_ns));
    return w;
}

/* Request-based operations return a request and belong to passive-target
 * epochs (MPI-3.1 11.3.5). */
static void need_passive(pm_win *w, int target, const MPI_Request *req)
{
    pm_need_req(req, "request");
    if (target != MPI_PROC_NULL && !w->lock_all && !(target >= 0 && target < w->comm->size && w->locked[target]))
        pm_fatal("request-based operations need a passive-target epoch on rank %d: "
                 "MPI_Win_lock or MPI_Win_lock_all (MPI_ERR_RMA_SYNC)",
                 target);
}

/* A request for an operation that needs none (MPI_PROC_NULL), complete. */
static MPI_Request done_req(void)
{
    pm_req *r = pm_req_new(RQ_SEND);
    r->peer = MPI_PROC_NULL;
    r->active = 1;
    r->done = 1;
    return as_handle(r);
}

static MPI_Request req_of(uint64_t id) { return as_handle(pm_req_by_id(id)); }

int MPI_Put(const void *origin, int ocount, MPI_Datatype otype, int target, MPI_Aint tdisp,
            int tcount, MPI_Datatype ttype, MPI_Win win)
{
    pm_win *w = begin("MPI_Put", win);
    if (target != MPI_PROC_NULL)
        pm_rma_op(PM_PUT, w, target, origin, ocount, otype, NULL, 0, MPI_BYTE, NULL, tdisp, tcount,
                  ttype, MPI_OP_NULL, 0);
    RETURN(MPI_SUCCESS);
}

int MPI_Get(void *origin, int ocount, MPI_Datatype otype, int target, MPI_Aint tdisp, int tcount,
            MPI_Datatype ttype, MPI_Win win)
{
    pm_win *w = begin("MPI_Get", win);
    if (target != MPI_PROC_NULL)
        pm_rma_op(PM_GET, w, target, origin, ocount, otype, NULL, 0, MPI_BYTE, NULL, tdisp, tcount,
                  ttype, MPI_OP_NULL, 0);
    RETURN(MPI_SUCCESS);
}

int MPI_Accumulate(const void *origin, int ocount, MPI_Datatype otype, int target, MPI_Aint tdisp,
                   int tcount, MPI_Datatype ttype, MPI_Op op, MPI_Win win)
{
    pm_win *w = begin("MPI_Accumulate", win);
    if (op == MPI_NO_OP)
        pm_fatal("MPI_NO_OP is for MPI_Get_accumulate and MPI_Fetch_and_op (MPI_ERR_OP)");
    if (target != MPI_PROC_NULL)
        pm_rma_op(PM_ACC, w, target, origin, ocount, otype, NULL, 0, MPI_BYTE, NULL, tdisp, tcount,
                  ttype, op, 0);
    RETURN(MPI_SUCCESS);
}

int MPI_Get_accumulate(const void *origin, int ocount, MPI_Datatype otype, void *result,
                       int rcount, MPI_Datatype rtype, int target, MPI_Aint tdisp, int tcount,
                       MPI_Datatype ttype, MPI_Op op, MPI_Win win)
{
    pm_win *w = begin("MPI_Get_accumulate", win);
    if (target != MPI_PROC_NULL)
        pm_rma_op(PM_GET_ACC, w, target, origin, ocount, otype, result, rcount, rtype, NULL, tdisp,
                  tcount, ttype, op, 0);
    RETURN(MPI_SUCCESS);
}

int MPI_Fetch_and_op(const void *origin, void *result, MPI_Datatype type, int target,
                     MPI_Aint tdisp, MPI_Op op, MPI_Win win)
{
    pm_win *w = begin("MPI_Fetch_and_op", win);
    if (target != MPI_PROC_NULL)
        pm_rma_op(PM_GET_ACC, w, target, origin, 1, type, result, 1, type, NULL, tdisp, 1, type, op,
                  0);
    RETURN(MPI_SUCCESS);
}

int MPI_Compare_and_swap(const void *origin, const void *compare, void *result, MPI_Datatype type,
                         int target, MPI_Aint tdisp, MPI_Win win)
{
    pm_win *w = begin("MPI_Compare_and_swap", win);
    if (target != MPI_PROC_NULL)
        pm_rma_op(PM_CAS, w, target, origin, 1, type, result, 1, type, compare, tdisp, 1, type,
                  MPI_REPLACE, 0);
    RETURN(MPI_SUCCESS);
}

int MPI_Rput(const void *origin, int ocount, MPI_Datatype otype, int target, MPI_Aint tdisp,
             int tcount, MPI_Datatype ttype, MPI_Win win, MPI_Request *req)
{
    pm_win *w = begin("MPI_Rput", win);
    need_passive(w, target, req);
    *req = target == MPI_PROC_NULL
               ? done_req()
               : req_of(pm_rma_op(PM_PUT, w, target, origin, ocount, otype, NULL, 0, MPI_BYTE, NULL,
                                  tdisp, tcount, ttype, MPI_OP_NULL, 1));
    RETURN(MPI_SUCCESS);
}

int MPI_Rget(void *origin, int ocount, MPI_Datatype otype, int target, MPI_Aint tdisp, int tcount,
             MPI_Datatype ttype, MPI_Win win, MPI_Request *req)
{
    pm_win *w = begin("MPI_Rget", win);
    need_passive(w, target, req);
    *req = target == MPI_PROC_NULL
               ? done_req()
               : req_of(pm_rma_op(PM_GET, w, target, origin, ocount, otype, NULL, 0, MPI_BYTE, NULL,
                                  tdisp, tcount, ttype, MPI_OP_NULL, 1));
    RETURN(MPI_SUCCESS);
}

int MPI_Raccumulate(const void *origin, int ocount, MPI_Datatype otype, int target, MPI_Aint tdisp,
                    int tcount, MPI_Datatype ttype, MPI_Op op, MPI_Win win, MPI_Request *req)
{
    pm_win *w = begin("MPI_Raccumulate", win);
    need_passive(w, target, req);
    if (op == MPI_NO_OP)
        pm_fatal("MPI_NO_OP is for MPI_Get_accumulate and MPI_Fetch_and_op (MPI_ERR_OP)");
    *req = target == MPI_PROC_NULL
               ? done_req()
               : req_of(pm_rma_op(PM_ACC, w, target, origin, ocount, otype, NULL, 0, MPI_BYTE, NULL,
                                  tdisp, tcount, ttype, op, 1));
    RETURN(MPI_SUCCESS);
}

int MPI_Rget_accumulate(const void *origin, int ocount, MPI_Datatype otype, void *result,
                        int rcount, MPI_Datatype rtype, int target, MPI_Aint tdisp, int tcount,
                        MPI_Datatype ttype, MPI_Op op, MPI_Win win, MPI_Request *req)
{
    pm_win *w = begin("MPI_Rget_accumulate", win);
    need_passive(w, target, req);
    *req = target == MPI_PROC_NULL
               ? done_req()
               : req_of(pm_rma_op(PM_GET_ACC, w, target, origin, ocount, otype, result, rcount,
                                  rtype, NULL, tdisp, tcount, ttype, op, 1));
    RETURN(MPI_SUCCESS);
}
