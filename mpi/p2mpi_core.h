/*
 * p2mpi_core.h - what the lowest unit of the MPI layer (p2mpi_core.c) offers
 * every unit above it: the clock, the bracket of an MPI call, fatal errors
 * and the communicator table. The rank's state E is in p2mpi.h.
 */
#ifndef P2MPI_CORE_H
#define P2MPI_CORE_H

#include "p2mpi.h"

#pragma GCC visibility push(hidden)

/* Marks the start of an MPI call: its name for messages and the deadlock
 * diagnosis, and the layer's per-call cost. pm_leave ends it. */
void pm_enter(const char *call);
void pm_leave(void);
/* MPI_THREAD_MULTIPLE: a blocking wait gives the rank's lock back while it
 * waits for the simulator, so that another thread's call, which the awaited
 * message may need, can run meanwhile (p2mpi_core.c, "Threads"). The
 * call's own state is kept aside and back again: pm_let_others_in returns
 * 0 (and keeps nothing) when this thread holds no lock, else
 * pm_take_back(s) must follow, and the layer's state may have moved in
 * between. */
typedef struct pm_call_state {
    const char *call;
    char what[80];
    uint64_t call_start;
    int depth, coll_gpu_path;
    uint32_t coll_ctx_bits, coll_seq;
    pm_coll_sig coll_sig;
} pm_call_state;
int pm_let_others_in(pm_call_state *s);
void pm_take_back(const pm_call_state *s);
/* The channel whose MPI fields name what the calling thread waits for (its
 * lane's under MPI_THREAD_SERIALIZED and MULTIPLE, the rank's otherwise). */
p2_job_rank *pm_wait_channel(void);
/* Ends the job unless MPI_Init has run and MPI_Finalize has not. */
void pm_need_init(const char *call);
/* Charges `ps` to the rank's clock. */
void pm_charge(uint64_t ps);
/* The rank's clock. */
uint64_t pm_now_ps(void);
/* Ends the job: "p2mpi: rank R: <call>: <message>", exit status 1. */
_Noreturn void pm_fatal(const char *fmt, ...) __attribute__((format(printf, 1, 2)));
/* Erroneous arguments, refused before they reach the layer's arithmetic (a
 * negative count made a size_t of 2^64 - 4 bytes: a segfault or "out of
 * memory" deep inside an algorithm): the job ends naming the call, the
 * rank, the argument by the standard's name and the error class, as Open
 * MPI's own bindings refuse them. A negative count (MPI_ERR_COUNT); one in
 * the first n entries of a vector of counts (named arg[i]; a NULL vector
 * with n > 0 is MPI_ERR_ARG); a NULL where the call writes or reads a
 * request (MPI_ERR_REQUEST). */
void pm_need_count(int count, const char *arg);
void pm_need_counts(const int counts[], int n, const char *arg);
void pm_need_req(const MPI_Request *req, const char *arg);
/* The waits' and tests' array of n requests: n negative (MPI_ERR_COUNT, as
 * the Fortran bindings' conversion says), or a NULL array with n > 0
 * (MPI_ERR_REQUEST). */
void pm_need_reqs(const MPI_Request reqs[], int n);
/* Called by the generated stubs (unsupported.c) for the calls the layer
 * does not model. */
_Noreturn void p2mpi_unsupported(const char *name);

/* The bracket of an MPI call that needs MPI_Init: CALL(name) at its start,
 * RETURN(v) at each return. */
#define CALL(name)       \
    pm_enter(name);      \
    pm_need_init(name)
#define RETURN(v)        \
    do {                 \
        int rv_ = (v);   \
        pm_leave();      \
        return rv_;      \
    } while (0)

/* The communicator table: the communicator a handle names (or the job
 * ends), and the comm rank of world rank w in c (or -1). */
pm_comm *pm_comm_of(MPI_Comm c, const char *call);
int pm_comm_rank_of(const pm_comm *c, int w);
/* The communicator whose point-to-point context is ctx, or NULL. */
pm_comm *pm_comm_by_ctx(uint32_t ctx);
/* How messages name a communicator: MPI_COMM_WORLD, MPI_COMM_SELF, or its
 * size and context. */
void pm_comm_describe(const pm_comm *c, char *out, size_t n);
/* pm_comm_of for the calls that need an intracommunicator: the job ends,
 * naming the call, on an intercommunicator. */
pm_comm *pm_intra_of(MPI_Comm c, const char *call);
/* MPI_COMM_WORLD and MPI_COMM_SELF (the engine's start). */
void pm_comms_start(void);
/* A communicator p2mpi_comm.c made joins the table; one it frees leaves. */
void pm_comm_link(pm_comm *c);
void pm_comm_unlink(pm_comm *c);
/* MPI_Comm_free's part after Open MPI's handle is gone: the layer's
 * communicator goes now, or once its pending nonblocking collectives
 * complete (pm_comm_nbc_done). */
void pm_comm_drop(pm_comm *c);
void pm_comm_nbc_done(pm_comm *c);

#pragma GCC visibility pop

#endif /* P2MPI_CORE_H */
