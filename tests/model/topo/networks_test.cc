// Several PEACH2 networks in one topology (sub-clusters that no cable joins,
// as HA-PACS/TCA's four 2x8 tori): the `networks` line, generators placed
// with at=, the numbering of the networks, their routes (none between them),
// the shipped hapacs-tca-64.topo, and the exact message of every malformed
// input. Depends on topo (topology.h) only.
#include <gtest/gtest.h>

#include <set>

#include "topo/topology.h"
#include "topo_test_util.h"

namespace p2 {
namespace {

using topotest::source_path;
using topotest::torus2_hops;

Topology parse(const std::string& text) { return parse_topology(text, "t.topo", Params()); }

std::string error_of(const std::string& text) {
  try {
    parse(text);
  } catch (const ConfigError& e) {
    return e.what();
  }
  return "";
}

// The links as "a-b" text with every node number shifted by -base.
std::set<std::string> links_from(const Topology& t, unsigned base, unsigned count) {
  std::set<std::string> s;
  for (const TopoLink& l : t.links)
    if (l.a.node >= base && l.a.node < base + count)
      s.insert(port_ref_name({l.a.node - base, l.a.port}) + "-" + port_ref_name({l.b.node - base, l.b.port}));
  return s;
}

TEST(TopologyNetworks, ShippedHapacs64IsFourTwoByEightToriOnInfiniBand) {
  Topology t = load_topology(source_path("topologies/hapacs-tca-64.topo"), Params());
  EXPECT_EQ(t.nodes, 64u);
  EXPECT_EQ(t.networks, 4u);
  ASSERT_EQ(t.network.size(), 64u);
  for (unsigned n = 0; n < 64; ++n) EXPECT_EQ(t.network[n], n / 16) << n;
  ASSERT_EQ(t.devices.size(), 2u);
  EXPECT_EQ(t.devices[0].kind, "peach2");
  EXPECT_EQ(t.devices[1].kind, "ib");
  // Each sub-cluster is hapacs-tca-2x8.topo's torus, moved to its nodes.
  Topology one = make_torus(2, 8);
  EXPECT_EQ(t.links.size(), 4 * one.links.size());
  for (unsigned k = 0; k < 4; ++k) EXPECT_EQ(links_from(t, 16 * k, 16), links_from(one, 0, 16)) << k;
  for (const TopoLink& l : t.links) EXPECT_EQ(l.a.node / 16, l.b.node / 16);
}

TEST(TopologyNetworks, RoutesStayInsideEachNetwork) {
  Topology t = load_topology(source_path("topologies/hapacs-tca-64.topo"), Params());
  Topology one = make_torus(2, 8);
  for (RoutingPolicy policy : all_routing_policies()) {
    SCOPED_TRACE(routing_policy_name(policy));
    RouteTable routes = build_routes(t, policy), ref = build_routes(one, policy);
    for (unsigned u = 0; u < 64; ++u)
      for (unsigned d = 0; d < 64; ++d) {
        if (u / 16 != d / 16) {
          EXPECT_EQ(routes[u][d], kNoRoute) << u << "->" << d;
          EXPECT_EQ(t.hop_distance(u, d), ~0u);
          continue;
        }
        // The same tables as one 2x8 torus (node parity, which ring-split
        // reads, is kept by the shift of 16); balanced spreads by the
        // cluster's node numbers (u + d), so only its lengths are the same.
        if (policy != RoutingPolicy::Balanced) {
          EXPECT_EQ(routes[u][d], ref[u % 16][d % 16]) << u << "->" << d;
        }
        EXPECT_EQ(route_path(t, routes, u, d).size() - 1, torus2_hops(8, u % 16, d % 16));
      }
  }
}

TEST(TopologyNetworks, NumberedByLowestNode) {
  // Hand-written links: {0, 2} and {1, 3}; network 0 holds node 0.
  Topology t = parse("nodes 4\nnetworks 2\nlink 1.E 3.W\nlink 0.E 2.W\n");
  EXPECT_EQ(t.networks, 2u);
  EXPECT_EQ(t.network, (std::vector<unsigned>{0, 1, 0, 1}));
  // A board without cables is a network of its own.
  Topology lone = parse("nodes 3\nnetworks 2\nlink 0.E 1.W\n");
  EXPECT_EQ(lone.network, (std::vector<unsigned>{0, 0, 1}));
  // A generator placed with at= lays out its nodes from there; its cables'
  // parameters apply to its cables only.
  Topology mixed = parse("nodes 24\nnetworks 2\nring 8 at=16 cable_m=2\ntorus 2 8 at=0\n");
  EXPECT_EQ(mixed.networks, 2u);
  for (unsigned n = 0; n < 24; ++n) EXPECT_EQ(mixed.network[n], n < 16 ? 0u : 1u) << n;
  const TopoLink* ring = mixed.link_at({16, P2_PORT_E});
  ASSERT_NE(ring, nullptr);
  EXPECT_EQ(ring->b, (PortRef{16, P2_PORT_E}));
  EXPECT_EQ(ring->a, (PortRef{17, P2_PORT_W}));
  EXPECT_EQ(ring->line, 3);
  EXPECT_EQ(mixed.link_params(*ring, Params()).cable_m, 2.0);
  EXPECT_EQ(mixed.link_params(*mixed.link_at({0, P2_PORT_E}), Params()).cable_m, 1.0);
  EXPECT_EQ(mixed.link_at({23, P2_PORT_E})->a, (PortRef{16, P2_PORT_W}));
}

TEST(TopologyNetworks, OneNetworkFilesAndOtherDevices) {
  Topology t = load_topology(source_path("topologies/hapacs-tca-2x8.topo"), Params());
  EXPECT_EQ(t.networks, 1u);
  EXPECT_EQ(t.network, std::vector<unsigned>(16, 0));
  // `at=0` on a generator that fills the cluster is the generator without it.
  Topology at0 = parse("nodes 16\ntorus 2 8 at=0\n");
  EXPECT_EQ(links_from(at0, 0, 16), links_from(t, 0, 16));
  EXPECT_EQ(parse("nodes 4\nnetworks 1\nring 4\n").networks, 1u);
  // No PEACH2 cabling: no PEACH2 networks.
  Topology sr = load_topology(source_path("topologies/sr8000-2x8.topo"), Params());
  EXPECT_EQ(sr.networks, 0u);
  EXPECT_TRUE(sr.network.empty());
  EXPECT_EQ(peach2_networks(make_ring(4)), std::vector<unsigned>(4, 0));
}

struct BadCase {
  const char* what;
  const char* text;
  const char* message;
};

const BadCase kBad[] = {
    {"two networks, no networks line", "nodes 32\ntorus 2 8 at=0\ntorus 2 8 at=16\n",
     "t.topo: node 16 is not connected to node 0 (a file whose cables form several PEACH2 networks says "
     "how many with 'networks K')"},
    {"fewer networks than declared", "nodes 32\nnetworks 3\ntorus 2 8 at=0\ntorus 2 8 at=16\n",
     "t.topo:2: the cables form 2 PEACH2 networks (nodes 0-15; 16-31), not 3"},
    {"more networks than declared", "nodes 4\nnetworks 1\nlink 0.E 2.W\nlink 1.E 3.W\n",
     "t.topo:2: the cables form 2 PEACH2 networks (nodes 0, 2; 1, 3), not 1"},
    {"one network declared as two", "# x\nnetworks 2\nring 4\n",
     "t.topo:2: the cables form 1 PEACH2 network (nodes 0-3), not 2"},
    {"at without nodes", "torus 2 8 at=0\n",
     "t.topo:1: torus 2x8 at=0: give 'nodes N' first (a generator placed with at= does not set the node "
     "count)"},
    {"at past the nodes", "nodes 20\ntorus 2 8 at=8\n",
     "t.topo:2: torus 2x8 at=8 needs nodes 8..23, but 'nodes' on line 1 gives 0..19"},
    {"at beyond the last node", "nodes 8\nring 4 at=8\n",
     "t.topo:2: ring 4 at=8 needs nodes 8..11, but 'nodes' on line 1 gives 0..7"},
    {"at twice", "nodes 32\nring 8 at=0 at=8\n", "t.topo:2: at= is given twice"},
    {"at not a number", "nodes 8\nring 8 at=x\n", "t.topo:2: bad number 'x' for at= (the generator's first node)"},
    {"generators overlap", "nodes 16\nnetworks 2\ntorus 2 4 at=0\nring 8 at=4\n",
     "t.topo:4: port 4.E is already cabled on line 3"},
    {"networks twice", "nodes 4\nnetworks 1\nnetworks 1\nring 4\n", "t.topo:3: networks is already given on line 2"},
    {"networks zero", "networks 0\nring 4\n", "t.topo:1: network count 0 out of range (1..64)"},
    {"networks too many", "networks 65\nring 4\n", "t.topo:1: network count 65 out of range (1..64)"},
    {"networks arity", "networks\nring 4\n", "t.topo:1: expected 'networks K'"},
    {"networks not a number", "networks four\nring 4\n", "t.topo:1: bad number 'four' for the network count"},
    {"networks without PEACH2", "device sr8000\nnetworks 1\ncrossbar 2 2\n",
     "t.topo:2: 'networks' counts PEACH2 networks, but no 'device peach2' line gives the nodes a PEACH2 board"},
};

void PrintTo(const BadCase& c, std::ostream* os) { *os << c.what; }

class NetworkErrors : public ::testing::TestWithParam<BadCase> {};

TEST_P(NetworkErrors, NamesFileLineAndReason) {
  EXPECT_EQ(error_of(GetParam().text), GetParam().message) << "input:\n" << GetParam().text;
}

std::string case_name(const ::testing::TestParamInfo<BadCase>& info) {
  std::string s = info.param.what;
  for (char& c : s)
    if (!isalnum(static_cast<unsigned char>(c))) c = '_';
  return s;
}

INSTANTIATE_TEST_SUITE_P(All, NetworkErrors, ::testing::ValuesIn(kBad), case_name);

}  // namespace
}  // namespace p2
