/*
 * coll_reduce.c - the reduction kernels: dst[i] = dst[i] op src[i] for every
 * tcaDataType x tcaOp pair that has a meaning.
 *
 *   SUM PROD MAX MIN            every type (TCA_BYTE as unsigned char)
 *   LAND LOR LXOR               every type (operands compared with 0; result 0/1)
 *   BAND BOR BXOR               integer types only (not FLOAT, DOUBLE, LONG_DOUBLE)
 *   NOOP                        none: TCA_ERROR_NOT_SUPPORTED
 */
#include <stdio.h>

#include <string.h>

#include "coll.h"

int coll_type_valid(tcaDataType type)
{
    switch (type) {
    case TCA_CHAR: case TCA_SIGNED_CHAR: case TCA_UNSIGNED_CHAR: case TCA_BYTE:
    case TCA_SHORT: case TCA_UNSIGNED_SHORT: case TCA_INT: case TCA_UNSIGNED:
    case TCA_LONG: case TCA_UNSIGNED_LONG: case TCA_LONG_LONG: case TCA_UNSIGNED_LONG_LONG:
    case TCA_FLOAT: case TCA_DOUBLE: case TCA_LONG_DOUBLE:
        return 1;
    }
    return 0;
}

void coll_type_name(tcaDataType type, char *out, size_t size)
{
    static const char *const names[] = {
        "TCA_CHAR", "TCA_SIGNED_CHAR", "TCA_UNSIGNED_CHAR", "TCA_BYTE", "TCA_SHORT",
        "TCA_UNSIGNED_SHORT", "TCA_INT", "TCA_UNSIGNED", "TCA_LONG", "TCA_UNSIGNED_LONG",
        "TCA_LONG_LONG", "TCA_UNSIGNED_LONG_LONG", "TCA_FLOAT", "TCA_DOUBLE", "TCA_LONG_DOUBLE"};
    _Static_assert(sizeof names / sizeof names[0] == TCA_TYPE_INDEX(TCA_LONG_DOUBLE) + 1,
                   "a name per type");
    if (coll_type_valid(type))
        snprintf(out, size, "%s", names[TCA_TYPE_INDEX(type)]);
    else
        snprintf(out, size, "type %#x", (unsigned)type);
}

void coll_op_name(tcaOp op, char *out, size_t size)
{
    static const char *const names[] = {"TCA_OP_SUM", "TCA_OP_PROD", "TCA_OP_BAND",
                                        "TCA_OP_LAND", "TCA_OP_BOR",  "TCA_OP_LOR",
                                        "TCA_OP_BXOR", "TCA_OP_LXOR", "TCA_OP_MAX",
                                        "TCA_OP_MIN",  "TCA_OP_NOOP"};
    _Static_assert(sizeof names / sizeof names[0] == TCA_OP_NOOP + 1, "a name per op");
    if ((int)op >= 0 && op <= TCA_OP_NOOP)
        snprintf(out, size, "%s", names[op]);
    else
        snprintf(out, size, "op %d", (int)op);
}

static int is_floating(tcaDataType type)
{
    return type == TCA_FLOAT || type == TCA_DOUBLE || type == TCA_LONG_DOUBLE;
}

tcaresult coll_op_check(tcaDataType type, tcaOp op)
{
    if (!coll_type_valid(type) || (int)op < 0 || op > TCA_OP_NOOP)
        return TCA_ERROR_INVALID_ARGUMENT;
    if (op == TCA_OP_NOOP)
        return TCA_ERROR_NOT_SUPPORTED;
    if (is_floating(type) && (op == TCA_OP_BAND || op == TCA_OP_BOR || op == TCA_OP_BXOR))
        return TCA_ERROR_NOT_SUPPORTED;
    return TCA_SUCCESS;
}

/* Integer sums and products are computed in an unsigned type of at least the
 * operand's width (U), so that they wrap modulo 2^bits as the hardware does
 * instead of overflowing signed arithmetic (undefined in C; unsigned short
 * operands would even be promoted to int and overflow there).
 * Elements are loaded and stored with memcpy: a buffer, or a piece of one,
 * need not be aligned for its type (a long double wants 16 bytes, a scratch
 * slot gives 8), and the compiler makes plain moves of it. */
#define EACH(T, EXPR)                                                                    \
    for (size_t i = 0; i < n; i++) {                                                     \
        T a, b;                                                                          \
        memcpy(&a, d + i * sizeof(T), sizeof a);                                         \
        memcpy(&b, s + i * sizeof(T), sizeof b);                                         \
        a = (EXPR);                                                                      \
        memcpy(d + i * sizeof(T), &a, sizeof a);                                         \
    }
#define ARITH(T, U)                                                                      \
    static void reduce_##T##_arith(void *dv, const void *sv, size_t n, tcaOp op)         \
    {                                                                                    \
        unsigned char *d = dv;                                                           \
        const unsigned char *s = sv;                                                     \
        switch (op) {                                                                    \
        case TCA_OP_SUM: EACH(T, (T)((U)a + (U)b)) break;                                \
        case TCA_OP_PROD: EACH(T, (T)((U)a * (U)b)) break;                               \
        case TCA_OP_MAX: EACH(T, b > a ? b : a) break;                                   \
        case TCA_OP_MIN: EACH(T, b < a ? b : a) break;                                   \
        case TCA_OP_LAND: EACH(T, (T)((a != 0) && (b != 0))) break;                      \
        case TCA_OP_LOR: EACH(T, (T)((a != 0) || (b != 0))) break;                       \
        case TCA_OP_LXOR: EACH(T, (T)((a != 0) != (b != 0))) break;                      \
        default: break;                                                                  \
        }                                                                                \
    }
#define BITS(T)                                                                          \
    static void reduce_##T##_bits(void *dv, const void *sv, size_t n, tcaOp op)          \
    {                                                                                    \
        unsigned char *d = dv;                                                           \
        const unsigned char *s = sv;                                                     \
        switch (op) {                                                                    \
        case TCA_OP_BAND: EACH(T, (T)(a & b)) break;                                     \
        case TCA_OP_BOR: EACH(T, (T)(a | b)) break;                                      \
        case TCA_OP_BXOR: EACH(T, (T)(a ^ b)) break;                                     \
        default: reduce_##T##_arith(dv, sv, n, op); break;                               \
        }                                                                                \
    }

typedef signed char schar;
typedef unsigned char uchar;
typedef unsigned short ushort;
typedef unsigned int uint;
typedef unsigned long ulong;
typedef long long llong;
typedef unsigned long long ullong;
typedef long double ldouble;

ARITH(char, unsigned) BITS(char)
ARITH(schar, unsigned) BITS(schar)
ARITH(uchar, unsigned) BITS(uchar)
ARITH(short, unsigned) BITS(short)
ARITH(ushort, unsigned) BITS(ushort)
ARITH(int, unsigned) BITS(int)
ARITH(uint, unsigned) BITS(uint)
ARITH(long, ulong) BITS(long)
ARITH(ulong, ulong) BITS(ulong)
ARITH(llong, ullong) BITS(llong)
ARITH(ullong, ullong) BITS(ullong)
ARITH(float, float)
ARITH(double, double)
ARITH(ldouble, ldouble)

void coll_reduce_apply(void *dst, const void *src, size_t n, tcaDataType type, tcaOp op)
{
    switch (type) {
    case TCA_CHAR: reduce_char_bits(dst, src, n, op); break;
    case TCA_SIGNED_CHAR: reduce_schar_bits(dst, src, n, op); break;
    case TCA_UNSIGNED_CHAR: case TCA_BYTE: reduce_uchar_bits(dst, src, n, op); break;
    case TCA_SHORT: reduce_short_bits(dst, src, n, op); break;
    case TCA_UNSIGNED_SHORT: reduce_ushort_bits(dst, src, n, op); break;
    case TCA_INT: reduce_int_bits(dst, src, n, op); break;
    case TCA_UNSIGNED: reduce_uint_bits(dst, src, n, op); break;
    case TCA_LONG: reduce_long_bits(dst, src, n, op); break;
    case TCA_UNSIGNED_LONG: reduce_ulong_bits(dst, src, n, op); break;
    case TCA_LONG_LONG: reduce_llong_bits(dst, src, n, op); break;
    case TCA_UNSIGNED_LONG_LONG: reduce_ullong_bits(dst, src, n, op); break;
    case TCA_FLOAT: reduce_float_arith(dst, src, n, op); break;
    case TCA_DOUBLE: reduce_double_arith(dst, src, n, op); break;
    case TCA_LONG_DOUBLE: reduce_ldouble_arith(dst, src, n, op); break;
    }
}
