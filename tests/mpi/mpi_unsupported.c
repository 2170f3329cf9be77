/* mpi_unsupported: a call the virtual-time MPI layer does not model
 * (one-sided MPI_Win_create) must end the job at its first use with a
 * message naming it, never run untimed. */
#include <mpi.h>
#include <stdio.h>

int main(int argc, char **argv)
{
    MPI_Init(&argc, &argv);
    int rank, buf[4];
    MPI_Comm_rank(MPI_COMM_WORLD, &rank);
    MPI_Barrier(MPI_COMM_WORLD);
    MPI_Win win;
    MPI_Win_create(buf, sizeof buf, sizeof buf[0], MPI_INFO_NULL, MPI_COMM_WORLD, &win);
    printf("rank %d: MPI_Win_create returned\n", rank);
    MPI_Finalize();
    return 0;
}
