/*
 * chol_mpi.c - the Cholesky's MPI transport (chol_transport_ops), over the
 * virtual-time MPI layer and the modelled InfiniBand rail: the same landing
 * slots as the TCA transport (one per tile this rank receives, in host
 * memory), each with an MPI_Irecv posted before the run (source: the tile's
 * owner, tag: the tile's id); a final tile is sent with one MPI_Isend per
 * receiver straight from its GPU frame (the layer's GPU-buffer protocols,
 * mpi/README.md: GPUDirect RDMA or the pipeline through host memory), the
 * frame pinned until every one of them completes. Arrivals: MPI_Testsome,
 * or MPI_Waitsome when the scheduler has nothing to run.
 * Depends on MPI and chol_cache.c.
 */
#include <mpi.h>
#include <stdio.h>
#include <stdlib.h>

#include <cuda_runtime_api.h>

#include "chol.h"

typedef struct mpi_tp {
    const chol_layout *l;
    chol_cache *c;
    double *landing;        /* cudaMallocHost: nland tiles */
    MPI_Request *rreq;      /* [slot] */
    int *rtile;             /* [slot]: its tile */
    MPI_Request *sreq;      /* every send of the run, in start order */
    int *sframe;            /* [send]: the frame it reads */
    int nsend, cap, oldest; /* sends started; the oldest not known complete */
    int expected;
    int *idx;
    uint64_t sent_bytes;
} mpi_tp;

void *chol_mpi_create(const chol_layout *l, chol_cache *c)
{
    mpi_tp *tp = calloc(1, sizeof *tp);
    if (!tp)
        return NULL;
    tp->l = l, tp->c = c;
    const int me = l->rank, nland = l->nland[me];
    const size_t tb = chol_tile_bytes(l);
    for (int t = 0; t < l->ntiles; t++)
        if (l->owner[t] == me)
            tp->cap += l->receivers[t];
    int ok = 1;
    if (nland && cudaMallocHost((void **)&tp->landing, tb * (size_t)nland) != cudaSuccess) {
        fprintf(stderr, CHOL_PROGRAM ": rank %d: cudaMallocHost of %d landing tiles failed\n",
                me, nland);
        ok = 0;
    }
    int n = nland > tp->cap ? nland : tp->cap;
    tp->rreq = malloc(((size_t)nland + 1) * sizeof *tp->rreq);
    tp->rtile = malloc(((size_t)nland + 1) * sizeof *tp->rtile);
    tp->sreq = malloc(((size_t)tp->cap + 1) * sizeof *tp->sreq);
    tp->sframe = malloc(((size_t)tp->cap + 1) * sizeof *tp->sframe);
    tp->idx = malloc(((size_t)n + 1) * sizeof *tp->idx);
    ok = ok && tp->rreq && tp->rtile && tp->sreq && tp->sframe && tp->idx;
    int bad = !ok, any_bad = 0;
    MPI_Allreduce(&bad, &any_bad, 1, MPI_INT, MPI_MAX, MPI_COMM_WORLD);
    if (any_bad) {
        chol_mpi_destroy(tp);
        return NULL;
    }
    for (int t = 0; t < l->ntiles; t++) {
        int slot = l->land[(size_t)t * l->size + me];
        if (slot < 0)
            continue;
        double *buf = tp->landing + (size_t)slot * ((size_t)l->nb * l->nb);
        c->home[t] = buf;
        tp->rtile[slot] = t;
        MPI_Irecv(buf, l->nb * l->nb, MPI_DOUBLE, l->owner[t], t, MPI_COMM_WORLD,
                  &tp->rreq[slot]);
        tp->expected++;
    }
    return tp;
}

void chol_mpi_destroy(void *p)
{
    mpi_tp *tp = p;
    if (!tp)
        return;
    if (tp->landing)
        cudaFreeHost(tp->landing);
    free(tp->rreq);
    free(tp->rtile);
    free(tp->sreq);
    free(tp->sframe);
    free(tp->idx);
    free(tp);
}

static int mpi_send(void *p, int tile, int frame)
{
    mpi_tp *tp = p;
    const chol_layout *l = tp->l;
    void *buf = chol_cache_data(tp->c, tile);
    for (int r = 0; r < l->size; r++) {
        if (l->land[(size_t)tile * l->size + r] < 0)
            continue;
        if (tp->nsend == tp->cap) {
            fprintf(stderr, CHOL_PROGRAM ": rank %d: more sends than the layout has\n", l->rank);
            return -1;
        }
        MPI_Isend(buf, l->nb * l->nb, MPI_DOUBLE, r, tile, MPI_COMM_WORLD, &tp->sreq[tp->nsend]);
        tp->sframe[tp->nsend++] = frame;
        chol_cache_pin(tp->c, frame);
        tp->sent_bytes += chol_tile_bytes(l);
    }
    return 0;
}

/* Unpins the frames of completed sends (sreq[i] is MPI_REQUEST_NULL then). */
static void sends_done(mpi_tp *tp, int count)
{
    for (int i = 0; i < count; i++)
        chol_cache_unpin(tp->c, tp->sframe[tp->idx[i]]);
    while (tp->oldest < tp->nsend && tp->sreq[tp->oldest] == MPI_REQUEST_NULL)
        tp->oldest++;
}

static int mpi_progress(void *p, int block, int *arrived, int max)
{
    mpi_tp *tp = p;
    int count = 0;
    if (tp->oldest < tp->nsend) {
        MPI_Testsome(tp->nsend - tp->oldest, tp->sreq + tp->oldest, &count, tp->idx,
                     MPI_STATUSES_IGNORE);
        if (count != MPI_UNDEFINED) {
            for (int i = 0; i < count; i++)
                tp->idx[i] += tp->oldest;
            sends_done(tp, count);
        }
    }
    if (tp->expected == 0)
        return 0;
    const int nland = tp->l->nland[tp->l->rank];
    if (block)
        MPI_Waitsome(nland, tp->rreq, &count, tp->idx, MPI_STATUSES_IGNORE);
    else
        MPI_Testsome(nland, tp->rreq, &count, tp->idx, MPI_STATUSES_IGNORE);
    if (count == MPI_UNDEFINED)
        return 0;
    int n = 0;
    for (int i = 0; i < count && n < max; i++)
        arrived[n++] = tp->rtile[tp->idx[i]];
    tp->expected -= count;
    return n;
}

static int mpi_wait_send(void *p)
{
    mpi_tp *tp = p;
    if (tp->oldest == tp->nsend)
        return 1;
    tp->idx[0] = tp->oldest;
    MPI_Wait(&tp->sreq[tp->oldest], MPI_STATUS_IGNORE);
    sends_done(tp, 1);
    return 0;
}

static int mpi_drain(void *p)
{
    while (mpi_wait_send(p) == 0)
        ;
    return 0;
}

static int mpi_expected(void *p)
{
    return ((mpi_tp *)p)->expected;
}

uint64_t chol_mpi_sent_bytes(void *p)
{
    return ((mpi_tp *)p)->sent_bytes;
}

const chol_transport_ops chol_mpi_ops = {
    .name = "mpi",
    .send = mpi_send,
    .progress = mpi_progress,
    .wait_send = mpi_wait_send,
    .drain = mpi_drain,
    .expected = mpi_expected,
};
