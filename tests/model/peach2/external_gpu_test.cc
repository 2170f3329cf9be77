// GPU window ranges backed by memory outside the arena (the real CUDA path,
// lib/cuda/README.md): the model moves their bytes through ExternalGpuMemory at
// exactly the times it moves the arena's. A fake stands in for the GPU here;
// the CUDA IPC implementation itself needs a GPU (ranks.cuda.real).
#include <gtest/gtest.h>

#include <vector>

#include "harness.h"
#include "sim/cuda_ipc.h"

namespace p2::test {
namespace {

using sc_core::sc_time;
using sc_core::sc_time_stamp;

// One range [start, start + bytes.size()) of the GPU window, in a buffer of its own.
class FakeGpu : public ExternalGpuMemory {
 public:
  FakeGpu(uint64_t start, uint64_t len) : start_(start), bytes(len) {}
  bool covers(uint64_t off, uint64_t len) const override {
    return off < start_ + bytes.size() && start_ < off + len;
  }
  bool read(uint64_t off, uint8_t* dst, uint64_t len) override {
    if (!inside(off, len) || refuse) return false;
    std::memcpy(dst, bytes.data() + (off - start_), len);
    reads++;
    return true;
  }
  bool write(uint64_t off, const uint8_t* src, uint64_t len) override {
    if (!inside(off, len) || refuse) return false;
    std::memcpy(bytes.data() + (off - start_), src, len);
    writes++;
    return true;
  }
  bool inside(uint64_t off, uint64_t len) const {
    return off >= start_ && len <= bytes.size() && off - start_ <= bytes.size() - len;
  }
  uint64_t start_;
  std::vector<uint8_t> bytes;
  int reads = 0, writes = 0;
  bool refuse = false;
};

constexpr uint64_t kOff = 0x100000, kLen = 65536;

// 64 KiB GPU to GPU, node 0 to node 1; the time until the last byte landed.
uint64_t gpu_dma(Driver& d, uint64_t src_off, uint64_t dst_off, uint32_t len) {
  Cluster& c = d.cluster();
  const uint64_t before = c.host(1).stats().write_bytes + c.host(1).stats().dropped_writes;
  d.put_desc(host_addr(0, 0x1000), desc(gpu_addr(0, src_off), gpu_addr(1, dst_off), len));
  // Both runs start at the same phase of every clock: on a 10 us boundary.
  const uint64_t period = sc_time(10, sc_core::SC_US).value();
  wait(sc_time::from_value(period - sc_time_stamp().value() % period));
  sc_time t = sc_time_stamp();
  const uint64_t runs = d.peek(0, P2_REG_DMA(0, P2_DMA_RUNS));
  d.start_chain(0, 0, host_addr(0, 0x1000));
  d.wait_channel(0, 0, runs);
  d.wait_until([&] { return c.host(1).stats().write_bytes - before >= len; });
  return (sc_time_stamp() - t).value();
}

TEST(ExternalGpu, BytesThroughTheBackingAtTheArenasTimes) {
  FakeGpu src(kOff, kLen), dst(kOff, kLen);
  fill_pattern(src.bytes.data(), kLen, 9);
  uint64_t arena_ps = 0, external_ps = 0;
  with_cluster(make_torus(2, 2), Params{}, [&](Driver& d) {
    Cluster& c = d.cluster();
    fill_pattern(d.mem(gpu_addr(0, kOff), kLen), kLen, 3);
    arena_ps = gpu_dma(d, kOff, kOff, kLen);
    uint8_t* arena1 = d.mem(gpu_addr(1, kOff), kLen);  // translate() hides it once external
    ASSERT_EQ(std::memcmp(arena1, d.mem(gpu_addr(0, kOff), kLen), kLen), 0);

    c.host(0).set_external_gpu(&src);
    c.host(1).set_external_gpu(&dst);
    EXPECT_EQ(c.host(1).translate(gpu_addr(1, kOff), 8), nullptr) << "no arena bytes there";
    external_ps = gpu_dma(d, kOff, kOff, kLen);
    // The destination's bytes are the source's backing, not the arena's.
    EXPECT_EQ(dst.bytes, src.bytes);
    EXPECT_GT(src.reads, 0);
    EXPECT_GT(dst.writes, 0);
    std::vector<uint8_t> arena(arena1, arena1 + kLen);
    std::vector<uint8_t> first(kLen);
    fill_pattern(first.data(), kLen, 3);
    EXPECT_EQ(arena, first) << "the arena under an external range is left alone";
    uint64_t word = 0;
    ASSERT_TRUE(c.host(1).read(gpu_addr(1, kOff + 8), reinterpret_cast<uint8_t*>(&word), 8));
    EXPECT_EQ(std::memcmp(&word, src.bytes.data() + 8, 8), 0) << "Host::read reaches it";

    // A write crossing the range's end is refused and counted, not split.
    // The DMAC cuts writes at aligned boundaries, which the range's own end
    // is: a range ending 16 bytes short of one makes a write that crosses.
    FakeGpu edge(kOff, kLen - 16);
    c.host(1).set_external_gpu(&edge);
    const uint64_t dropped = c.host(1).stats().dropped_writes;
    d.put_desc(host_addr(0, 0x1000), desc(host_addr(0, 0x20000), gpu_addr(1, kOff + kLen - 64), 128));
    const uint64_t runs = d.peek(0, P2_REG_DMA(0, P2_DMA_RUNS));
    d.start_chain(0, 0, host_addr(0, 0x1000));
    d.wait_channel(0, 0, runs);
    d.pass(sc_core::sc_time(10, sc_core::SC_US));  // a drop only counts: nothing to wait on
    EXPECT_EQ(c.host(1).stats().dropped_writes, dropped + 1);
    EXPECT_EQ(edge.writes, 0) << "nothing of the crossing write lands";
    c.host(1).set_external_gpu(&dst);

    // A backing that refuses a read fails the DMA instead of sending bytes.
    src.refuse = true;
    const uint64_t errors = c.chip(0).dmac().stats().errors;
    d.put_desc(host_addr(0, 0x1000), desc(gpu_addr(0, kOff), gpu_addr(1, 0), 64));
    const uint64_t runs2 = d.peek(0, P2_REG_DMA(0, P2_DMA_RUNS));
    d.start_chain(0, 0, host_addr(0, 0x1000));
    EXPECT_EQ(d.wait_channel(0, 0, runs2), P2_DMA_FAILED);
    EXPECT_GT(c.chip(0).dmac().stats().errors, errors);
    c.host(0).set_external_gpu(nullptr);
    c.host(1).set_external_gpu(nullptr);
  });
  EXPECT_GT(arena_ps, 0u);
  EXPECT_EQ(external_ps, arena_ps) << "the same mechanisms, the same time";
}

// Without a GPU (or with a handle no process exported) the simulator's CUDA
// IPC memory refuses the range with the reason and maps nothing.
TEST(ExternalGpu, CudaIpcRefusesWhatItCannotOpen) {
  CudaIpcMemory m(0);
  uint8_t handle[64] = {1, 2, 3};
  std::string why;
  EXPECT_FALSE(m.add(kOff, kLen, handle, 0, 0, &why));
  EXPECT_FALSE(why.empty());
  std::printf("refused: %s\n", why.c_str());
  EXPECT_EQ(m.ranges(), 0u);
  EXPECT_FALSE(m.covers(kOff, 8));
  EXPECT_FALSE(m.remove(kOff));
  why.clear();
  EXPECT_FALSE(m.add(kOff, 0, handle, 0, 0, &why));
  EXPECT_EQ(why, "an empty or wrapping range");
}

}  // namespace
}  // namespace p2::test
