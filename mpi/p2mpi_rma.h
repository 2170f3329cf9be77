/*
 * p2mpi_rma.h - what one-sided communication's mechanism (p2mpi_rma.c)
 * offers the units above it (the one-sided calls, p2mpi_rma_calls.c, and
 * the windows, p2mpi_win.c): the window, the table of windows, operations
 * by RDMA or by active message, their completion, the IB atomics of the
 * lock words. README.md, "One-sided communication", has the design.
 */
#ifndef P2MPI_RMA_H
#define P2MPI_RMA_H

#include "p2mpi_coll.h"

#pragma GCC visibility push(hidden)

/* Every member's window as the others reach it. */
typedef struct pm_win_peer {
    uint64_t bus;       /* bus address of its public memory (0: none, or dynamic) */
    uint64_t size;      /* bytes */
    uint64_t lock_bus;  /* bus address of its lock word */
    int64_t disp_unit;
} pm_win_peer;

/* A region attached to a dynamic window. */
typedef struct pm_region {
    uint8_t *base;
    uint64_t size;
    struct pm_region *next;
} pm_region;

/* Lock state of a target (pm_win.locked): a lock held, how, and whether it
 * took the lock word (MPI_MODE_NOCHECK does not). */
enum { PM_LOCK_NONE = 0, PM_LOCK_SHARED = 1, PM_LOCK_EXCL = 2, PM_LOCK_NOCHECK = 4 };

/* A window; MPI_Win handles are these. */
typedef struct pm_win {
    uint32_t id;          /* its communicator's context: the same at every member */
    pm_comm *comm;        /* a dup of the creating communicator */
    MPI_Comm comm_handle;
    int flavor, model;    /* MPI_WIN_FLAVOR_*, MPI_WIN_UNIFIED or MPI_WIN_SEPARATE */
    /* this rank's memory */
    void *base;           /* the user's (MPI_WIN_BASE) */
    MPI_Aint size;
    int disp_unit;
    uint8_t *pub;         /* what RMA reaches: base itself, or the registered public copy */
    uint8_t *shadow;      /* MPI_WIN_SEPARATE: both copies as last synchronised */
    uint64_t mem_off;     /* staging-arena offset + 1 of its registered block (0: none) */
    uint64_t lock_off;    /* offset in the layer's memory of this rank's lock word */
    pm_region *regions;   /* dynamic windows: attached memory */
    pm_win_peer *peer;    /* by comm rank */
    /* epochs and completion, by comm rank where arrays */
    int fence_open;       /* a fence opened an access epoch (not MPI_MODE_NOSUCCEED) */
    int lock_all;         /* MPI_Win_lock_all's epoch (PM_LOCK_SHARED | NOCHECK bit) */
    uint8_t *locked;      /* PM_LOCK_* per target */
    uint64_t *pending;    /* operations not yet complete at the target */
    uint64_t *pending_local; /* of them, those whose results are not yet here */
    /* post/start/complete/wait */
    int *access, naccess; /* MPI_Win_start's group, comm ranks (naccess -1: none) */
    int *expose, nexpose; /* MPI_Win_post's group (nexpose -1: none) */
    uint32_t *posts, *dones; /* POST / DONE messages received and not yet consumed */
    char name[MPI_MAX_OBJECT_NAME];
    struct pm_win *next;
} pm_win;

static inline pm_win *as_win(MPI_Win h) { return (pm_win *)(void *)h; }
static inline MPI_Win as_win_handle(pm_win *w) { return (MPI_Win)(void *)w; }

/* ---- The table of windows, the hooks --------------------------------------- */
/* A window joins the table (before its members exchange addresses, so no
 * operation reaches a member that does not have it yet), and leaves it; the
 * window a handle names (the job ends if none: MPI_ERR_WIN). */
void pm_win_link(pm_win *w);
void pm_win_unlink(pm_win *w);
pm_win *pm_win_of(MPI_Win h);
/* The window with id (the job ends if this rank has none). */
pm_win *pm_win_by_id(uint32_t id);

/* ---- Datatypes (p2mpi_rma_dt.c) --------------------------------------------------- */
/* A run of memory: from the buffer, its first byte or element and how many. */
typedef struct pm_run {
    int64_t off;
    uint64_t n;
} pm_run;
/* The runs count elements of t occupy, in pack order, in *out (free it): of
 * bytes (elem 1, stride 1), or of elements of a basic type (elem its size,
 * stride its extent). */
size_t pm_rma_runs(MPI_Datatype t, int count, size_t elem, int64_t stride, pm_run **out);

/* ---- The program's memory ------------------------------------------------------ */
/* Whether [p, p + n) is mapped writable in this process (MPI_Win_create,
 * MPI_Win_attach refuse memory that is not). */
int pm_rma_writable(const void *p, uint64_t n);
/* Runs fn(arg), which touches memory the program handed the layer (a dynamic
 * window's attached regions, a separate window's private copy); returns 0,
 * or the signal (SIGSEGV, SIGBUS) its access took if the memory went away
 * meanwhile, fn then cut short. */
int pm_rma_guarded(void (*fn)(void *), void *arg);

/* ---- Operations -------------------------------------------------------------- */
enum { PM_PUT = 1, PM_GET = 2, PM_ACC = 3, PM_GET_ACC = 4, PM_CAS = 5 };
/* One operation from this rank on target (comm rank) of w: kind PM_*, the
 * origin buffer, the result buffer (PM_GET: the origin buffer; PM_GET_ACC,
 * PM_CAS), the target's displacement, count and type, the op (accumulates),
 * compare (PM_CAS). A Put or Get on a window the HCA reaches moves by RDMA
 * (writes, reads) into the target's public memory; accumulates, and every
 * operation on a dynamic window, by active messages the target's progress
 * engine applies. Returns the request id to complete at local completion
 * (0 with want_req unset). */
uint64_t pm_rma_op(int kind, pm_win *w, int target, const void *origin, int ocount,
                   MPI_Datatype otype, void *result, int rcount, MPI_Datatype rtype,
                   const void *compare, MPI_Aint tdisp, int tcount, MPI_Datatype ttype, MPI_Op op,
                   int want_req);
/* Waits until every operation of w on target (-1: all) is complete at the
 * target (local: its results are here). */
void pm_rma_flush(pm_win *w, int target, int local);

/* ---- The lock words: IB atomics ------------------------------------------------ */
/* An 8-byte atomic on target's lock word of w (IB_OP_ATOMIC_FETCH_ADD or
 * _CMP_SWAP), posted; and its old value, waited for. */
uint64_t pm_rma_atomic_post(pm_win *w, int target, uint8_t opcode, uint64_t compare_add,
                            uint64_t swap);
uint64_t pm_rma_atomic_wait(uint64_t id);

/* ---- Post/start/complete/wait messages ------------------------------------------ */
enum { PM_MSG_POST = 1, PM_MSG_DONE = 2 };
/* A POST or DONE message of w to target (comm rank); they are counted at the
 * receiver in w->posts / w->dones by sender. */
void pm_rma_notify(pm_win *w, int target, int what);

#pragma GCC visibility pop

#endif /* P2MPI_RMA_H */
