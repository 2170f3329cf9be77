/*
 * chol.h - the data-driven tiled Cholesky (workloads/cholesky/README.md):
 * what its units share. A lower-triangular matrix of nt x nt tiles of nb x nb
 * doubles, tile (i, j) (i >= j) owned by rank (i mod P) * Q + (j mod Q) of a
 * P x Q grid; right-looking tasks POTRF, TRSM, SYRK and GEMM on the owner of
 * the tile they write, fired when their inputs are there.
 *
 * Units, each using only those above it in this list:
 *   chol_layout.c  the block-cyclic layout: owners, which ranks need each
 *                  final tile, landing slots and inbox entries (pure data)
 *   chol_kernels.c the host numerics of the four kernels and their K20X cost
 *                  (wl_gpu.h with the APP efficiencies of params.def), the
 *                  test matrix and the residual check
 *   chol_cache.c   the GPU tile cache: a bounded set of frames in cudaMalloc
 *                  memory, LRU eviction, cudaMemcpy swaps, pins for sends
 *   chol_tca.c, chol_mpi.c  the transports (chol_transport_ops)
 *   chol_sched.c   the per-rank data-driven scheduler (ready queue, policy)
 *   cholesky.c     options, setup, the timed run, check and report
 */
#ifndef CHOL_H
#define CHOL_H

#include <stddef.h>
#include <stdint.h>

#define CHOL_PROGRAM "cholesky"

/* ---- Layout (chol_layout.c) ------------------------------------------------ */

typedef struct chol_layout {
    int nt, nb;     /* tiles per side, tile side (n = nt * nb) */
    int p, q;       /* process grid P x Q */
    int size, rank; /* ranks in the job (P * Q), this one */
    int ntiles;     /* nt (nt + 1) / 2: tile t = i (i + 1) / 2 + j */
    int *ti, *tj;   /* [t]: the tile's row and column */
    int *owner;     /* [t] */
    /* need[t * size + r]: rank r, not the owner, uses tile t's final value */
    uint8_t *need;
    /* land[t * size + r]: r's landing slot for tile t (-1: r does not receive it) */
    int *land;
    int *nland;     /* [r]: landing slots of rank r */
    /* inbox[r * size + s]: first entry of sender s's messages at receiver r;
     * inbox_total[r]: entries at r */
    int *inbox, *inbox_total;
    int *owned;     /* [r]: tiles rank r owns */
    int *receivers; /* [t]: ranks that receive t */
} chol_layout;

static inline int chol_tile(int i, int j)
{
    return i * (i + 1) / 2 + j;
}

/* The layout of nt x nt tiles of nb on a p x q grid seen from `rank`.
 * 0, or -1 (out of memory). */
int chol_layout_init(chol_layout *l, int nt, int nb, int p, int q, int rank);
void chol_layout_free(chol_layout *l);
/* The tile's bytes: nb * nb doubles. */
size_t chol_tile_bytes(const chol_layout *l);

/* ---- Kernels (chol_kernels.c) --------------------------------------------- */

enum chol_kind { CHOL_POTRF, CHOL_TRSM, CHOL_SYRK, CHOL_GEMM, CHOL_KINDS };
extern const char *const chol_kind_name[CHOL_KINDS];

/* The test matrix's element (i, j) of order n: symmetric, off-diagonal
 * elements in [-0.5, 0.5) from a hash of (i, j), n on the diagonal
 * (diagonally dominant, so positive definite). */
double chol_matrix_element(int n, int i, int j);
/* Tile (ti, tj) of that matrix into `tile` (row-major nb x nb). */
void chol_matrix_tile(int n, int nb, int ti, int tj, double *tile);

/* The kernels on row-major nb x nb tiles, all lower:
 *   POTRF: c = L with L L^T = c (the upper part zeroed); -1 if not positive
 *   TRSM:  c = c L^-T (a = L, a POTRF result)
 *   SYRK:  c -= a a^T (lower part)
 *   GEMM:  c -= a b^T */
int chol_potrf(int nb, double *c);
void chol_trsm(int nb, const double *a, double *c);
void chol_syrk(int nb, const double *a, double *c);
void chol_gemm(int nb, const double *a, const double *b, double *c);

/* The flops of one kernel on nb tiles (the LAPACK counts), and the seconds
 * the K20X model charges for it (wl_gpu_kernel_s of its bytes and of its
 * flops over the kernel's efficiency, chol_<kind>_eff in params.def). */
double chol_kernel_flops(int kind, int nb);
double chol_kernel_seconds(int kind, int nb);
/* The efficiency parameter of a kind (for the report). */
double chol_kernel_efficiency(int kind);

/* ||A - L L^T||_F / ||A||_F over the lower triangle, L the n x n lower
 * factor in row-major order (a full n x n array). */
double chol_residual(int n, const double *l);

/* ---- The GPU tile cache (chol_cache.c) ------------------------------------- */

typedef struct chol_cache {
    int nframes, ntiles, nb;
    size_t tile_bytes;
    unsigned char *frames; /* cudaMalloc: nframes tiles */
    int *frame_tile;       /* [frame]: the tile it holds, -1 */
    uint64_t *last_use;    /* [frame]: LRU stamp */
    int *pins;             /* [frame]: sends still reading it */
    uint8_t *dirty;        /* [frame]: newer than the tile's host copy */
    int *tile_frame;       /* [tile]: its frame, -1 */
    double **home;         /* [tile]: its host copy (pinned), NULL if none here */
    uint64_t stamp;
    /* What moved: bytes and copies each way, evictions. */
    uint64_t h2d_bytes, d2h_bytes, h2d_copies, d2h_copies, evictions;
    double copy_s; /* simulated seconds in cudaMemcpy */
} chol_cache;

/* nframes frames of nb x nb doubles in GPU memory (cudaMalloc); homes all
 * NULL. 0, or -1 with a message. */
int chol_cache_init(chol_cache *c, int nframes, int ntiles, int nb);
void chol_cache_free(chol_cache *c);
/* Whether the tile is in a frame. */
int chol_cache_resident(const chol_cache *c, int tile);
/* Makes the n tiles resident: each tile not in a frame is copied in from its
 * home (cudaMemcpy host to device) into a free frame, or into the least
 * recently used frame that is not pinned and holds none of the n tiles
 * (written back first if dirty). Marks them used. 0; 1 if no frame could be
 * freed (every other one pinned: finish a send and call again); -1 on a
 * CUDA error, with a message. */
int chol_cache_acquire(chol_cache *c, const int *tiles, int n);
/* The tile's data in its frame (resident tiles only). */
double *chol_cache_data(chol_cache *c, int tile);
int chol_cache_frame(const chol_cache *c, int tile);
void chol_cache_set_dirty(chol_cache *c, int tile);
void chol_cache_pin(chol_cache *c, int frame);
void chol_cache_unpin(chol_cache *c, int frame);
/* Writes every dirty frame back to its home. 0, or -1. */
int chol_cache_flush(chol_cache *c);

/* ---- Transports (chol_tca.c, chol_mpi.c) ----------------------------------- */

/* How final tiles reach the ranks that need them. Every call returns 0 (or a
 * count) on success and -1 after printing what failed. */
typedef struct chol_transport_ops {
    const char *name;
    /* Starts sending final tile `tile`, in cache frame `frame`, to every
     * rank that needs it (nonblocking); pins the frame until the data has
     * left it. */
    int (*send)(void *tp, int tile, int frame);
    /* Finishes the sends that are done (unpinning their frames) and takes
     * the tiles that have arrived: their ids into arrived[] (at most `max`);
     * returns how many. block: waits for an arrival first (it may still
     * return 0). */
    int (*progress)(void *tp, int block, int *arrived, int max);
    /* Waits for the oldest send still going; 0, or 1 if there is none. */
    int (*wait_send)(void *tp);
    /* Waits for every send. */
    int (*drain)(void *tp);
    /* Tiles still expected here. */
    int (*expected)(void *tp);
} chol_transport_ops;

/* Both need MPI_Init and tcaInit done; the cache's homes of received tiles
 * point into the transport's landing slots after create. Setup (allocation,
 * the handle exchange, MPI's posted receives) is collective; NULL on failure,
 * with a message. */
void *chol_tca_create(const chol_layout *l, chol_cache *c);
void chol_tca_destroy(void *tp);
extern const chol_transport_ops chol_tca_ops;
void *chol_mpi_create(const chol_layout *l, chol_cache *c);
void chol_mpi_destroy(void *tp);
extern const chol_transport_ops chol_mpi_ops;
/* Bytes of tile data this rank sent to other ranks. */
uint64_t chol_tca_sent_bytes(void *tp);
uint64_t chol_mpi_sent_bytes(void *tp);

/* ---- The scheduler (chol_sched.c) ------------------------------------------ */

typedef struct chol_stats {
    long tasks[CHOL_KINDS];
    double kernel_s; /* simulated seconds charged for kernels */
    double wait_s;   /* blocked waiting for a tile or a send */
} chol_stats;

/* Runs every task of this rank's tiles to completion, then waits for its
 * sends and writes its tiles back to their homes. 0, or -1 with a message. */
int chol_sched_run(const chol_layout *l, chol_cache *c, const chol_transport_ops *ops,
                   void *tp, chol_stats *stats);

#endif /* CHOL_H */
