/*
 * wl_options.c - the one command-line parser (wl_options.h): values (sizes,
 * integers, seconds), the table-driven argument loop, and the workloads'
 * common flags on top of it.
 *
 * The common flags are described by the same table type as a workload's own,
 * so one loop parses both and one function prints the usage of both.
 * Depends on the C library only.
 */
#include "wl_options.h"

#include <errno.h>
#include <limits.h>
#include <stdarg.h>
#include <stdlib.h>
#include <string.h>

#define SIZE_UNIT 1024u /* K, M, G are powers of 1024, as in nccl-tests */

/* ---- Values ------------------------------------------------------------- */

/* The multiplier a size suffix stands for, or 0 if `c` is none. */
static uint64_t suffix_multiplier(char c)
{
    switch (c) {
    case 'k': case 'K': return SIZE_UNIT;
    case 'm': case 'M': return (uint64_t)SIZE_UNIT * SIZE_UNIT;
    case 'g': case 'G': return (uint64_t)SIZE_UNIT * SIZE_UNIT * SIZE_UNIT;
    }
    return 0;
}

int wl_parse_size(const char *text, uint64_t *bytes)
{
    if (!text || *text < '0' || *text > '9')
        return -1; /* no sign, no blank, no empty string */
    errno = 0;
    char *end;
    unsigned long long value = strtoull(text, &end, 10);
    if (errno == ERANGE)
        return -1;
    uint64_t multiplier = 1;
    if (*end) {
        multiplier = suffix_multiplier(*end);
        if (!multiplier || end[1])
            return -1;
    }
    uint64_t result;
    if (__builtin_mul_overflow((uint64_t)value, multiplier, &result))
        return -1;
    *bytes = result;
    return 0;
}

const char *wl_format_size(uint64_t bytes, char *buffer, size_t buffer_size)
{
    static const char suffixes[] = "GMK";
    uint64_t unit = (uint64_t)SIZE_UNIT * SIZE_UNIT * SIZE_UNIT;
    for (const char *s = suffixes; *s; s++, unit /= SIZE_UNIT) {
        if (bytes >= unit && bytes % unit == 0) {
            snprintf(buffer, buffer_size, "%llu%c", (unsigned long long)(bytes / unit), *s);
            return buffer;
        }
    }
    snprintf(buffer, buffer_size, "%llu", (unsigned long long)bytes);
    return buffer;
}

int wl_parse_long(const char *text, long min, long max, long *value)
{
    errno = 0;
    char *end;
    long v = strtol(text, &end, 10);
    if (errno || end == text || *end || v < min || v > max)
        return -1;
    *value = v;
    return 0;
}

int wl_parse_seconds(const char *text, double *seconds)
{
    errno = 0;
    char *end;
    double v = strtod(text, &end);
    if (errno || end == text || *end || !(v > 0))
        return -1;
    *seconds = v;
    return 0;
}

/* *value = a non-negative decimal int, digits only. Returns 0 or -1. */
static int parse_int(const char *text, int *value)
{
    long v;
    if (!text || *text < '0' || *text > '9' || wl_parse_long(text, 0, INT_MAX, &v) != 0)
        return -1;
    *value = (int)v;
    return 0;
}

/* *value = a positive int. Returns 0 or -1. */
static int parse_count(const char *text, int *value)
{
    long v;
    if (wl_parse_long(text, 1, INT_MAX, &v) != 0)
        return -1;
    *value = (int)v;
    return 0;
}

/* ---- The parser ---------------------------------------------------------- */

static void set_error(char *error, size_t error_size, const char *fmt, ...)
    __attribute__((format(printf, 3, 4)));
static void set_error(char *error, size_t error_size, const char *fmt, ...)
{
    if (!error || error_size == 0)
        return;
    va_list ap;
    va_start(ap, fmt);
    vsnprintf(error, error_size, fmt, ap);
    va_end(ap);
}

/* The option `arg` names: exactly ("-b", "--csv"), with a value attached
 * as `syntax` allows ("-b8", "--csv=FILE"; *attached then points at it), or
 * NULL. */
static const wl_option *find_option(unsigned syntax, const wl_option *table, size_t n,
                                    const char *arg, const char **attached)
{
    *attached = NULL;
    const char *eq = strchr(arg, '=');
    if ((syntax & WL_SYNTAX_ANY_EQUALS) && eq) {
        size_t len = (size_t)(eq - arg);
        for (size_t i = 0; i < n; i++) {
            if (table[i].kind != WL_OPTION_FLAG && strlen(table[i].name) == len &&
                strncmp(arg, table[i].name, len) == 0) {
                *attached = eq + 1;
                return &table[i];
            }
        }
        return NULL;
    }
    for (size_t i = 0; i < n; i++) {
        const char *name = table[i].name;
        size_t len = strlen(name);
        if (strncmp(arg, name, len) != 0)
            continue;
        if (arg[len] == '\0')
            return &table[i];
        if (table[i].kind == WL_OPTION_FLAG)
            continue;
        int is_long = name[1] == '-';
        if (is_long && arg[len] == '=' && (syntax & WL_SYNTAX_LONG_EQUALS)) {
            *attached = arg + len + 1;
            return &table[i];
        }
        if (!is_long && (syntax & WL_SYNTAX_SHORT_ATTACHED)) {
            *attached = arg + len;
            return &table[i];
        }
    }
    return NULL;
}

static const char *kind_expectation(wl_option_kind kind)
{
    switch (kind) {
    case WL_OPTION_SIZE: return "a size (digits with an optional K, M or G suffix)";
    case WL_OPTION_INT: return "a non-negative integer";
    case WL_OPTION_COUNT: return "a positive integer";
    case WL_OPTION_SECONDS: return "a positive number of seconds";
    default: return "a value";
    }
}

static int store_value(const wl_option *opt, const char *value)
{
    switch (opt->kind) {
    case WL_OPTION_FLAG: *(int *)opt->target = 1; return 0;
    case WL_OPTION_SIZE: return wl_parse_size(value, (uint64_t *)opt->target);
    case WL_OPTION_INT: return parse_int(value, (int *)opt->target);
    case WL_OPTION_STRING: *(const char **)opt->target = value; return 0;
    case WL_OPTION_COUNT: return parse_count(value, (int *)opt->target);
    case WL_OPTION_SECONDS: return wl_parse_seconds(value, (double *)opt->target);
    }
    return -1;
}

static wl_parse_status args_error(wl_args_result *r, wl_args_error error, const char *arg,
                                  const wl_option *option, const char *value)
{
    r->error = error;
    r->arg = arg;
    r->option = option;
    r->value = value;
    return WL_PARSE_ERROR;
}

wl_parse_status wl_parse_args(const wl_args *args, int argc, char **argv,
                              wl_args_result *result)
{
    const unsigned syntax = args->syntax;
    memset(result, 0, sizeof *result);
    uint64_t given = 0; /* WL_SYNTAX_ONCE: one bit per option */
    int i = 1;
    for (; i < argc; i++) {
        const char *arg = argv[i];
        if ((syntax & WL_SYNTAX_OPERANDS) && strcmp(arg, "--") == 0) {
            i++;
            break;
        }
        if ((syntax & WL_SYNTAX_HELP) && (strcmp(arg, "-h") == 0 || strcmp(arg, "--help") == 0)) {
            result->next = i;
            return WL_PARSE_HELP;
        }
        if ((syntax & WL_SYNTAX_OPERANDS) && arg[0] != '-')
            break; /* the first operand */
        const char *value;
        const wl_option *opt = find_option(syntax, args->options, args->option_count, arg, &value);
        if (!opt)
            return args_error(result, WL_ARGS_UNKNOWN, arg, NULL, NULL);
        if (opt->kind != WL_OPTION_FLAG && !value) {
            if (i + 1 >= argc)
                return args_error(result, WL_ARGS_MISSING, arg, opt, NULL);
            value = argv[++i];
        }
        /* A second one would silently replace the first; an empty one would
         * silently mean "not given". */
        size_t k = (size_t)(opt - args->options);
        if ((syntax & WL_SYNTAX_ONCE) && opt->kind != WL_OPTION_FLAG && k < 64) {
            if (given & (UINT64_C(1) << k))
                return args_error(result, WL_ARGS_TWICE, arg, opt, value);
            given |= UINT64_C(1) << k;
        }
        if ((syntax & WL_SYNTAX_NO_EMPTY) && opt->kind == WL_OPTION_STRING && !*value)
            return args_error(result, WL_ARGS_EMPTY, arg, opt, value);
        if (store_value(opt, value) != 0 || (args->check && args->check(opt, args->context) != 0))
            return args_error(result, WL_ARGS_INVALID, arg, opt, value);
    }
    result->next = i;
    return WL_PARSE_OK;
}

void wl_args_message(const wl_args_result *r, char *message, size_t size)
{
    switch (r->error) {
    case WL_ARGS_UNKNOWN:
        set_error(message, size, "unknown flag '%s'", r->arg);
        break;
    case WL_ARGS_MISSING:
        set_error(message, size, "%s needs a value (%s)", r->option->name,
                  r->option->value_name);
        break;
    case WL_ARGS_TWICE:
        set_error(message, size, "%s is given twice ('%s' the second time)", r->option->name,
                  r->value);
        break;
    case WL_ARGS_EMPTY:
    case WL_ARGS_INVALID:
        set_error(message, size, "%s: '%s' is not %s", r->option->name, r->value,
                  kind_expectation(r->option->kind));
        break;
    }
}

/* ---- The workloads' common flags ------------------------------------------ */

void wl_options_defaults(wl_common_options *options)
{
    *options = (wl_common_options){
        .min_bytes = WL_DEFAULT_MIN_BYTES,
        .max_bytes = WL_DEFAULT_MAX_BYTES,
        .factor = WL_DEFAULT_FACTOR,
        .iterations = WL_DEFAULT_ITERATIONS,
        .warmup = WL_DEFAULT_WARMUP,
        .check = WL_DEFAULT_CHECK,
    };
}

#define COMMON_OPTIONS 8

/* The common flags, pointing into `o`. */
static size_t common_table(wl_common_options *o, wl_option table[COMMON_OPTIONS])
{
    const wl_option common[] = {
        {"-b", WL_OPTION_SIZE, &o->min_bytes, "MIN", "smallest message size"},
        {"-e", WL_OPTION_SIZE, &o->max_bytes, "MAX", "largest message size"},
        {"-f", WL_OPTION_INT, &o->factor, "FACTOR", "multiply the size by this each step"},
        {"-n", WL_OPTION_INT, &o->iterations, "ITERS", "timed iterations per size"},
        {"-w", WL_OPTION_INT, &o->warmup, "WARMUP", "untimed warm-up iterations per size"},
        {"-c", WL_OPTION_INT, &o->check, "1|0", "check received data every iteration"},
        {"--csv", WL_OPTION_STRING, &o->csv_path, "FILE", "also write the table as CSV"},
        {"--json", WL_OPTION_STRING, &o->json_path, "FILE", "also write the table as JSON"},
    };
    _Static_assert(sizeof common / sizeof common[0] == COMMON_OPTIONS, "table size");
    memcpy(table, common, sizeof common);
    return COMMON_OPTIONS;
}

static wl_parse_status check_ranges(const wl_common_options *o, char *error, size_t error_size)
{
    char a[32], b[32];
    if (o->min_bytes == 0) {
        set_error(error, error_size, "-b: the smallest size must be at least 1 byte");
        return WL_PARSE_ERROR;
    }
    if (o->min_bytes > o->max_bytes) {
        set_error(error, error_size, "-b %s is larger than -e %s",
                  wl_format_size(o->min_bytes, a, sizeof a),
                  wl_format_size(o->max_bytes, b, sizeof b));
        return WL_PARSE_ERROR;
    }
    if (o->factor < 2) {
        set_error(error, error_size, "-f: the size factor must be at least 2 (got %d)",
                  o->factor);
        return WL_PARSE_ERROR;
    }
    if (o->iterations < 1) {
        set_error(error, error_size, "-n: at least 1 iteration is needed");
        return WL_PARSE_ERROR;
    }
    if (o->check != 0 && o->check != 1) {
        set_error(error, error_size, "-c: '%d' is neither 1 (check) nor 0 (do not)", o->check);
        return WL_PARSE_ERROR;
    }
    return WL_PARSE_OK;
}

wl_parse_status wl_parse(const wl_program *program, int argc, char **argv,
                         wl_common_options *options, char *error, size_t error_size)
{
    size_t extra = program->option_count;
    wl_option *table = malloc((COMMON_OPTIONS + extra) * sizeof *table);
    if (!table) {
        set_error(error, error_size, "out of memory");
        return WL_PARSE_ERROR;
    }
    size_t n = common_table(options, table);
    if (extra)
        memcpy(table + n, program->options, extra * sizeof *table);
    n += extra;

    const wl_args args = {
        .syntax = WL_SYNTAX_SHORT_ATTACHED | WL_SYNTAX_LONG_EQUALS | WL_SYNTAX_HELP |
                  WL_SYNTAX_NO_EMPTY,
        .options = table,
        .option_count = n,
    };
    wl_args_result result;
    wl_parse_status status = wl_parse_args(&args, argc, argv, &result);
    if (status == WL_PARSE_ERROR)
        wl_args_message(&result, error, error_size); /* before the table it points into goes */
    free(table);
    if (status == WL_PARSE_OK)
        status = check_ranges(options, error, error_size);
    return status;
}

/* One usage line: the flag, its value's name, the help and the value the
 * target holds now (the default, when printed before parsing changed it). */
static void usage_line(FILE *out, const wl_option *o)
{
    char flag[64], shown[32] = "";
    snprintf(flag, sizeof flag, "%s%s%s", o->name, o->kind == WL_OPTION_FLAG ? "" : " ",
             o->kind == WL_OPTION_FLAG ? "" : o->value_name);
    switch (o->kind) {
    case WL_OPTION_SIZE: wl_format_size(*(const uint64_t *)o->target, shown, sizeof shown); break;
    case WL_OPTION_INT:
    case WL_OPTION_COUNT: snprintf(shown, sizeof shown, "%d", *(const int *)o->target); break;
    case WL_OPTION_SECONDS: snprintf(shown, sizeof shown, "%g", *(const double *)o->target); break;
    case WL_OPTION_STRING:
        if (*(const char *const *)o->target)
            snprintf(shown, sizeof shown, "%s", *(const char *const *)o->target);
        break;
    case WL_OPTION_FLAG: break;
    }
    fprintf(out, "  %-16s %s%s%s%s\n", flag, o->help, *shown ? " (default " : "", shown,
            *shown ? ")" : "");
}

void wl_usage(const wl_program *program, FILE *out)
{
    wl_common_options defaults;
    wl_options_defaults(&defaults);
    wl_option table[COMMON_OPTIONS];
    size_t n = common_table(&defaults, table);
    fprintf(out, "usage: %s [options]\n  %s\n\ncommon options (sizes take K, M, G: powers of 1024):\n",
            program->name, program->summary);
    for (size_t i = 0; i < n; i++)
        usage_line(out, &table[i]);
    fprintf(out, "  %-16s %s\n", "-h, --help", "this text");
    if (program->option_count)
        fprintf(out, "\n%s options:\n", program->name);
    for (size_t i = 0; i < program->option_count; i++)
        usage_line(out, &program->options[i]);
}

void wl_usage_error(const wl_program *program, const char *message)
{
    fprintf(stderr, "%s: %s (%s --help for usage)\n", program->name, message, program->name);
}
