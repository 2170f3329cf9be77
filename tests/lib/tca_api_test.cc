// The public header's promises that need no device: status strings, the
// tcaDataType encoding, the operator list, flags, and calls before tcaInit.
// Every test here can fail: the enums are walked through switches that stop
// the build when an enumerator is added without updating the test
// (-Werror=switch below), and through the ranges the header documents.
#include <gtest/gtest.h>

#include <cstring>
#include <set>
#include <string>
#include <vector>

#include "tca-api.h"

namespace {

#pragma GCC diagnostic push
#pragma GCC diagnostic error "-Wswitch"

// sizeof the C type each tcaDataType names; 0 for a value that is none.
size_t c_size(tcaDataType t)
{
    switch (t) {
    case TCA_CHAR: return sizeof(char);
    case TCA_SIGNED_CHAR: return sizeof(signed char);
    case TCA_UNSIGNED_CHAR: return sizeof(unsigned char);
    case TCA_BYTE: return 1;
    case TCA_SHORT: return sizeof(short);
    case TCA_UNSIGNED_SHORT: return sizeof(unsigned short);
    case TCA_INT: return sizeof(int);
    case TCA_UNSIGNED: return sizeof(unsigned);
    case TCA_LONG: return sizeof(long);
    case TCA_UNSIGNED_LONG: return sizeof(unsigned long);
    case TCA_LONG_LONG: return sizeof(long long);
    case TCA_UNSIGNED_LONG_LONG: return sizeof(unsigned long long);
    case TCA_FLOAT: return sizeof(float);
    case TCA_DOUBLE: return sizeof(double);
    case TCA_LONG_DOUBLE: return sizeof(long double);
    }
    return 0;
}

// True for each tcaOp enumerator.
bool is_op(tcaOp op)
{
    switch (op) {
    case TCA_OP_SUM:
    case TCA_OP_PROD:
    case TCA_OP_BAND:
    case TCA_OP_LAND:
    case TCA_OP_BOR:
    case TCA_OP_LOR:
    case TCA_OP_BXOR:
    case TCA_OP_LXOR:
    case TCA_OP_MAX:
    case TCA_OP_MIN:
    case TCA_OP_NOOP: return true;
    }
    return false;
}

#pragma GCC diagnostic pop

const std::string kUnknown = "unknown tcaresult";

// Guards: a status without its own string, two statuses sharing one, and
// TCA_ERROR_LAST left behind when an error is added (LAST - 1 would then
// have a name).
TEST(TcaApi, EveryStatusFromLastErrorToNotYetHasItsOwnName)
{
    std::set<std::string> names;
    for (int r = TCA_ERROR_LAST; r <= TCA_NOT_YET; r++) {
        const char *s = tcaGetErrorString((tcaresult)r);
        ASSERT_NE(s, nullptr) << r;
        std::string name(s);
        EXPECT_NE(name, kUnknown) << r;
        EXPECT_TRUE(names.insert(name).second) << "duplicate name for " << r << ": " << s;
        // The name starts with the enumerator: errors are TCA_ERROR_*.
        EXPECT_EQ(name.rfind(r < 0 ? "TCA_ERROR_" : "TCA_", 0), 0u) << r << ": " << s;
    }
    EXPECT_EQ(std::string(tcaGetErrorString(TCA_SUCCESS)).rfind("TCA_SUCCESS", 0), 0u);
    EXPECT_EQ(std::string(tcaGetErrorString(TCA_NOT_YET)).rfind("TCA_NOT_YET", 0), 0u);
}

TEST(TcaApi, StatusesOutsideTheRangeAreUnknown)
{
    EXPECT_EQ(tcaGetErrorString((tcaresult)(TCA_ERROR_LAST - 1)), kUnknown)
        << "a new error code: make it TCA_ERROR_LAST";
    EXPECT_EQ(tcaGetErrorString((tcaresult)(TCA_NOT_YET + 1)), kUnknown)
        << "a new positive status: extend the range tested above";
    EXPECT_EQ(tcaGetErrorString((tcaresult)12345), kUnknown);
    EXPECT_EQ(tcaGetErrorString((tcaresult)-12345), kUnknown);
}

// Every code of the form (size << 8 | index) that is an enumerator: its size
// is the C type's, its index is dense in 0 .. TCA_LONG_DOUBLE & 0xff and
// unique, and no enumerator lies beyond. Guards a wrong size (e.g. long on
// an LP64 host written as 4) and a duplicated or skipped index.
TEST(TcaApi, DataTypesEncodeTheirCSizeAndADenseIndex)
{
    const unsigned last = TCA_TYPE_INDEX(TCA_LONG_DOUBLE);
    std::vector<int> owner(256, -1);
    for (int size = 0; size <= 64; size++) {
        for (int index = 0; index < 256; index++) {
            int code = TCA_TYPE_CODE(size, index);
            size_t want = c_size((tcaDataType)code);
            if (want == 0)
                continue;
            EXPECT_EQ(TCA_TYPE_SIZE(code), want) << "code 0x" << std::hex << code;
            EXPECT_EQ((size_t)size, want) << "code 0x" << std::hex << code;
            EXPECT_LE((unsigned)index, last) << "index beyond TCA_LONG_DOUBLE's";
            EXPECT_EQ(TCA_TYPE_INDEX(code), (unsigned)index);
            EXPECT_EQ(owner[(size_t)index], -1) << "index " << index << " twice";
            owner[(size_t)index] = code;
        }
    }
    for (unsigned index = 0; index <= last; index++)
        EXPECT_NE(owner[index], -1) << "no type has index " << index;
}

// Dense from 0, TCA_OP_NOOP last: tables sized TCA_OP_NOOP + 1 cover them all.
TEST(TcaApi, OperatorsAreDenseWithNoopLast)
{
    EXPECT_FALSE(is_op((tcaOp)-1));
    for (int op = 0; op <= TCA_OP_NOOP; op++)
        EXPECT_TRUE(is_op((tcaOp)op)) << op << " missing";
    for (int op = TCA_OP_NOOP + 1; op < TCA_OP_NOOP + 64; op++)
        EXPECT_FALSE(is_op((tcaOp)op)) << op << " after TCA_OP_NOOP";
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
