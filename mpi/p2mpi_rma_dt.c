/*
 * p2mpi_rma_dt.c - datatypes for one-sided communication: the predefined
 * datatypes and ops by number (their handles are addresses, which differ
 * between processes, so active messages name them by these), the runs of
 * memory a datatype occupies at the target, and the one predefined type a
 * derived type is built of (accumulates). Depends on the datatype unit
 * (p2mpi_datatype.c) and the units below it.
 */
#define _GNU_SOURCE
#include "p2mpi_rma.h"

#include <stdlib.h>
#include <string.h>

/* ---- Predefined datatypes and ops on the wire (their handles differ between processes) */
MPI_Datatype pm_rma_type_code[] = {
    MPI_CHAR, MPI_SIGNED_CHAR, MPI_UNSIGNED_CHAR, MPI_BYTE, MPI_SHORT, MPI_UNSIGNED_SHORT,
    MPI_INT, MPI_UNSIGNED, MPI_LONG, MPI_UNSIGNED_LONG, MPI_LONG_LONG, MPI_UNSIGNED_LONG_LONG,
    MPI_FLOAT, MPI_DOUBLE, MPI_LONG_DOUBLE, MPI_WCHAR, MPI_C_BOOL, MPI_INT8_T, MPI_INT16_T,
    MPI_INT32_T, MPI_INT64_T, MPI_UINT8_T, MPI_UINT16_T, MPI_UINT32_T, MPI_UINT64_T, MPI_AINT,
    MPI_OFFSET, MPI_COUNT, MPI_C_FLOAT_COMPLEX, MPI_C_DOUBLE_COMPLEX, MPI_C_LONG_DOUBLE_COMPLEX,
    MPI_FLOAT_INT, MPI_DOUBLE_INT, MPI_LONG_INT, MPI_2INT, MPI_SHORT_INT, MPI_LONG_DOUBLE_INT,
    MPI_INTEGER, MPI_REAL, MPI_DOUBLE_PRECISION, MPI_COMPLEX, MPI_DOUBLE_COMPLEX, MPI_LOGICAL,
    MPI_CHARACTER, MPI_2INTEGER, MPI_2REAL, MPI_2DOUBLE_PRECISION,
};
MPI_Op pm_rma_op_code[] = {MPI_MAX,  MPI_MIN, MPI_SUM,  MPI_PROD,   MPI_LAND,    MPI_BAND,  MPI_LOR,
                           MPI_BOR,  MPI_LXOR, MPI_BXOR, MPI_MAXLOC, MPI_MINLOC, MPI_REPLACE, MPI_NO_OP};
#define NTYPES (sizeof pm_rma_type_code / sizeof pm_rma_type_code[0])
#define NOPS (sizeof pm_rma_op_code / sizeof pm_rma_op_code[0])

int pm_rma_type_to_code(MPI_Datatype t)
{
    for (size_t i = 0; i < NTYPES; i++)
        if (pm_rma_type_code[i] == t)
            return (int)i;
    return -1;
}

int pm_rma_op_to_code(MPI_Op op)
{
    for (size_t i = 0; i < NOPS; i++)
        if (pm_rma_op_code[i] == op)
            return (int)i;
    return -1;
}

/* ---- Datatypes: runs and basic types ------------------------------------------------- */
/* The runs count elements of t occupy, in pack order: of bytes (elem 1,
 * stride 1) or of elements of a basic type (elem its size, stride its
 * extent). A derived type's layout comes from packing a buffer whose bytes
 * hold their own offsets, one byte of the offsets per pass. */
size_t pm_rma_runs(MPI_Datatype t, int count, size_t elem, int64_t stride, pm_run **out)
{
    size_t n = pm_type_size(t) * (size_t)count, nel = n / elem;
    pm_run *r = malloc(sizeof *r * (nel ? nel : 1));
    if (!r)
        pm_fatal("out of memory");
    *out = r;
    if (!nel)
        return 0;
    if (pm_type_contig(t)) {
        r[0].off = 0;
        r[0].n = nel;
        return 1;
    }
    MPI_Aint tlb, text, lb, ext;
    PMPI_Type_get_true_extent(t, &tlb, &text);
    PMPI_Type_get_extent(t, &lb, &ext);
    if (ext < 0)
        pm_fatal("one-sided operations on datatypes of negative extent are not modelled");
    size_t span = (size_t)text + (size_t)(count - 1) * (size_t)ext;
    uint8_t *src = malloc(span ? span : 1), *packed = malloc(n);
    int64_t *offs = calloc(n, sizeof *offs);
    if (!src || !packed || !offs)
        pm_fatal("out of memory for a datatype's layout (%zu bytes)", span);
    for (unsigned k = 0; k < 8 && (k == 0 || (span - 1) >> (8 * k)); k++) {
        for (size_t i = 0; i < span; i++)
            src[i] = (uint8_t)(i >> (8 * k));
        pm_pack(src - tlb, count, t, packed, n);
        for (size_t j = 0; j < n; j++)
            offs[j] |= (int64_t)packed[j] << (8 * k);
    }
    size_t nr = 0;
    for (size_t k = 0; k < nel; k++) {
        int64_t at = offs[k * elem] + tlb;
        if (nr && at == r[nr - 1].off + (int64_t)r[nr - 1].n * stride)
            r[nr - 1].n++;
        else
            r[nr++] = (pm_run){at, 1};
    }
    free(src);
    free(packed);
    free(offs);
    return nr;
}

/* The predefined type t is built of, or MPI_DATATYPE_NULL if of several. */
MPI_Datatype pm_rma_basic_type(MPI_Datatype t)
{
    int ni, na, nd, comb;
    PMPI_Type_get_envelope(t, &ni, &na, &nd, &comb);
    if (comb == MPI_COMBINER_NAMED)
        return t;
    int *ints = malloc(sizeof(int) * (size_t)(ni + 1));
    MPI_Aint *aints = malloc(sizeof(MPI_Aint) * (size_t)(na + 1));
    MPI_Datatype *types = malloc(sizeof(MPI_Datatype) * (size_t)(nd + 1));
    PMPI_Type_get_contents(t, ni, na, nd, ints, aints, types);
    MPI_Datatype b = MPI_DATATYPE_NULL;
    for (int i = 0; i < nd; i++) {
        MPI_Datatype bi = pm_rma_basic_type(types[i]);
        b = i == 0 || bi == b ? bi : MPI_DATATYPE_NULL;
        int ni2, na2, nd2, comb2;
        PMPI_Type_get_envelope(types[i], &ni2, &na2, &nd2, &comb2);
        if (comb2 != MPI_COMBINER_NAMED)
            PMPI_Type_free(&types[i]);
        if (b == MPI_DATATYPE_NULL)
            break;
    }
    free(ints);
    free(aints);
    free(types);
    return b;
}
