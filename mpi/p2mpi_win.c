/*
 * p2mpi_win.c - windows of one-sided communication: MPI_Win_allocate,
 * _create, _create_dynamic with _attach and _detach, _free, their attributes,
 * names, groups and Fortran handles, the memory models, and synchronisation:
 * MPI_Win_fence, _lock, _unlock, _lock_all, _unlock_all, _flush(_all),
 * _flush_local(_all), _sync, and post/start/complete/wait/test. Depends on
 * one-sided communication's mechanism (p2mpi_rma.c), the communicators
 * (MPI_Comm_dup for the window's own), and the units below them. README.md,
 * "One-sided communication", has the design.
 *
 * Memory: MPI_Win_allocate's memory is the layer's registered memory, which
 * the HCA writes straight into (MPI_WIN_UNIFIED); so is MPI_Alloc_mem's.
 * MPI_Win_create on memory the HCA reaches (the node's registered host
 * memory: MPI_Alloc_mem, tcaMalloc, another window; or GPU memory) is
 * unified too; on process memory (malloc, the
 * stack), which the model cannot reach, the window is MPI_WIN_SEPARATE:
 * RMA lands in a registered public copy, and the owner's synchronisation
 * calls carry its own stores to the public copy (post, fence, unlock,
 * unlock_all, sync) and RMA's updates to its memory (wait, fence, lock,
 * lock_all, sync), as MPI-3.1 11.7 lets a separate window do. A dynamic
 * window's operations are applied by the target itself to the attached
 * memory (unified). Every window has a lock word in registered memory,
 * taken and released with IB atomics: exclusive CMP_SWAP 0 -> EXCL, shared
 * FETCH_ADD 1 (undone and retried while EXCL is set).
 */
#define _GNU_SOURCE
#include "p2mpi_rma.h"

#include <inttypes.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#define LOCK_EXCL (1ULL << 32)  /* the lock word: exclusive holder (its rank + 1 above, excl_mark); the low half counts shared ones */
#define LOCK_BLOCK 64u          /* the lock word's cache line before a window's memory */

/* ---- Creation and freeing ---------------------------------------------------------- */

/* Registered memory for a window: its lock word and `size` bytes after it. */
static void win_memory(pm_win *w, uint64_t size, const char *call)
{
    uint64_t off;
    if (tca_arena_alloc(&E.stage, LOCK_BLOCK + size, &off) != TCA_ARENA_OK)
        pm_fatal("%s: %" PRIu64 " bytes do not fit in the layer's registered memory (%" PRIu64
                 " of %" PRIu64 " bytes used): raise mpi_host_bytes",
                 call, size, tca_arena_used(&E.stage), E.stage.size);
    w->mem_off = off + 1;
    w->lock_off = E.stage_off + off;
    memset(E.base + w->lock_off, 0, LOCK_BLOCK + size);
}

static int reachable(const void *p, uint64_t n, uint64_t *bus)
{
    const p2_rt_memory *m[2] = {&E.rt->host, &E.rt->gpu};
    for (int i = 0; i < 2; i++) {
        const uint8_t *b = m[i]->base;
        if (b && (const uint8_t *)p >= b && n <= m[i]->size &&
            (uint64_t)((const uint8_t *)p - b) <= m[i]->size - n) {
            *bus = m[i]->bus + (uint64_t)((const uint8_t *)p - b);
            return 1;
        }
    }
    return 0;
}

/* A window on comm: its own communicator (a dup: the window's id is its
 * context), this rank's memory, the members' exchanged. */
static pm_win *win_new(MPI_Comm comm, int flavor, void *base, MPI_Aint size, int disp_unit,
                       const char *call)
{
    pm_comm_of(comm, call);
    if (size < 0)
        pm_fatal("%s: negative size %ld (MPI_ERR_SIZE)", call, (long)size);
    if (disp_unit <= 0)
        pm_fatal("%s: displacement unit %d is not positive (MPI_ERR_DISP)", call, disp_unit);
    pm_win *w = calloc(1, sizeof *w);
    MPI_Comm_dup(comm, &w->comm_handle);
    w->comm = pm_comm_of(w->comm_handle, call);
    w->id = w->comm->ctx;
    w->flavor = flavor;
    w->model = MPI_WIN_UNIFIED;
    w->size = size;
    w->disp_unit = disp_unit;
    w->naccess = w->nexpose = -1;
    int n = w->comm->size;
    w->locked = calloc((size_t)n, 1);
    w->pending = calloc((size_t)n, sizeof *w->pending);
    w->pending_local = calloc((size_t)n, sizeof *w->pending_local);
    w->posts = calloc((size_t)n, sizeof *w->posts);
    w->dones = calloc((size_t)n, sizeof *w->dones);
    w->peer = calloc((size_t)n, sizeof *w->peer);
    pm_win_peer mine = {.size = (uint64_t)size, .disp_unit = disp_unit};
    if (flavor == MPI_WIN_FLAVOR_ALLOCATE) {
        win_memory(w, (uint64_t)size, call);
        w->base = w->pub = E.base + w->lock_off + LOCK_BLOCK;
        mine.bus = pm_bus_of(w->lock_off + LOCK_BLOCK);
    } else if (flavor == MPI_WIN_FLAVOR_CREATE && (!size || reachable(base, (uint64_t)size, &mine.bus))) {
        win_memory(w, 0, call);
        w->base = w->pub = base; /* RDMA straight into it */
    } else if (flavor == MPI_WIN_FLAVOR_CREATE) {
        /* process memory the layer copies from now and writes RMA's updates
         * into at every synchronisation: unmapped or read-only memory would
         * fault inside the layer (NULL: at once; read-only: in the owner's
         * next synchronisation after a Put) */
        if (!pm_rma_writable(base, (uint64_t)size))
            pm_fatal("%s: base = %p, size = %ld: the memory is not mapped writable for its whole "
                     "length (MPI_ERR_ARG)",
                     call, base, (long)size);
        win_memory(w, (uint64_t)size, call);
        w->model = MPI_WIN_SEPARATE;
        w->base = base;
        w->pub = E.base + w->lock_off + LOCK_BLOCK;
        w->shadow = malloc((size_t)size);
        memcpy(w->pub, base, (size_t)size);
        memcpy(w->shadow, base, (size_t)size);
        mine.bus = pm_bus_of(w->lock_off + LOCK_BLOCK);
    } else { /* dynamic */
        win_memory(w, 0, call);
        w->base = MPI_BOTTOM;
    }
    mine.lock_bus = pm_bus_of(w->lock_off);
    pm_win_link(w); /* before the exchange: no operation reaches a member without it */
    pm_coll_allgather(&mine, sizeof mine, MPI_BYTE, w->peer, sizeof mine, MPI_BYTE, w->comm);
    return w;
}

int MPI_Win_allocate(MPI_Aint size, int disp_unit, MPI_Info info, MPI_Comm comm, void *baseptr,
                     MPI_Win *win)
{
    CALL("MPI_Win_allocate");
    (void)info;
    pm_win *w = win_new(comm, MPI_WIN_FLAVOR_ALLOCATE, NULL, size, disp_unit, "MPI_Win_allocate");
    *(void **)baseptr = w->base;
    *win = as_win_handle(w);
    RETURN(MPI_SUCCESS);
}

int MPI_Win_create(void *base, MPI_Aint size, int disp_unit, MPI_Info info, MPI_Comm comm,
                   MPI_Win *win)
{
    CALL("MPI_Win_create");
    (void)info;
    *win = as_win_handle(win_new(comm, MPI_WIN_FLAVOR_CREATE, base, size, disp_unit, "MPI_Win_create"));
    RETURN(MPI_SUCCESS);
}

int MPI_Win_create_dynamic(MPI_Info info, MPI_Comm comm, MPI_Win *win)
{
    CALL("MPI_Win_create_dynamic");
    (void)info;
    *win = as_win_handle(win_new(comm, MPI_WIN_FLAVOR_DYNAMIC, NULL, 0, 1, "MPI_Win_create_dynamic"));
    RETURN(MPI_SUCCESS);
}

int MPI_Win_attach(MPI_Win win, void *base, MPI_Aint size)
{
    CALL("MPI_Win_attach");
    pm_win *w = pm_win_of(win);
    if (w->flavor != MPI_WIN_FLAVOR_DYNAMIC)
        pm_fatal("the window was not made by MPI_Win_create_dynamic (MPI_ERR_RMA_FLAVOR)");
    if (size < 0)
        pm_fatal("negative size %ld (MPI_ERR_SIZE)", (long)size);
    /* the target applies other ranks' operations to it at its next MPI call:
     * memory it cannot write would fault there, inside the layer */
    if (!pm_rma_writable(base, (uint64_t)size))
        pm_fatal("base = %p, size = %ld: the memory is not mapped writable for its whole length "
                 "(MPI_ERR_RMA_ATTACH)",
                 base, (long)size);
    pm_region *r = calloc(1, sizeof *r);
    r->base = base;
    r->size = (uint64_t)size;
    r->next = w->regions;
    w->regions = r;
    pm_charge(p2_ns_ps(E.rt->prm.mpi_call_ns));
    RETURN(MPI_SUCCESS);
}

int MPI_Win_detach(MPI_Win win, const void *base)
{
    CALL("MPI_Win_detach");
    pm_win *w = pm_win_of(win);
    for (pm_region **q = &w->regions; *q; q = &(*q)->next)
        if ((*q)->base == base) {
            pm_region *r = *q;
            *q = r->next;
            free(r);
            pm_charge(p2_ns_ps(E.rt->prm.mpi_call_ns));
            RETURN(MPI_SUCCESS);
        }
    pm_fatal("no region attached at %p (MPI_ERR_RMA_ATTACH)", base);
}

/* MPI_Alloc_mem hands out the layer's registered memory, as MVAPICH2 hands
 * out registered memory, so a window MPI_Win_create makes on it is unified
 * and RDMA goes straight into it; while at least ALLOC_MEM_RESERVE bytes of
 * it would stay free for rendezvous staging and windows, else Open MPI's
 * (process memory). MPI_Free_mem tells them apart by address. */
#define ALLOC_MEM_RESERVE (UINT64_C(16) << 20)

static uint8_t *stage_base(void) { return E.base + E.stage_off; }

int MPI_Alloc_mem(MPI_Aint size, MPI_Info info, void *baseptr)
{
    CALL("MPI_Alloc_mem");
    uint64_t off;
    if (size < 0)
        pm_fatal("negative size %ld (MPI_ERR_SIZE)", (long)size);
    if (tca_arena_used(&E.stage) + (uint64_t)size + ALLOC_MEM_RESERVE <= E.stage.size &&
        tca_arena_alloc(&E.stage, (uint64_t)size, &off) == TCA_ARENA_OK)
        *(void **)baseptr = stage_base() + off;
    else if (PMPI_Alloc_mem(size, info, baseptr) != MPI_SUCCESS)
        pm_fatal("Open MPI could not allocate %ld bytes (MPI_ERR_NO_MEM)", (long)size);
    RETURN(MPI_SUCCESS);
}

int MPI_Free_mem(void *base)
{
    CALL("MPI_Free_mem");
    uint8_t *p = base;
    if (p >= stage_base() && p < stage_base() + E.stage.size) {
        if (tca_arena_free(&E.stage, (uint64_t)(p - stage_base())) != TCA_ARENA_OK)
            pm_fatal("%p is not memory MPI_Alloc_mem gave (MPI_ERR_ARG)", base);
    } else if (PMPI_Free_mem(base) != MPI_SUCCESS) {
        pm_fatal("%p is not memory MPI_Alloc_mem gave (MPI_ERR_ARG)", base);
    }
    RETURN(MPI_SUCCESS);
}

/* ---- The separate memory model ------------------------------------------------------- */

/* The owner's stores to its memory into the public copy: the bytes it changed
 * since the last synchronisation (RDMA may be writing others). */
static void push_bytes(void *arg)
{
    pm_win *w = arg;
    uint8_t *priv = w->base;
    for (MPI_Aint i = 0; i < w->size; i++)
        if (priv[i] != w->shadow[i])
            w->pub[i] = w->shadow[i] = priv[i];
}

/* RMA's updates of the public copy into the owner's memory. */
static void pull_bytes(void *arg)
{
    pm_win *w = arg;
    uint8_t *priv = w->base;
    for (MPI_Aint i = 0; i < w->size; i++)
        if (w->pub[i] != w->shadow[i])
            priv[i] = w->shadow[i] = w->pub[i];
}

/* Both touch the program's memory, which it may have unmapped since
 * MPI_Win_create (erroneous): a SIGSEGV inside the layer otherwise. */
static void sync_private(pm_win *w, void (*fn)(void *))
{
    if (w->model != MPI_WIN_SEPARATE)
        return;
    if (pm_rma_guarded(fn, w))
        pm_fatal("window %u: its memory, %ld bytes at %p, is no longer mapped writable (freed "
                 "before MPI_Win_free?) (MPI_ERR_ARG)",
                 w->id, (long)w->size, w->base);
}

static void push(pm_win *w) { sync_private(w, push_bytes); }
static void pull(pm_win *w) { sync_private(w, pull_bytes); }

int MPI_Win_free(MPI_Win *win)
{
    CALL("MPI_Win_free");
    pm_win *w = pm_win_of(*win);
    if (w->lock_all || w->naccess >= 0 || w->nexpose >= 0)
        pm_fatal("an epoch is still open on the window (MPI_ERR_RMA_SYNC)");
    for (int t = 0; t < w->comm->size; t++)
        if (w->locked[t])
            pm_fatal("rank %d's lock is still held (MPI_ERR_RMA_SYNC)", t);
    pm_rma_flush(w, -1, 0);
    push(w);
    pm_coll_barrier(w->comm); /* nobody reaches this rank's memory any more */
    pull(w);
    pm_win_unlink(w);
    tca_arena_free(&E.stage, w->mem_off - 1);
    while (w->regions) {
        pm_region *r = w->regions;
        w->regions = r->next;
        free(r);
    }
    MPI_Comm_free(&w->comm_handle);
    free(w->locked);
    free(w->pending);
    free(w->pending_local);
    free(w->posts);
    free(w->dones);
    free(w->peer);
    free(w->shadow);
    free(w->access);
    free(w->expose);
    free(w);
    *win = MPI_WIN_NULL;
    RETURN(MPI_SUCCESS);
}

/* ---- Attributes, names, groups, Fortran handles -------------------------------------- */

int MPI_Win_get_attr(MPI_Win win, int keyval, void *value, int *flag)
{
    pm_need_init("MPI_Win_get_attr");
    pm_win *w = pm_win_of(win);
    *flag = 1;
    switch (keyval) {
    case MPI_WIN_BASE: *(void **)value = w->base; break;
    case MPI_WIN_SIZE: *(MPI_Aint **)value = &w->size; break;
    case MPI_WIN_DISP_UNIT: *(int **)value = &w->disp_unit; break;
    case MPI_WIN_CREATE_FLAVOR: *(int **)value = &w->flavor; break;
    case MPI_WIN_MODEL: *(int **)value = &w->model; break;
    default: *flag = 0; /* no other attribute can be set (MPI_Win_set_attr is not modelled) */
    }
    return MPI_SUCCESS;
}

int MPI_Win_get_group(MPI_Win win, MPI_Group *group)
{
    pm_need_init("MPI_Win_get_group");
    return MPI_Comm_group(pm_win_of(win)->comm_handle, group);
}

int MPI_Win_set_name(MPI_Win win, const char *name)
{
    pm_need_init("MPI_Win_set_name");
    snprintf(pm_win_of(win)->name, sizeof pm_win_of(win)->name, "%s", name);
    return MPI_SUCCESS;
}

int MPI_Win_get_name(MPI_Win win, char *name, int *len)
{
    pm_need_init("MPI_Win_get_name");
    pm_win *w = pm_win_of(win);
    snprintf(name, MPI_MAX_OBJECT_NAME, "%s", w->name);
    *len = (int)strlen(name);
    return MPI_SUCCESS;
}

/* Fortran handles of the layer's windows: their ids, the context ids of their
 * duplicated communicators, never 0, which is mpif.h's MPI_WIN_NULL. */
MPI_Fint MPI_Win_c2f(MPI_Win win)
{
    return win == MPI_WIN_NULL ? 0 : (MPI_Fint)pm_win_of(win)->id;
}

MPI_Win MPI_Win_f2c(MPI_Fint id)
{
    return id == 0 ? MPI_WIN_NULL : as_win_handle(pm_win_by_id((uint32_t)id));
}

/* ---- Synchronisation ------------------------------------------------------------------ */

/* The bracket of a synchronisation call: its name, the window, its cost. */
static pm_win *sync_begin(const char *call, MPI_Win win)
{
    pm_enter(call);
    pm_need_init(call);
    pm_win *w = pm_win_of(win);
    pm_charge(p2_ns_ps(E.rt->prm.mpi_call_ns));
    return w;
}

static void need_no_passive(pm_win *w)
{
    if (w->lock_all)
        pm_fatal("an MPI_Win_lock_all epoch is open on the window (MPI_ERR_RMA_SYNC)");
    for (int t = 0; t < w->comm->size; t++)
        if (w->locked[t])
            pm_fatal("rank %d's lock is held: close the passive-target epoch first (MPI_ERR_RMA_SYNC)",
                     w->comm->world[t]);
}

int MPI_Win_fence(int assert, MPI_Win win)
{
    pm_win *w = sync_begin("MPI_Win_fence", win);
    need_no_passive(w);
    if (w->naccess >= 0 || w->nexpose >= 0)
        pm_fatal("a post/start epoch is open on the window (MPI_ERR_RMA_SYNC)");
    pm_rma_flush(w, -1, 0);
    push(w);
    pm_coll_barrier(w->comm); /* every member's operations are complete at their targets */
    pull(w);
    w->fence_open = !(assert & MPI_MODE_NOSUCCEED);
    RETURN(MPI_SUCCESS);
}

/* The lock word's exclusive mark: the flag, and who holds it (world rank + 1)
 * above it, so that a rank kept waiting can say by whom. */
static uint64_t excl_mark(void)
{
    return LOCK_EXCL | ((uint64_t)(pm_world_rank + 1) << 33);
}

/* After an attempt on target t's lock failed, having found `seen` there:
 * waits until the word may let it succeed ((word & mask) == want), handling
 * completions meanwhile. A polling implementation retries its atomic in a
 * loop; no retry can succeed before another rank's atomic changes the word,
 * so this is the loop's outcome without its traffic (the next attempt goes
 * out when the change lands, where a poll would see it), and a lock nobody
 * gives back is a wait in which the simulator sees the deadlock (every rank
 * waits) and names the lock, its holder and what that one waits for. */
static void lock_wait(pm_win *w, int t, int exclusive, uint64_t seen, uint64_t mask, uint64_t want)
{
    char held[40];
    if (seen & LOCK_EXCL)
        snprintf(held, sizeof held, "by rank %d", (int)(seen >> 33) - 1);
    else
        snprintf(held, sizeof held, "shared by %u rank(s)", (unsigned)(seen & 0xffffffffu));
    snprintf(E.what, sizeof E.what, "for rank %d's %s lock, held %s", w->comm->world[t],
             exclusive ? "exclusive" : "shared", held);
    p2_rt_word word = {.rank = w->comm->world[t], .bus = w->peer[t].lock_bus, .mask = mask, .value = want};
    int met = 0;
    while (!met) {
        pm_progress_also(PM_WAIT_OPEN, &word, &met);
        pm_nbc_run();
    }
}

/* Takes target's lock word: exclusive, or shared (while no exclusive holder
 * has it). */
static void lock_take(pm_win *w, int t, int exclusive)
{
    for (;;) {
        uint64_t v;
        if (exclusive) {
            v = pm_rma_atomic_wait(pm_rma_atomic_post(w, t, IB_OP_ATOMIC_CMP_SWAP, 0, excl_mark()));
            if (v == 0)
                return;
            lock_wait(w, t, 1, v, ~0ull, 0);
        } else {
            v = pm_rma_atomic_wait(pm_rma_atomic_post(w, t, IB_OP_ATOMIC_FETCH_ADD, 1, 0));
            if (!(v & LOCK_EXCL))
                return;
            pm_rma_atomic_wait(pm_rma_atomic_post(w, t, IB_OP_ATOMIC_FETCH_ADD, (uint64_t)-1, 0));
            lock_wait(w, t, 0, v, LOCK_EXCL, 0);
        }
    }
}

static uint64_t lock_release_post(pm_win *w, int t, int exclusive)
{
    return pm_rma_atomic_post(w, t, IB_OP_ATOMIC_FETCH_ADD, exclusive ? (uint64_t)-excl_mark() : (uint64_t)-1, 0);
}

static void check_target(pm_win *w, int rank)
{
    if (rank < 0 || rank >= w->comm->size)
        pm_fatal("rank %d is not in the window's group (size %d) (MPI_ERR_RANK)", rank, w->comm->size);
}

int MPI_Win_lock(int type, int rank, int assert, MPI_Win win)
{
    pm_win *w = sync_begin("MPI_Win_lock", win);
    if (rank == MPI_PROC_NULL)
        RETURN(MPI_SUCCESS);
    check_target(w, rank);
    if (type != MPI_LOCK_SHARED && type != MPI_LOCK_EXCLUSIVE)
        pm_fatal("lock type %d is neither MPI_LOCK_SHARED nor MPI_LOCK_EXCLUSIVE (MPI_ERR_LOCKTYPE)", type);
    if (w->locked[rank] || w->lock_all)
        pm_fatal("rank %d's window is already locked by this rank (MPI_ERR_RMA_SYNC)", w->comm->world[rank]);
    if (w->naccess >= 0)
        pm_fatal("a start epoch is open on the window (MPI_ERR_RMA_SYNC)");
    w->fence_open = 0; /* a fence before a lock opened no epoch (MPI-3.1 11.5) */
    snprintf(E.what, sizeof E.what, "for rank %d's %s lock", w->comm->world[rank],
             type == MPI_LOCK_EXCLUSIVE ? "exclusive" : "shared");
    int nocheck = (assert & MPI_MODE_NOCHECK) != 0;
    if (!nocheck)
        lock_take(w, rank, type == MPI_LOCK_EXCLUSIVE);
    w->locked[rank] = (uint8_t)((type == MPI_LOCK_EXCLUSIVE ? PM_LOCK_EXCL : PM_LOCK_SHARED) |
                                (nocheck ? PM_LOCK_NOCHECK : 0));
    pull(w);
    RETURN(MPI_SUCCESS);
}

int MPI_Win_unlock(int rank, MPI_Win win)
{
    pm_win *w = sync_begin("MPI_Win_unlock", win);
    if (rank == MPI_PROC_NULL)
        RETURN(MPI_SUCCESS);
    check_target(w, rank);
    uint8_t l = w->locked[rank];
    if (!l)
        pm_fatal("rank %d's window is not locked by this rank (MPI_ERR_RMA_SYNC)", w->comm->world[rank]);
    push(w);
    pm_rma_flush(w, rank, 0);
    if (!(l & PM_LOCK_NOCHECK))
        pm_rma_atomic_wait(lock_release_post(w, rank, (l & PM_LOCK_EXCL) != 0));
    w->locked[rank] = PM_LOCK_NONE;
    RETURN(MPI_SUCCESS);
}

int MPI_Win_lock_all(int assert, MPI_Win win)
{
    pm_win *w = sync_begin("MPI_Win_lock_all", win);
    need_no_passive(w);
    if (w->naccess >= 0)
        pm_fatal("a start epoch is open on the window (MPI_ERR_RMA_SYNC)");
    w->fence_open = 0;
    int n = w->comm->size, nocheck = (assert & MPI_MODE_NOCHECK) != 0;
    if (!nocheck) { /* a shared lock on every member: all asked at once */
        snprintf(E.what, sizeof E.what, "for every member's shared lock");
        uint64_t *id = malloc(sizeof *id * (size_t)n);
        for (int t = 0; t < n; t++)
            id[t] = pm_rma_atomic_post(w, t, IB_OP_ATOMIC_FETCH_ADD, 1, 0);
        for (int t = 0; t < n; t++) {
            uint64_t v = pm_rma_atomic_wait(id[t]);
            if (v & LOCK_EXCL) { /* held exclusively: undo, then wait */
                pm_rma_atomic_wait(pm_rma_atomic_post(w, t, IB_OP_ATOMIC_FETCH_ADD, (uint64_t)-1, 0));
                lock_wait(w, t, 0, v, LOCK_EXCL, 0);
                lock_take(w, t, 0);
            }
        }
        free(id);
    }
    w->lock_all = PM_LOCK_SHARED | (nocheck ? PM_LOCK_NOCHECK : 0);
    pull(w);
    RETURN(MPI_SUCCESS);
}

int MPI_Win_unlock_all(MPI_Win win)
{
    pm_win *w = sync_begin("MPI_Win_unlock_all", win);
    if (!w->lock_all)
        pm_fatal("no MPI_Win_lock_all epoch is open on the window (MPI_ERR_RMA_SYNC)");
    push(w);
    pm_rma_flush(w, -1, 0);
    if (!(w->lock_all & PM_LOCK_NOCHECK)) {
        int n = w->comm->size;
        uint64_t *id = malloc(sizeof *id * (size_t)n);
        for (int t = 0; t < n; t++)
            id[t] = lock_release_post(w, t, 0);
        for (int t = 0; t < n; t++)
            pm_rma_atomic_wait(id[t]);
        free(id);
    }
    w->lock_all = 0;
    RETURN(MPI_SUCCESS);
}

/* Flushes belong to passive-target epochs. */
static void flush(const char *call, MPI_Win win, int rank, int local)
{
    pm_win *w = sync_begin(call, win);
    if (rank != MPI_PROC_NULL) {
        int open = w->lock_all != 0;
        if (rank >= 0)
            check_target(w, rank);
        for (int t = rank < 0 ? 0 : rank; t < (rank < 0 ? w->comm->size : rank + 1); t++)
            open |= w->locked[t] != 0;
        if (!open)
            pm_fatal("no passive-target epoch is open on %s (MPI_ERR_RMA_SYNC)",
                     rank >= 0 ? "the rank" : "the window");
        pm_rma_flush(w, rank, local);
    }
    pm_leave();
}

int MPI_Win_flush(int rank, MPI_Win win)
{
    flush("MPI_Win_flush", win, rank, 0);
    return MPI_SUCCESS;
}

int MPI_Win_flush_all(MPI_Win win)
{
    flush("MPI_Win_flush_all", win, -1, 0);
    return MPI_SUCCESS;
}

int MPI_Win_flush_local(int rank, MPI_Win win)
{
    flush("MPI_Win_flush_local", win, rank, 1);
    return MPI_SUCCESS;
}

int MPI_Win_flush_local_all(MPI_Win win)
{
    flush("MPI_Win_flush_local_all", win, -1, 1);
    return MPI_SUCCESS;
}

int MPI_Win_sync(MPI_Win win)
{
    pm_win *w = sync_begin("MPI_Win_sync", win);
    push(w);
    pull(w);
    RETURN(MPI_SUCCESS);
}

/* ---- Post, start, complete, wait --------------------------------------------------------- */

/* A group's members as ranks of the window's communicator. */
static int *group_ranks(pm_win *w, MPI_Group g, int *n)
{
    MPI_Group wg;
    MPI_Group_size(g, n);
    MPI_Comm_group(w->comm_handle, &wg);
    int *in = malloc(sizeof(int) * (size_t)(*n + 1)), *out = malloc(sizeof(int) * (size_t)(*n + 1));
    for (int i = 0; i < *n; i++)
        in[i] = i;
    MPI_Group_translate_ranks(g, *n, in, wg, out);
    MPI_Group_free(&wg);
    free(in);
    for (int i = 0; i < *n; i++)
        if (out[i] == MPI_UNDEFINED)
            pm_fatal("the group's rank %d is not in the window's group (MPI_ERR_GROUP)", i);
    return out;
}

int MPI_Win_post(MPI_Group group, int assert, MPI_Win win)
{
    pm_win *w = sync_begin("MPI_Win_post", win);
    (void)assert;
    if (w->nexpose >= 0)
        pm_fatal("an exposure epoch is already open (MPI_ERR_RMA_SYNC)");
    w->expose = group_ranks(w, group, &w->nexpose);
    push(w);
    for (int i = 0; i < w->nexpose; i++)
        pm_rma_notify(w, w->expose[i], PM_MSG_POST);
    RETURN(MPI_SUCCESS);
}

int MPI_Win_start(MPI_Group group, int assert, MPI_Win win)
{
    pm_win *w = sync_begin("MPI_Win_start", win);
    (void)assert;
    if (w->naccess >= 0)
        pm_fatal("an access epoch is already open (MPI_ERR_RMA_SYNC)");
    need_no_passive(w);
    w->fence_open = 0;
    int n;
    int *a = group_ranks(w, group, &n);
    for (int i = 0; i < n; i++) {
        snprintf(E.what, sizeof E.what, "for rank %d's MPI_Win_post", w->comm->world[a[i]]);
        while (!w->posts[a[i]])
            pm_block();
        w->posts[a[i]]--;
    }
    w->access = a;
    w->naccess = n;
    RETURN(MPI_SUCCESS);
}

int MPI_Win_complete(MPI_Win win)
{
    pm_win *w = sync_begin("MPI_Win_complete", win);
    if (w->naccess < 0)
        pm_fatal("no MPI_Win_start epoch is open (MPI_ERR_RMA_SYNC)");
    for (int i = 0; i < w->naccess; i++) {
        pm_rma_flush(w, w->access[i], 0);
        pm_rma_notify(w, w->access[i], PM_MSG_DONE);
    }
    free(w->access);
    w->access = NULL;
    w->naccess = -1;
    RETURN(MPI_SUCCESS);
}

/* Whether every origin of the exposure epoch has completed (consumes their
 * DONEs and ends the epoch when so). */
static int exposure_done(pm_win *w)
{
    for (int i = 0; i < w->nexpose; i++)
        if (!w->dones[w->expose[i]])
            return 0;
    for (int i = 0; i < w->nexpose; i++)
        w->dones[w->expose[i]]--;
    free(w->expose);
    w->expose = NULL;
    w->nexpose = -1;
    pull(w);
    return 1;
}

int MPI_Win_wait(MPI_Win win)
{
    pm_win *w = sync_begin("MPI_Win_wait", win);
    if (w->nexpose < 0)
        pm_fatal("no MPI_Win_post epoch is open (MPI_ERR_RMA_SYNC)");
    snprintf(E.what, sizeof E.what, "for its origins' MPI_Win_complete");
    while (!exposure_done(w))
        pm_block();
    RETURN(MPI_SUCCESS);
}

int MPI_Win_test(MPI_Win win, int *flag)
{
    pm_win *w = sync_begin("MPI_Win_test", win);
    if (w->nexpose < 0)
        pm_fatal("no MPI_Win_post epoch is open (MPI_ERR_RMA_SYNC)");
    pm_poll();
    *flag = exposure_done(w);
    RETURN(MPI_SUCCESS);
}
