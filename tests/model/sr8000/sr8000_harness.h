// sr8000_harness.h - what the SR8000 model tests share: a cluster built from
// a `crossbar` shape, a SystemC thread that drives its NIAs through their
// registers and node memory (TCWs, areas, flags), and timed remote writes.
#pragma once

#include <cstring>
#include <functional>
#include <vector>

#include <gtest/gtest.h>
#include <systemc>

#include "sim/cluster.h"
#include "sr8000/network.h"
#include "sr8000_hw.h"
#include "topo/topology.h"

namespace p2 {
namespace sr8000_test {

inline uint64_t bus(unsigned node, uint64_t off) { return p2_node_base(node) + P2_HOST_OFFSET + off; }

// Node memory layout of these tests: area 0 is the first 64 MiB, TCWs live at
// kTcw, the flag word of area 1 at kFlags.
constexpr uint64_t kArea0 = 64ull << 20;
constexpr uint64_t kTcw = 0x3000000;  // inside area 0's span of memory, but tests never write data there
constexpr uint64_t kFlags = 0x3800000;

class Sr : public sc_core::sc_module {
 public:
  SC_HAS_PROCESS(Sr);
  Sr(sc_core::sc_module_name name, Cluster& c, std::function<void(Sr&)> body)
      : sc_module(name), c_(c), body_(std::move(body)) {
    for (unsigned i = 0; i < c.nodes(); ++i) {
      c.device(i, 0).set_change_observer([this] { changed_.notify(sc_core::SC_ZERO_TIME); });
      c.host(i).set_write_observer([this](uint64_t, uint32_t) { changed_.notify(sc_core::SC_ZERO_TIME); });
    }
    SC_THREAD(run);
  }
  Cluster& cluster() { return c_; }
  NodeDevice& dev(unsigned n) { return c_.device(n, 0); }
  uint8_t* mem(unsigned n, uint64_t off, uint64_t len) { return c_.host(n).translate(bus(n, off), len); }
  void reg(unsigned n, uint64_t r, uint64_t v) { dev(n).mmio_write(SR_BAR_REGS, r, v); }
  uint64_t peek(unsigned n, uint64_t r) { return dev(n).peek(SR_BAR_REGS, r); }
  // Area 0 = the first 64 MiB of every node, area 1 = its flag page.
  void map_areas() {
    for (unsigned n = 0; n < c_.nodes(); ++n) {
      reg(n, SR_REG_AREA_BASE(0), bus(n, 0));
      reg(n, SR_REG_AREA_SIZE(0), kArea0);
      reg(n, SR_REG_AREA_BASE(1), bus(n, kFlags));
      reg(n, SR_REG_AREA_SIZE(1), 4096);
    }
    wait(sc_core::sc_time(1, sc_core::SC_US));
  }
  sr_tcw* tcw(unsigned n, unsigned i) { return reinterpret_cast<sr_tcw*>(mem(n, kTcw + 64 * i, 64)); }
  void kick(unsigned n, unsigned i, bool broadcast = false) {
    tcw(n, i)->status = 0;
    reg(n, broadcast ? SR_REG_BCAST_KICK : SR_REG_KICK, bus(n, kTcw + 64 * i));
  }
  uint64_t wait_status(unsigned n, unsigned i) {
    until([&] { return (tcw(n, i)->status & SR_TCW_DONE) != 0; });
    return tcw(n, i)->status;
  }
  uint64_t flag(unsigned n, unsigned i) {
    uint64_t v;
    std::memcpy(&v, mem(n, kFlags + 8 * i, 8), 8);
    return v;
  }
  void until(const std::function<bool()>& cond) {
    while (!cond()) wait(changed_);
  }
  void pause_us(double us) { wait(sc_core::sc_time(us, sc_core::SC_US)); }
  double now_us() const { return sc_core::sc_time_stamp().to_seconds() * 1e6; }

 private:
  void run() {
    body_(*this);
    finished = true;
    sc_core::sc_stop();
  }

 public:
  bool finished = false;

 private:
  Cluster& c_;
  std::function<void(Sr&)> body_;
  sc_core::sc_event changed_;
};

inline void with_sr8000(const std::string& shape, const std::function<void(Sr&)>& body, Params params = {}) {
  Topology topo = parse_topology("device sr8000\ncrossbar " + shape + "\n", "t.topo", params);
  Cluster cluster(topo, params, RoutingPolicy::RingFirst);
  Sr driver("driver", cluster, body);
  sc_core::sc_start();
  // A body still waiting when nothing is left to simulate would skip its
  // remaining checks silently.
  EXPECT_TRUE(driver.finished) << "the test body waits for something that never happens (at "
                               << sc_core::sc_time_stamp() << ")";
}

// A write of `size` bytes from node `from`'s offset `src` to `to`'s area 0 at
// `dst`, then flag 0 of area 1 := `value`.
inline void put(Sr& s, unsigned from, unsigned i, unsigned to, uint64_t src, uint64_t dst, uint64_t size,
         uint64_t value, uint32_t version) {
  sr_tcw* t = s.tcw(from, i);
  *t = sr_tcw{};
  t->version = version;
  t->flags = SR_TCW_FLAG;
  t->dst_node = static_cast<uint16_t>(to);
  t->src = bus(from, src);
  t->size = size;
  t->dst_area = 0;
  t->dst_offset = dst;
  t->flag_area = 1;
  t->flag_offset = 0;
  t->flag_value = value;
}

// The time from a kick to the flag (after the data) at the destination.
inline double one_way_us(Sr& s, unsigned from, unsigned to, uint64_t value) {
  std::memset(s.mem(to, kFlags, 8), 0, 8);
  const double t0 = s.now_us();
  s.kick(from, 0);
  s.until([&] { return s.flag(to, 0) == value; });
  const double t = s.now_us() - t0;
  s.wait_status(from, 0);
  return t;
}

// One 8 B write from `from` to `to` (TCW 0, already `put`), with data new to
// the destination: the times from the kick to the data visible there, to
// its flag, and to the TCW's status back at the sender.
struct Times {
  double data, flag, status;
};
inline Times timed_write(Sr& s, unsigned from, unsigned to, uint64_t value) {
  uint64_t word = 0x0102030405060708ull * value;
  std::memcpy(s.mem(from, 0, 8), &word, 8);
  std::memset(s.mem(to, 4096, 8), 0, 8);
  std::memset(s.mem(to, kFlags, 8), 0, 8);
  Times t{-1, -1, -1};
  const double t0 = s.now_us();
  s.kick(from, 0);
  // Each time taken when it is first seen, in whichever order they come.
  s.until([&] {
    const double now = s.now_us() - t0;
    if (t.data < 0 && std::memcmp(s.mem(to, 4096, 8), &word, 8) == 0) t.data = now;
    if (t.flag < 0 && s.flag(to, 0) == value) t.flag = now;
    if (t.status < 0 && (s.tcw(from, 0)->status & SR_TCW_DONE)) t.status = now;
    return t.data >= 0 && t.flag >= 0 && t.status >= 0;
  });
  return t;
}

// TCW `slot` of `root`: a broadcast on `color` of `size` bytes from offset
// `off` of its memory to the same offset at every member.
inline void put_broadcast(Sr& s, unsigned root, unsigned slot, unsigned color, uint64_t off, uint64_t size) {
  sr_tcw* t = s.tcw(root, slot);
  *t = sr_tcw{};
  t->version = 1;
  t->dst_node = static_cast<uint16_t>(color);
  t->src = bus(root, off);
  t->size = size;
  t->dst_offset = off;
}

// The same 8 B write from node 0 to `to` (TCW 0, flag `value`) twice: the
// first kick translates the TCW (the slow path), the second, timed, takes
// the cached one (the fast path).
inline Times warm_write(Sr& s, unsigned to, uint64_t value) {
  put(s, 0, 0, to, 0, 4096, 8, value, static_cast<uint32_t>(value));
  timed_write(s, 0, to, value);
  return timed_write(s, 0, to, value);
}

}  // namespace sr8000_test
}  // namespace p2
