/*
 * wl_options.h - the command-line options of every program of the tree
 * (p2run, p2sim, p2bench, validate and the workloads): one table-driven
 * parser and one size parser. Part of p2emu (emu/CMakeLists.txt), which every
 * program links, directly or through p2tca; C with extern "C", so that p2sim
 * (C++) calls it too. Depends on the C library only. The prefix is that of
 * the workloads, whose parser this began as.
 *
 * A program describes its options as a table (wl_option: name, kind, where
 * the value goes, the value's name, one line of help) and says how its
 * arguments are written (WL_SYNTAX_*: "--csv=FILE", "-b8", "--" before an
 * operand, ...). wl_parse_args walks argv, converts and stores each value,
 * and stops at the first bad argument, saying what is wrong with it in a
 * wl_args_result; the program words the message (its wording is part of its
 * interface), or wl_args_message does, in the workloads' words.
 *
 * Every workload shares the flags people know from nccl-tests and the OSU
 * micro-benchmarks (wl_parse):
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

/* ---- Values ---------------------------------------------------------------- */

/* *bytes = the size `text` names: digits and an optional K, M or G suffix
 * (either case; powers of 1024). Returns 0, or -1 if it names none or
 * overflows. The one size parser: flags, and files such as the collectives'
 * rules (P2_COLL_RULES). */
int wl_parse_size(const char *text, uint64_t *bytes);

/* `bytes` as wl_parse_size reads it, with the largest exact suffix: "16M",
 * "64K", "1000". Returns `buffer`. */
const char *wl_format_size(uint64_t bytes, char *buffer, size_t buffer_size);

/* *value = the decimal integer `text` names, in strtol's syntax (leading
 * blanks and a sign allowed), from `min` to `max`. Returns 0, or -1 (and
 * *value unchanged) if it names none, has more after it, or is out of range. */
int wl_parse_long(const char *text, long min, long max, long *value);

/* *seconds = the positive number `text` names, in strtod's syntax. Returns
 * 0, or -1 (and *seconds unchanged). */
int wl_parse_seconds(const char *text, double *seconds);

/* ---- Option tables and the parser ------------------------------------------ */

/* What an option's value is, and what `target` points to. */
typedef enum wl_option_kind {
    WL_OPTION_FLAG,    /* no value; int *target = 1 */
    WL_OPTION_SIZE,    /* bytes with an optional K/M/G suffix; uint64_t *target */
    WL_OPTION_INT,     /* a non-negative decimal integer (digits only); int *target */
    WL_OPTION_STRING,  /* any text, checked by the program; const char **target */
    WL_OPTION_COUNT,   /* a positive integer (wl_parse_long's syntax); int *target */
    WL_OPTION_SECONDS  /* a positive number of seconds (wl_parse_seconds); double *target */
} wl_option_kind;

typedef struct wl_option {
    const char *name;       /* as typed: "-p", "--pio-max" */
    wl_option_kind kind;
    void *target;
    const char *value_name; /* shown in the usage text, e.g. "A,B" */
    const char *help;       /* one line (NULL where the program writes its own usage) */
} wl_option;

/* How a program's arguments are written: bits of wl_args.syntax. Without any,
 * an option is its name alone, and its value the next argument. */
enum {
    WL_SYNTAX_SHORT_ATTACHED = 1u << 0, /* "-b8": a short option's value may follow its
                                         * name in the same argument */
    WL_SYNTAX_LONG_EQUALS = 1u << 1,    /* "--csv=FILE" */
    WL_SYNTAX_ANY_EQUALS = 1u << 2,     /* "-n=4" too: an argument with a '=' is NAME=VALUE,
                                         * whatever the name */
    WL_SYNTAX_OPERANDS = 1u << 3,       /* the options end at "--" (taken) or at the first
                                         * argument that does not start with '-' */
    WL_SYNTAX_HELP = 1u << 4,           /* -h and --help ask for the usage */
    WL_SYNTAX_ONCE = 1u << 5,           /* an option with a value may be given only once
                                         * (at most 64 options then) */
    WL_SYNTAX_NO_EMPTY = 1u << 6        /* a WL_OPTION_STRING may not be "" */
};

/* A program's options. */
typedef struct wl_args {
    unsigned syntax; /* WL_SYNTAX_* */
    const wl_option *options;
    size_t option_count;
    /* Optional: a further check of an option's value once stored in its
     * target; non-zero refuses it (WL_ARGS_INVALID). */
    int (*check)(const wl_option *option, void *context);
    void *context;
} wl_args;

typedef enum wl_parse_status {
    WL_PARSE_OK = 0,
    WL_PARSE_HELP = 1, /* -h or --help: print the usage, exit WL_EXIT_OK */
    WL_PARSE_ERROR = 2 /* the flag and why: wl_args_result, or `error` of wl_parse */
} wl_parse_status;

/* What is wrong with the argument wl_parse_args stopped at. */
typedef enum wl_args_error {
    WL_ARGS_UNKNOWN, /* `arg` names no option */
    WL_ARGS_MISSING, /* `option` needs a value, and `arg` is the last argument */
    WL_ARGS_TWICE,   /* WL_SYNTAX_ONCE: `option` is given again, `value` the second time */
    WL_ARGS_EMPTY,   /* WL_SYNTAX_NO_EMPTY: `option`'s `value` is "" */
    WL_ARGS_INVALID  /* `value` is not of `option`'s kind, or the check refused it */
} wl_args_error;

typedef struct wl_args_result {
    int next; /* after WL_PARSE_OK: the argv index of the first operand, argc if none */
    /* After WL_PARSE_ERROR: */
    wl_args_error error;
    const char *arg;          /* the argument, as typed */
    const wl_option *option;  /* the option it names (NULL for WL_ARGS_UNKNOWN) */
    const char *value;        /* the value at fault (TWICE, EMPTY, INVALID) */
} wl_args_result;

/* Parses argv[1 .. argc) by args->options, storing each value in its
 * option's target as it comes (a later one replaces an earlier, unless
 * WL_SYNTAX_ONCE). Prints nothing: on WL_PARSE_ERROR, *result says which
 * argument and why. */
wl_parse_status wl_parse_args(const wl_args *args, int argc, char **argv,
                              wl_args_result *result);

/* The workloads' one line for an error of wl_parse_args: "unknown flag
 * '--bogus'", "-n needs a value (ITERS)", "-b: '12Q' is not a size (...)". */
void wl_args_message(const wl_args_result *result, char *message, size_t size);

/* ---- The workloads' common flags --------------------------------------------- */

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

typedef struct wl_program {
    const char *name;          /* in messages: "pingpong" */
    const char *summary;       /* one line for the usage text */
    const wl_option *options;  /* the workload's own options */
    size_t option_count;
} wl_program;

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

#ifdef __cplusplus
}
#endif

#endif /* WL_OPTIONS_H */
