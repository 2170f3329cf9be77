// The InfiniBand model's RDMA READ and atomics: bytes and completions of reads
// (one packet, several, striped over both rails, from GPU memory, empty),
// FETCH_ADD and CMP_SWAP (their old values, their results, atomicity when
// several nodes add to one word at once), errors with their status, the
// initiator depth (reads beyond it wait, and the send queue behind them), and
// the read and atomic latencies, calibrated and pinned to the picosecond.
#include <gtest/gtest.h>

#include <algorithm>
#include <cstdio>
#include <set>
#include <vector>

#include "harness.h"

namespace p2::test {
namespace {

using sc_core::sc_time;
using sc_core::sc_time_stamp;

void fill(uint8_t* p, size_t n, unsigned seed) {
  for (size_t i = 0; i < n; ++i) p[i] = static_cast<uint8_t>((i * 151 + seed * 13 + (i >> 9)) & 0xff);
}

ib_wqe atomic(uint8_t op, unsigned dest, uint64_t local, uint64_t remote, uint64_t compare_add, uint64_t swap = 0,
              uint64_t wr_id = 0) {
  ib_wqe w = wqe(op, dest, local, IB_ATOMIC_BYTES, remote, IB_RAIL_ANY, wr_id);
  w.compare_add = compare_add;
  w.swap = swap;
  return w;
}

uint64_t word(IbDriver& d, uint64_t addr) {
  uint64_t v;
  std::memcpy(&v, d.mem(addr, 8), 8);
  return v;
}

TEST(IbRead, ReadsDeliverBytesAndCompletions) {
  with_ib_cluster(ib_topology(4), Params(), [](IbDriver& d) {
    d.setup_all();
    // 8 B and 5000 B (3 response packets) from node 2's host memory into node 0's.
    fill(d.mem(ib_host(2, 0x200000), 5000), 5000, 1);
    d.post_send(0, wqe(IB_OP_RDMA_READ, 2, ib_host(0, 0x300000), 8, ib_host(2, 0x200000), IB_RAIL_ANY, 21));
    ib_cqe c = d.next_cqe(0);
    EXPECT_EQ(c.kind, IB_CQE_RDMA_READ);
    EXPECT_EQ(c.status, IB_OK);
    EXPECT_EQ(c.wr_id, 21u);
    EXPECT_EQ(c.byte_len, 8u);
    EXPECT_EQ(c.src_node, 2u);
    EXPECT_EQ(std::memcmp(d.mem(ib_host(0, 0x300000), 8), d.mem(ib_host(2, 0x200000), 8), 8), 0);
    d.post_send(0, wqe(IB_OP_RDMA_READ, 2, ib_host(0, 0x400000), 5000, ib_host(2, 0x200000), 1, 22));
    c = d.next_cqe(0);
    EXPECT_EQ(c.wr_id, 22u);
    EXPECT_EQ(c.rail, 1u);
    EXPECT_EQ(std::memcmp(d.mem(ib_host(0, 0x400000), 5000), d.mem(ib_host(2, 0x200000), 5000), 5000), 0);
    // Nothing arrives at the responder's CQ: a read is one-sided.
    EXPECT_EQ(d.peek(2, IB_REG_CQ_HEAD), 0u);
    EXPECT_EQ(d.cluster().ib().hca(2).stats().reads_served, 2u);
    // A striped 1 MiB + 100 B read of node 3's GPU memory into node 1's host memory.
    const uint32_t big = (1u << 20) + 100;
    uint8_t* src = d.cluster().host(3).translate(ib_gpu(3, 0x1000), big);
    ASSERT_NE(src, nullptr);
    fill(src, big, 2);
    const HcaStats before = d.cluster().ib().hca(3).stats();
    d.post_send(1, wqe(IB_OP_RDMA_READ, 3, ib_host(1, 0x800000), big, ib_gpu(3, 0x1000), IB_RAIL_ANY, 23));
    c = d.next_cqe(1);
    EXPECT_EQ(c.status, IB_OK);
    EXPECT_EQ(c.byte_len, big);
    EXPECT_EQ(std::memcmp(src, d.mem(ib_host(1, 0x800000), big), big), 0);
    const HcaStats& st = d.cluster().ib().hca(3).stats();
    EXPECT_GT(st.packets_out[0] - before.packets_out[0], 200u);  // the responses, on both rails
    EXPECT_GT(st.packets_out[1] - before.packets_out[1], 200u);
    // An empty read completes with nothing moved.
    d.post_send(1, wqe(IB_OP_RDMA_READ, 3, ib_host(1, 0x800000), 0, ib_host(3, 0), IB_RAIL_ANY, 24));
    c = d.next_cqe(1);
    EXPECT_EQ(c.status, IB_OK);
    EXPECT_EQ(c.byte_len, 0u);
    EXPECT_EQ(c.wr_id, 24u);
  });
}

TEST(IbAtomic, FetchAddAndCompareSwap) {
  with_ib_cluster(ib_topology(2), Params(), [](IbDriver& d) {
    d.setup_all();
    const uint64_t target = ib_host(1, 0x200000), result = ib_host(0, 0x300000);
    const uint64_t init = 0x0123456789abcdefULL;
    std::memcpy(d.mem(target, 8), &init, 8);
    d.post_send(0, atomic(IB_OP_ATOMIC_FETCH_ADD, 1, result, target, 0x10, 0, 31));
    ib_cqe c = d.next_cqe(0);
    EXPECT_EQ(c.kind, IB_CQE_ATOMIC);
    EXPECT_EQ(c.status, IB_OK);
    EXPECT_EQ(c.wr_id, 31u);
    EXPECT_EQ(c.byte_len, 8u);
    EXPECT_EQ(word(d, result), init);
    EXPECT_EQ(word(d, target), init + 0x10);
    // Compare-and-swap that fails (the word has moved on), then one that succeeds.
    d.post_send(0, atomic(IB_OP_ATOMIC_CMP_SWAP, 1, result, target, init, 7, 32));
    EXPECT_EQ(d.next_cqe(0).status, IB_OK);
    EXPECT_EQ(word(d, result), init + 0x10);
    EXPECT_EQ(word(d, target), init + 0x10);
    d.post_send(0, atomic(IB_OP_ATOMIC_CMP_SWAP, 1, result, target, init + 0x10, 7, 33));
    EXPECT_EQ(d.next_cqe(0).wr_id, 33u);
    EXPECT_EQ(word(d, result), init + 0x10);
    EXPECT_EQ(word(d, target), 7u);
    // Adding all ones subtracts one, as two's complement: wraps as verbs' does.
    d.post_send(0, atomic(IB_OP_ATOMIC_FETCH_ADD, 1, result, target, ~0ULL, 0, 34));
    d.next_cqe(0);
    EXPECT_EQ(word(d, target), 6u);
    EXPECT_EQ(d.cluster().ib().hca(1).stats().atomics_served, 4u);
  });
}

// Three nodes add to one word of node 0 at once, 20 times each: the atomic
// unit runs one at a time, so every old value is distinct and the sum is whole.
TEST(IbAtomic, ConcurrentFetchAddsAreAtomic) {
  with_ib_cluster(ib_topology(4), Params(), [](IbDriver& d) {
    d.setup_all();
    const uint64_t target = ib_host(0, 0x200000);
    std::memset(d.mem(target, 8), 0, 8);
    const int per = 20;
    for (int i = 0; i < per; ++i)
      for (unsigned n = 1; n < 4; ++n)
        d.post_send(n, atomic(IB_OP_ATOMIC_FETCH_ADD, 0, ib_host(n, 0x300000 + 8 * i), target, 1u << (8 * n), 0, i));
    std::set<uint64_t> olds;
    for (unsigned n = 1; n < 4; ++n)
      for (int i = 0; i < per; ++i) {
        EXPECT_EQ(d.next_cqe(n).status, IB_OK);
      }
    for (unsigned n = 1; n < 4; ++n)
      for (int i = 0; i < per; ++i) olds.insert(word(d, ib_host(n, 0x300000 + 8 * i)));
    EXPECT_EQ(olds.size(), 3u * per);
    EXPECT_EQ(word(d, target), per * ((1u << 8) + (1u << 16) + (1u << 24)));
    EXPECT_EQ(d.peek(0, IB_REG_CQ_HEAD), 0u);
  });
}

TEST(IbRead, ErrorsCompleteWithTheirStatus) {
  with_ib_cluster(ib_topology(2), Params(), [](IbDriver& d) {
    d.setup_all();
    const uint64_t beyond = ib_host(1, 0) + static_cast<uint64_t>(Params().host_memory_bytes) - 4;
    d.post_send(0, wqe(IB_OP_RDMA_READ, 1, ib_host(0, 0x300000), 64, beyond));
    EXPECT_EQ(d.next_cqe(0).status, IB_ERR_REMOTE);
    d.post_send(0, atomic(IB_OP_ATOMIC_FETCH_ADD, 1, ib_host(0, 0x300000), ib_host(1, 0x200004), 1));
    EXPECT_EQ(d.next_cqe(0).status, IB_ERR_REMOTE);  // misaligned word
    ib_wqe w = atomic(IB_OP_ATOMIC_CMP_SWAP, 1, ib_host(0, 0x300000), ib_host(1, 0x200000), 0, 1);
    w.length = 4;
    d.post_send(0, w);
    EXPECT_EQ(d.next_cqe(0).status, IB_ERR_LOCAL);
    d.post_send(0, atomic(IB_OP_ATOMIC_CMP_SWAP, 1, ib_host(0, 0x300004), ib_host(1, 0x200000), 0, 1));
    EXPECT_EQ(d.next_cqe(0).status, IB_ERR_LOCAL);  // result word misaligned
    EXPECT_EQ(d.cluster().ib().hca(1).stats().reads_served + d.cluster().ib().hca(1).stats().atomics_served, 0u);
  });
}

// 40 reads of 64 KiB on rail 0 and a SEND on rail 1 behind them: at most
// ib_hca_max_rd_atomic reads are outstanding, the rest wait, and so does the
// SEND (send-queue order) until the last read has started, though its rail
// is idle; with a deeper initiator the same work ends sooner and the SEND
// goes at once.
constexpr uint32_t kLen = 65536;  // 16 us of one rail each: the reads queue at the responder

sc_time depth_run(unsigned depth, uint64_t* waits, size_t* send_pos) {
  Params p;
  p.ib_hca_max_rd_atomic = depth;
  sc_time took;
  with_ib_cluster(ib_topology(2), p, [&](IbDriver& d) {
    d.setup_all();
    fill(d.mem(ib_host(1, 0x1000000), 40 * kLen), 40 * kLen, 5);
    d.post_recv(1, ib_host(1, 0x100000 + 0x80000), 64, 1);
    const sc_time t = sc_time_stamp();
    for (int i = 0; i < 40; ++i)
      d.post_send(0, wqe(IB_OP_RDMA_READ, 1, ib_host(0, 0x1000000 + kLen * i), kLen, ib_host(1, 0x1000000 + kLen * i), 0, i));
    d.post_send(0, wqe(IB_OP_SEND, 1, ib_host(0, 0x200000), 64, 0, 1, 99));
    std::vector<uint64_t> order;
    for (int i = 0; i < 41; ++i) order.push_back(d.next_cqe(0).wr_id);
    took = sc_time_stamp() - t;
    *send_pos = std::find(order.begin(), order.end(), 99u) - order.begin();
    order.erase(order.begin() + static_cast<long>(*send_pos));
    for (int i = 0; i < 40; ++i) EXPECT_EQ(order[i], static_cast<uint64_t>(i));  // reads in order
    EXPECT_EQ(std::memcmp(d.mem(ib_host(0, 0x1000000), 40 * kLen), d.mem(ib_host(1, 0x1000000), 40 * kLen), 40 * kLen), 0);
    EXPECT_EQ(d.next_cqe(1).wr_id, 1u);
    *waits = d.cluster().ib().hca(0).stats().rd_atomic_waits;
  });
  return took;
}

TEST(IbRead, InitiatorDepthBoundsOutstandingReads) {
  uint64_t waits = 0;
  size_t pos = 0;
  const sc_time t = depth_run(16, &waits, &pos);
  std::printf("40 reads of 64 KiB on one rail at depth 16: %.3f us, %llu waits, the SEND completes %zu-th\n",
              t.to_seconds() * 1e6, static_cast<unsigned long long>(waits), pos + 1);
  EXPECT_EQ(waits, 40u - 16u + 1u);  // 24 reads and the SEND waited
  EXPECT_GT(pos, 23u);               // not before read 23 had completed and let read 39 start
}

TEST(IbRead, DeeperInitiatorLetsTheSendGoAtOnce) {
  uint64_t waits = 0;
  size_t pos = 0;
  const sc_time t = depth_run(64, &waits, &pos);
  std::printf("40 reads of 64 KiB on one rail at depth 64: %.3f us, the SEND completes %zu-th\n",
              t.to_seconds() * 1e6, pos + 1);
  EXPECT_EQ(waits, 0u);
  EXPECT_LT(pos, 4u);
}

// Read and atomic latency: doorbell store to the completion entry visible in
// host memory (the endpoints of the SEND figure), one 8 B operation at a time.
struct RdFigures {
  uint64_t send_half_rtt_ps = 0, read_ps = 0, atomic_ps = 0, read_4k_ps = 0, read_1m_ps = 0;
};

RdFigures measure_rd(const Params& params) {
  RdFigures f;
  with_ib_cluster(ib_topology(2), params, [&](IbDriver& d) {
    d.setup_all();
    const int iters = 4;
    for (int i = 0; i < iters + 1; ++i) {
      d.post_recv(0, ib_host(0, 0x300000), 64, i);
      d.post_recv(1, ib_host(1, 0x300000), 64, i);
    }
    wait(sc_time(2, sc_core::SC_US));
    sc_time t;
    for (int i = 0; i < iters + 1; ++i) {  // the SEND ping-pong of IbCalibration
      if (i == 1) t = sc_time_stamp();
      ib_wqe w = wqe(IB_OP_SEND, 1, ib_host(0, 0x200000), 8);
      w.flags = 0;
      d.post_send(0, w);
      d.next_cqe(1);
      w.dest_node = 0;
      w.local_addr = ib_host(1, 0x200000);
      d.post_send(1, w);
      d.next_cqe(0);
    }
    f.send_half_rtt_ps = (sc_time_stamp() - t).value() / (2 * iters);
    auto one = [&](const ib_wqe& w) {
      wait(sc_time(2, sc_core::SC_US));
      const sc_time s = sc_time_stamp();
      d.post_send(0, w);
      EXPECT_EQ(d.next_cqe(0).status, IB_OK);
      return (sc_time_stamp() - s).value();
    };
    f.read_ps = one(wqe(IB_OP_RDMA_READ, 1, ib_host(0, 0x400000), 8, ib_host(1, 0x400000)));
    f.atomic_ps = one(atomic(IB_OP_ATOMIC_FETCH_ADD, 1, ib_host(0, 0x400000), ib_host(1, 0x400000), 1));
    f.read_4k_ps = one(wqe(IB_OP_RDMA_READ, 1, ib_host(0, 0x400000), 4096, ib_host(1, 0x400000)));
    // striped over both rails: the responder's reads of its memory share its slot link
    f.read_1m_ps = one(wqe(IB_OP_RDMA_READ, 1, ib_host(0, 0x1000000), 1u << 20, ib_host(1, 0x1000000)));
  });
  return f;
}

// ib_hca_read_ns is fitted so the read exceeds the SEND half round trip by
// 0.8 us, the difference of the published QDR figures (model/ib/README.md).
TEST(IbCalibration, ReadAndAtomicLatency) {
  const RdFigures f = measure_rd(Params());
  std::printf("ib 8 B SEND half round trip %.3f us, 8 B RDMA read %.3f us, 8 B FETCH_ADD %.3f us, "
              "4 KiB RDMA read %.3f us, 1 MiB RDMA read, both rails, %.3f GB/s (doorbell to completion)\n",
              f.send_half_rtt_ps / 1e6, f.read_ps / 1e6, f.atomic_ps / 1e6, f.read_4k_ps / 1e6,
              (1u << 20) / (f.read_1m_ps / 1e3));
  EXPECT_NEAR((f.read_ps - f.send_half_rtt_ps) / 1e6, 0.8, 0.01);
  EXPECT_GE(f.read_ps / 1e6, 2.0);  // the published 2.0-2.5 us
  EXPECT_LE(f.read_ps / 1e6, 2.5);
  EXPECT_GT(f.atomic_ps, f.read_ps);  // the atomic unit's read-modify-write on top
  EXPECT_GT(f.read_4k_ps, f.read_ps);
  // the responder's slot link bounds it as it bounds a striped write (5.834 GB/s at 1 MiB)
  EXPECT_NEAR((1u << 20) / (f.read_1m_ps / 1e3), 5.8, 0.2);
}

// Golden: the same figures with the pinned parameters of IbGolden, to the
// picosecond. A change means the IB model's timing changed: look at why
// before updating.
TEST(IbGolden, ReadAndAtomicPicoseconds) {
  Params p;
  load_params_file(p, P2_SOURCE_DIR "/tests/golden/model-golden.params");
  load_params_file(p, P2_SOURCE_DIR "/tests/golden/ib-golden.params");
  const RdFigures f = measure_rd(p);
  std::printf("ib read golden: %llu %llu %llu %llu %llu ps\n", static_cast<unsigned long long>(f.send_half_rtt_ps),
              static_cast<unsigned long long>(f.read_ps), static_cast<unsigned long long>(f.atomic_ps),
              static_cast<unsigned long long>(f.read_4k_ps), static_cast<unsigned long long>(f.read_1m_ps));
  EXPECT_EQ(f.send_half_rtt_ps, 1899784u);  // IbGolden's own figure: the SEND path is unchanged
  EXPECT_EQ(f.read_ps, 2770469u);
  EXPECT_EQ(f.atomic_ps, 2873469u);
  EXPECT_EQ(f.read_4k_ps, 4402640u);
  EXPECT_EQ(f.read_1m_ps, 180341008u);
}

}  // namespace
}  // namespace p2::test
