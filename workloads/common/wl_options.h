/*
 * wl_options.h - command-line options every workload shares, with the flags
 * people know from nccl-tests and the OSU micro-benchmarks:
 *
 *   -b MIN -e MAX -f FACTOR   message sizes MIN, MIN*FACTOR, ... up to MAX
 *                             (sizes take K, M, G suffixes: powers of 1024)
 *   -n ITERS -w WARMUP        timed iterations and untimed warm-ups per size
 *   -c 1|0                    check the received data every iteration
 *   --csv FILE --json FILE    machine-readable copies of the table
 *   -h, --help
 *
 * plus a table of the workload's own options. Values follow the flag as the
 * next argument ("-b 8", "--csv out.csv") or attached ("-b8", "--csv=out.csv").
 * A bad flag or value is reported with the flag named; the workload then
 * exits with WL_EXIT_USAGE.
 */
#ifndef WL_OPTIONS_H
#define WL_OPTIONS_H

#include <stddef.h>
#include <stdint.h>
#include <stdio.h>

#ifdef __cplusplus
extern "C" {
#endif

/* Exit statuses of every workload (p2run passes a rank's status on). */
enum {
    WL_EXIT_OK = 0,
    WL_EXIT_FAILURE = 1, /* a library call failed, or wrong data was received */
    WL_EXIT_USAGE = 2    /* a bad flag or value, named on stderr */
};

typedef struct wl_common_options {
    uint64_t min_bytes;    /* -b */
    uint64_t max_bytes;    /* -e */
    int factor;            /* -f, at least 2 */
    int iterations;        /* -n, at least 1 */
    int warmup;            /* -w */
    int check;             /* -c: 1 or 0 */
    const char *csv_path;  /* --csv, NULL if none */
    const char *json_path; /* --json, NULL if none */
} wl_common_options;

/* Defaults (those of nccl-tests where it has the flag). */
#define WL_DEFAULT_MIN_BYTES 8u
#define WL_DEFAULT_MAX_BYTES (16u << 20)
#define WL_DEFAULT_FACTOR 2
#define WL_DEFAULT_ITERATIONS 20
#define WL_DEFAULT_WARMUP 5
#define WL_DEFAULT_CHECK 1

/* What a workload-specific option's value is, and what `target` points to. */
typedef enum wl_option_kind {
    WL_OPTION_FLAG,   /* no value; int *target = 1 */
    WL_OPTION_SIZE,   /* bytes with an optional K/M/G suffix; uint64_t *target */
    WL_OPTION_INT,    /* a non-negative decimal integer; int *target */
    WL_OPTION_STRING  /* any text, checked by the workload; const char **target */
} wl_option_kind;

typedef struct wl_option {
    const char *name;       /* as typed: "-p", "--pio-max" */
    wl_option_kind kind;
    void *target;
    const char *value_name; /* shown in the usage text, e.g. "A,B" */
    const char *help;       /* one line */
} wl_option;

typedef struct wl_program {
    const char *name;          /* in messages: "pingpong" */
    const char *summary;       /* one line for the usage text */
    const wl_option *options;  /* the workload's own options */
    size_t option_count;
} wl_program;

typedef enum wl_parse_status {
    WL_PARSE_OK = 0,
    WL_PARSE_HELP = 1, /* -h or --help: print wl_usage, exit WL_EXIT_OK */
    WL_PARSE_ERROR = 2 /* `error` says which flag and why */
} wl_parse_status;

/* *options = the defaults above. */
void wl_options_defaults(wl_common_options *options);

/* Parses argv[1 .. argc) into *options (start from wl_options_defaults) and
 * the workload's own targets, then checks the ranges (-b at least 1 and not
 * above -e, -f at least 2, -n at least 1, -c 0 or 1). On WL_PARSE_ERROR,
 * `error` holds one line naming the flag. Prints nothing. */
wl_parse_status wl_parse(const wl_program *program, int argc, char **argv,
                         wl_common_options *options, char *error, size_t error_size);

/* The usage text: the common flags with their defaults, then the workload's. */
void wl_usage(const wl_program *program, FILE *out);

/* Prints "NAME: MESSAGE (NAME --help for usage)" on stderr. */
void wl_usage_error(const wl_program *program, const char *message);

/* *bytes = the size `text` names: digits and an optional K, M or G suffix
 * (either case; powers of 1024). Returns 0, or -1 if it names none or
 * overflows. */
int wl_parse_size(const char *text, uint64_t *bytes);

/* `bytes` as wl_parse_size reads it, with the largest exact suffix: "16M",
 * "64K", "1000". Returns `buffer`. */
const char *wl_format_size(uint64_t bytes, char *buffer, size_t buffer_size);

#ifdef __cplusplus
}
#endif

#endif /* WL_OPTIONS_H */
