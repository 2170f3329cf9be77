/* mpi_unsupported: a call the virtual-time MPI layer does not model must end
 * the job at its first use with a message naming it, never run untimed.
 * argv[1] picks it: "file" (MPI-IO's MPI_File_open, the default) or "pcoll"
 * (Open MPI's persistent collective MPIX_Allreduce_init, from mpi-ext.h). */
#include <mpi.h>
#include <mpi-ext.h>
#include <stdio.h>
#include <string.h>

int main(int argc, char **argv)
{
    MPI_Init(&argc, &argv);
    int rank, buf[4] = {0};
    MPI_Comm_rank(MPI_COMM_WORLD, &rank);
    MPI_Barrier(MPI_COMM_WORLD);
    if (argc > 1 && strcmp(argv[1], "pcoll") == 0) {
        MPI_Request req;
        MPIX_Allreduce_init(MPI_IN_PLACE, buf, 4, MPI_INT, MPI_SUM, MPI_COMM_WORLD, MPI_INFO_NULL,
                            &req);
        printf("rank %d: MPIX_Allreduce_init returned\n", rank);
    } else {
        MPI_File fh;
        MPI_File_open(MPI_COMM_WORLD, "p2mpi.dat", MPI_MODE_RDONLY, MPI_INFO_NULL, &fh);
        printf("rank %d: MPI_File_open returned\n", rank);
    }
    MPI_Finalize();
    return 0;
}
