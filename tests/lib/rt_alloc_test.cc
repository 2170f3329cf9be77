// The runtime's GPU pool (rt/rt_alloc.h), shared by tcaMalloc and the CUDA
// layer: binding keeps blocks, the last unbind empties, lookups find the
// block holding a range, flags follow blocks; and tca_arena_lookup under it.
#include <gtest/gtest.h>

#include <vector>

#include "rt/rt_alloc.h"
#include "tca_alloc.h"

namespace {

TEST(TcaAlloc, LookupFindsTheUsedBlockHoldingAnOffset)
{
    tca_arena a{};
    ASSERT_EQ(tca_arena_init(&a, 4096), TCA_ARENA_OK);
    uint64_t x, y;
    ASSERT_EQ(tca_arena_alloc(&a, 100, &x), TCA_ARENA_OK);  // [0, 128)
    ASSERT_EQ(tca_arena_alloc(&a, 64, &y), TCA_ARENA_OK);   // [128, 192)
    ASSERT_NE(tca_arena_lookup(&a, 127), nullptr);
    EXPECT_EQ(tca_arena_lookup(&a, 127)->offset, x);
    EXPECT_EQ(tca_arena_lookup(&a, 128)->offset, y);
    EXPECT_EQ(tca_arena_lookup(&a, 192), nullptr);   // the free tail
    EXPECT_EQ(tca_arena_lookup(&a, 1 << 20), nullptr);
    ASSERT_EQ(tca_arena_free(&a, x), TCA_ARENA_OK);
    EXPECT_EQ(tca_arena_lookup(&a, 0), nullptr);     // freed
    tca_arena_fini(&a);
}

TEST(TcaAlloc, AlignedBlocksLeaveTheGapFreeAndCoalesce)
{
    tca_arena a;
    ASSERT_EQ(tca_arena_init(&a, 4096), TCA_ARENA_OK);
    uint64_t x, y, z, w;
    ASSERT_EQ(tca_arena_alloc(&a, 64, &x), TCA_ARENA_OK);
    ASSERT_EQ(tca_arena_alloc_aligned(&a, 100, 256, &y), TCA_ARENA_OK);
    EXPECT_EQ(x, 0u);
    EXPECT_EQ(y, 256u) << "the first multiple of 256 past the used block";
    ASSERT_EQ(tca_arena_alloc(&a, 128, &z), TCA_ARENA_OK);
    EXPECT_EQ(z, 64u) << "the gap before the aligned block stays free (first fit)";
    EXPECT_EQ(tca_arena_alloc_aligned(&a, 64, 100, &w), TCA_ARENA_NO_SPACE) << "not a power of two";
    EXPECT_EQ(tca_arena_alloc_aligned(&a, 4096 - 256, 256, &w), TCA_ARENA_NO_SPACE);
    ASSERT_EQ(tca_arena_free(&a, y), TCA_ARENA_OK);
    ASSERT_EQ(tca_arena_free(&a, z), TCA_ARENA_OK);
    ASSERT_EQ(tca_arena_alloc(&a, 4096 - 64, &w), TCA_ARENA_OK) << "gaps coalesced";
    EXPECT_EQ(w, 64u);
    EXPECT_EQ(tca_arena_used(&a), 4096u);
    tca_arena_fini(&a);
}

TEST(RtGpuPool, SharedBetweenUsersAndEmptiedByTheLast)
{
    std::vector<uint8_t> mem(1 << 16);
    ASSERT_EQ(p2_rt_gpu_bind(mem.data(), mem.size(), P2_RT_GPU_USER_CUDA), P2_RT_ALLOC_OK);
    uint64_t c, t;
    ASSERT_EQ(p2_rt_gpu_alloc(1000, P2_RT_GPU_BLOCK_CUDA, &c), P2_RT_ALLOC_OK);
    // A second user binding the same memory keeps the first one's block.
    ASSERT_EQ(p2_rt_gpu_bind(mem.data(), mem.size(), P2_RT_GPU_USER_TCA), P2_RT_ALLOC_OK);
    ASSERT_EQ(p2_rt_gpu_alloc(1000, 0, &t), P2_RT_ALLOC_OK);
    EXPECT_GE(t, c + 1000);  // never overlapping
    uint64_t c2;
    ASSERT_EQ(p2_rt_gpu_alloc(64, P2_RT_GPU_BLOCK_CUDA, &c2), P2_RT_ALLOC_OK);
    EXPECT_EQ(c2 % 256, 0u) << "cudaMalloc's blocks are 256-byte aligned";
    EXPECT_GE(c2, t + 1000);
    ASSERT_EQ(p2_rt_gpu_free(c2), P2_RT_ALLOC_OK);
    uint64_t start = 0, size = 0;
    unsigned flags = 0;
    EXPECT_EQ(p2_rt_gpu_find(c + 10, 990, &start, &size, &flags), P2_RT_ALLOC_OK);
    EXPECT_EQ(start, c);
    EXPECT_EQ(flags, (unsigned)P2_RT_GPU_BLOCK_CUDA);
    EXPECT_EQ(p2_rt_gpu_find(c + 10, 2000, nullptr, nullptr, nullptr),
              P2_RT_ALLOC_NOT_ALLOCATED);  // runs past the block
    EXPECT_EQ(p2_rt_gpu_set_flags(c, P2_RT_GPU_BLOCK_REGISTERED), P2_RT_ALLOC_OK);
    EXPECT_EQ(p2_rt_gpu_find(c, 1, nullptr, nullptr, &flags), P2_RT_ALLOC_OK);
    EXPECT_EQ(flags, (unsigned)(P2_RT_GPU_BLOCK_CUDA | P2_RT_GPU_BLOCK_REGISTERED));
    // cudaDeviceReset frees CUDA's blocks only.
    p2_rt_gpu_free_all(P2_RT_GPU_BLOCK_CUDA);
    EXPECT_EQ(p2_rt_gpu_find(c, 1, nullptr, nullptr, nullptr), P2_RT_ALLOC_NOT_ALLOCATED);
    EXPECT_EQ(p2_rt_gpu_find(t, 1, nullptr, nullptr, nullptr), P2_RT_ALLOC_OK);
    p2_rt_gpu_unbind(P2_RT_GPU_USER_CUDA);
    EXPECT_EQ(p2_rt_gpu_find(t, 1, nullptr, nullptr, nullptr), P2_RT_ALLOC_OK);
    p2_rt_gpu_unbind(P2_RT_GPU_USER_TCA);
    EXPECT_EQ(p2_rt_gpu_base(), nullptr);
    EXPECT_EQ(p2_rt_gpu_alloc(64, 0, &t), P2_RT_ALLOC_UNBOUND);
}

}  // namespace
