/* mpi_unsupported: a call the virtual-time MPI layer does not model
 * (MPI_Win_allocate_shared: windows of shared memory between the ranks of a
 * node) must end the job at its first use with a message naming it, never
 * run untimed. */
#include <mpi.h>
#include <stdio.h>

int main(int argc, char **argv)
{
    MPI_Init(&argc, &argv);
    int rank, *buf;
    MPI_Comm_rank(MPI_COMM_WORLD, &rank);
    MPI_Barrier(MPI_COMM_WORLD);
    MPI_Win win;
    MPI_Win_allocate_shared(4 * sizeof *buf, sizeof *buf, MPI_INFO_NULL, MPI_COMM_WORLD, &buf, &win);
    printf("rank %d: MPI_Win_allocate_shared returned\n", rank);
    MPI_Finalize();
    return 0;
}
