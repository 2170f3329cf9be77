/*
 * p2run_internal.h - what the parts of p2run share: its exit statuses and
 * timings, the job's state (job_run) and each part's calls. The parts depend
 * one way, each only on those listed above it:
 *
 *   p2run_options.c  flags and files: the command line (wl_options.h), the
 *                    files the flags name, programs as execvp finds them, and
 *                    where p2run's own files lie (p2sim, the default topology)
 *   p2run_runtime.c  the ranks' runtime: the MPI layer preloaded into MPI
 *                    programs, and the CUDA runtime they get (--gpu)
 *   p2run_process.c  the processes: starting them, waiting for signals,
 *                    reaping, ending every one with its process group
 *   p2run.c          the job: checks, start, supervision, status (main)
 *
 * Internal to p2run (emu/CMakeLists.txt); depends on channel.h.
 */
#ifndef P2RUN_INTERNAL_H
#define P2RUN_INTERNAL_H

#include <limits.h>
#include <signal.h>
#include <stddef.h>
#include <sys/types.h>

#include "channel.h"

enum {
    P2RUN_USAGE = 2,
    P2RUN_RANK_FAULT = 4, /* as the simulator's: a process of the job broke its shared memory */
    P2RUN_TIMEOUT = 124,
    P2RUN_NOEXEC = 127,
};
#define P2RUN_DEFAULT_TOPOLOGY "hapacs-tca-2x8.topo"
/* What a rank that starts Open MPI outside the job reads (spawn). */
#define P2RUN_SINGLETON_GUARD                                                                   \
    "file:p2run: this rank started Open MPI's own MPI, outside the job: the virtual-time MPI "  \
    "layer (libp2mpi.so) is not loaded in it (p2run --help: MPI programs)"
#define P2RUN_DEFAULT_MPI_TOPOLOGY "hapacs-tca-2x8-ib.topo" /* MPI programs: PEACH2 + IB */
/* How long ended processes get between SIGTERM and SIGKILL. */
#define P2RUN_GRACE_MS 2000
/* How long what the ranks started may take to leave on its own once they
 * are gone (terminate_all): Open MPI's singleton daemons take 0.2 s at 4
 * ranks and 0.6 s at 16 on two cores. */
#define P2RUN_STRAY_GRACE_MS 3000
/* How long ranks that all left the simulator get to finish exiting (flushing
 * output, unmapping the job, Open MPI's finalize) before p2run ends them: 2 s
 * was too short for 16 ranks on a loaded 2-core machine (load 11), where a
 * job whose every check had passed was ended and failed. Only a rank hung
 * in its exit path waits this long. */
#define P2RUN_UNWIND_MS 20000
/* After a timeout, how long the simulator gets to print the ranks' states. */
#define P2RUN_DUMP_MS 300
/* Supervision wakes at least this often to notice state changes. */
#define P2RUN_POLL_MS 50
/* --stall's default: host seconds without progress while running ranks hold
 * simulated time before the job ends (emu/README.md, "How a job ends"). */
#define P2RUN_DEFAULT_STALL_S 60.0

typedef struct options {
    int nranks;
    const char *topology, *map, *routing, *params, *clock, *trace, *stats, *traffic, *launcher, *gpu;
    double timeout_s;
    double stall_s; /* --stall: 0 never */
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
    char tca_runtime[PATH_MAX]; /* our runtime, preloaded when only a library needs it, or "" */
    sigset_t signals; /* SIGCHLD, SIGINT, SIGTERM, SIGHUP: taken by sigtimedwait */
    sigset_t old_mask;
} job_run;

/* ---- Flags and files (p2run_options.c) ------------------------------------ */

/* The command line into *o: 0, or the job's status after a message. --help
 * prints the usage and exits 0. */
int parse_options(int argc, char **argv, options *o);

/* Whether `path` can be read (an input) or written by the simulator (an
 * output); else 0 after a message naming `flag`. */
int file_readable(const char *flag, const char *path);
int file_writable(const char *flag, const char *path);

/* A file's identity: device and inode when it exists, else the path it would
 * be created at, its directory resolved. */
typedef struct file_id {
    int exists;
    dev_t dev;
    ino_t ino;
    char path[PATH_MAX + NAME_MAX + 2];
} file_id;

void file_identify(const char *path, file_id *id);
int same_file(const file_id *a, const file_id *b);

/* Programs as execvp finds them; program_runnable says why not. */
int find_program(const char *name, char *out, size_t outlen);
int program_runnable(const char *what, const char *name);

/* Where p2run lies, and whether that is its build directory. */
const char *self_dir(void);
int in_build_tree(void);

/* p2run's own files: the default topology, a file shipped with p2run, the
 * simulator. 0 after a message naming every place looked in (find_shipped:
 * without one when `what` is NULL). */
int default_topology(const char *name, char *out, size_t outlen);
int find_shipped(const char *what, const char *env, const char *name, int mode,
                 const char *build_path, char *out, size_t outlen);
int find_simulator(char *out, size_t outlen);

/* ---- The ranks' runtime (p2run_runtime.c) --------------------------------- */

/* The MPI layer (libp2mpi.so), how a program may use Open MPI, and the
 * LD_PRELOAD value that puts the layer first. */
int find_mpi_layer(const char *why, char *out, size_t outlen);
typedef enum {
    MPI_USE_NONE,   /* an executable that neither links Open MPI nor loads libraries */
    MPI_USE_LINKED, /* it, or a library it needs, links Open MPI */
    MPI_USE_MAYBE   /* a script, or an executable that calls dlopen (python3): it
                       may load Open MPI at run time */
} mpi_use;
/* runtime: where libp2tca.so resolves when only a library of the program
 * needs it (to preload), else "". */
mpi_use program_mpi_use(const char *path, char *runtime, size_t runtime_len);
const char *preload_value(const job_run *jr);

/* --gpu: the ranks' CUDA runtime. 0, or the job's status. */
int select_gpu(const options *o);

/* ---- Processes (p2run_process.c) ----------------------------------------- */

double now_s(void);
/* A child in a process group of its own; a rank (rank >= 0) gets P2_RANK,
 * P2_SIZE and the MPI layer. -1 if fork failed. */
pid_t spawn(job_run *jr, char **argv, int death_signal, int rank);
int wait_signal(job_run *jr, long ms);
int reap(job_run *jr, void (*on_exit)(job_run *, child *, int rank));
/* Makes p2run the subreaper of everything the job starts, so that an orphan
 * (a daemon that left the job's groups) is p2run's to end. */
void adopt_orphans(void);
void terminate_all(job_run *jr);
int exit_code(int st);
int failed(int st);
void describe_exit(const char *who, pid_t pid, int st);
void build_sim_argv(job_run *jr, const char *sim, const char *topology, char **argv);
char **build_mpirun_argv(job_run *jr);

#endif /* P2RUN_INTERNAL_H */
