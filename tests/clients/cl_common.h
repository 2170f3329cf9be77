/*
 * cl_common.h - what the public HA-PACS/TCA benchmark programs keep in their
 * own common.h: the SAFE_CALL wrappers and tcaCreateHandleList (every rank's
 * handle of a region, gathered over MPI). The client programs in this folder
 * are written as those programs are: MPI start-up, tca-api.h, cuda_runtime.h,
 * built with mpicc and nothing from the simulator.
 */
#ifndef CL_COMMON_H
#define CL_COMMON_H

#include <cuda_runtime.h>
#include <mpi.h>
#include <stdio.h>
#include <stdlib.h>

#include "tca-api.h"

#define CUDA_SAFE_CALL(call)                                                           \
    do {                                                                               \
        cudaError_t s_ = (call);                                                       \
        if (s_ != cudaSuccess) {                                                       \
            fprintf(stderr, "CUDA error in file '%s' in line %i : %s.\n", __FILE__,    \
                    __LINE__, cudaGetErrorString(s_));                                 \
            exit(EXIT_FAILURE);                                                        \
        }                                                                              \
    } while (0)

#define TCA_SAFE_CALL(call)                                                            \
    do {                                                                               \
        tcaresult r_ = (call);                                                         \
        if (r_ != TCA_SUCCESS) {                                                       \
            fprintf(stderr, "TCA error in file '%s' in line %i : %s.\n", __FILE__,     \
                    __LINE__, tcaGetErrorString(r_));                                  \
            exit(EXIT_FAILURE);                                                        \
        }                                                                              \
    } while (0)

/* (*handle)[r] = rank r's handle of its region [ptr, ptr + byte) of GPU memory. */
static inline void tcaCreateHandleList(tcaHandle **handle, int num_proc, void *ptr,
                                       size_t byte)
{
    tcaHandle mine;
    TCA_SAFE_CALL(tcaCreateHandle(&mine, ptr, byte, tcaMemoryGPU));
    *handle = malloc(sizeof(tcaHandle) * (size_t)num_proc);
    MPI_Allgather(&mine, sizeof mine, MPI_BYTE, *handle, sizeof mine, MPI_BYTE,
                  MPI_COMM_WORLD);
}

#endif /* CL_COMMON_H */
