/*
 * mpi_clock.c - keeps virtual time causal across MPI collectives, for ranks
 * that p2run starts with mpirun (it preloads this library into them).
 *
 * MPI moves no simulated time: a rank whose clock is behind another's can
 * leave MPI_Allgather with a handle the other made "later", and start a DMA
 * that reaches the other node, in simulated time, before the other's
 * tcaInit set up its notification ring; the notification is lost and both
 * ranks wait forever. So every collective here first agrees on the latest
 * clock among the ranks entering it (one PMPI_Allreduce of the clocks), and
 * each rank leaves at least at that time, as it would leave a barrier. The
 * real collective then runs unchanged.
 *
 * The rank's clock lives in its runtime (lib/src/rt), which may be linked
 * into the program statically: this library reaches it only through the job
 * segment, reading the clock the rank published and raising its clock floor,
 * which the runtime adopts when the program next calls it.
 *
 * MPI_Wtime and MPI_Wtick are the rank's virtual clock.
 *
 * Point-to-point messages are not ordered here (a receive does not wait for
 * the sender's clock): modelling MPI messages in virtual time is the MPI
 * layer's work.
 */
#define _GNU_SOURCE
#include <mpi.h>
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <time.h>

#include "channel.h"

static p2_job *job;
static p2_job_rank *self;
static int tried;

static p2_job_rank *rank_channel(void)
{
    if (tried)
        return self;
    tried = 1;
    const char *name = getenv("P2_JOB");
    const char *r = getenv("P2_RANK");
    if (!r || !*r)
        r = getenv("OMPI_COMM_WORLD_RANK");
    if (!name || !*name || !r || !*r)
        return NULL;
    char err[256];
    job = p2_job_attach(name, err, sizeof err);
    if (!job) {
        fprintf(stderr, "p2 mpi clock: %s\n", err);
        return NULL;
    }
    long rank = strtol(r, NULL, 10);
    if (rank < 0 || rank >= (long)job->nranks)
        return NULL;
    self = &job->ranks[rank];
    return self;
}

static int64_t cpu_now_ps(void)
{
    struct timespec ts;
    clock_gettime(p2_thread_cpu_clock(p2_ld(&self->tid)), &ts);
    return (int64_t)ts.tv_sec * 1000000000000LL + (int64_t)ts.tv_nsec * 1000LL;
}

/* The rank's clock now, as its runtime last published it. */
static int64_t clock_now(p2_job_rank *ch)
{
    int64_t pub = p2_ld_sc(&ch->clock_pub);
    int64_t floor = p2_ld_sc(&ch->clock_floor);
    int64_t t = 0;
    if (pub != P2_CLOCK_UNKNOWN)
        t = job->clock_mode == P2_CLOCK_CPU ? pub + cpu_now_ps() : pub;
    return t > floor ? t : floor;
}

/* Every rank of `comm` leaves at least at the latest entry clock.
 *
 * While the rank waits inside a collective over every rank of the job, it
 * tells the simulator so: its clock cannot hold simulated time back while any
 * other rank is still outside, since it will leave at that rank's entry or
 * later. Ranks blocked in MPI under --clock=model then no longer stall a rank
 * that waits for the model. */
static void order_after_entries(MPI_Comm comm, const char *call)
{
    p2_job_rank *ch = rank_channel();
    if (!ch || comm == MPI_COMM_NULL)
        return;
    int size = 0;
    int everyone = PMPI_Comm_size(comm, &size) == MPI_SUCCESS && size == (int)job->nranks;
    int64_t mine = clock_now(ch), latest = mine;
    if (everyone) {
        snprintf(ch->mpi_call, sizeof ch->mpi_call, "%s", call);
        p2_st_sc(&ch->in_collective, 1u);
        p2_job_ring(job);
    }
    int ok = PMPI_Allreduce(&mine, &latest, 1, MPI_INT64_T, MPI_MAX, comm) == MPI_SUCCESS;
    if (!ok || latest <= mine) {
        if (everyone)
            p2_st_sc(&ch->in_collective, 0u);
        return;
    }
    p2_st_sc(&ch->clock_floor, latest);
    /* --clock=model: the rank's clock is now exactly `latest`; let the
     * simulator run up to it at once (the runtime republishes on the
     * program's next call). --clock=cpu: the published offset already
     * follows the rank's CPU time, a lower bound of where it will be. */
    if (job->clock_mode == P2_CLOCK_MODEL && p2_ld_sc(&ch->clock_pub) < latest)
        p2_st_sc(&ch->clock_pub, latest);
    if (everyone)
        p2_st_sc(&ch->in_collective, 0u);
    p2_job_ring(job);
}

/* MPI_Wtime reads the rank's virtual clock, the one p2_wtime reads and CUDA
 * events and TCA calls move, so that a program timing with MPI_Wtime (as
 * public clients do) measures simulated time: the clock the runtime published
 * when the program last left it (plus, under --clock=cpu, the CPU time since),
 * raised to the floor a collective set. Without p2run, MPI's own clock. */
double MPI_Wtime(void)
{
    p2_job_rank *ch = rank_channel();
    if (!ch)
        return PMPI_Wtime();
    return (double)clock_now(ch) * 1e-12;
}

double MPI_Wtick(void)
{
    return rank_channel() ? 1e-12 : PMPI_Wtick();
}

#define ORDERED(call, comm)                        \
    do {                                           \
        order_after_entries(comm, __func__);       \
        return call;                               \
    } while (0)

int MPI_Barrier(MPI_Comm comm) { ORDERED(PMPI_Barrier(comm), comm); }

int MPI_Bcast(void *buf, int count, MPI_Datatype type, int root, MPI_Comm comm)
{
    ORDERED(PMPI_Bcast(buf, count, type, root, comm), comm);
}

int MPI_Reduce(const void *send, void *recv, int count, MPI_Datatype type, MPI_Op op, int root,
               MPI_Comm comm)
{
    ORDERED(PMPI_Reduce(send, recv, count, type, op, root, comm), comm);
}

int MPI_Allreduce(const void *send, void *recv, int count, MPI_Datatype type, MPI_Op op,
                  MPI_Comm comm)
{
    ORDERED(PMPI_Allreduce(send, recv, count, type, op, comm), comm);
}

int MPI_Gather(const void *send, int scount, MPI_Datatype stype, void *recv, int rcount,
               MPI_Datatype rtype, int root, MPI_Comm comm)
{
    ORDERED(PMPI_Gather(send, scount, stype, recv, rcount, rtype, root, comm), comm);
}

int MPI_Gatherv(const void *send, int scount, MPI_Datatype stype, void *recv,
                const int rcounts[], const int displs[], MPI_Datatype rtype, int root,
                MPI_Comm comm)
{
    ORDERED(PMPI_Gatherv(send, scount, stype, recv, rcounts, displs, rtype, root, comm), comm);
}

int MPI_Allgather(const void *send, int scount, MPI_Datatype stype, void *recv, int rcount,
                  MPI_Datatype rtype, MPI_Comm comm)
{
    ORDERED(PMPI_Allgather(send, scount, stype, recv, rcount, rtype, comm), comm);
}

int MPI_Allgatherv(const void *send, int scount, MPI_Datatype stype, void *recv,
                   const int rcounts[], const int displs[], MPI_Datatype rtype, MPI_Comm comm)
{
    ORDERED(PMPI_Allgatherv(send, scount, stype, recv, rcounts, displs, rtype, comm), comm);
}

int MPI_Scatter(const void *send, int scount, MPI_Datatype stype, void *recv, int rcount,
                MPI_Datatype rtype, int root, MPI_Comm comm)
{
    ORDERED(PMPI_Scatter(send, scount, stype, recv, rcount, rtype, root, comm), comm);
}

int MPI_Scatterv(const void *send, const int scounts[], const int displs[], MPI_Datatype stype,
                 void *recv, int rcount, MPI_Datatype rtype, int root, MPI_Comm comm)
{
    ORDERED(PMPI_Scatterv(send, scounts, displs, stype, recv, rcount, rtype, root, comm), comm);
}

int MPI_Alltoall(const void *send, int scount, MPI_Datatype stype, void *recv, int rcount,
                 MPI_Datatype rtype, MPI_Comm comm)
{
    ORDERED(PMPI_Alltoall(send, scount, stype, recv, rcount, rtype, comm), comm);
}

int MPI_Alltoallv(const void *send, const int scounts[], const int sdispls[], MPI_Datatype stype,
                  void *recv, const int rcounts[], const int rdispls[], MPI_Datatype rtype,
                  MPI_Comm comm)
{
    ORDERED(PMPI_Alltoallv(send, scounts, sdispls, stype, recv, rcounts, rdispls, rtype, comm),
            comm);
}

int MPI_Reduce_scatter(const void *send, void *recv, const int rcounts[], MPI_Datatype type,
                       MPI_Op op, MPI_Comm comm)
{
    ORDERED(PMPI_Reduce_scatter(send, recv, rcounts, type, op, comm), comm);
}

int MPI_Reduce_scatter_block(const void *send, void *recv, int rcount, MPI_Datatype type,
                             MPI_Op op, MPI_Comm comm)
{
    ORDERED(PMPI_Reduce_scatter_block(send, recv, rcount, type, op, comm), comm);
}

int MPI_Scan(const void *send, void *recv, int count, MPI_Datatype type, MPI_Op op, MPI_Comm comm)
{
    ORDERED(PMPI_Scan(send, recv, count, type, op, comm), comm);
}

int MPI_Exscan(const void *send, void *recv, int count, MPI_Datatype type, MPI_Op op,
               MPI_Comm comm)
{
    ORDERED(PMPI_Exscan(send, recv, count, type, op, comm), comm);
}
