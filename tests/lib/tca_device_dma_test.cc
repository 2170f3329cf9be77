// The API's DMA calls against the fake device: chains in host memory and in
// registers, loading, starting and waiting on channels, their errors.
#include "tca_device_fixture.h"

namespace tca_device_test {

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
    // The chain raises nothing at this node (its notification is node 2's):
    // the DMAC is told where to write the end of each run (P2_DMA_END_WB).
    auto writes = fake.ops_named("mmio_write");
    ASSERT_EQ(writes.size(), 2u) << "only DESC_PTR and END_WB";
    EXPECT_EQ(writes[0].a, (uint64_t)P2_REG_DMA(2, P2_DMA_DESC_PTR));
    EXPECT_EQ(writes[1].a, (uint64_t)P2_REG_DMA(2, P2_DMA_END_WB));
    EXPECT_EQ(writes[1].b, end_wb_addr(2));

    // Descriptor memory is not handed out to the user while the chain lives.
    void *p;
    ASSERT_EQ(tcaMalloc(&p, 64, tcaMemoryCPU), TCA_SUCCESS);
    EXPECT_FALSE((uint8_t *)p >= (const uint8_t *)mem &&
                 (uint8_t *)p < (const uint8_t *)(mem + 3));

    ASSERT_EQ(tcaStartDMADesc(2), TCA_SUCCESS);
    const uint64_t start = fake.written(P2_REG_DMA(2, P2_DMA_START));
    EXPECT_EQ(P2_DMA_START_COMMAND(start), (uint64_t)P2_DMA_START_CHAIN);
    EXPECT_NE(P2_DMA_START_TAG(start), 0u) << "a run tag for the end word";

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
    ASSERT_EQ(writes.size(), 2 * P2_DESC_SIZE / 8 + 2);
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
    EXPECT_EQ(writes[2 * P2_DESC_SIZE / 8].a, (uint64_t)P2_REG_DMA(3, P2_DMA_REG_COUNT));
    EXPECT_EQ(writes[2 * P2_DESC_SIZE / 8].b, 2u);
    // No notification at this node: the end word last (P2_DMA_END_WB).
    EXPECT_EQ(writes.back().a, (uint64_t)P2_REG_DMA(3, P2_DMA_END_WB));
    EXPECT_EQ(writes.back().b, end_wb_addr(3));

    ASSERT_EQ(tcaStartDMADesc(3), TCA_SUCCESS);
    const uint64_t start = fake.written(P2_REG_DMA(3, P2_DMA_START));
    EXPECT_EQ(P2_DMA_START_COMMAND(start), (uint64_t)P2_DMA_START_REGISTERS);
    EXPECT_NE(P2_DMA_START_TAG(start), 0u) << "a run tag for the end word";
    tcaDescFree(d);
    fake.calls.clear();
    EXPECT_EQ(tcaStartDMADesc(3), TCA_SUCCESS) << "the registers still hold the chain";
    // Whether the last run is over is asked of the end word first (the fake's
    // DMAC never writes it, so then of the status register).
    auto looked = fake.ops_named("wait_mem");
    ASSERT_EQ(looked.size(), 1u);
    EXPECT_EQ(looked[0].a, fake.host.size() - 8 * P2_DMA_CHANNELS + 8 * 3);
    EXPECT_EQ(looked[0].c, P2_DMA_START_TAG(start)) << "the last start's tag";
    EXPECT_EQ(P2_DMA_START_TAG(fake.written(P2_REG_DMA(3, P2_DMA_START))),
              P2_DMA_START_TAG(start) + 1);
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
    EXPECT_EQ(P2_DMA_START_COMMAND(fake.written(P2_REG_DMA(0, P2_DMA_START))),
              (uint64_t)P2_DMA_START_REGISTERS);
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

}  // namespace tca_device_test
