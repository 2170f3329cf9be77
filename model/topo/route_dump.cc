// route_dump.cc - the routes as placement tools see them
// (write_routes_json, topology.h): p2map prices placements on these, so they
// come from the tables the network itself builds.
#include <set>
#include <tuple>

#include "topo/topology.h"

namespace p2 {

namespace {

using CableKey = std::tuple<unsigned, unsigned, unsigned, unsigned>;

CableKey key(const PortRef& a, const PortRef& b) {
  CableKey x{a.node, a.port, b.node, b.port}, y{b.node, b.port, a.node, a.port};
  return std::min(x, y);
}

// Whether the cables are exactly `ring N` or `torus 2xC` as the generator
// lays them, all with the same parameters: then every node sees the same
// network.
bool generated_ring_or_torus(const Topology& topo, bool* two_rows) {
  std::set<CableKey> have, ring, torus;
  for (const TopoLink& l : topo.links) {
    if (l.overrides != topo.links.front().overrides) return false;
    have.insert(key(l.a, l.b));
  }
  const unsigned n = topo.nodes;
  for (unsigned c = 0; c < n && n > 1; ++c) ring.insert(key({c, P2_PORT_E}, {(c + 1) % n, P2_PORT_W}));
  if (n % 2 == 0 && n >= 4) {
    const unsigned cols = n / 2;
    for (unsigned r = 0; r < 2; ++r)
      for (unsigned c = 0; c < cols && cols > 1; ++c)
        torus.insert(key({r * cols + c, P2_PORT_E}, {r * cols + (c + 1) % cols, P2_PORT_W}));
    for (unsigned c = 0; c < cols; ++c) torus.insert(key({c, P2_PORT_S}, {cols + c, P2_PORT_S}));
  }
  *two_rows = have == torus && have != ring;
  return !have.empty() && (have == ring || have == torus);
}

// Whether the routes turn with the cables: the port node u takes towards d is
// the one node u + 1 takes towards d + 1 (columns counted within each row).
bool routes_rotate(const Topology& topo, const RouteTable& routes, bool two_rows) {
  const unsigned cols = two_rows ? topo.nodes / 2 : topo.nodes;
  auto turn = [cols](unsigned v) { return v / cols * cols + (v % cols + 1) % cols; };
  for (unsigned u = 0; u < topo.nodes; ++u)
    for (unsigned d = 0; d < topo.nodes; ++d)
      if (routes[u][d] != routes[turn(u)][turn(d)]) return false;
  return true;
}

// Rotating a placement changes none of its costs: the cables and the routes
// are the same seen from every column.
bool symmetric(const Topology& topo, const RouteTable& routes) {
  bool two_rows = false;
  return generated_ring_or_torus(topo, &two_rows) && routes_rotate(topo, routes, two_rows);
}

}  // namespace

double link_payload_Bps(const Params& p) {
  return p.pcie_lanes * p.pcie_gtps * p.pcie_encoding / 8.0 * 1e9 * p.max_payload_bytes /
         (p.max_payload_bytes + p.tlp_framing_bytes + 16.0);
}

void write_routes_json(std::ostream& out, const Topology& topo, RoutingPolicy policy, const Params& params) {
  const RouteTable routes = build_routes(topo, policy);
  const double hop_ns = params.link_latency_ns + params.route_pipeline_cycles * 1000.0 / params.chip_mhz;
  out.precision(17);
  out << "{\"network\": \"peach2\", \"routing\": \"" << routing_policy_name(policy) << "\", \"nodes\": " << topo.nodes
      << ", \"link_Bps\": " << link_payload_Bps(params) << ", \"hop_ns\": " << hop_ns
      << ", \"gpu_read_Bps\": " << p2_gbps_Bps(params.gpu_read_gbps)
      << ", \"gpu_write_Bps\": " << p2_gbps_Bps(params.gpu_write_gbps)
      << ", \"host_read_Bps\": " << p2_gbps_Bps(params.host_read_gbps)
      << ", \"symmetric\": " << (symmetric(topo, routes) ? "true" : "false") << ",\n \"cables\": [";
  for (size_t i = 0; i < topo.links.size(); ++i) {
    const TopoLink& l = topo.links[i];
    out << (i ? ", " : "") << "{\"a\": [" << l.a.node << ", " << l.a.port << "], \"b\": [" << l.b.node << ", "
        << l.b.port << "], \"Bps\": " << link_payload_Bps(topo.link_params(l, params)) << "}";
  }
  out << "],\n \"paths\": [";
  for (unsigned s = 0; s < topo.nodes; ++s) {
    out << (s ? ",\n  [" : "\n  [");
    for (unsigned d = 0; d < topo.nodes; ++d) {
      out << (d ? ", " : "");
      std::string hops;
      bool reached = true;
      for (unsigned u = s, steps = 0; u != d; ++steps) {
        const p2_port p = routes[u][d];
        const TopoLink* l = p == kNoRoute || p == P2_PORT_N || steps > topo.nodes ? nullptr : topo.link_at({u, p});
        if (!l) {
          reached = false;
          break;
        }
        const bool from_a = l->a == PortRef{u, p};
        hops += (hops.empty() ? "" : ", ") + std::to_string(2 * (l - topo.links.data()) + (from_a ? 0 : 1));
        u = from_a ? l->b.node : l->a.node;
      }
      out << (reached ? "[" + hops + "]" : "null");
    }
    out << "]";
  }
  out << "]}\n";
}

}  // namespace p2
