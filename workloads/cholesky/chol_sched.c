/*
 * chol_sched.c - the Cholesky's per-rank data-driven scheduler (chol.h).
 *
 * A rank runs the tasks that write its own tiles. A task becomes ready when
 * its inputs are final here (computed by this rank, or arrived), never at a
 * step boundary: there is no barrier between steps k.
 *
 *   POTRF(k)     tile (k,k), once its k SYRK updates are done
 *   TRSM(i,k)    tile (i,k), once its k GEMM updates are done and L(k,k) is here
 *   SYRK(i,k)    tile (i,i) -= L(i,k) L(i,k)^T, once L(i,k) is here
 *   GEMM(i,j,k)  tile (i,j) -= L(i,k) L(j,k)^T, once both are here
 *
 * Updates of one tile commute (exactly so in exact arithmetic), so they run
 * in whatever order their inputs come. A POTRF or TRSM makes its tile final:
 * it is sent at once (the transport, nonblocking) to every rank that needs
 * it, and enables the local tasks that read it.
 *
 * The loop: take what has arrived and what has been sent (progress, without
 * waiting); if a task is ready run the best one, else wait for an arrival.
 * Best: the panel tasks (POTRF, TRSM) first, since other ranks wait for
 * their results; then the task with the fewest tiles not in GPU memory
 * (reuse of resident tiles; the cache evicts the least recently used); then
 * the lowest step k; then the oldest. Depends on chol_cache.c,
 * chol_kernels.c and p2.h.
 */
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "chol.h"
#include "p2.h"

typedef struct task {
    int kind, i, j, k;
    long seq;
} task;

typedef struct sched {
    const chol_layout *l;
    chol_cache *c;
    const chol_transport_ops *ops;
    void *tp;
    chol_stats *st;
    uint8_t *avail;  /* [t]: final value here */
    int *done;       /* [t]: updates applied (owned tiles) */
    task *ready;
    int nready, cap;
    long seq;
    long remaining;  /* tasks of this rank not yet run */
    int *arrived;
} sched;

static int own(const sched *s, int i, int j)
{
    return s->l->owner[chol_tile(i, j)] == s->l->rank;
}

static int push(sched *s, int kind, int i, int j, int k)
{
    if (s->nready == s->cap) {
        int cap = s->cap ? 2 * s->cap : 64;
        task *r = realloc(s->ready, (size_t)cap * sizeof *r);
        if (!r)
            return -1;
        s->ready = r, s->cap = cap;
    }
    s->ready[s->nready++] = (task){kind, i, j, k, s->seq++};
    return 0;
}

/* Final tile (a, k) is here: the local tasks it completes the inputs of. */
static int on_final(sched *s, int t)
{
    const chol_layout *l = s->l;
    int a = l->ti[t], k = l->tj[t], rc = 0;
    s->avail[t] = 1;
    if (a == k) {
        for (int i = k + 1; i < l->nt; i++)
            if (own(s, i, k) && s->done[chol_tile(i, k)] == k)
                rc |= push(s, CHOL_TRSM, i, k, k);
        return rc;
    }
    if (own(s, a, a))
        rc |= push(s, CHOL_SYRK, a, a, k);
    for (int j = k + 1; j < a; j++)
        if (own(s, a, j) && s->avail[chol_tile(j, k)])
            rc |= push(s, CHOL_GEMM, a, j, k);
    for (int m = a + 1; m < l->nt; m++)
        if (own(s, m, a) && s->avail[chol_tile(m, k)])
            rc |= push(s, CHOL_GEMM, m, a, k);
    return rc;
}

/* One more update of owned tile (i, j) done: its final task may be ready. */
static int on_update(sched *s, int i, int j)
{
    int t = chol_tile(i, j);
    if (++s->done[t] != j)
        return 0;
    if (i == j)
        return push(s, CHOL_POTRF, i, i, i);
    return s->avail[chol_tile(j, j)] ? push(s, CHOL_TRSM, i, j, j) : 0;
}

/* The tiles a task touches; the one it writes first. */
static int task_tiles(const task *x, int *tiles)
{
    tiles[0] = chol_tile(x->i, x->j);
    switch (x->kind) {
    case CHOL_POTRF: return 1;
    case CHOL_TRSM: tiles[1] = chol_tile(x->k, x->k); return 2;
    case CHOL_SYRK: tiles[1] = chol_tile(x->i, x->k); return 2;
    default:
        tiles[1] = chol_tile(x->i, x->k);
        tiles[2] = chol_tile(x->j, x->k);
        return 3;
    }
}

static int misses(const sched *s, const task *x)
{
    int tiles[3], n = task_tiles(x, tiles), m = 0;
    for (int i = 0; i < n; i++)
        m += !chol_cache_resident(s->c, tiles[i]);
    return m;
}

/* The policy (header comment), as a key compared left to right. */
static int better(const sched *s, const task *x, const task *y)
{
    int px = x->kind >= CHOL_SYRK, py = y->kind >= CHOL_SYRK;
    if (px != py)
        return px < py;
    int mx = misses(s, x), my = misses(s, y);
    if (mx != my)
        return mx < my;
    if (x->k != y->k)
        return x->k < y->k;
    return x->seq < y->seq;
}

static task pop_best(sched *s)
{
    int b = 0;
    for (int i = 1; i < s->nready; i++)
        if (better(s, &s->ready[i], &s->ready[b]))
            b = i;
    task x = s->ready[b];
    s->ready[b] = s->ready[--s->nready];
    return x;
}

static int take_arrivals(sched *s, int block)
{
    double t0 = p2_wtime();
    int n = s->ops->progress(s->tp, block, s->arrived, s->l->ntiles);
    if (block)
        s->st->wait_s += p2_wtime() - t0;
    for (int i = 0; i < n; i++)
        if (on_final(s, s->arrived[i]) != 0)
            return -1;
    return n < 0 ? -1 : 0;
}

static int run_task(sched *s, const task *x)
{
    int tiles[3], n = task_tiles(x, tiles), r;
    while ((r = chol_cache_acquire(s->c, tiles, n)) == 1) {
        /* Every other frame is being sent from: wait for the oldest send. */
        double t0 = p2_wtime();
        int w = s->ops->wait_send(s->tp);
        s->st->wait_s += p2_wtime() - t0;
        if (w != 0) {
            if (w > 0)
                fprintf(stderr, CHOL_PROGRAM ": rank %d: %d GPU tile frames cannot hold a "
                                "%s task's tiles\n", s->l->rank, s->c->nframes,
                        chol_kind_name[x->kind]);
            return -1;
        }
    }
    if (r != 0)
        return -1;
    const int nb = s->l->nb;
    double *c0 = chol_cache_data(s->c, tiles[0]);
    switch (x->kind) {
    case CHOL_POTRF:
        if (chol_potrf(nb, c0) != 0) {
            fprintf(stderr, CHOL_PROGRAM ": rank %d: tile (%d,%d) is not positive definite\n",
                    s->l->rank, x->i, x->j);
            return -1;
        }
        break;
    case CHOL_TRSM: chol_trsm(nb, chol_cache_data(s->c, tiles[1]), c0); break;
    case CHOL_SYRK: chol_syrk(nb, chol_cache_data(s->c, tiles[1]), c0); break;
    default:
        chol_gemm(nb, chol_cache_data(s->c, tiles[1]), chol_cache_data(s->c, tiles[2]), c0);
    }
    double k_s = chol_kernel_seconds(x->kind, nb);
    p2_compute(k_s);
    s->st->kernel_s += k_s;
    s->st->tasks[x->kind]++;
    s->remaining--;
    chol_cache_set_dirty(s->c, tiles[0]);
    if (x->kind == CHOL_SYRK || x->kind == CHOL_GEMM)
        return on_update(s, x->i, x->j);
    if (s->l->receivers[tiles[0]] &&
        s->ops->send(s->tp, tiles[0], chol_cache_frame(s->c, tiles[0])) != 0)
        return -1;
    return on_final(s, tiles[0]);
}

int chol_sched_run(const chol_layout *l, chol_cache *c, const chol_transport_ops *ops,
                   void *tp, chol_stats *stats)
{
    memset(stats, 0, sizeof *stats);
    sched s = {.l = l, .c = c, .ops = ops, .tp = tp, .st = stats};
    s.avail = calloc((size_t)l->ntiles, 1);
    s.done = calloc((size_t)l->ntiles, sizeof *s.done);
    s.arrived = malloc((size_t)l->ntiles * sizeof *s.arrived);
    int rc = -1;
    if (!s.avail || !s.done || !s.arrived) {
        fprintf(stderr, CHOL_PROGRAM ": rank %d: out of memory\n", l->rank);
        goto out;
    }
    /* Each owned tile (i, j): j updates and one final task. */
    for (int t = 0; t < l->ntiles; t++)
        if (l->owner[t] == l->rank)
            s.remaining += l->tj[t] + 1;
    if (own(&s, 0, 0) && push(&s, CHOL_POTRF, 0, 0, 0) != 0)
        goto out;
    while (s.remaining > 0) {
        if (take_arrivals(&s, 0) != 0)
            goto out;
        if (s.nready == 0) {
            if (ops->expected(tp) == 0) {
                fprintf(stderr, CHOL_PROGRAM ": rank %d: %ld tasks left, none ready and no "
                                "tile to come (a scheduler bug)\n", l->rank, s.remaining);
                goto out;
            }
            if (take_arrivals(&s, 1) != 0)
                goto out;
            continue;
        }
        task x = pop_best(&s);
        if (run_task(&s, &x) != 0)
            goto out;
    }
    double t0 = p2_wtime();
    if (ops->drain(tp) != 0)
        goto out;
    stats->wait_s += p2_wtime() - t0;
    rc = chol_cache_flush(c);
out:
    free(s.avail);
    free(s.done);
    free(s.arrived);
    free(s.ready);
    return rc;
}
