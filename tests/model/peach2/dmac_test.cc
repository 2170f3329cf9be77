#include <gtest/gtest.h>

#include <vector>

#include "harness.h"
#include "peach2/registers.h"

namespace p2::test {
namespace {

using sc_core::sc_time;
using sc_core::sc_time_stamp;

constexpr uint64_t kDescArea = 0x1000;
constexpr uint64_t kSrcArea = 0x100000;
constexpr uint64_t kDstArea = 0x4000000;

// Descriptors moving `len` bytes each from node 0 to `dst_node`, chained at kDescArea.
std::vector<p2_desc> make_chain(Driver& d, unsigned n, uint32_t len, unsigned dst_node, uint64_t dst_base,
                                unsigned seed) {
  std::vector<p2_desc> descs;
  for (unsigned i = 0; i < n; ++i) {
    uint64_t src = host_addr(0, kSrcArea + i * 0x40000);
    fill_pattern(d.mem(src, len), len, seed + i);
    descs.push_back(desc(src, host_addr(dst_node, dst_base + i * 0x40000), len, 0,
                         i + 1 < n ? host_addr(0, kDescArea + (i + 1) * P2_DESC_SIZE) : 0));
  }
  return descs;
}

void expect_landed(Driver& d, unsigned n, uint32_t len, unsigned dst_node, uint64_t dst_base, unsigned seed) {
  for (unsigned i = 0; i < n; ++i) {
    std::vector<uint8_t> expect(len);
    fill_pattern(expect.data(), len, seed + i);
    EXPECT_EQ(0, std::memcmp(d.mem(host_addr(dst_node, dst_base + i * 0x40000), len), expect.data(), len))
        << "descriptor " << i;
  }
}

uint64_t chain_bytes(const std::vector<p2_desc>& descs) {
  uint64_t total = 0;
  for (const p2_desc& x : descs)
    total += uint64_t(x.length) * ((x.flags & P2_DESC_BLOCK_STRIDE) ? x.block_count : 1);
  return total;
}

// Runs a chain from memory (chain mode) and returns when the data has landed.
sc_time run_fetched(Driver& d, const std::vector<p2_desc>& descs, uint64_t bytes_before) {
  for (size_t i = 0; i < descs.size(); ++i) d.put_desc(host_addr(0, kDescArea + i * P2_DESC_SIZE), descs[i]);
  uint64_t runs = d.peek(0, P2_REG_DMA(0, P2_DMA_RUNS));
  sc_time t0 = sc_time_stamp();
  d.start_chain(0, 0, host_addr(0, kDescArea));
  EXPECT_EQ(d.wait_channel(0, 0, runs), P2_DMA_IDLE);
  uint64_t total = bytes_before + chain_bytes(descs);
  d.wait_until([&] { return d.cluster().host(1).stats().write_bytes >= total; });
  return sc_time_stamp() - t0;
}

sc_time run_registers(Driver& d, const std::vector<p2_desc>& descs, uint64_t bytes_before) {
  d.load_registers(0, 1, descs);
  uint64_t runs = d.peek(0, P2_REG_DMA(1, P2_DMA_RUNS));
  sc_time t0 = sc_time_stamp();
  d.mmio(0, P2_REG_DMA(1, P2_DMA_START), P2_DMA_START_REGISTERS);
  EXPECT_EQ(d.wait_channel(0, 1, runs), P2_DMA_IDLE);
  uint64_t total = bytes_before + chain_bytes(descs);
  d.wait_until([&] { return d.cluster().host(1).stats().write_bytes >= total; });
  return sc_time_stamp() - t0;
}

TEST(Dmac, ChainRunsInOrderAndMovesTheBytes) {
  with_cluster(make_torus(2, 8), Params{}, [](Driver& d) {
    auto descs = make_chain(d, 5, 1000, 1, kDstArea, 1);
    run_fetched(d, descs, 0);
    expect_landed(d, 5, 1000, 1, kDstArea, 1);
    EXPECT_EQ(d.peek(0, P2_REG_DMA(0, P2_DMA_DONE)), 5u);
    EXPECT_EQ(d.cluster().chip(0).dmac().stats().descriptor_fetches, 5u);
  });
}

TEST(Dmac, ChainOrderIsVisibleInOverlappingDestinations) {
  // Three descriptors write the same destination; the last one must win.
  with_cluster(make_ring(2), Params{}, [](Driver& d) {
    auto descs = make_chain(d, 3, 4096, 1, kDstArea, 7);
    for (auto& x : descs) x.dst = host_addr(1, kDstArea);
    run_fetched(d, descs, 0);
    std::vector<uint8_t> expect(4096);
    fill_pattern(expect.data(), expect.size(), 7 + 2);
    EXPECT_EQ(0, std::memcmp(d.mem(host_addr(1, kDstArea), 4096), expect.data(), 4096));
  });
}

TEST(Dmac, PipelinedChainOverlapsAndStillLandsEveryByte) {
  // The same chain of small transfers to the next node, in order and with
  // P2_DESC_PIPELINE: the next descriptor's fetch and reads overlap the
  // previous one's writes, so the chain ends sooner, with every byte landed
  // and every descriptor counted.
  bool checked = false;
  with_cluster(make_ring(2), Params{}, [&checked](Driver& d) {
    auto ordered = make_chain(d, 6, 256, 1, kDstArea, 31);
    sc_time t_ordered = run_fetched(d, ordered, 0);
    expect_landed(d, 6, 256, 1, kDstArea, 31);
    auto piped = make_chain(d, 6, 256, 1, kDstArea + 0x1000, 41);
    for (auto& x : piped) x.flags |= P2_DESC_PIPELINE;
    sc_time t_piped = run_fetched(d, piped, 6 * 256);
    expect_landed(d, 6, 256, 1, kDstArea + 0x1000, 41);
    EXPECT_LT(t_piped, t_ordered);
    EXPECT_EQ(d.peek(0, P2_REG_DMA(0, P2_DMA_DONE)), 6u);
    EXPECT_EQ(d.cluster().chip(0).dmac().stats().descriptors, 12u);
    checked = true;
  });
  EXPECT_TRUE(checked) << "a chain never finished";
}

TEST(Dmac, OrderedChainReadsWhatItsPreviousDescriptorWrote) {
  // src -> mid within node 0, then mid -> node 1: without P2_DESC_PIPELINE the
  // second read reaches host memory behind the first one's posted writes and
  // the host answers with memory as it is then (8 bytes, the case that
  // delivered stale bytes).
  bool checked = false;
  with_cluster(make_ring(2), Params{}, [&checked](Driver& d) {
    const uint64_t src = host_addr(0, kSrcArea), mid = host_addr(0, kSrcArea + 0x10000);
    const uint64_t dst = host_addr(1, kDstArea);
    fill_pattern(d.mem(src, 8), 8, 51);
    std::memset(d.mem(mid, 8), 0xAA, 8);
    std::vector<p2_desc> chain = {desc(src, mid, 8, 0, 0), desc(mid, dst, 8, 0, 0)};
    // Register mode: no descriptor fetch between the two (a fetch is a read
    // too, and would hide the hazard behind its own round trip).
    d.load_registers(0, 1, chain);
    uint64_t runs = d.peek(0, P2_REG_DMA(1, P2_DMA_RUNS));
    d.mmio(0, P2_REG_DMA(1, P2_DMA_START), P2_DMA_START_REGISTERS);
    EXPECT_EQ(d.wait_channel(0, 1, runs), P2_DMA_IDLE);
    d.wait_until([&] { return d.cluster().host(1).stats().write_bytes >= 8; });
    std::vector<uint8_t> expect(8);
    fill_pattern(expect.data(), 8, 51);
    EXPECT_EQ(0, std::memcmp(d.mem(dst, 8), expect.data(), 8)) << "mid's old bytes reached node 1";
    checked = true;
  });
  EXPECT_TRUE(checked) << "the chain never finished";
}

TEST(Dmac, LargeUnalignedTransfer) {
  with_cluster(make_torus(2, 8), Params{}, [](Driver& d) {
    auto descs = make_chain(d, 2, 123457, 1, kDstArea + 3, 3);
    for (auto& x : descs) x.src += 5;
    fill_pattern(d.mem(descs[0].src, 123457), 123457, 3);
    fill_pattern(d.mem(descs[1].src, 123457), 123457, 4);
    run_fetched(d, descs, 0);
    expect_landed(d, 2, 123457, 1, kDstArea + 3, 3);
  });
}

TEST(Dmac, RegisterModeTakesFewerCyclesThanFetchedDescriptors) {
  with_cluster(make_torus(2, 8), Params{}, [](Driver& d) {
    auto descs = make_chain(d, 4, 64, 1, kDstArea, 11);
    sc_time fetched = run_fetched(d, descs, 0);
    uint64_t fetches = d.cluster().chip(0).dmac().stats().descriptor_fetches;
    auto again = make_chain(d, 4, 64, 1, kDstArea + 0x1000, 21);
    sc_time registers = run_registers(d, again, 4 * 64);
    expect_landed(d, 4, 64, 1, kDstArea + 0x1000, 21);
    EXPECT_EQ(d.cluster().chip(0).dmac().stats().descriptor_fetches, fetches) << "register mode fetched";
    EXPECT_LT(registers, fetched);
    // Each fetched descriptor costs at least one host read round trip.
    EXPECT_GT((fetched - registers).to_seconds(), 4 * d.cluster().params().host_read_latency_ns * 1e-9);
  });
}

TEST(Dmac, BlockStrideMovesExactlyTheBlocks) {
  with_cluster(make_ring(2), Params{}, [](Driver& d) {
    const uint32_t width = 100, count = 7;
    const uint64_t src_pitch = 256, dst_pitch = 160;
    uint64_t src = host_addr(0, kSrcArea), dst = host_addr(1, kDstArea);
    fill_pattern(d.mem(src, src_pitch * count), src_pitch * count, 5);
    std::memset(d.mem(dst, dst_pitch * count), 0xEE, dst_pitch * count);
    p2_desc x = desc(src, dst, width, P2_DESC_BLOCK_STRIDE);
    x.block_count = count;
    x.src_stride = src_pitch;
    x.dst_stride = dst_pitch;
    run_fetched(d, {x}, 0);
    const uint8_t* s = d.mem(src, src_pitch * count);
    const uint8_t* t = d.mem(dst, dst_pitch * count);
    for (uint32_t k = 0; k < count; ++k) {
      EXPECT_EQ(0, std::memcmp(t + k * dst_pitch, s + k * src_pitch, width)) << "block " << k;
      for (uint64_t g = width; g < dst_pitch; ++g) ASSERT_EQ(t[k * dst_pitch + g], 0xEE) << "gap of block " << k;
    }
    EXPECT_EQ(d.cluster().host(1).stats().write_bytes, uint64_t(width) * count);
  });
}

TEST(Dmac, NotificationsArriveWithSlotAndTagBehindTheData) {
  with_cluster(make_torus(2, 8), Params{}, [](Driver& d) {
    d.setup_ring(9, 16);
    d.setup_ring(0, 16);
    d.setup_ring(5, 16);
    p2_desc x = desc(host_addr(0, kSrcArea), host_addr(9, kDstArea), 512, P2_DESC_NOTIFY | P2_DESC_NOTIFY_SELF);
    x.wait_slot = 3;
    x.wait_tag = 0x100;
    fill_pattern(d.mem(x.src, 512), 512, 9);
    d.put_desc(host_addr(0, kDescArea), x);
    d.start_chain(0, 0, host_addr(0, kDescArea));
    uint64_t e = d.wait_notification(9, 0, 16);
    // The data is in memory by the time its notification is.
    EXPECT_EQ(0, std::memcmp(d.mem(x.dst, 512), d.mem(x.src, 512), 512));
    EXPECT_EQ(p2_notify_entry_slot(e), 3u);
    EXPECT_EQ(p2_notify_entry_tag(e), 0x100u);
    uint64_t self = d.wait_notification(0, 0, 16);
    EXPECT_EQ(self, e);
    EXPECT_EQ(d.peek(9, P2_REG_NOTIFY_HEAD), 1u);
    EXPECT_EQ(d.peek(5, P2_REG_NOTIFY_HEAD), 0u);
    EXPECT_EQ(d.ring_entry(5, 0, 16), 0u);
  });
}

// Node 0 runs one 8-byte transfer to node 1 raising (slot, tag) there, and
// waits until the notification has landed (or been dropped).
void send_notification(Driver& d, unsigned slot, unsigned tag) {
  p2_desc x = desc(host_addr(0, kSrcArea), host_addr(1, kDstArea), 8, P2_DESC_NOTIFY);
  x.wait_slot = static_cast<uint16_t>(slot);
  x.wait_tag = tag;
  d.put_desc(host_addr(0, kDescArea), x);
  uint64_t runs = d.peek(0, P2_REG_DMA(0, P2_DMA_RUNS));
  d.start_chain(0, 0, host_addr(0, kDescArea));
  d.wait_channel(0, 0, runs);
  sc_core::wait(sc_core::sc_time(2, sc_core::SC_US));
}

TEST(Dmac, NotificationRingDropsWhenFullAndResumesAfterTail) {
  with_cluster(make_ring(2), Params{}, [](Driver& d) {
    d.setup_ring(1, 2);
    auto send = [&](unsigned slot, unsigned tag) { send_notification(d, slot, tag); };
    send(63, 0xffff);
    send(1, 2);
    send(4, 5);  // the ring of two is full: dropped
    EXPECT_EQ(d.peek(1, P2_REG_NOTIFY_OVERFLOW), 1u);
    EXPECT_EQ(d.ring_entry(1, 0, 2), p2_notify_entry(1, 63, 0xffff, 0));
    EXPECT_EQ(d.ring_entry(1, 1, 2), p2_notify_entry(2, 1, 2, 0));
    d.mmio(1, P2_REG_NOTIFY_TAIL, 2);
    wait(sc_core::sc_time(1, sc_core::SC_US));
    send(6, 7);
    EXPECT_EQ(d.wait_notification(1, 2, 2), p2_notify_entry(3, 6, 7, 0));
    EXPECT_EQ(d.peek(1, P2_REG_NOTIFY_HEAD), 3u);
  });
}

// The chip's notification table (tcaDMAUseNotifyInternal): with it on, a
// notification stays on the chip until an MMIO read of NOTIFY_POP takes it,
// oldest first; an empty table answers the ring's head; a full one sends the
// next to the ring.
TEST(Dmac, NotificationTableKeepsEntriesUntilPoppedAndOverflowsToTheRing) {
  Params p;
  p.notify_table_entries = 2;
  with_cluster(make_ring(2), p, [](Driver& d) {
    d.setup_ring(1, 16);
    d.mmio(1, P2_REG_NOTIFY_TABLE_ON, 1);
    auto send = [&](unsigned slot, unsigned tag) { send_notification(d, slot, tag); };
    auto read = [&](uint64_t reg) {
      bool done = false;
      uint64_t got = 0;
      d.cluster().host(1).mmio_read(reg_addr(1, reg), [&](uint64_t v, bool ok) {
        EXPECT_TRUE(ok);
        got = v;
        done = true;
      });
      while (!done) wait(sc_time(10, sc_core::SC_NS));
      return got;
    };
    auto pop = [&] { return read(P2_REG_NOTIFY_POP); };
    send(3, 0x100);
    send(4, 0x200);
    send(5, 0x300);  // the table of two is full: to the ring
    EXPECT_EQ(d.peek(1, P2_REG_NOTIFY_HEAD), 1u);
    EXPECT_EQ(d.ring_entry(1, 0, 16), p2_notify_entry(1, 5, 0x300, 0));
    EXPECT_EQ(read(P2_REG_NOTIFY_PEEK), p2_notify_entry(1, 3, 0x100, 0));  // looks, keeps
    EXPECT_EQ(pop(), p2_notify_entry(1, 3, 0x100, 0));
    EXPECT_EQ(pop(), p2_notify_entry(2, 4, 0x200, 0));
    EXPECT_EQ(pop(), 1u);  // empty: serial 0, the ring's head
    // Writing NOTIFY_TABLE_ON empties the table; turned off, entries go to the ring.
    send(6, 0x400);
    d.mmio(1, P2_REG_NOTIFY_TABLE_ON, 0);
    send(7, 0x500);
    EXPECT_EQ(pop(), 2u);
    EXPECT_EQ(d.ring_entry(1, 1, 16), p2_notify_entry(2, 7, 0x500, 0));
  });
}

// An MMIO load retires mmio_load_return_ns after its completion reaches the
// root port: a register read takes the way out, the board and that way back.
TEST(Host, LoadRetiresTheWayBackAfterItsCompletion) {
  Params p;
  p.mmio_load_return_ns = 500;
  with_cluster(make_ring(2), p, [&p](Driver& d) {
    bool done = false;
    sc_time start = sc_time_stamp(), took;
    d.cluster().host(0).mmio_read(reg_addr(0, P2_REG_NODE_ID), [&](uint64_t, bool) {
      done = true;
      took = sc_time_stamp() - start;
    });
    while (!done) wait(sc_time(1, sc_core::SC_NS));
    // Both ways through the uncore and the host link, and the board between.
    EXPECT_GT(took, sc_time(p.mmio_post_latency_ns + 500 + 2 * p.link_latency_ns, sc_core::SC_NS));
    EXPECT_EQ(took, sc_time(653 + 500, sc_core::SC_NS));  // golden: 653 ns without the way back
  });
}

// P2_DMA_END_WB: as each run ends (a failed one too) the channel writes the
// tag its start carried to the host word it names.
TEST(Dmac, EndedRunsWriteTheirStartsTagToHostMemory) {
  with_cluster(make_ring(2), Params{}, [](Driver& d) {
    const uint64_t wb = host_addr(0, kDescArea + 0x1000);
    std::memset(d.mem(wb, 8), 0, 8);
    d.mmio(0, P2_REG_DMA(1, P2_DMA_END_WB), wb);
    auto word = [&] {
      uint64_t v;
      std::memcpy(&v, d.mem(wb, 8), 8);
      return v;
    };
    auto start = [&](uint64_t tag) {
      d.mmio(0, P2_REG_DMA(1, P2_DMA_DESC_PTR), host_addr(0, kDescArea));
      d.mmio(0, P2_REG_DMA(1, P2_DMA_START), tag << 32 | P2_DMA_START_CHAIN);
      d.wait_until([&] { return word() == tag; });
    };
    d.put_desc(host_addr(0, kDescArea), desc(host_addr(0, kSrcArea), host_addr(1, kDstArea), 64));
    start(7);
    EXPECT_EQ(d.peek(0, P2_REG_DMA(1, P2_DMA_RUNS)), 1u);
    start(0xffffffffu);
    d.put_desc(host_addr(0, kDescArea), desc(host_addr(0, kSrcArea), host_addr(1, kDstArea), 0));
    start(9);
    EXPECT_EQ(d.peek(0, P2_REG_DMA(1, P2_DMA_STATUS)), uint64_t(P2_DMA_FAILED));
  });
}

TEST(Dmac, NotificationWithoutARingIsCountedAsDropped) {
  with_cluster(make_ring(2), Params{}, [](Driver& d) {
    d.put_desc(host_addr(0, kDescArea), desc(host_addr(0, kSrcArea), host_addr(1, kDstArea), 8, P2_DESC_NOTIFY));
    d.start_chain(0, 0, host_addr(0, kDescArea));
    d.wait_until([&] { return d.peek(1, P2_REG_NOTIFY_OVERFLOW) == 1; });
    EXPECT_EQ(d.peek(1, P2_REG_NOTIFY_HEAD), 0u);
  });
}

struct BadCase {
  const char* name;
  p2_desc d;
  p2_error expect;
};

TEST(Dmac, InvalidAddressesReportErrors) {
  with_cluster(make_ring(4), Params{}, [](Driver& d) {
    const uint64_t ok_src = host_addr(0, kSrcArea), ok_dst = host_addr(1, kDstArea);
    p2_desc bad_notify = desc(ok_src, ok_dst, 8, P2_DESC_NOTIFY);
    bad_notify.wait_slot = P2_NOTIFY_SLOTS;
    p2_desc zero_blocks = desc(ok_src, ok_dst, 8, P2_DESC_BLOCK_STRIDE);
    zero_blocks.block_count = 0;
    std::vector<BadCase> cases = {
        {"src in a hole", desc(p2_node_base(0) + 0x900000000ull, ok_dst, 8), P2_ERR_SRC_UNMAPPED},
        {"src on another node", desc(host_addr(2, 0), ok_dst, 8), P2_ERR_SRC_REMOTE},
        {"dst beyond the nodes", desc(ok_src, host_addr(7, 0), 8), P2_ERR_DST_UNMAPPED},
        {"dst in registers", desc(ok_src, p2_node_base(1) + P2_REGS_OFFSET, 8), P2_ERR_DST_UNMAPPED},
        {"src past host memory", desc(host_addr(0, (1ull << 34) - 4), ok_dst, 8), P2_ERR_SRC_UNMAPPED},
        {"src past the arena", desc(host_addr(0, d.cluster().params().host_memory_bytes), ok_dst, 8),
         P2_ERR_UNSUPPORTED},
        {"zero length", desc(ok_src, ok_dst, 0), P2_ERR_BAD_DESC},
        {"unknown flag", desc(ok_src, ok_dst, 8, 1u << 9), P2_ERR_BAD_DESC},
        {"slot out of range", bad_notify, P2_ERR_BAD_NOTIFY},
        {"zero blocks", zero_blocks, P2_ERR_BAD_DESC},
    };
    for (const BadCase& c : cases) {
      d.put_desc(host_addr(0, kDescArea), c.d);
      uint64_t runs = d.peek(0, P2_REG_DMA(0, P2_DMA_RUNS));
      d.start_chain(0, 0, host_addr(0, kDescArea));
      EXPECT_EQ(d.wait_channel(0, 0, runs), P2_DMA_FAILED) << c.name;
      EXPECT_EQ(d.peek(0, P2_REG_DMA(0, P2_DMA_ERROR)), uint64_t(c.expect)) << c.name;
    }
    // A chain pointer outside memory fails the fetch.
    uint64_t runs = d.peek(0, P2_REG_DMA(0, P2_DMA_RUNS));
    d.start_chain(0, 0, host_addr(1, kDescArea));
    EXPECT_EQ(d.wait_channel(0, 0, runs), P2_DMA_FAILED);
    EXPECT_EQ(d.peek(0, P2_REG_DMA(0, P2_DMA_ERROR)), uint64_t(P2_ERR_DESC_FETCH));
    // Register mode with no descriptors.
    d.mmio(0, P2_REG_DMA(2, P2_DMA_REG_COUNT), 0);
    d.mmio(0, P2_REG_DMA(2, P2_DMA_START), P2_DMA_START_REGISTERS);
    EXPECT_EQ(d.wait_channel(0, 2, 0), P2_DMA_FAILED);
    EXPECT_EQ(d.peek(0, P2_REG_DMA(2, P2_DMA_ERROR)), uint64_t(P2_ERR_REG_COUNT));
    // Nothing was written anywhere, and the channel still works afterwards.
    EXPECT_EQ(d.cluster().host(1).stats().write_bytes, 0u);
    p2_desc good = desc(ok_src, ok_dst, 64);
    run_fetched(d, {good}, 0);
  });
}

TEST(Dmac, GpuMemoryIsASourceAndADestination) {
  with_cluster(make_ring(2), Params{}, [](Driver& d) {
    Host& h0 = d.cluster().host(0);
    Host& h1 = d.cluster().host(1);
    uint8_t* src = h0.translate(gpu_addr(0, 0x1000), 4096);
    ASSERT_NE(src, nullptr);
    fill_pattern(src, 4096, 17);
    d.put_desc(host_addr(0, kDescArea), desc(gpu_addr(0, 0x1000), gpu_addr(1, 0x2000), 4096));
    d.start_chain(0, 0, host_addr(0, kDescArea));
    EXPECT_EQ(d.wait_channel(0, 0, 0), P2_DMA_IDLE);
    d.wait_until([&] { return h1.stats().write_bytes == 4096; });
    EXPECT_EQ(0, std::memcmp(h1.translate(gpu_addr(1, 0x2000), 4096), src, 4096));
  });
}

// gpu_read_flush_ns: node 0 reads its GPU while node 1 writes into it. Alone
// a read pays nothing; behind the writes each read waits for their drain
// and the writes behind it for the read, so an exchange takes turns. One
// cluster (SystemC elaborates once per process) runs a one-way transfer,
// then an exchange; every byte lands both ways.
std::pair<sc_time, sc_time> one_way_then_exchange(const Params& p) {
  std::pair<sc_time, sc_time> took;
  with_cluster(make_ring(2), p, [&](Driver& d) {
    constexpr uint32_t kLen = 64 * 1024;
    Host* h[2] = {&d.cluster().host(0), &d.cluster().host(1)};
    for (unsigned n = 0; n < 2; ++n) fill_pattern(h[n]->translate(gpu_addr(n, 0x100000), kLen), kLen, 50 + n);
    uint64_t runs[2] = {0, 0};
    for (unsigned senders : {1u, 2u}) {
      const uint64_t written[2] = {h[0]->stats().write_bytes, h[1]->stats().write_bytes};
      const uint64_t dst = 0x200000 * senders;
      const sc_time t0 = sc_time_stamp();
      for (unsigned n = 0; n < senders; ++n) {
        d.put_desc(host_addr(n, kDescArea), desc(gpu_addr(n, 0x100000), gpu_addr(1 - n, dst), kLen));
        d.start_chain(n, 0, host_addr(n, kDescArea));
      }
      for (unsigned n = 0; n < senders; ++n) EXPECT_EQ(d.wait_channel(n, 0, runs[n]++), P2_DMA_IDLE);
      d.wait_until([&] {
        return h[1]->stats().write_bytes >= written[1] + kLen &&
               h[0]->stats().write_bytes >= written[0] + (senders - 1) * kLen;
      });
      (senders == 1 ? took.first : took.second) = sc_time_stamp() - t0;
      for (unsigned n = 0; n < senders; ++n)
        EXPECT_EQ(0, std::memcmp(h[1 - n]->translate(gpu_addr(1 - n, dst), kLen),
                                 h[n]->translate(gpu_addr(n, 0x100000), kLen), kLen));
    }
  });
  return took;
}

TEST(Host, GpuExchangeWithoutReadFlushRunsAsFastAsOneWay) {
  auto [one_way, exchange] = one_way_then_exchange(Params{});
  EXPECT_LT(exchange, one_way * 1.2);
  EXPECT_EQ(one_way, sc_time(25217560, sc_core::SC_PS)) << one_way;  // golden
}

TEST(Host, GpuReadsBehindWritesWaitForTheirDrain) {
  Params p;
  p.gpu_read_flush_ns = 900;
  auto [one_way, exchange] = one_way_then_exchange(p);
  EXPECT_EQ(one_way, sc_time(25217560, sc_core::SC_PS)) << one_way;  // as without: no write ahead of a read
  // 128 reads of 512 B each, about one flush apiece.
  EXPECT_GT(exchange, sc_time(128 * 900, sc_core::SC_NS));
  EXPECT_LT(exchange, sc_time(128 * 900 * 2, sc_core::SC_NS));
  EXPECT_EQ(exchange, sc_time(153633064, sc_core::SC_PS)) << exchange;  // golden: 1.2 us a read
}

}  // namespace
}  // namespace p2::test
