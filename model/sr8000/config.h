// config.h - what the SR8000 units are configured with: the sr8000-scope
// parameters (core/params.def) as times and rates, and the crossbar shape the
// topology gives.
#pragma once

#include <cstdint>
#include <ostream>
#include <string>
#include <vector>

#include <systemc>

#include "core/params.h"
#include "topo/topology.h"
#include "sr8000_hw.h"

namespace p2 {

struct Sr8000Config {
  // Node n sits at column n % x, row n / x % y, plane n / (x * y).
  unsigned nodes = 0, x = 0, y = 0, z = 0;
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

  // 1: one crossbar; 2: x- and y-crossbars; 3: and z-crossbars.
  unsigned dims() const { return z > 1 ? 3 : y > 1 ? 2 : 1; }
  unsigned extent(unsigned dim) const { return dim == 0 ? x : dim == 1 ? y : z; }
  unsigned col(unsigned node) const { return node % x; }
  unsigned row(unsigned node) const { return node / x % y; }
  unsigned plane(unsigned node) const { return node / (x * y); }
  unsigned coord(unsigned node, unsigned dim) const {
    return dim == 0 ? col(node) : dim == 1 ? row(node) : plane(node);
  }
  unsigned node_at(unsigned c, unsigned r, unsigned k) const { return (k * y + r) * x + c; }
  // `group`: an SR_GROUP_BOX. Whether `node` lies in it, and whether the
  // whole box lies in the grid.
  bool in_group(uint64_t group, unsigned node) const;
  // Whether coordinate `at` of dimension `dim` lies in the box's range there.
  static bool group_covers(uint64_t group, unsigned dim, unsigned at) {
    const unsigned first = SR_GROUP_FIRST(group, dim);
    return at >= first && at - first < SR_GROUP_COUNT(group, dim);
  }
  // A unicast's way in dimension order (x, then y, then z): for each
  // dimension in which `dst` differs, the crossbar of that dimension from
  // node `from` to node `to` (the next turn, or `dst`).
  struct Hop {
    unsigned dim, from, to;
  };
  std::vector<Hop> hops(unsigned src, unsigned dst) const;
  bool group_fits(uint64_t group) const;
  // Time to clock `bytes` onto a link, and for the NIA to read them from memory.
  sc_core::sc_time on_link(uint64_t bytes) const;
  sc_core::sc_time mem_read(uint64_t bytes) const;
};

// For placement tools (p2sim --routes): the topology's SR8000 links, each a
// one-way cable, and every unicast route as the links it crosses, in the
// JSON form of write_routes_json (topo/topology.h). Throws ConfigError on a
// shape the SR8000 cannot have.
void write_sr8000_routes_json(std::ostream& out, const Topology& topo, const Params& params);

}  // namespace p2
