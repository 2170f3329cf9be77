#include <gtest/gtest.h>

#include <fstream>
#include <sstream>

#include "harness.h"

namespace p2::test {
namespace {

std::string slurp(const std::string& path) {
  std::ifstream in(path);
  std::stringstream s;
  s << in.rdbuf();
  return s.str();
}

size_t count(const std::string& text, const std::string& what) {
  size_t n = 0;
  for (size_t at = text.find(what); at != std::string::npos; at = text.find(what, at + 1)) ++n;
  return n;
}

TEST(Trace, EveryTlpOnEveryWireIsOneEvent) {
  const std::string path = "/tmp/p2-trace-test-" + std::to_string(getpid()) + ".json";
  uint64_t tlps_sent = 0;
  {
    Cluster cluster(make_ring(4), Params{}, RoutingPolicy::RingFirst);
    cluster.enable_trace(path);
    Driver driver("driver", cluster, [&](Driver& d) {
      d.put_desc(host_addr(0, 0x1000), desc(host_addr(0, 0x10000), host_addr(2, 0x20000), 3000));
      d.start_chain(0, 0, host_addr(0, 0x1000));
      d.wait_until([&] { return cluster.host(2).stats().write_bytes == 3000; });
      sc_core::sc_stop();
    });
    sc_core::sc_start();
    for (PcieLink* l : cluster.links()) tlps_sent += l->end_a().tx_stats().tlps + l->end_b().tx_stats().tlps;
    cluster.finish_trace();
  }
  std::string trace = slurp(path);
  std::remove(path.c_str());
  ASSERT_EQ(trace.rfind("{\"displayTimeUnit\":\"ns\",\"traceEvents\":[", 0), 0u);
  EXPECT_EQ(trace.substr(trace.size() - 4), "\n]}\n");
  EXPECT_EQ(count(trace, "\"ph\":\"X\""), tlps_sent);
  // 3000 bytes leave node 0 as 12 MWr of at most 256 bytes, over two cables
  // and node 2's slot: 36 MWr events of data, besides descriptor and reads.
  EXPECT_EQ(count(trace, "\"name\":\"MWr 256\""), 11u * 3);
  EXPECT_EQ(count(trace, "\"name\":\"MWr 184\""), 1u * 3);
}

TEST(Stats, JsonCountsBytesPerLinkAndDescriptorLatency) {
  with_cluster(make_ring(2), Params{}, [](Driver& d) {
    d.put_desc(host_addr(0, 0x1000), desc(host_addr(0, 0x10000), host_addr(1, 0x20000), 4096));
    d.start_chain(0, 0, host_addr(0, 0x1000));
    d.wait_until([&] { return d.cluster().host(1).stats().write_bytes == 4096; });
    std::ostringstream json, table;
    d.cluster().write_stats_json(json);
    d.cluster().write_stats_table(table);
    EXPECT_NE(json.str().find("\"descriptors\": 1"), std::string::npos) << json.str();
    EXPECT_NE(json.str().find("\"write_bytes\": 4096"), std::string::npos);
    EXPECT_NE(table.str().find("link port (transmitting)"), std::string::npos);
    uint64_t payload = 0;
    for (PcieLink* l : d.cluster().links())
      payload += l->end_a().tx_stats().payload_bytes + l->end_b().tx_stats().payload_bytes;
    // The data crosses three wires: node 0's slot (read completions, plus the
    // 64-byte descriptor and two 8-byte register stores), the cable, and node
    // 1's slot.
    EXPECT_EQ(payload, 3u * 4096 + 64 + 2 * 8);
  });
}

}  // namespace
}  // namespace p2::test
