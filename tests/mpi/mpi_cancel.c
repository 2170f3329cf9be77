/* mpi_cancel: MPI_Cancel, MPI_Test_cancelled and MPI_Request_get_status on
 * the virtual-time MPI layer (mpicc, run by p2run), ranks in pairs (an odd
 * last rank only takes part in the barriers). Each case checks the
 * cancelled flag and that the messages around it arrive intact afterwards:
 *   - a receive nothing matched yet (eager and rendezvous, from a rank and
 *     from MPI_ANY_SOURCE, persistent): cancelled; the message sent later
 *     goes to a later receive, whole
 *   - a receive matched before the cancel (eager data in, a rendezvous in
 *     progress): not cancelled, the data right
 *   - sends (eager, rendezvous): never cancelled, received whole
 *   - MPI_Request_get_status: flag 0 while pending and the request left
 *     alone, flag 1 with the status once done, the request still to be
 *     completed; on MPI_REQUEST_NULL flag 1
 * Prints "mpi_cancel: all N checks passed on P ranks" (rank 0); any failure
 * exits 1. */
#include <mpi.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

static int rank, size, checks;

#define CHECK(c)                                                                   \
    do {                                                                           \
        checks++;                                                                  \
        if (!(c)) {                                                                \
            fprintf(stderr, "rank %d: FAIL %s (line %d)\n", rank, #c, __LINE__);   \
            exit(1);                                                               \
        }                                                                          \
    } while (0)

enum { BIG = 100003 }; /* above the eager limit: rendezvous */

static void fill(unsigned char *b, int n, int seed)
{
    for (int i = 0; i < n; i++)
        b[i] = (unsigned char)(seed * 31 + i * 7 + (i >> 8));
}

static int same(const unsigned char *b, int n, int seed)
{
    for (int i = 0; i < n; i++)
        if (b[i] != (unsigned char)(seed * 31 + i * 7 + (i >> 8)))
            return 0;
    return 1;
}

static int cancelled(MPI_Status *st)
{
    int flag = -1;
    MPI_Test_cancelled(st, &flag);
    return flag;
}

/* Rank 0 of a pair receives, rank 1 sends (`peer` is the other). */
static void pair(int me, int peer)
{
    unsigned char *s = malloc(BIG), *r = malloc(BIG);
    MPI_Request q;
    MPI_Status st;
    int flag;
    /* 1. Not matched yet (the sender sends only after the barrier): cancelled. */
    for (int k = 0; k < 2; k++) {
        int n = k ? BIG : 100;
        if (me == 0) {
            MPI_Irecv(r, n, MPI_BYTE, k ? MPI_ANY_SOURCE : peer, 10 + k, MPI_COMM_WORLD, &q);
            MPI_Request_get_status(q, &flag, &st);
            CHECK(flag == 0 && q != MPI_REQUEST_NULL);
            MPI_Cancel(&q);
            MPI_Wait(&q, &st);
            CHECK(q == MPI_REQUEST_NULL && cancelled(&st) == 1);
        }
        MPI_Barrier(MPI_COMM_WORLD);
        if (me == 1) {
            fill(s, n, 10 + k);
            MPI_Send(s, n, MPI_BYTE, peer, 10 + k, MPI_COMM_WORLD);
        } else {
            memset(r, 0, (size_t)n);
            MPI_Recv(r, n, MPI_BYTE, peer, 10 + k, MPI_COMM_WORLD, &st);
            int cnt;
            MPI_Get_count(&st, MPI_BYTE, &cnt);
            CHECK(cnt == n && same(r, n, 10 + k) && cancelled(&st) == 0);
        }
    }
    /* 2. Matched first: an eager message already there, then a rendezvous one
     * whose RTS is there (the receive answers it, the data is on its way). */
    for (int k = 0; k < 2; k++) {
        int n = k ? BIG : 1000;
        if (me == 1) {
            fill(s, n, 20 + k);
            MPI_Isend(s, n, MPI_BYTE, peer, 20 + k, MPI_COMM_WORLD, &q);
        }
        MPI_Barrier(MPI_COMM_WORLD);
        if (me == 0) {
            MPI_Probe(peer, 20 + k, MPI_COMM_WORLD, MPI_STATUS_IGNORE);
            memset(r, 0, (size_t)n);
            MPI_Irecv(r, n, MPI_BYTE, peer, 20 + k, MPI_COMM_WORLD, &q);
            MPI_Cancel(&q);
            MPI_Wait(&q, &st);
            CHECK(cancelled(&st) == 0 && st.MPI_SOURCE == peer && same(r, n, 20 + k));
        } else {
            MPI_Wait(&q, MPI_STATUS_IGNORE);
        }
    }
    /* 3. Sends: cancelling fails (MPI allows it); the receiver gets them whole. */
    for (int k = 0; k < 2; k++) {
        int n = k ? BIG : 64;
        if (me == 1) {
            fill(s, n, 30 + k);
            MPI_Isend(s, n, MPI_BYTE, peer, 30 + k, MPI_COMM_WORLD, &q);
            MPI_Cancel(&q);
            MPI_Wait(&q, &st);
            CHECK(cancelled(&st) == 0);
        } else {
            memset(r, 0, (size_t)n);
            MPI_Recv(r, n, MPI_BYTE, peer, 30 + k, MPI_COMM_WORLD, &st);
            CHECK(same(r, n, 30 + k));
        }
    }
    /* 4. Persistent receive: started and cancelled, then started again and
     * received. */
    MPI_Request p;
    if (me == 0) {
        MPI_Recv_init(r, 500, MPI_BYTE, peer, 40, MPI_COMM_WORLD, &p);
        MPI_Start(&p);
        MPI_Cancel(&p);
        MPI_Wait(&p, &st);
        CHECK(p != MPI_REQUEST_NULL && cancelled(&st) == 1);
        MPI_Start(&p);
    }
    MPI_Barrier(MPI_COMM_WORLD);
    if (me == 1) {
        fill(s, 500, 40);
        MPI_Send(s, 500, MPI_BYTE, peer, 40, MPI_COMM_WORLD);
    } else {
        MPI_Wait(&p, &st);
        CHECK(cancelled(&st) == 0 && same(r, 500, 40));
        MPI_Request_free(&p);
    }
    /* 5. MPI_Request_get_status: pending, then done with its status, and the
     * request still there for MPI_Wait. */
    if (me == 0) {
        MPI_Irecv(r, BIG, MPI_BYTE, peer, 50, MPI_COMM_WORLD, &q);
        MPI_Request_get_status(q, &flag, &st);
        CHECK(flag == 0);
    }
    MPI_Barrier(MPI_COMM_WORLD);
    if (me == 1) {
        fill(s, 777, 50);
        MPI_Send(s, 777, MPI_BYTE, peer, 50, MPI_COMM_WORLD);
    } else {
        int polls = 0;
        do {
            MPI_Request_get_status(q, &flag, &st);
            polls++;
        } while (!flag);
        int cnt;
        MPI_Get_count(&st, MPI_BYTE, &cnt);
        CHECK(q != MPI_REQUEST_NULL && cnt == 777 && st.MPI_SOURCE == peer && st.MPI_TAG == 50);
        MPI_Request_get_status(q, &flag, MPI_STATUS_IGNORE); /* again: still there */
        CHECK(flag == 1 && q != MPI_REQUEST_NULL);
        MPI_Status st2;
        MPI_Wait(&q, &st2);
        MPI_Get_count(&st2, MPI_BYTE, &cnt);
        CHECK(q == MPI_REQUEST_NULL && cnt == 777 && same(r, 777, 50));
    }
    free(s);
    free(r);
}

int main(int argc, char **argv)
{
    MPI_Init(&argc, &argv);
    MPI_Comm_rank(MPI_COMM_WORLD, &rank);
    MPI_Comm_size(MPI_COMM_WORLD, &size);
    int paired = rank < size - size % 2;
    int me = rank % 2, peer = rank ^ 1;
    if (paired) {
        pair(me, peer);
    } else { /* the odd one out: the barriers of pair() (2 + 2 + 1 + 1) */
        for (int i = 0; i < 6; i++)
            MPI_Barrier(MPI_COMM_WORLD);
    }
    int flag = 0;
    MPI_Status st;
    MPI_Request none = MPI_REQUEST_NULL;
    MPI_Request_get_status(none, &flag, &st);
    CHECK(flag == 1);
    int all;
    MPI_Reduce(&checks, &all, 1, MPI_INT, MPI_SUM, 0, MPI_COMM_WORLD);
    if (rank == 0)
        printf("mpi_cancel: all %d checks passed on %d ranks\n", all, size);
    MPI_Finalize();
    return 0;
}
