/*
 * cg.h - what the CG workload's units share: the communication of one CG
 * iteration behind a table of operations per transport (TCA's persistent
 * collectives, MPI over the InfiniBand rail), the GPU kernels' costs, and the
 * solver. Depends on cg_matrix.h, p2coll.h and MPI.
 */
#ifndef CG_H
#define CG_H

#include <stddef.h>
#include <stdint.h>

#include "cg_matrix.h"

/* The three allreduces of one double per iteration. */
enum {
    CG_RED_PQ,   /* p . Ap, for alpha (sum) */
    CG_RED_RR,   /* r . r, for beta and the residual (sum) */
    CG_RED_RMAX, /* max |r_i|, the convergence check (max) */
    CG_REDUCTIONS
};

typedef struct cg_comm cg_comm;

/* A transport: what one iteration's communication runs on. */
typedef struct cg_comm_ops {
    const char *name; /* "tca", "mpi", "tca+mpi" */
    /* Sets up everything the iterations use, once (persistent requests,
     * sub-communicators) and fills c->slot and c->algorithms. 0, or -1 with
     * one line in `error`. */
    int (*init)(cg_comm *c, char *error, size_t error_size);
    void (*barrier)(cg_comm *c);
    /* Every rank's block of c->p to every rank (in place). */
    void (*allgather)(cg_comm *c);
    /* Reduction `which` (CG_RED_*) of `local` over the ranks. */
    double (*allreduce)(cg_comm *c, int which, double local);
    void (*fini)(cg_comm *c);
} cg_comm_ops;

#define CG_MAX_RANKS 64

struct cg_comm {
    const cg_comm_ops *ops;
    double *p;         /* the search direction: ranks * block doubles of GPU memory */
    int64_t block;     /* doubles per rank (rows per rank, padded) */
    int rank, ranks;
    int slot[CG_MAX_RANKS]; /* rank q's block lies at p + slot[q] * block */
    char algorithms[128];   /* what the iterations run, for the report */
    void *state;            /* the transport's */
};

extern const cg_comm_ops cg_comm_tca, cg_comm_mpi, cg_comm_hier;

/* The number of PEACH2 sub-clusters the job's ranks are on (p2_subcluster);
 * above 1, TCA runs as cg_comm_hier. */
int cg_subclusters(void);

/* The K20X kernels of one iteration on this rank's rows (bytes moved and
 * flops, for wl_gpu_kernel; derivation in cg_solve.c). */
typedef struct cg_kernel {
    double bytes, flops;
} cg_kernel;

typedef struct cg_kernels {
    cg_kernel spmv, dot, norm_max, axpy;
} cg_kernels;

void cg_kernels_for(const cg_csr *m, int64_t distinct_columns, cg_kernels *k);

typedef struct cg_result {
    int iterations;
    double iter_s;       /* per iteration, the slowest rank's */
    double compute_s;    /* per iteration, the ranks' mean */
    double allgather_s;
    double allreduce_s;
    double res_true;     /* ||b - A x|| / ||b||, recomputed after the last iteration */
    double res_rec;      /* ||r|| / ||b|| of the recurrence */
    double gap;          /* ||(b - A x) - r|| / ||b|| */
    double energy;       /* x.Ax / 2 - b.x: CG's functional, below 0 after any iteration */
    int converged_at;    /* first iteration with max|r| <= tol max|b|, 0 if none */
} cg_result;

/* Largest gap between the true and the recurrence residual, relative to
 * ||b||, that the check accepts. */
#define CG_GAP_TOLERANCE 1e-6

/* Runs `warmup` untimed then `iterations` timed CG iterations from x = 0
 * with b = 1 on the transport `c` (already initialised), then checks the
 * result: the true residual b - Ax recomputed must agree with the
 * recurrence's r within CG_GAP_TOLERANCE, and CG's functional x.Ax/2 - b.x
 * must have fallen below its value 0 at x = 0 (divergence, wrong data).
 * Every rank returns 0, or -1 with one line in `error` (breakdown, either
 * check). */
int cg_solve(const cg_csr *m, const cg_kernels *k, cg_comm *c, int warmup, int iterations,
             double tol, cg_result *out, char *error, size_t error_size);

#endif /* CG_H */
