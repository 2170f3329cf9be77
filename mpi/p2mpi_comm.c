/*
 * p2mpi_comm.c - communicators and groups: MPI_Comm_dup, _split,
 * _split_type, _create, _create_group, _free, _compare, the info calls,
 * MPI_Comm_get_parent, the group calls (with the groups' Fortran handles,
 * MPI_Group_c2f/_f2c), and the attribute queries that need the layer's
 * answer (MPI_Comm_get_attr, MPI_Attr_get: MPI_UNIVERSE_SIZE).
 * A new communicator's context id is
 * agreed on by a collective over its parent (p2mpi_coll.h); the table of
 * communicators is p2mpi_core.c's. Depends on the collectives and the units
 * below them.
 */
#define _GNU_SOURCE
#include "p2mpi_comm.h"

#include <stdlib.h>
#include <string.h>

static uint32_t next_ctx = 4;

/* ---- Communicator management ------------------------------------------------------ */

uint32_t pm_ctx_next(void) { return next_ctx; }

void pm_ctx_taken(uint32_t ctx, uint32_t n)
{
    if (next_ctx < ctx + 2 * n)
        next_ctx = ctx + 2 * n;
}

/* A context id every member of `parent` agrees on: the largest next one any
 * of them has (a max-allreduce over the parent's collective context). */
uint32_t pm_comm_agree_ctx(pm_comm *parent)
{
    int mine = (int)next_ctx, all = 0;
    pm_coll_allreduce_int_max(&mine, &all, parent);
    next_ctx = (uint32_t)all + 2;
    return (uint32_t)all;
}

/* The handle is Open MPI's duplicate of `base`: MPI_COMM_SELF for a new
 * group (no attributes, as Open MPI's own split and create give none), the
 * parent's handle for a duplicate (Open MPI then runs the copy callbacks of
 * the parent's attributes and keeps the predefined ones, MPI_TAG_UB and
 * the others, as its own MPI_Comm_dup of MPI_COMM_WORLD does). */
static pm_comm *comm_new(int size, int rank, int *world, uint32_t ctx, MPI_Comm base)
{
    pm_comm *c = calloc(1, sizeof *c);
    c->size = size;
    c->rank = rank;
    c->world = world;
    c->ctx = ctx;
    if (PMPI_Comm_dup(base, &c->handle) != MPI_SUCCESS)
        pm_fatal("Open MPI could not make a communicator handle");
    pm_comm_link(c);
    return c;
}

pm_comm *pm_comm_new(int size, int rank, int *world, uint32_t ctx)
{
    return comm_new(size, rank, world, ctx, MPI_COMM_SELF);
}

/* A copy of p's members on a new context; as MPI_Comm_dup (attrs): with its
 * attributes and its topology. */
pm_comm *pm_comm_dup(pm_comm *p, int attrs)
{
    uint32_t ctx = pm_comm_agree_ctx(p);
    int *w = malloc(sizeof(int) * (size_t)p->size);
    memcpy(w, p->world, sizeof(int) * (size_t)p->size);
    pm_comm *c = comm_new(p->size, p->rank, w, ctx, attrs ? p->handle : MPI_COMM_SELF);
    if (attrs && p->topo) {
        c->topo = malloc(p->topo_bytes);
        memcpy(c->topo, p->topo, p->topo_bytes);
        c->topo_bytes = p->topo_bytes;
    }
    return c;
}

int MPI_Comm_dup(MPI_Comm comm, MPI_Comm *out)
{
    CALL("MPI_Comm_dup");
    *out = pm_comm_dup(pm_intra_of(comm, "MPI_Comm_dup"), 1)->handle;
    RETURN(MPI_SUCCESS);
}

/* Members with the same color, ordered by (key, parent rank). */
pm_comm *pm_comm_split(pm_comm *p, int color, int key)
{
    int mine[2] = {color, key};
    int *all = malloc(sizeof(int) * 2 * (size_t)p->size);
    pm_coll_allgather_ints(mine, 2, all, p);
    uint32_t ctx = pm_comm_agree_ctx(p);
    if (color == MPI_UNDEFINED) {
        free(all);
        return NULL;
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
    return pm_comm_new(n, rank, w, ctx);
}

static MPI_Comm split(pm_comm *p, int color, int key)
{
    pm_comm *c = pm_comm_split(p, color, key);
    return c ? c->handle : MPI_COMM_NULL;
}

int MPI_Comm_split(MPI_Comm comm, int color, int key, MPI_Comm *out)
{
    CALL("MPI_Comm_split");
    if (color < 0 && color != MPI_UNDEFINED)
        pm_fatal("color %d is negative (MPI_ERR_ARG)", color);
    *out = split(pm_intra_of(comm, "MPI_Comm_split"), color, key);
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
    *out = split(pm_intra_of(comm, "MPI_Comm_split_type"), color, key);
    RETURN(MPI_SUCCESS);
}

int MPI_Comm_free(MPI_Comm *comm)
{
    CALL("MPI_Comm_free");
    if (*comm == MPI_COMM_WORLD || *comm == MPI_COMM_SELF)
        pm_fatal("freeing a predefined communicator (MPI_ERR_COMM)");
    pm_comm *c = pm_comm_of(*comm, "MPI_Comm_free");
    PMPI_Comm_free(&c->handle);
    pm_comm_drop(c);
    *comm = MPI_COMM_NULL;
    RETURN(MPI_SUCCESS);
}

/* MPI_IDENT: the same members in the same order; MPI_SIMILAR: the same
 * members; MPI_UNEQUAL otherwise (groups and communicators alike). */
static int compare_members(int n, const int *a, int m, const int *b)
{
    if (n != m)
        return MPI_UNEQUAL;
    int same_order = 1;
    for (int i = 0; i < n; i++) {
        if (a[i] != b[i])
            same_order = 0;
        int found = 0;
        for (int j = 0; j < m && !found; j++)
            found = a[i] == b[j];
        if (!found)
            return MPI_UNEQUAL;
    }
    return same_order ? MPI_IDENT : MPI_SIMILAR;
}

int MPI_Comm_compare(MPI_Comm a, MPI_Comm b, int *result)
{
    CALL("MPI_Comm_compare");
    pm_comm *x = pm_comm_of(a, "MPI_Comm_compare"), *y = pm_comm_of(b, "MPI_Comm_compare");
    int r = compare_members(x->size, x->world, y->size, y->world);
    if (!x->local != !y->local) /* an intercommunicator and an intracommunicator */
        r = MPI_UNEQUAL;
    else if (x->local) { /* intercommunicators: both groups */
        int l = compare_members(x->local->size, x->local->world, y->local->size, y->local->world);
        r = l == MPI_UNEQUAL || r == MPI_UNEQUAL ? MPI_UNEQUAL
            : l == MPI_IDENT && r == MPI_IDENT  ? MPI_IDENT
                                                : MPI_SIMILAR;
    }
    *result = x == y ? MPI_IDENT : r == MPI_IDENT ? MPI_CONGRUENT : r;
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

MPI_Group pm_group_new(int n, int *world) { return (MPI_Group)(void *)group_new(n, world); }

int pm_group_members(MPI_Group h, const int **world)
{
    pm_group *g = as_group(h);
    *world = g->world;
    return g->size;
}

int MPI_Comm_group(MPI_Comm comm, MPI_Group *group)
{
    CALL("MPI_Comm_group");
    pm_comm *c = pm_comm_of(comm, "MPI_Comm_group");
    if (c->local) /* an intercommunicator: its local group */
        c = c->local;
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

/* The ranks that (first, last, stride) triplets name, in order: the job
 * ends on a rank outside the group or a zero stride (MPI_ERR_RANK,
 * MPI_ERR_ARG). *n becomes their number. */
static int *range_ranks(const pm_group *g, int *n, int ranges[][3])
{
    int k = 0, cap = 16, *r = malloc(sizeof(int) * (size_t)cap);
    for (int i = 0; i < *n; i++) {
        int first = ranges[i][0], last = ranges[i][1], stride = ranges[i][2];
        if (stride == 0)
            pm_fatal("range %d has stride 0 (MPI_ERR_ARG)", i);
        if (first < 0 || first >= g->size || last < 0 || last >= g->size)
            pm_fatal("range %d (%d, %d, %d) names a rank outside the group (size %d) "
                     "(MPI_ERR_RANK)",
                     i, first, last, stride, g->size);
        for (int x = first; stride > 0 ? x <= last : x >= last; x += stride) {
            if (k == cap)
                r = realloc(r, sizeof(int) * (size_t)(cap *= 2));
            r[k++] = x;
        }
    }
    *n = k;
    return r;
}

int MPI_Group_range_incl(MPI_Group group, int n, int ranges[][3], MPI_Group *out)
{
    CALL("MPI_Group_range_incl");
    pm_group *g = as_group(group);
    int *r = range_ranks(g, &n, ranges);
    int *w = malloc(sizeof(int) * (size_t)(n ? n : 1));
    for (int i = 0; i < n; i++)
        w[i] = g->world[r[i]];
    free(r);
    *out = (MPI_Group)(void *)group_new(n, w);
    RETURN(MPI_SUCCESS);
}

int MPI_Group_range_excl(MPI_Group group, int n, int ranges[][3], MPI_Group *out)
{
    CALL("MPI_Group_range_excl");
    pm_group *g = as_group(group);
    int *r = range_ranks(g, &n, ranges);
    char *drop = calloc((size_t)g->size + 1, 1);
    for (int i = 0; i < n; i++)
        drop[r[i]] = 1;
    int *w = malloc(sizeof(int) * (size_t)(g->size ? g->size : 1)), k = 0;
    for (int i = 0; i < g->size; i++)
        if (!drop[i])
            w[k++] = g->world[i];
    free(drop);
    free(r);
    *out = (MPI_Group)(void *)group_new(k, w);
    RETURN(MPI_SUCCESS);
}

static int group_has(const pm_group *g, int w)
{
    for (int i = 0; i < g->size; i++)
        if (g->world[i] == w)
            return 1;
    return 0;
}

/* The set operations, in MPI's order: a's members first, in a's order.
 * keep_a: a's members that are (1) or are not (0) in b, or all (-1); add_b:
 * then b's members not in a. */
static MPI_Group group_set(MPI_Group ga, MPI_Group gb, int keep_a, int add_b)
{
    pm_group *a = as_group(ga), *b = as_group(gb);
    int *w = malloc(sizeof(int) * (size_t)(a->size + b->size + 1)), k = 0;
    for (int i = 0; i < a->size; i++)
        if (keep_a < 0 || group_has(b, a->world[i]) == keep_a)
            w[k++] = a->world[i];
    if (add_b)
        for (int i = 0; i < b->size; i++)
            if (!group_has(a, b->world[i]))
                w[k++] = b->world[i];
    return (MPI_Group)(void *)group_new(k, w);
}

int MPI_Group_union(MPI_Group a, MPI_Group b, MPI_Group *out)
{
    *out = group_set(a, b, -1, 1);
    return MPI_SUCCESS;
}

int MPI_Group_intersection(MPI_Group a, MPI_Group b, MPI_Group *out)
{
    *out = group_set(a, b, 1, 0);
    return MPI_SUCCESS;
}

int MPI_Group_difference(MPI_Group a, MPI_Group b, MPI_Group *out)
{
    *out = group_set(a, b, 0, 0);
    return MPI_SUCCESS;
}

int MPI_Group_compare(MPI_Group a, MPI_Group b, int *result)
{
    pm_group *x = as_group(a), *y = as_group(b);
    *result = compare_members(x->size, x->world, y->size, y->world);
    return MPI_SUCCESS;
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
    pm_comm *p = pm_intra_of(comm, "MPI_Comm_create");
    pm_group *g = as_group(group);
    /* Every member of the parent passes the same group: its order is the
     * new communicator's; a split keyed by group rank gives it. */
    int color = g->rank == MPI_UNDEFINED ? MPI_UNDEFINED : 0;
    *out = split(p, color, g->rank);
    RETURN(MPI_SUCCESS);
}

/* Collective over the group's members only: they agree on a context among
 * themselves, on the parent's collective context (the tag is not needed to
 * keep calls apart: a member is in one such call at a time). */
int MPI_Comm_create_group(MPI_Comm comm, MPI_Group group, int tag, MPI_Comm *out)
{
    CALL("MPI_Comm_create_group");
    (void)tag;
    pm_comm *p = pm_intra_of(comm, "MPI_Comm_create_group");
    pm_group *g = as_group(group);
    if (g->rank == MPI_UNDEFINED) {
        *out = MPI_COMM_NULL;
        RETURN(MPI_SUCCESS);
    }
    for (int i = 0; i < g->size; i++)
        if (pm_comm_rank_of(p, g->world[i]) < 0)
            pm_fatal("the group has world rank %d, which is not in the communicator "
                     "(MPI_ERR_GROUP)",
                     g->world[i]);
    pm_comm members = *p; /* the group as a communicator on p's contexts */
    members.size = g->size;
    members.rank = g->rank;
    members.world = g->world;
    uint32_t ctx = pm_comm_agree_ctx(&members);
    int *w = malloc(sizeof(int) * (size_t)g->size);
    memcpy(w, g->world, sizeof(int) * (size_t)g->size);
    *out = pm_comm_new(g->size, g->rank, w, ctx)->handle;
    RETURN(MPI_SUCCESS);
}

/* Hints are not used: MPI_Comm_dup_with_info is MPI_Comm_dup, and a
 * communicator's info is empty. */
int MPI_Comm_dup_with_info(MPI_Comm comm, MPI_Info info, MPI_Comm *out)
{
    CALL("MPI_Comm_dup_with_info");
    (void)info;
    *out = pm_comm_dup(pm_intra_of(comm, "MPI_Comm_dup_with_info"), 1)->handle;
    RETURN(MPI_SUCCESS);
}

int MPI_Comm_set_info(MPI_Comm comm, MPI_Info info)
{
    CALL("MPI_Comm_set_info");
    (void)pm_comm_of(comm, "MPI_Comm_set_info");
    (void)info;
    RETURN(MPI_SUCCESS);
}

int MPI_Comm_get_info(MPI_Comm comm, MPI_Info *info)
{
    CALL("MPI_Comm_get_info");
    (void)pm_comm_of(comm, "MPI_Comm_get_info");
    RETURN(PMPI_Info_create(info));
}

/* No process of a job the layer runs was spawned (MPI_Comm_spawn stops the
 * job): the parent is always MPI_COMM_NULL. */
int MPI_Comm_get_parent(MPI_Comm *parent)
{
    CALL("MPI_Comm_get_parent");
    *parent = MPI_COMM_NULL;
    RETURN(MPI_SUCCESS);
}

/* ---- Attributes Open MPI keeps on its own MPI_COMM_WORLD --------------------------------- */

/* Open MPI answers attribute queries itself (the handles are its own), but
 * MPI_UNIVERSE_SIZE on MPI_COMM_WORLD (and on its duplicates, which inherit
 * it) would be its singleton world's, 1: the layer's world is the p2run
 * job, so it is pm_world_size. */
static int universe_size;

static void fix_universe(int keyval, void *val, const int *flag)
{
    if (*flag && keyval == MPI_UNIVERSE_SIZE) {
        universe_size = pm_world_size;
        *(int **)val = &universe_size;
    }
}

int MPI_Comm_get_attr(MPI_Comm comm, int keyval, void *val, int *flag)
{
    int rc = PMPI_Comm_get_attr(comm, keyval, val, flag);
    if (rc == MPI_SUCCESS && E.inited)
        fix_universe(keyval, val, flag);
    return rc;
}

int MPI_Attr_get(MPI_Comm comm, int keyval, void *val, int *flag)
{
    int rc = PMPI_Comm_get_attr(comm, keyval, val, flag);
    if (rc == MPI_SUCCESS && E.inited)
        fix_universe(keyval, val, flag);
    return rc;
}
