/*
 * p2run - runs a program as N ranks of a virtual PEACH2 cluster.
 *
 *   p2run -n N [--topology FILE] [--map FILE] [--routing POLICY] [--params FILE]
 *         [--clock model|cpu] [--trace FILE] [--stats FILE] [--timeout SECONDS]
 *         [--launcher mpirun] [--gpu real|emulated|auto] -- PROGRAM [ARGS...]
 *
 * Creates the job segment (channel.h), starts the simulator (p2sim) and, once it
 * is ready, the N rank processes (or `mpirun -np N`, whose ranks attach with
 * the rank number Open MPI gives them). Then supervises: the job's status is
 *   0            every rank exited 0 and the simulator finished;
 *   the status   of the first rank that exited non-zero (128 + signal when a
 *                rank was killed; the signal is named);
 *   2            a bad flag, input or output file (named in the message): also
 *                a flag given twice, an output that is an input, the program
 *                or p2run's own, and an output the simulator could not write
 *                whole at the end;
 *   3            a deadlock (the simulator prints every rank's wait);
 *   124          --timeout expired, counted from the simulator's start (the
 *                simulator prints every rank's state);
 *   127          the program cannot be run;
 *   128 + signal p2run itself was interrupted.
 * On every path the remaining processes are ended (SIGTERM, then SIGKILL after
 * a grace period, to each child's process group: what a rank forked goes too)
 * and every shared-memory object of the job is removed.
 */
#define _GNU_SOURCE
#include <dirent.h>
#include <dlfcn.h>
#include <elf.h>
#include <errno.h>
#include <fcntl.h>
#include <limits.h>
#include <signal.h>
#include <stdarg.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/prctl.h>
#include <sys/stat.h>
#include <sys/types.h>
#include <sys/wait.h>
#include <time.h>
#include <unistd.h>

#include "channel.h"
#include "shm_guard.h"
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

extern char **environ;

enum {
    P2RUN_USAGE = 2,
    P2RUN_RANK_FAULT = 4, /* as the simulator's: a process of the job broke its shared memory */
    P2RUN_TIMEOUT = 124,
    P2RUN_NOEXEC = 127,
};
#define P2RUN_DEFAULT_TOPOLOGY "hapacs-tca-2x8.topo"
#define P2RUN_DEFAULT_MPI_TOPOLOGY "hapacs-tca-2x8-ib.topo" /* MPI programs: PEACH2 + IB */
/* How long ended processes get between SIGTERM and SIGKILL. */
#define P2RUN_GRACE_MS 2000
/* After a timeout, how long the simulator gets to print the ranks' states. */
#define P2RUN_DUMP_MS 300
/* Supervision wakes at least this often to notice state changes. */
#define P2RUN_POLL_MS 50

typedef struct options {
    int nranks;
    const char *topology, *map, *routing, *params, *clock, *trace, *stats, *launcher, *gpu;
    double timeout_s;
    char **program; /* PROGRAM ARGS..., NULL-terminated */
} options;

typedef struct child {
    pid_t pid;
    int live;
    int status; /* waitpid status once reaped */
    int verdict; /* the simulator's verdict when the child was reaped, read
                  * before the simulator could learn of its death */
} child;

typedef struct job_run {
    options opt;
    p2_job *job;
    p2_job_local local; /* the job's name and size, in our memory only */
    char segment[P2_JOB_NAME_MAX + 8];
    child sim;
    child *ranks; /* nranks direct children, or one mpirun */
    int nchildren;
    int mpirun;
    char mpi_layer[PATH_MAX]; /* the MPI layer preloaded into the ranks, or "" */
    sigset_t signals; /* SIGCHLD, SIGINT, SIGTERM, SIGHUP: taken by sigtimedwait */
    sigset_t old_mask;
} job_run;

static void usage(FILE *out)
{
    fprintf(out,
            "usage: p2run -n N [--topology FILE] [--map FILE] [--routing POLICY] [--params FILE]\n"
            "             [--clock model|cpu] [--trace FILE] [--stats FILE] [--timeout SECONDS]\n"
            "             [--launcher mpirun] [--gpu real|emulated|auto] -- PROGRAM [ARGS...]\n"
            "Runs PROGRAM as N ranks of a virtual PEACH2 cluster simulated by p2sim.\n"
            "  -n N               ranks (1..%d), one per node of the topology\n"
            "  --topology FILE    cluster topology (default: %s from $P2_TOPOLOGY_DIR,\n"
            "                     else ../share/peach2sim/topologies beside p2run; for a\n"
            "                     program linked with MPI, %s)\n"
            "  --map FILE         rank-to-node mapping (default: rank r on node r)\n"
            "  --routing POLICY   tie-break of equal-length paths (ring-split, the default;\n"
            "                     ring-first, s-first, balanced)\n"
            "  --params FILE      parameter file overriding the model's defaults\n"
            "  --clock model|cpu  rank time: modelled costs only (deterministic), or plus\n"
            "                     measured CPU time (programs that poll memory)\n"
            "  --trace FILE       Chrome-trace / Perfetto JSON of every TLP\n"
            "  --stats FILE       per-link and per-chip statistics as JSON\n"
            "  --timeout SECONDS  end the job (status 124) after this much wall time,\n"
            "                     the simulator's start-up included\n"
            "  --launcher mpirun  start the ranks with Open MPI's mpirun\n"
            "  --gpu MODE         CUDA runtime of the ranks: real (the GPU's), emulated\n"
            "                     (GPU memory in the model, no kernels), auto (default:\n"
            "                     emulated unless a GPU is usable)\n"
            "A program linked with Open MPI gets the virtual-time MPI layer (libp2mpi.so)\n"
            "preloaded: its messages move over the modelled InfiniBand rail.\n",
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

/* -n and --timeout as numbers. */
static int parse_numbers(const char *n, const char *timeout, options *o)
{
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
    if (strcmp(o->clock, "model") != 0 && strcmp(o->clock, "cpu") != 0)
        return usage_error("--clock: '%s' is not 'model' or 'cpu'", o->clock);
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
static int parse_options(int argc, char **argv, options *o)
{
    memset(o, 0, sizeof *o);
    o->clock = "model";
    o->gpu = "auto";
    const char *n = NULL, *timeout = NULL;
    const wl_option flags[] = {
        {"--topology", WL_OPTION_STRING, &o->topology, "FILE", NULL},
        {"--map", WL_OPTION_STRING, &o->map, "FILE", NULL},
        {"--routing", WL_OPTION_STRING, &o->routing, "POLICY", NULL},
        {"--params", WL_OPTION_STRING, &o->params, "FILE", NULL},
        {"--clock", WL_OPTION_STRING, &o->clock, "model|cpu", NULL},
        {"--trace", WL_OPTION_STRING, &o->trace, "FILE", NULL},
        {"--stats", WL_OPTION_STRING, &o->stats, "FILE", NULL},
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
    int rc = parse_numbers(n, timeout, o);
    if (rc == 0)
        rc = check_choices(o);
    if (rc != 0)
        return rc;
    if (r.next >= argc)
        return usage_error("no program given: p2run -n N [flags] -- PROGRAM [ARGS...]");
    o->program = &argv[r.next];
    return 0;
}

static int file_readable(const char *flag, const char *path)
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
static int file_writable(const char *flag, const char *path)
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

/* A file's identity: device and inode when it exists, else the path it would
 * be created at, its directory resolved. */
typedef struct file_id {
    int exists;
    dev_t dev;
    ino_t ino;
    char path[PATH_MAX + NAME_MAX + 2];
} file_id;

static void file_identify(const char *path, file_id *id)
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

static int same_file(const file_id *a, const file_id *b)
{
    if (a->exists != b->exists)
        return 0;
    return a->exists ? a->dev == b->dev && a->ino == b->ino : strcmp(a->path, b->path) == 0;
}

/* Finds an executable the way execvp would. Returns 1 and the path in `out`. */
static int find_program(const char *name, char *out, size_t outlen)
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

static int program_runnable(const char *what, const char *name)
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
static const char *self_dir(void)
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

static int in_build_tree(void)
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
static int default_topology(const char *name, char *out, size_t outlen)
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
static int find_shipped(const char *what, const char *env, const char *name, int mode,
                        const char *build_path, char *out, size_t outlen)
{
    const char *set = getenv(env);
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
    fprintf(stderr, "p2run: %s %s not found (looked in: %s); set %s to its path\n", what, name,
            searched[0] ? searched : "nowhere: p2run cannot tell where it lies", env);
    return 0;
}

/* The simulator p2sim. */
static int find_simulator(char *out, size_t outlen)
{
#ifdef P2_SIM_PATH
    const char *built = P2_SIM_PATH;
#else
    const char *built = NULL;
#endif
    return find_shipped("simulator", "P2_SIM", "p2sim", X_OK, built, out, outlen);
}

/* The virtual-time MPI layer (mpi/, libp2mpi.so) preloaded into MPI ranks;
 * built next to p2run, so the build tree needs no special case. */
static int find_mpi_layer(const char *why, char *out, size_t outlen)
{
    return find_shipped(why, "P2_MPI_LAYER", "libp2mpi.so", R_OK, NULL, out, outlen);
}

/* 1 if the ELF executable at `path` links Open MPI (a DT_NEEDED libmpi.so):
 * p2run then preloads the MPI layer into its ranks without mpirun too. */
static int links_mpi(const char *path)
{
    int found = 0;
    FILE *f = fopen(path, "rb");
    if (!f)
        return 0;
    Elf64_Ehdr eh;
    if (fread(&eh, sizeof eh, 1, f) != 1 || memcmp(eh.e_ident, ELFMAG, SELFMAG) != 0 ||
        eh.e_ident[EI_CLASS] != ELFCLASS64 || eh.e_shentsize != sizeof(Elf64_Shdr) ||
        eh.e_shnum == 0 || eh.e_shnum > 4096) {
        fclose(f);
        return 0;
    }
    Elf64_Shdr *sh = calloc(eh.e_shnum, sizeof *sh);
    if (sh && fseek(f, (long)eh.e_shoff, SEEK_SET) == 0 &&
        fread(sh, sizeof *sh, eh.e_shnum, f) == eh.e_shnum) {
        for (unsigned i = 0; i < eh.e_shnum && !found; i++) {
            if (sh[i].sh_type != SHT_DYNAMIC || sh[i].sh_link >= eh.e_shnum)
                continue;
            const Elf64_Shdr *str = &sh[sh[i].sh_link];
            size_t ndyn = sh[i].sh_size / sizeof(Elf64_Dyn);
            if (ndyn > 65536 || str->sh_size > (1u << 24))
                continue;
            Elf64_Dyn *dyn = calloc(ndyn ? ndyn : 1, sizeof *dyn);
            char *strs = calloc(str->sh_size + 1, 1);
            if (dyn && strs && fseek(f, (long)sh[i].sh_offset, SEEK_SET) == 0 &&
                fread(dyn, sizeof *dyn, ndyn, f) == ndyn &&
                fseek(f, (long)str->sh_offset, SEEK_SET) == 0 &&
                fread(strs, 1, str->sh_size, f) == str->sh_size)
                for (size_t d = 0; d < ndyn && !found; d++)
                    if (dyn[d].d_tag == DT_NEEDED && dyn[d].d_un.d_val < str->sh_size &&
                        strncmp(strs + dyn[d].d_un.d_val, "libmpi.so", 9) == 0)
                        found = 1;
            free(dyn);
            free(strs);
        }
    }
    free(sh);
    fclose(f);
    return found;
}

/* LD_PRELOAD=layer[:what was there]: the layer's MPI_* come before Open MPI's. */
static const char *preload_value(const job_run *jr)
{
    static char preload[2 * PATH_MAX + 32];
    const char *old = getenv("LD_PRELOAD");
    snprintf(preload, sizeof preload, "%s%s%s", jr->mpi_layer, old && *old ? ":" : "",
             old && *old ? old : "");
    return preload;
}

/* ---- The ranks' CUDA runtime ------------------------------------------------- */

#ifndef P2_CUDART_SONAME
#define P2_CUDART_SONAME "libcudart.so"
#endif

/* Whether the file at `path` contains `needle` (a crude but cheap look at a
 * program's dynamic section strings). */
static int file_contains(const char *path, const char *needle)
{
    FILE *f = fopen(path, "rb");
    if (!f)
        return 0;
    size_t n = strlen(needle), have = 0, got;
    char buf[1 << 16];
    int found = 0;
    while (!found && (got = fread(buf + have, 1, sizeof buf - have, f)) > 0) {
        have += got;
        found = memmem(buf, have, needle, n) != NULL;
        if (have > n) { /* keep the tail: a match may straddle reads */
            memmove(buf, buf + have - (n - 1), n - 1);
            have = n - 1;
        }
    }
    fclose(f);
    return found;
}

/* The program's path as execvp would find it ("" if not found). */
static void program_path(const char *prog, char *out, size_t outlen)
{
    out[0] = '\0';
    if (strchr(prog, '/')) {
        snprintf(out, outlen, "%s", prog);
        return;
    }
    const char *path = getenv("PATH");
    while (path && *path) {
        const char *colon = strchr(path, ':');
        size_t len = colon ? (size_t)(colon - path) : strlen(path);
        snprintf(out, outlen, "%.*s/%s", (int)len, path, prog);
        if (access(out, X_OK) == 0)
            return;
        path = colon ? colon + 1 : NULL;
    }
    out[0] = '\0';
}

/* The emulated runtime's directory: $P2_CUDA_EMU_DIR, else installed beside
 * p2run (../lib/peach2sim/cuda), else the build tree's. 0 if none holds it. */
static int find_cuda_emu(char *out, size_t outlen)
{
    char lib[PATH_MAX + 64];
    const char *env = getenv("P2_CUDA_EMU_DIR");
    if (env && *env) {
        snprintf(out, outlen, "%s", env);
        snprintf(lib, sizeof lib, "%s/%s", out, P2_CUDART_SONAME);
        return access(lib, R_OK) == 0;
    }
#ifdef P2_INSTALL_CUDA_EMU_REL
    if (self_dir()[0]) {
        snprintf(out, outlen, "%s/%s", self_dir(), P2_INSTALL_CUDA_EMU_REL);
        snprintf(lib, sizeof lib, "%s/%s", out, P2_CUDART_SONAME);
        if (access(lib, R_OK) == 0)
            return 1;
    }
#endif
#ifdef P2_CUDA_EMU_BUILD_DIR
    if (in_build_tree()) {
        snprintf(out, outlen, "%s", P2_CUDA_EMU_BUILD_DIR);
        snprintf(lib, sizeof lib, "%s/%s", out, P2_CUDART_SONAME);
        if (access(lib, R_OK) == 0)
            return 1;
    }
#endif
    return 0;
}

/* Whether a GPU is usable: the driver's device node exists and the driver
 * library, in a child (so p2run never initialises CUDA itself), finds a
 * device. *why says why not. */
static int gpu_usable(char *why, size_t whylen)
{
    if (access("/dev/nvidia0", F_OK) != 0 || access("/dev/nvidiactl", F_OK) != 0) {
        snprintf(why, whylen, "no /dev/nvidia0");
        return 0;
    }
    fflush(stdout);
    fflush(stderr);
    pid_t pid = fork();
    if (pid == 0) {
        void *h = dlopen("libcuda.so.1", RTLD_NOW | RTLD_LOCAL);
        if (!h)
            _exit(2);
        int (*cu_init)(unsigned) = (int (*)(unsigned))dlsym(h, "cuInit");
        int (*cu_count)(int *) = (int (*)(int *))dlsym(h, "cuDeviceGetCount");
        int n = 0;
        if (!cu_init || !cu_count || cu_init(0) != 0 || cu_count(&n) != 0 || n < 1)
            _exit(3);
        _exit(0);
    }
    int status = 0;
    if (pid < 0 || waitpid(pid, &status, 0) < 0 || !WIFEXITED(status)) {
        snprintf(why, whylen, "cannot probe the driver");
        return 0;
    }
    if (WEXITSTATUS(status) == 2)
        snprintf(why, whylen, "no driver library libcuda.so.1");
    else if (WEXITSTATUS(status) != 0)
        snprintf(why, whylen, "the driver finds no device");
    return WEXITSTATUS(status) == 0;
}

/* --gpu: picks the ranks' CUDA runtime and says which in one line, for
 * programs that use CUDA (or when --gpu was given). For the emulated one,
 * puts its directory first on LD_LIBRARY_PATH (inherited by the ranks and by
 * mpirun). Returns 0, or P2RUN_NOEXEC when the forced choice is impossible. */
static int select_gpu(const options *o)
{
    char path[PATH_MAX], why[128] = "";
    program_path(o->program[0], path, sizeof path);
    int uses_cuda = path[0] && file_contains(path, "libcudart.so");
    int explicit_choice = strcmp(o->gpu, "auto") != 0;
    /* The static runtime carries its error names (a program that only uses
     * the driver API, libcuda.so.1, does not). */
    if (path[0] && !uses_cuda && file_contains(path, "cudaErrorInsufficientDriver"))
        fprintf(stderr, "p2run: warning: %s seems to link the CUDA runtime statically (nvcc's "
                        "default); build it with -cudart shared so that p2run can choose its "
                        "runtime\n", o->program[0]);
    if (!uses_cuda && !explicit_choice)
        return 0;
    int usable = strcmp(o->gpu, "emulated") != 0 && gpu_usable(why, sizeof why);
    if (strcmp(o->gpu, "real") == 0 || usable) {
        /* Forced onto a machine without a usable GPU, the ranks' runtime will
         * say so itself; the line says why already. */
        fprintf(stderr, "p2run: GPU: the real CUDA runtime (%s%s)\n",
                !explicit_choice ? "a GPU is usable" : usable ? "--gpu real" : "--gpu real; no usable GPU: ",
                explicit_choice && !usable ? why : "");
        return 0;
    }
    char dir[PATH_MAX];
    if (!find_cuda_emu(dir, sizeof dir)) {
        fprintf(stderr, "p2run: GPU: the emulated CUDA runtime (%s) is not installed beside "
                        "p2run; set P2_CUDA_EMU_DIR to its directory\n", P2_CUDART_SONAME);
        return explicit_choice ? P2RUN_NOEXEC : 0;
    }
    fprintf(stderr, "p2run: GPU: emulated CUDA runtime (%s%s) from %s\n",
            explicit_choice ? "--gpu emulated" : "no usable GPU: ", explicit_choice ? "" : why,
            dir);
    const char *old = getenv("LD_LIBRARY_PATH");
    char *value = malloc(strlen(dir) + (old ? strlen(old) : 0) + 2);
    if (!value)
        return 1;
    sprintf(value, "%s%s%s", dir, old && *old ? ":" : "", old && *old ? old : "");
    setenv("LD_LIBRARY_PATH", value, 1);
    free(value);
    return 0;
}

/* ---- Processes ------------------------------------------------------------ */

static double now_s(void)
{
    struct timespec ts;
    clock_gettime(CLOCK_MONOTONIC, &ts);
    return (double)ts.tv_sec + (double)ts.tv_nsec * 1e-9;
}

/* In the child between fork and exec: default signal state, a process group
 * of its own (so that p2run can end whatever it forks), and die with p2run
 * so that nothing outlives the job even if p2run is killed. */
static void child_setup(job_run *jr, int death_signal)
{
    pid_t parent = jr->local.launcher_pid;
    signal(SIGINT, SIG_DFL);
    signal(SIGTERM, SIG_DFL);
    signal(SIGHUP, SIG_DFL);
    signal(SIGCHLD, SIG_DFL);
    sigprocmask(SIG_SETMASK, &jr->old_mask, NULL);
    setpgid(0, 0);
    /* A background group that reads the terminal is stopped (SIGTTIN) and
     * would hold the job forever: it reads end-of-file instead. */
    if (isatty(STDIN_FILENO)) {
        int null = open("/dev/null", O_RDONLY);
        if (null >= 0) {
            dup2(null, STDIN_FILENO);
            close(null);
        }
    }
    prctl(PR_SET_PDEATHSIG, death_signal);
    if (getppid() != parent)
        _exit(P2RUN_NOEXEC); /* p2run died before prctl took effect */
}

static pid_t spawn(job_run *jr, char **argv, int death_signal, int rank)
{
    fflush(stdout);
    fflush(stderr);
    pid_t pid = fork();
    if (pid < 0) {
        fprintf(stderr, "p2run: fork: %s\n", strerror(errno));
        return -1;
    }
    if (pid > 0) {
        setpgid(pid, pid); /* as the child does: whichever runs first */
        return pid;
    }
    child_setup(jr, death_signal);
    setenv("P2_JOB", jr->segment, 1);
    if (rank >= 0) {
        char v[16];
        snprintf(v, sizeof v, "%d", rank);
        setenv("P2_RANK", v, 1);
        snprintf(v, sizeof v, "%d", jr->opt.nranks);
        setenv("P2_SIZE", v, 1);
        if (jr->mpi_layer[0])
            setenv("LD_PRELOAD", preload_value(jr), 1);
    }
    execvp(argv[0], argv);
    if (rank >= 0)
        fprintf(stderr, "p2run: rank %d: cannot run '%s': %s\n", rank, argv[0], strerror(errno));
    else
        fprintf(stderr, "p2run: cannot run '%s': %s\n", argv[0], strerror(errno));
    _exit(P2RUN_NOEXEC);
}

static int live_children(const job_run *jr)
{
    int n = jr->sim.live;
    for (int i = 0; i < jr->nchildren; i++)
        n += jr->ranks[i].live;
    return n;
}

/* Waits for signals up to `ms` (SIGCHLD is handled by the caller's reap).
 * Returns the terminating signal taken (SIGINT, SIGTERM, SIGHUP) or 0. */
static int wait_signal(job_run *jr, long ms)
{
    struct timespec ts = {ms / 1000, (ms % 1000) * 1000000L};
    siginfo_t info;
    int sig = sigtimedwait(&jr->signals, &info, &ts);
    if (sig == SIGINT || sig == SIGTERM || sig == SIGHUP)
        return sig;
    return 0;
}

/* Whether child `pid` has ended, and its status as waitpid gives it (Linux's
 * encoding, which the W* macros read). The child stays a zombie (WNOWAIT)
 * until terminate_all: its pid, which names its process group, cannot be
 * reused meanwhile, so signalling the group never reaches a stranger. */
static int child_ended(pid_t pid, int *status)
{
    siginfo_t info;
    memset(&info, 0, sizeof info);
    if (waitid(P_PID, (id_t)pid, &info, WEXITED | WNOHANG | WNOWAIT) != 0 || info.si_pid != pid)
        return 0;
    if (info.si_code == CLD_EXITED)
        *status = (info.si_status & 0xff) << 8;
    else
        *status = (info.si_status & 0x7f) | (info.si_code == CLD_DUMPED ? 0x80 : 0);
    return 1;
}

/* Collects every child that has ended; returns how many. */
static int reap(job_run *jr, void (*on_exit)(job_run *, child *, int rank))
{
    int n = 0;
    for (int i = -1; i < jr->nchildren; i++) {
        child *c = i < 0 ? &jr->sim : &jr->ranks[i];
        int st;
        if (!c->live || !child_ended(c->pid, &st))
            continue;
        c->live = 0;
        c->status = st;
        c->verdict = p2_ld_sc(&jr->job->sim_verdict);
        n++;
        if (i >= 0 && !jr->mpirun) {
            /* The simulator stops counting on this rank once its ring is drained. */
            p2_st_sc(&jr->job->ranks[i].wait_status, st);
            p2_st_sc(&jr->job->ranks[i].reaped, 1);
            p2_job_ring(jr->job);
        }
        if (on_exit)
            on_exit(jr, c, i);
    }
    return n;
}

/* Whether `pgid` names the process group of one of our children. */
static int our_group(const job_run *jr, pid_t pgid)
{
    if (pgid > 0 && pgid == jr->sim.pid)
        return 1;
    for (int i = 0; i < jr->nchildren; i++)
        if (pgid > 0 && pgid == jr->ranks[i].pid)
            return 1;
    return 0;
}

/* Whether a process of one of our children's groups is still there and not
 * a zombie (a leader, our unreaped child, may be one). Only /proc tells them
 * apart. */
static int groups_running(const job_run *jr)
{
    DIR *d = opendir("/proc");
    if (!d)
        return 0;
    int found = 0;
    struct dirent *e;
    while (!found && (e = readdir(d)) != NULL) {
        if (e->d_name[0] < '0' || e->d_name[0] > '9')
            continue;
        char path[300], buf[512];
        snprintf(path, sizeof path, "/proc/%s/stat", e->d_name);
        FILE *f = fopen(path, "r");
        if (!f)
            continue;
        size_t len = fread(buf, 1, sizeof buf - 1, f);
        fclose(f);
        buf[len] = '\0';
        char *comm_end = strrchr(buf, ')'); /* the command name may hold anything */
        char state;
        int ppid, pgrp;
        found = comm_end && sscanf(comm_end + 1, " %c %d %d", &state, &ppid, &pgrp) == 3 &&
                state != 'Z' && state != 'X' && our_group(jr, pgrp);
    }
    closedir(d);
    return found;
}

/* Signals every child's process group: what a rank forked goes too, even
 * after the rank itself ended. */
static void signal_groups(const job_run *jr, int sig)
{
    if (jr->sim.pid > 0)
        kill(-jr->sim.pid, sig);
    for (int i = 0; i < jr->nchildren; i++)
        if (jr->ranks[i].pid > 0)
            kill(-jr->ranks[i].pid, sig);
}

/* Ends every remaining process of the job: SIGTERM to each child's group, a
 * grace period, SIGKILL; then reaps the children. */
static void terminate_all(job_run *jr)
{
    signal_groups(jr, SIGTERM);
    double deadline = now_s() + P2RUN_GRACE_MS / 1000.0;
    while ((live_children(jr) || groups_running(jr)) && now_s() < deadline) {
        wait_signal(jr, P2RUN_POLL_MS / 5);
        reap(jr, NULL);
    }
    signal_groups(jr, SIGKILL);
    for (int i = -1; i < jr->nchildren; i++) {
        child *c = i < 0 ? &jr->sim : &jr->ranks[i];
        if (c->pid > 0)
            waitpid(c->pid, NULL, 0);
        c->live = 0;
    }
}

/* The shell's convention: a signal's death is 128 + its number. */
static int exit_code(int st)
{
    if (WIFEXITED(st))
        return WEXITSTATUS(st);
    if (WIFSIGNALED(st))
        return 128 + WTERMSIG(st);
    return 1;
}

static int failed(int st)
{
    return !WIFEXITED(st) || WEXITSTATUS(st) != 0;
}

static void describe_exit(const char *who, pid_t pid, int st)
{
    if (WIFSIGNALED(st))
        fprintf(stderr, "p2run: %s (pid %d) was killed by signal %d (%s)%s\n", who, (int)pid,
                WTERMSIG(st), strsignal(WTERMSIG(st)), WCOREDUMP(st) ? ", core dumped" : "");
    else
        fprintf(stderr, "p2run: %s (pid %d) exited with status %d\n", who, (int)pid,
                exit_code(st));
}

static void build_sim_argv(job_run *jr, const char *sim, const char *topology, char **argv)
{
    int a = 0;
    argv[a++] = (char *)sim;
    argv[a++] = "--job";
    argv[a++] = jr->segment;
    argv[a++] = "--topology";
    argv[a++] = (char *)topology;
    argv[a++] = "--clock";
    argv[a++] = (char *)jr->opt.clock;
    const char *pairs[][2] = {{"--map", jr->opt.map},       {"--routing", jr->opt.routing},
                              {"--params", jr->opt.params}, {"--trace", jr->opt.trace},
                              {"--stats", jr->opt.stats}};
    for (size_t i = 0; i < sizeof pairs / sizeof pairs[0]; i++)
        if (pairs[i][1]) {
            argv[a++] = (char *)pairs[i][0];
            argv[a++] = (char *)pairs[i][1];
        }
    argv[a] = NULL;
}

/* mpirun [--allow-run-as-root] --oversubscribe --bind-to none -np N -x P2_JOB
 *        [-x P2_...] PROGRAM ARGS */
static char **build_mpirun_argv(job_run *jr)
{
    int nprog = 0, nenv = 0;
    while (jr->opt.program[nprog])
        nprog++;
    for (char **e = environ; *e; e++)
        nenv++;
    char **argv = calloc((size_t)(nprog + 2 * nenv + 16), sizeof *argv);
    if (!argv)
        return NULL;
    int a = 0;
    argv[a++] = "mpirun";
    if (geteuid() == 0)
        argv[a++] = "--allow-run-as-root";
    argv[a++] = "--oversubscribe"; /* 16 ranks on 2 cores */
    argv[a++] = "--bind-to";
    argv[a++] = "none";
    argv[a++] = "-np";
    static char np[16];
    snprintf(np, sizeof np, "%d", jr->opt.nranks);
    argv[a++] = np;
    argv[a++] = "-x";
    argv[a++] = "P2_JOB";
    /* The MPI layer goes first, so its MPI_* calls come before Open MPI's. */
    static char preload[2 * PATH_MAX + 48];
    snprintf(preload, sizeof preload, "LD_PRELOAD=%s", preload_value(jr));
    argv[a++] = "-x";
    argv[a++] = preload;
    /* The emulated CUDA runtime's directory (--gpu, select_gpu) reaches ranks
     * that a remote or daemon-spawned launch would not give our environment. */
    if (getenv("LD_LIBRARY_PATH")) {
        argv[a++] = "-x";
        argv[a++] = "LD_LIBRARY_PATH";
    }
    /* NAME=VALUE, as our environment has it: nothing to allocate and free. */
    for (char **e = environ; *e; e++) {
        if (strncmp(*e, "P2_", 3) != 0 || strncmp(*e, "P2_JOB=", 7) == 0 || !strchr(*e, '='))
            continue;
        argv[a++] = "-x";
        argv[a++] = *e;
    }
    for (int i = 0; i < nprog; i++)
        argv[a++] = jr->opt.program[i];
    argv[a] = NULL;
    return argv;
}

/* ---- The job ---------------------------------------------------------------- */

static int g_status = -1; /* the job's status once decided */

static void on_child_exit(job_run *jr, child *c, int rank)
{
    if (g_status >= 0)
        return;
    if (c == &jr->sim) {
        if (failed(c->status) && WIFSIGNALED(c->status))
            describe_exit("simulator", c->pid, c->status);
        return; /* the main loop decides: a rank's own exit may explain it */
    }
    if (!failed(c->status))
        return;
    /* A rank that failed because the simulator gave up (a deadlock) does not
     * hide the simulator's verdict; one that left on its own (it said goodbye
     * on its channel), died before the simulator had a verdict, or was killed
     * by a signal p2run does not send is the cause, and its status is the
     * job's. The verdict is the one read when the rank was reaped, before the
     * simulator was told: a deadlock the rank's death led to is no verdict on
     * the rank (the simulator stores its verdict before it ends, and a rank
     * ends on the simulator's end only after that). */
    int own_signal = WIFSIGNALED(c->status) && WTERMSIG(c->status) != SIGTERM &&
                     WTERMSIG(c->status) != SIGKILL;
    if (c->verdict != 0 && !jr->mpirun && !own_signal &&
        p2_ld_sc(&jr->job->ranks[rank].state) != P2_RANK_EXITING)
        return;
    char who[64];
    if (jr->mpirun)
        snprintf(who, sizeof who, "mpirun");
    else
        snprintf(who, sizeof who, "rank %d", rank);
    describe_exit(who, c->pid, c->status);
    g_status = exit_code(c->status);
}

/* The simulator's status when it failed: says why when the simulator itself
 * gives no verdict of its own (it exits 128 + n when a signal stopped it). */
static int sim_failure(const job_run *jr)
{
    int st = jr->sim.status;
    if (WIFEXITED(st) && WEXITSTATUS(st) > 128) {
        int sig = WEXITSTATUS(st) - 128;
        fprintf(stderr, "p2run: the simulator (pid %d) was terminated by signal %d (%s); "
                        "ending the job\n", (int)jr->sim.pid, sig, strsignal(sig));
    }
    return exit_code(st);
}

static int ranks_live(const job_run *jr)
{
    for (int i = 0; i < jr->nchildren; i++)
        if (jr->ranks[i].live)
            return 1;
    return 0;
}

/* Ranks still running that already sent their exit on the channel. */
static int leaving_ranks(const job_run *jr)
{
    if (jr->mpirun)
        return 0;
    for (int i = 0; i < jr->nchildren; i++)
        if (jr->ranks[i].live && p2_ld_sc(&jr->job->ranks[i].state) == P2_RANK_EXITING)
            return 1;
    return 0;
}

/* Whether a process of the job shrank the job segment under us (its mapping
 * is then private zero pages: nothing read from it means anything). */
static int segment_lost(const job_run *jr)
{
    if (!p2_shm_guard_lost())
        return 0;
    fprintf(stderr, "p2run: the job segment %s shrank under p2run (a process of the job "
                    "truncated it); ending the job\n", jr->segment);
    return 1;
}

/* Refuses an output file that is the other output (the two JSON documents
 * would interleave), an input file, the program or one of p2run's own files
 * (the simulator would truncate it: --stats naming the program used to leave
 * it empty). */
static int outputs_distinct(const job_run *jr, const char *topology, const char *sim)
{
    const options *o = &jr->opt;
    char prog[PATH_MAX] = "", self[PATH_MAX] = "";
    if (!find_program(o->program[0], prog, sizeof prog))
        prog[0] = '\0';
    if (!realpath("/proc/self/exe", self))
        self[0] = '\0';
    const struct {
        const char *what, *path;
    } others[] = {{"the --topology file", topology}, {"the --map file", o->map},
                  {"the --params file", o->params},  {"the program", prog},
                  {"p2run itself", self},            {"the simulator", sim},
                  {"the MPI layer", jr->mpi_layer}};
    file_id out, other;
    if (o->stats && o->trace) {
        file_identify(o->stats, &out);
        file_identify(o->trace, &other);
        if (same_file(&out, &other)) {
            fprintf(stderr, "p2run: --stats and --trace name the same file ('%s', '%s'); give "
                            "each its own\n", o->stats, o->trace);
            return 0;
        }
    }
    for (int k = 0; k < 2; k++) {
        const char *flag = k ? "--stats" : "--trace", *path = k ? o->stats : o->trace;
        if (!path)
            continue;
        file_identify(path, &out);
        for (size_t i = 0; i < sizeof others / sizeof others[0]; i++) {
            if (!others[i].path || !others[i].path[0])
                continue;
            file_identify(others[i].path, &other);
            if (same_file(&out, &other)) {
                fprintf(stderr, "p2run: %s: '%s' is %s (%s); it would be overwritten\n", flag,
                        path, others[i].what, others[i].path);
                return 0;
            }
        }
    }
    return 1;
}

/* Everything that can be checked before the job starts: the flags' files,
 * the program, the simulator, the runtime. Fills `topology` and `sim`;
 * returns 0 or the job's status. */
static int check_job(job_run *jr, char *topology, char *sim)
{
    options *o = &jr->opt;
    if (o->topology) {
        snprintf(topology, PATH_MAX, "%s", o->topology);
        if (!file_readable("--topology", topology))
            return P2RUN_USAGE;
    }
    if ((o->map && !file_readable("--map", o->map)) ||
        (o->params && !file_readable("--params", o->params)) ||
        (o->trace && !file_writable("--trace", o->trace)) ||
        (o->stats && !file_writable("--stats", o->stats)))
        return P2RUN_USAGE;
    if (!program_runnable("program", o->program[0]))
        return P2RUN_NOEXEC;
    if (jr->mpirun && (!program_runnable("--launcher", "mpirun") ||
                       !find_mpi_layer("--launcher mpirun: the MPI layer", jr->mpi_layer,
                                       sizeof jr->mpi_layer)))
        return P2RUN_NOEXEC;
    char prog[PATH_MAX];
    if (!jr->mpirun && find_program(o->program[0], prog, sizeof prog) && links_mpi(prog) &&
        !find_mpi_layer("an MPI program: the MPI layer", jr->mpi_layer, sizeof jr->mpi_layer))
        return P2RUN_NOEXEC;
    /* MPI messages move over the InfiniBand rail: MPI programs get the
     * cluster with both networks by default. */
    if (!o->topology && !default_topology(jr->mpi_layer[0] ? P2RUN_DEFAULT_MPI_TOPOLOGY
                                                            : P2RUN_DEFAULT_TOPOLOGY,
                                          topology, PATH_MAX))
        return P2RUN_USAGE;
    if (!find_simulator(sim, PATH_MAX))
        return P2RUN_NOEXEC;
    if (!outputs_distinct(jr, topology, sim))
        return P2RUN_USAGE;
    return select_gpu(o);
}

/* The job segment, under a name nobody can guess (channel.h). */
static int create_job(job_run *jr)
{
    char owner[32];
    snprintf(owner, sizeof owner, "%d", (int)getpid());
    jr->job = p2_job_create(owner, (unsigned)jr->opt.nranks,
                            strcmp(jr->opt.clock, "cpu") == 0 ? P2_CLOCK_CPU : P2_CLOCK_MODEL,
                            &jr->local);
    if (!jr->job) {
        fprintf(stderr, "p2run: cannot create the job's shared memory /p2-%s-...: %s\n", owner,
                strerror(errno));
        return 1;
    }
    p2_job_segment_name(&jr->local, jr->segment, sizeof jr->segment);
    p2_shm_guard(jr->job, jr->local.bytes, jr->segment);
    return 0;
}

/* The simulator ended before it was ready. A bad input file it names
 * itself; a wrong $P2_SIM (/bin/false) says nothing: say it either way. */
static int sim_ended_early(const job_run *jr, const char *sim)
{
    int st = jr->sim.status;
    if (WIFEXITED(st) && WEXITSTATUS(st) <= 128)
        fprintf(stderr, "p2run: the simulator %s (pid %d) exited with status %d before it was "
                        "ready\n", sim, (int)jr->sim.pid, WEXITSTATUS(st));
    return failed(st) ? sim_failure(jr) : 1;
}

/* Starts the simulator and waits until it is ready: a bad topology or
 * parameter file ends the job before any rank starts. Returns 0 or the
 * job's status. */
static int start_simulator(job_run *jr, const char *sim, const char *topology, double deadline)
{
    char *sim_argv[32];
    build_sim_argv(jr, sim, topology, sim_argv);
    setenv("SYSTEMC_DISABLE_COPYRIGHT_MESSAGE", "1", 0); /* keep the job's output its own */
    jr->sim.pid = spawn(jr, sim_argv, SIGTERM, -1);
    if (jr->sim.pid < 0)
        return 1;
    jr->sim.live = 1;
    for (;;) {
        int sig = wait_signal(jr, 5);
        reap(jr, on_child_exit);
        if (sig) {
            fprintf(stderr, "p2run: interrupted by signal %d (%s)\n", sig, strsignal(sig));
            return 128 + sig;
        }
        if (segment_lost(jr))
            return P2RUN_RANK_FAULT;
        if (p2_ld_sc(&jr->job->sim_state) == P2_SIM_READY)
            return 0;
        if (deadline > 0 && now_s() >= deadline && jr->sim.live) {
            fprintf(stderr, "p2run: timeout: the simulator was not ready after %g s\n",
                    jr->opt.timeout_s);
            return P2RUN_TIMEOUT;
        }
        if (!jr->sim.live)
            return sim_ended_early(jr, sim);
    }
}

/* The ranks, or one mpirun that starts them. Returns 0 or 1. */
static int start_ranks(job_run *jr)
{
    if (jr->mpirun) {
        char **argv = build_mpirun_argv(jr);
        jr->ranks = calloc(1, sizeof *jr->ranks);
        if (!argv || !jr->ranks) {
            free(argv);
            return 1;
        }
        jr->nchildren = 1;
        jr->ranks[0].pid = spawn(jr, argv, SIGTERM, -1);
        free(argv);
        if (jr->ranks[0].pid < 0)
            return 1;
        jr->ranks[0].live = 1;
        return 0;
    }
    jr->ranks = calloc((size_t)jr->opt.nranks, sizeof *jr->ranks);
    if (!jr->ranks)
        return 1;
    for (int r = 0; r < jr->opt.nranks; r++) {
        pid_t pid = spawn(jr, jr->opt.program, SIGKILL, r);
        if (pid < 0)
            return 1;
        jr->ranks[r].pid = pid;
        jr->ranks[r].live = 1;
        jr->nchildren = r + 1;
    }
    return 0;
}

/* Watches the running job until its status is decided. */
static int supervise(job_run *jr, double deadline)
{
    const options *o = &jr->opt;
    double unwind_deadline = 0;
    int shutdown_sent = 0;
    for (;;) {
        long ms = P2RUN_POLL_MS;
        if (deadline > 0) {
            double left = deadline - now_s();
            if (left <= 0) {
                fprintf(stderr, "p2run: timeout: the job ran longer than %g s\n", o->timeout_s);
                if (jr->sim.live) {
                    kill(jr->sim.pid, SIGUSR1); /* print every rank's state */
                    double until = now_s() + P2RUN_DUMP_MS / 1000.0;
                    while (jr->sim.live && now_s() < until) {
                        wait_signal(jr, P2RUN_POLL_MS / 5);
                        reap(jr, on_child_exit);
                    }
                }
                return g_status >= 0 ? g_status : P2RUN_TIMEOUT;
            }
            if (left * 1000 < ms)
                ms = (long)(left * 1000) + 1;
        }
        int sig = wait_signal(jr, ms);
        reap(jr, on_child_exit);
        if (sig) {
            fprintf(stderr, "p2run: interrupted by signal %d (%s)\n", sig, strsignal(sig));
            return 128 + sig;
        }
        if (segment_lost(jr))
            return P2RUN_RANK_FAULT;
        if (g_status >= 0)
            return g_status;
        if (!jr->sim.live && failed(jr->sim.status)) {
            /* The simulator failed (a deadlock, say). A rank that left on its
             * own just before, and is still exiting, may be the cause: give it
             * a moment to report its status. */
            if (leaving_ranks(jr) && unwind_deadline == 0)
                unwind_deadline = now_s() + P2RUN_GRACE_MS / 1000.0;
            if (!leaving_ranks(jr) || now_s() > unwind_deadline)
                return sim_failure(jr);
            continue;
        }
        if (!ranks_live(jr)) {
            if (!shutdown_sent) {
                /* Every rank is gone (mpirun's ranks never reaped by us). */
                p2_st_sc(&jr->job->shutdown, 1);
                p2_job_ring(jr->job);
                shutdown_sent = 1;
            }
            if (!jr->sim.live)
                return failed(jr->sim.status) ? sim_failure(jr) : 0;
        } else if (!jr->sim.live) {
            /* The simulator finished (every rank sent its exit) and the ranks
             * are still unwinding: wait for them, but not forever. */
            if (unwind_deadline == 0)
                unwind_deadline = now_s() + P2RUN_GRACE_MS / 1000.0;
            else if (now_s() > unwind_deadline) {
                fprintf(stderr, "p2run: ranks still running %g s after they all left the "
                                "simulator; ending them\n", P2RUN_GRACE_MS / 1000.0);
                return 1;
            }
        }
    }
}


static int run_job(job_run *jr)
{
    char topology[PATH_MAX], sim[PATH_MAX];
    int rc = check_job(jr, topology, sim);
    if (rc == 0)
        rc = create_job(jr);
    if (rc != 0)
        return rc;
    /* --timeout counts from here: a simulator that never gets ready is ended too. */
    double deadline = jr->opt.timeout_s > 0 ? now_s() + jr->opt.timeout_s : 0;
    rc = start_simulator(jr, sim, topology, deadline);
    if (rc == 0)
        rc = start_ranks(jr);
    return rc != 0 ? rc : supervise(jr, deadline);
}

int main(int argc, char **argv)
{
    job_run jr;
    memset(&jr, 0, sizeof jr);
    int rc = parse_options(argc, argv, &jr.opt);
    if (rc != 0)
        return rc;
    jr.mpirun = jr.opt.launcher != NULL;

    /* Signals are taken synchronously (sigtimedwait), so no handler can run in
     * the middle of a fork or a cleanup. */
    sigemptyset(&jr.signals);
    sigaddset(&jr.signals, SIGCHLD);
    sigaddset(&jr.signals, SIGINT);
    sigaddset(&jr.signals, SIGTERM);
    sigaddset(&jr.signals, SIGHUP);
    sigprocmask(SIG_BLOCK, &jr.signals, &jr.old_mask);

    int status = run_job(&jr);
    terminate_all(&jr);
    if (jr.job) {
        p2_job_detach(jr.job, &jr.local);
        p2_job_unlink_all(jr.local.name);
    }
    free(jr.ranks);
    return status;
}
