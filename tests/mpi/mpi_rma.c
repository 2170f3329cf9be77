/* mpi_rma: MPI-3 one-sided communication on the virtual-time MPI layer
 * (mpicc, run by p2run):
 *   - on four kinds of window (MPI_Win_allocate; MPI_Win_create on malloc'd
 *     memory, MPI_WIN_SEPARATE; MPI_Win_create on MPI_Alloc_mem's memory,
 *     which the HCA reaches, unified; MPI_Win_create_dynamic with MPI_Win_attach) and under two
 *     synchronisations (MPI_Win_fence; MPI_Win_lock_all/unlock_all): every
 *     rank MPI_Puts a 20000-byte block into every rank's window (itself
 *     included), MPI_Gets another rank's block back, MPI_Accumulates
 *     (MPI_SUM) 5000 ints into every window and MPI_MAX on doubles; every
 *     byte and element checked; the windows' attributes
 *   - MPI_Fetch_and_op from every rank on one counter (every old value seen
 *     once), MPI_Compare_and_swap (one winner), MPI_Get_accumulate
 *   - exclusive MPI_Win_lock around a get-increment-put (no update lost)
 *   - a strided target datatype (MPI_Type_vector) for Put, Get and
 *     Accumulate, MPI_MINLOC on MPI_DOUBLE_INT, MPI_Rput/MPI_Rget with
 *     MPI_Win_flush_local, post/start/complete/wait on a ring
 *   - with "latency" (2 ranks): the simulated time of an 8 B MPI_Put and
 *     MPI_Get each followed by MPI_Win_flush, and of MPI_Fetch_and_op and an
 *     8 B MPI_Accumulate + flush, under MPI_Win_lock_all; and of a 1 MiB
 *     Put and Get (checked byte for byte)
 *   - with "range", "epoch" or "dynrange": an erroneous call (a Put beyond
 *     the window, a Put outside any epoch, an Accumulate to an address no
 *     region of a dynamic window holds), which must end the job
 * Rank 0 prints each phase's simulated time and "mpi_rma: all N checks
 * passed on P ranks"; any failure exits 1. */
#include <mpi.h>
#include <stdint.h>
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

enum { BLK = 20000, M = 5000, D = 64 };
enum { ALLOC, CREATE_MALLOC, CREATE_REG, DYNAMIC, NKINDS };
static const char *const kind_name[NKINDS] = {"allocate", "create (malloc)", "create (Alloc_mem)",
                                              "dynamic"};

/* The window's layout: a block per origin, M ints, D doubles. */
#define INTS_OFF ((size_t)size * BLK)
#define DBLS_OFF (INTS_OFF + sizeof(int) * M)
#define WIN_BYTES (DBLS_OFF + sizeof(double) * D)

static uint8_t pat(int owner, int origin, size_t i, int round)
{
    return (uint8_t)(i * 7 + (size_t)owner * 31 + (size_t)origin * 101 + (size_t)round * 13 + (i >> 8));
}

static void init_window(uint8_t *mem)
{
    memset(mem, 0xee, INTS_OFF);
    int *ints = (int *)(mem + INTS_OFF);
    for (int i = 0; i < M; i++)
        ints[i] = 1000 * rank + i;
    double *d = (double *)(mem + DBLS_OFF);
    for (int i = 0; i < D; i++)
        d[i] = -1.0;
}

typedef struct window {
    MPI_Win win;
    uint8_t *mem;        /* this rank's memory as the program sees it */
    MPI_Aint *where;     /* dynamic: every rank's region address */
    int du;
} window;

static window make_window(int kind)
{
    window w = {MPI_WIN_NULL, NULL, NULL, 1};
    MPI_Aint bytes = (MPI_Aint)WIN_BYTES;
    if (kind == ALLOC) {
        w.du = 4; /* displacements in units of 4 bytes */
        MPI_Win_allocate(bytes, w.du, MPI_INFO_NULL, MPI_COMM_WORLD, &w.mem, &w.win);
        init_window(w.mem);
    } else if (kind == CREATE_MALLOC) {
        w.mem = malloc((size_t)bytes);
        init_window(w.mem);
        MPI_Win_create(w.mem, bytes, 1, MPI_INFO_NULL, MPI_COMM_WORLD, &w.win);
    } else if (kind == CREATE_REG) { /* MPI_Alloc_mem's: registered */
        MPI_Alloc_mem(bytes, MPI_INFO_NULL, &w.mem);
        init_window(w.mem);
        MPI_Win_create(w.mem, bytes, 1, MPI_INFO_NULL, MPI_COMM_WORLD, &w.win);
    } else {
        w.mem = malloc((size_t)bytes);
        init_window(w.mem);
        MPI_Win_create_dynamic(MPI_INFO_NULL, MPI_COMM_WORLD, &w.win);
        MPI_Win_attach(w.win, w.mem, bytes);
        w.where = malloc(sizeof(MPI_Aint) * (size_t)size);
        MPI_Aint mine;
        MPI_Get_address(w.mem, &mine);
        MPI_Allgather(&mine, 1, MPI_AINT, w.where, 1, MPI_AINT, MPI_COMM_WORLD);
    }
    /* attributes */
    int *flavor, *model, flag;
    MPI_Win_get_attr(w.win, MPI_WIN_CREATE_FLAVOR, &flavor, &flag);
    CHECK(flag && *flavor == (kind == ALLOC ? MPI_WIN_FLAVOR_ALLOCATE
                              : kind == DYNAMIC ? MPI_WIN_FLAVOR_DYNAMIC : MPI_WIN_FLAVOR_CREATE));
    MPI_Win_get_attr(w.win, MPI_WIN_MODEL, &model, &flag);
    CHECK(flag && *model == (kind == CREATE_MALLOC ? MPI_WIN_SEPARATE : MPI_WIN_UNIFIED));
    if (kind != DYNAMIC) {
        void *base;
        MPI_Aint *sz;
        int *du;
        MPI_Win_get_attr(w.win, MPI_WIN_BASE, &base, &flag);
        CHECK(flag && base == w.mem);
        MPI_Win_get_attr(w.win, MPI_WIN_SIZE, &sz, &flag);
        CHECK(flag && *sz == bytes);
        MPI_Win_get_attr(w.win, MPI_WIN_DISP_UNIT, &du, &flag);
        CHECK(flag && *du == w.du);
    }
    return w;
}

static void free_window(window *w, int kind)
{
    if (kind == DYNAMIC)
        MPI_Win_detach(w->win, w->mem);
    MPI_Win_free(&w->win);
    CHECK(w->win == MPI_WIN_NULL);
    if (kind == CREATE_REG)
        MPI_Free_mem(w->mem);
    if (kind == CREATE_MALLOC || kind == DYNAMIC)
        free(w->mem);
    free(w->where);
}

/* The displacement of byte offset off in target t's window. */
static MPI_Aint disp(const window *w, int t, size_t off)
{
    return w->where ? w->where[t] + (MPI_Aint)off : (MPI_Aint)(off / (size_t)w->du);
}

/* An epoch's end, by the synchronisation under test, after which every
 * rank's operations are complete everywhere and the owners see them. */
static void epoch_open(const window *w, int fence)
{
    if (fence)
        MPI_Win_fence(0, w->win);
    else
        MPI_Win_lock_all(0, w->win);
}

static void epoch_close(const window *w, int fence)
{
    if (fence) {
        MPI_Win_fence(0, w->win);
    } else {
        MPI_Win_unlock_all(w->win);
        MPI_Barrier(MPI_COMM_WORLD);
        MPI_Win_lock_all(0, w->win); /* the owner's lock: RMA's updates reach its memory */
        MPI_Win_unlock_all(w->win);
    }
}

static void put_get_acc(int kind, int fence)
{
    MPI_Barrier(MPI_COMM_WORLD);
    double t0 = MPI_Wtime();
    window w = make_window(kind);
    uint8_t *blk = malloc(BLK), *got = malloc((size_t)size * BLK);
    /* Put: my block into every window */
    epoch_open(&w, fence);
    for (int t = 0; t < size; t++) {
        for (size_t i = 0; i < BLK; i++)
            blk[i] = pat(t, rank, i, fence);
        MPI_Put(blk, BLK, MPI_BYTE, t, disp(&w, t, (size_t)rank * BLK), BLK, MPI_BYTE, w.win);
        if (!fence)
            MPI_Win_flush(t, w.win); /* blk is reused */
    }
    epoch_close(&w, fence);
    int bad = 0;
    for (int o = 0; o < size; o++)
        for (size_t i = 0; i < BLK; i++)
            bad += w.mem[(size_t)o * BLK + i] != pat(rank, o, i, fence);
    CHECK(bad == 0);
    /* Get: from every window, the block the next rank put there */
    int next = (rank + 1) % size;
    epoch_open(&w, fence);
    for (int t = 0; t < size; t++)
        MPI_Get(got + (size_t)t * BLK, BLK, MPI_BYTE, t, disp(&w, t, (size_t)next * BLK), BLK, MPI_BYTE,
                w.win);
    if (!fence)
        MPI_Win_flush_all(w.win);
    epoch_close(&w, fence);
    for (int t = 0; t < size; t++)
        for (size_t i = 0; i < BLK; i++)
            bad += got[(size_t)t * BLK + i] != pat(t, next, i, fence);
    CHECK(bad == 0);
    /* Accumulate: every rank adds to every window's ints; MAX on doubles */
    int *add = malloc(sizeof(int) * M);
    double dv[D];
    for (int i = 0; i < M; i++)
        add[i] = (rank + 1) * (i % 97 + 1);
    for (int i = 0; i < D; i++)
        dv[i] = rank * 0.5 + (i % 5);
    epoch_open(&w, fence);
    for (int t = 0; t < size; t++) {
        MPI_Accumulate(add, M, MPI_INT, t, disp(&w, t, INTS_OFF), M, MPI_INT, MPI_SUM, w.win);
        MPI_Accumulate(dv, D, MPI_DOUBLE, t, disp(&w, t, DBLS_OFF), D, MPI_DOUBLE, MPI_MAX, w.win);
    }
    epoch_close(&w, fence);
    const int *ints = (const int *)(w.mem + INTS_OFF);
    const double *d = (const double *)(w.mem + DBLS_OFF);
    for (int i = 0; i < M; i++)
        bad += ints[i] != 1000 * rank + i + size * (size + 1) / 2 * (i % 97 + 1);
    for (int i = 0; i < D; i++)
        bad += d[i] != (size - 1) * 0.5 + (i % 5);
    CHECK(bad == 0);
    free_window(&w, kind);
    double t = MPI_Wtime() - t0;
    if (rank == 0)
        printf("%-20s %-8s put, get, accumulate: %.3f us\n", kind_name[kind], fence ? "fence" : "lock_all",
               t * 1e6);
    free(blk);
    free(got);
    free(add);
}

/* Fetch_and_op on one counter from every rank, Compare_and_swap, Get_accumulate. */
static void atomics(int kind)
{
    enum { K = 10 };
    window w = make_window(kind);
    long *counter = (long *)(w.mem + DBLS_OFF); /* the first double's bytes, zeroed */
    MPI_Win_lock_all(0, w.win);
    counter[0] = counter[1] = 0; /* the owner's stores, then MPI_Win_sync: public (separate windows) */
    MPI_Win_sync(w.win);
    MPI_Win_unlock_all(w.win);
    MPI_Barrier(MPI_COMM_WORLD);
    MPI_Win_lock_all(0, w.win);
    long one = 1, old[K], all[K * 64];
    for (int k = 0; k < K; k++) {
        MPI_Fetch_and_op(&one, &old[k], MPI_LONG, 0, disp(&w, 0, DBLS_OFF), MPI_SUM, w.win);
        MPI_Win_flush(0, w.win);
    }
    /* Compare_and_swap on the last rank's counter: one winner */
    long mine = rank + 1, zero = 0, was = -1;
    MPI_Compare_and_swap(&mine, &zero, &was, MPI_LONG, size - 1, disp(&w, size - 1, DBLS_OFF + 8), w.win);
    MPI_Win_flush(size - 1, w.win);
    MPI_Win_unlock_all(w.win);
    MPI_Gather(old, K, MPI_LONG, all, K, MPI_LONG, 0, MPI_COMM_WORLD);
    if (rank == 0) {
        int *seen = calloc((size_t)(K * size), sizeof(int)), bad = 0;
        for (int i = 0; i < K * size; i++)
            bad += all[i] < 0 || all[i] >= K * size || seen[all[i]]++;
        CHECK(bad == 0);
        free(seen);
    }
    int won = was == 0, winners;
    MPI_Allreduce(&won, &winners, 1, MPI_INT, MPI_SUM, MPI_COMM_WORLD);
    CHECK(winners == 1);
    MPI_Win_lock_all(0, w.win);
    long final[2], none[2] = {0, 0};
    MPI_Get_accumulate(none, 2, MPI_LONG, final, 2, MPI_LONG, size - 1, disp(&w, size - 1, DBLS_OFF), 2,
                       MPI_LONG, MPI_NO_OP, w.win);
    MPI_Win_flush(size - 1, w.win);
    MPI_Win_unlock_all(w.win);
    if (size - 1 != 0)
        CHECK(final[0] == 0);
    CHECK(final[1] >= 1 && final[1] <= size); /* the winner's rank + 1 */
    if (rank == 0) {
        MPI_Win_lock(MPI_LOCK_SHARED, 0, 0, w.win);
        MPI_Win_unlock(0, w.win);
        CHECK(*counter == K * size);
    }
    MPI_Barrier(MPI_COMM_WORLD);
    free_window(&w, kind);
}

/* Exclusive locks around a read-modify-write of rank 0's counter. */
static void exclusive(void)
{
    enum { R = 5 };
    window w = make_window(ALLOC);
    long *c = (long *)(w.mem + DBLS_OFF);
    *c = 0;
    MPI_Barrier(MPI_COMM_WORLD);
    for (int r = 0; r < R; r++) {
        long v;
        MPI_Win_lock(MPI_LOCK_EXCLUSIVE, 0, 0, w.win);
        MPI_Get(&v, 1, MPI_LONG, 0, disp(&w, 0, DBLS_OFF), 1, MPI_LONG, w.win);
        MPI_Win_flush(0, w.win);
        v++;
        MPI_Put(&v, 1, MPI_LONG, 0, disp(&w, 0, DBLS_OFF), 1, MPI_LONG, w.win);
        MPI_Win_unlock(0, w.win);
    }
    MPI_Barrier(MPI_COMM_WORLD);
    if (rank == 0)
        CHECK(*c == R * size);
    free_window(&w, ALLOC);
}

/* Strided target datatypes, MINLOC pairs, request-based operations, PSCW. */
static void derived_and_more(void)
{
    window w = make_window(ALLOC);
    int right = (rank + 1) % size, left = (rank + size - 1) % size;
    MPI_Datatype every3;
    MPI_Type_vector(100, 1, 3, MPI_INT, &every3);
    MPI_Type_commit(&every3);
    int src[100], back[100];
    for (int i = 0; i < 100; i++)
        src[i] = rank * 1000 + i;
    MPI_Win_lock_all(0, w.win);
    MPI_Put(src, 100, MPI_INT, right, disp(&w, right, INTS_OFF), 1, every3, w.win);
    MPI_Win_flush(right, w.win);
    MPI_Accumulate(src, 100, MPI_INT, right, disp(&w, right, INTS_OFF + 4), 1, every3, MPI_SUM, w.win);
    MPI_Win_unlock_all(w.win);
    MPI_Barrier(MPI_COMM_WORLD);
    int *ints = (int *)(w.mem + INTS_OFF), bad = 0;
    for (int i = 0; i < 100; i++) {
        bad += ints[3 * i] != left * 1000 + i;
        bad += ints[3 * i + 1] != 1000 * rank + 3 * i + 1 + left * 1000 + i;
        bad += ints[3 * i + 2] != 1000 * rank + 3 * i + 2;
    }
    CHECK(bad == 0);
    MPI_Win_lock_all(0, w.win);
    MPI_Get(back, 100, MPI_INT, right, disp(&w, right, INTS_OFF), 1, every3, w.win);
    MPI_Win_flush_local(right, w.win);
    for (int i = 0; i < 100; i++)
        bad += back[i] != rank * 1000 + i;
    CHECK(bad == 0);
    MPI_Win_unlock_all(w.win);
    MPI_Type_free(&every3);
    MPI_Barrier(MPI_COMM_WORLD);
    /* MINLOC on (double, int) pairs at rank 0: the smallest value, its lowest rank */
    struct { double v; int at; } pair[4], *pr = (void *)(w.mem + DBLS_OFF);
    if (rank == 0)
        for (int i = 0; i < 4; i++)
            pr[i].v = 1e9, pr[i].at = -1;
    MPI_Barrier(MPI_COMM_WORLD);
    for (int i = 0; i < 4; i++)
        pair[i].v = (rank + i) % 3, pair[i].at = rank;
    MPI_Win_lock_all(0, w.win);
    MPI_Accumulate(pair, 4, MPI_DOUBLE_INT, 0, disp(&w, 0, DBLS_OFF), 4, MPI_DOUBLE_INT, MPI_MINLOC, w.win);
    MPI_Win_unlock_all(w.win);
    MPI_Barrier(MPI_COMM_WORLD);
    if (rank == 0)
        for (int i = 0; i < 4; i++) { /* the least value; of equal ones, the lowest rank */
            double v = 1e9;
            int at = -1;
            for (int r = 0; r < size; r++)
                if ((r + i) % 3 < v)
                    v = (r + i) % 3, at = r;
            CHECK(pr[i].v == v && pr[i].at == at);
        }
    /* Rput / Rget */
    MPI_Win_lock_all(0, w.win);
    uint8_t out[300], in[300];
    for (int i = 0; i < 300; i++)
        out[i] = (uint8_t)(rank * 3 + i);
    MPI_Request rq[2];
    MPI_Rput(out, 300, MPI_BYTE, right, disp(&w, right, (size_t)rank * BLK), 300, MPI_BYTE, w.win, &rq[0]);
    MPI_Wait(&rq[0], MPI_STATUS_IGNORE);
    MPI_Win_flush(right, w.win);
    MPI_Rget(in, 300, MPI_BYTE, right, disp(&w, right, (size_t)rank * BLK), 300, MPI_BYTE, w.win, &rq[1]);
    MPI_Wait(&rq[1], MPI_STATUS_IGNORE);
    CHECK(memcmp(in, out, 300) == 0);
    MPI_Win_unlock_all(w.win);
    /* Post/start/complete/wait: each rank exposes to its left, accesses its right */
    MPI_Group world, g_left, g_right;
    MPI_Comm_group(MPI_COMM_WORLD, &world);
    MPI_Group_incl(world, 1, &left, &g_left);
    MPI_Group_incl(world, 1, &right, &g_right);
    MPI_Win_post(g_left, 0, w.win);
    MPI_Win_start(g_right, 0, w.win);
    long token = 7000 + rank;
    MPI_Put(&token, 1, MPI_LONG, right, disp(&w, right, DBLS_OFF + 64), 1, MPI_LONG, w.win);
    MPI_Win_complete(w.win);
    MPI_Win_wait(w.win);
    CHECK(*(long *)(w.mem + DBLS_OFF + 64) == 7000 + left);
    MPI_Group_free(&g_left);
    MPI_Group_free(&g_right);
    MPI_Group_free(&world);
    free_window(&w, ALLOC);
}

/* Simulated latencies at 2 ranks: rank 0 times, rank 1 waits in a barrier. */
static void latency(void)
{
    enum { W = 2, N = 10 };
    window w = make_window(ALLOC);
    double t[4] = {0, 0, 0, 0};
    memset(w.mem, 0, 32);
    MPI_Barrier(MPI_COMM_WORLD);
    MPI_Win_lock_all(0, w.win);
    if (rank == 0) {
        long v = 42, r;
        for (int i = 0; i < W + N; i++) {
            double a = MPI_Wtime();
            MPI_Put(&v, 1, MPI_LONG, 1, 0, 1, MPI_LONG, w.win);
            MPI_Win_flush(1, w.win);
            double b = MPI_Wtime();
            MPI_Get(&r, 1, MPI_LONG, 1, 0, 1, MPI_LONG, w.win);
            MPI_Win_flush(1, w.win);
            double c = MPI_Wtime();
            MPI_Fetch_and_op(&v, &r, MPI_LONG, 1, 2, MPI_SUM, w.win);
            MPI_Win_flush(1, w.win);
            double d = MPI_Wtime();
            MPI_Accumulate(&v, 1, MPI_LONG, 1, 4, 1, MPI_LONG, MPI_SUM, w.win);
            MPI_Win_flush(1, w.win);
            double e = MPI_Wtime();
            if (i >= W) {
                t[0] += b - a;
                t[1] += c - b;
                t[2] += d - c;
                t[3] += e - d;
            }
        }
        CHECK(r == 42 * (W + N - 1)); /* the last Fetch_and_op's old value */
    }
    MPI_Win_unlock_all(w.win);
    MPI_Barrier(MPI_COMM_WORLD);
    /* 1 MiB each way: RDMA striped over both rails */
    enum { BIG = 1 << 20 };
    MPI_Win bw;
    uint8_t *bmem, *buf = malloc(BIG);
    MPI_Win_allocate(BIG, 1, MPI_INFO_NULL, MPI_COMM_WORLD, &bmem, &bw);
    for (int i = 0; i < BIG; i++)
        buf[i] = (uint8_t)(i * 5 + 1);
    MPI_Barrier(MPI_COMM_WORLD);
    double big[2] = {0, 0};
    MPI_Win_lock_all(0, bw);
    if (rank == 0) {
        double a = MPI_Wtime();
        MPI_Put(buf, BIG, MPI_BYTE, 1, 0, BIG, MPI_BYTE, bw);
        MPI_Win_flush(1, bw);
        double b = MPI_Wtime();
        memset(buf, 0, BIG);
        MPI_Get(buf, BIG, MPI_BYTE, 1, 0, BIG, MPI_BYTE, bw);
        MPI_Win_flush(1, bw);
        big[0] = b - a;
        big[1] = MPI_Wtime() - b;
        int bad = 0;
        for (int i = 0; i < BIG; i++)
            bad += buf[i] != (uint8_t)(i * 5 + 1);
        CHECK(bad == 0);
    }
    MPI_Win_unlock_all(bw);
    MPI_Barrier(MPI_COMM_WORLD);
    MPI_Win_free(&bw);
    free(buf);
    if (rank == 0) {
        printf("rma 8 B put+flush: %.3f us\n", t[0] / N * 1e6);
        printf("rma 8 B get+flush: %.3f us\n", t[1] / N * 1e6);
        printf("rma 8 B fetch_and_op+flush: %.3f us\n", t[2] / N * 1e6);
        printf("rma 8 B accumulate+flush: %.3f us\n", t[3] / N * 1e6);
        printf("rma 1 MiB put+flush: %.3f us (%.3f GB/s)\n", big[0] * 1e6, BIG / big[0] / 1e9);
        printf("rma 1 MiB get+flush: %.3f us (%.3f GB/s)\n", big[1] * 1e6, BIG / big[1] / 1e9);
    }
    free_window(&w, ALLOC);
}

/* Erroneous calls: each must end the job with a message. */
static void erroneous(const char *what)
{
    window w = make_window(strcmp(what, "dynrange") == 0 ? DYNAMIC : ALLOC);
    long v = 1;
    if (strcmp(what, "epoch") == 0) {
        MPI_Put(&v, 1, MPI_LONG, 0, 0, 1, MPI_LONG, w.win);
    } else if (strcmp(what, "range") == 0) {
        MPI_Win_lock_all(0, w.win);
        MPI_Put(&v, 1, MPI_LONG, size - 1, (MPI_Aint)(WIN_BYTES / 4), 1, MPI_LONG, w.win);
    } else {
        MPI_Win_lock_all(0, w.win);
        MPI_Accumulate(&v, 1, MPI_LONG, (rank + 1) % size, w.where[(rank + 1) % size] + (MPI_Aint)WIN_BYTES, 1, MPI_LONG,
                       MPI_SUM, w.win);
        MPI_Win_flush_all(w.win);
    }
    fprintf(stderr, "rank %d: the erroneous %s call returned\n", rank, what);
    exit(2);
}

int main(int argc, char **argv)
{
    MPI_Init(&argc, &argv);
    MPI_Comm_rank(MPI_COMM_WORLD, &rank);
    MPI_Comm_size(MPI_COMM_WORLD, &size);
    if (argc > 1 && strcmp(argv[1], "latency") == 0) {
        CHECK(size == 2);
        latency();
    } else if (argc > 1) {
        erroneous(argv[1]);
    } else {
        for (int kind = 0; kind < NKINDS; kind++)
            for (int fence = 1; fence >= 0; fence--)
                put_get_acc(kind, fence);
        for (int kind = 0; kind < NKINDS; kind++)
            atomics(kind);
        exclusive();
        derived_and_more();
    }
    int total;
    MPI_Reduce(&checks, &total, 1, MPI_INT, MPI_SUM, 0, MPI_COMM_WORLD);
    if (rank == 0)
        printf("mpi_rma: all %d checks passed on %d ranks\n", total, size);
    MPI_Finalize();
    return 0;
}
