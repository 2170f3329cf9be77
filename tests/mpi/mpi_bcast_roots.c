/* mpi_bcast_roots ROOT: MPI_Bcast where the last rank passes ROOT and every
 * other rank root 0. The layer must name both roots (in MPI_Bcast when a
 * rank receives the broadcast of another root; in the next collective when
 * the two trees exchange no message within the call) rather than report a
 * truncated message or return with wrong data. */
#include <mpi.h>
#include <stdio.h>
#include <stdlib.h>

int main(int argc, char **argv)
{
    MPI_Init(&argc, &argv);
    int rank, size;
    char b[64] = {0};
    MPI_Comm_rank(MPI_COMM_WORLD, &rank);
    MPI_Comm_size(MPI_COMM_WORLD, &size);
    int root = rank == size - 1 && argc > 1 ? atoi(argv[1]) : 0;
    MPI_Bcast(b, (int)sizeof b, MPI_BYTE, root, MPI_COMM_WORLD);
    printf("rank %d: MPI_Bcast from root %d returned\n", rank, root);
    MPI_Finalize();
    return 0;
}
