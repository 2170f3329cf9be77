/*
 * tca_dma.c - descriptor chains and the DMA controller.
 *
 * A tcaDesc holds its transfers as hardware descriptors from the moment they
 * are appended (all checks happen then). tcaDescSet puts them where the DMAC
 * reads them: in chain mode into descriptor memory the chain owns in the host
 * arena (kept and reused across sets, so a persistent pattern costs no
 * allocation per iteration), linked by `next`; in register mode into the
 * channel's descriptor registers by MMIO.
 */
#include <stdatomic.h>
#include <stdlib.h>
#include <string.h>

#include "tca_internal.h"

P2_STATIC_ASSERT(tcaMemoryCPU < TCA_MEMORY_KINDS && tcaMemoryGPU < TCA_MEMORY_KINDS,
                 "memory kinds index the arena table");
P2_STATIC_ASSERT(P2_DESC_SIZE % 8 == 0, "descriptors are written as 64-bit registers");
P2_STATIC_ASSERT((P2_DMA_IDLE & P2_DMA_BUSY) == 0 && (P2_DMA_FAILED & P2_DMA_BUSY) == 0,
                 "BUSY is the one status bit tcaWaitDMAC waits on");
P2_STATIC_ASSERT(TCA_ARENA_ALIGN % P2_DESC_SIZE == 0, "descriptor memory is aligned");

/* ---------------------------------------------------------------------------
 * Building descriptors (pure)
 * ------------------------------------------------------------------------- */
static int mul_add_overflows(uint64_t a, uint64_t b, uint64_t c, uint64_t *out)
{
    uint64_t product;
    return __builtin_mul_overflow(a, b, &product) || __builtin_add_overflow(product, c, out);
}

tcaresult tca_desc_build(const tca_transfer *t, unsigned self_node, unsigned nnodes,
                         p2_desc *desc)
{
    tcaresult r;
    if ((r = tca_handle_validate(t->dst, nnodes)) != TCA_SUCCESS ||
        (r = tca_handle_validate(t->src, nnodes)) != TCA_SUCCESS)
        return r;
    if (t->width == 0 || t->count == 0)
        return TCA_ERROR_INVALID_ARGUMENT;
    if (t->flags & ~TCA_DMA_FLAGS_ALL)
        return TCA_ERROR_INVALID_FLAGS;
    if (t->wait_slot < 0 || t->wait_slot >= P2_NOTIFY_SLOTS)
        return TCA_ERROR_INVALID_SLOT;
    if (t->wait_tag < 0 || (unsigned)t->wait_tag > P2_NOTIFY_TAG_MAX)
        return TCA_ERROR_INVALID_TAG;
    if (t->width > P2_DESC_MAX_LENGTH || t->count > UINT32_MAX)
        return TCA_ERROR_TOO_LARGE;
    /* The last block ends at offset + (count - 1) * pitch + width. */
    uint64_t dst_extent, src_extent;
    if (mul_add_overflows(t->count - 1, t->dst_pitch, t->width, &dst_extent) ||
        mul_add_overflows(t->count - 1, t->src_pitch, t->width, &src_extent))
        return TCA_ERROR_OUT_OF_RANGE;
    if ((r = tca_handle_range(t->dst, t->dst_offset, dst_extent)) != TCA_SUCCESS ||
        (r = tca_handle_range(t->src, t->src_offset, src_extent)) != TCA_SUCCESS)
        return r;
    if (t->src->node != self_node)
        return TCA_ERROR_REMOTE_SOURCE;

    uint32_t hw_flags = 0;
    if (t->flags & tcaDMANotify)
        hw_flags |= P2_DESC_NOTIFY;
    if (t->flags & tcaDMANotifySelf)
        hw_flags |= P2_DESC_NOTIFY_SELF;
    if (t->block_stride)
        hw_flags |= P2_DESC_BLOCK_STRIDE;
    if (t->flags & tcaDMAPipeline)
        hw_flags |= P2_DESC_PIPELINE;
    *desc = (p2_desc){
        .src = t->src->pcie_addr + t->src_offset,
        .dst = t->dst->pcie_addr + t->dst_offset,
        .length = (uint32_t)t->width,
        .flags = hw_flags,
        .block_count = t->block_stride ? (uint32_t)t->count : 1,
        .wait_tag = (uint32_t)t->wait_tag,
        .src_stride = t->block_stride ? t->src_pitch : 0,
        .dst_stride = t->block_stride ? t->dst_pitch : 0,
        .wait_slot = (uint16_t)t->wait_slot,
        .next = 0,
    };
    return TCA_SUCCESS;
}

void tca_desc_link(p2_desc *descs, size_t count, uint64_t base)
{
    for (size_t i = 0; i < count; i++)
        descs[i].next = i + 1 < count ? base + (i + 1) * (uint64_t)P2_DESC_SIZE : 0;
}

/* ---------------------------------------------------------------------------
 * Chains
 * ------------------------------------------------------------------------- */
tcaDesc *tcaDescNew(void)
{
    return calloc(1, sizeof(tcaDesc));
}

/* Forgets the chain's descriptor memory; channels that run it must be set again. */
static void desc_release_memory(tcaDesc *desc)
{
    if (!desc->has_memory)
        return;
    if (tca_dev() && desc->memory_generation == tca_g.generation) {
        tca_arena_free_locked(tcaMemoryCPU, desc->memory_offset);
        for (int c = 0; c < P2_DMA_CHANNELS; c++) {
            tca_channel *ch = &tca_g.channel[c];
            if (ch->mode == TCA_CHANNEL_CHAIN && ch->chain == desc)
                *ch = (tca_channel){.last_error = ch->last_error, .run = ch->run};
        }
    }
    desc->has_memory = 0;
}

tcaresult tcaDescFree(tcaDesc *desc)
{
    if (!desc)
        return TCA_ERROR_INVALID_ARGUMENT;
    desc_release_memory(desc);
    free(desc->items);
    free(desc);
    return TCA_SUCCESS;
}

tcaresult tca_desc_build_here(const tca_transfer *t, p2_desc *desc)
{
    p2_dev *dev = tca_dev();
    if (!dev)
        return TCA_ERROR_NOT_INITIALIZED;
    tcaresult r = tca_desc_build(t, dev->node, dev->nnodes, desc);
    /* A destination on another PEACH2 network: refused here, at the earliest
     * call that names it (the board would refuse the descriptor too). */
    return r == TCA_SUCCESS ? tca_node_reachable(dev, t->dst->node, "DMA") : r;
}

static tcaresult desc_append(tcaDesc *desc, const tca_transfer *t)
{
    if (!tca_dev())
        return TCA_ERROR_NOT_INITIALIZED;
    if (!desc)
        return TCA_ERROR_INVALID_ARGUMENT;
    p2_desc built;
    tcaresult r = tca_desc_build_here(t, &built);
    if (r != TCA_SUCCESS)
        return r;
    if (desc->count == desc->capacity) {
        size_t capacity = desc->capacity ? desc->capacity * 2 : 4;
        p2_desc *items = realloc(desc->items, capacity * sizeof *items);
        if (!items)
            return TCA_ERROR_OUT_OF_MEMORY;
        desc->items = items;
        desc->capacity = capacity;
    }
    desc->items[desc->count++] = built;
    if (t->flags & tcaDMAUseInternal)
        desc->wants_registers = 1;
    if (t->flags & tcaDMAUseNotifyInternal)
        desc->wants_notify_table = 1;
    return TCA_SUCCESS;
}

tcaresult tcaDescSetMemcpy(tcaDesc *desc, const tcaHandle *dst_handle, size_t dst_offset,
                           const tcaHandle *src_handle, size_t src_offset, size_t size,
                           int flags, int wait_slot, int wait_tag)
{
    tca_transfer t = {.dst = dst_handle, .dst_offset = dst_offset,
                      .src = src_handle, .src_offset = src_offset,
                      .width = size, .count = 1,
                      .flags = flags, .wait_slot = wait_slot, .wait_tag = wait_tag};
    return desc_append(desc, &t);
}

tcaresult tcaDescSetMemcpy2D(tcaDesc *desc, const tcaHandle *dst_handle, size_t dst_offset,
                             size_t dst_pitch, const tcaHandle *src_handle,
                             size_t src_offset, size_t src_pitch, size_t width,
                             size_t count, int flags, int wait_slot, int wait_tag)
{
    tca_transfer t = {.dst = dst_handle, .dst_offset = dst_offset, .dst_pitch = dst_pitch,
                      .src = src_handle, .src_offset = src_offset, .src_pitch = src_pitch,
                      .width = width, .count = count, .block_stride = 1,
                      .flags = flags, .wait_slot = wait_slot, .wait_tag = wait_tag};
    return desc_append(desc, &t);
}

/* ---------------------------------------------------------------------------
 * Loading a chain into a channel
 * ------------------------------------------------------------------------- */
static void set_registers(p2_dev *dev, const tcaDesc *desc, int c)
{
    for (size_t i = 0; i < desc->count; i++) {
        uint64_t words[P2_DESC_SIZE / 8];
        memcpy(words, &desc->items[i], sizeof words); /* next stays 0: ignored in registers */
        for (size_t w = 0; w < P2_DESC_SIZE / 8; w++)
            tca_reg_write(dev, P2_REG_DESC(c, i) + 8 * w, words[w]);
    }
    tca_reg_write(dev, P2_REG_DMA(c, P2_DMA_REG_COUNT), desc->count);
}

/* Descriptor memory for the chain's current length, reused while it fits. */
static tcaresult ensure_memory(tcaDesc *desc)
{
    if (desc->has_memory && desc->memory_generation == tca_g.generation &&
        desc->memory_slots >= desc->count)
        return TCA_SUCCESS;
    desc_release_memory(desc);
    uint64_t offset;
    tcaresult r = tca_arena_alloc_locked(tcaMemoryCPU, desc->capacity * (uint64_t)P2_DESC_SIZE,
                                         &offset);
    if (r != TCA_SUCCESS)
        return r;
    desc->has_memory = 1;
    desc->memory_generation = tca_g.generation;
    desc->memory_offset = offset;
    desc->memory_slots = desc->capacity;
    return TCA_SUCCESS;
}

static tcaresult set_chain(p2_dev *dev, tcaDesc *desc, int c)
{
    tcaresult r = ensure_memory(desc);
    if (r != TCA_SUCCESS)
        return r;
    uint64_t base = p2_node_base(dev->node) + P2_HOST_OFFSET + desc->memory_offset;
    p2_desc *memory = (p2_desc *)(dev->host_mem + desc->memory_offset);
    memcpy(memory, desc->items, desc->count * sizeof *memory);
    tca_desc_link(memory, desc->count, base);
    /* The DMAC reads the descriptors after it sees the register write. */
    atomic_thread_fence(memory_order_release);
    tca_reg_write(dev, P2_REG_DMA(c, P2_DMA_DESC_PTR), base);
    tca_g.channel[c].chain = desc;
    return TCA_SUCCESS;
}

tcaresult tcaDescSet(tcaDesc *desc, int dmac_channel)
{
    P2_API_CALL();
    return tca_desc_set(desc, dmac_channel);
}

/* How many notifications the descriptor raises at `node`. */
static uint32_t raises_at(const p2_desc *d, unsigned node)
{
    return ((d->flags & P2_DESC_NOTIFY_SELF) ? 1u : 0u) +
           ((d->flags & P2_DESC_NOTIFY) && p2_addr_node(d->dst) == node ? 1u : 0u);
}

/* The notifications that tell this node the chain has ended: those of its
 * last transfer's (slot, tag) raised here. Earlier transfers may raise the
 * same pair, and come first: all of them count. */
static tca_notify_count chain_end(const tcaDesc *desc, unsigned node)
{
    const p2_desc *last = &desc->items[desc->count - 1];
    tca_notify_count end = {.slot = last->wait_slot, .tag = (uint16_t)last->wait_tag};
    if (raises_at(last, node) == 0)
        return end;
    for (size_t i = 0; i < desc->count; i++) {
        const p2_desc *d = &desc->items[i];
        if (d->wait_slot == end.slot && d->wait_tag == end.tag)
            end.left += raises_at(d, node);
    }
    return end;
}

tcaresult tca_desc_set(tcaDesc *desc, int dmac_channel)
{
    p2_dev *dev = tca_dev();
    if (!dev)
        return TCA_ERROR_NOT_INITIALIZED;
    if (!desc)
        return TCA_ERROR_INVALID_ARGUMENT;
    if (!tca_channel_valid(dmac_channel))
        return TCA_ERROR_INVALID_CHANNEL;
    if (desc->count == 0)
        return TCA_ERROR_EMPTY_CHAIN;
    tca_channel *ch = &tca_g.channel[dmac_channel];
    const int registers = tca_g.register_mode || desc->wants_registers;
    if (registers && desc->count > P2_DESC_REG_SLOTS)
        return TCA_ERROR_CHAIN_TOO_LONG;
    tcaresult r = tca_channel_idle(dev, dmac_channel);
    if (r != TCA_SUCCESS)
        return r;
    if (registers) {
        set_registers(dev, desc, dmac_channel);
        ch->mode = TCA_CHANNEL_REGISTERS;
        ch->chain = NULL;
    } else {
        if ((r = set_chain(dev, desc, dmac_channel)) != TCA_SUCCESS)
            return r;
        ch->mode = TCA_CHANNEL_CHAIN;
    }
    ch->loaded_end = chain_end(desc, dev->node);
    ch->loads++;
    /* A chain that raises nothing here leaves no sign of its end: have the
     * DMAC write it to host memory, where tcaStartDMADesc looks first. */
    if (!ch->loaded_end.left && !ch->end_wb && tca_g.end_wb) {
        tca_reg_write(dev, P2_REG_DMA(dmac_channel, P2_DMA_END_WB),
                      p2_node_base(dev->node) + P2_HOST_OFFSET + tca_g.end_wb_offset +
                          8u * (unsigned)dmac_channel);
        ch->end_wb = 1;
    }
    /* The process chose the chip's notification table: from now on its board
     * keeps every notification for this node there, and waits poll it. */
    if (desc->wants_notify_table && !tca_g.notify.table_on) {
        tca_reg_write(dev, P2_REG_NOTIFY_TABLE_ON, 1);
        tca_g.notify.table_on = 1;
    }
    return TCA_SUCCESS;
}

/* ---------------------------------------------------------------------------
 * Is the channel idle?
 *
 * The DMAC ignores a start while it runs (and a load rewrites the running
 * chain), so both are refused then. The library knows without a register
 * read in the usual cases: a channel it never started, or whose end it has
 * seen, either in tcaWaitDMAC or in the notifications the chain's last
 * transfer raises at this node (the DMAC raises them as it goes idle; the
 * collectives restart their channel on exactly that sign). Reading them off
 * the ring, claimed or kept for later, counts: the run is over either way.
 * When tcaWaitDMAC saw the end first, those notifications are still to come
 * (`stale`), and must not pass for the next run's. Only a channel started
 * without either sign since costs one read of its status register.
 * ------------------------------------------------------------------------- */

/* The run is over; its end notifications not yet read are stale. */
static void run_ended(tca_channel_run *run)
{
    if (run->running && run->end.left) {
        if (run->stale.left && (run->stale.slot != run->end.slot || run->stale.tag != run->end.tag))
            run->stale.left = 0; /* one pair is tracked: the older may pass for an end */
        run->stale.slot = run->end.slot;
        run->stale.tag = run->end.tag;
        run->stale.left += run->end.left;
    }
    run->running = 0;
    run->end.left = 0;
}

/* This node's DMAC raised (slot, tag) here, and the library has read it. */
static void channels_saw(unsigned slot, unsigned tag)
{
    pthread_mutex_lock(&tca_g.run_lock);
    for (int c = 0; c < P2_DMA_CHANNELS; c++) {
        tca_channel_run *run = &tca_g.channel[c].run;
        if (run->stale.left && run->stale.slot == slot && run->stale.tag == tag)
            run->stale.left--;
        else if (run->running && run->end.left && run->end.slot == slot &&
                 run->end.tag == tag && --run->end.left == 0)
            run->running = 0;
    }
    pthread_mutex_unlock(&tca_g.run_lock);
}

/* The tag of each channel's last start (P2_DMA_START_TAG): counted for the
 * process's life, so no tag repeats after tcaReset or a new tcaInit, and a
 * word the DMAC wrote for an older run never passes for the last one's. */
static uint64_t run_tag[P2_DMA_CHANNELS];

tcaresult tca_channel_idle(p2_dev *dev, int dmac_channel)
{
    tca_channel_run *run = &tca_g.channel[dmac_channel].run;
    pthread_mutex_lock(&tca_g.run_lock);
    int running = run->running;
    pthread_mutex_unlock(&tca_g.run_lock);
    if (!running || !dev->ops->mmio_read)
        return TCA_SUCCESS;
    /* The DMAC's word in host memory says so at the cost of a memory read; a
     * run it does not yet count (still running, or its word still on the way)
     * is asked of the status register. */
    tca_channel *ch = &tca_g.channel[dmac_channel];
    if (ch->end_wb && dev->ops->wait_mem &&
        dev->ops->wait_mem(dev, &tca_g.end_wb[dmac_channel], ~0ull, run_tag[dmac_channel], 0) ==
            P2_WAIT_OK) {
        pthread_mutex_lock(&tca_g.run_lock);
        run_ended(run);
        pthread_mutex_unlock(&tca_g.run_lock);
        return TCA_SUCCESS;
    }
    if (tca_reg_read(dev, P2_REG_DMA(dmac_channel, P2_DMA_STATUS)) == P2_DMA_BUSY)
        return TCA_ERROR_CHANNEL_BUSY;
    pthread_mutex_lock(&tca_g.run_lock);
    run_ended(run);
    pthread_mutex_unlock(&tca_g.run_lock);
    return TCA_SUCCESS;
}

/* ---------------------------------------------------------------------------
 * Running
 * ------------------------------------------------------------------------- */
tcaresult tcaStartDMADesc(int dmac_channel)
{
    P2_API_CALL();
    p2_dev *dev = tca_dev();
    if (!dev)
        return TCA_ERROR_NOT_INITIALIZED;
    if (!tca_channel_valid(dmac_channel))
        return TCA_ERROR_INVALID_CHANNEL;
    tca_channel *ch = &tca_g.channel[dmac_channel];
    if (ch->mode == TCA_CHANNEL_UNSET)
        return TCA_ERROR_CHANNEL_NOT_SET;
    tcaresult r = tca_channel_idle(dev, dmac_channel);
    if (r != TCA_SUCCESS)
        return r;
    pthread_mutex_lock(&tca_g.run_lock);
    ch->run.running = 1;
    ch->run.end = ch->loaded_end;
    pthread_mutex_unlock(&tca_g.run_lock);
    /* Tagged, so the DMAC's end word names this run: a start of someone
     * else's (tag 0) or an earlier one never passes for it. */
    uint64_t *tag = &run_tag[dmac_channel];
    if (++*tag > UINT32_MAX)
        *tag = 1;
    tca_reg_write(dev, P2_REG_DMA(dmac_channel, P2_DMA_START),
                  (*tag << 32) |
                      (ch->mode == TCA_CHANNEL_CHAIN ? P2_DMA_START_CHAIN : P2_DMA_START_REGISTERS));
    return TCA_SUCCESS;
}

tcaresult tcaWaitDMAC(int dmac_channel)
{
    P2_API_CALL();
    p2_dev *dev = tca_dev();
    if (!dev)
        return TCA_ERROR_NOT_INITIALIZED;
    if (!tca_channel_valid(dmac_channel))
        return TCA_ERROR_INVALID_CHANNEL;
    /* Waiting for "not busy" ends on IDLE and on FAILED alike, so a failed
     * run never hangs the caller; one read then tells the two apart. */
    if (!dev->ops->wait_reg || !dev->ops->mmio_read)
        return TCA_ERROR_NOT_SUPPORTED;
    uint64_t status_reg = P2_REG_DMA(dmac_channel, P2_DMA_STATUS);
    if (tca_reg_wait(dev, status_reg, P2_DMA_BUSY, 0) != P2_WAIT_OK)
        return TCA_ERROR_DEVICE;
    tca_channel *ch = &tca_g.channel[dmac_channel];
    const int failed = tca_reg_read(dev, status_reg) == P2_DMA_FAILED;
    pthread_mutex_lock(&tca_g.run_lock);
    if (failed)
        ch->run.end.left = 0; /* the last transfer never completed: nothing to come */
    run_ended(&ch->run);
    pthread_mutex_unlock(&tca_g.run_lock);
    if (failed) {
        ch->last_error = (p2_error)tca_reg_read(dev, P2_REG_DMA(dmac_channel, P2_DMA_ERROR));
        return TCA_ERROR_DMA_FAILED;
    }
    ch->last_error = P2_OK;
    return TCA_SUCCESS;
}

tcaresult tcaGetDMAError(int dmac_channel, p2_error *error)
{
    P2_API_CALL();
    if (!tca_dev())
        return TCA_ERROR_NOT_INITIALIZED;
    if (!error)
        return TCA_ERROR_INVALID_ARGUMENT;
    if (!tca_channel_valid(dmac_channel))
        return TCA_ERROR_INVALID_CHANNEL;
    *error = tca_g.channel[dmac_channel].last_error;
    return TCA_SUCCESS;
}

/* ---------------------------------------------------------------------------
 * Receiving: the notification ring (peach2_hw.h, "Notifications")
 * ------------------------------------------------------------------------- */
P2_STATIC_ASSERT(P2_NOTIFY_SLOTS <= 0x10000 && P2_NOTIFY_TAG_MAX <= 0xffffu,
                 "a ring entry holds any slot and tag");

/* Which notifications a wait accepts: (slot, tag) raised by the DMAC of
 * `node`, or of any node (ANY_NODE: the wait passed no handle). */
#define ANY_NODE UINT32_MAX
typedef struct notify_key {
    unsigned node, slot, tag;
} notify_key;

static int key_matches(notify_key want, unsigned node, unsigned slot, unsigned tag)
{
    return want.slot == slot && want.tag == tag && (want.node == ANY_NODE || want.node == node);
}

/* Takes one kept arrival that `want` accepts, if there is one. */
static int pending_claim(tca_notify_ring *ring, notify_key want)
{
    for (unsigned i = 0; i < ring->npending; i++) {
        tca_notify_pending *p = &ring->pending[i];
        if (!key_matches(want, p->node, p->slot, p->tag))
            continue;
        if (--p->count == 0) {
            /* Close the gap in order: with ANY_NODE the oldest kept pair wins. */
            memmove(p, p + 1, (ring->npending - i - 1) * sizeof *p);
            ring->npending--;
        }
        return 1;
    }
    return 0;
}

/* Whether arrivals of (node, slot, tag) are kept already. */
static int pending_find(const tca_notify_ring *ring, unsigned node, unsigned slot, unsigned tag)
{
    for (unsigned i = 0; i < ring->npending; i++) {
        const tca_notify_pending *p = &ring->pending[i];
        if (p->node == node && p->slot == slot && p->tag == tag)
            return 1;
    }
    return 0;
}

/* Keeps one arrival of (node, slot, tag) for a later claim; 0 if the table is full. */
static int pending_keep(tca_notify_ring *ring, unsigned node, unsigned slot, unsigned tag)
{
    for (unsigned i = 0; i < ring->npending; i++) {
        tca_notify_pending *p = &ring->pending[i];
        if (p->node == node && p->slot == slot && p->tag == tag) {
            if (p->count == UINT32_MAX)
                return 0;
            p->count++;
            return 1;
        }
    }
    if (ring->npending == TCA_NOTIFY_BACKLOG_MAX)
        return 0;
    ring->pending[ring->npending++] = (tca_notify_pending){
        .node = (uint8_t)node, .slot = (uint8_t)slot, .tag = (uint16_t)tag, .count = 1};
    return 1;
}

/* One more entry consumed; every quarter ring, the board learns how far. */
static void ring_advance(p2_dev *dev, tca_notify_ring *ring)
{
    ring->read++;
    if (ring->read - ring->tail_written >= TCA_NOTIFY_RING_ENTRIES / 4) {
        tca_reg_write(dev, P2_REG_NOTIFY_TAIL, ring->read);
        ring->tail_written = ring->read;
    }
}

/* The entry at the reader is claimed or kept: the ring moves on, and a
 * channel of this node's learns whether it ended. */
static void consumed(p2_dev *dev, unsigned node, unsigned slot, unsigned tag)
{
    if (node == dev->node)
        channels_saw(slot, tag);
    ring_advance(dev, &tca_g.notify);
}

/* The ring's entries from the reader on, in order, until one `want` accepts
 * (TCA_SUCCESS); the others are kept. With block == 0, TCA_NOT_YET at the
 * first entry not yet written. */
static tcaresult scan_ring(p2_dev *dev, notify_key want, int block)
{
    tca_notify_ring *ring = &tca_g.notify;
    if (!ring->entries || !dev->ops->wait_mem)
        return TCA_ERROR_NOT_SUPPORTED;
    for (;;) {
        const volatile uint64_t *word = &ring->entries[ring->read % TCA_NOTIFY_RING_ENTRIES];
        const uint64_t serial = (uint64_t)p2_notify_serial(ring->read) << 32;
        switch (dev->ops->wait_mem(dev, word, P2_NOTIFY_SERIAL_MASK, serial, block)) {
        case P2_WAIT_OK: break;
        case P2_WAIT_NOT_YET: return block ? TCA_ERROR_DEVICE : TCA_NOT_YET;
        case P2_WAIT_FAILED:
        default: return TCA_ERROR_DEVICE;
        }
        /* The serial is there, so is the rest of the entry (one 8-byte write). */
        atomic_thread_fence(memory_order_acquire);
        const uint64_t entry = *word;
        if ((entry & P2_NOTIFY_SERIAL_MASK) != serial)
            return TCA_ERROR_DEVICE; /* the device said yes, memory says no */
        const unsigned got_node = p2_notify_entry_node(entry);
        const unsigned got_slot = p2_notify_entry_slot(entry);
        const unsigned got_tag = p2_notify_entry_tag(entry);
        if (key_matches(want, got_node, got_slot, got_tag)) {
            consumed(dev, got_node, got_slot, got_tag);
            return TCA_SUCCESS;
        }
        /* Someone else's: keep it. A full table leaves it in the ring, where
         * a wait for its own pair still finds it. */
        if (!pending_keep(ring, got_node, got_slot, got_tag))
            return TCA_ERROR_NOTIFY_BACKLOG;
        consumed(dev, got_node, got_slot, got_tag);
    }
}

/* The chip's notification table (tcaDMAUseNotifyInternal), polled by MMIO
 * reads of NOTIFY_POP back to back, each a round trip to the board: a
 * notification is seen by the first read that reaches the board after it,
 * one read's return later, and a wait costs at least one read. Entries that
 * went to the ring (before the table was on, or while it was full) are
 * found when a read finds the table empty and names a ring head beyond the
 * reader. With block == 0, one read. */
static tcaresult poll_table(p2_dev *dev, notify_key want, int block)
{
    tca_notify_ring *ring = &tca_g.notify;
    for (;;) {
        /* A popped entry is gone from the board: with the pending table full,
         * look first, and pop only what is wanted or can be kept. */
        if (ring->npending == TCA_NOTIFY_BACKLOG_MAX) {
            const uint64_t head = tca_reg_read(dev, P2_REG_NOTIFY_PEEK);
            if ((head & P2_NOTIFY_SERIAL_MASK) &&
                !key_matches(want, p2_notify_entry_node(head), p2_notify_entry_slot(head),
                             p2_notify_entry_tag(head)) &&
                !pending_find(ring, p2_notify_entry_node(head), p2_notify_entry_slot(head),
                              p2_notify_entry_tag(head)))
                return TCA_ERROR_NOTIFY_BACKLOG;
        }
        const uint64_t entry = tca_reg_read(dev, P2_REG_NOTIFY_POP);
        if (entry & P2_NOTIFY_SERIAL_MASK) {
            const unsigned got_node = p2_notify_entry_node(entry);
            const unsigned got_slot = p2_notify_entry_slot(entry);
            const unsigned got_tag = p2_notify_entry_tag(entry);
            if (got_node == dev->node)
                channels_saw(got_slot, got_tag);
            if (key_matches(want, got_node, got_slot, got_tag))
                return TCA_SUCCESS;
            if (!pending_keep(ring, got_node, got_slot, got_tag))
                return TCA_ERROR_NOTIFY_BACKLOG;
            continue;
        }
        if ((uint32_t)entry != (uint32_t)ring->read) {
            tcaresult r = scan_ring(dev, want, 0);
            if (r != TCA_NOT_YET)
                return r;
        }
        if (!block)
            return TCA_NOT_YET;
    }
}

static tcaresult wait_notify(const tcaHandle *handle, int wait_slot, int wait_tag, int block)
{
    p2_dev *dev = tca_dev();
    if (!dev)
        return TCA_ERROR_NOT_INITIALIZED;
    /* The handle names the node whose DMA raises the notification: the
     * peer's handle for its data, one of this node's for its own completion
     * (tca-api.h). */
    if (handle && tca_handle_validate(handle, dev->nnodes) != TCA_SUCCESS)
        return TCA_ERROR_INVALID_HANDLE;
    if (wait_slot < 0 || wait_slot >= P2_NOTIFY_SLOTS)
        return TCA_ERROR_INVALID_SLOT;
    if (wait_tag < 0 || (unsigned)wait_tag > P2_NOTIFY_TAG_MAX)
        return TCA_ERROR_INVALID_TAG;
    tca_notify_ring *ring = &tca_g.notify;
    const notify_key want = {.node = handle ? handle->node : ANY_NODE,
                             .slot = (unsigned)wait_slot, .tag = (unsigned)wait_tag};
    if (pending_claim(ring, want))
        return TCA_SUCCESS;
    return ring->table_on ? poll_table(dev, want, block) : scan_ring(dev, want, block);
}

tcaresult tcaWaitDMARecvDesc(const tcaHandle *handle, int wait_slot, int wait_tag)
{
    P2_API_CALL();
    return wait_notify(handle, wait_slot, wait_tag, 1);
}

tcaresult tcaTestDMARecvDesc(const tcaHandle *handle, int wait_slot, int wait_tag)
{
    P2_API_CALL();
    return wait_notify(handle, wait_slot, wait_tag, 0);
}
