// route_dump.cc - the SR8000's links and unicast routes for placement tools
// (p2sim --routes, p2map): the ways Sr8000Network::route takes
// (Sr8000Config::hops), each link a one-way "cable".
#include <ostream>
#include <string>

#include "sr8000/config.h"

namespace p2 {

void write_sr8000_routes_json(std::ostream& out, const Topology& topo, const Params& params) {
  int line = 0;
  for (const TopoDevice& d : topo.devices)
    if (d.kind == "sr8000") line = d.line;
  const Sr8000Config c = Sr8000Config::make(params, topo, line);
  const unsigned n = c.nodes, dims = c.dims();
  // Link i of dimension d: node i's link to its crossbar is cable 2 (d n + i),
  // the crossbar's link to node i the next; each is used a-to-b only.
  auto up = [n](unsigned d, unsigned i) { return 2 * (2 * (d * n + i)); };
  auto down = [n](unsigned d, unsigned i) { return 2 * (2 * (d * n + i) + 1); };
  const double Bps = c.link_bytes_per_ns * 1e9 * c.packet_bytes / (c.packet_bytes + c.header_bytes);
  const double hop_ns = (2 * c.link_latency.to_seconds() + c.xbar_latency.to_seconds() +
                         c.router_latency.to_seconds()) * 1e9 / 2;
  const double memory_Bps = c.mem_read_bytes_per_ns * 1e9;
  static const char* const letter[3] = {"x", "y", "z"};
  out.precision(17);
  out << "{\"network\": \"sr8000\", \"routing\": \"dimension order\", \"nodes\": " << n
      << ", \"link_Bps\": " << Bps << ", \"hop_ns\": " << hop_ns << ", \"gpu_read_Bps\": " << memory_Bps
      << ", \"gpu_write_Bps\": " << memory_Bps << ", \"host_read_Bps\": " << memory_Bps
      << ", \"symmetric\": false,\n \"shape\": [" << c.x << ", " << c.y << ", " << c.z << "],\n \"cables\": [";
  for (unsigned d = 0; d < dims; ++d)
    for (unsigned i = 0; i < n; ++i) {
      const std::string node = "node" + std::to_string(i), xbar = std::string("xbar_") + letter[d];
      out << (d || i ? ", " : "") << "{\"name\": \"" << node << "_to_" << xbar << "\", \"Bps\": " << Bps
          << "}, {\"name\": \"" << xbar << "_to_" << node << "\", \"Bps\": " << Bps << "}";
    }
  out << "],\n \"paths\": [";
  for (unsigned s = 0; s < n; ++s) {
    out << (s ? ",\n  [" : "\n  [");
    for (unsigned t = 0; t < n; ++t) {
      out << (t ? ", [" : "[");
      bool first = true;
      for (const Sr8000Config::Hop& h : c.hops(s, t)) {
        out << (first ? "" : ", ") << up(h.dim, h.from) << ", " << down(h.dim, h.to);
        first = false;
      }
      out << "]";
    }
    out << "]";
  }
  out << "]}\n";
}

}  // namespace p2
