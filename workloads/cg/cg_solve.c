/*
 * cg_solve.c - the CG iterations (cg.h): numerics on the host, each GPU
 * kernel they stand for charged to the rank's clock by the K20X model
 * (wl_gpu.h), communication through the transport's table. Depends on
 * cg.h, wl_gpu.h, p2.h (p2_wtime) and MPI (the untimed set-up and check).
 *
 * One iteration (no preconditioner; x0 = 0, b = 1, r0 = p0 = b):
 *     allgather p                          the search direction to every rank
 *     q = A p           SpMV               this rank's rows
 *     pq = allreduce(p . q)                reduction 1 (sum)
 *     alpha = rr / pq
 *     x += alpha p;  r -= alpha q          two axpys
 *     rr' = allreduce(r . r)               reduction 2 (sum)
 *     rmax = allreduce(max |r_i|)          reduction 3 (max): the convergence check
 *     beta = rr' / rr;  p = r + beta p     one xpay
 * A CG that only iterates needs the first two; the third is the residual
 * check a solver makes each iteration (that the published code made one per
 * iteration is what "three allreduces" says; it stops nothing here, the
 * count being fixed). It is the max norm, which r . r does not give.
 *
 * Kernel costs (bytes of device memory read plus written; cg_kernels_for):
 *   SpMV (CSR, one row per thread group): per nonzero the value (8 B) and
 *     the column index (4 B); the row pointers (4 B, n+1 of them, 32-bit
 *     as cuSPARSE's); each distinct column of x once (8 B: the texture/L2
 *     cache holds the gathered vector, at most 576 KB for nd24k, within
 *     the K20X's 1.5 MB L2); y written (8 B per row); 2 flops per nonzero.
 *   dot (p . q, r . r): two operand streams (16 B per row) and the 8-B
 *     result to pinned host memory; 2 flops per row.
 *   max |r_i| (cublasIdamax-like): one stream (8 B per row); 1 flop per row.
 *   axpy / xpay: two reads and one write (24 B per row); 2 flops per row.
 * Seven kernels per iteration, each gpu_kernel_ns plus its roofline time.
 */
#include <math.h>
#include <mpi.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "cg.h"
#include "p2.h"
#include "wl_gpu.h"

void cg_kernels_for(const cg_csr *m, int64_t distinct_columns, cg_kernels *k)
{
    double n = (double)m->rows, z = m->rows ? (double)m->rowptr[m->rows] : 0.0;
    k->spmv = (cg_kernel){12.0 * z + 4.0 * (n + 1) + 8.0 * (double)distinct_columns + 8.0 * n,
                          2.0 * z};
    k->dot = (cg_kernel){16.0 * n + 8.0, 2.0 * n};
    k->norm_max = (cg_kernel){8.0 * n + 8.0, n};
    k->axpy = (cg_kernel){24.0 * n, 2.0 * n};
}

static void charge(const cg_kernel *k) { wl_gpu_kernel(k->bytes, k->flops); }

static double dot(const double *a, const double *b, int64_t n)
{
    double s = 0.0;
    for (int64_t i = 0; i < n; i++)
        s += a[i] * b[i];
    return s;
}

/* The sums of the checks over every rank, after the last iteration:
 * ||b - A x||^2, ||(b - A x) - r||^2, ||r||^2, x . Ax and b . x. x is
 * gathered through MPI (host memory) into the transport's layout of p. */
enum { CHECK_TRUE, CHECK_GAP, CHECK_REC, CHECK_XAX, CHECK_BX, CHECKS };
static int final_check(const cg_csr *m, const cg_comm *c, const double *x, const double *r,
                       double out[CHECKS])
{
    const int64_t block = c->block;
    double *gathered = malloc(sizeof(double) * (size_t)(block * c->ranks));
    double *xfull = calloc((size_t)(block * c->ranks), sizeof(double));
    double *ax = malloc(sizeof(double) * (size_t)(m->rows ? m->rows : 1));
    double *own = calloc((size_t)(block ? block : 1), sizeof(double));
    if (!gathered || !xfull || !ax || !own) {
        free(gathered), free(xfull), free(ax), free(own);
        return -1;
    }
    memcpy(own, x, sizeof(double) * (size_t)m->rows);
    MPI_Allgather(own, (int)block, MPI_DOUBLE, gathered, (int)block, MPI_DOUBLE, MPI_COMM_WORLD);
    for (int q = 0; q < c->ranks; q++)
        memcpy(xfull + c->slot[q] * block, gathered + q * block, sizeof(double) * (size_t)block);
    cg_spmv(m, xfull, ax);
    double local[CHECKS] = {0};
    for (int64_t i = 0; i < m->rows; i++) {
        double t = 1.0 - ax[i];
        local[CHECK_TRUE] += t * t;
        local[CHECK_GAP] += (t - r[i]) * (t - r[i]);
        local[CHECK_REC] += r[i] * r[i];
        local[CHECK_XAX] += x[i] * ax[i];
        local[CHECK_BX] += x[i];
    }
    MPI_Allreduce(local, out, CHECKS, MPI_DOUBLE, MPI_SUM, MPI_COMM_WORLD);
    free(gathered), free(xfull), free(ax), free(own);
    return 0;
}

int cg_solve(const cg_csr *m, const cg_kernels *k, cg_comm *c, int warmup, int iterations,
             double tol, cg_result *out, char *error, size_t error_size)
{
    const int64_t n = m->rows;
    double *p = c->p + c->slot[c->rank] * c->block; /* this rank's block of p */
    double *x = calloc((size_t)(n ? n : 1), sizeof(double));
    double *r = malloc(sizeof(double) * (size_t)(n ? n : 1));
    double *q = malloc(sizeof(double) * (size_t)(n ? n : 1));
    if (!x || !r || !q) {
        free(x), free(r), free(q);
        snprintf(error, error_size, "out of memory for %lld rows", (long long)n);
        return -1;
    }
    memset(c->p, 0, sizeof(double) * (size_t)(c->block * c->ranks));
    for (int64_t i = 0; i < n; i++)
        r[i] = p[i] = 1.0;
    /* ||b||^2 and max |b| (untimed set-up). */
    double b2 = 0.0, bmax = 0.0, lb2 = (double)n, lbmax = n ? 1.0 : 0.0;
    MPI_Allreduce(&lb2, &b2, 1, MPI_DOUBLE, MPI_SUM, MPI_COMM_WORLD);
    MPI_Allreduce(&lbmax, &bmax, 1, MPI_DOUBLE, MPI_MAX, MPI_COMM_WORLD);
    double rr = b2, t_comp = 0, t_gather = 0, t_reduce = 0, t0 = 0, t;
    int status = 0, converged = 0;
    c->ops->barrier(c);
    t0 = p2_wtime();
    for (int it = 0; it < warmup + iterations; it++) {
        if (it == warmup) {
            c->ops->barrier(c);
            t0 = p2_wtime();
            t_comp = t_gather = t_reduce = 0;
        }
        t = p2_wtime();
        c->ops->allgather(c);
        t_gather += p2_wtime() - t;

        t = p2_wtime();
        cg_spmv(m, c->p, q);
        charge(&k->spmv);
        double lpq = dot(p, q, n);
        charge(&k->dot);
        t_comp += p2_wtime() - t;
        t = p2_wtime();
        double pq = c->ops->allreduce(c, CG_RED_PQ, lpq);
        t_reduce += p2_wtime() - t;
        if (!(pq > 0.0) && rr != 0.0) {
            snprintf(error, error_size, "p.Ap = %g at iteration %d: the matrix is not positive "
                     "definite", pq, it + 1);
            status = -1;
            break;
        }
        double alpha = rr != 0.0 ? rr / pq : 0.0;

        t = p2_wtime();
        for (int64_t i = 0; i < n; i++)
            x[i] += alpha * p[i];
        charge(&k->axpy);
        for (int64_t i = 0; i < n; i++)
            r[i] -= alpha * q[i];
        charge(&k->axpy);
        double lrr = dot(r, r, n);
        charge(&k->dot);
        t_comp += p2_wtime() - t;
        t = p2_wtime();
        double rr_new = c->ops->allreduce(c, CG_RED_RR, lrr);
        t_reduce += p2_wtime() - t;

        t = p2_wtime();
        double lmax = 0.0;
        for (int64_t i = 0; i < n; i++)
            lmax = fabs(r[i]) > lmax ? fabs(r[i]) : lmax;
        charge(&k->norm_max);
        t_comp += p2_wtime() - t;
        t = p2_wtime();
        double rmax = c->ops->allreduce(c, CG_RED_RMAX, lmax);
        t_reduce += p2_wtime() - t;
        if (!isfinite(rr_new) || !isfinite(rmax)) {
            snprintf(error, error_size, "diverged at iteration %d (r.r = %g)", it + 1, rr_new);
            status = -1;
            break;
        }
        if (!converged && rmax <= tol * bmax)
            converged = it + 1;

        t = p2_wtime();
        double beta = rr != 0.0 ? rr_new / rr : 0.0;
        for (int64_t i = 0; i < n; i++)
            p[i] = r[i] + beta * p[i];
        charge(&k->axpy);
        t_comp += p2_wtime() - t;
        rr = rr_new;
    }
    double total = p2_wtime() - t0;
    if (status == 0) {
        /* Per iteration: the slowest rank's total; the ranks' mean of each part. */
        double mine[4] = {total, t_comp, t_gather, t_reduce}, sums[3], longest;
        MPI_Allreduce(&mine[0], &longest, 1, MPI_DOUBLE, MPI_MAX, MPI_COMM_WORLD);
        MPI_Allreduce(&mine[1], sums, 3, MPI_DOUBLE, MPI_SUM, MPI_COMM_WORLD);
        double per = iterations > 0 ? 1.0 / iterations : 0.0;
        out->iterations = iterations;
        out->iter_s = longest * per;
        out->compute_s = sums[0] * per / c->ranks;
        out->allgather_s = sums[1] * per / c->ranks;
        out->allreduce_s = sums[2] * per / c->ranks;
        out->converged_at = converged;
        double sq[CHECKS];
        if (final_check(m, c, x, r, sq) != 0) {
            snprintf(error, error_size, "out of memory for the residual check");
            status = -1;
        } else {
            out->res_true = sqrt(sq[CHECK_TRUE] / b2);
            out->gap = sqrt(sq[CHECK_GAP] / b2);
            out->res_rec = sqrt(sq[CHECK_REC] / b2);
            /* CG minimises phi(x) = x.Ax / 2 - b.x over growing Krylov spaces
             * (its A-norm error falls every iteration; the residual's 2-norm
             * need not): from phi(0) = 0 it must have gone below 0. */
            out->energy = 0.5 * sq[CHECK_XAX] - sq[CHECK_BX];
            if (!isfinite(out->res_true) || !(out->energy < 0.0)) {
                snprintf(error, error_size, "diverged: after %d iterations x.Ax/2 - b.x = %g "
                         "(0 at x = 0; CG lowers it every iteration), ||b - Ax|| / ||b|| = %g",
                         warmup + iterations, out->energy, out->res_true);
                status = -1;
            } else if (!(out->gap <= CG_GAP_TOLERANCE)) {
                snprintf(error, error_size, "the true residual disagrees with the recurrence: "
                         "||(b - Ax) - r|| / ||b|| = %g (> %g)", out->gap, CG_GAP_TOLERANCE);
                status = -1;
            }
        }
    }
    free(x), free(r), free(q);
    return status;
}
