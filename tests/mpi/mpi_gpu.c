/*
 * mpi_gpu.c - MPI with GPU buffers (cudaMalloc) over the virtual-time layer:
 * every byte right for the GDRCopy eager path (up to 8 B single loads, the
 * full GDRCopy copy up to 8 KiB), GPUDirect RDMA rendezvous above, odd
 * sizes on both sides of each threshold, GPU to host and host to GPU, both
 * ranks sending at once (Isend/Irecv), MPI_Ssend, and a strided derived
 * type in GPU memory (packed through host staging). Run by p2run with the
 * emulated CUDA runtime on 2 ranks.
 */
#include <cuda_runtime_api.h>
#include <mpi.h>
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

static int rank, failures;

static unsigned char pat(int who, size_t n, size_t i)
{
    return (unsigned char)(who * 29 + n * 7 + i * 13 + (i >> 9));
}

static void *dev_alloc(size_t n)
{
    void *p = NULL;
    if (cudaMalloc(&p, n ? n : 1) != cudaSuccess) {
        fprintf(stderr, "rank %d: cudaMalloc(%zu) failed\n", rank, n);
        MPI_Abort(MPI_COMM_WORLD, 2);
    }
    return p;
}

static void to_dev(void *d, const void *h, size_t n)
{
    if (n && cudaMemcpy(d, h, n, cudaMemcpyHostToDevice) != cudaSuccess)
        MPI_Abort(MPI_COMM_WORLD, 3);
}

static void from_dev(void *h, const void *d, size_t n)
{
    if (n && cudaMemcpy(h, d, n, cudaMemcpyDeviceToHost) != cudaSuccess)
        MPI_Abort(MPI_COMM_WORLD, 3);
}

static void fill(unsigned char *b, size_t n, int who)
{
    for (size_t i = 0; i < n; i++)
        b[i] = pat(who, n, i);
}

static void check(const char *what, const unsigned char *b, size_t n, int who)
{
    size_t bad = 0, first = n;
    for (size_t i = 0; i < n; i++)
        if (b[i] != pat(who, n, i)) {
            if (!bad)
                first = i;
            bad++;
        }
    if (bad) {
        printf("rank %d: %s %zu bytes: %zu wrong, first at %zu\n", rank, what, n, bad, first);
        failures++;
    }
}

/* Rank 0 sends n bytes from `sdev` (GPU) or host memory, rank 1 receives
 * into GPU or host memory; then the other way round with Isend/Irecv at once. */
static void pingpong(size_t n, int src_gpu, int dst_gpu, int sync)
{
    unsigned char *h = malloc(n ? n : 1), *hr = malloc(n ? n : 1);
    unsigned char *sbuf = src_gpu ? dev_alloc(n) : malloc(n ? n : 1);
    unsigned char *rbuf = dst_gpu ? dev_alloc(n) : malloc(n ? n : 1);
    char what[64];
    snprintf(what, sizeof what, "%s %s to %s", sync ? "Ssend" : "Send", src_gpu ? "GPU" : "host",
             dst_gpu ? "GPU" : "host");
    fill(h, n, rank);
    if (src_gpu)
        to_dev(sbuf, h, n);
    else
        memcpy(sbuf, h, n);
    if (rank == 0) {
        if (sync)
            MPI_Ssend(sbuf, (int)n, MPI_BYTE, 1, 5, MPI_COMM_WORLD);
        else
            MPI_Send(sbuf, (int)n, MPI_BYTE, 1, 5, MPI_COMM_WORLD);
    } else {
        MPI_Status st;
        int count = -1;
        MPI_Recv(rbuf, (int)n, MPI_BYTE, 0, 5, MPI_COMM_WORLD, &st);
        MPI_Get_count(&st, MPI_BYTE, &count);
        if ((size_t)count != n) {
            printf("rank 1: %s %zu bytes: MPI_Get_count %d\n", what, n, count);
            failures++;
        }
        if (dst_gpu)
            from_dev(hr, rbuf, n);
        else
            memcpy(hr, rbuf, n);
        check(what, hr, n, 0);
    }
    /* Both ways at once, each rank's own buffers (source and destination kinds swap roles). */
    MPI_Request q[2];
    int peer = 1 - rank;
    MPI_Irecv(rbuf, (int)n, MPI_BYTE, peer, 6, MPI_COMM_WORLD, &q[0]);
    MPI_Isend(sbuf, (int)n, MPI_BYTE, peer, 6, MPI_COMM_WORLD, &q[1]);
    MPI_Waitall(2, q, MPI_STATUSES_IGNORE);
    if (dst_gpu)
        from_dev(hr, rbuf, n);
    else
        memcpy(hr, rbuf, n);
    snprintf(what, sizeof what, "Isend/Irecv %s to %s", src_gpu ? "GPU" : "host",
             dst_gpu ? "GPU" : "host");
    check(what, hr, n, peer);
    if (src_gpu)
        cudaFree(sbuf);
    else
        free(sbuf);
    if (dst_gpu)
        cudaFree(rbuf);
    else
        free(rbuf);
    free(h);
    free(hr);
}

/* A strided type in GPU memory: every other 3-byte block of 2 * blocks. */
static void strided(int blocks)
{
    MPI_Datatype v;
    MPI_Type_vector(blocks, 3, 6, MPI_BYTE, &v);
    MPI_Type_commit(&v);
    size_t span = (size_t)blocks * 6, n = (size_t)blocks * 3;
    unsigned char *h = calloc(span, 1), *d = dev_alloc(span);
    if (rank == 0) {
        for (int b = 0; b < blocks; b++)
            for (int k = 0; k < 3; k++)
                h[b * 6 + k] = pat(0, n, (size_t)b * 3 + k);
        to_dev(d, h, span);
        MPI_Send(d, 1, v, 1, 7, MPI_COMM_WORLD);
    } else {
        unsigned char *flat = dev_alloc(n), *hf = malloc(n);
        MPI_Recv(flat, (int)n, MPI_BYTE, 0, 7, MPI_COMM_WORLD, MPI_STATUS_IGNORE);
        from_dev(hf, flat, n);
        check("strided GPU type to GPU", hf, n, 0);
        cudaFree(flat);
        free(hf);
    }
    cudaFree(d);
    free(h);
    MPI_Type_free(&v);
}

int main(int argc, char **argv)
{
    MPI_Init(&argc, &argv);
    int size;
    MPI_Comm_rank(MPI_COMM_WORLD, &rank);
    MPI_Comm_size(MPI_COMM_WORLD, &size);
    if (size != 2) {
        if (rank == 0)
            fprintf(stderr, "mpi_gpu: run on 2 ranks (got %d)\n", size);
        MPI_Finalize();
        return 2;
    }
    /* 0; up to 8 B (single loads); the GDRCopy copy up to 8 KiB; rendezvous
     * from 8 KiB + 1 (GPU) and 12 KiB + 1 (host); odd sizes throughout. */
    static const size_t sizes[] = {0, 1, 7, 8, 9, 16, 1001, 8191, 8192, 8193, 12288, 12289,
                                   65537, 1048579};
    for (size_t i = 0; i < sizeof sizes / sizeof sizes[0]; i++) {
        pingpong(sizes[i], 1, 1, 0);
        pingpong(sizes[i], 1, 0, 0);
        pingpong(sizes[i], 0, 1, 0);
    }
    pingpong(5, 1, 1, 1);
    pingpong(100003, 1, 1, 1);
    strided(3);
    strided(5000);
    int all = 0;
    MPI_Allreduce(&failures, &all, 1, MPI_INT, MPI_SUM, MPI_COMM_WORLD);
    if (rank == 0)
        printf("GPU-buffer MPI: %s (%d failures)\n", all ? "FAILED" : "all bytes right", all);
    MPI_Finalize();
    return all ? 1 : 0;
}
