/*
 * p2mpi_intercomm.c - intercommunicators: MPI_Intercomm_create,
 * MPI_Intercomm_merge, MPI_Comm_remote_size, _remote_group, _test_inter.
 * Depends on communicators and groups (p2mpi_comm.c), the collectives and
 * point-to-point below them.
 *
 * An intercommunicator is a pm_comm whose members (size, world) are the
 * remote group's, so that point-to-point on it (every send, receive, probe
 * and wait of the layer, unchanged) reaches the remote group's ranks and a
 * status names the remote rank; its rank is the local rank, and `local` is
 * the local group as an intracommunicator of its own (no handle), which
 * MPI_Comm_size and MPI_Comm_group answer about. Collectives and
 * communicator constructors other than MPI_Intercomm_merge on an
 * intercommunicator end the job naming the call (pm_intra_of).
 *
 * Contexts: the two groups agree on one by a max over each group
 * (allreduce), exchanged by the leaders and broadcast in each group, as Open
 * MPI's and MPICH's context allocation for intercommunicators does; the
 * agreed context is free at every member of both groups. The
 * intercommunicator takes it (point-to-point) and the next (the leaders'
 * exchanges in MPI_Intercomm_merge), its local group the two after.
 * Everything runs on the modelled messages, in simulated time.
 */
#define _GNU_SOURCE
#include "p2mpi_comm.h"

#include <stdlib.h>
#include <string.h>

static pm_comm *inter_of(MPI_Comm comm, const char *call)
{
    pm_comm *c = pm_comm_of(comm, call);
    if (!c->local)
        pm_fatal("the communicator is not an intercommunicator (MPI_ERR_COMM)");
    return c;
}

static int *copy_ints(const int *a, int n)
{
    int *b = malloc(sizeof(int) * (size_t)(n ? n : 1));
    if (!b)
        pm_fatal("out of memory");
    memcpy(b, a, sizeof(int) * (size_t)n);
    return b;
}

int MPI_Intercomm_create(MPI_Comm local_comm, int local_leader, MPI_Comm peer_comm,
                         int remote_leader, int tag, MPI_Comm *out)
{
    CALL("MPI_Intercomm_create");
    pm_comm *lc = pm_intra_of(local_comm, "MPI_Intercomm_create");
    if (local_leader < 0 || local_leader >= lc->size)
        pm_fatal("local leader %d is not a rank of the local communicator (size %d) "
                 "(MPI_ERR_RANK)",
                 local_leader, lc->size);
    /* the largest next context of the local group, then of both */
    int mine = (int)pm_ctx_next(), lmax = 0;
    pm_coll_allreduce_int_max(&mine, &lmax, lc);
    int head[2] = {lc->size, lmax}, rhead[2];
    int *rworld = NULL;
    if (lc->rank == local_leader) { /* the leaders exchange on peer_comm, with the tag */
        pm_comm *pc = pm_intra_of(peer_comm, "MPI_Intercomm_create");
        pm_check_peer(pc, remote_leader, 0);
        if (remote_leader == MPI_PROC_NULL)
            pm_fatal("the remote leader is MPI_PROC_NULL (MPI_ERR_RANK)");
        if (pc->world[remote_leader] == pm_world_rank)
            pm_fatal("the remote leader is this process: the groups must be disjoint "
                     "(MPI_ERR_RANK)");
        pm_sendrecv(head, 2, MPI_INT, remote_leader, tag, rhead, 2, MPI_INT, remote_leader, tag,
                    pc, 0, MPI_STATUS_IGNORE);
        rworld = malloc(sizeof(int) * (size_t)(rhead[0] + 1));
        pm_sendrecv(lc->world, lc->size, MPI_INT, remote_leader, tag, rworld, rhead[0], MPI_INT,
                    remote_leader, tag, pc, 0, MPI_STATUS_IGNORE);
    }
    pm_coll_bcast(rhead, 2, MPI_INT, local_leader, lc);
    if (lc->rank != local_leader)
        rworld = malloc(sizeof(int) * (size_t)(rhead[0] + 1));
    pm_coll_bcast(rworld, rhead[0], MPI_INT, local_leader, lc);
    for (int i = 0; i < rhead[0]; i++)
        if (pm_comm_rank_of(lc, rworld[i]) >= 0)
            pm_fatal("world rank %d is in both groups: they must be disjoint (MPI_ERR_COMM)",
                     rworld[i]);
    uint32_t ctx = (uint32_t)(lmax > rhead[1] ? lmax : rhead[1]);
    pm_ctx_taken(ctx, 2);
    pm_comm *local = calloc(1, sizeof *local);
    if (!local)
        pm_fatal("out of memory");
    local->handle = MPI_COMM_NULL;
    local->size = lc->size;
    local->rank = lc->rank;
    local->world = copy_ints(lc->world, lc->size);
    local->ctx = ctx + 2;
    pm_comm *ic = pm_comm_new(rhead[0], lc->rank, rworld, ctx);
    ic->local = local;
    *out = ic->handle;
    RETURN(MPI_SUCCESS);
}

/* The union of both groups, the group that passed high = 0 first (when both
 * pass the same, the group whose leader has the lower world rank); a
 * context agreed over both groups as at creation. */
int MPI_Intercomm_merge(MPI_Comm intercomm, int high, MPI_Comm *out)
{
    CALL("MPI_Intercomm_merge");
    pm_comm *ic = inter_of(intercomm, "MPI_Intercomm_merge"), *local = ic->local;
    int mine = (int)pm_ctx_next(), lmax = 0;
    pm_coll_allreduce_int_max(&mine, &lmax, local);
    /* the leaders (ranks 0 of both groups) exchange (max, high); each
     * broadcasts the remote's and its own high in its group */
    int head[2] = {lmax, high != 0}, rhead[3] = {0, 0, high != 0};
    if (local->rank == 0)
        pm_sendrecv(head, 2, MPI_INT, 0, PM_TAG_COLL, rhead, 2, MPI_INT, 0, PM_TAG_COLL, ic, 1,
                    MPI_STATUS_IGNORE);
    pm_coll_bcast(rhead, 3, MPI_INT, 0, local);
    int lhigh = rhead[2];
    int local_first = lhigh != rhead[1] ? lhigh < rhead[1] : local->world[0] < ic->world[0];
    uint32_t ctx = (uint32_t)(lmax > rhead[0] ? lmax : rhead[0]);
    pm_ctx_taken(ctx, 1);
    int n = local->size + ic->size;
    int *w = malloc(sizeof(int) * (size_t)n);
    const pm_comm *first = local_first ? local : ic;
    const pm_comm *second = local_first ? ic : local;
    memcpy(w, first->world, sizeof(int) * (size_t)first->size);
    memcpy(w + first->size, second->world, sizeof(int) * (size_t)second->size);
    int rank = (local_first ? 0 : ic->size) + local->rank;
    *out = pm_comm_new(n, rank, w, ctx)->handle;
    RETURN(MPI_SUCCESS);
}

int MPI_Comm_remote_size(MPI_Comm comm, int *size)
{
    CALL("MPI_Comm_remote_size");
    *size = inter_of(comm, "MPI_Comm_remote_size")->size;
    RETURN(MPI_SUCCESS);
}

int MPI_Comm_remote_group(MPI_Comm comm, MPI_Group *group)
{
    CALL("MPI_Comm_remote_group");
    pm_comm *c = inter_of(comm, "MPI_Comm_remote_group");
    *group = pm_group_new(c->size, copy_ints(c->world, c->size));
    RETURN(MPI_SUCCESS);
}

/* The layer's answer (Open MPI's would be about its own handle, a
 * duplicate of MPI_COMM_SELF). */
int MPI_Comm_test_inter(MPI_Comm comm, int *flag)
{
    CALL("MPI_Comm_test_inter");
    *flag = pm_comm_of(comm, "MPI_Comm_test_inter")->local != NULL;
    RETURN(MPI_SUCCESS);
}
