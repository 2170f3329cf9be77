/*
 * dev_emu.c - the device interface served by the simulator of a p2run job,
 * for any device the topology gave the node: requests name the device's index
 * and a BAR, and travel over the rank runtime's channel (rt/rt.h).
 *
 * Costs charged to the rank's clock: every call lib_call_ns; a register store
 * cpu_mmio_write_ns more; write-combined stores pio_store_ns per
 * pio_store_bytes; a wait ends poll_detect_ns after the simulated time its
 * condition became true, a register read at its completion's time.
 */
#include "dev/dev_emu.h"

#include <stdio.h>
#include <string.h>

#include "rt/rt.h"

_Static_assert(P2_CHAN_OK == (int)P2_WAIT_OK && P2_CHAN_NOT_YET == (int)P2_WAIT_NOT_YET &&
                   P2_CHAN_FAILED == (int)P2_WAIT_FAILED,
               "channel statuses are the device interface's wait results");

static p2_rt *rt_of(p2_dev *dev) { return dev->priv; }

static void emu_close(p2_dev *dev)
{
    (void)dev; /* the channel belongs to the process and closes at exit */
}

static void emu_mmio_write(p2_dev *dev, unsigned bar, uint64_t offset, uint64_t value)
{
    p2_rt *rt = rt_of(dev);
    p2_rt_enter(rt);
    /* The store leaves the CPU once posted. */
    p2_rt_charge_ps(rt, p2_ns_ps(rt->prm.lib_call_ns) + p2_ns_ps(rt->prm.cpu_mmio_write_ns));
    p2_chan_req req = {.op = P2_CHAN_MMIO_WRITE, .dev = (uint8_t)dev->id, .bar = (uint8_t)bar,
                       .a = offset, .b = value};
    p2_rt_post(rt, &req);
    p2_rt_leave(rt);
}

static uint64_t emu_mmio_read(p2_dev *dev, unsigned bar, uint64_t offset)
{
    p2_rt *rt = rt_of(dev);
    p2_rt_enter(rt);
    p2_rt_charge_ps(rt, p2_ns_ps(rt->prm.lib_call_ns));
    p2_chan_req req = {.op = P2_CHAN_MMIO_READ, .dev = (uint8_t)dev->id, .bar = (uint8_t)bar,
                       .a = offset};
    p2_chan_resp resp;
    uint64_t value = ~0ull; /* what a read of a dead device returns */
    if (p2_rt_call(rt, &req, &resp) == 0) {
        p2_rt_advance_to(rt, resp.time_ps);
        if (resp.status == P2_CHAN_OK)
            value = resp.value;
    }
    p2_rt_leave(rt);
    return value;
}

static void emu_bar_write(p2_dev *dev, unsigned bar, uint64_t offset, const void *src, size_t len)
{
    p2_rt *rt = rt_of(dev);
    p2_rt_enter(rt);
    p2_rt_charge_ps(rt, p2_ns_ps(rt->prm.lib_call_ns));
    const uint8_t *bytes = src;
    /* One request per P2_CHAN_DATA_BYTES, cut at store boundaries; each is
     * stamped when its first store issues, and the stores follow
     * pio_store_ns apart (the host model paces them the same way). */
    const uint64_t store_bytes = (uint64_t)rt->prm.pio_store_bytes;
    const uint64_t store_ps = p2_ns_ps(rt->prm.pio_store_ns);
    size_t chunk_max = P2_CHAN_DATA_BYTES - P2_CHAN_DATA_BYTES % store_bytes;
    while (len > 0) {
        size_t n = len < chunk_max ? len : chunk_max;
        p2_chan_req req = {.op = P2_CHAN_BAR_WRITE, .len = (uint32_t)n, .dev = (uint8_t)dev->id,
                           .bar = (uint8_t)bar, .a = offset};
        memcpy(req.data, bytes, n);
        if (p2_rt_post(rt, &req) != 0)
            break;
        p2_rt_charge_ps(rt, (n + store_bytes - 1) / store_bytes * store_ps);
        bytes += n;
        offset += n;
        len -= n;
    }
    p2_rt_leave(rt);
}

static void emu_bar_flush(p2_dev *dev)
{
    p2_rt *rt = rt_of(dev);
    p2_rt_enter(rt);
    /* Stores reach the simulator in issue order already: nothing to flush. */
    p2_rt_charge_ps(rt, p2_ns_ps(rt->prm.lib_call_ns));
    p2_rt_leave(rt);
}

static p2_wait_result emu_wait_reg(p2_dev *dev, unsigned bar, uint64_t offset, uint64_t mask,
                                   uint64_t value)
{
    p2_rt *rt = rt_of(dev);
    p2_chan_req req = {.op = P2_CHAN_WAIT_REG, .dev = (uint8_t)dev->id, .bar = (uint8_t)bar,
                       .a = offset, .b = value, .c = mask};
    p2_chan_resp resp;
    p2_wait_result result = P2_WAIT_FAILED;
    p2_rt_enter(rt);
    p2_rt_charge_ps(rt, p2_ns_ps(rt->prm.lib_call_ns));
    if (p2_rt_call(rt, &req, &resp) == 0) {
        result = (p2_wait_result)resp.status;
        if (result != P2_WAIT_FAILED)
            p2_rt_advance_to(rt, resp.time_ps + p2_ns_ps(rt->prm.poll_detect_ns));
    }
    p2_rt_leave(rt);
    return result;
}

static p2_wait_result emu_wait_mem(p2_dev *dev, const volatile uint64_t *addr, uint64_t mask,
                                   uint64_t value, int block)
{
    return (p2_wait_result)p2_rt_wait_mem(rt_of(dev), addr, mask, value, block);
}

static const p2_dev_ops emu_ops = {
    .name = "emu",
    .close = emu_close,
    .mmio_write = emu_mmio_write,
    .mmio_read = emu_mmio_read,
    .bar_write = emu_bar_write,
    .bar_flush = emu_bar_flush,
    .wait_reg = emu_wait_reg,
    .wait_mem = emu_wait_mem,
};

int p2_dev_emu_open(p2_dev *dev, const char *kind)
{
    p2_rt *rt = p2_rt_get();
    if (!rt)
        return -1;
    for (unsigned d = 0; d < rt->ndevices; d++) {
        if (strcmp(rt->device[d], kind) != 0)
            continue;
        memset(dev, 0, sizeof *dev);
        dev->ops = &emu_ops;
        dev->kind = rt->device[d];
        dev->id = d;
        dev->rank = rt->rank;
        dev->size = rt->size;
        dev->node = rt->node;
        dev->nnodes = rt->nnodes;
        dev->host_mem = rt->host.base;
        dev->host_size = rt->host.size;
        dev->gpu_mem = rt->gpu.base;
        dev->gpu_size = rt->gpu.size;
        dev->network = rt->job->device_network[d];
        dev->priv = rt;
        return 0;
    }
    fprintf(stderr, "p2: rank %d: node %u has no %s device (the topology's device lines give",
            rt->rank, rt->node, kind);
    for (unsigned d = 0; d < rt->ndevices; d++)
        fprintf(stderr, " %s", rt->device[d]);
    fprintf(stderr, ")\n");
    return -1;
}
