/*
 * p2mpi_datatype.h - what the datatype unit (p2mpi_datatype.c) offers the
 * units above it: sizes, packing, local copies and their cost.
 */
#ifndef P2MPI_DATATYPE_H
#define P2MPI_DATATYPE_H

#include "p2mpi_core.h"

#pragma GCC visibility push(hidden)

/* Bytes of one element, and its extent. */
size_t pm_type_size(MPI_Datatype t);
MPI_Aint pm_type_extent(MPI_Datatype t);
/* Whether count elements of t are one contiguous run starting at the buffer. */
int pm_type_contig(MPI_Datatype t);
/* A buffer for count elements of t laid out as t says (true extent); free
 * with free(base). *shifted is the address to pass as the buffer. */
void *pm_type_buffer(MPI_Datatype t, int count, void **shifted);
/* count elements of t at buf into n contiguous bytes at out, and n bytes
 * back into buf as elements of t (n may be short of count elements). */
void pm_pack(const void *buf, int count, MPI_Datatype t, void *out, size_t n);
void pm_unpack(const void *in, size_t n, void *buf, int count, MPI_Datatype t);
/* Copies count elements of stype at src into rcount of rtype at dst (local). */
void pm_local_copy(const void *src, int scount, MPI_Datatype stype, void *dst, int rcount,
                   MPI_Datatype rtype);
/* Charges a local copy of n bytes (mpi_copy_gbps), as pm_local_copy does:
 * for collectives that move blocks with memcpy (Bruck's packing, rotations). */
void pm_charge_copy(size_t n);
/* The cost of such a copy, uncharged. */
uint64_t pm_copy_ps(size_t n);
/* The predefined datatypes and ops by number (handles differ between
 * processes): a handle's number, -1 if it has none; a number's name (a
 * user-defined op's, a derived type's, for -1). */
extern MPI_Datatype pm_type_code[];
extern MPI_Op pm_op_code[];
int pm_type_to_code(MPI_Datatype t);
int pm_op_to_code(MPI_Op op);
const char *pm_op_name(int code);
void pm_type_name_of(int code, char *out, size_t n);
/* The predefined datatype t is built of (t itself if predefined), or
 * MPI_DATATYPE_NULL if of several. */
MPI_Datatype pm_basic_type(MPI_Datatype t);

#pragma GCC visibility pop

#endif /* P2MPI_DATATYPE_H */
