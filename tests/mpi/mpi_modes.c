/* mpi_modes: buffered and ready sends and matched probes on the virtual-time
 * MPI layer (mpicc, run by p2run), at 2 ranks or more (ranks in pairs 2k,
 * 2k+1; an odd last rank only takes part in the collectives):
 *   - ready sends (MPI_Rsend, _Irsend, _Rsend_init started three times) to
 *     a receive posted first, eager and rendezvous sizes: every byte
 *   - buffered sends (MPI_Bsend, _Ibsend, _Bsend_init started three times)
 *     into an attached buffer: complete before any receive is posted (the
 *     sender overwrites its data at once), received after a barrier, every
 *     byte; a buffer for one message taking three in a row (each has left
 *     it when the next starts); MPI_Buffer_detach gives back the buffer's
 *     address and size, and NULL and 0 with none attached
 *   - matched probes: every rank sends rank 0 three messages (8 B, 4 KiB and
 *     100003 B, one tag each); rank 0 takes them with MPI_Mprobe and
 *     MPI_Improbe from MPI_ANY_SOURCE / MPI_ANY_TAG, sizes them from the
 *     status and receives them with MPI_Mrecv / MPI_Imrecv: every byte, each
 *     (source, tag) once; a message matched by MPI_Mprobe is not taken by a
 *     receive posted after it (the next one is); MPI_PROC_NULL gives
 *     MPI_MESSAGE_NO_PROC and an empty MPI_PROC_NULL status
 *   - generalized requests: MPI_Grequest_start / _complete, pending until
 *     completed, the query, cancel and free callbacks called in MPI's order
 *     (MPI_Wait, MPI_Request_get_status, MPI_Cancel, MPI_Request_free before
 *     completion, MPI_Waitall with MPI_STATUSES_IGNORE)
 * Prints "mpi_modes: all N checks passed on P ranks" (rank 0); any failure
 * exits 1.
 *
 *   mpi_modes pingpong MODE   an 8 B ping-pong between ranks 0 and 1 (each
 *                             receive posted before the matching send
 *                             starts), MODE send, rsend or bsend: prints
 *                             "pingpong MODE 8 B: T us" (half round trip,
 *                             simulated, 1 ps resolution)
 *   mpi_modes overflow        a buffered send larger than the attached
 *                             buffer (the job must end: MPI_ERR_BUFFER)
 *   mpi_modes nobuffer        a buffered send with no buffer attached
 */
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
static const int sizes[] = {0, 8, 4096, BIG};
enum { NSIZES = 4 };

static void fill(unsigned char *b, int n, int seed)
{
    for (int i = 0; i < n; i++)
        b[i] = (unsigned char)(seed * 37 + i * 11 + (i >> 9));
}

static int same(const unsigned char *b, int n, int seed)
{
    for (int i = 0; i < n; i++)
        if (b[i] != (unsigned char)(seed * 37 + i * 11 + (i >> 9)))
            return 0;
    return 1;
}

/* Ready sends: the receiver posts, then a barrier, then the sender sends. */
static void ready(int me, int peer)
{
    unsigned char *s = malloc(BIG), *r = malloc(BIG);
    MPI_Request q;
    MPI_Status st;
    int cnt;
    for (int k = 0; k < NSIZES; k++) {
        int n = sizes[k];
        for (int form = 0; form < 2; form++) { /* MPI_Rsend, MPI_Irsend */
            int tag = 10 * k + form;
            if (me == 0) {
                memset(r, 0, BIG);
                MPI_Irecv(r, n, MPI_BYTE, peer, tag, MPI_COMM_WORLD, &q);
            }
            MPI_Barrier(MPI_COMM_WORLD);
            if (me == 1) {
                fill(s, n, tag);
                if (form == 0) {
                    MPI_Rsend(s, n, MPI_BYTE, peer, tag, MPI_COMM_WORLD);
                } else {
                    MPI_Irsend(s, n, MPI_BYTE, peer, tag, MPI_COMM_WORLD, &q);
                    MPI_Wait(&q, MPI_STATUS_IGNORE);
                }
            } else if (me == 0) {
                MPI_Wait(&q, &st);
                MPI_Get_count(&st, MPI_BYTE, &cnt);
                CHECK(cnt == n && st.MPI_SOURCE == peer && st.MPI_TAG == tag && same(r, n, tag));
            }
        }
    }
    /* persistent ready send, started three times, to receives posted first */
    MPI_Request p;
    if (me == 1)
        MPI_Rsend_init(s, BIG, MPI_BYTE, peer, 77, MPI_COMM_WORLD, &p);
    for (int round = 0; round < 3; round++) {
        if (me == 0)
            MPI_Irecv(r, BIG, MPI_BYTE, peer, 77, MPI_COMM_WORLD, &q);
        MPI_Barrier(MPI_COMM_WORLD);
        if (me == 1) {
            fill(s, BIG, 70 + round);
            MPI_Start(&p);
            MPI_Wait(&p, MPI_STATUS_IGNORE);
        } else if (me == 0) {
            MPI_Wait(&q, &st);
            CHECK(same(r, BIG, 70 + round));
        }
    }
    if (me == 1)
        MPI_Request_free(&p);
    free(s);
    free(r);
}

/* Buffered sends: each completes before any receive is posted. */
static void buffered(int me, int peer)
{
    int bufsize = 3 * (BIG + MPI_BSEND_OVERHEAD) + 2 * (4096 + MPI_BSEND_OVERHEAD);
    char *attach = malloc((size_t)bufsize);
    MPI_Buffer_attach(attach, bufsize);
    unsigned char *s = malloc(BIG), *r = malloc(BIG);
    MPI_Request q;
    MPI_Status st;
    int cnt;
    for (int round = 0; round < 2; round++) { /* the second reuses the freed space */
        if (me == 1) {
            for (int k = 0; k < NSIZES; k++) {
                fill(s, sizes[k], 100 + 10 * round + k);
                if (k % 2)
                    MPI_Bsend(s, sizes[k], MPI_BYTE, peer, 100 + k, MPI_COMM_WORLD);
                else {
                    MPI_Ibsend(s, sizes[k], MPI_BYTE, peer, 100 + k, MPI_COMM_WORLD, &q);
                    int flag = 0;
                    MPI_Test(&q, &flag, MPI_STATUS_IGNORE); /* complete: the data is copied */
                    CHECK(flag == 1 && q == MPI_REQUEST_NULL);
                }
                memset(s, 0xee, BIG); /* the send has its copy */
            }
        }
        MPI_Barrier(MPI_COMM_WORLD);
        if (me == 0)
            for (int k = NSIZES - 1; k >= 0; k--) { /* in another order than sent */
                memset(r, 0, BIG);
                MPI_Recv(r, BIG, MPI_BYTE, peer, 100 + k, MPI_COMM_WORLD, &st);
                MPI_Get_count(&st, MPI_BYTE, &cnt);
                CHECK(cnt == sizes[k] && same(r, cnt, 100 + 10 * round + k));
            }
        MPI_Barrier(MPI_COMM_WORLD);
    }
    /* persistent buffered send, started three times: each complete at once */
    MPI_Request p;
    if (me == 1) {
        MPI_Bsend_init(s, 4096, MPI_BYTE, peer, 120, MPI_COMM_WORLD, &p);
        for (int round = 0; round < 3; round++) {
            fill(s, 4096, 120 + round);
            MPI_Start(&p);
            int flag = 0;
            MPI_Test(&p, &flag, MPI_STATUS_IGNORE);
            CHECK(flag == 1 && p != MPI_REQUEST_NULL);
        }
        MPI_Request_free(&p);
    }
    MPI_Barrier(MPI_COMM_WORLD);
    if (me == 0)
        for (int round = 0; round < 3; round++) {
            MPI_Recv(r, 4096, MPI_BYTE, peer, 120, MPI_COMM_WORLD, &st);
            CHECK(same(r, 4096, 120 + round));
        }
    void *back;
    int backsize;
    MPI_Buffer_detach(&back, &backsize);
    CHECK(back == attach && backsize == bufsize);
    /* A buffer for one 4 KiB message: an eager send has left the buffer
     * when the call returns, so each next one fits again. */
    MPI_Buffer_attach(attach, 4096 + MPI_BSEND_OVERHEAD);
    if (me == 1)
        for (int k = 0; k < 3; k++) {
            fill(s, 4096, 130 + k);
            MPI_Bsend(s, 4096, MPI_BYTE, peer, 130, MPI_COMM_WORLD);
        }
    MPI_Barrier(MPI_COMM_WORLD);
    if (me == 0)
        for (int k = 0; k < 3; k++) {
            MPI_Recv(r, 4096, MPI_BYTE, peer, 130, MPI_COMM_WORLD, &st);
            CHECK(same(r, 4096, 130 + k));
        }
    MPI_Buffer_detach(&back, &backsize);
    CHECK(back == attach && backsize == 4096 + MPI_BSEND_OVERHEAD);
    MPI_Buffer_detach(&back, &backsize); /* none attached now */
    CHECK(back == NULL && backsize == 0);
    free(attach);
    free(s);
    free(r);
}

/* Matched probes: everyone sends rank 0 three messages; rank 0 takes them
 * from any source with any tag. */
static void matched(void)
{
    static const int msz[3] = {8, 4096, BIG};
    unsigned char *s = malloc(BIG);
    if (rank != 0)
        for (int k = 0; k < 3; k++) {
            fill(s, msz[k], 10 * rank + k);
            MPI_Send(s, msz[k], MPI_BYTE, 0, 200 + k, MPI_COMM_WORLD);
        }
    if (rank == 0) {
        int total = 3 * (size - 1), got = 0;
        char *seen = calloc((size_t)size * 3, 1);
        MPI_Request reqs[3];
        unsigned char *bufs[3];
        int srcs[3], tags[3], nreq = 0;
        while (got < total) {
            MPI_Message m;
            MPI_Status st;
            int n, flag = 1;
            if (got % 2 == 0)
                MPI_Mprobe(MPI_ANY_SOURCE, MPI_ANY_TAG, MPI_COMM_WORLD, &m, &st);
            else
                do
                    MPI_Improbe(MPI_ANY_SOURCE, MPI_ANY_TAG, MPI_COMM_WORLD, &flag, &m, &st);
                while (!flag);
            MPI_Get_count(&st, MPI_BYTE, &n);
            int k = st.MPI_TAG - 200;
            CHECK(k >= 0 && k < 3 && n == msz[k] && st.MPI_SOURCE > 0 && st.MPI_SOURCE < size);
            CHECK(!seen[3 * st.MPI_SOURCE + k]);
            seen[3 * st.MPI_SOURCE + k] = 1;
            unsigned char *b = malloc((size_t)n);
            if (got % 3 == 2) { /* MPI_Imrecv, waited for later */
                bufs[nreq] = b;
                srcs[nreq] = st.MPI_SOURCE;
                tags[nreq] = k;
                MPI_Imrecv(b, n, MPI_BYTE, &m, &reqs[nreq++]);
                CHECK(m == MPI_MESSAGE_NULL);
            } else {
                MPI_Status rs;
                MPI_Mrecv(b, n, MPI_BYTE, &m, &rs);
                int rn;
                MPI_Get_count(&rs, MPI_BYTE, &rn);
                CHECK(m == MPI_MESSAGE_NULL && rn == n && rs.MPI_SOURCE == st.MPI_SOURCE &&
                      rs.MPI_TAG == st.MPI_TAG && same(b, n, 10 * st.MPI_SOURCE + k));
                free(b);
            }
            if (nreq == 3 || got + 1 == total) {
                MPI_Waitall(nreq, reqs, MPI_STATUSES_IGNORE);
                for (int i = 0; i < nreq; i++) {
                    CHECK(same(bufs[i], msz[tags[i]], 10 * srcs[i] + tags[i]));
                    free(bufs[i]);
                }
                nreq = 0;
            }
            got++;
        }
        free(seen);
    }
    MPI_Barrier(MPI_COMM_WORLD);
    /* A matched message is no receive's any more: rank 1 sends two messages
     * with one tag; rank 0 matches the first, then a receive gets the second. */
    if (rank == 1) {
        fill(s, 64, 1);
        MPI_Send(s, 64, MPI_BYTE, 0, 300, MPI_COMM_WORLD);
        fill(s, 64, 2);
        MPI_Send(s, 64, MPI_BYTE, 0, 300, MPI_COMM_WORLD);
    } else if (rank == 0) {
        MPI_Message m;
        unsigned char a[64], b[64];
        MPI_Mprobe(1, 300, MPI_COMM_WORLD, &m, MPI_STATUS_IGNORE);
        MPI_Recv(b, 64, MPI_BYTE, MPI_ANY_SOURCE, 300, MPI_COMM_WORLD, MPI_STATUS_IGNORE);
        MPI_Mrecv(a, 64, MPI_BYTE, &m, MPI_STATUS_IGNORE);
        CHECK(same(a, 64, 1) && same(b, 64, 2));
    }
    /* MPI_PROC_NULL */
    MPI_Message m;
    MPI_Status st;
    int flag = 0, n = -1;
    MPI_Mprobe(MPI_PROC_NULL, 5, MPI_COMM_WORLD, &m, &st);
    CHECK(m == MPI_MESSAGE_NO_PROC && st.MPI_SOURCE == MPI_PROC_NULL);
    MPI_Mrecv(s, 8, MPI_BYTE, &m, &st);
    MPI_Get_count(&st, MPI_BYTE, &n);
    CHECK(m == MPI_MESSAGE_NULL && st.MPI_SOURCE == MPI_PROC_NULL && n == 0);
    MPI_Improbe(MPI_PROC_NULL, 5, MPI_COMM_WORLD, &flag, &m, &st);
    CHECK(flag == 1 && m == MPI_MESSAGE_NO_PROC);
    MPI_Request q;
    MPI_Imrecv(s, 8, MPI_BYTE, &m, &q);
    MPI_Wait(&q, &st);
    CHECK(st.MPI_SOURCE == MPI_PROC_NULL);
    free(s);
}

/* Generalized requests: the callbacks' calls, in MPI's order. */
static char greq_log[64];
static int greq_query(void *extra, MPI_Status *st)
{
    strcat(greq_log, "q");
    MPI_Status_set_elements(st, MPI_INT, *(int *)extra);
    MPI_Status_set_cancelled(st, 0);
    st->MPI_SOURCE = MPI_UNDEFINED;
    st->MPI_TAG = MPI_UNDEFINED;
    return MPI_SUCCESS;
}
static int greq_free(void *extra)
{
    (void)extra;
    strcat(greq_log, "f");
    return MPI_SUCCESS;
}
static int greq_cancel(void *extra, int complete)
{
    (void)extra;
    strcat(greq_log, complete ? "C" : "c");
    return MPI_SUCCESS;
}

static void generalized(void)
{
    static int n = 7;
    MPI_Request q;
    MPI_Status st;
    int flag = -1, cnt = -1;
    greq_log[0] = '\0';
    MPI_Grequest_start(greq_query, greq_free, greq_cancel, &n, &q);
    MPI_Test(&q, &flag, &st);
    CHECK(flag == 0 && q != MPI_REQUEST_NULL && greq_log[0] == '\0');
    MPI_Request_get_status(q, &flag, &st);
    CHECK(flag == 0);
    MPI_Cancel(&q); /* not complete yet */
    MPI_Grequest_complete(q);
    MPI_Request_get_status(q, &flag, &st); /* the query, the request kept */
    CHECK(flag == 1 && q != MPI_REQUEST_NULL);
    MPI_Wait(&q, &st); /* the query, then free */
    MPI_Get_count(&st, MPI_INT, &cnt);
    CHECK(q == MPI_REQUEST_NULL && cnt == 7 && !strcmp(greq_log, "cqqf"));
    /* freed before it completes: free runs at MPI_Grequest_complete */
    greq_log[0] = '\0';
    MPI_Grequest_start(greq_query, greq_free, greq_cancel, &n, &q);
    MPI_Request keep = q;
    MPI_Request_free(&q);
    CHECK(q == MPI_REQUEST_NULL && greq_log[0] == '\0');
    MPI_Grequest_complete(keep);
    CHECK(!strcmp(greq_log, "f"));
    /* with other requests: MPI_Waitall, MPI_STATUSES_IGNORE (the query runs) */
    greq_log[0] = '\0';
    MPI_Request two[2];
    int x = rank, y = -1;
    MPI_Grequest_start(greq_query, greq_free, greq_cancel, &n, &two[0]);
    MPI_Irecv(&y, 1, MPI_INT, MPI_PROC_NULL, 0, MPI_COMM_WORLD, &two[1]);
    MPI_Grequest_complete(two[0]);
    MPI_Waitall(2, two, MPI_STATUSES_IGNORE);
    CHECK(!strcmp(greq_log, "qf") && two[0] == MPI_REQUEST_NULL && y == -1);
    (void)x;
}

/* An 8 B ping-pong between ranks 0 and 1: each side posts its receive of
 * the next message before it sends (so a ready send is correct), 5 warm-up
 * and 20 timed round trips after a barrier. */
static void pingpong(const char *mode)
{
    enum { WARM = 5, ITERS = 20 };
    char sb[8] = "pingpong", rb[8];
    char *attach = NULL;
    if (!strcmp(mode, "bsend")) {
        attach = malloc(4 * (8 + MPI_BSEND_OVERHEAD));
        MPI_Buffer_attach(attach, 4 * (8 + MPI_BSEND_OVERHEAD));
    }
    int peer = 1 - rank;
    double t0 = 0;
    MPI_Request q;
    if (rank <= 1)
        MPI_Irecv(rb, 8, MPI_BYTE, peer, 1, MPI_COMM_WORLD, &q);
    MPI_Barrier(MPI_COMM_WORLD);
    for (int i = 0; rank <= 1 && i < WARM + ITERS; i++) {
        if (i == WARM)
            t0 = MPI_Wtime();
        for (int turn = 0; turn < 2; turn++) {
            if ((turn == 0) == (rank == 0)) { /* this rank sends */
                if (!strcmp(mode, "rsend"))
                    MPI_Rsend(sb, 8, MPI_BYTE, peer, 1, MPI_COMM_WORLD);
                else if (!strcmp(mode, "bsend"))
                    MPI_Bsend(sb, 8, MPI_BYTE, peer, 1, MPI_COMM_WORLD);
                else
                    MPI_Send(sb, 8, MPI_BYTE, peer, 1, MPI_COMM_WORLD);
            } else {
                MPI_Wait(&q, MPI_STATUS_IGNORE);
                CHECK(!memcmp(rb, "pingpong", 8));
                if (i + 1 < WARM + ITERS || turn == 0)
                    MPI_Irecv(rb, 8, MPI_BYTE, peer, 1, MPI_COMM_WORLD, &q);
            }
        }
    }
    double t = (MPI_Wtime() - t0) / (2.0 * ITERS);
    if (rank == 1) /* its last receive was posted for nothing: rank 0 sends one more */
        MPI_Wait(&q, MPI_STATUS_IGNORE);
    else if (rank == 0)
        MPI_Send(sb, 8, MPI_BYTE, 1, 1, MPI_COMM_WORLD);
    if (rank == 0)
        printf("pingpong %s 8 B: %.6f us\n", mode, t * 1e6);
    if (attach) {
        void *b;
        int n;
        MPI_Buffer_detach(&b, &n);
        free(attach);
    }
}

int main(int argc, char **argv)
{
    MPI_Init(&argc, &argv);
    MPI_Comm_rank(MPI_COMM_WORLD, &rank);
    MPI_Comm_size(MPI_COMM_WORLD, &size);
    if (argc > 2 && !strcmp(argv[1], "pingpong")) {
        pingpong(argv[2]);
        MPI_Finalize();
        return 0;
    }
    if (argc > 1 && (!strcmp(argv[1], "overflow") || !strcmp(argv[1], "nobuffer"))) {
        static char attach[1000], data[2000];
        if (!strcmp(argv[1], "overflow"))
            MPI_Buffer_attach(attach, sizeof attach);
        if (rank == 0)
            MPI_Bsend(data, sizeof data, MPI_BYTE, 1 % size, 9, MPI_COMM_WORLD);
        printf("rank %d: the buffered send returned\n", rank);
        MPI_Finalize();
        return 0;
    }
    int pair = rank / 2 * 2, me = rank - pair, peer = pair + 1 - me;
    if (peer >= size)
        me = -1; /* the odd last rank */
    ready(me, peer);
    if (rank == 0)
        printf("ready sends: MPI_Rsend, MPI_Irsend, MPI_Rsend_init at 0, 8, 4096 and %d B: ok\n",
               BIG);
    buffered(me, peer);
    if (rank == 0)
        printf("buffered sends: MPI_Bsend, MPI_Ibsend, MPI_Bsend_init complete before any "
               "receive, every byte; MPI_Buffer_detach: ok\n");
    matched();
    if (rank == 0)
        printf("matched probes: MPI_Mprobe, MPI_Improbe, MPI_Mrecv, MPI_Imrecv from "
               "MPI_ANY_SOURCE, MPI_MESSAGE_NO_PROC: ok\n");
    generalized();
    if (rank == 0)
        printf("generalized requests: MPI_Grequest_start, _complete; query, cancel and free "
               "called in MPI's order: ok\n");
    int all;
    MPI_Reduce(&checks, &all, 1, MPI_INT, MPI_SUM, 0, MPI_COMM_WORLD);
    if (rank == 0)
        printf("mpi_modes: all %d checks passed on %d ranks\n", all, size);
    MPI_Finalize();
    return 0;
}
