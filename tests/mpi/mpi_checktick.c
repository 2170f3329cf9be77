/* mpi_checktick: STREAM's checktick() on MPI_Wtime (mysecond() is MPI_Wtime
 * in STREAM's MPI version), run by p2run under the default --clock=model,
 * where only modelled work moves a rank's clock: the loop `while ((t2 =
 * MPI_Wtime()) - t1 < 1.0E-6);` must end, each read moving the clock by
 * mpi_wtime_ns. Then a 1 ms wait on the clock alone ends at 1 ms, and reads
 * around modelled work cost nothing (an MPI_Barrier timed between two reads
 * takes the same whether the clock was read in a loop before or not).
 * Prints the granularity it finds and "mpi_checktick: ok on P ranks". */
#include <math.h>
#include <mpi.h>
#include <stdio.h>
#include <stdlib.h>

#define M 20

static int rank;

#define CHECK(c)                                                                   \
    do {                                                                           \
        if (!(c)) {                                                                \
            fprintf(stderr, "rank %d: FAIL %s (line %d)\n", rank, #c, __LINE__);   \
            exit(1);                                                               \
        }                                                                          \
    } while (0)

/* STREAM 5.10's checktick(), with MPI_Wtime for mysecond(). */
static int checktick(void)
{
    int i, minDelta, Delta;
    double t1, t2, timesfound[M];
    for (i = 0; i < M; i++) {
        t1 = MPI_Wtime();
        while (((t2 = MPI_Wtime()) - t1) < 1.0E-6)
            ;
        timesfound[i] = t1 = t2;
    }
    minDelta = 1000000;
    for (i = 1; i < M; i++) {
        Delta = (int)(1.0E6 * (timesfound[i] - timesfound[i - 1]));
        minDelta = minDelta < Delta ? minDelta : Delta;
    }
    return minDelta;
}

static double barrier_time(void)
{
    MPI_Barrier(MPI_COMM_WORLD);
    double t0 = MPI_Wtime();
    MPI_Barrier(MPI_COMM_WORLD);
    return MPI_Wtime() - t0;
}

int main(int argc, char **argv)
{
    MPI_Init(&argc, &argv);
    int size;
    MPI_Comm_rank(MPI_COMM_WORLD, &rank);
    MPI_Comm_size(MPI_COMM_WORLD, &size);
    double before = barrier_time();
    int quantum = checktick();
    CHECK(quantum >= 0 && quantum <= 2);
    /* a wait on the clock alone */
    double t0 = MPI_Wtime(), t;
    long reads = 0;
    while ((t = MPI_Wtime()) - t0 < 1e-3)
        reads++;
    CHECK(t - t0 >= 1e-3 && t - t0 < 1e-3 + 1e-7 && reads > 1000);
    /* reads right after modelled work are free */
    double after = barrier_time();
    CHECK(fabs(after - before) < 1e-12);
    if (rank == 0)
        printf("mpi_checktick: STREAM's checktick() ends, %d us a tick; a 1 ms wait on MPI_Wtime "
               "takes %ld reads (%.1f ns each); a barrier between two reads %.3f us: ok on %d "
               "ranks\n",
               quantum, reads, (t - t0) / (double)(reads + 1) * 1e9, after * 1e6, size);
    MPI_Finalize();
    return 0;
}
