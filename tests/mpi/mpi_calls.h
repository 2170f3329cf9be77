/* mpi_calls.h - what the two files of the mpi_calls test share: the rank,
 * the check count and CHECK, the byte pattern of the data, and the
 * collective check groups (mpi_calls_coll.c) that main (mpi_calls.c) runs
 * on several communicators. */
#ifndef MPI_CALLS_H
#define MPI_CALLS_H

#include <mpi.h>
#include <stddef.h>
#include <stdio.h>
#include <stdlib.h>

extern int rank, size, checks;

#define CHECK(c)                                                                   \
    do {                                                                           \
        checks++;                                                                  \
        if (!(c)) {                                                                \
            fprintf(stderr, "rank %d: FAIL %s (line %d)\n", rank, #c, __LINE__);   \
            exit(1);                                                               \
        }                                                                          \
    } while (0)

/* n bytes of the pattern of (who, tag) at b, and whether b holds them. */
void fill(unsigned char *b, size_t n, int who, int tag);
int ok(const unsigned char *b, size_t n, int who, int tag);

/* The collective calls, and each algorithm the layer selects, on comm. */
void collectives(MPI_Comm comm, const char *name);
void algorithms(MPI_Comm comm, const char *name);

#endif /* MPI_CALLS_H */
