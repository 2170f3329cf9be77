/* mpi_calls: data correctness of every MPI call the virtual-time layer models,
 * for any number of ranks (1 to 16), built with mpicc and run by p2run with
 * the layer preloaded. Sizes are odd and straddle the eager threshold
 * (12 KiB) so both protocols run; ANY_SOURCE, ANY_TAG, derived datatypes,
 * user ops, communicators. Prints one line per check group and "mpi_calls:
 * all N checks passed" at rank 0; any wrong byte fails the rank (exit 1).
 * The collectives and their algorithms: mpi_calls_coll.c. */
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "mpi_calls.h"

int rank, size;

static unsigned char pat(int who, int tag, size_t i) { return (unsigned char)(who * 37 + tag * 11 + i * 7 + (i >> 9)); }

void fill(unsigned char *b, size_t n, int who, int tag)
{
    for (size_t i = 0; i < n; i++)
        b[i] = pat(who, tag, i);
}

int ok(const unsigned char *b, size_t n, int who, int tag)
{
    for (size_t i = 0; i < n; i++)
        if (b[i] != pat(who, tag, i))
            return 0;
    return 1;
}

static const int sizes[] = {0, 1, 7, 4093, 12288, 12289, 100003};
#define NSIZES (int)(sizeof sizes / sizeof sizes[0])

/* Ring: each rank sends to the right, receives from the left, every size,
 * blocking and nonblocking, plus Sendrecv and Ssend. */
static void point_to_point(void)
{
    int right = (rank + 1) % size, left = (rank - 1 + size) % size;
    unsigned char *s = malloc(100003), *r = malloc(100003);
    for (int k = 0; k < NSIZES; k++) {
        int n = sizes[k];
        fill(s, (size_t)n, rank, k);
        memset(r, 0, (size_t)n);
        MPI_Request q[2];
        MPI_Status st;
        MPI_Irecv(r, n, MPI_BYTE, left, k, MPI_COMM_WORLD, &q[0]);
        MPI_Isend(s, n, MPI_BYTE, right, k, MPI_COMM_WORLD, &q[1]);
        MPI_Wait(&q[1], MPI_STATUS_IGNORE);
        MPI_Wait(&q[0], &st);
        int cnt;
        MPI_Get_count(&st, MPI_BYTE, &cnt);
        REQUIRE(cnt == n && st.MPI_SOURCE == left && st.MPI_TAG == k);
        REQUIRE(ok(r, (size_t)n, left, k));
        /* Sendrecv, the other direction */
        memset(r, 0, (size_t)n);
        MPI_Sendrecv(s, n, MPI_BYTE, left, 100 + k, r, n, MPI_BYTE, right, 100 + k, MPI_COMM_WORLD, &st);
        REQUIRE(ok(r, (size_t)n, right, k) && st.MPI_SOURCE == right);
    }
    /* Ssend/Recv in a ring: even ranks send first */
    if (size > 1) {
        fill(s, 333, rank, 9);
        if (rank % 2 == 0) {
            MPI_Ssend(s, 333, MPI_BYTE, right, 9, MPI_COMM_WORLD);
            MPI_Recv(r, 333, MPI_BYTE, left, 9, MPI_COMM_WORLD, MPI_STATUS_IGNORE);
        } else {
            MPI_Recv(r, 333, MPI_BYTE, left, 9, MPI_COMM_WORLD, MPI_STATUS_IGNORE);
            MPI_Ssend(s, 333, MPI_BYTE, right, 9, MPI_COMM_WORLD);
        }
        REQUIRE(ok(r, 333, left, 9));
    }
    /* Sendrecv_replace */
    fill(s, 5001, rank, 3);
    MPI_Sendrecv_replace(s, 5001, MPI_BYTE, right, 3, left, 3, MPI_COMM_WORLD, MPI_STATUS_IGNORE);
    REQUIRE(ok(s, 5001, left, 3));
    free(s);
    free(r);
    if (rank == 0)
        printf("point-to-point: ring of %d ranks, sizes 0..100003 B, eager and rendezvous: ok\n", size);
}

/* Everyone sends to rank 0 with its rank as tag; rank 0 receives with
 * ANY_SOURCE / ANY_TAG, probes first, and checks it got each exactly once. */
static void wildcards(void)
{
    int n = 20011;
    unsigned char *b = malloc((size_t)n);
    if (rank != 0) {
        fill(b, (size_t)(n - rank), rank, rank);
        MPI_Send(b, n - rank, MPI_BYTE, 0, rank, MPI_COMM_WORLD);
        /* a small one after, same tag: must not overtake */
        fill(b, 5, rank, rank + 1);
        MPI_Send(b, 5, MPI_BYTE, 0, rank, MPI_COMM_WORLD);
    } else {
        int *seen = calloc((size_t)size, sizeof(int));
        for (int i = 0; i < 2 * (size - 1); i++) {
            MPI_Status st;
            MPI_Probe(MPI_ANY_SOURCE, MPI_ANY_TAG, MPI_COMM_WORLD, &st);
            int cnt;
            MPI_Get_count(&st, MPI_BYTE, &cnt);
            int src = st.MPI_SOURCE;
            REQUIRE(src > 0 && src < size && st.MPI_TAG == src);
            REQUIRE(cnt == (seen[src] ? 5 : n - src));
            MPI_Recv(b, n, MPI_BYTE, MPI_ANY_SOURCE, MPI_ANY_TAG, MPI_COMM_WORLD, &st);
            REQUIRE(st.MPI_SOURCE == src); /* the probed message is the next one matched */
            REQUIRE(ok(b, (size_t)cnt, src, seen[src] ? src + 1 : src));
            seen[src]++;
        }
        for (int i = 1; i < size; i++)
            REQUIRE(seen[i] == 2);
        int flag;
        MPI_Iprobe(MPI_ANY_SOURCE, 1, MPI_COMM_WORLD, &flag, MPI_STATUS_IGNORE); /* rank 1 sent two, both taken */
        REQUIRE(!flag);
        free(seen);
        printf("wildcards: ANY_SOURCE/ANY_TAG with Probe/Iprobe/Get_count, per-sender order: ok\n");
    }
    free(b);
    /* Nobody's later messages may reach rank 0's wildcards. */
    MPI_Barrier(MPI_COMM_WORLD);
}

/* Waitany, Waitsome, Testall, Testany, persistent requests. */
static void requests(void)
{
    int right = (rank + 1) % size, left = (rank - 1 + size) % size;
    int sv[4], rv[4];
    MPI_Request q[8];
    for (int i = 0; i < 4; i++) {
        sv[i] = rank * 100 + i;
        MPI_Irecv(&rv[i], 1, MPI_INT, left, 50 + i, MPI_COMM_WORLD, &q[i]);
    }
    for (int i = 0; i < 4; i++)
        MPI_Isend(&sv[i], 1, MPI_INT, right, 50 + i, MPI_COMM_WORLD, &q[4 + i]);
    int done = 0, idx, out, ids[8];
    MPI_Waitany(8, q, &idx, MPI_STATUS_IGNORE);
    REQUIRE(idx >= 0 && idx < 8 && q[idx] == MPI_REQUEST_NULL);
    done++;
    while (done < 8) {
        MPI_Waitsome(8, q, &out, ids, MPI_STATUSES_IGNORE);
        REQUIRE(out >= 1);
        done += out;
    }
    for (int i = 0; i < 4; i++)
        REQUIRE(rv[i] == left * 100 + i);
    int flag;
    MPI_Testall(8, q, &flag, MPI_STATUSES_IGNORE);
    REQUIRE(flag);
    MPI_Testany(8, q, &idx, &flag, MPI_STATUS_IGNORE);
    REQUIRE(flag && idx == MPI_UNDEFINED);
    /* Test until done */
    MPI_Irecv(&rv[0], 1, MPI_INT, left, 60, MPI_COMM_WORLD, &q[0]);
    MPI_Send(&sv[1], 1, MPI_INT, right, 60, MPI_COMM_WORLD);
    flag = 0;
    while (!flag)
        MPI_Test(&q[0], &flag, MPI_STATUS_IGNORE);
    REQUIRE(rv[0] == left * 100 + 1);
    /* persistent: three rounds */
    int ps, pr;
    MPI_Request p[2];
    MPI_Recv_init(&pr, 1, MPI_INT, left, 70, MPI_COMM_WORLD, &p[0]);
    MPI_Send_init(&ps, 1, MPI_INT, right, 70, MPI_COMM_WORLD, &p[1]);
    for (int round = 0; round < 3; round++) {
        ps = rank * 1000 + round;
        MPI_Startall(2, p);
        MPI_Waitall(2, p, MPI_STATUSES_IGNORE);
        REQUIRE(pr == left * 1000 + round && p[0] != MPI_REQUEST_NULL);
    }
    MPI_Request_free(&p[0]);
    MPI_Request_free(&p[1]);
    if (rank == 0)
        printf("requests: Waitany/Waitsome/Testall/Testany/Test, persistent Send_init/Recv_init/Startall: ok\n");
}

/* A strided vector of doubles sent as one derived type, received contiguous. */
static void datatypes(void)
{
    int right = (rank + 1) % size, left = (rank - 1 + size) % size;
    enum { COUNT = 1001, STRIDE = 3 };
    double *m = malloc(sizeof(double) * COUNT * STRIDE), *r = malloc(sizeof(double) * COUNT);
    for (int i = 0; i < COUNT * STRIDE; i++)
        m[i] = rank * 1e6 + i;
    MPI_Datatype vec;
    MPI_Type_vector(COUNT, 1, STRIDE, MPI_DOUBLE, &vec);
    MPI_Type_commit(&vec);
    MPI_Sendrecv(m, 1, vec, right, 80, r, COUNT, MPI_DOUBLE, left, 80, MPI_COMM_WORLD, MPI_STATUS_IGNORE);
    for (int i = 0; i < COUNT; i++)
        REQUIRE(r[i] == left * 1e6 + i * STRIDE);
    /* and back into the strided layout (rendezvous: 8 KB is eager, make it big) */
    double *m2 = calloc(COUNT * STRIDE, sizeof(double));
    MPI_Sendrecv(r, COUNT, MPI_DOUBLE, left, 81, m2, 1, vec, right, 81, MPI_COMM_WORLD, MPI_STATUS_IGNORE);
    for (int i = 0; i < COUNT; i++)
        REQUIRE(m2[i * STRIDE] == rank * 1e6 + i * STRIDE && (STRIDE < 2 || m2[i * STRIDE + 1] == 0));
    /* a struct type, in a broadcast */
    struct { int a; double b; char c; } rec[3];
    int bl[3] = {1, 1, 1};
    MPI_Aint disp[3] = {offsetof(__typeof__(rec[0]), a), offsetof(__typeof__(rec[0]), b),
                        offsetof(__typeof__(rec[0]), c)};
    MPI_Datatype types[3] = {MPI_INT, MPI_DOUBLE, MPI_CHAR}, st, sr;
    MPI_Type_create_struct(3, bl, disp, types, &st);
    MPI_Type_create_resized(st, 0, sizeof rec[0], &sr);
    MPI_Type_commit(&sr);
    memset(rec, 0, sizeof rec);
    if (rank == size - 1)
        for (int i = 0; i < 3; i++)
            rec[i].a = i + 5, rec[i].b = i * 0.5, rec[i].c = (char)('x' + i);
    MPI_Bcast(rec, 3, sr, size - 1, MPI_COMM_WORLD);
    for (int i = 0; i < 3; i++)
        REQUIRE(rec[i].a == i + 5 && rec[i].b == i * 0.5 && rec[i].c == (char)('x' + i));
    MPI_Type_free(&vec);
    MPI_Type_free(&st);
    MPI_Type_free(&sr);
    free(m);
    free(m2);
    free(r);
    if (rank == 0)
        printf("datatypes: vector both ways, resized struct in Bcast: ok\n");
}

static void communicators(void)
{
    MPI_Comm dup, half;
    MPI_Comm_dup(MPI_COMM_WORLD, &dup);
    int r, s;
    MPI_Comm_rank(dup, &r);
    MPI_Comm_size(dup, &s);
    REQUIRE(r == rank && s == size);
    /* a message on dup is not matched by a receive on world */
    int v = rank, w = -1, flag;
    MPI_Request q;
    MPI_Irecv(&w, 1, MPI_INT, MPI_ANY_SOURCE, MPI_ANY_TAG, MPI_COMM_WORLD, &q);
    MPI_Sendrecv(&v, 1, MPI_INT, (rank + 1) % size, 5, &flag, 1, MPI_INT, (rank - 1 + size) % size, 5, dup,
                 MPI_STATUS_IGNORE);
    REQUIRE(flag == (rank - 1 + size) % size && w == -1);
    MPI_Send(&v, 1, MPI_INT, (rank + 1) % size, 6, MPI_COMM_WORLD);
    MPI_Wait(&q, MPI_STATUS_IGNORE);
    REQUIRE(w == (rank - 1 + size) % size);
    /* split: odd and even ranks, reversed order by key */
    MPI_Comm_split(MPI_COMM_WORLD, rank % 2, size - rank, &half);
    MPI_Comm_rank(half, &r);
    MPI_Comm_size(half, &s);
    REQUIRE(s == (size + 1 - rank % 2) / 2 && r == s - 1 - rank / 2);
    collectives(half, rank % 2 ? "the odd ranks" : "the even ranks");
    algorithms(half, rank % 2 ? "the odd ranks" : "the even ranks");
    /* groups: the first half of world, by Comm_create */
    MPI_Group wg, g;
    MPI_Comm_group(MPI_COMM_WORLD, &wg);
    int nfirst = (size + 1) / 2, *ids = malloc(sizeof(int) * (size_t)nfirst);
    for (int i = 0; i < nfirst; i++)
        ids[i] = nfirst - 1 - i;
    MPI_Group_incl(wg, nfirst, ids, &g);
    int gr, gs, tr;
    MPI_Group_rank(g, &gr);
    MPI_Group_size(g, &gs);
    REQUIRE(gs == nfirst && gr == (rank < nfirst ? nfirst - 1 - rank : MPI_UNDEFINED));
    MPI_Group_translate_ranks(g, 1, &(int){0}, wg, &tr);
    REQUIRE(tr == nfirst - 1);
    MPI_Comm sub;
    MPI_Comm_create(MPI_COMM_WORLD, g, &sub);
    if (rank < nfirst) {
        MPI_Comm_rank(sub, &r);
        REQUIRE(r == nfirst - 1 - rank);
        int sum = 0;
        MPI_Allreduce(&rank, &sum, 1, MPI_INT, MPI_SUM, sub);
        REQUIRE(sum == nfirst * (nfirst - 1) / 2);
        MPI_Comm_free(&sub);
    } else {
        REQUIRE(sub == MPI_COMM_NULL);
    }
    MPI_Group_free(&g);
    MPI_Group_free(&wg);
    free(ids);
    MPI_Comm_free(&half);
    MPI_Comm_free(&dup);
    REQUIRE(dup == MPI_COMM_NULL);
    if (rank == 0)
        printf("communicators: dup isolates traffic, split by color and key, Comm_create from a group: ok\n");
}

int main(int argc, char **argv)
{
    MPI_Init(&argc, &argv);
    MPI_Comm_rank(MPI_COMM_WORLD, &rank);
    MPI_Comm_size(MPI_COMM_WORLD, &size);
    double t0 = MPI_Wtime();
    point_to_point();
    wildcards();
    requests();
    datatypes();
    collectives(MPI_COMM_WORLD, "MPI_COMM_WORLD");
    algorithms(MPI_COMM_WORLD, "MPI_COMM_WORLD");
    if (size >= 10) {
        /* 13 of 16: a non-power-of-two of at least 8 ranks (Alltoall's Bruck),
         * with several levels of recursive doubling's forwarding */
        MPI_Comm most;
        MPI_Comm_split(MPI_COMM_WORLD, rank < size - 3 ? 0 : MPI_UNDEFINED, rank, &most);
        if (most != MPI_COMM_NULL) {
            algorithms(most, "the first size - 3 ranks");
            MPI_Comm_free(&most);
        }
    }
    communicators();
    double t = MPI_Wtime() - t0, tmax;
    MPI_Reduce(&t, &tmax, 1, MPI_DOUBLE, MPI_MAX, 0, MPI_COMM_WORLD);
    int all;
    MPI_Reduce(&p2_check_count, &all, 1, MPI_INT, MPI_SUM, 0, MPI_COMM_WORLD);
    if (rank == 0)
        printf("mpi_calls: all %d checks passed on %d ranks; simulated time %.3f us\n", all, size, tmax * 1e6);
    MPI_Finalize();
    return 0;
}
