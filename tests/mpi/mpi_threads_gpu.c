/* mpi_threads_gpu: MPI_THREAD_MULTIPLE with GPU buffers (cudaMalloc on the
 * emulated CUDA runtime; mpicc, run by p2run --gpu emulated), ranks in
 * pairs. A helper thread sends and receives GPU buffers of 8 B (GDRCopy
 * eager), 8 KiB, 100000 B and 1 MiB + 3 (rendezvous: with the pipeline
 * parameters, chunks copied through host staging on the copy engines, whose
 * ends are timed events of the progress loop) while the main thread waits in
 * MPI_Recv for what the peer's helper sends last; every byte checked.
 * Prints each rank's simulated time and "mpi_threads_gpu: all N checks
 * passed on P ranks" (rank 0); any failure exits 1. */
#include <cuda_runtime.h>
#include <mpi.h>
#include <pthread.h>
#include <stdio.h>
#include <stdlib.h>

static int rank, size, peer, checks, wrong;
static const size_t sizes[] = {8, 8192, 100000, 1048579};
enum { ROUNDS = 8, BIG = 1 << 21 };

static unsigned char pattern(int src, int k, size_t i) { return (unsigned char)(i * 7 + k + src * 13); }

static void *helper(void *arg)
{
    (void)arg;
    unsigned char *h = malloc(BIG), *d = NULL;
    if (!h || cudaMalloc((void **)&d, BIG) != cudaSuccess) {
        fprintf(stderr, "rank %d: no memory\n", rank);
        exit(1);
    }
    for (int k = 0; k < ROUNDS; k++) {
        size_t n = sizes[k % 4];
        if ((rank + k) % 2 == 0) {
            for (size_t i = 0; i < n; i++)
                h[i] = pattern(rank, k, i);
            cudaMemcpy(d, h, n, cudaMemcpyHostToDevice);
            MPI_Send(d, (int)n, MPI_BYTE, peer, 1, MPI_COMM_WORLD);
        } else {
            cudaMemset(d, 0, n);
            MPI_Status st;
            MPI_Recv(d, (int)n, MPI_BYTE, peer, 1, MPI_COMM_WORLD, &st);
            int cnt = -1;
            MPI_Get_count(&st, MPI_BYTE, &cnt);
            checks++;
            if (cnt != (int)n)
                wrong++;
            cudaMemcpy(h, d, n, cudaMemcpyDeviceToHost);
            for (size_t i = 0; i < n; i++)
                wrong += h[i] != pattern(peer, k, i);
        }
    }
    h[0] = 42;
    MPI_Send(h, 1, MPI_BYTE, peer, 2, MPI_COMM_WORLD);
    cudaFree(d);
    free(h);
    return NULL;
}

int main(int argc, char **argv)
{
    int provided = -1;
    MPI_Init_thread(&argc, &argv, MPI_THREAD_MULTIPLE, &provided);
    MPI_Comm_rank(MPI_COMM_WORLD, &rank);
    MPI_Comm_size(MPI_COMM_WORLD, &size);
    if (size % 2 || provided != MPI_THREAD_MULTIPLE) {
        fprintf(stderr, "mpi_threads_gpu: needs an even number of ranks and MPI_THREAD_MULTIPLE\n");
        return 1;
    }
    peer = rank ^ 1;
    pthread_t t;
    if (pthread_create(&t, NULL, helper, NULL) != 0)
        return 1;
    unsigned char b = 0;
    MPI_Recv(&b, 1, MPI_BYTE, peer, 2, MPI_COMM_WORLD, MPI_STATUS_IGNORE);
    checks++;
    wrong += b != 42;
    pthread_join(t, NULL);
    if (wrong) {
        fprintf(stderr, "rank %d: %d wrong bytes or counts\n", rank, wrong);
        return 1;
    }
    double mine = MPI_Wtime(), *all = malloc(sizeof(double) * (size_t)size);
    MPI_Gather(&mine, 1, MPI_DOUBLE, all, 1, MPI_DOUBLE, 0, MPI_COMM_WORLD);
    int total = 0;
    MPI_Reduce(&checks, &total, 1, MPI_INT, MPI_SUM, 0, MPI_COMM_WORLD);
    if (rank == 0) {
        for (int r = 0; r < size; r++)
            printf("rank %d: %.6f us\n", r, all[r] * 1e6);
        printf("mpi_threads_gpu: all %d checks passed on %d ranks\n", total, size);
    }
    free(all);
    MPI_Finalize();
    return 0;
}
