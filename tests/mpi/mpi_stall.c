/* mpi_stall: a rank that holds simulated time. After a barrier rank 1 waits
 * in MPI_Recv for rank 0, and rank 0
 *   mpi_stall spin       spins forever on memory without calling MPI (a flag
 *                        nobody sets): under --clock model its clock never
 *                        moves, nothing can reach rank 1, and the job must
 *                        end by --stall with the diagnosis, in bounded time;
 *   mpi_stall compute S  computes for S seconds of host time (a real, if
 *                        pointless, computation), then sends: shorter than
 *                        --stall, the job must finish. */
#define _GNU_SOURCE
#include <mpi.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/syscall.h>
#include <time.h>
#include <unistd.h>

static volatile int never_set;

/* Host time from the kernel: the C library's clocks are the rank's virtual
 * ones under p2run. */
static double host_s(void)
{
    struct timespec ts;
    syscall(SYS_clock_gettime, CLOCK_MONOTONIC, &ts);
    return (double)ts.tv_sec + (double)ts.tv_nsec * 1e-9;
}

int main(int argc, char **argv)
{
    MPI_Init(&argc, &argv);
    int rank, msg = 42;
    MPI_Comm_rank(MPI_COMM_WORLD, &rank);
    const int compute = argc > 2 && strcmp(argv[1], "compute") == 0;
    MPI_Barrier(MPI_COMM_WORLD);
    if (rank == 0) {
        if (compute) {
            double until = host_s() + atof(argv[2]);
            volatile double x = 0;
            while (host_s() < until)
                for (int i = 0; i < 100000; i++)
                    x += i;
        } else {
            while (!never_set) {
                /* spin on memory without calling the library */
            }
        }
        MPI_Send(&msg, 1, MPI_INT, 1, 7, MPI_COMM_WORLD);
    } else if (rank == 1) {
        MPI_Recv(&msg, 1, MPI_INT, 0, 7, MPI_COMM_WORLD, MPI_STATUS_IGNORE);
        printf("mpi_stall: rank 1 received %d at %.3f us\n", msg, MPI_Wtime() * 1e6);
    }
    MPI_Finalize();
    return 0;
}
