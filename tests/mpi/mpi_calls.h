/*
 * mpi_calls.h - what the two files of mpi_calls (mpi_calls.c says what it
 * checks) share: the job, the data pattern, the checks
 * (p2_check.h, with the MPI rank), and the collectives' groups of checks
 * (mpi_calls_coll.c).
 */
#ifndef MPI_CALLS_H
#define MPI_CALLS_H

#include <mpi.h>
#include <stddef.h>

/* The MPI rank and size of MPI_COMM_WORLD; p2_check.h names the rank in its
 * messages (this program is built without the TCA library). */
extern int rank, size;
#define P2_CHECK_RANK() rank
#include "p2_check.h"

/* b[0 .. n) of the pattern of message `tag` from rank `who`; whether b
 * holds it. */
void fill(unsigned char *b, size_t n, int who, int tag);
int ok(const unsigned char *b, size_t n, int who, int tag);

/* The collectives on `comm` (named `name` in the printed line), and each
 * algorithm the layer selects for them. */
void collectives(MPI_Comm comm, const char *name);
void algorithms(MPI_Comm comm, const char *name);

#endif /* MPI_CALLS_H */
