/*
 * rk_coll: the collectives of p2coll.h under p2run, every byte checked.
 *
 *   rk_coll data [MAXCOUNT]  every collective x every algorithm (forced with
 *                            P2_COLL_<COLL>), counts 0, 1, 7 and MAXCOUNT
 *                            (default 300) ints, roots 0 and size-1, CPU
 *                            buffers, blocking and persistent (3 runs);
 *                            GPU buffers for one count
 *   rk_coll types            allreduce and reduce: every type x op pair
 *                            (exact: small integer values), refusals
 *   rk_coll persistent       allreduce and allgather requests reused 100 times
 *   rk_coll errors           bad input: the same status on every rank
 *   rk_coll big              1 MB allgather / allreduce / bcast, each algorithm
 *   rk_coll golden           simulated times of a few cases (p2_wtime deltas)
 *   rk_coll subcomm          collectives on the even ranks
 */
#include <math.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "p2coll.h"

static int rank, size, failures;

#define CHECK(call)                                                                      \
    do {                                                                                 \
        tcaresult r_ = (call);                                                           \
        if (r_ != TCA_SUCCESS) {                                                         \
            fprintf(stderr, "rank %d: %s: %s (line %d)\n", rank, #call,                  \
                    tcaGetErrorString(r_), __LINE__);                                    \
            exit(1);                                                                     \
        }                                                                                \
    } while (0)

static void *alloc(size_t bytes, tcaMemoryKind kind)
{
    void *p = NULL;
    CHECK(tcaMalloc(&p, bytes ? bytes : 8, kind));
    memset(p, 0xee, bytes ? bytes : 8);
    return p;
}

static int value(int q, size_t i)
{
    return (q + 1) * 100000 + (int)i;
}

static void fail(const char *what, const char *algo, size_t count, int root, size_t i, int got,
                 int want)
{
    if (failures++ < 10)
        fprintf(stderr, "rank %d: %s/%s count %zu root %d: element %zu is %d, want %d\n", rank,
                what, algo, count, root, i, got, want);
}

/* One collective call (blocking or a persistent run) of kind `c`. */
typedef enum { BARRIER, BCAST, SCATTER, GATHER, REDUCE, ALLGATHER, ALLREDUCE } kind;
static const char *names[] = {"barrier", "bcast", "scatter", "gather", "reduce", "allgather",
                              "allreduce"};
static const char *envs[] = {"P2_COLL_BARRIER", "P2_COLL_BCAST", "P2_COLL_SCATTER",
                             "P2_COLL_GATHER", "P2_COLL_REDUCE", "P2_COLL_ALLGATHER",
                             "P2_COLL_ALLREDUCE"};

static tcaresult init(kind c, int *send, int *recv, size_t n, int root, p2_comm_t comm,
                      p2_request_t *req)
{
    switch (c) {
    case BARRIER: return p2_barrier_init(comm, req);
    case BCAST: return p2_bcast_init(recv, n, TCA_INT, root, comm, req);
    case SCATTER: return p2_scatter_init(send, recv, n, TCA_INT, root, comm, req);
    case GATHER: return p2_gather_init(send, recv, n, TCA_INT, root, comm, req);
    case REDUCE: return p2_reduce_init(send, recv, n, TCA_INT, TCA_OP_SUM, root, comm, req);
    case ALLGATHER: return p2_allgather_init(send, recv, n, TCA_INT, comm, req);
    default: return p2_allreduce_init(send, recv, n, TCA_INT, TCA_OP_SUM, comm, req);
    }
}

static tcaresult call(kind c, int *send, int *recv, size_t n, int root, p2_comm_t comm)
{
    switch (c) {
    case BARRIER: return p2_barrier(comm);
    case BCAST: return p2_bcast(recv, n, TCA_INT, root, comm);
    case SCATTER: return p2_scatter(send, recv, n, TCA_INT, root, comm);
    case GATHER: return p2_gather(send, recv, n, TCA_INT, root, comm);
    case REDUCE: return p2_reduce(send, recv, n, TCA_INT, TCA_OP_SUM, root, comm);
    case ALLGATHER: return p2_allgather(send, recv, n, TCA_INT, comm);
    default: return p2_allreduce(send, recv, n, TCA_INT, TCA_OP_SUM, comm);
    }
}

/* Fill inputs for `c` with salt `s`, and check the outputs. */
static void fill(kind c, int *send, int *recv, size_t n, int root, int me, int np, int s)
{
    if (c == BCAST) {
        for (size_t i = 0; i < n; i++)
            recv[i] = me == root ? value(root, i) + s : 0;
    } else if (c == SCATTER) {
        if (me == root)
            for (size_t i = 0; i < n * (size_t)np; i++)
                send[i] = value((int)(i / (n ? n : 1)), i % (n ? n : 1)) + s;
        memset(recv, 0, n * sizeof(int));
    } else {
        for (size_t i = 0; i < n; i++)
            send[i] = value(me, i) + s;
        memset(recv, 0, n * (size_t)np * sizeof(int));
    }
}

static void check(kind c, const char *algo, const int *recv, size_t n, int root, int me, int np,
                  int s)
{
    if (c == BARRIER)
        return;
    for (size_t i = 0; i < n; i++) {
        int want, got;
        switch (c) {
        case BCAST: want = value(root, i) + s; got = recv[i]; break;
        case SCATTER: want = value(me, i) + s; got = recv[i]; break;
        case REDUCE:
        case ALLREDUCE:
            if (c == REDUCE && me != root)
                return;
            want = 0;
            for (int q = 0; q < np; q++)
                want += value(q, i) + s;
            got = recv[i];
            break;
        default: /* gather, allgather: every block */
            if (c == GATHER && me != root)
                return;
            for (int q = 0; q < np; q++)
                if (recv[(size_t)q * n + i] != value(q, i) + s)
                    fail(names[c], algo, n, root, (size_t)q * n + i, recv[(size_t)q * n + i],
                         value(q, i) + s);
            continue;
        }
        if (got != want)
            fail(names[c], algo, n, root, i, got, want);
    }
}

static const char *algos[][4] = {
    {"dissemination"}, {"binomial"}, {"linear"}, {"linear"}, {"gather"},
    {"recursive_doubling", "bruck", "ring"},
    {"dissemination_pio", "dissemination", "rsag"}};

static int eligible(kind c, const char *a, size_t n, int np, int gpu)
{
    if (c == ALLGATHER && strcmp(a, "recursive_doubling") == 0)
        return (np & (np - 1)) == 0;
    if (c == ALLREDUCE && strcmp(a, "dissemination_pio") == 0)
        return !gpu && n * sizeof(int) <= 240;
    return 1;
}

static void run_case(kind c, const char *a, size_t n, int root, tcaMemoryKind mk, int runs)
{
    int *send = alloc(n * (size_t)size * sizeof(int), mk);
    int *recv = alloc(n * (size_t)size * sizeof(int), mk);
    setenv(envs[c], a, 1);
    if (runs == 0) {
        fill(c, send, recv, n, root, rank, size, 0);
        CHECK(call(c, send, recv, n, root, P2_COMM_WORLD));
        check(c, a, recv, n, root, rank, size, 0);
    } else {
        p2_request_t req;
        CHECK(init(c, send, recv, n, root, P2_COMM_WORLD, &req));
        if (c != BARRIER && n > 0 && strcmp(p2_request_algorithm(req), a) != 0) {
            fprintf(stderr, "rank %d: %s ran %s, not %s\n", rank, names[c],
                    p2_request_algorithm(req), a);
            failures++;
        }
        for (int k = 1; k <= runs; k++) {
            fill(c, send, recv, n, root, rank, size, k);
            CHECK(p2_start(req));
            CHECK(p2_wait(req));
            check(c, a, recv, n, root, rank, size, k);
        }
        CHECK(p2_request_free(&req));
    }
    unsetenv(envs[c]);
    CHECK(tcaFree(send, mk));
    CHECK(tcaFree(recv, mk));
}

static void data(size_t maxcount)
{
    size_t counts[] = {0, 1, 7, maxcount};
    int cases = 0;
    for (int c = BARRIER; c <= ALLREDUCE; c++)
        for (int ai = 0; ai < 4 && algos[c][ai]; ai++)
            for (size_t ci = 0; ci < 4; ci++) {
                size_t n = counts[ci];
                if (!eligible(c, algos[c][ai], n, size, 0))
                    continue;
                int roots[2] = {0, size - 1};
                for (int ri = 0; ri < (c == BCAST || c == SCATTER || c == GATHER || c == REDUCE ? 2 : 1); ri++) {
                    run_case(c, algos[c][ai], n, roots[ri], tcaMemoryCPU, ci % 2 ? 3 : 0);
                    cases++;
                }
                if (ci == 2 && eligible(c, algos[c][ai], n, size, 1)) {
                    run_case(c, algos[c][ai], n, size / 2, tcaMemoryGPU, 2);
                    cases++;
                }
            }
    CHECK(p2_barrier(P2_COMM_WORLD));
    printf("rank %d: data: %d cases, %s\n", rank, cases, failures ? "WRONG" : "all right");
}

/* Every type x op for allreduce (dissemination) and reduce: small integer
 * values, so every result is exact. */
static void types(void)
{
    tcaDataType ts[] = {TCA_CHAR, TCA_SIGNED_CHAR, TCA_UNSIGNED_CHAR, TCA_BYTE, TCA_SHORT,
                        TCA_UNSIGNED_SHORT, TCA_INT, TCA_UNSIGNED, TCA_LONG, TCA_UNSIGNED_LONG,
                        TCA_LONG_LONG, TCA_UNSIGNED_LONG_LONG, TCA_FLOAT, TCA_DOUBLE,
                        TCA_LONG_DOUBLE};
    int pairs = 0, refused = 0;
    const size_t n = 5;
    long double *in = alloc(n * 16, tcaMemoryCPU), *out = alloc(n * 16, tcaMemoryCPU);
    for (size_t t = 0; t < sizeof ts / sizeof ts[0]; t++)
        for (int op = TCA_OP_SUM; op <= TCA_OP_NOOP; op++) {
            size_t es = TCA_TYPE_SIZE(ts[t]);
            int fl = ts[t] == TCA_FLOAT || ts[t] == TCA_DOUBLE || ts[t] == TCA_LONG_DOUBLE;
            int bitwise = op == TCA_OP_BAND || op == TCA_OP_BOR || op == TCA_OP_BXOR;
            /* x[q][i] = small: (q + i) % 3 + (op PROD ? 1 : 0); as the type */
            long double want[5];
            for (size_t i = 0; i < n; i++) {
                long long acc = 0;
                for (int q = 0; q < size; q++) {
                    long long x = (q + (long long)i) % 3 + (op == TCA_OP_PROD && q < 3 ? 1 : 0);
                    if (op == TCA_OP_PROD && q >= 3)
                        x = 1;
                    if (q == 0) { acc = x; continue; }
                    switch (op) {
                    case TCA_OP_SUM: acc += x; break;
                    case TCA_OP_PROD: acc *= x; break;
                    case TCA_OP_BAND: acc &= x; break;
                    case TCA_OP_BOR: acc |= x; break;
                    case TCA_OP_BXOR: acc ^= x; break;
                    case TCA_OP_LAND: acc = acc && x; break;
                    case TCA_OP_LOR: acc = acc || x; break;
                    case TCA_OP_LXOR: acc = !acc != !x; break;
                    case TCA_OP_MAX: acc = x > acc ? x : acc; break;
                    case TCA_OP_MIN: acc = x < acc ? x : acc; break;
                    default: break;
                    }
                }
                if (size == 1 && (op == TCA_OP_LAND || op == TCA_OP_LOR || op == TCA_OP_LXOR))
                    acc = acc != 0; /* one operand: unchanged... */
                want[i] = (long double)acc;
                long long x = (rank + (long long)i) % 3 + (op == TCA_OP_PROD && rank < 3 ? 1 : 0);
                if (op == TCA_OP_PROD && rank >= 3)
                    x = 1;
                unsigned char *slot = (unsigned char *)in + i * es;
                switch (ts[t]) {
                case TCA_FLOAT: { float v = (float)x; memcpy(slot, &v, es); break; }
                case TCA_DOUBLE: { double v = (double)x; memcpy(slot, &v, es); break; }
                case TCA_LONG_DOUBLE: { long double v = (long double)x; memcpy(slot, &v, es); break; }
                default: memcpy(slot, &x, es); break; /* little endian */
                }
            }
            for (int which = 0; which < 2; which++) {
                memset(out, 0, n * 16);
                tcaresult r = which ? p2_reduce(in, out, n, ts[t], (tcaOp)op, 0, P2_COMM_WORLD)
                                    : p2_allreduce(in, out, n, ts[t], (tcaOp)op, P2_COMM_WORLD);
                tcaresult expect = (op == TCA_OP_NOOP || (fl && bitwise)) ? TCA_ERROR_NOT_SUPPORTED
                                                                          : TCA_SUCCESS;
                if (r != expect) {
                    fprintf(stderr, "rank %d: type %#x op %d: %s\n", rank, ts[t], op,
                            tcaGetErrorString(r));
                    failures++;
                    continue;
                }
                if (r != TCA_SUCCESS) {
                    refused++;
                    continue;
                }
                pairs++;
                if (which && rank != 0)
                    continue;
                for (size_t i = 0; i < n && size > 1; i++) {
                    unsigned char *slot = (unsigned char *)out + i * es;
                    long double got;
                    switch (ts[t]) {
                    case TCA_FLOAT: { float v; memcpy(&v, slot, es); got = v; break; }
                    case TCA_DOUBLE: { double v; memcpy(&v, slot, es); got = v; break; }
                    case TCA_LONG_DOUBLE: memcpy(&got, slot, es); break;
                    default: { long long v = 0; memcpy(&v, slot, es); got = (long double)v; break; }
                    }
                    if (got != want[i] && failures++ < 10)
                        fprintf(stderr, "rank %d: type %#x op %d element %zu: %Lg, want %Lg\n",
                                rank, ts[t], op, i, got, want[i]);
                }
            }
        }
    printf("rank %d: types: %d pairs reduced, %d refused, %s\n", rank, pairs, refused,
           failures ? "WRONG" : "all right");
}

static void persistent(void)
{
    const size_t n = 33;
    const char *ar[] = {"dissemination_pio", "dissemination", "rsag"};
    for (int a = 0; a < 3; a++)
        run_case(ALLREDUCE, ar[a], n, 0, tcaMemoryCPU, 100);
    run_case(ALLGATHER, size & (size - 1) ? "bruck" : "recursive_doubling", n, 0, tcaMemoryCPU,
             100);
    run_case(BCAST, "binomial", n, size - 1, tcaMemoryCPU, 100);
    printf("rank %d: persistent: 5 requests x 100 runs, %s\n", rank, failures ? "WRONG" : "all right");
}

/* Bad input: every rank must get the same status. The statuses of all ranks
 * are compared with an allgather. */
static void agree(const char *what, tcaresult r, tcaresult expect)
{
    int *mine = alloc(sizeof(int), tcaMemoryCPU), *all = alloc(sizeof(int) * (size_t)size, tcaMemoryCPU);
    *mine = r;
    CHECK(p2_allgather(mine, all, 1, TCA_INT, P2_COMM_WORLD));
    for (int q = 0; q < size; q++)
        if (all[q] != (int)expect) {
            fprintf(stderr, "rank %d: %s: rank %d got %s, want %s\n", rank, what, q,
                    tcaGetErrorString((tcaresult)all[q]), tcaGetErrorString(expect));
            failures++;
        }
    tcaFree(mine, tcaMemoryCPU);
    tcaFree(all, tcaMemoryCPU);
}

static void errors(void)
{
    int *a = alloc(64 * sizeof(int) * (size_t)size, tcaMemoryCPU);
    int *b = alloc(64 * sizeof(int) * (size_t)size, tcaMemoryCPU);
    static int unregistered[64];
    agree("count differs", p2_allreduce(a, b, rank == 0 ? 4 : 5, TCA_INT, TCA_OP_SUM, P2_COMM_WORLD),
          size > 1 ? TCA_ERROR_INVALID_ARGUMENT : TCA_SUCCESS);
    agree("root out of range", p2_bcast(a, 4, TCA_INT, size, P2_COMM_WORLD),
          TCA_ERROR_INVALID_ARGUMENT);
    agree("root differs", p2_bcast(a, 4, TCA_INT, rank == 0 ? 0 : size - 1, P2_COMM_WORLD),
          size > 1 ? TCA_ERROR_INVALID_ARGUMENT : TCA_SUCCESS);
    agree("negative root", p2_reduce(a, b, 4, TCA_INT, TCA_OP_SUM, -1, P2_COMM_WORLD),
          TCA_ERROR_INVALID_ARGUMENT);
    agree("unregistered on the last rank",
          p2_allgather(rank == size - 1 ? unregistered : a, b, 4, TCA_INT, P2_COMM_WORLD),
          TCA_ERROR_NOT_REGISTERED);
    agree("null buffer on rank 0",
          p2_allreduce(rank == 0 ? NULL : a, b, 4, TCA_INT, TCA_OP_SUM, P2_COMM_WORLD),
          TCA_ERROR_INVALID_ARGUMENT);
    agree("bad type", p2_allreduce(a, b, 4, (tcaDataType)0x777, TCA_OP_SUM, P2_COMM_WORLD),
          TCA_ERROR_INVALID_ARGUMENT);
    agree("bad op", p2_allreduce(a, b, 4, TCA_INT, (tcaOp)99, P2_COMM_WORLD),
          TCA_ERROR_INVALID_ARGUMENT);
    agree("BAND on double", p2_allreduce(a, b, 4, TCA_DOUBLE, TCA_OP_BAND, P2_COMM_WORLD),
          TCA_ERROR_NOT_SUPPORTED);
    agree("type differs", p2_allreduce(a, b, 4, rank ? TCA_INT : TCA_UNSIGNED, TCA_OP_SUM, P2_COMM_WORLD),
          size > 1 ? TCA_ERROR_INVALID_ARGUMENT : TCA_SUCCESS);
    setenv("P2_COLL_ALLGATHER", "no_such_algorithm", 1);
    tcaresult forced = p2_allgather(a, b, 4, TCA_INT, P2_COMM_WORLD);
    unsetenv("P2_COLL_ALLGATHER");
    agree("unknown forced algorithm", forced, TCA_ERROR_NOT_SUPPORTED);
    /* The library still works afterwards. */
    run_case(ALLREDUCE, "dissemination", 9, 0, tcaMemoryCPU, 2);
    printf("rank %d: errors: every status the same on every rank, %s\n", rank,
           failures ? "WRONG" : "all right");
}

static void big(void)
{
    size_t n = (1u << 20) / sizeof(int);
    const char *ag[] = {"recursive_doubling", "bruck", "ring"};
    for (int a = 0; a < 3; a++)
        if (eligible(ALLGATHER, ag[a], n, size, 0))
            run_case(ALLGATHER, ag[a], n, 0, tcaMemoryCPU, 0);
    run_case(ALLREDUCE, "rsag", n, 0, tcaMemoryCPU, 0);
    run_case(ALLREDUCE, "dissemination", n, 0, tcaMemoryCPU, 0);
    run_case(BCAST, "binomial", n, 1 % size, tcaMemoryGPU, 0);
    run_case(REDUCE, "gather", n, 0, tcaMemoryCPU, 0);
    printf("rank %d: big: 1 MB per rank, %s\n", rank, failures ? "WRONG" : "all right");
}

/* Simulated microseconds of one persistent run (after a warm-up run). */
static double timed(kind c, const char *a, size_t bytes)
{
    size_t n = bytes / sizeof(int);
    int *send = alloc(bytes * (size_t)size, tcaMemoryCPU), *recv = alloc(bytes * (size_t)size, tcaMemoryCPU);
    setenv(envs[c], a, 1);
    p2_request_t req;
    CHECK(init(c, send, recv, n, 0, P2_COMM_WORLD, &req));
    CHECK(p2_start(req));
    CHECK(p2_barrier(P2_COMM_WORLD));
    double t0 = p2_wtime();
    CHECK(p2_start(req));
    double t = (p2_wtime() - t0) * 1e6;
    CHECK(p2_request_free(&req));
    unsetenv(envs[c]);
    tcaFree(send, tcaMemoryCPU);
    tcaFree(recv, tcaMemoryCPU);
    return t;
}

static void golden(void)
{
    double t[4] = {timed(BARRIER, "dissemination", 0), timed(ALLREDUCE, "dissemination_pio", 8),
                   timed(ALLGATHER, "recursive_doubling", 1024), timed(BCAST, "binomial", 65536)};
    if (rank == 0)
        printf("rank 0: golden: barrier %.3f us, allreduce 8 B pio %.3f us, allgather 1 KB %.3f us, "
               "bcast 64 KB %.3f us\n", t[0], t[1], t[2], t[3]);
}

static void subcomm(void)
{
    int ranks[P2_COLL_MAX_RANKS], n = 0;
    for (int q = 0; q < size; q += 2)
        ranks[n++] = q;
    p2_comm_t even;
    CHECK(p2_comm_create(P2_COMM_WORLD, ranks, n, &even));
    if (even != P2_COMM_NULL) {
        int me = p2_comm_rank(even), np = p2_comm_size(even);
        int *s = alloc(64 * sizeof(int), tcaMemoryCPU), *r = alloc(64 * sizeof(int) * (size_t)np, tcaMemoryCPU);
        fill(ALLREDUCE, s, r, 10, 0, me, np, 0);
        CHECK(p2_allreduce(s, r, 10, TCA_INT, TCA_OP_SUM, even));
        check(ALLREDUCE, "sub", r, 10, 0, me, np, 0);
        fill(ALLGATHER, s, r, 10, 0, me, np, 0);
        CHECK(p2_allgather(s, r, 10, TCA_INT, even));
        check(ALLGATHER, "sub", r, 10, 0, me, np, 0);
        CHECK(p2_barrier(even));
        CHECK(p2_comm_free(&even));
    }
    CHECK(p2_barrier(P2_COMM_WORLD));
    printf("rank %d: subcomm: %s\n", rank, failures ? "WRONG" : "all right");
}

int main(int argc, char **argv)
{
    CHECK(tcaInit());
    rank = p2_rank();
    size = p2_size();
    const char *what = argc > 1 ? argv[1] : "data";
    if (strcmp(what, "data") == 0)
        data(argc > 2 ? (size_t)atoi(argv[2]) : 300);
    else if (strcmp(what, "types") == 0)
        types();
    else if (strcmp(what, "persistent") == 0)
        persistent();
    else if (strcmp(what, "errors") == 0)
        errors();
    else if (strcmp(what, "big") == 0)
        big();
    else if (strcmp(what, "golden") == 0)
        golden();
    else if (strcmp(what, "subcomm") == 0)
        subcomm();
    CHECK(p2_barrier(P2_COMM_WORLD));
    return failures ? 1 : 0;
}
