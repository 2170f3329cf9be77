/* mpi_rings: b_eff's ring bandwidth (HPC Challenge's latency-bandwidth
 * benchmark, as hpcc runs it) on the naturally ordered ring and on fixed
 * reorderings of it. Each rank exchanges 2,000,000 bytes with both ring
 * neighbours, once with two MPI_Sendrecv and once with two MPI_Irecv and two
 * MPI_Isend, after a broadcast and an allreduce as hpcc's loop has; a
 * ring's time is per exchange, the better of the two, the slowest rank's,
 * the best of three measurements. On one switch every ring of the same size
 * is the same ring with other names: the times must agree. Prints one line
 * per ring and the ratio of the best to the worst. */
#include <mpi.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#define BYTES 2000000
#define LOOP 2
#define MEASUREMENTS 3

static int rank, size;

/* One measurement of the ring `order` (ranks in ring order): us per
 * exchange, the better method, the slowest rank's. */
static double measure(const int *order, char *bufs[4])
{
    int me = 0;
    for (int i = 0; i < size; i++)
        if (order[i] == rank)
            me = i;
    const int right = order[(me + 1) % size], left = order[(me + size - 1) % size];
    int pattern = order[0], loop = LOOP, agreed;
    MPI_Bcast(&pattern, 1, MPI_INT, 0, MPI_COMM_WORLD);
    MPI_Allreduce(&loop, &agreed, 1, MPI_INT, MPI_MAX, MPI_COMM_WORLD);
    double t[2];
    for (int method = 0; method < 2; method++) {
        double start = 0;
        for (int it = -1; it < agreed; it++) {
            if (it == 0)
                start = MPI_Wtime();
            if (method == 0) {
                MPI_Sendrecv(bufs[0], BYTES, MPI_BYTE, right, 200, bufs[2], BYTES, MPI_BYTE, left,
                             200, MPI_COMM_WORLD, MPI_STATUS_IGNORE);
                MPI_Sendrecv(bufs[1], BYTES, MPI_BYTE, left, 201, bufs[3], BYTES, MPI_BYTE, right,
                             201, MPI_COMM_WORLD, MPI_STATUS_IGNORE);
            } else {
                MPI_Request q[4];
                MPI_Irecv(bufs[2], BYTES, MPI_BYTE, left, 200, MPI_COMM_WORLD, &q[0]);
                MPI_Irecv(bufs[3], BYTES, MPI_BYTE, right, 201, MPI_COMM_WORLD, &q[1]);
                MPI_Isend(bufs[0], BYTES, MPI_BYTE, right, 200, MPI_COMM_WORLD, &q[2]);
                MPI_Isend(bufs[1], BYTES, MPI_BYTE, left, 201, MPI_COMM_WORLD, &q[3]);
                MPI_Waitall(4, q, MPI_STATUSES_IGNORE);
            }
        }
        t[method] = (MPI_Wtime() - start) / (2 * agreed);
        if (method == 0) {
            int ok = 1, all;
            MPI_Allreduce(&ok, &all, 1, MPI_INT, MPI_MAX, MPI_COMM_WORLD);
        }
    }
    double mine = t[0] < t[1] ? t[0] : t[1], slowest;
    MPI_Allreduce(&mine, &slowest, 1, MPI_DOUBLE, MPI_MAX, MPI_COMM_WORLD);
    /* Every byte that arrived: the neighbours' fill patterns. */
    long wrong = 0;
    for (int i = 0; i < BYTES; i += 4096)
        wrong += bufs[2][i] != (char)(left + 1) || bufs[3][i] != (char)(right + 101);
    if (wrong) {
        fprintf(stderr, "mpi_rings: rank %d: %ld wrong bytes\n", rank, wrong);
        MPI_Abort(MPI_COMM_WORLD, 1);
    }
    return slowest * 1e6;
}

int main(int argc, char **argv)
{
    MPI_Init(&argc, &argv);
    MPI_Comm_rank(MPI_COMM_WORLD, &rank);
    MPI_Comm_size(MPI_COMM_WORLD, &size);
    if (size < 3 || argc < 2) {
        if (rank == 0)
            fprintf(stderr, "usage: mpi_rings ORDER... (at least 3 ranks; an order names every "
                            "rank once, e.g. 0123 0213)\n");
        MPI_Finalize();
        return 2;
    }
    char *bufs[4];
    for (int b = 0; b < 4; b++) {
        bufs[b] = malloc(BYTES);
        memset(bufs[b], b == 0 ? rank + 1 : b == 1 ? rank + 101 : 0, BYTES);
    }
    double best = 0, worst = 0;
    for (int a = 1; a < argc; a++) {
        int order[64];
        if ((int)strlen(argv[a]) != size || size > 10) {
            if (rank == 0)
                fprintf(stderr, "mpi_rings: order '%s' does not name %d ranks\n", argv[a], size);
            MPI_Abort(MPI_COMM_WORLD, 2);
        }
        for (int i = 0; i < size; i++)
            order[i] = argv[a][i] - '0';
        double us = 1e30;
        for (int m = 0; m < MEASUREMENTS; m++) {
            double t = measure(order, bufs);
            us = t < us ? t : us;
        }
        if (rank == 0)
            printf("ring %s: %.3f us per exchange, %.1f MB/s\n", argv[a], us, BYTES / us);
        best = a == 1 || us < best ? us : best;
        worst = a == 1 || us > worst ? us : worst;
    }
    if (rank == 0)
        printf("rings: the slowest %.2f%% above the fastest\n", (worst / best - 1) * 100);
    for (int b = 0; b < 4; b++)
        free(bufs[b]);
    MPI_Finalize();
    return 0;
}
