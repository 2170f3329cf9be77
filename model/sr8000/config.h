// config.h - what the SR8000 units are configured with: the sr8000-scope
// parameters (core/params.def) as times and rates, and the crossbar shape the
// topology gives.
#pragma once

#include <cstdint>
#include <string>

#include <systemc>

#include "core/params.h"
#include "topo/topology.h"

namespace p2 {

struct Sr8000Config {
  unsigned nodes = 0, x = 0, y = 0;  // node n sits at column n % x of row n / x
  double link_bytes_per_ns = 0, mem_read_bytes_per_ns = 0;
  sc_core::sc_time link_latency, xbar_latency, router_latency;
  sc_core::sc_time mmio_post, reg_read, kick_reuse, kick_modified;
  sc_core::sc_time mem_read_latency, packet_setup, rx_process, mem_write_latency;
  sc_core::sc_time barrier_signal, barrier_detect;
  uint32_t header_bytes = 0, packet_bytes = 0, tcw_cache_entries = 0;
  uint64_t rx_buffer_bytes = 0;  // input buffer at each link's receiving end

  // Throws ConfigError (the topology's file and `line`, its device line) on a
  // shape the SR8000 cannot have.
  static Sr8000Config make(const Params& p, const Topology& topo, int line);

  bool two_d() const { return y > 1; }
  unsigned col(unsigned node) const { return node % x; }
  unsigned row(unsigned node) const { return node / x; }
  // Time to clock `bytes` onto a link, and for the NIA to read them from memory.
  sc_core::sc_time on_link(uint64_t bytes) const;
  sc_core::sc_time mem_read(uint64_t bytes) const;
};

}  // namespace p2
