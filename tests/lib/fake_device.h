// fake_device.h - a p2_dev whose operations record every call and answer
// from a small register file, so the library's device calls can be checked
// without the simulator. It also plays the board's side of the notification
// ring: raise() appends an entry to the ring the library programmed (RING,
// RING_SIZE, TAIL writes), dropping it while the ring is full, as the board
// does; a blocking wait_mem that would hang delivers `arriving` first.
#pragma once

#include <cstdint>
#include <cstring>
#include <deque>
#include <map>
#include <string>
#include <utility>
#include <vector>

#include "tca_internal.h"

struct FakeDevice {
    struct Call {
        Call(std::string name, uint64_t a_ = 0, uint64_t b_ = 0, uint64_t c_ = 0,
             uint64_t d_ = 0)
            : op(std::move(name)), a(a_), b(b_), c(c_), d(d_)
        {
        }
        std::string op;
        uint64_t a, b, c, d;
        std::vector<uint8_t> data;
    };

    p2_dev dev{};
    std::vector<uint8_t> host, gpu;
    std::vector<Call> calls;
    std::map<uint64_t, uint64_t> regs;                        // read values
    p2_wait_result wait_result = P2_WAIT_OK;                  // for wait_reg / wait_mem
    // The board's notification ring state, as the library programmed it.
    uint64_t ring_addr = 0, ring_size = 0, ring_head = 0, ring_tail = 0, ring_overflow = 0;
    // Notifications that arrive, one by one, while a blocking wait_mem waits.
    std::deque<std::pair<unsigned, unsigned>> arriving;

    FakeDevice(unsigned node, unsigned nnodes, size_t host_size = 1 << 20,
               size_t gpu_size = 1 << 20)
        : host(host_size), gpu(gpu_size)
    {
        dev.ops = &ops_table;
        dev.kind = "peach2";
        dev.rank = (int)node;
        dev.size = (int)nnodes;
        dev.node = node;
        dev.nnodes = nnodes;
        dev.host_mem = host_size ? host.data() : nullptr;
        dev.host_size = host_size;
        dev.gpu_mem = gpu_size ? gpu.data() : nullptr;
        dev.gpu_size = gpu_size;
        dev.priv = this;
    }

    std::vector<Call> ops_named(const std::string &op) const
    {
        std::vector<Call> out;
        for (const Call &c : calls)
            if (c.op == op)
                out.push_back(c);
        return out;
    }

    // The last value written to `reg`, or ~0 if never written.
    uint64_t written(uint64_t reg) const
    {
        uint64_t v = ~0ull;
        for (const Call &c : calls)
            if (c.op == "mmio_write" && c.a == reg)
                v = c.b;
        return v;
    }

    // The board raises (slot, tag) here on behalf of node `from`'s DMAC
    // (this node's when negative): appends an entry to the ring; false if it
    // was dropped (ring unset or full).
    bool raise(unsigned slot, unsigned tag, int from = -1)
    {
        if (ring_addr == 0 || ring_size == 0 || ring_head - ring_tail >= ring_size) {
            ring_overflow++;
            return false;
        }
        uint64_t off = p2_addr_offset(ring_addr) - P2_HOST_OFFSET + 8 * (ring_head % ring_size);
        uint64_t e = p2_notify_entry(p2_notify_serial(ring_head), slot, tag,
                                     from < 0 ? dev.node : (unsigned)from);
        std::memcpy(host.data() + off, &e, sizeof e);
        ring_head++;
        return true;
    }

    // Host-memory offset of a word the library waits on (~0 if elsewhere).
    uint64_t host_offset(const volatile uint64_t *addr) const
    {
        const uint8_t *p = (const uint8_t *)addr;
        return p >= host.data() && p < host.data() + host.size() ? (uint64_t)(p - host.data())
                                                                  : ~0ull;
    }

    static FakeDevice *self(p2_dev *d) { return static_cast<FakeDevice *>(d->priv); }

    static void close_op(p2_dev *d) { self(d)->calls.emplace_back("close"); }
    static void mmio_write_op(p2_dev *d, unsigned bar, uint64_t reg, uint64_t value)
    {
        if (bar != P2_BAR_REGS) {
            self(d)->calls.emplace_back("mmio_write_bad_bar", bar, reg, value);
            return;
        }
        FakeDevice *f = self(d);
        f->calls.emplace_back("mmio_write", reg, value);
        if (reg == P2_REG_NOTIFY_RING) {
            f->ring_addr = value;
            f->ring_head = f->ring_tail = 0;
        } else if (reg == P2_REG_NOTIFY_RING_SIZE) {
            f->ring_size = value;
        } else if (reg == P2_REG_NOTIFY_TAIL) {
            f->ring_tail = value;
        }
    }
    static uint64_t mmio_read_op(p2_dev *d, unsigned bar, uint64_t reg)
    {
        if (bar != P2_BAR_REGS)
            return ~0ull;
        self(d)->calls.emplace_back("mmio_read", reg);
        auto it = self(d)->regs.find(reg);
        return it == self(d)->regs.end() ? 0 : it->second;
    }
    static void pio_write_op(p2_dev *d, unsigned bar, uint64_t off, const void *src, size_t len)
    {
        Call c{bar == P2_BAR_PIO ? "pio_write" : "bar_write_bad_bar", off, len};
        c.data.assign((const uint8_t *)src, (const uint8_t *)src + len);
        self(d)->calls.push_back(c);
    }
    static void pio_commit_op(p2_dev *d) { self(d)->calls.emplace_back("pio_commit"); }
    static p2_wait_result wait_reg_op(p2_dev *d, unsigned bar, uint64_t reg, uint64_t mask,
                                      uint64_t value)
    {
        if (bar != P2_BAR_REGS)
            return P2_WAIT_FAILED;
        self(d)->calls.emplace_back("wait_reg", reg, mask, value);
        return self(d)->wait_result;
    }
    // Call: a = host offset of the word, b = mask, c = value, d = block.
    static p2_wait_result wait_mem_op(p2_dev *d, const volatile uint64_t *addr, uint64_t mask,
                                      uint64_t value, int block)
    {
        FakeDevice *f = self(d);
        f->calls.emplace_back("wait_mem", f->host_offset(addr), mask, value, (uint64_t)block);
        if (f->wait_result != P2_WAIT_OK)
            return f->wait_result;
        for (;;) {
            if ((*addr & mask) == value)
                return P2_WAIT_OK;
            if (!block)
                return P2_WAIT_NOT_YET;
            if (f->arriving.empty())
                return P2_WAIT_FAILED;  // would wait forever
            f->raise(f->arriving.front().first, f->arriving.front().second);
            f->arriving.pop_front();
        }
    }
    static constexpr p2_dev_ops ops_table = {
        "fake",      close_op,      mmio_write_op, mmio_read_op,
        pio_write_op, pio_commit_op, wait_reg_op,   wait_mem_op,
    };
};
