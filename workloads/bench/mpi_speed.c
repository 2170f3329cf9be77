/*
 * mpi_speed - the MPI job of p2bench's case (g): a loop of small allreduces
 * and a few large allgathers, every result checked. A plain MPI program with
 * nothing of this project in it, so that the same source runs under p2run
 * and under another simulator (SimGrid's SMPI: smpi_compare.sh) and the two
 * wall times compare the same job.
 *
 *   mpi_speed [-a ALLREDUCES] [-g ALLGATHERS] [-s BYTES]
 *
 *   -a N   8-byte MPI_Allreduce calls (two MPI_INT, MPI_SUM; default 1000)
 *   -g N   MPI_Allgather calls of BYTES per rank (default 20)
 *   -s B   bytes each rank contributes to an allgather (K, M suffixes;
 *          default 1M)
 *
 * Prints one line: the mean time per call of each (MPI_Wtime, which under
 * p2run is simulated time), the elements, and the bytes of the allgathers'
 * checked samples (one in 256 and the last of each block), that came back
 * wrong (summed over the ranks), and the whole job's time. Exits 1 if any were
 * wrong, 2 on a bad argument.
 */
#include <mpi.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

static int parse_count(const char *flag, const char *text, long *out, int with_suffix)
{
    char *end;
    long v = strtol(text, &end, 10);
    if (with_suffix && (*end == 'K' || *end == 'k'))
        v *= 1024, end++;
    else if (with_suffix && (*end == 'M' || *end == 'm'))
        v *= 1024 * 1024, end++;
    if (end == text || *end || v < 0 || v > (1L << 30)) {
        fprintf(stderr, "mpi_speed: %s: not a count from 0 to 2^30: '%s'\n", flag, text);
        return -1;
    }
    *out = v;
    return 0;
}

#define CHECK_STRIDE 256

static unsigned char pattern(int rank, int call, long i)
{
    return (unsigned char)(rank * 7 + call * 13 + i / CHECK_STRIDE * 5 + i % CHECK_STRIDE);
}

int main(int argc, char **argv)
{
    long allreduces = 1000, allgathers = 20, bytes = 1 << 20;
    for (int i = 1; i < argc; i++) {
        long *target = !strcmp(argv[i], "-a") ? &allreduces
                       : !strcmp(argv[i], "-g") ? &allgathers
                       : !strcmp(argv[i], "-s") ? &bytes
                                                : NULL;
        if (!target || i + 1 == argc) {
            fprintf(stderr, "mpi_speed: %s: %s\nusage: mpi_speed [-a ALLREDUCES] [-g ALLGATHERS] [-s BYTES]\n",
                    argv[i], target ? "needs a value" : "unknown argument");
            return 2;
        }
        if (parse_count(argv[i], argv[i + 1], target, target == &bytes) != 0)
            return 2;
        i++;
    }

    MPI_Init(&argc, &argv);
    int rank, size;
    MPI_Comm_rank(MPI_COMM_WORLD, &rank);
    MPI_Comm_size(MPI_COMM_WORLD, &size);
    long wrong = 0;

    double t0 = MPI_Wtime();
    for (long c = 0; c < allreduces; c++) {
        int in[2] = {rank + (int)c, 1}, out[2];
        MPI_Allreduce(in, out, 2, MPI_INT, MPI_SUM, MPI_COMM_WORLD);
        wrong += (out[0] != size * (size - 1) / 2 + size * (int)c) + (out[1] != size);
    }

    double t1 = MPI_Wtime();
    unsigned char *mine = malloc(bytes ? (size_t)bytes : 1);
    unsigned char *all = malloc(bytes ? (size_t)bytes * (size_t)size : 1);
    if (!mine || !all) {
        fprintf(stderr, "mpi_speed: rank %d: no memory for %ld-byte allgather buffers\n", rank, bytes);
        MPI_Abort(MPI_COMM_WORLD, 1);
    }
    for (long c = 0; c < allgathers; c++) {
        /* Every byte carries its sender and call; a byte in every CHECK_STRIDE
         * and the last one carry their offset too, and those are checked:
         * a block from the wrong rank, call or place shows, and the check
         * costs the job little (under SMPI, whose ranks share one process,
         * it would be the job's own time). */
        memset(mine, pattern(rank, (int)c, 0), (size_t)bytes);
        for (long i = 0; i < bytes; i += CHECK_STRIDE)
            mine[i] = pattern(rank, (int)c, i);
        if (bytes)
            mine[bytes - 1] = pattern(rank, (int)c, bytes - 1);
        MPI_Allgather(mine, (int)bytes, MPI_BYTE, all, (int)bytes, MPI_BYTE, MPI_COMM_WORLD);
        for (int r = 0; r < size && bytes; r++) {
            const unsigned char *got = all + (size_t)r * (size_t)bytes;
            for (long i = 0; i < bytes; i += CHECK_STRIDE)
                wrong += got[i] != pattern(r, (int)c, i);
            wrong += got[bytes - 1] != pattern(r, (int)c, bytes - 1);
        }
    }
    double t2 = MPI_Wtime();

    long wrong_total = 0;
    MPI_Reduce(&wrong, &wrong_total, 1, MPI_LONG, MPI_SUM, 0, MPI_COMM_WORLD);
    if (rank == 0)
        printf("ranks %d  allreduce_8B_us %.3f  allgather_%ldB_us %.3f  wrong %ld  job_ms %.3f\n", size,
               allreduces ? (t1 - t0) * 1e6 / (double)allreduces : 0.0, bytes,
               allgathers ? (t2 - t1) * 1e6 / (double)allgathers : 0.0, wrong_total, (t2 - t0) * 1e3);
    free(mine);
    free(all);
    MPI_Finalize();
    return wrong_total != 0 && rank == 0;
}
