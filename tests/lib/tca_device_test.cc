// The API's device calls against a fake device that records what the
// library asks of it: memory and handles, chains in host memory and in
// registers, start, wait, notifications and PIO.
#include <gtest/gtest.h>

#include <cstring>

#include "fake_device.h"
#include "p2.h"
#include "p2_mailbox.h"

namespace {

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
    // What another rank would send us: a handle to its node's host memory.
    static tcaHandle remote(unsigned node, uint64_t off, uint64_t size,
                            tcaMemoryKind kind = tcaMemoryCPU)
    {
        return tca_handle_make(
            p2_node_base(node) + (kind == tcaMemoryCPU ? P2_HOST_OFFSET : P2_GPU_OFFSET) + off,
            size, kind, node);
    }
};

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
        EXPECT_EQ(words[0], kNode) << "the writer's node";
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

TEST_F(TcaDevice, ChainModeWritesLinkedDescriptorsToHostMemory)
{
    tcaHandle src = local(tcaMemoryCPU, 4096);
    tcaHandle dst = remote(2, 0x10000, 4096);
    tcaDesc *d = tcaDescNew();
    ASSERT_EQ(tcaDescSetMemcpy(d, &dst, 0, &src, 0, 1024, 0, 0, 0), TCA_SUCCESS);
    ASSERT_EQ(tcaDescSetMemcpy(d, &dst, 1024, &src, 1024, 1024, 0, 0, 0), TCA_SUCCESS);
    ASSERT_EQ(tcaDescSetMemcpy(d, &dst, 2048, &src, 2048, 8, tcaDMANotify, 3, 0x100),
              TCA_SUCCESS);
    ASSERT_EQ(tcaDescSet(d, 2), TCA_SUCCESS);

    uint64_t ptr = fake.written(P2_REG_DMA(2, P2_DMA_DESC_PTR));
    ASSERT_EQ(p2_addr_node(ptr), kNode);
    ASSERT_EQ(p2_addr_window(ptr), P2_WIN_HOST);
    uint64_t off = p2_addr_offset(ptr) - P2_HOST_OFFSET;
    EXPECT_EQ(off % P2_DESC_SIZE, 0u);
    const p2_desc *mem = (const p2_desc *)(fake.host.data() + off);
    EXPECT_EQ(mem[0].src, src.pcie_addr);
    EXPECT_EQ(mem[0].dst, dst.pcie_addr);
    EXPECT_EQ(mem[0].length, 1024u);
    EXPECT_EQ(mem[0].next, ptr + P2_DESC_SIZE);
    EXPECT_EQ(mem[1].src, src.pcie_addr + 1024);
    EXPECT_EQ(mem[1].next, ptr + 2 * P2_DESC_SIZE);
    EXPECT_EQ(mem[2].flags, P2_DESC_NOTIFY);
    EXPECT_EQ(mem[2].wait_slot, 3u);
    EXPECT_EQ(mem[2].wait_tag, 0x100u);
    EXPECT_EQ(mem[2].next, 0u);
    EXPECT_TRUE(fake.ops_named("mmio_write").size() == 1) << "only DESC_PTR";

    // Descriptor memory is not handed out to the user while the chain lives.
    void *p;
    ASSERT_EQ(tcaMalloc(&p, 64, tcaMemoryCPU), TCA_SUCCESS);
    EXPECT_FALSE((uint8_t *)p >= (const uint8_t *)mem &&
                 (uint8_t *)p < (const uint8_t *)(mem + 3));

    ASSERT_EQ(tcaStartDMADesc(2), TCA_SUCCESS);
    EXPECT_EQ(fake.written(P2_REG_DMA(2, P2_DMA_START)), (uint64_t)P2_DMA_START_CHAIN);

    // Re-setting the unchanged chain reuses its memory.
    ASSERT_EQ(tcaDescSet(d, 1), TCA_SUCCESS);
    EXPECT_EQ(fake.written(P2_REG_DMA(1, P2_DMA_DESC_PTR)), ptr);
    EXPECT_EQ(tcaDescFree(d), TCA_SUCCESS);
    EXPECT_EQ(tcaStartDMADesc(2), TCA_ERROR_CHANNEL_NOT_SET) << "its memory is gone";
    EXPECT_EQ(tcaStartDMADesc(1), TCA_ERROR_CHANNEL_NOT_SET);
}

TEST_F(TcaDevice, RegisterModeWritesDescriptorRegisters)
{
    tcaHandle src = local(tcaMemoryGPU, 4096);
    tcaHandle dst = remote(0, 0, 4096, tcaMemoryGPU);
    tcaDesc *d = tcaDescNew();
    ASSERT_EQ(tcaDescSetMemcpy2D(d, &dst, 0, 256, &src, 0, 128, 64, 4, tcaDMAUseInternal, 1, 2),
              TCA_SUCCESS);
    ASSERT_EQ(tcaDescSetMemcpy(d, &dst, 2048, &src, 2048, 8, 0, 0, 0), TCA_SUCCESS);
    ASSERT_EQ(tcaDescSet(d, 3), TCA_SUCCESS);

    auto writes = fake.ops_named("mmio_write");
    ASSERT_EQ(writes.size(), 2 * P2_DESC_SIZE / 8 + 1);
    p2_desc regs[2];
    uint64_t words[2 * P2_DESC_SIZE / 8];
    for (size_t i = 0; i < 2 * P2_DESC_SIZE / 8; i++) {
        EXPECT_EQ(writes[i].a, P2_REG_DESC(3, i / 8) + 8 * (i % 8));
        words[i] = writes[i].b;
    }
    std::memcpy(regs, words, sizeof regs);
    EXPECT_EQ(regs[0].flags, P2_DESC_BLOCK_STRIDE);
    EXPECT_EQ(regs[0].block_count, 4u);
    EXPECT_EQ(regs[0].src_stride, 128u);
    EXPECT_EQ(regs[0].dst_stride, 256u);
    EXPECT_EQ(regs[0].wait_slot, 1u);
    EXPECT_EQ(regs[0].wait_tag, 2u);
    EXPECT_EQ(regs[1].src, src.pcie_addr + 2048);
    EXPECT_EQ(regs[1].next, 0u);
    EXPECT_EQ(writes.back().a, (uint64_t)P2_REG_DMA(3, P2_DMA_REG_COUNT));
    EXPECT_EQ(writes.back().b, 2u);

    ASSERT_EQ(tcaStartDMADesc(3), TCA_SUCCESS);
    EXPECT_EQ(fake.written(P2_REG_DMA(3, P2_DMA_START)), (uint64_t)P2_DMA_START_REGISTERS);
    tcaDescFree(d);
    EXPECT_EQ(tcaStartDMADesc(3), TCA_SUCCESS) << "the registers still hold the chain";
}

TEST_F(TcaDevice, DescIntInitSwitchesLaterSetsToRegisters)
{
    tcaHandle src = local(tcaMemoryCPU, 4096);
    tcaDesc *d = tcaDescNew();
    ASSERT_EQ(tcaDescSetMemcpy(d, &src, 2048, &src, 0, 8, 0, 0, 0), TCA_SUCCESS);
    ASSERT_EQ(tcaDescSet(d, 0), TCA_SUCCESS);
    EXPECT_NE(fake.written(P2_REG_DMA(0, P2_DMA_DESC_PTR)), ~0ull);
    ASSERT_EQ(tcaDMADescInt_Init(), TCA_SUCCESS);
    ASSERT_EQ(tcaDescSet(d, 0), TCA_SUCCESS);
    EXPECT_EQ(fake.written(P2_REG_DMA(0, P2_DMA_REG_COUNT)), 1u);
    ASSERT_EQ(tcaStartDMADesc(0), TCA_SUCCESS);
    EXPECT_EQ(fake.written(P2_REG_DMA(0, P2_DMA_START)), (uint64_t)P2_DMA_START_REGISTERS);
    tcaDescFree(d);
}

TEST_F(TcaDevice, RegisterModeRefusesLongChains)
{
    tcaHandle src = local(tcaMemoryCPU, 4096);
    tcaDesc *d = tcaDescNew();
    for (int i = 0; i < P2_DESC_REG_SLOTS; i++)
        ASSERT_EQ(tcaDescSetMemcpy(d, &src, 2048 + 8 * i, &src, 0, 8, tcaDMAUseInternal, 0, 0),
                  TCA_SUCCESS);
    EXPECT_EQ(tcaDescSet(d, 0), TCA_SUCCESS);
    ASSERT_EQ(tcaDescSetMemcpy(d, &src, 3000, &src, 0, 8, 0, 0, 0), TCA_SUCCESS);
    fake.calls.clear();
    EXPECT_EQ(tcaDescSet(d, 0), TCA_ERROR_CHAIN_TOO_LONG);
    EXPECT_TRUE(fake.calls.empty()) << "a refused chain touches no register";
    tcaDescFree(d);
}

TEST_F(TcaDevice, ChainGrowthMovesItsMemory)
{
    tcaHandle src = local(tcaMemoryCPU, 4096);
    tcaDesc *d = tcaDescNew();
    for (int i = 0; i < 40; i++) {
        ASSERT_EQ(tcaDescSetMemcpy(d, &src, 2048, &src, 8 * i, 8, 0, 0, 0), TCA_SUCCESS);
        ASSERT_EQ(tcaDescSet(d, 0), TCA_SUCCESS);
        uint64_t ptr = fake.written(P2_REG_DMA(0, P2_DMA_DESC_PTR));
        const p2_desc *mem =
            (const p2_desc *)(fake.host.data() + p2_addr_offset(ptr) - P2_HOST_OFFSET);
        for (int k = 0; k <= i; k++) {
            ASSERT_EQ(mem[k].src, src.pcie_addr + 8 * k);
            ASSERT_EQ(mem[k].next, k == i ? 0 : ptr + (k + 1) * P2_DESC_SIZE);
        }
    }
    tcaDescFree(d);
}

TEST_F(TcaDevice, SetAndStartErrors)
{
    tcaHandle src = local(tcaMemoryCPU, 64);
    tcaDesc *d = tcaDescNew();
    EXPECT_EQ(tcaDescSet(d, 0), TCA_ERROR_EMPTY_CHAIN);
    ASSERT_EQ(tcaDescSetMemcpy(d, &src, 0, &src, 0, 8, 0, 0, 0), TCA_SUCCESS);
    EXPECT_EQ(tcaDescSet(d, -1), TCA_ERROR_INVALID_CHANNEL);
    EXPECT_EQ(tcaDescSet(d, P2_DMA_CHANNELS), TCA_ERROR_INVALID_CHANNEL);
    EXPECT_EQ(tcaDescSet(nullptr, 0), TCA_ERROR_INVALID_ARGUMENT);
    EXPECT_EQ(tcaStartDMADesc(P2_DMA_CHANNELS), TCA_ERROR_INVALID_CHANNEL);
    EXPECT_EQ(tcaStartDMADesc(0), TCA_ERROR_CHANNEL_NOT_SET);
    EXPECT_EQ(tcaWaitDMAC(-1), TCA_ERROR_INVALID_CHANNEL);
    EXPECT_EQ(tcaDescSetMemcpy(nullptr, &src, 0, &src, 0, 8, 0, 0, 0),
              TCA_ERROR_INVALID_ARGUMENT);
    tcaHandle stranger = remote(kNodes, 0, 64);  // a node beyond this cluster
    EXPECT_EQ(tcaDescSetMemcpy(d, &stranger, 0, &src, 0, 8, 0, 0, 0), TCA_ERROR_INVALID_HANDLE);
    tcaHandle far = remote(2, 0, 64);
    EXPECT_EQ(tcaDescSetMemcpy(d, &src, 0, &far, 0, 8, 0, 0, 0), TCA_ERROR_REMOTE_SOURCE);
    EXPECT_EQ(tcaDescSetMemcpy(d, &far, 60, &src, 0, 8, 0, 0, 0), TCA_ERROR_OUT_OF_RANGE);
    EXPECT_EQ(tcaDescSetMemcpy(d, &far, 0, &src, 0, 8, 0, P2_NOTIFY_SLOTS, 0),
              TCA_ERROR_INVALID_SLOT);
    EXPECT_EQ(tcaDescSetMemcpy(d, &far, 0, &src, 0, 8, 0, 0, 0x10000), TCA_ERROR_INVALID_TAG);
    EXPECT_TRUE(fake.calls.empty()) << "refused calls touch no register";
    tcaDescFree(d);
}

TEST_F(TcaDevice, OlderTablesFillChainPositions)
{
    tcaHandle src = local(tcaMemoryCPU, 64);
    auto chain = [&](int ch) {
        uint64_t ptr = fake.written(P2_REG_DMA(ch, P2_DMA_DESC_PTR));
        return (const p2_desc *)(fake.host.data() + p2_addr_offset(ptr) - P2_HOST_OFFSET);
    };
    int t0 = -1, t1 = -1, next = 0;
    EXPECT_EQ(tcaCreateDMADesc(nullptr, 4), TCA_ERROR_INVALID_ARGUMENT);
    EXPECT_EQ(tcaCreateDMADesc(&t0, 0), TCA_ERROR_INVALID_ARGUMENT);
    ASSERT_EQ(tcaCreateDMADesc(&t0, 1024), TCA_SUCCESS);
    ASSERT_EQ(tcaCreateDMADesc(&t1, 1024), TCA_SUCCESS);
    EXPECT_NE(t0, t1);
    EXPECT_EQ(tcaSetDMAChain(1, t0), TCA_ERROR_EMPTY_CHAIN) << "nothing in the table";
    // One counter across two tables, as the public stencil programs keep it.
    ASSERT_EQ(tcaSetDMADesc_Memcpy(t0, next, &next, &src, 32, &src, 0, 8, 0, 0, 0), TCA_SUCCESS);
    EXPECT_EQ(next, 1);
    ASSERT_EQ(tcaSetDMADesc_Memcpy2D(t1, next, &next, &src, 40, 16, &src, 8, 16, 8, 2,
                                     tcaDMANotify, 3, 0x100),
              TCA_SUCCESS);
    EXPECT_EQ(next, 2);
    EXPECT_EQ(tcaSetDMADescMemcpy(t0, 1024, &next, &src, 0, &src, 0, 8, 0, 0, 0),
              TCA_ERROR_INVALID_DESC) << "index outside the table";
    EXPECT_EQ(tcaSetDMADesc_Memcpy(t0, -1, &next, &src, 0, &src, 0, 8, 0, 0, 0),
              TCA_ERROR_INVALID_DESC);
    EXPECT_EQ(tcaSetDMADesc_Memcpy(99, 0, &next, &src, 0, &src, 0, 8, 0, 0, 0),
              TCA_ERROR_INVALID_DESC) << "no such table";
    EXPECT_EQ(tcaSetDMADesc_Memcpy(t0, 0, &next, &src, 0, &src, 0, 0, 0, 0, 0),
              TCA_ERROR_INVALID_ARGUMENT) << "the checks of tcaDescSetMemcpy";
    EXPECT_EQ(next, 2) << "output untouched on failure";
    EXPECT_EQ(tcaSetDMAChain(1, t1), TCA_ERROR_EMPTY_CHAIN) << "position 0 never filled";
    EXPECT_EQ(tcaSetDMAChain(TCA_DMA_CHANNELS, t0), TCA_ERROR_INVALID_CHANNEL);
    EXPECT_EQ(tcaSetDMAChain(1, 99), TCA_ERROR_INVALID_DESC);

    ASSERT_EQ(tcaSetDMAChain(1, t0), TCA_SUCCESS);
    ASSERT_EQ(tcaSetDMAChain(1, t1), TCA_SUCCESS) << "appends at position 1";
    const p2_desc *c = chain(1);
    EXPECT_EQ(c[0].dst, src.pcie_addr + 32);
    EXPECT_NE(c[0].next, 0u);
    EXPECT_EQ(c[1].dst, src.pcie_addr + 40);
    EXPECT_EQ(c[1].block_count, 2u);
    EXPECT_EQ(c[1].flags, (uint32_t)(P2_DESC_NOTIFY | P2_DESC_BLOCK_STRIDE));
    EXPECT_EQ(c[1].next, 0u);
    ASSERT_EQ(tcaStartDMADesc(1), TCA_SUCCESS);

    ASSERT_EQ(tcaSetDMAChain(1, t0), TCA_SUCCESS) << "cut after the table's last entry";
    EXPECT_EQ(chain(1)[0].next, 0u);
    ASSERT_EQ(tcaDestroyDMADesc(t0), TCA_SUCCESS);
    EXPECT_EQ(tcaDestroyDMADesc(t0), TCA_ERROR_INVALID_DESC);
    ASSERT_EQ(tcaStartDMADesc(1), TCA_SUCCESS) << "what a destroyed table loaded stays loaded";
    int t2 = -1;
    ASSERT_EQ(tcaCreateDMADesc(&t2, 1), TCA_SUCCESS);
    EXPECT_EQ(t2, t0) << "the lowest free tag";

    tcaDesc *d = tcaDescNew();
    ASSERT_EQ(tcaDescSetMemcpy(d, &src, 8, &src, 0, 8, 0, 0, 0), TCA_SUCCESS);
    ASSERT_EQ(tcaDescSet(d, 1), TCA_SUCCESS);
    EXPECT_EQ(tcaSetDMAChain(1, t1), TCA_ERROR_EMPTY_CHAIN)
        << "tcaDescSet emptied the positions the tables had filled";
    tcaDescFree(d);
    tcaDestroyDMADesc(t1);
    tcaDestroyDMADesc(t2);
}

TEST_F(TcaDevice, ResetUnloadsChannelsAndDropsNotifications)
{
    tcaHandle src = local(tcaMemoryCPU, 64);
    tcaDesc *d = tcaDescNew();
    ASSERT_EQ(tcaDescSetMemcpy(d, &src, 8, &src, 0, 8, 0, 0, 0), TCA_SUCCESS);
    ASSERT_EQ(tcaDescSet(d, 2), TCA_SUCCESS);
    ASSERT_TRUE(fake.raise(4, 0x100));
    ASSERT_TRUE(fake.raise(5, 0x100));
    EXPECT_EQ(tcaTestDMARecvDesc(nullptr, 5, 0x100), TCA_SUCCESS) << "keeps (4, 0x100)";
    fake.regs[P2_REG_NOTIFY_HEAD] = 2;
    fake.calls.clear();
    ASSERT_EQ(tcaReset(), TCA_SUCCESS);
    EXPECT_EQ(fake.written(P2_REG_NOTIFY_TAIL), 2u) << "the board learns the ring is read";
    EXPECT_EQ(fake.ops_named("wait_reg").size(), 1u) << "waits for the loaded channel only";
    EXPECT_EQ(tcaStartDMADesc(2), TCA_ERROR_CHANNEL_NOT_SET);
    EXPECT_EQ(tcaTestDMARecvDesc(nullptr, 4, 0x100), TCA_NOT_YET) << "the kept one is gone";
    ASSERT_TRUE(fake.raise(4, 0x100));
    EXPECT_EQ(tcaTestDMARecvDesc(nullptr, 4, 0x100), TCA_SUCCESS) << "new ones arrive";
    tcaDescFree(d);
}

// A start or load on a channel still running is refused (the DMAC would
// ignore the start). The library knows the channel idle without a register
// read once tcaWaitDMAC returned or the chain's last transfer's notification
// here was read; a late one of a run tcaWaitDMAC ended does not count.
TEST_F(TcaDevice, StartOrLoadOnARunningChannelIsRefused)
{
    tcaHandle src = local(tcaMemoryCPU, 4096);
    tcaDesc *d = tcaDescNew();
    ASSERT_EQ(tcaDescSetMemcpy(d, &src, 2048, &src, 0, 8, tcaDMANotifySelf, 5, 0x77), TCA_SUCCESS);
    ASSERT_EQ(tcaDescSet(d, 0), TCA_SUCCESS);
    fake.calls.clear();
    ASSERT_EQ(tcaStartDMADesc(0), TCA_SUCCESS);
    EXPECT_TRUE(fake.ops_named("mmio_read").empty()) << "never started: idle";
    const uint64_t status = P2_REG_DMA(0, P2_DMA_STATUS);
    fake.regs[status] = P2_DMA_BUSY;
    fake.calls.clear();
    EXPECT_EQ(tcaStartDMADesc(0), TCA_ERROR_CHANNEL_BUSY);
    EXPECT_EQ(tcaDescSet(d, 0), TCA_ERROR_CHANNEL_BUSY);
    EXPECT_TRUE(fake.ops_named("mmio_write").empty()) << "nothing started or loaded";
    EXPECT_EQ(fake.ops_named("mmio_read").size(), 2u);

    ASSERT_TRUE(fake.raise(5, 0x77));
    ASSERT_EQ(tcaWaitDMARecvDesc(&src, 5, 0x77), TCA_SUCCESS);
    fake.calls.clear();
    EXPECT_EQ(tcaStartDMADesc(0), TCA_SUCCESS) << "the end notification was read";
    EXPECT_TRUE(fake.ops_named("mmio_read").empty());

    fake.regs[status] = P2_DMA_IDLE;
    ASSERT_EQ(tcaWaitDMAC(0), TCA_SUCCESS);
    fake.calls.clear();
    EXPECT_EQ(tcaStartDMADesc(0), TCA_SUCCESS) << "tcaWaitDMAC saw the end";
    EXPECT_TRUE(fake.ops_named("mmio_read").empty());

    ASSERT_TRUE(fake.raise(5, 0x77)); // the run tcaWaitDMAC ended, late
    ASSERT_EQ(tcaTestDMARecvDesc(&src, 5, 0x77), TCA_SUCCESS);
    fake.regs[status] = P2_DMA_BUSY;
    EXPECT_EQ(tcaStartDMADesc(0), TCA_ERROR_CHANNEL_BUSY) << "not this run's end";
    fake.regs[status] = P2_DMA_IDLE;
    EXPECT_EQ(tcaStartDMADesc(0), TCA_SUCCESS) << "the status register says idle";
    tcaDescFree(d);
}

TEST_F(TcaDevice, WaitDmacWaitsForNotBusyThenChecksStatus)
{
    ASSERT_EQ(tcaWaitDMAC(1), TCA_SUCCESS);
    auto waits = fake.ops_named("wait_reg");
    ASSERT_EQ(waits.size(), 1u);
    EXPECT_EQ(waits[0].a, (uint64_t)P2_REG_DMA(1, P2_DMA_STATUS));
    EXPECT_EQ(waits[0].b, (uint64_t)P2_DMA_BUSY);
    EXPECT_EQ(waits[0].c, 0u);
    p2_error e = P2_ERR_BUSY;
    ASSERT_EQ(tcaGetDMAError(1, &e), TCA_SUCCESS);
    EXPECT_EQ(e, P2_OK);

    fake.regs[P2_REG_DMA(1, P2_DMA_STATUS)] = P2_DMA_FAILED;
    fake.regs[P2_REG_DMA(1, P2_DMA_ERROR)] = P2_ERR_SRC_REMOTE;
    EXPECT_EQ(tcaWaitDMAC(1), TCA_ERROR_DMA_FAILED);
    ASSERT_EQ(tcaGetDMAError(1, &e), TCA_SUCCESS);
    EXPECT_EQ(e, P2_ERR_SRC_REMOTE);
    EXPECT_EQ(tcaGetDMAError(0, &e), TCA_SUCCESS);
    EXPECT_EQ(e, P2_OK) << "per channel";
    EXPECT_EQ(tcaGetDMAError(9, &e), TCA_ERROR_INVALID_CHANNEL);
    EXPECT_EQ(tcaGetDMAError(0, nullptr), TCA_ERROR_INVALID_ARGUMENT);

    fake.wait_result = P2_WAIT_FAILED;
    EXPECT_EQ(tcaWaitDMAC(1), TCA_ERROR_DEVICE);
}

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

}  // namespace
