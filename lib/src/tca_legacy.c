/*
 * tca_legacy.c - the older TCA API: descriptor tables named by an int
 * (tcaCreateDMADesc, tcaSetDMADesc_Memcpy/2D, tcaSetDMAChain,
 * tcaDestroyDMADesc) and tcaReset, on the same descriptors and channels as
 * tcaDesc chains (tca-api.h says what each call does).
 *
 * A table holds built hardware descriptors at numbered entries. An entry's
 * number is its position in a channel's chain, so each channel keeps the
 * positions tables have filled; tcaSetDMAChain writes a table's entries there,
 * cuts the chain after the table's last entry and loads the result through a
 * tcaDesc the channel owns (reused, so a persistent pattern allocates nothing
 * per set). Loading the channel otherwise (tcaDescSet, tcaReset) empties its
 * positions: the next tcaSetDMAChain sees that the channel's load count moved
 * since its own load.
 */
#include <stdlib.h>
#include <string.h>

#include "tca_internal.h"

/* Entries that hold a transfer, as built; `used` marks them. */
typedef struct slot_array {
    p2_desc *desc;
    uint8_t *used;
    uint8_t *internal; /* its tcaDMAUseNotifyInternal flag */
    size_t count;
} slot_array;

typedef struct legacy_table {
    int live;
    slot_array entries;
} legacy_table;

typedef struct legacy_channel {
    slot_array positions; /* grown to the longest chain loaded */
    size_t length;        /* positions 0 .. length-1 form the loaded chain */
    tcaDesc *chain;       /* what tca_desc_set loads; owned */
    uint64_t loads_seen;  /* the channel's tca_channel.loads after that load */
} legacy_channel;

static pthread_mutex_t legacy_lock = PTHREAD_MUTEX_INITIALIZER;
static legacy_table *tables;
static size_t ntables;
static legacy_channel channels[P2_DMA_CHANNELS];

static void slots_free(slot_array *a)
{
    free(a->desc);
    free(a->used);
    free(a->internal);
    *a = (slot_array){0};
}

/* Grows `a` to at least `count` entries (new ones unused); 0 if out of memory. */
static int slots_reserve(slot_array *a, size_t count)
{
    if (count <= a->count)
        return 1;
    p2_desc *desc = realloc(a->desc, count * sizeof *desc);
    if (desc)
        a->desc = desc;
    uint8_t *used = realloc(a->used, count);
    if (used)
        a->used = used;
    uint8_t *internal = realloc(a->internal, count);
    if (internal)
        a->internal = internal;
    if (!desc || !used || !internal)
        return 0;
    memset(a->used + a->count, 0, count - a->count);
    memset(a->internal + a->count, 0, count - a->count);
    a->count = count;
    return 1;
}

static legacy_table *table_of(int desc_tag)
{
    if (desc_tag < 0 || (size_t)desc_tag >= ntables || !tables[desc_tag].live)
        return NULL;
    return &tables[desc_tag];
}

tcaresult tcaCreateDMADesc(int *desc_tag, int count)
{
    if (!desc_tag || count < 1)
        return TCA_ERROR_INVALID_ARGUMENT;
    pthread_mutex_lock(&legacy_lock);
    size_t tag = 0;
    while (tag < ntables && tables[tag].live)
        tag++;
    tcaresult r = TCA_ERROR_OUT_OF_MEMORY;
    if (tag == ntables) {
        legacy_table *grown = realloc(tables, (ntables + 1) * sizeof *grown);
        if (!grown)
            goto out;
        tables = grown;
        tables[ntables++] = (legacy_table){0};
    }
    if (tag > (size_t)INT32_MAX || !slots_reserve(&tables[tag].entries, (size_t)count)) {
        slots_free(&tables[tag].entries);
        goto out;
    }
    tables[tag].live = 1;
    *desc_tag = (int)tag;
    r = TCA_SUCCESS;
out:
    pthread_mutex_unlock(&legacy_lock);
    return r;
}

tcaresult tcaDestroyDMADesc(int desc_tag)
{
    pthread_mutex_lock(&legacy_lock);
    legacy_table *t = table_of(desc_tag);
    if (t) {
        slots_free(&t->entries);
        t->live = 0;
    }
    pthread_mutex_unlock(&legacy_lock);
    return t ? TCA_SUCCESS : TCA_ERROR_INVALID_DESC;
}

/* Builds `x` (every check tcaDescSetMemcpy makes) into entry `index`. */
static tcaresult set_entry(int desc_tag, int index, int *next_index, const tca_transfer *x)
{
    if (!tca_dev())
        return TCA_ERROR_NOT_INITIALIZED;
    if (!next_index)
        return TCA_ERROR_INVALID_ARGUMENT;
    p2_desc built;
    tcaresult r = tca_desc_build_here(x, &built);
    if (r != TCA_SUCCESS)
        return r;
    pthread_mutex_lock(&legacy_lock);
    legacy_table *t = table_of(desc_tag);
    if (!t || index < 0 || (size_t)index >= t->entries.count) {
        r = TCA_ERROR_INVALID_DESC;
    } else {
        t->entries.desc[index] = built;
        t->entries.used[index] = 1;
        t->entries.internal[index] = (x->flags & tcaDMAUseNotifyInternal) != 0;
        *next_index = index + 1;
    }
    pthread_mutex_unlock(&legacy_lock);
    return r;
}

tcaresult tcaSetDMADesc_Memcpy(int desc_tag, int index, int *next_index,
                               const tcaHandle *dst_handle, size_t dst_offset,
                               const tcaHandle *src_handle, size_t src_offset, size_t size,
                               int flags, int wait_slot, int wait_tag)
{
    P2_API_CALL();
    tca_transfer x = {.dst = dst_handle, .dst_offset = dst_offset,
                      .src = src_handle, .src_offset = src_offset,
                      .width = size, .count = 1,
                      .flags = flags, .wait_slot = wait_slot, .wait_tag = wait_tag};
    return set_entry(desc_tag, index, next_index, &x);
}

tcaresult tcaSetDMADescMemcpy(int desc_tag, int index, int *next_index,
                              const tcaHandle *dst_handle, size_t dst_offset,
                              const tcaHandle *src_handle, size_t src_offset, size_t size,
                              int flags, int wait_slot, int wait_tag)
{
    return tcaSetDMADesc_Memcpy(desc_tag, index, next_index, dst_handle, dst_offset, src_handle,
                                src_offset, size, flags, wait_slot, wait_tag);
}

tcaresult tcaSetDMADesc_Memcpy2D(int desc_tag, int index, int *next_index,
                                 const tcaHandle *dst_handle, size_t dst_offset,
                                 size_t dst_pitch, const tcaHandle *src_handle,
                                 size_t src_offset, size_t src_pitch, size_t width,
                                 size_t height, int flags, int wait_slot, int wait_tag)
{
    P2_API_CALL();
    tca_transfer x = {.dst = dst_handle, .dst_offset = dst_offset, .dst_pitch = dst_pitch,
                      .src = src_handle, .src_offset = src_offset, .src_pitch = src_pitch,
                      .width = width, .count = height, .block_stride = 1,
                      .flags = flags, .wait_slot = wait_slot, .wait_tag = wait_tag};
    return set_entry(desc_tag, index, next_index, &x);
}

/* Empties the channel's positions (legacy_lock held). */
static void forget(legacy_channel *ch)
{
    if (ch->positions.count)
        memset(ch->positions.used, 0, ch->positions.count);
    ch->length = 0;
}

/* The channel's chain as a tcaDesc: positions 0 .. length-1, in order. */
static tcaresult chain_from_positions(legacy_channel *ch)
{
    if (!ch->chain && !(ch->chain = tcaDescNew()))
        return TCA_ERROR_OUT_OF_MEMORY;
    tcaDesc *d = ch->chain;
    if (d->capacity < ch->length) {
        p2_desc *items = realloc(d->items, ch->length * sizeof *items);
        if (!items)
            return TCA_ERROR_OUT_OF_MEMORY;
        d->items = items;
        d->capacity = ch->length;
    }
    d->count = ch->length;
    /* A numbered table is host memory (1024 entries in the published programs,
     * where the chip's registers hold 16): the DMAC fetches its descriptors
     * whatever the transfers' tcaDMAUseInternal says, which that API accepted
     * without effect; tcaDMADescInt_Init still puts the chain in registers. */
    d->wants_registers = d->wants_notify_table = 0;
    for (size_t i = 0; i < ch->length; i++) {
        d->items[i] = ch->positions.desc[i];
        d->wants_notify_table |= ch->positions.internal[i];
    }
    return TCA_SUCCESS;
}

tcaresult tcaSetDMAChain(int dmac_channel, int desc_tag)
{
    P2_API_CALL();
    if (!tca_dev())
        return TCA_ERROR_NOT_INITIALIZED;
    if (!tca_channel_valid(dmac_channel))
        return TCA_ERROR_INVALID_CHANNEL;
    pthread_mutex_lock(&legacy_lock);
    legacy_channel *ch = &channels[dmac_channel];
    if (tca_g.channel[dmac_channel].loads != ch->loads_seen)
        forget(ch); /* another chain was loaded since ours */
    legacy_table *t = table_of(desc_tag);
    tcaresult r = TCA_SUCCESS;
    size_t last = 0, filled = 0;
    if (!t) {
        r = TCA_ERROR_INVALID_DESC;
        goto out;
    }
    for (size_t i = 0; i < t->entries.count; i++)
        if (t->entries.used[i]) {
            last = i;
            filled++;
        }
    if (filled == 0) {
        r = TCA_ERROR_EMPTY_CHAIN;
        goto out;
    }
    if (!slots_reserve(&ch->positions, last + 1)) {
        r = TCA_ERROR_OUT_OF_MEMORY;
        goto out;
    }
    /* A hole below the table's last entry leaves the chain undefined: refuse
     * before changing anything. */
    for (size_t i = 0; i <= last; i++)
        if (!t->entries.used[i] && (i >= ch->length || !ch->positions.used[i])) {
            r = TCA_ERROR_EMPTY_CHAIN;
            goto out;
        }
    if ((r = tca_channel_idle(tca_dev(), dmac_channel)) != TCA_SUCCESS)
        goto out;
    for (size_t i = 0; i <= last; i++)
        if (t->entries.used[i]) {
            ch->positions.desc[i] = t->entries.desc[i];
            ch->positions.internal[i] = t->entries.internal[i];
            ch->positions.used[i] = 1;
        }
    ch->length = last + 1;
    if ((r = chain_from_positions(ch)) == TCA_SUCCESS &&
        (r = tca_desc_set(ch->chain, dmac_channel)) == TCA_SUCCESS)
        ch->loads_seen = tca_g.channel[dmac_channel].loads;
out:
    pthread_mutex_unlock(&legacy_lock);
    return r;
}


tcaresult tcaReset(void)
{
    P2_API_CALL();
    p2_dev *dev = tca_dev();
    if (!dev)
        return TCA_ERROR_NOT_INITIALIZED;
    for (int c = 0; c < P2_DMA_CHANNELS; c++) {
        /* A channel whose chain was freed while it ran is unset and running. */
        if (tca_g.channel[c].mode != TCA_CHANNEL_UNSET || tca_g.channel[c].run.running) {
            /* A run that failed is over too: only "still busy" matters here. */
            tcaresult r = tcaWaitDMAC(c);
            if (r != TCA_SUCCESS && r != TCA_ERROR_DMA_FAILED)
                return r;
        }
        tca_g.channel[c] = (tca_channel){0};
        pthread_mutex_lock(&legacy_lock);
        forget(&channels[c]);
        channels[c].loads_seen = 0;
        pthread_mutex_unlock(&legacy_lock);
    }
    /* Skip every entry the board has written or is writing: the ring is not
     * reset (an entry still in flight would land in a fresh ring with a
     * serial that passes for a new one), the reader moves to the board's head. */
    tca_notify_ring *ring = &tca_g.notify;
    if (ring->table_on)
        tca_reg_write(dev, P2_REG_NOTIFY_TABLE_ON, 1); /* empties the table */
    if (ring->entries) {
        ring->read = tca_reg_read(dev, P2_REG_NOTIFY_HEAD);
        ring->tail_written = ring->read;
        tca_reg_write(dev, P2_REG_NOTIFY_TAIL, ring->read);
    }
    ring->npending = 0;
    return TCA_SUCCESS;
}
