/*
 * cg - the Conjugate Gradient of the HA-PACS/TCA papers on the virtual
 * cluster: no preconditioner, the matrix split by rows in CSR, a fixed
 * number of iterations, each with one allgather of the search direction
 * (GPU to GPU) and three allreduces of one double (CPU to CPU), over TCA
 * (persistent p2coll collectives) and over MPI on the InfiniBand rail.
 *
 *   p2run -n P -- cg [-m MATRIX | --mtx FILE.mtx] [-t tca|mpi|both] [-n ITERS]
 *       [-w WARMUP] [-s SEED] [--tol TOL] [--csv FILE] [--json FILE]
 *
 * MATRIX: a generated SPD matrix with a published shape (nasa2910,
 * s1rmq4m1, smt, nd3k, nd6k, nd12k, nd24k; cg_matrix.c); FILE: a Matrix
 * Market file (coordinate, real, symmetric). One row per transport: the time
 * per iteration (the slowest rank's) and its parts (the ranks' means:
 * computation charged by the K20X model, allgather, allreduces), simulated;
 * the final true residual, checked against the recurrence's. Depends on
 * cg.h, wl_report.h, wl_options.h, wl_tca.h and MPI.
 */
#include <mpi.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "cg.h"
#include "p2.h"
#include "wl_options.h"
#include "wl_report.h"
#include "wl_tca.h"

#define PROGRAM "cg"
#define CG_DEFAULT_ITERATIONS 1000 /* as published */
#define CG_DEFAULT_TOL 1e-8

enum { COL_MATRIX, COL_N, COL_NNZ, COL_RANKS, COL_TRANSPORT, COL_ITERS, COL_ITER, COL_COMPUTE,
       COL_GATHER, COL_REDUCE, COL_ALGOS, COL_RES, COL_REC, NCOLS };
static const wl_column columns[NCOLS] = {
    [COL_MATRIX] = {"matrix", WL_COLUMN_TEXT, 10, 0},
    [COL_N] = {"n", WL_COLUMN_INTEGER, 6, 0},
    [COL_NNZ] = {"nnz", WL_COLUMN_INTEGER, 9, 0},
    [COL_RANKS] = {"ranks", WL_COLUMN_INTEGER, 5, 0},
    [COL_TRANSPORT] = {"transport", WL_COLUMN_TEXT, 9, 0},
    [COL_ITERS] = {"iters", WL_COLUMN_INTEGER, 5, 0},
    [COL_ITER] = {"iter_us", WL_COLUMN_REAL, 9, 3},
    [COL_COMPUTE] = {"compute_us", WL_COLUMN_REAL, 10, 3},
    [COL_GATHER] = {"allgather_us", WL_COLUMN_REAL, 12, 3},
    [COL_REDUCE] = {"allreduce_us", WL_COLUMN_REAL, 12, 3},
    [COL_ALGOS] = {"algorithms", WL_COLUMN_TEXT, 36, 0},
    [COL_RES] = {"res_true", WL_COLUMN_TEXT, 9, 0},
    [COL_REC] = {"res_rec", WL_COLUMN_TEXT, 9, 0},
};

static int usage_failure(const wl_program *program, int rank, const char *message)
{
    if (rank <= 0)
        wl_usage_error(program, message);
    return WL_EXIT_USAGE;
}

/* Runs the CG on one transport and prints its row (rank 0). */
static int run_transport(const cg_comm_ops *ops, cg_csr *m, const cg_kernels *k,
                         double *p, const char *matrix, const wl_common_options *o, double tol,
                         wl_report *report)
{
    cg_comm c = {.ops = ops, .p = p, .block = m->block, .rank = p2_rank(), .ranks = p2_size()};
    char error[256];
    if (ops->init(&c, error, sizeof error) != 0) {
        fprintf(stderr, "%s: rank %d: %s: %s\n", PROGRAM, c.rank, ops->name, error);
        return WL_EXIT_FAILURE;
    }
    /* A transport that lays p out in another order of blocks: the column
     * indices follow it for the run, then come back. */
    int identity = 1, inverse[CG_MAX_RANKS];
    for (int q = 0; q < c.ranks; q++) {
        identity &= c.slot[q] == q;
        inverse[c.slot[q]] = q;
    }
    if (!identity)
        cg_csr_remap(m, c.slot);
    cg_result res;
    int status = cg_solve(m, k, &c, o->warmup, o->iterations, tol, &res, error, sizeof error);
    if (!identity)
        cg_csr_remap(m, inverse);
    ops->fini(&c);
    if (status != 0) {
        fprintf(stderr, "%s: rank %d: %s on %s: %s\n", PROGRAM, c.rank, ops->name, matrix, error);
        return WL_EXIT_FAILURE;
    }
    if (report) {
        char res_true[32], res_rec[32];
        snprintf(res_true, sizeof res_true, "%.2e", res.res_true);
        snprintf(res_rec, sizeof res_rec, "%.2e", res.res_rec);
        const wl_cell row[NCOLS] = {
            [COL_MATRIX] = {.text = matrix},
            [COL_N] = {.integer = m->n},
            [COL_NNZ] = {.integer = m->nnz},
            [COL_RANKS] = {.integer = c.ranks},
            [COL_TRANSPORT] = {.text = ops->name},
            [COL_ITERS] = {.integer = res.iterations},
            [COL_ITER] = {.real = res.iter_s * WL_US_PER_S},
            [COL_COMPUTE] = {.real = res.compute_s * WL_US_PER_S},
            [COL_GATHER] = {.real = res.allgather_s * WL_US_PER_S},
            [COL_REDUCE] = {.real = res.allreduce_s * WL_US_PER_S},
            [COL_ALGOS] = {.text = c.algorithms},
            [COL_RES] = {.text = res_true},
            [COL_REC] = {.text = res_rec},
        };
        wl_report_row(report, row);
        wl_report_note(report, "%s: max|r| <= %g max|b| %s%d; ||(b-Ax) - r|| / ||b|| = %.2e",
                       ops->name, tol, res.converged_at ? "from iteration " : "not reached in ",
                       res.converged_at ? res.converged_at : o->warmup + o->iterations, res.gap);
    }
    return WL_EXIT_OK;
}

int main(int argc, char **argv)
{
    wl_set_program_name(PROGRAM);
    wl_common_options o;
    wl_options_defaults(&o);
    o.iterations = CG_DEFAULT_ITERATIONS;
    o.warmup = 0;
    const char *matrix = NULL, *file = NULL, *transport = "both", *tol_text = NULL;
    int seed = 1;
    const wl_option own[] = {
        {"-m", WL_OPTION_STRING, &matrix, "MATRIX",
         "generated matrix of a published shape: nasa2910 (default) s1rmq4m1 smt nd3k nd6k "
         "nd12k nd24k"},
        {"--mtx", WL_OPTION_STRING, &file, "FILE", "Matrix Market file (coordinate real symmetric)"},
        {"-t", WL_OPTION_STRING, &transport, "TRANSPORT", "tca, mpi or both"},
        {"-s", WL_OPTION_INT, &seed, "SEED", "seed of the generated values"},
        {"--tol", WL_OPTION_STRING, &tol_text, "TOL",
         "convergence check: max|r| <= TOL max|b| (reported; the count stays fixed)"},
    };
    const wl_program program = {PROGRAM,
                                "Conjugate Gradient, TCA vs MPI, simulated time (-n default "
                                "1000 here; -w untimed iterations first, default 0)",
                                own, sizeof own / sizeof own[0]};
    char error[512];
    int prank = p2_rank(); /* -1 outside p2run: messages from every process */
    switch (wl_parse(&program, argc, argv, &o, error, sizeof error)) {
    case WL_PARSE_HELP: wl_usage(&program, stdout); return WL_EXIT_OK;
    case WL_PARSE_ERROR: return usage_failure(&program, prank, error);
    case WL_PARSE_OK: break;
    }
    double tol = CG_DEFAULT_TOL;
    if (tol_text) {
        char *end;
        tol = strtod(tol_text, &end);
        if (end == tol_text || *end || !(tol > 0.0) || tol >= 1.0) {
            snprintf(error, sizeof error, "--tol: '%s' is not a number in (0, 1)", tol_text);
            return usage_failure(&program, prank, error);
        }
    }
    const cg_shape *shape = NULL;
    if (matrix && file)
        return usage_failure(&program, prank, "-m and --mtx: give one matrix");
    if (!file) {
        shape = cg_shape_find(matrix ? matrix : "nasa2910");
        if (!shape) {
            snprintf(error, sizeof error, "-m: unknown matrix '%s' (known: %s)", matrix,
                     cg_shape_names());
            return usage_failure(&program, prank, error);
        }
    }
    const cg_comm_ops *ops[2] = {NULL, NULL};
    if (strcmp(transport, "tca") == 0)
        ops[0] = &cg_comm_tca;
    else if (strcmp(transport, "mpi") == 0)
        ops[0] = &cg_comm_mpi;
    else if (strcmp(transport, "both") == 0)
        ops[0] = &cg_comm_tca, ops[1] = &cg_comm_mpi;
    else {
        snprintf(error, sizeof error, "-t: '%s' is not tca, mpi or both", transport);
        return usage_failure(&program, prank, error);
    }

    MPI_Init(&argc, &argv);
    WL_TCA(tcaInit());
    int rank = p2_rank(), size = p2_size();
    if (size > CG_MAX_RANKS) {
        snprintf(error, sizeof error, "%d ranks: at most %d", size, CG_MAX_RANKS);
        return usage_failure(&program, rank, error);
    }
    /* TCA on a job over several PEACH2 sub-clusters: TCA inside them, MPI
     * between them. */
    int subclusters = cg_subclusters();
    for (int t = 0; t < 2; t++)
        if (ops[t] == &cg_comm_tca && subclusters > 1)
            ops[t] = &cg_comm_hier;
    cg_csr m;
    const char *name = file ? file : shape->name;
    int got = file ? cg_read_mtx(file, rank, size, &m, error, sizeof error)
                   : cg_generate(shape, (uint64_t)seed, rank, size, &m, error, sizeof error);
    if (got != 0) {
        /* Every rank read the same file or shape: every rank stops, once
         * rank 0 has said why (p2run ends the job at the first rank's exit). */
        if (rank == 0)
            fprintf(stderr, "%s: %s\n", PROGRAM, error);
        MPI_Barrier(MPI_COMM_WORLD);
        return WL_EXIT_USAGE;
    }
    if (file) {
        const char *slash = strrchr(file, '/');
        name = slash ? slash + 1 : file;
    }
    cg_kernels k;
    cg_kernels_for(&m, cg_distinct_columns(&m), &k);
    double *p = NULL;
    WL_TCA(tcaMalloc((void **)&p, sizeof(double) * (size_t)(m.block * size), tcaMemoryGPU));

    wl_report *report = NULL;
    if (rank == 0) {
        report = wl_report_open("Conjugate Gradient, simulated time per iteration", columns,
                                NCOLS, o.csv_path, o.json_path, error, sizeof error);
        if (!report) {
            wl_usage_error(&program, error);
            return WL_EXIT_USAGE;
        }
        wl_report_meta(report, "matrix", "%s: n %lld, nnz %lld%s%s", name, (long long)m.n,
                       (long long)m.nnz, shape ? ", generated: " : ", from the file",
                       shape ? shape->origin : "");
        wl_report_meta(report, "ranks", "%d, %lld rows each (the allgathered p padded to %lld)%s",
                       size, (long long)m.block, (long long)(m.block * size),
                       subclusters > 1 ? ", on several PEACH2 sub-clusters" : "");
        wl_report_meta(report, "iterations", "%d timed after %d untimed, from x = 0, b = 1",
                       o.iterations, o.warmup);
        wl_report_meta(report, "rank 0 kernels", "SpMV %.0f B, dot %.0f B, max|r| %.0f B, "
                       "axpy %.0f B (K20X model, wl_gpu.h)", k.spmv.bytes, k.dot.bytes,
                       k.norm_max.bytes, k.axpy.bytes);
        wl_report_meta(report, "time", "iter_us the slowest rank's; compute, allgather, "
                       "allreduce (3 per iteration) the ranks' means");
    }
    int status = WL_EXIT_OK;
    for (int t = 0; t < 2 && ops[t] && status == WL_EXIT_OK; t++)
        status = run_transport(ops[t], &m, &k, p, name, &o, tol, report);
    if (status != WL_EXIT_OK) {
        wl_report_discard(report);
        return status;
    }
    WL_TCA(tcaFree(p, tcaMemoryGPU));
    cg_csr_free(&m);
    MPI_Finalize();
    if (rank == 0 && wl_report_close(report) != 0)
        status = WL_EXIT_FAILURE;
    return status;
}
