/*
 * rk_coll.h - what the files of rk_coll (rk_coll.c says its modes) share:
 * the job, the count of failures, the collectives by kind with their
 * algorithms, buffers, inputs and checks, one case run, and each mode.
 *
 *   rk_coll.c         main, the shared helpers
 *   rk_coll_data.c    data, types, floats, inplace, persistent, big
 *   rk_coll_choice.c  rules, badrules, mixed; the cost model's choices
 *   rk_coll_errors.c  errors, subcomm
 *   rk_coll_timing.c  d2d, golden, blocking
 */
#ifndef RK_COLL_H
#define RK_COLL_H

#include <stddef.h>

#include "p2coll.h"

/* This rank, the job's size, the wrong results so far (each mode prints
 * "WRONG" and the program exits 1 when there is one). */
extern int rank, size, failures;

/* One collective call (blocking or a persistent run) of kind `c`. */
typedef enum { BARRIER, BCAST, SCATTER, GATHER, REDUCE, ALLGATHER, ALLREDUCE } kind;
extern const char *names[];        /* "barrier", ... */
extern const char *envs[];         /* P2_COLL_BARRIER, ... */
extern const char *algos[][4];     /* each collective's algorithms */

/* Registered memory of `bytes` (at least 8), filled with 0xee. */
void *alloc(size_t bytes, tcaMemoryKind kind);
/* Rank q's element i. */
int value(int q, size_t i);
/* A wrong element (the first ten are named on stderr). */
void fail(const char *what, const char *algo, size_t count, int root, size_t i, int got,
          int want);
tcaresult init(kind c, int *send, int *recv, size_t n, int root, p2_comm_t comm,
               p2_request_t *req);
tcaresult call(kind c, int *send, int *recv, size_t n, int root, p2_comm_t comm);
/* Fill inputs for `c` with salt `s`, and check the outputs. */
void fill(kind c, int *send, int *recv, size_t n, int root, int me, int np, int s);
void check(kind c, const char *algo, const int *recv, size_t n, int root, int me, int np,
           int s);
/* Whether algorithm `a` of `c` can run n ints on np ranks (gpu: GPU buffers). */
int eligible(kind c, const char *a, size_t n, int np, int gpu);
/* `c` forced to algorithm `a`: blocking (runs 0) or a persistent request run
 * `runs` times, every output checked. */
void run_case(kind c, const char *a, size_t n, int root, tcaMemoryKind mk, int runs);

/* The modes. */
void data(size_t maxcount);
void types(void);
void floats(void);
void inplace(void);
void persistent(void);
void big(void);
void choices(void);
void rules(const char *file);
int badrules(const char *file);
void mixed(void);
void errors(void);
void subcomm(void);
void d2d(void);
void golden(void);
void blocking_reuse(void);

#endif /* RK_COLL_H */
