// The API against a fake device whose nodes are on two PEACH2 networks
// (p2_dev.network: nodes 0-1 and 2-3, sub-clusters no cable joins): DMA and
// PIO to the other network are refused at the first call that names the
// node, with TCA_ERROR_UNREACHABLE and a message, and nothing reaches the
// device; the same calls inside the network go on as before.
#include "tca_device_fixture.h"

namespace tca_device_test {

struct TcaSubclusters : TcaDevice {
    const uint8_t network[kNodes] = {0, 0, 1, 1};
    void SetUp() override
    {
        fake.dev.network = network;
        TcaDevice::SetUp();
    }
};

TEST_F(TcaSubclusters, DmaToAnotherNetworkIsRefusedWhenTheTransferIsAdded)
{
    tcaHandle src = local(tcaMemoryCPU, 4096);
    tcaHandle near = remote(0, 0x3000, 4096), far = remote(2, 0x3000, 4096);
    tcaDesc *d = tcaDescNew();
    ASSERT_NE(d, nullptr);
    ::testing::internal::CaptureStderr();
    EXPECT_EQ(tcaDescSetMemcpy(d, &far, 0, &src, 0, 64, tcaDMANotify, 1, 2), TCA_ERROR_UNREACHABLE);
    EXPECT_EQ(tcaDescSetMemcpy2D(d, &far, 0, 128, &src, 0, 128, 64, 2, 0, 1, 2),
              TCA_ERROR_UNREACHABLE);
    const std::string err = ::testing::internal::GetCapturedStderr();
    EXPECT_NE(err.find("p2tca: rank 1: DMA from node 1 to node 2 refused: node 1 is on PEACH2 "
                       "sub-cluster 0, node 2 on sub-cluster 1, and no cable joins them "
                       "(TCA_ERROR_UNREACHABLE; move data between sub-clusters with MPI)"),
              std::string::npos)
        << err;
    // Nothing was added: a chain with the refused transfers is empty.
    EXPECT_EQ(tcaDescSet(d, 0), TCA_ERROR_EMPTY_CHAIN);
    // Inside the network, and to this node itself, as before.
    EXPECT_EQ(tcaDescSetMemcpy(d, &near, 0, &src, 0, 64, tcaDMANotify, 1, 2), TCA_SUCCESS);
    EXPECT_EQ(tcaDescSetMemcpy(d, &src, 64, &src, 0, 64, 0, 0, 0), TCA_SUCCESS);
    EXPECT_EQ(tcaDescFree(d), TCA_SUCCESS);
    // Argument errors still come first: a bad handle is a bad handle.
    tcaHandle forged = far;
    forged.pcie_addr += 64;
    tcaDesc *e = tcaDescNew();
    EXPECT_EQ(tcaDescSetMemcpy(e, &forged, 0, &src, 0, 64, 0, 0, 0), TCA_ERROR_INVALID_HANDLE);
    tcaDescFree(e);
}

TEST_F(TcaSubclusters, PioToAnotherNetworkIsRefusedWhenTheRegionIsSet)
{
    tcaHandle near = remote(0, 0x3000, 4096), far = remote(3, 0x3000, 4096);
    tcaPIOHandle pio{};
    ::testing::internal::CaptureStderr();
    EXPECT_EQ(tcaSetPIORegion(&pio, &far, 0, 64), TCA_ERROR_UNREACHABLE);
    const std::string err = ::testing::internal::GetCapturedStderr();
    EXPECT_NE(err.find("PIO from node 1 to node 3 refused: node 1 is on PEACH2 sub-cluster 0, node 3 "
                       "on sub-cluster 1"),
              std::string::npos)
        << err;
    EXPECT_EQ(pio.check, 0u);  // left as it was
    EXPECT_TRUE(fake.calls.empty());
    EXPECT_EQ(tcaSetPIORegion(&pio, &near, 0, 64), TCA_SUCCESS);
    EXPECT_STREQ(tcaGetErrorString(TCA_ERROR_UNREACHABLE),
                 "TCA_ERROR_UNREACHABLE: the node is on another PEACH2 network (sub-cluster); use MPI "
                 "between sub-clusters");
}

}  // namespace tca_device_test
