// routing.cc - minimal-hop routing tables. PEACH2 routes by a fixed table, so
// among several shortest paths one must be chosen once, deterministically: the
// policy does that (topologies/README.md, "Routing policies"). Each PEACH2
// network (the nodes the cables join) is routed on its own; between networks
// the table says kNoRoute.
#include <stdexcept>

#include "topo/topology.h"

namespace p2 {

namespace {

constexpr unsigned kFar = ~0u;

struct PolicyInfo {
  RoutingPolicy policy;
  const char* name;
};
constexpr PolicyInfo kPolicies[] = {
    {RoutingPolicy::RingFirst, "ring-first"},
    {RoutingPolicy::SFirst, "s-first"},
    {RoutingPolicy::Balanced, "balanced"},
    {RoutingPolicy::RingSplit, "ring-split"},
};

// dist[s][d] for every pair, one BFS per source over the inter-board links.
std::vector<std::vector<unsigned>> all_distances(const Topology& topo) {
  std::vector<std::vector<unsigned>> dist(topo.nodes, std::vector<unsigned>(topo.nodes, kFar));
  for (unsigned s = 0; s < topo.nodes; ++s) {
    std::vector<unsigned> frontier{s};
    dist[s][s] = 0;
    for (unsigned hops = 1; !frontier.empty(); ++hops) {
      std::vector<unsigned> next;
      for (unsigned u : frontier)
        for (const TopoLink& l : topo.links) {
          unsigned v = l.a.node == u ? l.b.node : l.b.node == u ? l.a.node : kFar;
          if (v != kFar && dist[s][v] == kFar) {
            dist[s][v] = hops;
            next.push_back(v);
          }
        }
      frontier.swap(next);
    }
  }
  return dist;
}

// The node at the far end of `p`, or kFar if the port is not cabled.
unsigned neighbour(const Topology& topo, const PortRef& p) {
  const TopoLink* l = topo.link_at(p);
  if (!l) return kFar;
  return l->a == p ? l->b.node : l->a.node;
}

}  // namespace

RoutingPolicy parse_routing_policy(const std::string& name) {
  for (const PolicyInfo& p : kPolicies)
    if (name == p.name) return p.policy;
  throw ConfigError("--routing", 0, "unknown routing policy '" + name + "' (ring-split, ring-first, s-first, balanced)");
}

const char* routing_policy_name(RoutingPolicy policy) {
  for (const PolicyInfo& p : kPolicies)
    if (policy == p.policy) return p.name;
  return "unknown";
}

std::vector<RoutingPolicy> all_routing_policies() {
  std::vector<RoutingPolicy> all;
  for (const PolicyInfo& p : kPolicies) all.push_back(p.policy);
  return all;
}

RouteTable build_routes(const Topology& topo, RoutingPolicy policy) {
  if (topo.nodes > P2_MAX_NODES) throw std::logic_error("build_routes: more than P2_MAX_NODES nodes");
  const auto dist = all_distances(topo);
  // Port preference order; Balanced uses E, W, S and spreads by (u + d).
  std::vector<p2_port> order;
  if (policy == RoutingPolicy::SFirst)
    order = {P2_PORT_S, P2_PORT_E, P2_PORT_W};
  else
    order = {P2_PORT_E, P2_PORT_W, P2_PORT_S};

  RouteTable routes(topo.nodes);
  for (unsigned u = 0; u < topo.nodes; ++u) {
    routes[u].fill(P2_PORT_N);
    for (unsigned d = 0; d < topo.nodes; ++d) {
      if (d == u) continue;
      // Another PEACH2 network: no cable path, so no route; the board
      // refuses what is sent there (P2_ROUTE_NONE, peach2_hw.h).
      if (dist[u][d] == kFar) {
        routes[u][d] = kNoRoute;
        continue;
      }
      // Every port one hop closer to d; two cables to the same neighbour
      // (a ring of 2) are two candidates.
      std::vector<p2_port> candidates;
      for (p2_port p : order) {
        unsigned v = neighbour(topo, {u, p});
        if (v != kFar && dist[v][d] + 1 == dist[u][d]) candidates.push_back(p);
      }
      if (candidates.empty()) throw std::logic_error("build_routes: no port leads closer");
      if (policy == RoutingPolicy::Balanced)
        routes[u][d] = candidates[(u + d) % candidates.size()];
      else if (policy == RoutingPolicy::RingSplit && candidates.size() > 1 &&
               candidates[0] == P2_PORT_E && candidates[1] == P2_PORT_W)
        routes[u][d] = u % 2 ? P2_PORT_W : P2_PORT_E;
      else
        routes[u][d] = candidates.front();
    }
  }
  return routes;
}

std::vector<unsigned> route_path(const Topology& topo, const RouteTable& routes, unsigned from,
                                 unsigned to) {
  if (from >= topo.nodes || to >= topo.nodes || routes.size() != topo.nodes)
    throw std::logic_error("route_path: node out of range or table of another topology");
  std::vector<unsigned> path{from};
  for (unsigned u = from; u != to;) {
    p2_port p = routes[u][to];
    if (p == kNoRoute)
      throw std::logic_error("route_path: no route from node " + std::to_string(from) + " to node " +
                             std::to_string(to) + ": they are on different PEACH2 networks");
    unsigned v = p == P2_PORT_N ? kFar : neighbour(topo, {u, p});
    if (v == kFar)
      throw std::logic_error("route_path: node " + std::to_string(u) + " routes " + std::to_string(to) +
                             " to an unusable port");
    path.push_back(v);
    if (path.size() > topo.nodes)
      throw std::logic_error("route_path: loop routing " + std::to_string(from) + " to " + std::to_string(to));
    u = v;
  }
  return path;
}

}  // namespace p2
