/*
 * fmpl_sync.h - what FMPL's synchronisation unit (fmpl_sync.c) offers the
 * point-to-point calls and the collectives: zero-copy send and receive on a
 * channel, and the barriers.
 */
#ifndef FMPL_SYNC_H
#define FMPL_SYNC_H

#include "fmpl/fmpl_internal.h"

/* Zero-copy send and receive on a channel; ranks are job ranks. */
int fmpl_chan_send(fmpl_chan *ch, const void *buf, size_t size, int dst, int slot);
int fmpl_chan_recv(fmpl_chan *ch, void *buf, size_t size, int src, int slot);
int fmpl_chan_isend(fmpl_chan *ch, const void *buf, size_t size, int dst, int slot);
int fmpl_chan_wait_send(fmpl_chan *ch, int dst, int slot);
int fmpl_chan_irecv(fmpl_chan *ch, void *buf, size_t size, int src, int slot);
int fmpl_chan_wait_recv(fmpl_chan *ch, int src, int slot);
/* A send that moves nothing and fails the receive (and itself) with
 * FMPL_ERR_TRUNCATE, as a message too large for the receive buffer does: how
 * a collective tells the rank waiting for its data that the call failed. */
int fmpl_chan_refuse(fmpl_chan *ch, int dst, int slot);
/* Bytes the last completed receive from src on `slot` got. */
static inline uint64_t fmpl_chan_got(const fmpl_chan *ch, int src, int slot)
{
    return ch->recv_got[(size_t)src * (size_t)ch->count + (size_t)slot];
}

/* The parts of a send that send buffering (fmpl_p2p.c) takes one at a time:
 * the slot taken (index i of (dst, slot)); whether the receiver's header
 * is here (block: wait for it; -1: the device failed); the data kicked and
 * waited for. */
int fmpl_chan_start_send(fmpl_chan *ch, const void *buf, size_t size, int dst, int slot,
                         size_t *index);
int fmpl_chan_header_here(fmpl_chan *ch, size_t i, int block);
int fmpl_chan_put(fmpl_chan *ch, const void *buf, size_t size, int dst, int slot);

/* The parent of position v in FMPL's binary trees (fmpl_coll.c). */
static inline int parent_of(int v) { return (v - 1) / 2; }
/* The barriers: the NIA's over FMPL_COMM_WORLD, and light syncs up and down
 * the tree of c (communicator `handle`). */
int fmpl_hw_barrier(void);
int fmpl_sw_barrier(fmpl_comm_state *c, int handle);

#endif /* FMPL_SYNC_H */
