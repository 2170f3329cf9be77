// Descriptor building (a pure function): fields of 1-D and block-stride
// descriptors, chain links, and every validation error, without a device.
#include <gtest/gtest.h>

#include "tca_internal.h"

namespace {

constexpr unsigned kSelf = 1, kNodes = 4;

tcaHandle host_handle(unsigned node, uint64_t off, uint64_t size)
{
    return tca_handle_make(p2_node_base(node) + P2_HOST_OFFSET + off, size, tcaMemoryCPU, node);
}

tcaHandle gpu_handle(unsigned node, uint64_t off, uint64_t size)
{
    return tca_handle_make(p2_node_base(node) + P2_GPU_OFFSET + off, size, tcaMemoryGPU, node);
}

struct TcaDescBuild : ::testing::Test {
    tcaHandle src = host_handle(kSelf, 0x1000, 4096);
    tcaHandle dst = gpu_handle(2, 0x2000, 8192);
    tca_transfer t{};
    void SetUp() override
    {
        t.dst = &dst;
        t.src = &src;
        t.width = 64;
        t.count = 1;
    }
    tcaresult build(p2_desc *d) { return tca_desc_build(&t, kSelf, kNodes, d); }
    tcaresult build()
    {
        p2_desc d;
        return build(&d);
    }
};

TEST_F(TcaDescBuild, PlainTransferFields)
{
    t.dst_offset = 8;
    t.src_offset = 16;
    t.width = 100;
    t.flags = tcaDMANotify | tcaDMAPipeline | tcaDMAUseNotifyInternal;
    t.wait_slot = 5;
    t.wait_tag = 0x100;
    p2_desc d;
    ASSERT_EQ(build(&d), TCA_SUCCESS);
    EXPECT_EQ(d.src, p2_node_base(kSelf) + P2_HOST_OFFSET + 0x1000 + 16);
    EXPECT_EQ(d.dst, p2_node_base(2) + P2_GPU_OFFSET + 0x2000 + 8);
    EXPECT_EQ(d.length, 100u);
    EXPECT_EQ(d.flags, P2_DESC_NOTIFY | P2_DESC_PIPELINE);
    EXPECT_EQ(d.block_count, 1u);
    EXPECT_EQ(d.src_stride, 0u);
    EXPECT_EQ(d.dst_stride, 0u);
    EXPECT_EQ(d.wait_slot, 5u);
    EXPECT_EQ(d.wait_tag, 0x100u);
    EXPECT_EQ(d.reserved0, 0u);
    EXPECT_EQ(d.reserved1, 0u);
    EXPECT_EQ(d.next, 0u);
}

TEST_F(TcaDescBuild, NotifySelfMapsToItsBit)
{
    p2_desc d;
    t.flags = tcaDMANotifySelf;
    ASSERT_EQ(build(&d), TCA_SUCCESS);
    EXPECT_EQ(d.flags, P2_DESC_NOTIFY_SELF);
    t.flags = tcaDMANotify | tcaDMANotifySelf | tcaDMAUseInternal;
    ASSERT_EQ(build(&d), TCA_SUCCESS);
    EXPECT_EQ(d.flags, P2_DESC_NOTIFY | P2_DESC_NOTIFY_SELF);
}

TEST_F(TcaDescBuild, BlockStrideFields)
{
    t.block_stride = 1;
    t.width = 32;
    t.count = 10;
    t.src_pitch = 256;
    t.dst_pitch = 512;
    p2_desc d;
    ASSERT_EQ(build(&d), TCA_SUCCESS);
    EXPECT_EQ(d.flags, P2_DESC_BLOCK_STRIDE);
    EXPECT_EQ(d.length, 32u);
    EXPECT_EQ(d.block_count, 10u);
    EXPECT_EQ(d.src_stride, 256u);
    EXPECT_EQ(d.dst_stride, 512u);
}

TEST_F(TcaDescBuild, BlockStrideLastBlockMustFit)
{
    t.block_stride = 1;
    t.width = 64;
    t.src_pitch = 448;  // 9 * 448 + 64 = 4096: exactly fills the source
    t.count = 10;
    EXPECT_EQ(build(), TCA_SUCCESS);
    t.src_offset = 1;
    EXPECT_EQ(build(), TCA_ERROR_OUT_OF_RANGE);
    t.src_offset = 0;
    t.count = 11;
    EXPECT_EQ(build(), TCA_ERROR_OUT_OF_RANGE);
    t.count = 2;
    t.dst_pitch = UINT64_MAX;  // overflow must not wrap into range
    EXPECT_EQ(build(), TCA_ERROR_OUT_OF_RANGE);
}

TEST_F(TcaDescBuild, RangeChecks)
{
    t.width = 4096;
    EXPECT_EQ(build(), TCA_SUCCESS);
    t.width = 4097;
    EXPECT_EQ(build(), TCA_ERROR_OUT_OF_RANGE);
    t.width = 1;
    t.src_offset = 4096;
    EXPECT_EQ(build(), TCA_ERROR_OUT_OF_RANGE);
    t.src_offset = UINT64_MAX;
    EXPECT_EQ(build(), TCA_ERROR_OUT_OF_RANGE);
    t.src_offset = 0;
    t.dst_offset = 8192;
    EXPECT_EQ(build(), TCA_ERROR_OUT_OF_RANGE);
}

TEST_F(TcaDescBuild, ZeroSizeIsABadArgument)
{
    t.width = 0;
    EXPECT_EQ(build(), TCA_ERROR_INVALID_ARGUMENT);
    t.width = 8;
    t.block_stride = 1;
    t.count = 0;
    EXPECT_EQ(build(), TCA_ERROR_INVALID_ARGUMENT);
}

TEST_F(TcaDescBuild, TooLargeForOneDescriptor)
{
    tcaHandle big_src = host_handle(kSelf, 0, 1ull << 33);
    tcaHandle big_dst = host_handle(0, 0, 1ull << 33);
    t.src = &big_src;
    t.dst = &big_dst;
    t.width = (uint64_t)P2_DESC_MAX_LENGTH + 1;
    EXPECT_EQ(build(), TCA_ERROR_TOO_LARGE);
    t.width = P2_DESC_MAX_LENGTH;
    EXPECT_EQ(build(), TCA_SUCCESS);
    t.width = 1;
    t.block_stride = 1;
    t.count = (uint64_t)UINT32_MAX + 1;
    EXPECT_EQ(build(), TCA_ERROR_TOO_LARGE);
}

TEST_F(TcaDescBuild, SlotTagAndFlagChecks)
{
    t.wait_slot = P2_NOTIFY_SLOTS - 1;
    t.wait_tag = (int)P2_NOTIFY_TAG_MAX;
    EXPECT_EQ(build(), TCA_SUCCESS);
    t.wait_slot = P2_NOTIFY_SLOTS;
    EXPECT_EQ(build(), TCA_ERROR_INVALID_SLOT);
    t.wait_slot = -1;
    EXPECT_EQ(build(), TCA_ERROR_INVALID_SLOT);
    t.wait_slot = 0;
    t.wait_tag = (int)P2_NOTIFY_TAG_MAX + 1;
    EXPECT_EQ(build(), TCA_ERROR_INVALID_TAG);
    t.wait_tag = -1;
    EXPECT_EQ(build(), TCA_ERROR_INVALID_TAG);
    t.wait_tag = 0;
    t.flags = 1 << 20;
    EXPECT_EQ(build(), TCA_ERROR_INVALID_FLAGS);
}

TEST_F(TcaDescBuild, SourceMustBeLocal)
{
    std::swap(t.src, t.dst);  // source now on node 2
    t.width = 8;
    EXPECT_EQ(build(), TCA_ERROR_REMOTE_SOURCE);
}

TEST_F(TcaDescBuild, BadHandlesAreRefused)
{
    p2_desc d;
    t.src = nullptr;
    EXPECT_EQ(build(&d), TCA_ERROR_INVALID_HANDLE);
    t.src = &src;

    tcaHandle forged = dst;
    forged.size *= 2;  // fields no longer match the validity word
    t.dst = &forged;
    EXPECT_EQ(build(&d), TCA_ERROR_INVALID_HANDLE);

    tcaHandle zero{};
    t.dst = &zero;
    EXPECT_EQ(build(&d), TCA_ERROR_INVALID_HANDLE);

    tcaHandle far = host_handle(kNodes, 0, 64);  // beyond the cluster
    t.dst = &far;
    EXPECT_EQ(build(&d), TCA_ERROR_INVALID_HANDLE);

    tcaHandle destroyed = dst;
    ASSERT_EQ(tcaDestroyHandle(&destroyed), TCA_SUCCESS);
    t.dst = &destroyed;
    EXPECT_EQ(build(&d), TCA_ERROR_INVALID_HANDLE);
    EXPECT_EQ(tcaDestroyHandle(&destroyed), TCA_ERROR_INVALID_HANDLE);

    // Consistent word, but the address lies in the wrong window for the kind.
    tcaHandle wrong_window =
        tca_handle_make(p2_node_base(2) + P2_GPU_OFFSET, 64, tcaMemoryCPU, 2);
    t.dst = &wrong_window;
    EXPECT_EQ(build(&d), TCA_ERROR_INVALID_HANDLE);
    tcaHandle wrong_node = tca_handle_make(p2_node_base(3), 64, tcaMemoryCPU, 2);
    t.dst = &wrong_node;
    EXPECT_EQ(build(&d), TCA_ERROR_INVALID_HANDLE);
}

TEST(TcaDescLink, ChainsConsecutiveDescriptors)
{
    p2_desc d[3] = {};
    const uint64_t base = p2_node_base(1) + 0x4000;
    tca_desc_link(d, 3, base);
    EXPECT_EQ(d[0].next, base + P2_DESC_SIZE);
    EXPECT_EQ(d[1].next, base + 2 * P2_DESC_SIZE);
    EXPECT_EQ(d[2].next, 0u);
    tca_desc_link(d, 1, base);
    EXPECT_EQ(d[0].next, 0u);
}

}  // namespace
