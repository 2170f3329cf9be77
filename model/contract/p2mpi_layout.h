/*
 * p2mpi_layout.h - how the MPI layer (mpi/) lays out its share of a node's
 * registered host memory (mpi_host_bytes, params.def): its send, receive and
 * completion queues, then its receive and send eager slots (a header and
 * mpi_eager_bytes each, 64-byte aligned), then rendezvous staging, at least
 * P2MPI_MIN_STAGING_BYTES. MPI_Init lays it out; the simulator checks at load
 * that the parameters leave room for it. Not installed.
 */
#ifndef P2MPI_LAYOUT_H
#define P2MPI_LAYOUT_H

#include <stdint.h>

#include "ib_hw.h"

#define P2MPI_SQ_ENTRIES 1024
#define P2MPI_RQ_ENTRIES 512
#define P2MPI_CQ_ENTRIES 4096
#define P2MPI_RECV_SLOTS 256 /* eager buffers kept posted */
#define P2MPI_SEND_SLOTS 128
#define P2MPI_HDR_BYTES 64   /* an eager message's header */
#define P2MPI_ALIGN 64
#define P2MPI_MIN_STAGING_BYTES (UINT64_C(1) << 20)

/* One eager slot: header and payload, aligned. */
static inline uint64_t p2mpi_slot_bytes(uint64_t eager_bytes)
{
    return (P2MPI_HDR_BYTES + eager_bytes + P2MPI_ALIGN - 1) / P2MPI_ALIGN * P2MPI_ALIGN;
}

/* The queues and eager slots: everything but the staging. */
static inline uint64_t p2mpi_fixed_bytes(uint64_t eager_bytes)
{
    return (uint64_t)P2MPI_SQ_ENTRIES * IB_WQE_SIZE + (uint64_t)P2MPI_RQ_ENTRIES * IB_RQE_SIZE +
           (uint64_t)P2MPI_CQ_ENTRIES * IB_CQE_SIZE +
           (uint64_t)(P2MPI_RECV_SLOTS + P2MPI_SEND_SLOTS) * p2mpi_slot_bytes(eager_bytes);
}

#endif /* P2MPI_LAYOUT_H */
