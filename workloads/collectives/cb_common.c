/* cb_common.c - data of the collectives benchmark: values, typed loads and
 * stores, the expected reduction, the algorithm bandwidth. */
#include <string.h>

#include "colls.h"
#include "wl_report.h"

#ifdef CB_HAVE_MPI
MPI_Datatype cb_mpi_type(tcaDataType type)
{
    switch (type) {
    case TCA_CHAR: return MPI_SIGNED_CHAR; /* MPI_CHAR is not for reductions */
    case TCA_SIGNED_CHAR: return MPI_SIGNED_CHAR;
    case TCA_UNSIGNED_CHAR: return MPI_UNSIGNED_CHAR;
    case TCA_BYTE: return MPI_BYTE;
    case TCA_SHORT: return MPI_SHORT;
    case TCA_UNSIGNED_SHORT: return MPI_UNSIGNED_SHORT;
    case TCA_INT: return MPI_INT;
    case TCA_UNSIGNED: return MPI_UNSIGNED;
    case TCA_LONG: return MPI_LONG;
    case TCA_UNSIGNED_LONG: return MPI_UNSIGNED_LONG;
    case TCA_LONG_LONG: return MPI_LONG_LONG;
    case TCA_UNSIGNED_LONG_LONG: return MPI_UNSIGNED_LONG_LONG;
    case TCA_FLOAT: return MPI_FLOAT;
    case TCA_DOUBLE: return MPI_DOUBLE;
    case TCA_LONG_DOUBLE: return MPI_LONG_DOUBLE;
    }
    return MPI_DATATYPE_NULL;
}

MPI_Op cb_mpi_op(tcaOp op)
{
    switch (op) {
    case TCA_OP_SUM: return MPI_SUM;
    case TCA_OP_PROD: return MPI_PROD;
    case TCA_OP_BAND: return MPI_BAND;
    case TCA_OP_LAND: return MPI_LAND;
    case TCA_OP_BOR: return MPI_BOR;
    case TCA_OP_LOR: return MPI_LOR;
    case TCA_OP_BXOR: return MPI_BXOR;
    case TCA_OP_LXOR: return MPI_LXOR;
    case TCA_OP_MAX: return MPI_MAX;
    case TCA_OP_MIN: return MPI_MIN;
    default: return MPI_OP_NULL;
    }
}
#endif

double cb_algbw(double bytes, double sec)
{
    return sec > 0 ? bytes / sec / WL_BYTES_PER_GB : 0;
}

double cb_value(int q, size_t i, int it)
{
    return (double)((q + (long)i + it) % 3 + 1);
}

void cb_store(void *buf, size_t i, tcaDataType type, double v)
{
    size_t es = TCA_TYPE_SIZE(type);
    unsigned char *p = (unsigned char *)buf + i * es;
    switch (type) {
    case TCA_FLOAT: { float x = (float)v; memcpy(p, &x, es); break; }
    case TCA_DOUBLE: memcpy(p, &v, es); break;
    case TCA_LONG_DOUBLE: { long double x = v; memcpy(p, &x, es); break; }
    default: { long long x = (long long)v; memcpy(p, &x, es); break; }
    }
}

double cb_load(const void *buf, size_t i, tcaDataType type)
{
    size_t es = TCA_TYPE_SIZE(type);
    const unsigned char *p = (const unsigned char *)buf + i * es;
    switch (type) {
    case TCA_FLOAT: { float x; memcpy(&x, p, es); return x; }
    case TCA_DOUBLE: { double x; memcpy(&x, p, es); return x; }
    case TCA_LONG_DOUBLE: { long double x; memcpy(&x, p, es); return (double)x; }
    case TCA_CHAR: case TCA_SIGNED_CHAR: { signed char x; memcpy(&x, p, 1); return x; }
    case TCA_SHORT: { short x; memcpy(&x, p, es); return x; }
    case TCA_INT: { int x; memcpy(&x, p, es); return x; }
    default: { unsigned long long x = 0; memcpy(&x, p, es); return (double)x; }
    }
}

double cb_typed(double v, tcaDataType type)
{
    long double slot[2] = {0, 0};
    cb_store(slot, 0, type, v);
    return cb_load(slot, 0, type);
}

double cb_reduced(int size, size_t i, int it, tcaOp op)
{
    double acc = cb_value(0, i, it);
    for (int q = 1; q < size; q++) {
        double x = cb_value(q, i, it);
        long long a = (long long)acc, b = (long long)x;
        switch (op) {
        case TCA_OP_SUM: acc += x; break;
        case TCA_OP_PROD: acc *= x; break;
        case TCA_OP_MAX: acc = x > acc ? x : acc; break;
        case TCA_OP_MIN: acc = x < acc ? x : acc; break;
        case TCA_OP_BAND: acc = (double)(a & b); break;
        case TCA_OP_BOR: acc = (double)(a | b); break;
        case TCA_OP_BXOR: acc = (double)(a ^ b); break;
        case TCA_OP_LAND: acc = a && b; break;
        case TCA_OP_LOR: acc = a || b; break;
        case TCA_OP_LXOR: acc = !a != !b; break;
        default: break;
        }
    }
    return acc;
}
