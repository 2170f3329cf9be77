/* mpi_hostile MODE ARGS: a program that misuses MPI's arguments as real
 * programs do (issue 37), run by p2run at 2 ranks. Each erroneous call must
 * end the job with the layer's message naming the call, the rank, the
 * argument and the MPI error class; none may return (the program then says
 * so and exits 2), give a wrong answer, hang or crash inside the layer.
 *   disp CALL wrap|wrap20|neg  rank 0's one-sided CALL (put get acc getacc
 *       fop cas rput rget racc rgetacc) on rank 1's 16-byte window: at
 *       displacement 2^61 + 1 with unit 8 (wrap: the 64-bit product is
 *       2^64 + 8, bytes 8-15 once wrapped), at 2^44 with unit 2^20 (wrap20:
 *       2^64, byte 0), or at -1 with unit 8 through a type whose one int
 *       lies 8 bytes in (neg: bytes 0-3 once added)
 *   count CALL    CALL with a count of -4 (every rank for a collective;
 *       rank 0 for a send, rank 1 for a receive), or one entry of -4 in a
 *       vector of counts
 *   nullreq CALL  CALL with a NULL request pointer
 *   memory CASE   windows on memory the process cannot write: attach of
 *       unmapped, read-only memory, memory unmapped after MPI_Win_attach
 *       (rank 0 then Puts into it), MPI_Win_create on NULL or read-only
 *       memory, or on memory unmapped after it
 *   lock HOW      a window lock never given back: rank 0 takes rank 1's
 *       lock (exclusive, or shared for shared) and goes into MPI_Barrier
 *       (barrier, shared) or MPI_Finalize (finalize) holding it; rank 1
 *       asks for it exclusively, then would enter the barrier. A deadlock
 *       (not simulated time running on while rank 1 retries)
 *   acc           every accumulate kind on the widest predefined type
 *       (MPI_C_LONG_DOUBLE_COMPLEX) and Compare_and_swap on a long long:
 *       the results checked (run at the smallest mpi_eager_bytes)
 * The modes below run at 2 ranks or more; the erroneous argument is the last
 * rank's, the others' are right, and the program goes on as a real one would
 * (more collectives, the data printed), so that a call let through is seen
 * leaving the ranks with different answers:
 *   roots CALL ROOT  a rooted collective (ibcast ireduce igather igatherv
 *       iscatter iscatterv, and the blocking ones without the i) where the
 *       last rank passes root ROOT and the others root 0; then an
 *       MPI_Ibarrier and an MPI_Iallreduce of what every rank received
 *   args CALL WHAT  a reduction (reduce allreduce reduce_scatter
 *       reduce_scatter_block scan exscan, and the nonblocking ones with an
 *       i) where the last rank passes MPI_PROD for MPI_SUM (op), MPI_FLOAT
 *       for MPI_INT (type) or another count (count: 2 for 4, recvcounts
 *       {2, 1, ...} for {1, 1, ...}, recvcount 2 for 1)
 *   threads N     (MPI_THREAD_MULTIPLE) main and a helper thread each make
 *       N MPI_Allreduce on MPI_COMM_WORLD at once (erroneous: collectives on
 *       one communicator must be ordered, two threads' are not); each
 *       checks its sums
 */
#include <complex.h>
#include <mpi.h>
#include <pthread.h>
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/mman.h>
#include <unistd.h>

static int rank, size;

static _Noreturn void returned(const char *what)
{
    fprintf(stderr, "rank %d: the erroneous %s returned\n", rank, what);
    fflush(stderr);
    exit(2);
}

static int is(const char *a, const char *b) { return strcmp(a, b) == 0; }

/* ---- disp ------------------------------------------------------------------------ */
static void disp(const char *call, const char *how)
{
    int unit = is(how, "wrap20") ? 1 << 20 : 8;
    MPI_Aint d = is(how, "wrap") ? ((MPI_Aint)1 << 61) + 1 : is(how, "wrap20") ? (MPI_Aint)1 << 44 : -1;
    int32_t *mem;
    MPI_Win win;
    MPI_Win_allocate(16, unit, MPI_INFO_NULL, MPI_COMM_WORLD, &mem, &win);
    for (int i = 0; i < 4; i++)
        mem[i] = 100 * rank + i;
    /* neg: one int 8 bytes into the target (a legal type; the displacement
     * is what is wrong) */
    MPI_Datatype t = MPI_INT;
    if (is(how, "neg")) {
        int one = 1;
        MPI_Aint at = 8;
        MPI_Type_create_hindexed(1, &one, &at, MPI_INT, &t);
        MPI_Type_commit(&t);
    }
    MPI_Barrier(MPI_COMM_WORLD);
    MPI_Win_lock_all(0, win);
    if (rank == 0) {
        int32_t v[2] = {-7, -8}, r[2] = {0, 0}, cmp = 102;
        MPI_Request q = MPI_REQUEST_NULL;
        int n = is(how, "wrap") && (is(call, "put") || is(call, "get")) ? 2 : 1;
        MPI_Datatype tt = n == 2 ? MPI_INT : t; /* wrap: 2 ints at bytes 8-15 */
        if (is(call, "put"))
            MPI_Put(v, n, MPI_INT, 1, d, n == 2 ? 2 : 1, tt, win);
        else if (is(call, "get"))
            MPI_Get(r, n, MPI_INT, 1, d, n == 2 ? 2 : 1, tt, win);
        else if (is(call, "acc"))
            MPI_Accumulate(v, 1, MPI_INT, 1, d, 1, t, MPI_SUM, win);
        else if (is(call, "getacc"))
            MPI_Get_accumulate(v, 1, MPI_INT, r, 1, MPI_INT, 1, d, 1, t, MPI_SUM, win);
        else if (is(call, "fop"))
            MPI_Fetch_and_op(v, r, MPI_INT, 1, d, MPI_SUM, win);
        else if (is(call, "cas"))
            MPI_Compare_and_swap(v, &cmp, r, MPI_INT, 1, d, win);
        else if (is(call, "rput"))
            MPI_Rput(v, 1, MPI_INT, 1, d, 1, t, win, &q);
        else if (is(call, "rget"))
            MPI_Rget(r, 1, MPI_INT, 1, d, 1, t, win, &q);
        else if (is(call, "racc"))
            MPI_Raccumulate(v, 1, MPI_INT, 1, d, 1, t, MPI_SUM, win, &q);
        else if (is(call, "rgetacc"))
            MPI_Rget_accumulate(v, 1, MPI_INT, r, 1, MPI_INT, 1, d, 1, t, MPI_SUM, win, &q);
        else {
            fprintf(stderr, "unknown call %s\n", call);
            exit(3);
        }
        MPI_Wait(&q, MPI_STATUS_IGNORE);
        MPI_Win_flush_all(win);
        fprintf(stderr, "rank 0: %s at displacement %ld, unit %d: result %d %d\n", call, (long)d,
                unit, r[0], r[1]);
    }
    MPI_Win_unlock_all(win);
    MPI_Barrier(MPI_COMM_WORLD);
    if (rank == 1)
        fprintf(stderr, "rank 1: window now %d %d %d %d\n", mem[0], mem[1], mem[2], mem[3]);
    MPI_Barrier(MPI_COMM_WORLD);
    returned(call);
}

/* ---- count ----------------------------------------------------------------------- */
static void count(const char *call)
{
    int buf[64] = {0}, out[64] = {0}, counts[8], displs[8], neg = -4;
    MPI_Request q = MPI_REQUEST_NULL;
    for (int i = 0; i < 8; i++) {
        counts[i] = 1;
        displs[i] = i;
    }
    counts[size - 1] = neg; /* the vector cases: the last rank's entry */
    if (is(call, "send")) {
        if (rank == 0)
            MPI_Send(buf, neg, MPI_INT, 1, 0, MPI_COMM_WORLD);
    } else if (is(call, "irecv")) {
        if (rank == 1) {
            MPI_Irecv(buf, neg, MPI_INT, 0, 0, MPI_COMM_WORLD, &q);
            MPI_Wait(&q, MPI_STATUS_IGNORE);
        }
    } else if (is(call, "sendrecv")) {
        MPI_Sendrecv(buf, 1, MPI_INT, 1 - rank, 0, out, neg, MPI_INT, 1 - rank, 0, MPI_COMM_WORLD,
                     MPI_STATUS_IGNORE);
    } else if (is(call, "send_init")) {
        if (rank == 0)
            MPI_Send_init(buf, neg, MPI_INT, 1, 0, MPI_COMM_WORLD, &q);
    } else if (is(call, "bcast")) {
        MPI_Bcast(buf, neg, MPI_INT, 0, MPI_COMM_WORLD);
    } else if (is(call, "reduce")) {
        MPI_Reduce(buf, out, neg, MPI_INT, MPI_SUM, 0, MPI_COMM_WORLD);
    } else if (is(call, "allreduce")) {
        MPI_Allreduce(buf, out, neg, MPI_INT, MPI_SUM, MPI_COMM_WORLD);
    } else if (is(call, "scan")) {
        MPI_Scan(buf, out, neg, MPI_INT, MPI_SUM, MPI_COMM_WORLD);
    } else if (is(call, "iallreduce")) {
        MPI_Iallreduce(buf, out, neg, MPI_INT, MPI_SUM, MPI_COMM_WORLD, &q);
        MPI_Wait(&q, MPI_STATUS_IGNORE);
    } else if (is(call, "ireduce")) {
        MPI_Ireduce(buf, out, neg, MPI_INT, MPI_SUM, 0, MPI_COMM_WORLD, &q);
        MPI_Wait(&q, MPI_STATUS_IGNORE);
    } else if (is(call, "allgather")) {
        MPI_Allgather(buf, neg, MPI_INT, out, neg, MPI_INT, MPI_COMM_WORLD);
    } else if (is(call, "gatherv")) {
        MPI_Gatherv(buf, 1, MPI_INT, out, counts, displs, MPI_INT, 0, MPI_COMM_WORLD);
    } else if (is(call, "ialltoallv")) {
        MPI_Ialltoallv(buf, counts, displs, MPI_INT, out, counts, displs, MPI_INT, MPI_COMM_WORLD,
                       &q);
        MPI_Wait(&q, MPI_STATUS_IGNORE);
    } else if (is(call, "neighbor_alltoallv")) {
        MPI_Comm ring;
        int dims[1] = {size}, periods[1] = {1};
        MPI_Cart_create(MPI_COMM_WORLD, 1, dims, periods, 0, &ring);
        int sc[2] = {1, neg}, rc[2] = {1, 1}, dd[2] = {0, 1};
        MPI_Neighbor_alltoallv(buf, sc, dd, MPI_INT, out, rc, dd, MPI_INT, ring);
    } else if (is(call, "put")) {
        int *mem;
        MPI_Win win;
        MPI_Win_allocate(64, 4, MPI_INFO_NULL, MPI_COMM_WORLD, &mem, &win);
        MPI_Win_fence(0, win);
        if (rank == 0)
            MPI_Put(buf, neg, MPI_INT, 1, 0, neg, MPI_INT, win);
        MPI_Win_fence(0, win);
    } else {
        fprintf(stderr, "unknown call %s\n", call);
        exit(3);
    }
    MPI_Barrier(MPI_COMM_WORLD);
    returned(call);
}

/* ---- nullreq --------------------------------------------------------------------- */
static void nullreq(const char *call)
{
    int buf[4] = {0}, out[4] = {0};
    if (is(call, "isend")) {
        if (rank == 0)
            MPI_Isend(buf, 1, MPI_INT, 1, 0, MPI_COMM_WORLD, NULL);
    } else if (is(call, "irecv")) {
        if (rank == 1)
            MPI_Irecv(buf, 1, MPI_INT, 0, 0, MPI_COMM_WORLD, NULL);
    } else if (is(call, "iallreduce")) {
        MPI_Iallreduce(buf, out, 1, MPI_INT, MPI_SUM, MPI_COMM_WORLD, NULL);
    } else if (is(call, "ineighbor_allgather")) {
        MPI_Comm ring;
        int dims[1] = {size}, periods[1] = {1};
        MPI_Cart_create(MPI_COMM_WORLD, 1, dims, periods, 0, &ring);
        MPI_Ineighbor_allgather(buf, 1, MPI_INT, out, 1, MPI_INT, ring, NULL);
    } else if (is(call, "wait")) {
        MPI_Wait(NULL, MPI_STATUS_IGNORE);
    } else if (is(call, "rput")) {
        int *mem;
        MPI_Win win;
        MPI_Win_allocate(64, 4, MPI_INFO_NULL, MPI_COMM_WORLD, &mem, &win);
        MPI_Win_lock_all(0, win);
        if (rank == 0)
            MPI_Rput(buf, 1, MPI_INT, 1, 0, 1, MPI_INT, win, NULL);
        MPI_Win_unlock_all(win);
    } else {
        fprintf(stderr, "unknown call %s\n", call);
        exit(3);
    }
    MPI_Barrier(MPI_COMM_WORLD);
    returned(call);
}

/* ---- memory ---------------------------------------------------------------------- */
enum { REGION = 65536 };

static void memory(const char *what)
{
    MPI_Win win;
    if (is(what, "create-null") || is(what, "create-readonly") || is(what, "create-freed")) {
        void *base = NULL;
        if (!is(what, "create-null"))
            base = mmap(NULL, 1 << 20, is(what, "create-freed") ? PROT_READ | PROT_WRITE : PROT_READ,
                        MAP_PRIVATE | MAP_ANONYMOUS, -1, 0);
        MPI_Win_create(rank == 1 ? base : malloc(1 << 20), 1 << 20, 1, MPI_INFO_NULL,
                       MPI_COMM_WORLD, &win);
        if (rank == 1 && is(what, "create-freed"))
            munmap(base, 1 << 20); /* erroneous: freed while the window lives */
        MPI_Win_fence(0, win);
        if (rank == 0) {
            long v = 42;
            MPI_Put(&v, 1, MPI_LONG, 1, 0, 1, MPI_LONG, win);
        }
        MPI_Win_fence(0, win);
        returned("MPI_Win_create");
    }
    MPI_Win_create_dynamic(MPI_INFO_NULL, MPI_COMM_WORLD, &win);
    uint8_t *mem = mmap(NULL, REGION, is(what, "attach-readonly") ? PROT_READ : PROT_READ | PROT_WRITE,
                        MAP_PRIVATE | MAP_ANONYMOUS, -1, 0);
    if (mem == MAP_FAILED)
        exit(3);
    if (is(what, "attach-unmapped"))
        munmap(mem, REGION);
    MPI_Aint where = 0, there;
    if (rank == 1) {
        MPI_Win_attach(win, mem, REGION);
        if (is(what, "attach-freed"))
            munmap(mem, REGION); /* erroneous: freed while attached */
        MPI_Get_address(mem, &where);
    }
    MPI_Allreduce(&where, &there, 1, MPI_AINT, MPI_SUM, MPI_COMM_WORLD);
    MPI_Win_lock_all(0, win);
    if (rank == 0) {
        long v = 42;
        MPI_Put(&v, 1, MPI_LONG, 1, there + 64, 1, MPI_LONG, win);
        MPI_Win_flush_all(win);
    }
    MPI_Win_unlock_all(win);
    MPI_Barrier(MPI_COMM_WORLD);
    returned(what);
}

/* ---- acc: one-sided accumulates at the smallest eager buffers --------------------- */
static void lock(const char *how)
{
    int *mem;
    MPI_Win win;
    MPI_Win_allocate(sizeof *mem, sizeof *mem, MPI_INFO_NULL, MPI_COMM_WORLD, &mem, &win);
    MPI_Barrier(MPI_COMM_WORLD);
    if (rank == 0) {
        MPI_Win_lock(is(how, "shared") ? MPI_LOCK_SHARED : MPI_LOCK_EXCLUSIVE, 1, 0, win);
        MPI_Barrier(MPI_COMM_WORLD); /* tells rank 1 the lock is held */
        if (is(how, "finalize"))
            MPI_Finalize();
        else
            MPI_Barrier(MPI_COMM_WORLD);
    } else {
        MPI_Barrier(MPI_COMM_WORLD);
        MPI_Win_lock(MPI_LOCK_EXCLUSIVE, 1, 0, win);
        MPI_Barrier(MPI_COMM_WORLD);
    }
    returned("MPI_Win_lock");
}

static void acc(void)
{
    long double complex *mem;
    MPI_Win win;
    MPI_Win_allocate(4 * sizeof *mem, sizeof *mem, MPI_INFO_NULL, MPI_COMM_WORLD, &mem, &win);
    for (int i = 0; i < 4; i++)
        mem[i] = i + 10 * rank;
    long long *ll = (long long *)(mem + 3);
    *ll = 5;
    MPI_Barrier(MPI_COMM_WORLD);
    MPI_Win_lock_all(0, win);
    int bad = 0;
    if (rank == 0) {
        long double complex v[2] = {1 + 2 * I, 3}, old = 0, got = 0;
        long long nv = 9, cmp = 5, prev = 0;
        MPI_Accumulate(v, 2, MPI_C_LONG_DOUBLE_COMPLEX, 1, 0, 2, MPI_C_LONG_DOUBLE_COMPLEX, MPI_SUM,
                       win);
        MPI_Win_flush(1, win);
        MPI_Fetch_and_op(v, &old, MPI_C_LONG_DOUBLE_COMPLEX, 1, 2, MPI_SUM, win);
        MPI_Win_flush(1, win);
        MPI_Get_accumulate(v, 1, MPI_C_LONG_DOUBLE_COMPLEX, &got, 1, MPI_C_LONG_DOUBLE_COMPLEX, 1,
                           0, 1, MPI_C_LONG_DOUBLE_COMPLEX, MPI_NO_OP, win);
        MPI_Compare_and_swap(&nv, &cmp, &prev, MPI_LONG_LONG, 1, 3 * sizeof *mem / sizeof *mem,
                             win);
        MPI_Win_flush(1, win);
        bad += old != 12;                  /* rank 1's mem[2] before */
        bad += got != 11 + 2 * I;          /* mem[0] = 10 + (1 + 2i) */
        bad += prev != 5;
        printf("acc: old %Lg, got %Lg%+Lgi, prev %lld: %s\n", creall(old), creall(got), cimagl(got),
               prev, bad ? "WRONG" : "ok");
    }
    MPI_Win_unlock_all(win);
    MPI_Barrier(MPI_COMM_WORLD);
    if (rank == 1) {
        bad += mem[1] != 14;        /* 11 + 3 */
        bad += mem[2] != 13 + 2 * I; /* 12 + (1 + 2i) */
        bad += *ll != 9;
        printf("acc: target %s\n", bad ? "WRONG" : "ok");
    }
    MPI_Win_free(&win);
    MPI_Finalize();
    exit(bad ? 1 : 0);
}

/* ---- roots: rooted collectives whose roots differ between ranks ------------------ */
static void roots(const char *call, int bad_root)
{
    int last = rank == size - 1, root = last ? bad_root : 0;
    int buf[64], out[64], counts[64], displs[64];
    for (int i = 0; i < 64; i++) {
        buf[i] = 100 * (rank + 1) + i;
        out[i] = -1;
        counts[i] = 2;
        displs[i] = 2 * i;
    }
    MPI_Request q = MPI_REQUEST_NULL;
    const char *c = call[0] == 'i' ? call + 1 : call;
    int nb = call[0] == 'i';
    if (is(c, "bcast")) {
        if (nb)
            MPI_Ibcast(buf, 4, MPI_INT, root, MPI_COMM_WORLD, &q);
        else
            MPI_Bcast(buf, 4, MPI_INT, root, MPI_COMM_WORLD);
    } else if (is(c, "reduce")) {
        if (nb)
            MPI_Ireduce(buf, out, 4, MPI_INT, MPI_SUM, root, MPI_COMM_WORLD, &q);
        else
            MPI_Reduce(buf, out, 4, MPI_INT, MPI_SUM, root, MPI_COMM_WORLD);
    } else if (is(c, "gather")) {
        if (nb)
            MPI_Igather(buf, 2, MPI_INT, out, 2, MPI_INT, root, MPI_COMM_WORLD, &q);
        else
            MPI_Gather(buf, 2, MPI_INT, out, 2, MPI_INT, root, MPI_COMM_WORLD);
    } else if (is(c, "gatherv")) {
        if (nb)
            MPI_Igatherv(buf, 2, MPI_INT, out, counts, displs, MPI_INT, root, MPI_COMM_WORLD, &q);
        else
            MPI_Gatherv(buf, 2, MPI_INT, out, counts, displs, MPI_INT, root, MPI_COMM_WORLD);
    } else if (is(c, "scatter")) {
        if (nb)
            MPI_Iscatter(buf, 2, MPI_INT, out, 2, MPI_INT, root, MPI_COMM_WORLD, &q);
        else
            MPI_Scatter(buf, 2, MPI_INT, out, 2, MPI_INT, root, MPI_COMM_WORLD);
    } else if (is(c, "scatterv")) {
        if (nb)
            MPI_Iscatterv(buf, counts, displs, MPI_INT, out, 2, MPI_INT, root, MPI_COMM_WORLD, &q);
        else
            MPI_Scatterv(buf, counts, displs, MPI_INT, out, 2, MPI_INT, root, MPI_COMM_WORLD);
    } else {
        fprintf(stderr, "unknown call %s\n", call);
        exit(3);
    }
    MPI_Wait(&q, MPI_STATUS_IGNORE);
    /* what a program does next: more collectives, on what it received */
    int sum = 0, total = 0;
    for (int i = 0; i < 4; i++)
        sum += is(c, "bcast") ? buf[i] : out[i];
    MPI_Ibarrier(MPI_COMM_WORLD, &q);
    MPI_Wait(&q, MPI_STATUS_IGNORE);
    MPI_Iallreduce(&sum, &total, 1, MPI_INT, MPI_SUM, MPI_COMM_WORLD, &q);
    MPI_Wait(&q, MPI_STATUS_IGNORE);
    fprintf(stderr, "rank %d: %s with root %d: first 4 elements sum to %d, %d over the ranks\n",
            rank, call, root, sum, total);
    MPI_Barrier(MPI_COMM_WORLD);
    returned(call);
}

/* ---- args: reductions whose arguments differ between ranks ------------------------- */
static void args(const char *call, const char *what)
{
    int last = rank == size - 1;
    int n = last && is(what, "count") ? 2 : 4;
    MPI_Datatype t = last && is(what, "type") ? MPI_FLOAT : MPI_INT;
    MPI_Op op = last && is(what, "op") ? MPI_PROD : MPI_SUM;
    int buf[256], out[256], rcounts[64];
    for (int i = 0; i < 256; i++) {
        buf[i] = rank + 2;
        out[i] = 0;
    }
    for (int i = 0; i < 64; i++)
        rcounts[i] = 1;
    if (last && is(what, "count"))
        rcounts[0] = 2;
    int rblock = last && is(what, "count") ? 2 : 1;
    MPI_Request q = MPI_REQUEST_NULL;
    const char *c = call[0] == 'i' ? call + 1 : call;
    int nb = call[0] == 'i';
    if (is(c, "reduce")) {
        if (nb)
            MPI_Ireduce(buf, out, n, t, op, 0, MPI_COMM_WORLD, &q);
        else
            MPI_Reduce(buf, out, n, t, op, 0, MPI_COMM_WORLD);
    } else if (is(c, "allreduce")) {
        if (nb)
            MPI_Iallreduce(buf, out, n, t, op, MPI_COMM_WORLD, &q);
        else
            MPI_Allreduce(buf, out, n, t, op, MPI_COMM_WORLD);
    } else if (is(c, "reduce_scatter")) {
        if (nb)
            MPI_Ireduce_scatter(buf, out, rcounts, t, op, MPI_COMM_WORLD, &q);
        else
            MPI_Reduce_scatter(buf, out, rcounts, t, op, MPI_COMM_WORLD);
    } else if (is(c, "reduce_scatter_block")) {
        if (nb)
            MPI_Ireduce_scatter_block(buf, out, rblock, t, op, MPI_COMM_WORLD, &q);
        else
            MPI_Reduce_scatter_block(buf, out, rblock, t, op, MPI_COMM_WORLD);
    } else if (is(c, "scan")) {
        if (nb)
            MPI_Iscan(buf, out, n, t, op, MPI_COMM_WORLD, &q);
        else
            MPI_Scan(buf, out, n, t, op, MPI_COMM_WORLD);
    } else if (is(c, "exscan")) {
        if (nb)
            MPI_Iexscan(buf, out, n, t, op, MPI_COMM_WORLD, &q);
        else
            MPI_Exscan(buf, out, n, t, op, MPI_COMM_WORLD);
    } else {
        fprintf(stderr, "unknown call %s\n", call);
        exit(3);
    }
    MPI_Wait(&q, MPI_STATUS_IGNORE);
    fprintf(stderr, "rank %d: %s with differing %s: result %d %d %d %d\n", rank, call, what,
            out[0], out[1], out[2], out[3]);
    MPI_Barrier(MPI_COMM_WORLD);
    returned(call);
}

/* ---- threads: two threads' collectives on one communicator at once ------------------ */
static int rounds;

static void *allreduces(void *arg)
{
    int base = *(int *)arg, wrong = 0;
    /* the last rank's main thread starts a little later (as a rank with
     * more to do first would): its helper's calls meet the others' main's */
    if (base == 1 && rank == size - 1)
        for (double t = MPI_Wtime(); MPI_Wtime() - t < 20e-6;)
            ;
    for (int i = 0; i < rounds; i++) {
        int v = base + i, s = 0;
        MPI_Allreduce(&v, &s, 1, MPI_INT, MPI_SUM, MPI_COMM_WORLD);
        wrong += s != size * v;
    }
    fprintf(stderr, "rank %d: thread with values from %d: %d of %d allreduces wrong\n", rank, base,
            wrong, rounds);
    return NULL;
}

static void threads(int n)
{
    rounds = n;
    int a = 1, b = 100000;
    pthread_t helper;
    pthread_create(&helper, NULL, allreduces, &b);
    allreduces(&a);
    pthread_join(helper, NULL);
    MPI_Barrier(MPI_COMM_WORLD);
    returned("concurrent MPI_Allreduce");
}

int main(int argc, char **argv)
{
    if (argc > 1 && is(argv[1], "threads")) {
        int got;
        MPI_Init_thread(&argc, &argv, MPI_THREAD_MULTIPLE, &got);
        if (got != MPI_THREAD_MULTIPLE) {
            fprintf(stderr, "MPI_THREAD_MULTIPLE not granted\n");
            exit(3);
        }
    } else {
        MPI_Init(&argc, &argv);
    }
    MPI_Comm_rank(MPI_COMM_WORLD, &rank);
    MPI_Comm_size(MPI_COMM_WORLD, &size);
    if (size < 2 || size > 64 || argc < 2) {
        fprintf(stderr, "usage: p2run -n N -- mpi_hostile MODE ARGS\n");
        exit(3);
    }
    if (is(argv[1], "roots") && argc == 4)
        roots(argv[2], atoi(argv[3]));
    else if (is(argv[1], "args") && argc == 4)
        args(argv[2], argv[3]);
    else if (is(argv[1], "threads") && argc == 3)
        threads(atoi(argv[2]));
    if (size != 2) {
        fprintf(stderr, "usage: p2run -n 2 -- mpi_hostile MODE ARGS\n");
        exit(3);
    }
    if (is(argv[1], "disp") && argc == 4)
        disp(argv[2], argv[3]);
    else if (is(argv[1], "count") && argc == 3)
        count(argv[2]);
    else if (is(argv[1], "nullreq") && argc == 3)
        nullreq(argv[2]);
    else if (is(argv[1], "memory") && argc == 3)
        memory(argv[2]);
    else if (is(argv[1], "lock") && argc == 3)
        lock(argv[2]);
    else if (is(argv[1], "acc"))
        acc();
    fprintf(stderr, "unknown mode\n");
    exit(3);
}
