/* mpi_topo: process topologies and the neighbourhood collectives on the
 * virtual-time MPI layer (mpicc, run by p2run), at any number of ranks:
 *   - MPI_Dims_create against Open MPI's own (PMPI_Dims_create) for 1 to 64
 *     nodes in 1 to 4 dimensions, free and with fixed entries
 *   - a 2-D Cartesian grid (MPI_Dims_create of the ranks), periodic in
 *     both, one or neither dimension: MPI_Topo_test, _Cartdim_get,
 *     _Cart_get, _Cart_coords and _Cart_rank for every rank, _Cart_shift;
 *     a halo exchange of a 4 x 5 block of doubles (rows contiguous, columns
 *     a vector type) with MPI_Cart_shift + MPI_Sendrecv, and the same with
 *     MPI_Neighbor_alltoallw (the row and column types), MPI_Neighbor_alltoall
 *     and _alltoallv (packed blocks): every halo byte for byte against the
 *     Sendrecv one and against the values the neighbours hold, the edge of
 *     a non-periodic grid untouched; at 1 and 2 ranks a periodic dimension
 *     of one or two processes (the same process on both sides: block s
 *     lands in block s ^ 1); MPI_Neighbor_allgather(v) give the neighbours'
 *     ranks; MPI_Cart_sub rows and columns; a grid of fewer processes than
 *     the communicator (MPI_COMM_NULL beyond, MPI_Cart_map alike);
 *     MPI_Comm_dup keeps the topology, MPI_Comm_split does not
 *   - a graph (a ring, each node's edges to its next and previous: at 1 and
 *     2 ranks the same neighbour twice): MPI_Graphdims_get, _Graph_get,
 *     _neighbors(_count), _map; MPI_Neighbor_alltoall, where the k-th edge
 *     to a process matches its k-th edge back
 *   - distributed graphs: MPI_Dist_graph_create_adjacent (from r-1 and r-2,
 *     to r+1 and r+2, weighted) with MPI_Neighbor_alltoallv of different
 *     counts per edge; MPI_Dist_graph_create with each rank naming its own
 *     edges (weighted) and with rank 0 naming everyone's (unweighted):
 *     MPI_Dist_graph_neighbors(_count) against the edges in the order MPI_
 *     Dist_graph_create documents here (by the rank that named them);
 *     MPI_Neighbor_allgather on it
 *   - two nonblocking neighbourhood collectives in flight at once
 *   - timing: MPI_Neighbor_alltoall of 8 KiB blocks on the grid and
 *     MPI_Neighbor_allgather of 8 B on the ring, from one simulated instant
 *     (longest rank)
 * With the argument `nonblocking` every neighbourhood collective is its
 * MPI_Ineighbor_ form started and waited for at once: the output (the
 * times included) must be the same (test mpi.topo_deterministic).
 * Prints "mpi_topo: all N checks passed on P ranks" (rank 0); any failure
 * exits 1. */
#include <mpi.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

static int rank, size, checks, nonblocking;

#define CHECK(c)                                                                   \
    do {                                                                           \
        checks++;                                                                  \
        if (!(c)) {                                                                \
            fprintf(stderr, "rank %d: FAIL %s (line %d)\n", rank, #c, __LINE__);   \
            exit(1);                                                               \
        }                                                                          \
    } while (0)

static int mod(int a, int n) { return ((a % n) + n) % n; }

/* ---- The neighbourhood collectives, blocking or started and waited at once ---- */

static void wait1(MPI_Request *q) { MPI_Wait(q, MPI_STATUS_IGNORE); }

static void n_allgather(const void *s, int sc, MPI_Datatype st, void *r, int rc, MPI_Datatype rt,
                        MPI_Comm c)
{
    MPI_Request q;
    if (!nonblocking)
        MPI_Neighbor_allgather(s, sc, st, r, rc, rt, c);
    else
        MPI_Ineighbor_allgather(s, sc, st, r, rc, rt, c, &q), wait1(&q);
}

static void n_allgatherv(const void *s, int sc, MPI_Datatype st, void *r, const int *rc,
                         const int *rd, MPI_Datatype rt, MPI_Comm c)
{
    MPI_Request q;
    if (!nonblocking)
        MPI_Neighbor_allgatherv(s, sc, st, r, rc, rd, rt, c);
    else
        MPI_Ineighbor_allgatherv(s, sc, st, r, rc, rd, rt, c, &q), wait1(&q);
}

static void n_alltoall(const void *s, int sc, MPI_Datatype st, void *r, int rc, MPI_Datatype rt,
                       MPI_Comm c)
{
    MPI_Request q;
    if (!nonblocking)
        MPI_Neighbor_alltoall(s, sc, st, r, rc, rt, c);
    else
        MPI_Ineighbor_alltoall(s, sc, st, r, rc, rt, c, &q), wait1(&q);
}

static void n_alltoallv(const void *s, const int *sc, const int *sd, MPI_Datatype st, void *r,
                        const int *rc, const int *rd, MPI_Datatype rt, MPI_Comm c)
{
    MPI_Request q;
    if (!nonblocking)
        MPI_Neighbor_alltoallv(s, sc, sd, st, r, rc, rd, rt, c);
    else
        MPI_Ineighbor_alltoallv(s, sc, sd, st, r, rc, rd, rt, c, &q), wait1(&q);
}

static void n_alltoallw(const void *s, const int *sc, const MPI_Aint *sd, const MPI_Datatype *st,
                        void *r, const int *rc, const MPI_Aint *rd, const MPI_Datatype *rt,
                        MPI_Comm c)
{
    MPI_Request q;
    if (!nonblocking)
        MPI_Neighbor_alltoallw(s, sc, sd, st, r, rc, rd, rt, c);
    else
        MPI_Ineighbor_alltoallw(s, sc, sd, st, r, rc, rd, rt, c, &q), wait1(&q);
}

/* ---- MPI_Dims_create ------------------------------------------------------------- */

static void dims_create(void)
{
    for (int n = 1; n <= 64; n++)
        for (int nd = 1; nd <= 4; nd++)
            for (int fix = 0; fix < 3; fix++) {
                int a[4] = {0, 0, 0, 0}, b[4] = {0, 0, 0, 0};
                if (fix == 1 && n % 2 == 0 && nd > 1)
                    a[nd - 1] = b[nd - 1] = 2; /* the last one fixed */
                else if (fix == 2 && n % 3 == 0 && nd > 1)
                    a[0] = b[0] = 3;
                else if (fix)
                    continue;
                MPI_Dims_create(n, nd, a);
                PMPI_Dims_create(n, nd, b);
                CHECK(!memcmp(a, b, sizeof a));
            }
    if (rank == 0)
        printf("dims_create: 1-64 nodes in 1-4 dimensions, free and fixed entries, as Open "
               "MPI's: ok\n");
}

/* ---- The Cartesian grid ------------------------------------------------------------- */

enum { NX = 4, NY = 5 }; /* the interior; a halo of one all round */
#define AT(a, i, j) ((a)[(i) * (NY + 2) + (j)])

static double value(int gi, int gj) { return gi * 1000.0 + gj + 0.25; }

/* The block of the process at grid coordinates (cx, cy), halo -1. */
static void block_fill(double *a, int cx, int cy)
{
    for (int i = 0; i < NX + 2; i++)
        for (int j = 0; j < NY + 2; j++)
            AT(a, i, j) = (i >= 1 && i <= NX && j >= 1 && j <= NY)
                              ? value(cx * NX + i - 1, cy * NY + j - 1)
                              : -1.0;
}

/* Every halo cell against the neighbours' values (-1 off a non-periodic edge). */
static int halo_right(const double *a, const int dims[2], const int periods[2], int cx, int cy)
{
    int gx = dims[0] * NX, gy = dims[1] * NY;
    for (int i = 0; i < NX + 2; i++)
        for (int j = 0; j < NY + 2; j++) {
            int edge_i = i == 0 || i == NX + 1, edge_j = j == 0 || j == NY + 1;
            if (!(edge_i ^ edge_j)) /* the interior, or a corner (not exchanged) */
                continue;
            int gi = cx * NX + i - 1, gj = cy * NY + j - 1;
            double want;
            if ((gi < 0 || gi >= gx) && !periods[0])
                want = -1.0;
            else if ((gj < 0 || gj >= gy) && !periods[1])
                want = -1.0;
            else
                want = value(mod(gi, gx), mod(gj, gy));
            if (AT(a, i, j) != want)
                return 0;
        }
    return 1;
}

/* The halo exchange with MPI_Cart_shift and MPI_Sendrecv. */
static void halo_sendrecv(double *a, MPI_Comm cart, MPI_Datatype col)
{
    int lo, hi;
    MPI_Cart_shift(cart, 0, 1, &lo, &hi);
    MPI_Sendrecv(&AT(a, NX, 1), NY, MPI_DOUBLE, hi, 1, &AT(a, 0, 1), NY, MPI_DOUBLE, lo, 1, cart,
                 MPI_STATUS_IGNORE);
    MPI_Sendrecv(&AT(a, 1, 1), NY, MPI_DOUBLE, lo, 2, &AT(a, NX + 1, 1), NY, MPI_DOUBLE, hi, 2,
                 cart, MPI_STATUS_IGNORE);
    MPI_Cart_shift(cart, 1, 1, &lo, &hi);
    MPI_Sendrecv(&AT(a, 1, NY), 1, col, hi, 3, &AT(a, 1, 0), 1, col, lo, 3, cart,
                 MPI_STATUS_IGNORE);
    MPI_Sendrecv(&AT(a, 1, 1), 1, col, lo, 4, &AT(a, 1, NY + 1), 1, col, hi, 4, cart,
                 MPI_STATUS_IGNORE);
}

/* The same with MPI_Neighbor_alltoallw: blocks in MPI's order (dimension 0
 * negative, positive, dimension 1 negative, positive), straight from and
 * into the array with the row and column types. */
static void halo_alltoallw(double *a, MPI_Comm cart, MPI_Datatype col)
{
    MPI_Aint base = (MPI_Aint)(void *)a;
#define OFF(i, j) ((MPI_Aint)(void *)&AT(a, i, j) - base)
    MPI_Aint sd[4] = {OFF(1, 1), OFF(NX, 1), OFF(1, 1), OFF(1, NY)};
    MPI_Aint rd[4] = {OFF(0, 1), OFF(NX + 1, 1), OFF(1, 0), OFF(1, NY + 1)};
#undef OFF
    int cnt[4] = {NY, NY, 1, 1};
    MPI_Datatype ty[4] = {MPI_DOUBLE, MPI_DOUBLE, col, col};
    n_alltoallw(a, cnt, sd, ty, a, cnt, rd, ty, cart);
}

/* The same with packed blocks: MPI_Neighbor_alltoall (blocks of NY, the
 * columns padded) or _alltoallv (NY, NY, NX, NX). */
static void halo_packed(double *a, MPI_Comm cart, int v)
{
    double s[4][NY], r[4][NY];
    memset(r, 0, sizeof r);
    for (int j = 0; j < NY; j++) {
        s[0][j] = AT(a, 1, j + 1);
        s[1][j] = AT(a, NX, j + 1);
    }
    for (int i = 0; i < NY; i++) {
        s[2][i] = i < NX ? AT(a, i + 1, 1) : 0;
        s[3][i] = i < NX ? AT(a, i + 1, NY) : 0;
    }
    int cnt[4] = {NY, NY, NX, NX}, disp[4] = {0, NY, 2 * NY, 3 * NY};
    /* a block from MPI_PROC_NULL stays as it was: keep the halo's -1 */
    for (int k = 0; k < 4; k++)
        for (int j = 0; j < NY; j++)
            r[k][j] = -1.0;
    if (v)
        n_alltoallv(s, cnt, disp, MPI_DOUBLE, r, cnt, disp, MPI_DOUBLE, cart);
    else
        n_alltoall(s, NY, MPI_DOUBLE, r, NY, MPI_DOUBLE, cart);
    for (int j = 0; j < NY; j++) {
        AT(a, 0, j + 1) = r[0][j];
        AT(a, NX + 1, j + 1) = r[1][j];
    }
    for (int i = 0; i < NX; i++) {
        AT(a, i + 1, 0) = r[2][i];
        AT(a, i + 1, NY + 1) = r[3][i];
    }
}

/* The rank at coordinates c with c[d] set to x; MPI_PROC_NULL off a
 * non-periodic edge. */
static int grid_rank(const int dims[2], const int periods[2], const int c[2], int d, int x)
{
    if (x < 0 || x >= dims[d]) {
        if (!periods[d])
            return MPI_PROC_NULL;
        x = mod(x, dims[d]);
    }
    int cc[2] = {c[0], c[1]};
    cc[d] = x;
    return cc[0] * dims[1] + cc[1];
}

static void cart_grid(const int periods[2])
{
    int dims[2] = {0, 0};
    MPI_Dims_create(size, 2, dims);
    MPI_Comm cart;
    MPI_Cart_create(MPI_COMM_WORLD, 2, dims, periods, 1, &cart);
    int kind, nd, gd[2], gp[2], gc[2], crank, csize;
    MPI_Topo_test(cart, &kind);
    MPI_Cartdim_get(cart, &nd);
    MPI_Cart_get(cart, 2, gd, gp, gc);
    MPI_Comm_rank(cart, &crank);
    MPI_Comm_size(cart, &csize);
    CHECK(kind == MPI_CART && nd == 2 && csize == size && crank == rank);
    CHECK(gd[0] == dims[0] && gd[1] == dims[1] && gp[0] == (periods[0] != 0) &&
          gp[1] == (periods[1] != 0));
    CHECK(gc[0] == rank / dims[1] && gc[1] == rank % dims[1]); /* row-major */
    for (int r = 0; r < size; r++) {
        int c[2], back;
        MPI_Cart_coords(cart, r, 2, c);
        MPI_Cart_rank(cart, c, &back);
        CHECK(c[0] == r / dims[1] && c[1] == r % dims[1] && back == r);
    }
    if (periods[0]) { /* wrapped coordinates */
        int c[2] = {gc[0] - dims[0], gc[1]}, back;
        MPI_Cart_rank(cart, c, &back);
        CHECK(back == rank);
    }
    for (int d = 0; d < 2; d++)
        for (int disp = -2; disp <= 2; disp++) {
            int src, dst;
            MPI_Cart_shift(cart, d, disp, &src, &dst);
            CHECK(src == grid_rank(dims, periods, gc, d, gc[d] - disp) &&
                  dst == grid_rank(dims, periods, gc, d, gc[d] + disp));
        }

    /* the halo exchanges */
    MPI_Datatype col;
    MPI_Type_vector(NX, 1, NY + 2, MPI_DOUBLE, &col);
    MPI_Type_commit(&col);
    size_t bytes = sizeof(double) * (NX + 2) * (NY + 2);
    double *a = malloc(bytes), *b = malloc(bytes);
    block_fill(a, gc[0], gc[1]);
    halo_sendrecv(a, cart, col);
    CHECK(halo_right(a, dims, periods, gc[0], gc[1]));
    for (int form = 0; form < 3; form++) {
        block_fill(b, gc[0], gc[1]);
        if (form == 0)
            halo_alltoallw(b, cart, col);
        else
            halo_packed(b, cart, form == 2);
        CHECK(!memcmp(a, b, bytes));
    }
    free(a);
    free(b);
    MPI_Type_free(&col);

    /* the neighbours' ranks: MPI_Neighbor_allgather(v) */
    int nb[4], want[4], got[4] = {-7, -7, -7, -7};
    MPI_Cart_shift(cart, 0, 1, &want[0], &want[1]);
    MPI_Cart_shift(cart, 1, 1, &want[2], &want[3]);
    n_allgather(&rank, 1, MPI_INT, got, 1, MPI_INT, cart);
    for (int k = 0; k < 4; k++)
        CHECK(got[k] == (want[k] == MPI_PROC_NULL ? -7 : want[k]));
    /* v: neighbour k sends its rank + 1 copies of its rank */
    int cnt[4], disp[4], total = 0, mine[64], all[4 * 64];
    for (int i = 0; i <= rank && i < 64; i++)
        mine[i] = rank;
    for (int k = 0; k < 4; k++) {
        nb[k] = want[k];
        cnt[k] = nb[k] == MPI_PROC_NULL ? 0 : nb[k] + 1;
        disp[k] = total;
        total += cnt[k];
    }
    for (int i = 0; i < total; i++)
        all[i] = -7;
    n_allgatherv(mine, rank + 1, MPI_INT, all, cnt, disp, MPI_INT, cart);
    for (int k = 0; k < 4; k++)
        for (int i = 0; i < cnt[k]; i++)
            CHECK(all[disp[k] + i] == nb[k]);

    /* MPI_Cart_sub: the rows (dimension 1 kept) and the columns */
    for (int keep = 0; keep < 2; keep++) {
        int remain[2] = {keep == 0, keep == 1}, sr, ss, sd, sum;
        MPI_Comm sub;
        MPI_Cart_sub(cart, remain, &sub);
        MPI_Comm_rank(sub, &sr);
        MPI_Comm_size(sub, &ss);
        MPI_Cartdim_get(sub, &sd);
        CHECK(ss == dims[keep] && sr == gc[keep] && sd == 1);
        MPI_Allreduce(&rank, &sum, 1, MPI_INT, MPI_SUM, sub);
        int want_sum = 0;
        for (int x = 0; x < dims[keep]; x++)
            want_sum += keep ? gc[0] * dims[1] + x : x * dims[1] + gc[1];
        CHECK(sum == want_sum);
        MPI_Comm_free(&sub);
    }
    /* MPI_Comm_dup keeps the topology, MPI_Comm_split does not */
    MPI_Comm dup, split;
    MPI_Comm_dup(cart, &dup);
    MPI_Topo_test(dup, &kind);
    CHECK(kind == MPI_CART);
    MPI_Cart_get(dup, 2, gd, gp, gc);
    CHECK(gd[0] == dims[0] && gd[1] == dims[1]);
    MPI_Comm_split(cart, 0, rank, &split);
    MPI_Topo_test(split, &kind);
    CHECK(kind == MPI_UNDEFINED);
    MPI_Comm_free(&dup);
    MPI_Comm_free(&split);
    MPI_Comm_free(&cart);
    if (rank == 0)
        printf("cartesian %dx%d, periods (%d,%d): queries, shifts, halo exchange by Sendrecv, "
               "Neighbor_alltoallw, _alltoall, _alltoallv alike, allgather(v), sub: ok\n",
               dims[0], dims[1], periods[0] != 0, periods[1] != 0);
}

/* A grid of fewer processes than the communicator, and MPI_Cart_map. */
static void cart_fewer(void)
{
    int n = size > 1 ? size - 1 : 1, period = 1, mapped;
    MPI_Comm cart;
    MPI_Cart_create(MPI_COMM_WORLD, 1, &n, &period, 0, &cart);
    MPI_Cart_map(MPI_COMM_WORLD, 1, &n, &period, &mapped);
    CHECK((cart == MPI_COMM_NULL) == (rank >= n));
    CHECK(mapped == (rank < n ? rank : MPI_UNDEFINED));
    if (cart != MPI_COMM_NULL) {
        int cs;
        MPI_Comm_size(cart, &cs);
        CHECK(cs == n);
        MPI_Comm_free(&cart);
    }
    int kind;
    MPI_Topo_test(MPI_COMM_WORLD, &kind);
    CHECK(kind == MPI_UNDEFINED);
}

/* ---- Graphs ------------------------------------------------------------------- */

/* The ring: node i's edges to i + 1 and i - 1. */
static void ring_edges(int n, int *index, int *edges)
{
    for (int i = 0; i < n; i++) {
        index[i] = 2 * (i + 1);
        edges[2 * i] = mod(i + 1, n);
        edges[2 * i + 1] = mod(i - 1, n);
    }
}

/* The block that arrives in slot k (from neighbour nbr[k]) when the k-th
 * edge to a process matches its k-th edge back: the position m of the c-th
 * edge from nbr[k] to this rank, c the number of earlier slots from nbr[k]. */
static int matched_edge(const int *mine, int k, const int *theirs, int ntheirs)
{
    int c = 0;
    for (int i = 0; i < k; i++)
        c += mine[i] == mine[k];
    for (int m = 0; m < ntheirs; m++)
        if (theirs[m] == rank && c-- == 0)
            return m;
    return -1;
}

static void graph(void)
{
    int *index = malloc(sizeof(int) * (size_t)size), *edges = malloc(sizeof(int) * 2 * (size_t)size);
    ring_edges(size, index, edges);
    MPI_Comm g;
    MPI_Graph_create(MPI_COMM_WORLD, size, index, edges, 0, &g);
    int kind, nn, ne, cnt, nbr[2], mapped;
    MPI_Topo_test(g, &kind);
    MPI_Graphdims_get(g, &nn, &ne);
    CHECK(kind == MPI_GRAPH && nn == size && ne == 2 * size);
    int *gi = malloc(sizeof(int) * (size_t)size), *ge = malloc(sizeof(int) * 2 * (size_t)size);
    MPI_Graph_get(g, size, 2 * size, gi, ge);
    CHECK(!memcmp(gi, index, sizeof(int) * (size_t)size) &&
          !memcmp(ge, edges, sizeof(int) * 2 * (size_t)size));
    for (int r = 0; r < size; r++) {
        MPI_Graph_neighbors_count(g, r, &cnt);
        MPI_Graph_neighbors(g, r, 2, nbr);
        CHECK(cnt == 2 && nbr[0] == mod(r + 1, size) && nbr[1] == mod(r - 1, size));
    }
    MPI_Graph_map(MPI_COMM_WORLD, size, index, edges, &mapped);
    CHECK(mapped == rank);
    /* block k to neighbour k: rank * 100 + k */
    int s[2] = {rank * 100, rank * 100 + 1}, r[2] = {-1, -1};
    n_alltoall(s, 1, MPI_INT, r, 1, MPI_INT, g);
    int *mine = edges + 2 * rank;
    for (int k = 0; k < 2; k++) {
        int from = mine[k];
        int m = matched_edge(mine, k, edges + 2 * from, 2);
        CHECK(m >= 0 && r[k] == from * 100 + m);
    }
    MPI_Comm_free(&g);
    free(index);
    free(edges);
    free(gi);
    free(ge);
    if (rank == 0)
        printf("graph: a ring, queries, Neighbor_alltoall edge by edge: ok\n");
}

static void dist_graph(void)
{
    /* adjacent: from r-1 and r-2, to r+1 and r+2 */
    int src[2] = {mod(rank - 1, size), mod(rank - 2, size)};
    int dst[2] = {mod(rank + 1, size), mod(rank + 2, size)};
    int sw[2] = {11, 12}, dw[2] = {21, 22};
    MPI_Comm d;
    MPI_Dist_graph_create_adjacent(MPI_COMM_WORLD, 2, src, sw, 2, dst, dw, MPI_INFO_NULL, 0, &d);
    int kind, in, out, wtd, gs[2], gsw[2], gd[2], gdw[2];
    MPI_Topo_test(d, &kind);
    MPI_Dist_graph_neighbors_count(d, &in, &out, &wtd);
    MPI_Dist_graph_neighbors(d, 2, gs, gsw, 2, gd, gdw);
    CHECK(kind == MPI_DIST_GRAPH && in == 2 && out == 2 && wtd == 1);
    CHECK(!memcmp(gs, src, sizeof src) && !memcmp(gd, dst, sizeof dst) &&
          !memcmp(gsw, sw, sizeof sw) && !memcmp(gdw, dw, sizeof dw));
    /* alltoallv: to destination k, (k + 1) * (rank + 1) ints rank * 1000 + k * 100 + i */
    int scnt[2], sdsp[2], rcnt[2], rdsp[2], st = 0, rt = 0;
    for (int k = 0; k < 2; k++) {
        scnt[k] = (k + 1) * (rank + 1);
        sdsp[k] = st;
        st += scnt[k];
    }
    int *sb = malloc(sizeof(int) * (size_t)st);
    for (int k = 0; k < 2; k++)
        for (int i = 0; i < scnt[k]; i++)
            sb[sdsp[k] + i] = rank * 1000 + k * 100 + i;
    int theirs[2];
    for (int j = 0; j < 2; j++) { /* source j sends its block m (its m-th destination is me) */
        int s = src[j];
        theirs[0] = mod(s + 1, size);
        theirs[1] = mod(s + 2, size);
        int m = matched_edge(src, j, theirs, 2);
        CHECK(m >= 0);
        rcnt[j] = (m + 1) * (s + 1);
        rdsp[j] = rt;
        rt += rcnt[j];
    }
    int *rb = malloc(sizeof(int) * (size_t)rt);
    n_alltoallv(sb, scnt, sdsp, MPI_INT, rb, rcnt, rdsp, MPI_INT, d);
    for (int j = 0; j < 2; j++) {
        int s = src[j];
        theirs[0] = mod(s + 1, size);
        theirs[1] = mod(s + 2, size);
        int m = matched_edge(src, j, theirs, 2);
        for (int i = 0; i < rcnt[j]; i++)
            CHECK(rb[rdsp[j] + i] == s * 1000 + m * 100 + i);
    }
    free(sb);
    free(rb);
    MPI_Comm_free(&d);

    /* general: each rank names its own out-edges (to r+1, r+3; weights 5, 7) */
    int me = rank, deg = 2, tgt[2] = {mod(rank + 1, size), mod(rank + 3, size)}, w[2] = {5, 7};
    MPI_Dist_graph_create(MPI_COMM_WORLD, 1, &me, &deg, tgt, w, MPI_INFO_NULL, 0, &d);
    MPI_Dist_graph_neighbors_count(d, &in, &out, &wtd);
    CHECK(in == 2 && out == 2 && wtd == 1);
    MPI_Dist_graph_neighbors(d, 2, gs, gsw, 2, gd, gdw);
    CHECK(gd[0] == tgt[0] && gd[1] == tgt[1] && gdw[0] == 5 && gdw[1] == 7);
    /* in-edges by the rank that named them, then in its order */
    int k = 0;
    for (int q = 0; q < size; q++)
        for (int e = 0; e < 2; e++)
            if (mod(q + (e ? 3 : 1), size) == rank) {
                CHECK(k < 2 && gs[k] == q && gsw[k] == (e ? 7 : 5));
                k++;
            }
    CHECK(k == 2);
    MPI_Comm_free(&d);

    /* general, unweighted: rank 0 names every edge i -> i + 2 (MPI_UNWEIGHTED
     * is a constant pointer that must not be read: GCC cannot know) */
#pragma GCC diagnostic push
#pragma GCC diagnostic ignored "-Wstringop-overread"
#pragma GCC diagnostic ignored "-Wstringop-overflow"
    int n0 = rank == 0 ? size : 0;
    int *srcs = malloc(sizeof(int) * (size_t)(size + 1)), *degs = malloc(sizeof(int) * (size_t)(size + 1));
    int *tgts = malloc(sizeof(int) * (size_t)(size + 1));
    for (int i = 0; i < n0; i++) {
        srcs[i] = i;
        degs[i] = 1;
        tgts[i] = mod(i + 2, size);
    }
    MPI_Dist_graph_create(MPI_COMM_WORLD, n0, srcs, degs, tgts, MPI_UNWEIGHTED, MPI_INFO_NULL, 0,
                          &d);
    MPI_Dist_graph_neighbors_count(d, &in, &out, &wtd);
    CHECK(in == 1 && out == 1 && wtd == 0);
    MPI_Dist_graph_neighbors(d, 1, gs, MPI_UNWEIGHTED, 1, gd, MPI_UNWEIGHTED);
    CHECK(gs[0] == mod(rank - 2, size) && gd[0] == mod(rank + 2, size));
#pragma GCC diagnostic pop
    int got = -1;
    n_allgather(&rank, 1, MPI_INT, &got, 1, MPI_INT, d);
    CHECK(got == mod(rank - 2, size));
    MPI_Comm_free(&d);
    free(srcs);
    free(degs);
    free(tgts);
    if (rank == 0)
        printf("distributed graphs: adjacent (weighted, Neighbor_alltoallv), general by every "
               "rank and by rank 0 (unweighted, Neighbor_allgather): ok\n");
}

/* Two nonblocking neighbourhood collectives in flight at once on one grid
 * (with `nonblocking`; one after the other otherwise), waited in reverse. */
static void in_flight(void)
{
    int dims[2] = {0, 0}, periods[2] = {1, 1};
    MPI_Dims_create(size, 2, dims);
    MPI_Comm cart;
    MPI_Cart_create(MPI_COMM_WORLD, 2, dims, periods, 0, &cart);
    int nb[4], ranks[4], blocks[4], mine[4];
    MPI_Cart_shift(cart, 0, 1, &nb[0], &nb[1]);
    MPI_Cart_shift(cart, 1, 1, &nb[2], &nb[3]);
    for (int k = 0; k < 4; k++)
        mine[k] = rank * 10 + k;
    if (nonblocking) {
        MPI_Request q[2];
        MPI_Ineighbor_allgather(&rank, 1, MPI_INT, ranks, 1, MPI_INT, cart, &q[0]);
        MPI_Ineighbor_alltoall(mine, 1, MPI_INT, blocks, 1, MPI_INT, cart, &q[1]);
        MPI_Wait(&q[1], MPI_STATUS_IGNORE);
        MPI_Wait(&q[0], MPI_STATUS_IGNORE);
    } else {
        MPI_Neighbor_allgather(&rank, 1, MPI_INT, ranks, 1, MPI_INT, cart);
        MPI_Neighbor_alltoall(mine, 1, MPI_INT, blocks, 1, MPI_INT, cart);
    }
    for (int k = 0; k < 4; k++)
        CHECK(ranks[k] == nb[k] && blocks[k] == nb[k] * 10 + (k ^ 1));
    MPI_Comm_free(&cart);
    if (rank == 0)
        printf("in flight: Ineighbor_allgather and Ineighbor_alltoall at once: ok\n");
}

/* From one simulated instant (a barrier), the longest rank's time. */
static void timing(void)
{
    enum { B = 1024 }; /* 8 KiB blocks of doubles */
    int dims[2] = {0, 0}, periods[2] = {1, 1};
    MPI_Dims_create(size, 2, dims);
    MPI_Comm cart, ring;
    MPI_Cart_create(MPI_COMM_WORLD, 2, dims, periods, 0, &cart);
    double *s = malloc(sizeof(double) * 4 * B), *r = malloc(sizeof(double) * 4 * B), t, tmax;
    for (int i = 0; i < 4 * B; i++)
        s[i] = rank + i * 0.5;
    MPI_Barrier(cart);
    t = MPI_Wtime();
    n_alltoall(s, B, MPI_DOUBLE, r, B, MPI_DOUBLE, cart);
    t = MPI_Wtime() - t;
    MPI_Reduce(&t, &tmax, 1, MPI_DOUBLE, MPI_MAX, 0, MPI_COMM_WORLD);
    if (rank == 0)
        printf("timing: neighbor_alltoall of 8192 B blocks on the %dx%d torus: %.6f us\n",
               dims[0], dims[1], tmax * 1e6);
    int *index = malloc(sizeof(int) * (size_t)size), *edges = malloc(sizeof(int) * 2 * (size_t)size);
    ring_edges(size, index, edges);
    MPI_Graph_create(MPI_COMM_WORLD, size, index, edges, 0, &ring);
    double x = rank, y[2];
    MPI_Barrier(ring);
    t = MPI_Wtime();
    n_allgather(&x, 1, MPI_DOUBLE, y, 1, MPI_DOUBLE, ring);
    t = MPI_Wtime() - t;
    MPI_Reduce(&t, &tmax, 1, MPI_DOUBLE, MPI_MAX, 0, MPI_COMM_WORLD);
    if (rank == 0)
        printf("timing: neighbor_allgather of 8 B on the ring graph: %.6f us\n", tmax * 1e6);
    MPI_Comm_free(&cart);
    MPI_Comm_free(&ring);
    free(s);
    free(r);
    free(index);
    free(edges);
}

int main(int argc, char **argv)
{
    MPI_Init(&argc, &argv);
    MPI_Comm_rank(MPI_COMM_WORLD, &rank);
    MPI_Comm_size(MPI_COMM_WORLD, &size);
    nonblocking = argc > 1 && !strcmp(argv[1], "nonblocking");
    dims_create();
    static const int periods[4][2] = {{1, 1}, {1, 0}, {0, 1}, {0, 0}};
    for (int p = 0; p < 4; p++)
        cart_grid(periods[p]);
    cart_fewer();
    graph();
    dist_graph();
    timing();
    in_flight();
    int all;
    MPI_Reduce(&checks, &all, 1, MPI_INT, MPI_SUM, 0, MPI_COMM_WORLD);
    if (rank == 0)
        printf("mpi_topo: all %d checks passed on %d ranks\n", all, size);
    MPI_Finalize();
    return 0;
}
