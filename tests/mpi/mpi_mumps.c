/* mpi_mumps: Debian's MUMPS (libdmumps, a Fortran library: every MPI call
 * it makes goes through the Fortran bindings, mpi_isend_, mpi_iprobe_,
 * mpi_cancel_, ...) solving a distributed sparse system on the virtual-time
 * MPI layer (mpicc, run by p2run):
 *   - the 2-D Laplacian on a G x G grid (5-point stencil, N = G * G
 *     unknowns), its rows spread over the ranks in blocks (distributed
 *     assembled input, ICNTL(18) = 3), the right-hand side A x for a known
 *     x (x_i = 1 + i mod 7) on rank 0
 *   - analysis, LU factorization and solve (JOB = 6), timed by MPI_Wtime
 * Rank 0 prints the largest error of the solution, which must be below
 * 1e-10, and the simulated time of the solve (mpi_cases.sh runs it twice:
 * the output must not change). Any MUMPS error (INFOG(1) < 0) exits 1. */
#include <dmumps_c.h>
#include <math.h>
#include <mpi.h>
#include <stdio.h>
#include <stdlib.h>

enum { G = 40, N = G * G };

int main(int argc, char **argv)
{
    int rank, size;
    MPI_Init(&argc, &argv);
    MPI_Comm_rank(MPI_COMM_WORLD, &rank);
    MPI_Comm_size(MPI_COMM_WORLD, &size);

    DMUMPS_STRUC_C id = {0};
    id.comm_fortran = (MUMPS_INT)MPI_Comm_c2f(MPI_COMM_WORLD);
    id.par = 1;   /* the host works too */
    id.sym = 0;   /* unsymmetric LU */
    id.job = -1;  /* initialise */
    dmumps_c(&id);
    id.icntl[0] = id.icntl[1] = id.icntl[2] = -1; /* no MUMPS output */
    id.icntl[3] = 0;
    id.icntl[17] = 3; /* distributed assembled matrix */

    /* this rank's rows of the 5-point Laplacian (1-based for MUMPS) */
    int lo = (int)((long)N * rank / size), hi = (int)((long)N * (rank + 1) / size);
    int cap = 5 * (hi - lo), nz = 0;
    MUMPS_INT *irn = malloc(sizeof *irn * (size_t)(cap ? cap : 1));
    MUMPS_INT *jcn = malloc(sizeof *jcn * (size_t)(cap ? cap : 1));
    double *a = malloc(sizeof *a * (size_t)(cap ? cap : 1));
    for (int r = lo; r < hi; r++) {
        int i = r / G, j = r % G;
        const int nb[5][2] = {{i, j}, {i - 1, j}, {i + 1, j}, {i, j - 1}, {i, j + 1}};
        for (int k = 0; k < 5; k++) {
            if (nb[k][0] < 0 || nb[k][0] >= G || nb[k][1] < 0 || nb[k][1] >= G)
                continue;
            irn[nz] = r + 1;
            jcn[nz] = nb[k][0] * G + nb[k][1] + 1;
            a[nz++] = k == 0 ? 4.0 + 0.01 * (r % 3) : -1.0;
        }
    }
    id.n = N;
    id.nnz_loc = nz;
    id.irn_loc = irn;
    id.jcn_loc = jcn;
    id.a_loc = a;

    /* b = A x on rank 0 (the whole matrix gathered there for it) */
    double *x = malloc(sizeof *x * N), *b = malloc(sizeof *b * N);
    for (int r = 0; r < N; r++)
        x[r] = 1.0 + r % 7;
    double *part = calloc(N, sizeof *part);
    for (int k = 0; k < nz; k++)
        part[irn[k] - 1] += a[k] * x[jcn[k] - 1];
    MPI_Reduce(part, b, N, MPI_DOUBLE, MPI_SUM, 0, MPI_COMM_WORLD);
    if (rank == 0) {
        id.rhs = b;
        id.nrhs = 1;
        id.lrhs = N;
    }

    MPI_Barrier(MPI_COMM_WORLD);
    double t0 = MPI_Wtime();
    id.job = 6; /* analyse, factorize, solve */
    dmumps_c(&id);
    double t = MPI_Wtime() - t0;
    if (id.infog[0] < 0) {
        fprintf(stderr, "rank %d: MUMPS failed: INFOG(1) = %d, INFOG(2) = %d\n", rank, id.infog[0],
                id.infog[1]);
        exit(1);
    }
    int bad = 0;
    if (rank == 0) {
        double err = 0;
        for (int r = 0; r < N; r++)
            err = fmax(err, fabs(b[r] - x[r]));
        printf("mpi_mumps: %d unknowns on %d ranks, largest error %.3e, solve %.6f ms simulated\n", N,
               size, err, t * 1e3);
        bad = !(err < 1e-10);
        if (bad)
            fprintf(stderr, "mpi_mumps: the solution is wrong (largest error %.3e)\n", err);
    }
    id.job = -2; /* end */
    dmumps_c(&id);
    MPI_Bcast(&bad, 1, MPI_INT, 0, MPI_COMM_WORLD);
    MPI_Finalize();
    free(irn);
    free(jcn);
    free(a);
    free(x);
    free(b);
    free(part);
    return bad;
}
