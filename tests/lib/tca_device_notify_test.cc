// The API's notification calls against the fake device: the ring tcaInit
// programs, and waiting for, testing and claiming (node, slot, tag).
#include "tca_device_fixture.h"

namespace tca_device_test {

// The ring as the library programmed it.
static uint64_t ring_word_offset(uint64_t entry)
{
    return kRingHost + 8 * (entry % TCA_NOTIFY_RING_ENTRIES);
}

TEST(TcaNotifyRing, InitProgramsTheNotificationRing)
{
    FakeDevice fake{kNode, kNodes};
    struct Detach {
        ~Detach() { tca_set_device_for_testing(nullptr); }
    } detach_before_the_fake_goes;
    std::memset(fake.host.data(), 0xa5, fake.host.size());  // stale bytes everywhere
    tca_set_device_for_testing(&fake.dev);
    ASSERT_EQ(fake.calls.size(), 2u);
    EXPECT_EQ(fake.calls[0].op, "mmio_write");
    EXPECT_EQ(fake.calls[0].a, (uint64_t)P2_REG_NOTIFY_RING_SIZE);
    EXPECT_EQ(fake.calls[0].b, (uint64_t)TCA_NOTIFY_RING_ENTRIES);
    EXPECT_EQ(fake.calls[1].op, "mmio_write");
    EXPECT_EQ(fake.calls[1].a, (uint64_t)P2_REG_NOTIFY_RING) << "RING last: it starts the ring";
    EXPECT_EQ(fake.calls[1].b, p2_node_base(kNode) + P2_HOST_OFFSET + kRingHost)
        << "right after the mailbox";
    for (size_t i = 0; i < kRingBytes; i++)
        ASSERT_EQ(fake.host[kRingHost + i], 0) << "zeroed, byte " << i;
    EXPECT_EQ(fake.host[kRingHost + kRingBytes], 0xa5) << "and nothing beyond";
    void *p = nullptr;
    ASSERT_EQ(tcaMalloc(&p, 64, tcaMemoryCPU), TCA_SUCCESS);
    EXPECT_EQ(p, fake.host.data() + kFirstHost) << "tcaMalloc comes after the ring";
    EXPECT_EQ(tcaFree(fake.host.data() + kRingHost, tcaMemoryCPU), TCA_ERROR_NOT_REGISTERED)
        << "the ring is not the caller's to free";

    fake.calls.clear();
    ASSERT_EQ(tcaFinalize(), TCA_SUCCESS);
    ASSERT_EQ(fake.calls.size(), 1u);
    EXPECT_EQ(fake.calls[0].a, (uint64_t)P2_REG_NOTIFY_RING);
    EXPECT_EQ(fake.calls[0].b, 0u) << "finalize unsets the ring";
    EXPECT_FALSE(fake.raise(0, 0)) << "the board drops notifications now";
}

TEST_F(TcaDevice, RecvWaitAndTestMatchNodeSlotAndTag)
{
    tcaHandle h = local(tcaMemoryCPU, 64);
    tcaHandle other = remote(3, 0, 64);
    EXPECT_EQ(tcaTestDMARecvDesc(&h, 4, 0x100), TCA_NOT_YET);
    auto waits = fake.ops_named("wait_mem");
    ASSERT_EQ(waits.size(), 1u);
    EXPECT_EQ(waits[0].a, ring_word_offset(0)) << "entry 0";
    EXPECT_EQ(waits[0].b, P2_NOTIFY_SERIAL_MASK);
    EXPECT_EQ(waits[0].c, (uint64_t)p2_notify_serial(0) << 32) << "its serial, 1";
    EXPECT_EQ(waits[0].d, 0u) << "a test does not block";

    ASSERT_TRUE(fake.raise(4, 0x100));
    ASSERT_TRUE(fake.raise(4, 0x100));
    fake.calls.clear();
    EXPECT_EQ(tcaTestDMARecvDesc(&h, 4, 0x101), TCA_NOT_YET) << "the tag must match";
    waits = fake.ops_named("wait_mem");
    ASSERT_EQ(waits.size(), 3u) << "entries 0 and 1 read and kept, entry 2 not there yet";
    EXPECT_EQ(waits[1].a, ring_word_offset(1));
    EXPECT_EQ(waits[2].c, (uint64_t)p2_notify_serial(2) << 32);

    EXPECT_EQ(tcaTestDMARecvDesc(&other, 4, 0x100), TCA_NOT_YET)
        << "raised by this node's DMAC: node 3's handle does not match";
    fake.calls.clear();
    EXPECT_EQ(tcaTestDMARecvDesc(&h, 4, 0x100), TCA_SUCCESS) << "this node's handle does";
    EXPECT_EQ(tcaWaitDMARecvDesc(nullptr, 4, 0x100), TCA_SUCCESS) << "NULL: any node's";
    EXPECT_TRUE(fake.calls.empty()) << "both claimed from what was already read";
    EXPECT_EQ(tcaTestDMARecvDesc(&h, 4, 0x100), TCA_NOT_YET) << "each arrival claimed once";

    ASSERT_TRUE(fake.raise(4, 0x100, 3));
    EXPECT_EQ(tcaTestDMARecvDesc(&h, 4, 0x100), TCA_NOT_YET) << "node 3's is not this node's";
    EXPECT_EQ(tcaTestDMARecvDesc(&other, 4, 0x100), TCA_SUCCESS) << "node 3's handle claims it";

    ASSERT_TRUE(fake.raise(4, 0x100));
    fake.calls.clear();
    EXPECT_EQ(tcaWaitDMARecvDesc(&h, 4, 0x100), TCA_SUCCESS) << "straight from the ring";
    waits = fake.ops_named("wait_mem");
    ASSERT_EQ(waits.size(), 1u);
    EXPECT_EQ(waits[0].a, ring_word_offset(3));
    EXPECT_EQ(waits[0].d, 1u) << "a wait blocks";
}

TEST_F(TcaDevice, RecvClaimsOutOfOrder)
{
    ASSERT_TRUE(fake.raise(1, 10));
    ASSERT_TRUE(fake.raise(2, 20));
    ASSERT_TRUE(fake.raise(1, 10));
    ASSERT_TRUE(fake.raise(3, 30));
    EXPECT_EQ(tcaWaitDMARecvDesc(nullptr, 3, 30), TCA_SUCCESS);
    EXPECT_EQ(fake.ops_named("wait_mem").size(), 4u);
    fake.calls.clear();
    EXPECT_EQ(tcaWaitDMARecvDesc(nullptr, 1, 10), TCA_SUCCESS);
    EXPECT_EQ(tcaWaitDMARecvDesc(nullptr, 2, 20), TCA_SUCCESS);
    EXPECT_EQ(tcaWaitDMARecvDesc(nullptr, 1, 10), TCA_SUCCESS);
    EXPECT_TRUE(fake.calls.empty()) << "all three were kept";

    // A blocking wait goes on reading as entries arrive.
    fake.arriving = {{5, 1}, {6, 1}, {5, 1}};
    EXPECT_EQ(tcaWaitDMARecvDesc(nullptr, 6, 1), TCA_SUCCESS);
    EXPECT_EQ(fake.arriving.size(), 1u) << "it stopped at its own";
    EXPECT_EQ(tcaWaitDMARecvDesc(nullptr, 5, 1), TCA_SUCCESS);
    EXPECT_EQ(tcaWaitDMARecvDesc(nullptr, 5, 1), TCA_SUCCESS);
    EXPECT_TRUE(fake.arriving.empty());
    EXPECT_EQ(tcaTestDMARecvDesc(nullptr, 5, 1), TCA_NOT_YET);
}

TEST_F(TcaDevice, RecvAdvancesTailEveryQuarterRing)
{
    const uint64_t quarter = TCA_NOTIFY_RING_ENTRIES / 4;
    // Fill the ring completely: the board takes no more until TAIL moves.
    for (unsigned i = 0; i < TCA_NOTIFY_RING_ENTRIES; i++)
        ASSERT_TRUE(fake.raise(i % 8, 7)) << i;
    EXPECT_FALSE(fake.raise(9, 9)) << "full";
    EXPECT_EQ(fake.ring_overflow, 1u);
    for (unsigned i = 0; i < TCA_NOTIFY_RING_ENTRIES; i++) {
        ASSERT_EQ(tcaWaitDMARecvDesc(nullptr, (int)(i % 8), 7), TCA_SUCCESS) << i;
        auto tails = fake.ops_named("mmio_write");
        ASSERT_EQ(tails.size(), (i + 1) / quarter) << "after " << i + 1 << " entries";
        if (!tails.empty()) {
            EXPECT_EQ(tails.back().a, (uint64_t)P2_REG_NOTIFY_TAIL);
            EXPECT_EQ(tails.back().b, tails.size() * quarter);
        }
    }
    EXPECT_EQ(fake.ring_tail, (uint64_t)TCA_NOTIFY_RING_ENTRIES);
    // Around the ring again: the serials tell the new entries from the old.
    EXPECT_EQ(tcaTestDMARecvDesc(nullptr, 0, 7), TCA_NOT_YET) << "old entry 0 is stale";
    for (unsigned i = 0; i < TCA_NOTIFY_RING_ENTRIES + quarter; i++) {
        ASSERT_TRUE(fake.raise(1, (unsigned)i)) << i;
        ASSERT_EQ(tcaTestDMARecvDesc(nullptr, 1, (int)i), TCA_SUCCESS) << i;
    }
    EXPECT_EQ(fake.ring_tail, (uint64_t)2 * TCA_NOTIFY_RING_ENTRIES + quarter);
    EXPECT_EQ(fake.ring_overflow, 1u);
}

TEST_F(TcaDevice, RecvBacklogIsBoundedAndRecoverable)
{
    for (unsigned i = 0; i < TCA_NOTIFY_BACKLOG_MAX; i++)
        ASSERT_TRUE(fake.raise(i % P2_NOTIFY_SLOTS, i / P2_NOTIFY_SLOTS));
    ASSERT_TRUE(fake.raise(63, 0xffff));  // one pair too many
    ASSERT_TRUE(fake.raise(0, 0x1234));   // the one we want, behind it
    EXPECT_EQ(tcaWaitDMARecvDesc(nullptr, 0, 0x1234), TCA_ERROR_NOTIFY_BACKLOG);
    EXPECT_EQ(tcaTestDMARecvDesc(nullptr, 0, 0x1234), TCA_ERROR_NOTIFY_BACKLOG);
    EXPECT_NE(std::string(tcaGetErrorString(TCA_ERROR_NOTIFY_BACKLOG)).find("TCA_ERROR_"),
              std::string::npos);
    EXPECT_EQ(tcaWaitDMARecvDesc(nullptr, 0, 0), TCA_SUCCESS) << "kept pairs can be claimed";
    EXPECT_EQ(tcaWaitDMARecvDesc(nullptr, 0, 0x1234), TCA_SUCCESS) << "room again";
    EXPECT_EQ(tcaWaitDMARecvDesc(nullptr, 63, 0xffff), TCA_SUCCESS) << "nothing was lost";
    for (unsigned i = 1; i < TCA_NOTIFY_BACKLOG_MAX; i++)
        ASSERT_EQ(tcaTestDMARecvDesc(nullptr, (int)(i % P2_NOTIFY_SLOTS),
                                     (int)(i / P2_NOTIFY_SLOTS)),
                  TCA_SUCCESS);
    EXPECT_EQ(tcaTestDMARecvDesc(nullptr, 1, 0), TCA_NOT_YET);
}

TEST_F(TcaDevice, RecvAfterReinitIgnoresTheOldRing)
{
    ASSERT_TRUE(fake.raise(2, 2));
    ASSERT_EQ(tcaFinalize(), TCA_SUCCESS);
    tca_set_device_for_testing(&fake.dev);
    EXPECT_EQ(tcaTestDMARecvDesc(nullptr, 2, 2), TCA_NOT_YET) << "a fresh ring, zeroed";
    ASSERT_TRUE(fake.raise(2, 2));
    EXPECT_EQ(tcaTestDMARecvDesc(nullptr, 2, 2), TCA_SUCCESS);
}

TEST_F(TcaDevice, RecvErrors)
{
    tcaHandle h = local(tcaMemoryCPU, 64);
    EXPECT_EQ(tcaWaitDMARecvDesc(&h, P2_NOTIFY_SLOTS, 0), TCA_ERROR_INVALID_SLOT);
    EXPECT_EQ(tcaWaitDMARecvDesc(&h, -1, 0), TCA_ERROR_INVALID_SLOT);
    EXPECT_EQ(tcaTestDMARecvDesc(&h, 0, (int)P2_NOTIFY_TAG_MAX + 1), TCA_ERROR_INVALID_TAG);
    EXPECT_EQ(tcaTestDMARecvDesc(&h, 0, -1), TCA_ERROR_INVALID_TAG);
    tcaHandle bad = h;
    bad.node = 0;
    EXPECT_EQ(tcaWaitDMARecvDesc(&bad, 0, 0), TCA_ERROR_INVALID_HANDLE);
    EXPECT_TRUE(fake.calls.empty()) << "refused waits reach no device";

    fake.wait_result = P2_WAIT_FAILED;
    EXPECT_EQ(tcaWaitDMARecvDesc(&h, 0, 0), TCA_ERROR_DEVICE);
    EXPECT_EQ(tcaTestDMARecvDesc(&h, 0, 0), TCA_ERROR_DEVICE);
    fake.wait_result = P2_WAIT_NOT_YET;
    EXPECT_EQ(tcaWaitDMARecvDesc(&h, 0, 0), TCA_ERROR_DEVICE) << "a blocking wait said not yet";
    fake.wait_result = P2_WAIT_OK;
    EXPECT_EQ(tcaWaitDMARecvDesc(&h, 0, 0), TCA_ERROR_DEVICE)
        << "a wait that ends (the fake: nothing will arrive) without the entry";

    tca_set_device_for_testing(nullptr);
    EXPECT_EQ(tcaWaitDMARecvDesc(nullptr, 0, 0), TCA_ERROR_NOT_INITIALIZED);
}

}  // namespace tca_device_test
