// Cluster::summary(): TLPs created by the initiators and TLP hops over the
// links, as p2sim's --stats "summary" reports them (p2bench reads it).
#include <gtest/gtest.h>

#include <sstream>

#include "harness.h"

namespace p2::test {
namespace {

TEST(Summary, CountsTlpsCreatedAndHopsOfOneTransfer) {
  with_cluster(make_ring(2), Params{}, [](Driver& d) {
    d.put_desc(host_addr(0, 0x1000), desc(host_addr(0, 0x10000), host_addr(1, 0x20000), 4096));
    d.start_chain(0, 0, host_addr(0, 0x1000));
    d.wait_until([&] { return d.cluster().host(1).stats().write_bytes == 4096; });
    const ClusterSummary s = d.cluster().summary();
    // Created: host 0 sends 2 register stores, 1 completion of the 64-byte
    // descriptor and 32 data completions (8 reads of 512 bytes, 128 each);
    // DMAC 0 sends 1 descriptor read, 8 data reads and 16 writes of 256 bytes.
    EXPECT_EQ(s.tlps, 35u + 25u);
    // Hops: node 0's slot carries 35 down and 9 reads up; the 16 writes cross
    // the cable and node 1's slot.
    EXPECT_EQ(s.tlp_hops, 35u + 9u + 16u + 16u);
    EXPECT_EQ(s.simulated, sc_core::sc_time_stamp());
    uint64_t hops = 0;
    for (PcieLink* l : d.cluster().links())
      hops += l->end_a().tx_stats().tlps + l->end_b().tx_stats().tlps;
    EXPECT_EQ(s.tlp_hops, hops);

    std::ostringstream json;
    d.cluster().write_stats_json(json);
    EXPECT_EQ(json.str().find("{\n  \"summary\": {\"simulated_us\": "), 0u) << json.str();
    EXPECT_NE(json.str().find("\"tlps\": 60, \"tlp_hops\": 76}"), std::string::npos);
    ProcessStats process;
    process.wall_s = 2.0;
    process.peak_rss_kib = 1024;
    std::ostringstream with_process;
    d.cluster().write_stats_json(with_process, &process);
    EXPECT_NE(with_process.str().find("\"tlp_hops\": 76, \"wall_s\": 2, \"slowdown\": "),
              std::string::npos) << with_process.str();
    EXPECT_NE(with_process.str().find("\"tlp_hops_per_wall_s\": 38, \"peak_rss_kib\": 1024}"),
              std::string::npos);
  });
}

}  // namespace
}  // namespace p2::test
