/*
 * halo_common.c - the halo programs' shared modes, step timing and report
 * (halo_common.h). Depends on MPI, p2.h, wl_report.h.
 */
#include "halo_common.h"

#include <mpi.h>
#include <stdio.h>
#include <string.h>

#include "p2.h"
#include "wl_options.h"

static const char *const mode_names[HALO_MODES] = {"tca", "mpi", "hybrid"};

const char *halo_mode_name(halo_mode mode)
{
    return mode >= 0 && mode < HALO_MODES ? mode_names[mode] : "?";
}

int halo_parse_modes(const char *text, halo_mode *modes, int *count, char *error,
                     size_t error_size)
{
    int n = 0;
    const char *s = text;
    for (;;) {
        size_t len = strcspn(s, ",");
        int found = -1;
        for (int m = 0; m < HALO_MODES; m++)
            if (strlen(mode_names[m]) == len && strncmp(s, mode_names[m], len) == 0)
                found = m;
        if (found < 0) {
            snprintf(error, error_size, "-T: '%.*s' is not tca, mpi or hybrid", (int)len, s);
            return -1;
        }
        for (int i = 0; i < n; i++)
            if (modes[i] == (halo_mode)found) {
                snprintf(error, error_size, "-T: '%s' is named twice", mode_names[found]);
                return -1;
            }
        modes[n++] = (halo_mode)found;
        if (!s[len])
            break;
        s += len + 1;
    }
    *count = n;
    return 0;
}

hx_transport halo_link_transport(halo_mode mode, int peer)
{
    if (mode == HALO_HYBRID) {
        /* TCA where a PEACH2 network joins the two nodes, MPI otherwise
         * (p2_subcluster: -1 for a node on none). */
        int mine = p2_subcluster(p2_rank());
        return mine >= 0 && p2_subcluster(peer) == mine ? HX_TCA : HX_MPI;
    }
    return mode == HALO_MPI ? HX_MPI : HX_TCA;
}

void halo_run_steps(const halo_step_ops *ops, void *ctx, int warmup, int steps,
                    halo_times *times)
{
    int s = 0;
    for (; s < warmup; s++) {
        ops->exchange(ctx, s % 2);
        ops->compute(ctx, s % 2);
    }
    MPI_Barrier(MPI_COMM_WORLD);
    double sum[3] = {0, 0, 0}; /* step, exchange, compute */
    for (int i = 0; i < steps; i++, s++) {
        double t0 = p2_wtime();
        ops->exchange(ctx, s % 2);
        double t1 = p2_wtime();
        ops->compute(ctx, s % 2);
        double t2 = p2_wtime();
        sum[0] += t2 - t0;
        sum[1] += t1 - t0;
        sum[2] += t2 - t1;
    }
    double most[3];
    MPI_Allreduce(sum, most, 3, MPI_DOUBLE, MPI_MAX, MPI_COMM_WORLD);
    times->step_s = most[0] / steps;
    times->exch_s = most[1] / steps;
    times->comp_s = most[2] / steps;
}

enum { COL_N, COL_RANKS, COL_LAYOUT, COL_MODE, COL_BYTES, COL_STEP, COL_EXCH, COL_COMP,
       COL_WRONG, NCOLS };
static const wl_column columns[NCOLS] = {
    [COL_N] = {"n", WL_COLUMN_INTEGER, 6, 0},
    [COL_RANKS] = {"ranks", WL_COLUMN_INTEGER, 5, 0},
    [COL_LAYOUT] = {"layout", WL_COLUMN_TEXT, 6, 0},
    [COL_MODE] = {"transport", WL_COLUMN_TEXT, 9, 0},
    [COL_BYTES] = {"halo_bytes", WL_COLUMN_INTEGER, 10, 0},
    [COL_STEP] = {"step_us", WL_COLUMN_REAL, 10, 3},
    [COL_EXCH] = {"exch_us", WL_COLUMN_REAL, 10, 3},
    [COL_COMP] = {"comp_us", WL_COLUMN_REAL, 10, 3},
    [COL_WRONG] = {"wrong", WL_COLUMN_INTEGER, 6, 0},
};

wl_report *halo_report_open(const char *title, const char *csv, const char *json, int ranks,
                            int warmup, int steps, char *error, size_t error_size)
{
    wl_report *r = wl_report_open(title, columns, NCOLS, csv, json, error, error_size);
    if (!r)
        return NULL;
    wl_report_meta(r, "ranks", "%d", ranks);
    wl_report_meta(r, "steps", "%d timed after %d warm-up (data checked after all %d)", steps,
                   warmup, steps + warmup);
    wl_report_meta(r, "time", "p2_wtime(), simulated, per step: step_us, exch_us, comp_us each "
                              "the slowest rank's mean");
    wl_report_meta(r, "compute", "modelled Tesla K20X kernels (workloads/common/wl_gpu.h); the "
                                 "numerics run on the host");
    return r;
}

void halo_report_row(wl_report *report, const halo_row_values *v)
{
    if (!report)
        return;
    const wl_cell row[NCOLS] = {
        [COL_N] = {.integer = v->n},
        [COL_RANKS] = {.integer = v->ranks},
        [COL_LAYOUT] = {.text = v->layout},
        [COL_MODE] = {.text = halo_mode_name(v->mode)},
        [COL_BYTES] = {.integer = (int64_t)v->halo_bytes},
        [COL_STEP] = {.real = v->times.step_s * WL_US_PER_S},
        [COL_EXCH] = {.real = v->times.exch_s * WL_US_PER_S},
        [COL_COMP] = {.real = v->times.comp_s * WL_US_PER_S},
        [COL_WRONG] = {.integer = (int64_t)v->wrong},
    };
    wl_report_row(report, row);
}

void halo_note_links(wl_report *report, const halo_row_values *row, const hx_plan *plan)
{
    if (row->mode != HALO_HYBRID)
        return;
    int tca, mpi;
    hx_link_counts(plan, &tca, &mpi);
    uint64_t t = halo_sum_u64((uint64_t)tca), m = halo_sum_u64((uint64_t)mpi);
    if (report)
        wl_report_note(report, "n %d hybrid: %llu links over TCA (inside a sub-cluster), %llu "
                       "over MPI (between sub-clusters)", row->n, (unsigned long long)t,
                       (unsigned long long)m);
}

uint64_t halo_max_u64(uint64_t value)
{
    uint64_t out = 0;
    MPI_Allreduce(&value, &out, 1, MPI_UINT64_T, MPI_MAX, MPI_COMM_WORLD);
    return out;
}

uint64_t halo_sum_u64(uint64_t value)
{
    uint64_t out = 0;
    MPI_Allreduce(&value, &out, 1, MPI_UINT64_T, MPI_SUM, MPI_COMM_WORLD);
    return out;
}

int halo_finish(const char *program, wl_report *report, uint64_t total_wrong, const char *what)
{
    int rank;
    MPI_Comm_rank(MPI_COMM_WORLD, &rank);
    MPI_Finalize();
    int status = WL_EXIT_OK;
    if (rank == 0) {
        if (wl_report_close(report) != 0)
            status = WL_EXIT_FAILURE;
        if (total_wrong) {
            fprintf(stderr, "%s: %llu %s differ from the single-process run\n", program,
                    (unsigned long long)total_wrong, what);
            status = WL_EXIT_FAILURE;
        }
    }
    return status;
}
