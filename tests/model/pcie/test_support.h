// test_support.h - a recording link client, TLP builders and the analytic
// timing figures the link tests compare against.
#pragma once

// sc_spawn, for at(); must precede the first <systemc>.
#ifndef SC_INCLUDE_DYNAMIC_PROCESSES
#define SC_INCLUDE_DYNAMIC_PROCESSES
#endif

#include <functional>
#include <systemc>
#include <vector>

#include "pcie/link.h"

namespace p2::test {

// Records every TLP arriving at its end; optionally frees its buffer at once.
struct Sink : LinkClient {
  struct Got {
    sc_core::sc_time at;
    TlpPtr tlp;
  };
  std::vector<Got> got;
  bool release_on_arrival = false;
  int tx_space_calls = 0;
  std::function<void(LinkPort&)> on_space;

  void tlp_arrived(LinkPort& port, TlpPtr tlp) override {
    if (release_on_arrival) port.release(*tlp);
    got.push_back({sc_core::sc_time_stamp(), std::move(tlp)});
  }
  void tx_space(LinkPort& port) override {
    ++tx_space_calls;
    if (on_space) on_space(port);
  }
};

// Records what an observed end put on its wire.
struct Recorder : TlpObserver {
  struct Sent {
    uint64_t id;
    sc_core::sc_time start, end;
  };
  std::vector<Sent> sent;
  void on_tlp_sent(const LinkPort&, const Tlp& tlp, sc_core::sc_time start,
                   sc_core::sc_time end) override {
    sent.push_back({tlp.id, start, end});
  }
};

inline TlpPtr make(TlpKind kind, uint64_t addr, uint32_t len, uint8_t tag) {
  auto t = std::make_unique<Tlp>();
  t->kind = kind;
  t->addr = addr;
  t->length = len;
  t->tag = tag;
  if (kind != TlpKind::MemRead) t->data.resize(len);
  return t;
}
inline TlpPtr write(uint64_t addr, uint32_t len, uint8_t tag = 0) {
  return make(TlpKind::MemWrite, addr, len, tag);
}
inline TlpPtr read(uint64_t addr, uint32_t len, uint8_t tag = 0) {
  return make(TlpKind::MemRead, addr, len, tag);
}
inline TlpPtr completion(uint64_t addr, uint32_t len, uint8_t tag = 0) {
  return make(TlpKind::Completion, addr, len, tag);
}

// The link's timing worked out from the parameters, independently of LinkConfig.
struct Expect {
  explicit Expect(const Params& p)
      : params(p),
        bytes_per_ns(p.pcie_lanes * p.pcie_gtps * p.pcie_encoding / 8),
        latency(p.link_latency_ns + p.cable_m * p.cable_ns_per_m, sc_core::SC_NS),
        fc_update(p.fc_update_latency_ns, sc_core::SC_NS) {}
  sc_core::sc_time wire(double bytes) const {
    return sc_core::sc_time(bytes / bytes_per_ns, sc_core::SC_NS);
  }
  // Serialisation of a TLP with a `hdr`-byte header and `payload` bytes of data.
  sc_core::sc_time tlp(uint32_t hdr, uint32_t payload) const {
    return wire(params.tlp_framing_bytes + hdr + payload);
  }
  sc_core::sc_time dllp() const { return wire(params.dllp_bytes); }
  // From a receive buffer freed to its credits usable at the transmitter.
  sc_core::sc_time credit_return() const { return fc_update + dllp() + latency; }

  Params params;
  double bytes_per_ns;
  sc_core::sc_time latency, fc_update;
};

// Runs `f` at simulated time `t` (from a spawned thread).
inline void at(sc_core::sc_time t, std::function<void()> f) {
  sc_core::sc_spawn([t, f = std::move(f)] {
    sc_core::wait(t);
    f();
  });
}

}  // namespace p2::test
