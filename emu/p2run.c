/*
 * p2run - runs a program as N ranks of a virtual PEACH2 cluster.
 *
 *   p2run -n N [--topology FILE] [--map FILE] [--routing POLICY] [--params FILE]
 *         [--clock model|cpu|instructions[=RATE]] [--stall SECONDS]
 *         [--trace FILE] [--stats FILE] [--traffic FILE] [--timeout SECONDS]
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
 *   5            no progress for --stall seconds while running ranks held
 *                simulated time (the simulator prints every rank's state,
 *                the running ones with what they did last);
 *   124          --timeout expired, counted from the simulator's start (the
 *                simulator prints every rank's state);
 *   127          the program cannot be run;
 *   128 + signal p2run itself was interrupted.
 * On every path the remaining processes are ended (SIGTERM, then SIGKILL after
 * a grace period, to each child's process group: what a rank forked goes too)
 * and every shared-memory object of the job is removed.
 *
 * This file is the job: the checks before it starts, the job segment, the
 * simulator's and the ranks' start, the supervision that decides the status,
 * and main. The flags, the ranks' runtime and the processes are parts of
 * their own below it (p2run_internal.h).
 */
#define _GNU_SOURCE
#include <errno.h>
#include <limits.h>
#include <signal.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/wait.h>
#include <unistd.h>

#include "channel.h"
#include "instr_counter.h"
#include "p2run_internal.h"
#include "shm_guard.h"

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
    char full[256];
    if (p2_shm_full(full, sizeof full))
        fprintf(stderr, "p2run: the job segment %s: %s; ending the job\n", jr->segment, full);
    else
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
    const struct {
        const char *flag, *path;
    } outputs[] = {{"--stats", o->stats}, {"--trace", o->trace}, {"--traffic", o->traffic}};
    const size_t noutputs = sizeof outputs / sizeof outputs[0];
    file_id out, other;
    for (size_t a = 0; a < noutputs; a++)
        for (size_t b = a + 1; b < noutputs && outputs[a].path; b++) {
            if (!outputs[b].path)
                continue;
            file_identify(outputs[a].path, &out);
            file_identify(outputs[b].path, &other);
            if (same_file(&out, &other)) {
                fprintf(stderr, "p2run: %s and %s name the same file ('%s', '%s'); give each its own\n",
                        outputs[a].flag, outputs[b].flag, outputs[a].path, outputs[b].path);
                return 0;
            }
        }
    for (size_t k = 0; k < noutputs; k++) {
        const char *flag = outputs[k].flag, *path = outputs[k].path;
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
        (o->stats && !file_writable("--stats", o->stats)) ||
        (o->traffic && !file_writable("--traffic", o->traffic)))
        return P2RUN_USAGE;
    if (!program_runnable("program", o->program[0]))
        return P2RUN_NOEXEC;
    if (jr->mpirun && (!program_runnable("--launcher", "mpirun") ||
                       !find_mpi_layer("--launcher mpirun: the MPI layer", jr->mpi_layer,
                                       sizeof jr->mpi_layer)))
        return P2RUN_NOEXEC;
    /* The layer goes into every rank that may start MPI: a program that links
     * Open MPI, and one that may load it at run time (python3 importing
     * mpi4py, a script that starts an MPI program), in which the layer's
     * runtime attaches only when MPI starts (lib/src/rt/rt_process.c). */
    char prog[PATH_MAX];
    mpi_use use = jr->mpirun || !find_program(o->program[0], prog, sizeof prog)
                      ? MPI_USE_NONE
                      : program_mpi_use(prog, jr->tca_runtime, sizeof jr->tca_runtime);
    if (use == MPI_USE_LINKED &&
        !find_mpi_layer("an MPI program: the MPI layer", jr->mpi_layer, sizeof jr->mpi_layer))
        return P2RUN_NOEXEC;
    if (use == MPI_USE_MAYBE && !find_mpi_layer(NULL, jr->mpi_layer, sizeof jr->mpi_layer))
        jr->mpi_layer[0] = '\0'; /* built without Open MPI: nothing to preload */
    /* MPI messages move over the InfiniBand rail: programs that may use MPI
     * get the cluster with both networks by default. */
    if (!o->topology && !default_topology(jr->mpi_layer[0] ? P2RUN_DEFAULT_MPI_TOPOLOGY
                                                            : P2RUN_DEFAULT_TOPOLOGY,
                                          topology, PATH_MAX))
        return P2RUN_USAGE;
    if (!find_simulator(sim, PATH_MAX))
        return P2RUN_NOEXEC;
    /* --clock instructions: the counter must work here, or no rank could
     * charge its computation (the ranks open their own, as this process). */
    char why[512];
    if (strncmp(o->clock, "instructions", 12) == 0 && !p2_instr_probe(why, sizeof why)) {
        fprintf(stderr, "p2run: --clock instructions is not available: %s; --clock cpu "
                        "charges the program's measured CPU time instead\n", why);
        return P2RUN_USAGE;
    }
    if (!outputs_distinct(jr, topology, sim))
        return P2RUN_USAGE;
    return select_gpu(o);
}

/* The job segment, under a name nobody can guess (channel.h). */
static int create_job(job_run *jr)
{
    char owner[32];
    snprintf(owner, sizeof owner, "%d", (int)getpid());
    p2_clock_mode clock = strcmp(jr->opt.clock, "cpu") == 0           ? P2_CLOCK_CPU
                          : strncmp(jr->opt.clock, "instructions", 12) == 0 ? P2_CLOCK_INSTRUCTIONS
                                                                            : P2_CLOCK_MODEL;
    jr->job = p2_job_create(owner, (unsigned)jr->opt.nranks, clock, &jr->local);
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
                unwind_deadline = now_s() + P2RUN_UNWIND_MS / 1000.0;
            else if (now_s() > unwind_deadline) {
                fprintf(stderr, "p2run: ranks still running %g s after they all left the "
                                "simulator; ending them\n", P2RUN_UNWIND_MS / 1000.0);
                return 1;
            }
        }
    }
}

/* The nodes' memory lies in sparse files in /dev/shm: a job runs while its
 * ranks touch no more than fits, and a rank that touches more dies of
 * SIGBUS. Said before the ranks start when the nodes' host memory alone is
 * more than /dev/shm holds (64 MB in many containers). */
static void warn_shm_size(const job_run *jr)
{
    const unsigned long long size = p2_shm_size();
    const unsigned long long host = (unsigned long long)jr->job->nnodes * jr->job->host_bytes;
    if (!size || host <= size)
        return;
    fprintf(stderr, "p2run: warning: /dev/shm holds %llu MiB, less than the %u nodes' host "
                    "memory (%llu MiB, and %llu MiB of GPU memory): a rank that touches more "
                    "than fits dies of SIGBUS (docker run --shm-size, or host_memory_bytes in "
                    "--params)\n",
            size >> 20, jr->job->nnodes, host >> 20,
            ((unsigned long long)jr->job->nnodes * jr->job->gpu_bytes) >> 20);
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
        warn_shm_size(jr);
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

    adopt_orphans();
    int status = run_job(&jr);
    terminate_all(&jr);
    if (jr.job) {
        p2_job_detach(jr.job, &jr.local);
        p2_job_unlink_all(jr.local.name);
    }
    free(jr.ranks);
    return status;
}
