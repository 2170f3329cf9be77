// The arena allocator: first fit, alignment, coalescing, and its errors.
#include <gtest/gtest.h>

#include <vector>

#include "tca_alloc.h"

namespace {

struct Arena {
    tca_arena a{};
    explicit Arena(uint64_t size) { EXPECT_EQ(tca_arena_init(&a, size), TCA_ARENA_OK); }
    ~Arena() { tca_arena_fini(&a); }
    uint64_t alloc(uint64_t size)
    {
        uint64_t off = ~0ull;
        EXPECT_EQ(tca_arena_alloc(&a, size, &off), TCA_ARENA_OK) << size;
        return off;
    }
};

TEST(TcaAlloc, BlocksAreAlignedAndPacked)
{
    Arena ar(4096);
    EXPECT_EQ(ar.alloc(1), 0u);
    EXPECT_EQ(ar.alloc(64), 64u);
    EXPECT_EQ(ar.alloc(65), 128u);
    EXPECT_EQ(ar.alloc(8), 256u);
    EXPECT_EQ(tca_arena_used(&ar.a), 64u + 64 + 128 + 64);
}

TEST(TcaAlloc, FirstFitReusesTheEarliestHole)
{
    Arena ar(4096);
    uint64_t a = ar.alloc(256), b = ar.alloc(256), c = ar.alloc(256);
    (void)c;
    EXPECT_EQ(tca_arena_free(&ar.a, a), TCA_ARENA_OK);
    EXPECT_EQ(tca_arena_free(&ar.a, b), TCA_ARENA_OK);
    // a and b merged into one 512-byte hole at 0: a 384-byte block fits there.
    EXPECT_EQ(ar.alloc(384), 0u);
    EXPECT_EQ(ar.alloc(128), 384u);
    EXPECT_EQ(ar.alloc(64), 768u);
}

TEST(TcaAlloc, FreeingEverythingCoalescesToOneBlock)
{
    Arena ar(1 << 16);
    std::vector<uint64_t> offs;
    for (int i = 0; i < 32; i++)
        offs.push_back(ar.alloc(100 + i * 64));
    // Free in an interleaved order so both merge directions are exercised.
    for (size_t i = 0; i < offs.size(); i += 2)
        EXPECT_EQ(tca_arena_free(&ar.a, offs[i]), TCA_ARENA_OK);
    for (size_t i = 1; i < offs.size(); i += 2)
        EXPECT_EQ(tca_arena_free(&ar.a, offs[i]), TCA_ARENA_OK);
    EXPECT_EQ(ar.a.count, 1u);
    EXPECT_EQ(tca_arena_used(&ar.a), 0u);
    EXPECT_EQ(ar.alloc(1 << 16), 0u);  // the whole arena again
}

TEST(TcaAlloc, ExhaustionAndOversizeSayNoSpace)
{
    Arena ar(1024);
    uint64_t off;
    EXPECT_EQ(tca_arena_alloc(&ar.a, 2048, &off), TCA_ARENA_NO_SPACE);
    EXPECT_EQ(tca_arena_alloc(&ar.a, UINT64_MAX, &off), TCA_ARENA_NO_SPACE);
    EXPECT_EQ(ar.alloc(1024), 0u);
    off = 77;
    EXPECT_EQ(tca_arena_alloc(&ar.a, 1, &off), TCA_ARENA_NO_SPACE);
    EXPECT_EQ(off, 77u) << "output untouched on failure";
    EXPECT_EQ(tca_arena_alloc(&ar.a, 0, &off), TCA_ARENA_NO_SPACE);
}

TEST(TcaAlloc, BadFreesAreRefused)
{
    Arena ar(4096);
    uint64_t a = ar.alloc(128);
    EXPECT_EQ(tca_arena_free(&ar.a, a + 64), TCA_ARENA_NOT_ALLOCATED);   // inside a block
    EXPECT_EQ(tca_arena_free(&ar.a, 128), TCA_ARENA_NOT_ALLOCATED);      // the free tail
    EXPECT_EQ(tca_arena_free(&ar.a, 1 << 20), TCA_ARENA_NOT_ALLOCATED);  // beyond the arena
    EXPECT_EQ(tca_arena_free(&ar.a, a), TCA_ARENA_OK);
    EXPECT_EQ(tca_arena_free(&ar.a, a), TCA_ARENA_NOT_ALLOCATED);        // twice
}

TEST(TcaAlloc, ArenaSizeRoundsDownAndMayBeEmpty)
{
    Arena odd(1000);
    EXPECT_EQ(odd.a.size, 960u);
    Arena empty(0);
    uint64_t off;
    EXPECT_EQ(tca_arena_alloc(&empty.a, 1, &off), TCA_ARENA_NO_SPACE);
    EXPECT_EQ(tca_arena_free(&empty.a, 0), TCA_ARENA_NOT_ALLOCATED);
}

TEST(TcaAlloc, SameCallsGiveSameOffsets)
{
    auto run = [] {
        Arena ar(1 << 20);
        std::vector<uint64_t> out;
        uint64_t keep[8];
        for (int i = 0; i < 8; i++)
            keep[i] = ar.alloc(1000 * (i + 1));
        for (int i = 0; i < 8; i += 3)
            tca_arena_free(&ar.a, keep[i]);
        for (int i = 0; i < 8; i++)
            out.push_back(ar.alloc(500 * (i + 1)));
        return out;
    };
    EXPECT_EQ(run(), run());
}

}  // namespace
