/*
 * p2mpi_init.c - start-up and shutdown of the MPI layer: MPI_Init (Open MPI's
 * own, for local work, then the engine), MPI_Finalize (drain, a barrier),
 * MPI_Abort, and the calls that need no message (MPI_Comm_rank, _size,
 * MPI_Wtime, MPI_Wtick, MPI_Query_thread, MPI_Is_thread_main). The top
 * unit: it may use every other.
 */
#define _GNU_SOURCE
#include "p2mpi_nbc.h"

#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <unistd.h>

/* ---- Start-up and shutdown -------------------------------------------------------- */

/* The thread level MPI_Init_thread grants: the one asked for (README.md,
 * "Threads"); Open MPI, which serves local work (datatypes, ops) that the
 * program's threads may call directly, is asked for the same. */
static int granted(int required)
{
    return required < MPI_THREAD_SINGLE     ? MPI_THREAD_SINGLE
           : required > MPI_THREAD_MULTIPLE ? MPI_THREAD_MULTIPLE
                                            : required;
}

static int init_common(int *argc, char ***argv, int required, int thread)
{
    pm_enter(thread ? "MPI_Init_thread" : "MPI_Init");
    if (E.inited)
        pm_fatal("called twice (MPI_ERR_OTHER)");
    /* Open MPI serves local work only (a singleton when p2run starts the
     * ranks itself); the job's ranks come from p2run. */
    /* Open MPI's singleton start forks helpers: they must not attach to the
     * job as this rank nor load the layer. */
    /* p2run's guard against a rank that starts Open MPI without the layer
     * (emu/p2run_process.c) is not for the layer's own start. */
    enum { NHIDE = 4 };
    char *saved[NHIDE] = {NULL, NULL, NULL, NULL};
    static const char *const hide[NHIDE] = {"P2_JOB", "LD_PRELOAD", "P2_RT_OWNER",
                                            "OMPI_MCA_ess_singleton_server"};
    for (int i = 0; i < NHIDE; i++) {
        const char *v = getenv(hide[i]);
        saved[i] = v ? strdup(v) : NULL;
        unsetenv(hide[i]);
    }
    int level = thread ? granted(required) : MPI_THREAD_SINGLE, ompi_level;
    int rc = thread ? PMPI_Init_thread(argc, argv, level, &ompi_level) : PMPI_Init(argc, argv);
    for (int i = 0; i < NHIDE; i++)
        if (saved[i]) {
            setenv(hide[i], saved[i], 1);
            free(saved[i]);
        }
    if (rc != MPI_SUCCESS)
        pm_fatal("Open MPI's own initialisation failed (%d)", rc);
    pm_engine_start();
    pm_charge(p2_ns_ps(E.rt->prm.mpi_call_ns));
    /* From here on, under MPI_THREAD_MULTIPLE, every call takes the rank's
     * lock (p2mpi_core.c, "Threads"). */
    E.main_thread = pthread_self();
    E.multi = level == MPI_THREAD_MULTIPLE;
    __atomic_store_n(&E.thread_level, level, __ATOMIC_RELEASE); /* p2mpi_pthread.c */
    pm_leave();
    return MPI_SUCCESS;
}

int MPI_Init(int *argc, char ***argv) { return init_common(argc, argv, 0, 0); }

int MPI_Init_thread(int *argc, char ***argv, int required, int *provided)
{
    int rc = init_common(argc, argv, required, 1);
    if (provided)
        *provided = E.thread_level;
    return rc;
}

int MPI_Query_thread(int *provided)
{
    pm_need_init("MPI_Query_thread");
    *provided = E.thread_level;
    return MPI_SUCCESS;
}

int MPI_Is_thread_main(int *flag)
{
    pm_need_init("MPI_Is_thread_main");
    *flag = pthread_equal(pthread_self(), E.main_thread) != 0;
    return MPI_SUCCESS;
}

int MPI_Finalize(void)
{
    pm_enter("MPI_Finalize");
    pm_need_init("MPI_Finalize");
    /* Every message this rank started is out of its hands before it goes
     * (and every nonblocking collective it started has ended). */
    pm_nbc_drain();
    snprintf(E.what, sizeof E.what, "draining its sends");
    while (E.sq_done < E.sq_posted || E.pending || E.nev)
        pm_progress(PM_WAIT_OPEN);
    /* MPI_Finalize is collective: a barrier, so that no rank sits in Open
     * MPI's own finalize (a wall-clock fence under mpirun) while another
     * still waits for one of its messages in simulated time. */
    E.what[0] = '\0';
    pm_coll_barrier(pm_comm_of(MPI_COMM_WORLD, "MPI_Finalize"));
    while (E.sq_done < E.sq_posted)
        pm_progress(PM_WAIT_OPEN);
    E.finalized = 1;
    pm_leave();
    /* Under mpirun Open MPI's finalize is a wall-clock fence: while this rank
     * waits in it, it must not hold simulated time back from a rank that
     * still waits for the last barrier message (the frontend skips ranks
     * flagged in_collective while any rank is outside). Device calls after
     * MPI_Finalize are not ordered after the others' (README.md). */
    snprintf(E.chan->mpi_call, sizeof E.chan->mpi_call, "MPI_Finalize");
    p2_st_sc(&E.chan->in_collective, 1u);
    p2_rt_ring(E.rt);
    int rc = PMPI_Finalize();
    p2_st_sc(&E.chan->in_collective, 0u);
    p2_rt_ring(E.rt);
    return rc;
}

int MPI_Abort(MPI_Comm comm, int code)
{
    (void)comm;
    fprintf(stderr, "p2mpi: rank %d: MPI_Abort(%d): the job stops\n", pm_world_rank, code);
    fflush(stderr);
    _exit(code ? (code & 0xff ? code & 0xff : 1) : 1);
}

int MPI_Comm_rank(MPI_Comm comm, int *rank)
{
    pm_need_init("MPI_Comm_rank");
    *rank = pm_comm_of(comm, "MPI_Comm_rank")->rank;
    return MPI_SUCCESS;
}

int MPI_Comm_size(MPI_Comm comm, int *size)
{
    pm_need_init("MPI_Comm_size");
    pm_comm *c = pm_comm_of(comm, "MPI_Comm_size");
    *size = c->local ? c->local->size : c->size; /* an intercommunicator's: its local group's */
    return MPI_SUCCESS;
}

/* The rank's clock. Under the default --clock=model only modelled work
 * moves it (the program's own instructions are free), so a program that
 * waits for the clock to move by reading it (STREAM's checktick: `while
 * (MPI_Wtime() - t1 < 1e-6);`) would wait forever: the runtime charges
 * mpi_wtime_ns (a clock_gettime through the vDSO and the call) to the third
 * and later reads in a run of reads with no modelled work between them,
 * after the read (p2_rt_read_clock, which the program's gettimeofday and
 * clock_gettime share). Under --clock=cpu the program's CPU time moves it. */
double MPI_Wtime(void)
{
    p2_rt *rt = E.rt ? E.rt : p2_rt_get();
    if (!rt)
        return p2_rt_wtime();
    return (double)p2_rt_read_clock(rt, p2_ns_ps(rt->prm.mpi_wtime_ns)) * 1e-12;
}
double MPI_Wtick(void) { return 1e-12; }
