/*
 * rk_fmpl - FMPL under p2run on an SR8000 topology: every byte it moves is
 * checked. One mode per run:
 *
 *   p2p      blocking send/recv between neighbours (sizes 0 B .. 1 MiB, packet
 *            boundaries), shorter messages than the buffer (fmpl_recv_size),
 *            isend/irecv both ways round a ring, self-sends
 *   buffered rank 0's send times out (rank 1 is busy), is spooled, and goes
 *            out through fmpl_sendbuff_check; rank 1 gets the right bytes
 *   coll     software broadcast from every root, hardware broadcast (or its
 *            refusal where not allowed), reduce and allreduce with all 15
 *            functions from every root, barrier; on FMPL_COMM_WORLD and on a
 *            communicator of the even ranks
 *   errors   the bad input: slot in use, message larger than the
 *            receive buffer (both sides, nothing moved), hardware broadcast
 *            or barrier where not allowed, a broadcast offset mismatch, a
 *            communicator key mismatch, and argument errors
 *   timing   barrier (as FMPL_COMM_WORLD chooses) and 8 B ping-pong times
 *            (timing-sw: with FMPL_HW_COLLECTIVES=0)
 *   badinit  ranks passing different slot counts to fmpl_init are refused
 *   counts   reductions where one rank passes another count (larger or
 *            smaller; the root or a leaf): fmpl_allreduce fails on every
 *            rank, fmpl_reduce at the root; the next right call works
 *   deadlock ranks 0 and 1 both receive and nobody sends (the job must end
 *            with the simulator's diagnosis)
 *
 * Prints "rank R: MODE: ..." lines the ctest cases match; exits 1 on a wrong
 * byte or an unexpected code.
 */
#include <math.h>
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "fmpl.h"
#include "p2.h"
#include "p2_check.h"

static int me, np;

#define OK(ier, what) EXPECT((ier) == FMPL_SUCCESS, "%s: %s", what, fmpl_error_string(ier))
#define EXPECT_IER(ier, code, what) \
    EXPECT((ier) == (code), "%s: got %s, want %s", what, fmpl_error_string(ier), fmpl_error_string(code))

static uint8_t pat(int from, size_t i, int round) { return (uint8_t)(from * 37 + (int)(i * 11) + round * 5 + (int)(i >> 9)); }

static void fill(uint8_t *b, size_t n, int from, int round)
{
    for (size_t i = 0; i < n; i++)
        b[i] = pat(from, i, round);
}

static size_t wrong(const uint8_t *b, size_t n, int from, int round)
{
    size_t bad = 0;
    for (size_t i = 0; i < n; i++)
        bad += b[i] != pat(from, i, round);
    return bad;
}

/* ---- p2p ---------------------------------------------------------------- */

static void mode_p2p(void)
{
    static const size_t sizes[] = {0, 1, 8, 31, 4095, 4096, 4097, 100000, 1 << 20};
    const size_t nsizes = sizeof sizes / sizeof sizes[0];
    uint8_t *sbuf = fmpl_malloc(1 << 20), *rbuf = fmpl_malloc((1 << 20) + 64);
    int ier, pairs = 0;
    int partner = me ^ 1;
    if (partner < np) {
        for (size_t k = 0; k < nsizes; k++) {
            size_t n = sizes[k];
            fill(sbuf, n, me, (int)k);
            memset(rbuf, 0xcc, n + 64);
            /* Even ranks send first, odd ones receive first: blocking both ways. */
            if (me % 2 == 0) {
                fmpl_send(sbuf, n, partner, 0, &ier);
                OK(ier, "fmpl_send");
                fmpl_recv(rbuf, n + 64, partner, 0, &ier); /* more room than needed */
            } else {
                fmpl_recv(rbuf, n + 64, partner, 0, &ier);
                OK(ier, "fmpl_recv");
                fmpl_send(sbuf, n, partner, 0, &ier);
            }
            OK(ier, "send/recv");
            EXPECT(wrong(rbuf, n, partner, (int)k) == 0, "%zu B from %d: wrong bytes", n, partner);
            EXPECT(rbuf[n] == 0xcc, "%zu B from %d: wrote past the message", n, partner);
            EXPECT(fmpl_recv_size(partner, 0) == n, "fmpl_recv_size %zu, want %zu", fmpl_recv_size(partner, 0), n);
            pairs++;
        }
    }
    /* Ring, nonblocking both ways: receive from both neighbours, send to both. */
    int right = (me + 1) % np, left = (me + np - 1) % np;
    uint8_t *fromleft = fmpl_malloc(70000), *fromright = fmpl_malloc(70000), *out = fmpl_malloc(70000);
    for (int round = 0; round < 3; round++) {
        fmpl_request_t rl, rr, sl, sr;
        fill(out, 70000, me, 100 + round);
        fmpl_irecv(fromleft, 70000, left, 1, &rl, &ier);
        OK(ier, "fmpl_irecv left");
        fmpl_irecv(fromright, 70000, right, 2, &rr, &ier);
        OK(ier, "fmpl_irecv right");
        fmpl_isend(out, 70000, right, 1, &sr, &ier);
        OK(ier, "fmpl_isend right");
        fmpl_isend(out, 70000, left, 2, &sl, &ier);
        OK(ier, "fmpl_isend left");
        fmpl_wait_isend(&sr, &ier);
        OK(ier, "fmpl_wait_isend");
        fmpl_wait_isend(&sl, &ier);
        OK(ier, "fmpl_wait_isend");
        fmpl_wait_irecv(&rl, &ier);
        OK(ier, "fmpl_wait_irecv");
        fmpl_wait_irecv(&rr, &ier);
        OK(ier, "fmpl_wait_irecv");
        EXPECT(wrong(fromleft, 70000, left, 100 + round) == 0, "ring from %d: wrong bytes", left);
        EXPECT(wrong(fromright, 70000, right, 100 + round) == 0, "ring from %d: wrong bytes", right);
    }
    /* To itself: post the receive, then send (through the NIA's loopback). */
    fmpl_request_t r;
    fill(out, 5000, me, 7);
    fmpl_irecv(fromleft, 5000, me, 3, &r, &ier);
    OK(ier, "self irecv");
    fmpl_send(out, 5000, me, 3, &ier);
    OK(ier, "self send");
    fmpl_wait_irecv(&r, &ier);
    OK(ier, "self wait");
    EXPECT(wrong(fromleft, 5000, me, 7) == 0, "self: wrong bytes");
    printf("rank %d: p2p: %d blocking sizes with %d, 3 nonblocking ring rounds, self: %s\n", me, pairs,
           partner < np ? partner : -1, p2_check_failures ? "WRONG" : "all bytes right");
}

/* ---- buffered ---------------------------------------------------------------- */

static void mode_buffered(void)
{
    int ier;
    const size_t n = 30000;
    uint8_t *msg = fmpl_malloc(n), *spool = fmpl_malloc(1 << 20);
    if (me == 0) {
        fmpl_sendbuff_set(spool, 1 << 20, 20e-6, &ier);
        OK(ier, "fmpl_sendbuff_set");
        fill(msg, n, 0, 1);
        double t0 = p2_wtime();
        fmpl_send(msg, n, 1, 0, &ier); /* rank 1 is busy for 200 us: spooled after 20 us */
        OK(ier, "buffered fmpl_send");
        double waited = p2_wtime() - t0;
        memset(msg, 0, n); /* the spool holds its own copy */
        int nsend = 0, nspool = 0, checks = 0, sent = 0;
        fmpl_sendbuff_check(&nsend, &nspool, &ier);
        OK(ier, "fmpl_sendbuff_check");
        EXPECT(nsend == 0 && nspool == 1, "first check: nsend %d nspool %d, want 0 and 1", nsend, nspool);
        while (nspool > 0 && checks < 1000) {
            p2_compute(10e-6);
            fmpl_sendbuff_check(&nsend, &nspool, &ier);
            OK(ier, "fmpl_sendbuff_check");
            sent += nsend;
            checks++;
        }
        EXPECT(sent == 1 && nspool == 0, "spooled send never went: sent %d, still %d", sent, nspool);
        printf("rank 0: buffered: send returned after %.1f us (timeout 20 us), sent by check %d\n",
               waited * 1e6, checks);
    } else if (me == 1) {
        p2_compute(200e-6);
        fmpl_recv(msg, n, 0, 0, &ier);
        OK(ier, "fmpl_recv of a spooled send");
        EXPECT(wrong(msg, n, 0, 1) == 0, "spooled message: wrong bytes");
        printf("rank 1: buffered: %s\n", p2_check_failures ? "WRONG" : "all bytes right");
    }
}

/* ---- coll ---------------------------------------------------------------------- */

typedef struct fdesc {
    const char *name;
    fmpl_func_t *f;
    char type, op; /* type letter; s(um), x (max |.|), n (min |.|) */
} fdesc;

static const fdesc funcs[] = {
    {"isum", fmpl_isum, 'I', 's'}, {"imax", fmpl_imax, 'I', 'x'}, {"imin", fmpl_imin, 'I', 'n'},
    {"ssum", fmpl_ssum, 'S', 's'}, {"smax", fmpl_smax, 'S', 'x'}, {"smin", fmpl_smin, 'S', 'n'},
    {"dsum", fmpl_dsum, 'D', 's'}, {"dmax", fmpl_dmax, 'D', 'x'}, {"dmin", fmpl_dmin, 'D', 'n'},
    {"csum", fmpl_csum, 'C', 's'}, {"cmax", fmpl_cmax, 'C', 'x'}, {"cmin", fmpl_cmin, 'C', 'n'},
    {"zsum", fmpl_zsum, 'Z', 's'}, {"zmax", fmpl_zmax, 'Z', 'x'}, {"zmin", fmpl_zmin, 'Z', 'n'},
};

/* Element i of rank r's input, as a (re, im) pair of small integers (exact
 * in every type); a sign that alternates so max/min of |x| differ from max/min. */
static void value_of(int r, int i, double *re, double *im)
{
    *re = (double)(((r * 7 + i * 3) % 23) - 11);
    *im = (double)(((r * 5 + i) % 13) - 6);
}

static size_t elem_size(char t) { return t == 'I' || t == 'S' ? 4 : t == 'D' || t == 'C' ? 8 : 16; }

static void put_elem(void *b, char t, int i, double re, double im)
{
    switch (t) {
    case 'I': ((int32_t *)b)[i] = (int32_t)re; break;
    case 'S': ((float *)b)[i] = (float)re; break;
    case 'D': ((double *)b)[i] = re; break;
    case 'C': ((float *)b)[2 * i] = (float)re; ((float *)b)[2 * i + 1] = (float)im; break;
    case 'Z': ((double *)b)[2 * i] = re; ((double *)b)[2 * i + 1] = im; break;
    }
}

static void get_elem(const void *b, char t, int i, double *re, double *im)
{
    *re = 0;
    *im = 0;
    switch (t) {
    case 'I': *re = ((const int32_t *)b)[i]; break;
    case 'S': *re = ((const float *)b)[i]; break;
    case 'D': *re = ((const double *)b)[i]; break;
    case 'C': *re = ((const float *)b)[2 * i]; *im = ((const float *)b)[2 * i + 1]; break;
    case 'Z': *re = ((const double *)b)[2 * i]; *im = ((const double *)b)[2 * i + 1]; break;
    }
}

static double mag(char t, double re, double im) { return t == 'C' || t == 'Z' ? hypot(re, im) : fabs(re); }

/* The expected reduction over the members of `ranks` (positions 0..n-1). */
static void expected(const fdesc *d, const int *ranks, int n, int i, double *re, double *im)
{
    int cplx = d->type == 'C' || d->type == 'Z';
    double best_re = 0, best_im = 0;
    for (int k = 0; k < n; k++) {
        double a, b;
        value_of(ranks[k], i, &a, &b);
        if (!cplx)
            b = 0;
        if (k == 0 || d->op == 's') {
            if (k == 0) {
                best_re = a;
                best_im = b;
            } else {
                best_re += a;
                best_im += b;
            }
        } else if (d->op == 'x' ? mag(d->type, a, b) > mag(d->type, best_re, best_im)
                                : mag(d->type, a, b) < mag(d->type, best_re, best_im)) {
            best_re = a;
            best_im = b;
        }
    }
    *re = best_re;
    *im = best_im;
}

static int coll_on(const fmpl_comm_t *comm, const char *name)
{
    int ier, pos;
    fmpl_comm_rank(comm, &pos, &ier);
    OK(ier, "fmpl_comm_rank");
    const int n = comm->size;
    const size_t bytes = 8192;
    uint8_t *buf = fmpl_malloc(bytes);
    int checks = 0;
    /* Software broadcast from every root. */
    for (int root = 0; root < n; root++) {
        if (pos == root)
            fill(buf, bytes, comm->ranks[root], root);
        else
            memset(buf, 0, bytes);
        fmpl_bcast(buf, bytes, root, comm, &ier);
        OK(ier, "fmpl_bcast");
        EXPECT(wrong(buf, bytes, comm->ranks[root], root) == 0, "%s bcast from %d: wrong bytes", name, root);
        checks++;
    }
    /* Hardware broadcast: the same buffer (same offset) everywhere. */
    int hw = fmpl_hw_collectives(comm);
    for (int root = 0; root < n && root < 3; root++) {
        if (pos == root)
            fill(buf, bytes, comm->ranks[root], 50 + root);
        else
            memset(buf, 0, bytes);
        fmpl_hbcast(buf, bytes, root, comm, &ier);
        if (hw) {
            OK(ier, "fmpl_hbcast");
            EXPECT(wrong(buf, bytes, comm->ranks[root], 50 + root) == 0, "%s hbcast from %d: wrong bytes", name, root);
        } else {
            EXPECT_IER(ier, FMPL_ERR_HW_NOT_ALLOWED, "fmpl_hbcast where not allowed");
            if (pos != root)
                EXPECT(buf[0] == 0 && buf[bytes - 1] == 0, "refused hbcast moved data");
        }
        checks++;
    }
    /* Reductions, 100 elements, every function, root changing. */
    const int count = 100;
    void *v = fmpl_malloc((size_t)count * 16), *work = fmpl_malloc((size_t)count * 16);
    for (size_t f = 0; f < sizeof funcs / sizeof funcs[0]; f++) {
        const fdesc *d = &funcs[f];
        for (int all = 0; all < 2; all++) {
            int root = (int)f % n;
            for (int i = 0; i < count; i++) {
                double re, im;
                value_of(me, i, &re, &im);
                put_elem(v, d->type, i, re, im);
            }
            if (all)
                fmpl_allreduce(v, count, d->f, comm, work, &ier);
            else
                fmpl_reduce(v, count, d->f, root, comm, work, &ier);
            OK(ier, all ? "fmpl_allreduce" : "fmpl_reduce");
            if (all || pos == root) {
                int bad = 0;
                for (int i = 0; i < count; i++) {
                    double re, im, wre, wim;
                    get_elem(v, d->type, i, &re, &im);
                    expected(d, comm->ranks, n, i, &wre, &wim);
                    /* max/min of |x|: ties (|3+4i| = |5|) may keep either element. */
                    if (d->op == 's')
                        bad += re != wre || ((d->type == 'C' || d->type == 'Z') && im != wim);
                    else
                        bad += mag(d->type, re, im) != mag(d->type, wre, wim);
                }
                EXPECT(bad == 0, "%s %s%s: %d wrong elements", name, all ? "allreduce " : "reduce ", d->name, bad);
            }
            checks++;
        }
        (void)elem_size;
    }
    for (int k = 0; k < 5; k++) {
        fmpl_barrier(comm, &ier);
        OK(ier, "fmpl_barrier");
    }
    return checks;
}

static void mode_coll(void)
{
    int checks = coll_on(FMPL_COMM_WORLD, "world");
    /* The even ranks. */
    fmpl_comm_t even = {0};
    for (int r = 0; r < np; r += 2)
        even.ranks[even.size++] = r;
    if (me % 2 == 0) {
        int ier;
        fmpl_comm_create(&even, 42, &ier);
        OK(ier, "fmpl_comm_create");
        if (ier == FMPL_SUCCESS)
            checks += coll_on(&even, "even");
    }
    int ier;
    fmpl_barrier(FMPL_COMM_WORLD, &ier);
    OK(ier, "fmpl_barrier");
    printf("rank %d: coll: %d collectives checked on %d ranks (%s barrier): %s\n", me, checks, np,
           fmpl_hw_collectives(FMPL_COMM_WORLD) ? "hardware" : "software",
           p2_check_failures ? "WRONG" : "all right");
}

/* ---- errors ---------------------------------------------------------------------- */

static void mode_errors(void)
{
    int ier;
    uint8_t *a = fmpl_malloc(4096), *b = fmpl_malloc(4096);
    uint8_t heap[64];
    int peer = me ^ 1;
    if (peer < np) {
        /* A receive on a slot that already has one live. */
        fmpl_request_t r1, r2;
        fmpl_irecv(b, 100, peer, 0, &r1, &ier);
        OK(ier, "first irecv");
        fmpl_irecv(b, 100, peer, 0, &r2, &ier);
        EXPECT_IER(ier, FMPL_ERR_SLOT_BUSY, "second irecv on the same slot");
        /* The message larger than the receive buffer: the receive above has
         * room for 100 bytes, the peer sends 200. */
        memset(b, 0x77, 4096);
        fill(a, 200, me, 3);
        fmpl_request_t s;
        fmpl_isend(a, 200, peer, 0, &s, &ier);
        OK(ier, "isend");
        fmpl_request_t s2;
        fmpl_isend(a, 8, peer, 0, &s2, &ier);
        EXPECT_IER(ier, FMPL_ERR_SLOT_BUSY, "second isend on the same slot");
        fmpl_wait_isend(&s, &ier);
        EXPECT_IER(ier, FMPL_ERR_TRUNCATE, "send of 200 B into 100 B");
        fmpl_wait_irecv(&r1, &ier);
        EXPECT_IER(ier, FMPL_ERR_TRUNCATE, "receive of 200 B into 100 B");
        EXPECT(b[0] == 0x77 && b[99] == 0x77 && b[150] == 0x77, "a refused message wrote into the buffer");
        fmpl_wait_irecv(&r1, &ier);
        EXPECT_IER(ier, FMPL_ERR_REQUEST, "waiting twice");
        /* The slot works again afterwards. */
        if (me % 2 == 0) {
            fmpl_send(a, 100, peer, 0, &ier);
            OK(ier, "send after a refusal");
        } else {
            fmpl_recv(b, 100, peer, 0, &ier);
            OK(ier, "recv after a refusal");
            EXPECT(wrong(b, 100, peer, 3) == 0, "after a refusal: wrong bytes");
        }
    }
    /* Arguments. */
    fmpl_send(a, 8, np, 0, &ier);
    EXPECT_IER(ier, FMPL_ERR_RANK, "send to rank np");
    fmpl_send(a, 8, 0, 4, &ier);
    EXPECT_IER(ier, FMPL_ERR_SLOT, "slot 4 of 4");
    fmpl_recv(heap, 8, 0, 0, &ier);
    EXPECT_IER(ier, FMPL_ERR_NOT_MAPPED, "recv into the stack");
    fmpl_reduce(a, 4, (fmpl_func_t *)(void (*)(void))mode_errors, 0, FMPL_COMM_WORLD, b, &ier);
    EXPECT_IER(ier, FMPL_ERR_FUNC, "reduce with another function");
    fmpl_comm_t junk = {.size = 1, .handle = 9};
    fmpl_barrier(&junk, &ier);
    EXPECT_IER(ier, FMPL_ERR_COMM, "barrier on no communicator");
    /* Communicator key mismatch: every rank lists all, rank 1 gives another key. */
    fmpl_comm_t all = {0};
    for (int r = 0; r < np; r++)
        all.ranks[all.size++] = r;
    fmpl_comm_create(&all, me == 1 ? 8 : 7, &ier);
    EXPECT_IER(ier, FMPL_ERR_KEY_MISMATCH, "comm_create with different keys");
    /* Hardware broadcast: refused where not allowed; an offset mismatch. */
    int hw = fmpl_hw_collectives(FMPL_COMM_WORLD);
    fmpl_comm_t sub = {.size = 1, .ranks = {me}};
    fmpl_comm_create(&sub, 100 + me, &ier);
    OK(ier, "single-rank comm");
    fmpl_hbcast(a, 64, 0, &sub, &ier);
    EXPECT_IER(ier, FMPL_ERR_HW_NOT_ALLOWED, "hbcast on a communicator");
    if (hw) {
        uint8_t *c = fmpl_malloc(4096);
        /* Rank 1 receives into another buffer (another offset). */
        uint8_t *dst = me == 1 ? c : a;
        memset(dst, 0x11, 64);
        if (me == 0)
            fill(a, 64, 0, 9);
        fmpl_hbcast(dst, 64, 0, FMPL_COMM_WORLD, &ier);
        if (me == 1) {
            EXPECT_IER(ier, FMPL_ERR_HBCAST_OFFSET, "hbcast into another offset");
            EXPECT(c[0] == 0x11 && c[63] == 0x11, "a refused broadcast wrote into the buffer");
        } else {
            OK(ier, "hbcast");
            if (me != 0)
                EXPECT(wrong(a, 64, 0, 9) == 0, "hbcast: wrong bytes");
        }
    } else {
        fmpl_hbcast(a, 64, 0, FMPL_COMM_WORLD, &ier);
        EXPECT_IER(ier, FMPL_ERR_HW_NOT_ALLOWED, "hbcast on a job that is no line or rectangle");
    }
    fmpl_barrier(FMPL_COMM_WORLD, &ier);
    OK(ier, "barrier after errors");
    printf("rank %d: errors: every bad input refused (%s collectives): %s\n", me, hw ? "hardware" : "software",
           p2_check_failures ? "WRONG" : "ok");
}

/* ---- counts ------------------------------------------------------------------------- */

static void mode_counts(void)
{
    int ier;
    const int n = 8;
    int32_t *v = fmpl_malloc(2 * n * sizeof *v), *w = fmpl_malloc(2 * n * sizeof *w);
    const int odd_ranks[2] = {np - 1, 0};
    for (int o = 0; o < 2; o++)
        for (int delta = 1; delta >= -1; delta -= 2) {
            const int odd = odd_ranks[o], count = n + (me == odd ? delta : 0);
            char what[96];
            snprintf(what, sizeof what, "allreduce, rank %d's count %s", odd, delta > 0 ? "larger" : "smaller");
            for (int i = 0; i < 2 * n; i++)
                v[i] = me + 1;
            fmpl_allreduce(v, count, fmpl_isum, FMPL_COMM_WORLD, w, &ier);
            EXPECT_IER(ier, FMPL_ERR_ARG, what);
            snprintf(what, sizeof what, "reduce, rank %d's count %s", odd, delta > 0 ? "larger" : "smaller");
            fmpl_reduce(v, count, fmpl_isum, 0, FMPL_COMM_WORLD, w, &ier);
            if (me == 0)
                EXPECT_IER(ier, FMPL_ERR_ARG, what);
        }
    /* Every send found its receive: the next right calls work. */
    for (int i = 0; i < n; i++)
        v[i] = me + 1;
    fmpl_allreduce(v, n, fmpl_isum, FMPL_COMM_WORLD, w, &ier);
    OK(ier, "allreduce after the refusals");
    for (int i = 0; i < n; i++)
        EXPECT(v[i] == np * (np + 1) / 2, "allreduce after the refusals: element %d is %d", i, (int)v[i]);
    fmpl_barrier(FMPL_COMM_WORLD, &ier);
    OK(ier, "barrier after the refusals");
    printf("rank %d: counts: %s\n", me, p2_check_failures ? "WRONG" : "refused on every rank");
}

/* ---- timing ------------------------------------------------------------------------- */

static void mode_timing(void)
{
    int ier;
    const int rounds = 20;
    fmpl_barrier(FMPL_COMM_WORLD, &ier);
    double t0 = p2_wtime();
    for (int k = 0; k < rounds; k++)
        fmpl_barrier(FMPL_COMM_WORLD, &ier);
    OK(ier, "fmpl_barrier");
    double bar = (p2_wtime() - t0) / rounds;
    uint8_t *m = fmpl_malloc(8);
    double lat = 0;
    if (me < 2 && np >= 2) {
        for (int k = -2; k < rounds; k++) {
            if (k == 0)
                t0 = p2_wtime();
            if (me == 0) {
                fmpl_send(m, 8, 1, 0, &ier);
                fmpl_recv(m, 8, 1, 0, &ier);
            } else {
                fmpl_recv(m, 8, 0, 0, &ier);
                fmpl_send(m, 8, 0, 0, &ier);
            }
            OK(ier, "ping-pong");
        }
        lat = (p2_wtime() - t0) / (2.0 * rounds);
    }
    if (me == 0)
        printf("rank 0: timing: %d ranks, %s barrier %.3f us, 8 B latency %.3f us\n", np,
               fmpl_hw_collectives(FMPL_COMM_WORLD) ? "hardware" : "software", bar * 1e6, lat * 1e6);
}

int main(int argc, char **argv)
{
    const char *mode = argc > 1 ? argv[1] : "p2p";
    int ier;
    if (strcmp(mode, "timing-sw") == 0) {
        setenv("FMPL_HW_COLLECTIVES", "0", 1);
        mode = "timing";
    }
    /* A call before fmpl_init. */
    fmpl_barrier(FMPL_COMM_WORLD, &ier);
    me = fmpl_myrank();
    np = fmpl_nprocs();
    if (ier != FMPL_ERR_NOT_INIT) {
        fprintf(stderr, "rank %d: barrier before init: %s\n", me, fmpl_error_string(ier));
        return 1;
    }
    /* badinit: rank 1 passes another slot count; every rank is refused. */
    const int badinit = strcmp(mode, "badinit") == 0;
    const int slots = badinit && me == 1 ? 3 : 4;
    fmpl_match_t *ma = fmpl_malloc(FMPL_AREA_SLOTS(slots, np) * sizeof *ma);
    fmpl_flag_t *fa = fmpl_malloc(FMPL_AREA_SLOTS(slots, np) * sizeof *fa);
    fmpl_init(ma, fa, slots, &ier);
    if (badinit) {
        EXPECT_IER(ier, FMPL_ERR_ARG, "fmpl_init with different counts");
        fmpl_send(ma, 8, 0, 0, &ier);
        EXPECT_IER(ier, FMPL_ERR_NOT_INIT, "send after a refused init");
        printf("rank %d: badinit: %s\n", me, p2_check_failures ? "WRONG" : "refused");
        return p2_check_failures ? 1 : 0;
    }
    if (ier != FMPL_SUCCESS) {
        fprintf(stderr, "rank %d: fmpl_init: %s\n", me, fmpl_error_string(ier));
        return 1;
    }
    if (strcmp(mode, "p2p") == 0)
        mode_p2p();
    else if (strcmp(mode, "buffered") == 0)
        mode_buffered();
    else if (strcmp(mode, "coll") == 0)
        mode_coll();
    else if (strcmp(mode, "errors") == 0)
        mode_errors();
    else if (strcmp(mode, "counts") == 0)
        mode_counts();
    else if (strcmp(mode, "timing") == 0)
        mode_timing();
    else if (strcmp(mode, "deadlock") == 0) {
        /* Both wait to receive, nobody sends: the simulator must say so. */
        uint8_t *b = fmpl_malloc(64);
        fmpl_recv(b, 64, me ^ 1, 2, &ier);
    }
    else {
        fprintf(stderr, "rk_fmpl: unknown mode '%s' (p2p, buffered, coll, errors, counts, timing)\n", mode);
        return 2;
    }
    fmpl_finalize(&ier);
    OK(ier, "fmpl_finalize");
    fflush(stdout);
    return p2_check_failures ? 1 : 0;
}
