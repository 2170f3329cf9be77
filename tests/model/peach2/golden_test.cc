// Golden: simulated times of a fixed scenario, pinned to the picosecond. A
// change here means the model's timing changed: look at why before updating.
#include <gtest/gtest.h>

#include "harness.h"

namespace p2::test {
namespace {

using sc_core::sc_time;
using sc_core::sc_time_stamp;

Params golden_params() {
  Params p;
  load_params_file(p, P2_SOURCE_DIR "/tests/golden/model-golden.params");
  return p;
}

uint64_t elapsed_ps(sc_time since) { return (sc_time_stamp() - since).value(); }

TEST(Golden, FixedScenarioCycleCounts) {
  std::vector<uint64_t> got;
  with_cluster(make_torus(2, 8), golden_params(), [&](Driver& d) {
    Cluster& c = d.cluster();
    // 1. One 8-byte PIO store, node 0 to node 1, until visible in memory.
    uint8_t word[8] = {1, 2, 3, 4, 5, 6, 7, 8};
    sc_time t = sc_time_stamp();
    c.host(0).pio_write(p2_node_base(0) + P2_PIO_OFFSET + p2_pio_offset(1, 0x100), word, 8);
    d.wait_until([&] { return c.host(1).stats().writes == 1; });
    got.push_back(elapsed_ps(t));

    // 2. An 8-byte DMA with notification, node 0 to node 9 (two hops), until
    //    the notification is in its ring in host memory.
    d.setup_ring(9, 64);
    wait(sc_time(1, sc_core::SC_US));
    p2_desc x = desc(host_addr(0, 0x10000), host_addr(9, 0x20000), 8, P2_DESC_NOTIFY);
    x.wait_slot = 1;
    x.wait_tag = 0x100;
    d.put_desc(host_addr(0, 0x1000), x);
    t = sc_time_stamp();
    d.start_chain(0, 0, host_addr(0, 0x1000));
    d.wait_notification(9, 0, 64);
    got.push_back(elapsed_ps(t));

    // 3. 64 KiB, node 0 to node 1, until the last byte is visible.
    d.put_desc(host_addr(0, 0x1000), desc(host_addr(0, 0x100000), host_addr(1, 0x200000), 65536));
    t = sc_time_stamp();
    d.start_chain(0, 0, host_addr(0, 0x1000));
    d.wait_until([&] { return c.host(1).stats().write_bytes == 8 + 65536; });  // +8: the PIO word
    got.push_back(elapsed_ps(t));

    // 4. The same from GPU memory to GPU memory.
    d.put_desc(host_addr(0, 0x1000), desc(gpu_addr(0, 0), gpu_addr(1, 0), 65536));
    t = sc_time_stamp();
    d.start_chain(0, 0, host_addr(0, 0x1000));
    d.wait_until([&] { return c.host(1).stats().write_bytes == 8 + 2 * 65536; });
    got.push_back(elapsed_ps(t));

    // 5. Four 64-byte descriptors in register mode, channel 1, node 0 to node 8.
    std::vector<p2_desc> regs;
    for (int i = 0; i < 4; ++i)
      regs.push_back(desc(host_addr(0, 0x10000 + 64 * i), host_addr(8, 0x30000 + 64 * i), 64));
    d.load_registers(0, 1, regs);
    wait(sc_time(2, sc_core::SC_US));
    t = sc_time_stamp();
    d.mmio(0, P2_REG_DMA(1, P2_DMA_START), P2_DMA_START_REGISTERS);
    d.wait_until([&] { return c.host(8).stats().write_bytes == 256; });
    got.push_back(elapsed_ps(t));
  });
  for (uint64_t v : got) std::printf("golden: %llu ps\n", static_cast<unsigned long long>(v));
  const std::vector<uint64_t> pinned = {858000, 1936000, 21320000, 25215560, 2790440};
  EXPECT_EQ(got, pinned);
}

}  // namespace
}  // namespace p2::test
