// Routing tables: every policy gives minimal paths on the real topologies
// (generated and from the files), policies are deterministic, and they differ
// where they should.
#include <map>
#include <gtest/gtest.h>

#include <functional>
#include <stdexcept>
#include <tuple>

#include "topo/topology.h"
#include "topo_test_util.h"

namespace p2 {
namespace {

using topotest::ring_hops;
using topotest::source_path;
using topotest::torus2_hops;

struct TopoCase {
  const char* name;
  std::function<Topology()> make;
  std::function<unsigned(unsigned, unsigned)> hops;  // analytic distance
};

const TopoCase kTopos[] = {
    {"torus2x8_generated", [] { return make_torus(2, 8); },
     [](unsigned a, unsigned b) { return torus2_hops(8, a, b); }},
    {"torus2x8_file", [] { return load_topology(source_path("topologies/hapacs-tca-2x8.topo"), Params()); },
     [](unsigned a, unsigned b) { return torus2_hops(8, a, b); }},
    {"ring8_generated", [] { return make_ring(8); }, [](unsigned a, unsigned b) { return ring_hops(8, a, b); }},
    {"ring8_file", [] { return load_topology(source_path("topologies/tcamini-ring8.topo"), Params()); },
     [](unsigned a, unsigned b) { return ring_hops(8, a, b); }},
    {"ring4_explicit_file", [] { return load_topology(source_path("topologies/ring4-explicit.topo"), Params()); },
     [](unsigned a, unsigned b) { return ring_hops(4, a, b); }},
    {"ring2_generated", [] { return make_ring(2); }, [](unsigned a, unsigned b) { return ring_hops(2, a, b); }},
    {"torus2x3_generated", [] { return make_torus(2, 3); },
     [](unsigned a, unsigned b) { return torus2_hops(3, a, b); }},
};

}  // namespace

// ctest shows test parameters; print policies by name (found by ADL).
void PrintTo(RoutingPolicy p, std::ostream* os) { *os << routing_policy_name(p); }

namespace {

class RoutingMinimal : public ::testing::TestWithParam<std::tuple<size_t, RoutingPolicy>> {};

TEST_P(RoutingMinimal, EveryPairTakesAShortestPath) {
  const TopoCase& tc = kTopos[std::get<0>(GetParam())];
  RoutingPolicy policy = std::get<1>(GetParam());
  Topology topo = tc.make();
  RouteTable routes = build_routes(topo, policy);
  ASSERT_EQ(routes.size(), topo.nodes);
  for (unsigned from = 0; from < topo.nodes; ++from)
    for (unsigned to = 0; to < topo.nodes; ++to) {
      unsigned expect = tc.hops(from, to);
      EXPECT_EQ(topo.hop_distance(from, to), expect) << from << "->" << to;
      std::vector<unsigned> path = route_path(topo, routes, from, to);
      ASSERT_FALSE(path.empty());
      EXPECT_EQ(path.front(), from);
      EXPECT_EQ(path.back(), to);
      EXPECT_EQ(path.size() - 1, expect) << from << "->" << to;
      if (from == to) EXPECT_EQ(routes[from][to], P2_PORT_N);
      else EXPECT_NE(routes[from][to], P2_PORT_N);
    }
}

std::string minimal_name(const ::testing::TestParamInfo<RoutingMinimal::ParamType>& info) {
  std::string s = std::string(kTopos[std::get<0>(info.param)].name) + "_" +
                  routing_policy_name(std::get<1>(info.param));
  for (char& c : s)
    if (c == '-') c = '_';
  return s;
}

INSTANTIATE_TEST_SUITE_P(All, RoutingMinimal,
                         ::testing::Combine(::testing::Range<size_t>(0, std::size(kTopos)),
                                            ::testing::ValuesIn(all_routing_policies())),
                         minimal_name);

TEST(RoutingPolicies, NamesRoundTrip) {
  std::vector<RoutingPolicy> all = all_routing_policies();
  ASSERT_EQ(all.size(), 4u);
  EXPECT_EQ(parse_routing_policy("ring-split"), RoutingPolicy::RingSplit);
  EXPECT_EQ(parse_routing_policy("ring-first"), RoutingPolicy::RingFirst);
  EXPECT_EQ(parse_routing_policy("s-first"), RoutingPolicy::SFirst);
  EXPECT_EQ(parse_routing_policy("balanced"), RoutingPolicy::Balanced);
  for (RoutingPolicy p : all) EXPECT_EQ(parse_routing_policy(routing_policy_name(p)), p);
}

TEST(RoutingPolicies, UnknownNameIsAConfigError) {
  try {
    parse_routing_policy("xy");
    FAIL() << "no error";
  } catch (const ConfigError& e) {
    EXPECT_EQ(std::string(e.what()), "--routing: unknown routing policy 'xy' (ring-split, ring-first, s-first, balanced)");
    EXPECT_EQ(e.file(), "--routing");
    EXPECT_EQ(e.line(), 0);
  }
  EXPECT_THROW(parse_routing_policy("Ring-First"), ConfigError);
  EXPECT_THROW(parse_routing_policy(""), ConfigError);
}

TEST(RoutingPolicies, Deterministic) {
  for (RoutingPolicy p : all_routing_policies()) {
    EXPECT_EQ(build_routes(make_torus(2, 8), p), build_routes(make_torus(2, 8), p)) << routing_policy_name(p);
    EXPECT_EQ(build_routes(make_ring(8), p), build_routes(make_ring(8), p)) << routing_policy_name(p);
  }
}

TEST(RoutingPolicies, DifferOnTheTorus) {
  Topology t = make_torus(2, 8);
  RouteTable ring_first = build_routes(t, RoutingPolicy::RingFirst);
  RouteTable s_first = build_routes(t, RoutingPolicy::SFirst);
  RouteTable balanced = build_routes(t, RoutingPolicy::Balanced);
  EXPECT_NE(ring_first, s_first);
  EXPECT_NE(ring_first, balanced);
  EXPECT_NE(s_first, balanced);

  // 0 = (row 0, col 0) to 12 = (row 1, col 4): E/W tie, plus S.
  EXPECT_EQ(route_path(t, ring_first, 0, 12), (std::vector<unsigned>{0, 1, 2, 3, 4, 12}));
  EXPECT_EQ(route_path(t, s_first, 0, 12), (std::vector<unsigned>{0, 8, 9, 10, 11, 12}));
  // 0 to 9 = (row 1, col 1): candidates E, S; balanced takes (0+9) % 2 = 1, S.
  EXPECT_EQ(ring_first[0][9], P2_PORT_E);
  EXPECT_EQ(s_first[0][9], P2_PORT_S);
  EXPECT_EQ(balanced[0][9], P2_PORT_S);
  // 1 to 9: only S is minimal, every policy agrees.
  for (const RouteTable* r : {&ring_first, &s_first, &balanced}) EXPECT_EQ((*r)[1][9], P2_PORT_S);
  // 2 to 15 = (row 1, col 7): W is shorter than E.
  EXPECT_EQ(ring_first[2][15], P2_PORT_W);
  EXPECT_EQ(route_path(t, ring_first, 2, 15), (std::vector<unsigned>{2, 1, 0, 7, 15}));
}

TEST(RoutingPolicies, RingTiesAndBalancing) {
  Topology r = make_ring(8);
  RouteTable ring_first = build_routes(r, RoutingPolicy::RingFirst);
  RouteTable balanced = build_routes(r, RoutingPolicy::Balanced);
  // Half-way: ring-first always goes east; balanced alternates by (u + d).
  EXPECT_EQ(route_path(r, ring_first, 0, 4), (std::vector<unsigned>{0, 1, 2, 3, 4}));
  EXPECT_EQ(ring_first[1][5], P2_PORT_E);
  EXPECT_EQ(balanced[0][4], P2_PORT_E);  // (0+4) % 2 = 0
  EXPECT_EQ(balanced[1][5], P2_PORT_E);  // (1+5) % 2 = 0
  EXPECT_EQ(balanced[1][4], P2_PORT_E);  // not a tie
  EXPECT_EQ(balanced[4][1], P2_PORT_W);  // not a tie
  // Ring of 2: both cables reach the neighbour; balanced picks by (u + d).
  Topology r2 = make_ring(2);
  RouteTable rf2 = build_routes(r2, RoutingPolicy::RingFirst);
  RouteTable b2 = build_routes(r2, RoutingPolicy::Balanced);
  EXPECT_EQ(rf2[0][1], P2_PORT_E);
  EXPECT_EQ(b2[0][1], P2_PORT_W);  // (0+1) % 2 = 1
  EXPECT_EQ(route_path(r2, b2, 0, 1), (std::vector<unsigned>{0, 1}));
}

TEST(RoutingPolicies, RingSplitSendsHalfTheHalfWayFlowsEachWay) {
  Topology r = make_ring(8);
  RouteTable split = build_routes(r, RoutingPolicy::RingSplit);
  // Half-way: even boards east, odd boards west.
  EXPECT_EQ(route_path(r, split, 0, 4), (std::vector<unsigned>{0, 1, 2, 3, 4}));
  EXPECT_EQ(route_path(r, split, 1, 5), (std::vector<unsigned>{1, 0, 7, 6, 5}));
  EXPECT_EQ(split[1][4], P2_PORT_E);  // not a tie
  // Recursive doubling's r ^ 4 step: every cable direction carries two flows.
  std::map<std::pair<unsigned, unsigned>, int> load;
  for (unsigned u = 0; u < 8; ++u) {
    std::vector<unsigned> path = route_path(r, split, u, u ^ 4u);
    for (size_t i = 0; i + 1 < path.size(); ++i) ++load[{path[i], path[i + 1]}];
  }
  for (const auto& [hop, flows] : load) EXPECT_EQ(flows, 2) << hop.first << "->" << hop.second;
  EXPECT_EQ(load.size(), 16u);
  // On the torus S stays the last hop: 1 to 13 = (row 1, col 5) goes west
  // along row 0, then down.
  Topology t = make_torus(2, 8);
  RouteTable ts = build_routes(t, RoutingPolicy::RingSplit);
  EXPECT_EQ(route_path(t, ts, 1, 13), (std::vector<unsigned>{1, 0, 7, 6, 5, 13}));
  EXPECT_EQ(route_path(t, ts, 0, 12), (std::vector<unsigned>{0, 1, 2, 3, 4, 12}));
}

TEST(RoutingPolicies, RoutePathGuardsAgainstLoops) {
  Topology r = make_ring(4);
  RouteTable routes = build_routes(r, RoutingPolicy::RingFirst);
  routes[1][2] = P2_PORT_W;  // back to 0, which sends it to 1 again
  EXPECT_THROW(route_path(r, routes, 0, 2), std::logic_error);
  routes[1][2] = P2_PORT_S;  // not cabled
  EXPECT_THROW(route_path(r, routes, 0, 2), std::logic_error);
  EXPECT_THROW(route_path(r, routes, 0, 9), std::logic_error);
}

// Nodes no cable path joins (another PEACH2 network) get no route, both
// ways; route_path refuses to follow one.
TEST(RoutingPolicies, DisconnectedNodesHaveNoRoute) {
  Topology t = make_ring(4);
  t.links.pop_back();  // still a line: fine
  RouteTable line = build_routes(t, RoutingPolicy::Balanced);
  EXPECT_EQ(route_path(t, line, 0, 3), (std::vector<unsigned>{0, 1, 2, 3}));
  t.links.pop_back();  // now node 3 is cut off
  for (RoutingPolicy policy : all_routing_policies()) {
    RouteTable routes = build_routes(t, policy);
    for (unsigned u = 0; u < 3; ++u) {
      EXPECT_EQ(routes[u][3], kNoRoute) << u;
      EXPECT_EQ(routes[3][u], kNoRoute) << u;
    }
    EXPECT_EQ(routes[3][3], P2_PORT_N);
    EXPECT_EQ(route_path(t, routes, 0, 2), (std::vector<unsigned>{0, 1, 2}));
    EXPECT_THROW(route_path(t, routes, 0, 3), std::logic_error);
  }
}

}  // namespace
}  // namespace p2
