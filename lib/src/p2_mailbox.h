/*
 * p2_mailbox.h - the bootstrap mailbox p2_exchange (p2_exchange.c) uses: a
 * fixed region at the very start of every node's registered host memory,
 * reserved by tcaInit before any tcaMalloc, so every rank knows its PCIe
 * address on every node without having exchanged anything yet.
 *
 *   mailbox = bank[P2_MAILBOX_BANKS] of slot[P2_MAX_NODES] of P2_MAILBOX_SLOT_BYTES
 *   slot    = [blob, padded to 8 bytes][sender's node word][generation word]
 *
 * Slot r of a bank is written only by rank r (one rank per node, so a slot
 * per possible rank); the generation word is written last.
 */
#ifndef P2_MAILBOX_H
#define P2_MAILBOX_H

#include <stddef.h>

#include "peach2_hw.h"
#include "tca-api.h"

#define P2_MAILBOX_BANKS 2          /* why two suffice: p2_exchange.c */
#define P2_MAILBOX_SLOT_BYTES 256u  /* one slot: blob + node word + generation word */
#define P2_MAILBOX_WORD_BYTES 8u    /* the node and generation words */
/* Largest blob: what a slot holds besides its two trailing words. */
#define P2_EXCHANGE_MAX_BLOB (P2_MAILBOX_SLOT_BYTES - 2u * P2_MAILBOX_WORD_BYTES)
/* Host offset of the mailbox: the first bytes of registered host memory. */
#define P2_MAILBOX_HOST_OFFSET 0u
/* Bytes tcaInit reserves for the mailbox. */
#define P2_EXCHANGE_BYTES (P2_MAILBOX_BANKS * P2_MAX_NODES * P2_MAILBOX_SLOT_BYTES)

P2_STATIC_ASSERT(P2_MAILBOX_SLOT_BYTES % P2_MAILBOX_WORD_BYTES == 0,
                 "trailing words of a slot are 8-byte aligned");
P2_STATIC_ASSERT(P2_EXCHANGE_MAX_BLOB == 240, "p2.h documents a 240-byte blob limit");
P2_STATIC_ASSERT(P2_MAILBOX_HOST_OFFSET + P2_EXCHANGE_BYTES <= P2_PIO_NODE_SPAN,
                 "the mailbox lies within the PIO window's reach of every node");

/* Byte offset of (bank, slot) from the mailbox's start. */
static inline uint64_t p2_mailbox_slot_offset(unsigned bank, unsigned slot)
{
    return ((uint64_t)bank * P2_MAX_NODES + slot) * P2_MAILBOX_SLOT_BYTES;
}

/* p2_exchange among the job's ranks on this rank's PEACH2 network only
 * (p2_subcluster): all[i * bytes] = the blob of the i-th of them in job-rank
 * order. The exchange P2_COMM_SUBCLUSTER is set up with; on a job on one
 * network, p2_exchange itself. Errors as p2_exchange's. */
tcaresult tca_exchange_subcluster(const void *mine, void *all, size_t bytes);

/* The InfiniBand leg of p2_exchange across PEACH2 networks
 * (coll/p2_exchange_ib.c): finds the far mailbox and, with `queues` (a
 * leader), takes the node's HCA (once; TCA_ERROR_UNREACHABLE with the
 * reason in `why` where it cannot); the far mailbox's slots (laid out as the
 * mailbox's); signaled RDMA writes of a run of slots into node `node`'s far
 * mailbox at the same offset, and the wait for all of them. */
tcaresult tca_xib_open(int queues, char *why, size_t whylen);
uint8_t *tca_xib_slot(unsigned bank, unsigned slot);
tcaresult tca_xib_write(unsigned node, const uint8_t *src, uint64_t far_offset, uint32_t bytes);
tcaresult tca_xib_drain(void);

#endif /* P2_MAILBOX_H */
