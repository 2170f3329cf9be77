/*
 * p2_exchange_ib.c - the InfiniBand leg of p2_exchange (p2_exchange.c) on a
 * job whose ranks are on several PEACH2 networks: the leader of each network
 * writes its network's mailbox slots into the "far mailbox" of every node
 * of the other networks with RDMA writes of its node's HCA, as a verbs
 * program would.
 *
 * The HCA has one send queue (model/contract/ib_hw.h); the MPI layer drives
 * it once MPI has started. Before that it is free: the exchange takes it,
 * with its queues and the far mailbox in the top of host memory, the MPI
 * layer's share (p2_rt.mpi_share_bytes), which nothing uses before MPI
 * starts and which the layer sets up afresh when it does. Once the MPI layer
 * holds the HCA (p2_device_holder) the exchange is refused: a program that
 * runs MPI exchanges its handles with MPI.
 *
 *   far area = [SQ: XIB_SQ entries][CQ: XIB_CQ entries][far mailbox]
 *   far mailbox = bank[P2_MAILBOX_BANKS] of slot[P2_MAX_NODES], as the mailbox
 *
 * Depends on the device interface (dev.h) and the rank runtime (rt.h).
 */
#include <stdio.h>
#include <string.h>

#include "ib_hw.h"
#include "p2_mailbox.h"
#include "rt/rt.h"
#include "tca_internal.h"

#define XIB_SQ 64u /* entries: a leader posts one write per run of ranks per node */
#define XIB_CQ 64u
#define XIB_SQ_OFF 0u
#define XIB_CQ_OFF (XIB_SQ_OFF + XIB_SQ * IB_WQE_SIZE)
#define XIB_MAILBOX_OFF (XIB_CQ_OFF + XIB_CQ * IB_CQE_SIZE)
#define XIB_AREA_BYTES (XIB_MAILBOX_OFF + P2_EXCHANGE_BYTES)

static const char xib_holder[] = "p2_exchange";

/* This process's use of the HCA: set up once, counts since then. */
static struct {
    p2_dev *dev;
    p2_rt *rt;
    uint64_t area;   /* host offset of the far area */
    uint64_t posted; /* work requests posted, all signaled */
    uint64_t done;   /* completions consumed */
} xib;

static void reg(uint64_t r, uint64_t v) { xib.dev->ops->mmio_write(xib.dev, IB_BAR_REGS, r, v); }

static int node_has_ib(const p2_rt *rt)
{
    for (unsigned d = 0; d < rt->ndevices; d++)
        if (strcmp(rt->device[d], "ib") == 0)
            return 1;
    return 0;
}

tcaresult tca_xib_open(int queues, char *why, size_t whylen)
{
    p2_rt *rt = p2_rt_get();
    if (!rt)
        return TCA_ERROR_DEVICE;
    if (!node_has_ib(rt)) {
        snprintf(why, whylen, "the topology gives the nodes no InfiniBand HCA (`device ib`)");
        return TCA_ERROR_UNREACHABLE;
    }
    if (rt->mpi_share_bytes < XIB_AREA_BYTES) {
        snprintf(why, whylen, "host memory leaves no room above tcaMalloc's for the HCA's "
                              "queues (mpi_host_bytes %llu, %u needed)",
                 (unsigned long long)rt->mpi_share_bytes, (unsigned)XIB_AREA_BYTES);
        return TCA_ERROR_UNREACHABLE;
    }
    p2_dev *dev = p2_device_get("ib");
    if (!dev)
        return TCA_ERROR_DEVICE;
    const char *holder = p2_device_holder(dev);
    if (holder && strcmp(holder, xib_holder) != 0) {
        snprintf(why, whylen, "%s holds the InfiniBand HCA the exchange would cross them with",
                 holder);
        return TCA_ERROR_UNREACHABLE;
    }
    /* The far mailbox, which other leaders may write before this rank
     * gets here, is never cleared: it starts zeroed, as the node's memory,
     * and generation words only grow. */
    xib.rt = rt;
    xib.area = rt->host.size - rt->mpi_share_bytes;
    if (!queues || xib.dev)
        return TCA_SUCCESS;
    p2_device_set_holder(dev, xib_holder);
    xib.dev = dev;
    reg(IB_REG_SQ_SIZE, XIB_SQ);
    reg(IB_REG_SQ_BASE, rt->host.bus + xib.area + XIB_SQ_OFF);
    reg(IB_REG_CQ_SIZE, XIB_CQ);
    reg(IB_REG_CQ_BASE, rt->host.bus + xib.area + XIB_CQ_OFF);
    return TCA_SUCCESS;
}

uint8_t *tca_xib_slot(unsigned bank, unsigned slot)
{
    return xib.rt->host.base + xib.area + XIB_MAILBOX_OFF + p2_mailbox_slot_offset(bank, slot);
}

/* Consumes the next completion (waiting for it); it must be a good one. */
static tcaresult take_completion(void)
{
    volatile uint64_t *word =
        (volatile uint64_t *)(xib.rt->host.base + xib.area + XIB_CQ_OFF +
                              IB_CQE_SIZE * (xib.done % XIB_CQ));
    uint64_t serial = (uint64_t)ib_cqe_serial(xib.done) << 32;
    if (xib.dev->ops->wait_mem(xib.dev, word, IB_CQE_SERIAL_MASK, serial, 1) != P2_WAIT_OK)
        return TCA_ERROR_DEVICE;
    ib_cqe c;
    memcpy(&c, (const void *)word, sizeof c);
    reg(IB_REG_CQ_TAIL, ++xib.done);
    if (c.kind != IB_CQE_RDMA_WRITE || c.status != IB_OK) {
        fprintf(stderr, "p2_exchange: rank %d: an RDMA write to node %u failed (ib_status %u)\n",
                xib.rt->rank, c.src_node, c.status);
        return TCA_ERROR_DEVICE;
    }
    return TCA_SUCCESS;
}

tcaresult tca_xib_write(unsigned node, const uint8_t *src, uint64_t far_offset, uint32_t bytes)
{
    tcaresult r;
    while (xib.posted - xib.done >= XIB_SQ)
        if ((r = take_completion()) != TCA_SUCCESS)
            return r;
    ib_wqe w;
    memset(&w, 0, sizeof w);
    w.opcode = IB_OP_RDMA_WRITE;
    w.flags = IB_WQE_SIGNALED;
    w.rail = IB_RAIL_ANY;
    w.dest_node = (uint16_t)node;
    w.length = bytes;
    w.local_addr = xib.rt->host.bus + (uint64_t)(src - xib.rt->host.base);
    w.remote_addr = p2_node_base(node) + P2_HOST_OFFSET + xib.area + XIB_MAILBOX_OFF + far_offset;
    w.wr_id = xib.posted;
    memcpy(xib.rt->host.base + xib.area + XIB_SQ_OFF + IB_WQE_SIZE * (xib.posted % XIB_SQ), &w,
           sizeof w);
    reg(IB_REG_SQ_DOORBELL, ++xib.posted);
    return TCA_SUCCESS;
}

tcaresult tca_xib_drain(void)
{
    tcaresult r;
    while (xib.done < xib.posted)
        if ((r = take_completion()) != TCA_SUCCESS)
            return r;
    return TCA_SUCCESS;
}
