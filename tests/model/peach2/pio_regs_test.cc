#include <gtest/gtest.h>

#include "harness.h"
#include "peach2/pio_window.h"

namespace p2::test {
namespace {

using sc_core::sc_time;
using sc_core::sc_time_stamp;

TEST(Pio, StoresLandInTheRemoteNodesMemoryInOrder) {
  with_cluster(make_torus(2, 8), Params{}, [](Driver& d) {
    uint8_t msg[100];
    fill_pattern(msg, sizeof msg, 2);
    uint64_t window = p2_node_base(0) + P2_PIO_OFFSET + p2_pio_offset(13, 0x3000);
    d.cluster().host(0).pio_write(window, msg, sizeof msg);
    Host& h13 = d.cluster().host(13);
    d.wait_until([&] { return h13.stats().write_bytes == sizeof msg; });
    EXPECT_EQ(0, std::memcmp(d.mem(host_addr(13, 0x3000), sizeof msg), msg, sizeof msg));
    // 100 bytes of 8-byte stores: 13 TLPs, the last one 4 bytes.
    EXPECT_EQ(h13.stats().writes, 13u);
    EXPECT_EQ(d.cluster().chip(0).pio().stores(), 13u);
  });
}

TEST(Pio, StoresAreSpacedByTheCpuStoreTime) {
  Params p;
  with_cluster(make_ring(2), p, [&](Driver& d) {
    uint8_t one[8] = {1}, many[64] = {2};
    uint64_t window = p2_node_base(0) + P2_PIO_OFFSET + p2_pio_offset(1, 0);
    sc_time t0 = sc_time_stamp();
    d.cluster().host(0).pio_write(window, one, sizeof one);
    d.wait_until([&] { return d.cluster().host(1).stats().writes == 1; });
    sc_time single = sc_time_stamp() - t0;
    sc_time t1 = sc_time_stamp();
    d.cluster().host(0).pio_write(window + 64, many, sizeof many);
    d.wait_until([&] { return d.cluster().host(1).stats().writes == 9; });
    sc_time eight = sc_time_stamp() - t1;
    // Seven more stores, each pio_store_ns after the previous (the path is
    // idle); the boards see them on their clock grid, so up to a cycle later.
    sc_time spacing(7 * p.pio_store_ns, sc_core::SC_NS);
    EXPECT_GE(eight - single, spacing);
    EXPECT_LT(eight - single, spacing + ChipClock(p.chip_mhz).period());
  });
}

TEST(Pio, StoresPastTheLastNodeAreDropped) {
  with_cluster(make_ring(2), Params{}, [](Driver& d) {
    uint8_t v[8] = {9};
    d.cluster().host(0).pio_write(p2_node_base(0) + P2_PIO_OFFSET + p2_pio_offset(5, 0), v, 8);
    d.pass(sc_core::sc_time(10, sc_core::SC_US));  // a drop only counts: nothing to wait on
    EXPECT_EQ(d.cluster().chip(0).pio().dropped(), 1u);
    EXPECT_EQ(d.cluster().host(1).stats().writes, 0u);
  });
}

// Regression: a store that starts inside node 1's PIO span and runs over its
// end (offset + length past P2_PIO_NODE_SPAN) is dropped and counted, not
// sent to node 1 past what PIO may reach there. A store inside the span,
// sent after it, still lands.
TEST(Pio, StoreRunningOverTheEndOfANodesSpanIsDropped) {
  with_cluster(make_ring(2), Params{}, [](Driver& d) {
    uint8_t v[8] = {1, 2, 3, 4, 5, 6, 7, 8};
    const uint64_t window = p2_node_base(0) + P2_PIO_OFFSET;
    d.cluster().host(0).pio_write(window + p2_pio_offset(1, P2_PIO_NODE_SPAN - 4), v, 8);
    d.cluster().host(0).pio_write(window + p2_pio_offset(1, 0x100), v, 8);
    Host& h1 = d.cluster().host(1);
    d.wait_until([&] { return h1.stats().writes == 1; });
    EXPECT_EQ(d.cluster().chip(0).pio().dropped(), 1u);
    EXPECT_EQ(d.cluster().chip(0).pio().stores(), 1u);
    EXPECT_EQ(h1.stats().write_bytes, 8u);
    EXPECT_EQ(0, std::memcmp(d.mem(host_addr(1, 0x100), 8), v, 8));
  });
}

TEST(Registers, HostReadsIdentificationAndRoutes) {
  with_cluster(make_torus(2, 8), Params{}, [](Driver& d) {
    struct Want {
      uint64_t reg, value;
    };
    const Want wants[] = {{P2_REG_CHIP_ID, P2_CHIP_ID_VALUE},
                          {P2_REG_NODE_ID, 6},
                          {P2_REG_NUM_NODES, 16},
                          {P2_REG_ROUTE(6), P2_PORT_N},
                          {P2_REG_ROUTE(7), P2_PORT_E},
                          {P2_REG_ROUTE(5), P2_PORT_W},
                          {P2_REG_ROUTE(14), P2_PORT_S},
                          {P2_REG_PORT_MODE, 1u << P2_PORT_W | 1u << P2_PORT_S}};
    for (const Want& w : wants) {
      bool done = false, ok = false;
      uint64_t got = 0;
      d.cluster().host(6).mmio_read(reg_addr(6, w.reg), [&](uint64_t v, bool good) {
        got = v;
        ok = good;
        done = true;
      });
      while (!done) wait(sc_time(10, sc_core::SC_NS));
      EXPECT_TRUE(ok);
      EXPECT_EQ(got, w.value) << "register 0x" << std::hex << w.reg;
    }
  });
}

TEST(Registers, CycleCounterRunsAt250MHz) {
  with_cluster(make_ring(2), Params{}, [](Driver& d) {
    wait(sc_time(1, sc_core::SC_US));
    EXPECT_EQ(d.peek(0, P2_REG_CYCLES), 250u);
  });
}

TEST(Registers, MisalignedReadIsUnsupported) {
  with_cluster(make_ring(2), Params{}, [](Driver& d) {
    bool done = false, ok = true;
    d.cluster().host(0).mmio_read(reg_addr(0, P2_REG_NODE_ID + 4), [&](uint64_t, bool good) {
      ok = good;
      done = true;
    });
    while (!done) wait(sc_time(10, sc_core::SC_NS));
    EXPECT_FALSE(ok);
  });
}

TEST(Host, WritesOutsideRegisteredMemoryAreNeverApplied) {
  with_cluster(make_ring(2), Params{}, [](Driver& d) {
    // A DMA whose destination lies past node 1's arena: a posted write there
    // would vanish while the run "succeeded", so the DMAC, which knows the
    // size every node exposes, refuses the descriptor; nothing reaches node 1.
    uint64_t beyond = host_addr(1, d.cluster().params().host_memory_bytes);
    d.put_desc(host_addr(0, 0x1000), desc(host_addr(0, 0x10000), beyond, 256));
    d.start_chain(0, 0, host_addr(0, 0x1000));
    EXPECT_EQ(d.wait_channel(0, 0, 0), P2_DMA_FAILED);
    EXPECT_EQ(d.peek(0, P2_REG_DMA(0, P2_DMA_ERROR)), static_cast<uint64_t>(P2_ERR_DST_RANGE));
    d.pass(sc_core::sc_time(10, sc_core::SC_US));
    EXPECT_EQ(d.cluster().host(1).stats().writes, 0u);
    EXPECT_EQ(d.cluster().host(1).stats().dropped_writes, 0u);
  });
}

}  // namespace
}  // namespace p2::test
