// The API's PIO calls against the fake device, and tcaFinalize.
#include "tca_device_fixture.h"

namespace tca_device_test {

TEST_F(TcaDevice, PioRegionMapsIntoTheWindowOfTheNode)
{
    tcaHandle dst = remote(2, 0x3000, 4096);
    tcaPIOHandle pio;
    ASSERT_EQ(tcaSetPIORegion(&pio, &dst, 0x100, 512), TCA_SUCCESS);
    EXPECT_EQ(pio.window_offset, p2_pio_offset(2, 0x3100));
    EXPECT_EQ(p2_pio_target(pio.window_offset), dst.pcie_addr + 0x100);
    EXPECT_EQ(pio.size, 512u);
    EXPECT_EQ(pio.node, 2u);

    const char msg[] = "hello, node 2";
    ASSERT_EQ(tcaSendPIO(&pio, 8, msg, sizeof msg), TCA_SUCCESS);
    ASSERT_EQ(tcaSendPIOCommit(), TCA_SUCCESS);
    ASSERT_EQ(fake.calls.size(), 2u);
    EXPECT_EQ(fake.calls[0].op, "pio_write");
    EXPECT_EQ(fake.calls[0].a, pio.window_offset + 8);
    EXPECT_EQ(fake.calls[0].b, sizeof msg);
    EXPECT_EQ(std::memcmp(fake.calls[0].data.data(), msg, sizeof msg), 0);
    EXPECT_EQ(fake.calls[1].op, "pio_commit");
}

TEST_F(TcaDevice, PioErrors)
{
    tcaPIOHandle pio{};
    tcaHandle dst = remote(2, 0, 4096);
    EXPECT_EQ(tcaSetPIORegion(nullptr, &dst, 0, 8), TCA_ERROR_INVALID_ARGUMENT);
    EXPECT_EQ(tcaSetPIORegion(&pio, nullptr, 0, 8), TCA_ERROR_INVALID_ARGUMENT);
    EXPECT_EQ(tcaSetPIORegion(&pio, &dst, 0, 0), TCA_ERROR_INVALID_ARGUMENT);
    EXPECT_EQ(tcaSetPIORegion(&pio, &dst, 4000, 100), TCA_ERROR_OUT_OF_RANGE);
    tcaHandle gpu = remote(2, 0, 4096, tcaMemoryGPU);
    EXPECT_EQ(tcaSetPIORegion(&pio, &gpu, 0, 8), TCA_ERROR_NOT_SUPPORTED);
    // A region past the memory a node exposes (every node exposes as much as
    // this one) is no valid handle, though it lies inside the 16 GiB window.
    tcaHandle high = remote(2, P2_PIO_NODE_SPAN - 64, 4096);
    EXPECT_EQ(tcaSetPIORegion(&pio, &high, 0, 64), TCA_ERROR_INVALID_HANDLE);
    tcaHandle past = remote(2, fake.dev.host_size - 32, 64);
    EXPECT_EQ(tcaSetPIORegion(&pio, &past, 0, 8), TCA_ERROR_INVALID_HANDLE);
    // Nodes exposing more than PIO reaches: the PIO span bounds the region.
    const uint64_t exposed = fake.dev.host_size;
    fake.dev.host_size = 2 * P2_PIO_NODE_SPAN;  // the size only; nothing is touched
    EXPECT_EQ(tcaSetPIORegion(&pio, &high, 0, 64), TCA_SUCCESS);
    EXPECT_EQ(tcaSetPIORegion(&pio, &high, 0, 128), TCA_ERROR_PIO_RANGE);
    fake.dev.host_size = exposed;
    tcaHandle forged = dst;
    forged.pcie_addr += 64;
    EXPECT_EQ(tcaSetPIORegion(&pio, &forged, 0, 8), TCA_ERROR_INVALID_HANDLE);

    ASSERT_EQ(tcaSetPIORegion(&pio, &dst, 0, 64), TCA_SUCCESS);
    char buf[128] = {};
    EXPECT_EQ(tcaSendPIO(&pio, 0, buf, 65), TCA_ERROR_OUT_OF_RANGE);
    EXPECT_EQ(tcaSendPIO(&pio, 60, buf, 8), TCA_ERROR_OUT_OF_RANGE);
    EXPECT_EQ(tcaSendPIO(&pio, SIZE_MAX, buf, 2), TCA_ERROR_OUT_OF_RANGE);
    EXPECT_EQ(tcaSendPIO(&pio, 0, nullptr, 8), TCA_ERROR_INVALID_ARGUMENT);
    EXPECT_EQ(tcaSendPIO(&pio, 0, buf, 0), TCA_ERROR_INVALID_ARGUMENT);
    EXPECT_EQ(tcaSendPIO(nullptr, 0, buf, 8), TCA_ERROR_INVALID_ARGUMENT);
    tcaPIOHandle tampered = pio;
    tampered.size = 1 << 20;
    EXPECT_EQ(tcaSendPIO(&tampered, 0, buf, 128), TCA_ERROR_INVALID_HANDLE);
    tcaPIOHandle unset{};
    EXPECT_EQ(tcaSendPIO(&unset, 0, buf, 8), TCA_ERROR_INVALID_HANDLE);
    EXPECT_TRUE(fake.ops_named("pio_write").empty());
}

TEST_F(TcaDevice, FinalizeDropsStateAndChainsSurviveIt)
{
    tcaHandle src = local(tcaMemoryCPU, 64);
    tcaDesc *d = tcaDescNew();
    ASSERT_EQ(tcaDescSetMemcpy(d, &src, 32, &src, 0, 8, 0, 0, 0), TCA_SUCCESS);
    ASSERT_EQ(tcaDescSet(d, 0), TCA_SUCCESS);
    ASSERT_EQ(tcaFinalize(), TCA_SUCCESS);
    EXPECT_EQ(tcaStartDMADesc(0), TCA_ERROR_NOT_INITIALIZED);
    tca_set_device_for_testing(&fake.dev);
    EXPECT_EQ(tcaStartDMADesc(0), TCA_ERROR_CHANNEL_NOT_SET);
    ASSERT_EQ(tcaDescSet(d, 0), TCA_SUCCESS) << "gets fresh descriptor memory";
    EXPECT_EQ(tcaDescFree(d), TCA_SUCCESS);
}

}  // namespace tca_device_test
