/* mpi_threads: MPI_THREAD_MULTIPLE on the virtual-time MPI layer (mpicc,
 * run by p2run): a rank's helper threads call MPI while its main thread waits
 * in MPI or computes. Ranks in pairs (rank r and r ^ 1; an even count). Each
 * scenario starts helper threads with pthread_create and joins them; every
 * message is checked byte for byte.
 *   level    MPI_Init_thread(MPI_THREAD_MULTIPLE) grants it; MPI_Query_thread
 *            says so; MPI_Is_thread_main is true in main, false in a helper
 *   recv     the helpers play ping-pong (sizes 1 B .. 70000 B, eager and
 *            rendezvous) on MPI_COMM_WORLD tag 1 while main waits in
 *            MPI_Recv for tag 7, which the peer's helper sends only after
 *            its last round: a wait that only another thread's messages end
 *   barrier  as recv, main in MPI_Barrier; the odd rank's main enters it only
 *            once its helper has played half the rounds (pthread_cond_wait)
 *   tags     main and two helpers each in a blocking MPI_Recv from the peer
 *            on its own (communicator, tag): world tag 3, a dup tag 3 and a
 *            dup tag 4; the peer sends them in the other order, each from
 *            another thread, so each wait is ended by a message that arrives
 *            after another thread's
 *   nbc      main's MPI_Iallreduce, completed by MPI_Test, while a helper
 *            plays ping-pong: the collective's rounds resumed by either
 *            thread's progress
 *   compute  a helper plays ping-pong while main charges computation
 *            (p2_compute) and then joins it
 * Built as programs built with mpicc are (MPI alone: the layer hands the
 * program's pthread calls to the runtime), and as mpi_threads_tca, linked
 * with the runtime's library too (whose pthread calls the program gets).
 * Rank 0 prints each rank's simulated times (MPI_Wtime at each scenario's
 * end, main's and each helper's) and "mpi_threads: all N checks passed on P
 * ranks"; any failure exits 1. With argument "single" it makes a fixed
 * sequence of calls from main alone (no thread) and prints its times; with
 * "single init" the same after MPI_Init instead of MPI_Init_thread: the two
 * outputs must be the same. With "serialized", under MPI_THREAD_SERIALIZED
 * a helper plays ping-pong while main sleeps in pthread_join; with
 * "serialized main", main plays it: the same times. With "lazy", threads made by libc's
 * pthread_create (no lane until their first call, as a library's threads)
 * play ping-pong while main waits in MPI_Recv. With "many", four helpers
 * call MPI at once (one more than a rank has lanes for). With "hang", rank
 * 0's helper waits in MPI_Recv for a message nobody sends (the job must end
 * in the deadlock diagnosis).
 */
#include <dlfcn.h>
#include <mpi.h>
#include <pthread.h>
#include <sched.h>
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <time.h>

static int rank, size, peer, checks;
static MPI_Comm dup1, dup2;
static pthread_mutex_t cnt_lock = PTHREAD_MUTEX_INITIALIZER;

#define CHECK(c)                                                                        \
    do {                                                                                \
        pthread_mutex_lock(&cnt_lock);                                                  \
        checks++;                                                                       \
        pthread_mutex_unlock(&cnt_lock);                                                \
        if (!(c)) {                                                                     \
            fprintf(stderr, "rank %d: FAIL %s (line %d)\n", rank, #c, __LINE__);        \
            exit(1);                                                                    \
        }                                                                               \
    } while (0)

enum { ROUNDS = 24, BIG = 70000 };
static const int sizes[] = {1, 8, 4096, 12288, 12289, 70000};
#define NSIZES ((int)(sizeof sizes / sizeof sizes[0]))

static unsigned char pattern(int src, int seed, int i)
{
    return (unsigned char)(src * 73 + seed * 31 + i * 7 + (i >> 8));
}

static void fill(unsigned char *b, int n, int src, int seed)
{
    for (int i = 0; i < n; i++)
        b[i] = pattern(src, seed, i);
}

static int same(const unsigned char *b, int n, int src, int seed)
{
    for (int i = 0; i < n; i++)
        if (b[i] != pattern(src, seed, i))
            return 0;
    return 1;
}

/* A received message: its status and every byte. */
static void check_recv(const unsigned char *b, const MPI_Status *st, int n, int src, int tag,
                       int seed)
{
    int cnt = -1;
    MPI_Get_count(st, MPI_BYTE, &cnt);
    CHECK(st->MPI_SOURCE == src && st->MPI_TAG == tag && cnt == n);
    CHECK(same(b, n, src, seed));
}

static void *xmalloc(size_t n)
{
    void *p = malloc(n);
    if (!p) {
        fprintf(stderr, "rank %d: out of memory\n", rank);
        exit(1);
    }
    return p;
}

/* ---- Times, gathered at rank 0 ---------------------------------------------------- */

/* A scenario's simulated times on every rank: main's and up to two helpers'. */
static void report(const char *what, double tmain, double th1, double th2)
{
    double mine[3] = {tmain, th1, th2}, *all = rank == 0 ? xmalloc(sizeof(double) * 3 * size) : NULL;
    MPI_Gather(mine, 3, MPI_DOUBLE, all, 3, MPI_DOUBLE, 0, MPI_COMM_WORLD);
    if (rank == 0) {
        for (int r = 0; r < size; r++) {
            printf("%s: rank %d main %.6f us", what, r, all[3 * r] * 1e6);
            for (int h = 1; h < 3; h++)
                if (all[3 * r + h] >= 0)
                    printf(" helper%d %.6f us", h, all[3 * r + h] * 1e6);
            printf("\n");
        }
        free(all);
    }
}

/* ---- Ping-pong helpers --------------------------------------------------------- */

typedef struct pp {
    int rounds, half_signal, tail_tag, in_main;
    MPI_Comm comm;
    double t_start, t_rounds, t_end; /* the rounds' start and end, the thread's end */
    /* the odd rank's main waits for half the rounds (scenario barrier) */
    pthread_mutex_t m;
    pthread_cond_t c;
    int half;
} pp;

static void *pingpong(void *arg)
{
    pp *p = arg;
    int flag = -1;
    MPI_Is_thread_main(&flag);
    CHECK(flag == p->in_main);
    unsigned char *s = xmalloc(BIG), *r = xmalloc(BIG);
    MPI_Status st;
    p->t_start = MPI_Wtime();
    for (int k = 0; k < p->rounds; k++) {
        int n = sizes[k % NSIZES];
        if (rank % 2 == 0) {
            fill(s, n, rank, k);
            MPI_Send(s, n, MPI_BYTE, peer, 1, p->comm);
            memset(r, 0, (size_t)n);
            MPI_Recv(r, BIG, MPI_BYTE, peer, 1, p->comm, &st);
            check_recv(r, &st, n, peer, 1, k + 1000);
        } else {
            memset(r, 0, (size_t)n);
            MPI_Recv(r, BIG, MPI_BYTE, peer, 1, p->comm, &st);
            check_recv(r, &st, n, peer, 1, k);
            fill(s, n, rank, k + 1000);
            MPI_Send(s, n, MPI_BYTE, peer, 1, p->comm);
        }
        if (p->half_signal && k == p->rounds / 2) {
            pthread_mutex_lock(&p->m);
            p->half = 1;
            pthread_cond_signal(&p->c);
            pthread_mutex_unlock(&p->m);
        }
    }
    p->t_rounds = MPI_Wtime();
    if (p->tail_tag) { /* what the peer's main waits for */
        fill(s, 5000, rank, 77);
        MPI_Send(s, 5000, MPI_BYTE, peer, p->tail_tag, MPI_COMM_WORLD);
    }
    p->t_end = MPI_Wtime();
    free(s);
    free(r);
    return NULL;
}

static void start(pthread_t *t, void *(*fn)(void *), void *arg)
{
    if (pthread_create(t, NULL, fn, arg) != 0) {
        fprintf(stderr, "rank %d: pthread_create failed\n", rank);
        exit(1);
    }
}

static void pp_init(pp *p, int rounds, MPI_Comm comm)
{
    memset(p, 0, sizeof *p);
    p->rounds = rounds;
    p->comm = comm;
    pthread_mutex_init(&p->m, NULL);
    pthread_cond_init(&p->c, NULL);
}

/* ---- The scenarios ----------------------------------------------------------- */

static void scenario_level(int provided)
{
    int q = -1, flag = -1;
    CHECK(provided == MPI_THREAD_MULTIPLE);
    MPI_Query_thread(&q);
    CHECK(q == MPI_THREAD_MULTIPLE);
    MPI_Is_thread_main(&flag);
    CHECK(flag == 1);
}

/* The ping-pong's time with no other thread: main plays it itself. */
static double alone_us;

static void scenario_alone(void)
{
    pp p;
    pp_init(&p, ROUNDS, MPI_COMM_WORLD);
    p.in_main = 1;
    MPI_Barrier(MPI_COMM_WORLD);
    pingpong(&p);
    alone_us = (p.t_rounds - p.t_start) * 1e6;
    report("alone", p.t_end, -1, -1);
}

/* The helpers' rounds take the time they take alone, to 2%: the lock
 * between a rank's threads costs no simulated time when free, and a
 * completion the waiting main thread handles for the helper costs the
 * helper what handling it itself would (main handles some that arrive
 * while the helper is busy, and a call the helper starts meanwhile waits
 * for that: up to 1.2% more here). MPI_THREADS_VERBOSE=1 prints both. */
static void same_as_alone(const char *what, const pp *p)
{
    double us = (p->t_rounds - p->t_start) * 1e6;
    int ok = us >= alone_us * 0.98 && us <= alone_us * 1.02;
    if (getenv("MPI_THREADS_VERBOSE") || !ok)
        fprintf(stderr, "rank %d: %s: the helper's rounds took %.3f us, alone %.3f us\n", rank,
                what, us, alone_us);
    CHECK(ok);
}

/* Main waits in MPI_Recv (tag 7) for what the peer's helper sends after its
 * ping-pong, while its own helper plays on tag 1 of the same communicator. */
static void scenario_recv(void)
{
    pp p;
    pp_init(&p, ROUNDS, MPI_COMM_WORLD);
    p.tail_tag = 7;
    pthread_t t;
    start(&t, pingpong, &p);
    unsigned char *b = xmalloc(5000);
    MPI_Status st;
    MPI_Recv(b, 5000, MPI_BYTE, peer, 7, MPI_COMM_WORLD, &st);
    check_recv(b, &st, 5000, peer, 7, 77);
    double tm = MPI_Wtime();
    pthread_join(t, NULL);
    free(b);
    same_as_alone("recv", &p);
    report("recv", tm, p.t_end, -1);
}

/* Main waits in MPI_Barrier; the odd rank's main enters it only once its
 * helper has played half the rounds. */
static void scenario_barrier(void)
{
    pp p;
    pp_init(&p, ROUNDS, dup1);
    p.half_signal = rank % 2;
    pthread_t t;
    start(&t, pingpong, &p);
    if (rank % 2) {
        pthread_mutex_lock(&p.m);
        while (!p.half)
            pthread_cond_wait(&p.c, &p.m);
        pthread_mutex_unlock(&p.m);
    }
    MPI_Barrier(MPI_COMM_WORLD);
    double tm = MPI_Wtime();
    pthread_join(t, NULL);
    same_as_alone("barrier", &p);
    report("barrier", tm, p.t_end, -1);
}

/* Main and two helpers each block in MPI_Recv on a (communicator, tag) of its
 * own; the peer sends the three in the other order, each from a thread other
 * than the one receiving it. */
typedef struct rx {
    MPI_Comm comm;
    int tag, n, seed;
    MPI_Comm send_comm;
    int send_tag, send_n, send_seed;
    double t_end;
} rx;

static void recv_then_send(rx *x)
{
    unsigned char *b = xmalloc((size_t)(x->n > x->send_n ? x->n : x->send_n));
    MPI_Status st;
    memset(b, 0, (size_t)x->n);
    MPI_Recv(b, x->n, MPI_BYTE, peer, x->tag, x->comm, &st);
    check_recv(b, &st, x->n, peer, x->tag, x->seed);
    if (x->send_n) {
        fill(b, x->send_n, rank, x->send_seed);
        MPI_Send(b, x->send_n, MPI_BYTE, peer, x->send_tag, x->send_comm);
    }
    x->t_end = MPI_Wtime();
    free(b);
}

static void *rx_thread(void *arg)
{
    recv_then_send(arg);
    return NULL;
}

static void scenario_tags(void)
{
    /* The chain, for an even rank E and its odd peer O (each a main M and
     * helpers H1, H2):
     *   E.M sends (dup2, tag 4)            -> O.H2 receives it, sends (dup1, tag 3)
     *   -> E.H1 receives it, sends (world, tag 3) -> O.M receives it, sends (dup2, tag 4)
     *   -> E.H2 receives it, sends (dup1, tag 3) -> O.H1 receives it, sends (world, 3)
     *   -> E.M receives it.
     * So E.M waits longest, on the message that ends the chain; each receive
     * was posted before messages for the others arrived. */
    int even = rank % 2 == 0;
    rx m = {MPI_COMM_WORLD, 3, 20000, 300, dup2, 4, 0, 0, 0};
    rx h1 = {dup1, 3, 9000, 301, MPI_COMM_WORLD, 3, 0, 0, 0};
    rx h2 = {dup2, 4, 100, 302, dup1, 3, 9000, 301, 0};
    h1.send_n = 20000;
    h1.send_seed = 300;
    if (!even) { /* O.M receives (world, 3) then sends (dup2, 4) to E.H2 */
        m.send_n = 100;
        m.send_seed = 302;
    }
    pthread_t t1, t2;
    start(&t1, rx_thread, &h1);
    start(&t2, rx_thread, &h2);
    if (even) { /* the chain starts here: E.M sends first, then waits */
        unsigned char *b = xmalloc(100);
        fill(b, 100, rank, 302);
        MPI_Send(b, 100, MPI_BYTE, peer, 4, dup2);
        free(b);
    }
    recv_then_send(&m);
    pthread_join(t1, NULL);
    pthread_join(t2, NULL);
    report("tags", m.t_end, h1.t_end, h2.t_end);
}

/* Main's nonblocking collectives (their rounds run as coroutines that any
 * thread's progress resumes: here mostly the helper's, whose completions
 * come in between) while a helper plays ping-pong; the sums checked. */
static void scenario_nbc(void)
{
    pp p;
    pp_init(&p, ROUNDS, dup1);
    pthread_t t;
    start(&t, pingpong, &p);
    enum { N = 5000 };
    double *in = xmalloc(sizeof(double) * N), *out = xmalloc(sizeof(double) * N);
    for (int k = 0; k < 4; k++) {
        for (int i = 0; i < N; i++)
            in[i] = rank * 1000.0 + i + k;
        MPI_Request r;
        MPI_Iallreduce(in, out, N, MPI_DOUBLE, MPI_SUM, dup2, &r);
        int flag = 0;
        while (!flag)
            MPI_Test(&r, &flag, MPI_STATUS_IGNORE);
        int ok = 1;
        for (int i = 0; i < N; i++)
            ok &= out[i] == 1000.0 * size * (size - 1) / 2 + (double)size * (i + k);
        CHECK(ok);
    }
    double tm = MPI_Wtime();
    pthread_join(t, NULL);
    free(in);
    free(out);
    report("nbc", tm, p.t_end, -1);
}

/* p2_compute from the rank runtime, which p2run loads with the MPI layer:
 * this program links MPI alone, as programs built with mpicc do (built
 * linked with the runtime too, as mpi_threads_tca, it gets it directly). */
static void compute(double seconds)
{
    void (*f)(double) = (void (*)(double))dlsym(RTLD_DEFAULT, "p2_compute");
    if (!f) {
        fprintf(stderr, "rank %d: no p2_compute in the process\n", rank);
        exit(1);
    }
    f(seconds);
}

/* A helper plays ping-pong while main computes, then joins it. */
static void scenario_compute(void)
{
    pp p;
    pp_init(&p, ROUNDS, dup1);
    pthread_t t;
    start(&t, pingpong, &p);
    compute(50e-6 * (1 + rank % 2));
    double tm = MPI_Wtime();
    pthread_join(t, NULL);
    report("compute", tm, p.t_end, -1);
}

/* A thread the runtime gave no lane when it was created (as a library's
 * threads, OpenMP's, are made: here libc's pthread_create, not the one p2run
 * interposes) takes one at its first call. It is created while main is
 * inside the layer, alone until then, in MPI_Reduce_local with an op that
 * waits (host time) until the new thread has its lane and then 0.1 s more:
 * the new thread's first MPI call (MPI_Send to the peer's main) meets main's
 * call still running. Then the two threads of each rank share the layer:
 * the new ones play ping-pong, the mains wait in MPI_Recv. Data only: host
 * timing decides such a thread's clock. (It claims its lane with MPI_Wtime
 * while main runs: a thread without a lane is invisible to the simulator,
 * which could otherwise find every thread of the job waiting and call it a
 * deadlock; README.md.) */
typedef int (*create_fn)(pthread_t *, const pthread_attr_t *, void *(*)(void *), void *);
static int lane_taken;

static void slow_sum(void *in, void *inout, int *n, MPI_Datatype *t)
{
    (void)t;
    while (!__atomic_load_n(&lane_taken, __ATOMIC_ACQUIRE))
        sched_yield();
    struct timespec ts = {0, 100000000};
    nanosleep(&ts, NULL);
    for (int i = 0; i < *n; i++)
        ((int *)inout)[i] += ((int *)in)[i];
}

static void *lazy_thread(void *arg)
{
    pp *p = arg;
    (void)MPI_Wtime(); /* its lane, while main runs */
    __atomic_store_n(&lane_taken, 1, __ATOMIC_RELEASE);
    unsigned char b[100];
    fill(b, 100, rank, 55);
    MPI_Send(b, 100, MPI_BYTE, peer, 10, MPI_COMM_WORLD);
    return pingpong(p);
}

static void scenario_lazy(void)
{
    void *libc = dlopen("libc.so.6", RTLD_LAZY | RTLD_NOLOAD);
    create_fn create = libc ? (create_fn)dlsym(libc, "pthread_create") : NULL;
    if (!create) {
        fprintf(stderr, "rank %d: cannot find libc's pthread_create\n", rank);
        exit(1);
    }
    MPI_Op op;
    MPI_Op_create(slow_sum, 1, &op);
    for (int k = 0; k < 2; k++) {
        pp p;
        pp_init(&p, ROUNDS / 2, MPI_COMM_WORLD);
        p.tail_tag = 8;
        pthread_t t;
        __atomic_store_n(&lane_taken, 0, __ATOMIC_RELEASE);
        if (create(&t, NULL, lazy_thread, &p) != 0) {
            fprintf(stderr, "rank %d: pthread_create failed\n", rank);
            exit(1);
        }
        int in[2] = {1, 2}, io[2] = {10, 20};
        MPI_Reduce_local(in, io, 2, MPI_INT, op);
        CHECK(io[0] == 11 && io[1] == 22);
        unsigned char *b = xmalloc(5000);
        MPI_Status st;
        MPI_Recv(b, 100, MPI_BYTE, peer, 10, MPI_COMM_WORLD, &st);
        check_recv(b, &st, 100, peer, 10, 55);
        MPI_Recv(b, 5000, MPI_BYTE, peer, 8, MPI_COMM_WORLD, &st);
        check_recv(b, &st, 5000, peer, 8, 77);
        pthread_join(t, NULL);
        free(b);
    }
    MPI_Op_free(&op);
}

/* Four helpers in MPI at once: a rank has lanes for three threads besides
 * the first, and the fourth's call must end the job naming why. */
static void *blocked(void *arg)
{
    int x, tag = (int)(intptr_t)arg;
    MPI_Recv(&x, 1, MPI_INT, peer, 100 + tag, MPI_COMM_WORLD, MPI_STATUS_IGNORE);
    return NULL;
}

/* Rank 0's helper waits for a message nobody sends; main joins it. */
static void *never(void *arg)
{
    (void)arg;
    int x;
    MPI_Recv(&x, 1, MPI_INT, 1, 99, MPI_COMM_WORLD, MPI_STATUS_IGNORE);
    return NULL;
}

/* MPI_THREAD_SERIALIZED: a helper plays ping-pong while main sleeps in
 * pthread_join (one thread in MPI at a time, no lock), or, with `in_main`,
 * main plays it itself: the two print the same times. */
static void serialized(int provided, int in_main)
{
    int q = -1;
    CHECK(provided == MPI_THREAD_SERIALIZED);
    MPI_Query_thread(&q);
    CHECK(q == MPI_THREAD_SERIALIZED);
    pp p;
    pp_init(&p, ROUNDS, MPI_COMM_WORLD);
    p.in_main = in_main;
    MPI_Barrier(MPI_COMM_WORLD);
    if (in_main) {
        pingpong(&p);
    } else {
        pthread_t t;
        start(&t, pingpong, &p);
        pthread_join(t, NULL);
    }
    report("serialized", p.t_end, -1, -1);
}

/* One thread only: a fixed sequence of calls, its times. */
static void single(void)
{
    unsigned char *s = xmalloc(BIG), *r = xmalloc(BIG);
    MPI_Status st;
    for (int k = 0; k < ROUNDS; k++) {
        int n = sizes[k % NSIZES];
        fill(s, n, rank, k);
        MPI_Sendrecv(s, n, MPI_BYTE, peer, 5, r, BIG, MPI_BYTE, peer, 5, MPI_COMM_WORLD, &st);
        check_recv(r, &st, n, peer, 5, k);
    }
    double sum = rank, all = 0;
    MPI_Allreduce(&sum, &all, 1, MPI_DOUBLE, MPI_SUM, MPI_COMM_WORLD);
    CHECK(all == (double)size * (size - 1) / 2);
    MPI_Barrier(MPI_COMM_WORLD);
    report("single", MPI_Wtime(), -1, -1);
    free(s);
    free(r);
}

int main(int argc, char **argv)
{
    const char *mode = argc > 1 ? argv[1] : "all";
    int provided = -1;
    if (argc > 2 && !strcmp(argv[2], "init"))
        MPI_Init(&argc, &argv);
    else
        MPI_Init_thread(&argc, &argv,
                        strcmp(mode, "serialized") ? MPI_THREAD_MULTIPLE : MPI_THREAD_SERIALIZED,
                        &provided);
    MPI_Comm_rank(MPI_COMM_WORLD, &rank);
    MPI_Comm_size(MPI_COMM_WORLD, &size);
    if (size % 2) {
        if (rank == 0)
            fprintf(stderr, "mpi_threads: needs an even number of ranks\n");
        MPI_Finalize();
        return 1;
    }
    peer = rank ^ 1;
    if (!strcmp(mode, "single")) {
        single();
    } else if (!strcmp(mode, "serialized")) {
        serialized(provided, argc > 2 && !strcmp(argv[2], "main"));
    } else if (!strcmp(mode, "lazy")) {
        scenario_lazy();
    } else if (!strcmp(mode, "many")) {
        pthread_t t[4];
        for (int k = 0; k < 4; k++)
            start(&t[k], blocked, (void *)(intptr_t)k);
        for (int k = 0; k < 4; k++)
            pthread_join(t[k], NULL);
    } else if (!strcmp(mode, "hang")) {
        pthread_t t;
        if (rank == 0) {
            start(&t, never, NULL);
            pthread_join(t, NULL);
        }
    } else {
        MPI_Comm_dup(MPI_COMM_WORLD, &dup1);
        MPI_Comm_dup(MPI_COMM_WORLD, &dup2);
        scenario_level(provided);
        scenario_alone();
        scenario_recv();
        scenario_barrier();
        scenario_tags();
        scenario_nbc();
        scenario_compute();
        MPI_Comm_free(&dup1);
        MPI_Comm_free(&dup2);
    }
    int total = 0;
    MPI_Reduce(&checks, &total, 1, MPI_INT, MPI_SUM, 0, MPI_COMM_WORLD);
    if (rank == 0)
        printf("mpi_threads: all %d checks passed on %d ranks\n", total, size);
    MPI_Finalize();
    return 0;
}
