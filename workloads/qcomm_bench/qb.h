/*
 * qb.h - what qcomm_bench's parts share: its options, the buffers
 * (tcaMalloc: GPU memory, or host memory with -H) and the reduction of a
 * time over the ranks (qb_common.c, which both use), and the halo pattern
 * (qb_halo.c, which the ping-pong's qcomm_bench.c runs).
 *
 * Depends on qcomm.h, wl_options.h, wl_report.h.
 */
#ifndef QB_H
#define QB_H

#include <stdint.h>

#include "qcomm.h"
#include "wl_options.h"
#include "wl_report.h"

#define QB_PROGRAM "qcomm_bench"
#define QB_MAX_LATTICES 8

typedef struct qb_config {
    wl_common_options common;
    const char *mode_text;       /* -m pingpong|halo */
    const char *transport_text;  /* -t */
    const char *pair_text;       /* -p */
    const char *grid_text;       /* --grid */
    const char *lattice_text;    /* --lattice */
    int host;                    /* -H: host buffers */
    int halo;                    /* -m halo */
    int runs[QCOMM_TRANSPORTS];
    int rank_a, rank_b;
    int grid[QCOMM_MAX_DIM];
    int lattices[QB_MAX_LATTICES], lattice_count;
} qb_config;

/* A buffer of `bytes` in GPU memory (host memory with -H); exits on failure. */
void *qb_alloc(const qb_config *c, size_t bytes);
void qb_free(const qb_config *c, void *p);
/* The largest of every rank's `value` (the transport's own network). */
double qb_max_over_ranks(double value);
/* The sum of every rank's `value`. */
double qb_sum_over_ranks(double value);

/* The 4D halo exchange: one row per transport and lattice size; the
 * wrong bytes over all ranks are added to *wrong. */
void qb_halo(const qb_config *c, qcomm_transport t, wl_report *report, uint64_t *wrong);
/* The halo report's columns. */
extern const wl_column qb_halo_columns[];
extern const int qb_halo_column_count;

#endif /* QB_H */
