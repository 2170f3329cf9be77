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
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "p2_check.h"
#include "rk_coll.h"

int rank, size, failures;

void *alloc(size_t bytes, tcaMemoryKind kind)
{
    void *p = NULL;
    CHECK(tcaMalloc(&p, bytes ? bytes : 8, kind));
    memset(p, 0xee, bytes ? bytes : 8);
    return p;
}

int value(int q, size_t i)
{
    return (q + 1) * 100000 + (int)i;
}

void fail(const char *what, const char *algo, size_t count, int root, size_t i, int got,
          int want)
{
    if (failures++ < 10)
        fprintf(stderr, "rank %d: %s/%s count %zu root %d: element %zu is %d, want %d\n", rank,
                what, algo, count, root, i, got, want);
}

const char *names[] = {"barrier", "bcast", "scatter", "gather", "reduce", "allgather",
                              "allreduce"};
const char *envs[] = {"P2_COLL_BARRIER", "P2_COLL_BCAST", "P2_COLL_SCATTER",
                             "P2_COLL_GATHER", "P2_COLL_REDUCE", "P2_COLL_ALLGATHER",
                             "P2_COLL_ALLREDUCE"};

tcaresult init(kind c, int *send, int *recv, size_t n, int root, p2_comm_t comm,
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

tcaresult call(kind c, int *send, int *recv, size_t n, int root, p2_comm_t comm)
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

void fill(kind c, int *send, int *recv, size_t n, int root, int me, int np, int s)
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

void check(kind c, const char *algo, const int *recv, size_t n, int root, int me, int np,
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

const char *algos[][4] = {
    {"dissemination"}, {"binomial"}, {"linear"}, {"linear"}, {"gather", "gather_gpu"},
    {"recursive_doubling", "bruck", "ring"},
    {"dissemination_pio", "dissemination", "rsag"}};

int eligible(kind c, const char *a, size_t n, int np, int gpu)
{
    if (c == ALLGATHER && strcmp(a, "recursive_doubling") == 0)
        return (np & (np - 1)) == 0;
    if (c == ALLREDUCE && strcmp(a, "dissemination_pio") == 0)
        return !gpu && n * sizeof(int) <= 240;
    return 1;
}

void run_case(kind c, const char *a, size_t n, int root, tcaMemoryKind mk, int runs)
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
