/* emu_golden: a fixed exchange whose simulated times must be identical on
 * every run under `p2run --clock=model`. Ranks form a ring; in each round
 * every rank PIO-writes a sequence number to its successor and waits for its
 * predecessor's (p2_wait_u64), then DMA-copies a block to its successor with
 * a notification (register-mode descriptor), waits for its own channel to go
 * idle (wait_reg) and for the notification from its predecessor: the next
 * entry of its notification ring (wait_mem on the entry's serial).
 * Each rank prints one line per round with its clock in picoseconds. */
#include <inttypes.h>
#include <stdio.h>
#include <string.h>

#include "dev/dev.h"
#include "peach2_hw.h"
#include "p2.h"

#define ROUNDS 3
#define FLAG_OFFSET 0x0      /* sequence word written by the predecessor's PIO */
#define SRC_OFFSET 0x10000   /* DMA source block */
#define DST_OFFSET 0x20000   /* DMA destination block */
#define RING_OFFSET 0x30000  /* notification ring */
#define RING_ENTRIES 64
#define DMA_BYTES 4096
#define DMA_CHANNEL 0
#define SLOT 5
#define TAG 0x100

static void dma_to(p2_dev *dev, unsigned dst_node, uint32_t bytes)
{
    p2_desc d;
    memset(&d, 0, sizeof d);
    d.src = p2_node_base(dev->node) + P2_HOST_OFFSET + SRC_OFFSET;
    d.dst = p2_node_base(dst_node) + P2_HOST_OFFSET + DST_OFFSET;
    d.length = bytes;
    d.flags = P2_DESC_NOTIFY;
    d.block_count = 1;
    d.wait_slot = SLOT;
    d.wait_tag = TAG;
    uint64_t words[8];
    memcpy(words, &d, sizeof d);
    for (unsigned w = 0; w < 8; w++)
        dev->ops->mmio_write(dev, P2_BAR_REGS, P2_REG_DESC(DMA_CHANNEL, 0) + 8 * w, words[w]);
    dev->ops->mmio_write(dev, P2_BAR_REGS, P2_REG_DMA(DMA_CHANNEL, P2_DMA_REG_COUNT), 1);
    dev->ops->mmio_write(dev, P2_BAR_REGS, P2_REG_DMA(DMA_CHANNEL, P2_DMA_START), P2_DMA_START_REGISTERS);
}

int main(void)
{
    p2_dev *dev = p2_device_get("peach2");
    if (!dev)
        return 1;
    int rank = dev->rank, size = dev->size;
    /* identity mapping: rank r runs on node r */
    unsigned next = (unsigned)((rank + 1) % size);
    memset(dev->host_mem + SRC_OFFSET, rank + 1, DMA_BYTES);
    volatile uint64_t *flag = (volatile uint64_t *)(dev->host_mem + FLAG_OFFSET);
    volatile uint64_t *ring = (volatile uint64_t *)(dev->host_mem + RING_OFFSET);
    memset(dev->host_mem + RING_OFFSET, 0, RING_ENTRIES * sizeof(uint64_t));
    dev->ops->mmio_write(dev, P2_BAR_REGS, P2_REG_NOTIFY_RING_SIZE, RING_ENTRIES);
    dev->ops->mmio_write(dev, P2_BAR_REGS, P2_REG_NOTIFY_RING,
                         p2_node_base(dev->node) + P2_HOST_OFFSET + RING_OFFSET);
    for (uint64_t round = 1; round <= ROUNDS; round++) {
        p2_compute(1e-6 * (double)rank); /* skew the ranks a little */
        dev->ops->bar_write(dev, P2_BAR_PIO, p2_pio_offset(next, FLAG_OFFSET), &round, sizeof round);
        dev->ops->bar_flush(dev);
        if (p2_wait_u64(flag, round) != TCA_SUCCESS)
            return 2;
        double t_pio = p2_wtime();
        dma_to(dev, next, DMA_BYTES);
        if (dev->ops->wait_reg(dev, P2_BAR_REGS, P2_REG_DMA(DMA_CHANNEL, P2_DMA_STATUS), 0x3, P2_DMA_IDLE) !=
            P2_WAIT_OK)
            return 3;
        double t_sent = p2_wtime();
        /* One notification per round: entry round - 1 (no wrap in ROUNDS). */
        uint64_t serial = (uint64_t)p2_notify_serial(round - 1) << 32;
        /* A test first: answered at this rank's simulated time, so its result
         * is part of what must not change between runs. */
        int early = (int)dev->ops->wait_mem(dev, &ring[(round - 1) % RING_ENTRIES],
                                            P2_NOTIFY_SERIAL_MASK, serial, 0);
        if (early != P2_WAIT_OK && early != P2_WAIT_NOT_YET)
            return 7;
        if (dev->ops->wait_mem(dev, &ring[(round - 1) % RING_ENTRIES], P2_NOTIFY_SERIAL_MASK,
                               serial, 1) != P2_WAIT_OK)
            return 4;
        uint64_t entry = ring[(round - 1) % RING_ENTRIES];
        if (p2_notify_entry_slot(entry) != SLOT || p2_notify_entry_tag(entry) != TAG)
            return 6;
        double t_recv = p2_wtime();
        uint8_t expect = (uint8_t)((rank + size - 1) % size + 1);
        int wrong = 0;
        for (int i = 0; i < DMA_BYTES; i++)
            wrong += dev->host_mem[DST_OFFSET + i] != expect;
        printf("rank %d round %" PRIu64 ": pio %.0f ps, dma sent %.0f ps, dma received %.0f ps, "
               "wrong %d, test %s\n",
               rank, round, t_pio * 1e12, t_sent * 1e12, t_recv * 1e12, wrong,
               early == P2_WAIT_OK ? "arrived" : "not yet");
        if (wrong)
            return 5;
    }
    return 0;
}
