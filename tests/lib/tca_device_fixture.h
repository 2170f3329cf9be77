// The fixture of the API's device tests (tca_device_*_test.cc): a fake
// device that records what the library asks of it (fake_device.h), attached
// for each test, and the layout tcaInit gives this node's host memory.
#ifndef TCA_DEVICE_FIXTURE_H
#define TCA_DEVICE_FIXTURE_H

#include <gtest/gtest.h>

#include <cstring>

#include "fake_device.h"
#include "p2.h"
#include "p2_mailbox.h"

namespace tca_device_test {

constexpr unsigned kNode = 1, kNodes = 4;
// tcaInit keeps the start of host memory for p2_exchange's mailbox, then
// allocates the notification ring.
constexpr size_t kRingHost = P2_MAILBOX_HOST_OFFSET + P2_EXCHANGE_BYTES;
constexpr size_t kRingBytes = TCA_NOTIFY_RING_ENTRIES * sizeof(uint64_t);
constexpr size_t kFirstHost = kRingHost + kRingBytes;

struct TcaDevice : ::testing::Test {
    FakeDevice fake{kNode, kNodes};
    void SetUp() override
    {
        tca_set_device_for_testing(&fake.dev);
        fake.calls.clear();  // the ring set-up (TcaDevice.InitProgramsTheNotificationRing)
    }
    void TearDown() override { tca_set_device_for_testing(nullptr); }

    tcaHandle local(tcaMemoryKind kind, size_t size, void **out = nullptr)
    {
        void *p = nullptr;
        EXPECT_EQ(tcaMalloc(&p, size, kind), TCA_SUCCESS);
        tcaHandle h{};
        EXPECT_EQ(tcaCreateHandle(&h, p, size, kind), TCA_SUCCESS);
        if (out)
            *out = p;
        return h;
    }
    // The PCIe address of channel c's end word (P2_DMA_END_WB): the library
    // keeps one word per channel at the top of host memory.
    uint64_t end_wb_addr(unsigned c) const
    {
        return p2_node_base(kNode) + P2_HOST_OFFSET + fake.host.size() -
               8 * P2_DMA_CHANNELS + 8 * c;
    }
    // What another rank would send us: a handle to its node's host memory.
    static tcaHandle remote(unsigned node, uint64_t off, uint64_t size,
                            tcaMemoryKind kind = tcaMemoryCPU)
    {
        return tca_handle_make(
            p2_node_base(node) + (kind == tcaMemoryCPU ? P2_HOST_OFFSET : P2_GPU_OFFSET) + off,
            size, kind, node);
    }
};

}  // namespace tca_device_test

#endif  // TCA_DEVICE_FIXTURE_H
