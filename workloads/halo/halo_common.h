/*
 * halo_common.h - what the two halo programs (halo_loop18, halo_image)
 * share: the transport modes and their per-neighbour choice, the timed step
 * loop (exchange, then compute, per step), and the report's columns and row.
 * Depends on halo_xchg.h, wl_report.h, wl_options.h, p2.h and MPI.
 *
 * Timing: after the warm-up steps and an MPI_Barrier, each rank times each
 * of its timed steps with p2_wtime() (simulated): the exchange (hx_exchange,
 * from posting to the last wait) and the compute (the modelled K20X kernels).
 * A row gives, per step, the slowest rank's mean step time (step_us), the
 * slowest rank's mean exchange (exch_us) and compute (comp_us); the two
 * need not add up to step_us (different ranks may be slowest).
 */
#ifndef HALO_COMMON_H
#define HALO_COMMON_H

#include <stddef.h>
#include <stdint.h>

#include "halo_xchg.h"
#include "wl_report.h"

typedef enum halo_mode {
    HALO_TCA = 0,    /* every neighbour over TCA DMA */
    HALO_MPI = 1,    /* every neighbour over MPI (the InfiniBand rail) */
    HALO_HYBRID = 2, /* TCA inside this rank's PEACH2 sub-cluster, MPI to other ones */
    HALO_MODES
} halo_mode;

const char *halo_mode_name(halo_mode mode);

/* modes[] = the comma-separated list `text` names ("tca,mpi"), in order, no
 * repeats; *count their number. 0, or -1 with one line in `error`. */
int halo_parse_modes(const char *text, halo_mode *modes, int *count, char *error,
                     size_t error_size);

/* The transport of a link to `peer` under `mode`: hybrid gives TCA when
 * p2_subcluster() puts both ranks on one PEACH2 network, MPI otherwise. */
hx_transport halo_link_transport(halo_mode mode, int peer);

/* One timed run of a problem: the program's two halves of a step. */
typedef struct halo_step_ops {
    void (*exchange)(void *ctx, int phase); /* phase = step % 2 */
    void (*compute)(void *ctx, int phase);
} halo_step_ops;

typedef struct halo_times {
    double step_s, exch_s, comp_s; /* per step, each the slowest rank's mean */
} halo_times;

/* `warmup` untimed steps, a barrier, `steps` timed ones (every rank; the
 * result on every rank). */
void halo_run_steps(const halo_step_ops *ops, void *ctx, int warmup, int steps,
                    halo_times *times);

/* The report (rank 0; NULL elsewhere), with the programs' common meta. */
wl_report *halo_report_open(const char *title, const char *csv, const char *json, int ranks,
                            int warmup, int steps, char *error, size_t error_size);

typedef struct halo_row_values {
    int n;                /* the problem's edge (points or pixels) */
    int ranks;
    const char *layout;   /* "16x1", "4x4" */
    halo_mode mode;
    uint64_t halo_bytes;  /* sent per step by the rank sending most */
    halo_times times;
    uint64_t wrong;       /* elements differing from the single-process run */
} halo_row_values;

void halo_report_row(wl_report *report, const halo_row_values *row);

/* Collective: under hybrid, a note after the row saying how many links (of
 * all ranks) went over TCA and how many over MPI; nothing otherwise. */
void halo_note_links(wl_report *report, const halo_row_values *row, const hx_plan *plan);

/* The largest of every rank's `value` (every rank gets it). */
uint64_t halo_max_u64(uint64_t value);
/* The sum over the ranks (every rank gets it). */
uint64_t halo_sum_u64(uint64_t value);
/* Ends the program: MPI_Finalize, then rank 0 closes the report and names
 * the `total_wrong` `what` (values, pixels) that differ from the
 * single-process run. The program's exit status. */
int halo_finish(const char *program, wl_report *report, uint64_t total_wrong, const char *what);

#endif /* HALO_COMMON_H */
