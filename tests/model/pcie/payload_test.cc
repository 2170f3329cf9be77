// payload_test.cc - a TLP's payload (pcie/tlp.h): the bytes it is given, in
// its own buffer up to Payload::kInline and on the heap beyond, zeroes where
// resize() grows it, and copies that do not share bytes.
#include <gtest/gtest.h>

#include <cstdint>
#include <vector>

#include "pcie/tlp.h"

namespace p2 {
namespace {

std::vector<uint8_t> pattern(size_t n, uint8_t seed) {
  std::vector<uint8_t> v(n);
  for (size_t i = 0; i < n; ++i) v[i] = static_cast<uint8_t>(seed + 7 * i);
  return v;
}

std::vector<uint8_t> bytes_of(const Payload& p) { return {p.begin(), p.end()}; }

TEST(Payload, StartsEmpty) {
  Payload p;
  EXPECT_TRUE(p.empty());
  EXPECT_EQ(p.size(), 0u);
  EXPECT_EQ(p.begin(), p.end());
}

TEST(Payload, AssignKeepsTheBytesInlineAndOnTheHeap) {
  for (size_t n : {size_t{1}, size_t{64}, size_t{Payload::kInline}, size_t{Payload::kInline + 1},
                   size_t{4096}}) {
    const std::vector<uint8_t> want = pattern(n, static_cast<uint8_t>(n));
    Payload p;
    p.assign(want.data(), want.data() + n);
    EXPECT_EQ(p.size(), n);
    EXPECT_EQ(bytes_of(p), want) << n << " bytes";
  }
}

TEST(Payload, ResizeZeroesWhatItAddsAndKeepsWhatWasThere) {
  const std::vector<uint8_t> head = pattern(100, 3);
  Payload p;
  p.assign(head.data(), head.data() + head.size());
  p.resize(Payload::kInline + 300);  // moves to the heap
  ASSERT_EQ(p.size(), Payload::kInline + 300);
  for (size_t i = 0; i < head.size(); ++i) EXPECT_EQ(p[i], head[i]) << i;
  for (size_t i = head.size(); i < p.size(); ++i) ASSERT_EQ(p[i], 0) << i;
  p.resize(8);
  EXPECT_EQ(bytes_of(p), std::vector<uint8_t>(head.begin(), head.begin() + 8));
  // Shrunk, then grown again: the bytes beyond the old size read zero, not
  // what the buffer held before.
  p.resize(16);
  for (size_t i = 8; i < 16; ++i) EXPECT_EQ(p[i], 0) << i;
}

TEST(Payload, CopiesOwnTheirBytes) {
  for (size_t n : {size_t{32}, size_t{Payload::kInline * 2}}) {
    const std::vector<uint8_t> want = pattern(n, 11);
    Payload a;
    a.assign(want.data(), want.data() + n);
    Payload b(a);
    Payload c;
    c = a;
    a[0] = static_cast<uint8_t>(a[0] + 1);
    a.clear();
    EXPECT_EQ(bytes_of(b), want);
    EXPECT_EQ(bytes_of(c), want);
    EXPECT_TRUE(a.empty());
  }
}

TEST(Payload, ATlpCopyCarriesItsPayload) {
  const std::vector<uint8_t> want = pattern(256, 5);
  Tlp t;
  t.data.assign(want.data(), want.data() + want.size());
  Tlp copy = t;
  t.data.resize(0);
  EXPECT_EQ(bytes_of(copy.data), want);
}

}  // namespace
}  // namespace p2
