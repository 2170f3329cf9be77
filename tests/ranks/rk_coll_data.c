/*
 * rk_coll_data.c - rk_coll's data modes: every collective and algorithm
 * with every byte checked (data, inplace, persistent, big) and the
 * reductions of every type and operator (types, floats).
 */
#include <float.h>
#include <math.h>
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "p2_check.h"
#include "rk_coll.h"

void data(size_t maxcount)
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
void types(void)
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
void floats(void)
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

/* In place (P2_IN_PLACE, or sendbuf == recvbuf for the reductions), every
 * algorithm, counts 1, 7 and 300, roots 0 and p - 1, CPU and GPU buffers. */
void inplace(void)
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

void persistent(void)
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

void big(void)
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
