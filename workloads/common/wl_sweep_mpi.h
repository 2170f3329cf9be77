/*
 * wl_sweep_mpi.h - the size sweep's transport over MPI (wl_sweep.h,
 * wl_sweep_transport), for the workloads built with mpicc: a barrier before
 * the timing, and OSU's figures, the ranks' sum or the slowest, reduced to
 * rank 0. Header-only: wlcommon links no MPI.
 */
#ifndef WL_SWEEP_MPI_H
#define WL_SWEEP_MPI_H

#include <mpi.h>

#include "wl_sweep.h"

static inline void wl_sweep_mpi_barrier(void *ctx)
{
    (void)ctx;
    MPI_Barrier(MPI_COMM_WORLD);
}

static inline double wl_sweep_mpi_reduce(void *ctx, double value, wl_sweep_op op)
{
    (void)ctx;
    double out = 0;
    MPI_Reduce(&value, &out, 1, MPI_DOUBLE, op == WL_SWEEP_MAX ? MPI_MAX : MPI_SUM, 0,
               MPI_COMM_WORLD);
    return out;
}

#endif /* WL_SWEEP_MPI_H */
