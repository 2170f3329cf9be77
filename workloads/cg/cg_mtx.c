/*
 * cg_mtx.c - the Matrix Market reader of the CG workload (cg_matrix.h):
 * "%%MatrixMarket matrix coordinate real|integer symmetric", the lower
 * triangle expanded into this rank's rows in CSR. Every rank parses the
 * whole file (keeping its own rows only), so a bad file gives every rank the
 * same "FILE:LINE: reason". Depends on the C library only.
 */
#include "cg_matrix.h"

#include <ctype.h>
#include <errno.h>
#include <math.h>
#include <stdarg.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <strings.h>

typedef struct triplet {
    int64_t row; /* local */
    int32_t col;
    double val;
} triplet;

typedef struct reader {
    const char *path;
    FILE *f;
    char *line;
    size_t cap;
    long lineno;
    char *error;
    size_t error_size;
} reader;

static int fail(reader *rd, const char *format, ...) __attribute__((format(printf, 2, 3)));
static int fail(reader *rd, const char *format, ...)
{
    char what[200];
    va_list ap;
    va_start(ap, format);
    vsnprintf(what, sizeof what, format, ap);
    va_end(ap);
    if (rd->lineno > 0)
        snprintf(rd->error, rd->error_size, "%s:%ld: %s", rd->path, rd->lineno, what);
    else
        snprintf(rd->error, rd->error_size, "%s: %s", rd->path, what);
    return -1;
}

/* The next line that is not a comment or blank; 0 at the end of the file. */
static int next_line(reader *rd, int comments)
{
    for (;;) {
        ssize_t len = getline(&rd->line, &rd->cap, rd->f);
        if (len < 0)
            return 0;
        rd->lineno++;
        char *s = rd->line;
        while (*s && isspace((unsigned char)*s))
            s++;
        if (*s == '\0' || (comments && *s == '%'))
            continue;
        return 1;
    }
}

/* An integer field of the line at *s; advances *s. */
static int read_int(char **s, long long *v)
{
    char *end;
    errno = 0;
    long long x = strtoll(*s, &end, 10);
    if (end == *s || errno != 0 || (*end && !isspace((unsigned char)*end)))
        return -1;
    *v = x;
    *s = end;
    return 0;
}

static int at_end(const char *s)
{
    while (*s && isspace((unsigned char)*s))
        s++;
    return *s == '\0';
}

static int read_header(reader *rd)
{
    if (!next_line(rd, 0))
        return fail(rd, "empty file: no %%%%MatrixMarket header");
    char banner[64] = "", object[64] = "", format[64] = "", field[64] = "", symmetry[64] = "";
    int got = sscanf(rd->line, "%63s %63s %63s %63s %63s", banner, object, format, field, symmetry);
    if (got < 1 || strcmp(banner, "%%MatrixMarket") != 0)
        return fail(rd, "not a Matrix Market file: the first line is not a %%%%MatrixMarket header");
    if (got < 5)
        return fail(rd, "the header needs 'matrix coordinate FIELD SYMMETRY'");
    if (strcasecmp(object, "matrix") != 0)
        return fail(rd, "object '%s' is not 'matrix'", object);
    if (strcasecmp(format, "coordinate") != 0)
        return fail(rd, "format '%s': only 'coordinate' (sparse) files are read", format);
    if (strcasecmp(field, "real") != 0 && strcasecmp(field, "integer") != 0 &&
        strcasecmp(field, "double") != 0)
        return fail(rd, "field '%s': only real or integer matrices are read", field);
    if (strcasecmp(symmetry, "symmetric") != 0)
        return fail(rd, "symmetry '%s': CG needs a symmetric matrix stored as 'symmetric' "
                        "(its lower triangle)", symmetry);
    return 0;
}

static int cmp_triplet(const void *a, const void *b)
{
    const triplet *x = a, *y = b;
    if (x->row != y->row)
        return (x->row > y->row) - (x->row < y->row);
    return (x->col > y->col) - (x->col < y->col);
}

/* Keeps (row, col, val) when the row is this rank's. */
static int keep(triplet **t, size_t *count, size_t *cap, const cg_csr *m, int64_t row,
                int64_t col, double val)
{
    if (row < m->row0 || row >= m->row0 + m->rows)
        return 0;
    if (*count == *cap) {
        size_t ncap = *cap ? *cap * 2 : 4096;
        triplet *nt = realloc(*t, ncap * sizeof *nt);
        if (!nt)
            return -1;
        *t = nt;
        *cap = ncap;
    }
    (*t)[(*count)++] = (triplet){row - m->row0, (int32_t)col, val};
    return 0;
}

int cg_read_mtx(const char *path, int rank, int ranks, cg_csr *m, char *error,
                size_t error_size)
{
    memset(m, 0, sizeof *m);
    reader rd = {.path = path, .error = error, .error_size = error_size};
    rd.f = fopen(path, "r");
    if (!rd.f) {
        snprintf(error, error_size, "%s: %s", path, strerror(errno));
        return -1;
    }
    triplet *t = NULL;
    size_t count = 0, cap = 0;
    int status = -1;
    long long rows, cols, entries;
    if (read_header(&rd) != 0)
        goto out;
    if (!next_line(&rd, 1)) {
        fail(&rd, "no size line (ROWS COLUMNS ENTRIES)");
        goto out;
    }
    char *s = rd.line;
    if (read_int(&s, &rows) || read_int(&s, &cols) || read_int(&s, &entries) || !at_end(s) ||
        rows < 1 || cols < 1 || entries < 0) {
        fail(&rd, "bad size line: want ROWS COLUMNS ENTRIES, positive integers");
        goto out;
    }
    if (rows != cols) {
        fail(&rd, "not square: %lld x %lld (CG needs a square matrix)", rows, cols);
        goto out;
    }
    if (rows > INT32_MAX || entries > rows * (rows + 1) / 2) {
        fail(&rd, "order %lld with %lld entries: too many for a symmetric matrix", rows, entries);
        goto out;
    }
    m->n = rows;
    m->block = (rows + ranks - 1) / ranks;
    m->row0 = m->block * rank < rows ? m->block * rank : rows;
    m->rows = (m->row0 + m->block < rows ? m->row0 + m->block : rows) - m->row0;
    long long seen = 0;
    while (next_line(&rd, 1)) {
        if (seen == entries) {
            fail(&rd, "more entries than the %lld the size line declares", entries);
            goto out;
        }
        long long i, j;
        s = rd.line;
        if (read_int(&s, &i) || read_int(&s, &j)) {
            fail(&rd, "bad entry: want ROW COLUMN VALUE");
            goto out;
        }
        char *end;
        errno = 0;
        double v = strtod(s, &end);
        if (end == s || errno == ERANGE || !isfinite(v) || !at_end(end)) {
            fail(&rd, "bad entry: want ROW COLUMN VALUE (a finite number)");
            goto out;
        }
        if (i < 1 || i > rows || j < 1 || j > rows) {
            fail(&rd, "entry (%lld, %lld) outside the matrix", i, j);
            goto out;
        }
        if (j > i) {
            fail(&rd, "entry (%lld, %lld) above the diagonal: a symmetric file holds the "
                      "lower triangle", i, j);
            goto out;
        }
        seen++;
        m->nnz += i == j ? 1 : 2;
        if (keep(&t, &count, &cap, m, i - 1, j - 1, v) ||
            (i != j && keep(&t, &count, &cap, m, j - 1, i - 1, v))) {
            fail(&rd, "out of memory");
            goto out;
        }
    }
    if (seen != entries) {
        fail(&rd, "%lld entries, the size line declares %lld", seen, entries);
        goto out;
    }
    qsort(t, count, sizeof *t, cmp_triplet);
    m->rowptr = calloc((size_t)m->rows + 1, sizeof *m->rowptr);
    m->col = malloc((count ? count : 1) * sizeof *m->col);
    m->val = malloc((count ? count : 1) * sizeof *m->val);
    if (!m->rowptr || !m->col || !m->val) {
        rd.lineno = 0;
        fail(&rd, "out of memory");
        goto out;
    }
    for (size_t k = 0; k < count; k++) {
        m->rowptr[t[k].row + 1]++;
        m->col[k] = t[k].col;
        m->val[k] = t[k].val;
    }
    for (int64_t r = 0; r < m->rows; r++)
        m->rowptr[r + 1] += m->rowptr[r];
    status = 0;
out:
    if (status != 0)
        cg_csr_free(m);
    free(t);
    free(rd.line);
    fclose(rd.f);
    return status;
}
