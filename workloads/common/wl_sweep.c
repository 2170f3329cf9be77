/*
 * wl_sweep.c - the size sweep of the benchmarks (wl_sweep.h): sizes,
 * iterations, timing, the reduction over the ranks, the rows.
 *
 * Depends on wl_report (rows) and the kernel's monotonic clock (wall_s).
 */
#define _GNU_SOURCE
#include "wl_sweep.h"

#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/syscall.h>
#include <time.h>
#include <unistd.h>

/* Host time, from the kernel: under p2run the C library's clock_gettime
 * gives the program the rank's virtual clock (lib/src/rt/rt_time.c), and
 * wall_s is the host's time a row took. */
static double wall_seconds(void)
{
    struct timespec ts;
    syscall(SYS_clock_gettime, CLOCK_MONOTONIC, &ts);
    return (double)ts.tv_sec + (double)ts.tv_nsec * 1e-9;
}

int wl_sweep_scaled(int count, wl_sweep_scale scale, int divisor)
{
    if (count == 0)
        return 0;
    switch (scale) {
    case WL_SWEEP_SCALE_NONE: return count;
    case WL_SWEEP_SCALE_DOWN: return count / divisor > 1 ? count / divisor : 1;
    case WL_SWEEP_SCALE_UP: return (count + divisor - 1) / divisor;
    case WL_SWEEP_SCALE_ONE: return 1;
    }
    return count;
}

/* The iterations of `bytes` after the large-message rule. */
static wl_sweep_size size_of(const wl_sweep_config *c, uint64_t bytes)
{
    wl_sweep_size s = {bytes, c->iterations, c->warmup};
    if (c->large_bytes && bytes > c->large_bytes) {
        s.iterations = wl_sweep_scaled(c->iterations, c->large_iterations, c->large_divisor);
        s.warmup = wl_sweep_scaled(c->warmup, c->large_warmup, c->large_divisor);
    }
    return s;
}

void wl_sweep_measure(const wl_sweep_config *c, const wl_sweep_transport *t,
                      const wl_sweep_ops *ops, void *ctx, const wl_sweep_size *size,
                      wl_sweep_result *r)
{
    const int each = c->timing == WL_SWEEP_TIME_EACH;
    const int timer = c->timer;
    wl_sweep_iteration it = {.size = size};
    double total = 0, span_start = 0;
    /* ACROSS_EACH: the timed iterations' slowest rank and mean, summed. */
    double slowest = 0, mean = 0;
    *r = (wl_sweep_result){.size = *size};
    for (it.index = 0; it.index < size->warmup + size->iterations; it.index++) {
        it.timed = it.index >= size->warmup;
        it.check = c->check && (it.timed || c->check_warmup);
        if (!each && it.index == size->warmup) {
            if (t->sync)
                t->sync(ctx);
            if (timer)
                span_start = t->clock();
            it.excluded = 0;
        }
        if (ops->prepare)
            ops->prepare(ctx, &it);
        double start = 0, elapsed = 0;
        if (each && t->sync)
            t->sync(ctx);
        if (each && timer)
            start = t->clock();
        int status = ops->run(ctx, &it);
        if (each && timer)
            elapsed = t->clock() - start;
        if (status == WL_SWEEP_REFUSED) {
            r->refused = 1;
            break;
        }
        if (ops->check)
            ops->check(ctx, &it);
        if (each && c->across == WL_SWEEP_ACROSS_EACH) {
            double longest = t->reduce(ctx, elapsed, WL_SWEEP_MAX);
            double summed = t->reduce(ctx, elapsed, WL_SWEEP_SUM);
            if (it.timed) {
                slowest += longest;
                mean += summed / c->ranks;
            }
        }
        if (each && it.timed)
            total += elapsed;
    }
    if (!each && timer && !r->refused)
        total = t->clock() - span_start - it.excluded;
    r->wrong = it.wrong;
    r->total_s = total;
    r->mean_s = r->refused ? 0 : total / size->iterations;
    r->avg_s = r->max_s = r->mean_s;
    switch (c->across) {
    case WL_SWEEP_ACROSS_NONE: break;
    case WL_SWEEP_ACROSS_MAX: r->max_s = t->reduce(ctx, r->mean_s, WL_SWEEP_MAX); break;
    case WL_SWEEP_ACROSS_MEAN_MAX:
        r->avg_s = t->reduce(ctx, r->mean_s, WL_SWEEP_SUM) / c->ranks;
        r->max_s = t->reduce(ctx, r->mean_s, WL_SWEEP_MAX);
        break;
    case WL_SWEEP_ACROSS_EACH:
        r->max_s = slowest / size->iterations;
        r->avg_s = mean / size->iterations;
        break;
    }
}

int wl_sweep_run(const wl_sweep_config *c, const wl_sweep_transport *t, const wl_sweep_ops *ops,
                 void *ctx, wl_report *report, uint64_t *wrong)
{
    wl_cell cells[WL_SWEEP_MAX_COLUMNS];
    if (report && wl_report_columns(report) > WL_SWEEP_MAX_COLUMNS) {
        fprintf(stderr, "wl_sweep_run: %zu columns, at most %d\n", wl_report_columns(report),
                WL_SWEEP_MAX_COLUMNS);
        abort(); /* the workload's table, not its input */
    }
    int status = 0;
    uint64_t bytes = c->min_bytes;
    for (;;) {
        const wl_sweep_size size = size_of(c, bytes);
        double wall_start = wall_seconds();
        if (ops->setup && (status = ops->setup(ctx, &size)) != 0)
            break;
        wl_sweep_result r;
        wl_sweep_measure(c, t, ops, ctx, &size, &r);
        if (ops->after)
            ops->after(ctx, &r);
        if (t->sum_wrong)
            r.wrong = t->sum_wrong(ctx, r.wrong);
        if (report) {
            r.wall_s = wall_seconds() - wall_start;
            memset(cells, 0, sizeof cells);
            ops->row(ctx, &r, cells);
            wl_report_row(report, cells);
            if (wrong)
                *wrong += r.wrong;
        }
        if (ops->teardown)
            ops->teardown(ctx, &size);
        /* The stopping rule: the next size would pass max_bytes. */
        if (bytes == 0 || bytes > c->max_bytes / (uint64_t)c->factor)
            break;
        bytes *= (uint64_t)c->factor;
    }
    return status;
}
