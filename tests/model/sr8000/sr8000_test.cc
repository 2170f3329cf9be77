// SR8000 model: remote DMA through the NIA and the crossbars (golden times,
// the cheaper re-kick of an unchanged TCW, link bandwidth, routes in
// dimension order), TCWs the NIA refuses and shapes the topology refuses.
// The hardware barrier and broadcast: sr8000_collectives_test.cc.
#include <cstdio>
#include <fstream>

#include <unistd.h>

#include "sr8000_harness.h"

namespace p2 {
namespace {

using namespace sr8000_test;

TEST(Sr8000, GoldenEightByteRemoteDma) {
  // Calibration: 8 B from the kick to the data visible at the far corner of
  // the 2x8 partition (x then y: 4 links, 2 crossbars, 1 router) = 5.000 us,
  // the published "about 5 us"; on one crossbar 2 links and 1 crossbar less.
  // The flag is written once the data's write has completed: 0.5 us
  // (sr8000_mem_write_latency_ns) after the data.
  Times far{}, same_row{}, same_col{};
  with_sr8000("2 8", [&](Sr& s) {
    s.map_areas();
    far = warm_write(s, 15, 1);
    same_row = warm_write(s, 1, 2);
    same_col = warm_write(s, 2, 3);
  });
  EXPECT_NEAR(far.data, 5.0, 1e-7);
  EXPECT_NEAR(same_row.data, 3.686, 1e-7);
  EXPECT_NEAR(same_col.data, 3.686, 1e-7);
  EXPECT_NEAR(far.flag, 5.5, 1e-7);
  EXPECT_NEAR(same_row.flag, 4.186, 1e-7);
  EXPECT_NEAR(same_col.flag, 4.186, 1e-7);
}

// Dimension order in 3D: x, then y, then z, turning at the node where the
// coordinates fixed so far meet the destination's; each further dimension
// adds two links, a crossbar and a router (1.314 us for 8 B, as x to y in 2D).
TEST(Sr8000, RoutesGoXThenYThenZ) {
  std::vector<std::string> corner, up, row;
  Times far{}, plane{};
  with_sr8000("8 8 8", [&](Sr& s) {
    auto& net = dynamic_cast<Sr8000Network&>(s.cluster().network(0));
    for (const SrLink* l : net.route(0, 511)) corner.push_back(l->name());
    for (const SrLink* l : net.route(9, 9 + 64 * 5)) up.push_back(l->name());
    for (const SrLink* l : net.route(130, 135)) row.push_back(l->name());
    s.map_areas();
    far = warm_write(s, 511, 1);
    plane = warm_write(s, 64, 2);
  });
  EXPECT_EQ(corner, (std::vector<std::string>{"node0_to_xbar_x", "xbar_x_to_node7", "node7_to_xbar_y",
                                              "xbar_y_to_node63", "node63_to_xbar_z", "xbar_z_to_node511"}));
  EXPECT_EQ(up, (std::vector<std::string>{"node9_to_xbar_z", "xbar_z_to_node329"}));
  EXPECT_EQ(row, (std::vector<std::string>{"node130_to_xbar_x", "xbar_x_to_node135"}));
  EXPECT_NEAR(far.data, 5.0 + 1.314, 1e-7);
  EXPECT_NEAR(plane.data, 3.686, 1e-7);
  EXPECT_NEAR(far.flag, far.data + 0.5, 1e-7);
}

TEST(Sr8000, RemoteWriteIsDoneWhenTheDestinationAcknowledgesIt) {
  // The TCW's status comes back with the destination's acknowledgement: it
  // leaves 0.2 us (sr8000_packet_setup_ns) after the data is in memory, a
  // header-only packet on the reverse route, and the status is visible
  // 0.5 us (sr8000_mem_write_latency_ns) after it arrived. Same row: 2 links
  // (32 B + 250 ns each) and a crossbar (500), 1.064 us: 3.686 + 0.2 +
  // 1.064 + 0.5 = 5.450 us. Far corner: 4 links, 2 crossbars, a router,
  // 2.378 us: 5.000 + 0.2 + 2.378 + 0.5 = 8.078 us. A broadcast and a write
  // to the node itself are done when their last packet left (no ack).
  Times far{}, same_row{}, self{};
  uint64_t acks = 0;
  with_sr8000("2 8", [&](Sr& s) {
    s.map_areas();
    same_row = warm_write(s, 1, 1);
    far = warm_write(s, 15, 2);
    self = warm_write(s, 0, 3);
    auto& net = dynamic_cast<Sr8000Network&>(s.cluster().network(0));
    acks = net.nia(0).stats().acks_received;
  });
  EXPECT_NEAR(same_row.status, 5.45, 1e-7);
  EXPECT_NEAR(far.status, 8.078, 1e-7);
  EXPECT_LT(self.status, self.flag);
  EXPECT_EQ(acks, 4u);
}

TEST(Sr8000, ReusedTcwIsCheaperThanModified) {
  double modified = 0, reused = 0;
  uint64_t kicks = 0, hits = 0;
  with_sr8000("8 1", [&](Sr& s) {
    s.map_areas();
    put(s, 0, 0, 1, 0, 0, 8, 1, 1);
    modified = one_way_us(s, 0, 1, 1);
    s.tcw(0, 0)->flag_value = 2;  // the same TCW, unchanged otherwise...
    s.tcw(0, 0)->version = 2;     // ...but modified: a new version
    one_way_us(s, 0, 1, 2);
    reused = one_way_us(s, 0, 1, 2);
    kicks = s.peek(0, SR_REG_KICKS);
    hits = s.peek(0, SR_REG_KICKS_REUSED);
  });
  // sr8000_kick_modified_ns - sr8000_kick_reuse_ns = 1500 - 300.
  EXPECT_NEAR(modified - reused, 1.2, 1e-9);
  EXPECT_EQ(kicks, 3u);
  EXPECT_EQ(hits, 1u);
}

TEST(Sr8000, LinkBandwidthBoundsLargeTransfers) {
  // 16 MiB in 4 KiB packets with 32 B headers: the link's 1000 MB/s times
  // 4096 / 4128 once the pipeline is full.
  const uint64_t size = 16ull << 20;
  double us = 0;
  bool right = true;
  with_sr8000("8 1", [&](Sr& s) {
    s.map_areas();
    uint8_t* src = s.mem(0, 0, size);
    for (uint64_t i = 0; i < size; ++i) src[i] = static_cast<uint8_t>(i * 7 + (i >> 12));
    put(s, 0, 0, 3, 0, 32ull << 20, size, 9, 1);
    us = one_way_us(s, 0, 3, 9);
    right = std::memcmp(s.mem(3, 32ull << 20, size), src, size) == 0;
  });
  EXPECT_TRUE(right);
  const double mbps = static_cast<double>(size) / us;
  EXPECT_GT(mbps, 1000.0 * 4096 / 4128 * 0.995);
  EXPECT_LT(mbps, 1000.0 * 4096 / 4128);
}

TEST(Sr8000, ContendingSendersShareTheDestinationLink) {
  // Nodes 1 and 2 each send 1 MiB to node 0 at once: node 0's down link
  // carries both, so the pair takes twice as long as one alone.
  const uint64_t size = 1ull << 20;
  double alone = 0, both = 0;
  with_sr8000("8 1", [&](Sr& s) {
    s.map_areas();
    put(s, 1, 0, 0, 0, 0, size, 1, 1);
    alone = one_way_us(s, 1, 0, 1);
    put(s, 1, 0, 0, 0, 0, size, 2, 2);
    put(s, 2, 0, 0, 0, size, size, 3, 3);
    std::memset(s.mem(0, kFlags, 8), 0, 8);
    const double t0 = s.now_us();
    s.kick(1, 0);
    s.kick(2, 0);
    // The later of the two flags (the flag word is shared: the last written
    // is the one that finished last).
    s.until([&] { return s.flag(0, 0) == 2 || s.flag(0, 0) == 3; });
    uint64_t first = s.flag(0, 0);
    s.until([&] { return s.flag(0, 0) == 5 - first; });
    both = s.now_us() - t0;
    s.wait_status(1, 0);
    s.wait_status(2, 0);
  });
  EXPECT_GT(both, 1.9 * alone);
  EXPECT_LT(both, 2.1 * alone);
}

TEST(Sr8000, FullInputBuffersBackPressureTheSenders) {
  // Input buffers of one packet: three nodes sending 256 KiB each to node 0
  // at once fill the crossbar's inputs, so the senders' own links wait for
  // credits (with room to spare they never wait: nothing else uses them).
  // Every byte still lands. With room for one packet, node 0's link cannot
  // pipeline either: each packet waits until the one before is written.
  const uint64_t size = 256 << 10;
  Params params;
  params.sr8000_rx_buffer_bytes = 4096 + 32;
  double us = 0;
  bool right = true;
  double sender_wait_us = 0;
  with_sr8000("8 1", [&](Sr& s) {
    s.map_areas();
    for (unsigned n = 1; n <= 3; ++n) {
      for (uint64_t i = 0; i < size; ++i) s.mem(n, 0, size)[i] = static_cast<uint8_t>(i * n + n);
      put(s, n, 0, 0, 0, n * size, size, n, 1);
      s.tcw(n, 0)->flag_offset = 8 * n;
      std::memset(s.mem(0, kFlags + 8 * n, 8), 0, 8);
    }
    const double t0 = s.now_us();
    for (unsigned n = 1; n <= 3; ++n) s.kick(n, 0);
    s.until([&] { return s.flag(0, 1) == 1 && s.flag(0, 2) == 2 && s.flag(0, 3) == 3; });
    us = s.now_us() - t0;
    for (unsigned n = 1; n <= 3; ++n)
      right &= std::memcmp(s.mem(0, n * size, size), s.mem(n, 0, size), size) == 0;
    auto& net = dynamic_cast<Sr8000Network&>(s.cluster().network(0));
    for (const SrLink* l : net.all_links())
      if (l->name() == "node2_to_xbar_x") sender_wait_us = l->stats().wait.to_seconds() * 1e6;
  }, params);
  EXPECT_TRUE(right);
  EXPECT_GT(sender_wait_us, 100.0);
  // 192 packets into node 0, each clocked (4.128 us), on the wire (0.25) and
  // written (0.912 + 0.5) before the next may start: 5.79 us each.
  const double per_packet = 4.128 + 0.25 + 0.912 + 0.5;
  EXPECT_GT(us, 192 * per_packet);
  EXPECT_LT(us, 192 * per_packet * 1.01);
}

TEST(Sr8000, RefusedTransfersMoveNothing) {
  uint64_t bad_node = 0, bad_src = 0, bad_flags = 0, bcast_no_group = 0, errors = 0;
  uint64_t flag_after = 1;
  bool untouched = false;
  with_sr8000("8 1", [&](Sr& s) {
    s.map_areas();
    put(s, 0, 0, 8, 0, 0, 8, 1, 1);  // node 8 of an 8-node machine
    s.kick(0, 0);
    bad_node = s.wait_status(0, 0);
    put(s, 0, 1, 1, 0, 0, 1ull << 40, 1, 1);  // source beyond node memory
    s.kick(0, 1);
    bad_src = s.wait_status(0, 1);
    put(s, 0, 2, 1, 0, 0, 8, 1, 1);
    s.tcw(0, 2)->flags = 0x80;
    s.kick(0, 2);
    bad_flags = s.wait_status(0, 2);
    put(s, 0, 3, 0, 0, 0, 8, 0, 1);
    s.tcw(0, 3)->flags = 0;
    s.kick(0, 3, true);  // broadcast on a colour with no group
    bcast_no_group = s.wait_status(0, 3);
    // Past the end of area 0 at node 1: the receiving NIA drops it, and the
    // flag that would follow never comes.
    std::memset(s.mem(1, kFlags, 8), 0, 8);
    std::memset(s.mem(1, kArea0 - 8, 8), 0x5a, 8);
    put(s, 0, 4, 1, 0, kArea0 - 8, 16, 7, 1);
    s.kick(0, 4);
    s.wait_status(0, 4);
    s.pause_us(10);
    flag_after = s.flag(1, 0);
    errors = s.peek(1, SR_REG_ERRORS);
    untouched = s.mem(1, kArea0 - 8, 1)[0] == 0x5a;
  });
  EXPECT_EQ(bad_node, SR_TCW_DONE | SR_ERR_NODE);
  EXPECT_EQ(bad_src, SR_TCW_DONE | SR_ERR_SRC);
  EXPECT_EQ(bad_flags, SR_TCW_DONE | SR_ERR_TCW_FLAGS);
  EXPECT_EQ(bcast_no_group, SR_TCW_DONE | SR_ERR_GROUP_UNSET);
  EXPECT_EQ(flag_after, 0u);
  EXPECT_EQ(errors, 1u);
  EXPECT_TRUE(untouched);
}

// Issue 18: a rule broken by the parameter file names its line, not the
// topology's `device sr8000` line.
TEST(Sr8000, RulesBlameTheParameterFileLine) {
  char path[] = "/tmp/p2sr8000-XXXXXX";
  int fd = mkstemp(path);
  ASSERT_GE(fd, 0);
  close(fd);
  std::ofstream(path) << "sr8000_link_mbps = 2000\nsr8000_packet_bytes = 65536\n";
  Params p;
  load_params_file(p, path);
  Topology topo = parse_topology("name x\ndevice sr8000\ncrossbar 8 1\n", "t.topo", p);
  std::string what;
  try {
    Cluster c(topo, p, RoutingPolicy::RingFirst);
  } catch (const ConfigError& e) {
    what = e.what();
  }
  std::remove(path);
  EXPECT_EQ(what, std::string(path) + ":2: sr8000_rx_buffer_bytes = 16384 cannot hold one packet of "
                                      "sr8000_packet_header_bytes + sr8000_packet_bytes = 65568 bytes");
}

TEST(Sr8000, ShapeMustFitTheMachine) {
  Params p;
  Topology topo = parse_topology("nodes 16\ndevice sr8000\n", "t.topo", p);
  try {
    Cluster c(topo, p, RoutingPolicy::RingFirst);
    FAIL() << "16 nodes without a crossbar line were accepted";
  } catch (const ConfigError& e) {
    EXPECT_STREQ(e.what(), "t.topo:2: device sr8000 with 16 nodes needs a 'crossbar X Y [Z]' line (one crossbar serves at most 8)");
  }
  try {
    parse_topology("device sr8000\ncrossbar 9 1\n", "t.topo", p);
    FAIL();
  } catch (const ConfigError& e) {
    EXPECT_STREQ(e.what(), "t.topo:2: crossbar 9 1: an SR8000 crossbar has 8 ports, so X, Y and Z must be in 1..8");
  }
  const std::pair<const char*, const char*> bad_3d[] = {
      {"device sr8000\ncrossbar 8 8 9\n",
       "t.topo:2: crossbar 8 8 9: an SR8000 crossbar has 8 ports, so X, Y and Z must be in 1..8"},
      {"device sr8000\ncrossbar 4 8 2\n",
       "t.topo:2: crossbar 4 8 2: a third dimension (Z > 1) joins full 8 x 8 planes, so X and Y must be 8"},
      {"device sr8000\ncrossbar 8 8 2 1\n", "t.topo:2: expected 'crossbar X Y' or 'crossbar X Y Z'"},
      {"device sr8000\ncrossbar 8 8 two\n", "t.topo:2: bad number 'two' for planes"},
      {"nodes 200\ndevice sr8000\ncrossbar 8 8 4\n",
       "t.topo:3: crossbar 8 8 4 has 256 nodes but 'nodes' on line 1 says 200"},
      {"nodes 600\ndevice sr8000\n", "t.topo:1: node count 600 out of range (1..64; 1..512 with 'device sr8000' alone)"},
      {"nodes 128\n",
       "t.topo:1: 128 nodes: PEACH2 and InfiniBand clusters have at most 64; only an SR8000 ('device "
       "sr8000' alone) has up to 512"},
      {"device sr8000\ndevice ib\ncrossbar 8 8 2\n",
       "t.topo:3: 128 nodes: PEACH2 and InfiniBand clusters have at most 64; only an SR8000 ('device "
       "sr8000' alone) has up to 512"},
  };
  for (const auto& [text, message] : bad_3d) {
    try {
      parse_topology(text, "t.topo", p);
      ADD_FAILURE() << "accepted: " << text;
    } catch (const ConfigError& e) {
      EXPECT_STREQ(e.what(), message) << text;
    }
  }
  try {
    parse_topology("nodes 10\ndevice sr8000\ncrossbar 2 8\n", "t.topo", p);
    FAIL();
  } catch (const ConfigError& e) {
    EXPECT_STREQ(e.what(), "t.topo:3: crossbar 2 8 has 16 nodes but 'nodes' on line 1 says 10");
  }
}

}  // namespace
}  // namespace p2
