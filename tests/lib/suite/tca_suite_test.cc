// One suite of the TCA API, run once per backend (as UCX runs one suite per
// transport): "fake" drives the library against FakeDevice (fake_device.h)
// in this process; "emu" drives the real emulator device, so the binary must
// run as ranks under p2run (CMakeLists.txt registers lib.suite.fake and
// lib.suite.emu). The same assertions, statuses included, hold on both.
//
// Roles: tests that need a peer have a sender (rank 0) and a receiver
// (rank 1). Under p2run every rank runs every test; ranks beyond 1 only take
// part in the exchanges. On the fake this process plays both roles: the peer
// is another node of the fake cluster, nothing moves, and the fake checks
// what the library asked of the device instead of the bytes.
#include <gtest/gtest.h>

#include <cstdint>
#include <cstdlib>
#include <cstring>
#include <deque>
#include <memory>
#include <string>
#include <vector>

#include "../fake_device.h"
#include "p2.h"

namespace {

// ---- Backends ---------------------------------------------------------------

class Backend {
public:
    virtual ~Backend() = default;
    virtual const char *name() const = 0;
    // Why this backend cannot run here ("" if it can).
    virtual std::string missing() const = 0;
    virtual tcaresult attach() = 0;
    virtual void detach() = 0;
    virtual bool sender() const = 0;
    virtual bool receiver() const = 0;
    // The peer's handle for `mine`: receiver's handle to the sender and back.
    virtual tcaHandle swap(const tcaHandle &mine) = 0;
    virtual void barrier() = 0;
    // The sender's transfer carrying (slot, tag) has completed (the fake's
    // board raises the notification; the emulator's already did).
    virtual void delivered(int slot, int tag) = 0;
    // Data really moves (bytes can be checked on the receiver).
    virtual bool moves_data() const = 0;
    virtual FakeDevice *fake() { return nullptr; }
};

class FakeBackend : public Backend {
public:
    static constexpr unsigned kNode = 1, kNodes = 4, kPeer = 2;
    const char *name() const override { return "fake"; }
    std::string missing() const override { return ""; }
    tcaresult attach() override
    {
        fake_ = std::make_unique<FakeDevice>(kNode, kNodes);
        tca_set_device_for_testing(&fake_->dev);
        return tca_dev() ? TCA_SUCCESS : TCA_ERROR_DEVICE;
    }
    void detach() override
    {
        tca_set_device_for_testing(nullptr);
        fake_.reset();
    }
    bool sender() const override { return true; }
    bool receiver() const override { return true; }
    tcaHandle swap(const tcaHandle &mine) override
    {
        // The same region on another node of the fake cluster.
        return tca_handle_make(p2_node_base(kPeer) + p2_addr_offset(mine.pcie_addr), mine.size,
                               (tcaMemoryKind)mine.kind, kPeer);
    }
    void barrier() override {}
    // The notification of a transfer the peer's DMAC sent (the sender's
    // handle, `peer` below, names that node to the receiver's waits).
    void delivered(int slot, int tag) override
    {
        fake_->raise((unsigned)slot, (unsigned)tag, (int)kPeer);
    }
    bool moves_data() const override { return false; }
    FakeDevice *fake() override { return fake_.get(); }

private:
    std::unique_ptr<FakeDevice> fake_;
};

class EmuBackend : public Backend {
public:
    const char *name() const override { return "emu"; }
    std::string missing() const override
    {
        if (!std::getenv("P2_JOB"))
            return "no emulator: not running under p2run (ctest runs lib.suite.emu)";
        if (p2_size() < 2)
            return "needs 2 ranks (p2run -n 2)";
        return "";
    }
    tcaresult attach() override { return tcaInit(); }
    void detach() override
    {
        // Nothing may still be on its way to a rank that finalizes.
        EXPECT_EQ(p2_exchange_barrier(), TCA_SUCCESS);
        EXPECT_EQ(tcaFinalize(), TCA_SUCCESS);
    }
    bool sender() const override { return p2_rank() == 0; }
    bool receiver() const override { return p2_rank() == 1; }
    tcaHandle swap(const tcaHandle &mine) override
    {
        std::vector<tcaHandle> all((size_t)p2_size());
        EXPECT_EQ(p2_exchange(&mine, all.data(), sizeof mine), TCA_SUCCESS);
        return all[(size_t)(p2_rank() == 0 ? 1 : 0)];
    }
    void barrier() override { EXPECT_EQ(p2_exchange_barrier(), TCA_SUCCESS); }
    void delivered(int, int) override {}
    bool moves_data() const override { return true; }
};

// ---- Helpers ----------------------------------------------------------------

uint8_t pattern(uint32_t seed, uint64_t i)
{
    uint64_t x = i * 0x9e3779b97f4a7c15ULL + (uint64_t)seed * 0xc2b2ae3d27d4eb4fULL;
    x ^= x >> 29;
    x *= 0xbf58476d1ce4e5b9ULL;
    x ^= x >> 32;
    return (uint8_t)x;
}

struct Buf {
    uint8_t *bytes = nullptr;
    size_t size = 0;
    tcaMemoryKind kind = tcaMemoryCPU;
    tcaHandle handle{};
};

class TcaSuite : public ::testing::TestWithParam<const char *> {
protected:
    std::unique_ptr<Backend> b;
    std::deque<Buf> bufs;  // alloc hands out references: no reallocation

    void SetUp() override
    {
        if (std::string(GetParam()) == "fake")
            b = std::make_unique<FakeBackend>();
        else
            b = std::make_unique<EmuBackend>();
        std::string why = b->missing();
        if (!why.empty()) {
            b.reset();
            GTEST_SKIP() << b_name() << ": " << why;
        }
        ASSERT_EQ(b->attach(), TCA_SUCCESS);
        if (FakeDevice *f = b->fake())
            f->calls.clear();  // attaching programs the notification ring
    }
    void TearDown() override
    {
        if (!b)
            return;
        for (Buf &x : bufs) {
            EXPECT_EQ(tcaDestroyHandle(&x.handle), TCA_SUCCESS);
            EXPECT_EQ(tcaFree(x.bytes, x.kind), TCA_SUCCESS);
        }
        b->detach();
    }
    std::string b_name() const { return GetParam(); }
    bool emu() const { return b_name() == "emu"; }

    // Allocates, fills with `fill` and wraps a buffer (freed by TearDown).
    Buf &alloc(size_t size, uint8_t fill = 0, tcaMemoryKind kind = tcaMemoryCPU)
    {
        Buf x;
        void *p = nullptr;
        EXPECT_EQ(tcaMalloc(&p, size, kind), TCA_SUCCESS);
        x.bytes = (uint8_t *)p;
        x.size = size;
        x.kind = kind;
        if (p) {
            std::memset(p, fill, size);
            EXPECT_EQ(tcaCreateHandle(&x.handle, p, size, kind), TCA_SUCCESS);
        }
        bufs.push_back(x);
        return bufs.back();
    }

    // The sender's source (pattern `seed`) and the receiver's zeroed
    // destination, swapped: returns the peer's handle.
    tcaHandle pair(Buf &src, Buf &dst, uint32_t seed)
    {
        for (size_t i = 0; i < src.size; i++)
            src.bytes[i] = pattern(seed, i);
        return b->swap(dst.handle);
    }

    void wait_channel(int ch)
    {
        tcaresult r = tcaWaitDMAC(ch);
        p2_error e = P2_OK;
        if (r == TCA_ERROR_DMA_FAILED)
            tcaGetDMAError(ch, &e);
        EXPECT_EQ(r, TCA_SUCCESS) << "channel " << ch << ": " << p2_error_name(e);
    }

    // The first descriptor the library wrote into host memory for channel ch.
    const p2_desc *fake_chain(int ch)
    {
        uint64_t ptr = b->fake()->written(P2_REG_DMA(ch, P2_DMA_DESC_PTR));
        if (ptr == ~0ull)
            return nullptr;
        return (const p2_desc *)(b->fake()->host.data() + p2_addr_offset(ptr) - P2_HOST_OFFSET);
    }
};

std::string backend_name(const ::testing::TestParamInfo<const char *> &info)
{
    return info.param;
}

// ---- Init / finalize, memory, handles -----------------------------------------

TEST_P(TcaSuite, InitIsIdempotentAndFinalizeEndsIt)
{
    EXPECT_EQ(tcaInit(), TCA_SUCCESS) << "already attached: at once";
    b->barrier();
    ASSERT_EQ(tcaFinalize(), TCA_SUCCESS);
    void *p = nullptr;
    EXPECT_EQ(tcaMalloc(&p, 64, tcaMemoryCPU), TCA_ERROR_NOT_INITIALIZED);
    EXPECT_EQ(tcaStartDMADesc(0), TCA_ERROR_NOT_INITIALIZED);
    EXPECT_EQ(tcaFinalize(), TCA_ERROR_NOT_INITIALIZED) << "twice";
    if (emu())
        ASSERT_EQ(tcaInit(), TCA_SUCCESS) << "a finalized library opens again";
    else
        ASSERT_EQ(b->attach(), TCA_SUCCESS);
    EXPECT_EQ(tcaMalloc(&p, 64, tcaMemoryCPU), TCA_SUCCESS);
    EXPECT_EQ(tcaFree(p, tcaMemoryCPU), TCA_SUCCESS);
}

TEST_P(TcaSuite, MallocAndFreeBothKinds)
{
    for (tcaMemoryKind kind : {tcaMemoryCPU, tcaMemoryGPU}) {
        SCOPED_TRACE(kind == tcaMemoryCPU ? "cpu" : "gpu");
        if (kind == tcaMemoryGPU && !tca_dev()->gpu_mem) {
            EXPECT_EQ(tcaMalloc(nullptr, 64, kind), TCA_ERROR_INVALID_ARGUMENT);
            continue;  // a node without GPU memory: nothing more to check
        }
        void *p = nullptr, *q = nullptr;
        ASSERT_EQ(tcaMalloc(&p, 1000, kind), TCA_SUCCESS);
        ASSERT_EQ(tcaMalloc(&q, 64, kind), TCA_SUCCESS);
        // 64-byte aligned as the board sees it (the fake's memory itself
        // is a std::vector, so only the emulator's pointers are aligned too).
        uint8_t *base = kind == tcaMemoryCPU ? tca_dev()->host_mem : tca_dev()->gpu_mem;
        EXPECT_EQ((size_t)((uint8_t *)p - base) % 64, 0u);
        EXPECT_EQ((size_t)((uint8_t *)q - base) % 64, 0u);
        if (emu()) {
            EXPECT_EQ((uintptr_t)p % 64, 0u);
        }
        EXPECT_TRUE((uint8_t *)q >= (uint8_t *)p + 1000 || (uint8_t *)q + 64 <= (uint8_t *)p)
            << "allocations overlap";
        std::memset(p, 0xa5, 1000);  // the memory is really there
        tcaMemoryKind other = kind == tcaMemoryCPU ? tcaMemoryGPU : tcaMemoryCPU;
        EXPECT_EQ(tcaFree(p, other), TCA_ERROR_NOT_REGISTERED) << "wrong kind";
        EXPECT_EQ(tcaFree((uint8_t *)p + 64, kind), TCA_ERROR_NOT_REGISTERED) << "not the start";
        EXPECT_EQ(tcaFree(p, kind), TCA_SUCCESS);
        EXPECT_EQ(tcaFree(p, kind), TCA_ERROR_NOT_REGISTERED) << "twice";
        EXPECT_EQ(tcaFree(q, kind), TCA_SUCCESS);
        EXPECT_EQ(tcaMalloc(&p, 0, kind), TCA_ERROR_INVALID_ARGUMENT);
        EXPECT_EQ(tcaMalloc(nullptr, 64, kind), TCA_ERROR_INVALID_ARGUMENT);
        EXPECT_EQ(tcaMalloc(&p, (size_t)1 << 62, kind), TCA_ERROR_OUT_OF_MEMORY);
    }
    void *p = nullptr;
    EXPECT_EQ(tcaMalloc(&p, 64, (tcaMemoryKind)7), TCA_ERROR_INVALID_ARGUMENT);
    EXPECT_EQ(tcaFree(nullptr, tcaMemoryCPU), TCA_ERROR_INVALID_ARGUMENT);
}

TEST_P(TcaSuite, CreateHandleBounds)
{
    Buf &x = alloc(256);
    tcaHandle h{};
    EXPECT_EQ(tcaCreateHandle(&h, x.bytes, 0, tcaMemoryCPU), TCA_ERROR_INVALID_ARGUMENT);
    EXPECT_EQ(tcaCreateHandle(nullptr, x.bytes, 64, tcaMemoryCPU), TCA_ERROR_INVALID_ARGUMENT);
    EXPECT_EQ(tcaCreateHandle(&h, nullptr, 64, tcaMemoryCPU), TCA_ERROR_INVALID_ARGUMENT);
    uint64_t stack_word = 0;
    EXPECT_EQ(tcaCreateHandle(&h, &stack_word, 8, tcaMemoryCPU), TCA_ERROR_NOT_REGISTERED)
        << "outside the arena";
    EXPECT_EQ(tcaCreateHandle(&h, x.bytes, 64, tcaMemoryGPU), TCA_ERROR_NOT_REGISTERED)
        << "host memory as GPU memory";
    // Overlapping the arena's end, and sizes that would wrap the address.
    uint8_t *end = tca_dev()->host_mem + tca_g.host_arena.size;
    EXPECT_EQ(tcaCreateHandle(&h, end - 64, 128, tcaMemoryCPU), TCA_ERROR_NOT_REGISTERED);
    EXPECT_EQ(tcaCreateHandle(&h, end, 1, tcaMemoryCPU), TCA_ERROR_NOT_REGISTERED);
    EXPECT_EQ(tcaCreateHandle(&h, x.bytes, SIZE_MAX, tcaMemoryCPU), TCA_ERROR_NOT_REGISTERED);
    EXPECT_EQ(h.check, 0u) << "outputs are written only on success";
    ASSERT_EQ(tcaCreateHandle(&h, end - 64, 64, tcaMemoryCPU), TCA_SUCCESS)
        << "the arena's last bytes, no allocation needed";
    EXPECT_EQ(h.node, tca_dev()->node);
    EXPECT_EQ(h.size, 64u);
    EXPECT_EQ(tcaDestroyHandle(&h), TCA_SUCCESS);
    EXPECT_EQ(tcaDestroyHandle(&h), TCA_ERROR_INVALID_HANDLE) << "twice";
}

// ---- DMA ----------------------------------------------------------------------

// Three transfers in one chain, in scrambled order, each notifying the
// receiver with its own tag; the receiver claims them and checks every byte.
TEST_P(TcaSuite, ChainOfThreeWithNotify)
{
    constexpr size_t kPiece = 1000, kGuard = 64;
    Buf &src = alloc(3 * kPiece);
    Buf &dst = alloc(3 * kPiece + kGuard, 0xee);
    tcaHandle peer = pair(src, dst, 31);
    const size_t order[3] = {2, 0, 1};
    if (b->sender()) {
        tcaDesc *d = tcaDescNew();
        ASSERT_NE(d, nullptr);
        for (size_t k : order)
            ASSERT_EQ(tcaDescSetMemcpy(d, &peer, k * kPiece, &src.handle, k * kPiece, kPiece,
                                       tcaDMANotify, 5, 0x70 + (int)k),
                      TCA_SUCCESS);
        ASSERT_EQ(tcaDescSet(d, 0), TCA_SUCCESS);
        double t0 = emu() ? p2_wtime() : 0;
        ASSERT_EQ(tcaStartDMADesc(0), TCA_SUCCESS);
        wait_channel(0);
        if (emu()) {
            EXPECT_GT(p2_wtime(), t0) << "a DMA takes simulated time";
        }
        for (size_t k : order)
            b->delivered(5, 0x70 + (int)k);
        if (FakeDevice *f = b->fake()) {
            const p2_desc *c = fake_chain(0);
            ASSERT_NE(c, nullptr);
            for (int i = 0; i < 3; i++) {
                EXPECT_EQ(c[i].dst, peer.pcie_addr + order[i] * kPiece);
                EXPECT_EQ(c[i].src, src.handle.pcie_addr + order[i] * kPiece);
                EXPECT_EQ(c[i].length, kPiece);
                EXPECT_EQ(c[i].wait_tag, 0x70 + order[i]);
                EXPECT_EQ(c[i].next == 0, i == 2);
            }
            EXPECT_EQ(P2_DMA_START_COMMAND(f->written(P2_REG_DMA(0, P2_DMA_START))), (uint64_t)P2_DMA_START_CHAIN);
            EXPECT_NE(P2_DMA_START_TAG(f->written(P2_REG_DMA(0, P2_DMA_START))), 0u) << "a tagged start";
        }
        EXPECT_EQ(tcaDescFree(d), TCA_SUCCESS);
    }
    if (b->receiver()) {
        for (size_t k : {1, 2, 0})  // any order of claims
            EXPECT_EQ(tcaWaitDMARecvDesc(&peer, 5, 0x70 + (int)k), TCA_SUCCESS);
        EXPECT_EQ(tcaTestDMARecvDesc(nullptr, 5, 0x70), TCA_NOT_YET) << "claimed once only";
        if (b->moves_data()) {
            for (size_t i = 0; i < 3 * kPiece; i++)
                ASSERT_EQ(dst.bytes[i], pattern(31, i)) << "byte " << i;
            for (size_t i = 3 * kPiece; i < dst.size; i++)
                ASSERT_EQ(dst.bytes[i], 0xee) << "guard byte " << i;
        }
    }
}

// Register mode (tcaDMADescInt_Init): the chain goes into the channel's
// registers, and one longer than the registers hold is refused.
TEST_P(TcaSuite, RegisterMode)
{
    Buf &src = alloc(512);
    Buf &dst = alloc(512);
    tcaHandle peer = pair(src, dst, 47);
    ASSERT_EQ(tcaDMADescInt_Init(), TCA_SUCCESS);
    tcaDesc *longer = tcaDescNew();
    for (int i = 0; i <= TCA_DMA_REG_DESCS; i++)
        ASSERT_EQ(tcaDescSetMemcpy(longer, &src.handle, 0, &src.handle, 0, 8, 0, 0, 0),
                  TCA_SUCCESS);
    EXPECT_EQ(tcaDescSet(longer, 1), TCA_ERROR_CHAIN_TOO_LONG);
    EXPECT_EQ(tcaDescFree(longer), TCA_SUCCESS);
    if (b->sender()) {
        tcaDesc *d = tcaDescNew();
        ASSERT_EQ(tcaDescSetMemcpy(d, &peer, 0, &src.handle, 0, 256, 0, 0, 0), TCA_SUCCESS);
        ASSERT_EQ(tcaDescSetMemcpy(d, &peer, 256, &src.handle, 256, 256, tcaDMANotify, 6, 1),
                  TCA_SUCCESS);
        ASSERT_EQ(tcaDescSet(d, 1), TCA_SUCCESS);
        ASSERT_EQ(tcaStartDMADesc(1), TCA_SUCCESS);
        wait_channel(1);
        b->delivered(6, 1);
        if (FakeDevice *f = b->fake()) {
            EXPECT_EQ(f->written(P2_REG_DMA(1, P2_DMA_DESC_PTR)), ~0ull) << "no host memory";
            EXPECT_EQ(f->written(P2_REG_DMA(1, P2_DMA_REG_COUNT)), 2u);
            EXPECT_EQ(P2_DMA_START_COMMAND(f->written(P2_REG_DMA(1, P2_DMA_START))), (uint64_t)P2_DMA_START_REGISTERS);
            EXPECT_NE(P2_DMA_START_TAG(f->written(P2_REG_DMA(1, P2_DMA_START))), 0u) << "a tagged start";
        }
        EXPECT_EQ(tcaDescFree(d), TCA_SUCCESS);
    }
    if (b->receiver()) {
        EXPECT_EQ(tcaWaitDMARecvDesc(nullptr, 6, 1), TCA_SUCCESS);
        if (b->moves_data()) {
            for (size_t i = 0; i < 512; i++)
                ASSERT_EQ(dst.bytes[i], pattern(47, i)) << "byte " << i;
        }
    }
}

// 2D block-stride: 7 blocks of 40 bytes, source pitch 48, destination pitch
// 64; the gaps between destination blocks stay untouched.
TEST_P(TcaSuite, BlockStride2D)
{
    constexpr size_t kW = 40, kN = 7, kSp = 48, kDp = 64;
    Buf &src = alloc(kSp * kN);
    Buf &dst = alloc(kDp * kN, 0xcc);
    tcaHandle peer = pair(src, dst, 53);
    if (b->sender()) {
        tcaDesc *d = tcaDescNew();
        ASSERT_EQ(tcaDescSetMemcpy2D(d, &peer, 0, kDp, &src.handle, 0, kSp, kW, kN,
                                     tcaDMANotify, 7, 2),
                  TCA_SUCCESS);
        // The last block must lie within each region.
        EXPECT_EQ(tcaDescSetMemcpy2D(d, &peer, 0, 2 * kDp, &src.handle, 0, kSp, kW, kN, 0, 0,
                                     0),
                  TCA_ERROR_OUT_OF_RANGE);
        ASSERT_EQ(tcaDescSet(d, 2), TCA_SUCCESS);
        ASSERT_EQ(tcaStartDMADesc(2), TCA_SUCCESS);
        wait_channel(2);
        b->delivered(7, 2);
        if (b->fake()) {
            const p2_desc *c = fake_chain(2);
            ASSERT_NE(c, nullptr);
            EXPECT_EQ(c[0].flags & P2_DESC_BLOCK_STRIDE, (unsigned)P2_DESC_BLOCK_STRIDE);
            EXPECT_EQ(c[0].block_count, kN);
            EXPECT_EQ(c[0].src_stride, kSp);
            EXPECT_EQ(c[0].dst_stride, kDp);
        }
        EXPECT_EQ(tcaDescFree(d), TCA_SUCCESS);
    }
    if (b->receiver()) {
        EXPECT_EQ(tcaWaitDMARecvDesc(nullptr, 7, 2), TCA_SUCCESS);
        if (b->moves_data())
            for (size_t i = 0; i < dst.size; i++) {
                size_t k = i / kDp, in = i % kDp;
                uint8_t want = in < kW ? pattern(53, k * kSp + in) : 0xcc;
                ASSERT_EQ(dst.bytes[i], want) << "byte " << i;
            }
    }
}

// tcaTestDMARecvDesc says TCA_NOT_YET before the transfer and TCA_SUCCESS,
// once, after it.
TEST_P(TcaSuite, TestRecvNotYetThenSuccess)
{
    Buf &src = alloc(64);
    Buf &dst = alloc(64);
    tcaHandle peer = pair(src, dst, 59);
    if (b->receiver()) {
        EXPECT_EQ(tcaTestDMARecvDesc(&peer, 9, 3), TCA_NOT_YET);
    }
    b->barrier();  // the receiver has tested before anything was sent
    if (b->sender()) {
        tcaDesc *d = tcaDescNew();
        ASSERT_EQ(tcaDescSetMemcpy(d, &peer, 0, &src.handle, 0, 64, tcaDMANotify, 9, 3),
                  TCA_SUCCESS);
        ASSERT_EQ(tcaDescSet(d, 0), TCA_SUCCESS);
        ASSERT_EQ(tcaStartDMADesc(0), TCA_SUCCESS);
        wait_channel(0);
        b->delivered(9, 3);
        EXPECT_EQ(tcaDescFree(d), TCA_SUCCESS);
    }
    if (b->receiver()) {
        tcaresult r = TCA_NOT_YET;
        for (int polls = 0; r == TCA_NOT_YET && polls < 1000000; polls++)
            r = tcaTestDMARecvDesc(&peer, 9, 3);
        EXPECT_EQ(r, TCA_SUCCESS);
        EXPECT_EQ(tcaTestDMARecvDesc(&peer, 9, 3), TCA_NOT_YET) << "consumed";
        if (b->moves_data()) {
            for (size_t i = 0; i < 64; i++)
                ASSERT_EQ(dst.bytes[i], pattern(59, i)) << "byte " << i;
        }
    }
}

// The older names do what the new ones do: on the fake, the device calls are
// the same; on the emulator, both move the same bytes (locally).
TEST_P(TcaSuite, OlderNamesBehaveLikeTheNewOnes)
{
    Buf &src = alloc(256);
    Buf &dst = alloc(512);
    for (size_t i = 0; i < 256; i++)
        src.bytes[i] = pattern(61, i);
    std::vector<FakeDevice::Call> calls[2];
    std::vector<uint8_t> descs[2];
    for (int old = 0; old < 2; old++) {
        SCOPED_TRACE(old ? "old names" : "new names");
        if (b->fake())
            b->fake()->calls.clear();
        tcaDesc *d = old ? nullptr : tcaDescNew();
        int table = -1, next = 0;
        if (old)
            ASSERT_EQ(tcaCreateDMADesc(&table, 16), TCA_SUCCESS);
        else
            ASSERT_NE(d, nullptr);
        auto memcpy_ = [&](size_t dst_offset, size_t size, int flags, int slot, int tag) {
            return old ? tcaSetDMADescMemcpy(table, 0, &next, &dst.handle, dst_offset,
                                             &src.handle, 0, size, flags, slot, tag)
                       : tcaDescSetMemcpy(d, &dst.handle, dst_offset, &src.handle, 0, size,
                                          flags, slot, tag);
        };
        auto set = [&](int channel) {
            return old ? tcaSetDMAChain(channel, table) : tcaDescSet(d, channel);
        };
        ASSERT_EQ(memcpy_(256 * old, 200, tcaDMANotifySelf, 11, 20), TCA_SUCCESS);
        EXPECT_EQ(memcpy_(0, 0, 0, 0, 0), TCA_ERROR_INVALID_ARGUMENT);
        EXPECT_EQ(set(TCA_DMA_CHANNELS), TCA_ERROR_INVALID_CHANNEL);
        ASSERT_EQ(set(3), TCA_SUCCESS);
        if (b->fake()) {
            const p2_desc *c = fake_chain(3);
            ASSERT_NE(c, nullptr);
            descs[old].assign((const uint8_t *)c, (const uint8_t *)c + P2_DESC_SIZE);
            b->fake()->raise(11, 20);
        } else {
            ASSERT_EQ(tcaStartDMADesc(3), TCA_SUCCESS);
            wait_channel(3);
        }
        // tcaTestDMARecvDesc finds a delivered notification as the wait does.
        if (old)
            EXPECT_EQ(tcaTestDMARecvDesc(nullptr, 11, 20), TCA_SUCCESS);
        else
            EXPECT_EQ(tcaWaitDMARecvDesc(nullptr, 11, 20), TCA_SUCCESS);
        EXPECT_EQ(old ? tcaDestroyDMADesc(table) : tcaDescFree(d), TCA_SUCCESS);
        if (b->fake())
            calls[old] = b->fake()->calls;
    }
    EXPECT_EQ(tcaCreateDMADesc(nullptr, 1), TCA_ERROR_INVALID_ARGUMENT);
    if (b->fake()) {
        // The old chain differs only in its destination offset (256).
        ASSERT_EQ(descs[0].size(), descs[1].size());
        p2_desc d0, d1;
        std::memcpy(&d0, descs[0].data(), sizeof d0);
        std::memcpy(&d1, descs[1].data(), sizeof d1);
        EXPECT_EQ(d1.dst, d0.dst + 256);
        d1.dst = d0.dst;
        EXPECT_EQ(std::memcmp(&d0, &d1, sizeof d0), 0);
        ASSERT_EQ(calls[0].size(), calls[1].size());
        ASSERT_FALSE(calls[0].empty());
        for (size_t i = 0; i < calls[0].size(); i++) {
            const FakeDevice::Call &n = calls[0][i], &o = calls[1][i];
            EXPECT_EQ(n.op, o.op) << "call " << i;
            EXPECT_EQ(n.b, o.b) << "call " << i << " " << n.op;
            if (n.op == "wait_mem") {
                // The test reads the ring's next entry (a: word, c: serial)
                // and does not block (d); the wait blocks.
                EXPECT_EQ(o.a, n.a + 8);
                EXPECT_EQ(o.c, n.c + (1ull << 32));
                EXPECT_EQ(n.d, 1u);
                EXPECT_EQ(o.d, 0u);
            } else {
                EXPECT_EQ(n.a, o.a) << "call " << i << " " << n.op;
                EXPECT_EQ(n.c, o.c) << "call " << i << " " << n.op;
                EXPECT_EQ(n.d, o.d) << "call " << i << " " << n.op;
            }
        }
    } else {
        EXPECT_EQ(std::memcmp(dst.bytes, src.bytes, 200), 0) << "new names";
        EXPECT_EQ(std::memcmp(dst.bytes + 256, src.bytes, 200), 0) << "old names";
    }
}

// ---- PIO ----------------------------------------------------------------------

// Stores of odd sizes at odd offsets, then a marker word, then a commit; the
// receiver polls the marker with p2_wait_u64 and checks every byte.
TEST_P(TcaSuite, PioSendCommitAndMarker)
{
    constexpr size_t kBytes = 256, kMarkerAt = 248;
    constexpr uint64_t kMarker = 0x5049'4f21'0000'0001ull;
    Buf &src = alloc(kBytes);
    Buf &dst = alloc(kBytes);
    tcaHandle peer = pair(src, dst, 67);
    if (b->sender()) {
        tcaPIOHandle pio{};
        ASSERT_EQ(tcaSetPIORegion(&pio, &peer, 0, kBytes), TCA_SUCCESS);
        const size_t cuts[][2] = {{0, 3}, {3, 61}, {64, 129}, {193, 55}};
        for (const auto &c : cuts)
            ASSERT_EQ(tcaSendPIO(&pio, c[0], src.bytes + c[0], c[1]), TCA_SUCCESS);
        ASSERT_EQ(tcaSendPIO(&pio, kMarkerAt, &kMarker, 8), TCA_SUCCESS);
        ASSERT_EQ(tcaSendPIOCommit(), TCA_SUCCESS);
        if (FakeDevice *f = b->fake()) {
            auto w = f->ops_named("pio_write");
            ASSERT_EQ(w.size(), 5u);
            for (size_t i = 0; i < 4; i++) {
                EXPECT_EQ(w[i].a, p2_pio_offset(FakeBackend::kPeer,
                                                p2_addr_offset(peer.pcie_addr) - P2_HOST_OFFSET +
                                                    cuts[i][0]));
                EXPECT_EQ(w[i].b, cuts[i][1]);
            }
            EXPECT_EQ(f->calls.back().op, "pio_commit");
        }
    }
    if (b->receiver() && b->moves_data()) {
        ASSERT_EQ(p2_wait_u64((const volatile uint64_t *)(dst.bytes + kMarkerAt), kMarker),
                  TCA_SUCCESS);
        for (size_t i = 0; i < kMarkerAt; i++)
            ASSERT_EQ(dst.bytes[i], pattern(67, i)) << "byte " << i;
    }
}

// Regression: offset + size near SIZE_MAX must be refused, never wrap into
// the window (a wrapped check would let a store land anywhere in BAR2). The
// receiver then sees only the marker sent after the refusals.
TEST_P(TcaSuite, PioBoundsDoNotWrap)
{
    Buf &src = alloc(64);
    Buf &dst = alloc(64);
    tcaHandle peer = pair(src, dst, 71);
    constexpr uint64_t kMarker = 0x0bad'0ff5'e700'0001ull;
    if (b->sender()) {
        tcaPIOHandle pio{};
        EXPECT_EQ(tcaSetPIORegion(&pio, &peer, SIZE_MAX - 7, 16), TCA_ERROR_OUT_OF_RANGE);
        EXPECT_EQ(tcaSetPIORegion(&pio, &peer, SIZE_MAX, 1), TCA_ERROR_OUT_OF_RANGE);
        EXPECT_EQ(tcaSetPIORegion(&pio, &peer, 8, SIZE_MAX - 7), TCA_ERROR_OUT_OF_RANGE);
        EXPECT_EQ(tcaSetPIORegion(&pio, &peer, 8, SIZE_MAX), TCA_ERROR_OUT_OF_RANGE);
        EXPECT_EQ(pio.check, 0u) << "nothing written on failure";
        ASSERT_EQ(tcaSetPIORegion(&pio, &peer, 0, 64), TCA_SUCCESS);
        EXPECT_EQ(tcaSendPIO(&pio, SIZE_MAX - 3, src.bytes, 8), TCA_ERROR_OUT_OF_RANGE);
        EXPECT_EQ(tcaSendPIO(&pio, SIZE_MAX, src.bytes, 1), TCA_ERROR_OUT_OF_RANGE);
        EXPECT_EQ(tcaSendPIO(&pio, 8, src.bytes, SIZE_MAX - 3), TCA_ERROR_OUT_OF_RANGE);
        EXPECT_EQ(tcaSendPIO(&pio, 64, src.bytes, 1), TCA_ERROR_OUT_OF_RANGE);
        if (b->fake()) {
            EXPECT_TRUE(b->fake()->ops_named("pio_write").empty());
        }
        ASSERT_EQ(tcaSendPIO(&pio, 56, &kMarker, 8), TCA_SUCCESS);
        ASSERT_EQ(tcaSendPIOCommit(), TCA_SUCCESS);
    }
    if (b->receiver() && b->moves_data()) {
        ASSERT_EQ(p2_wait_u64((const volatile uint64_t *)(dst.bytes + 56), kMarker), TCA_SUCCESS);
        for (size_t i = 0; i < 56; i++)
            ASSERT_EQ(dst.bytes[i], 0) << "byte " << i << " written by a refused store";
    }
}

// ---- Argument errors: the same status from both backends -----------------------

TEST_P(TcaSuite, ArgumentErrors)
{
    Buf &x = alloc(128);
    tcaDesc *d = tcaDescNew();
    ASSERT_NE(d, nullptr);
    // Channels.
    for (int ch : {-1, TCA_DMA_CHANNELS}) {
        EXPECT_EQ(tcaDescSet(d, ch), TCA_ERROR_INVALID_CHANNEL) << ch;
        EXPECT_EQ(tcaStartDMADesc(ch), TCA_ERROR_INVALID_CHANNEL) << ch;
        EXPECT_EQ(tcaWaitDMAC(ch), TCA_ERROR_INVALID_CHANNEL) << ch;
        p2_error e;
        EXPECT_EQ(tcaGetDMAError(ch, &e), TCA_ERROR_INVALID_CHANNEL) << ch;
    }
    EXPECT_EQ(tcaGetDMAError(0, nullptr), TCA_ERROR_INVALID_ARGUMENT);
    EXPECT_EQ(tcaStartDMADesc(1), TCA_ERROR_CHANNEL_NOT_SET);
    EXPECT_EQ(tcaDescSet(d, 0), TCA_ERROR_EMPTY_CHAIN);
    // Slots and tags, checked even without a notify flag.
    const tcaHandle *h = &x.handle;
    EXPECT_EQ(tcaDescSetMemcpy(d, h, 64, h, 0, 8, 0, -1, 0), TCA_ERROR_INVALID_SLOT);
    EXPECT_EQ(tcaDescSetMemcpy(d, h, 64, h, 0, 8, 0, TCA_WAIT_SLOTS, 0), TCA_ERROR_INVALID_SLOT);
    EXPECT_EQ(tcaDescSetMemcpy(d, h, 64, h, 0, 8, 0, 0, -1), TCA_ERROR_INVALID_TAG);
    EXPECT_EQ(tcaDescSetMemcpy(d, h, 64, h, 0, 8, 0, 0, (int)TCA_WAIT_TAG_MAX + 1),
              TCA_ERROR_INVALID_TAG);
    EXPECT_EQ(tcaWaitDMARecvDesc(nullptr, TCA_WAIT_SLOTS, 0), TCA_ERROR_INVALID_SLOT);
    EXPECT_EQ(tcaTestDMARecvDesc(nullptr, -1, 0), TCA_ERROR_INVALID_SLOT);
    EXPECT_EQ(tcaTestDMARecvDesc(nullptr, 0, (int)TCA_WAIT_TAG_MAX + 1), TCA_ERROR_INVALID_TAG);
    // Null pointers and bad handles.
    EXPECT_EQ(tcaDescSetMemcpy(nullptr, h, 64, h, 0, 8, 0, 0, 0), TCA_ERROR_INVALID_ARGUMENT);
    EXPECT_EQ(tcaDescSetMemcpy(d, nullptr, 64, h, 0, 8, 0, 0, 0), TCA_ERROR_INVALID_HANDLE);
    EXPECT_EQ(tcaDescSetMemcpy(d, h, 64, nullptr, 0, 8, 0, 0, 0), TCA_ERROR_INVALID_HANDLE);
    EXPECT_EQ(tcaDescSetMemcpy(d, h, 64, h, 0, 8, 1 << 7, 0, 0), TCA_ERROR_INVALID_FLAGS);
    EXPECT_EQ(tcaDescSetMemcpy(d, h, 64, h, 0, 65, 0, 0, 0), TCA_ERROR_OUT_OF_RANGE);
    EXPECT_EQ(tcaDescSetMemcpy(d, h, SIZE_MAX, h, 0, 8, 0, 0, 0), TCA_ERROR_OUT_OF_RANGE);
    tcaHandle forged = x.handle;
    forged.size += 64;
    EXPECT_EQ(tcaDescSetMemcpy(d, &forged, 0, h, 0, 8, 0, 0, 0), TCA_ERROR_INVALID_HANDLE);
    EXPECT_EQ(tcaTestDMARecvDesc(&forged, 0, 0), TCA_ERROR_INVALID_HANDLE);
    EXPECT_EQ(tcaDescSet(nullptr, 0), TCA_ERROR_INVALID_ARGUMENT);
    EXPECT_EQ(tcaDescFree(nullptr), TCA_ERROR_INVALID_ARGUMENT);
    EXPECT_EQ(tcaSendPIO(nullptr, 0, x.bytes, 8), TCA_ERROR_INVALID_ARGUMENT);
    tcaPIOHandle unset{};
    EXPECT_EQ(tcaSendPIO(&unset, 0, x.bytes, 8), TCA_ERROR_INVALID_HANDLE);
    EXPECT_EQ(tcaDescSet(d, 0), TCA_ERROR_EMPTY_CHAIN) << "every refusal appended nothing";
    EXPECT_EQ(tcaDescFree(d), TCA_SUCCESS);
    if (b->fake()) {
        for (const FakeDevice::Call &c : b->fake()->calls)
            EXPECT_TRUE(c.op == "mmio_read") << "a refused call wrote: " << c.op;
    }
}

INSTANTIATE_TEST_SUITE_P(Backends, TcaSuite, ::testing::Values("fake", "emu"), backend_name);

}  // namespace
