/*
 * rk_coll_errors.c - rk_coll's modes about bad input and communicators: the
 * same status on every rank (errors), collectives on a communicator of the
 * even ranks (subcomm).
 */
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>

#include "p2_check.h"
#include "rk_coll.h"

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

void errors(void)
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

void subcomm(void)
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
