// The InfiniBand model: data and completions of SENDs and RDMA writes, errors,
// and the calibration figures (8 B latency, dual-rail bandwidth).
#include <gtest/gtest.h>

#include <cstdio>
#include <fstream>
#include <iterator>

#include <unistd.h>

#include "harness.h"

namespace p2::test {
namespace {

using sc_core::sc_time;
using sc_core::sc_time_stamp;

void fill(uint8_t* p, size_t n, unsigned seed) {
  for (size_t i = 0; i < n; ++i) p[i] = static_cast<uint8_t>((i * 131 + seed * 7 + (i >> 8)) & 0xff);
}

TEST(Ib, SendAndRdmaWriteDeliverBytesAndCompletions) {
  with_ib_cluster(ib_topology(4), Params(), [](IbDriver& d) {
    d.setup_all();
    EXPECT_EQ(d.peek(2, IB_REG_HCA_ID), IB_HCA_ID_VALUE);
    EXPECT_EQ(d.peek(2, IB_REG_LID), 3u);
    // SEND of 5000 bytes (3 packets) from node 0 into a buffer posted at node 2.
    fill(d.mem(ib_host(0, 0x200000), 5000), 5000, 1);
    d.post_recv(2, ib_host(2, 0x300000), 8192, 77);
    d.post_send(0, wqe(IB_OP_SEND, 2, ib_host(0, 0x200000), 5000, 0, IB_RAIL_ANY, 11, 0xabc));
    ib_cqe r = d.next_cqe(2);
    EXPECT_EQ(r.kind, IB_CQE_RECV);
    EXPECT_EQ(r.status, IB_OK);
    EXPECT_EQ(r.byte_len, 5000u);
    EXPECT_EQ(r.src_node, 0u);
    EXPECT_EQ(r.wr_id, 77u);
    EXPECT_EQ(r.imm, 0xabcu);
    EXPECT_EQ(r.msn, 1u);
    EXPECT_EQ(std::memcmp(d.mem(ib_host(0, 0x200000), 5000), d.mem(ib_host(2, 0x300000), 5000), 5000), 0);
    ib_cqe s = d.next_cqe(0);
    EXPECT_EQ(s.kind, IB_CQE_SEND);
    EXPECT_EQ(s.status, IB_OK);
    EXPECT_EQ(s.wr_id, 11u);
    // A striped 1 MiB + 100 B RDMA write, host to GPU memory, node 1 to node 3.
    const uint32_t big = (1u << 20) + 100;
    fill(d.mem(ib_host(1, 0x400000), big), big, 2);
    d.post_send(1, wqe(IB_OP_RDMA_WRITE, 3, ib_host(1, 0x400000), big, ib_gpu(3, 0x1000), IB_RAIL_ANY, 12));
    s = d.next_cqe(1);
    EXPECT_EQ(s.kind, IB_CQE_RDMA_WRITE);
    EXPECT_EQ(s.status, IB_OK);
    uint8_t* dst = d.cluster().host(3).translate(ib_gpu(3, 0x1000), big);
    ASSERT_NE(dst, nullptr);
    EXPECT_EQ(std::memcmp(d.mem(ib_host(1, 0x400000), big), dst, big), 0);
    const HcaStats& st = d.cluster().ib().hca(1).stats();
    EXPECT_GT(st.packets_out[0], 200u);
    EXPECT_GT(st.packets_out[1], 200u);
    // RDMA write with immediate: a receive completion at the target, no bytes in the buffer.
    d.post_recv(3, ib_host(3, 0x300000), 16, 90);
    d.post_send(1, wqe(IB_OP_RDMA_WRITE_IMM, 3, ib_host(1, 0x400000), 64, ib_host(3, 0x500000), 1, 13, 42));
    r = d.next_cqe(3);
    EXPECT_EQ(r.kind, IB_CQE_RECV_IMM);
    EXPECT_EQ(r.imm, 42u);
    EXPECT_EQ(r.byte_len, 64u);
    EXPECT_EQ(r.rail, 1u);
    EXPECT_EQ(r.msn, 2u);
    EXPECT_EQ(std::memcmp(d.mem(ib_host(1, 0x400000), 64), d.mem(ib_host(3, 0x500000), 64), 64), 0);
    EXPECT_EQ(d.next_cqe(1).wr_id, 13u);
  });
}

TEST(Ib, ErrorsCompleteWithTheirStatus) {
  with_ib_cluster(ib_topology(2), Params(), [](IbDriver& d) {
    d.setup_all();
    d.post_send(0, wqe(IB_OP_RDMA_WRITE, 1, ib_host(0, 0), 64, ib_host(0, 0)));  // remote on the wrong node
    EXPECT_EQ(d.next_cqe(0).status, IB_ERR_REMOTE);
    d.post_send(0, wqe(IB_OP_SEND, 5, ib_host(0, 0), 64));
    EXPECT_EQ(d.next_cqe(0).status, IB_ERR_DEST);
    d.post_send(0, wqe(9, 1, ib_host(0, 0), 64));
    EXPECT_EQ(d.next_cqe(0).status, IB_ERR_LOCAL);
    EXPECT_EQ(d.peek(0, IB_REG_ERROR), static_cast<uint64_t>(IB_ERR_LOCAL));
    // A SEND longer than the posted buffer: truncated, status at both ends.
    d.post_recv(1, ib_host(1, 0x300000), 100, 5);
    d.post_send(0, wqe(IB_OP_SEND, 1, ib_host(0, 0), 300));
    EXPECT_EQ(d.next_cqe(1).status, IB_ERR_LENGTH);
    EXPECT_EQ(d.next_cqe(0).status, IB_ERR_LENGTH);
  });
}

// The calibration scenario (model/ib/README.md, Calibration): 8 B SEND ping-pong,
// host memory, half the round trip; 4 MiB RDMA write over both rails.
struct Figures {
  uint64_t half_rtt_ps = 0;
  uint64_t bw_ps = 0;
  uint64_t gpu_half_rtt_ps = 0;  // the HCA reading and writing GPU memory itself
  uint64_t gpu_bw_ps = 0;
  uint32_t bw_bytes = 4u << 20;
};

Figures measure(const Params& params) {
  Figures f;
  with_ib_cluster(ib_topology(2), params, [&](IbDriver& d) {
    d.setup_all();
    const int iters = 4;
    for (int i = 0; i < iters + 1; ++i) {
      d.post_recv(0, ib_host(0, 0x300000), 64, i);
      d.post_recv(1, ib_host(1, 0x300000), 64, i);
    }
    wait(sc_time(2, sc_core::SC_US));
    // One warm-up round, then `iters` timed.
    sc_time t;
    for (int i = 0; i < iters + 1; ++i) {
      if (i == 1) t = sc_time_stamp();
      // Unsignaled sends, as MPI eager messages: the CQs hold receives only.
      ib_wqe w = wqe(IB_OP_SEND, 1, ib_host(0, 0x200000), 8);
      w.flags = 0;
      d.post_send(0, w);
      d.next_cqe(1);
      w.dest_node = 0;
      w.local_addr = ib_host(1, 0x200000);
      d.post_send(1, w);
      d.next_cqe(0);
    }
    f.half_rtt_ps = (sc_time_stamp() - t).value() / (2 * iters);
    wait(sc_time(5, sc_core::SC_US));
    t = sc_time_stamp();
    d.post_send(0, wqe(IB_OP_RDMA_WRITE, 1, ib_host(0, 0x1000000), f.bw_bytes, ib_host(1, 0x1000000)));
    d.next_cqe(0);
    f.bw_ps = (sc_time_stamp() - t).value();
    // The same with GPU buffers at both ends (the HCA's own GPU reads,
    // GPUDirect RDMA: ib_gpu_read_*).
    for (int i = 0; i < iters + 1; ++i) {
      d.post_recv(0, ib_gpu(0, 0x300000), 64, i);
      d.post_recv(1, ib_gpu(1, 0x300000), 64, i);
    }
    wait(sc_time(5, sc_core::SC_US));
    for (int i = 0; i < iters + 1; ++i) {
      if (i == 1) t = sc_time_stamp();
      ib_wqe w = wqe(IB_OP_SEND, 1, ib_gpu(0, 0x200000), 8);
      w.flags = 0;
      d.post_send(0, w);
      d.next_cqe(1);
      w.dest_node = 0;
      w.local_addr = ib_gpu(1, 0x200000);
      d.post_send(1, w);
      d.next_cqe(0);
    }
    f.gpu_half_rtt_ps = (sc_time_stamp() - t).value() / (2 * iters);
    wait(sc_time(5, sc_core::SC_US));
    t = sc_time_stamp();
    d.post_send(0, wqe(IB_OP_RDMA_WRITE, 1, ib_gpu(0, 0x1000000), f.bw_bytes, ib_gpu(1, 0x1000000)));
    d.next_cqe(0);
    f.gpu_bw_ps = (sc_time_stamp() - t).value();
  });
  return f;
}

TEST(IbCalibration, PublishedFigures) {
  Figures f = measure(Params());
  const double lat_us = f.half_rtt_ps / 1e6;
  const double gbps = f.bw_bytes / (f.bw_ps / 1e3);  // bytes per ns
  // The published 1.9 us is MPI's (MVAPICH2 osu_latency): with the MPI
  // layer's own costs (mpi/README.md, tested by mpi.calibration) the
  // verbs-level figure here is lower, as ib_send_lat is below osu_latency.
  std::printf("ib 8 B half round trip (verbs level): %.3f us (MPI level: 1.9 published)\n", lat_us);
  std::printf("ib 4 MiB RDMA write, both rails: %.3f GB/s (published 6.0)\n", gbps);
  std::printf("ib GPU 8 B half round trip (HCA reads GPU memory): %.3f us\n", f.gpu_half_rtt_ps / 1e6);
  std::printf("ib GPU 4 MiB RDMA write, both rails: %.3f GB/s (ib_gpu_read_gbps 3.13)\n",
              f.bw_bytes / (f.gpu_bw_ps / 1e3));
  EXPECT_GT(lat_us, 1.3);
  EXPECT_LT(lat_us, 1.9);
  EXPECT_NEAR(gbps, 6.0, 0.6);
  // GPUDirect RDMA from GPU memory runs at the HCA's GPU read rate; the
  // published 4.4 GB/s is MPI's pipeline through host memory, which the MPI
  // layer models (mpi.gpu_calibration).
  EXPECT_NEAR(f.bw_bytes / (f.gpu_bw_ps / 1e3), 3.13, 0.1);
}

}  // namespace
}  // namespace p2::test

namespace p2::test {
namespace {

// Golden: the calibration scenario's times, pinned to the picosecond. A change
// means the IB model's timing changed: look at why before updating.
TEST(IbGolden, CalibrationScenarioPicoseconds) {
  Params p;
  load_params_file(p, P2_SOURCE_DIR "/tests/golden/model-golden.params");
  load_params_file(p, P2_SOURCE_DIR "/tests/golden/ib-golden.params");
  Figures f = measure(p);
  std::printf("ib golden: %llu %llu %llu %llu ps\n", static_cast<unsigned long long>(f.half_rtt_ps),
              static_cast<unsigned long long>(f.bw_ps), static_cast<unsigned long long>(f.gpu_half_rtt_ps),
              static_cast<unsigned long long>(f.gpu_bw_ps));
  EXPECT_EQ(f.half_rtt_ps, 1899784u);
  EXPECT_EQ(f.bw_ps, 711990368u);
  EXPECT_EQ(f.gpu_half_rtt_ps, 2076185u);
  EXPECT_EQ(f.gpu_bw_ps, 953978343u);
}

}  // namespace
}  // namespace p2::test

namespace p2::test {
namespace {

// The shipped topology with both networks: PEACH2 is device 0, the HCA device 1,
// and a SEND crosses the InfiniBand fabric between the torus' far corners.
TEST(IbTopology, HapacsTcaWithIbBuildsBothNetworks) {
  Params p;
  Topology t = load_topology(P2_SOURCE_DIR "/topologies/hapacs-tca-2x8-ib.topo", p);
  ASSERT_EQ(t.devices.size(), 2u);
  with_ib_cluster(t, p, [](IbDriver& d) {
    EXPECT_EQ(d.cluster().device_count(), 2u);
    EXPECT_STREQ(d.cluster().device(0, 1).kind(), "ib");
    d.setup_all();
    fill(d.mem(ib_host(0, 0x200000), 64), 64, 3);
    d.post_recv(15, ib_host(15, 0x300000), 64, 1);
    d.post_send(0, wqe(IB_OP_SEND, 15, ib_host(0, 0x200000), 64));
    EXPECT_EQ(d.next_cqe(15).byte_len, 64u);
    EXPECT_EQ(std::memcmp(d.mem(ib_host(0, 0x200000), 64), d.mem(ib_host(15, 0x300000), 64), 64), 0);
  });
}

}  // namespace
}  // namespace p2::test

namespace p2::test {
namespace {

// A SEND that finds no receive buffer waits in the receiving HCA (infinite
// RNR retry), holding its link credits; the stall is diagnosed, and posting a
// buffer lets it finish.
TEST(IbFlow, SendWaitsForAReceiveBuffer) {
  with_ib_cluster(ib_topology(2), Params(), [](IbDriver& d) {
    d.setup_all();
    fill(d.mem(ib_host(0, 0x200000), 256), 256, 4);
    d.post_send(0, wqe(IB_OP_SEND, 1, ib_host(0, 0x200000), 256, 0, 0, 1));
    wait(sc_time(20, sc_core::SC_US));
    EXPECT_EQ(d.peek(1, IB_REG_CQ_HEAD), 0u);
    EXPECT_EQ(d.peek(0, IB_REG_CQ_HEAD), 0u);
    const std::string stall = d.cluster().ib().describe_stall();
    EXPECT_NE(stall.find("node 1 rail 0: a message from node 0 waits for a receive buffer"),
              std::string::npos)
        << stall;
    EXPECT_EQ(d.cluster().ib().hca(1).stats().rnr_waits, 1u);
    d.post_recv(1, ib_host(1, 0x300000), 256, 9);
    ib_cqe r = d.next_cqe(1);
    EXPECT_EQ(r.wr_id, 9u);
    EXPECT_EQ(r.byte_len, 256u);
    EXPECT_EQ(std::memcmp(d.mem(ib_host(0, 0x200000), 256), d.mem(ib_host(1, 0x300000), 256), 256), 0);
    EXPECT_EQ(d.next_cqe(0).status, IB_OK);
    EXPECT_EQ(d.cluster().ib().describe_stall(), "");
  });
}

// Incast: three senders write 512 KiB each into one receiver at once. The
// receiver's slot link (256 B writes, 7.2 GB/s) is slower than what arrives;
// back-pressure reaches the switch outputs and the senders' links through the
// link credits, and every byte still lands.
TEST(IbFlow, IncastBackPressureThroughCredits) {
  with_ib_cluster(ib_topology(4), Params(), [](IbDriver& d) {
    d.setup_all();
    const uint32_t len = 512 * 1024;
    for (unsigned s = 1; s < 4; ++s) {
      fill(d.mem(ib_host(s, 0x1000000), len), len, 10 + s);
      d.post_send(s, wqe(IB_OP_RDMA_WRITE, 0, ib_host(s, 0x1000000), len, ib_host(0, 0x1000000 * s)));
    }
    const sc_time t = sc_time_stamp();
    for (unsigned s = 1; s < 4; ++s) EXPECT_EQ(d.next_cqe(s).status, IB_OK);
    const double gbps = 3.0 * len / ((sc_time_stamp() - t).to_seconds() * 1e9);
    EXPECT_LT(gbps, 7.3);  // the receiver's slot bounds the sum
    EXPECT_GT(gbps, 5.0);
    for (unsigned s = 1; s < 4; ++s) {
      std::vector<uint8_t> want(len);
      fill(want.data(), len, 10 + s);
      EXPECT_EQ(std::memcmp(want.data(), d.mem(ib_host(0, 0x1000000 * s), len), len), 0) << s;
    }
    sc_time stall;
    for (unsigned s = 1; s < 4; ++s)
      for (unsigned r = 0; r < IB_PORTS; ++r) stall += d.cluster().ib().cable(s, r).end_a().tx_stats().credit_stall;
    for (unsigned r = 0; r < IB_PORTS; ++r) stall += d.cluster().ib().cable(0, r).end_b().tx_stats().credit_stall;
    EXPECT_GT(stall, sc_core::SC_ZERO_TIME);
    std::printf("incast: %.2f GB/s into one node, credit stall %.1f us\n", gbps, stall.to_seconds() * 1e6);
  });
}

}  // namespace
}  // namespace p2::test

namespace p2::test {
namespace {

// Rules between IB parameters are refused where the `device ib` line is.
TEST(IbConfig, RulesRefusedAtTheDeviceLine) {
  Params p;
  p.ib_host_cpl_bytes = 512;  // above the slot's 256 B MPS
  Topology t = ib_topology(2);
  try {
    Cluster c(t, p, RoutingPolicy::RingFirst);
    FAIL() << "accepted";
  } catch (const ConfigError& e) {
    EXPECT_NE(std::string(e.what()).find("ib_host_cpl_bytes = 512 exceeds ib_pcie_max_payload_bytes = 256"),
              std::string::npos)
        << e.what();
  }
}

// Issue 18: a rule broken by a value from the parameter file names that file's
// line, not the topology's `device ib` line (which the user did not write).
TEST(IbConfig, RulesBlameTheParameterFileLine) {
  char dir[] = "/tmp/p2ibrules-XXXXXX";
  ASSERT_NE(mkdtemp(dir), nullptr);
  const std::string params_file = std::string(dir) + "/p.params", topo_file = std::string(dir) + "/t.topo";
  std::ofstream(params_file) << "# a bigger completion\nib_host_cpl_bytes = 512\n";
  std::ofstream(topo_file) << "ring 2\ndevice peach2\ndevice ib\n";
  Params p;
  load_params_file(p, params_file);
  Topology t = load_topology(topo_file, p);
  std::string what;
  try {
    Cluster c(t, p, RoutingPolicy::RingFirst);
  } catch (const ConfigError& e) {
    what = e.what();
  }
  std::remove(params_file.c_str());
  std::remove(topo_file.c_str());
  rmdir(dir);
  EXPECT_EQ(what, params_file + ":2: device ib: ib_host_cpl_bytes = 512 exceeds ib_pcie_max_payload_bytes = 256: "
                                "a completion carries at most the max payload");
}

// Model figures beyond the calibrated two, for the MPI layer: an RDMA write
// from doorbell to completion, on rail 0 and on both rails. Golden: the
// figures this test printed (GB/s, to the printed three decimals) with the
// default parameters (params.def) when it was made to check them; a change
// means the IB model's timing changed: look at why before updating.
TEST(IbCalibration, SingleRailAndSizes) {
  struct Golden {
    uint32_t len;
    uint8_t rail;
    const char* gbps;
  };
  static const Golden golden[] = {
      {4096u, 0, "1.241"},     {4096u, IB_RAIL_ANY, "1.241"},
      {65536u, 0, "3.474"},    {65536u, IB_RAIL_ANY, "4.858"},
      {1u << 20, 0, "3.916"},  {1u << 20, IB_RAIL_ANY, "5.834"},
      {4u << 20, 0, "3.941"},  {4u << 20, IB_RAIL_ANY, "5.893"},
  };
  with_ib_cluster(ib_topology(2), Params(), [](IbDriver& d) {
    d.setup_all();
    size_t row = 0;
    for (uint32_t len : {4096u, 65536u, 1u << 20, 4u << 20})
      for (uint8_t rail : {uint8_t(0), uint8_t(IB_RAIL_ANY)}) {
        const sc_time t = sc_time_stamp();
        d.post_send(0, wqe(IB_OP_RDMA_WRITE, 1, ib_host(0, 0x1000000), len, ib_host(1, 0x1000000), rail));
        d.next_cqe(0);
        const double gbps = len / ((sc_time_stamp() - t).to_seconds() * 1e9);
        std::printf("ib RDMA write %8u B, %s: %.3f GB/s (doorbell to completion)\n", len,
                    rail == 0 ? "rail 0   " : "both rails", gbps);
        char printed[32];
        std::snprintf(printed, sizeof printed, "%.3f", gbps);
        ASSERT_LT(row, std::size(golden));
        EXPECT_EQ(len, golden[row].len);
        EXPECT_EQ(rail, golden[row].rail);
        EXPECT_STREQ(printed, golden[row].gbps) << len << " B, rail " << unsigned(rail);
        ++row;
        wait(sc_time(2, sc_core::SC_US));
      }
    EXPECT_EQ(row, std::size(golden));
  });
}

}  // namespace
}  // namespace p2::test
