/*
 * chol_cache.c - the Cholesky's GPU tile cache (chol.h): `nframes` tile
 * frames in one cudaMalloc allocation; a tile is used from its frame, and
 * comes in from its host copy (its home: the owner's pinned copy, or the
 * landing slot a received tile arrived in) with cudaMemcpy host to device.
 * When no frame is free the least recently used one that no send is reading
 * (pins) and that holds none of the task's tiles is evicted, written back to
 * its home first with cudaMemcpy device to host if a kernel changed it. The
 * copies are real (the bytes move) and the emulated CUDA runtime charges
 * their time (cuda_h2d_* / cuda_d2h_*, synchronous). Depends on the CUDA
 * runtime API and p2.h (the clock, for the copy time).
 */
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include <cuda_runtime_api.h>

#include "chol.h"
#include "p2.h"

int chol_cache_init(chol_cache *c, int nframes, int ntiles, int nb)
{
    memset(c, 0, sizeof *c);
    c->nframes = nframes, c->ntiles = ntiles, c->nb = nb;
    c->tile_bytes = (size_t)nb * (size_t)nb * sizeof(double);
    void *mem = NULL;
    cudaError_t e = cudaMalloc(&mem, c->tile_bytes * (size_t)nframes);
    if (e != cudaSuccess) {
        fprintf(stderr, CHOL_PROGRAM ": rank %d: cudaMalloc of %d tile frames (%zu bytes) "
                        "failed: %s (fewer --gpu-tiles?)\n",
                p2_rank(), nframes, c->tile_bytes * (size_t)nframes, cudaGetErrorString(e));
        return -1;
    }
    c->frames = mem;
    c->frame_tile = malloc((size_t)nframes * sizeof *c->frame_tile);
    c->last_use = calloc((size_t)nframes, sizeof *c->last_use);
    c->pins = calloc((size_t)nframes, sizeof *c->pins);
    c->dirty = calloc((size_t)nframes, 1);
    c->tile_frame = malloc((size_t)ntiles * sizeof *c->tile_frame);
    c->home = calloc((size_t)ntiles, sizeof *c->home);
    if (!c->frame_tile || !c->last_use || !c->pins || !c->dirty || !c->tile_frame || !c->home) {
        fprintf(stderr, CHOL_PROGRAM ": rank %d: out of memory\n", p2_rank());
        chol_cache_free(c);
        return -1;
    }
    for (int f = 0; f < nframes; f++)
        c->frame_tile[f] = -1;
    for (int t = 0; t < ntiles; t++)
        c->tile_frame[t] = -1;
    return 0;
}

void chol_cache_free(chol_cache *c)
{
    if (c->frames)
        cudaFree(c->frames);
    free(c->frame_tile);
    free(c->last_use);
    free(c->pins);
    free(c->dirty);
    free(c->tile_frame);
    free(c->home);
    memset(c, 0, sizeof *c);
}

static void *frame_ptr(chol_cache *c, int f)
{
    return c->frames + (size_t)f * c->tile_bytes;
}

static int copy(chol_cache *c, void *dst, const void *src, enum cudaMemcpyKind kind)
{
    double t0 = p2_wtime();
    cudaError_t e = cudaMemcpy(dst, src, c->tile_bytes, kind);
    c->copy_s += p2_wtime() - t0;
    if (e != cudaSuccess) {
        fprintf(stderr, CHOL_PROGRAM ": rank %d: cudaMemcpy %s of a tile failed: %s\n",
                p2_rank(), kind == cudaMemcpyHostToDevice ? "to the GPU" : "from the GPU",
                cudaGetErrorString(e));
        return -1;
    }
    if (kind == cudaMemcpyHostToDevice)
        c->h2d_bytes += c->tile_bytes, c->h2d_copies++;
    else
        c->d2h_bytes += c->tile_bytes, c->d2h_copies++;
    return 0;
}

int chol_cache_resident(const chol_cache *c, int tile)
{
    return c->tile_frame[tile] >= 0;
}

int chol_cache_frame(const chol_cache *c, int tile)
{
    return c->tile_frame[tile];
}

double *chol_cache_data(chol_cache *c, int tile)
{
    return frame_ptr(c, c->tile_frame[tile]);
}

void chol_cache_set_dirty(chol_cache *c, int tile)
{
    c->dirty[c->tile_frame[tile]] = 1;
}

void chol_cache_pin(chol_cache *c, int frame)
{
    c->pins[frame]++;
}

void chol_cache_unpin(chol_cache *c, int frame)
{
    c->pins[frame]--;
}

static int write_back(chol_cache *c, int f)
{
    if (!c->dirty[f])
        return 0;
    if (copy(c, c->home[c->frame_tile[f]], frame_ptr(c, f), cudaMemcpyDeviceToHost) != 0)
        return -1;
    c->dirty[f] = 0;
    return 0;
}

/* A frame for a tile not among tiles[0..n): a free one, else the least
 * recently used unpinned one, evicted. -1: none; -2: CUDA error. */
static int take_frame(chol_cache *c, const int *tiles, int n)
{
    int best = -1;
    for (int f = 0; f < c->nframes; f++) {
        if (c->frame_tile[f] < 0)
            return f;
        if (c->pins[f])
            continue;
        int mine = 0;
        for (int i = 0; i < n; i++)
            mine |= c->frame_tile[f] == tiles[i];
        if (!mine && (best < 0 || c->last_use[f] < c->last_use[best]))
            best = f;
    }
    if (best < 0)
        return -1;
    if (write_back(c, best) != 0)
        return -2;
    c->tile_frame[c->frame_tile[best]] = -1;
    c->frame_tile[best] = -1;
    c->evictions++;
    return best;
}

int chol_cache_acquire(chol_cache *c, const int *tiles, int n)
{
    for (int i = 0; i < n; i++) {
        int t = tiles[i];
        if (c->tile_frame[t] < 0) {
            int f = take_frame(c, tiles, n);
            if (f == -1)
                return 1;
            if (f == -2 || copy(c, frame_ptr(c, f), c->home[t], cudaMemcpyHostToDevice) != 0)
                return -1;
            c->frame_tile[f] = t;
            c->tile_frame[t] = f;
            c->dirty[f] = 0;
        }
        c->last_use[c->tile_frame[t]] = ++c->stamp;
    }
    return 0;
}

int chol_cache_flush(chol_cache *c)
{
    for (int f = 0; f < c->nframes; f++)
        if (c->frame_tile[f] >= 0 && write_back(c, f) != 0)
            return -1;
    return 0;
}
