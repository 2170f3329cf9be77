/*
 * p2run_process.c - the job's processes: starting the simulator and the ranks
 * (each in a process group of its own, dying with p2run), waiting for
 * signals, reaping (telling the simulator of a rank's end through the job
 * segment, channel.h), ending every remaining process with its group, and the
 * simulator's and mpirun's command lines. Depends on the ranks' runtime
 * (p2run_runtime.c: the MPI layer a rank is started with).
 */
#define _GNU_SOURCE
#include <dirent.h>
#include <errno.h>
#include <fcntl.h>
#include <signal.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/prctl.h>
#include <sys/types.h>
#include <sys/wait.h>
#include <time.h>
#include <unistd.h>

#include "channel.h"
#include "p2run_internal.h"
#include "shm_guard.h"

extern char **environ;

/* ---- Processes ------------------------------------------------------------ */

double now_s(void)
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

pid_t spawn(job_run *jr, char **argv, int death_signal, int rank)
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
        if (jr->mpi_layer[0] || jr->tca_runtime[0])
            setenv("LD_PRELOAD", preload_value(jr), 1);
        /* A rank that starts Open MPI's own MPI (the layer was kept out of
         * it: a cleared LD_PRELOAD, a loader p2run could not see) would run
         * as a one-rank job and exit 0. Open MPI's singleton start then asks
         * for a server at this "file" and fails, naming it; the layer hides
         * the variable from its own start (mpi/p2mpi_init.c). */
        setenv("OMPI_MCA_ess_singleton_server", P2RUN_SINGLETON_GUARD, 1);
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
int wait_signal(job_run *jr, long ms)
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
int reap(job_run *jr, void (*on_exit)(job_run *, child *, int rank))
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

/* Whether `pid` is one of the children p2run started (the simulator, a rank). */
static int tracked(const job_run *jr, pid_t pid)
{
    if (pid == jr->sim.pid)
        return 1;
    for (int i = 0; i < jr->nchildren; i++)
        if (pid == jr->ranks[i].pid)
            return 1;
    return 0;
}

/* The job's processes left besides the children p2run tracks, not counting
 * zombies (a leader, our unreaped child, may be one); only /proc tells them.
 * They are those of our children's process groups, and those p2run adopted
 * as their subreaper (orphans whatever their session or group: a daemon's
 * setsid and second fork); the adopted ones get `sig` (0: none) and, once
 * dead, are reaped here. */
static int strays_left(const job_run *jr, int sig)
{
    DIR *d = opendir("/proc");
    if (!d)
        return 0;
    const pid_t self = getpid();
    int left = 0;
    struct dirent *e;
    while ((e = readdir(d)) != NULL) {
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
        if (!comm_end || sscanf(comm_end + 1, " %c %d %d", &state, &ppid, &pgrp) != 3)
            continue;
        const pid_t pid = (pid_t)atoi(e->d_name);
        const int adopted = ppid == self && !tracked(jr, pid);
        if (state == 'Z' || state == 'X') {
            if (adopted)
                waitpid(pid, NULL, WNOHANG);
            continue;
        }
        if (adopted && sig)
            kill(pid, sig);
        left += adopted || our_group(jr, pgrp);
    }
    closedir(d);
    return left;
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

void adopt_orphans(void)
{
    prctl(PR_SET_CHILD_SUBREAPER, 1);
}

/* Ends every remaining process of the job. The simulator and the ranks go
 * first, alone (SIGTERM): what they started may then leave on its own, for
 * up to P2RUN_STRAY_GRACE_MS. Open MPI's singleton daemon (orted, one per
 * rank) removes its session directory in $TMPDIR as it leaves, after its
 * rank; a SIGTERM in the middle of that left the directory behind (about 8 MB
 * of PMIx segments a rank) or crashed the daemon, which printed a
 * segmentation fault after a job that had succeeded. Then SIGTERM to each
 * child's group and to each adopted orphan, a grace period, SIGKILL; then
 * the children are reaped. */
void terminate_all(job_run *jr)
{
    for (int i = -1; i < jr->nchildren; i++) {
        const child *c = i < 0 ? &jr->sim : &jr->ranks[i];
        if (c->live && c->pid > 0)
            kill(c->pid, SIGTERM);
    }
    int interrupted = 0;
    double deadline = now_s() + P2RUN_GRACE_MS / 1000.0;
    while (!interrupted && live_children(jr) && now_s() < deadline) {
        interrupted = wait_signal(jr, P2RUN_POLL_MS / 5) != 0;
        reap(jr, NULL);
    }
    deadline = now_s() + P2RUN_STRAY_GRACE_MS / 1000.0;
    while (!interrupted && !live_children(jr) && strays_left(jr, 0) && now_s() < deadline) {
        interrupted = wait_signal(jr, P2RUN_POLL_MS / 5) != 0;
        reap(jr, NULL);
    }
    signal_groups(jr, SIGTERM);
    deadline = now_s() + P2RUN_GRACE_MS / 1000.0;
    /* `|`, not `||`: the strays get their SIGTERM whatever the children do. */
    while ((live_children(jr) | strays_left(jr, SIGTERM)) && now_s() < deadline) {
        wait_signal(jr, P2RUN_POLL_MS / 5);
        reap(jr, NULL);
    }
    signal_groups(jr, SIGKILL);
    /* A killed orphan's own children come to p2run in turn: a few rounds. */
    for (int round = 0; round < 20 && strays_left(jr, SIGKILL); round++)
        wait_signal(jr, P2RUN_POLL_MS / 5);
    for (int i = -1; i < jr->nchildren; i++) {
        child *c = i < 0 ? &jr->sim : &jr->ranks[i];
        if (c->pid > 0)
            waitpid(c->pid, NULL, 0);
        c->live = 0;
    }
}

/* The shell's convention: a signal's death is 128 + its number. */
int exit_code(int st)
{
    if (WIFEXITED(st))
        return WEXITSTATUS(st);
    if (WIFSIGNALED(st))
        return 128 + WTERMSIG(st);
    return 1;
}

int failed(int st)
{
    return !WIFEXITED(st) || WEXITSTATUS(st) != 0;
}

void describe_exit(const char *who, pid_t pid, int st)
{
    char full[256];
    if (WIFSIGNALED(st) && WTERMSIG(st) == SIGBUS && p2_shm_full(full, sizeof full))
        fprintf(stderr, "p2run: %s (pid %d) was killed by signal %d (%s): %s\n", who, (int)pid,
                WTERMSIG(st), strsignal(WTERMSIG(st)), full);
    else if (WIFSIGNALED(st))
        fprintf(stderr, "p2run: %s (pid %d) was killed by signal %d (%s)%s\n", who, (int)pid,
                WTERMSIG(st), strsignal(WTERMSIG(st)), WCOREDUMP(st) ? ", core dumped" : "");
    else
        fprintf(stderr, "p2run: %s (pid %d) exited with status %d\n", who, (int)pid,
                exit_code(st));
}

void build_sim_argv(job_run *jr, const char *sim, const char *topology, char **argv)
{
    int a = 0;
    argv[a++] = (char *)sim;
    argv[a++] = "--job";
    argv[a++] = jr->segment;
    argv[a++] = "--topology";
    argv[a++] = (char *)topology;
    argv[a++] = "--clock";
    argv[a++] = (char *)jr->opt.clock;
    static char stall[32];
    snprintf(stall, sizeof stall, "%.17g", jr->opt.stall_s);
    argv[a++] = "--stall";
    argv[a++] = stall;
    const char *pairs[][2] = {{"--map", jr->opt.map},       {"--routing", jr->opt.routing},
                              {"--params", jr->opt.params}, {"--trace", jr->opt.trace},
                              {"--stats", jr->opt.stats},   {"--traffic", jr->opt.traffic}};
    for (size_t i = 0; i < sizeof pairs / sizeof pairs[0]; i++)
        if (pairs[i][1]) {
            argv[a++] = (char *)pairs[i][0];
            argv[a++] = (char *)pairs[i][1];
        }
    argv[a] = NULL;
}

/* mpirun [--allow-run-as-root] --oversubscribe --bind-to none -np N -x P2_JOB
 *        [-x P2_...] PROGRAM ARGS */
char **build_mpirun_argv(job_run *jr)
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
    static char preload[3 * PATH_MAX + 48];
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
