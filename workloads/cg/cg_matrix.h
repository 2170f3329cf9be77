/*
 * cg_matrix.h - the CG workload's matrices: a rank's rows of a symmetric
 * positive definite matrix in CSR, read from a Matrix Market file or
 * generated with the shape (N, nnz) of one of the published test matrices.
 * Host numerics only; depends on the C library.
 *
 * Rows are split into `ranks` blocks of `block` = ceil(N / ranks) rows
 * (rank q owns rows [q*block, min((q+1)*block, N)); the last ranks may own
 * fewer, or none): the vector the CG allgathers is padded to ranks*block
 * elements, whose padding is never referenced by a column index.
 */
#ifndef CG_MATRIX_H
#define CG_MATRIX_H

#include <stddef.h>
#include <stdint.h>

/* A rank's rows in CSR (column indices are global, 0 .. n-1). */
typedef struct cg_csr {
    int64_t n;        /* global order */
    int64_t nnz;      /* global nonzeros (both triangles and the diagonal) */
    int64_t block;    /* rows per rank: ceil(n / ranks) */
    int64_t row0;     /* first row of this rank */
    int64_t rows;     /* this rank's rows (0 .. block) */
    int64_t *rowptr;  /* rows + 1 */
    int32_t *col;     /* rowptr[rows] */
    double *val;
} cg_csr;

/* The published shapes (hardware.md, section 3). */
typedef struct cg_shape {
    const char *name;
    int64_t n, nnz;
    int dims;          /* the mesh the original comes from: 2 or 3 (strides of the bands) */
    const char *origin; /* one line: what the original is */
} cg_shape;

/* The shape called `name`; NULL if none. */
const cg_shape *cg_shape_find(const char *name);
/* "nasa2910|s1rmq4m1|..." for messages. */
const char *cg_shape_names(void);

/* Generates this rank's rows of the SPD matrix with `shape`'s N and nnz
 * exactly (structure and values in cg_matrix.c's header comment), from
 * `seed`. Returns 0, or -1 with one line in `error`. */
int cg_generate(const cg_shape *shape, uint64_t seed, int rank, int ranks, cg_csr *m,
                char *error, size_t error_size);

/* Reads this rank's rows of the Matrix Market file `path` (coordinate,
 * real or integer, symmetric: the lower triangle, expanded). Every rank
 * reads the whole file, so every rank finds the same error. Returns 0, or
 * -1 with "FILE:LINE: reason" (or "FILE: reason") in `error`. */
int cg_read_mtx(const char *path, int rank, int ranks, cg_csr *m, char *error,
                size_t error_size);

/* Frees the arrays. */
void cg_csr_free(cg_csr *m);

/* y[0 .. rows) = this rank's rows times x (x indexed by the column indices). */
void cg_spmv(const cg_csr *m, const double *x, double *y);

/* Renumbers the column indices for a vector whose blocks of `block` elements
 * lie in another order: global column j moves to slot[j / block] * block +
 * j % block (slot: a permutation of the ranks' blocks). */
void cg_csr_remap(cg_csr *m, const int *slot);

/* The number of distinct columns this rank's rows reference (the x elements
 * its SpMV gathers); before cg_csr_remap. */
int64_t cg_distinct_columns(const cg_csr *m);

#endif /* CG_MATRIX_H */
