/*
 * p2bench - how fast the simulator is: runs jobs under p2run and reports, for
 * each, the simulated time, the wall and CPU time, the slowdown (wall /
 * simulated), the TLPs simulated, the TLP hops per wall second and the peak
 * memory.
 *
 *   p2bench [--quick] [--pingpongs N] [--ranks N] [--size SIZE]
 *           [--p2run PATH] [--workloads DIR] [--timeout SECONDS] [--keep DIR]
 *           [--csv FILE] [--json FILE]
 *
 * The cases:
 *   (a) p2run -n 2 --stats F -- pingpong -m dma -b 8 -e 8 -n 10000 -w 0 -c 0
 *       (10,000 8-byte DMA ping-pongs: latency-bound, few TLPs, many wake-ups)
 *   (b) p2run -n 16 --stats F -- stream -s 16M
 *       (every rank DMAs 16 MiB to rank ^ 1 at once: bandwidth-bound, millions
 *       of TLPs)
 *   (c) p2run -n 16 -- collectives -C allreduce -b 8 -e 8 -n 1000 -w 10 -c 0
 *       (a thousand 8-byte allreduces, the published benchmarks' loop: every
 *       rank waits on every step)
 *   (d) p2run -n 16 -- collectives -C allgather -b 1M -e 1M -n 1 -w 0 -c 0
 *   (e) p2run --topology torus-2x32.topo -n 64 -- stream -s 1M
 *       (a 64-node PEACH2 torus, every rank streaming at once)
 *   (f) p2run --topology sr8000-8x8.topo -n 64 -- fmpl_coll -o allreduce
 *       -b 8 -e 8 -n 100 -w 5 -c 0 (the 64-node SR8000)
 *   (g) p2run -n 16 -- mpi_speed -a 1000 -g 20 -s 1M
 *       (MPI over the modelled InfiniBand: 1,000 8-byte MPI_Allreduce, then
 *       20 MPI_Allgather of 1 MiB per rank; a plain MPI program, which
 *       smpi_compare.sh also runs under SimGrid's SMPI)
 *   (h) p2run --topology sr8000-8x8x8.topo -n 512 -- fmpl_coll -o barrier,allreduce
 *       -b 8 -e 8 -n 20 -w 2 (the largest SR8000: 512 rank processes and
 *       p2sim on the machine at once)
 * --quick: 100 ping-pongs, 4 ranks x 256 KiB, 4 ranks for (c), (d) and (g)
 * with 100 calls and 64 KiB, 8 nodes for (e) and (f), 128 for (h) (a smoke
 * test, seconds).
 * --cases LIST picks cases by letter (default: all, e.g. --cases a,c; (g)
 * only where the build has MPI, and the default leaves it out where not).
 *
 * Figures per case:
 *   simulated_ms     the job's simulated time at its end (p2sim --stats summary)
 *   wall_s           host time of the whole job, p2run start to exit (measured here)
 *   cpu_s            user + system CPU time of the whole job (p2run, p2sim and
 *                    every rank: wait4's rusage of p2run)
 *   slowdown         wall_s / simulated time
 *   tlps             TLPs the model's initiators created (summary "tlps")
 *   tlp_hops         TLPs transmitted, summed over every link direction
 *   hops_per_wall_s  tlp_hops / wall_s
 *   peak_rss_MB      largest resident set of any process of the job (p2run,
 *                    p2sim, a rank): wait4's ru_maxrss, which covers the
 *                    descendants p2run reaped. Shared memory pages (the node
 *                    arenas) count in every process that touched them.
 *   sim_wall_s       p2sim's own wall time (summary "wall_s")
 *   sim_rss_MB       p2sim's peak resident set (summary "peak_rss_kib")
 *   job_mem_MB       the whole job's memory: the largest sum, over p2run and
 *                    every process under it, of their proportional set sizes
 *                    (a shared page split among the processes that map it,
 *                    so counted once), sampled at gaps that grow from 50 ms
 *                    to a second (a job shorter than 50 ms shows 0)
 *   answers          p2sim's answers to the ranks' blocking requests: each a
 *                    hand-over from the simulator to a rank (summary
 *                    "program": "answers")
 *   at_stamp         of them, those answered at the request's own stamp (its
 *                    condition already held then: "answered_at_stamp")
 *   decided          of those, the ones asked when the model had already reached
 *                    the answer's time ("decided_when_asked": no hand-over
 *                    would be needed if a rank could read its answer)
 *   cpu_us_per_answer  cpu_s / answers: what the job's CPU spends per
 *                    hand-over (futex_pingpong has the bare floor)
 * The table goes to stdout (one row per case, as it finishes), progress lines
 * to stderr; --csv/--json write copies. A job that fails ends p2bench with
 * status 1 and its output shown; a bad flag with status 2.
 *
 * By default p2run is ../emu/p2run and the workloads are next to this
 * program (the build tree: build/workloads/p2bench).
 */
#define _GNU_SOURCE
#include <errno.h>
#include <fcntl.h>
#include <limits.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/resource.h>
#include <sys/stat.h>
#include <sys/types.h>
#include <sys/wait.h>
#include <time.h>
#include <unistd.h>

#include "wl_job.h"
#include "wl_options.h"
#include "wl_report.h"

#define PROGRAM "p2bench"

enum { EXIT_OK = 0, EXIT_FAILED = 1, EXIT_USAGE = 2 };

/* The full benchmark, and --quick. */
#define PINGPONGS_FULL 10000
#define STREAM_RANKS_FULL 16
#define STREAM_BYTES_FULL (16u << 20)
#define PINGPONGS_QUICK 100
#define STREAM_RANKS_QUICK 4
#define STREAM_BYTES_QUICK (256u << 10)
#define PINGPONG_BYTES "8"
/* Lines of a failed job's output shown. */
#define FAILED_OUTPUT_LINES 40

#define KIB_PER_MB (1000.0 / 1024.0 * 1000.0) /* ru_maxrss is KiB; MB = 1e6 bytes */
#define US_PER_MS 1e3
#define US_PER_S 1e6

typedef struct bench_options {
    int quick;
    const char *cases; /* letters of the cases to run; NULL: all */
    int pingpongs;
    int ranks;
    uint64_t stream_bytes;
    const char *p2run, *workloads, *keep, *csv, *json;
    double timeout_s; /* 0: none */
} bench_options;

/* What one job gave. */
typedef struct bench_result {
    double wall_s, cpu_s;
    long peak_rss_kib, job_pss_kib;
    double simulated_us;
    unsigned long long tlps, tlp_hops;
    double sim_wall_s;
    unsigned long long sim_rss_kib;
    /* p2sim's answers to the ranks; of them answered at their stamp, and
     * decided when asked */
    unsigned long long answers, at_stamp, decided;
} bench_result;

/* ---- Options ------------------------------------------------------------------ */

static void usage(FILE *out)
{
    fprintf(out,
            "usage: " PROGRAM " [--quick] [--cases LIST] [--pingpongs N] [--ranks N]\n"
            "               [--size SIZE] [--p2run PATH] [--workloads DIR] [--timeout SECONDS]\n"
            "               [--keep DIR] [--csv FILE] [--json FILE]\n"
            "Measures the simulator's speed on these jobs and prints simulated time, wall and\n"
            "CPU time, slowdown, TLPs, TLP hops per wall second and peak memory:\n"
            "  (a) p2run -n 2 -- pingpong -m dma -b 8 -e 8 -n PINGPONGS -w 0 -c 0\n"
            "  (b) p2run -n RANKS -- stream -s SIZE\n"
            "  (c) p2run -n 16 -- collectives -C allreduce -b 8 -e 8 -n 1000 -w 10 -c 0\n"
            "  (d) p2run -n 16 -- collectives -C allgather -b 1M -e 1M -n 1 -w 0 -c 0\n"
            "  (e) p2run --topology torus-2x32.topo -n 64 -- stream -s 1M\n"
            "  (f) p2run --topology sr8000-8x8.topo -n 64 -- fmpl_coll -o allreduce -b 8 -e 8\n"
            "      -n 100 -w 5 -c 0\n"
            "  (g) p2run -n 16 -- mpi_speed -a 1000 -g 20 -s 1M   (MPI; built where MPI is)\n"
            "  (h) p2run --topology sr8000-8x8x8.topo -n 512 -- fmpl_coll -o barrier,allreduce\n"
            "      -b 8 -e 8 -n 20 -w 2\n"
            "  --quick            %d ping-pongs, %d ranks x %uK (default %d, %d x %uM);\n"
            "                     (c), (d), (g) on 4 ranks, (e), (f) on 8 nodes, (h) on 128,\n"
            "                     fewer calls\n"
            "  --cases LIST       the cases to run, by letter (default all: a to h, (g) where\n"
            "                     mpi_speed was built)\n"
            "  --pingpongs N      ping-pongs of case (a)\n"
            "  --ranks N          ranks of case (b) (even: partners are rank ^ 1)\n"
            "  --size SIZE        bytes each rank streams in case (b) (K, M, G suffixes)\n"
            "  --p2run PATH       the launcher (default: ../emu/p2run from this program)\n"
            "  --workloads DIR    where pingpong and stream are (default: this program's folder)\n"
            "  --timeout SECONDS  end a job that runs longer (p2run --timeout)\n"
            "  --keep DIR         keep each job's output and --stats file in DIR\n"
            "  --csv FILE, --json FILE   also write the table as CSV / JSON\n",
            PINGPONGS_QUICK, STREAM_RANKS_QUICK, STREAM_BYTES_QUICK >> 10, PINGPONGS_FULL,
            STREAM_RANKS_FULL, STREAM_BYTES_FULL >> 20);
}

static int usage_error(const char *what, const char *value)
{
    fprintf(stderr, PROGRAM ": %s%s%s%s (" PROGRAM " --help for usage)\n", what,
            value ? " '" : "", value ? value : "", value ? "'" : "");
    return EXIT_USAGE;
}

/* The options' rows, in wl_parse_args's table. */
enum {
    OPT_QUICK, OPT_CASES, OPT_PINGPONGS, OPT_RANKS, OPT_SIZE, OPT_P2RUN, OPT_WORKLOADS,
    OPT_TIMEOUT, OPT_KEEP, OPT_CSV, OPT_JSON, OPT_COUNT
};

/* What a refused value of each option is not (NULL: a path, refused empty). */
static const char *const not_a[OPT_COUNT] = {
    [OPT_CASES] = "--cases: not a list of case letters a to h:",
    [OPT_PINGPONGS] = "--pingpongs: not a positive count:",
    [OPT_RANKS] = "--ranks: not an even number of ranks from 2:",
    [OPT_SIZE] = "--size: not a size (digits, optional K, M or G):",
    [OPT_TIMEOUT] = "--timeout: not a positive number of seconds:",
};

/* The checks beyond the value's kind (wl_args.check; `context` is the table). */
static int check_value(const wl_option *opt, void *context)
{
    switch (opt - (const wl_option *)context) {
    case OPT_CASES: {
        const char *cases = *(const char **)opt->target;
        return !*cases || cases[strspn(cases, "abcdefgh,")];
    }
    case OPT_RANKS: {
        int ranks = *(const int *)opt->target;
        return ranks < 2 || ranks % 2 != 0;
    }
    case OPT_SIZE: return *(const uint64_t *)opt->target == 0;
    case OPT_P2RUN: case OPT_WORKLOADS: case OPT_KEEP: case OPT_CSV: case OPT_JSON:
        return !**(const char **)opt->target;
    }
    return 0;
}

/* Returns 0, EXIT_USAGE after a message, or -1 for --help. */
static int parse_options(int argc, char **argv, bench_options *o)
{
    int quick = 0, pingpongs = 0, ranks = 0;
    uint64_t size = 0;
    const wl_option table[OPT_COUNT] = {
        [OPT_QUICK] = {"--quick", WL_OPTION_FLAG, &quick, NULL, NULL},
        [OPT_CASES] = {"--cases", WL_OPTION_STRING, &o->cases, "LIST", NULL},
        [OPT_PINGPONGS] = {"--pingpongs", WL_OPTION_COUNT, &pingpongs, "N", NULL},
        [OPT_RANKS] = {"--ranks", WL_OPTION_COUNT, &ranks, "N", NULL},
        [OPT_SIZE] = {"--size", WL_OPTION_SIZE, &size, "SIZE", NULL},
        [OPT_P2RUN] = {"--p2run", WL_OPTION_STRING, &o->p2run, "PATH", NULL},
        [OPT_WORKLOADS] = {"--workloads", WL_OPTION_STRING, &o->workloads, "DIR", NULL},
        [OPT_TIMEOUT] = {"--timeout", WL_OPTION_SECONDS, &o->timeout_s, "SECONDS", NULL},
        [OPT_KEEP] = {"--keep", WL_OPTION_STRING, &o->keep, "DIR", NULL},
        [OPT_CSV] = {"--csv", WL_OPTION_STRING, &o->csv, "FILE", NULL},
        [OPT_JSON] = {"--json", WL_OPTION_STRING, &o->json, "FILE", NULL},
    };
    const wl_args args = {.syntax = WL_SYNTAX_LONG_EQUALS | WL_SYNTAX_HELP,
                          .options = table,
                          .option_count = OPT_COUNT,
                          .check = check_value,
                          .context = (void *)table};
    wl_args_result r;
    switch (wl_parse_args(&args, argc, argv, &r)) {
    case WL_PARSE_HELP: return -1;
    case WL_PARSE_OK: break;
    case WL_PARSE_ERROR:
        switch (r.error) {
        case WL_ARGS_UNKNOWN: return usage_error("unknown flag", r.arg);
        case WL_ARGS_MISSING: return usage_error("this flag needs a value:", r.option->name);
        default:
            if (not_a[r.option - table])
                return usage_error(not_a[r.option - table], r.value);
            return usage_error("an empty value for", r.option->name);
        }
    }
    o->quick = quick;
    o->pingpongs = pingpongs ? pingpongs : quick ? PINGPONGS_QUICK : PINGPONGS_FULL;
    o->ranks = ranks ? ranks : quick ? STREAM_RANKS_QUICK : STREAM_RANKS_FULL;
    o->stream_bytes = size ? size : quick ? STREAM_BYTES_QUICK : STREAM_BYTES_FULL;
    return 0;
}

/* ---- Paths ---------------------------------------------------------------------- */

/* Fills the default paths and checks every program exists. */
static int resolve_paths(bench_options *o, char *p2run, char *workloads, size_t size)
{
    char dir[PATH_MAX];
    if ((!o->p2run || !o->workloads) && wl_self_dir(dir, sizeof dir) != 0) {
        fprintf(stderr, PROGRAM ": cannot find my own folder (/proc/self/exe): give --p2run "
                        "and --workloads\n");
        return -1;
    }
    snprintf(p2run, size, "%s", o->p2run ? o->p2run : "");
    if (!o->p2run && snprintf(p2run, size, "%s/../emu/p2run", dir) >= (int)size)
        return -1;
    snprintf(workloads, size, "%s", o->workloads ? o->workloads : dir);
    if (!wl_executable(p2run)) {
        fprintf(stderr, PROGRAM ": p2run '%s' is not an executable file (--p2run PATH)\n",
                p2run);
        return -1;
    }
    const char *programs[] = {"pingpong", "stream", "collectives", "fmpl_coll"};
    for (size_t i = 0; i < sizeof programs / sizeof programs[0]; i++) {
        char path[PATH_MAX + 16];
        snprintf(path, sizeof path, "%s/%s", workloads, programs[i]);
        if (!wl_executable(path)) {
            fprintf(stderr, PROGRAM ": workload '%s' is not an executable file "
                            "(--workloads DIR)\n", path);
            return -1;
        }
    }
    return 0;
}

/* ---- Running a job ------------------------------------------------------------- */

/* The number after "key": in `json`, or -1 if absent. */
static int json_number(const char *json, const char *key, double *out)
{
    char quoted[64];
    snprintf(quoted, sizeof quoted, "\"%s\":", key);
    const char *at = strstr(json, quoted);
    if (!at)
        return -1;
    char *end;
    errno = 0;
    *out = strtod(at + strlen(quoted), &end);
    return errno || end == at + strlen(quoted) ? -1 : 0;
}

/* The "summary" object of p2sim's --stats file into *r. */
static int read_summary(const char *path, bench_result *r)
{
    FILE *f = fopen(path, "r");
    if (!f) {
        fprintf(stderr, PROGRAM ": cannot read the statistics '%s': %s\n", path, strerror(errno));
        return -1;
    }
    char head[1 << 16]; /* the summary, and the program object's counts before its per-rank list */
    size_t n = fread(head, 1, sizeof head - 1, f);
    fclose(f);
    head[n] = '\0';
    char *summary = strstr(head, "\"summary\":");
    char *close = summary ? strchr(summary, '}') : NULL;
    if (!close) {
        fprintf(stderr, PROGRAM ": '%s' has no \"summary\" object (a p2sim without it?)\n", path);
        return -1;
    }
    *close = '\0';
    /* The program's hand-overs, in the "program" object behind it. */
    char *program = strstr(close + 1, "\"program\":");
    double answers = 0, at_stamp = 0, decided = 0;
    if (program) {
        char *end = strchr(program, '[');
        if (end)
            *end = '\0';
        if (json_number(program, "answers", &answers) || json_number(program, "answered_at_stamp", &at_stamp) ||
            json_number(program, "decided_when_asked", &decided))
            answers = at_stamp = decided = 0;
    }
    r->answers = (unsigned long long)answers;
    r->at_stamp = (unsigned long long)at_stamp;
    r->decided = (unsigned long long)decided;
    double simulated_us, tlps, hops, wall, rss;
    if (json_number(summary, "simulated_us", &simulated_us) ||
        json_number(summary, "tlps", &tlps) ||
        json_number(summary, "tlp_hops", &hops) || json_number(summary, "wall_s", &wall) ||
        json_number(summary, "peak_rss_kib", &rss)) {
        fprintf(stderr, PROGRAM ": '%s': the summary lacks a figure: %s}\n", path, summary);
        return -1;
    }
    r->simulated_us = simulated_us;
    r->tlps = (unsigned long long)tlps;
    r->tlp_hops = (unsigned long long)hops;
    r->sim_wall_s = wall;
    r->sim_rss_kib = (unsigned long long)rss;
    return 0;
}

/* Runs argv (p2run ...) with its output into `log`; fills wall time and peak
 * RSS. Returns the job's exit status, or -1 if it could not start. */
static int run_job(char *const *argv, const char *log, bench_result *r)
{
    return wl_run_job_sampled(PROGRAM, argv, log, &r->wall_s, &r->peak_rss_kib, &r->cpu_s,
                              &r->job_pss_kib);
}

/* ---- The cases ------------------------------------------------------------------ */

typedef struct bench_case {
    const char *name;   /* table row */
    char command[512];  /* shown in the header */
    char *argv[32];
    char args[16][PATH_MAX];
} bench_case;

/* Builds "p2run [--timeout T] [--topology F] -n N --stats DIR/NAME.stats.json --
 * DIR/PROGRAM ARGS...". */
static void build_case(bench_case *c, const char *name, const char *p2run, const char *workdir,
                       const bench_options *o, const char *topology, int nranks,
                       const char *workload, const char *workload_dir, const char *const *args)
{
    int a = 0, s = 0;
    c->name = name;
#define ARG(...) (snprintf(c->args[s], PATH_MAX, __VA_ARGS__), c->argv[a++] = c->args[s++])
    ARG("%s", p2run);
    if (o->timeout_s > 0) {
        ARG("--timeout");
        ARG("%g", o->timeout_s);
    }
    if (topology) {
        ARG("--topology");
        ARG("%s", topology);
    }
    ARG("-n");
    ARG("%d", nranks);
    ARG("--stats");
    ARG("%s/%s.stats.json", workdir, name);
    ARG("--");
    ARG("%s/%s", workload_dir, workload);
    for (int i = 0; args[i]; i++)
        c->argv[a++] = (char *)args[i];
#undef ARG
    c->argv[a] = NULL;
    const char *base = topology ? strrchr(topology, '/') : NULL;
    int n = topology ? snprintf(c->command, sizeof c->command, "p2run --topology %s -n %d -- %s",
                                base ? base + 1 : topology, nranks, workload)
                     : snprintf(c->command, sizeof c->command, "p2run -n %d -- %s", nranks,
                                workload);
    for (int i = 0; args[i] && n > 0 && (size_t)n < sizeof c->command; i++)
        n += snprintf(c->command + n, sizeof c->command - (size_t)n, " %s", args[i]);
}

enum { COL_CASE, COL_SIMULATED, COL_WALL, COL_CPU, COL_SLOWDOWN, COL_TLPS, COL_HOPS,
       COL_HOPS_PER_S, COL_RSS, COL_SIM_WALL, COL_SIM_RSS, COL_JOB_MEM, COL_ANSWERS, COL_AT_STAMP, COL_DECIDED,
       COL_CPU_PER_ANSWER, COLUMN_COUNT };

static const wl_column columns[COLUMN_COUNT] = {
    [COL_CASE] = {"case", WL_COLUMN_TEXT, 12, 0},
    [COL_SIMULATED] = {"simulated_ms", WL_COLUMN_REAL, 12, 3},
    [COL_WALL] = {"wall_s", WL_COLUMN_REAL, 8, 3},
    [COL_CPU] = {"cpu_s", WL_COLUMN_REAL, 8, 3},
    [COL_SLOWDOWN] = {"slowdown", WL_COLUMN_REAL, 10, 0},
    [COL_TLPS] = {"tlps", WL_COLUMN_INTEGER, 10, 0},
    [COL_HOPS] = {"tlp_hops", WL_COLUMN_INTEGER, 10, 0},
    [COL_HOPS_PER_S] = {"hops_per_wall_s", WL_COLUMN_REAL, 15, 0},
    [COL_RSS] = {"peak_rss_MB", WL_COLUMN_REAL, 11, 1},
    [COL_SIM_WALL] = {"sim_wall_s", WL_COLUMN_REAL, 10, 3},
    [COL_SIM_RSS] = {"sim_rss_MB", WL_COLUMN_REAL, 10, 1},
    [COL_JOB_MEM] = {"job_mem_MB", WL_COLUMN_REAL, 10, 1},
    [COL_ANSWERS] = {"answers", WL_COLUMN_INTEGER, 9, 0},
    [COL_AT_STAMP] = {"at_stamp", WL_COLUMN_INTEGER, 9, 0},
    [COL_DECIDED] = {"decided", WL_COLUMN_INTEGER, 9, 0},
    [COL_CPU_PER_ANSWER] = {"cpu_us_per_answer", WL_COLUMN_REAL, 17, 2},
};

static void report_case(wl_report *report, const bench_case *c, const bench_result *r)
{
    double simulated_s = r->simulated_us / US_PER_S;
    const wl_cell row[COLUMN_COUNT] = {
        [COL_CASE] = {.text = c->name},
        [COL_SIMULATED] = {.real = r->simulated_us / US_PER_MS},
        [COL_WALL] = {.real = r->wall_s},
        [COL_CPU] = {.real = r->cpu_s},
        [COL_SLOWDOWN] = {.real = simulated_s > 0 ? r->wall_s / simulated_s : 0},
        [COL_TLPS] = {.integer = (int64_t)r->tlps},
        [COL_HOPS] = {.integer = (int64_t)r->tlp_hops},
        [COL_HOPS_PER_S] = {.real = r->wall_s > 0 ? (double)r->tlp_hops / r->wall_s : 0},
        [COL_RSS] = {.real = (double)r->peak_rss_kib / KIB_PER_MB},
        [COL_SIM_WALL] = {.real = r->sim_wall_s},
        [COL_SIM_RSS] = {.real = (double)r->sim_rss_kib / KIB_PER_MB},
        [COL_JOB_MEM] = {.real = (double)r->job_pss_kib / KIB_PER_MB},
        [COL_ANSWERS] = {.integer = (int64_t)r->answers},
        [COL_AT_STAMP] = {.integer = (int64_t)r->at_stamp},
        [COL_DECIDED] = {.integer = (int64_t)r->decided},
        [COL_CPU_PER_ANSWER] = {.real = r->answers ? r->cpu_s * 1e6 / (double)r->answers : 0},
    };
    wl_report_row(report, row);
}

/* Runs one case; 0, or EXIT_FAILED after showing what went wrong. */
static int run_case(wl_report *report, const bench_case *c, const char *workdir)
{
    char log[PATH_MAX + 32], stats[PATH_MAX + 32];
    snprintf(log, sizeof log, "%s/%s.log", workdir, c->name);
    snprintf(stats, sizeof stats, "%s/%s.stats.json", workdir, c->name);
    fflush(stdout); /* the table so far, before the progress line */
    fprintf(stderr, PROGRAM ": running (%s) %s ...\n", c->name, c->command);
    bench_result r = {0};
    int status = run_job(c->argv, log, &r);
    if (status != 0) {
        fprintf(stderr, PROGRAM ": (%s) failed: p2run exited with status %d after %.1f s\n",
                c->name, status, r.wall_s);
        wl_show_tail(log, FAILED_OUTPUT_LINES);
        return EXIT_FAILED;
    }
    if (read_summary(stats, &r) != 0)
        return EXIT_FAILED;
    fprintf(stderr, PROGRAM ": (%s) done in %.2f s wall, %.3f ms simulated\n", c->name, r.wall_s,
            r.simulated_us / US_PER_MS);
    report_case(report, c, &r);
    fflush(stdout);
    return 0;
}

/* ---- Main ------------------------------------------------------------------------ */

static void remove_workdir(const char *dir, const bench_case *cases, int count)
{
    for (int i = 0; i < count; i++) {
        char path[PATH_MAX + 32];
        snprintf(path, sizeof path, "%s/%s.log", dir, cases[i].name);
        unlink(path);
        snprintf(path, sizeof path, "%s/%s.stats.json", dir, cases[i].name);
        unlink(path);
    }
    rmdir(dir);
}

int main(int argc, char **argv)
{
    bench_options o = {0};
    int rc = parse_options(argc, argv, &o);
    if (rc < 0) {
        usage(stdout);
        return EXIT_OK;
    }
    if (rc != 0)
        return rc;
    char p2run[PATH_MAX], workloads[PATH_MAX];
    if (resolve_paths(&o, p2run, workloads, sizeof p2run) != 0)
        return EXIT_USAGE;

    char workdir[PATH_MAX];
    if (o.keep) {
        if (mkdir(o.keep, 0755) != 0 && errno != EEXIST) {
            fprintf(stderr, PROGRAM ": --keep: cannot create '%s': %s\n", o.keep, strerror(errno));
            return EXIT_USAGE;
        }
        snprintf(workdir, sizeof workdir, "%s", o.keep);
    } else {
        const char *tmp = getenv("TMPDIR");
        snprintf(workdir, sizeof workdir, "%s/p2bench-XXXXXX", tmp && *tmp ? tmp : "/tmp");
        if (!mkdtemp(workdir)) {
            fprintf(stderr, PROGRAM ": cannot create a folder in %s: %s\n",
                    tmp && *tmp ? tmp : "/tmp", strerror(errno));
            return EXIT_FAILED;
        }
    }

    static bench_case cases[8];
    char pingpongs[16], size[32];
    snprintf(pingpongs, sizeof pingpongs, "%d", o.pingpongs);
    wl_format_size(o.stream_bytes, size, sizeof size);
    const char *pingpong_args[] = {"-m", "dma", "-b", PINGPONG_BYTES, "-e", PINGPONG_BYTES,
                                   "-n", pingpongs, "-w", "0", "-c", "0", NULL};
    const char *stream_args[] = {"-s", size, NULL};
    const char *allreduce_args[] = {"-C", "allreduce", "-b", "8", "-e", "8", "-n",
                                    o.quick ? "100" : "1000", "-w", "10", "-c", "0", NULL};
    const char *allgather_args[] = {"-C", "allgather", "-b", o.quick ? "64K" : "1M",
                                    "-e", o.quick ? "64K" : "1M", "-n", "1", "-w", "0", "-c", "0",
                                    NULL};
    const char *stream64_args[] = {"-s", o.quick ? "64K" : "1M", NULL};
    const char *fmpl_args[] = {"-o", "allreduce", "-b", "8", "-e", "8", "-n",
                               o.quick ? "10" : "100", "-w", "5", "-c", "0", NULL};
    const char *fmpl512_args[] = {"-o", "barrier,allreduce", "-b", "8", "-e", "8", "-n", "20", "-w", "2",
                                  NULL};
    const char *mpi_args[] = {"-a", o.quick ? "100" : "1000", "-g", o.quick ? "2" : "20",
                              "-s", o.quick ? "64K" : "1M", NULL};
    /* The topologies of (e) and (f): $P2_TOPOLOGY_DIR, else the source tree's
     * (this program runs from the build tree, build/workloads). */
    char topo_dir[PATH_MAX + 32], torus[PATH_MAX + 64], sr8000[PATH_MAX + 64], sr3d[PATH_MAX + 64];
    const char *env_dir = getenv("P2_TOPOLOGY_DIR");
    if (env_dir && *env_dir)
        snprintf(topo_dir, sizeof topo_dir, "%s", env_dir);
    else
        snprintf(topo_dir, sizeof topo_dir, "%s/../../topologies", workloads);
    snprintf(torus, sizeof torus, "%s/%s", topo_dir,
             o.quick ? "tcamini-ring8.topo" : "torus-2x32.topo");
    snprintf(sr8000, sizeof sr8000, "%s/%s", topo_dir,
             o.quick ? "sr8000-8.topo" : "sr8000-8x8.topo");
    snprintf(sr3d, sizeof sr3d, "%s/%s", topo_dir, o.quick ? "sr8000-8x8x2.topo" : "sr8000-8x8x8.topo");
    int big = o.quick ? 8 : 64, coll_ranks = o.quick ? 4 : 16;
    build_case(&cases[0], "a-pingpong", p2run, workdir, &o, NULL, 2, "pingpong", workloads,
               pingpong_args);
    build_case(&cases[1], "b-stream", p2run, workdir, &o, NULL, o.ranks, "stream", workloads,
               stream_args);
    build_case(&cases[2], "c-allreduce", p2run, workdir, &o, NULL, coll_ranks, "collectives",
               workloads, allreduce_args);
    build_case(&cases[3], "d-allgather", p2run, workdir, &o, NULL, coll_ranks, "collectives",
               workloads, allgather_args);
    build_case(&cases[4], "e-peach2-torus", p2run, workdir, &o, torus, big, "stream", workloads,
               stream64_args);
    build_case(&cases[5], "f-sr8000", p2run, workdir, &o, sr8000, big, "fmpl_coll",
               workloads, fmpl_args);
    build_case(&cases[6], "g-mpi", p2run, workdir, &o, NULL, coll_ranks, "mpi_speed", workloads,
               mpi_args);
    build_case(&cases[7], "h-sr8000-512", p2run, workdir, &o, sr3d, o.quick ? 128 : 512, "fmpl_coll",
               workloads, fmpl512_args);
    const int ncases = sizeof cases / sizeof cases[0];
    /* (g) needs the MPI workload, which a build without MPI lacks: asked for
     * by name, that is an error; in the default set, the case is left out. */
    char mpi_speed[PATH_MAX + 16];
    snprintf(mpi_speed, sizeof mpi_speed, "%s/mpi_speed", workloads);
    static char default_cases[] = "abcdefh";
    if (!wl_executable(mpi_speed)) {
        if (o.cases && strchr(o.cases, 'g')) {
            fprintf(stderr, PROGRAM ": case (g) needs '%s', which this build lacks (no MPI "
                            "found at configure time)\n", mpi_speed);
            if (!o.keep)
                remove_workdir(workdir, cases, 0);
            return EXIT_USAGE;
        }
        if (!o.cases) {
            o.cases = default_cases; /* every case but (g) */
            fprintf(stderr, PROGRAM ": leaving out case (g): no '%s' (no MPI in this build)\n",
                    mpi_speed);
        }
    }

    char error[256];
    wl_report *report = wl_report_open("p2bench: simulator speed (wall time per simulated time)",
                                       columns, COLUMN_COUNT, o.csv, o.json, error, sizeof error);
    if (!report) {
        fprintf(stderr, PROGRAM ": %s\n", error);
        if (!o.keep)
            remove_workdir(workdir, cases, 0);
        return EXIT_USAGE;
    }
    for (int i = 0; i < ncases; i++)
        if (!o.cases || strchr(o.cases, 'a' + i))
            wl_report_meta(report, cases[i].name, "%s", cases[i].command);
    wl_report_meta(report, "p2run", "%s", p2run);
    wl_report_meta(report, "cpus", "%ld online", sysconf(_SC_NPROCESSORS_ONLN));
    wl_report_note(report, "slowdown = wall_s / simulated; wall_s: the whole job (start-up "
                           "included); cpu_s: its user + system CPU time, every process; "
                           "sim_wall_s: p2sim's own");
    wl_report_note(report, "tlps: created by hosts, DMACs, register units; tlp_hops: TLPs sent "
                           "over every link direction");
    wl_report_note(report, "peak_rss_MB: largest process of the job (p2sim or a rank); shared "
                           "arena pages count in each process that touched them");
    wl_report_note(report, "answers: p2sim's answers to blocking requests (hand-overs to a rank); "
                           "at_stamp: of them, answered at the request's own stamp; decided: of "
                           "those, asked when the model had already reached it");
    wl_report_note(report, "job_mem_MB: the whole job, every process's proportional set size "
                           "summed (shared pages once), the largest of samples 50 ms to 1 s "
                           "apart");

    int status = EXIT_OK;
    for (int i = 0; i < ncases && status == EXIT_OK; i++)
        if (!o.cases || strchr(o.cases, 'a' + i))
            status = run_case(report, &cases[i], workdir);
    if (wl_report_close(report) != 0 && status == EXIT_OK)
        status = EXIT_FAILED;
    if (o.keep)
        fprintf(stderr, PROGRAM ": outputs and statistics kept in %s\n", workdir);
    else if (status == EXIT_OK)
        remove_workdir(workdir, cases, ncases);
    else
        fprintf(stderr, PROGRAM ": the failed job's files are in %s\n", workdir);
    return status;
}
