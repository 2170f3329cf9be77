/*
 * p2mpi_datatype.c - datatypes for the MPI layer: element sizes and extents,
 * packing a buffer of any type to bytes and back (PMPI_Pack for derived
 * types, memcpy for contiguous ones), local copies and their cost
 * (mpi_copy_gbps). Depends on p2mpi_core.c.
 */
#define _GNU_SOURCE
#include "p2mpi_datatype.h"

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
