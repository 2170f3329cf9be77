/*
 * wl_sweep.h - the size sweep of every benchmark, as nccl-tests' common.cu
 * drives its collectives: the workload says what one iteration of one size
 * is (wl_sweep_ops) and how its ranks meet (wl_sweep_transport: a clock, a
 * barrier, reductions); the driver owns the loop over the sizes, the warm-up
 * and timed iterations, the reduction of the times over the ranks, the sum
 * of the wrong elements, the table row (wl_report) and the stopping rules,
 * which are explicit options (wl_sweep_config).
 *
 * One size, in this order (each step only where its option or callback is
 * given):
 *
 *   setup
 *   for each iteration, the warm-ups first:
 *       SPAN, first timed iteration: sync, clock (the span starts)
 *       prepare
 *       EACH: sync, clock             run             EACH: clock
 *       check
 *       ACROSS_EACH: this iteration's time, max and sum over the ranks
 *   SPAN: clock (the span ends)
 *   ACROSS_MAX, ACROSS_MEAN_MAX: each rank's mean over the ranks
 *   after
 *   the wrong elements summed over the ranks
 *   row (the reporting rank: the one given a report)
 *   teardown
 *
 * Sizes: min_bytes, min_bytes * factor, ... while not above max_bytes (the
 * first always runs; a size of 0 bytes is the only one).
 *
 * Depends on wl_report.h alone (no TCA, MPI or FMPL: the transport is the
 * workload's), so drivers that link no library (osu_mpi) use it too.
 */
#ifndef WL_SWEEP_H
#define WL_SWEEP_H

#include <stdint.h>

#include "wl_report.h"

#ifdef __cplusplus
extern "C" {
#endif

/* How an iteration is timed. */
typedef enum wl_sweep_timing {
    /* Each iteration on its own: from after `sync` to the end of `run`;
     * prepare and check are not timed. A rank's time is the sum over the
     * timed iterations. */
    WL_SWEEP_TIME_EACH,
    /* One span over the timed iterations (prepare and check in it), started
     * after `sync`, less the time the callbacks put in
     * wl_sweep_iteration.excluded during it. */
    WL_SWEEP_TIME_SPAN
} wl_sweep_timing;

/* How the ranks' times combine (wl_sweep_result). */
typedef enum wl_sweep_across {
    WL_SWEEP_ACROSS_NONE,     /* each rank keeps its own (one rank times: a ping-pong) */
    WL_SWEEP_ACROSS_MAX,      /* each rank's mean per iteration: the slowest rank's */
    WL_SWEEP_ACROSS_MEAN_MAX, /* each rank's mean: the ranks' mean, then the slowest (OSU) */
    WL_SWEEP_ACROSS_EACH      /* every iteration's time: its slowest rank and the ranks'
                                 mean, each averaged over the timed iterations */
} wl_sweep_across;

/* Fewer iterations for large messages (OSU's treatment). 0 stays 0. */
typedef enum wl_sweep_scale {
    WL_SWEEP_SCALE_NONE, /* the count as it is */
    WL_SWEEP_SCALE_DOWN, /* count / divisor, at least 1 */
    WL_SWEEP_SCALE_UP,   /* count / divisor rounded up */
    WL_SWEEP_SCALE_ONE   /* 1 */
} wl_sweep_scale;

typedef enum wl_sweep_op { WL_SWEEP_SUM, WL_SWEEP_MAX } wl_sweep_op;

typedef struct wl_sweep_config {
    /* Sizes: min_bytes, then times factor (at least 2) while not above
     * max_bytes. */
    uint64_t min_bytes, max_bytes;
    int factor;
    /* Iterations per size; above large_bytes (0: no such rule) they are
     * scaled by large_divisor as large_iterations and large_warmup say. */
    int iterations, warmup;
    uint64_t large_bytes;
    int large_divisor;
    wl_sweep_scale large_iterations, large_warmup;
    wl_sweep_timing timing;
    wl_sweep_across across;
    int ranks; /* ACROSS_MEAN_MAX, ACROSS_EACH: the ranks the sums are over */
    int timer; /* this rank reads the clock (the others only take part) */
    /* Outputs checked (-c), and also in the warm-up iterations. */
    int check, check_warmup;
} wl_sweep_config;

/* One size, as the callbacks see it. */
typedef struct wl_sweep_size {
    uint64_t bytes;
    int iterations, warmup; /* after the large-message rule */
} wl_sweep_size;

/* One iteration. The driver sets size, index, timed and check before each;
 * `wrong` and `excluded` add up over the size: the callbacks add to them. */
typedef struct wl_sweep_iteration {
    const wl_sweep_size *size;
    int index;       /* 0 .. warmup + iterations - 1 */
    int timed;       /* index >= warmup */
    int check;       /* count this iteration's wrong elements */
    uint64_t wrong;  /* wrong elements found so far at this size */
    double excluded; /* SPAN: seconds to take out of the span (reset when it starts) */
} wl_sweep_iteration;

/* What one size measured. */
typedef struct wl_sweep_result {
    wl_sweep_size size;
    int refused;    /* run refused the size (no time: mean_s 0) */
    double total_s; /* this rank: its time over the timed iterations (timer ranks) */
    double mean_s;  /* this rank: total_s / iterations */
    double avg_s;   /* the ranks' mean per iteration (ACROSS_MEAN_MAX, ACROSS_EACH); else mean_s */
    double max_s;   /* the slowest rank's (ACROSS_MAX, ACROSS_MEAN_MAX, ACROSS_EACH); else mean_s */
    uint64_t wrong; /* wrong elements: every rank's where the transport sums them */
    double wall_s;  /* host seconds of the size, setup to row */
} wl_sweep_result;

/* How the workload's ranks meet. */
typedef struct wl_sweep_transport {
    double (*clock)(void);  /* seconds (p2_wtime, MPI_Wtime) */
    void (*sync)(void *ctx); /* a barrier before the timing starts; NULL: none */
    /* `value` over the ranks; the result must be right at least on the
     * reporting rank. ACROSS_MEAN_MAX calls SUM, then MAX; ACROSS_EACH MAX,
     * then SUM, every iteration; ACROSS_MAX calls MAX. */
    double (*reduce)(void *ctx, double value, wl_sweep_op op);
    /* The wrong elements of every rank, at least on the reporting rank;
     * NULL: each rank keeps its own. */
    uint64_t (*sum_wrong)(void *ctx, uint64_t wrong);
} wl_sweep_transport;

/* The workload's part. Only run and row are required. */
typedef struct wl_sweep_ops {
    /* Before the size's iterations. Non-zero ends the sweep: wl_sweep_run
     * returns it (no row, no teardown). */
    int (*setup)(void *ctx, const wl_sweep_size *size);
    /* Inputs of the iteration (EACH: not timed). */
    void (*prepare)(void *ctx, wl_sweep_iteration *it);
    /* The iteration's work (EACH: what is timed). WL_SWEEP_REFUSED ends the
     * size's iterations: the result has refused set and no time. */
    int (*run)(void *ctx, wl_sweep_iteration *it);
    /* After run (EACH: not timed): completes the iteration (e.g. waits for
     * an idle channel) and, where it->check, adds its wrong elements. */
    void (*check)(void *ctx, wl_sweep_iteration *it);
    /* After the times are reduced, before the wrong elements are summed: a
     * second measurement of the same size (wl_sweep_measure), a last check. */
    void (*after)(void *ctx, wl_sweep_result *result);
    /* The reporting rank: the row's cells, one per column of the report. */
    void (*row)(void *ctx, const wl_sweep_result *result, wl_cell *cells);
    /* After the row. */
    void (*teardown)(void *ctx, const wl_sweep_size *size);
} wl_sweep_ops;

enum { WL_SWEEP_RAN = 0, WL_SWEEP_REFUSED = 1 };

/* The most columns a swept report may have (the cells of a row). */
#define WL_SWEEP_MAX_COLUMNS 16

/* Runs the sweep. `report`: the reporting rank's (rows go there), NULL on
 * the others. Adds the wrong elements of every row to *wrong (the reporting
 * rank; NULL: not wanted). Returns 0, or the first non-zero setup status. */
int wl_sweep_run(const wl_sweep_config *config, const wl_sweep_transport *transport,
                 const wl_sweep_ops *ops, void *ctx, wl_report *report, uint64_t *wrong);

/* One size's iterations and the reduction of its times, alone (prepare,
 * run, check; no setup, after, sum of wrong elements, row or teardown):
 * for a second measurement of a size from an `after` callback. */
void wl_sweep_measure(const wl_sweep_config *config, const wl_sweep_transport *transport,
                      const wl_sweep_ops *ops, void *ctx, const wl_sweep_size *size,
                      wl_sweep_result *result);

/* `count` under a large-message rule. */
int wl_sweep_scaled(int count, wl_sweep_scale scale, int divisor);

#ifdef __cplusplus
}
#endif

#endif /* WL_SWEEP_H */
