/* mpi_nbc_gpu: nonblocking collectives on GPU buffers (cudaMalloc on the
 * emulated CUDA runtime) through the virtual-time MPI layer, which runs the
 * blocking calls' MVAPICH2-GDR paths in them (staging, the collective
 * software costs): MPI_Iallreduce, _Ibcast and _Iallgather of doubles at 1,
 * 1000 and 100000 elements, every element checked after a copy back; each
 * started and waited at once within 1% (or 0.1 us) of the blocking call,
 * both from one simulated time at every rank (p2_compute: libp2tca).
 * Prints "mpi_nbc_gpu: all N checks passed on P ranks"; any failure exits 1. */
#include <cuda_runtime.h>
#include <mpi.h>
#include <p2.h>
#include <stdio.h>
#include <stdlib.h>

static int rank, size, checks;

#define CHECK(c)                                                                   \
    do {                                                                           \
        checks++;                                                                  \
        if (!(c)) {                                                                \
            fprintf(stderr, "rank %d: FAIL %s (line %d)\n", rank, #c, __LINE__);   \
            exit(1);                                                               \
        }                                                                          \
    } while (0)

enum { ALLREDUCE, BCAST, ALLGATHER };
static const char *const names[] = {"allreduce", "bcast", "allgather"};

/* One call on GPU buffers d (input) and e (output), blocking or not, timed
 * from the same simulated time at every rank (p2_compute to it). */
static double call(int op, int nb, double *d, double *e, int n)
{
    MPI_Request q = MPI_REQUEST_NULL;
    MPI_Barrier(MPI_COMM_WORLD);
    double now = MPI_Wtime(), latest;
    MPI_Allreduce(&now, &latest, 1, MPI_DOUBLE, MPI_MAX, MPI_COMM_WORLD);
    p2_compute(latest + 20e-6 - MPI_Wtime());
    double t0 = MPI_Wtime();
    if (op == ALLREDUCE)
        nb ? MPI_Iallreduce(d, e, n, MPI_DOUBLE, MPI_SUM, MPI_COMM_WORLD, &q)
           : MPI_Allreduce(d, e, n, MPI_DOUBLE, MPI_SUM, MPI_COMM_WORLD);
    else if (op == BCAST)
        nb ? MPI_Ibcast(e, n, MPI_DOUBLE, size - 1, MPI_COMM_WORLD, &q)
           : MPI_Bcast(e, n, MPI_DOUBLE, size - 1, MPI_COMM_WORLD);
    else
        nb ? MPI_Iallgather(d, n, MPI_DOUBLE, e, n, MPI_DOUBLE, MPI_COMM_WORLD, &q)
           : MPI_Allgather(d, n, MPI_DOUBLE, e, n, MPI_DOUBLE, MPI_COMM_WORLD);
    MPI_Wait(&q, MPI_STATUS_IGNORE);
    return MPI_Wtime() - t0;
}

int main(int argc, char **argv)
{
    MPI_Init(&argc, &argv);
    MPI_Comm_rank(MPI_COMM_WORLD, &rank);
    MPI_Comm_size(MPI_COMM_WORLD, &size);
    static const int counts[] = {1, 1000, 100000};
    for (int k = 0; k < 3; k++) {
        int n = counts[k];
        size_t bytes = sizeof(double) * (size_t)n, all = bytes * (size_t)size;
        double *h = malloc(all), *d, *e;
        CHECK(cudaMalloc((void **)&d, bytes) == cudaSuccess);
        CHECK(cudaMalloc((void **)&e, all) == cudaSuccess);
        for (int op = ALLREDUCE; op <= ALLGATHER; op++) {
            double t[2];
            for (int nb = 0; nb < 2; nb++) {
                for (int i = 0; i < n; i++)
                    h[i] = rank + i * 0.5;
                CHECK(cudaMemcpy(d, h, bytes, cudaMemcpyHostToDevice) == cudaSuccess);
                for (int i = 0; i < n; i++)
                    h[i] = rank == size - 1 ? i * 0.25 : -1;
                CHECK(cudaMemcpy(e, h, bytes, cudaMemcpyHostToDevice) == cudaSuccess);
                t[nb] = call(op, nb, d, e, n);
                CHECK(cudaMemcpy(h, e, op == ALLGATHER ? all : bytes, cudaMemcpyDeviceToHost) ==
                      cudaSuccess);
                int bad = 0;
                for (int i = 0; i < n; i++) {
                    if (op == ALLREDUCE)
                        bad += h[i] != size * (size - 1) / 2.0 + size * (i * 0.5);
                    else if (op == BCAST)
                        bad += h[i] != i * 0.25;
                    else
                        for (int j = 0; j < size; j++)
                            bad += h[(size_t)j * (size_t)n + (size_t)i] != j + i * 0.5;
                }
                CHECK(bad == 0);
            }
            CHECK(t[1] <= t[0] * 1.01 + 0.1e-6 && t[1] >= t[0] * 0.99 - 0.1e-6);
            if (rank == 0)
                printf("%s %zu B on GPU buffers: blocking %.3f us, started and waited %.3f us\n",
                       names[op], bytes, t[0] * 1e6, t[1] * 1e6);
        }
        cudaFree(d);
        cudaFree(e);
        free(h);
    }
    int total;
    MPI_Reduce(&checks, &total, 1, MPI_INT, MPI_SUM, 0, MPI_COMM_WORLD);
    if (rank == 0)
        printf("mpi_nbc_gpu: all %d checks passed on %d ranks\n", total, size);
    MPI_Finalize();
    return 0;
}
