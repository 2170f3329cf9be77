/*
 * p2mpi_datatype.c - datatypes for the MPI layer: element sizes and extents,
 * packing a buffer of any type to bytes and back (PMPI_Pack for derived
 * types, memcpy for contiguous ones), local copies and their cost
 * (mpi_copy_gbps), the predefined datatypes and ops by number and the one
 * predefined type a derived type is built of. Depends on p2mpi_core.c.
 */
#define _GNU_SOURCE
#include "p2mpi_datatype.h"

#include <stdio.h>
#include <stdlib.h>
#include <string.h>

/* ---- Datatypes -------------------------------------------------------------- */

size_t pm_type_size(MPI_Datatype t)
{
    int sz = 0;
    if (t == MPI_DATATYPE_NULL || PMPI_Type_size(t, &sz) != MPI_SUCCESS)
        pm_fatal("invalid datatype");
    return (size_t)sz;
}

MPI_Aint pm_type_extent(MPI_Datatype t)
{
    MPI_Aint lb, ext;
    PMPI_Type_get_extent(t, &lb, &ext);
    return ext;
}

int pm_type_contig(MPI_Datatype t)
{
    MPI_Aint lb, ext, tlb, text;
    PMPI_Type_get_extent(t, &lb, &ext);
    PMPI_Type_get_true_extent(t, &tlb, &text);
    return lb == 0 && tlb == 0 && ext == text && (size_t)ext == pm_type_size(t);
}

void *pm_type_buffer(MPI_Datatype t, int count, void **shifted)
{
    MPI_Aint tlb, text, lb, ext;
    PMPI_Type_get_true_extent(t, &tlb, &text);
    PMPI_Type_get_extent(t, &lb, &ext);
    size_t n = count > 0 ? (size_t)text + (size_t)(count - 1) * (size_t)ext : 1;
    char *base = malloc(n ? n : 1);
    if (!base)
        pm_fatal("out of memory for a %zu-byte temporary", n);
    *shifted = base - tlb;
    return base;
}

/* count elements of t at buf into n contiguous bytes at out. */
void pm_pack(const void *buf, int count, MPI_Datatype t, void *out, size_t n)
{
    if (!n)
        return;
    if (pm_type_contig(t)) {
        memcpy(out, buf, n);
        return;
    }
    int pos = 0;
    if (PMPI_Pack(buf, count, t, out, (int)n, &pos, MPI_COMM_SELF) != MPI_SUCCESS)
        pm_fatal("packing a derived datatype failed");
}

/* n bytes into buf as elements of t (n may be short of count elements). */
void pm_unpack(const void *in, size_t n, void *buf, int count, MPI_Datatype t)
{
    if (!n)
        return;
    if (pm_type_contig(t)) {
        memcpy(buf, in, n);
        return;
    }
    size_t sz = pm_type_size(t);
    int whole = (int)(n / sz);
    if (whole > count)
        whole = count;
    int pos = 0;
    if (PMPI_Unpack(in, (int)n, &pos, buf, whole, t, MPI_COMM_SELF) != MPI_SUCCESS)
        pm_fatal("unpacking a derived datatype failed");
}

void pm_local_copy(const void *src, int scount, MPI_Datatype stype, void *dst, int rcount,
                   MPI_Datatype rtype)
{
    size_t n = pm_type_size(stype) * (size_t)scount;
    if (n > pm_type_size(rtype) * (size_t)rcount)
        pm_fatal("message of %zu bytes truncated (the buffer holds %zu)", n,
                 pm_type_size(rtype) * (size_t)rcount);
    uint8_t *tmp = malloc(n ? n : 1);
    pm_pack(src, scount, stype, tmp, n);
    pm_unpack(tmp, n, dst, rcount, rtype);
    free(tmp);
    pm_charge_copy(n);
}

void pm_charge_copy(size_t n) { pm_charge((uint64_t)((double)n * 1000.0 / E.rt->prm.mpi_copy_gbps)); }

uint64_t pm_copy_ps(size_t n) { return (uint64_t)((double)n * 1000.0 / E.rt->prm.mpi_copy_gbps); }

/* ---- Predefined datatypes and ops by number ------------------------------------------
 * Their handles are addresses, which differ between processes: one-sided
 * active messages and the collectives' consistency checks name them by these. */
MPI_Datatype pm_type_code[] = {
    MPI_CHAR, MPI_SIGNED_CHAR, MPI_UNSIGNED_CHAR, MPI_BYTE, MPI_SHORT, MPI_UNSIGNED_SHORT,
    MPI_INT, MPI_UNSIGNED, MPI_LONG, MPI_UNSIGNED_LONG, MPI_LONG_LONG, MPI_UNSIGNED_LONG_LONG,
    MPI_FLOAT, MPI_DOUBLE, MPI_LONG_DOUBLE, MPI_WCHAR, MPI_C_BOOL, MPI_INT8_T, MPI_INT16_T,
    MPI_INT32_T, MPI_INT64_T, MPI_UINT8_T, MPI_UINT16_T, MPI_UINT32_T, MPI_UINT64_T, MPI_AINT,
    MPI_OFFSET, MPI_COUNT, MPI_C_FLOAT_COMPLEX, MPI_C_DOUBLE_COMPLEX, MPI_C_LONG_DOUBLE_COMPLEX,
    MPI_FLOAT_INT, MPI_DOUBLE_INT, MPI_LONG_INT, MPI_2INT, MPI_SHORT_INT, MPI_LONG_DOUBLE_INT,
    MPI_INTEGER, MPI_REAL, MPI_DOUBLE_PRECISION, MPI_COMPLEX, MPI_DOUBLE_COMPLEX, MPI_LOGICAL,
    MPI_CHARACTER, MPI_2INTEGER, MPI_2REAL, MPI_2DOUBLE_PRECISION,
};
MPI_Op pm_op_code[] = {MPI_MAX,  MPI_MIN,  MPI_SUM,    MPI_PROD,   MPI_LAND,    MPI_BAND, MPI_LOR,
                       MPI_BOR,  MPI_LXOR, MPI_BXOR,   MPI_MAXLOC, MPI_MINLOC,  MPI_REPLACE, MPI_NO_OP};
static const char *const op_names[] = {
    "MPI_MAX", "MPI_MIN",  "MPI_SUM",    "MPI_PROD",   "MPI_LAND",    "MPI_BAND",  "MPI_LOR",
    "MPI_BOR", "MPI_LXOR", "MPI_BXOR",   "MPI_MAXLOC", "MPI_MINLOC",  "MPI_REPLACE", "MPI_NO_OP"};
#define NTYPES (sizeof pm_type_code / sizeof pm_type_code[0])
#define NOPS (sizeof pm_op_code / sizeof pm_op_code[0])

int pm_type_to_code(MPI_Datatype t)
{
    for (size_t i = 0; i < NTYPES; i++)
        if (pm_type_code[i] == t)
            return (int)i;
    return -1;
}

int pm_op_to_code(MPI_Op op)
{
    for (size_t i = 0; i < NOPS; i++)
        if (pm_op_code[i] == op)
            return (int)i;
    return -1;
}

const char *pm_op_name(int code)
{
    return code >= 0 && (size_t)code < NOPS ? op_names[code] : "a user-defined op";
}

void pm_type_name_of(int code, char *out, size_t n)
{
    char name[MPI_MAX_OBJECT_NAME] = "";
    int len = 0;
    if (code >= 0 && (size_t)code < NTYPES)
        PMPI_Type_get_name(pm_type_code[code], name, &len);
    snprintf(out, n, "%s", name[0] ? name : "a derived datatype of several types");
}

/* The predefined type t is built of, or MPI_DATATYPE_NULL if of several. */
MPI_Datatype pm_basic_type(MPI_Datatype t)
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
        MPI_Datatype bi = pm_basic_type(types[i]);
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
