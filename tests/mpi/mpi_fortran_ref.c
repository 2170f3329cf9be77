/* mpi_fortran_ref: the C twin of the timing section of the Fortran MPI tests
 * (mpi_fortran_h.f90, mpi_fortran_mod.f90, mpi_fortran_f08.f90): the same
 * calls in the same order, so the simulated times rank 0 prints must equal
 * theirs to the picosecond (mpi_cases.sh compares them):
 *   - an 8 B ping-pong between ranks 0 and 1 (10 warm-up round trips, 100
 *     timed; half a round trip)
 *   - an 8 B MPI_Allreduce (MPI_SUM), 10 warm-up, 100 timed
 *   - a 1 KiB ring exchange with MPI_Irecv, MPI_Isend and MPI_Waitall, 10
 *     warm-up, 100 timed
 * Uses only MPI (mpicc, run by p2run). */
#include <mpi.h>
#include <stdio.h>

int main(int argc, char **argv)
{
    int rank, size;
    double x[128], y[128], t0, t;
    MPI_Init(&argc, &argv);
    MPI_Comm_rank(MPI_COMM_WORLD, &rank);
    MPI_Comm_size(MPI_COMM_WORLD, &size);
    for (int i = 0; i < 128; i++)
        x[i] = rank + i;

    MPI_Barrier(MPI_COMM_WORLD);
    t0 = 0;
    for (int i = 0; i < 110; i++) {
        if (i == 10)
            t0 = MPI_Wtime();
        if (rank == 0) {
            MPI_Send(x, 1, MPI_DOUBLE, 1, 1, MPI_COMM_WORLD);
            MPI_Recv(y, 1, MPI_DOUBLE, 1, 1, MPI_COMM_WORLD, MPI_STATUS_IGNORE);
        } else if (rank == 1) {
            MPI_Recv(y, 1, MPI_DOUBLE, 0, 1, MPI_COMM_WORLD, MPI_STATUS_IGNORE);
            MPI_Send(x, 1, MPI_DOUBLE, 0, 1, MPI_COMM_WORLD);
        }
    }
    t = (MPI_Wtime() - t0) / 200.0 * 1.0e6;
    if (rank == 0)
        printf("pingpong 8 B: %.6f us\n", t);

    MPI_Barrier(MPI_COMM_WORLD);
    for (int i = 0; i < 110; i++) {
        if (i == 10)
            t0 = MPI_Wtime();
        MPI_Allreduce(x, y, 1, MPI_DOUBLE, MPI_SUM, MPI_COMM_WORLD);
    }
    t = (MPI_Wtime() - t0) / 100.0 * 1.0e6;
    if (rank == 0)
        printf("allreduce 8 B: %.6f us\n", t);

    MPI_Barrier(MPI_COMM_WORLD);
    for (int i = 0; i < 110; i++) {
        MPI_Request r[2];
        if (i == 10)
            t0 = MPI_Wtime();
        MPI_Irecv(y, 128, MPI_DOUBLE, (rank + size - 1) % size, 2, MPI_COMM_WORLD, &r[0]);
        MPI_Isend(x, 128, MPI_DOUBLE, (rank + 1) % size, 2, MPI_COMM_WORLD, &r[1]);
        MPI_Waitall(2, r, MPI_STATUSES_IGNORE);
    }
    t = (MPI_Wtime() - t0) / 100.0 * 1.0e6;
    if (rank == 0)
        printf("ring 1 KiB: %.6f us\n", t);
    MPI_Finalize();
    return 0;
}
