/*
 * p2mpi_core.c - the lowest unit of the virtual-time MPI layer: the rank's
 * state E (p2mpi.h), the clock, the bracket of an MPI call, fatal errors,
 * and the communicator table (the communicators the rank has, by handle).
 * Depends on the rank runtime (rt/rt.h) alone; every other unit of the layer
 * is above it.
 */
#define _GNU_SOURCE
#include "p2mpi_core.h"

#include <stdarg.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

pm_state E;
int pm_world_rank, pm_world_size;
uint64_t pm_eager_bytes;
static pm_comm world_comm, self_comm, *comms;

/* ---- Clock, calls, errors -------------------------------------------------- */

void pm_charge(uint64_t ps)
{
    if (!E.rt || !ps)
        return;
    p2_rt_enter(E.rt);
    p2_rt_charge_ps(E.rt, ps);
    p2_rt_leave(E.rt);
}

uint64_t pm_now_ps(void)
{
    p2_rt_enter(E.rt);
    uint64_t t = p2_rt_clock_ps(E.rt);
    p2_rt_leave(E.rt);
    return t;
}

void pm_need_init(const char *call)
{
    if (!E.inited)
        pm_fatal("%s before MPI_Init", call);
    if (E.finalized)
        pm_fatal("%s after MPI_Finalize", call);
}

void pm_enter(const char *call)
{
    if (E.depth++ == 0) {
        p2_rt_api_begin_call(call);
        E.call = call;
        E.what[0] = '\0';
        if (E.inited && !E.finalized)
            E.call_start = pm_now_ps();
    }
}

void pm_leave(void)
{
    if (--E.depth == 0) {
        E.call = NULL;
        p2_rt_api_end();
    }
}

_Noreturn void pm_fatal(const char *fmt, ...)
{
    char msg[512];
    va_list ap;
    va_start(ap, fmt);
    vsnprintf(msg, sizeof msg, fmt, ap);
    va_end(ap);
    if (E.call && strstr(msg, E.call) != msg)
        fprintf(stderr, "p2mpi: rank %d: %s: %s\n", pm_world_rank, E.call, msg);
    else
        fprintf(stderr, "p2mpi: rank %d: %s\n", pm_world_rank, msg);
    fflush(stderr);
    exit(1);
}

/* Called by the generated stubs (unsupported.c) for calls the layer does not
 * model: never run them untimed. */
_Noreturn void p2mpi_unsupported(const char *name)
{
    fprintf(stderr,
            "p2mpi: rank %d: %s is not modelled by the virtual-time MPI layer (mpi/README.md "
            "lists the calls it models); stopping rather than running it untimed\n",
            pm_world_rank, name);
    fflush(stderr);
    exit(1);
}

/* ---- The communicator table ------------------------------------------------------- */

pm_comm *pm_comm_of(MPI_Comm h, const char *call)
{
    (void)call;
    if (h == MPI_COMM_WORLD)
        return &world_comm;
    if (h == MPI_COMM_SELF)
        return &self_comm;
    for (pm_comm *c = comms; c; c = c->next)
        if (c->handle == h)
            return c;
    if (h == MPI_COMM_NULL)
        pm_fatal("MPI_COMM_NULL passed as a communicator (MPI_ERR_COMM)");
    pm_fatal("a communicator the layer did not make (MPI_ERR_COMM)");
}

pm_comm *pm_intra_of(MPI_Comm h, const char *call)
{
    pm_comm *c = pm_comm_of(h, call);
    if (c->local)
        pm_fatal("%s on an intercommunicator is not modelled (the layer's intercommunicators "
                 "carry point-to-point messages, MPI_Intercomm_merge and the group queries)",
                 call);
    return c;
}

int pm_comm_rank_of(const pm_comm *c, int w)
{
    if (c == &world_comm)
        return w;
    for (int i = 0; i < c->size; i++)
        if (c->world[i] == w)
            return i;
    return -1;
}

/* The predefined communicators (at MPI_Init, once the engine runs). */
void pm_comms_start(void)
{
    world_comm.handle = MPI_COMM_WORLD;
    world_comm.size = pm_world_size;
    world_comm.rank = pm_world_rank;
    world_comm.world = malloc(sizeof(int) * (size_t)pm_world_size);
    for (int i = 0; i < pm_world_size; i++)
        world_comm.world[i] = i;
    world_comm.ctx = 0;
    self_comm.handle = MPI_COMM_SELF;
    self_comm.size = 1;
    self_comm.rank = 0;
    self_comm.world = malloc(sizeof(int));
    self_comm.world[0] = pm_world_rank;
    self_comm.ctx = 2;
}

/* A communicator the layer made (p2mpi_comm.c) joins the table, or leaves it. */
void pm_comm_link(pm_comm *c)
{
    c->next = comms;
    comms = c;
}

void pm_comm_unlink(pm_comm *c)
{
    for (pm_comm **q = &comms; *q; q = &(*q)->next)
        if (*q == c) {
            *q = c->next;
            break;
        }
}
