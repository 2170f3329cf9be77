/*
 * cg_comm.c - the CG iteration's communication over TCA and over MPI
 * (cg.h's transports). Depends on p2coll.h (the TCA collectives), MPI and
 * wl_tca.h.
 *
 * TCA, as the published code: set up once before the first iteration, the
 * allgather of p as a persistent p2_allgather_init on the GPU vector (in
 * place: each rank's block is already at its place; GPU-to-GPU DMA,
 * recursive doubling on 2..16 ranks) and three persistent p2_allreduce_init
 * of one double on host buffers (the cost model picks dissemination_pio:
 * CPU-to-CPU PIO); each iteration is p2_start + p2_wait.
 *
 * MPI, as MVAPICH2-GDR programs are written: MPI_Allgather (MPI_IN_PLACE) on
 * the same GPU vector (the MPI layer takes MVAPICH2's CUDA path for GPU
 * buffers) and MPI_Allreduce of one host double, blocking (Open MPI 4.1 has
 * no persistent collectives).
 */
#include <mpi.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "cg.h"
#include "p2coll.h"
#include "wl_tca.h"

static void flat_slots(cg_comm *c)
{
    for (int q = 0; q < c->ranks; q++)
        c->slot[q] = q;
}

/* ---- TCA -------------------------------------------------------------------- */

typedef struct tca_state {
    p2_request_t gather;
    p2_request_t reduce[CG_REDUCTIONS];
    double *send[CG_REDUCTIONS], *recv[CG_REDUCTIONS]; /* registered host memory */
} tca_state;

static const tcaOp red_op[CG_REDUCTIONS] = {TCA_OP_SUM, TCA_OP_SUM, TCA_OP_MAX};

static int tca_init(cg_comm *c, char *error, size_t error_size)
{
    tca_state *s = calloc(1, sizeof *s);
    if (!s) {
        snprintf(error, error_size, "out of memory");
        return -1;
    }
    c->state = s;
    flat_slots(c);
    WL_TCA(p2_allgather_init(P2_IN_PLACE, c->p, (size_t)c->block, TCA_DOUBLE, P2_COMM_WORLD,
                             &s->gather));
    for (int w = 0; w < CG_REDUCTIONS; w++) {
        WL_TCA(tcaMalloc((void **)&s->send[w], sizeof(double), tcaMemoryCPU));
        WL_TCA(tcaMalloc((void **)&s->recv[w], sizeof(double), tcaMemoryCPU));
        WL_TCA(p2_allreduce_init(s->send[w], s->recv[w], 1, TCA_DOUBLE, red_op[w], P2_COMM_WORLD,
                                 &s->reduce[w]));
    }
    snprintf(c->algorithms, sizeof c->algorithms, "%s+%s", p2_request_algorithm(s->gather),
             p2_request_algorithm(s->reduce[0]));
    return 0;
}

static void tca_barrier(cg_comm *c)
{
    (void)c;
    WL_TCA(p2_barrier(P2_COMM_WORLD));
}

static void tca_allgather(cg_comm *c)
{
    tca_state *s = c->state;
    WL_TCA(p2_start(s->gather));
    WL_TCA(p2_wait(s->gather));
}

static double tca_allreduce(cg_comm *c, int which, double local)
{
    tca_state *s = c->state;
    *s->send[which] = local;
    WL_TCA(p2_start(s->reduce[which]));
    WL_TCA(p2_wait(s->reduce[which]));
    return *s->recv[which];
}

static void tca_fini(cg_comm *c)
{
    tca_state *s = c->state;
    WL_TCA(p2_request_free(&s->gather));
    for (int w = 0; w < CG_REDUCTIONS; w++) {
        WL_TCA(p2_request_free(&s->reduce[w]));
        WL_TCA(tcaFree(s->send[w], tcaMemoryCPU));
        WL_TCA(tcaFree(s->recv[w], tcaMemoryCPU));
    }
    free(s);
    c->state = NULL;
}

const cg_comm_ops cg_comm_tca = {"tca", tca_init, tca_barrier, tca_allgather, tca_allreduce,
                                 tca_fini};

/* ---- MPI -------------------------------------------------------------------- */

static int mpi_init(cg_comm *c, char *error, size_t error_size)
{
    (void)error;
    (void)error_size;
    flat_slots(c);
    snprintf(c->algorithms, sizeof c->algorithms, "MPI_Allgather+MPI_Allreduce");
    return 0;
}

static void mpi_barrier(cg_comm *c)
{
    (void)c;
    MPI_Barrier(MPI_COMM_WORLD);
}

static void mpi_allgather(cg_comm *c)
{
    MPI_Allgather(MPI_IN_PLACE, 0, MPI_DATATYPE_NULL, c->p, (int)c->block, MPI_DOUBLE,
                  MPI_COMM_WORLD);
}

static double mpi_allreduce(cg_comm *c, int which, double local)
{
    (void)c;
    double out;
    MPI_Allreduce(&local, &out, 1, MPI_DOUBLE, which == CG_RED_RMAX ? MPI_MAX : MPI_SUM,
                  MPI_COMM_WORLD);
    return out;
}

static void mpi_fini(cg_comm *c) { (void)c; }

const cg_comm_ops cg_comm_mpi = {"mpi", mpi_init, mpi_barrier, mpi_allgather, mpi_allreduce,
                                 mpi_fini};
