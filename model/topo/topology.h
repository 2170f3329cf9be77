// topology.h - which PEACH2 port of which node is cabled to which, read from a
// topology file (format: topologies/README.md) or made by a generator; minimal-
// hop routing tables with named tie-break policies; rank-to-node mappings.
#pragma once

#include <array>
#include <ostream>
#include <string>
#include <utility>
#include <vector>

#include "peach2_hw.h"
#include "pcie/link.h"
#include "core/params.h"

namespace p2 {

struct PortRef {
  unsigned node = 0;
  p2_port port = P2_PORT_N;
  bool operator==(const PortRef& o) const { return node == o.node && port == o.port; }
};
std::string port_ref_name(const PortRef& p);  // "3.E"

// One inter-board cable. Side a is always the Root Complex end.
struct TopoLink {
  PortRef a, b;
  std::vector<std::pair<std::string, std::string>> overrides;  // LINK-scope name=value
  int line = 0;  // where the file declared it (0: generated)
  int set_line = 0;  // the last `set` line that changed its overrides (0: none)
};

// A `device KIND` line: every node has one device of this kind, joined to the
// others by that kind's network (the PEACH2 cables below, for "peach2").
struct TopoDevice {
  std::string kind;
  int line = 0;  // 0: the default (no `device` line)
};
// Device kinds the simulator can build (sim/cluster.cc makes their networks).
const std::vector<std::string>& known_device_kinds();

struct Topology {
  std::string name;   // from the file's `name` line, or the generator
  std::string file;   // "" when generated
  unsigned nodes = 0;
  std::vector<TopoDevice> devices{{"peach2", 0}};  // in file order; device d is index d
  // `crossbar X Y [Z]` (SR8000): X nodes per x-crossbar, Y x-crossbars per
  // plane, Z planes (1 if not given); node x + X*(y + Y*z) sits at column x
  // of row y of plane z. 0 when the file gives none.
  unsigned xbar_x = 0, xbar_y = 0, xbar_z = 0;
  int xbar_line = 0;
  std::vector<TopoLink> links;
  // port_kind[node][port]: what each port is (N is always an Endpoint).
  std::vector<std::array<LinkEndKind, P2_PORT_COUNT>> port_kind;
  // The PEACH2 networks ("sub-clusters"): the sets of nodes the cables join,
  // numbered 0.. in the order of each one's lowest node. network[n] is node
  // n's; empty for a topology without PEACH2 cabling (no `device peach2`).
  // A file with several needs a `networks K` line (topologies/README.md).
  unsigned networks = 0;
  std::vector<unsigned> network;

  const TopoLink* link_at(const PortRef& p) const;  // nullptr if the port is unused
  // The link's parameters: `base` with this link's overrides applied.
  Params link_params(const TopoLink& l, const Params& base) const;
  // Hops between two nodes over inter-board links (BFS distance); ~0u when
  // `to` cannot be reached (only possible for a hand-built Topology).
  unsigned hop_distance(unsigned from, unsigned to) const;
};

// The PEACH2 networks of `topo`'s cables: entry n is node n's network, the
// networks numbered 0.. in the order of their lowest node (a node without
// cables is a network of its own).
std::vector<unsigned> peach2_networks(const Topology& topo);

// Generators. A torus of `rows` rows by `cols` columns: each row is a ring
// joined E to W; with two rows, each node's S joins its partner in the other
// row (row 0's S is the Root Complex). PEACH2 has one spare port (S), so rows
// must be 1 or 2. Inter-board cables get cable_m = `cable_m`.
Topology make_torus(unsigned rows, unsigned cols, double cable_m = 1.0);
Topology make_ring(unsigned nodes, double cable_m = 1.0);

// Reads and validates a topology file; throws ConfigError naming file:line.
// `base` is used to validate per-link overrides.
Topology load_topology(const std::string& path, const Params& base);
// The same from text (the file name is used in messages).
Topology parse_topology(const std::string& text, const std::string& file, const Params& base);

// The checks between parameters, once the parameter file (`params_file`, ""
// for none) and the topology are loaded: check_params on `params`; the MPI
// layer's share of host memory leaves tcaMalloc its minimum (and, with a
// `device ib` line, fits below host_memory_bytes); and for every cable its
// parameters with the overrides applied: data credits hold one TLP, and
// max_payload_bytes not below the cluster-wide value the DMAC splits by.
// Throws ConfigError naming the file, line and parameters.
void validate_config(const Params& params, const std::string& params_file, const Topology& topo);

// Tie-break policies for equal-length paths; see topologies/README.md.
enum class RoutingPolicy { RingFirst, SFirst, Balanced, RingSplit };
RoutingPolicy parse_routing_policy(const std::string& name);  // throws ConfigError("--routing", 0, ...)
const char* routing_policy_name(RoutingPolicy p);
std::vector<RoutingPolicy> all_routing_policies();

// routes[node][dest]: the output port at `node` for packets to `dest`
// (P2_PORT_N when dest == node; kNoRoute when no cable path joins them: dest
// is on another PEACH2 network). Every path is minimal.
using RouteTable = std::vector<std::array<p2_port, P2_MAX_NODES>>;
constexpr p2_port kNoRoute = static_cast<p2_port>(P2_ROUTE_NONE);
RouteTable build_routes(const Topology& topo, RoutingPolicy policy);
// The nodes a packet visits from `from` to `to` following the tables.
std::vector<unsigned> route_path(const Topology& topo, const RouteTable& routes, unsigned from,
                                 unsigned to);

// For placement tools (p2sim --routes, p2map): the topology's PEACH2 cables
// (each with its payload rate in bytes per second: `link_Bps` scaled by its
// lanes and rate overrides), each route as the directed cables it crosses
// (2 * cable + 0 from the cable's `a` end, + 1 from its `b` end; null where
// no cable path joins two nodes), a hop's latency, the rates at which GPU
// and host memory serve the boards' reads and writes, and whether the cables
// are exactly a generated ring or 2-row torus without overrides (every node
// alike: a placement's rotations cost the same). JSON, one object.
void write_routes_json(std::ostream& out, const Topology& topo, RoutingPolicy policy, const Params& params);
// A PEACH2 link's payload rate with MPS-sized TLPs (4-DW headers), bytes per
// second, for models of the model (collectives' cost model, p2map).
double link_payload_Bps(const Params& link);

// Rank-to-node mapping file: `RANK NODE` per line, `#` comments. Every rank
// 0..nranks-1 exactly once; nodes < nnodes and distinct. Throws ConfigError.
std::vector<unsigned> load_mapping(const std::string& path, unsigned nranks, unsigned nnodes);
std::vector<unsigned> identity_mapping(unsigned nranks);

}  // namespace p2
