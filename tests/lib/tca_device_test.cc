// The API's device calls against a fake device that records what the
// library asks of it: attaching, p2_exchange's first round, memory and
// handles. The other device calls: tca_device_dma_test.cc (chains in host
// memory and in registers, start, wait), tca_device_notify_test.cc
// (notifications), tca_device_pio_test.cc (PIO, finalize).
#include "tca_device_fixture.h"

namespace tca_device_test {

#ifdef TCA_TEST_HAVE_DEVICE
// tcaInit links the real backend (device.c), built once it exists.
TEST_F(TcaDevice, InitIsIdempotentOnceAttached)
{
    EXPECT_EQ(tcaInit(), TCA_SUCCESS);
    EXPECT_EQ(tcaInit(), TCA_SUCCESS);
    EXPECT_TRUE(fake.calls.empty()) << "attaching again touches no register";
}

// p2_exchange's first round, as far as a fake can take it: the slot goes to
// every node (the writer knows no rank's node yet), blob first, trailer last.
TEST_F(TcaDevice, ExchangePostsItsSlotToEveryNodeFirst)
{
    const uint64_t mine = 0x1122334455667788ull;
    uint64_t all[kNodes];
    EXPECT_EQ(p2_exchange(&mine, all, sizeof mine), TCA_ERROR_DEVICE)
        << "p2_wait_u64 needs the real device";
    std::vector<FakeDevice::Call> pio = fake.ops_named("pio_write");
    ASSERT_EQ(pio.size(), 2u * kNodes);
    const unsigned bank = 1; // generation 1
    const uint64_t slot = P2_MAILBOX_HOST_OFFSET + p2_mailbox_slot_offset(bank, kNode);
    for (unsigned k = 0; k < kNodes; k++) {
        unsigned node = (kNode + 1 + k) % kNodes;
        const FakeDevice::Call &blob = pio[2 * k], &trailer = pio[2 * k + 1];
        EXPECT_EQ(blob.a, p2_pio_offset(node, slot));
        ASSERT_EQ(blob.b, sizeof mine);
        EXPECT_EQ(std::memcmp(blob.data.data(), &mine, sizeof mine), 0);
        EXPECT_EQ(trailer.a, p2_pio_offset(node, slot + P2_EXCHANGE_MAX_BLOB));
        ASSERT_EQ(trailer.b, 16u);
        uint64_t words[2];
        std::memcpy(words, trailer.data.data(), sizeof words);
        EXPECT_EQ(words[0] & 0xffffffffu, kNode) << "the writer's node";
        EXPECT_EQ(words[0] >> 32, sizeof mine) << "the writer's size, checked by the readers";
        EXPECT_EQ(words[1], 1u) << "the generation, written last";
    }
    EXPECT_EQ(fake.ops_named("pio_commit").size(), 1u);
}

TEST_F(TcaDevice, ExchangeArgumentErrors)
{
    uint8_t blob[P2_EXCHANGE_MAX_BLOB + 1] = {0};
    static uint8_t all[kNodes * sizeof blob];
    EXPECT_EQ(p2_exchange(blob, all, 0), TCA_ERROR_INVALID_ARGUMENT);
    EXPECT_EQ(p2_exchange(blob, all, sizeof blob), TCA_ERROR_INVALID_ARGUMENT);
    EXPECT_EQ(p2_exchange(nullptr, all, 8), TCA_ERROR_INVALID_ARGUMENT);
    EXPECT_EQ(p2_exchange(blob, nullptr, 8), TCA_ERROR_INVALID_ARGUMENT);
    EXPECT_TRUE(fake.ops_named("pio_write").empty());
}

TEST(TcaInit, OutsideTheEmulatorThereIsNoDevice)
{
    tca_set_device_for_testing(nullptr);
    EXPECT_EQ(tcaInit(), TCA_ERROR_DEVICE);
    EXPECT_EQ(tcaMalloc(nullptr, 8, tcaMemoryCPU), TCA_ERROR_NOT_INITIALIZED);
}
#endif

TEST_F(TcaDevice, MallocComesFromTheArenaOfItsKind)
{
    void *c = nullptr, *g = nullptr;
    ASSERT_EQ(tcaMalloc(&c, 100, tcaMemoryCPU), TCA_SUCCESS);
    ASSERT_EQ(tcaMalloc(&g, 100, tcaMemoryGPU), TCA_SUCCESS);
    EXPECT_EQ(c, fake.host.data() + kFirstHost) << "after the mailbox";
    EXPECT_EQ(g, fake.gpu.data()) << "GPU memory has no mailbox";
    void *c2 = nullptr;
    ASSERT_EQ(tcaMalloc(&c2, 8, tcaMemoryCPU), TCA_SUCCESS);
    EXPECT_EQ((uint8_t *)c2, fake.host.data() + kFirstHost + 128) << "64-byte aligned, first fit";
    EXPECT_EQ(tcaFree(c, tcaMemoryGPU), TCA_ERROR_NOT_REGISTERED) << "wrong kind";
    EXPECT_EQ(tcaFree(c, tcaMemoryCPU), TCA_SUCCESS);
    EXPECT_EQ(tcaFree(c, tcaMemoryCPU), TCA_ERROR_NOT_REGISTERED) << "twice";
    EXPECT_EQ(tcaFree(g, tcaMemoryGPU), TCA_SUCCESS);
    int stack;
    EXPECT_EQ(tcaFree(&stack, tcaMemoryCPU), TCA_ERROR_NOT_REGISTERED);
}

TEST_F(TcaDevice, TheMailboxIsNotTheCallersToFree)
{
    EXPECT_EQ(tcaFree(fake.host.data(), tcaMemoryCPU), TCA_ERROR_NOT_REGISTERED);
    void *p = nullptr;
    ASSERT_EQ(tcaMalloc(&p, 64, tcaMemoryCPU), TCA_SUCCESS);
    EXPECT_GE((uint8_t *)p, fake.host.data() + kFirstHost) << "still reserved";
}

TEST_F(TcaDevice, HostMemoryTooSmallForTheMailboxFailsToAttach)
{
    FakeDevice tiny{kNode, kNodes, P2_EXCHANGE_BYTES / 2};
    tca_set_device_for_testing(&tiny.dev);
    void *p = nullptr;
    EXPECT_EQ(tcaMalloc(&p, 8, tcaMemoryCPU), TCA_ERROR_NOT_INITIALIZED);
}

TEST_F(TcaDevice, MallocErrors)
{
    void *p = (void *)0x1;
    EXPECT_EQ(tcaMalloc(nullptr, 8, tcaMemoryCPU), TCA_ERROR_INVALID_ARGUMENT);
    EXPECT_EQ(tcaMalloc(&p, 0, tcaMemoryCPU), TCA_ERROR_INVALID_ARGUMENT);
    EXPECT_EQ(tcaMalloc(&p, 8, (tcaMemoryKind)7), TCA_ERROR_INVALID_ARGUMENT);
    EXPECT_EQ(tcaMalloc(&p, fake.host.size() + 1, tcaMemoryCPU), TCA_ERROR_OUT_OF_MEMORY);
    EXPECT_EQ(p, (void *)0x1) << "output untouched on failure";
    EXPECT_EQ(tcaFree(nullptr, tcaMemoryCPU), TCA_ERROR_INVALID_ARGUMENT);
}

TEST_F(TcaDevice, GpuArenaMayBeAbsent)
{
    FakeDevice nogpu{kNode, kNodes, 1 << 16, 0};
    tca_set_device_for_testing(&nogpu.dev);
    void *p = nullptr;
    EXPECT_EQ(tcaMalloc(&p, 8, tcaMemoryGPU), TCA_ERROR_OUT_OF_MEMORY);
    tcaHandle h;
    int x;
    EXPECT_EQ(tcaCreateHandle(&h, &x, sizeof x, tcaMemoryGPU), TCA_ERROR_NOT_REGISTERED);
    tca_set_device_for_testing(nullptr);  // before `nogpu` goes out of scope
}

TEST_F(TcaDevice, HandlesCarryPcieAddressesOfThisNode)
{
    void *p;
    tcaHandle h = local(tcaMemoryCPU, 256, &p);
    EXPECT_EQ(h.pcie_addr, p2_node_base(kNode) + P2_HOST_OFFSET + kFirstHost);
    EXPECT_EQ(h.size, 256u);
    EXPECT_EQ(h.kind, (uint32_t)tcaMemoryCPU);
    EXPECT_EQ(h.node, kNode);
    EXPECT_EQ(h.reserved, 0u);

    tcaHandle inner;
    ASSERT_EQ(tcaCreateHandle(&inner, (uint8_t *)p + 64, 64, tcaMemoryCPU), TCA_SUCCESS);
    EXPECT_EQ(inner.pcie_addr, p2_node_base(kNode) + P2_HOST_OFFSET + kFirstHost + 64);

    tcaHandle g = local(tcaMemoryGPU, 512);
    EXPECT_EQ(g.pcie_addr, p2_node_base(kNode) + P2_GPU_OFFSET);
    EXPECT_EQ(g.kind, (uint32_t)tcaMemoryGPU);
}

TEST_F(TcaDevice, HandleErrors)
{
    tcaHandle h;
    h.check = 42;
    int stack[4];
    EXPECT_EQ(tcaCreateHandle(&h, stack, sizeof stack, tcaMemoryCPU), TCA_ERROR_NOT_REGISTERED);
    EXPECT_EQ(tcaCreateHandle(&h, fake.host.data(), fake.host.size() + 1, tcaMemoryCPU),
              TCA_ERROR_NOT_REGISTERED);
    EXPECT_EQ(tcaCreateHandle(&h, fake.host.data() + fake.host.size() - 8, 16, tcaMemoryCPU),
              TCA_ERROR_NOT_REGISTERED);
    EXPECT_EQ(tcaCreateHandle(&h, fake.host.data(), 64, tcaMemoryGPU), TCA_ERROR_NOT_REGISTERED);
    EXPECT_EQ(tcaCreateHandle(nullptr, fake.host.data(), 64, tcaMemoryCPU),
              TCA_ERROR_INVALID_ARGUMENT);
    EXPECT_EQ(tcaCreateHandle(&h, nullptr, 64, tcaMemoryCPU), TCA_ERROR_INVALID_ARGUMENT);
    EXPECT_EQ(tcaCreateHandle(&h, fake.host.data(), 0, tcaMemoryCPU), TCA_ERROR_INVALID_ARGUMENT);
    EXPECT_EQ(h.check, 42u) << "output untouched on failure";
    EXPECT_EQ(tcaDestroyHandle(nullptr), TCA_ERROR_INVALID_HANDLE);
}

}  // namespace tca_device_test
