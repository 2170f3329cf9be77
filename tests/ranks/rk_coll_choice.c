/*
 * rk_coll_choice.c - rk_coll's modes about the choice of algorithm: the cost
 * model's choices (printed by golden), a rules file and the variable above
 * it (rules), a bad rules file (badrules), ranks whose buffers differ in kind
 * (mixed).
 */
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "p2_check.h"
#include "rk_coll.h"

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
void choices(void)
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
void rules(const char *file)
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
int badrules(const char *file)
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
void mixed(void)
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
