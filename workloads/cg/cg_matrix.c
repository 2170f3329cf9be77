/*
 * cg_matrix.c - the published matrix shapes, the generator of SPD matrices
 * with those shapes, and the CSR kernels the CG runs on the host (cg_matrix.h).
 * Depends on the C library only.
 *
 * The generator. The originals (University of Florida collection) are
 * stiffness matrices of finite-element meshes: nasa2910 and s1rmq4m1 of
 * shell structures (2D meshes, several degrees of freedom per node), smt of
 * a 3D solid, nd3k..nd24k 3D meshes in nested-dissection order (dense-ish
 * rows of about 360 nonzeros). A mesh numbered lexicographically gives a
 * matrix of bands: a cluster of diagonals next to the main one (a node's own
 * degrees of freedom and its neighbours along the first axis) and a cluster
 * around each further axis' stride (the neighbours in the next row of the
 * mesh, and in 3D the next plane). The generator makes exactly that:
 *   - `dims` clusters of diagonals: the near one (offsets 1, 2, 3, ...) and
 *     one around each stride S_k (offsets S_k, S_k+1, S_k-1, S_k+2, ...),
 *     S_k = max(round(N^(k/dims)), S_(k-1) + 2 * width + 2), width the
 *     number of diagonals a cluster ends up with (so clusters never meet);
 *   - diagonals are taken from the clusters in turn, each adding N - d
 *     entries on each side (d its offset), while the total stays within
 *     the published count; the remainder R (< N - d) is one partial
 *     diagonal: entries (i, i+d) for i < R. So N and nnz are the published
 *     ones exactly (both triangles and the full diagonal; every published
 *     nnz - N is even).
 *   - values: a_ij = a_ji = -(0.5 + 0.5 u) s_i s_j, u uniform in [0, 1)
 *     from a hash of (seed, min(i,j), max(i,j)), so any rank computes any
 *     entry of its rows alone, and s_i = 10^(CG_GEN_DECADES (1 + sin(2 pi
 *     CG_GEN_LAYERS i / N)) / 2) a smooth coefficient field (an FE model's
 *     materials and element sizes: here three layers over one decade);
 *     a_ii = (1 + CG_GEN_MARGIN) * sum_j |a_ij|. Strictly diagonally
 *     dominant with a positive diagonal and symmetric: SPD (Gershgorin puts
 *     the spectrum in [margin min_i R_i, (2 + margin) max_i R_i], R_i the
 *     off-diagonal row sum). With the coefficient field the spectrum is
 *     spread, so CG converges steadily: from x = 0, b = 1, the recurrence
 *     residual ||r|| / ||b|| is 1e-33 (nasa2910), 1e-22 (s1rmq4m1), 1e-30
 *     (smt), 1e-56 (nd3k) after 1000 iterations, the true one at its floor
 *     (1e-12) long before; nothing nears underflow. (Without the field,
 *     values of one scale bunch the spectrum and r . r underflows before
 *     1000 iterations on the nd*k shapes; the originals, unpreconditioned,
 *     converge slower still.)
 * Each rank generates only its own rows (the band offsets are computed by
 * every rank, O(N)).
 */
#include "cg_matrix.h"

#include <math.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

/* a_ii = (1 + margin) * off-diagonal row sum; the coefficient field's
 * range (decades) and layers (see the header comment). */
#define CG_GEN_MARGIN 1e-3
#define CG_GEN_DECADES 1.0
#define CG_GEN_LAYERS 3.0
/* At most this many clusters (2D and 3D meshes). */
#define CG_GEN_MAX_DIMS 3

static const cg_shape shapes[] = {
    {"nasa2910", 2910, 174296, 2, "NASA structural shell model (2D mesh, 6 DOF per node)"},
    {"s1rmq4m1", 5489, 281111, 2, "cylindrical shell, quadrilateral elements (2D mesh)"},
    {"smt", 25710, 3753184, 3, "3D solid, thermal stress of a surface-mounted transistor"},
    {"nd3k", 9000, 3279690, 3, "3D mesh problem, nested-dissection order"},
    {"nd6k", 18000, 6897316, 3, "3D mesh problem, nested-dissection order"},
    {"nd12k", 36000, 14220946, 3, "3D mesh problem, nested-dissection order"},
    {"nd24k", 72000, 28715634, 3, "3D mesh problem, nested-dissection order"},
};

const cg_shape *cg_shape_find(const char *name)
{
    for (size_t i = 0; i < sizeof shapes / sizeof shapes[0]; i++)
        if (strcmp(shapes[i].name, name) == 0)
            return &shapes[i];
    return NULL;
}

const char *cg_shape_names(void)
{
    return "nasa2910, s1rmq4m1, smt, nd3k, nd6k, nd12k, nd24k";
}

/* ---- The band structure ---------------------------------------------------- */

typedef struct cg_bands {
    int64_t *offset; /* full diagonals (positive offsets) */
    int count;
    int64_t partial; /* offset of the partial diagonal, 0 if none */
    int64_t partial_rows; /* its entries: (i, i + partial) for i < partial_rows */
} cg_bands;

/* The next unused offset of cluster k (centre c, candidates c, c+1, c-1,
 * c+2, ...; the near cluster: 1, 2, 3, ...); 0 when it has none left. */
static int64_t cluster_next(int64_t centre, int64_t *step, int64_t n, const unsigned char *used)
{
    for (;;) {
        int64_t s = (*step)++, d;
        if (centre == 0)
            d = s + 1;
        else
            d = s % 2 == 0 ? centre + s / 2 : centre - (s + 1) / 2;
        if (centre == 0 ? d >= n : (centre + s / 2 >= n && (s + 1) / 2 >= centre))
            return 0; /* both directions out of 1 .. n-1 */
        if (d > 0 && d < n && !used[d])
            return d;
    }
}

static int make_bands(const cg_shape *shape, cg_bands *b, char *error, size_t error_size)
{
    const int64_t n = shape->n;
    const int64_t pairs = (shape->nnz - n) / 2; /* off-diagonal entries per triangle */
    memset(b, 0, sizeof *b);
    if (shape->nnz < n || (shape->nnz - n) % 2 != 0 || pairs > n * (n - 1) / 2) {
        snprintf(error, error_size, "%s: no symmetric matrix of order %lld has %lld nonzeros",
                 shape->name, (long long)n, (long long)shape->nnz);
        return -1;
    }
    int dims = shape->dims < 1 ? 1 : shape->dims > CG_GEN_MAX_DIMS ? CG_GEN_MAX_DIMS : shape->dims;
    /* Diagonals per cluster, about: pairs / n spread over the clusters. */
    int64_t width = (pairs / n) / dims + 2;
    int64_t centre[CG_GEN_MAX_DIMS] = {0}, step[CG_GEN_MAX_DIMS] = {0};
    for (int k = 1; k < dims; k++) {
        int64_t s = (int64_t)llround(pow((double)n, (double)k / dims));
        int64_t min = centre[k - 1] + 2 * width + 2;
        centre[k] = s > min ? s : min;
    }
    unsigned char *used = calloc((size_t)n, 1);
    b->offset = malloc(sizeof *b->offset * (size_t)(n > 1 ? n : 1));
    if (!used || !b->offset) {
        free(used);
        free(b->offset);
        snprintf(error, error_size, "%s: out of memory", shape->name);
        return -1;
    }
    int64_t total = 0;
    int live = dims;
    while (total < pairs && live > 0) {
        live = 0;
        for (int k = 0; k < dims && total < pairs; k++) {
            int64_t d = cluster_next(centre[k], &step[k], n, used);
            if (d == 0)
                continue;
            live++;
            used[d] = 1;
            if (total + (n - d) <= pairs) {
                b->offset[b->count++] = d;
                total += n - d;
            } else {
                b->partial = d;
                b->partial_rows = pairs - total;
                total = pairs;
            }
        }
    }
    free(used);
    if (total != pairs) {
        snprintf(error, error_size, "%s: the bands cannot hold %lld nonzeros", shape->name,
                 (long long)shape->nnz);
        free(b->offset);
        return -1;
    }
    return 0;
}

/* ---- Values ------------------------------------------------------------------ */

static uint64_t mix64(uint64_t z)
{
    z += 0x9e3779b97f4a7c15ull;
    z = (z ^ (z >> 30)) * 0xbf58476d1ce4e5b9ull;
    z = (z ^ (z >> 27)) * 0x94d049bb133111ebull;
    return z ^ (z >> 31);
}

/* The coefficient field s_i of row i of n. */
static double coefficient(int64_t i, int64_t n)
{
    const double two_pi = 6.283185307179586;
    double t = (double)i / (double)n;
    return pow(10.0, CG_GEN_DECADES * 0.5 * (1.0 + sin(two_pi * CG_GEN_LAYERS * t)));
}

/* a_ij for i != j: the same from either side. */
static double offdiag(uint64_t seed, int64_t i, int64_t j, int64_t n)
{
    uint64_t lo = (uint64_t)(i < j ? i : j), hi = (uint64_t)(i < j ? j : i);
    uint64_t h = mix64(mix64(seed ^ mix64(lo)) ^ hi);
    double u = (double)(h >> 11) * (1.0 / 9007199254740992.0); /* [0, 1) */
    return -(0.5 + 0.5 * u) * coefficient(i, n) * coefficient(j, n);
}

static int cmp_i32(const void *a, const void *b)
{
    int32_t x = *(const int32_t *)a, y = *(const int32_t *)b;
    return (x > y) - (x < y);
}

int cg_generate(const cg_shape *shape, uint64_t seed, int rank, int ranks, cg_csr *m,
                char *error, size_t error_size)
{
    memset(m, 0, sizeof *m);
    cg_bands b;
    if (make_bands(shape, &b, error, error_size) != 0)
        return -1;
    const int64_t n = shape->n;
    m->n = n;
    m->nnz = shape->nnz;
    m->block = (n + ranks - 1) / ranks;
    m->row0 = m->block * rank < n ? m->block * rank : n;
    int64_t end = m->row0 + m->block < n ? m->row0 + m->block : n;
    m->rows = end - m->row0;
    /* Row lengths first (one diagonal entry, two per full band where both
     * sides exist, the partial band's). */
    m->rowptr = malloc(sizeof *m->rowptr * (size_t)(m->rows + 1));
    if (!m->rowptr)
        goto oom;
    m->rowptr[0] = 0;
    for (int64_t r = 0; r < m->rows; r++) {
        int64_t i = m->row0 + r, len = 1;
        for (int t = 0; t < b.count; t++)
            len += (i - b.offset[t] >= 0) + (i + b.offset[t] < n);
        if (b.partial)
            len += (i < b.partial_rows) + (i - b.partial >= 0 && i - b.partial < b.partial_rows);
        m->rowptr[r + 1] = m->rowptr[r] + len;
    }
    size_t local = (size_t)m->rowptr[m->rows];
    m->col = malloc(sizeof *m->col * (local ? local : 1));
    m->val = malloc(sizeof *m->val * (local ? local : 1));
    if (!m->col || !m->val)
        goto oom;
    for (int64_t r = 0; r < m->rows; r++) {
        int64_t i = m->row0 + r, k = m->rowptr[r];
        int32_t *c = m->col + k;
        int len = 0;
        c[len++] = (int32_t)i;
        for (int t = 0; t < b.count; t++) {
            if (i - b.offset[t] >= 0)
                c[len++] = (int32_t)(i - b.offset[t]);
            if (i + b.offset[t] < n)
                c[len++] = (int32_t)(i + b.offset[t]);
        }
        if (b.partial && i < b.partial_rows)
            c[len++] = (int32_t)(i + b.partial);
        if (b.partial && i - b.partial >= 0 && i - b.partial < b.partial_rows)
            c[len++] = (int32_t)(i - b.partial);
        qsort(c, (size_t)len, sizeof *c, cmp_i32);
        double sum = 0.0, *v = m->val + k;
        int diag = -1;
        for (int e = 0; e < len; e++) {
            if (c[e] == i) {
                diag = e;
                continue;
            }
            v[e] = offdiag(seed, i, c[e], n);
            sum += fabs(v[e]);
        }
        v[diag] = (1.0 + CG_GEN_MARGIN) * sum + (sum == 0.0 ? 1.0 : 0.0);
    }
    free(b.offset);
    return 0;
oom:
    free(b.offset);
    cg_csr_free(m);
    snprintf(error, error_size, "%s: out of memory for %lld rows", shape->name,
             (long long)m->rows);
    return -1;
}

/* ---- Kernels ----------------------------------------------------------------- */

void cg_csr_free(cg_csr *m)
{
    free(m->rowptr);
    free(m->col);
    free(m->val);
    m->rowptr = NULL;
    m->col = NULL;
    m->val = NULL;
}

void cg_spmv(const cg_csr *m, const double *x, double *y)
{
    for (int64_t r = 0; r < m->rows; r++) {
        double s = 0.0;
        for (int64_t k = m->rowptr[r]; k < m->rowptr[r + 1]; k++)
            s += m->val[k] * x[m->col[k]];
        y[r] = s;
    }
}

void cg_csr_remap(cg_csr *m, const int *slot)
{
    int64_t local = m->rows ? m->rowptr[m->rows] : 0;
    for (int64_t k = 0; k < local; k++) {
        int64_t j = m->col[k];
        m->col[k] = (int32_t)(slot[j / m->block] * m->block + j % m->block);
    }
}

int64_t cg_distinct_columns(const cg_csr *m)
{
    int64_t local = m->rows ? m->rowptr[m->rows] : 0;
    if (local == 0)
        return 0;
    unsigned char *seen = calloc((size_t)m->n, 1);
    if (!seen)
        return local; /* the upper bound */
    int64_t distinct = 0;
    for (int64_t k = 0; k < local; k++)
        if (!seen[m->col[k]]) {
            seen[m->col[k]] = 1;
            distinct++;
        }
    free(seen);
    return distinct;
}
