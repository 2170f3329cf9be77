/*
 * halo_xchg.h - the halo programs' exchange engine: a rank's persistent set
 * of links to its neighbours, each moving one 2-D block of the rank's GPU
 * data to the matching block at the neighbour, per step, over TCA DMA or MPI
 * (chosen per link, so a 64-node job can use TCA inside a PEACH2 sub-cluster
 * and MPI between them). Depends on tca-api.h, MPI, and wl_gpu.h (the pack
 * kernels' cost).
 *
 * Setup (hx_plan_create, collective over each link's two ends, once):
 * every rank tells each neighbour, over MPI, where that neighbour must write
 * (a tcaHandle, the receive block's offset for each phase, its pitch, and
 * the link id that notifications carry). TCA links then build their
 * descriptor chains once: phase p's transfers go into DMAC channels 2p and
 * 2p+1 (links alternating), in register mode (tcaDMAUseInternal), each with
 * tcaDMANotify (slot = the receiver's link id, tag HX_TAG_BASE + phase); a
 * strided block (a column) is one block-stride descriptor
 * (tcaDescSetMemcpy2D), or, with `pack`, is packed like MPI's.
 *
 * One exchange (hx_exchange, phase 0 or 1 alternating, so a neighbour one
 * step ahead writes into the other phase's halo): post all, then wait all:
 *   MPI_Irecv of every MPI link; the pack kernel (strided blocks of MPI
 *   links, and of TCA links with `pack`, copied into contiguous GPU staging:
 *   one modelled K20X kernel for all); MPI_Isend of every MPI link;
 *   tcaStartDMADesc of the phase's channels; then MPI_Waitall (first: MPI
 *   progresses only inside its calls, the DMA chains without the host),
 *   tcaWaitDMARecvDesc per TCA link, tcaWaitDMAC of the started channels,
 *   and the unpack kernel (one for all packed receives).
 *
 * Links are matched by id: a rank's link `id` to `peer` sends to the peer's
 * link `peer_id`, whose peer must be this rank and whose peer_id must be
 * `id` (a mesh's direction d and its opposite). Block sizes must agree.
 */
#ifndef HALO_XCHG_H
#define HALO_XCHG_H

#include <stddef.h>

#include "tca-api.h"

#define HX_MAX_LINKS 8   /* a 2-D mesh's eight neighbours */
#define HX_PHASES 2      /* double-buffered halos */
#define HX_TAG_BASE 0x100 /* notification tag of phase p: HX_TAG_BASE + p */

typedef enum hx_transport { HX_TCA = 0, HX_MPI = 1 } hx_transport;

/* A 2-D block of the rank's data allocation: `count` blocks of `width`
 * bytes, `pitch` bytes apart (count 1: one contiguous block). */
typedef struct hx_region {
    size_t offset, width, count, pitch;
} hx_region;

typedef struct hx_link {
    int peer;              /* the neighbour's rank */
    int id;                /* this link's id at this rank, 0 .. HX_MAX_LINKS-1 */
    int peer_id;           /* the matching link's id at the peer */
    hx_transport transport;
    hx_region send[HX_PHASES], recv[HX_PHASES];
} hx_link;

typedef struct hx_plan hx_plan;

/* The plan of `count` links over the data at `base` (registered as `data`,
 * GPU memory). `pack`: TCA links pack strided blocks too (else one
 * block-stride descriptor each). Collective with each link's peer. Returns
 * NULL with one line in `error` on a bad link (the same on every rank where
 * the links are consistent). */
hx_plan *hx_plan_create(const hx_link *links, int count, void *base, const tcaHandle *data,
                        int pack, char *error, size_t error_size);

/* One exchange of phase `phase` (0 or 1): returns when every block this rank
 * receives has arrived and every block it sends has left its memory. */
void hx_exchange(hx_plan *plan, int phase);

/* Bytes this rank sends per exchange (all links). */
size_t hx_send_bytes(const hx_plan *plan);

/* This rank's links over TCA and over MPI. */
void hx_link_counts(const hx_plan *plan, int *tca, int *mpi);

void hx_plan_free(hx_plan *plan);

#endif /* HALO_XCHG_H */
