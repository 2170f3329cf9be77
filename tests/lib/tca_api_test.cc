// The public header's promises that need no device: status strings, the
// tcaDataType encoding, the operator list, and plain-bytes handles.
#include <gtest/gtest.h>

#include <cstring>
#include <set>
#include <string>
#include <type_traits>

#include "peach2_hw.h" /* not included by tca-api.h: the limits are checked here */
#include "tca-api.h"

namespace {

constexpr int kFirstStatus = TCA_ERROR_NOTIFY_BACKLOG;  // the most negative
constexpr int kLastStatus = TCA_NOT_YET;

TEST(TcaApi, EveryStatusHasItsOwnName)
{
    std::set<std::string> names;
    for (int r = kFirstStatus; r <= kLastStatus; r++) {
        const char *s = tcaGetErrorString((tcaresult)r);
        ASSERT_NE(s, nullptr);
        EXPECT_NE(std::string(s), "unknown tcaresult") << r;
        EXPECT_TRUE(names.insert(s).second) << "duplicate name for " << r << ": " << s;
    }
    EXPECT_EQ(names.size(), (size_t)(kLastStatus - kFirstStatus + 1));
}

TEST(TcaApi, UnknownStatusesAreNamedToo)
{
    EXPECT_STREQ(tcaGetErrorString((tcaresult)(kFirstStatus - 1)), "unknown tcaresult");
    EXPECT_STREQ(tcaGetErrorString((tcaresult)(kLastStatus + 1)), "unknown tcaresult");
    EXPECT_STREQ(tcaGetErrorString((tcaresult)12345), "unknown tcaresult");
}

TEST(TcaApi, SuccessIsZeroErrorsNegativeNotYetPositive)
{
    EXPECT_EQ(TCA_SUCCESS, 0);
    EXPECT_GT(TCA_NOT_YET, 0);
    for (int r = kFirstStatus; r < 0; r++)
        EXPECT_NE(std::string(tcaGetErrorString((tcaresult)r)).find("TCA_ERROR_"),
                  std::string::npos);
}

const int kTypes[] = {TCA_CHAR,  TCA_SIGNED_CHAR,   TCA_UNSIGNED_CHAR,      TCA_BYTE,
                      TCA_SHORT, TCA_UNSIGNED_SHORT, TCA_INT,               TCA_UNSIGNED,
                      TCA_LONG,  TCA_UNSIGNED_LONG,  TCA_LONG_LONG,         TCA_UNSIGNED_LONG_LONG,
                      TCA_FLOAT, TCA_DOUBLE,         TCA_LONG_DOUBLE};

TEST(TcaApi, DataTypeHighBitsAreTheElementSize)
{
    EXPECT_EQ(TCA_CHAR >> 8, (int)sizeof(char));
    EXPECT_EQ(TCA_SIGNED_CHAR >> 8, (int)sizeof(signed char));
    EXPECT_EQ(TCA_UNSIGNED_CHAR >> 8, (int)sizeof(unsigned char));
    EXPECT_EQ(TCA_BYTE >> 8, 1);
    EXPECT_EQ(TCA_SHORT >> 8, (int)sizeof(short));
    EXPECT_EQ(TCA_UNSIGNED_SHORT >> 8, (int)sizeof(unsigned short));
    EXPECT_EQ(TCA_INT >> 8, (int)sizeof(int));
    EXPECT_EQ(TCA_UNSIGNED >> 8, (int)sizeof(unsigned));
    EXPECT_EQ(TCA_LONG >> 8, (int)sizeof(long));
    EXPECT_EQ(TCA_UNSIGNED_LONG >> 8, (int)sizeof(unsigned long));
    EXPECT_EQ(TCA_LONG_LONG >> 8, (int)sizeof(long long));
    EXPECT_EQ(TCA_UNSIGNED_LONG_LONG >> 8, (int)sizeof(unsigned long long));
    EXPECT_EQ(TCA_FLOAT >> 8, (int)sizeof(float));
    EXPECT_EQ(TCA_DOUBLE >> 8, (int)sizeof(double));
    EXPECT_EQ(TCA_LONG_DOUBLE >> 8, (int)sizeof(long double));
    for (int t : kTypes)
        EXPECT_EQ(TCA_TYPE_SIZE(t), (size_t)(t >> 8));
}

TEST(TcaApi, DataTypeLowBitsAreADenseIndexEndingAtLongDouble)
{
    const int table_size = (TCA_LONG_DOUBLE & 0xff) + 1;
    EXPECT_EQ(table_size, (int)(sizeof kTypes / sizeof kTypes[0]));
    std::set<int> seen;
    for (int t : kTypes) {
        int index = t & 0xff;
        EXPECT_GE(index, 0);
        EXPECT_LT(index, table_size);
        EXPECT_TRUE(seen.insert(index).second) << "index " << index << " twice";
        EXPECT_EQ(TCA_TYPE_INDEX(t), (unsigned)index);
    }
}

TEST(TcaApi, OperatorsAreDenseWithNoopLast)
{
    const int ops[] = {TCA_OP_SUM, TCA_OP_PROD, TCA_OP_BAND, TCA_OP_LAND, TCA_OP_BOR, TCA_OP_LOR,
                       TCA_OP_BXOR, TCA_OP_LXOR, TCA_OP_MAX, TCA_OP_MIN, TCA_OP_NOOP};
    std::set<int> seen;
    for (int op : ops) {
        EXPECT_GE(op, 0);
        EXPECT_LE(op, TCA_OP_NOOP);
        EXPECT_TRUE(seen.insert(op).second);
    }
    EXPECT_EQ(TCA_OP_NOOP + 1, (int)(sizeof ops / sizeof ops[0]));
}

// Handles cross process boundaries as raw bytes: every member an integer.
static_assert(std::is_trivially_copyable<tcaHandle>::value, "");
static_assert(std::is_standard_layout<tcaHandle>::value, "");
static_assert(std::is_integral<decltype(tcaHandle::pcie_addr)>::value, "");
static_assert(std::is_integral<decltype(tcaHandle::size)>::value, "");
static_assert(std::is_integral<decltype(tcaHandle::kind)>::value, "");
static_assert(std::is_integral<decltype(tcaHandle::node)>::value, "");
static_assert(std::is_integral<decltype(tcaHandle::check)>::value, "");
static_assert(std::is_integral<decltype(tcaHandle::reserved)>::value, "");
static_assert(sizeof(tcaHandle) == sizeof(uint64_t) * 2 + sizeof(uint32_t) * 4,
              "no padding, no hidden members");
static_assert(std::is_trivially_copyable<tcaPIOHandle>::value, "");
static_assert(std::is_integral<decltype(tcaPIOHandle::window_offset)>::value, "");
static_assert(std::is_integral<decltype(tcaPIOHandle::size)>::value, "");
static_assert(std::is_integral<decltype(tcaPIOHandle::node)>::value, "");
static_assert(std::is_integral<decltype(tcaPIOHandle::check)>::value, "");

TEST(TcaApi, HandleIsFixedSizePlainBytes)
{
    EXPECT_EQ(sizeof(tcaHandle), 32u);
    EXPECT_EQ(sizeof(tcaPIOHandle), 24u);
}

TEST(TcaApi, LimitsAreTheHardwares)
{
    EXPECT_EQ(TCA_DMA_CHANNELS, P2_DMA_CHANNELS);
    EXPECT_EQ(TCA_DMA_REG_DESCS, P2_DESC_REG_SLOTS);
    EXPECT_EQ(TCA_WAIT_SLOTS, P2_NOTIFY_SLOTS);
    EXPECT_EQ((unsigned)TCA_WAIT_TAG_MAX, P2_NOTIFY_TAG_MAX);
    EXPECT_EQ(TCA_DMA_MAX_LENGTH, P2_DESC_MAX_LENGTH);
    EXPECT_EQ(TCA_PIO_NODE_SPAN, P2_PIO_NODE_SPAN);
}

TEST(TcaApi, FlagsAreDistinctBits)
{
    const int flags[] = {tcaDMAUseInternal, tcaDMAUseNotifyInternal, tcaDMANotify,
                         tcaDMANotifySelf, tcaDMAPipeline};
    int all = 0;
    for (int f : flags) {
        EXPECT_EQ(f & (f - 1), 0) << "one bit each";
        EXPECT_EQ(all & f, 0);
        all |= f;
    }
}

TEST(TcaApi, CallsBeforeInitSayNotInitialised)
{
    tcaHandle h{};
    void *p = nullptr;
    EXPECT_EQ(tcaMalloc(&p, 64, tcaMemoryCPU), TCA_ERROR_NOT_INITIALIZED);
    EXPECT_EQ(tcaFree(p, tcaMemoryCPU), TCA_ERROR_NOT_INITIALIZED);
    EXPECT_EQ(tcaCreateHandle(&h, &h, sizeof h, tcaMemoryCPU), TCA_ERROR_NOT_INITIALIZED);
    EXPECT_EQ(tcaDMADescInt_Init(), TCA_ERROR_NOT_INITIALIZED);
    EXPECT_EQ(tcaStartDMADesc(0), TCA_ERROR_NOT_INITIALIZED);
    EXPECT_EQ(tcaWaitDMAC(0), TCA_ERROR_NOT_INITIALIZED);
    EXPECT_EQ(tcaWaitDMARecvDesc(&h, 0, 0), TCA_ERROR_NOT_INITIALIZED);
    EXPECT_EQ(tcaTestDMARecvDesc(&h, 0, 0), TCA_ERROR_NOT_INITIALIZED);
    EXPECT_EQ(tcaSendPIOCommit(), TCA_ERROR_NOT_INITIALIZED);
    EXPECT_EQ(tcaFinalize(), TCA_ERROR_NOT_INITIALIZED);
    tcaDesc *d = tcaDescNew();  // chains need no device until they are filled
    ASSERT_NE(d, nullptr);
    EXPECT_EQ(tcaDescSetMemcpy(d, &h, 0, &h, 0, 8, 0, 0, 0), TCA_ERROR_NOT_INITIALIZED);
    EXPECT_EQ(tcaDescSet(d, 0), TCA_ERROR_NOT_INITIALIZED);
    EXPECT_EQ(tcaDescFree(d), TCA_SUCCESS);
    EXPECT_EQ(tcaDescFree(nullptr), TCA_ERROR_INVALID_ARGUMENT);
}

}  // namespace
