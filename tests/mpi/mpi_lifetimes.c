/* mpi_lifetimes MODE ARGS: correct programs whose objects end while the
 * layer still works on them (issue 37), run by p2run. Each must run right:
 * its checks pass, its simulated times are the same on every run, and it
 * prints "mpi_lifetimes: MODE ok" on rank 0.
 *   comm_free KIND  every rank starts a nonblocking collective (KIND:
 *       ibarrier, iallreduce or ibcast) on a duplicate of MPI_COMM_WORLD,
 *       frees the duplicate (MPI defers the free until the operation
 *       completes), computes, then waits for the request; the last rank
 *       starts late, so the operation is pending on the others when they
 *       free. Then MPI_COMM_WORLD goes on.
 *   detached N  (MPI_THREAD_MULTIPLE, 2 ranks) N detached threads one after
 *       another, at most two alive at once (the main thread waits on a
 *       condition variable for one to end before it creates the next),
 *       each one MPI_Sendrecv with its peer thread on the other rank
 */
#include <mpi.h>
#include <pthread.h>
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

static int rank, size;

static int is(const char *a, const char *b) { return strcmp(a, b) == 0; }

static void compute(double s)
{
    for (double t = MPI_Wtime(); MPI_Wtime() - t < s;)
        ;
}

/* ---- comm_free ---------------------------------------------------------------------- */
static int comm_free(const char *kind)
{
    MPI_Comm dup;
    MPI_Comm_dup(MPI_COMM_WORLD, &dup);
    if (rank == size - 1)
        compute(30e-6);
    int v = rank + 1, s = -1, b = rank == 0 ? 4242 : -1;
    MPI_Request q;
    if (is(kind, "ibarrier"))
        MPI_Ibarrier(dup, &q);
    else if (is(kind, "iallreduce"))
        MPI_Iallreduce(&v, &s, 1, MPI_INT, MPI_SUM, dup, &q);
    else if (is(kind, "ibcast"))
        MPI_Ibcast(&b, 1, MPI_INT, 0, dup, &q);
    else {
        fprintf(stderr, "unknown kind %s\n", kind);
        exit(3);
    }
    MPI_Comm_free(&dup);
    if (dup != MPI_COMM_NULL) {
        fprintf(stderr, "rank %d: MPI_Comm_free left the handle\n", rank);
        return 1;
    }
    compute(10e-6);
    MPI_Wait(&q, MPI_STATUS_IGNORE);
    int bad = 0;
    if (is(kind, "iallreduce") && s != size * (size + 1) / 2)
        bad = fprintf(stderr, "rank %d: iallreduce gave %d, not %d\n", rank, s,
                      size * (size + 1) / 2);
    if (is(kind, "ibcast") && b != 4242)
        bad = fprintf(stderr, "rank %d: ibcast gave %d, not 4242\n", rank, b);
    /* The world's collectives after the freed one's still match. */
    int all = 0;
    MPI_Allreduce(&v, &all, 1, MPI_INT, MPI_SUM, MPI_COMM_WORLD);
    if (all != size * (size + 1) / 2)
        bad = fprintf(stderr, "rank %d: allreduce after gave %d\n", rank, all);
    printf("comm_free %s: rank %d at %.6f us\n", kind, rank, MPI_Wtime() * 1e6);
    return bad != 0;
}

/* ---- detached ----------------------------------------------------------------------- */
static pthread_mutex_t mu = PTHREAD_MUTEX_INITIALIZER;
static pthread_cond_t cv = PTHREAD_COND_INITIALIZER;
static int alive, ended, wrong;

static void *exchange(void *arg)
{
    int i = (int)(intptr_t)arg, peer = rank ^ 1;
    int out = rank * 100000 + i, in = -1;
    MPI_Sendrecv(&out, 1, MPI_INT, peer, i, &in, 1, MPI_INT, peer, i, MPI_COMM_WORLD,
                 MPI_STATUS_IGNORE);
    pthread_mutex_lock(&mu);
    wrong += in != peer * 100000 + i;
    alive--;
    ended++;
    pthread_cond_signal(&cv);
    pthread_mutex_unlock(&mu);
    return NULL;
}

static int detached(int n)
{
    if (size != 2) {
        fprintf(stderr, "detached runs on 2 ranks\n");
        exit(3);
    }
    pthread_attr_t attr;
    pthread_attr_init(&attr);
    pthread_attr_setdetachstate(&attr, PTHREAD_CREATE_DETACHED);
    for (int i = 0; i < n; i++) {
        pthread_mutex_lock(&mu);
        while (alive >= 2)
            pthread_cond_wait(&cv, &mu);
        alive++;
        pthread_mutex_unlock(&mu);
        pthread_t t;
        if (pthread_create(&t, &attr, exchange, (void *)(intptr_t)i) != 0) {
            fprintf(stderr, "rank %d: pthread_create failed\n", rank);
            return 1;
        }
    }
    pthread_mutex_lock(&mu);
    while (ended < n)
        pthread_cond_wait(&cv, &mu);
    pthread_mutex_unlock(&mu);
    pthread_attr_destroy(&attr);
    if (wrong)
        fprintf(stderr, "rank %d: %d of %d exchanges wrong\n", rank, wrong, n);
    MPI_Barrier(MPI_COMM_WORLD);
    printf("detached %d: rank %d at %.6f us\n", n, rank, MPI_Wtime() * 1e6);
    return wrong != 0;
}

int main(int argc, char **argv)
{
    int got = MPI_THREAD_SINGLE;
    if (argc > 1 && is(argv[1], "detached"))
        MPI_Init_thread(&argc, &argv, MPI_THREAD_MULTIPLE, &got);
    else
        MPI_Init(&argc, &argv);
    MPI_Comm_rank(MPI_COMM_WORLD, &rank);
    MPI_Comm_size(MPI_COMM_WORLD, &size);
    int bad;
    if (argc == 3 && is(argv[1], "comm_free"))
        bad = comm_free(argv[2]);
    else if (argc == 3 && is(argv[1], "detached") && got == MPI_THREAD_MULTIPLE)
        bad = detached(atoi(argv[2]));
    else {
        fprintf(stderr, "usage: p2run -n N -- mpi_lifetimes comm_free KIND | detached N\n");
        exit(3);
    }
    fflush(stdout);
    int any = 0;
    MPI_Allreduce(&bad, &any, 1, MPI_INT, MPI_MAX, MPI_COMM_WORLD);
    if (rank == 0 && !any)
        printf("mpi_lifetimes: %s ok\n", argv[1]);
    MPI_Finalize();
    return any ? 1 : 0;
}
