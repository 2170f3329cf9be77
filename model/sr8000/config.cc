#include "sr8000/config.h"

#include <cmath>

#include "core/clock.h"
#include "sr8000_hw.h"

namespace p2 {

Sr8000Config Sr8000Config::make(const Params& p, const Topology& topo, int line) {
  Sr8000Config c;
  c.nodes = topo.nodes;
  if (topo.xbar_x) {
    c.x = topo.xbar_x;
    c.y = topo.xbar_y;
    c.z = topo.xbar_z;
  } else if (topo.nodes <= SR_XBAR_PORTS) {
    c.x = topo.nodes;  // one crossbar (1D)
    c.y = 1;
    c.z = 1;
  } else {
    throw ConfigError(topo.file, line,
                      "device sr8000 with " + std::to_string(topo.nodes) +
                          " nodes needs a 'crossbar X Y [Z]' line (one crossbar serves at most 8)");
  }
  // MB/s = bytes per microsecond; per nanosecond is a thousandth of it.
  c.link_bytes_per_ns = p.sr8000_link_mbps / 1000.0;
  c.mem_read_bytes_per_ns = p.sr8000_mem_read_mbps / 1000.0;
  c.link_latency = ns(p.sr8000_link_latency_ns);
  c.xbar_latency = ns(p.sr8000_xbar_latency_ns);
  c.router_latency = ns(p.sr8000_router_latency_ns);
  c.mmio_post = ns(p.sr8000_mmio_post_ns);
  c.reg_read = ns(p.sr8000_reg_read_ns);
  c.kick_reuse = ns(p.sr8000_kick_reuse_ns);
  c.kick_modified = ns(p.sr8000_kick_modified_ns);
  c.mem_read_latency = ns(p.sr8000_mem_read_latency_ns);
  c.packet_setup = ns(p.sr8000_packet_setup_ns);
  c.rx_process = ns(p.sr8000_rx_process_ns);
  c.mem_write_latency = ns(p.sr8000_mem_write_latency_ns);
  c.barrier_signal = ns(p.sr8000_barrier_signal_ns);
  c.barrier_detect = ns(p.sr8000_barrier_detect_ns);
  c.header_bytes = static_cast<uint32_t>(p.sr8000_packet_header_bytes);
  c.packet_bytes = static_cast<uint32_t>(p.sr8000_packet_bytes);
  c.tcw_cache_entries = static_cast<uint32_t>(p.sr8000_tcw_cache_entries);
  c.rx_buffer_bytes = static_cast<uint64_t>(p.sr8000_rx_buffer_bytes);
  // A buffer that cannot hold one full packet would stop the link for good.
  if (c.rx_buffer_bytes < c.header_bytes + c.packet_bytes)
    throw param_rule_error(
        p, {"sr8000_rx_buffer_bytes", "sr8000_packet_header_bytes", "sr8000_packet_bytes"}, topo.file, line,
        "sr8000_rx_buffer_bytes = " + std::to_string(c.rx_buffer_bytes) +
            " cannot hold one packet of sr8000_packet_header_bytes + sr8000_packet_bytes = " +
            std::to_string(c.header_bytes + c.packet_bytes) + " bytes");
  return c;
}

bool Sr8000Config::in_group(uint64_t group, unsigned node) const {
  for (unsigned d = 0; d < 3; ++d)
    if (!group_covers(group, d, coord(node, d))) return false;
  return true;
}

std::vector<Sr8000Config::Hop> Sr8000Config::hops(unsigned src, unsigned dst) const {
  std::vector<Hop> out;
  unsigned at = src, c = col(src), r = row(src), k = plane(src);
  for (unsigned d = 0; d < dims(); ++d) {
    if (coord(at, d) == coord(dst, d)) continue;
    (d == 0 ? c : d == 1 ? r : k) = coord(dst, d);
    const unsigned next = node_at(c, r, k);
    out.push_back({d, at, next});
    at = next;
  }
  return out;
}

bool Sr8000Config::group_fits(uint64_t group) const {
  for (unsigned d = 0; d < 3; ++d)
    if (SR_GROUP_FIRST(group, d) + SR_GROUP_COUNT(group, d) > extent(d)) return false;
  return true;
}

// Whole picoseconds, rounded: the same bytes always cost the same time.
sc_core::sc_time Sr8000Config::on_link(uint64_t bytes) const {
  return ps(static_cast<uint64_t>(std::llround(static_cast<double>(bytes) * 1000.0 / link_bytes_per_ns)));
}

sc_core::sc_time Sr8000Config::mem_read(uint64_t bytes) const {
  return ps(static_cast<uint64_t>(std::llround(static_cast<double>(bytes) * 1000.0 / mem_read_bytes_per_ns)));
}

}  // namespace p2
