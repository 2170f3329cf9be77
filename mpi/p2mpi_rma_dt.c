/*
 * p2mpi_rma_dt.c - datatypes for one-sided communication: the runs of memory
 * a datatype occupies at the target (the predefined datatypes and ops by
 * number, and the one predefined type a derived type is built of, are the
 * datatype unit's: the collectives name them too). Depends on the datatype
 * unit (p2mpi_datatype.c) and the units below it.
 */
#define _GNU_SOURCE
#include "p2mpi_rma.h"

#include <stdlib.h>
#include <string.h>

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
