/* mpi_deadlock: rank 0 waits in MPI_Recv for a message rank 1 never sends
 * (rank 1 waits for one with another tag): the simulator must diagnose the
 * deadlock naming each rank's MPI call, peer and tag, and end the job. */
#include <mpi.h>
#include <stdio.h>

int main(int argc, char **argv)
{
    MPI_Init(&argc, &argv);
    int rank, v = 0;
    MPI_Comm_rank(MPI_COMM_WORLD, &rank);
    if (rank == 0)
        MPI_Recv(&v, 1, MPI_INT, 1, 7, MPI_COMM_WORLD, MPI_STATUS_IGNORE);
    else if (rank == 1)
        MPI_Recv(&v, 1, MPI_INT, 0, 8, MPI_COMM_WORLD, MPI_STATUS_IGNORE);
    printf("rank %d: got %d\n", rank, v);
    MPI_Finalize();
    return 0;
}
