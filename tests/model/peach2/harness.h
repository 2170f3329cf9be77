// harness.h - drives a Cluster from a test: a SystemC thread playing the
// hosts' CPUs, descriptor helpers, and waits on the boards' state.
#pragma once

#include <cstring>
#include <functional>
#include <vector>

#include <gtest/gtest.h>
#include <systemc>

#include "peach2/chip.h"
#include "peach2/dmac.h"
#include "peach2_hw.h"
#include "sim/cluster.h"
#include "topo/topology.h"

namespace p2::test {

inline uint64_t host_addr(unsigned node, uint64_t off) { return p2_node_base(node) + P2_HOST_OFFSET + off; }
inline uint64_t gpu_addr(unsigned node, uint64_t off) { return p2_node_base(node) + P2_GPU_OFFSET + off; }
inline uint64_t reg_addr(unsigned node, uint64_t reg) { return p2_node_base(node) + P2_REGS_OFFSET + reg; }

// Runs `body` as a SystemC thread: the CPUs of the test.
class Driver : public sc_core::sc_module {
 public:
  SC_HAS_PROCESS(Driver);
  Driver(sc_core::sc_module_name name, Cluster& cluster, std::function<void(Driver&)> body)
      : sc_module(name), cluster_(cluster), body_(std::move(body)) {
    for (unsigned i = 0; i < cluster.nodes(); ++i) {
      cluster.chip(i).set_change_observer([this] { changed_.notify(sc_core::SC_ZERO_TIME); });
      cluster.host(i).set_write_observer([this](uint64_t, uint32_t) { changed_.notify(sc_core::SC_ZERO_TIME); });
    }
    SC_THREAD(run);
  }
  Cluster& cluster() { return cluster_; }

  uint8_t* mem(uint64_t addr, uint64_t len) {
    unsigned node = p2_addr_node(addr);
    uint8_t* p = cluster_.host(node).translate(addr, len);
    EXPECT_NE(p, nullptr);
    return p;
  }
  void put_desc(uint64_t addr, const p2_desc& d) { std::memcpy(mem(addr, sizeof d), &d, sizeof d); }
  void mmio(unsigned node, uint64_t reg, uint64_t value) {
    cluster_.host(node).mmio_write(reg_addr(node, reg), value);
  }
  void start_chain(unsigned node, unsigned ch, uint64_t first_desc) {
    mmio(node, P2_REG_DMA(ch, P2_DMA_DESC_PTR), first_desc);
    mmio(node, P2_REG_DMA(ch, P2_DMA_START), P2_DMA_START_CHAIN);
  }
  void load_registers(unsigned node, unsigned ch, const std::vector<p2_desc>& descs) {
    for (size_t i = 0; i < descs.size(); ++i)
      for (unsigned w = 0; w < P2_DESC_SIZE / 8; ++w) {
        uint64_t word;
        std::memcpy(&word, reinterpret_cast<const uint8_t*>(&descs[i]) + 8 * w, 8);
        mmio(node, P2_REG_DESC(ch, i) + 8 * w, word);
      }
    mmio(node, P2_REG_DMA(ch, P2_DMA_REG_COUNT), descs.size());
  }
  uint64_t peek(unsigned node, uint64_t reg) { return cluster_.chip(node).reg_peek(reg); }

  // A notification ring of `entries` at host offset kRingOffset of `node`.
  static constexpr uint64_t kRingOffset = 0x800000;
  void setup_ring(unsigned node, uint64_t entries) {
    std::memset(mem(host_addr(node, kRingOffset), 8 * entries), 0, 8 * entries);
    mmio(node, P2_REG_NOTIFY_RING_SIZE, entries);
    mmio(node, P2_REG_NOTIFY_RING, host_addr(node, kRingOffset));
  }
  uint64_t ring_entry(unsigned node, uint64_t index, uint64_t entries) {
    uint64_t e;
    std::memcpy(&e, mem(host_addr(node, kRingOffset + 8 * (index % entries)), 8), 8);
    return e;
  }
  // Until entry `index` of the node's ring holds its serial; returns it.
  uint64_t wait_notification(unsigned node, uint64_t index, uint64_t entries) {
    wait_until([&] { return (ring_entry(node, index, entries) >> 32) == p2_notify_serial(index); });
    return ring_entry(node, index, entries);
  }
  // Until the channel has finished one more run or failed; returns the status.
  // Call it right after posting the start, which is still on its way then.
  uint64_t wait_channel(unsigned node, unsigned ch, uint64_t runs_before) {
    const uint64_t errors_before = cluster_.chip(node).dmac().stats().errors;
    for (;;) {
      uint64_t status = peek(node, P2_REG_DMA(ch, P2_DMA_STATUS));
      if (status == P2_DMA_FAILED && cluster_.chip(node).dmac().stats().errors > errors_before) return status;
      if (peek(node, P2_REG_DMA(ch, P2_DMA_RUNS)) > runs_before && status == P2_DMA_IDLE) return status;
      wait(changed_);
    }
  }
  // Until cond holds; cond must depend on what the observers report (device
  // changes, bytes landing in memory), or the body waits forever.
  void wait_until(const std::function<bool()>& cond) {
    while (!cond()) wait(changed_);
  }
  // Lets `t` of simulated time pass: for outcomes no observer reports (a
  // dropped store or write only counts).
  void pass(sc_core::sc_time t) { wait(t); }

 private:
  void run() { body_(*this); }
  Cluster& cluster_;
  std::function<void(Driver&)> body_;
  sc_core::sc_event changed_;
};

// Elaborates `topo`, runs `body` as the CPUs until it returns, then stops.
inline void with_cluster(const Topology& topo, const Params& params,
                         const std::function<void(Driver&)>& body) {
  Cluster cluster(topo, params, RoutingPolicy::RingFirst);
  bool finished = false;
  Driver driver("driver", cluster, [&](Driver& d) {
    body(d);
    finished = true;
    sc_core::sc_stop();
  });
  sc_core::sc_start();
  // A body still waiting when nothing is left to simulate would skip its
  // remaining checks silently.
  EXPECT_TRUE(finished) << "the test body waits for something that never happens (at "
                        << sc_core::sc_time_stamp() << ")";
}

inline p2_desc desc(uint64_t src, uint64_t dst, uint32_t len, uint32_t flags = 0, uint64_t next = 0) {
  p2_desc d{};
  d.src = src;
  d.dst = dst;
  d.length = len;
  d.flags = flags;
  d.block_count = 1;
  d.next = next;
  return d;
}

inline void fill_pattern(uint8_t* p, size_t n, unsigned seed) {
  for (size_t i = 0; i < n; ++i) p[i] = static_cast<uint8_t>((i * 131 + seed * 7 + (i >> 8)) & 0xff);
}

}  // namespace p2::test
