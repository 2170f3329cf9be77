/*
 * qb_common.c - what both of qcomm_bench's parts use (qb.h): its buffers and
 * the reduction of a figure over the ranks, so that the ping-pong
 * (qcomm_bench.c) and the halo (qb_halo.c) depend on this unit and not on
 * each other.
 */
#include <mpi.h>
#include <stdlib.h>

#include "p2.h"
#include "qb.h"
#include "tca-api.h"
#include "wl_tca.h"

void *qb_alloc(const qb_config *c, size_t bytes)
{
    void *p = NULL;
    WL_TCA(tcaMalloc(&p, bytes, c->host ? tcaMemoryCPU : tcaMemoryGPU));
    return p;
}

void qb_free(const qb_config *c, void *p) { WL_TCA(tcaFree(p, c->host ? tcaMemoryCPU : tcaMemoryGPU)); }

/* Over MPI where a transport started it, else over p2_exchange (a job
 * without the InfiniBand rail never starts MPI). */
static double over_ranks(double value, int max)
{
    int mpi_up = 0;
    MPI_Initialized(&mpi_up);
    if (mpi_up) {
        double out = 0;
        MPI_Allreduce(&value, &out, 1, MPI_DOUBLE, max ? MPI_MAX : MPI_SUM, MPI_COMM_WORLD);
        return out;
    }
    int size = p2_size();
    double *all = malloc((size_t)size * sizeof *all);
    if (!all)
        WL_TCA(TCA_ERROR_OUT_OF_MEMORY);
    WL_TCA(p2_exchange(&value, all, sizeof value));
    double out = all[0];
    for (int r = 1; r < size; r++)
        out = max ? (all[r] > out ? all[r] : out) : out + all[r];
    free(all);
    return out;
}

double qb_max_over_ranks(double value) { return over_ranks(value, 1); }
double qb_sum_over_ranks(double value) { return over_ranks(value, 0); }
