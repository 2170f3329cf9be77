/*
 * p2run_options.c - p2run's flags and files: the command line (parsed by the
 * one options module, wl_options.h, and worded as p2run always has), the
 * files the flags name (inputs readable, outputs writable, their identities),
 * programs as execvp would find them, and where p2run's own files lie (the
 * simulator, the default topology). The bottom of p2run: depends on
 * wl_options.h and p2run_internal.h only.
 */
#define _GNU_SOURCE
#include <errno.h>
#include <limits.h>
#include <stdarg.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/stat.h>
#include <unistd.h>

#include "p2run_internal.h"
#include "wl_options.h"

/* Where the simulator and the default topology are looked for, relative to
 * p2run's own directory once installed; the build defines them (and the build
 * tree's locations, used only when p2run runs from its build directory). */
#ifndef P2_INSTALL_TOPOLOGY_REL
#define P2_INSTALL_TOPOLOGY_REL "../share/peach2sim/topologies"
#endif
#ifndef P2_INSTALL_LIBEXEC_REL
#define P2_INSTALL_LIBEXEC_REL "../libexec/peach2sim"
#endif

static void usage(FILE *out)
{
    fprintf(out,
            "usage: p2run -n N [--topology FILE] [--map FILE] [--routing POLICY] [--params FILE]\n"
            "             [--clock model|cpu|instructions[=RATE]] [--stall SECONDS]\n"
            "             [--trace FILE] [--stats FILE] [--traffic FILE] [--timeout SECONDS]\n"
            "             [--launcher mpirun] [--gpu real|emulated|auto] -- PROGRAM [ARGS...]\n"
            "Runs PROGRAM as N ranks of a virtual PEACH2 cluster simulated by p2sim.\n"
            "  -n N               ranks (1..%d), one per node of the topology\n"
            "  --topology FILE    cluster topology (default: %s from $P2_TOPOLOGY_DIR,\n"
            "                     else ../share/peach2sim/topologies beside p2run; for a\n"
            "                     program that may use MPI, %s)\n"
            "  --map FILE         rank-to-node mapping (default: rank r on node r)\n"
            "  --routing POLICY   tie-break of equal-length paths (ring-split, the default;\n"
            "                     ring-first, s-first, balanced)\n"
            "  --params FILE      parameter file overriding the model's defaults\n"
            "  --clock CLOCK      rank time: model, modelled costs only (deterministic, the\n"
            "                     default); cpu, plus the program's measured CPU time\n"
            "                     (programs that poll memory); instructions[=RATE], plus\n"
            "                     its retired instructions at RATE per ns (default 2.8)\n"
            "  --stall SECONDS    end the job (status 5) when nothing moves in the model for\n"
            "                     this much wall time while running ranks hold it (default\n"
            "                     60; 0: never)\n"
            "  --trace FILE       Chrome-trace / Perfetto JSON of every TLP\n"
            "  --stats FILE       per-link and per-chip statistics as JSON\n"
            "  --traffic FILE     every transfer the networks carry (time, source and\n"
            "                     destination node, bytes) as CSV, for p2map\n"
            "  --timeout SECONDS  end the job (status 124) after this much wall time,\n"
            "                     the simulator's start-up included\n"
            "  --launcher mpirun  start the ranks with Open MPI's mpirun\n"
            "  --gpu MODE         CUDA runtime of the ranks: real (the GPU's), emulated\n"
            "                     (GPU memory in the model, no kernels), auto (default:\n"
            "                     emulated unless a GPU is usable)\n"
            "A program linked with Open MPI gets the virtual-time MPI layer (libp2mpi.so)\n"
            "preloaded: its messages move over the modelled InfiniBand rail. So does one\n"
            "that may load Open MPI at run time (a script, or a program that calls dlopen,\n"
            "as python3 with mpi4py): the process that starts MPI is the rank, once. A rank\n"
            "that starts Open MPI without the layer ends the job.\n",
            P2_JOB_MAX_RANKS, P2RUN_DEFAULT_TOPOLOGY, P2RUN_DEFAULT_MPI_TOPOLOGY);
}

static int usage_error(const char *fmt, ...) __attribute__((format(printf, 1, 2)));
static int usage_error(const char *fmt, ...)
{
    va_list args;
    va_start(args, fmt);
    fprintf(stderr, "p2run: ");
    vfprintf(stderr, fmt, args);
    fprintf(stderr, " (p2run --help for usage)\n");
    va_end(args);
    return P2RUN_USAGE;
}

/* ---- Flags and files ------------------------------------------------------ */

/* -n, --timeout and --stall as numbers. */
static int parse_numbers(const char *n, const char *timeout, const char *stall, options *o)
{
    if (stall) {
        char *end;
        errno = 0;
        o->stall_s = strtod(stall, &end);
        if (errno || end == stall || *end || !(o->stall_s >= 0))
            return usage_error("--stall: '%s' is not a number of seconds (0: never)", stall);
    }
    if (n) {
        long v;
        if (wl_parse_long(n, 1, P2_JOB_MAX_RANKS, &v) != 0) {
            char range[32];
            snprintf(range, sizeof range, "1 to %d", P2_JOB_MAX_RANKS);
            return usage_error("-n: '%s' is not a rank count from %s", n, range);
        }
        o->nranks = (int)v;
    }
    if (timeout && wl_parse_seconds(timeout, &o->timeout_s) != 0)
        return usage_error("--timeout: '%s' is not a positive number of seconds", timeout);
    return 0;
}

/* The flags' values, after the loop has taken them all. */
static int check_choices(const options *o)
{
    if (o->nranks == 0)
        return usage_error("-n N is required");
    if (strncmp(o->clock, "instructions=", 13) == 0) {
        char *end;
        errno = 0;
        double rate = strtod(o->clock + 13, &end);
        if (errno || end == o->clock + 13 || *end || !(rate > 0))
            return usage_error("--clock: '%s' is not instructions=RATE with RATE a positive "
                               "number of instructions per ns", o->clock);
    } else if (strcmp(o->clock, "model") != 0 && strcmp(o->clock, "cpu") != 0 &&
               strcmp(o->clock, "instructions") != 0) {
        return usage_error("--clock: '%s' is not 'model', 'cpu' or 'instructions[=RATE]'",
                           o->clock);
    }
    if (strcmp(o->gpu, "real") != 0 && strcmp(o->gpu, "emulated") != 0 &&
        strcmp(o->gpu, "auto") != 0)
        return usage_error("--gpu: '%s' is not 'real', 'emulated' or 'auto'", o->gpu);
    if (o->launcher && strcmp(o->launcher, "mpirun") != 0)
        return usage_error("--launcher: '%s' is not supported (only 'mpirun')", o->launcher);
    return 0;
}

/* A flag the parser refused (wl_parse_args), in p2run's words. */
static int flag_error(const wl_args_result *r)
{
    switch (r->error) {
    case WL_ARGS_UNKNOWN:
        return usage_error("unknown flag '%s'", r->arg);
    case WL_ARGS_MISSING:
        return usage_error("flag '%s' needs a value", r->option->name);
    case WL_ARGS_TWICE:
        return usage_error("flag '%s' is given twice ('%s' the second time)", r->option->name,
                           r->value);
    case WL_ARGS_EMPTY:
    case WL_ARGS_INVALID: /* every flag is text here: the checks come after */
        break;
    }
    return usage_error("flag '%s' needs a value, not an empty one", r->option->name);
}

/* The flags, up to "--" or the program: "--flag value", "--flag=value",
 * "-n4". -n and --timeout are read as numbers once every flag is taken. */
int parse_options(int argc, char **argv, options *o)
{
    memset(o, 0, sizeof *o);
    o->clock = "model";
    o->gpu = "auto";
    o->stall_s = P2RUN_DEFAULT_STALL_S;
    const char *n = NULL, *timeout = NULL, *stall = NULL;
    const wl_option flags[] = {
        {"--topology", WL_OPTION_STRING, &o->topology, "FILE", NULL},
        {"--map", WL_OPTION_STRING, &o->map, "FILE", NULL},
        {"--routing", WL_OPTION_STRING, &o->routing, "POLICY", NULL},
        {"--params", WL_OPTION_STRING, &o->params, "FILE", NULL},
        {"--clock", WL_OPTION_STRING, &o->clock, "model|cpu|instructions[=RATE]", NULL},
        {"--stall", WL_OPTION_STRING, &stall, "SECONDS", NULL},
        {"--trace", WL_OPTION_STRING, &o->trace, "FILE", NULL},
        {"--stats", WL_OPTION_STRING, &o->stats, "FILE", NULL},
        {"--traffic", WL_OPTION_STRING, &o->traffic, "FILE", NULL},
        {"--launcher", WL_OPTION_STRING, &o->launcher, "mpirun", NULL},
        {"--gpu", WL_OPTION_STRING, &o->gpu, "MODE", NULL},
        {"-n", WL_OPTION_STRING, &n, "N", NULL},
        {"--timeout", WL_OPTION_STRING, &timeout, "SECONDS", NULL},
    };
    /* A second one would silently replace the first; an empty one would
     * silently mean "not given". */
    const wl_args args = {
        .syntax = WL_SYNTAX_ANY_EQUALS | WL_SYNTAX_SHORT_ATTACHED | WL_SYNTAX_OPERANDS |
                  WL_SYNTAX_HELP | WL_SYNTAX_ONCE | WL_SYNTAX_NO_EMPTY,
        .options = flags,
        .option_count = sizeof flags / sizeof flags[0],
    };
    wl_args_result r;
    switch (wl_parse_args(&args, argc, argv, &r)) {
    case WL_PARSE_HELP:
        usage(stdout);
        exit(0);
    case WL_PARSE_ERROR:
        return flag_error(&r);
    case WL_PARSE_OK:
        break;
    }
    int rc = parse_numbers(n, timeout, stall, o);
    if (rc == 0)
        rc = check_choices(o);
    if (rc != 0)
        return rc;
    if (r.next >= argc)
        return usage_error("no program given: p2run -n N [flags] -- PROGRAM [ARGS...]");
    o->program = &argv[r.next];
    return 0;
}

int file_readable(const char *flag, const char *path)
{
    struct stat st;
    if (stat(path, &st) != 0) {
        fprintf(stderr, "p2run: %s: cannot read '%s': %s\n", flag, path, strerror(errno));
        return 0;
    }
    if (S_ISDIR(st.st_mode)) {
        fprintf(stderr, "p2run: %s: '%s' is a directory, not a file\n", flag, path);
        return 0;
    }
    if (!S_ISREG(st.st_mode)) { /* a FIFO or a device would block or never end */
        fprintf(stderr, "p2run: %s: %s: not a regular file\n", flag, path);
        return 0;
    }
    if (access(path, R_OK) != 0) {
        fprintf(stderr, "p2run: %s: cannot read '%s': %s\n", flag, path, strerror(errno));
        return 0;
    }
    return 1;
}

/* An output file the simulator will write: an existing file must be writable,
 * else its directory must be. Checked without creating or truncating it, so
 * that a bad path ends the job before the simulator or any rank starts. */
int file_writable(const char *flag, const char *path)
{
    struct stat st;
    if (stat(path, &st) == 0) {
        if (S_ISDIR(st.st_mode)) {
            fprintf(stderr, "p2run: %s: cannot write '%s': it is a directory\n", flag, path);
            return 0;
        }
        if (access(path, W_OK) != 0) {
            fprintf(stderr, "p2run: %s: cannot write '%s': %s\n", flag, path, strerror(errno));
            return 0;
        }
        return 1;
    }
    if (errno != ENOENT) {
        fprintf(stderr, "p2run: %s: cannot write '%s': %s\n", flag, path, strerror(errno));
        return 0;
    }
    char dir[PATH_MAX];
    snprintf(dir, sizeof dir, "%s", path);
    char *slash = strrchr(dir, '/');
    if (!slash)
        snprintf(dir, sizeof dir, ".");
    else if (slash == dir)
        dir[1] = '\0';
    else
        *slash = '\0';
    errno = 0;
    if (stat(dir, &st) != 0 || !S_ISDIR(st.st_mode)) {
        fprintf(stderr, "p2run: %s: cannot write '%s': directory '%s' %s\n", flag, path, dir,
                errno == ENOENT ? "does not exist" : errno ? strerror(errno) : "is not a directory");
        return 0;
    }
    if (access(dir, W_OK | X_OK) != 0) {
        fprintf(stderr, "p2run: %s: cannot write '%s': %s\n", flag, path, strerror(errno));
        return 0;
    }
    return 1;
}

void file_identify(const char *path, file_id *id)
{
    memset(id, 0, sizeof *id);
    struct stat st;
    if (stat(path, &st) == 0) {
        id->exists = 1;
        id->dev = st.st_dev;
        id->ino = st.st_ino;
        return;
    }
    char dir[PATH_MAX], real[PATH_MAX];
    snprintf(dir, sizeof dir, "%s", path);
    char *slash = strrchr(dir, '/');
    const char *base = slash ? path + (slash - dir) + 1 : path;
    if (!slash)
        snprintf(dir, sizeof dir, ".");
    else if (slash == dir)
        dir[1] = '\0';
    else
        *slash = '\0';
    snprintf(id->path, sizeof id->path, "%s/%s", realpath(dir, real) ? real : dir, base);
}

int same_file(const file_id *a, const file_id *b)
{
    if (a->exists != b->exists)
        return 0;
    return a->exists ? a->dev == b->dev && a->ino == b->ino : strcmp(a->path, b->path) == 0;
}

/* Finds an executable the way execvp would. Returns 1 and the path in `out`. */
int find_program(const char *name, char *out, size_t outlen)
{
    struct stat st;
    if (strchr(name, '/')) {
        snprintf(out, outlen, "%s", name);
        return stat(out, &st) == 0 && S_ISREG(st.st_mode) && access(out, X_OK) == 0;
    }
    const char *path = getenv("PATH");
    if (!path)
        path = "/usr/bin:/bin";
    while (*path) {
        const char *colon = strchr(path, ':');
        size_t len = colon ? (size_t)(colon - path) : strlen(path);
        snprintf(out, outlen, "%.*s/%s", (int)len, len ? path : ".", name);
        if (stat(out, &st) == 0 && S_ISREG(st.st_mode) && access(out, X_OK) == 0)
            return 1;
        path += len + (colon ? 1 : 0);
    }
    return 0;
}

int program_runnable(const char *what, const char *name)
{
    char path[PATH_MAX];
    if (find_program(name, path, sizeof path))
        return 1;
    struct stat st;
    if (strchr(name, '/') && stat(name, &st) == 0)
        fprintf(stderr, "p2run: %s '%s': not an executable file\n", what, name);
    else if (strchr(name, '/'))
        fprintf(stderr, "p2run: %s '%s': %s\n", what, name, strerror(errno ? errno : ENOENT));
    else
        fprintf(stderr, "p2run: %s '%s': not found in PATH\n", what, name);
    return 0;
}

/* The directory p2run's executable lies in ("" if unknown), symbolic links
 * resolved; and whether that is the build directory it was built in. */
const char *self_dir(void)
{
    static char dir[PATH_MAX - 128]; /* room for the suffixes appended to it */
    static int done;
    if (!done) {
        done = 1;
        ssize_t n = readlink("/proc/self/exe", dir, sizeof dir - 1);
        dir[n > 0 && (size_t)n < sizeof dir - 1 ? n : 0] = '\0';
        char *slash = strrchr(dir, '/');
        if (slash)
            *slash = '\0';
        else
            dir[0] = '\0';
    }
    return dir;
}

int in_build_tree(void)
{
#ifdef P2_BUILD_DIR
    char build[PATH_MAX];
    return self_dir()[0] && realpath(P2_BUILD_DIR, build) && strcmp(build, self_dir()) == 0;
#else
    return 0;
#endif
}

/* Appends `path` to the "looked in" list of an error message. */
static void searched_add(char *list, size_t len, const char *path)
{
    size_t used = strlen(list);
    snprintf(list + used, len - used, "%s%s", used ? ", " : "", path);
}

/* The default topology: in $P2_TOPOLOGY_DIR if set, else installed beside
 * p2run (../share/peach2sim/topologies), else, from the build tree, the
 * source tree's topologies/. Returns 0 (with a message naming every place
 * looked in) if none is readable. */
int default_topology(const char *name, char *out, size_t outlen)
{
    const char *dir = getenv("P2_TOPOLOGY_DIR");
    if (dir && *dir) {
        snprintf(out, outlen, "%s/%s", dir, name);
        return file_readable("default topology ($P2_TOPOLOGY_DIR)", out);
    }
    char searched[3 * PATH_MAX] = "";
    if (self_dir()[0]) {
        snprintf(out, outlen, "%s/%s/%s", self_dir(), P2_INSTALL_TOPOLOGY_REL,
                 name);
        if (access(out, R_OK) == 0)
            return 1;
        searched_add(searched, sizeof searched, out);
    }
#ifdef P2_SOURCE_DIR
    if (in_build_tree()) {
        snprintf(out, outlen, "%s/topologies/%s", P2_SOURCE_DIR, name);
        if (access(out, R_OK) == 0)
            return 1;
        searched_add(searched, sizeof searched, out);
    }
#endif
    fprintf(stderr, "p2run: default topology %s not found (looked in: %s); pass --topology "
                    "FILE or set P2_TOPOLOGY_DIR\n", name,
            searched[0] ? searched : "nowhere: p2run cannot tell where it lies");
    return 0;
}

/* A file p2run ships with: `$env` if set, else `name` next to p2run, else in
 * ../libexec/peach2sim beside it, else (run from the build tree) at
 * `build_path`. `mode` is X_OK for programs, R_OK for libraries. Returns 0
 * (with a message naming every place looked in) if none will do. */
int find_shipped(const char *what, const char *env, const char *name, int mode,
                 const char *build_path, char *out, size_t outlen)
{
    const char *set = getenv(env);
    if (set && *set && !what) {
        snprintf(out, outlen, "%s", set);
        return access(out, mode) == 0;
    }
    if (set && *set) {
        snprintf(out, outlen, "%s", set);
        char label[96];
        snprintf(label, sizeof label, "%s ($%s)", what, env);
        return mode == X_OK ? program_runnable(label, out) : file_readable(label, out);
    }
    char searched[3 * PATH_MAX] = "";
    if (self_dir()[0]) {
        const char *subdirs[] = {"", P2_INSTALL_LIBEXEC_REL "/"};
        for (size_t i = 0; i < sizeof subdirs / sizeof subdirs[0]; i++) {
            snprintf(out, outlen, "%s/%s%s", self_dir(), subdirs[i], name);
            if (access(out, mode) == 0)
                return 1;
            searched_add(searched, sizeof searched, out);
        }
    }
    if (build_path && in_build_tree()) {
        snprintf(out, outlen, "%s", build_path);
        if (access(out, mode) == 0)
            return 1;
        searched_add(searched, sizeof searched, out);
    }
    if (!what)
        return 0;
    fprintf(stderr, "p2run: %s %s not found (looked in: %s); set %s to its path\n", what, name,
            searched[0] ? searched : "nowhere: p2run cannot tell where it lies", env);
    return 0;
}

/* The simulator p2sim. */
int find_simulator(char *out, size_t outlen)
{
#ifdef P2_SIM_PATH
    const char *built = P2_SIM_PATH;
#else
    const char *built = NULL;
#endif
    return find_shipped("simulator", "P2_SIM", "p2sim", X_OK, built, out, outlen);
}
