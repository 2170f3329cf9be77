/* mpi_fortran_ref: the C twin of the timing section of the Fortran MPI tests
 * (mpi_fortran_h.f90, mpi_fortran_mod.f90, mpi_fortran_f08.f90): the same
 * calls in the same order, so the simulated times rank 0 prints must equal
 * theirs to the picosecond (mpi_cases.sh compares them):
 *   - an 8 B ping-pong between ranks 0 and 1 (10 warm-up round trips, 100
 *     timed; half a round trip)
 *   - an 8 B MPI_Allreduce (MPI_SUM), 10 warm-up, 100 timed
 *   - a 1 KiB ring exchange with MPI_Irecv, MPI_Isend and MPI_Waitall, 10
 *     warm-up, 100 timed
 * Then, as a C program handing MPI objects to Fortran code would, it checks
 * the Fortran handles of the layer's own objects: MPI_Request_c2f/_f2c and
 * MPI_Group_c2f/_f2c round trips, MPI_REQUEST_NULL and MPI_GROUP_NULL,
 * prints "handles: ok" (rank 0), else exits 1.
 * Uses only MPI (mpicc, run by p2run). */
#include <mpi.h>
#include <stdio.h>
#include <stdlib.h>

#define CHECK(c)                                                                   \
    do {                                                                           \
        if (!(c)) {                                                                \
            fprintf(stderr, "FAIL %s (line %d)\n", #c, __LINE__);                   \
            exit(1);                                                               \
        }                                                                          \
    } while (0)

static void handles(int rank)
{
    int buf;
    MPI_Request r, s;
    MPI_Irecv(&buf, 1, MPI_INT, MPI_ANY_SOURCE, 99, MPI_COMM_WORLD, &r);
    MPI_Irecv(&buf, 1, MPI_INT, MPI_ANY_SOURCE, 98, MPI_COMM_WORLD, &s);
    MPI_Fint fr = MPI_Request_c2f(r), fs = MPI_Request_c2f(s);
    CHECK(fr != 0 && fs != 0 && fr != fs);
    CHECK(MPI_Request_f2c(fr) == r && MPI_Request_f2c(fs) == s);
    CHECK(MPI_Request_c2f(MPI_REQUEST_NULL) == 0 && MPI_Request_f2c(0) == MPI_REQUEST_NULL);
    MPI_Cancel(&r);
    MPI_Wait(&r, MPI_STATUS_IGNORE);
    MPI_Cancel(&s);
    MPI_Wait(&s, MPI_STATUS_IGNORE);
    MPI_Group world, one;
    MPI_Comm_group(MPI_COMM_WORLD, &world);
    MPI_Group_incl(world, 1, &rank, &one);
    MPI_Fint fw = MPI_Group_c2f(world), fo = MPI_Group_c2f(one);
    CHECK(fw != fo && MPI_Group_c2f(world) == fw);
    CHECK(MPI_Group_f2c(fw) == world && MPI_Group_f2c(fo) == one);
    CHECK(MPI_Group_f2c(MPI_Group_c2f(MPI_GROUP_NULL)) == MPI_GROUP_NULL);
    CHECK(MPI_Group_f2c(MPI_Group_c2f(MPI_GROUP_EMPTY)) == MPI_GROUP_EMPTY);
    int r1;
    MPI_Group_rank(MPI_Group_f2c(fo), &r1);
    CHECK(r1 == 0);
    MPI_Group_free(&one);
    MPI_Group_free(&world);
    if (rank == 0)
        printf("handles: ok\n");
}

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
    handles(rank);
    MPI_Finalize();
    return 0;
}
