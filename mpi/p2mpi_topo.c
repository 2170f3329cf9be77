/*
 * p2mpi_topo.c - process topologies: Cartesian (MPI_Cart_create, _coords,
 * _rank, _shift, _sub, _get, _map, MPI_Cartdim_get, MPI_Dims_create), graph
 * (MPI_Graph_create, _get, _neighbors(_count), _map, MPI_Graphdims_get) and
 * distributed graph (MPI_Dist_graph_create(_adjacent), _neighbors(_count)),
 * MPI_Topo_test; and the neighbours the neighbourhood collectives
 * (p2mpi_neighbor.c) exchange with. Depends on communicators
 * (p2mpi_comm.c), the collectives and the units below them.
 *
 * A topology is the layer's own, kept with its communicator (pm_comm.topo:
 * MPI_Comm_dup copies it, MPI_Comm_free frees it), so the queries answer
 * about the layer's communicator and never about Open MPI's singleton
 * world behind the handle. Creating one is a communicator creation: a
 * split of the old communicator (MPI_Cart_create, _sub, MPI_Graph_create:
 * an allgather and the context agreement) or a duplicate
 * (MPI_Dist_graph_create_adjacent; MPI_Dist_graph_create also exchanges its
 * edges with an alltoall and an alltoallv), each in simulated time as those
 * collectives take it. The queries are local and cost nothing, as
 * MPI_Comm_rank. The ranks are never reordered (`reorder` is ignored: MPI
 * lets an implementation keep them): the rank in the new communicator is
 * the rank in the old one, so MPI_Cart_map and MPI_Graph_map give the rank
 * itself to the first ranks and MPI_UNDEFINED to the rest.
 */
#define _GNU_SOURCE
#include "p2mpi_topo.h"

#include <stdlib.h>
#include <string.h>

/* ---- Topologies on communicators ------------------------------------------------------ */

static pm_topo *topo_new(int kind, int n1, int n2, int nv)
{
    size_t bytes = sizeof(pm_topo) + sizeof(int) * (size_t)(nv > 0 ? nv : 0);
    pm_topo *t = calloc(1, bytes);
    if (!t)
        pm_fatal("out of memory");
    t->kind = kind;
    t->n1 = n1;
    t->n2 = n2;
    return t;
}

static void topo_set(pm_comm *c, pm_topo *t, int nv)
{
    free(c->topo);
    c->topo = t;
    c->topo_bytes = sizeof(pm_topo) + sizeof(int) * (size_t)(nv > 0 ? nv : 0);
}

static pm_topo *topo_of(MPI_Comm comm, int kind, const char *call)
{
    pm_comm *c = pm_comm_of(comm, call);
    static const char *const names[] = {"", "Cartesian", "graph", "distributed graph"};
    if (!c->topo || c->topo->kind != kind)
        pm_fatal("the communicator has no %s topology (MPI_ERR_TOPOLOGY)", names[kind]);
    return c->topo;
}

int MPI_Topo_test(MPI_Comm comm, int *status)
{
    CALL("MPI_Topo_test");
    pm_comm *c = pm_comm_of(comm, "MPI_Topo_test");
    *status = c->topo ? c->topo->kind : MPI_UNDEFINED;
    RETURN(MPI_SUCCESS);
}

/* ---- Cartesian --------------------------------------------------------------------------- */

#define DIMS(t) ((t)->v)
#define PERIODS(t) ((t)->v + (t)->n1)

/* Row-major, as MPI numbers a grid: the last dimension varies fastest. */
static void cart_coords(const pm_topo *t, int rank, int *coords)
{
    for (int i = t->n1 - 1; i >= 0; i--) {
        coords[i] = rank % DIMS(t)[i];
        rank /= DIMS(t)[i];
    }
}

/* The rank at coords, periodic dimensions wrapped; -1 outside the grid. */
static int cart_rank(const pm_topo *t, const int *coords)
{
    int rank = 0;
    for (int i = 0; i < t->n1; i++) {
        int x = coords[i], d = DIMS(t)[i];
        if (PERIODS(t)[i])
            x = ((x % d) + d) % d;
        else if (x < 0 || x >= d)
            return -1;
        rank = rank * d + x;
    }
    return rank;
}

static int cart_size(int ndims, const int dims[], const char *what)
{
    if (ndims < 0)
        pm_fatal("%d dimensions (MPI_ERR_DIMS)", ndims);
    long n = 1;
    for (int i = 0; i < ndims; i++) {
        if (dims[i] <= 0)
            pm_fatal("%s %d is %d: each must be positive (MPI_ERR_DIMS)", what, i, dims[i]);
        n *= dims[i];
        if (n > 1L << 30)
            pm_fatal("a grid of more than 2^30 processes (MPI_ERR_DIMS)");
    }
    return (int)n;
}

static pm_topo *cart_topo(int ndims, const int dims[], const int periods[])
{
    pm_topo *t = topo_new(MPI_CART, ndims, 0, 2 * ndims);
    for (int i = 0; i < ndims; i++) {
        DIMS(t)[i] = dims[i];
        PERIODS(t)[i] = periods[i] != 0;
    }
    return t;
}

int MPI_Cart_create(MPI_Comm comm, int ndims, const int dims[], const int periods[], int reorder,
                    MPI_Comm *out)
{
    CALL("MPI_Cart_create");
    (void)reorder;
    pm_comm *p = pm_intra_of(comm, "MPI_Cart_create");
    int n = cart_size(ndims, dims, "dimension");
    if (n > p->size)
        pm_fatal("the grid has %d processes, the communicator %d (MPI_ERR_DIMS)", n, p->size);
    pm_comm *c = pm_comm_split(p, p->rank < n ? 0 : MPI_UNDEFINED, p->rank);
    *out = MPI_COMM_NULL;
    if (c) {
        topo_set(c, cart_topo(ndims, dims, periods), 2 * ndims);
        *out = c->handle;
    }
    RETURN(MPI_SUCCESS);
}

int MPI_Cartdim_get(MPI_Comm comm, int *ndims)
{
    CALL("MPI_Cartdim_get");
    *ndims = topo_of(comm, MPI_CART, "MPI_Cartdim_get")->n1;
    RETURN(MPI_SUCCESS);
}

int MPI_Cart_get(MPI_Comm comm, int maxdims, int dims[], int periods[], int coords[])
{
    CALL("MPI_Cart_get");
    pm_topo *t = topo_of(comm, MPI_CART, "MPI_Cart_get");
    if (maxdims < t->n1)
        pm_fatal("maxdims %d is below the topology's %d dimensions (MPI_ERR_ARG)", maxdims, t->n1);
    int *c = malloc(sizeof(int) * (size_t)(t->n1 + 1));
    cart_coords(t, pm_comm_of(comm, "MPI_Cart_get")->rank, c);
    for (int i = 0; i < t->n1; i++) {
        dims[i] = DIMS(t)[i];
        periods[i] = PERIODS(t)[i];
        coords[i] = c[i];
    }
    free(c);
    RETURN(MPI_SUCCESS);
}

int MPI_Cart_rank(MPI_Comm comm, const int coords[], int *rank)
{
    CALL("MPI_Cart_rank");
    pm_topo *t = topo_of(comm, MPI_CART, "MPI_Cart_rank");
    *rank = cart_rank(t, coords);
    if (*rank < 0)
        for (int i = 0; i < t->n1; i++)
            if (!PERIODS(t)[i] && (coords[i] < 0 || coords[i] >= DIMS(t)[i]))
                pm_fatal("coordinate %d is %d, outside the non-periodic dimension of %d "
                         "(MPI_ERR_ARG)",
                         i, coords[i], DIMS(t)[i]);
    RETURN(MPI_SUCCESS);
}

int MPI_Cart_coords(MPI_Comm comm, int rank, int maxdims, int coords[])
{
    CALL("MPI_Cart_coords");
    pm_topo *t = topo_of(comm, MPI_CART, "MPI_Cart_coords");
    int size = pm_comm_of(comm, "MPI_Cart_coords")->size;
    if (rank < 0 || rank >= size)
        pm_fatal("rank %d is not in the communicator (size %d) (MPI_ERR_RANK)", rank, size);
    if (maxdims < t->n1)
        pm_fatal("maxdims %d is below the topology's %d dimensions (MPI_ERR_ARG)", maxdims, t->n1);
    cart_coords(t, rank, coords);
    RETURN(MPI_SUCCESS);
}

/* The ranks disp away along dimension `dir`, backwards (source) and
 * forwards (destination); MPI_PROC_NULL off a non-periodic edge. */
static void cart_shift(const pm_topo *t, int rank, int dir, int disp, int *src, int *dst)
{
    int *c = malloc(sizeof(int) * (size_t)(t->n1 + 1));
    cart_coords(t, rank, c);
    int x = c[dir];
    c[dir] = x + disp;
    *dst = cart_rank(t, c);
    c[dir] = x - disp;
    *src = cart_rank(t, c);
    if (*dst < 0)
        *dst = MPI_PROC_NULL;
    if (*src < 0)
        *src = MPI_PROC_NULL;
    free(c);
}

int MPI_Cart_shift(MPI_Comm comm, int direction, int disp, int *source, int *dest)
{
    CALL("MPI_Cart_shift");
    pm_topo *t = topo_of(comm, MPI_CART, "MPI_Cart_shift");
    if (direction < 0 || direction >= t->n1)
        pm_fatal("direction %d is not a dimension of the %d-dimensional grid (MPI_ERR_ARG)",
                 direction, t->n1);
    cart_shift(t, pm_comm_of(comm, "MPI_Cart_shift")->rank, direction, disp, source, dest);
    RETURN(MPI_SUCCESS);
}

/* The sub-grids of the kept dimensions: processes that agree on the dropped
 * coordinates form one, ranked by their kept coordinates (a split). */
int MPI_Cart_sub(MPI_Comm comm, const int remain_dims[], MPI_Comm *out)
{
    CALL("MPI_Cart_sub");
    pm_topo *t = topo_of(comm, MPI_CART, "MPI_Cart_sub");
    pm_comm *p = pm_comm_of(comm, "MPI_Cart_sub");
    int n = t->n1, kept = 0, color = 0, key = 0;
    int *c = malloc(sizeof(int) * (size_t)(n + 1)), *dims = malloc(sizeof(int) * (size_t)(n + 1));
    int *periods = malloc(sizeof(int) * (size_t)(n + 1));
    cart_coords(t, p->rank, c);
    for (int i = 0; i < n; i++)
        if (remain_dims[i]) {
            key = key * DIMS(t)[i] + c[i];
            dims[kept] = DIMS(t)[i];
            periods[kept++] = PERIODS(t)[i];
        } else {
            color = color * DIMS(t)[i] + c[i];
        }
    pm_comm *s = pm_comm_split(p, color, key);
    topo_set(s, cart_topo(kept, dims, periods), 2 * kept);
    *out = s->handle;
    free(c);
    free(dims);
    free(periods);
    RETURN(MPI_SUCCESS);
}

int MPI_Cart_map(MPI_Comm comm, int ndims, const int dims[], const int periods[], int *newrank)
{
    CALL("MPI_Cart_map");
    (void)periods;
    pm_comm *p = pm_intra_of(comm, "MPI_Cart_map");
    int n = cart_size(ndims, dims, "dimension");
    if (n > p->size)
        pm_fatal("the grid has %d processes, the communicator %d (MPI_ERR_DIMS)", n, p->size);
    *newrank = p->rank < n ? p->rank : MPI_UNDEFINED;
    RETURN(MPI_SUCCESS);
}

/* Balanced dimensions: nnodes over the given (non-zero) ones is split into
 * its prime factors, the largest first, each to the free dimension with the
 * smallest product so far; the free dimensions then in non-increasing
 * order. Local: no MPI_Init needed. */
int MPI_Dims_create(int nnodes, int ndims, int dims[])
{
    pm_enter("MPI_Dims_create");
    if (nnodes <= 0 || ndims < 0)
        pm_fatal("MPI_Dims_create: %d nodes in %d dimensions (MPI_ERR_DIMS)", nnodes, ndims);
    int fixed = 1, nfree = 0;
    for (int i = 0; i < ndims; i++) {
        if (dims[i] < 0)
            pm_fatal("MPI_Dims_create: dimension %d is %d (MPI_ERR_DIMS)", i, dims[i]);
        if (dims[i])
            fixed *= dims[i];
        else
            nfree++;
    }
    if (nnodes % fixed)
        pm_fatal("MPI_Dims_create: %d nodes do not divide into the given dimensions (their "
                 "product %d) (MPI_ERR_DIMS)",
                 nnodes, fixed);
    int rest = nnodes / fixed;
    if (!nfree) {
        if (rest != 1)
            pm_fatal("MPI_Dims_create: the given dimensions make %d nodes, not %d "
                     "(MPI_ERR_DIMS)",
                     fixed, nnodes);
        pm_leave();
        return MPI_SUCCESS;
    }
    int *f = malloc(sizeof(int) * (size_t)nfree), factors[32], nf = 0;
    for (int i = 0; i < nfree; i++)
        f[i] = 1;
    for (int q = 2; (long)q * q <= rest; q++)
        while (rest % q == 0) {
            factors[nf++] = q;
            rest /= q;
        }
    if (rest > 1)
        factors[nf++] = rest;
    for (int k = nf - 1; k >= 0; k--) { /* largest factor first */
        int m = 0;
        for (int i = 1; i < nfree; i++)
            if (f[i] < f[m])
                m = i;
        f[m] *= factors[k];
    }
    for (int i = 1; i < nfree; i++) /* non-increasing */
        for (int j = i; j > 0 && f[j - 1] < f[j]; j--) {
            int x = f[j];
            f[j] = f[j - 1];
            f[j - 1] = x;
        }
    for (int i = 0, k = 0; i < ndims; i++)
        if (!dims[i])
            dims[i] = f[k++];
    free(f);
    pm_leave();
    return MPI_SUCCESS;
}

/* ---- Graph ------------------------------------------------------------------------------ */

static void graph_check(int nnodes, const int index[], const int edges[])
{
    if (nnodes < 0)
        pm_fatal("%d nodes (MPI_ERR_ARG)", nnodes);
    for (int i = 0; i < nnodes; i++)
        if (index[i] < (i ? index[i - 1] : 0))
            pm_fatal("index[%d] = %d is below the one before it (MPI_ERR_ARG)", i, index[i]);
    int nedges = nnodes ? index[nnodes - 1] : 0;
    for (int e = 0; e < nedges; e++)
        if (edges[e] < 0 || edges[e] >= nnodes)
            pm_fatal("edge %d goes to %d, not a node of the %d-node graph (MPI_ERR_ARG)", e,
                     edges[e], nnodes);
}

int MPI_Graph_create(MPI_Comm comm, int nnodes, const int index[], const int edges[], int reorder,
                     MPI_Comm *out)
{
    CALL("MPI_Graph_create");
    (void)reorder;
    pm_comm *p = pm_intra_of(comm, "MPI_Graph_create");
    graph_check(nnodes, index, edges);
    if (nnodes > p->size)
        pm_fatal("the graph has %d nodes, the communicator %d processes (MPI_ERR_ARG)", nnodes,
                 p->size);
    int nedges = nnodes ? index[nnodes - 1] : 0;
    pm_comm *c = pm_comm_split(p, p->rank < nnodes ? 0 : MPI_UNDEFINED, p->rank);
    *out = MPI_COMM_NULL;
    if (c) {
        pm_topo *t = topo_new(MPI_GRAPH, nnodes, nedges, nnodes + nedges);
        memcpy(t->v, index, sizeof(int) * (size_t)nnodes);
        memcpy(t->v + nnodes, edges, sizeof(int) * (size_t)nedges);
        topo_set(c, t, nnodes + nedges);
        *out = c->handle;
    }
    RETURN(MPI_SUCCESS);
}

int MPI_Graphdims_get(MPI_Comm comm, int *nnodes, int *nedges)
{
    CALL("MPI_Graphdims_get");
    pm_topo *t = topo_of(comm, MPI_GRAPH, "MPI_Graphdims_get");
    *nnodes = t->n1;
    *nedges = t->n2;
    RETURN(MPI_SUCCESS);
}

int MPI_Graph_get(MPI_Comm comm, int maxindex, int maxedges, int index[], int edges[])
{
    CALL("MPI_Graph_get");
    pm_topo *t = topo_of(comm, MPI_GRAPH, "MPI_Graph_get");
    for (int i = 0; i < t->n1 && i < maxindex; i++)
        index[i] = t->v[i];
    for (int e = 0; e < t->n2 && e < maxedges; e++)
        edges[e] = t->v[t->n1 + e];
    RETURN(MPI_SUCCESS);
}

/* A node's edges: their first, and their number. */
static const int *graph_edges(const pm_topo *t, int rank, int *n)
{
    if (rank < 0 || rank >= t->n1)
        pm_fatal("rank %d is not a node of the %d-node graph (MPI_ERR_RANK)", rank, t->n1);
    int first = rank ? t->v[rank - 1] : 0;
    *n = t->v[rank] - first;
    return t->v + t->n1 + first;
}

int MPI_Graph_neighbors_count(MPI_Comm comm, int rank, int *nneighbors)
{
    CALL("MPI_Graph_neighbors_count");
    graph_edges(topo_of(comm, MPI_GRAPH, "MPI_Graph_neighbors_count"), rank, nneighbors);
    RETURN(MPI_SUCCESS);
}

int MPI_Graph_neighbors(MPI_Comm comm, int rank, int maxneighbors, int neighbors[])
{
    CALL("MPI_Graph_neighbors");
    int n;
    const int *e = graph_edges(topo_of(comm, MPI_GRAPH, "MPI_Graph_neighbors"), rank, &n);
    for (int i = 0; i < n && i < maxneighbors; i++)
        neighbors[i] = e[i];
    RETURN(MPI_SUCCESS);
}

int MPI_Graph_map(MPI_Comm comm, int nnodes, const int index[], const int edges[], int *newrank)
{
    CALL("MPI_Graph_map");
    pm_comm *p = pm_intra_of(comm, "MPI_Graph_map");
    graph_check(nnodes, index, edges);
    if (nnodes > p->size)
        pm_fatal("the graph has %d nodes, the communicator %d processes (MPI_ERR_ARG)", nnodes,
                 p->size);
    *newrank = p->rank < nnodes ? p->rank : MPI_UNDEFINED;
    RETURN(MPI_SUCCESS);
}

/* ---- Distributed graph ---------------------------------------------------------------------- */

#define D_SRC(t) ((t)->v)
#define D_SW(t) ((t)->v + (t)->n1)
#define D_DST(t) ((t)->v + 2 * (t)->n1)
#define D_DW(t) ((t)->v + 2 * (t)->n1 + (t)->n2)

static int weighted(const int *w) { return w != MPI_UNWEIGHTED; }

/* w may be MPI_UNWEIGHTED or MPI_WEIGHTS_EMPTY: weight 1 then. */
static int weight_at(const int *w, int i)
{
    return w == MPI_UNWEIGHTED || w == MPI_WEIGHTS_EMPTY ? 1 : w[i];
}

static pm_topo *dist_topo(int nin, const int src[], const int sw[], int nout, const int dst[],
                          const int dw[], int is_weighted)
{
    pm_topo *t = topo_new(MPI_DIST_GRAPH, nin, nout, 2 * (nin + nout));
    t->weighted = is_weighted;
    for (int i = 0; i < nin; i++) {
        D_SRC(t)[i] = src[i];
        D_SW(t)[i] = sw ? sw[i] : 1;
    }
    for (int i = 0; i < nout; i++) {
        D_DST(t)[i] = dst[i];
        D_DW(t)[i] = dw ? dw[i] : 1;
    }
    return t;
}

static void check_ranks(int n, const int r[], int size, const char *what)
{
    if (n < 0)
        pm_fatal("%d %s (MPI_ERR_ARG)", n, what);
    for (int i = 0; i < n; i++)
        if (r[i] < 0 || r[i] >= size)
            pm_fatal("%s %d is %d, not a rank of the communicator (size %d) (MPI_ERR_RANK)", what,
                     i, r[i], size);
}

int MPI_Dist_graph_create_adjacent(MPI_Comm comm, int indegree, const int sources[],
                                   const int sourceweights[], int outdegree,
                                   const int destinations[], const int destweights[],
                                   MPI_Info info, int reorder, MPI_Comm *out)
{
    CALL("MPI_Dist_graph_create_adjacent");
    (void)info;
    (void)reorder;
    pm_comm *p = pm_intra_of(comm, "MPI_Dist_graph_create_adjacent");
    check_ranks(indegree, sources, p->size, "source");
    check_ranks(outdegree, destinations, p->size, "destination");
    int *sw = malloc(sizeof(int) * (size_t)(indegree + 1));
    int *dw = malloc(sizeof(int) * (size_t)(outdegree + 1));
    for (int i = 0; i < indegree; i++)
        sw[i] = weight_at(sourceweights, i);
    for (int i = 0; i < outdegree; i++)
        dw[i] = weight_at(destweights, i);
    pm_comm *c = pm_comm_dup(p, 0);
    topo_set(c,
             dist_topo(indegree, sources, sw, outdegree, destinations, dw,
                       weighted(sourceweights) && weighted(destweights)),
             2 * (indegree + outdegree));
    free(sw);
    free(dw);
    *out = c->handle;
    RETURN(MPI_SUCCESS);
}

/* Any rank may name any edge: each edge (s -> d, w) goes to s as an
 * out-edge and to d as an in-edge (an alltoall of the counts, an
 * alltoallv of (kind, peer, weight) triples over the old communicator).
 * Each rank's neighbours are in the order their edges arrive: by the rank
 * that named them, then in its order. */
int MPI_Dist_graph_create(MPI_Comm comm, int n, const int sources[], const int degrees[],
                          const int destinations[], const int weights[], MPI_Info info,
                          int reorder, MPI_Comm *out)
{
    CALL("MPI_Dist_graph_create");
    (void)info;
    (void)reorder;
    pm_comm *p = pm_intra_of(comm, "MPI_Dist_graph_create");
    int size = p->size;
    check_ranks(n, sources, size, "source");
    int nedges = 0;
    for (int i = 0; i < n; i++) {
        if (degrees[i] < 0)
            pm_fatal("degree %d is %d (MPI_ERR_ARG)", i, degrees[i]);
        nedges += degrees[i];
    }
    check_ranks(nedges, destinations, size, "destination");
    int *scount = calloc((size_t)size, sizeof(int)), *rcount = calloc((size_t)size, sizeof(int));
    int *sdisp = calloc((size_t)size + 1, sizeof(int)), *rdisp = calloc((size_t)size + 1, sizeof(int));
    for (int i = 0, e = 0; i < n; i++)
        for (int k = 0; k < degrees[i]; k++, e++) {
            scount[sources[i]] += 3;
            scount[destinations[e]] += 3;
        }
    for (int r = 0; r < size; r++)
        sdisp[r + 1] = sdisp[r] + scount[r];
    int *sbuf = malloc(sizeof(int) * (size_t)(sdisp[size] + 1)), *fill = calloc((size_t)size, sizeof(int));
    for (int i = 0, e = 0; i < n; i++)
        for (int k = 0; k < degrees[i]; k++, e++) {
            int s = sources[i], d = destinations[e], w = weight_at(weights, e);
            int *o = sbuf + sdisp[s] + fill[s];
            o[0] = 1, o[1] = d, o[2] = w; /* to s: an out-edge to d */
            fill[s] += 3;
            int *q = sbuf + sdisp[d] + fill[d];
            q[0] = 0, q[1] = s, q[2] = w; /* to d: an in-edge from s */
            fill[d] += 3;
        }
    pm_coll_alltoall(scount, 1, MPI_INT, rcount, 1, MPI_INT, p);
    for (int r = 0; r < size; r++)
        rdisp[r + 1] = rdisp[r] + rcount[r];
    int *rbuf = malloc(sizeof(int) * (size_t)(rdisp[size] + 1));
    pm_coll_alltoallv(sbuf, scount, sdisp, MPI_INT, rbuf, rcount, rdisp, MPI_INT, p);
    int nin = 0, nout = 0, total = rdisp[size] / 3;
    for (int i = 0; i < total; i++)
        rbuf[3 * i] ? nout++ : nin++;
    int *src = malloc(sizeof(int) * (size_t)(nin + 1)), *sw = malloc(sizeof(int) * (size_t)(nin + 1));
    int *dst = malloc(sizeof(int) * (size_t)(nout + 1)), *dw = malloc(sizeof(int) * (size_t)(nout + 1));
    for (int i = 0, a = 0, b = 0; i < total; i++) {
        const int *x = rbuf + 3 * i;
        if (x[0]) {
            dst[b] = x[1];
            dw[b++] = x[2];
        } else {
            src[a] = x[1];
            sw[a++] = x[2];
        }
    }
    pm_comm *c = pm_comm_dup(p, 0);
    topo_set(c, dist_topo(nin, src, sw, nout, dst, dw, weighted(weights)), 2 * (nin + nout));
    *out = c->handle;
    free(scount), free(rcount), free(sdisp), free(rdisp), free(sbuf), free(fill), free(rbuf);
    free(src), free(sw), free(dst), free(dw);
    RETURN(MPI_SUCCESS);
}

int MPI_Dist_graph_neighbors_count(MPI_Comm comm, int *indegree, int *outdegree, int *is_weighted)
{
    CALL("MPI_Dist_graph_neighbors_count");
    pm_topo *t = topo_of(comm, MPI_DIST_GRAPH, "MPI_Dist_graph_neighbors_count");
    *indegree = t->n1;
    *outdegree = t->n2;
    *is_weighted = t->weighted;
    RETURN(MPI_SUCCESS);
}

int MPI_Dist_graph_neighbors(MPI_Comm comm, int maxindegree, int sources[], int sourceweights[],
                             int maxoutdegree, int destinations[], int destweights[])
{
    CALL("MPI_Dist_graph_neighbors");
    pm_topo *t = topo_of(comm, MPI_DIST_GRAPH, "MPI_Dist_graph_neighbors");
    for (int i = 0; i < t->n1 && i < maxindegree; i++) {
        sources[i] = D_SRC(t)[i];
        if (t->weighted && weighted(sourceweights) && sourceweights != MPI_WEIGHTS_EMPTY)
            sourceweights[i] = D_SW(t)[i];
    }
    for (int i = 0; i < t->n2 && i < maxoutdegree; i++) {
        destinations[i] = D_DST(t)[i];
        if (t->weighted && weighted(destweights) && destweights != MPI_WEIGHTS_EMPTY)
            destweights[i] = D_DW(t)[i];
    }
    RETURN(MPI_SUCCESS);
}

/* ---- Neighbours (the neighbourhood collectives) ------------------------------------------------ */

void pm_topo_neighbors(pm_comm *c, const char *call, int *nin, int **in, int *nout, int **out,
                       int *cart)
{
    pm_topo *t = c->topo;
    if (!t)
        pm_fatal("%s needs a communicator with a topology (MPI_ERR_TOPOLOGY)", call);
    *cart = t->kind == MPI_CART;
    const int *src, *dst;
    int ns, nd;
    int *pairs = NULL;
    if (t->kind == MPI_CART) {
        ns = nd = 2 * t->n1;
        pairs = malloc(sizeof(int) * (size_t)(ns + 1));
        for (int d = 0; d < t->n1; d++)
            cart_shift(t, c->rank, d, 1, &pairs[2 * d], &pairs[2 * d + 1]);
        src = dst = pairs;
    } else if (t->kind == MPI_GRAPH) {
        src = dst = graph_edges(t, c->rank, &ns);
        nd = ns;
    } else {
        ns = t->n1;
        nd = t->n2;
        src = D_SRC(t);
        dst = D_DST(t);
    }
    *nin = ns;
    *nout = nd;
    *in = malloc(sizeof(int) * (size_t)(ns + 1));
    *out = malloc(sizeof(int) * (size_t)(nd + 1));
    memcpy(*in, src, sizeof(int) * (size_t)ns);
    memcpy(*out, dst, sizeof(int) * (size_t)nd);
    free(pairs);
}
