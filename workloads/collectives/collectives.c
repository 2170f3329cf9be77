/*
 * collectives - the collectives of p2coll.h in simulated time, nccl-tests /
 * OSU style: one row per size with time, algorithm, bandwidths and wrong
 * elements.
 *
 *   p2run -n N [--map FILE] -- collectives [-C COLL] [-a ALGORITHM] [-o OP]
 *       [-d TYPE] [-r ROOT] [-b MIN] [-e MAX] [-f FACTOR] [-n ITERS] [-w WARMUP]
 *       [-G] [-M] [-c 1|0] [--csv FILE] [--json FILE]
 *
 * COLL: barrier bcast scatter gather reduce allgather allreduce (default
 * allreduce). Sizes are bytes per rank (count = size / element size). Each
 * size runs as one persistent request (p2_<coll>_init once, p2_start per
 * iteration); an iteration's time is the longest of the ranks' spans from a
 * common start (after p2_barrier) to the end of their p2_start. time_us is
 * the mean over the timed iterations. algbw = bytes / time (the gathered
 * size for gather/allgather/scatter), busbw = algbw x the nccl-tests factor.
 * -a forces an algorithm (sets P2_COLL_<COLL>); else the cost model picks.
 * With -c 1 outputs are checked every iteration (wrong = wrong elements, all ranks).
 * -G puts the buffers in GPU memory.
 * -M also runs each size through MPI (MPI_<COLL> on the same buffers, over
 * the modelled InfiniBand rail when the job's topology has one), timed as
 * OSU's benchmarks do: each rank's mean time from an MPI_Barrier, then
 * mpi_avg_us = the ranks' mean and mpi_max_us = the slowest rank's.
 */
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "colls.h"
#include "wl_options.h"
#include "wl_report.h"
#include "wl_sweep.h"
#include "wl_tca.h"
#ifdef CB_HAVE_MPI
#include "wl_sweep_mpi.h"
#endif

#define PROGRAM "collectives"

static const cb_coll *const colls[] = {&cb_barrier, &cb_bcast, &cb_scatter, &cb_gather,
                                       &cb_reduce, &cb_allgather, &cb_allreduce};
static const struct { const char *name; tcaDataType type; } types[] = {
    {"char", TCA_CHAR}, {"schar", TCA_SIGNED_CHAR}, {"uchar", TCA_UNSIGNED_CHAR},
    {"byte", TCA_BYTE}, {"short", TCA_SHORT}, {"ushort", TCA_UNSIGNED_SHORT}, {"int", TCA_INT},
    {"uint", TCA_UNSIGNED}, {"long", TCA_LONG}, {"ulong", TCA_UNSIGNED_LONG},
    {"llong", TCA_LONG_LONG}, {"ullong", TCA_UNSIGNED_LONG_LONG}, {"float", TCA_FLOAT},
    {"double", TCA_DOUBLE}, {"ldouble", TCA_LONG_DOUBLE}};
static const char *const ops[] = {"sum", "prod", "band", "land", "bor", "lor", "bxor", "lxor",
                                  "max", "min"};

enum { COL_COLL, COL_BYTES, COL_COUNT, COL_ALGO, COL_TIME, COL_AVG, COL_ALGBW, COL_BUSBW,
       COL_MPI_AVG, COL_MPI_MAX, COL_WRONG, NCOLS };
static const wl_column columns[NCOLS] = {
    [COL_COLL] = {"collective", WL_COLUMN_TEXT, 10, 0},
    [COL_BYTES] = {"bytes", WL_COLUMN_INTEGER, 9, 0},
    [COL_COUNT] = {"count", WL_COLUMN_INTEGER, 8, 0},
    [COL_ALGO] = {"algorithm", WL_COLUMN_TEXT, 18, 0},
    [COL_TIME] = {"time_us", WL_COLUMN_REAL, 10, 3},
    [COL_AVG] = {"avg_us", WL_COLUMN_REAL, 10, 3},
    [COL_ALGBW] = {"algbw_GBps", WL_COLUMN_REAL, 10, 3},
    [COL_BUSBW] = {"busbw_GBps", WL_COLUMN_REAL, 10, 3},
    [COL_MPI_AVG] = {"mpi_avg_us", WL_COLUMN_REAL, 10, 3},
    [COL_MPI_MAX] = {"mpi_max_us", WL_COLUMN_REAL, 10, 3},
    [COL_WRONG] = {"wrong", WL_COLUMN_INTEGER, 6, 0},
};

/* The columns a run prints: the MPI ones only with -M. */
static int shown(int col, int mpi) { return mpi || (col != COL_MPI_AVG && col != COL_MPI_MAX); }

/* ---- The sweep's callbacks (wl_sweep.h) ---------------------------------------- */

/* What the callbacks share: the collective, its arguments, the request of
 * the size, and the registered words the TCA reductions go through. */
typedef struct cb_sweep {
    const cb_coll *coll;
    cb_args a;
    size_t es;
    const char *algo;             /* -a, "" for the cost model's choice */
    const wl_common_options *o;
    int mpi;                      /* -M */
    p2_request_t req;
    double *times, *longest, *summed;
    long long *wrongs;
    double mpi_avg_us, mpi_max_us; /* the size through MPI */
    char *error;                  /* why setup refused the size */
    size_t error_size;
} cb_sweep;

static double tca_clock(void) { return p2_wtime(); }

static void tca_sync(void *ctx)
{
    (void)ctx;
    WL_TCA(p2_barrier(P2_COMM_WORLD));
}

/* Every rank gets the slowest (and the summed) time of each iteration. */
static double tca_reduce(void *ctx, double value, wl_sweep_op op)
{
    cb_sweep *s = ctx;
    double *out = op == WL_SWEEP_MAX ? s->longest : s->summed;
    *s->times = value;
    WL_TCA(p2_allreduce(s->times, out, 1, TCA_DOUBLE, op == WL_SWEEP_MAX ? TCA_OP_MAX : TCA_OP_SUM,
                        P2_COMM_WORLD));
    return *out;
}

/* The wrong elements of every rank, at rank 0. */
static uint64_t tca_sum_wrong(void *ctx, uint64_t wrong)
{
    cb_sweep *s = ctx;
    s->wrongs[0] = (long long)wrong;
    WL_TCA(p2_reduce(s->wrongs, s->wrongs + 1, 1, TCA_LONG_LONG, TCA_OP_SUM, 0, P2_COMM_WORLD));
    return (uint64_t)s->wrongs[1];
}

/* One persistent request per size: p2_<coll>_init once, p2_start per
 * iteration. */
static int tca_setup(void *ctx, const wl_sweep_size *size)
{
    cb_sweep *s = ctx;
    s->a.count = size->bytes / s->es;
    tcaresult ir = s->coll->init(&s->a, &s->req);
    if (ir == TCA_ERROR_NOT_SUPPORTED && *s->algo) {
        /* Every rank gets the same status (p2coll.h), so every rank stops. */
        snprintf(s->error, s->error_size,
                 "-a: %s has no algorithm '%s' that runs %zu bytes on %d ranks", s->coll->name,
                 s->algo, s->a.count * s->es, s->a.size);
        return WL_EXIT_USAGE;
    }
    WL_TCA(ir);
    return 0;
}

static void fill_inputs(void *ctx, wl_sweep_iteration *it)
{
    cb_sweep *s = ctx;
    if (s->o->check)
        s->coll->fill(&s->a, it->index);
}

static int tca_run(void *ctx, wl_sweep_iteration *it)
{
    cb_sweep *s = ctx;
    (void)it;
    WL_TCA(p2_start(s->req));
    WL_TCA(p2_wait(s->req));
    return WL_SWEEP_RAN;
}

static void count_wrong(void *ctx, wl_sweep_iteration *it)
{
    cb_sweep *s = ctx;
    if (it->check)
        it->wrong += (uint64_t)s->coll->wrong(&s->a, it->index);
}

#ifdef CB_HAVE_MPI
static double mpi_clock(void) { return MPI_Wtime(); }

static int mpi_run(void *ctx, wl_sweep_iteration *it)
{
    cb_sweep *s = ctx;
    (void)it;
    s->coll->mpi(&s->a);
    return WL_SWEEP_RAN;
}

/* After the TCA iterations: the same size through MPI, OSU's way (each
 * rank's mean over the timed iterations; the ranks' mean and the slowest at
 * rank 0). Its wrong elements count with the size's. */
static void mpi_after(void *ctx, wl_sweep_result *result)
{
    cb_sweep *s = ctx;
    if (!s->mpi)
        return;
    const wl_sweep_config config = {
        .iterations = s->o->iterations, .warmup = s->o->warmup, .timing = WL_SWEEP_TIME_EACH,
        .across = WL_SWEEP_ACROSS_MEAN_MAX, .ranks = s->a.size, .timer = 1,
        .check = s->o->check, .check_warmup = 1};
    const wl_sweep_transport mpi = {mpi_clock, wl_sweep_mpi_barrier, wl_sweep_mpi_reduce, NULL};
    const wl_sweep_ops ops = {.prepare = fill_inputs, .run = mpi_run, .check = count_wrong};
    wl_sweep_result r;
    wl_sweep_measure(&config, &mpi, &ops, s, &result->size, &r);
    s->mpi_avg_us = r.avg_s * WL_US_PER_S;
    s->mpi_max_us = r.max_s * WL_US_PER_S;
    result->wrong += r.wrong;
}
#endif

/* Rank 0: time_us the slowest rank's (mean over the iterations), avg_us the
 * ranks' mean; the MPI columns only with -M. */
static void tca_row(void *ctx, const wl_sweep_result *r, wl_cell *row)
{
    cb_sweep *s = ctx;
    double t = r->max_s, algbw, busbw;
    s->coll->bw(s->a.count, s->es, t, s->a.size, &algbw, &busbw);
    const wl_cell cells[NCOLS] = {
        [COL_COLL] = {.text = s->coll->name},
        [COL_BYTES] = {.integer = (int64_t)(s->a.count * s->es)},
        [COL_COUNT] = {.integer = (int64_t)s->a.count},
        [COL_ALGO] = {.text = p2_request_algorithm(s->req)},
        [COL_TIME] = {.real = t * WL_US_PER_S},
        [COL_AVG] = {.real = r->avg_s * WL_US_PER_S},
        [COL_ALGBW] = {.real = algbw},
        [COL_BUSBW] = {.real = busbw},
        [COL_MPI_AVG] = {.real = s->mpi_avg_us},
        [COL_MPI_MAX] = {.real = s->mpi_max_us},
        [COL_WRONG] = {.integer = (int64_t)r->wrong},
    };
    int n = 0;
    for (int c = 0; c < NCOLS; c++)
        if (shown(c, s->mpi))
            row[n++] = cells[c];
}

static void tca_teardown(void *ctx, const wl_sweep_size *size)
{
    cb_sweep *s = ctx;
    (void)size;
    WL_TCA(p2_request_free(&s->req));
}

static int usage_failure(const wl_program *program, const char *message)
{
    if (p2_rank() > 0)
        return WL_EXIT_OK;
    wl_usage_error(program, message);
    return WL_EXIT_USAGE;
}

int main(int argc, char **argv)
{
    wl_set_program_name(PROGRAM);
    wl_common_options o;
    wl_options_defaults(&o);
    const char *coll_name = "allreduce", *algo = "", *op_name = "sum", *type_name = "int";
    int root = 0, gpu = 0, mpi = 0;
    const wl_option own[] = {
        {"-C", WL_OPTION_STRING, &coll_name, "COLL", "barrier bcast scatter gather reduce allgather allreduce"},
        {"-a", WL_OPTION_STRING, &algo, "ALGORITHM", "force an algorithm (else the cost model)"},
        {"-o", WL_OPTION_STRING, &op_name, "OP", "sum prod band land bor lor bxor lxor max min"},
        {"-d", WL_OPTION_STRING, &type_name, "TYPE",
         "char schar uchar byte short ushort int uint long ulong llong ullong float double "
         "ldouble"},
        {"-r", WL_OPTION_INT, &root, "ROOT", "root of bcast/scatter/gather/reduce"},
        {"-G", WL_OPTION_FLAG, &gpu, NULL, "buffers in GPU memory (else host memory)"},
        {"-M", WL_OPTION_FLAG, &mpi, NULL,
         "also through MPI on the same buffers (columns mpi_avg_us, mpi_max_us, as OSU)"},
    };
    const wl_program program = {PROGRAM, "collectives on TCA in simulated time", own,
                                sizeof own / sizeof own[0]};
    char error[256];
    switch (wl_parse(&program, argc, argv, &o, error, sizeof error)) {
    case WL_PARSE_HELP: wl_usage(&program, stdout); return WL_EXIT_OK;
    case WL_PARSE_ERROR: return usage_failure(&program, error);
    case WL_PARSE_OK: break;
    }
    const cb_coll *coll = NULL;
    for (size_t i = 0; i < sizeof colls / sizeof colls[0]; i++)
        if (strcmp(colls[i]->name, coll_name) == 0)
            coll = colls[i];
    int type = -1, op = -1;
    for (size_t i = 0; i < sizeof types / sizeof types[0]; i++)
        if (strcmp(types[i].name, type_name) == 0)
            type = (int)types[i].type;
    for (int i = 0; i < (int)(sizeof ops / sizeof ops[0]); i++)
        if (strcmp(ops[i], op_name) == 0)
            op = i;
    if (!coll)
        snprintf(error, sizeof error, "-C: '%s' is not a collective", coll_name);
    else if (type < 0)
        snprintf(error, sizeof error, "-d: '%s' is not a type", type_name);
    else if (op < 0)
        snprintf(error, sizeof error, "-o: '%s' is not an operator", op_name);
    if (!coll || type < 0 || op < 0)
        return usage_failure(&program, error);
#ifdef CB_HAVE_MPI
    if (mpi)
        MPI_Init(&argc, &argv);
#else
    if (mpi)
        return usage_failure(&program, "-M: this build of collectives has no MPI");
#endif
    if (*algo)
        setenv(coll->env, algo, 1);

    WL_TCA(tcaInit());
    int rank = p2_rank(), size = p2_size();
    if (root < 0 || root >= size) {
        snprintf(error, sizeof error, "-r: the job has %d ranks, so no rank %d", size, root);
        return usage_failure(&program, error);
    }
    size_t es = TCA_TYPE_SIZE((tcaDataType)type);
    cb_args a = {.type = (tcaDataType)type, .op = (tcaOp)op, .root = root, .rank = rank,
                 .size = size};
    a.count = o.max_bytes / es;
    size_t send_max = coll->send_elems(&a) * es, recv_max = coll->recv_elems(&a) * es;
    /* The emulator's GPU memory is mapped into the rank, so the inputs are
     * written and the outputs checked in place. */
    tcaMemoryKind mk = gpu ? tcaMemoryGPU : tcaMemoryCPU;
    WL_TCA(tcaMalloc(&a.send, send_max ? send_max : 8, mk));
    WL_TCA(tcaMalloc(&a.recv, recv_max ? recv_max : 8, mk));
    double *times = NULL, *longest = NULL, *summed = NULL;
    long long *wrongs = NULL;
    WL_TCA(tcaMalloc((void **)&times, 8, tcaMemoryCPU));
    WL_TCA(tcaMalloc((void **)&longest, 8, tcaMemoryCPU));
    WL_TCA(tcaMalloc((void **)&summed, 8, tcaMemoryCPU));
    WL_TCA(tcaMalloc((void **)&wrongs, 16, tcaMemoryCPU));

    wl_report *report = NULL;
    wl_column cols[NCOLS]; /* the report keeps a pointer to them */
    int ncols = 0;
    if (rank == 0) {
        for (int c = 0; c < NCOLS; c++)
            if (shown(c, mpi))
                cols[ncols++] = columns[c];
        report = wl_report_open(mpi ? "TCA and MPI collectives, simulated time"
                                    : "TCA collectives, simulated time",
                                cols, (size_t)ncols, o.csv_path, o.json_path, error, sizeof error);
        if (!report) {
            wl_usage_error(&program, error);
            return WL_EXIT_USAGE;
        }
        wl_report_meta(report, "ranks", "%d", size);
        wl_report_meta(report, "collective", "%s (type %s, op %s, root %d, %s buffers)",
                       coll->name, type_name, op_name, root, gpu ? "GPU" : "host");
        wl_report_meta(report, "iterations", "%d timed + %d warm-up per size", o.iterations,
                       o.warmup);
        wl_report_meta(report, "time", "p2_wtime(), simulated, from the barrier before each call: "
                                       "time_us the slowest rank's, avg_us the ranks' mean (as OSU)");
        if (mpi)
            wl_report_meta(report, "mpi", "MPI_%c%s on the same buffers, from MPI_Barrier: each "
                           "rank's mean, mpi_avg_us over the ranks, mpi_max_us the slowest",
                           coll->name[0] - 'a' + 'A', coll->name + 1);
    }
    /* Barrier: one size, no data. */
    const int barrier = coll == &cb_barrier;
    const wl_sweep_config config = {
        .min_bytes = barrier ? 0 : o.min_bytes, .max_bytes = barrier ? 0 : o.max_bytes,
        .factor = o.factor, .iterations = o.iterations, .warmup = o.warmup,
        .timing = WL_SWEEP_TIME_EACH, .across = WL_SWEEP_ACROSS_EACH, .ranks = size, .timer = 1,
        .check = o.check, .check_warmup = 1};
    const wl_sweep_transport tca = {tca_clock, tca_sync, tca_reduce, tca_sum_wrong};
    const wl_sweep_ops ops = {.setup = tca_setup,
                              .prepare = fill_inputs,
                              .run = tca_run,
                              .check = count_wrong,
#ifdef CB_HAVE_MPI
                              .after = mpi_after,
#endif
                              .row = tca_row,
                              .teardown = tca_teardown};
    cb_sweep sweep = {.coll = coll, .a = a, .es = es, .algo = algo, .o = &o, .mpi = mpi,
                      .times = times, .longest = longest, .summed = summed, .wrongs = wrongs,
                      .error = error, .error_size = sizeof error};
    uint64_t total_wrong = 0;
    if (wl_sweep_run(&config, &tca, &ops, &sweep, report, &total_wrong) != 0) {
        wl_report_discard(report);
        return usage_failure(&program, error);
    }
#ifdef CB_HAVE_MPI
    if (mpi)
        MPI_Finalize();
#endif
    int status = WL_EXIT_OK;
    if (rank == 0) {
        if (wl_report_close(report) != 0)
            status = WL_EXIT_FAILURE;
        if (total_wrong) {
            fprintf(stderr, "%s: %lld wrong elements\n", PROGRAM, (long long)total_wrong);
            status = WL_EXIT_FAILURE;
        }
    }
    return status;
}
