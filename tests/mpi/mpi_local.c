/* mpi_local: MPI_Reduce_local and MPI_Comm_split_type on the virtual-time
 * MPI layer (mpicc, run by p2run):
 *   - MPI_Reduce_local with MPI_SUM on ints, MPI_MAX on doubles and a
 *     non-commutative user op, every element checked; its simulated cost
 *     proportional to the bytes (the layer charges local reductions at
 *     host_reduce_gbps) and nothing else moved
 *   - MPI_Comm_split_type: MPI_COMM_TYPE_SHARED and OMPI_COMM_TYPE_HOST give
 *     the ranks on this rank's node (one rank per node: alone), usable for
 *     collectives; OMPI_COMM_TYPE_CLUSTER all ranks ordered by key;
 *     MPI_UNDEFINED gives MPI_COMM_NULL
 * Prints "mpi_local: all N checks passed on P ranks" (rank 0); any failure
 * exits 1. */
#include <mpi.h>
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

/* inout = 2 * in + inout: not commutative */
static void twice_plus(void *in, void *inout, int *len, MPI_Datatype *t)
{
    (void)t;
    for (int i = 0; i < *len; i++)
        ((int *)inout)[i] = 2 * ((int *)in)[i] + ((int *)inout)[i];
}

/* The simulated time of one MPI_Reduce_local of n ints (a barrier first, so
 * the clock reads around it are free). */
static double reduce_time(int *a, int *b, int n)
{
    MPI_Barrier(MPI_COMM_WORLD);
    double t0 = MPI_Wtime();
    MPI_Reduce_local(a, b, n, MPI_INT, MPI_SUM);
    return MPI_Wtime() - t0;
}

static void reduce_local(void)
{
    enum { N = 250000 };
    int *a = malloc(sizeof(int) * 2 * N), *b = malloc(sizeof(int) * 2 * N);
    double *x = malloc(sizeof(double) * N), *y = malloc(sizeof(double) * N);
    for (int i = 0; i < 2 * N; i++) {
        a[i] = i - rank;
        b[i] = 3 * i;
    }
    MPI_Reduce_local(a, b, 2 * N, MPI_INT, MPI_SUM);
    int bad = 0;
    for (int i = 0; i < 2 * N; i++)
        bad += b[i] != 4 * i - rank;
    CHECK(bad == 0);
    for (int i = 0; i < N; i++) {
        x[i] = i % 2 ? i * 0.5 : -i;
        y[i] = i % 3 ? -1.0 : i * 0.25;
    }
    MPI_Reduce_local(x, y, N, MPI_DOUBLE, MPI_MAX);
    for (int i = 0; i < N; i++) {
        double xi = i % 2 ? i * 0.5 : -i, yi = i % 3 ? -1.0 : i * 0.25;
        bad += y[i] != (xi > yi ? xi : yi);
    }
    CHECK(bad == 0);
    MPI_Op op;
    MPI_Op_create(twice_plus, 0, &op);
    for (int i = 0; i < 1000; i++) {
        a[i] = i;
        b[i] = 7;
    }
    MPI_Reduce_local(a, b, 1000, MPI_INT, op);
    for (int i = 0; i < 1000; i++)
        bad += b[i] != 2 * i + 7;
    CHECK(bad == 0);
    MPI_Op_free(&op);
    /* charged: proportional to the bytes, more than nothing */
    double t1 = reduce_time(a, b, N), t2 = reduce_time(a, b, 2 * N);
    CHECK(t1 > 0 && t2 > 1.999 * t1 && t2 < 2.001 * t1);
    if (rank == 0)
        printf("reduce_local: MPI_SUM int, MPI_MAX double, a non-commutative user op: ok; "
               "%d B charged %.3f us, %d B %.3f us\n",
               (int)(N * sizeof(int)), t1 * 1e6, (int)(2 * N * sizeof(int)), t2 * 1e6);
    free(a);
    free(b);
    free(x);
    free(y);
}

static void split_type(void)
{
    static const int types[] = {MPI_COMM_TYPE_SHARED, OMPI_COMM_TYPE_HOST};
    for (int k = 0; k < 2; k++) {
        MPI_Comm node;
        MPI_Comm_split_type(MPI_COMM_WORLD, types[k], rank, MPI_INFO_NULL, &node);
        CHECK(node != MPI_COMM_NULL);
        int nr = -1, np = -1, sum = 0, one = 1;
        MPI_Comm_rank(node, &nr);
        MPI_Comm_size(node, &np);
        CHECK(nr == 0 && np == 1); /* one rank per node */
        MPI_Allreduce(&one, &sum, 1, MPI_INT, MPI_SUM, node);
        CHECK(sum == 1);
        MPI_Comm_free(&node);
    }
    MPI_Comm all;
    MPI_Comm_split_type(MPI_COMM_WORLD, OMPI_COMM_TYPE_CLUSTER, size - rank, MPI_INFO_NULL, &all);
    int ar = -1, ap = -1, sum = 0;
    MPI_Comm_rank(all, &ar);
    MPI_Comm_size(all, &ap);
    CHECK(ap == size && ar == size - 1 - rank);
    MPI_Allreduce(&rank, &sum, 1, MPI_INT, MPI_SUM, all);
    CHECK(sum == size * (size - 1) / 2);
    MPI_Comm_free(&all);
    /* MPI_UNDEFINED at the odd ranks: they get MPI_COMM_NULL, the rest their node */
    MPI_Comm some;
    MPI_Comm_split_type(MPI_COMM_WORLD, rank % 2 ? MPI_UNDEFINED : MPI_COMM_TYPE_SHARED, 0,
                        MPI_INFO_NULL, &some);
    CHECK((some == MPI_COMM_NULL) == (rank % 2 == 1));
    if (some != MPI_COMM_NULL)
        MPI_Comm_free(&some);
    if (rank == 0)
        printf("split_type: MPI_COMM_TYPE_SHARED and OMPI_COMM_TYPE_HOST (each rank alone, one "
               "per node), OMPI_COMM_TYPE_CLUSTER by key, MPI_UNDEFINED: ok\n");
}

int main(int argc, char **argv)
{
    MPI_Init(&argc, &argv);
    MPI_Comm_rank(MPI_COMM_WORLD, &rank);
    MPI_Comm_size(MPI_COMM_WORLD, &size);
    reduce_local();
    split_type();
    int all;
    MPI_Reduce(&checks, &all, 1, MPI_INT, MPI_SUM, 0, MPI_COMM_WORLD);
    if (rank == 0)
        printf("mpi_local: all %d checks passed on %d ranks\n", all, size);
    MPI_Finalize();
    return 0;
}
