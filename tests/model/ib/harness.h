// harness.h - drives a cluster's InfiniBand network from a test: a SystemC
// thread playing the hosts' CPUs, queue set-up, posting work requests and
// receive buffers, and waits on completion entries in host memory.
#pragma once

#include <cstring>
#include <functional>

#include <gtest/gtest.h>
#include <systemc>

#include "ib_hw.h"
#include "sim/cluster.h"
#include "topo/topology.h"

namespace p2::test {

inline uint64_t ib_host(unsigned node, uint64_t off) { return p2_node_base(node) + P2_HOST_OFFSET + off; }
inline uint64_t ib_gpu(unsigned node, uint64_t off) { return p2_node_base(node) + P2_GPU_OFFSET + off; }

// A ring topology of `nodes` with PEACH2 and InfiniBand.
inline Topology ib_topology(unsigned nodes) {
  Topology t = make_ring(nodes);
  t.devices.push_back({"ib", 0});
  return t;
}

class IbDriver : public sc_core::sc_module {
 public:
  // Queue layout in each node's host memory.
  static constexpr uint64_t kSq = 0x100000, kRq = 0x110000, kCq = 0x120000;
  static constexpr uint64_t kEntries = 256;

  SC_HAS_PROCESS(IbDriver);
  IbDriver(sc_core::sc_module_name name, Cluster& cluster, std::function<void(IbDriver&)> body)
      : sc_module(name), cluster_(cluster), body_(std::move(body)), posted_(cluster.nodes(), 0),
        rposted_(cluster.nodes(), 0), cq_seen_(cluster.nodes(), 0) {
    for (unsigned i = 0; i < cluster.nodes(); ++i) {
      cluster.ib().hca(i).set_change_observer([this] { changed_.notify(sc_core::SC_ZERO_TIME); });
      cluster.host(i).set_write_observer([this](uint64_t, uint32_t) { changed_.notify(sc_core::SC_ZERO_TIME); });
    }
    SC_THREAD(run);
  }
  Cluster& cluster() { return cluster_; }
  uint8_t* mem(uint64_t addr, uint64_t len) {
    uint8_t* p = cluster_.host(p2_addr_node(addr)).translate(addr, len);
    EXPECT_NE(p, nullptr);
    return p;
  }
  void mmio(unsigned node, uint64_t reg, uint64_t v) { cluster_.host(node).mmio_write(ib_bar_addr(node, reg), v); }
  uint64_t peek(unsigned node, uint64_t reg) { return cluster_.ib().hca(node).reg_peek(reg); }

  // Sets up every node's queues (at the current time; registers land later).
  void setup_all() {
    for (unsigned n = 0; n < cluster_.nodes(); ++n) {
      std::memset(mem(ib_host(n, kCq), IB_CQE_SIZE * kEntries), 0, IB_CQE_SIZE * kEntries);
      mmio(n, IB_REG_SQ_SIZE, kEntries);
      mmio(n, IB_REG_SQ_BASE, ib_host(n, kSq));
      mmio(n, IB_REG_RQ_SIZE, kEntries);
      mmio(n, IB_REG_RQ_BASE, ib_host(n, kRq));
      mmio(n, IB_REG_CQ_SIZE, kEntries);
      mmio(n, IB_REG_CQ_BASE, ib_host(n, kCq));
    }
    wait(sc_core::sc_time(2, sc_core::SC_US));
  }
  void post_recv(unsigned n, uint64_t addr, uint32_t len, uint64_t wr_id) {
    ib_rqe e{};
    e.addr = addr;
    e.length = len;
    e.wr_id = wr_id;
    std::memcpy(mem(ib_host(n, kRq + IB_RQE_SIZE * (rposted_[n] % kEntries)), IB_RQE_SIZE), &e, sizeof e);
    mmio(n, IB_REG_RQ_DOORBELL, ++rposted_[n]);
  }
  void post_send(unsigned n, const ib_wqe& w) {
    std::memcpy(mem(ib_host(n, kSq + IB_WQE_SIZE * (posted_[n] % kEntries)), IB_WQE_SIZE), &w, sizeof w);
    mmio(n, IB_REG_SQ_DOORBELL, ++posted_[n]);
  }
  // Until node n's next completion entry is in its CQ; returns it.
  ib_cqe next_cqe(unsigned n) {
    const uint64_t i = cq_seen_[n]++;
    const uint64_t addr = ib_host(n, kCq + IB_CQE_SIZE * (i % kEntries));
    ib_cqe e{};
    for (;;) {
      std::memcpy(&e, mem(addr, IB_CQE_SIZE), sizeof e);
      if (e.serial == ib_cqe_serial(i)) break;
      wait(changed_);
    }
    mmio(n, IB_REG_CQ_TAIL, cq_seen_[n]);
    return e;
  }

 private:
  void run() { body_(*this); }
  Cluster& cluster_;
  std::function<void(IbDriver&)> body_;
  std::vector<uint64_t> posted_, rposted_, cq_seen_;
  sc_core::sc_event changed_;
};

inline void with_ib_cluster(const Topology& topo, const Params& params,
                            const std::function<void(IbDriver&)>& body) {
  Cluster cluster(topo, params, RoutingPolicy::RingFirst);
  bool finished = false;
  IbDriver driver("driver", cluster, [&](IbDriver& d) {
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

inline ib_wqe wqe(uint8_t op, unsigned dest, uint64_t local, uint32_t len, uint64_t remote = 0,
                  uint8_t rail = IB_RAIL_ANY, uint64_t wr_id = 0, uint32_t imm = 0) {
  ib_wqe w{};
  w.opcode = op;
  w.flags = IB_WQE_SIGNALED;
  w.rail = rail;
  w.dest_node = static_cast<uint16_t>(dest);
  w.length = len;
  w.imm = imm;
  w.local_addr = local;
  w.remote_addr = remote;
  w.wr_id = wr_id;
  return w;
}

}  // namespace p2::test
