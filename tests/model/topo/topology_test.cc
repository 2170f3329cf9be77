// Topology files and generators: structure, per-link overrides, and the exact
// message of every malformed input.
#include <gtest/gtest.h>

#include <set>

#include "topo/topology.h"
#include "topo_test_util.h"

namespace p2 {
namespace {

using topotest::source_path;
using topotest::TempFile;

// A link as comparable text, "a-b" with a the RC end.
std::set<std::string> link_set(const Topology& t) {
  std::set<std::string> s;
  for (const TopoLink& l : t.links) s.insert(port_ref_name(l.a) + "-" + port_ref_name(l.b));
  return s;
}

// The message of the ConfigError parsing `text` as "t.topo" throws, or "".
std::string error_of(const std::string& text) {
  Params base;
  try {
    parse_topology(text, "t.topo", base);
  } catch (const ConfigError& e) {
    return e.what();
  }
  return "";
}

double cable_of(const Topology& t, PortRef p, const Params& base = Params()) {
  const TopoLink* l = t.link_at(p);
  EXPECT_NE(l, nullptr) << port_ref_name(p);
  return l ? t.link_params(*l, base).cable_m : -1;
}

TEST(TopologyGenerate, Torus2x8HasRingsAndSLinks) {
  Topology t = make_torus(2, 8);
  EXPECT_EQ(t.nodes, 16u);
  EXPECT_EQ(t.file, "");
  ASSERT_EQ(t.links.size(), 24u);
  for (unsigned r = 0; r < 2; ++r)
    for (unsigned c = 0; c < 8; ++c) {
      unsigned n = r * 8 + c;
      // E of (r,c) to W of (r,c+1), the W end (RC) on side a.
      const TopoLink* e = t.link_at({n, P2_PORT_E});
      ASSERT_NE(e, nullptr);
      EXPECT_EQ(e->a, (PortRef{r * 8 + (c + 1) % 8, P2_PORT_W}));
      EXPECT_EQ(e->b, (PortRef{n, P2_PORT_E}));
      const TopoLink* s = t.link_at({n, P2_PORT_S});
      ASSERT_NE(s, nullptr);
      EXPECT_EQ(s->a, (PortRef{c, P2_PORT_S}));
      EXPECT_EQ(s->b, (PortRef{8 + c, P2_PORT_S}));
      EXPECT_EQ(t.link_at({n, P2_PORT_N}), nullptr);
      EXPECT_EQ(t.port_kind[n][P2_PORT_N], LinkEndKind::Endpoint);
      EXPECT_EQ(t.port_kind[n][P2_PORT_E], LinkEndKind::Endpoint);
      EXPECT_EQ(t.port_kind[n][P2_PORT_W], LinkEndKind::RootComplex);
      EXPECT_EQ(t.port_kind[n][P2_PORT_S], r == 0 ? LinkEndKind::RootComplex : LinkEndKind::Endpoint);
    }
  for (const TopoLink& l : t.links) {
    EXPECT_EQ(t.port_kind[l.a.node][l.a.port], LinkEndKind::RootComplex);
    EXPECT_EQ(t.port_kind[l.b.node][l.b.port], LinkEndKind::Endpoint);
    EXPECT_EQ(t.link_params(l, Params()).cable_m, 1.0);
    EXPECT_EQ(l.line, 0);
  }
}

TEST(TopologyGenerate, SmallRingsAndCableLength) {
  Topology r1 = make_ring(1);
  EXPECT_EQ(r1.nodes, 1u);
  EXPECT_TRUE(r1.links.empty());

  // A ring of 2 is two cables between the same two boards.
  Topology r2 = make_ring(2);
  EXPECT_EQ(link_set(r2), (std::set<std::string>{"1.W-0.E", "0.W-1.E"}));

  Topology t21 = make_torus(2, 1);
  EXPECT_EQ(link_set(t21), (std::set<std::string>{"0.S-1.S"}));

  Topology r8 = make_ring(8, 2.5);
  EXPECT_EQ(r8.links.size(), 8u);
  for (const TopoLink& l : r8.links) EXPECT_EQ(r8.link_params(l, Params()).cable_m, 2.5);
  EXPECT_EQ(r8.port_kind[3][P2_PORT_S], LinkEndKind::Endpoint);  // unused, unset

  EXPECT_THROW(make_torus(3, 4), ConfigError);
  EXPECT_THROW(make_ring(65), ConfigError);
  EXPECT_THROW(make_ring(0), ConfigError);
}

TEST(TopologyGenerate, HopDistance) {
  Topology t = make_torus(2, 8);
  EXPECT_EQ(t.hop_distance(0, 0), 0u);
  EXPECT_EQ(t.hop_distance(0, 8), 1u);
  EXPECT_EQ(t.hop_distance(0, 4), 4u);
  EXPECT_EQ(t.hop_distance(0, 12), 5u);
  EXPECT_EQ(t.hop_distance(1, 15), 3u);
  Topology r = make_ring(8);
  EXPECT_EQ(r.hop_distance(6, 1), 3u);
}

TEST(TopologyFile, HapacsFileIsTheGeneratedTorus) {
  Params base;
  Topology f = load_topology(source_path("topologies/hapacs-tca-2x8.topo"), base);
  Topology g = make_torus(2, 8);
  EXPECT_EQ(f.name, "HA-PACS/TCA 2x8");
  EXPECT_EQ(f.file, source_path("topologies/hapacs-tca-2x8.topo"));
  EXPECT_EQ(f.nodes, 16u);
  EXPECT_EQ(link_set(f), link_set(g));
  EXPECT_EQ(f.port_kind, g.port_kind);
  for (const TopoLink& l : f.links) EXPECT_EQ(f.link_params(l, base).cable_m, 1.0);
}

TEST(TopologyFile, TcaminiFileIsTheGeneratedRing) {
  Topology f = load_topology(source_path("topologies/tcamini-ring8.topo"), Params());
  Topology g = make_ring(8);
  EXPECT_EQ(f.nodes, 8u);
  EXPECT_NE(f.name.find("TCAMINI"), std::string::npos);
  EXPECT_EQ(link_set(f), link_set(g));
  EXPECT_EQ(f.port_kind, g.port_kind);
}

TEST(TopologyFile, ExplicitRingWithOneLongCable) {
  Topology f = load_topology(source_path("topologies/ring4-explicit.topo"), Params());
  EXPECT_EQ(f.nodes, 4u);
  EXPECT_EQ(link_set(f), link_set(make_ring(4)));
  EXPECT_EQ(cable_of(f, {0, P2_PORT_E}), 1.0);
  EXPECT_EQ(cable_of(f, {1, P2_PORT_E}), 1.0);
  EXPECT_EQ(cable_of(f, {2, P2_PORT_E}), 1.0);
  EXPECT_EQ(cable_of(f, {3, P2_PORT_E}), 3.0);
  EXPECT_EQ(cable_of(f, {0, P2_PORT_W}), 3.0);  // the same cable, seen from its other end
}

TEST(TopologyFile, CommentsNamesAndLines) {
  Topology t = parse_topology(
      "# a comment\n"
      "\n"
      "name  two boards, twice   # trailing comment\n"
      "nodes 2\n"
      "   link 0.E 1.W\t# indented\n"
      "link 0.W 1.E\n",
      "t.topo", Params());
  EXPECT_EQ(t.name, "two boards, twice");
  EXPECT_EQ(t.file, "t.topo");
  ASSERT_EQ(t.links.size(), 2u);
  EXPECT_EQ(t.links[0].line, 5);
  EXPECT_EQ(t.links[0].a, (PortRef{1, P2_PORT_W}));  // a is always the RC end
  EXPECT_EQ(t.links[1].line, 6);
  EXPECT_EQ(t.links[1].a, (PortRef{0, P2_PORT_W}));
}

TEST(TopologyFile, SPortModes) {
  // Unset on both ends: the lower-numbered node's S is the RC.
  Topology t = parse_topology("nodes 2\nlink 1.S 0.S\n", "t.topo", Params());
  EXPECT_EQ(t.links[0].a, (PortRef{0, P2_PORT_S}));
  EXPECT_EQ(t.port_kind[0][P2_PORT_S], LinkEndKind::RootComplex);
  EXPECT_EQ(t.port_kind[1][P2_PORT_S], LinkEndKind::Endpoint);

  // sport decides.
  t = parse_topology("nodes 2\nsport 0 ep\nlink 0.S 1.S\n", "t.topo", Params());
  EXPECT_EQ(t.links[0].a, (PortRef{1, P2_PORT_S}));
  EXPECT_EQ(t.port_kind[0][P2_PORT_S], LinkEndKind::Endpoint);
  EXPECT_EQ(t.port_kind[1][P2_PORT_S], LinkEndKind::RootComplex);

  // An unset S takes the opposite of a fixed port.
  t = parse_topology("nodes 3\nlink 0.S 1.E\nlink 2.S 0.W\nlink 1.W 2.E\n", "t.topo", Params());
  EXPECT_EQ(t.port_kind[0][P2_PORT_S], LinkEndKind::RootComplex);
  EXPECT_EQ(t.port_kind[2][P2_PORT_S], LinkEndKind::Endpoint);

  // An unused S port with a sport keeps its mode.
  t = parse_topology("nodes 1\nsport 0 rc\n", "t.topo", Params());
  EXPECT_EQ(t.port_kind[0][P2_PORT_S], LinkEndKind::RootComplex);

  // sport before a generator flips which row holds the S RCs for that column.
  t = parse_topology("nodes 4\nsport 0 ep\ntorus 2 2\n", "t.topo", Params());
  EXPECT_EQ(t.link_at({0, P2_PORT_S})->a, (PortRef{2, P2_PORT_S}));
  EXPECT_EQ(t.link_at({1, P2_PORT_S})->a, (PortRef{1, P2_PORT_S}));
}

TEST(TopologyFile, DeviceLines) {
  Params base;
  // No `device` line: every node has a PEACH2 board.
  Topology plain = parse_topology("ring 4\n", "t.topo", base);
  ASSERT_EQ(plain.devices.size(), 1u);
  EXPECT_EQ(plain.devices[0].kind, "peach2");
  EXPECT_EQ(plain.devices[0].line, 0);
  Topology given = parse_topology("# boards\nring 4\ndevice peach2\n", "t.topo", base);
  ASSERT_EQ(given.devices.size(), 1u);
  EXPECT_EQ(given.devices[0].kind, "peach2");
  EXPECT_EQ(given.devices[0].line, 3);
}

TEST(TopologyOverrides, SetChangesOneLinkOnly) {
  Params base;
  base.link_latency_ns = 99;
  Topology t = parse_topology("torus 2 8\nset 0.E cable_m=3\n", "t.topo", base);
  const TopoLink* changed = t.link_at({0, P2_PORT_E});
  ASSERT_NE(changed, nullptr);
  for (const TopoLink& l : t.links) {
    Params p = t.link_params(l, base);
    EXPECT_EQ(p.cable_m, &l == changed ? 3.0 : 1.0) << port_ref_name(l.a);
    EXPECT_EQ(p.link_latency_ns, 99);  // untouched fields come from base
  }
  // One entry per name: the set replaced the generator's default.
  EXPECT_EQ(changed->overrides, (std::vector<std::pair<std::string, std::string>>{{"cable_m", "3"}}));
}

TEST(TopologyOverrides, LinkAndGeneratorOverrides) {
  Params base;
  Topology t = parse_topology(
      "nodes 3\n"
      "link 0.E 1.W pcie_lanes=4 link_latency_ns=150\n"
      "link 1.E 2.W cable_m=0.5\n"
      "link 2.E 0.W\n"
      "set 2.E max_payload_bytes=128\n",
      "t.topo", base);
  Params p0 = t.link_params(*t.link_at({0, P2_PORT_E}), base);
  EXPECT_EQ(p0.pcie_lanes, 4);
  EXPECT_EQ(p0.link_latency_ns, 150);
  EXPECT_EQ(p0.cable_m, 1.0);
  Params p1 = t.link_params(*t.link_at({1, P2_PORT_E}), base);
  EXPECT_EQ(p1.cable_m, 0.5);
  EXPECT_EQ(p1.pcie_lanes, base.pcie_lanes);
  Params p2 = t.link_params(*t.link_at({2, P2_PORT_E}), base);
  EXPECT_EQ(p2.max_payload_bytes, 128);
  EXPECT_EQ(p2.cable_m, 1.0);

  Topology r = parse_topology("ring 4 link_latency_ns=200\n", "t.topo", base);
  for (const TopoLink& l : r.links) {
    EXPECT_EQ(r.link_params(l, base).link_latency_ns, 200);
    EXPECT_EQ(r.link_params(l, base).cable_m, 1.0);
  }
}

struct BadCase {
  const char* what;
  const char* text;
  const char* message;
};

// Every malformed input, with the exact message a user sees.
const BadCase kBad[] = {
    {"unknown directive", "nodes 4\nfoo 1\n",
     "t.topo:2: unknown directive 'foo' (name, nodes, torus, ring, networks, sport, link, set, device, "
     "crossbar)"},
    {"bad node count", "nodes four\n", "t.topo:1: bad number 'four' for the node count"},
    {"unknown device", "ring 4\ndevice sr9000\n",
     "t.topo:2: unknown device 'sr9000' (known: peach2, ib, sr8000)"},
    {"device twice", "device peach2\nring 4\ndevice peach2\n",
     "t.topo:3: device 'peach2' is already given on line 1"},
    {"device arity", "ring 4\ndevice\n", "t.topo:2: expected 'device KIND'"},
    {"negative node count", "nodes -1\n", "t.topo:1: bad number '-1' for the node count"},
    {"node count zero", "nodes 0\n", "t.topo:1: node count 0 out of range (1..64; 1..512 with 'device sr8000' alone)"},
    {"node count too big", "nodes 65\n",
     "t.topo:1: 65 nodes: PEACH2 and InfiniBand clusters have at most 64; only an SR8000 ('device sr8000' alone) "
     "has up to 512"},
    {"node count past the SR8000", "nodes 513\n",
     "t.topo:1: node count 513 out of range (1..64; 1..512 with 'device sr8000' alone)"},
    {"nodes twice", "nodes 4\nnodes 4\n", "t.topo:2: nodes: the node count is already set on line 1"},
    {"nodes arity", "nodes 4 5\n", "t.topo:1: expected 'nodes N'"},
    {"bad node in port", "nodes 2\nlink x.E 1.W\n", "t.topo:2: bad number 'x' for a node"},
    {"port without dot", "nodes 2\nlink 0E 1.W\n", "t.topo:2: expected a port as NODE.PORT (e.g. 3.E), got '0E'"},
    {"node out of range", "nodes 4\nlink 0.E 4.W\n", "t.topo:2: node 4 out of range (nodes 0..3)"},
    {"unknown port", "nodes 2\nlink 0.X 1.W\n", "t.topo:2: unknown port 'X' in '0.X' (N, E, W or S)"},
    {"lower-case port", "nodes 2\nlink 0.e 1.W\n", "t.topo:2: unknown port 'e' in '0.e' (N, E, W or S)"},
    {"port used twice", "nodes 3\nlink 0.E 1.W\n\nlink 0.E 2.W\n",
     "t.topo:4: port 0.E is already cabled on line 2"},
    {"port used twice, second end", "nodes 3\nlink 0.E 1.W\nlink 2.E 1.W\n",
     "t.topo:3: port 1.W is already cabled on line 2"},
    {"port used by a generator", "torus 2 8\nlink 0.S 9.S\n", "t.topo:2: port 0.S is already cabled on line 1"},
    {"RC-RC", "nodes 2\nlink 0.W 1.W\n",
     "t.topo:2: link 0.W - 1.W joins two Root Complex ports; a link needs one Root Complex and one Endpoint"},
    {"EP-EP", "nodes 2\nlink 0.E 1.E\n",
     "t.topo:2: link 0.E - 1.E joins two Endpoint ports; a link needs one Root Complex and one Endpoint"},
    {"EP-EP by sport", "nodes 2\nsport 0 ep\nsport 1 ep\nlink 0.S 1.S\n",
     "t.topo:4: link 0.S - 1.S joins two Endpoint ports; a link needs one Root Complex and one Endpoint"},
    {"RC-RC by sport", "nodes 2\nsport 0 rc\nlink 0.S 1.W\n",
     "t.topo:3: link 0.S - 1.W joins two Root Complex ports; a link needs one Root Complex and one Endpoint"},
    {"self link", "nodes 2\nlink 1.E 1.W\n", "t.topo:2: link from node 1 to itself"},
    {"N cabled", "nodes 2\nlink 0.N 1.W\n",
     "t.topo:2: port 0.N is the host port and cannot be cabled (use E, W or S)"},
    {"N cabled, second end", "nodes 2\nlink 0.E 1.N\n",
     "t.topo:2: port 1.N is the host port and cannot be cabled (use E, W or S)"},
    {"set on unused port", "ring 2\nset 0.S cable_m=2\n", "t.topo:2: 'set' on port 0.S, which is not cabled"},
    {"set without values", "ring 2\nset 0.E\n", "t.topo:2: expected 'set A.P name=value ...'"},
    {"empty file", "# nothing\n\n",
     "t.topo: no node count: give 'nodes N' or a generator ('torus R C', 'ring N')"},
    {"link before nodes", "link 0.E 1.W\nnodes 2\n",
     "t.topo:1: 'link' before the node count: give 'nodes N' or a generator first"},
    {"set before nodes", "set 0.E cable_m=1\n",
     "t.topo:1: 'set' before the node count: give 'nodes N' or a generator first"},
    {"sport before nodes", "sport 0 rc\n",
     "t.topo:1: 'sport' before the node count: give 'nodes N' or a generator first"},
    {"disconnected node", "nodes 6\nlink 0.E 1.W\nlink 1.E 2.W\nlink 2.E 3.W\nlink 3.E 4.W\n",
     "t.topo: node 5 is not connected to node 0 (a file whose cables form several PEACH2 networks says how many with 'networks K')"},
    {"disconnected island", "nodes 4\nlink 0.E 1.W\nlink 2.E 3.W\n", 
     "t.topo: node 2 is not connected to node 0 (a file whose cables form several PEACH2 networks says how many with 'networks K')"},
    // Issue 18: said "node 1 is not connected to node 0" (the PEACH2 cabling
    // check) instead of what is missing.
    {"crossbar without its device", "crossbar 2 2\n",
     "t.topo:1: 'crossbar' joins SR8000 NIAs, but no 'device sr8000' line gives the nodes one; add "
     "'device sr8000'"},
    {"crossbar with another device", "device peach2\nring 4\ncrossbar 2 2\n",
     "t.topo:3: 'crossbar' joins SR8000 NIAs, but no 'device sr8000' line gives the nodes one; add "
     "'device sr8000'"},
    {"unknown parameter", "nodes 2\nlink 0.E 1.W bogus=1\n", "t.topo:2: unknown parameter 'bogus'"},
    {"chip parameter", "nodes 2\nlink 0.E 1.W chip_mhz=100\n",
     "t.topo:2: parameter 'chip_mhz' is a chip parameter and cannot be set here"},
    {"host parameter in set", "ring 2\nset 0.E host_read_latency_ns=1\n",
     "t.topo:2: parameter 'host_read_latency_ns' is a host parameter and cannot be set here"},
    {"generator parameter", "ring 4 output_queue_tlps=2\n",
     "t.topo:1: parameter 'output_queue_tlps' is a chip parameter and cannot be set here"},
    {"bad parameter value", "nodes 2\nlink 0.E 1.W cable_m=x\n",
     "t.topo:2: bad number 'x' for parameter 'cable_m'"},
    {"fractional integral parameter", "ring 2\nset 1.E pcie_lanes=2.5\n",
     "t.topo:2: parameter 'pcie_lanes' takes a whole number of lanes, not '2.5'"},
    {"override without =", "nodes 2\nlink 0.E 1.W cable_m\n", "t.topo:2: expected name=value, got 'cable_m'"},
    {"override without name", "nodes 2\nlink 0.E 1.W =3\n", "t.topo:2: expected name=value, got '=3'"},
    {"link arity", "nodes 2\nlink 0.E\n", "t.topo:2: expected 'link A.P B.Q [name=value ...]'"},
    {"torus rows", "torus 3 4\n", "t.topo:1: torus rows must be 1 or 2 (PEACH2 has one S port), not 3"},
    {"torus bad number", "torus 2 eight\n", "t.topo:1: bad number 'eight' for torus columns"},
    {"torus zero columns", "torus 2 0\n", "t.topo:1: torus needs at least 1 column"},
    {"torus too big", "torus 2 33\n", "t.topo:1: torus 2x33 has more than 64 nodes"},
    {"torus vs nodes", "nodes 8\n# the sub-cluster\ntorus 2 8\n",
     "t.topo:3: torus 2x8 has 16 nodes but 'nodes' on line 1 says 8 (place it with at=FIRST_NODE to lay "
     "out several networks)"},
    {"ring vs nodes", "nodes 4\nring 8\n",
     "t.topo:2: ring 8 has 8 nodes but 'nodes' on line 1 says 4 (place it with at=FIRST_NODE to lay out "
     "several networks)"},
    {"nodes after generator", "ring 8\nnodes 8\n", "t.topo:2: nodes: the node count is already set on line 1"},
    {"ring too big", "ring 65\n", "t.topo:1: ring 65 has more than 64 nodes"},
    {"sport mode", "nodes 2\nsport 0 root\n", "t.topo:2: sport mode must be 'rc' or 'ep', not 'root'"},
    {"sport node", "nodes 2\nsport 2 rc\n", "t.topo:2: node 2 out of range (nodes 0..1)"},
    {"sport twice", "nodes 2\nsport 0 rc\nsport 0 rc\n", "t.topo:3: sport for node 0 is already set on line 2"},
    {"sport after link", "nodes 2\nlink 0.S 1.S\nsport 1 rc\n",
     "t.topo:3: sport for node 1 comes after its S port was cabled on line 2; put 'sport' before the link"},
    {"name twice", "name a\nname b\nring 2\n", "t.topo:2: name is already given on line 1"},
    {"name empty", "name   \nring 2\n", "t.topo:1: 'name' needs a text"},
};

// Keeps ctest's test names readable (and free of pointer values).
void PrintTo(const BadCase& c, std::ostream* os) { *os << c.what; }

class TopologyErrors : public ::testing::TestWithParam<BadCase> {};

TEST_P(TopologyErrors, NamesFileLineAndReason) {
  EXPECT_EQ(error_of(GetParam().text), GetParam().message) << "input:\n" << GetParam().text;
}

std::string case_name(const ::testing::TestParamInfo<BadCase>& info) {
  std::string s = info.param.what;
  for (char& c : s)
    if (!isalnum(static_cast<unsigned char>(c))) c = '_';
  return s;
}

INSTANTIATE_TEST_SUITE_P(All, TopologyErrors, ::testing::ValuesIn(kBad), case_name);

TEST(TopologyFile, LoadNamesTheFileInErrors) {
  TempFile f("nodes 2\nlink 0.E 1.E\n");
  try {
    load_topology(f.path(), Params());
    FAIL() << "no error";
  } catch (const ConfigError& e) {
    EXPECT_EQ(e.file(), f.path());
    EXPECT_EQ(e.line(), 2);
    EXPECT_EQ(std::string(e.what()), f.path() + ":2: link 0.E - 1.E joins two Endpoint ports; a link needs one "
                                                "Root Complex and one Endpoint");
  }
  try {
    load_topology("/nonexistent/x.topo", Params());
    FAIL() << "no error";
  } catch (const ConfigError& e) {
    EXPECT_EQ(std::string(e.what()), "/nonexistent/x.topo: cannot open topology file: No such file or directory");
  }
}

TEST(TopologyFile, PortRefName) {
  EXPECT_EQ(port_ref_name({3, P2_PORT_E}), "3.E");
  EXPECT_EQ(port_ref_name({0, P2_PORT_N}), "0.N");
  EXPECT_EQ(port_ref_name({63, P2_PORT_S}), "63.S");
}

}  // namespace
}  // namespace p2
