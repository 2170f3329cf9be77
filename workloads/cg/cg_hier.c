/*
 * cg_hier.c - the CG iteration's communication on a machine of several
 * PEACH2 sub-clusters joined only by InfiniBand (HA-PACS/TCA's 64 nodes:
 * four 2x8 tori): TCA inside a sub-cluster, MPI between them, as the
 * XcalableMP TCA backend does (cg.h's transport "tca+mpi"). Depends on
 * p2coll.h and p2.h (P2_COMM_SUBCLUSTER, p2_subcluster), MPI, wl_tca.h.
 *
 * Ranks: S sub-clusters of s ranks each (equal sizes); rank q is rank k of
 * its sub-cluster c. A "column" is the S ranks with the same k, one per
 * sub-cluster (an MPI communicator, ordered by c).
 *
 * The allgather of p, set up once, two steps:
 *   1. MPI_Allgather in the column (over IB): the S blocks of the ranks k
 *      of every sub-cluster, to each of them;
 *   2. a persistent TCA allgather in the sub-cluster (GPU-to-GPU DMA) of
 *      those S blocks, so every rank has all S*s.
 * Both in place, with p laid out by (k, c): rank q's block at slot
 * k*S + c; the matrix's column indices are renumbered once for that layout
 * (cg_csr_remap), so the SpMV reads p where it lands, with no copy.
 *
 *     S = 2, s = 2: ranks 0 1 | 2 3 (sub-clusters 0, 1); p = [b0 b2 | b1 b3]
 *     step 1: columns {0, 2} and {1, 3}: 0, 2 hold b0 b2; 1, 3 hold b1 b3
 *     step 2: sub-cluster {0, 1}: 0 and 1 hold b0 b2 b1 b3 (so do 2, 3)
 *
 * Each allreduce: a persistent TCA allreduce in the sub-cluster (PIO,
 * dissemination) and then MPI_Allreduce in the column, one double each.
 */
#include <mpi.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "cg.h"
#include "p2.h"
#include "p2coll.h"
#include "wl_tca.h"

int cg_subclusters(void)
{
    int n = 0, seen[CG_MAX_RANKS + 1] = {0};
    for (int q = 0; q < p2_size() && q < CG_MAX_RANKS; q++) {
        int c = p2_subcluster(q);
        if (c >= 0 && c <= CG_MAX_RANKS && !seen[c]++)
            n++;
    }
    return n;
}

typedef struct hier_state {
    MPI_Comm column;
    int groups;    /* S */
    int per_group; /* s */
    int k;         /* this rank's rank in its sub-cluster */
    p2_request_t gather;
    p2_request_t reduce[CG_REDUCTIONS];
    double *send[CG_REDUCTIONS], *recv[CG_REDUCTIONS];
} hier_state;

static const tcaOp hier_op[CG_REDUCTIONS] = {TCA_OP_SUM, TCA_OP_SUM, TCA_OP_MAX};

static int hier_init(cg_comm *c, char *error, size_t error_size)
{
    /* group[q]: rank q's sub-cluster among those the job uses (0 .. S-1,
     * in the order of their ids); index[q]: its rank there. */
    int group[CG_MAX_RANKS], index[CG_MAX_RANKS], count[CG_MAX_RANKS] = {0};
    int dense[CG_MAX_RANKS + 1], groups = 0;
    for (int id = 0; id <= CG_MAX_RANKS; id++)
        dense[id] = -1;
    for (int q = 0; q < c->ranks; q++) {
        int id = p2_subcluster(q);
        if (id < 0 || id > CG_MAX_RANKS) {
            snprintf(error, error_size, "rank %d is on no PEACH2 sub-cluster", q);
            return -1;
        }
        dense[id] = 0;
    }
    for (int id = 0; id <= CG_MAX_RANKS; id++)
        if (dense[id] == 0)
            dense[id] = groups++;
    for (int q = 0; q < c->ranks; q++) {
        group[q] = dense[p2_subcluster(q)];
        index[q] = count[group[q]]++;
    }
    for (int g = 0; g < groups; g++)
        if (count[g] != count[0]) {
            snprintf(error, error_size, "sub-clusters of %d and %d ranks: the hierarchical "
                     "allgather needs the same number on each", count[0], count[g]);
            return -1;
        }
    hier_state *s = calloc(1, sizeof *s);
    if (!s) {
        snprintf(error, error_size, "out of memory");
        return -1;
    }
    c->state = s;
    s->groups = groups;
    s->per_group = count[0];
    s->k = index[c->rank];
    for (int q = 0; q < c->ranks; q++)
        c->slot[q] = index[q] * groups + group[q];
    MPI_Comm_split(MPI_COMM_WORLD, s->k, group[c->rank], &s->column);
    WL_TCA(p2_allgather_init(P2_IN_PLACE, c->p, (size_t)(c->block * groups), TCA_DOUBLE,
                             P2_COMM_SUBCLUSTER, &s->gather));
    for (int w = 0; w < CG_REDUCTIONS; w++) {
        WL_TCA(tcaMalloc((void **)&s->send[w], sizeof(double), tcaMemoryCPU));
        WL_TCA(tcaMalloc((void **)&s->recv[w], sizeof(double), tcaMemoryCPU));
        WL_TCA(p2_allreduce_init(s->send[w], s->recv[w], 1, TCA_DOUBLE, hier_op[w],
                                 P2_COMM_SUBCLUSTER, &s->reduce[w]));
    }
    snprintf(c->algorithms, sizeof c->algorithms, "MPI_Allgather+%s/%s+MPI_Allreduce",
             p2_request_algorithm(s->gather), p2_request_algorithm(s->reduce[0]));
    return 0;
}

static void hier_barrier(cg_comm *c)
{
    (void)c;
    MPI_Barrier(MPI_COMM_WORLD);
}

static void hier_allgather(cg_comm *c)
{
    hier_state *s = c->state;
    MPI_Allgather(MPI_IN_PLACE, 0, MPI_DATATYPE_NULL, c->p + (int64_t)s->k * s->groups * c->block,
                  (int)c->block, MPI_DOUBLE, s->column);
    WL_TCA(p2_start(s->gather));
    WL_TCA(p2_wait(s->gather));
}

static double hier_allreduce(cg_comm *c, int which, double local)
{
    hier_state *s = c->state;
    *s->send[which] = local;
    WL_TCA(p2_start(s->reduce[which]));
    WL_TCA(p2_wait(s->reduce[which]));
    double in = *s->recv[which], out;
    MPI_Allreduce(&in, &out, 1, MPI_DOUBLE, which == CG_RED_RMAX ? MPI_MAX : MPI_SUM, s->column);
    return out;
}

static void hier_fini(cg_comm *c)
{
    hier_state *s = c->state;
    WL_TCA(p2_request_free(&s->gather));
    for (int w = 0; w < CG_REDUCTIONS; w++) {
        WL_TCA(p2_request_free(&s->reduce[w]));
        WL_TCA(tcaFree(s->send[w], tcaMemoryCPU));
        WL_TCA(tcaFree(s->recv[w], tcaMemoryCPU));
    }
    MPI_Comm_free(&s->column);
    free(s);
    c->state = NULL;
}


const cg_comm_ops cg_comm_hier = {"tca+mpi", hier_init, hier_barrier, hier_allgather,
                                  hier_allreduce, hier_fini};
