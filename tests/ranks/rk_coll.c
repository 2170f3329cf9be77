/*
 * rk_coll: the collectives of p2coll.h under p2run, every byte checked.
 *
 *   rk_coll data [MAXCOUNT]  every collective x every algorithm (forced with
 *                            P2_COLL_<COLL>), counts 0, 1, 7 and MAXCOUNT
 *                            (default 300) ints, roots 0 and size-1, CPU
 *                            buffers, blocking and persistent (3 runs);
 *                            GPU buffers for one count
 *   rk_coll types            allreduce and reduce, every algorithm: every
 *                            type x op pair (exact: small integer values),
 *                            refusals
 *   rk_coll floats           allreduce and reduce, every algorithm: random
 *                            float/double/long double data, within the
 *                            rounding bound of the reduction order
 *   rk_coll rules FILE       the choice: cost model defaults, a rules file,
 *                            the environment variable above the rules
 *   rk_coll badrules FILE    a bad rules file: every rank refused alike
 *   rk_coll inplace          P2_IN_PLACE / sendbuf == recvbuf, every algorithm
 *   rk_coll d2d              p2_memcpy_d2d: bytes, refusals, golden times
 *   rk_coll mixed            GPU buffers on rank 0, CPU on the others: the
 *                            ranks agree on an algorithm
 *   rk_coll persistent       allreduce and allgather requests reused 100 times
 *   rk_coll errors           bad input: the same status on every rank
 *                            (buffers smaller than the call, arguments that
 *                            differ, freed requests, unknown algorithms)
 *   rk_coll big              1 MB allgather / allreduce / bcast, each algorithm
 *   rk_coll golden           simulated times of a few cases (p2_wtime deltas)
 *   rk_coll subcomm          collectives on the even ranks
 */
#include <float.h>
#include <math.h>
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "p2_check.h"
#include "p2coll.h"

static int rank, size, failures;

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
    {"dissemination"}, {"binomial"}, {"linear"}, {"linear"}, {"gather", "gather_gpu"},
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
            static const struct { int reduce; const char *env, *algo; } runs[] = {
                {0, "P2_COLL_ALLREDUCE", "dissemination_pio"},
                {0, "P2_COLL_ALLREDUCE", "dissemination"},
                {0, "P2_COLL_ALLREDUCE", "rsag"},
                {1, "P2_COLL_REDUCE", "gather"},
                {1, "P2_COLL_REDUCE", "gather_gpu"}};
            for (size_t ri = 0; ri < sizeof runs / sizeof runs[0]; ri++) {
                int which = runs[ri].reduce;
                memset(out, 0, n * 16);
                setenv(runs[ri].env, runs[ri].algo, 1);
                int root = (int)(ri + t) % size;
                tcaresult r = which ? p2_reduce(in, out, n, ts[t], (tcaOp)op, root, P2_COMM_WORLD)
                                    : p2_allreduce(in, out, n, ts[t], (tcaOp)op, P2_COMM_WORLD);
                unsetenv(runs[ri].env);
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
                if (which && rank != root)
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
                        fprintf(stderr, "rank %d: %s type %#x op %d element %zu: %Lg, want %Lg\n",
                                rank, runs[ri].algo, ts[t], op, i, got, want[i]);
                }
            }
        }
    printf("rank %d: types: %d pairs reduced, %d refused, %s\n", rank, pairs, refused,
           failures ? "WRONG" : "all right");
}

/* Rank q's element i: a pseudo-random value in (-1, 1), the same on every
 * rank (so each can compute the exact reduction). */
static long double frand(int q, size_t i)
{
    uint64_t x = ((uint64_t)q << 32 | i) * 0x9e3779b97f4a7c15ull + 0x632be59bd9b4e019ull;
    x ^= x >> 29;
    x *= 0xbf58476d1ce4e5b9ull;
    x ^= x >> 32;
    return (long double)(x >> 11) / (long double)(1ull << 53) * 2.0L - 1.0L;
}

/* Floating allreduce and reduce, every algorithm, sum, max and min: the
 * result within the bound of any summation order, (p - 1) u sum |x_q| (u the
 * type's unit roundoff, plus the inputs' own rounding to the type), and max
 * and min exact. Counts 1 and 125 (rsag's uneven chunks). */
static void floats(void)
{
    tcaDataType ts[] = {TCA_FLOAT, TCA_DOUBLE, TCA_LONG_DOUBLE};
    long double eps[] = {FLT_EPSILON / 2, DBL_EPSILON / 2, LDBL_EPSILON / 2};
    tcaOp ops[] = {TCA_OP_SUM, TCA_OP_MAX, TCA_OP_MIN};
    static const struct { int reduce; const char *env, *algo; } runs[] = {
        {0, "P2_COLL_ALLREDUCE", "dissemination_pio"}, {0, "P2_COLL_ALLREDUCE", "dissemination"},
        {0, "P2_COLL_ALLREDUCE", "rsag"}, {1, "P2_COLL_REDUCE", "gather"},
        {1, "P2_COLL_REDUCE", "gather_gpu"}};
    /* 125: odd (the rounding order of non-power-of-two windows). */
    size_t counts[] = {1, 125};
    int done = 0;
    for (size_t t = 0; t < 3; t++)
        for (size_t ci = 0; ci < 2; ci++) {
            size_t n = counts[ci], es = TCA_TYPE_SIZE(ts[t]);
            for (size_t oi = 0; oi < 3; oi++)
                for (size_t ri = 0; ri < sizeof runs / sizeof runs[0]; ri++) {
                    if (!runs[ri].reduce && strcmp(runs[ri].algo, "dissemination_pio") == 0 &&
                        n * es > 240)
                        continue;
                    tcaMemoryKind mk = ri % 2 ? tcaMemoryGPU : tcaMemoryCPU;
                    unsigned char *in = alloc(n * es, mk), *out = alloc(n * es, mk);
                    for (size_t i = 0; i < n; i++) {
                        long double v = frand(rank, i);
                        if (ts[t] == TCA_FLOAT) { float f = (float)v; memcpy(in + i * es, &f, es); }
                        else if (ts[t] == TCA_DOUBLE) { double d = (double)v; memcpy(in + i * es, &d, es); }
                        else memcpy(in + i * es, &v, es);
                    }
                    int root = (int)(oi + ri) % size;
                    setenv(runs[ri].env, runs[ri].algo, 1);
                    CHECK(runs[ri].reduce
                              ? p2_reduce(in, out, n, ts[t], ops[oi], root, P2_COMM_WORLD)
                              : p2_allreduce(in, out, n, ts[t], ops[oi], P2_COMM_WORLD));
                    unsetenv(runs[ri].env);
                    done++;
                    for (size_t i = 0; i < n && (!runs[ri].reduce || rank == root); i++) {
                        long double exact = 0, mag = 0, got;
                        for (int q = 0; q < size; q++) {
                            long double x = frand(q, i);
                            if (ts[t] == TCA_FLOAT) x = (float)x;
                            else if (ts[t] == TCA_DOUBLE) x = (double)x;
                            if (q == 0 || ops[oi] == TCA_OP_SUM)
                                exact = q == 0 ? x : exact + x;
                            else if (ops[oi] == TCA_OP_MAX)
                                exact = x > exact ? x : exact;
                            else
                                exact = x < exact ? x : exact;
                            mag += fabsl(x);
                        }
                        if (ts[t] == TCA_FLOAT) { float f; memcpy(&f, out + i * es, es); got = f; }
                        else if (ts[t] == TCA_DOUBLE) { double d; memcpy(&d, out + i * es, es); got = d; }
                        else memcpy(&got, out + i * es, es);
                        long double tol = ops[oi] == TCA_OP_SUM ? (size + 1) * eps[t] * mag : 0;
                        if (fabsl(got - exact) > tol && failures++ < 10)
                            fprintf(stderr, "rank %d: floats %s type %#x op %d n %zu element %zu: "
                                    "%.21Lg, want %.21Lg within %Lg\n", rank, runs[ri].algo, ts[t],
                                    ops[oi], n, i, got, exact, tol);
                    }
                    CHECK(tcaFree(in, mk));
                    CHECK(tcaFree(out, mk));
                }
        }
    printf("rank %d: floats: %d calls, %s\n", rank, done, failures ? "WRONG" : "all right");
}

/* The algorithm a persistent request of `c` on n ints picks. */
static const char *chosen(kind c, size_t n)
{
    static char name[32];
    int *send = alloc(n * (size_t)size * sizeof(int), tcaMemoryCPU);
    int *recv = alloc(n * (size_t)size * sizeof(int), tcaMemoryCPU);
    p2_request_t req;
    CHECK(init(c, send, recv, n, 0, P2_COMM_WORLD, &req));
    snprintf(name, sizeof name, "%s", p2_request_algorithm(req));
    CHECK(p2_request_free(&req));
    CHECK(tcaFree(send, tcaMemoryCPU));
    CHECK(tcaFree(recv, tcaMemoryCPU));
    return name;
}

/* The cost model's choices (no override) for 8 B, 1 KB and 1 MB per rank. */
static void choices(void)
{
    size_t sizes[] = {2, 256, 262144};
    if (rank == 0) {
        printf("rank 0: cost model:");
        for (int c = BCAST; c <= ALLREDUCE; c++)
            for (int i = 0; i < 3; i++)
                printf(" %s/%zuB=%s", names[c], sizes[i] * sizeof(int), chosen((kind)c, sizes[i]));
        printf("\n");
    } else {
        for (int c = BCAST; c <= ALLREDUCE; c++)
            for (int i = 0; i < 3; i++)
                chosen((kind)c, sizes[i]);
    }
}

/* Selection overrides: a rules file (tests/ranks/coll_rules.txt, read at the
 * first collective) and the variable's precedence over it. */
static void rules(const char *file)
{
    setenv("P2_COLL_RULES", file, 1);
    struct { kind c; size_t n; const char *want; } cases[] = {
        {ALLREDUCE, 2, "dissemination"},  /* rule 1: not the cost model's PIO */
        {ALLREDUCE, 262144, "dissemination"},
        {ALLGATHER, 2, "ring"},           /* rule 2 */
        {ALLGATHER, 1024, "bruck"},       /* rule 3, after rule 2's range */
        {REDUCE, 64, "gather_gpu"},       /* rule 4 */
    };
    for (size_t i = 0; i < sizeof cases / sizeof cases[0]; i++) {
        const char *got = chosen(cases[i].c, cases[i].n);
        if (strcmp(got, cases[i].want) != 0 && failures++ < 10)
            fprintf(stderr, "rank %d: rules: %s of %zu ints ran %s, want %s\n", rank,
                    names[cases[i].c], cases[i].n, got, cases[i].want);
    }
    setenv("P2_COLL_ALLGATHER", "bruck", 1);
    const char *got = chosen(ALLGATHER, 2);
    unsetenv("P2_COLL_ALLGATHER");
    if (strcmp(got, "bruck") != 0 && failures++ < 10)
        fprintf(stderr, "rank %d: the variable did not beat the rules: %s\n", rank, got);
    /* The rules still run data right. */
    run_case(ALLGATHER, "ring", 7, 0, tcaMemoryCPU, 2);
    printf("rank %d: rules: %s\n", rank, failures ? "WRONG" : "all right");
}

/* A bad rules file: every collective refuses, on every rank alike (compared
 * through the exchange, which does not select algorithms). */
static int badrules(const char *file)
{
    setenv("P2_COLL_RULES", file, 1);
    int *a = alloc(64, tcaMemoryCPU), *b = alloc(64 * (size_t)size, tcaMemoryCPU);
    tcaresult r = p2_allreduce(a, b, 4, TCA_INT, TCA_OP_SUM, P2_COMM_WORLD);
    tcaresult r2 = p2_barrier(P2_COMM_WORLD);
    int mine[2] = {(int)r, (int)r2}, all[2 * P2_COLL_MAX_RANKS];
    CHECK(p2_exchange(mine, all, sizeof mine));
    for (int q = 0; q < size; q++)
        if (all[2 * q] != TCA_ERROR_INVALID_ARGUMENT || all[2 * q + 1] != TCA_ERROR_INVALID_ARGUMENT) {
            fprintf(stderr, "rank %d: bad rules: rank %d got %s / %s\n", rank, q,
                    tcaGetErrorString((tcaresult)all[2 * q]),
                    tcaGetErrorString((tcaresult)all[2 * q + 1]));
            failures++;
        }
    printf("rank %d: badrules: %s\n", rank, failures ? "WRONG" : "refused on every rank");
    return failures ? 1 : 0;
}

/* Buffers of different kinds on different ranks: rank 0 GPU, the others CPU.
 * The ranks' own choices differ (PIO needs host buffers; GPU costs differ),
 * so they agree on one that runs everywhere; results exact. */
static void mixed(void)
{
    tcaMemoryKind mk = rank == 0 ? tcaMemoryGPU : tcaMemoryCPU;
    size_t counts[] = {2, 300, 20000};
    for (int ci = 0; ci < 3; ci++) {
        size_t n = counts[ci];
        int *send = alloc(n * (size_t)size * sizeof(int), mk);
        int *recv = alloc(n * (size_t)size * sizeof(int), mk);
        kind cs[] = {ALLREDUCE, REDUCE, ALLGATHER, BCAST};
        for (int k = 0; k < 4; k++) {
            p2_request_t req;
            CHECK(init(cs[k], send, recv, n, 0, P2_COMM_WORLD, &req));
            for (int it = 1; it <= 3; it++) {
                fill(cs[k], send, recv, n, 0, rank, size, it);
                CHECK(p2_start(req));
                CHECK(p2_wait(req));
                check(cs[k], p2_request_algorithm(req), recv, n, 0, rank, size, it);
            }
            if (rank == 0 && ci == 0 && k == 0)
                printf("rank 0: mixed: allreduce 8 B agreed on %s\n", p2_request_algorithm(req));
            CHECK(p2_request_free(&req));
        }
        CHECK(tcaFree(send, mk));
        CHECK(tcaFree(recv, mk));
    }
    printf("rank %d: mixed: %s\n", rank, failures ? "WRONG" : "all right");
}

/* p2_memcpy_d2d: the board copies within this node (GPU to GPU, and host
 * to and from GPU), every byte checked; its refusals; the simulated time of
 * an 8-byte and a 4 KiB GPU-to-GPU copy. */
static void d2d(void)
{
    size_t sizes[] = {1, 8, 4097, 1u << 20};
    const size_t max = 1u << 20;
    unsigned char *g1 = alloc(max + 64, tcaMemoryGPU), *g2 = alloc(max + 64, tcaMemoryGPU);
    unsigned char *h = alloc(max + 64, tcaMemoryCPU);
    struct { unsigned char *dst, *src; const char *what; } pairs[] = {
        {g2, g1, "gpu->gpu"}, {h, g1, "gpu->host"}, {g2, h, "host->gpu"}};
    for (size_t pi = 0; pi < 3; pi++)
        for (size_t si = 0; si < 4; si++) {
            size_t n = sizes[si], off = 3; /* unaligned on both sides */
            for (size_t i = 0; i < n; i++)
                pairs[pi].src[off + i] = (unsigned char)(i * 7 + si + pi);
            memset(pairs[pi].dst, 0, n + 2 * off);
            CHECK(p2_memcpy_d2d(pairs[pi].dst + off, pairs[pi].src + off, n));
            size_t bad = 0;
            for (size_t i = 0; i < n; i++)
                bad += pairs[pi].dst[off + i] != (unsigned char)(i * 7 + si + pi);
            bad += pairs[pi].dst[off - 1] != 0 || pairs[pi].dst[off + n] != 0;
            if (bad && failures++ < 10)
                fprintf(stderr, "rank %d: d2d %s %zu B: %zu wrong bytes\n", rank, pairs[pi].what, n, bad);
        }
    static unsigned char unregistered[64];
    tcaresult e[4] = {p2_memcpy_d2d(NULL, g1, 8), p2_memcpy_d2d(g2, unregistered, 8),
                      p2_memcpy_d2d(g2, g1, 0), p2_memcpy_d2d(g2, g1, (size_t)1 << 40)};
    tcaresult want[4] = {TCA_ERROR_INVALID_ARGUMENT, TCA_ERROR_NOT_REGISTERED, TCA_SUCCESS,
                         TCA_ERROR_NOT_REGISTERED};
    for (int i = 0; i < 4; i++)
        if (e[i] != want[i] && failures++ < 10)
            fprintf(stderr, "rank %d: d2d refusal %d: %s, want %s\n", rank, i, tcaGetErrorString(e[i]),
                    tcaGetErrorString(want[i]));
    double t0 = p2_wtime();
    CHECK(p2_memcpy_d2d(g2, g1, 8));
    double t8 = (p2_wtime() - t0) * 1e6;
    t0 = p2_wtime();
    CHECK(p2_memcpy_d2d(g2, g1, 4096));
    double t4k = (p2_wtime() - t0) * 1e6;
    if (rank == 0)
        printf("rank 0: d2d: gpu->gpu 8 B %.3f us, 4 KB %.3f us\n", t8, t4k);
    printf("rank %d: d2d: %s\n", rank, failures ? "WRONG" : "all right");
}

/* In place (P2_IN_PLACE, or sendbuf == recvbuf for the reductions), every
 * algorithm, counts 1, 7 and 300, roots 0 and p - 1, CPU and GPU buffers. */
static void inplace(void)
{
    size_t counts[] = {1, 7, 300};
    int cases = 0;
    for (int mi = 0; mi < 2; mi++)
        for (size_t ci = 0; ci < 3; ci++)
            for (int ri = 0; ri < 2; ri++) {
                tcaMemoryKind mk = mi ? tcaMemoryGPU : tcaMemoryCPU;
                size_t n = counts[ci];
                int root = ri ? size - 1 : 0;
                int *buf = alloc(n * (size_t)size * sizeof(int), mk);
                int *other = alloc(n * (size_t)size * sizeof(int), mk);
                for (int c = SCATTER; c <= ALLREDUCE; c++)
                    for (int ai = 0; ai < 4 && algos[c][ai]; ai++) {
                        const char *a = algos[c][ai];
                        if (!eligible((kind)c, a, n, size, mi))
                            continue;
                        setenv(envs[c], a, 1);
                        tcaresult r = TCA_SUCCESS;
                        int me_root = rank == root;
                        switch (c) {
                        case SCATTER: /* the root's block stays in sendbuf */
                            fill(SCATTER, buf, other, n, root, rank, size, 5);
                            r = p2_scatter(buf, me_root ? (void *)P2_IN_PLACE : other, n, TCA_INT,
                                           root, P2_COMM_WORLD);
                            if (me_root)
                                memcpy(other, buf + (size_t)root * n, n * sizeof(int));
                            check(SCATTER, a, other, n, root, rank, size, 5);
                            break;
                        case GATHER:
                        case ALLGATHER: /* own block already at its place */
                            fill((kind)c, other, buf, n, root, rank, size, 6);
                            if (c == ALLGATHER || me_root)
                                memcpy(buf + (size_t)rank * n, other, n * sizeof(int));
                            r = c == GATHER
                                    ? p2_gather(me_root ? P2_IN_PLACE : other, buf, n, TCA_INT, root,
                                                P2_COMM_WORLD)
                                    : p2_allgather(P2_IN_PLACE, buf, n, TCA_INT, P2_COMM_WORLD);
                            check((kind)c, a, buf, n, root, rank, size, 6);
                            break;
                        default: /* reduce, allreduce: data in recvbuf */
                            fill((kind)c, buf, other, n, root, rank, size, 7);
                            r = c == REDUCE
                                    ? p2_reduce(me_root && ai == 0 ? P2_IN_PLACE : buf, buf, n,
                                                TCA_INT, TCA_OP_SUM, root, P2_COMM_WORLD)
                                    : p2_allreduce(ai == 1 ? buf : P2_IN_PLACE, buf, n, TCA_INT,
                                                   TCA_OP_SUM, P2_COMM_WORLD);
                            check((kind)c, a, buf, n, root, rank, size, 7);
                            break;
                        }
                        unsetenv(envs[c]);
                        if (r != TCA_SUCCESS && failures++ < 10)
                            fprintf(stderr, "rank %d: in place %s/%s: %s\n", rank, names[c], a,
                                    tcaGetErrorString(r));
                        cases++;
                    }
                CHECK(tcaFree(buf, mk));
                CHECK(tcaFree(other, mk));
            }
    printf("rank %d: inplace: %d cases, %s\n", rank, cases, failures ? "WRONG" : "all right");
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
    /* Blocking calls that reuse their plans exchange nothing: the ready
     * tokens carry a hash of the arguments. Two ranks: each waits for the
     * other's token, so both see the difference. */
    if (size == 2) {
        CHECK(p2_allgather(a, b, 4, TCA_INT, P2_COMM_WORLD));
        CHECK(p2_allgather(a, b, 8, TCA_INT, P2_COMM_WORLD));
        agree("reused plans with counts that differ",
              p2_allgather(a, b, rank == 0 ? 4 : 8, TCA_INT, P2_COMM_WORLD),
              TCA_ERROR_INVALID_ARGUMENT);
        CHECK(p2_allgather(a, b, 4, TCA_INT, P2_COMM_WORLD));
    }
    /* Buffers whose allocation ends before what the call moves: refused, and
     * the next allocation untouched. */
    const size_t n = 16; /* ints: one 64-byte allocation */
    int *small = alloc(n * sizeof(int), tcaMemoryCPU);
    uint8_t *next = alloc(4096, tcaMemoryCPU);
    const tcaresult gathers = size > 1 ? TCA_ERROR_OUT_OF_RANGE : TCA_SUCCESS;
    agree("allgather into room for one block", p2_allgather(a, small, n, TCA_INT, P2_COMM_WORLD),
          gathers);
    agree("allgather in place in room for one block",
          p2_allgather(P2_IN_PLACE, small, n, TCA_INT, P2_COMM_WORLD), gathers);
    agree("gather into room for one block", p2_gather(a, small, n, TCA_INT, 0, P2_COMM_WORLD),
          gathers);
    agree("scatter from room for one block", p2_scatter(small, b, n, TCA_INT, 0, P2_COMM_WORLD),
          gathers);
    agree("allreduce of twice the send buffer on the last rank",
          p2_allreduce(rank == size - 1 ? small : a, b, 2 * n, TCA_INT, TCA_OP_SUM, P2_COMM_WORLD),
          TCA_ERROR_OUT_OF_RANGE);
    agree("bcast from the middle of an allocation",
          p2_bcast(small + n / 2, n, TCA_INT, 0, P2_COMM_WORLD), TCA_ERROR_OUT_OF_RANGE);
    p2_request_t big_req = NULL;
    agree("allgather_init into room for one block",
          p2_allgather_init(a, small, n, TCA_INT, P2_COMM_WORLD, &big_req), gathers);
    if (big_req)
        CHECK(p2_request_free(&big_req));
    for (size_t i = 0; i < 4096; i++)
        if (next[i] != 0xee) {
            fprintf(stderr, "rank %d: the allocation after a refused buffer changed at byte %zu\n",
                    rank, i);
            failures++;
            break;
        }
    /* A freed request, through a copy of its handle; a new request is
     * another. */
    p2_request_t req = NULL, copy, fresh = NULL;
    CHECK(p2_allreduce_init(a, b, 4, TCA_INT, TCA_OP_SUM, P2_COMM_WORLD, &req));
    copy = req;
    CHECK(p2_request_free(&req));
    if (req) {
        fprintf(stderr, "rank %d: p2_request_free left the handle set\n", rank);
        failures++;
    }
    CHECK(p2_allreduce_init(a, b, 4, TCA_INT, TCA_OP_SUM, P2_COMM_WORLD, &fresh));
    agree("start of a freed request", p2_start(copy), TCA_ERROR_INVALID_HANDLE);
    agree("wait on a freed request", p2_wait(copy), TCA_ERROR_INVALID_HANDLE);
    agree("free of a freed request", p2_request_free(&copy), TCA_ERROR_INVALID_HANDLE);
    if (*p2_request_algorithm(copy)) {
        fprintf(stderr, "rank %d: a freed request still names an algorithm\n", rank);
        failures++;
    }
    CHECK(p2_start(fresh));
    CHECK(p2_wait(fresh));
    CHECK(p2_request_free(&fresh));
    tcaFree(next, tcaMemoryCPU);
    tcaFree(small, tcaMemoryCPU);
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
    run_case(REDUCE, "gather_gpu", n, size - 1, tcaMemoryGPU, 0);
    run_case(REDUCE, "gather", n, size / 2, tcaMemoryGPU, 0);
    run_case(SCATTER, "linear", n, size - 1, tcaMemoryCPU, 0);
    run_case(GATHER, "linear", n, size / 2, tcaMemoryGPU, 0);
    printf("rank %d: big: 1 MB per rank, %s\n", rank, failures ? "WRONG" : "all right");
}

/* Simulated microseconds of one persistent run (after a warm-up run). */
static double timed_on(kind c, const char *a, size_t bytes, tcaMemoryKind mk)
{
    size_t n = bytes / sizeof(int);
    int *send = alloc(bytes * (size_t)size, mk), *recv = alloc(bytes * (size_t)size, mk);
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
    tcaFree(send, mk);
    tcaFree(recv, mk);
    return t;
}

static double timed(kind c, const char *a, size_t bytes)
{
    return timed_on(c, a, bytes, tcaMemoryCPU);
}

static void golden(void)
{
    double t[4] = {timed(BARRIER, "dissemination", 0), timed(ALLREDUCE, "dissemination_pio", 8),
                   timed(ALLGATHER, "recursive_doubling", 1024), timed(BCAST, "binomial", 65536)};
    if (rank == 0)
        printf("rank 0: golden: barrier %.3f us, allreduce 8 B pio %.3f us, allgather 1 KB %.3f us, "
               "bcast 64 KB %.3f us\n", t[0], t[1], t[2], t[3]);
    choices();
    /* GPU buffers: the reduce's two paths (the kernel's time is gpu_kernel_ns
     * + bytes / gpu_reduce_gbps), an allreduce and an allgather. */
    double g[4] = {timed_on(REDUCE, "gather_gpu", 65536, tcaMemoryGPU),
                   timed_on(REDUCE, "gather", 65536, tcaMemoryGPU),
                   timed_on(ALLREDUCE, "rsag", 65536, tcaMemoryGPU),
                   timed_on(ALLGATHER, "ring", 1024, tcaMemoryGPU)};
    if (rank == 0)
        printf("rank 0: golden gpu: reduce 64 KB kernel %.3f us, reduce 64 KB cpu %.3f us, "
               "allreduce 64 KB rsag %.3f us, allgather 1 KB ring %.3f us\n", g[0], g[1], g[2], g[3]);
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
        p2_comm_t copy = even;
        CHECK(p2_comm_free(&even));
        /* A copy of the freed handle is refused, not read. */
        if (p2_comm_rank(copy) != -1 || p2_barrier(copy) != TCA_ERROR_INVALID_HANDLE ||
            p2_comm_free(&copy) != TCA_ERROR_INVALID_HANDLE) {
            fprintf(stderr, "rank %d: a freed comm is still taken\n", rank);
            failures++;
        }
    }
    CHECK(p2_barrier(P2_COMM_WORLD));
    printf("rank %d: subcomm: %s\n", rank, failures ? "WRONG" : "all right");
}

/* Blocking calls reuse the plan of an earlier call with the same arguments:
 * only the first pays the exchange. Ranks change buffers independently (even
 * ranks alternate between two, odd ones keep theirs; MPI allows it), and
 * every result is checked. Prints the first and a later 8-byte allreduce. */
static void blocking_reuse(void)
{
    double *a[2] = {alloc(64, tcaMemoryCPU), alloc(64, tcaMemoryCPU)};
    double *r[2] = {alloc(64, tcaMemoryCPU), alloc(64, tcaMemoryCPU)};
    int *ga[2] = {alloc(4 * sizeof(int), tcaMemoryCPU), alloc(4 * sizeof(int), tcaMemoryCPU)};
    int *gr[2] = {alloc(4 * sizeof(int) * (size_t)size, tcaMemoryCPU),
                  alloc(4 * sizeof(int) * (size_t)size, tcaMemoryCPU)};
    double first = 0, later = 0;
    for (int it = 0; it < 6; it++) {
        int b = rank % 2 == 0 ? it % 2 : 0;
        a[b][0] = rank + it;
        CHECK(p2_barrier(P2_COMM_WORLD));
        double t0 = p2_wtime();
        CHECK(p2_allreduce(a[b], r[b], 1, TCA_DOUBLE, TCA_OP_SUM, P2_COMM_WORLD));
        double t = (p2_wtime() - t0) * 1e6;
        if (it == 0)
            first = t;
        if (it == 4)
            later = t;
        double want = (double)size * (size - 1) / 2 + (double)size * it;
        if (r[b][0] != want) {
            fprintf(stderr, "rank %d: blocking allreduce %d: %g, want %g\n", rank, it, r[b][0], want);
            failures++;
        }
        for (int i = 0; i < 4; i++)
            ga[b][i] = value(rank, (size_t)i) + it;
        CHECK(p2_allgather(ga[b], gr[b], 4, TCA_INT, P2_COMM_WORLD));
        for (int q = 0; q < size; q++)
            for (int i = 0; i < 4; i++)
                if (gr[b][q * 4 + i] != value(q, (size_t)i) + it) {
                    fprintf(stderr, "rank %d: blocking allgather %d: block %d element %d wrong\n",
                            rank, it, q, i);
                    failures++;
                }
        int root = 1 % size;
        for (int i = 0; i < 4; i++)
            ga[b][i] = rank == root ? 7 * it + i : -1;
        CHECK(p2_bcast(ga[b], 4, TCA_INT, root, P2_COMM_WORLD));
        for (int i = 0; i < 4; i++)
            if (ga[b][i] != 7 * it + i) {
                fprintf(stderr, "rank %d: blocking bcast %d: element %d wrong\n", rank, it, i);
                failures++;
            }
    }
    if (rank == 0)
        printf("rank 0: blocking: allreduce 8 B first call %.3f us, fifth %.3f us\n", first, later);
    if (!failures)
        printf("rank %d: blocking: all right\n", rank);
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
    else if (strcmp(what, "inplace") == 0)
        inplace();
    else if (strcmp(what, "blocking") == 0)
        blocking_reuse();
    else if (strcmp(what, "d2d") == 0)
        d2d();
    else if (strcmp(what, "mixed") == 0)
        mixed();
    else if (strcmp(what, "floats") == 0)
        floats();
    else if (strcmp(what, "rules") == 0 && argc > 2)
        rules(argv[2]);
    else if (strcmp(what, "badrules") == 0 && argc > 2)
        return badrules(argv[2]);
    else {
        fprintf(stderr, "rk_coll: unknown mode '%s'\n", what);
        return 2;
    }
    CHECK(p2_barrier(P2_COMM_WORLD));
    return failures ? 1 : 0;
}
