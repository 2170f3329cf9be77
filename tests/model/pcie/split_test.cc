// split_test.cc - the PCIe splitting rules: requests never cross 4 KiB and
// stay within MPS/MRRS; completions split only at RCB-aligned addresses.
#include <gtest/gtest.h>

#include <algorithm>
#include <vector>

#include "pcie/link.h"

namespace p2 {

bool operator==(const Span& x, const Span& y) { return x.addr == y.addr && x.length == y.length; }
std::ostream& operator<<(std::ostream& os, const Span& s) {
  return os << "{0x" << std::hex << s.addr << std::dec << ", " << s.length << "}";
}

namespace {

constexpr uint64_t k4K = 4096;
using Spans = std::vector<Span>;

// The spans tile [addr, addr+len) in order.
void expect_tiles(const Spans& spans, uint64_t addr, uint64_t len) {
  uint64_t next = addr;
  for (const Span& s : spans) {
    EXPECT_EQ(s.addr, next);
    EXPECT_GT(s.length, 0u);
    next += s.length;
  }
  EXPECT_EQ(next, addr + len);
}

TEST(SplitWrite, BoundaryCases) {
  EXPECT_EQ(split_write(0, 0, 256), Spans{});
  EXPECT_EQ(split_write(0, 1000, 256), (Spans{{0, 256}, {256, 256}, {512, 256}, {768, 232}}));
  // Crosses 4 KiB: cut there even though MPS would allow more.
  EXPECT_EQ(split_write(k4K - 16, 32, 256), (Spans{{k4K - 16, 16}, {k4K, 16}}));
  EXPECT_EQ(split_write(k4K - 128, 512, 256),
            (Spans{{k4K - 128, 128}, {k4K, 256}, {k4K + 256, 128}}));
  // Unaligned start: MPS-sized pieces from there on.
  EXPECT_EQ(split_write(0x10, 512, 256), (Spans{{0x10, 256}, {0x110, 256}}));
  EXPECT_THROW(split_write(0, 8, 0), std::invalid_argument);
}

TEST(SplitRead, BoundaryCases) {
  EXPECT_EQ(split_read(0, 1024, 512), (Spans{{0, 512}, {512, 512}}));
  EXPECT_EQ(split_read(k4K - 8, 16, 512), (Spans{{k4K - 8, 8}, {k4K, 8}}));
  EXPECT_EQ(split_read(0x1'0000'0000 - 256, 1024, 512),
            (Spans{{0x1'0000'0000 - 256, 256}, {0x1'0000'0000, 512}, {0x1'0000'0200, 256}}));
}

TEST(SplitRequests, InvariantsOverASweep) {
  for (uint32_t max : {128u, 256u, 512u}) {
    for (uint64_t addr : {0ull, 1ull, 4ull, 60ull, 64ull, 100ull, 4000ull, 4095ull, 8190ull}) {
      for (uint64_t len : {1ull, 7ull, 64ull, 255ull, 256ull, 257ull, 4096ull, 10000ull}) {
        for (const Spans& spans : {split_write(addr, len, max), split_read(addr, len, max)}) {
          expect_tiles(spans, addr, len);
          for (const Span& s : spans) {
            EXPECT_LE(s.length, max);
            EXPECT_EQ(s.addr / k4K, (s.addr + s.length - 1) / k4K) << "crosses 4 KiB";
          }
          // Greedy: only the cuts the rules force.
          EXPECT_LE(spans.size(), (len + max - 1) / max + (addr % k4K + len + k4K - 1) / k4K);
        }
      }
    }
  }
}

TEST(SplitCompletions, RcbCases) {
  // Aligned: pieces of max_cpl.
  EXPECT_EQ(split_completions(0, 512, 256, 64), (Spans{{0, 256}, {256, 256}}));
  // Unaligned: the first ends on an RCB boundary, the rest start on one.
  EXPECT_EQ(split_completions(0x10, 512, 256, 64), (Spans{{0x10, 240}, {0x100, 256}, {0x200, 16}}));
  // max_cpl equal to the RCB.
  EXPECT_EQ(split_completions(0x30, 64, 64, 64), (Spans{{0x30, 16}, {0x40, 48}}));
  // A short read across an RCB boundary needs no split.
  EXPECT_EQ(split_completions(0x3f, 2, 256, 64), (Spans{{0x3f, 2}}));
  EXPECT_EQ(split_completions(0x1000, 8, 256, 64), (Spans{{0x1000, 8}}));
  EXPECT_EQ(split_completions(0, 0, 256, 64), Spans{});
  EXPECT_THROW(split_completions(0, 8, 100, 64), std::invalid_argument);
  EXPECT_THROW(split_completions(0, 8, 256, 0), std::invalid_argument);
}

TEST(SplitCompletions, InvariantsOverASweep) {
  for (uint32_t rcb : {64u, 128u}) {
    for (uint32_t max_cpl : {rcb, 2 * rcb, 256u, 512u}) {
      if (max_cpl % rcb) continue;
      for (uint64_t addr : {0ull, 4ull, 60ull, 64ull, 100ull, 4092ull}) {
        for (uint32_t len : {4u, 60u, 64u, 128u, 300u, 512u, 4096u}) {
          const Spans spans = split_completions(addr, len, max_cpl, rcb);
          expect_tiles(spans, addr, len);
          for (size_t i = 0; i < spans.size(); ++i) {
            EXPECT_LE(spans[i].length, max_cpl);
            if (i > 0) {
              EXPECT_EQ(spans[i].addr % rcb, 0u);
            }
            if (i + 1 < spans.size()) {
              EXPECT_EQ((spans[i].addr + spans[i].length) % rcb, 0u);
            }
          }
          // As few completions as the rules allow: all but the first are full
          // unless last, and the first is as long as an RCB-aligned end permits.
          const uint64_t first_end = std::min<uint64_t>(addr + len, (addr + max_cpl) / rcb * rcb);
          EXPECT_EQ(spans.front().length, first_end - addr);
          for (size_t i = 1; i + 1 < spans.size(); ++i) EXPECT_EQ(spans[i].length, max_cpl);
        }
      }
    }
  }
}

}  // namespace
}  // namespace p2
