/*
 * p2mpi_comm.c - communicators and groups: MPI_Comm_dup, _split,
 * _split_type, _create, _free, _compare and the group calls (with the
 * groups' Fortran handles, MPI_Group_c2f/_f2c). A new communicator's context id is
 * agreed on by a collective over its parent (p2mpi_coll.h); the table of
 * communicators is p2mpi_core.c's. Depends on the collectives and the units
 * below them.
 */
#define _GNU_SOURCE
#include "p2mpi_coll.h"

#include <stdlib.h>
#include <string.h>

static uint32_t next_ctx = 4;

/* ---- Communicator management ------------------------------------------------------ */

/* A context id every member of `parent` agrees on: the largest next one any
 * of them has (a max-allreduce over the parent's collective context). */
static uint32_t agree_ctx(pm_comm *parent)
{
    int mine = (int)next_ctx, all = 0;
    pm_coll_allreduce_int_max(&mine, &all, parent);
    next_ctx = (uint32_t)all + 2;
    return (uint32_t)all;
}

static pm_comm *comm_new(int size, int rank, int *world, uint32_t ctx)
{
    pm_comm *c = calloc(1, sizeof *c);
    c->size = size;
    c->rank = rank;
    c->world = world;
    c->ctx = ctx;
    if (PMPI_Comm_dup(MPI_COMM_SELF, &c->handle) != MPI_SUCCESS)
        pm_fatal("Open MPI could not make a communicator handle");
    pm_comm_link(c);
    return c;
}

int MPI_Comm_dup(MPI_Comm comm, MPI_Comm *out)
{
    CALL("MPI_Comm_dup");
    pm_comm *p = pm_comm_of(comm, "MPI_Comm_dup");
    uint32_t ctx = agree_ctx(p);
    int *w = malloc(sizeof(int) * (size_t)p->size);
    memcpy(w, p->world, sizeof(int) * (size_t)p->size);
    *out = comm_new(p->size, p->rank, w, ctx)->handle;
    RETURN(MPI_SUCCESS);
}

/* Members with the same color, ordered by (key, parent rank). */
static MPI_Comm split(pm_comm *p, int color, int key)
{
    int mine[2] = {color, key};
    int *all = malloc(sizeof(int) * 2 * (size_t)p->size);
    pm_coll_allgather_ints(mine, 2, all, p);
    uint32_t ctx = agree_ctx(p);
    if (color == MPI_UNDEFINED) {
        free(all);
        return MPI_COMM_NULL;
    }
    int n = 0;
    int *members = malloc(sizeof(int) * (size_t)p->size);
    for (int i = 0; i < p->size; i++)
        if (all[2 * i] == color)
            members[n++] = i;
    for (int i = 1; i < n; i++) /* insertion sort by (key, parent rank): stable */
        for (int j = i; j > 0 && all[2 * members[j - 1] + 1] > all[2 * members[j] + 1]; j--) {
            int t = members[j];
            members[j] = members[j - 1];
            members[j - 1] = t;
        }
    int *w = malloc(sizeof(int) * (size_t)n), rank = -1;
    for (int i = 0; i < n; i++) {
        w[i] = p->world[members[i]];
        if (members[i] == p->rank)
            rank = i;
    }
    free(members);
    free(all);
    return comm_new(n, rank, w, ctx)->handle;
}

int MPI_Comm_split(MPI_Comm comm, int color, int key, MPI_Comm *out)
{
    CALL("MPI_Comm_split");
    if (color < 0 && color != MPI_UNDEFINED)
        pm_fatal("color %d is negative (MPI_ERR_ARG)", color);
    *out = split(pm_comm_of(comm, "MPI_Comm_split"), color, key);
    RETURN(MPI_SUCCESS);
}

/* MPI_COMM_TYPE_SHARED (and Open MPI's OMPI_COMM_TYPE_HOST): the ranks on
 * this rank's node, as the launcher placed them (rt->node, p2_rt_rank_node:
 * one rank per node by default, so each rank alone); OMPI_COMM_TYPE_CLUSTER:
 * all of them; MPI_UNDEFINED: MPI_COMM_NULL. Open MPI's finer types (cores,
 * caches, sockets, NUMA domains, boards) need a placement within the node
 * the model does not have: they end the job. */
int MPI_Comm_split_type(MPI_Comm comm, int type, int key, MPI_Info info, MPI_Comm *out)
{
    CALL("MPI_Comm_split_type");
    (void)info;
    int color;
    if (type == MPI_UNDEFINED)
        color = MPI_UNDEFINED;
    else if (type == MPI_COMM_TYPE_SHARED || type == OMPI_COMM_TYPE_HOST)
        color = (int)E.rt->node;
    else if (type == OMPI_COMM_TYPE_CLUSTER)
        color = 0;
    else
        pm_fatal("split type %d is not modelled (MPI_COMM_TYPE_SHARED, OMPI_COMM_TYPE_HOST and "
                 "OMPI_COMM_TYPE_CLUSTER are: the model places ranks on nodes, not within "
                 "them) (MPI_ERR_ARG)",
                 type);
    *out = split(pm_comm_of(comm, "MPI_Comm_split_type"), color, key);
    RETURN(MPI_SUCCESS);
}

int MPI_Comm_free(MPI_Comm *comm)
{
    CALL("MPI_Comm_free");
    if (*comm == MPI_COMM_WORLD || *comm == MPI_COMM_SELF)
        pm_fatal("freeing a predefined communicator (MPI_ERR_COMM)");
    pm_comm *c = pm_comm_of(*comm, "MPI_Comm_free");
    pm_comm_unlink(c);
    PMPI_Comm_free(&c->handle);
    free(c->world);
    free(c);
    *comm = MPI_COMM_NULL;
    RETURN(MPI_SUCCESS);
}

int MPI_Comm_compare(MPI_Comm a, MPI_Comm b, int *result)
{
    CALL("MPI_Comm_compare");
    pm_comm *x = pm_comm_of(a, "MPI_Comm_compare"), *y = pm_comm_of(b, "MPI_Comm_compare");
    if (x == y)
        *result = MPI_IDENT;
    else if (x->size != y->size)
        *result = MPI_UNEQUAL;
    else {
        int same_order = 1, same_set = 1;
        for (int i = 0; i < x->size; i++) {
            if (x->world[i] != y->world[i])
                same_order = 0;
            int found = 0;
            for (int j = 0; j < y->size; j++)
                found |= x->world[i] == y->world[j];
            same_set &= found;
        }
        *result = same_order ? MPI_CONGRUENT : same_set ? MPI_SIMILAR : MPI_UNEQUAL;
    }
    RETURN(MPI_SUCCESS);
}

/* A group: world ranks, in group-rank order. MPI_Group handles are these. */
typedef struct pm_group {
    int size, rank; /* rank: this process's, or MPI_UNDEFINED */
    int *world;
    MPI_Fint fhandle; /* its Fortran handle once it has one (MPI_Group_c2f), else 0 */
} pm_group;

static pm_group *group_new(int n, int *world)
{
    pm_group *g = calloc(1, sizeof *g);
    g->size = n;
    g->world = world;
    g->rank = MPI_UNDEFINED;
    for (int i = 0; i < n; i++)
        if (world[i] == pm_world_rank)
            g->rank = i;
    return g;
}

static pm_group *as_group(MPI_Group h)
{
    if (h == MPI_GROUP_NULL)
        pm_fatal("MPI_GROUP_NULL passed as a group (MPI_ERR_GROUP)");
    if (h == MPI_GROUP_EMPTY) {
        static pm_group empty = {0, MPI_UNDEFINED, NULL, 0};
        return &empty;
    }
    return (pm_group *)(void *)h;
}

int MPI_Comm_group(MPI_Comm comm, MPI_Group *group)
{
    CALL("MPI_Comm_group");
    pm_comm *c = pm_comm_of(comm, "MPI_Comm_group");
    int *w = malloc(sizeof(int) * (size_t)c->size);
    memcpy(w, c->world, sizeof(int) * (size_t)c->size);
    *group = (MPI_Group)(void *)group_new(c->size, w);
    RETURN(MPI_SUCCESS);
}

int MPI_Group_size(MPI_Group group, int *size)
{
    *size = as_group(group)->size;
    return MPI_SUCCESS;
}

int MPI_Group_rank(MPI_Group group, int *rank)
{
    *rank = as_group(group)->rank;
    return MPI_SUCCESS;
}

int MPI_Group_incl(MPI_Group group, int n, const int ranks[], MPI_Group *out)
{
    CALL("MPI_Group_incl");
    pm_group *g = as_group(group);
    int *w = malloc(sizeof(int) * (size_t)(n ? n : 1));
    for (int i = 0; i < n; i++) {
        if (ranks[i] < 0 || ranks[i] >= g->size)
            pm_fatal("rank %d is not in the group (size %d) (MPI_ERR_RANK)", ranks[i], g->size);
        w[i] = g->world[ranks[i]];
    }
    *out = (MPI_Group)(void *)group_new(n, w);
    RETURN(MPI_SUCCESS);
}

int MPI_Group_excl(MPI_Group group, int n, const int ranks[], MPI_Group *out)
{
    CALL("MPI_Group_excl");
    pm_group *g = as_group(group);
    int *w = malloc(sizeof(int) * (size_t)(g->size ? g->size : 1)), k = 0;
    for (int i = 0; i < g->size; i++) {
        int drop = 0;
        for (int j = 0; j < n; j++)
            drop |= ranks[j] == i;
        if (!drop)
            w[k++] = g->world[i];
    }
    *out = (MPI_Group)(void *)group_new(k, w);
    RETURN(MPI_SUCCESS);
}

int MPI_Group_translate_ranks(MPI_Group a, int n, const int ranks[], MPI_Group b, int out[])
{
    pm_group *x = as_group(a), *y = as_group(b);
    for (int i = 0; i < n; i++) {
        out[i] = MPI_UNDEFINED;
        if (ranks[i] == MPI_PROC_NULL) {
            out[i] = MPI_PROC_NULL;
            continue;
        }
        for (int j = 0; j < y->size; j++)
            if (ranks[i] >= 0 && ranks[i] < x->size && y->world[j] == x->world[ranks[i]])
                out[i] = j;
    }
    return MPI_SUCCESS;
}

/* Fortran handles of groups (MPI_Group_c2f, _f2c; the Fortran bindings,
 * p2mpi_fortran.c): the predefined groups keep Open MPI's (MPI_GROUP_NULL 0,
 * MPI_GROUP_EMPTY 1); the layer's groups are numbered from F_GROUP_BASE up,
 * a slot of gtab each until MPI_Group_free. */
enum { F_GROUP_BASE = 16 };
static pm_group **gtab;
static int gtab_cap;

MPI_Fint MPI_Group_c2f(MPI_Group h)
{
    if (h == MPI_GROUP_NULL || h == MPI_GROUP_EMPTY)
        return PMPI_Group_c2f(h);
    pm_group *g = as_group(h);
    if (g->fhandle)
        return g->fhandle;
    int i = 0;
    while (i < gtab_cap && gtab[i])
        i++;
    if (i == gtab_cap) {
        int cap = gtab_cap ? 2 * gtab_cap : 64;
        pm_group **t = realloc(gtab, sizeof *t * (size_t)cap);
        if (!t)
            pm_fatal("out of memory");
        memset(t + gtab_cap, 0, sizeof *t * (size_t)(cap - gtab_cap));
        gtab = t;
        gtab_cap = cap;
    }
    gtab[i] = g;
    g->fhandle = F_GROUP_BASE + i;
    return g->fhandle;
}

MPI_Group MPI_Group_f2c(MPI_Fint f)
{
    if (f == PMPI_Group_c2f(MPI_GROUP_NULL))
        return MPI_GROUP_NULL;
    if (f == PMPI_Group_c2f(MPI_GROUP_EMPTY))
        return MPI_GROUP_EMPTY;
    if (f < F_GROUP_BASE || f - F_GROUP_BASE >= gtab_cap || !gtab[f - F_GROUP_BASE])
        pm_fatal("Fortran group handle %d names no group (MPI_ERR_GROUP)", (int)f);
    return (MPI_Group)(void *)gtab[f - F_GROUP_BASE];
}

int MPI_Group_free(MPI_Group *group)
{
    if (*group != MPI_GROUP_EMPTY && *group != MPI_GROUP_NULL) {
        pm_group *g = as_group(*group);
        if (g->fhandle)
            gtab[g->fhandle - F_GROUP_BASE] = NULL;
        free(g->world);
        free(g);
    }
    *group = MPI_GROUP_NULL;
    return MPI_SUCCESS;
}

int MPI_Comm_create(MPI_Comm comm, MPI_Group group, MPI_Comm *out)
{
    CALL("MPI_Comm_create");
    pm_comm *p = pm_comm_of(comm, "MPI_Comm_create");
    pm_group *g = as_group(group);
    /* Every member of the parent passes the same group: its order is the
     * new communicator's; a split keyed by group rank gives it. */
    int color = g->rank == MPI_UNDEFINED ? MPI_UNDEFINED : 0;
    *out = split(p, color, g->rank);
    RETURN(MPI_SUCCESS);
}
