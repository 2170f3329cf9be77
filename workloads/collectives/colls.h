/*
 * colls.h - what the collectives benchmark knows of each collective (one
 * small file each: coll_<name>.c): its byte counts, how to run it as a
 * persistent request, how to fill its inputs and count wrong outputs, and its
 * algorithm and bus bandwidth as nccl-tests computes them (getBw).
 */
#ifndef COLLS_H
#define COLLS_H

#include <stddef.h>

#include "p2coll.h"

typedef struct cb_args {
    void *send, *recv;
    size_t count;
    tcaDataType type;
    tcaOp op;
    int root, rank, size;
} cb_args;

typedef struct cb_coll {
    const char *name;
    const char *env; /* P2_COLL_<NAME> */
    /* Buffer elements per rank for `count`. */
    size_t (*send_elems)(const cb_args *a);
    size_t (*recv_elems)(const cb_args *a);
    tcaresult (*init)(const cb_args *a, p2_request_t *req);
    /* Inputs for iteration `it`; wrong output elements after it. */
    void (*fill)(const cb_args *a, int it);
    long long (*wrong)(const cb_args *a, int it);
    /* The bandwidths of a call of `count` elements of `es` bytes per rank
     * on `ranks` ranks taking `sec` seconds (GB/s; 0 for no time): algbw =
     * the bytes the collective is sized by / sec, busbw = algbw x the
     * collective's nccl-tests factor. */
    void (*bw)(size_t count, size_t es, double sec, int ranks, double *algbw, double *busbw);
    /* The same collective through MPI on the same buffers (MPI_SUCCESS or
     * MPI's error); NULL in a build without MPI. */
    int (*mpi)(const cb_args *a);
} cb_coll;

/* A collective's MPI call where the build has MPI (CB_HAVE_MPI), else NULL. */
#ifdef CB_HAVE_MPI
#include <mpi.h>
#define CB_MPI_FN(f) f
/* MPI's datatype and operator for TCA's. */
MPI_Datatype cb_mpi_type(tcaDataType type);
MPI_Op cb_mpi_op(tcaOp op);
#else
#define CB_MPI_FN(f) NULL
#endif

extern const cb_coll cb_barrier, cb_bcast, cb_scatter, cb_gather, cb_reduce, cb_allgather,
    cb_allreduce;

/* `bytes` / `sec` in GB/s; 0 when sec is not positive. */
double cb_algbw(double bytes, double sec);

/* Element i of rank q's data for iteration it: a small integer, exact in
 * every type and under every reduction of 16 ranks. */
double cb_value(int q, size_t i, int it);
void cb_store(void *buf, size_t i, tcaDataType type, double v);
double cb_load(const void *buf, size_t i, tcaDataType type);
/* v as the type holds it (integers wrap modulo 2^bits, as the reduction
 * kernels do: a product of 16 ranks' values overflows a char). */
double cb_typed(double v, tcaDataType type);
/* The reduction of cb_value over ranks 0 .. size-1 (exact, unwrapped). */
double cb_reduced(int size, size_t i, int it, tcaOp op);

#endif
