/*
 * fmpl_ops.c - the reduction functions of FMPL (BLACS-style type letters):
 * sum, the element of largest absolute value, the element of smallest
 * absolute value; I int32_t, S float, D double, C and Z complex pairs.
 * Complex sums add both parts; complex max/min compare |z|.
 */
#include <math.h>
#include <stdint.h>
#include <stdlib.h>

#include "fmpl/fmpl_internal.h"

#define REAL_OPS(letter, T, ABS)                                                    \
    void fmpl_##letter##sum(void *inout, const void *in, int count)                 \
    {                                                                               \
        T *a = inout;                                                               \
        const T *b = in;                                                            \
        for (int i = 0; i < count; i++)                                             \
            a[i] += b[i];                                                           \
    }                                                                               \
    void fmpl_##letter##max(void *inout, const void *in, int count)                 \
    {                                                                               \
        T *a = inout;                                                               \
        const T *b = in;                                                            \
        for (int i = 0; i < count; i++)                                             \
            if (ABS(b[i]) > ABS(a[i]))                                              \
                a[i] = b[i];                                                        \
    }                                                                               \
    void fmpl_##letter##min(void *inout, const void *in, int count)                 \
    {                                                                               \
        T *a = inout;                                                               \
        const T *b = in;                                                            \
        for (int i = 0; i < count; i++)                                             \
            if (ABS(b[i]) < ABS(a[i]))                                              \
                a[i] = b[i];                                                        \
    }

/* |INT32_MIN| does not fit an int32_t: compare magnitudes as 64-bit. */
#define IABS(x) llabs((long long)(x))
REAL_OPS(i, int32_t, IABS)
REAL_OPS(s, float, fabsf)
REAL_OPS(d, double, fabs)

#define COMPLEX_OPS(letter, T, HYPOT)                                               \
    void fmpl_##letter##sum(void *inout, const void *in, int count)                 \
    {                                                                               \
        T *a = inout;                                                               \
        const T *b = in;                                                            \
        for (int i = 0; i < 2 * count; i++)                                         \
            a[i] += b[i];                                                           \
    }                                                                               \
    void fmpl_##letter##max(void *inout, const void *in, int count)                 \
    {                                                                               \
        T *a = inout;                                                               \
        const T *b = in;                                                            \
        for (int i = 0; i < count; i++)                                             \
            if (HYPOT(b[2 * i], b[2 * i + 1]) > HYPOT(a[2 * i], a[2 * i + 1])) {    \
                a[2 * i] = b[2 * i];                                                \
                a[2 * i + 1] = b[2 * i + 1];                                        \
            }                                                                       \
    }                                                                               \
    void fmpl_##letter##min(void *inout, const void *in, int count)                 \
    {                                                                               \
        T *a = inout;                                                               \
        const T *b = in;                                                            \
        for (int i = 0; i < count; i++)                                             \
            if (HYPOT(b[2 * i], b[2 * i + 1]) < HYPOT(a[2 * i], a[2 * i + 1])) {    \
                a[2 * i] = b[2 * i];                                                \
                a[2 * i + 1] = b[2 * i + 1];                                        \
            }                                                                       \
    }

COMPLEX_OPS(c, float, hypotf)
COMPLEX_OPS(z, double, hypot)

size_t fmpl_func_elem(fmpl_func_t *f)
{
    static const struct {
        fmpl_func_t *f;
        size_t elem;
    } table[] = {
        {fmpl_isum, 4}, {fmpl_imax, 4}, {fmpl_imin, 4},
        {fmpl_ssum, 4}, {fmpl_smax, 4}, {fmpl_smin, 4},
        {fmpl_dsum, 8}, {fmpl_dmax, 8}, {fmpl_dmin, 8},
        {fmpl_csum, 8}, {fmpl_cmax, 8}, {fmpl_cmin, 8},
        {fmpl_zsum, 16}, {fmpl_zmax, 16}, {fmpl_zmin, 16},
    };
    for (size_t i = 0; i < sizeof table / sizeof table[0]; i++)
        if (table[i].f == f)
            return table[i].elem;
    return 0;
}
