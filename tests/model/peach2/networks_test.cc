// Two PEACH2 networks in one cluster (sub-clusters no cable joins): the
// boards' routing tables say P2_ROUTE_NONE for the other network's nodes, a
// DMA there fails before any byte moves (P2_ERR_DST_UNREACHABLE), and a PIO
// store or a read that gets there anyway is refused with a diagnosis, not
// routed. Depends on the model (harness.h) and topo.
#include <gtest/gtest.h>

#include "harness.h"
#include "peach2/pio_window.h"
#include "peach2/router.h"

namespace p2::test {
namespace {

// Nodes 0-1 and 2-3: two rings of 2.
Topology two_networks() {
  return parse_topology("nodes 4\nnetworks 2\nring 2 at=0\nring 2 at=2\n", "two.topo", Params());
}

TEST(Networks, RoutingTablesHaveNoRouteToTheOtherNetwork) {
  with_cluster(two_networks(), Params{}, [](Driver& d) {
    for (unsigned n = 0; n < 4; ++n)
      for (unsigned dest = 0; dest < 4; ++dest) {
        const uint64_t route = d.peek(n, P2_REG_ROUTE(dest));
        if (dest == n)
          EXPECT_EQ(route, static_cast<uint64_t>(P2_PORT_N));
        else if (n / 2 == dest / 2)
          EXPECT_TRUE(route == P2_PORT_E || route == P2_PORT_W) << n << "->" << dest;
        else
          EXPECT_EQ(route, static_cast<uint64_t>(P2_ROUTE_NONE)) << n << "->" << dest;
      }
  });
}

TEST(Networks, DmaToTheOtherNetworkFailsBeforeAnyByteMoves) {
  with_cluster(two_networks(), Params{}, [](Driver& d) {
    uint8_t* src = d.mem(host_addr(0, 0x10000), 256);
    fill_pattern(src, 256, 7);
    // Inside the network: delivered.
    d.put_desc(host_addr(0, 0x1000), desc(host_addr(0, 0x10000), host_addr(1, 0x20000), 256));
    d.start_chain(0, 0, host_addr(0, 0x1000));
    EXPECT_EQ(d.wait_channel(0, 0, 0), P2_DMA_IDLE);
    d.wait_until([&] { return d.cluster().host(1).stats().write_bytes >= 256; });
    EXPECT_EQ(0, std::memcmp(d.mem(host_addr(1, 0x20000), 256), src, 256));
    // To node 2, on the other network: refused, nothing reaches it.
    d.put_desc(host_addr(0, 0x1000), desc(host_addr(0, 0x10000), host_addr(2, 0x20000), 256));
    d.start_chain(0, 0, host_addr(0, 0x1000));
    EXPECT_EQ(d.wait_channel(0, 0, 1), P2_DMA_FAILED);
    EXPECT_EQ(d.peek(0, P2_REG_DMA(0, P2_DMA_ERROR)), static_cast<uint64_t>(P2_ERR_DST_UNREACHABLE));
    d.pass(sc_core::sc_time(10, sc_core::SC_US));
    EXPECT_EQ(d.cluster().host(2).stats().writes, 0u);
    EXPECT_EQ(d.cluster().host(3).stats().writes, 0u);
  });
}

TEST(Networks, PioAndReadsForTheOtherNetworkAreRefusedWithADiagnosis) {
  testing::internal::CaptureStderr();
  with_cluster(two_networks(), Params{}, [](Driver& d) {
    uint8_t v[16] = {9};
    d.cluster().host(0).pio_write(p2_node_base(0) + P2_PIO_OFFSET + p2_pio_offset(3, 0x100), v, 16);
    d.pass(sc_core::sc_time(10, sc_core::SC_US));  // a drop only counts: nothing to wait on
    EXPECT_EQ(d.cluster().chip(0).router().stats().dropped_writes, 2u);
    for (unsigned n = 1; n < 4; ++n) EXPECT_EQ(d.cluster().host(n).stats().writes, 0u) << n;
    // A CPU load of node 2's registers through node 0's board: answered
    // Unsupported Request, not left waiting.
    bool done = false, ok = true;
    d.cluster().host(0).mmio_read(reg_addr(2, P2_REG_NODE_ID), [&](uint64_t, bool good) {
      ok = good;
      done = true;
    });
    while (!done) wait(sc_core::sc_time(10, sc_core::SC_NS));
    EXPECT_FALSE(ok);
  });
  const std::string err = testing::internal::GetCapturedStderr();
  // Said once per board, naming both nodes and networks.
  EXPECT_NE(err.find("p2sim: node 0's PEACH2 refused a write for node 3: no cable path (node 0 is on "
                     "PEACH2 network 0, node 3 on network 1)"),
            std::string::npos)
      << err;
  EXPECT_EQ(err.find("refused a read"), std::string::npos) << err;
}

}  // namespace
}  // namespace p2::test
