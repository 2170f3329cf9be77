/*
 * halo_xchg.c - the halo exchange engine (halo_xchg.h): persistent links to
 * the neighbours over TCA DMA chains or MPI nonblocking point-to-point, with
 * pack/unpack kernels for strided blocks where a transport needs contiguous
 * data. Depends on tca-api.h, MPI, wl_tca.h (call checking) and wl_gpu.h.
 */
#include "halo_xchg.h"

#include <mpi.h>
#include <stdarg.h>
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "wl_gpu.h"
#include "wl_tca.h"

#define HX_SETUP_TAG 0x4700 /* + the receiver's link id: where to write */
#define HX_DATA_TAG 0x4800  /* + the receiver's link id: an MPI link's data */
#define HX_CHANNELS_PER_PHASE 2

/* What a receiver tells the sender of a link: where its block goes. */
typedef struct hx_where {
    tcaHandle handle;             /* the data allocation, or the staging one */
    uint64_t offset[HX_PHASES];
    uint64_t width, count, pitch; /* the destination's shape (count 1 when packed) */
    int32_t id, peer_id;          /* the receiver's link and the sender's, as it sees them */
} hx_where;

typedef struct hx_end {
    hx_where dst;                   /* the peer's block (from the setup) */
    int pack_send, pack_recv;       /* strided blocks staged contiguously */
    size_t bytes;                   /* width x count, both ways */
    size_t send_stage;              /* offsets in the staging allocation */
    size_t recv_stage[HX_PHASES];
} hx_end;

struct hx_plan {
    int count;
    hx_link links[HX_MAX_LINKS];
    hx_end ends[HX_MAX_LINKS];
    char *base;
    tcaHandle data;
    char *stage;                    /* GPU staging for packed blocks, or NULL */
    tcaHandle stage_handle;
    tcaDesc *chain[HX_PHASES * HX_CHANNELS_PER_PHASE];
    int tca_links, mpi_links;
    size_t send_bytes, pack_send_bytes, pack_recv_bytes;
};

static size_t region_bytes(const hx_region *r) { return r->width * r->count; }

/* Strided blocks into (pack) or out of (unpack) contiguous staging. */
static void copy_strided(char *strided, const hx_region *r, char *flat, int pack)
{
    for (size_t b = 0; b < r->count; b++) {
        char *s = strided + r->offset + b * r->pitch;
        if (pack)
            memcpy(flat + b * r->width, s, r->width);
        else
            memcpy(s, flat + b * r->width, r->width);
    }
}

static int fail(char *error, size_t size, const char *fmt, ...)
    __attribute__((format(printf, 3, 4)));
static int fail(char *error, size_t size, const char *fmt, ...)
{
    va_list ap;
    va_start(ap, fmt);
    vsnprintf(error, size, fmt, ap);
    va_end(ap);
    return -1;
}

/* Checks one link's description against the plan's rules. */
static int check_link(const hx_link *l, int rank, int ranks, char *error, size_t size)
{
    if (l->peer < 0 || l->peer >= ranks || l->peer == rank)
        return fail(error, size, "link %d: peer %d is not another rank", l->id, l->peer);
    if (l->id < 0 || l->id >= HX_MAX_LINKS || l->peer_id < 0 || l->peer_id >= HX_MAX_LINKS)
        return fail(error, size, "link ids %d, %d outside 0 .. %d", l->id, l->peer_id,
                    HX_MAX_LINKS - 1);
    for (int p = 0; p < HX_PHASES; p++) {
        const hx_region *r[2] = {&l->send[p], &l->recv[p]};
        for (int i = 0; i < 2; i++)
            if (!r[i]->width || !r[i]->count || (r[i]->count > 1 && r[i]->pitch < r[i]->width))
                return fail(error, size, "link %d to rank %d: an empty or overlapping block "
                            "(width %zu, pitch %zu)", l->id, l->peer, r[i]->width, r[i]->pitch);
        if (region_bytes(&l->send[p]) != region_bytes(&l->send[0]) ||
            region_bytes(&l->recv[p]) != region_bytes(&l->recv[0]))
            return fail(error, size, "link %d to rank %d: phases differ in size (%zu, %zu)",
                        l->id, l->peer, region_bytes(&l->send[p]), region_bytes(&l->send[0]));
    }
    if (region_bytes(&l->send[0]) != region_bytes(&l->recv[0]))
        return fail(error, size, "link %d to rank %d: sends %zu bytes but receives %zu", l->id,
                    l->peer, region_bytes(&l->send[0]), region_bytes(&l->recv[0]));
    return 0;
}

/* Every link's receive side, as the peer must address it; then the peers'
 * answers into ends[].dst. Over MPI, once. */
static void exchange_where(hx_plan *p, int rank)
{
    hx_where mine[HX_MAX_LINKS];
    MPI_Request req[2 * HX_MAX_LINKS];
    int n = 0;
    for (int i = 0; i < p->count; i++) {
        const hx_link *l = &p->links[i];
        hx_end *e = &p->ends[i];
        hx_where *w = &mine[i];
        memset(w, 0, sizeof *w);
        w->id = l->id;
        w->peer_id = l->peer_id;
        if (e->pack_recv) {
            w->handle = p->stage_handle;
            for (int ph = 0; ph < HX_PHASES; ph++)
                w->offset[ph] = e->recv_stage[ph];
            w->width = w->pitch = e->bytes;
            w->count = 1;
        } else {
            w->handle = p->data;
            for (int ph = 0; ph < HX_PHASES; ph++)
                w->offset[ph] = l->recv[ph].offset;
            w->width = l->recv[0].width;
            w->count = l->recv[0].count;
            w->pitch = l->recv[0].count > 1 ? l->recv[0].pitch : l->recv[0].width;
        }
        MPI_Irecv(&e->dst, sizeof e->dst, MPI_BYTE, l->peer, HX_SETUP_TAG + l->peer_id,
                  MPI_COMM_WORLD, &req[n++]);
        MPI_Isend(w, sizeof *w, MPI_BYTE, l->peer, HX_SETUP_TAG + l->id, MPI_COMM_WORLD,
                  &req[n++]);
    }
    MPI_Waitall(n, req, MPI_STATUSES_IGNORE);
    (void)rank;
}

/* Appends link i's transfer of phase ph to chain d. */
static int add_transfer(hx_plan *p, int i, int ph, tcaDesc *d, char *error, size_t size)
{
    const hx_link *l = &p->links[i];
    const hx_end *e = &p->ends[i];
    const hx_where *w = &e->dst;
    const tcaHandle *src_h = e->pack_send ? &p->stage_handle : &p->data;
    size_t src_off = e->pack_send ? e->send_stage : l->send[ph].offset;
    size_t sw = e->pack_send ? e->bytes : l->send[ph].width;
    size_t sc = e->pack_send ? 1 : l->send[ph].count;
    size_t sp = sc > 1 ? l->send[ph].pitch : sw;
    int flags = tcaDMANotify | tcaDMAUseInternal, tag = HX_TAG_BASE + ph;
    if (sc == 1 && w->count == 1) {
        WL_TCA(tcaDescSetMemcpy(d, &w->handle, w->offset[ph], src_h, src_off, e->bytes, flags,
                                l->peer_id, tag));
        return 0;
    }
    /* A block-stride descriptor: the strided side's blocks, the contiguous
     * side's pitch their width. */
    size_t width = sc > 1 ? sw : w->width, count = sc > 1 ? sc : w->count;
    if (sc > 1 && w->count > 1 && (sw != w->width || sc != w->count))
        return fail(error, size, "link %d to rank %d: block shapes differ (%zu vs %zu bytes "
                    "wide)", l->id, l->peer, sw, (size_t)w->width);
    if (sc == 1)
        sp = width;
    size_t dp = w->count > 1 ? w->pitch : width;
    WL_TCA(tcaDescSetMemcpy2D(d, &w->handle, w->offset[ph], dp, src_h, src_off, sp, width,
                              count, flags, l->peer_id, tag));
    return 0;
}

hx_plan *hx_plan_create(const hx_link *links, int count, void *base, const tcaHandle *data,
                        int pack, char *error, size_t error_size)
{
    int rank, ranks;
    MPI_Comm_rank(MPI_COMM_WORLD, &rank);
    MPI_Comm_size(MPI_COMM_WORLD, &ranks);
    if (count < 0 || count > HX_MAX_LINKS) {
        fail(error, error_size, "%d links (at most %d)", count, HX_MAX_LINKS);
        return NULL;
    }
    hx_plan *p = calloc(1, sizeof *p);
    if (!p) {
        snprintf(error, error_size, "out of memory");
        return NULL;
    }
    p->count = count;
    p->base = base;
    p->data = *data;
    size_t stage = 0;
    for (int i = 0; i < count; i++) {
        const hx_link *l = &links[i];
        if (check_link(l, rank, ranks, error, error_size) != 0) {
            free(p);
            return NULL;
        }
        p->links[i] = *l;
        hx_end *e = &p->ends[i];
        e->bytes = region_bytes(&l->send[0]);
        int packs = l->transport == HX_MPI || pack;
        e->pack_send = packs && l->send[0].count > 1;
        e->pack_recv = packs && l->recv[0].count > 1;
        if (e->pack_send) {
            e->send_stage = stage;
            stage += (e->bytes + 63) & ~(size_t)63;
            p->pack_send_bytes += e->bytes;
        }
        if (e->pack_recv) {
            for (int ph = 0; ph < HX_PHASES; ph++) {
                e->recv_stage[ph] = stage;
                stage += (e->bytes + 63) & ~(size_t)63;
            }
            p->pack_recv_bytes += e->bytes;
        }
        p->send_bytes += e->bytes;
        if (l->transport == HX_TCA)
            p->tca_links++;
        else
            p->mpi_links++;
    }
    if (stage) {
        WL_TCA(tcaMalloc((void **)&p->stage, stage, tcaMemoryGPU));
        WL_TCA(tcaCreateHandle(&p->stage_handle, p->stage, stage, tcaMemoryGPU));
    }
    exchange_where(p, rank);
    for (int i = 0; i < count; i++) {
        const hx_where *w = &p->ends[i].dst;
        if (w->peer_id != p->links[i].id || w->width * w->count != p->ends[i].bytes) {
            fail(error, error_size, "link %d to rank %d: the peer's link does not match "
                 "(it names link %d, %zu bytes)", p->links[i].id, p->links[i].peer,
                 (int)w->peer_id, (size_t)(w->width * w->count));
            hx_plan_free(p);
            return NULL;
        }
    }
    /* Phase ph's TCA links, alternating over channels 2ph and 2ph+1. */
    for (int ph = 0; ph < HX_PHASES; ph++) {
        int k = 0;
        for (int i = 0; i < count; i++) {
            if (p->links[i].transport != HX_TCA)
                continue;
            int ch = ph * HX_CHANNELS_PER_PHASE + (k++ % HX_CHANNELS_PER_PHASE);
            if (!p->chain[ch] && !(p->chain[ch] = tcaDescNew())) {
                snprintf(error, error_size, "tcaDescNew: out of memory");
                hx_plan_free(p);
                return NULL;
            }
            if (add_transfer(p, i, ph, p->chain[ch], error, error_size) != 0) {
                hx_plan_free(p);
                return NULL;
            }
        }
    }
    for (int ch = 0; ch < HX_PHASES * HX_CHANNELS_PER_PHASE; ch++)
        if (p->chain[ch])
            WL_TCA(tcaDescSet(p->chain[ch], ch));
    return p;
}

void hx_exchange(hx_plan *p, int phase)
{
    MPI_Request req[2 * HX_MAX_LINKS];
    int n = 0;
    /* Post every MPI receive first. */
    for (int i = 0; i < p->count; i++) {
        const hx_link *l = &p->links[i];
        const hx_end *e = &p->ends[i];
        if (l->transport != HX_MPI)
            continue;
        char *buf = e->pack_recv ? p->stage + e->recv_stage[phase]
                                 : p->base + l->recv[phase].offset;
        MPI_Irecv(buf, (int)e->bytes, MPI_BYTE, l->peer, HX_DATA_TAG + l->id, MPI_COMM_WORLD,
                  &req[n++]);
    }
    /* One pack kernel for every strided block sent. */
    if (p->pack_send_bytes) {
        for (int i = 0; i < p->count; i++)
            if (p->ends[i].pack_send)
                copy_strided(p->base, &p->links[i].send[phase], p->stage + p->ends[i].send_stage,
                             1);
        wl_gpu_kernel(2.0 * (double)p->pack_send_bytes, 0);
    }
    for (int i = 0; i < p->count; i++) {
        const hx_link *l = &p->links[i];
        const hx_end *e = &p->ends[i];
        if (l->transport != HX_MPI)
            continue;
        char *buf = e->pack_send ? p->stage + e->send_stage : p->base + l->send[phase].offset;
        MPI_Isend(buf, (int)e->bytes, MPI_BYTE, l->peer, HX_DATA_TAG + l->peer_id,
                  MPI_COMM_WORLD, &req[n++]);
    }
    int first = phase * HX_CHANNELS_PER_PHASE;
    for (int ch = first; ch < first + HX_CHANNELS_PER_PHASE; ch++)
        if (p->chain[ch])
            WL_TCA(tcaStartDMADesc(ch));
    /* Then wait for everything: MPI first, since its rendezvous moves only
     * inside MPI calls while the DMA chains need no help from the host. */
    if (n)
        MPI_Waitall(n, req, MPI_STATUSES_IGNORE);
    for (int i = 0; i < p->count; i++)
        if (p->links[i].transport == HX_TCA)
            WL_TCA(tcaWaitDMARecvDesc(&p->ends[i].dst.handle, p->links[i].id,
                                      HX_TAG_BASE + phase));
    for (int ch = first; ch < first + HX_CHANNELS_PER_PHASE; ch++)
        if (p->chain[ch])
            WL_TCA(tcaWaitDMAC(ch));
    if (p->pack_recv_bytes) {
        for (int i = 0; i < p->count; i++)
            if (p->ends[i].pack_recv)
                copy_strided(p->base, &p->links[i].recv[phase],
                             p->stage + p->ends[i].recv_stage[phase], 0);
        wl_gpu_kernel(2.0 * (double)p->pack_recv_bytes, 0);
    }
}

size_t hx_send_bytes(const hx_plan *p) { return p ? p->send_bytes : 0; }

void hx_link_counts(const hx_plan *p, int *tca, int *mpi)
{
    *tca = p ? p->tca_links : 0;
    *mpi = p ? p->mpi_links : 0;
}

void hx_plan_free(hx_plan *p)
{
    if (!p)
        return;
    for (int ch = 0; ch < HX_PHASES * HX_CHANNELS_PER_PHASE; ch++)
        if (p->chain[ch])
            tcaDescFree(p->chain[ch]);
    if (p->stage) {
        tcaDestroyHandle(&p->stage_handle);
        tcaFree(p->stage, tcaMemoryGPU);
    }
    free(p);
}
