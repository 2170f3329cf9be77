/*
 * pub_common.h - what the reproductions of the public HA-PACS/TCA benchmark
 * programs share (workloads/public/: pub_pingpong, pub_block_stride,
 * pub_allgather; the programs themselves are mnakao/PEACH2-Benchmarks'
 * tca-pingpong.c, tca-block-stride.c and tca_allgather.c).
 *
 * The programs are written as those are: MPI for start-up, handle exchange
 * and timing (MPI_Wtime between barriers), tca-api.h for the transfers,
 * cuda_runtime.h for the GPU buffers; built with mpicc against libp2tca.so
 * and the CUDA toolkit's libcudart, nothing of the simulator's own. This
 * header adds what the public programs keep in their helper headers (calls
 * checked, every rank's handle of a region) and what a benchmark of this
 * tree offers on top: the usual flags and a table and CSV per size.
 *
 *   -b MIN -e MAX   the sweep (doubling from MIN while not above MAX; sizes
 *                   take K, M, G suffixes, powers of 1024)
 *   -n ITERS        timed iterations per size
 *   -w WARMUP       untimed iterations before them
 *   --csv FILE      one row per size (rank 0 writes it, a row as it is measured)
 *   -h, --help
 *
 * A bad flag or value is named on stderr and every rank exits with status 2;
 * a failed call exits with 1 naming it, wrong data with 1 after the table.
 */
#ifndef PUB_COMMON_H
#define PUB_COMMON_H

#include <cuda_runtime.h>
#include <mpi.h>
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "tca-api.h"

enum { PUB_EXIT_OK = 0, PUB_EXIT_FAILURE = 1, PUB_EXIT_USAGE = 2 };

#define PUB_CHECK_CUDA(call)                                                              \
    do {                                                                                  \
        cudaError_t pub_status_ = (call);                                                 \
        if (pub_status_ != cudaSuccess) {                                                 \
            fprintf(stderr, "%s:%d: %s failed: %s\n", __FILE__, __LINE__, #call,          \
                    cudaGetErrorString(pub_status_));                                     \
            exit(PUB_EXIT_FAILURE);                                                       \
        }                                                                                 \
    } while (0)

#define PUB_CHECK_TCA(call)                                                               \
    do {                                                                                  \
        tcaresult pub_status_ = (call);                                                   \
        if (pub_status_ != TCA_SUCCESS) {                                                 \
            fprintf(stderr, "%s:%d: %s failed: %s\n", __FILE__, __LINE__, #call,          \
                    tcaGetErrorString(pub_status_));                                      \
            exit(PUB_EXIT_FAILURE);                                                       \
        }                                                                                 \
    } while (0)

/* Every rank's handle of its GPU region [base, base + bytes), indexed by rank
 * (MPI_Allgather of each rank's own, as the public programs' helper does).
 * free() the result. */
static inline tcaHandle *pub_gather_handles(void *base, size_t bytes, int nprocs)
{
    tcaHandle own;
    PUB_CHECK_TCA(tcaCreateHandle(&own, base, bytes, tcaMemoryGPU));
    tcaHandle *all = malloc(sizeof *all * (size_t)nprocs);
    if (!all) {
        fprintf(stderr, "out of memory for %d handles\n", nprocs);
        exit(PUB_EXIT_FAILURE);
    }
    MPI_Allgather(&own, (int)sizeof own, MPI_BYTE, all, (int)sizeof own, MPI_BYTE,
                  MPI_COMM_WORLD);
    return all;
}

/* ---- Options ------------------------------------------------------------------ */

typedef struct pub_options {
    uint64_t first, last; /* -b, -e */
    int iters, warmup;    /* -n, -w */
    const char *csv;      /* --csv, or NULL */
    const char *variant;  /* --variant (programs that take it), or NULL */
} pub_options;

/* What a program accepts: its name, its usage text (printed for -h and after
 * a bad argument) and whether it takes --variant. */
typedef struct pub_program {
    const char *name, *usage;
    int takes_variant;
} pub_program;

/* *out = the size `text` names: digits and an optional K, M or G (either
 * case; powers of 1024). 0, or -1 if it names none or overflows. */
static inline int pub_parse_size(const char *text, uint64_t *out)
{
    if (!text || *text < '0' || *text > '9')
        return -1;
    uint64_t v = 0;
    const char *p = text;
    for (; *p >= '0' && *p <= '9'; p++) {
        if (v > (UINT64_MAX - 9) / 10)
            return -1;
        v = v * 10 + (uint64_t)(*p - '0');
    }
    int shift = 0;
    switch (*p) {
    case '\0': break;
    case 'k': case 'K': shift = 10; p++; break;
    case 'm': case 'M': shift = 20; p++; break;
    case 'g': case 'G': shift = 30; p++; break;
    default: return -1;
    }
    if (*p || (shift && v > (UINT64_MAX >> shift)))
        return -1;
    *out = v << shift;
    return 0;
}

/* *out = the decimal integer `text` names, min <= *out <= 1e9. */
static inline int pub_parse_int(const char *text, int min, int *out)
{
    char *end;
    if (!text || *text < '0' || *text > '9')
        return -1;
    long v = strtol(text, &end, 10);
    if (*end || v < min || v > 1000000000L)
        return -1;
    *out = (int)v;
    return 0;
}

/* Parses argv into *o (defaults already in it). Returns 0; or prints the
 * problem (on rank 0 only) and returns PUB_EXIT_USAGE; -h returns -1 after
 * printing the usage. Values follow their flag as the next argument or
 * attached with '=' (--csv=FILE). */
static inline int pub_parse_options(const pub_program *prog, int argc, char **argv,
                                    pub_options *o, int rank)
{
    for (int i = 1; i < argc; i++) {
        const char *flag = argv[i], *value = NULL;
        char name[32];
        const char *eq = strncmp(flag, "--", 2) == 0 ? strchr(flag, '=') : NULL;
        if (eq && (size_t)(eq - flag) < sizeof name) {
            memcpy(name, flag, (size_t)(eq - flag));
            name[eq - flag] = '\0';
            flag = name;
            value = eq + 1;
        }
        if (!strcmp(flag, "-h") || !strcmp(flag, "--help")) {
            if (rank == 0)
                printf("%s", prog->usage);
            return -1;
        }
        int known = !strcmp(flag, "-b") || !strcmp(flag, "-e") || !strcmp(flag, "-n") ||
                    !strcmp(flag, "-w") || !strcmp(flag, "--csv") ||
                    (prog->takes_variant && !strcmp(flag, "--variant"));
        if (!known) {
            if (rank == 0)
                fprintf(stderr, "%s: unknown option '%s'\n%s", prog->name, argv[i], prog->usage);
            return PUB_EXIT_USAGE;
        }
        if (!value) {
            if (i + 1 >= argc || !*argv[i + 1]) {
                if (rank == 0)
                    fprintf(stderr, "%s: missing value after '%s'\n%s", prog->name, flag,
                            prog->usage);
                return PUB_EXIT_USAGE;
            }
            value = argv[++i];
        }
        int bad = 0;
        const char *want = "";
        if (!strcmp(flag, "-b") || !strcmp(flag, "-e")) {
            bad = pub_parse_size(value, !strcmp(flag, "-b") ? &o->first : &o->last) != 0;
            want = "a size: digits with an optional K, M or G suffix";
        } else if (!strcmp(flag, "-n")) {
            bad = pub_parse_int(value, 1, &o->iters) != 0;
            want = "a positive integer";
        } else if (!strcmp(flag, "-w")) {
            bad = pub_parse_int(value, 0, &o->warmup) != 0;
            want = "a non-negative integer";
        } else if (!strcmp(flag, "--csv")) {
            bad = !*value;
            want = "a file name";
            o->csv = value;
        } else {
            bad = !*value;
            want = "a variant's name";
            o->variant = value;
        }
        if (bad) {
            if (rank == 0)
                fprintf(stderr, "%s: %s '%s' is not %s\n", prog->name, flag, value, want);
            return PUB_EXIT_USAGE;
        }
    }
    return 0;
}

/* MPI up, as the public programs begin (stdout line-buffered so the ranks'
 * lines come whole); this rank and the number of ranks. */
static inline void pub_mpi_init(int *argc, char ***argv, int *rank, int *nprocs)
{
    setvbuf(stdout, NULL, _IOLBF, 0);
    MPI_Init(argc, argv);
    MPI_Comm_rank(MPI_COMM_WORLD, rank);
    MPI_Comm_size(MPI_COMM_WORLD, nprocs);
}

/* Says on rank 0 that `what` is wrong with the options; returns PUB_EXIT_USAGE. */
static inline int pub_usage_error(const pub_program *prog, int rank, const char *what)
{
    if (rank == 0)
        fprintf(stderr, "%s: %s\n%s", prog->name, what, prog->usage);
    return PUB_EXIT_USAGE;
}

/* The allgather's and the broadcast's rank counts: a power of two, 2 to 16
 * (the allgather takes one DMAC channel a step); else a usage error on rank
 * 0. 0 when good. */
static inline int pub_check_pow2_ranks(const pub_program *prog, int rank, int nprocs)
{
    if (nprocs < 2 || nprocs > 16 || (nprocs & (nprocs - 1)))
        return pub_usage_error(prog, rank, "runs on 2, 4, 8 or 16 ranks (p2run -n R)");
    return 0;
}

/* After the options were checked (`status`: 0 good, < 0 help shown, else a
 * usage error): on a bad or help start, MPI_Finalize and the exit status to
 * return; else tcaInit and cudaSetDevice(0), as the public programs start, and
 * -1 (go on). */
static inline int pub_start(int status)
{
    if (status != 0) {
        MPI_Finalize();
        return status < 0 ? PUB_EXIT_OK : status;
    }
    PUB_CHECK_TCA(tcaInit());
    PUB_CHECK_CUDA(cudaSetDevice(0));
    return -1;
}

/* ---- Output ------------------------------------------------------------------- */

/* Rank 0's CSV: `header` (a line without its newline) written at once.
 * Returns NULL if none was asked for; exits with a message if it cannot be
 * written. */
static inline FILE *pub_csv_open(const pub_program *prog, const char *path, const char *header)
{
    if (!path)
        return NULL;
    FILE *f = fopen(path, "w");
    if (!f) {
        fprintf(stderr, "%s: --csv '%s' cannot be written\n", prog->name, path);
        exit(PUB_EXIT_USAGE);
    }
    fprintf(f, "%s\n", header);
    fflush(f);
    return f;
}

/* Closes the CSV; a failed write makes the program fail. */
static inline int pub_csv_close(const pub_program *prog, FILE *f, const char *path)
{
    if (f && (ferror(f) | fclose(f))) {
        fprintf(stderr, "%s: writing --csv '%s' failed\n", prog->name, path);
        return -1;
    }
    return 0;
}

/* A size range of whole doubles (-b, -e): 0, or the usage error's status. */
static inline int pub_check_doubles(const pub_program *prog, int rank, const pub_options *o)
{
    if (o->first < 8 || o->first % 8)
        return pub_usage_error(prog, rank, "-b must be a positive multiple of 8 bytes");
    if (o->last < o->first)
        return pub_usage_error(prog, rank, "-e must not be below -b");
    return 0;
}

/* The end every program shares: rank 0 closes its CSV and says whether every
 * element was right (`job` names the run: "2 ranks", ...); every rank then
 * returns rank 0's status, failed on wrong data. */
static inline int pub_finish(const pub_program *prog, int rank, FILE *csv, const char *csv_path,
                             long total_wrong, const char *job, int status)
{
    if (rank == 0) {
        if (pub_csv_close(prog, csv, csv_path) != 0)
            status = PUB_EXIT_FAILURE;
        if (total_wrong)
            printf("%s: WRONG DATA: %ld wrong elements\n", prog->name, total_wrong);
        else
            printf("%s: %s, all data right\n", prog->name, job);
    }
    if (total_wrong)
        status = PUB_EXIT_FAILURE;
    MPI_Bcast(&status, 1, MPI_INT, 0, MPI_COMM_WORLD);
    MPI_Finalize();
    return status;
}

/* The sum of every rank's count of wrong elements. */
static inline long pub_sum_wrong(long mine)
{
    long all = 0;
    MPI_Allreduce(&mine, &all, 1, MPI_LONG, MPI_SUM, MPI_COMM_WORLD);
    return all;
}

#endif /* PUB_COMMON_H */
